"""Per-hand records: the column contract, checks, and Parquet files of a run.

A chunk function (the engine's batch self-play, :mod:`caishen.sim.selfplay.runner`) returns
``dict[str, np.ndarray]``, one row per hand, with the columns of the records
contract (stated below as data, the rule sets' columns in
``caishen.sim.rules.<name>.records``; rule K-10 says what a Kaihua hand's record
must show).  This module

- states that contract as data (:data:`COMMON_COLUMNS` for every rule set,
  each rule set's own (its ``RuleSet.columns``, :func:`record_columns`),
  :data:`RUN_COLUMNS` added by the runner),
- checks a chunk against it (:func:`check_chunk`: names, lengths, dtypes,
  zero-sum scores K-8.5),
- turns a chunk into a ``pyarrow.Table`` with the run columns
  (:func:`chunk_table`; :func:`caishen.sim.selfplay.manifest.commit_chunk` writes it
  atomically with its identity and records it),
- states what every chunk *file* must hold when it is read back
  (:func:`file_columns`: the run columns, the contract and the columns a
  match's or a sweep's chunk function adds, :data:`CHUNK_FN_COLUMNS`), and
- reads a run's verified chunks back as one ``pandas.DataFrame`` (:func:`read_run`).

File layout of a run directory (see :mod:`caishen.sim.selfplay.runner`)::

    RUN_DIR/run.json                     the run's configuration, written first
    RUN_DIR/chunks/chunk-00012.parquet   one file per finished chunk
    RUN_DIR/summary.json, summary.csv    the summary table (caishen.sim.analysis.summary)

``pandas.read_parquet(RUN_DIR / "chunks")`` (or DuckDB's
``read_parquet('RUN_DIR/chunks/*.parquet')``) reads the chunks as one table;
temporary files start with a dot, which pyarrow's dataset reader skips.
"""

from __future__ import annotations

import os
from pathlib import Path

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq

N_SEATS = 4
SEATS = range(N_SEATS)

#: columns every rule set's records have (the summary's common part), in contract order
COMMON_COLUMNS: tuple[tuple[str, np.dtype], ...] = (
    ("hand", np.dtype(np.int64)),  # hand index within the chunk (0..n-1)
    ("match_hand", np.dtype(np.int32)),  # index of the hand inside its match
    ("dealer", np.dtype(np.int8)),
    ("winner", np.dtype(np.int8)),  # -1 for a drawn hand (流局); the first winner
    ("winners_mask", np.dtype(np.uint8)),  # bit s set if seat s won
    ("win_type", np.dtype(np.int8)),  # -1 draw, 0 self_draw, 1 discard, 2 robbed_kong
    ("discarder", np.dtype(np.int8)),  # discarder / robbed seat, -1 if none
)
#: columns after the rule-set specific block: scores and the hand's length
COMMON_TAIL_COLUMNS: tuple[tuple[str, np.dtype], ...] = (
    *((f"score_{s}", np.dtype(np.int32)) for s in SEATS),  # score change, sums to zero (K-8.5)
)
COMMON_END_COLUMNS: tuple[tuple[str, np.dtype], ...] = (
    ("turns", np.dtype(np.int16)),  # discards in the hand
    ("tiles_left", np.dtype(np.int16)),  # tiles left in the wall at the end
)

#: columns the runner adds in front of the engine's columns
RUN_COLUMNS: tuple[tuple[str, np.dtype], ...] = (
    ("seed", np.dtype(np.int64)),  # the run's root seed (--seed)
    ("chunk", np.dtype(np.int32)),  # chunk index 0..n_chunks-1
    ("hand_id", np.dtype(np.int64)),  # global hand index: chunk * chunk_size + hand
)

CHUNKS_DIR = "chunks"

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
    **{f"caishen.sim.analysis.arena:chunk_{n}": _ARENA_COLUMNS for n in (2, 3, 4)},
    "caishen.sim.analysis.study:sweep_chunk": (("hero", np.dtype(np.int8)),),
}


def record_columns(rules: str) -> tuple[tuple[str, np.dtype], ...]:
    """The contract's ``(name, dtype)`` record columns of rule set ``rules``.

    A registered rule set's own contract (``RuleSet.columns``: Kaihua's
    K-10 columns, Jiating's J-9 columns); a rule set without one (or not
    registered) must still provide the common columns.
    """
    from caishen.sim.rules import base as _rulesets

    own = _rulesets.get(rules).record_columns() if rules in _rulesets.names() else None
    return own or (*COMMON_COLUMNS, *COMMON_TAIL_COLUMNS, *COMMON_END_COLUMNS)


def file_columns(rules: str, chunk_fn: str | None = None) -> tuple[tuple[str, "pa.DataType"], ...]:
    """``((name, pyarrow type), ...)`` every chunk file of a run must hold (checked on read,
    :func:`caishen.sim.selfplay.manifest.verify`): :data:`RUN_COLUMNS`, the records contract of ``rules``
    (:func:`record_columns`) and the columns its chunk function adds (:data:`CHUNK_FN_COLUMNS`); an
    ``object`` column of the contract (Jiating's ``patterns_s`` text) is an Arrow ``string``."""
    cols = (*RUN_COLUMNS, *record_columns(rules), *CHUNK_FN_COLUMNS.get(str(chunk_fn), ()))
    return tuple((name, pa.string() if dtype == np.dtype(object) else pa.from_numpy_dtype(dtype))
                 for name, dtype in cols)


def check_chunk(cols: dict[str, np.ndarray], rules: str, n_hands: int) -> None:
    """Check one chunk's records against the contract.

    ``cols``: ``dict[str, np.ndarray]``, each of length ``n_hands``.  Every
    contract column of ``rules`` (:func:`record_columns`) must be present
    with its exact dtype; extra columns are allowed (new engine columns pass
    through to the Parquet files).  ``hand`` must be ``0..n_hands-1`` and
    the scores of every row must sum to zero (K-8.5).  Raises ``ValueError``
    naming the first bad column.
    """
    for name, dtype in record_columns(rules):
        if name not in cols:
            raise ValueError(f"chunk records lack the column {name!r} (records contract of {rules!r})")
        a = np.asarray(cols[name])
        if a.dtype != dtype:
            raise ValueError(f"chunk column {name!r} has dtype {a.dtype}, the records contract says {dtype}")
    for name, a in cols.items():
        a = np.asarray(a)
        if a.ndim != 1 or len(a) != n_hands:
            raise ValueError(f"chunk column {name!r} has shape {a.shape}, expected ({n_hands},)")
    if not np.array_equal(cols["hand"], np.arange(n_hands)):
        raise ValueError("chunk column 'hand' is not 0..n-1")
    total = sum(cols[f"score_{s}"].astype(np.int64) for s in SEATS)
    bad = np.flatnonzero(total)
    if len(bad):
        raise ValueError(f"scores do not sum to zero in hand {int(bad[0])} of the chunk (K-8.5): {int(total[bad[0]])}")


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


def read_run(run_dir: str | os.PathLike, columns: list[str] | None = None) -> pd.DataFrame:
    """All verified chunks of a run as one DataFrame, sorted by ``hand_id``.

    Only the chunk files that :func:`caishen.sim.selfplay.manifest.verify` finds ``ok``
    are read.  ``columns``: read only these.  Raises ``ValueError`` if the
    run has a damaged chunk (named; rerun its command to repair it) or no
    verified chunk.
    """
    from caishen.sim.selfplay import stream

    if not (Path(run_dir) / "run.json").exists():
        raise ValueError(f"no finished chunk in {str(run_dir)!r}: it is not a run directory (no run.json)")
    files, check = stream.verified_chunk_files(run_dir)
    if check.problems:
        raise ValueError(f"{str(run_dir)!r} has damaged chunks: " + "; ".join(check.describe(5))
                         + "; rerun its command to replay them")
    if not files:
        raise ValueError(f"no finished chunk in {str(run_dir)!r} (expected "
                         f"{str(Path(run_dir) / CHUNKS_DIR)}/chunk-*.parquet with a manifest line)")
    if columns is not None and "hand_id" not in columns:
        columns = [*columns, "hand_id"]
    df = pd.concat([pq.read_table(f, columns=columns).to_pandas() for f in files], ignore_index=True)
    return df.sort_values("hand_id", kind="stable").reset_index(drop=True)
