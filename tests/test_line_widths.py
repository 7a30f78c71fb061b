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


def test_score_help_is_wrapped_by_argparse(monkeypatch):
    """`caishen score --help` printed a 640-column paragraph (a raw-description formatter)."""
    from caishen import cli

    monkeypatch.setenv("COLUMNS", "100")
    text = _subparser_help(cli, "score")
    assert _widest(text) <= WIDTH and "keys a hand typed by hand may omit" in text
    assert "  kaihua: " in text and "  jiating: " in text  # the epilog's rows kept apart


def _subparser_help(cli, name: str) -> str:
    parser = cli.build_parser([name])
    sub = next(a for a in parser._actions if hasattr(a, "choices") and a.choices and name in a.choices)
    return sub.choices[name].format_help()


def test_a_run_of_another_rule_set_is_named_in_one_short_difference():
    """The wrong-run error of `caishen simulate --rules jiating ... --out runs/k1` on a Kaihua run listed every
    option of both rule sets in 454 columns: another rule set is the one difference named."""
    from caishen.sim.selfplay.rundir import config_differences

    diffs = config_differences({"rules": "kaihua", "options": {"a": 1}, "seed": 7},
                               {"rules": "jiating", "options": {"b": 2}, "seed": 0})
    assert diffs == ["rules: run has kaihua, requested jiating"]
    line = "caishen simulate: error: 'runs/k1' holds a different run: " + "; ".join(diffs)
    assert display_width(line) <= WIDTH
    same = config_differences({"rules": "kaihua", "seed": 7}, {"rules": "kaihua", "seed": 0})
    assert same == ["seed: run has 7, requested 0"]


def test_match_table_names_a_long_policy_above_it():
    from caishen.sim.analysis import arena

    long = "python:examples/bots/python_seat.py:Policy"
    rows = [dict(index=i, policy=p, points=v, lo=v - 0.1, hi=v + 0.1, win=0.3, deal_in=0.1, piao=0.01)
            for i, (p, v) in enumerate([(long, -2.787), ("greedy", 2.787)])]
    pairs = [dict(ia=0, ib=1, a=long, b="greedy", diff=-5.5, lo=-5.7, hi=-5.3)]
    text = arena.format_summary(dict(policy_rows=rows, pairs=pairs, walls_done=2000), "head")
    assert _widest(text) <= WIDTH and f"policy 0:{long}" in text
    short = arena.format_summary(dict(policy_rows=[dict(r, policy="greedy") for r in rows], pairs=[],
                                      walls_done=2000))
    assert "0:greedy " in short and "policy 0:" not in short


def test_sweep_lines_fit_100_columns():
    from caishen.sim.analysis import factorial, study

    grid = study.parse_grid("kaihua", ["failed_piao_points=16,64"], policies="always,never")
    assert _widest(study.describe(grid)) <= WIDTH
    rows = []
    for fp in (16, 64):
        for pol in ("always", "never"):
            for m in ("score", "win"):
                rows.append(dict(failed_piao_points=fp, policy=pol, metric=m, walls=20000, value=0.0930,
                                 ci_low=-0.0032, ci_high=0.1892, baseline="failed_piao_points=16 policy=always",
                                 diff=0.0801, diff_low=0.0488, diff_high=0.1114))
    table = pd.DataFrame(rows)
    text = study.format_table(table)
    assert _widest(text) <= WIDTH and "sd/wall " in text and "vs baseline" in text
    assert _widest(study.format_grid(table)) <= WIDTH
    eff = pd.DataFrame([dict(metric="score", effect="failed_piao_points x policy", order=2, walls=20000,
                             estimate=0.1, ci_low=0.0, ci_high=0.2, sd_per_wall=7.0, p=0.01, p_holm=0.02)])
    assert _widest(factorial.format_effects(eff)) <= WIDTH


def test_warmup_progress_lines_fit_100_columns(capsys):
    from caishen.cli import warmup as cli_warmup

    cli_warmup._stderr("9 target(s) (bots, piao, selfplay, envs, seats, labels, game, score, hand) in 2 process(es); "
                       "each line below says when a target starts and ends")
    err = capsys.readouterr().err
    assert _widest(err) <= WIDTH and len(err.splitlines()) == 2


def test_learn_prints_one_aligned_row_per_iteration(capsys):
    """Issue 45 (first hour): `caishen learn` printed 4 wrapped lines per iteration (467 lines in 2 minutes):
    one aligned row each, under a heading said once; every figure stays in OUT/curve.csv."""
    from caishen.agents import exit as X

    X._print_wrapped(f"{X.ROW_HEADING.format('')}\n{X._iteration_row(1, 394, float('nan'), float('nan'), 0.003, 0.995, 1, 187)}")
    X._print_wrapped(X._iteration_row(112, 64556, 0.074, 0.0001, 0.003, 0.995, 1200, 187))
    out = capsys.readouterr().out.splitlines()
    assert len(out) == 4 and "curve.csv" in out[0] and out[1].split()[0] == "iteration"
    assert out[2].split() == ["1", "394", "-", "-", "+0.003", "0.995", "1", "187", "s"]
    assert out[3].split() == ["112", "64,556", "0.074", "0.0001", "+0.003", "0.995", "1,200", "187", "s"]
    assert len({len(x) for x in out[1:]}) == 1 and _widest("\n".join(out)) <= WIDTH  # aligned columns
    assert X._iteration_row(3, 10, 0.5, 0.01, -0.2, 0.9, 5, None).split()[-1] == "-"  # no ETA yet


def test_kaihua_balance_notebook_prints_a_narrow_table():
    """Issue 45 (first hour): the notebook printed a pandas frame wrapped into separate blocks of columns."""
    import importlib.util
    from pathlib import Path

    path = Path(__file__).resolve().parents[1] / "notebooks" / "kaihua_balance.py"
    spec = importlib.util.spec_from_file_location("kaihua_balance", path)
    nb = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(nb)
    t = pd.DataFrame([
        dict(section="hand type", metric="points when it fires", group="七子爆头 qidui_baotou (K-6.3)", n=5,
             value=64.0, ci_low=1.0, ci_high=2.0),
        dict(section="hand type", metric="frequency", group="平胡 pinghu (K-6.1)", n=49947, value=0.9165,
             ci_low=0.9141, ci_high=0.9189),
        dict(section="飘财 (K-9)", metric="attempt rate", group="seat-hands", n=200000, value=0.0108,
             ci_low=0.0104, ci_high=0.0112)])
    text = nb.narrow(t)
    lines = text.splitlines()
    assert _widest(text) <= WIDTH and "\\" not in text and lines[0] == "hand type:" and "飘财 (K-9):" in lines
    few = next(x for x in lines if "qidui_baotou" in x)
    assert few.rstrip().endswith("*") and "NaN" in few  # too few hands: no interval, marked
    rows = [x for x in lines[1:4]]
    assert len({display_width(x) for x in rows}) == 1  # the 汉字 rows aligned by display width


def test_a_finished_rerun_draws_no_bar_and_a_bound_is_said_once(engine_warm, tmp_path, capsys):
    """Issue 45 (first hour): a finished run's rerun drew its full bar twice on one line; a bounds error said
    its range twice ("in 1..1000000000, got 0 (outside 1..1000000000)")."""
    import pytest

    from caishen.sim.selfplay import runner
    from caishen.sim.validate import check_int

    cfg = runner.make_config("kaihua", 16, 1, "random", chunk_size=16)
    runner.run(cfg, tmp_path / "r", workers=1, progress=True)
    capsys.readouterr()
    res = runner.run(cfg, tmp_path / "r", workers=1, progress=True)
    assert res.chunks_run == 0 and "100%" not in capsys.readouterr().err
    with pytest.raises(ValueError) as e:
        check_int("--walls", 0, 1, 10**9)
    assert str(e.value) == "--walls must be an integer in 1..1000000000, got 0"
    with pytest.raises(ValueError, match=r"got 0 \(below 1\)$"):
        check_int("--walls", 0, 1)


def test_match_walls_has_a_default_said_in_help(monkeypatch):
    """Issue 45 (first hour): `caishen match` without --walls was refused ("the following arguments are
    required: --walls")."""
    from caishen import cli
    from caishen.cli import match

    monkeypatch.setenv("COLUMNS", "100")
    args = cli.build_parser(["match"]).parse_args(["match", "--policies", "greedy,random"])
    assert args.walls == match.DEFAULT_WALLS == 1000
    assert "(default 1,000" in " ".join(_subparser_help(cli, "match").split())
