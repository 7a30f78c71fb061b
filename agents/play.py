"""``caishen play``: a person plays one seat against bots in the terminal, then sees the score explained.

Each time the person's seat is to act, the table is drawn from that seat's
view (:func:`caishen.sim.analysis.replay.frame_lines`: the other seats'
concealed tiles hidden; the joker, the 财神, marked ``5z*``) and its legal
actions are numbered and shown with their tiles (:func:`action_label`: ``chow
3m4m[5m]``, the bracketed tile the claimed one; ``pong 5m5m[5m]``; ``win on
5m from seat 2``).  The person answers with

- a number, or an action as listed or by its engine name (``chow_mid``,
  ``discard 3m``);
- a bare tile (``4z``): discard it;
- ``hint``: the shanten of the hand and the discards ranked by shanten, then
  by live effective tiles (:func:`hint_lines`; every turn with ``hint=True``);
- ``help`` or ``?``: the commands;
- ``quit``, ``exit`` or ``q`` (or the end of the input: Ctrl-D): leave the hand unfinished (nothing scored).

Anything else is "not an action" and asked again: input is read in bounded
lines (:data:`MAX_INPUT` characters; a longer line, a 300 MB one without a
newline included, is skipped in bounded pieces, never held), and a character
that merely looks like a digit (``²``, ``①``) is no number.  The bots are
the step-API agents (:func:`caishen.agents.make_agent`).  At the end the
hand's score is explained (the rule set's ``words`` hook: each hand type or
pattern, the caps, who pays what) with the person's score; the whole hand
move by move is printed with ``replay=True`` or on typing ``replay`` at the
end, and written as a replay page with ``html``.
"""

from __future__ import annotations

import re
from typing import TextIO

import numpy as np

from caishen.agents import make_agent
from caishen.sim import hand as _hand
from caishen.sim.analysis import replay
from caishen.sim.engine import (
    A_CHOW_HIGH,
    A_CHOW_LOW,
    A_DECLARE,
    A_DISCARD,
    A_HARD_DECLARE,
    A_KONG_ADDED,
    A_KONG_CONCEALED,
    A_KONG_EXPOSED,
    A_PONG,
    A_WIN,
    N_KINDS,
    N_SEATS,
    Game,
    action_name,
    parse_action,
)
from caishen.sim.rules.base import DEFAULT
from caishen.sim.rules.vectors import bounded_lines
from caishen.sim.tiles import MELD_CHOW, MELD_NONE, MELD_PONG, kind_name
from caishen.sim.validate import check_int, short_repr

#: characters of one answer at most; a longer line is skipped in bounded pieces
MAX_INPUT = 1024
#: discards the hint lists, best first
HINT_DISCARDS = 6
#: columns of the action list's lines
LINE_WIDTH = 96
_NUMBER = re.compile(r"[0-9]{1,6}")  # ASCII digits only: '²' and '①' pass str.isdigit but are no number
_TILE = re.compile(r"[1-9][mpsz]")

HELP = """commands:
  a number             the action of that number
  4z                   discard that tile (a bare tile)
  an action            as listed ({listed}) or by name ({named}, discard 3m, win, pass)
  hint                 your shanten and the discards ranked by shanten, then by live effective tiles
  help, ?              this list
  quit, exit, q        leave the hand unfinished (Ctrl-D too)
tiles: 1m..9m characters 万, 1p..9p dots 筒, 1s..9s bamboo 条, 1z..7z 东 南 西 北 白 发 中"""


def help_text(game: Game) -> str:
    """The ``help`` command's list for ``game``'s rule set: its examples name only the claims it has (a chow
    only where the next seat may chow, ``ep.chow``)."""
    from caishen.sim.termtext import wrap_lines

    if int(game._ep.chow):
        text = HELP.format(listed="chow 3m4m[5m], pong 5m5m[5m]", named="chow_mid")
    else:
        text = HELP.format(listed="pong 5m5m[5m], kong 5m5m5m[5m]", named="pong")
    return "\n".join(wrap_lines(text.splitlines(), indent=" " * 23))  # under the commands' text column


#: the answers that leave the hand unfinished
QUIT = ("quit", "exit", "q")


class _Quit(Exception):
    """The person left the hand (:data:`QUIT`, or the input ended); its text says which."""


def _name(k: int, joker: int) -> str:
    return kind_name(k) + ("*" if k == joker else "")


def action_label(game: Game, a: int) -> str:
    """Action ``a`` of the seat to act as a person reads it: with its tiles (the claimed tile in brackets:
    ``chow 3m4m[5m]``, ``pong 5m5m[5m]``, ``kong 5m5m5m[5m]``; ``win on 5m from seat 2``; ``win:
    self-draw 5m``; ``kong_concealed 7z7z7z7z``), the joker marked ``*``."""
    joker = int(game._ep.joker)
    sc = game.state["table"]
    tile, src, drawn = int(sc["tile"]), int(sc["src"]), int(sc["drawn"])
    if A_CHOW_LOW <= a <= A_CHOW_HIGH:
        low = tile - (a - A_CHOW_LOW)
        return "chow " + "".join(f"[{_name(k, joker)}]" if k == tile else _name(k, joker)
                                 for k in (low, low + 1, low + 2))
    if a == A_PONG:
        return f"pong {_name(tile, joker) * 2}[{_name(tile, joker)}]"
    if a == A_KONG_EXPOSED:
        return f"kong {_name(tile, joker) * 3}[{_name(tile, joker)}]"
    if a == A_WIN:
        if game.phase == "rob":
            return f"win: rob seat {src}'s added kong of {_name(tile, joker)}"
        if game.phase == "claim":
            return f"win on {_name(tile, joker)} from seat {src}"
        return f"win: self-draw {_name(drawn, joker)}" if drawn >= 0 else "win: self-draw"
    if A_KONG_CONCEALED <= a < A_KONG_CONCEALED + N_KINDS:
        return f"kong_concealed {_name(a - A_KONG_CONCEALED, joker) * 4}"
    if A_KONG_ADDED <= a < A_KONG_ADDED + N_KINDS:
        return f"kong_added {_name(a - A_KONG_ADDED, joker)} (onto your pong)"
    if A_DISCARD <= a < A_DISCARD + N_KINDS:
        return f"discard {_name(a - A_DISCARD, joker)}"
    if A_DECLARE <= a < A_DECLARE + N_KINDS:
        return f"declare {_name(a - A_DECLARE, joker)} (discard it and declare 架听, a single wait)"
    if a == A_HARD_DECLARE:
        return "hard_declare (硬子: declare ready now; your discards are then automatic)"
    return action_name(a)


def _visible(game: Game, seat: int) -> np.ndarray:
    """``int64[34]``: the tiles ``seat`` can see outside its concealed hand: unclaimed discards, every
    meld (its own concealed kongs included, the others' hidden, K-5.3)."""
    obs = game.observation(seat)
    seen = np.zeros(N_KINDS, np.int64)
    for p in range(N_SEATS):
        for i in range(int(obs["n_discards"][p])):
            if not obs["discard_claimed"][p, i]:
                seen[int(obs["discards"][p, i])] += 1
        for t, k in zip(obs["meld_type"][p], obs["meld_kind"][p]):
            t, k = int(t), int(k)
            if t == MELD_NONE or k < 0:
                continue
            if t == MELD_CHOW:
                seen[k:k + 3] += 1
            else:
                seen[k] += 3 if t == MELD_PONG else 4
    return seen


def hint_lines(game: Game, seat: int) -> list[str]:
    """The hint for ``seat``: the shanten of its concealed tiles (-1 complete, by shape) and, on its own
    turn, the discards ranked by the shanten they leave, then by the live tiles that would lower it (the
    copies ``seat`` cannot see: :func:`caishen.sim.hand.effective_tiles`); when ready, its waits.  Lines
    of at most 100 terminal columns (a long one wraps, indented)."""
    counts = np.asarray(game.state["hands"][seat], np.int64)
    joker = int(game._ep.joker)
    seen = _visible(game, seat)
    n = int(counts.sum())
    lines = [f"hint: shanten {_hand.shanten(counts, joker)} (-1: complete, 0: ready)"]
    if n % 3 == 2:
        ranked = []
        for k in np.flatnonzero(counts):
            after = counts.copy()
            after[k] -= 1
            eff = _hand.effective_tiles(after, joker, seen + (np.arange(N_KINDS) == k))
            ranked.append((_hand.shanten(after, joker), -sum(x for _, x in eff), int(k), eff))
        ranked.sort()
        lines.append("hint: discards, best first (shanten, then live effective tiles):")
        for s, minus_live, k, eff in ranked[:HINT_DISCARDS]:
            lines.append(f"  discard {_name(k, joker)}: shanten {s}, {-minus_live} live tiles: {_effective(eff, joker)}")
    elif n % 3 == 1:
        eff = _hand.effective_tiles(counts, joker, seen)
        if _hand.shanten(counts, joker) == 0:
            live = dict(eff)
            lines.append("hint: waits " + " ".join(f"{_name(t, joker)}({live.get(t, 0)} live)"
                                                   for t in _hand.waits(counts, joker)))
        else:
            lines.append(f"hint: {sum(x for _, x in eff)} live tiles would lower the shanten: "
                         + _effective(eff, joker))
    from caishen.sim.termtext import wrap_lines

    return wrap_lines(lines, indent="      ")  # a long list of tiles wraps at 100 columns


def _effective(eff: list, joker: int) -> str:
    """``"3m(2) 6p(4)"``: the effective tiles with live copies (count in brackets), then those all seen."""
    live = " ".join(f"{_name(t, joker)}({x})" for t, x in eff if x > 0) or "-"
    dead = " ".join(_name(t, joker) for t, x in eff if x == 0)
    return live + (f" (all copies seen: {dead})" if dead else "")


def _pick(text: str, legal: list[int], labels: dict[int, str]) -> int | None:
    """The legal action ``text`` names (a number, a label, an engine name, a bare tile), or None."""
    if _NUMBER.fullmatch(text):
        i = int(text)
        return legal[i] if i < len(legal) else None
    low = " ".join(text.lower().replace("*", "").split())
    for a in legal:
        label = labels[a].lower().replace("*", "")
        if low in (label, label.split(" (")[0], label.split(":")[0]):
            return a
    if _TILE.fullmatch(low):
        low = f"discard {low}"
    try:
        return parse_action(low)
    except ValueError:
        return None


def _ask(game: Game, seat: int, answers, out: TextIO) -> int:
    """The legal action the person picks; re-asks on anything that is not one."""
    legal = game.legal_actions()
    labels = {a: action_label(game, a) for a in legal}
    row = ""
    for i, a in enumerate(legal):  # as many a line as fit in LINE_WIDTH columns
        item = f"[{i}] {labels[a]}"
        if row and len(row) + 2 + len(item) > LINE_WIDTH:
            out.write(f"  {row}\n")
            row = ""
        row = f"{row}  {item}" if row else item
    out.write(f"  {row}\n")
    while True:
        out.write(f"your action (0..{len(legal) - 1}, a tile to discard, hint, help, quit)> ")
        out.flush()
        line = next(answers, "")
        if line is None:  # bounded_lines: a line longer than MAX_INPUT, skipped
            out.write(f"not an action: a line of more than {MAX_INPUT:,} characters (type help)\n")
            continue
        if not line:  # the input ended (Ctrl-D, a script's end): as quit
            out.write("\n")
            raise _Quit("the input ended")
        text = line.strip()
        if text.lower() in QUIT:
            raise _Quit("you left")
        if text.lower() in ("help", "?", "h"):
            out.write(help_text(game) + "\n")
            continue
        if text.lower() == "hint":
            out.write("\n".join(hint_lines(game, seat)) + "\n")
            continue
        a = _pick(text, legal, labels) if text else None
        if a is None:
            out.write(f"not an action: {short_repr(text)} (type help)\n")
            continue
        if a not in legal:
            out.write(_refusal(game, seat, a) + "\n")
            continue
        return a


def _refusal(game: Game, seat: int, a: int) -> str:
    """Why the action ``a`` (not legal now) is refused: ``you hold no 4z`` for a discard (or a discard with a
    declaration, or a concealed kong) of a tile ``seat`` does not hold, else ``... is not legal now``."""
    held = np.asarray(game.state["hands"][seat], np.int64)
    for base in (A_DISCARD, A_DECLARE, A_KONG_CONCEALED):
        if base <= a < base + N_KINDS and held[a - base] == 0:
            return f"you hold no {kind_name(a - base)} (type hint or help)"
    return f"{action_name(a)} is not legal now"


#: bot kinds whose throwaway hand :func:`_warm` plays with greedy instead (slow, or someone else's code)
_NOT_WARMED = ("mc", "ppo", "python", "exec")


def _warm(rules: str, options: dict | None, policy: str) -> None:
    """Play one throwaway hand of ``policy`` bots under ``rules``: every kernel the hand's bots, steps and
    scoring use is compiled (or loaded from the cache) before the person's first move, where a cold cache's
    compile shows its progress (:func:`caishen.sim.warmup.compile_line`), instead of pausing the hand at
    the bots' first moves (a newcomer's cold `caishen play`: 32 kernels before the first prompt, 98 more
    during the hand).  Costs well under a second once compiled (a search, checkpoint or open-seat policy's
    throwaway hand is played by greedy: :data:`_NOT_WARMED`)."""
    game = Game(rules, options).reset(seed=0)
    # a search, checkpoint or open-seat policy would spend seconds or run the user's program: greedy warms the steps
    kind = str(policy).partition(":")[0].strip()
    bot = make_agent("greedy" if kind in _NOT_WARMED else policy, 0)
    while not game.done:
        game.step(bot.act(game.observe()))
    game.summary()


def play(rules: str = DEFAULT, options: dict | None = None, seat: int = 0, policy: str = "greedy",
         seed: int | None = None, hint: bool = False, stdin: TextIO | None = None, out: TextIO | None = None,
         html=None, show_replay: bool = False) -> replay.Trace | None:
    """Play one hand as ``seat`` (0..3) against three ``policy`` bots; returns its trace, or None when the
    person left it unfinished (``quit``, or the end of the input: a line on ``out`` says so).

    ``seed``: the wall's seed (``0 .. 2**32-1``, None: fresh) and the random bots' seed.  ``stdin`` /
    ``out``: where the person's answers come from and the table goes (``sys.stdin`` / ``sys.stdout``).
    ``hint``: show :func:`hint_lines` every turn.  ``show_replay``: print the whole hand move by move at
    the end (else offered: type ``replay``).  ``html``: also write the replay page there.  Raises
    ``ValueError`` for a bad rule set, option, seat or policy.
    """
    import sys

    from caishen.sim.termtext import wrap_lines
    from caishen.sim.warmup import compile_over

    stdin = sys.stdin if stdin is None else stdin
    out = sys.stdout if out is None else out
    seat = check_int("--seat", seat, 0, N_SEATS - 1)
    _warm(rules, options, policy)  # a cold cache compiles now, in view, not between the person's moves
    compile_over()  # the hand begins: the command's compile line says its compile now
    game = Game(rules, options).reset(seed=seed)
    bots = [make_agent(policy, None if game.seed is None else game.seed + p) for p in range(N_SEATS)]
    joker = int(game._ep.joker)
    answers = bounded_lines(stdin, MAX_INPUT)
    step = [0]

    def choose(g: Game) -> int:
        step[0] += 1
        p = g.current_player
        if p != seat:
            return bots[p].act(g.observe())
        frame = replay.snapshot(g, step[0] - 1)
        out.write("\n" + "\n".join(replay.frame_lines(frame, seat, offers=False, joker=joker)) + "\n")
        if hint:
            out.write("\n".join(hint_lines(g, seat)) + "\n")
        return _ask(g, seat, answers, out)

    marked = f"the joker (财神) {kind_name(joker)} is marked {kind_name(joker)}*; " if joker >= 0 else ""
    out.write("\n".join(wrap_lines([f"caishen play: {game.rules_name}, you are seat {seat}, the others play "
                                     f"{policy} (seed {game.seed})",
                                     f"{marked}type help for the commands, quit to leave"])) + "\n")
    try:
        trace = replay.trace_game(game, choose, source=f"caishen play, seed {game.seed}, you at seat {seat}")
    except _Quit as why:
        out.write(f"{why}: the hand (seed {game.seed}) is left unfinished at step {step[0] - 1}, nothing "
                  "scored\n")
        return None
    out.write("\nthe hand is over:\n" + "\n".join(replay.result_lines(trace)) + "\n")
    out.write(f"your score (seat {seat}): {int(trace.result[f'score_{seat}']):+d}\n")
    if html is not None:
        from caishen.sim.analysis.replay_html import write_html

        out.write(f"replay page: {write_html(trace, html)}\n")
    if not show_replay:
        out.write("type replay to see the whole hand move by move, or press Enter to finish> ")
        out.flush()
        line = next(answers, "")
        show_replay = line is not None and line.strip().lower() == "replay"
        out.write("\n")
    if show_replay:
        out.write("\nthe replay:\n\n" + replay.render_text(trace))
    return trace
