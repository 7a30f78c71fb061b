"""Oracle heads of ``caishen learn`` (issue 46, ``--aux``): the targets, and that they stay training-only.

- the oracle targets of the labelled states (per candidate discard: does it deal in now; per opponent:
  ready) equal a slow reference through the step API (``Game``) and the pure-Python hand reference, on the
  states of hands on random walls, in both rule sets;
- asking for them changes no policy input, no label and no random draw (nothing of the oracle reaches
  what the policy reads); off, they are -1;
- a tiny run with ``aux > 0`` trains its heads (their loss in the curve, their weights moved), exports the
  same ``action-mlp`` file as a run without (the heads are not in it, whatever their weights), which the
  kernel plays exactly as the torch net chooses, and resumes with its heads;
- bad ``aux`` values and ``--arch conv`` with heads are refused by name.
"""

from __future__ import annotations

import csv
import math

import numpy as np
import pytest

import hand_reference as ref
from learned_play import learned_decisions
from caishen.sim.bots import learned
from caishen.sim.bots.registry import load_tuned
from caishen.sim.engine import (
    A_DECLARE,
    A_DISCARD,
    A_HARD_DECLINE,
    A_PASS,
    A_WIN,
    PH_CLAIM,
    PH_HARD,
    PH_ROB,
    PH_TURN,
    STATE_DTYPE,
    Game,
)
from caishen.sim.rules import base as rulesets
from caishen.sim.rules.base import DEFAULT
from caishen.sim.rules.codes import WIN_DISCARD
from caishen.sim.selfplay.labels import Pruning, label_hands

RULES = ("kaihua", "jiating")


@pytest.fixture(scope="module")
def starts(tmp_path_factory):
    """The step-0 learned net (the tuned weights, a zero residual) of each rule set, as a weights file."""
    d = tmp_path_factory.mktemp("orc")
    out = {}
    for rules in RULES:
        w, _ = load_tuned(rules)
        out[rules] = learned.save_learned(d / f"{rules}.npz", learned.from_tuned(w, rules=rules))
    return out


def _decision_states(path, rules, walls):
    """The states of the learned bot's decisions of two or more candidates, in play order, with every seat
    the learned bot ``path`` (dealer wall % 4): ``(state copy, candidate actions)``."""
    return [(st.copy(), lx[2][:n].copy()) for st, _, _, _, lx, n in learned_decisions(path, walls, rules)]


def _game(rules, st) -> Game:
    g = Game(rules).reset(seed=0)
    for f in STATE_DTYPE.names:
        g.state[f] = st[f]
    return g


def _reference(rules, st, actions):
    """``(deal int8[n], ready int8[3])`` the slow obvious way: each candidate discard stepped on a copy through
    the step API with every win offered on it taken; readiness from the pure-Python waits."""
    s = int(st["table"]["to_act"])
    joker = rulesets.get(rules).facts["joker"]
    ready = np.zeros(3, np.int8)
    for r in range(1, 4):
        h = [int(c) for c in st["hands"][(s + r) % 4]]
        ready[r - 1] = sum(h) % 3 == 1 and bool(ref.waits(h, joker))
    deal = np.full(len(actions), -1, np.int8)
    if st["table"]["phase"] != PH_TURN:
        return deal, ready
    legal = set(_game(rules, st).legal_actions())
    for i, a in enumerate(actions):
        k = int(a) - A_DISCARD
        assert 0 <= k < 34, "a turn's candidates are discards"
        g = _game(rules, st)
        g.step(A_DISCARD + k if A_DISCARD + k in legal else A_DECLARE + k)
        while not g.done and g.state["table"]["phase"] in (PH_CLAIM, PH_ROB, PH_HARD) and g.state["table"]["src"] == s:
            acts = g.legal_actions()
            g.step(next((x for x in (A_WIN, A_PASS, A_HARD_DECLINE) if x in acts), acts[0]))
        res = g.record
        deal[i] = res is not None and res["win_type"] == WIN_DISCARD and res["discarder"] == s
    return deal, ready


@pytest.mark.parametrize("rules", RULES)
def test_oracle_targets_equal_a_slow_reference(starts, rules):
    walls = [int(w) for w in np.random.default_rng(46).integers(0, 10**9, 5)]
    spec = f"learned:{starts[rules]}"
    buf, count, _ = label_hands(",".join([spec] * 4), rules, walls, n_det=1, frac=1.0, cap=4000, prune=Pruning(top_k=2),
                                oracle=True)
    states = _decision_states(starts[rules], rules, walls)
    assert count == len(states) > 50
    deal_ins = ready = turns = 0
    for i, (st, actions) in enumerate(states):
        n = len(actions)
        np.testing.assert_array_equal(buf["actions"][i, :n], actions)
        deal, rdy = _reference(rules, st, actions)
        np.testing.assert_array_equal(buf["deal"][i, :n], deal, err_msg=f"state {i}")
        np.testing.assert_array_equal(buf["ready"][i], rdy, err_msg=f"state {i}")
        assert (buf["deal"][i, n:] == -1).all()
        turns += int(st["table"]["phase"] == PH_TURN)
        deal_ins += int((deal == 1).sum())
        ready += int(rdy.sum())
    assert 0 < turns < count  # turns and claims both checked
    assert deal_ins > 0 and ready > 10  # the targets are not all one value


def test_oracle_changes_no_input_no_label_and_no_draw(starts):
    spec = f"learned:{starts[DEFAULT]}"
    args = (f"{spec},tuned:{DEFAULT},greedy,{spec}", DEFAULT, [7, 8, 9])
    kw = dict(n_det=3, frac=0.5, cap=800, seed=5, prune=Pruning(top_k=2))
    off, m_off, s_off = label_hands(*args, **kw)
    on, m_on, s_on = label_hands(*args, **kw, oracle=True)
    assert m_off == m_on > 0
    np.testing.assert_array_equal(s_off, s_on)
    for k in off:
        if k not in ("deal", "ready"):
            np.testing.assert_array_equal(off[k][:m_on], on[k][:m_on], err_msg=k)
    assert (off["deal"] == -1).all() and (off["ready"] == -1).all()
    assert (on["ready"][:m_on] >= 0).all() and ((on["deal"][:m_on] >= 0).sum(1) > 0).any()


def _torch_choices(torch, net, buf, m):
    from caishen.agents.exit import _choice, _tensors

    return _choice(torch, net, _tensors(torch, buf, np.arange(m)))


def test_aux_run_trains_its_heads_and_exports_the_plain_net(tmp_path):
    torch = pytest.importorskip("torch")
    from caishen.agents.exit import _new_heads, learn, settings
    from caishen.agents.learned_torch import ActionMLP

    kw = dict(hands=12, max_iterations=2, steps=5, eval_walls=0)
    learn(DEFAULT, tmp_path / "plain", seed=3, log=None, **settings(**kw))
    learn(DEFAULT, tmp_path / "aux", seed=3, log=None, **settings(**kw, aux=1.0))
    rows = list(csv.DictReader(open(tmp_path / "aux" / "curve.csv")))
    assert math.isnan(float(rows[0]["aux_loss"]))  # iteration 1: no update yet
    assert 0.0 < float(rows[1]["aux_loss"]) < 10.0
    assert all(math.isnan(float(r["aux_loss"])) for r in csv.DictReader(open(tmp_path / "plain" / "curve.csv")))
    ck = torch.load(tmp_path / "aux" / "checkpoint.pt", weights_only=True)
    fresh = _new_heads(torch, ActionMLP(), 3, 1e-3, "cpu")[0].state_dict()
    assert any(not torch.equal(ck["heads"][k], fresh[k]) for k in fresh)  # the heads learned
    plain, aux = (learned.load_learned(tmp_path / d / "learned.npz", DEFAULT) for d in ("plain", "aux"))
    assert plain[1]["arch"] == aux[1]["arch"] == learned.ARCH and plain[0].shape == aux[0].shape
    assert set(learned.unpack(plain[0])) == set(learned.unpack(aux[0])) == set(learned.MEMBERS)
    assert not np.array_equal(plain[0], aux[0])  # the heads' loss reached the net's hidden layers
    net = ActionMLP.from_file(tmp_path / "aux" / "learned.npz", DEFAULT)
    for k, v in ck["model"].items():
        torch.testing.assert_close(net.state_dict()[k], v)
    # the export ignores the heads: the same net with other heads writes the same file
    again = net.export(tmp_path / "again.npz")
    np.testing.assert_array_equal(learned.load_learned(again, DEFAULT)[0], aux[0])
    # the kernel plays the exported net as the torch net (the checkpoint's) chooses
    for d in ("plain", "aux"):
        path = tmp_path / d / "learned.npz"
        buf, m, _ = label_hands(",".join([f"learned:{path}"] * 4), DEFAULT, [21, 22], n_det=1, frac=1.0, cap=1000,
                                prune=Pruning(top_k=1))
        assert m > 20
        torch_net = ActionMLP.from_file(path, DEFAULT)
        np.testing.assert_array_equal(buf["base"][:m], _torch_choices(torch, torch_net, buf, m), err_msg=d)
    # a resumed run loads its heads and trains on with them
    res = learn(DEFAULT, tmp_path / "aux", seed=3, log=None, **settings(**{**kw, "max_iterations": 3}, aux=1.0))
    assert res["iterations"] == 3
    rows = list(csv.DictReader(open(tmp_path / "aux" / "curve.csv")))
    assert len(rows) == 3 and float(rows[1]["aux_loss"]) > 0 and float(rows[2]["aux_loss"]) > 0


@pytest.mark.parametrize("kw, word", [(dict(aux=-1.0), "aux"), (dict(aux=float("nan")), "aux"),
                                      (dict(aux=0.5, arch="conv"), "aux")])
def test_bad_aux_is_refused_by_name(tmp_path, kw, word):
    pytest.importorskip("torch")
    from caishen.agents.exit import learn, settings

    with pytest.raises(ValueError, match=word):
        learn(DEFAULT, tmp_path / "x", log=None, **settings(max_iterations=1, eval_walls=0, **kw))
    assert not (tmp_path / "x" / "checkpoint.pt").exists()


def test_a_buffer_from_before_the_oracle_has_no_targets():
    from caishen.agents.exit_store import _checked_buffer
    from caishen.sim.selfplay.labels import new_buffer

    buf = new_buffer(4)
    buf["n"][:] = 2
    buf["kept"][:, :2] = True
    old = {k: v[:, :2] if v.ndim > 1 and v.shape[1] == 40 else v for k, v in buf.items() if k not in ("deal", "ready")}
    got = _checked_buffer("buffer.npz", old, {"labelled": 4}, conv=False)
    assert got["deal"].shape == (4, 2) and (got["deal"] == -1).all() and (got["ready"] == -1).all()
    bad = {**got, "ready": np.full((4, 3), 2, np.int8)}
    with pytest.raises(ValueError, match="ready"):
        _checked_buffer("buffer.npz", bad, {"labelled": 4}, conv=False)
