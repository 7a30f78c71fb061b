"""The study notebooks run and give internally consistent answers."""

from __future__ import annotations

import re

import importlib.util
from pathlib import Path

import pytest

NOTEBOOKS = Path(__file__).resolve().parents[1] / "notebooks"


def load(name):
    spec = importlib.util.spec_from_file_location(name, NOTEBOOKS / f"{name}.py")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def test_piaocai_study_duplicate_deals():
    r = load("piaocai_study").study(hands=1500, seed=3)
    # duplicate deals: both policies see the same walls, scores are zero-sum per hand
    assert r["always"] + r["never"] == pytest.approx(0.0, abs=1e-9)
    assert r["difference"] == pytest.approx(r["always"] - r["never"])
    assert r["ci_low"] < r["difference"] < r["ci_high"]
    assert r["piao_rate_always"] > 2 * r["piao_rate_never"] > 0


# ------------------------------------------------- the issue-14 studies, at tiny sizes
def test_K_9_piao_decision_notebook(engine_warm, tmp_path):
    nb = load("piao_decision")
    r = nb.decision_study(hands=600, rollouts=2, seed=3, workers=1, sweep_walls=40, figures=tmp_path,
                          progress=False)
    e = r["estimate"]
    assert e.iloc[0]["points"] == len(r["points"]) > 20
    assert set(r["check"]["policy"]) >= {"never", "always"} and (tmp_path / "piao_decision.png").exists()
    assert 0 <= r["bits"] < 2**64
    text = nb.answer(r)
    assert re.search(r"飘 at a chance is worth [+-]\d+\.\d\d points \[95% CI [+-]\d+\.\d\d, [+-]\d+\.\d\d\] over keeping", text), text


def test_K_6_kaihua_balance_notebook(engine_warm, tmp_path):
    nb = load("kaihua_balance")
    r = nb.kaihua_study(hands=1200, seed=2, option_hands=300, figures=tmp_path)
    assert set(r["options"]["option"]) == set(nb.SETTINGS)
    assert (tmp_path / "kaihua_balance.png").exists()
    assert "the dealer gains" in nb.answer(r)


def test_J_8_jiating_balance_notebook(engine_warm, tmp_path):
    nb = load("jiating_balance")
    r = nb.jiating_study(hands=800, seed=2, decl_hands=100, rollouts=1, workers=1, figures=tmp_path,
                         hard_hands=3000)
    assert (tmp_path / "jiating_patterns.png").exists()
    assert r["patterns"].set_index("pattern").loc["P01", "frequency"] == pytest.approx(1.0)
    assert list(r["declarations"]["decision"]) == ["jiating", "hard"]
    assert "架听 declaration is worth" in nb.answer(r)


def test_option_sweep_notebook(engine_warm, tmp_path):
    nb = load("option_sweep")
    r = nb.sweep_study(tmp_path / "s", walls=40, factors="1,3", policies="threshold:20,never", workers=1,
                       progress=False)
    t = r["table"]
    assert set(t["failed_piao_factor"]) == {"1", "3"} and set(t["policy"]) == {"threshold:20", "never"}
    assert "factor 1: best threshold:20" in nb.answer(r)


@pytest.mark.parametrize("rules", ["kaihua", "jiating"])
def test_K_7_1_J_6_2_rule_readings_notebook(rules, engine_warm, tmp_path):
    """Every ambiguity option's readings against the default on the same walls (issue 27 item 3)."""
    nb = load("rule_readings")
    r = nb.readings_study(rules, tmp_path / "r", walls=60, seed=3, workers=1, progress=False, figures=tmp_path)
    t = r["table"]
    for option, values, _ in nb.READINGS[rules]:
        rows = t[(t["option"] == option) & (t["metric"] == "dealer_score")]
        assert list(rows["reading"]) == [v.lower() if v in ("true", "false") else v for v in values.split(",")]
        assert rows["default"].tolist() == [True] + [False] * (len(rows) - 1)
    assert (t.loc[t["default"], "diff"] == 0).all()  # the default reading against itself
    assert set(t["metric"]) == set(nb.METRICS[rules])
    assert (tmp_path / f"readings_{rules}.png").exists()
    assert re.match(r"(no reading moves dealer_score|dealer_score against the default reading)", nb.answer(r))
    if rules == "kaihua":  # K-7.1 off (K-7.2 with it): every hand ends in a self-draw or a 流局
        k = t[(t["option"] == "discard_win") & (t["reading"] == "false")].set_index("metric")["value"]
        assert k["self_draw"] + k["draw"] == pytest.approx(1.0) and k["self_draw"] > 0.5


def test_K_9_3_add_an_option_notebook(engine_warm, tmp_path):
    """The worked example of a new option (issue 27 item 5): a failed 飘 at a fixed cost, swept."""
    nb = load("add_an_option")
    r = nb.option_study(tmp_path / "s", walls=80, seed=3, costs="None,0,500", workers=1, progress=False)
    v = r["value"].set_index("cost")
    assert list(v.index) == ["None", "0", "500"]
    fp = r["table"][(r["table"]["metric"] == "failed_piao") & (r["table"]["policy"] == "always")]
    assert (fp["value"] > 0).all()  # the hero's 飘 does fail on some of these walls
    # a payment-only option leaves play unchanged: the same hands, and a free failed 飘 costs the hero less
    sc = r["table"][(r["table"]["metric"] == "score") & (r["table"]["policy"] == "always")].set_index(
        "failed_piao_points")["value"]
    assert sc["0"] > sc["500"] and sc["0"] >= sc["None"]
    assert nb.answer(r).startswith("飘 (always minus never, points per hand to the hero) under the spec's doubling")
