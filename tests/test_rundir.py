"""The one run-directory module (caishen.sim.selfplay.rundir): claim, resume, refuse -- on a toy kind of directory.

Runs, ladders, sweeps, studies and the balance report each declare a
:class:`~caishen.sim.selfplay.rundir.Kind`; these tests exercise the shared
rules once, with a marker ``toy.json`` and no engine, and check that every
tool's kind is declared through the module.
"""

from __future__ import annotations

import json
import os

import pytest

from caishen.sim import safeio
from caishen.sim.selfplay import rundir


def _read(out):
    doc, p = rundir.read_marker(out, "toy", "toy.json", 1 << 16)
    if not isinstance(doc.get("n"), int):
        raise safeio.FileError(p, f"field 'n' is {doc.get('n')!r}: not a toy.json")
    return doc


TOY = rundir.Kind("toy", "toy.json", _read, subdirs=("chunks",), analysis_keys=("label",), stale=("table.csv",))


def _claim(out, **doc):
    with rundir.claim(out, TOY, {"n": 1, "label": "a", **doc}) as stored:
        return stored


def test_a_new_directory_gets_its_marker_first_and_its_folders(tmp_path):
    out = tmp_path / "new"
    assert _claim(out)["n"] == 1
    assert json.loads((out / "toy.json").read_text()) == {"n": 1, "label": "a"}
    assert (out / "chunks").is_dir() and (out / safeio.DirLock.NAME).is_file()


def test_the_same_configuration_resumes_another_is_refused_naming_the_difference(tmp_path):
    out = tmp_path / "run"
    _claim(out)
    (out / "chunks" / "done").write_text("kept")
    assert _claim(out)["n"] == 1 and (out / "chunks" / "done").read_text() == "kept"
    with pytest.raises(ValueError, match=r"holds a different toy: n: directory has 1, requested 2"):
        _claim(out, n=2)


def test_an_analysis_key_rewrites_the_marker_and_removes_what_it_shaped(tmp_path):
    out = tmp_path / "run"
    _claim(out)
    (out / "table.csv").write_text("old table")
    assert _claim(out, label="b")["label"] == "b"
    assert json.loads((out / "toy.json").read_text())["label"] == "b" and not (out / "table.csv").exists()


def test_a_file_or_a_foreign_directory_is_refused_before_anything_is_written(tmp_path):
    f = tmp_path / "file"
    f.write_text("x")
    with pytest.raises(ValueError, match="is not a directory; choose a new --out"):
        _claim(f)
    other = tmp_path / "other"
    other.mkdir()
    (other / "notes.txt").write_text("mine")
    with pytest.raises(ValueError, match="is a non-empty directory without toy.json; choose a new --out"):
        _claim(other)
    assert sorted(os.listdir(other)) == ["notes.txt"]  # no lock, no marker left in someone else's folder


def test_what_a_killed_first_write_leaves_is_cleared(tmp_path):
    out = tmp_path / "killed"
    out.mkdir()
    (out / ".toy.json.12345.0123abcd.tmp").write_text("{")
    (out / safeio.DirLock.NAME).write_text("")
    (out / "chunks").mkdir()
    assert _claim(out)["n"] == 1
    assert sorted(os.listdir(out)) == [".lock", "chunks", "toy.json"]


def test_a_link_inside_or_a_second_writer_is_refused(tmp_path):
    out = tmp_path / "run"
    _claim(out)
    with safeio.DirLock(out, "toy"):
        with pytest.raises(ValueError, match="in use by another running toy"):
            _claim(out)
    victim = tmp_path / "victim.csv"
    victim.write_text("precious")
    (out / "table.csv").symlink_to(victim)
    with pytest.raises(ValueError, match="symbolic link.*table.csv"):
        _claim(out, label="b")  # would remove the stale table: never through a link
    assert victim.read_text() == "precious"


def test_a_damaged_marker_is_one_line_naming_the_file(tmp_path):
    out = tmp_path / "run"
    _claim(out)
    (out / "toy.json").write_text('{"n": "many"}')
    with pytest.raises(safeio.FileError, match=r"toy.json.*field 'n' is 'many'"):
        _claim(out)
    with pytest.raises(ValueError, match=r"is not a toy directory \(no toy.json\)"):
        _read(tmp_path / "nothing")


def test_a_workspace_is_locked_and_link_free(tmp_path):
    out = tmp_path / "answer"
    with rundir.workspace(out, "飘 answer") as d:
        assert d == out and (out / safeio.DirLock.NAME).is_file()
        with pytest.raises(ValueError, match="in use by another running 飘 answer"):
            with rundir.workspace(out, "飘 answer"):
                pass
    (out / "x").symlink_to(tmp_path)
    with pytest.raises(ValueError, match="symbolic link"):
        with rundir.workspace(out, "飘 answer"):
            pass


def test_every_tool_declares_its_directory_through_rundir():
    from caishen.sim.analysis import balance_report, ladder, piao_study, study

    kinds = {k.marker: k for k in (rundir.RUN, ladder.LADDER, study.SWEEP, piao_study.STUDY, balance_report.BALANCE)}
    assert set(kinds) == {"run.json", "ladder.json", "sweep.json", "study.json", "balance.json"}
    assert all(isinstance(k, rundir.Kind) for k in kinds.values())
