"""The soak (``benchmarks/soak.py``, issue 15 item 4) in a small version, and its checks can fail.

The full soak plays millions of hands; here a few hundred hands of each rule
set and policy mix run with every check (the invariant checker on every
step, the records, step-API replays with hidden-information checks) and must
find nothing, resume from their log, and report an injected violation with
the seed that reproduces it.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

import numpy as np
import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "benchmarks"))
import soak  # noqa: E402


def test_soak_small_finds_no_violation_and_resumes(tmp_path, engine_warm):
    entries = soak.soak(["kaihua", "jiating"], 240, tmp_path, chunk=60, sample=1, quiet=True)
    assert sum(e["hands"] for e in entries if e["rules"] == "kaihua") == 240
    assert {e["mix"] for e in entries} == set(soak.MIXES["kaihua"]) | set(soak.MIXES["jiating"])
    assert [v for e in entries for v in e["violations"]] == []
    lines = (tmp_path / "soak.jsonl").read_text().splitlines()
    again = soak.soak(["kaihua", "jiating"], 240, tmp_path, chunk=60, sample=1, quiet=True)
    assert (tmp_path / "soak.jsonl").read_text().splitlines() == lines and len(again) == len(entries)


def test_check_records_names_each_broken_invariant(engine_warm):
    from caishen.sim.selfplay.batch import play_batch

    cols = play_batch(50, 3, rules="kaihua", policies="random")
    assert soak.check_records(cols, "kaihua", 50) == []
    drawn = int(np.flatnonzero(cols["win_type"] == -1)[0])
    bad = {k: v.copy() for k, v in cols.items()}
    bad["score_0"][drawn] += 4
    bad["score_1"][drawn] -= 4
    want = f"records: a drawn hand (流局) moved points (K-8.4) in hand {drawn}"
    assert soak.check_records(bad, "kaihua", 50) == [want]
    bad = {k: v.copy() for k, v in cols.items()}
    bad["score_2"][0] += 1
    assert "do not sum to zero" in soak.check_records(bad, "kaihua", 50)[0]
    won = int(np.flatnonzero(cols["win_type"] >= 0)[0])
    bad = {k: v.copy() for k, v in cols.items()}
    bad["winners_mask"][won] = 0
    assert any("disagree" in v for v in soak.check_records(bad, "kaihua", 50))


def test_replay_check_catches_a_step_api_that_plays_another_hand(monkeypatch, engine_warm):
    assert soak.check_replay("kaihua", "greedy", 11) == []
    real = soak.game_like_batch
    monkeypatch.setattr(soak, "game_like_batch", lambda rules, policies, seed, observations=True:
                        real(rules, "random", seed, observations=False))
    assert soak.check_replay("kaihua", "greedy", 11)[0].startswith("replay: Game's record")


def test_a_violation_is_logged_with_the_seed_that_reproduces_it(tmp_path, monkeypatch, engine_warm):
    import caishen.sim.selfplay.batch

    def broken(n, seed, **kw):
        raise RuntimeError(f"state check failed in hand 7 of seed {seed}: tiles are not conserved")

    monkeypatch.setattr(caishen.sim.selfplay.batch, "play_batch", broken)
    entries = soak.soak(["kaihua"], 40, tmp_path, chunk=10, sample=0, quiet=True)
    v = entries[0]["violations"][0]
    seed = entries[0]["seed"]
    assert v["what"] == f"state check failed in hand 7 of seed {seed}: tiles are not conserved"
    assert f"play_batch(10, {seed}, rules='kaihua', policies='random', check=True)" in v["reproduce"]
    logged = [json.loads(x) for x in (tmp_path / "soak.jsonl").read_text().splitlines()]
    assert all(e["violations"] for e in logged) and soak.main(["--rules", "kaihua", "--hands", "40", "--chunk", "10",
                                                              "--sample", "0", "--out", str(tmp_path)]) == 1


def test_soak_refuses_an_unknown_rule_set(tmp_path):
    with pytest.raises(ValueError, match="unknown rule set 'mahjongg'"):
        soak.soak(["mahjongg"], 10, tmp_path)
