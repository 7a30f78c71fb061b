"""The tests' shared data folder (:mod:`shared_data`): ``$CAISHEN_SHARED``, else ``../shared``; a test that
needs a missing file of it is skipped with a message naming the variable."""

from __future__ import annotations

import pytest

import shared_data


def test_the_variable_names_the_folder_and_unset_falls_back_to_shared_next_to_the_repository(monkeypatch, tmp_path):
    (tmp_path / "vectors").mkdir()
    (tmp_path / "vectors" / "kaihua.jsonl").write_text("{}\n")
    monkeypatch.setenv("CAISHEN_SHARED", str(tmp_path))
    assert shared_data.require("vectors", "kaihua.jsonl") == tmp_path / "vectors" / "kaihua.jsonl"
    monkeypatch.delenv("CAISHEN_SHARED")
    assert shared_data.root() == shared_data.DEFAULT == shared_data.ROOT.parent / "shared"
    monkeypatch.setenv("CAISHEN_SHARED", "")  # empty: as unset
    assert shared_data.root() == shared_data.DEFAULT


def test_a_missing_file_skips_naming_the_variable(monkeypatch, tmp_path):
    monkeypatch.setenv("CAISHEN_SHARED", str(tmp_path / "nowhere"))
    with pytest.raises(pytest.skip.Exception) as e:
        shared_data.require("vectors", "jiating.jsonl")
    msg = str(e.value)
    assert "vectors/jiating.jsonl not found" in msg and "CAISHEN_SHARED=" in msg and "nowhere" in msg
    monkeypatch.delenv("CAISHEN_SHARED")
    monkeypatch.setattr(shared_data, "DEFAULT", tmp_path / "shared")
    with pytest.raises(pytest.skip.Exception) as e:
        shared_data.require("rules", "kaihua.md")
    assert "CAISHEN_SHARED unset" in str(e.value) and "set CAISHEN_SHARED" in str(e.value)
