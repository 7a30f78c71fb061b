"""The ``caishen`` command line (caishen.cli): ``--version`` and ``caishen hand`` with and
without a rule set's win gates (``--rules``, Kaihua K-2.4..K-2.6, Jiating J-1.1).

``caishen score`` is tested in tests/test_score_cli.py, ``simulate`` / ``report``
in tests/test_simulate_cli.py.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from caishen.sim import __version__
from caishen import cli

ROOT = Path(__file__).resolve().parents[1]


def main(args, capsys) -> tuple[int, str, str]:
    try:
        code = cli.main(args)
    except SystemExit as e:
        code = e.code
    out, err = capsys.readouterr()
    return code, out, err


def test_version_flag_prints_the_version(capsys):
    code, out, _ = main(["--version"], capsys)
    assert code == 0 and out.strip() == f"caishen {__version__}"


def test_python_m_sim_version_prints_the_version():
    env = dict(os.environ, PYTHONPATH=str(ROOT) + os.pathsep + os.environ.get("PYTHONPATH", ""))
    p = subprocess.run([sys.executable, "-m", "caishen", "--version"], capture_output=True, text=True, env=env,
                       timeout=120)
    assert p.returncode == 0 and p.stdout.strip() == f"caishen {__version__}"


def hand_json(capsys, *args) -> dict:
    code, out, err = main(["hand", *args, "--json"], capsys)
    assert code == 0, err
    return json.loads(out)


def test_hand_default_is_shape_only_and_says_so(capsys):
    info = hand_json(capsys, "123m456p789s11z5z5z", "--joker", "5z")
    assert info["rules"] is None and "5z" in info["waits"] and len(info["waits"]) == 34
    code, out, _ = main(["hand", "123m456p789s11z5z5z", "--joker", "5z"], capsys)
    assert code == 0 and "(shape only)" in out


def test_hand_rules_kaihua_applies_K_2_5_baotou_draws_a_caishen(capsys):
    info = hand_json(capsys, "123m456p789s11z5z5z", "--rules", "kaihua")
    assert info["rules"] == "kaihua" and info["joker"] == "5z"
    assert "5z" in info["waits_shape"] and "5z" not in info["waits"] and len(info["waits"]) == 33
    code, out, _ = main(["hand", "123m456p789s11z5z5z", "--rules", "kaihua"], capsys)
    assert "(kaihua win gates, self-draw)" in out and "by shape:" in out


def test_hand_rules_kaihua_applies_K_2_4_three_caishen(capsys):
    info = hand_json(capsys, "123m456p789s1z5z5z5z", "--joker", "5z", "--rules", "kaihua")
    assert info["waits_shape"] and info["waits"] == []


def test_hand_rules_kaihua_applies_K_2_6_two_caishen_need_an_exponent(capsys):
    # 123m 456p 789s 1z 3z + two 财神: 1z or 3z completes a 平胡 holding two 财神 (exponent 0 < 1, K-2.6);
    # a third 财神 never wins (K-2.4)
    info = hand_json(capsys, "123m456p789s13z5z5z", "--rules", "kaihua")
    assert info["waits_shape"] == ["1z", "3z", "5z"] and info["waits"] == []
    # one 财神: 1z and 3z win; the drawn 财神 makes a 平胡 with two (K-2.6)
    info = hand_json(capsys, "123m456p789s1z3z3z5z", "--rules", "kaihua")
    assert info["waits_shape"] == ["1z", "3z", "5z"] and info["waits"] == ["1z", "3z"]


def test_hand_rules_kaihua_applies_K_2_5_to_qizi_baotou(capsys):
    # 七子爆头 shape (six pairs + a 财神): a drawn 财神 cannot win (K-2.5, decision D3 of kaihua)
    info = hand_json(capsys, "11m22m33p44p55s66s5z", "--rules", "kaihua")
    assert len(info["waits_shape"]) == 34 and info["waits"] == [w for w in info["waits_shape"] if w != "5z"]


@pytest.mark.parametrize("hand,rule", [("123m456p789s23s55z", "K-2.4"), ("11m22m33p44p55s66s5z", "K-2.5"),
                                       ("123m456p789s1z3z3z5z", "K-2.6")])
def test_hand_names_the_caishen_and_why_it_is_no_wait(hand, rule, capsys):
    """Issue 45 (first hour): `caishen hand 123m456p789s23s55z --rules kaihua` listed 5z among the effective
    tiles with no word on why the waits drop it.  The 财神 lowers the shanten by shape (it is an effective
    tile: it stands for any tile), but drawing it is no win (K-2.4 three 财神, K-2.5 a 财神 drawn to a 爆头
    shape, K-2.6 two 财神 without an exponent): the output names it and the rule, in lines of <= 100 columns."""
    from caishen.sim.termtext import display_width

    info = hand_json(capsys, hand, "--rules", "kaihua")
    assert "5z" not in info["waits"] and rule in info["not_waits"]["5z"] and list(info["not_waits"]) == ["5z"]
    code, out, _ = main(["hand", hand, "--rules", "kaihua"], capsys)
    text = " ".join(out.split())
    assert code == 0 and "not a wait under kaihua: 5z (the 财神): " in text and f"({rule})" in text.replace(
        "(the forced 飘, K-2.4)", "(K-2.4)").replace("(the forced 飘, K-2.5)", "(K-2.5)")
    assert "5z (the 财神) lowers the shanten by shape" in text and "under kaihua drawing it is no win" in text
    assert max(display_width(x) for x in out.splitlines()) <= 100, out


def test_hand_complete_by_shape_says_why_it_is_no_win(capsys):
    code, out, _ = main(["hand", "123m456p789s11z5z5z5z", "--rules", "kaihua"], capsys)
    text = " ".join(out.split())
    assert "complete: no (kaihua win gates, self-draw) why: 3 财神 among the tiles" in text and "K-2.4" in text


def test_hand_rules_jiating_drops_a_kind_held_four_times(capsys):
    # 1111m 234p 567s 789s: by shape it waits on a fifth 1m (unless caishen.sim.hand already drops it); no win exists
    info = hand_json(capsys, "1111m234p567s789s", "--rules", "jiating")
    assert info["waits"] == [] and info["joker"] is None
    info = hand_json(capsys, "123m456p789s78s22z", "--rules", "jiating")
    assert info["waits"] == ["6s", "9s"]


def test_hand_rules_jiating_with_a_joker_is_an_error(capsys):
    code, _, err = main(["hand", "123m456p789s23s5z5z", "--rules", "jiating", "--joker", "5z"], capsys)
    assert code == 2 and "jiating has no joker (J-1.1)" in err


def test_hand_rules_kaihua_with_another_joker_is_an_error(capsys):
    code, _, err = main(["hand", "123m456p789s23s5z5z", "--rules", "kaihua", "--joker", "7z"], capsys)
    assert code == 2 and "5z (K-2.1)" in err


def test_hand_rules_needs_a_hand_without_melds(capsys):
    code, _, err = main(["hand", "23s5z5z", "--rules", "kaihua"], capsys)
    assert code == 2 and "13 or 14 tiles" in err


def test_hand_rules_complete_14_tiles(capsys):
    # 14 tiles with three 财神: complete by shape, never a win (K-2.4)
    info = hand_json(capsys, "123m456p789s11z5z5z5z", "--rules", "kaihua")
    assert info["win_shape"] is True and info["win"] is False
    info = hand_json(capsys, "123m456p789s11z222z", "--rules", "jiating")
    assert info["win"] is True
    code, out, _ = main(["hand", "123m456p789s11z5z5z5z", "--rules", "kaihua"], capsys)
    assert "complete:  no  (kaihua win gates, self-draw)" in out


def test_hand_unknown_rules_exit_2(capsys):
    code, _, err = main(["hand", "123m456p789s23s5z5z", "--rules", "riichi"], capsys)
    assert code == 2 and "riichi" in err


@pytest.mark.parametrize("hand", ["123m456p789s23s5z5z", "19m19p19s1234567z", "123m456p789s13z5z5z",
                                  "123m456p789s1z3z3z5z", "11m22m33p44p55s66s5z", "1112345678999m"])
def test_hand_rules_lists_only_legal_self_draws(hand, capsys):
    from caishen.sim.rules import vectors

    scorer = vectors.Scorer()
    for rules, joker in (("kaihua", ["--joker", "5z"]), ("jiating", [])):
        if rules == "jiating" and "5z" in hand:
            continue
        info = hand_json(capsys, hand, "--rules", rules)
        shape = hand_json(capsys, hand, *joker)["waits"]
        for w in shape:
            legal = scorer.score(vectors.plain_case(rules, info["hand"], w))["win"]
            assert legal == (w in info["waits"]), (rules, w)


def test_error_messages_are_cut(capsys):
    code, _, err = main(["hand", "1x" * 50_000], capsys)
    assert code == 2 and "bad tile string" in err and len(err) < 600
    code, _, err = main(["hand", "123m", "--joker", "1z" * 5000], capsys)
    assert code == 2 and "--joker" in err and len(err) < 600


@pytest.mark.parametrize("command", ["sweep", "match", "ladder"])
def test_help_says_95_percent_once(command, capsys):
    """Issue 28: argparse formats help lines, not descriptions; a description printed "95%%"."""
    code, out, _ = main([command, "--help"], capsys)
    assert code == 0 and "95% CI" in out and "%%" not in out


def test_an_option_given_twice_is_an_error_not_the_last_one(tmp_path, capsys):
    from caishen.cli import main
    from caishen.sim.rules.options import parse_option_strings

    with pytest.raises(ValueError, match="given twice"):
        parse_option_strings(["failed_piao_factor=1", "failed_piao_factor=2"])
    with pytest.raises(SystemExit) as e:
        main(["simulate", "--rules", "kaihua", "--games", "10", "--seed", "1", "--out", str(tmp_path / "r"),
              "--option", "failed_piao_factor=1", "--option", "failed_piao_factor=2", "--workers", "1"])
    err = capsys.readouterr().err
    assert e.value.code == 2 and "given twice" in err and "Traceback" not in err
    assert not (tmp_path / "r").exists()


def test_every_command_stub_has_its_full_parsers_help_line():
    """`caishen --help` lists the commands from stubs (nothing imported); each stub's help line is the one its
    full parser declares, so the two cannot drift."""
    from caishen import cli

    full = cli.build_parser()
    stubs = cli.build_parser([])
    actions = {p: next(a for a in p._actions if a.dest == "command") for p in (full, stubs)}
    helps = {p: {c.dest: c.help for c in a._choices_actions} for p, a in actions.items()}
    assert helps[full] == helps[stubs] and set(helps[full]) == set(cli.COMMANDS)


def test_rules_and_help_import_no_numba_pandas_or_kernels():
    """Issue 45: `caishen rules` and `caishen --help` start fast: the parser of one command, no pandas, no
    run machinery (a fresh interpreter, so earlier tests' imports do not count)."""
    import subprocess
    import sys

    code = ("import sys; from caishen.cli import main\n"
            "try:\n    main(sys.argv[1:])\nexcept SystemExit:\n    pass\n"
            "bad = [m for m in ('pandas', 'pyarrow', 'caishen.sim.engine', 'caishen.sim.selfplay', 'matplotlib') "
            "if m in sys.modules]\nprint('LOADED', bad, file=sys.stderr)")
    for argv in (["rules", "K-2.5"], ["--help"]):
        r = subprocess.run([sys.executable, "-c", code, *argv], capture_output=True, text=True, timeout=120)
        assert "LOADED []" in r.stderr, (argv, r.stderr[-500:])


def _help_examples(parser) -> list[tuple[str, str]]:
    """Every ``e.g. X`` of a parser's description and arguments' help: ``(dest, X)``, dest ``"description"`` for
    the parser's own text."""
    import re

    texts = [("description", parser.description or "")]
    texts += [(a.dest, a.help or "") for a in parser._actions]
    return [(dest, m.group(1).rstrip(".,;)")) for dest, text in texts for m in re.finditer(r"e\.g\. (\S+)", text)]


def _doc_commands(word: str) -> list[list[str]]:
    """The ``caishen WORD ...`` lines of the docs pages and the README (a comment after ``#`` dropped)."""
    import shlex

    lines = []
    for page in [ROOT / "README.md", *sorted((ROOT / "docs").rglob("*.md"))]:
        for line in page.read_text(encoding="utf-8").splitlines():
            line = line.strip().lstrip("$ ")
            if line.startswith(f"caishen {word} "):
                lines.append(shlex.split(line.split("#")[0])[1:])
    return lines


def test_hand_and_score_help_and_doc_examples_are_accepted(capsys):
    """Issue 45: every example in `caishen hand --help` and `caishen score --help` (found in the texts), and
    every `caishen hand ...` line of the docs, is accepted by the command."""
    parser = cli.build_parser(["hand", "score"])
    hand_examples = _help_examples(parser._subparsers._group_actions[0].choices["hand"])
    assert {dest for dest, _ in hand_examples} >= {"description", "joker"}
    for dest, example in hand_examples:
        if dest == "description":
            runs = [["hand", example], ["hand", example, "--rules", "kaihua"]]
        elif dest == "joker":
            runs = [["hand", "123m456p789s23s11z", "--joker", example]]
        elif dest == "rules":  # the rule IDs of the win gates it names
            runs = [["rules", example]]
        else:
            raise AssertionError(f"a hand --help example for {dest}: add it to this test")
        for argv in runs:
            code, _, err = main(argv, capsys)
            assert code == 0, (argv, err)
    from caishen.sim.rules.options import parse_option_strings

    score_examples = _help_examples(parser._subparsers._group_actions[0].choices["score"])
    assert [dest for dest, _ in score_examples] == ["rules_option"]
    for _, example in score_examples:
        assert parse_option_strings([example])
    docs = _doc_commands("hand")
    assert docs, "no `caishen hand` line in the docs"
    for argv in docs:
        code, _, err = main(argv, capsys)
        assert code == 0, (argv, err)


def test_termtext_wrap_counts_wide_characters_twice_and_keeps_every_word():
    """Issue 45: the commands' long lines wrap to 100 terminal columns, a 汉字 taking two."""
    from caishen.sim.termtext import display_width, wrap

    assert display_width("飘财 x") == 6 and wrap("short line") == ["short line"]
    line = "  values: " + " ".join(["财神财神"] * 30)  # 9 columns a word
    lines = wrap(line, 40)
    assert all(display_width(x) <= 40 for x in lines) and lines[0].startswith("  values: ")
    assert all(x.startswith("    ") for x in lines[1:]) and " ".join(x.strip() for x in lines) == line.strip()
    assert wrap("x" * 50, 40) == ["x" * 50]  # a word longer than a line stays whole


def test_every_rule_option_example_of_the_help_texts_is_an_option_of_kaihua():
    """Issue 45: the ``--option K=V`` examples of every command's help (e.g. discard_win=false) are
    options Kaihua, the default rule set, accepts."""
    from caishen.sim import engine
    from caishen.sim.rules.options import parse_option_strings

    parser = cli.build_parser()
    seen = 0
    for name, sub in parser._subparsers._group_actions[0].choices.items():
        for dest, example in _help_examples(sub):
            if "=" in example and dest in ("option", "options", "rules_option"):
                engine.load_rules("kaihua", parse_option_strings([example]))  # ValueError for a bad example
                seen += 1
    assert seen >= 5
