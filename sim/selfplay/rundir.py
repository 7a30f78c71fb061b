"""The run directory: the one module that creates, reuses and resumes the directories of the tools.

Runs (``caishen simulate``), matches, ladders, sweeps and studies each keep
their work in a directory named by a *marker* file -- ``run.json``,
``ladder.json``, ``sweep.json``, ``study.json`` -- that is written first
(atomically, :func:`caishen.sim.safeio.write_json`) and says what the
directory holds.  A :class:`Kind` declares one such directory once (its
marker, how the marker is read and validated, how two of them differ, the
folders made after it); :func:`claim` is the one way in:

- ``out`` a file: ``ValueError`` (``... is not a directory; choose a new --out``);
- ``out`` a non-empty directory without the marker: ``ValueError``
  (``... is a non-empty directory without ladder.json; ...``), unless it
  holds only what a writer killed during its first marker write leaves (the
  lock, a temporary marker, empty folders of :attr:`Kind.subdirs`), which
  is cleared and written again (:func:`leftovers`);
- the OS lock ``OUT/.lock`` is taken (:class:`caishen.sim.safeio.DirLock`:
  a second writer is refused, ``... is in use by another running ...``)
  and ``out`` must hold no symbolic link (:func:`caishen.sim.safeio.refuse_links`);
- a stored marker is read and validated (a damaged one is a one-line
  :class:`caishen.sim.safeio.FileError` naming the file and field) and
  compared with the wanted one: another configuration is a ``ValueError``
  naming every difference (``... holds a different sweep: walls: ...``);
  the same one resumes (the caller then verifies its chunk files,
  :mod:`caishen.sim.selfplay.manifest`).  Keys that are analysis choices
  (:attr:`Kind.analysis_keys`, a sweep's baseline) may change: the marker
  is rewritten and the results they shaped (:attr:`Kind.stale`) removed.

A directory without a marker (the 飘 answer's, a training folder) is
claimed with :func:`workspace` (created, locked, no links).  Files are
written through :mod:`caishen.sim.safeio` (temporary file, fsync, rename),
never through a link.

The rest of the module is ``run.json``, the marker of a runner run: its
fields validated with bounds (:func:`read_run_json`) and the chunk layout
they imply (:func:`layout`), checked by :mod:`caishen.sim.selfplay.manifest`.
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
import os
import re
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path

from caishen.sim import safeio
from caishen.sim.rules.options import short_repr as _short_repr
from caishen.sim.selfplay import records

# ---------------------------------------------------------------------------
# any run directory: a marker file, claimed under a lock
# ---------------------------------------------------------------------------
#: what to do about an ``out`` that cannot take a new directory (the command's option)
NEW_OUT = "choose a new --out"


def differences(stored: dict, wanted: dict) -> list[str]:
    """The keys of ``wanted`` whose stored value differs (``created`` aside), one phrase each:
    ``"walls: directory has 100, requested 200"`` (the default of :attr:`Kind.differences`)."""
    wanted = _json_norm(wanted)
    return [f"{k}: directory has {_short_repr(stored.get(k))}, requested {_short_repr(v)}" for k, v in wanted.items()
            if k != "created" and stored.get(k) != v]


@dataclasses.dataclass(frozen=True)
class Kind:
    """One kind of run directory, declared once by the module that owns it (:func:`claim`).

    ``noun``: what it holds, in messages (``"sweep"``: ``... holds a
    different sweep``); ``marker``: its marker file (``"sweep.json"``);
    ``read``: ``read(out) -> dict``, the stored marker, validated (a
    ``ValueError`` naming the file and field when it is damaged);
    ``writer``: who holds the lock, in messages (``... is in use by another
    running simulation``; default ``noun``); ``differences``:
    ``differences(stored, wanted) -> [phrase, ...]`` (default
    :func:`differences`); ``subdirs``: folders made after the marker (a
    run's ``chunks``); ``analysis_keys``: marker keys that may change
    between two claims (the marker is rewritten and ``stale`` files
    removed); ``new_out``: the advice when ``out`` cannot take it.
    """

    noun: str
    marker: str
    read: Callable[[Path], dict]
    writer: str = ""
    differences: Callable[[dict, dict], list[str]] = differences
    subdirs: tuple[str, ...] = ()
    analysis_keys: tuple[str, ...] = ()
    stale: tuple[str, ...] = ()
    new_out: str = NEW_OUT

    def temp_name(self, name: str) -> bool:
        """True if ``name`` is a temporary file of an interrupted write of the marker (this version's
        ``.NAME.<pid>.<8 hex>.tmp`` and earlier versions' ``.NAME.tmp`` / ``.NAME.<pid>.tmp``)."""
        return re.fullmatch(rf"\.{re.escape(self.marker)}(\.[0-9]+(\.[0-9a-f]{{8}})?)?\.tmp", name) is not None


def read_marker(out: str | os.PathLike, kind_noun: str, marker: str, limit: int) -> tuple[dict, Path]:
    """``(the JSON object in OUT/marker, its path)``, read safely (:func:`caishen.sim.safeio.read_json`:
    never through a link, at most ``limit`` bytes); ``ValueError`` ``... is not a NOUN directory (no
    MARKER)`` when there is none, :class:`caishen.sim.safeio.FileError` naming the file when it is
    unreadable.  The caller validates the fields."""
    p = Path(out) / marker
    try:
        return safeio.read_json(p, limit, what=f"a {marker}"), p
    except FileNotFoundError:
        raise ValueError(f"{str(out)!r} is not a {kind_noun} directory (no {marker})") from None


def has_marker(out: str | os.PathLike, kind: Kind) -> bool:
    """True if ``out`` has an entry named ``kind``'s marker (a link counts: reading it is refused)."""
    p = Path(out) / kind.marker
    return p.exists() or p.is_symlink()


def leftovers(out: str | os.PathLike, kind: Kind) -> list[Path] | None:
    """What a writer killed during the first marker write leaves in ``out`` (a temporary marker, empty
    :attr:`Kind.subdirs`; the lock is kept), to be cleared; None if ``out`` holds anything else."""
    left = []
    for e in os.scandir(out):
        if e.name == safeio.DirLock.NAME:
            continue
        if kind.temp_name(e.name) and e.is_file(follow_symlinks=False):
            left.append(Path(e.path))
        elif e.name in kind.subdirs and e.is_dir(follow_symlinks=False) and not any(os.scandir(e.path)):
            left.append(Path(e.path))
        else:
            return None
    return left


def check_new(out: str | os.PathLike, kind: Kind) -> None:
    """``ValueError`` if ``out`` cannot be ``kind``'s directory: a file, or a non-empty directory without
    its marker that holds more than :func:`leftovers`.  Checked before anything is written in ``out``."""
    out = Path(out)
    if out.exists() and not out.is_dir():
        raise ValueError(f"{str(out)!r} is not a directory; {kind.new_out}")
    if out.is_dir() and not has_marker(out, kind) and leftovers(out, kind) is None:
        raise ValueError(f"{str(out)!r} is a non-empty directory without {kind.marker}; {kind.new_out}")


def prepare(out: str | os.PathLike, kind: Kind, wanted: dict) -> dict:
    """Write ``wanted`` as ``out``'s marker (then make :attr:`Kind.subdirs`), or check that the stored one
    is the same (:attr:`Kind.differences`); returns the stored marker.  ``ValueError`` naming every
    difference, or for an ``out`` that is not ``kind``'s (:func:`check_new`).  :func:`claim` calls it
    holding the lock."""
    out = Path(out)
    if has_marker(out, kind):
        stored = kind.read(out)
        fixed = {k: v for k, v in wanted.items() if k not in kind.analysis_keys}
        diffs = kind.differences(stored, fixed)
        if diffs:
            raise ValueError(f"{str(out)!r} holds a different {kind.noun}: " + "; ".join(diffs))
        if any(stored.get(k) != _json_norm(wanted.get(k)) for k in kind.analysis_keys):
            for name in kind.stale:
                safeio.discard(out / name)
            stored = {**stored, **{k: wanted[k] for k in kind.analysis_keys}}
            rewrite(out, kind, stored)
    else:
        check_new(out, kind)
        safeio.make_dir(out)
        for p in leftovers(out, kind) or ():
            (p.rmdir if p.is_dir() else p.unlink)()
        safeio.write_json(out / kind.marker, wanted)
        stored = wanted
    for d in kind.subdirs:
        safeio.make_dir(out / d)
    return stored


def rewrite(out: str | os.PathLike, kind: Kind, doc: dict) -> None:
    """Replace ``out``'s marker by ``doc`` (atomically; the caller holds the directory: :func:`workspace`),
    e.g. a ladder with one more bot."""
    safeio.write_json(Path(out) / kind.marker, doc)


@contextmanager
def workspace(out: str | os.PathLike, writer: str) -> Iterator[Path]:
    """Hold ``out`` (created if missing) for one ``writer``: its OS lock (:class:`caishen.sim.safeio.DirLock`;
    another writer is refused, naming ``writer``) and no symbolic link inside it
    (:func:`caishen.sim.safeio.refuse_links`).  Yields ``out`` as a ``Path``."""
    out = Path(out)
    if out.exists() and not out.is_dir():
        raise ValueError(f"{str(out)!r} is not a directory; {NEW_OUT}")
    safeio.make_dir(out)
    with safeio.DirLock(out, writer):
        safeio.refuse_links(out)
        yield out


@contextmanager
def claim(out: str | os.PathLike, kind: Kind, wanted: dict) -> Iterator[dict]:
    """Create or resume ``kind``'s directory ``out`` (module docstring) and hold it: yields the stored marker.

    ``out`` is checked before anything is written in it (:func:`check_new`),
    then locked for :attr:`Kind.writer` with no link inside
    (:func:`workspace`) and its marker written or compared (:func:`prepare`).
    Raises ``ValueError`` (one line naming the directory or file) for every
    refusal.
    """
    check_new(out, kind)
    with workspace(out, kind.writer or kind.noun) as d:
        yield prepare(d, kind, wanted)


# ---------------------------------------------------------------------------
# run.json: the marker of a runner run
# ---------------------------------------------------------------------------
N_SEATS = 4
#: version of the run-directory layout and of run.json (2: manifest.jsonl with checksums; 3: each chunk file
#: carries its identity, seed, chunk and configuration digest, in its Parquet metadata)
RUN_FORMAT = 3
RUN_JSON = "run.json"
#: bounds of a run (checked before anything is allocated or written, and on every run.json read): hands,
#: hands per chunk (a match's chunk: 10**6 walls x 4 seatings) and chunks -- each chunk's engine seed is
#: 32 bits, so past ~10**5 chunks two chunks would almost surely replay the same hands (chunk_seeds)
MAX_GAMES = 10**10
MAX_CHUNK_SIZE = 4 * 10**6
MAX_CHUNKS = 10**5
#: bytes of a run.json at most
MAX_RUN_JSON = 1 << 20
#: the keys of run.json that must agree when a run is resumed
CONFIG_KEYS = (
    "format",
    "rules",
    "options",
    "policies",
    "seed",
    "games",
    "chunk_size",
    "chunk_fn",
    "version",
    "source_digest",
    "bot_weights",
    "n_chunks",
)


@dataclasses.dataclass(frozen=True)
class Layout:
    """What the chunk files of one run must be (built from its run.json by
    :func:`caishen.sim.selfplay.runner.layout`, or from a study's study.json).

    ``n_chunks``: chunks of the run; ``seed``: its root seed (each chunk's
    ``seed`` column, when ``columns`` has one); ``chunk_size`` / ``games``:
    hands per chunk and in all, giving each chunk's row count (``games``
    None: rows vary, the manifest's count is checked); ``digest``: the
    configuration digest each file's identity must carry (None: files of a
    format without identity); ``columns``: ``((name, pyarrow type), ...)``
    every chunk must hold, with that exact type and no nulls; ``manifest``:
    False for a legacy run without one; ``values``: the rows are hand
    records, whose values must keep the records contract's invariants
    (:func:`caishen.sim.selfplay.records.value_problem`, checked on a full
    verification).
    """

    n_chunks: int
    seed: int
    chunk_size: int
    games: int | None
    digest: str | None
    columns: tuple
    manifest: bool = True
    values: bool = False

    def rows(self, i: int) -> int | None:
        """The rows chunk ``i`` must hold (None: any number)."""
        if self.games is None:
            return None
        return min(self.chunk_size, self.games - i * self.chunk_size)

    def identity(self, i: int) -> dict:
        """The identity of chunk ``i``: ``{"seed", "chunk", "config"}``."""
        return {"seed": int(self.seed), "chunk": int(i), "config": self.digest}



def _json_norm(x):
    return json.loads(json.dumps(x))


def config_differences(stored: dict, wanted: dict) -> list[str]:
    """Human-readable differences between two run.json dicts (only :data:`CONFIG_KEYS`).  Another rule set
    is the one difference named (its options, seed and sizes are another run's: a newcomer's error listed
    every option of both rule sets in 454 columns)."""
    out = []
    stored, wanted = _json_norm(stored), _json_norm(wanted)
    if stored.get("rules") != wanted.get("rules"):
        return [f"rules: run has {stored.get('rules')}, requested {wanted.get('rules')}"]
    for k in CONFIG_KEYS:
        a, b = stored.get(k), wanted.get(k)
        if a == b:
            continue
        if isinstance(a, dict) and isinstance(b, dict):
            for o in sorted(set(a) | set(b)):
                if a.get(o) != b.get(o):
                    out.append(f"option {o}: run has {a.get(o)!r}, requested {b.get(o)!r}")
        elif k == "bot_weights":
            if _json_norm(stored.get("policies")) != _json_norm(wanted.get("policies")):
                continue  # other bots have other weights: the policies' line says it
            out.append(f"the bots' weights differ (a bot's weights file, tuned: or learned:, changed since the run began): "
                       f"run has {a!r}, requested {b!r}")
        else:
            out.append(f"{k}: run has {a!r}, requested {b!r}")
    return out


def config_digest(run_json: dict) -> str:
    """sha256 (16 hex digits) of a run's configuration (its :data:`CONFIG_KEYS`, canonical JSON): the
    ``config`` of every chunk file's identity (:class:`caishen.sim.selfplay.manifest.Layout`)."""
    canon = json.dumps({k: run_json.get(k) for k in CONFIG_KEYS}, sort_keys=True, ensure_ascii=True,
                       separators=(",", ":"))
    return hashlib.sha256(canon.encode()).hexdigest()[:16]


def layout(run_json: dict) -> Layout:
    """The chunk layout of a run (a validated run.json, :func:`validate_run_json`): what each chunk file
    must be -- its rows, its identity (format 3), the columns of the rule set's records contract and of
    its chunk function (:func:`caishen.sim.selfplay.records.file_columns`) -- and whether it keeps a manifest."""
    fmt = run_json.get("format", 1)
    return Layout(
        n_chunks=int(run_json["n_chunks"]), seed=int(run_json["seed"]), chunk_size=int(run_json["chunk_size"]),
        games=int(run_json["games"]), digest=config_digest(run_json) if fmt >= 3 else None,
        columns=records.file_columns(run_json["rules"], run_json.get("chunk_fn")), manifest=fmt >= 2, values=True)


#: run.json's fields: (required, check, what it must be)
def _is_int(lo, hi):
    return lambda v: isinstance(v, int) and not isinstance(v, bool) and lo <= v <= hi


def _is_str(n):
    return lambda v: isinstance(v, str) and 0 < len(v) <= n


_RUN_FIELDS = {
    "format": (False, lambda v: v in (1, 2, RUN_FORMAT) and not isinstance(v, bool), f"1 .. {RUN_FORMAT}"),
    "rules": (True, _is_str(64), "a rule-set name"),
    "options": (False, lambda v: isinstance(v, dict) and len(v) <= 256, "an object of option values"),
    "policies": (False, lambda v: isinstance(v, list) and len(v) == N_SEATS
                 and all(isinstance(p, str) and 0 < len(p) <= 4096 for p in v), "a list of 4 policy specs"),
    "seed": (True, _is_int(0, 2**63 - 1), "an integer in 0 .. 2**63-1"),
    "games": (True, _is_int(1, MAX_GAMES), f"an integer in 1 .. {MAX_GAMES:,}"),
    "chunk_size": (True, _is_int(1, MAX_CHUNK_SIZE), f"an integer in 1 .. {MAX_CHUNK_SIZE:,}"),
    "n_chunks": (True, _is_int(1, MAX_CHUNKS), f"an integer in 1 .. {MAX_CHUNKS:,}"),
    "chunk_fn": (False, lambda v: isinstance(v, str) and re.fullmatch(r"[A-Za-z_][\w.]*:[A-Za-z_][\w.]*", v)
                 is not None and len(v) <= 200, "module:function"),
    "version": (False, _is_str(64), "a version string"),
    "source_digest": (False, _is_str(64), "a digest"),
    "bot_weights": (False, _is_str(64), "a digest"),
    "created": (False, _is_str(64), "a time stamp"),
}


def validate_run_json(meta: dict, where="run.json") -> dict:
    """``meta`` if it is a run.json whose every field has its type and bounds (:data:`MAX_GAMES`,
    :data:`MAX_CHUNK_SIZE`, :data:`MAX_CHUNKS`) and whose ``n_chunks`` is the one its ``games`` and
    ``chunk_size`` make; else :class:`caishen.sim.safeio.FileError` naming ``where`` and the field."""
    for key, (required, ok, what) in _RUN_FIELDS.items():
        if key not in meta:
            if required:
                raise _field_error(where, key, f"has no field {key!r}: not a run.json caishen wrote")
            continue
        if not ok(meta[key]):
            raise _field_error(where, key, f"field {key!r} is {_short_repr(meta[key])}; it must be {what}")
    want = -(-meta["games"] // meta["chunk_size"])
    if meta["n_chunks"] != want:
        raise _field_error(where, "n_chunks", f"field 'n_chunks' is {meta['n_chunks']}, but {meta['games']} hands in "
                                              f"chunks of {meta['chunk_size']} make {want}: the file was changed")
    return meta


def _field_error(where, field: str, why: str) -> safeio.FileError:
    e = safeio.FileError(where, why)
    e.field = field  # read_run_json's repair hint names it
    return e


def repair_hint(field: str | None = None) -> str:
    """What to do about a damaged run.json (``field``: its bad field, None: the file as a whole)."""
    what = f" (or put back field {field!r} as the run wrote it)" if field else ""
    return (f"repair: restore it from a backup{what}: without it the run cannot be resumed or reported; "
            "or start it again with a new --out")


def read_run_json(run_dir: str | os.PathLike) -> dict:
    """The stored, validated configuration of a run directory (:func:`validate_run_json`).

    ``ValueError`` if there is none; :class:`caishen.sim.safeio.FileError`
    (a ``ValueError``) naming the file if it is a link, not a regular file,
    larger than :data:`MAX_RUN_JSON`, not JSON or a field is bad (then
    naming the field), each with the repair (:func:`repair_hint`).
    """
    p = Path(run_dir) / RUN_JSON
    try:
        return validate_run_json(safeio.read_json(p, MAX_RUN_JSON, what="a run.json"), p)
    except FileNotFoundError:
        raise ValueError(f"{str(run_dir)!r} is not a run directory (no {RUN_JSON})") from None
    except safeio.FileError as e:
        raise safeio.FileError(p, f"{str(e).removeprefix(repr(e.path) + ': ')}; "
                                  f"{repair_hint(getattr(e, 'field', None))}", e.errno) from None


#: a runner run's directory (:func:`caishen.sim.selfplay.runner.run`): run.json, then ``chunks/``
RUN = Kind("run", RUN_JSON, read_run_json, writer="simulation", differences=config_differences,
           subdirs=(records.CHUNKS_DIR,))
