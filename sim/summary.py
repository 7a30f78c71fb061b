"""The summary table of a run: outcome rates, points and 飘财 statistics with 95% intervals.

:func:`summarize` (records in memory) and :func:`summarize_run` (a run
directory, streamed) turn the per-hand records (``caishen.sim.records``) into a tidy
``pandas.DataFrame``, one row per number, with the columns

``section, metric, group, n, value, ci_low, ci_high``

(``n`` = the count the number is computed over; the interval is empty where
none applies).  Rates use the Wilson score interval
(``scipy.stats.binomtest(k, n).proportion_ci(method="wilson")``); means the
Student-t interval (``scipy.stats.ttest_1samp(x, 0).confidence_interval()``);
a difference of means Welch's interval (``scipy.stats.ttest_ind(a, b,
equal_var=False).confidence_interval()``).

Definitions (H hands; a *seat-hand* is one seat in one hand, 4 per hand):

- ``draw rate``: hands with ``win_type == -1`` (流局) / H.
- ``win rate``: seat ``s``: hands where bit ``s`` of ``winners_mask`` is set / H;
  ``dealer``: hands the dealer won / H; ``non-dealer``: non-dealer
  seat-hands that won / 3H.
- ``dealer share``: hands dealt by seat ``s`` / H (a 流局 keeps the dealer,
  K-3.3, so seats do not deal equally often; compare seats with this in mind).
- ``share of wins``: won hands by ``win_type`` (self_draw, discard,
  robbed_kong) / won hands.
- ``winner's gain``: the score change of the (first) winner in a won hand;
  mean and percentiles (numpy's linear interpolation).
- ``score``: mean score change per seat-hand, by seat, for the dealer and
  for non-dealers (the balance between seats and dealer).
- 飘财 (Kaihua, K-9), counted per seat-hand, by policy when seats differ:
  ``attempt rate``: seat-hands with at least one 财神 discard
  (``piao_s >= 1``) / seat-hands.  ``success rate``: of those, the seat won
  by self-draw with a 飘 link counted in its exponent (``winner == s``,
  ``win_type == 0``, ``flags & FLAG_PIAO``: the chain paid off, K-6.5,
  K-9.1).  ``failed rate``: of those, ``failed_piao_s == 1`` (K-9.3).
  ``score per 飘 seat-hand``: mean score change of those seat-hands.
  ``comparable non-飘``: with the records' ``piao_chance_s`` column, the
  seat-hands that could have thrown a 财神 while ready and did not;
  without it, every seat-hand with ``piao_s == 0``
  (:data:`COMPARABLE_DEFINITIONS`).  ``飘 minus comparable`` is the
  difference of the two means (Welch; its ``n`` is both groups' sizes
  added).  ``score per non-飘 seat-hand`` (only with ``piao_chance_s``):
  every seat-hand with ``piao_s == 0``.  ``score per seat-hand`` (one row
  per policy, when seats play different policies): the mean score change of
  all the policy's seat-hands, the controlled comparison of 飘 policies.
- Jiating (J-9 records): ``P per win``, ``G per win``, ``P + G per win``
  over every winning seat-hand; ``several winners``: won hands with two or
  more winners (J-3.4); ``dealer's streak k`` (J-2.4); ``patterns``: for each
  P01..P50 the share of won hands whose first winner scored it (0 when it
  never fired); ``declarations`` per seat-hand (by policy when seats differ):
  ``架听 rate`` (J-4.1), ``硬子 offer rate`` and ``硬子 taken of offers``
  (J-4.2), and for 架听, 硬子 and no declaration the win rate and mean score
  (a declaration's "success"; observational: a declared hand is a ready
  hand); ``passed a win``: seat-hands that passed at least one win (J-3.5).

How it scales: both paths reduce the records batch by batch to exact value
counts (:class:`SummaryTally`: per hand of ``(win_type, dealer,
winners_mask)``, per seat-hand of the flags the rows group by and the score,
and the distributions of the winner's gain, P, G and the streak), whose size
depends on the distinct values, never on the number of hands; every number
is then computed from the counts with exact integer sums
(:func:`mean_ci_counts`, :func:`diff_ci_counts`, :func:`percentile_counts`
give what :func:`mean_ci`, :func:`diff_ci` and ``numpy.percentile`` give on
the expanded data).  :func:`summarize_run` reads only the chunks the
manifest verifies (:mod:`caishen.sim.manifest`), in record batches from
``pyarrow.dataset`` (:mod:`caishen.sim.stream`): ``caishen report`` on 10^8 hands
peaks at ~340 MB of RSS (``benchmarks/bench_summary_scale.py``; the former
pandas path needed 6.2 GB for 10^7).

Caveats: the four seat-hands of one hand are not independent (at most one
seat wins a hand, usually), and neither are the hands of one match (dealer
rotation); the intervals here treat them as independent (the studies'
intervals, :mod:`caishen.sim.intervals`, are over walls or hands).  The
comparison of 飘 and non-飘 seat-hands is observational (a selection
effect: a seat that went on to 飘 differs from one that did not), so its
rows are in their own last section, ``飘财 observational``, out of the
headline rows; the value of 飘 is the counterfactual estimate of
:mod:`caishen.sim.piao_study` or two policies on the same walls
(``caishen sweep``).
"""

from __future__ import annotations

import json
import os
import unicodedata
import warnings
from pathlib import Path

import numpy as np
import pandas as pd

N_SEATS = 4
CONFIDENCE = 0.95
PERCENTILES = (1, 5, 25, 50, 75, 95, 99)
WIN_TYPE_NAMES = {0: "self_draw", 1: "discard", 2: "robbed_kong"}
SUMMARY_COLUMNS = ["section", "metric", "group", "n", "value", "ci_low", "ci_high"]
#: the section of the observational 飘 comparison (kept out of the headline rows, after them)
OBSERVATIONAL = "飘财 observational"
#: what the summary says of that section (``definitions["observational"]``)
OBSERVATIONAL_NOTE = ("飘 minus comparable compares seat-hands that did and did not 飘: a selection effect, not the "
                      "value of 飘 (caishen.sim.piao_study gives the counterfactual answer; caishen sweep compares "
                      "policies on the same walls)")
#: the independent units :func:`summarize` can compute its intervals over (only rows-as-independent so far)
UNITS = (None,)

#: how "comparable non-飘 play" is chosen, by the record columns available
COMPARABLE_DEFINITIONS = {
    "chance": "seat-hands that had a 飘 chance (piao_chance_s >= 1: on some own turn the seat held a 财神 and "
    "would have been ready after discarding it) and made no 飘 (piao_s == 0)",
    "no_attempt": "every seat-hand with no 飘 attempt (piao_s == 0); the records have no piao_chance_s column "
    "yet, so this group includes seats that never held a 财神 or were never ready: the difference is "
    "confounded; compare the policies' 'score per seat-hand' (always vs never) for a controlled answer",
}


# ---------------------------------------------------------------------------
# interval helpers (thin wrappers over scipy)
# ---------------------------------------------------------------------------
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


# ---------------------------------------------------------------------------
# the summary
# ---------------------------------------------------------------------------
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


# ---------------------------------------------------------------------------
# the summary: records -> value counts (streaming) -> rows
# ---------------------------------------------------------------------------
class _Rows:
    def __init__(self):
        self.rows = []

    def add(self, section, metric, group, n, value, low=float("nan"), high=float("nan")):
        self.rows.append((section, metric, group, int(n), float(value), float(low), float(high)))

    def rate(self, section, metric, group, k, n):
        self.add(section, metric, group, n, *wilson(int(k), int(n)))

    def mean(self, section, metric, group, dist):
        values, counts = dist
        self.add(section, metric, group, int(np.sum(counts)), *mean_ci_counts(values, counts))

    def frame(self) -> pd.DataFrame:
        return pd.DataFrame(self.rows, columns=SUMMARY_COLUMNS)


class _Counts:
    """Value counts of ``int64`` codes, merged batch after batch (memory: the distinct codes only)."""

    def __init__(self):
        self.codes: list[np.ndarray] = []
        self.counts: list[np.ndarray] = []

    def add(self, codes: np.ndarray) -> None:
        if len(codes):
            u, c = np.unique(codes, return_counts=True)
            self.add_counts(u, c.astype(np.int64))

    def add_counts(self, codes: np.ndarray, counts: np.ndarray) -> None:
        self.codes.append(np.asarray(codes, np.int64))
        self.counts.append(np.asarray(counts, np.int64))
        if len(self.codes) >= 64:
            self.compact()

    def compact(self) -> tuple[np.ndarray, np.ndarray]:
        """``(codes: int64[k] sorted, counts: int64[k])``, the merged counts."""
        if not self.codes:
            return np.zeros(0, np.int64), np.zeros(0, np.int64)
        u = np.concatenate(self.codes)
        c = np.concatenate(self.counts)
        codes, inv = np.unique(u, return_inverse=True)
        counts = np.zeros(len(codes), np.int64)
        np.add.at(counts, inv.reshape(-1), c)
        self.codes, self.counts = [codes], [counts]
        return codes, counts


#: bit layout of a seat-hand's key in the seat table (the score takes the low 32 bits)
_K_SEAT, _K_DEALER, _K_WON, _K_PIAO, _K_NO_PIAO, _K_SUCCESS, _K_FAILED, _K_CHANCE, _K_DECL, _K_OFFER, _K_PASSED = (
    0, 2, 3, 4, 5, 6, 7, 8, 9, 17, 18)
_BIAS32 = np.int64(1 << 31)


class SummaryTally:
    """The sufficient statistics of the summary, accumulated over record batches in bounded memory.

    ``SummaryTally(columns)``: ``columns`` the record column names (they
    decide which sections exist: 飘财 needs ``piao_s, failed_piao_s, flags``,
    the comparable group ``piao_chance_s``, Jiating ``P_s, G_s, decl_s,
    hard_offer_s, passed_win_s``).  :meth:`update` takes one batch (a
    ``pyarrow.RecordBatch`` / ``Table``, a ``pandas.DataFrame`` or a dict of
    numpy arrays) and reduces it to value counts: per hand of ``(win_type,
    dealer, winners_mask)``, per seat-hand of ``(seat, dealer, won, 飘
    attempt, 飘 success, failed 飘, 飘 chance, declaration, 硬子 offer,
    passed win, score)``, and the distributions of the winner's gain, P, G,
    P + G and the streak.  Their size depends on the distinct values, never
    on the number of hands, and every number of the summary is computed
    exactly from them (:meth:`summary`).  Tallies of disjoint batches
    :meth:`merge`.
    """

    def __init__(self, columns):
        cols = set(columns)
        need = ["dealer", "winner", "winners_mask", "win_type"] + [f"score_{s}" for s in range(N_SEATS)]
        missing = [c for c in need if c not in cols]
        if missing:
            raise ValueError(f"records lack column(s) {', '.join(missing)}")
        seats = lambda stem: all(f"{stem}_{s}" in cols for s in range(N_SEATS))  # noqa: E731
        self.has_piao = seats("piao") and seats("failed_piao") and "flags" in cols
        self.has_chance = self.has_piao and seats("piao_chance")
        self.has_jiating = all(seats(c) for c in ("P", "G", "decl", "hard_offer", "passed_win"))
        self.has_streak = self.has_jiating and "streak" in cols
        from caishen.sim.rules.jiating.tables import PATTERN_NAMES

        self.patterns = [p for p in PATTERN_NAMES if p in cols] if self.has_jiating else []
        self.hands = _Counts()
        self.seat = _Counts()
        self.gain = _Counts()
        self.p = _Counts()
        self.g = _Counts()
        self.pg = _Counts()
        self.streak = _Counts()
        self.pattern_wins = dict.fromkeys(self.patterns, 0)
        self.n_hands = 0

    def columns(self) -> list[str]:
        """The record columns :meth:`update` reads."""
        cols = ["dealer", "winner", "winners_mask", "win_type"] + [f"score_{s}" for s in range(N_SEATS)]
        if self.has_piao:
            cols += ["flags"] + [f"{c}_{s}" for c in ("piao", "failed_piao") for s in range(N_SEATS)]
        if self.has_chance:
            cols += [f"piao_chance_{s}" for s in range(N_SEATS)]
        if self.has_jiating:
            cols += [f"{c}_{s}" for c in ("P", "G", "decl", "hard_offer", "passed_win") for s in range(N_SEATS)]
        if self.has_streak:
            cols.append("streak")
        return cols + self.patterns

    def update(self, batch) -> "SummaryTally":
        """Add one batch of records (any number of rows); returns self."""
        if hasattr(batch, "column_names") and hasattr(batch, "column"):  # pyarrow RecordBatch / Table
            col = lambda c: batch.column(c).to_numpy(zero_copy_only=False)  # noqa: E731
            n = batch.num_rows
        else:  # DataFrame or dict of arrays
            col = lambda c: np.asarray(batch[c])  # noqa: E731
            n = len(np.asarray(batch["dealer"]))
        if n == 0:
            return self
        self.n_hands += n
        win_type = col("win_type").astype(np.int64)
        dealer = col("dealer").astype(np.int64)
        mask = col("winners_mask").astype(np.int64)
        winner = col("winner").astype(np.int64)
        self.hands.add(((win_type + 128) << 16) | ((dealer + 128) << 8) | (mask & 0xFF))
        scores = np.stack([col(f"score_{s}").astype(np.int64) for s in range(N_SEATS)], axis=1)
        won_hand = win_type >= 0
        if won_hand.any():
            self.gain.add(scores[won_hand][np.arange(int(won_hand.sum())), winner[won_hand]])
        if self.has_piao:
            from caishen.sim.rules.kaihua import FLAG_PIAO, WIN_SELF_DRAW

            paid = (win_type == WIN_SELF_DRAW) & ((col("flags").astype(np.int64) & FLAG_PIAO) != 0)
        for s in range(N_SEATS):
            won = (mask >> s) & 1
            key = (np.int64(s) << _K_SEAT) | ((dealer == s).astype(np.int64) << _K_DEALER) | (won << _K_WON)
            if self.has_piao:
                piao = col(f"piao_{s}").astype(np.int64)
                key |= ((piao >= 1).astype(np.int64) << _K_PIAO) | ((piao == 0).astype(np.int64) << _K_NO_PIAO)
                key |= (paid & (winner == s)).astype(np.int64) << _K_SUCCESS
                key |= (col(f"failed_piao_{s}") == 1).astype(np.int64) << _K_FAILED
            if self.has_chance:
                key |= (col(f"piao_chance_{s}") >= 1).astype(np.int64) << _K_CHANCE
            if self.has_jiating:
                decl = np.clip(col(f"decl_{s}").astype(np.int64), -128, 127) + 128
                key |= decl << _K_DECL
                key |= (col(f"hard_offer_{s}") != 0).astype(np.int64) << _K_OFFER
                key |= (col(f"passed_win_{s}") > 0).astype(np.int64) << _K_PASSED
                w = won.astype(bool)
                if w.any():
                    p = col(f"P_{s}").astype(np.int64)[w]
                    g = col(f"G_{s}").astype(np.int64)[w]
                    self.p.add(p)
                    self.g.add(g)
                    self.pg.add(p + g)
            self.seat.add((key << 32) | (scores[:, s] + _BIAS32))
        if self.has_streak:
            self.streak.add(col("streak").astype(np.int64))
        for pid in self.patterns:
            self.pattern_wins[pid] += int(((col(pid) > 0) & won_hand).sum())
        return self

    def merge(self, other: "SummaryTally") -> "SummaryTally":
        """Add the counts of ``other`` (a tally of the same columns over other records); returns self."""
        for name in ("hands", "seat", "gain", "p", "g", "pg", "streak"):
            codes, counts = getattr(other, name).compact()
            getattr(self, name).add_counts(codes, counts)
        for pid, k in other.pattern_wins.items():
            self.pattern_wins[pid] = self.pattern_wins.get(pid, 0) + k
        self.n_hands += other.n_hands
        return self

    # -- from the counts to the rows ------------------------------------------
    def _seat_frame(self) -> pd.DataFrame:
        codes, counts = self.seat.compact()
        key = codes >> 32
        bit = lambda b: ((key >> b) & 1).astype(bool)  # noqa: E731
        return pd.DataFrame({
            "seat": (key >> _K_SEAT) & 3, "dealer": bit(_K_DEALER), "won": bit(_K_WON), "piao": bit(_K_PIAO),
            "no_piao": bit(_K_NO_PIAO), "success": bit(_K_SUCCESS), "failed": bit(_K_FAILED),
            "chance": bit(_K_CHANCE), "decl": ((key >> _K_DECL) & 0xFF) - 128, "offer": bit(_K_OFFER),
            "passed": bit(_K_PASSED), "score": (codes & 0xFFFFFFFF) - _BIAS32, "count": counts,
        })

    def summary(self, policies=("random",) * N_SEATS) -> tuple[pd.DataFrame, dict]:
        """``(rows, definitions)`` as :func:`summarize` returns them."""
        policies = tuple(policies)
        if len(policies) != N_SEATS:
            raise ValueError(f"policies {policies!r}: need one per seat")
        if self.n_hands == 0:
            raise ValueError("no hands to summarize")
        r = _Rows()
        H = self.n_hands
        hc, hn = self.hands.compact()
        win_type = ((hc >> 16) & 0xFF) - 128
        dealer = ((hc >> 8) & 0xFF) - 128
        mask = hc & 0xFF
        count = lambda sel: int(hn[sel].sum())  # noqa: E731
        label = [f"seat {s} ({policies[s]})" for s in range(N_SEATS)]
        sh = self._seat_frame()
        w = sh["count"].to_numpy()
        score = sh["score"].to_numpy()
        seat = sh["seat"].to_numpy()

        def dist(sel):
            return score[sel], w[sel]

        defs = {}
        r.add("hands", "hands", "all", H, H)
        r.rate("outcome", "draw rate", "all", count(win_type == -1), H)
        for s in range(N_SEATS):
            r.rate("outcome", "win rate", label[s], count(((mask >> s) & 1) == 1), H)
        r.rate("outcome", "win rate", "dealer", count(((mask >> np.clip(dealer, 0, 63)) & 1) == 1), H)
        r.rate("outcome", "win rate", "non-dealer", int(w[sh["won"].to_numpy() & ~sh["dealer"].to_numpy()].sum()),
               3 * H)
        for s in range(N_SEATS):
            r.rate("outcome", "dealer share", label[s], count(dealer == s), H)
        W = count(win_type >= 0)
        for code, name in WIN_TYPE_NAMES.items():
            r.rate("win type", "share of wins", name, count(win_type == code), W)
        if W:
            gv, gc = self.gain.compact()
            r.mean("points", "winner's gain", "mean", (gv, gc))
            for p, v in zip(PERCENTILES, percentile_counts(gv, gc, PERCENTILES)):
                r.add("points", "winner's gain", f"p{p}", W, v)
            r.add("points", "winner's gain", "max", W, gv[gc > 0].max())
        for s in range(N_SEATS):
            r.mean("points", "score", label[s], dist(seat == s))
        is_dealer = sh["dealer"].to_numpy()
        r.mean("points", "score", "dealer", dist(is_dealer))
        r.mean("points", "score", "non-dealer", dist(~is_dealer))

        pol = np.array(policies)[seat]
        groups = [("all", np.ones(len(sh), bool))]
        if len(set(policies)) > 1:
            groups += [(f"policy {p}", pol == p) for p in dict.fromkeys(policies)]
        if self.has_piao:
            no_piao = sh["no_piao"].to_numpy()
            att_all = sh["piao"].to_numpy()
            if self.has_chance:
                defs["comparable"] = COMPARABLE_DEFINITIONS["chance"]
                comparable = no_piao & sh["chance"].to_numpy()
            else:
                defs["comparable"] = COMPARABLE_DEFINITIONS["no_attempt"]
                comparable = no_piao
            o = _Rows()  # the selection-biased comparison: its own section, after every headline row
            for gname, g in groups:
                if gname != "all":  # the controlled comparison: policies on the same deals (all seat-hands)
                    r.mean("飘财", "score per seat-hand", gname, dist(g))
                att = g & att_all
                A = int(w[att].sum())
                r.rate("飘财", "attempt rate", gname, A, int(w[g].sum()))
                r.rate("飘财", "success rate", gname, int(w[att & sh["success"].to_numpy()].sum()), A)
                r.rate("飘财", "failed rate", gname, int(w[att & sh["failed"].to_numpy()].sum()), A)
                o.mean(OBSERVATIONAL, "score per 飘 seat-hand", gname, dist(att))
                cmp_ = g & comparable
                o.mean(OBSERVATIONAL, "score per comparable non-飘 seat-hand", gname, dist(cmp_))
                o.add(OBSERVATIONAL, "飘 minus comparable", gname, A + int(w[cmp_].sum()),
                      *diff_ci_counts(*dist(att), *dist(cmp_)))
                if self.has_chance:
                    o.mean(OBSERVATIONAL, "score per non-飘 seat-hand", gname, dist(g & no_piao))
            defs["observational"] = OBSERVATIONAL_NOTE
        else:
            o = None
        if self.has_jiating:
            _jiating_rows(self, r, sh, groups, W, hn, mask)
        if o is not None:
            r.rows += o.rows
        return r.frame(), defs


def _jiating_rows(tally: "SummaryTally", r: _Rows, sh: pd.DataFrame, groups, W: int, hn, mask) -> None:
    """Jiating's rows of the summary (J-9 records), from ``tally``'s counts: P and G per win, several winners, pattern
    frequencies (share of won hands whose first winner has the pattern),
    架听 / 硬子 declarations and what they earned, passed wins, the streak."""
    from caishen.sim.rules.jiating.tables import PATTERN_NAMES

    w = sh["count"].to_numpy()
    score = sh["score"].to_numpy()
    won = sh["won"].to_numpy()
    r.mean("架听 points", "P per win", "all winners", tally.p.compact())
    r.mean("架听 points", "G per win", "all winners", tally.g.compact())
    r.mean("架听 points", "P + G per win", "all winners", tally.pg.compact())
    n_winners = sum((mask >> s) & 1 for s in range(N_SEATS))
    r.rate("架听 points", "several winners (一炮多响)", "share of wins", int(hn[n_winners >= 2].sum()), W)
    if tally.has_streak:
        r.mean("架听 points", "dealer's streak k", "all hands", tally.streak.compact())
    for pid, name in PATTERN_NAMES.items():
        if pid in tally.pattern_wins:
            r.rate("patterns", f"{pid} {name}", "share of wins", tally.pattern_wins[pid], W)
    decl = sh["decl"].to_numpy()
    offer = sh["offer"].to_numpy()
    passed = sh["passed"].to_numpy()
    for gname, g in groups:
        for code, what in ((1, "架听"), (2, "硬子"), (0, "no declaration")):
            d = g & (decl == code)
            if code == 1:
                r.rate("declarations", "架听 rate", gname, w[d].sum(), w[g].sum())
            elif code == 2:
                r.rate("declarations", "硬子 offer rate", gname, w[g & offer].sum(), w[g].sum())
                r.rate("declarations", "硬子 taken of offers", gname, w[d].sum(), w[g & offer].sum())
            r.rate("declarations", f"win rate: {what}", gname, w[d & won].sum(), w[d].sum())
            r.mean("declarations", f"score: {what}", gname, (score[d], w[d]))
        r.rate("declarations", "passed a win (漏胡)", gname, w[g & passed].sum(), w[g].sum())


def seat_hands(df: pd.DataFrame) -> pd.DataFrame:
    """The records in long form: one row per seat-hand (4 per hand), columns
    ``seat, score, won, dealer`` and, where the records have them, ``piao,
    failed_piao, piao_chance, piao_success``."""
    n = len(df)
    parts = {"seat": np.repeat(np.arange(N_SEATS, dtype=np.int8), n)}
    mask = df["winners_mask"].to_numpy().astype(np.int64)
    dealer = df["dealer"].to_numpy()
    parts["score"] = np.concatenate([df[f"score_{s}"].to_numpy() for s in range(N_SEATS)]).astype(np.int64)
    parts["won"] = np.concatenate([(mask >> s) & 1 for s in range(N_SEATS)]).astype(bool)
    parts["dealer"] = np.concatenate([dealer == s for s in range(N_SEATS)])
    for col, name in (("piao", "piao"), ("failed_piao", "failed_piao"), ("piao_chance", "piao_chance"),
                      ("P", "P"), ("G", "G"), ("decl", "decl"), ("hard_offer", "hard_offer"),
                      ("passed_win", "passed_win")):
        if f"{col}_0" in df:
            parts[name] = np.concatenate([df[f"{col}_{s}"].to_numpy() for s in range(N_SEATS)]).astype(np.int64)
    if "piao_0" in df and "flags" in df:
        from caishen.sim.rules.kaihua import FLAG_PIAO, WIN_SELF_DRAW

        paid = (df["win_type"].to_numpy() == WIN_SELF_DRAW) & ((df["flags"].to_numpy() & FLAG_PIAO) != 0)
        winner = df["winner"].to_numpy()
        parts["piao_success"] = np.concatenate([paid & (winner == s) for s in range(N_SEATS)])
    return pd.DataFrame(parts)


def summarize(df: pd.DataFrame, policies=("random",) * N_SEATS, unit=None) -> tuple[pd.DataFrame, dict]:
    """The summary rows of a run's records (in memory) and the definitions used.

    ``df``: the records (``caishen.sim.records.read_run``), at least ``dealer,
    winner, winners_mask, win_type, score_0..3``; the 飘财 rows need
    ``piao_s, failed_piao_s, flags`` (and use ``piao_chance_s`` if present).
    ``policies``: the 4 seats' policy names (labels; 飘 rows are grouped by
    policy when they differ).  Returns ``(rows, definitions)``: a DataFrame
    with :data:`SUMMARY_COLUMNS` and a dict of the definitions chosen.
    Raises ``ValueError`` for empty records or a missing column.  The same
    numbers as :func:`summarize_run`, which streams the records from disk
    (:class:`SummaryTally` does the work for both).
    """
    if unit not in UNITS:
        raise ValueError(f"unit {unit!r}: the streaming summary computes its intervals with rows as independent "
                         "(unit=None); cluster-robust intervals are in caishen.sim.intervals")
    tally = SummaryTally(df.columns)
    if len(df) == 0:
        raise ValueError("no hands to summarize")
    return tally.update(df).summary(policies)


def _width(text: str) -> int:
    """Display width in a terminal (CJK characters take two columns)."""
    return sum(2 if unicodedata.east_asian_width(c) in "WF" else 1 for c in text)


def format_summary(rows: pd.DataFrame, header: str = "") -> str:
    """The summary as a fixed-width text table: section, metric, group, n, value, 95% interval."""

    def num(v):
        if not np.isfinite(v):
            return ""
        if float(v).is_integer() and abs(v) < 1e15:
            return f"{int(v)}"
        return f"{v:.4g}"

    table = [["section", "metric", "group", "n", "value", "95% CI"]]
    for row in rows.itertuples(index=False):
        ci = f"[{num(row.ci_low)}, {num(row.ci_high)}]" if np.isfinite(row.ci_low) and np.isfinite(row.ci_high) else ""
        table.append([row.section, row.metric, row.group, str(row.n), num(row.value), ci])
    widths = [max(_width(r[i]) for r in table) for i in range(len(table[0]))]
    right = {3, 4}
    lines = []
    for r in table:
        cells = [
            " " * (w - _width(c)) + c if i in right else c + " " * (w - _width(c))
            for i, (c, w) in enumerate(zip(r, widths))
        ]
        lines.append("  ".join(cells).rstrip())
    return (header + "\n" if header else "") + "\n".join(lines)


def save_summary(run_dir: str | os.PathLike, rows: pd.DataFrame, definitions: dict, run: dict) -> None:
    """Write ``summary.csv`` (the rows) and ``summary.json`` (run config, definitions, rows) into ``run_dir``."""
    run_dir = Path(run_dir)
    rows.to_csv(run_dir / "summary.csv", index=False)
    doc = {
        "run": run,
        "definitions": {**definitions, "intervals": "95%: Wilson for rates, Student t for means, Welch for differences"},
        "rows": json.loads(rows.to_json(orient="records", force_ascii=False)),
    }
    (run_dir / "summary.json").write_text(json.dumps(doc, indent=2, ensure_ascii=False) + "\n", encoding="utf-8")


def summary_columns(available) -> list[str]:
    """The record columns :func:`summarize` reads, among ``available`` (saves memory on big runs)."""
    stems = ("score", "piao", "failed_piao", "piao_chance", "P", "G", "decl", "hard_offer", "passed_win")
    want = ["dealer", "winner", "winners_mask", "win_type", "flags", "streak"]
    want += [f"{c}_{s}" for c in stems for s in range(N_SEATS)]
    want += [f"P{i:02d}" for i in range(1, 51)]  # Jiating's pattern columns
    return [c for c in want if c in set(available)]


def summarize_run(run_dir: str | os.PathLike, batch_size: int | None = None,
                  verification=None) -> tuple[pd.DataFrame, dict, dict, int]:
    """Summarize a run directory, streaming its verified Parquet chunks (bounded memory).

    Reads only the chunks :func:`caishen.sim.manifest.verify` finds ``ok`` (pass a
    ``verification`` already made to skip a second pass over the files), in
    record batches of ``batch_size`` rows (:func:`caishen.sim.stream.record_batches`)
    reduced by :class:`SummaryTally`: peak memory does not grow with the
    number of hands.  Returns ``(rows, definitions, run_json,
    verified_chunks)``.  Raises ``ValueError`` if ``run_dir`` is not a run or
    has no verified chunk.
    """
    from caishen.sim import records, runner, stream

    meta = runner.read_run_json(run_dir)
    if verification is None:
        files, verification = stream.verified_chunk_files(run_dir, meta)
    else:
        files = [records.chunk_path(run_dir, i) for i in verification.ok]
    if not files:
        raise ValueError(f"no verified chunk in {str(run_dir)!r} (expected "
                         f"{str(Path(run_dir) / records.CHUNKS_DIR)}/chunk-*.parquet with a manifest line)")
    tally = SummaryTally(stream.column_names(files))
    for batch in stream.record_batches(files, tally.columns(), batch_size or stream.BATCH_SIZE):
        tally.update(batch)
    rows, defs = tally.summary(meta.get("policies", ("?",) * N_SEATS))
    return rows, defs, meta, len(files)
