"""Confidence intervals over independent units (walls, hands or matches), cluster-robust.

The numbers a study reports are means over *rows* (seat-hands, decision
points, hands) that are not independent: the four seat-hands of one hand
share its wall (and at most one of them wins, usually), the hands of one
match share its dealer rotation, the decision points of one hand share its
wall.  An interval that treats the rows as independent is too narrow.  The
intervals here treat the **cluster** (the independent unit: a wall, a hand,
a match) as the sample: a mean of rows is the ratio ``sum(y) / n`` of
cluster totals, and its variance is the cluster-robust (sandwich, CR1)
variance of that ratio,

    m = sum_g Y_g / sum_g N_g,      e_g = Y_g - m N_g,
    Var(m) = G / (G - 1) * sum_g e_g**2 / (sum_g N_g)**2,

with a Student-t quantile on ``G - 1`` degrees of freedom (``G`` clusters;
``scipy.stats.t``).  This is the interval of an intercept-only regression
with cluster-robust standard errors (statsmodels' ``cov_type="cluster"``
without its ``(N-1)/(N-K)`` factor, which is 1 here).  With one row per
cluster it is the ordinary Student-t interval.  Rates use the Wilson score
interval (scipy) at the *effective* sample size ``p (1 - p) / Var(p)``
(Kish's design effect), so that rare events keep an interval inside
``[0, 1]``.  A difference of two means over the same clusters (paired
designs: duplicate deals, both branches of a counterfactual) linearizes both
ratios per cluster, so the pairing is used.

``tests/test_study.py`` checks the coverage: on synthetic data with a known
mean and a within-cluster correlation, the 95% interval covers the truth in
93-97% of 1,000 repetitions (and the naive row-level interval does not).
"""

from __future__ import annotations

import numpy as np

CONFIDENCE = 0.95

_NAN3 = (float("nan"), float("nan"), float("nan"))


def _cluster_ids(clusters, n: int) -> tuple[np.ndarray, int]:
    c = np.asarray(clusters)
    if c.shape != (n,):
        raise ValueError(f"clusters has shape {c.shape}, expected ({n},): one cluster id per value")
    _, inv = np.unique(c, return_inverse=True)
    return inv.ravel(), int(inv.max()) + 1 if n else 0


def _t(g: int, confidence: float) -> float:
    from scipy.stats import t

    return float(t.ppf(0.5 + confidence / 2, g - 1))


def _values(values, name: str = "values") -> np.ndarray:
    y = np.asarray(values, dtype=np.float64)
    if y.ndim != 1:
        raise ValueError(f"{name} must be one-dimensional, got shape {y.shape}")
    if not np.all(np.isfinite(y)):
        raise ValueError(f"{name} holds a NaN or infinite value")
    return y


def cluster_mean_ci(values, clusters=None, confidence: float = CONFIDENCE) -> tuple[float, float, float]:
    """``(mean, low, high)`` of ``values: float[n]`` with a cluster-robust interval.

    ``clusters``: one id per value (any hashable numpy dtype: wall or hand
    id); ``None`` = every value its own cluster (the Student-t interval).
    NaN interval with fewer than two clusters; a zero-width interval when
    every cluster's residual is zero.  Raises ``ValueError`` for a shape
    mismatch or a non-finite value.
    """
    y = _values(values)
    n = len(y)
    if n == 0:
        return _NAN3
    m = float(y.mean())
    if clusters is None:
        inv, g = np.arange(n), n
    else:
        inv, g = _cluster_ids(clusters, n)
    if g < 2:
        return m, float("nan"), float("nan")
    se = np.sqrt(_ratio_var(y, inv, g, m))
    h = _t(g, confidence) * se
    return m, m - h, m + h


def _ratio_var(y: np.ndarray, inv: np.ndarray, g: int, m: float) -> float:
    tot = np.bincount(inv, weights=y, minlength=g)
    cnt = np.bincount(inv, minlength=g).astype(np.float64)
    e = tot - m * cnt
    return float(g / (g - 1) * np.sum(e * e) / cnt.sum() ** 2)


def cluster_rate_ci(hits, clusters=None, confidence: float = CONFIDENCE) -> tuple[float, float, float]:
    """``(rate, low, high)`` of the 0/1 ``hits: bool[n]``: Wilson at the cluster-robust effective size.

    The effective sample size is ``p (1 - p) / Var_cluster(p)`` (at most
    ``n``); at ``p`` of 0 or 1 (no spread to measure) it is ``n``.  With
    ``clusters=None`` this is the plain Wilson interval.  NaN for no rows.
    """
    from scipy.stats import binomtest

    y = _values(np.asarray(hits, dtype=np.float64), "hits")
    n = len(y)
    if n == 0:
        return _NAN3
    p = float(y.mean())
    n_eff = float(n)
    if clusters is not None and 0.0 < p < 1.0:
        inv, g = _cluster_ids(clusters, n)
        if g < 2:
            return p, float("nan"), float("nan")
        v = _ratio_var(y, inv, g, p)
        if v > 0:
            n_eff = min(float(n), p * (1 - p) / v)
    # Wilson at a non-integer size: scipy's binomtest wants integers, so use the closed form
    from scipy.stats import norm

    z = float(norm.ppf(0.5 + confidence / 2))
    if n_eff == n and float(y.sum()).is_integer():
        ci = binomtest(int(y.sum()), n).proportion_ci(confidence_level=confidence, method="wilson")
        return p, float(ci.low), float(ci.high)
    den = 1 + z * z / n_eff
    centre = (p + z * z / (2 * n_eff)) / den
    half = z * np.sqrt(p * (1 - p) / n_eff + z * z / (4 * n_eff * n_eff)) / den
    return p, max(0.0, centre - half), min(1.0, centre + half)


def cluster_diff_ci(a, a_clusters, b, b_clusters, confidence: float = CONFIDENCE) -> tuple[float, float, float]:
    """``(mean(a) - mean(b), low, high)``: two row means whose clusters may be shared (paired).

    Each mean is a ratio of cluster totals; the difference is linearized per
    cluster (a cluster present in one group only contributes to that side),
    so rows of one wall in both groups are paired.  With every row its own
    cluster and no shared ids it is Welch's interval with a normal-ish
    ``G - 1`` t quantile.  NaN for an empty side or fewer than two clusters.
    """
    ya = _values(a, "a")
    yb = _values(b, "b")
    if len(ya) == 0 or len(yb) == 0:
        return _NAN3
    ca = np.arange(len(ya)) if a_clusters is None else np.asarray(a_clusters)
    cb = (np.arange(len(yb)) + len(ya)) if b_clusters is None else np.asarray(b_clusters)
    if ca.shape != ya.shape or cb.shape != yb.shape:
        raise ValueError("one cluster id per value is needed on each side")
    ids, inv = np.unique(np.concatenate([ca, cb]), return_inverse=True)
    inv = inv.ravel()
    g = len(ids)
    ia, ib = inv[: len(ya)], inv[len(ya):]
    ma, mb = float(ya.mean()), float(yb.mean())
    d = ma - mb
    if g < 2:
        return d, float("nan"), float("nan")
    ea = np.bincount(ia, weights=ya, minlength=g) - ma * np.bincount(ia, minlength=g)
    eb = np.bincount(ib, weights=yb, minlength=g) - mb * np.bincount(ib, minlength=g)
    e = ea / len(ya) - eb / len(yb)
    se = float(np.sqrt(g / (g - 1) * np.sum(e * e)))
    h = _t(g, confidence) * se
    return d, d - h, d + h


def cluster_of(n: int, size: int) -> np.ndarray:
    """``int64[n]`` cluster ids of ``n`` consecutive rows in blocks of ``size`` (e.g. seat-hands of a hand)."""
    return np.arange(n, dtype=np.int64) // size


class ClusterSums:
    """:func:`cluster_mean_ci` streamed: cluster totals fed batch by batch, memory independent of their number.

    ``add(y, n)`` takes the totals of whole clusters (``y: float[g]`` or
    ``float[g, k]`` for ``k`` means over the same clusters, ``n: float[g]``
    rows per cluster, default 1: one value per cluster); a cluster must
    arrive whole, in one call.  It keeps ``G``, ``sum n``, ``sum y``,
    ``sum y**2``, ``sum y n`` and ``sum n**2``, from which the CR1 variance of
    the module docstring follows: ``sum_g (y_g - m n_g)**2 = sum y**2 - 2 m
    sum y n + m**2 sum n**2``.  :meth:`ci` returns what :func:`cluster_mean_ci`
    returns on the rows (a test checks it on random splits); with one row
    per cluster it is the Student-t interval of the values.
    """

    def __init__(self, k: int = 1):
        self.k = int(k)
        self.g = 0
        self.sn = 0.0
        self.sn2 = 0.0
        self.sy = np.zeros(self.k)
        self.sy2 = np.zeros(self.k)
        self.syn = np.zeros(self.k)

    def add(self, y, n=None) -> None:
        """Add whole clusters: ``y: float[g]`` / ``float[g, k]`` totals, ``n: float[g]`` sizes (None: 1 each)."""
        y = np.asarray(y, dtype=np.float64)
        if y.ndim == 1:
            y = y[:, None]
        if y.ndim != 2 or y.shape[1] != self.k:
            raise ValueError(f"ClusterSums({self.k}) got totals of shape {y.shape}")
        if not np.all(np.isfinite(y)):
            raise ValueError("cluster totals hold a NaN or infinite value")
        n = np.ones(len(y)) if n is None else np.asarray(n, dtype=np.float64)
        if n.shape != (len(y),):
            raise ValueError(f"one size per cluster is needed: {len(y)} totals, sizes of shape {n.shape}")
        self.g += len(y)
        self.sn += float(n.sum())
        self.sn2 += float(n @ n)
        self.sy += y.sum(0)
        self.sy2 += (y * y).sum(0)
        self.syn += n @ y

    def ci(self, confidence: float = CONFIDENCE) -> list[tuple[float, float, float]]:
        """``[(mean, low, high)] * k``; NaN with no rows, NaN bounds with fewer than two clusters."""
        if self.sn == 0:
            return [_NAN3] * self.k
        out = []
        for j in range(self.k):
            m = float(self.sy[j] / self.sn)
            if self.g < 2:
                out.append((m, float("nan"), float("nan")))
                continue
            ss = max(0.0, float(self.sy2[j] - 2 * m * self.syn[j] + m * m * self.sn2))
            h = _t(self.g, confidence) * np.sqrt(self.g / (self.g - 1) * ss / self.sn ** 2)
            out.append((m, float(m - h), float(m + h)))
        return out
