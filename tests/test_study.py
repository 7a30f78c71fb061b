"""Honest intervals (caishen.sim.analysis.intervals) and sweeps on duplicate deals (caishen.sim.analysis.study, ``caishen sweep``).

The coverage test: synthetic data with a known mean and a within-wall
correlation; the 95% interval over walls must cover the truth in 93-97% of
1,000 repetitions, and the naive interval over rows must not (so the test
can fail).
"""

from __future__ import annotations

import json

import numpy as np
import pandas as pd
import pytest

from caishen.sim.analysis.intervals import cluster_diff_ci, cluster_mean_ci, cluster_rate_ci
from caishen.sim.selfplay.runner import Execution

REPS = 1000


def _walls(rng, n_walls=200, mean=1.5, sd_wall=2.0, sd_row=1.0):
    """Rows grouped in walls of 1..7 rows; a wall effect (within-wall correlation ~0.8) plus row noise."""
    sizes = rng.integers(1, 8, n_walls)
    walls = np.repeat(np.arange(n_walls), sizes)
    y = mean + rng.normal(0, sd_wall, n_walls)[walls] + rng.normal(0, sd_row, len(walls))
    return y, walls


def test_interval_coverage_over_walls_is_95_percent():
    rng = np.random.default_rng(20240614)
    mean = 1.5
    cover = naive = 0
    for _ in range(REPS):
        y, walls = _walls(rng, mean=mean)
        _, lo, hi = cluster_mean_ci(y, walls)
        cover += lo <= mean <= hi
        _, lo, hi = cluster_mean_ci(y)  # rows as if independent
        naive += lo <= mean <= hi
    assert 0.93 <= cover / REPS <= 0.97, cover / REPS
    assert naive / REPS < 0.85, naive / REPS  # the interval that ignores the walls is far too narrow


def test_interval_coverage_of_a_clustered_rate_and_a_paired_difference():
    rng = np.random.default_rng(7)
    p_true = 0.2
    cover_rate = cover_diff = 0
    for _ in range(REPS):
        n_walls = 300
        # four seat-hands per wall, correlated through a wall-level probability
        pw = rng.beta(2, 8, n_walls)  # mean 0.2
        walls = np.repeat(np.arange(n_walls), 4)
        hits = rng.random(len(walls)) < pw[walls]
        _, lo, hi = cluster_rate_ci(hits, walls)
        cover_rate += lo <= p_true <= hi
        # two policies on the same walls: a shared wall effect, a true difference of 0.5
        w = rng.normal(0, 3, n_walls)
        a = w + 0.5 + rng.normal(0, 1, n_walls)
        b = w + rng.normal(0, 1, n_walls)
        _, lo, hi = cluster_diff_ci(a, np.arange(n_walls), b, np.arange(n_walls))
        cover_diff += lo <= 0.5 <= hi
    assert 0.93 <= cover_rate / REPS <= 0.97, cover_rate / REPS
    assert 0.93 <= cover_diff / REPS <= 0.97, cover_diff / REPS


def test_intervals_reduce_to_the_textbook_ones():
    from scipy import stats

    rng = np.random.default_rng(1)
    x = rng.normal(size=50)
    m, lo, hi = cluster_mean_ci(x)
    ci = stats.ttest_1samp(x, 0).confidence_interval(0.95)
    assert (lo, hi) == pytest.approx((ci.low, ci.high))
    hits = rng.random(80) < 0.3
    r, lo, hi = cluster_rate_ci(hits)
    ci = stats.binomtest(int(hits.sum()), 80).proportion_ci(method="wilson")
    assert (lo, hi) == pytest.approx((ci.low, ci.high))
    # paired: the difference interval is the t interval of the per-wall differences
    a, b = rng.normal(size=40), rng.normal(size=40)
    d, lo, hi = cluster_diff_ci(a, np.arange(40), b, np.arange(40))
    ci = stats.ttest_1samp(a - b, 0).confidence_interval(0.95)
    assert d == pytest.approx((a - b).mean())
    assert (lo, hi) == pytest.approx((ci.low, ci.high))


def test_intervals_bad_input():
    with pytest.raises(ValueError, match="shape"):
        cluster_mean_ci([1.0, 2.0], [0])
    with pytest.raises(ValueError, match="NaN"):
        cluster_mean_ci([1.0, float("nan")])
    assert np.isnan(cluster_mean_ci([1.0, 2.0], [3, 3])[1])  # one cluster: no interval
    assert np.isnan(cluster_mean_ci([])[0])


# ---------------------------------------------------------------------------- sweeps
from caishen.sim.analysis import study  # noqa: E402


def test_parse_grid_and_baseline():
    g = study.parse_grid("kaihua", ["failed_piao_factor=1,2,3"], "threshold:0,never")
    assert g["axes"] == {"failed_piao_factor": ["1", "2", "3"], "policy": ["threshold:0", "never"]}
    pts = study.grid_points(g)
    assert len(pts) == 6 and pts[1] == {"failed_piao_factor": "1", "policy": "never"}
    assert study.parse_baseline(g, None) == {"failed_piao_factor": "1", "policy": "threshold:0"}
    assert study.parse_baseline(g, "policy=never") == {"policy": "never"}


@pytest.mark.parametrize("options,policies,msg", [
    (["failed_piao_factr=1,2"], None, "unknown KaihuaRules option"),
    (["failed_piao_factor=1,99"], None, "failed_piao_factor must be an integer in 1..16, got 99"),
    (["failed_piao_factor="], None, "empty grid"),
    (["failed_piao_factor=1,,2"], None, "empty grid"),
    ([], None, "empty grid"),
    ([], "threshold:0,nevr", "unknown policy 'nevr'"),
    ([], "threshold:999", "threshold must be <= 136"),
    (["discard_win=maybe"], None, "discard_win='maybe'"),
    (["failed_piao_factor=1,1"], None, "repeated"),
])
def test_sweep_grid_bad_input_is_named(options, policies, msg):
    with pytest.raises(ValueError, match=msg):
        study.parse_grid("kaihua", options, policies)


def test_sweep_grid_piao_policy_on_jiating():
    with pytest.raises(ValueError, match="no 财神"):
        study.parse_grid("jiating", [], "always,greedy")
    with pytest.raises(ValueError, match="baseline axis 'policy'"):
        study.parse_baseline(study.parse_grid("jiating", ["cap=100,200"]), "policy=greedy")


def test_sweep_bad_input_leaves_nothing(tmp_path):
    out = tmp_path / "s"
    with pytest.raises(ValueError, match="empty grid"):
        study.sweep("kaihua", out, options=[], policies=None, walls=10)
    with pytest.raises(ValueError, match="baseline policy='always'"):
        study.sweep("kaihua", out, policies="never,greedy", walls=10, baseline="policy=always")
    assert not out.exists()


def test_sweep_duplicate_deals_resume_and_table(engine_warm, tmp_path):
    out = tmp_path / "s"
    kw = dict(options=["failed_piao_factor=1,2"], policies="always,never", walls=96, seed=3, chunk_size=48,
              execution=Execution(1, progress=False), baseline="policy=never")
    t = study.sweep("kaihua", out, **kw)
    assert (out / "sweep.csv").exists() and json.loads((out / "sweep.json").read_text())["kind"] == "sweep"
    assert len(t) == 4 * len(set(t["metric"])) and {"score", "win", "piao", "draw"} <= set(t["metric"])
    # the same walls at every point: with no 飘 anywhere the factor cannot matter, and the draws of
    # `never` points are the same hands (duplicate deals)
    never = t[(t["policy"] == "never") & (t["metric"] == "draw")]
    assert never["value"].nunique() == 1
    base = t[t["policy"] == "never"]
    assert (base["diff"] == 0).all()
    score_always = t[(t["policy"] == "always") & (t["metric"] == "score")]
    assert score_always["baseline"].str.contains("policy=never").all()
    # sweep.csv: the exact spec and beside it the readable name (issue 45); read_sweep gives the table back
    csv = pd.read_csv(out / "sweep.csv")
    assert list(csv.columns[:3]) == ["failed_piao_factor", "policy", "policy_name"]
    assert (csv["policy_name"] == csv["policy"]).all()  # always / never read as they are
    pd.testing.assert_frame_equal(study.read_sweep(out)[1], t, check_dtype=False)
    # an interrupted sweep resumes: drop a chunk and the table, rerun
    (out / "points" / "p001" / "chunks" / "chunk-00001.parquet").unlink()
    (out / "sweep.csv").unlink()
    t2 = study.sweep("kaihua", out, **kw)
    pd.testing.assert_frame_equal(t, t2)
    with pytest.raises(ValueError, match="different sweep"):
        study.sweep("kaihua", out, **{**kw, "walls": 100})
    # another baseline reuses the runs: only the table changes
    t3 = study.sweep("kaihua", out, **{**kw, "baseline": "failed_piao_factor=2"})
    assert (t3["value"] == t["value"]).all()
    assert t3["baseline"].str.contains("failed_piao_factor=2").all()


def test_sweep_table_streamed_over_chunks_equals_the_in_memory_table(engine_warm, tmp_path):
    """study.streamed_metric_table (chunk by chunk, side by side) == metric_table on each point's whole run."""
    from caishen.sim.selfplay import stream

    out = tmp_path / "s"
    kw = dict(options=["failed_piao_factor=1,3"], policies="always,threshold:20", walls=150, seed=5, chunk_size=40,
              execution=Execution(1, progress=False), baseline="policy=always")
    t = study.sweep("kaihua", out, **kw)
    doc = json.loads((out / "sweep.json").read_text())
    dirs = [out / p["dir"] for p in doc["points"]]
    per_point = [study.wall_metrics(stream.read_run(d), "kaihua") for d in dirs]
    grid = study.parse_grid("kaihua", kw["options"], kw["policies"], "greedy")
    ref = study.metric_table(grid, per_point, study.parse_baseline(grid, kw["baseline"]))
    assert len(t) == len(ref) and (t["walls"] == 150).all()  # 4 chunks, the last one short
    pd.testing.assert_frame_equal(t, ref, rtol=1e-9, atol=1e-12)
    assert (t.loc[t["policy"] != "always", "diff"] != 0).any()  # real differences were compared


def test_sweep_chunk_pairs_walls_across_policies(engine_warm):
    a = study.sweep_chunk("kaihua", {}, ("always", "greedy", "greedy", "greedy"), 77, 41)
    b = study.sweep_chunk("kaihua", {}, ("never", "greedy", "greedy", "greedy"), 77, 41)
    assert list(a["hand"]) == list(range(41)) and list(a["hero"]) == [0] * 11 + [1] * 10 + [2] * 10 + [3] * 10
    np.testing.assert_array_equal(a["dealer"], b["dealer"])  # the same deals whatever the hero plays
    assert len(set(a["dealer"])) == 4 and (a["match_hand"] == 0).all()  # one-hand matches, any dealer
    same = (a["piao_0"] + a["piao_1"] + a["piao_2"] + a["piao_3"]) == 0
    # hands in which nobody threw a 财神 under `always` are played identically under `never`
    for k in ("winner", "win_type", "score_0", "turns"):
        np.testing.assert_array_equal(a[k][same], b[k][same])


def test_sweep_cli(engine_warm, tmp_path, capsys):
    from caishen.cli import main

    out = tmp_path / "c"
    rc = main(["sweep", "--rules", "kaihua", "--option", "failed_piao_factor=1,3", "--policy", "always,never",
               "--walls", "40", "--chunk-size", "40", "--workers", "1", "--out", str(out), "--no-progress"])
    assert rc == 0
    text = capsys.readouterr().out
    assert "failed_piao_factor=3" in text and "score" in text
    # issue 28: every metric written to sweep.csv is printed, each with its unit, and the hero is named
    t = pd.read_csv(out / "sweep.csv")
    metrics = list(dict.fromkeys(t["metric"]))
    assert len(metrics) == 9 and set(metrics) == set(study.metric_units("kaihua"))
    # issue 45: a compact grid, a row per point and a column per metric (every figure in sweep.csv)
    assert all(m in text.split("mean per wall")[1] for m in metrics)
    grid = study.format_grid(t, width=10_000).splitlines()
    assert grid[1].split() == metrics and grid[2].split() == ["failed_piao_factor", "policy"]
    row = grid[3].split()  # the first point: failed_piao_factor=1 policy=always
    s = t[(t["failed_piao_factor"] == 1) & (t["policy"] == "always") & (t["metric"] == "score")].iloc[0]
    assert row[:4] == ["1", "always", f"{s['value']:+.3f}", f"±{(s['ci_high'] - s['ci_low']) / 2:.3f}"]
    flat = " ".join(text.split())  # lines wrapped to 100 columns (issue 45)
    assert "hero: one seat playing the policy of the point (always, never)" in flat and "field policy greedy" in flat
    for m in metrics:
        assert " ".join(f"  {m:<13} {study.metric_units('kaihua')[m]}".split()) in flat, m
    assert max(len(x) for x in text.split("mean per wall")[0].splitlines()[1:]) <= 100
    assert "the hero's points per wall" in text and "share of walls" in text
    capsys.readouterr()
    assert main(["report", str(out), "--no-figures"]) == 0  # caishen report prints the same
    report = capsys.readouterr().out
    assert report[report.index("hero:"):].startswith(text[text.index("hero:"):][:300])
    assert set(study.metric_units("jiating")) == {*study.METRICS, "jiating", "hard"}
    with pytest.raises(SystemExit) as e:
        main(["sweep", "--rules", "kaihua", "--option", "failed_piao_factor=0,1", "--walls", "10",
              "--out", str(tmp_path / "d")])
    assert e.value.code == 2
    assert "failed_piao_factor must be an integer in 1..16, got 0" in capsys.readouterr().err
    assert not (tmp_path / "d").exists()


@pytest.mark.parametrize("rules, axis, values", [
    ("kaihua", "discard_win_max_caishen", ["1", "2"]),  # K-7.1 (issue 22)
    ("jiating", "dihu", ["dealer_ready_first_discard", "dealer_ready_undeclared"]),  # P47 (issue 22)
])
def test_K_7_1_P47_new_options_are_sweep_axes(engine_warm, tmp_path, capsys, rules, axis, values):
    """The options of issue 22 are sweep axes: `caishen sweep --option NAME=A,B` plays both
    points on the same walls; a value out of range exits 2 naming it."""
    from caishen.cli import main

    g = study.parse_grid(rules, [f"{axis}={','.join(values)}"])
    assert g["axes"] == {axis: values}
    out = tmp_path / "s"
    rc = main(["sweep", "--rules", rules, "--option", f"{axis}={','.join(values)}", "--walls", "40",
               "--chunk-size", "40", "--workers", "1", "--out", str(out), "--no-progress"])
    text = capsys.readouterr().out  # the grid: the axis names its rows, each value starts one
    assert rc == 0 and f"\n{axis} " in text and f"\n{values[1]} " in text
    t = pd.read_csv(out / "sweep.csv")
    assert sorted(set(t[axis].astype(str))) == sorted(values) and (t["walls"] == 40).all()
    bad = {"discard_win_max_caishen": "3", "dihu": "dealer_ready"}[axis]
    with pytest.raises(SystemExit) as e:
        main(["sweep", "--rules", rules, "--option", f"{axis}={values[0]},{bad}", "--walls", "10",
              "--out", str(tmp_path / "d")])
    assert e.value.code == 2 and axis in capsys.readouterr().err and not (tmp_path / "d").exists()


# ---------------------------------------------------------------------------- the summary's intervals (item 6)
def _records(n=1600, seed=4, policies="always,never,always,never"):
    from caishen.sim.selfplay.batch import play_batch

    df = pd.DataFrame(play_batch(n, seed, policies=policies))
    df["hand_id"] = np.arange(n)
    return df


def test_summary_refuses_a_unit_it_cannot_cluster_on(engine_warm):
    """The summary's intervals are over matches (default), hands, or rows (unit=None); another unit is a
    ValueError naming it, never a silently unclustered interval."""
    from caishen.sim.analysis import summary

    df = _records()
    with pytest.raises(ValueError, match="unit 'wall'"):
        summary.summarize(df, unit="wall")
    rows, defs = summary.summarize(df, unit="match")
    g = rows[rows.metric == "independent units"]
    assert g.value.iloc[0] == (df["match_hand"] == 0).sum() == 100 and "matches" in defs["intervals"]


def test_K_9_observational_piao_comparison_is_labelled_and_last(engine_warm):
    from caishen.sim.analysis import summary

    rows, defs = summary.summarize(_records(), ("always", "never", "always", "never"))
    obs = rows["section"] == summary.OBSERVATIONAL
    assert obs.any() and obs.to_numpy()[-int(obs.sum()):].all()  # after every headline row
    assert set(rows[obs]["metric"]) >= {"飘 minus comparable", "score per 飘 seat-hand"}
    assert not ((rows["section"] == "飘财") & rows["metric"].str.contains("minus")).any()
    assert "selection effect" in defs["observational"]
    assert "the command caishen piao gives the counterfactual" in defs["observational"]  # a command, not a module


# --------------------------------------------------------------- the factorial (issue 47 item 3)
def test_factorial_effects_match_the_per_wall_reference(engine_warm, tmp_path, capsys):
    """Two option axes on the same walls: each main effect and the interaction against a slow computation from
    every point's per-wall values, and caishen sweep prints them and writes factorial.csv."""
    from caishen.cli import main
    from caishen.sim.analysis import factorial
    from caishen.sim.analysis.intervals import cluster_mean_ci

    out = tmp_path / "f"
    assert main(["sweep", "--rules", "kaihua", "--option", "failed_piao_factor=2,1", "--option",
                 "discard_win_max_caishen=1,0,2", "--policy", "always", "--walls", "160", "--seed", "4",
                 "--chunk-size", "80", "--workers", "1", "--out", str(out), "--no-progress"]) == 0
    text = capsys.readouterr().out
    assert "factorial effects" in text and "interaction" in text
    eff = pd.read_csv(out / "factorial.csv")
    doc = study.read_sweep_json(out)
    assert factorial.factors(doc) == {"failed_piao_factor": ["2", "1"], "discard_win_max_caishen": ["1", "0", "2"]}
    from caishen.sim.analysis.power import _sweep_wall_values

    vals = _sweep_wall_values(out, doc, "dealer_score")

    def y(f, c):
        return vals[f"failed_piao_factor={f} discard_win_max_caishen={c} policy=always"]

    main_f = sum(y("1", c) - y("2", c) for c in "102") / 3
    main_c0 = sum(y(f, "0") - y(f, "1") for f in "21") / 2
    inter = y("1", "2") - y("2", "2") - y("1", "1") + y("2", "1")
    t = eff[eff["metric"] == "dealer_score"].set_index("effect")
    for name, ref in (("failed_piao_factor=1", main_f), ("discard_win_max_caishen=0", main_c0),
                      ("failed_piao_factor=1 x discard_win_max_caishen=2", inter)):
        m, lo, hi = cluster_mean_ci(ref, df="satterthwaite")
        assert (t.loc[name, "estimate"], t.loc[name, "ci_low"], t.loc[name, "ci_high"]) == pytest.approx(
            (m, lo, hi), rel=1e-6, abs=1e-9), name
    assert set(t["order"]) == {1, 2} and len(t) == 1 + 2 + 2  # 1 + 2 main effects, 1 x 2 interactions
    # an effect that is 0 on every wall (up to the rounding of sums of thirds) is no evidence: p = 1, no star
    zero = eff[(eff["estimate"].abs() <= factorial.TINY) & (eff["sd_per_wall"] <= factorial.TINY)]
    assert len(zero) and (zero["p"] == 1.0).all() and (zero["p_holm"] == 1.0).all()


def test_format_grid_cells_and_baseline_rows():
    """The compact grid (issue 45): value ±half-CI per point and metric, 0 for an exact zero, * on a difference
    whose CI excludes 0, and the baseline point left out of the difference grid."""
    rows = []
    for pol, v, d in (("never", 1.0, 0.0), ("always", 2.0, 0.5)):
        for m in ("score", "win"):
            rows.append({"policy": pol, "metric": m, "walls": 100, "value": v, "ci_low": v - 0.25, "ci_high": v + 0.25,
                         "baseline": "policy=never", "diff": d, "diff_low": d - 0.1 if d else 0.0,
                         "diff_high": d + 0.1 if d else 0.0})
    text = study.format_grid(pd.DataFrame(rows), width=200).splitlines()
    assert text[1].split() == ["score", "win"] and text[2].split() == ["policy"]
    assert text[3].split() == ["never", "+1.000", "±0.250", "+1.000", "±0.250"]
    assert "vs baseline policy=never" in text[6]
    assert [r.split() for r in text[9:]] == [["always", "+0.500", "±0.100*", "+0.500", "±0.100*"]]


def test_factorial_needs_two_axes(engine_warm, tmp_path):
    from caishen.sim.analysis import factorial

    study.sweep("kaihua", tmp_path / "one", options=["failed_piao_factor=2,1"], walls=20,
                execution=Execution(1, progress=False))
    assert not factorial.is_factorial(study.read_sweep_json(tmp_path / "one"))
    with pytest.raises(ValueError, match="two or more axes"):
        factorial.factorial_table(tmp_path / "one")


def test_a_piao_table_policy_reads_as_its_cells_beside_its_spec():
    """Issue 45 (first hour): the 飘 study's implied policy showed as piao_table:217020518582387457 in stderr
    and the CSVs; sweep.csv keeps the spec and adds the readable name beside it."""
    spec = "piao_table:217020518582387457"
    t = pd.DataFrame({"policy": [spec, "never"], **{c: [0, 0] for c in study.TABLE_COLUMNS}})
    named = study.with_policy_names(t)
    assert list(named.columns[:2]) == ["policy", "policy_name"] and named["policy"].iloc[0] == spec
    assert named["policy_name"].tolist() == ["piao_table[17/64 cells]", "never"]
    assert "policy_name" not in study.with_policy_names(t.drop(columns="policy")).columns
