"""Issue 45 (the first hour): what a person reads keeps within 100 terminal columns (wide characters count 2):
the summary's table and footnotes, a score breakdown's payment lines, `caishen learn`'s iteration lines."""

from __future__ import annotations

import numpy as np
import pandas as pd

from caishen.sim.termtext import display_width

WIDTH = 100


def _widest(text: str) -> int:
    return max(display_width(line) for line in text.splitlines())


def test_summary_table_and_footnotes_fit_100_columns():
    from caishen.sim.analysis import summary
    from caishen.sim.analysis.summary_tally import OBSERVATIONAL_NOTE, PIAO_RATE_DEFINITIONS, PIAO_RATES_KEY

    rows = pd.DataFrame([
        {"section": "飘财 observational", "metric": "score per comparable non-飘 seat-hand",
         "group": "seat 0 (greedy)",
         "n": 123456, "value": -0.00673212, "ci_low": -0.4599123, "ci_high": -0.006737},
        {"section": "outcome", "metric": "win rate", "group": "seat 1 (piao_table:72905330438242304)", "n": 200,
         "value": 0.25, "ci_low": 0.1951, "ci_high": 0.3143},
    ])
    assert _widest(summary.format_summary(rows.iloc[:1], "head")) <= WIDTH  # the main job: the widest metric and n
    text = summary.format_summary(rows, "head")
    assert "seat 1 (piao_table[10/64 cells])" in text and "72905330438242304" not in text  # a 飘 table by its cells
    notes = summary.format_definitions({PIAO_RATES_KEY: PIAO_RATE_DEFINITIONS, "observational": OBSERVATIONAL_NOTE,
                                        "empty": ""})
    assert _widest(notes) <= WIDTH and notes.startswith("飘 rates: attempt rate") and "empty" not in notes
    assert " ".join(notes.split()).count("success + failed + neither = 1") == 1  # nothing lost in the wrapping


def test_score_breakdown_lines_fit_100_columns_with_a_callers_indent():
    from caishen.sim.rules.vectors import Scorer, plain_case

    b = Scorer().explain(dict(plain_case("kaihua", "123m456m789p234s5s", "5s"), win_type="discard",
                              discarder=2))
    lines = b.lines()
    assert max(display_width("    " + x) for x in lines) <= WIDTH, lines
    pays = [x for x in lines if x.lstrip().startswith("seat 2 pays seat 1")]
    assert len(pays) == 1 and "     8: " in pays[0]  # the amount column kept


def test_learn_progress_lines_are_wrapped(capsys):
    from caishen.agents.exit import _print_wrapped

    long = "iteration 3: " + ", ".join(f"statistic {k} {np.pi * k:.3f}" for k in range(20))
    _print_wrapped(long)
    out = capsys.readouterr().out
    assert _widest(out) <= WIDTH and len(out.splitlines()) > 2
    assert " ".join(out.split()) == long


def test_game_summary_is_a_short_readable_form_of_the_result(engine_warm):
    """Issue 45 (first hour): `print(game.result)` printed a 759-character dict; `Game.summary()` gives the hand
    in a few lines (who won how, the hand types, who pays whom), as `caishen play` prints it, and
    `game.result` stays the dict of words."""
    from caishen.agents import make_agent
    from caishen.sim.engine import Game

    for rules in ("kaihua", "jiating"):
        game, bot = Game(rules).reset(seed=7), make_agent("greedy")
        assert game.summary() is None
        while not game.done:
            game.step(bot.act(game.observe()))
        text = game.summary()
        scores = [game.result[f"score_{s}"] for s in range(4)]
        assert text.splitlines()[-1] == "scores: " + ", ".join(f"seat {s} {v:+d}" for s, v in enumerate(scores))
        assert ("wins by" in text or "drawn hand" in text) and _widest(text) <= WIDTH and len(text) < 759
        assert isinstance(game.result, dict) and "win_type" in game.result
