"""Playthroughs: whole hands as readable, diffable text, beside the golden digests (issue 44).

A golden digest (``tests/golden_runs.py``) says *that* thousands of records moved; a playthrough says
*which move* did.  Each playthrough plays one hand of one rule set with one bot at every seat through the
step API (:class:`caishen.sim.engine.Game`, :func:`caishen.agents.make_agent`) and writes it as the replay
text (:func:`caishen.sim.analysis.replay.render_text`): every step's table with all four hands, the actions
on offer, the action taken, and at the end the score explained.  ``tests/test_playthroughs.py`` plays them
again and compares line by line, showing the first lines that differ.

After a deliberate change of behaviour (a rule fix, a bot change) or of the replay text, rewrite them with::

    python tests/playthroughs.py --update

and say in the commit why they moved (OpenSpiel keeps its ``integration_tests/playthroughs`` the same way).
"""

from __future__ import annotations

import sys
from pathlib import Path

FOLDER = Path(__file__).parent / "playthroughs"

#: name -> (rule set, bot spec of every seat, wall seed)
PLAYTHROUGHS = {
    "kaihua_greedy": ("kaihua", "greedy", 7),
    "kaihua_tuned": ("kaihua", "tuned:kaihua", 11),
    "jiating_greedy": ("jiating", "greedy", 7),
    "jiating_learned": ("jiating", "learned:jiating", 12),
}


def play(name: str) -> str:
    """The text of playthrough ``name``: the hand played again now."""
    from caishen.agents import make_agent
    from caishen.sim.analysis.replay import render_text, trace_game
    from caishen.sim.engine import Game

    rules, bot, seed = PLAYTHROUGHS[name]
    agent = make_agent(bot)
    trace = trace_game(Game(rules).reset(seed=seed), lambda g: agent.act(g.observe()), source=f"{bot} at every seat, seed {seed}")
    return render_text(trace)


def path(name: str) -> Path:
    return FOLDER / f"{name}.txt"


def main(argv: list[str]) -> int:
    if argv != ["--update"]:
        print(__doc__)
        return 2
    FOLDER.mkdir(exist_ok=True)
    for name in PLAYTHROUGHS:
        path(name).write_text(play(name), encoding="utf-8")
        print(f"wrote {path(name)}")
    return 0


if __name__ == "__main__":
    sys.path.insert(0, str(Path(__file__).parent))
    raise SystemExit(main(sys.argv[1:]))
