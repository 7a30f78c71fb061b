"""The manifest of a run directory: each finished chunk's row count and checksum, and their verification.

A chunk file is committed in four steps (:func:`commit_chunk`): the Parquet
bytes are built in memory with the chunk's identity in the file's key-value
metadata (``caishen.chunk``: the run's seed, the chunk index and the digest
of the run's configuration, :class:`Layout`) and hashed (sha256), written to
a new dot-prefixed temporary file (never through a link) and fsynced,
renamed into place (atomic; the directory is fsynced too), and then one line
is appended to ``RUN_DIR/manifest.jsonl`` and fsynced::

    {"bytes": 312345, "chunk": 12, "rows": 10000, "sha256": "9f2c..."}

The manifest is append-only (a chunk replayed later gets a new line; the
last line of a chunk wins).  A line that is not such an entry -- torn by a
crash, too long (:data:`MAX_LINE`), nested, of other keys or of values out
of bounds -- is a *damaged line*, handled like a damaged chunk: never
fatal, never counted, named (:attr:`Verification.damaged_lines`: the file and
its line number, in ``caishen report`` and on resume), a chunk it recorded
is unrecorded and replayed, and the next run in the directory drops it
(:func:`drop_damaged_lines`).  So a crash at any point leaves either no file, or a file without
its line ("unrecorded": replayed on resume), or a file with its line.  A
run whose run.json says it keeps a manifest (format 2 and later) is never
read as a legacy run: without ``manifest.jsonl`` every chunk file in it is
unrecorded.

:func:`verify` checks every chunk of a run against the manifest and sorts
it into one of

- ``ok``: the file is a regular file whose size and sha256 are the
  recorded ones, and whose footer says it is this run's chunk: its identity
  (format 3), the ``seed`` / ``chunk`` columns (their statistics), the row
  count, and every column of the records contract with its exact type and
  without nulls (:attr:`Layout.columns`);
- ``missing``: recorded, but the file is gone;
- ``short``: the file is shorter than recorded and does not read (a copy
  or a write cut short), or reads with fewer rows than recorded;
- ``corrupt``: not a readable Parquet file (damaged bytes), or not a
  regular file at all (a FIFO, a directory, a symbolic link);
- ``foreign``: a readable Parquet file that is not this run's chunk: rows
  of another run (its identity or its ``seed`` / ``chunk`` columns say
  which), another number of rows, columns that break the records
  contract, values that break its invariants (a full verification of a
  run's hand records: zero-sum scores, win-type codes, seats,
  :func:`caishen.sim.selfplay.records.value_problem` -- so a crafted file
  with a matching manifest line and identity is still named and
  replayed), or other contents (checksum differs);
- ``unrecorded``: a file without a manifest line (the run stopped between
  the rename and the manifest line, or the file was put there by hand);
- ``not_played``: neither a file nor a line (the run has not got there).

Every chunk is reproducible from its seed (:func:`caishen.sim.selfplay.runner.chunk_seeds`),
so ``caishen simulate`` with the same arguments (or ``caishen simulate
--resume RUN_DIR``) replays exactly the chunks that are not ``ok``; the
summaries (``caishen report``) read only the ``ok`` ones and name the rest.

A run directory written before the manifest existed (``run.json`` format 1)
has no manifest: its chunk files count as ``ok`` when their footer passes
the checks above (``legacy`` is then True: no checksums were recorded).
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
import os
import re
import struct
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq

from caishen.sim import safeio
from caishen.sim.selfplay import records, rundir
from caishen.sim.selfplay.rundir import Layout

MANIFEST = "manifest.jsonl"
#: the chunk states of :func:`verify`, in the order reports list them
PROBLEMS = ("missing", "short", "corrupt", "foreign", "unrecorded")
#: the key of a chunk file's identity in its Parquet key-value metadata
IDENTITY_KEY = b"caishen.chunk"
#: bytes of one manifest line at most (an entry is about 110); a longer line is damaged
MAX_LINE = 1024
#: bytes of a whole manifest at most (a run writes ~110 per chunk and replay)
MAX_MANIFEST = 256 << 20
#: bytes of a chunk file at most, and of its Parquet footer
MAX_CHUNK_BYTES = 4 << 30
MAX_FOOTER = 16 << 20
#: rows of a chunk at most (a study chunk holds several decision points per hand)
MAX_ROWS = 10**9
_SHA256 = re.compile(r"[0-9a-f]{64}")


def manifest_path(run_dir: str | os.PathLike) -> Path:
    """``RUN_DIR/manifest.jsonl``."""
    return Path(run_dir) / MANIFEST


def with_identity(table: pa.Table, layout: Layout, chunk: int) -> pa.Table:
    """``table`` with chunk ``chunk``'s identity (:meth:`Layout.identity`) in its schema metadata."""
    meta = dict(table.schema.metadata or {})
    meta[IDENTITY_KEY] = json.dumps(layout.identity(chunk), sort_keys=True).encode()
    return table.replace_schema_metadata(meta)


def parquet_bytes(table: pa.Table) -> bytes:
    """The Parquet file of ``table`` (zstd, as every chunk file) as bytes."""
    sink = pa.BufferOutputStream()
    pq.write_table(table, sink, compression="zstd")
    return sink.getvalue().to_pybytes()


def commit_chunk(run_dir: str | os.PathLike, chunk: int, table: pa.Table, layout: Layout | None = None) -> dict:
    """Write chunk ``chunk`` of a run atomically and record it in the manifest.

    ``table``: the chunk's rows (:func:`caishen.sim.selfplay.records.chunk_table`);
    ``layout``: the run's (its identity goes into the file's metadata; None:
    none).  Steps: bytes and sha256 in memory, a new dot-prefixed temporary
    file (fsync), ``os.replace`` onto ``chunks/chunk-NNNNN.parquet``
    (directory fsync), then the manifest line (fsync).  Returns the
    manifest entry.  An ``OSError`` (a full disk: ``ENOSPC``) leaves no
    temporary file behind and no manifest line for the chunk; it propagates
    to the caller.
    """
    path = records.chunk_path(run_dir, chunk)
    if layout is not None:
        table = with_identity(table, layout, chunk)
    data = parquet_bytes(table)
    entry = {"chunk": int(chunk), "rows": int(table.num_rows), "bytes": len(data),
             "sha256": hashlib.sha256(data).hexdigest()}
    tmp = safeio.temp_path(path)
    try:
        with open(tmp, "wb", opener=safeio.create_new) as f:
            f.write(data)
            safeio.sync(f)
        safeio.commit(tmp, path, owned=True)  # the run's lock is held: a FIFO left at a chunk's name is replaced
    finally:
        safeio.discard(tmp)
    append_entry(run_dir, entry)
    return entry


def append_entry(run_dir: str | os.PathLike, entry: dict) -> None:
    """Append one manifest line (``O_APPEND``, never through a link, fsync).  A torn line from an
    earlier crash is first closed with a newline, so that it cannot swallow this one."""
    p = manifest_path(run_dir)
    line = (json.dumps(entry, sort_keys=True) + "\n").encode()
    with open(p, "ab", opener=safeio.nofollow) as f:
        if f.tell() > 0:
            with open(p, "rb", opener=safeio.nofollow) as r:
                r.seek(-1, os.SEEK_END)
                if r.read(1) != b"\n":
                    line = b"\n" + line
        f.write(line)
        safeio.sync(f)


def _int_in(v, lo: int, hi: int) -> bool:
    return isinstance(v, int) and not isinstance(v, bool) and lo <= v <= hi


def parse_entry(raw: bytes, n_chunks: int) -> dict | None:
    """The manifest entry of one line, or None when the line is damaged (not JSON, nested, other keys,
    a value of the wrong type or out of bounds: a chunk index outside ``0..n_chunks-1``, rows, bytes)."""
    try:
        e = safeio.parse_json(raw)
    except ValueError:
        return None
    if not isinstance(e, dict) or set(e) != {"chunk", "rows", "bytes", "sha256"}:
        return None
    if not (_int_in(e["chunk"], 0, n_chunks - 1) and _int_in(e["rows"], 0, MAX_ROWS)
            and _int_in(e["bytes"], 1, MAX_CHUNK_BYTES) and isinstance(e["sha256"], str)
            and _SHA256.fullmatch(e["sha256"])):
        return None
    return e


def _lines(f, limit: int):
    """The lines of a binary file, each at most ``limit`` bytes; a longer line is read in pieces and
    yielded as ``None`` (damaged), so a huge line never sits in memory."""
    while True:
        line = f.readline(limit + 1)
        if not line:
            return
        if len(line) > limit and not line.endswith(b"\n"):
            while line and not line.endswith(b"\n"):
                line = f.readline(1 << 16)
            yield None
            continue
        yield line


def damage(raw: bytes | None, n_chunks: int) -> str:
    """Why the manifest line ``raw`` (None: longer than :data:`MAX_LINE`) is no entry (:func:`parse_entry`)."""
    if raw is None:
        return f"longer than {MAX_LINE} bytes"
    try:
        e = safeio.parse_json(raw)
    except ValueError:
        return "not JSON: a line torn by a crash, or not written by caishen"
    if not isinstance(e, dict) or set(e) != {"chunk", "rows", "bytes", "sha256"}:
        return "not an entry of the keys bytes, chunk, rows, sha256"
    return f"a value of the wrong type or out of bounds (chunk 0..{n_chunks - 1}, rows, bytes, sha256)"


def read_manifest(run_dir: str | os.PathLike, n_chunks: int = MAX_ROWS,
                  damaged: list | None = None) -> dict[int, dict] | None:
    """The manifest's entries by chunk (the last good line of a chunk wins); None if the run has no manifest.

    Damaged lines (:func:`parse_entry`) are skipped: their chunks count as
    unrecorded; ``damaged``, when given, gets ``(line number from 1, why)``
    for each (an empty line aside: it records nothing).  Raises :class:`caishen.sim.safeio.FileError` when the
    manifest is a link, not a regular file, or larger than
    :data:`MAX_MANIFEST`.
    """
    p = manifest_path(run_dir)
    try:
        f = safeio.open_regular(p)
    except FileNotFoundError:
        return None
    out: dict[int, dict] = {}
    with f:
        size = os.fstat(f.fileno()).st_size
        if size > MAX_MANIFEST:
            raise safeio.FileError(p, f"is {size:,} bytes, more than a run writes ({MAX_MANIFEST:,} at most); move "
                                      "it aside to replay every chunk")
        for n, raw in enumerate(_lines(f, MAX_LINE), 1):
            e = None if raw is None else parse_entry(raw, n_chunks)
            if e is not None:
                out[e["chunk"]] = e
            elif damaged is not None and (raw is None or raw.strip()):
                damaged.append((n, damage(raw, n_chunks)))
    return out


def drop_damaged_lines(run_dir: str | os.PathLike, n_chunks: int) -> list[tuple[int, str]]:
    """Rewrite the manifest without its damaged lines (atomically: a temporary file, fsync, rename), the
    good lines unchanged and in order, so that a damaged line is named once, not by every later report.
    Returns the dropped ``(line number, why)``; nothing is written when there are none.  The caller
    holds the run directory's lock (:func:`caishen.sim.selfplay.runner.run`)."""
    damaged: list[tuple[int, str]] = []
    if read_manifest(run_dir, n_chunks, damaged) is None or not damaged:
        return damaged
    p = manifest_path(run_dir)
    keep = []
    with safeio.open_regular(p) as f:
        for raw in _lines(f, MAX_LINE):
            if raw is not None and parse_entry(raw, n_chunks) is not None:
                keep.append(raw if raw.endswith(b"\n") else raw + b"\n")
    safeio.atomic_write(p, b"".join(keep))
    return damaged


def file_sha256(f) -> tuple[int, str]:
    """``(size in bytes, sha256 hex)`` of an open binary file (or a path), read in 1 MiB blocks."""
    if isinstance(f, (str, os.PathLike)):
        with safeio.open_regular(f) as g:
            return file_sha256(g)
    h = hashlib.sha256()
    n = 0
    f.seek(0)
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
    chunk of the run (ignored); ``legacy``: the run has no manifest;
    ``damaged_lines``: ``(line number, why)`` of each line of the manifest
    file ``manifest`` that is no entry (ignored: a chunk it recorded is among
    the problems as unrecorded).
    """

    n_chunks: int
    ok: list[int]
    not_played: list[int]
    problems: dict[int, tuple[str, str]]
    stray: list[str]
    legacy: bool = False
    damaged_lines: list[tuple[int, str]] = dataclasses.field(default_factory=list)
    manifest: str = MANIFEST

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
        for n, why in self.damaged_lines[:limit]:
            lines.append(f"{self.manifest} line {n}: a damaged entry, ignored ({why}); a chunk it recorded counts as "
                         "unrecorded and is replayed")
        if len(self.damaged_lines) > limit:
            lines.append(f"... and {len(self.damaged_lines) - limit} more damaged line(s) of {self.manifest}")
        if self.stray:
            lines.append(f"ignored {len(self.stray)} file(s) that are no chunk of this run: "
                         + ", ".join(self.stray[:5]) + (" ..." if len(self.stray) > 5 else ""))
        return lines


# ---------------------------------------------------------------------------
# the checks of one chunk file
# ---------------------------------------------------------------------------
def read_footer(f, size: int) -> pq.FileMetaData:
    """The Parquet footer of an open chunk file of ``size`` bytes; ``ValueError`` if it is none or larger
    than :data:`MAX_FOOTER` (a crafted footer length cannot make the read allocate without bound)."""
    if size < 12:
        raise ValueError(f"{size} bytes: too short for a Parquet file")
    f.seek(size - 8)
    tail = f.read(8)
    if tail[4:] != b"PAR1":
        raise ValueError("no Parquet footer (magic bytes missing)")
    n = struct.unpack("<I", tail[:4])[0]
    if n > min(MAX_FOOTER, size - 12):
        raise ValueError(f"a footer of {n:,} bytes in a file of {size:,}")
    f.seek(0)
    try:
        return pq.read_metadata(f)
    except Exception as e:  # pyarrow raises several types for a damaged file
        raise ValueError(str(e).splitlines()[0][:80] if str(e) else type(e).__name__) from None


def _stats(meta: pq.FileMetaData, name: str):
    """The statistics of column ``name`` in each row group (None where absent)."""
    j = meta.schema.names.index(name)
    return [meta.row_group(g).column(j).statistics for g in range(meta.num_row_groups)]


def _identity(meta: pq.FileMetaData) -> dict | None:
    raw = (meta.metadata or {}).get(IDENTITY_KEY)
    if raw is None or len(raw) > MAX_LINE:
        return None
    try:
        ident = safeio.parse_json(raw)
    except ValueError:
        return None
    return ident if isinstance(ident, dict) else None


def _seed_chunk(meta: pq.FileMetaData) -> tuple[int, int] | None:
    """The ``(seed, chunk)`` the file's rows say, when every row group's statistics give one value each."""
    names = meta.schema.names
    if "seed" not in names or "chunk" not in names or meta.num_rows == 0:
        return None
    out = []
    for name in ("seed", "chunk"):
        vals = {(s.min, s.max) for s in _stats(meta, name) if s is not None and s.has_min_max}
        if len(vals) != 1:
            return None
        lo, hi = vals.pop()
        if lo != hi:
            return None
        out.append(int(lo))
    return out[0], out[1]


def footer_problem(meta: pq.FileMetaData, layout: Layout, i: int, recorded_rows: int | None) -> tuple[str, str] | None:
    """``(state, reason)`` when the footer says the file is not chunk ``i`` of the run of ``layout``, else None.

    Checks, in order: the identity (format 3: seed, chunk, configuration
    digest), the ``seed`` / ``chunk`` columns' statistics, the row count
    (the layout's, else ``recorded_rows``), and every contract column (its
    exact type, null count 0 in the statistics of every row group).
    """
    ident = _identity(meta)
    want = layout.identity(i)
    if layout.digest is not None and ident != want:
        if ident is None:
            return "foreign", "no chunk identity in its metadata: not a chunk file of this run"
        if (ident.get("seed"), ident.get("chunk")) != (want["seed"], want["chunk"]):
            return "foreign", f"rows of seed {ident.get('seed')} chunk {ident.get('chunk')}, not of seed " \
                              f"{want['seed']} chunk {i}"
        return "foreign", "a chunk of another configuration (its configuration digest differs)"
    names = meta.schema.names
    if "seed" in names and "chunk" in names and meta.num_rows:
        sc = _seed_chunk(meta)
        if sc is None:
            return "foreign", "its seed / chunk columns do not hold one value each"
        if sc != (int(layout.seed), i):
            return "foreign", f"rows of seed {sc[0]} chunk {sc[1]}, not of seed {layout.seed} chunk {i}"
    want_rows = layout.rows(i)
    if want_rows is None:
        want_rows = recorded_rows
    if want_rows is not None and meta.num_rows != want_rows:
        state = "short" if meta.num_rows < want_rows else "foreign"
        return state, f"{meta.num_rows} rows, expected {want_rows}"
    try:
        schema = meta.schema.to_arrow_schema()
    except Exception:  # a footer pyarrow cannot map
        return "foreign", "a schema that is not Arrow's"
    for name, typ in layout.columns:
        j = schema.get_field_index(name)
        if j < 0:
            old = records.RENAMED_COLUMNS.get(name)
            if old is not None and schema.get_field_index(old) >= 0:
                return "foreign", f"lacks the column {name!r} of the records contract: written before {old!r} " \
                                  f"was renamed {name!r}"
            return "foreign", f"lacks the column {name!r} of the records contract"
        if schema.field(j).type != typ:
            return "foreign", f"column {name!r} is {schema.field(j).type}, the records contract says {typ}"
        if meta.num_rows and any(s is None or not s.has_null_count or s.null_count for s in _stats(meta, name)):
            return "foreign", f"column {name!r} holds nulls (or no statistics): not a chunk written by caishen"
    return None


def _inspect_wrong(f, layout: Layout, i: int, entry: dict, size: int) -> tuple[str, str]:
    """Classify a chunk file whose bytes are not the recorded ones."""
    try:
        meta = read_footer(f, size)
    except ValueError as e:
        if size < entry["bytes"]:
            return "short", f"truncated: {size} of {entry['bytes']} bytes"
        return "corrupt", f"not a readable Parquet file: {e}"
    bad = footer_problem(meta, layout, i, entry["rows"])
    if bad is not None:
        return bad
    return "foreign", f"another file: sha256 differs from the recorded one ({size} bytes, recorded {entry['bytes']})"


def _check_file(p: Path, layout: Layout, i: int, entry: dict | None, checksums: bool) -> tuple[str, str] | None:
    """None if the chunk file ``p`` is chunk ``i`` as recorded (``entry``; None: a legacy run), else its
    ``(state, reason)``."""
    try:
        f = safeio.open_regular(p)
    except FileNotFoundError:
        return "missing", "recorded in the manifest, the file is gone"
    except safeio.FileError as e:
        return "corrupt", str(e).split(": ", 1)[-1]
    with f:
        size = os.fstat(f.fileno()).st_size
        if size > MAX_CHUNK_BYTES:
            return "corrupt", f"{size:,} bytes, more than a chunk file holds"
        if entry is not None and (size != entry["bytes"] or (checksums and file_sha256(f)[1] != entry["sha256"])):
            return _inspect_wrong(f, layout, i, entry, size)
        try:
            meta = read_footer(f, size)
        except ValueError as e:
            return "corrupt", f"not a readable Parquet file: {e}"
        bad = footer_problem(meta, layout, i, None if entry is None else entry["rows"])
        if bad is None and checksums and layout.values:
            bad = _value_problem(f, meta)
        return bad


#: rows per batch of the value check (:func:`_value_problem`)
VALUE_BATCH = 1 << 16


def _value_problem(f, meta: pq.FileMetaData) -> tuple[str, str] | None:
    """``("foreign", why)`` when the rows of the open chunk file ``f`` (its footer ``meta`` already checked)
    break the records contract's invariants (:func:`caishen.sim.selfplay.records.value_problem`), read
    batch by batch in bounded memory; else None."""
    names = [c for c in records.VALUE_COLUMNS if c in meta.schema.names]
    if not names or not meta.num_rows:
        return None
    f.seek(0)
    try:
        start = 0
        for batch in pq.ParquetFile(f, metadata=meta).iter_batches(VALUE_BATCH, columns=names, use_threads=False):
            why = records.value_problem(batch, start)
            if why is not None:
                return "foreign", f"{why}: not a chunk written by caishen"
            start += batch.num_rows
    except Exception as e:  # noqa: BLE001 - pyarrow raises several types for damaged pages
        return "corrupt", f"not a readable Parquet file: {str(e).splitlines()[0][:80] if str(e) else type(e).__name__}"
    return None


def chunk_files(run_dir: str | os.PathLike, n_chunks: int) -> tuple[dict[int, Path], list[str]]:
    """``({chunk: path}, stray names)``: the chunk files in ``RUN_DIR/chunks`` (by name only) and the
    ``chunk-*.parquet`` names that are no chunk of a run of ``n_chunks``.  Raises
    :class:`caishen.sim.safeio.FileError` when ``chunks`` is a link or not a directory."""
    d = Path(run_dir) / records.CHUNKS_DIR
    files: dict[int, Path] = {}
    stray: list[str] = []
    if os.path.islink(d):
        raise safeio.FileError(d, "is a symbolic link; a run's chunks are never read through a link")
    if not d.exists():
        return files, stray
    if not d.is_dir():
        raise safeio.FileError(d, "is not a directory")
    for e in os.scandir(d):
        name = e.name
        if not (name.startswith("chunk-") and name.endswith(".parquet")):
            continue
        stem = name[len("chunk-"):-len(".parquet")]
        i = int(stem) if stem.isdigit() and len(stem) < 12 else -1
        if 0 <= i < n_chunks and name == records.chunk_path(run_dir, i).name:
            files[i] = d / name
        else:
            stray.append(name)
    return files, stray


def verify(run_dir: str | os.PathLike, run_json: dict | None = None, checksums: bool = True,
           layout: Layout | None = None) -> Verification:
    """Check every chunk file of a run against its manifest (see the module docstring).

    ``run_json``: the run's configuration (read from ``run_dir`` and
    validated when None); ``layout``: the chunk layout (default: that of
    ``run_json``, :func:`caishen.sim.selfplay.rundir.layout`); ``checksums``: hash
    every file (False: sizes and footers only, for a quick look).  Memory
    and time grow with the chunk files and the manifest's lines, never with
    the chunks not played yet beyond one list entry each.  Raises
    ``ValueError`` if ``run_dir`` is not a run directory.
    """
    if layout is None:
        layout = rundir.layout(run_json if run_json is not None else rundir.read_run_json(run_dir))
    run_dir = Path(run_dir)
    n_chunks = layout.n_chunks
    files, stray = chunk_files(run_dir, n_chunks)
    damaged: list[tuple[int, str]] = []
    entries = read_manifest(run_dir, n_chunks, damaged) if layout.manifest else None
    if layout.manifest and entries is None:
        entries = {}  # a run that keeps a manifest is never read as a legacy run
    ok, problems = [], {}
    for i in sorted(set(files) | set(entries or ())):
        p = files.get(i)
        entry = None if entries is None else entries.get(i)
        if entries is not None and entry is None:
            problems[i] = ("unrecorded", "a file without a manifest line: the run stopped before recording "
                           "it, or it was put there by hand")
            continue
        if p is None:
            problems[i] = ("missing", "recorded in the manifest, the file is gone")
            continue
        bad = _check_file(p, layout, i, entry, checksums)
        if bad is None:
            ok.append(i)
        else:
            problems[i] = bad
    seen = set(files) | set(entries or ())
    not_played = [i for i in range(n_chunks) if i not in seen]
    return Verification(n_chunks, ok, not_played, problems, sorted(stray), not layout.manifest, damaged,
                        str(manifest_path(run_dir)))
