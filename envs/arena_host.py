"""The arena host: hands where open seats (``python:``, ``exec:``) sit beside the numba bots.

:func:`play_batch` is what :func:`caishen.sim.selfplay.batch.play_batch` hands
a table with an open seat to (this module registers it with the bot registry
when imported; ``import caishen.envs`` imports it): the same arguments, the
same record columns, the same deals.
It plays the hands as a *table*: up to :data:`MAX_SLOTS` games at once, each
an engine state.  One numba call moves every game to the next decision of
an open seat (the kernel bots of the other seats play inside it, as in
``play_batch``); then each open seat decides for all the games waiting for
it at once (:meth:`caishen.envs.seats.PythonSeat.decide`: one call with a
batch of observations and masks; :class:`caishen.envs.exec_seat.ExecSeat`:
one request per game), the actions go back into numba, and so on.  A game
whose hand ends is recorded and dealt its next hand (a free slot takes the
next hand of the queue), so the batches stay as large as the hands in play.

Deals (as ``play_batch``'s): with ``wall_seed`` hand ``h`` is
:func:`caishen.sim.selfplay.batch.duplicate_deal` ``(wall_seed, h)``, a
one-hand match; without it hand ``h``'s wall is ``duplicate_deal(seed, h)``'s
and hands form matches of ``match_len`` (first dealer drawn or seat 0 as the
rule set says, then K-3.3 / J-2.3 rotation and the J-2.4 streak).  The
kernel bots' own random stream is seeded per hand from ``(seed, h)``, so a
hand does not depend on the order the table plays its games in (an open
seat's own randomness is its own).

Every action of a game with an ``exec:`` seat is logged in numba (who, what)
and turned into that program's events between its decisions (only what its
seat may see: :func:`caishen.sim.engine.public_action`).
"""

from __future__ import annotations

import shlex

import numpy as np
from numba import njit

from caishen.envs import seats as open_seats
from caishen.envs.exec_seat import ExecSeat
from caishen.envs.seat_log import LOG_ACT, LOG_CAP, LOG_DEAL, LOG_END, _log
from caishen.sim.borrow import borrowed
from caishen.sim.bots import registry
from caishen.sim.bots.agent import Agent
from caishen.sim.bots.policies import POLICY_RANDOM, new_work
from caishen.sim.bots.registry import _bot_action
from caishen.sim.engine import (
    ERR_MESSAGES,
    N_SEATS,
    PH_DONE,
    PH_TURN,
    PHASE_NAMES,
    _check_state,
    _legal_mask,
    _next_dealer,
    _next_streak,
    _random_action,
    _reset,
    _step,
    _write_record,
    batch_columns,
    engine_params,
    load_rules,
    new_records,
    new_state,
)
from caishen.sim.hand import _shanten
from caishen.sim.rng import _rng_seed
from caishen.sim.rules.base import DEFAULT
from caishen.sim.selfplay.batch import _duplicate_deal, _wall_key
from caishen.sim.tables import hand_tables
from caishen.sim.validate import check_int

__all__ = ["MAX_SLOTS", "SeatAgent", "Table", "play_batch"]

#: games in play at once at most (a table of more hands plays them as slots free up)
MAX_SLOTS = 4096

# per-game slots: info[i, I_*]
I_HAND = 0  #: the hand (record row) the game plays, -1: a free slot
I_LAST = 1  #: the last hand of the slot's job (a match: its hands in turn)
I_WAIT = 2  #: the open seat to act, or WAIT_NONE / WAIT_DRAIN
N_I = 3
WAIT_NONE = -1
WAIT_DRAIN = -2  #: the game's log is full: drain it, then advance
# configuration: cfg[C_*]
C_SEED = 0
C_WALL_SEED = 1  #: -1: no duplicate deals
C_MATCH_LEN = 2
C_CHECK = 3  #: 1: the invariant checker after every step
C_LOG = 4  #: 1: log every action (a table with an exec: seat)
N_C = 5
# log entries (tag, a, b): caishen.envs.seat_log
#: mixed into the per-hand key of the kernel bots' stream (apart from the wall's)
_BOTS_TAG = np.uint64(0xB07_5EED_0F_A11E)


# ---------------------------------------------------------------------------
# kernels
# ---------------------------------------------------------------------------
@njit(cache=True)
def _deal(i, h, out, rules, cfg, saved):
    """Deal hand ``h`` into game ``i`` (module docstring, "Deals"); the kernel bots' stream seeded for ``h``."""
    states, info, log, log_n = out[0], out[1], out[4], out[5]
    ep, rp, tabs = rules
    st = states[i]
    seed = cfg[C_SEED]
    if cfg[C_WALL_SEED] >= 0:
        dealer = _duplicate_deal(st, cfg[C_WALL_SEED], h, saved)
        match_hand = 0
        streak = 0
    elif h % cfg[C_MATCH_LEN] == 0:
        drawn = _duplicate_deal(st, seed, h, saved)
        dealer = drawn if ep.first_dealer_random != 0 else 0  # K-3.2 / J-2.2
        match_hand = 0
        streak = 0
    else:
        old = st.table.dealer
        dealer = _next_dealer(ep, old, st.table.winners_mask)  # K-3.3, J-2.3
        streak = _next_streak(old, dealer, st.table.streak)  # J-2.4
        match_hand = st.table.match_hand + 1
        _duplicate_deal(st, seed, h, saved)
    _rng_seed(st.rng, _wall_key(seed, h) ^ _BOTS_TAG)
    _reset(st, ep, rp, tabs, dealer)
    st.table.match_hand = match_hand
    st.table.streak = streak
    info[i, I_HAND] = h
    if cfg[C_LOG] != 0:
        _log(i, LOG_DEAL, h, dealer, log, log_n)


@njit(cache=True)
def _act(i, s, a, out, rules, cfg):
    """Seat ``s`` plays ``a`` in game ``i`` (logged; checked with ``cfg[C_CHECK]``); an ``ERR_*`` code or 0
    (-1: an illegal action)."""
    states, log, log_n = out[0], out[4], out[5]
    ep, rp, tabs = rules
    st = states[i]
    if cfg[C_CHECK] != 0 and st.mask[a] == 0:
        return -1
    if cfg[C_LOG] != 0:
        _log(i, LOG_ACT, s, a, log, log_n)
    _step(st, ep, rp, tabs, a)
    if cfg[C_CHECK] != 0:
        return _check_state(st, ep, rp, tabs)
    return 0


@njit(cache=True)
def _advance(i, out, rules, bots, bx, cfg):
    """Play game ``i`` until an open seat must decide (``info[i, I_WAIT]`` its seat), its log is full
    (``WAIT_DRAIN``) or its job is done (``info[i, I_HAND] = -1``): the kernel bots of the other seats act,
    each finished hand is recorded (``rec[h]``) and the job's next hand dealt.  The 飘财 chances of every
    decision are marked as ``play_batch`` marks them (K-9.1).  Returns an ``ERR_*`` code or 0."""
    states, info, rec, chance, log, log_n = out
    ep, rp, tabs = rules
    table, hosted, work, saved = bots
    st = states[i]
    joker = ep.joker
    info[i, I_WAIT] = WAIT_NONE
    while True:
        h = info[i, I_HAND]
        if st.table.phase == PH_DONE:
            _write_record(st, ep, h, rec[h])
            if cfg[C_LOG] != 0:
                _log(i, LOG_END, h, 0, log, log_n)
            if h >= info[i, I_LAST]:
                info[i, I_HAND] = -1
                return 0
            _deal(i, h + 1, out, rules, cfg, saved)
            if cfg[C_CHECK] != 0:
                err = _check_state(st, ep, rp, tabs)
                if err != 0:
                    return err
            continue
        if cfg[C_LOG] != 0 and log_n[i] > LOG_CAP - 4:
            info[i, I_WAIT] = WAIT_DRAIN
            return 0
        _legal_mask(st, ep)
        s = st.table.to_act
        if (joker >= 0 and chance[h, s] == 0 and st.table.phase == PH_TURN and st.hands[s, joker] > 0
                and (st.seat[s].ready != 0 or st.table.drawn < 0)):  # as caishen.sim.selfplay.batch._play_hand
            st.hands[s, joker] -= 1
            if _shanten(st.hands[s], joker, tabs) <= 0:
                chance[h, s] = 1
            st.hands[s, joker] += 1
        if hosted[s] != 0:
            info[i, I_WAIT] = s
            return 0
        if table[s, 0] == POLICY_RANDOM:
            a = _random_action(st)
        else:
            a = _bot_action(table[s, 0], table[s, 1], st, ep, rp, tabs, st.mask, work, bx)
        err = _act(i, s, a, out, rules, cfg)
        if err != 0:
            return err


@njit(cache=True)
def _start_slots(slots, firsts, lasts, out, rules, bots, bx, cfg):
    """Give slot ``slots[j]`` the job of hands ``firsts[j]..lasts[j]``, deal and advance it.
    Returns ``(slot, error)``: ``(-1, 0)`` when all is well."""
    slots, firsts, lasts, out, rules, bots, bx = borrowed((slots, firsts, lasts, out, rules, bots, bx))
    info = out[1]
    ep, rp, tabs = rules
    for j in range(slots.shape[0]):
        i = slots[j]
        info[i, I_LAST] = lasts[j]
        _deal(i, firsts[j], out, rules, cfg, bots[3])
        if cfg[C_CHECK] != 0:
            err = _check_state(out[0][i], ep, rp, tabs)
            if err != 0:
                return i, err
        err = _advance(i, out, rules, bots, bx, cfg)
        if err != 0:
            return i, err
    return -1, 0


@njit(cache=True)
def _advance_slots(slots, out, rules, bots, bx, cfg):
    """:func:`_advance` every game of ``slots`` (those stopped to drain their log).  ``(slot, error)``."""
    slots, out, rules, bots, bx = borrowed((slots, out, rules, bots, bx))
    for j in range(slots.shape[0]):
        err = _advance(slots[j], out, rules, bots, bx, cfg)
        if err != 0:
            return slots[j], err
    return -1, 0


@njit(cache=True)
def _apply(slots, actions, out, rules, bots, bx, cfg):
    """The waiting open seat of game ``slots[j]`` plays ``actions[j]`` (checked legal by the caller), then
    the game advances.  ``(slot, error)``."""
    slots, actions, out, rules, bots, bx = borrowed((slots, actions, out, rules, bots, bx))
    info = out[1]
    for j in range(slots.shape[0]):
        i = slots[j]
        err = _act(i, info[i, I_WAIT], actions[j], out, rules, cfg)
        if err != 0:
            return i, err
        err = _advance(i, out, rules, bots, bx, cfg)
        if err != 0:
            return i, err
    return -1, 0


# ---------------------------------------------------------------------------
# the table
# ---------------------------------------------------------------------------
def _open_seats(specs: list[str], name: str, options: dict, joker: int) -> list:
    """The open seats of a table: one :class:`caishen.envs.seats.PythonSeat` per ``python:`` spec (all its
    seats), one :class:`caishen.envs.exec_seat.ExecSeat` per ``exec:`` seat (a process sees one seat)."""
    out, done = [], set()
    for s, spec in enumerate(specs):
        bot = registry.parse(spec)
        if bot.code != registry.POLICY_HOST or (bot.kind == "python" and spec in done):
            continue
        if bot.kind == "python":
            done.add(spec)
            out.append(open_seats.PythonSeat(spec, [t for t, p in enumerate(specs) if p == spec], name, options))
        else:
            out.append(ExecSeat(spec, shlex.split(bot.arg), s, name, joker, open_seats.time_limit()))
    return out


class Table:
    """The hands of one :func:`play_batch` call with open seats, played as a table (module docstring).

    Holds the games' engine states (``states: STATE_DTYPE[m]``), their
    slots (``info: int64[m, 3]``), the records (``rec: RECORD_DTYPE[n]``)
    and the 飘财 chances (``chance: int8[n, 4]``); the open seats read the
    states and the helpers :meth:`waiting`, :meth:`game_of`, :meth:`where`.
    """

    def __init__(self, n_hands: int, seed: int, name: str, rules, specs: list[str], match_len: int, check: bool,
                 wall_seed: int):
        self.name, self.rules, self.specs = name, rules, specs
        self.seed, self.wall_seed = seed, wall_seed
        ep = engine_params(name, rules)
        self.joker = int(ep.joker)
        hosted = np.array([registry.is_open(p) for p in specs], np.uint8)
        kernel_specs = ["random" if hosted[s] else p for s, p in enumerate(specs)]  # an open seat's row is never read
        table, weights = registry.bot_table(kernel_specs, name, self.joker)
        self._bx = registry.make_context(name, rules, weights, seed, kernel_specs)
        if wall_seed >= 0:
            self.jobs = np.stack([np.arange(n_hands), np.arange(n_hands)], 1)
        else:
            first = np.arange(0, n_hands, match_len)
            self.jobs = np.stack([first, np.minimum(first + match_len, n_hands) - 1], 1)
        m = max(1, min(len(self.jobs), MAX_SLOTS))
        self.seats = _open_seats(specs, name, rules.to_dict(), self.joker)
        self.execs = [x for x in self.seats if hasattr(x, "start_hand")]
        log_on = bool(self.execs)
        self.states = new_state(m)
        self.info = np.full((m, N_I), -1, np.int64)
        self.rec = new_records(n_hands)
        self.chance = np.zeros((n_hands, N_SEATS), np.int8)
        self.log = np.zeros((m if log_on else 0, LOG_CAP if log_on else 0, 3), np.int64)
        self.log_n = np.zeros(m, np.int64)
        self._cur = np.full(m, -1, np.int64)  # the hand each slot's logged actions belong to
        self.cfg = np.array([seed, wall_seed, match_len, int(check), int(log_on)], np.int64)
        self._out = (self.states, self.info, self.rec, self.chance, self.log, self.log_n)
        self._rules = (ep, rules.params(), hand_tables())
        self._bots = (table, hosted, new_work(), np.zeros(4, np.uint64))

    # -- what the seats read -------------------------------------------------------------------
    def waiting(self, idx: np.ndarray) -> np.ndarray:
        """``int64[k]``: the seat each game of ``idx`` waits for."""
        return self.info[idx, I_WAIT].copy()

    def game_of(self, i: int) -> int:
        """The hand (record row) game ``i`` plays: the ``game`` of the exec protocol."""
        return int(self.info[i, I_HAND])

    def where(self, i: int) -> str:
        """``"hand 17 of wall seed 4242 (seat 2, phase claim)"``: game ``i``'s decision, for messages."""
        h = int(self.info[i, I_HAND])
        of = f"wall seed {self.wall_seed}" if self.wall_seed >= 0 else f"seed {self.seed}"
        phase = PHASE_NAMES.get(int(self.states[i]["table"]["phase"]), "?")
        return f"hand {h} of {of} (seat {int(self.info[i, I_WAIT])}, phase {phase})"

    # -- playing -------------------------------------------------------------------------------
    def _checked(self, result) -> None:
        i, err = result
        if err != 0:
            what = "a bot chose an illegal action" if err < 0 else ERR_MESSAGES[err]
            h = self._cur[i] if self.info[i, I_HAND] < 0 else self.info[i, I_HAND]
            where = f"wall_seed {self.wall_seed}" if self.wall_seed >= 0 else f"seed {self.seed}"
            raise RuntimeError(f"state check failed in hand {h} of {where}: {what}")

    def _drain(self) -> None:
        """Turn the logged actions into the exec seats' events; advance the games stopped on a full log."""
        while True:
            rows = np.flatnonzero(self.log_n)
            ended = []
            for i in rows:
                for tag, a, b in self.log[i, :self.log_n[i]].tolist():
                    if tag == LOG_DEAL:
                        self._cur[i] = a
                        for x in self.execs:
                            x.start_hand(a, b)
                    elif tag == LOG_ACT:
                        for x in self.execs:
                            x.action(self._cur[i], a, b)
                    else:
                        ended.append(a)
            self.log_n[rows] = 0
            if ended:
                cols = batch_columns(self.name, self.rules, self.rec[ended])
                for k, h in enumerate(ended):
                    scores = [cols[f"score_{s}"][k] for s in range(N_SEATS)]
                    winners = [s for s in range(N_SEATS) if (int(cols["winners_mask"][k]) >> s) & 1]
                    for x in self.execs:
                        x.end_hand(h, scores, winners)
            stuck = np.flatnonzero(self.info[:, I_WAIT] == WAIT_DRAIN)
            if len(stuck) == 0:
                return
            self._checked(_advance_slots(stuck, *self._args()))

    def _args(self):
        return self._out, self._rules, self._bots, self._bx, self.cfg

    def run(self) -> None:
        """Play every hand (module docstring); the open seats are started first and stopped at the end (killed
        on a failure).  Raises :class:`caishen.envs.seats.SeatError` for a failing seat, ``RuntimeError`` for a
        state check that fails (``check``)."""
        ok = False
        try:
            for x in self.seats:
                x.begin()
            next_job = 0
            while True:
                free = np.flatnonzero(self.info[:, I_HAND] < 0)
                if next_job < len(self.jobs) and len(free):
                    k = min(len(free), len(self.jobs) - next_job)
                    jobs = self.jobs[next_job:next_job + k]
                    next_job += k
                    self._checked(_start_slots(free[:k].astype(np.int64), jobs[:, 0].copy(), jobs[:, 1].copy(),
                                               *self._args()))
                    continue
                moved = False
                for x in self.seats:
                    self._drain()
                    idx = np.flatnonzero(np.isin(self.info[:, I_WAIT], x.seats))
                    if len(idx):
                        acts = x.decide(idx, self)
                        self._checked(_apply(idx.astype(np.int64), acts, *self._args()))
                        moved = True
                self._drain()
                if not moved:
                    if (self.info[:, I_HAND] >= 0).any():  # every game in play waits for an open seat
                        raise RuntimeError("the arena host stalled: a game waits for no seat")
                    if next_job >= len(self.jobs):
                        break
            ok = True
        finally:
            for x in self.seats:
                if ok or not hasattr(x, "kill"):
                    x.close()
                else:
                    x.kill()

    def columns(self) -> dict[str, np.ndarray]:
        """The record columns of the hands played, as :func:`caishen.sim.selfplay.batch.play_batch` returns them."""
        out = batch_columns(self.name, self.rules, self.rec)
        if self.joker >= 0:
            for s in range(N_SEATS):
                out[f"piao_chance_{s}"] = self.chance[:, s].copy()
        return out


def play_batch(n_hands: int, seed: int, rules=DEFAULT, options=None, policies="greedy", match_len: int = 16,
               check: bool = False, wall_seed: int | None = None) -> dict[str, np.ndarray]:
    """:func:`caishen.sim.selfplay.batch.play_batch` for a table with open seats (module docstring): the same
    arguments, the same record columns (a rule set's finisher applied, the 飘财 chance columns with a joker).

    Raises ``ValueError`` for bad arguments or a seat that cannot play,
    :class:`caishen.envs.seats.SeatError` (a ``ValueError``) when an open
    seat fails a decision, ``RuntimeError`` when ``check`` finds a violation.
    """
    n_hands = check_int("n_hands", n_hands, 0, 10**10)
    seed = check_int("seed", seed, 0, 2**32 - 1)
    match_len = check_int("match_len", match_len, 1, 2**31 - 1)
    wall_seed = -1 if wall_seed is None else check_int("wall_seed", wall_seed, 0, 2**32 - 1)
    name, r = load_rules(rules, options)
    specs = [b.spec for b in registry.check_seats(policies, name, int(engine_params(name, r).joker))]
    table = Table(n_hands, seed, name, r, specs, match_len, bool(check), wall_seed)
    if n_hands:
        table.run()
    return table.columns()


# ---------------------------------------------------------------------------
# one decision at a time: an open seat as a step-API agent (an env's opponent)
# ---------------------------------------------------------------------------
class _OneGame:
    """The table face of one observation (:meth:`caishen.sim.engine.Game.observe`) for an open seat's ``decide``."""

    def __init__(self, obs, number: int):
        self.states = np.array([obs.state])  # a writable copy of the seat's view (its mask included)
        self.seat = int(obs.seat)
        self.number = number

    def waiting(self, idx):
        return np.full(len(idx), self.seat, np.int64)

    def game_of(self, i):
        return self.number

    def where(self, i):
        phase = PHASE_NAMES.get(int(self.states[0]["table"]["phase"]), "?")
        return f"game {self.number} of the step API (seat {self.seat}, phase {phase})"


class SeatAgent(Agent):
    """An open seat (``python:``, ``exec:``) as a step-API agent: ``act(observation) -> action`` for the
    observing seat (``game.observe()``; :func:`caishen.sim.bots.agent.make_agent` makes it, so an env takes it
    in a :class:`caishen.sim.engine.Game` or the PettingZoo env; the Gymnasium envs take its spec).  A ``python:`` seat gets a batch of
    one decision; an ``exec:`` program, one per seat it is asked for, gets the hand's events as its seat sees
    them (the observation's log) before each request, a hand's end at its next decision, and ``close()``
    (or the end of the process) stops it.  Raises :class:`caishen.envs.seats.SeatError` as the table does."""

    def __init__(self, spec: str):
        self.bot = registry.parse(spec)
        self.name = self.bot.spec
        self._seats: dict = {}  # (rules, seat) -> open seat
        self._logs: dict = {}  # seat -> (its current hand's public log, the hand's number, events sent)

    def act(self, observation) -> int:
        obs = self._check(observation)
        s = obs.seat
        log, number, _ = self._logs.get(s, (None, -1, 0))
        if obs.log is not log:  # a new hand for this seat: a new number
            self._flush(s)
            self._logs[s] = (obs.log, number + 1, 0)
        view = _OneGame(obs, self._logs[s][1])
        seat = self._seat(obs, s)
        if hasattr(seat, "start_hand"):
            self._events(seat, s)
        return int(seat.decide(np.zeros(1, np.int64), view)[0])

    def _seat(self, obs, s: int):
        key = (obs.rules_name, s if self.bot.kind == "exec" else -1)
        if key not in self._seats:
            joker = int(obs.ep.joker)
            seat = _open_seats([self.name] * N_SEATS, obs.rules_name, obs.rules.to_dict(), joker)[
                s if self.bot.kind == "exec" else 0]
            seat.begin()
            self._seats[key] = seat
        return self._seats[key]

    def _events(self, seat, s: int) -> None:
        """Queue the events of seat ``s``'s current hand that ``seat`` (its exec: program) has not had."""
        log, number, sent = self._logs[s]
        for e in log[sent:]:
            if e[0] == "start_hand":
                seat.start_hand(number, e[1])
            elif e[0] == "action":
                seat.seen(number, e[1], e[2])
            else:  # end_hand
                seat.end_hand(number, e[1], e[2])
        self._logs[s] = (log, number, len(log))

    def _flush(self, s: int | None = None) -> None:
        """Queue the rest of seat ``s``'s last hand (every seat's: None) for its exec: program."""
        for (_, p), seat in self._seats.items():  # p: an exec: program's seat (-1: the python: seat)
            if hasattr(seat, "start_hand") and p in self._logs and s in (None, p):
                self._events(seat, p)

    def close(self) -> None:
        """Stop the open seats' programs (after the last game's end)."""
        self._flush()
        for seat in self._seats.values():
            seat.close()
        self._seats = {}


#: the open seats' host of this process (the bot registry hands it every table with a python: or exec: seat)
registry.register_host(registry.Host(play_batch=play_batch, check=open_seats.check, digest=open_seats.digest,
                                     agent=SeatAgent))
