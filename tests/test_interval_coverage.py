"""Replicate checks of every interval method (caishen.sim.analysis.coverage, issue 47 item 4).

Each scenario draws independent replicate data sets with a known truth and
counts how often the method's 95% interval covers it: within 93-97% for
every method (at least 95% for the simultaneous Bonferroni matrix), and the
naive row-level interval and the plain t interval of near-identical policies
below that, so the checks can fail.  Sizes are the suite's (a few seconds);
the large runs are in docs/studies.md.
"""

from __future__ import annotations

import numpy as np
import pytest

from caishen.sim.analysis import coverage
from caishen.sim.analysis.intervals import ClusterSums, cluster_mean_ci, satterthwaite_df

REPS = 1500


@pytest.mark.parametrize("scenario", ["cluster_mean", "rate", "ratio", "paired", "weighted", "near_identical_df"])
def test_each_interval_covers_95_percent_of_replicates(scenario):
    r = coverage.coverage(scenario, REPS, seed=47)
    assert 0.93 <= r["coverage"] <= 0.97, r


def test_the_bonferroni_matrix_covers_every_pair_together():
    r = coverage.coverage("pairwise", 300, seed=47)
    assert r["coverage"] >= 0.94, r


def test_the_sd_interval_of_a_sparse_difference_covers():
    r = coverage.coverage("sd", 800, seed=47)
    assert 0.92 <= r["coverage"] <= 0.98, r


def test_the_checks_can_fail():
    assert coverage.coverage("naive_mean", 600, seed=47)["coverage"] < 0.85
    # two policies that differ on 0.3% of 1,000 walls: the t interval on G - 1 degrees of freedom under-covers,
    # the Satterthwaite one does not
    plain = coverage.coverage("near_identical", REPS, seed=48)
    df = coverage.coverage("near_identical_df", REPS, seed=48)
    assert plain["coverage"] < 0.93 <= df["coverage"], (plain, df)


def ref_satterthwaite(values, clusters):
    """The Satterthwaite degrees of freedom by the formula, slowly."""
    ids = sorted(set(clusters))
    m = sum(values) / len(values)
    e = [sum(v for v, c in zip(values, clusters) if c == g) - m * sum(1 for c in clusters if c == g) for g in ids]
    s2 = sum(x * x for x in e)
    s4 = sum(x ** 4 for x in e)
    g = len(ids)
    return min(g - 1, max(1.0, 2 * s2 * s2 / (s4 - s2 * s2 / g)))


@pytest.mark.parametrize("seed", range(5))
def test_satterthwaite_df_streamed_equals_in_memory_and_the_reference(seed):
    from scipy import stats

    rng = np.random.default_rng(seed)
    n = 300
    clusters = rng.integers(0, 80, n)
    y = np.where(rng.random(n) < 0.05, rng.normal(3, 10, n), 0.0)
    m, lo, hi = cluster_mean_ci(y, clusters, df="satterthwaite")
    df = ref_satterthwaite(y.tolist(), clusters.tolist())
    ids, inv = np.unique(clusters, return_inverse=True)
    tot = np.bincount(inv, weights=y)
    cnt = np.bincount(inv).astype(float)
    g = len(ids)
    se = np.sqrt(g / (g - 1) * np.sum((tot - m * cnt) ** 2) / n ** 2)
    assert (hi - lo) / 2 == pytest.approx(stats.t.ppf(0.975, df) * se, rel=1e-9)
    cs = ClusterSums(1)
    cut = g // 3
    cs.add(tot[:cut], cnt[:cut])
    cs.add(tot[cut:], cnt[cut:])
    assert cs.dfs()[0] == pytest.approx(df, rel=1e-6)
    assert cs.ci(df="satterthwaite")[0] == pytest.approx((m, lo, hi), rel=1e-6)


def test_satterthwaite_df_limits():
    assert satterthwaite_df(0.0, 0.0, 10) == 9  # no spread: the plain t
    assert satterthwaite_df(4.0, 8.0, 1000) == pytest.approx(4.0, rel=0.01)  # two equal residuals: ~2 K
    rng = np.random.default_rng(1)
    e = rng.normal(0, 1, 5000)
    assert satterthwaite_df(float(e @ e), float(np.sum(e ** 4)), 5000) > 4000  # normal: about G
    with pytest.raises(ValueError, match="df 'x'"):
        cluster_mean_ci([1.0, 2.0], df="x")


def test_engine_replicates_cover_the_seats_symmetric_truth(engine_warm):
    """Tiny real runs (Jiating: the first dealer is drawn, J-2.2, so every seat's mean score is 0)."""
    t = coverage.engine_coverage("jiating", reps=30, hands=160, seed=5)
    # 30 replicates x 4 seats: a correct 95% interval misses 6 or more of 120 with probability ~0.38 and
    # 15 or more with probability < 0.001
    assert t["coverage"].mean() >= 0.875, t
