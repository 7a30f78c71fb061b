"""Adding a rule set, by the steps of ``caishen.sim.rules``' docstring: a toy rule set defined here.

The toy ``plain`` rule set: no joker, no chow, no declarations, no 飘;
any complete hand wins (the shape win test, ``WIN_KERNEL_SHAPE``) and is
paid by Kaihua's K-8 payments at exponent 0 (``PAYMENTS_EXPONENT``: 4 points
a share when the dealer pays or wins, else 2); its own options (Kaihua's
option fields with other defaults) and its own facts.  It is registered at
test time and plays checked hands through ``play_batch``, ``Game`` and the
runner, and scores vector cases through ``caishen score``'s code path.
"""

from __future__ import annotations

import dataclasses
import json
from typing import Literal

import numpy as np
import pytest

from caishen.sim.selfplay import records, runner, stream
from caishen.sim.engine import A_CHOW_HIGH, A_CHOW_LOW, A_DECLARE, A_KONG_CONCEALED, RECORD_COLUMNS, Game, batch_columns
from caishen.sim.hand import is_win
from caishen.sim.rules import base as rulesets
from caishen.sim.rules import kernels
from caishen.sim.rules import records as contract
from caishen.sim.rules.kaihua import KaihuaRules
from caishen.sim.selfplay.batch import play_batch
from caishen.sim.tiles import parse


# step 1: options (a frozen Options dataclass with params(): here Kaihua's fields, other defaults,
# so that Kaihua's payments kernel reads them)
@dataclasses.dataclass(frozen=True)
class PlainRules(KaihuaRules):
    """The toy's options: Kaihua's option fields, its own defaults."""

    reserved_tiles: int = 14
    multiple_ron: bool = True
    dealer_rotation: Literal["next_after_win", "winner_stays"] = "winner_stays"
    discard_win_payment: Literal["all_three", "own_share"] = "own_share"


# step 2: facts (every FACT_KEYS entry)
FACTS = {
    "joker": -1, "chow": 0, "rob_kong": 1, "circle_ban": 0, "force_joker_min": 0, "force_joker_shape": 0,
    "passed_pong": 1, "passed_pong_claim_clears": 1, "passed_win": 0, "kong_after_claim": 0,
    "first_dealer_random": 0, "declare": 0, "hard": 0,
}


# step 5: a score function for the scoring vectors (a plain win test on the 14 tiles)
def score(case: dict, rules: PlainRules | None = None) -> dict:
    counts = parse(case["concealed"])
    counts[parse(case["win_tile"]).argmax()] += 1
    return {"id": case.get("id"), "win": bool(is_win(counts))}


# steps 3, 4, 6: kernel codes reused, no record finisher (the engine's columns), registered
def make_ruleset(**changes) -> rulesets.RuleSet:
    fields = dict(name="plain", title="a toy rule set", options=PlainRules, facts=FACTS,
                  win_kernel=kernels.WIN_KERNEL_SHAPE, payments=kernels.PAYMENTS_EXPONENT,
                  score=f"{__name__}:score", plain_case={},
                  # its records: the engine's generic joker / chain fields under Kaihua's names (its payments)
                  field_columns="caishen.sim.rules.kaihua.records:FIELD_COLUMNS")
    fields.update(changes)
    return rulesets.RuleSet(**fields)


@pytest.fixture(scope="module")
def plain():
    rs = rulesets.register(make_ruleset())
    yield rs
    rulesets.unregister("plain")


def test_registered_rule_set_is_found_by_name(plain):
    assert rulesets.get("plain") is plain
    assert rulesets.names()[:2] == ("kaihua", "jiating") and "plain" in rulesets.names()
    assert "plain" in runner.available_rules()
    with pytest.raises(ValueError, match="already registered"):
        rulesets.register(make_ruleset())
    with pytest.raises(ValueError, match="built in"):
        rulesets.unregister("kaihua")
    with pytest.raises(ValueError, match="unknown rule set 'nope'; known: kaihua, jiating"):
        rulesets.get("nope")


@pytest.mark.parametrize("changes, match", [
    (dict(name="Plain Rules"), "lower-case identifier"),
    (dict(options=dict), "Options subclass"),
    (dict(facts={k: v for k, v in FACTS.items() if k != "chow"}), "missing \\['chow'\\]"),
    (dict(facts={**FACTS, "flowers": 1}), "unknown \\['flowers'\\]"),
    (dict(win_kernel=7), "win_kernel 7"),
    (dict(payments=-1), "payments -1"),
    (dict(finish="no colon"), "finish must be 'module:name'"),
    (dict(field_columns="no colon"), "field_columns must be 'module:name'"),
    (dict(points=9), "points 9"),
    (dict(reward_scale=0), "reward_scale must be a positive number"),
    (dict(reward_scale=True), "reward_scale must be a positive number"),
    (dict(analysis="no colon"), "analysis must be 'module:name'"),
])
def test_a_bad_rule_set_is_refused_naming_the_field(changes, match):
    with pytest.raises(ValueError, match=match):
        make_ruleset(**changes)


def test_a_rule_set_records_the_generic_fields_under_its_field_columns_or_their_own_names(plain):
    rs = rulesets.register(make_ruleset(name="generic", field_columns=None))
    try:
        rec = contract.new_records(2)
        rec["jokers_held"] = [[1, 0, 0, 0], [0, 0, 2, 0]]
        cols = batch_columns("generic", None, rec)
        assert rs.field_column_names() == {}
        assert list(cols) == [c for c, _ in RECORD_COLUMNS] and "jokers_held_2" in cols and "caishen_2" not in cols
        assert cols["jokers_held_2"].tolist() == [0, 2]
        named = batch_columns("plain", None, rec)  # field_columns: Kaihua's names
        assert named["caishen_2"].tolist() == [0, 2] and "jokers_held_2" not in named
    finally:
        rulesets.unregister("generic")


def test_play_batch_plays_checked_hands_of_the_toy(plain, engine_warm):
    cols = play_batch(400, 3, rules="plain", policies="greedy,random,greedy,random", check=True)
    # no finisher: the engine's columns, the generic joker / chain fields under its field_columns' names
    assert list(cols) == [c for c, _ in contract.engine_columns(plain.field_column_names())]
    records.check_chunk(cols, "plain", 400)  # the common contract, zero-sum scores
    won = cols["winner"] >= 0
    assert won.sum() > 100
    assert not cols["exponent"].any() and not cols["hand_flags"].any()  # the shape test: exponent 0
    assert not any(cols[f"caishen_{s}"].any() or cols[f"piao_{s}"].any() for s in range(4))  # no joker
    # Kaihua's payments at exponent 0, own_share: a self-draw is 8 (dealer winner: 12) ...
    self_draw = won & (cols["win_type"] == 0)
    pay = np.array([cols[f"score_{s}"] for s in range(4)]).max(axis=0)
    dealer_won = cols["winner"] == cols["dealer"]
    assert set(pay[self_draw & dealer_won]) == {12} and set(pay[self_draw & ~dealer_won]) == {8}
    # ... a discard win only the discarder's own share (2, or 4 with the dealer)
    discard = won & (cols["win_type"] == 1) & (cols["winners_mask"] == (1 << cols["winner"]))
    assert set(pay[discard]) <= {2, 4} and discard.any()
    again = play_batch(400, 3, rules="plain", policies="greedy,random,greedy,random")
    assert all(np.array_equal(cols[c], again[c]) for c in cols)


def test_game_follows_the_facts_of_the_toy(plain, engine_warm):
    g = Game("plain")
    assert g.rules == PlainRules() and g.rules.reserved_tiles == 14
    for seed in range(6):
        g.reset(seed=seed)
        while not g.done:
            legal = g.legal_actions()
            assert not any(A_CHOW_LOW <= a <= A_CHOW_HIGH for a in legal)  # chow 0
            assert not any(A_DECLARE <= a < A_KONG_CONCEALED for a in legal)  # declare 0
            g.step(legal[-1])
            g.check()
        assert g.result["tiles_left"] >= 14  # reserved_tiles of its own options


def test_runner_plays_the_toy_in_process(plain, engine_warm, tmp_path):
    config = runner.make_config("plain", 96, 5, policies="greedy", chunk_size=48)
    runner.run(config, tmp_path, workers=1, progress=False)
    df = stream.read_run(tmp_path)
    assert len(df) == 96 and set(df["chunk"]) == {0, 1}
    assert (df[[f"score_{s}" for s in range(4)]].sum(axis=1) == 0).all()


def test_a_rule_set_without_hooks_gets_the_defaults(plain):
    from caishen.sim.rules.jiating.points import PatternPoints, points_tables
    from caishen.sim.rules.kernels import PointsContext, points_context

    assert plain.points == kernels.POINTS_ENGINE and plain.reward_scale == 1.0
    assert type(plain.analysis_hooks()) is rulesets.Analysis and plain.analysis_hooks().balance_tables([]) == {}
    pt = points_context(plain, PlainRules())
    assert type(pt) is PointsContext and np.array_equal(pt.params, PlainRules().params())
    assert type(pt.patterns) is PatternPoints and pt.patterns.points.shape == (1,)  # the empty one: no tables
    bad = make_ruleset(name="plainbad", points_tables=f"{__name__}:_bad_tables")
    with pytest.raises(ValueError, match="'plainbad': its points kernel .* reads no tables, but points_tables gives"):
        points_context(bad, PlainRules())
    worse = make_ruleset(name="plainworse", points=kernels.POINTS_PATTERNS, points_tables=f"{__name__}:_bad_tables")
    with pytest.raises(ValueError, match="'plainworse': points_tables must give a PatternPoints .*got tuple"):
        points_context(worse, PlainRules())
    wrong = make_ruleset(name="plainwrong", points=kernels.POINTS_PATTERNS, points_tables=f"{__name__}:_int_tables")
    with pytest.raises(ValueError, match="'plainwrong': points_tables must give a PatternPoints"):
        points_context(wrong, PlainRules())
    same = make_ruleset(name="plainsame", points=kernels.POINTS_PATTERNS, points_tables=f"{__name__}:_good_tables")
    assert np.array_equal(points_context(same, PlainRules()).patterns.points, points_tables(None).points)
    # the Jiating tables: the rule set's own type, its options' tables (J-8)
    jiating = rulesets.get("jiating")
    pt = points_context(jiating, jiating.options())
    assert type(pt.patterns) is PatternPoints and pt.patterns.points.shape == (51,)


def _bad_tables(rules):
    return (np.zeros(3),)


def _int_tables(rules):
    from caishen.sim.rules.jiating.points import points_tables

    return points_tables(None)._replace(doubled=np.zeros(51, np.int64))  # bool[51] expected


def _good_tables(rules):
    from caishen.sim.rules.jiating.points import points_tables

    return points_tables(None)


def test_scoring_vectors_reach_the_toys_score_function(plain):
    from caishen.sim.rules import vectors

    lines = [json.dumps({"id": "w", "rules": "plain", "concealed": "123m456p789s111z5z", "win_tile": "5z"}),
             json.dumps({"id": "n", "rules": "plain", "concealed": "123m456p789s111z5z", "win_tile": "4z"})]
    assert [r["win"] for r in vectors.score_lines(lines)] == [True, False]


# ---------------------------------------------------------------------------
# a toy rule set in a folder of its own (tests/toy_rules/), with a numba kernel of its own, through every tool
# ---------------------------------------------------------------------------
@pytest.fixture(scope="module")
def toy():
    import toy_rules

    rs = toy_rules.register()
    yield rs
    rulesets.unregister(toy_rules.NAME)


def test_the_toys_own_kernel_matches_a_python_loop(toy):
    from caishen.sim.rules import records as R
    from toy_rules import kernels as TK

    rng = np.random.default_rng(5)
    rec = R.new_records(300)
    rec["n_winners"] = rng.integers(0, 3, size=300)
    rec["n_winners"][::3] = 0
    rec["wins"]["hand"] = rng.integers(0, 3, size=(300, R.MAX_WINNERS, 34))
    rec["winner"] = rng.integers(-1, 4, size=300)
    cols = TK.finish(None, rec)
    for h in range(len(rec)):
        hand = rec["wins"]["hand"][h, 0]
        want = -1 if rec["n_winners"][h] <= 0 else int((hand > 0).sum())
        assert cols["hand_kinds"][h] == want
    assert [c for c, _ in TK.COLUMNS] == list(cols)
    assert np.array_equal(cols["winner"], rec["winner"]) and cols["winner"].dtype == np.int8


def test_the_toy_runs_through_simulate_report_match_and_sweep(toy, engine_warm, tmp_path, capsys):
    import pandas as pd

    from caishen.cli import main

    run = tmp_path / "run"
    assert main(["simulate", "--rules", "toy", "--games", "96", "--seed", "2", "--out", str(run), "--workers", "1",
                 "--chunk-size", "48", "--policy", "greedy", "--no-progress"]) == 0
    df = stream.read_run(run)
    assert len(df) == 96 and "hand_kinds" in df
    won = df["winner"] >= 0
    assert ((df["hand_kinds"] >= 1) == won).all() and (df["hand_kinds"] <= 13).all()
    assert main(["report", str(run)]) == 0
    assert "Hand kinds (toy)" in (run / "report.html").read_text(encoding="utf-8")

    assert main(["match", "--rules", "toy", "--policies", "greedy,random", "--walls", "6", "--seed", "1",
                 "--out", str(tmp_path / "m"), "--workers", "1", "--no-progress"]) == 0
    assert "0:greedy - 1:random" in capsys.readouterr().out

    assert main(["sweep", "--rules", "toy", "--option", "reserved_tiles=14,20", "--walls", "16", "--chunk-size", "16",
                 "--workers", "1", "--out", str(tmp_path / "s"), "--no-progress"]) == 0
    t = pd.read_csv(tmp_path / "s" / "sweep.csv")
    assert "hero_won_big" in set(t["metric"]) and sorted(set(t["reserved_tiles"])) == [14, 20]


def test_the_toy_runs_in_the_envs(toy, engine_warm):
    import gymnasium

    from caishen.envs import BatchedGames, MahjongEnv, env_id, register_envs

    register_envs()
    env = gymnasium.make(env_id("toy"))
    assert isinstance(env, MahjongEnv) and env.unwrapped.game.rules_name == "toy"
    obs, info = env.reset(seed=3)
    rng = np.random.default_rng(0)
    for _ in range(200):
        legal = np.flatnonzero(env.action_masks())
        obs, reward, terminated, truncated, info = env.step(int(rng.choice(legal)))
        if terminated or truncated:
            obs, info = env.reset()
    games = BatchedGames(8, rules="toy", reward="scaled").reset(np.arange(8))
    assert games.reward_scale == toy.reward_scale == 4.0
    ended = 0
    for _ in range(100):
        games.step(games.bot_actions("greedy"))
        assert not games.points.sum(axis=1).any()  # zero-sum (K-8.5)
        ended += int(games.hands_ended.sum())
    assert ended > 0
