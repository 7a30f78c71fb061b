"""``caishen score``: the shared scoring vectors through the command line,
rule options, and malformed input lines (sim.vectors, sim.cli)."""

from __future__ import annotations

import io
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from sim import vectors

REPO = Path(__file__).parents[1]
VECTORS = Path(__file__).parents[2] / "shared" / "vectors"
KAIHUA = VECTORS / "kaihua.jsonl"

needs_vectors = pytest.mark.skipif(
    not KAIHUA.is_file(), reason=f"shared scoring vectors not found at {KAIHUA} (../shared next to the repo)"
)


def caishen(*args: str, stdin: str | None = None) -> subprocess.CompletedProcess:
    """Run ``python -m sim ARGS`` in a subprocess (the installed command's code path)."""
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join([str(REPO), env.get("PYTHONPATH", "")])
    return subprocess.run(
        [sys.executable, "-m", "sim", *args], input=stdin, capture_output=True, text=True, env=env, timeout=300
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
        variant("nochain", chain=...),  # missing key
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
    assert [e["id"] for e in errors] == [None, "badtile", "nochain", "badmeld", "fifteen", "badseat", None, "norules"]
    for e, word in zip(errors, ["JSON", "0s", "chain", "chi", "14 tiles", "winner 7", "object", "rules"]):
        assert set(e) == {"line", "id", "error"} and word in e["error"], e


def test_expect_key_is_ignored():
    c = json.loads(variant("x"))
    c["expect"] = {"win": False, "scores": [9, 9, 9, 9]}
    proc = caishen("score", stdin=json.dumps(c) + "\n")
    assert proc.returncode == 0 and lines_of(proc)[0]["scores"] == [-4, 8, -2, -2]


def test_unavailable_rule_set_is_a_per_line_error(monkeypatch):
    monkeypatch.setitem(vectors.RULE_SETS, "jiating", "sim.rules.no_such_rule_set")
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
