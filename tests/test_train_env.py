"""The env trainer (caishen.agents.train_env): a tiny run of each mode writes its curve, checkpoint and an
exported ``cand-mlp`` bot that plays exactly as its torch source; the shipped ``learned:kaihua-env`` too.
Skipped without torch (the ``[rl]`` extra)."""

from __future__ import annotations

import csv

import numpy as np
import pytest

torch = pytest.importorskip("torch")

from caishen.agents.env_net import CandidateNet  # noqa: E402
from caishen.agents.train_env import Config, main, train  # noqa: E402
from caishen.sim.bots import learned, registry  # noqa: E402


@pytest.fixture(scope="module", autouse=True)
def _warm(batched_warm):
    return batched_warm


def _plays_as_torch(path, rules="kaihua", n_rows=400, seed=3):
    """The kernel's q and choices equal the torch model's on the kernel's own inputs (every decision of
    hands played by the exported bot in all four seats)."""
    row, hdr = learned.load_learned(path, rules)
    assert hdr["arch"] == learned.ARCH_CAND
    assert hdr["feature_sets"]["candidates"] == {"name": "candidates", "version": 1}
    d = learned.decisions(row, rules, n_rows=n_rows, seed=seed)
    net = CandidateNet.from_file(path, dtype=torch.float64)
    with torch.no_grad():
        q = net(torch.from_numpy(d["x"]), torch.from_numpy(d["ctx"])).numpy()
    valid = np.arange(q.shape[1])[None] < d["n"][:, None]
    assert (d["n"] >= 1).all()
    np.testing.assert_allclose(q[valid], d["logits"][valid], rtol=1e-9, atol=1e-9)
    pick = np.where(valid, q, -np.inf).argmax(1)
    np.testing.assert_array_equal(d["actions"][np.arange(len(pick)), pick], d["chosen"])
    return hdr


def test_tiny_dmc_run_writes_its_curve_and_exports_a_bot_equal_to_torch(tmp_path):
    cfg = Config(out=str(tmp_path / "dmc"), envs=16, steps=8, batch=64, snapshot_every=2, eval_every=2,
                 eval_walls=4, max_updates=4, cpu_minutes=5.0, seed=1)
    last = train(cfg, log=lambda s: None)
    rows = list(csv.DictReader(open(tmp_path / "dmc" / "curve.csv")))
    assert [int(r["update"]) for r in rows] == [2, 4, 4] and last["update"] == 4
    assert float(rows[-1]["train_cpu_s"]) > 0 and int(rows[-1]["decisions"]) > 0
    assert np.isfinite(float(rows[-1]["loss"])) and np.isfinite(float(rows[-1]["vs_greedy"]))
    hdr = _plays_as_torch(last["path"])
    assert hdr["meta"]["mode"] == "dmc" and hdr["meta"]["update"] == 4
    assert (tmp_path / "dmc" / "checkpoint.pt").is_file()
    # the same command resumes from its checkpoint; another network shape there is refused
    more = train(Config(**{**cfg.__dict__, "max_updates": 6}), log=lambda s: None)
    assert more["update"] == 6
    with pytest.raises(ValueError, match="hidden"):
        train(Config(**{**cfg.__dict__, "hidden": (8, 8), "max_updates": 8}), log=lambda s: None)
    # the exported bot plays in the kernels through the registry
    bot = registry.parse(f"learned:{last['path']}")
    assert bot.kind == "learned"


def test_tiny_dagger_run_learns_from_a_registry_bot(tmp_path):
    cfg = Config(out=str(tmp_path / "dagger"), envs=16, steps=8, batch=64, eval_every=3, eval_walls=0,
                 max_updates=3, expert="greedy", seed=2)
    last = train(cfg, log=lambda s: None)
    rows = list(csv.DictReader(open(tmp_path / "dagger" / "curve.csv")))
    assert 0.0 <= float(rows[-1]["agree"]) <= 1.0 and last["update"] == 3
    assert _plays_as_torch(last["path"], n_rows=100)["meta"]["mode"] == "dagger"


def test_command_line_errors_are_one_line(capsys, tmp_path):
    assert main(["--out", str(tmp_path / "x"), "--envs", "0"]) == 2
    assert "--envs 0" in capsys.readouterr().err
    assert main(["--out", str(tmp_path / "y"), "--expert", "nobot", "--max-updates", "1"]) == 2
    assert "unknown policy 'nobot'" in capsys.readouterr().err


def test_shipped_kaihua_env_bot_plays_as_its_torch_source():
    """``learned:kaihua-env`` is the env trainer's export, shipped with the rule set; it records how it was
    trained and plays exactly as the torch network it was exported from."""
    path = registry.learned_path("kaihua-env")
    assert path.is_file() and path.name == "learned-env.npz"
    hdr = _plays_as_torch(path, n_rows=300, seed=11)
    assert hdr["meta"]["trainer"] == "caishen.agents.train_env" and hdr["meta"]["mode"] == "dmc"
    assert registry.parse("learned:kaihua-env").spec == "learned:kaihua-env"
