"""Jiating (架听) through the engine: one test (or a few) per rule ID about turns.

Each scenario deals a hand-built wall (:func:`caishen.sim.engine.build_wall`; seat 0
deals unless said otherwise), drives the engine with actions into the
situation of the rule and checks the outcome: who is asked, the legal
actions, melds, declarations, the record and its scores (which come from
the one Jiating scorer, ``caishen.sim.rules.jiating``).  The state checker runs
after every step.  Batch self-play with the checker on is at the end.
"""

from __future__ import annotations

import functools

import numpy as np
import pytest

from caishen.sim.bots.policies import new_work
from caishen.sim import engine as E
from caishen.sim.rules.jiating import records as JR
from caishen.sim.rules import jiating as J
from caishen.sim.tiles import MELD_KONG_ADDED, MELD_KONG_CONCEALED, MELD_KONG_EXPOSED, MELD_PONG, kind_name

import scenario
from scenario import K, act, legal, random_batch

deal = functools.partial(scenario.deal, "jiating")  #: a jiating game on a hand-built wall, checked


def drawn(g: E.Game) -> str:
    t = int(g.state["table"]["drawn"])
    assert t >= 0
    return kind_name(t)


def pass_claims(g: E.Game) -> list[int]:
    """Pass every pending claim (and decline a pending 硬子 question); the seats asked, in order."""
    asked = []
    while g.phase in ("claim", "rob", "hard"):
        asked.append(g.current_player)
        act(g, "hard_decline" if g.phase == "hard" else "pass")
    return asked


def tsumogiri(g: E.Game) -> None:
    """The seat to act discards the tile it just drew; pending claims are passed."""
    act(g, f"discard {drawn(g)}")
    pass_claims(g)


def decl(g: E.Game) -> list[int]:
    return [int(x) for x in g.state["seat"]["decl"]]


def scores(g: E.Game) -> list[int]:
    return [g.record[f"score_{s}"] for s in range(4)]


def patterns(g: E.Game, seat: int) -> dict[str, int]:
    return JR.parse_patterns(g.record[f"patterns_{seat}"])


def rescore(g: E.Game) -> list[dict]:
    """The recorded wins scored again by the scorer, straight from the win cases."""
    row = E.new_records(1)
    E._write_record(g.state, g._ep, 0, row[0])
    return JR.win_cases(row[0])


# hands that are far from ready (no pair of the same kind across them is needed)
JUNK_A = "1357m2468p1357s1z"
JUNK_B = "2468m1357p2468s2z"
JUNK_C = "9m9p9s1m3p5s7p4z5z6z7z2p4m"


# ------------------------------------------------------------------ J-1 wall


def test_J_1_2_no_reserve_every_tile_is_drawn(engine_warm):
    """J-1.2: no reserve: the hand is a 流局 only when a normal draw is due and
    the wall is empty; every one of the 83 undealt tiles is drawn.  With the
    option reserved_tiles the last tiles stay."""
    for reserve, left in ((0, 0), (10, 10)):
        g = deal([JUNK_A, JUNK_B, JUNK_C, "19m19p19s1234567z"], reserved_tiles=reserve)
        while g.phase == "hard":
            act(g, "hard_decline")
        while not g.done:
            if g.phase == "turn":
                if "win" in legal(g):
                    assert g.current_player >= 0
                tsumogiri(g)
            elif g.phase == "hard":
                act(g, "hard_decline")
            else:
                pass_claims(g)
        assert g.record["winner"] == -1 and g.record["win_type"] == -1
        assert g.tiles_left == left and g.record["tiles_left"] == left
        assert g.record["turns"] == 83 - left + 1
        assert scores(g) == [0, 0, 0, 0]


def test_J_1_2_kong_needs_a_tile_left(engine_warm):
    """J-1.2: a kong may be declared only if at least one tile is left: seat 3,
    which draws the wall's last tile, holds four 9p all hand long."""
    g = deal([JUNK_A, JUNK_B, "1m3p5s7p4z5z6z7z2p4m6m8m9s", "9999p1357m2468s3z"])
    last_turn_legal = None
    while not g.done:
        if g.phase == "hard":
            act(g, "hard_decline")
            continue
        if g.phase != "turn":
            pass_claims(g)
            continue
        if g.current_player == 3:
            lg = legal(g)
            if g.tiles_left > 0:
                assert "kong_concealed 9p" in lg
            else:
                last_turn_legal = lg
        tsumogiri(g)
    assert last_turn_legal is not None and "kong_concealed 9p" not in last_turn_legal


# ------------------------------------------------------------------ J-2 dealer


def test_J_2_2_first_dealer_is_random(engine_warm):
    """J-2.2: every match's first dealer is random (match_len=1: every hand starts a match)."""
    rec = random_batch(800, seed=3, rules="jiating", match_len=1)
    counts = np.bincount(rec["dealer"], minlength=4)
    assert (counts > 140).all(), counts  # ~200 each; 140 is > 4 sigma below
    assert (rec["streak"] == 0).all()
    # Kaihua's first dealer is seat 0 (K-3.2): the same call differs only in the rule set
    assert (random_batch(50, seed=3, match_len=1)["dealer"] == 0).all()


def _junk_deal_game(dealer=0, streak=0):
    return deal([JUNK_A, JUNK_B, JUNK_C, "19m19p19s1234567z"], dealer=dealer, streak=streak)


def test_J_2_3_dealer_keeps_the_deal_after_a_draw(engine_warm):
    """J-2.3: a 流局 keeps the dealer."""
    g = _junk_deal_game(dealer=2)
    while not g.done:
        if g.phase == "hard":
            act(g, "hard_decline")
        elif g.phase == "turn":
            tsumogiri(g)
        else:
            pass_claims(g)
    assert g.record["winner"] == -1 and g.record["next_dealer"] == 2


def test_J_2_3_deal_passes_when_a_non_dealer_wins(engine_warm):
    """J-2.3: the deal passes to the next seat when the dealer is not among the winners."""
    g = deal([JUNK_A, "123m456m789m12p5z5z", JUNK_C, JUNK_B], draws="3p")
    assert g.phase == "hard" and g.current_player == 1
    act(g, "hard_decline", "discard 3p")
    assert g.phase == "claim" and g.current_player == 1 and legal(g) == {"win", "pass"}
    act(g, "win")
    assert g.record["winner"] == 1 and g.record["next_dealer"] == 1


def test_J_2_3_dealer_among_the_winners_keeps_the_deal(engine_warm):
    """J-2.3 with J-3.4: the dealer wins together with another seat on one
    discard: the dealer stays."""
    # seat 2 discards 3p; seat 3 and the dealer (seat 0) both wait on it
    hands = ["123m456m789m12p5z5z", JUNK_A, "2468m1357s3p6z7z1z2z", "456m456p456s12p6z6z"]
    g = deal(hands, draws="4z" + "3z" + "9p")
    while g.phase == "hard":
        act(g, "hard_decline")
    act(g, "discard 4z")  # dealer
    pass_claims(g)
    tsumogiri(g)  # seat 1 draws 3z and gives it back
    act(g, "discard 3p")  # seat 2 (drew 9p)
    assert g.phase == "claim" and g.current_player == 3
    act(g, "win")
    assert g.current_player == 0 and legal(g) == {"win", "pass"}  # J-3.4: the other winner is asked too
    act(g, "win")
    r = g.record
    assert r["winners_mask"] == 0b1001 and r["winner"] == 3 and r["next_dealer"] == 0


def test_J_2_3_J_2_4_batch_dealer_rotation_and_streak(engine_warm):
    """J-2.3 / J-2.4 over many hands: inside a match the next dealer is the same
    seat iff the hand was drawn or the dealer won; the streak counts the kept
    deals and starts at 0 with every new dealer and every match."""
    rec = random_batch(3000, seed=11, rules="jiating", match_len=8)
    d, m, s, mh = rec["dealer"], rec["winners_mask"].astype(int), rec["streak"], rec["match_hand"]
    assert (s[mh == 0] == 0).all()
    kept_any = False
    for h in range(len(d) - 1):
        if mh[h + 1] == 0:
            continue
        keep = m[h] == 0 or (m[h] >> d[h]) & 1
        assert (d[h + 1] == d[h]) == bool(keep)
        assert s[h + 1] == (s[h] + 1 if keep else 0)
        kept_any |= bool(keep)
    assert kept_any and s.max() >= 2


def test_J_2_4_streak_enters_the_payments(engine_warm):
    """J-2.4 / J-6.4: the dealer's streak k adds 2k to every payment with the dealer."""
    paid = {}
    for k in (0, 3):
        g = deal(["123m456m789m12p5z5z", JUNK_A, JUNK_B, JUNK_C], draws="3p", streak=k)
        act(g, "win")  # 天胡 on the dealer's 14th tile
        assert g.record["streak"] == k
        case = rescore(g)[0]
        assert case["streak"] == k
        assert scores(g) == J.score(case)["scores"]
        paid[k] = [g.record[f"pay_{p}_0"] for p in (1, 2, 3)]
    assert [a - b for a, b in zip(paid[3], paid[0])] == [2 * 3] * 3


# ------------------------------------------------------------------ J-3 calls


def test_J_3_1_no_chow(engine_warm):
    """J-3.1: the next seat holding 2m3m is not offered a chow on 1m or 4m; only pong and kong exist."""
    g = deal(["1m4m" + "57m2468p1357s1z", "23m" + "5m1357p2468s2z9p", JUNK_C, "19m19p19s1234567z"], draws="8m")
    act(g, "discard 1m")
    assert g.phase == "turn" and g.current_player == 1  # nobody was asked
    g2 = deal(["1m4m" + "57m2468p1357s1z", "23m44m" + "1357p268s2z9p", JUNK_C, "19m19p19s1234567z"], draws="8m")
    act(g2, "discard 4m")
    assert g2.phase == "claim" and legal(g2) == {"pong", "pass"}
    with pytest.raises(ValueError, match="illegal action 'chow_low'"):
        g2.step("chow_low")


def test_J_3_2_discard_at_once_after_a_pong_no_kong_no_win(engine_warm):
    """J-3.2 (engine J3): after a pong the player discards at once: no kong and no win
    before that discard, though the hand holds four 7p and is complete with the pong
    (777p 789p 123s 99s); the concealed kong is offered on the seat's next drawn turn."""
    hands = ["3m1889p19s1234z67z", "2468m22p66p9s1234z", "33m7777p89p123s99s", "12m44p45s6788s467z"]
    g = deal(hands, draws="5s" + "6z6z7z7z")
    pass_claims(g)
    act(g, "discard 3m")
    pass_claims_until(g, "pong")
    left = g.tiles_left
    act(g, "pong")
    assert {n.split()[0] for n in legal(g)} == {"discard", "declare"}  # declare = discard + 架听 (J-4.1)
    assert g.tiles_left == left and g.state["table"]["drawn"] == -1
    act(g, "discard 9s")
    pass_claims(g)
    while g.current_player != 2:
        tsumogiri(g)
    assert "kong_concealed 7p" in legal(g)


def pass_claims_until(g: E.Game, name: str) -> None:
    """Decline 硬子 questions until ``name`` is legal for the seat to act."""
    while g.phase == "hard" and name not in legal(g):
        act(g, "hard_decline")


def _rob_hands():
    # seat 1 holds 5p5p5p... no: seat 1 pongs 5p from the dealer, later adds the 4th 5p;
    # seat 2 waits on 5p / 8p (67p)
    return ["5p" + "1357m2468s9s1z2z3z", "55p" + "1357m2468s3z4z6z", "123m456m789m67p5z5z", "19m19p19s1234567z"]


#: the dealer's 14th tile, then seats 2, 3, 0 draw junk and seat 1 draws the fourth 5p
ROB_DRAWS = "4z" + "7z" + "9p" + "8s" + "5p"


def test_J_3_3_added_kong_is_robbed(engine_warm):
    """J-3.3 / P19: seat 1 adds the fourth 5p to its pong; seat 2, waiting on
    5p, is asked and robs it: the robbed seat pays, the pong stays a pong."""
    g = deal(_rob_hands(), draws=ROB_DRAWS)
    while g.phase == "hard":
        act(g, "hard_decline")  # seat 2 is ready at the deal
    act(g, "discard 5p")
    assert g.current_player == 2 and legal(g) == {"win", "pass"}  # seat 2 may win on the discard
    act(g, "pass")  # J-3.5 seat 2 passed a win ...
    assert g.current_player == 1 and legal(g) == {"pong", "pass"}
    act(g, "pong", "discard 4z")
    pass_claims(g)
    # seat 2 draws (its ban ends, J-3.5), gives the tile back; seat 3, seat 0 likewise
    tsumogiri(g)
    tsumogiri(g)
    tsumogiri(g)
    assert g.current_player == 1 and drawn(g) == "5p"
    act(g, "kong_added 5p")
    assert g.phase == "rob" and g.current_player == 2 and legal(g) == {"win", "pass"}
    act(g, "win")
    r = g.record
    assert r["win_type"] == E.WIN_ROBBED_KONG and r["winner"] == 2 and r["discarder"] == 1
    assert "P19" in patterns(g, 2)
    mt = g.state["meld_type"][1]
    assert list(mt[mt != 0]) == [MELD_PONG]
    assert scores(g)[0] == 0 and scores(g)[3] == 0 and scores(g)[1] < 0 < scores(g)[2]


def test_J_3_3_concealed_and_exposed_kongs_are_never_robbed(engine_warm):
    """J-3.3: a concealed kong of 5p and an exposed kong of 5p are not robbed
    although seat 2 waits on 5p: the kong stands and its owner draws from the tail."""
    # concealed: the dealer holds four 5p
    g = deal(["5555p" + "1357m2468s9s", JUNK_A, "123m456m789m67p5z5z", "19m19p19s1234567z"], draws="1z",
             replacements="2z")
    while g.phase == "hard":
        act(g, "hard_decline")
    act(g, "kong_concealed 5p")
    assert g.phase == "turn" and g.current_player == 0 and drawn(g) == "2z"
    assert g.state["meld_type"][0][0] == MELD_KONG_CONCEALED
    # exposed: seat 1 claims the dealer's 5p with three in hand; seat 2 (waiting
    # on 5p) is asked first for the discard win (priority), passes, and then
    # the kong is not offered to it again
    g = deal(["5p" + "1357m2468s9s1z2z3z", "555p" + "1357m2468s3z4z", "123m456m789m67p5z5z", "19m19p19s1234567z"],
             draws="4z", replacements="6z")
    while g.phase == "hard":
        act(g, "hard_decline")
    act(g, "discard 5p")
    assert g.current_player == 2 and legal(g) == {"win", "pass"}
    act(g, "pass")
    assert g.current_player == 1 and legal(g) == {"pong", "kong_exposed", "pass"}
    act(g, "kong_exposed")
    assert g.phase == "turn" and g.current_player == 1 and drawn(g) == "6z"
    assert g.state["meld_type"][1][0] == MELD_KONG_EXPOSED


def test_J_3_4_several_winners_on_one_discard(engine_warm):
    """J-3.4 (一炮多响): seats 1 and 3 both win on the dealer's 3p; each is paid
    by the discarder alone; the record shows both, with their own P and G."""
    hands = [JUNK_A, "123m456m789m12p5z5z", JUNK_C, "456m456p456s12p6z6z"]
    g = deal(hands, draws="3p")
    while g.phase == "hard":
        act(g, "hard_decline")
    act(g, "discard 3p")
    assert g.current_player == 1
    act(g, "win")
    assert g.current_player == 3 and legal(g) == {"win", "pass"}
    act(g, "win")
    r = g.record
    assert r["winners_mask"] == 0b1010 and r["winner"] == 1 and r["discarder"] == 0
    cases = rescore(g)
    assert [c["winner"] for c in cases] == [1, 3]
    want = J.score_discard_winners(cases)
    assert scores(g) == want["scores"]
    assert scores(g)[2] == 0 and scores(g)[1] > 0 and scores(g)[3] > 0
    for w, res in zip((1, 3), want["wins"]):
        assert r[f"P_{w}"] == res["P"] and patterns(g, w) == res["patterns"]
        assert r[f"pay_0_{w}"] == -res["scores"][0]
    # the per-pattern columns describe the first winner
    assert {p: r[p] for p in J.PATTERN_IDS if r[p]} == want["wins"][0]["patterns"]


def test_J_3_4_second_winner_may_pass(engine_warm):
    """J-3.4: after one seat won, the other win claimant may still pass."""
    hands = [JUNK_A, "123m456m789m12p5z5z", JUNK_C, "456m456p456s12p6z6z"]
    g = deal(hands, draws="3p")
    while g.phase == "hard":
        act(g, "hard_decline")
    act(g, "discard 3p", "win", "pass")
    r = g.record
    assert r["winners_mask"] == 0b0010 and r["passed_win_3"] == 1
    assert sum(scores(g)) == 0 and scores(g)[3] == 0


def _passed_win_game():
    # seat 2 waits on 5p / 8p; the dealer discards 5p first
    return ["5p" + "1357s2468s9s1z2z3z", "1357m2468s4z9m1z2z3z", "123m456m789m67p5z5z", "2468m1357p9p6z7z9s1s"]


def test_J_3_5_passed_win_bans_discard_wins_until_the_own_next_draw(engine_warm):
    """J-3.5: seat 2 passes a win on the dealer's 5p; seat 1's 8p (another
    winning tile) is then not offered to it; after seat 2's own draw it may
    win on seat 3's 8p again."""
    g = deal(_passed_win_game(), draws="4z" + "8p" + "6z" + "8p")
    while g.phase == "hard":
        act(g, "hard_decline")
    act(g, "discard 5p")
    assert g.current_player == 2 and legal(g) == {"win", "pass"}
    act(g, "pass")
    assert g.state["seat"][2]["passed_win"] == 1
    assert g.current_player == 1 and drawn(g) == "8p"
    act(g, "discard 8p")
    assert g.phase == "turn" and g.current_player == 2  # not asked: banned (J-3.5)
    assert drawn(g) == "6z" and g.state["seat"][2]["passed_win"] == 0  # the draw ends the ban
    act(g, "discard 6z")
    pass_claims(g)
    assert g.current_player == 3 and drawn(g) == "8p"
    act(g, "discard 8p")
    assert g.phase == "claim" and g.current_player == 2 and legal(g) == {"win", "pass"}
    act(g, "win")
    assert g.record["winner"] == 2 and g.record["passed_win_2"] == 1


def test_J_3_5_self_draw_is_not_restricted(engine_warm):
    """J-3.5: right after passing a discard win, the seat may win on its own draw."""
    g = deal(_passed_win_game(), draws="4z" + "4z" + "8p")
    while g.phase == "hard":
        act(g, "hard_decline")
    act(g, "discard 5p", "pass")
    tsumogiri(g)  # seat 1
    assert g.current_player == 2 and drawn(g) == "8p" and "win" in legal(g)
    act(g, "win")
    assert g.record["win_type"] == E.WIN_SELF_DRAW and g.record["winner"] == 2


def test_J_3_5_passed_robbery_counts_as_a_passed_win(engine_warm):
    """J-3.5: passing the robbery of an added kong bans discard wins until the next draw."""
    g = deal(_rob_hands(), draws=ROB_DRAWS, replacements="8p")
    while g.phase == "hard":
        act(g, "hard_decline")
    act(g, "discard 5p", "pass", "pong", "discard 4z")
    pass_claims(g)
    for _ in range(3):
        tsumogiri(g)
    act(g, "kong_added 5p")
    assert g.phase == "rob" and g.current_player == 2
    act(g, "pass")
    assert g.state["seat"][2]["passed_win"] == 1
    # seat 1 draws its replacement, 8p, another winning tile of seat 2, and discards it
    assert g.current_player == 1 and g.state["table"]["replacement"] == 1 and drawn(g) == "8p"
    act(g, "discard 8p")
    assert g.phase == "turn" and g.current_player == 2  # not asked (J-3.5)
    assert g.state["seat"][2]["n_passed_win"] == 2


def test_J_3_6_passed_pong_same_kind(engine_warm):
    """J-3.6 (default same_kind): seat 1 passes a pong of 7z; the next 7z before
    its own draw is not offered, a 6z is; after its draw 6z is offered again."""
    hands = ["1357m2468p135s9s1z", "7z7z6z6z" + "1357s2468m9p", "2468s1357p9m2z3z4z5z", "19m19p1s2p3p4p5p6p7p8m8s"]
    g = deal(hands, draws="2z" + "3z" + "7z" + "7z" + "6z" + "4z" + "6z")
    assert g.phase == "turn"
    tsumogiri(g)  # dealer 2z
    tsumogiri(g)  # seat 1 3z
    act(g, "discard 7z")  # seat 2
    assert g.current_player == 1 and legal(g) == {"pong", "pass"}
    act(g, "pass")
    assert g.current_player == 3
    act(g, "discard 7z")
    assert g.phase == "turn" and g.current_player == 0  # seat 1 not asked (J-3.6)
    act(g, "discard 6z")
    assert g.phase == "claim" and g.current_player == 1 and legal(g) == {"pong", "pass"}
    act(g, "pass")
    tsumogiri(g)  # seat 1 draws 4z: the bans end
    act(g, "discard 6z")  # seat 2
    assert g.phase == "claim" and g.current_player == 1 and legal(g) == {"pong", "pass"}


def test_J_3_6_passed_pong_any_kind(engine_warm):
    """J-3.6 option passed_pong_scope="any": after passing a pong the seat may
    pong nothing until its own next draw."""
    hands = ["1357m2468p135s9s1z", "7z7z6z6z" + "1357s2468m9p", "2468s1357p9m2z3z4z5z", "19m19p1s2p3p4p5p6p7p8m8s"]
    g = deal(hands, draws="2z" + "3z" + "7z" + "7z" + "6z" + "4z" + "6z", passed_pong_scope="any")
    tsumogiri(g)
    tsumogiri(g)
    act(g, "discard 7z", "pass", "discard 7z")
    act(g, "discard 6z")
    assert g.phase == "turn" and g.current_player == 1  # 6z not offered either
    tsumogiri(g)  # the draw ends the ban
    act(g, "discard 6z")
    assert g.phase == "claim" and g.current_player == 1 and legal(g) == {"pong", "pass"}


# ------------------------------------------------------------------ J-4 架听 and 硬子


def test_J_4_1_declare_only_with_a_single_wait(engine_warm):
    """J-4.1: ``declare <k>`` is legal exactly for the discards after which the
    hand waits on one kind: 9s leaves an edge wait on 3p; with 23p instead of
    12p the same discard leaves two waits and no declaration is legal."""
    g = deal(["123m456m789m12p5z5z", JUNK_A, JUNK_B, JUNK_C], draws="9s")
    assert {a for a in legal(g) if a.startswith("declare")} == {"declare 9s"}
    g = deal(["123m456m789m23p5z5z", JUNK_A, JUNK_B, JUNK_C], draws="9s")
    assert not any(a.startswith("declare") for a in legal(g))
    # a pair wait (单钓) is a single wait too; every discard is examined
    g = deal(["123m456m789m111p9s", JUNK_A, JUNK_B, JUNK_C], draws="5z")
    assert {a for a in legal(g) if a.startswith("declare")} == {"declare 5z", "declare 9s"}


def test_J_4_1_declaration_stays_and_the_player_plays_on(engine_warm):
    """J-4.1: the 架听 declaration stays for the hand (no second declaration);
    the declared player may still pong; when the winning tile comes it wins
    or passes; the win earns P02."""
    hands = ["123m456m789m12p5z5z", "7z7z" + "1357s2468m9p3z8p", JUNK_B, "19m19p19s3p4p6p7p1s2s5s"]
    g = deal(hands, draws="9s" + "1z" + "7z")
    act(g, "declare 9s")
    pass_claims(g)
    assert decl(g)[0] == E.DECL_READY and g.state["seat"][0]["decl_turn"] == 1
    tsumogiri(g)  # seat 1
    act(g, "discard 7z")  # seat 2 (drew 7z) ... seat 1 may pong it
    assert g.current_player == 1 and "pong" in legal(g)
    act(g, "pass")
    # seat 3 draws (kind-order filler) and discards; then the dealer draws
    tsumogiri(g)
    assert g.current_player == 0
    assert not any(a.startswith("declare") for a in legal(g))  # declared already
    assert decl(g)[0] == E.DECL_READY


def test_J_4_1_jiating_win_scores_P02(engine_warm):
    """J-4.1 / P02: a declared seat winning on its single wait."""
    hands = ["123m456m789m12p5z5z", "1357s2468m9p1z2z3z8p", JUNK_B, "19m19p19s2p4p6p7p8s1s5s"]
    g = deal(hands, draws="9s" + "3p")
    act(g, "declare 9s")
    pass_claims(g)
    assert g.current_player == 1 and drawn(g) == "3p"
    act(g, "discard 3p")
    assert g.current_player == 0 and legal(g) == {"win", "pass"}
    act(g, "win")
    r = g.record
    assert r["decl_0"] == E.DECL_READY and r["decl_turn_0"] == 1
    pats = patterns(g, 0)
    assert pats["P02"] == 2 and "P24" not in pats


def _hard_hands():
    # seat 1 ready at the deal with two waits (1p / 4p) and a pair of 5z
    return [JUNK_A, "123m456m789m23p5z5z", JUNK_C, "19m19p19s8m123467z"]


def test_J_4_2_hard_declaration_at_the_deal(engine_warm):
    """J-4.2: a ready non-dealer is asked before the dealer's first discard;
    after 硬子 it is offered no pong, and each drawn tile it cannot win with
    is discarded by the engine without asking; when the winning tile comes it
    is asked win / discard."""
    g = deal(_hard_hands(), draws="5z" + "7s" + "1z" + "2z" + "6z" + "4p")
    assert g.phase == "hard" and g.current_player == 1 and legal(g) == {"hard_declare", "hard_decline"}
    assert g.state["hands"][0].sum() == 14  # the dealer has its 14 tiles, has not discarded
    act(g, "hard_declare")
    assert g.phase == "turn" and g.current_player == 0 and decl(g)[1] == E.DECL_HARD
    act(g, "discard 5z")  # seat 1 holds 5z5z: no pong for a hard seat
    # seat 1 drew 7s and the engine discarded it; seat 2 is to act
    assert g.phase == "turn" and g.current_player == 2
    nd = g.state["seat"][1]["n_discards"]
    assert nd == 1 and kind_name(g.state["discards"][1, 0]) == "7s"
    tsumogiri(g)  # seat 2: 1z
    tsumogiri(g)  # seat 3: 2z
    tsumogiri(g)  # dealer: 6z
    assert g.current_player == 1 and drawn(g) == "4p" and legal(g) == {"win", "discard 4p"}
    act(g, "win")
    r = g.record
    assert r["decl_1"] == E.DECL_HARD and r["hard_offer_1"] == 1 and r["decl_turn_1"] == 0
    assert r["hard_offer_0"] == 0 and r["hard_offer_2"] == 0 and r["hard_offer_3"] == 0
    assert "P24" in patterns(g, 1)


def test_J_4_2_hard_seat_passes_a_winning_discard_and_it_may_decline_a_self_draw(engine_warm):
    """J-4.2: a hard seat chooses to win or pass; passing its self-draw means
    discarding the drawn tile (then the passed-win rule does not apply: J-3.5
    concerns discards)."""
    g = deal(_hard_hands(), draws="1p" + "4p")
    act(g, "hard_declare")
    act(g, "discard 1p")  # the dealer's 1p: seat 1 may win on it
    assert g.current_player == 1 and legal(g) == {"win", "pass"}
    act(g, "pass")
    assert g.current_player == 1 and drawn(g) == "4p" and legal(g) == {"win", "discard 4p"}
    act(g, "discard 4p")
    assert g.state["seat"][1]["n_passed_win"] == 1


def test_J_4_2_declining_is_final(engine_warm):
    """J-4.2: declining is allowed; the seat plays normally (pong allowed) and
    is never asked again."""
    g = deal(_hard_hands(), draws="5z")
    act(g, "hard_decline")
    assert g.phase == "turn" and g.current_player == 0 and decl(g) == [0, 0, 0, 0]
    act(g, "discard 5z")
    assert g.current_player == 1 and legal(g) == {"pong", "pass"}
    act(g, "pong")
    assert g.phase == "turn" and g.current_player == 1
    assert g.record is None and g.state["seat"][1]["hard_offer"] == 1


def test_J_4_2_only_ready_non_dealers_are_asked(engine_warm):
    """J-4.2: two ready non-dealers are asked in turn order; a non-ready one is not."""
    hands = [JUNK_A, "123m456m789m23p5z5z", JUNK_C, "456m456p456s12p6z6z"]
    g = deal(hands, draws="1z")
    asked = []
    while g.phase == "hard":
        asked.append(g.current_player)
        act(g, "hard_decline" if g.current_player == 1 else "hard_declare")
    assert asked == [1, 3] and decl(g) == [0, 0, 0, E.DECL_HARD]
    g = deal([JUNK_A, JUNK_B, JUNK_C, "19m19p19s1234567z"], draws="1z")
    assert g.phase == "turn" and g.current_player == 0


def test_J_4_2_dealer_declares_with_the_first_discard(engine_warm):
    """J-4.2: a dealer ready after its first discard is asked with that discard
    (before the claims on it); a dealer not ready then is not asked."""
    g = deal(["123m456m789m23p5z5z", JUNK_A, JUNK_B, "19m19p19s1234567z"], draws="9s")
    act(g, "discard 9s")
    assert g.phase == "hard" and g.current_player == 0 and legal(g) == {"hard_declare", "hard_decline"}
    assert int(g.state["table"]["tile"]) == K("9s")
    act(g, "hard_declare")
    assert decl(g)[0] == E.DECL_HARD and g.state["seat"][0]["decl_turn"] == 1
    pass_claims(g)
    assert g.current_player == 1
    # not ready after the first discard: no question
    g = deal(["123m456m789m23p5z5z", JUNK_A, JUNK_B, "19m19p19s1234567z"], draws="9s")
    act(g, "discard 5z")
    assert g.phase != "hard" and g.state["seat"][0]["hard_offer"] == 0


def test_J_4_3_hard_win_needs_no_single_wait_and_P02_only_with_one(engine_warm):
    """J-4.3: a hard declaration with two waits wins P24 硬子 but not P02; with a
    single wait it earns both."""
    g = deal(_hard_hands(), draws="1z" + "1s" + "2z" + "3z" + "7z" + "1p")
    act(g, "hard_declare", "discard 1z")
    for _ in range(3):
        tsumogiri(g)
    assert g.current_player == 1 and legal(g) == {"win", "discard 1p"}
    act(g, "win")
    pats = patterns(g, 1)
    assert "P24" in pats and "P02" not in pats
    single = [JUNK_A, "123m456m789m12p5z5z", JUNK_C, "19m19p19s1234567z"]
    g = deal(single, draws="1z" + "1s" + "2z" + "3z" + "7z" + "3p")
    act(g, "hard_declare", "discard 1z")
    for _ in range(3):
        tsumogiri(g)
    act(g, "win")
    pats = patterns(g, 1)
    assert "P24" in pats and pats["P02"] == 2


# ------------------------------------------------------------------ J-5 winning


def test_J_5_1_any_complete_hand_wins(engine_warm):
    """J-5.1: seven pairs and a plain standard hand both win (shape only); a
    non-complete hand is never offered a win."""
    g = deal([JUNK_A, "11m22m33p44p55s66s7z", JUNK_C, "29m19p19s12344z56z"], draws="7z")
    while g.phase == "hard":
        act(g, "hard_decline")
    act(g, "discard 7z")
    assert g.current_player == 1 and legal(g) == {"win", "pass"}
    act(g, "win")
    assert "P25" in patterns(g, 1)


def test_J_5_4_tianhu_on_the_dealers_fourteenth_tile(engine_warm):
    """J-5.4 / P46: the dealer's 14 dealt tiles are complete: a self-draw win on
    the first turn whose winning tile is the 14th tile (here the 3p of an
    edge wait 12p: P04 边三七, doubled as self-drawn)."""
    g = deal(["123m456m789m12p5z5z", JUNK_A, JUNK_B, JUNK_C], draws="3p")
    assert "win" in legal(g)
    act(g, "win")
    r = g.record
    assert r["first_turn"] == 1 and r["win_type"] == E.WIN_SELF_DRAW and r["win_tile"] == K("3p")
    pats = patterns(g, 0)
    assert pats["P46"] == 200 and pats["P04"] == 4
    case = rescore(g)[0]
    assert case["first_turn"] and case["win_tile"] == "3p" and case["concealed"] == "123456789m12p55z"


def test_P46_not_after_the_first_turn(engine_warm):
    """P46 needs the first turn: the same dealer hand winning on a later draw is no 天胡."""
    g = deal(["123m456m789m12p5z5z", JUNK_A, JUNK_B, "19m19p19s1234567z"], draws="9s" + "1z" + "2z" + "3z" + "3p")
    act(g, "discard 9s")
    while g.phase == "hard":
        act(g, "hard_decline")
    pass_claims(g)
    for _ in range(3):
        tsumogiri(g)
    act(g, "win")
    assert g.record["first_turn"] == 0 and "P46" not in patterns(g, 0)


def test_P47_dihu_dealer_ready_after_first_discard_declares_hard_and_wins(engine_warm):
    """P47 (default dihu): the dealer, ready right after the first discard,
    declares hard and wins later: 地胡 200, which excludes P24 (J-7)."""
    g = deal(["123m456m789m23p5z5z", JUNK_A, JUNK_B, "19m19p19s1234567z"], draws="9s" + "1z" + "2z" + "3z" + "4p")
    act(g, "discard 9s", "hard_declare")
    pass_claims(g)
    for _ in range(3):
        tsumogiri(g)
    assert g.current_player == 0 and legal(g) == {"win", "discard 4p"}
    act(g, "win")
    pats = patterns(g, 0)
    assert pats["P47"] == 200 and "P24" not in pats
    # declining: no 地胡
    g = deal(["123m456m789m23p5z5z", JUNK_A, JUNK_B, "19m19p19s1234567z"], draws="9s" + "1z" + "2z" + "3z" + "4p")
    act(g, "discard 9s", "hard_decline")
    pass_claims(g)
    for _ in range(3):
        tsumogiri(g)
    act(g, "win")
    assert "P47" not in patterns(g, 0)


def test_P47_option_dealer_ready_undeclared(engine_warm):
    """P47 with dihu="dealer_ready_undeclared" (ambiguity 3): the dealer, ready right after
    its first discard, declines 硬子 and wins later: 地胡 200 all the same (the record's
    win case says it was ready); a dealer not ready then has none; under the default
    the declined dealer has none."""
    hands = ["123m456m789m23p5z5z", JUNK_A, JUNK_B, "19m19p19s1234567z"]
    draws = "9s" + "1z" + "2z" + "3z" + "4p"
    for dihu, want in (("dealer_ready_undeclared", 200), ("dealer_ready_first_discard", None)):
        g = deal(hands, draws=draws, dihu=dihu)
        act(g, "discard 9s", "hard_decline")
        pass_claims(g)
        for _ in range(3):
            tsumogiri(g)
        act(g, "win")
        assert patterns(g, 0).get("P47") == want and "P24" not in patterns(g, 0)
        assert rescore(g)[0]["dealer_ready_after_first_discard"] and rescore(g)[0]["declaration"] == "none"
    # ready only after its second discard: no 地胡 on the later win
    g = deal(["123m456m789m2p5z5z9s", JUNK_A, JUNK_B, "19m19p19s1234567z"],
             draws="1z" + "2z3z4z" + "3p" + "6z7z2z" + "4p", dihu="dealer_ready_undeclared")
    act(g, "discard 1z")
    assert g.phase != "hard" and g.state["seat"][0]["hard_offer"] == 0
    pass_claims(g)
    for _ in range(3):
        tsumogiri(g)
    act(g, "discard 9s")
    pass_claims(g)
    for _ in range(3):
        tsumogiri(g)
    assert g.current_player == 0 and "win" in legal(g)
    act(g, "win")
    assert "P47" not in patterns(g, 0) and not rescore(g)[0]["dealer_ready_after_first_discard"]


def test_P47_option_win_on_the_dealers_first_discard(engine_warm):
    """P47 with dihu="win_on_dealers_first_discard": a non-dealer winning on the
    dealer's first discard has 地胡; on a later dealer discard it has not."""
    hands = [JUNK_A, "123m456m789m12p5z5z", JUNK_C, "19m19p19s1234567z"]
    g = deal(hands, draws="3p", dihu="win_on_dealers_first_discard")
    act(g, "hard_decline", "discard 3p", "win")
    assert patterns(g, 1)["P47"] == 200 and rescore(g)[0]["on_dealers_first_discard"]
    g = deal(hands, draws="1z" + "2z" + "3z" + "4z" + "3p", dihu="win_on_dealers_first_discard")
    act(g, "hard_decline", "discard 1z")
    pass_claims(g)
    for _ in range(3):
        tsumogiri(g)
    act(g, "discard 3p", "win")
    assert "P47" not in patterns(g, 1)


# ------------------------------------------------------------------ the 架听 kernel vs a slow reference

from hypothesis import HealthCheck, given, settings  # noqa: E402
from hypothesis import strategies as st  # noqa: E402

from caishen.sim import hand as H  # noqa: E402
from caishen.sim.rules.jiating import turn as JT  # noqa: E402
from caishen.sim.tables import hand_tables  # noqa: E402
from caishen.sim.tiles import parse  # noqa: E402


def _ref_single_wait_discards(hand14: np.ndarray, melds: list[tuple[int, int]]) -> set[int]:
    """The discards after which the hand waits on exactly one kind, written
    plainly with ``caishen.sim.hand.waits`` and the scorer's D3 (kinds whose four
    copies the player holds do not count)."""
    own = hand14.astype(int).copy()
    for t, k in melds:
        own[k] += 3 if t == MELD_PONG else 4
    out = set()
    for k in range(34):
        if hand14[k]:
            h = hand14.copy()
            h[k] -= 1
            o = own.copy()
            o[k] -= 1
            w = [t for t in H.waits(h) if o[t] < 4]
            if len(w) == 1:
                out.add(k)
    return out


@st.composite
def near_ready_hands(draw):
    """A complete hand with melds, one tile swapped for a random one (often a single wait)."""
    rng = np.random.default_rng(draw(st.integers(0, 2**32 - 1)))
    pool = np.full(34, 4)
    n_melds = draw(st.integers(0, 3))
    melds = []
    for _ in range(n_melds):
        k = int(rng.choice(np.flatnonzero(pool >= 4)))
        t = [MELD_PONG, MELD_KONG_EXPOSED, MELD_KONG_CONCEALED, MELD_KONG_ADDED][rng.integers(4)]
        pool[k] -= 3 if t == MELD_PONG else 4
        melds.append((t, k))
    h = np.zeros(34, np.int64)
    if n_melds == 0 and rng.random() < 0.25:  # seven pairs
        for k in rng.choice(np.flatnonzero(pool >= 2), 7, replace=False):
            h[k] += 2
    else:
        for _ in range(4 - n_melds):
            while True:
                if rng.random() < 0.6:
                    k = int(rng.integers(27))
                    if k % 9 <= 6 and min(pool[k:k + 3] - h[k:k + 3]) >= 1:
                        h[k:k + 3] += 1
                        break
                else:
                    k = int(rng.integers(34))
                    if pool[k] - h[k] >= 3:
                        h[k] += 3
                        break
        while True:
            k = int(rng.integers(34))
            if pool[k] - h[k] >= 2:
                h[k] += 2
                break
    # swap one tile for a random other one the pool still has
    k = int(rng.choice(np.flatnonzero(h)))
    h[k] -= 1
    t = int(rng.choice(np.flatnonzero(pool - h > 0)))
    h[t] += 1
    return h.astype(np.uint8), melds


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(near_ready_hands())
def test_J_4_1_single_wait_kernel_matches_reference(case):
    """J-4.1 (D3): the engine's ``declare`` kinds equal the plain reference on
    near-ready hands with pongs and kongs."""
    hand14, melds = case
    mt = np.zeros(4, np.int8)
    mk = np.zeros(4, np.int8)
    for i, (t, k) in enumerate(melds):
        mt[i], mk[i] = t, k
    work = np.zeros((3, 34), np.int64)
    bits = JT._single_wait_discards(hand14.copy(), mt, mk, len(melds), hand_tables(), work)
    got = {k for k in range(34) if (bits >> k) & 1}
    assert got == _ref_single_wait_discards(hand14, melds)


def test_J_4_1_four_held_copies_do_not_count_as_a_wait():
    """D3 in the kernel and in the scorer alike: with a pong of 6s, the hand
    234m3456s222z waits on 3s and 6s by shape, but all four 6s are the
    player's, so discarding 9p leaves a single wait (3s): ``declare 9p`` is
    legal, and the scorer counts the win on 3s as a single wait (P02)."""
    mt = np.array([MELD_PONG, 0, 0, 0], np.int8)
    mk = np.array([K("6s"), 0, 0, 0], np.int8)
    h = parse("234m3456s222z9p")
    bits = JT._single_wait_discards(h, mt, mk, 1, hand_tables(), np.zeros((3, 34), np.int64))
    got = {k for k in range(34) if (bits >> k) & 1}
    assert K("9p") in got and got == _ref_single_wait_discards(h, [(MELD_PONG, K("6s"))])
    assert len(H.waits(parse("234m3456s222z"))) == 2  # 3s and 6s by shape
    case = {"dealer": 0, "winner": 1, "win_type": "discard", "discarder": 2, "concealed": "234m3456s222z",
            "melds": [{"type": "pong", "tiles": "6s6s6s"}], "win_tile": "3s", "declaration": "jiating"}
    assert J.score(case)["patterns"]["P02"] == 2


# ------------------------------------------------------------------ the checker catches violations


def _state_error(g: E.Game) -> str:
    err = E._check_state(g.state, g._ep, g._rp, g._tabs)
    return E.ERR_MESSAGES.get(err, "") if err else ""


def test_checker_catches_declaration_and_passed_win_violations(engine_warm):
    """The invariant checker covers the new state: a 硬子 without an offer, a
    架听 in the wrong turn, a seat banned by a passed win in the win queue, a
    hard seat asked to discard although it cannot win, a missing declaration."""
    g = deal(_hard_hands(), draws="5z" + "7s")
    assert _state_error(g) == ""
    g.state["seat"][2]["decl"] = E.DECL_HARD
    g.state["seat"][2]["decl_turn"] = 0
    assert "declaration" in _state_error(g)  # never offered
    g.state["seat"][2]["decl"] = E.DECL_READY
    g.state["seat"][2]["decl_turn"] = 5
    assert "declaration" in _state_error(g)  # no discard yet
    g.state["seat"][2]["decl"] = 0
    g.state["seat"][2]["decl_turn"] = -1
    assert _state_error(g) == ""
    # J-3.5: seat 1 passed a win and is queued to win again
    g = deal(_hard_hands(), draws="1p" + "7s")
    act(g, "hard_decline", "discard 1p")
    assert g.phase == "claim" and g.current_player == 1
    g.state["seat"][1]["passed_win"] = 1
    g.state["seat"][1]["n_passed_win"] = 1
    assert "passed a win" in _state_error(g)
    # J-4.2: a hard seat on a turn without a possible win
    g = deal(_hard_hands(), draws="5z" + "7s")
    act(g, "hard_declare", "discard 5z")
    g2 = deal(_hard_hands(), draws="5z" + "7s")
    act(g2, "hard_decline", "discard 5z")
    assert g2.current_player == 1 and g2.phase == "claim"
    act(g2, "pass")
    assert g2.phase == "turn" and g2.current_player == 1
    g2.state["seat"][1]["decl"] = E.DECL_HARD
    g2.state["seat"][1]["decl_turn"] = 0
    assert "automatic discard" in _state_error(g2)
    # J-4.1: a legal declaration missing from the mask
    g = deal(["123m456m789m12p5z5z", JUNK_A, JUNK_B, JUNK_C], draws="9s")
    g.state["table"]["declare_kinds"] = 0
    assert "missing" in _state_error(g)
    # J-4.2: a ready non-dealer never asked
    g = deal(_hard_hands(), draws="5z")
    act(g, "hard_decline")
    g.state["seat"][1]["hard_offer"] = 0
    assert "missing" in _state_error(g)


# ------------------------------------------------------------------ records, replay, observations


def test_replay_and_observations_of_jiating_hands(engine_warm):
    """A Jiating hand's event log replays to the same result (scores included);
    observations hide what they must (declarations are public)."""
    rng = np.random.default_rng(4)
    for seed in range(6):
        g = E.Game("jiating").reset(seed=seed, dealer=seed % 4, streak=seed)
        while not g.done:
            g.step(int(rng.choice(g.legal_actions())))
            if g.state["table"]["steps"] % 17 == 0:
                E.check_state(g, observations=True)
        again = E.replay(g.log_lines())
        assert again.record == g.record
        assert g.observation(1)["declarations"].tolist() == decl(g)


def test_finish_records_rejects_a_recorded_win_the_scorer_does_not_accept(engine_warm):
    """The engine and the scorer must agree on every win: a corrupted win context is an error."""
    g = deal(["123m456m789m12p5z5z", JUNK_A, JUNK_B, JUNK_C], draws="3p")
    act(g, "win")
    row = E.new_records(1)
    E._write_record(g.state, g._ep, 0, row[0])
    assert JR.finish_records(J.JiatingRules(), row)["P46"][0] == 200
    hand = row["wins"]["hand"][0, 0]  # a view of the first win's concealed tiles
    hand[K("5z")] -= 1
    hand[K("9s")] += 1
    with pytest.raises(RuntimeError, match="no win"):
        JR.finish_records(J.JiatingRules(), row)


# ------------------------------------------------------------------ batch self-play with the checker on


def _checked_kernel(policy: str, n: int, seed: int):
    """Run the self-play kernel with the invariant checker after every step; the raw records."""
    from caishen.sim.selfplay import batch as selfplay
    from caishen.sim.bots.registry import code_table as policy_table

    name, r = E.load_rules("jiating", None)
    st_ = E.new_state()[0]
    rec = E.new_records(n)
    work = new_work()
    hand, err = selfplay._play_batch(seed, n, 16, policy_table(policy), True, st_, rec, work,
                                     np.zeros((n, 4), np.int8), (name, r))
    assert (hand, err) == (-1, 0), f"hand {hand}: {E.ERR_MESSAGES.get(err, 'illegal bot action')}"
    return r, rec


def _check_batch_records(r, rec, policy):
    from caishen.sim.selfplay import records

    n = len(rec)
    cols = JR.finish_records(r, rec)
    records.check_chunk(cols, "jiating", n)
    total = sum(cols[f"score_{s}"].astype(np.int64) for s in range(4))
    assert not total.any()
    won = cols["winner"] >= 0
    assert (cols["P01"][won] == 2).all() and not cols["P01"][~won].any()
    # payments add up to the score changes
    for s in range(4):
        got = sum(cols[f"pay_{p}_{s}"].astype(np.int64) for p in range(4) if p != s)
        paid = sum(cols[f"pay_{s}_{w}"].astype(np.int64) for w in range(4) if w != s)
        assert np.array_equal(got - paid, cols[f"score_{s}"])
    if policy == "greedy":
        assert won.mean() > 0.9  # no reserve, greedy bots: nearly every hand is won
        assert (cols["decl_0"] == E.DECL_READY).any()
    return cols


@pytest.mark.parametrize("policy", ["random", "greedy"])
def test_batch_10k_checked_hands(engine_warm, policy):
    """10,000 hands of random (greedy) self-play with the state checker after
    every step; every win scored by caishen.sim.rules.jiating, zero-sum, payments
    consistent.  (The 100,000-hand runs are marked slow.)"""
    r, rec = _checked_kernel(policy, 10_000, 20240601)
    _check_batch_records(r, rec, policy)


@pytest.mark.slow
@pytest.mark.parametrize("policy", ["random", "greedy"])
def test_batch_100k_checked_hands(engine_warm, policy):
    """100,000 hands of random (greedy) self-play with the state checker on (inside numba)."""
    r, rec = _checked_kernel(policy, 100_000, 777)
    n_won = int((rec["n_winners"] > 0).sum())
    assert n_won > (0 if policy == "random" else 90_000)
    _check_batch_records(r, rec[:5_000], policy)  # the scorer runs in Python: a sample (all of it in the 10k test)


def test_selfplay_records_match_the_contract_and_a_rescoring(engine_warm):
    """caishen.sim.selfplay.batch.play_batch returns the J-9 columns; each hand's scores are
    the scorer's for the recorded cases."""
    from caishen.sim.selfplay import batch as selfplay, records

    cols = selfplay.play_batch(300, seed=9, rules="jiating", policies="greedy,random,greedy,greedy")
    assert list(cols) == [c for c, _ in records.record_columns("jiating")]
    assert [c for c, _ in JR.COLUMNS if len(c) == 3 and c[1:].isdigit()] == list(J.PATTERN_IDS)
    records.check_chunk(cols, "jiating", 300)
    name, r = E.load_rules("jiating", None)
    for h in np.flatnonzero(cols["winner"] >= 0)[:40]:
        # replay the hand's record through the scorer from the patterns column
        for s in range(4):
            if (int(cols["winners_mask"][h]) >> s) & 1:
                pats = JR.parse_patterns(cols[f"patterns_{s}"][h])
                assert sum(pats.values()) == cols[f"P_{s}"][h] and pats["P01"] == 2
            else:
                assert cols[f"patterns_{s}"][h] == "" and cols[f"P_{s}"][h] == 0


# ------------------------------------------------------------------ rare patterns through the engine
# (the greedy bots almost never make them; these scenarios show the engine and
# the scorer can: see benchmarks/report_jiating_patterns.py)


def test_P29_P40_P48_P50_four_claimed_pongs(engine_warm):
    """Seat 1 pongs 东 南 西 北 and wins on 5z with its last tile: 全求人 (P29),
    对对胡尽是碰 (P40, which excludes 对对胡), 风胡 (P48), 大四喜 (P50, which
    excludes 小四喜)."""
    hands = ["1z" + "1357m2468p1357s", "1z1z2z2z3z3z4z4z5z1m9m1p9p", "2468m3579p2468s7z", "19s234m567p678s89m"]
    g = deal(hands, draws="6z" + "2z3z4z5z")
    act(g, "discard 1z", "pong", "discard 1m")
    for k, junk in (("2z", "9m"), ("3z", "1p"), ("4z", "9p")):
        assert g.current_player == 2 and drawn(g) == k
        act(g, f"discard {k}")
        assert g.current_player == 1 and legal(g) == {"pong", "pass"}
        act(g, "pong", f"discard {junk}")
        pass_claims(g)
    assert g.state["seat"][1]["n_melds"] == 4 and g.state["hands"][1].sum() == 1
    assert drawn(g) == "5z"
    act(g, "discard 5z", "win")
    pats = patterns(g, 1)
    assert {"P29", "P40", "P48", "P50"} <= set(pats) and "P30" not in pats and "P45" not in pats


def test_P37_P49_four_concealed_triplets(engine_warm):
    """Four triplets from the wall: a self-drawn single wait on the pair is 坎坎胡
    (P49, which excludes 暗四坎 and 对对胡); a self-drawn shanpon wait is
    暗四坎 (P37) with 对对胡 (P30)."""
    g = deal(["111m222p333s444z5z", JUNK_A, JUNK_B, "29m19p19s1236z7z8m8p"],
             draws="9s" + "6z7z1z" + "5z")
    act(g, "discard 9s")
    pass_claims(g)  # the dealer is ready: it declines 硬子
    for _ in range(3):
        tsumogiri(g)
    assert g.current_player == 0 and drawn(g) == "5z"
    act(g, "win")
    pats = patterns(g, 0)
    assert pats["P49"] == 200 and "P37" not in pats and "P30" not in pats
    g = deal(["111m222p333s5z5z6z6z", JUNK_A, JUNK_B, "29m19p19s1234z7z8p8m"], draws="9s" + "4z7z1z" + "6z")
    act(g, "discard 9s")
    pass_claims(g)
    for _ in range(3):
        tsumogiri(g)
    assert drawn(g) == "6z"
    act(g, "win")
    pats = patterns(g, 0)
    assert pats["P37"] == 40 and pats["P30"] == 40 and "P49" not in pats


# ------------------------------------------------------------------ caishen simulate --rules jiating


def test_simulate_jiating_end_to_end(engine_warm, tmp_path, capsys):
    """``caishen simulate --rules jiating`` writes the J-9 Parquet records,
    resumes, and summarizes with the Jiating rows (checked against pandas)."""
    import pandas as pd

    from caishen import cli
    from caishen.sim.selfplay import records, stream
    from caishen.sim.analysis import summary

    out = tmp_path / "run"
    argv = ["simulate", "--rules", "jiating", "--games", "600", "--chunk-size", "200", "--seed", "5",
            "--out", str(out), "--workers", "1", "--no-progress", "--policy", "greedy,random,greedy,greedy"]
    assert cli.main(argv) == 0
    text = capsys.readouterr().out
    assert "P per win" in text and "P25 七对子" in text and "架听 rate" in text
    assert cli.main(argv) == 0
    assert "0 chunk(s) now" in capsys.readouterr().out
    df = stream.read_run(out)
    want = [c for c, _ in records.record_columns("jiating")]
    assert [c for c in df.columns if c in want] == want and len(df) == 600
    assert not df[[f"score_{s}" for s in range(4)]].sum(axis=1).any()
    rows, _ = summary.summarize(df, ("greedy", "random", "greedy", "greedy"))
    got = rows.set_index(["section", "metric", "group"])["value"]
    mask = df["winners_mask"].to_numpy().astype(int)
    won = [(mask >> s) & 1 == 1 for s in range(4)]
    P = pd.concat([df[f"P_{s}"][won[s]] for s in range(4)])
    assert got[("架听 points", "P per win", "all winners")] == pytest.approx(P.mean())
    decl = pd.concat([df[f"decl_{s}"] for s in range(4)])
    assert got[("declarations", "架听 rate", "all")] == pytest.approx((decl == 1).mean())
    W = (df["winner"] >= 0).sum()
    assert got[("patterns", "P02 架听胡牌", "share of wins")] == pytest.approx((df["P02"] > 0).sum() / W)


def test_P44_all_terminal_triplets(engine_warm):
    """幺幺胡 (P44): triplets of 1m 9m 1p 9p from the wall and a pair of 1s,
    self-drawn on a single wait (with 坎坎胡 P49 and 付付幺 P36)."""
    g = deal(["111m999m111p999p1s", JUNK_A, JUNK_B, "2345m2345p2345s6z"], draws="9s" + "6z7z1z" + "1s")
    act(g, "discard 9s")
    pass_claims(g)
    for _ in range(3):
        tsumogiri(g)
    assert drawn(g) == "1s"
    act(g, "win")
    pats = patterns(g, 0)
    assert {"P44", "P49", "P36"} <= set(pats)
