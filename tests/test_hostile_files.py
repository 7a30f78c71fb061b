"""Hostile files and damaged run directories (issue 23): one test (or a few) per numbered kind.

Each test names its kind (``kind01`` .. ``kind12``; kind 9, code from a PPO
checkpoint, is in ``tests/test_ppo.py``).  The runner is driven with the TEST
DOUBLE chunk function of ``tests/fault_chunks.py`` (contract-shaped random
records, not mahjong) where the engine plays no part; the commands with the
real engine appear where the kind is about them.  The crash harness (a kill at
every rename and fsync) is ``tests/test_crash_consistency.py``.
"""

from __future__ import annotations

import errno
import hashlib
import io
import json
import os
import shutil
import signal
import subprocess
import sys
import time
import tracemalloc
import warnings
from pathlib import Path

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from fault_chunks import plain_chunk
from hostile import one_line_error
from caishen import cli
from caishen.sim.selfplay import manifest, records, runner, stream
from caishen.sim.selfplay.runner import Execution

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
RULES, OPTIONS, POLICIES = "kaihua", {"discard_win": True}, ("random",) * 4


def config(games=600, chunk_size=100, seed=7, options=OPTIONS):
    return runner.RunConfig(RULES, options, POLICIES, seed, games, chunk_size, runner._fn_name(plain_chunk))


def run(cfg, out, **kw):
    kw.setdefault("progress", False)
    kw.setdefault("workers", 1)
    return runner.run(cfg, out, chunk_fn=plain_chunk, **kw)


@pytest.fixture(scope="module")
def reference(tmp_path_factory):
    """(run directory, rows) of the uninterrupted seed-7 run of 6 chunks."""
    out = tmp_path_factory.mktemp("hostile") / "ref"
    run(config(), out)
    return out, stream.read_run(out)


def fresh(reference, tmp_path) -> Path:
    out = tmp_path / "r"
    shutil.copytree(reference[0], out)
    return out


def report(capsys, run_dir) -> tuple[int, str, str]:
    """``caishen report RUN --no-figures``: (exit status, stdout, stderr)."""
    try:
        code = cli.main(["report", str(run_dir), "--no-figures"])
    except SystemExit as e:
        code = e.code
    got = capsys.readouterr()
    return code, got.out, got.err


# ---------------------------------------------------------------------------
# kind 1: a chunk file without its manifest line in a run that keeps a manifest
# ---------------------------------------------------------------------------
def test_kind01_chunk_files_without_the_first_manifest_line_are_replayed_never_counted(reference, tmp_path, capsys):
    """The state a kill between a chunk's rename and the first manifest line leaves (chunk files, no
    manifest.jsonl) is never read as a legacy run: report counts none of them, a rerun replays them."""
    out = fresh(reference, tmp_path)
    manifest.manifest_path(out).unlink()
    records.chunk_path(out, 5).unlink()  # the run had not got there
    check = manifest.verify(out)
    assert check.ok == [] and check.by_state("unrecorded") == [0, 1, 2, 3, 4] and not check.legacy
    code, o, err = report(capsys, out)
    assert code == 2 and "no verified chunk" in err and "unrecorded" in err
    res = run(config(), out)
    assert sorted(res.repaired) == [0, 1, 2, 3, 4] and res.chunks_skipped == 0
    pd.testing.assert_frame_equal(stream.read_run(out), reference[1])


def test_kind01_only_a_format_1_run_is_read_without_a_manifest(reference, tmp_path):
    out = fresh(reference, tmp_path)
    manifest.manifest_path(out).unlink()
    meta = json.loads((out / "run.json").read_text())
    (out / "run.json").write_text(json.dumps({**meta, "format": 1}))
    check = manifest.verify(out)
    assert check.legacy and check.complete


# ---------------------------------------------------------------------------
# kind 2: another run's chunk
# ---------------------------------------------------------------------------
def _adopt(out: Path, other: Path, i: int) -> None:
    """Put chunk ``i`` of run ``other`` into run ``out`` with a manifest line that matches it."""
    shutil.copyfile(records.chunk_path(other, i), records.chunk_path(out, i))
    size, sha = manifest.file_sha256(records.chunk_path(out, i))
    rows = pq.read_metadata(records.chunk_path(out, i)).num_rows
    manifest.append_entry(out, {"chunk": i, "rows": rows, "bytes": size, "sha256": sha})


def test_kind02_another_runs_chunk_with_a_matching_manifest_line_is_foreign(reference, tmp_path, capsys):
    other = tmp_path / "seed11"
    run(config(seed=11), other)
    out = fresh(reference, tmp_path)
    _adopt(out, other, 3)
    check = manifest.verify(out)
    assert check.problems[3][0] == "foreign" and "seed 11" in check.problems[3][1], check.problems
    code, o, err = report(capsys, out)
    assert code == 1 and "chunk 3: foreign" in err and "finished chunks: 5 of 6" in o
    run(config(), out)
    pd.testing.assert_frame_equal(stream.read_run(out), reference[1])


def test_kind02_a_chunk_of_another_configuration_with_the_same_seed_is_foreign(reference, tmp_path):
    """A sweep's points share one seed: the configuration digest in each chunk's identity tells them apart."""
    other = tmp_path / "other-options"
    run(config(options={"discard_win": False}), other)
    out = fresh(reference, tmp_path)
    _adopt(out, other, 2)
    check = manifest.verify(out)
    assert check.problems[2][0] == "foreign" and "configuration" in check.problems[2][1]


def test_kind02_a_legacy_run_checks_the_seed_and_chunk_columns(reference, tmp_path):
    other = tmp_path / "seed11"
    run(config(seed=11), other)
    out = fresh(reference, tmp_path)
    meta = json.loads((out / "run.json").read_text())
    (out / "run.json").write_text(json.dumps({**meta, "format": 1}))
    manifest.manifest_path(out).unlink()
    shutil.copyfile(records.chunk_path(other, 4), records.chunk_path(out, 4))
    shutil.copyfile(records.chunk_path(out, 0), records.chunk_path(out, 1))  # chunk 0's rows under chunk 1's name
    check = manifest.verify(out)
    assert check.problems[4][0] == "foreign" and "seed 11" in check.problems[4][1]
    assert check.problems[1][0] == "foreign" and "chunk 0" in check.problems[1][1]


# ---------------------------------------------------------------------------
# kind 3: a damaged cache
# ---------------------------------------------------------------------------
@pytest.fixture
def table_cache(tmp_path, monkeypatch):
    """A hand-table cache directory of this test's own (the tables in memory are put back after it)."""
    from caishen.sim import tables

    good = tables.hand_tables()
    monkeypatch.setenv("CAISHEN_CACHE", str(tmp_path / "cache"))
    monkeypatch.setattr(tables, "_cache", None)
    path = tmp_path / "cache" / f"hand_tables_v{tables.TABLE_VERSION}.npy"
    path.parent.mkdir()
    return tables, path, good


def _npy(a: np.ndarray) -> bytes:
    buf = io.BytesIO()
    np.save(buf, a)
    return buf.getvalue()


@pytest.mark.parametrize("damage", ["10 bytes", "zeros", "other dtype", "huge shape", "flipped byte", "fifo"])
def test_kind03_a_damaged_hand_table_cache_is_rebuilt_with_a_warning(table_cache, damage, alarm):
    tables, path, good = table_cache
    if damage == "10 bytes":
        path.write_bytes(b"\x93NUMPY\x01\x00ab")
    elif damage == "zeros":
        path.write_bytes(_npy(np.zeros_like(good)))
    elif damage == "other dtype":
        path.write_bytes(_npy(good.astype(np.int64)))
    elif damage == "huge shape":  # a header that declares 10**12 bytes: nothing may be allocated for it
        head = _npy(good)[:128].replace(f"({good.size},)".encode(), b"(1000000000000,)")
        path.write_bytes(head)
    elif damage == "flipped byte":
        data = bytearray(_npy(good))
        data[-1000] ^= 0xFF
        path.write_bytes(bytes(data))
        path.with_name(path.name + ".sha256").write_text(hashlib.sha256(_npy(good)).hexdigest())
    else:
        os.mkfifo(path)
    with pytest.warns(UserWarning, match="hand-table cache .* is damaged"):
        tabs = tables.hand_tables()
    np.testing.assert_array_equal(tabs, good)
    from caishen.sim import hand, tiles

    assert hand.shanten(tiles.parse("123m456p789s1122z"), -1) == 0  # 13 tiles: ready, never complete
    assert not hand.is_win(tiles.parse("123m456p789s11223z"), -1)
    tables._cache = None
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # the rebuilt cache loads without a warning
        np.testing.assert_array_equal(tables.hand_tables(), good)


# ---------------------------------------------------------------------------
# kind 4: a crafted chunk with other columns or types
# ---------------------------------------------------------------------------
def _craft(out: Path, i: int, change) -> None:
    """Rewrite chunk ``i`` with ``change(table) -> table`` (keeping its identity metadata) and record it."""
    p = records.chunk_path(out, i)
    t = pq.read_table(p)
    meta = t.schema.metadata
    t = change(t).replace_schema_metadata(meta)
    pq.write_table(t, p, compression="zstd")
    size, sha = manifest.file_sha256(p)
    manifest.append_entry(out, {"chunk": i, "rows": t.num_rows, "bytes": size, "sha256": sha})


@pytest.mark.parametrize("change, says", [
    (lambda t: t.set_column(t.schema.get_field_index("score_0"), "score_0",
                            pa.array(np.full(t.num_rows, np.nan))), "column 'score_0' is double"),
    (lambda t: t.set_column(t.schema.get_field_index("winner"), "winner",
                            pa.array([None] * t.num_rows, pa.int8())), "column 'winner' holds nulls"),
    (lambda t: t.drop(["dealer"]), "lacks the column 'dealer'"),
], ids=["float-scores", "null-winners", "no-dealer"])
def test_kind04_a_crafted_chunk_whose_manifest_line_matches_breaks_the_contract_and_is_foreign(
        reference, tmp_path, capsys, change, says):
    out = fresh(reference, tmp_path)
    _craft(out, 2, change)
    check = manifest.verify(out)
    assert check.problems[2][0] == "foreign" and says in check.problems[2][1], check.problems
    code, o, err = report(capsys, out)
    assert code == 1 and says in err and "finished chunks: 5 of 6 (damaged chunks left out)" in o
    run(config(), out)
    pd.testing.assert_frame_equal(stream.read_run(out), reference[1])


# ---------------------------------------------------------------------------
# kind 5: run.json, sweep.json, study.json and manifest fields are checked with bounds
# ---------------------------------------------------------------------------
@pytest.mark.parametrize("field, value, says", [
    ("n_chunks", 3, "'n_chunks' is 3, but 600 hands in chunks of 100 make 6"),
    ("n_chunks", 12, "'n_chunks' is 12"),
    ("n_chunks", 10**12, "'n_chunks' is 1000000000000; it must be an integer in 1 .. 100,000"),
    ("games", -5, "'games' is -5"),
    ("seed", "7", "'seed' is '7'"),
    ("chunk_size", 10**12, "'chunk_size'"),
    ("policies", "random", "'policies'"),
    ("format", 99, "'format' is 99"),
], ids=lambda v: str(v)[:12])
def test_kind05_bad_run_json_fields_are_refused_naming_the_field(reference, tmp_path, capsys, field, value, says):
    out = fresh(reference, tmp_path)
    meta = json.loads((out / "run.json").read_text())
    (out / "run.json").write_text(json.dumps({**meta, field: value}))
    t = time.perf_counter()
    with pytest.raises(ValueError, match="run.json.*" + says.replace("(", r"\(").replace(")", r"\)")
                       .replace("*", r"\*").replace(".", r"\.")):
        run(config(), out)
    code, o, err = report(capsys, out)
    assert code == 2 and says in err
    # the repair: restore the file or that field, or a new --out
    assert f"repair: restore it from a backup (or put back field {field!r} as the run wrote it)" in err
    assert "cannot be resumed or reported; or start it again with a new --out" in err
    one_line_error(err)
    assert time.perf_counter() - t < 10  # no hang on 10**12 chunks


def test_kind05_simulate_resume_of_a_run_json_with_a_smaller_n_chunks_is_refused(reference, tmp_path, capsys):
    out = fresh(reference, tmp_path)
    meta = json.loads((out / "run.json").read_text())
    (out / "run.json").write_text(json.dumps({**meta, "n_chunks": 3}))
    with pytest.raises(SystemExit) as e:
        cli.main(["simulate", "--resume", str(out), "--no-progress"])
    err = capsys.readouterr().err
    assert e.value.code == 2 and "'n_chunks' is 3" in err
    one_line_error(err)


@pytest.mark.parametrize("line", [
    '{"chunk": 1, "rows": -1, "bytes": 10, "sha256": "%s"}' % ("0" * 64),
    '{"chunk": 1, "rows": 100, "bytes": "many", "sha256": "%s"}' % ("0" * 64),
    '{"chunk": 1000000000000, "rows": 100, "bytes": 10, "sha256": "%s"}' % ("0" * 64),
    '{"chunk": 1, "rows": 100, "bytes": 10, "sha256": "xyz"}',
    '{"chunk": true, "rows": 100, "bytes": 10, "sha256": "%s"}' % ("0" * 64),
    '{"chunk": 1, "rows": 100, "bytes": 10, "sha256": "%s", "extra": 1}' % ("0" * 64),
    '[' * 100_000 + ']' * 100_000,
    '{"chunk": 1, "rows": NaN, "bytes": 10, "sha256": "%s"}' % ("0" * 64),
], ids=["negative-rows", "string-bytes", "huge-chunk", "bad-sha", "bool-chunk", "extra-key", "nested", "nan"])
def test_kind05_kind11_a_bad_manifest_line_is_a_damaged_line_its_chunk_replayed(reference, tmp_path, capsys, line):
    """A manifest line of bad values, or nested 100,000 deep (a RecursionError before), is skipped like a
    torn line: the chunk it names is unrecorded and replayed; report and resume go on."""
    out = fresh(reference, tmp_path)
    p = manifest.manifest_path(out)
    lines = [x for x in p.read_text().splitlines() if json.loads(x)["chunk"] != 1]
    p.write_text("\n".join([*lines, line]) + "\n")
    check = manifest.verify(out)
    assert check.problems == {1: ("unrecorded", check.problems[1][1])}
    assert [n for n, _ in check.damaged_lines] == [len(lines) + 1]  # named by its line number
    code, o, err = report(capsys, out)
    assert code == 1 and "chunk 1: unrecorded" in err and "Traceback" not in err
    assert f"manifest.jsonl line {len(lines) + 1}: a damaged entry" in err
    run(config(), out)
    pd.testing.assert_frame_equal(stream.read_run(out), reference[1])


def test_kind05_a_garbage_manifest_line_is_named_by_file_and_line_then_dropped_on_resume(reference, tmp_path,
                                                                                         capsys):
    """A line that is no entry, between good ones (every chunk still recorded), is never silent: verify,
    report and the resuming run name the manifest file and the line number; the resume drops it (the good
    lines kept as they were), so the next report is clean, and the rows are the uninterrupted run's."""
    out = fresh(reference, tmp_path)
    p = manifest.manifest_path(out)
    good = p.read_bytes().splitlines(keepends=True)
    p.write_bytes(b"".join([good[0], b"hello, I am not an entry\n", b'{"chunk": 2}\n', *good[1:]]))
    check = manifest.verify(out)
    assert check.complete and not check.problems  # nothing lost: every chunk has its good line
    assert [n for n, _ in check.damaged_lines] == [2, 3]
    assert "not JSON" in check.damaged_lines[0][1] and "not an entry" in check.damaged_lines[1][1]
    code, o, err = report(capsys, out)
    assert code == 0 and f"{p} line 2: a damaged entry, ignored (not JSON" in err and f"{p} line 3:" in err
    assert "repair: rerun the same `caishen simulate` command" in err
    assert "drops the manifest's damaged lines" in err and "replays" not in err  # no chunk to replay: not said
    res = run(config(), out)
    assert [n for n, _ in res.damaged_lines] == [2, 3] and res.chunks_run == 0
    assert p.read_bytes() == b"".join(good)
    code, o, err = report(capsys, out)
    assert code == 0 and "damaged" not in err and "manifest" not in err, err
    pd.testing.assert_frame_equal(stream.read_run(out), reference[1])


def test_kind05_bad_sweep_json_and_study_json_fields_are_refused(tmp_path, capsys):
    from caishen.sim.analysis import piao_study, study

    d = tmp_path / "sweep"
    d.mkdir()
    doc = {"kind": "sweep", "grid": {"rules": "kaihua", "axes": {"policy": ["never"]}, "field": "greedy"},
           "baseline": {}, "walls": 10**12, "seed": 0, "chunk_size": 10, "points": [{"dir": "points/p000"}]}
    (d / "sweep.json").write_text(json.dumps(doc))
    (d / "sweep.csv").write_text("x\n")
    with pytest.raises(ValueError, match=r"sweep.json.*'walls' is 1000000000000"):
        study.read_sweep(d)
    doc["walls"] = 10
    doc["points"] = [{"dir": "../../elsewhere"}]
    (d / "sweep.json").write_text(json.dumps(doc))
    with pytest.raises(ValueError, match=r"sweep.json.*'points'"):
        study.read_sweep(d)
    code, o, err = report(capsys, d)
    assert code == 2 and "'points'" in err
    one_line_error(err)
    s = tmp_path / "study"
    s.mkdir()
    (s / "study.json").write_text(json.dumps({"kind": "counterfactual", "decision": "piao", "hands": "all"}))
    with pytest.raises(ValueError, match=r"study.json.*field"):
        piao_study.read_points(s)


# ---------------------------------------------------------------------------
# kind 6: an interrupted first write of run.json / sweep.json
# ---------------------------------------------------------------------------
def test_kind06_a_kill_during_the_first_run_json_write_is_recognised_and_restarted(reference, tmp_path):
    out = tmp_path / "r"
    out.mkdir()
    (out / ".lock").write_text("")
    (out / f".run.json.{os.getpid()}.0123abcd.tmp").write_text('{"format": 3, "rul')  # cut short
    (out / ".run.json.4242.tmp").write_text("")  # the temporary name of an earlier caishen
    (out / "chunks").mkdir()  # an earlier caishen made it before run.json
    run(config(), out)
    pd.testing.assert_frame_equal(stream.read_run(out), reference[1])
    assert sorted(p.name for p in out.iterdir()) == [".lock", "chunks", "manifest.jsonl", "run.json"]


def test_kind06_anything_else_in_a_directory_without_run_json_is_still_refused(tmp_path):
    out = tmp_path / "r"
    out.mkdir()
    (out / "notes.txt").write_text("mine")
    with pytest.raises(ValueError, match="non-empty directory without run.json"):
        run(config(), out)
    assert (out / "notes.txt").read_text() == "mine"


def test_kind06_a_kill_during_the_first_sweep_json_write_is_recognised(tmp_path, engine_warm):
    from caishen.sim.analysis import study

    out = tmp_path / "s"
    out.mkdir()
    (out / f".sweep.json.{os.getpid()}.0123abcd.tmp").write_text('{"kind": "swe')
    table = study.sweep("kaihua", out, options=["failed_piao_factor=1,2"], walls=40, chunk_size=20,
                        execution=Execution(1, progress=False))
    assert len(table) and (out / "sweep.csv").exists()
    assert not [p for p in out.iterdir() if p.name.endswith(".tmp")]


# ---------------------------------------------------------------------------
# kind 7: a full disk right after the last chunk
# ---------------------------------------------------------------------------
def _mount_tmpfs(path: Path, size: str) -> bool:
    path.mkdir(parents=True, exist_ok=True)
    r = subprocess.run(["mount", "-t", "tmpfs", "-o", f"size={size}", "tmpfs", str(path)], capture_output=True)
    return r.returncode == 0


def test_kind07_enospc_writing_the_summary_is_one_line_and_leaves_no_half_file(reference, tmp_path, monkeypatch,
                                                                              capsys):
    """Every output file is written atomically: a full disk at summary.json leaves no partial file (and no
    temporary one) and is a one-line error; freeing the space and rerunning completes the run."""
    from caishen.sim import safeio
    from caishen.sim.analysis import summary

    out = fresh(reference, tmp_path)
    rows, defs, meta, _ = summary.summarize_run(out)

    class Full(io.FileIO):
        def write(self, b):
            raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))

    monkeypatch.setattr(safeio, "open", lambda p, mode, opener=None: Full(p, mode.replace("b", ""), opener=opener),
                        raising=False)
    with pytest.raises(ValueError, match=r"summary.csv.*No space left on device"):
        summary.save_summary(out, rows, defs, meta)
    monkeypatch.undo()
    assert not (out / "summary.json").exists() and not [p for p in out.iterdir() if p.name.endswith(".tmp")]
    summary.save_summary(out, rows, defs, meta)
    json.loads((out / "summary.json").read_text())


def test_kind07_a_real_full_disk_after_the_last_chunk(tmp_path, capsys, engine_warm):
    """On a tmpfs that holds the chunks but not the summary (when this machine lets root mount one):
    ``caishen simulate`` exits 2 with one line, summary.json is absent or valid, never a part."""
    mnt = tmp_path / "small"
    if not _mount_tmpfs(mnt, "512k"):
        pytest.skip("cannot mount a tmpfs here")
    try:
        out = mnt / "r"
        args = ["simulate", "--games", "200", "--chunk-size", "100", "--policy", "random", "--workers", "1",
                "--no-progress", "--out", str(out)]
        assert cli.main(args) == 0
        # fill the disk to the last few hundred bytes, then rerun: only the summary is written again
        (out / "summary.json").unlink()
        (out / "summary.csv").unlink()
        free = os.statvfs(mnt).f_bavail * os.statvfs(mnt).f_frsize
        with open(mnt / "filler", "wb") as f:
            try:
                f.write(b"\0" * (free - 512))
            except OSError:
                pass
        with pytest.raises(SystemExit) as e:
            cli.main(args)
        err = capsys.readouterr().err
        assert e.value.code == 2 and "No space left on device" in err
        one_line_error(err)
        for name in ("summary.json", "summary.csv"):
            if (out / name).exists():
                json.loads((out / name).read_text()) if name.endswith("json") else pd.read_csv(out / name)
        assert not [p for p in out.iterdir() if p.name.endswith(".tmp")]
        (mnt / "filler").unlink()
        assert cli.main(args) == 0
        json.loads((out / "summary.json").read_text())
    finally:
        subprocess.run(["umount", "-l", str(mnt)])


# ---------------------------------------------------------------------------
# kind 8: symbolic links in a run directory
# ---------------------------------------------------------------------------
@pytest.mark.parametrize("name", [".lock", "summary.json", "manifest.jsonl", "run.json", "chunks"])
def test_kind08_a_link_in_the_run_directory_is_refused_and_its_target_untouched(reference, tmp_path, name):
    out = fresh(reference, tmp_path)
    target = tmp_path / "victim"
    if name == "chunks":
        shutil.copytree(out / "chunks", target)
        shutil.rmtree(out / "chunks")
    else:
        target.write_bytes((out / name).read_bytes() if (out / name).exists() else b"precious\n")
        (out / name).unlink(missing_ok=True)
    before = {p: p.read_bytes() for p in ([target] if target.is_file() else list(target.iterdir()))}
    (out / name).symlink_to(target)
    with pytest.raises(ValueError, match=f"symbolic link.*{name}"):
        run(config(), out)
    assert {p: p.read_bytes() for p in before} == before


def test_kind08_report_never_writes_through_a_summary_link_nor_reads_a_linked_chunk(reference, tmp_path, capsys):
    out = fresh(reference, tmp_path)
    victim = tmp_path / "victim.json"
    victim.write_text("precious\n")
    (out / "summary.json").symlink_to(victim)
    with pytest.raises(SystemExit) as e:  # summary.json is never replaced nor written through (issue 42 kind 1)
        cli.main(["report", str(out)])
    err = capsys.readouterr().err
    assert e.value.code == 2 and "summary.json" in err and "is a symbolic link" in err, err
    one_line_error(err)
    assert victim.read_text() == "precious\n" and (out / "summary.json").is_symlink()
    (out / "summary.json").unlink()
    assert cli.main(["report", str(out)]) == 0  # writes summary.json, figures and report.html
    json.loads((out / "summary.json").read_text())
    records.chunk_path(out, 1).rename(tmp_path / "c1.parquet")
    records.chunk_path(out, 1).symlink_to(tmp_path / "c1.parquet")
    capsys.readouterr()
    code, o, err = report(capsys, out)
    assert code == 1 and "chunk 1: corrupt (is a symbolic link" in err


# ---------------------------------------------------------------------------
# kind 10: hangs and unbounded reads
# ---------------------------------------------------------------------------
@pytest.mark.parametrize("path", ["/dev/zero", "fifo", "dir", "huge"])
def test_kind10_tuned_weights_from_a_device_fifo_or_huge_file_are_refused_at_once(tmp_path, path, alarm):
    from caishen.sim.bots.registry import parse as parse_bot

    if path == "fifo":
        path = tmp_path / "w.json"
        os.mkfifo(path)
    elif path == "dir":
        path = tmp_path
    elif path == "huge":
        path = tmp_path / "huge.json"
        with open(path, "wb") as f:
            f.truncate(64 << 20)
    with pytest.raises(ValueError, match=r"a character device|a FIFO|a directory|at most"):
        parse_bot(f"tuned:{path}")


def test_kind10_a_fifo_in_place_of_a_chunk_is_corrupt_not_a_hang(reference, tmp_path, capsys, alarm):
    out = fresh(reference, tmp_path)
    records.chunk_path(out, 2).unlink()
    os.mkfifo(records.chunk_path(out, 2))
    check = manifest.verify(out)
    assert check.problems[2][0] == "corrupt" and "FIFO" in check.problems[2][1]
    code, _, err = report(capsys, out)
    assert code == 1 and "chunk 2: corrupt" in err
    run(config(), out)
    pd.testing.assert_frame_equal(stream.read_run(out), reference[1])


def test_kind10_a_billion_chunks_is_refused_before_anything_is_allocated_or_written(tmp_path, capsys):
    tracemalloc.start()
    t = time.perf_counter()
    with pytest.raises(SystemExit) as e:
        cli.main(["simulate", "--games", str(10**10), "--chunk-size", "1", "--policy", "random", "--no-progress",
                  "--out", str(tmp_path / "r")])
    peak = tracemalloc.get_traced_memory()[1]
    tracemalloc.stop()
    err = capsys.readouterr().err
    assert e.value.code == 2 and "at most 100,000" in err and "larger chunk size" in err
    assert time.perf_counter() - t < 30 and peak < 64 << 20
    assert not (tmp_path / "r").exists()
    with pytest.raises(SystemExit):
        cli.main(["match", "--policies", "greedy,random", "--walls", str(10**9), "--chunk-walls", "1",
                  "--out", str(tmp_path / "m")])
    assert "at most 100,000" in capsys.readouterr().err and not (tmp_path / "m").exists()


def test_kind10_a_200_mb_manifest_line_is_read_in_bounded_memory(reference, tmp_path):
    out = fresh(reference, tmp_path)
    with open(manifest.manifest_path(out), "ab") as f:
        f.write(b'{"chunk": 1, "junk": "' + b"x" * (200 << 20) + b'"}\n')
    tracemalloc.start()
    check = manifest.verify(out)
    peak = tracemalloc.get_traced_memory()[1]
    tracemalloc.stop()
    assert check.complete  # the long line is damaged and skipped; chunk 1's own line stands
    assert peak < 16 << 20, f"{peak / 2**20:.0f} MiB"


# ---------------------------------------------------------------------------
# kind 11: one line, never a traceback
# ---------------------------------------------------------------------------
def _cli_error(capsys, argv, code=2) -> str:
    with pytest.raises(SystemExit) as e:
        cli.main(argv)
    err = capsys.readouterr().err
    assert e.value.code == code, err
    one_line_error(err)
    return err


@pytest.mark.parametrize("where", ["under-a-file", "proc", "empty-name"])
def test_kind11_an_out_that_cannot_be_created_is_one_line(tmp_path, capsys, where):
    f = tmp_path / "file"
    f.write_text("x")
    out = {"under-a-file": f / "r", "proc": Path("/proc/caishen-run"), "empty-name": f / "x" / "y"}[where]
    for argv in (["simulate", "--games", "100", "--chunk-size", "100", "--policy", "random", "--no-progress"],
                 ["match", "--policies", "greedy,random", "--walls", "4", "--no-progress"],
                 ["sweep", "--option", "failed_piao_factor=1,2", "--walls", "4", "--no-progress"]):
        err = _cli_error(capsys, [*argv, "--out", str(out)])
        assert str(out) in err or str(f) in err


def test_kind11_a_read_only_disk_is_one_line(reference, tmp_path, capsys):
    ro = tmp_path / "ro"
    ro.mkdir()
    shutil.copytree(reference[0], ro / "r")
    (ro / "r" / "summary.json").unlink(missing_ok=True)
    r = subprocess.run(["mount", "--bind", str(ro), str(ro)], capture_output=True)
    if r.returncode:
        pytest.skip("cannot bind-mount here")
    try:
        if subprocess.run(["mount", "-o", "remount,bind,ro", str(ro)], capture_output=True).returncode:
            pytest.skip("cannot remount read-only here")
        err = _cli_error(capsys, ["simulate", "--games", "100", "--chunk-size", "100", "--policy", "random",
                                  "--no-progress", "--out", str(ro / "new")])
        assert "Read-only file system" in err
        with pytest.raises(ValueError, match="Read-only file system"):
            run(config(), ro / "r")
    finally:
        subprocess.run(["umount", "-l", str(ro)])


@pytest.mark.parametrize("content, says", [
    ('{"rules": "kaihua", "weights": {"a": 1}}', "'weights' must be a list"),
    ('{"rules": "kaihua", "features": 5, "weights": [1]}', "features 5"),
    ('{"rules": 7, "weights": [1]}', "no 'rules'"),
    ('{"rules": "kaihua", "weights": [NaN]}', "1 weights, expected 17"),
    ('[' * 100_000, "not JSON"),
    ('"just a string"', "not an object"),
])
def test_kind11_bad_values_in_a_weights_file_are_one_line_naming_the_file(tmp_path, capsys, content, says):
    w = tmp_path / "w.json"
    w.write_text(content)
    err = _cli_error(capsys, ["match", "--policies", f"greedy,tuned:{w}", "--walls", "4",
                              "--out", str(tmp_path / "m")])
    assert says in err and "w.json" in err


def test_kind11_bad_run_json_is_one_line_for_every_reader(reference, tmp_path, capsys):
    out = fresh(reference, tmp_path)
    for text in ("[" * 100_000, "{not json", '"a string"', '{"rules": "kaihua"}', "\xff\xfe"):
        (out / "run.json").write_text(text, encoding="latin-1")
        for argv in (["report", str(out)], ["simulate", "--resume", str(out), "--no-progress"]):
            err = _cli_error(capsys, argv)
            assert "run.json" in err and "repair: restore it from a backup" in err and "a new --out" in err


def test_kind11_train_out_under_a_file_or_proc_is_one_line_before_any_tuning(tmp_path, capsys):
    pytest.importorskip("cma")
    f = tmp_path / "file"
    f.write_text("x")
    for out in (f / "w.json", Path("/proc/caishen/w.json")):
        err = _cli_error(capsys, ["train", "--out", str(out), "--generations", "1", "--walls", "10"])
        assert str(out.parent) in err


# ---------------------------------------------------------------------------
# kind 12: caishen score writes valid JSON lines; Ctrl-C is one line
# ---------------------------------------------------------------------------
def _caishen(*args, stdin=None, env=None, **kw):
    e = dict(os.environ, PYTHONPATH=str(ROOT), **(env or {}))
    return subprocess.run([sys.executable, "-m", "caishen", *args], input=stdin, capture_output=True, env=e,
                          timeout=300, **kw)


def _strict_lines(data: bytes) -> list[dict]:
    def no_constant(name):
        raise ValueError(name)

    out = []
    for line in data.decode("utf-8").splitlines():
        out.append(json.loads(line, parse_constant=no_constant))
    return out


@pytest.mark.parametrize("encoding", [None, "ascii:strict", "latin-1:strict"])
def test_kind12_score_output_is_valid_json_lines_whatever_the_ids(encoding):
    good = {"rules": "kaihua", "dealer": 0, "winner": 1, "win_type": "self_draw", "discarder": None,
            "concealed": "123m456m789p234s5s", "melds": [], "win_tile": "5s", "replacement_draw": False,
            "chain": [], "piao_circle": []}
    lines = [json.dumps({**good, "id": "first"}),
             '{"id": NaN, "rules": "kaihua"}', '{"id": Infinity}', '{"id": -Infinity, "rules": "x"}',
             '{"id": "\\ud800 lone", "rules": "kaihua"}', '{"id": "\\udfff", "rules": "kaihua"}',
             json.dumps({**good, "id": "财神 ✓"}, ensure_ascii=False),
             '{"id": 1e999}', "\x00\x01 not json", json.dumps({**good, "id": "last"})]
    env = {"PYTHONIOENCODING": encoding} if encoding else {}
    p = _caishen("score", stdin=("\n".join(lines) + "\n").encode("utf-8") + b"\xff\xfe bad bytes\n", env=env)
    assert b"Traceback" not in p.stderr, p.stderr.decode(errors="replace")
    out = _strict_lines(p.stdout)
    assert len(out) == len(lines) + 1
    assert out[0]["id"] == "first" and out[-2]["id"] == "last" and out[6]["id"] == "财神 ✓"
    assert "error" not in out[0] and "error" not in out[6] and "error" not in out[-2]  # scored
    assert [o["id"] for o in out[1:4]] == [None, None, None]
    assert out[4]["id"].startswith("\ufffd")


def test_kind12_score_refuses_a_device_and_reads_a_fifo(tmp_path, capsys, alarm):
    err = _cli_error(capsys, ["score", "/dev/zero"])
    assert "/dev/zero" in err and "character device" in err


def test_kind12_ctrl_c_in_the_summary_is_one_line(reference, tmp_path, capsys, monkeypatch):
    from caishen.sim.analysis import summary

    def interrupted(*a, **kw):
        raise KeyboardInterrupt

    monkeypatch.setattr(summary, "summarize_run", interrupted)
    assert cli.main(["report", str(reference[0]), "--no-figures"]) == 130
    err = capsys.readouterr().err
    assert err == "caishen report: interrupted\n"


def _wait_for_library(pid: int, name: str, timeout: float = 120.0) -> bool:
    """Poll /proc/PID/maps until a shared library whose path holds ``name`` is mapped (False: it ended)."""
    t = time.monotonic()
    while time.monotonic() - t < timeout:
        try:
            if name in Path(f"/proc/{pid}/maps").read_text():
                return True
        except OSError:
            return False
        time.sleep(0.002)
    return False


@pytest.mark.skipif(not Path("/proc/self/maps").exists(), reason="needs /proc to time the signal")
def test_kind12_sigint_at_start_up_prints_no_traceback():
    """SIGINT at several moments of a command's start, timed from the moment numpy's library is mapped
    (the heavy imports, parsing, the first kernel load): exit status 130 with one line (or 0: the command
    was done), no traceback.  (Before ``import caishen`` has run -- the interpreter's own start and its
    site hooks, the first ~50 ms -- Python's default handler still prints its traceback: no code of ours
    runs yet.)"""
    codes = []
    for delay in (0.0, 0.02, 0.1, 0.3, 0.6, 1.2):
        # SIGINT as in a terminal: a test run in the background (``cmd &`` in a script) ignores SIGINT, and a
        # child inherits that (Python then never installs its handler, and a Ctrl-C cannot reach the command)
        p = subprocess.Popen([sys.executable, "-m", "caishen", "hand", "123m456p789s11223z"],
                             stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                             env=dict(os.environ, PYTHONPATH=str(ROOT)),
                             preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL))
        if _wait_for_library(p.pid, "multiarray"):
            time.sleep(delay)
            p.send_signal(signal.SIGINT)
        _, err = p.communicate(timeout=120)
        assert b"Traceback" not in err and b"KeyboardInterrupt" not in err, (delay, err.decode()[-800:])
        # 130 after the one line; 0: the command was done; -SIGINT: the signal came while the interpreter was
        # exiting (its handler is gone then: the process ends silently, or after the one line)
        assert p.returncode in (130, 0, -signal.SIGINT), (delay, p.returncode, err.decode())
        if err.strip():
            assert err.decode().strip().endswith("interrupted") and len(err.decode().strip().splitlines()) == 1
        codes.append(p.returncode)
    assert 130 in codes


@pytest.mark.parametrize("quiet", [True, False])
def test_kind12_a_ctrl_c_while_the_command_exits_prints_no_traceback(quiet):
    """A SIGINT in an atexit callback (numba's finalizers run there; seen once in 120 timed Ctrl-Cs of
    ``caishen hand``): after :func:`caishen.interrupt.quiet_exit` the process ends as SIGINT does, its
    output flushed, with no traceback; without it, the handler's ``KeyboardInterrupt`` is printed."""
    code = ("import atexit, os, signal, sys\n"
            "from caishen import interrupt\n"
            "interrupt.install()\n"
            "atexit.register(lambda: os.kill(os.getpid(), signal.SIGINT))\n"
            "print('the output')\n"
            + ("interrupt.quiet_exit()\n" if quiet else ""))
    p = subprocess.run([sys.executable, "-c", code], capture_output=True, env=dict(os.environ, PYTHONPATH=str(ROOT)),
                       preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL), timeout=120)
    assert p.stdout == b"the output\n"
    if quiet:
        assert p.returncode == -signal.SIGINT and p.stderr == b"", (p.returncode, p.stderr.decode())
    else:
        assert b"KeyboardInterrupt" in p.stderr


def test_kind12_a_ctrl_c_inside_llvmlite_is_sent_again_not_lost(monkeypatch):
    """A SIGINT whose handler runs in a ctypes callback of llvmlite (numba compiling or loading a kernel) would
    be printed as "Exception ignored" and lost (the command went on and exited 0 after a traceback): the
    handler of :mod:`caishen.interrupt` sends it again a moment later instead; elsewhere it raises."""
    import types

    from caishen import interrupt

    sent = []
    monkeypatch.setattr(interrupt.os, "kill", lambda pid, sig: sent.append((pid, sig)))
    callback = types.SimpleNamespace(f_code=types.SimpleNamespace(co_filename="/x/llvmlite/binding/executionengine.py"),
                                     f_back=None)
    caller = types.SimpleNamespace(f_code=types.SimpleNamespace(co_filename="/x/caishen/cli.py"), f_back=callback)
    interrupt._handler(signal.SIGINT, caller)  # an llvmlite frame further up the stack: deferred too
    deadline = time.monotonic() + 5
    while not sent and time.monotonic() < deadline:
        time.sleep(0.005)
    assert sent == [(os.getpid(), signal.SIGINT)] and not interrupt.seen()
    lock_cb = types.SimpleNamespace(f_code=types.SimpleNamespace(co_filename="<frozen importlib._bootstrap>",
                                                                 co_name="cb"), f_back=None)
    assert interrupt._in_llvmlite(lock_cb)  # importlib's module-lock callback drops an exception too (a flake seen)
    plain = types.SimpleNamespace(f_code=types.SimpleNamespace(co_filename="/x/caishen/cli.py"), f_back=None)
    with pytest.raises(KeyboardInterrupt):
        interrupt._handler(signal.SIGINT, plain)
    assert interrupt.seen()
    monkeypatch.setattr(interrupt, "_raised", False)
    before = signal.signal(signal.SIGINT, signal.default_int_handler)  # as in a terminal (a background run: ignored)
    try:
        old = interrupt.install()  # over Python's default handler only, and put back
        assert signal.getsignal(signal.SIGINT) is interrupt._handler and old is signal.default_int_handler
        interrupt.restore(old)
        assert signal.getsignal(signal.SIGINT) is signal.default_int_handler
        signal.signal(signal.SIGINT, signal.SIG_IGN)  # ignored (nohup, a background job): left ignored
        assert interrupt.install() is None and signal.getsignal(signal.SIGINT) is signal.SIG_IGN
    finally:
        signal.signal(signal.SIGINT, before)
