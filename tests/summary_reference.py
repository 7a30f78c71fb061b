"""The summary computed the obvious way: whole arrays in memory, one interval function per row.

A TEST REFERENCE.  It began as ``sim/analysis/summary.py`` before streaming (issue
15) and now computes every interval over independent units (issue 14 item
6): each row of a number (a hand, a seat-hand, a won hand) gets the id of
its cluster (:func:`clusters`: a match = the rows from one ``match_hand`` 0
to the next within a chunk; a wall of a duplicate-deal run; a hand), and the
interval is :func:`caishen.sim.analysis.intervals.cluster_rate_ci`,
:func:`~caishen.sim.analysis.intervals.cluster_mean_ci` or
:func:`~caishen.sim.analysis.intervals.cluster_diff_ci` of the expanded rows; with
``unit=None`` the textbook :func:`caishen.sim.analysis.summary.wilson`,
:func:`~caishen.sim.analysis.summary.mean_ci` and :func:`~caishen.sim.analysis.summary.diff_ci`.
``tests/test_summary_streaming.py`` checks that the streaming summary
(exact cluster sums, :class:`caishen.sim.analysis.summary.SummaryTally`) gives the
same numbers.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from caishen.sim.analysis.intervals import cluster_diff_ci, cluster_mean_ci, cluster_rate_ci
from caishen.sim.analysis.summary import (
    COMPARABLE_DEFINITIONS,
    DEALER_SHARE_TEXT,
    INTERVALS_TEXT,
    N_SEATS,
    PERCENTILES,
    SUMMARY_COLUMNS,
    UNITS_TEXT,
    UNITS_WHY,
    WIN_TYPE_NAMES,
    diff_ci,
    mean_ci,
    wilson,
)


def clusters(df: pd.DataFrame, unit) -> np.ndarray:
    """``int64[H]``: the cluster of each hand (row of ``df``, in hand order), by a loop over the rows."""
    out = np.zeros(len(df), np.int64)
    duplicate = {"wall", "seating"} <= set(df.columns)
    cid, prev = -1, None
    for i in range(len(df)):
        chunk = int(df["chunk"].iat[i]) if "chunk" in df else 0
        if unit in ("hand", None):
            new = True
        elif duplicate:
            key = (chunk, int(df["wall"].iat[i]))
            new = key != prev
            prev = key
        else:
            new = int(df["match_hand"].iat[i]) == 0 or (prev is not None and chunk != prev)
            prev = chunk
        cid += bool(new or i == 0)
        out[i] = cid
    return out


class _Rows:
    """Rows; ``rate(hits, cl)``, ``mean(x, cl)``, ``diff(a, cl_a, b, cl_b)``: the rows' values and clusters."""

    def __init__(self, unit):
        self.rows = []
        self.unit = unit

    def add(self, section, metric, group, n, value, low=float("nan"), high=float("nan")):
        self.rows.append((section, metric, group, int(n), float(value), float(low), float(high)))

    def rate(self, section, metric, group, hits, cl):
        hits = np.asarray(hits, bool)
        if self.unit is None:
            self.add(section, metric, group, len(hits), *wilson(int(hits.sum()), len(hits)))
        else:
            self.add(section, metric, group, len(hits), *cluster_rate_ci(hits, cl))

    def mean(self, section, metric, group, x, cl):
        x = np.asarray(x, np.int64)
        if self.unit is None:
            self.add(section, metric, group, len(x), *mean_ci(x))
        else:
            self.add(section, metric, group, len(x), *cluster_mean_ci(x, cl))

    def diff(self, section, metric, group, a, cl_a, b, cl_b):
        if self.unit is None:
            self.add(section, metric, group, len(a) + len(b), *diff_ci(a, b))
        else:
            self.add(section, metric, group, len(a) + len(b), *cluster_diff_ci(a, cl_a, b, cl_b))

    def frame(self) -> pd.DataFrame:
        return pd.DataFrame(self.rows, columns=SUMMARY_COLUMNS)


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
    if "piao_0" in df and "hand_flags" in df:
        from caishen.sim.rules.kaihua import FLAG_JOKER_LINK, WIN_SELF_DRAW

        paid = (df["win_type"].to_numpy() == WIN_SELF_DRAW) & ((df["hand_flags"].to_numpy() & FLAG_JOKER_LINK) != 0)
        winner = df["winner"].to_numpy()
        parts["piao_success"] = np.concatenate([paid & (winner == s) for s in range(N_SEATS)])
    return pd.DataFrame(parts)


def summarize(df: pd.DataFrame, policies=("random",) * N_SEATS, unit="match") -> tuple[pd.DataFrame, dict]:
    """The summary rows of a run's records and the definitions used (``unit``: "match", "hand" or None).

    ``df``: the records (``caishen.sim.selfplay.stream.read_run``), at least ``dealer,
    winner, winners_mask, win_type, score_0..3`` (and ``match_hand``, maybe
    ``chunk``, for matches); the 飘财 rows need ``piao_s, failed_piao_s,
    hand_flags`` (and use ``piao_chance_s`` if present).  ``policies``: the 4
    seats' policy names (labels; 飘 rows are grouped by policy when they
    differ).  Returns ``(rows, definitions)``.
    """
    need = ["dealer", "winner", "winners_mask", "win_type"] + [f"score_{s}" for s in range(N_SEATS)]
    missing = [c for c in need if c not in df]
    if missing:
        raise ValueError(f"records lack column(s) {', '.join(missing)}")
    if len(df) == 0:
        raise ValueError("no hands to summarize")
    policies = tuple(policies)
    if len(policies) != N_SEATS:
        raise ValueError(f"policies {policies!r}: need one per seat")
    if "hand_id" in df:
        df = df.sort_values("hand_id", kind="stable").reset_index(drop=True)
    r = _Rows(unit)
    H = len(df)
    hc = clusters(df, unit)  # the cluster of each hand
    sc = np.tile(hc, N_SEATS)  # of each seat-hand (seat-major, as seat_hands)
    win_type = df["win_type"].to_numpy()
    mask = df["winners_mask"].to_numpy().astype(np.int64)
    dealer = df["dealer"].to_numpy().astype(np.int64)
    label = [f"seat {s} ({policies[s]})" for s in range(N_SEATS)]
    sh = seat_hands(df)
    defs = {"intervals": INTERVALS_TEXT[unit], "dealer share": DEALER_SHARE_TEXT}

    r.add("hands", "hands", "all", H, H)
    if unit is not None:
        g = len(np.unique(hc))
        what = {"hand": "hands"}.get(unit, "walls" if {"wall", "seating"} <= set(df.columns) else "matches")
        r.add("hands", "independent units", what, g, g)
        defs["independent units"] = UNITS_TEXT.format(what=what, why=UNITS_WHY[what])
    r.rate("outcome", "draw rate", "all", win_type == -1, hc)
    for s in range(N_SEATS):
        r.rate("outcome", "win rate", label[s], (mask >> s) & 1, hc)
    r.rate("outcome", "win rate", "dealer", (mask >> dealer) & 1, hc)
    nd = ~sh["dealer"].to_numpy()
    r.rate("outcome", "win rate", "non-dealer", sh["won"].to_numpy()[nd], sc[nd])
    for s in range(N_SEATS):
        r.rate("outcome", "dealer share", label[s], dealer == s, hc)
    won = win_type >= 0
    W = int(won.sum())
    for code, name in WIN_TYPE_NAMES.items():
        r.rate("win type", "share of wins", name, (win_type == code)[won], hc[won])

    if W:
        winner = df["winner"].to_numpy()[won].astype(np.int64)
        scores = np.stack([df[f"score_{s}"].to_numpy() for s in range(N_SEATS)], axis=1)[won]
        gain = scores[np.arange(W), winner].astype(np.int64)
        r.mean("points", "winner's gain", "mean", gain, hc[won])
        for p, v in zip(PERCENTILES, np.percentile(gain, PERCENTILES)):
            r.add("points", "winner's gain", f"p{p}", W, v)
        r.add("points", "winner's gain", "max", W, gain.max())
    score = sh["score"].to_numpy()
    for s in range(N_SEATS):
        sel = sh["seat"].to_numpy() == s
        r.mean("points", "score", label[s], score[sel], sc[sel])
    is_dealer = sh["dealer"].to_numpy()
    r.mean("points", "score", "dealer", score[is_dealer], sc[is_dealer])
    r.mean("points", "score", "non-dealer", score[~is_dealer], sc[~is_dealer])

    if {"piao", "failed_piao", "piao_success"} <= set(sh):
        no_piao = sh["piao"].to_numpy() == 0
        has_chance = "piao_chance" in sh
        if has_chance:
            defs["comparable"] = COMPARABLE_DEFINITIONS["chance"]
            comparable = no_piao & (sh["piao_chance"].to_numpy() >= 1)
        else:
            defs["comparable"] = COMPARABLE_DEFINITIONS["no_attempt"]
            comparable = no_piao
        from caishen.sim.analysis.summary import PIAO_RATE_DEFINITIONS, PIAO_RATES_KEY

        defs[PIAO_RATES_KEY] = PIAO_RATE_DEFINITIONS
        pol = np.array(policies)[sh["seat"].to_numpy()]
        groups = [("all", np.ones(len(sh), bool))]
        if len(set(policies)) > 1:
            groups += [(f"policy {p}", pol == p) for p in dict.fromkeys(policies)]
        for gname, g in groups:
            if gname != "all":  # the controlled comparison: policies on the same deals (all seat-hands)
                r.mean("飘财", "score per seat-hand", gname, score[g], sc[g])
            att = g & (sh["piao"].to_numpy() >= 1)
            r.rate("飘财", "attempt rate", gname, att[g], sc[g])
            r.rate("飘财", "success rate", gname, sh["piao_success"].to_numpy()[att], sc[att])
            r.rate("飘财", "failed rate", gname, sh["failed_piao"].to_numpy()[att] == 1, sc[att])
            r.rate("飘财", "neither rate", gname, ~sh["piao_success"].to_numpy()[att]
                   & (sh["failed_piao"].to_numpy()[att] != 1), sc[att])
            r.mean("飘财", "score per 飘 seat-hand", gname, score[att], sc[att])
            cmp_ = g & comparable
            r.mean("飘财", "score per comparable non-飘 seat-hand", gname, score[cmp_], sc[cmp_])
            r.diff("飘财", "飘 minus comparable", gname, score[att], sc[att], score[cmp_], sc[cmp_])
            if has_chance:
                sel = g & no_piao
                r.mean("飘财", "score per non-飘 seat-hand", gname, score[sel], sc[sel])
    if {"P", "G", "decl", "hard_offer", "passed_win"} <= set(sh):
        _jiating_rows(r, df, sh, policies, hc, sc)
    frame = _observational_last(r.frame())
    if (frame["section"] == "飘财 observational").any():  # the note the summary adds to that section
        from caishen.sim.analysis.summary import OBSERVATIONAL_NOTE

        defs["observational"] = OBSERVATIONAL_NOTE
    return frame, defs


#: the rows the summary moved to their own last section (the observational 飘 comparison, issue 14 item 6)
_OBSERVATIONAL_METRICS = ("score per 飘 seat-hand", "score per comparable non-飘 seat-hand", "飘 minus comparable",
                          "score per non-飘 seat-hand")


def _observational_last(frame):
    obs = (frame["section"] == "飘财") & frame["metric"].isin(_OBSERVATIONAL_METRICS)
    moved = frame[obs].assign(section="飘财 observational")
    import pandas as pd

    return pd.concat([frame[~obs], moved], ignore_index=True)


def _jiating_rows(r: _Rows, df: pd.DataFrame, sh: pd.DataFrame, policies, hc, sc) -> None:
    """Jiating's rows (J-9 records): P and G per win, several winners, pattern
    frequencies (share of won hands whose first winner has the pattern),
    架听 / 硬子 declarations and what they earned, passed wins, the streak."""
    from caishen.sim.rules.jiating.tables import PATTERN_NAMES

    H = len(df)
    win_type = df["win_type"].to_numpy()
    won_hand = win_type >= 0
    won = sh["won"].to_numpy()
    score = sh["score"].to_numpy()
    r.mean("架听 points", "P per win", "all winners", sh["P"].to_numpy()[won], sc[won])
    r.mean("架听 points", "G per win", "all winners", sh["G"].to_numpy()[won], sc[won])
    r.mean("架听 points", "P + G per win", "all winners", (sh["P"].to_numpy() + sh["G"].to_numpy())[won], sc[won])
    n_winners = np.zeros(H, np.int64)
    mask = df["winners_mask"].to_numpy().astype(np.int64)
    for s in range(N_SEATS):
        n_winners += (mask >> s) & 1
    r.rate("架听 points", "several winners (一炮多响)", "share of wins", (n_winners >= 2)[won_hand], hc[won_hand])
    if "streak" in df:
        r.mean("架听 points", "dealer's streak k", "all hands", df["streak"].to_numpy(), hc)
    for pid, name in PATTERN_NAMES.items():
        if pid in df:
            r.rate("patterns", f"{pid} {name}", "share of wins", df[pid].to_numpy()[won_hand] > 0, hc[won_hand])
    decl = sh["decl"].to_numpy()
    offer = sh["hard_offer"].to_numpy() != 0
    pol = np.array(policies)[sh["seat"].to_numpy()]
    groups = [("all", np.ones(len(sh), bool))]
    if len(set(policies)) > 1:
        groups += [(f"policy {p}", pol == p) for p in dict.fromkeys(policies)]
    for gname, g in groups:
        for code, what in ((1, "架听"), (2, "硬子"), (0, "no declaration")):
            d = g & (decl == code)
            if code == 1:
                r.rate("declarations", "架听 rate", gname, d[g], sc[g])
            elif code == 2:
                r.rate("declarations", "硬子 offer rate", gname, offer[g], sc[g])
                r.rate("declarations", "硬子 taken of offers", gname, d[g & offer], sc[g & offer])
            r.rate("declarations", f"win rate: {what}", gname, won[d], sc[d])
            r.mean("declarations", f"score: {what}", gname, score[d], sc[d])
        r.rate("declarations", "passed a win (漏胡)", gname, sh["passed_win"].to_numpy()[g] > 0, sc[g])
