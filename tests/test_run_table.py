"""Results read as words (issue 45 item 4): the decoders, ``Game.result`` / ``Game.record``,
``caishen.read_run`` (stray files in ``RUN/chunks`` ignored) and the schema page ``docs/schema.md``
(generated from the contract; every column of real runs documented)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

import caishen
from caishen.agents import make_agent
from caishen.sim import tiles
from caishen.sim.analysis import arena, run_table
from caishen.sim.engine import Game
from caishen.sim.rules import base
from caishen.sim.rules import records as contract
from caishen.sim.rules import words
from caishen.sim.selfplay import records, runner, stream

ROOT = Path(__file__).resolve().parents[1]


# ---------------------------------------------------------------------------
# the decoders
# ---------------------------------------------------------------------------
def test_codes_read_as_categories_and_refuse_an_unknown_code():
    out = words.decode_columns({"win_type": np.array([0, 1, 2, -1], np.int8)}, words.COMMON_DECODERS)
    cat = out["win_type"]
    assert [cat.value(i) for i in range(4)] == ["self_draw", "discard_win", "robbed_kong", "draw"]
    with pytest.raises(ValueError, match="'win_type' holds 7 in row 1"):
        words.decode_columns({"win_type": np.array([0, 7], np.int8)}, words.COMMON_DECODERS)
    tile = words.decode_columns({"win_tile": np.array([31, -1, 0], np.int8)}, words.COMMON_DECODERS)["win_tile"]
    assert [tile.value(i) for i in range(3)] == ["5z", None, "1m"]
    with pytest.raises(ValueError, match="'win_tile' holds 34"):
        words.decode_columns({"win_tile": np.array([34], np.int8)}, words.COMMON_DECODERS)


def test_bits_flags_and_text_read_as_named_values():
    out = words.decode_columns({"winners_mask": np.array([0b0101, 0], np.uint8), "x": np.array([1, 2])},
                               words.COMMON_DECODERS)
    assert list(out) == ["won_0", "won_1", "won_2", "won_3", "x"]  # the mask's place, in seat order
    assert out["won_0"].tolist() == [True, False] and out["won_2"].tolist() == [True, False]
    with pytest.raises(ValueError, match="'winners_mask' holds 16"):
        words.decode_columns({"winners_mask": np.array([16], np.uint8)}, words.COMMON_DECODERS)
    with pytest.raises(ValueError, match="'f' holds 2 in row 0: not 0 or 1"):
        words.Flag().decode("f", np.array([2]))
    jw = base.get("jiating").words_hooks()
    dec = jw.decoders["patterns_1"].decode("patterns_1", np.array(["P01:2,P07:4", ""], object))["patterns_1"]
    assert dec.tolist() == ["P01 putong hupai 普通胡牌 2, P07 menqing 门清 4", ""]
    with pytest.raises(ValueError, match="'patterns_1'.*no pattern entry"):
        jw.decoders["patterns_1"].decode("patterns_1", np.array(["X01:2"], object))
    with pytest.raises(ValueError, match="integer codes"):
        words.Flag().decode("f", np.array(["a"], object))


# ---------------------------------------------------------------------------
# Game.result (words) and Game.record (codes)
# ---------------------------------------------------------------------------
def _played(rules, seed, policy="greedy", options=None):
    g = Game(rules, options).reset(seed=seed)
    bots = [make_agent(policy, seed + p) for p in range(4)]
    while not g.done:
        g.step(bots[g.current_player].act(g.observe()))
    return g


@pytest.mark.parametrize("rules", ["kaihua", "jiating"])
def test_game_result_is_the_record_in_words(rules, engine_warm):
    seen = set()
    for seed in range(12):
        g = _played(rules, seed, "random" if seed % 3 == 0 else "greedy")
        rec, res = g.record, g.result
        assert res == words.record_words(rules, rec)
        seen.add(res["win_type"])
        assert res["win_type"] == words.WIN_TYPE_WORDS[rec["win_type"]]
        assert [res[f"won_{s}"] for s in range(4)] == [bool(rec["winners_mask"] >> s & 1) for s in range(4)]
        assert "winners_mask" not in res and res["next_dealer"] == rec["next_dealer"]
        for k in ("winner", "dealer", "discarder", "score_0", "turns", "tiles_left"):
            assert res[k] == rec[k] and type(res[k]) is int
        if rules == "kaihua":
            from caishen.sim.rules.kaihua import flag_names

            assert {k[5:] for k, v in res.items() if k.startswith("hand_") and v} == set(flag_names(rec["hand_flags"]))
            assert all(type(res[f"failed_piao_{s}"]) is bool for s in range(4))
        else:
            assert res["win_tile"] == (tiles.kind_name(rec["win_tile"]) if rec["win_tile"] >= 0 else None)
            assert res[f"decl_{seed % 4}"] in ("none", "jiating", "hard")
            w = rec["winner"]
            if w >= 0:
                assert res[f"patterns_{w}"].startswith("P01 putong hupai 普通胡牌 ")
    assert "self_draw" in seen and "discard_win" in seen


# ---------------------------------------------------------------------------
# caishen.read_run
# ---------------------------------------------------------------------------
@pytest.fixture(scope="module")
def runs(tmp_path_factory, engine_warm):
    tmp = tmp_path_factory.mktemp("words")
    out = {}
    for rules, policies in (("kaihua", "always,greedy,random,greedy"), ("jiating", "greedy")):
        out[rules] = tmp / rules
        runner.run(runner.make_config(rules, 60, 3, policies=policies, chunk_size=20), out[rules], workers=1,
                   progress=False)
    out["match"] = tmp / "match"
    arena.play_match("kaihua", "greedy,random", 3, 5, out["match"], workers=1, progress=False)
    return out


def test_read_run_ignores_stray_files_in_the_chunks_folder(runs, tmp_path):
    import shutil

    run = tmp_path / "r"
    shutil.copytree(runs["kaihua"], run)
    chunks = run / records.CHUNKS_DIR
    (chunks / "notes.txt").write_text("my notes\n")
    (chunks / "chunk-00099.parquet").write_bytes(b"not parquet")  # past the run's chunks: not the run's
    (chunks / "chunk-00000.parquet.bak").write_bytes((chunks / "chunk-00000.parquet").read_bytes())
    (chunks / "old").mkdir()
    with pytest.raises(ValueError):  # pyarrow's ArrowInvalid: what the README used to suggest
        pd.read_parquet(chunks)
    df = caishen.read_run(run)
    assert len(df) == 60 and df["hand_id"].tolist() == list(range(60))
    pd.testing.assert_frame_equal(caishen.read_run(run, codes=True), stream.read_run(runs["kaihua"]))


def test_read_run_reads_the_manifests_finished_chunks_only(runs, tmp_path):
    import json
    import shutil

    run = tmp_path / "r"
    shutil.copytree(runs["kaihua"], run)  # 3 chunks of 20 hands
    manifest = run / "manifest.jsonl"
    lines = manifest.read_text().splitlines()
    manifest.write_text("\n".join(x for x in lines if json.loads(x)["chunk"] != 1) + "\n")
    with pytest.warns(UserWarning, match=r"left out chunk\(s\) 1 without a manifest line"):
        df = caishen.read_run(run)
    assert sorted(set(df["chunk"])) == [0, 2] and len(df) == 40
    p = records.chunk_path(run, 2)
    p.write_bytes(p.read_bytes()[:200])  # a recorded chunk cut short: named, never read
    with pytest.raises(ValueError, match="damaged chunks: .*chunk 2: short"):
        caishen.read_run(run)


@pytest.mark.parametrize("name", ["kaihua", "jiating", "match"])
def test_read_run_rows_are_the_records_in_words(runs, name):
    codes = caishen.read_run(runs[name], codes=True)
    df = caishen.read_run(runs[name])
    rules = "jiating" if name == "jiating" else "kaihua"
    assert df["win_type"].dtype == "category" and set(df["win_type"].cat.categories) == {
        "self_draw", "discard_win", "robbed_kong", "draw"}
    assert "winners_mask" not in df and df[[f"won_{s}" for s in range(4)]].dtypes.eq(bool).all()
    for i in range(0, len(codes), 7):
        row = {k: (v.item() if hasattr(v, "item") else v) for k, v in codes.iloc[i].items()}
        want = words.record_words(rules, row)  # Game.result's words of the stored row
        got = df.iloc[i]
        for k, v in want.items():
            if k.startswith("policy_"):
                continue
            g = got[k]
            assert (v is None and pd.isna(g)) or g == v, (k, g, v)
    if name == "match":
        assert set(df["policy_0"].cat.categories) == {"greedy", "random"}
        assert (df["policy_0"].astype(str) != df["policy_1"].astype(str)).all()  # A B A B in every seating


def test_read_run_refuses_what_it_cannot_read(runs, tmp_path):
    with pytest.raises(ValueError, match="no column\\(s\\) 'nope'"):
        caishen.read_run(runs["kaihua"], ["nope"])
    with pytest.raises(ValueError, match="not a run directory"):
        caishen.read_run(tmp_path)
    with pytest.raises(ValueError, match="list of column names"):
        caishen.read_run(runs["kaihua"], "win_type")
    df = caishen.read_run(runs["jiating"], ["win_type", "win_tile"])
    assert list(df.columns) == ["win_type", "win_tile", "hand_id"] and df["win_tile"].dtype == "category"


def test_import_caishen_stays_cheap():
    code = "import sys, caishen; print('pandas' in sys.modules, callable(caishen.read_run), 'pandas' in sys.modules)"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout.split()
    assert out == ["False", "True", "True"]


# ---------------------------------------------------------------------------
# the schema page
# ---------------------------------------------------------------------------
def test_schema_page_is_the_generated_one():
    page = (ROOT / "docs" / "schema.md").read_text(encoding="utf-8")
    assert page == run_table.schema_markdown(), (
        "docs/schema.md is stale: python -m caishen.sim.analysis.run_table > docs/schema.md")


@pytest.mark.parametrize("name", ["kaihua", "jiating", "match"])
def test_every_column_of_a_real_run_is_documented(runs, name):
    page = run_table.schema_markdown()
    meanings = run_table.docs()
    for df in (caishen.read_run(runs[name], codes=True), caishen.read_run(runs[name])):
        for col in df.columns:
            key = run_table.doc_key(col)
            assert meanings.get(key), f"column {col!r} of a {name} run has no meaning (doc key {key!r})"
            assert f"| `{key}` |" in page, f"column {col!r} is not on docs/schema.md"


def test_every_documented_column_exists():
    """No meaning outlives its column: each doc key is a column of some contract, of the play layer or a
    decoded column."""
    cols = {c for c, _ in records.RUN_COLUMNS}
    for name in base.names():
        cols |= {c for c, _ in contract.record_columns(name)}
        for dec in words.decoders(name).values():
            if isinstance(dec, words.Bits):
                cols |= set(dec.bits.values())
    cols |= {c for fn_cols in records.CHUNK_FN_COLUMNS.values() for c, _ in fn_cols}
    cols |= {f"piao_chance_{s}" for s in range(4)}
    cols |= {f"won_{s}" for s in range(4)}
    keys = {run_table.doc_key(c) for c in cols}
    assert set(run_table.docs()) <= keys, sorted(set(run_table.docs()) - keys)
