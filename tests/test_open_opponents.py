"""Open seats (``python:``, ``exec:``) as the opponents of the batched and vector envs (caishen.envs.open_opponents).

An open opponent must leave the games exactly as the numba bot it imitates would (same deals, rewards,
episode ends), see only its own seat's information, be named in one line when it fails, and an exec:
program must hear the hands it plays in order.  Also: the commands that take bot specs and refuse open
seats (caishen piao) say why in one line.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

import gymnasium
import numpy as np
import pytest

import caishen.envs  # noqa: F401  (registers the ids and the arena host)
import open_seat_replay as replay
from caishen.envs import env_id
from caishen.envs.batched import BatchedGames
from caishen.envs.observation import encode
from caishen.envs.seats import SeatError
from caishen.envs.vector_env import CaishenVectorEnv
from caishen.sim.engine import STATE_DTYPE, Game
from test_envs import _hidden_twin
from test_seats import _exec_bot

RULES = ("kaihua", "jiating")
REPLAY = "python:open_seat_replay:replay"
EXAMPLES = Path(__file__).resolve().parents[1] / "examples" / "bots"


def _same_step(a: BatchedGames, b: BatchedGames) -> None:
    for name in ("obs", "masks", "player", "reward", "rewards", "terminated", "truncated", "points", "hands_ended"):
        np.testing.assert_array_equal(getattr(a, name), getattr(b, name), err_msg=name)
    np.testing.assert_array_equal(a.hand_seed, b.hand_seed)


@pytest.mark.parametrize("rules", RULES)
@pytest.mark.parametrize("bot", ["random", "greedy"])
def test_python_opponents_playing_a_kernel_bots_moves_give_that_bots_episodes(rules, bot, batched_warm):
    """python: opponents that answer as numba bot ``bot`` (on the games' own states): step by step the same
    observations, masks, rewards, episode ends and hand points as ``opponents=bot`` in the kernel -- alone, beside
    kernel bots (three specs) and in every seat but a drawn learning seat; so the host neither skips, repeats nor
    reorders a decision, and the batch's scoring pauses (J-6 scores after the hand) mix with the seats' rounds."""
    for kw_ref, kw_open in (({"opponents": bot}, {"opponents": REPLAY}),
                            ({"opponents": f"greedy,{bot},random"}, {"opponents": f"greedy,{REPLAY},random"}),
                            ({"opponents": bot, "seat": "random", "episode": "match", "match_len": 2},
                             {"opponents": REPLAY, "seat": "random", "episode": "match", "match_len": 2})):
        ref = BatchedGames(5, rules, mode="versus", **kw_ref).reset(11)
        g = BatchedGames(5, rules, mode="versus", **kw_open)
        replay.ENV, replay.BOT = g, bot
        replay.CALLS.clear()
        g.reset(11)
        _same_step(ref, g)
        hands = 0
        for _ in range(30):
            a = ref.bot_actions("greedy")
            ref.step(a)
            g.step(a)
            _same_step(ref, g)
            hands += int(g.hands_ended.sum())
        assert hands >= 3 and len(replay.CALLS) >= 30
        assert max(len(c[3]) for c in replay.CALLS) >= 2  # a call gets a batch of games, not one


def test_a_python_opponent_sees_its_own_seat_and_nothing_hidden(batched_warm):
    """K-5.3 / J-3.2: each row a python: opponent gets is its own seat's observation of that game (as
    ``encode``), unchanged when only what that seat cannot see changes (the other hands -- the learning seat's
    too --, the wall, concealed kong kinds, private flags: tests/test_envs.py's hidden twin), with that seat's
    legal mask; the learning seat is never asked."""
    rng = np.random.default_rng(4)
    rows = 0
    for rules in RULES:
        g = BatchedGames(4, rules, mode="versus", seat=2, opponents="python:open_seat_replay:record")
        replay.ENV = g
        replay.CALLS.clear()
        g.reset(3)
        for _ in range(12):
            g.step(g.bot_actions("greedy"))
        game, twin = Game(rules).reset(seed=0), Game(rules).reset(seed=0)
        for obs, mask, states, seats in replay.CALLS:
            assert obs.shape == (len(seats), 76, 34) and mask.shape == (len(seats), 145)
            for j, s in enumerate(seats):
                for name in STATE_DTYPE.names:
                    game.state[name] = states[j][name]
                assert s != 2 and s == states[j]["table"]["to_act"]
                np.testing.assert_array_equal(mask[j], states[j]["mask"].astype(bool))
                np.testing.assert_array_equal(obs[j], encode(game, int(s)))
                _hidden_twin(game, twin, int(s), rng)
                np.testing.assert_array_equal(encode(twin, int(s)), obs[j])
                rows += 1
    assert rows >= 60


@pytest.mark.parametrize("fn,msg", [("illegal", r"illegal action .*; legal: "),
                                    ("boom", "act raised RuntimeError: boom")])
def test_a_failing_opponent_is_named_in_one_line_and_the_env_wants_a_reset(fn, msg, batched_warm):
    """gymnasium.make_vec with a python: opponent that returns an illegal action (or raises): a SeatError in one
    line naming the bot, the game of the batch and its seat and phase; then step() asks for a reset."""
    spec = f"python:open_seat_replay:{fn}"
    env = gymnasium.make_vec(env_id("kaihua"), num_envs=3, opponents=f"greedy,{spec},greedy")
    with pytest.raises(SeatError, match=msg) as e:
        env.reset(seed=1)
        for _ in range(20):
            env.step(env.unwrapped.action_masks().argmax(1))
    text = str(e.value)
    assert "\n" not in text and text.startswith(f"policy {spec!r}: ")
    assert "of the batch (hand seed " in text and ", seat 2, phase " in text
    with pytest.raises(ValueError, match=r"call reset\(\) before step\(\)"):
        env.step(np.zeros(3, np.int64))


def test_opponents_that_cannot_play_are_named_before_anything_runs(batched_warm):
    with pytest.raises(ValueError, match=r"policy 'python:no_such_mod_x:act' \(seat 1\): cannot import module"):
        BatchedGames(2, "kaihua", mode="versus", opponents="python:no_such_mod_x:act,greedy,greedy")
    with pytest.raises(ValueError, match="program '/no/such/bot' not found"):
        CaishenVectorEnv(2, "kaihua", opponents="exec:/no/such/bot")
    with pytest.raises(ValueError, match="or 3 of them, got"):
        BatchedGames(2, "kaihua", mode="versus", opponents=["greedy", REPLAY])
    g = BatchedGames(2, "kaihua", mode="versus").reset(0)
    with pytest.raises(ValueError, match="as an opponent of the envs"):
        g.bot_actions(REPLAY)


def test_an_exec_opponent_hears_the_hands_it_plays_in_order(tmp_path, batched_warm):
    """An exec: opponent of the vector env: hello for its seat, every hand it plays announced, asked and closed
    in order (game numbers from 0), only its own hand in a request, no pass or concealed kong tile of another
    seat; the hands' points the env counts are among the end_hand scores; env.close() sends bye."""
    spec, log = _exec_bot(tmp_path, "first")
    env = CaishenVectorEnv(3, "jiating", opponents=f"greedy,{spec},random")
    env.reset(seed=5)
    counted = []
    for _ in range(25):
        _, _, _, _, info = env.step(env.action_masks().argmax(1))
        counted += [tuple(p) for p, k in zip(info["hand_points"], info["hands_ended"]) if k == 1]
    env.close()
    msgs = [json.loads(x) for x in Path(log).read_text().splitlines()]
    assert msgs[0]["type"] == "hello" and msgs[0]["seat"] == 2 and msgs[-1]["type"] == "bye"
    started, ended, scores, asked = [], set(), [], 0
    for m in msgs[1:-1]:
        g = m["game"]
        if m["type"] == "start_hand":
            assert m["seat"] == 2 and g == len(started)
            started.append(g)
            continue
        assert g in started and g not in ended
        if m["type"] == "end_hand":
            ended.add(g)
            scores.append(tuple(m["scores"]))
            assert sum(m["scores"]) == 0
        elif m["type"] == "action" and m["seat"] != 2:
            assert m["action"] not in ("pass", "hard_decline") and not m["action"].startswith("kong_concealed ")
        elif m["type"] == "request":
            asked += 1
            assert m["seat"] == 2 and all(not x.startswith("kong_concealed ") for p in (0, 1, 3)
                                          for x in m["melds"][p])
    assert asked >= 20 and len(counted) >= 2
    assert not [p for p in counted if p not in scores]


def test_the_example_seat_bot_plays_a_few_steps_of_make_vec(batched_warm):
    env = gymnasium.make_vec(env_id("kaihua"), num_envs=2,
                             opponents=f"exec:{sys.executable} {EXAMPLES / 'seat_bot.py'}")
    env.reset(seed=2)
    seats = env.unwrapped.games._open.execs
    assert sorted(x.seat for x in seats) == [1, 2, 3]
    for _ in range(10):
        obs, reward, *_ = env.step(env.unwrapped.action_masks().argmax(1))
        assert obs.shape == (2, 76, 34)
    assert sum(x.decisions for x in seats) >= 10
    env.close()
    assert all(x.proc is None for x in seats)


def test_caishen_piao_refuses_an_open_seat_and_says_why_in_one_line(tmp_path, capsys):
    from caishen import cli

    for flags in (["--policy", REPLAY], ["--keep-then", "exec:./my bot"]):
        with pytest.raises(SystemExit) as e:
            cli.main(["piao", *flags, "--hands", "4", "--out", str(tmp_path / "p")])
        assert e.value.code == 2
        err = capsys.readouterr().err.strip()
        assert len(err.splitlines()) == 1 and "counterfactual rollouts inside the numba kernel" in err
        assert "caishen match --policies" in err
    assert not (tmp_path / "p").exists()


def test_caishen_balance_seats_an_open_bot(tmp_path, capsys, engine_warm):
    """caishen balance --bots with a python: bot: the command registers the arena host and plays it in its own
    process (before: 'import caishen.envs'); the report names the bot."""
    from caishen import cli

    spec = f"python:{EXAMPLES / 'python_seat.py'}:Policy"
    assert cli.main(["balance", "--bots", spec, "--hands", "32", "--option-walls", "0", "--out",
                     str(tmp_path / "b"), "--no-progress"]) == 0
    assert f"dealer edge, {spec} at every seat" in capsys.readouterr().out
    assert spec in (tmp_path / "b" / "balance.md").read_text()
