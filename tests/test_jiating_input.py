"""Jiating input that play cannot produce (decision D11 of caishen.sim.rules.jiating) and the
bounds on every integer that enters (the module's Bounds): rejected with a ValueError naming the
contradiction or the value; every case play can produce is still scored.

Spec: ``shared/rules/jiating.md`` (J-3.3, J-4.1, J-4.2, J-5.4, P27) and the
engine's decisions J1-J10 (``sim/engine/``).
"""

from __future__ import annotations

import jiating_reference as R
import pytest

from caishen.sim.rules import jiating as J
from caishen.sim.rules.jiating import JiatingRules, evaluate, score

from test_jiating_scoring import case

PONG = [("pong", "777z")]
CKONG = [("kong_concealed", "5555z")]
TIANHU = dict(concealed="123m456p789s11z22z", win="2z", win_type="self_draw", winner=0, first_turn=True)


def _case(concealed, win, **kw):
    return case(concealed, win, **kw)


# ------------------------------------------------------------ D11: what play cannot produce
#: (D11 item, case, words the message must contain)
IMPOSSIBLE = [
    ("1 tianhu by a non-dealer", dict(TIANHU, winner=1), ["first_turn", "dealer"]),
    ("2 tianhu on a discard", dict(TIANHU, win_type="discard"), ["first_turn", "discard"]),
    ("3 tianhu with a concealed kong", dict(TIANHU, concealed="123m456p11z22z", melds=[("kong_concealed", "9999s")]),
     ["first_turn", "kong_concealed"]),
    ("3 tianhu with a pong", dict(TIANHU, concealed="123m456p11z22z", melds=[("pong", "999s")]),
     ["first_turn", "pong"]),
    ("4 tianhu on a replacement draw", dict(TIANHU, concealed="123m456p11z22z", melds=[("kong_concealed", "9999s")],
                                            replacement_draw=True), ["first_turn"]),
    ("5 tianhu with hard", dict(TIANHU, declaration="hard"), ["first_turn", "'hard'", "discard"]),
    ("5 tianhu with jiating", dict(TIANHU, declaration="jiating"), ["first_turn", "'jiating'", "discard"]),
    ("6 tianhu with visible tiles", dict(TIANHU, visible="1m"), ["first_turn", "visible"]),
    ("7 replacement draw on a discard", dict(concealed="123m456p11z22z", win="2z", melds=[("kong_exposed", "9999s")],
                                             replacement_draw=True), ["replacement_draw", "discard"]),
    ("8 replacement draw without a kong", dict(concealed="123m456p789s2p", win="2p", melds=PONG, win_type="self_draw",
                                               replacement_draw=True), ["replacement_draw", "kong"]),
    ("9 hard dealer wins on a replacement draw", dict(concealed="234m567p99s11z", win="9s", winner=0,
                                                      win_type="self_draw", melds=CKONG, replacement_draw=True,
                                                      declaration="hard"), ["replacement_draw", "'hard'"]),
    ("10 non-dealer hard with a pong", dict(concealed="123m456p789s2p", win="2p", melds=PONG, declaration="hard"),
     ["'hard'", "non-dealer", "pong"]),
    ("10 non-dealer hard with a concealed kong", dict(concealed="234m567p99s11z", win="9s", melds=CKONG,
                                                      declaration="hard"), ["'hard'", "non-dealer", "kong_concealed"]),
    ("11 dealer hard with a pong", dict(concealed="123m456p789s2p", win="2p", melds=PONG, winner=0,
                                        declaration="hard"), ["'hard'", "dealer", "pong"]),
    ("11 dealer hard with an added kong", dict(concealed="234m567p99s11z", win="9s", winner=0, declaration="hard",
                                               melds=[("kong_added", "5555z")]), ["'hard'", "kong_added"]),
    ("11 dealer hard with an exposed kong", dict(concealed="234m567p99s11z", win="9s", winner=0, declaration="hard",
                                                 melds=[("kong_exposed", "5555z")]), ["'hard'", "kong_exposed"]),
    ("12 first discard not the dealer's", dict(concealed="234m567p345s99s11z", win="9s", discarder=2,
                                               on_dealers_first_discard=True), ["on_dealers_first_discard"]),
    ("12 first discard on a self-draw", dict(concealed="234m567p345s99s11z", win="9s", win_type="self_draw",
                                             on_dealers_first_discard=True), ["on_dealers_first_discard"]),
    ("13 first discard with a pong", dict(concealed="123m456p789s2p", win="2p", melds=PONG, discarder=0,
                                          on_dealers_first_discard=True), ["on_dealers_first_discard", "pong"]),
    ("14 first discard with jiating", dict(concealed="234m567p345s99s11z", win="9s", discarder=0,
                                           declaration="jiating", on_dealers_first_discard=True),
     ["on_dealers_first_discard", "'jiating'"]),
    ("15 first discard with visible tiles", dict(concealed="234m567p345s99s11z", win="9s", discarder=0,
                                                 visible="1m", on_dealers_first_discard=True),
     ["on_dealers_first_discard", "visible"]),
    ("16 robbed kong, the issue's case", dict(concealed="123m456p789s2p", win="2p", melds=PONG,
                                              win_type="robbed_kong"), ["robbed_kong", "2p", "holds 1 more"]),
    ("16 robbed kong, a pong of the kind", dict(concealed="13m456p789s55z", win="2m", melds=[("pong", "222m")],
                                                win_type="robbed_kong"), ["robbed_kong", "holds 3 more"]),
    ("17 robbed kong with four visible", dict(concealed="13m456p789s111z55z", win="2m", win_type="robbed_kong",
                                              visible="2222m"), ["more than four 2m (5)", "robbed pong"]),
    ("17 a fifth copy", dict(concealed="123m456p789s2p", win="2p", melds=PONG, visible="222p"), ["more than four 2p"]),
    ("18 self-draw with a discarder", dict(concealed="123m456p789s2p", win="2p", melds=PONG, win_type="self_draw",
                                           discarder=2), ["discarder"]),
    ("18 the winner discards", dict(concealed="123m456p789s2p", win="2p", melds=PONG, discarder=1), ["discarder"]),
    ("20 tianhu with the dealer ready after its first discard", dict(TIANHU, dealer_ready_after_first_discard=True),
     ["dealer_ready_after_first_discard", "first_turn"]),
]


@pytest.mark.parametrize("kw, words", [(kw, w) for _, kw, w in IMPOSSIBLE], ids=[i for i, _, _ in IMPOSSIBLE])
def test_D11_impossible_cases_are_rejected_naming_the_contradiction(kw, words):
    kw = dict(kw)
    c = _case(kw.pop("concealed"), kw.pop("win"), **kw)
    with pytest.raises(ValueError) as e:
        score(c)
    for w in words:
        assert w in str(e.value), (w, str(e.value))


def test_J_5_4_tianhu_with_a_hard_declaration_is_rejected_not_418_points():
    c = _case(**{k: v for k, v in TIANHU.items()}, declaration="hard")
    with pytest.raises(ValueError, match="first_turn.*'hard'"):
        score(c)
    assert score(_case(**TIANHU))["P"] == 218  # 天胡 without a declaration: P01 + P11 + P14 + P46


def test_J_5_4_tianhu_with_a_jiating_declaration_is_rejected():
    with pytest.raises(ValueError, match="first_turn.*'jiating'"):
        score(_case(**TIANHU, declaration="jiating"))


def test_J_4_2_non_dealer_hard_winner_holding_a_pong_is_rejected():
    with pytest.raises(ValueError, match="non-dealer.*pong.*J-4.2"):
        score(_case("123m456p789s2p", "2p", melds=PONG, declaration="hard"))


def test_J_4_2_hard_seat_never_wins_on_a_replacement_draw():
    with pytest.raises(ValueError, match="replacement_draw.*'hard'"):
        score(_case("234m567p99s11z", "9s", winner=0, win_type="self_draw", melds=CKONG, replacement_draw=True,
                    declaration="hard"))


#: (name, case, patterns, P, G, scores): every one can arise in play, so it is scored
POSSIBLE = [
    ("J2 hard dealer with a concealed kong, self-draw",
     dict(concealed="234m567p99s11z", win="9s", declaration="hard", winner=0, win_type="self_draw", melds=CKONG),
     {"P01": 2, "P11": 12, "P14": 10, "P47": 200}, 224, 12, [1212, -404, -404, -404]),
    ("J2 hard dealer with a concealed kong, later discard",
     dict(concealed="234m567p99s11z", win="9s", declaration="hard", winner=0, discarder=2, melds=CKONG),
     {"P01": 2, "P07": 2, "P11": 6, "P47": 200}, 210, 12, [402, 0, -402, 0]),
    ("J-4.2 hard non-dealer wins on the dealer's first discard",
     dict(concealed="234m567p345s99s11z", win="9s", declaration="hard", winner=1, discarder=0,
          on_dealers_first_discard=True),
     {"P01": 2, "P07": 2, "P24": 20}, 24, 0, [-50, 50, 0, 0]),
    ("J-4.1 jiating seat with an exposed kong wins on its replacement draw",
     dict(concealed="123m456p11z22z", win="2z", declaration="jiating", melds=[("kong_exposed", "9999s")],
          win_type="self_draw", replacement_draw=True),
     {"P01": 2, "P03": 2, "P11": 6, "P18": 10}, 20, 8, [-60, 120, -30, -30]),
    ("J-3.3 hard seat robs a kong (the robbed pong implied)",
     dict(concealed="13m456p789s111z55z", win="2m", declaration="hard", win_type="robbed_kong", winner=1,
          discarder=3),
     {"P01": 2, "P02": 2, "P07": 2, "P11": 6, "P19": 10, "P24": 20, "P27": 20}, 62, 0, [0, 63, 0, -63]),
    ("J-5.4 tianhu",
     dict(TIANHU),
     {"P01": 2, "P11": 6, "P14": 10, "P46": 200}, 218, 0, [1212, -404, -404, -404]),
]


@pytest.mark.parametrize("kw, patterns, P, G, scores", [x[1:] for x in POSSIBLE], ids=[x[0] for x in POSSIBLE])
def test_D11_possible_cases_are_scored(kw, patterns, P, G, scores):
    kw = dict(kw)
    res = score(_case(kw.pop("concealed"), kw.pop("win"), **kw))
    assert (res["win"], res["patterns"], res["P"], res["G"], res["scores"]) == (True, patterns, P, G, scores)


@pytest.mark.parametrize("visible", ["", "2m", "22m", "222m", "222m1p"])
def test_J_3_3_robbed_kong_implies_the_robbed_pong_for_P27(visible):
    # the robbed pong's three 2m are visible to the winner whether or not `visible` lists them
    res = evaluate(_case("13m456p789s111z55z", "2m", win_type="robbed_kong", visible=visible))
    assert R.evaluate(_case("13m456p789s111z55z", "2m", win_type="robbed_kong", visible=visible)) \
        .context.seen_of_win_kind == 3  # the reference's context
    assert res.patterns["P27"] == 20 and res.patterns["P19"] == 10


def test_J_3_3_robbed_kong_engine_context_agrees():
    # the engine's J10 records 3 visible copies of a robbed pong: same answer as the implied count
    a = score(_case("13m456p789s111z55z", "2m", win_type="robbed_kong", visible="222m"))
    b = score(_case("13m456p789s111z55z", "2m", win_type="robbed_kong"))
    assert a["patterns"] == b["patterns"] and a["scores"] == b["scores"]


# ------------------------------------------------------------ bounds (module docstring)
@pytest.mark.parametrize("streak", [2**62, 2**64, -1, J.MAX_STREAK + 1, True, 1.0, "3"])
def test_J_2_4_streak_out_of_bounds_is_rejected_naming_it(streak):
    with pytest.raises(ValueError, match="streak must be an integer in 0..1000000"):
        score(_case("123m456p789s2p", "2p", melds=PONG, streak=streak))


def test_J_6_4_streak_at_its_bound_is_scored_exactly():
    res = score(_case("123m456p789s2p", "2p", melds=PONG, discarder=0, streak=J.MAX_STREAK))
    assert res["scores"] == [-(2 * 2 + 2 + 2 * J.MAX_STREAK), 2 * 2 + 2 + 2 * J.MAX_STREAK, 0, 0]


@pytest.mark.parametrize("fn", [
    lambda v: J.payment(0, 1, 2, 0, dealer=0, streak=v, self_draw=True),
    lambda v: J.settle_self_draw(1, 2, 0, dealer=0, streak=v),
    lambda v: J.settle_discard(2, [(1, 2, 0)], dealer=0, streak=v),
])
def test_J_6_4_payment_functions_bound_the_streak(fn):
    for v in (2**62, 2**64, -1):
        with pytest.raises(ValueError, match="streak"):
            fn(v)


def test_J_6_2_payment_functions_bound_P_and_G():
    with pytest.raises(ValueError, match="P must be an integer in 0..1000000000000"):
        J.payment(0, 1, 2**63, 0, dealer=0, self_draw=True)
    with pytest.raises(ValueError, match="G must be"):
        J.settle_discard(2, [(1, 2, 2**64)], dealer=0)
    assert J.payment(0, 1, J.MAX_HAND_POINTS, 0, dealer=0, self_draw=False,
                     rules=JiatingRules(dealer_cap=None)) == 2 * J.MAX_HAND_POINTS + 2


@pytest.mark.parametrize("options, words", [
    ({"pattern_points": "P01:99999999999999999999999"}, "pattern_points[P01]"),
    ({"pattern_points": {"P01": 10**6 + 1}}, "pattern_points[P01]"),
    ({"pattern_points": {"P01": float("inf")}}, "pattern_points[P01]"),
    ({"pattern_points": {"P01": [1]}}, "pattern_points[P01]"),
    ({"pattern_points": [[["P01"], 1]]}, "unknown pattern ID"),
    ({"pattern_points": "{" * 5000}, "pattern_points"),
    ({"exclusions": "[" * 5000}, "exclusions"),
    ({"exclusions": {"P50": 45}}, "exclusions[P50]"),
    ({"streak_step": 10**30}, "streak_step"),
    ({"streak_step": "9" * 100000}, "streak_step"),
    ({"streak_step": 10**6 + 1}, "streak_step"),
    ({"dealer_factor": 101}, "dealer_factor"),
    ({"concealed_factor": 101}, "concealed_factor"),
    ({"kong_exposed_points": 10**7}, "kong_exposed_points"),
    ({"bonus_self_draw_dealer": 10**7}, "bonus_self_draw_dealer"),
    ({"cap": 10**10}, "cap"),
    ({"dealer_cap": float("inf")}, "dealer_cap"),
])
def test_option_bounds_raise_value_errors_naming_the_option(options, words):
    with pytest.raises(ValueError) as e:
        JiatingRules.from_dict(options)
    assert words in str(e.value) and len(str(e.value)) < 400


def test_J_6_2_largest_options_cannot_overflow():
    """Every option at its bound, the richest hands: the scores equal the exact Python-int formula."""
    big = J.MAX_POINTS_OPTION
    r = JiatingRules(pattern_points={pid: big for pid in J.PATTERN_IDS}, dealer_factor=J.MAX_FACTOR,
                     concealed_factor=J.MAX_FACTOR, dealer_cap=None, cap=None, streak_step=big,
                     kong_exposed_points=big, kong_concealed_points=big, bonus_discard=big,
                     bonus_discard_dealer=big, bonus_self_draw=big, bonus_self_draw_dealer=big)
    for concealed, win, melds in [("1122334455667m", "7m", []),  # doubled 清一色, 清四付, 姊妹付 x2 ...
                                  ("111z222z333z5z", "5z", [("kong_concealed", "4444z")])]:  # 4 P11, kong G
        c = _case(concealed, win, melds=melds, win_type="self_draw", winner=0, streak=J.MAX_STREAK)
        res = evaluate(c, r)
        assert res.P == sum(res.patterns.values()) and res.P >= 5 * 10**6
        per_payer = J.MAX_FACTOR * (res.P + res.G) + big + big * J.MAX_STREAK
        assert res.scores == [3 * per_payer, -per_payer, -per_payer, -per_payer]
        assert max(abs(x) for x in res.scores) < 2**53
        # the bound of the module docstring: P <= 54 * 10**6 * 100
        assert res.P <= 54 * big * J.MAX_FACTOR
    assert evaluate(_case("1122334455667m", "7m", win_type="self_draw"), r).patterns["P16"] == 2 * big * 100


# ------------------------------------------------------------ D11 across the winners of one discard (J-3.4)
def test_J_3_4_winners_of_one_discard_share_the_tile():
    a = _case("123m456p789s2p", "2p", melds=PONG, winner=1, discarder=2)
    b = _case("13m456p789s111z55z", "2m", winner=3, discarder=2)
    with pytest.raises(ValueError, match="win_tile differs"):
        J.score_discard_winners([a, b])


def test_J_3_4_winners_of_one_discard_hold_at_most_four_copies_together():
    # each waits on 22p (shanpon) and holds two 2p: with the discarded 2p that is five
    a = _case("123m456p789s22p11z", "2p", winner=1, discarder=2)
    b = _case("123m456p789s22p33z", "2p", winner=3, discarder=2)
    assert score(a)["win"] and score(b)["win"]  # each alone is fine
    with pytest.raises(ValueError, match=r"more than four 2p \(5\) among the winners"):
        J.score_discard_winners([a, b])


def test_J_3_4_winners_of_one_discard_share_on_dealers_first_discard():
    a = _case("234m567p345s99s11z", "9s", winner=1, discarder=0, on_dealers_first_discard=True)
    b = _case("123m456p789m78s33z", "9s", winner=3, discarder=0)
    with pytest.raises(ValueError, match="on_dealers_first_discard differs"):
        J.score_discard_winners([a, b])
    b = _case("123m456p78s33z", "9s", melds=PONG, winner=3, discarder=0, on_dealers_first_discard=True)
    with pytest.raises(ValueError, match="on_dealers_first_discard with a pong"):  # D11 13
        J.score_discard_winners([a, b])
    b = _case("123m456p789m78s33z", "9s", winner=3, discarder=0, on_dealers_first_discard=True)
    assert sum(J.score_discard_winners([a, b])["scores"]) == 0
    c = dict(b, dealer_ready_after_first_discard=True)  # one hand: the dealer was ready or not (D11 19)
    with pytest.raises(ValueError, match="dealer_ready_after_first_discard differs"):
        J.score_discard_winners([a, c])


def test_J_3_4_two_winners_of_one_discard_are_paid_separately():
    a = _case("123m456p789s2p", "2p", melds=PONG, winner=1, discarder=2)
    b = _case("123m456p789s2p", "2p", melds=[("pong", "666z")], winner=3, discarder=2)
    out = J.score_discard_winners([a, b])
    assert out["scores"] == [0, 3, -6, 3] and [w["scores"] for w in out["wins"]] == [[0, 3, -3, 0], [0, 0, -3, 3]]
