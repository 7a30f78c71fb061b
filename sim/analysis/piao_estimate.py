"""The estimates of a decision study: EV by situation, its parts, the risk of each branch, the ``piao_table`` bits.

The points come from :mod:`caishen.sim.analysis.piao_study` (one row per
studied decision point; :data:`caishen.sim.analysis.piao_study.RESULT_COLUMNS`).
Every mean is **per chance**: a point is weighted by its hand's number of
chances (:func:`point_weights`) where one chance per hand was studied.
Every interval is 95% over **hands** (the points of one hand share its
wall): :func:`weighted_mean_ci`, cluster-robust.

- :func:`estimate`: the EV of the alternative (飘) minus the base (keep),
  overall and by each feature's groups (:data:`GROUPS`), optionally split by
  ``own_choice`` (where the seat's policy throws by itself, and where it
  keeps).  Beside it, its **parts** (:data:`PARTS`; K-9): ``doubling`` (the
  飘 links counted in the seat's own win, K-6.5 / K-9.1: alternative minus
  base), ``penalty`` (the failed-飘 extra paid, K-9.3: alternative minus
  base, usually < 0) and ``rest`` = EV - doubling - penalty: what 飘 changes
  in the play itself -- for a two-财神 hand, above all the win it unlocks
  (K-2.6 bars a 平胡 with two 财神) -- so that the three add up to the EV
  exactly; and ``own_worth``: what the policy's own choices are worth over
  the other branch (EV where it throws, minus the EV where it keeps).
- :func:`risk`: each branch's outcome distribution per chance: mean, sd and
  quantiles of the deciding seat's score (one rollout per point:
  ``*_first``), the probability of losing at least
  :data:`LOSS_POINTS` points (all ``R``
  rollouts), of a failed 飘 and of winning, with intervals.
- :func:`table_estimate`, :func:`piao_table_bits`: the 64 cells of the
  ``piao_table`` policy (:mod:`caishen.sim.bots.piao_table`) and its table.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from caishen.sim.bots.piao_table import MANY_WAITS, TABLE_BUCKET, TABLE_BUCKETS

#: the features a 飘 estimate is broken down by
PIAO_FEATURES = ("tiles_left", "caishen", "waits", "live_waits", "chain", "dealer", "baotou", "own_choice")
#: how each feature is grouped in :func:`estimate`: (lower bounds of the groups) -- the last group is open
GROUPS = {
    "tiles_left": (0, 16, 24, 32, 40, 48),  # the policy's 8-tile buckets, the thin ends merged
    "caishen": (1, 2),
    "waits": (0, 1, 2, 3, 5, 9),
    "live_waits": (0, 1, 3, 5, 8, 12),
    "chain": (0, 1, 2),
    "dealer": (0, 1),
    "baotou": (0, 1),
    "taken": (0, 1),
    "own_choice": (0, 1),
}
#: features of two values, labelled by the value (not "1+")
_BINARY = ("dealer", "baotou", "taken", "caishen", "own_choice")
#: the labels of ``own_choice``: the seat's policy keeps / takes the alternative (throws the 财神) by itself
OWN_LABELS = ("keeps", "throws")
#: the parts of the EV (module docstring): name -> (alternative column, base column); ``rest`` is the remainder
PARTS = {"doubling": ("alt_double", "base_double"), "penalty": ("alt_penalty", "base_penalty")}
#: the quantiles :func:`risk` reports
QUANTILES = (0.01, 0.05, 0.25, 0.5, 0.75, 0.95, 0.99)
#: a rollout "lost big" when the deciding seat's score is at most minus this (points: a dealer's self-draw at
#: exponent 1 against it, or two shares of a doubled discard win)
LOSS_POINTS = 24


def group_labels(feature: str, values) -> np.ndarray:
    """The group label of each value of ``feature`` (``"8-15"``, ``"56+"``, ``"2"``; ``own_choice``:
    ``"keeps"`` / ``"throws"``)."""
    if feature not in GROUPS:
        raise ValueError(f"unknown feature {feature!r}; known: {', '.join(GROUPS)}")
    lows = GROUPS[feature]
    v = np.asarray(values, dtype=np.int64)
    idx = np.searchsorted(np.asarray(lows), v, side="right") - 1
    idx = np.clip(idx, 0, len(lows) - 1)
    if feature == "own_choice":
        return np.asarray(OWN_LABELS, dtype=object)[idx]
    names = []
    for i, lo in enumerate(lows):
        if i == len(lows) - 1:
            names.append(f"{lo}+" if feature not in _BINARY else f"{lo}")
        elif lows[i + 1] - lo == 1:
            names.append(f"{lo}")
        else:
            names.append(f"{lo}-{lows[i + 1] - 1}")
    return np.asarray(names, dtype=object)[idx]


def point_weights(points: pd.DataFrame) -> np.ndarray:
    """``float64[n]``: each point's weight in the estimates: its hand's number of 飘 chances where one chance
    per hand was studied (``chances``: the inverse of the chance to be the one studied), else 1."""
    if "chances" in points:
        return points["chances"].to_numpy(np.float64)
    return np.ones(len(points))


def weighted_mean_ci(values, weights, clusters, confidence: float = 0.95) -> tuple[float, float, float]:
    """``(mean, low, high)``: the mean of ``values`` weighted by ``weights`` (the ratio of the totals of
    ``weights * values`` and ``weights``), with the cluster-robust interval of
    :func:`caishen.sim.analysis.intervals.cluster_ratio_ci` (clusters: hands); with weights 1 it is
    :func:`caishen.sim.analysis.intervals.cluster_mean_ci`'s.  NaN for no rows."""
    from caishen.sim.analysis.intervals import cluster_mean_ci, cluster_ratio_ci

    v = np.asarray(values, np.float64)
    w = np.asarray(weights, np.float64)
    if len(v) == 0:
        return (np.nan, np.nan, np.nan)
    if np.all(w == 1):
        return cluster_mean_ci(v, clusters, confidence)
    m, lo, hi = cluster_ratio_ci(w * v, w, clusters, confidence)
    if lo == 0.0 and v.min() >= 0:  # cluster_ratio_ci clips a share at 0; a mean of values >= 0 keeps its bound
        h = hi - m
        lo = m - h
    return m, lo, hi


def weighted_quantiles(values, weights, qs=QUANTILES) -> np.ndarray:
    """``float64[len(qs)]``: the quantiles of ``values`` under the weights ``weights`` (the smallest value whose
    cumulative weight reaches ``q`` of the total; NaN for no rows)."""
    v = np.asarray(values, np.float64)
    w = np.asarray(weights, np.float64)
    if len(v) == 0 or w.sum() <= 0:
        return np.full(len(qs), np.nan)
    order = np.argsort(v, kind="stable")
    cum = np.cumsum(w[order])
    idx = np.searchsorted(cum, np.asarray(qs, np.float64) * cum[-1], side="left")
    return v[order][np.minimum(idx, len(v) - 1)]


def _clusters(points: pd.DataFrame) -> np.ndarray:
    return points["hand_id" if "hand_id" in points else "hand"].to_numpy()


def _splits(points: pd.DataFrame, split) -> list[tuple[str, np.ndarray]]:
    """``[(label, mask)]``: ``("all", every point)`` then each group of ``split`` (a feature) that has points."""
    out = [("all", np.ones(len(points), bool))]
    if split is not None:
        labels = group_labels(split, points[split].to_numpy())
        out += [(g, labels == g) for g in dict.fromkeys(group_labels(split, GROUPS[split])) if (labels == g).any()]
    return out


def _parts(points: pd.DataFrame) -> dict[str, np.ndarray]:
    """``{part: float64[n]}`` of each point (module docstring; NaN where the points have no parts columns)."""
    d = points["diff"].to_numpy(np.float64)
    out = {}
    for name, (a, b) in PARTS.items():
        out[name] = (points[a].to_numpy(np.float64) - points[b].to_numpy(np.float64) if a in points and b in points
                     else np.full(len(points), np.nan))
    out["rest"] = d - out["doubling"] - out["penalty"]
    return out


def _row(points, mask, w_all, cl, parts, own, confidence) -> tuple:
    """The numbers of one estimate row over the points ``mask``."""
    sub = points[mask]
    w = w_all[mask]
    d, lo, hi = weighted_mean_ci(sub["diff"].to_numpy(), w, cl[mask], confidence)
    avg = [float(np.average(sub[c].to_numpy(np.float64), weights=w))
           for c in ("alt_won", "base_won", "alt_failed", "alt_score", "base_score")]
    own_worth = float(np.average(np.where(own[mask], 1.0, -1.0) * sub["diff"].to_numpy(np.float64), weights=w))
    pp = []
    for name in ("doubling", "penalty", "rest"):
        x = parts[name][mask]
        pp += list(weighted_mean_ci(x, w, cl[mask], confidence)) if np.all(np.isfinite(x)) else [np.nan] * 3
    return (int(mask.sum()), int(len(np.unique(cl[mask]))), d, lo, hi, *avg, own_worth, *pp)


#: the columns of :func:`estimate` after ``feature, group`` (and ``own_choice`` when split)
ESTIMATE_COLUMNS = ["points", "hands", "diff", "ci_low", "ci_high", "alt_won", "base_won", "alt_failed",
                    "alt_score", "base_score", "own_worth", "doubling", "doubling_low", "doubling_high",
                    "penalty", "penalty_low", "penalty_high", "rest", "rest_low", "rest_high"]


def estimate(points: pd.DataFrame, by=PIAO_FEATURES, confidence: float = 0.95, split: str | None = None
             ) -> pd.DataFrame:
    """The EV of the alternative minus the base, overall and by each feature, with intervals and its parts.

    ``points``: rows of :func:`caishen.sim.analysis.piao_study.run_study`
    (needs ``hand_id``, or ``hand`` for one chunk).  One row per (feature,
    group): ``feature, group`` and :data:`ESTIMATE_COLUMNS` (``diff`` and
    its interval, the branches' win / failed rates and scores,
    ``own_worth``, the parts ``doubling``, ``penalty``, ``rest`` with their
    intervals: module docstring); the first row is ``("all", "all")``.
    ``split``: a feature (``"own_choice"``) whose groups each get the whole
    table again, after the one over every point, in a first column named
    after it (``"all"`` for every point).  Every mean is per chance
    (weighted by :func:`point_weights`); the interval is over hands
    (:func:`weighted_mean_ci`).  Raises ``ValueError`` for no points or an
    unknown feature.
    """
    if len(points) == 0:
        raise ValueError("no decision points to estimate from")
    for f in (*by, *([split] if split else [])):
        if f not in GROUPS:
            raise ValueError(f"unknown feature {f!r}; known: {', '.join(GROUPS)}")
    cl = _clusters(points)
    w_all = point_weights(points)
    parts = _parts(points)
    own = points["own_choice" if "own_choice" in points else "taken"].to_numpy(np.int64) > 0
    labels = {f: group_labels(f, points[f].to_numpy()) for f in by}
    rows = []
    for sname, smask in _splits(points, split):
        head = (sname,) if split else ()
        rows.append((*head, "all", "all", *_row(points, smask, w_all, cl, parts, own, confidence)))
        for f in by:
            for lab in dict.fromkeys(group_labels(f, GROUPS[f])):
                mask = smask & (labels[f] == lab)
                if mask.any():
                    rows.append((*head, f, lab, *_row(points, mask, w_all, cl, parts, own, confidence)))
    return pd.DataFrame(rows, columns=[*([split] if split else []), "feature", "group", *ESTIMATE_COLUMNS])


def risk(points: pd.DataFrame, split: str | None = "own_choice", by: str | None = "tiles_left",
         confidence: float = 0.95) -> pd.DataFrame:
    """Each branch's outcome per chance (module docstring): one row per (``split`` group, ``by`` group, branch).

    Columns: ``own_choice`` (the split's group, ``"all"`` first), ``group``
    (``by``'s, ``"all"`` first), ``branch`` (``"piao"`` the alternative,
    ``"keep"`` the base), ``points``, ``mean`` (score per chance), ``sd``
    and the :data:`QUANTILES` ``q01 .. q99`` of the score (from the first
    rollout of each point: one draw per chance, weighted per chance),
    ``p_loss`` with ``p_loss_low, p_loss_high`` (the share of rollouts
    losing at least ``LOSS_POINTS``), ``p_failed`` with its interval (a
    failed 飘, K-9.3), ``p_won``.  Raises ``ValueError`` for no points or
    points without the per-branch columns (a study written before them).
    """
    if len(points) == 0:
        raise ValueError("no decision points to estimate from")
    need = [f"{b}_{c}" for b in ("alt", "base") for c in ("first", "loss", "failed", "won", "score")]
    missing = [c for c in need if c not in points]
    if missing:
        raise ValueError(f"the points lack {', '.join(missing)}: a study written before the risk columns; rerun it")
    cl = _clusters(points)
    w_all = point_weights(points)
    by_labels = group_labels(by, points[by].to_numpy()) if by else None
    groups = [("all", np.ones(len(points), bool))]
    if by:
        groups += [(g, by_labels == g) for g in dict.fromkeys(group_labels(by, GROUPS[by])) if (by_labels == g).any()]
    rows = []
    for sname, smask in _splits(points, split):
        for gname, gmask in groups:
            m = smask & gmask
            if not m.any():
                continue
            w = w_all[m]
            for br, pre in (("piao", "alt"), ("keep", "base")):
                first = points[f"{pre}_first"].to_numpy(np.float64)[m]
                mean = float(np.average(points[f"{pre}_score"].to_numpy(np.float64)[m], weights=w))
                sd = float(np.sqrt(np.average((first - np.average(first, weights=w)) ** 2, weights=w)))
                q = weighted_quantiles(first, w)
                loss = weighted_mean_ci(points[f"{pre}_loss"].to_numpy(np.float64)[m], w, cl[m], confidence)
                fail = weighted_mean_ci(points[f"{pre}_failed"].to_numpy(np.float64)[m], w, cl[m], confidence)
                won = float(np.average(points[f"{pre}_won"].to_numpy(np.float64)[m], weights=w))
                rows.append((sname, gname, br, int(m.sum()), mean, sd, *q, *loss, *fail, won))
    qn = [f"q{int(round(100 * x)):02d}" for x in QUANTILES]
    return pd.DataFrame(rows, columns=[split or "split", "group", "branch", "points", "mean", "sd", *qn, "p_loss",
                                       "p_loss_low", "p_loss_high", "p_failed", "p_failed_low", "p_failed_high",
                                       "p_won"])


def table_cells(points: pd.DataFrame) -> np.ndarray:
    """``int64[n]``: the ``piao_table`` cell of each 飘 point (:func:`caishen.sim.bots.piao_table._piao_table_says`)."""
    b = np.minimum(points["tiles_left"].to_numpy(np.int64) // TABLE_BUCKET, TABLE_BUCKETS - 1)
    mw = (points["waits"].to_numpy(np.int64) >= MANY_WAITS).astype(np.int64)
    ch = (points["chain"].to_numpy(np.int64) > 0).astype(np.int64)
    d = points["dealer"].to_numpy(np.int64)
    return ((b * 2 + mw) * 2 + ch) * 2 + d


def _cell_names(cell: int) -> tuple[str, str, str, int]:
    b, rest = divmod(cell, 8)
    mw, rest = divmod(rest, 4)
    ch, dl = divmod(rest, 2)
    lo_t = b * TABLE_BUCKET
    tl = f"{lo_t}+" if b == TABLE_BUCKETS - 1 else f"{lo_t}-{lo_t + TABLE_BUCKET - 1}"
    return tl, f"{MANY_WAITS}+" if mw else f"<{MANY_WAITS}", "1+" if ch else "0", dl


def table_estimate(points: pd.DataFrame, confidence: float = 0.95, split: str | None = None) -> pd.DataFrame:
    """The estimate for each of the 64 ``piao_table`` cells: ``cell, tiles_left, waits, chain, dealer, points,
    hands, diff, ci_low, ci_high`` and the parts ``doubling, penalty, rest`` (means) and ``own_worth`` (NaN
    where no point fell; weighted as :func:`estimate`).  ``split``: as :func:`estimate` (a first column, the
    64 cells over every point first, then for each of the feature's groups)."""
    cells = table_cells(points)
    w_all = point_weights(points)
    cl = _clusters(points)
    d = points["diff"].to_numpy(np.float64)
    parts = _parts(points)
    own = (points["own_choice"].to_numpy(np.int64) if "own_choice" in points else np.zeros(len(points), np.int64)) > 0
    rows = []
    for sname, smask in _splits(points, split):
        for cell in range(64):
            m = smask & (cells == cell)
            w = w_all[m]
            est = weighted_mean_ci(d[m], w, cl[m], confidence)
            means = [float(np.average(parts[p][m], weights=w)) if m.any() else np.nan
                     for p in ("doubling", "penalty", "rest")]
            worth = float(np.average(np.where(own[m], 1.0, -1.0) * d[m], weights=w)) if m.any() else np.nan
            rows.append(((sname,) if split else ()) + (cell, *_cell_names(cell), int(m.sum()),
                                                       int(len(np.unique(cl[m]))), *est, *means, worth))
    return pd.DataFrame(rows, columns=[*([split] if split else []), "cell", "tiles_left", "waits", "chain", "dealer",
                                       "points", "hands", "diff", "ci_low", "ci_high", "doubling", "penalty", "rest",
                                       "own_worth"])


def piao_table_bits(points: pd.DataFrame, min_points: int = 30) -> int:
    """The ``piao_table`` policy's 64-bit table from studied 飘 points: a cell is set (飘) where the
    mean EV difference is positive over at least ``min_points`` points; returned as a non-negative int
    (``piao_table:<int>``)."""
    t = table_estimate(points)
    bits = 0
    for row in t.itertuples(index=False):
        if row.points >= min_points and row.diff > 0:
            bits |= 1 << int(row.cell)
    return bits
