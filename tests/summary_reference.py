"""The summary as it was computed before streaming (issue 15): whole arrays in memory, scipy on each.

A TEST REFERENCE, kept verbatim from ``sim/summary.py`` before the streaming
engine (only the imports changed): :func:`summarize` takes the records as one
``pandas.DataFrame`` and computes every row from numpy arrays with
:func:`caishen.sim.summary.wilson`, :func:`caishen.sim.summary.mean_ci` and
:func:`caishen.sim.summary.diff_ci`.  ``tests/test_summary_streaming.py`` checks that
the streaming summary (value counts, :class:`caishen.sim.summary.SummaryTally`) gives
the same numbers.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from caishen.sim.summary import (
    COMPARABLE_DEFINITIONS,
    N_SEATS,
    PERCENTILES,
    SUMMARY_COLUMNS,
    WIN_TYPE_NAMES,
    diff_ci,
    mean_ci,
    wilson,
)


class _Rows:
    def __init__(self):
        self.rows = []

    def add(self, section, metric, group, n, value, low=float("nan"), high=float("nan")):
        self.rows.append((section, metric, group, int(n), float(value), float(low), float(high)))

    def rate(self, section, metric, group, k, n):
        self.add(section, metric, group, n, *wilson(int(k), int(n)))

    def mean(self, section, metric, group, x):
        self.add(section, metric, group, len(x), *mean_ci(x))

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
    if "piao_0" in df and "flags" in df:
        from caishen.sim.rules.kaihua import FLAG_PIAO, WIN_SELF_DRAW

        paid = (df["win_type"].to_numpy() == WIN_SELF_DRAW) & ((df["flags"].to_numpy() & FLAG_PIAO) != 0)
        winner = df["winner"].to_numpy()
        parts["piao_success"] = np.concatenate([paid & (winner == s) for s in range(N_SEATS)])
    return pd.DataFrame(parts)


def summarize(df: pd.DataFrame, policies=("random",) * N_SEATS) -> tuple[pd.DataFrame, dict]:
    """The summary rows of a run's records and the definitions used.

    ``df``: the records (``caishen.sim.records.read_run``), at least ``dealer,
    winner, winners_mask, win_type, score_0..3``; the 飘财 rows need
    ``piao_s, failed_piao_s, flags`` (and use ``piao_chance_s`` if present).
    ``policies``: the 4 seats' policy names (labels; 飘 rows are grouped by
    policy when they differ).  Returns ``(rows, definitions)``: a DataFrame
    with :data:`SUMMARY_COLUMNS` and a dict of the definitions chosen.
    Raises ``ValueError`` for empty records or a missing column.
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
    r = _Rows()
    H = len(df)
    win_type = df["win_type"].to_numpy()
    mask = df["winners_mask"].to_numpy().astype(np.int64)
    dealer = df["dealer"].to_numpy().astype(np.int64)
    label = [f"seat {s} ({policies[s]})" for s in range(N_SEATS)]
    sh = seat_hands(df)
    defs = {}

    r.add("hands", "hands", "all", H, H)
    r.rate("outcome", "draw rate", "all", (win_type == -1).sum(), H)
    for s in range(N_SEATS):
        r.rate("outcome", "win rate", label[s], ((mask >> s) & 1).sum(), H)
    r.rate("outcome", "win rate", "dealer", ((mask >> dealer) & 1).sum(), H)
    r.rate("outcome", "win rate", "non-dealer", (sh["won"] & ~sh["dealer"]).sum(), 3 * H)
    for s in range(N_SEATS):
        r.rate("outcome", "dealer share", label[s], (dealer == s).sum(), H)
    won = win_type >= 0
    W = int(won.sum())
    for code, name in WIN_TYPE_NAMES.items():
        r.rate("win type", "share of wins", name, (win_type == code).sum(), W)

    if W:
        winner = df["winner"].to_numpy()[won].astype(np.int64)
        scores = np.stack([df[f"score_{s}"].to_numpy() for s in range(N_SEATS)], axis=1)[won]
        gain = scores[np.arange(W), winner].astype(np.int64)
        r.mean("points", "winner's gain", "mean", gain)
        for p, v in zip(PERCENTILES, np.percentile(gain, PERCENTILES)):
            r.add("points", "winner's gain", f"p{p}", W, v)
        r.add("points", "winner's gain", "max", W, gain.max())
    score = sh["score"].to_numpy()
    for s in range(N_SEATS):
        r.mean("points", "score", label[s], score[sh["seat"].to_numpy() == s])
    is_dealer = sh["dealer"].to_numpy()
    r.mean("points", "score", "dealer", score[is_dealer])
    r.mean("points", "score", "non-dealer", score[~is_dealer])

    if {"piao", "failed_piao", "piao_success"} <= set(sh):
        no_piao = sh["piao"].to_numpy() == 0
        has_chance = "piao_chance" in sh
        if has_chance:
            defs["comparable"] = COMPARABLE_DEFINITIONS["chance"]
            comparable = no_piao & (sh["piao_chance"].to_numpy() >= 1)
        else:
            defs["comparable"] = COMPARABLE_DEFINITIONS["no_attempt"]
            comparable = no_piao
        pol = np.array(policies)[sh["seat"].to_numpy()]
        groups = [("all", np.ones(len(sh), bool))]
        if len(set(policies)) > 1:
            groups += [(f"policy {p}", pol == p) for p in dict.fromkeys(policies)]
        for gname, g in groups:
            if gname != "all":  # the controlled comparison: policies on the same deals (all seat-hands)
                r.mean("飘财", "score per seat-hand", gname, score[g])
            att = g & (sh["piao"].to_numpy() >= 1)
            A = int(att.sum())
            r.rate("飘财", "attempt rate", gname, A, int(g.sum()))
            r.rate("飘财", "success rate", gname, (att & sh["piao_success"].to_numpy()).sum(), A)
            r.rate("飘财", "failed rate", gname, (att & (sh["failed_piao"].to_numpy() == 1)).sum(), A)
            r.mean("飘财", "score per 飘 seat-hand", gname, score[att])
            cmp_ = g & comparable
            r.mean("飘财", "score per comparable non-飘 seat-hand", gname, score[cmp_])
            r.add("飘财", "飘 minus comparable", gname, A + int(cmp_.sum()), *diff_ci(score[att], score[cmp_]))
            if has_chance:
                r.mean("飘财", "score per non-飘 seat-hand", gname, score[g & no_piao])
    if {"P", "G", "decl", "hard_offer", "passed_win"} <= set(sh):
        _jiating_rows(r, df, sh, policies)
    frame = _observational_last(r.frame())
    if (frame["section"] == "飘财 observational").any():  # the note the summary adds to that section
        from caishen.sim.summary import OBSERVATIONAL_NOTE

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


def _jiating_rows(r: _Rows, df: pd.DataFrame, sh: pd.DataFrame, policies) -> None:
    """Jiating's rows (J-9 records): P and G per win, several winners, pattern
    frequencies (share of won hands whose first winner has the pattern),
    架听 / 硬子 declarations and what they earned, passed wins, the streak."""
    from caishen.sim.rules.jiating.tables import PATTERN_NAMES

    H = len(df)
    win_type = df["win_type"].to_numpy()
    won_hand = win_type >= 0
    W = int(won_hand.sum())
    won = sh["won"].to_numpy()
    score = sh["score"].to_numpy()
    r.mean("架听 points", "P per win", "all winners", sh["P"].to_numpy()[won])
    r.mean("架听 points", "G per win", "all winners", sh["G"].to_numpy()[won])
    r.mean("架听 points", "P + G per win", "all winners", (sh["P"].to_numpy() + sh["G"].to_numpy())[won])
    n_winners = np.zeros(H, np.int64)
    mask = df["winners_mask"].to_numpy().astype(np.int64)
    for s in range(N_SEATS):
        n_winners += (mask >> s) & 1
    r.rate("架听 points", "several winners (一炮多响)", "share of wins", (n_winners >= 2).sum(), W)
    if "streak" in df:
        r.mean("架听 points", "dealer's streak k", "all hands", df["streak"].to_numpy())
    for pid, name in PATTERN_NAMES.items():
        if pid in df:
            r.rate("patterns", f"{pid} {name}", "share of wins", (df[pid].to_numpy()[won_hand] > 0).sum(), W)
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
                r.rate("declarations", "架听 rate", gname, d.sum(), g.sum())
            elif code == 2:
                r.rate("declarations", "硬子 offer rate", gname, (g & offer).sum(), g.sum())
                r.rate("declarations", "硬子 taken of offers", gname, d.sum(), (g & offer).sum())
            r.rate("declarations", f"win rate: {what}", gname, (d & won).sum(), d.sum())
            r.mean("declarations", f"score: {what}", gname, score[d])
        r.rate("declarations", "passed a win (漏胡)", gname, (g & (sh["passed_win"].to_numpy() > 0)).sum(), g.sum())
