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

The streaming summary (:mod:`caishen.sim.analysis.summary`) computes the same
intervals from per-cluster integer totals fed batch by batch
(:class:`ClusterMoments`, :class:`ClusterCross`): exact sums ``sum y``,
``sum n``, ``sum y**2``, ``sum y n``, ``sum n**2`` (and the cross sums of a
difference) as Python integers, finished by :func:`mean_ci_from_sums`,
:func:`rate_ci_from_sums` and :func:`diff_ci_from_sums` with exact
rationals; ``tests/test_summary_clusters.py`` checks they equal the
in-memory functions.  :class:`ClusterSums` is the float version for
non-integer totals, and :class:`ClusterRatioSums` streams
:func:`cluster_ratio_ci` (a ratio of two totals, e.g. a share of points:
the balance tables of :mod:`caishen.sim.analysis.balance`).

**Few informative clusters** (``df="satterthwaite"``).  When most cluster
residuals are 0 and a few are large -- the paired difference of two
policies that differ on a handful of walls -- the t quantile on ``G - 1``
degrees of freedom is far too small: the variance estimate rests on the
few walls that differ, not on ``G``.  The Satterthwaite degrees of freedom
of the CR variance (the residuals' squares matched to a scaled chi-square
by their first two moments),

    df = 2 (sum_g e_g**2)**2 / (sum_g e_g**4 - (sum_g e_g**2)**2 / G),

capped at ``G - 1``, are about ``2 K`` with ``K`` informative clusters and
about ``G`` for normal ones; :func:`cluster_mean_ci` and
:class:`ClusterSums` take it with ``df="satterthwaite"`` (the paired
differences of ``caishen sweep``, the 飘 check's pairwise matrix and the
factorial effects use it).

Coverage is checked on independent replicates (``tests/test_interval_coverage.py``,
:mod:`caishen.sim.analysis.coverage`): each method's 95% interval covers
the truth in 93-97% of synthetic replicates (clustered means, rates, ratios,
paired and weighted means), and the naive row-level interval does not; the
large runs, engine replicates included, are in ``docs/studies.md``.
"""

from __future__ import annotations

import warnings
from fractions import Fraction

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


#: the degrees of freedom of the t quantile (module docstring)
DF_RULES = ("clusters", "satterthwaite")


def satterthwaite_df(s2: float, s4: float, g: int) -> float:
    """The Satterthwaite degrees of freedom of a CR variance from its residuals' ``s2 = sum e**2`` and
    ``s4 = sum e**4`` over ``g`` clusters, in ``[1, g - 1]`` (module docstring)."""
    if g < 2:
        return float("nan")
    den = s4 - s2 * s2 / g
    if not (s2 > 0) or not (den > 0):
        return float(g - 1)
    return float(min(g - 1, max(1.0, 2 * s2 * s2 / den)))


def _df(df: str, g: int, e: np.ndarray) -> float:
    """The degrees of freedom of rule ``df`` for the cluster residuals ``e: float64[g]``."""
    if df == "clusters":
        return float(g - 1)
    return satterthwaite_df(float(np.sum(e * e)), float(np.sum(e ** 4)), g)


def _t_df(df: float, confidence: float) -> float:
    from scipy.stats import t

    return float(t.ppf(0.5 + confidence / 2, df))


def cluster_mean_ci(values, clusters=None, confidence: float = CONFIDENCE, df: str = "clusters"
                    ) -> tuple[float, float, float]:
    """``(mean, low, high)`` of ``values: float[n]`` with a cluster-robust interval.

    ``clusters``: one id per value (any hashable numpy dtype: wall or hand
    id); ``None`` = every value its own cluster (the Student-t interval).
    ``df``: the t quantile's degrees of freedom, ``"clusters"`` (``G - 1``)
    or ``"satterthwaite"`` (module docstring: for few informative clusters).
    NaN interval with fewer than two clusters; a zero-width interval when
    every cluster's residual is zero.  Raises ``ValueError`` for a shape
    mismatch, a non-finite value or an unknown ``df``.
    """
    y = _values(values)
    n = len(y)
    if df not in DF_RULES:
        raise ValueError(f"df {df!r}: must be one of {', '.join(DF_RULES)}")
    if n == 0:
        return _NAN3
    m = float(y.mean())
    if clusters is None:
        inv, g = np.arange(n), n
    else:
        inv, g = _cluster_ids(clusters, n)
    if g < 2:
        return m, float("nan"), float("nan")
    e, total = _residuals(y, inv, g, m)
    se = np.sqrt(float(g / (g - 1) * np.sum(e * e) / total ** 2))
    h = _t_df(_df(df, g, e), confidence) * se
    return m, m - h, m + h


def _residuals(y: np.ndarray, inv: np.ndarray, g: int, m: float) -> tuple[np.ndarray, float]:
    """``(e: float64[g], rows)``: each cluster's residual ``Y_g - m N_g`` and the number of rows."""
    tot = np.bincount(inv, weights=y, minlength=g)
    cnt = np.bincount(inv, minlength=g).astype(np.float64)
    return tot - m * cnt, float(cnt.sum())


def _ratio_var(y: np.ndarray, inv: np.ndarray, g: int, m: float) -> float:
    e, total = _residuals(y, inv, g, m)
    return float(g / (g - 1) * np.sum(e * e) / total ** 2)


def cluster_rate_ci(hits, clusters=None, confidence: float = CONFIDENCE) -> tuple[float, float, float]:
    """``(rate, low, high)`` of the 0/1 ``hits: bool[n]``: Wilson at the cluster-robust effective size.

    The effective sample size is ``p (1 - p) / Var_cluster(p)`` (at most
    ``n``); at ``p`` of 0 or 1 (no spread to measure) it is ``n``.  With
    ``clusters=None`` this is the plain Wilson interval.  NaN for no rows.
    """
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
    return _wilson_at(p, float(y.sum()), n, n_eff, confidence)


def _wilson_at(p: float, k: float, n: int, n_eff: float, confidence: float) -> tuple[float, float, float]:
    """``(p, low, high)``: Wilson at the size ``n_eff`` (scipy's binomtest when it is the integer ``n``)."""
    from scipy.stats import binomtest, norm

    # Wilson at a non-integer size: scipy's binomtest wants integers, so use the closed form
    z = float(norm.ppf(0.5 + confidence / 2))
    if n_eff == n and float(k).is_integer():
        ci = binomtest(int(k), int(n)).proportion_ci(confidence_level=confidence, method="wilson")
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
        self.sn4 = 0.0
        self.sy = np.zeros(self.k)
        self.sy2 = np.zeros(self.k)
        self.syn = np.zeros(self.k)
        # the fourth-moment sums of the residuals (df="satterthwaite"): sum y**a n**b, a + b = 4, a >= 1
        self.s4 = np.zeros((4, self.k))  # rows: y4, y3 n, y2 n2, y n3

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
        self.sn4 += float((n * n) @ (n * n))
        self.sy += y.sum(0)
        self.sy2 += (y * y).sum(0)
        self.syn += n @ y
        y2 = y * y
        self.s4 += np.stack([(y2 * y2).sum(0), n @ (y2 * y), (n * n) @ y2, (n * n * n) @ y])

    def _ss(self, j: int, m: float) -> float:
        """``sum_g (y_g - m n_g)**2`` of mean ``j``."""
        return max(0.0, float(self.sy2[j] - 2 * m * self.syn[j] + m * m * self.sn2))

    def dfs(self) -> list[float]:
        """The Satterthwaite degrees of freedom of each mean (module docstring); NaN with fewer than two clusters."""
        out = []
        for j in range(self.k):
            m = float(self.sy[j] / self.sn) if self.sn else 0.0
            y4, y3n, y2n2, yn3 = self.s4[:, j]
            s4 = max(0.0, float(y4 - 4 * m * y3n + 6 * m * m * y2n2 - 4 * m ** 3 * yn3 + m ** 4 * self.sn4))
            out.append(satterthwaite_df(self._ss(j, m), s4, self.g))
        return out

    def ci(self, confidence: float = CONFIDENCE, df: str = "clusters") -> list[tuple[float, float, float]]:
        """``[(mean, low, high)] * k``; NaN with no rows, NaN bounds with fewer than two clusters.  ``df``: as
        :func:`cluster_mean_ci`'s."""
        if df not in DF_RULES:
            raise ValueError(f"df {df!r}: must be one of {', '.join(DF_RULES)}")
        if self.sn == 0:
            return [_NAN3] * self.k
        dfs = self.dfs() if df == "satterthwaite" else [self.g - 1] * self.k
        out = []
        for j in range(self.k):
            m = float(self.sy[j] / self.sn)
            if self.g < 2:
                out.append((m, float("nan"), float("nan")))
                continue
            h = _t_df(dfs[j], confidence) * np.sqrt(self.g / (self.g - 1) * self._ss(j, m) / self.sn ** 2)
            out.append((m, float(m - h), float(m + h)))
        return out


def cluster_ratio_ci(num, den, clusters, confidence: float = CONFIDENCE) -> tuple[float, float, float]:
    """``(sum(num) / sum(den), low, high)``: a ratio of totals with a cluster-robust interval (linearized).

    ``num, den: float[n]`` the two parts of each row (a share of points:
    the points of the rows that count / all points), ``clusters`` one id
    per row.  The ratio ``r = sum num / sum den`` is linearized per cluster,
    ``e_g = num_g - r den_g``, with the CR1 variance ``G / (G - 1) sum e_g**2
    / (sum den)**2`` and a Student-t quantile on ``G - 1`` degrees of freedom
    (the module docstring, with ``den`` for the row count).  A share of
    non-negative parts (``num, den >= 0`` row by row) never gets a lower
    bound below 0.  NaN for ``sum den == 0``; NaN bounds with fewer than two
    clusters.  :class:`ClusterRatioSums` streams it.  Raises ``ValueError``
    for shapes that do not match or a non-finite value.
    """
    num = _values(num, "num")
    den = _values(den, "den")
    if num.shape != den.shape:
        raise ValueError(f"num has shape {num.shape}, den {den.shape}: one of each per row")
    tot = float(den.sum())
    if tot == 0:
        return _NAN3
    r = float(num.sum()) / tot
    inv, g = _cluster_ids(clusters, len(num))
    if g < 2:
        return r, float("nan"), float("nan")
    e = np.bincount(inv, weights=num - r * den, minlength=g)
    se = np.sqrt(g / (g - 1) * float(np.sum(e * e))) / tot
    h = _t(g, confidence) * se
    lo = r - h
    if lo < 0 <= num.min() and den.min() >= 0:  # a share of non-negative parts is never negative
        lo = 0.0
    return r, float(lo), float(r + h)


class ClusterRatioSums:
    """:func:`cluster_ratio_ci` streamed: cluster totals of the two parts fed batch by batch, memory independent
    of their number.

    ``add(num, den, min_num, min_den)`` takes the totals of whole clusters
    (``num, den: float[g]``; a cluster must arrive whole, in one call) and
    the smallest part of any of their rows (for the lower bound's clip at 0;
    default the smallest total, right when a cluster is one row);
    :meth:`add_rows` takes rows and their cluster ids.  It keeps ``G``,
    ``sum num``, ``sum den``, and, around a *pivot* ratio ``r0`` (the first
    batch's ratio), the residuals ``e_g = num_g - r0 den_g``: ``sum e_g**2``,
    ``sum e_g den_g``, ``sum den_g**2``, plus the two minima.  The CR1
    variance follows with ``d = r - r0``: ``sum_g (num_g - r den_g)**2 =
    S_ee - 2 d S_ed + d**2 S_dd``; with the pivot near ``r`` the terms stay
    small, so clusters whose ratios are all (nearly) equal give a width of
    (nearly) 0 rather than the rounding noise of the raw form ``S_nn - 2 r
    S_nd + r**2 S_dd``.  :meth:`ci` returns what :func:`cluster_ratio_ci`
    returns on the rows (a test checks it on random splits, up to float
    rounding); :meth:`merge` adds another accumulator's clusters (disjoint
    from these).
    """

    __slots__ = ("g", "sn", "sd", "r0", "see", "sed", "sdd", "min_num", "min_den")

    def __init__(self):
        self.g = 0
        self.sn = self.sd = self.see = self.sed = self.sdd = 0.0
        self.r0 = None  # the pivot, set by the first batch with a non-zero den total
        self.min_num = self.min_den = float("inf")

    def _repivot(self, r0: float) -> None:
        """Move the residual sums to pivot ``r0`` (``e' = e - (r0 - old) den``)."""
        k = r0 - (self.r0 or 0.0)
        self.see += -2 * k * self.sed + k * k * self.sdd
        self.sed -= k * self.sdd
        self.r0 = r0

    def add(self, num, den, min_num=None, min_den=None) -> None:
        """Add whole clusters: ``num, den: float[g]`` their totals; ``min_num, min_den`` the smallest row parts."""
        num = _values(num, "num")
        den = _values(den, "den")
        if num.shape != den.shape:
            raise ValueError(f"num has shape {num.shape}, den {den.shape}: one total of each per cluster")
        if len(num) == 0:
            return
        if self.r0 is None and den.sum() != 0:
            self._repivot(float(num.sum() / den.sum()))
        e = num - (self.r0 or 0.0) * den
        self.g += len(num)
        self.sn += float(num.sum())
        self.sd += float(den.sum())
        self.see += float(e @ e)
        self.sed += float(e @ den)
        self.sdd += float(den @ den)
        self.min_num = min(self.min_num, float(num.min() if min_num is None else min_num))
        self.min_den = min(self.min_den, float(den.min() if min_den is None else min_den))

    def add_rows(self, num, den, clusters) -> None:
        """Add rows ``num, den: float[n]`` of whole clusters (``clusters``: one id per row)."""
        num = _values(num, "num")
        den = _values(den, "den")
        if num.shape != den.shape:
            raise ValueError(f"num has shape {num.shape}, den {den.shape}: one of each per row")
        if len(num) == 0:
            return
        inv, g = _cluster_ids(clusters, len(num))
        self.add(np.bincount(inv, weights=num, minlength=g), np.bincount(inv, weights=den, minlength=g),
                 num.min(), den.min())

    def merge(self, other: "ClusterRatioSums") -> None:
        """Add the clusters of ``other`` (none of them already here)."""
        if self.r0 is None and other.r0 is not None:
            self._repivot(other.r0)
        k = (self.r0 or 0.0) - (other.r0 or 0.0)  # other's residuals moved to this pivot
        self.g += other.g
        self.sn += other.sn
        self.sd += other.sd
        self.see += other.see - 2 * k * other.sed + k * k * other.sdd
        self.sed += other.sed - k * other.sdd
        self.sdd += other.sdd
        self.min_num = min(self.min_num, other.min_num)
        self.min_den = min(self.min_den, other.min_den)

    def ci(self, confidence: float = CONFIDENCE) -> tuple[float, float, float]:
        """``(ratio, low, high)``: NaN for ``sum den == 0``, NaN bounds with fewer than two clusters."""
        if self.sd == 0:
            return _NAN3
        r = self.sn / self.sd
        if self.g < 2:
            return r, float("nan"), float("nan")
        d = r - (self.r0 or 0.0)
        ss = max(0.0, self.see - 2 * d * self.sed + d * d * self.sdd)
        se = np.sqrt(self.g / (self.g - 1) * ss) / self.sd
        h = _t(self.g, confidence) * se
        lo = r - h
        if lo < 0 <= self.min_num and self.min_den >= 0:  # a share of non-negative parts is never negative
            lo = 0.0
        return r, float(lo), float(r + h)


# ---------------------------------------------------------------------------
# the same intervals from exact integer cluster sums (the streaming summary)
# ---------------------------------------------------------------------------
#: ``(g, sum y, sum n, sum y**2, sum y n, sum n**2)`` of one ratio mean over clusters (Python ints)
Sums = tuple


def _resid(s: Sums) -> Fraction:
    """``sum_g (y_g - m n_g)**2`` with ``m = sum y / sum n``, exactly (a Fraction)."""
    _, sy, sn, syy, syn, snn = s
    return Fraction(sn * sn * syy - 2 * sy * sn * syn + sy * sy * snn, sn * sn)


def mean_ci_from_sums(s: Sums, confidence: float = CONFIDENCE) -> tuple[float, float, float]:
    """:func:`cluster_mean_ci` from the cluster sums ``s`` (:data:`Sums`, exact integers).

    ``s = (G, sum y, sum n, sum y**2, sum y n, sum n**2)`` over the ``G``
    clusters that hold at least one row (``n_g > 0``), ``y_g`` the total of
    the rows' values and ``n_g`` their number in cluster ``g``.  The residual
    sum of squares is computed exactly (rationals), so a constant column
    gives a zero-width interval and big totals lose nothing to cancellation.
    NaN with no rows, NaN bounds with fewer than two clusters.
    """
    g, sy, sn = s[0], s[1], s[2]
    if sn == 0:
        return _NAN3
    m = sy / sn
    if g < 2:
        return m, float("nan"), float("nan")
    var = float(_resid(s) * g / ((g - 1) * sn * sn))
    h = _t(g, confidence) * float(np.sqrt(var))
    return m, m - h, m + h


def rate_ci_from_sums(s: Sums, confidence: float = CONFIDENCE) -> tuple[float, float, float]:
    """:func:`cluster_rate_ci` from the cluster sums ``s`` of 0/1 hits (``sum y`` = hits, ``sum n`` = rows).

    Wilson at the effective size ``p (1 - p) / Var_cluster(p)`` (at most the
    rows); at ``p`` of 0 or 1, Wilson at the rows.  NaN for no rows; NaN
    bounds for ``0 < p < 1`` over fewer than two clusters.
    """
    g, k, n = s[0], s[1], s[2]
    if n == 0:
        return _NAN3
    p = k / n
    n_eff = float(n)
    if 0.0 < p < 1.0:
        if g < 2:
            return p, float("nan"), float("nan")
        v = float(_resid(s) * g / ((g - 1) * n * n))
        if v > 0:
            n_eff = min(float(n), p * (1 - p) / v)
    return _wilson_at(p, k, n, n_eff, confidence)


def diff_ci_from_sums(g: int, a: Sums, b: Sums, cross: tuple, confidence: float = CONFIDENCE
                      ) -> tuple[float, float, float]:
    """:func:`cluster_diff_ci` (paired, linearized) from cluster sums, exactly.

    ``a``, ``b``: the :data:`Sums` of the two means; ``cross = (sum y_a y_b,
    sum y_a n_b, sum n_a y_b, sum n_a n_b)`` over the clusters; ``g``: the
    clusters holding a row of either side.  NaN for an empty side, NaN
    bounds with fewer than two clusters.
    """
    na, nb = a[2], b[2]
    if na == 0 or nb == 0:
        return _NAN3
    d = a[1] / na - b[1] / nb
    if g < 2:
        return d, float("nan"), float("nan")
    ma, mb = Fraction(a[1], na), Fraction(b[1], nb)
    yy, yn, ny, nn = cross
    rab = yy - mb * yn - ma * ny + ma * mb * nn
    e2 = _resid(a) / (na * na) + _resid(b) / (nb * nb) - 2 * rab / (na * nb)
    se = float(np.sqrt(float(e2 * g / (g - 1))))
    h = _t(g, confidence) * se
    return d, d - h, d + h


def exact_dot(a: np.ndarray, b: np.ndarray) -> int:
    """``sum(a * b)`` of two ``int64[g]`` arrays as an exact Python int (int64 when it cannot overflow)."""
    if len(a) == 0:
        return 0
    bound = int(np.max(np.abs(a))) * int(np.max(np.abs(b))) * len(a)
    if bound < 2**63:
        return int(np.dot(a, b))
    return sum(x * y for x, y in zip(a.tolist(), b.tolist()))


def exact_col_dots(a: np.ndarray, b: np.ndarray) -> list[int]:
    """``[sum(a[:, j] * b[:, j])]``: column-wise :func:`exact_dot` of two ``int64[g, k]`` arrays (one numpy pass
    for the columns that cannot overflow int64, Python integers for the others)."""
    if a.shape[0] == 0:
        return [0] * a.shape[1]
    bound = np.abs(a).max(0).astype(object) * np.abs(b).max(0).astype(object) * a.shape[0]
    fast = np.einsum("ij,ij->j", a, b)
    return [int(f) if bd < 2**63 else exact_dot(a[:, j], b[:, j]) for j, (f, bd) in enumerate(zip(fast, bound))]


class ClusterMoments:
    """Exact streamed sums of one ratio mean over clusters: :data:`Sums` of the clusters added so far.

    ``add(y, n)`` takes the totals of whole clusters (``y, n: int64[g]``:
    the sum of the rows' integer values and the number of rows of the mean
    in each cluster; clusters with ``n == 0`` hold no row and are not
    counted).  Python integers throughout: no overflow, no rounding, memory
    independent of the number of clusters.  :meth:`ci` / :meth:`rate_ci`
    give :func:`cluster_mean_ci` / :func:`cluster_rate_ci` of the rows.
    """

    __slots__ = ("g", "sy", "sn", "syy", "syn", "snn")

    def __init__(self):
        self.g = self.sy = self.sn = self.syy = self.syn = self.snn = 0

    def add(self, y: np.ndarray, n: np.ndarray) -> None:
        """Add whole clusters' totals ``y, n: int64[g]``."""
        self.g += int(np.count_nonzero(n))
        self.sy += int(y.sum())
        self.sn += int(n.sum())
        self.syy += exact_dot(y, y)
        self.syn += exact_dot(y, n)
        self.snn += exact_dot(n, n)

    def add_sums(self, g: int, sy: int, sn: int, syy: int, syn: int, snn: int) -> None:
        """Add the sums of whole clusters computed elsewhere (:data:`Sums` order)."""
        self.g += g
        self.sy += sy
        self.sn += sn
        self.syy += syy
        self.syn += syn
        self.snn += snn

    def merge(self, other: "ClusterMoments") -> None:
        for f in self.__slots__:
            setattr(self, f, getattr(self, f) + getattr(other, f))

    def sums(self) -> Sums:
        return (self.g, self.sy, self.sn, self.syy, self.syn, self.snn)

    def ci(self, confidence: float = CONFIDENCE) -> tuple[float, float, float]:
        return mean_ci_from_sums(self.sums(), confidence)

    def rate_ci(self, confidence: float = CONFIDENCE) -> tuple[float, float, float]:
        return rate_ci_from_sums(self.sums(), confidence)


class ClusterCross:
    """The cross sums of two means over the same clusters (for :func:`diff_ci_from_sums`), streamed exactly."""

    __slots__ = ("g", "yy", "yn", "ny", "nn")

    def __init__(self):
        self.g = self.yy = self.yn = self.ny = self.nn = 0

    def add(self, ya: np.ndarray, na: np.ndarray, yb: np.ndarray, nb: np.ndarray) -> None:
        """Add whole clusters' totals of both means (``int64[g]`` each)."""
        self.g += int(np.count_nonzero((na != 0) | (nb != 0)))
        self.yy += exact_dot(ya, yb)
        self.yn += exact_dot(ya, nb)
        self.ny += exact_dot(na, yb)
        self.nn += exact_dot(na, nb)

    def merge(self, other: "ClusterCross") -> None:
        for f in self.__slots__:
            setattr(self, f, getattr(self, f) + getattr(other, f))

    def ci(self, a: ClusterMoments, b: ClusterMoments, confidence: float = CONFIDENCE) -> tuple[float, float, float]:
        return diff_ci_from_sums(self.g, a.sums(), b.sums(), (self.yy, self.yn, self.ny, self.nn), confidence)


# ---------------------------------------------------------------------------
# rows as independent: the textbook intervals (thin wrappers over scipy), used by the summary's unit=None,
# and their exact forms over value counts (the streaming summary's)
# ---------------------------------------------------------------------------
def sd_from_ci(low: float, high: float, units: int, confidence: float = CONFIDENCE) -> float:
    """The per-unit sd behind a Student-t interval ``[low, high]`` of a mean over ``units`` independent units
    (:func:`cluster_mean_ci` with one unit per cluster, inverted: ``sd = (high - low) / 2 / t * sqrt(units)``);
    NaN when the interval is not finite or ``units < 2``.  ``caishen power`` plans with it
    (:mod:`caishen.sim.analysis.power`)."""
    import math

    if units < 2 or not (math.isfinite(low) and math.isfinite(high)):
        return float("nan")
    return (high - low) / 2 / _t(int(units), confidence) * math.sqrt(units)


def wilson(k: int, n: int) -> tuple[float, float, float]:
    """``(k/n, low, high)``: a proportion with its 95% Wilson score interval (scipy)."""
    from scipy.stats import binomtest

    if n == 0:
        return float("nan"), float("nan"), float("nan")
    ci = binomtest(int(k), int(n)).proportion_ci(confidence_level=CONFIDENCE, method="wilson")
    return k / n, float(ci.low), float(ci.high)


def mean_ci(x) -> tuple[float, float, float]:
    """``(mean, low, high)``: the mean with its 95% Student-t interval (scipy); NaN interval for n < 2."""
    from scipy.stats import ttest_1samp

    x = np.asarray(x, dtype=np.float64)
    if len(x) == 0:
        return float("nan"), float("nan"), float("nan")
    m = float(x.mean())
    if len(x) < 2:
        return m, float("nan"), float("nan")
    if np.all(x == x[0]):  # no spread: scipy's interval is undefined
        return m, m, m
    ci = ttest_1samp(x, 0.0).confidence_interval(confidence_level=CONFIDENCE)
    return m, float(ci.low), float(ci.high)


def diff_ci(a, b) -> tuple[float, float, float]:
    """``(mean(a) - mean(b), low, high)`` with Welch's 95% interval (scipy); NaN when a side has < 2 values."""
    from scipy.stats import ttest_ind

    a = np.asarray(a, dtype=np.float64)
    b = np.asarray(b, dtype=np.float64)
    if len(a) == 0 or len(b) == 0:
        return float("nan"), float("nan"), float("nan")
    d = float(a.mean() - b.mean())
    if len(a) < 2 or len(b) < 2 or (np.all(a == a[0]) and np.all(b == b[0])):
        return d, float("nan"), float("nan")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        ci = ttest_ind(a, b, equal_var=False).confidence_interval(confidence_level=CONFIDENCE)
    return d, float(ci.low), float(ci.high)


def mean_ci_counts(values, counts) -> tuple[float, float, float]:
    """:func:`mean_ci` of the data in which value ``values[i]`` occurs ``counts[i]`` times.

    ``values``: integers (int64[k]); ``counts``: int64[k] >= 0.  The sums
    are exact (Python integers), so the result equals :func:`mean_ci` of the
    expanded array up to float rounding, in memory independent of the
    number of observations (what the streaming summary needs).
    """
    from scipy.stats import t

    n, s, ss, distinct = _moments(values, counts)
    if n == 0:
        return float("nan"), float("nan"), float("nan")
    m = s / n
    if n < 2:
        return m, float("nan"), float("nan")
    if distinct == 1:  # no spread: scipy's interval is undefined
        return m, m, m
    var = (n * ss - s * s) / (n * (n - 1))
    half = float(t.ppf(0.5 + CONFIDENCE / 2, n - 1)) * float(np.sqrt(var / n))
    return m, m - half, m + half


def diff_ci_counts(values_a, counts_a, values_b, counts_b) -> tuple[float, float, float]:
    """:func:`diff_ci` (Welch) of two samples given as value counts (see :func:`mean_ci_counts`)."""
    from scipy.stats import t

    na, sa, ssa, da = _moments(values_a, counts_a)
    nb, sb, ssb, db = _moments(values_b, counts_b)
    if na == 0 or nb == 0:
        return float("nan"), float("nan"), float("nan")
    d = sa / na - sb / nb
    if na < 2 or nb < 2 or (da == 1 and db == 1):
        return d, float("nan"), float("nan")
    va = (na * ssa - sa * sa) / (na * (na - 1)) / na
    vb = (nb * ssb - sb * sb) / (nb * (nb - 1)) / nb
    dof = (va + vb) ** 2 / (va**2 / (na - 1) + vb**2 / (nb - 1))
    half = float(t.ppf(0.5 + CONFIDENCE / 2, dof)) * float(np.sqrt(va + vb))
    return d, d - half, d + half


def _moments(values, counts) -> tuple[int, int, int, int]:
    """``(n, sum, sum of squares, distinct values)`` as exact Python integers."""
    values = np.asarray(values, np.int64)
    counts = np.asarray(counts, np.int64)
    keep = counts > 0
    vs = [int(v) for v in values[keep]]
    cs = [int(c) for c in counts[keep]]
    n = sum(cs)
    s = sum(v * c for v, c in zip(vs, cs))
    ss = sum(v * v * c for v, c in zip(vs, cs))
    return n, s, ss, len(set(vs))


def percentile_counts(values, counts, q) -> np.ndarray:
    """``numpy.percentile(x, q)`` (linear interpolation) of the data given as value counts.

    ``values``: int64[k]; ``counts``: int64[k] >= 0 with a positive total;
    ``q``: percentiles in 0..100.  Returns float64[len(q)].
    """
    values = np.asarray(values, np.int64)
    counts = np.asarray(counts, np.int64)
    order = np.argsort(values, kind="stable")
    v, c = values[order], counts[order]
    v, c = v[c > 0], c[c > 0]
    cum = np.cumsum(c)  # cum[j] = observations with value <= v[j]
    n = int(cum[-1])
    out = []
    for p in np.atleast_1d(q):
        h = (n - 1) * float(p) / 100.0
        lo = int(np.floor(h))
        t_ = h - lo
        a = float(v[np.searchsorted(cum, lo, side="right")])
        b = float(v[np.searchsorted(cum, min(lo + 1, n - 1), side="right")])
        diff = b - a  # numpy's _lerp: exact at both ends
        out.append(b - diff * (1 - t_) if t_ >= 0.5 else a + diff * t_)
    return np.array(out)


def holm(p) -> np.ndarray:
    """Holm's step-down adjusted p-values of ``p: float[m]`` (each at most 1, monotone in the order of p)."""
    p = np.asarray(p, np.float64)
    m = len(p)
    order = np.argsort(p, kind="stable")
    adj = np.empty(m)
    run = 0.0
    for k, i in enumerate(order):
        run = max(run, min(1.0, (m - k) * p[i]))
        adj[i] = run
    return adj
