"""Crash consistency (issue 23): kill the process at every rename and fsync of a small run, then rerun.

For each command -- ``caishen simulate``, ``caishen match``, ``caishen sweep``
and the 飘 study (``caishen.sim.analysis.piao_study.run_study`` with ``out``) -- the
harness first counts the ``os.replace`` / ``os.rename`` / ``os.fsync`` calls of
an uninterrupted run (every durable step of the tools goes through them:
:mod:`caishen.sim.safeio`, :mod:`caishen.sim.selfplay.manifest`).  Then for every one of
those calls, once just *before* it and once just *after* it, a forked copy of
this (warm) process runs the same command and is killed with SIGKILL there
(an injected hook: the process dies as under ``kill -9``, no handler runs).
After each kill it checks that

- the killed directory never offers short or mixed rows: every chunk that
  verifies (what ``caishen report`` would read) holds exactly the rows of
  the uninterrupted run's chunk of the same index;
- rerunning the same command (in this process) exits 0 and leaves exactly
  the uninterrupted rows (every chunk verified) and the same summary table.

Where ``strace`` can inject faults (``-e inject=SYSCALL:signal=KILL:when=N``),
the same is done at the syscall level on a run of the runner with a test
chunk function (no engine: a fresh process per kill stays cheap).
"""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
from pathlib import Path

import pandas as pd
import pytest

from caishen import cli
from caishen.sim.selfplay import manifest, records, stream
from caishen.sim.selfplay.runner import Execution

HERE = Path(__file__).resolve().parent
_HOOKED = ("replace", "rename", "fsync")


def _hook(n: int, when: str, counter: list) -> dict:
    """Wrap os.replace / os.rename / os.fsync: count calls; kill this process at call ``n`` (``when``:
    ``"before"`` or ``"after"`` it; ``n = 0``: only count).  Returns the originals."""
    real = {name: getattr(os, name) for name in _HOOKED}

    def wrap(name):
        f = real[name]

        def hooked(*a, **kw):
            counter[0] += 1
            hit = counter[0] == n
            if hit and when == "before":
                os.kill(os.getpid(), signal.SIGKILL)
            out = f(*a, **kw)
            if hit and when == "after":
                os.kill(os.getpid(), signal.SIGKILL)
            return out

        return hooked

    for name in _HOOKED:
        setattr(os, name, wrap(name))
    return real


def _unhook(real: dict) -> None:
    for name, f in real.items():
        setattr(os, name, f)


def _quiet_call(fn):
    """``fn()`` with stdout and stderr (Python and fd level) sent to /dev/null; its exit status."""
    sys.stdout = sys.stderr = open(os.devnull, "w")
    fd = os.open(os.devnull, os.O_WRONLY)
    os.dup2(fd, 1)
    os.dup2(fd, 2)
    try:
        rc = fn()
    except SystemExit as e:
        rc = e.code
    return rc if isinstance(rc, int) else 1


def count_events(fn) -> int:
    """The os.replace / os.rename / os.fsync calls of one uninterrupted ``fn()`` (in this process)."""
    counter = [0]
    real = _hook(0, "before", counter)
    try:
        try:
            fn()
        except SystemExit:
            pass
    finally:
        _unhook(real)
    return counter[0]


def killed_at(fn, n: int, when: str) -> bool:
    """Run ``fn()`` in a forked child that is SIGKILLed at durable call ``n``; True if it was killed."""
    pid = os.fork()
    if pid == 0:  # the child: never returns into pytest
        try:
            _hook(n, when, [0])
            rc = _quiet_call(fn)
        except BaseException:  # noqa: BLE001 - anything else is a failure the parent sees as rc 99
            rc = 99
        os._exit(rc)
    _, status = os.waitpid(pid, 0)
    if os.WIFSIGNALED(status):
        assert os.WTERMSIG(status) == signal.SIGKILL
        return True
    assert os.WEXITSTATUS(status) == 0, f"the child exited {os.WEXITSTATUS(status)} before its kill at call {n}"
    return False


def chunk_frames(run_dir: Path, chunks) -> dict[int, pd.DataFrame]:
    return {i: pd.read_parquet(records.chunk_path(run_dir, i)) for i in chunks}


def assert_no_short_or_mixed(run_dir: Path, ref_dir: Path, layout=None) -> None:
    """Every chunk of the killed run that verifies holds exactly the reference chunk's rows."""
    if not (run_dir / "run.json").exists() and layout is None:
        return
    try:
        check = manifest.verify(run_dir, layout=layout)
    except ValueError:  # e.g. no run.json yet: nothing to read
        return
    for i, df in chunk_frames(run_dir, check.ok).items():
        pd.testing.assert_frame_equal(df, pd.read_parquet(records.chunk_path(ref_dir, i)))


def run_dirs(root: Path) -> list[Path]:
    """The runner directories of a command's output: itself, or a sweep's points."""
    pts = root / "points"
    return sorted(pts.iterdir()) if pts.is_dir() else [root]


def assert_same_rows(out: Path, ref: Path) -> None:
    got, want = run_dirs(out), run_dirs(ref)
    assert [p.relative_to(out) for p in got] == [p.relative_to(ref) for p in want]
    for g, w in zip(got, want):
        assert manifest.verify(g).complete, manifest.verify(g).describe()
        pd.testing.assert_frame_equal(stream.read_run(g), stream.read_run(w))


SUMMARY_FILES = {"simulate": ("summary.json", "rows"), "match": ("match.json", "policy_rows"),
                 "sweep": ("sweep.csv", None)}


def assert_same_summary(kind: str, out: Path, ref: Path) -> None:
    name, key = SUMMARY_FILES[kind]
    if key is None:
        assert (out / name).read_text() == (ref / name).read_text()
    else:
        assert json.loads((out / name).read_text())[key] == json.loads((ref / name).read_text())[key]


COMMANDS = {
    "simulate": ["simulate", "--games", "240", "--chunk-size", "80", "--policy", "greedy,random,always,never",
                 "--seed", "5", "--workers", "1", "--no-progress"],
    "match": ["match", "--policies", "greedy,random", "--walls", "24", "--chunk-walls", "8", "--seed", "6",
              "--workers", "1", "--no-progress"],
    "sweep": ["sweep", "--option", "failed_piao_factor=1,2", "--walls", "120", "--chunk-size", "60", "--seed", "7",
              "--workers", "1", "--no-progress"],
}


@pytest.mark.parametrize("kind", sorted(COMMANDS))
def test_a_kill_at_every_rename_and_fsync_then_a_rerun_gives_exactly_the_uninterrupted_rows(kind, tmp_path,
                                                                                         engine_warm, capsys):
    argv = COMMANDS[kind]
    ref = tmp_path / "ref"
    assert cli.main([*argv, "--out", str(ref)]) == 0
    n_events = count_events(lambda: cli.main([*argv, "--out", str(tmp_path / "count")]))
    assert n_events >= 10  # run.json, every chunk and its manifest line, the summary files
    capsys.readouterr()
    tried = held = 0
    for n in range(1, n_events + 1):
        for when in ("before", "after"):
            out = tmp_path / f"k{n}{when[0]}"
            assert killed_at(lambda: cli.main([*argv, "--out", str(out)]), n, when)
            tried += 1
            for d in run_dirs(out) if out.is_dir() else []:
                assert_no_short_or_mixed(d, ref / d.relative_to(out))
            assert cli.main([*argv, "--out", str(out)]) == 0, f"rerun after a kill {when} call {n}"
            assert_same_rows(out, ref)
            assert_same_summary(kind, out, ref)
            held += 1
            shutil.rmtree(out)
            capsys.readouterr()
    assert (tried, held) == (2 * n_events, 2 * n_events)
    print(f"{kind}: kills at every rename/fsync ({n_events} calls, before and after each): {tried} tried, "
          f"{held} held")


def test_a_kill_at_every_rename_and_fsync_of_the_piao_study_then_a_rerun_gives_its_points(tmp_path, engine_warm):
    from caishen.sim.analysis import piao_study

    kw = dict(hands=120, seed=3, rollouts=1, chunk_size=40, execution=Execution(1, progress=False))
    ref = piao_study.run_study(**kw)

    def study(out):
        piao_study.run_study(**kw, out=out)
        return 0

    n_events = count_events(lambda: study(tmp_path / "count"))
    assert n_events >= 10
    tried = 0
    for n in range(1, n_events + 1):
        for when in ("before", "after"):
            out = tmp_path / f"k{n}{when[0]}"
            assert killed_at(lambda: study(out), n, when)
            tried += 1
            if (out / piao_study.STUDY_JSON).exists():
                lay = piao_study.study_layout(piao_study.read_study_json(out))
                for i in manifest.verify(out, layout=lay).ok:  # never short or mixed
                    got = pd.read_parquet(records.chunk_path(out, i))
                    pd.testing.assert_frame_equal(got, ref[ref["chunk"] == i].reset_index(drop=True),
                                                  check_dtype=False)
            pd.testing.assert_frame_equal(piao_study.run_study(**kw, out=out), ref)
            assert piao_study.read_points(out)[2].complete
            shutil.rmtree(out)
    assert tried == 2 * n_events
    print(f"piao study: kills at every rename/fsync ({n_events} calls, before and after each): {tried} tried, "
          f"{tried} held")


# ---------------------------------------------------------------------------
# syscall level: strace fault injection
# ---------------------------------------------------------------------------
RUNNER_SCRIPT = """
import sys
sys.path.insert(0, {tests!r})
import fault_chunks
from caishen.sim.selfplay import runner
cfg = runner.RunConfig("kaihua", runner.resolve_options("kaihua", {{}}), ("random",) * 4, 9, 300, 100,
                       runner._fn_name(fault_chunks.plain_chunk))
runner.run(cfg, sys.argv[1], workers=1, progress=False, chunk_fn=fault_chunks.plain_chunk)
"""


def _strace_works() -> bool:
    if shutil.which("strace") is None:
        return False
    r = subprocess.run(["strace", "-f", "-qq", "-o", os.devnull, "-e", "trace=getpid",
                        "-e", "inject=getpid:signal=KILL:when=1", sys.executable, "-c", "import os; os.getpid()"],
                       capture_output=True)
    return r.returncode == -signal.SIGKILL or r.returncode == 128 + signal.SIGKILL


@pytest.mark.skipif(not _strace_works(), reason="strace fault injection is not available here")
def test_strace_kills_at_every_rename_and_fsync_syscall_then_a_rerun_gives_the_uninterrupted_rows(tmp_path):
    sys.path.insert(0, str(HERE))
    import fault_chunks

    from caishen.sim.selfplay import runner

    script = tmp_path / "run.py"
    script.write_text(RUNNER_SCRIPT.format(tests=str(HERE)))
    env = dict(os.environ)
    ref = tmp_path / "ref"
    assert subprocess.run([sys.executable, str(script), str(ref)], env=env).returncode == 0
    trace = tmp_path / "trace"
    calls = {"fsync": "fsync", "rename": "rename,renameat,renameat2"}
    counts = {}
    for name, syscalls in calls.items():
        subprocess.run(["strace", "-f", "-qq", "-o", str(trace), "-e", f"trace={syscalls}", sys.executable,
                        str(script), str(tmp_path / f"count-{name}")], env=env, check=True)
        counts[name] = sum(1 for line in trace.read_text().splitlines() if "resumed" not in line
                           and any(line.split(None, 1)[-1].startswith(s + "(") for s in syscalls.split(",")))
    # three chunks: kills in the first, a middle and the last chunk and in the run's own files (each kill
    # point is a process of its own; more chunks repeat the middle one); each chunk is fsynced and renamed
    assert counts["fsync"] >= 2 * 3 and counts["rename"] >= 3
    cfg = runner.RunConfig("kaihua", runner.resolve_options("kaihua", {}), ("random",) * 4, 9, 300, 100,
                           runner._fn_name(fault_chunks.plain_chunk))
    tried = 0
    for name, syscalls in calls.items():
        for n in range(1, counts[name] + 1):
            out = tmp_path / f"{name}{n}"
            r = subprocess.run(["strace", "-f", "-qq", "-o", os.devnull, "-e", f"trace={syscalls}",
                                "-e", f"inject={syscalls}:signal=KILL:when={n}", sys.executable, str(script),
                                str(out)], env=env, capture_output=True)
            assert r.returncode in (-signal.SIGKILL, 128 + signal.SIGKILL), (name, n, r.returncode, r.stderr[-500:])
            tried += 1
            assert_no_short_or_mixed(out, ref)
            runner.run(cfg, out, workers=1, progress=False, chunk_fn=fault_chunks.plain_chunk)
            assert manifest.verify(out).complete
            pd.testing.assert_frame_equal(stream.read_run(out), stream.read_run(ref))
            shutil.rmtree(out)
    assert tried == counts["fsync"] + counts["rename"]
    print(f"strace: kills at every rename ({counts['rename']}) and fsync ({counts['fsync']}) syscall: "
          f"{tried} tried, {tried} held")


# ---------------------------------------------------------------------------
# caishen learn (issue 42 kind 4): an iteration commits as one unit
# ---------------------------------------------------------------------------
LEARN = dict(hands=4, max_iterations=2, steps=2, eval_walls=0, n_det=1, frac=0.5)
#: the curve's columns that are wall-clock measurements (never equal between two runs)
TIMINGS = ["seconds", "decisions_per_s", "labelled_per_s"]


def _learn(out) -> int:
    from caishen.agents.exit import learn, settings

    learn("kaihua", out, log=None, **settings(**LEARN))
    return 0


def learn_rows(out: Path) -> tuple:
    """What a learn folder offers: the curve (its timings aside), the labels buffer and the learned weights."""
    import numpy as np

    curve = pd.read_csv(out / "curve.csv").drop(columns=TIMINGS)
    with np.load(out / "buffer.npz") as z:
        buf = {k: z[k] for k in z.files}
    with np.load(out / "learned.npz") as z:
        net = {k: z[k] for k in z.files}
    return curve, buf, net


def assert_same_learn(out: Path, ref: tuple) -> None:
    import numpy as np

    curve, buf, net = learn_rows(out)
    pd.testing.assert_frame_equal(curve, ref[0])
    assert set(buf) == set(ref[1]) and set(net) == set(ref[2])
    for k in buf:
        np.testing.assert_array_equal(buf[k], ref[1][k], err_msg=k)
    for k in net:
        np.testing.assert_array_equal(net[k], ref[2][k], err_msg=k)


def assert_killed_learn_is_whole(out: Path) -> None:
    """A killed learn folder never offers a repeated or half iteration: curve.csv counts 1..k once each, and a
    checkpoint (when there is one) loads and is at k or later (a commit covers the iterations since the last
    one, ``exit.COMMIT_SECONDS``; its curve rewrite still to come), its curve's first k rows curve.csv's."""
    if (out / "curve.csv").exists():
        its = pd.read_csv(out / "curve.csv")["iteration"].tolist()
        assert its == list(range(1, len(its) + 1)), its
        if (out / "checkpoint.pt").exists():
            import torch

            state = torch.load(out / "checkpoint.pt", weights_only=True)["state"]
            assert state["iteration"] >= len(its) and [r[0] for r in state["curve"][:len(its)]] == its


def test_learn_a_kill_at_every_rename_and_fsync_then_a_rerun_gives_exactly_the_uninterrupted_rows(tmp_path,
                                                                                                monkeypatch):
    pytest.importorskip("torch")
    from caishen.agents import exit as ex

    monkeypatch.setattr(ex, "COMMIT_SECONDS", 0.0)  # a commit per iteration (the full-disk test: one at the end)
    _learn(tmp_path / "ref")
    ref = learn_rows(tmp_path / "ref")
    assert len(ref[0]) == LEARN["max_iterations"] and len(ref[1]["n"]) > 0
    n_events = count_events(lambda: _learn(tmp_path / "count"))
    assert n_events >= 10  # per iteration: the net it plays, its labels, the checkpoint, the curve, the export
    tried = 0
    for n in range(1, n_events + 1):
        for when in ("before", "after"):
            out = tmp_path / f"k{n}{when[0]}"
            assert killed_at(lambda: _learn(out), n, when)
            tried += 1
            assert_killed_learn_is_whole(out)
            _learn(out)
            assert_same_learn(out, ref)
            shutil.rmtree(out)
    assert tried == 2 * n_events
    print(f"learn: kills at every rename/fsync ({n_events} calls, before and after each): {tried} tried, {tried} held")


def test_learn_a_full_disk_at_every_rename_and_fsync_is_named_then_a_rerun_gives_exactly_the_uninterrupted_rows(
        tmp_path, monkeypatch):
    """ENOSPC from each rename and fsync of a learn (rename(2) and fsync(2) both fail so on a full disk):
    either a one-line error naming the file (the temporary file removed) or, where the fault is harmless (a
    directory's fsync), no error; never a repeated iteration: the rerun on a disk with room gives the
    uninterrupted rows."""
    import errno

    pytest.importorskip("torch")
    from caishen.sim import safeio

    _learn(tmp_path / "ref")
    ref = learn_rows(tmp_path / "ref")
    n_events = count_events(lambda: _learn(tmp_path / "count"))
    real = {name: getattr(os, name) for name in _HOOKED}
    failed = 0
    for n in range(1, n_events + 1):
        out = tmp_path / f"f{n}"
        seen = [0]

        def wrap(f):
            def full(*a, **kw):
                seen[0] += 1
                if seen[0] == n:
                    raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))
                return f(*a, **kw)
            return full

        for name, f in real.items():
            monkeypatch.setattr(os, name, wrap(f))
        try:
            _learn(out)
        except safeio.FileError as e:
            failed += 1
            assert "No space left on device" in str(e) and "\n" not in str(e) and str(out) in str(e)
        finally:
            for name, f in real.items():
                monkeypatch.setattr(os, name, f)
        assert not [p for p in out.iterdir() if p.name.endswith(".tmp")]
        assert_killed_learn_is_whole(out)
        _learn(out)
        assert_same_learn(out, ref)
        shutil.rmtree(out)
    assert failed >= n_events // 3  # most faults stop the learn (the rest hit a directory's fsync)
    print(f"learn: ENOSPC at each of {n_events} renames and fsyncs: {failed} named, every rerun gave the "
          "uninterrupted rows")
