"""Scoring balance of both rule sets: what each hand type, pattern and seat earns, with intervals.

Every function takes per-hand records (``caishen.sim.selfplay.records`` columns: a run read
with ``caishen.sim.selfplay.stream.read_run``, or the columns of
``caishen.sim.selfplay.batch.play_batch``) and returns a tidy ``pandas.DataFrame``.

Each table is a streaming reduction (:class:`KaihuaHandTypes`,
:class:`KaihuaBalance`, :class:`JiatingPatterns`, :class:`JiatingBalance`):
``add`` a batch of whole matches, ``merge`` the tally of other matches,
``frame`` the table.  A batch is reduced to per-match totals, and those to
the cluster sums of every row's interval (exact integer
:class:`~caishen.sim.analysis.intervals.ClusterMoments` and
:class:`~caishen.sim.analysis.intervals.ClusterCross` for rates, means and the dealer's
edge; :class:`~caishen.sim.analysis.intervals.ClusterRatioSums` for shares of points),
whose size does not depend on the number of matches.  There is one
implementation and two entry points giving the same numbers: the functions
below apply the reduction to a DataFrame as one batch, and
:func:`run_tables` streams a run directory's verified chunks one batch of
whole matches at a time (:func:`match_batches`: ``pyarrow`` record batches
of the columns the tables read, a match cut by a batch carried on), so that
``caishen report`` covers every hand of a run in bounded memory
(``tests/test_balance.py`` checks the streamed tables against these
functions on the concatenated rows).
Intervals are 95% and over **independent units**: the *match* (hands
``match_hand = 0, 1, ...`` of one dealer rotation; one hand when matches
are one hand long), the cluster of :mod:`caishen.sim.analysis.intervals`.  A "won hand" is a
hand with a winner; "points" are what the winners received (the sum of the
positive score changes of the hand, which is also what the losers paid).

Kaihua (``shared/rules/kaihua.md``)
-----------------------------------
- :func:`kaihua_hand_types`: for each hand type of the (first) winner --
  平胡 (K-6.1), 爆头 (K-6.2), the 七对 family (K-6.3: 七对子, 清七对, 七子爆头,
  豪华, 去不去), 清一色 (K-6.4), chain links (K-6.5: any, kong links, 飘
  links), and each exponent ``E`` -- its frequency (share of won hands),
  its mean points when it fires, and its share of all points paid.  Types
  overlap (a 爆头 hand can be 清一色), so shares add up to more than 1.
- :func:`kaihua_balance`: the dealer's edge (dealer minus non-dealer mean
  score per seat-hand), seat balance (mean score by seat), how often a
  discard pays three shares (K-8.3: share of wins that are discard or
  robbed-kong wins, and their share of points), 飘 attempts and failed 飘.
- how each rule option moves them: :func:`compare_options` runs the same
  walls under each option setting (``caishen.sim.selfplay.batch.play_batch`` with one
  seed) and stacks the tables with an ``option`` column.

Jiating (``shared/rules/jiating.md``)
-------------------------------------
- :func:`jiating_patterns`: for each pattern P01..P50 its frequency (share
  of winning seat-hands that scored it, every winner of a 一炮多响 hand
  counted: ``patterns_s``), its mean points when it fires (after doubling
  and exclusions, J-6.3, J-7), and its share of all points paid: each
  winning seat's received points are attributed to its patterns pro rata to
  their points (a pattern worth half of ``P + G`` is credited half of what
  the winner received; the rest goes to ``G``, the kong points).  A
  log-log plot of frequency against points (:mod:`caishen.sim.analysis.report`) shows the
  patterns priced out of line with their rarity.
- :func:`jiating_balance`: how often the caps bind (J-6.2: a payment whose
  uncapped ``dealer_factor (P + G)`` or ``P + G`` exceeds ``dealer_cap`` /
  ``cap``), the dealer's edge and streak (J-2.4: hands by streak ``k``, the
  dealer's mean score at each ``k``), several winners (J-3.4).
- the value of 架听 and 硬子 (J-4.1, J-4.2) on duplicate deals, declare
  against not on the same wall continuation: :func:`declaration_value`
  (the counterfactual rollouts of :mod:`caishen.sim.analysis.piao_study`, decisions
  ``jiating`` and ``hard``).
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from caishen.sim.analysis.balance_tally import (  # noqa: F401  (match_ids, match_batches, feed_run: public here too)
    BALANCE_COLUMNS,
    N_SEATS,
    _Batch,
    _col,
    _Rows,
    _scores,
    _Sums,
    _Table,
    feed_run,
    match_batches,
    match_ids,
)


def _seat_hands(dealer: np.ndarray, sc: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """``(is_dealer: bool[4n], score: int64[4n])`` of the seat-hands, seat by seat (the order of ``_Batch.inv4``)."""
    return np.concatenate([dealer == s for s in range(N_SEATS)]), sc.T.ravel()


def _dealer_rows(r: _Rows, s: _Sums) -> None:
    from caishen.sim.analysis.intervals import ClusterCross, ClusterMoments

    a, b = s.get("dealer", ClusterMoments), s.get("non-dealer", ClusterMoments)
    r.mean("dealer", "score per seat-hand", "dealer", a)
    r.mean("dealer", "score per seat-hand", "non-dealer", b)
    r.add("dealer", "dealer edge (dealer minus non-dealer)", "all", s.hands, *s.get("edge", ClusterCross).ci(a, b))


def _add_dealer(s: _Sums, b: _Batch, dealer, sc) -> None:
    is_dealer, seat_score = _seat_hands(dealer, sc)
    s.mean("dealer", b, seat_score, is_dealer, b.inv4)
    s.mean("non-dealer", b, seat_score, ~is_dealer, b.inv4)
    s.diff("edge", b, seat_score, is_dealer, ~is_dealer, b.inv4)


# ---------------------------------------------------------------------------
# Kaihua
# ---------------------------------------------------------------------------
def _kaihua_types() -> list[tuple[str, object]]:
    from caishen.sim.rules import kaihua as K

    def flag(bit):
        return lambda d: (d["flags"] & bit) != 0

    return [
        ("平胡 pinghu (K-6.1)", flag(K.FLAG_PINGHU)),
        ("爆头 baotou (K-6.2)", flag(K.FLAG_BAOTOU)),
        ("七对 family qidui (K-6.3)", flag(K.FLAG_QIDUI)),
        ("清七对 qidui_pure", flag(K.FLAG_QIDUI_PURE)),
        ("七子爆头 qidui_baotou", flag(K.FLAG_QIDUI_BAOTOU)),
        ("豪华 haohua", flag(K.FLAG_HAOHUA)),
        ("去不去 qubuqu", flag(K.FLAG_QUBUQU)),
        ("清一色 qingyise (K-6.4)", flag(K.FLAG_QINGYISE)),
        ("chain links (K-6.5)", lambda d: d["chain_len"] > 0),
        ("kong links", lambda d: d["chain_kong"] > 0),
        ("飘 links (K-9.1)", lambda d: d["chain_piao"] > 0),
    ]


def _points(sc: np.ndarray) -> np.ndarray:
    """``int64[n]``: what the winners received in each hand (the sum of the positive score changes)."""
    return np.where(sc > 0, sc, 0).sum(axis=1)


class KaihuaHandTypes(_Table):
    """:func:`kaihua_hand_types` as a streaming reduction (K-6): per type and exponent, the cluster sums of its
    frequency, points when it fires and share of points."""

    NEEDS = ("win_type", *(f"score_{s}" for s in range(N_SEATS)), "flags", "chain_len", "chain_kong",
             "chain_piao", "exponent")

    def __init__(self, columns):
        super().__init__(columns)
        self.types = _kaihua_types()

    def _add(self, df, b):
        s = self.sums
        won = _col(df, "win_type") >= 0
        points = _points(_scores(df))
        d = {c: _col(df, c) for c in ("flags", "chain_len", "chain_kong", "chain_piao", "exponent")}
        exps = d["exponent"]
        groups = [(name, f(d)) for name, f in self.types]
        if won.any():
            s.seen.add("won")
            s.top["E"] = max(s.top.get("E", 0), int(exps[won].max()))
        seen = {k[1] for k in s.acc if k[0] == "frequency" and isinstance(k[1], int)}  # known exponents: zeros too
        groups += [(e, exps == e) for e in sorted(seen.union(np.unique(exps[won]).tolist()))]
        zero = np.zeros(b.n, np.int64)
        for key, hit in groups:  # an exponent first seen here starts from the all-zero sums of the batches before
            late = isinstance(key, int)
            h = hit & won
            s.mean(("frequency", key), b, h, won, base=("frequency", "zero") if late else None)
            s.mean(("points", key), b, points, h)
            s.ratio(("share", key), b, np.where(h, points, 0), points, won, base=("share", "zero") if late else None)
        s.mean(("frequency", "zero"), b, zero, won)
        s.ratio(("share", "zero"), b, zero, points, won)

    def frame(self) -> pd.DataFrame:
        from caishen.sim.analysis.intervals import ClusterMoments, ClusterRatioSums

        s = self.sums
        if "won" not in s.seen:
            raise ValueError("no won hand in the records")
        r = _Rows()
        keys = [(name, name) for name, _ in self.types] + [(e, f"E = {e}") for e in range(s.top["E"] + 1)]
        for key, name in keys:
            section = "hand type" if isinstance(key, str) else "exponent"
            f = s.acc.get(("frequency", key)) or s.acc[("frequency", "zero")]
            r.rate(section, "frequency", name, f)
            r.mean(section, "points when it fires", name, s.get(("points", key), ClusterMoments))
            share = s.acc.get(("share", key)) or s.get(("share", "zero"), ClusterRatioSums)
            r.add(section, "share of points", name, f.sy, *share.ci())
        return r.frame()


def kaihua_hand_types(df: pd.DataFrame) -> pd.DataFrame:
    """Hand types and exponents of Kaihua wins: frequency, points when it fires, share of points.

    One row per (type, measure): ``section`` ``"hand type"`` or
    ``"exponent"``; ``metric`` ``"frequency"`` (share of won hands),
    ``"points when it fires"`` (mean points of the hand), ``"share of
    points"`` (its hands' points / all points); intervals over matches.
    :class:`KaihuaHandTypes` applied to ``df`` as one batch (``run_tables``
    streams a run).  Raises ``ValueError`` without won hands.
    """
    return KaihuaHandTypes(df.columns).add(df).frame()


class KaihuaBalance(_Table):
    """:func:`kaihua_balance` as a streaming reduction (dealer edge, seats, K-8.3 three shares, K-9 飘)."""

    NEEDS = ("dealer", "win_type", "winners_mask", *(f"score_{s}" for s in range(N_SEATS)))
    OPTIONAL = tuple(f"{c}_{s}" for c in ("piao", "failed_piao") for s in range(N_SEATS))

    def __init__(self, columns):
        super().__init__(columns)
        self.has_piao = all(c in self.available for c in self.OPTIONAL)

    def _add(self, df, b):
        s = self.sums
        sc = _scores(df)
        dealer = _col(df, "dealer")
        wt = _col(df, "win_type")
        _add_dealer(s, b, dealer, sc)
        mask = _col(df, "winners_mask")
        s.mean("win rate", b, (mask >> dealer) & 1)
        for seat in range(N_SEATS):
            s.mean(("score", seat), b, sc[:, seat])
            s.mean(("dealer share", seat), b, dealer == seat)
        won = wt >= 0
        points = _points(sc)
        s.mean("draw", b, ~won)
        disc = (wt == 1) | (wt == 2)
        s.mean("discard wins", b, disc, won)
        s.ratio("discard points", b, np.where(disc, points, 0), points, won)
        if self.has_piao:
            piao = np.concatenate([_col(df, f"piao_{k}") > 0 for k in range(N_SEATS)])
            failed = np.concatenate([_col(df, f"failed_piao_{k}") > 0 for k in range(N_SEATS)])
            s.mean("piao", b, piao, None, b.inv4)
            s.mean("failed piao", b, failed, piao, b.inv4)
            if piao.any():
                s.seen.add("piao")

    def frame(self) -> pd.DataFrame:
        from caishen.sim.analysis.intervals import ClusterMoments, ClusterRatioSums

        s = self.sums
        if s.hands == 0:
            raise ValueError("no hands in the records")
        m = lambda key: s.get(key, ClusterMoments)  # noqa: E731
        r = _Rows()
        _dealer_rows(r, s)
        r.rate("dealer", "win rate", "dealer", m("win rate"))
        for seat in range(N_SEATS):
            r.mean("seats", "score per hand", f"seat {seat}", m(("score", seat)))
            r.rate("seats", "dealer share", f"seat {seat}", m(("dealer share", seat)))
        r.rate("outcome", "draw rate (流局)", "all", m("draw"))
        wins = m("discard wins")
        r.rate("three shares (K-8.3)", "discard or robbed-kong wins", "share of wins", wins)
        r.add("three shares (K-8.3)", "points paid by a discarder", "share of points", wins.sn,
              *s.get("discard points", ClusterRatioSums).ci())
        if self.has_piao:
            r.rate("飘财 (K-9)", "attempt rate", "seat-hands", m("piao"))
            if "piao" in s.seen:
                r.rate("飘财 (K-9)", "failed rate (K-9.3)", "of attempts", m("failed piao"))
        return r.frame()


def kaihua_balance(df: pd.DataFrame) -> pd.DataFrame:
    """Dealer edge, seat balance, three-share discards and 飘 rates of Kaihua records (intervals over matches).

    :class:`KaihuaBalance` applied to ``df`` as one batch.  Raises ``ValueError`` without hands.
    """
    return KaihuaBalance(df.columns).add(df).frame()


def compare_options(settings: dict, hands: int, seed: int = 0, rules: str = "kaihua", policies="greedy",
                    tables=None) -> pd.DataFrame:
    """The balance tables under each option setting, on the same walls, stacked with an ``option`` column.

    ``settings``: label -> option dict (``{"default": {}, "factor 1":
    {"failed_piao_factor": 1}}``); every setting plays ``hands`` hands from
    the same ``seed`` (the same walls: the deterministic bots draw nothing
    from the stream the walls come from).  ``tables``: the functions to
    apply (default: the rule set's two tables).
    """
    from caishen.sim.selfplay.batch import play_batch

    if not settings:
        raise ValueError("no option settings to compare")
    if tables is None:
        tables = (kaihua_hand_types, kaihua_balance) if rules == "kaihua" else (jiating_patterns, jiating_balance)
    out = []
    for label, opts in settings.items():
        df = pd.DataFrame(play_batch(hands, seed, rules=rules, options=opts, policies=policies))
        for f in tables:
            t = f(df)
            t.insert(0, "option", label)
            out.append(t)
    return pd.concat(out, ignore_index=True)


# ---------------------------------------------------------------------------
# Jiating
# ---------------------------------------------------------------------------
def _pattern_points(texts, index: dict[str, int]) -> np.ndarray:
    """``int64[len(texts), len(index)]``: the points of each pattern in ``"P01:2,P03:2"`` texts (J-8); each
    distinct text is parsed once (many wins score the same patterns)."""
    codes, distinct = pd.factorize(np.asarray(texts, dtype=object), use_na_sentinel=False)
    out = np.zeros((len(distinct), len(index)), np.int64)
    for i, text in enumerate(distinct):
        if isinstance(text, str) and text:  # "" (and a missing text) for a seat without patterns
            for part in text.split(","):
                pid, _, pts = part.partition(":")
                j = index.get(pid)
                if j is not None:
                    out[i, j] = int(pts)
    return out[codes]


class JiatingPatterns(_Table):
    """:func:`jiating_patterns` as a streaming reduction (J-8): per pattern and ``G``, the cluster sums of its
    frequency, points when it fires and share of points over the winning seat-hands."""

    NEEDS = ("winners_mask", *(f"{c}_{s}" for c in ("score", "patterns", "P", "G") for s in range(N_SEATS)))

    def __init__(self, columns):
        from caishen.sim.rules.jiating.tables import PATTERN_NAMES

        super().__init__(columns)
        self.names = dict(PATTERN_NAMES)
        self.index = {pid: j for j, pid in enumerate(self.names)}

    def _add(self, df, b):
        s = self.sums
        sc = _scores(df)
        mask = _col(df, "winners_mask")
        inv, got, P, G, pts = [], [], [], [], []  # pts: the pattern texts, then their points
        for seat in range(N_SEATS):  # every winning seat-hand, seat by seat
            won = ((mask >> seat) & 1).astype(bool)
            if not won.any():
                continue
            inv.append(b.inv[won])
            got.append(sc[won, seat])
            P.append(_col(df, f"P_{seat}")[won])
            G.append(_col(df, f"G_{seat}")[won])
            pts.append(np.asarray(df[f"patterns_{seat}"], dtype=object)[won])
        if not inv:
            return
        s.seen.add("won")
        inv, got, P, G, pts = (np.concatenate(x) for x in (inv, got, P, G, pts))
        pts = _pattern_points(pts, self.index)
        tot = (P + G).astype(np.float64)
        frac_base = np.where(tot > 0, got / np.where(tot > 0, tot, 1), 0.0)
        # every pattern (and G) at once: the wins sorted by match, per-match totals of the [wins, 51] columns
        order = np.argsort(inv, kind="stable")
        seg = np.flatnonzero(np.r_[True, np.diff(inv[order]) != 0])  # the first win of each match holding one
        x = np.column_stack([pts, G])[order]
        fires = (x > 0).astype(np.int64)
        share = x * frac_base[order, None]
        wins = np.add.reduceat(np.ones(len(x), np.int64), seg)
        fires_g, points_g = np.add.reduceat(fires, seg, axis=0), np.add.reduceat(x * fires, seg, axis=0)
        share_g, got_g = np.add.reduceat(share, seg, axis=0), np.add.reduceat(got[order].astype(np.float64), seg)
        share_min, got_min = share.min(axis=0), float(got.min())
        for j, pid in enumerate([*self.index, "G"]):
            s.moments(("frequency", pid), fires_g[:, j], wins)
            s.moments(("points", pid), points_g[:, j], fires_g[:, j])
            s.ratio_totals(("share", pid), share_g[:, j], got_g, share_min[j], got_min)

    def frame(self) -> pd.DataFrame:
        from caishen.sim.analysis.intervals import ClusterMoments, ClusterRatioSums

        s = self.sums
        if "won" not in s.seen:
            raise ValueError("no won hand in the records")
        rows = []
        for pid, name in [*self.names.items(), ("G", "kong points (J-6.1)")]:
            f = s.get(("frequency", pid), ClusterMoments)
            rows.append((pid, name, f.sy, *f.rate_ci(), *s.get(("points", pid), ClusterMoments).ci(),
                         *s.get(("share", pid), ClusterRatioSums).ci()))
        return pd.DataFrame(rows, columns=["pattern", "name", "fires", "frequency", "freq_low", "freq_high", "points",
                                           "points_low", "points_high", "share", "share_low", "share_high"])


def jiating_patterns(df: pd.DataFrame) -> pd.DataFrame:
    """Per pattern P01..P50: frequency, points when it fires, share of all points paid (J-8).

    Columns ``pattern, name, fires, frequency, freq_low, freq_high, points,
    points_low, points_high, share, share_low, share_high`` over the
    winning seat-hands (every winner of a hand); intervals over matches.
    Also a ``G`` row (kong points, J-6.1) for the share not credited to a
    pattern.  :class:`JiatingPatterns` applied to ``df`` as one batch.
    Raises ``ValueError`` without a win.
    """
    return JiatingPatterns(df.columns).add(df).frame()


#: streak buckets of :func:`jiating_balance` (J-2.4): k = 0..4 and k >= 5
_STREAK_TOP = 5


class JiatingBalance(_Table):
    """:func:`jiating_balance` as a streaming reduction (J-6.2 caps, J-2.4 dealer and streak, J-3.4 several
    winners).  ``options``: the run's rule options (the caps and the dealer factor)."""

    NEEDS = ("dealer", "winners_mask", *(f"{c}_{s}" for c in ("score", "P", "G") for s in range(N_SEATS)),
             *(f"pay_{p}_{w}" for p in range(N_SEATS) for w in range(N_SEATS) if p != w))
    OPTIONAL = ("streak",)

    def __init__(self, columns, options=None):
        from caishen.sim.engine import load_rules

        _, self.rules = load_rules("jiating", options)
        super().__init__(columns)
        self.has_streak = "streak" in self.available

    def _add(self, df, b):
        rules, s = self.rules, self.sums
        sc = _scores(df)
        dealer = _col(df, "dealer")
        mask = _col(df, "winners_mask")
        # caps: one payment per (payer, winner); a payment is capped when its uncapped amount exceeds the cap
        pay_y = pay_n = win_y = win_n = 0
        for w in range(N_SEATS):
            won = ((mask >> w) & 1).astype(bool)
            if not won.any():
                continue
            s.seen.add("won")
            pg = _col(df, f"P_{w}") + _col(df, f"G_{w}")
            any_cap = np.zeros(b.n, bool)
            for p in range(N_SEATS):
                if p == w:
                    continue
                paid = won & (_col(df, f"pay_{p}_{w}") > 0)
                with_dealer = (dealer == p) | (dealer == w)
                cap = np.where(with_dealer, -1 if rules.dealer_cap is None else rules.dealer_cap,
                               -1 if rules.cap is None else rules.cap)
                amount = np.where(with_dealer, rules.dealer_factor * pg, pg)
                c = (cap >= 0) & (amount > cap) & paid
                pay_y = pay_y + b.count(c)
                pay_n = pay_n + b.count(paid)
                any_cap |= c
            win_y = win_y + b.count(any_cap)
            win_n = win_n + b.count(won)
        if isinstance(pay_n, np.ndarray):  # a seat won in this batch (the rows of the caps exist once one did)
            s.moments("capped payments", pay_y, pay_n)
            s.moments("capped wins", win_y, win_n)
        _add_dealer(s, b, dealer, sc)
        if self.has_streak:
            k = _col(df, "streak")
            d_score = sc[np.arange(b.n), dealer]
            s.mean("streak", b, k)
            s.top["k"] = max(s.top.get("k", 0), int(k.max()))
            for kk in range(_STREAK_TOP + 1):
                m = (k == kk) if kk < _STREAK_TOP else (k >= _STREAK_TOP)
                s.mean(("hands", kk), b, m)
                s.mean(("dealer's score", kk), b, d_score, m)
        n_win = sum(((mask >> seat) & 1) for seat in range(N_SEATS))
        won = n_win > 0
        s.mean("draw", b, ~won)
        s.mean("several winners", b, n_win >= 2, won)

    def frame(self) -> pd.DataFrame:
        from caishen.sim.analysis.intervals import ClusterMoments

        s = self.sums
        if s.hands == 0:
            raise ValueError("no hands in the records")
        m = lambda key: s.get(key, ClusterMoments)  # noqa: E731
        r = _Rows()
        if "won" in s.seen:
            r.rate("caps (J-6.2)", "capped payments", "share of payments", m("capped payments"))
            r.rate("caps (J-6.2)", "wins with a capped payment", "share of winning seat-hands", m("capped wins"))
        _dealer_rows(r, s)
        if self.has_streak:
            r.mean("streak (J-2.4)", "streak k", "all hands", m("streak"))
            for kk in range(min(s.top["k"], _STREAK_TOP) + 1):
                label = f"k = {kk}" if kk < _STREAK_TOP else f"k >= {_STREAK_TOP}"
                r.rate("streak (J-2.4)", "hands", label, m(("hands", kk)))
                if m(("dealer's score", kk)).sn:
                    r.mean("streak (J-2.4)", "dealer's score", label, m(("dealer's score", kk)))
        r.rate("outcome", "draw rate (流局)", "all", m("draw"))
        if m("several winners").sn:
            r.rate("outcome", "several winners (J-3.4)", "share of won hands", m("several winners"))
        return r.frame()


def jiating_balance(df: pd.DataFrame, options=None) -> pd.DataFrame:
    """Caps binding (J-6.2), dealer edge and streak (J-2.4), several winners (J-3.4), by the records.

    ``options``: the run's rule options (for the caps and the dealer
    factor; default the spec's).  Intervals over matches.
    :class:`JiatingBalance` applied to ``df`` as one batch.  Raises
    ``ValueError`` without hands.
    """
    return JiatingBalance(df.columns, options).add(df).frame()


# ---------------------------------------------------------------------------
# a run's tables, streamed
# ---------------------------------------------------------------------------
def run_tables(run_dir, files=None, options=None, batch_size: int | None = None,
               extra=()) -> dict[str, pd.DataFrame]:
    """The balance tables of a run directory over all its verified hands, streamed (memory independent of the
    number of hands).

    ``files``: the run's verified chunk files (default
    :func:`caishen.sim.selfplay.stream.verified_chunk_files`); ``options``: the run's
    rule options (default its ``run.json``'s); ``extra``: more streaming
    tables fed the same batches (``columns()``, ``add(df)``: the report's
    histogram).  Returns ``{"hand_types",
    "balance"}`` for Kaihua, ``{"patterns", "balance"}`` for Jiating, ``{}``
    for another rule set: the same numbers as the in-memory functions on
    the concatenated rows (up to float rounding).  Raises ``ValueError`` for
    no verified chunk, or as those functions do.
    """
    from caishen.sim.selfplay import rundir, runner, stream

    meta = rundir.read_run_json(run_dir)
    if files is None:
        files, _ = stream.verified_chunk_files(run_dir, meta)
    cols = stream.column_names(files)
    rules = meta.get("rules")
    if options is None:
        options = meta.get("options")
    if rules == "kaihua":
        tables = {"hand_types": KaihuaHandTypes(cols), "balance": KaihuaBalance(cols)}
    elif rules == "jiating":
        tables = {"patterns": JiatingPatterns(cols), "balance": JiatingBalance(cols, options)}
    else:
        tables = {}
    feed_run(files, [*tables.values(), *extra], batch_size)
    return {k: t.frame() for k, t in tables.items()}


def declaration_value(hands: int = 2_000, seed: int = 0, rollouts: int = 4, policies="greedy", options=None,
                      workers: int | None = 1, progress: bool = False, hard_hands: int | None = None) -> pd.DataFrame:
    """The value of 架听 (J-4.1) and 硬子 (J-4.2): declare minus not, on the same wall continuation.

    Runs :func:`caishen.sim.analysis.piao_study.run_study` with the decisions ``jiating`` and
    ``hard`` (every offered declaration is studied: both branches, ``R``
    rollouts each) and returns ``decision, points, hands, diff, ci_low,
    ci_high, alt_won, base_won`` (diff = the declaring seat's points,
    declare minus not; intervals over hands).  The real hands never declare
    (``explore=0``), so a seat that passed on 架听 is asked again at its next
    single wait: the rows answer "declare now, or never in this hand".
    ``hard_hands``: hands for the 硬子 study (default ``40 * hands``: 硬子
    is offered in about 0.1% of hands, and its points cost little, since
    only the rollouts are scored in Python, J-6).
    """
    from caishen.sim.analysis.piao_study import estimate, run_study

    rows = []
    for decision in ("jiating", "hard"):
        n = hands if decision == "jiating" else (hard_hands if hard_hands is not None else 40 * hands)
        pts = run_study(n, seed, rollouts, decision, policies, options, explore=0.0, workers=workers,
                        progress=progress)
        if len(pts) == 0:
            rows.append((decision, 0, 0, *(float("nan"),) * 5))
            continue
        e = estimate(pts, by=()).iloc[0]
        rows.append((decision, int(e["points"]), int(e["hands"]), e["diff"], e["ci_low"], e["ci_high"],
                     e["alt_won"], e["base_won"]))
    return pd.DataFrame(rows, columns=["decision", "points", "hands", "diff", "ci_low", "ci_high", "alt_won",
                                       "base_won"])
