"""The legal actions of the seat to act: :func:`_legal_actions` (a list), :func:`_legal_mask` (the mask
made from it) and the random action.

On a turn: the discards (all kinds held, or only the 财神 while a discard is
forced, K-2.4 / K-2.5, :func:`_forced_joker`; never the swap-call kind,
K-4.5), the 架听 declarations (J-4.1), concealed and added kongs (K-5.3,
K-5.2) and the self-draw win; for a 硬子 seat only the win or the drawn
tile (J-4.2); in a claim the options offered to the seat asked, merged
over its consecutive asks, and ``pass``; in the 硬子 stage declare or
decline.  The checker (:mod:`caishen.sim.engine.check`) restates these
rules independently and compares.

Decisions (engine side; each cites its rule)
--------------------------------------------
- E2 (K-4.1, K-5.2): K-4.1 "after a chow or pong the player discards at once:
  no draw, no kong, no win" (the spec's words since round 4): no
  kong (and no win) in that turn; an added kong waits for a later turn
  (``ep.kong_after_claim`` = 0).  After an exposed kong the replacement draw
  starts a normal turn.
- E3 (K-2.4, K-2.5): a forced 飘 restricts the *discards* to 财神; concealed
  and added kongs stay legal (they discard nothing).  K-2.4's force is a
  count (3 or 4 财神 in hand; the win kernel refuses such hands).  K-2.5's
  is a per-seat state, ``seat.force_joker``: set when a seat whose 13 tiles
  are in 爆头 or 七子爆头 shape (D3 of K-2.5) draws a 财神 (any draw, a
  replacement included), cleared only by that seat's 财神 discard or the
  hand's end.  While it is set the seat cannot win by self-draw -- the
  replacement draws of kongs declared meanwhile included, however many in a
  row (seed: 不飘不能胡牌).  A forced seat leaves its turn only by
  discarding a 财神, so it is never offered a claim while forced (the
  checker verifies that the force sits only with the seat whose turn it is).
- E4 (K-3.4): every kong, exposed ones included, needs more than
  ``reserved_tiles`` tiles left, so replacement draws never touch the reserve.
- E7 (K-4.5): on a banned swap call only the other end of the two held
  tiles is banned (claiming 6s with 4s5s bans 3s; a middle chow bans
  nothing); if the ban left no legal discard it would yield.
- J3 (J-3.2): after a pong the seat must discard (no kong and no win in that
  turn: J-3.2's words since round 4), as engine E2; a kong needs a tile left in the wall (J-1.2, above
  ``reserved_tiles``).
- J4 (J-4.1): ``declare <k>`` = discard ``k`` and declare 架听, legal iff
  after that discard the hand waits on exactly one kind (D3 of J-5, the scorer's
  own "single wait"), for a seat without a declaration; a declaration stays
  and is made once.  A declared seat plays on (pong, kong, pass a win).
"""

from __future__ import annotations

import numpy as np
from numba import njit

from caishen.sim.engine.claims import _claim_bit, _group_end, _offered
from caishen.sim.engine.deal import _inline_kernel, _tiles_left
from caishen.sim.engine.layout import (
    A_CHOW_LOW,
    A_DECLARE,
    A_DISCARD,
    A_HARD_DECLARE,
    A_HARD_DECLINE,
    A_KONG_ADDED,
    A_KONG_CONCEALED,
    A_PASS,
    A_WIN,
    DECL_HARD,
    MAX_MELDS,
    N_ACTIONS,
    N_KINDS,
    PH_DONE,
    PH_HARD,
    PH_TURN,
)
from caishen.sim.rng import _rng_below
from caishen.sim.tiles import MELD_PONG


@_inline_kernel
def _forced_joker(st, ep, s):
    """True if seat ``s`` must discard a joker this turn (K-2.4; K-2.5, E3: ``seat.force_joker``)."""
    joker = ep.joker
    if joker < 0 or st.hands[s, joker] == 0:
        return False
    if ep.force_joker_min > 0 and st.hands[s, joker] >= ep.force_joker_min:
        return True
    return st.seat[s].force_joker != 0


@njit(cache=True)
def _legal_actions(st, ep):
    """The legal actions of the seat to act as a list: ``st.legal[:n]`` (``int16``), ``n`` also in
    ``st.table.n_legal``; returns ``n``.

    On a turn the discards, 架听 declarations, concealed kongs, added kongs and win; in a claim the
    claim actions in index order and ``pass``; in the 硬子 stage ``hard_declare, hard_decline``; 0 when
    the hand is over.  This is the one statement of what is legal: :func:`_legal_mask` makes the mask
    from it, and the random bot reads only the list (issue 48: writing and clearing the mask was about a
    tenth of random self-play).
    """
    lst = st.legal
    n = 0
    ph = st.table.phase
    if ph == PH_DONE:
        st.table.n_legal = 0
        return 0
    s = st.table.to_act
    if ph == PH_TURN and st.seat[s].decl == DECL_HARD:
        # J-4.2: a hard seat is asked only when it can win: win or discard the drawn tile
        t = st.table.drawn
        if t >= 0:
            lst[n] = A_DISCARD + t
            n += 1
        else:  # unreachable (a hard seat never claims): any discard
            for k in range(N_KINDS):
                if st.hands[s, k] > 0:
                    lst[n] = A_DISCARD + k
                    n += 1
        if st.table.can_self_draw != 0:
            lst[n] = A_WIN
            n += 1
    elif ph == PH_HARD:
        lst[n] = A_HARD_DECLARE
        lst[n + 1] = A_HARD_DECLINE
        n += 2
    elif ph == PH_TURN:
        h = st.hands[s]
        joker = ep.joker
        forbid = st.seat[s].swap_forbid  # K-4.5
        # bit k of ``held``: discarding k is legal; of ``fours``: four of k are held.  Branch-free (which
        # kinds a hand holds is random: a branch per kind is mispredicted often)
        held = 0
        fours = 0
        for k in range(N_KINDS):
            c = h[k]
            held |= np.int64((c > 0) & (k != forbid)) << k
            fours |= np.int64(c == 4) << k
        if _forced_joker(st, ep, s):  # K-2.4, K-2.5: only the joker
            held &= np.int64(1) << joker
        if held == 0:  # the swap-call ban covers every held tile: it yields
            for k in range(N_KINDS):
                held |= np.int64(h[k] > 0) << k
        # a second pass without loads: storing the entry at a position computed from the previous load
        # made every next load wait for that store
        for k in range(N_KINDS):
            lst[n] = A_DISCARD + k
            n += (held >> k) & 1
        decl = st.table.declare_kinds & held  # J-4.1 (0 unless the rule set has 架听)
        if decl != 0:
            for k in range(N_KINDS):
                if (decl >> k) & 1:
                    lst[n] = A_DECLARE + k
                    n += 1
        if (st.table.just_claimed == 0 or ep.kong_after_claim != 0) and _tiles_left(st) > ep.reserve:
            nm = st.seat[s].n_melds
            if nm < MAX_MELDS and fours != 0:
                for k in range(N_KINDS):
                    if (fours >> k) & 1 and k != joker:  # K-5.3; K-2.3 never a joker kong
                        lst[n] = A_KONG_CONCEALED + k
                        n += 1
            for i in range(nm):  # K-5.2
                if st.meld_type[s, i] == MELD_PONG and h[st.meld_kind[s, i]] > 0:
                    lst[n] = A_KONG_ADDED + st.meld_kind[s, i]
                    n += 1
        if st.table.can_self_draw != 0:
            lst[n] = A_WIN
            n += 1
    else:
        q = st.table.q_pos
        bits = _offered(st, q, _group_end(st, q))
        for a in range(A_CHOW_LOW, A_PASS):
            if bits & _claim_bit(a):
                lst[n] = a
                n += 1
        lst[n] = A_PASS
        n += 1
    st.table.n_legal = n
    return n


@njit(cache=True)
def _legal_mask(st, ep):
    """Fill ``st.mask: uint8[N_ACTIONS]`` (1 = legal) and the list ``st.legal`` for the seat to act.

    Returns the number of legal actions ``n`` (also ``st.table.n_legal``); ``st.legal[:n]`` holds them
    (:func:`_legal_actions`, whose list the mask is made from).  All 0 when the hand is over.
    """
    n = _legal_actions(st, ep)
    m = st.mask
    for i in range(N_ACTIONS):
        m[i] = 0
    lst = st.legal
    for i in range(n):
        m[lst[i]] = 1
    return n


@njit(cache=True)
def _random_action(st):
    """A uniformly random legal action of the seat to act (stream ``st.rng``); needs :func:`_legal_actions` (or
    :func:`_legal_mask`) first."""
    return st.legal[_rng_below(st.rng, st.table.n_legal)]
