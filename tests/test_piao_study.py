"""The 飘财 counterfactual (caishen.sim.analysis.piao_study) and the piao_table policy (caishen.sim.bots.piao_table), K-9.

The decision-point test and the features are compared with a slow
pure-Python reading of the definition on states of random hands; the
branches are checked to replay the real hand when the wall is not
reshuffled; the piao_table policy with an empty / full table must play
exactly like ``never`` / ``always``.
"""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from caishen.sim import hand as H
from caishen.sim.engine import A_DISCARD, A_WIN, PH_TURN, Game
from caishen.sim.analysis.piao_study import (
    F_BAOTOU,
    F_CAISHEN,
    F_CHAIN,
    F_LIVE,
    F_WAITS,
    N_FEAT,
    _piao_features,
    _piao_point,
    estimate,
    group_labels,
    piao_table_bits,
    run_study,
    study_chunk,
    table_estimate,
)
from caishen.sim.bots.piao_table import DEFAULT_PIAO_TABLE, _piao_table_says, cell_of, parse_piao_table, policy_bits_int64
from caishen.sim.tiles import CAISHEN
from caishen.sim.selfplay.runner import Execution

JOKER = CAISHEN


# --------------------------------------------------------------- pure-Python references
def ref_piao_point(g: Game) -> bool:
    """The definition: own turn, holds a 财神, cannot win now, may discard a 财神 and some other tile,
    and is ready (shanten <= 0) without one 财神."""
    st = g.state
    s = int(st["table"]["to_act"])
    if int(st["table"]["phase"]) != PH_TURN:
        return False
    h = st["hands"][s].copy()
    if h[JOKER] == 0:
        return False
    legal = set(g.legal_actions())
    if A_WIN in legal or A_DISCARD + JOKER not in legal:
        return False
    if not any(A_DISCARD + k in legal for k in range(34) if k != JOKER):
        return False
    h[JOKER] -= 1
    return H.shanten(h, JOKER) <= 0


def ref_live(st, s) -> np.ndarray:
    """4 minus the copies seat s sees: own hand, unclaimed discards, exposed melds (others' concealed kongs hidden)."""
    from caishen.sim.engine import DF_CLAIMED
    from caishen.sim.tiles import MELD_CHOW, MELD_KONG_CONCEALED, MELD_NONE, MELD_PONG

    live = 4 - st["hands"][s].astype(int)
    for p in range(4):
        for i in range(int(st["seat"][p]["n_discards"])):
            if not st["dflags"][p, i] & DF_CLAIMED:
                live[st["discards"][p, i]] -= 1
        for i in range(int(st["seat"][p]["n_melds"])):
            t, k = int(st["meld_type"][p, i]), int(st["meld_kind"][p, i])
            if t == MELD_NONE or (t == MELD_KONG_CONCEALED and p != s):
                continue
            if t == MELD_CHOW:
                live[[k, k + 1, k + 2]] -= 1
            elif t == MELD_PONG:
                live[k] -= 3
            else:
                live[k] -= 4
    return np.maximum(live, 0)


def ref_features(st, s) -> dict:
    h = st["hands"][s].copy()
    out = {"caishen": int(h[JOKER]), "chain": int(st["seat"][s]["chain_len"])}
    h[JOKER] -= 1
    waits = [t for t in H.waits(h, JOKER) if t != JOKER and h[t] < 4]
    live = ref_live(st, s)
    out["waits"] = len(waits)
    out["live_waits"] = int(sum(live[t] for t in waits))
    out["baotou"] = int(h[JOKER] > 0 and H.is_baotou(h, JOKER))
    return out


def _random_states(seed: int, n_hands: int, policy_mix=("always", "never", "random")):
    """States of Kaihua hands played by a mix of bots (so that 飘 points and chains occur)."""
    from caishen.agents import make_agent

    rng = np.random.default_rng(seed)
    for h in range(n_hands):
        g = Game("kaihua").reset(seed=int(rng.integers(2**32)), dealer=int(rng.integers(4)))
        bots = [make_agent(policy_mix[int(rng.integers(len(policy_mix)))], seed=int(rng.integers(2**31)))
                if policy_mix else None for _ in range(4)]
        while not g.done:
            yield g
            g.step(bots[int(g.state["table"]["to_act"])].act(g.observe()))


@settings(max_examples=6, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.integers(0, 2**31))
def test_K_9_1_piao_point_and_features_match_the_python_reference(engine_warm, seed):
    tabs = H.hand_tables()
    live = np.zeros(34, np.int64)
    n_points = 0
    for g in _random_states(seed, 6):
        st_ = g.state
        s = int(st_["table"]["to_act"])
        g.legal_actions()  # fills the mask
        got = bool(_piao_point(st_, g._ep, tabs, s))
        assert got == ref_piao_point(g)
        if got:
            n_points += 1
            row = np.zeros(N_FEAT, np.int64)
            _piao_features(st_, g._ep, tabs, s, live, row)
            ref = ref_features(st_, s)
            assert {"caishen": row[F_CAISHEN], "chain": row[F_CHAIN], "waits": row[F_WAITS],
                    "live_waits": row[F_LIVE], "baotou": row[F_BAOTOU]} == ref
            assert st_["hands"][s, JOKER] == ref["caishen"]  # the kernel restored the hand


def test_K_9_1_piao_points_occur_and_features_are_sane(engine_warm):
    df = study_chunk(11, 400, rollouts=2)
    assert len(df) > 20
    assert df["caishen"].between(1, 2).all()  # 3 or 4 财神 force the discard (K-2.4): no decision
    assert (df["waits"] >= 1).all() and (df["live_waits"] >= 0).all()
    assert df["tiles_left"].between(0, 63).all()  # the live wall: 136 - 53 dealt - 20 reserved (K-3.4)
    assert df["dealer"].isin([0, 1]).all() and df["seat"].between(0, 3).all()
    assert set(df["taken"]) == {0, 1}


@pytest.mark.parametrize("explore,branch", [(0.0, "base_score"), (1.0, "alt_score")])
def test_K_9_1_the_branch_the_real_hand_took_replays_it(engine_warm, explore, branch):
    """Without reshuffling, the branch that takes the real hand's action at a point replays the real hand:
    the deciding seat ends with the real hand's score (the clone is exact).  In the rollouts every seat
    plays ``never`` at later points, the real hand takes the explored action there: so with
    ``explore=1`` only hands with one point replay."""
    n = 400
    scores = np.zeros((n, 4), np.int64)
    df = study_chunk(5, n, rollouts=1, policies="never", explore=explore, reshuffle=False, hand_scores=scores)
    first = df.groupby("hand").head(1) if explore == 0 else df[df.groupby("hand")["hand"].transform("size") == 1]
    assert len(first) > 10
    real = scores[first["hand"].to_numpy(), first["seat"].to_numpy()]
    np.testing.assert_array_equal(first[branch].to_numpy(), real)


def test_K_9_1_counterfactual_is_deterministic_and_paired(engine_warm):
    a = study_chunk(3, 200, rollouts=3)
    b = study_chunk(3, 200, rollouts=3)
    pd.testing.assert_frame_equal(a, b)
    assert np.allclose(a["diff"], a["alt_score"] - a["base_score"])
    # the walls do not depend on R or on the exploration: the same hands hold the first point
    c = study_chunk(3, 200, rollouts=1, explore=0.0)
    first_a = a.groupby("hand").head(1)[["hand", "seat", "turns", "tiles_left"]].reset_index(drop=True)
    first_c = c.groupby("hand").head(1)[["hand", "seat", "turns", "tiles_left"]].reset_index(drop=True)
    pd.testing.assert_frame_equal(first_a, first_c)


def test_K_9_3_failed_piao_only_in_the_piao_branch(engine_warm):
    df = study_chunk(9, 400, rollouts=4)
    assert (df["alt_failed"] > 0).any()
    assert df["alt_failed"].between(0, 1).all()


def test_run_study_chunks_resume_and_match_one_call(engine_warm, tmp_path):
    out = tmp_path / "study"
    a = run_study(120, seed=4, rollouts=2, chunk_size=50, out=out, execution=Execution(1, progress=False))
    assert sorted(p.name for p in (out / "chunks").iterdir()) == [f"chunk-0000{i}.parquet" for i in range(3)]
    (out / "chunks" / "chunk-00001.parquet").unlink()  # an interrupted run
    b = run_study(120, seed=4, rollouts=2, chunk_size=50, out=out, execution=Execution(1, progress=False))
    pd.testing.assert_frame_equal(a, b)
    assert a["hand_id"].max() < 120 and (a["hand_id"] == a["chunk"] * 50 + a["hand"]).all()
    with pytest.raises(ValueError, match="rollouts"):
        run_study(120, seed=4, rollouts=3, chunk_size=50, out=out, execution=Execution(1, progress=False))


def test_estimate_groups_and_cluster_intervals(engine_warm):
    df = run_study(600, seed=2, rollouts=2, chunk_size=300, execution=Execution(1, progress=False))
    e = estimate(df)
    assert e.iloc[0]["feature"] == "all" and e.iloc[0]["points"] == len(df)
    assert e.iloc[0]["diff"] == pytest.approx(df["diff"].mean())
    for f in ("tiles_left", "caishen", "dealer"):
        assert e[e["feature"] == f]["points"].sum() == len(df)
    ok = e.dropna(subset=["ci_low"])
    assert (ok["ci_low"] <= ok["diff"]).all() and (ok["diff"] <= ok["ci_high"]).all()
    t = table_estimate(df)
    assert len(t) == 64 and t["points"].sum() == len(df)
    bits = piao_table_bits(df, min_points=1)
    positive = set(t[(t["points"] >= 1) & (t["diff"] > 0)]["cell"])
    assert {c for c in range(64) if bits >> c & 1} == positive


def test_group_labels():
    assert list(group_labels("tiles_left", [0, 15, 16, 47, 48, 63, 80])) == ["0-15", "0-15", "16-23", "40-47",
                                                                           "48+", "48+", "48+"]
    assert list(group_labels("dealer", [0, 1])) == ["0", "1"]
    with pytest.raises(ValueError, match="unknown feature 'colour'"):
        group_labels("colour", [1])


# --------------------------------------------------------------- the piao_table policy
def test_K_9_1_piao_table_cell_matches_the_python_reference(engine_warm):
    tabs = H.hand_tables()
    rng = np.random.default_rng(0)
    n = 0
    for g in _random_states(17, 4):
        st_ = g.state
        if int(st_["table"]["phase"]) != PH_TURN:  # the 飘 decision is a turn's discard (K-9.1), never a claim
            continue
        s = int(st_["table"]["to_act"])
        h = st_["hands"][s].copy()
        if h[JOKER] == 0:  # no 财神, no 飘: the policy never throws one
            assert not _piao_table_says(st_, g._ep, tabs, policy_bits_int64(2**64 - 1))
            continue
        h[JOKER] -= 1
        n_waits = sum(1 for t in range(34) if t != JOKER and h[t] < 4 and H.is_win(h + (np.arange(34) == t), JOKER))
        cell = cell_of(max(0, int(st_["table"]["tail"] - st_["table"]["head"] + 1) - 20), n_waits,
                       int(st_["seat"][s]["chain_len"]), int(st_["table"]["dealer"]) == s)
        bits = int(rng.integers(0, 2**63))
        assert bool(_piao_table_says(st_, g._ep, tabs, policy_bits_int64(bits))) == bool(bits >> cell & 1)
        assert bool(_piao_table_says(st_, g._ep, tabs, policy_bits_int64(1 << cell)))
        assert bool(_piao_table_says(st_, g._ep, tabs, policy_bits_int64(2**64 - 1)))
        n += 1
    assert n > 30


@pytest.mark.parametrize("table,same_as", [("0", "never"), ("0xFFFFFFFFFFFFFFFF", "always")])
def test_K_9_1_piao_table_extremes_play_like_never_and_always(engine_warm, table, same_as):
    from caishen.sim.selfplay.batch import play_batch

    a = play_batch(300, 8, policies=f"greedy,piao_table:{table},greedy,piao_table:{table}")
    b = play_batch(300, 8, policies=f"greedy,{same_as},greedy,{same_as}")
    for k in a:
        np.testing.assert_array_equal(a[k], b[k], err_msg=k)


def test_piao_table_spec_parsing():
    from caishen.sim.bots.policies import POLICY_PIAO_TABLE
    from caishen.sim.bots.registry import parse

    assert (parse("piao_table:5").code, parse("piao_table:5").param) == (POLICY_PIAO_TABLE, 5)
    assert parse("piao_table:0x10").param == 16 and parse("piao_table:0x10").spec == "piao_table:16"
    full = parse("piao_table:0xFFFFFFFFFFFFFFFF")
    assert full.param == -1 and full.spec == f"piao_table:{2**64 - 1}"
    assert parse(full.spec) == full  # the normal form round-trips (two's complement)
    assert parse("piao_table").code == POLICY_PIAO_TABLE
    assert parse(f"piao_table:{DEFAULT_PIAO_TABLE}").spec == "piao_table"  # the default table is one bot
    for bad, msg in (("piao_table:x", "its base bot: unknown policy 'x'"), ("piao_table:12x", "must be an integer"),
                     ("piao_table:0x1" + "0" * 16, "0..2\\*\\*64-1"),
                     ("piao_table:" + "9" * 30, "64-bit")):
        with pytest.raises(ValueError, match=msg):
            parse(bad)
    assert parse_piao_table("  ") == policy_bits_int64(DEFAULT_PIAO_TABLE)


def test_J_1_1_piao_table_refused_without_a_caishen():
    from caishen.sim.selfplay.runner import make_config

    with pytest.raises(ValueError, match="piao_table.*no 财神"):
        make_config("jiating", 10, 0, policies="piao_table")


# --------------------------------------------------------------- bad input
@pytest.mark.parametrize("kwargs,msg", [
    ({"decision": "chow"}, "unknown decision 'chow'"),
    ({"explore": 1.5}, "explore 1.5"),
    ({"explore": True}, "explore True"),
    ({"rollouts": 0}, "rollouts must be an integer in 1..4096, got 0"),
    ({"policies": "always,never"}, "one per seat"),
])
def test_study_bad_input_is_named(kwargs, msg):
    with pytest.raises(ValueError, match=msg):
        study_chunk(1, 10, **kwargs)


def test_study_bad_input_jiating_piao_policy():
    with pytest.raises(ValueError, match="no 财神"):
        study_chunk(1, 10, decision="hard", policies="never")


# --------------------------------------------------------------- Jiating decisions (J-4.1, J-4.2)
@pytest.mark.parametrize("decision,hands", [("jiating", 150), ("hard", 3000)])  # 硬子 is offered in ~0.1% of hands
def test_J_4_declaration_points_are_studied(engine_warm, decision, hands):
    df = study_chunk(2, hands, rollouts=2, decision=decision, policies="greedy", explore=0.0)
    assert len(df) >= 3
    # the base branch never declares, the alternative does: the branches differ somewhere
    assert (df["alt_score"] != df["base_score"]).any()
    assert np.allclose(df["diff"], df["alt_score"] - df["base_score"])


# --------------------------------------------------------------- issue 47: parts, own choice, tables on a base
def ref_parts(st, s, factor=2):
    """The 飘 parts of seat s in a finished Kaihua hand, from the record (K-6.5, K-8.1, K-9.3), slowly:
    its own win's 飘 links doubled what it received (received x (1 - 2**-links)); another seat's win inside its
    open circle cost it ``factor - 1`` times its own self-draw share."""

    seat = st["seat"]
    dealer = int(st["table"]["dealer"])
    double = penalty = 0
    for w in range(4):
        if not seat[w]["won"]:
            continue
        if w == s:
            links = int(seat[s]["win_joker_links"])
            double += int(seat[s]["score"]) - int(seat[s]["score"]) // 2 ** links
        elif seat[s]["circle_failed"] and seat[s]["circle_open"]:
            base = 4 if dealer in (s, w) else 2
            penalty -= (factor - 1) * base * 2 ** int(seat[w]["exponent"])
    return double, penalty


def test_K_9_3_K_6_5_piao_parts_match_the_record_reference(engine_warm):
    from caishen.sim.analysis.piao_kernels import _piao_parts

    seen = {"double": 0, "penalty": 0}
    rng = np.random.default_rng(47)
    from caishen.agents import make_agent

    for _ in range(120):
        g = Game("kaihua").reset(seed=int(rng.integers(2**32)), dealer=int(rng.integers(4)))
        bots = [make_agent("always") for _ in range(4)]
        while not g.done:
            g.step(bots[int(g.state["table"]["to_act"])].act(g.observe()))
        for s in range(4):
            got = _piao_parts(g.state, g._ep, g._rp, s)
            ref = ref_parts(g.state, s)
            assert tuple(int(x) for x in got) == ref, (s, got, ref)
            seen["double"] += ref[0] != 0
            seen["penalty"] += ref[1] != 0
    assert seen["double"] > 0 and seen["penalty"] > 0  # both parts occur in these hands


def test_K_9_3_the_penalty_part_is_what_the_failed_piao_factor_costs(engine_warm):
    """A payment-only option leaves the play alone: factor 2 minus factor 1 is the penalty part, point by point."""
    a = study_chunk(23, 250, rollouts=2, policies="greedy", per_hand=True)
    b = study_chunk(23, 250, rollouts=2, policies="greedy", per_hand=True, options={"failed_piao_factor": 1})
    assert len(a) == len(b) > 10 and (b["alt_penalty"] == 0).all()
    np.testing.assert_allclose(a["alt_score"] - b["alt_score"], a["alt_penalty"])
    np.testing.assert_allclose(a["base_score"] - b["base_score"], a["base_penalty"])
    assert (a["alt_penalty"] <= 0).all() and (a["alt_double"] >= 0).all() and (a["alt_penalty"] < 0).any()
    assert ((a["alt_double"] > 0) <= (a["alt_won"] > 0)).all()  # a doubling needs a win
    assert ((a["alt_loss"] >= 0) & (a["alt_loss"] <= 1)).all()
    first_loss = (a["alt_first"] <= -24).mean()
    assert abs(first_loss - a["alt_loss"].mean()) < 0.1


@pytest.mark.parametrize("policy,own", [("always", 1), ("never", 0)])
def test_K_9_1_own_choice_is_the_policys_own_move(engine_warm, policy, own):
    df = study_chunk(5, 120, rollouts=1, policies=policy, explore=0.5)
    assert len(df) > 5 and (df["own_choice"] == own).all()
    one = study_chunk(5, 200, rollouts=1, policies=policy, per_hand=True)
    assert (one["own_choice"] == one["taken"]).all() and (one["own_choice"] == own).all()


@pytest.mark.parametrize("base", ["tuned:kaihua", "greedy_safe"])
def test_K_9_1_a_table_on_a_base_decides_exactly_at_the_chances(engine_warm, base):
    """piao_table:BITS:BASE throws at a chance exactly where its table's cell is set, and the study's chances
    are the table's (per hand: the policy's own choice at the studied chance)."""
    bits = 0x5555_AAAA_0F0F_F0F0
    df = study_chunk(9, 300, rollouts=1, policies=f"piao_table:{bits}:{base}", per_hand=True)
    assert len(df) > 10
    cells = [cell_of(t, w, c, d) for t, w, c, d in zip(df["tiles_left"], df["waits"], df["chain"], df["dealer"])]
    assert df["own_choice"].tolist() == [(bits >> c) & 1 for c in cells]


def test_piao_table_on_a_base_spec():
    from caishen.sim.bots import registry

    b = registry.parse(" piao_table : tuned:kaihua ")
    assert b.spec == "piao_table:tuned:kaihua" and b.code == registry.POLICY_PIAO_BASE and b.has_data
    assert registry.parse("piao_table:0x10:learned:kaihua").spec == "piao_table:16:learned:kaihua"
    assert registry.parse("piao_table:16:greedy").spec == "piao_table:16"  # the greedy table bot itself
    assert registry.has_data("piao_table:greedy_safe") and not registry.has_data("piao_table:7")
    w, made_for = registry.parse("piao_table:tuned:kaihua").weights("kaihua")
    assert made_for == "kaihua" and np.array_equal(w, registry.load_tuned("kaihua")[0])
    for bad, msg in (("piao_table:always", "cannot carry a 飘 table"), ("piao_table:3:piao_table", "cannot carry"),
                     ("piao_table:bogus", "its base bot: unknown policy 'bogus'")):
        with pytest.raises(ValueError, match=msg):
            registry.parse(bad)
    with pytest.raises(ValueError, match="has no 财神"):
        registry.bot_table("piao_table:tuned:kaihua", "jiating", -1)


def test_estimate_split_by_own_choice_and_parts_add_up():
    rng = np.random.default_rng(3)
    n = 3000
    pts = pd.DataFrame({"hand_id": np.arange(n), "tiles_left": rng.integers(0, 70, n), "waits": rng.integers(1, 9, n),
                        "caishen": 2, "live_waits": rng.integers(0, 12, n), "chain": rng.integers(0, 2, n),
                        "dealer": rng.integers(0, 2, n), "baotou": rng.integers(0, 2, n),
                        "own_choice": rng.integers(0, 2, n), "taken": 0, "chances": rng.integers(1, 4, n)})
    pts["alt_double"] = rng.exponential(1, n)
    pts["base_double"] = 0.0
    pts["alt_penalty"] = -rng.exponential(1, n)
    pts["base_penalty"] = 0.0
    pts["diff"] = rng.normal(1, 5, n) + pts["alt_double"] + pts["alt_penalty"]
    for c in ("alt_won", "base_won", "alt_failed", "alt_score", "base_score"):
        pts[c] = rng.random(n)
    est = estimate(pts, split="own_choice")
    assert list(dict.fromkeys(est["own_choice"])) == ["all", "keeps", "throws"]
    top = est.iloc[0]
    assert top["doubling"] + top["penalty"] + top["rest"] == pytest.approx(top["diff"])
    w = pts["chances"].to_numpy(float)
    assert top["doubling"] == pytest.approx(np.average(pts["alt_double"], weights=w))
    sign = np.where(pts["own_choice"] > 0, 1.0, -1.0)
    assert top["own_worth"] == pytest.approx(np.average(sign * pts["diff"], weights=w))
    th = est[(est["own_choice"] == "throws") & (est["feature"] == "all")].iloc[0]
    m = pts["own_choice"] == 1
    assert th["diff"] == pytest.approx(np.average(pts["diff"][m], weights=w[m]))
    assert th["points"] == m.sum()
    cells = table_estimate(pts, split="own_choice")
    assert len(cells) == 3 * 64 and cells.groupby("own_choice")["points"].sum()["all"] == n


def test_weighted_quantiles_match_repeated_values():
    from caishen.sim.analysis.piao_estimate import weighted_quantiles

    rng = np.random.default_rng(0)
    v = rng.integers(-50, 50, 200).astype(float)
    w = rng.integers(1, 4, 200)
    rep = np.repeat(v, w)
    q = weighted_quantiles(v, w, (0.01, 0.5, 0.99))
    ref = [np.sort(rep)[int(np.ceil(x * len(rep))) - 1] for x in (0.01, 0.5, 0.99)]
    assert q.tolist() == ref
