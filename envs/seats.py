"""Open seats: your own bot at the table of every command, as ``python:MODULE:FN`` or ``exec:CMD``.

The bot registry (:mod:`caishen.sim.bots.registry`) parses the two specs;
this module gives them a body, and :mod:`caishen.envs.arena_host` registers
the host that plays them (:func:`caishen.sim.bots.registry.register_host`,
done when ``caishen.envs`` is imported, as the ``caishen`` command does), so
``sim/`` never imports ``envs/``.  Every command that plays through
:func:`caishen.sim.selfplay.batch.play_batch` then seats them: ``caishen
simulate``, ``match``, ``ladder``, ``sweep`` (the tables and the duplicate
deals are the kernel bots' own, :mod:`caishen.envs.arena_host`) and ``balance``; the envs take
them as opponents (``gymnasium.make_vec(..., opponents=...)``,
:mod:`caishen.envs.open_opponents`, ``MahjongEnv`` too: one game of the same core).

``python:MODULE:FN`` / ``python:PATH.py:FN``
    ``FN`` (a function, an object with ``act`` or a class made with no
    argument) is called as ``FN(obs, mask) -> actions`` on a *batch* of
    decisions: ``obs`` the observation of each deciding seat in the layout of
    :class:`caishen.envs.batched.BatchedGames` (``uint8[n, 76, 34]`` planes by
    default), ``mask: bool[n, 145]`` the legal actions, and it returns
    ``int[n]`` legal actions.  It may declare the observation it wants with
    attributes named as ``gymnasium.make_vec``'s arguments
    (:data:`OBS_KEYS`: ``observation = "flat"``, ``history = True``); an
    object's ``reset()``, if it has one, is called before each batch of hands.
    The host gathers the decisions of all its hands at once, so ``n`` is as
    large as the hands in play (a chunk's walls for ``caishen match``).
``exec:CMD``
    an external program on the JSON-lines protocol of
    :mod:`caishen.envs.exec_seat` (``docs/protocol.md``), one process per seat,
    a time limit per decision (:func:`set_time_limit`, ``--time-limit``).

A bot that fails -- an exception, a wrong shape or dtype, an illegal action,
a crash, a hang, garbage -- raises :class:`SeatError` (a ``ValueError``: the
command exits 2 with one line) naming the bot, the seat and the decision;
the chunk in play is not written, so a run stops cleanly and the same
command resumes it.  The user's module is their bot's code and runs as such;
nothing a program writes is ever evaluated (``json.loads`` only).
"""

from __future__ import annotations

import hashlib
import importlib
import importlib.util
import os
import shutil
import sys
from pathlib import Path

import numpy as np

from caishen.sim.bots import registry
from caishen.sim.engine import N_ACTIONS, action_name

__all__ = ["SeatError", "OBS_KEYS", "PythonSeat", "check", "digest", "load_python", "set_time_limit",
           "time_limit", "uniform_random"]

#: the observation arguments a ``python:`` seat may declare as attributes (``gymnasium.make_vec``'s names)
OBS_KEYS = ("observation", "history")
#: seconds an ``exec:`` seat may take per decision, by default (``--time-limit``)
DEFAULT_TIME_LIMIT = 5.0
#: the longest time limit accepted, seconds
MAX_TIME_LIMIT = 3600.0
_TIME_LIMIT = [DEFAULT_TIME_LIMIT]
#: legal actions named in an error message at most
_NAMED = 12


class SeatError(ValueError):
    """An open seat failed a decision (module docstring); the message names the bot, its seat and the decision."""


def set_time_limit(seconds) -> float:
    """Set the seconds an ``exec:`` seat may take per decision in this process (``0 < s <= 3600``); returns it.
    Raises ``ValueError`` naming a bad value."""
    if isinstance(seconds, bool) or not isinstance(seconds, (int, float)) or not 0 < seconds <= MAX_TIME_LIMIT:
        raise ValueError(f"time limit {seconds!r}: must be a number of seconds in (0, {MAX_TIME_LIMIT:g}]")
    _TIME_LIMIT[0] = float(seconds)
    return _TIME_LIMIT[0]


def time_limit() -> float:
    """The seconds an ``exec:`` seat may take per decision (:func:`set_time_limit`)."""
    return _TIME_LIMIT[0]


def uniform_random(obs, mask) -> np.ndarray:
    """A reference ``python:`` seat (``python:caishen.envs.seats:uniform_random``): a uniformly random legal
    action per row of ``mask: bool[n, 145]``, from a generator seeded 0 at import (``int64[n]``)."""
    m = np.asarray(mask, bool)
    u = _RNG.random(m.shape) * m
    return u.argmax(axis=1).astype(np.int64)


_RNG = np.random.default_rng(0)


# ---------------------------------------------------------------------------
# python: seats -- loading
# ---------------------------------------------------------------------------
_MODULES: dict[str, tuple[tuple, object]] = {}  # a .py path -> (its stamp, the module)
_INSTANCES: dict[tuple, object] = {}  # (spec, id of its module) -> the instance of a class target


def _module_of(target: str, spec: str):
    """The module of a ``python:`` target: a dotted name imported, or a ``.py`` path loaded (again when the file
    changed).  ``ValueError`` naming the spec for a missing module or file, or an import that raised."""
    if target.endswith(".py"):
        path = Path(target)
        if not path.is_file():
            raise ValueError(f"policy {spec!r}: no such file {target!r}")
        real = path.resolve()
        st = real.stat()
        stamp = (st.st_mtime_ns, st.st_size)
        cached = _MODULES.get(str(real))
        if cached is not None and cached[0] == stamp:
            return cached[1]
        name = "caishen_seat_" + hashlib.sha1(str(real).encode()).hexdigest()[:12]
        loader = importlib.util.spec_from_file_location(name, real)
        module = importlib.util.module_from_spec(loader)
        sys.modules[name] = module  # classes and pickling in the file find their module
        try:
            loader.loader.exec_module(module)
        except Exception as e:  # the user's file: any exception is theirs to see, named
            sys.modules.pop(name, None)
            raise ValueError(f"policy {spec!r}: loading {target!r} raised {type(e).__name__}: {e}") from None
        _MODULES[str(real)] = (stamp, module)
        return module
    try:
        return importlib.import_module(target)
    except ModuleNotFoundError as e:
        raise ValueError(f"policy {spec!r}: cannot import module {target!r} ({e})") from None
    except Exception as e:
        raise ValueError(f"policy {spec!r}: importing {target!r} raised {type(e).__name__}: {e}") from None


def load_python(spec: str) -> tuple:
    """``(act, reset or None, obs_kwargs)`` of a ``python:`` spec (module docstring).

    ``act(obs, mask)`` is the function or the object's ``act``; ``obs_kwargs``
    the declared :data:`OBS_KEYS` (a dict for
    :class:`caishen.envs.batched.BatchedGames`).  Raises ``ValueError`` naming
    the spec for a bad spec, a module or file that does not load, a missing
    name, or something that cannot act.
    """
    bot = registry.parse(spec)
    if bot.kind != "python":
        raise ValueError(f"policy {bot.spec!r} is not a python: seat")
    target, _, name = bot.arg.rpartition(":")
    module = _module_of(target, bot.spec)
    obj = module
    for part in name.split("."):
        if not hasattr(obj, part):
            raise ValueError(f"policy {bot.spec!r}: {target!r} has no {name!r}")
        obj = getattr(obj, part)
    if isinstance(obj, type):
        key = (bot.spec, id(module))
        if key not in _INSTANCES:  # a class is made once per process (and again when its file changes)
            try:
                _INSTANCES[key] = obj()
            except Exception as e:
                raise ValueError(f"policy {bot.spec!r}: {name}() raised {type(e).__name__}: {e}") from None
        obj = _INSTANCES[key]
    act = getattr(obj, "act", None)
    if not callable(act):
        act = obj if callable(obj) else None
    if act is None:
        raise ValueError(f"policy {bot.spec!r}: {name!r} is neither a function nor an object with act(obs, mask)")
    reset = getattr(obj, "reset", None)
    kwargs = {k: getattr(obj, k) for k in OBS_KEYS
              if getattr(obj, k, None) is not None and not callable(getattr(obj, k))}
    return act, (reset if callable(reset) else None), kwargs


def _encoder(rules_name: str, options: dict, kwargs: dict, spec: str):
    """A one-game :class:`caishen.envs.batched.BatchedGames` whose :meth:`observe_states` encodes the seat's
    observations (``ValueError`` naming the spec for declared options it refuses)."""
    from caishen.envs.batched import BatchedGames

    try:
        return BatchedGames(1, rules_name, options, mode="selfplay", final_obs=False, **kwargs)
    except (TypeError, ValueError) as e:
        raise ValueError(f"policy {spec!r}: its observation {kwargs!r} is refused: {e}") from None


class PythonSeat:
    """A ``python:`` seat at one table of the arena host: the seats ``seats`` (of one spec) of every game.

    :meth:`decide` is what the host calls with the games waiting for these
    seats; it returns their actions checked, or raises :class:`SeatError`.
    """

    def __init__(self, spec: str, seats: tuple, rules_name: str, options: dict):
        self.spec = registry.normalize(spec)
        self.seats = tuple(seats)
        self.act, self.reset, kwargs = load_python(self.spec)
        self.encoder = _encoder(rules_name, options, kwargs, self.spec)
        self.decisions = 0  # decisions made at this table

    def begin(self) -> None:
        """Before the table's hands: the object's ``reset()``, if any."""
        if self.reset is not None:
            try:
                self.reset()
            except Exception as e:
                raise SeatError(f"policy {self.spec!r}: reset() raised {type(e).__name__}: {e}") from None

    def events(self, game: int, entries) -> None:
        """A python: seat reads observations, not events: nothing to do."""

    def decide(self, idx: np.ndarray, host) -> np.ndarray:
        """``int64[k]``: the actions of the games ``idx`` of ``host`` (:class:`caishen.envs.arena_host.Table`)."""
        states = host.states[idx]
        seats = host.waiting(idx)
        obs = self.encoder.observe_states(states, seats)
        mask = states["mask"].astype(bool)
        try:
            out = self.act(obs, mask)
        except Exception as e:
            raise SeatError(f"policy {self.spec!r}: act raised {type(e).__name__}: {e} on a batch of {len(idx)} "
                            f"decisions ({host.where(idx[0])} first)") from None
        a = np.asarray(out) if not isinstance(out, np.ndarray) else out
        if a.dtype.kind not in "iu":
            raise SeatError(f"policy {self.spec!r}: returned {a.dtype} actions for a batch of {len(idx)} decisions "
                            f"({host.where(idx[0])} first); give int[n] action indices (bools and floats are not "
                            "actions)")
        if a.shape != (len(idx),):
            raise SeatError(f"policy {self.spec!r}: returned shape {a.shape} for a batch of {len(idx)} decisions "
                            f"({host.where(idx[0])} first); give one action per row: shape ({len(idx)},)")
        a = a.astype(np.int64)
        inside = (a >= 0) & (a < N_ACTIONS)
        ok = inside & mask[np.arange(len(idx)), np.where(inside, a, 0)]
        if not ok.all():
            j = int(np.flatnonzero(~ok)[0])
            v = int(a[j])
            what = f"{action_name(v)!r} ({v})" if 0 <= v < N_ACTIONS else f"{v} (outside 0..{N_ACTIONS - 1})"
            raise SeatError(f"policy {self.spec!r}: decision {j} of a batch of {len(idx)} ({host.where(idx[j])}): "
                            f"illegal action {what}; legal: {legal_names(mask[j])}")
        self.decisions += len(idx)
        return a

    def close(self) -> None:
        """Nothing to release."""


def legal_names(mask) -> str:
    """``"discard 1m (0), ..., pass (142)"``: the legal actions of ``mask: bool[145]`` (at most 12 named)."""
    legal = np.flatnonzero(mask)
    names = ", ".join(f"{action_name(int(x))} ({int(x)})" for x in legal[:_NAMED])
    return names + (f", ... ({len(legal)} in all)" if len(legal) > _NAMED else "")


# ---------------------------------------------------------------------------
# checks and digests (the registry's Host)
# ---------------------------------------------------------------------------
def _program(argv: list[str], spec: str) -> str:
    """The program file of an ``exec:`` command line (``argv[0]`` on ``PATH`` or a path), or ``ValueError``."""
    found = shutil.which(argv[0])
    if found is None:
        raise ValueError(f"policy {spec!r}: program {argv[0]!r} not found (not on PATH, or not an executable file)")
    return found


def check(bot: registry.Bot, rules: str) -> None:
    """That an open seat can play: a ``python:`` target loads and can act; an ``exec:`` program exists.
    ``ValueError`` naming the spec."""
    import shlex

    if bot.kind == "python":
        load_python(bot.spec)
    elif bot.kind == "exec":
        _program(shlex.split(bot.arg), bot.spec)
    else:
        raise ValueError(f"policy {bot.spec!r} is not an open seat")


def digest(bot: registry.Bot) -> str:
    """sha256 (hex) of an open seat's code: a ``python:`` target's file, or an ``exec:`` program's file and every
    argument that is a file (its script).  A run records it (:func:`caishen.sim.bots.registry.weights_digest`)."""
    import shlex

    h = hashlib.sha256(bot.spec.encode())
    files: list[str] = []
    if bot.kind == "python":
        target = bot.arg.rpartition(":")[0]
        if target.endswith(".py"):
            files.append(target)
        else:
            try:
                found = importlib.util.find_spec(target)
            except (ImportError, ValueError):
                found = None
            if found is not None and found.origin and os.path.isfile(found.origin):
                files.append(found.origin)
    else:
        argv = shlex.split(bot.arg)
        prog = shutil.which(argv[0])
        files += [prog] if prog else []
        files += [a for a in argv[1:] if os.path.isfile(a)]
    for f in files:
        h.update(b"\0")
        try:
            h.update(Path(f).read_bytes())
        except OSError:
            h.update(b"unreadable")
    return h.hexdigest()


