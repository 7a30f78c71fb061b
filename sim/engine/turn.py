"""The own turn and the step: discard (and 架听), kongs, self-draw win, the 硬子 stage, :func:`_step`.

:func:`_step` applies the action of the seat to act: on its turn a
discard (K-4.1; with ``declare <k>`` the 架听 declaration, J-4.1), a
concealed kong (K-5.3) or an added kong (K-5.2, which may be robbed), or
the self-draw win; in the 硬子 stage (J-4.2) the declaration or its
refusal; during claims the claim step of :mod:`caishen.sim.engine.claims`.
Then it applies the automatic actions (J-4.2: a hard-declared seat
discards what it drew and cannot win with) until somebody must decide.
``_step`` must be given a legal action (no check; :class:`Game` and the
batch loops check with :func:`caishen.sim.engine.mask._legal_mask`).

Decisions (engine side; each cites its rule)
--------------------------------------------
- E8 (K-5.5, K-6.5): a robbed added kong reverts to a pong and is no chain
  link; an unrobbed added kong, a concealed and an exposed kong each add a
  link; a chow or pong (and a non-财神 discard) ends the chain.
- J1 (J-4.2 "discarded automatically"): a seat with 硬子 is never asked to
  discard: when it cannot win on its drawn tile, :func:`_step` discards
  that tile itself before returning (no decision, no event in the log;
  replaying the actions reproduces it).  When it can win it is asked
  ``win`` / ``discard <drawn>``; on another seat's discard ``win`` /
  ``pass``.  It is offered no pong, kong or 架听.
"""

from __future__ import annotations

import numpy as np
from numba import njit

from caishen.sim.engine.claims import _build_claims, _claim_step, _finish_wins, _open_claims
from caishen.sim.engine.deal import (
    _add_meld,
    _ask_hard,
    _chain_kong,
    _chain_reset,
    _declare_options,
    _hard_ready,
    _inline_kernel,
    _next_hard_candidate,
    _replacement_draw,
    _set_declaration,
    _update_tenpai,
    _update_tenpai_discard,
)
from caishen.sim.engine.layout import (
    A_CHOW_LOW,
    A_DECLARE,
    A_DISCARD,
    A_HARD_DECLARE,
    A_KONG_ADDED,
    A_KONG_CONCEALED,
    A_WIN,
    DECL_HARD,
    DECL_READY,
    HARD_STAGE_DEAL,
    HARD_STAGE_DEALER,
    HARD_STAGE_NONE,
    PH_HARD,
    PH_TURN,
)
from caishen.sim.rules.kernels import WIN_SELF_DRAW
from caishen.sim.tiles import MELD_KONG_ADDED, MELD_KONG_CONCEALED, MELD_PONG


@njit(cache=True, inline="always")
def _auto_action(st, ep):
    """J-4.2: the action the engine takes by itself for the seat to act, or -1.

    A seat with a hard declaration discards every drawn tile it cannot win
    with; the engine does that without asking (decision J1), so such a seat
    is asked only when it could win by self-draw (win, or discard the drawn tile).
    """
    if ep.hard == 0 or st.table.phase != PH_TURN:
        return -1
    s = st.table.to_act
    t = st.table.drawn
    if st.seat[s].decl == DECL_HARD and st.table.can_self_draw == 0 and t >= 0:
        return A_DISCARD + t
    return -1


@_inline_kernel
def _discard(st, ep, rp, tabs, s, k):
    st.hands[s, k] -= 1
    nd = st.seat[s].n_discards
    st.discards[s, nd] = k
    st.dflags[s, nd] = 0
    st.seat[s].n_discards = nd + 1
    st.table.turns += 1
    if k == ep.joker:  # 飘财 (K-9.1): a chain link and a circle (K-9.2)
        st.seat[s].chain_len += 1
        st.seat[s].chain_joker += 1
        st.seat[s].circle_open = 1
        st.seat[s].joker_discards += 1
        st.seat[s].force_joker = 0  # K-2.5 (E3): the 财神 discard lifts the force
    else:
        _chain_reset(st, s)  # K-6.5 a non-财神 discard ends the chain
    if k != st.table.drawn:  # discarding the drawn tile leaves the hand whose readiness is cached
        _update_tenpai_discard(st, ep, tabs, s)
    st.seat[s].swap_forbid = -1
    st.table.drawn = -1
    st.table.just_claimed = 0
    st.table.can_self_draw = 0
    _build_claims(st, ep, rp, tabs, s, k, False)
    if (ep.hard != 0 and s == st.table.dealer and nd == 0 and st.seat[s].decl != DECL_HARD
            and _hard_ready(st, tabs, s)):
        _ask_hard(st, s, HARD_STAGE_DEALER)  # J-4.2: the dealer declares with the first discard
    else:
        _open_claims(st, ep, rp, tabs, False)


@_inline_kernel
def _kong_concealed(st, ep, rp, tabs, s, k):
    """K-5.3: four of a kind from the hand; then a replacement draw (K-5.4)."""
    st.hands[s, k] -= 4
    _add_meld(st, s, MELD_KONG_CONCEALED, k)
    _chain_kong(st, s)
    _update_tenpai(st, ep, tabs, s)
    _replacement_draw(st, ep, rp, tabs, s)


@_inline_kernel
def _kong_added(st, ep, rp, tabs, s, k):
    """K-5.2: the fourth tile onto an own pong; it may be robbed first (K-5.5)."""
    m = 0
    for i in range(st.seat[s].n_melds):
        if st.meld_type[s, i] == MELD_PONG and st.meld_kind[s, i] == k:
            m = i
    st.hands[s, k] -= 1
    st.meld_type[s, m] = MELD_KONG_ADDED
    _update_tenpai(st, ep, tabs, s)
    st.table.rob_meld = m
    st.table.drawn = -1
    st.table.can_self_draw = 0
    _build_claims(st, ep, rp, tabs, s, k, True)
    _open_claims(st, ep, rp, tabs, True)


@_inline_kernel
def _hard_step(st, ep, rp, tabs, s, a):
    """J-4.2: seat ``s`` declares (``hard_declare``) or declines 硬子; then the next
    ready non-dealer is asked, or the dealer's first turn starts (stage deal),
    or the claims on the dealer's first discard are opened (stage dealer)."""
    if a == A_HARD_DECLARE:
        _set_declaration(st, s, DECL_HARD, st.table.turns)
    if st.table.hard_stage == HARD_STAGE_DEAL:
        p = _next_hard_candidate(st, tabs, s)
        if p >= 0:
            _ask_hard(st, p, HARD_STAGE_DEAL)
        else:
            st.table.hard_stage = HARD_STAGE_NONE
            st.table.phase = PH_TURN
            st.table.to_act = st.table.dealer
    else:
        st.table.hard_stage = HARD_STAGE_NONE
        _open_claims_call(st, ep, rp, tabs)


@njit(cache=True)
def _open_claims_call(st, ep, rp, tabs):
    """``_open_claims`` on a pending discard as a plain call (the rare 硬子 path; keeps ``_step`` small)."""
    _open_claims(st, ep, rp, tabs, False)


@njit(cache=True)
def _step(st, ep, rp, tabs, a):
    """Apply action ``a`` of the seat to act, in place.  ``a`` must be legal (no check).

    Then the automatic actions (J-4.2: a hard-declared seat discards what it
    drew and cannot win with) are applied until somebody must decide.
    """
    st.table.steps += 1
    while True:
        s = st.table.to_act
        ph = st.table.phase
        if ph == PH_TURN:
            if a < A_KONG_CONCEALED:  # discard, or discard and declare 架听 (J-4.1)
                k = a
                if a >= A_DECLARE:
                    k = a - A_DECLARE
                    _set_declaration(st, s, DECL_READY, st.table.turns + 1)
                _discard(st, ep, rp, tabs, s, k)
            elif a < A_KONG_ADDED:
                _kong_concealed(st, ep, rp, tabs, s, a - A_KONG_CONCEALED)
            elif a < A_CHOW_LOW:
                _kong_added(st, ep, rp, tabs, s, a - A_KONG_ADDED)
            elif a == A_WIN:
                st.seat[s].won = 1
                st.seat[s].exponent = st.table.self_draw_exp
                st.seat[s].flags = st.table.self_draw_flags
                st.seat[s].win_joker_links = st.table.self_draw_joker_links
                st.seat[s].win_kong_links = st.table.self_draw_kong_links
                _finish_wins(st, ep, rp, np.int64(WIN_SELF_DRAW), np.int64(-1), st.table.drawn)
        elif ph == PH_HARD:
            _hard_step(st, ep, rp, tabs, s, a)
        else:
            _claim_step(st, ep, rp, tabs, a)
        if ep.declare != 0 and st.table.phase == PH_TURN:  # a turn begins (J-4.1)
            _declare_options(st, ep, tabs, st.table.to_act)
        a = _auto_action(st, ep)
        if a < 0:
            return


#: :func:`_step` compiled into its caller (numba IR inlining) for the batch loop of
#: :mod:`caishen.sim.selfplay.batch`: about 10% of random self-play (a call of the plain
#: kernel was 0.86x and 0.79x of random self-play speed on the two rule sets); everything else calls the plain
#: kernel.  The copy is the step's own body: the large helpers reached from many places (the win test of
#: a draw, ``_finish_wins``) are calls, so the copy costs a cold compile about what the plain kernel does
_step_inlined = _inline_kernel(_step.py_func)
