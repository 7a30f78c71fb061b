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
  kernel call in: when the cache holds no mark for that target it logs a
  warning (logger ``caishen``) that compiling is about to happen and how to
  avoid it, and marks the target once the call returns.

Targets (``TARGETS``): ``selfplay`` (``caishen.sim.selfplay.batch.play_batch`` with every
kernel policy of the bot registry, every rule set, its points kernel included), ``bots``
(every bot with data of the registry, :mod:`caishen.sim.bots.registry`, in self-play and
in the step API), ``game`` (``caishen.sim.engine.Game``:
reset, legal mask, step, the invariant checker), ``envs`` (the batched env
and the Gymnasium env: reset, observe, step), ``hand`` (the public shanten /
win / effective-tile functions), ``score`` (``caishen score``: both rule
sets' hand scoring).
"""

from __future__ import annotations

import contextlib
import logging
import os
import time
from collections.abc import Iterator
from pathlib import Path

__all__ = ["TARGETS", "first_use", "is_marked", "mark", "check_target", "cache_dir"]

log = logging.getLogger("caishen")

TARGETS = ("selfplay", "bots", "game", "envs", "hand", "score")

#: rough cold compile seconds on one core of a 2-core CI machine (measured with
#: ``caishen warmup`` and a fresh ``NUMBA_CACHE_DIR``), quoted in the first-use warning
COLD_SECONDS = {"selfplay": 90, "bots": 120, "game": 60, "envs": 60, "hand": 15, "score": 30}


def cache_dir() -> Path:
    """numba's cache directory for this process (``NUMBA_CACHE_DIR``, set by :mod:`caishen` unless the user set it)."""
    from numba.core import config

    return Path(config.CACHE_DIR or os.environ.get("NUMBA_CACHE_DIR", "."))


def _mark(target: str) -> Path:
    return cache_dir() / "caishen-warm" / target


def is_marked(target: str, part: str | None = None) -> bool:
    """True if a previous process compiled ``target``'s kernels into this cache directory.

    With ``part`` (e.g. the runner's ``"bots"``: the self-play kernels of the
    bots with data, which a batch of kernel policies does not compile): true
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
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(time.strftime("%Y-%m-%dT%H:%M:%S\n"))
    except OSError:  # a read-only cache directory: only the warning repeats
        pass


_announced: set[str] = set()


@contextlib.contextmanager
def first_use(target: str) -> Iterator[None]:
    """Wrap the first kernel call of ``target``: warn when it will compile, mark it when done.

    The warning is logged once per process and target, only when this cache
    directory has no mark for the target (a cold cache).  Raises
    ``ValueError`` for an unknown target.
    """
    check_target(target)
    if target in _announced:
        yield
        return
    _announced.add(target)
    cold = not _mark(target).exists()
    if cold:
        log.warning(
            "caishen: compiling the %s kernels with numba (first use with this cache: about %d s on one core; "
            "cached afterwards in %s). `caishen warmup` compiles everything ahead of time.",
            target, COLD_SECONDS[target], cache_dir(),
        )
    yield
    if cold:
        set_mark(target)
