"""The summary table of a run: outcome rates, points and 飘财 statistics with 95% intervals.

:func:`summarize` turns the per-hand records (``caishen.sim.records``) into a tidy
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

Caveats: the four seat-hands of one hand are not independent (at most one
seat wins a hand, usually), and neither are the hands of one match (dealer
rotation); the intervals treat them as independent.  The comparison of
飘 and non-飘 seat-hands is observational: a seat that could 飘 differs from
one that could not (e.g. in how close it is to winning); a controlled
comparison runs two policies (``never`` vs ``always``) on the same seeds.
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
    return r.frame(), defs


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


def summarize_run(run_dir: str | os.PathLike) -> tuple[pd.DataFrame, dict, dict, int]:
    """Summarize a run directory from its Parquet files.

    Returns ``(rows, definitions, run_json, finished_chunks)``.  Raises
    ``ValueError`` if ``run_dir`` is not a run or has no finished chunk.
    """
    from caishen.sim import records, runner

    meta = runner.read_run_json(run_dir)
    df = records.read_run(run_dir, columns=summary_columns(records.run_column_names(run_dir)))
    rows, defs = summarize(df, meta.get("policies", ("?",) * N_SEATS))
    return rows, defs, meta, len(records.finished_chunks(run_dir))
