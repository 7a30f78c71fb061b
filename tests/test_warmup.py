"""caishen.sim.warmup: the first-use warning on a cold cache, the marks, `warmup` targets (issue 11 item 3)."""

from __future__ import annotations

import logging

import pytest

from caishen.cli import warmup
from caishen.sim import warmup as W


@pytest.fixture
def cold(tmp_path, monkeypatch):
    """A cache directory with no marks, and no target announced in this process yet."""
    monkeypatch.setattr(W, "cache_dir", lambda: tmp_path)
    monkeypatch.setattr(W, "_announced", set())
    return tmp_path


def test_first_use_warns_once_on_a_cold_cache_then_marks(cold, caplog):
    with caplog.at_level(logging.WARNING, logger="caishen"):
        with W.first_use("hand"):
            pass
        with W.first_use("hand"):  # the same process: said once
            pass
    msgs = [r.getMessage() for r in caplog.records]
    assert len(msgs) == 1 and "compiling the hand kernels" in msgs[0] and "caishen warmup" in msgs[0]
    assert W.is_marked("hand")


def test_first_use_is_quiet_when_a_previous_process_compiled(cold, caplog):
    (cold / "caishen-warm").mkdir()
    (cold / "caishen-warm" / "game").write_text("x")
    with caplog.at_level(logging.WARNING, logger="caishen"):
        with W.first_use("game"):
            pass
    assert caplog.records == []


def test_no_mark_when_the_first_use_fails(cold):
    with pytest.raises(KeyError):
        with W.first_use("score"):
            raise KeyError("boom")
    assert not W.is_marked("score")


def test_warmup_runs_the_workload_and_marks(cold):
    lines = []
    took = warmup("hand", progress=lines.append)
    assert set(took) == {"hand"} and took["hand"] >= 0
    assert lines[0] == "compiling kernels: hand ..." and lines[-1].startswith("compiling kernels: hand done in ")
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
    out = capsys.readouterr().out
    assert "compiling kernels: hand done in" in out and str(cold) in out
    with pytest.raises(SystemExit) as e:
        main(["warmup", "gpu"])
    assert e.value.code == 2 and "'gpu'" in capsys.readouterr().err


def test_game_reset_announces_a_cold_compile(cold, caplog):
    from caishen.sim.engine import Game

    with caplog.at_level(logging.WARNING, logger="caishen"):
        Game("kaihua").reset(seed=1)
        Game("jiating").reset(seed=2)
    assert [r.getMessage() for r in caplog.records if "compiling the game kernels" in r.getMessage()] != []
    assert len(caplog.records) == 1 and W.is_marked("game")


def test_runner_compiles_in_the_parent_and_says_so(cold, tmp_path, capsys):
    from caishen.sim.selfplay import runner

    cfg = runner.make_config("kaihua", 32, 1, "random", chunk_size=16)
    runner.run(cfg, tmp_path / "r1", workers=1, progress=True)
    assert "numba kernels: compiling" in capsys.readouterr().err and W.is_marked("selfplay", "kernel")
    runner.run(runner.make_config("kaihua", 32, 2, "random", chunk_size=16), tmp_path / "r2", workers=1, progress=True)
    err = capsys.readouterr().err
    assert "numba kernels: loading ... done in" in err
    # a run with a bot with data compiles kernels the random run did not: it says so, then loads
    for expect in ("compiling", "loading"):
        cfg = runner.make_config("kaihua", 4, 3, "tuned:kaihua,greedy,greedy,greedy", chunk_size=4)
        runner.run(cfg, tmp_path / f"t-{expect}", workers=1, progress=True)
        assert f"numba kernels: {expect}" in capsys.readouterr().err
    assert W.is_marked("selfplay", "bots") and not W.is_marked("selfplay")


def test_warmup_marks_every_part_of_selfplay(cold):
    W.mark("selfplay")
    assert W.is_marked("selfplay", "bots") and W.is_marked("selfplay", "kernel")
