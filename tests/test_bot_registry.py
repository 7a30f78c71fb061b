"""The one bot registry (caishen.sim.bots.registry) read by every command: registry x commands (issues 24, 25).

Every spec of the registry is accepted by every command that takes a bot
(``simulate``, ``match``, ``sweep``, the 飘 study, the envs' opponents,
``make_agent``), or refused by all of them with the same reason where it
cannot apply (a 飘 policy under a rule set without a 财神, K-9.1 / J-1.1; a
torch policy in a kernel seat); a bad spec gets the same message everywhere;
a toy bot added with one registry line plays through every command.
"""

from __future__ import annotations

import re

import numpy as np
import pytest

from caishen.sim.bots import registry
from caishen.sim.selfplay.runner import Execution

RULES = ("kaihua", "jiating")
#: a spec that parses but has no kernel (its file is only read when the agent is made)
PPO = "ppo:no/such/model.safetensors"
#: the open seats (python:, exec:): played by the arena host, not by every command; tests/test_seats.py plays them
#: through each command that takes them, and the kernel seats refuse them with one reason
OPEN = {k for k, v in registry.BOTS.items() if v.code == registry.POLICY_HOST}
#: bad specs, each refused by every command with the parser's own message
BAD = ("nope", "mc:0", "mc:4:random", "threshold:x", "threshold", "greedy:1", "tuned:/no/such/weights.json",
       "piao_table:0x1" + "0" * 16)


def _joker(rules: str) -> int:
    from caishen.sim import engine

    name, r = engine.load_rules(rules)
    return int(engine.engine_params(name, r).joker)


def _commands(rules: str) -> dict:
    """Each command's check of one spec (what it runs before it plays anything), by name."""
    from caishen.envs.batched import BatchedGames
    from caishen.envs.gym_env import MahjongEnv
    from caishen.sim.analysis import arena, piao_study, study
    from caishen.sim.selfplay import runner

    decision = "piao" if rules == "kaihua" else "jiating"
    return {
        "simulate": lambda s: runner.make_config(rules, 8, 0, policies=s),
        "match": lambda s: arena.make_config(rules, f"greedy,{s}", 4, 0),
        "sweep_hero": lambda s: study.parse_grid(rules, policies=[s]),
        "sweep_field": lambda s: study.parse_grid(rules, policies=["greedy"], field=s),
        "piao_study": lambda s: piao_study.study_bots(decision, s, None, 0),
        "gym_opponents": lambda s: MahjongEnv(rules, opponents=s),
        "batched_opponents": lambda s: BatchedGames(2, rules, mode="versus", opponents=s),
    }


def _reason(message: str, spec: str) -> str:
    """The message without the part that says where (``" (seat 2)"``, ``" (policy 2 of the match)"``)."""
    return re.sub(r"^policy '([^']*)' \([^)]*\) ", r"policy '\1' ", message)


def _expected(spec: str, rules: str) -> str | None:
    """What a command must say of ``spec`` under ``rules``, from the rules themselves (not the registry)."""
    head = spec.partition(":")[0]
    if head == "ppo":
        return "step API only"
    if head in ("never", "always", "threshold", "piao_table") and _joker(rules) < 0:
        return f"rule set {rules!r} has no 财神"
    return None


@pytest.mark.parametrize("rules", RULES)
def test_every_command_accepts_every_spec_or_refuses_it_with_one_reason_K_9_1_J_1_1(rules, engine_warm, tmp_path):
    from caishen.sim.bots import learned

    net = learned.from_tuned(registry.load_tuned(rules)[0], rules=rules)  # a learned bot of this rule set
    specs = [*registry.examples(rules), PPO, f"learned:{learned.save_learned(tmp_path / 'net.npz', net)}"]
    assert {s.partition(":")[0] for s in specs} == set(registry.BOTS) - OPEN  # every kernel bot of the registry
    for spec in specs:
        want = _expected(spec, rules)
        reasons = {}
        for name, check in _commands(rules).items():
            try:
                check(spec)
            except ValueError as e:
                reasons[name] = _reason(str(e), spec)
            else:
                reasons[name] = None
        if want is None:
            assert all(r is None for r in reasons.values()), (spec, reasons)
        else:
            assert all(r is not None and want in r for r in reasons.values()), (spec, reasons)
            assert len(set(reasons.values())) == 1, (spec, reasons)  # one text everywhere


@pytest.mark.parametrize("spec", BAD)
def test_a_bad_spec_gets_the_parsers_message_from_every_command(spec, engine_warm):
    from caishen.agents import make_agent

    with pytest.raises(ValueError) as e:
        registry.parse(spec)
    want = str(e.value)
    assert want.startswith(("policy ", "unknown policy ", "tuned:")), want
    for rules in RULES:
        for name, check in {**_commands(rules), "make_agent": make_agent}.items():
            with pytest.raises(ValueError) as got:
                check(spec)
            assert str(got.value) == want, (name, rules)


def test_the_cli_says_the_same_for_a_bad_spec(tmp_path, capsys):
    from caishen import cli

    want = None
    for args in (["simulate", "--games", "4", "--out", str(tmp_path / "a"), "--policy", "mc:0"],
                 ["match", "--policies", "greedy,mc:0", "--walls", "2", "--out", str(tmp_path / "b")],
                 ["sweep", "--policy", "greedy,mc:0", "--walls", "2", "--out", str(tmp_path / "c")],
                 ["sweep", "--field", "mc:0", "--walls", "2", "--out", str(tmp_path / "d"), "--policy", "greedy"]):
        with pytest.raises(SystemExit) as e:
            cli.main(args)
        assert e.value.code == 2
        err = capsys.readouterr().err.strip()
        text = err.split(": error: ", 1)[1]
        assert text == "policy 'mc:0': N must be in 1..4096", err
        want = want or text
        assert text == want


def test_spec_normal_form_is_one_bot_everywhere():
    from caishen.sim.analysis import arena, study
    from caishen.sim.selfplay import runner

    assert registry.normalize(" mc:02 ") == "mc:2" == registry.normalize("mc:2")
    assert registry.normalize("threshold:007") == "threshold:7"
    assert registry.normalize("mc:3: tuned:kaihua ") == "mc:3:tuned:kaihua"
    assert runner.make_config("kaihua", 8, 0, policies="mc:02").policies == ("mc:2",) * 4
    assert runner.make_config("kaihua", 8, 0, "mc:02") == runner.make_config("kaihua", 8, 0, "mc:2")
    assert arena.check_policies("greedy, mc:002", "kaihua", None) == ["greedy", "mc:2"]
    assert study.parse_grid("kaihua", policies="mc:02,threshold:030", field="mc:2")["axes"]["policy"] == \
        ["mc:2", "threshold:30"]
    with pytest.raises(ValueError, match="repeated"):  # one bot twice on an axis
        study.parse_grid("kaihua", policies="mc:02,mc:2")


def test_every_bot_command_help_lists_every_bot_on_its_own_line(capsys):
    from caishen import cli
    from caishen.cli.common import OPEN_SEAT_COMMANDS

    for command in (*cli.BOT_COMMANDS, "warmup"):
        with pytest.raises(SystemExit):
            cli.main([command, "--help"])
        out = capsys.readouterr().out
        if command == "warmup":
            assert "bots" in out
            continue
        lines = [line.strip() for line in out.splitlines()]
        for kind in registry.BOTS.values():
            listed = any(line.startswith(f"{kind.usage}: {kind.about[:20]}") for line in lines)
            # the kernel bots these commands play; a step-API-only bot (ppo:PATH) is not theirs to list, the open
            # seats (python:, exec:) only where the command plays through the arena host
            want = kind.code >= 0 or (kind.code == registry.POLICY_HOST and command in OPEN_SEAT_COMMANDS)
            assert listed == want, (command, kind.name)


def test_simulate_help_lists_exactly_the_specs_simulate_accepts(tmp_path, capsys):
    """The bots in ``caishen simulate --help`` are the ones simulate plays under some rule set (a 飘 policy
    only where there is a 财神, K-9.1 / J-1.1): ppo:PATH, which every kernel seat refuses, is not listed."""
    from caishen import cli
    from caishen.sim.bots import learned

    with pytest.raises(SystemExit):
        cli.main(["simulate", "--help"])
    lines = [line.strip() for line in capsys.readouterr().out.splitlines()]
    listed = {k.name for k in registry.BOTS.values() if any(line.startswith(f"{k.usage}: ") for line in lines)}
    accepted = set()
    for rules in RULES:
        net = learned.from_tuned(registry.load_tuned(rules)[0], rules=rules)
        path = learned.save_learned(tmp_path / f"{rules}.npz", net)
        for spec in [*registry.examples(rules), PPO, f"learned:{path}"]:
            try:
                _commands(rules)["simulate"](spec)
            except ValueError:
                continue
            accepted.add(spec.partition(":")[0])
    assert listed - OPEN == accepted and "ppo" not in listed and "learned" in listed and OPEN <= listed


def _without_learned(monkeypatch, tmp_path, rules: str) -> None:
    """Rule set ``rules`` ships no learned bot here, whatever the checkout holds (its learned file is looked
    for in an empty folder); the others keep theirs."""
    from caishen.sim.rules.base import RuleSet

    real = RuleSet.data_path

    def data_path(self, filename):
        if self.name == rules and filename == registry.LEARNED_FILE:
            return tmp_path / rules / filename
        return real(self, filename)

    monkeypatch.setattr(RuleSet, "data_path", data_path)


def test_learned_names_say_which_learned_bots_ship_read_from_the_files(monkeypatch, tmp_path):
    """``learned:jiating`` without a shipped Jiating file says that no learned bot ships for it and lists the
    built-in ones; ``learned:nosuch`` lists them too; a learned file of another rule set is "trained for",
    never "tuned for"; a file that appears in a rule set's folder is a built-in bot from then on."""
    from caishen.sim.bots import learned

    _without_learned(monkeypatch, tmp_path, "jiating")
    assert registry.shipped_learned() == ["kaihua"]  # the shipped sim/rules/kaihua/learned.npz
    with pytest.raises(ValueError) as e:
        registry.parse("learned:jiating")
    msg = str(e.value)
    assert msg.startswith("policy 'learned:jiating': no learned bot ships for rule set 'jiating'; "
                          "built-in learned bots: learned:kaihua"), msg
    assert "no such weights file" not in msg
    with pytest.raises(ValueError, match=r"^policy 'learned:nosuch': no such weights file 'nosuch\.npz'; built-in "
                                         r"learned bots: learned:kaihua"):
        registry.parse("learned:nosuch")
    with pytest.raises(ValueError) as e:
        registry.bot_table("learned:kaihua", "jiating", -1)
    msg = str(e.value)
    assert "was trained for 'kaihua'" in msg and "no learned bot ships for 'jiating'" in msg and "tuned" not in msg
    # a Jiating learned file in the rule set's folder: listed and played by name, read from the file
    (tmp_path / "jiating").mkdir()
    net = learned.from_tuned(registry.load_tuned("jiating")[0], rules="jiating")
    learned.save_learned(tmp_path / "jiating" / registry.LEARNED_FILE, net)
    assert registry.shipped_learned() == ["kaihua", "jiating"]
    assert registry.parse("learned:jiating").spec == "learned:jiating"
    assert registry.bot_table("learned:jiating", "jiating", -1)[0][0, 0] == registry.POLICY_LEARNED
    with pytest.raises(ValueError, match="learned bots: learned:kaihua, learned:jiating"):
        registry.parse("learned:nosuch")
    with pytest.raises(ValueError, match="was trained for 'kaihua' .* learned:jiating plays it"):
        registry.bot_table("learned:kaihua", "jiating", -1)


def test_the_registry_docstring_lists_every_bot():
    rule = "======================  " + "=" * 64
    body = registry.__doc__.split(rule)[2]  # the rows between the header's rule and the closing one
    assert re.findall(r"^``([a-z_]+)[:\[`]", body, re.M) == list(registry.BOTS)


# ---------------------------------------------------------------------------
# a toy bot added with one registry line (module docstring, "How to add a bot")
# ---------------------------------------------------------------------------
def _toy_arg(arg: str, spec: str) -> tuple[int, str]:
    if not re.fullmatch(r"[0-9]{1,2}", arg.strip()):
        raise ValueError(f"policy {spec!r}: the toy's K is 0..99")
    return 0, str(int(arg))


@pytest.fixture
def toy():
    """``toy:K``: a bot that reuses greedy's kernel under its own name and grammar (the one line)."""
    from caishen.sim.bots.policies import POLICY_GREEDY

    registry.register(registry.BotKind("toy", POLICY_GREEDY, "toy:K", "a toy alias of greedy (tests)", _toy_arg,
                                       example="toy:07"))
    yield "toy:07"
    registry.unregister("toy")
    assert "toy" not in registry.BOTS


def test_a_toy_bot_plays_through_every_command(toy, tmp_path, engine_warm):
    from caishen.agents import make_agent
    from caishen.envs.batched import BatchedGames
    from caishen.envs.gym_env import MahjongEnv
    from caishen.sim.analysis import arena, piao_study, study
    from caishen.sim.engine import Game
    from caishen.sim.selfplay import runner, stream
    from caishen.sim.selfplay.batch import play_batch

    assert registry.normalize(toy) == "toy:7" and "toy:K: a toy alias" in "\n".join(registry.help_lines())
    with pytest.raises(ValueError, match="the toy's K"):
        registry.parse("toy:x")
    a = play_batch(40, 5, policies=f"{toy},greedy,{toy},random")
    b = play_batch(40, 5, policies="greedy,greedy,greedy,random")
    for k in a:
        np.testing.assert_array_equal(a[k], b[k], err_msg=k)  # it is greedy under another name
    config = runner.make_config("kaihua", 8, 0, policies=toy, chunk_size=8)
    runner.run(config, tmp_path / "sim", workers=1, progress=False)
    assert len(stream.read_run(tmp_path / "sim")) == 8
    mconf = arena.make_config("kaihua", f"greedy,{toy}", 2, 0, None, 2)
    runner.run(mconf, tmp_path / "match", workers=1, progress=False, chunk_fn=arena.CHUNK_FNS[2])
    assert arena.summarize_match(tmp_path / "match")["policies"] == ["greedy", "toy:7"]
    table = study.sweep("kaihua", tmp_path / "sweep", policies=[toy, "greedy"], walls=8, chunk_size=8,
                        execution=Execution(1, progress=False))
    assert set(table["policy"]) == {"toy:7", "greedy"}
    assert len(piao_study.study_chunk(3, 4, 1, "piao", f"never,{toy},{toy},{toy}")) >= 0
    env = MahjongEnv("kaihua", opponents=toy)
    env.reset(seed=1)
    games = BatchedGames(2, "kaihua", mode="versus", opponents=toy).reset(seeds=[1, 2])
    assert games.bot_actions(toy).shape == (2,)
    game = Game("kaihua").reset(seed=3)
    agent = make_agent(toy)
    assert agent.name == "toy:7" and agent.act(game.observe()) in game.legal_actions()


def test_register_refuses_a_taken_or_odd_name():
    from caishen.sim.bots.policies import POLICY_GREEDY

    for name in ("greedy", "Bad-Name", ""):
        with pytest.raises(ValueError, match="taken or not a lowercase word"):
            registry.register(registry.BotKind(name, POLICY_GREEDY, name, "x"))
    with pytest.raises(ValueError, match="shipped"):
        registry.unregister("mc")


@pytest.mark.parametrize("rules", RULES)
def test_bots_with_data_play_in_the_study_and_the_env_opponent_seats(rules, engine_warm):
    """Issue 25 item 2: the 飘 study and the batched env's kernel seats play the tuned and search bots."""
    from caishen.envs.batched import BatchedGames
    from caishen.sim.analysis import piao_study

    decision = "piao" if rules == "kaihua" else "jiating"
    hero = "never" if rules == "kaihua" else "greedy"
    df = piao_study.study_chunk(2, 3, 1, decision, f"{hero},tuned:{rules},mc:1:greedy,greedy")
    assert np.isfinite(df["diff"]).all()
    games = BatchedGames(3, rules, mode="versus", seat=0, opponents=[f"tuned:{rules}", "mc:1", "greedy"])
    games.reset(seeds=[1, 2, 3])
    assert (games.player == 0).all()  # the kernel's bots acted up to the learner's turn
    acts = games.bot_actions("mc:1")
    assert all(games.masks[i, a] for i, a in enumerate(acts))
