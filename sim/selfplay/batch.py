"""Batch self-play: whole hands in one numba call, bots choosing every action.

``play_batch(n_hands, seed, rules, options, policies)`` shuffles a wall per
hand from the stream of :mod:`caishen.sim.rng` (seeded once per call), plays it to
the end with one policy per seat (:mod:`caishen.sim.bots.registry`: the kernel policies of
:mod:`caishen.sim.bots.policies`, ``tuned:NAME`` and ``mc:N``) and returns the per-hand record
columns of :data:`caishen.sim.engine.RECORD_COLUMNS`.  Matches of ``match_len``
hands rotate the dealer (K-3.3).  The same seed, rules, options and policies
give the same hands.  This is what the runner (:mod:`caishen.sim.selfplay.runner`) calls per
chunk; the engine itself knows no bots.

Duplicate deals (``wall_seed``)
-------------------------------
With ``wall_seed`` (int ``0 .. 2**32-1``) hand ``h``'s wall and dealer are a
function of ``(wall_seed, h)`` only (:func:`duplicate_deal`): the state's
stream is re-seeded from :func:`_wall_key` ``(wall_seed, h)``, the wall is
shuffled and the dealer drawn (uniform over the four seats), then the bots'
own stream (seeded once from ``seed``, used by the random bots) is put back
and continues.  Every hand is then its own one-hand match: ``match_hand`` 0,
streak 0 (J-2.4), and ``match_len`` is ignored.  So the same ``wall_seed``
deals the same walls to the same seats whatever the policies, their seat
order or the options that do not change the wall (all of today's options:
the wall is always 136 tiles; ``reserved_tiles`` only changes where it ends).
This is what a duplicate-deal comparison needs (:mod:`caishen.sim.analysis.arena`: each wall
played once per seat rotation).  Without ``wall_seed`` nothing changes.
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np
from numba import njit

from caishen.sim.rules.base import DEFAULT
from caishen.sim.engine import (
    PH_TURN,
    ERR_MESSAGES,
    N_SEATS,
    PH_DONE,
    _check_state,
    _legal_actions,
    _legal_mask,
    _next_dealer,
    _next_streak,
    _reset,
    _shuffle_wall,
    _step_inlined,
    _random_action,
    _write_record,
    batch_columns,
    engine_params,
    load_rules,
    new_records,
    new_state,
)
from caishen.sim.hand import _shanten
from caishen.sim.bots.registry import POLICY_TUNED, BotContext, _bot_action, bot_table, host_player, make_context
from caishen.sim.bots.policies import POLICY_RANDOM, _choose_action, new_work
from caishen.sim.borrow import borrowed
from caishen.sim.rng import _rng_below, _rng_seed
from caishen.sim.tables import hand_tables
from caishen.sim.validate import check_int


@njit(cache=True, inline="always")
def _play_hand(h, st, ep, rp, tabs, policies, check, work, chance, bx):
    """Play the hand dealt in ``st`` (after ``_reset``) to its end; ``ERR_*`` code or 0.

    ``chance: int8[n, 4]`` row ``h`` is set to 1 where a seat, on some own
    turn, held a joker and would have been ready (shanten <= 0) after
    discarding it: a 飘财 chance (K-9.1), taken or not.  ``check``: True (or
    False) runs (or not) the invariant checker after every step (an illegal bot
    action is reported as ``-1``); None leaves the checker out of the compiled
    kernel (numba prunes its branches: a run compiles ~4 s less).  ``bx``: the
    bot context (:func:`caishen.sim.bots.registry.make_context`), given with the kernel policies too:
    every run, match and study plays this one compiled loop (the search bot apart, whose context
    is None unless a seat searches).

    Inlined into :func:`_play_batch_walls`, its one caller (numba links every callee into each kernel's
    library and optimises it again there: one level fewer is seconds less of a cold compile).  It calls
    the engine's plain :func:`caishen.sim.engine._legal_mask`, the one ``Game``, the envs and the studies
    call (inlined it was no faster; a random seat needs only its list, :func:`caishen.sim.engine._legal_actions`,
    unless the checker runs), and steps with the inlined copy of the step
    (:data:`caishen.sim.engine.turn._step_inlined`: ~10% of random self-play).
    """
    # the arrays are the borrowed views of _play_batch_walls, its only caller (:mod:`caishen.sim.borrow`)
    while st.table.phase != PH_DONE:
        s = st.table.to_act
        joker = ep.joker
        # the 3m+1 tiles left after the joker are ready only if the 3m+2 are a complete hand, whose 3m+1
        # before the draw were ready (seat.ready): the shanten is needed only then, or on a turn after a
        # claim whose 3m+1 tiles before it had a shanten (or its bound, seat.shanten) of at most 1 (one
        # tile in lowers a shanten by at most one, one out does not lower it)
        if (joker >= 0 and chance[h, s] == 0 and st.table.phase == PH_TURN and st.hands[s, joker] > 0
                and (st.seat[s].ready != 0 or (st.table.drawn < 0 and st.seat[s].shanten <= 1))):
            st.hands[s, joker] -= 1
            if _shanten(st.hands[s], joker, tabs) <= 0:
                chance[h, s] = 1
            st.hands[s, joker] += 1
        if policies[s, 0] == POLICY_RANDOM:  # the cheap case without a call: the legal list is all it reads
            if check is None:
                _legal_actions(st, ep)
            else:
                _legal_mask(st, ep)  # the checker reads the mask
            a = _random_action(st)
        else:
            _legal_mask(st, ep)
            if policies[s, 0] >= POLICY_TUNED:  # the bots with data (caishen.sim.bots.registry)
                a = _bot_action(policies[s, 0], policies[s, 1], st, ep, rp, tabs, st.mask, work, bx)
            else:
                a = _choose_action(policies[s, 0], policies[s, 1], st, ep, rp, tabs, st.mask, work)
        if check is not None:  # pruned at compile time when None (the docstring)
            if check and st.mask[a] == 0:
                return -1
        _step_inlined(st, ep, rp, tabs, a)
        if check is not None:
            if check:
                err = _check_state(st, ep, rp, tabs)
                if err != 0:
                    return err
    return 0


_GOLDEN = np.uint64(0x9E3779B97F4A7C15)


@njit(cache=True)
def _wall_key(wall_seed, h):
    """The 64-bit seed of hand ``h``'s wall stream under ``wall_seed``: a splitmix64 hash of
    ``wall_seed`` xor ``h`` (distinct for the hands of one wall seed; two wall seeds collide
    on some hand only with probability ~2**-30 per pair)."""
    z = np.uint64(wall_seed) + _GOLDEN
    z = (z ^ (z >> np.uint64(30))) * np.uint64(0xBF58476D1CE4E5B9)
    z = (z ^ (z >> np.uint64(27))) * np.uint64(0x94D049BB133111EB)
    z = z ^ (z >> np.uint64(31))
    return z ^ np.uint64(h)


@njit(cache=True)
def _duplicate_deal(st, wall_seed, h, saved):
    """Shuffle ``st.wall`` for hand ``h`` of ``wall_seed`` and return its dealer (0..3).

    The state's stream ``st.rng`` (the bots' stream) is kept in ``saved:
    uint64[4]`` meanwhile and restored, so the deal draws nothing from it.
    """
    for i in range(4):
        saved[i] = st.rng[i]
    _rng_seed(st.rng, _wall_key(wall_seed, h))
    _shuffle_wall(st)
    dealer = _rng_below(st.rng, N_SEATS)
    for i in range(4):
        st.rng[i] = saved[i]
    return dealer


class Bots(NamedTuple):
    """The four seats' bots as the play kernels take them (:func:`_play_batch_walls`)."""

    table: np.ndarray  #: int64[4, 2]: each seat's (code, param) (:func:`caishen.sim.bots.registry.bot_table`)
    context: BotContext  #: their context (:func:`caishen.sim.bots.registry.make_context`)
    work: np.ndarray  #: int64[N_WORK_ROWS, 34]: their scratch (:func:`caishen.sim.bots.policies.new_work`)


def _play_batch(seed, n_hands, match_len, policies, check, st, rec, work, chance, rules=None):
    """Play ``n_hands`` hands in matches of ``match_len``; fill the records ``rec: RECORD_DTYPE[n]``.

    ``policies: int64[4, 2]`` (code, param) per seat, kernel policies only
    (:func:`caishen.sim.bots.registry.code_table`); ``work: int64[4, 34]`` scratch for
    the bots.  ``chance: int8[n, 4]``: the 飘财 chances (:func:`_play_hand`).
    With ``check`` (a bool) the invariant checker runs after the deal and after every
    step.  Returns ``(hand, error)``: ``(-1, 0)`` when all is well, else the
    hand and the ``ERR_*`` code of the first violation (an illegal bot
    action is reported as ``-1``).  ``rules``: ``(name, options)`` of the rule set
    (:func:`caishen.sim.engine.load_rules`; default the default rule set): its engine
    params, its rule params and the bot context.  A Python wrapper of :func:`_play_batch_walls`.
    """
    name, r = rules if rules is not None else load_rules(DEFAULT, None)
    bots = Bots(policies, make_context(name, r, np.zeros((N_SEATS, 1)), seed, None), work)
    return _play_batch_walls(seed, -1, n_hands, match_len, bots, engine_params(name, r), r.params(), hand_tables(),
                             _check_arg(check), st, rec, chance)


def _check_arg(check: bool):
    """The play kernels' ``check`` for a bool: True, or None (no checker compiled in; :func:`_play_hand`)."""
    return True if check else None


@njit(cache=True)
def _play_batch_walls(seed, wall_seed, n_hands, match_len, bots, ep, rp, tabs, check, st, rec, chance):
    """:func:`_play_batch`, with duplicate deals when ``wall_seed >= 0`` (module docstring).

    ``wall_seed`` -1: walls and first dealers from the stream seeded by
    ``seed`` (the classic batch); ``0 .. 2**32-1``: hand ``h``'s wall and
    dealer from :func:`_duplicate_deal`, every hand a one-hand match
    (``match_len`` ignored), the stream seeded by ``seed`` left to the bots.
    ``bots``: the seats' :class:`Bots` (their table, context and scratch).
    ``check``: True, False or None (:func:`_play_hand`; :func:`_check_arg` of a bool).
    """
    # borrowed views: no atomic reference counting in the inlined deal and steps, nor in the bots with data
    # (caishen.sim.borrow)
    ep, rp, tabs, chance, rec, bots = borrowed((ep, rp, tabs, chance, rec, bots))
    policies, work, bx = bots.table, bots.work, bots.context
    _rng_seed(st.rng, seed)  # walls, first dealers and random bots draw from it
    saved = np.zeros(4, np.uint64)
    dealer = 0
    streak = np.int64(0)  # not a literal 0: _next_streak compiles once
    for h in range(n_hands):
        if wall_seed >= 0:
            mh = 0
            dealer = _duplicate_deal(st, wall_seed, h, saved)
            streak = 0
        else:
            mh = h % match_len
            if mh == 0:
                dealer = _rng_below(st.rng, N_SEATS) if ep.first_dealer_random != 0 else 0
                streak = 0
            _shuffle_wall(st)
        _reset(st, ep, rp, tabs, dealer)
        st.table.match_hand = mh
        st.table.streak = streak  # J-2.4
        if check is not None:  # pruned at compile time when None
            if check:
                err = _check_state(st, ep, rp, tabs)
                if err != 0:
                    return h, err
        err = _play_hand(h, st, ep, rp, tabs, policies, check, work, chance, bx)
        if err != 0:
            return h, err
        _write_record(st, ep, h, rec[h])
        nxt = _next_dealer(ep, dealer, st.table.winners_mask)
        streak = _next_streak(dealer, nxt, streak)
        dealer = nxt
    return -1, 0


def duplicate_deal(wall_seed: int, h: int) -> tuple[np.ndarray, int]:
    """The wall (``uint8[136]``) and dealer (0..3) of hand ``h`` under ``wall_seed`` (module docstring).

    ``play_batch(..., wall_seed=wall_seed)`` plays exactly this deal as its
    hand ``h``; :meth:`caishen.sim.engine.Game.reset` ``(wall=..., dealer=...)``
    replays it.  Raises ``ValueError`` for a ``wall_seed`` outside
    ``0 .. 2**32-1`` or an ``h`` outside ``0 .. 10**10``.
    """
    wall_seed = check_int("wall_seed", wall_seed, 0, 2**32 - 1)
    h = check_int("h", h, 0, 10**10)
    st = new_state()[0]
    dealer = _duplicate_deal(st, wall_seed, h, np.zeros(4, np.uint64))
    return st["wall"].copy(), int(dealer)


def play_batch(
    n_hands: int,
    seed: int,
    rules=DEFAULT,
    options=None,
    policies="greedy",
    match_len: int = 16,
    check: bool = False,
    wall_seed: int | None = None,
) -> dict[str, np.ndarray]:
    """Play ``n_hands`` hands of self-play in one numba call; the per-hand record columns.

    ``seed``: int in ``0 .. 2**32 - 1``.  ``policies``: one spec for every
    seat or four (``"greedy"``, ``"greedy,greedy,always,threshold:30"``,
    ``"tuned:NAME,mc:16,greedy,greedy"``; see :mod:`caishen.sim.bots.policies` and
    :mod:`caishen.sim.bots.registry`).  ``match_len``: hands per match (dealer rotation,
    K-3.3).  ``check``: run the invariant checker after every step (slower).
    ``wall_seed``: None (walls from ``seed``), or an int in ``0 .. 2**32 - 1``
    for duplicate deals: hand ``h``'s wall and dealer depend on
    ``(wall_seed, h)`` only (:func:`duplicate_deal`), every hand is a
    one-hand match (``match_hand`` and ``streak`` 0; ``match_len`` is
    ignored) and ``seed`` seeds only the bots' stream (module docstring).
    Returns ``dict[str, np.ndarray]`` of length ``n_hands`` with the dtypes of
    :data:`caishen.sim.engine.RECORD_COLUMNS` (a rule set with a finisher: its records contract,
    ``RuleSet.columns``, its wins scored after the hand).  Raises ``ValueError`` for bad
    arguments (also a 飘 policy on a rule set without a 财神,
    :func:`caishen.sim.bots.registry.check_fits`, and weights tuned for another
    rule set) and ``RuntimeError`` if the
    checker finds a violation.  A table with an open seat (``python:``, ``exec:``) is played by the host
    registered above ``sim`` (:func:`caishen.sim.bots.registry.host_player`), same columns, same deals.
    """
    n_hands = check_int("n_hands", n_hands, 0, 10**10)
    seed = check_int("seed", seed, 0, 2**32 - 1)
    match_len = check_int("match_len", match_len, 1, 2**31 - 1)
    wall_seed = -1 if wall_seed is None else check_int("wall_seed", wall_seed, 0, 2**32 - 1)
    host = host_player(policies)  # an open seat (python:, exec:): the host registered above sim plays the table
    if host is not None:
        return host(n_hands, seed, rules=rules, options=options, policies=policies, match_len=match_len, check=check,
                    wall_seed=None if wall_seed < 0 else wall_seed)
    name, r = load_rules(rules, options)
    ep = engine_params(name, r)
    rp = r.params()
    table, weights = bot_table(policies, name, int(ep.joker))  # no 飘 policy without a 财神
    bx = make_context(name, r, weights, seed, policies)
    st = new_state()[0]
    rec = new_records(n_hands)
    work = new_work()
    chance = np.zeros((int(n_hands), N_SEATS), np.int8)
    hand, err = _play_batch_walls(int(seed), int(wall_seed), int(n_hands), int(match_len), Bots(table, bx, work), ep,
                                  rp, hand_tables(), _check_arg(check), st, rec, chance)
    if err != 0:
        what = "a bot chose an illegal action" if err < 0 else ERR_MESSAGES[err]
        where = f"seed {seed}" + (f", wall_seed {wall_seed}" if wall_seed >= 0 else "")
        raise RuntimeError(f"state check failed in hand {hand} of {where}: {what}")
    out = batch_columns(name, r, rec)  # a finisher: the wins scored after the hand (J-9)
    if ep.joker >= 0:  # 飘财 chances, the baseline of the summary's "comparable non-飘 play"
        for s in range(N_SEATS):
            out[f"piao_chance_{s}"] = chance[:, s].copy()
    return out


def warm() -> None:
    """A few hands of every rule set with every kernel policy of the bot registry that can play it
    (``caishen warmup selfplay``; the bots with data compile apart: :func:`warm_bots`)."""
    from caishen.sim import rules
    from caishen.sim.bots import registry

    for name in rules.names():
        play_batch(16, 1, rules=name, policies="greedy")  # the runs' kernel: no checker (_play_hand)
        specs = _fitting(name, [s for s in registry.examples(name) if not registry.has_data(s)])
        for i in range(0, len(specs), N_SEATS):
            play_batch(16, 1, rules=name, policies=",".join((specs[i:i + N_SEATS] * N_SEATS)[:N_SEATS]))


def warm_bots() -> None:
    """Two duplicate-deal hands of every rule set with every bot with data of the bot registry that can play
    it, each in self-play and in the step API (``caishen warmup bots``)."""
    from caishen.sim import rules
    from caishen.sim.bots import registry
    from caishen.sim.bots.agent import kernel_agent
    from caishen.sim.engine import Game

    for name in rules.names():
        for spec in _fitting(name, [s for s in registry.examples(name) if registry.has_data(s)]):
            play_batch(2, 1, rules=name, policies=f"{spec},greedy,greedy,greedy", wall_seed=1)
            game, bot = Game(name).reset(seed=1), kernel_agent(spec)
            game.step(bot.act(game.observe()))


def _fitting(name: str, specs: list[str]) -> list[str]:
    """The specs of ``specs`` that can play rule set ``name`` (:func:`caishen.sim.bots.registry.check_fits`)."""
    from caishen.sim.bots import registry

    name, r = load_rules(name)
    joker = int(engine_params(name, r).joker)
    out = []
    for spec in specs:
        try:
            registry.check_fits(registry.parse(spec), name, joker)
        except ValueError:
            continue
        out.append(spec)
    return out
