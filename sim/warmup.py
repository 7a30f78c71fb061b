"""Compiling the numba kernels ahead of time, and saying so when a first use has to.

numba compiles a kernel on its first call and keeps the machine code in its
disk cache (``cache=True``; the directory is set by :mod:`caishen`, keyed by a
digest of the kernel sources).  On a fresh machine, or after an upgrade, the
first self-play run, the first ``Game`` and the first ``env.reset()`` spend
tens of seconds compiling before anything happens; afterwards they load the
cache in about a second.  This module makes that visible and avoidable:

- ``caishen warmup`` (:func:`caishen.cli.warmup`) compiles (or loads)
  everything a *target* uses by running a tiny workload of it (each the
  ``warm()`` of the module that owns the kernels), for people who prepare a
  cluster image, a container or a CI cache, and marks the target.
- :func:`first_use` is the context manager the entry points wrap their first
  kernel call in: when numba really starts compiling inside it (numba's
  ``numba:compile`` event, which fires only for a kernel its cache does not
  hold: :class:`CompileWatch`) it logs a warning (logger ``caishen``) that
  compiling is happening and how to avoid it, then the seconds it took, and
  it marks the target once the call returns.
- :func:`compile_line` is the command-line form (``caishen`` wraps every command but rules and warmup
  in it): one line on stderr when the first kernel starts compiling, a bar
  (a terminal) or a line every few seconds (a pipe) while it compiles,
  one with the kernels compiled and the seconds when the compile is over
  (before the command's own work); nothing when everything came from the cache.  The mark never decides what is
  printed: a mark with a cache numba cannot use (another CPU, another numba)
  still prints the compile line.
- :func:`side_compile`: on a cold cache and idle cores, a second process
  compiles the learned and the tuned bot's kernels while the command compiles
  the rest.
- :func:`say` and :func:`progress_bar`: the lines and the run's bar on stderr, whole lines on a file or a
  pipe (a log reads line by line, a bar's redraws included), so the compile lines and the bar never
  share a line.

Targets (``TARGETS``): ``selfplay`` (``caishen.sim.selfplay.batch.play_batch`` with every
kernel policy of the bot registry, every rule set, its points kernel included), ``bots``
(every bot with data of the registry, :mod:`caishen.sim.bots.registry`, in self-play and
in the step API), ``game`` (``caishen.sim.engine.Game``:
reset, legal mask, step, the invariant checker), ``envs`` (the batched env
and the Gymnasium env: reset, observe, step), ``hand`` (the public shanten /
win / effective-tile functions), ``score`` (``caishen score``: both rule
sets' hand scoring), ``seats`` (the open seats, ``python:`` and ``exec:``: the arena host's table and the
vector env's open opponents), ``labels`` (``caishen learn``'s rollout labels, an MLP learner:
:func:`caishen.cli.warmup.warm_labels`), ``piao`` (the counterfactual 飘 study's kernel,
:func:`caishen.cli.warmup.warm_piao`).
"""

from __future__ import annotations

import contextlib
import logging
import os
import threading
import time
from collections.abc import Iterator
from pathlib import Path

__all__ = ["TARGETS", "CompileWatch", "compile_line", "compile_over", "cold_estimate", "say", "progress_bar",
           "inside_compile_line",
           "first_use", "side_compile", "is_marked",
           "mark", "check_target", "cache_dir"]

log = logging.getLogger("caishen")

TARGETS = ("selfplay", "bots", "game", "envs", "hand", "score", "seats", "labels", "piao")

#: rough cold compile seconds of each target in one process on a 2-core machine (``caishen warmup TARGET``,
#: each target on its own empty cache), quoted in the first-use warning and in a command's first lines until
#: this machine has measured its own (:func:`estimates`).  Measured on main at e3355a6 (load 0.5-1.5):
#: ``game`` 84 kernels in 40.1 s, ``bots`` 205 in 146.5 s, ``caishen hand`` 36 in 15.6 s, ``caishen score``
#: 32 in 6.2 s; earlier ``envs`` 63 s, ``seats`` 43-60 s; ``selfplay``: the README's main job, the self-play
#: loop with every bot (:data:`DEFAULT_KERNELS`), 116 kernels in 67.7 s in one process at load 1.1-1.5, 47-50
#: s wall with the side process on a quiet machine (docs/speed.md, "Cold compile"); ``piao``: 165 kernels in
#: 113.2 s of compiling (``caishen piao --hands 300 --check-walls 200 --workers 1``, empty cache, load 2.0-2.6)
COLD_SECONDS = {"selfplay": 65, "bots": 145, "game": 40, "envs": 65, "hand": 16, "score": 8, "seats": 60,
                "labels": 60, "piao": 110}
#: the warmup target whose kernels a command's first use compiles (its :data:`COLD_SECONDS` is the command's
#: estimate before this machine measured one)
COMMAND_TARGETS = {"caishen simulate": "selfplay", "caishen match": "selfplay", "caishen sweep": "selfplay",
                   "caishen ladder": "selfplay", "caishen piao": "piao", "caishen learn": "labels",
                   "caishen play": "game", "caishen replay": "game", "caishen hand": "hand", "caishen score": "score"}


#: a command's cold compile seconds in one process on 2 cores where its target's :data:`COLD_SECONDS` do not fit
#: it: ``caishen play`` compiles the game and its bots (130 kernels: 63.8 s at load 2.9, 83.6 s at load 3.5)
COMMAND_SECONDS = {"caishen play": 60}


def cold_estimate(prefix: str) -> str:
    """How long a cold compile of command ``prefix`` (``"caishen simulate"``) takes, in words: this machine's
    last measurement (:func:`estimates`: ``"about 66 s here last time"``), else its target's
    :data:`COLD_SECONDS` (``"about 65 s in one process on 2 cores, longer on a busy machine"``), else ``"a minute
    or more"``."""
    seconds = estimates(prefix)[1]
    if seconds:
        return f"about {seconds:.0f} s here last time"
    target = COMMAND_TARGETS.get(prefix)
    if target is not None:
        guess = COMMAND_SECONDS.get(prefix, COLD_SECONDS[target])
        return f"about {guess} s in one process on 2 cores, longer on a busy machine"
    return "a minute or more"


def cache_dir() -> Path:
    """numba's cache directory for this process (``NUMBA_CACHE_DIR``, set by :mod:`caishen` unless the user set it)."""
    from numba.core import config

    return Path(config.CACHE_DIR or os.environ.get("NUMBA_CACHE_DIR", "."))


def _mark(target: str) -> Path:
    return cache_dir() / "caishen-warm" / target


def is_marked(target: str, part: str | None = None) -> bool:
    """True if a previous process compiled ``target``'s kernels into this cache directory.

    With ``part`` (e.g. the runner's ``"bots"``: the self-play kernels of the
    search bot, which a batch without an ``mc:N`` seat does not compile): true
    if that part was marked, or the whole target (:func:`warmup` compiles
    every part), or the target of that name (``caishen warmup bots``).
    """
    check_target(target)
    if part is not None and part in TARGETS and _mark(part).exists():  # selfplay's "bots": the bots target
        return True
    return _mark(target).exists() or (part is not None and _mark(f"{target}.{part}").exists())


def check_target(target: str) -> None:
    """``ValueError`` naming ``target`` unless it is one of :data:`TARGETS`."""
    if target not in TARGETS:
        raise ValueError(f"unknown warmup target {target!r}; known: {', '.join(TARGETS)}")


def mark(target: str, part: str | None = None) -> None:
    """Record that ``target``'s kernels (only ``part`` of them, if given: :func:`is_marked`) are compiled
    into this cache directory, for an entry point that announces the compile itself (the runner's progress
    line).  Raises ``ValueError`` for an unknown target."""
    check_target(target)
    if part is None:
        _announced.add(target)
    set_mark(target if part is None else f"{target}.{part}")


def announce(target: str) -> None:
    """No first-use warning for ``target`` in this process any more (a workload that says so itself)."""
    _announced.add(target)


def set_mark(target: str) -> None:
    """Mark ``target`` compiled in this cache directory (a failed write only lets the warning repeat)."""
    path = _mark(target)
    from caishen.sim import safeio

    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        safeio.atomic_write(path, time.strftime("%Y-%m-%dT%H:%M:%S\n"))  # never through a planted link
    except (OSError, ValueError):  # a read-only cache directory: only the warning repeats
        pass


_announced: set[str] = set()
#: the active :class:`CompileWatch` objects of this process, outermost first
_watches: list["CompileWatch"] = []


class CompileWatch:
    """The numba compilations of this process while the watch is active (a context manager).

    Listens to numba's ``numba:compile`` event, which numba fires only when a
    kernel is not in its cache (a cache hit loads without it), so the watch
    says what really happened, whatever the marks say.  Attributes:
    ``kernels`` (compilations started, the nested ones of a kernel's callees
    included), ``seconds`` (wall seconds inside the outermost compilations)
    and ``announced`` (``on_start`` was called).  ``on_start()`` is called
    once, when the first compilation begins, unless an enclosing watch has an
    ``on_start`` of its own (it speaks for both: one banner, not two);
    ``on_begin()`` when an outermost compilation begins (numba busy again), ``on_kernel()`` after each kernel
    compiled (a progress bar); ``on_idle()`` when the outermost compilation ends and the program runs again (the
    bar steps aside for the program's own output).
    """

    def __init__(self, on_start=None, on_kernel=None, on_idle=None, on_begin=None):
        self.on_start = on_start
        self.on_begin = on_begin
        self.on_kernel = on_kernel
        self.on_idle = on_idle
        self.kernels = 0
        self.seconds = 0.0
        self.announced = False
        self._depth = 0
        self._t0 = 0.0
        self._listener = None

    def __enter__(self) -> "CompileWatch":
        from numba.core import event

        watch = self

        class _Listener(event.Listener):
            def on_start(self, ev):
                watch._started()

            def on_end(self, ev):
                watch._ended()

        self._outer = list(_watches)
        self._listener = _Listener()
        event.register("numba:compile", self._listener)
        _watches.append(self)
        return self

    def __exit__(self, *exc) -> None:
        from numba.core import event

        event.unregister("numba:compile", self._listener)
        _watches.remove(self)

    def _started(self) -> None:
        self.kernels += 1
        self._depth += 1
        if self._depth == 1:
            self._t0 = time.perf_counter()
        if self.on_start is not None and not self.announced and not any(w.on_start for w in self._outer):
            self.announced = True
            self.on_start()
        if self._depth == 1 and self.on_begin is not None:
            self.on_begin()

    def _ended(self) -> None:
        if self.on_kernel is not None:
            self.on_kernel()
        self._depth -= 1
        if self._depth == 0:
            self.seconds += time.perf_counter() - self._t0
            if self.on_idle is not None:
                self.on_idle()


#: kernels a command compiles in its own process on an empty cache (``caishen warmup`` and the commands measure
#: and keep their own counts in :func:`estimates`; these are for a machine that has measured nothing yet).
#: Measured cold, each command on its own empty cache, one process, the default rule set (issue 45): ``make
#: run``'s ``caishen simulate --games 100000 --seed 7`` 116 in 67.7 s (a newcomer's trial of main e3355a6,
#: after issue 48's engine changes, load 1.1-1.5; 114 before them); ``caishen hand 123m456p789s23s55z`` 36
#: in 15.6 s (load 0.5-1.5; 13 counted before); ``caishen score`` on the default rule set's vectors 32 in
#: 6.2 s (load 0.8); ``caishen play --seed 1`` (a whole hand) 130 in 83.6 s (load 2.9-3.6); ``match`` and
#: ``sweep`` compile the self-play loop as ``simulate``.  Earlier: ``piao`` 165 (``caishen piao --hands
#: 2000``, the study and its check); ``learn`` 49 after ``caishen warmup`` without its ``labels`` target
DEFAULT_KERNELS = {"caishen simulate": 116, "caishen match": 116, "caishen sweep": 116, "caishen ladder": 130,
                   "caishen piao": 165, "caishen learn": 49, "caishen play": 130, "caishen hand": 36,
                   "caishen score": 32, "caishen replay": 95, "caishen report": 1}
#: the same while the side process of :func:`side_compile` runs (it compiles the learned and the tuned bot, which
#: the command then loads from the cache; how many it loads depends on who gets there first): the self-play
#: loop's commands
SIDE_KERNELS = {"caishen simulate": 76, "caishen match": 76, "caishen sweep": 76}
#: the file of the measured compiles, in the cache directory (and in its siblings: earlier digests)
ESTIMATES = "estimates.json"
#: the suffix of a measurement's key in :data:`ESTIMATES` when the side process ran beside the command
SIDE_KEY = " (side process)"


def _side_used() -> bool:
    """True once this command started the side process of :func:`side_compile` (its count is then smaller)."""
    return bool(_side)


def estimates(prefix: str, side: bool | None = None) -> tuple[int | None, float | None]:
    """``(kernels, seconds)`` a cold compile of ``prefix`` (e.g. ``"caishen simulate"``) took on this machine:
    the latest measurement in this cache directory, else in an older one beside it (earlier sources), else
    :data:`DEFAULT_KERNELS` (:data:`SIDE_KERNELS`) and no seconds; ``(None, None)`` when nothing is known.
    ``side``: the count with the side process of :func:`side_compile` running beside the command or without
    it (default: whether this command started it); each is measured and kept apart."""
    from caishen.sim import safeio

    side = _side_used() if side is None else side
    key = prefix + SIDE_KEY if side else prefix
    here = cache_dir() / "caishen-warm" / ESTIMATES
    places = [here] + sorted(cache_dir().parent.glob(f"*/caishen-warm/{ESTIMATES}"),
                             key=lambda q: q.stat().st_mtime, reverse=True)
    for path in places:
        try:
            got = safeio.parse_json(safeio.read_text(path, 1 << 16)).get(key)
            kernels, seconds = int(got["kernels"]), float(got["seconds"])
        except (OSError, ValueError, TypeError, KeyError, AttributeError):
            continue
        if 0 < kernels < 10**5 and 0 <= seconds < 10**6:
            return kernels, seconds
    return (SIDE_KERNELS if side and prefix in SIDE_KERNELS else DEFAULT_KERNELS).get(prefix), None


def _record_estimate(prefix: str, kernels: int, seconds: float) -> None:
    """Keep a finished cold compile's size and time for :func:`estimates` (best effort: a read-only cache
    directory keeps nothing), under the side process's key when this command started it."""
    from caishen.sim import safeio

    prefix = prefix + SIDE_KEY if _side_used() else prefix
    path = cache_dir() / "caishen-warm" / ESTIMATES
    try:
        doc = safeio.parse_json(safeio.read_text(path, 1 << 16)) if path.is_file() else {}
        doc = doc if isinstance(doc, dict) else {}
        old = doc.get(prefix)
        if isinstance(old, dict) and isinstance(old.get("kernels"), int) and old["kernels"] >= kernels:
            return  # a partial compile (some kernels cached by another command) keeps the fuller measurement
        doc[prefix] = {"kernels": int(kernels), "seconds": round(float(seconds), 1)}
        path.parent.mkdir(parents=True, exist_ok=True)
        safeio.atomic_write(path, safeio.json_text(doc))
    except (OSError, ValueError):
        pass


#: on a file or a pipe (a log, CI), a line ``kernel N of M`` at least this often while numba compiles, and at
#: most this often at a kernel's end (seconds)
LOG_EVERY_S = 5.0
#: how often the watcher thread of :class:`_KernelBar` looks (seconds)
_POLL_S = 0.25
#: one line at a time from this process's threads (the watcher's lines and the command's)
_say_lock = threading.Lock()


def say(out, line: str) -> None:
    """Write ``line`` (one line, or a few joined by newlines) and a newline to ``out`` in one write, flushed
    (two processes or threads writing to one stderr never merge their lines); on a terminal through tqdm,
    so that an open bar steps aside.  On a file or a pipe a bar of :func:`progress_bar` writes whole lines,
    so the line is on a line of its own there too."""
    with _say_lock:
        if _is_terminal(out):
            from tqdm import tqdm

            tqdm.write(line, file=out)
        else:
            out.write(line + "\n")
        out.flush()


def _is_terminal(out) -> bool:
    return bool(getattr(out, "isatty", lambda: False)())


class _BarLines:
    """The file a :func:`progress_bar` on a file or a pipe draws on: each redraw of the bar (tqdm writes a
    carriage return and the bar) becomes a line of its own in ``out``; tqdm's blank-outs write nothing."""

    def __init__(self, out):
        self.out = out

    def write(self, text: str) -> None:
        text = text.replace("\r", "").strip()
        if text:
            with _say_lock:
                self.out.write(text + "\n")
                self.out.flush()

    def flush(self) -> None:
        self.out.flush()


def progress_bar(total: int, desc: str, *, unit: str = "hand", initial: int = 0, disable: bool = False, out=None):
    """A tqdm bar of a run's ``total`` units (``initial`` of them done before) on ``out`` (stderr): drawn in
    place on a terminal; on a file or a pipe (a log, CI) a line of at most 100 columns at the start, then at
    most every :data:`LOG_EVERY_S` seconds, and at the end (tqdm's carriage-return redraws would make one
    line of the whole run there).  ``disable``: no bar (a run with nothing to play)."""
    import sys

    from tqdm import tqdm

    out = sys.stderr if out is None else out
    common = dict(total=total, initial=initial, unit=unit, unit_scale=True, smoothing=0.1, desc=desc,
                  disable=disable)
    if _is_terminal(out):
        return tqdm(file=out, dynamic_ncols=True, **common)
    return tqdm(file=_BarLines(out), ncols=100, mininterval=LOG_EVERY_S, **common)


class _KernelBar:
    """``kernel 12 of 89`` while numba compiles: a bar on a terminal (tqdm); on a file or a pipe (or with
    ``lines``: a worker process beside others) a line at the end of a kernel when :data:`LOG_EVERY_S` seconds
    passed since the last one, and from a watcher thread whenever one kernel keeps numba busy that long, so
    a log never sits silent for more than :data:`LOG_EVERY_S` s while compiling.  The owner calls
    :meth:`begin` when numba starts compiling, :meth:`step` after each kernel, :meth:`clear` when it stops,
    :meth:`close` at the end."""

    def __init__(self, prefix: str, out, lines: bool = False):
        self.bar = None
        self.out = out
        self.prefix = prefix
        self.n = 0
        self.t0 = self.t_last = time.perf_counter()
        self.busy = False
        self._stop = threading.Event()
        self._thread = None
        total, seconds = estimates(prefix)
        self.total = total
        _bars.append(self)
        tty = not lines and _is_terminal(out)
        if not tty:
            self._thread = threading.Thread(target=self._watch, name="caishen-compile-watch",
                                            daemon=True)
            self._thread.start()
        if not tty:
            return
        from tqdm import tqdm

        about = f" (about {seconds:.0f} s here last time)" if seconds else ""
        try:  # a terminal that reports no size (0 x 0: a pty without one) draws 100 columns (tqdm draws nothing)
            sized = min(os.get_terminal_size(out.fileno())) > 0
        except (AttributeError, OSError, ValueError):
            sized = False
        # drawn at every kernel (a compile is slow enough), never skipped for tqdm's minimum interval
        self.bar = tqdm(total=total, file=out, unit="kernel", leave=False, dynamic_ncols=sized,
                        ncols=None if sized else 100, nrows=None if sized else 24, mininterval=0,
                        miniters=1,
                        desc=f"{prefix}: compiling{about}", bar_format="{desc}: kernel {n_fmt} of {total_fmt} "
                        "{bar} [{elapsed}<{remaining}]" if total else "{desc}: kernel {n_fmt} [{elapsed}]")

    def _watch(self) -> None:
        """The watcher thread: on a pipe a line while one kernel keeps numba busy."""
        while not self._stop.wait(_POLL_S):
            if self.busy and time.perf_counter() - self.t_last >= LOG_EVERY_S:
                self._log_line()

    def _log_line(self) -> None:
        self.t_last = time.perf_counter()
        of = f" of {self.total}" if self.total else ""
        say(self.out, f"{self.prefix}: compiling, kernel {self.n}{of} ({self.t_last - self.t0:.0f} s)")

    def side_started(self) -> None:
        """The side process of :func:`side_compile` started: this process compiles fewer kernels, and the
        estimate is the one measured with it."""
        total = estimates(self.prefix, side=True)[0]
        self.total = total if total and total >= self.n else None
        if self.bar is not None:
            self.bar.total = self.total
            if self.total is None:
                self.bar.bar_format = "{desc}: kernel {n_fmt} [{elapsed}]"
            self.bar.refresh()

    def begin(self) -> None:
        """numba started compiling (again)."""
        self.busy = True

    def step(self) -> None:
        self.n += 1
        if self.total and self.n > self.total:  # more than last time (another command's kernels were cached
            self.total = None                    # then): no "97 of 96", the count alone
            if self.bar is not None:
                self.bar.total = None
                self.bar.bar_format = "{desc}: kernel {n_fmt} [{elapsed}]"
        if self.bar is not None:
            self.bar.update(1)
        elif time.perf_counter() - self.t_last >= LOG_EVERY_S:
            self._log_line()

    def clear(self) -> None:
        """numba stopped compiling: erase the bar's line (the next kernel draws it again), so the command's own
        lines never print into it."""
        self.busy = False
        if self.bar is not None:
            self.bar.clear()

    def close(self) -> None:
        self._stop.set()
        if self._thread is not None and self._thread is not threading.current_thread():
            self._thread.join()
        if self in _bars:
            _bars.remove(self)
        if self.bar is not None:
            self.bar.close()
            self.bar = None


#: the open :class:`_KernelBar` objects of this process
_bars: list[_KernelBar] = []
#: not empty once this command started the side process of :func:`side_compile` (:func:`compile_line` clears it)
_side: list[bool] = []


@contextlib.contextmanager
def compile_line(prefix: str, stream=None) -> Iterator[CompileWatch]:
    """Say on ``stream`` (stderr) when numba compiles inside the block, how far it got, and how long it took.

    When the first kernel starts compiling: ``PREFIX: compiling numba kernels, once per cache (about S s in
    one process on 2 cores, longer on a busy machine; `caishen warmup` compiles ahead of time) ...`` and
    ``not in the cache yet: DIR`` (:func:`cold_estimate`; wrapped to 100 columns); on a terminal then a progress
    bar by kernel (``kernel 12 of 89``, the count this machine measured last), on a pipe a line
    ``kernel 12 of 89 (T s)`` at least every :data:`LOG_EVERY_S` s while numba compiles
    (:class:`_KernelBar`).  The compile's summary comes once: when the command's own work begins
    (:func:`compile_over`, called by the work at its start: the runner before its first chunk, ``caishen
    play`` before the first prompt): ``PREFIX: compiled N numba kernel(s) in T s of compiling before the
    work began`` (``T``: the seconds inside numba's compiles only), or else at the block's end (a command
    without that call, an error, Ctrl-C): ``PREFIX: compiled N numba kernel(s) in T s of compiling``.  When
    more kernels compiled after the first line, the end says ``PREFIX: compiled N numba kernel(s) in all,
    T s of compiling (M of them during the work)``.  The count and time are kept for the next estimate.
    Every line is one write (:func:`say`).  Nothing when every kernel came from the cache.  Yields the
    :class:`CompileWatch`.
    """
    import sys

    from caishen.sim.termtext import wrap_lines

    out = stream if stream is not None else sys.stderr
    line = _Line(prefix, out)

    def start() -> None:
        say(out, "\n".join(wrap_lines([
            f"{prefix}: compiling numba kernels, once per cache ({cold_estimate(prefix)}; `caishen warmup` "
            "compiles ahead of time) ...", f"    not in the cache yet: {cache_dir()}"])))
        line.bar = _KernelBar(prefix, out)

    if not _lines:  # a new command: no side process yet
        _side.clear()
    _lines.append(line)
    try:
        with CompileWatch(start, on_kernel=lambda: line.bar is not None and line.bar.step(),
                          on_idle=lambda: line.bar is not None and line.bar.clear(),
                          on_begin=lambda: line.bar is not None and line.bar.begin()) as w:
            line.watch = w
            try:
                yield w
            finally:
                if line.bar is not None:
                    line.bar.close()
                    line.bar = None
                if w.announced:
                    if line.said is None:
                        say(out, f"{prefix}: compiled {w.kernels} numba kernel(s) in {w.seconds:.1f} s of compiling")
                    elif line.said < w.kernels:  # more compiled during the work: the sum, named as such
                        say(out, f"{prefix}: compiled {w.kernels} numba kernel(s) in all, {w.seconds:.1f} s of "
                            f"compiling ({w.kernels - line.said} of them during the work)")
                    _record_estimate(prefix, w.kernels, w.seconds)
    finally:
        _lines.pop()


class _Line:
    """The state of one :func:`compile_line` block: its kernel bar (once numba compiles), its watch, and the
    kernel count its first summary said (:func:`compile_over`; None until then)."""

    def __init__(self, prefix: str, out):
        self.prefix = prefix
        self.out = out
        self.bar: _KernelBar | None = None
        self.watch: CompileWatch | None = None
        self.said: int | None = None


#: the :func:`compile_line` blocks open in this process (innermost last)
_lines: list[_Line] = []


def inside_compile_line() -> bool:
    """True inside a :func:`compile_line` block: its lines speak for any compile, so inner code stays quiet."""
    return bool(_lines)


def compile_over() -> None:
    """The command's own work begins (its first chunk, its first prompt): the innermost :func:`compile_line`
    says its compile line now, if numba compiled anything in it, and closes its kernel bar; once per block
    (later calls, a sweep's next runs, say nothing: the block's end sums up what compiled after).  Outside a
    block it does nothing."""
    if not _lines:
        return
    line = _lines[-1]
    w = line.watch
    if line.said is not None or w is None or not w.announced:
        return
    if line.bar is not None:
        line.bar.close()
        line.bar = None
    line.said = w.kernels
    say(line.out, f"{line.prefix}: compiled {w.kernels} numba kernel(s) in {w.seconds:.1f} s of compiling "
        "before the work began")


#: the side process's work (:func:`side_compile`), in order: ``(module, function)`` pairs compiling kernels
#: into the cache without running them, with the self-play loop's argument types: the learned bot (typed
#: last of the bots by the command's process), then the tuned bot (typed just before it)
SIDE_COMPILE = (("caishen.sim.bots.learned", "compile_ahead"), ("caishen.sim.bots.tuned", "compile_ahead"))
#: seconds :func:`side_compile` waits for its process after the block before it stops it
SIDE_WAIT_S = 60.0


@contextlib.contextmanager
def side_compile(enabled: bool = True) -> Iterator[None]:
    """Compile part of the self-play kernels in a second process while this one compiles the rest.

    numba compiles in one thread, and a kernel's callees before it: the
    self-play loop (:func:`caishen.sim.selfplay.batch._play_batch_walls`) types
    its bots one after the other, the learned bot last
    (:func:`caishen.sim.bots.registry._base_action`), the tuned bot before it.  With ``enabled``, two or
    more cores, more than 1.1 of them idle (``os.getloadavg()``: where other
    jobs keep the second core busy the two processes share it, and were seen
    1.15x slower in wall time than one at load ~2.5; on a quiet machine the
    one-minute average still counts the pip install of a first ``make run``,
    0.8 in a newcomer's fresh clone) and an empty cache (no mark of the
    ``selfplay`` target), a
    process runs :data:`SIDE_COMPILE` (the learned bot's kernels, then the
    tuned bot's, with the loop's argument types) into the same numba cache
    meanwhile, and this process loads them from it when its typing gets there
    instead of compiling them again: a cold first run compiles on two cores
    (the kernel count on stderr is then the one measured with the side process,
    :func:`estimates`).  Nothing changes in
    what is compiled or how it runs; a side process that is late only costs
    the other core.  After the block it waits up to :data:`SIDE_WAIT_S` s for
    the process, then stops it (numba writes each cache file whole).
    """
    import subprocess
    import sys

    proc = None
    try:
        cores = len(os.sched_getaffinity(0))
    except AttributeError:
        cores = os.cpu_count() or 1
    try:  # the other jobs' runnable processes: a side process helps only on a core no one else uses
        busy = os.getloadavg()[0]
    except (AttributeError, OSError):
        busy = 0.0
    idle = cores - busy > 1.1  # under load 0.9 on 2 cores: no other job holds a core
    if enabled and cores >= 2 and idle and not any(is_marked("selfplay", part) for part in ("kernel", "bots")):
        work = "; ".join(f"from {module} import {func}; {func}()" for module, func in SIDE_COMPILE)
        try:
            proc = subprocess.Popen([sys.executable, "-c", work],
                                    env=dict(os.environ, NUMBA_CACHE_DIR=str(cache_dir())),
                                    stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        except OSError:  # no second process: this one compiles everything, as without it
            proc = None
        if proc is not None:
            _side.append(True)
            for bar in list(_bars):
                bar.side_started()
    try:
        yield
    finally:
        if proc is not None:
            try:
                proc.wait(timeout=SIDE_WAIT_S)
            except subprocess.TimeoutExpired:
                proc.terminate()
                proc.wait()


@contextlib.contextmanager
def first_use(target: str) -> Iterator[None]:
    """Wrap the first kernel call of ``target``: warn when numba really compiles in it, mark it when done.

    Once per process and target: when a kernel starts compiling inside the
    block (:class:`CompileWatch`; a cache hit says nothing) a warning is
    logged (logger ``caishen``) with the most seconds to expect (a cold cache's; less when part of the
    target is cached) and how to avoid it,
    and at the end one with the seconds it took; inside :func:`compile_line`
    (the ``caishen`` commands) that one speaks instead.  Marks the target.
    Raises ``ValueError`` for an unknown target.
    """
    check_target(target)
    if target in _announced:
        yield
        return
    _announced.add(target)

    def start() -> None:
        log.warning(
            "caishen: compiling the %s kernels with numba (not in the cache yet: about %d s for all of them in one "
            "process on 2 cores, longer on a busy machine, less when some are cached or only some are used; "
            "cached afterwards in %s). `caishen warmup` compiles everything ahead of time.",
            target, COLD_SECONDS[target], cache_dir(),
        )

    bar: list[_KernelBar] = []

    def begin() -> None:  # outside a command (the Python API): a logged line every few seconds while it compiles
        if not bar and not inside_compile_line():
            bar.append(_KernelBar(f"caishen: {target} kernels", _LogLines(), lines=True))
        if bar:
            bar[0].begin()

    try:
        with CompileWatch(start, on_kernel=lambda: bar and bar[0].step(), on_idle=lambda: bar and bar[0].clear(),
                          on_begin=begin) as w:
            yield
    finally:
        if bar:
            bar[0].close()
    if w.announced:
        log.warning("caishen: compiled %d %s kernel(s) in %.1f s", w.kernels, target, w.seconds)
    set_mark(target)


class _LogLines:
    """The ``out`` of a :class:`_KernelBar` outside a command: each line a warning of the ``caishen`` logger
    (what :func:`first_use` speaks through)."""

    def write(self, text: str) -> None:
        for line in text.splitlines():
            if line:
                log.warning("%s", line)

    def flush(self) -> None:
        pass
