"""Expert iteration (issue 26): the rollout labels (numba, no torch) and the training recipe (torch, skipped without).

- the labelled states' policy inputs are exactly what the learned bot reads at play time, and a redeal
  of the hidden tiles from the seat's view leaves them unchanged (no hidden information in them);
- the labels are paired: the base candidate's advantage is 0, the others are not all 0;
- a conv learner's labels also store its inputs (planes, exactly, in quarters; each candidate's score
  index), and the torch conv on them takes the kernel's choices; an MLP learner's buffer has neither;
- step 0 of training plays exactly as the tuned bot (same hands, same records);
- a tiny run writes its curve, checkpoint and weights file, and resumes where it stopped; so does a
  tiny ``--arch conv`` run (its weights play a match; its step 0 plays as tuned), and a resume with
  another ``--arch`` is refused;
- the advantages are divided by the rule set's points scale (Kaihua 1), and the curve's per-decision
  diagnostics are fractions; the greedy rule they read from the features is the greedy kernel's choice.
"""

from __future__ import annotations

import csv

import numpy as np
import pytest

from learned_play import learned_decisions, row_decisions
from caishen.sim.bots import learned
from caishen.sim.bots.policies import POLICY_GREEDY, new_work
from caishen.sim.bots.registry import load_tuned
from caishen.sim.rules.base import DEFAULT
from caishen.sim.selfplay.labels import label_hands

WALLS = [11, 12]


@pytest.fixture(scope="module")
def start_file(tmp_path_factory):
    w, _ = load_tuned(DEFAULT)
    return learned.save_learned(tmp_path_factory.mktemp("exit") / "start.npz", learned.from_tuned(w, rules=DEFAULT))


def _replay_inputs(path, walls):
    """At each decision of two or more candidates of :func:`learned_play.learned_decisions`, its inputs, and the same
    inputs computed on a state whose tiles hidden from the seat are redealt (search._determinize)."""
    from caishen.sim.bots.search import _determinize
    from caishen.sim.engine import _legal_mask, new_state
    from caishen.sim.rng import _rng_seed

    row, _ = learned.load_learned(path)
    work = new_work()
    ly = learned.new_scratch()
    root = new_state()[0]
    rng = np.zeros(4, np.uint64)
    _rng_seed(rng, 5)
    ib = np.zeros((4, 160), np.int64)
    greedy_like = np.full(4, POLICY_GREEDY, np.int64)  # every opponent redealt with virtual turns
    real, redealt = [], []
    for st, ep, rp, tabs, lx, n in learned_decisions(path, walls):
        real.append((lx[1][learned._R_CTX, :learned.N_CONTEXT].copy(), lx[6][:n].copy(), lx[2][:n].copy()))
        _determinize(root, st, int(st["table"]["to_act"]), ep, rp, tabs, rng, ib, greedy_like)
        _legal_mask(root, ep)
        m = learned._learned_scores(row, root, ep, tabs, root["mask"], work, ly)
        redealt.append((ly[1][learned._R_CTX, :learned.N_CONTEXT].copy(), ly[6][:m].copy(), ly[2][:m].copy()))
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


@pytest.fixture(scope="module")
def conv_file(tmp_path_factory):
    """An ``action-conv`` net of the tuned weights with a random head (it does not play as tuned)."""
    w, _ = load_tuned(DEFAULT)
    net = learned.conv_from_tuned(w, (8, 8), 3, DEFAULT)
    net["head_w"] = np.random.default_rng(4).normal(0.0, 0.5, net["head_w"].shape)
    return learned.save_learned(tmp_path_factory.mktemp("exit") / "conv.npz", net)


def _replay_conv_inputs(path, walls):
    """At each decision of two or more candidates of :func:`learned_play.learned_decisions` (the conv bot ``path``), its
    planes ``lx[7]`` and candidates' scores ``lx[10][:n]``."""
    return [(lx[7].copy(), lx[10][:n].copy()) for _, _, _, _, lx, n in learned_decisions(path, walls)]


def test_conv_labels_store_its_inputs(conv_file, start_file):
    from caishen.sim.selfplay.labels import KINDS_SCALE, new_buffer

    buf, count, _ = label_hands(",".join([f"learned:{conv_file}"] * 4), DEFAULT, WALLS, n_det=1, frac=1.0, cap=2000)
    real = _replay_conv_inputs(conv_file, WALLS)
    assert count == len(real) > 20
    assert buf["kinds"].dtype == np.uint8 and buf["cand"].dtype == np.int8
    for i, (k, c) in enumerate(real):
        q = k * KINDS_SCALE
        np.testing.assert_array_equal(q, np.round(q))  # the planes are whole quarters: stored exactly
        assert q.min() >= 0 and q.max() <= 255
        np.testing.assert_array_equal(buf["kinds"][i], q)
        np.testing.assert_array_equal(buf["cand"][i, :len(c)], c)
        assert (buf["cand"][i, len(c):] == -1).all()
        assert buf["kinds"][i].any()
    # an MLP learner's buffer stores what it stored before (and the oracle targets): no conv inputs
    mlp, _, _ = label_hands(",".join([f"learned:{start_file}"] * 4), DEFAULT, [1], n_det=1, frac=0.2, cap=50)
    assert set(mlp) == {"ctx", "x", "n", "actions", "adv", "base", "claim", "kept", "deal", "ready"}
    with pytest.raises(ValueError, match="both architectures"):
        label_hands(f"learned:{conv_file},learned:{start_file},greedy,greedy", DEFAULT, [1])
    with pytest.raises(ValueError, match="lacks the conv's inputs"):
        label_hands(f"learned:{conv_file},greedy,greedy,greedy", DEFAULT, [1], buf=new_buffer(10))
    with pytest.raises(ValueError, match="has the conv's inputs"):
        label_hands(f"learned:{start_file},greedy,greedy,greedy", DEFAULT, [1], buf=new_buffer(10, conv=True))


def test_torch_conv_on_the_stored_inputs_takes_the_kernels_choices(conv_file):
    torch = pytest.importorskip("torch")
    from caishen.agents.exit import _choice, _tensors
    from caishen.agents.learned_torch import ActionConv

    buf, count, _ = label_hands(f"learned:{conv_file},tuned:{DEFAULT},greedy,learned:{conv_file}", DEFAULT,
                                [7, 8, 9], n_det=1, frac=1.0, cap=2000)
    assert count > 20
    batch = _tensors(torch, buf, np.arange(count))
    assert len(batch) == 6  # x, kinds, cand, adv, kept, valid
    pick = _choice(torch, ActionConv.from_file(conv_file, DEFAULT), batch)
    np.testing.assert_array_equal(pick, buf["base"][:count])
    flat = ActionConv.from_file(conv_file, DEFAULT)
    with torch.no_grad():
        flat.head.weight.zero_()
    # the head matters: without it (the tuned bot's choices) some states go otherwise
    assert (_choice(torch, flat, batch) != buf["base"][:count]).any()


@pytest.mark.parametrize("kw, word", [({"n_det": 0}, "n_det"), ({"frac": 1.5}, "frac"), ({"n_det": True}, "n_det")])
def test_label_hands_refuses_bad_arguments(start_file, kw, word):
    with pytest.raises(ValueError, match=word):
        label_hands(",".join([f"learned:{start_file}"] * 4), DEFAULT, [1], **kw)


def test_label_hands_needs_a_learned_seat():
    with pytest.raises(ValueError, match="no learned: seat"):
        label_hands("greedy,greedy,greedy,greedy", DEFAULT, [1])


def test_the_label_rows_are_the_buffers_arrays():
    """The kernel's named rows (``LabelRows``) are the buffer's arrays, field for key, with the conv's inputs."""
    from caishen.sim.selfplay.labels import LabelRows, new_buffer

    buf = new_buffer(3, conv=True)
    assert list(LabelRows._fields) == list(buf)
    rows = LabelRows(**buf)
    assert all(getattr(rows, k) is buf[k] for k in buf)


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
    from caishen.agents.exit import learn, settings
    from caishen.agents.learned_torch import ActionMLP

    out = tmp_path / "run"
    res = learn(DEFAULT, out, log=None, **settings(hands=12, max_iterations=2, steps=5, eval_walls=0))
    assert res["iterations"] == 2 and res["labelled"] > 0 and res["match"] is None
    with open(out / "curve.csv") as f:
        rows = list(csv.DictReader(f))
    assert [int(r["iteration"]) for r in rows] == [1, 2]
    assert float(rows[-1]["labelled_per_s"]) > 0
    from caishen.agents.exit import DIAGNOSTICS
    assert set(DIAGNOSTICS) == {"agree_tuned", "agree_greedy", "shanten_up"}
    for r in rows:  # the per-decision diagnostics are there and are fractions
        for k in DIAGNOSTICS:
            assert 0.0 <= float(r[k]) <= 1.0, (k, r[k])
    assert float(rows[0]["agree_tuned"]) == 1.0  # iteration 1 plays the start, which plays as tuned
    assert float(rows[0]["agree_greedy"]) < 1.0  # tuned is not greedy: the column can tell them apart
    with np.load(out / "buffer.npz") as z:  # the stored states keep as many candidate columns as they fill
        assert z["x"].shape[1] == z["adv"].shape[1] == max(2, int(z["n"].max())) < 40 and "ctx" in z.files
    # the exported bot is the checkpoint's net
    net = ActionMLP.from_file(out / "learned.npz", DEFAULT)
    ck = torch.load(out / "checkpoint.pt", weights_only=True)
    for k, v in ck["model"].items():
        torch.testing.assert_close(net.state_dict()[k], v)
    res = learn(DEFAULT, out, log=None, **settings(hands=12, max_iterations=3, steps=5, eval_walls=0))
    assert res["iterations"] == 3
    with open(out / "curve.csv") as f:
        assert [int(r["iteration"]) for r in csv.DictReader(f)] == [1, 2, 3]
    with pytest.raises(ValueError, match="rule set"):
        other = next(n for n in __import__("caishen.sim.rules", fromlist=["names"]).names() if n != DEFAULT)
        learn(other, out, log=None, **settings(max_iterations=4, eval_walls=0))


def test_conv_step0_plays_as_tuned(tmp_path):
    pytest.importorskip("torch")
    from caishen.agents.exit import initial_model
    from caishen.sim.selfplay.batch import play_batch

    model = initial_model(DEFAULT, arch="conv")
    assert type(model).__name__ == "ActionConv" and model.channels == (16, 16)
    path = model.export(tmp_path / "step0.npz")
    a = play_batch(60, 9, DEFAULT, policies=",".join([f"learned:{path}"] * 4))
    b = play_batch(60, 9, DEFAULT, policies=",".join([f"tuned:{DEFAULT}"] * 4))
    assert set(a) == set(b)
    for k in a:
        np.testing.assert_array_equal(a[k], b[k], err_msg=k)
    with pytest.raises(ValueError, match="arch 'cnn'"):
        initial_model(DEFAULT, arch="cnn")


def test_tiny_conv_run_plays_a_match_and_refuses_another_arch(tmp_path):
    torch = pytest.importorskip("torch")
    from caishen.agents.exit import evaluate, learn, settings
    from caishen.agents.learned_torch import ActionConv

    out = tmp_path / "run"
    res = learn(DEFAULT, out, log=None, **settings(hands=12, max_iterations=2, steps=5, eval_walls=0, arch="conv",
                                                   channels=(4, 4)))
    assert res["iterations"] == 2 and res["labelled"] > 0
    net = ActionConv.from_file(out / "learned.npz", DEFAULT)
    assert net.channels == (4, 4)
    ck = torch.load(out / "checkpoint.pt", weights_only=True)
    assert ck["arch"] == "conv" and list(ck["channels"]) == [4, 4]
    for k, v in ck["model"].items():
        torch.testing.assert_close(net.state_dict()[k], v)
    assert not torch.equal(ck["model"]["head.weight"], ck["model0"]["head.weight"])  # it trained
    with np.load(out / "buffer.npz") as z:
        assert z["kinds"].dtype == np.uint8 and len(z["kinds"]) == len(z["n"]) == res["labelled"]
    summary = evaluate(out / "learned.npz", DEFAULT, 2, 5, tmp_path / "match", log=None)
    assert summary["walls_done"] == 2
    res = learn(DEFAULT, out, log=None, **settings(hands=12, max_iterations=3, steps=5, eval_walls=0, arch="conv"))
    assert res["iterations"] == 3 and ActionConv.from_file(out / "learned.npz").channels == (4, 4)
    with pytest.raises(ValueError, match="checkpoint of --arch conv, not mlp"):
        learn(DEFAULT, out, log=None, **settings(max_iterations=4, eval_walls=0))
    mlp = tmp_path / "mlp"
    learn(DEFAULT, mlp, log=None, **settings(hands=6, max_iterations=1, steps=1, eval_walls=0))
    with pytest.raises(ValueError, match="checkpoint of --arch mlp, not conv"):
        learn(DEFAULT, mlp, log=None, **settings(max_iterations=2, eval_walls=0, arch="conv"))


def test_shipped_learned_files_load_for_their_rule_set():
    """``learned:NAME`` of every rule set that ships one (issue 26) loads through the registry, for its rule set."""
    from caishen.sim import rules
    from caishen.sim.bots.registry import LEARNED_FILE, learned_path, parse

    shipped = [n for n in rules.names() if rules.get(n).data_path(LEARNED_FILE).is_file()]
    # the expert-iteration bot ships for the rule sets it was trained and evaluated on
    # (benchmarks/learn_kaihua.md, benchmarks/learn_jiating.md)
    assert {"kaihua", "jiating"} <= set(shipped)
    for name in shipped:
        assert parse(f"learned:{name}").weights(name)[0].size > learned.N_ACTION
        _, hdr = learned.load_learned(learned_path(name), name)
        assert hdr["meta"]["from"] == "caishen learn"


def _greedy_states(rules, walls):
    """Play ``walls`` with the tuned-start learned bot in every seat (in Python over the kernels); at each
    decision of two or more candidates return its features, its candidates, whether it is a claim, and the
    candidate the greedy kernel (policies._choose_action) takes there (-1: none of them, e.g. a kong)."""
    from caishen.sim.bots.policies import _choose_action
    from caishen.sim.engine import A_DECLARE, A_DISCARD, PH_TURN

    w, _ = load_tuned(rules)
    row = learned.pack(learned.from_tuned(w, rules=rules))
    gwork = new_work()
    xs, ns, claims, kernel = [], [], [], []
    for st, ep, rp, tabs, lx, n in row_decisions(row, walls, rules):
        g = int(_choose_action(POLICY_GREEDY, 0, st, ep, rp, tabs, st["mask"], gwork))
        turn = st["table"]["phase"] == PH_TURN
        if turn and A_DECLARE <= g < A_DECLARE + 34:  # a 架听 declaration with its discard (J-4.1)
            g = A_DISCARD + g - A_DECLARE
        acts = list(lx[2][:n])
        x = np.zeros((learned.MAX_CANDIDATES, learned.N_ACTION))
        x[:n] = lx[6][:n]
        xs.append(x)
        ns.append(n)
        claims.append(not turn)
        kernel.append(acts.index(g) if g in acts else -1)
    return np.array(xs), np.array(ns), np.array(claims), np.array(kernel)


@pytest.mark.parametrize("rules", ["kaihua", "jiating"])
def test_greedy_choice_from_features_is_the_greedy_kernels(rules):
    from caishen.agents.exit import greedy_choice

    x, n, claim, kernel = _greedy_states(rules, range(20, 32))
    assert len(n) > 200 and claim.any() and (~claim).any()
    ours = greedy_choice(x, n, claim)
    assert ((ours >= 0) & (ours < n)).all()
    agree = ours == kernel
    # exact (also on all 10,540 Kaihua and 13,113 Jiating states of walls 100..399, checked once)
    assert agree.all(), f"{rules}: {agree.mean():.4f} of {len(n)} (claims {agree[claim].mean():.4f})"


def test_diagnostics_count_what_they_say():
    from caishen.agents.exit import diagnostics

    x = np.zeros((3, learned.MAX_CANDIDATES, learned.N_ACTION))
    x[0, :3, 0] = [2, 1, 1]  # turn: shanten left per discard
    x[0, :3, 1] = [0.5, 0.4, 0.3]  # live effective / 10: greedy takes 1
    x[1, :2, 0] = [1, 1]
    x[1, :2, 1] = [0.2, 0.2]  # a full tie: greedy takes the later kind
    x[2, 1, 13] = 1.0  # claim: the pong lowers the shanten
    buf = {"x": x, "n": np.array([3, 2, 2]), "claim": np.array([False, False, True])}
    d = diagnostics(buf, np.array([0, 1, 1]), np.array([0, 0, 1]))
    assert d == {"agree_tuned": 2 / 3, "agree_greedy": 2 / 3, "shanten_up": 0.5}
    assert np.isnan(diagnostics(buf, np.array([], np.int64), np.array([], np.int64))["agree_tuned"])


def test_advantages_are_divided_by_the_rule_sets_scale():
    torch = pytest.importorskip("torch")
    from caishen.agents.exit import _loss, _tensors, advantage_scale, initial_model
    from caishen.sim import rules

    assert advantage_scale("kaihua") == 1.0  # the regime the defaults were tuned in
    assert advantage_scale("jiating") == rules.get("jiating").reward_scale / rules.get("kaihua").reward_scale > 1
    with pytest.raises(ValueError, match="nope"):
        advantage_scale("nope")
    buf, m, _ = label_hands(",".join([f"learned:{_start('jiating')}"] * 4), "jiating", [5], n_det=2, frac=0.5,
                            cap=200)
    assert m > 2
    model = initial_model("jiating")
    with torch.no_grad():  # a perturbed net: the policy-gradient term is not 0
        for p in model.parameters():
            p.add_(0.05 * torch.randn(p.shape, dtype=p.dtype, generator=torch.Generator().manual_seed(1)))
    batch = _tensors(torch, buf, np.arange(m))
    c = advantage_scale("jiating")
    scaled = (batch[0], batch[1], batch[2] * c, batch[3], batch[4])
    a = _loss(torch, model, initial_model("jiating"), scaled, 1.0, 1.0, c)[0]
    b = _loss(torch, model, initial_model("jiating"), batch, 1.0, 1.0, 1.0)[0]
    torch.testing.assert_close(a, b)
    d = _loss(torch, model, initial_model("jiating"), batch, 1.0, 1.0, c)[0]
    assert not torch.isclose(d, b)
    from caishen.agents.exit import learn, settings
    with pytest.raises(ValueError, match="adv_scale"):
        learn("jiating", "unused", log=None, **settings(adv_scale=0.0))


def _start(rules):
    import tempfile

    w, _ = load_tuned(rules)
    return learned.save_learned(tempfile.mkdtemp() + "/start.npz", learned.from_tuned(w, rules=rules))


def test_label_iteration_in_parts_is_each_part_labelled_alone(start_file):
    """``--workers N`` (issue 26, "fast enough to matter"): an iteration's walls in N contiguous parts, each
    labelled by a worker process with its own seed, give exactly the labels of those parts labelled alone, in
    order; one part gives the labels of one ``label_hands`` call with the iteration's seed (a one-worker run
    labels as before)."""
    import concurrent.futures
    import multiprocessing

    from caishen.agents.exit import LabelConfig, _label_part, _part_seed, label_iteration
    from caishen.sim.selfplay.labels import new_buffer

    lineup = f"learned:{start_file},tuned:{DEFAULT},greedy,learned:{start_file}"
    walls = np.arange(6) + 123
    cfg = LabelConfig(n_det=2, frac=0.5, top_k=0)
    one, m1, s1, c1 = label_iteration(lineup, DEFAULT, walls, cfg, 77, False)
    ref, mr, sr = label_hands(lineup, DEFAULT, walls, n_det=2, frac=0.5, cap=48, seed=77, buf=new_buffer(48))
    assert m1 == mr > 0 and (s1 == sr).all()
    assert set(one) == set(ref) and all((one[k] == ref[k][:mr]).all() for k in one)
    with concurrent.futures.ProcessPoolExecutor(2, mp_context=multiprocessing.get_context("spawn")) as pool:
        two, m2, s2, c2 = label_iteration(lineup, DEFAULT, walls, cfg, 77, False, None, pool, 2)
    a, ma, sa, ca = _label_part(lineup, DEFAULT, walls[:3], cfg, _part_seed(77, 0), False)
    b, mb, sb, cb = _label_part(lineup, DEFAULT, walls[3:], cfg, _part_seed(77, 1), False)
    assert m2 == ma + mb > 0 and (s2 == sa + sb).all() and s2[0] == s1[0]  # the same hands: the same decisions
    assert min(c1, c2, ca, cb) > 0  # each part's CPU seconds (the --cpu-minutes budget counts the workers')
    for k in two:
        assert (two[k] == np.concatenate([a[k], b[k]])).all(), k
    assert _part_seed(77, 1) != 77 and _part_seed(77, 0) == 77


def test_tiny_run_with_two_workers(tmp_path):
    pytest.importorskip("torch")
    from caishen.agents.exit import learn, settings

    res = learn(DEFAULT, tmp_path / "w2", log=None,
                **settings(hands=8, max_iterations=2, steps=3, eval_walls=0, workers=2))
    assert res["iterations"] == 2 and res["labelled"] > 0
    with pytest.raises(ValueError, match="workers"):
        learn(DEFAULT, tmp_path / "w0", log=None, **settings(max_iterations=1, eval_walls=0, workers=0))


def test_label_and_cpu_budgets_end_the_run_and_a_rerun_counts_on(tmp_path):
    """``--labels N`` ends the run at the first iteration whose labelled states reach N, and a rerun of it
    resumes with the budget spent (no new iteration); ``--cpu-minutes`` counts the run's CPU seconds (the
    workers' too); each iteration's line gives the ETA of the first budget; bad budgets are named before
    anything runs."""
    pytest.importorskip("torch")
    from caishen.agents.exit import learn, settings

    lines = []
    out = tmp_path / "labels"
    res = learn(DEFAULT, out, log=lines.append, **settings(hands=8, labels=4, steps=2, eval_walls=0))
    with open(out / "curve.csv") as f:
        done = [int(r["labelled"]) for r in csv.DictReader(f)]
    assert res["labelled"] == done[-1] >= 4 and all(n < 4 for n in done[:-1]) and res["iterations"] == len(done)
    assert any("budget labels 4" in x for x in lines) and sum("ETA" in x and "labels budget" in x for x in lines)
    again = learn(DEFAULT, out, log=None, **settings(hands=8, labels=4, steps=2, eval_walls=0))
    assert again["iterations"] == res["iterations"] and again["cpu_seconds"] == res["cpu_seconds"] > 0
    res = learn(DEFAULT, tmp_path / "cpu", log=None,
                **settings(hands=4, cpu_minutes=1e-6, steps=1, eval_walls=0, workers=2))
    assert res["iterations"] == 1 and res["cpu_seconds"] > 0
    for kw, word in (({"labels": 0}, "labels 0"), ({"labels": 5, "frac": 0.0}, "frac > 0"),
                     ({"cpu_minutes": -1.0}, "cpu_minutes -1"), ({"cpu_minutes": float("nan")}, "cpu_minutes")):
        with pytest.raises(ValueError, match=word):
            learn(DEFAULT, tmp_path / "bad", log=None, **settings(eval_walls=0, **kw))
    assert not (tmp_path / "bad").exists()


def test_buffer_keeps_the_columns_its_states_fill(monkeypatch):
    """``buffer.npz`` (issue 26): the per-candidate arrays are cut to the most candidates of a stored state
    and padded when a newer state has more; the values survive, the newest BUFFER states are kept, and a
    conv buffer drops the context its net does not read."""
    from caishen.agents import exit as ex

    def rows(ns, conv=False, start=0):
        m = len(ns)
        r = {"n": np.array(ns, np.int64), "x": np.zeros((m, 40, 17)), "adv": np.zeros((m, 40)),
             "actions": np.zeros((m, 40), np.int64), "ctx": np.ones((m, 83)), "base": np.zeros(m, np.int64),
             "claim": np.zeros(m, bool)}
        for i, n in enumerate(ns):
            r["x"][i, :n] = start + i + 1
            r["adv"][i, :n] = -(start + i + 1)
            r["actions"][i, :n] = np.arange(n) + 7
        if conv:
            r["kinds"] = np.zeros((m, 15, 34), np.uint8)
            r["cand"] = np.full((m, 40), -1, np.int8)
            for i, n in enumerate(ns):
                r["cand"][i, :n] = np.arange(n)
        return r

    buf = ex._append(None, rows([3, 2, 5, 9], start=0), 3)  # the fourth row is not one of the m = 3
    assert buf["x"].shape == (3, 5, 17) and buf["adv"].shape == buf["actions"].shape == (3, 5)
    buf = ex._append(buf, rows([7, 2], start=10), 2)
    assert buf["x"].shape == (5, 7, 17) and len(buf["n"]) == 5
    assert (buf["n"] == [3, 2, 5, 7, 2]).all()
    for i, (n, v) in enumerate(zip(buf["n"], [1, 2, 3, 11, 12])):
        assert (buf["x"][i, :n] == v).all() and (buf["x"][i, n:] == 0).all()
        assert (buf["adv"][i, :n] == -v).all() and (buf["actions"][i, :n] == np.arange(n) + 7).all()
    conv = ex._append(None, rows([1, 4], conv=True), 2)
    assert "ctx" not in conv and conv["cand"].shape == (2, 4) and (conv["cand"][0] == [0, -1, -1, -1]).all()
    conv = ex._append(conv, rows([6], conv=True), 1)
    assert conv["cand"].shape == (3, 6) and (conv["cand"][1] == [0, 1, 2, 3, -1, -1]).all()
    from caishen.agents import exit_store

    monkeypatch.setattr(exit_store, "BUFFER", 4)
    kept = ex._append(buf, rows([2, 2], start=20), 2)
    assert list(kept["x"][:, 0, 0]) == [11, 12, 21, 22] and kept["x"].shape[1] == 7  # the newest 4


def test_device_is_checked_before_anything_runs(tmp_path):
    """``--device`` (issue 26): auto, cpu, cuda[:N]; a device torch does not find is one clear error naming
    it, before the run folder is made."""
    torch = pytest.importorskip("torch")
    from caishen.agents.exit import device_of, learn, settings

    assert device_of(torch, "cpu").type == "cpu"
    assert device_of(torch, "auto").type == ("cuda" if torch.cuda.is_available() else "cpu")
    for bad in ("tpu", "cuda:x", "CUDA", ""):
        with pytest.raises(ValueError, match=f"device {bad!r}: must be"):
            device_of(torch, bad)
    missing = "cuda" if not torch.cuda.is_available() else f"cuda:{torch.cuda.device_count()}"
    with pytest.raises(ValueError, match=f"device {missing!r}"):
        learn(DEFAULT, tmp_path / "gpu", log=None, **settings(max_iterations=1, eval_walls=0, device=missing))
    assert not (tmp_path / "gpu").exists()
    res = learn(DEFAULT, tmp_path / "cpu", log=None,
                **settings(hands=6, max_iterations=1, steps=2, eval_walls=0, device="cpu"))
    assert res["iterations"] == 1


def test_learn_command_names_a_bad_device(tmp_path):
    pytest.importorskip("torch")
    import subprocess
    import sys

    r = subprocess.run([sys.executable, "-m", "caishen", "learn", "--out", str(tmp_path / "x"), "--device", "tpu"],
                       capture_output=True, text=True, timeout=300)
    assert r.returncode == 2 and "device 'tpu'" in r.stderr and "Traceback" not in r.stderr, r.stderr


def test_a_resumed_run_evaluates_its_new_net(tmp_path):
    """A rerun of the same ``caishen learn`` command resumes, trains on and evaluates the new ``learned.npz``
    (the earlier evaluation in ``eval/`` is of another net: it is replaced, not refused); a rerun that trains
    nothing more keeps it."""
    pytest.importorskip("torch")
    from caishen.agents.exit import learn, settings

    out = tmp_path / "run"
    first = learn(DEFAULT, out, log=None, **settings(hands=6, max_iterations=1, steps=2, eval_walls=2))
    assert first["match"]["walls_done"] == 2
    again = learn(DEFAULT, out, log=None, **settings(hands=6, max_iterations=2, steps=2, eval_walls=2))
    assert again["iterations"] == 2 and again["match"]["walls_done"] == 2
    assert again["match"]["policies"] == first["match"]["policies"]
    same = learn(DEFAULT, out, log=None, **settings(hands=6, max_iterations=2, steps=2, eval_walls=2))
    assert same["iterations"] == 2 and same["match"] == again["match"]
