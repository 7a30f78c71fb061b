"""Batch self-play runs: seeding, chunks, executors, resumable Parquet output, progress.

A run plays ``games`` hands of one rule set with one policy per seat, split
into chunks of ``chunk_size`` hands (the last one may be shorter).  Chunk
``i`` is played by one call of a *chunk function*::

    chunk_fn(rules: str, options: dict, policies: tuple[str, str, str, str],
             seed_entropy: int, n_hands: int) -> dict[str, np.ndarray]

returning the per-hand record columns (the contract of :mod:`caishen.sim.selfplay.records`).
The real one is :func:`engine_chunk` (``caishen.sim.selfplay.batch.play_batch``: the
engine with the bots of ``caishen.sim.bots.policies``); tests may pass their own.

Seeding: ``numpy.random.SeedSequence(seed).spawn(n_chunks)``; chunk ``i``
always gets child ``i`` and ``seed_entropy = child.generate_state(1,
uint32)[0]`` (the seed of the engine's random stream, :mod:`caishen.sim.rng`), so
the rows of a run do not depend on the number of workers, the backend, the
order in which chunks finish, or interruptions.  Two chunks of one run with
the same 32-bit seed would replay the same hands; :func:`chunk_seeds` refuses
such a run (likely only past ~10,000 chunks; pick another seed or larger
chunks).

Executors: ``workers == 1`` plays in-process; otherwise a
``concurrent.futures.ProcessPoolExecutor`` (spawned processes, default one
per core) or, with ``backend="ray"``, Ray tasks (``ray.init(address=...)``;
local Ray when no address; ``pip install 'caishen[ray]'``; every Ray node
needs caishen installed).  Workers return the records; the main process
checks them and writes one Parquet file per chunk (``caishen.sim.selfplay.records``), so a
cluster needs no shared filesystem.

Run directory::

    RUN_DIR/run.json                     configuration (written first, atomically)
    RUN_DIR/chunks/chunk-00012.parquet   one file per finished chunk (atomic; its identity inside)
    RUN_DIR/manifest.jsonl               each finished chunk's rows, bytes, sha256
    RUN_DIR/summary.json, summary.csv    written by ``caishen simulate`` (atomically)

Every file goes through :mod:`caishen.sim.safeio` (temporary file, fsync,
rename, directory fsync; never through a link) and every read of run.json
is validated field by field with bounds (:func:`validate_run_json`:
:data:`MAX_GAMES`, :data:`MAX_CHUNK_SIZE`, :data:`MAX_CHUNKS`, and
``n_chunks`` must be the one ``games`` and ``chunk_size`` make).  A
directory that holds only what a run killed during its first run.json write
leaves (the lock, a temporary run.json, an empty ``chunks`` folder) is taken
as new; one that holds symbolic links is refused, naming them (the
directory is created, locked and resumed by :func:`caishen.sim.selfplay.rundir.claim`,
as every tool's is).  A kill at
any rename or fsync of a run leaves a directory that the same command
resumes to the uninterrupted rows (``tests/test_crash_consistency.py``).

Resuming and repair: running the same configuration into the same directory
first verifies every chunk file against the manifest and its own identity
and schema (:mod:`caishen.sim.selfplay.manifest`, :func:`layout`)
and then plays exactly the chunks that are not verified -- not played yet,
missing, short, corrupt, foreign or unrecorded -- from their seeds, so the
rows end equal to an uninterrupted run's (:attr:`RunResult.repaired` names
the damaged ones).  A different configuration (rules, options, policies,
seed, games, chunk size, chunk function, package version, engine source,
or the weights of a ``tuned:PATH.json`` bot) is an error naming what
differs.  An OS lock on ``RUN_DIR/.lock``, taken before ``run.json`` is
written or read, keeps two runs out of one directory at the same time (the
second is refused).

Faults: a worker process that dies mid-chunk (killed, out of memory) breaks
the process pool; the runner starts a new pool and replays the chunks that
were in flight, and gives up with a ``RuntimeError`` naming the chunk and
its seed when one chunk was in flight at :data:`MAX_POOL_BREAKS` breaks (a
chunk that crashes its worker every time).  On Ray, a task whose worker dies
is run again by Ray itself (``max_retries``), :data:`MAX_POOL_BREAKS`
attempts in all, then the same ``RuntimeError``.  A chunk that cannot be written
(``OSError``, e.g. ``ENOSPC``: the disk is full) stops the run with a
:class:`ChunkWriteError`; the chunks written before stay valid and a rerun
resumes.  Worker processes watch their parent: on Linux the kernel kills
them when the parent dies (``PR_SET_PDEATHSIG``), elsewhere a thread polls
the parent pid each second, so after a ``kill -9`` of ``caishen simulate``
no worker keeps running (the parent is the only writer of chunk files).
"""

from __future__ import annotations

import concurrent.futures as cf
import dataclasses
import datetime
import hashlib
import multiprocessing
import os
import signal
import sys
import threading
import time
from concurrent.futures.process import BrokenProcessPool
from collections.abc import Callable
from pathlib import Path

import numpy as np

from caishen.sim import __version__
from caishen.sim.selfplay import manifest, records, rundir
from caishen.sim.selfplay.rundir import (  # noqa: F401  (run.json: the runner writes it, the readers import rundir)
    CONFIG_KEYS,
    MAX_CHUNK_SIZE,
    MAX_CHUNKS,
    MAX_GAMES,
    MAX_RUN_JSON,
    RUN_FORMAT,
    RUN_JSON,
    config_differences,
    config_digest,
    layout,
    read_run_json,
    validate_run_json,
)

#: hands per chunk by default (a multiple of the engine's 16-hand match)
DEFAULT_CHUNK_SIZE = 10_000
N_SEATS = 4
#: a chunk in flight at this many process-pool breaks (its worker died each time) stops the run
MAX_POOL_BREAKS = 3
#: seconds between two looks at the parent pid in a worker (where PR_SET_PDEATHSIG is not available)
PARENT_POLL_SECONDS = 1.0

ChunkFn = Callable[[str, dict, tuple, int, int], dict]


# ---------------------------------------------------------------------------
# the real chunk function and what it accepts
# ---------------------------------------------------------------------------
def engine_chunk(rules: str, options: dict, policies: tuple, seed_entropy: int, n_hands: int) -> dict[str, np.ndarray]:
    """Play one chunk of self-play: ``caishen.sim.selfplay.batch.play_batch`` (one numba call).

    ``seed_entropy``: int in ``0 .. 2**32 - 1``.  Returns the record columns
    (``dict[str, np.ndarray]`` of length ``n_hands``).
    """
    from caishen.sim.selfplay import batch as selfplay

    return selfplay.play_batch(int(n_hands), int(seed_entropy), rules=rules, options=options, policies=tuple(policies))


def available_rules() -> list[str]:
    """Rule sets the engine can play (the registered ones, :mod:`caishen.sim.rules.base`)."""
    from caishen.sim.rules import base as _rulesets

    return sorted(_rulesets.names())


def available_policies() -> list[str]:
    """The bot names a spec may start with: :func:`caishen.sim.bots.registry.known_policies`."""
    from caishen.sim.bots.registry import known_policies

    return known_policies()


def resolve_options(rules: str, options: dict | None) -> dict:
    """The full, validated option dict of ``rules`` (defaults filled in).

    Raises ``ValueError`` naming an unknown rule set or a bad option.
    """
    from caishen.sim import engine

    if rules not in available_rules():
        raise ValueError(f"unknown rule set {rules!r}; available: {', '.join(available_rules())}")
    _, r = engine.load_rules(rules, options)
    return r.to_dict()


def parse_policies(policies: str | tuple | list) -> tuple[str, str, str, str]:
    """One spec per seat, in normal form: ``"random"`` (all seats) or ``"a,b,c,d"`` / a sequence of 1 or 4
    specs (:func:`caishen.sim.bots.registry.parse_seats`).

    Raises ``ValueError`` naming a wrong count or a bad spec, as the bot registry's parser does.
    """
    from caishen.sim.bots.registry import parse_seats
    from caishen.sim.rules.options import short_repr

    names = [p.strip() for p in policies.split(",")] if isinstance(policies, str) else [str(p) for p in policies]
    if len(names) not in (1, N_SEATS):
        raise ValueError(f"policy list {short_repr(','.join(names))} names {len(names)} policies; give 1 (all seats) "
                         "or 4 (seats 0..3)")
    return parse_seats(names)


# ---------------------------------------------------------------------------
# configuration
# ---------------------------------------------------------------------------
@dataclasses.dataclass(frozen=True)
class RunConfig:
    """What determines a run's rows.

    ``rules``: rule-set name; ``options``: its full option dict;
    ``policies``: 4 policy names (seats 0..3); ``seed``: root seed
    ``0 .. 2**63 - 1``; ``games``: hands (> 0); ``chunk_size``: hands per
    chunk (> 0); ``chunk_fn``: ``"module:function"`` of the chunk function.
    """

    rules: str
    options: dict
    policies: tuple
    seed: int
    games: int
    chunk_size: int = DEFAULT_CHUNK_SIZE
    chunk_fn: str = "caishen.sim.selfplay.runner:engine_chunk"

    def __post_init__(self):
        for name in ("seed", "games", "chunk_size"):
            v = getattr(self, name)
            if isinstance(v, bool) or not isinstance(v, (int, np.integer)):
                raise ValueError(f"{name} {v!r}: must be an integer")
        if not 0 <= self.seed < 2**63:
            raise ValueError(f"seed {self.seed}: must be in 0 .. 2**63-1")
        if self.games <= 0:
            raise ValueError(f"games {self.games}: must be a positive integer")
        if self.games > MAX_GAMES:
            raise ValueError(f"games {self.games}: at most {MAX_GAMES:,}")
        if self.chunk_size <= 0:
            raise ValueError(f"chunk size {self.chunk_size}: must be a positive integer")
        if self.chunk_size > MAX_CHUNK_SIZE:
            raise ValueError(f"chunk size {self.chunk_size}: at most {MAX_CHUNK_SIZE:,} hands per chunk")
        if self.n_chunks > MAX_CHUNKS:
            raise ValueError(f"{self.games} hands in chunks of {self.chunk_size} make {self.n_chunks:,} chunks; at most "
                             f"{MAX_CHUNKS:,} (each chunk's engine seed has 32 bits): choose a larger chunk size")
        if len(self.policies) != N_SEATS:
            raise ValueError(f"policies {self.policies!r}: need one per seat (4)")

    @property
    def n_chunks(self) -> int:
        return -(-self.games // self.chunk_size)

    def chunk_len(self, i: int) -> int:
        """Hands in chunk ``i`` (the last chunk holds the remainder)."""
        return min(self.chunk_size, self.games - i * self.chunk_size)

    def to_json(self) -> dict:
        """The run.json content: the config, the package version, the engine source digest and the
        digest of the bots' weights (:func:`caishen.sim.bots.registry.weights_digest`)."""
        from caishen.sim.bots.registry import weights_digest

        return {
            "format": RUN_FORMAT,
            "rules": self.rules,
            "options": dict(self.options),
            "policies": list(self.policies),
            "seed": int(self.seed),
            "games": int(self.games),
            "chunk_size": int(self.chunk_size),
            "n_chunks": self.n_chunks,
            "chunk_fn": self.chunk_fn,
            "version": __version__,
            "source_digest": source_digest(),
            "bot_weights": weights_digest(self.policies, self.rules),
            "created": datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds"),
        }


def make_config(rules: str, games: int, seed: int, policies="random", options: dict | None = None,
                chunk_size: int = DEFAULT_CHUNK_SIZE, chunk_fn: ChunkFn = engine_chunk) -> RunConfig:
    """A validated :class:`RunConfig` (options resolved against the rule set, policies checked).

    Raises ``ValueError`` naming a bad rule set, option, policy, seed,
    game count or chunk size, or a 飘 policy (``never``, ``always``,
    ``threshold:N``) on a rule set without a 财神
    (:func:`caishen.sim.bots.registry.check_fits`).
    """
    opts = resolve_options(rules, options)
    pol = parse_policies(policies)
    from caishen.sim import engine
    from caishen.sim.bots.registry import check_seats

    name, r = engine.load_rules(rules, options)
    check_seats(pol, name, int(engine.engine_params(name, r).joker))  # 飘 policies, weights, open seats
    return RunConfig(rules, opts, pol, seed, games, chunk_size, _fn_name(chunk_fn))


def _fn_name(fn) -> str:
    return f"{fn.__module__}:{fn.__qualname__}"


#: modules of ``sim`` that only read finished rows: editing them never changes a run's rows, so they
#: are left out of :func:`source_digest` and a run stays resumable
READ_SIDE = ("analysis/summary.py", "analysis/summary_tally.py", "analysis/intervals.py", "analysis/balance.py",
             "analysis/balance_tally.py", "analysis/report.py", "analysis/ladder.py", "selfplay/stream.py")


def source_digest() -> str:
    """sha256 (16 hex digits) of the sources that shape a run's rows.

    Every ``.py`` file of the ``sim`` package except the read side
    (:data:`READ_SIDE`: summary, streaming reader, intervals, balance
    tables, report), with its data files (the shipped bots' weights).  A
    run cannot be resumed by code whose digest differs.
    """
    pkg = Path(__file__).resolve().parents[1]  # sim/ (caishen/sim when installed)
    files = [p for p in sorted(pkg.rglob("*")) if p.suffix in (".py", ".json", ".npz")
             and p.relative_to(pkg).as_posix() not in READ_SIDE and "__pycache__" not in p.parts]
    h = hashlib.sha256()
    for p in files:
        h.update(p.relative_to(pkg).as_posix().encode())
        h.update(b"\0")
        h.update(p.read_bytes())
        h.update(b"\0")
    return h.hexdigest()[:16]


def chunk_seeds(seed: int, n_chunks: int) -> np.ndarray:
    """``uint32[n_chunks]``: chunk ``i``'s ``seed_entropy`` from ``SeedSequence(seed).spawn(n_chunks)[i]``.

    Child ``i`` does not depend on ``n_chunks``.  Raises ``ValueError`` if
    two chunks would get the same 32-bit seed (same hands twice), or for
    more than :data:`MAX_CHUNKS` chunks (before allocating anything).
    """
    if not 0 < n_chunks <= MAX_CHUNKS:
        raise ValueError(f"{n_chunks} chunks: a run has 1 .. {MAX_CHUNKS:,} (choose a larger chunk size)")
    children = np.random.SeedSequence(seed).spawn(n_chunks)
    out = np.fromiter((c.generate_state(1, np.uint32)[0] for c in children), np.uint32, n_chunks)
    uniq, first, counts = np.unique(out, return_index=True, return_counts=True)
    if len(uniq) != n_chunks:
        v = uniq[counts > 1][0]
        i, j = np.flatnonzero(out == v)[:2]
        raise ValueError(
            f"seed {seed}: chunks {i} and {j} get the same 32-bit engine seed {v} (they would replay the same "
            "hands); choose another --seed or a larger --chunk-size"
        )
    return out


# ---------------------------------------------------------------------------
# run directory
# ---------------------------------------------------------------------------
def prepare_run_dir(out: str | os.PathLike, config: RunConfig) -> dict:
    """Create ``out``'s run.json, or check that an existing run has the same configuration
    (:func:`caishen.sim.selfplay.rundir.prepare` for :data:`caishen.sim.selfplay.rundir.RUN`; :func:`run`
    claims the directory, lock included, with :func:`caishen.sim.selfplay.rundir.claim`).

    Returns the stored run.json.  Raises ``ValueError`` naming every
    difference when ``out`` holds another run, or when ``out`` is a
    non-empty directory that is not a run.
    """
    return rundir.prepare(out, rundir.RUN, config.to_json())


# ---------------------------------------------------------------------------
# executing chunks
# ---------------------------------------------------------------------------
@dataclasses.dataclass(frozen=True)
class Execution:
    """How a job runs, not what it computes: one argument for the sweeps, studies and tuning that spread work.

    ``workers``: processes (local; None: :func:`default_workers`; 1: in this
    process) or concurrent Ray tasks (None: the cluster's CPUs);
    ``backend``: ``"local"`` (a process pool) or ``"ray"``;
    ``ray_address``: the Ray cluster (``backend="ray"`` only; None: a local
    Ray); ``progress``: a tqdm bar on stderr.  The command line's
    ``--workers``, ``--backend``, ``--ray-address`` and ``--no-progress``
    (:meth:`from_args`).  Raises ``ValueError`` naming a bad value.
    """

    workers: int | None = None
    backend: str = "local"
    ray_address: str | None = None
    progress: bool = True

    def __post_init__(self):
        if self.backend not in ("local", "ray"):
            raise ValueError(f"backend {self.backend!r}: must be 'local' or 'ray'")
        w = self.workers
        if w is not None and (isinstance(w, bool) or not isinstance(w, (int, np.integer)) or w < 1):
            raise ValueError(f"workers {w!r}: must be a positive integer")
        if self.ray_address is not None and self.backend != "ray":
            raise ValueError("a Ray address needs --backend ray")

    @classmethod
    def from_args(cls, args, workers: int | None = None) -> "Execution":
        """The execution an ``argparse`` namespace asks for (``workers``: instead of ``args.workers``, e.g. 1
        for a command with an open seat)."""
        return cls(workers if workers is not None else getattr(args, "workers", None),
                   getattr(args, "backend", "local"), getattr(args, "ray_address", None),
                   not getattr(args, "no_progress", False))

    def local_only(self, what: str) -> "Execution":
        """``self`` if it runs on local processes, else ``ValueError``: ``what`` has no Ray backend."""
        if self.backend != "local":
            raise ValueError(f"{what} runs on local worker processes only (backend 'local', not {self.backend!r})")
        return self


def default_workers() -> int:
    """The cores this process may use (``os.sched_getaffinity`` where available, else ``os.cpu_count()``)."""
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except AttributeError:
        return os.cpu_count() or 1


def _call_chunk(fn: ChunkFn, rules, options, policies, seed_entropy, n_hands):
    """Worker side: play one chunk and return its columns."""
    return fn(rules, options, tuple(policies), int(seed_entropy), int(n_hands))


def _set_parent_death_signal() -> bool:
    """Linux: ask the kernel to SIGKILL this process when its parent dies (``prctl(PR_SET_PDEATHSIG)``).

    Works while the process runs numba code that holds the GIL, which a
    watcher thread could not interrupt.  Returns False where unavailable.
    """
    if not sys.platform.startswith("linux"):
        return False
    try:
        import ctypes

        libc = ctypes.CDLL(None, use_errno=True)
        PR_SET_PDEATHSIG = 1
        return libc.prctl(PR_SET_PDEATHSIG, int(signal.SIGKILL), 0, 0, 0) == 0
    except (OSError, AttributeError):
        return False


def _watch_parent(parent_pid: int, every: float = PARENT_POLL_SECONDS) -> None:
    """A daemon thread that ends this process (``os._exit``) once its parent is no longer ``parent_pid``."""

    def watch():
        while True:
            if os.getppid() != parent_pid:
                os._exit(1)
            time.sleep(every)

    threading.Thread(target=watch, name="caishen-parent-watch", daemon=True).start()


def _worker_init(parent_pid: int) -> None:
    """Process-pool initializer: die with the parent (see the module docstring, "Faults"), and leave
    Ctrl-C to the parent (which stops the pool and says so in one line; a worker would print a traceback)."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    _set_parent_death_signal()
    if os.getppid() != parent_pid:  # the parent died before the signal was armed
        os._exit(1)
    _watch_parent(parent_pid)


def _require_ray():
    try:
        import ray
    except ImportError:
        raise ValueError("--backend ray needs the optional dependency ray: pip install 'caishen[ray]'") from None
    return ray


def _ray_submitter(address: str | None, workers: int | None):
    ray = _require_ray()
    if not ray.is_initialized():
        ray.init(address=address, include_dashboard=False, log_to_driver=False)
    # a task whose worker process dies is run again by Ray, up to MAX_POOL_BREAKS attempts in all (as the
    # local pool does); after that the error names the chunk and its seed
    remote = ray.remote(num_cpus=1, max_retries=MAX_POOL_BREAKS - 1)(_call_chunk)
    if workers is None:
        workers = max(1, int(ray.cluster_resources().get("CPU", 1)))
    worker_lost = tuple(getattr(ray.exceptions, name) for name in ("WorkerCrashedError", "NodeDiedError",
                                                                    "OutOfMemoryError")
                        if hasattr(ray.exceptions, name))

    def submit(i: int, args: tuple):
        return _named_failure(remote.remote(*args).future(), i, args[4], worker_lost)

    return submit, workers


def _named_failure(future: cf.Future, chunk: int, seed_entropy: int, errors) -> cf.Future:
    """``future``, with an error of type ``errors`` replaced by a ``RuntimeError`` naming the chunk and its seed."""
    out: cf.Future = cf.Future()

    def relay(f: cf.Future) -> None:
        if f.cancelled():
            out.cancel()
            return
        e = f.exception()
        if e is None:
            out.set_result(f.result())
        elif isinstance(e, errors):
            out.set_exception(RuntimeError(
                f"chunk {chunk} (seed_entropy {seed_entropy}) failed on Ray after {MAX_POOL_BREAKS} attempt(s): "
                f"{type(e).__name__}: {str(e).splitlines()[0] if str(e) else ''}"))
        else:
            out.set_exception(e)

    future.add_done_callback(relay)
    return out


class ChunkWriteError(OSError, RuntimeError):
    """A chunk file could not be written (an ``OSError`` such as ``ENOSPC``); earlier chunks stay valid.

    An ``OSError`` (``errno`` the cause's; its text the whole one-line message), so every command that
    runs chunks -- ``simulate``, ``match``, ``sweep``, ``ladder``, ``learn``'s evaluation -- ends on it with
    the command line's one line and a nonzero exit, never a traceback; a ``RuntimeError`` for callers
    that caught it as one."""

    def __init__(self, errno_: int | None, message: str):
        super().__init__(errno_, message)

    def __str__(self) -> str:
        return self.strerror


@dataclasses.dataclass
class RunResult:
    """What :func:`run` did: ``chunks_run`` played now, ``chunks_skipped`` already finished (verified);
    ``seconds`` in all, of which ``compile_seconds`` compiling (or loading) the kernels in this process
    before the chunks (:func:`_compile_in_parent`); ``hands_per_second`` the play alone, without them;
    ``repaired``: the chunks replayed because their file was missing, short,
    corrupt, foreign or unrecorded, ``{chunk: (state, reason)}`` (:mod:`caishen.sim.selfplay.manifest`);
    ``pool_restarts``: process pools started again after a worker died; ``damaged_lines``: the
    ``(line number, why)`` of the manifest lines that were no entry, dropped from it now
    (:func:`caishen.sim.selfplay.manifest.drop_damaged_lines`)."""

    run_dir: Path
    config: RunConfig
    chunks_run: int
    chunks_skipped: int
    hands_run: int
    seconds: float
    repaired: dict = dataclasses.field(default_factory=dict)
    pool_restarts: int = 0
    compile_seconds: float = 0.0
    damaged_lines: list = dataclasses.field(default_factory=list)

    @property
    def hands_per_second(self) -> float:
        """Hands played per second of play: ``hands_run / (seconds - compile_seconds)`` (NaN for none)."""
        play = self.seconds - self.compile_seconds
        return self.hands_run / play if play > 0 else float("nan")


def run(config: RunConfig, out: str | os.PathLike, *, workers: int | None = None, backend: str = "local",
        ray_address: str | None = None, progress: bool = True, chunk_fn: ChunkFn = engine_chunk,
        on_start: Callable[[], None] | None = None) -> RunResult:
    """Play every chunk of ``config`` that ``out`` does not hold verified (resumable, self-repairing).

    ``workers``: processes (local; default :func:`default_workers`; 1 = in this
    process) or concurrent Ray tasks (default: the cluster's CPUs).
    ``backend``: ``"local"`` or ``"ray"``.  ``progress``: a tqdm bar on
    stderr, updated per finished chunk (hands/s).  ``chunk_fn`` must be the
    function named by ``config.chunk_fn`` and importable by worker processes.
    ``on_start``: called once ``out`` is known to take this run (a new run
    directory, or one of the same configuration) and before anything is
    compiled or played: a command's first progress line, so that a refusal
    (another run in ``out``) is the only output.
    Raises ``ValueError`` for bad arguments, another run in ``out`` (or one
    running there now), or a missing Ray; ``RuntimeError`` if a chunk breaks
    the records contract or keeps killing its worker; :class:`ChunkWriteError`
    if a chunk file cannot be written.
    """
    Execution(workers, backend, ray_address, progress)  # validates them
    if _fn_name(chunk_fn) != config.chunk_fn:
        raise ValueError(f"chunk function {_fn_name(chunk_fn)} is not the configured {config.chunk_fn}")
    if backend == "ray":
        _require_ray()
    seeds = chunk_seeds(config.seed, config.n_chunks)
    out = Path(out)
    t0 = time.perf_counter()
    with rundir.claim(out, rundir.RUN, config.to_json()) as stored:
        records.remove_stale_tmp(out)
        lay = layout(stored)
        check = manifest.verify(out, layout=lay)
        todo = check.to_replay
        if check.damaged_lines:  # named once (RunResult.damaged_lines), their chunks replayed as unrecorded
            manifest.drop_damaged_lines(out, lay.n_chunks)
        if on_start is not None:
            on_start()
        done_hands = sum(config.chunk_len(i) for i in check.ok)
        compile_seconds = 0.0
        if todo and (chunk_fn is engine_chunk or _fn_name(chunk_fn) in records.CHUNK_FN_COLUMNS):
            # a cold compile uses a second core when the run may (caishen.sim.warmup.side_compile)
            compile_seconds = _compile_in_parent(config, chunk_fn, progress, side=(workers or default_workers()) > 1)
        from caishen.sim.warmup import compile_over, progress_bar

        compile_over()  # the play begins: a command's compile line says its compile now (caishen.sim.warmup)
        bar = progress_bar(config.games, config.rules, initial=done_hands,
                           disable=not progress or not todo)  # a finished run: no bar (drawn twice)
        hands_run = 0
        finished: set[int] = set()

        def finish(i: int, cols: dict) -> None:
            nonlocal hands_run
            try:
                table = records.chunk_table(cols, config.rules, seed=config.seed, chunk=i,
                                            chunk_size=config.chunk_size)
            except ValueError as e:
                raise RuntimeError(f"chunk {i} (seed_entropy {int(seeds[i])}): {e}") from None
            if table.num_rows != config.chunk_len(i):
                raise RuntimeError(f"chunk {i} returned {table.num_rows} rows, expected {config.chunk_len(i)}")
            try:
                manifest.commit_chunk(out, i, table, lay)
            except OSError as e:
                what = os.strerror(e.errno) if e.errno else str(e)
                raise ChunkWriteError(
                    e.errno, f"cannot write chunk {i} into {str(out)!r}: {what}; the {len(check.ok) + len(finished)} "
                    "chunk(s) written before are safe: free the space (or fix the cause) and rerun the same "
                    "command to resume") from None
            finished.add(i)
            hands_run += table.num_rows
            bar.update(table.num_rows)

        def args(i: int):
            return (chunk_fn, config.rules, config.options, config.policies, int(seeds[i]), config.chunk_len(i))

        restarts = 0
        try:
            if backend == "local":
                n = min(workers or default_workers(), len(todo))
                if n <= 1:  # in this process
                    for i in todo:
                        finish(i, _call_chunk(*args(i)))
                else:
                    restarts = _run_pool(todo, n, args, finish, finished, seeds)
            else:
                submit, n = _ray_submitter(ray_address, workers)
                _drain(todo, lambda i: submit(i, args(i)), 2 * n, finish)
        finally:
            bar.close()
    return RunResult(out, config, len(todo), len(check.ok), hands_run, time.perf_counter() - t0,
                     dict(check.problems), restarts, compile_seconds, list(check.damaged_lines))


#: hands of the warm-up chunk :func:`_compile_in_parent` plays: whole walls of every seating count of the
#: match schedules (1, 2, 4, 8, 12, 24: caishen.sim.analysis.arena)
COMPILE_HANDS = 24


def _compile_in_parent(config: RunConfig, chunk_fn: ChunkFn, progress: bool, side: bool = False) -> float:
    """Compile (or load from numba's cache) the kernels of the run's chunks in this process before any worker starts.

    Spawned workers then load the cache instead of each compiling the same
    kernels at once (a cold first run: two workers compiling side by side
    took 308 s; issue 11 item 3), and the compile is seen here: plays
    :data:`COMPILE_HANDS` hands of the run's chunk function (self-play, a
    match's seatings, a sweep's walls) with its rules, options and policies
    (the chunks' argument types) and discards them.  With ``progress`` stderr
    says what really happened (:class:`caishen.sim.warmup.CompileWatch`, not
    the marks): a line when numba starts compiling, then ``numba kernels:
    compiled N in T s`` or ``numba kernels: loaded from the cache in T s`` (once per process: the later
    runs of a sweep or a ladder say only a compile); inside a command's compile line
    (:func:`caishen.sim.warmup.compile_line`) a compile is that line's to say.  Marks the self-play target.  Returns the seconds.
    ``side``: a cold compile may use a second process (:func:`caishen.sim.warmup.side_compile`).
    """
    import sys

    from caishen.sim.bots.registry import needs_search
    from caishen.sim.warmup import CompileWatch, inside_compile_line, mark, side_compile

    part = "bots" if needs_search(config.policies) else "kernel"  # the search bot compiles apart

    def start() -> None:
        print("numba kernels: compiling (not in the cache yet: a few minutes, once) ...", file=sys.stderr, flush=True)

    quiet = inside_compile_line()  # a command's compile line speaks for the compile (caishen.cli)
    t = time.perf_counter()
    with CompileWatch(start if progress and not quiet else None) as w, side_compile(side):
        chunk_fn(config.rules, config.options, tuple(config.policies), 1, COMPILE_HANDS)
    mark("selfplay", part)
    took = time.perf_counter() - t
    if w.kernels and quiet:
        return took
    if progress and (w.kernels or not _loaded_said):  # a sweep's or a ladder's next runs: only a compile is news
        what = f"compiled {w.kernels} in" if w.kernels else "loaded from the cache in"
        print(f"numba kernels: {what} {took:.1f} s", file=sys.stderr, flush=True)
        _loaded_said.append(True)
    return took


#: not empty once this process said that the kernels came from the cache (:func:`_compile_in_parent`)
_loaded_said: list[bool] = []


def _run_pool(todo: list[int], n: int, args, finish, finished: set[int], seeds) -> int:
    """Play ``todo`` on a pool of ``n`` spawned processes, starting a new pool when a worker dies.

    Returns the number of restarts.  Raises ``RuntimeError`` naming the
    chunk when one chunk was in flight at :data:`MAX_POOL_BREAKS` breaks.
    """
    ctx = multiprocessing.get_context("spawn")  # no fork of a process with threads
    breaks: dict[int, int] = {}
    remaining = list(todo)
    restarts = 0
    while True:
        in_flight: set[int] = set()
        try:
            ex = cf.ProcessPoolExecutor(max_workers=n, mp_context=ctx, initializer=_worker_init,
                                        initargs=(os.getpid(),))
            try:
                _drain(remaining, lambda i: ex.submit(_call_chunk, *args(i)), 2 * n, finish, in_flight)
            except BaseException:
                _stop_pool(ex)
                raise
            ex.shutdown(wait=True)
            return restarts
        except BrokenProcessPool:
            lost = sorted(in_flight - finished)
            for i in lost:
                breaks[i] = breaks.get(i, 0) + 1
            worst = [i for i in lost if breaks[i] >= MAX_POOL_BREAKS]
            if worst:  # every chunk in flight at each break is a suspect: name them all
                names = " and ".join(f"chunk {i} (seed_entropy {int(seeds[i])})" for i in worst)
                raise RuntimeError(
                    f"{names} {'was' if len(worst) == 1 else 'were'} in flight each of the {MAX_POOL_BREAKS} times a "
                    "worker process died (killed, out of memory, or a crash in the chunk function); finished chunks "
                    "are kept, rerun to retry") from None
            remaining = [i for i in remaining if i not in finished]
            restarts += 1


def _stop_pool(ex: cf.ProcessPoolExecutor) -> None:
    """Stop a pool at once on Ctrl-C or an error: terminate its workers, then shut it down without waiting.

    A graceful shutdown waits for the chunks in flight, whose results are dropped anyway, and can hang
    for good: the same Ctrl-C reaches a worker still starting (before :func:`_worker_init` ignores it)
    and can leave the pool's queues locked (seen: a sweep with ``--workers 2`` interrupted, 2 of 9
    tries).  Finished chunks are already written; the rerun plays the rest."""
    for proc in list((getattr(ex, "_processes", None) or {}).values()):
        try:
            proc.terminate()
        except (OSError, AttributeError, ValueError):
            pass
    ex.shutdown(wait=False, cancel_futures=True)


def _drain(todo: list[int], submit, max_in_flight: int, finish, in_flight: set[int] | None = None) -> None:
    """Submit chunks with at most ``max_in_flight`` pending; ``finish`` each as it completes.

    ``in_flight`` (optional) collects every chunk submitted and not yet
    finished.  On any error (or Ctrl-C) the pending futures are cancelled;
    finished chunks stay written.
    """
    queue = iter(todo)
    pending: dict[cf.Future, int] = {}
    if in_flight is None:
        in_flight = set()

    def fill():
        for i in queue:
            pending[submit(i)] = i
            in_flight.add(i)
            if len(pending) >= max_in_flight:
                break

    try:
        fill()
        while pending:
            ready, _ = cf.wait(pending, return_when=cf.FIRST_COMPLETED)
            # chunks that completed are written before a failed one raises
            for f in sorted(ready, key=lambda f: f.exception() is not None):
                i = pending.pop(f)
                finish(i, f.result())
                in_flight.discard(i)
            fill()
    finally:
        for f in pending:
            f.cancel()
