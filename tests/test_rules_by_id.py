"""Scoring rules that had no test named after their ID, and the spec's latest clarifications.

``tests/test_rule_docs.py`` wants every scoring rule (K-6.x .. K-9.x, J-6.x,
J-7, P01..P50 in ``docs/rules/``) to have a test whose name carries its ID.
K-7.2, K-8.4 and K-9.4 had none; their tests are here, built from hand-made
scoring cases (``caishen.sim.rules.kaihua.score``) and hand-built walls
(``tests/scenario.py``), as the rule-set test files build theirs.  Also
here: the J-7 大四喜 line and the P49 clarification of the current spec.
"""

from __future__ import annotations

import functools

import pytest

from caishen.sim import engine as E
from caishen.sim import tiles
from caishen.sim.rules import jiating, kaihua
from caishen.sim.rules.kaihua import KaihuaRules

import jiating_reference as R
import scenario
from scenario import act, legal

deal = functools.partial(scenario.deal, "kaihua")  #: a Kaihua game on a hand-built wall, checked


def kcase(concealed, win_tile, *, win_type="self_draw", discarder=None, melds=(), chain=(), dealer=0, winner=1):
    """A Kaihua scoring-vector case (``shared/vectors`` format); ``melds`` as ``[(type, tiles)]``.

    On a discard-style win a chain ending in a 飘 link means the winner's own circle is
    still open (K-9.2), so the winner is listed in ``piao_circle`` (a case play can produce).
    """
    open_circle = win_type != "self_draw" and bool(chain) and chain[-1] == "piao"
    return {
        "id": "t", "rules": "kaihua", "dealer": dealer, "winner": winner, "win_type": win_type,
        "discarder": discarder, "concealed": concealed, "melds": [{"type": t, "tiles": s} for t, s in melds],
        "win_tile": win_tile, "replacement_draw": False, "chain": list(chain),
        "piao_circle": [winner] if open_circle else [],
    }


def jcase(concealed, win_tile, *, win_type="discard", discarder=2, dealer=0, winner=1):
    """A Jiating scoring-vector case without melds or declarations."""
    return {
        "id": "t", "rules": "jiating", "dealer": dealer, "streak": 0, "winner": winner, "win_type": win_type,
        "discarder": None if win_type == "self_draw" else discarder, "concealed": concealed, "melds": [],
        "win_tile": win_tile, "replacement_draw": False, "declaration": "none", "first_turn": False,
        "visible": "",
    }


def pass_claims(g: E.Game) -> None:
    while g.phase in ("claim", "rob"):
        act(g, "pass")


def tsumogiri(g: E.Game) -> None:
    """The seat to act discards the tile it just drew; every claim on it is passed."""
    act(g, f"discard {tiles.kind_name(int(g.state['table']['drawn']))}")
    pass_claims(g)


def scores(g: E.Game) -> list[int]:
    return [g.record[f"score_{s}"] for s in range(4)]


# ------------------------------------------------------------------ K-7.2
#: (concealed, win tile, melds, chain, rules, expected (win, exponent) of both readings)
_K72 = [
    ("123m456m789p23s55s", "4s", (), (), None, (True, 0)),  # 平胡
    ("123m456m789p23s7z5z", "4s", (), (), None, (True, 0)),  # one 财神 (the 7z pair)
    ("11m23m567m789m999m", "4m", (), (), None, (True, 1)),  # 清一色 (K-6.4)
    ("456m789p23s55s", "4s", (("pong", "777z"),), (), None, (True, 0)),  # with a meld
    ("123m456m789p23s55s", "4s", (), ("piao",), None, (True, 0)),  # chain links count on self-draws only
    ("123m456m789p345s5z", "7z", (), (), None, (False, None)),  # 爆头 shape (K-7.1, Kaihua D6)
    ("123m456m789p3s7z5z5z", "4s", (), (), None, (False, None)),  # two 财神 (K-7.1)
    ("123m456m789p23s55s", "4s", (), (), KaihuaRules(discard_win=False), (False, None)),  # the switch
    ("123m456m789p23s55s", "4s", (), (), KaihuaRules(discard_win_payment="own_share"), (True, 0)),
]


@pytest.mark.parametrize("concealed, win, melds, chain, rules, expect", _K72)
def test_K_7_2_robbing_an_added_kong_is_judged_and_paid_as_a_discard_win(concealed, win, melds, chain, rules,
                                                                          expect):
    """K-7.2: a robbed added kong is a discard-style win: the same legality (every K-7.1
    condition, the discard_win switch included: Kaihua D7), exponent, flags and payments
    (the robbed player pays like the discarder, K-8.3) as a win on a discard of that tile."""
    robbed = kaihua.score(kcase(concealed, win, win_type="robbed_kong", discarder=2, melds=melds, chain=chain),
                          rules)
    discard = kaihua.score(kcase(concealed, win, win_type="discard", discarder=2, melds=melds, chain=chain), rules)
    assert (robbed["win"], robbed["exponent"]) == expect
    assert robbed == discard
    if robbed["win"]:
        assert robbed["scores"][2] < 0 and robbed["scores"][0] == robbed["scores"][3] == 0  # seat 2 alone pays
    self_drawn = kaihua.score(kcase(concealed, win, melds=melds, chain=chain), rules)
    if expect[0] and chain:  # the same hand drawn: the link counts (so the case tests something)
        assert self_drawn["exponent"] == expect[1] + len(chain)


# ------------------------------------------------------------------ K-8.4
_LIUJU_HANDS = ["9m19p19s1234z67z25m", "28m28p28s1234z67z3m", "37m37p37s1234z67z4m", "1111m456p456s123z"]


def _draws_ending_in_a_caishen() -> str:
    """64 normal draws (84 tiles after the deal, 20 reserved) for _LIUJU_HANDS: 63 tiles
    without a 财神 in kind order, then a 财神 as the last draw (seat 3's)."""
    left = [4] * tiles.N_KINDS
    for h in _LIUJU_HANDS:
        for k in tiles.parse_kinds(h):
            left[k] -= 1
    left[tiles.CAISHEN] = 0
    rest = [k for k in range(tiles.N_KINDS) for _ in range(left[k])]
    return "".join(tiles.kind_name(k) for k in rest[:63]) + "5z"


@pytest.mark.parametrize("factor", [2, 16])
def test_K_8_4_liuju_nobody_pays_even_inside_an_open_piao_circle(engine_warm, factor):
    """K-8.4: the wall runs down to the reserve (K-3.4) right after seat 3's 飘财; its
    circle is still open at the 流局, yet nobody pays: no failed 飘 (K-9.3 needs a win)."""
    g = deal(_LIUJU_HANDS, draws=_draws_ending_in_a_caishen(), failed_piao_factor=factor)
    while not g.done:
        last = (g.current_player, int(g.state["table"]["drawn"]))
        tsumogiri(g)
    assert last == (3, tiles.CAISHEN)  # the last discard was seat 3's 财神
    assert g.state["seat"][3]["circle_open"] == 1  # ... and its circle is open
    r = g.record
    assert r["winner"] == -1 and r["win_type"] == -1 and r["tiles_left"] == 20
    assert scores(g) == [0, 0, 0, 0]
    assert r["piao_3"] == 1 and [r[f"failed_piao_{s}"] for s in range(4)] == [0, 0, 0, 0]


# ------------------------------------------------------------------ K-9.4
_OTHERS = ["28m28p28s1234z67z3m", "37m37p37s1234z67z4m", "456m456p456s1234z"]


@pytest.mark.parametrize("dealer_hand, first_draw", [
    ("555z123m456m789m1p", "1p"),  # K-2.4: three 财神 in the 14
    ("5z123m456m789m123p", "5z"),  # K-2.5: a 爆头 shape draws a 财神
])
def test_K_9_4_forced_piao_is_a_piao(engine_warm, dealer_hand, first_draw):
    """K-9.4: a forced 飘 (K-2.4, K-2.5) is a 飘财 like any other: the only legal discard is a
    财神, it opens a circle and adds a chain link (K-6.5, K-9.1), and the link counts when
    the dealer then wins by self-draw: 爆头 (+1) and one 飘 link (+1), x4."""
    g = deal([dealer_hand, *_OTHERS], draws=first_draw + "1z2z3z" + "9s")
    assert legal(g) == {"discard 5z"}  # forced
    act(g, "discard 5z")
    pass_claims(g)
    seat0 = g.state["seat"][0]
    assert seat0["joker_discards"] == 1 and seat0["chain_joker"] == 1 and seat0["circle_open"] == 1
    for _ in range(3):
        tsumogiri(g)
    assert g.current_player == 0 and "win" in legal(g)
    act(g, "win")
    r = g.record
    assert r["exponent"] == 2 and r["chain_piao"] == 1 and r["chain_len"] == 1 and r["piao_0"] == 1
    assert set(kaihua.flag_names(r["hand_flags"])) == {"baotou", "chain", "piao"}
    assert scores(g) == [48, -16, -16, -16]  # dealer self-draw: 4 x 2**2 from each (K-8.1)


def test_K_9_4_links_that_do_not_count_are_not_flagged():
    """K-9.4: a chain link that does not count in the exponent is not shown as counted:
    no ``chain`` / ``piao`` flag on a discard win (links count on self-draws only,
    Kaihua D9) nor, under ``piao_requires_baotou``, on a self-draw that is not 爆头."""
    hand = "123m456m789p23s55s"
    counted = kaihua.score(kcase(hand, "4s", chain=["piao"]))
    assert counted["exponent"] == 1 and {"chain", "piao"} <= set(counted["flags"])  # the link counts
    on_discard = kaihua.score(kcase(hand, "4s", chain=["piao"], win_type="discard", discarder=2))
    assert on_discard["exponent"] == 0 and on_discard["flags"] == ["pinghu"]
    not_baotou = kaihua.score(kcase(hand, "4s", chain=["piao"]), KaihuaRules(piao_requires_baotou=True))
    assert not_baotou["exponent"] == 0 and not_baotou["flags"] == ["pinghu"]
    baotou = kaihua.score(kcase("123m456m789p345s5z", "7z", chain=["piao"]), KaihuaRules(piao_requires_baotou=True))
    assert baotou["exponent"] == 2 and set(baotou["flags"]) == {"baotou", "chain", "piao"}


def test_K_9_4_record_shows_no_uncounted_chain_links(engine_warm):
    """K-9.4 with K-10: seat 1 discards a 财神 (a 飘 link), then wins on seat 2's discard:
    the link did not count (exponent 0), so the record shows no chain."""
    g = deal(["19m19p19s1234z67z5m", "123m456m789p23s55s", "37m37p37s1234z67z4m", "28m28p28s1234z67z3m"],
             draws="6z5z4s")
    act(g, "discard 6z")
    pass_claims(g)
    act(g, "discard 5z")  # seat 1: 飘财
    pass_claims(g)
    act(g, "discard 4s")  # seat 2
    assert g.current_player == 1 and legal(g) == {"win", "pass"}
    act(g, "win")
    r = g.record
    assert r["win_type"] == 1 and r["exponent"] == 0 and kaihua.flag_names(r["hand_flags"]) == ["pinghu"]
    assert r["piao_1"] == 1  # the 飘 attempt itself is recorded (K-10)
    assert (r["chain_len"], r["chain_piao"], r["chain_kong"]) == (0, 0, 0)


# ------------------------------------------------------------------ J-7, P49 (clarified in the spec)
def test_J_7_da_si_xi_scores_neither_xiao_si_xi_nor_qing_san_dui():
    """J-7: a 大四喜 hand meets 小四喜's definition (three of 东南西北中) and 清三对's
    (three wind triplets), yet scores neither (Jiating D5: exclusions act on every
    pattern whose definition holds)."""
    p = jiating.score(jcase("111z222z333z444z5z", "5z"))["patterns"]
    assert p["P50"] == 200 and "P45" not in p and "P22" not in p
    # negative: without the fourth wind triplet 小四喜 scores, and it alone removes 清三对
    p = jiating.score(jcase("111z222z333z44z55z", "5z"))["patterns"]
    assert "P50" not in p and p["P45"] == 200 and "P22" not in p
    # the predicates do hold on the 大四喜 hand (so the exclusions, not the predicates, remove them)
    res = R.evaluate(jcase("111z222z333z444z5z", "5z"))  # the reference's predicates
    assert R.xiao_si_xi(res.hand) and R.qing_san_dui(res.hand)


def test_P49_kankan_hu_other_waits_do_not_matter():
    """P49: four own triplets, self-drawn on the tile that completes the pair (单钓); that the
    hand also waited on other kinds (3p, 6p: runs with 44p) does not matter (Jiating D4)."""
    res = jiating.evaluate(jcase("111m222m333m444p5p", "5p", win_type="self_draw"))
    assert len(R.evaluate(jcase("111m222m333m444p5p", "5p", win_type="self_draw")).context.waits) > 1
    assert res.patterns["P49"] == 200 and not {"P30", "P32", "P37"} & set(res.patterns)
    # negative: the same hand won on a discard, or self-drawn on another wait, is no 坎坎胡
    assert "P49" not in jiating.score(jcase("111m222m333m444p5p", "5p"))["patterns"]
    assert "P49" not in jiating.score(jcase("111m222m333m444p5p", "6p", win_type="self_draw"))["patterns"]
