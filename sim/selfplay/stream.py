"""Streaming reads of a run's Parquet chunks: record batches in bounded memory (pyarrow datasets).

The summary (:func:`caishen.sim.analysis.summary.summarize_run`, ``caishen report``) and any
other table over a whole run (matches, sweeps) reduce the records batch by
batch instead of loading them: :func:`record_batches` yields
``pyarrow.RecordBatch`` es of at most ``batch_size`` rows of the chosen
columns from the verified chunk files (:func:`verified_chunk_files`), read
by ``pyarrow.dataset``'s scanner with a small read-ahead, so the memory in
use depends on the batch size and the number of columns, never on the
number of hands::

    from caishen.sim.selfplay import stream
    from caishen.sim.analysis import summary
    files, check = stream.verified_chunk_files("runs/r1")
    tally = summary.SummaryTally(stream.column_names(files), policies)  # unit="match": intervals over matches
    for batch in stream.record_batches(files, tally.columns()):
        tally.update(batch)
    rows, defs = tally.summary()

:func:`read_run` reads a whole (small) run as one ``pandas.DataFrame``.
Only chunk files that :func:`caishen.sim.selfplay.manifest.verify` found ``ok`` are read: a
truncated or foreign file is named by the verification, never read into a
statistic (and never stops the scan with pyarrow's "magic bytes" error).
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path

import pandas as pd
import pyarrow as pa
import pyarrow.dataset as ds
import pyarrow.parquet as pq

from caishen.sim.selfplay import manifest, records

#: rows per record batch (64 Ki: a few MB per column read)
BATCH_SIZE = 1 << 16
#: files per dataset scan: a pyarrow dataset keeps the Parquet metadata of every file it has read
#: (about 90 KB per chunk file of the records here, measured), so one dataset over 10,000 chunk
#: files would grow to ~1 GB; a new dataset per group of files bounds it
FILES_PER_SCAN = 256


def verified_chunk_files(run_dir: str | os.PathLike, run_json: dict | None = None,
                         checksums: bool = True) -> tuple[list[Path], "object"]:
    """``(files, verification)``: the paths of the run's ``ok`` chunks in chunk order, and the
    :class:`caishen.sim.selfplay.manifest.Verification` that chose them.  Raises ``ValueError`` if ``run_dir``
    is not a run directory."""
    check = manifest.verify(run_dir, run_json, checksums=checksums)
    return [records.chunk_path(run_dir, i) for i in check.ok], check


def column_names(files: list[Path]) -> list[str]:
    """The column names of the chunk files (the first file's schema); ``ValueError`` if there is none."""
    if not files:
        raise ValueError("no verified chunk to read")
    return list(pq.read_schema(files[0]).names)


def record_batches(files: list[str | os.PathLike], columns: list[str],
                   batch_size: int = BATCH_SIZE) -> Iterator[pa.RecordBatch]:
    """The rows of ``files`` (Parquet, one schema) as record batches of ``columns``, file by file.

    Memory: the scanner reads ahead at most two files and four batches, and
    a dataset spans at most :data:`FILES_PER_SCAN` files (then the next
    group gets a new one).  Rows come in file order, and in row order within
    a file.
    """
    files = [str(f) for f in files]
    for start in range(0, len(files), FILES_PER_SCAN):
        dataset = ds.dataset(files[start:start + FILES_PER_SCAN], format="parquet")
        yield from dataset.to_batches(columns=list(columns), batch_size=int(batch_size), batch_readahead=4,
                                      fragment_readahead=2, use_threads=True)
        del dataset


def read_run(run_dir: str | os.PathLike, columns: list[str] | None = None) -> pd.DataFrame:
    """All verified chunks of a run as one DataFrame, sorted by ``hand_id``.

    Only the chunk files that :func:`caishen.sim.selfplay.manifest.verify` finds ``ok``
    are read.  ``columns``: read only these.  Raises ``ValueError`` if the
    run has a damaged chunk (named; rerun its command to repair it) or no
    verified chunk.
    """
    if not (Path(run_dir) / "run.json").exists():
        raise ValueError(f"no finished chunk in {str(run_dir)!r}: it is not a run directory (no run.json)")
    files, check = verified_chunk_files(run_dir)
    if check.problems:
        raise ValueError(f"{str(run_dir)!r} has damaged chunks: " + "; ".join(check.describe(5))
                         + "; rerun its command to replay them")
    if not files:
        raise ValueError(f"no finished chunk in {str(run_dir)!r} (expected "
                         f"{str(Path(run_dir) / records.CHUNKS_DIR)}/chunk-*.parquet with a manifest line)")
    if columns is not None and "hand_id" not in columns:
        columns = [*columns, "hand_id"]
    df = pd.concat([pq.read_table(f, columns=columns).to_pandas() for f in files], ignore_index=True)
    return df.sort_values("hand_id", kind="stable").reset_index(drop=True)
