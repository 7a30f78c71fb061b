"""caishen.sim.warmup: the first-use warning on a cold cache, the marks, `warmup` targets (issue 11 item 3)."""

from __future__ import annotations

import logging
import re

import pytest

from caishen.cli.warmup import warmup
from caishen.sim import warmup as W


@pytest.fixture
def cold(tmp_path, monkeypatch):
    """A cache directory with no marks, and no target announced in this process yet; alone in its parent
    (:func:`caishen.sim.warmup.estimates` also reads the cache directories beside it: other tests' here)."""
    tmp_path = tmp_path / "cache"
    tmp_path.mkdir()
    monkeypatch.setattr(W, "cache_dir", lambda: tmp_path)
    monkeypatch.setattr(W, "_announced", set())
    monkeypatch.setattr(W, "_side", [])  # no side process started by an earlier test's command
    return tmp_path


def fresh_kernel():
    """A numba kernel no cache holds (defined anew at each call, not cached): calling it compiles."""
    from numba import njit

    @njit(cache=False)
    def plus_one(x):
        return x + 1

    return plus_one


def test_compile_watch_sees_a_compile_and_not_a_cache_hit(tmp_path):
    """numba's numba:compile event fires only for a kernel not in the cache: a cache hit is not a compile."""
    import importlib.util

    k = fresh_kernel()
    with W.CompileWatch() as w:
        assert k(1) == 2
    assert w.kernels == 1 and w.seconds > 0 and not w.announced
    with W.CompileWatch() as w:
        assert k(2) == 3  # compiled in this process already
    assert w.kernels == 0 and w.seconds == 0
    src = tmp_path / "cached_kernel.py"
    src.write_text("from numba import njit\n\n\n@njit(cache=True)\ndef twice(x):\n    return 2 * x\n")

    def load(name):
        spec = importlib.util.spec_from_file_location(name, src)
        mod = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(mod)
        return mod.twice

    with W.CompileWatch() as first:
        assert load("cached_kernel_a")(3) == 6  # compiles and saves to numba's cache
    with W.CompileWatch() as second:
        assert load("cached_kernel_b")(4) == 8  # a new dispatcher of the same source: loads the cache
    assert first.kernels == 1 and second.kernels == 0


def test_first_use_warns_when_numba_compiles_even_with_a_mark(cold, caplog):
    """The mark never says "loading" while numba compiles: the warning follows the compile, not the mark."""
    W.set_mark("hand")
    k = fresh_kernel()
    with caplog.at_level(logging.WARNING, logger="caishen"):
        with W.first_use("hand"):
            k(1)
        with W.first_use("hand"):  # the same process: said once
            fresh_kernel()(1)
    msgs = [r.getMessage() for r in caplog.records]
    assert len(msgs) == 2 and "compiling the hand kernels" in msgs[0] and "caishen warmup" in msgs[0]
    assert msgs[1].startswith("caishen: compiled 1 hand kernel(s) in ")
    assert W.is_marked("hand")


def test_first_use_is_quiet_when_nothing_compiles_and_marks(cold, caplog):
    """No mark yet (a cold mark directory) but nothing to compile: no banner, and the target is marked."""
    with caplog.at_level(logging.WARNING, logger="caishen"):
        with W.first_use("game"):
            pass
    assert caplog.records == [] and W.is_marked("game")


def test_compile_line_says_when_and_how_long_and_speaks_for_first_use(cold, caplog):
    import io

    buf = io.StringIO()
    with caplog.at_level(logging.WARNING, logger="caishen"):
        with W.compile_line("caishen x", buf) as w:
            with W.first_use("envs"):  # inside a command: the command's line speaks, not the logger
                fresh_kernel()(1)
    lines = buf.getvalue().splitlines()
    assert lines[0].startswith("caishen x: compiling numba kernels, once per cache (")
    assert "not in the cache yet:" in buf.getvalue()
    lines = _body(lines)
    assert len(lines) == 1 and w.kernels == 1
    assert lines[0].startswith(f"caishen x: compiled {w.kernels} numba kernel(s) in ")
    assert lines[0].endswith(" s of compiling")  # issue 45
    assert caplog.records == [] and W.is_marked("envs")
    buf = io.StringIO()
    with W.compile_line("caishen x", buf):
        pass
    assert buf.getvalue() == ""


def test_no_mark_when_the_first_use_fails(cold):
    with pytest.raises(KeyError):
        with W.first_use("score"):
            raise KeyError("boom")
    assert not W.is_marked("score")


def test_warmup_runs_the_workload_and_marks(cold):
    lines = []
    took = warmup("hand", progress=lines.append)
    assert set(took) == {"hand"} and took["hand"] >= 0
    assert lines[0] == "kernels: hand ..." and re.match(r"kernels: hand (compiled \d+ kernel\(s\)|loaded from the "
                                                      r"cache) in \d", lines[-1]), lines
    assert W.is_marked("hand") and not W.is_marked("game")


@pytest.mark.parametrize("bad", ["gpu", "", "Hand"])
def test_unknown_target_is_named(bad):
    with pytest.raises(ValueError, match=repr(bad).replace("'", ".")):
        warmup([bad])
    with pytest.raises(ValueError, match="unknown warmup target"):
        with W.first_use(bad):
            pass


def test_cli_warmup(cold, capsys):
    from caishen.cli import main

    assert main(["warmup", "hand"]) == 0
    out, err = capsys.readouterr()
    assert err.startswith("caishen warmup: kernels: hand ...\n") and "caishen warmup: kernels: hand " in err
    assert "ready in" in out and str(cold) in out
    with pytest.raises(SystemExit) as e:
        main(["warmup", "gpu"])
    assert e.value.code == 2 and "'gpu'" in capsys.readouterr().err


def test_game_reset_announces_a_compile_only_when_there_is_one(cold, caplog):
    from caishen.sim.engine import Game

    with caplog.at_level(logging.WARNING, logger="caishen"), W.CompileWatch() as w:
        Game("kaihua").reset(seed=1)
        Game("jiating").reset(seed=2)
    said = [r.getMessage() for r in caplog.records if "compiling the game kernels" in r.getMessage()]
    assert len(said) == (1 if w.kernels else 0) and len(caplog.records) == (2 if w.kernels else 0)
    assert W.is_marked("game")


def test_runner_compiles_in_the_parent_and_says_what_happened(cold, tmp_path, capsys, monkeypatch):
    from caishen.sim.selfplay import runner

    monkeypatch.setattr(runner, "_loaded_said", [])
    cfg = runner.make_config("kaihua", 32, 1, "random", chunk_size=16)
    with W.CompileWatch() as w:
        runner.run(cfg, tmp_path / "r1", workers=1, progress=True)
    err = capsys.readouterr().err
    assert ("numba kernels: compiling" in err) == bool(w.kernels) and W.is_marked("selfplay", "kernel")
    runner._loaded_said.clear()
    res = runner.run(runner.make_config("kaihua", 32, 2, "random", chunk_size=16), tmp_path / "r2", workers=1,
                     progress=True)
    # one throughput figure, the play's: the kernels' seconds (compile or cache load) are counted apart
    assert 0 < res.compile_seconds < res.seconds
    assert res.hands_per_second == pytest.approx(32 / (res.seconds - res.compile_seconds))
    err = capsys.readouterr().err
    assert "numba kernels: loaded from the cache in" in err and "compiling" not in err
    runner.run(runner.make_config("kaihua", 32, 4, "random", chunk_size=16), tmp_path / "r3", workers=1,
               progress=True)
    assert "numba kernels" not in capsys.readouterr().err  # said once per process (a sweep's many points)
    # a chunk function that compiles (here: a kernel no cache holds) says so, and how many it compiled
    k = fresh_kernel()

    def compiling_chunk(rules, options, policies, seed, n):
        k(n)
        return runner.engine_chunk(rules, options, policies, seed, n)

    runner._compile_in_parent(cfg, compiling_chunk, True)
    err = capsys.readouterr().err.splitlines()
    assert err[0].startswith("numba kernels: compiling") and err[1].startswith("numba kernels: compiled 1 in ")
    # inside a command's compile line only that line speaks: one start and one end, not two of each
    k2 = fresh_kernel()

    def compiling_chunk2(rules, options, policies, seed, n):
        k2(n)
        return runner.engine_chunk(rules, options, policies, seed, n)

    with W.compile_line("caishen test"):
        runner._compile_in_parent(cfg, compiling_chunk2, True)
    err = capsys.readouterr().err.splitlines()
    assert err[0].startswith("caishen test: compiling numba kernels")
    err = _body(err)
    assert len(err) == 1 and err[0].startswith("caishen test: compiled 1 numba kernel(s) in "), err
    assert not W.inside_compile_line()
    # a match and a sweep compile in the parent too (their chunk functions), so the line comes before any worker
    from caishen.cli import main

    runner._loaded_said.clear()
    assert main(["match", "--rules", "kaihua", "--policies", "greedy,random", "--walls", "6", "--chunk-walls", "6",
                 "--workers", "1", "--out", str(tmp_path / "m")]) == 0
    assert "numba kernels: loaded from the cache in" in capsys.readouterr().err


def test_warmup_marks_every_part_of_selfplay(cold):
    W.mark("selfplay")
    assert W.is_marked("selfplay", "bots") and W.is_marked("selfplay", "kernel")


class _Tty:
    """A terminal-like text stream (the progress bar is drawn only on a terminal)."""

    def __init__(self):
        import io

        self.buf = io.StringIO()

    def write(self, text):
        return self.buf.write(text)

    def flush(self):
        pass

    def isatty(self):
        return True


def test_compile_line_draws_kernel_progress_on_a_terminal_and_keeps_the_estimate(cold):
    """Issue 45: a cold compile shows "kernel N of M" on a terminal, M from this machine's last compile of
    the same command (or the shipped count), and records what it measured for the next time."""
    assert W.estimates("caishen simulate") == (W.DEFAULT_KERNELS["caishen simulate"], None)
    assert W.estimates("caishen nothing") == (None, None)
    tty = _Tty()
    with W.compile_line("caishen simulate", tty) as w:
        fresh_kernel()(1)
        fresh_kernel()(2)
    text = tty.buf.getvalue()
    assert f"kernel 1 of {W.DEFAULT_KERNELS['caishen simulate']}" in text
    assert text.rstrip().splitlines()[-1].startswith("caishen simulate: compiled 2 numba kernel(s) in ")
    kernels, seconds = W.estimates("caishen simulate")
    assert kernels == w.kernels == 2 and seconds is not None and seconds >= 0
    tty = _Tty()
    with W.compile_line("caishen simulate", tty):
        fresh_kernel()(1)
    assert "kernel 1 of 2" in tty.buf.getvalue()  # the estimate this machine measured


def _body(lines: list[str]) -> list[str]:
    """A compile line's lines after its header (the first line and its indented continuations)."""
    return [x for x in lines[1:] if not x.startswith("    ")]


def _no_secs(line: str) -> str:
    """A ``kernel N of M (T s)`` line without its seconds."""
    return re.sub(r" \(\d+ s\)$", "", line)


def test_compile_line_on_a_pipe_logs_the_kernel_count_now_and_then(cold, monkeypatch):
    """Issue 45: on a file or a pipe (a log, CI) there is no bar, but a line ``kernel N of M (T s)`` at a
    kernel's end at most every LOG_EVERY_S seconds, so a long compile never sits silent."""
    import io

    monkeypatch.setattr(W, "LOG_EVERY_S", 0.0)
    log = io.StringIO()
    want = W.estimates("caishen simulate")[0]
    with W.compile_line("caishen simulate", log):
        fresh_kernel()(1)
        fresh_kernel()(2)
    lines = [_no_secs(x) for x in _body(log.getvalue().splitlines())]
    assert lines[:2] == [f"caishen simulate: compiling, kernel 1 of {want}",
                          f"caishen simulate: compiling, kernel 2 of {want}"], lines
    assert "\r" not in log.getvalue() and lines[-1].startswith("caishen simulate: compiled 2 numba kernel(s)")


def test_the_count_never_passes_its_estimate_and_a_partial_compile_keeps_the_fuller_one(cold, monkeypatch):
    """A newcomer saw "kernel 97 of 96" and a helper "kernel 92 of 2": past the estimate the line shows the
    count alone, and a smaller compile (another command had cached most kernels) does not lower the estimate."""
    import io

    monkeypatch.setattr(W, "LOG_EVERY_S", 0.0)
    W._record_estimate("caishen match", 2, 1.0)
    log = io.StringIO()
    with W.compile_line("caishen match", log):
        for i in range(3):
            fresh_kernel()(i)
    lines = [_no_secs(x) for x in log.getvalue().splitlines() if "compiling, kernel" in x]
    assert lines == ["caishen match: compiling, kernel 1 of 2", "caishen match: compiling, kernel 2 of 2",
                     "caishen match: compiling, kernel 3"], lines
    assert W.estimates("caishen match")[0] == 3
    W._record_estimate("caishen match", 1, 0.5)  # a partial compile afterwards
    assert W.estimates("caishen match")[0] == 3


def test_on_a_pipe_a_line_comes_while_one_kernel_keeps_numba_busy(cold, monkeypatch):
    """Issue 45 (first hour): a pipe showed nothing for 20-40 s while numba compiled; the watcher thread says
    ``kernel N of M (T s)`` every LOG_EVERY_S s while numba is busy, and nothing while it is not."""
    import io
    import time

    monkeypatch.setattr(W, "LOG_EVERY_S", 0.05)
    monkeypatch.setattr(W, "_POLL_S", 0.01)
    log = io.StringIO()
    bar = W._KernelBar("caishen x", log)
    try:
        bar.begin()  # one long kernel: no step for a while
        time.sleep(0.5)
        bar.clear()  # idle: no more lines
        busy = log.getvalue().splitlines()
        time.sleep(0.3)
        assert log.getvalue().splitlines() == busy
    finally:
        bar.close()
    assert len(busy) >= 3 and all(re.fullmatch(r"caishen x: compiling, kernel 0( of \d+)? \(\d+ s\)", x) for x in busy), busy


def test_the_compile_line_comes_when_the_work_begins_once(cold, monkeypatch):
    """Issue 45 (first hour): `caishen piao` said "compiled N kernels" after its whole check, and a quiet-time
    guess then said "compiled 22" while 92 more were to come: the line comes when the command's work begins
    (compile_over), says so, and a second line comes only when more compiled, as the sum "in all"."""
    import io

    log = io.StringIO()
    with W.compile_line("caishen y", log):
        fresh_kernel()(1)
        W.compile_over()
        W.compile_over()  # a sweep's next run: nothing more
        during = _body(log.getvalue().splitlines())
    assert len(during) == 1 and during[-1].startswith("caishen y: compiled 1 numba kernel(s) in "), during
    assert during[-1].endswith(" s of compiling before the work began")
    assert _body(log.getvalue().splitlines()) == during  # nothing more at the end
    log = io.StringIO()
    with W.compile_line("caishen y", log):
        fresh_kernel()(1)
        W.compile_over()
        fresh_kernel()(2)  # more after the line: the end sums up
    lines = _body(log.getvalue().splitlines())
    assert lines[0].endswith("before the work began")
    assert lines[-1].startswith("caishen y: compiled 2 numba kernel(s) in all, ") and "(1 of them during" in lines[-1]
    log = io.StringIO()
    with W.compile_line("caishen y", log):
        W.compile_over()  # nothing compiled yet: nothing said
        fresh_kernel()(1)
    lines = _body(log.getvalue().splitlines())
    assert len(lines) == 1 and lines[-1].startswith("caishen y: compiled 1 ") and "in all" not in lines[-1]
    W.compile_over()  # outside a block: nothing


def test_a_compile_line_ends_an_open_progress_bars_line_on_a_pipe(cold):
    """Issue 45 (first hour): a log read `kaihua:   0%|...| [00:00<?, ?hand/s]caishen simulate: compiled ...`:
    a line said while the run's bar is open on the same pipe starts on a line of its own, and the bar's
    redraws are whole lines there (no carriage returns making one line of the whole run), 100 columns at most."""
    import io

    log = io.StringIO()
    bar = W.progress_bar(10, "kaihua", out=log)
    try:
        W.say(log, "caishen simulate: compiled 3 numba kernel(s)")
        bar.update(10)
    finally:
        bar.close()
    text = log.getvalue()
    lines = text.splitlines()
    assert "\r" not in text and text.endswith("\n")
    assert lines[1] == "caishen simulate: compiled 3 numba kernel(s)"
    assert lines[0].startswith("kaihua:   0%|") and lines[-1].startswith("kaihua: 100%|")
    assert max(len(line) for line in lines) <= 100
    log = io.StringIO()
    W.say(log, "a line")
    assert log.getvalue() == "a line\n"


def test_a_progress_bar_on_a_pipe_draws_at_most_every_few_seconds(cold, monkeypatch):
    """The bar on a pipe writes a line at the start and the end, and in between only when LOG_EVERY_S passed."""
    import io

    log = io.StringIO()
    bar = W.progress_bar(1000, "kaihua", out=log)
    for _ in range(100):
        bar.update(10)
    bar.close()
    assert len(log.getvalue().splitlines()) == 2  # LOG_EVERY_S is 5 s: no redraw in between
    log = io.StringIO()
    bar = W.progress_bar(5, "kaihua", out=log, disable=True)
    bar.update(5)
    bar.close()
    assert log.getvalue() == ""


def test_the_compile_header_fits_100_columns(cold):
    import io

    from caishen.sim.termtext import display_width

    log = io.StringIO()
    with W.compile_line("caishen simulate", log):
        fresh_kernel()(1)
    lines = log.getvalue().splitlines()
    assert len(lines) >= 3 and max(display_width(x) for x in lines) <= 100, lines
    text = " ".join(" ".join(lines).split())  # the header wraps at 100 columns
    assert "in one process on 2 cores, longer on a busy machine" in text or "here last time" in text


def test_warmup_progress_lines_are_one_write_each(capsys):
    """Issue 45 (first hour): two `warmup --workers 2` workers' lines merged on one line: each line is one
    write, flushed."""
    import io

    from caishen.cli import warmup as cli_warmup

    class Writes(io.StringIO):
        calls: list[str] = []

        def write(self, text):
            self.calls.append(text)
            return super().write(text)

    out = Writes()
    W.say(out, "caishen warmup: kernels: hand ...")
    assert out.calls == ["caishen warmup: kernels: hand ...\n"]
    cli_warmup._stderr("kernels: envs ...")
    assert capsys.readouterr().err == "caishen warmup: kernels: envs ...\n"


def test_the_bar_draws_on_a_terminal_that_reports_no_size(cold):
    """A pty without a size (0 x 0, as under ``script`` or some CI runners) still gets the bar (tqdm alone
    draws nothing there)."""
    import os
    import pty

    main_fd, child_fd = pty.openpty()
    try:
        with open(child_fd, "w", closefd=False) as tty:
            with W.compile_line("caishen simulate", tty):
                fresh_kernel()(1)
        out = os.read(main_fd, 1 << 16).decode("utf-8", "replace")
    finally:
        os.close(main_fd)
        os.close(child_fd)
    assert "kernel 1 of" in out


def test_estimates_read_an_older_cache_beside_this_one_and_ignore_a_damaged_file(tmp_path, monkeypatch):
    """A new cache (changed sources) starts from the estimate an earlier cache of this machine measured; a
    damaged or hostile estimates file is ignored, never an error."""
    old, new = tmp_path / "numba-old", tmp_path / "numba-new"
    (old / "caishen-warm").mkdir(parents=True)
    (old / "caishen-warm" / W.ESTIMATES).write_text('{"caishen match": {"kernels": 101, "seconds": 42.0}}')
    monkeypatch.setattr(W, "cache_dir", lambda: new)
    assert W.estimates("caishen match") == (101, 42.0)
    (new / "caishen-warm").mkdir(parents=True)
    for bad in ("{not json", '{"caishen match": {"kernels": -3, "seconds": 1}}', '["x"]', "x" * 100_000):
        (new / "caishen-warm" / W.ESTIMATES).write_text(bad)
        assert W.estimates("caishen match") == (101, 42.0)


def test_cli_warmup_workers_compiles_targets_in_parallel_processes(cold, monkeypatch, capsys):
    """`caishen warmup --workers 2` runs each target in its own process (into the shared cache) and says
    when each is ready; a bad --workers is named."""
    from caishen.cli import main
    from caishen.cli import warmup as cli_warmup

    lines = []
    took = cli_warmup.warmup_parallel(["hand"], 2, progress=lines.append)
    assert set(took) == {"hand"} and lines == ["1 target(s) (hand) in 1 process(es); each line below says when a "
                                               "target starts and ends"]
    seen = []
    monkeypatch.setattr(cli_warmup, "warmup_parallel",
                        lambda targets, workers, progress=None: seen.append((targets, workers)) or {"hand": 1.0})
    assert main(["warmup", "hand", "score", "--workers", "2"]) == 0
    assert seen == [(["hand", "score"], 2)] and "ready in" in capsys.readouterr().out
    with pytest.raises(SystemExit) as e:
        main(["warmup", "--workers", "0"])
    assert e.value.code == 2 and "--workers 0" in capsys.readouterr().err


def test_warmup_workers_say_when_each_target_starts_and_ends(cold, capfd):
    """Issue 45: `caishen warmup --workers N` speaks from the start: each worker process says on stderr when
    its target starts and when it ends."""
    from caishen.cli import warmup as cli_warmup

    cli_warmup.warmup_parallel(["hand"], 2, progress=lambda line: None)
    err = capfd.readouterr().err.splitlines()
    assert err[0] == "caishen warmup: kernels: hand ..." and re.match(
        r"caishen warmup: kernels: hand (compiled \d+ kernel\(s\)|loaded from the cache) in \d", err[-1]), err


def test_side_compile_starts_its_process_only_on_a_cold_cache_with_cores_to_spare(cold, monkeypatch):
    """A cold compile's side process (issue 45 item 1): started when enabled, with two idle cores and no
    selfplay mark; it runs SIDE_COMPILE with this cache; the block waits for it."""
    import subprocess

    started = []

    class FakeProc:
        def __init__(self, cmd, env, **kw):
            started.append((cmd, env["NUMBA_CACHE_DIR"]))
            self.waited = False

        def wait(self, timeout=None):
            started.append("waited")

    monkeypatch.setattr(subprocess, "Popen", FakeProc)
    monkeypatch.setattr(W.os, "sched_getaffinity", lambda pid: {0, 1}, raising=False)
    monkeypatch.setattr(W.os, "getloadavg", lambda: (1.5, 1.0, 1.0))
    with W.side_compile():
        pass
    assert started == []  # another job keeps a core busy: the two would share one
    monkeypatch.setattr(W.os, "getloadavg", lambda: (0.2, 1.0, 1.0))
    with W.side_compile(False):
        pass
    assert started == []
    with W.side_compile():
        assert len(started) == 1
    (cmd, where), done = started
    assert cmd[-1] == ("from caishen.sim.bots.learned import compile_ahead; compile_ahead(); "
                       "from caishen.sim.bots.tuned import compile_ahead; compile_ahead()")
    assert where == str(cold) and done == "waited"
    started.clear()
    monkeypatch.setattr(W.os, "sched_getaffinity", lambda pid: {0}, raising=False)
    with W.side_compile():
        pass
    assert started == []  # one core: nothing to gain
    monkeypatch.setattr(W.os, "sched_getaffinity", lambda pid: {0, 1}, raising=False)
    W.mark("selfplay", "kernel")
    with W.side_compile():
        pass
    assert started == []  # compiled already


def test_the_side_process_compiles_the_learned_bot_with_the_self_play_loops_types():
    """learned.compile_ahead's (and tuned.compile_ahead's) arguments have the types play_batch passes its learned bot (the context's slot,
    a weights row, the state's record, the engine params, the hand table, the scratch), or the side process
    would compile copies the loop never loads."""
    from numba import typeof

    from caishen.sim.bots import learned, tuned
    from caishen.sim.bots.policies import new_work
    from caishen.sim.bots.registry import bot_table, make_context
    from caishen.sim.engine import engine_params, load_rules, new_state
    from caishen.sim.tables import hand_tables

    name, r = load_rules("kaihua", None)
    ep = engine_params(name, r)
    _, weights = bot_table("greedy", name, int(ep.joker))
    bx = make_context(name, r, weights, 1, "greedy")
    loop = (bx.weights[0], new_state()[0], ep, hand_tables(), new_work(), bx.slots[0])
    assert [typeof(a) for a in learned._ahead_args()] == [typeof(a) for a in loop]
    assert [typeof(a) for a in tuned._ahead_args()] == [typeof(a) for a in loop[:5]]  # the tuned bot's, after it


def test_the_kernel_count_is_the_one_measured_with_the_side_process_when_it_runs(cold, monkeypatch):
    """Issue 45: "kernel N of M" counts this process's kernels, fewer while the side process compiles the
    learned and the tuned bot: M is the count measured with it when it runs (from its start on) and the one
    measured without it otherwise, each kept apart."""
    import io
    import subprocess

    class FakeProc:
        def __init__(self, *a, **kw):
            pass

        def wait(self, timeout=None):
            pass

    alone_dir = cold / "caches" / "numba-1"  # no other test's estimates beside it
    monkeypatch.setattr(W, "cache_dir", lambda: alone_dir)
    monkeypatch.setattr(W, "LOG_EVERY_S", 0.0)
    monkeypatch.setattr(subprocess, "Popen", FakeProc)
    monkeypatch.setattr(W.os, "sched_getaffinity", lambda pid: {0, 1}, raising=False)
    monkeypatch.setattr(W.os, "getloadavg", lambda: (0.2, 1.0, 1.0))
    alone, side = W.DEFAULT_KERNELS["caishen simulate"], W.SIDE_KERNELS["caishen simulate"]
    assert side < alone
    log = io.StringIO()
    with W.compile_line("caishen simulate", log):
        fresh_kernel()(1)  # before the side process starts: the count without it
        with W.side_compile():
            fresh_kernel()(2)
    lines = [_no_secs(x) for x in log.getvalue().splitlines() if "compiling, kernel" in x]
    assert lines == [f"caishen simulate: compiling, kernel 1 of {alone}",
                     f"caishen simulate: compiling, kernel 2 of {side}"], lines
    assert W.estimates("caishen simulate", side=True)[0] == 2  # measured with the side process
    assert W.estimates("caishen simulate", side=False)[0] == alone  # the other count untouched
    log = io.StringIO()
    with W.compile_line("caishen simulate", log):  # a new command: no side process this time
        assert W.estimates("caishen simulate")[0] == alone
        with W.side_compile(False):
            fresh_kernel()(3)
    assert "compiling, kernel 1 of " + str(alone) in log.getvalue()


def test_the_bar_steps_aside_when_numba_stops_compiling(cold):
    """The newcomer's learn run printed its lines into a live bar: on_idle fires when each outermost compile
    ends (the bar clears its line then and draws again at the next kernel)."""
    idle = []
    with W.CompileWatch(on_idle=lambda: idle.append(1)) as w:
        fresh_kernel()(1)
        fresh_kernel()(2)
    assert w.kernels == 2 and len(idle) == 2
    tty = _Tty()
    with W.compile_line("caishen simulate", tty):
        fresh_kernel()(3)
        print("the command's own line", file=tty)
    text = tty.buf.getvalue()
    before = text.split("the command's own line")[0]
    assert before.endswith("\r"), repr(before[-80:])  # the bar's line erased before the command's line


def test_every_target_has_a_workload_and_learn_and_piao_are_targets():
    """Issue 45: `caishen learn` (its rollout labels) and `caishen piao` (its study) are warmup targets, and
    every target has its workload."""
    from caishen.cli import warmup as cli_warmup

    assert {"labels", "piao"} <= set(W.TARGETS) and set(cli_warmup._workloads()) == set(W.TARGETS)
    assert set(W.COLD_SECONDS) == set(W.TARGETS)


def test_first_use_warning_says_the_seconds_scale_with_load(cold, caplog):
    """Issue 45: the first-use warning quotes a cold cache's seconds on an idle machine, longer when it is
    busy (a newcomer's "up to about 65 s" took 100 s at load 3), less when part of it is cached."""
    with W.CompileWatch():
        with W.first_use("hand"):
            fresh_kernel()(1)
    said = [r.getMessage() for r in caplog.records]
    assert f"about {W.COLD_SECONDS['hand']} s for all of them in one process on 2 cores, longer on a busy" in said[0]
    assert "up to" not in said[0]
    assert "less when some are cached" in said[0]


def test_warmup_of_several_targets_speaks_before_its_imports(cold, monkeypatch):
    """Issue 45: `caishen warmup` printed nothing for ~45 s: its first line comes before the workloads are
    imported."""
    from caishen.cli import warmup as cli_warmup

    lines = []
    real = cli_warmup._workloads
    monkeypatch.setattr(cli_warmup, "_workloads", lambda: lines.append("imported") or real())
    cli_warmup.warmup(["hand", "score"], progress=lines.append)
    assert lines[:3] == ["2 target(s) one after the other: hand, score", "imported", "kernels: hand ..."], lines


def test_cold_estimates_scale_with_load_and_fit_the_command(cold):
    """Issue 45 (first hour): "up to about 65 s" took 100 s at load 3; `caishen play` quoted the game target's
    45 s for its 130 kernels."""
    assert W.cold_estimate("caishen simulate") == "about 65 s in one process on 2 cores, longer on a busy machine"
    assert W.cold_estimate("caishen play").startswith(f"about {W.COMMAND_SECONDS['caishen play']} s in one process")
    assert W.cold_estimate("caishen nothing") == "a minute or more"
    W._record_estimate("caishen play", 130, 63.8)
    assert W.cold_estimate("caishen play") == "about 64 s here last time"


def test_first_use_outside_a_command_logs_a_line_every_few_seconds_while_it_compiles(cold, caplog, monkeypatch):
    """A newcomer's `Game` snippet compiled the bots for 35 s with no line between the first and the last:
    outside a command, first_use logs ``kernel N (T s)`` at most every LOG_EVERY_S seconds while numba works."""
    monkeypatch.setattr(W, "LOG_EVERY_S", 0.0)
    with caplog.at_level(logging.WARNING, logger="caishen"):
        with W.first_use("hand"):
            fresh_kernel()(1)
            fresh_kernel()(2)
    msgs = [r.getMessage() for r in caplog.records]
    assert "compiling the hand kernels" in msgs[0] and msgs[-1].startswith("caishen: compiled 2 hand kernel(s)")
    progress = [m for m in msgs if m.startswith("caishen: hand kernels: compiling, kernel ")]
    assert progress and progress[-1].startswith("caishen: hand kernels: compiling, kernel 2 (")
