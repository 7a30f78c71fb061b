"""Claims: what a discard or an added kong offers, the ask queue, and the claim step.

After a discard (:func:`caishen.sim.engine.turn._discard`) or an added kong
(robbing, K-5.5), :func:`_build_claims` computes each other seat's options
(win through the rule set's win test, pong, exposed kong, chow) and the ask
queue in priority order (K-4.3); :func:`_open_claims` asks the first
claimant or moves on; :func:`_claim_step` applies the answer of the seat
asked (pass, chow, pong, exposed kong, win) and asks the next one.  A win
ends the hand in :func:`_finish_wins`: the rule set's payments (K-8) when
the engine pays, the failed 飘 circles (K-9.3), the tile into the winner's
hand, and :func:`_record_win`, the context of each win that a rule set
scored after the hand reads (J-9, ``WX_*``).

Decisions (engine side; each cites its rule)
--------------------------------------------
- E5 (K-4.3): a seat's consecutive asks are merged into one decision (e.g.
  the last win claimant that can also pong gets win / pong / pass).  Under
  ``multiple_ron`` the discard goes into the first winner's hand (the record
  shows the first winner, ``winners_mask`` all of them) and every winner is
  paid separately by the discarder (and by open 飘 circles, K-9.3).
- E6 (K-4.4): a seat offered a pong that takes anything else (pass, chow;
  not its exposed kong, which takes the tile) passes that kind; the ban ends
  at the seat's next turn: its next draw or a later claim.  Answering the
  same discard with a chow is not a next turn: a later claim lifts the bans
  of earlier discards before the bookkeeping of the discard it answers, so
  the chow keeps the ban it has just set.
- E9 (K-9.2, K-9.3): a 飘 circle closes at that player's next draw
  (normal or replacement); a win inside somebody else's open circle marks it
  failed (``failed_piao_s``); the winner's own open circle does not count.
- J5 (J-3.5): a passed win on a discard or on a robbable added kong bans
  wins on discards and robberies until the seat's next draw (normal or
  replacement); a pong does not end it; self-draws stay free; a hard seat
  discarding a drawn winning tile passes no discard win.
- J6 (J-3.6): a pong offered and not taken (passed; an exposed kong takes
  the tile) bans ponging that kind (option ``any``: every kind) until the
  seat's next draw; a pong does not end it.
- J7 (J-3.4): several win claimants are asked in turn order from the
  discarder; once one has won only the other win claimants are asked.  The
  tile goes into the first winner's hand; every winner is recorded.
- J9 (J-5.4, P46, P47): 天胡 = the dealer's self-draw on its first turn
  with no kong before; ``dihu="win_on_dealers_first_discard"`` uses the
  flag "won on the dealer's first discard" (a discard win, not a robbery);
  ``dihu="dealer_ready_undeclared"`` the flag "the dealer was ready right
  after its first discard" (it was offered 硬子 then, J2).
- J10 (P27): the winner sees the winning kind in unclaimed discards (not
  the winning discard) and in the other seats' exposed melds (a pong 3, an
  exposed / added kong 4, a robbed added kong 3); concealed kongs are hidden.
- J11 (J-6): the engine pays nothing under J-6 (``EP_ENGINE_PAYMENTS`` is ``PAYMENTS_NONE``):
  the scores exist only in the record (:func:`batch_columns`,
  :attr:`Game.result`), where the rule set's points kernel computes them (``EP_POINTS``).
"""

from __future__ import annotations

import numpy as np
from numba import njit

from caishen.sim.engine.deal import (
    _add_meld,
    _begin_claimed_turn,
    _chain_kong,
    _chain_reset,
    _draw,
    _draw_next,
    _inline_kernel,
    _tiles_left,
    _update_tenpai,
    _win_eval,
)
from caishen.sim.engine.layout import (
    A_CHOW_HIGH,
    A_CHOW_LOW,
    A_CHOW_MID,
    A_KONG_EXPOSED,
    A_PASS,
    A_PONG,
    A_WIN,
    DECL_HARD,
    DF_CLAIMED,
    EP_CHOW,
    EP_DISCARD_WIN,
    EP_ENGINE_PAYMENTS,
    EP_JOKER,
    EP_MULTI_RON,
    EP_PASSED_PONG,
    EP_PASSED_PONG_CLAIM_CLEARS,
    EP_PASSED_WIN,
    EP_PIAO_BAN,
    EP_RESERVE,
    EP_ROB_KONG,
    EP_SWAP_MAX_CHOWS,
    LV_MELD,
    LV_WIN,
    MAX_MELDS,
    MAX_WINNERS,
    N_KINDS,
    N_SEATS,
    OPT_CHOW_HIGH,
    OPT_CHOW_LOW,
    OPT_CHOW_MID,
    OPT_KONG,
    OPT_PONG,
    OPT_WIN,
    PH_CLAIM,
    PH_DONE,
    PH_ROB,
    SC_DEALER,
    SC_DISCARDER,
    SC_EXPONENT,
    SC_FLAGS,
    SC_N_RON,
    SC_N_WINS,
    SC_PHASE,
    SC_Q_LEN,
    SC_Q_POS,
    SC_REPLACEMENT,
    SC_ROB_MELD,
    SC_SRC,
    SC_TILE,
    SC_TO_ACT,
    SC_WINNER,
    SC_WINNERS_MASK,
    SC_WIN_TILE,
    SC_WIN_TYPE,
    SF_CLAIM_EXP,
    SF_CLAIM_FLAGS,
    SF_CLAIM_KONG,
    SF_CLAIM_OPTS,
    SF_CLAIM_PIAO,
    SF_DECL,
    SF_EXPONENT,
    SF_FAILED_PIAO,
    SF_FLAGS,
    SF_FORCE_PIAO,
    SF_HARD_OFFER,
    SF_N_CHOWS,
    SF_N_DISCARDS,
    SF_N_MELDS,
    SF_N_PASSED_WIN,
    SF_PASSED_PONG,
    SF_PASSED_WIN,
    SF_PIAO_OPEN,
    SF_SCORE,
    SF_SWAP_FORBID,
    SF_TENPAI,
    SF_WIN_KONG,
    SF_WIN_PIAO,
    SF_WON,
    WX_DEALER_READY,
    WX_DECL,
    WX_DISCARDER,
    WX_FIRST_TURN,
    WX_HAND,
    WX_MELD_KIND,
    WX_MELD_TYPE,
    WX_N_MELDS,
    WX_ON_FIRST,
    WX_REPLACEMENT,
    WX_SEAT,
    WX_TILE,
    WX_TYPE,
    WX_VISIBLE,
)
from caishen.sim.rules.kernels import WIN_DISCARD, WIN_ROBBED_KONG, WIN_SELF_DRAW, _pay
from caishen.sim.tiles import MELD_CHOW, MELD_KONG_CONCEALED, MELD_KONG_EXPOSED, MELD_PONG


@njit(cache=True, inline="always")
def _level_bits(level):
    if level == LV_WIN:
        return OPT_WIN
    if level == LV_MELD:
        return OPT_PONG | OPT_KONG
    return OPT_CHOW_LOW | OPT_CHOW_MID | OPT_CHOW_HIGH


@_inline_kernel
def _build_claims(st, ep, rp, tabs, src, k, rob):
    """Claim options of the three other seats on tile ``k`` from ``src`` and the ask queue.

    ``rob``: the tile is an added kong's (only wins, K-5.5).  Sets
    ``seat[:, SF_CLAIM_OPTS]``, ``queue``, ``sc[SC_Q_LEN]``.
    """
    joker = ep[EP_JOKER]
    any_circle = False
    if ep[EP_PIAO_BAN] != 0:
        for p in range(N_SEATS):
            if st.seat[p, SF_PIAO_OPEN] != 0:
                any_circle = True
    left = _tiles_left(st)
    for i in range(1, N_SEATS):
        s = (src + i) % N_SEATS
        opts = 0
        if k != joker:  # K-2.2 a discarded joker can never be claimed
            if (
                ep[EP_DISCARD_WIN] != 0
                and st.seat[s, SF_TENPAI] != 0
                and (not rob or ep[EP_ROB_KONG] != 0)
                and not (ep[EP_PASSED_WIN] != 0 and st.seat[s, SF_PASSED_WIN] != 0)
            ):
                legal, e, f, lp, lk = _win_eval(st, ep, rp, tabs, s, k, np.bool_(False), np.bool_(False))
                if legal:
                    opts |= OPT_WIN
                    st.seat[s, SF_CLAIM_EXP] = e
                    st.seat[s, SF_CLAIM_FLAGS] = f
                    st.seat[s, SF_CLAIM_PIAO] = lp
                    st.seat[s, SF_CLAIM_KONG] = lk
            # K-9.2: no chow / pong / exposed kong inside a 飘财 circle
            # J-4.2: no pong / kong after a hard declaration
            if not rob and not any_circle and st.seat[s, SF_N_MELDS] < MAX_MELDS and st.seat[s, SF_DECL] != DECL_HARD:
                h = st.hands[s]
                if h[k] >= 2 and ep[EP_PASSED_PONG] != 0 and (st.seat[s, SF_PASSED_PONG] >> k) & 1:
                    pass  # K-4.4 passed pong
                elif h[k] >= 2:
                    opts |= OPT_PONG
                if h[k] >= 3 and left > ep[EP_RESERVE]:  # K-3.4 kongs only above the reserve
                    opts |= OPT_KONG
                if ep[EP_CHOW] != 0 and i == 1 and k < 27:  # K-4.2 chow only by the next seat
                    r = k % 9
                    if r <= 6 and h[k + 1] > 0 and h[k + 2] > 0 and k + 1 != joker and k + 2 != joker:
                        opts |= OPT_CHOW_LOW
                    if 1 <= r <= 7 and h[k - 1] > 0 and h[k + 1] > 0 and k - 1 != joker and k + 1 != joker:
                        opts |= OPT_CHOW_MID
                    if r >= 2 and h[k - 2] > 0 and h[k - 1] > 0 and k - 2 != joker and k - 1 != joker:
                        opts |= OPT_CHOW_HIGH
        st.seat[s, SF_CLAIM_OPTS] = opts
    n = 0
    for level in range(3):  # K-4.3 win > pong / kong > chow, then turn order
        bits = _level_bits(level)
        for i in range(1, N_SEATS):
            s = (src + i) % N_SEATS
            if st.seat[s, SF_CLAIM_OPTS] & bits:
                st.queue[n, 0] = s
                st.queue[n, 1] = level
                n += 1
    st.sc[SC_Q_LEN] = n
    st.sc[SC_Q_POS] = 0
    st.sc[SC_N_RON] = 0
    st.sc[SC_TILE] = k
    st.sc[SC_SRC] = src


@_inline_kernel
def _group_end(st, q):
    """End of the run of queue entries from ``q`` that belong to the same seat."""
    s = st.queue[q, 0]
    e = q + 1
    while e < st.sc[SC_Q_LEN] and st.queue[e, 0] == s:
        e += 1
    return e


@njit(cache=True, inline="always")
def _claim_bit(a):
    """The OPT_* bit of claim action ``a`` (136..141)."""
    if a == A_CHOW_LOW:
        return OPT_CHOW_LOW
    if a == A_CHOW_MID:
        return OPT_CHOW_MID
    if a == A_CHOW_HIGH:
        return OPT_CHOW_HIGH
    if a == A_PONG:
        return OPT_PONG
    if a == A_KONG_EXPOSED:
        return OPT_KONG
    return OPT_WIN


@_inline_kernel
def _offered(st, q, e):
    """OPT_* bits offered to the seat asked at queue entries ``q .. e-1``."""
    s = st.queue[q, 0]
    bits = 0
    for j in range(q, e):
        bits |= st.seat[s, SF_CLAIM_OPTS] & _level_bits(st.queue[j, 1])
    if st.sc[SC_N_RON] > 0:  # multiple_ron: once somebody won, only wins are asked
        bits &= OPT_WIN
    return bits


@_inline_kernel
def _open_claims(st, ep, rp, tabs, rob):
    """After ``_build_claims``: ask the first claimant, or move on if nobody can claim."""
    if st.sc[SC_Q_LEN] == 0:
        _no_claim(st, ep, rp, tabs, rob)
    else:
        st.sc[SC_PHASE] = PH_ROB if rob else PH_CLAIM
        st.sc[SC_TO_ACT] = st.queue[0, 0]


@_inline_kernel
def _no_claim(st, ep, rp, tabs, rob):
    src = st.sc[SC_SRC]
    if rob:  # the added kong stands: link + replacement draw (K-5.4, K-6.5)
        _chain_kong(st, src)
        _draw(st, ep, rp, tabs, src, np.bool_(True))
    else:
        _draw_next(st, ep, rp, tabs, (src + 1) % N_SEATS)


@_inline_kernel
def _claim_step(st, ep, rp, tabs, a):
    s = st.sc[SC_TO_ACT]
    q = st.sc[SC_Q_POS]
    e = _group_end(st, q)
    offered = _offered(st, q, e)
    rob = st.sc[SC_PHASE] == PH_ROB
    k = st.sc[SC_TILE]
    src = st.sc[SC_SRC]
    if a == A_WIN:
        st.seat[s, SF_WON] = 1
        st.seat[s, SF_EXPONENT] = st.seat[s, SF_CLAIM_EXP]
        st.seat[s, SF_FLAGS] = st.seat[s, SF_CLAIM_FLAGS]
        st.seat[s, SF_WIN_PIAO] = st.seat[s, SF_CLAIM_PIAO]
        st.seat[s, SF_WIN_KONG] = st.seat[s, SF_CLAIM_KONG]
        st.sc[SC_N_RON] += 1
        st.sc[SC_Q_POS] = e
        if ep[EP_MULTI_RON] != 0 and e < st.sc[SC_Q_LEN] and st.queue[e, 1] == LV_WIN:
            st.sc[SC_TO_ACT] = st.queue[e, 0]  # K-4.3 option: ask the other win claimants
            return
        _finish_wins(st, ep, rp, WIN_ROBBED_KONG if rob else WIN_DISCARD, src, k)
        return
    # K-4.4 (E6): a melding claim is the seat's next turn for the bans of earlier
    # discards, so it lifts them first; the ban that answering this very discard
    # sets (a chow of a tile it could pong) is set after and holds
    if a != A_PASS and ep[EP_PASSED_PONG_CLAIM_CLEARS] != 0:
        st.seat[s, SF_PASSED_PONG] = 0
    # the seat gives up what it does not take (its exposed kong takes the tile: no pass)
    if offered & OPT_PONG and a != A_PONG and a != A_KONG_EXPOSED and ep[EP_PASSED_PONG] != 0:
        if ep[EP_PASSED_PONG] == 2:
            st.seat[s, SF_PASSED_PONG] = (1 << N_KINDS) - 1
        else:
            st.seat[s, SF_PASSED_PONG] |= 1 << k  # K-4.4
    if offered & OPT_WIN:
        st.seat[s, SF_N_PASSED_WIN] += 1
        if ep[EP_PASSED_WIN] != 0:
            st.seat[s, SF_PASSED_WIN] = 1  # J-3.5 until the seat's next draw
    if a == A_PASS:
        st.sc[SC_Q_POS] = e
        if e < st.sc[SC_Q_LEN] and (st.sc[SC_N_RON] == 0 or st.queue[e, 1] == LV_WIN):
            st.sc[SC_TO_ACT] = st.queue[e, 0]
        elif st.sc[SC_N_RON] > 0:
            _finish_wins(st, ep, rp, WIN_ROBBED_KONG if rob else WIN_DISCARD, src, k)
        else:
            _no_claim(st, ep, rp, tabs, rob)
        return
    # a melding claim (everybody with a higher priority has passed)
    nd = st.seat[src, SF_N_DISCARDS] - 1
    st.dflags[src, nd] |= DF_CLAIMED
    st.seat[s, SF_SWAP_FORBID] = -1
    if a == A_PONG:
        st.hands[s, k] -= 2
        _add_meld(st, s, MELD_PONG, k)
        _chain_reset(st, s)  # K-6.5 a pong ends the chain
        _begin_claimed_turn(st, s)
    elif a == A_KONG_EXPOSED:
        st.hands[s, k] -= 3
        _add_meld(st, s, MELD_KONG_EXPOSED, k)
        _chain_kong(st, s)
        _update_tenpai(st, ep, tabs, s)
        _draw(st, ep, rp, tabs, s, np.bool_(True))
    else:  # chow (K-4.2)
        low = k - (a - A_CHOW_LOW)
        for t in range(low, low + 3):
            if t != k:
                st.hands[s, t] -= 1
        _add_meld(st, s, MELD_CHOW, low)
        st.seat[s, SF_N_CHOWS] += 1
        _chain_reset(st, s)
        # K-4.5 swap call: the other end of the two held tiles is banned on
        # the chows after the first swap_call_max_chows
        if st.seat[s, SF_N_CHOWS] > ep[EP_SWAP_MAX_CHOWS]:
            r = k % 9
            if a == A_CHOW_LOW and r + 3 <= 8:
                st.seat[s, SF_SWAP_FORBID] = k + 3
            elif a == A_CHOW_HIGH and r - 3 >= 0:
                st.seat[s, SF_SWAP_FORBID] = k - 3
        _begin_claimed_turn(st, s)


@njit(cache=True)
def _record_win(st, j, w, win_type, discarder, tile):
    """Write row ``j`` of ``st.wins`` (``WX_*``): the context of seat ``w``'s win, before the hand changes.

    A rule set scored after the hand reads it (its record finisher, J-9).
    """
    x = st.wins[j]
    dealer = st.sc[SC_DEALER]
    self_draw = win_type == WIN_SELF_DRAW
    x[WX_SEAT] = w
    x[WX_TILE] = tile
    x[WX_TYPE] = win_type
    x[WX_DISCARDER] = -1 if self_draw else discarder
    x[WX_DECL] = st.seat[w, SF_DECL]
    nm = st.seat[w, SF_N_MELDS]
    replacement = self_draw and st.sc[SC_REPLACEMENT] != 0
    # J-5.4 天胡: the dealer's self-draw on the dealt tiles (first turn, no kong before)
    x[WX_FIRST_TURN] = 1 if (self_draw and w == dealer and st.seat[w, SF_N_DISCARDS] == 0 and nm == 0
                             and not replacement) else 0
    x[WX_REPLACEMENT] = 1 if replacement else 0
    x[WX_ON_FIRST] = 1 if (win_type == WIN_DISCARD and discarder == dealer
                           and st.seat[dealer, SF_N_DISCARDS] == 1) else 0
    # P47 (dihu="dealer_ready_undeclared"): the dealer was ready right after its first
    # discard, exactly when it was offered 硬子 then (J-4.2, engine J2)
    x[WX_DEALER_READY] = st.seat[dealer, SF_HARD_OFFER]
    # P27: copies of the winning kind seen elsewhere: unclaimed discards (not the
    # winning discard itself) and the other seats' exposed melds (a robbed added
    # kong shows its three pong tiles; concealed kongs are hidden, J-3.2)
    seen = 0
    for p in range(N_SEATS):
        nd = st.seat[p, SF_N_DISCARDS]
        if win_type == WIN_DISCARD and p == discarder:
            nd -= 1
        for i in range(nd):
            if st.discards[p, i] == tile and st.dflags[p, i] & DF_CLAIMED == 0:
                seen += 1
        if p == w:
            continue
        for i in range(st.seat[p, SF_N_MELDS]):
            t = st.meld_type[p, i]
            k = st.meld_kind[p, i]
            if t == MELD_CHOW:
                if k <= tile <= k + 2:
                    seen += 1
            elif k != tile or t == MELD_KONG_CONCEALED:
                continue
            elif t == MELD_PONG or (win_type == WIN_ROBBED_KONG and p == discarder and i == st.sc[SC_ROB_MELD]):
                seen += 3
            else:
                seen += 4
    x[WX_VISIBLE] = seen
    x[WX_N_MELDS] = nm
    for i in range(MAX_MELDS):
        x[WX_MELD_TYPE + i] = st.meld_type[w, i]
        x[WX_MELD_KIND + i] = st.meld_kind[w, i]
    for k in range(N_KINDS):
        x[WX_HAND + k] = st.hands[w, k]
    if self_draw:
        x[WX_HAND + tile] -= 1


@njit(cache=True)
def _finish_wins(st, ep, rp, win_type, discarder, tile):
    """Pay every seat with ``SF_WON`` (in turn order after the discarder) and end the hand.

    The 飘 circles open now are the failed 飘 of K-9.3 (a winner's own circle
    does not count).  On a discard / robbed-kong win the tile goes into the
    first winner's hand; a robbed added kong reverts to a pong (K-5.5).
    The hand's end lifts every K-2.5 force (E3).  A plain kernel, not inlined: once a hand, from three
    places of :func:`caishen.sim.engine.turn._step` (three inlined copies were ~a third of its compile).
    """
    dealer = st.sc[SC_DEALER]
    start = discarder if win_type != WIN_SELF_DRAW else st.sc[SC_TO_ACT]
    st.tmp[:] = 0
    first = -1
    mask = 0
    n_wins = np.int64(0)  # not a literal 0: _record_win compiles once
    for i in range(N_SEATS):
        w = (start + i) % N_SEATS if win_type == WIN_SELF_DRAW else (start + 1 + i) % N_SEATS
        if st.seat[w, SF_WON] == 0:
            continue
        for p in range(N_SEATS):
            st.circle[p] = 1 if (p != w and st.seat[p, SF_PIAO_OPEN] != 0) else 0
            if st.circle[p]:
                st.seat[p, SF_FAILED_PIAO] = 1
        # the rule set's payments kernel (K-8; none for a rule set scored after the hand, J-6)
        _pay(ep[EP_ENGINE_PAYMENTS], dealer, w, win_type, discarder, st.seat[w, SF_EXPONENT], st.circle, rp, st.tmp)
        if n_wins < MAX_WINNERS:
            _record_win(st, n_wins, w, win_type, discarder, tile)
            n_wins += 1
        mask |= 1 << w
        if first < 0:
            first = w
    for p in range(N_SEATS):
        st.seat[p, SF_SCORE] += st.tmp[p]
        st.seat[p, SF_FORCE_PIAO] = 0  # E3: the force ends with the hand
    if win_type == WIN_DISCARD:
        st.dflags[discarder, st.seat[discarder, SF_N_DISCARDS] - 1] |= DF_CLAIMED
        st.hands[first, tile] += 1
    elif win_type == WIN_ROBBED_KONG:
        st.meld_type[discarder, st.sc[SC_ROB_MELD]] = MELD_PONG
        st.hands[first, tile] += 1
    st.sc[SC_PHASE] = PH_DONE
    st.sc[SC_TO_ACT] = -1
    st.sc[SC_WINNER] = first
    st.sc[SC_WIN_TYPE] = win_type
    st.sc[SC_DISCARDER] = discarder if win_type != WIN_SELF_DRAW else -1
    st.sc[SC_WINNERS_MASK] = mask
    st.sc[SC_EXPONENT] = st.seat[first, SF_EXPONENT]
    st.sc[SC_FLAGS] = st.seat[first, SF_FLAGS]
    st.sc[SC_WIN_TILE] = tile
    st.sc[SC_TILE] = -1
    st.sc[SC_N_WINS] = n_wins
