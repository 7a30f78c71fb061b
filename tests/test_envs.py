"""The envs: PettingZoo's api_test and Gymnasium's check_env, random legal rollouts,
no hidden information in observations, seeded reproducibility, illegal actions,
a hand-built scenario read plane by plane, and the doc tables against the code."""

from __future__ import annotations

import pickle
import re
import warnings

import gymnasium
import numpy as np
import pytest
from gymnasium.utils.env_checker import check_env
from pettingzoo.test import api_test, seed_test

import caishen.envs.gym_env
import caishen.envs.pettingzoo_env
from caishen.agents import make_agent
from caishen.envs.gym_env import ENV_IDS, MahjongEnv
from caishen.envs.observation import HISTORY_PLANES, N_PLANES, PLANE, PLANE_HIGH, PLANES, encode
from caishen.envs.pettingzoo_env import AGENTS, env, raw_env
from caishen.sim.rules import base as rulesets
from caishen.sim.engine import (
    N_ACTIONS,
    N_KINDS,
    N_SEATS,
    PH_CLAIM,
    PH_DONE,
    PH_HARD,
    PH_ROB,
    PH_TURN,
    QUEUE_LEN,
    STATE_DTYPE,
    A_KONG_CONCEALED,
    A_KONG_ADDED,
    Game,
    action_name,
    build_wall,
    check_state,
    parse_action,
)
from caishen.sim.tiles import MELD_CHOW, MELD_KONG_ADDED, MELD_KONG_CONCEALED, MELD_KONG_EXPOSED, MELD_PONG, parse_kinds

RULES = ["kaihua", "jiating"]

#: api_test's warnings for any dict observation (its own classic envs are on a whitelist)
_DICT_OBS_WARNINGS = ("Observation is not a NumPy array", "Observation space for each agent probably should be")


@pytest.fixture(scope="module", autouse=True)
def _warm(engine_warm):
    """Compile the engine once, and the greedy bots and both rule sets' Game paths."""
    for rules in RULES:
        e = MahjongEnv(rules=rules)
        e.reset(seed=0)
    return engine_warm


def _pick(rng, mask):
    """A uniformly random legal action of an int8 / bool mask."""
    return int(rng.choice(np.flatnonzero(mask)))


_GREEDY = make_agent("greedy")


def _mixed(rng, game, mask):
    """The greedy bot's action 3 times in 4 (so that hands reach wins), else a random legal one."""
    return _GREEDY.act(game.observe()) if rng.random() < 0.75 else _pick(rng, mask)


# ---------------------------------------------------------------------------
# PettingZoo
# ---------------------------------------------------------------------------
@pytest.mark.parametrize("rules", RULES)
def test_pettingzoo_api_test_and_seed_test(rules):
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        api_test(env(rules=rules), num_cycles=1000)
        seed_test(lambda: env(rules=rules), num_cycles=200)
    unexpected = [str(w.message) for w in caught if not str(w.message).startswith(_DICT_OBS_WARNINGS)]
    assert unexpected == []


def _play_aec(e, rng, check_every_step=False):
    """One hand through agent_iter / last / step with mixed greedy / random legal actions.

    Checks on the way: the acting agent's mask is the engine's legal mask, every
    other agent's mask is empty, observations lie in their space, the engine's
    invariants hold.  Returns (actions, final rewards from last(), result).
    """
    game = e.unwrapped.game
    actions, final = [], {}
    space = e.observation_space(AGENTS[0])
    for agent in e.agent_iter():
        obs, reward, terminated, truncated, info = e.last()
        assert space.contains(obs)
        seat = AGENTS.index(agent)
        if terminated or truncated:
            final[agent] = reward
            e.step(None)
            continue
        assert reward == 0
        assert game.current_player == seat
        np.testing.assert_array_equal(obs["action_mask"], game.legal_mask().astype(np.int8))
        for other in AGENTS:
            if other != agent:
                assert not e.unwrapped.observe(other)["action_mask"].any()
        a = _mixed(rng, game, obs["action_mask"])
        assert obs["action_mask"][a] == 1
        e.step(a)
        actions.append(a)
        if check_every_step:
            check_state(game)
    return actions, final, info["result"]


@pytest.mark.parametrize(
    "rules, options",
    [("kaihua", None), ("kaihua", {"multiple_ron": True, "discard_win_payment": "own_share"}), ("jiating", None)],
)
def test_pettingzoo_random_rollouts_legal_and_zero_sum(rules, options):
    """K-8.5 / J-6.5: 100 seeded hands of mixed greedy / random play; every action legal,
    rewards sum to zero and equal the hand's scores; every agent is terminated exactly once."""
    e = env(rules=rules, options=options, illegal_reward=None)
    rng = np.random.default_rng(11)
    n_wins = 0
    for hand in range(100):
        e.reset(seed=hand)
        actions, final, result = _play_aec(e, rng, check_every_step=hand < 10)
        assert sorted(final) == sorted(AGENTS)
        assert sum(final.values()) == 0
        assert [final[a] for a in AGENTS] == [result[f"score_{p}"] for p in range(N_SEATS)]
        assert len(actions) > 0 and e.agents == []
        n_wins += result["winner"] >= 0
    assert n_wins > 30  # the rollouts reach scored wins, not only 流局


@pytest.mark.parametrize("rules", RULES)
def test_pettingzoo_same_seed_same_episode(rules):
    def episode(seed):
        e = env(rules=rules)
        e.reset(seed=seed)
        rng = np.random.default_rng(5)
        trace = []
        for agent in e.agent_iter():
            obs, reward, terminated, truncated, _ = e.last()
            trace.append((agent, obs["observation"].tobytes(), obs["action_mask"].tobytes(), reward))
            e.step(None if terminated or truncated else _pick(rng, obs["action_mask"]))
        return trace

    assert episode(3) == episode(3)
    assert episode(3) != episode(4)
    # reset() without a seed continues the seeded stream reproducibly
    a, b = raw_env(rules=rules), raw_env(rules=rules)
    a.reset(seed=9)
    b.reset(seed=9)
    a.reset()
    b.reset()
    np.testing.assert_array_equal(a.game.state["wall"], b.game.state["wall"])


def test_pettingzoo_illegal_action():
    """raw_env raises ValueError; env() ends the hand with illegal_reward for the offender (PettingZoo's
    TerminateIllegalWrapper) and 0 for the others."""
    raw = raw_env()
    raw.reset(seed=1)
    agent = raw.agent_selection
    illegal = int(np.flatnonzero(raw.observe(agent)["action_mask"] == 0)[0])
    before = raw.game.state.copy()
    with pytest.raises(ValueError, match="illegal action"):
        raw.step(illegal)
    # field by field: the record's alignment padding is not state (a copied record's padding is arbitrary)
    assert all(np.array_equal(raw.game.state[f], before[f]) for f in before.dtype.names)
    assert raw.agent_selection == agent

    e = env(illegal_reward=-7.5)
    e.reset(seed=1)
    offender = e.agent_selection
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        e.step(illegal)
    finals = {}
    for agent in e.agent_iter():
        _, reward, terminated, truncated, _ = e.last()
        assert terminated or truncated
        finals[agent] = reward
        e.step(None)
    assert finals == {a: (-7.5 if a == offender else 0) for a in AGENTS}


def test_pettingzoo_arguments_validated():
    with pytest.raises(ValueError, match="rule set"):
        raw_env(rules="riichi")
    with pytest.raises(ValueError, match="dealer"):
        raw_env(dealer=4)
    with pytest.raises(ValueError, match="render_mode"):
        raw_env(render_mode="rgb_array")
    e = raw_env(rules="jiating", dealer=2, render_mode="ansi")
    e.reset(seed=0)
    assert e.game.state["table"]["dealer"] == 2 and e.agent_selection in AGENTS
    assert "jiating" in e.render() and str(e) == "caishen_jiating_v0"
    copy = pickle.loads(pickle.dumps(e))  # EzPickle: rebuilt from the arguments
    copy.reset(seed=0)
    assert copy.game.rules_name == "jiating" and copy.dealer == 2


# ---------------------------------------------------------------------------
# hidden information
# ---------------------------------------------------------------------------
def _copy_state(src: Game, dst: Game) -> None:
    for name in STATE_DTYPE.names:
        dst.state[name] = src.state[name]


def _hidden_twin(game: Game, twin: Game, seat: int, rng) -> tuple[int, bool]:
    """Load into ``twin`` a copy of ``game`` where only what ``seat`` cannot see differs.

    Changed: the live wall and the other seats' concealed tiles (dealt out again at
    random), the kinds of the other seats' concealed kongs (swapped with a kind whose
    four tiles are all hidden from ``seat``), the other seats' private flags, and,
    when ``seat`` is not to act, the acting seat's private turn data and (while a
    claim, robbing or 硬子 decision is pending) which seat is being asked.
    Returns (concealed kongs swapped, whether another seat's concealed tiles changed).
    """
    _copy_state(game, twin)
    st = twin.state
    sc, sf = st["table"], st["seat"]
    head, tail = int(sc["head"]), int(sc["tail"])
    others = [p for p in range(N_SEATS) if p != seat]
    pool = [int(k) for k in st["wall"][head : tail + 1]]
    for p in others:
        pool += [k for k in range(N_KINDS) for _ in range(int(st["hands"][p, k]))]
    joker = rulesets.get(game.rules_name).facts["joker"]
    swapped = 0
    for p in others:
        for slot in np.flatnonzero(st["meld_type"][p] == MELD_KONG_CONCEALED):
            k = int(st["meld_kind"][p, slot])
            counts = np.bincount(pool, minlength=N_KINDS)
            kinds = [j for j in range(N_KINDS) if counts[j] == 4 and j not in (k, joker)]
            if kinds:
                j = int(rng.choice(kinds))
                pool = [k if x == j else x for x in pool]
                st["meld_kind"][p, slot] = j
                swapped += 1
    pool = [int(k) for k in rng.permutation(pool)]
    changed = False
    for p in others:
        n = int(st["hands"][p].sum())
        new = np.bincount(pool[:n], minlength=N_KINDS)
        changed |= not np.array_equal(new, game.state["hands"][p])
        st["hands"][p] = new
        pool = pool[n:]
        sf[p]["passed_pong"] = int(rng.integers(2**N_KINDS))
        sf[p]["passed_win"] = int(rng.integers(2))
        sf[p]["swap_forbid"] = int(rng.integers(-1, N_KINDS))
        sf[p]["ready"] = int(rng.integers(2))
        sf[p]["hard_offer"] = int(rng.integers(2))
        sf[p]["n_passed_win"] = int(rng.integers(3))
        sf[p]["claim_opts"] = int(rng.integers(64))
        sf[p]["claim_exp"] = int(rng.integers(4))
        sf[p]["claim_flags"] = int(rng.integers(256))
        sf[p]["force_joker"] = int(rng.integers(2))  # K-2.5: private (it tells a 爆头 shape)
    st["wall"][head : tail + 1] = pool
    if int(sc["to_act"]) != seat:
        sc["drawn"] = int(rng.integers(N_KINDS))
        sc["can_self_draw"] = int(rng.integers(2))
        sc["self_draw_exp"] = int(rng.integers(4))
        sc["self_draw_flags"] = int(rng.integers(256))
        sc["declare_kinds"] = int(rng.integers(2**N_KINDS))
        if int(sc["phase"]) in (PH_CLAIM, PH_ROB, PH_HARD):
            sc["to_act"] = int(rng.choice(others))
            st["queue"][:] = rng.integers(0, N_SEATS, (QUEUE_LEN, 2))
            sc["q_pos"] = int(rng.integers(QUEUE_LEN))
            sc["q_len"] = int(rng.integers(QUEUE_LEN))
            sc["n_discard_wins"] = int(rng.integers(3))
    return swapped, changed


def _wall_with_quads(rng, joker: int) -> np.ndarray:
    """A random wall that deals every seat four of a kind (so concealed kongs happen)."""
    kinds = rng.choice([k for k in range(N_KINDS) if k != joker], N_SEATS, replace=False)
    rest = list(rng.permutation([k for k in range(N_KINDS) if k not in kinds for _ in range(4)]))
    wall = []
    for k in kinds:  # 13 dealt tiles per seat: the quad and 9 random ones
        wall += list(rng.permutation([int(k)] * 4 + rest[:9]))
        rest = rest[9:]
    return np.array(wall + rest, np.uint8)


@pytest.mark.parametrize("rules", RULES)
def test_observation_hides_hidden_information(rules):
    """K-5.3 / J-3.2 and the engine's observation contract: a seat's observation is
    identical when only the tiles and facts hidden from it change (other seats' concealed
    tiles and concealed kong kinds, the wall, their private flags, who is being asked).
    Every seat is dealt four of a kind and the rollouts take every concealed kong offered,
    so hidden kong kinds occur often."""
    rng = np.random.default_rng(2024)
    twin = Game(rules)
    twin.reset(seed=0)
    n_states = n_swapped = n_changed = 0
    joker = rulesets.get(rules).facts["joker"]
    for hand in range(8):
        game = Game(rules).reset(wall=_wall_with_quads(rng, joker), dealer=hand % N_SEATS)
        while not game.done:
            for seat in range(N_SEATS):
                obs = encode(game, seat)
                swapped, changed = _hidden_twin(game, twin, seat, rng)
                np.testing.assert_array_equal(encode(twin, seat), obs, err_msg=f"seat {seat} sees hidden information")
                n_states += 1
                n_swapped += swapped
                if changed:
                    n_changed += 1
                    # the twin does change what the other seats hold: their own views differ
                    assert any(
                        not np.array_equal(encode(twin, p), encode(game, p)) for p in range(N_SEATS) if p != seat
                    )
            legal = game.legal_actions()
            kongs = [a for a in legal if A_KONG_CONCEALED <= a < A_KONG_ADDED]
            game.step(kongs[0] if kongs else int(rng.choice(legal)))
    assert n_states > 1000 and n_changed > 0.9 * n_states
    assert n_swapped >= 100  # concealed kong kinds were really swapped


# ---------------------------------------------------------------------------
# the observation, read plane by plane in a hand-built scenario
# ---------------------------------------------------------------------------
def test_observation_planes_in_a_scripted_hand():
    """Kaihua, dealer seat 0: 0 discards 9s, 2 pongs it (K-4.2) and discards 7z, 3 draws
    1p and discards it, 0 draws 9m and discards it, 1 draws 3s and makes a concealed kong
    of 1m (K-5.3), drawing 5s from the tail (K-5.4)."""
    wall = build_wall(
        ["23m9m19p19s123467z", "1111m258p258s147z", "99s456m456p345s77z", "678m2233678p678s"],
        draws="8m1p9m3s",
        replacements="5s",
    )
    g = Game("kaihua").reset(wall=wall, dealer=0)
    x = encode(g, 0)
    np.testing.assert_array_equal(x[PLANE["hand"]], g.state["hands"][0])
    assert x[PLANE["hand"]].sum() == 14 and x[PLANE["drawn"]].tolist() == _one_hot("8m")
    assert x[PLANE["acting"], 0] == 1 and x[PLANE["dealer"], 0] == 1 and x[PLANE["phase"] + 0, 0] == 1
    assert x[PLANE["tiles_left"], 0] == 136 - 53 and x[PLANE["joker"]].tolist() == _one_hot("5z")
    y = encode(g, 1)  # seat 0 is seat 1's previous seat (+3)
    assert y[PLANE["dealer"] + 3, 0] == 1 and y[PLANE["hand_size"] + 3, 0] == 14 and y[PLANE["drawn"]].sum() == 0
    assert y[PLANE["acting"], 0] == 0 and y[PLANE["turn"] + 3, 0] == 1

    g.step("discard 9s")  # seat 2 may pong: it is asked, seats 1 and 3 only see the discard on offer
    assert g.current_player == 2 and g.phase == "claim"
    for seat, rel in ((1, 3), (3, 1)):
        y = encode(g, seat)
        assert y[PLANE["pending"]].tolist() == _one_hot("9s") and y[PLANE["pending_from"] + rel, 0] == 1
        assert y[PLANE["phase"] + 1, 0] == 1 and y[PLANE["acting"], 0] == 0
    assert encode(g, 2)[PLANE["acting"], 0] == 1
    g.step("pong")
    g.step("discard 7z")
    g.step("discard 1p")  # seat 3 drew 1p
    g.step("discard 9m")  # seat 0 drew 9m
    assert g.current_player == 1
    g.step("kong_concealed 1m")
    x, y = encode(g, 0), encode(g, 1)
    assert x[PLANE["pongs"] + 2].tolist() == _one_hot("9s")  # seat 2 is seat 0's opposite
    assert x[PLANE["discards"] + 0].tolist() == (np.array(_one_hot("9s")) + _one_hot("9m")).tolist()
    assert x[PLANE["last_discard"] + 0].tolist() == _one_hot("9m")
    assert x[PLANE["discards"] + 2].tolist() == _one_hot("7z") and x[PLANE["discards"] + 3].tolist() == _one_hot("1p")
    assert x[PLANE["concealed_kongs"] + 1, 0] == 1 and x[PLANE["own_concealed_kongs"]].sum() == 0
    assert x[PLANE["hand"], 0] == 0 and x[PLANE["hand_size"] + 1, 0] == 11  # 14 - 4 + replacement
    assert y[PLANE["own_concealed_kongs"]].tolist() == _one_hot("1m") and y[PLANE["concealed_kongs"], 0] == 1
    assert y[PLANE["chain"], 0] == 1 and y[PLANE["chain_kong"], 0] == 1  # K-6.5 a kong link
    assert y[PLANE["drawn"]].tolist() == _one_hot("5s") and y[PLANE["tiles_left"], 0] == 136 - 53 - 4
    assert (x[PLANE["pongs"] + 2] == y[PLANE["pongs"] + 1]).all()  # the same pong, seen from seat 1 as its next seat


def _reference_planes(game: Game, seat: int) -> np.ndarray:
    """Slow, obvious encoder: the planes from ``Game.observation(seat)`` (the engine's
    statement of what a seat sees) and two public scalars, following the doc table."""
    o = game.observation(seat)
    x = np.zeros((N_PLANES, N_KINDS), np.int64)
    rel = {(seat + r) % N_SEATS: r for r in range(N_SEATS)}

    def one_hot(name, kind, r=0):
        if kind >= 0:
            x[PLANE[name] + r, kind] = 1

    def scalar(name, value, r=0):
        x[PLANE[name] + r, :] = value

    x[PLANE["hand"]] = o["hand"]
    one_hot("drawn", o["drawn_tile"])
    one_hot("pending", o["pending_tile"])
    x[PLANE["passed_pong"]] = o["passed_pong"]
    one_hot("swap_forbid", o["swap_forbid"])
    one_hot("joker", rulesets.get(game.rules_name).facts["joker"])
    for p, r in rel.items():
        d = o["discards"][p, : o["n_discards"][p]]
        for k in d:
            x[PLANE["discards"] + r, k] += 1
        if len(d):
            one_hot("last_discard", d[-1], r)
        for mtype, kind in zip(o["meld_type"][p], o["meld_kind"][p]):
            if mtype == MELD_CHOW:
                x[PLANE["chows"] + r, kind : kind + 3] += 1
            elif mtype == MELD_PONG:
                one_hot("pongs", kind, r)
            elif mtype in (MELD_KONG_EXPOSED, MELD_KONG_ADDED):
                one_hot("kongs", kind, r)
            elif mtype == MELD_KONG_CONCEALED:
                x[PLANE["concealed_kongs"] + r] += 1
                assert (kind >= 0) == (p == seat)  # Game.observation hides others' kinds
                one_hot("own_concealed_kongs", kind)
        scalar("hand_size", o["hand_sizes"][p], r)
        scalar("n_chows", o["n_chows"][p], r)
        scalar("chain", o["chain"][p, 0], r)
        scalar("chain_kong", o["chain"][p, 2], r)
        scalar("piao_open", o["circle_open"][p], r)
        scalar("declared", o["declarations"][p], r)
    scalar("dealer", 1, rel[o["dealer"]])
    if o["phase"] != PH_DONE:
        scalar("turn", 1, rel[int(game.state["table"]["turn"])])
    if o["pending_seat"] >= 0:
        scalar("pending_from", 1, rel[o["pending_seat"]])
    scalar("phase", 1, [PH_TURN, PH_CLAIM, PH_ROB, PH_DONE, PH_HARD].index(o["phase"]))
    scalar("acting", o["to_act"] == seat)
    scalar("tiles_left", o["tiles_left"])
    scalar("passed_win", o["passed_win"])
    scalar("streak", min(int(game.state["table"]["streak"]), 255))
    assert (x >= 0).all() and (x <= PLANE_HIGH).all()
    return x.astype(np.uint8)


@pytest.mark.parametrize(
    "rules, options", [("kaihua", None), ("kaihua", {"multiple_ron": True}), ("jiating", None)]
)
def test_encode_matches_reference_on_random_hands(rules, options):
    """The numba encoder equals the pure-Python one built on Game.observation, for every
    seat on every state of 20 hands of mixed greedy / random play (and at the end)."""
    rng = np.random.default_rng(17)
    phases = set()
    for hand in range(20):
        game = Game(rules, options).reset(seed=500 + hand, dealer=hand % N_SEATS, streak=hand % 3)
        while True:
            phases.add(game.phase)
            for seat in range(N_SEATS):
                np.testing.assert_array_equal(encode(game, seat), _reference_planes(game, seat))
            if game.done:
                break
            game.step(_mixed(rng, game, game.legal_mask()))
    assert {"turn", "claim", "done"} <= phases


def _one_hot(tile: str) -> list[int]:
    v = [0] * N_KINDS
    v[parse_kinds(tile)[0]] = 1
    return v


def test_encode_validates():
    g = Game("kaihua").reset(seed=0)
    with pytest.raises(ValueError, match="seat"):
        encode(g, 4)
    with pytest.raises(ValueError, match="Game"):
        encode(object(), 0)
    with pytest.raises(ValueError, match="out"):
        encode(g, 0, out=np.zeros((N_PLANES, N_KINDS), np.int8))
    buf = np.full((N_PLANES, N_KINDS), 9, np.uint8)
    np.testing.assert_array_equal(encode(g, 0, out=buf), encode(g, 0))


# ---------------------------------------------------------------------------
# Gymnasium
# ---------------------------------------------------------------------------
@pytest.mark.parametrize("env_id", sorted(ENV_IDS))
def test_gymnasium_check_env(env_id):
    """check_env on the registered env (render modes included) and on random opponents."""
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        check_env(gymnasium.make(env_id).unwrapped)
        check_env(gymnasium.make(env_id, seat=2, opponents="random", render_mode="ansi").unwrapped)
    assert [str(w.message) for w in caught] == []


def test_gymnasium_make_by_module_path():
    e = gymnasium.make("caishen.envs.gym_env:caishen/Jiating-v0")
    obs, info = e.reset(seed=0)
    assert obs.shape == (N_PLANES, N_KINDS) and e.unwrapped.game.rules_name == "jiating"
    np.testing.assert_array_equal(e.get_wrapper_attr("action_masks")(), info["action_mask"])


@pytest.mark.parametrize("env_id", sorted(ENV_IDS))
def test_gymnasium_make_action_masks_as_readme(env_id):
    """Issue 12: the README's ``env.action_masks()`` works on what gymnasium.make returns."""
    e = gymnasium.make(env_id)
    obs, info = e.reset(seed=1)
    np.testing.assert_array_equal(e.action_masks(), info["action_mask"])
    assert e.action_masks().dtype == bool and e.action_masks().any()


def test_gymnasium_render_mode_error_is_the_type_error_sb3_expects():
    """stable-baselines3's make_vec_env passes render_mode="rgb_array" and retries without it on
    a TypeError: the env's error is a TypeError, and a ValueError (bad input) too."""
    for make in (lambda: MahjongEnv(render_mode="rgb_array"), lambda: gymnasium.make("caishen/Kaihua-v0",
                                                                                        render_mode="rgb_array")):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # gymnasium.make warns about the mode first
            with pytest.raises(TypeError, match="render_mode"):
                make()
            with pytest.raises(ValueError, match="rgb_array"):
                make()
    with pytest.raises(TypeError, match="render_mode"):
        raw_env(render_mode="rgb_array")


def test_bool_actions_rejected():
    """Issue 12: step(True) used to play action 1; bools are no actions in any env."""
    e = MahjongEnv(illegal_reward=None)
    e.reset(seed=0)
    for bad in (True, np.bool_(False)):
        with pytest.raises(ValueError, match=f"got the bool {bad!r}"):
            e.step(bad)
    for make in (lambda: env(), lambda: raw_env(), lambda: env(illegal_reward=None)):
        a = make()
        a.reset(seed=0)
        before = a.unwrapped.game.state["table"].copy()
        with pytest.raises(ValueError, match="True.*bools are not actions"):
            a.step(True)
        np.testing.assert_array_equal(a.unwrapped.game.state["table"], before)


@pytest.mark.parametrize("rules", RULES)
def test_gymnasium_random_rollouts(rules):
    """200 seeded hands of a random learner against greedy bots, all four seats: the mask is
    the engine's, each action legal, the reward 0 until the end and then the seat's score."""
    rng = np.random.default_rng(3)
    seen_scores = set()
    by_seat = [MahjongEnv(rules=rules, seat=seat, illegal_reward=None) for seat in range(N_SEATS)]
    for hand in range(200):
        seat = hand % N_SEATS
        e = by_seat[seat]
        obs, info = e.reset(seed=hand)
        terminated = False
        while not terminated:
            assert e.observation_space.contains(obs)
            game = e.game
            assert game.current_player == seat and not game.done
            mask = e.action_masks()
            np.testing.assert_array_equal(mask, game.legal_mask())
            np.testing.assert_array_equal(info["action_mask"], mask)
            a = _pick(rng, mask)
            obs, reward, terminated, truncated, info = e.step(a)
            assert not truncated
            if not terminated:
                assert reward == 0
        assert game.done and reward == info["result"][f"score_{seat}"]
        assert not e.action_masks().any()
        seen_scores.add(reward)
    assert len(seen_scores) > 3  # wins and losses of several sizes, not only 流局


def test_gymnasium_same_seed_same_episode():
    def episode(seed, opponents):
        e = MahjongEnv(rules="kaihua", seat=1, opponents=opponents)
        obs, _ = e.reset(seed=seed)
        rng = np.random.default_rng(0)
        trace, done = [obs.tobytes()], False
        while not done:
            obs, reward, done, _, _ = e.step(_pick(rng, e.action_masks()))
            trace.append((obs.tobytes(), reward))
        return trace, int(e.games.hand_seed[0]), e.game.state.tobytes()

    for opponents in ("greedy", "random", ["random", "greedy", "always"]):
        assert episode(7, opponents) == episode(7, opponents)
    assert episode(7, "random")[1:] != episode(8, "random")[1:]


def test_gymnasium_illegal_action():
    e = MahjongEnv()
    obs, info = e.reset(seed=4)
    illegal = int(np.flatnonzero(~info["action_mask"])[0])
    obs2, reward, terminated, truncated, info2 = e.step(illegal)
    assert (reward, terminated, truncated, info2["illegal_action"]) == (-500.0, True, False, True)
    np.testing.assert_array_equal(obs2, obs)
    with pytest.raises(ValueError, match="reset"):
        e.step(_pick(np.random.default_rng(0), info["action_mask"]))

    strict = MahjongEnv(illegal_reward=None)
    strict.reset(seed=4)
    with pytest.raises(ValueError, match=f"illegal action '{action_name(illegal)}'"):
        strict.step(illegal)
    with pytest.raises(ValueError, match=r"must be an integer in 0\.\.144, got \d+$"):
        strict.step(N_ACTIONS)
    with pytest.raises(ValueError, match="integer"):
        strict.step(None)


def test_gymnasium_arguments_validated():
    for kwargs, match in [
        ({"seat": 4}, "seat"),
        ({"dealer": -1}, "dealer"),
        ({"opponents": "clever"}, "unknown policy"),
        ({"opponents": ["greedy", "greedy"]}, "opponents"),
        ({"opponents": ["greedy", "greedy", 3]}, "opponent"),
        ({"render_mode": "rgb_array"}, "render_mode"),
        ({"illegal_reward": float("nan")}, "illegal_reward"),
        ({"rules": "kaihua", "options": {"no_such": 1}}, "no_such"),
    ]:
        with pytest.raises(ValueError, match=match):
            MahjongEnv(**kwargs)
    with pytest.raises(ValueError, match="reset"):
        MahjongEnv().step(0)


def test_gymnasium_hands_without_a_decision_are_redealt():
    """A hand that ends before the learning seat acts is dealt again: reset always
    leaves the learning seat to act, whoever deals."""
    for seed in range(40):
        e = MahjongEnv(rules="jiating", seat=seed % N_SEATS, opponents="random")
        e.reset(seed=seed)
        assert e.game.current_player == e.seat and e.action_masks().any()


# ---------------------------------------------------------------------------
# the documentation tables agree with the code
# ---------------------------------------------------------------------------
def _doc_section(doc: str, title: str) -> str:
    """The text of a docstring section ``title`` (underlined with dashes) up to the next one."""
    m = re.search(rf"^{title}[^\n]*\n-+\n(.*?)(?=^[^\n]+\n-+\n|\Z)", doc, re.M | re.S)
    assert m, f"no section {title!r}"
    return m.group(1)


def test_doc_observation_table_matches_planes():
    """The one written table of the planes (caishen.envs.observation; gym_env and pettingzoo_env point to it
    and name its feature set: tests/test_features.py)."""
    module = caishen.envs.observation
    rows = re.findall(r"^(\d+)(?:-(\d+))?\s+``(\w+)``\s+(\d+)\s", module.__doc__, re.M)
    groups = PLANES + HISTORY_PLANES  # with the order-of-play block
    want = [(PLANE[name], PLANE[name] + n - 1, name, high) for name, n, high, _ in groups]
    got = [(int(a), int(b or a), name, int(high)) for a, b, name, high in rows]
    assert got == want
    assert f"{N_PLANES}, 34" in module.__doc__ or f"N_PLANES = {N_PLANES}" in module.__doc__
    assert PLANE_HIGH.shape == (N_PLANES, N_KINDS)


@pytest.mark.parametrize("module", [caishen.envs.pettingzoo_env, caishen.envs.gym_env])
def test_doc_action_table_matches_engine(module):
    table = _doc_section(module.__doc__, "Action space")
    rows = re.findall(r"^(\d+)(?:\.\.(\d+))?\s+``([a-z_]+)(?: <\w+>)?``", table, re.M)
    covered = []
    for a, b, name in rows:
        lo, hi = int(a), int(b or a)
        assert action_name(lo).split()[0] == name and action_name(hi).split()[0] == name
        covered += range(lo, hi + 1)
    assert covered == list(range(N_ACTIONS))
    assert parse_action("kong_added 7z") in range(102, 136)


def test_gymnasium_opponent_agents_stand_for_their_spec_and_others_play_as_agent_seats():
    """An agent of a spec (make_agent("greedy"), "random") plays as its spec inside the batched core: the same
    episode as the spec, an open seat's as that seat; a step-API agent object of another kind plays as itself (an
    agent seat): the same episode as a python: seat that answers the same (the lowest legal action)."""
    from caishen.sim.bots.agent import Agent

    def trace(opponents):
        e = MahjongEnv(rules="kaihua", seat=2, opponents=opponents)
        obs, _ = e.reset(seed=5)
        rng, out, done = np.random.default_rng(0), [obs.tobytes()], False
        while not done:
            obs, reward, done, _, _ = e.step(_pick(rng, e.action_masks()))
            out.append((obs.tobytes(), reward))
        return out

    assert trace([make_agent("greedy"), make_agent("random"), "greedy"]) == trace(["greedy", "random", "greedy"])

    class Mine(Agent):
        def act(self, observation):
            return int(np.flatnonzero(observation.mask)[0])

    first = "python:open_seat_replay:first"
    assert trace([Mine(), "greedy", make_agent(first)]) == trace(f"{first},greedy,{first}")  # an open seat's agent
    assert trace(Mine()) == trace("python:open_seat_replay:first") != trace("greedy")
