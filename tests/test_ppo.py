"""The training path (issue 12 item 5): the SB3 adapter, caishen.agents.train_ppo, the "ppo:" agent, evaluation.

Tests that train or load a policy need the ``[rl]`` extra (torch, sb3-contrib)
and are skipped cleanly without it (CI installs no torch); the others check
what works without it: ``import caishen.agents`` / ``import caishen.envs`` never import torch,
a missing checkpoint is a ValueError, and the duplicate-deal evaluation with
the built-in policies.
"""

from __future__ import annotations

import csv
import os
import subprocess
import sys

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from caishen.sim.engine import N_ACTIONS, Game

TINY = dict(timesteps=2048, n_envs=32, n_steps=32, batch_size=256, n_epochs=2, net=(32, 32), seed=3, imitate=2048)


@pytest.fixture(scope="module")
def rl():
    """Skip without the [rl] extra (torch, sb3-contrib, safetensors: the checkpoints' format)."""
    pytest.importorskip("torch")
    pytest.importorskip("safetensors")
    return pytest.importorskip("sb3_contrib")


@pytest.fixture(scope="module")
def tiny_run(rl, tmp_path_factory, batched_warm):
    """A tiny training run: (output folder, path of model.safetensors)."""
    from caishen.agents.train_ppo import train

    out = str(tmp_path_factory.mktemp("ppo"))
    return out, train(out, **TINY)


# ------------------------------------------------------------------------- without torch
def test_import_agents_and_envs_never_imports_torch():
    code = ("import sys, caishen.agents, caishen.envs, caishen.agents.ppo, caishen.agents.train_ppo; "
            "bad = [m for m in ('torch', 'stable_baselines3', 'sb3_contrib') if m in sys.modules]; "
            "assert not bad, bad")
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=os.getcwd())
    assert r.returncode == 0, r.stderr[-2000:]


def test_make_agent_ppo_missing_checkpoint_is_value_error(tmp_path):
    from caishen.agents import make_agent

    missing = str(tmp_path / "nope.safetensors")
    with pytest.raises(ValueError, match="nope.safetensors"):
        make_agent(f"ppo:{missing}")
    with pytest.raises(ValueError, match="checkpoint's path"):
        make_agent("ppo:")


class _Boom:
    """A pickled object whose unpickling creates a marker file: code run from data."""

    def __init__(self, marker):
        self.marker = marker

    def __reduce__(self):
        return (open, (self.marker, "w"))


def test_ppo_checkpoint_that_unpickles_is_refused_and_runs_no_code(tmp_path):
    """Issue 23 kind 9: ``ppo:PATH`` of an SB3 .zip whose ``data`` holds a ``:serialized:`` object (SB3
    unpickles those on load: here the pickle would create a file) is refused with a ValueError naming the
    format, before anything in it is read; nothing runs."""
    import base64
    import json
    import pickle
    import zipfile

    from caishen.agents import make_agent

    marker = tmp_path / "pwned"
    payload = base64.b64encode(pickle.dumps(_Boom(str(marker)))).decode()
    evil = tmp_path / "model.zip"
    with zipfile.ZipFile(evil, "w") as z:
        z.writestr("data", json.dumps({"policy_class": {":type:": "<class 'type'>", ":serialized:": payload},
                                       "observation_space": {":serialized:": payload}}))
        z.writestr("_stable_baselines3_version", "2.4.0")
        z.writestr("policy.pth", pickle.dumps(_Boom(str(marker))))
    for path in (evil, tmp_path / "model"):  # also the bare name SB3 would complete with .zip
        with pytest.raises(ValueError, match=r"only \.safetensors .*can run code"):
            make_agent(f"ppo:{path}")
    assert not marker.exists()


def test_ppo_checkpoint_config_is_checked_before_any_tensor(tmp_path):
    """A .safetensors file without caishen's config, with a damaged header, or with a config naming another
    format is a ValueError naming the file (no torch needed: the header is parsed first)."""
    import json
    import struct

    from caishen.agents.ppo import load_policy

    def file(header: dict, body=b"") -> str:
        raw = json.dumps(header).encode()
        p = tmp_path / f"c{len(list(tmp_path.iterdir()))}.safetensors"
        p.write_bytes(struct.pack("<Q", len(raw)) + raw + body)
        return str(p)

    with pytest.raises(ValueError, match="not a caishen PPO checkpoint"):
        load_policy(file({"__metadata__": {"other": "x"}}))
    with pytest.raises(ValueError, match="not a caishen-ppo-policy-1 config"):
        load_policy(file({"__metadata__": {"caishen": json.dumps({"format": "x"})}}))
    bad = tmp_path / "huge.safetensors"
    bad.write_bytes(struct.pack("<Q", 1 << 40) + b"{}")
    with pytest.raises(ValueError, match="not a safetensors file"):
        load_policy(str(bad))
    with pytest.raises(ValueError, match="FIFO|not a regular file"):
        fifo = tmp_path / "fifo.safetensors"
        os.mkfifo(fifo)
        load_policy(str(fifo))


@pytest.mark.parametrize("recorded, shape, msg", [
    (None, [967], "field 'feature_set' must be"),
    ({"name": "flat", "version": 2}, [967], "field 'feature_set' is 'flat' version 2, this code has version 1"),
    ({"name": "planes", "version": 1}, [967], "field 'feature_set' is the feature set 'planes', this reader needs 'flat'"),
    ({"name": "flat", "version": 1}, [2599], "this reader needs 'flat+history'"),
    ({"name": "flat", "version": 1}, [968], "field 'observation_shape' [968] is none of the caishen layouts"),
])
def test_ppo_checkpoint_records_its_feature_set_and_refuses_another(tmp_path, recorded, shape, msg):
    """A checkpoint's config names its observation feature set and version (caishen.sim.bots.features);
    a missing one, another set, another version, or one its observation shape is not: a ValueError
    naming the file and the field, before any tensor is read (no torch needed)."""
    import json
    import struct

    from caishen.agents.ppo import CHECKPOINT_FORMAT, CONFIG_KEY, load_policy

    cfg = {"format": CHECKPOINT_FORMAT, "observation_shape": shape, "n_actions": 145,
           "net_arch": {"pi": [8], "vf": [8]}, "activation": "tanh", "meta": {}}
    if recorded is not None:
        cfg["feature_set"] = recorded
    raw = json.dumps({"__metadata__": {CONFIG_KEY: json.dumps(cfg)}}).encode()
    p = tmp_path / "c.safetensors"
    p.write_bytes(struct.pack("<Q", len(raw)) + raw)
    with pytest.raises(ValueError) as e:
        load_policy(str(p))
    assert str(p) in str(e.value) and msg in str(e.value)


def test_layout_of_every_observation_layout_and_bad_shape():
    from gymnasium import spaces

    from caishen.agents.ppo import layout_of

    assert layout_of(spaces.Box(0, 1, (967,))) == ("flat", False, False)
    assert layout_of(spaces.Box(0, 1, (2599,))) == ("flat", True, False)
    assert layout_of(spaces.Box(0, 1, (967 + 36,))) == ("flat", False, True)
    assert layout_of(spaces.Box(0, 1, (2599 + 36,))) == ("flat", True, True)
    assert layout_of(spaces.Box(0, 1, (76, 34))) == ("planes", False, False)
    assert layout_of(spaces.Box(0, 1, (124, 34))) == ("planes", True, False)
    with pytest.raises(ValueError, match="968"):
        layout_of(spaces.Box(0, 1, (968,)))


# ------------------------------------------------------------------------- the assist block
def assist_reference(hand, pending, joker):
    """caishen.envs.assist's block, the slow obvious way: caishen.sim.hand.shanten on each changed hand."""
    from caishen.sim.hand import shanten

    out = np.zeros(36)
    h = np.array(hand, np.uint8)
    s0 = shanten(h, joker)
    out[0] = min(s0 + 1, 8) / 8
    s1 = s0
    if h.sum() % 3 == 1 and pending >= 0 and h[pending] < 4:
        h[pending] += 1
        s1 = shanten(h, joker)
    out[1] = min(s1 + 1, 8) / 8
    if h.sum() % 3 != 2:
        out[2:] = 1
        return out
    after = {}
    for k in range(34):
        if h[k]:
            h2 = h.copy()
            h2[k] -= 1
            after[k] = shanten(h2, joker)
    best = min(after.values())
    for k in range(34):
        out[2 + k] = min(after[k] - best, 3) / 3 if k in after else 1.0
    return out


@settings(max_examples=400, deadline=None)
@given(st.integers(0, 2**32 - 1), st.sampled_from([1, 2, 4, 5, 7, 8, 10, 11, 13, 14]), st.integers(-1, 33),
       st.sampled_from([-1, 31]))
def test_assist_kernel_equals_reference(seed, n, pending, joker):
    from caishen.envs.assist import _assist_one
    from caishen.sim.tables import hand_tables

    hand = np.bincount(np.random.default_rng(seed).permutation(136)[:n] // 4, minlength=34).astype(np.uint8)
    out = np.zeros(36, np.float32)
    _assist_one(hand, pending, joker, hand_tables(), np.zeros(34, np.uint8), np.zeros(34, np.int64), out)
    np.testing.assert_allclose(out, assist_reference(hand, pending, joker), atol=1e-6)


def test_assist_features_through_game_states_and_batch(engine_warm):
    """At every decision of a few random hands of both rule sets: assist_features(game, seat) of
    every seat equals the reference on that seat's own tiles and the tile on offer; bad seats raise."""
    from caishen.envs.assist import assist_batch, assist_features
    from caishen.sim.rules import base as rulesets

    rng = np.random.default_rng(0)
    checked = 0
    for rules in ("kaihua", "jiating"):
        joker = rulesets.get(rules).facts["joker"]
        for seed in range(4):
            game = Game(rules).reset(seed=seed, dealer=seed % 4)
            while not game.done:
                st_ = game.state
                for seat in range(4):
                    ref = assist_reference(st_["hands"][seat], int(st_["table"]["tile"]), joker)
                    np.testing.assert_allclose(assist_features(game, seat), ref, atol=1e-6)
                    checked += 1
                game.step(int(rng.choice(game.legal_actions())))
    assert checked > 400
    with pytest.raises(ValueError, match="seat"):
        assist_features(game, 4)
    with pytest.raises(ValueError, match="seats"):
        assist_batch(game._buf, np.array([7]), "kaihua")


def test_evaluation_duplicate_deals_and_ci_table(batched_warm):
    """The same deals for every policy (walls compared inside), greedy beats random, and the
    table's intervals are what the formula says."""
    from caishen.agents.ppo import ci_table, evaluate_vs_greedy

    pts = evaluate_vs_greedy({"greedy": "greedy", "random": "random", "greedy again": "greedy"}, "kaihua",
                             hands=300, n_games=64, seed=5)
    assert all(p.shape == (64, 5) for p in pts.values())
    np.testing.assert_array_equal(pts["greedy"], pts["greedy again"])  # deterministic bot, same deals
    rows = {r["policy"]: r for r in ci_table(pts, reference="greedy")}
    x = pts["random"].ravel().astype(float)
    assert rows["random"]["mean"] == pytest.approx(x.mean())
    assert rows["random"]["ci95"] == pytest.approx(1.96 * x.std(ddof=1) / np.sqrt(x.size))
    assert rows["greedy again"]["diff"] == 0.0 and rows["greedy again"]["diff_ci95"] == 0.0
    assert rows["random"]["mean"] < rows["greedy"]["mean"]
    with pytest.raises(ValueError, match="reference"):
        ci_table(pts, reference="nobody")
    with pytest.raises(ValueError, match="hands"):
        evaluate_vs_greedy({"g": "greedy"}, hands=0)


def test_train_ppo_cli_bad_net_exits_2(capsys):
    from caishen.agents.train_ppo import main

    assert main(["--net", "64,x", "--out", "unused"]) == 2
    assert "--net" in capsys.readouterr().err


# ------------------------------------------------------------------------- with the [rl] extra
def test_sb3_vecenv_masks_terminal_obs_and_seeding(rl, batched_warm):
    from sb3_contrib.common.maskable.utils import get_action_masks, is_masking_supported

    from caishen.agents.ppo import random_masked_policy
    from caishen.envs.sb3_vec import BatchedVecEnv

    env = BatchedVecEnv(16, observation="flat", reward="scaled", seed=0)
    obs = env.reset()
    assert obs.shape == (16, 967) and obs.dtype == np.float32
    assert is_masking_supported(env)
    np.testing.assert_array_equal(get_action_masks(env), env.games.masks)
    pick = random_masked_policy(0)
    ended = 0
    for _ in range(200):
        masks = get_action_masks(env)
        before = obs.copy()
        obs2, rew, dones, infos = env.step(pick(obs, masks))
        np.testing.assert_array_equal(obs, before)  # returned obs are copies, not the env's buffer
        assert len(infos) == 16 and rew.dtype == np.float32
        for i in np.flatnonzero(dones):
            assert infos[i]["terminal_observation"].shape == (967,)
            assert infos[i]["TimeLimit.truncated"] is False
            assert infos[i]["episode"]["r"] == pytest.approx(infos[i]["points"] / 8, abs=1e-5)
            ended += 1
        assert all("terminal_observation" not in infos[i] for i in np.flatnonzero(~dones))
        obs = obs2
    assert ended > 50
    with pytest.raises(ValueError, match="flat"):
        BatchedVecEnv(2, assist=True)
    with pytest.raises(ValueError, match="shaping"):
        BatchedVecEnv(2, shaping=-1)
    # env.seed(s) (what MaskablePPO(seed=s) calls) deals the same games as seed=s in the constructor
    a, b = BatchedVecEnv(8, observation="flat", seed=11), BatchedVecEnv(8, observation="flat")
    b.seed(11)
    np.testing.assert_array_equal(a.reset(), b.reset())
    np.testing.assert_array_equal(a.games.hand_seed, b.games.hand_seed)


def test_sb3_vecenv_assist_block_and_shaping_pays_back(rl, batched_warm):
    """assist=True appends caishen.envs.assist's block of the learning seat; with shaping c, an episode's
    shaped rewards sum to its reward plus c * shanten at its first decision (potential-based,
    Phi = 0 at the end)."""
    from caishen.agents.ppo import random_masked_policy
    from caishen.envs.assist import assist_batch
    from caishen.envs.sb3_vec import BatchedVecEnv

    env = BatchedVecEnv(16, observation="flat", reward="scaled", seed=4, assist=True, shaping=0.5)
    obs = env.reset()
    assert obs.shape == (16, 967 + 36) and env.observation_space.shape == (1003,)
    np.testing.assert_array_equal(obs[:, :967], env.games.obs)
    np.testing.assert_array_equal(obs[:, 967:], assist_batch(env.games.states, env.games.learner, "kaihua"))
    pick = random_masked_policy(1)
    start = 0.5 * (obs[:, 967] * 8 - 1)  # c * shanten at each episode's first decision
    acc, ended = np.zeros(16), 0
    for _ in range(300):
        obs, rew, dones, infos = env.step(pick(obs, env.action_masks()))
        acc += rew
        for i in np.flatnonzero(dones):
            assert acc[i] == pytest.approx(infos[i]["episode"]["r"] + start[i], abs=1e-4)
            assert infos[i]["terminal_observation"].shape == (1003,)
            acc[i], start[i] = 0.0, 0.5 * (obs[i, 967] * 8 - 1)
            ended += 1
    assert ended > 100


def test_train_tiny_writes_curve_and_checkpoints(tiny_run):
    out, path = tiny_run
    for name in ("untrained.safetensors", "imitated.safetensors", "imitation.csv", "config.json"):
        assert os.path.isfile(os.path.join(out, name)), name
    assert os.path.isfile(path)
    with open(os.path.join(out, "curve.csv")) as f:
        rows = list(csv.DictReader(f))
    assert [int(r["timesteps"]) for r in rows] == [1024, 2048]
    assert all(int(r["hands"]) > 0 and np.isfinite(float(r["mean_points"])) for r in rows)


def test_make_agent_ppo_loads_checkpoint(tiny_run):
    from caishen.agents import make_agent
    from caishen.agents.ppo import PPOAgent

    agent = make_agent(f"ppo:{tiny_run[1]}")
    assert isinstance(agent, PPOAgent)
    assert tiny_run[1].endswith(".safetensors")
    assert (agent.layout, agent.history, agent.assist) == ("flat", False, True)
    assert agent.meta["rules"] == "kaihua" and agent.meta["timesteps"] == 2048


def test_checkpoint_round_trip_gives_the_trained_actions_and_wrong_tensors_are_named(tiny_run, tmp_path):
    """save_policy / load_policy keep every tensor (the same actions as the network in memory), and a
    checkpoint whose tensors do not fit its config is a ValueError naming the file."""
    import torch
    from safetensors.torch import load_file, save_file

    from caishen.agents.ppo import PPOAgent, load_policy, save_policy

    pol = load_policy(tiny_run[1])
    again = save_policy(pol, str(tmp_path / "again.safetensors"), pol.caishen_meta)
    a, b = PPOAgent(tiny_run[1]), PPOAgent(again)
    rng = np.random.default_rng(0)
    obs = rng.random((64, 967 + 36)).astype(np.float32)
    masks = rng.random((64, N_ACTIONS)) < 0.3
    masks[:, 0] = True
    np.testing.assert_array_equal(a.act_batch(obs, masks), b.act_batch(obs, masks))
    for k, v in pol.state_dict().items():
        assert torch.equal(v, load_policy(again).state_dict()[k])
    tensors = load_file(again)
    meta = __import__("safetensors").safe_open(again, "pt").metadata()
    tensors.pop(next(iter(tensors)))
    save_file(tensors, str(tmp_path / "cut.safetensors"), metadata=meta)
    with pytest.raises(ValueError, match="cut.safetensors.*do not fit"):
        load_policy(str(tmp_path / "cut.safetensors"))


def test_ppo_agent_plays_only_legal_actions_through_game(tiny_run):
    """Game.step raises on an illegal action; the agent sits in seat 0 next to greedy bots, then in
    every seat, in both rule sets (the checkpoint's layout fits both)."""
    from caishen.agents import make_agent

    ppo, greedy = make_agent(f"ppo:{tiny_run[1]}"), make_agent("greedy")
    for rules, seats in (("kaihua", [ppo, greedy, greedy, greedy]), ("kaihua", [ppo] * 4), ("jiating", [ppo] * 4)):
        for seed in range(3):
            game = Game(rules).reset(seed=seed, dealer=seed % 4)
            while not game.done:
                legal = game.legal_actions()
                a = seats[game.current_player].act(game.observe())
                assert a in legal
                game.step(a)
            assert sum(game.result[f"score_{s}"] for s in range(4)) == 0


def test_ppo_agent_plays_the_batched_envs(tiny_run):
    """act_batch in the versus vector env (illegal actions raise there) and in every seat of a
    self-play batch next to a greedy bot, routed by current_player."""
    from caishen.agents import make_agent
    from caishen.envs.vector_env import CaishenVectorEnv, SelfPlayVectorEnv

    ppo = make_agent(f"ppo:{tiny_run[1]}")
    vec = CaishenVectorEnv(32, observation="flat", illegal_action="raise")
    vec.reset(seed=1)
    hands = 0
    for _ in range(150):
        a = ppo.act_games(vec.games)
        assert vec.action_masks()[np.arange(32), a].all()
        _, _, _, _, info = vec.step(a)
        hands += int(info["hands_ended"].sum())
    assert hands > 0
    sp = SelfPlayVectorEnv(16, rules="jiating", observation="flat")
    _, info = sp.reset(seed=2)
    for _ in range(150):
        mine = ppo.act_games(sp.games)
        a = np.where(info["current_player"] == 0, sp.bot_actions("greedy"), mine)
        _, rewards, _, _, info = sp.step(a)
        assert np.allclose(rewards.sum(axis=1), 0)
    with pytest.raises(ValueError, match="observations of shape"):
        ppo.act_batch(np.zeros((2, 76, 34), np.uint8), np.ones((2, N_ACTIONS), bool))
    with pytest.raises(ValueError, match="planes"):
        ppo.act_games(CaishenVectorEnv(2).games)


def test_evaluation_of_checkpoints_gives_numbers(tiny_run):
    from caishen.agents.train_ppo import evaluate_checkpoints

    out, path = tiny_run
    rows = evaluate_checkpoints(path, os.path.join(out, "untrained.safetensors"), hands=256, seed=7, out=out)
    by = {r["policy"]: r for r in rows}
    assert list(by) == ["trained", "imitation only", "untrained", "random (masked)", "greedy"]
    assert all(r["hands"] == 256 and np.isfinite(r["mean"]) and r["ci95"] > 0 for r in rows)
    assert by["trained"]["diff"] == 0.0
    assert os.path.isfile(os.path.join(out, "eval.csv")) and os.path.isfile(os.path.join(out, "eval.md"))


def test_convert_zip_of_a_trusted_sb3_model_keeps_its_policy(rl, batched_warm, tmp_path):
    """convert_zip (for a zip you trained yourself) writes a .safetensors checkpoint that plays exactly as
    the zip's policy."""
    from sb3_contrib import MaskablePPO

    from caishen.agents.ppo import PPOAgent, convert_zip
    from caishen.envs.sb3_vec import BatchedVecEnv

    model = MaskablePPO("MlpPolicy", BatchedVecEnv(4, observation="flat", seed=0), n_steps=8, batch_size=8,
                        policy_kwargs=dict(net_arch=dict(pi=[16], vf=[16])), seed=1, device="cpu")
    model.caishen_meta = {"rules": "kaihua"}
    model.save(tmp_path / "mine.zip")
    out = convert_zip(tmp_path / "mine.zip", tmp_path / "mine.safetensors")
    a, b = PPOAgent(model), PPOAgent(out)
    rng = np.random.default_rng(2)
    obs = rng.random((32, 967)).astype(np.float32)
    masks = rng.random((32, N_ACTIONS)) < 0.3
    masks[:, 0] = True
    np.testing.assert_array_equal(a.act_batch(obs, masks), b.act_batch(obs, masks))
    assert b.meta == {"rules": "kaihua"}

