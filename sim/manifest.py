"""The manifest of a run directory: each finished chunk's row count and checksum, and their verification.

A chunk file is committed in four steps (:func:`commit_chunk`): the Parquet
bytes are built in memory and hashed (sha256), written to a dot-prefixed
temporary file and fsynced, renamed into place (atomic; the directory is
fsynced too), and then one line is appended to ``RUN_DIR/manifest.jsonl``
and fsynced::

    {"chunk": 12, "rows": 10000, "bytes": 312345, "sha256": "9f2c..."}

The manifest is append-only (a chunk replayed later gets a new line; the
last line of a chunk wins; a torn last line from a crash is ignored), so a
crash at any point leaves either no file, or a file without its line
("unrecorded": replayed on resume), or a file with its line.

:func:`verify` checks every chunk of a run against the manifest and sorts
it into one of

- ``ok``: the file exists and its size and sha256 are the recorded ones;
- ``missing``: recorded, but the file is gone;
- ``short``: the file is shorter than recorded and does not read (a copy
  or a write cut short), or reads with fewer rows than recorded;
- ``corrupt``: not a readable Parquet file (damaged bytes);
- ``foreign``: a readable Parquet file that is not the recorded one: rows
  of another run (its ``seed`` / ``chunk`` columns say which), or another
  number of rows, or other contents (checksum differs);
- ``unrecorded``: a file without a manifest line (the run stopped between
  the rename and the manifest line, or the file was put there by hand);
- ``not_played``: neither a file nor a line (the run has not got there).

Every chunk is reproducible from its seed (:func:`caishen.sim.runner.chunk_seeds`),
so ``caishen simulate`` with the same arguments (or ``caishen simulate
--resume RUN_DIR``) replays exactly the chunks that are not ``ok``; the
summaries (``caishen report``) read only the ``ok`` ones and name the rest.

A run directory written before the manifest existed (``run.json`` format 1)
has no manifest: its chunk files count as ``ok`` when their Parquet footer
reads (``legacy`` is then True: no checksums were recorded).
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
import os
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq

from caishen.sim import records

MANIFEST = "manifest.jsonl"
#: the chunk states of :func:`verify`, in the order reports list them
PROBLEMS = ("missing", "short", "corrupt", "foreign", "unrecorded")


def manifest_path(run_dir: str | os.PathLike) -> Path:
    """``RUN_DIR/manifest.jsonl``."""
    return Path(run_dir) / MANIFEST


def _fsync_dir(path: Path) -> None:
    """fsync a directory so that a rename inside it survives a power cut (POSIX; a no-op elsewhere)."""
    try:
        fd = os.open(path, os.O_RDONLY)
    except OSError:
        return
    try:
        os.fsync(fd)
    except OSError:
        pass
    finally:
        os.close(fd)


def parquet_bytes(table: pa.Table) -> bytes:
    """The Parquet file of ``table`` (zstd, as every chunk file) as bytes."""
    sink = pa.BufferOutputStream()
    pq.write_table(table, sink, compression="zstd")
    return sink.getvalue().to_pybytes()


def commit_chunk(run_dir: str | os.PathLike, chunk: int, table: pa.Table) -> dict:
    """Write chunk ``chunk`` of a run atomically and record it in the manifest.

    ``table``: the chunk's rows (:func:`caishen.sim.records.chunk_table`).  Steps:
    bytes and sha256 in memory, a dot-prefixed temporary file (fsync),
    ``os.replace`` onto ``chunks/chunk-NNNNN.parquet`` (directory fsync),
    then the manifest line (fsync).  Returns the manifest entry.  An
    ``OSError`` (a full disk: ``ENOSPC``) leaves no temporary file behind
    and no manifest line for the chunk; it propagates to the caller.
    """
    path = records.chunk_path(run_dir, chunk)
    path.parent.mkdir(parents=True, exist_ok=True)
    data = parquet_bytes(table)
    entry = {"chunk": int(chunk), "rows": int(table.num_rows), "bytes": len(data),
             "sha256": hashlib.sha256(data).hexdigest()}
    tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    try:
        with open(tmp, "wb") as f:
            f.write(data)
            f.flush()
            os.fsync(f.fileno())
        os.replace(tmp, path)
    finally:
        if tmp.exists():
            tmp.unlink()
    _fsync_dir(path.parent)
    append_entry(run_dir, entry)
    return entry


def append_entry(run_dir: str | os.PathLike, entry: dict) -> None:
    """Append one manifest line (``O_APPEND``, fsync).  A torn line from an
    earlier crash is first closed with a newline, so that it cannot swallow this one."""
    p = manifest_path(run_dir)
    line = (json.dumps(entry, sort_keys=True) + "\n").encode()
    with open(p, "ab") as f:
        if f.tell() > 0:
            with open(p, "rb") as r:
                r.seek(-1, os.SEEK_END)
                if r.read(1) != b"\n":
                    line = b"\n" + line
        f.write(line)
        f.flush()
        os.fsync(f.fileno())


def read_manifest(run_dir: str | os.PathLike) -> dict[int, dict] | None:
    """The manifest's entries by chunk (the last line of a chunk wins); None if the run has no manifest.

    Lines that do not parse (a line torn by a crash) are skipped.
    """
    p = manifest_path(run_dir)
    if not p.exists():
        return None
    out: dict[int, dict] = {}
    with open(p, "rb") as f:
        for raw in f:
            try:
                e = json.loads(raw)
                i = e["chunk"]
                if isinstance(i, int) and not isinstance(i, bool) and {"rows", "bytes", "sha256"} <= set(e):
                    out[i] = e
            except (ValueError, KeyError, TypeError):
                continue
    return out


def file_sha256(path: str | os.PathLike) -> tuple[int, str]:
    """``(size in bytes, sha256 hex)`` of a file, read in 1 MiB blocks."""
    h = hashlib.sha256()
    n = 0
    with open(path, "rb") as f:
        while block := f.read(1 << 20):
            h.update(block)
            n += len(block)
    return n, h.hexdigest()


@dataclasses.dataclass
class Verification:
    """What :func:`verify` found: chunk indices by state, and a reason per problem chunk.

    ``ok`` and ``not_played`` are sorted lists of chunk indices; ``problems``
    maps each chunk that is missing, short, corrupt, foreign or unrecorded
    to ``(state, reason)``; ``stray`` lists chunk files whose index is not a
    chunk of the run (ignored); ``legacy``: the run has no manifest.
    """

    n_chunks: int
    ok: list[int]
    not_played: list[int]
    problems: dict[int, tuple[str, str]]
    stray: list[str]
    legacy: bool = False

    @property
    def to_replay(self) -> list[int]:
        """Every chunk that ``caishen simulate`` (re)plays: the problems and the chunks not played yet."""
        return sorted([*self.problems, *self.not_played])

    @property
    def complete(self) -> bool:
        return len(self.ok) == self.n_chunks

    def by_state(self, state: str) -> list[int]:
        return sorted(i for i, (s, _) in self.problems.items() if s == state)

    def describe(self, limit: int = 20) -> list[str]:
        """One line per problem chunk (at most ``limit``, then a count), e.g.
        ``chunk 12: short (truncated: 1000 of 312345 bytes)``."""
        lines = []
        for i in sorted(self.problems)[:limit]:
            state, why = self.problems[i]
            lines.append(f"chunk {i}: {state} ({why})")
        if len(self.problems) > limit:
            lines.append(f"... and {len(self.problems) - limit} more problem chunk(s)")
        if self.stray:
            lines.append(f"ignored {len(self.stray)} file(s) that are no chunk of this run: "
                         + ", ".join(self.stray[:5]) + (" ..." if len(self.stray) > 5 else ""))
        return lines


def _inspect_wrong(path: Path, chunk: int, seed: int, entry: dict, size: int) -> tuple[str, str]:
    """Classify a chunk file whose bytes are not the recorded ones."""
    try:
        meta = pq.read_metadata(path)
        t = pq.read_table(path, columns=["seed", "chunk"]) if meta.num_rows else None
    except Exception as e:  # pyarrow raises several types for a damaged file
        if size < entry["bytes"]:
            return "short", f"truncated: {size} of {entry['bytes']} bytes"
        return "corrupt", f"not a readable Parquet file: {str(e)[:80]}"
    if t is not None and t.num_rows:
        s, c = int(t.column("seed")[0].as_py()), int(t.column("chunk")[0].as_py())
        if (s, c) != (int(seed), chunk):
            return "foreign", f"rows of seed {s} chunk {c}, not of seed {seed} chunk {chunk}"
    if meta.num_rows != entry["rows"]:
        state = "short" if meta.num_rows < entry["rows"] else "foreign"
        return state, f"{meta.num_rows} rows, recorded {entry['rows']}"
    return "foreign", f"another file: sha256 differs from the recorded one ({size} bytes, recorded {entry['bytes']})"


def verify(run_dir: str | os.PathLike, run_json: dict | None = None, checksums: bool = True) -> Verification:
    """Check every chunk file of a run against its manifest (see the module docstring).

    ``run_json``: the run's configuration (read from ``run_dir`` when None);
    ``checksums``: hash every file (False: sizes only, for a quick look).
    Raises ``ValueError`` if ``run_dir`` is not a run directory.
    """
    from caishen.sim import runner

    run_dir = Path(run_dir)
    meta = run_json if run_json is not None else runner.read_run_json(run_dir)
    n_chunks, seed = int(meta["n_chunks"]), int(meta["seed"])
    chunk_size, games = int(meta["chunk_size"]), int(meta["games"])
    files = {}
    stray = []
    d = run_dir / records.CHUNKS_DIR
    if d.is_dir():
        for p in d.glob("chunk-*.parquet"):
            try:
                i = int(p.stem.split("-", 1)[1])
            except ValueError:
                stray.append(p.name)
                continue
            if 0 <= i < n_chunks and p.name == records.chunk_path(run_dir, i).name:
                files[i] = p
            else:
                stray.append(p.name)
    manifest = read_manifest(run_dir)
    legacy = manifest is None
    ok, not_played, problems = [], [], {}
    for i in range(n_chunks):
        p = files.get(i)
        if legacy:
            if p is None:
                not_played.append(i)
                continue
            try:
                rows = pq.read_metadata(p).num_rows
            except Exception as e:
                problems[i] = ("corrupt", f"not a readable Parquet file: {str(e)[:80]}")
                continue
            want = min(chunk_size, games - i * chunk_size)
            if rows != want:
                problems[i] = ("short" if rows < want else "foreign", f"{rows} rows, expected {want}")
            else:
                ok.append(i)
            continue
        entry = manifest.get(i)
        if entry is None:
            if p is None:
                not_played.append(i)
            else:
                problems[i] = ("unrecorded", "a file without a manifest line: the run stopped before recording "
                               "it, or it was put there by hand")
            continue
        if p is None:
            problems[i] = ("missing", "recorded in the manifest, the file is gone")
            continue
        size = p.stat().st_size
        if size == entry["bytes"] and (not checksums or file_sha256(p)[1] == entry["sha256"]):
            ok.append(i)
        else:
            problems[i] = _inspect_wrong(p, i, seed, entry, size)
    return Verification(n_chunks, ok, not_played, problems, sorted(stray), legacy)
