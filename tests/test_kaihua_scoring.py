"""Kaihua scoring: options (K-2.6 ... K-9.3), win evaluation and payments.

Each scoring rule has a test named after its rule ID with positive and
negative cases; the numba kernels are compared with slow, obvious Python
references on many random inputs (hypothesis).
"""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from sim.rules import kaihua
from sim.rules.kaihua import (
    KaihuaRules,
    WIN_DISCARD,
    WIN_ROBBED_KONG,
    WIN_SELF_DRAW,
    _payments,
)

# ---------------------------------------------------------------------------
# options
# ---------------------------------------------------------------------------


def test_options_defaults_are_the_spec_defaults():
    r = KaihuaRules()
    assert r.to_dict() == {
        "two_caishen_min_exponent": 1,
        "dealer_rotation": "next_after_win",
        "reserved_tiles": 20,
        "multiple_ron": False,
        "swap_call_max_chows": 2,
        "piao_requires_baotou": False,
        "max_exponent": None,
        "discard_win": True,
        "discard_win_payment": "all_three",
        "failed_piao_factor": 2,
    }


def test_options_params_layout():
    r = KaihuaRules(
        two_caishen_min_exponent=0,
        dealer_rotation="winner_stays",
        reserved_tiles=14,
        multiple_ron=True,
        swap_call_max_chows=1,
        piao_requires_baotou=True,
        max_exponent=5,
        discard_win=False,
        discard_win_payment="own_share",
        failed_piao_factor=3,
    )
    p = r.params()
    assert p.dtype == np.int64 and p.shape == (kaihua.N_PARAMS,)
    assert p[kaihua.P_TWO_CAISHEN_MIN_EXPONENT] == 0
    assert p[kaihua.P_DEALER_ROTATION] == kaihua.ROTATION_WINNER_STAYS
    assert p[kaihua.P_RESERVED_TILES] == 14
    assert p[kaihua.P_MULTIPLE_RON] == 1
    assert p[kaihua.P_SWAP_CALL_MAX_CHOWS] == 1
    assert p[kaihua.P_PIAO_REQUIRES_BAOTOU] == 1
    assert p[kaihua.P_MAX_EXPONENT] == 5
    assert p[kaihua.P_DISCARD_WIN] == 0
    assert p[kaihua.P_DISCARD_WIN_PAYMENT] == kaihua.PAYMENT_OWN_SHARE
    assert p[kaihua.P_FAILED_PIAO_FACTOR] == 3
    d = KaihuaRules().params()
    assert d[kaihua.P_MAX_EXPONENT] == -1
    assert d[kaihua.P_DEALER_ROTATION] == kaihua.ROTATION_NEXT_AFTER_WIN
    assert d[kaihua.P_DISCARD_WIN_PAYMENT] == kaihua.PAYMENT_ALL_THREE
    # every index is used exactly once
    idx = [getattr(kaihua, n) for n in dir(kaihua) if n.startswith("P_")]
    assert sorted(idx) == list(range(kaihua.N_PARAMS))


@pytest.mark.parametrize(
    "options, bad",
    [
        ({"two_caishen_min_exponent": -1}, "two_caishen_min_exponent"),
        ({"reserved_tiles": 83}, "reserved_tiles"),
        ({"reserved_tiles": -2}, "reserved_tiles"),
        ({"swap_call_max_chows": 5}, "swap_call_max_chows"),
        ({"max_exponent": -1}, "max_exponent"),
        ({"failed_piao_factor": 0}, "failed_piao_factor"),
        ({"dealer_rotation": "random"}, "dealer_rotation"),
        ({"discard_win_payment": "half"}, "discard_win_payment"),
        ({"discard_win": "maybe"}, "discard_win"),
        ({"dicard_win": "0"}, "dicard_win"),
    ],
)
def test_options_reject_bad_values(options, bad):
    with pytest.raises(ValueError, match=bad):
        KaihuaRules.from_dict(options)


def test_options_from_strings():
    r = KaihuaRules.from_dict({"max_exponent": "4", "discard_win": "false", "failed_piao_factor": "1"})
    assert (r.max_exponent, r.discard_win, r.failed_piao_factor) == (4, False, 1)
    assert KaihuaRules.from_dict({"max_exponent": "none"}).max_exponent is None


# ---------------------------------------------------------------------------
# payments (K-8.1 .. K-8.3, K-8.5, K-9.3)
# ---------------------------------------------------------------------------


def pay(dealer, winner, win_type, discarder, exponent, circle=(), rules=None):
    out = np.zeros(4, np.int64)
    pc = np.zeros(4, np.bool_)
    pc[list(circle)] = True
    _payments(dealer, winner, win_type, -1 if discarder is None else discarder, exponent, pc,
              (rules or KaihuaRules()).params(), out)
    return out.tolist()


def ref_payments(dealer, winner, win_type, discarder, exponent, circle, rules):
    """Slow, obvious reference of K-8 and K-9.3, written from the spec's text."""
    scores = [0, 0, 0, 0]
    losers = [p for p in range(4) if p != winner]

    def share(p):  # K-8.1
        return (4 if dealer in (p, winner) else 2) * 2**exponent

    for p in losers:
        if win_type == WIN_SELF_DRAW:  # K-8.2
            payer = p
        elif rules.discard_win_payment == "all_three":  # K-8.3
            payer = discarder
        else:
            payer = p if p == discarder else None
        if payer is not None:
            scores[payer] -= share(p)
            scores[winner] += share(p)
        if p in circle:  # K-9.3: the share counts failed_piao_factor times in total
            scores[p] -= (rules.failed_piao_factor - 1) * share(p)
            scores[winner] += (rules.failed_piao_factor - 1) * share(p)
    return scores


def test_K_8_1_shares_dealer_4_others_2():
    # dealer self-draw: 4 + 4 + 4 = 12 x 2**E
    assert pay(0, 0, WIN_SELF_DRAW, None, 0) == [12, -4, -4, -4]
    assert pay(2, 2, WIN_SELF_DRAW, None, 3) == [-32, -32, 96, -32]
    # non-dealer self-draw: dealer 4, the others 2 each, total 8 x 2**E
    assert pay(0, 1, WIN_SELF_DRAW, None, 0) == [-4, 8, -2, -2]
    assert pay(3, 1, WIN_SELF_DRAW, None, 2) == [-8, 32, -8, -16]
    # negative: the base is not 4 for two non-dealers
    assert pay(0, 1, WIN_SELF_DRAW, None, 0)[2] != -4


def test_K_8_2_self_draw_everybody_pays_own_share():
    s = pay(1, 3, WIN_SELF_DRAW, None, 1)
    assert s == [-4, -8, -4, 16]
    # the discarder argument is ignored on a self-draw
    assert pay(1, 3, WIN_SELF_DRAW, 0, 1) == s


def test_K_8_3_discarder_pays_all_three_shares():
    assert pay(0, 1, WIN_DISCARD, 3, 2) == [0, 32, 0, -32]
    assert pay(0, 1, WIN_ROBBED_KONG, 2, 1) == [0, 16, -16, 0]
    assert pay(0, 0, WIN_DISCARD, 2, 0) == [12, 0, -12, 0]
    # option own_share: the discarder pays only their own share
    own = KaihuaRules(discard_win_payment="own_share")
    assert pay(0, 1, WIN_DISCARD, 3, 2, rules=own) == [0, 8, 0, -8]
    assert pay(0, 1, WIN_DISCARD, 0, 0, rules=own) == [-4, 4, 0, 0]
    assert pay(0, 1, WIN_ROBBED_KONG, 2, 1, rules=own) == [0, 4, -4, 0]


def test_K_9_3_failed_piao_pays_own_share_once_more():
    # K18: seat 3 inside its 飘 circle pays its share twice in total
    assert pay(0, 1, WIN_SELF_DRAW, None, 0, circle=[3]) == [-4, 10, -2, -4]
    # on a discard win the 飘 player pays the extra on top of nothing else
    assert pay(0, 1, WIN_DISCARD, 2, 1, circle=[0]) == [-8, 24, -16, 0]
    # the winner's own circle does not fail
    assert pay(0, 1, WIN_SELF_DRAW, None, 0, circle=[1]) == [-4, 8, -2, -2]
    # factor 1 disables it, factor 3 makes the share count three times
    assert pay(0, 1, WIN_SELF_DRAW, None, 0, circle=[3], rules=KaihuaRules(failed_piao_factor=1)) == [-4, 8, -2, -2]
    assert pay(0, 1, WIN_SELF_DRAW, None, 0, circle=[0, 3], rules=KaihuaRules(failed_piao_factor=3)) == [
        -12, 20, -2, -6]


def test_payments_accumulate_for_several_winners():
    out = np.zeros(4, np.int64)
    params = KaihuaRules(multiple_ron=True).params()
    pc = np.zeros(4, np.bool_)
    _payments(0, 1, WIN_DISCARD, 3, 0, pc, params, out)
    _payments(0, 2, WIN_DISCARD, 3, 1, pc, params, out)
    assert out.tolist() == [0, 8, 16, -24]


_rules_st = st.builds(
    KaihuaRules,
    discard_win_payment=st.sampled_from(["all_three", "own_share"]),
    failed_piao_factor=st.integers(1, 4),
)


@st.composite
def _win_st(draw):
    dealer = draw(st.integers(0, 3))
    winner = draw(st.integers(0, 3))
    win_type = draw(st.sampled_from([WIN_SELF_DRAW, WIN_DISCARD, WIN_ROBBED_KONG]))
    discarder = -1 if win_type == WIN_SELF_DRAW else draw(st.sampled_from([p for p in range(4) if p != winner]))
    exponent = draw(st.integers(0, 20))
    circle = draw(st.sets(st.integers(0, 3)))
    return dealer, winner, win_type, discarder, exponent, circle


@settings(max_examples=300, deadline=None)
@given(_win_st(), _rules_st)
def test_K_8_5_payments_sum_to_zero_and_match_reference(win, rules):
    dealer, winner, win_type, discarder, exponent, circle = win
    got = pay(dealer, winner, win_type, discarder, exponent, circle, rules)
    assert sum(got) == 0
    assert got == ref_payments(dealer, winner, win_type, discarder, exponent, circle, rules)
    assert got[winner] > 0 and all(got[p] <= 0 for p in range(4) if p != winner)
