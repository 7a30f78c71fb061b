"""Learning from the env (issue 46): the observation options (suit grid, assist, candidates) against slow
references and their spaces, the candidates' map back to the legal actions, the oracle labels against a
pure-Python reference, and nothing of the oracle or the hidden tiles in any observation."""

from __future__ import annotations

import re
import warnings
from pathlib import Path

import numpy as np
import pytest
from pettingzoo.test import api_test

import hand_reference as ref
from caishen.envs.assist import assist_batch
from caishen.envs.batched import BatchedGames, sample_legal
from caishen.envs.observation import (
    candidate_shapes,
    encode,
    feature_set,
    flat_size,
    n_planes,
    observation_space,
)
from caishen.envs.oracle import KEYS, oracle_labels
from caishen.envs.pettingzoo_env import raw_env
from caishen.envs.vector_env import CaishenVectorEnv, SelfPlayVectorEnv
from caishen.sim.bots.candidates import X_ACTION, X_DANGER_SEAT, X_GAP, X_HELD, X_SEEN, X_TYPE, candidate_type
from caishen.sim.bots.features import (
    CANDIDATE_TYPES,
    FEATURE_SETS,
    MAX_CANDIDATES,
    check_feature_set,
    context_tables,
    flat_tables,
)
from caishen.sim.engine import (
    A_DECLARE,
    A_DISCARD,
    A_HARD_DECLINE,
    A_KONG_ADDED,
    A_KONG_CONCEALED,
    A_PASS,
    A_WIN,
    DF_CLAIMED,
    N_ACTIONS,
    N_KINDS,
    N_SEATS,
    PH_CLAIM,
    PH_HARD,
    PH_ROB,
    PH_TURN,
    STATE_DTYPE,
    Game,
    action_name,
)
from caishen.sim.rng import _rng_seed
from caishen.sim.rules import base as rulesets
from caishen.sim.rules.codes import WIN_DISCARD
from caishen.sim.tiles import MELD_CHOW, MELD_KONG_CONCEALED, MELD_NONE, MELD_PONG
from test_envs import _hidden_twin, _wall_with_quads

RULES = ["kaihua", "jiating"]
DOCS = Path(__file__).resolve().parents[1] / "docs" / "learning.md"


@pytest.fixture(scope="module", autouse=True)
def _warm(batched_warm):
    return batched_warm


def _play(b: BatchedGames, steps: int, seed: int, random_share: float = 0.2):
    """Step ``b`` with greedy mixed with random legal actions; yields ``b`` before every step."""
    rng = np.random.default_rng(seed)
    r = np.zeros(4, np.uint64)
    _rng_seed(r, seed + 1)
    rand = np.zeros(b.n, np.int64)
    for _ in range(steps):
        yield b
        greedy = b.bot_actions("greedy")
        sample_legal(b.masks, r, rand)
        b.step(np.where(rng.random(b.n) < random_share, rand, greedy))


def _game_of(b: BatchedGames, i: int) -> Game:
    """A :class:`Game` holding game ``i``'s state."""
    g = Game(b.rules_name).reset(seed=0)
    for f in STATE_DTYPE.names:
        g.state[f] = b.states[i][f]
    return g


def _obs_i(obs, i):
    return {k: v[i] for k, v in obs.items()} if isinstance(obs, dict) else obs[i]


def _assert_obs_equal(a, b, msg=""):
    if isinstance(a, dict):
        assert a.keys() == b.keys()
        for k in a:
            np.testing.assert_array_equal(a[k], b[k], err_msg=f"{msg} {k}")
    else:
        np.testing.assert_array_equal(a, b, err_msg=msg)


# ------------------------------------------------------------------------- shapes, dtypes, spaces, encode
LAYOUT_CASES = [("planes", False, True), ("flat", True, True), ("grid", False, False), ("grid", True, True),
                ("candidates", False, False), ("candidates", False, True)]


@pytest.mark.parametrize("rules", RULES)
@pytest.mark.parametrize("layout,history,assist", LAYOUT_CASES)
def test_batch_observations_equal_encode_fit_their_space_and_feature_set(rules, layout, history, assist):
    """Every option's batch observation (built after the step kernel, caishen.envs.extras) equals
    ``encode`` of the same state through :class:`Game` (another path), has the shape and dtype of its
    named feature set and lies in its space; a final observation keeps the planes' part and leaves the
    decision-time blocks empty."""
    b = BatchedGames(6, rules, mode="selfplay", observation=layout, history=history, assist=assist)
    b.reset(seeds=11)
    space = observation_space(layout, history, assist)
    if layout == "candidates":
        want = {k: (s, d) for k, (s, d) in candidate_shapes(assist).items()}
        assert want["candidates"][0] == FEATURE_SETS["candidates"].shape
        ctx_set = FEATURE_SETS["candidates-context" + ("+assist" if assist else "")]
        assert want["context"][0] == ctx_set.shape
    else:
        fs = feature_set(layout, history, assist)
        assert fs.name == layout + ("+history" if history else "") + ("+assist" if assist else "")
        assert b.obs.shape[1:] == fs.shape and space.shape == fs.shape
        assert b.obs.dtype == (np.float32 if layout == "flat" else np.uint8)
    rows = n_planes(history)
    finals = 0
    for g in _play(b, 90, seed=3):
        for i in range(b.n):
            o = _obs_i(b.obs, i)
            assert space.contains(o)
            _assert_obs_equal(o, encode(_game_of(b, i), int(b.player[i]), layout=layout, history=history,
                                        assist=assist), f"game {i}")
        for i in np.flatnonzero(b.terminated):
            finals += 1
            for s in range(N_SEATS):
                fin, planes = _obs_i(_obs_i(b.final_obs, i), s), b._fin_planes[i, s]
                if layout == "candidates":
                    assert not fin["valid"].any() and (fin["actions"] == -1).all() and not fin["candidates"].any()
                    np.testing.assert_allclose(fin["context"][:84], _context_reference(planes, b.rules_name),
                                               atol=1e-6)
                    assert not fin["context"][84:].any()
                elif layout == "grid":
                    np.testing.assert_array_equal(fin[:rows], _grid_reference(planes, history, False)[:rows])
                    assert not fin[rows:].any()
                elif layout == "planes":
                    np.testing.assert_array_equal(fin[:rows], planes)
                    assert not fin[rows:].any()
                else:
                    assert not fin[flat_size(history):].any()
    assert finals > 0


def test_vector_envs_and_pettingzoo_take_every_option():
    """make_vec's env, the self-play env and the PettingZoo env (api_test) with the new options."""
    import gymnasium

    import caishen.envs  # noqa: F401  (registers the ids)

    v = gymnasium.make_vec("caishen/Kaihua-v0", num_envs=3, observation="candidates", assist=True, oracle=True)
    obs, info = v.reset(seed=1)
    assert v.single_observation_space.contains({k: x[0] for k, x in obs.items()})
    assert set(info["oracle"]) == set(KEYS)
    obs, rew, term, trunc, info = v.step(obs["actions"][:, 0])
    assert obs["context"].shape == (3, 154) and info["oracle"]["deal_in"].shape == (3, N_KINDS)
    s = SelfPlayVectorEnv(2, "jiating", observation="grid", assist=True, copy=True)
    obs, info = s.reset(seed=2)
    assert obs.shape == (2, n_planes() + 4, 4, 9) and s.single_observation_space.contains(obs[0])
    for obs_kind in ("candidates", "grid"):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            api_test(raw_env(observation=obs_kind, assist=True, oracle=True), num_cycles=60)
    e = raw_env(observation="candidates", oracle=True)
    e.reset(seed=4)
    agent = e.agent_selection
    assert "oracle" in e.infos[agent] and all("oracle" not in e.infos[a] for a in e.agents if a != agent)
    with pytest.raises(ValueError, match="history"):
        CaishenVectorEnv(2, observation="candidates", history=True)
    with pytest.raises(ValueError, match="assist must be True or False"):
        BatchedGames(2, assist="yes")
    with pytest.raises(ValueError, match="oracle must be True or False"):
        BatchedGames(2, oracle=1)
    with pytest.raises(ValueError, match="layout must be one of"):
        encode(Game().reset(seed=0), 0, layout="cube")


def test_checkpoints_record_the_new_sets_and_refuse_another():
    """The new layouts are named, versioned sets that a checkpoint records and checks."""
    for name in ("grid", "planes+assist", "flat+history+assist", "candidates", "candidates-context+assist"):
        fs = FEATURE_SETS[name]
        assert check_feature_set(fs.header(), fs, "ck.pt") is fs
    with pytest.raises(ValueError, match="this reader needs 'candidates'"):
        check_feature_set(FEATURE_SETS["grid"].header(), FEATURE_SETS["candidates"], "ck.pt")


# ------------------------------------------------------------------------- grid and assist references
def _grid_reference(planes: np.ndarray, history: bool, assist: bool) -> np.ndarray:
    """The suit grid, the obvious way."""
    scalar = flat_tables(feature_set("planes", history, assist))[0]
    out = np.zeros((planes.shape[0], 4, 9), np.uint8)
    for r in range(planes.shape[0]):
        for s in range(3):
            out[r, s] = planes[r, 9 * s:9 * s + 9]
        out[r, 3, :7] = planes[r, 27:]
        if scalar[r]:
            out[r, 3, 7:] = planes[r, 0]
    return out


def _live_reference(st, s: int) -> np.ndarray:
    """Copies of each kind seat ``s`` cannot see (own hand, unclaimed discards, melds but others' concealed kongs)."""
    live = 4 - st["hands"][s].astype(int)
    for p in range(N_SEATS):
        for i in range(int(st["seat"][p]["n_discards"])):
            if not st["dflags"][p, i] & DF_CLAIMED:
                live[st["discards"][p, i]] -= 1
        for m in range(int(st["seat"][p]["n_melds"])):
            t, k = int(st["meld_type"][p, m]), int(st["meld_kind"][p, m])
            if t == MELD_NONE or (t == MELD_KONG_CONCEALED and p != s):
                continue
            if t == MELD_CHOW:
                live[k:k + 3] -= 1
            else:
                live[k] -= 3 if t == MELD_PONG else 4
    return np.maximum(live, 0)


def _effective_reference(h, joker, live) -> int:
    """Live effective tiles of the 3m+1 hand ``h``: live copies of the kinds whose draw lowers its shanten."""
    base = ref.shanten(h, joker)
    n = 0
    for t in range(N_KINDS):
        if h[t] < 4:
            h2 = h.copy()
            h2[t] += 1
            if ref.shanten(h2, joker) < base:
                n += int(live[t])
    return n


def _context_reference(planes: np.ndarray, rules: str) -> np.ndarray:
    rows, cols, scale = context_tables()
    joker = rulesets.get(rules).facts["joker"]
    hand = planes[0].astype(int)
    s = ref.shanten(hand, joker) if hand.sum() else 8
    return np.concatenate([planes[rows, cols] * scale, [min(s + 1, 8) / 8]])


@pytest.mark.parametrize("rules", RULES)
def test_grid_assist_and_context_against_references(rules):
    """The grid is the planes reshaped by suit; the assist rows are the SB3 block (its first 36 values,
    tested against its own reference in test_ppo) and the live effective tiles after each discard counted
    the slow way; the candidates' context is the context tables and the shanten of the hand row."""
    joker = rulesets.get(rules).facts["joker"]
    b = BatchedGames(4, rules, mode="selfplay").reset(seeds=21)
    checked_eff = 0
    for k, g in enumerate(_play(b, 60, seed=5)):
        for i in range(b.n):
            game, seat = _game_of(b, i), int(b.player[i]) if k % 2 else int((b.player[i] + 1) % 4)
            planes = encode(game, seat, layout="planes", assist=True)
            np.testing.assert_array_equal(encode(game, seat, layout="grid", assist=True),
                                          _grid_reference(planes, False, True))
            high = np.array([8, 8, 3])[:, None]
            np.testing.assert_allclose(planes[76:79].astype(float).ravel()[[0, 34] + list(range(68, 102))]
                                       / np.r_[8, 8, [3] * 34], assist_batch(game._buf, np.array([seat]), rules)[0],
                                       atol=1e-6)
            assert (planes[76:79] <= high).all()
            cand = encode(game, seat, layout="candidates", assist=True)
            np.testing.assert_allclose(cand["context"][:84], _context_reference(planes, rules), atol=1e-6)
            flat_assist = encode(game, seat, layout="flat", assist=True)[967:]
            np.testing.assert_allclose(cand["context"][84:], flat_assist, atol=0)
            h = game.state["hands"][seat].astype(int)
            tile = int(game.state["table"]["tile"])
            if h.sum() % 3 == 1 and tile >= 0 and h[tile] < 4:
                h[tile] += 1
            if h.sum() % 3 == 2 and checked_eff < 40:
                live = _live_reference(game.state, seat)
                for kind in np.flatnonzero(h)[:3]:
                    h2 = h.copy()
                    h2[kind] -= 1
                    assert planes[79, kind] == min(_effective_reference(h2, joker, live), 136), (i, kind)
                    checked_eff += 1
                assert (planes[79][h == 0] == 0).all()
    assert checked_eff >= 40


# ------------------------------------------------------------------------- candidates
def _claim_after(h, joker, tile, action) -> int:
    """Shanten after the claim ``action`` of ``tile`` and (but for the kong) its best discard."""
    h = h.copy()
    if action == 140:
        h[tile] -= 3
        return ref.shanten(h, joker)
    if action == 139:
        h[tile] -= 2
    else:
        low = tile - (action - 136)
        for t in range(low, low + 3):
            if t != tile:
                h[t] -= 1
    kinds = [k for k in np.flatnonzero(h) if k != joker] or [joker]
    best = 99
    for k in kinds:
        h2 = h.copy()
        h2[k] -= 1
        best = min(best, ref.shanten(h2, joker))
    return best


@pytest.mark.parametrize("rules", RULES)
def test_candidates_map_back_to_legal_actions_and_match_a_slow_reference(rules):
    """Candidates are the legal actions in the engine's order (valid, -1 and zero rows past n), their type
    one-hot is their action's, and their features equal a slow reference: shanten and its gap (discards,
    declares, kongs), held and seen copies, live effective tiles within the best + 1, the per-seat danger
    summing to the danger, the discard flags, the claim features."""
    joker = rulesets.get(rules).facts["joker"]
    b = BatchedGames(6, rules, mode="selfplay", observation="candidates").reset(seeds=31)
    seen_types = set()
    n_eff = 0
    for g in _play(b, 150, seed=9):
        for i in range(b.n):
            o = _obs_i(b.obs, i)
            legal = np.flatnonzero(b.masks[i])
            n = int(o["valid"].sum())
            assert n == len(legal) <= MAX_CANDIDATES and o["valid"][:n].all()
            np.testing.assert_array_equal(o["actions"][:n], legal)
            assert (o["actions"][n:] == -1).all() and not o["candidates"][n:].any()
            st = b.states[i]
            s = int(st["table"]["to_act"])
            h = st["hands"][s].astype(int)
            live = _live_reference(st, s)
            disc = [a % 34 for a in legal if a < A_KONG_CONCEALED]
            after = {k: ref.shanten(h - np.eye(N_KINDS, dtype=int)[k], joker) for k in set(disc)}
            best = min(after.values()) if after else 0
            base = ref.shanten(h, joker)
            for a, x in zip(legal, o["candidates"][:n]):
                ty = candidate_type(a)
                seen_types.add(CANDIDATE_TYPES[ty])
                assert x[X_TYPE:X_TYPE + 13].sum() == 1 and x[X_TYPE + ty] == 1, action_name(a)
                kind = a % 34 if a < 136 else (int(st["table"]["tile"]) if a <= 140 else -1)
                if kind >= 0:
                    assert x[X_HELD] == pytest.approx(h[kind] / 4) and x[X_SEEN] == pytest.approx(1 - live[kind] / 4)
                f = x[X_ACTION:X_ACTION + 17]
                if a < A_KONG_CONCEALED:
                    k = a % 34
                    assert f[0] == after[k] and x[X_GAP] == after[k] - best
                    assert f[5] == (k == joker) and f[9] == (k >= 27 and k != joker)
                    assert f[10] == (k < 27 and k % 9 in (0, 8)) and f[11] == b.masks[i, A_DECLARE + k]
                    h2 = h.copy()
                    h2[k] -= 1
                    assert f[7] == pytest.approx(sum(1 for t in range(34) if t != joker and h2[t] >= 2) / 7)
                    assert x[X_DANGER_SEAT:X_DANGER_SEAT + 3].sum() == pytest.approx(f[2], abs=1e-5)
                    if after[k] <= best + 1 and n_eff < 60:
                        assert f[1] == pytest.approx(0.1 * _effective_reference(h2, joker, live), abs=1e-5)
                        n_eff += 1
                    elif after[k] > best + 1:
                        assert f[1] == 0
                elif a < 136:
                    t = a % 34
                    h2 = h.copy()
                    h2[t] -= 4 if a < A_KONG_ADDED else 1
                    assert f[0] == ref.shanten(h2, joker) and x[X_GAP] == f[0] - best
                elif a <= 140:
                    assert f[12] == 1 and f[14] == (st["seat"][s]["n_melds"] == 0) and f[15] == (a >= 139)
                    assert f[13] == base - _claim_after(h, joker, int(st["table"]["tile"]), a), action_name(a)
                else:
                    assert not f.any() and x[X_HELD] == 0
    assert {"discard", "pass", "pong", "win"} <= seen_types and n_eff == 60
    if rules == "kaihua":
        assert {"chow_low", "chow_mid", "chow_high"} & seen_types
    else:
        assert "declare" in seen_types


# ------------------------------------------------------------------------- oracle
def _oracle_reference(game: Game) -> dict:
    """The labels the slow obvious way: every legal discard tried on a copy through the step API, every
    win offered on it taken; the waits by the pure-Python hand reference."""
    st = game.state
    s = game.current_player
    joker = rulesets.get(game.rules_name).facts["joker"]
    out = {"deal_in": np.zeros(34, bool), "deal_in_to": np.zeros((34, 3), bool),
           "deal_in_points": np.zeros(34, np.float32), "ready": np.zeros(3, bool), "waits": np.zeros((3, 34), bool)}
    for r in range(1, 4):
        h = [int(c) for c in st["hands"][(s + r) % 4]]
        if sum(h) % 3 == 1:
            for t in ref.waits(h, joker):
                out["waits"][r - 1, t] = True
            out["ready"][r - 1] = out["waits"][r - 1].any()
    if game.phase != "turn":
        return out
    legal = set(game.legal_actions())
    for k in range(34):
        a = A_DISCARD + k if A_DISCARD + k in legal else (A_DECLARE + k if A_DECLARE + k in legal else None)
        if a is None:
            continue
        g2 = Game(game.rules_name).reset(seed=0)
        for f in STATE_DTYPE.names:
            g2.state[f] = st[f]
        g2.step(a)
        while not g2.done and g2.state["table"]["phase"] in (PH_CLAIM, PH_ROB, PH_HARD) and g2.state["table"]["src"] == s:
            acts = g2.legal_actions()
            g2.step(next(x for x in (A_WIN, A_PASS, A_HARD_DECLINE) if x in acts) if
                    {A_WIN, A_PASS, A_HARD_DECLINE} & set(acts) else acts[0])
        res = g2.record  # the codes (result reads them as words)
        if res is not None and res["win_type"] == WIN_DISCARD and res["discarder"] == s:
            out["deal_in"][k] = True
            for r in range(1, 4):
                out["deal_in_to"][k, r - 1] = bool((res["winners_mask"] >> ((s + r) % 4)) & 1)
            out["deal_in_points"][k] = -res[f"score_{s}"]
    return out


@pytest.mark.parametrize("rules", RULES)
def test_oracle_labels_equal_a_slow_reference_and_the_batch(rules):
    """On the states of greedy hands with random moves: the batch's labels equal oracle_labels(Game) on a
    copy, which equal the reference; deal-ins happen, with their points and winners; final points are the
    hand's."""
    b = BatchedGames(8, rules, mode="selfplay", oracle=True).reset(seeds=41)
    deal_ins = ready = 0
    for g in _play(b, 96, seed=13, random_share=0.1):
        lab = b.oracle_labels
        for i in range(b.n):
            game = _game_of(b, i)
            one = oracle_labels(game)
            for k in ("deal_in", "deal_in_to", "deal_in_points", "ready", "waits"):
                np.testing.assert_array_equal(lab[k][i], one[k], err_msg=k)
            if game.phase == "turn" or i % 4 == 0:
                want = _oracle_reference(game)
                for k, v in want.items():
                    np.testing.assert_array_equal(one[k], v, err_msg=f"{k} game {i}")
            deal_ins += int(one["deal_in"].sum())
            ready += int(one["ready"].sum())
        np.testing.assert_array_equal(lab["final_points"], b.points)
        np.testing.assert_array_equal(lab["hand_ended"], b.hands_ended > 0)
    assert deal_ins > 5 and ready > 20
    assert (b.oracle_labels["deal_in_points"] >= 0).all()


def test_oracle_never_in_observations():
    """No observation changes with oracle=True (same seeds, same actions), and the layouts' observations of
    a seat do not change when only what is hidden from it changes (other hands, concealed kong kinds, the
    wall, private flags: what the oracle reads)."""
    for layout, assist in (("candidates", True), ("grid", True), ("flat", False)):
        a = BatchedGames(4, "kaihua", observation=layout, assist=assist).reset(seeds=5)
        o = BatchedGames(4, "kaihua", observation=layout, assist=assist, oracle=True).reset(seeds=5)
        for _ in range(80):
            _assert_obs_equal(a.obs, o.obs)
            acts = a.bot_actions("greedy")
            a.step(acts)
            o.step(acts)
    rng = np.random.default_rng(77)
    for rules in RULES:
        joker = rulesets.get(rules).facts["joker"]
        twin = Game(rules).reset(seed=0)
        n = 0
        for hand in range(3):
            game = Game(rules).reset(wall=_wall_with_quads(rng, joker), dealer=hand % N_SEATS)
            while not game.done:
                for seat in range(N_SEATS):
                    views = [encode(game, seat, layout=lay, assist=True) for lay in ("candidates", "grid")]
                    _hidden_twin(game, twin, seat, rng)
                    for lay, v in zip(("candidates", "grid"), views):
                        _assert_obs_equal(encode(twin, seat, layout=lay, assist=True), v, f"{rules} {lay} seat {seat}")
                    n += 1
                legal = game.legal_actions()
                kongs = [x for x in legal if A_KONG_CONCEALED <= x < A_KONG_ADDED]
                game.step(kongs[0] if kongs else int(rng.choice(legal)))
        assert n > 300


# ------------------------------------------------------------------------- docs
def test_docs_action_table_matches_the_engine_layout():
    """docs/learning.md's action layout table names every action as caishen.sim.engine.layout does."""
    text = DOCS.read_text(encoding="utf-8")
    rows = re.findall(r"^\|\s*(\d+)(?:\s*[-–]\s*(\d+))?\s*\|\s*`([a-z_]+)(?: <kind>)?`", text, re.M)
    covered = []
    for lo, hi, name in rows:
        lo, hi = int(lo), int(hi or lo)
        assert action_name(lo).split()[0] == name and action_name(hi).split()[0] == name, (lo, hi, name)
        covered += range(lo, hi + 1)
    assert covered == list(range(N_ACTIONS))
    for t in CANDIDATE_TYPES:
        assert f"`{t}`" in text
    assert PH_TURN == 0


def test_cand_mlp_weights_file_is_checked(tmp_path):
    """A ``cand-mlp`` weights file (the env trainer's export) round-trips through the kernel row, records
    its feature sets, and a wrong field is named."""
    from caishen.sim.bots import learned

    rng = np.random.default_rng(0)
    arrays = {m: rng.normal(size=s) for m, s in learned._cand_shapes(5, 3).items()}
    path = learned.save_learned(tmp_path / "c.npz", {"header": learned.cand_header("kaihua", 5, 3), **arrays})
    row, hdr = learned.load_learned(path, "kaihua")
    assert hdr["feature_sets"] == {"candidates": {"name": "candidates", "version": 1},
                                   "context": {"name": "candidates-context", "version": 1}}
    back = learned.unpack(row)
    assert set(back) == set(learned.CAND_MEMBERS)
    for m in learned.CAND_MEMBERS:
        np.testing.assert_array_equal(back[m], arrays[m])
    bad = learned.cand_header("kaihua", 5, 3)
    bad["layers"]["n_context"] = 83
    with pytest.raises(ValueError, match="field 'layers'"):
        learned.save_learned(tmp_path / "d.npz", {"header": bad, **arrays})
    bad = learned.cand_header("kaihua", 5, 3)
    bad["feature_sets"]["context"] = {"name": "context", "version": 1}
    with pytest.raises(ValueError, match="feature_sets.context"):
        learned.save_learned(tmp_path / "e.npz", {"header": bad, **arrays})
    with pytest.raises(ValueError, match="member 'w1'"):
        learned.save_learned(tmp_path / "f.npz", {"header": learned.cand_header("kaihua", 5, 3),
                                                  **{**arrays, "w1": np.zeros((5, 119))}})
