"""Open seats (``python:``, ``exec:``, step-API agent objects) as the opponents of the batched and vector envs (caishen.envs.open_opponents).

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
from caishen.agents import Agent, make_agent
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


def _play_alike(ref: BatchedGames, g: BatchedGames, steps: int) -> int:
    """Step ``ref`` and ``g`` with the same learner actions (greedy's on ``ref``) ``steps`` times, checking after
    each that they agree (:func:`_same_step`); the hands that ended in ``g``."""
    _same_step(ref, g)
    hands = 0
    for _ in range(steps):
        a = ref.bot_actions("greedy")
        ref.step(a)
        g.step(a)
        _same_step(ref, g)
        hands += int(g.hands_ended.sum())
    return hands


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
        hands = _play_alike(ref, g, 30)
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


def _recorder(games_of, calls):
    """A step-API agent object playing the greedy bot's moves (make_agent("greedy") delegated to, so the env seats
    this object rather than the kernel bot), recording each decision into ``calls`` as ``(hand seed, dealer, seat,
    action, observation, its public log then)``."""
    greedy = make_agent("greedy")

    class Recorder(Agent):
        def act(self, observation):
            a = greedy.act(observation)
            st = games_of().states[0]
            calls.append((int(games_of().hand_seed[0]), int(st["table"]["dealer"]), observation.seat, a, observation,
                          list(observation.log)))
            return a

    return Recorder()


@pytest.mark.parametrize("rules", RULES)
def test_an_agent_opponent_sees_what_game_observe_shows_and_plays_as_its_kernel_bot(rules, batched_warm):
    """A step-API agent object as the three opponents of MahjongEnv: each decision's Observation is
    Game.observe()'s in a Game replaying every decision of the hand (the state field by field, the mask, the
    seat's public log so far; once the hand is over, the whole log with the hand's points); an agent playing the
    greedy bot's moves gives the episodes of opponents="greedy" inside the kernel."""
    from caishen.envs.gym_env import MahjongEnv

    calls: list = []
    kernel = MahjongEnv(rules=rules, seat=1, opponents="greedy")
    env = MahjongEnv(rules=rules, seat=1, opponents=_recorder(lambda: env.games, calls))
    rng, hands = np.random.default_rng(3), 0
    obs, info = env.reset(seed=7)
    kobs, _ = kernel.reset(seed=7)
    while hands < 4:
        np.testing.assert_array_equal(obs, kobs)
        a = int(rng.choice(np.flatnonzero(env.action_masks())))
        st = env.games.states[0]
        calls.append((int(env.games.hand_seed[0]), int(st["table"]["dealer"]), env.seat, a, None, None))
        obs, r, term, _, info = env.step(a)
        kobs, kr, kterm, _, _ = kernel.step(a)
        assert (r, term) == (kr, kterm)
        if term:
            hands += 1
            obs, info = env.reset()
            kobs, _ = kernel.reset()
    checked = ends = i = 0
    while i < len(calls):
        hand = [c for c in calls[i:] if c[0] == calls[i][0]]
        assert calls[i:i + len(hand)] == hand  # a hand's decisions are consecutive
        i += len(hand)
        game = Game(rules).reset(seed=hand[0][0], dealer=hand[0][1])
        logs = {}
        for _, _, seat, a, seen, seen_log in hand:
            assert game.current_player == seat
            if seen is not None:
                want = game.observe()
                for f in STATE_DTYPE.names:
                    np.testing.assert_array_equal(seen.state[f], want.state[f], err_msg=f)
                np.testing.assert_array_equal(seen.mask, want.mask)
                assert seen_log == list(want.log)
                assert (seen.rules_name, seen.seat) == (want.rules_name, want.seat)
                logs[seat] = (seen.log, want.log)
                checked += 1
            game.step(a)
        if game.done:  # the end: the hand's points (Game's log has 0 for points scored after the hand, J-6)
            ends += 1
            res = game.result
            for mine, ref in logs.values():
                assert list(mine[:-1]) == list(ref[:-1]) and mine[-1][0] == ref[-1][0] == "end_hand"
                assert mine[-1][1:] == (tuple(res[f"score_{p}"] for p in range(4)), ref[-1][2])
    assert checked >= 100 and ends >= 4


class _First(Agent):
    """A user's step-API agent: the lowest legal action (as python:open_seat_replay:first on masks)."""

    def act(self, observation):
        return int(np.flatnonzero(observation.mask)[0])


@pytest.mark.parametrize("rules", RULES)
def test_an_agent_object_opponent_plays_as_a_python_seat_answering_the_same(rules, batched_warm):
    """A step-API agent object among the opponents of a batch (alone, beside kernel bots, in every seat but a drawn
    learning seat, over a match) gives step by step the episodes of a python: seat that answers the same on masks."""
    first = "python:open_seat_replay:first"
    agent = _First()
    for kw_ref, kw_agent in (({"opponents": first}, {"opponents": agent}),
                             ({"opponents": f"greedy,{first},random"}, {"opponents": ["greedy", agent, "random"]}),
                             ({"opponents": first, "seat": "random", "episode": "match", "match_len": 2},
                              {"opponents": agent, "seat": "random", "episode": "match", "match_len": 2})):
        ref = BatchedGames(4, rules, mode="versus", **kw_ref).reset(3)
        g = BatchedGames(4, rules, mode="versus", **kw_agent).reset(3)
        assert _play_alike(ref, g, 25) >= 3
        assert sum(x.decisions for x in g._open.seats) >= 25


@pytest.mark.parametrize("answer,msg", [("illegal", r"illegal action '.*' \(\d+\) \(game \d of the batch .*; legal: "),
                                        ("bool", r"act returned True .*bools and floats are not actions"),
                                        ("boom", "act raised RuntimeError: boom")])
def test_a_failing_agent_opponent_is_named_in_one_line(answer, msg, batched_warm):
    """A step-API agent opponent that answers an illegal action, a bool or raises: a SeatError in one line naming
    the agent's class, the game of the batch, its seat and phase."""
    class Bad(Agent):
        def act(self, observation):
            if answer == "boom":
                raise RuntimeError("boom")
            return True if answer == "bool" else int(np.flatnonzero(observation.mask == 0)[0])

    env = gymnasium.make_vec(env_id("kaihua"), num_envs=2, opponents=["greedy", Bad(), "greedy"])
    with pytest.raises(SeatError, match=msg) as e:
        env.reset(seed=1)
        for _ in range(20):
            env.step(env.unwrapped.action_masks().argmax(1))
    assert "\n" not in str(e.value) and str(e.value).startswith("agent Bad: ") and ", seat 2, phase " in str(e.value)
