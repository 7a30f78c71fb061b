"""The streaming reduction behind :mod:`caishen.sim.analysis.summary`: record batches -> exact sums -> summary rows.

:class:`SummaryTally` takes a run's records batch by batch (pyarrow record
batches or pandas frames) and keeps, per hand and seat-hand, exact value
counts and, per independent unit (match, hand, or duplicate-deal wall), the
integer cluster sums of :class:`caishen.sim.analysis.intervals.ClusterMoments`; its
:meth:`SummaryTally.summary` turns them into the summary's rows.  What each
row means, and how its interval is computed, is the docstring of
:mod:`caishen.sim.analysis.summary` (which re-exports the names here); this module
holds the mechanics so that each of the two reads in one sitting.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from caishen.sim.analysis.intervals import (  # the textbook intervals (unit=None) and their value-count forms
    diff_ci_counts,
    mean_ci_counts,
    percentile_counts,
    wilson,
)
from caishen.sim.rules.words import WIN_TYPE_WORDS

N_SEATS = 4


def pattern_names() -> dict[str, str]:
    """``{column: name}`` of the scored pattern columns of every registered rule set's records
    (``Analysis.pattern_names`` of its ``analysis`` hook)."""
    from caishen.sim.rules import base as rulesets

    out: dict[str, str] = {}
    for name in rulesets.names():
        out.update(rulesets.get(name).analysis_hooks().pattern_names)
    return out
CONFIDENCE = 0.95
PERCENTILES = (1, 5, 25, 50, 75, 95, 99)
#: the win types of the summary's "share of wins" rows, in :data:`caishen.sim.rules.words.WIN_TYPE_WORDS`' words
#: (the same as :func:`caishen.read_run`'s ``win_type`` column)
WIN_TYPE_NAMES = {code: word for code, word in WIN_TYPE_WORDS.items() if code >= 0}
SUMMARY_COLUMNS = ["section", "metric", "group", "n", "value", "ci_low", "ci_high"]
#: the section of the observational 飘 comparison (kept out of the headline rows, after them)
OBSERVATIONAL = "飘财 observational"
#: what the summary says of that section (``definitions["observational"]``)
OBSERVATIONAL_NOTE = ("飘 minus comparable compares seat-hands that did and did not 飘: a selection effect, not the "
                      "value of 飘 (the command caishen piao gives the counterfactual answer; caishen sweep compares "
                      "policies on the same walls)")
#: what each 飘 rate of the summary counts (``definitions["飘 rates"]``, printed under the table)
PIAO_RATE_DEFINITIONS = (
    "attempt rate = seat-hands with at least one 财神 discard (piao_s >= 1; forced throws, K-2.4/K-2.5, count) / "
    "seat-hands; success rate = attempts where the seat won by self-draw with a 飘 link counted in its exponent "
    "(the chain paid off, K-6.5, K-9.1) / attempts; failed rate = attempts where another seat won during the "
    "seat's 飘 circle (failed_piao_s == 1: the seat pays an extra share, K-9.3) / attempts; neither rate = "
    "attempts that neither succeeded nor failed (the hand was drawn, or won by anyone after the circle, or by "
    "the seat without the 飘 link counted) / attempts; success (the seat won) and failed (another seat won) "
    "exclude each other, so success + failed + neither = 1")
#: the key of :data:`PIAO_RATE_DEFINITIONS` in the definitions
PIAO_RATES_KEY = "飘 rates"
#: the independent units :func:`summarize` can compute its intervals over (module docstring, "Intervals")
UNITS = ("match", "hand", None)
#: what the summary says of its intervals (``definitions["intervals"]``), by unit
INTERVALS_TEXT = {
    "match": "95%, over matches as independent units (a duplicate-deal run's walls): cluster-robust (CR1) over "
             "the matches; Wilson at the effective size for rates, Student t on matches - 1 degrees of freedom for "
             "means, the paired linearized difference for 飘 minus comparable (caishen.sim.analysis.intervals)",
    "hand": "95%, over hands as independent units (the 4 seat-hands of a hand together): cluster-robust (CR1) over "
            "the hands; Wilson at the effective size for rates, Student t on hands - 1 degrees of freedom for "
            "means, the paired linearized difference for 飘 minus comparable (caishen.sim.analysis.intervals)",
    None: "95%, rows (hands, seat-hands) taken as independent (too narrow: they are not): Wilson for rates, "
          "Student t for means, Welch for differences",
}
#: the ``group`` of the summary's "independent units" row, by unit (and for duplicate-deal records)
UNIT_LABELS = {"match": "matches", "wall": "walls", "hand": "hands"}

#: what the "independent units" row counts (``definitions["independent units"]``; ``what``: a :data:`UNIT_LABELS`)
UNITS_TEXT = ("the {what} the 95% intervals take as independent ({why}), so every interval is computed over "
              "them, not over hands or seat-hands")
#: why each unit's rows are not independent (:data:`UNITS_TEXT`'s ``why``), by :data:`UNIT_LABELS` value
UNITS_WHY = {"matches": "the hands of a match share its deal rotation", "walls": "a wall's seatings share its tiles",
             "hands": "a hand's four seat-hands are one game"}
#: what the "dealer share" rows are (``definitions["dealer share"]``)
DEALER_SHARE_TEXT = "the share of hands in which the seat was the dealer (about 1/4 each when the deal rotates)"
#: how "comparable non-飘 play" is chosen, by the record columns available
COMPARABLE_DEFINITIONS = {
    "chance": "seat-hands that had a 飘 chance (piao_chance_s >= 1: on some own turn the seat held a 财神 and "
    "would have been ready after discarding it) and made no 飘 (piao_s == 0)",
    "no_attempt": "every seat-hand with no 飘 attempt (piao_s == 0); the records have no piao_chance_s column "
    "yet, so this group includes seats that never held a 财神 or were never ready: the difference is "
    "confounded; compare the policies' 'score per seat-hand' (always vs never) for a controlled answer",
}


# ---------------------------------------------------------------------------
# the summary: records -> value counts (streaming) -> rows
# ---------------------------------------------------------------------------
class _Rows:
    """The rows of the summary; intervals over rows (``clusters`` None) or from the tally's cluster sums."""

    def __init__(self, clusters=None):
        self.rows = []
        self.clusters = clusters  # (moments by row key, cross sums by row key) or None

    def add(self, section, metric, group, n, value, low=float("nan"), high=float("nan")):
        self.rows.append((section, metric, group, int(n), float(value), float(low), float(high)))

    def rate(self, section, metric, group, k, n):
        if self.clusters is None:
            self.add(section, metric, group, n, *wilson(int(k), int(n)))
        else:
            self.add(section, metric, group, n, *self.clusters[0][(section, metric, group)].rate_ci(CONFIDENCE))

    def mean(self, section, metric, group, dist):
        values, counts = dist
        n = int(np.sum(counts))
        if self.clusters is None:
            self.add(section, metric, group, n, *mean_ci_counts(values, counts))
        else:
            self.add(section, metric, group, n, *self.clusters[0][(section, metric, group)].ci(CONFIDENCE))

    def diff(self, section, metric, group, n, dist_a, dist_b, key_a, key_b):
        if self.clusters is None:
            self.add(section, metric, group, n, *diff_ci_counts(*dist_a, *dist_b))
        else:
            mom, cross = self.clusters
            self.add(section, metric, group, n,
                     *cross[(section, metric, group)].ci(mom[key_a], mom[key_b], CONFIDENCE))

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


#: numbers whose cluster sums are computed together (a block of int64[clusters, _BLOCK] arrays)
_BLOCK = 16


def _per_cluster(x, seg: np.ndarray, cache: dict) -> np.ndarray:
    """``int64[g]``: the sums of ``x`` (an array, or a list of arrays to add up) over the segments starting at
    ``seg``; each array is reduced once (``cache``: id -> (array, sums), the batch's many numbers share arrays)."""
    if isinstance(x, list):
        return sum(_per_cluster(c, seg, cache) for c in x)
    got = cache.get(id(x))
    if got is None:
        got = cache[id(x)] = (x, np.add.reduceat(x, seg, dtype=np.int64))
    return got[1]


class SummaryTally:
    """The sufficient statistics of the summary, accumulated over record batches in bounded memory.

    ``SummaryTally(columns, policies, unit)``: ``columns`` the record column
    names (they decide which sections exist: 飘财 needs ``piao_s,
    failed_piao_s, hand_flags``, the comparable group ``piao_chance_s``, J-9
    ``P_s, G_s, decl_s, hard_offer_s, passed_win_s``; ``unit="match"`` needs
    ``match_hand``, or ``wall, seating`` for duplicate deals, and uses
    ``chunk``); ``policies`` the four seats' policy names (the rows by
    policy); ``unit`` ``"match"``, ``"hand"`` or None (module docstring).
    Batches must come in hand order (as :func:`caishen.sim.selfplay.stream.record_batches`
    gives them); a cluster cut by a batch is carried on to the next.  :meth:`update` takes one batch (a
    ``pyarrow.RecordBatch`` / ``Table``, a ``pandas.DataFrame`` or a dict of
    numpy arrays) and reduces it to value counts: per hand of ``(win_type,
    dealer, winners_mask)``, per seat-hand of ``(seat, dealer, won, 飘
    attempt, 飘 success, failed 飘, 飘 chance, declaration, 硬子 offer,
    passed win, score)``, and the distributions of the winner's gain, P, G,
    P + G and the streak, and, with a unit, to the exact cluster sums of
    every interval (``mom``, ``cross``: one
    :class:`~caishen.sim.analysis.intervals.ClusterMoments` per row, whatever the
    number of clusters).  Their size depends on the distinct values, never
    on the number of hands, and every number of the summary is computed
    exactly from them (:meth:`summary`).  Tallies of consecutive batches
    that meet at a cluster boundary :meth:`merge`.
    """

    def __init__(self, columns, policies=("random",) * N_SEATS, unit="match"):
        cols = set(columns)
        need = ["dealer", "winner", "winners_mask", "win_type"] + [f"score_{s}" for s in range(N_SEATS)]
        missing = [c for c in need if c not in cols]
        if missing:
            raise ValueError(f"records lack column(s) {', '.join(missing)}")
        self.policies = tuple(policies)
        if len(self.policies) != N_SEATS:
            raise ValueError(f"policies {self.policies!r}: need one per seat")
        if unit not in UNITS:
            raise ValueError(f"unit {unit!r}: the summary's intervals are over 'match' (the default), 'hand', or "
                             "None (rows as independent)")
        self.unit = unit
        #: duplicate-deal records (caishen.sim.analysis.arena): a wall is played in consecutive rows, one per seating
        self.by_wall = unit == "match" and {"wall", "seating"} <= cols
        if unit == "match" and not self.by_wall and "match_hand" not in cols:
            raise ValueError("unit 'match' needs the records' match_hand column (a match starts at match_hand 0); "
                             "use unit='hand' for records without it")
        self.has_chunk = "chunk" in cols
        self.mom: dict = {}  # row key -> ClusterMoments of the complete clusters
        self.cross: dict = {}  # row key of a difference -> ClusterCross
        self.n_clusters = 0  # complete clusters
        self._open = None  # row key -> (y, n): the totals of the last cluster, maybe unfinished
        self._prev = None  # the cluster key (chunk, wall) or chunk of the last row read
        self._begins_mid = False  # the first row read continued a cluster that began before it
        self._pairs: dict = {}  # row key of a difference -> the row keys of its two means
        seats = lambda stem: all(f"{stem}_{s}" in cols for s in range(N_SEATS))  # noqa: E731
        self.has_piao = seats("piao") and seats("failed_piao") and "hand_flags" in cols
        self.has_chance = self.has_piao and seats("piao_chance")
        self.has_scored_wins = all(seats(c) for c in ("P", "G", "decl", "hard_offer", "passed_win"))
        self.has_streak = self.has_scored_wins and "streak" in cols
        PATTERN_NAMES = pattern_names()

        self.patterns = [p for p in PATTERN_NAMES if p in cols] if self.has_scored_wins else []
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
            cols += ["hand_flags"] + [f"{c}_{s}" for c in ("piao", "failed_piao") for s in range(N_SEATS)]
        if self.has_chance:
            cols += [f"piao_chance_{s}" for s in range(N_SEATS)]
        if self.has_scored_wins:
            cols += [f"{c}_{s}" for c in ("P", "G", "decl", "hard_offer", "passed_win") for s in range(N_SEATS)]
        if self.has_streak:
            cols.append("streak")
        if self.unit == "match":
            cols += ["wall", "seating"] if self.by_wall else ["match_hand"]
            if self.has_chunk:
                cols.append("chunk")
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
            from caishen.sim.rules.codes import FLAG_JOKER_LINK, WIN_SELF_DRAW

            paid = (win_type == WIN_SELF_DRAW) & ((col("hand_flags").astype(np.int64) & FLAG_JOKER_LINK) != 0)
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
            if self.has_scored_wins:
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
        if self.unit is not None:
            self._update_clusters(self._starts(col, n), *self._metrics(col, n, win_type, dealer, mask, winner, scores))
        return self

    # -- the clusters ---------------------------------------------------------
    def _starts(self, col, n: int) -> np.ndarray:
        """``bool[n]``: the rows of the batch that begin a cluster (a match, a wall, a hand)."""
        first = self._open is None
        if self.unit == "hand":
            return np.ones(n, bool)
        chunk = col("chunk").astype(np.int64) if self.has_chunk else np.zeros(n, np.int64)
        start = np.empty(n, bool)
        if self.by_wall:  # consecutive rows of one (chunk, wall): the seatings of a duplicate deal
            key = (chunk << 32) | (col("wall").astype(np.int64) & 0xFFFFFFFF)
            start[1:] = key[1:] != key[:-1]
            start[0] = self._prev is None or key[0] != self._prev
        else:  # a match starts at match_hand 0 (a chunk starts a new match, whatever its size, runner.py)
            key = chunk
            start[:] = col("match_hand") == 0
            start[1:] |= key[1:] != key[:-1]
            start[0] |= self._prev is not None and key[0] != self._prev
        self._prev = int(key[-1])
        if first:
            self._begins_mid = not bool(start[0])
            start[0] = True
        return start

    def _update_clusters(self, start: np.ndarray, metrics, pairs) -> None:
        """Add the batch's complete clusters to the sums; the last one stays open (it may go on in the next batch)."""
        from caishen.sim.analysis.intervals import ClusterCross, ClusterMoments, exact_col_dots

        cont = not bool(start[0])  # the batch goes on with the open cluster
        seg = np.flatnonzero(start)
        if cont:
            seg = np.concatenate([[0], seg])
        prepend = self._open is not None and not cont  # the open cluster ended with the previous batch
        self.n_clusters += len(seg) - 1 + int(prepend)
        opened, done = {}, {}
        sums_of = {}  # one reduceat per distinct array (many means share a row count)
        for key, y, nr in metrics:
            ty, tn = _per_cluster(y, seg, sums_of), _per_cluster(nr, seg, sums_of)
            if self._open is not None:
                oy, on = self._open[key]
                if cont:
                    ty, tn = ty.copy(), tn.copy()  # per_cluster's arrays may be shared
                    ty[0] += oy
                    tn[0] += on
                else:
                    ty = np.concatenate([np.array([oy], np.int64), ty])
                    tn = np.concatenate([np.array([on], np.int64), tn])
            opened[key] = (int(ty[-1]), int(tn[-1]))
            done[key] = (ty[:-1], tn[:-1])
        keys = list(done)
        for i in range(0, len(keys), _BLOCK):  # the sums of many numbers at once, a block of columns at a time
            block = keys[i:i + _BLOCK]
            ys = np.stack([done[k][0] for k in block], axis=1)
            ns = np.stack([done[k][1] for k in block], axis=1)
            gs, sy, sn = np.count_nonzero(ns, axis=0), ys.sum(0), ns.sum(0)
            syy, syn, snn = exact_col_dots(ys, ys), exact_col_dots(ys, ns), exact_col_dots(ns, ns)
            for j, key in enumerate(block):
                m = self.mom.get(key)
                if m is None:
                    m = self.mom[key] = ClusterMoments()
                m.add_sums(int(gs[j]), int(sy[j]), int(sn[j]), syy[j], syn[j], snn[j])
        for a, b, key in pairs:
            c = self.cross.get(key)
            if c is None:
                c = self.cross[key] = ClusterCross()
            c.add(*done[a], *done[b])
        self._open = opened

    def _cluster_sums(self):
        """``(moments, cross, clusters)``: the sums with the open cluster closed (the tally is left as it is)."""
        import copy

        mom, cross = copy.deepcopy(self.mom), copy.deepcopy(self.cross)
        g = self.n_clusters
        if self._open is not None:
            g += 1
            one = lambda v: np.array([v], np.int64)  # noqa: E731
            for key, (y, n) in self._open.items():
                mom[key].add(one(y), one(n))
            for key, c in cross.items():
                a, b = self._pairs[key]
                c.add(one(self._open[a][0]), one(self._open[a][1]), one(self._open[b][0]), one(self._open[b][1]))
        return mom, cross, g

    def _groups(self) -> list[tuple[str, list[int]]]:
        groups = [("all", list(range(N_SEATS)))]
        if len(set(self.policies)) > 1:
            groups += [(f"policy {p}", [s for s in range(N_SEATS) if self.policies[s] == p])
                       for p in dict.fromkeys(self.policies)]
        return groups

    def _metrics(self, col, n, win_type, dealer, mask, winner, scores):
        """Every interval's rows as per-hand integer totals: ``([(row key, y, rows)], pairs)``.

        ``y: int64[n]`` is the sum of the hand's rows' values (a 0/1 hit for
        a rate, the score for a mean) and ``rows: int64[n]`` how many of the
        hand's rows (hands, seat-hands, won hands) the number is over; either
        may be a list of such arrays (one per seat of a policy group) whose
        sum is meant (summed per cluster, after the reduction);
        ``pairs``: ``(key a, key b, key of a - b)`` of the differences.  Row
        keys are the summary's ``(section, metric, group)``.
        """
        i64 = np.asarray  # 0/1 as bool arrays: no copy; summed per cluster as int64 (reduceat's dtype)
        one = np.ones(n, np.int64)
        label = [f"seat {s} ({self.policies[s]})" for s in range(N_SEATS)]
        out, pairs = [], []
        add = lambda section, metric, group, y, rows: out.append(((section, metric, group), y, rows))  # noqa: E731
        sc = [scores[:, s] for s in range(N_SEATS)]
        won = [(mask >> s) & 1 for s in range(N_SEATS)]
        dl = [i64(dealer == s) for s in range(N_SEATS)]
        nd = [1 - d for d in dl]
        add("outcome", "draw rate", "all", i64(win_type == -1), one)
        for s in range(N_SEATS):
            add("outcome", "win rate", label[s], won[s], one)
        add("outcome", "win rate", "dealer", sum(w * d for w, d in zip(won, dl)), sum(dl))
        add("outcome", "win rate", "non-dealer", sum(w * d for w, d in zip(won, nd)), sum(nd))
        for s in range(N_SEATS):
            add("outcome", "dealer share", label[s], dl[s], one)
        wonh = i64(win_type >= 0)
        for code, name in WIN_TYPE_NAMES.items():
            add("win type", "share of wins", name, i64(win_type == code), wonh)
        gain = scores[np.arange(n), np.clip(winner, 0, N_SEATS - 1)] * wonh
        add("points", "winner's gain", "mean", gain, wonh)
        for s in range(N_SEATS):
            add("points", "score", label[s], sc[s], one)
        add("points", "score", "dealer", sum(x * d for x, d in zip(sc, dl)), sum(dl))
        add("points", "score", "non-dealer", sum(x * d for x, d in zip(sc, nd)), sum(nd))
        groups = self._groups()
        if self.has_piao:
            from caishen.sim.rules.codes import FLAG_JOKER_LINK, WIN_SELF_DRAW

            paid = (win_type == WIN_SELF_DRAW) & ((col("hand_flags").astype(np.int64) & FLAG_JOKER_LINK) != 0)
            piao = [col(f"piao_{s}").astype(np.int64) for s in range(N_SEATS)]
            att = [i64(p >= 1) for p in piao]
            nop = [i64(p == 0) for p in piao]
            succ = [a * i64(paid & (winner == s)) for s, a in enumerate(att)]
            fail = [a * i64(col(f"failed_piao_{s}") == 1) for s, a in enumerate(att)]
            neither = [a * i64(~(paid & (winner == s)) & (col(f"failed_piao_{s}") != 1)) for s, a in enumerate(att)]
            cmp_ = [x * i64(col(f"piao_chance_{s}") >= 1) for s, x in enumerate(nop)] if self.has_chance else nop
            att_sc = [x * y for x, y in zip(att, sc)]
            cmp_sc = [x * y for x, y in zip(cmp_, sc)]
            nop_sc = [x * y for x, y in zip(nop, sc)] if self.has_chance else None
            for gname, seats in groups:
                tot = lambda xs: [xs[s] for s in seats]  # noqa: E731  (added per cluster, cheaper)
                size = len(seats) * one
                if gname != "all":
                    add("飘财", "score per seat-hand", gname, tot(sc), size)
                a = tot(att)
                add("飘财", "attempt rate", gname, a, size)
                add("飘财", "success rate", gname, tot(succ), a)
                add("飘财", "failed rate", gname, tot(fail), a)
                add("飘财", "neither rate", gname, tot(neither), a)
                ka = (OBSERVATIONAL, "score per 飘 seat-hand", gname)
                kb = (OBSERVATIONAL, "score per comparable non-飘 seat-hand", gname)
                add(*ka, tot(att_sc), a)
                add(*kb, tot(cmp_sc), tot(cmp_))
                pairs.append((ka, kb, (OBSERVATIONAL, "飘 minus comparable", gname)))
                if self.has_chance:
                    add(OBSERVATIONAL, "score per non-飘 seat-hand", gname, tot(nop_sc), tot(nop))
        if self.has_scored_wins:
            PATTERN_NAMES = pattern_names()

            P = [col(f"P_{s}").astype(np.int64) for s in range(N_SEATS)]
            G = [col(f"G_{s}").astype(np.int64) for s in range(N_SEATS)]
            nw = sum(won)
            add("架听 points", "P per win", "all winners", sum(w * x for w, x in zip(won, P)), nw)
            add("架听 points", "G per win", "all winners", sum(w * x for w, x in zip(won, G)), nw)
            add("架听 points", "P + G per win", "all winners", sum(w * (x + y) for w, x, y in zip(won, P, G)), nw)
            add("架听 points", "several winners (一炮多响)", "share of wins", i64(nw >= 2) * wonh, wonh)
            if self.has_streak:
                add("架听 points", "dealer's streak k", "all hands", col("streak").astype(np.int64), one)
            for pid in self.patterns:
                add("patterns", f"{pid} {PATTERN_NAMES[pid]}", "share of wins", i64(col(pid) > 0) * wonh, wonh)
            decl = [np.clip(col(f"decl_{s}").astype(np.int64), -128, 127) for s in range(N_SEATS)]
            offer = [i64(col(f"hard_offer_{s}") != 0) for s in range(N_SEATS)]
            passed = [i64(col(f"passed_win_{s}") > 0) for s in range(N_SEATS)]
            by_code = {}
            for code in (1, 2, 0):
                d = [i64(x == code) for x in decl]
                by_code[code] = (d, [x * w for x, w in zip(d, won)], [x * y for x, y in zip(d, sc)])
            for gname, seats in groups:
                tot = lambda xs: [xs[s] for s in seats]  # noqa: E731  (added per cluster, cheaper)
                size = len(seats) * one
                for code, what in ((1, "架听"), (2, "硬子"), (0, "no declaration")):
                    d, d_won, d_sc = by_code[code]
                    nd_ = tot(d)
                    if code == 1:
                        add("declarations", "架听 rate", gname, nd_, size)
                    elif code == 2:
                        no = tot(offer)
                        add("declarations", "硬子 offer rate", gname, no, size)
                        add("declarations", "硬子 taken of offers", gname, nd_, no)
                    add("declarations", f"win rate: {what}", gname, tot(d_won), nd_)
                    add("declarations", f"score: {what}", gname, tot(d_sc), nd_)
                add("declarations", "passed a win (漏胡)", gname, tot(passed), size)
        self._pairs = {key: (a, b) for a, b, key in pairs}
        return out, pairs

    def merge(self, other: "SummaryTally") -> "SummaryTally":
        """Add the counts of ``other`` (a tally of the same columns, policies and unit over the records that
        follow this tally's); returns self.

        With a unit, this tally's last cluster is closed and ``other``'s
        first row must begin a cluster (a ``match_hand`` 0 row): a
        ``ValueError`` says so otherwise, never a match silently cut in two.
        """
        if (other.unit, other.policies) != (self.unit, self.policies):
            raise ValueError(f"cannot merge a tally of unit {other.unit!r}, policies {other.policies!r} into one of "
                             f"unit {self.unit!r}, policies {self.policies!r}")
        if self.unit is not None and other.n_hands:
            if other._begins_mid and self.n_hands:
                raise ValueError("the merged tally begins inside a match (its first row has match_hand > 0): "
                                 "tallies merge only at cluster boundaries")
            mom, cross, g = self._cluster_sums()
            for key, m in other.mom.items():
                mom.setdefault(key, type(m)()).merge(m)
            for key, c in other.cross.items():
                cross.setdefault(key, type(c)()).merge(c)
            self.mom, self.cross, self.n_clusters = mom, cross, g + other.n_clusters
            self._open, self._prev, self._pairs = other._open, other._prev, dict(other._pairs)
            if not self.n_hands:
                self._begins_mid = other._begins_mid
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

    def summary(self, policies=None) -> tuple[pd.DataFrame, dict]:
        """``(rows, definitions)`` as :func:`summarize` returns them.

        ``policies``: None (the tally's) or the same four names the tally was
        made with (its rows by policy are grouped by them); else ``ValueError``.
        """
        policies = self.policies if policies is None else tuple(policies)
        if len(policies) != N_SEATS:
            raise ValueError(f"policies {policies!r}: need one per seat")
        if policies != self.policies:
            raise ValueError(f"policies {policies!r}: the tally was made for {self.policies!r} (its rows by policy "
                             "are grouped by them)")
        if self.n_hands == 0:
            raise ValueError("no hands to summarize")
        clusters = None
        if self.unit is not None:
            mom, cross, n_clusters = self._cluster_sums()
            clusters = (mom, cross)
        r = _Rows(clusters)
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

        defs = {"intervals": INTERVALS_TEXT[self.unit], "dealer share": DEALER_SHARE_TEXT}
        r.add("hands", "hands", "all", H, H)
        if self.unit is not None:
            what = UNIT_LABELS["wall" if self.by_wall else self.unit]
            r.add("hands", "independent units", what, n_clusters, n_clusters)
            defs["independent units"] = UNITS_TEXT.format(what=what, why=UNITS_WHY[what])
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
            o = _Rows(clusters)  # the selection-biased comparison: its own section, after every headline row
            for gname, g in groups:
                if gname != "all":  # the controlled comparison: policies on the same deals (all seat-hands)
                    r.mean("飘财", "score per seat-hand", gname, dist(g))
                att = g & att_all
                A = int(w[att].sum())
                r.rate("飘财", "attempt rate", gname, A, int(w[g].sum()))
                r.rate("飘财", "success rate", gname, int(w[att & sh["success"].to_numpy()].sum()), A)
                r.rate("飘财", "failed rate", gname, int(w[att & sh["failed"].to_numpy()].sum()), A)
                r.rate("飘财", "neither rate", gname,
                       int(w[att & ~sh["success"].to_numpy() & ~sh["failed"].to_numpy()].sum()), A)
                o.mean(OBSERVATIONAL, "score per 飘 seat-hand", gname, dist(att))
                cmp_ = g & comparable
                o.mean(OBSERVATIONAL, "score per comparable non-飘 seat-hand", gname, dist(cmp_))
                o.diff(OBSERVATIONAL, "飘 minus comparable", gname, A + int(w[cmp_].sum()), dist(att), dist(cmp_),
                       (OBSERVATIONAL, "score per 飘 seat-hand", gname),
                       (OBSERVATIONAL, "score per comparable non-飘 seat-hand", gname))
                if self.has_chance:
                    o.mean(OBSERVATIONAL, "score per non-飘 seat-hand", gname, dist(g & no_piao))
            defs[PIAO_RATES_KEY] = PIAO_RATE_DEFINITIONS
            defs["observational"] = OBSERVATIONAL_NOTE
        else:
            o = None
        if self.has_scored_wins:
            _scored_win_rows(self, r, sh, groups, W, hn, mask)
        if o is not None:
            r.rows += o.rows
        return r.frame(), defs


def _scored_win_rows(tally: "SummaryTally", r: _Rows, sh: pd.DataFrame, groups, W: int, hn, mask) -> None:
    """The rows of a rule set scored after the hand (J-9 records), from ``tally``'s counts: P and G per win, several winners, pattern
    frequencies (share of won hands whose first winner has the pattern),
    架听 / 硬子 declarations and what they earned, passed wins, the streak."""
    PATTERN_NAMES = pattern_names()

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
