"""Faults during a run (issue 15 item 3): in each case no finished chunk is lost, none is
counted twice, and the final rows equal an uninterrupted run's.

- a worker process killed mid-chunk (the pool restarts, the chunk is replayed;
  a chunk that kills its worker every time stops the run naming it); the same
  with a Ray worker (Ray retries the task; needs the ``[ray]`` extra);
- a full disk (``ENOSPC`` from a write, by monkeypatch) while writing a chunk
  file or its manifest line;
- a chunk file truncated, replaced by another run's, overwritten with junk, or
  deleted: ``verify`` / ``caishen report`` name it, the next run replays it;
- two simulations on one directory (the second is refused, even with another
  configuration, before it touches run.json);
- the parent killed with SIGKILL: its workers exit within seconds.

The chunk functions are TEST DOUBLES (``tests/fault_chunks.py``: contract-shaped
random records, not mahjong); the real engine appears in the ``--resume`` and
CLI tests.
"""

from __future__ import annotations

import errno
import json
import os
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pandas as pd
import pytest

from fault_chunks import dying_chunk, slow_chunk
from caishen import cli
from caishen.sim.selfplay import manifest, records, runner, stream

RULES, OPTIONS, POLICIES = "kaihua", {"discard_win": True}, ("random",) * 4

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent


def config(fn, games=3000, chunk_size=500, seed=21):
    return runner.RunConfig(RULES, OPTIONS, POLICIES, seed, games, chunk_size, runner._fn_name(fn))


def run(cfg, out, fn, **kw):
    kw.setdefault("progress", False)
    kw.setdefault("workers", 1)
    return runner.run(cfg, out, chunk_fn=fn, **kw)


@pytest.fixture(scope="module")
def reference(tmp_path_factory):
    """Rows of the uninterrupted run (dying_chunk without a kill is plain_chunk, as is slow_chunk)."""
    out = tmp_path_factory.mktemp("faults") / "ref"
    run(config(dying_chunk), out, dying_chunk)
    return stream.read_run(out)


def manifest_lines(out) -> list[dict]:
    return [json.loads(x) for x in manifest.manifest_path(out).read_text().splitlines() if x.strip()]


def assert_complete(out, ref, n_chunks=6):
    """Every chunk verified, each once in the manifest, and the rows of the uninterrupted run."""
    check = manifest.verify(out)
    assert check.complete and not check.problems
    assert sorted(e["chunk"] for e in manifest_lines(out)) == list(range(n_chunks))
    assert not list((Path(out) / "chunks").glob(".*"))
    pd.testing.assert_frame_equal(stream.read_run(out), ref)


# ---------------------------------------------------------------------------
# a worker killed mid-chunk
# ---------------------------------------------------------------------------
def test_a_worker_killed_mid_chunk_restarts_the_pool_and_replays_only_that_chunk(tmp_path, monkeypatch, reference):
    cfg = config(dying_chunk)
    victim = 2
    monkeypatch.setenv("CAISHEN_TEST_KILL_SEED", str(int(runner.chunk_seeds(cfg.seed, cfg.n_chunks)[victim])))
    monkeypatch.setenv("CAISHEN_TEST_MARK", str(tmp_path / "killed"))
    res = run(cfg, tmp_path / "r", dying_chunk, workers=2)
    assert (tmp_path / "killed").exists()  # the worker did die
    assert res.pool_restarts == 1 and res.chunks_run == cfg.n_chunks and res.hands_run == cfg.games
    assert_complete(tmp_path / "r", reference)


def test_a_chunk_that_kills_its_worker_every_time_stops_the_run_naming_it(tmp_path, monkeypatch, reference):
    cfg = config(dying_chunk)
    seed = int(runner.chunk_seeds(cfg.seed, cfg.n_chunks)[4])
    monkeypatch.setenv("CAISHEN_TEST_KILL_SEED", str(seed))
    # chunk 4 is named; a slow chunk that happened to be in flight at every break is named beside it
    with pytest.raises(RuntimeError, match=rf"chunk 4 \(seed_entropy {seed}\)( was| were)? .*in flight each of the 3 times"):
        run(cfg, tmp_path / "r", dying_chunk, workers=2)
    check = manifest.verify(tmp_path / "r")
    assert 4 not in check.ok and not check.problems  # nothing half-written
    monkeypatch.delenv("CAISHEN_TEST_KILL_SEED")
    res = run(cfg, tmp_path / "r", dying_chunk, workers=1)
    assert res.chunks_skipped == len(check.ok) and res.chunks_run == cfg.n_chunks - len(check.ok)
    assert_complete(tmp_path / "r", reference)


# ---------------------------------------------------------------------------
# a Ray worker killed mid-chunk (needs the [ray] extra; skipped without it)
# ---------------------------------------------------------------------------
@pytest.fixture
def local_ray(monkeypatch, tmp_path):
    """A local Ray of 2 CPUs whose workers import tests/fault_chunks.py and see the kill variables."""
    ray = pytest.importorskip("ray")
    path = os.pathsep.join([str(HERE), str(ROOT), os.environ.get("PYTHONPATH", "")])
    env = {"PYTHONPATH": path}

    def start(kill_seed: int, mark: Path | None):
        env["CAISHEN_TEST_KILL_SEED"] = str(kill_seed)
        if mark is not None:
            env["CAISHEN_TEST_MARK"] = str(mark)
        ray.init(num_cpus=2, include_dashboard=False, runtime_env={"env_vars": env})

    yield start
    ray.shutdown()


def test_a_ray_worker_killed_mid_chunk_is_retried_and_the_rows_equal_an_uninterrupted_run(
        tmp_path, local_ray, reference):
    cfg = config(dying_chunk)
    local_ray(int(runner.chunk_seeds(cfg.seed, cfg.n_chunks)[2]), tmp_path / "killed")
    res = run(cfg, tmp_path / "r", dying_chunk, backend="ray", workers=2)
    assert (tmp_path / "killed").exists()  # a Ray worker did die
    assert res.chunks_run == cfg.n_chunks and res.hands_run == cfg.games
    assert_complete(tmp_path / "r", reference)


def test_a_chunk_that_kills_its_ray_worker_every_time_stops_the_run_naming_it(tmp_path, local_ray, reference):
    cfg = config(dying_chunk)
    seed = int(runner.chunk_seeds(cfg.seed, cfg.n_chunks)[4])
    local_ray(seed, None)
    with pytest.raises(RuntimeError, match=rf"chunk 4 \(seed_entropy {seed}\) failed on Ray after 3 attempt"):
        run(cfg, tmp_path / "r", dying_chunk, backend="ray", workers=2)
    check = manifest.verify(tmp_path / "r")
    assert 4 not in check.ok and not check.problems  # nothing half-written, the other chunks kept
    res = run(cfg, tmp_path / "r", dying_chunk, workers=1)  # locally, without the kill: completes
    assert res.chunks_run == cfg.n_chunks - len(check.ok)
    assert_complete(tmp_path / "r", reference)


# ---------------------------------------------------------------------------
# a full disk
# ---------------------------------------------------------------------------
class _FullDisk:
    """``open`` for caishen.sim.selfplay.manifest whose files raise ENOSPC on write after ``ok_writes`` good ones."""

    def __init__(self, ok_writes: int, what: str):
        self.left = ok_writes
        self.what = what  # "chunk": the chunk's temporary file; "manifest": the manifest line

    def __call__(self, path, mode="r", *a, **kw):
        f = open(path, mode, *a, **kw)
        name = Path(path).name
        hit = name.startswith(".chunk-") if self.what == "chunk" else name == manifest.MANIFEST
        if "w" in mode or "a" in mode:
            if hit:
                if self.left <= 0:
                    f.write = self._enospc
                self.left -= 1
        return f

    @staticmethod
    def _enospc(data):
        raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))


@pytest.mark.parametrize("what", ["chunk", "manifest"])
def test_ENOSPC_stops_the_run_with_a_message_and_a_rerun_completes_it(tmp_path, monkeypatch, reference, what):
    cfg = config(dying_chunk)
    out = tmp_path / "r"
    monkeypatch.setattr(manifest, "open", _FullDisk(2, what), raising=False)
    with pytest.raises(runner.ChunkWriteError, match=r"cannot write chunk 2 .*No space left on device.*2 chunk\(s\) "
                                                     r"written before are safe.*rerun"):
        run(cfg, out, dying_chunk)
    monkeypatch.undo()
    check = manifest.verify(out)
    assert check.ok == [0, 1]
    assert not list((out / "chunks").glob(".*"))  # no temporary file left
    if what == "manifest":  # renamed into place, but its line could not be written: replayed
        assert check.problems[2][0] == "unrecorded"
    res = run(cfg, out, dying_chunk)
    assert (res.chunks_skipped, res.chunks_run) == (2, 4)
    assert_complete(out, reference)


def test_ENOSPC_in_caishen_simulate_exits_1_saying_how_to_resume(tmp_path, monkeypatch, capsys, engine_warm):
    monkeypatch.setattr(manifest, "open", _FullDisk(1, "chunk"), raising=False)
    code = cli.main(["simulate", "--games", "300", "--chunk-size", "100", "--policy", "random", "--workers", "1",
                     "--no-progress", "--out", str(tmp_path / "r")])
    err = capsys.readouterr().err
    assert code == 1 and "No space left on device" in err and "rerun the same command" in err
    assert "Traceback" not in err


# ---------------------------------------------------------------------------
# damaged chunk files
# ---------------------------------------------------------------------------
def test_truncated_replaced_junk_and_deleted_chunks_are_named_and_replayed(tmp_path, reference, capsys):
    cfg = config(dying_chunk)
    out = tmp_path / "r"
    run(cfg, out, dying_chunk)
    other = tmp_path / "other"
    run(config(dying_chunk, seed=99), other, dying_chunk)
    p = lambda i: records.chunk_path(out, i)  # noqa: E731
    p(0).unlink()  # missing
    data = p(1).read_bytes()
    p(1).write_bytes(data[: len(data) // 2])  # truncated (a copy cut short)
    p(3).write_bytes(records.chunk_path(other, 3).read_bytes())  # replaced by another run's chunk
    junk = bytearray(p(4).read_bytes())
    junk[len(junk) // 2:] = bytes(len(junk) - len(junk) // 2)  # same length, zeros in the second half
    p(4).write_bytes(bytes(junk))
    (out / "chunks" / "chunk-00077.parquet").write_bytes(b"stray")  # no chunk of this run
    check = manifest.verify(out)
    states = {i: s for i, (s, _) in check.problems.items()}
    assert states == {0: "missing", 1: "short", 3: "foreign", 4: "corrupt"}, check.problems
    assert "seed 99" in check.problems[3][1] and check.ok == [2, 5] and check.stray == ["chunk-00077.parquet"]
    # report: names them, says how to repair, summarizes the good chunks, exit status 1
    assert cli.main(["report", str(out)]) == 1
    got = capsys.readouterr()
    for line in ("chunk 0: missing", "chunk 1: short", "chunk 3: foreign", "chunk 4: corrupt",
                 f"caishen simulate --resume {out}", "chunk-00077.parquet"):
        assert line in got.err, line
    assert "finished chunks: 2 of 6 (damaged chunks left out)" in got.out and "Traceback" not in got.err
    # the next run replays exactly the damaged chunks
    res = run(cfg, out, dying_chunk)
    assert sorted(res.repaired) == [0, 1, 3, 4] and res.chunks_run == 4 and res.chunks_skipped == 2
    (out / "chunks" / "chunk-00077.parquet").unlink()
    assert manifest.verify(out).complete  # (the manifest holds a second line for each replayed chunk)
    pd.testing.assert_frame_equal(stream.read_run(out), reference)
    assert cli.main(["report", str(out)]) == 0


def test_report_on_a_run_with_only_damaged_chunks_exits_2_with_the_repair(tmp_path, capsys):
    cfg = config(dying_chunk, games=1000)
    out = tmp_path / "r"
    run(cfg, out, dying_chunk)
    for i in range(cfg.n_chunks):
        records.chunk_path(out, i).write_bytes(b"PAR1 not really")
    with pytest.raises(SystemExit) as e:
        cli.main(["report", str(out)])
    err = capsys.readouterr().err
    assert e.value.code == 2 and "no verified chunk" in err and "--resume" in err
    assert "chunk 0: short (truncated: 15 of" in err


def test_simulate_resume_repairs_a_real_run_from_its_run_json(tmp_path, capsys, engine_warm):
    out = tmp_path / "r"
    args = ["simulate", "--games", "400", "--chunk-size", "100", "--policy", "greedy,random,always,never",
            "--seed", "3", "--workers", "1", "--no-progress"]
    assert cli.main([*args, "--out", str(out)]) == 0
    ref = stream.read_run(out)
    data = records.chunk_path(out, 2).read_bytes()
    records.chunk_path(out, 2).write_bytes(data[:100])
    capsys.readouterr()
    assert cli.main(["simulate", "--resume", str(out), "--workers", "1", "--no-progress"]) == 0
    got = capsys.readouterr()
    assert "replayed 1 damaged chunk(s)" in got.err and "chunk 2: short" in got.err
    flat = " ".join(got.out.split())  # the head line wraps at 100 columns
    assert "played 1 chunk(s) now" in flat and "3 already done" in flat
    pd.testing.assert_frame_equal(stream.read_run(out), ref)
    for bad, message in ((["--games", "5"], "drop --games"), (["--option", "discard_win=0"], "drop --option")):
        with pytest.raises(SystemExit) as e:
            cli.main(["simulate", "--resume", str(out), *bad])
        assert e.value.code == 2 and message in capsys.readouterr().err
    with pytest.raises(SystemExit):
        cli.main(["simulate", "--resume", str(tmp_path / "nothing")])
    assert "is not a run directory" in capsys.readouterr().err


# ---------------------------------------------------------------------------
# two simulations on one directory; the parent killed
# ---------------------------------------------------------------------------
def _start(script: str, **env) -> subprocess.Popen:
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([str(HERE), str(ROOT)]), **env)
    return subprocess.Popen([sys.executable, "-c", textwrap.dedent(script)], cwd=ROOT, env=env,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, start_new_session=True)


def test_two_simulations_on_one_directory_the_second_is_refused_and_run_json_untouched(tmp_path, reference):
    out = tmp_path / "r"
    cfg = config(slow_chunk)
    first = _start(f"""
        from caishen.sim.selfplay import runner
        from fault_chunks import slow_chunk
        from test_runner_faults import config
        runner.run(config(slow_chunk), {str(out)!r}, workers=1, progress=False, chunk_fn=slow_chunk)
    """)
    try:
        deadline = time.monotonic() + 60
        while not ((out / "run.json").exists() and manifest.verify(out, checksums=False).ok):
            assert first.poll() is None, first.communicate()
            assert time.monotonic() < deadline
            time.sleep(0.02)
        stored = (out / "run.json").read_text()
        with pytest.raises(ValueError, match="in use by another running simulation"):
            run(cfg, out, slow_chunk)
        with pytest.raises(ValueError, match="in use by another running simulation"):
            run(config(slow_chunk, seed=5), out, slow_chunk)  # another configuration: refused before run.json
        assert (out / "run.json").read_text() == stored
    finally:
        _, err = first.communicate(timeout=120)
    assert first.returncode == 0, err
    check = manifest.verify(out)
    assert check.complete and sorted(e["chunk"] for e in manifest_lines(out)) == list(range(6))
    pd.testing.assert_frame_equal(stream.read_run(out), reference)  # slow_chunk's rows are plain_chunk's


def _alive(pid: int) -> bool:
    """True while ``pid`` runs (a zombie waiting for its reaper counts as gone)."""
    try:
        with open(f"/proc/{pid}/stat") as f:
            return f.read().rsplit(")", 1)[1].split()[0] != "Z"
    except FileNotFoundError:
        return False


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="reads /proc")
def test_parent_killed_with_sigkill_its_workers_exit_within_seconds(tmp_path):
    pids = tmp_path / "pids"
    pids.mkdir()
    parent = _start(f"""
        from caishen.sim.selfplay import runner
        from fault_chunks import gil_holding_chunk
        from test_runner_faults import config
        runner.run(config(gil_holding_chunk), {str(tmp_path / 'r')!r}, workers=2, progress=False,
                   chunk_fn=gil_holding_chunk)
    """, CAISHEN_TEST_PIDS=str(pids))
    workers = []
    try:
        deadline = time.monotonic() + 60
        while len(workers) < 2:
            assert parent.poll() is None, parent.communicate()
            assert time.monotonic() < deadline, "the workers did not start their chunks"
            time.sleep(0.05)
            workers = [int(p.stem) for p in pids.glob("*.pid")]
        assert all(_alive(w) for w in workers)
        parent.kill()  # SIGKILL, the parent alone
        parent.wait()
        t0 = time.monotonic()
        while any(_alive(w) for w in workers) and time.monotonic() - t0 < 10:
            time.sleep(0.05)
        gone_after = time.monotonic() - t0
        assert not any(_alive(w) for w in workers), f"workers {workers} still alive 10 s after the parent died"
        assert gone_after < 5
    finally:
        for w in workers:
            if _alive(w):
                os.kill(w, signal.SIGKILL)


def test_the_parent_watch_thread_ends_a_process_whose_parent_died(tmp_path):
    """The fallback where PR_SET_PDEATHSIG does not exist: a thread polling the parent pid."""
    middle = _start("""
        import os, subprocess, sys
        child = subprocess.Popen([sys.executable, "-c",
            "import sys, time\\nfrom caishen.sim.selfplay.runner import _watch_parent\\n_watch_parent(int(sys.argv[1]), 0.05)\\n"
            "time.sleep(60)", str(os.getpid())], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        print(child.pid, flush=True)
    """)
    out, err = middle.communicate(timeout=60)
    assert middle.returncode == 0, err
    child = int(out.split()[0])
    t0 = time.monotonic()
    while _alive(child) and time.monotonic() - t0 < 10:
        time.sleep(0.05)
    try:
        assert not _alive(child), "the watched process outlived its parent by 10 s"
    finally:
        if _alive(child):
            os.kill(child, signal.SIGKILL)


def test_worker_init_arms_the_parent_death_signal_on_linux():
    if sys.platform.startswith("linux"):
        assert runner._set_parent_death_signal() is True
        import ctypes

        libc = ctypes.CDLL(None)
        sig = ctypes.c_int(0)
        libc.prctl(2, ctypes.byref(sig), 0, 0, 0)  # PR_GET_PDEATHSIG
        assert sig.value == signal.SIGKILL
        libc.prctl(1, 0, 0, 0, 0)  # disarm again in the test process
    else:
        assert runner._set_parent_death_signal() is False
