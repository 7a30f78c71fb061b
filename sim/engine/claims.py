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
scored after the hand reads (J-9, ``st.wins[j]``: ``WIN_DTYPE``).

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
  failed (``circle_failed``); the winner's own open circle does not count.
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
- J11 (J-6): the engine pays nothing under J-6 (``ep.payments`` is ``PAYMENTS_NONE``):
  the scores exist only in the record (:func:`batch_columns`,
  :attr:`Game.result`), where the rule set's points kernel computes them (``ep.points``).
"""

from __future__ import annotations

import numpy as np
from numba import njit

from caishen.sim.engine.deal import (
    _add_meld,
    _begin_claimed_turn,
    _chain_kong,
    _chain_reset,
    _draw_next,
    _inline_kernel,
    _replacement_draw,
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
    ``seat.claim_opts``, ``queue``, ``table.q_len``.
    """
    joker = ep.joker
    any_circle = False
    if ep.circle_ban != 0:
        for p in range(N_SEATS):
            if st.seat[p].circle_open != 0:
                any_circle = True
    left = _tiles_left(st)
    for i in range(1, N_SEATS):
        s = (src + i) % N_SEATS
        opts = 0
        if k != joker:  # K-2.2 a discarded joker can never be claimed
            if (
                ep.discard_win != 0
                and st.seat[s].ready != 0
                and (not rob or ep.rob_kong != 0)
                and not (ep.passed_win != 0 and st.seat[s].passed_win != 0)
            ):
                legal, e, f, lp, lk = _win_eval(st, ep, rp, tabs, s, k, np.bool_(False), np.bool_(False))
                if legal:
                    opts |= OPT_WIN
                    st.seat[s].claim_exp = e
                    st.seat[s].claim_flags = f
                    st.seat[s].claim_joker_links = lp
                    st.seat[s].claim_kong_links = lk
            # K-9.2: no chow / pong / exposed kong inside a 飘财 circle
            # J-4.2: no pong / kong after a hard declaration
            if not rob and not any_circle and st.seat[s].n_melds < MAX_MELDS and st.seat[s].decl != DECL_HARD:
                h = st.hands[s]
                if h[k] >= 2 and ep.passed_pong != 0 and (st.seat[s].passed_pong >> k) & 1:
                    pass  # K-4.4 passed pong
                elif h[k] >= 2:
                    opts |= OPT_PONG
                if h[k] >= 3 and left > ep.reserve:  # K-3.4 kongs only above the reserve
                    opts |= OPT_KONG
                if ep.chow != 0 and i == 1 and k < 27:  # K-4.2 chow only by the next seat
                    r = k % 9
                    if r <= 6 and h[k + 1] > 0 and h[k + 2] > 0 and k + 1 != joker and k + 2 != joker:
                        opts |= OPT_CHOW_LOW
                    if 1 <= r <= 7 and h[k - 1] > 0 and h[k + 1] > 0 and k - 1 != joker and k + 1 != joker:
                        opts |= OPT_CHOW_MID
                    if r >= 2 and h[k - 2] > 0 and h[k - 1] > 0 and k - 2 != joker and k - 1 != joker:
                        opts |= OPT_CHOW_HIGH
        st.seat[s].claim_opts = opts
    n = 0
    for level in range(3):  # K-4.3 win > pong / kong > chow, then turn order
        bits = _level_bits(level)
        for i in range(1, N_SEATS):
            s = (src + i) % N_SEATS
            if st.seat[s].claim_opts & bits:
                st.queue[n, 0] = s
                st.queue[n, 1] = level
                n += 1
    st.table.q_len = n
    st.table.q_pos = 0
    st.table.n_discard_wins = 0
    st.table.tile = k
    st.table.src = src


@_inline_kernel
def _group_end(st, q):
    """End of the run of queue entries from ``q`` that belong to the same seat."""
    s = st.queue[q, 0]
    e = q + 1
    while e < st.table.q_len and st.queue[e, 0] == s:
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
        bits |= st.seat[s].claim_opts & _level_bits(st.queue[j, 1])
    if st.table.n_discard_wins > 0:  # multiple_ron: once somebody won, only wins are asked
        bits &= OPT_WIN
    return bits


@_inline_kernel
def _open_claims(st, ep, rp, tabs, rob):
    """After ``_build_claims``: ask the first claimant, or move on if nobody can claim."""
    if st.table.q_len == 0:
        _no_claim(st, ep, rp, tabs, rob)
    else:
        st.table.phase = PH_ROB if rob else PH_CLAIM
        st.table.to_act = st.queue[0, 0]


@_inline_kernel
def _no_claim(st, ep, rp, tabs, rob):
    src = st.table.src
    if rob:  # the added kong stands: link + replacement draw (K-5.4, K-6.5)
        _chain_kong(st, src)
        _replacement_draw(st, ep, rp, tabs, src)
    else:
        _draw_next(st, ep, rp, tabs, (src + 1) % N_SEATS)


@_inline_kernel
def _claim_step(st, ep, rp, tabs, a):
    s = st.table.to_act
    q = st.table.q_pos
    e = _group_end(st, q)
    offered = _offered(st, q, e)
    rob = st.table.phase == PH_ROB
    k = st.table.tile
    src = st.table.src
    if a == A_WIN:
        st.seat[s].won = 1
        st.seat[s].exponent = st.seat[s].claim_exp
        st.seat[s].flags = st.seat[s].claim_flags
        st.seat[s].win_joker_links = st.seat[s].claim_joker_links
        st.seat[s].win_kong_links = st.seat[s].claim_kong_links
        st.table.n_discard_wins += 1
        st.table.q_pos = e
        if ep.multi_win != 0 and e < st.table.q_len and st.queue[e, 1] == LV_WIN:
            st.table.to_act = st.queue[e, 0]  # K-4.3 option: ask the other win claimants
            return
        _finish_wins(st, ep, rp, WIN_ROBBED_KONG if rob else WIN_DISCARD, src, k)
        return
    # K-4.4 (E6): a melding claim is the seat's next turn for the bans of earlier
    # discards, so it lifts them first; the ban that answering this very discard
    # sets (a chow of a tile it could pong) is set after and holds
    if a != A_PASS and ep.passed_pong_claim_clears != 0:
        st.seat[s].passed_pong = 0
    # the seat gives up what it does not take (its exposed kong takes the tile: no pass)
    if offered & OPT_PONG and a != A_PONG and a != A_KONG_EXPOSED and ep.passed_pong != 0:
        if ep.passed_pong == 2:
            st.seat[s].passed_pong = (1 << N_KINDS) - 1
        else:
            st.seat[s].passed_pong |= 1 << k  # K-4.4
    if offered & OPT_WIN:
        st.seat[s].n_passed_win += 1
        if ep.passed_win != 0:
            st.seat[s].passed_win = 1  # J-3.5 until the seat's next draw
    if a == A_PASS:
        st.table.q_pos = e
        if e < st.table.q_len and (st.table.n_discard_wins == 0 or st.queue[e, 1] == LV_WIN):
            st.table.to_act = st.queue[e, 0]
        elif st.table.n_discard_wins > 0:
            _finish_wins(st, ep, rp, WIN_ROBBED_KONG if rob else WIN_DISCARD, src, k)
        else:
            _no_claim(st, ep, rp, tabs, rob)
        return
    # a melding claim (everybody with a higher priority has passed)
    nd = st.seat[src].n_discards - 1
    st.dflags[src, nd] |= DF_CLAIMED
    st.seat[s].swap_forbid = -1
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
        _replacement_draw(st, ep, rp, tabs, s)
    else:  # chow (K-4.2)
        low = k - (a - A_CHOW_LOW)
        for t in range(low, low + 3):
            if t != k:
                st.hands[s, t] -= 1
        _add_meld(st, s, MELD_CHOW, low)
        st.seat[s].n_chows += 1
        _chain_reset(st, s)
        # K-4.5 swap call: the other end of the two held tiles is banned on
        # the chows after the first swap_call_max_chows
        if st.seat[s].n_chows > ep.swap_max_chows:
            r = k % 9
            if a == A_CHOW_LOW and r + 3 <= 8:
                st.seat[s].swap_forbid = k + 3
            elif a == A_CHOW_HIGH and r - 3 >= 0:
                st.seat[s].swap_forbid = k - 3
        _begin_claimed_turn(st, s)


@njit(cache=True)
def _record_win(st, j, w, win_type, discarder, tile):
    """Write ``st.wins[j]`` (a ``WIN_DTYPE`` record): the context of seat ``w``'s win, before the hand changes.

    A rule set scored after the hand reads it (its record finisher, J-9).
    """
    x = st.wins[j]
    dealer = st.table.dealer
    self_draw = win_type == WIN_SELF_DRAW
    x.seat = w
    x.tile = tile
    x.type = win_type
    x.discarder = -1 if self_draw else discarder
    x.decl = st.seat[w].decl
    nm = st.seat[w].n_melds
    replacement = self_draw and st.table.replacement != 0
    # J-5.4 天胡: the dealer's self-draw on the dealt tiles (first turn, no kong before)
    x.first_turn = 1 if (self_draw and w == dealer and st.seat[w].n_discards == 0 and nm == 0
                          and not replacement) else 0
    x.replacement = 1 if replacement else 0
    x.on_first = 1 if (win_type == WIN_DISCARD and discarder == dealer
                        and st.seat[dealer].n_discards == 1) else 0
    # P47 (dihu="dealer_ready_undeclared"): the dealer was ready right after its first
    # discard, exactly when it was offered 硬子 then (J-4.2, engine J2)
    x.dealer_ready = st.seat[dealer].hard_offer
    # P27: copies of the winning kind seen elsewhere: unclaimed discards (not the
    # winning discard itself) and the other seats' exposed melds (a robbed added
    # kong shows its three pong tiles; concealed kongs are hidden, J-3.2)
    seen = 0
    for p in range(N_SEATS):
        nd = st.seat[p].n_discards
        if win_type == WIN_DISCARD and p == discarder:
            nd -= 1
        for i in range(nd):
            if st.discards[p, i] == tile and st.dflags[p, i] & DF_CLAIMED == 0:
                seen += 1
        if p == w:
            continue
        for i in range(st.seat[p].n_melds):
            t = st.meld_type[p, i]
            k = st.meld_kind[p, i]
            if t == MELD_CHOW:
                if k <= tile <= k + 2:
                    seen += 1
            elif k != tile or t == MELD_KONG_CONCEALED:
                continue
            elif t == MELD_PONG or (win_type == WIN_ROBBED_KONG and p == discarder and i == st.table.rob_meld):
                seen += 3
            else:
                seen += 4
    x.visible = seen
    x.n_melds = nm
    for i in range(MAX_MELDS):
        x.meld_type[i] = st.meld_type[w, i]
        x.meld_kind[i] = st.meld_kind[w, i]
    for k in range(N_KINDS):
        x.hand[k] = st.hands[w, k]
    if self_draw:
        x.hand[tile] -= 1


@njit(cache=True)
def _finish_wins(st, ep, rp, win_type, discarder, tile):
    """Pay every seat with ``seat.won`` (in turn order after the discarder) and end the hand.

    The 飘 circles open now are the failed 飘 of K-9.3 (a winner's own circle
    does not count).  On a discard / robbed-kong win the tile goes into the
    first winner's hand; a robbed added kong reverts to a pong (K-5.5).
    The hand's end lifts every K-2.5 force (E3).  A plain kernel, not inlined: once a hand, from three
    places of :func:`caishen.sim.engine.turn._step` (three inlined copies were ~a third of its compile).
    """
    dealer = st.table.dealer
    start = discarder if win_type != WIN_SELF_DRAW else st.table.to_act
    st.tmp[:] = 0
    first = -1
    mask = 0
    n_wins = np.int64(0)  # not a literal 0: _record_win compiles once
    for i in range(N_SEATS):
        w = (start + i) % N_SEATS if win_type == WIN_SELF_DRAW else (start + 1 + i) % N_SEATS
        if st.seat[w].won == 0:
            continue
        for p in range(N_SEATS):
            st.circle[p] = 1 if (p != w and st.seat[p].circle_open != 0) else 0
            if st.circle[p]:
                st.seat[p].circle_failed = 1
        # the rule set's payments kernel (K-8; none for a rule set scored after the hand, J-6)
        _pay(ep.payments, dealer, w, win_type, discarder, st.seat[w].exponent, st.circle, rp, st.tmp)
        if n_wins < MAX_WINNERS:
            _record_win(st, n_wins, w, win_type, discarder, tile)
            n_wins += 1
        mask |= 1 << w
        if first < 0:
            first = w
    for p in range(N_SEATS):
        st.seat[p].score += st.tmp[p]
        st.seat[p].force_joker = 0  # E3: the force ends with the hand
    if win_type == WIN_DISCARD:
        st.dflags[discarder, st.seat[discarder].n_discards - 1] |= DF_CLAIMED
        st.hands[first, tile] += 1
    elif win_type == WIN_ROBBED_KONG:
        st.meld_type[discarder, st.table.rob_meld] = MELD_PONG
        st.hands[first, tile] += 1
    st.table.phase = PH_DONE
    st.table.to_act = -1
    st.table.winner = first
    st.table.win_type = win_type
    st.table.discarder = discarder if win_type != WIN_SELF_DRAW else -1
    st.table.winners_mask = mask
    st.table.exponent = st.seat[first].exponent
    st.table.flags = st.seat[first].flags
    st.table.win_tile = tile
    st.table.tile = -1
    st.table.n_wins = n_wins
