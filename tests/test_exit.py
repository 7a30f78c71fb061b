"""Expert iteration (issue 26): the rollout labels (numba, no torch) and the training recipe (torch, skipped without).

- the labelled states' policy inputs are exactly what the learned bot reads at play time, and a redeal
  of the hidden tiles from the seat's view leaves them unchanged (no hidden information in them);
- the labels are paired: the base candidate's advantage is 0, the others are not all 0;
- step 0 of training plays exactly as the tuned bot (same hands, same records);
- a tiny run writes its curve, checkpoint and weights file, and resumes where it stopped.
"""

from __future__ import annotations

import csv

import numpy as np
import pytest

from caishen.sim.bots import learned
from caishen.sim.bots.policies import POLICY_GREEDY
from caishen.sim.bots.registry import load_tuned
from caishen.sim.rules.base import DEFAULT
from caishen.sim.selfplay.labels import label_hands

WALLS = [11, 12]


@pytest.fixture(scope="module")
def start_file(tmp_path_factory):
    w, _ = load_tuned(DEFAULT)
    return learned.save_learned(tmp_path_factory.mktemp("exit") / "start.npz", learned.from_tuned(w, rules=DEFAULT))


def _replay_inputs(path, walls):
    """Play ``walls`` (dealer wall % 4) with the learned bot in every seat, in Python over the kernels; at
    each decision of two or more candidates return its inputs, and the same inputs computed on a state whose
    tiles hidden from the seat are redealt (search._determinize)."""
    from caishen.sim.bots.search import _determinize
    from caishen.sim.engine import PH_DONE, SC_PHASE, SC_TO_ACT, _legal_mask, _reset, _seeded_wall, _step
    from caishen.sim.engine import engine_params, load_rules, new_state
    from caishen.sim.rng import _rng_seed
    from caishen.sim.tables import hand_tables

    row, _ = learned.load_learned(path)
    name, r = load_rules(DEFAULT, None)
    ep, rp, tabs = engine_params(name, r), r.params(), hand_tables()
    work = np.zeros((4, 34), np.int64)
    lx, ly = learned.new_scratch(), learned.new_scratch()
    states = new_state(2)
    st, root = states[0], states[1]
    rng = np.zeros(4, np.uint64)
    _rng_seed(rng, 5)
    ib = np.zeros((4, 160), np.int64)
    greedy_like = np.full(4, POLICY_GREEDY, np.int64)  # every opponent redealt with virtual turns
    real, redealt = [], []
    for wall in walls:
        _seeded_wall(wall, st)
        _reset(st, ep, rp, tabs, wall % 4)
        while st["sc"][SC_PHASE] != PH_DONE:
            _legal_mask(st, ep)
            n = learned._learned_scores(row, st, ep, tabs, st["mask"], work, lx)
            if n >= 2:
                real.append((lx[1][learned._R_CTX, :learned.N_CONTEXT].copy(), lx[6][:n].copy(), lx[2][:n].copy()))
                _determinize(root, st, int(st["sc"][SC_TO_ACT]), ep, rp, tabs, rng, ib, greedy_like)
                _legal_mask(root, ep)
                m = learned._learned_scores(row, root, ep, tabs, root["mask"], work, ly)
                redealt.append((ly[1][learned._R_CTX, :learned.N_CONTEXT].copy(), ly[6][:m].copy(), ly[2][:m].copy()))
                _legal_mask(st, ep)
            _step(st, ep, rp, tabs, int(learned._learned_action(row, st, ep, tabs, st["mask"], work, lx)))
    return real, redealt


def test_label_inputs_are_the_policys_and_read_no_hidden_tile(start_file):
    spec = f"learned:{start_file}"
    buf, count, stats = label_hands(",".join([spec] * 4), DEFAULT, WALLS, n_det=1, frac=1.0, cap=2000)
    real, redealt = _replay_inputs(start_file, WALLS)
    assert count == len(real) > 20
    assert stats[0] == stats[1] > count  # every seat is the learner; some decisions are the fixed rules'
    # a redeal of the hidden tiles changes nothing the policy reads
    changed = 0
    for (c, x, a), (c2, x2, a2) in zip(real, redealt):
        np.testing.assert_array_equal(c, c2)
        np.testing.assert_array_equal(x, x2)
        np.testing.assert_array_equal(a, a2)
    for i, (c, x, a) in enumerate(real):  # what the labels recorded is what the bot read
        n = len(a)
        assert buf["n"][i] == n
        np.testing.assert_array_equal(buf["ctx"][i], c)
        np.testing.assert_array_equal(buf["x"][i, :n], x)
        np.testing.assert_array_equal(buf["actions"][i, :n], a)
        assert not buf["x"][i, n:].any()
        changed += int(buf["adv"][i, :n].any())
    assert changed > 0  # the rollouts tell candidates apart


def test_labels_are_paired_on_the_base_choice(start_file):
    spec = f"learned:{start_file}"
    buf, count, _ = label_hands(f"{spec},tuned:{DEFAULT},greedy,greedy", DEFAULT, [3, 4, 5], n_det=4, frac=0.5,
                                cap=500, seed=1)
    assert count > 0
    rows = np.arange(count)
    np.testing.assert_array_equal(buf["adv"][rows, buf["base"][:count]], 0.0)
    assert (buf["base"][:count] < buf["n"][:count]).all()
    # the same seed gives the same labels; another seed other determinizations
    again, c2, _ = label_hands(f"{spec},tuned:{DEFAULT},greedy,greedy", DEFAULT, [3, 4, 5], n_det=4, frac=0.5,
                               cap=500, seed=1)
    assert c2 == count
    np.testing.assert_array_equal(again["adv"][:count], buf["adv"][:count])


@pytest.mark.parametrize("kw, word", [({"n_det": 0}, "n_det"), ({"frac": 1.5}, "frac"), ({"n_det": True}, "n_det")])
def test_label_hands_refuses_bad_arguments(start_file, kw, word):
    with pytest.raises(ValueError, match=word):
        label_hands(",".join([f"learned:{start_file}"] * 4), DEFAULT, [1], **kw)


def test_label_hands_needs_a_learned_seat():
    with pytest.raises(ValueError, match="no learned: seat"):
        label_hands("greedy,greedy,greedy,greedy", DEFAULT, [1])


def test_step0_plays_as_tuned(tmp_path):
    pytest.importorskip("torch")
    from caishen.agents.exit import initial_model
    from caishen.sim.selfplay.batch import play_batch

    path = initial_model(DEFAULT).export(tmp_path / "step0.npz")
    a = play_batch(60, 9, DEFAULT, policies=",".join([f"learned:{path}"] * 4))
    b = play_batch(60, 9, DEFAULT, policies=",".join([f"tuned:{DEFAULT}"] * 4))
    assert set(a) == set(b)
    for k in a:
        np.testing.assert_array_equal(a[k], b[k], err_msg=k)


def test_tiny_run_writes_curve_weights_and_resumes(tmp_path):
    torch = pytest.importorskip("torch")
    from caishen.agents.exit import learn
    from caishen.agents.learned_torch import ActionMLP

    out = tmp_path / "run"
    res = learn(DEFAULT, out, hands=12, max_iterations=2, steps=5, eval_walls=0, log=None)
    assert res["iterations"] == 2 and res["labelled"] > 0 and res["match"] is None
    with open(out / "curve.csv") as f:
        rows = list(csv.DictReader(f))
    assert [int(r["iteration"]) for r in rows] == [1, 2]
    assert float(rows[-1]["labelled_per_s"]) > 0
    # the exported bot is the checkpoint's net
    net = ActionMLP.from_file(out / "learned.npz", DEFAULT)
    ck = torch.load(out / "checkpoint.pt", weights_only=True)
    for k, v in ck["model"].items():
        torch.testing.assert_close(net.state_dict()[k], v)
    res = learn(DEFAULT, out, hands=12, max_iterations=3, steps=5, eval_walls=0, log=None)
    assert res["iterations"] == 3
    with open(out / "curve.csv") as f:
        assert [int(r["iteration"]) for r in csv.DictReader(f)] == [1, 2, 3]
    with pytest.raises(ValueError, match="rule set"):
        other = next(n for n in __import__("caishen.sim.rules", fromlist=["names"]).names() if n != DEFAULT)
        learn(other, out, max_iterations=4, eval_walls=0, log=None)


def test_shipped_learned_files_load_for_their_rule_set():
    """``learned:NAME`` of every rule set that ships one (issue 26) loads through the registry, for its rule set."""
    from caishen.sim import rules
    from caishen.sim.bots.registry import LEARNED_FILE, learned_path, parse

    shipped = [n for n in rules.names() if rules.get(n).data_path(LEARNED_FILE).is_file()]
    assert shipped  # the expert-iteration bot ships for the rule set it was trained and evaluated on
    for name in shipped:
        assert parse(f"learned:{name}").weights(name)[0].size > learned.N_ACTION
        _, hdr = learned.load_learned(learned_path(name), name)
        assert hdr["meta"]["from"] == "caishen learn"
