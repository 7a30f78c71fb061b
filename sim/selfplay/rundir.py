"""A run directory's configuration: run.json, its validation with bounds, and the chunk layout it implies.

``RUN_DIR/run.json`` is written first by :mod:`caishen.sim.selfplay.runner` and
read back, field by field against :data:`_RUN_FIELDS` with bounds, by every
command that resumes, reports or verifies a run (:func:`read_run_json`).  A
run's :class:`Layout` (what each of its chunk files must be: rows, identity,
columns) is derived from it (:func:`layout`) and checked by
:mod:`caishen.sim.selfplay.manifest`.
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
import os
import re
from pathlib import Path

from caishen.sim import safeio
from caishen.sim.rules.options import short_repr as _short
from caishen.sim.selfplay import records

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
    """Human-readable differences between two run.json dicts (only :data:`CONFIG_KEYS`)."""
    out = []
    stored, wanted = _json_norm(stored), _json_norm(wanted)
    for k in CONFIG_KEYS:
        a, b = stored.get(k), wanted.get(k)
        if a == b:
            continue
        if isinstance(a, dict) and isinstance(b, dict):
            for o in sorted(set(a) | set(b)):
                if a.get(o) != b.get(o):
                    out.append(f"option {o}: run has {a.get(o)!r}, requested {b.get(o)!r}")
        elif k == "bot_weights":
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
            raise _field_error(where, key, f"field {key!r} is {_short(meta[key])}; it must be {what}")
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
