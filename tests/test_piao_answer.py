"""``caishen piao`` (caishen.sim.analysis.piao_answer) and the one-chance-per-hand 飘 study (K-9.1, issue 27 item 1).

The new statistics -- the per-chance weighted mean with its hand-clustered
interval, the pairwise matrix with Bonferroni intervals and Holm p-values --
are compared with slow pure-Python references written from their
definitions; the study's field is checked to be the policy's own (the real
hand of ``always`` with one chance studied per hand is the real hand of the
old study that always takes the 飘); the command runs end to end at a tiny
size, resumes, and refuses a bad spec with the registry's message.
"""

from __future__ import annotations

import json
import math

import numpy as np
import pandas as pd
import pytest
from scipy import stats

from caishen.cli import main
from caishen.sim.analysis import piao_answer, piao_study
from caishen.sim.analysis.intervals import cluster_mean_ci


# --------------------------------------------------------------- pure-Python references
def ref_weighted_ci(values, weights, clusters, confidence=0.95):
    """sum(w v) / sum(w) with the CR1 variance of the linearized ratio over clusters, Student-t on G - 1."""
    tot_w = sum(weights)
    m = sum(w * v for w, v in zip(weights, values)) / tot_w
    e = {}
    for v, w, c in zip(values, weights, clusters):
        e[c] = e.get(c, 0.0) + w * v - m * w
    g = len(e)
    var = g / (g - 1) * sum(x * x for x in e.values()) / tot_w ** 2
    h = stats.t.ppf(0.5 + confidence / 2, g - 1) * math.sqrt(var)
    return m, m - h, m + h


def ref_holm(p):
    """Holm's step-down: sort, multiply the k-th smallest (from 0) by m - k, running maximum, cap at 1."""
    m = len(p)
    order = sorted(range(m), key=lambda i: p[i])
    out = [0.0] * m
    best = 0.0
    for k, i in enumerate(order):
        best = max(best, min(1.0, (m - k) * p[i]))
        out[i] = best
    return out


def ref_pair(a, b, m, confidence=0.95):
    """Bonferroni t interval and p on the Satterthwaite degrees of freedom of the per-wall differences."""
    d = [x - y for x, y in zip(a, b)]
    n = len(d)
    mean = sum(d) / n
    s2 = sum((x - mean) ** 2 for x in d)
    s4 = sum((x - mean) ** 4 for x in d)
    dof = min(n - 1, max(1.0, 2 * s2 * s2 / (s4 - s2 * s2 / n)))
    sd = math.sqrt(s2 / (n - 1))
    se = sd / math.sqrt(n)
    h = stats.t.ppf(1 - (1 - confidence) / m / 2, dof) * se
    p = 2 * (1 - stats.t.cdf(abs(mean) / se, dof))
    return mean, mean - h, mean + h, p


# --------------------------------------------------------------- statistics
@pytest.mark.parametrize("seed", [0, 1, 2])
def test_weighted_mean_ci_matches_the_reference(seed):
    rng = np.random.default_rng(seed)
    n = 300
    clusters = rng.integers(0, 80, n)
    weights = rng.integers(1, 5, n).astype(float)
    values = rng.normal(1.0, 3.0, n) + 0.5 * clusters % 3
    got = piao_study.weighted_mean_ci(values, weights, clusters)
    assert got == pytest.approx(ref_weighted_ci(values, weights, clusters), rel=1e-9)


def test_weighted_mean_ci_with_unit_weights_is_the_cluster_mean():
    rng = np.random.default_rng(5)
    v = rng.normal(size=200)
    c = rng.integers(0, 50, 200)
    assert piao_study.weighted_mean_ci(v, np.ones(200), c) == pytest.approx(cluster_mean_ci(v, c))


def test_weighted_mean_of_non_negative_values_keeps_a_symmetric_interval():
    v = np.array([0.0, 0.0, 0.1, 5.0, 0.0, 0.2])
    w = np.array([1, 2, 1, 3, 1, 1.0])
    m, lo, hi = piao_study.weighted_mean_ci(v, w, np.arange(6))
    assert m - lo == pytest.approx(hi - m) and lo < 0  # no share's clipping at 0
    assert (m, lo, hi) == pytest.approx(ref_weighted_ci(v, w, range(6)))


def test_holm_matches_the_reference():
    rng = np.random.default_rng(3)
    for _ in range(20):
        p = list(rng.uniform(0, 0.2, rng.integers(1, 12)))
        assert list(piao_answer.holm(p)) == pytest.approx(ref_holm(p))


def test_pairwise_matches_the_reference_with_bonferroni():
    rng = np.random.default_rng(7)
    w = 500
    base = rng.normal(0, 10, w)
    vals = {"a": base + rng.normal(0.0, 2, w), "b": base + rng.normal(0.5, 2, w), "c": base + rng.normal(0.1, 2, w)}
    t = piao_answer.pairwise(vals)
    assert list(zip(t["a"], t["b"])) == [("a", "b"), ("a", "c"), ("b", "c")]
    assert (t["m"] == 3).all()
    for r in t.itertuples(index=False):
        mean, lo, hi, p = ref_pair(vals[r.a], vals[r.b], 3)
        assert (r.diff, r.ci_low, r.ci_high, r.p) == pytest.approx((mean, lo, hi, p), rel=1e-7, abs=1e-12)
    assert list(t["p_holm"]) == pytest.approx(ref_holm(list(t["p"])))
    # the adjusted interval is wider than the unadjusted one
    raw = cluster_mean_ci(vals["a"] - vals["b"])
    assert t.iloc[0]["ci_high"] - t.iloc[0]["ci_low"] > raw[2] - raw[1]
    mat = piao_answer.pairwise_matrix(t)
    assert mat.loc["b", "a"].startswith(f"{-t.iloc[0]['diff']:+.3f}")


def test_pairwise_refuses_different_walls():
    with pytest.raises(ValueError, match="not the same walls"):
        piao_answer.pairwise({"a": np.zeros(3), "b": np.zeros(4)})
    with pytest.raises(ValueError, match="two policies"):
        piao_answer.pairwise({"a": np.zeros(3)})


def test_hands_for_scales_with_the_square_of_the_width():
    assert piao_answer.hands_for(1000, 1.0, 0.5) == 4000
    assert piao_answer.hands_for(1000, 0.4, 0.5) == 1000
    assert piao_answer.hands_for(1000, 0.51, 0.5) == math.ceil(1000 * (0.51 / 0.5) ** 2)


# --------------------------------------------------------------- the study with one chance per hand
def test_K_9_1_one_chance_per_hand_and_the_field_is_the_policys(engine_warm):
    """Per hand at most one studied chance, weighted by the hand's chances; the real hand is the policy's
    own: with ``always`` it is the old study's real hand that takes every 飘 (explore=1), hand by hand."""
    n = 300
    own = np.zeros((n, 4), np.int64)
    df = piao_study.study_chunk(11, n, rollouts=1, policies="always", per_hand=True, hand_scores=own)
    assert len(df) > 20 and df["hand"].is_unique
    assert (df["chances"] >= 1).all() and (df["taken"] == 1).all()  # always throws at its chances
    old = np.zeros((n, 4), np.int64)
    every = piao_study.study_chunk(11, n, rollouts=1, policies="always", explore=1.0, hand_scores=old)
    np.testing.assert_array_equal(own, old)
    # the old study studied every chance: its count per hand is the new one's weight
    counts = every.groupby("hand").size()
    np.testing.assert_array_equal(df["chances"].to_numpy(), counts.loc[df["hand"]].to_numpy())
    assert len(df) / df["chances"].sum() < 1  # the exploration rate the command prints


def test_K_9_1_reservoir_draws_every_chance_of_a_hand(engine_warm):
    """Over seeds the studied chance of a two-chance hand is the first and the second about equally often."""
    firsts = seconds = 0
    for seed in range(6):
        df = piao_study.study_chunk(seed, 300, rollouts=1, policies="never", per_hand=True)
        every = piao_study.study_chunk(seed, 300, rollouts=1, policies="never", explore=0.0)
        for row in df[df["chances"] == 2].itertuples(index=False):
            turns = every[every["hand"] == row.hand]["turns"].to_list()
            assert row.turns in turns
            firsts += row.turns == turns[0]
            seconds += row.turns == turns[1]
    assert firsts > 5 and seconds > 5


def test_K_9_1_keep_branch_plays_keep_then(engine_warm):
    """Without reshuffling, 飘 then ``always`` replays the real hand of ``always``; the keep branch differs
    with the keep bot: the default (the same bot) and ``never`` are two comparisons."""
    n = 300
    own = np.zeros((n, 4), np.int64)
    df = piao_study.study_chunk(4, n, rollouts=1, policies="always", per_hand=True, reshuffle=False,
                                hand_scores=own)
    np.testing.assert_array_equal(df["alt_score"].to_numpy(), own[df["hand"], df["seat"]])
    nev = piao_study.study_chunk(4, n, rollouts=1, policies="always", per_hand=True, reshuffle=False,
                                 keep_then="never")
    pd.testing.assert_frame_equal(df[list(piao_study.FEATURES)], nev[list(piao_study.FEATURES)])
    assert (df["alt_score"] == nev["alt_score"]).all()
    assert (df["base_score"] != nev["base_score"]).any()
    same = piao_study.study_chunk(4, n, rollouts=1, policies="always", per_hand=True, reshuffle=False,
                                  keep_then="always")
    pd.testing.assert_frame_equal(df, same)


def test_keep_then_bad_spec_is_the_registrys_error():
    with pytest.raises(ValueError, match="unknown policy 'bogus'"):
        piao_study.study_chunk(0, 1, keep_then="bogus", per_hand=True)
    with pytest.raises(ValueError, match="per_hand"):
        piao_study.study_chunk(0, 1, decision="hard", policies="greedy", per_hand=True)


def test_comparison_says_both_branches():
    assert "decides again" in piao_study.comparison("greedy")
    w = piao_study.comparison("greedy", "never", per_hand=True)
    assert "never plays the rest" in w and "one chance per hand" in w


# --------------------------------------------------------------- the command
def test_caishen_piao_runs_resumes_and_states_the_comparison(engine_warm, tmp_path, capsys):
    out = tmp_path / "p"
    argv = ["piao", "--hands", "400", "--rollouts", "2", "--check-walls", "40", "--workers", "1", "--out", str(out),
            "--no-progress"]
    assert main(argv) == 0
    text = capsys.readouterr().out
    assert "comparison: 飘 now" in text and "exploration rate" in text and "Bonferroni" in " ".join(text.split())
    for f in (piao_answer.TABLE_CSV, piao_answer.CELLS_CSV, piao_answer.PAIRWISE_CSV, piao_answer.HEATMAP_PNG):
        assert (out / f).stat().st_size > 0
    table = pd.read_csv(out / piao_answer.TABLE_CSV)
    ans = json.loads((out / piao_answer.ANSWER_JSON).read_text())
    assert set(table["comparison"]) == {ans["comparison"]}
    assert {"tiles_left", "caishen", "waits", "live_waits", "chain", "dealer"} <= set(table["feature"])
    assert (table["points"] > 0).all() and {"ci_low", "ci_high", "hands"} <= set(table.columns)
    pw = pd.read_csv(out / piao_answer.PAIRWISE_CSV)
    pols = piao_answer.check_policies("greedy", ans["implied_policy"])
    assert len(pw) == len(pols) * (len(pols) - 1) // 2
    # issue 45: each exact spec with its readable name beside it (a 飘 table by its cells)
    assert list(pw.columns[3:7]) == ["a_spec", "a_name", "b_spec", "b_name"]
    assert not pw["a_name"].str.contains(r"piao_table:\d").any() and pw["a_spec"].str.contains("piao_table:").any()
    sweep_csv = pd.read_csv(out / "check" / "sweep.csv")
    assert not sweep_csv["policy_name"].str.contains(r"piao_table:\d").any()
    assert ans["hands_for_target"] >= 400 and 0 < ans["exploration_rate"] <= 1
    # the study's own report states the comparison too
    assert main(["report", str(out / piao_answer.STUDY_DIR)]) == 0
    assert f"comparison: {ans['comparison']}" in capsys.readouterr().out
    # issue 47: the table split by the policy's own choice, the parts, the risk, readable check labels
    assert list(dict.fromkeys(table["own_choice"])) == ["all", "keeps"]  # greedy never throws by itself
    top = table.iloc[0]
    assert top["doubling"] + top["penalty"] + top["rest"] == pytest.approx(top["diff"])
    risk = pd.read_csv(out / piao_answer.RISK_CSV)
    assert set(risk["branch"]) == {"piao", "keep"} and (risk["q01"] <= risk["q99"]).all()
    assert ((risk["p_loss"] >= 0) & (risk["p_loss"] <= 1)).all()
    assert list(ans["check"]["labels"])[:2] == ["implied", "shipped"] and "piao_table:" not in pw["a"].str.cat()
    assert (out / piao_answer.PAIRWISE_MD).read_text().count("\n|") >= len(pols)
    flat = " ".join(text.split())
    assert "where it keeps by itself" in flat and "parts of the EV" in flat and "risk, piao branch" in flat
    assert max(len(line) for line in text.splitlines()) <= piao_answer.WIDTH  # no wide matrix: lines wrap

    # resume: the same command reads the committed chunks and gives the same answer
    def timeless(a):
        return {k: ({kk: vv for kk, vv in v.items() if kk != "seconds"} if k == "check" else v)
                for k, v in a.items() if k not in ("study_seconds", "study_resumed")}

    assert main(argv) == 0
    again = json.loads((out / piao_answer.ANSWER_JSON).read_text())
    assert timeless(again) == timeless(ans)
    # issue 45: the rerun's seconds are its own, and it says it resumed
    assert again["study_resumed"] and not ans["study_resumed"]
    assert "resumed: " in capsys.readouterr().out


@pytest.mark.parametrize("args,msg", [
    (["--policy", "bogus"], "unknown policy 'bogus'"),
    (["--keep-then", "threshold:x"], "policy 'threshold:x'"),
    (["--rules", "jiating"], "no 飘 decision"),
    (["--hands", "0"], "hands"),
])
def test_caishen_piao_bad_input_is_one_line(tmp_path, capsys, args, msg):
    with pytest.raises(SystemExit) as e:
        main(["piao", "--out", str(tmp_path / "x"), *args])
    assert e.value.code == 2
    err = capsys.readouterr().err
    assert msg in err and "Traceback" not in err and len(err.strip().splitlines()) == 1


def test_joint_table_cells_match_the_reference():
    rng = np.random.default_rng(9)
    n = 2000
    pts = pd.DataFrame({"hand_id": np.arange(n), "tiles_left": rng.integers(0, 70, n), "waits": rng.integers(1, 12, n),
                        "chances": rng.integers(1, 4, n), "diff": rng.normal(1, 5, n)})
    j = piao_answer.joint_table(pts)
    assert j["points"].sum() == n
    lt = piao_study.group_labels("tiles_left", pts["tiles_left"])
    lw = piao_study.group_labels("waits", pts["waits"])
    for r in j[j["points"] >= 2].itertuples(index=False):
        m = (lt == r.tiles_left) & (lw == r.waits)
        ref = ref_weighted_ci(pts["diff"][m].to_list(), pts["chances"][m].astype(float).to_list(),
                              pts["hand_id"][m].to_list())
        assert (r.diff, r.ci_low, r.ci_high) == pytest.approx(ref, rel=1e-9)


def test_heatmap_leaves_out_an_empty_panel_and_one_that_repeats_every_chance():
    rng = np.random.default_rng(3)
    n = 300
    pts = pd.DataFrame({"hand_id": np.arange(n), "tiles_left": rng.integers(0, 70, n), "waits": rng.integers(1, 12, n),
                        "chances": 1, "diff": rng.normal(1, 5, n), "own_choice": np.zeros(n, np.int64)})
    keeps_only = piao_answer.joint_table(pts, split="own_choice")  # greedy: it never throws by itself
    assert piao_answer.heatmap_panels(keeps_only, "own_choice") == (["all"], "keeps")
    pts.loc[:9, "own_choice"] = 1
    both = piao_answer.joint_table(pts, split="own_choice")
    assert piao_answer.heatmap_panels(both, "own_choice") == (["all", "keeps", "throws"], None)
    assert piao_answer.heatmap_panels(piao_answer.joint_table(pts), None) == ([None], None)


def test_check_walls_follow_the_hands_and_tables_sit_on_the_policys_base():
    assert piao_answer.default_check_walls(20_000) == piao_answer.MIN_CHECK_WALLS
    assert piao_answer.default_check_walls(400_000) == 8_000
    assert piao_answer.default_check_walls(10**7) == piao_answer.DEFAULT_CHECK_WALLS
    lab = piao_answer.check_labels("tuned:kaihua", 5)
    assert lab == {"implied": "piao_table:5:tuned:kaihua", "shipped": "piao_table:tuned:kaihua",
                   "never": "piao_table:0:tuned:kaihua", "always": f"piao_table:{2**64 - 1}:tuned:kaihua",
                   "tuned:kaihua": "tuned:kaihua"}
    assert piao_answer.piao_base("threshold:20") == "greedy" and piao_answer.piao_base("piao_table:3:mc:8") == "mc:8"
    g = piao_answer.check_labels("greedy", 5)
    assert g["implied"] == "piao_table:5" and g["never"] == "never" and "threshold:40" in g


def test_caishen_piao_option_reaches_the_study_and_the_check(engine_warm, tmp_path, capsys):
    out = tmp_path / "o"
    assert main(["piao", "--hands", "200", "--rollouts", "1", "--check-walls", "20", "--workers", "1", "--option",
                 "failed_piao_factor=1", "--out", str(out), "--no-progress"]) == 0
    ans = json.loads((out / piao_answer.ANSWER_JSON).read_text())
    assert ans["options"]["failed_piao_factor"] == 1 and "failed_piao_factor=1" in ans["comparison"]
    assert piao_study.read_study_json(out / piao_answer.STUDY_DIR)["options"]["failed_piao_factor"] == 1
    from caishen.sim.analysis import study

    assert study.read_sweep_json(out / piao_answer.CHECK_DIR)["grid"]["axes"]["failed_piao_factor"] == ["1"]
    pts = piao_study.read_points(out / piao_answer.STUDY_DIR)[1]
    assert (pts["alt_penalty"] == 0).all()  # factor 1: a failed 飘 costs nothing extra
    with pytest.raises(SystemExit):
        main(["piao", "--out", str(tmp_path / "x"), "--option", "failed_piao_factor=99"])
    assert "failed_piao_factor" in capsys.readouterr().err


def test_adaptive_study_plays_each_round_against_the_last_table(engine_warm, tmp_path, capsys):
    """caishen piao --adaptive: round k's field is round k-1's table on the base, each round checked against
    the previous field, the summary written; a rerun resumes to the same rounds."""
    from caishen.sim.analysis import piao_adaptive

    out = tmp_path / "a"
    argv = ["piao", "--policy", "greedy", "--adaptive", "2", "--hands", "300", "--rollouts", "1", "--check-walls",
            "24", "--seed", "5", "--workers", "1", "--out", str(out), "--no-progress"]
    assert main(argv) == 0
    text = capsys.readouterr().out
    doc = json.loads((out / "adaptive.json").read_text())
    rounds = doc["rounds"]
    assert 1 <= len(rounds) <= 2 and rounds[0]["field"] == "greedy" and "round 0: field greedy" in text
    assert doc["status"].split(" ")[0] in ("converged", "settled", "cycle", "max_rounds")
    if len(rounds) == 2:
        assert rounds[1]["field"] == piao_answer.table_spec(rounds[0]["bits"], "greedy")
        assert rounds[1]["changed_cells"] == piao_adaptive.table_diff(rounds[0]["bits"], rounds[1]["bits"])
    for r in rounds:
        if r["table"] != r["field"]:
            assert len(r["value_vs_previous_field"]) == 3 and r["check_walls"] == 24
    assert (out / "adaptive.md").read_text().count("\n| ") == len(rounds) + 1
    assert main(argv) == 0
    again = json.loads((out / "adaptive.json").read_text())
    assert [r["bits"] for r in again["rounds"]] == [r["bits"] for r in rounds]
    with pytest.raises(SystemExit):
        main(["piao", "--adaptive", "0", "--out", str(tmp_path / "x")])
    assert "max_rounds 0" in capsys.readouterr().err


def test_table_words_names_a_table_by_its_cells_and_keeps_other_specs():
    """Issue 45: ``piao_table:220411465189754643`` reads as the cells it throws in (decimal or hex bits,
    a base bot after it kept); specs without bits are left as they are."""
    from caishen.sim.bots.names import spec_words

    bits = 220411465189754643
    assert spec_words(f"piao_table:{bits}") == f"piao_table[{bin(bits).count('1')}/64 cells]"
    assert spec_words("piao_table:18446744073709551615:tuned:kaihua - piao_table:0x10") == \
        "piao_table[64/64 cells]:tuned:kaihua - piao_table[1/64 cells]"
    for same in ("piao_table", "piao_table:tuned:kaihua", "always", "greedy"):
        assert spec_words(same) == same


def test_heatmap_title_is_not_drawn_over_the_panel_titles(tmp_path, monkeypatch):
    """Issue 45: a long comparison wraps over several lines; the constrained layout keeps it above the
    panels' titles (their boxes do not overlap), for one panel and for two."""
    from caishen.sim.analysis import figures

    seen = []
    monkeypatch.setattr(figures, "save_figure", lambda fig, path, **kw: seen.append(fig))
    rows = [{"split": sp, "tiles_left": tl, "waits": w, "points": 50_000, "diff": 0.3, "ci_low": 0.1, "ci_high": 0.5}
            for sp in ("all", "keeps") for tl in ("0-20", "21+") for w in ("1", "2+")]
    long = "EV of 飘 minus keep for greedy at every 飘 chance, the keep branch playing greedy " * 3
    for joint in (pd.DataFrame(rows), pd.DataFrame(rows[:4])):
        piao_answer.heatmap(joint, tmp_path / "h.png", long, split="split", note="bots greedy, 8 chances, seed 0")
        from matplotlib.backends.backend_agg import FigureCanvasAgg

        canvas = FigureCanvasAgg(seen.pop())  # the figure was closed: draw it again as the file was drawn
        canvas.draw()
        fig, r = canvas.figure, canvas.get_renderer()
        top = fig._suptitle.get_window_extent(r)
        assert all(not top.overlaps(ax.title.get_window_extent(r)) for ax in fig.axes if ax.get_title())
