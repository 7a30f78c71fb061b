"""Tests of the batch runner (caishen.sim.selfplay.runner), the records files (caishen.sim.selfplay.records) and the summary (caishen.sim.analysis.summary).

The runner is exercised with :func:`fake_chunk`, a TEST DOUBLE of the
engine's chunk function: it draws contract-shaped, zero-sum records from a
numpy Generator and never plays mahjong.  The real engine is run end to end
by ``tests/test_simulate_cli.py``.
"""

from __future__ import annotations

import json
import math
import os
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from scipy import stats

from caishen.sim import safeio
from caishen.sim.selfplay import records, runner, stream
from caishen.sim.analysis import summary
from caishen.sim.rules.kaihua import FLAG_JOKER_LINK, FLAG_PINGHU

RULES = "kaihua"
OPTIONS = {"discard_win": True}
POLICIES = ("random",) * 4


def fake_chunk(rules, options, policies, seed_entropy, n_hands):
    """TEST DOUBLE for ``caishen.sim.selfplay.runner.engine_chunk``: random records obeying the records contract.

    Hands are drawn independently: a draw (流局) or a win of one seat by
    self-draw / discard / robbed kong, with K-8 shares ``base * 2**E`` so
    that scores sum to zero; 飘 attempts, failed 飘 (only for other seats
    when somebody won) and 财神 counts are random.  Not a game of mahjong.
    """
    rng = np.random.default_rng(int(seed_entropy))
    n = int(n_hands)
    dealer = rng.integers(0, 4, n)
    win_type = rng.choice([-1, 0, 1, 2], size=n, p=[0.4, 0.3, 0.25, 0.05])
    won = win_type >= 0
    winner = np.where(won, rng.integers(0, 4, n), -1)
    discarder = np.where(win_type >= 1, (winner + rng.integers(1, 4, n)) % 4, -1)
    exponent = np.where(won, rng.integers(0, 4, n), 0)
    chain_piao = np.where(win_type == 0, rng.integers(0, 3, n), 0)
    chain_kong = np.where(win_type == 0, rng.integers(0, 2, n), 0)
    flags = np.where(won, FLAG_PINGHU, 0) | np.where(chain_piao > 0, FLAG_JOKER_LINK, 0)
    piao = rng.integers(0, 3, (4, n)) * (rng.random((4, n)) < 0.4)
    # the winner's 飘 links are among its attempts
    for s in range(4):
        piao[s] = np.where(winner == s, np.maximum(piao[s], chain_piao), piao[s])
    failed = (piao > 0) & won & (np.arange(4)[:, None] != winner) & (rng.random((4, n)) < 0.5)
    scores = np.zeros((4, n), np.int64)
    for h in np.flatnonzero(won):
        w = winner[h]
        for p in range(4):
            if p == w:
                continue
            share = (4 if dealer[h] in (p, w) else 2) << exponent[h]
            payer = p if win_type[h] == 0 else discarder[h]
            scores[payer, h] -= share
            scores[w, h] += share
    cols = {
        "hand": np.arange(n, dtype=np.int64),
        "match_hand": (np.arange(n) % 16).astype(np.int32),
        "dealer": dealer.astype(np.int8),
        "winner": winner.astype(np.int8),
        "winners_mask": np.where(won, 1 << np.maximum(winner, 0), 0).astype(np.uint8),
        "win_type": win_type.astype(np.int8),
        "discarder": discarder.astype(np.int8),
        "exponent": (exponent + chain_piao + chain_kong).astype(np.int8),
        "hand_flags": flags.astype(np.int32),
        "chain_len": (chain_piao + chain_kong).astype(np.int8),
        "chain_piao": chain_piao.astype(np.int8),
        "chain_kong": chain_kong.astype(np.int8),
    }
    for s in range(4):
        cols[f"score_{s}"] = scores[s].astype(np.int32)
    for s in range(4):
        cols[f"caishen_{s}"] = rng.integers(0, 3, n).astype(np.int8)
    for s in range(4):
        cols[f"piao_{s}"] = piao[s].astype(np.int16)
    for s in range(4):
        cols[f"failed_piao_{s}"] = failed[s].astype(np.int8)
    cols["turns"] = rng.integers(30, 80, n).astype(np.int16)
    cols["tiles_left"] = rng.integers(20, 60, n).astype(np.int16)
    return cols


def config(games=2500, seed=11, chunk_size=1000, **changes):
    kw = dict(rules=RULES, options=OPTIONS, policies=POLICIES, seed=seed, games=games, chunk_size=chunk_size,
              chunk_fn=runner._fn_name(fake_chunk))
    kw.update(changes)
    return runner.RunConfig(**kw)


def run(cfg, out, **kw):
    kw.setdefault("progress", False)
    kw.setdefault("workers", 1)
    return runner.run(cfg, out, chunk_fn=fake_chunk, **kw)


# ---------------------------------------------------------------------------
# seeding
# ---------------------------------------------------------------------------
def test_chunk_seeds_come_from_seedsequence_spawn_and_do_not_depend_on_the_chunk_count():
    s10 = runner.chunk_seeds(7, 10)
    children = np.random.SeedSequence(7).spawn(10)
    assert s10.dtype == np.uint32
    assert list(s10) == [c.generate_state(1, np.uint32)[0] for c in children]
    assert list(runner.chunk_seeds(7, 4)) == list(s10[:4])
    assert len(set(s10)) == 10
    assert list(runner.chunk_seeds(8, 4)) != list(s10[:4])


def test_chunk_seeds_refuse_two_chunks_with_the_same_engine_seed(monkeypatch):
    class Clash:
        """SeedSequence stand-in whose children 0 and 2 collide."""

        def __init__(self, seed):
            pass

        def spawn(self, n):
            return [Clash.Child(i if i != 2 else 0) for i in range(n)]

        class Child:
            def __init__(self, v):
                self.v = v

            def generate_state(self, n, dtype):
                return np.array([self.v], dtype)

    monkeypatch.setattr(runner.np.random, "SeedSequence", Clash)
    with pytest.raises(ValueError, match="chunks 0 and 2 get the same 32-bit engine seed"):
        runner.chunk_seeds(5, 4)


# ---------------------------------------------------------------------------
# rows, files, determinism
# ---------------------------------------------------------------------------
def test_run_writes_one_parquet_file_per_chunk_with_run_columns_and_contract_dtypes(tmp_path):
    cfg = config(games=2500, chunk_size=1000)
    res = run(cfg, tmp_path / "r")
    assert (res.chunks_run, res.chunks_skipped, res.hands_run) == (3, 0, 2500)
    files = sorted(p.name for p in (tmp_path / "r" / "chunks").iterdir())
    assert files == ["chunk-00000.parquet", "chunk-00001.parquet", "chunk-00002.parquet"]
    meta = json.loads((tmp_path / "r" / "run.json").read_text())
    assert {k: meta[k] for k in ("rules", "seed", "games", "chunk_size", "n_chunks", "policies", "options")} == {
        "rules": RULES, "seed": 11, "games": 2500, "chunk_size": 1000, "n_chunks": 3,
        "policies": list(POLICIES), "options": OPTIONS,
    }
    assert meta["version"] and len(meta["source_digest"]) == 16
    df = stream.read_run(tmp_path / "r")
    assert len(df) == 2500
    assert list(df["hand_id"]) == list(range(2500))
    assert (df["seed"] == 11).all()
    assert df.groupby("chunk").size().to_dict() == {0: 1000, 1: 1000, 2: 500}
    assert (df["hand_id"] == df["chunk"].astype(np.int64) * 1000 + df["hand"]).all()
    expected = [*(c for c, _ in records.RUN_COLUMNS), *(c for c, _ in records.record_columns(RULES))]
    assert list(df.columns) == expected
    for name, dtype in (*records.RUN_COLUMNS, *records.record_columns(RULES)):
        assert df[name].dtype == dtype, name
    assert (df[[f"score_{s}" for s in range(4)]].sum(axis=1) == 0).all()
    # chunk i holds exactly what the chunk function returns for child i's seed
    seeds = runner.chunk_seeds(11, 3)
    direct = pd.DataFrame(fake_chunk(RULES, OPTIONS, POLICIES, int(seeds[2]), 500))
    got = df[df["chunk"] == 2].reset_index(drop=True)[list(direct.columns)]
    pd.testing.assert_frame_equal(got, direct)


def test_same_seed_same_rows_with_one_or_two_worker_processes(tmp_path):
    cfg = config(games=4000, chunk_size=700)
    run(cfg, tmp_path / "w1", workers=1)
    run(cfg, tmp_path / "w2", workers=2)
    a, b = stream.read_run(tmp_path / "w1"), stream.read_run(tmp_path / "w2")
    assert len(a) == 4000
    pd.testing.assert_frame_equal(a, b)
    c = stream.read_run(run(config(games=4000, chunk_size=700, seed=12), tmp_path / "s12").run_dir)
    assert not a.drop(columns="seed").equals(c.drop(columns="seed"))


def test_resume_replays_only_missing_chunks_and_gives_the_uninterrupted_rows(tmp_path):
    cfg = config(games=5000, chunk_size=1000)
    run(cfg, tmp_path / "full")
    part = tmp_path / "part"
    run(cfg, part)
    # an interrupted run: two chunks never finished, one temporary file left behind
    records.chunk_path(part, 1).unlink()
    records.chunk_path(part, 4).unlink()
    stale = part / "chunks" / ".chunk-00001.parquet.999.tmp"
    stale.write_bytes(b"half a parquet file")
    res = run(cfg, part)
    assert (res.chunks_run, res.chunks_skipped, res.hands_run) == (2, 3, 2000)
    assert not stale.exists()
    pd.testing.assert_frame_equal(stream.read_run(part), stream.read_run(tmp_path / "full"))
    again = run(cfg, part)
    assert (again.chunks_run, again.chunks_skipped) == (0, 5)


def test_a_different_configuration_in_the_same_run_directory_is_an_error_naming_it(tmp_path):
    out = tmp_path / "r"
    run(config(), out)
    with pytest.raises(ValueError, match=r"seed: run has 11, requested 12"):
        run(config(seed=12), out)
    with pytest.raises(ValueError, match=r"option discard_win: run has True, requested False"):
        run(config(options={"discard_win": False}), out)
    with pytest.raises(ValueError, match=r"games: run has 2500, requested 3000"):
        run(config(games=3000), out)
    with pytest.raises(ValueError, match=r"chunk_size: run has 1000, requested 500"):
        run(config(chunk_size=500), out)
    with pytest.raises(ValueError, match=r"policies"):
        run(config(policies=("random", "random", "random", "other")), out)
    (tmp_path / "other").mkdir()
    (tmp_path / "other" / "notes.txt").write_text("x")
    with pytest.raises(ValueError, match="non-empty directory without run.json"):
        run(config(), tmp_path / "other")


def test_a_second_run_into_a_directory_in_use_is_refused(tmp_path):
    out = tmp_path / "r"
    run(config(games=10, chunk_size=5), out)
    with safeio.DirLock(out):
        with pytest.raises(ValueError, match="in use by another running simulation"):
            run(config(games=10, chunk_size=5), out)


def test_run_config_rejects_bad_values():
    with pytest.raises(ValueError, match="games 0"):
        config(games=0)
    with pytest.raises(ValueError, match="chunk size -3"):
        config(chunk_size=-3)
    with pytest.raises(ValueError, match="seed -1"):
        config(seed=-1)
    with pytest.raises(ValueError, match="one per seat"):
        config(policies=("random",) * 3)
    with pytest.raises(ValueError, match="workers 0"):
        run(config(), "/nonexistent/never", workers=0)
    with pytest.raises(ValueError, match="backend 'dask'"):
        run(config(), "/nonexistent/never", backend="dask")


def test_ray_backend_without_ray_installed_is_a_clear_error(tmp_path):
    try:
        import ray  # noqa: F401
    except ImportError:
        with pytest.raises(ValueError, match=r"pip install 'caishen\[ray\]'"):
            run(config(games=10, chunk_size=5), tmp_path / "r", backend="ray", workers=None)
    else:
        pytest.skip("ray is installed; see test_ray_backend_matches_local")


def test_ray_backend_matches_local(tmp_path):
    ray = pytest.importorskip("ray")
    cfg = config(games=600, chunk_size=200)
    run(cfg, tmp_path / "local")
    # Ray's workers must import this test module (the test double); the runner reuses an initialized Ray
    here = Path(__file__).resolve().parent
    path = os.pathsep.join([str(here), str(here.parent), os.environ.get("PYTHONPATH", "")])
    ray.init(num_cpus=2, include_dashboard=False, runtime_env={"env_vars": {"PYTHONPATH": path}})
    try:
        run(cfg, tmp_path / "ray", backend="ray", workers=2)
    finally:
        ray.shutdown()
    pd.testing.assert_frame_equal(stream.read_run(tmp_path / "ray"), stream.read_run(tmp_path / "local"))


def test_a_lost_ray_worker_becomes_an_error_naming_the_chunk_other_outcomes_pass_through():
    """The Ray path's relay (runner._named_failure), without Ray: a lost-worker error names the chunk."""
    import concurrent.futures as cf

    class Lost(Exception):
        pass

    f = cf.Future()
    g = runner._named_failure(f, 4, 123, (Lost,))
    f.set_exception(Lost("The worker died unexpectedly\nmore"))
    with pytest.raises(RuntimeError, match=r"chunk 4 \(seed_entropy 123\) failed on Ray after 3 attempt\(s\): "
                                           r"Lost: The worker died unexpectedly$"):
        g.result()
    f, h = cf.Future(), cf.Future()
    g, k = runner._named_failure(f, 1, 5, (Lost,)), runner._named_failure(h, 2, 6, (Lost,))
    f.set_exception(KeyError("chunk code"))  # an error of the chunk itself is not a lost worker
    h.set_result({"x": 1})
    with pytest.raises(KeyError, match="chunk code"):
        g.result()
    assert k.result() == {"x": 1}


# ---------------------------------------------------------------------------
# the records contract
# ---------------------------------------------------------------------------
def test_check_chunk_names_missing_columns_wrong_dtypes_and_non_zero_sum_scores():
    good = fake_chunk(RULES, {}, POLICIES, 3, 50)
    records.check_chunk(good, RULES, 50)
    bad = dict(good)
    del bad["failed_piao_2"]
    with pytest.raises(ValueError, match="lack the column 'failed_piao_2'"):
        records.check_chunk(bad, RULES, 50)
    bad = dict(good, turns=good["turns"].astype(np.int64))
    with pytest.raises(ValueError, match="'turns' has dtype int64, the records contract says int16"):
        records.check_chunk(bad, RULES, 50)
    s0 = good["score_0"].copy()
    s0[7] += 1
    with pytest.raises(ValueError, match=r"do not sum to zero in hand 7 .*K-8.5"):
        records.check_chunk(dict(good, score_0=s0), RULES, 50)
    with pytest.raises(ValueError, match="shape"):
        records.check_chunk(good, RULES, 49)


def broken_chunk(rules, options, policies, seed_entropy, n_hands):
    """TEST DOUBLE returning records whose scores do not sum to zero."""
    cols = fake_chunk(rules, options, policies, seed_entropy, n_hands)
    cols["score_3"] = cols["score_3"] + np.int32(1)
    return cols


def test_a_chunk_breaking_the_contract_stops_the_run_and_writes_nothing_for_it(tmp_path):
    cfg = config(games=20, chunk_size=10, chunk_fn=runner._fn_name(broken_chunk))
    with pytest.raises(RuntimeError, match=r"chunk 0 .*do not sum to zero"):
        runner.run(cfg, tmp_path / "r", workers=1, progress=False, chunk_fn=broken_chunk)
    assert records.finished_chunks(tmp_path / "r") == set()


def test_no_column_of_a_run_shadows_a_dataframe_attribute(tmp_path):
    """K-10 records read back as a DataFrame: every column is reachable as ``df.NAME`` (issue 28: the
    column ``flags`` was ``pandas.DataFrame.flags``, so ``df.flags & FLAG_JOKER_LINK`` raised); a chunk written
    under the old name is refused with a reason naming the rename."""
    from caishen.sim.rules import base as rulesets
    from caishen.sim.selfplay import manifest

    for name in rulesets.names():
        cols = [c for c, _ in records.file_columns(name)]
        for fn in records.CHUNK_FN_COLUMNS.values():
            cols += [c for c, _ in fn]
        assert not set(cols) & set(dir(pd.DataFrame)), (name, set(cols) & set(dir(pd.DataFrame)))
    run(config(games=200, chunk_size=200), tmp_path / "r")
    df = stream.read_run(tmp_path / "r")
    assert ((df.hand_flags & FLAG_JOKER_LINK) != 0).equals((df["hand_flags"] & FLAG_JOKER_LINK) != 0)
    # the same chunk with the column under its old name
    import pyarrow.parquet as pq

    path = records.chunk_path(tmp_path / "r", 0)
    table = pq.read_table(path)
    table = table.rename_columns(["flags" if c == "hand_flags" else c for c in table.column_names])
    pq.write_table(table.replace_schema_metadata(pq.read_metadata(path).metadata), path)
    found = manifest.verify(tmp_path / "r")
    assert found.problems == {0: ("foreign", "lacks the column 'hand_flags' of the records contract: written "
                                             "before 'flags' was renamed 'hand_flags'")}, found


def test_record_columns_match_the_engine_record_layout():
    engine = pytest.importorskip("caishen.sim.engine")
    from caishen.sim.rules import base, records as contract

    names = base.get(RULES).field_column_names()  # K-10: the generic joker / chain fields as 财神 / 飘 columns
    assert names == {"chain_joker": "chain_piao", "jokers_held": "caishen", "joker_discards": "piao",
                     "circle_failed": "failed_piao"}
    assert [(n, np.dtype(d)) for n, d in contract.engine_columns(names)] == list(records.record_columns(RULES))
    generic = [n for n, _ in engine.RECORD_COLUMNS]
    assert "jokers_held_0" in generic and "chain_joker" in generic and not any("piao" in n for n in generic)
    assert contract.engine_columns() == contract.engine_columns({}) == engine.RECORD_COLUMNS


@pytest.mark.parametrize("names, match", [
    ({"caishen": "jokers"}, "names 'caishen', which is no field of the engine's record columns"),
    ({"streak": "k"}, "names 'streak', which is no field"),  # an extra column, not a record column
    ({"jokers_held": "0x"}, "gives 'jokers_held' the column stem '0x', which is not an identifier"),
    ({"jokers_held": 3}, "gives 'jokers_held' the column stem 3"),
    ({"jokers_held": "score"}, "names the column 'score_0' twice"),
    ({"chain_joker": "winner"}, "names the column 'winner' twice"),
])
def test_engine_columns_refuse_bad_field_columns_naming_them(names, match):
    from caishen.sim.rules import records as contract

    with pytest.raises(ValueError, match=match):
        contract.engine_columns(names)
    with pytest.raises(ValueError, match=match):
        contract.engine_record_columns(contract.new_records(1), names)


def test_engine_record_columns_are_the_generic_columns_renamed():
    from caishen.sim.rules import records as contract

    rec = contract.new_records(3)
    rec["jokers_held"][:, 1] = [1, 2, 0]
    rec["chain_joker"] = [0, 1, 2]
    rec["score"][:, 1] = [4, -4, 0]
    generic = contract.engine_record_columns(rec)
    named = contract.engine_record_columns(rec, {"jokers_held": "held", "chain_joker": "links"})
    assert list(generic) == [n for n, _ in contract.RECORD_COLUMNS]
    assert named["held_1"].tolist() == generic["jokers_held_1"].tolist() == [1, 2, 0]
    assert named["links"].tolist() == [0, 1, 2] and named["score_1"].tolist() == [4, -4, 0]
    assert "jokers_held_1" not in named and named["held_1"].dtype == np.int8 and len(named) == len(generic)


def test_record_column_reads_a_field_or_one_seat_of_the_engine_records():
    engine = pytest.importorskip("caishen.sim.engine")
    rec = engine.new_records(3)
    rec["score"] = [[1, -1, 0, 0], [2, 0, -2, 0], [0, 0, 5, -5]]
    rec["winner"] = [0, -1, 2]
    assert engine.record_column(rec, "score_2").tolist() == [0, -2, 5]
    assert engine.record_column(rec, "winner").tolist() == [0, -1, 2]
    for name, dt in (*engine.RECORD_COLUMNS, *engine.ENGINE_EXTRA_COLUMNS):
        col = engine.record_column(rec, name)
        assert col.dtype == dt and col.shape == (3,) and col.flags.c_contiguous and col.flags.owndata, name
    with pytest.raises(ValueError, match="'score_4'"):
        engine.record_column(rec, "score_4")


# ---------------------------------------------------------------------------
# summary: every number against a direct pandas computation
# ---------------------------------------------------------------------------
Z = stats.norm.ppf(0.975)


def wilson_reference(k, n):
    """Closed-form Wilson score interval (Wilson 1927)."""
    p = k / n
    centre = (p + Z**2 / (2 * n)) / (1 + Z**2 / n)
    half = Z / (1 + Z**2 / n) * math.sqrt(p * (1 - p) / n + Z**2 / (4 * n**2))
    return centre - half, centre + half


def t_reference(x):
    x = np.asarray(x, float)
    half = stats.t.ppf(0.975, len(x) - 1) * x.std(ddof=1) / math.sqrt(len(x))
    return x.mean() - half, x.mean() + half


@pytest.fixture(scope="module")
def fake_run(tmp_path_factory):
    out = tmp_path_factory.mktemp("summary") / "r"
    run(config(games=6000, chunk_size=2000, seed=3), out)
    return out, stream.read_run(out)


def row(rows, section, metric, group):
    r = rows[(rows.section == section) & (rows.metric == metric) & (rows.group == group)]
    assert len(r) == 1, (section, metric, group)
    return r.iloc[0]


def check_rate(rows, section, metric, group, k, n):
    r = row(rows, section, metric, group)
    assert r.n == n
    assert r.value == pytest.approx(k / n, rel=1e-12)
    lo, hi = wilson_reference(k, n)
    assert (r.ci_low, r.ci_high) == (pytest.approx(lo, rel=1e-9, abs=1e-12), pytest.approx(hi, rel=1e-9))


def check_mean(rows, section, metric, group, x):
    r = row(rows, section, metric, group)
    assert r.n == len(x)
    assert r.value == pytest.approx(np.mean(x), rel=1e-12, abs=1e-12)
    lo, hi = t_reference(x)
    assert (r.ci_low, r.ci_high) == (pytest.approx(lo, rel=1e-9, abs=1e-12), pytest.approx(hi, rel=1e-9, abs=1e-12))


def long_form(df):
    """Seat-hands by pandas (melt), the reference for the summary's seat-hand numbers."""
    parts = []
    for s in range(4):
        parts.append(pd.DataFrame({
            "seat": s,
            "score": df[f"score_{s}"].astype(int),
            "piao": df[f"piao_{s}"].astype(int),
            "failed": df[f"failed_piao_{s}"].astype(int),
            "caishen": df[f"caishen_{s}"].astype(int),
            "won": (df["winners_mask"].to_numpy().astype(int) >> s) & 1 == 1,
            "is_dealer": df["dealer"] == s,
            "success": (df["winner"] == s) & (df["win_type"] == 0) & ((df["hand_flags"] & FLAG_JOKER_LINK) != 0),
        }))
    return pd.concat(parts, ignore_index=True)


def test_summary_outcomes_and_points_match_pandas(fake_run):
    out, df = fake_run
    rows, _ = summary.summarize(df, POLICIES, unit=None)  # rows as independent: the textbook intervals
    H = len(df)
    assert row(rows, "hands", "hands", "all").value == H == 6000
    check_rate(rows, "outcome", "draw rate", "all", (df.win_type == -1).sum(), H)
    for s in range(4):
        check_rate(rows, "outcome", "win rate", f"seat {s} (random)", (df.winner == s).sum(), H)
    check_rate(rows, "outcome", "win rate", "dealer", (df.winner == df.dealer).sum(), H)
    for s in range(4):
        check_rate(rows, "outcome", "dealer share", f"seat {s} (random)", (df.dealer == s).sum(), H)
    check_rate(rows, "outcome", "win rate", "non-dealer", ((df.winner >= 0) & (df.winner != df.dealer)).sum(), 3 * H)
    wins = df[df.win_type >= 0]
    for code, name in [(0, "self_draw"), (1, "discard_win"), (2, "robbed_kong")]:
        check_rate(rows, "win type", "share of wins", name, (wins.win_type == code).sum(), len(wins))
    gain = wins.apply(lambda r: r[f"score_{int(r.winner)}"], axis=1).astype(float)
    check_mean(rows, "points", "winner's gain", "mean", gain)
    for p in summary.PERCENTILES:
        assert row(rows, "points", "winner's gain", f"p{p}").value == pytest.approx(gain.quantile(p / 100))
    assert row(rows, "points", "winner's gain", "max").value == gain.max()
    lf = long_form(df)
    for s in range(4):
        check_mean(rows, "points", "score", f"seat {s} (random)", df[f"score_{s}"])
    check_mean(rows, "points", "score", "dealer", lf.score[lf.is_dealer])
    check_mean(rows, "points", "score", "non-dealer", lf.score[~lf.is_dealer])


def test_summary_piao_rates_and_comparison_match_pandas(fake_run):
    _, df = fake_run
    rows, defs = summary.summarize(df, POLICIES, unit=None)
    lf = long_form(df)
    att = lf[lf.piao >= 1]
    check_rate(rows, "飘财", "attempt rate", "all", len(att), 4 * len(df))
    check_rate(rows, "飘财", "success rate", "all", att.success.sum(), len(att))
    check_rate(rows, "飘财", "failed rate", "all", (att.failed == 1).sum(), len(att))
    check_mean(rows, summary.OBSERVATIONAL, "score per 飘 seat-hand", "all", att.score)
    # without a piao_chance column, comparable play = every seat-hand without a 飘 attempt
    cmp_ = lf[lf.piao == 0]
    assert defs["comparable"] == summary.COMPARABLE_DEFINITIONS["no_attempt"]
    check_mean(rows, summary.OBSERVATIONAL, "score per comparable non-飘 seat-hand", "all", cmp_.score)
    d = row(rows, summary.OBSERVATIONAL, "飘 minus comparable", "all")
    assert d.n == len(att) + len(cmp_)
    assert d.value == pytest.approx(att.score.mean() - cmp_.score.mean())
    # Welch interval by hand: difference +- t(df_welch) * se
    va, vb = att.score.var(ddof=1) / len(att), cmp_.score.var(ddof=1) / len(cmp_)
    dof = (va + vb) ** 2 / (va**2 / (len(att) - 1) + vb**2 / (len(cmp_) - 1))
    half = stats.t.ppf(0.975, dof) * math.sqrt(va + vb)
    assert (d.ci_low, d.ci_high) == (pytest.approx(d.value - half), pytest.approx(d.value + half))
    assert rows[rows.metric == "score per non-飘 seat-hand"].empty  # it would repeat the comparable row
    # the fake's 飘 rates are far from 0 and 1, so these checks have teeth
    assert 0.1 < len(att) / len(lf) < 0.9 and att.success.sum() > 20 and (att.failed == 1).sum() > 20


def test_summary_groups_piao_rows_by_policy_when_seats_differ(fake_run):
    _, df = fake_run
    pol = ("always", "never", "always", "never")
    rows, _ = summary.summarize(df, pol, unit=None)
    lf = long_form(df)
    for p, seats in (("always", [0, 2]), ("never", [1, 3])):
        g = lf[lf.seat.isin(seats)]
        att = g[g.piao >= 1]
        check_rate(rows, "飘财", "attempt rate", f"policy {p}", len(att), len(g))
        check_rate(rows, "飘财", "success rate", f"policy {p}", att.success.sum(), len(att))
        check_mean(rows, summary.OBSERVATIONAL, "score per 飘 seat-hand", f"policy {p}", att.score)
        check_mean(rows, "飘财", "score per seat-hand", f"policy {p}", g.score)
    assert row(rows, "outcome", "win rate", "seat 1 (never)").n == len(df)
    assert rows[(rows.metric == "score per seat-hand") & (rows.group == "all")].empty


def test_summary_uses_the_piao_chance_column_for_comparable_play_when_present(fake_run):
    _, df = fake_run
    df = df.copy()
    rng = np.random.default_rng(0)
    for s in range(4):
        df[f"piao_chance_{s}"] = rng.integers(0, 3, len(df)).astype(np.int16)
    rows, defs = summary.summarize(df, POLICIES, unit=None)
    assert defs["comparable"] == summary.COMPARABLE_DEFINITIONS["chance"]
    lf = long_form(df)
    lf["chance"] = np.concatenate([df[f"piao_chance_{s}"].to_numpy() for s in range(4)])
    check_mean(rows, summary.OBSERVATIONAL, "score per comparable non-飘 seat-hand", "all", lf.score[(lf.chance >= 1) & (lf.piao == 0)])
    check_mean(rows, summary.OBSERVATIONAL, "score per non-飘 seat-hand", "all", lf.score[lf.piao == 0])


def test_summary_files_and_report_agree_with_summarize(fake_run):
    out, df = fake_run
    rows, defs, meta, done = summary.summarize_run(out)
    assert done == 3 and meta["games"] == 6000
    summary.save_summary(out, rows, defs, meta)
    csv = pd.read_csv(out / "summary.csv")
    pd.testing.assert_frame_equal(csv, rows, check_dtype=False)
    doc = json.loads((out / "summary.json").read_text())
    assert doc["run"]["seed"] == 3 and doc["definitions"]["comparable"] == defs["comparable"]
    assert len(doc["rows"]) == len(rows)
    text = summary.format_summary(rows, "head")
    n_sections = rows["section"].nunique()  # each section's name on a line of its own (issue 45: <= 100 columns)
    assert text.splitlines()[0] == "head" and len(text.splitlines()) == len(rows) + 2 + n_sections


def test_summary_rejects_records_without_the_needed_columns():
    with pytest.raises(ValueError, match="score_3"):
        summary.summarize(pd.DataFrame({"dealer": [0], "winner": [0], "winners_mask": [1], "win_type": [0],
                                        "score_0": [1], "score_1": [0], "score_2": [-1]}))
    with pytest.raises(ValueError, match="no finished chunk"):
        stream.read_run("/nonexistent/run")


@pytest.mark.parametrize("policies", ["always", "never", "threshold:30", "greedy,random,always,greedy",
                                      ("greedy", "greedy", "greedy", "threshold:0")])
def test_make_config_rejects_a_piao_policy_on_a_rule_set_without_caishen(policies):
    # issue 9: `--rules jiating --policy always` was accepted and silently played greedy
    with pytest.raises(ValueError, match=r"policy '(always|never|threshold:\d+)' \(seat \d\).*'jiating' has no 财神"):
        runner.make_config("jiating", 10, 0, policies=policies)


@pytest.mark.parametrize("policies", ["greedy", "random", "greedy,random,greedy,random"])
def test_make_config_accepts_plain_policies_on_jiating(policies):
    assert runner.make_config("jiating", 10, 0, policies=policies).rules == "jiating"


@pytest.mark.parametrize("policies", ["always", "never", "threshold:30", "greedy,random,always,never"])
def test_make_config_accepts_piao_policies_on_kaihua(policies):
    assert runner.make_config("kaihua", 10, 0, policies=policies).rules == "kaihua"
