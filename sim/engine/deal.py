"""The wall, the deal and the draws; the win test and readiness; the offers made when a turn starts.

- The wall (K-1.3): :func:`_fill_wall`, :func:`_shuffle_wall`,
  :func:`_seeded_wall` (the random stream ``st.rng``, :mod:`caishen.sim.rng`).
- The deal (K-3.1, :func:`_reset`), a normal or replacement draw (K-5.4,
  :func:`_draw`: it closes the seat's 飘 circle, lifts its passed pong and
  passed win, sets the K-2.5 force and asks the win test), the 流局 when
  only the reserve is left (K-3.4, :func:`_draw_next`), and the turn after
  a chow or pong (:func:`_begin_claimed_turn`).
- :func:`_win_eval`: the one place where the engine calls the rule set's
  win kernel (chosen by ``ep.win_kernel``); :func:`_update_tenpai`
  (after a discard :func:`_update_tenpai_discard`) caches which seats are
  ready, so only they are asked.
- The declarations offered when a turn starts (J-4.1, J-4.2):
  :func:`_declare_options` (架听), :func:`_hard_ready`,
  :func:`_next_hard_candidate`, :func:`_ask_hard` (硬子).

Small state helpers shared by the claims and the own turn
(:func:`_tiles_left`, :func:`_add_meld`, the chain links :func:`_chain_reset`
and :func:`_chain_kong`) and the decorator of the inlined step helpers
(``_inline_kernel``) are here too.

Decisions (engine side; each cites its rule)
--------------------------------------------
- E1 (K-3.1): the dealer's 14th tile (``wall[52]``) counts as the dealer's
  first draw: a self-draw win on it is allowed, and K-2.5 applies to it.
- J2 (J-4.2 "ready"): ready = at least one kind completes the hand of which
  the seat holds fewer than four (D3 of J-5); the hard question is
  asked only of ready seats, once (declining is final).  A dealer that made
  a concealed kong before its first discard may still declare.
"""

from __future__ import annotations

import numpy as np
from numba import literal_unroll, njit

from caishen.sim.engine.layout import (
    SEAT_FIELDS,
    TABLE_FIELDS,
    WIN_ARRAY_FIELDS,
    WIN_SCALAR_FIELDS,
    DECL_NONE,
    HARD_STAGE_DEAL,
    N_SEATS,
    N_TILES,
    PH_DONE,
    PH_HARD,
    PH_TURN,
)
from caishen.sim.hand import _shanten
from caishen.sim.rng import _rng_seed, _rng_shuffle
from caishen.sim.rules.kernels import _joker_forcing_shape, _is_hard_ready, _own_copies, _single_wait_discards, _win_kernel
from caishen.sim.tiles import MELD_NONE


#: decorator of the engine's internal step helpers: numba inlines them into
#: their callers (``_step``, ``_reset``), so that the state, params and hand
#: tables cross no call boundary inside a step (each boundary costs reference
#: counting on every array argument); ~1.7x faster batch play, longer compile (each
#: call site is a copy: a large helper reached from many places, such as the win test of a draw,
#: :func:`_self_draw_test`, stays a kernel)
_inline_kernel = njit(cache=True, inline="always")


@njit(cache=True, inline="always")
def _tiles_left(st):
    return st.table.tail - st.table.head + 1


@njit(cache=True)
def _fill_wall(wall):
    """Put the 136 tiles (4 of each kind) in kind order into ``wall`` in place."""
    for i in range(N_TILES):
        wall[i] = i // 4


@njit(cache=True)
def _shuffle_wall(st):
    """Fill ``st.wall: uint8[136]`` and shuffle it uniformly with the stream ``st.rng`` (K-1.3)."""
    _fill_wall(st.wall)
    _rng_shuffle(st.rng, st.wall)


@njit(cache=True)
def _seeded_wall(seed, st):
    """Seed ``st.rng`` with ``seed`` and shuffle ``st.wall`` (the wall of a batch's first hand)."""
    _rng_seed(st.rng, seed)
    _shuffle_wall(st)


@_inline_kernel
def _win_eval(st, ep, rp, tabs, s, tile, self_draw, replacement):
    """The rule set's win test for seat ``s`` on ``tile``:
    ``(legal, exponent, flags, joker_links, kong_links)``, the last two the
    chain links the win would count (K-6.5; the record shows them, K-10).

    ``st.hands[s]`` must hold the concealed tiles *before* the winning tile.
    This is the one place where the engine asks the rule set's win kernel,
    the one of code ``ep.win_kernel`` (:func:`caishen.sim.rules.kernels._win_kernel`:
    K-2.4..K-2.6, K-6, K-7.1, or the shape test of J-5.1).
    """
    return _win_kernel(
        ep.win_kernel, st.hands[s], tile, st.meld_type[s], st.meld_kind[s], st.seat[s].n_melds, self_draw,
        replacement, st.seat[s].chain_joker, st.seat[s].chain_kong, rp, tabs,
    )


@_inline_kernel
def _update_tenpai(st, ep, tabs, s):
    """Cache whether seat ``s``'s 3m+1 concealed tiles are ready (shanten <= 0).

    A win needs a complete hand (standard or seven pairs), so only a ready
    hand can win on the next tile: the engine asks the rule set's win kernel
    only for ready seats.  Called whenever a seat's concealed tiles become
    3m+1 (deal, discard, kong before its replacement draw); not after
    discarding the tile just drawn, which gives back the hand it was cached for.
    The shanten itself goes to ``seat.shanten`` (:func:`_declare_options` reads it).
    """
    sh = _shanten(st.hands[s], ep.joker, tabs)
    st.seat[s].shanten = sh
    st.seat[s].ready = 1 if sh <= 0 else 0


@_inline_kernel
def _update_tenpai_discard(st, ep, tabs, s):
    """:func:`_update_tenpai` after seat ``s`` discarded another tile than the one it drew or claimed.

    Its 3m+1 tiles before this turn had a shanten of at least ``seat.shanten``;
    one tile in (drawn or claimed) lowers a shanten by at most one and one
    tile out does not lower it, so the new tiles' is at least ``seat.shanten -
    1``.  While that bound is 1 or more the hand is not ready and
    ``seat.shanten`` keeps the bound (random play: most discards); otherwise the
    shanten is computed.
    ``seat.shanten`` is thus the shanten, or a lower bound of at least 1 (the
    checker's invariant), and ``seat.ready`` always exact.
    """
    lb = st.seat[s].shanten - 1
    if lb >= 1:
        st.seat[s].shanten = lb
        st.seat[s].ready = 0
    else:
        _update_tenpai(st, ep, tabs, s)


@_inline_kernel
def _add_meld(st, s, mtype, kind):
    n = st.seat[s].n_melds
    st.meld_type[s, n] = mtype
    st.meld_kind[s, n] = kind
    st.seat[s].n_melds = n + 1


@njit(cache=True, inline="always")
def _chain_reset(st, s):
    st.seat[s].chain_len = 0
    st.seat[s].chain_joker = 0
    st.seat[s].chain_kong = 0


@njit(cache=True, inline="always")
def _chain_kong(st, s):
    """K-6.5: a kong of any kind is a chain link."""
    st.seat[s].chain_len += 1
    st.seat[s].chain_kong += 1


@njit(cache=True)
def _declare_options(st, ep, tabs, s):
    """J-4.1: at the start of seat ``s``'s turn, cache the kinds ``k`` whose
    ``declare <k>`` is legal (after discarding ``k`` a single wait) in
    ``table.declare_kinds``; 0 when the rule set has no 架听 or ``s`` has
    declared already (a declaration stays, J-4.1).

    A plain call (not inlined): :func:`_step` calls it once, when a turn
    begins, which keeps the inlined step small to compile.

    Only a 3m+2 hand of shanten <= 0 has a discard that leaves it ready.  The
    seat's 3m+1 tiles before this turn's tile (drawn or claimed) had a
    shanten of ``seat.shanten`` or more (:func:`_update_tenpai_discard`), and
    one tile lowers a shanten by at most one (a pong sets aside a complete
    triplet, which lowers it no further): from 2 up nothing is left to test,
    below :func:`_single_wait_discards` tests the 3m+2 tiles' shanten first."""
    bits = 0
    if ep.declare != 0 and st.seat[s].decl == DECL_NONE and st.seat[s].shanten <= 1:
        bits = _single_wait_discards(
            st.hands[s], st.meld_type[s], st.meld_kind[s], st.seat[s].n_melds, tabs, st.work
        )
    st.table.declare_kinds = bits


@njit(cache=True)
def _hard_ready(st, tabs, s):
    """J-4.2: seat ``s``'s 3m+1 concealed tiles are ready: at least one kind
    completes them of which ``s`` holds fewer than four (D3 of J-5)."""
    if st.seat[s].ready == 0:
        return False
    own = st.work[2]
    _own_copies(st.hands[s], st.meld_type[s], st.meld_kind[s], st.seat[s].n_melds, own)
    return _is_hard_ready(st.hands[s], own, tabs, st.work[1])


@njit(cache=True)
def _next_hard_candidate(st, tabs, s):
    """The next non-dealer after seat ``s`` (turn order, before the dealer) whose dealt tiles are ready, or -1."""
    dealer = st.table.dealer
    for i in range(1, N_SEATS):
        p = (s + i) % N_SEATS
        if p == dealer:
            return -1
        if _hard_ready(st, tabs, p):
            return p
    return -1


@_inline_kernel
def _ask_hard(st, s, stage):
    """Enter PH_HARD: seat ``s`` declares or declines 硬子 (J-4.2)."""
    st.table.phase = PH_HARD
    st.table.hard_stage = stage
    st.table.to_act = s
    st.seat[s].hard_offer = 1


@njit(cache=True, inline="always")
def _set_declaration(st, s, decl, turn):
    st.seat[s].decl = decl
    st.seat[s].decl_turn = turn
    st.seat[s].decl_melds = st.seat[s].n_melds


@njit(cache=True)
def _zero_counters(st):
    """Zero every field of ``st.table`` and of each ``st.seat[s]`` (the named counters and flags)."""
    for s in range(N_SEATS):
        row = st.seat[s]
        for name in literal_unroll(SEAT_FIELDS):
            row[name] = 0
    for name in literal_unroll(TABLE_FIELDS):
        st.table[name] = 0


@njit(cache=True)
def _zero_wins(wins):
    """Zero every field of each win context of ``wins`` (``WIN_DTYPE[:]``: the state's or a record's)."""
    for j in range(wins.shape[0]):
        x = wins[j]
        for name in literal_unroll(WIN_SCALAR_FIELDS):
            x[name] = 0
        for name in literal_unroll(WIN_ARRAY_FIELDS):
            x[name][:] = 0


@njit(cache=True)
def _copy_state(dst, src):
    """Copy the game state record ``src`` into ``dst`` (every field, scratch included; the search bot's
    determinizations, the oracle's and the 飘 study's counterfactual rollouts)."""
    dst.wall[:] = src.wall
    dst.hands[:] = src.hands
    dst.meld_type[:] = src.meld_type
    dst.meld_kind[:] = src.meld_kind
    dst.discards[:] = src.discards
    dst.dflags[:] = src.dflags
    dst.circle[:] = src.circle
    dst.mask[:] = src.mask
    dst.legal[:] = src.legal
    dst.seat[:] = src.seat
    dst.table = src.table
    dst.queue[:] = src.queue
    dst.tmp[:] = src.tmp
    dst.counts[:] = src.counts
    dst.wins[:] = src.wins
    dst.work[:] = src.work
    dst.rng[:] = src.rng


@njit(cache=True)
def _reset(st, ep, rp, tabs, dealer):
    """Start a hand from ``st.wall`` (already filled) with ``dealer``; in place.

    K-3.1: seat ``dealer + i`` gets ``wall[13 i : 13 i + 13]``, the dealer's
    14th tile is ``wall[52]`` and counts as the dealer's first draw; normal
    draws continue at 53, replacement draws start at 135 (K-1.3).
    """
    st.hands[:] = 0
    st.meld_type[:] = MELD_NONE
    st.meld_kind[:] = 0
    st.discards[:] = 0
    st.dflags[:] = 0
    _zero_counters(st)
    st.queue[:] = 0
    st.tmp[:] = 0
    st.circle[:] = 0
    st.mask[:] = 0
    st.legal[:] = 0
    _zero_wins(st.wins)
    for i in range(N_SEATS):
        s = (dealer + i) % N_SEATS
        st.seat[s].swap_forbid = -1
        st.seat[s].decl_turn = -1
        for j in range(13):
            st.hands[s, st.wall[13 * i + j]] += 1
    st.table.dealer = dealer
    st.table.head = 52
    st.table.tail = N_TILES - 1
    st.table.tile = -1
    st.table.src = -1
    st.table.winner = -1
    st.table.win_type = -1
    st.table.discarder = -1
    st.table.win_tile = -1
    for s in range(N_SEATS):
        _update_tenpai(st, ep, tabs, s)
    _draw(st, ep, rp, tabs, dealer, np.bool_(False))
    if ep.hard != 0:  # J-4.2: ready non-dealers declare 硬子 before the dealer's first discard
        p = _next_hard_candidate(st, tabs, dealer)
        if p >= 0:
            _ask_hard(st, p, HARD_STAGE_DEAL)
    if ep.declare != 0 and st.table.phase == PH_TURN:
        _declare_options(st, ep, tabs, dealer)


@_inline_kernel
def _draw(st, ep, rp, tabs, s, replacement):
    """Seat ``s`` draws from the head (or the tail for a kong replacement, K-5.4).

    Inlined into its callers (the normal draw, :func:`_draw_next`, is on almost every turn's path); the
    tests of a ready seat's draw (:func:`_self_draw_test`, with the win test) stay one plain kernel, so
    that the copies are small, and the rare replacement draws call one copy, :func:`_replacement_draw`."""
    if replacement:
        t = st.wall[st.table.tail]
        st.table.tail -= 1
    else:
        t = st.wall[st.table.head]
        st.table.head += 1
    st.seat[s].circle_open = 0  # K-9.2 the circle ends at the 飘 player's next draw
    st.seat[s].passed_pong = 0  # K-4.4 until their own next turn
    st.seat[s].passed_win = 0
    st.seat[s].swap_forbid = -1
    st.table.turn = s
    st.table.to_act = s
    st.table.phase = PH_TURN
    st.table.drawn = t
    st.table.replacement = 1 if replacement else 0
    st.table.just_claimed = 0
    st.table.tile = -1
    st.table.src = -1
    if st.seat[s].ready != 0:  # only a ready hand can be 爆头 or win
        # the tile as int64, as the claims pass it: one compiled copy of the win kernels
        _self_draw_test(st, ep, rp, tabs, s, np.int64(t), replacement)
    else:
        st.table.can_self_draw = 0
        st.table.self_draw_exp = 0
        st.table.self_draw_flags = 0
        st.table.self_draw_joker_links = 0
        st.table.self_draw_kong_links = 0
    st.hands[s, t] += 1


@njit(cache=True)
def _replacement_draw(st, ep, rp, tabs, s):
    """Seat ``s`` draws a kong's replacement from the tail (K-5.4): :func:`_draw` as a plain call."""
    _draw(st, ep, rp, tabs, s, np.bool_(True))


@njit(cache=True)
def _self_draw_test(st, ep, rp, tabs, s, t, replacement):
    """The K-2.5 force and the self-draw win test of ready seat ``s`` drawing ``t`` (before it joins the
    hand): sets ``seat.force_joker`` and ``table.can_self_draw`` with the win's ``self_draw_*`` answer."""
    joker = ep.joker
    # K-2.5 (E3): 爆头 shape before the draw + a 财神 drawn -> no self-draw win
    # until the seat has discarded a 财神 (kongs meanwhile do not lift it)
    force = st.seat[s].force_joker
    legal = False
    e = 0
    f = 0
    lp = 0
    lk = 0
    if force == 0 and joker >= 0 and ep.force_joker_shape != 0 and t == joker:
        # K-2.5 (D3: 七子爆头 shape too)
        if _joker_forcing_shape(st.hands[s], st.seat[s].n_melds, tabs):
            force = 1
            st.seat[s].force_joker = 1
    if force == 0:
        legal, e, f, lp, lk = _win_eval(st, ep, rp, tabs, s, t, np.bool_(True), replacement)
    st.table.can_self_draw = 1 if legal else 0
    st.table.self_draw_exp = e
    st.table.self_draw_flags = f
    st.table.self_draw_joker_links = lp
    st.table.self_draw_kong_links = lk


@_inline_kernel
def _draw_next(st, ep, rp, tabs, s):
    """Normal draw for seat ``s``, or 流局 when only the reserve is left (K-3.4)."""
    if _tiles_left(st) <= ep.reserve:
        _end_exhausted(st)
    else:
        _draw(st, ep, rp, tabs, s, np.bool_(False))


@_inline_kernel
def _end_exhausted(st):
    """流局 (K-3.4): nobody pays (K-8.4)."""
    st.table.phase = PH_DONE
    st.table.to_act = -1
    st.table.tile = -1
    st.table.winner = -1
    st.table.win_type = -1
    st.table.discarder = -1


@_inline_kernel
def _begin_claimed_turn(st, s):
    """After a chow / pong: seat ``s`` must discard without drawing (K-4.1)."""
    st.table.turn = s
    st.table.to_act = s
    st.table.phase = PH_TURN
    st.table.drawn = -1
    st.table.replacement = 0
    st.table.just_claimed = 1
    st.table.can_self_draw = 0
    st.table.tile = -1
    st.table.src = -1
