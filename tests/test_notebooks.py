"""The study notebooks run and give internally consistent answers."""

from __future__ import annotations

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
