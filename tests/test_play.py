"""``caishen play`` for people (issue 45 item 5) and against hostile input (issue 42 kind 10), driven by
scripted stdin: a bare tile discards, help / ?, claims with their tiles, the joker marked, the hint ranked by
shanten then live effective tiles (checked against a slow count), a short summary with the replay on
request; input read in bounded lines, and nothing that is not an action ends the hand."""

from __future__ import annotations

import io
import re
import tracemalloc

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from caishen import cli
from caishen.agents.play import MAX_INPUT, QUIT, action_label, help_text, hint_lines, play
from caishen.sim import hand
from caishen.sim.engine import Game, build_wall
from caishen.sim.tiles import CAISHEN, kind_name, parse_kinds

ZEROS = "0\n" * 400  # the first action, whatever is asked, until the hand ends


def _play(script, rules="kaihua", seed=3, **kw):
    out = io.StringIO()
    trace = play(rules, seat=0, seed=seed, stdin=io.StringIO(script), out=out, **kw)
    return trace, out.getvalue()


def _my_actions(trace):
    return [f["action"]["name"] for f in trace.frames if f["action"] and f["action"]["seat"] == 0]


def test_a_bare_tile_discards_it(engine_warm):
    g = Game("kaihua").reset(seed=3)  # seat 0 deals: its first turn comes first
    tile = kind_name(int(np.flatnonzero(g.state["hands"][0])[-1]))
    trace, text = _play(f"{tile}\n{ZEROS}")
    assert _my_actions(trace)[0] == f"discard {tile}"
    assert "not an action" not in text


def test_a_tile_not_held_says_so_and_a_held_one_not_legal_says_not_legal(engine_warm):
    """Issue 45 (first hour): typing a tile one does not hold answered "discard 4z is not legal now"; it says
    "you hold no 4z", and "not legal now" stays for what is held but not allowed (a kong of a single tile)."""
    g = Game("kaihua").reset(seed=3)  # seat 0 deals: its first turn comes first
    held = g.state["hands"][0]
    absent = kind_name(int(np.flatnonzero(held == 0)[0]))
    single = kind_name(int(np.flatnonzero(held == 1)[0]))
    trace, text = _play(f"{absent}\nkong_concealed {single}\n{ZEROS}")
    assert f"you hold no {absent} (type hint or help)" in text and f"discard {absent} is not legal" not in text
    assert f"kong_concealed {single} is not legal now" in text
    assert _my_actions(trace)  # the hand went on


def test_help_and_question_mark_list_the_commands(engine_warm):
    _, text = _play(f"help\n?\nhint\n{ZEROS}")
    assert text.count("commands:") == 2 and "a bare tile" in text and text.count("hint: shanten") == 1


def test_help_lists_only_the_claims_the_rule_set_has(engine_warm):
    """A rule set without chows (Jiating, J-3.1) is helped without a chow example; one with them (K-4.2) with."""
    for rules, chow in (("kaihua", True), ("jiating", False)):
        text = help_text(Game(rules).reset(seed=0))
        assert ("chow" in text) is chow and "pong 5m5m[5m]" in text, (rules, text)
    _, text = _play(f"help\n{ZEROS}", rules="jiating")
    commands = text[text.index("commands:"):text.index("tiles: 1m")]
    assert "pong 5m5m[5m]" in commands and "chow" not in commands, commands


def test_claims_show_their_tiles_and_the_joker_is_marked(engine_warm):
    claims = re.compile(r"\[\d+\] (chow (\d[mps]|\[\d[mps]\]){3}|pong (\d[mpsz])\3\[\3\]"
                        r"|kong (\d[mpsz]){3}\[\d[mpsz]\])")
    seen_claim = seen_joker = False
    for seed in range(1, 12):
        g = Game("kaihua").reset(seed=seed)
        _, text = _play(ZEROS, seed=seed)
        for m in claims.finditer(text):
            label = m.group(1)
            if label.startswith("chow"):
                assert label.count("[") == 1
            seen_claim = True
        if g.state["hands"][0, CAISHEN]:
            first = next(x for x in text.splitlines() if x.startswith(" D>seat 0:"))
            assert "5z*" in first and " 5z " not in first
            seen_joker = True
        if seen_claim and seen_joker:
            break
    assert seen_claim and seen_joker
    assert "marked 5z*" in text


def test_action_labels_name_the_claimed_tile(engine_warm):
    hands = ["1m2m3m4m6m7m8m9m1p2p3p4p1z", "4m6m1s2s3s4s5s6s7s8s9s2z2z", "3z3z3z4z4z4z6z6z6z7z7z7z1z",
             "5m5m5p5p6p6p7p7p8p8p9p9p2z"]
    g = Game("kaihua").reset(wall=build_wall(hands, draws="5m"))
    assert g.current_player == 0 and "discard 5m" in {action_label(g, a) for a in g.legal_actions()}
    g.step("discard 5m")  # seat 3 holds 5m 5m: a pong; seat 1 holds 4m 6m: a chow
    offered = {}
    while g.phase == "claim":
        offered[g.current_player] = {action_label(g, a) for a in g.legal_actions()}
        g.step("pass")
    assert offered == {1: {"chow 4m[5m]6m", "pass"}, 3: {"pong 5m5m[5m]", "pass"}}


def _slow_live(counts, joker, seen):
    """Live tiles that lower the shanten of ``counts`` (3m+1 tiles): each drawable kind tried, the copies
    neither held nor seen counted (the obvious restatement of hand.effective_tiles)."""
    base = hand.shanten(counts, joker)
    live = 0
    for t in range(34):
        left = 4 - int(counts[t]) - int(seen[t])
        if left <= 0:
            continue
        c = counts.copy()
        c[t] += 1
        if hand.shanten(c, joker) < base:
            live += left
    return live


@pytest.mark.parametrize("rules", ["kaihua", "jiating"])
def test_hint_ranks_discards_by_shanten_then_live_tiles(rules, engine_warm):
    from caishen.agents.play import _visible
    from caishen.sim.termtext import display_width

    for seed in (1, 4, 9):
        g = Game(rules).reset(seed=seed)
        for _ in range(12):  # a few turns in, so that discards and melds are seen
            g.step(g.legal_actions()[-1] if g.phase != "turn" else g.legal_actions()[0])
        while g.phase != "turn":
            g.step(g.legal_actions()[-1])
        seat, joker = g.current_player, int(g._ep.joker)
        counts = np.asarray(g.state["hands"][seat], np.int64)
        seen = _visible(g, seat)
        lines = hint_lines(g, seat)
        assert max(display_width(x) for x in lines) <= 100  # issue 45: a long line wraps, indented
        shown = [re.match(r"  discard (\d[mpsz])\*?: shanten (-?\d+), (\d+) live", x) for x in lines[2:]
                 if not x.startswith("      ")]
        got = [(int(m.group(2)), -int(m.group(3)), parse_kinds(m.group(1))[0]) for m in shown]
        want = []
        for k in np.flatnonzero(counts):
            after = counts.copy()
            after[k] -= 1
            want.append((hand.shanten(after, joker), -_slow_live(after, joker, seen + (np.arange(34) == k)), int(k)))
        assert got == sorted(want)[:len(got)] and len(got) == min(6, len(want))


def test_hint_lists_live_effective_tiles_and_names_the_dead_ones():
    """A newcomer read '2p(0)' as a live tile: the hint lists kinds with copies left, then the all-seen ones."""
    from caishen.agents.play import _effective

    assert _effective([(2, 3), (10, 0), (27, 1)], -1) == "3m(3) 1z(1) (all copies seen: 2p)"
    assert _effective([(10, 0)], -1) == "- (all copies seen: 2p)" and _effective([], -1) == "-"


def test_the_summary_then_the_replay_on_request(engine_warm, capsys, monkeypatch):
    _, short = _play(ZEROS)
    assert "the hand is over" in short and "your score (seat 0):" in short and "scores: seat 0" in short
    assert "the replay:" not in short and "type replay" in short
    trace, _ = _play(ZEROS)
    n = len(_my_actions(trace))  # answers the hand asks for: the same game, answer 0 each time
    _, asked = _play("0\n" * n + "replay\n")
    assert "the replay:" in asked and asked.count("step ") > short.count("step ")
    _, flag = _play("0\n" * n, show_replay=True)
    assert "the replay:" in flag and "type replay" not in flag
    monkeypatch.setattr("sys.stdin", io.StringIO("0\n" * n))
    assert cli.main(["play", "--seed", "3", "--replay"]) == 0
    assert "the replay:" in capsys.readouterr().out


@pytest.mark.parametrize("word", ["quit", "exit", "q", "QUIT", ""])
def test_quit_and_the_end_of_input_leave_the_hand_cleanly(engine_warm, capsys, monkeypatch, word):
    """A newcomer typed quit and was told "not an action"; Ctrl-D gave an error with rc 2 (issue 45): each
    leaves the hand unfinished, says so, and the command exits 0.  ``""``: the input ends."""
    trace, text = _play("0\n" + (f"{word}\n" + ZEROS if word else ""))  # quit on the second prompt, or no more input
    assert trace is None and "is left unfinished at step " in text and "nothing scored" in text
    assert ("the input ended" if not word else "you left") in text and "not an action" not in text
    assert "the hand is over" not in text
    monkeypatch.setattr("sys.stdin", io.StringIO(f"{word}\n" if word else ""))
    assert cli.main(["play", "--seed", "3"]) == 0
    captured = capsys.readouterr()
    assert "left unfinished" in captured.out and "error" not in captured.err


def test_help_lists_quit_and_every_line_fits_100_columns(engine_warm):
    from caishen.sim.termtext import display_width

    for rules in ("kaihua", "jiating"):
        text = help_text(Game(rules).reset(seed=1))
        assert "quit, exit, q" in text and max(display_width(x) for x in text.splitlines()) <= 100


# ---------------------------------------------------------------------------
# issue 42 kind 10: bounded lines, nothing that is not an action ends the hand
# ---------------------------------------------------------------------------
def test_digit_lookalikes_and_odd_text_are_not_actions(engine_warm):
    odd = ["²", "①", "١", "０", "3²", "-1", "1e3", "0x1", "9" * 7, "discard 9z", "discard", "chow", "\x00",
           "🀄", "discard 5z extra", "  ", "*"]
    trace, text = _play("".join(f"{x}\n" for x in odd) + ZEROS)
    assert trace.frames[-1]["phase"] == "done"
    assert text.count("not an action") + text.count("is not legal now") + text.count("you hold no ") == len(odd)
    assert "not an action: '²'" in text and "not an action: '①'" in text


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(st.lists(st.text(max_size=30).filter(lambda s: "\n" not in s and "\r" not in s
                                           and s.strip().lower() not in QUIT), max_size=4))
def test_any_text_is_an_action_or_asked_again(engine_warm, answers):
    trace, _ = _play("".join(f"{x}\n" for x in answers) + ZEROS, seed=5)
    assert trace.frames[-1]["phase"] == "done"


class _Endless(io.TextIOBase):
    """A stdin whose first line is ``n`` characters without a newline (never held: made as asked), then
    ``tail``; records the largest read asked for."""

    def __init__(self, n: int, tail: str):
        self.left, self.tail, self.largest = n, io.StringIO(tail), 0

    def readable(self):
        return True

    def readline(self, size=-1):
        if size is None or size < 0:
            raise AssertionError("an unbounded readline")
        self.largest = max(self.largest, size)
        if self.left:
            k = min(size, self.left)
            self.left -= k
            return "9" * k
        return self.tail.readline(size)


def test_a_300_mb_line_without_newline_is_read_in_bounded_pieces(engine_warm):
    stdin = _Endless(300 * 2**20, "\n" + ZEROS)
    out = io.StringIO()
    tracemalloc.start()
    try:
        trace = play("kaihua", seat=0, seed=3, stdin=stdin, out=out)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert trace.frames[-1]["phase"] == "done" and stdin.left == 0
    assert f"not an action: a line of more than {MAX_INPUT:,} characters" in out.getvalue()
    assert stdin.largest <= 1 << 16 and peak < 64 * 2**20, (stdin.largest, peak)
