"""A run's records as Parquet files: the run's columns, the chunk table, its file schema, reading a run.

A chunk function (the engine's batch self-play, :mod:`caishen.sim.selfplay.runner`) returns
``dict[str, np.ndarray]``, one row per hand, with the columns of the records
contract (:mod:`caishen.sim.rules.records`: the common columns and each rule
set's own, :func:`record_columns`, checked by :func:`check_chunk`).  This module

- states the columns the runner adds (:data:`RUN_COLUMNS`),
- turns a chunk into a ``pyarrow.Table`` with the run columns
  (:func:`chunk_table`; :func:`caishen.sim.selfplay.manifest.commit_chunk` writes it
  atomically with its identity and records it),
- states what every chunk *file* must hold when it is read back
  (:func:`file_columns`: the run columns, the contract and the columns a
  match's or a sweep's chunk function adds, :data:`CHUNK_FN_COLUMNS`).

A run's verified chunks are read back by :mod:`caishen.sim.selfplay.stream`
(:func:`caishen.sim.selfplay.stream.read_run`: one ``pandas.DataFrame``).

File layout of a run directory (see :mod:`caishen.sim.selfplay.runner`)::

    RUN_DIR/run.json                     the run's configuration, written first
    RUN_DIR/chunks/chunk-00012.parquet   one file per finished chunk
    RUN_DIR/summary.json, summary.csv    the summary table (caishen.sim.analysis.summary)

``caishen.read_run(RUN_DIR)`` reads the run's finished chunks as one table, the
coded columns read as words (:mod:`caishen.sim.analysis.run_table`; the
columns: ``docs/schema.md``).  ``pandas.read_parquet(RUN_DIR / "chunks")`` (or
DuckDB's ``read_parquet('RUN_DIR/chunks/*.parquet')``) reads the stored codes
of every file in the folder, and fails on a file there that is no chunk;
temporary files start with a dot, which pyarrow's dataset reader skips.
"""

from __future__ import annotations

import os
from pathlib import Path

import numpy as np
import pyarrow as pa

from caishen.sim.rules.records import SEATS, check_chunk, record_columns  # noqa: F401  (the records contract)

#: columns the runner adds in front of the engine's columns
RUN_COLUMNS: tuple[tuple[str, np.dtype], ...] = (
    ("seed", np.dtype(np.int64)),  # the run's root seed (--seed)
    ("chunk", np.dtype(np.int32)),  # chunk index 0..n_chunks-1
    ("hand_id", np.dtype(np.int64)),  # global hand index: chunk * chunk_size + hand
)

CHUNKS_DIR = "chunks"

#: contract columns renamed since a run could be written, new name -> old name: a chunk with the old name is
#: refused as foreign, and the reason says it was written before the rename (rerun it with this version)
RENAMED_COLUMNS: dict[str, str] = {"hand_flags": "flags"}  # pandas.DataFrame.flags shadowed df.flags (issue 28)

#: the columns that the analysis reads beyond the rule set's records, by the chunk function that adds them
#: (named, never imported: a run.json's chunk_fn is data): a match's seatings (caishen.sim.analysis.arena) and a
#: sweep's hero seat (caishen.sim.analysis.study)
_ARENA_COLUMNS: tuple[tuple[str, np.dtype], ...] = (
    ("wall", np.dtype(np.int64)),
    ("seating", np.dtype(np.int8)),
    ("wall_seed", np.dtype(np.int64)),
    *((f"policy_{s}", np.dtype(np.int8)) for s in SEATS),
)
CHUNK_FN_COLUMNS: dict[str, tuple[tuple[str, np.dtype], ...]] = {
    **{f"caishen.sim.analysis.arena:chunk_{s}": _ARENA_COLUMNS  # the match schedules (arena.CHUNKS)
       for s in ("2", "3", "4", "all_3", "all_4", "1v3_2", "1v3_3", "1v3_4", "interleaved_3")},
    "caishen.sim.analysis.study:sweep_chunk": (("hero", np.dtype(np.int8)),),
}


def file_columns(rules: str, chunk_fn: str | None = None) -> tuple[tuple[str, "pa.DataType"], ...]:
    """``((name, pyarrow type), ...)`` every chunk file of a run must hold (checked on read,
    :func:`caishen.sim.selfplay.manifest.verify`): :data:`RUN_COLUMNS`, the records contract of ``rules``
    (:func:`record_columns`) and the columns its chunk function adds (:data:`CHUNK_FN_COLUMNS`); an
    ``object`` column of the contract (J-9's ``patterns_s`` text) is an Arrow ``string``."""
    cols = (*RUN_COLUMNS, *record_columns(rules), *CHUNK_FN_COLUMNS.get(str(chunk_fn), ()))
    return tuple((name, pa.string() if dtype == np.dtype(object) else pa.from_numpy_dtype(dtype))
                 for name, dtype in cols)


def chunk_table(cols: dict[str, np.ndarray], rules: str, *, seed: int, chunk: int, chunk_size: int) -> pa.Table:
    """The Parquet table of one chunk: :data:`RUN_COLUMNS`, then the contract columns, then extras.

    ``hand_id = chunk * chunk_size + hand`` (global over the run).  Checks
    the chunk first (:func:`check_chunk`).
    """
    n = len(cols["hand"]) if "hand" in cols else 0
    check_chunk(cols, rules, n)
    names = [c for c, _ in record_columns(rules)]
    names += [c for c in cols if c not in names]
    data = {
        "seed": np.full(n, seed, np.int64),
        "chunk": np.full(n, chunk, np.int32),
        "hand_id": chunk * np.int64(chunk_size) + cols["hand"].astype(np.int64),
    }
    data.update((c, np.asarray(cols[c])) for c in names)
    return pa.table(data)


#: the columns whose values :func:`value_problem` checks (those of them that a file's layout has)
VALUE_COLUMNS = ("hand", "dealer", "winner", "winners_mask", "win_type", "discarder",
                 *(f"score_{s}" for s in SEATS))
#: the win-type codes of the records contract (-1 draw, 0 self_draw, 1 discard_win, 2 robbed_kong)
WIN_TYPES = (-1, 0, 1, 2)


def value_problem(batch: pa.RecordBatch, first_row: int = 0) -> str | None:
    """Why the rows of ``batch`` (a chunk file's rows from ``first_row`` on, some of :data:`VALUE_COLUMNS`)
    break the records contract's invariants, or None: ``hand`` counts the rows (0..n-1), ``dealer`` is a seat,
    ``win_type`` a code of :data:`WIN_TYPES`, ``winner`` a seat or -1 exactly on a draw, ``winners_mask`` the
    winners' bits (the first winner's among them, none on a draw), ``discarder`` a seat or -1, and the scores
    sum to zero (K-8.5).  A chunk file that breaks them was not written by caishen (its manifest line and
    identity may still match): :func:`caishen.sim.selfplay.manifest.verify` calls it foreign, so no summary
    reads it and a rerun replays it."""
    cols = {name: batch.column(name).to_numpy(zero_copy_only=False).astype(np.int64)
            for name in VALUE_COLUMNS if name in batch.schema.names}
    seat = np.arange(len(SEATS))
    scores = [f"score_{s}" for s in SEATS]
    checks = []  # (the columns involved, bad rows, why)
    if "hand" in cols:
        checks.append((["hand"], cols["hand"] != first_row + np.arange(batch.num_rows), "is not the row's index"))
    if "dealer" in cols:
        checks.append((["dealer"], ~np.isin(cols["dealer"], seat), "is no seat 0..3"))
    if "win_type" in cols:
        checks.append((["win_type"], ~np.isin(cols["win_type"], WIN_TYPES), f"is no win-type code {WIN_TYPES}"))
    if "winner" in cols:
        checks.append((["winner"], ~np.isin(cols["winner"], [-1, *seat]), "is no seat 0..3 nor -1 (a draw)"))
        if "win_type" in cols:
            checks.append((["winner", "win_type"], (cols["winner"] == -1) != (cols["win_type"] == -1),
                           "disagree on whether the hand was drawn"))
        if "winners_mask" in cols:
            mask, w = cols["winners_mask"], cols["winner"]
            won = (mask >> np.maximum(w, 0)) & 1
            checks.append((["winners_mask", "winner"], (mask > 15) | np.where(w >= 0, won == 0, mask != 0),
                           "disagree: the mask must hold the winners' bits, none on a draw"))
    if "discarder" in cols:
        checks.append((["discarder"], ~np.isin(cols["discarder"], [-1, *seat]), "is no seat 0..3 nor -1"))
    if all(c in cols for c in scores):
        checks.append((scores, sum(cols[c] for c in scores) != 0, "do not sum to zero (K-8.5)"))
    for names, bad, why in checks:
        if bad.any():
            j = int(np.flatnonzero(bad)[0])
            shown = ", ".join(f"{c} {int(cols[c][j])}" for c in names)
            return f"impossible values in row {first_row + j}: {shown}: {why}"
    return None


def chunk_path(run_dir: str | os.PathLike, chunk: int) -> Path:
    """``RUN_DIR/chunks/chunk-00012.parquet`` for chunk 12."""
    return Path(run_dir) / CHUNKS_DIR / f"chunk-{chunk:05d}.parquet"


def remove_stale_tmp(run_dir: str | os.PathLike) -> int:
    """Delete the temporary chunk files (``.chunk-*.tmp``, regular files) an interrupted run left in
    ``RUN_DIR/chunks``; returns how many."""
    d = Path(run_dir) / CHUNKS_DIR
    n = 0
    if d.is_dir():
        for e in os.scandir(d):
            if e.name.startswith(".chunk-") and e.name.endswith(".tmp") and e.is_file(follow_symlinks=False):
                Path(e.path).unlink(missing_ok=True)
                n += 1
    return n


def finished_chunks(run_dir: str | os.PathLike) -> set[int]:
    """Indices of the chunks whose Parquet file exists in ``run_dir``."""
    d = Path(run_dir) / CHUNKS_DIR
    out = set()
    if d.is_dir():
        for p in d.glob("chunk-*.parquet"):
            try:
                out.add(int(p.stem.split("-", 1)[1]))
            except ValueError:
                continue
    return out
