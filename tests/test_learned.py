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

from caishen.sim.bots import learned
from caishen.sim.bots.registry import POLICY_LEARNED, bot_table, load_tuned, parse
from caishen.sim.engine import N_SEATS, Game
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


def test_learned_bot_reads_nothing_hidden(tmp_path):
    """The logits of the seat to act are unchanged when only what it cannot see changes."""
    row, _ = learned.load_learned(_net(tmp_path, residual=True, seed=2))
    rng = np.random.default_rng(3)
    joker = rulesets.get("kaihua").facts["joker"]
    twin = Game("kaihua").reset(seed=0)
    lx = learned.new_scratch()
    work = np.zeros((4, 34), np.int64)
    n_checked = 0
    for hand in range(6):
        game = Game("kaihua").reset(wall=_wall_with_quads(rng, joker), dealer=hand % N_SEATS)
        while not game.done:
            seat = game.current_player
            game.legal_mask()
            st = game.state
            n = learned._learned_scores(row, st, game._ep, game._tabs, st["mask"], work, lx)
            logits = lx[1][5, :n].copy()
            _hidden_twin(game, twin, seat, rng)
            tw = twin.state
            m = learned._learned_scores(row, tw, twin._ep, twin._tabs, tw["mask"], work, lx)
            assert m == n
            np.testing.assert_array_equal(lx[1][5, :n], logits)
            n_checked += n > 0
            game.step(int(rng.choice(game.legal_actions())))
    assert n_checked > 100


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
        monkeypatch.setattr(learned, "MAX_FILE", 1000)
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
