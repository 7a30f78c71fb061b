"""``caishen power`` (caishen.sim.analysis.power, issue 27 item 4): walls for a target half-width.

The half-width and the walls are compared with a slow reference (a plain
loop over the number of walls with scipy's t quantile); the sd a pilot
gives is checked against the per-wall values of the pilot itself (a sweep's
chunks, a match's walls) and against the interval it inverts; the command
runs from a stated sd and from a pilot, and refuses bad input in one line.
"""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy import stats

from caishen.cli import main
from caishen.sim.analysis import arena, power, study
from caishen.sim.analysis.intervals import cluster_mean_ci
from caishen.sim.analysis.piao_answer import sweep_wall_scores
from caishen.sim.selfplay.runner import Execution


def ref_walls_for(sd, target, confidence=0.95):
    n = 2
    while stats.t.ppf(0.5 + confidence / 2, n - 1) * sd / math.sqrt(n) > target:
        n += 1
    return n


@pytest.mark.parametrize("sd,target", [(10.0, 0.5), (3.0, 1.0), (1.0, 2.0), (25.0, 1.3), (0.3, 0.01)])
def test_walls_for_matches_the_reference(sd, target):
    n = power.walls_for(sd, target)
    assert n == ref_walls_for(sd, target)
    assert power.half_width(sd, n) <= target
    assert n == 2 or power.half_width(sd, n - 1) > target


def test_sd_from_ci_inverts_the_walls_interval():
    rng = np.random.default_rng(0)
    for n in (5, 50, 2000):
        x = rng.normal(0.3, 7.0, n)
        m, lo, hi = cluster_mean_ci(x)
        assert power.sd_from_ci(lo, hi, n) == pytest.approx(x.std(ddof=1), rel=1e-9)
        assert power.half_width(float(x.std(ddof=1)), n) == pytest.approx((hi - lo) / 2, rel=1e-9)
    assert math.isnan(power.sd_from_ci(float("nan"), 1.0, 10))


@pytest.mark.parametrize("call,msg", [
    (lambda: power.walls_for(-1.0, 0.5), "sd -1.0"),
    (lambda: power.walls_for(1.0, 0.0), "half-width 0.0"),
    (lambda: power.half_width(1.0, 1), "walls 1"),
    (lambda: power.walls_for(1e9, 1e-9), "needs about"),
    (lambda: power.plan(power.pd.DataFrame({"quantity": ["x"], "sd": [1.0]})), "target half-width"),
])
def test_bad_values_are_named(call, msg):
    with pytest.raises(ValueError, match=msg):
        call()


def test_pilot_sds_of_a_sweep_are_its_per_wall_sds(engine_warm, tmp_path):
    out = tmp_path / "s"
    study.sweep("kaihua", out, policies="always,never", walls=300, seed=3, chunk_size=100,
                execution=Execution(1, progress=False))
    sds = power.pilot_sds(out).set_index("quantity")
    scores = sweep_wall_scores(out)
    assert sds.loc["score at policy=always", "sd"] == pytest.approx(scores["always"].std(ddof=1), rel=1e-6)
    assert sds.loc["score at policy=never minus policy=always", "sd"] == pytest.approx(
        (scores["never"] - scores["always"]).std(ddof=1), rel=1e-6)
    text = study.format_table(study.read_sweep(out)[1], metrics=("score",))
    assert f"sd/wall {scores['never'].std(ddof=1):.4g}" in text


def test_pilot_sds_of_a_match_are_its_per_wall_sds(engine_warm, tmp_path):
    out = tmp_path / "m"
    _, summ = arena.play_match("kaihua", "greedy,never", 200, 1, out, chunk_walls=100, workers=1, progress=False)
    vals = np.concatenate([v["points"] for v, _ in arena.iter_wall_values(out)])
    sds = power.pilot_sds(out).set_index("quantity")
    assert sds.loc["points of 0:greedy", "sd"] == pytest.approx(vals[:, 0].std(ddof=1), rel=1e-6)
    d = vals[:, 0] - vals[:, 1]
    assert sds.loc["points of 0:greedy minus 1:never", "sd"] == pytest.approx(d.std(ddof=1), rel=1e-6, abs=1e-12)
    assert "sd/wall" in arena.format_summary(summ)


def test_caishen_power_from_an_sd_and_bad_input(capsys):
    assert main(["power", "--sd", "10", "--half-width", "0.5", "--walls", "1000"]) == 0
    out = capsys.readouterr().out
    assert f"{power.walls_for(10.0, 0.5)}" in out and "walls_for_target" in out and "half_width_at" in out
    for argv, msg in ((["power", "--sd", "-2", "--walls", "10"], "--sd -2"),
                      (["power", "--sd", "2"], "target half-width"),
                      (["power", "--from", "/nonexistent/dir", "--walls", "10"], "neither a sweep")):
        with pytest.raises(SystemExit) as e:
            main(argv)
        err = capsys.readouterr().err
        assert e.value.code == 2 and msg in err and len(err.strip().splitlines()) == 1


def ref_bonett(x, z=1.959963984540054):
    """Bonett (2006), written out slowly from the paper's formulas."""
    from scipy import stats

    n = len(x)
    m = stats.trim_mean(x, 1 / (2 * math.sqrt(n - 4)))
    mean = sum(x) / n
    s2 = sum((v - mean) ** 2 for v in x) / (n - 1)
    g4 = n * sum((v - m) ** 4 for v in x) / sum((v - mean) ** 2 for v in x) ** 2
    c = n / (n - z)
    se = c * math.sqrt((g4 - (n - 3) / n) / (n - 1))
    return math.sqrt(s2), math.sqrt(math.exp(math.log(c * s2) - z * se)), math.sqrt(math.exp(math.log(c * s2) + z * se))


def test_sd_interval_is_bonetts_and_widens_with_sparse_values():
    rng = np.random.default_rng(2)
    x = rng.normal(0, 3, 500)
    assert power.sd_interval(x) == pytest.approx(ref_bonett(x.tolist()), rel=1e-9)
    sparse = np.where(rng.random(2000) < 0.005, rng.normal(0, 30, 2000), 0.0)
    sd, lo, hi = power.sd_interval(sparse)
    assert lo < sd < hi and hi / sd > 1.5  # a few walls carry the spread: a wide interval
    sd, lo, hi = power.sd_interval(np.zeros(100))
    assert sd == 0 and math.isnan(hi)  # a pilot where nothing differed says nothing


def test_plan_sizes_on_the_upper_bound(capsys, engine_warm, tmp_path):
    sds = power.pd.DataFrame({"quantity": ["q"], "sd": [2.0], "sd_low": [1.5], "sd_high": [3.0]})
    p = power.plan(sds, target=0.1, walls=1000)
    assert p["walls_for_target"].iloc[0] == power.walls_for(3.0, 0.1)
    assert p["walls_at_estimate"].iloc[0] == power.walls_for(2.0, 0.1)
    assert p["half_width_at_high"].iloc[0] == pytest.approx(power.half_width(3.0, 1000))
    out = tmp_path / "s"
    study.sweep("kaihua", out, policies="always,never", walls=200, seed=3, chunk_size=100,
                execution=Execution(1, progress=False))
    assert main(["power", "--from", str(out), "--half-width", "0.5"]) == 0
    text = capsys.readouterr().out
    assert "sizes on sd_high" in text and "walls_at_estimate" in text and "sd_low" in text


def test_format_plan_fits_100_columns_and_names_table_bots_by_their_cells():
    """Issue 45: the plan's lines fit 100 terminal columns, and a 飘 table bot reads as its cells, not as its
    64-bit number."""
    import pandas as pd

    from caishen.sim.termtext import display_width

    spec = "piao_table:18446744073709551615:tuned:kaihua"
    sds = pd.DataFrame({"quantity": [f"{spec} - piao_table:3:tuned:kaihua", "greedy"], "walls": [100, 100],
                        "value": [1.2, 3.4], "sd": [10.0, 12.0], "sd_low": [8.0, 9.0], "sd_high": [12.0, 14.0],
                        "walls_nonzero": [90, 95]})
    text = power.format_plan(power.plan(sds, 0.5, 1000), 0.5, 1000)
    assert max(display_width(line) for line in text.splitlines()) <= 100, text
    assert "piao_table[64/64 cells]:tuned:kaihua - piao_table[2/64 cells]:tuned:kaihua" in text
    assert "18446744073709551615" not in text and "2216" in text
