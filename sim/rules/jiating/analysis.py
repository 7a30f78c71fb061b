"""Jiating's own analysis: its balance tables, report figure, study metrics and studied decisions (J-2 .. J-8).

The generic tools of :mod:`caishen.sim.analysis` reach this module through the
rule set's ``analysis`` hook (:data:`ANALYSIS`, a
:class:`caishen.sim.rules.base.Analysis`); it sits in the analysis layer
(``tests/test_layers.py``) although it lives in the rule set's folder, and
nothing below that layer imports it.

- :func:`patterns` (:class:`Patterns`): for each pattern P01..P50 its
  frequency (share of winning seat-hands that scored it, every winner of a
  一炮多响 hand counted: ``patterns_s``), its mean points when it fires
  (after doubling and exclusions, J-6.3, J-7), and its share of all points
  paid: each winning seat's received points are attributed to its patterns
  pro rata to their points (a pattern worth half of ``P + G`` is credited
  half of what the winner received; the rest goes to ``G``, the kong
  points).  A log-log plot of frequency against points
  (:func:`pattern_figure`, in the report) shows the patterns priced out of
  line with their rarity.
- :func:`balance` (:class:`Balance`): how often the caps bind (J-6.2: a
  payment whose uncapped ``dealer_factor (P + G)`` or ``P + G`` exceeds
  ``dealer_cap`` / ``cap``), the dealer's edge and streak (J-2.4: hands by
  streak ``k``, the dealer's mean score at each ``k``), several winners
  (J-3.4).
- the value of 架听 and 硬子 (J-4.1, J-4.2) on duplicate deals, declare
  against not on the same wall continuation: :func:`declaration_value`
  (the counterfactual rollouts of :mod:`caishen.sim.analysis.piao_study`,
  its decisions ``jiating`` and ``hard``).
- the sweep metrics ``jiating`` and ``hard`` (the hero declared 架听 / 硬子)
  and the summary's pattern names (:data:`caishen.sim.rules.jiating.tables.PATTERN_NAMES`).
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from caishen.sim.analysis.balance import _add_dealer, _dealer_rows
from caishen.sim.analysis.balance_tally import N_SEATS, _col, _Rows, _scores, _Table
from caishen.sim.rules.base import Analysis
from caishen.sim.rules.jiating.tables import PATTERN_NAMES


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


class Patterns(_Table):
    """:func:`patterns` as a streaming reduction (J-8): per pattern and ``G``, the cluster sums of its
    frequency, points when it fires and share of points over the winning seat-hands."""

    NEEDS = ("winners_mask", *(f"{c}_{s}" for c in ("score", "patterns", "P", "G") for s in range(N_SEATS)))

    def __init__(self, columns):
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


def patterns(df: pd.DataFrame) -> pd.DataFrame:
    """Per pattern P01..P50: frequency, points when it fires, share of all points paid (J-8).

    Columns ``pattern, name, fires, frequency, freq_low, freq_high, points,
    points_low, points_high, share, share_low, share_high`` over the
    winning seat-hands (every winner of a hand); intervals over matches.
    Also a ``G`` row (kong points, J-6.1) for the share not credited to a
    pattern.  :class:`Patterns` applied to ``df`` as one batch.
    Raises ``ValueError`` without a win.
    """
    return Patterns(df.columns).add(df).frame()


#: streak buckets of :func:`balance` (J-2.4): k = 0..4 and k >= 5
_STREAK_TOP = 5


class Balance(_Table):
    """:func:`balance` as a streaming reduction (J-6.2 caps, J-2.4 dealer and streak, J-3.4 several
    winners).  ``options``: the run's rule options (the caps and the dealer factor)."""

    NEEDS = ("dealer", "winners_mask", *(f"{c}_{s}" for c in ("score", "P", "G") for s in range(N_SEATS)),
             *(f"pay_{p}_{w}" for p in range(N_SEATS) for w in range(N_SEATS) if p != w))
    OPTIONAL = ("streak",)

    def __init__(self, columns, options=None):
        from caishen.sim.rules.jiating import RULESET

        self.rules = RULESET.options.from_dict(options)
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


def balance(df: pd.DataFrame, options=None) -> pd.DataFrame:
    """Caps binding (J-6.2), dealer edge and streak (J-2.4), several winners (J-3.4), by the records.

    ``options``: the run's rule options (for the caps and the dealer
    factor; default the spec's).  Intervals over matches.
    :class:`Balance` applied to ``df`` as one batch.  Raises
    ``ValueError`` without hands.
    """
    return Balance(df.columns, options).add(df).frame()


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
    from caishen.sim.selfplay.runner import Execution

    rows = []
    for decision in ("jiating", "hard"):
        n = hands if decision == "jiating" else (hard_hands if hard_hands is not None else 40 * hands)
        pts = run_study(n, seed, rollouts, decision, policies, options, explore=0.0,
                        execution=Execution(workers, progress=progress))
        if len(pts) == 0:
            rows.append((decision, 0, 0, *(float("nan"),) * 5))
            continue
        e = estimate(pts, by=()).iloc[0]
        rows.append((decision, int(e["points"]), int(e["hands"]), e["diff"], e["ci_low"], e["ci_high"],
                     e["alt_won"], e["base_won"]))
    return pd.DataFrame(rows, columns=["decision", "points", "hands", "diff", "ci_low", "ci_high", "alt_won",
                                       "base_won"])


def _label_groups(ids, x, y, dx: float = 0.12, dy: float = 0.06) -> list[tuple[tuple[float, float], list[str]]]:
    """The pattern IDs of a log-log scatter grouped by spot: points closer than ``dx`` decades in frequency
    and ``dy`` decades in points (about one label's width and height at the figure's scale), directly or
    through other points of the group, share one label ``"P04 P05"``, drawn at the group's leftmost point;
    groups in frequency order, IDs in order (:func:`_place_labels` then keeps the labels apart)."""
    pts = sorted(zip(np.log10(x), np.log10(y), map(str, ids), x, y))
    parent = list(range(len(pts)))

    def root(i):
        while parent[i] != i:
            i = parent[i]
        return i

    for i, (xi, yi, *_) in enumerate(pts):
        for j in range(i + 1, len(pts)):
            if pts[j][0] - xi >= dx:
                break
            if abs(pts[j][1] - yi) < dy:
                parent[root(j)] = root(i)
    groups: dict[int, list] = {}
    for i, (_, _, pid, xi, yi) in enumerate(pts):
        groups.setdefault(root(i), [(xi, yi), []])[1].append(pid)
    return [(at, sorted(names)) for at, names in groups.values()]


#: offsets (points) tried for a label, in turn, until it overlaps no label placed before it
_LABEL_OFFSETS = ((3, 2), (3, -9), (3, 11), (3, -18), (3, 20), (-4, 2), (3, -27), (3, 29))


def _place_labels(fig, labels) -> None:
    """Move each annotation of ``labels`` (in order) to the first of :data:`_LABEL_OFFSETS` where its box
    (as matplotlib draws it) overlaps no label before it; one that fits nowhere keeps the first offset."""
    fig.canvas.draw()
    renderer = fig.canvas.get_renderer()
    placed = []
    for ann in labels:
        for off in _LABEL_OFFSETS:
            ann.xyann = off
            box = ann.get_window_extent(renderer)
            if not any(box.overlaps(b) for b in placed):
                break
        else:
            ann.xyann = _LABEL_OFFSETS[0]
            box = ann.get_window_extent(renderer)
        placed.append(box)


def never_fired(pat: pd.DataFrame) -> list[str]:
    """The patterns (``"P13 name"``) that fired in no hand of the table (left out of the figure)."""
    t = pat[(pat["fires"] == 0) & (pat["pattern"] != "G")]
    return [f"{p} {PATTERN_NAMES.get(p, '')}".strip() for p in t["pattern"]]


def pattern_figure(plt, pat: pd.DataFrame):
    """Log-log scatter of pattern frequency against points when it fires, labelled by ID (J-8)."""
    t = pat[(pat["fires"] > 0) & (pat["pattern"] != "G")]
    fig, ax = plt.subplots(figsize=(8, 6))
    x = t["frequency"].to_numpy()
    y = t["points"].to_numpy()
    xerr = np.vstack([x - t["freq_low"].to_numpy(), t["freq_high"].to_numpy() - x])
    ax.errorbar(x, y, xerr=np.where(np.isfinite(xerr), xerr, 0), fmt="o", ms=4, color="#4c72b0", ecolor="#aaa")
    labels = [ax.annotate(" ".join(ids), (xi, yi), fontsize=7, xytext=(3, 2), textcoords="offset points")
              for (xi, yi), ids in _label_groups(t["pattern"], x, y)]  # one label per spot
    if len(t) >= 2:
        c = float(np.median(x * y))
        xs = np.geomspace(max(x.min() / 2, 1e-7), min(1.0, x.max() * 2), 50)
        ax.plot(xs, c / xs, "--", color="#c44", lw=1, label="points x frequency = median")
        ax.legend(fontsize=8)
    ax.set_xscale("log")
    ax.set_yscale("log")
    ax.set_xlabel("frequency (share of winning seat-hands)")
    ax.set_ylabel("points when it fires")
    ax.set_title("Patterns P01-P50 (J-8): frequency against points")
    _place_labels(fig, labels)  # after the scales: no label drawn over another
    return fig


class JiatingAnalysis(Analysis):
    """The hooks of :class:`caishen.sim.rules.base.Analysis` for Jiating (module docstring)."""

    study_metrics = ("jiating", "hard")
    study_units = {"jiating": "share of walls the hero declared 架听 (J-4.1)",
                   "hard": "share of walls the hero declared 硬子 (J-4.2)"}
    study_stems = ("decl",)
    pattern_names = PATTERN_NAMES
    glossary = {"架听": "jiating (declaring ready, J-4.1)", "硬子": "yingzi (the hard declaration, J-4.2)"}

    @property
    def decisions(self) -> dict[str, int]:
        from caishen.sim.analysis.piao_study import DECISION_DECLARE, DECISION_HARD

        return {"jiating": DECISION_DECLARE, "hard": DECISION_HARD}

    def balance_tables(self, columns, options=None) -> dict:
        return {"patterns": Patterns(columns), "balance": Balance(columns, options)}

    def table_functions(self) -> tuple:
        return patterns, balance

    def report(self, page, plt, tables: dict) -> None:
        pat = tables["patterns"]
        page.figure(pattern_figure(plt, pat), "patterns", "Each pattern's frequency (share of winning seat-hands) "
                    "against its points when it fires, log-log; the line is 'points proportional to "
                    "1/frequency' through the median pattern: patterns far above it pay more than their "
                    "rarity, far below it less.  Patterns at the same spot share one label.")
        silent = never_fired(pat)
        if silent:
            page.text(f"Never fired in these hands, so not in the figure ({len(silent)} of the patterns): "
                      + ", ".join(silent) + ".")
        page.heading("Patterns")
        page.table(pat)
        page.heading("Balance")
        page.table(tables["balance"])

    def study_values(self, df: pd.DataFrame, idx: np.ndarray, hero: np.ndarray) -> dict:
        decl = np.stack([df[f"decl_{s}"].to_numpy(np.int64) for s in range(N_SEATS)], axis=1)
        return {"jiating": decl[idx, hero] == 1, "hard": decl[idx, hero] == 2}

    example_columns = tuple(f"{c}_{s}" for c in ("P", "G", "decl") for s in range(N_SEATS))

    def example_hands(self, df: pd.DataFrame, options) -> dict:
        total = sum(np.stack([df[f"{c}_{s}"].to_numpy(np.int64) for s in range(N_SEATS)], axis=1) for c in "PG")
        decl = np.stack([df[f"decl_{s}"].to_numpy(np.int64) for s in range(N_SEATS)], axis=1)
        label = "a capped win (P + G over the cap, J-6.2)"
        return {"a 硬子 declaration (J-4.2)": (decl == 2).any(axis=1),
                label: (total > options.cap).any(axis=1) if options.cap is not None else "none: cap is None (no cap)"}


#: the rule set's analysis hooks (``RuleSet.analysis``)
ANALYSIS = JiatingAnalysis()
