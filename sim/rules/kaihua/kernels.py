"""Kaihua's numba kernels: the win test with its hand types (K-2.4 .. K-2.6, K-6, K-7.1) and the payments (K-8, K-9.3).

The engine calls :func:`_evaluate_win` on every draw and discard of a ready
seat and :func:`_payments` on every win (through
:mod:`caishen.sim.rules.kernels`), and :func:`_is_baotou_wait` for the
K-2.5 forced 飘; :func:`caishen.sim.rules.kaihua.scoring.score` runs the
very same kernels on one scoring vector.  Decisions D1 .. D11 are stated in
the package docstring (:mod:`caishen.sim.rules.kaihua`).
"""

from __future__ import annotations

import numpy as np
from numba import njit

from caishen.sim.hand import _is_baotou, _is_seven_pairs, _is_win_standard
from caishen.sim.rules.kaihua.options import (
    BAOTOU_DISCARD_OTHER_READINGS,
    FLAG_BAOTOU,
    FLAG_CHAIN,
    FLAG_HAOHUA,
    FLAG_JOKER_LINK,
    FLAG_PINGHU,
    FLAG_QIDUI,
    FLAG_QIDUI_BAOTOU,
    FLAG_QIDUI_PURE,
    FLAG_QINGYISE,
    FLAG_QUBUQU,
    PAYMENT_OWN_SHARE,
    P_BAOTOU_DISCARD_WIN,
    P_DISCARD_WIN,
    P_DISCARD_WIN_MAX_CAISHEN,
    P_DISCARD_WIN_PAYMENT,
    P_FAILED_PIAO_FACTOR,
    P_FAILED_PIAO_POINTS,
    P_MAX_EXPONENT,
    P_PIAO_REQUIRES_BAOTOU,
    P_TWO_CAISHEN_MIN_EXPONENT,
    WIN_SELF_DRAW,
)
from caishen.sim.tiles import CAISHEN


@njit(cache=True)
def _payments(dealer, winner, win_type, discarder, exponent, piao_circle, params, out):
    """Add one winner's score changes to ``out: int64[4]`` in place (K-8, K-9.3).

    ``win_type`` is ``WIN_SELF_DRAW`` / ``WIN_DISCARD`` / ``WIN_ROBBED_KONG``;
    ``discarder`` the seat that discarded (or whose added kong was robbed),
    ignored on a self-draw; ``exponent`` the win's ``E``; ``piao_circle:
    bool[4]`` the seats whose 飘财 circle is open (the winner's own is
    ignored).  Each loser ``p``'s share is ``base * 2**E`` with ``base`` 4 when
    ``p`` or the winner is the dealer, else 2 (K-8.1).  Self-draw: each of the
    other three pays their share (K-8.2); discard win and robbed kong: the
    discarder pays all three shares, or only their own under
    ``discard_win_payment="own_share"`` (K-8.3).  A seat in an open 飘 circle
    also pays ``failed_piao_factor - 1`` times its own share (K-9.3), or, with
    the study variant ``failed_piao_points`` set, that many points instead.  The
    changes added sum to zero (K-8.5); with several winners call once each.
    """
    mult = np.int64(1) << np.int64(exponent)
    own_share_only = params[P_DISCARD_WIN_PAYMENT] == PAYMENT_OWN_SHARE
    extra_factor = params[P_FAILED_PIAO_FACTOR] - 1
    fixed = params[P_FAILED_PIAO_POINTS]  # -1: the shares
    total = np.int64(0)
    for p in range(4):
        if p == winner:
            continue
        base = 4 if (p == dealer or winner == dealer) else 2
        share = base * mult
        if win_type == WIN_SELF_DRAW:
            out[p] -= share
            total += share
        elif p == discarder or not own_share_only:
            out[discarder] -= share
            total += share
        if piao_circle[p]:  # K-9.3 failed 飘
            extra = fixed if fixed >= 0 else extra_factor * share
            out[p] -= extra
            total += extra
    out[winner] += total


@njit(cache=True)
def _is_qingyise(counts, meld_kinds, n_melds):
    """清一色 (K-6.4, D5): every non-财神 tile of ``counts`` and every meld is of one suit."""
    suit = -1
    for k in range(34):
        if k == CAISHEN or counts[k] == 0:
            continue
        if k >= 27:
            return False
        if suit < 0:
            suit = k // 9
        elif k // 9 != suit:
            return False
    for i in range(n_melds):
        k = meld_kinds[i]
        if k >= 27:
            return False
        if suit < 0:
            suit = k // 9
        elif k // 9 != suit:
            return False
    return suit >= 0


@njit(cache=True)
def _is_qidui_baotou(counts13):
    """七子爆头 shape (K-6.3, D2): 13 concealed tiles = 6 pairs (jokers wild) + a lone 财神.

    Tested as "the 13 tiles plus one tile of an absent kind are seven pairs":
    the added single can only pair with a 财神, the other 12 tiles must be six
    pairs.  ``counts13`` (no melds) is modified temporarily and restored.
    """
    if counts13[CAISHEN] < 1:
        return False
    x = 0
    while counts13[x] != 0 or x == CAISHEN:
        x += 1
    counts13[x] += 1
    r = _is_seven_pairs(counts13, np.int64(CAISHEN))  # np.int64, not a literal 31: the copy `caishen hand` uses
    counts13[x] -= 1
    return r


@njit(cache=True)
def _is_baotou_wait(counts13, n_melds, tabs):
    """爆头 (K-6.2) or 七子爆头 (K-6.3, D2) shape of the concealed tiles before a draw.

    Such a hand cannot win on a drawn 财神 and must discard one (K-2.5, D3),
    and cannot win on a discard (K-7.1, D6; unless ``baotou_discard_win``
    is ``"other_readings"``).  ``counts13`` is modified temporarily and
    restored.  The engine uses this to set a seat's forced 飘 of K-2.5,
    which lasts until that seat discards a 财神.
    """
    if _is_baotou(counts13, np.int64(CAISHEN), tabs):
        return True
    return n_melds == 0 and _is_qidui_baotou(counts13)


@njit(cache=True)
def _evaluate_win(concealed, win_tile, meld_types, meld_kinds, n_melds, self_draw, replacement_draw,
                  chain_piao, chain_kong, params, tabs):
    """Is this a legal Kaihua win, and with which exponent and hand-type flags?

    ``concealed``: int array[34], the winner's concealed tiles *before* the
    winning tile (``13 - 3 * n_melds`` tiles, 财神 at index 31); modified
    temporarily (the winning tile is added) and restored before returning.
    ``win_tile``: kind index; ``meld_types, meld_kinds``: int8[4] (codes of
    :mod:`caishen.sim.tiles`, a chow's kind is its lowest tile), the first
    ``n_melds`` used; ``self_draw``: True for a self-draw (a kong replacement
    draw included), False for a discard or a robbed kong;
    ``replacement_draw`` adds nothing by itself (D9: the kong is the last
    chain link); ``chain_piao, chain_kong``: the winner's 飘财 and kong chain
    links (K-6.5); ``params``: ``KaihuaRules.params()``; ``tabs``:
    ``caishen.sim.tables.hand_tables()``.

    Returns ``(legal: bool, exponent: int64, flags: int64, piao_links:
    int64, kong_links: int64)``: ``FLAG_*`` bits of the counted reading, and
    the 飘 and kong chain links that reading counted in its (uncapped)
    exponent (K-6.5, D8, D9: 0 on a discard win, 飘 links 0 under
    ``piao_requires_baotou`` when the reading is not 爆头); all 0 when not
    legal.  Applies K-2.2, K-2.4, K-2.5 (also for 七子爆头, D3), K-2.6
    (D10), K-6.1 .. K-6.6, K-7.1/K-7.2 (D6, D7, ``baotou_discard_win``) and
    ``max_exponent``; among the legal readings (standard / seven pairs) the
    largest exponent counts (D11).  The persistent K-2.5 force of a seat
    that drew a 财神 and has not discarded one yet (its later replacement
    draws) is the engine's state, not a fact of these tiles: the engine does
    not ask this kernel while it holds (``caishen.sim.engine``, E3).
    """
    zero = np.int64(0)
    j13 = np.int64(concealed[CAISHEN])
    jokers = j13 + (1 if win_tile == CAISHEN else 0)
    if jokers >= 3:  # K-2.4: three or four 财神 never win (forced 飘财)
        return False, zero, zero, zero, zero
    if not self_draw:
        # K-2.2: a discarded 财神 is never claimed; K-7.1/K-7.2: the discard_win
        # switch, and at most discard_win_max_caishen (1) 财神 in hand
        if win_tile == CAISHEN or params[P_DISCARD_WIN] == 0 or jokers > params[P_DISCARD_WIN_MAX_CAISHEN]:
            return False, zero, zero, zero, zero
    # a complete hand first: most tests (every draw and discard of a ready seat) stop here
    concealed[win_tile] += 1
    standard = _is_win_standard(concealed, np.int64(CAISHEN), tabs)
    seven_pairs = n_melds == 0 and _is_seven_pairs(concealed, np.int64(CAISHEN))
    concealed[win_tile] -= 1
    if not (standard or seven_pairs):
        return False, zero, zero, zero, zero
    # shapes of the 13 tiles before the win
    baotou = _is_baotou(concealed, np.int64(CAISHEN), tabs)  # K-6.2
    qidui_baotou = n_melds == 0 and _is_qidui_baotou(concealed)  # K-6.3, D2
    if baotou or qidui_baotou:
        if win_tile == CAISHEN:  # K-2.5 (D3): must discard a 财神 instead
            return False, zero, zero, zero, zero
        if not self_draw:
            # K-7.1 (D6): 爆头 / 七子爆头 are self-draw only; under
            # "other_readings" the discard win counts without their bonus
            if params[P_BAOTOU_DISCARD_WIN] != BAOTOU_DISCARD_OTHER_READINGS:
                return False, zero, zero, zero, zero
            baotou = False
            qidui_baotou = False
    has_four = False
    for k in range(34):
        if k != CAISHEN and concealed[k] == 4:
            has_four = True
    qubuqu = n_melds == 0 and j13 == 0 and has_four  # K-6.3 (D4), if seven pairs below

    concealed[win_tile] += 1
    qingyise = _is_qingyise(concealed, meld_kinds, n_melds)
    haohua = 0  # K-6.3 (D1): natural fours among the 14
    for k in range(34):
        if k != CAISHEN and concealed[k] == 4:
            haohua += 1
    concealed[win_tile] -= 1

    # K-6.5 (D9): chain links count on a self-draw only
    kong_links = np.int64(chain_kong) if self_draw else zero
    piao_links = np.int64(chain_piao) if self_draw else zero
    min_two = params[P_TWO_CAISHEN_MIN_EXPONENT]
    piao_needs_baotou = params[P_PIAO_REQUIRES_BAOTOU] != 0
    qys = np.int64(1) if qingyise else zero

    best = np.int64(-1)
    best_flags = zero
    best_piao = zero
    best_kong = zero
    if standard:  # K-6.1 平胡, K-6.2 爆头
        hand = np.int64(1) if baotou else zero
        if not (jokers == 2 and hand + kong_links < min_two):  # K-2.6
            piao = piao_links if (baotou or not piao_needs_baotou) else zero
            e = hand + qys + kong_links + piao
            flags = zero
            if baotou:
                flags |= FLAG_BAOTOU
            if qingyise:
                flags |= FLAG_QINGYISE
            if kong_links + piao > 0:
                flags |= FLAG_CHAIN
            if piao > 0:
                flags |= FLAG_JOKER_LINK
            if flags == 0:
                flags = np.int64(FLAG_PINGHU)
            best = e
            best_flags = flags
            best_piao = piao
            best_kong = kong_links
    if seven_pairs:  # K-6.3 七对子 family
        hand = np.int64(1 + haohua)
        flags = np.int64(FLAG_QIDUI)
        if jokers == 0:  # 清七对
            hand += 1
            flags |= FLAG_QIDUI_PURE
        if haohua > 0:
            flags |= FLAG_HAOHUA
        if qidui_baotou:  # 七子爆头 (self-draw, non-财神 draw: checked above)
            hand += 1
            flags |= FLAG_QIDUI_BAOTOU
        if qubuqu:  # 去不去: a floor, not a bonus (D4)
            flags |= FLAG_QUBUQU
            if hand < 3:
                hand = np.int64(3)
        if not (jokers == 2 and hand + kong_links < min_two):  # K-2.6
            piao = piao_links if (qidui_baotou or not piao_needs_baotou) else zero
            e = hand + qys + kong_links + piao
            if qingyise:
                flags |= FLAG_QINGYISE
            if kong_links + piao > 0:
                flags |= FLAG_CHAIN
            if piao > 0:
                flags |= FLAG_JOKER_LINK
            if e > best:  # D11: a tie keeps the standard reading
                best = e
                best_flags = flags
                best_piao = piao
                best_kong = kong_links
    if best < 0:
        return False, zero, zero, zero, zero
    cap = params[P_MAX_EXPONENT]  # K-6.6
    if cap >= 0 and best > cap:
        best = cap
    return True, best, best_flags, best_piao, best_kong
