"""Agents drive the Python step API with the same decisions as batch self-play."""

from __future__ import annotations

import numpy as np
import pytest

from agents import PolicyAgent, RandomAgent, make_agent
from sim.engine import Game
from sim.selfplay import play_batch


@pytest.mark.parametrize("policy", ["greedy", "always", "never", "threshold:25"])
def test_step_api_agent_equals_batch_kernel(policy):
    """Game.reset(seed) deals the wall of play_batch(seed)'s first hand; deterministic
    bots must then reach the same record one action at a time."""
    for seed in range(12):
        game = Game("kaihua").reset(seed=seed)
        bot = make_agent(policy)
        while not game.done:
            game.step(bot.act(game))
            game.check()
        batch = play_batch(1, seed, policies=policy)
        for column, values in batch.items():
            if column != "hand" and not column.startswith("piao_chance"):  # self-play study columns
                assert game.result[column] == int(values[0]), (seed, column)


def test_random_agent_plays_legal_and_is_seeded():
    def play(seed):
        game = Game("kaihua").reset(seed=3)
        bot = RandomAgent(seed)
        actions = []
        while not game.done:
            a = bot.act(game)
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
        game.step(bot.act(game))
    with pytest.raises(ValueError, match="over"):
        bot.act(game)
    with pytest.raises(ValueError, match="Game"):
        bot.act(np.zeros(3))
