"""The streamed ratio of totals (caishen.sim.analysis.intervals.ClusterRatioSums) gives cluster_ratio_ci of the rows.

:func:`~caishen.sim.analysis.intervals.cluster_ratio_ci` is the in-memory interval of a
ratio of totals (a share of points, :mod:`caishen.sim.analysis.balance`): linearized
per cluster, CR1, Student t on ``G - 1`` degrees of freedom, a lower bound
clipped at 0 for a share of non-negative parts.  The balance tables stream
it over a run's chunks with :class:`~caishen.sim.analysis.intervals.ClusterRatioSums`
(``G``, the sums of the parts, of their squares and product per cluster,
and the smallest parts); on random clustered data cut into random batches
of whole clusters, and merged in any order, it must give the same numbers.
"""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from caishen.sim.analysis.intervals import ClusterRatioSums, cluster_ratio_ci


def close(a, b):
    a, b = np.asarray(a, float), np.asarray(b, float)
    assert np.array_equal(np.isnan(a), np.isnan(b)), (a, b)
    np.testing.assert_allclose(a[~np.isnan(a)], b[~np.isnan(b)], rtol=1e-9, atol=1e-12)


@st.composite
def ratio_rows(draw):
    """``(num, den, clusters, cuts)``: rows of whole clusters in order, and batch boundaries between clusters."""
    sizes = draw(st.lists(st.integers(1, 6), min_size=1, max_size=40))
    n = sum(sizes)
    seed = draw(st.integers(0, 2**32 - 1))
    kind = draw(st.sampled_from(["share", "signed", "integer", "constant"]))
    rng = np.random.default_rng(seed)
    den = rng.integers(0, 50, n).astype(float)
    if kind == "share":  # a share of non-negative parts: num <= den
        num = np.where(rng.random(n) < 0.3, den, 0.0) * rng.random(n)
    elif kind == "signed":
        num = rng.normal(size=n) * 10
    elif kind == "integer":
        num = np.where(rng.random(n) < 0.4, den, 0.0)
    else:  # every cluster at the ratio: zero residuals
        num = 0.5 * den
    clusters = np.repeat(rng.permutation(len(sizes)) * 7 + 3, sizes)  # any ids, each cluster's rows together
    bounds = np.cumsum([0, *sizes])
    cuts = sorted(set(draw(st.lists(st.sampled_from(bounds.tolist()), max_size=6))) | {0, n})
    return num, den, clusters, cuts


@settings(max_examples=200, deadline=None)
@given(ratio_rows())
def test_cluster_ratio_sums_equal_cluster_ratio_ci_on_random_batches(case):
    num, den, clusters, cuts = case
    want = cluster_ratio_ci(num, den, clusters)
    rows = ClusterRatioSums()  # batch by batch, from rows
    totals = ClusterRatioSums()  # batch by batch, from per-cluster totals and the batch's smallest parts
    parts = []  # one accumulator per batch, merged in reverse order
    for a, b in zip(cuts[:-1], cuts[1:]):
        if a == b:
            continue
        rows.add_rows(num[a:b], den[a:b], clusters[a:b])
        _, inv = np.unique(clusters[a:b], return_inverse=True)
        totals.add(np.bincount(inv, weights=num[a:b]), np.bincount(inv, weights=den[a:b]),
                   num[a:b].min(), den[a:b].min())
        p = ClusterRatioSums()
        p.add_rows(num[a:b], den[a:b], clusters[a:b])
        parts.append(p)
    merged = ClusterRatioSums()
    for p in parts[::-1]:
        merged.merge(p)
    for acc in (rows, totals, merged):
        assert acc.g == len(np.unique(clusters))
        close(acc.ci(), want)


def test_cluster_ratio_ci_edge_cases():
    cl = np.repeat(np.arange(10), 2)
    den = np.arange(20, dtype=float)
    # a share of non-negative parts: the lower bound stops at 0; with a negative part it does not
    num = np.zeros(20)
    num[0] = 19.0
    r, lo, hi = cluster_ratio_ci(num, den, cl)
    assert lo == 0.0 < r < hi
    signed = num.copy()
    signed[1] = -1e-9
    assert cluster_ratio_ci(signed, den, cl)[1] < 0
    acc = ClusterRatioSums()
    acc.add_rows(num, den, cl)
    assert acc.ci() == pytest.approx((r, lo, hi), rel=1e-12)
    # no denominator: NaN; one cluster: NaN bounds; no rows: NaN
    assert np.isnan(cluster_ratio_ci(num, np.zeros(20), cl)).all()
    one = cluster_ratio_ci([1.0, 2.0], [2.0, 2.0], [5, 5])
    assert one[0] == 0.75 and np.isnan(one[1]) and np.isnan(one[2])
    assert np.isnan(ClusterRatioSums().ci()).all()
    empty = ClusterRatioSums()
    empty.add_rows([], [], [])
    assert empty.g == 0 and np.isnan(empty.ci()).all()
    # constant ratio in every cluster: a zero-width interval
    c = ClusterRatioSums()
    c.add_rows(0.25 * den, den, cl)
    assert c.ci() == (0.25, 0.25, 0.25) == cluster_ratio_ci(0.25 * den, den, cl)


def test_cluster_ratio_bad_input_names_it():
    with pytest.raises(ValueError, match="num has shape"):
        cluster_ratio_ci([1.0, 2.0], [1.0], [0, 1])
    with pytest.raises(ValueError, match="clusters has shape"):
        cluster_ratio_ci([1.0, 2.0], [1.0, 1.0], [0])
    with pytest.raises(ValueError, match="NaN or infinite"):
        ClusterRatioSums().add([np.nan], [1.0])
    with pytest.raises(ValueError, match="one total of each per cluster"):
        ClusterRatioSums().add([1.0, 2.0], [1.0])
