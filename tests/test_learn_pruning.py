"""Pruned labels for ``caishen learn`` (issue 46, item 4): candidates cut to the net's top k before the rollouts.

- :func:`caishen.sim.selfplay.labels._keep` (numba) keeps exactly what a slow pure-Python reference keeps
  (the top k logits with the bot's ties, the net's own choice, the start's choice), on random inputs;
- the labels of the kept candidates are the unpruned labels of those candidates, number for number (the
  same determinizations: pruning changes which candidates are rolled out, never their estimates), and the
  rollouts are the kept candidates' only; ``spend_saved`` spends the saved rollouts on more determinizations;
- the loss reads no label of a pruned candidate, and equals the unpruned loss when nothing is pruned;
- a buffer from before pruning (no ``kept``) reads as all kept; the settings group into named configs;
- a tiny pruned run writes a weights file that plays.
"""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings as hsettings
from hypothesis import strategies as hs

from caishen.sim.bots import learned
from caishen.sim.bots.registry import load_tuned
from caishen.sim.rules.base import DEFAULT
from caishen.sim.selfplay.labels import Pruning, _keep, label_hands, new_buffer

WALLS = [21, 22, 23]


def keep_reference(logit, x, n, base, turn, top_k, anchor):
    """The kept candidates, slowly: sort by logit (ties: later first on a turn, earlier on a claim), take
    ``top_k``, add ``base`` and the anchor's choice (the same ties); everything when ``top_k`` is 0 or >= n."""
    if top_k <= 0 or n <= top_k:
        return set(range(n))

    def order(v):
        return sorted(range(n), key=lambda i: (-v[i], -i if turn else i))

    kept = set(order(logit)[:top_k]) | {base}
    if len(anchor):
        kept.add(order([sum(float(a) * float(b) for a, b in zip(anchor, x[i])) for i in range(n)])[0])
    return kept


@hsettings(max_examples=300, deadline=None)
@given(hs.integers(1, 40), hs.integers(0, 40), hs.booleans(), hs.booleans(), hs.integers(0, 2**32 - 1),
       hs.booleans())
def test_keep_is_the_reference(n, top_k, turn, with_anchor, seed, ties):
    rng = np.random.default_rng(seed)
    # few distinct values when ``ties``: the tie rules matter
    logit = (rng.integers(0, 3, 40) if ties else rng.normal(size=40)).astype(np.float64)
    x = (rng.integers(0, 2, (40, 17)) if ties else rng.normal(size=(40, 17))).astype(np.float64)
    anchor = (rng.integers(-1, 2, 17).astype(np.float64) if with_anchor else np.zeros(0))
    base = int(rng.integers(0, n))
    kept = np.zeros(40, np.bool_)
    count = _keep(logit, x, n, base, turn, top_k, anchor, kept)
    want = keep_reference(logit, x, n, base, turn, top_k, anchor)
    assert set(np.flatnonzero(kept[:n])) == want and count == len(want)
    assert not kept[n:].any()


@pytest.fixture(scope="module")
def lineup(tmp_path_factory):
    w, _ = load_tuned(DEFAULT)
    path = learned.save_learned(tmp_path_factory.mktemp("prune") / "start.npz", learned.from_tuned(w, rules=DEFAULT))
    return f"learned:{path},tuned:{DEFAULT},greedy,greedy", w


def test_pruned_labels_are_the_unpruned_labels_of_the_kept_candidates(lineup):
    spec, w = lineup
    full, m, s_full = label_hands(spec, DEFAULT, WALLS, n_det=3, frac=0.5, cap=200, seed=4)
    cut, m2, s_cut = label_hands(spec, DEFAULT, WALLS, n_det=3, frac=0.5, cap=200, seed=4, prune=Pruning(top_k=2, anchor=w))
    assert m == m2 > 5 and (s_full[:2] == s_cut[:2]).all()  # the same hands, the same states sampled
    rows = np.arange(m)
    n, kept = full["n"][:m], cut["kept"][:m]
    assert full["kept"][:m].sum(1).tolist() == n.tolist()  # unpruned: every candidate kept
    assert kept[rows, cut["base"][:m]].all() and (kept.sum(1) <= 4).all() and (kept.sum(1) < n).any()
    # the start's choice (tuned's: the anchor's largest score; step 0's net is tuned, so it is base too)
    assert s_full[2] == 3 * n.sum() and s_cut[2] == 3 * kept.sum()  # rollouts: kept candidates x determinizations
    np.testing.assert_array_equal(cut["adv"][:m][kept], full["adv"][:m][kept])
    assert (cut["adv"][:m][~kept] == 0).all() and full["adv"][:m][kept & (np.arange(40) != cut["base"][:m, None])].any()
    for k in ("x", "ctx", "n", "actions", "base", "claim"):
        np.testing.assert_array_equal(cut[k][:m], full[k][:m], err_msg=k)


def test_spend_saved_rolls_out_as_many_as_unpruned(lineup):
    spec, w = lineup
    # frac 1: every state labelled whatever the stream (more determinizations draw more of it)
    _, m, s_full = label_hands(spec, DEFAULT, WALLS[:1], n_det=2, frac=1.0, cap=200, seed=4)
    buf, m2, s_sp = label_hands(spec, DEFAULT, WALLS[:1], n_det=2, frac=1.0, cap=200, seed=4,
                                prune=Pruning(top_k=2, spend_saved=True, anchor=w))
    n, kept = buf["n"][:m2], buf["kept"][:m2].sum(1)
    assert m == m2 > 3 and s_sp[2] == ((2 * n) // kept * kept).sum()  # N * n // kept determinizations each
    assert s_full[2] * 0.5 < s_sp[2] <= s_full[2]
    np.testing.assert_array_equal(buf["adv"][np.arange(m2), buf["base"][:m2]], 0.0)


@pytest.mark.parametrize("kw, word", [({"top_k": -1}, "top_k"), ({"top_k": 41}, "top_k"), ({"top_k": 1.5}, "top_k"),
                                      ({"anchor": np.ones(3)}, "anchor"), ({"anchor": np.full(17, np.nan)}, "anchor")])
def test_label_hands_refuses_bad_pruning(lineup, kw, word):
    with pytest.raises(ValueError, match=word):
        label_hands(lineup[0], DEFAULT, [1], prune=Pruning(**kw))
    with pytest.raises(ValueError, match="Pruning"):
        label_hands(lineup[0], DEFAULT, [1], prune={"top_k": 2})


def test_loss_reads_no_label_of_a_pruned_candidate():
    torch = pytest.importorskip("torch")
    from caishen.agents.exit import _loss, _tensors, initial_model

    rng = np.random.default_rng(0)
    buf = new_buffer(64)
    buf["n"][:] = rng.integers(2, 9, 64)
    for i, n in enumerate(buf["n"]):
        buf["x"][i, :n] = rng.normal(size=(n, 17))
        buf["adv"][i, :n] = rng.normal(size=n)
        buf["kept"][i, :n] = True
    buf["ctx"][:] = rng.normal(size=buf["ctx"].shape)
    model, model0 = initial_model(DEFAULT), initial_model(DEFAULT)
    with torch.no_grad():
        model.fc3.weight.normal_()  # a net away from its start: the KL is not 0
    idx = np.arange(64)
    full = _loss(torch, model, model0, _tensors(torch, buf, idx), 1.0, 1.0)[0]
    no_col = {k: v for k, v in buf.items() if k != "kept"}  # a buffer from before pruning: all kept
    torch.testing.assert_close(_loss(torch, model, model0, _tensors(torch, no_col, idx), 1.0, 1.0)[0], full)
    buf["kept"][:, 1:] = False
    buf["kept"][np.arange(64), buf["base"]] = True
    a = _loss(torch, model, model0, _tensors(torch, buf, idx), 1.0, 1.0)[0]
    buf["adv"][~buf["kept"]] = 1e6  # a pruned candidate's adv is nothing the loss reads
    b = _loss(torch, model, model0, _tensors(torch, buf, idx), 1.0, 1.0)[0]
    torch.testing.assert_close(a, b)
    assert not torch.isclose(a, full)


def test_a_buffer_from_before_pruning_reads_as_all_kept():
    from caishen.agents.exit_store import _checked_buffer

    n = np.array([2, 3])
    arrays = {"n": n, "x": np.zeros((2, 3, 17)), "adv": np.zeros((2, 3)), "actions": np.zeros((2, 3), np.int64),
              "base": np.zeros(2, np.int64), "claim": np.zeros(2, bool), "ctx": np.zeros((2, 83))}
    out = _checked_buffer("b.npz", arrays, {"labelled": 2}, False)
    assert out["kept"].tolist() == [[True, True, False], [True, True, True]]
    out["kept"][0, 0] = False  # the base choice pruned: not a buffer learn wrote
    with pytest.raises(ValueError, match="kept"):
        _checked_buffer("b.npz", out, {"labelled": 2}, False)


def test_settings_go_to_their_configs():
    from caishen.agents.exit import Budget, LabelConfig, TrainConfig, settings

    got = settings(hands=12, top_k=3, max_iterations=2, steps=5, eval_walls=0)
    assert got["labelling"] == LabelConfig(hands=12, top_k=3) and got["budget"] == Budget(max_iterations=2)
    assert got["train"] == TrainConfig(steps=5) and got["run"].eval_walls == 0
    with pytest.raises(ValueError, match="'hand'"):
        settings(hand=3)


def test_tiny_pruned_run_writes_weights_that_play(tmp_path):
    pytest.importorskip("torch")
    from caishen.agents.exit import learn, settings
    from caishen.sim.selfplay.batch import play_batch

    out = tmp_path / "run"
    res = learn(DEFAULT, out, log=None, **settings(hands=10, max_iterations=2, steps=3, eval_walls=0, top_k=2))
    assert res["iterations"] == 2 and res["labelled"] > 0
    with np.load(out / "buffer.npz") as z:
        kept, n = z["kept"], z["n"]
        assert kept[np.arange(len(n)), z["base"]].all() and (kept.sum(1) < n).any()
    rec = play_batch(4, 3, DEFAULT, policies=",".join([f"learned:{res['learned']}"] * 2 + ["greedy"] * 2))
    assert len(next(iter(rec.values()))) == 4
    with pytest.raises(ValueError, match="top_k"):
        learn(DEFAULT, tmp_path / "bad", log=None, **settings(top_k=-1, eval_walls=0))
    with pytest.raises(ValueError, match="spend_saved"):
        learn(DEFAULT, tmp_path / "bad", log=None, **settings(spend_saved="yes", eval_walls=0))


@pytest.mark.parametrize("arch", ["mlp", "conv"])
def test_the_starts_logits_without_its_network_are_its_forward_pass(arch):
    """The update reads the start's logits as ``x . linear`` while its last layer is zero (initial_model's):
    the very numbers of its forward pass; a start with a non-zero last layer is run as a net."""
    torch = pytest.importorskip("torch")
    from caishen.agents.exit import _start_logits, _tensors, initial_model

    rng = np.random.default_rng(1)
    buf = new_buffer(32, conv=arch == "conv")
    buf["n"][:] = rng.integers(2, 12, 32)
    buf["x"][:] = rng.normal(size=buf["x"].shape)
    buf["ctx"][:] = rng.normal(size=buf["ctx"].shape)
    if arch == "conv":
        buf["kinds"][:] = rng.integers(0, 5, buf["kinds"].shape)
        buf["cand"][:] = rng.integers(-1, 68, buf["cand"].shape)
    model0 = initial_model(DEFAULT, arch=arch, channels=(4, 4))
    inputs = _tensors(torch, buf, np.arange(32))[:-3]
    start = _start_logits(torch, model0)
    assert start is not model0
    with torch.no_grad():
        assert torch.equal(start(*inputs), model0(*inputs))
        (model0.fc3 if arch == "mlp" else model0.head).bias.fill_(0.5)
    assert _start_logits(torch, model0) is model0


@pytest.mark.parametrize("cap", [4, 7, 50, 5000])
def test_appends_into_a_grown_store_are_the_concatenation(cap, monkeypatch):
    """``exit_store._append`` writes into a store with room to grow (no copy of the whole buffer per
    iteration): its arrays are, after every append, those of the plain concatenation, widened to the most
    candidates and cut to the newest BUFFER rows; an iteration without a label appends nothing."""
    from caishen.agents import exit_store as es

    monkeypatch.setattr(es, "BUFFER", cap)

    def reference(buf, new, m):
        new = {k: v[:m] for k, v in new.items()}
        width = max(2, int(new["n"].max()) if m else 0, int(buf["n"].max()) if buf is not None and len(buf["n"]) else 0)
        new = es._widen(new, width)
        if buf is None:
            return {k: v[-cap:].copy() for k, v in new.items()}
        buf = es._widen(dict(buf), width)
        return {k: np.concatenate([buf[k], new[k]])[-cap:] for k in new}

    rng = np.random.default_rng(cap)
    got = want = None
    for i in range(60):
        m = 0 if i < 2 else int(rng.integers(0, 9))  # the first iterations without a label
        n = rng.integers(2, int(rng.integers(3, 15)), 9).astype(np.int64)
        new = {"n": n, "adv": rng.normal(size=(9, 40)), "x": rng.normal(size=(9, 40, 3)),
               "kept": rng.random((9, 40)) < 0.5}
        got, want = es._append(got, new, m), reference(want, new, m)
        for k in want:
            assert got[k].shape == want[k].shape and (got[k] == want[k]).all(), k


@pytest.mark.parametrize("arch", ["mlp", "conv"])
def test_the_training_logits_are_the_forward_pass(arch):
    """The update's ``logits`` (the MLP's first layer split as the kernel's) equal ``forward`` to rounding."""
    torch = pytest.importorskip("torch")
    from caishen.agents.exit import _tensors, initial_model

    rng = np.random.default_rng(2)
    buf = new_buffer(16, conv=arch == "conv")
    buf["n"][:] = rng.integers(2, 12, 16)
    buf["x"][:] = rng.normal(size=buf["x"].shape)
    buf["ctx"][:] = rng.normal(size=buf["ctx"].shape)
    if arch == "conv":
        buf["kinds"][:] = rng.integers(0, 5, buf["kinds"].shape)
        buf["cand"][:] = rng.integers(-1, 68, buf["cand"].shape)
    model = initial_model(DEFAULT, arch=arch, channels=(4, 4))
    with torch.no_grad():
        for p in model.parameters():
            p.normal_()
    inputs = _tensors(torch, buf, np.arange(16))[:-3]
    torch.testing.assert_close(model.logits(*inputs), model(*inputs), rtol=1e-12, atol=1e-9)
