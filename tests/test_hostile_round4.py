"""Reliability round 4 (issue 42): one test (or a few) per kind the attacker found, each running the attack.

Each test names its kind (``kind01`` .. ``kind11``; kind 10, ``caishen play``'s input, is tested with
``agents/play.py``).  The crash harness of ``caishen learn`` (kind 4: a kill at every rename and fsync, a
full disk at every write) is in ``tests/test_crash_consistency.py``.  Runs that need no mahjong use the
TEST DOUBLE chunk function of ``tests/fault_chunks.py``; the commands with the real engine appear where the
kind is about them, at tiny sizes.
"""

from __future__ import annotations

import errno
import json
import os
import shlex
import shutil
import socket
import stat
import struct
import subprocess
import sys
import time
import zipfile
from pathlib import Path

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from fault_chunks import plain_chunk
from hostile import one_line_error
from caishen import cli
from caishen.sim import safeio
from caishen.sim.selfplay import manifest, records, runner, stream

RULES = "kaihua"


def cli_run(capsys, argv) -> tuple[int, str, str]:
    """``caishen ARGV`` in this process: (exit status, stdout, stderr)."""
    try:
        code = cli.main(argv)
    except SystemExit as e:
        code = e.code
    got = capsys.readouterr()
    return code, got.out, got.err


def dead_pid() -> int:
    """The pid of a process that has exited (a writer killed before it cleaned up)."""
    p = subprocess.Popen([sys.executable, "-c", "pass"])
    p.wait()
    return p.pid


def plain_run(out: Path, games: int = 300, chunk_size: int = 100, seed: int = 7) -> Path:
    cfg = runner.RunConfig(RULES, {"discard_win": True}, ("random",) * 4, seed, games, chunk_size,
                           runner._fn_name(plain_chunk))
    runner.run(cfg, out, workers=1, progress=False, chunk_fn=plain_chunk)
    return out


@pytest.fixture(scope="module")
def hand_log(tmp_path_factory):
    """A finished Game's hand log (``caishen replay LOG`` replays it)."""
    from caishen.sim.engine import Game

    g = Game(RULES).reset(seed=3)
    while not g.done:
        g.step(g.legal_actions()[-1])
    p = tmp_path_factory.mktemp("log") / "hand.jsonl"
    g.write_log(p)
    return p


# ---------------------------------------------------------------------------
# kind 1: the page (and every file the tools write) never replaces what is not a regular file
# ---------------------------------------------------------------------------
def _unix_socket(path: Path):
    s = socket.socket(socket.AF_UNIX)
    s.bind(str(path))
    return s


@pytest.mark.parametrize("target", ["fifo", "socket", "symlink", "directory"])
def test_kind01_replay_html_onto_a_fifo_socket_link_or_folder_is_refused_and_left_as_it_was(
        hand_log, tmp_path, capsys, target, alarm):
    """``caishen replay LOG --html FILE`` with a FIFO (as /dev/full or /dev/null would be, a device run as
    root), a socket, a link or a folder at FILE: one line naming it, exit 2, FILE untouched."""
    p = tmp_path / "page.html"
    keep = None
    if target == "fifo":
        os.mkfifo(p)
    elif target == "socket":
        keep = _unix_socket(p)
    elif target == "symlink":
        p.symlink_to(tmp_path / "elsewhere.html")
    else:
        p.mkdir()
    before = os.lstat(p)
    code, _, err = cli_run(capsys, ["replay", str(hand_log), "--html", str(p), "--quiet"])
    assert code == 2 and str(p) in err and "the tools write only regular files" in err, err
    one_line_error(err)
    after = os.lstat(p)
    assert stat.S_IFMT(after.st_mode) == stat.S_IFMT(before.st_mode) and after.st_ino == before.st_ino
    assert not (tmp_path / "elsewhere.html").exists()
    assert not [q for q in tmp_path.iterdir() if q.name.endswith(".tmp")]
    if keep is not None:
        keep.close()


def test_kind01_play_html_onto_a_fifo_is_refused_before_the_hand(tmp_path, capsys, alarm):
    """``caishen play --html FIFO``: refused before the first move is asked for (stdin is never read)."""
    fifo = tmp_path / "page.html"
    os.mkfifo(fifo)
    code, out, err = cli_run(capsys, ["play", "--seed", "1", "--html", str(fifo)])
    assert code == 2 and "is a FIFO" in err and not out
    one_line_error(err)
    assert stat.S_ISFIFO(os.lstat(fifo).st_mode)


@pytest.mark.parametrize("writer", ["atomic_write", "write_log", "summary"])
def test_kind01_every_writer_refuses_a_fifo_and_never_blocks(tmp_path, writer, alarm):
    """The one safe-write path (:func:`safeio.atomic_write`, its :func:`safeio.commit`) under every writer: a
    FIFO at the target is named, never opened (which would block) nor replaced."""
    from caishen.sim.analysis import summary
    from caishen.sim.engine import Game

    if writer == "summary":
        out = plain_run(tmp_path / "r", games=100)
        rows, defs, meta, _ = summary.summarize_run(out)
        target = out / "summary.json"
        os.mkfifo(target)
        with pytest.raises(safeio.FileError, match="summary.json.*is a FIFO"):
            summary.save_summary(out, rows, defs, meta)
    else:
        target = tmp_path / "x.json"
        os.mkfifo(target)
        with pytest.raises(safeio.FileError, match="is a FIFO"):
            if writer == "atomic_write":
                safeio.atomic_write(target, "{}")
            else:
                Game(RULES).reset(seed=1).write_log(target)
    assert stat.S_ISFIFO(os.lstat(target).st_mode)
    assert not [q for q in target.parent.iterdir() if q.name.endswith(".tmp")]


def test_kind01_in_a_run_it_holds_the_runner_replaces_a_fifo_at_a_chunks_name_never_writing_into_it(tmp_path, alarm):
    """Under the run's lock a FIFO at a chunk's name is damage to the run's own file (verify: corrupt): the
    rerun removes the entry and replays the chunk (``owned``); outside it, the same FIFO is refused."""
    out = plain_run(tmp_path / "r", games=300)
    want = pd.read_parquet(records.chunk_path(out, 1))
    records.chunk_path(out, 1).unlink()
    os.mkfifo(records.chunk_path(out, 1))
    with pytest.raises(safeio.FileError, match="is a FIFO"):
        safeio.atomic_write(records.chunk_path(out, 1), b"x")
    plain_run(out, games=300)
    assert stat.S_ISREG(os.lstat(records.chunk_path(out, 1)).st_mode)
    pd.testing.assert_frame_equal(pd.read_parquet(records.chunk_path(out, 1)), want)


def test_kind01_temporary_files_left_by_a_killed_writer_are_cleaned_by_the_next_one(tmp_path):
    """A kill between a temporary file's creation and its rename leaves ``.NAME.<pid>.<hex>.tmp``: the next
    write of that file removes those of dead writers, and a run's lock removes all of them in its folder; a
    live writer's file is left alone."""
    stale = tmp_path / f".page.html.{dead_pid()}.0123abcd.tmp"
    stale.write_text("half a page")
    live = tmp_path / f".page.html.{os.getppid()}.0123abcd.tmp"  # the parent of this process is alive
    live.write_text("being written")
    safeio.atomic_write(tmp_path / "page.html", "<!DOCTYPE html>")
    assert not stale.exists() and live.exists()
    out = plain_run(tmp_path / "r", games=100)
    left = [out / f".summary.json.{dead_pid()}.89abcdef.tmp", out / f".run.json.{dead_pid()}.00ff00ff.tmp"]
    for p in left:
        p.write_text("{")
    plain_run(out, games=100)  # the rerun takes the run's lock
    assert not any(p.exists() for p in left)


# ---------------------------------------------------------------------------
# kind 2: a replay checks the run's recorded bots before playing
# ---------------------------------------------------------------------------
@pytest.fixture(scope="module")
def tuned_run(tmp_path_factory, engine_warm):
    """A 16-hand simulate run with a ``tuned:PATH`` seat (a copy of the shipped weights)."""
    from caishen.sim.bots.registry import tuned_path

    d = tmp_path_factory.mktemp("tuned")
    w = d / "mine.json"
    shutil.copy(tuned_path(RULES), w)
    out = d / "run"
    cfg = runner.make_config(RULES, 16, 4, policies=f"tuned:{w},greedy,random,greedy", chunk_size=16)
    runner.run(cfg, out, workers=1, progress=False)
    return out, w


def test_kind02_replay_refuses_a_run_whose_tuned_weights_changed_naming_the_bot(tuned_run, tmp_path, capsys):
    from caishen.sim.analysis import replay

    run, w = tuned_run
    replay.from_run(run, "3")  # the run's own bots: it replays
    doc = json.loads(w.read_text())
    doc["weights"][0] += 0.25  # the attack: the weights file changes after the run
    changed = tmp_path / "w.json"
    changed.write_text(json.dumps(doc))
    saved = w.read_bytes()
    try:
        shutil.copy(changed, w)
        with pytest.raises(ValueError, match=rf"weights changed since the run was written .* tuned:{w}"):
            replay.from_run(run, "3")
        code, out, err = cli_run(capsys, ["replay", str(run), "--hand", "3"])
        assert code == 2 and "bot_weights" in err and not out
        one_line_error(err)
    finally:
        w.write_bytes(saved)
    replay.from_run(run, "3")


def test_kind02_replay_refuses_a_run_of_other_engine_code(tuned_run, monkeypatch):
    from caishen.sim.analysis import replay

    run, _ = tuned_run
    monkeypatch.setattr(runner, "source_digest", lambda: "0" * 16)
    with pytest.raises(ValueError, match="engine or bot code changed since the run was written"):
        replay.from_run(run, "0")


# ---------------------------------------------------------------------------
# kind 3: caishen learn takes the folder's lock and writes through no link
# ---------------------------------------------------------------------------
LEARN = dict(hands=4, max_iterations=1, steps=1, eval_walls=0, n_det=1, frac=0.5)


def test_kind03_learn_refuses_a_folder_with_a_link_and_leaves_its_target_alone(tmp_path):
    pytest.importorskip("torch")
    from caishen.agents.exit import learn, settings

    out = tmp_path / "learn"
    out.mkdir()
    victim = tmp_path / "victim.csv"
    victim.write_text("precious\n")
    (out / "curve.csv").symlink_to(victim)
    with pytest.raises(safeio.FileError, match="symbolic link.*curve.csv"):
        learn(RULES, out, log=None, **settings(**LEARN))
    assert victim.read_text() == "precious\n" and not (out / "checkpoint.pt").exists()


def test_kind03_train_refuses_a_folder_with_a_link_and_one_in_use(tmp_path):
    """``caishen train`` (PPO) holds the same lock and no-links rule on its folder, before anything is built."""
    pytest.importorskip("sb3_contrib")
    from caishen.agents.train_ppo import train

    out = tmp_path / "ppo"
    out.mkdir()
    victim = tmp_path / "victim.csv"
    victim.write_text("precious\n")
    (out / "curve.csv").symlink_to(victim)
    with pytest.raises(safeio.FileError, match="symbolic link.*curve.csv"):
        train(str(out), timesteps=1)
    assert victim.read_text() == "precious\n"
    (out / "curve.csv").unlink()
    with safeio.DirLock(out, "caishen train"):
        with pytest.raises(ValueError, match="in use by another running caishen train"):
            train(str(out), timesteps=1)
    assert not (out / "untrained.safetensors").exists()


def test_kind03_two_learns_on_one_folder_the_second_is_refused(tmp_path, capsys):
    pytest.importorskip("torch")
    from caishen.agents.exit import learn, settings

    out = tmp_path / "learn"
    out.mkdir()
    with safeio.DirLock(out, "caishen learn"):  # another learn holds the folder
        with pytest.raises(ValueError, match="in use by another running caishen learn"):
            learn(RULES, out, log=None, **settings(**LEARN))
        code, _, err = cli_run(capsys, ["learn", "--out", str(out), "--eval-walls", "0", "--minutes", "0"])
        assert code == 2 and "in use" in err
        one_line_error(err)
    assert not (out / "checkpoint.pt").exists()


# ---------------------------------------------------------------------------
# kind 4: damaged learn checkpoints and buffers are named (the crash harness: test_crash_consistency.py)
# ---------------------------------------------------------------------------
@pytest.fixture(scope="module")
def learned_folder(tmp_path_factory):
    pytest.importorskip("torch")
    from caishen.agents.exit import learn, settings

    out = tmp_path_factory.mktemp("learn") / "run"
    learn(RULES, out, log=None, **settings(**LEARN))
    return out


def _rewrite_checkpoint(path: Path, change) -> None:
    import torch

    ck = torch.load(path, weights_only=True)
    change(ck)
    torch.save(ck, path)


def _nan_model(ck):
    ck["model"]["fc1.weight"][0, 0] = float("nan")


def _huge_hidden(ck):
    ck["hidden"] = [10**6, 10**6]


def _bad_counts(ck):
    ck["state"]["labelled"] = -5


def _bad_opt(ck):
    ck["opt"] = {"state": {}, "param_groups": "x"}


def _bad_curve(ck):
    ck["state"]["curve"] = ck["state"]["curve"] * 2


def _deflated(path: Path) -> None:
    """The checkpoint's records re-packed deflated: a small file that could unpack to anything."""
    with zipfile.ZipFile(path) as z:
        items = [(i, z.read(i)) for i in z.infolist()]
    with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED) as z:
        for i, data in items:
            z.writestr(i.filename, data)


@pytest.mark.parametrize("damage, says", [
    ("truncated", "is not a checkpoint caishen learn wrote"),
    ("garbage", "is not a checkpoint caishen learn wrote"),
    ("deflated", "compressed"),
    ("nan", "field 'model.fc1.weight' holds a NaN"),
    ("huge", "field 'hidden' is [1000000, 1000000]"),
    ("counts", "field 'state.labelled' is -5"),
    ("opt", "field 'opt'"),
    ("curve", "field 'state.curve'"),
    ("fifo", "is a FIFO"),
])
def test_kind04_a_damaged_checkpoint_is_one_line_naming_the_file_and_field(learned_folder, tmp_path, capsys,
                                                                          damage, says, alarm):
    out = tmp_path / "run"
    shutil.copytree(learned_folder, out)
    ck = out / "checkpoint.pt"
    change = {"nan": _nan_model, "huge": _huge_hidden, "counts": _bad_counts, "opt": _bad_opt,
              "curve": _bad_curve}.get(damage)
    if change is not None:
        _rewrite_checkpoint(ck, change)
    elif damage == "truncated":
        ck.write_bytes(ck.read_bytes()[:1000])
    elif damage == "garbage":
        ck.write_bytes(os.urandom(4000))
    elif damage == "deflated":
        _deflated(ck)
    else:
        ck.unlink()
        os.mkfifo(ck)
    code, out_text, err = cli_run(capsys, ["learn", "--out", str(out), "--eval-walls", "0", "--hands", "4",
                                           "--minutes", "1"])
    assert code == 2 and str(ck) in err and says in err, err
    one_line_error(err)


def _npy_claiming(shape, dtype="<f8", body=b"\0" * 64) -> bytes:
    """A ``.npy`` member whose header claims ``shape`` but which holds only ``body``."""
    head = repr({"descr": dtype, "fortran_order": False, "shape": tuple(shape)}).encode()
    head += b" " * (-(10 + len(head) + 1) % 64) + b"\n"
    return b"\x93NUMPY\x01\x00" + struct.pack("<H", len(head)) + head + body


def test_kind04_a_buffer_with_a_huge_header_or_of_another_iteration_is_named(learned_folder, tmp_path, capsys):
    from caishen.agents.exit import BUFFER_FILE

    out = tmp_path / "run"
    shutil.copytree(learned_folder, out)
    buf = out / BUFFER_FILE
    with zipfile.ZipFile(buf) as z:
        members = {i.filename: z.read(i) for i in z.infolist()}
    members["x.npy"] = _npy_claiming((10**6, 10**6, 17))  # 136 TB claimed by a 200-byte member
    with zipfile.ZipFile(buf, "w") as z:
        for name, data in members.items():
            z.writestr(name, data)
    code, _, err = cli_run(capsys, ["learn", "--out", str(out), "--eval-walls", "0", "--hands", "4"])
    assert code == 2 and str(buf) in err and "member 'x'" in err and "header claims" in err, err
    one_line_error(err)
    # a buffer of another iteration than the checkpoint's is not this run's
    with zipfile.ZipFile(learned_folder / BUFFER_FILE) as z:
        members = {i.filename: z.read(i) for i in z.infolist()}
    members["iteration.npy"] = _npy_claiming((), "<i8", struct.pack("<q", 7))
    with zipfile.ZipFile(buf, "w") as z:
        for name, data in members.items():
            z.writestr(name, data)
    code, _, err = cli_run(capsys, ["learn", "--out", str(out), "--eval-walls", "0", "--hands", "4"])
    assert code == 2 and "holds the labels of iteration 7, the checkpoint is at iteration 1" in err, err


# ---------------------------------------------------------------------------
# kinds 5 and 6: ppo: files are checked from their header before a network is built; no NaN loads
# ---------------------------------------------------------------------------
def _ppo_config(net_arch):
    from caishen.agents.ppo import CHECKPOINT_FORMAT
    from caishen.envs.observation import feature_set

    return {"format": CHECKPOINT_FORMAT, "observation_shape": [967], "n_actions": 145,
            "feature_set": feature_set("flat", False).header(), "net_arch": net_arch, "activation": "relu",
            "meta": {}}


def test_kind05_a_ppo_file_declaring_a_huge_network_is_refused_before_it_is_built(tmp_path, monkeypatch):
    """A 1.3 MB file whose config declares 16 layers of 65,536 units (a 275 GB network) with tensors of a
    small one: refused naming the file and the field, having built nothing."""
    pytest.importorskip("sb3_contrib")
    pytest.importorskip("safetensors")
    import torch
    from safetensors.torch import save
    from sb3_contrib.common.maskable import policies

    from caishen.agents.ppo import CONFIG_KEY, load_policy

    small = {"action_net.weight": torch.zeros(145, 967), "action_net.bias": torch.zeros(145),
             "value_net.weight": torch.zeros(1, 967), "value_net.bias": torch.zeros(1)}
    cfg = _ppo_config({"pi": [65536] * 16, "vf": [65536] * 16})
    p = tmp_path / "huge.safetensors"
    p.write_bytes(save(small, metadata={CONFIG_KEY: json.dumps(cfg)}))
    assert p.stat().st_size < 2 << 20

    def built(*a, **kw):
        raise AssertionError("the network was built before the file's tensors were checked")

    monkeypatch.setattr(policies.MaskableActorCriticPolicy, "__init__", built)
    t = time.perf_counter()
    with pytest.raises(ValueError, match="field 'net_arch'") as e:
        load_policy(str(p))
    assert str(p) in str(e.value) and time.perf_counter() - t < 5
    # every tensor of a 65,536-unit layer named in the header with its shape, its bytes past the file's end
    from caishen.agents.ppo import _expected_tensors

    cfg = _ppo_config({"pi": [65536], "vf": []})
    header = {"__metadata__": {CONFIG_KEY: json.dumps(cfg)}}
    for k, shape in _expected_tensors(cfg).items():
        header[k] = {"dtype": "F32", "shape": list(shape), "data_offsets": [0, 4 * int(np.prod(shape))]}
    raw = json.dumps(header).encode()
    lies = tmp_path / "lies.safetensors"
    lies.write_bytes(struct.pack("<Q", len(raw)) + raw + b"\0" * 4096)
    with pytest.raises(ValueError, match="tensor '.*' claims bytes .* of a file with 4,096 bytes of tensors"):
        load_policy(str(lies))


@pytest.mark.parametrize("value", [float("nan"), float("inf"), -float("inf")])
def test_kind06_a_ppo_file_with_a_non_finite_weight_is_refused_naming_the_tensor(tmp_path, value):
    pytest.importorskip("sb3_contrib")
    pytest.importorskip("safetensors")
    import torch
    from gymnasium import spaces
    from sb3_contrib.common.maskable.policies import MaskableActorCriticPolicy

    from caishen.agents.ppo import load_policy, save_policy
    from caishen.agents import make_agent

    pol = MaskableActorCriticPolicy(spaces.Box(0.0, 1.0, (967,), np.float32), spaces.Discrete(145), lambda _: 0.0,
                                    net_arch=dict(pi=[8], vf=[8]), activation_fn=torch.nn.ReLU)
    good = save_policy(pol, tmp_path / "good.safetensors", {"rules": RULES})
    assert load_policy(good) is not None
    with torch.no_grad():
        pol.action_net.weight[3, 5] = value
    bad = save_policy(pol, tmp_path / "bad.safetensors", {"rules": RULES})
    with pytest.raises(ValueError, match=rf"tensor 'action_net.weight' holds {value!r} at flat index {3 * 8 + 5}"):
        load_policy(bad)
    with pytest.raises(ValueError, match="bad.safetensors"):
        make_agent(f"ppo:{bad}")


# ---------------------------------------------------------------------------
# kind 7: chunk values are checked against the records contract on read
# ---------------------------------------------------------------------------
@pytest.fixture(scope="module")
def reference(tmp_path_factory):
    out = plain_run(tmp_path_factory.mktemp("ref") / "ref", games=600)
    return out, stream.read_run(out)


def _craft(out: Path, i: int, change) -> None:
    """Rewrite chunk ``i`` with ``change(table) -> table``, keeping its identity, and record it in the manifest:
    a file with a valid identity and a matching manifest line."""
    p = records.chunk_path(out, i)
    t = pq.read_table(p)
    meta = t.schema.metadata
    t = change(t).replace_schema_metadata(meta)
    pq.write_table(t, p, compression="zstd")
    size, sha = manifest.file_sha256(p)
    manifest.append_entry(out, {"chunk": i, "rows": t.num_rows, "bytes": size, "sha256": sha})


def _set(name: str, row: int, value):
    def change(t):
        a = t.column(name).to_numpy().copy()
        a[row] = value
        return t.set_column(t.schema.get_field_index(name), name, pa.array(a))
    return change


@pytest.mark.parametrize("change, says", [
    (_set("winner", 17, 99), "winner 99: is no seat"),
    (_set("win_type", 5, 7), "win_type 7: is no win-type code"),
    (_set("score_1", 40, 12345), "do not sum to zero"),
    (_set("dealer", 3, -2), "dealer -2: is no seat"),
    (_set("winners_mask", 8, 255), "winners_mask 255"),
], ids=["winner-99", "win-type-7", "not-zero-sum", "dealer", "mask"])
def test_kind07_a_chunk_of_impossible_values_with_a_matching_manifest_line_is_foreign_and_replayed(
        reference, tmp_path, capsys, change, says):
    out = tmp_path / "r"
    shutil.copytree(reference[0], out)
    _craft(out, 2, change)
    check = manifest.verify(out)
    assert check.problems[2][0] == "foreign" and says in check.problems[2][1], check.problems
    code, o, err = cli_run(capsys, ["report", str(out), "--no-figures"])
    assert code == 1 and "Traceback" not in err and "chunk 2: foreign" in err and says in err, err
    assert "finished chunks: 5 of 6 (damaged chunks left out)" in o
    plain_run(out, games=600)  # the rerun replays it like a damaged chunk
    pd.testing.assert_frame_equal(stream.read_run(out), reference[1])


def test_kind07_value_checks_pass_every_real_chunk(engine_warm, tmp_path):
    """The engine's own chunks (simulate, a match) keep every invariant: nothing real is called foreign."""
    out = tmp_path / "sim"
    runner.run(runner.make_config(RULES, 64, 1, policies="always,greedy,random,greedy", chunk_size=32), out,
               workers=1, progress=False)
    assert manifest.verify(out).complete
    assert cli.main(["match", "--policies", "greedy,random,always", "--walls", "6", "--chunk-walls", "3", "--seed", "2",
                     "--workers", "1", "--no-progress", "--out", str(tmp_path / "m")]) == 0
    assert manifest.verify(tmp_path / "m").complete


# ---------------------------------------------------------------------------
# kind 8: a full disk while match, sweep or ladder write a chunk: one line, nonzero exit, then a resume
# ---------------------------------------------------------------------------
FULL_DISK = {
    "match": ["match", "--policies", "greedy,random", "--walls", "6", "--chunk-walls", "3", "--seed", "1"],
    "sweep": ["sweep", "--option", "failed_piao_factor=1,2", "--walls", "6", "--chunk-size", "3", "--seed", "1"],
    "ladder": ["ladder", "--bots", "greedy,random,greedy_safe", "--walls", "3", "--chunk-walls", "3", "--seed", "1",
               "--bootstrap", "20"],
}


@pytest.mark.parametrize("command", sorted(FULL_DISK))
def test_kind08_enospc_writing_a_chunk_is_one_line_then_the_rerun_finishes(command, tmp_path, capsys, monkeypatch,
                                                                          engine_warm):
    out = tmp_path / command
    argv = [*FULL_DISK[command], "--workers", "1", "--no-progress", "--out", str(out)]
    real = safeio.sync
    seen = [0]

    def full(f):  # the disk fills up at the second chunk file
        if ".chunk-" in str(getattr(f, "name", "")):
            seen[0] += 1
            if seen[0] == 2:
                raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))
        return real(f)

    monkeypatch.setattr(safeio, "sync", full)
    code, _, err = cli_run(capsys, argv)
    assert code == 1 and "No space left on device" in err and "rerun the same command to resume" in err, err
    one_line_error(err)
    monkeypatch.setattr(safeio, "sync", real)
    code, o, err = cli_run(capsys, argv)
    assert code == 0, err


# ---------------------------------------------------------------------------
# kind 9: hostile arguments and files are one line, never a traceback
# ---------------------------------------------------------------------------
@pytest.mark.parametrize("args, says", [
    (["--sd", "1e308", "--half-width", "1e-308"], "walls (over 1e+12)"),
    (["--sd", "1", "--half-width", "5e-324"], "walls (over 1e+12)"),
    (["--sd", "1", "--walls", str(10**40)], f"walls {10**40}: must be an integer"),
    (["--sd", "1e308", "--half-width", "1e308", "--walls", "2"], None),
])
def test_kind09_power_extremes_are_one_line_or_an_answer(capsys, args, says):
    code, out, err = cli_run(capsys, ["power", *args])
    if says is None:
        assert code == 0 and "walls_for_target" in out
    else:
        assert code == 2 and says in err, err
        one_line_error(err)


def test_kind09_a_learned_npz_member_claiming_a_huge_shape_is_refused_before_allocating(tmp_path):
    from caishen.sim.bots import learned
    from caishen.sim.bots.registry import load_tuned, parse

    path = learned.save_learned(tmp_path / "net.npz", learned.from_tuned(load_tuned(RULES)[0], rules=RULES))
    with zipfile.ZipFile(path) as z:
        members = {i.filename: z.read(i) for i in z.infolist()}
    members["w1.npy"] = _npy_claiming((1 << 40, 1 << 20))  # 8 EB claimed
    with zipfile.ZipFile(path, "w") as z:
        for name, data in members.items():
            z.writestr(name, data)
    with pytest.raises(ValueError, match=r"member 'w1': its header claims float64\[1099511627776, 1048576\]") as e:
        learned.load_learned(path, RULES)
    assert str(path) in str(e.value) and "\n" not in str(e.value)
    with pytest.raises(ValueError, match="member 'w1'"):
        parse(f"learned:{path}")


def test_kind09_a_tuned_weight_of_400_digits_is_named(tmp_path, capsys):
    from caishen.sim.bots.registry import parse, tuned_path

    doc = json.loads(Path(tuned_path(RULES)).read_text())
    doc["weights"][2] = "BIG"
    w = tmp_path / "big.json"
    w.write_text(json.dumps(doc).replace('"BIG"', "9" * 400))
    with pytest.raises(ValueError, match=rf"{w}.*weight 2 .* is an integer too large for a float"):
        parse(f"tuned:{w}")
    code, _, err = cli_run(capsys, ["match", "--policies", f"tuned:{w},greedy", "--walls", "2",
                                    "--out", str(tmp_path / "m")])
    assert code == 2 and "too large" in err
    one_line_error(err)


def test_kind09_make_vec_with_a_billion_games_is_a_value_error_not_a_memory_error():
    import gymnasium as gym

    import caishen.envs  # noqa: F401  (registers the ids)
    from caishen.envs.batched import MAX_GAMES, BatchedGames

    with pytest.raises(ValueError, match=f"num_envs.*1..{MAX_GAMES}, got 1000000000"):
        gym.make_vec("caishen/Kaihua-v0", num_envs=10**9)
    with pytest.raises(ValueError, match="num_envs"):
        BatchedGames(MAX_GAMES + 1)


# ---------------------------------------------------------------------------
# kind 11: learn --eval-walls is checked before training; PettingZoo's illegal_reward must be finite
# ---------------------------------------------------------------------------
def test_kind11_learn_eval_walls_out_of_bounds_is_refused_before_anything_is_trained(tmp_path, capsys):
    pytest.importorskip("torch")
    out = tmp_path / "learn"
    t = time.perf_counter()
    code, _, err = cli_run(capsys, ["learn", "--out", str(out), "--eval-walls", str(10**12), "--minutes", "5"])
    assert code == 2 and "eval_walls 1000000000000" in err, err
    one_line_error(err)
    assert time.perf_counter() - t < 60 and not out.exists()
    code, _, err = cli_run(capsys, ["learn", "--out", str(out), "--seed", "-1"])
    assert code == 2 and "seed -1" in err and not out.exists()


@pytest.mark.parametrize("value", [float("nan"), float("inf"), "-5", True])
def test_kind11_pettingzoo_illegal_reward_must_be_finite(value):
    from caishen.envs.pettingzoo_env import env

    with pytest.raises(ValueError, match="illegal_reward must be a finite number"):
        env(illegal_reward=value)
    assert env(illegal_reward=-5.0) is not None


# ---------------------------------------------------------------------------
# also seen: replay commands printed without shell quoting
# ---------------------------------------------------------------------------
def test_replay_commands_are_printed_shell_quoted(engine_warm, tmp_path):
    from caishen.sim.analysis import summary

    out = tmp_path / "a run; rm -rf x $(id)"
    runner.run(runner.make_config(RULES, 32, 2, policies="always,greedy,random,greedy", chunk_size=32), out,
               workers=1, progress=False)
    lines = summary.example_hands(out)
    commands = [line[line.index("caishen replay"):] for line in lines if "caishen replay" in line]
    assert commands
    for c in commands:
        argv = shlex.split(c)
        assert argv[:3] == ["caishen", "replay", str(out)] and argv[3] == "--hand", c
