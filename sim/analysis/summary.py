"""The summary table of a run: outcome rates, points and 飘财 statistics with 95% intervals.

:func:`summarize` (records in memory) and :func:`summarize_run` (a run
directory, streamed) turn the per-hand records (``caishen.sim.selfplay.records``) into a tidy
``pandas.DataFrame``, one row per number, with the columns

``section, metric, group, n, value, ci_low, ci_high``

(``n`` = the rows the number is computed over: hands, seat-hands or won
hands; the interval is empty where none applies).

Intervals: over independent units, cluster-robust (issue 14 item 6)
-------------------------------------------------------------------
The rows are not independent: the four seat-hands of one hand share its
wall (at most one seat wins it, usually), and the hands of one match share
its dealer rotation (K-3.3) and streak (J-2.4).  So every interval is
computed with the **match** as the cluster (``unit="match"``, the default):
a match is the rows from one ``match_hand`` 0 to the next within a chunk
(the runner starts a new match at each chunk, whatever the chunk size:
``hand_id // match_len`` is *not* the match when the chunk size is no
multiple of ``match_len``), and in a duplicate-deal run
(:mod:`caishen.sim.analysis.arena`, columns ``wall, seating``) the cluster is a wall
with all its seatings.  With ``unit="hand"`` the cluster is the hand (its
four seat-hands together).  Every number is a mean of rows, a ratio of
cluster totals ``sum y / sum n``, and its interval is the cluster-robust
(CR1) one of :mod:`caishen.sim.analysis.intervals`: means a Student t on ``G - 1``
degrees of freedom (``G`` = the clusters holding a row of the number),
rates the Wilson interval at the effective size ``p (1 - p) / Var(p)``
(:func:`~caishen.sim.analysis.intervals.cluster_rate_ci`), and ``飘 minus
comparable`` the paired linearized difference
(:func:`~caishen.sim.analysis.intervals.cluster_diff_ci`: the 飘 and the comparable
seat-hands of one match are in the same cluster).  The row ``independent
units`` gives the number of clusters; ``definitions["intervals"]`` says the
unit and method.  ``unit=None`` is the textbook interval that takes the rows
as independent (Wilson, Student t, Welch; too narrow), kept for comparison.

Definitions (H hands; a *seat-hand* is one seat in one hand, 4 per hand):

- ``draw rate``: hands with ``win_type == -1`` (流局) / H.
- ``win rate``: seat ``s``: hands where bit ``s`` of ``winners_mask`` is set / H;
  ``dealer``: hands the dealer won / H; ``non-dealer``: non-dealer
  seat-hands that won / 3H.
- ``dealer share``: hands dealt by seat ``s`` / H (a 流局 keeps the dealer,
  K-3.3, so seats do not deal equally often; compare seats with this in mind).
- ``share of wins``: won hands by ``win_type`` (self_draw, discard_win,
  robbed_kong, the words of :func:`caishen.read_run`'s table) / won hands.
- ``winner's gain``: the score change of the (first) winner in a won hand;
  mean and percentiles (numpy's linear interpolation).
- ``score``: mean score change per seat-hand, by seat, for the dealer and
  for non-dealers (the balance between seats and dealer).
- 飘财 (K-9: records with ``piao_s`` columns), counted per seat-hand, by policy when seats differ:
  ``attempt rate``: seat-hands with at least one 财神 discard
  (``piao_s >= 1``) / seat-hands; forced throws (K-2.4 / K-2.5, a 飘 by
  K-9.4) count, which is why ``never`` seats show about 1%.  ``success
  rate``: of those, the seat won by self-draw with a 飘 link counted in its
  exponent (``winner == s``,
  ``win_type == 0``, ``hand_flags & FLAG_JOKER_LINK``: the chain paid off, K-6.5,
  K-9.1).  ``failed rate``: of those, ``failed_piao_s == 1`` (another seat
  won during the seat's 飘 circle, K-9.3).  ``neither rate``: of those,
  neither success nor failed (a 流局, a win after the circle, or the
  seat's own win without the link counted); the three add up to 1.  These
  four definitions are also ``definitions["飘 rates"]`` (summary.json) and
  printed under the table (:data:`PIAO_RATE_DEFINITIONS`).
  ``score per 飘 seat-hand``: mean score change of those seat-hands.
  ``comparable non-飘``: with the records' ``piao_chance_s`` column, the
  seat-hands that could have thrown a 财神 while ready and did not;
  without it, every seat-hand with ``piao_s == 0``
  (:data:`COMPARABLE_DEFINITIONS`).  ``飘 minus comparable`` is the
  difference of the two means (paired over matches; its ``n`` is both groups' sizes
  added).  ``score per non-飘 seat-hand`` (only with ``piao_chance_s``):
  every seat-hand with ``piao_s == 0``.  ``score per seat-hand`` (one row
  per policy, when seats play different policies): the mean score change of
  all the policy's seat-hands, the controlled comparison of 飘 policies.
- Wins scored after the hand (J-9 records): ``P per win``, ``G per win``, ``P + G per win``
  over every winning seat-hand; ``several winners``: won hands with two or
  more winners (J-3.4); ``dealer's streak k`` (J-2.4); ``patterns``: for each
  P01..P50 the share of won hands whose first winner scored it (0 when it
  never fired); ``declarations`` per seat-hand (by policy when seats differ):
  ``架听 rate`` (J-4.1), ``硬子 offer rate`` and ``硬子 taken of offers``
  (J-4.2), and for 架听, 硬子 and no declaration the win rate and mean score
  (a declaration's "success"; observational: a declared hand is a ready
  hand); ``passed a win``: seat-hands that passed at least one win (J-3.5).

How it scales: both paths reduce the records batch by batch
(:class:`SummaryTally`) to exact value counts (per hand of ``(win_type,
dealer, winners_mask)``, per seat-hand of the flags the rows group by and
the score, and the distributions of the winner's gain, P, G and the
streak), whose size depends on the distinct values, never on the number of
hands, and, for the intervals, to exact cluster sums: each number's per-hand
row total and row count are summed per cluster, and of those cluster totals
only ``G``, ``sum y``, ``sum n``, ``sum y**2``, ``sum y n``, ``sum n**2``
(and the cross sums of the difference) are kept, as Python integers
(:class:`caishen.sim.analysis.intervals.ClusterMoments`); the last cluster of a
batch stays open and is carried on to the next batch (a match cut by a
batch is never split).  The values come from the counts with exact integer
sums (:func:`mean_ci_counts`, :func:`diff_ci_counts`,
:func:`percentile_counts` give what :func:`mean_ci`, :func:`diff_ci` and
``numpy.percentile`` give on the expanded data).  :func:`summarize_run`
reads only the chunks the manifest verifies (:mod:`caishen.sim.selfplay.manifest`),
in record batches from ``pyarrow.dataset`` (:mod:`caishen.sim.selfplay.stream`);
peak memory does not grow with the hands
(``benchmarks/bench_summary_scale.py``; the former pandas path needed
6.2 GB for 10^7 hands).

Caveat: the comparison of 飘 and non-飘 seat-hands is observational (a selection
effect: a seat that went on to 飘 differs from one that did not), so its
rows are in their own last section, ``飘财 observational``, out of the
headline rows; the value of 飘 is the counterfactual estimate of
:mod:`caishen.sim.analysis.piao_study` or two policies on the same walls
(``caishen sweep``).
"""

from __future__ import annotations

import json
import os
import shlex
from pathlib import Path

import numpy as np
import pandas as pd

from caishen.sim.analysis.intervals import (  # noqa: F401  (re-exported: the textbook intervals and their counts forms)
    diff_ci,
    diff_ci_counts,
    mean_ci,
    mean_ci_counts,
    percentile_counts,
    wilson,
)
from caishen.sim.analysis.summary_tally import (  # noqa: F401  (re-exported: the summary's API)
    COMPARABLE_DEFINITIONS,
    DEALER_SHARE_TEXT,
    CONFIDENCE,
    INTERVALS_TEXT,
    N_SEATS,
    OBSERVATIONAL,
    OBSERVATIONAL_NOTE,
    PERCENTILES,
    PIAO_RATE_DEFINITIONS,
    PIAO_RATES_KEY,
    SUMMARY_COLUMNS,
    SummaryTally,
    UNITS,
    UNIT_LABELS,
    UNITS_TEXT,
    UNITS_WHY,
    WIN_TYPE_NAMES,
    pattern_names,
)
from caishen.sim.termtext import display_width as _width


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
        from caishen.sim.rules.codes import FLAG_JOKER_LINK, WIN_SELF_DRAW

        paid = (df["win_type"].to_numpy() == WIN_SELF_DRAW) & ((df["hand_flags"].to_numpy() & FLAG_JOKER_LINK) != 0)
        winner = df["winner"].to_numpy()
        parts["piao_success"] = np.concatenate([paid & (winner == s) for s in range(N_SEATS)])
    return pd.DataFrame(parts)


def summarize(df: pd.DataFrame, policies=("random",) * N_SEATS, unit="match") -> tuple[pd.DataFrame, dict]:
    """The summary rows of a run's records (in memory) and the definitions used.

    ``df``: the records (``caishen.sim.selfplay.stream.read_run``), at least ``dealer,
    winner, winners_mask, win_type, score_0..3`` and, for ``unit="match"``,
    ``match_hand`` (and ``chunk`` when there are several chunks; duplicate-deal
    records: ``wall, seating``), in hand order (sorted by ``hand_id`` when it
    is there); the 飘财 rows need ``piao_s, failed_piao_s, hand_flags`` (and use
    ``piao_chance_s`` if present).  ``policies``: the 4 seats' policy names
    (labels; 飘 rows are grouped by policy when they differ).  ``unit``: the
    independent unit of the intervals (module docstring, "Intervals"):
    ``"match"`` (default), ``"hand"``, or ``None`` (rows as independent,
    the textbook intervals: too narrow, for comparison).  Returns ``(rows,
    definitions)``: a DataFrame with :data:`SUMMARY_COLUMNS` and a dict of
    the definitions chosen.  Raises ``ValueError`` for empty records, a
    missing column or another unit.  The same numbers as
    :func:`summarize_run`, which streams the records from disk
    (:class:`SummaryTally` does the work for both).
    """
    if len(df) == 0:
        SummaryTally(df.columns, policies, "hand" if unit == "match" else unit)  # a missing column, a bad unit
        raise ValueError("no hands to summarize")
    tally = SummaryTally(df.columns, policies, unit)
    if "hand_id" in df and not df["hand_id"].is_monotonic_increasing:
        df = df.sort_values("hand_id", kind="stable").reset_index(drop=True)
    return tally.update(df).summary()


def format_summary(rows: pd.DataFrame, header: str = "") -> str:
    """The summary as a fixed-width text table: each section's name on a line of its own, then its rows
    (metric, group, n, value, 95% interval), so that the table keeps within 100 columns; a 飘 table in a
    group reads as its cells (:func:`caishen.sim.bots.names.spec_words`)."""
    from caishen.sim.bots.names import spec_words

    def num(v):
        if not np.isfinite(v):
            return ""
        if float(v).is_integer() and abs(v) < 1e15:
            return f"{int(v)}"
        return f"{v:.4g}"

    table = [["metric", "group", "n", "value", "95% CI"]]
    sections = []  # the section each row of table opens, or None
    last = None
    for row in rows.itertuples(index=False):
        ci = f"[{num(row.ci_low)}, {num(row.ci_high)}]" if np.isfinite(row.ci_low) and np.isfinite(row.ci_high) else ""
        sections.append(row.section if row.section != last else None)
        last = row.section
        table.append([f"  {row.metric}", spec_words(str(row.group)), str(row.n), num(row.value), ci])
    widths = [max(_width(r[i]) for r in table) for i in range(len(table[0]))]
    right = {2, 3}
    lines = []
    for k, r in enumerate(table):
        if k > 0 and sections[k - 1] is not None:
            lines.append(sections[k - 1])
        cells = [
            " " * (w - _width(c)) + c if i in right else c + " " * (w - _width(c))
            for i, (c, w) in enumerate(zip(r, widths))
        ]
        lines.append("  ".join(cells).rstrip())
    return (header + "\n" if header else "") + "\n".join(lines)


def format_definitions(definitions: dict, keys=None) -> str:
    """The summary's definitions (``keys``, default all, in that order; a missing or empty one skipped) as
    ``key: text`` lines wrapped to 100 columns (:func:`caishen.sim.termtext.wrap`, wide characters count 2),
    each continued with an indent: the footnotes under the table."""
    from caishen.sim.termtext import wrap_lines

    keys = list(definitions) if keys is None else keys
    return "\n".join(wrap_lines((f"{k}: {definitions[k]}" for k in keys if definitions.get(k)), indent="    "))


def section(rows: pd.DataFrame, name: str) -> pd.DataFrame:
    """The rows of one section of a summary (``caishen report --section NAME``), in their order.

    ``name`` matches a section exactly or, failing that, ignoring case (``"points"`` for ``"Points"``).
    Raises ``ValueError`` naming ``name`` and listing the sections of ``rows`` when none matches.
    """
    names = list(dict.fromkeys(rows["section"]))
    hit = [s for s in names if s == name] or [s for s in names if s.casefold() == name.casefold()]
    if not hit:
        raise ValueError(f"--section {name!r}: no such section; the sections are: "
                         + ", ".join(repr(s) for s in names))
    return rows[rows["section"] == hit[0]].reset_index(drop=True)


def save_summary(run_dir: str | os.PathLike, rows: pd.DataFrame, definitions: dict, run: dict) -> None:
    """Write ``summary.csv`` (the rows) and ``summary.json`` (run config, definitions, rows) into ``run_dir``,
    each atomically (:func:`caishen.sim.safeio.atomic_write`: a crash or a full disk leaves the old file or
    the new one, and a full disk is a :class:`caishen.sim.safeio.FileError` naming the file)."""
    from caishen.sim import safeio

    run_dir = Path(run_dir)
    safeio.atomic_write(run_dir / "summary.csv", rows.to_csv(index=False))
    doc = {
        "run": run,
        "definitions": {"intervals": INTERVALS_TEXT[None], **definitions},
        "rows": json.loads(rows.to_json(orient="records", force_ascii=False)),
    }
    safeio.write_json(run_dir / "summary.json", doc)


def example_hands(run_dir: str | os.PathLike, verification=None, batch_size: int | None = None) -> list[str]:
    """Lines naming example hands of a simulate run, each as the command that opens it, e.g.
    ``the largest win (seat 2, +384 points): caishen replay RUN --hand 3:117`` (``RUN`` shell-quoted,
    :func:`shlex.quote`: a folder named ``a b;rm x`` is printed ``'a b;rm x'``).

    The examples: the largest win (the first hand with the largest score of a seat), and the first hand
    of each of the rule set's own (``Analysis.example_hands``: a failed 飘 and a capped win, a 硬子
    declaration and a capped win); a kind the run has no hand of is named with ``none``.  Streams the
    verified chunks (``verification`` as in :func:`summarize_run`), a few columns at a time.  Raises
    ``ValueError`` if ``run_dir`` is not a run or has no verified chunk.
    """
    from caishen.sim.rules import base as rulesets
    from caishen.sim.selfplay import records, rundir, stream

    meta = rundir.read_run_json(run_dir)
    if verification is None:
        files, verification = stream.verified_chunk_files(run_dir, meta)
    else:
        files = [records.chunk_path(run_dir, i) for i in verification.ok]
    rs = rulesets.get(meta["rules"])
    hooks, options = rs.analysis_hooks(), rs.options.from_dict(meta.get("options") or {})
    have = set(stream.column_names(files))
    own = [c for c in hooks.example_columns if c in have]
    cols = ["chunk", "hand", *(f"score_{s}" for s in range(N_SEATS)), *own]
    best = None  # (points, seat, chunk, hand)
    found: dict[str, tuple[int, int] | str] = {}
    labels: list[str] = []
    for batch in stream.record_batches(files, cols, batch_size or stream.BATCH_SIZE):
        df = batch.to_pandas()
        scores = np.stack([df[f"score_{s}"].to_numpy(np.int64) for s in range(N_SEATS)], axis=1)
        i = int(scores.max(axis=1).argmax()) if len(df) else 0
        if len(df) and (best is None or scores[i].max() > best[0]):
            best = (int(scores[i].max()), int(scores[i].argmax()), int(df["chunk"].iat[i]), int(df["hand"].iat[i]))
        if len(own) < len(hooks.example_columns):
            continue  # a run without the rule set's columns (an older layout): its own examples are not named
        for label, mask in hooks.example_hands(df, options).items():
            labels += [label] if label not in labels else []
            if isinstance(mask, str):
                found[label] = mask
            elif label not in found and mask.any():
                j = int(np.flatnonzero(mask)[0])
                found[label] = (int(df["chunk"].iat[j]), int(df["hand"].iat[j]))
    where = shlex.quote(str(run_dir))  # a command a shell runs as printed, whatever the folder's name holds
    lines = []
    if best is not None and best[0] > 0:
        lines.append(f"the largest win (seat {best[1]}, +{best[0]} points): "
                     f"caishen replay {where} --hand {best[2]}:{best[3]}")
    else:
        lines.append("the largest win: none (no hand was won)")
    for label in labels:
        hit = found.get(label, "none in this run")
        lines.append(f"{label}: " + (hit if isinstance(hit, str) else f"caishen replay {where} --hand {hit[0]}:{hit[1]}"))
    return lines


def summary_columns(available) -> list[str]:
    """The record columns :func:`summarize` reads, among ``available`` (saves memory on big runs)."""
    stems = ("score", "piao", "failed_piao", "piao_chance", "P", "G", "decl", "hard_offer", "passed_win")
    want = ["dealer", "winner", "winners_mask", "win_type", "hand_flags", "streak"]
    want += [f"{c}_{s}" for c in stems for s in range(N_SEATS)]
    want += list(pattern_names())  # the scored pattern columns (J-8)
    return [c for c in want if c in set(available)]


def summarize_run(run_dir: str | os.PathLike, batch_size: int | None = None,
                  verification=None, unit="match") -> tuple[pd.DataFrame, dict, dict, int]:
    """Summarize a run directory, streaming its verified Parquet chunks (bounded memory).

    Reads only the chunks :func:`caishen.sim.selfplay.manifest.verify` finds ``ok`` (pass a
    ``verification`` already made to skip a second pass over the files), in
    record batches of ``batch_size`` rows (:func:`caishen.sim.selfplay.stream.record_batches`)
    reduced by :class:`SummaryTally`: peak memory does not grow with the
    number of hands.  A match cut by a batch (or a record batch boundary)
    is carried on to the next batch.  ``unit``: as in :func:`summarize`.  Returns ``(rows, definitions, run_json,
    verified_chunks)``.  Raises ``ValueError`` if ``run_dir`` is not a run or
    has no verified chunk.
    """
    from caishen.sim.selfplay import records, rundir, stream

    meta = rundir.read_run_json(run_dir)
    if verification is None:
        files, verification = stream.verified_chunk_files(run_dir, meta)
    else:
        files = [records.chunk_path(run_dir, i) for i in verification.ok]
    if not files:
        raise ValueError(f"no verified chunk in {str(run_dir)!r} (expected "
                         f"{str(Path(run_dir) / records.CHUNKS_DIR)}/chunk-*.parquet with a manifest line)")
    tally = SummaryTally(stream.column_names(files), meta.get("policies", ("?",) * N_SEATS), unit)
    for batch in stream.record_batches(files, tally.columns(), batch_size or stream.BATCH_SIZE):
        tally.update(batch)
    rows, defs = tally.summary()
    return rows, defs, meta, len(files)
