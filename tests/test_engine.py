"""Engine tests: action layout, the Python API, the invariant checker, batch
self-play (100,000 checked random hands), seeding, replay and observation
hiding.  Rule-by-rule scenarios are in ``test_kaihua_rules.py``."""

from __future__ import annotations

import json

import numpy as np
import pytest

from caishen.sim.bots.policies import new_work
from caishen.sim import engine as E
from caishen.sim.selfplay import batch as SP
from caishen.sim.bots.registry import code_table as policy_table
from caishen.sim.rules.kaihua import FLAG_CHAIN, FLAG_JOKER_LINK
from caishen.sim.rules.records import record_columns
from caishen.sim.tiles import MELD_KONG_CONCEALED, kind_name

from scenario import random_batch


def _random_game(seed: int, rng: np.random.Generator, check: bool = True, options=None) -> E.Game:
    g = E.Game(options=options).reset(seed=seed)
    if check:
        g.check()
    while not g.done:
        g.step(int(rng.choice(g.legal_actions())))
        if check:
            g.check()
    return g


def _game_state(g: E.Game) -> dict[str, np.ndarray]:
    return {f: g.state[f].copy() for f in E.STATE_DTYPE.names if f not in E.SCRATCH_FIELDS}


# ---------------------------------------------------------------- action layout


def test_action_layout_names_round_trip():
    assert E.N_ACTIONS == 145
    names = [E.action_name(a) for a in range(E.N_ACTIONS)]
    assert len(set(names)) == E.N_ACTIONS
    for a, n in enumerate(names):
        assert E.parse_action(n) == a
    assert E.action_name(0) == "discard 1m"
    assert E.action_name(E.A_KONG_ADDED + 33) == "kong_added 7z"
    assert E.action_name(E.A_PASS) == "pass"
    # the layout module's docstring documents every block of the layout
    for token in ("0..33", "34..67", "68..101", "102..135", "136", "141", "142", "143", "144"):
        assert token in E.layout.__doc__


@pytest.mark.parametrize("bad", [-1, 145, 3.5, "discard 0m", "jump", None])
def test_bad_action_names_and_indices_raise(bad):
    with pytest.raises(ValueError):
        if isinstance(bad, str):
            E.parse_action(bad)
        else:
            E.action_name(bad)


# ---------------------------------------------------------------- Python API


def test_illegal_action_raises_naming_it(engine_warm):
    g = E.Game().reset(seed=3)
    assert g.current_player == 0 and g.phase == "turn"
    with pytest.raises(ValueError, match="illegal action 'pong'"):
        g.step("pong")
    held = np.flatnonzero(g.state["hands"][0] == 0)
    with pytest.raises(ValueError, match=f"discard {kind_name(int(held[0]))}"):
        g.step(E.A_DISCARD + int(held[0]))
    with pytest.raises(ValueError, match=r"must be an integer in 0\.\.144, got 999$"):
        g.step(999)
    # nothing changed
    g.check()
    assert g.state["table"]["steps"] == 0


def test_legal_mask_function_matches_the_list(engine_warm):
    g = E.Game().reset(seed=12)
    m = E.legal_mask(g)
    assert m.dtype == bool and m.shape == (E.N_ACTIONS,)
    assert list(np.flatnonzero(m)) == g.legal_actions()
    assert sorted(g.state["legal"][: g.state["table"]["n_legal"]]) == g.legal_actions()
    with pytest.raises(ValueError, match="expects a Game"):
        E.legal_mask(g.state)


def test_step_after_done_and_before_reset_raise(engine_warm):
    with pytest.raises(ValueError, match="reset"):
        E.Game().legal_actions()
    g = _random_game(5, np.random.default_rng(5), check=False)
    assert g.done and g.current_player == -1 and g.legal_actions() == []
    with pytest.raises(ValueError, match="over"):
        g.step("pass")


@pytest.mark.parametrize(
    "kwargs",
    [{"seed": -1}, {"seed": 2**32}, {"seed": 1.5}, {"dealer": 4}, {"wall": "123m"}, {"wall": [0] * 136}],
)
def test_reset_validates(kwargs):
    with pytest.raises(ValueError):
        E.Game().reset(**kwargs)


@pytest.mark.parametrize("flag", [True, False, np.True_, np.False_])
def test_bools_are_not_integers_anywhere_in_the_engine_api(engine_warm, flag):
    """Issue 9: ``Game.step(True)`` played action 1.  A bool (Python or numpy) is
    no action, seat, dealer, seed, match_hand, streak or batch size: every
    public engine API taking an int raises a ValueError naming the value."""
    g = E.Game().reset(seed=3)
    before = g.state["table"].copy()
    for call in (
        lambda: g.step(flag),
        lambda: E.action_name(flag),
        lambda: E._check_action_index(flag),
        lambda: g.observation(flag),
        lambda: E.Game().reset(seed=flag),
        lambda: E.Game().reset(seed=1, dealer=flag),
        lambda: E.Game().reset(seed=1, match_hand=flag),
        lambda: E.Game().reset(seed=1, streak=flag),
        lambda: E.build_wall(["123456789m1234p", "123456789p1234s", "123456789s1234z", "556677z11223m35p"],
                             dealer=flag),
        lambda: E.new_state(flag),
    ):
        with pytest.raises(ValueError, match=str(bool(flag))):
            call()
    assert np.array_equal(g.state["table"], before)  # nothing was played


def test_engine_integers_accept_numpy_and_reject_floats_and_overflow(engine_warm):
    """numpy integers are integers (bots and envs pass them); floats, strings and
    values beyond the record's columns are not (a ValueError, never an OverflowError)."""
    g = E.Game().reset(seed=np.int64(3), dealer=np.int8(1), match_hand=np.uint16(2), streak=np.int32(1))
    assert (g.current_player, g.record) == (1, None)
    g.step(np.int16(g.legal_actions()[0]))
    assert g.observation(np.uint8(2))["seat"] == 2
    for kwargs in ({"seed": 3.0}, {"dealer": 1.0}, {"match_hand": -1}, {"match_hand": 2**31},
                   {"streak": 2**15}, {"streak": 2**64}, {"streak": "1"}, {"seed": 2**64}):
        with pytest.raises(ValueError, match=next(iter(kwargs))):
            E.Game().reset(**{"seed": 1, **kwargs})
    with pytest.raises(ValueError, match="action"):
        g.step(1.0)


def test_unknown_rules_and_options_raise():
    with pytest.raises(ValueError, match="unknown rule set"):
        E.Game("riichi")
    with pytest.raises(ValueError, match="dicard_win"):
        E.Game(options={"dicard_win": False})


def test_K_3_1_deal_and_first_turn(engine_warm):
    """K-3.1: the dealer gets 14 tiles and acts first; the others 13."""
    for dealer in range(4):
        g = E.Game().reset(seed=11, dealer=dealer)
        sizes = g.state["hands"].sum(axis=1)
        assert sizes[dealer] == 14 and sorted(sizes) == [13, 13, 13, 14]
        assert g.current_player == dealer and g.phase == "turn"
        assert g.tiles_left == 136 - 53
        g.check()


def test_build_wall_deals_the_given_hands(engine_warm):
    hands = ["123456789m1234p", "123456789p1234s", "123456789s1234z", "556677z11223m35p"]
    wall = E.build_wall(hands, draws="9p", replacements="4z", dealer=1)
    g = E.Game().reset(wall=wall, dealer=1)
    from caishen.sim.tiles import parse

    for s in range(4):
        want = parse(hands[s]).copy()
        if s == 1:
            want[E._tiles.kind_index(9, "p")] += 1
        assert np.array_equal(g.state["hands"][s], want), s
    assert g.state["wall"][135] == E._tiles.kind_index(4, "z")
    with pytest.raises(ValueError, match="13 tiles"):
        E.build_wall(["123m"] * 4)
    with pytest.raises(ValueError, match="used 5 times"):
        E.build_wall(["1111m222233334m", "5555m666677778m", "9999m123456789p", "123456789s1234z"], draws="1m")


# ---------------------------------------------------------------- checker


def test_check_state_detects_violations(engine_warm):
    """The checker is not vacuous: each corruption is reported."""
    base = E.Game().reset(seed=21)
    base.check()

    def corrupted(fn, message):
        g = E.replay(base.log_lines())
        fn(g.state)
        with pytest.raises(ValueError, match=message):
            g.check()

    def lose_tile(st):
        k = int(np.flatnonzero(st["hands"][1])[0])
        st["hands"][1, k] -= 1

    def duplicate_tile(st):
        k = int(np.flatnonzero(st["hands"][1])[0])
        st["hands"][1, k] += 1
        st["wall"][100] = (st["wall"][100] + 1) % 34

    def unbalanced_score(st):
        st["seat"][2]["score"] = 8

    def wrong_seat(st):
        st["table"]["to_act"] = 2

    def joker_meld(st):
        st["seat"][3]["n_melds"] = 1
        st["meld_type"][3, 0] = 2
        st["meld_kind"][3, 0] = 31

    def stale_ready_flag(st):
        st["seat"][2]["ready"] ^= 1

    corrupted(lose_tile, "tiles not conserved|wrong number")
    corrupted(duplicate_tile, "tiles not conserved|wrong number")
    corrupted(unbalanced_score, "sum to zero")
    corrupted(wrong_seat, "seat to act|wrong number")
    corrupted(joker_meld, "joker|meld|tiles")
    corrupted(stale_ready_flag, "ready flag")

    def force_elsewhere(st):  # K-2.5 (E3): only the seat on its turn can be forced
        st["seat"][(int(st["table"]["to_act"]) + 1) % 4]["force_joker"] = 1

    def links_without_a_win(st):  # K-9.4 / K-10: counted links belong to a win
        st["seat"][2]["win_joker_links"] = 1

    corrupted(force_elsewhere, "K-2.5")
    corrupted(links_without_a_win, "counted chain links")
    # a stale claim option: seat 2 is offered a pong it has passed (K-4.4)
    hands = ["123456789m1234p", "123456789p1234s", "11z123456789s23z", "556677z11223m35p"]
    g = E.Game().reset(wall=E.build_wall(hands, draws="1z"))
    g.step("discard 1z")
    assert g.current_player == 2 and g.legal_mask()[E.A_PONG]
    g.check()
    g.state["seat"][2]["passed_pong"] |= 1 << 27
    with pytest.raises(ValueError, match="illegal action"):
        g.check()
    with pytest.raises(ValueError, match="expects a Game"):
        E.check_state(base.state)


# ---------------------------------------------------------------- batch self-play


def test_100k_random_hands_checked_after_every_step(engine_warm):
    """100,000 hands of uniformly random legal play, the compiled checker after
    the deal and after every step (conservation, hands, melds, mask legality,
    zero-sum scores); then the records' own invariants."""
    n = 100_000
    rec = random_batch(n, seed=20240601, check=True)
    assert set(rec) == {name for name, _ in record_columns("kaihua")} | {f"piao_chance_{s}" for s in range(4)}
    for name, dt in record_columns("kaihua"):
        assert rec[name].dtype == dt and len(rec[name]) == n
    scores = np.stack([rec[f"score_{s}"] for s in range(4)], axis=1)
    assert (scores.sum(axis=1) == 0).all()  # K-8.5
    draw = rec["winner"] == -1
    assert (scores[draw] == 0).all()  # K-8.4
    assert (rec["tiles_left"][draw] == 20).all()  # K-3.4
    assert (rec["tiles_left"] >= 20).all()
    assert (rec["win_type"][draw] == -1).all() and (rec["winners_mask"][draw] == 0).all()
    won = ~draw
    assert ((rec["winners_mask"][won] >> rec["winner"][won]) & 1).all()
    assert (scores[won, :][np.arange(won.sum()), rec["winner"][won]] > 0).all()
    # every way of ending a hand happens in random play
    for wt in (-1, 0, 1, 2):
        assert (rec["win_type"] == wt).any(), wt
    assert ((rec["discarder"] >= 0) == (rec["win_type"] >= 1)).all()
    caishen = np.stack([rec[f"caishen_{s}"] for s in range(4)], axis=1)
    assert (caishen.sum(axis=1) <= 4).all()
    piao = np.stack([rec[f"piao_{s}"] for s in range(4)], axis=1)
    assert (caishen.sum(axis=1) + piao.sum(axis=1) <= 4).all()
    assert rec["chain_len"].max() >= 1
    assert (rec["chain_len"] == rec["chain_piao"] + rec["chain_kong"]).all()
    # K-9.4 / K-10: the record shows the links the win counted: none on a
    # discard win or a draw, and the flags agree (FLAG_CHAIN / FLAG_JOKER_LINK)
    assert (rec["chain_len"][rec["win_type"] != 0] == 0).all()
    assert ((rec["hand_flags"] & FLAG_CHAIN != 0) == (rec["chain_len"] > 0)).all()
    assert ((rec["hand_flags"] & FLAG_JOKER_LINK != 0) == (rec["chain_piao"] > 0)).all()
    assert (rec["exponent"] >= rec["chain_len"]).all()  # no cap by default: every counted link adds 1
    assert (rec["hand"] == np.arange(n)).all()
    assert (rec["match_hand"] == np.arange(n) % 16).all()


def test_batch_same_seed_same_hands(engine_warm):
    a = random_batch(3000, seed=99)
    b = random_batch(3000, seed=99)
    c = random_batch(3000, seed=100)
    for k in a:
        assert np.array_equal(a[k], b[k]), k
    assert not all(np.array_equal(a[k], c[k]) for k in a)


def test_random_seats_list_only_play_the_checked_games(engine_warm):
    """A random seat reads only the legal list (_legal_actions) unless the checker runs, which makes the
    mask (_legal_mask) and checks every step: both play the same hands."""
    a = random_batch(1500, seed=7)
    b = random_batch(1500, seed=7, check=True)
    for k in a:
        assert np.array_equal(a[k], b[k]), k


def test_game_seed_gives_the_batch_wall(engine_warm):
    """Game.reset(seed) deals the wall of the first hand of a batch with that seed."""
    for seed in (0, 1, 2**32 - 1):
        st = E.new_state()[0]
        name, r = E.load_rules()
        rec = E.new_records(1)
        SP._play_batch(seed, 1, 16, policy_table("random"), False, st, rec, new_work(), np.zeros((1, 4), np.int8),
                       (name, r))
        assert np.array_equal(E.Game().reset(seed=seed).state["wall"], st["wall"])


def test_batch_dealer_rotation_inside_matches(engine_warm):
    """K-3.3 in the batch: 流局 keeps the dealer, a win moves the deal on; matches restart at seat 0."""
    rec = random_batch(2000, seed=5, match_len=8)
    for i in range(1, 2000):
        if rec["match_hand"][i] == 0:
            assert rec["dealer"][i] == 0  # K-3.2
            continue
        prev = rec["dealer"][i - 1]
        want = prev if rec["winner"][i - 1] == -1 else (prev + 1) % 4
        assert rec["dealer"][i] == want
    rec = random_batch(2000, seed=5, match_len=8, options={"dealer_rotation": "winner_stays"})
    for i in range(1, 2000):
        if rec["match_hand"][i] == 0:
            continue
        prev = rec["dealer"][i - 1]
        stays = rec["winner"][i - 1] == -1 or (rec["winners_mask"][i - 1] >> prev) & 1
        assert rec["dealer"][i] == (prev if stays else (prev + 1) % 4)


@pytest.mark.parametrize(
    "kwargs",
    [{"n_hands": -1}, {"seed": -5}, {"seed": 2**32}, {"match_len": 0}, {"policies": "alien"},
     {"policies": ("random",) * 3}, {"rules": "riichi"}],
)
def test_play_batch_validates(kwargs):
    args = {"n_hands": 1, "seed": 0, **kwargs}
    with pytest.raises(ValueError):
        random_batch(**args)


def test_batch_options_reach_the_kernel(engine_warm):
    """reserved_tiles (K-3.4) and discard_win (K-7.1) change the batch's hands."""
    rec = random_batch(500, seed=8, options={"reserved_tiles": 0})
    assert (rec["tiles_left"][rec["winner"] == -1] == 0).all()
    rec = random_batch(3000, seed=8, options={"discard_win": False})
    assert not (rec["win_type"] >= 1).any()


# ---------------------------------------------------------------- replay and log


def test_replay_round_trip(engine_warm, tmp_path):
    rng = np.random.default_rng(7)
    for seed in range(12):
        g = _random_game(seed, rng, check=False)
        lines = g.log_lines()
        assert json.loads(lines[0])["event"] == "reset" and json.loads(lines[-1])["event"] == "result"
        g2 = E.replay(lines)
        a, b = _game_state(g), _game_state(g2)
        for f in a:
            assert np.array_equal(a[f], b[f]), f
        assert g2.record == g.record
        path = tmp_path / f"hand{seed}.jsonl"
        g.write_log(path)
        g3 = E.replay(path.read_text(encoding="utf-8").splitlines())
        assert all(np.array_equal(a[f], g3.state[f]) for f in a)


def test_replay_rejects_tampered_logs(engine_warm):
    g = _random_game(4, np.random.default_rng(4), check=False)
    events = [json.loads(x) for x in g.log_lines()]
    bad = [dict(e) for e in events]
    bad[-1]["score_0"] += 1
    with pytest.raises(ValueError, match="differs"):
        E.replay(bad)
    bad = [dict(e) for e in events]
    bad[1]["seat"] = (bad[1]["seat"] + 1) % 4
    with pytest.raises(ValueError, match="is to act"):
        E.replay(bad)
    with pytest.raises(ValueError, match="reset"):
        E.replay(events[1:])


# ---------------------------------------------------------------- observations


def test_observation_hides_what_a_seat_cannot_see(engine_warm):
    """check_state(observations=True): every seat's observation is unchanged when
    the tiles hidden from it are dealt out again at random."""
    rng = np.random.default_rng(17)
    checked = 0
    for seed in range(25):
        g = E.Game().reset(seed=seed)
        while not g.done:
            if rng.random() < 0.2:
                E.check_state(g, observations=True)
                checked += 1
            g.step(int(rng.choice(g.legal_actions())))
        E.check_state(g, observations=True)
    assert checked > 100


def test_observation_check_catches_a_leak(engine_warm, monkeypatch):
    """The observation check is not vacuous: an observation that shows the next
    wall tile (or another seat's hand) is caught."""
    g = E.Game().reset(seed=3)
    g.step(g.legal_actions()[0])
    E.check_state(g, observations=True)
    original = E.Game.observation

    def leaky_wall(self, seat):
        obs = original(self, seat)
        obs["next_tile"] = int(self.state["wall"][self.state["table"]["head"]])
        return obs

    def leaky_hand(self, seat):
        obs = original(self, seat)
        obs["left_hand"] = self.state["hands"][(seat + 3) % 4].copy()
        return obs

    for leak in (leaky_wall, leaky_hand):
        monkeypatch.setattr(E.Game, "observation", leak)
        with pytest.raises(ValueError, match="hidden from it"):
            E.check_state(g, observations=True)
    monkeypatch.setattr(E.Game, "observation", original)


def test_observation_hides_concealed_kong_kind(engine_warm):
    """K-5.3: the kind of another seat's concealed kong is hidden (-1); the owner sees it."""
    hands = ["1111m2345678p11z", "123456789s1234z", "2345678m234567p", "99m99p99s5566777z"]
    g = E.Game().reset(wall=E.build_wall(hands, draws="9p", replacements="3m"))
    g.step("kong_concealed 1m")
    assert g.state["meld_type"][0, 0] == MELD_KONG_CONCEALED
    assert g.observation(0)["meld_kind"][0, 0] == 0
    for seat in (1, 2, 3):
        obs = g.observation(seat)
        assert obs["meld_type"][0, 0] == MELD_KONG_CONCEALED and obs["meld_kind"][0, 0] == -1
        assert obs["drawn_tile"] == -1
    assert g.observation(0)["drawn_tile"] == 2  # the replacement draw 3m
    with pytest.raises(ValueError, match="seat"):
        g.observation(4)


# ---------------------------------------------------------------- against the pure-Python reference


@pytest.mark.parametrize(
    "options",
    [None, {"multiple_ron": True, "swap_call_max_chows": 0}, {"reserved_tiles": 0, "discard_win": False},
     {"failed_piao_factor": 3, "two_caishen_min_exponent": 0, "discard_win_max_caishen": 2},
     {"piao_requires_baotou": True, "baotou_discard_win": "other_readings"}],
)
def test_engine_matches_python_reference(engine_warm, options):
    """At every step of many random hands the engine and the slow reference
    (tests/engine_reference.py, written from the rules) agree on the seat to
    act and the exact set of legal actions; at the end on scores, winners,
    failed 飘, hands and melds.  The random policy favours claims and wins so
    that the rare branches are visited."""
    from engine_reference import RefHand

    rng = np.random.default_rng(2024)
    n_hands, n_steps, ends = 0, 0, set()
    for seed in range(200):
        g = E.Game(options=options).reset(seed=seed, dealer=seed % 4)
        ref = RefHand(g.state["wall"], seed % 4, g.rules)
        while not g.done:
            assert g.current_player == ref.to_act
            legal = set(g.legal_actions())
            assert legal == ref.legal(), (seed, g.phase, sorted(legal), sorted(ref.legal()))
            special = [a for a in legal if a >= E.A_KONG_CONCEALED and a != E.A_PASS]
            a = int(rng.choice(special)) if special and rng.random() < 0.6 else int(rng.choice(sorted(legal)))
            g.step(a)
            ref.step(a)
            n_steps += 1
        assert ref.done and ref.legal() == set()
        r = g.record
        assert [r[f"score_{s}"] for s in range(4)] == ref.scores
        assert r["winners_mask"] == sum(1 << w for w in ref.winners)
        assert r["win_type"] == ref.win_type and r["discarder"] == ref.discarder
        assert [r[f"failed_piao_{s}"] for s in range(4)] == ref.failed
        assert [r[f"piao_{s}"] for s in range(4)] == ref.piao_count
        assert r["turns"] == ref.turns and r["tiles_left"] == ref.left()
        for s in range(4):
            assert list(g.state["hands"][s]) == ref.hands[s]
            n = len(ref.melds[s])
            assert [[int(t), int(k)] for t, k in zip(g.state["meld_type"][s][:n], g.state["meld_kind"][s][:n])] == ref.melds[s]
        if ref.winners:  # K-9.4 / K-10: the links the win counted, restated by the reference
            w = ref.winners[0]
            assert (r["chain_piao"], r["chain_kong"]) == ref.counted[w]
            assert r["chain_len"] == sum(ref.counted[w])
        else:
            assert (r["chain_len"], r["chain_piao"], r["chain_kong"]) == (0, 0, 0)
        n_hands += 1
        ends.add(r["win_type"])
    assert n_hands == 200 and n_steps > 7000
    assert len(ends) >= (3 if g.rules.discard_win else 2)


# ---------------------------------------------------------------- bans set by a claim (issue 22)


def _drew(before: np.ndarray, g: E.Game, p: int) -> bool:
    """Whether seat ``p`` drew a tile during the last step: it is on a turn with a drawn
    tile, or (a hard seat, J-4.2) it discarded automatically what it drew."""
    sc = g.state["table"]
    on_draw = g.phase == "turn" and int(sc["turn"]) == p and int(sc["drawn"]) >= 0
    return on_draw or g.state["seat"][p]["n_discards"] > before[p]["n_discards"]


@pytest.mark.parametrize("rules, options", [
    ("kaihua", None), ("kaihua", {"multiple_ron": True, "swap_call_max_chows": 0}),
    ("jiating", None), ("jiating", {"passed_pong_scope": "any"}),
])
def test_K_4_4_no_ban_set_by_a_claim_is_cleared_by_that_claim(engine_warm, rules, options):
    """K-4.4, J-3.5, J-3.6, K-4.5, K-9.2, J-4.1/J-4.2 (issue 22): after every claim step of
    many random hands, what the answer set holds when the step is over, unless the
    seat drew in that step (its next turn): a passed pong bans its kind (every kind
    under ``passed_pong_scope="any"``), also when the answer was a chow of the same
    discard; a passed win bans discard wins (Jiating); a chow beyond
    ``swap_call_max_chows`` bans its swap end.  And no claim step closes another
    seat's 飘 circle or changes a declaration without that seat's draw."""
    from caishen.sim.hand import _shanten

    rng = np.random.default_rng(22)
    tabs = E.hand_tables()
    n_claims = n_chow_passes = n_passed_wins = 0
    for seed in range(300):
        g = E.Game(rules, options).reset(seed=seed, dealer=seed % 4)
        ep = g._ep
        while not g.done:
            legal = set(g.legal_actions())
            claim = g.phase in ("claim", "rob")
            special = [a for a in legal if a >= E.A_CHOW_LOW and a not in (E.A_PASS, E.A_WIN)]
            chows = [a for a in special if a <= E.A_CHOW_HIGH]
            discards = sorted(a for a in legal if a < E.A_DECLARE)
            if E.A_WIN in legal and rng.random() < 0.5:
                a = E.A_WIN
            elif E.A_PONG in legal and chows and rng.random() < 0.8:
                a = int(rng.choice(chows))  # the K-4.4 case: a chow of a tile the seat could pong
            elif claim and special and rng.random() < 0.6:
                a = int(rng.choice(special))
            elif not claim and discards and rng.random() < 0.9:  # towards ready hands: wins to pass
                h = g.state["hands"][g.current_player].copy()
                after_discard = []
                for d in discards:
                    h[d] -= 1
                    after_discard.append(_shanten(h, ep.joker, tabs))
                    h[d] += 1
                best = min(after_discard)
                a = int(rng.choice([d for d, v in zip(discards, after_discard) if v == best]))
            else:
                a = int(rng.choice(sorted(legal)))
            s = g.current_player
            k = int(g.state["table"]["tile"])
            before = g.state["seat"].copy()
            g.step(a)
            if not claim:
                continue
            n_claims += 1
            after = g.state["seat"]
            for p in range(4):
                if _drew(before, g, p):
                    continue
                assert after[p]["decl"] == before[p]["decl"], (seed, p)
                kept = int(before[p]["passed_pong"])  # earlier bans stay, except that a later
                if p == s and a != E.A_PASS and ep.passed_pong_claim_clears:  # claim ends them (K-4.4)
                    kept = 0
                assert int(after[p]["passed_pong"]) & kept == kept, (seed, p, "an earlier passed pong was lifted")
                if before[p]["circle_open"]:
                    assert after[p]["circle_open"], (seed, p, "a claim closed a 飘 circle (K-9.2)")
                if before[p]["passed_win"]:
                    assert after[p]["passed_win"], (seed, p, "a claim lifted a passed win (J-3.5)")
            if a == E.A_WIN or _drew(before, g, s):
                continue
            if E.A_PONG in legal and a not in (E.A_PONG, E.A_KONG_EXPOSED) and ep.passed_pong:
                bits = int(after[s]["passed_pong"])
                want = (1 << E.N_KINDS) - 1 if ep.passed_pong == 2 else 1 << k
                assert bits & want == want, (seed, s, E.action_name(a), "the passed pong was lifted (K-4.4)")
                if a != E.A_PASS:
                    n_chow_passes += 1
            if E.A_WIN in legal and ep.passed_win:
                assert after[s]["passed_win"], (seed, s, "the passed win was lifted (J-3.5)")
                n_passed_wins += 1
            if E.A_CHOW_LOW <= a <= E.A_CHOW_HIGH and after[s]["n_chows"] > ep.swap_max_chows:
                r = k % 9
                end = {E.A_CHOW_LOW: k + 3 if r <= 5 else -1, E.A_CHOW_HIGH: k - 3 if r >= 3 else -1}.get(a, -1)
                assert after[s]["swap_forbid"] == end, (seed, s, "the swap ban (K-4.5)")
    assert n_claims > 1000
    if rules == "kaihua":
        assert n_chow_passes >= 10, n_chow_passes  # the K-4.4 case itself: a chow of a tile it could pong
    else:
        assert n_passed_wins >= 10, n_passed_wins
