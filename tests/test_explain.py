"""The score explained (issue 45 item 4): each hand type or pattern by name with its exponent or points, the
caps, who pays what -- for scoring-vector cases (``caishen score --explain``, ``caishen hand``) and for
finished hands' records (``caishen play``, ``caishen replay``), both rule sets.  The explanation restates the
kernels' arithmetic, so it is held equal to them: the items add up to the exponent / P, the payments to the
scores, on every shared vector and on self-played hands under several options."""

from __future__ import annotations

import io
import json

import numpy as np
import pytest

import shared_data
from caishen import cli
from caishen.agents import make_agent
from caishen.sim.engine import Game
from caishen.sim.rules import base
from caishen.sim.rules.jiating import JiatingRules
from caishen.sim.rules.kaihua import KaihuaRules


def _vectors(name):
    path = shared_data.path("vectors", f"{name}.jsonl")
    if not path.exists():
        pytest.skip(f"no {path} (set CAISHEN_SHARED)")
    return [json.loads(x) for x in path.read_text(encoding="utf-8").splitlines() if x.strip()]


@pytest.mark.parametrize("name", ["kaihua", "jiating"])
def test_every_vector_case_is_explained_and_adds_up(name):
    hooks = base.get(name).words_hooks()
    scorer = base.get(name).scorer()
    for case in _vectors(name):
        case = {k: v for k, v in case.items() if k != "expect"}
        b = hooks.explain_case(case)
        scored = scorer(case)
        assert b.scores == scored["scores"]
        if not scored["win"]:
            assert not b.wins and b.notes
            continue
        assert not b.notes, (case["id"], b.notes)
        assert b.paid() == b.scores, case["id"]
        (win,) = b.wins
        total = sum(i.value for i in win.items)
        if name == "kaihua":
            assert min(total, 10**9) >= scored["exponent"]
            names = {i.name for i in win.items}
            for flag, pinyin in (("baotou", "baotou"), ("qidui", "qidui"), ("qingyise", "qingyise")):
                assert (flag in scored["flags"]) == (pinyin in names), (case["id"], flag)
        else:
            assert total == scored["P"] and [i.rule for i in win.items] == list(scored["patterns"])
        text = "\n".join(b.lines())
        assert f"seat {case['winner']} wins by" in text and "scores: " in text


def _hand(rules, options, seed, policies):
    g = Game(rules, options).reset(seed=seed, dealer=seed % 4)
    bots = [make_agent(policies[p % len(policies)], seed * 7 + p) for p in range(4)]
    while not g.done:
        g.step(bots[g.current_player].act(g.observe()))
    return g


KAIHUA_OPTIONS = [{}, {"max_exponent": 1}, {"failed_piao_factor": 3, "discard_win_payment": "own_share"},
                  {"failed_piao_points": 5, "multiple_ron": True}]
JIATING_OPTIONS = [{}, {"cap": 12, "dealer_cap": 20, "streak_step": 3}, {"concealed_factor": 3}]


@pytest.mark.parametrize("rules,options", [("kaihua", o) for o in KAIHUA_OPTIONS]
                         + [("jiating", o) for o in JIATING_OPTIONS])
def test_self_played_hands_are_explained_and_add_up(rules, options, engine_warm):
    """Every hand's record explained from the record and the final tiles: the items add up to the record's
    exponent (Kaihua) or P (Jiating), the payments to the scores (several winners of one discard: Jiating in
    full; Kaihua's record keeps the first winner's hand type only, and says so)."""
    hooks = base.get(rules).words_hooks()
    r = (KaihuaRules if rules == "kaihua" else JiatingRules).from_dict(options)
    policies = ["always", "greedy", "threshold:20"] if rules == "kaihua" else ["greedy", "random"]
    kinds = set()
    for seed in range(150 if rules == "kaihua" else 40):  # Kaihua: mostly 平胡; 150 hands meet a few hand types
        g = _hand(rules, options, seed, policies)
        rec = g.record
        b = hooks.explain_record(rec, r, g.state["hands"].copy())
        assert b.scores == [rec[f"score_{s}"] for s in range(4)]
        if rec["winner"] < 0:
            assert b.drawn and not b.wins and b.paid() == [0, 0, 0, 0]
            continue
        several = bin(rec["winners_mask"]).count("1") > 1
        if rules == "kaihua" and several:
            assert any("also won" in n for n in b.notes)
            continue
        assert not b.notes, (seed, b.notes, "\n".join(b.lines()))
        assert b.paid() == b.scores, (seed, "\n".join(b.lines()))
        for w in b.wins:
            kinds.update(i.rule for i in w.items)
            total = sum(i.value for i in w.items)
            if rules == "kaihua":
                capped = total if r.max_exponent is None else min(total, r.max_exponent)
                assert capped == rec["exponent"]
                assert bool(w.caps) == (capped != total)
            else:
                assert total == rec[f"P_{w.winner}"]
    assert len(kinds) >= 2


def test_K_6_6_the_cap_is_named():
    case = {"id": "cap", "rules": "kaihua", "dealer": 0, "winner": 1, "win_type": "self_draw", "discarder": None,
            "concealed": "123m456m789p23s5z5z", "melds": [], "win_tile": "1s", "replacement_draw": False,
            "chain": [], "piao_circle": [3]}
    b = base.get("kaihua").words_hooks().explain_case(case, KaihuaRules(max_exponent=0))
    assert b.wins and b.wins[0].caps == ["max_exponent 0 (K-6.6): E 1 -> 0"]
    text = "\n".join(b.lines())
    assert "K-6.2  baotou 爆头" in text and "cap: max_exponent 0" in text
    assert "failed 飘" in text and "K-9.3" in text and b.paid() == b.scores


def test_J_6_2_a_capped_payment_is_named():
    case = {"id": "cap", "rules": "jiating", "dealer": 0, "winner": 1, "win_type": "discard", "discarder": 0,
            "concealed": "1112345678999m", "win_tile": "5m"}
    b = base.get("jiating").words_hooks().explain_case(case, JiatingRules(dealer_cap=50))
    assert b.paid() == b.scores and b.wins[0].caps and b.wins[0].caps[0].startswith("dealer_cap 50 (J-6.2)")
    assert any(i.rule == "P42" and i.name == "qing yi se" and i.chinese == "清一色" for i in b.wins[0].items)


def test_score_explain_cli(capsys, monkeypatch):
    lines = [json.dumps(c) for c in (_vectors("kaihua")[:2] + _vectors("jiating")[:1])] + ["{nope", ""]
    monkeypatch.setattr("sys.stdin", io.StringIO("\n".join(lines) + "\n"))
    assert cli.main(["score", "--explain"]) == 1  # the bad line
    out = capsys.readouterr()
    assert out.out.count("wins by") == 3 and "line 4: error: bad JSON" in out.out
    assert "E = " in out.out and "P = " in out.out and "1 of 4 case(s) could not be scored" in out.err
    monkeypatch.setattr("sys.stdin", io.StringIO(""))
    with pytest.raises(SystemExit) as e:
        cli.main(["score", "--explain", "--check"])
    assert e.value.code == 2
    assert "give one of them" in capsys.readouterr().err


def test_hand_cli_explains_a_complete_hand(capsys):
    assert cli.main(["hand", "123m456m789p234s5z5s", "--rules", "kaihua"]) == 0
    out = capsys.readouterr().out
    assert "score:     as a self-draw on " in out and "baotou 爆头" in out and "seat 0 pays seat 1" in out
    assert cli.main(["hand", "123m456m789p234s5z5s", "--rules", "kaihua", "--json"]) == 0
    info = json.loads(capsys.readouterr().out)
    assert info["score"]["breakdown"]["scores"][1] > 0
    assert cli.main(["hand", "11m22m33p44p55s66s77z"]) == 0
    assert "give --rules R" in capsys.readouterr().out


def test_breakdown_lines_align_wide_characters():
    from caishen.sim.rules.words import display_width, pad

    assert display_width("pinghu 平胡") == 11 and pad("平胡", 6) == "平胡  "
    assert np.all([display_width(x) >= len(x) for x in ("abc", "清一色")])
