"""Agents drive the Python step API with the same decisions as batch self-play."""

from __future__ import annotations

import numpy as np
import pytest

from caishen.agents import PolicyAgent, RandomAgent, make_agent
from caishen.sim.engine import Game
from caishen.sim.selfplay.batch import play_batch


@pytest.mark.parametrize("policy", ["greedy", "always", "never", "threshold:25"])
def test_step_api_agent_equals_batch_kernel(policy):
    """Game.reset(seed) deals the wall of play_batch(seed)'s first hand; deterministic
    bots must then reach the same record one action at a time."""
    for seed in range(12):
        game = Game("kaihua").reset(seed=seed)
        bot = make_agent(policy)
        while not game.done:
            game.step(bot.act(game.observe()))
            game.check()
        batch = play_batch(1, seed, policies=policy)
        for column, values in batch.items():
            if column != "hand" and not column.startswith("piao_chance"):  # self-play study columns
                assert game.record[column] == int(values[0]), (seed, column)


@pytest.mark.parametrize("policy", ["greedy", "always"])
def test_piao_chance_column_matches_its_definition_K_9_1(policy):
    """piao_chance_s, recomputed in Python by its definition at every own turn
    (holds a 财神; the hand without one is ready, shanten <= 0), equals the
    batch kernel's column (which skips the shanten where it cannot be ready)."""
    from caishen.sim.hand import shanten
    from caishen.sim.tiles import CAISHEN

    hits = 0
    for seed in range(40):
        game = Game("kaihua").reset(seed=seed)
        bot = make_agent(policy)
        chance = [0, 0, 0, 0]
        while not game.done:
            s = game.current_player
            hand = game.state["hands"][s].copy()
            if game.phase == "turn" and hand[CAISHEN] > 0:
                hand[CAISHEN] -= 1
                if shanten(hand, CAISHEN) <= 0:
                    chance[s] = 1
            game.step(bot.act(game.observe()))
        batch = play_batch(1, seed, policies=policy)
        assert [int(batch[f"piao_chance_{s}"][0]) for s in range(4)] == chance, seed
        hits += sum(chance)
    assert hits > 5


def test_random_agent_plays_legal_and_is_seeded():
    def play(seed):
        game = Game("kaihua").reset(seed=3)
        bot = RandomAgent(seed)
        actions = []
        while not game.done:
            a = bot.act(game.observe())
            assert a in game.legal_actions()
            game.step(a)
            actions.append(a)
        return actions

    assert play(1) == play(1)
    assert play(1) != play(2)


def test_agent_errors():
    with pytest.raises(ValueError, match="unknown policy"):
        make_agent("clever")
    with pytest.raises(ValueError, match="RandomAgent"):
        PolicyAgent("random")
    game = Game("kaihua").reset(seed=1)
    bot = make_agent("greedy")
    while not game.done:
        game.step(bot.act(game.observe()))
    with pytest.raises(ValueError, match="over"):
        bot.act(game.observe())
    with pytest.raises(TypeError, match="Observation"):
        bot.act(np.zeros(3))
    with pytest.raises(TypeError, match=r"not the Game: pass game\.observe\(\)"):
        bot.act(game)
