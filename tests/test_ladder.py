"""The ladder (``caishen.sim.analysis.ladder``, ``caishen ladder``): a round robin on duplicate deals.

Tiny sizes: the tables' numbers are checked against the matches they are
made of and against a slow reference fit, not for their values.
"""

from __future__ import annotations

import json
import math
import shutil
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from caishen.sim.analysis import ladder

BOTS = "random,greedy,random"  # a bot listed twice (0 and 2) and a clearly stronger one (1)
WALLS = 40
CHUNK_WALLS = 10
SEED = 11
ARGV = ["--rules", "kaihua", "--bots", BOTS, "--walls", str(WALLS), "--chunk-walls", str(CHUNK_WALLS),
        "--seed", str(SEED), "--bootstrap", "300", "--workers", "1", "--no-progress"]
TABLES = (ladder.LADDER_CSV, ladder.PAIRS_CSV, ladder.LADDER_MD)


def _ladder(out, argv=()):
    from caishen.cli import main

    return main(["ladder", *ARGV, "--out", str(out), *argv])


@pytest.fixture(scope="module")
def played(tmp_path_factory, engine_warm):
    """A finished ladder of :data:`BOTS` (through the CLI)."""
    out = tmp_path_factory.mktemp("ladder") / "l"
    assert _ladder(out) == 0
    return out


def _summary(out):
    return json.loads(json.dumps(ladder.summarize_ladder(out)))


# ---------------------------------------------------------------------------
# the Bradley-Terry fit against a slow reference
# ---------------------------------------------------------------------------
def _reference_fit(wins: np.ndarray) -> np.ndarray:
    """The Bradley-Terry MLE by direct minimisation of the negative log-likelihood (scipy, BFGS), log10
    strengths with mean 0: ``-sum_ij w_ij log(p_i / (p_i + p_j))``."""
    from scipy.optimize import minimize

    n = len(wins)

    def nll(free):
        x = np.append(free, -free.sum())  # the last one fixes the mean at 0
        total = 0.0
        for i in range(n):
            for j in range(n):
                if i != j:
                    total -= wins[i, j] * (x[i] - np.logaddexp(x[i], x[j]))
        return total

    res = minimize(nll, np.zeros(n - 1), method="BFGS", options={"gtol": 1e-10})
    return np.append(res.x, -res.x.sum()) / math.log(10)


def test_bradley_terry_equals_the_reference_fit_on_hand_built_matrices():
    built = [
        np.array([[0, 30, 5], [10, 0, 2], [1, 3, 0]], float),
        np.array([[0, 7.5, 9, 12], [2.5, 0, 6, 8], [1, 4, 0, 5.5], [0.5, 2, 4.5, 0]]),
        np.array([[0, 1, 1], [1, 0, 1], [1, 1, 0]], float),  # all equal
    ]
    for w in built:
        np.testing.assert_allclose(ladder.fit_bradley_terry(w), _reference_fit(w), atol=1e-6)
    np.testing.assert_allclose(ladder.fit_bradley_terry(built[2]), 0.0, atol=1e-12)


@settings(max_examples=40, deadline=None)
@given(st.integers(2, 6), st.integers(0, 2**32 - 1))
def test_bradley_terry_equals_the_reference_fit_on_random_matrices(n, seed):
    rng = np.random.default_rng(seed)
    w = rng.integers(0, 40, (n, n)).astype(float) + 0.5  # every pair has a result both ways
    np.fill_diagonal(w, 0)
    got = ladder.fit_bradley_terry(w)
    np.testing.assert_allclose(got, _reference_fit(w), atol=1e-5)
    # vectorised over leading axes: the same fits as one at a time
    np.testing.assert_allclose(ladder.fit_bradley_terry(np.stack([w, w.T]))[0], got, atol=1e-12)


def test_elo_scale_400_is_ten_to_one():
    r = ladder.ELO_SCALE * ladder.fit_bradley_terry(np.array([[0, 10], [1, 0]], float))
    np.testing.assert_allclose(r, [200, -200], atol=1e-9)


@pytest.mark.parametrize("wins,msg", [
    (np.zeros(3), "shape"),
    (np.array([[0, 1], [-1, 0]], float), "negative"),
    (np.array([[0, np.nan], [1, 0]]), "NaN"),
    (np.array([[0, 3], [0, 0]], float), "no win"),
])
def test_bradley_terry_bad_input_is_named(wins, msg):
    with pytest.raises(ValueError, match=msg):
        ladder.fit_bradley_terry(wins)


def test_wins_matrix_counts_walls_ties_and_the_prior():
    results = np.array([[1.0, 0.5, 0.0], [1.0, 0.0, 0.5]])  # 2 walls x pairs (0,1), (0,2), (1,2)
    w = ladder.wins_matrix(results, None, 3)[0]
    h = ladder.PRIOR_TIES / 2
    assert w[0, 1] == 2 + h and w[1, 0] == 0 + h
    assert w[0, 2] == 0.5 + h and w[2, 0] == 1.5 + h
    assert w[1, 2] == 0.5 + h and w[2, 1] == 1.5 + h
    w2 = ladder.wins_matrix(results, np.array([[2, 0], [0, 3]]), 3)
    assert w2[0, 0, 2] == 1 + h and w2[1, 0, 2] == 0 + h and w2[1, 2, 1] == 1.5 + h


# ---------------------------------------------------------------------------
# a played ladder
# ---------------------------------------------------------------------------
def test_ladder_tables_are_the_matches_they_are_made_of(played):
    """Every pair is a match on the same walls; the field points and the matrix follow from the matches'
    own tables (:func:`caishen.sim.analysis.arena.summarize_match`)."""
    import pandas as pd

    from caishen.sim.analysis import arena
    from caishen.sim.selfplay import stream

    s = _summary(played)
    assert s["walls_done"] == WALLS and s["bots"] == BOTS.split(",")
    walls = None
    field = np.zeros(3)
    for p in s["pairs"]:
        d = ladder.pair_dir(played, p["ia"], p["ib"])
        m = arena.summarize_match(d)
        assert m["walls_done"] == WALLS and m["policies"] == [p["a"], p["b"]]
        assert p["diff"] == pytest.approx(m["pairs"][0]["diff"], abs=1e-12)
        assert (p["lo"], p["hi"]) == pytest.approx((m["pairs"][0]["lo"], m["pairs"][0]["hi"]), abs=1e-9)
        assert p["adj_lo"] <= p["lo"] <= p["diff"] <= p["hi"] <= p["adj_hi"]
        assert p["wins_a"] + p["ties"] + p["wins_b"] == WALLS
        field[p["ia"]] += m["policy_rows"][0]["points"] / 2
        field[p["ib"]] += m["policy_rows"][1]["points"] / 2
        rows = stream.read_run(d, ["wall_seed", "hand_id"]).sort_values("hand_id")
        if walls is None:
            walls = rows["wall_seed"].to_numpy()
        np.testing.assert_array_equal(rows["wall_seed"].to_numpy(), walls)  # the same walls in every pair
    by_index = {r["index"]: r for r in s["bots_rows"]}
    np.testing.assert_allclose([by_index[i]["points"] for i in range(3)], field, atol=1e-12)
    csv = pd.read_csv(played / ladder.LADDER_CSV)
    assert list(csv["bot"]) == [r["bot"] for r in s["bots_rows"]] and list(csv["rank"]) == [1, 2, 3]
    assert len(pd.read_csv(played / ladder.PAIRS_CSV)) == 3
    md = (played / ladder.LADDER_MD).read_text()
    assert "Bonferroni over 3 pairs" in md and "Elo scale" in md and "| 1 | `greedy` |" in md
    assert (played / ladder.LADDER_PNG).read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


def test_a_clearly_stronger_bot_ranks_first_with_ci_excluding_0(played):
    s = _summary(played)
    top = s["bots_rows"][0]
    assert top["bot"] == "greedy" and top["rank"] == 1
    assert top["lo"] > 0 and top["rating_lo"] > 0
    for p in s["pairs"]:
        if "greedy" in (p["a"], p["b"]):
            sign = 1 if p["a"] == "greedy" else -1
            assert sorted((sign * p["adj_lo"], sign * p["adj_hi"]))[0] > 0
    for r in s["bots_rows"][1:]:
        assert r["rating_hi"] < top["rating_lo"]


def test_a_bot_listed_twice_ranks_equal_to_itself(played):
    s = _summary(played)
    same = next(p for p in s["pairs"] if (p["ia"], p["ib"]) == (0, 2))
    assert same["lo"] <= 0 <= same["hi"] and same["wins_a"] + same["wins_b"] > 0  # they played real hands
    a, b = (next(r for r in s["bots_rows"] if r["index"] == i) for i in (0, 2))
    assert a["lo"] <= b["hi"] and b["lo"] <= a["hi"]
    assert a["rating_lo"] <= b["rating"] <= a["rating_hi"] or b["rating_lo"] <= a["rating"] <= b["rating_hi"]


def test_resume_after_an_interrupted_run_gives_the_same_tables(played, tmp_path, monkeypatch):
    """Interrupted in the second pair (its first pair whole, a chunk of it lost later, a stray temporary
    file): the same command completes it to the tables of the uninterrupted ladder."""
    from caishen.sim.selfplay import runner

    real, calls = runner.run, []

    def interrupted(config, out, **kw):
        calls.append(out)
        if len(calls) == 2:
            raise KeyboardInterrupt
        return real(config, out, **kw)

    monkeypatch.setattr(ladder.runner, "run", interrupted)
    out = tmp_path / "l"
    assert _ladder(out) == 130
    assert not (out / ladder.LADDER_CSV).exists()
    monkeypatch.setattr(ladder.runner, "run", real)
    first = ladder.pair_dir(out, 0, 1)
    (first / "chunks" / "chunk-00002.parquet").unlink()
    (first / "chunks" / ".chunk-00003.parquet.123.tmp").write_bytes(b"half")
    assert _ladder(out) == 0
    for name in TABLES:
        assert (out / name).read_bytes() == (played / name).read_bytes(), name


def test_resume_after_kill_9_gives_the_tables_of_an_uninterrupted_run(played, tmp_path):
    """``kill -9`` of ``caishen ladder`` as soon as its first pair has a chunk: the same command completes it
    to the tables of an uninterrupted ladder (the same configuration, played in this process)."""
    import os
    import signal
    import subprocess
    import sys
    import time

    argv = ["--chunk-walls", "5"]
    out = tmp_path / "killed"
    proc = subprocess.Popen([sys.executable, "-m", "caishen", "ladder", *ARGV, "--out", str(out), *argv],
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    chunks = ladder.pair_dir(out, 0, 1) / "chunks"
    deadline = time.monotonic() + 600
    while proc.poll() is None and time.monotonic() < deadline:
        if chunks.is_dir() and any(n.endswith(".parquet") for n in os.listdir(chunks)):
            break
        time.sleep(0.02)
    proc.send_signal(signal.SIGKILL)
    proc.wait()
    assert not (out / ladder.LADDER_CSV).exists()  # killed mid-way
    assert _ladder(out, argv) == 0
    assert _ladder(tmp_path / "whole", argv) == 0
    for name in TABLES:
        assert (out / name).read_bytes() == (tmp_path / "whole" / name).read_bytes(), name


# ---------------------------------------------------------------------------
# bad input: one clear line
# ---------------------------------------------------------------------------
def _error(capsys, argv, out):
    from caishen.cli import main

    with pytest.raises(SystemExit) as e:
        main(["ladder", *ARGV, "--out", str(out), *argv])
    assert e.value.code == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and err.startswith("caishen ladder: error: "), err
    return err


@pytest.mark.parametrize("bots,msg", [
    ("greedy", "2 to 16 bots, got 1"),
    (",".join(["greedy"] * 17), "2 to 16 bots, got 17"),
    ("greedy,alien", "unknown policy 'alien'"),
    ("greedy,mc:0", "1..4096"),
    ("greedy,", "bot 2 of the ladder"),
    ("greedy,tuned:/no/such.json", "/no/such.json"),
    ("greedy,tuned:jiating", "'tuned:jiating' .bot 2 of the ladder. was tuned for 'jiating'"),
])
def test_bad_bot_specs_are_named(tmp_path, capsys, bots, msg):
    import re

    err = _error(capsys, ["--bots", bots], tmp_path / "x")
    assert re.search(msg, err), err
    assert not (tmp_path / "x").exists()


def test_bad_numbers_and_piao_bots_without_caishen_are_named(tmp_path, capsys):
    assert "walls 0" in _error(capsys, ["--walls", "0"], tmp_path / "x")
    assert "bootstrap 0" in _error(capsys, ["--bootstrap", "0"], tmp_path / "x")
    assert "no 财神" in _error(capsys, ["--rules", "jiating", "--bots", "greedy,always"], tmp_path / "x")


def test_every_builtin_bot_of_every_rule_set_is_accepted():
    from caishen.sim import rules

    for name in rules.names():
        bots = ladder.builtin_bots(name)
        assert ladder.check_bots(bots, name, None) == bots


def test_another_ladder_or_run_in_the_output_dir_is_refused(played, tmp_path, capsys):
    err = _error(capsys, ["--bots", "random,greedy"], played)
    assert "holds a different ladder" in err and "bots" in err
    err = _error(capsys, ["--walls", "50"], played)
    assert "walls: stored 40, now 50" in err
    match_run = ladder.pair_dir(played, 0, 1)  # a match's run directory is no ladder
    assert "non-empty directory without ladder.json" in _error(capsys, [], match_run)
    f = tmp_path / "file"
    f.write_text("x")
    assert "is not a directory" in _error(capsys, [], f)


def test_a_ladder_directory_in_use_is_refused(played, capsys):
    """A second ladder into a directory a running ladder holds (its lock) stops with one line, not a race."""
    from caishen.sim import safeio

    with safeio.DirLock(played, "ladder"):
        assert "is in use by another running ladder" in _error(capsys, [], played)


def test_hostile_ladder_directories_are_refused(played, tmp_path, capsys):
    def copy(name):
        d = tmp_path / name
        shutil.copytree(played, d, symlinks=True)
        return d

    d = copy("link")
    (d / "pairs" / "evil").symlink_to("/etc")
    assert "evil" in _error(capsys, [], d)
    d = copy("json_link")
    (d / "ladder.json").unlink()
    (d / "ladder.json").symlink_to(played / "ladder.json")
    assert "ladder.json" in _error(capsys, [], d)
    d = copy("garbage")
    (d / "ladder.json").write_text("{not json")
    assert "ladder.json" in _error(capsys, [], d)
    d = copy("field")
    meta = json.loads((played / "ladder.json").read_text())
    meta["bots"] = "greedy"
    (d / "ladder.json").write_text(json.dumps(meta))
    err = _error(capsys, [], d)
    assert "ladder.json" in err and "'bots'" in err
    d = copy("swapped")  # a pair's run directory replaced by another pair's
    shutil.rmtree(ladder.pair_dir(d, 0, 1))
    shutil.copytree(ladder.pair_dir(d, 0, 2), ladder.pair_dir(d, 0, 1))
    assert "different run" in _error(capsys, [], d)


def test_check_bots_stores_the_registry_normal_form():
    """A ladder stores its bots as every command does (mc:02 is mc:2), so a rerun in either spelling resumes."""
    assert ladder.check_bots("greedy, mc:02", "kaihua", None) == ["greedy", "mc:2"]
    assert ladder.check_bots(["greedy", "mc:2"], "kaihua", None) == ["greedy", "mc:2"]


# ---------------------------------------------------------------------------
# adding a bot; open seats (issue 43)
# ---------------------------------------------------------------------------
@pytest.fixture(scope="module")
def played_rrg(tmp_path_factory, engine_warm):
    """A finished ladder of random, random, greedy played at once (the reference of the --add tests)."""
    out = tmp_path_factory.mktemp("ladder") / "rrg"
    assert _ladder_of(out, "random,random,greedy") == 0
    return out


def _ladder_of(out, bots, *argv):
    from caishen.cli import main

    return main(["ladder", *[a if a != BOTS else bots for a in ARGV], "--out", str(out), *argv])


def _add(out, spec):
    from caishen.cli import main

    return main(["ladder", "--add", spec, "--out", str(out), "--workers", "1", "--no-progress"])


def test_adding_a_bot_plays_only_its_pairs_and_gives_the_full_ladders_tables(played_rrg, tmp_path, capsys):
    """``caishen ladder --add SPEC --out OUT``: the pairs already played keep their files untouched (not played
    again), the new bot's pairs are played on the same walls, and the tables equal those of the ladder of all
    the bots played at once."""
    two = tmp_path / "two"
    assert _ladder_of(two, "random,random") == 0
    before = {p: (p.stat().st_mtime_ns, p.read_bytes()) for p in (two / ladder.PAIRS_DIR).rglob("*.parquet")}
    assert before
    capsys.readouterr()
    assert _add(two, "greedy") == 0
    assert "2:`greedy`" in capsys.readouterr().out
    for p, (mtime, data) in before.items():
        assert p.stat().st_mtime_ns == mtime and p.read_bytes() == data, p
    assert sorted(d.name for d in (two / ladder.PAIRS_DIR).iterdir()) == ["00-01", "00-02", "01-02"]
    assert ladder.read_config(two).bots == ("random", "random", "greedy")
    for name in TABLES:
        assert (two / name).read_bytes() == (played_rrg / name).read_bytes(), name


def test_an_interrupted_add_run_again_resumes_without_adding_the_bot_twice(played_rrg, tmp_path, capsys,
                                                                          monkeypatch):
    """``--add SPEC`` interrupted in its last pair, then the same command again: SPEC is in the ladder already,
    so nothing is added (one bot, not two) and the ladder resumes, keeping the pairs done (not replayed), to
    the tables of the ladder played at once.  A spelling of the same spec resumes too (the normal form)."""
    from caishen.sim.selfplay import runner

    two = tmp_path / "two"
    assert _ladder_of(two, "random,random") == 0
    real = runner.run

    def interrupted(config, out, **kw):
        if Path(out).name == "01-02":  # the last pair
            raise KeyboardInterrupt
        return real(config, out, **kw)

    monkeypatch.setattr(ladder.runner, "run", interrupted)
    assert _add(two, "greedy") == 130
    monkeypatch.setattr(ladder.runner, "run", real)
    assert ladder.read_config(two).bots == ("random", "random", "greedy")
    assert ladder.pair_done(ladder.pair_dir(two, 0, 2)) and not ladder.pair_done(ladder.pair_dir(two, 1, 2))
    capsys.readouterr()
    from caishen.cli import main

    assert main(["ladder", "--add", " greedy ", "--out", str(two), "--workers", "1"]) == 0
    err = capsys.readouterr().err
    assert "greedy is bot 3 of the ladder" in err and "resuming" in err, err
    assert ladder.read_config(two).bots == ("random", "random", "greedy")
    assert "pair 1/3: random vs random: done, kept (not replayed)" in err, err
    assert "pair 2/3: random vs greedy: done, kept (not replayed)" in err, err
    assert "pair 3/3: random vs greedy -> " in err, err
    assert sorted(d.name for d in (two / ladder.PAIRS_DIR).iterdir()) == ["00-01", "00-02", "01-02"]
    for name in TABLES:
        assert (two / name).read_bytes() == (played_rrg / name).read_bytes(), name
    assert _add(two, "greedy") == 0  # once more: every pair kept, nothing added
    assert ladder.read_config(two).bots == ("random", "random", "greedy")


def test_add_is_refused_without_a_ladder_or_with_configuration_flags(tmp_path, capsys):
    from caishen.cli import main

    for argv, msg in ((["--add", "greedy", "--out", str(tmp_path / "none")], "is not a ladder directory"),
                      (["--add", "greedy", "--walls", "3", "--out", str(tmp_path)], "drop --walls"),
                      (["--out", str(tmp_path / "x")], "ladder needs --walls")):
        with pytest.raises(SystemExit) as e:
            main(["ladder", *argv])
        err = capsys.readouterr().err
        assert e.value.code == 2 and msg in err, err


def test_an_open_seat_joins_a_ladder(played, tmp_path):
    """A python: seat added to a ladder plays its pairs through the arena host (in this process): its pair with
    random is that of the numba random bot's in distribution only, but every pair is complete and rated."""
    import caishen.envs  # noqa: F401  (the arena host)

    out = tmp_path / "l"
    shutil.copytree(played, out)
    config = ladder.add_bot(out, "python:caishen.envs.seats:uniform_random")
    summary = ladder.run_ladder(config, out, workers=2, progress=False)
    assert summary["walls_done"] == WALLS and len(summary["bots_rows"]) == 4
    assert summary["bots"][3] == "python:caishen.envs.seats:uniform_random"


def test_format_markdown_fits_100_columns_with_five_bots():
    """Issue 45: the ladder's matrix holds the differences (a star where the adjusted CI excludes 0) and
    each pair's interval follows on its own line, so that five bots fit 100 terminal columns."""
    from caishen.sim.analysis import ladder as L
    from caishen.sim.termtext import display_width

    bots = ["tuned:kaihua", "greedy", "mc:8", "piao_table:72905330438242304:tuned:kaihua", "learned:kaihua"]
    rows = [{"rank": k + 1, "bot": b, "points": 0.1, "lo": -0.1, "hi": 0.3, "rating": 10, "rating_lo": -5,
             "rating_hi": 30, "wall_wins": 0.5} for k, b in enumerate(bots)]
    pairs = [{"ia": i, "ib": j, "diff": 0.125 * (i - j), "adj_lo": -0.5, "adj_hi": 0.01 if i else -0.01}
             for i in range(5) for j in range(i + 1, 5)]
    text = L.format_markdown({"rules": "kaihua", "bots": bots, "walls_done": 20_000, "seed": 1, "bots_rows": rows,
                              "pairs": pairs, "adjustment": "Bonferroni over 10 pairs (each interval at 99.5%)",
                              "scale": "Bradley-Terry on walls won, Elo scale", "bootstrap": 1000})
    assert max(display_width(line) for line in text.splitlines()) <= 100, text
    assert "| 0:`tuned:kaihua` |  | -0.125* |" in text and "| 1:`greedy` | +0.125* |  | -0.125 |" in text
    assert "- 1:`greedy` minus 2:`mc:8`: -0.125 [-0.500, +0.010]" in text
    # issue 45 (first hour): the columns are headed by the bots' names, a 飘 table by its cells, its exact
    # spec once on a line of its own
    assert "| | 0:tuned:kaihua | 1:greedy | 2:mc:8 | 3:piao[10/64]~ | 4:learned:kai~ |" in text, text
    assert "| 3:`piao_table[10/64 cells]:tuned:kaihua` |" in text
    assert text.count("72905330438242304") == 1 and "- `piao_table[10/64 cells]:tuned:kaihua = " in text
