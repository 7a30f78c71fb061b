"""Open seats at the arena host: ``python:MODULE:FN`` and ``exec:CMD`` (caishen.envs.seats, arena_host, exec_seat).

The table (:class:`caishen.envs.arena_host.Table`) must play exactly the hands
``play_batch`` plays (same deals, records, 飘 chances, dealer rotation); a
python: seat gets batches of observations and masks and must return legal
actions; an exec: program speaks the JSON-lines protocol; every failure is
named and leaves nothing half-written, and the run resumes.
"""

from __future__ import annotations

import json
import os
import shutil
import sys
import textwrap
from pathlib import Path

import numpy as np
import pytest

import caishen.envs  # noqa: F401  (registers the arena host)
from caishen.envs import arena_host, seats
from caishen.envs.exec_seat import public_action
from caishen.sim.bots import registry
from caishen.sim.engine import A_KONG_CONCEALED, A_PASS, parse_action

RULES = ("kaihua", "jiating")
RANDOM = "python:caishen.envs.seats:uniform_random"
EXAMPLES = Path(__file__).resolve().parents[1] / "examples" / "bots"


# ---------------------------------------------------------------------------
# the grammar and the registry's hook
# ---------------------------------------------------------------------------
def test_the_grammar_of_open_seats():
    assert registry.parse(" python: mybots.seat : act ").spec == "python:mybots.seat:act"
    assert registry.parse("python:bots/my seat.py:Policy").spec == "python:bots/my seat.py:Policy"
    assert registry.parse("exec:python3  'my bot.py' --fast").spec == "exec:python3 'my bot.py' --fast"
    assert registry.is_open("exec:./bot") and not registry.is_open("greedy")
    for bad, msg in (("python:mod", "give python:MODULE:FN"), ("python:mod:1fn", "give python:MODULE:FN"),
                     ("python:a-b:fn", "neither a module name"), ("exec:", "give the program"),
                     ("exec:bot 'unclosed", "does not parse")):
        with pytest.raises(ValueError, match=msg):
            registry.parse(bad)


def test_a_kernel_table_refuses_an_open_seat_and_sim_alone_names_the_import(monkeypatch):
    with pytest.raises(ValueError, match="open seat played by the arena host, not inside a kernel"):
        registry.bot_table(f"greedy,{RANDOM},greedy,greedy", "kaihua", 31)
    monkeypatch.setattr(registry, "_HOST", [])
    from caishen.sim.selfplay.batch import play_batch

    with pytest.raises(ValueError, match="import caishen.envs"):
        play_batch(4, 1, policies=f"{RANDOM},greedy,greedy,greedy")


@pytest.mark.parametrize("spec,msg", [
    ("python:no_such_module_here:act", "cannot import module 'no_such_module_here'"),
    ("python:caishen.envs.seats:nothing", "has no 'nothing'"),
    ("python:caishen.envs.seats:OBS_KEYS", "neither a function nor an object"),
    ("python:/no/such/file.py:act", "no such file"),
    ("exec:/no/such/program --x", "program '/no/such/program' not found"),
])
def test_an_open_seat_that_cannot_play_is_named_before_anything_runs(spec, msg, tmp_path):
    from caishen.sim.analysis import arena

    with pytest.raises(ValueError, match=msg) as e:
        arena.make_config("kaihua", f"greedy,{spec}", 4, 0)
    assert str(e.value).startswith(f"policy {registry.normalize(spec)!r} (policy 2 of the match)")


# ---------------------------------------------------------------------------
# the table plays play_batch's hands
# ---------------------------------------------------------------------------
class _KernelSeat:
    """A stand-in open seat playing the kernel bot ``spec`` on the table's states (tests the table, not the seat)."""

    def __init__(self, spec, seat, rules):
        from caishen.sim import engine
        from caishen.sim.bots.policies import new_work
        from caishen.sim.tables import hand_tables

        self.seats = (seat,)
        name, r = engine.load_rules(rules)
        self.args = (engine.engine_params(name, r), r.params(), hand_tables(), new_work())
        table, weights = registry.bot_table(spec, name, int(self.args[0].joker))
        self.row = table[0]
        self.bx = registry.make_context(name, r, weights, 0, spec)
        self.batches = []

    def begin(self):
        pass

    def close(self):
        pass

    def decide(self, idx, host):
        self.batches.append(len(idx))
        ep, rp, tabs, work = self.args
        return np.array([registry._seat_action(self.row[0], self.row[1], host.states[i], ep, rp, tabs, work, self.bx)
                         for i in idx], np.int64)


@pytest.mark.parametrize("rules", RULES)
def test_the_table_plays_exactly_play_batchs_hands(rules, monkeypatch, engine_warm):
    """An open seat that plays greedy makes the table's records (every column, the 飘财 chances included)
    equal to play_batch's with greedy in that seat, on the duplicate deals; with fewer slots than hands
    (the slots refill) too."""
    from caishen.sim.selfplay.batch import play_batch

    made = []

    def fake(specs, name, options, joker):
        made.append(_KernelSeat("greedy", 1, rules))
        return made[-1:]

    monkeypatch.setattr(arena_host, "_open_seats", fake)
    want = play_batch(30, 5, rules=rules, policies=f"greedy_safe,greedy,tuned:{rules},greedy", wall_seed=77)
    for slots in (4096, 7):
        monkeypatch.setattr(arena_host, "MAX_SLOTS", slots)
        got = arena_host.play_batch(30, 5, rules=rules, policies=f"greedy_safe,{RANDOM},tuned:{rules},greedy",
                                    wall_seed=77)
        assert sorted(got) == sorted(want)
        for k in want:
            np.testing.assert_array_equal(got[k], want[k], err_msg=f"{k} with {slots} slots")
    assert made[0].batches[0] == 30 and max(made[1].batches) == 7  # every hand's decision in one batch


@pytest.mark.parametrize("rules", RULES)
def test_the_tables_matches_deal_and_rotate_as_the_rules_say_K_3_3_J_2_3_J_2_4(rules, monkeypatch, engine_warm):
    """Without a wall seed the table plays matches of match_len hands: hand h's wall is duplicate_deal(seed,
    h)'s, the first dealer drawn or seat 0 as the rule set says, then the rotation and the streak; the records
    equal hands replayed one action at a time through Game by greedy agents."""
    from caishen.agents import make_agent
    from caishen.sim import engine
    from caishen.sim.selfplay.batch import duplicate_deal

    monkeypatch.setattr(arena_host, "_open_seats", lambda specs, name, options, joker: [_KernelSeat("greedy", 0,
                                                                                                     rules)])
    cols = arena_host.play_batch(10, 9, rules=rules, policies=f"{RANDOM},greedy,greedy,greedy", match_len=4)
    name, r = engine.load_rules(rules)
    ep = engine.engine_params(name, r)
    bots = [make_agent("greedy")] * 4
    dealer, streak = 0, 0
    for h in range(10):
        wall, drawn = duplicate_deal(9, h)
        if h % 4 == 0:
            dealer, streak = (drawn if ep.first_dealer_random else 0), 0
        g = engine.Game(rules).reset(wall=wall, dealer=dealer, match_hand=h % 4, streak=streak)
        while not g.done:
            g.step(bots[g.current_player].act(g.observe()))
        res = g.result
        for col in ("dealer", "match_hand", "streak", "winner", "winners_mask", "turns", "score_0", "score_3"):
            if col in res:  # streak: a rule set whose payments read it (J-2.4)
                assert int(cols[col][h]) == res[col], (h, col)
        assert "streak" in res or rules == "kaihua"
        nxt = res["next_dealer"]
        streak = int(engine._next_streak(dealer, nxt, streak))
        dealer = nxt


# ---------------------------------------------------------------------------
# python: seats
# ---------------------------------------------------------------------------
def _module(tmp_path, body: str, name: str = "seat_mod") -> str:
    path = tmp_path / f"{name}.py"
    path.write_text("import numpy as np\n\n" + textwrap.dedent(body))
    return str(path)


def _loaded(path: str):
    """The module a ``python:PATH.py:FN`` seat loaded from ``path``."""
    import hashlib

    return sys.modules["caishen_seat_" + hashlib.sha1(str(Path(path).resolve()).encode()).hexdigest()[:12]]


def test_a_python_seat_gets_whole_batches_of_its_own_observations(tmp_path, engine_warm):
    """FN(obs, mask) gets one row per game waiting for it, all the table's games at once at first (each game
    waits for one of the two python: seats); obs is the
    deciding seat's (row 0, its own tiles, holds every kind it may discard); a declared layout is given."""
    path = _module(tmp_path, """
        calls = []

        class Flat:
            observation = "flat"
            history = True
            resets = 0

            def reset(self):
                Flat.resets += 1

            def act(self, obs, mask):
                calls.append(("flat", obs.shape, obs.dtype.name, mask.shape, mask.dtype.name))
                return mask.argmax(1)

        def planes(obs, mask):
            turn = mask[:, :34].any(1)
            ok = bool(((obs[turn, 0, :] > 0) | ~mask[turn, :34]).all())
            calls.append(("planes", obs.shape, obs.dtype.name, mask.shape, ok))
            return mask.argmax(1)
    """)
    from caishen.sim.selfplay.batch import play_batch

    play_batch(40, 3, rules="kaihua", policies=f"python:{path}:planes,greedy,python:{path}:Flat,greedy",
               wall_seed=5)
    mod = _loaded(path)
    planes = [c for c in mod.calls if c[0] == "planes"]
    flat = [c for c in mod.calls if c[0] == "flat"]
    assert planes[0][1][0] + flat[0][1][0] >= 36  # at first every game waits for seat 0 or seat 2: one batch each
    assert all(c[1][1:] == (76, 34) and c[2] == "uint8" for c in planes)
    assert all(c[3][1] == 145 and c[4] is True for c in planes)
    assert all(c[1][1:] == (2599,) and c[2] == "float32" and c[4] == "bool" for c in flat)
    assert mod.Flat.resets == 1


@pytest.mark.parametrize("body,msg", [
    ("return np.full(len(mask), 999)", r"illegal action 999 \(outside 0..144\)"),
    ("return np.zeros(len(mask) + 1, np.int64)", r"returned shape \(\d+,\) for a batch of \d+ decisions"),
    ("return mask.argmax(1).astype(float)", "returned float64 actions"),
    ("return mask.argmax(1) > 0", "returned bool actions"),
    ("raise RuntimeError('boom')", "act raised RuntimeError: boom"),
    ("return np.where(mask[:, 142], 0, 142)", r"illegal action '(pass|discard 1m)'"),
])
def test_a_failing_python_seat_is_named_and_nothing_is_written(tmp_path, body, msg, engine_warm):
    from caishen.sim.analysis import arena

    path = _module(tmp_path, f"def act(obs, mask):\n    {body}\n", name=f"bad{abs(hash(body))}")
    spec = f"python:{path}:act"
    with pytest.raises(seats.SeatError, match=msg) as e:
        arena.play_match("kaihua", f"{spec},greedy", 6, 1, tmp_path / "m", workers=1, progress=False)
    assert str(e.value).startswith(f"policy {spec!r}: ") and "hand " in str(e.value)
    assert not list((tmp_path / "m" / "chunks").glob("*.parquet"))


def test_a_failed_run_resumes_where_it_stopped(tmp_path, engine_warm):
    """A seat that fails in the second chunk: the first chunk stays, the rerun plays only the rest, and the rows
    equal an uninterrupted run's.  (The seat fails once the tables it may play, counted down in a file, run
    out: the runner's warm-up plays 2 tables, each chunk 2, one per seating.)"""
    from caishen.sim.analysis import arena
    from caishen.sim.selfplay import stream

    budget = tmp_path / "tables"
    path = _module(tmp_path, f"""
        from pathlib import Path

        class Flaky:
            broken = False

            def reset(self):
                p = Path({str(budget)!r})
                left = int(p.read_text()) if p.exists() else 10**9
                Flaky.broken = left <= 0
                if p.exists():
                    p.write_text(str(left - 1))

            def act(self, obs, mask):
                if Flaky.broken:
                    raise RuntimeError("flaky")
                return mask.argmax(1)
    """, name="flaky")
    spec = f"python:{path}:Flaky"
    arena.play_match("kaihua", f"{spec},greedy", 8, 2, tmp_path / "ok", chunk_walls=4, workers=1, progress=False)
    budget.write_text("4")
    with pytest.raises(seats.SeatError, match="flaky"):
        arena.play_match("kaihua", f"{spec},greedy", 8, 2, tmp_path / "m", chunk_walls=4, workers=1, progress=False)
    assert len(list((tmp_path / "m" / "chunks").glob("*.parquet"))) == 1
    budget.unlink()
    res, _ = arena.play_match("kaihua", f"{spec},greedy", 8, 2, tmp_path / "m", chunk_walls=4, workers=1,
                              progress=False)
    assert res.chunks_run == 1 and res.chunks_skipped == 1
    assert stream.read_run(tmp_path / "m").equals(stream.read_run(tmp_path / "ok"))


# ---------------------------------------------------------------------------
# exec: seats
# ---------------------------------------------------------------------------
def test_what_a_seat_sees_of_the_others_actions_K_5_3():
    assert public_action(1, A_PASS, 1) == "pass" and public_action(1, A_PASS, 2) is None
    assert public_action(2, A_KONG_CONCEALED + 4, 2) == "kong_concealed 5m"
    assert public_action(2, A_KONG_CONCEALED + 4, 0) == "kong_concealed"
    assert public_action(3, parse_action("discard 7p"), 0) == "discard 7p"
    assert public_action(3, parse_action("hard_decline"), 0) is None


@pytest.mark.parametrize("rules", RULES)
def test_the_example_bots_play_a_match(rules, tmp_path, engine_warm):
    """The shipped Python exec: program and python: seat play a match with greedy on both rule sets."""
    from caishen.sim.analysis import arena
    from caishen.sim.selfplay import stream

    specs = [f"exec:{sys.executable} {EXAMPLES / 'seat_bot.py'}", f"python:{EXAMPLES / 'python_seat.py'}:Policy",
             "greedy"]
    _, summ = arena.play_match(rules, specs, 3, 1, tmp_path / "m", workers=1, progress=False)
    assert summ["walls_done"] == 3 and summ["seatings"] == 24
    assert len(stream.read_run(tmp_path / "m")) == 3 * 24


def test_the_sh_awk_example_plays_as_the_same_rule_in_python(tmp_path, engine_warm):
    """examples/bots/first_legal.sh (sh + awk: win, else pass, else the first legal action) as an exec: seat
    plays exactly the hands of the same rule as a python: seat: the protocol's requests carry the legal
    actions in the engine's order and its answers land as the actions meant (skipped without sh or awk)."""
    if not (shutil.which("sh") and shutil.which("awk")):
        pytest.skip("sh or awk is not installed")
    from caishen.sim.selfplay.batch import play_batch

    path = _module(tmp_path, """
        def act(obs, mask):
            return np.where(mask[:, 141], 141, np.where(mask[:, 142], 142, mask.argmax(1)))
    """, name="first_legal")
    for rules in RULES:
        awk = play_batch(20, 1, rules=rules, policies=f"greedy,exec:sh {EXAMPLES / 'first_legal.sh'},greedy,greedy",
                         wall_seed=2)
        py = play_batch(20, 1, rules=rules, policies=f"greedy,python:{path}:act,greedy,greedy", wall_seed=2)
        for k in py:
            np.testing.assert_array_equal(awk[k], py[k], err_msg=f"{rules}: {k}")


_BOT = """
import json, os, sys, time
mode, log = sys.argv[1], sys.argv[2]
open(log + ".pid", "w").write(str(os.getpid()))
out = open(log, "w")
for line in sys.stdin:
    out.write(line); out.flush()
    msg = json.loads(line)
    if msg["type"] == "hello":
        if mode == "noready":
            print(json.dumps({"type": "hi"}), flush=True)
            continue
        print(json.dumps({"type": "ready"}), flush=True)
    elif msg["type"] == "request":
        if mode == "crash":
            sys.stderr.write("bot: giving up\\n"); sys.exit(3)
        if mode == "hang":
            time.sleep(60)
        if mode == "garbage":
            print("hello world", flush=True); continue
        if mode == "list":
            print("[1, 2]", flush=True); continue
        if mode == "illegal":
            print(json.dumps({"action": "kong_exposed" if "kong_exposed" not in msg["legal"] else "pong"}), flush=True)
            continue
        print(json.dumps({"action": "win" if "win" in msg["legal"] else msg["legal"][0]}), flush=True)
"""


def _exec_bot(tmp_path, mode: str) -> tuple[str, Path]:
    script = tmp_path / "bot.py"
    script.write_text(_BOT)
    log = tmp_path / f"log-{mode}"
    return f"exec:{sys.executable} {script} {mode} {log}", log


@pytest.mark.parametrize("mode,msg", [
    ("crash", r"exited before answering; exit status 3; its stderr ends: bot: giving up"),
    ("hang", r"did not answer within 0.5 s"),
    ("garbage", r"wrote 'hello world', not a JSON object"),
    ("list", r"wrote \[1, 2\], not a JSON object"),
    ("illegal", r"answered action '(kong_exposed|pong)', which is not legal here; legal: "),
    ("noready", r"answered \{'type': 'hi'\} to hello"),
])
def test_a_failing_program_is_killed_and_named_and_nothing_is_written(tmp_path, mode, msg, engine_warm):
    from caishen.sim.analysis import arena

    spec, log = _exec_bot(tmp_path, mode)
    seats.set_time_limit(0.5)
    try:
        with pytest.raises(seats.SeatError, match=msg) as e:
            arena.play_match("jiating", f"{spec},greedy", 4, 1, tmp_path / "m", workers=1, progress=False)
    finally:
        seats.set_time_limit(seats.DEFAULT_TIME_LIMIT)
    text = str(e.value)
    assert text.startswith(f"policy {registry.normalize(spec)!r} (seat ") and "rerun the same command" in text
    assert ("hello" in text) if mode == "noready" else ("hand " in text and "phase " in text)
    assert not list((tmp_path / "m" / "chunks").glob("*.parquet"))
    pid = int(Path(str(log) + ".pid").read_text())
    with pytest.raises(ProcessLookupError):
        os.kill(pid, 0)  # killed and reaped


def test_a_program_sees_only_its_own_seat(tmp_path, engine_warm):
    """Every message to an exec: seat is about its own seat or public: its own hand only, no pass or 硬子
    refusal of another seat, no tile of another seat's concealed kong; the games are announced, asked and
    closed in order."""
    from caishen.sim.selfplay.batch import play_batch

    spec, log = _exec_bot(tmp_path, "first")
    cols = play_batch(12, 1, rules="kaihua", policies=f"greedy,{spec},greedy,greedy", wall_seed=3)
    msgs = [json.loads(x) for x in Path(log).read_text().splitlines()]
    assert msgs[0]["type"] == "hello" and msgs[0]["seat"] == 1 and msgs[-1]["type"] == "bye"
    started, ended = set(), set()
    for m in msgs[1:-1]:
        g = m["game"]
        if m["type"] == "start_hand":
            assert m["seat"] == 1 and m["joker"] == "5z" and g not in started
            started.add(g)
            continue
        assert g in started and g not in ended
        if m["type"] == "end_hand":
            ended.add(g)
            assert m["scores"] == [int(cols[f"score_{s}"][g]) for s in range(4)]
        elif m["type"] == "action" and m["seat"] != 1:
            assert m["action"] not in ("pass", "hard_decline") and not m["action"].startswith("kong_concealed ")
        elif m["type"] == "request":
            assert m["seat"] == 1 and set(m) == {"type", "game", "seat", "phase", "hand", "drawn", "melds",
                                                 "discards", "pending", "declarations", "tiles_left", "dealer",
                                                 "legal"}
            assert all(not x.startswith("kong_concealed ") for p in (0, 2, 3) for x in m["melds"][p])
    assert started == ended == set(range(12))


# ---------------------------------------------------------------------------
# every command that takes bot specs
# ---------------------------------------------------------------------------
def test_open_seats_play_in_simulate_match_sweep_and_ladder(tmp_path, capsys, engine_warm):
    from caishen import cli

    assert cli.main(["simulate", "--games", "8", "--chunk-size", "4", "--policy", f"{RANDOM},greedy,greedy,greedy",
                     "--out", str(tmp_path / "s"), "--no-progress"]) == 0
    assert cli.main(["match", "--policies", f"{RANDOM},greedy,random", "--schedule", "1v3", "--walls", "3",
                     "--out", str(tmp_path / "m"), "--time-limit", "2", "--no-progress"]) == 0
    out = capsys.readouterr().out
    assert "schedule 1v3: 8 seatings per wall" in out and "example hands: none" in out
    assert cli.main(["sweep", "--policy", f"{RANDOM},greedy", "--walls", "8", "--chunk-size", "8",
                     "--out", str(tmp_path / "w"), "--no-progress"]) == 0
    assert cli.main(["ladder", "--bots", f"greedy,{RANDOM}", "--walls", "4", "--out", str(tmp_path / "l"),
                     "--bootstrap", "10", "--no-progress"]) == 0
    assert RANDOM in capsys.readouterr().out
    with pytest.raises(SystemExit) as e:
        cli.main(["match", "--policies", "greedy,python:no_such_mod:act", "--walls", "3", "--out",
                  str(tmp_path / "bad")])
    assert e.value.code == 2
    assert "cannot import module 'no_such_mod'" in capsys.readouterr().err


def test_an_open_seat_is_the_piao_checks_field_and_refused_in_its_study(tmp_path, capsys, engine_warm):
    """caishen piao --field: the check's other three seats may be an open seat (the 飘 policies each among three of
    the user's bot); the study's own --policy / --keep-then replay states inside the kernel and refuse one, naming
    --field."""
    from caishen import cli
    from caishen.sim.analysis import piao_answer, study

    out = tmp_path / "p"
    assert cli.main(["piao", "--hands", "60", "--rollouts", "1", "--check-walls", "12", "--field", RANDOM,
                     "--out", str(out), "--no-progress"]) == 0
    ans = json.loads((out / piao_answer.ANSWER_JSON).read_text())
    assert ans["check"]["field"] == RANDOM and f"field {RANDOM}" in " ".join(capsys.readouterr().out.split())
    assert study.read_sweep_json(out / piao_answer.CHECK_DIR)["grid"]["field"] == RANDOM
    assert all(v > 0 for v in ans["check"]["mean_points"].values())  # greedy-based 飘 policies among random bots
    for args in (["--policy", RANDOM], ["--keep-then", RANDOM], ["--adaptive", "2", "--field", "greedy"]):
        with pytest.raises(SystemExit) as e:
            cli.main(["piao", "--out", str(tmp_path / "x"), *args])
        assert e.value.code == 2
        err = capsys.readouterr().err
        assert "--field" in err and len(err.strip().splitlines()) == 1
    with pytest.raises(SystemExit):  # a field that cannot play is named before the study spends its time
        cli.main(["piao", "--out", str(tmp_path / "y"), "--field", "python:no_such_mod:act"])
    assert "cannot import module 'no_such_mod'" in capsys.readouterr().err and not (tmp_path / "y" / "study").exists()


def test_observe_states_is_observe_on_any_engine_states(batched_warm):
    """BatchedGames.observe_states (what a python: seat is given) encodes any states exactly as observe does
    the batch's own, in the batch's layout; a subset and other seats too; bad input is named."""
    from caishen.envs.batched import BatchedGames

    for kw in ({}, {"observation": "flat", "history": True}):
        g = BatchedGames(6, "kaihua", mode="selfplay", **kw).reset(3)
        for _ in range(5):
            g.step(g.bot_actions("greedy"))
        np.testing.assert_array_equal(g.observe_states(g.states.copy(), g.player), g.observe())
        seats = (g.player + 1) % 4
        np.testing.assert_array_equal(g.observe_states(g.states[[4, 1]], seats[[4, 1]]), g.observe(seats)[[4, 1]])
    with pytest.raises(ValueError, match="seats must be 2 seats"):
        g.observe_states(g.states[:2], [0, 4])
    with pytest.raises(ValueError, match="engine states"):
        g.observe_states(np.zeros(2), [0, 1])


def test_open_seats_are_step_api_agents_and_env_opponents(tmp_path, engine_warm):
    """make_agent of an open seat is the host's agent: it plays a Game one decision at a time (a python: seat
    with a batch of one; an exec: program with the game's events), and MahjongEnv takes it as an opponent."""
    from caishen.agents import make_agent
    from caishen.envs.gym_env import MahjongEnv
    from caishen.sim.engine import Game

    spec, log = _exec_bot(tmp_path, "first")
    agents = [make_agent(RANDOM), make_agent(spec), make_agent("greedy"), make_agent(RANDOM)]
    for seed in (1, 2):
        game = Game("kaihua").reset(seed=seed)
        while not game.done:
            a = agents[game.current_player].act(game.observe())
            assert game.legal_mask()[a]
            game.step(a)
    agents[1].close()
    msgs = [json.loads(x) for x in Path(log).read_text().splitlines()]
    assert [m["type"] for m in msgs].count("start_hand") == 2 and [m["game"] for m in msgs
                                                                    if m["type"] == "end_hand"] == [0, 1]
    assert msgs[-1]["type"] == "bye"
    env = MahjongEnv("kaihua", opponents=[make_agent(RANDOM), "greedy", make_agent(RANDOM)])
    obs, _ = env.reset(seed=3)
    done = False
    while not done:
        obs, reward, done, _, _ = env.step(int(np.flatnonzero(env.action_masks())[0]))


def test_a_restarted_exec_program_hears_nothing_queued_for_the_killed_one():
    """After a kill (a failing seat, an env reset after a SeatError), ``begin()`` starts a program that gets
    only its ``hello``: the events queued for the old program are dropped, not sent to the new one."""
    from caishen.envs.exec_seat import ExecSeat

    bot = str(Path(__file__).resolve().parents[1] / "examples" / "bots" / "seat_bot.py")
    x = ExecSeat(f"exec:{sys.executable} {bot}", [sys.executable, bot], 1, "kaihua", -1, 5.0)
    try:
        x.begin()
        x.start_hand(0, 0)  # queued until the next request
        assert len(x._out) == 1
        x.kill()
        x.begin()
        assert x._out == [] and x.proc is not None
    finally:
        x.kill()
