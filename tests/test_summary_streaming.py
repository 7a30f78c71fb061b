"""The streaming summary (issue 15 item 1) gives the numbers of the in-memory pandas path.

The reference is ``tests/summary_reference.py``: the summary as it was
computed before streaming, from whole numpy arrays with scipy.  The
streaming path reduces record batches to value counts
(:class:`caishen.sim.analysis.summary.SummaryTally`) and reads the Parquet chunks batch by
batch (:func:`caishen.sim.analysis.summary.summarize_run`, :mod:`caishen.sim.selfplay.stream`).  Compared on
real engine runs of both rule sets (mixed policies), on random record
frames (hypothesis) cut into random batches, and statistic by statistic.
"""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import summary_reference as ref
from caishen.sim.selfplay import runner, stream
from caishen.sim.analysis import summary


def assert_same_rows(got: pd.DataFrame, want: pd.DataFrame) -> None:
    """Same rows in the same order: labels and n exactly, numbers to 1e-9 (NaN where NaN)."""
    assert list(got.columns) == list(want.columns)
    assert len(got) == len(want), (len(got), len(want))
    for c in ("section", "metric", "group", "n"):
        assert list(got[c]) == list(want[c]), c
    for c in ("value", "ci_low", "ci_high"):
        a, b = got[c].to_numpy(float), want[c].to_numpy(float)
        assert np.array_equal(np.isnan(a), np.isnan(b)), (c, got[np.isnan(a) != np.isnan(b)])
        ok = ~np.isnan(a)
        np.testing.assert_allclose(a[ok], b[ok], rtol=1e-9, atol=1e-12, err_msg=c)


def row_of(rows, section, metric, group):
    r = rows[(rows.section == section) & (rows.metric == metric) & (rows.group == group)]
    assert len(r) == 1, (section, metric, group)
    return r.iloc[0]


# ---------------------------------------------------------------------------
# real runs of the engine
# ---------------------------------------------------------------------------
@pytest.fixture(scope="module")
def kaihua_run(tmp_path_factory, engine_warm):
    out = tmp_path_factory.mktemp("stream") / "kaihua"
    cfg = runner.make_config("kaihua", 3000, 4, policies="greedy,random,always,never", chunk_size=700)
    runner.run(cfg, out, workers=1, progress=False)
    return out, cfg


@pytest.fixture(scope="module")
def jiating_run(tmp_path_factory, engine_warm):
    out = tmp_path_factory.mktemp("stream") / "jiating"
    cfg = runner.make_config("jiating", 600, 8, policies="greedy,random,greedy,greedy", chunk_size=250)
    runner.run(cfg, out, workers=1, progress=False)
    return out, cfg


@pytest.mark.parametrize("which", ["kaihua_run", "jiating_run"])
def test_streaming_summary_of_a_real_run_equals_the_pandas_path(which, request):
    out, cfg = request.getfixturevalue(which)
    df = stream.read_run(out)
    want, want_defs = ref.summarize(df, cfg.policies)
    # batches of 333 rows: they cut across the chunk files (700 / 250 rows) and across matches (16 hands)
    rows, defs, meta, done = summary.summarize_run(out, batch_size=333)
    assert done == cfg.n_chunks and meta["games"] == cfg.games
    assert defs == want_defs
    assert_same_rows(rows, want)
    assert_same_rows(summary.summarize(df, cfg.policies)[0], want)
    # the chunk sizes are no multiple of the 16-hand match: each chunk starts a match of its own, so the
    # clusters are the match_hand-0 rows, not hand_id // 16
    g = row_of(rows, "hands", "independent units", "matches").value
    assert g == (df["match_hand"] == 0).sum() == sum(-(-cfg.chunk_len(i) // 16) for i in range(cfg.n_chunks))
    assert g != -(-cfg.games // 16)
    for unit in ("hand", None):
        assert_same_rows(summary.summarize_run(out, batch_size=333, unit=unit)[0], ref.summarize(df, cfg.policies,
                                                                                                 unit)[0])
    if cfg.rules == "kaihua":  # the 飘 rows by policy, with the piao_chance_s definition
        assert "policy always" in set(rows.group) and defs["comparable"] == summary.COMPARABLE_DEFINITIONS["chance"]
    else:  # Jiating's rows are there
        assert {"架听 points", "patterns", "declarations"} <= set(rows.section)


def test_record_batches_read_every_row_once_in_chunk_order(kaihua_run):
    out, cfg = kaihua_run
    files, check = stream.verified_chunk_files(out)
    assert check.complete and len(files) == cfg.n_chunks
    ids = np.concatenate([b.column("hand_id").to_numpy() for b in stream.record_batches(files, ["hand_id"], 500)])
    assert list(ids) == list(range(cfg.games))
    assert all(b.num_rows <= 500 for b in stream.record_batches(files, ["hand_id"], 500))


# ---------------------------------------------------------------------------
# random records, random batches
# ---------------------------------------------------------------------------
@st.composite
def record_frames(draw):
    """Records with the summary's columns (not games of mahjong): Kaihua-like, optionally with
    piao_chance, or Jiating-like; small value ranges so that ties, constant groups and empty
    groups occur."""
    n = draw(st.integers(1, 60))
    kind = draw(st.sampled_from(["kaihua", "kaihua_chance", "jiating", "common"]))
    seed = draw(st.integers(0, 2**32 - 1))
    rng = np.random.default_rng(seed)
    spread = draw(st.sampled_from([0, 1, 8, 2000, 2**30]))
    win_type = rng.integers(-1, 3, n).astype(np.int8)
    won = win_type >= 0
    winner = np.where(won, rng.integers(0, 4, n), -1).astype(np.int8)
    mask = np.where(won, rng.integers(0, 16, n) | (1 << np.maximum(winner, 0)), 0).astype(np.uint8)
    df = {"dealer": rng.integers(0, 4, n).astype(np.int8), "winner": winner, "winners_mask": mask,
          "win_type": win_type}
    for s in range(4):
        df[f"score_{s}"] = rng.integers(-spread, spread + 1, n).astype(np.int32)
    if kind.startswith("kaihua"):
        df["hand_flags"] = rng.integers(0, 1 << 12, n).astype(np.int32)
        for s in range(4):
            df[f"piao_{s}"] = rng.integers(0, 3, n).astype(np.int16)
            df[f"failed_piao_{s}"] = rng.integers(0, 2, n).astype(np.int8)
            if kind == "kaihua_chance":
                df[f"piao_chance_{s}"] = rng.integers(0, 2, n).astype(np.int8)
    if kind == "jiating":
        df["streak"] = rng.integers(0, 4, n).astype(np.int16)
        for s in range(4):
            df[f"P_{s}"] = rng.integers(0, 30, n).astype(np.int32)
            df[f"G_{s}"] = rng.integers(0, 5, n).astype(np.int32)
            df[f"decl_{s}"] = rng.integers(0, 3, n).astype(np.int8)
            df[f"hard_offer_{s}"] = np.where(df[f"decl_{s}"] == 2, 1, rng.integers(0, 2, n)).astype(np.int8)
            df[f"passed_win_{s}"] = rng.integers(0, 2, n).astype(np.int16)
        for pid in ("P01", "P07", "P50"):
            df[pid] = (rng.integers(0, 3, n) * (rng.random(n) < 0.3)).astype(np.int16)
    # the clusters: matches of random lengths (match_hand 0 starts one), maybe over chunks, or
    # duplicate deals (a wall in consecutive rows, one per seating)
    layout = draw(st.sampled_from(["matches", "chunks", "walls"]))
    if layout == "walls":
        seatings = draw(st.integers(1, 4))
        df["chunk"] = (np.arange(n) // draw(st.integers(1, 24))).astype(np.int32)
        df["wall"] = (np.arange(n) // seatings).astype(np.int64) % 5  # wall ids repeat across chunks
        df["seating"] = (np.arange(n) % seatings).astype(np.int8)
        df["match_hand"] = np.zeros(n, np.int32)
    else:
        starts = rng.random(n) < draw(st.sampled_from([0.05, 0.3, 1.0]))
        starts[0] = draw(st.booleans())  # a slice of a run may begin inside a match
        mh = np.zeros(n, np.int32)
        for i in range(1, n):
            mh[i] = 0 if starts[i] else mh[i - 1] + 1
        mh[0] = 0 if starts[0] else 3
        df["match_hand"] = mh
        if layout == "chunks":  # a new chunk starts a new match even where match_hand goes on
            df["chunk"] = np.sort(rng.integers(0, 3, n)).astype(np.int32)
    policies = draw(st.sampled_from([("random",) * 4, ("greedy", "random", "greedy", "always")]))
    cuts = sorted(draw(st.lists(st.integers(0, n), max_size=4)))
    unit = draw(st.sampled_from(["match", "match", "hand", None]))
    return pd.DataFrame(df), policies, cuts, unit


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(record_frames())
def test_tally_over_random_batches_equals_the_in_memory_cluster_intervals(case):
    """Issue 14 item 6: the streamed intervals (exact cluster sums, a match cut by a batch carried on)
    equal caishen.sim.analysis.intervals.cluster_*_ci of the expanded rows, whatever the batches."""
    df, policies, cuts, unit = case
    want, want_defs = ref.summarize(df, policies, unit)
    tally = summary.SummaryTally(df.columns, policies, unit)
    for a, b in zip([0, *cuts], [*cuts, len(df)]):
        tally.update(df.iloc[a:b].reset_index(drop=True))
    rows, defs = tally.summary(policies)
    assert defs == want_defs
    assert_same_rows(rows, want)
    assert_same_rows(summary.summarize(df, policies, unit)[0], want)


def test_tallies_merge_and_their_size_does_not_grow_with_the_hands():
    rng = np.random.default_rng(3)
    n = 5000
    df = pd.DataFrame({
        "dealer": rng.integers(0, 4, n).astype(np.int8), "winner": rng.integers(0, 4, n).astype(np.int8),
        "winners_mask": rng.integers(1, 16, n).astype(np.uint8), "win_type": rng.integers(-1, 3, n).astype(np.int8),
        **{f"score_{s}": rng.integers(-50, 51, n).astype(np.int32) for s in range(4)},
        "match_hand": (np.arange(n) % 16).astype(np.int32),
    })

    def size(t):
        return (len(t.seat.compact()[0]), len(t.hands.compact()[0]), len(t.gain.compact()[0]), len(t.mom),
                len(t.cross), len(t._open))

    one = summary.SummaryTally(df.columns).update(df)
    many = summary.SummaryTally(df.columns)
    for _ in range(200):  # 1,000,000 hands, 62,600 matches
        many.update(df)
    assert size(many) == size(one)
    assert many.n_hands == 200 * n and many.n_clusters + 1 == 200 * 313
    halves = summary.SummaryTally(df.columns).update(df.iloc[:1232]).merge(
        summary.SummaryTally(df.columns).update(df.iloc[1232:].reset_index(drop=True)))
    assert_same_rows(halves.summary()[0], one.summary()[0])
    with pytest.raises(ValueError, match="inside a match"):  # 1234 cuts a match: merging would split it
        summary.SummaryTally(df.columns).update(df.iloc[:1234]).merge(
            summary.SummaryTally(df.columns).update(df.iloc[1234:].reset_index(drop=True)))
    # 200 copies of the same hands: the same rates and means (percentiles interpolate differently), tighter intervals
    a, b = one.summary()[0], many.summary()[0]
    same = ~a.group.str.match(r"p\d+$") & ~a.metric.isin(["hands", "independent units"])
    np.testing.assert_allclose(a.value[same], b.value[same], rtol=1e-12)
    assert ((b.ci_high - b.ci_low) <= (a.ci_high - a.ci_low) + 1e-12).where(a.ci_low.notna(), True).all()


def test_summary_unit_is_checked_and_documented():
    """The intervals' unit is one of summary.UNITS, else a ValueError naming it; 'match' needs match_hand;
    the definitions and the docstring say which unit and method."""
    cols = ["dealer", "winner", "winners_mask", "win_type", "score_0", "score_1", "score_2", "score_3"]
    with pytest.raises(ValueError, match="unit 'wall'"):
        summary.SummaryTally([*cols, "match_hand"], unit="wall")
    with pytest.raises(ValueError, match="match_hand"):
        summary.SummaryTally(cols)  # unit="match" by default
    summary.SummaryTally(cols, unit="hand")
    with pytest.raises(ValueError, match="policies"):
        summary.SummaryTally([*cols, "match_hand"], ("a", "b", "a", "b")).summary(("a", "a", "a", "b"))
    assert "cluster-robust" in summary.INTERVALS_TEXT["match"] and "matches" in summary.INTERVALS_TEXT["match"]
    assert "cluster-robust" in summary.__doc__ and "treat them as independent" not in summary.__doc__


# ---------------------------------------------------------------------------
# the statistics from value counts
# ---------------------------------------------------------------------------
value_counts = st.lists(st.tuples(st.integers(-(2**31), 2**31 - 1), st.integers(0, 6)), min_size=1, max_size=12)


def expand(vc):
    return np.repeat(np.array([v for v, _ in vc], np.int64), [c for _, c in vc])


def split(vc):
    return np.array([v for v, _ in vc], np.int64), np.array([c for _, c in vc], np.int64)


def close(a, b):
    a, b = np.asarray(a, float), np.asarray(b, float)
    assert np.array_equal(np.isnan(a), np.isnan(b)), (a, b)
    np.testing.assert_allclose(a[~np.isnan(a)], b[~np.isnan(b)], rtol=1e-9, atol=1e-9)


@settings(max_examples=200, deadline=None)
@given(value_counts)
def test_mean_ci_counts_equals_mean_ci_of_the_expanded_data(vc):
    close(summary.mean_ci_counts(*split(vc)), summary.mean_ci(expand(vc)))


@settings(max_examples=200, deadline=None)
@given(value_counts, value_counts)
def test_diff_ci_counts_equals_welch_of_the_expanded_data(a, b):
    close(summary.diff_ci_counts(*split(a), *split(b)), summary.diff_ci(expand(a), expand(b)))


@settings(max_examples=200, deadline=None)
@given(value_counts.filter(lambda vc: sum(c for _, c in vc) > 0))
def test_percentile_counts_equals_numpy_percentile(vc):
    q = (0, 1, 5, 25, 50, 75, 95, 99, 100)
    close(summary.percentile_counts(*split(vc), q), np.percentile(expand(vc), q))


def test_summarize_still_names_missing_columns_and_empty_records():
    with pytest.raises(ValueError, match="score_3"):
        summary.SummaryTally(["dealer", "winner", "winners_mask", "win_type", "score_0", "score_1", "score_2"])
    empty = pd.DataFrame({c: np.zeros(0, np.int8) for c in
                          ["dealer", "winner", "winners_mask", "win_type", "score_0", "score_1", "score_2", "score_3"]})
    with pytest.raises(ValueError, match="no hands to summarize"):
        summary.summarize(empty)
