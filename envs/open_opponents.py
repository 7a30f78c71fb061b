"""Open seats (``python:``, ``exec:``, step-API agents) as the opponents of the batched env: :class:`OpenOpponents`.

:class:`caishen.envs.batched.BatchedGames` in ``mode="versus"`` -- and so
``gymnasium.make_vec("caishen/<Name>-v0", opponents=...)``
(:class:`caishen.envs.vector_env.CaishenVectorEnv`) and ``gymnasium.make``'s
:class:`caishen.envs.gym_env.MahjongEnv` (one game of it) -- seats open seats among its opponents: one spec for the
three other seats (``"python:mybot.py:act"``) or three in seat order, open
seats beside numba bots (``"greedy,python:mybot.py:act,exec:./bot"``).  A step-API agent object
(:class:`caishen.sim.bots.agent.Agent`, ``act(observation) -> int``) is an open seat too
(:class:`AgentSeat`, one per seat it plays): asked once per decision with the seat's
:class:`caishen.sim.engine.Observation`, built as :meth:`caishen.sim.engine.Game.observe` builds it
(the agent of a kernel bot's spec plays inside numba instead, :func:`caishen.envs.batched.opponent`).

The numba bots keep playing inside the step kernel; a game stops where an open
seat must decide (:mod:`caishen.envs.batched_kernels`, ``gi[GI_OPEN]``).  After
the kernel, :meth:`OpenOpponents.settle` asks every open seat for *all* the
games waiting for it at once -- a ``python:`` seat in one call ``FN(obs, mask)``
with the batch, in the observation layout it declares; an ``exec:`` program
one request per game -- resumes those games in numba, and repeats these rounds
until every game waits for its learning seat again.  So an open seat is
called once per round with every game that waits for it; one env step takes
as many rounds as the open seats' decisions between two of the learning
seat's (a handful).

The seats are the arena host's own (:func:`caishen.envs.arena_host._open_seats`:
:class:`caishen.envs.seats.PythonSeat`, :class:`caishen.envs.exec_seat.ExecSeat`),
with the same observations, the same checks and the same
:class:`caishen.envs.seats.SeatError` naming the bot and the decision (an
illegal action, a wrong shape or dtype, an exception, a program that crashes,
hangs or writes garbage).  After such an error the batch's games are
half-stepped: the programs are killed and :meth:`BatchedGames.step` refuses
until the next ``reset()``.

An ``exec:`` program plays one seat of every game (with ``seat="random"`` one
program per seat) and hears only the hands where that seat is an opponent:
the batched kernels log every deal, action and hand's end as the arena host's
table logs them (:mod:`caishen.envs.seat_log`), and :meth:`OpenOpponents.feed`
turns them into the program's events (only what its seat may see,
:func:`caishen.envs.exec_seat.public_action`); an agent seat hears them too,
as its observations' :class:`caishen.sim.engine.PublicLog`.  The protocol's ``game``
numbers the hands the batch dealt, from 0.  The programs start at the first
``reset()`` and stop at ``close()`` (``env.close()``); the hands in play at a
later ``reset()`` are abandoned (no ``end_hand``).
"""

from __future__ import annotations

import numpy as np

from caishen.envs import batched
from caishen.envs.arena_host import SeatAgent, _open_seats
from caishen.envs.batched_kernels import GI_HAND_SEED, GI_OPEN, GI_WAIT, OPEN_DRAIN, _resume_open
from caishen.envs.exec_seat import ExecSeat
from caishen.envs.seat_log import LOG_ACT, LOG_CAP, LOG_DEAL, LOG_END
from caishen.envs.seats import SeatError, legal_names
from caishen.sim.bots.agent import Agent
from caishen.sim.engine import (N_ACTIONS, N_SEATS, PHASE_NAMES, Observation, PublicLog, _legal_mask, action_name,
                                public_action)
from caishen.sim.engine.game import _read_only
from caishen.sim.engine.view import seat_view
from caishen.sim.rules.options import short_repr

__all__ = ["OpenOpponents", "AgentSeat"]


class AgentSeat:
    """A step-API agent (:class:`caishen.sim.bots.agent.Agent`: ``act(observation) -> int``) in seat ``seat`` of
    every game of ``games`` (a versus :class:`caishen.envs.batched.BatchedGames`), an open seat like a
    ``python:`` one.

    :meth:`decide` builds each deciding game's :class:`caishen.sim.engine.Observation` exactly as
    :meth:`caishen.sim.engine.Game.observe` does (the state with what the seat may not see canonical,
    :func:`caishen.sim.engine.view.seat_view`; its legal mask; the rule context; the hand's
    :class:`caishen.sim.engine.PublicLog` as the seat sees it, built from the events the kernels log, as
    an ``exec:`` seat hears them) and calls ``agent.act`` once per decision.  An exception, or an answer
    that is no legal action index (a bool is none), raises :class:`caishen.envs.seats.SeatError` naming
    the agent, the game and the action.
    """

    def __init__(self, agent: Agent, seat: int, games):
        self.agent = agent
        self.seat = int(seat)
        self.seats = (self.seat,)
        self.name = f"agent {type(agent).__name__}"
        self._ep, self._tabs = games._ep, games._tabs
        self._ctx = (games.rules_name, games.rules, _read_only(games._ep), _read_only(games._rp), games._tabs)
        self._logs: dict[int, PublicLog] = {}  # hand number (the exec protocol's game) -> its log
        self.decisions = 0

    def begin(self) -> None:
        """Before a ``reset()``'s deal: forget the hands abandoned."""
        self._logs = {}

    def start_hand(self, game: int, dealer: int) -> None:
        log = PublicLog(self.seat)
        log._items.append(("start_hand", int(dealer)))
        self._logs[game] = log

    def action(self, game: int, actor: int, action: int) -> None:
        name = public_action(int(actor), int(action), self.seat)
        if name is not None and game in self._logs:
            self._logs[game]._items.append(("action", int(actor), name))

    def end_hand(self, game: int, scores, winners) -> None:
        log = self._logs.pop(game, None)
        if log is not None:
            log._items.append(("end_hand", tuple(int(x) for x in scores), tuple(int(x) for x in winners)))

    def decide(self, idx: np.ndarray, host) -> np.ndarray:
        """``int64[k]``: the agent's actions in the games ``idx`` of ``host`` (:class:`OpenOpponents`), one
        ``act`` call each."""
        out = np.zeros(len(idx), np.int64)
        for j, i in enumerate(idx):
            st = host.states[i]
            _legal_mask(st, self._ep)  # the seat's own mask and legal list, copied with the state (Game.observe)
            view = seat_view(st, self.seat, self._ep, self._tabs)
            log = self._logs.get(host.game_of(i))
            obs = Observation(self.seat, view[0], view[0]["mask"], *self._ctx,
                              log if log is not None else PublicLog(self.seat))
            try:
                a = self.agent.act(obs)
            except Exception as e:
                raise SeatError(f"{self.name}: act raised {type(e).__name__}: {e} ({host.where(i)})") from None
            if isinstance(a, (bool, np.bool_)) or not isinstance(a, (int, np.integer)) or not 0 <= a < N_ACTIONS:
                raise SeatError(f"{self.name}: act returned {short_repr(a)} ({host.where(i)}): give a legal action "
                                f"index 0..{N_ACTIONS - 1} (bools and floats are not actions)")
            if not st["mask"][a]:
                raise SeatError(f"{self.name}: illegal action {action_name(int(a))!r} ({int(a)}) ({host.where(i)}); "
                                f"legal: {legal_names(st['mask'].astype(bool))}")
            out[j] = a
        self.decisions += len(idx)
        return out

    def close(self) -> None:
        """Nothing to release."""


class OpenOpponents:
    """The open seats among the opponents of ``games`` (a versus :class:`caishen.envs.batched.BatchedGames`).

    ``specs``: the four seats' specs (the learning seat's, when fixed, is
    not an open seat).  Holds the seats, the log the kernels write for the
    ``exec:`` ones (``log: int64[n, LOG_CAP, 3]``, ``log_n: int64[n]``; empty
    without one) and is the *host* the seats read (``states``,
    :meth:`waiting`, :meth:`game_of`, :meth:`where`, as
    :class:`caishen.envs.arena_host.Table`).  Raises ``ValueError`` naming a
    spec whose code does not load.
    """

    def __init__(self, games, specs: list):
        self.games = games
        joker = int(games._ep.joker)
        specs = [p.name if type(p) is SeatAgent else p for p in specs]  # an open seat's agent: that open seat
        named = [p if isinstance(p, str) else "random" for p in specs]  # an agent's seat is no python:/exec: seat
        self.seats = _open_seats(named, games.rules_name, games.rules.to_dict(), joker)
        self.seats += [AgentSeat(p, s, games) for s, p in enumerate(specs) if isinstance(p, Agent)]
        #: the exec: programs
        self.execs = [x for x in self.seats if isinstance(x, ExecSeat)]
        #: the seats that hear the hands' events (the exec: programs, the agents' public logs)
        self.hearing = [x for x in self.seats if hasattr(x, "start_hand")]
        m = games.n if self.hearing else 0
        self.log = np.zeros((m, LOG_CAP if m else 0, 3), np.int64)
        self.log_n = np.zeros(m, np.int64)
        self._cur = np.full(m, -1, np.int64)  # each game's hand number in the exec protocol
        self._hears: list = [()] * m  # the exec seats that hear each game's hand
        self._next = 0
        self._live = False

    # -- what the seats read -------------------------------------------------------------------
    @property
    def states(self) -> np.ndarray:
        """The games' engine states (``STATE_DTYPE[n]``)."""
        return self.games.states

    def waiting(self, idx: np.ndarray) -> np.ndarray:
        """``int64[k]``: the open seat each game of ``idx`` waits for."""
        return self.games.games["gi"][idx, GI_OPEN].copy()

    def game_of(self, i: int) -> int:
        """Game ``i``'s hand number: the ``game`` of the exec protocol."""
        return int(self._cur[i]) if len(self._cur) else int(i)

    def where(self, i: int) -> str:
        """``"game 17 of the batch (hand seed 4242, seat 2, phase claim)"``: game ``i``'s decision, for messages."""
        gi = self.games.games["gi"][i]
        phase = PHASE_NAMES.get(int(self.states[i]["table"]["phase"]), "?")
        return f"game {i} of the batch (hand seed {int(gi[GI_HAND_SEED])}, seat {int(gi[GI_OPEN])}, phase {phase})"

    # -- life ----------------------------------------------------------------------------------
    def begin(self) -> None:
        """Before a ``reset()``'s deal: start the seats (once; a python: object's ``reset()`` each time) and forget
        the log of the hands abandoned."""
        try:
            for x in self.seats:
                if not (self._live and isinstance(x, ExecSeat)):  # a program is started once
                    x.begin()
        except BaseException:
            self.kill()
            raise
        self._live = True
        self.log_n[:] = 0

    def settle(self) -> None:
        """Ask the open seats until every game waits for its learning seat (module docstring); the games paused
        for the Python scorer are scored on the way (:meth:`BatchedGames._score_paused`).  Raises
        :class:`caishen.envs.seats.SeatError` for a failing seat (the programs killed)."""
        g = self.games
        gi = g.games["gi"]
        try:
            while True:
                self._drain()
                if gi[:, GI_WAIT].any():
                    g._score_paused()
                    continue
                moved = False
                for x in self.seats:
                    idx = np.flatnonzero(np.isin(gi[:, GI_OPEN], x.seats)).astype(np.int64)
                    if len(idx):
                        self._drain()  # a program hears what happened before it is asked
                        _resume_open(idx, x.decide(idx, self), *g._args())
                        moved = True
                if not moved:
                    return
        except BaseException:
            self.kill()
            g._started = False
            raise

    def _drain(self) -> None:
        """Feed the log to the exec seats; resume the games stopped on a full log."""
        gi = self.games.games["gi"]
        while True:
            self.feed()
            stuck = np.flatnonzero(gi[:, GI_OPEN] == OPEN_DRAIN).astype(np.int64)
            if len(stuck) == 0:
                return
            _resume_open(stuck, np.full(len(stuck), -1, np.int64), *self.games._args())

    def feed(self) -> None:
        """Turn the logged deals, actions and hands' ends into the exec seats' events; empty the log."""
        for i in np.flatnonzero(self.log_n):
            entries = self.log[i, :self.log_n[i]].tolist()
            k = 0
            while k < len(entries):
                tag, a, b = entries[k]
                if tag == LOG_DEAL:  # a: the dealer, b: the learning seat (it hears nothing of this hand)
                    self._cur[i] = self._next
                    self._next += 1
                    self._hears[i] = [x for x in self.hearing if x.seat != b]
                    for x in self._hears[i]:
                        x.start_hand(self._cur[i], a)
                elif tag == LOG_ACT:
                    for x in self._hears[i]:
                        x.action(self._cur[i], a, b)
                elif tag == LOG_END:  # a: the winners mask; the seats' LOG_POINTS follow
                    scores = [e[2] for e in entries[k + 1:k + 1 + N_SEATS]]
                    winners = [s for s in range(N_SEATS) if (a >> s) & 1]
                    for x in self._hears[i]:
                        x.end_hand(self._cur[i], scores, winners)
                    k += N_SEATS
                k += 1
        self.log_n[:] = 0

    def close(self) -> None:
        """Send the programs what is left and stop them."""
        if self._live:
            try:
                self.feed()
            finally:
                for x in self.seats:
                    x.close()
        self._live = False

    def kill(self) -> None:
        """Kill the programs (after a failure)."""
        for x in self.execs:
            x.kill()
        self._live = False


batched.register_open_opponents(OpenOpponents)  # batched cannot import this module (it imports batched's seats)
