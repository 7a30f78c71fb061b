"""``caishen play``: a person plays one seat against bots in the terminal, then sees the replay.

Each time the person's seat is to act, the table is drawn from that seat's
view (:func:`caishen.sim.analysis.replay.frame_lines`: the other seats'
concealed tiles hidden) and its legal actions are numbered; the person types
a number (or an action's name, ``discard 3m``).  Hints are off by default;
``hint=True`` shows the shanten of the seat's concealed tiles, the discards
that keep it lowest (on its own turn) and the waits when ready.  The bots
are the step-API agents (:func:`caishen.agents.make_agent`).  At the end
the whole hand is printed move by move with every seat's tiles and the
score breakdown (and written as a replay page with ``html``).
"""

from __future__ import annotations

from typing import TextIO

import numpy as np

from caishen.agents import make_agent
from caishen.sim import hand as _hand
from caishen.sim.analysis import replay
from caishen.sim.engine import EP_JOKER, N_SEATS, Game, action_name, parse_action
from caishen.sim.tiles import kind_name
from caishen.sim.rules.base import DEFAULT
from caishen.sim.validate import check_int, short_repr


def hint_lines(game: Game, seat: int) -> list[str]:
    """The hint for ``seat``: shanten of its concealed tiles (-1 complete), the discards that keep the
    lowest shanten on its own turn, its waits when ready (by shape)."""
    counts = np.asarray(game.state["hands"][seat], np.int64)
    joker = int(game._ep[EP_JOKER])
    n = int(counts.sum())
    lines = [f"hint: shanten {_hand.shanten(counts, joker)}"]
    if n % 3 == 2:
        after = _hand.shanten_after_discards(counts, joker)
        held = [k for k in range(34) if counts[k] > 0]
        best = min(int(after[k]) for k in held)
        lines.append(f"hint: discards keeping shanten {best}: " + " ".join(kind_name(k) for k in held
                                                                              if int(after[k]) == best))
    elif n % 3 == 1 and _hand.shanten(counts, joker) == 0:
        lines.append("hint: waits " + " ".join(kind_name(k) for k in _hand.waits(counts, joker)))
    return lines


def _ask(legal: list[int], stdin: TextIO, out: TextIO) -> int:
    """The legal action the person picks by number or name; re-asks on a bad answer."""
    for i, a in enumerate(legal):
        out.write(f"  [{i}] {action_name(a)}\n")
    while True:
        out.write(f"your action (0..{len(legal) - 1} or a name)> ")
        out.flush()
        line = stdin.readline()
        if not line:
            out.write("\n")
            raise ValueError("the input ended before the hand did")
        text = line.strip()
        if text.isdigit():
            a = legal[int(text)] if len(text) < 6 and int(text) < len(legal) else -1
        else:
            try:
                a = parse_action(text)
            except ValueError:
                a = -1
        if a < 0:
            out.write(f"not an action: {short_repr(text)}\n")
            continue
        if a not in legal:
            out.write(f"{action_name(a)} is not legal now\n")
            continue
        return a


def play(rules: str = DEFAULT, options: dict | None = None, seat: int = 0, policy: str = "greedy",
         seed: int | None = None, hint: bool = False, stdin: TextIO | None = None, out: TextIO | None = None,
         html=None) -> replay.Trace:
    """Play one hand as ``seat`` (0..3) against three ``policy`` bots; returns its trace.

    ``seed``: the wall's seed (``0 .. 2**32-1``, None: fresh) and the random bots' seed.  ``stdin`` /
    ``out``: where the person's answers come from and the table goes (``sys.stdin`` / ``sys.stdout``).
    ``html``: also write the replay page there.  Raises ``ValueError`` for a bad rule set, option, seat
    or policy, and when the input ends before the hand does.
    """
    import sys

    stdin = sys.stdin if stdin is None else stdin
    out = sys.stdout if out is None else out
    seat = check_int("--seat", seat, 0, N_SEATS - 1)
    game = Game(rules, options).reset(seed=seed)
    bots = [make_agent(policy, None if game.seed is None else game.seed + p) for p in range(N_SEATS)]
    step = [0]

    def choose(g: Game) -> int:
        step[0] += 1
        p = g.current_player
        if p != seat:
            return bots[p].act(g)
        frame = replay.snapshot(g, step[0] - 1)
        out.write("\n" + "\n".join(replay.frame_lines(frame, seat, offers=False)) + "\n")
        if hint:
            out.write("\n".join(hint_lines(g, seat)) + "\n")
        return _ask(g.legal_actions(), stdin, out)

    out.write(f"caishen play: {game.rules_name}, you are seat {seat}, the others play {policy} "
              f"(seed {game.seed})\n")
    trace = replay.trace_game(game, choose, source=f"caishen play, seed {game.seed}, you at seat {seat}")
    out.write("\nthe hand is over; the replay:\n\n" + replay.render_text(trace))
    if html is not None:
        from caishen.sim.analysis.replay_html import write_html

        out.write(f"replay page: {write_html(trace, html)}\n")
    return trace
