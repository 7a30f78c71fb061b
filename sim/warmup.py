"""Compiling the numba kernels ahead of time, and saying so when a first use has to.

numba compiles a kernel on its first call and keeps the machine code in its
disk cache (``cache=True``; the directory is set by :mod:`caishen`, keyed by a
digest of the kernel sources).  On a fresh machine, or after an upgrade, the
first self-play run, the first ``Game`` and the first ``env.reset()`` spend
tens of seconds compiling before anything happens; afterwards they load the
cache in about a second.  This module makes that visible and avoidable:

- :func:`warmup` compiles (or loads) everything a *target* uses by running a
  tiny workload of it; ``caishen warmup`` calls it for every target, for
  people who prepare a cluster image, a container or a CI cache.
- :func:`first_use` is the context manager the entry points wrap their first
  kernel call in: when the cache holds no mark for that target it logs a
  warning (logger ``caishen``) that compiling is about to happen and how to
  avoid it, and marks the target once the call returns.

Targets (``TARGETS``): ``selfplay`` (``caishen.sim.selfplay.batch.play_batch`` with every
bot, both rule sets, Jiating's scorer included), ``game`` (``caishen.sim.engine.Game``:
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
from collections.abc import Callable, Iterator
from pathlib import Path

__all__ = ["TARGETS", "warmup", "first_use", "is_marked", "mark", "cache_dir"]

log = logging.getLogger("caishen")

TARGETS = ("selfplay", "game", "envs", "hand", "score")

#: rough cold compile seconds on one core of a 2-core CI machine (measured with
#: ``caishen warmup`` and a fresh ``NUMBA_CACHE_DIR``), quoted in the first-use warning
COLD_SECONDS = {"selfplay": 90, "game": 60, "envs": 60, "hand": 15, "score": 30}


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
    every part).
    """
    _check_target(target)
    return _mark(target).exists() or (part is not None and _mark(f"{target}.{part}").exists())


def _check_target(target: str) -> None:
    if target not in TARGETS:
        raise ValueError(f"unknown warmup target {target!r}; known: {', '.join(TARGETS)}")


def mark(target: str, part: str | None = None) -> None:
    """Record that ``target``'s kernels (only ``part`` of them, if given: :func:`is_marked`) are compiled
    into this cache directory, for an entry point that announces the compile itself (the runner's progress
    line).  Raises ``ValueError`` for an unknown target."""
    _check_target(target)
    if part is None:
        _announced.add(target)
    _set_mark(target if part is None else f"{target}.{part}")


def _set_mark(target: str) -> None:
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
    _check_target(target)
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
        _set_mark(target)


# ---------------------------------------------------------------- the tiny workloads


def _selfplay() -> None:
    from caishen.sim.selfplay.batch import play_batch

    play_batch(16, 1, rules="kaihua", policies="random,greedy,always,threshold:20")
    play_batch(16, 1, rules="kaihua", policies="never", check=True)
    play_batch(16, 1, rules="jiating", policies="random,greedy,greedy,random")
    # the bots with data compile apart (a batch of kernel policies leaves them out, caishen.sim.selfplay.batch)
    play_batch(2, 1, rules="kaihua", policies="tuned:kaihua,mc:1,greedy_safe,piao_table")
    play_batch(2, 1, rules="jiating", policies="tuned:jiating,mc:1,greedy,greedy", wall_seed=1)


def _game() -> None:
    from caishen.sim.engine import Game

    for rules in ("kaihua", "jiating"):
        g = Game(rules).reset(seed=1)
        while not g.done:
            g.step(g.legal_actions()[0])
        g.check()
        g.observation(0)


def _envs() -> None:
    import numpy as np

    from caishen.envs.batched import BatchedGames
    from caishen.envs.gym_env import MahjongEnv

    for rules in ("kaihua", "jiating"):
        b = BatchedGames(4, rules, mode="selfplay").reset(seeds=np.arange(4))
        for _ in range(8):
            b.observe()
            b.step(b.bot_actions("random"))
        env = MahjongEnv(rules)
        env.reset(seed=1)
        env.step(int(np.flatnonzero(env.action_masks())[0]))


def _hand() -> None:
    import numpy as np

    from caishen.sim import hand
    from caishen.sim.tiles import CAISHEN, parse

    c = parse("123456789m1234p")
    for j in (-1, CAISHEN):
        hand.shanten(c, j)
        hand.waits(parse("123456789m123p4s"), j)
        hand.effective_tiles(parse("123456789m123p4s"), j)
        hand.shanten_batch(np.stack([c]), j)
        hand.is_win_batch(np.stack([c]), j)
        hand.effective_tiles_batch(np.stack([parse("123456789m123p4s")]), j)


_SCORE_CASES = (  # one hand of each rule set in the vectors' format (shared/vectors/README.md)
    '{"id": "warm-k", "rules": "kaihua", "dealer": 0, "winner": 1, "win_type": "self_draw", "discarder": null, '
    '"concealed": "123m456m789p234s5s", "melds": [], "win_tile": "5s", "replacement_draw": false, "chain": [], '
    '"piao_circle": []}',
    '{"id": "warm-j", "rules": "jiating", "dealer": 0, "streak": 0, "winner": 1, "win_type": "discard", '
    '"discarder": 2, "concealed": "123m456p789s2p", "melds": [{"type": "pong", "tiles": "777z"}], "win_tile": "2p", '
    '"replacement_draw": false, "declaration": "none", "first_turn": false, "visible": ""}',
)


def _score() -> None:
    from caishen.sim.rules.vectors import score_lines

    for out in score_lines(_SCORE_CASES):
        if "error" in out:  # the workload must reach the kernels
            raise RuntimeError(f"warmup case {out.get('id')!r} was refused: {out['error']}")


_WORK: dict[str, Callable[[], None]] = {
    "selfplay": _selfplay, "game": _game, "envs": _envs, "hand": _hand, "score": _score,
}


def warmup(targets=TARGETS, progress: Callable[[str], None] | None = None) -> dict[str, float]:
    """Compile (or load from the cache) the kernels of each target; ``{target: seconds}``.

    ``targets``: names from :data:`TARGETS`.  ``progress(line)`` is called
    before and after each target (e.g. ``print``).  Marks each target so
    that :func:`first_use` stays quiet afterwards.  Raises ``ValueError``
    for an unknown target.
    """
    targets = (targets,) if isinstance(targets, str) else tuple(targets)
    for t in targets:
        _check_target(t)
    took = {}
    for t in targets:
        if progress:
            progress(f"compiling kernels: {t} ...")
        t0 = time.perf_counter()
        _announced.add(t)  # no first-use warning inside the warmup itself
        _WORK[t]()
        took[t] = time.perf_counter() - t0
        _set_mark(t)
        if progress:
            progress(f"compiling kernels: {t} done in {took[t]:.1f} s")
    return took
