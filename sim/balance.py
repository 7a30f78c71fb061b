"""Scoring balance of both rule sets: what each hand type, pattern and seat earns, with intervals.

Every function takes per-hand records (``caishen.sim.records`` columns: a run read
with ``caishen.sim.records.read_run``, or the columns of
``caishen.sim.selfplay.play_batch``) and returns a tidy ``pandas.DataFrame``.
Intervals are 95% and over **independent units**: the *match* (hands
``match_hand = 0, 1, ...`` of one dealer rotation; one hand when matches
are one hand long), the cluster of :mod:`caishen.sim.intervals`.  A "won hand" is a
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
  walls under each option setting (``caishen.sim.selfplay.play_batch`` with one
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
  log-log plot of frequency against points (:mod:`caishen.sim.report`) shows the
  patterns priced out of line with their rarity.
- :func:`jiating_balance`: how often the caps bind (J-6.2: a payment whose
  uncapped ``dealer_factor (P + G)`` or ``P + G`` exceeds ``dealer_cap`` /
  ``cap``), the dealer's edge and streak (J-2.4: hands by streak ``k``, the
  dealer's mean score at each ``k``), several winners (J-3.4).
- the value of 架听 and 硬子 (J-4.1, J-4.2) on duplicate deals, declare
  against not on the same wall continuation: :func:`declaration_value`
  (the counterfactual rollouts of :mod:`caishen.sim.piao_study`, decisions
  ``jiating`` and ``hard``).
"""

from __future__ import annotations

import numpy as np
import pandas as pd

N_SEATS = 4
BALANCE_COLUMNS = ["section", "metric", "group", "n", "value", "ci_low", "ci_high"]


def match_ids(df: pd.DataFrame) -> np.ndarray:
    """``int64[n]``: the match of each hand (the independent unit), from ``hand_id`` (or ``hand``) and
    ``match_hand``: a match's hands share ``index - match_hand``."""
    idx = df["hand_id" if "hand_id" in df else "hand"].to_numpy(np.int64)
    if "chunk" in df and "hand_id" not in df:
        idx = idx + df["chunk"].to_numpy(np.int64) * (int(idx.max()) + 1 if len(idx) else 0)
    mh = df["match_hand"].to_numpy(np.int64) if "match_hand" in df else np.zeros(len(df), np.int64)
    return idx - mh


def _scores(df) -> np.ndarray:
    return np.stack([df[f"score_{s}"].to_numpy(np.int64) for s in range(N_SEATS)], axis=1)


class _Rows:
    def __init__(self):
        self.rows = []

    def add(self, section, metric, group, n, value, lo=float("nan"), hi=float("nan")):
        self.rows.append((section, metric, str(group), int(n), float(value), float(lo), float(hi)))

    def mean(self, section, metric, group, values, clusters):
        from caishen.sim.intervals import cluster_mean_ci

        self.add(section, metric, group, len(values), *cluster_mean_ci(values, clusters))

    def rate(self, section, metric, group, hits, clusters):
        from caishen.sim.intervals import cluster_rate_ci

        self.add(section, metric, group, len(hits), *cluster_rate_ci(np.asarray(hits, bool), clusters))

    def frame(self):
        return pd.DataFrame(self.rows, columns=BALANCE_COLUMNS)


def _ratio_ci(num, den, clusters):
    """``sum(num) / sum(den)`` with a cluster-robust interval (a ratio of totals, linearized)."""
    from caishen.sim.intervals import _t

    num = np.asarray(num, np.float64)
    den = np.asarray(den, np.float64)
    tot = den.sum()
    if tot == 0:
        return float("nan"), float("nan"), float("nan")
    r = num.sum() / tot
    _, inv = np.unique(clusters, return_inverse=True)
    g = int(inv.max()) + 1 if len(inv) else 0
    if g < 2:
        return r, float("nan"), float("nan")
    e = np.bincount(inv, weights=num - r * den, minlength=g)
    se = np.sqrt(g / (g - 1) * np.sum(e * e)) / tot
    h = _t(g, 0.95) * se
    lo = r - h
    if lo < 0 <= num.min() and den.min() >= 0:  # a share of non-negative parts is never negative
        lo = 0.0
    return r, lo, r + h


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


def kaihua_hand_types(df: pd.DataFrame) -> pd.DataFrame:
    """Hand types and exponents of Kaihua wins: frequency, points when it fires, share of points.

    One row per (type, measure): ``section`` ``"hand type"`` or
    ``"exponent"``; ``metric`` ``"frequency"`` (share of won hands),
    ``"points when it fires"`` (mean points of the hand), ``"share of
    points"`` (its hands' points / all points); intervals over matches.
    Raises ``ValueError`` without won hands.
    """
    won = df["win_type"].to_numpy() >= 0
    if not won.any():
        raise ValueError("no won hand in the records")
    sc = _scores(df)
    points = np.where(sc > 0, sc, 0).sum(axis=1).astype(np.float64)
    cl = match_ids(df)
    d = {c: df[c].to_numpy(np.int64) for c in ("flags", "chain_len", "chain_kong", "chain_piao", "exponent")}
    r = _Rows()
    w_cl = cl[won]
    total = points[won]
    groups = [(name, f(d)) for name, f in _kaihua_types()]
    exps = d["exponent"]
    for e in range(int(exps[won].max()) + 1):
        groups.append((f"E = {e}", (exps == e)))
    for name, hit in groups:
        section = "exponent" if name.startswith("E = ") else "hand type"
        h = hit[won]
        r.rate(section, "frequency", name, h, w_cl)
        if h.any():
            r.mean(section, "points when it fires", name, total[h], w_cl[h])
        else:
            r.add(section, "points when it fires", name, 0, float("nan"))
        r.add(section, "share of points", name, int(h.sum()), *_ratio_ci(np.where(h, total, 0.0), total, w_cl))
    return r.frame()


def kaihua_balance(df: pd.DataFrame) -> pd.DataFrame:
    """Dealer edge, seat balance, three-share discards and 飘 rates of Kaihua records (intervals over matches)."""
    from caishen.sim.intervals import cluster_diff_ci

    H = len(df)
    if H == 0:
        raise ValueError("no hands in the records")
    sc = _scores(df).astype(np.float64)
    cl = match_ids(df)
    dealer = df["dealer"].to_numpy(np.int64)
    wt = df["win_type"].to_numpy(np.int64)
    r = _Rows()
    is_dealer = np.concatenate([dealer == s for s in range(N_SEATS)])
    seat_score = sc.T.ravel()
    seat_cl = np.tile(cl, N_SEATS)
    r.mean("dealer", "score per seat-hand", "dealer", seat_score[is_dealer], seat_cl[is_dealer])
    r.mean("dealer", "score per seat-hand", "non-dealer", seat_score[~is_dealer], seat_cl[~is_dealer])
    r.add("dealer", "dealer edge (dealer minus non-dealer)", "all", H,
          *cluster_diff_ci(seat_score[is_dealer], seat_cl[is_dealer], seat_score[~is_dealer], seat_cl[~is_dealer]))
    mask = df["winners_mask"].to_numpy(np.int64)
    r.rate("dealer", "win rate", "dealer", (mask >> dealer) & 1, cl)
    for s in range(N_SEATS):
        r.mean("seats", "score per hand", f"seat {s}", sc[:, s], cl)
        r.rate("seats", "dealer share", f"seat {s}", dealer == s, cl)
    won = wt >= 0
    points = np.where(sc > 0, sc, 0).sum(axis=1)
    r.rate("outcome", "draw rate (流局)", "all", ~won, cl)
    disc = (wt == 1) | (wt == 2)
    r.rate("three shares (K-8.3)", "discard or robbed-kong wins", "share of wins", disc[won], cl[won])
    r.add("three shares (K-8.3)", "points paid by a discarder", "share of points", int(won.sum()),
          *_ratio_ci(np.where(disc, points, 0.0)[won], points[won], cl[won]))
    if "piao_0" in df:
        piao = np.concatenate([df[f"piao_{s}"].to_numpy() > 0 for s in range(N_SEATS)])
        failed = np.concatenate([df[f"failed_piao_{s}"].to_numpy() > 0 for s in range(N_SEATS)])
        r.rate("飘财 (K-9)", "attempt rate", "seat-hands", piao, seat_cl)
        if piao.any():
            r.rate("飘财 (K-9)", "failed rate (K-9.3)", "of attempts", failed[piao], seat_cl[piao])
    return r.frame()


def compare_options(settings: dict, hands: int, seed: int = 0, rules: str = "kaihua", policies="greedy",
                    tables=None) -> pd.DataFrame:
    """The balance tables under each option setting, on the same walls, stacked with an ``option`` column.

    ``settings``: label -> option dict (``{"default": {}, "factor 1":
    {"failed_piao_factor": 1}}``); every setting plays ``hands`` hands from
    the same ``seed`` (the same walls: the deterministic bots draw nothing
    from the stream the walls come from).  ``tables``: the functions to
    apply (default: the rule set's two tables).
    """
    from caishen.sim.selfplay import play_batch

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
def _parse_patterns(text: str) -> dict[str, int]:
    out = {}
    if text:
        for part in text.split(","):
            pid, _, pts = part.partition(":")
            out[pid] = int(pts)
    return out


def jiating_patterns(df: pd.DataFrame) -> pd.DataFrame:
    """Per pattern P01..P50: frequency, points when it fires, share of all points paid (J-8).

    Columns ``pattern, name, fires, frequency, freq_low, freq_high, points,
    points_low, points_high, share, share_low, share_high`` over the
    winning seat-hands (every winner of a hand); intervals over matches.
    Also a ``G`` row (kong points, J-6.1) for the share not credited to a
    pattern.  Raises ``ValueError`` without a win.
    """
    from caishen.sim.intervals import cluster_mean_ci, cluster_rate_ci
    from caishen.sim.rules.jiating.tables import PATTERN_NAMES

    sc = _scores(df)
    mask = df["winners_mask"].to_numpy(np.int64)
    cl = match_ids(df)
    wins = []  # (cluster, received, P, G, {pid: points})
    for s in range(N_SEATS):
        won = ((mask >> s) & 1).astype(bool)
        if not won.any():
            continue
        pats = df[f"patterns_{s}"].to_numpy()[won]
        P = df[f"P_{s}"].to_numpy(np.int64)[won]
        G = df[f"G_{s}"].to_numpy(np.int64)[won]
        rec = sc[won, s]
        for c, got, p, g, t in zip(cl[won], rec, P, G, pats):
            wins.append((c, float(got), int(p), int(g), _parse_patterns(t)))
    if not wins:
        raise ValueError("no won hand in the records")
    wcl = np.array([w[0] for w in wins])
    got = np.array([w[1] for w in wins])
    tot = np.array([w[2] + w[3] for w in wins], np.float64)
    frac_base = np.where(tot > 0, got / np.where(tot > 0, tot, 1), 0.0)
    rows = []
    for pid, name in PATTERN_NAMES.items():
        pts = np.array([w[4].get(pid, 0) for w in wins], np.float64)
        fires = pts > 0
        f = cluster_rate_ci(fires, wcl)
        p = cluster_mean_ci(pts[fires], wcl[fires]) if fires.sum() >= 1 else (np.nan, np.nan, np.nan)
        sh = _ratio_ci(pts * frac_base, got, wcl)
        rows.append((pid, name, int(fires.sum()), *f, *p, *sh))
    g_pts = np.array([w[3] for w in wins], np.float64)
    fires = g_pts > 0
    p = cluster_mean_ci(g_pts[fires], wcl[fires]) if fires.any() else (np.nan, np.nan, np.nan)
    rows.append(("G", "kong points (J-6.1)", int(fires.sum()), *cluster_rate_ci(fires, wcl), *p,
                 *_ratio_ci(g_pts * frac_base, got, wcl)))
    return pd.DataFrame(rows, columns=["pattern", "name", "fires", "frequency", "freq_low", "freq_high", "points",
                                       "points_low", "points_high", "share", "share_low", "share_high"])


def jiating_balance(df: pd.DataFrame, options=None) -> pd.DataFrame:
    """Caps binding (J-6.2), dealer edge and streak (J-2.4), several winners (J-3.4), by the records.

    ``options``: the run's rule options (for the caps and the dealer
    factor; default the spec's).  Intervals over matches.
    """
    from caishen.sim.engine import load_rules
    from caishen.sim.intervals import cluster_diff_ci

    _, rules = load_rules("jiating", options)
    H = len(df)
    if H == 0:
        raise ValueError("no hands in the records")
    sc = _scores(df).astype(np.float64)
    cl = match_ids(df)
    dealer = df["dealer"].to_numpy(np.int64)
    mask = df["winners_mask"].to_numpy(np.int64)
    r = _Rows()
    # caps: one payment per (payer, winner); a payment is capped when its uncapped amount exceeds the cap
    capped, pay_cl, win_capped, win_cl = [], [], [], []
    for w in range(N_SEATS):
        won = ((mask >> w) & 1).astype(bool)
        if not won.any():
            continue
        pg = (df[f"P_{w}"].to_numpy(np.int64) + df[f"G_{w}"].to_numpy(np.int64))[won]
        d = dealer[won]
        any_cap = np.zeros(int(won.sum()), bool)
        for p in range(N_SEATS):
            if p == w:
                continue
            paid = df[f"pay_{p}_{w}"].to_numpy(np.int64)[won] > 0
            with_dealer = (d == p) | (d == w)
            cap = np.where(with_dealer, -1 if rules.dealer_cap is None else rules.dealer_cap,
                           -1 if rules.cap is None else rules.cap)
            amount = np.where(with_dealer, rules.dealer_factor * pg, pg)
            c = (cap >= 0) & (amount > cap)
            capped.append(c[paid])
            pay_cl.append(cl[won][paid])
            any_cap |= c & paid
        win_capped.append(any_cap)
        win_cl.append(cl[won])
    if capped:
        r.rate("caps (J-6.2)", "capped payments", "share of payments", np.concatenate(capped), np.concatenate(pay_cl))
        r.rate("caps (J-6.2)", "wins with a capped payment", "share of winning seat-hands",
               np.concatenate(win_capped), np.concatenate(win_cl))
    is_dealer = np.concatenate([dealer == s for s in range(N_SEATS)])
    seat_score = sc.T.ravel()
    seat_cl = np.tile(cl, N_SEATS)
    r.mean("dealer", "score per seat-hand", "dealer", seat_score[is_dealer], seat_cl[is_dealer])
    r.mean("dealer", "score per seat-hand", "non-dealer", seat_score[~is_dealer], seat_cl[~is_dealer])
    r.add("dealer", "dealer edge (dealer minus non-dealer)", "all", H,
          *cluster_diff_ci(seat_score[is_dealer], seat_cl[is_dealer], seat_score[~is_dealer], seat_cl[~is_dealer]))
    if "streak" in df:
        k = df["streak"].to_numpy(np.int64)
        d_score = sc[np.arange(H), dealer]
        r.mean("streak (J-2.4)", "streak k", "all hands", k, cl)
        for kk in range(min(int(k.max()), 5) + 1):
            m = (k == kk) if kk < 5 else (k >= 5)
            label = f"k = {kk}" if kk < 5 else "k >= 5"
            r.rate("streak (J-2.4)", "hands", label, m, cl)
            if m.any():
                r.mean("streak (J-2.4)", "dealer's score", label, d_score[m], cl[m])
    n_win = sum(((mask >> s) & 1) for s in range(N_SEATS))
    won = n_win > 0
    r.rate("outcome", "draw rate (流局)", "all", ~won, cl)
    if won.any():
        r.rate("outcome", "several winners (J-3.4)", "share of won hands", (n_win >= 2)[won], cl[won])
    return r.frame()


def declaration_value(hands: int = 2_000, seed: int = 0, rollouts: int = 4, policies="greedy", options=None,
                      workers: int | None = 1, progress: bool = False, hard_hands: int | None = None) -> pd.DataFrame:
    """The value of 架听 (J-4.1) and 硬子 (J-4.2): declare minus not, on the same wall continuation.

    Runs :func:`caishen.sim.piao_study.run_study` with the decisions ``jiating`` and
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
    from caishen.sim.piao_study import estimate, run_study

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
