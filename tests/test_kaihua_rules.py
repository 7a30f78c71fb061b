"""Kaihua rules through the engine: one test (or a few) per rule ID.

Each test deals a hand-constructed wall (:func:`caishen.sim.engine.build_wall`),
drives the engine with actions into the situation of the rule, and checks
the outcome (legal actions, who is asked, melds, draws, scores, records).
The state checker runs after every step.  Hand types and payments
themselves are tested against the scoring vectors in
``test_kaihua_scoring.py``; here they are checked as the engine applies them.
"""

from __future__ import annotations

import functools

import numpy as np
import pytest

from caishen.sim import engine as E
from caishen.sim.tiles import CAISHEN, MELD_CHOW, MELD_KONG_ADDED, MELD_KONG_CONCEALED, MELD_KONG_EXPOSED, MELD_PONG

import scenario
from scenario import K, act, legal

deal = functools.partial(scenario.deal, "kaihua")  #: a kaihua game on a hand-built wall, checked


def pass_claims(g: E.Game) -> list[int]:
    """Pass every pending claim; the seats asked, in order."""
    asked = []
    while g.phase in ("claim", "rob"):
        asked.append(g.current_player)
        act(g, "pass")
    return asked


def tsumogiri(g: E.Game) -> None:
    """The seat to act discards the tile it just drew; pending claims are passed."""
    drawn = int(g.state["table"]["drawn"])
    assert drawn >= 0
    act(g, f"discard {E._tiles.kind_name(drawn)}")
    pass_claims(g)


def scores(g: E.Game) -> list[int]:
    return [g.record[f"score_{s}"] for s in range(4)]


# ------------------------------------------------------------------ K-2 财神


def test_K_2_2_discarded_caishen_is_never_claimed(engine_warm):
    """K-2.2: seat 1 holds three 财神 (pong / kong shape) and nobody is asked."""
    g = deal(["5z19m19p19s1234z67z", "555z28m28p28s1234z", "347m37p37s1234z67z", "456m456p456s1234z"], draws="6z7z")
    act(g, "discard 5z")
    assert g.phase == "turn" and g.current_player == 1  # straight to the next draw
    assert g.state["hands"][1].sum() == 14
    assert [e["name"] for e in g.events[1:]] == ["discard 5z"]


def test_K_2_3_caishen_never_in_a_meld(engine_warm):
    """K-2.3: four 财神 in hand are never a concealed kong (and K-2.4 forces a 财神 discard)."""
    g = deal(["5555z19m19p19s123z", "28m28p28s1234z67z3m", "37m37p37s1234z67z4m", "456m456p456s1234z"], draws="4z")
    assert legal(g) == {"discard 5z"}
    assert not any(a in legal(g) for a in ("kong_concealed 5z",))


def test_K_2_4_three_caishen_cannot_win_and_must_discard_one(engine_warm):
    """K-2.4: a complete 14 with three 财神 is no win; only 财神 may be discarded."""
    g = deal(["555z123m456m789m1p", "28m28p28s1234z67z3m", "37m37p37s1234z67z4m", "456m456p456s1234z"], draws="1p")
    assert "win" not in legal(g)
    assert legal(g) == {"discard 5z"}
    act(g, "discard 5z")
    pass_claims(g)
    assert g.record is None and g.state["hands"][0, CAISHEN] == 2


def test_K_2_5_baotou_hand_drawing_caishen_must_discard_it(engine_warm):
    """K-2.5: 爆头 shape (13 tiles minus one 财神 are four sets) + a drawn 财神:
    no win, only a 财神 discard; with any other draw the hand wins as 爆头 (K-6.2)."""
    hands = ["5z123m456m789m123p", "28m28p28s1234z67z3m", "37m37p37s1234z67z4m", "456m456p456s1234z"]
    g = deal(hands, draws="5z")
    assert legal(g) == {"discard 5z"}
    g = deal(hands, draws="9s")
    assert "win" in legal(g)
    act(g, "win")
    r = g.record
    assert r["winner"] == 0 and r["win_type"] == 0 and r["exponent"] == 1  # 爆头 x2
    assert scores(g) == [24, -8, -8, -8]  # dealer self-draw 4 x 2**1 from each (K-8.1)


def test_K_2_6_two_caishen_need_an_exponent(engine_warm):
    """K-2.6: a 平胡 with exactly two 财神 is not a win (exponent 0 < 1); the option 0 lifts the gate."""
    hands = ["123m456m789m14p55z", "28m28p28s1234z67z3m", "37m37p37s1234z67z4m", "456m456p456s1234z"]
    assert "win" not in legal(deal(hands, draws="1p"))
    g = deal(hands, draws="1p", two_caishen_min_exponent=0)
    assert "win" in legal(g)
    act(g, "win")
    assert g.record["exponent"] == 0 and scores(g) == [12, -4, -4, -4]


# ------------------------------------------------------------------ K-3 deal, dealer, wall end


def _tenhou(dealer: int, **options) -> E.Game:
    """The dealer wins on the 14 dealt tiles."""
    hands = ["28m28p28s1234z67z3m", "37m37p37s1234z67z4m", "456m456p456s1234z", "28m28p28s1234z67z3m"]
    hands[dealer] = "123m456m789m123p9s"
    others = [s for s in range(4) if s != dealer]
    pool = ["28m28p28s1234z67z3m", "37m37p37s1234z67z4m", "456m456p45s1234z6z"]
    for s, h in zip(others, pool):
        hands[s] = h
    g = deal(hands, draws="9s", dealer=dealer, **options)
    act(g, "win")
    return g


def test_K_3_3_dealer_rotation(engine_warm):
    """K-3.3: after a win the deal passes to the next seat, whoever won; after a
    流局 the dealer stays; option winner_stays keeps a winning dealer."""
    assert _tenhou(2).record["next_dealer"] == 3
    assert _tenhou(2, dealer_rotation="winner_stays").record["next_dealer"] == 2
    # a non-dealer wins on the dealer's discard: the deal moves on in both modes
    hands = ["4s19m19p19s1234z67z", "123m456m789m11p56s", "37m37p37s1234z67z4m", "456m456p456s1234z"]
    hands[3] = "2468m2468p13579s"
    for rotation in ("next_after_win", "winner_stays"):
        g = deal(hands, draws="6z", dealer_rotation=rotation)
        act(g, "discard 4s", "win")
        assert g.record["winner"] == 1 and g.record["next_dealer"] == 1
    # a drawn hand keeps the dealer
    g = deal(hands, draws="6z", dealer=0)
    act(g, "discard 4s", "pass")
    while not g.done:
        tsumogiri(g)
    assert g.record["winner"] == -1 and g.record["next_dealer"] == 0


def test_K_3_4_reserve_liuju_and_no_kong_into_the_reserve(engine_warm):
    """K-3.4: the last 20 tiles are never drawn: when a normal draw is due with 20
    left the hand is a 流局 scoring 0; a kong may be declared only while more
    than 20 remain."""
    hands = ["9m19p19s1234z67z25m", "28m28p28s1234z67z3m", "37m37p37s1234z67z4m", "1111m456p456s123z"]
    g = deal(hands, draws="5m")
    seen = {}
    while not g.done:
        if g.current_player == 3 and g.phase == "turn":
            seen[g.tiles_left] = "kong_concealed 1m" in legal(g)
        tsumogiri(g)
    assert seen[20] is False  # the last draw left 20: no kong
    assert all(v for left, v in seen.items() if left > 20) and len(seen) > 10
    r = g.record
    assert r["winner"] == -1 and r["win_type"] == -1 and r["tiles_left"] == 20
    assert scores(g) == [0, 0, 0, 0]  # K-8.4
    assert r["turns"] == 64  # the dealer's first discard + 63 draws


def test_K_3_4_reserved_tiles_option(engine_warm):
    hands = ["9m19p19s1234z67z25m", "28m28p28s1234z67z3m", "37m37p37s1234z67z4m", "1111m456p456s123z"]
    g = deal(hands, draws="5m", reserved_tiles=0)
    while not g.done:
        tsumogiri(g)
    assert g.record["tiles_left"] == 0 and g.record["winner"] == -1


# ------------------------------------------------------------------ K-4 claims


_K42 = ["3m1889p19s1234z67z", "2445m22p77p9s1234z", "33m5566p2277s123z", "12m44p33s6788s467z"]


def test_K_4_2_claims_chow_only_next_seat_pong_any(engine_warm):
    """K-4.2: on a 3m discard the pong seat (2) is asked, then the next seat (1) for
    its chows; seat 3 holding 1m 2m is not the next seat and is never asked."""
    g = deal(_K42, draws="5s")
    act(g, "discard 3m")
    assert g.phase == "claim" and g.current_player == 2
    assert legal(g) == {"pong", "pass"}
    act(g, "pass")
    assert g.current_player == 1
    assert legal(g) == {"chow_low", "chow_mid", "pass"}  # 3m45m and 2m3m4m; no 1m
    act(g, "chow_mid")
    st = g.state
    assert st["meld_type"][1, 0] == MELD_CHOW and st["meld_kind"][1, 0] == K("2m")
    assert g.phase == "turn" and g.current_player == 1
    assert st["hands"][1].sum() == 11 and "win" not in legal(g)  # discard without drawing (K-4.1)
    assert not any(n.startswith("kong") for n in legal(g))
    assert g.tiles_left == 83  # nothing drawn
    assert st["dflags"][0, 0] & E.DF_CLAIMED
    assert 3 not in [e.get("seat") for e in g.events[1:]]


def test_K_4_2_exposed_kong_on_a_discard(engine_warm):
    """K-4.2 / K-5.1: three held -> exposed kong, then a replacement draw from the tail (K-5.4)."""
    hands = list(_K42)
    hands[2] = "333m5566p2277s12z"
    g = deal(hands, draws="5s", replacements="7z")
    act(g, "discard 3m")
    assert g.current_player == 2 and legal(g) == {"pong", "kong_exposed", "pass"}  # K-4.6
    act(g, "kong_exposed")
    st = g.state
    assert st["meld_type"][2, 0] == MELD_KONG_EXPOSED and st["meld_kind"][2, 0] == K("3m")
    assert g.phase == "turn" and g.current_player == 2
    assert st["table"]["drawn"] == K("7z") and st["table"]["replacement"] == 1
    assert st["table"]["tail"] == 134 and g.tiles_left == 82
    assert st["seat"][2]["chain_kong"] == 1  # K-6.5 link


def test_K_4_3_priority_win_then_pong_then_chow(engine_warm):
    """K-4.3: claimants are asked win > pong/kong > chow: seat 3 (win), seat 2 (pong), seat 1 (chow)."""
    hands = ["4s19m19p19s1234z67z", "56s28m28p28s1234z7z", "44s37m37p37s1234z6z", "123p456p789p99m35s"]
    g = deal(hands, draws="7z")
    act(g, "discard 4s")
    order = []
    while g.phase == "claim":
        order.append((g.current_player, sorted(legal(g) - {"pass"})))
        act(g, "pass")
    assert order == [(3, ["win"]), (2, ["pong"]), (1, ["chow_low"])]
    assert g.phase == "turn" and g.current_player == 1  # everybody passed: next draw


def test_K_4_3_head_bump_and_multiple_ron(engine_warm):
    """K-4.3: two seats can win on one discard: the first in turn order wins
    (head bump); if it passes the second may; option multiple_ron pays both."""
    hands = ["4s19m19p19s1234z67z", "123m456m789m11p56s", "37m37p37s1234z67z4m", "123p456p789p11z35s"]
    g = deal(hands, draws="7z")
    act(g, "discard 4s")
    assert g.current_player == 1 and legal(g) == {"win", "pass"}
    act(g, "win")
    r = g.record
    assert r["winner"] == 1 and r["winners_mask"] == 0b0010 and r["win_type"] == 1 and r["discarder"] == 0
    assert scores(g) == [-8, 8, 0, 0]  # K-8.3: the discarder pays the three shares 4 + 2 + 2
    assert 3 not in [e.get("seat") for e in g.events[1:]]

    g = deal(hands, draws="7z")
    act(g, "discard 4s", "pass")
    assert g.current_player == 3
    act(g, "win")
    assert g.record["winner"] == 3 and scores(g) == [-8, 0, 0, 8]

    g = deal(hands, draws="7z", multiple_ron=True)
    act(g, "discard 4s", "win")
    assert not g.done and g.current_player == 3 and legal(g) == {"win", "pass"}
    act(g, "win")
    r = g.record
    assert r["winner"] == 1 and r["winners_mask"] == 0b1010
    assert scores(g) == [-16, 8, 0, 8]
    assert g.state["hands"][1].sum() == 14 and g.state["hands"][3].sum() == 13  # one tile, one hand


def test_K_4_4_passed_pong_until_own_next_turn(engine_warm):
    """K-4.4: seat 2 passes a pong of 7z; the next 7z (seat 1's) is not offered; it
    would have been without the pass."""
    hands = ["7z19m19p19s1234z6z2m", "7z6z28m28p28s1234z3m", "77z37m37p37s1234z4m", "456m456p456s123z9s"]
    g = deal(hands, draws="6z1s")
    act(g, "discard 7z")
    assert g.current_player == 2 and legal(g) == {"pong", "pass"}
    act(g, "pass")
    assert g.observation(2)["passed_pong"][K("7z")]
    assert g.current_player == 1 and g.phase == "turn"
    act(g, "discard 7z")
    assert g.phase == "turn" and g.current_player == 2  # not asked: straight to seat 2's draw
    assert not g.observation(2)["passed_pong"].any()  # the ban ends with seat 2's turn
    # control: without the pass, seat 1's 7z is offered
    g = deal(hands, draws="6z1s")
    act(g, "discard 6z")
    pass_claims(g)
    act(g, "discard 7z")
    assert g.phase == "claim" and g.current_player == 2 and "pong" in legal(g)


def test_K_4_4_chow_of_the_passed_pong_keeps_the_ban(engine_warm):
    """K-4.4 (issue 22): seat 1 is offered chow_low, pong and pass on the dealer's 3m and
    chows; answering the same discard with a chow is not its next turn, so seat 2's 3m,
    before seat 1's next draw, is not offered to it (it still holds 3m3m)."""
    other = "1z2z3z4z6z7z1m5m9m1p5p9p1s"
    g = deal([other, "3m3m4m5m1z2z3z4z6z7z1m9m1p", other, other], draws="3m3m")
    act(g, "discard 3m")
    assert g.current_player == 1 and legal(g) == {"chow_low", "pong", "pass"}
    act(g, "chow_low")
    assert g.observation(1)["passed_pong"][K("3m")]  # set by the chow's own claim step and kept
    act(g, "discard 1z")
    assert pass_claims(g) == [] and g.current_player == 2 and g.phase == "turn"
    act(g, "discard 3m")
    assert g.state["hands"][1, K("3m")] == 2
    assert g.phase == "turn" and g.current_player == 3  # seat 1 is not asked: straight to seat 3's draw
    assert [e["name"] for e in g.events[1:]] == ["discard 3m", "chow_low", "discard 1z", "discard 3m"]
    assert not g.observation(3)["passed_pong"].any() and g.observation(1)["passed_pong"][K("3m")]
    tsumogiri(g)
    assert g.current_player == 0 and g.phase == "turn"
    tsumogiri(g)
    assert g.current_player == 1 and not g.observation(1)["passed_pong"].any()  # its next draw ends it


def test_K_4_4_a_later_claim_ends_the_ban(engine_warm):
    """K-4.4: seat 2 passes the pong of the dealer's 7z; its chow of seat 1's 3m (a later
    claim, before its next draw) is its next turn and lifts the ban: seat 3's 7z is
    offered to it again."""
    hands = ["7z19m19p19s1234z6z2m", "5s6z28m28p28s1234z3m", "77z57m37p37s1234z4m", "456m456p456s123z9s"]
    g = deal(hands, draws="6z" + "9p" + "7z")
    act(g, "discard 7z")
    assert g.current_player == 2 and legal(g) == {"pong", "pass"}
    act(g, "pass")
    assert g.current_player == 1 and g.observation(2)["passed_pong"][K("7z")]
    act(g, "discard 3m")
    assert g.current_player == 2 and "chow_low" in legal(g)
    act(g, "chow_low")
    assert not g.observation(2)["passed_pong"].any()
    act(g, "discard 1z")
    pass_claims(g)
    assert g.current_player == 3
    act(g, "discard 7z")
    assert g.phase == "claim" and g.current_player == 2 and "pong" in legal(g)


@pytest.mark.parametrize("swap_max,allowed", [(2, True), (0, False)])
@pytest.mark.parametrize("claimed,held,variant,swap_end", [("6s", "45s", "chow_high", "3s"), ("3s", "45s", "chow_low", "6s")])
def test_K_4_5_swap_call(engine_warm, swap_max, allowed, claimed, held, variant, swap_end):
    """K-4.5: after chowing, discarding the other end of the same run is allowed on
    the first ``swap_call_max_chows`` chows only."""
    hands = [f"{claimed}19m19p1234z67z89s", f"{held}{swap_end}28m28p1234z67z", "37m37p37s1234z67z4m", "456m456p2378s1z6z7z"]
    g = deal(hands, draws="4z", swap_call_max_chows=swap_max)
    act(g, f"discard {claimed}")
    pass_claims_until = g.current_player
    assert pass_claims_until == 1 and variant in legal(g)
    act(g, variant)
    assert (f"discard {swap_end}" in legal(g)) is allowed
    assert f"discard {claimed}" not in legal(g)  # seat 1 holds no other copy


def test_K_4_5_third_chow_bans_the_swap(engine_warm):
    """K-4.5 default: allowed on the first two chows, banned on the third."""
    hands = ["666s19m19p1234z67z", "3444555s28m1234z", "37m37p37s1234z67z4m", "456m456p27s12367z"]
    g = deal(hands, draws="9s" + "1s8s8p" + "2p9s1s", swap_call_max_chows=2)
    seen = []
    for n in range(3):
        assert g.current_player == 0 and g.phase == "turn"
        act(g, "discard 6s")
        assert g.current_player == 1 and "chow_high" in legal(g)
        act(g, "chow_high")
        seen.append("discard 3s" in legal(g))
        keep = [k for k in np.flatnonzero(g.state["hands"][1]) if k not in (K("3s"), K("4s"), K("5s"))]
        act(g, f"discard {E._tiles.kind_name(int(keep[0]))}")
        pass_claims(g)
        if n < 2:
            tsumogiri(g)
            tsumogiri(g)
    assert seen == [True, True, False]


_K46 = ["3m1889p19s1234z67z", "2468m22p77p9s1234z", "333m5566p2277s12z", "12m44p33s6788s467z"]


def test_K_4_6_pong_with_two_of_three_keeps_the_third(engine_warm):
    """K-4.6: with three held, pong and exposed kong are both offered; a pong
    keeps the third tile in hand."""
    g = deal(_K46, draws="5s")
    act(g, "discard 3m")
    assert g.current_player == 2 and legal(g) == {"pong", "kong_exposed", "pass"}
    act(g, "pong")
    st = g.state
    assert st["meld_type"][2, 0] == MELD_PONG and st["meld_kind"][2, 0] == K("3m")
    assert st["hands"][2, K("3m")] == 1 and st["hands"][2].sum() == 11


def test_K_4_1_no_draw_no_kong_right_after_a_pong(engine_warm):
    """K-4.1 (engine decision E2): after a pong the player discards without
    drawing; no kong or win in that turn."""
    g = deal(_K46, draws="5s")
    act(g, "discard 3m", "pong")
    assert g.tiles_left == 83 and g.state["table"]["drawn"] == -1
    assert all(n.startswith("discard") for n in legal(g))


#: seat 2 / seat 1 hold 7777p and, beside the claimed pair or partners, 11 tiles that are complete
#: (777p 789p 123s 99s) once the claimed 3m is in a meld: a concealed kong and a win would both be there
_K41 = ["3m1889p19s1234z67z", "24m7777p89p123s99s", "33m7777p89p123s99s", "12m44p45s6788s467z"]


@pytest.mark.parametrize("claim", ["pong", "chow_mid"])
def test_K_4_1_discard_at_once_after_a_chow_or_pong_no_kong_no_win(engine_warm, claim):
    """K-4.1 (engine E2): after a chow or pong the player discards at once: no draw, no
    kong, no win before that discard, though the hand holds four 7p and is complete.  The
    concealed kong is offered on the seat's next drawn turn."""
    hands = list(_K41)
    claimer = 2 if claim == "pong" else 1
    hands[3 - claimer] = "2468m22p66p9s1234z"  # the other seat: neither 24m nor 33m
    g = deal(hands, draws="5s" + "6z6z7z7z")
    act(g, "discard 3m")
    assert g.current_player == claimer and claim in legal(g)
    left = g.tiles_left
    act(g, claim)
    assert legal(g) == {f"discard {t}" for t in ("7p", "8p", "9p", "1s", "2s", "3s", "9s")}
    assert g.tiles_left == left and g.state["table"]["drawn"] == -1  # no draw
    act(g, "discard 9s")
    pass_claims(g)
    while g.current_player != claimer:
        tsumogiri(g)
    assert "kong_concealed 7p" in legal(g)


def test_K_5_2_added_kong_on_a_later_turn_then_replacement(engine_warm):
    """K-5.2: the kept fourth tile is added to the pong on a later turn, with an
    unrelated draw; K-5.4: the replacement comes from the tail; K-6.5: a link."""
    g = deal(_K46, draws="5s" + "6z9m1z", replacements="8s")
    act(g, "discard 3m", "pong")
    assert "kong_added 3m" not in legal(g)
    act(g, "discard 1z")
    pass_claims(g)
    tsumogiri(g)  # seat 3
    tsumogiri(g)  # dealer
    tsumogiri(g)  # seat 1
    assert g.current_player == 2 and g.phase == "turn"
    assert g.state["table"]["drawn"] != K("3m") and "kong_added 3m" in legal(g)
    left = g.tiles_left
    act(g, "kong_added 3m")
    st = g.state
    assert g.phase == "turn" and g.current_player == 2  # nobody can rob it
    assert st["meld_type"][2, 0] == MELD_KONG_ADDED and st["hands"][2, K("3m")] == 0
    assert st["table"]["drawn"] == K("8s") and st["table"]["replacement"] == 1
    assert st["table"]["tail"] == 134 and g.tiles_left == left - 1
    assert st["seat"][2]["chain_kong"] == 1


# ------------------------------------------------------------------ K-5 kongs


def test_K_5_3_concealed_kong_and_win_on_the_replacement(engine_warm):
    """K-5.3 / K-5.4 / K-6.5: a concealed kong, the replacement from the tail
    completes the hand: 杠上开花, one kong link, x2."""
    hands = ["1111m234p567p789s", "28m28p28s1234z67z3m", "37m37p37s1234z67z4m", "456m456p456s1234z"]
    g = deal(hands, draws="9s", replacements="9s")
    assert "kong_concealed 1m" in legal(g)
    act(g, "kong_concealed 1m")
    st = g.state
    assert st["meld_type"][0, 0] == MELD_KONG_CONCEALED and st["meld_kind"][0, 0] == 0
    assert st["table"]["drawn"] == K("9s") and st["table"]["replacement"] == 1
    assert "win" in legal(g)
    act(g, "win")
    r = g.record
    assert r["win_type"] == 0 and r["exponent"] == 1 and r["chain_kong"] == 1 and r["chain_len"] == 1
    assert scores(g) == [24, -8, -8, -8]


def test_K_6_2_gangbao_baotou_on_a_replacement_draw(engine_warm):
    """K-6.2 / K-6.5: after a concealed kong the 10 tiles minus the 财神 are three
    sets; the replacement completes the hand: 杠爆, 爆头 + one kong link = x4."""
    hands = ["1111m234p567p789s", "28m28p28s1234z67z3m", "37m37p37s1234z67z4m", "456m456p456s1234z"]
    g = deal(hands, draws="5z", replacements="9m")
    assert "win" in legal(g)  # 111m + 1m5z is already a win; the dealer kongs instead
    act(g, "kong_concealed 1m")
    assert "win" in legal(g)
    act(g, "win")
    r = g.record
    assert r["exponent"] == 2 and r["chain_kong"] == 1
    from caishen.sim.rules.kaihua import FLAG_BAOTOU

    assert r["hand_flags"] & FLAG_BAOTOU
    assert scores(g) == [48, -16, -16, -16]


def test_K_8_2_non_dealer_self_draw_payments(engine_warm):
    """K-8.1 / K-8.2: a non-dealer self-draw is paid 4 by the dealer and 2 by each other seat."""
    hands = ["19m19p19s1234z67z5m", "123m456m789m11p78s", "37m37p37s1234z67z4m", "456m456p2345s123z"]
    g = deal(hands, draws="6z9s")
    act(g, "discard 6z")
    pass_claims(g)
    assert g.current_player == 1 and "win" in legal(g)
    act(g, "win")
    assert g.record["win_type"] == 0 and scores(g) == [-4, 8, -2, -2]


_ROB = ["5p19m19p19s1234z67z", "555p28m28s1234z2p7z", "123m456m789m99s46p", "37m37p37s1234z67z4m"]


def test_K_5_5_robbing_an_added_kong(engine_warm):
    """K-5.5: seat 1 adds 5p to its pong; seat 2, waiting on 5p, robs it: a
    discard-style win (K-7.2) paid by the robbed player alone (K-8.3); the
    kong reverts to a pong and the tile goes to the winner."""
    g = deal(_ROB, draws="2z")
    act(g, "discard 5p")
    assert g.current_player == 2 and legal(g) == {"win", "pass"}  # seat 2 could win now
    act(g, "pass")
    assert g.current_player == 1 and legal(g) == {"pong", "kong_exposed", "pass"}
    act(g, "pong", "discard 2p")
    pass_claims(g)
    for _ in range(3):  # seats 2, 3, 0
        tsumogiri(g)
    assert g.current_player == 1 and "kong_added 5p" in legal(g)
    act(g, "kong_added 5p")
    assert g.phase == "rob" and g.current_player == 2 and legal(g) == {"win", "pass"}
    act(g, "win")
    r = g.record
    assert r["winner"] == 2 and r["win_type"] == 2 and r["discarder"] == 1
    assert scores(g) == [0, -8, 8, 0]  # shares 4 (dealer) + 2 + 2, all paid by seat 1
    st = g.state
    assert st["meld_type"][1, 0] == MELD_PONG and st["hands"][2, K("5p")] == 1
    assert st["seat"][1]["chain_kong"] == 0  # a robbed kong is no link


def test_K_5_5_unrobbed_added_kong_stands(engine_warm):
    g = deal(_ROB, draws="2z", replacements="6z")
    act(g, "discard 5p", "pass", "pong", "discard 2p")
    pass_claims(g)
    for _ in range(3):
        tsumogiri(g)
    act(g, "kong_added 5p", "pass")
    st = g.state
    assert g.phase == "turn" and g.current_player == 1
    assert st["meld_type"][1, 0] == MELD_KONG_ADDED and st["table"]["drawn"] == K("6z")


def test_K_5_5_concealed_kong_cannot_be_robbed(engine_warm):
    hands = ["5555p19m19p1234z6z", "28m28p28s1234z67z3m", "123m456m789m99s46p", "37m37p37s1234z67z4m"]
    g = deal(hands, draws="7z")
    act(g, "kong_concealed 5p")
    assert g.phase == "turn" and g.current_player == 0  # no rob phase


def test_K_5_5_robbing_off_without_discard_wins(engine_warm):
    """K-7.2: robbing is a discard-style win, so discard_win=False forbids it too."""
    g = deal(_ROB, draws="2z", discard_win=False)
    act(g, "discard 5p")
    assert g.current_player == 1  # seat 2 is not asked
    act(g, "pong", "discard 2p")
    pass_claims(g)
    for _ in range(3):
        tsumogiri(g)
    act(g, "kong_added 5p")
    assert g.phase == "turn" and g.current_player == 1


# ------------------------------------------------------------------ K-6 chains, K-7 discard wins


_PIAO = ["123m456m789m11p45p", "28m28p28s1234z67z3m", "37m37p37s1234z67z4m", "456m456p456s1234z"]


def test_K_6_5_piao_chain_counts_on_self_draw(engine_warm):
    """K-6.5 / K-9.1: the dealer discards a 财神 (飘财) and wins by self-draw on its
    next draw: one 飘 link, x2."""
    g = deal(_PIAO, draws="5z" + "1z2z3z" + "3p")
    act(g, "discard 5z")
    assert g.state["seat"][0]["chain_joker"] == 1 and g.state["seat"][0]["circle_open"] == 1
    for _ in range(3):
        tsumogiri(g)
    assert g.current_player == 0 and "win" in legal(g)
    act(g, "win")
    r = g.record
    assert r["exponent"] == 1 and r["chain_piao"] == 1 and r["chain_len"] == 1
    assert r["piao_0"] == 1 and scores(g) == [24, -8, -8, -8]


def test_K_6_5_non_caishen_discard_ends_the_chain(engine_warm):
    g = deal(_PIAO, draws="5z" + "1z2z3z" + "6z" + "7z9s8s" + "3p")
    act(g, "discard 5z")
    for _ in range(3):
        tsumogiri(g)
    tsumogiri(g)  # the dealer discards 6z: the chain is broken
    assert g.state["seat"][0]["chain_len"] == 0
    for _ in range(3):
        tsumogiri(g)
    act(g, "win")
    assert g.record["exponent"] == 0 and g.record["chain_len"] == 0 and scores(g) == [12, -4, -4, -4]


def test_K_7_1_discard_win_conditions(engine_warm):
    """K-7.1: a discard win needs at most one 财神 and a hand that is not 爆头;
    the option discard_win=False forbids it."""
    base = ["9s19m19p1234z67z28s", None, "37m37p37s1234z67z4m", "456m456p456s1234z"]
    cases = {
        "123m456m789m11p78s": True,  # no 财神, waiting 6s/9s
        "123m456m789m5z1p78s": True,  # one 财神 (pair with 1p), not 爆头 shape
        "123m456m789m55z78s": False,  # two 财神
        "123m456m789m5z78s1p": True,
        "123m456m789m123p5z": False,  # 爆头 shape: self-draw only
    }
    for hand, ok in cases.items():
        hands = list(base)
        hands[1] = hand
        g = deal(hands, draws="7z")
        act(g, "discard 9s")
        assert (g.phase == "claim" and "win" in legal(g)) is ok, hand
    hands = list(base)
    hands[1] = "123m456m789m11p78s"
    g = deal(hands, draws="7z", discard_win=False)
    act(g, "discard 9s")
    assert g.current_player == 1 and legal(g) == {"chow_high", "pass"}  # 789s, but no win


# ------------------------------------------------------------------ K-9 飘财


def test_K_9_2_piao_circle_bans_melds_until_the_next_draw(engine_warm):
    """K-9.2: from the dealer's 财神 discard until the dealer's next draw nobody may
    pong (or chow, or exposed kong); own-turn concealed kongs stay legal; after
    the dealer's draw pongs are offered again."""
    hands = ["5z7z6z19m19p19s1234z", "7z28m28p28s1234z6z3m", "77z3333s37m37p14z9s", "456m456p456s1234z"]
    g = deal(hands, draws="6z" + "1s" + "2s" + "8s" + "9p")
    act(g, "discard 5z")  # circle opens
    assert g.current_player == 1 and g.phase == "turn"
    act(g, "discard 7z")
    assert g.phase == "turn" and g.current_player == 2  # seat 2 holds 7z 7z: no pong offered
    assert "kong_concealed 3s" in legal(g)  # own-turn kongs remain legal
    tsumogiri(g)  # seat 2
    tsumogiri(g)  # seat 3
    assert g.current_player == 0 and g.state["seat"][0]["circle_open"] == 0  # closed by the draw
    act(g, "discard 7z")
    assert g.phase == "claim" and g.current_player == 2 and "pong" in legal(g)


def test_K_9_3_failed_piao_pays_extra(engine_warm):
    """K-9.3: inside the dealer's 飘 circle seat 2 wins on seat 1's discard: seat 1
    pays the three shares (4 + 2 + 2), the dealer also pays its own share once
    more (failed_piao_factor 2)."""
    hands = ["5z19m19p19s1234z67z", "9s28m28p28s1234z67z", "123m456m789m11p78s", "37m37p37s1234z67z4m"]
    g = deal(hands, draws="6z" + "1s")
    act(g, "discard 5z", "discard 9s")
    assert g.current_player == 2 and legal(g) == {"win", "pass"}  # no chow 789s inside the circle (K-9.2)
    act(g, "win")
    r = g.record
    assert r["winner"] == 2 and r["failed_piao_0"] == 1 and r["piao_0"] == 1
    assert scores(g) == [-4, -8, 12, 0]
    g = deal(hands, draws="6z" + "1s", failed_piao_factor=1)
    act(g, "discard 5z", "discard 9s", "win")
    assert scores(g) == [0, -8, 8, 0]


# ------------------------------------------------------------------ K-2.5 the forced 飘 lasts until a 财神 discard
# (issue 9: the force used to be recomputed at every draw, so a kong's
# replacement draw could win with the 财神 still in hand; E3)


def force(g: E.Game, seat: int) -> int:
    return int(g.state["seat"][seat]["force_joker"])


#: seat 1 holds 1111m 23m 456p 789s 5z (爆头 shape: 111m 123m 456p 789s + the 财神)
_FORCE = ["99m99p19s1234z78s7z", "1111m23m456p789s5z", "37m37p37s1234z7z4m8m", "456m68p2345s123z8m"]


def test_K_2_5_force_survives_a_concealed_kong(engine_warm):
    """The issue's case: seat 1 (爆头 shape) draws 5z: discard 5z or kong 1m.  After
    the kong the replacement 6z completes the tiles (爆头 + kong, exponent 2),
    but the force stands: no win, only the 财神 discard.  After it the force
    is gone, and the next self-draw counts the kong and the 飘 link."""
    g = deal(_FORCE, draws="6z5z" + "2z3z4z" + "6z", replacements="6z")
    act(g, "discard 6z")
    pass_claims(g)
    assert g.current_player == 1 and legal(g) == {"discard 5z", "kong_concealed 1m"}
    assert force(g, 1) == 1
    act(g, "kong_concealed 1m")
    assert g.state["table"]["drawn"] == K("6z") and g.state["table"]["replacement"] == 1
    assert legal(g) == {"discard 5z"}  # was also 'win' (exponent 2) before the fix
    assert force(g, 1) == 1
    act(g, "discard 5z")
    assert force(g, 1) == 0  # the 财神 discard lifts it
    pass_claims(g)
    for _ in range(3):  # seats 2, 3, 0
        tsumogiri(g)
    assert g.current_player == 1 and "win" in legal(g)
    assert any(n.startswith("discard") and n != "discard 5z" for n in legal(g))  # discards are free again
    act(g, "win")
    r = g.record
    assert (r["winner"], r["win_type"], r["exponent"]) == (1, 0, 2)  # kong + 飘 links (K-6.5)
    assert (r["chain_len"], r["chain_piao"], r["chain_kong"]) == (2, 1, 1)
    assert scores(g) == [-16, 32, -8, -8]


def test_K_2_5_force_survives_several_kongs_in_a_row(engine_warm):
    """1111m 23m 2222p 34p 5z draws 5z: two concealed kongs in a row; each
    replacement (7z, 7z) would complete the hand; neither may win."""
    hands = ["99m99p19s1234z78s6z", "1111m23m2222p34p5z", "37m37p37s1234z6z4m8m", "456m68p2345s123z8m"]
    g = deal(hands, draws="6z5z", replacements="7z7z")
    act(g, "discard 6z")
    pass_claims(g)
    assert legal(g) == {"discard 5z", "kong_concealed 1m", "kong_concealed 2p"}
    act(g, "kong_concealed 1m")
    assert legal(g) == {"discard 5z", "kong_concealed 2p"}
    act(g, "kong_concealed 2p")
    assert legal(g) == {"discard 5z"}
    assert g.state["seat"][1]["chain_kong"] == 2 and force(g, 1) == 1
    act(g, "discard 5z")
    assert force(g, 1) == 0


def test_K_2_5_force_survives_an_added_kong_and_its_rob_phase(engine_warm):
    """Seat 1 pongs 7p (keeping the fourth), is in 爆头 shape with the pong and
    draws 5z; it adds the kong, seat 2 may rob (and passes), the replacement
    9m would complete the hand: no win, only the 财神 discard.  If seat 2 robs
    instead, the hand ends and the force with it."""
    hands = ["7p19m19s346z2468m3p", "777p89p123m456m5z2z", "123s456s789s68p11z", "357m24p2358s1234z"]
    for rob in (False, True):
        g = deal(hands, draws="7z" + "5p1p6s" + "5z", replacements="9m")
        act(g, "discard 7p")
        assert [g.current_player, legal(g)] == [1, {"win", "pass"}]  # 777p 789p 123m 456m + 5z 2z
        act(g, "pass")
        assert [g.current_player, legal(g)] == [2, {"win", "pass"}]
        act(g, "pass")
        assert [g.current_player, legal(g)] == [1, {"pong", "kong_exposed", "chow_low", "pass"}]
        act(g, "pong", "discard 2z")
        pass_claims(g)
        for _ in range(3):  # seats 2, 3, 0
            tsumogiri(g)
        assert g.current_player == 1 and legal(g) == {"discard 5z", "kong_added 7p"}
        assert force(g, 1) == 1
        act(g, "kong_added 7p")
        assert g.phase == "rob" and g.current_player == 2 and force(g, 1) == 1
        if rob:
            act(g, "win")
            assert g.record["win_type"] == 2 and force(g, 1) == 0  # the hand's end lifts it
            continue
        act(g, "pass")
        assert g.current_player == 1 and g.state["table"]["drawn"] == K("9m")
        assert legal(g) == {"discard 5z"}


def test_K_2_5_force_set_on_a_replacement_draw_survives_the_next_kong(engine_warm):
    """An exposed kong (777p claimed) leaves 1111m 23m 456p 5z in 爆头 shape; the
    replacement draw is a 财神: forced (K-2.5 covers replacement draws).  A
    concealed kong follows; its replacement 6z would win: it may not."""
    hands = ["7p99m19s346z2468m3p", "777p1111m23m456p5z", "123s456s789s68p11z", "357m24p2358s1234z"]
    g = deal(hands, draws="7z", replacements="5z6z")
    act(g, "discard 7p")
    assert [g.current_player, legal(g)] == [2, {"win", "pass"}]  # seat 1 is in 爆头 shape: no discard win (K-7.1)
    act(g, "pass")
    assert g.current_player == 1 and {"pong", "kong_exposed"} <= legal(g)
    act(g, "kong_exposed")
    assert g.state["table"]["drawn"] == CAISHEN and force(g, 1) == 1
    assert legal(g) == {"discard 5z", "kong_concealed 1m"}
    act(g, "kong_concealed 1m")
    assert legal(g) == {"discard 5z"}


def test_K_2_5_qidui_baotou_force_survives_a_kong(engine_warm):
    """Kaihua D3: 1111m 22m 33m 44m 55m 5z is in 七子爆头 shape (six pairs + a lone
    财神); it draws 5z: forced.  The kong 1m's replacement 5m would complete
    234m 234m 555m + 5z5z: no win."""
    hands = ["99m99p19s1234z78s6z", "1111m22m33m44m55m5z", "37m37p37s1234z6z4m8m", "456p68p2345s123z8m"]
    g = deal(hands, draws="6z5z", replacements="5m")
    act(g, "discard 6z")
    pass_claims(g)
    assert legal(g) == {"discard 5z", "kong_concealed 1m"} and force(g, 1) == 1
    act(g, "kong_concealed 1m")
    assert legal(g) == {"discard 5z"}


def test_K_2_4_three_caishen_force_survives_a_kong(engine_warm):
    """K-2.4 (a count, not a state): 555z in hand, not 爆头 shape; after a kong
    the replacement does not lift it: discards only 财神, no win."""
    hands = ["99m99p19s1234z78s6z", "1111m2m456p78s555z", "37m37p37s1234z6z4m8m", "456m68p2345s123z8m"]
    g = deal(hands, draws="6z3z", replacements="3m")
    act(g, "discard 6z")
    pass_claims(g)
    assert legal(g) == {"discard 5z", "kong_concealed 1m"}
    assert force(g, 1) == 0  # not K-2.5
    act(g, "kong_concealed 1m")
    assert legal(g) == {"discard 5z"}  # 2m3m 456p 78s + 555z: a complete shape, but three 财神


def test_K_2_5_force_is_only_ever_on_the_seat_to_act(engine_warm):
    """A forced seat leaves its turn only by discarding a 财神, so it is never
    offered a claim while forced; the checker says so (ERR_FORCE) for a state
    where the force sits elsewhere."""
    g = deal(_FORCE, draws="6z5z", replacements="6z")
    act(g, "discard 6z")
    pass_claims(g)
    assert force(g, 1) == 1
    g.state["seat"][3]["force_joker"] = 1  # corrupt: seat 3 is not on its turn
    with pytest.raises(ValueError, match="K-2.5"):
        g.check()
    g.state["seat"][3]["force_joker"] = 0
    g.check()


# ------------------------------------------------------------------ K-9.4 / K-10 the record shows counted links


def test_K_10_record_shows_no_links_on_a_discard_win(engine_warm):
    """Issue 9: the dealer throws 5z (a 飘 link) and then wins on seat 1's
    discard: no link counts (K-6.5: self-draw only), so the record shows chain
    0 / 0 / 0 with exponent 0 (it showed chain_len 1, chain_piao 1).  The live
    chain in the observation still shows the link, and the dealer's own
    circle is no failed 飘 (E9)."""
    hands = ["123m456m789m11p78s", "28m28p28s1234z67z3m", "37m37p37s1234z67z4m", "456m456p456s1234z"]
    g = deal(hands, draws="5z9s")
    act(g, "discard 5z")
    assert g.current_player == 1
    act(g, "discard 9s")
    assert g.current_player == 0 and legal(g) == {"win", "pass"}
    act(g, "win")
    r = g.record
    assert (r["winner"], r["win_type"], r["discarder"], r["exponent"]) == (0, 1, 1, 0)
    assert (r["chain_len"], r["chain_piao"], r["chain_kong"]) == (0, 0, 0)
    assert r["hand_flags"] == kaihua_flag("pinghu")
    assert r["piao_0"] == 1 and r["failed_piao_0"] == 0
    assert scores(g) == [12, -12, 0, 0]
    assert g.observation(0)["chain"][0].tolist() == [1, 1, 0]  # the live chain, not what counted


def test_K_9_4_record_hides_piao_links_that_did_not_count(engine_warm):
    """K-6.5 option piao_requires_baotou: a 飘 then a 平胡 self-draw counts no
    飘 link: exponent 0 and chain_piao 0 in the record (the default counts it)."""
    for option, want in ((False, (1, 1, 1, 0)), (True, (0, 0, 0, 0))):
        g = deal(_PIAO, draws="5z" + "1z2z3z" + "3p", piao_requires_baotou=option)
        act(g, "discard 5z")
        for _ in range(3):
            tsumogiri(g)
        act(g, "win")
        r = g.record
        assert (r["exponent"], r["chain_len"], r["chain_piao"], r["chain_kong"]) == want, option
        assert bool(r["hand_flags"] & kaihua_flag("piao")) == (want[2] > 0)


def kaihua_flag(name: str) -> int:
    from caishen.sim.rules.kaihua import FLAG_NAMES

    return next(bit for bit, n in FLAG_NAMES.items() if n == name)


# ------------------------------------------------------------------ K-7.1 option baotou_discard_win


def test_K_7_1_baotou_discard_win_option_through_the_engine(engine_warm):
    """A 爆头-shaped hand (123m456m789m123p + 5z) is offered the dealer's 9s only
    under baotou_discard_win="other_readings", scored as a 平胡 (the 财神
    pairs the 9s), exponent 0, no 爆头 flag."""
    hands = ["9s19m19p1234z67z28s", "123m456m789m123p5z", "37m37p37s1234z67z4m", "456m456p456s1234z"]
    g = deal(hands, draws="7z")
    act(g, "discard 9s")
    assert g.phase == "turn" and g.current_player == 1  # never (default): nobody is asked
    g = deal(hands, draws="7z", baotou_discard_win="other_readings")
    act(g, "discard 9s")
    assert g.phase == "claim" and g.current_player == 1 and legal(g) == {"win", "pass"}
    act(g, "win")
    r = g.record
    assert (r["winner"], r["win_type"], r["exponent"], r["hand_flags"]) == (1, 1, 0, kaihua_flag("pinghu"))
    assert scores(g) == [-8, 8, 0, 0]


def test_K_7_1_discard_win_max_caishen_through_the_engine(engine_warm):
    """K-7.1 option discard_win_max_caishen: seat 1's 七对 with two 财神
    (11m44m77p11s3z6z9s + 5z5z) is offered the dealer's 9s only under 2; it wins
    with exponent 1 (七对, K-2.6 passed) and the dealer pays the three shares."""
    hands = ["9s19m19p1s24z7z238m8p", "11m44m77p11s3z6z9s5z5z", "258s36p47m123467z", "36s25p56m9m123467z"]
    g = deal(hands, draws="6s")
    act(g, "discard 9s")
    assert g.phase == "turn" and g.current_player == 1  # default 1: nobody is asked
    g = deal(hands, draws="6s", discard_win_max_caishen=2)
    act(g, "discard 9s")
    assert g.phase == "claim" and g.current_player == 1 and legal(g) == {"win", "pass"}
    act(g, "win")
    r = g.record
    assert (r["winner"], r["win_type"], r["exponent"], r["hand_flags"]) == (1, 1, 1, kaihua_flag("qidui"))
    assert scores(g) == [-16, 16, 0, 0]


def test_K_7_1_baotou_discard_win_option_on_a_robbed_kong(engine_warm):
    """K-7.2: seat 2 (123m456m789m234s + 5z, 爆头 shape) may rob seat 1's added 5p
    kong only under other_readings."""
    hands = list(_ROB)
    hands[2] = "123m456m789m234s5z"
    for option in ("never", "other_readings"):
        g = deal(hands, draws="2z", baotou_discard_win=option)
        act(g, "discard 5p")
        if g.current_player == 2:  # other_readings: seat 2 could win on the 5p already
            assert option == "other_readings"
            act(g, "pass")
        act(g, "pong", "discard 2p")
        pass_claims(g)
        for _ in range(3):
            tsumogiri(g)
        act(g, "kong_added 5p")
        if option == "never":
            assert g.phase == "turn" and g.current_player == 1
            continue
        assert g.phase == "rob" and g.current_player == 2 and legal(g) == {"win", "pass"}
        act(g, "win")
        r = g.record
        assert (r["winner"], r["win_type"], r["discarder"], r["exponent"]) == (2, 2, 1, 0)
        assert scores(g) == [0, -8, 8, 0]


# ------------------------------------------------------------------ every win of play is a case score() accepts


_MELD_NAMES = {code: name for name, code in E._tiles.MELD_TYPES.items()}


def _case_of_the_win(g: E.Game, links) -> dict:
    """The scoring-vector case (shared/vectors/README.md) of the win the seat to act takes now."""
    st, sc = g.state, g.state["table"]
    s = g.current_player
    melds = []
    for i in range(int(st["seat"][s]["n_melds"])):
        t, k = int(st["meld_type"][s, i]), int(st["meld_kind"][s, i])
        kinds = [k, k + 1, k + 2] if t == MELD_CHOW else [k] * (3 if t == MELD_PONG else 4)
        melds.append({"type": _MELD_NAMES[t], "tiles": E._tiles.kinds_to_str(kinds)})
    hand = st["hands"][s].copy()
    if g.phase == "turn":
        tile = int(sc["drawn"])
        hand[tile] -= 1
        win_type, discarder, replacement = "self_draw", None, bool(sc["replacement"])
    else:
        tile = int(sc["tile"])
        win_type = "robbed_kong" if g.phase == "rob" else "discard"
        discarder, replacement = int(sc["src"]), False
    return {
        "id": "play", "rules": "kaihua", "dealer": int(sc["dealer"]), "winner": s, "win_type": win_type,
        "discarder": discarder, "concealed": E._tiles.to_str(hand), "melds": melds,
        "win_tile": E._tiles.kind_name(tile), "replacement_draw": replacement, "chain": list(links[s]),
        "piao_circle": [p for p in range(4) if st["seat"][p]["circle_open"]],
    }


def _quads_wall(rng: np.random.Generator) -> list[int]:
    """A random wall that deals every seat a four of a kind (so that kong chains happen)."""
    quads = rng.choice([k for k in range(34) if k != CAISHEN], 4, replace=False)
    pool = [k for k in range(34) for _ in range(4) if k not in quads]
    pool = [int(x) for x in rng.permutation(pool)]
    wall = []
    for i in range(4):
        wall += [int(quads[i])] * 4 + pool[9 * i:9 * i + 9]
    return wall + pool[36:]


@pytest.mark.parametrize("options", [None, {"piao_requires_baotou": True, "baotou_discard_win": "other_readings"}])
def test_K_10_every_win_of_play_is_a_case_that_score_accepts_and_agrees_with(engine_warm, options):
    """The vector format's side of issue 9: every win that play produces, written
    as a scoring case (concealed tiles, melds, the winner's chain in order, the
    open 飘 circles, the replacement draw), is accepted by ``caishen score``
    (none is "impossible") and scores exactly as the engine did: exponent,
    flags and each seat's points.  The chain is followed action by action and
    must agree with the engine's counts; the record's chain columns are the
    counted part of it."""
    from caishen.sim.rules import kaihua

    from caishen.agents import make_agent

    rng = np.random.default_rng(99)
    bots = [make_agent("always" if s % 2 else "greedy", seed=s) for s in range(4)]  # always: 飘 when ready
    seen = {"self_draw": 0, "discard": 0, "robbed_kong": 0, "kong_link": 0, "piao_link": 0, "own_circle": 0,
            "exposed_first": 0, "other_circle": 0}
    for h in range(1500):
        g = E.Game(options=options)
        if h % 2:
            g.reset(seed=h, dealer=h % 4)
        else:
            g.reset(wall=_quads_wall(rng), dealer=h % 4)
        links = [[] for _ in range(4)]
        while not g.done:
            # greedy bots, pushed towards kongs, 飘 and robbing (the rare branches)
            names = legal(g)
            pick = [n for n in names if n == "win"]
            pick = pick or [n for n in names if n.startswith("kong") and rng.random() < 0.8]
            a = pick[int(rng.integers(len(pick)))] if pick else E.action_name(bots[g.current_player].act(g.observe()))
            s, phase = g.current_player, g.phase
            if a == "win":
                c = _case_of_the_win(g, links)
                got = kaihua.score(c, g.rules)  # raises if the case were "impossible"
                g.step(a)
                r = g.record
                assert got["win"], c
                assert got["exponent"] == r["exponent"] and got["flags"] == kaihua.flag_names(r["hand_flags"]), c
                assert got["scores"] == [r[f"score_{p}"] for p in range(4)], c
                assert r["chain_piao"] <= c["chain"].count("piao") and r["chain_kong"] <= c["chain"].count("kong")
                seen[c["win_type"]] += 1
                seen["kong_link"] += c["win_type"] == "self_draw" and "kong" in c["chain"]
                seen["piao_link"] += c["win_type"] == "self_draw" and "piao" in c["chain"]
                seen["own_circle"] += c["winner"] in c["piao_circle"]
                seen["other_circle"] += any(p != c["winner"] for p in c["piao_circle"])
                seen["exposed_first"] += bool(c["chain"]) and c["chain"][0] == "kong" and any(
                    m["type"] == "kong_exposed" for m in c["melds"])
                break
            if phase == "turn" and a.startswith("discard"):
                links[s] = links[s] + ["piao"] if a == "discard 5z" else []
            elif a.startswith("kong"):
                links[s].append("kong")
            elif a in ("pong", "chow_low", "chow_mid", "chow_high"):
                links[s] = []
            g.step(a)
            if g.phase not in ("rob", "done"):  # a robbed added kong is no link (E8)
                for p in range(4):
                    assert [links[p].count("piao"), links[p].count("kong")] == list(
                        [g.state["seat"][p]["chain_joker"], g.state["seat"][p]["chain_kong"]]), (h, p, links[p])
    rare = ("robbed_kong", "exposed_first")  # a few per thousand hands
    assert all(v >= (1 if k in rare else 3) for k, v in seen.items()), seen
