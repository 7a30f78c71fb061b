"""The invariant checker: every state of a hand obeys the rules, restated independently.

:func:`_check_state` returns 0 or an ``ERR_*`` code (``ERR_MESSAGES``
names it): 136 tiles conserved, hands within 0..4, no joker in a meld
(K-2.3), hand sizes, the seat to act, the cached ready flags, the
declarations and passed wins (J-3.5, J-4.1, J-4.2), the K-2.5 force (E3),
the counted chain links (K-6.5, K-9.4, K-10), scores summing to zero
(K-8.5), wall pointers above the reserve (K-3.4), and a non-empty mask
whose every action passes :func:`_action_ok`, the necessary conditions of
each action written again from the rules (not from
:func:`caishen.sim.engine.mask._legal_mask`).  :func:`caishen.sim.engine.game.check_state`
is its Python face; the batch self-play runs it after every step with
``check=True``.
"""

from __future__ import annotations

import numpy as np
from numba import njit

from caishen.sim.engine.deal import _tiles_left, _win_eval
from caishen.sim.engine.layout import (
    A_CHOW_HIGH,
    A_CHOW_LOW,
    A_DECLARE,
    A_DISCARD,
    A_HARD_DECLARE,
    A_HARD_DECLINE,
    A_KONG_ADDED,
    A_KONG_CONCEALED,
    A_KONG_EXPOSED,
    A_PASS,
    A_PONG,
    A_WIN,
    DECL_HARD,
    DECL_READY,
    DECL_NONE,
    DF_CLAIMED,
    HARD_STAGE_DEAL,
    HARD_STAGE_DEALER,
    HARD_STAGE_NONE,
    LV_WIN,
    MAX_MELDS,
    N_ACTIONS,
    N_KINDS,
    N_SEATS,
    N_TILES,
    PH_CLAIM,
    PH_DONE,
    PH_HARD,
    PH_ROB,
    PH_TURN,
)
from caishen.sim.engine.mask import _legal_mask
from caishen.sim.hand import _add_meld_tiles, _is_win, _shanten
from caishen.sim.rules.kernels import FLAG_CHAIN, FLAG_JOKER_LINK, WIN_SELF_DRAW
from caishen.sim.tiles import MELD_CHOW, MELD_NONE, MELD_PONG


ERR_TILES = 1
ERR_HAND_RANGE = 2
ERR_JOKER_MELD = 3
ERR_HAND_SIZE = 4
ERR_TO_ACT = 5
ERR_EMPTY_MASK = 6
ERR_MASK_ILLEGAL = 7
ERR_SCORES = 8
ERR_POINTERS = 9
ERR_MELDS = 10
ERR_TENPAI = 11
ERR_MASK_LIST = 12
ERR_DECL = 13
ERR_PASSED_WIN = 14
ERR_HARD_AUTO = 15
ERR_MISSING = 16
ERR_FORCE = 17
ERR_WIN_LINKS = 18
ERR_MESSAGES = {
    ERR_TILES: "tiles not conserved: wall remainder + hands + melds + discards != 4 of every kind",
    ERR_HAND_RANGE: "a hand holds a kind more than 4 times",
    ERR_JOKER_MELD: "a joker is part of a meld (K-2.3)",
    ERR_HAND_SIZE: "a hand has the wrong number of tiles",
    ERR_TO_ACT: "the seat to act is inconsistent with the phase",
    ERR_EMPTY_MASK: "no legal action while the hand is not over",
    ERR_MASK_ILLEGAL: "the mask allows an illegal action",
    ERR_SCORES: "scores do not sum to zero (K-8.5)",
    ERR_POINTERS: "wall pointers out of range (reserve touched, K-3.4)",
    ERR_MELDS: "meld table inconsistent",
    ERR_TENPAI: "a seat's cached ready flag or shanten (seat.ready, seat.shanten) is stale",
    ERR_MASK_LIST: "the legal-action list holds an action twice",
    ERR_DECL: "a declaration is inconsistent (J-4.1 / J-4.2: rule set, turn, offer, melds after 硬子)",
    ERR_PASSED_WIN: "a seat that passed a win is offered a win before its next draw (J-3.5)",
    ERR_HARD_AUTO: "a 硬子 seat is asked to discard although it cannot win (J-4.2: automatic discard)",
    ERR_MISSING: "a legal 架听 declaration or 硬子 offer is missing (J-4.1 / J-4.2)",
    ERR_FORCE: "a K-2.5 forced 飘 (seat.force_joker) is held by a seat that is not on its own turn, "
    "holds no 财神, or plays a rule set without it (E3)",
    ERR_WIN_LINKS: "a winner's counted chain links disagree with its chain, its flags or the win type "
    "(K-6.5, K-9.4, K-10)",
}


@njit(cache=True)
def _winning_kinds_slow(st, tabs, s, discard):
    """Kinds that complete seat ``s``'s concealed tiles (minus one ``discard``, -1 none),
    of which ``s`` holds fewer than four in hand and melds: a plain loop over
    the 34 kinds with the win test (the checker's restatement of J-4.1 / J-4.2)."""
    h = st.hands[s]
    own = st.counts
    for k in range(N_KINDS):
        own[k] = h[k]
    for i in range(st.seat[s].n_melds):
        _add_meld_tiles(own, st.meld_type[s, i], st.meld_kind[s, i])
    if discard >= 0:
        h[discard] -= 1
        own[discard] -= 1
    n = 0
    for t in range(N_KINDS):
        if own[t] < 4:
            h[t] += 1
            if _is_win(h, np.int64(-1), tabs):  # no joker (J-1.1); int64, not a literal
                n += 1
            h[t] -= 1
    if discard >= 0:
        h[discard] += 1
    return n


@njit(cache=True)
def _action_ok(st, ep, rp, tabs, a):
    """Necessary conditions of action ``a`` restated from the rules, independent of ``_legal_mask``."""
    s = st.table.to_act
    ph = st.table.phase
    h = st.hands[s]
    joker = ep.joker
    if ph == PH_HARD:  # J-4.2: a ready seat at the deal, before the dealer's first discard
        if a != A_HARD_DECLARE and a != A_HARD_DECLINE:
            return False
        if ep.hard == 0 or st.seat[s].decl == DECL_HARD:
            return False
        dealer = st.table.dealer
        if s == dealer:  # with the first discard
            if st.seat[s].n_discards != 1 or st.table.turns != 1 or st.table.src != s:
                return False
        elif st.table.turns != 0 or st.seat[s].n_melds != 0:
            return False
        return _winning_kinds_slow(st, tabs, s, -1) > 0
    hard = st.seat[s].decl == DECL_HARD
    if ph == PH_TURN:
        if hard and a != A_WIN and a != A_DISCARD + st.table.drawn:
            return False  # J-4.2: a hard seat only wins or gives back its drawn tile
        if A_DECLARE <= a < A_KONG_CONCEALED:  # J-4.1
            k = a - A_DECLARE
            if ep.declare == 0 or st.seat[s].decl != DECL_NONE or h[k] == 0:
                return False
            return _winning_kinds_slow(st, tabs, s, k) == 1
        if a < A_DECLARE:
            if h[a] == 0:
                return False
            if joker >= 0 and a != joker and ep.force_joker_min > 0 and h[joker] >= ep.force_joker_min:
                return False  # K-2.4
            if a != joker and st.seat[s].force_joker != 0:
                return False  # K-2.5 (E3): only a 财神 until one is discarded
            return True
        if A_KONG_CONCEALED <= a < A_KONG_ADDED:
            k = a - A_KONG_CONCEALED
            return h[k] == 4 and k != joker and _tiles_left(st) > ep.reserve
        if A_KONG_ADDED <= a < A_CHOW_LOW:
            k = a - A_KONG_ADDED
            if h[k] == 0 or _tiles_left(st) <= ep.reserve:
                return False
            for i in range(st.seat[s].n_melds):
                if st.meld_type[s, i] == MELD_PONG and st.meld_kind[s, i] == k:
                    return True
            return False
        if a == A_WIN:
            t = st.table.drawn
            if t < 0 or st.seat[s].force_joker != 0:  # K-2.5 (E3): no win before the 财神 discard
                return False
            st.hands[s, t] -= 1
            legal, e, f, lp, lk = _win_eval(st, ep, rp, tabs, s, t, np.bool_(True), st.table.replacement != 0)
            st.hands[s, t] += 1
            return legal
        return False
    # claims: K-2.2 never on a joker; K-9.2 no meld inside a 飘 circle
    k = st.table.tile
    src = st.table.src
    if a == A_PASS:
        return True
    if k == joker or s == src:
        return False
    if a == A_WIN:
        if ep.discard_win == 0 or st.seat[s].force_joker != 0:  # K-7.1; K-2.5 (E3)
            return False
        if ep.passed_win != 0 and st.seat[s].passed_win != 0:
            return False  # J-3.5
        legal, e, f, lp, lk = _win_eval(st, ep, rp, tabs, s, k, np.bool_(False), np.bool_(False))
        return legal
    if ph == PH_ROB or hard:  # J-4.2: no pong or kong after a hard declaration
        return False
    if a == A_PONG or a == A_KONG_EXPOSED or A_CHOW_LOW <= a <= A_CHOW_HIGH:
        for p in range(N_SEATS):
            if st.seat[p].circle_open != 0 and ep.circle_ban != 0:
                return False
    if a == A_PONG:
        return h[k] >= 2 and not (ep.passed_pong != 0 and (st.seat[s].passed_pong >> k) & 1)
    if a == A_KONG_EXPOSED:
        return h[k] >= 3 and _tiles_left(st) > ep.reserve
    if A_CHOW_LOW <= a <= A_CHOW_HIGH:
        if ep.chow == 0 or s != (src + 1) % N_SEATS or k >= 27:
            return False
        low = k - (a - A_CHOW_LOW)
        if low < 0 or low % 9 > 6 or low // 9 != k // 9:
            return False
        for t in range(low, low + 3):
            if t != k and (h[t] == 0 or t == joker):
                return False
        return True
    return False


@njit(cache=True)
def _check_declarations(st, ep, tabs):
    """The declaration and passed-win part of :func:`_check_state` (J-3.5, J-4.1, J-4.2); 0 or an ``ERR_*``."""
    ph = st.table.phase
    turns = st.table.turns
    dealer = st.table.dealer
    for s in range(N_SEATS):
        d = st.seat[s].decl
        dt = st.seat[s].decl_turn
        if st.seat[s].passed_win != 0 and (ep.passed_win == 0 or st.seat[s].n_passed_win == 0):
            return ERR_PASSED_WIN
        if st.seat[s].hard_offer != 0 and ep.hard == 0:
            return ERR_DECL
        if d == DECL_NONE:
            if dt != -1:
                return ERR_DECL
        elif d == DECL_READY:
            # declared with a discard of this hand; the discard made it the seat's
            if ep.declare == 0 or dt < 1 or dt > turns or st.seat[s].n_discards == 0:
                return ERR_DECL
        elif d == DECL_HARD:
            if ep.hard == 0 or st.seat[s].hard_offer != 1:
                return ERR_DECL
            if dt != (1 if s == dealer else 0):  # at the deal / with the dealer's first discard
                return ERR_DECL
            if st.seat[s].n_melds != st.seat[s].decl_melds:  # no pong or kong after it
                return ERR_DECL
        else:
            return ERR_DECL
    if ep.hard != 0 and ph != PH_DONE and ph != PH_HARD:
        # J-4.2 completeness: every ready non-dealer was offered 硬子 at the deal, and
        # the dealer after the first discard if then ready (hands unchanged until then)
        if turns == 0:
            for i in range(1, N_SEATS):
                p = (dealer + i) % N_SEATS
                ready = _winning_kinds_slow(st, tabs, p, -1) > 0
                if ready != (st.seat[p].hard_offer != 0):
                    return ERR_MISSING
        elif turns == 1 and st.seat[dealer].n_discards == 1:
            ready = _winning_kinds_slow(st, tabs, dealer, -1) > 0
            if ready != (st.seat[dealer].hard_offer != 0):
                return ERR_MISSING
    return 0


@njit(cache=True)
def _check_state(st, ep, rp, tabs):
    """0 if every invariant holds, else an ``ERR_*`` code (see :data:`ERR_MESSAGES`).

    Checks: 136 tiles conserved (wall remainder + hands + melds + unclaimed
    discards = 4 of each kind), hands within 0..4, no joker in a meld, hand
    sizes, the seat to act, a non-empty mask whose every action passes
    :func:`_action_ok`, scores summing to zero, wall pointers above the
    reserve.  Uses ``st.mask`` (recomputed).
    """
    head = st.table.head
    tail = st.table.tail
    if head < 0 or tail >= N_TILES or tail - head + 1 < ep.reserve:
        return ERR_POINTERS
    counts = st.counts
    counts[:] = 0
    for i in range(head, tail + 1):
        counts[st.wall[i]] += 1
    joker = ep.joker
    for s in range(N_SEATS):
        for k in range(N_KINDS):
            if st.hands[s, k] > 4:
                return ERR_HAND_RANGE
            counts[k] += st.hands[s, k]
        nm = st.seat[s].n_melds
        if nm < 0 or nm > MAX_MELDS:
            return ERR_MELDS
        for i in range(MAX_MELDS):
            t = st.meld_type[s, i]
            if (i < nm) != (t != MELD_NONE):
                return ERR_MELDS
            if i < nm:
                k = st.meld_kind[s, i]
                if t == MELD_CHOW and (k >= 27 or k % 9 > 6):
                    return ERR_MELDS
                if k == joker or (t == MELD_CHOW and (k + 1 == joker or k + 2 == joker)):
                    return ERR_JOKER_MELD
                _add_meld_tiles(counts, st.meld_type[s, i], st.meld_kind[s, i])
        for j in range(st.seat[s].n_discards):
            if st.dflags[s, j] & DF_CLAIMED == 0:
                counts[st.discards[s, j]] += 1
    for k in range(N_KINDS):
        if counts[k] != 4:
            return ERR_TILES
    total = 0
    for s in range(N_SEATS):
        total += st.seat[s].score
    if total != 0:
        return ERR_SCORES
    ph = st.table.phase
    to_act = st.table.to_act
    for s in range(N_SEATS):
        n = 0
        for k in range(N_KINDS):
            n += st.hands[s, k]
        base = 13 - 3 * st.seat[s].n_melds
        # the seat holding 3m+2 tiles: the one to act on its turn, or the dealer
        # while the non-dealers are asked for 硬子 (J-4.2)
        acting = (ph == PH_TURN and s == to_act) or (
            ph == PH_HARD and st.table.hard_stage == HARD_STAGE_DEAL and s == st.table.dealer
        )
        if ph == PH_DONE:
            if n != base and n != base + 1:
                return ERR_HAND_SIZE
        elif n != base + (1 if acting else 0):
            return ERR_HAND_SIZE
        if ph != PH_DONE and not acting:
            sh = _shanten(st.hands[s], joker, tabs)
            lb = st.seat[s].shanten  # the shanten, or a lower bound >= 1 (engine.deal._update_tenpai_discard)
            if (1 if sh <= 0 else 0) != st.seat[s].ready or lb > sh or (lb < sh and lb < 1):
                return ERR_TENPAI
    err = _check_declarations(st, ep, tabs)
    if err != 0:
        return err
    for s in range(N_SEATS):  # E3: the K-2.5 force sits only with the seat on its turn
        fp = st.seat[s].force_joker
        if fp != 0:
            if fp != 1 or ep.force_joker_shape == 0 or joker < 0 or st.hands[s, joker] == 0:
                return ERR_FORCE
            if not ((ph == PH_TURN or ph == PH_ROB) and s == st.table.turn):
                return ERR_FORCE
        # K-6.5 (D9): a win counts chain links only on a self-draw, at most the
        # winner's own links, and its flags say so (K-9.4, K-10)
        wp = st.seat[s].win_joker_links
        wk = st.seat[s].win_kong_links
        if st.seat[s].won == 0:
            if wp != 0 or wk != 0:
                return ERR_WIN_LINKS
        else:
            fl = st.seat[s].flags
            if wp < 0 or wk < 0 or wp > st.seat[s].chain_joker or wk > st.seat[s].chain_kong:
                return ERR_WIN_LINKS
            if st.table.win_type != WIN_SELF_DRAW and wp + wk != 0:
                return ERR_WIN_LINKS
            if ((fl & FLAG_CHAIN) != 0) != (wp + wk > 0) or ((fl & FLAG_JOKER_LINK) != 0) != (wp > 0):
                return ERR_WIN_LINKS
    if ph == PH_DONE:
        if to_act != -1:
            return ERR_TO_ACT
        return 0
    if to_act < 0 or to_act >= N_SEATS:
        return ERR_TO_ACT
    if ph == PH_TURN and to_act != st.table.turn:
        return ERR_TO_ACT
    if ph == PH_CLAIM or ph == PH_ROB:
        q = st.table.q_pos
        if q >= st.table.q_len or st.queue[q, 0] != to_act or to_act == st.table.src:
            return ERR_TO_ACT
        for j in range(q, st.table.q_len):  # J-3.5
            p = st.queue[j, 0]
            if st.queue[j, 1] == LV_WIN and ep.passed_win != 0 and st.seat[p].passed_win != 0:
                return ERR_PASSED_WIN
    if ph == PH_HARD:
        stage = st.table.hard_stage
        dealer = st.table.dealer
        if ep.hard == 0 or st.seat[to_act].hard_offer != 1:
            return ERR_TO_ACT
        if stage == HARD_STAGE_DEAL:
            if to_act == dealer or st.table.turn != dealer:
                return ERR_TO_ACT
        elif stage != HARD_STAGE_DEALER or to_act != dealer or st.table.src != dealer:
            return ERR_TO_ACT
    elif st.table.hard_stage != HARD_STAGE_NONE:
        return ERR_TO_ACT
    if ph == PH_TURN and st.seat[to_act].decl == DECL_HARD and st.table.can_self_draw == 0:
        return ERR_HARD_AUTO
    if ph == PH_TURN and st.seat[to_act].decl == DECL_NONE and ep.declare != 0:
        # J-4.1 completeness: every discard leaving a single wait may be declared
        _legal_mask(st, ep)
        h = st.hands[to_act]
        for k in range(N_KINDS):
            if h[k] > 0 and st.mask[A_DISCARD + k]:
                h[k] -= 1
                ready = _shanten(h, joker, tabs) <= 0
                h[k] += 1
                single = ready and _winning_kinds_slow(st, tabs, to_act, k) == 1
                if single != (st.mask[A_DECLARE + k] != 0):
                    return ERR_MISSING
    n_legal = _legal_mask(st, ep)
    m = st.mask
    n_set = 0
    for a in range(N_ACTIONS):
        if m[a]:
            n_set += 1
            if not _action_ok(st, ep, rp, tabs, a):
                return ERR_MASK_ILLEGAL
    if n_set != n_legal:  # the mask is made from the list (_legal_mask): fewer set means a repeat
        return ERR_MASK_LIST
    if n_legal == 0:
        return ERR_EMPTY_MASK
    return 0
