"""``caishen score``: the shared scoring vectors through the command line,
rule options, and malformed input lines (caishen.sim.rules.vectors, caishen.cli)."""

from __future__ import annotations

import dataclasses
import io
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

import shared_data
from caishen.sim.rules import vectors

REPO = Path(__file__).parents[1]
VECTORS = shared_data.path("vectors")  # $CAISHEN_SHARED or ../shared
KAIHUA = VECTORS / "kaihua.jsonl"

needs_vectors = pytest.mark.skipif(
    not KAIHUA.is_file(), reason=shared_data.reason("vectors", "kaihua.jsonl")
)


def caishen(*args: str, stdin: str | None = None) -> subprocess.CompletedProcess:
    """Run ``python -m caishen ARGS`` in a subprocess (the installed command's code path)."""
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join([str(REPO), env.get("PYTHONPATH", "")])
    return subprocess.run(
        [sys.executable, "-m", "caishen", *args], input=stdin, capture_output=True, text=True, env=env, timeout=300
    )


def lines_of(proc: subprocess.CompletedProcess) -> list[dict]:
    return [json.loads(x) for x in proc.stdout.splitlines()]


def kaihua_cases() -> list[dict]:
    if not KAIHUA.is_file():
        return []
    return [json.loads(x) for x in KAIHUA.read_text(encoding="utf-8").splitlines() if x.strip()]


CASES = kaihua_cases()


@pytest.fixture(scope="module")
def cli_results() -> dict[str, dict]:
    proc = caishen("score", str(KAIHUA))
    assert proc.returncode == 0, proc.stderr
    out = lines_of(proc)
    assert [r["id"] for r in out] == [c["id"] for c in CASES]
    return {r["id"]: r for r in out}


@needs_vectors
@pytest.mark.parametrize("case", CASES, ids=[c["id"] for c in CASES])
def test_kaihua_vector_through_cli(case, cli_results):
    got, expect = cli_results[case["id"]], case["expect"]
    assert got["win"] == expect["win"]
    assert got["scores"] == expect["scores"]
    assert sum(got["scores"]) == 0  # K-8.5
    if "exponent" in expect:
        assert got["exponent"] == expect["exponent"]


@needs_vectors
@pytest.mark.parametrize("case", CASES, ids=[c["id"] for c in CASES])
def test_kaihua_vector_flags(case, cli_results):
    # informative in the vectors, but ours should agree with the hand-worked ones
    if case["expect"]["win"]:
        assert cli_results[case["id"]]["flags"] == sorted(case["expect"]["flags"])


@needs_vectors
def test_stdin_and_dash_read_the_same(cli_results):
    text = KAIHUA.read_text(encoding="utf-8")
    for args in (("score",), ("score", "-")):
        proc = caishen(*args, stdin=text)
        assert proc.returncode == 0, proc.stderr
        assert {r["id"]: r for r in lines_of(proc)} == cli_results


@needs_vectors
def test_rules_options_change_the_outcome(cli_results):
    text = KAIHUA.read_text(encoding="utf-8")
    proc = caishen("score", "-", "--rules-option", "max_exponent=1", "--rules-option", "discard_win=false",
                   stdin=text)
    assert proc.returncode == 0, proc.stderr
    got = {r["id"]: r for r in lines_of(proc)}
    # K-6.6 cap: K07 (E 3) is capped to 1
    assert cli_results["K07"]["exponent"] == 3
    assert got["K07"]["exponent"] == 1 and got["K07"]["scores"] == [-8, 16, -4, -4]
    # K-7.1 discard_win=false: the discard wins K06, K16 are no wins; self-draws still win
    for cid in ("K06", "K16"):
        assert cli_results[cid]["win"] and not got[cid]["win"] and got[cid]["scores"] == [0, 0, 0, 0]
    assert got["K01"] == cli_results["K01"]
    # K-9.3 failed_piao_factor=1 disables the failed 飘 payment of K18
    proc = caishen("score", "--rules-option", "failed_piao_factor=1", stdin=text)
    got = {r["id"]: r for r in lines_of(proc)}
    assert got["K18"]["scores"] == [-4, 8, -2, -2] != cli_results["K18"]["scores"]


def test_bad_rules_option_exits_2_naming_it():
    proc = caishen("score", "--rules-option", "max_exponnt=1", stdin="")
    assert proc.returncode == 2 and "max_exponnt" in proc.stderr and proc.stdout == ""
    proc = caishen("score", "--rules-option", "max_exponent=-3", stdin="")
    assert proc.returncode == 2 and "max_exponent" in proc.stderr
    proc = caishen("score", "--rules-option", "max_exponent", stdin="")
    assert proc.returncode == 2 and "key=value" in proc.stderr


def test_missing_file_exits_2():
    proc = caishen("score", str(REPO / "no_such_vectors.jsonl"))
    assert proc.returncode == 2 and "no_such_vectors.jsonl" in proc.stderr


GOOD = {
    "id": "ok", "rules": "kaihua", "dealer": 0, "winner": 1, "win_type": "self_draw", "discarder": None,
    "concealed": "123m456m789p234s5s", "melds": [], "win_tile": "5s", "replacement_draw": False, "chain": [],
    "piao_circle": [],
}


def variant(cid: str, **change) -> str:
    d = {**GOOD, "id": cid, **change}
    return json.dumps({k: v for k, v in d.items() if v is not ...}, ensure_ascii=False)


def test_malformed_lines_are_reported_and_the_others_scored():
    lines = [
        variant("first"),
        '{"id": "broken", "rules": "kaihua"',  # bad JSON
        variant("badtile", concealed="123m456m789p234s0s"),
        variant("nowintile", win_tile=...),  # missing key (one without a default)
        "",  # blank lines are skipped
        variant("badmeld", melds=[{"type": "chi", "tiles": "123m"}], concealed="456m789p234s5s"),
        variant("fifteen", concealed="123m456m789p234s5s6s"),
        variant("badseat", winner=7),
        "[1, 2, 3]",
        variant("norules", rules=...),
        variant("last", winner=2),
    ]
    proc = caishen("score", stdin="\n".join(lines) + "\n")
    assert proc.returncode == 1
    assert "8 of 10" in proc.stderr
    out = lines_of(proc)
    assert len(out) == 10
    assert out[0] == {"id": "first", "win": True, "exponent": 0, "flags": ["pinghu"], "scores": [-4, 8, -2, -2]}
    assert out[-1]["id"] == "last" and out[-1]["scores"] == [-4, -2, 8, -2]
    errors = out[1:-1]
    assert [e["line"] for e in errors] == [2, 3, 4, 6, 7, 8, 9, 10]
    assert [e["id"] for e in errors] == [None, "badtile", "nowintile", "badmeld", "fifteen", "badseat", None, "norules"]
    for e, word in zip(errors, ["JSON", "0s", "win_tile", "chi", "14 tiles", "winner must be an integer in 0..3, got 7", "object",
                                       "rules"]):
        assert set(e) == {"line", "id", "error"} and word in e["error"], e


# ---------------------------------------------------------------------------
# issue 28 item 5: defaults for the keys a hand typed by hand may omit, and --check
# ---------------------------------------------------------------------------
def test_a_hand_typed_by_hand_needs_only_the_hand_and_scores_as_the_full_case(capsys, monkeypatch):
    """K-8.5 / J-6.1 cases with every defaulted key left out score as the same case written out in full."""
    short = {"rules": "kaihua", "dealer": 0, "winner": 1, "win_type": "self_draw", "concealed": "123m456m789p234s5s",
             "win_tile": "5s"}
    jshort = {"rules": "jiating", "dealer": 0, "winner": 1, "win_type": "discard", "discarder": 2,
              "concealed": "123m456p789s2p", "melds": [{"type": "pong", "tiles": "777z"}], "win_tile": "2p"}
    code, out, _ = score_in_process([json.dumps(short), json.dumps(jshort), variant("full"), jvariant("j")],
                                    capsys=capsys, monkeypatch=monkeypatch)
    assert code == 0
    assert out[0] == {**out[2], "id": "line 1"}
    assert out[1] == {**JGOOD_RESULT, "id": "line 2"}
    # the defaults are the parser's, and the help lists them
    assert vectors.defaults("kaihua") == {"discarder": None, "melds": [], "replacement_draw": False, "chain": [],
                                          "piao_circle": []}
    proc = caishen("score", "--help")
    for key in ("piao_circle=[]", "chain=[]", 'declaration="none"', "streak=0", "replacement_draw=false", '"line N"'):
        assert key in proc.stdout, key
    # a key given is kept (an explicit open 飘 circle changes K18-like payments), a default never overrides it
    case = {**short, "piao_circle": [0]}
    assert vectors.with_defaults(case, 1)["piao_circle"] == [0]
    # a discard win still needs its discarder: the default null is refused there, naming the key
    out = list(vectors.score_lines([json.dumps({**short, "win_type": "discard"})]))
    assert "discarder" in out[0]["error"]


@needs_vectors
def test_check_passes_on_the_shared_vectors():
    for path in sorted(VECTORS.glob("*.jsonl")):
        proc = caishen("score", "--check", str(path))
        assert proc.returncode == 0, (path, proc.stdout, proc.stderr)
        assert proc.stdout == "" and " 0 with 0 mismatching" in proc.stderr and "0 could not be scored" in proc.stderr


def test_check_prints_each_mismatch_and_exits_1():
    right = {**json.loads(variant("right")), "expect": {"win": True, "exponent": 0, "scores": [-4, 8, -2, -2],
                                                       "flags": ["not", "compared"]}}
    wrong = {**json.loads(variant("wrong")), "expect": {"win": True, "exponent": 2, "scores": [-4, 9, -2, -2]}}
    jwrong = {**json.loads(jvariant("jw")), "expect": {"patterns": {"P01": 3}, "P": 2, "no_such_field": 1}}
    plain = json.loads(variant("plain"))
    badexp = {**json.loads(variant("badexp")), "expect": [1]}
    lines = [json.dumps(right), json.dumps(wrong), "", json.dumps(jwrong), json.dumps(plain),
             '{"id": "broken"', json.dumps(badexp)]
    proc = caishen("score", "--check", stdin="\n".join(lines) + "\n")
    assert proc.returncode == 1
    assert lines_of(proc) == [
        {"line": 2, "id": "wrong", "field": "exponent", "expected": 2, "got": 0},
        {"line": 2, "id": "wrong", "field": "scores", "expected": [-4, 9, -2, -2], "got": [-4, 8, -2, -2]},
        {"line": 4, "id": "jw", "field": "patterns", "expected": {"P01": 3}, "got": {"P01": 2}},
        {"line": 4, "id": "jw", "field": "no_such_field", "expected": 1, "got": None},
        {"line": 5, "id": "plain", "unchecked": "no expect key"},
        {"line": 6, "id": None, "error": lines_of(caishen("score", stdin=lines[5] + "\n"))[0]["error"]},
        {"line": 7, "id": "badexp", "error": "key 'expect' must be an object, got list [1]"},
    ]
    assert ("6 case(s): 3 checked, 2 with 4 mismatching field(s), 2 could not be scored, 1 without expect"
            in proc.stderr)
    # agreeing lines only (and lines without expect): exit 0, nothing on stdout but the unchecked note
    proc = caishen("score", "--check", stdin=json.dumps(right) + "\n" + json.dumps(plain) + "\n")
    assert proc.returncode == 0 and lines_of(proc) == [{"line": 2, "id": "plain", "unchecked": "no expect key"}]


def test_expect_key_is_ignored():
    c = json.loads(variant("x"))
    c["expect"] = {"win": False, "scores": [9, 9, 9, 9]}
    proc = caishen("score", stdin=json.dumps(c) + "\n")
    assert proc.returncode == 0 and lines_of(proc)[0]["scores"] == [-4, 8, -2, -2]


def test_unavailable_rule_set_is_a_per_line_error(monkeypatch):
    from caishen.sim.rules import base as rulesets

    missing = dataclasses.replace(rulesets.get("jiating"), score="caishen.sim.rules.no_such_rule_set:score")
    monkeypatch.setitem(rulesets._REGISTRY, "jiating", missing)
    jiating_line = json.dumps({"id": "J", "rules": "jiating"})
    out = list(vectors.score_lines([variant("a"), jiating_line, variant("b")]))
    assert [r["id"] for r in out] == ["a", "J", "b"]
    assert out[0]["win"] and out[2]["win"]
    assert out[1]["line"] == 2 and "jiating" in out[1]["error"] and "not available" in out[1]["error"]
    # an option only another rule set could know is reported up front
    with pytest.raises(ValueError, match="cap"):
        list(vectors.score_lines([variant("a")], {"cap": "100"}))


def test_unknown_rule_set_is_a_per_line_error():
    out = list(vectors.score_lines([variant("a", rules="riichi")]))
    assert out == [{"line": 1, "id": "a", "error": "rules 'riichi': must be one of 'kaihua', 'jiating'"}]


def test_score_file_counts_failures():
    buf = io.StringIO()
    n, failed = vectors.score_file(io.StringIO(variant("a") + "\nnot json\n"), buf)
    assert (n, failed) == (2, 1)
    assert [json.loads(x).get("line") for x in buf.getvalue().splitlines()] == [None, 2]


# ---------------------------------------------------------------------------
# hardening (issue 9): every error is a per-line error, types are named, long values cut
# ---------------------------------------------------------------------------
JIATING = VECTORS / "jiating.jsonl"
JGOOD = {
    "id": "j", "rules": "jiating", "dealer": 0, "streak": 0, "winner": 1, "win_type": "discard", "discarder": 2,
    "concealed": "123m456p789s2p", "melds": [{"type": "pong", "tiles": "777z"}], "win_tile": "2p",
    "replacement_draw": False, "declaration": "none", "first_turn": False, "visible": "",
}
JGOOD_RESULT = {"id": "j", "win": True, "patterns": {"P01": 2}, "P": 2, "G": 0, "scores": [0, 3, -3, 0]}


def jvariant(cid: str, **change) -> str:
    return json.dumps({**JGOOD, "id": cid, **change}, ensure_ascii=False)


def score_in_process(lines: list[str], *options: str, capsys, monkeypatch) -> tuple[int, list[dict], str]:
    """``caishen score`` through caishen.cli.main with ``lines`` on stdin: (exit status, output objects, stderr)."""
    from caishen import cli

    monkeypatch.setattr(sys, "stdin", io.StringIO("\n".join(lines) + "\n"))
    args = ["score"] + [x for o in options for x in ("--rules-option", o)]
    try:
        code = cli.main(args)
    except SystemExit as e:
        code = e.code
    out, err = capsys.readouterr()
    return code, [json.loads(x) for x in out.splitlines()], err


def test_deeply_nested_json_is_a_per_line_error_and_the_later_lines_are_scored(capsys, monkeypatch):
    code, out, err = score_in_process(["[" * 5000, "{\"a\": " * 5000, jvariant("j")], capsys=capsys,
                                      monkeypatch=monkeypatch)
    assert code == 1 and "2 of 3" in err
    assert out[0] == {"line": 1, "id": None, "error": "bad JSON: nested too deeply"}
    assert out[1]["line"] == 2 and "JSON" in out[1]["error"]
    assert out[2] == JGOOD_RESULT


def test_jiating_streak_bounds_are_per_line_errors_and_the_later_lines_are_scored(capsys, monkeypatch):
    # 2**62 overflowed silently into nonsense scores, 2**64 gave a numba typing traceback (issue 9)
    code, out, _ = score_in_process([jvariant("a", streak=2**62), jvariant("b", streak=2**64), jvariant("j")],
                                    capsys=capsys, monkeypatch=monkeypatch)
    assert code == 1
    for e, cid in zip(out[:2], "ab"):
        assert e["id"] == cid and e["error"].startswith("streak must be an integer in 0..1000000, got ")
    assert out[2] == JGOOD_RESULT


@pytest.mark.parametrize("change, key", [
    ({"rules": ["jiating"]}, "'rules' must be a string, got list"),
    ({"win_type": ["discard"]}, "'win_type' must be a string, got list"),
    ({"melds": [{"type": ["pong"], "tiles": "777z"}]}, "'melds[0].type' must be a string, got list"),
    ({"melds": [{"type": "pong", "tiles": 777}]}, "'melds[0].tiles' must be a string, got int"),
    ({"melds": ["777z"]}, "'melds[0]' must be an object"),
    ({"melds": {"type": "pong"}}, "'melds' must be a list of melds, got dict"),
    ({"declaration": {"hard": True}}, "'declaration' must be a string, got dict"),
    ({"dealer": True}, "'dealer' must be an integer, got bool"),
    ({"winner": 1.0}, "'winner' must be an integer, got float"),
    ({"streak": "2"}, "'streak' must be an integer, got str"),
    ({"discarder": [2]}, "'discarder' must be an integer or null, got list"),
    ({"first_turn": 0}, "'first_turn' must be true or false, got int"),
    ({"dealer_ready_after_first_discard": 1}, "'dealer_ready_after_first_discard' must be true or false, got int"),
    ({"replacement_draw": "false"}, "'replacement_draw' must be true or false, got str"),
    ({"visible": ["2p"]}, "'visible' must be a string, got list"),
    ({"concealed": 123}, "'concealed' must be a string, got int"),
    ({"win_tile": None}, "'win_tile' must be a string, got NoneType"),
    ({"id": ["x"]}, "'id' must be a string, a number or null, got list"),
])
def test_known_keys_of_the_wrong_json_type_are_named(change, key):
    out = list(vectors.score_lines([jvariant("t", **change), jvariant("j")]))
    assert out[0]["line"] == 1 and key in out[0]["error"], out[0]
    assert out[1] == JGOOD_RESULT


def test_P47_dealer_ready_key_and_the_dihu_option_through_caishen_score(capsys, monkeypatch):
    """P47 (issue 22): a dealer's later discard win with dealer_ready_after_first_discard
    scores 地胡 only under --rules-option dihu=dealer_ready_undeclared."""
    line = jvariant("d", winner=0, concealed="234m567p345s99s11z", melds=[], win_tile="9s",
                    dealer_ready_after_first_discard=True)
    code, out, _ = score_in_process([line], capsys=capsys, monkeypatch=monkeypatch)
    assert code == 0 and "P47" not in out[0]["patterns"]
    code, out, _ = score_in_process([line], "dihu=dealer_ready_undeclared", capsys=capsys, monkeypatch=monkeypatch)
    assert code == 0 and out[0]["patterns"]["P47"] == 200 and sum(out[0]["scores"]) == 0


@pytest.mark.parametrize("change, key", [
    ({"chain": ["kong", 3]}, "'chain[1]' must be a string, got int"),
    ({"chain": "piao"}, "'chain' must be a list of strings, got str"),
    ({"piao_circle": [True]}, "'piao_circle[0]' must be an integer, got bool"),
    ({"win_type": ["self_draw"]}, "'win_type' must be a string, got list"),
    ({"rules": {"kaihua": 1}}, "'rules' must be a string, got dict"),
])
def test_known_kaihua_keys_of_the_wrong_json_type_are_named(change, key):
    out = list(vectors.score_lines([variant("t", **change), variant("ok")]))
    assert out[0]["line"] == 1 and key in out[0]["error"], out[0]
    assert out[1]["win"] is True


def test_long_values_are_cut_in_error_messages():
    huge = "1x" * 2_500_000  # 5 MB bad tile string
    lines = [jvariant("t", concealed=huge), variant("k", concealed=huge), jvariant("x" * 10_000, win_tile=5),
             jvariant("v", visible=huge), jvariant("m", melds=[{"type": "pong", "tiles": huge}])]
    out = list(vectors.score_lines(lines))
    assert [e["line"] for e in out] == [1, 2, 3, 4, 5]
    for e in out:
        assert len(e["error"]) <= 500 and len(json.dumps(e)) < 1000, len(e["error"])
    assert "concealed" in out[0]["error"] and "concealed" in out[1]["error"]
    assert "(5,000,000 characters)" in out[0]["error"]  # Jiating: the tile parser's message, cut
    assert "longer than 200 characters" in out[1]["error"]  # Kaihua refuses such a string up front
    assert len(out[2]["id"]) < 300 and out[2]["id"].startswith("xxx") and "'win_tile'" in out[2]["error"]
    assert out[3]["error"].startswith("visible") and out[4]["error"].startswith("melds[0]")


@pytest.mark.parametrize("exc", [
    OverflowError("Python int too large to convert to C long"), RecursionError("maximum recursion depth exceeded"),
    TypeError("unhashable type: 'list'"), ZeroDivisionError("division by zero"), MemoryError(),
])
def test_any_error_inside_a_rule_set_is_a_per_line_error(exc, monkeypatch):
    from caishen.sim.rules.jiating import scoring as jiating  # its RuleSet's score function lives here

    def boom(case, rules=None):
        if case["id"] == "bad":
            raise exc
        return {"id": case["id"], "win": False}

    monkeypatch.setattr(jiating, "score", boom)
    out = list(vectors.score_lines([jvariant("bad"), jvariant("good")]))
    assert out[0]["line"] == 1 and out[0]["id"] == "bad" and out[0]["error"].startswith(type(exc).__name__)
    assert out[1] == {"id": "good", "win": False}


def test_numba_typing_errors_are_per_line_errors(monkeypatch):
    from numba.core.errors import TypingError

    from caishen.sim.rules.jiating import scoring as jiating  # its RuleSet's score function lives here

    def boom(case, rules=None):
        raise TypingError("No implementation of function Function(<built-in function setitem>)")

    monkeypatch.setattr(jiating, "score", boom)
    out = list(vectors.score_lines([jvariant("bad")]))
    assert out[0]["error"].startswith("TypingError: ")


@pytest.mark.parametrize("option, name", [
    ("pattern_points=P01:99999999999999999999999", "pattern_points[P01]"),
    ("streak_step=" + "9" * 40, "streak_step"),
    ("streak_step=100000000000000000000", "streak_step"),
    ("dealer_factor=1000", "dealer_factor"),
    ("max_exponent=100000000000000000000", "max_exponent"),  # Kaihua: the generic bound of caishen.sim.rules.options
    ("two_caishen_min_exponent=inf", "two_caishen_min_exponent"),
    ("pattern_points={" + "{" * 3000, "pattern_points"),
])
def test_rules_option_bounds_exit_2_naming_the_option(option, name, capsys, monkeypatch):
    code, out, err = score_in_process([jvariant("j")], option, capsys=capsys, monkeypatch=monkeypatch)
    assert code == 2 and out == [] and name in err and "Traceback" not in err and len(err) < 500


def test_D11_impossible_jiating_lines_are_per_line_errors(capsys, monkeypatch):
    tianhu_hard = jvariant("th", winner=0, win_type="self_draw", discarder=None, concealed="123m456p789s11z22z",
                           melds=[], win_tile="2z", first_turn=True, declaration="hard")
    hard_pong = jvariant("hp", declaration="hard")
    robbed = jvariant("rk", win_type="robbed_kong")
    code, out, _ = score_in_process([tianhu_hard, hard_pong, robbed, jvariant("j")], capsys=capsys,
                                    monkeypatch=monkeypatch)
    assert code == 1
    assert [e.get("id") for e in out] == ["th", "hp", "rk", "j"]
    assert "first_turn" in out[0]["error"] and "'hard'" in out[0]["error"]
    assert "non-dealer" in out[1]["error"] and "pong" in out[1]["error"]
    assert "robbed_kong" in out[2]["error"]
    assert out[3] == JGOOD_RESULT


def jiating_cases() -> list[dict]:
    if not JIATING.is_file():
        return []
    return [json.loads(x) for x in JIATING.read_text(encoding="utf-8").splitlines() if x.strip()]


@pytest.mark.skipif(not JIATING.is_file(), reason=shared_data.reason("vectors", "jiating.jsonl"))
def test_jiating_vectors_through_cli(capsys, monkeypatch):
    cases = jiating_cases()
    code, out, _ = score_in_process([json.dumps(c) for c in cases], capsys=capsys, monkeypatch=monkeypatch)
    assert code == 0
    for c, got in zip(cases, out):
        assert {k: got[k] for k in c["expect"]} == c["expect"], c["id"]
