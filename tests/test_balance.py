"""Scoring balance tables (caishen.sim.analysis.balance) against plain pandas computations of the same definitions."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from caishen.sim.analysis import balance
from caishen.sim.rules.kaihua import analysis as KA
from caishen.sim.rules.jiating import analysis as JA
from caishen.sim.rules import kaihua as K
from caishen.sim.selfplay.batch import play_batch


@pytest.fixture(scope="module")
def kaihua_df(engine_warm_module):
    df = pd.DataFrame(play_batch(3000, 12, policies="always,greedy,never,greedy"))
    df["hand_id"] = np.arange(len(df))
    return df


@pytest.fixture(scope="module")
def jiating_df(engine_warm_module):
    df = pd.DataFrame(play_batch(1500, 13, rules="jiating", policies="greedy"))
    df["hand_id"] = np.arange(len(df))
    return df


@pytest.fixture(scope="module")
def engine_warm_module():
    play_batch(2, 0)


def _get(t, section, metric, group):
    r = t[(t["section"] == section) & (t["metric"] == metric) & (t["group"] == group)]
    assert len(r) == 1, (section, metric, group)
    return r.iloc[0]


def test_K_6_hand_types_match_pandas(kaihua_df):
    df = kaihua_df
    t = KA.hand_types(df)
    won = df[df["win_type"] >= 0]
    pts = won[[f"score_{s}" for s in range(4)]].clip(lower=0).sum(axis=1)
    for name, bit in (("爆头 baotou (K-6.2)", K.FLAG_BAOTOU), ("平胡 pinghu (K-6.1)", K.FLAG_PINGHU),
                      ("七对 family qidui (K-6.3)", K.FLAG_QIDUI)):
        hit = (won["hand_flags"] & bit) != 0
        assert _get(t, "hand type", "frequency", name)["value"] == pytest.approx(hit.mean())
        assert _get(t, "hand type", "share of points", name)["value"] == pytest.approx(pts[hit].sum() / pts.sum())
        if hit.any():
            assert _get(t, "hand type", "points when it fires", name)["value"] == pytest.approx(pts[hit].mean())
    e = t[(t["section"] == "exponent") & (t["metric"] == "share of points")]
    assert e["value"].sum() == pytest.approx(1.0)  # every won hand has exactly one exponent
    f = t[(t["section"] == "exponent") & (t["metric"] == "frequency")]
    assert f["value"].sum() == pytest.approx(1.0)
    ok = t.dropna(subset=["ci_low"])
    assert ((ok["ci_low"] <= ok["value"] + 1e-12) & (ok["value"] <= ok["ci_high"] + 1e-12)).all()


def test_K_8_dealer_edge_and_three_shares_match_pandas(kaihua_df):
    df = kaihua_df
    t = KA.balance(df)
    sc = np.stack([df[f"score_{s}"] for s in range(4)], axis=1)
    d = df["dealer"].to_numpy()
    is_d = np.arange(4)[None, :] == d[:, None]
    edge = _get(t, "dealer", "dealer edge (dealer minus non-dealer)", "all")
    assert edge["value"] == pytest.approx(sc[is_d].mean() - sc[~is_d].mean())
    assert edge["ci_low"] < edge["value"] < edge["ci_high"]
    won = df["win_type"] >= 0
    disc = df["win_type"].isin([1, 2])
    pts = np.clip(sc, 0, None).sum(axis=1)
    assert _get(t, "three shares (K-8.3)", "discard or robbed-kong wins", "share of wins")["value"] == \
        pytest.approx(disc[won].mean())
    assert _get(t, "three shares (K-8.3)", "points paid by a discarder", "share of points")["value"] == \
        pytest.approx(pts[disc].sum() / pts[won].sum())
    piao = np.stack([df[f"piao_{s}"] > 0 for s in range(4)])
    assert _get(t, "飘财 (K-9)", "attempt rate", "seat-hands")["value"] == pytest.approx(piao.mean())


def test_K_9_3_payment_only_options_leave_play_unchanged_on_the_same_walls(engine_warm_module):
    t = balance.compare_options({"default": {}, "factor 1": {"failed_piao_factor": 1}}, 800, 5,
                                policies="always,greedy,always,greedy", tables=(KA.balance,))
    a = t[t["option"] == "default"].set_index(["section", "metric", "group"])
    b = t[t["option"] == "factor 1"].set_index(["section", "metric", "group"])
    for k in (("outcome", "draw rate (流局)", "all"), ("飘财 (K-9)", "attempt rate", "seat-hands"),
              ("dealer", "win rate", "dealer")):
        assert a.loc[k, "value"] == b.loc[k, "value"]  # the bots never look at the payments
    with pytest.raises(ValueError, match="no option settings"):
        balance.compare_options({}, 10)


def _patterns_of(df, s):
    out = []
    for text in df[f"patterns_{s}"]:
        out.append(dict((p.split(":")[0], int(p.split(":")[1])) for p in text.split(",")) if text else {})
    return out


def test_J_8_pattern_table_matches_pandas(jiating_df):
    df = jiating_df
    t = JA.patterns(df).set_index("pattern")
    mask = df["winners_mask"].to_numpy()
    wins = []
    for s in range(4):
        won = (mask >> s) & 1 == 1
        for pats, got, p, g in zip(_patterns_of(df[won], s), df[f"score_{s}"][won], df[f"P_{s}"][won],
                                   df[f"G_{s}"][won]):
            wins.append((pats, got, p + g))
    assert t.loc["P01", "frequency"] == pytest.approx(1.0)  # every win (J-8 P01)
    assert t.loc["P01", "points"] == pytest.approx(2.0)
    for pid in ("P03", "P07", "P25", "P30"):
        fires = [w for w in wins if pid in w[0]]
        assert t.loc[pid, "fires"] == len(fires)
        assert t.loc[pid, "frequency"] == pytest.approx(len(fires) / len(wins))
        if fires:
            assert t.loc[pid, "points"] == pytest.approx(np.mean([w[0][pid] for w in fires]))
    share = t["share"].fillna(0).sum()
    assert share == pytest.approx(1.0)  # the points received, attributed pro rata to patterns and G
    ref = sum(w[1] * w[0].get("P25", 0) / w[2] for w in wins) / sum(w[1] for w in wins)
    assert t.loc["P25", "share"] == pytest.approx(ref)


def test_J_6_2_caps_binding_matches_a_direct_count(engine_warm_module):
    opts = {"cap": 20, "dealer_cap": 40}
    df = pd.DataFrame(play_batch(800, 3, rules="jiating", options=opts))
    df["hand_id"] = np.arange(len(df))
    t = JA.balance(df, opts)
    n = capped = 0
    for _, r in df.iterrows():
        for w in range(4):
            if not (int(r["winners_mask"]) >> w) & 1:
                continue
            pg = r[f"P_{w}"] + r[f"G_{w}"]
            for p in range(4):
                if p == w or r[f"pay_{p}_{w}"] <= 0:
                    continue
                dealer = r["dealer"] in (p, w)
                n += 1
                capped += (2 * pg > 40) if dealer else (pg > 20)
    row = _get(t, "caps (J-6.2)", "capped payments", "share of payments")
    assert row["n"] == n and row["value"] == pytest.approx(capped / n)
    assert capped > 0
    default = JA.balance(df)  # the spec's caps (200 / 400) bind less often than 20 / 40
    assert _get(default, "caps (J-6.2)", "capped payments", "share of payments")["value"] < row["value"]


def test_J_2_4_streak_rows(jiating_df):
    t = JA.balance(jiating_df)
    k = jiating_df["streak"].to_numpy()
    assert _get(t, "streak (J-2.4)", "streak k", "all hands")["value"] == pytest.approx(k.mean())
    assert _get(t, "streak (J-2.4)", "hands", "k = 0")["value"] == pytest.approx((k == 0).mean())
    assert (k > 0).any()


def test_J_4_declaration_value_rows(engine_warm_module):
    t = JA.declaration_value(hands=120, rollouts=1, hard_hands=500)
    assert list(t["decision"]) == ["jiating", "hard"]
    j = t.iloc[0]
    assert j["points"] > 0 and np.isfinite(j["diff"])


def test_balance_bad_input():
    empty = pd.DataFrame({c: pd.Series(dtype=int) for c in ["dealer", "winner", "winners_mask", "win_type", "score_0",
                                                            "score_1", "score_2", "score_3"]})
    with pytest.raises(ValueError, match="no hands"):
        KA.balance(empty)


# ---------------------------------------------------------------------------
# the tables streamed over a run's chunks (issue 15 item 1): the same numbers as in memory
# ---------------------------------------------------------------------------
_TABLES = {"kaihua": (("hand_types", KA.hand_types), ("balance", KA.balance)),
           "jiating": (("patterns", JA.patterns), ("balance", JA.balance))}


@pytest.fixture(scope="module")
def runs(engine_warm, tmp_path_factory):
    """Runs of 640 hands of each rule set in chunks of one 16-hand match and of ten matches."""
    from caishen.sim.selfplay import runner

    out = {}
    for rules in ("kaihua", "jiating"):
        for chunk in (16, 160):
            d = tmp_path_factory.mktemp(f"{rules}-{chunk}")
            pol = "always,greedy,never,greedy" if rules == "kaihua" else "greedy"
            runner.run(runner.make_config(rules, 640, 7, policies=pol, chunk_size=chunk), d, workers=1,
                       progress=False)
            out[rules, chunk] = d
    return out


def _in_memory(run_dir, rules):
    from caishen.sim.selfplay import rundir, stream

    df = stream.read_run(run_dir)
    opts = rundir.read_run_json(run_dir).get("options")
    return {name: (f(df, opts) if f is JA.balance else f(df)) for name, f in _TABLES[rules]}


@pytest.mark.parametrize("rules", ["kaihua", "jiating"])
@pytest.mark.parametrize("chunk", [16, 160])
def test_streamed_run_tables_equal_the_in_memory_tables(runs, rules, chunk):
    """K-6, K-8.3, J-8, J-6.2: run_tables over the chunks (one batch per chunk, and batches of 5 rows that cut
    matches, carried on) equals the in-memory functions on the concatenated rows."""
    want = _in_memory(runs[rules, chunk], rules)
    for batch_size in (None, 5):
        got = balance.run_tables(runs[rules, chunk], batch_size=batch_size)
        assert set(got) == set(want)
        for name in want:
            pd.testing.assert_frame_equal(got[name], want[name], rtol=1e-9)


def test_tallies_of_chunks_merge_in_any_order(runs):
    """The tallies of single chunks (whole matches), merged in reverse order, give the table of all rows."""
    from caishen.sim.selfplay import stream

    run_dir = runs["kaihua", 16]
    files, _ = stream.verified_chunk_files(run_dir)
    cols = stream.column_names(files)
    want = _in_memory(run_dir, "kaihua")
    for name, cls in (("hand_types", KA.HandTypes), ("balance", KA.Balance)):
        parts = [cls(cols).add(df) for df in balance.match_batches(files, cls(cols).columns())]
        assert len(parts) == 40
        total = cls(cols)
        for p in parts[::-1]:
            total.merge(p)
        pd.testing.assert_frame_equal(total.frame(), want[name], rtol=1e-9)
    assert stream.read_run(run_dir)["hand_id"].is_unique


def _synthetic_kaihua(exponents, match_len=2):
    """Won Kaihua hands with the given exponents (self-draws paying 2**E by each loser), matches of ``match_len``."""
    e = np.asarray(exponents, np.int64)
    n = len(e)
    pay = 2 ** e
    df = pd.DataFrame({"hand_id": np.arange(n), "match_hand": np.arange(n) % match_len, "win_type": np.zeros(n, int),
                       "score_0": 3 * pay, "score_1": -pay, "score_2": -pay, "score_3": -pay, "hand_flags": np.zeros(n, int),
                       "chain_len": np.zeros(n, int), "chain_kong": np.zeros(n, int), "chain_piao": np.zeros(n, int),
                       "exponent": e})
    return df


def test_K_6_exponent_rows_when_an_exponent_appears_or_vanishes_between_batches():
    """An exponent first seen in a later batch, or missing from a batch, still counts every won hand."""
    df = _synthetic_kaihua([0, 0, 1, 0, 0, 0, 3, 3, 0, 1, 0, 0])
    want = KA.hand_types(df)
    assert list(want[want["section"] == "exponent"]["group"].unique()) == ["E = 0", "E = 1", "E = 2", "E = 3"]
    t = KA.HandTypes(df.columns)
    for lo in range(0, len(df), 4):
        t.add(df.iloc[lo:lo + 4])
    pd.testing.assert_frame_equal(t.frame(), want, rtol=1e-9)
    parts = [KA.HandTypes(df.columns).add(df.iloc[lo:lo + 2]) for lo in range(0, len(df), 2)]
    merged = parts[3]
    for i in (5, 0, 4, 1, 2):
        merged.merge(parts[i])
    pd.testing.assert_frame_equal(merged.frame(), want, rtol=1e-9)
    freq = want[(want["metric"] == "frequency") & (want["group"] == "E = 2")].iloc[0]
    assert freq["n"] == 12 and freq["value"] == 0.0


def test_match_batches_keep_matches_whole(tmp_path):
    import pyarrow as pa
    import pyarrow.parquet as pq

    mh = np.array([0, 1, 2, 0, 1, 0, 0, 1, 2, 3])
    f = tmp_path / "c.parquet"
    pq.write_table(pa.table({"match_hand": mh, "x": np.arange(10)}), f)
    got = [b["x"].tolist() for b in balance.match_batches([f, f], ["match_hand", "x"], batch_size=2)]
    assert [x for b in got for x in b] == list(range(10)) * 2
    for b in got:
        assert mh[b[0]] == 0  # every batch starts a match
    assert [len(b) for b in got][:3] == [3, 2, 1]


def test_cluster_totals_are_int64_for_small_integer_columns():
    """Per-match totals of an int8 column (segment sums of consecutive matches, and bincount otherwise) do not
    overflow: they add in int64."""
    df = pd.DataFrame({"hand_id": np.arange(64), "match_hand": np.arange(64) % 16})
    b = balance._Batch(df)
    assert b.starts is not None and b.g == 4
    x = np.full(64, 100, np.int8)
    assert b.total(x).tolist() == [1600] * 4
    assert b.total(np.tile(x, 4), inv=b.inv4).tolist() == [6400] * 4
    shuffled = balance._Batch(df.iloc[np.r_[0:8, 32:40, 8:32, 40:64]])  # matches not in consecutive rows
    assert shuffled.starts is None and shuffled.total(x).tolist() == [1600] * 4


# --------------------------------------------------------------- sessions and the balance report (issue 47 item 2)
def ref_placement(totals):
    """Places by total, ties shared, slowly: a seat tied with e others gets 1/(e+1) of each place they span."""
    out = np.zeros((4, 4))
    for i in range(4):
        above = sum(1 for j in range(4) if totals[j] > totals[i])
        tied = sum(1 for j in range(4) if totals[j] == totals[i])
        for p in range(above, above + tied):
            out[i, p] = 1 / tied
    return out


def test_placements_share_ties_as_the_reference():
    from caishen.sim.analysis.sessions import placements

    rng = np.random.default_rng(4)
    t = rng.integers(-3, 4, (500, 4))  # many ties
    got = placements(t)
    for g in range(len(t)):
        np.testing.assert_allclose(got[g], ref_placement(t[g].tolist()))
    assert np.allclose(got.sum(axis=2), 1) and np.allclose(got.sum(axis=1), 1)


def test_sessions_by_starting_seat_match_pandas(kaihua_df):
    from caishen.sim.analysis.sessions import STARTING_SEATS, Sessions, placements

    ses = Sessions(kaihua_df.columns, 16)
    half = len(kaihua_df) // 32 * 16  # two batches of whole matches
    ses.add(kaihua_df.iloc[:half]).add(kaihua_df.iloc[half:].reset_index(drop=True))
    df = kaihua_df
    mid = df["hand_id"] - df["match_hand"]
    first = df[df["match_hand"] == 0].set_index(mid[df["match_hand"] == 0])["dealer"]
    tot = df.groupby(mid)[[f"score_{s}" for s in range(4)]].sum()
    n = df.groupby(mid).size()
    tot, first = tot[n == 16], first[n[n == 16].index]
    by_start = np.stack([tot.to_numpy()[np.arange(len(tot)), (first.to_numpy() + k) % 4] for k in range(4)], axis=1)
    np.testing.assert_array_equal(ses.totals_by_start(), by_start)
    pl = ses.placement().set_index(["starting_seat", "metric"])
    cred = placements(by_start)
    for k in range(4):
        assert pl.loc[(STARTING_SEATS[k], "place 1"), "value"] == pytest.approx(cred[:, k, 0].mean())
        assert pl.loc[(STARTING_SEATS[k], "mean placement"), "value"] == pytest.approx(
            (cred[:, k, :] @ np.arange(1, 5)).mean())
    means = pl.xs("mean placement", level="metric")["value"]
    assert means.mean() == pytest.approx(2.5)
    tt = ses.totals().set_index("starting_seat")
    assert tt.loc["east (first dealer)", "q50"] == pytest.approx(np.quantile(by_start[:, 0], 0.5))
    assert tt.loc["every seat", "mean"] == pytest.approx(0.0, abs=1e-9)  # zero-sum sessions


def test_option_values_are_the_declared_options():
    from caishen.sim.analysis.balance_report import option_values

    v = option_values("kaihua")
    assert v["discard_win"] == [True, False] and v["failed_piao_factor"] == [2, 1, 3]
    assert v["discard_win_payment"][0] == "all_three" and "max_exponent" not in v  # default None: not varied
    assert v["reserved_tiles"] == [20, 10, 30]
    j = option_values("jiating")
    assert j["cap"] == [200, 100, 300] and "pattern_points" not in j


def test_caishen_balance_writes_one_report_and_resumes(engine_warm, tmp_path, capsys):
    from caishen.cli import main

    out = tmp_path / "b"
    argv = ["balance", "--rules", "kaihua", "--hands", "480", "--bots", "greedy,never", "--option-walls", "24",
            "--workers", "1", "--out", str(out), "--no-progress"]
    assert main(argv) == 0
    text = capsys.readouterr().out
    assert "dealer edge, greedy at every seat" in text and "balance.md" in text
    md = (out / "balance.md").read_text()
    for part in ("Command: `caishen balance --rules kaihua --hands 480", "Seed 0", "Readings", "## Answers",
                 "Seat fairness over 16-hand sessions", "east", "Hand types: value against frequency",
                 "options that move it most", "`failed_piao_factor=2`"):
        assert part.lower() in md.lower(), part
    assert (out / "report.html").stat().st_size > 10_000
    for f in ("fig-placement.png", "fig-totals.png", "fig-value-frequency.png", "fig-options.png",
              "fig-dealer-edge.png", "balance_options.csv", "balance_placement.csv"):
        assert (out / f).stat().st_size > 0, f
    opts = pd.read_csv(out / "balance_options.csv")
    from caishen.sim.analysis.balance_report import option_values

    assert set(opts["option"]) <= set(option_values("kaihua"))
    assert (opts["walls"] == 24).all()
    # discard_win=false is the largest mover of the dealer edge in greedy play (README: -0.83 of +1.11)
    assert opts["dealer_edge_diff"].abs().max() > 0
    ans = pd.read_csv(out / "balance_answers.csv")
    assert set(ans["bot"]) == {"greedy", "never"} and ans["question"].str.startswith("dealer edge").sum() == 2
    # resume: the same command plays nothing new and writes the same answers
    assert main(argv) == 0
    pd.testing.assert_frame_equal(pd.read_csv(out / "balance_answers.csv"), ans)
    with pytest.raises(SystemExit):
        main([*argv[:-3], "--seed", "1", "--out", str(out), "--no-progress"])
    assert "holds a different balance report" in capsys.readouterr().err


def test_few_marked_blanks_the_interval_of_too_few_hands():
    """Issue 45: a row of 2 hands printed a points interval reaching below 0; under MIN_CI_N it says
    'too few hands' instead, and the other rows keep theirs."""
    import pandas as pd

    from caishen.sim.analysis import balance

    t = pd.DataFrame([("hand type", "points when it fires", "qingyise", 2, 40.0, -30.0, 110.0),
                      ("hand type", "points when it fires", "pinghu", 5000, 8.0, 7.9, 8.1)],
                     columns=["section", "metric", "group", "n", "value", "ci_low", "ci_high"])
    out = balance.few_marked(t)
    assert out["ci_low"].isna().tolist() == [True, False] and out.loc[1, "ci_high"] == 8.1
    assert out["note"].tolist() == [f"too few hands (n < {balance.MIN_CI_N})", ""] and t.loc[0, "ci_low"] == -30.0


def test_every_kaihua_hand_type_row_names_its_rule_and_chinese():
    """Issue 45: fig-hand-types.png and the hand-type table gave qidui_pure, qidui_baotou, haohua and qubuqu
    without the rule ID or the Chinese the other rows have."""
    import re

    from caishen.sim.rules.kaihua.analysis import _hand_types

    for label, _ in _hand_types():
        assert re.search(r"\((K-\d+\.\d+)\)$", label), label
        assert re.search(r"[\u4e00-\u9fff]", label) or "links" in label, label
