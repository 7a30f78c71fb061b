"""Step-API bots act on the seat's observation (``Game.observe()``), never on the engine.

Three checks: every bot of the registry chooses from the observation the action that the self-play kernel
chooses on the full state (so no bot reads what its seat may not see, and the step API is self-play); the
observation does not depend on anything hidden from the seat, yet shows all that the seat may see
(:meth:`caishen.sim.engine.Game.observation`, the engine's statement of it); a ``Game`` passed to ``act`` is
refused.
"""

from __future__ import annotations

import itertools

import numpy as np
import pytest

from caishen.agents import make_agent
from caishen.sim.bots import registry
from caishen.sim.bots.policies import new_work
from caishen.sim.engine import (
    DF_CLAIMED,
    MAX_DISCARDS,
    PH_CLAIM,
    PH_ROB,
    PH_TURN,
    N_KINDS,
    N_SEATS,
    Game,
    Observation,
    build_wall,
)
from caishen.sim.engine.game import _hidden_twin
from caishen.sim.engine import view as V
from caishen.sim.hand import _shanten
from caishen.sim.tiles import MELD_CHOW, MELD_KONG_ADDED, MELD_KONG_CONCEALED, MELD_KONG_EXPOSED, MELD_NONE, MELD_PONG

RULES = ("kaihua", "jiating")
#: every kind of bot of the registry (random is the agents' numpy stream: checked apart)
SPECS = ("greedy", "greedy_safe", "never", "always", "threshold:30", "piao_table", "tuned:{rules}", "mc:4")
#: decisions compared per bot and rule set
STATES = 240


def _fits(spec: str, rules: str) -> bool:
    joker = int(Game(rules)._ep.joker)
    try:
        registry.check_fits(registry.parse(spec), rules, joker)
    except ValueError:
        return False
    return True


def _self_play_states(rules: str, spec: str, n: int, seed0: int = 100, wall=None):
    """Yield ``(game, observation, full, got)`` for the first ``n`` decisions of hands of four ``spec``
    seats (walls ``seed0, seed0 + 1, ...``, or ``wall`` each hand): ``full`` the self-play kernel's choice on
    the full state, with which the hands go on, ``got`` the agent's from the observation."""
    bot = registry.parse(spec)
    seats = [bot.spec] * N_SEATS
    agent = make_agent(bot.spec, seed=5)
    seed, k = seed0, 0
    while k < n:
        game = Game(rules).reset(seed=seed) if wall is None else Game(rules).reset(wall=wall)
        _, w = registry.bot_table(seats, rules, int(game._ep.joker))
        ctx = registry.make_context(rules, game.rules, w, 5, seats)  # the bot context of self-play
        agent._ctx = None  # a new context with the same stream for the agent too
        work = new_work()
        while not game.done and k < n:
            obs = game.observe()
            game.legal_mask()
            full = int(registry._seat_action(bot.code, bot.param, game.state, game._ep, game._rp, game._tabs,
                                             work, ctx))
            yield game, obs, full, agent.act(obs)
            game.step(full)
            k += 1
        seed += 1


@pytest.mark.parametrize("rules", RULES)
@pytest.mark.parametrize("spec", SPECS)
def test_every_bot_chooses_from_the_observation_what_self_play_chooses(rules, spec, engine_warm):
    """On every decision of self-play hands the agent's action from ``game.observe()`` (everything hidden
    from the seat canonical) equals the self-play kernel's on the full state: no bot reads hidden information."""
    spec = spec.format(rules=rules)
    if not _fits(spec, rules):
        pytest.skip(f"{spec} cannot play {rules} (no 财神)")
    differ = [(g.seed, int(g.state["table"]["steps"]), full, got)
              for g, _, full, got in _self_play_states(rules, spec, STATES) if got != full]
    assert differ == []


def test_random_agent_reads_only_the_legal_actions():
    """``random``: the agent's numpy stream over the observation's legal actions, as before the observation."""
    game, bot, rng = Game("kaihua").reset(seed=4), make_agent("random", seed=9), np.random.default_rng(9)
    while not game.done:
        a = bot.act(game.observe())
        assert a == int(rng.choice(game.legal_actions()))
        game.step(a)


def _scramble(game: Game, seat: int, rng: np.random.Generator) -> Game:
    """A copy of ``game`` that differs in everything hidden from ``seat``: the others' concealed tiles and
    the live wall redealt (:func:`_hidden_twin`), their concealed kongs of another kind, the drawn part of
    the wall, their private flags, the claim queue (but the seat's own question), the random stream, the action count."""
    twin = _hidden_twin(game, seat, rng)
    st = twin.state
    head, tail = int(st["table"]["head"]), int(st["table"]["tail"])
    others = [p for p in range(N_SEATS) if p != seat]
    for p in others:
        for i in range(int(st["seat"][p]["n_melds"])):
            if int(st["meld_type"][p, i]) != MELD_KONG_CONCEALED:
                continue
            k = int(st["meld_kind"][p, i])
            unseen = st["wall"][head:tail + 1].astype(np.int64)
            pool = np.bincount(unseen, minlength=N_KINDS) + sum(st["hands"][q].astype(np.int64) for q in others)
            four = [j for j in np.flatnonzero(pool == 4) if j != k]
            if four:  # swap the kong's kind with another kind of four unseen copies
                j = int(rng.choice(four))
                live = st["wall"][head:tail + 1]
                live[live == j] = k
                for q in others:
                    st["hands"][q, k], st["hands"][q, j] = st["hands"][q, j], 0
                st["meld_kind"][p, i] = j
    st["wall"][:head] = rng.integers(0, N_KINDS, head)
    st["wall"][tail + 1:] = rng.integers(0, N_KINDS, st["wall"].size - tail - 1)
    for p in others:
        for name in ("passed_pong", "passed_win", "swap_forbid", "claim_opts", "hard_offer"):
            st["seat"][p][name] = rng.integers(0, 3)
    q, n = int(st["table"]["q_pos"]), int(st["table"]["q_len"])  # the claim queue but the seat's own question
    rows = [r for r in range(st["queue"].shape[0]) if not (q <= r < n and int(st["queue"][r, 0]) == seat)]
    st["queue"][rows] = np.stack([rng.choice(others, len(rows)), rng.integers(0, 3, len(rows))], axis=1)
    st["rng"] = rng.integers(1, 2**62, 4).astype(np.uint64)
    st["table"]["steps"] += int(rng.integers(1, 9))
    return twin


@pytest.mark.parametrize("rules", RULES)
def test_the_observation_holds_nothing_hidden_and_all_that_the_seat_sees(rules, engine_warm):
    """``observe()`` is the same for a game that differs only in what the seat to act may not see
    (:func:`_scramble`), its state shows every fact of :meth:`Game.observation` of that seat, and it is read-only."""
    rng = np.random.default_rng(1)
    kongs = 0
    # every seat dealt a four of a kind (greedy kongs them concealed), then self-play walls
    kong_wall = build_wall(["1111z23456789m9p", "2222z23456789p9s", "3333z23456789s9m", "4444z1199m1199p9s"])
    states = itertools.chain(_self_play_states(rules, "greedy", 60, wall=kong_wall),
                             _self_play_states(rules, "greedy", 240, seed0=7))
    for g, obs, _, _ in states:
        seat = obs.seat
        assert seat == g.current_player and obs.mask.dtype == np.uint8 and obs.mask.shape == (145,)
        np.testing.assert_array_equal(obs.mask.astype(bool), g.legal_mask())
        other = _scramble(g, seat, rng).observe()
        differ = [f for f in obs.state.dtype.names if not np.array_equal(obs.state[f], other.state[f])]
        assert differ == [], (g.seed, int(g.state["table"]["steps"]))
        for s in range(N_SEATS):  # the kernel against its pure-Python reference, for every seat
            ref, got = _reference_view(g.state, s, g._ep, g._tabs)[0], V.seat_view(g.state, s, g._ep, g._tabs)[0]
            assert [f for f in ref.dtype.names if not np.array_equal(ref[f], got[f])] == [], s
        view = Game(rules)
        view._buf[0] = obs.state
        view._started = True
        want, got = g.observation(seat), view.observation(seat)
        for key in want:
            np.testing.assert_array_equal(got[key], want[key], err_msg=key)
        kongs += sum(int((g.state["meld_type"][p] == MELD_KONG_CONCEALED).sum()) for p in range(4) if p != seat)
        with pytest.raises(ValueError, match="read-only"):
            obs.state["hands"][0, 0] = 1
    assert kongs > 0  # the others' concealed kongs were hidden at least once


def test_a_game_passed_to_act_is_refused_with_what_to_pass():
    game = Game("kaihua").reset(seed=1)
    for spec in ("greedy", "random", "tuned:kaihua"):
        with pytest.raises(TypeError, match=r"pass game\.observe\(\)"):
            make_agent(spec).act(game)
    with pytest.raises(TypeError, match="Observation"):
        make_agent("greedy").act(np.zeros(3))
    obs = game.observe()
    assert isinstance(obs, Observation) and obs.log[0] == ("start_hand", 0)
    with pytest.raises(AttributeError):
        obs.seat = 2
    while not game.done:
        game.step(make_agent("greedy").act(game.observe()))
    with pytest.raises(ValueError, match="hand is over"):
        game.observe()
    assert obs.log[-1][0] == "end_hand"  # the log of the hand is live: its seat sees the end


# ------------------------------------------------------------------ the pure-Python reference of seat_view
#: the other seats' private flags (restated here, not read from the kernel) and their canonical values
_PRIVATE = {"passed_pong": 0, "passed_win": 0, "swap_forbid": -1, "force_joker": 0, "claim_opts": 0, "claim_exp": 0,
            "claim_flags": 0, "claim_joker_links": 0, "claim_kong_links": 0, "hard_offer": 0, "n_passed_win": 0}
#: the self-draw facts of the turn's seat
_TURN = ("can_self_draw", "self_draw_exp", "self_draw_flags", "self_draw_joker_links", "self_draw_kong_links",
         "declare_kinds")
_ZEROED = ("circle", "tmp", "counts", "work", "rng", "queue", "wins")
_SEEN = np.zeros((MELD_KONG_CONCEALED + 1, 3), np.int64)  # _SEEN[type, j]: tiles of kind + j in such a meld
_SEEN[MELD_CHOW] = 1
_SEEN[MELD_PONG, 0] = 3
_SEEN[[MELD_KONG_EXPOSED, MELD_KONG_ADDED, MELD_KONG_CONCEALED], 0] = 4
_SLOTS = np.arange(MAX_DISCARDS)[None, :]


def _unseen(st, seat: int) -> np.ndarray:
    """``int64[34]``: copies of each kind that ``seat`` cannot see (4 minus its hand, the discards not
    claimed, every meld but the others' concealed kongs)."""
    cnt = 4 - st["hands"][seat].astype(np.int64)
    nd = st["seat"]["n_discards"]
    live = (_SLOTS < nd[:, None]) & ((st["dflags"] & DF_CLAIMED) == 0)
    cnt -= np.bincount(st["discards"][live], minlength=N_KINDS)
    mt, mk = st["meld_type"].astype(np.int64), st["meld_kind"].astype(np.int64)
    shown = mt != MELD_NONE
    shown[np.arange(N_SEATS) != seat] &= mt[np.arange(N_SEATS) != seat] != MELD_KONG_CONCEALED
    t, k = mt[shown], mk[shown]
    for j in range(3):
        cnt -= np.bincount(k + j, weights=_SEEN[t, j], minlength=N_KINDS + 2)[:N_KINDS].astype(np.int64)
    return cnt


def _own_question(st, seat: int) -> np.ndarray:
    """The rows of the claim queue asking ``seat`` now (its own question: the levels it is asked at),
    none outside a claim."""
    q, n = int(st["table"]["q_pos"]), int(st["table"]["q_len"])
    if int(st["table"]["phase"]) not in (PH_CLAIM, PH_ROB) or q >= n or int(st["queue"][q, 0]) != seat:
        return st["queue"][:0].copy()
    e = q + 1
    while e < n and int(st["queue"][e, 0]) == seat:
        e += 1
    return st["queue"][q:e].copy()


def _reference_view(state, seat: int, ep: np.ndarray, tabs) -> np.ndarray:
    """The pure-Python reference of :func:`caishen.sim.engine.view._seat_view` (a state the kernel accepts)."""
    seat = int(seat)
    out = np.array([state])
    v = out[0]
    sc, sf = v["table"], v["seat"]
    cnt = _unseen(v, seat)
    if (cnt < 0).any():
        k = int(np.flatnonzero(cnt < 0)[0])
        raise ValueError(f"seat {seat} sees {4 - int(cnt[k])} copies of kind {k}: the state is broken")
    others = [p for p in range(N_SEATS) if p != seat]
    hidden_kongs = np.argwhere(v["meld_type"] == MELD_KONG_CONCEALED)
    for p, i in hidden_kongs[hidden_kongs[:, 0] != seat]:  # the first kinds with four unseen copies
        k = int(np.flatnonzero(cnt >= 4)[0])
        v["meld_kind"][p, i] = k
        cnt[k] -= 4
    pool = np.repeat(np.arange(N_KINDS, dtype=np.uint8), cnt)
    head, tail = int(sc["head"]), int(sc["tail"])
    sizes = v["hands"][others].sum(axis=1, dtype=np.int64)
    if pool.size != int(sizes.sum()) + tail - head + 1:
        raise ValueError(f"seat {seat} cannot see {pool.size} tiles, the others' hands and the wall hold "
                         "another number: the state is broken")
    ends = np.cumsum(sizes)
    for p, e, n in zip(others, ends, sizes):
        v["hands"][p] = np.bincount(pool[e - n:e], minlength=N_KINDS)
    v["wall"][:] = 0
    v["wall"][head:tail + 1] = pool[ends[-1]:]
    for p in others:
        for name, x in _PRIVATE.items():
            sf[p][name] = x
    joker = int(ep.joker)
    for p in others:
        sh = int(_shanten(v["hands"][p], joker, tabs))
        sf[p]["shanten"], sf[p]["ready"] = sh, int(sh <= 0)
    if not (int(sc["phase"]) == PH_TURN and int(sc["turn"]) == seat and int(sc["to_act"]) == seat):
        sc["drawn"] = -1  # another seat's turn: its drawn tile and self-draw facts
        for name in _TURN:
            sc[name] = 0
    own = _own_question(v, seat)
    sc["steps"] = 0
    for name in _ZEROED:
        v[name] = 0
    v["queue"][:len(own)] = own  # the seat's own question alone: its legal mask stays the state's
    sc["q_pos"], sc["q_len"] = 0, len(own)
    out.flags.writeable = False
    return out
