"""The batched env (caishen.envs.batched, caishen.envs.vector_env): trajectories equal to the same actions
through caishen.sim.engine.Game (the pure-Python reference tests/batched_reference.py), both rule
sets, self-play and versus bots, hand and match episodes; the observation layouts against
the pure-Python encoder; hidden information; zero-sum rewards; seeds; bad input; the
Gymnasium vector API, make_vec and autoreset; env_checker on a single-game view."""

from __future__ import annotations

import re
import warnings

import gymnasium
import numpy as np
import pytest
from gymnasium.utils.env_checker import check_env

import caishen.envs  # noqa: F401  (registers the ids)
import caishen.envs.batched
import caishen.envs.observation
import caishen.envs.vector_env
from batched_reference import RefGame
from caishen.envs.batched import BatchedGames, sample_legal
from caishen.sim.rules import base as rulesets
from caishen.envs.observation import (
    FLAT_INDEX,
    HISTORY_PLANES,
    N_HISTORY_PLANES,
    N_PLANES,
    PLANE,
    PLANES,
    encode,
    flat_size,
    n_planes,
    plane_high,
)
from caishen.envs.gym_env import MahjongEnv
from caishen.envs.vector_env import CaishenVectorEnv, SelfPlayVectorEnv, index_obs
from caishen.sim.engine import N_ACTIONS, N_KINDS, N_SEATS, PH_DONE, SCRATCH_FIELDS, STATE_DTYPE, Game, action_name
from caishen.sim.bots.candidates import N_CONTEXT
from caishen.sim.rng import _rng_seed
from caishen.sim.tiles import MELD_KONG_CONCEALED
from test_envs import _hidden_twin, _reference_planes, _wall_with_quads

RULES = ["kaihua", "jiating"]
STATE_FIELDS = [f for f in STATE_DTYPE.names if f not in SCRATCH_FIELDS]


@pytest.fixture(scope="module", autouse=True)
def _warm(batched_warm):
    return batched_warm


def _rng(seed):
    r = np.zeros(4, np.uint64)
    _rng_seed(r, seed)
    return r


# ---------------------------------------------------------------------------
# trajectories against the reference
# ---------------------------------------------------------------------------
def _compare(games: BatchedGames, refs: list[RefGame], penalty=False, check_state=True):
    for i, ref in enumerate(refs):
        where = f"game {i}"
        assert games.player[i] == ref.player, where
        np.testing.assert_array_equal(games.masks[i], ref.mask, err_msg=where)
        np.testing.assert_array_equal(games.obs[i], ref.obs, err_msg=where)
        np.testing.assert_allclose(games.rewards[i], ref.rewards, rtol=1e-6, atol=1e-6, err_msg=where)
        if games.mode == "versus":
            assert games.reward[i] == pytest.approx(ref.reward, abs=1e-6), where
            assert games.learner[i] == ref.learner, where
        assert (games.terminated[i], games.truncated[i]) == (ref.terminated, ref.truncated), where
        assert games.illegal[i] == ref.illegal, where
        np.testing.assert_array_equal(games.points[i], ref.points, err_msg=where)
        assert games.hands_ended[i] == ref.hands_ended, where
        assert games.hand_seed[i] == ref.hand_seed, where
        if ref.final_obs is not None:
            np.testing.assert_array_equal(games.final_obs[i], ref.final_obs, err_msg=where)
        if check_state:
            for f in STATE_FIELDS:
                np.testing.assert_array_equal(games.states[i][f], ref.game.state[f], err_msg=f"{where}: {f}")


def _run_against_reference(n, steps, seed, rules, penalty_every=0, **kw):
    """``n`` games for ``steps`` steps of random legal actions, every output compared with the
    reference after every step; returns (hands counted, rewards summed per hand per game)."""
    games = BatchedGames(n, rules, **kw)
    games.reset(seed)
    opts = dict(mode="selfplay", seat=0, opponents="greedy", dealer=None, episode="hand", match_len=16,
                reward="points", reward_scale=None, illegal_reward=None, observation="planes", history=False)
    opts.update({k: v for k, v in kw.items() if k in opts})
    refs = [RefGame(seed + i, rules, None, **opts) for i in range(n)]
    _compare(games, refs)
    rng = _rng(seed)
    actions = np.zeros(n, np.int64)
    hands = 0
    for t in range(steps):
        sample_legal(games.masks, rng, actions)
        if penalty_every and t % penalty_every == 0:
            actions[t % n] = int(np.flatnonzero(~games.masks[t % n])[0])
        games.step(actions)
        for i, ref in enumerate(refs):
            ref.step(int(actions[i]), penalty=bool(penalty_every))
        _compare(games, refs, check_state=t % 3 == 0)
        hands += int(games.hands_ended.sum())
    return hands


@pytest.mark.parametrize("rules", RULES)
def test_selfplay_trajectories_equal_game(rules):
    """Self-play, one hand per episode: 16 games x 500 steps (about 80 hands of random play):
    states, masks, observations, seats, rewards (= Game.result's scores), flags, final
    observations of every seat and hand seeds equal the reference's after every step
    (thousands of hands: ``test_thousands_of_hands_equal_game``, marked slow)."""
    hands = _run_against_reference(16, 500, 100, rules)
    assert hands >= 60


@pytest.mark.slow
@pytest.mark.parametrize("rules", RULES)
def test_thousands_of_hands_equal_game(rules):
    """As above, over more than 2,000 hands per rule set: self-play (hand and match episodes) and
    versus bots, every output and state compared with the reference after every step."""
    hands = _run_against_reference(32, 4000, 1000, rules)
    hands += _run_against_reference(16, 2000, 2000, rules, episode="match", match_len=4)
    hands += _run_against_reference(16, 1500, 3000, rules, mode="versus", seat="random", opponents="greedy")
    assert hands >= 2000


@pytest.mark.parametrize("rules", RULES)
def test_versus_trajectories_equal_game(rules):
    """Versus bots (greedy and random seats), the learning seat drawn per episode: the bots'
    actions inside the kernel equal agents' / the engine's random bot through Game; hands that
    end before the learner's first decision are dealt again (more than 300 hands)."""
    hands = _run_against_reference(8, 250, 7, rules, mode="versus", seat="random", opponents="greedy")
    hands += _run_against_reference(6, 150, 9, rules, mode="versus", seat=2, opponents=["random", "greedy", "random"])
    assert hands >= 100


@pytest.mark.parametrize("rules", RULES)
def test_match_episodes_rotate_and_truncate(rules):
    """K-3.3 / J-2.3 / J-2.4: matches of 3 hands: the dealer rotation, the streak and the
    match-hand index equal Game's next_dealer chain; the match limit sets truncated (not
    terminated); rewards arrive in the step where each hand ends; both modes."""
    _run_against_reference(6, 450, 3, rules, episode="match", match_len=3)
    _run_against_reference(4, 300, 5, rules, episode="match", match_len=3, mode="versus", opponents="random")


def test_layouts_and_rewards_against_reference():
    """The flat vector and the order-of-play block in the kernel's outputs (and final
    observations) equal the pure-Python encoder; scaled and sign rewards; penalties for illegal
    actions (-2 in sign mode) end the episode of that game only."""
    _run_against_reference(6, 200, 11, "kaihua", observation="flat", history=True, reward="scaled")
    _run_against_reference(6, 200, 12, "jiating", observation="flat", reward="sign", illegal_action="penalty",
                           penalty_every=7)
    _run_against_reference(4, 150, 13, "kaihua", history=True, mode="versus", reward="points",
                           illegal_action="penalty", illegal_reward=-1000.0, penalty_every=5)


# ---------------------------------------------------------------------------
# zero-sum, determinism, seeds
# ---------------------------------------------------------------------------
@pytest.mark.parametrize("rules", RULES)
def test_rewards_zero_sum_per_hand(rules):
    """K-8.5 / J-6.5: in self-play the four seats' rewards (points and scaled) sum to zero in
    every step, over thousands of hands, and some hands are won."""
    for reward in ("points", "scaled"):
        games = BatchedGames(256, rules, reward=reward).reset(0)
        rng, actions = _rng(1), np.zeros(256, np.int64)
        won = hands = 0
        for _ in range(300):
            sample_legal(games.masks, rng, actions)
            greedy = games.bot_actions("greedy")
            actions[1::2] = greedy[1::2]  # half the games greedy: wins of every size
            games.step(actions)
            np.testing.assert_allclose(games.rewards.sum(axis=1), 0, atol=1e-4)
            assert (games.points.sum(axis=1) == 0).all()
            won += int((games.points != 0).any(axis=1).sum())
            hands += int(games.hands_ended.sum())
        assert hands > 1000 and won > 0.2 * hands
        if reward == "scaled":
            assert games.reward_scale == rulesets.get(rules).reward_scale


def test_same_seeds_same_games_whatever_n():
    """Game i depends on its seed and actions only: a batch of 2 games seeded like games 4 and
    1 of a batch of 6 and given their actions follows them exactly (states, observations)."""
    big = BatchedGames(6, "kaihua", mode="versus", seat="random", opponents="random").reset(100)
    small = BatchedGames(2, "kaihua", mode="versus", seat="random", opponents="random").reset([104, 101])
    rng, actions = _rng(5), np.zeros(6, np.int64)
    for _ in range(300):
        sample_legal(big.masks, rng, actions)
        big.step(actions)
        small.step(actions[[4, 1]])
        np.testing.assert_array_equal(small.obs, big.obs[[4, 1]])
        for f in STATE_FIELDS:
            np.testing.assert_array_equal(small.states[f], big.states[[4, 1]][f])
    again = BatchedGames(6, "kaihua", mode="versus", seat="random", opponents="random").reset(100)
    first = BatchedGames(6, "kaihua", mode="versus", seat="random", opponents="random").reset(100)
    np.testing.assert_array_equal(again.hand_seed, first.hand_seed)
    np.testing.assert_array_equal(again.obs, first.obs)
    assert len(set(again.hand_seed.tolist())) == 6


# ---------------------------------------------------------------------------
# observations
# ---------------------------------------------------------------------------
def _reference_history(game: Game, seat: int) -> np.ndarray:
    """The order-of-play rows from Game.observation, following the docstring table."""
    o = game.observation(seat)
    x = np.zeros((N_HISTORY_PLANES, N_KINDS), np.int64)
    for r in range(N_SEATS):
        p = (seat + r) % N_SEATS
        d = o["discards"][p, : o["n_discards"][p]]
        c = o["discard_claimed"][p, : o["n_discards"][p]]
        for j, (k, claimed) in enumerate(list(zip(d, c))[::-1][:8]):
            x[8 * r + j, k] = 2 if claimed else 1
        for m in range(4):
            t, k = int(o["meld_type"][p, m]), int(o["meld_kind"][p, m])
            if t != 0 and k >= 0:
                x[32 + 4 * r + m, k] = t
    return x.astype(np.uint8)


def _reference_flat(planes: np.ndarray, history: bool) -> np.ndarray:
    groups = PLANES + (HISTORY_PLANES if history else ())
    out, row = [], 0
    for _, n, high, scalar in groups:
        for r in range(row, row + n):
            out += [planes[r, 0] / high] if scalar else list(planes[r] / high)
        row += n
    return np.array(out, np.float32)


@pytest.mark.parametrize("rules", RULES)
def test_flat_and_history_match_reference_encoder(rules):
    """Every seat on every state of 5 hands (every concealed kong taken, so hidden kong kinds
    occur): the planes with the order-of-play block and the flat vector equal the pure-Python
    encoders built on Game.observation; the flat vector lies in [0, 1]."""
    rng = np.random.default_rng(3)
    joker = -1 if rules == "jiating" else 31
    claimed = melds = 0
    for hand in range(5):
        game = Game(rules).reset(wall=_wall_with_quads(rng, joker), dealer=hand % N_SEATS)
        while True:
            for seat in range(N_SEATS):
                planes = encode(game, seat, history=True)
                np.testing.assert_array_equal(planes[:N_PLANES], _reference_planes(game, seat))
                np.testing.assert_array_equal(planes[N_PLANES:], _reference_history(game, seat))
                for history in (False, True):
                    flat = encode(game, seat, layout="flat", history=history)
                    np.testing.assert_allclose(flat, _reference_flat(planes, history), rtol=1e-6)
                    assert flat.shape == (flat_size(history),) and 0 <= flat.min() and flat.max() <= 1
                claimed += int((planes[N_PLANES:N_PLANES + 32] == 2).sum())
                melds += int(planes[N_PLANES + 32:].astype(bool).sum())
            if game.done:
                break
            legal = game.legal_actions()
            kongs = [a for a in legal if 68 <= a < 102]
            claims = [a for a in legal if 136 <= a <= 140]
            game.step(kongs[0] if kongs else claims[0] if claims and rng.random() < 0.7 else int(rng.choice(legal)))
    assert claimed > 0 and melds > 0


@pytest.mark.parametrize("layout", ["planes", "flat"])
def test_observations_hide_hidden_information(layout):
    """K-5.3 / J-3.2: with the order-of-play block, a seat's observation (planes or flat) is
    unchanged when only what it cannot see changes (other hands, the wall, concealed kong
    kinds, private flags, who is asked)."""
    rng = np.random.default_rng(8)
    n_states = 0
    for rules in RULES:
        twin = Game(rules).reset(seed=0)
        joker = -1 if rules == "jiating" else 31
        for hand in range(3):
            game = Game(rules).reset(wall=_wall_with_quads(rng, joker), dealer=hand)
            while not game.done:
                for seat in range(N_SEATS):
                    obs = encode(game, seat, layout=layout, history=True)
                    _hidden_twin(game, twin, seat, rng)
                    np.testing.assert_array_equal(encode(twin, seat, layout=layout, history=True), obs)
                    n_states += 1
                legal = game.legal_actions()
                kongs = [a for a in legal if 68 <= a < 102]
                game.step(kongs[0] if kongs else int(rng.choice(legal)))
    assert n_states > 500


def test_meld_order_hides_other_concealed_kongs():
    """K-5.3: another seat's concealed kong is a zero row in meld_order; the own one shows."""
    from scenario import deal

    g = deal("kaihua", ["1111m258p258s147z", "23m9m19p19s123467z", "99s456m456p345s77z", "678m2233678p678s"],
             draws="8m", replacements="5s")
    g.step("kong_concealed 1m")
    own = encode(g, 0, history=True)
    other = encode(g, 1, history=True)
    assert own[PLANE["meld_order"], 0] == MELD_KONG_CONCEALED
    assert other[PLANE["meld_order"] + 4 * 3].sum() == 0 and other[PLANE["concealed_kongs"] + 3, 0] == 1


def test_doc_tables_match_layout():
    """The order-of-play table and the flat indices in caishen.envs.observation's docstring agree with the code."""
    doc = caishen.envs.observation.__doc__
    rows = re.findall(r"^(\d+)-(\d+)\s+``(\w+)``\s+(\d+)\s", doc, re.M)
    hist = [(int(a), int(b), name, int(h)) for a, b, name, h in rows if name in dict((g[0], 0) for g in HISTORY_PLANES)]
    assert hist == [(PLANE[name], PLANE[name] + n - 1, name, high) for name, n, high, _ in HISTORY_PLANES]
    for name in ("dealer", "turn", "acting", "tiles_left", "streak", "passed_win"):
        assert f"``{name}`` {FLAT_INDEX[name]}" in " ".join(doc.split())
    assert f"float32[{flat_size(False)}]" in doc and f"float32[{flat_size(True)}]" in doc
    assert n_planes(True) == 124 and plane_high(True).shape == (124, N_KINDS)


# ---------------------------------------------------------------------------
# bad input
# ---------------------------------------------------------------------------
def _snapshot(games):
    return {f: games.states[f].copy() for f in STATE_FIELDS}, games.games.copy()


def _unchanged(games, snap):
    states, side = snap
    for f in STATE_FIELDS:
        np.testing.assert_array_equal(games.states[f], states[f])
    np.testing.assert_array_equal(games.games, side)


def test_bad_actions_raise_and_change_nothing():
    """An illegal action (naming the game index, the action and the legal ones), an action
    outside 0..144, a wrong shape, a bool or float dtype: ValueError, and no game changed."""
    games = BatchedGames(5, "kaihua").reset(3)
    good = games.bot_actions("random")
    illegal = int(np.flatnonzero(~games.masks[3])[0])
    snap = _snapshot(games)
    bad = good.copy()
    bad[3] = illegal
    with pytest.raises(ValueError, match=rf"game 3: illegal action '{re.escape(action_name(illegal))}' \({illegal}\)"):
        games.step(bad)
    bad[3] = N_ACTIONS
    with pytest.raises(ValueError, match=f"game 3: action {N_ACTIONS} is outside"):
        games.step(bad)
    for wrong, match in [(good[:4], r"shape \(5,\)"), (good.astype(bool), "bool"), (good.astype(float), "float"),
                         (np.zeros((5, 1), np.int64), "shape"), ("0", "integers")]:
        with pytest.raises(ValueError, match=match):
            games.step(wrong)
    _unchanged(games, snap)
    games.step(good)  # still usable


def test_arguments_validated():
    for kwargs, match in [
        ({"n": 0}, "num_envs"), ({"n": True}, "num_envs"), ({"n": 2, "mode": "duel"}, "mode"),
        ({"n": 2, "episode": "game"}, "episode"), ({"n": 2, "match_len": 0}, "match_len"),
        ({"n": 2, "observation": "image"}, "observation"), ({"n": 2, "reward": "money"}, "reward"),
        ({"n": 2, "reward_scale": 0}, "reward_scale"), ({"n": 2, "illegal_action": "ignore"}, "illegal_action"),
        ({"n": 2, "illegal_action": "penalty"}, "illegal_reward"), ({"n": 2, "dealer": 4}, "dealer"),
        ({"n": 2, "mode": "versus", "seat": 5}, "seat"), ({"n": 2, "mode": "versus", "opponents": "clever"}, "policy"),
        ({"n": 2, "mode": "versus", "opponents": ["greedy"]}, "opponents"),
        ({"n": 2, "mode": "versus", "seat": "random", "opponents": ["greedy"] * 3}, "fixed seat"),
        ({"n": 2, "options": {"no_such": 1}}, "no_such"), ({"n": 2, "history": "yes"}, "history"),
    ]:
        with pytest.raises(ValueError, match=match):
            BatchedGames(**kwargs)
    g = BatchedGames(2)
    with pytest.raises(ValueError, match="reset"):
        g.step(np.zeros(2, np.int64))
    for seeds, match in [(-1, "seed"), ([1], "seeds"), (True, "seed"), ([1.5, 2.0], "seeds")]:
        with pytest.raises(ValueError, match=match):
            g.reset(seeds)
    with pytest.raises(ValueError, match="num_envs"):
        CaishenVectorEnv(num_envs=0)


# ---------------------------------------------------------------------------
# the Gymnasium faces
# ---------------------------------------------------------------------------
@pytest.mark.parametrize("env_id", ["caishen/Kaihua-v0", "caishen/Jiating-v0"])
def test_make_vec_returns_the_batched_vector_env(env_id):
    env = gymnasium.make_vec(env_id, num_envs=16, vectorization_mode="vector_entry_point")
    assert isinstance(env, CaishenVectorEnv) and env.num_envs == 16
    assert env.metadata["autoreset_mode"] == gymnasium.vector.AutoresetMode.SAME_STEP
    assert env.single_action_space == gymnasium.spaces.Discrete(N_ACTIONS)
    assert env.single_observation_space.shape == (N_PLANES, N_KINDS)
    assert env.observation_space.shape == (16, N_PLANES, N_KINDS) and env.action_space.shape == (16,)
    obs, info = env.reset(seed=0)
    assert env.observation_space.contains(obs)
    masks = env.action_masks()
    assert masks.shape == (16, N_ACTIONS) and masks.dtype == bool and masks.any(axis=1).all()
    assert env.games.rules_name == env_id.split("/")[1][:-3].lower()
    flat = gymnasium.make_vec(env_id, num_envs=4, observation="flat", history=True)
    assert flat.single_observation_space.shape == (flat_size(True),)
    assert flat.reset(seed=1)[0].dtype == np.float32


def test_vector_env_autoreset_same_step():
    """Where an episode ends, the returned obs is the new episode's, the final one is in
    info["final_obs"] (valid where info["_final_obs"]), the reward is the ended hand's points,
    and the next step goes on in the new episode without a reset call."""
    env = CaishenVectorEnv(num_envs=32, opponents="greedy")
    obs, info = env.reset(seed=4)
    rng, actions = _rng(2), np.zeros(32, np.int64)
    ended = 0
    for _ in range(150):
        sample_legal(env.action_masks(), rng, actions)
        seeds_before = env.games.hand_seed.copy()
        obs, rew, term, trunc, info = env.step(actions)
        assert not trunc.any()
        np.testing.assert_array_equal(info["_final_obs"], term)
        for i in np.flatnonzero(term):
            assert env.games.hand_seed[i] != seeds_before[i] and info["hands_ended"][i] == 1
            assert rew[i] == info["hand_points"][i, info["seat"][i]]
            assert not np.array_equal(info["final_obs"][i], obs[i])
            ended += 1
        assert (rew[~term] == 0).all()
        assert env.action_masks().any(axis=1).all()
    assert ended > 50


def test_selfplay_vector_env_seats_and_rewards():
    env = SelfPlayVectorEnv(num_envs=8, rules="kaihua", copy=True)
    obs, info = env.reset(seed=0)
    assert set(info["current_player"].tolist()) <= {0, 1, 2, 3}
    rng, actions = _rng(9), np.zeros(8, np.int64)
    for _ in range(300):
        sample_legal(env.action_masks(), rng, actions)
        obs2, rewards, term, trunc, info = env.step(actions)
        assert rewards.shape == (8, N_SEATS) and obs2 is not obs
        np.testing.assert_allclose(rewards.sum(axis=1), 0, atol=1e-4)
        assert info["final_obs"].shape == (8, N_SEATS, N_PLANES, N_KINDS)
        obs = obs2
    sample_legal(env.action_masks(), rng, actions)  # "mine" in seat 0, the greedy bot in the others
    mixed = np.where(info["current_player"] == 0, actions, env.bot_actions("greedy"))
    env.step(mixed)


def test_single_game_view_passes_env_checker():
    """gymnasium's check_env on one game of the batched env (penalty mode, since check_env plays
    sampled actions), and render_mode errors are TypeError (SB3) and ValueError."""
    for rules in RULES:
        env = MahjongEnv(rules=rules, illegal_action="penalty", illegal_reward=-1000.0, opponents="random")
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            check_env(env)
        # the only warning: no spec to try other render modes with (it has none)
        assert [str(w.message) for w in caught if "not having a spec" not in str(w.message)] == []
    env = MahjongEnv(observation="flat", seat="random")
    obs, info = env.reset(seed=3)
    done = False
    while not done:
        obs, r, term, trunc, info = env.step(int(np.flatnonzero(env.action_masks())[0]))
        assert env.observation_space.contains(obs)
        done = term or trunc
    assert not env.action_masks().any()
    env.reset()
    with pytest.raises(ValueError, match="got the bool True"):
        env.step(True)
    for cls in (CaishenVectorEnv, SelfPlayVectorEnv):
        with pytest.raises(TypeError, match="render_mode"):
            cls(num_envs=1, render_mode="rgb_array")
        with pytest.raises(ValueError, match="render_mode"):
            cls(num_envs=1, render_mode="rgb_array")


@pytest.mark.parametrize("rules", RULES)
def test_final_state_keeps_each_ended_episodes_last_state(rules):
    """``final_state=True`` (the single-game env's core) changes nothing a step returns (the same observations,
    rewards and flags as without it, illegal actions and match episodes included) and keeps each ended
    episode's last state in ``final_states[i]``: the finished hand (its points the step's ``points``), or the
    hand an illegal action ended, with the tiles conserved."""
    for kw in ({}, {"episode": "match", "match_len": 2}):
        opts = dict(mode="versus", seat="random", illegal_action="penalty", illegal_reward=-99.0, **kw)
        free = BatchedGames(3, rules, **opts).reset(5)
        kept = BatchedGames(3, rules, final_state=True, **opts).reset(5)
        rng, actions, ended, g = _rng(4), np.zeros(3, np.int64), 0, Game(rules).reset(seed=0)
        for t in range(300):
            sample_legal(free.masks, rng, actions)
            if t % 97 == 5:
                actions[1] = int(np.flatnonzero(~free.masks[1])[0])
            before = kept.final_states.copy()
            kept.step(actions)
            free.step(actions)
            for name in ("reward", "terminated", "truncated", "illegal", "points", "hands_ended", "obs", "masks",
                         "learner", "hand_seed", "final_obs"):
                np.testing.assert_array_equal(getattr(kept, name), getattr(free, name), err_msg=name)
            done = kept.terminated | kept.truncated
            assert (kept.final_states[~done] == before[~done]).all()  # written only where an episode ended
            for i in np.flatnonzero(done):
                ended += 1
                st = kept.final_states[i]
                for f in STATE_DTYPE.names:
                    g.state[f] = st[f]
                g.check()  # the engine's invariants on the kept state: 136 tiles conserved, ...
                if not kept.illegal[i] and kw.get("episode") != "match":
                    assert st["table"]["phase"] == PH_DONE
                    assert [g.result[f"score_{s}"] for s in range(4)] == list(kept.points[i])
        assert ended >= 4


def test_the_gym_env_is_one_game_of_the_vector_env():
    """MahjongEnv (gymnasium.make) and game 0 of CaishenVectorEnv with the same seed and actions: the same
    observations, masks, rewards and flags; at an episode's end the gym env holds the finished hand
    (``info["result"]``, ``env.game.done``) and ``reset()`` deals the vector env's next episode."""
    gym_env = gymnasium.make("caishen/Jiating-v0", seat="random", opponents="greedy")
    vec = CaishenVectorEnv(1, rules="jiating", seat="random", copy=True, illegal_action="penalty",
                           illegal_reward=-500.0)
    obs, info = gym_env.reset(seed=11)
    vobs, vinfo = vec.reset(seed=11)
    rng, ended = np.random.default_rng(1), 0
    for _ in range(300):
        np.testing.assert_array_equal(obs, vobs[0])
        np.testing.assert_array_equal(gym_env.action_masks(), vec.action_masks()[0])
        assert info["seat"] == vinfo["seat"][0]
        a = int(rng.choice(np.flatnonzero(gym_env.action_masks())))
        obs, r, term, trunc, info = gym_env.step(a)
        vobs, vr, vterm, vtrunc, vinfo = vec.step(np.array([a]))
        assert (r, term, trunc) == (vr[0], vterm[0], vtrunc[0])
        np.testing.assert_array_equal(info["hand_points"], vinfo["hand_points"][0])
        if term:
            ended += 1
            np.testing.assert_array_equal(obs, vinfo["final_obs"][0])
            assert gym_env.unwrapped.game.done and r == info["result"][f"score_{info['seat']}"]
            assert not gym_env.action_masks().any()
            obs, info = gym_env.reset()
    assert ended >= 3


def _same_obs(a, b) -> None:
    """Two observations of one layout are equal (the candidates layout key by key)."""
    if isinstance(a, dict):
        assert sorted(a) == sorted(b)
        for k in a:
            np.testing.assert_array_equal(a[k], b[k], err_msg=k)
    else:
        np.testing.assert_array_equal(a, b)


@pytest.mark.parametrize("rules, kw", [("kaihua", {"history": True}),
                                       ("jiating", {"observation": "candidates", "assist": True, "oracle": True})])
def test_the_pettingzoo_env_is_one_game_of_the_selfplay_core(rules, kw):
    """The AEC env (raw_env) and game 0 of SelfPlayVectorEnv with the same seed and actions, step by step: the
    same agent to act, observation, mask and oracle labels; the same rewards and final observations at the
    hand's end; reset() deals the vector env's next episode.  Every agent's observation (the acting one's, the
    others' with an empty mask, the final ones) is encode() of a Game replaying the same actions, and the hand's
    result is that Game's."""
    from caishen.envs.oracle import oracle_labels
    from caishen.envs.pettingzoo_env import AGENTS, raw_env

    layout = {k: kw[k] for k in ("observation", "history", "assist") if k in kw}
    layout["layout"] = layout.pop("observation", "planes")
    aec = raw_env(rules=rules, **kw)
    vec = SelfPlayVectorEnv(1, rules=rules, copy=True, **kw)
    aec.reset(seed=21)
    vobs, vinfo = vec.reset(seed=21)
    rng, hands, steps = np.random.default_rng(2), 0, 0
    while hands < 3:
        st = vec.games.states[0]
        ref = Game(rules).reset(seed=int(vec.games.hand_seed[0]), dealer=int(st["table"]["dealer"]))
        final = None
        for agent in aec.agent_iter():
            obs, reward, term, trunc, info = aec.last()
            seat = AGENTS.index(agent)
            if term or trunc:
                vrew, vfin = final
                assert ref.done and reward == vrew[seat] == ref.result[f"score_{seat}"]
                assert info["result"] == ref.result and not trunc
                _same_obs(obs["observation"], index_obs(vfin, seat))
                want = encode(ref, seat, **layout)
                if layout.get("assist"):  # the decision-time assist block of a final observation is 0
                    if isinstance(want, dict):
                        want["context"][N_CONTEXT:] = 0
                    else:
                        want[n_planes(layout.get("history", False)):] = 0
                _same_obs(obs["observation"], want)
                assert not obs["action_mask"].any()
                if kw.get("oracle"):
                    _same_obs(info["oracle"], oracle_labels(ref))  # the hand's points, hand_ended
                aec.step(None)
                continue
            assert reward == 0 and seat == vinfo["current_player"][0] == ref.current_player
            _same_obs(obs["observation"], index_obs(vobs, 0))
            np.testing.assert_array_equal(obs["action_mask"], vec.action_masks()[0])
            np.testing.assert_array_equal(obs["action_mask"], ref.legal_mask())
            for other in AGENTS:
                if other != agent:
                    o = aec.observe(other)
                    assert not o["action_mask"].any()
                    _same_obs(o["observation"], encode(ref, AGENTS.index(other), **layout))
            if kw.get("oracle"):
                _same_obs(info["oracle"], oracle_labels(ref))  # the vector env's but the ended hand's points:
                core = index_obs(vinfo["oracle"], 0)
                _same_obs({k: info["oracle"][k] for k in core if k not in ("final_points", "hand_ended")},
                          {k: core[k] for k in core if k not in ("final_points", "hand_ended")})
            a = int(rng.choice(np.flatnonzero(obs["action_mask"])))
            aec.step(a)
            vobs, vrew, vterm, vtrunc, vinfo = vec.step(np.array([a]))
            ref.step(a)
            steps += 1
            if vterm[0]:
                final = (vrew[0], index_obs(vinfo["final_obs"], 0))
            assert aec.game.done == bool(vterm[0]) == ref.done
        hands += 1
        aec.reset()
    assert steps > 100


def test_module_docstring_memory_claim():
    """The bytes per game stated in caishen.envs.batched's docstring are what the buffers take."""
    g = BatchedGames(4096, "kaihua", mode="versus")
    per_game = g.nbytes() / 4096
    doc = " ".join(caishen.envs.batched.__doc__.split())
    assert f"{STATE_DTYPE.itemsize:,} bytes)" in doc and f"{caishen.envs.batched.GAME_DTYPE.itemsize} bytes)" in doc
    assert f"{per_game:,.0f} bytes per game, 4,096 games in about {round(g.nbytes() / 1e6)} MB" in doc
    selfplay = BatchedGames(4096, "kaihua").nbytes()
    assert f"{selfplay / 4096:,.0f} bytes per game ({round(selfplay / 1e6)} MB)" in doc
