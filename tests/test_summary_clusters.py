"""The exact streamed cluster sums (caishen.sim.analysis.intervals.ClusterMoments, ClusterCross) give the in-memory
cluster-robust intervals (issue 14 item 6).

The streaming summary feeds per-cluster integer totals batch by batch and
finishes with :func:`~caishen.sim.analysis.intervals.mean_ci_from_sums`,
:func:`~caishen.sim.analysis.intervals.rate_ci_from_sums` and
:func:`~caishen.sim.analysis.intervals.diff_ci_from_sums`; these must equal
:func:`~caishen.sim.analysis.intervals.cluster_mean_ci`, ``cluster_rate_ci`` and
``cluster_diff_ci`` of the rows, on random clustered data cut into random
batches (hypothesis), with constant groups, a single cluster, empty sides and
values big enough to overflow int64 sums of squares.
"""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from caishen.sim.analysis.intervals import (
    ClusterCross,
    ClusterMoments,
    ClusterSums,
    cluster_diff_ci,
    cluster_mean_ci,
    cluster_rate_ci,
    exact_col_dots,
    exact_dot,
)


def close(a, b):
    a, b = np.asarray(a, float), np.asarray(b, float)
    assert np.array_equal(np.isnan(a), np.isnan(b)), (a, b)
    np.testing.assert_allclose(a[~np.isnan(a)], b[~np.isnan(b)], rtol=1e-9, atol=1e-9)


@st.composite
def clustered(draw):
    """Rows with a cluster id (clusters consecutive), an integer value and two 0/1 memberships a, b."""
    n = draw(st.integers(0, 80))
    rng = np.random.default_rng(draw(st.integers(0, 2**32 - 1)))
    cl = np.cumsum(rng.random(n) < draw(st.sampled_from([0.05, 0.3, 1.0]))).astype(np.int64)
    spread = draw(st.sampled_from([0, 1, 50, 2**31 - 1]))
    y = rng.integers(-spread, spread + 1, n).astype(np.int64)
    p = draw(st.sampled_from([0.0, 0.1, 0.5, 1.0]))
    a = rng.random(n) < p
    b = ~a & (rng.random(n) < draw(st.sampled_from([0.0, 0.5, 1.0])))
    hits = rng.random(n) < draw(st.sampled_from([0.0, 0.02, 0.5, 1.0]))
    cuts = sorted(draw(st.lists(st.integers(0, max(0, int(cl.max(initial=0))) + 1), max_size=4)))
    return cl, y, a, b, hits, cuts


def totals(cl, x, sel):
    """Per-cluster (sum of x over the selected rows, selected rows), every cluster id 0..max."""
    g = int(cl.max(initial=-1)) + 1
    ty = np.zeros(g, np.int64)
    tn = np.zeros(g, np.int64)
    for c, v, s in zip(cl, x, sel):
        if s:
            ty[c] += int(v)
            tn[c] += 1
    return ty, tn


def streamed(cl, x, sel, cuts):
    """A ClusterMoments fed the cluster totals in batches cut at the cluster ids ``cuts``."""
    ty, tn = totals(cl, x, sel)
    m = ClusterMoments()
    for lo, hi in zip([0, *cuts], [*cuts, len(ty)]):
        m.add(ty[lo:hi], tn[lo:hi])
    return m


@settings(max_examples=300, deadline=None)
@given(clustered())
def test_cluster_moments_equal_cluster_mean_and_rate_ci(case):
    cl, y, a, _, hits, cuts = case
    close(streamed(cl, y, a, cuts).ci(), cluster_mean_ci(y[a], cl[a]))
    close(streamed(cl, hits.astype(np.int64), a, cuts).rate_ci(), cluster_rate_ci(hits[a], cl[a]))


@settings(max_examples=300, deadline=None)
@given(clustered())
def test_cluster_cross_equals_the_paired_cluster_diff_ci(case):
    cl, y, a, b, _, cuts = case
    ya, na = totals(cl, y, a)
    yb, nb = totals(cl, y, b)
    ma, mb, c = ClusterMoments(), ClusterMoments(), ClusterCross()
    for lo, hi in zip([0, *cuts], [*cuts, len(ya)]):
        ma.add(ya[lo:hi], na[lo:hi])
        mb.add(yb[lo:hi], nb[lo:hi])
        c.add(ya[lo:hi], na[lo:hi], yb[lo:hi], nb[lo:hi])
    close(c.ci(ma, mb), cluster_diff_ci(y[a], cl[a], y[b], cl[b]))


def test_cluster_moments_are_exact_where_floats_cancel():
    """A constant column of huge values: zero residual, so a zero-width interval (float sums of squares
    would leave rounding noise of ~1e-16 * 1e26); sums beyond int64 stay exact."""
    big = 3 * 10**9
    y = np.full(40, big, np.int64)
    cl = np.repeat(np.arange(10), 4)
    m = streamed(cl, y, np.ones(40, bool), [3, 7])
    assert m.ci() == (big, big, big)
    assert m.syy == 10 * (4 * big) ** 2 > 2**63
    x = np.array([2**40, -(2**40), 2**40], np.int64)
    assert exact_dot(x, x) == 3 * 2**80


@settings(max_examples=100, deadline=None)
@given(st.integers(0, 30), st.integers(1, 5), st.sampled_from([1, 1000, 2**31, 2**40]), st.integers(0, 2**32 - 1))
def test_exact_col_dots_are_the_python_integer_sums(g, k, spread, seed):
    rng = np.random.default_rng(seed)
    a = rng.integers(-spread, spread + 1, (g, k), dtype=np.int64)
    b = rng.integers(-spread, spread + 1, (g, k), dtype=np.int64)
    want = [sum(int(x) * int(y) for x, y in zip(a[:, j], b[:, j])) for j in range(k)]
    assert exact_col_dots(a, b) == want


def test_cluster_moments_count_only_clusters_holding_a_row():
    m = ClusterMoments()
    m.add(np.array([5, 0, 7], np.int64), np.array([1, 0, 2], np.int64))
    assert (m.g, m.sy, m.sn) == (2, 12, 3)
    assert np.isnan(ClusterMoments().ci()[0])
    one = ClusterMoments()
    one.add(np.array([3], np.int64), np.array([2], np.int64))
    assert one.ci()[0] == 1.5 and np.isnan(one.ci()[1])  # one cluster: no interval


def test_cluster_sums_behaviour_is_kept():
    """ClusterSums (floats, k means) still gives cluster_mean_ci of the rows."""
    rng = np.random.default_rng(0)
    cl = np.repeat(np.arange(30), 3)
    y = rng.normal(size=90)
    s = ClusterSums()
    s.add(np.bincount(cl, weights=y), np.bincount(cl).astype(float))
    close(s.ci()[0], cluster_mean_ci(y, cl))
    with pytest.raises(ValueError, match="shape"):
        s.add(np.zeros((2, 2)))
