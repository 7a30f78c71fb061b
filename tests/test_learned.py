"""The learned kernel bot (caishen.sim.bots.learned, issue 25 item 1): a zero residual is the tuned bot,
the kernel forward pass equals its torch model, a weights file is strictly checked, nothing hidden leaks."""

from __future__ import annotations

import io
import json
import os
import zipfile
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as hs

from caishen.sim.bots.policies import new_work
from caishen.sim.bots import learned, learned_file
from caishen.sim.bots.registry import POLICY_LEARNED, bot_table, load_tuned, parse
from caishen.sim.bots.features import FEATURE_SETS
from caishen.sim.engine import A_DISCARD, N_SEATS, PH_TURN, Game
from caishen.sim.rules import base as rulesets
from test_envs import _hidden_twin, _wall_with_quads


def _net(tmp_path, rules="kaihua", residual=False, seed=0, name="net.npz", hidden=(32, 16)):
    net = learned.from_tuned(load_tuned(rules)[0], hidden=hidden, seed=seed, rules=rules)
    if residual:  # a network that really uses its MLP
        rng = np.random.default_rng(seed + 1)
        for m in ("b1", "b2", "w3", "b3"):
            net[m] = rng.normal(0, 0.5, net[m].shape)
    return learned.save_learned(tmp_path / name, net)


@pytest.mark.parametrize("rules", ["kaihua", "jiating"])
def test_zero_residual_plays_exactly_as_tuned(rules, tmp_path, engine_warm):
    """The plumbing test: a network built from the tuned weights with a zero residual plays hand for hand
    as tuned:<rules> in the self-play kernels (every record column equal)."""
    from caishen.sim.selfplay.batch import play_batch

    path = _net(tmp_path, rules)
    a = play_batch(400, 9, rules=rules, policies=f"tuned:{rules}")
    b = play_batch(400, 9, rules=rules, policies=f"learned:{path}")
    for col in a:
        assert np.array_equal(a[col], b[col]), col


def test_a_residual_changes_play_and_mixes_with_other_bots(tmp_path, engine_warm):
    """A nonzero residual plays differently from tuned; learned sits beside greedy and tuned in one table."""
    from caishen.sim.selfplay.batch import play_batch

    path = _net(tmp_path, residual=True, seed=4)
    a = play_batch(200, 2, rules="kaihua", policies="tuned:kaihua")
    b = play_batch(200, 2, rules="kaihua", policies=f"learned:{path}")
    assert any(not np.array_equal(a[c], b[c]) for c in a)
    c = play_batch(200, 2, rules="kaihua", policies=f"greedy,learned:{path},tuned:kaihua,greedy")
    assert sum(int(np.sum(c[f"score_{s}"])) for s in range(N_SEATS)) == 0


def test_registry_entry(tmp_path):
    """learned:PATH parses to the learned code and its kernel row; another rule set is refused."""
    path = _net(tmp_path)
    bot = parse(f"learned:{path}")
    row, rules = bot.weights("kaihua")
    assert (bot.code, bot.param, rules) == (POLICY_LEARNED, 0, "kaihua") and row.shape[0] > 17
    table, weights = bot_table(["greedy", f"learned:{path}", "tuned:kaihua", "greedy"], "kaihua", 33)
    assert table[1, 0] == POLICY_LEARNED and np.array_equal(weights[1, :row.shape[0]], row)
    np.testing.assert_array_equal(weights[2, :17], load_tuned("kaihua")[0])
    with pytest.raises(ValueError, match="was trained for 'kaihua' .its weights file's 'rules'., not 'jiating'"):
        bot_table(f"learned:{path}", "jiating", -1)
    with pytest.raises(ValueError, match="give the weights file"):
        parse("learned:")


def test_kernel_forward_equals_torch_on_10000_states(tmp_path):
    """The numba forward pass equals the torch model of caishen.agents.learned_torch on >= 10,000 decisions
    (logits within 1e-5, the same choice), and the torch export reads back as the same network."""
    torch = pytest.importorskip("torch")
    from caishen.agents.learned_torch import ActionMLP

    path = _net(tmp_path, residual=True, seed=7)
    row, _ = learned.load_learned(path)
    d = learned.decisions(row, "kaihua", n_rows=10_000, seed=5)
    model = ActionMLP.from_file(path)
    with torch.no_grad():
        got = model(torch.as_tensor(d["x"]), torch.as_tensor(d["ctx"])).numpy()
    live = np.arange(learned.MAX_CANDIDATES)[None, :] < d["n"][:, None]
    assert live.sum() > 50_000 and d["claim"].sum() > 100
    np.testing.assert_allclose(got[live], d["logits"][live], atol=1e-5, rtol=0)
    for i in range(d["n"].shape[0]):
        n = d["n"][i]
        lg = got[i, :n]
        if d["claim"][i]:  # a claim only if it beats pass (index 0): the first strict maximum
            j = int(np.argmax(lg)) if lg.max() > lg[0] else 0
        else:  # a discard: ties go to the later kind
            j = int(n - 1 - np.argmax(lg[::-1]))
        chosen = d["actions"][i, j]
        assert d["chosen"][i] in (chosen, chosen + 34), i  # discard k or declare k (J-4.1)
    out = model.export(tmp_path / "back.npz")
    np.testing.assert_array_equal(learned.load_learned(out)[0], row)


@pytest.mark.parametrize("arch", ["mlp", "conv"])
def test_learned_bot_reads_nothing_hidden(tmp_path, arch):
    """The logits of the seat to act (and the conv bot's planes) are unchanged when only what it cannot see
    changes; a conv candidate reads its own kind's score (a discard its kind's, a claim the offered tile's)."""
    path = _net(tmp_path, residual=True, seed=2) if arch == "mlp" else _conv_net(tmp_path, head=True, seed=2)
    row, _ = learned.load_learned(path)
    rng = np.random.default_rng(3 if arch == "mlp" else 4)
    joker = rulesets.get("kaihua").facts["joker"]
    twin = Game("kaihua").reset(seed=0)
    lx = learned.new_scratch()
    work = new_work()
    n_checked = 0
    for hand in range(6):
        game = Game("kaihua").reset(wall=_wall_with_quads(rng, joker), dealer=hand % N_SEATS)
        while not game.done:
            seat = game.current_player
            game.legal_mask()
            st = game.state
            n = learned._learned_scores(row, st, game._ep, game._tabs, st["mask"], work, lx)
            logits, kinds = lx.vectors[learned._R_LOGIT, :n].copy(), lx.kinds.copy()
            _hidden_twin(game, twin, seat, rng)
            tw = twin.state
            m = learned._learned_scores(row, tw, twin._ep, twin._tabs, tw["mask"], work, lx)
            assert m == n
            np.testing.assert_array_equal(lx.vectors[learned._R_LOGIT, :n], logits)
            if arch == "conv" and n:
                np.testing.assert_array_equal(lx.kinds, kinds)
                pending = int(np.argmax(kinds[FEATURE_SETS["kinds"].first_row["pending"]]))
                claim = st["table"]["phase"] != PH_TURN
                want = [-1] + [34 + pending] * (n - 1) if claim else list(lx.actions[:n] - A_DISCARD)
                assert list(lx.cand[:n]) == want
            n_checked += n > 0
            game.step(int(rng.choice(game.legal_actions())))
    assert n_checked > 100


def test_the_scratch_is_named_as_documented():
    """The learned scratch's fields have the shapes and dtypes its class documents, and the context tables
    (:func:`caishen.sim.bots.features.context_tables`) in its ``ctx_*`` fields."""
    from caishen.sim.bots.features import context_tables

    lx = learned.new_scratch()
    assert isinstance(lx, learned.LearnedScratch) and lx._fields[:3] == ("planes", "vectors", "actions")
    want = {"planes": ((76, 34), np.uint8), "vectors": ((6, learned.MAX_HIDDEN), np.float64),
            "actions": ((40,), np.int64), "ctx_rows": ((learned.N_CONTEXT,), np.int64),
            "ctx_cols": ((learned.N_CONTEXT,), np.int64), "ctx_scale": ((learned.N_CONTEXT,), np.float64),
            "features": ((40, learned.N_ACTION), np.float64), "kinds": ((learned.N_PLANES, 34), np.float64),
            "conv": ((2, 34, learned.MAX_CHANNELS), np.float64), "score": ((learned.N_HEADS, 34), np.float64),
            "cand": ((40,), np.int64), "need": ((34,), np.uint8),
            "cand_x": ((40, learned.N_CANDIDATE), np.float64)}
    assert list(want) == list(lx._fields)
    for name, (shape, dtype) in want.items():
        a = getattr(lx, name)
        assert a.shape == shape and a.dtype == dtype, name
    for a, b in zip(context_tables(), (lx.ctx_rows, lx.ctx_cols, lx.ctx_scale)):
        np.testing.assert_array_equal(a, b)
    assert (lx.cand == -1).all()


def _rewrite(path, **change):
    """The weights file ``path`` with members replaced (``header`` as a dict)."""
    with np.load(path, allow_pickle=False) as z:
        members = {k: z[k] for k in z.files}
    for k, v in change.items():
        members[k] = np.frombuffer(json.dumps(v).encode(), np.uint8) if k == "header" else v
    buf = io.BytesIO()
    np.savez(buf, **members)
    path.write_bytes(buf.getvalue())
    return path


def _hdr(path):
    with np.load(path, allow_pickle=False) as z:
        return json.loads(z["header"].tobytes())


@pytest.mark.parametrize("case, msg", [
    ("rules", "field 'rules' is 'jiating', not 'kaihua'"),
    ("feature_set", "field 'feature_sets.context' is the feature set 'planes'"),
    ("version", "field 'feature_sets.action' is 'action' version 9"),
    ("format", "field 'format' is 'other'"),
    ("layers", "field 'layers' must be"),
    ("shape", "member 'w2' is float64[3, 3]"),
    ("nan", "member 'w1' holds nan"),
    ("inf", "member 'b3' holds inf"),
    ("extra", "its members are"),
    ("truncated", "not an .npz weights file"),
    ("not_zip", "not an .npz weights file"),
    ("oversized", "holds at most"),
    ("symlink", ""),
    ("directory", ""),
    ("missing", "no such weights file"),
])
def test_bad_weights_files_are_named(tmp_path, monkeypatch, case, msg):
    """Another rule set, feature set or version, a bad header, shape, NaN / inf, a foreign member, a
    truncated, non-zip or oversized file, a link, a directory, a missing file: one ValueError naming
    the file (and the field)."""
    path = Path(_net(tmp_path))
    h = _hdr(path)
    if case == "rules":
        h["rules"] = "jiating"
        _rewrite(path, header=h)
    elif case == "feature_set":
        h["feature_sets"]["context"] = {"name": "planes", "version": 1}
        _rewrite(path, header=h)
    elif case == "version":
        h["feature_sets"]["action"]["version"] = 9
        _rewrite(path, header=h)
    elif case == "format":
        h["format"] = "other"
        _rewrite(path, header=h)
    elif case == "layers":
        h["layers"]["hidden"] = [0, 16]
        _rewrite(path, header=h)
    elif case == "shape":
        _rewrite(path, w2=np.zeros((3, 3)))
    elif case == "nan":
        w1 = np.zeros((32, 100))
        w1[2, 3] = np.nan
        _rewrite(path, w1=w1)
    elif case == "inf":
        _rewrite(path, b3=np.array([np.inf]))
    elif case == "extra":
        _rewrite(path, code=np.zeros(1))
    elif case == "truncated":
        path.write_bytes(path.read_bytes()[:-200])
    elif case == "not_zip":
        path.write_bytes(b"\x93NUMPY not a zip")
    elif case == "oversized":
        monkeypatch.setattr(learned_file, "MAX_FILE", 1000)  # read by load_learned where it lives
    elif case == "symlink":
        link = tmp_path / "link.npz"
        os.symlink(path, link)
        path = link
    elif case == "directory":
        path = tmp_path / "dir.npz"
        path.mkdir()
    elif case == "missing":
        path = tmp_path / "gone.npz"
    with pytest.raises(ValueError) as e:
        learned.load_learned(path, "kaihua")
    text = str(e.value)
    assert str(path) in text and msg in text and "\n" not in text
    with pytest.raises(ValueError):
        parse(f"learned:{path}") if case != "rules" else bot_table(f"learned:{path}", "kaihua", 33)


def test_save_refuses_nan(tmp_path):
    net = learned.from_tuned(load_tuned("kaihua")[0])
    net["w3"] = net["w3"] + np.nan
    with pytest.raises(ValueError, match="member 'w3' holds nan"):
        learned.save_learned(tmp_path / "x.npz", net)
    assert not (tmp_path / "x.npz").exists()
    assert zipfile.is_zipfile(_net(tmp_path))


# ---------------------------------------------------------------------------------------------------
# action-conv: the 1-D convolution over the 34 kinds (issue 25 item 1)
# ---------------------------------------------------------------------------------------------------
def _conv_net(tmp_path, rules="kaihua", head=False, seed=0, name="conv.npz", channels=(16, 16)):
    net = learned.conv_from_tuned(load_tuned(rules)[0], channels=channels, seed=seed, rules=rules)
    if head:  # a network whose conv really changes the logits
        rng = np.random.default_rng(seed + 1)
        for m in ("conv1_b", "conv2_b", "head_w", "head_b"):
            if m in net:
                net[m] = rng.normal(0, 0.5, net[m].shape)
    return learned.save_learned(tmp_path / name, net)


def _segments():
    """The runs of kinds a kernel-3 conv may slide over: the three suits of 9, and each honor alone."""
    return [list(range(9 * s, 9 * s + 9)) for s in range(3)] + [[k] for k in range(27, 34)]


def _conv_layer_reference(w, b, h):
    """``relu(b + w * h)`` of one layer, ``w: [O, I, 3]``, ``h: [I, 34]``: each segment zero-padded by one
    kind at both ends and correlated with the kernel (torch's Conv1d with padding 1, per segment)."""
    out = np.zeros((w.shape[0], 34))
    for seg in _segments():
        x = np.zeros((h.shape[0], len(seg) + 2))
        x[:, 1:-1] = h[:, seg]
        for pos, k in enumerate(seg):
            out[:, k] = b + np.einsum("oit,it->o", w, x[:, pos:pos + 3])
    return np.maximum(out, 0.0)


def _conv_reference(net, kinds):
    """The score map ``[2, 34]`` of a conv net's arrays on ``kinds: [15, 34]``, in plain numpy."""
    h = _conv_layer_reference(net["conv1_w"], net["conv1_b"], kinds)
    if "conv2_w" in net:
        h = _conv_layer_reference(net["conv2_w"], net["conv2_b"], h)
    return net["head_w"] @ h + net["head_b"][:, None]


@settings(max_examples=60, deadline=None)
@given(c1=hs.integers(1, 12), c2=hs.integers(0, 9), seed=hs.integers(0, 2**32 - 1),
       density=hs.floats(0.0, 1.0))
def test_conv_kernel_equals_reference_on_random_inputs(c1, c2, seed, density):
    """The numba conv forward (learned.conv_forward, the kernel's _conv_map) equals the plain numpy
    reference above on random nets (one or two layers) and random sparse planes; pack/unpack round-trip."""
    rng = np.random.default_rng(seed)
    channels = (c1,) if c2 == 0 else (c1, c2)
    net = {m: rng.normal(0, 1.0, shape) for m, shape in learned._conv_shapes(channels).items()}
    row = learned.pack(net, learned.ARCH_CONV)
    assert row[0] == learned.ARCH_CODES[learned.ARCH_CONV]
    back = learned.unpack(row)
    assert set(back) == set(net) and all(np.array_equal(back[m], net[m]) for m in net)
    kinds = rng.integers(0, 5, (learned.N_PLANES, 34)) * (rng.random((learned.N_PLANES, 34)) < density) / 4.0
    np.testing.assert_allclose(learned.conv_forward(row, kinds), _conv_reference(net, kinds), atol=1e-9, rtol=0)


def test_conv_suits_do_not_leak_into_each_other():
    """A tile at a suit's 9 moves no score of the next suit's 1, and an honor moves only its own column."""
    rng = np.random.default_rng(5)
    net = {m: rng.normal(0, 1.0, shape) for m, shape in learned._conv_shapes((6, 5)).items()}
    row = learned.pack(net, learned.ARCH_CONV)
    base = learned.conv_forward(row, np.zeros((learned.N_PLANES, 34)))
    for k, allowed in ((8, set(range(0, 9))), (9, set(range(9, 18))), (27, {27}), (33, {33})):
        kinds = np.zeros((learned.N_PLANES, 34))
        kinds[0, k] = 1.0
        moved = set(np.flatnonzero(np.abs(learned.conv_forward(row, kinds) - base).max(axis=0) > 0))
        assert moved and moved <= allowed, (k, moved)


@pytest.mark.parametrize("rules, channels", [("kaihua", (16, 16)), ("jiating", (8,))])
def test_conv_zero_head_plays_exactly_as_tuned(rules, channels, tmp_path, engine_warm):
    """A conv network with the tuned weights and a zero head (conv_from_tuned) plays hand for hand as
    tuned:<rules> in the self-play kernels (every record column equal)."""
    from caishen.sim.selfplay.batch import play_batch

    path = _conv_net(tmp_path, rules, channels=channels)
    assert learned.load_learned(path)[1]["arch"] == "action-conv"
    a = play_batch(400, 9, rules=rules, policies=f"tuned:{rules}")
    b = play_batch(400, 9, rules=rules, policies=f"learned:{path}")
    for col in a:
        assert np.array_equal(a[col], b[col]), col
    c = play_batch(400, 9, rules=rules, policies=f"learned:{_conv_net(tmp_path, rules, True, 3, 'h.npz', channels)}")
    assert any(not np.array_equal(a[k], c[k]) for k in c)  # and a nonzero head plays differently


def test_conv_and_mlp_sit_in_one_lineup(tmp_path, engine_warm):
    """A conv seat, an MLP seat, tuned and greedy in one table: rows of two layouts padded side by side."""
    from caishen.sim.selfplay.batch import play_batch

    conv, mlp = _conv_net(tmp_path, head=True, seed=2), _net(tmp_path, residual=True, seed=2)
    c = play_batch(200, 4, rules="kaihua", policies=f"learned:{conv},learned:{mlp},tuned:kaihua,greedy")
    assert sum(int(np.sum(c[f"score_{s}"])) for s in range(N_SEATS)) == 0
    table, weights = bot_table([f"learned:{conv}", f"learned:{mlp}", "greedy", "greedy"], "kaihua", 33)
    assert weights[0, 0] == 1 and weights[1, 0] == 0


def test_conv_kernel_forward_equals_torch_on_10000_states(tmp_path):
    """The numba conv forward pass equals torch's ActionConv (caishen.agents.learned_torch) on >= 10,000
    decisions (logits within 1e-5, the same choice), and the torch export reads back as the same row."""
    torch = pytest.importorskip("torch")
    from caishen.agents.learned_torch import ActionConv, ActionMLP, conv_model_from_tuned, model_from_file

    path = _conv_net(tmp_path, head=True, seed=7)
    row, _ = learned.load_learned(path)
    d = learned.decisions(row, "kaihua", n_rows=10_000, seed=5)
    model = ActionConv.from_file(path)
    assert isinstance(model_from_file(path), ActionConv)
    with torch.no_grad():
        got = model(torch.as_tensor(d["x"]), torch.as_tensor(d["kinds"]), torch.as_tensor(d["cand"])).numpy()
    live = np.arange(learned.MAX_CANDIDATES)[None, :] < d["n"][:, None]
    assert live.sum() > 50_000 and d["claim"].sum() > 100
    conv_part = d["logits"][live] - np.einsum("ci,i->c", d["x"][live], learned.unpack(row)["linear"])
    assert np.std(conv_part) > 0.1  # the conv really moves the logits
    np.testing.assert_allclose(got[live], d["logits"][live], atol=1e-5, rtol=0)
    for i in range(d["n"].shape[0]):
        n = d["n"][i]
        lg = got[i, :n]
        if d["claim"][i]:
            j = int(np.argmax(lg)) if lg.max() > lg[0] else 0
        else:
            j = int(n - 1 - np.argmax(lg[::-1]))
        chosen = d["actions"][i, j]
        assert d["chosen"][i] in (chosen, chosen + 34), i
    out = model.export(tmp_path / "back.npz")
    np.testing.assert_array_equal(learned.load_learned(out)[0], row)
    start = conv_model_from_tuned("kaihua", (8,))
    assert not start.head.weight.detach().numpy().any() and start.channels == (8,)
    np.testing.assert_array_equal(start.linear.detach().numpy(), load_tuned("kaihua")[0])
    with pytest.raises(ValueError, match="field 'arch' is 'action-conv'"):
        ActionMLP.from_file(path)


@pytest.mark.parametrize("case, msg", [
    ("arch", "field 'arch' is 'action-rnn', expected one of ['action-mlp', 'action-conv', 'cand-mlp']"),
    ("channels_zero", "field 'layers' must be"),
    ("channels_three", "field 'layers' must be"),
    ("channels_too_many", "field 'layers' must be"),
    ("planes", "field 'layers' must be"),
    ("feature_set", "field 'feature_sets' must hold 'action' and 'kinds'"),
    ("kinds_version", "field 'feature_sets.kinds' is 'kinds' version 2"),
    ("channel_shape", "member 'conv2_w' is float64[16, 8, 3], expected float[16, 16, 3]"),
    ("head_shape", "member 'head_w' is float64[2, 8]"),
    ("layer_count", "its members are"),
    ("nan", "member 'conv1_w' holds nan"),
    ("inf", "member 'head_b' holds inf"),
])
def test_bad_conv_weights_files_are_named(tmp_path, case, msg):
    """An unknown arch, channels or planes the members do not have, another feature set or version, a NaN:
    one ValueError naming the file and the field."""
    path = Path(_conv_net(tmp_path))
    h = _hdr(path)
    if case == "arch":
        h["arch"] = "action-rnn"
        _rewrite(path, header=h)
    elif case == "channels_zero":
        h["layers"]["channels"] = [0, 16]
        _rewrite(path, header=h)
    elif case == "channels_three":
        h["layers"]["channels"] = [16, 16, 16]
        _rewrite(path, header=h)
    elif case == "channels_too_many":
        h["layers"]["channels"] = [16, learned.MAX_CHANNELS + 1]
        _rewrite(path, header=h)
    elif case == "planes":
        h["layers"]["n_planes"] = 14
        _rewrite(path, header=h)
    elif case == "feature_set":
        h["feature_sets"] = {"action": h["feature_sets"]["action"], "context": {"name": "context", "version": 1}}
        _rewrite(path, header=h)
    elif case == "kinds_version":
        h["feature_sets"]["kinds"]["version"] = 2
        _rewrite(path, header=h)
    elif case == "channel_shape":
        _rewrite(path, conv2_w=np.zeros((16, 8, 3)))
    elif case == "head_shape":
        _rewrite(path, head_w=np.zeros((2, 8)))
    elif case == "layer_count":
        h["layers"]["channels"] = [16]  # the file still holds conv2_*
        _rewrite(path, header=h)
    elif case == "nan":
        w = np.zeros((16, learned.N_PLANES, 3))
        w[1, 2, 0] = np.nan
        _rewrite(path, conv1_w=w)
    elif case == "inf":
        _rewrite(path, head_b=np.array([0.0, np.inf]))
    with pytest.raises(ValueError) as e:
        learned.load_learned(path, "kaihua")
    text = str(e.value)
    assert str(path) in text and msg in text and "\n" not in text, text
    with pytest.raises(ValueError):
        parse(f"learned:{path}")


def test_mlp_files_keep_their_layout(tmp_path):
    """An action-mlp file (the shipped learned:kaihua among them) packs as its arch code 0 and then the
    row of before the conv existed: the four sizes, then the members (w1, w2 transposed), so it plays
    as it did; the MLP scratch rows are untouched by the conv."""
    for path in (_net(tmp_path), str(rulesets.get("kaihua").data_path("learned.npz"))):
        row, hdr = learned.load_learned(path)
        with np.load(path, allow_pickle=False) as z:
            m = {k: z[k].astype(np.float64) for k in z.files if k != "header"}
        h1, h2 = hdr["layers"]["hidden"]
        old = np.concatenate([[17, 83, h1, h2], m["linear"], m["w1"].T.ravel(), m["b1"], m["w2"].T.ravel(), m["b2"],
                              m["w3"], m["b3"]])
        assert row[0] == 0 and hdr["arch"] == "action-mlp"
        np.testing.assert_array_equal(row[1:], old)


def test_save_refuses_a_member_the_header_does_not_have(tmp_path):
    """A conv net whose header says one layer but which holds a second: refused, nothing written."""
    net = learned.conv_from_tuned(load_tuned("kaihua")[0], channels=(16, 16))
    net["header"]["layers"]["channels"] = [16]
    net["head_w"] = np.zeros((2, 16))
    with pytest.raises(ValueError, match="member 'conv2_b' is not one of action-conv's"):
        learned.save_learned(tmp_path / "x.npz", net)
    assert not (tmp_path / "x.npz").exists()
