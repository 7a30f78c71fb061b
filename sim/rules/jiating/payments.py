"""Jiating's payments (J-6.2, J-6.4, J-6.5, J-3.4): the kernels and their checked Python face.

Payer ``p`` owes winner ``w`` ``min(dealer_factor (P + G), dealer_cap) +
bonus`` if either is the dealer, else ``min(P + G, cap) + bonus``; bonuses
and the dealer's streak are added after the cap (J-6.4).  A self-draw is
paid by the other three, a discard or robbed kong by the discarder (D10),
each winner separately (J-3.4).  :func:`_payments` is the kernel (self-play
records, :func:`caishen.sim.rules.jiating.kernels.score_win`);
:func:`payment`, :func:`settle_self_draw` and :func:`settle_discard` check
their input (seats, ``P`` / ``G`` and ``streak`` within the bounds).
"""

from __future__ import annotations

from typing import Any, Sequence

import numpy as np
from numba import njit

from caishen.sim.rules.jiating.layout import (
    MAX_HAND_POINTS,
    MAX_STREAK,
    P_BONUS_DISCARD,
    P_BONUS_DISCARD_DEALER,
    P_BONUS_SELF_DRAW,
    P_BONUS_SELF_DRAW_DEALER,
    P_CAP,
    P_DEALER_CAP,
    P_DEALER_FACTOR,
    P_STREAK_STEP,
    WIN_DISCARD,
    WIN_SELF_DRAW,
)
from caishen.sim.rules.jiating.options import DEFAULT_RULES, JiatingRules
from caishen.sim.rules.options import short_repr
from caishen.sim.validate import check_int


@njit(cache=True)
def _payment(dealer, streak, payer, winner, self_draw, total, params):
    """Amount ``payer`` owes ``winner`` for ``total = P + G`` points (J-6.2, J-6.4)."""
    dealer_in = payer == dealer or winner == dealer
    if dealer_in:
        amount = params[P_DEALER_FACTOR] * total
        cap = params[P_DEALER_CAP]
    else:
        amount = total
        cap = params[P_CAP]
    if cap >= 0 and amount > cap:
        amount = cap
    if self_draw:
        bonus = params[P_BONUS_SELF_DRAW_DEALER] if dealer_in else params[P_BONUS_SELF_DRAW]
    else:
        bonus = params[P_BONUS_DISCARD_DEALER] if dealer_in else params[P_BONUS_DISCARD]
    if dealer_in:
        bonus += params[P_STREAK_STEP] * streak
    return amount + bonus


@njit(cache=True)
def _payments(dealer, streak, winner, win_type, discarder, total, params, out):
    """Add one winner's score changes to ``out: int64[4]`` in place (J-6.5).

    ``win_type``: ``WIN_SELF_DRAW`` (each other seat pays its amount) or
    ``WIN_DISCARD`` / ``WIN_ROBBED_KONG`` (``discarder`` pays); ``total`` is
    ``P + G``.  The changes added sum to zero; with several winners of one
    discard (J-3.4) call once per winner.
    """
    got = 0
    if win_type == WIN_SELF_DRAW:
        for p in range(4):
            if p != winner:
                a = _payment(dealer, streak, p, winner, True, total, params)
                out[p] -= a
                got += a
    else:
        a = _payment(dealer, streak, discarder, winner, False, total, params)
        out[discarder] -= a
        got += a
    out[winner] += got


def _check_seat(name: str, seat: Any) -> int:
    """A seat 0..3 (:func:`caishen.sim.validate.check_int`)."""
    return check_int(name, seat, 0, 3)


def _check_streak(v: Any) -> int:
    """The dealer's streak ``k`` within its bound ``0..MAX_STREAK`` (J-2.4)."""
    return check_int("streak", v, 0, MAX_STREAK)


def _check_points(name: str, v: Any) -> int:
    """``P`` or ``G`` within its bound ``0..MAX_HAND_POINTS``."""
    return check_int(name, v, 0, MAX_HAND_POINTS)


def payment(payer: int, winner: int, P: int, G: int, *, dealer: int, streak: int = 0,
            self_draw: bool, rules: JiatingRules | None = None) -> int:
    """Points ``payer`` owes ``winner`` (J-6.2 with the J-6.4 bonus).

    ``min(dealer_factor * (P + G), dealer_cap) + bonus`` when payer or winner
    is the dealer, else ``min(P + G, cap) + bonus``.  Bonus: discard win 1
    (non-dealers), 2 (dealer on either side); self-draw 2 (non-dealer payer to
    non-dealer winner), 4 (dealer on either side); plus ``streak_step *
    streak`` whenever the dealer pays or wins.  Raises ``ValueError`` for bad
    seats, ``P`` or ``G`` outside ``0..MAX_HAND_POINTS`` or ``streak``
    outside ``0..MAX_STREAK`` (the module's bounds).
    """
    r = rules or DEFAULT_RULES
    payer, winner, dealer = _check_seat("payer", payer), _check_seat("winner", winner), _check_seat("dealer", dealer)
    if payer == winner:
        raise ValueError(f"payer and winner are both seat {payer}")
    total = _check_points("P", P) + _check_points("G", G)
    return int(_payment(dealer, _check_streak(streak), payer, winner, bool(self_draw), total, r.params()))


def settle_self_draw(winner: int, P: int, G: int, *, dealer: int, streak: int = 0,
                     rules: JiatingRules | None = None) -> list[int]:
    """Each seat's score change for a self-draw (J-6.5): the other three pay.

    Returns ``[int] * 4`` summing to zero.  Raises ``ValueError`` for bad input
    (bounds as :func:`payment`).
    """
    r = rules or DEFAULT_RULES
    out = np.zeros(4, np.int64)
    total = _check_points("P", P) + _check_points("G", G)
    _payments(_check_seat("dealer", dealer), _check_streak(streak), _check_seat("winner", winner),
              WIN_SELF_DRAW, -1, total, r.params(), out)
    return [int(x) for x in out]


def settle_discard(discarder: int, winners: Sequence[tuple[int, int, int]], *, dealer: int,
                   streak: int = 0, rules: JiatingRules | None = None) -> list[int]:
    """Score changes for one discard (or robbed kong) won by one or more seats.

    ``winners``: ``[(seat, P, G), ...]``, distinct seats other than the
    discarder; the discarder pays each winner separately (J-3.4, J-6.5).
    Returns ``[int] * 4`` summing to zero.  Raises ``ValueError`` for bad
    seats, duplicates, no winner, or values out of bounds (as :func:`payment`).
    """
    r = rules or DEFAULT_RULES
    discarder, dealer = _check_seat("discarder", discarder), _check_seat("dealer", dealer)
    streak = _check_streak(streak)
    if not winners:
        raise ValueError("settle_discard needs at least one winner")
    seen: set[int] = set()
    params = r.params()
    out = np.zeros(4, np.int64)
    for item in winners:
        if not isinstance(item, (tuple, list)) or len(item) != 3:
            raise ValueError(f"winner {short_repr(item)}: expected (seat, P, G)")
        w = _check_seat("winner", item[0])
        if w == discarder or w in seen:
            raise ValueError(f"winner seat {w} is the discarder or listed twice")
        seen.add(w)
        total = _check_points("P", item[1]) + _check_points("G", item[2])
        _payments(dealer, streak, w, WIN_DISCARD, discarder, total, params, out)
    return [int(x) for x in out]
