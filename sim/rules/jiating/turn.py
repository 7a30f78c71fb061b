"""Jiating (架听) kernels that shape the engine's turns: the win test and the single wait of 架听.

The engine (:mod:`caishen.sim.engine`) calls these where the rule set decides
something during play (binding spec ``shared/rules/jiating.md``):

- :func:`_evaluate_win` (J-5.1): a Jiating win is legal on any complete
  hand -- standard (4 sets + a pair, melds included) or seven pairs (no
  melds); no other condition.  It has the signature of
  ``caishen.sim.rules.kaihua._evaluate_win`` so that the engine calls either one at
  the same place (``ep.win_kernel``); exponent, flags and counted chain
  links are 0 because Jiating's patterns and points are computed after the
  hand by the scoring kernels of :mod:`caishen.sim.rules.jiating.kernels`.
- :func:`_single_wait_discards` (J-4.1): the discards after which a hand
  waits on exactly one kind, i.e. the kinds ``k`` for which
  ``declare <k>`` (discard ``k`` and declare 架听) is legal.

"Waits" are read as the scorer reads them for P02 / P27 / P28 (decision D3
of :mod:`caishen.sim.rules.jiating`): the kinds that complete the 3m+1 concealed
tiles (standard or seven pairs), without kinds whose four copies the
player already holds in hand and melds.  So a hand that may declare 架听 is
exactly a hand that the scorer counts as a single wait.

Kernels take plain arrays (``uint8[34]`` counts, ``int8[4]`` meld rows) and
scratch rows; they allocate nothing.  No validation (private kernels).
"""

from __future__ import annotations

import numpy as np
from numba import njit

from caishen.sim.hand import _add_meld_tiles, _changes_compact, _is_win, _near, _shanten
from caishen.sim.tiles import MELD_NONE

N_KINDS = 34
#: no joker in Jiating (J-1.1); passed as ``np.int64(NO_JOKER)``, not a literal, so the hand kernels compile
#: once for both rule sets (a literal -1 would be a specialization of its own)
NO_JOKER = -1


@njit(cache=True)
def _evaluate_win(concealed, win_tile, meld_types, meld_kinds, n_melds, self_draw, replacement_draw,
                  chain_joker, chain_kong, params, tabs):
    """J-5.1: is ``concealed + win_tile`` a complete hand?  ``(legal, 0, 0, 0, 0)``.

    ``concealed``: int array[34], the concealed tiles *before* the winning
    tile (``13 - 3 * n_melds``); changed temporarily and restored.  The
    other arguments match ``caishen.sim.rules.kaihua._evaluate_win`` and are not
    used: any complete standard or seven-pairs hand wins, by self-draw, on a
    discard or on a robbed added kong (J-5.2); seven pairs needs 14
    concealed tiles, so it is never read with melds.  The return has the
    shape of Kaihua's ``(legal, exponent, flags, joker_links, kong_links)``:
    exponent, flags and counted chain links are 0 (Jiating has no chain;
    its points are computed after the hand).
    """
    concealed[win_tile] += 1
    ok = _is_win(concealed, np.int64(NO_JOKER), tabs)
    concealed[win_tile] -= 1
    return ok, 0, 0, 0, 0


@njit(cache=True)
def _own_copies(hand, meld_types, meld_kinds, n_melds, own):
    """``own[k]``: copies of kind ``k`` in ``hand`` and in the melds (kongs 4, pongs 3, chows 1 each)."""
    for k in range(N_KINDS):
        own[k] = hand[k]
    for i in range(n_melds):
        if meld_types[i] != MELD_NONE:
            _add_meld_tiles(own, meld_types[i], meld_kinds[i])


@njit(cache=True)
def _waits(hand13, own, tabs, draw, limit):
    """Kinds that complete the 3m+1 ``hand13`` and of which the player holds fewer than 4 (D3), counted up
    to ``limit``.

    ``own``: copies held in hand and melds (:func:`_own_copies`); ``draw``: scratch ``int64[34]``, left
    with the shanten after drawing each kind tried (-1 = complete), 99 for the others.  Only kinds next
    to a held one are tried (:func:`caishen.sim.hand._near`; no joker in Jiating), the count stops at
    ``limit`` (:func:`caishen.sim.hand._changes_compact`).
    """
    held = np.int64(0)
    drawable = np.int64(0)
    for t in range(N_KINDS):
        held |= np.int64(hand13[t] != 0) << t
        drawable |= np.int64(own[t] < 4) << t
        draw[t] = 99
    return _changes_compact(hand13, np.int64(NO_JOKER), tabs, np.int64(1), _near(held) & drawable, limit, draw)


@njit(cache=True)
def _n_waits(hand13, own, tabs, draw):
    """The number of kinds that complete the 3m+1 ``hand13`` and of which the player holds fewer than 4
    (D3, the scorer's P02 / P27 / P28); ``draw`` as :func:`_waits` (-1: a wait)."""
    return _waits(hand13, own, tabs, draw, np.int64(N_KINDS))


@njit(cache=True)
def _is_hard_ready(hand13, own, tabs, draw):
    """J-4.2 (D3): does some kind complete the 3m+1 ``hand13`` of which the player holds fewer than 4?
    :func:`_waits` up to the first one."""
    return _waits(hand13, own, tabs, draw, np.int64(1)) > 0


@njit(cache=True)
def _single_wait_discards(hand, meld_types, meld_kinds, n_melds, tabs, work):
    """J-4.1: bitmask over kinds ``k`` held in the 3m+2 ``hand`` such that after
    discarding one ``k`` the hand waits on exactly one kind (D3).

    ``work``: scratch ``int64[3, 34]`` (rows: shanten after each discard,
    shanten after each draw, own copies).  A hand of shanten > 0 has no such discard (the
    shanten of 3m+2 tiles is the least shanten after one discard), so the
    usual cost is one shanten; otherwise only the discards that leave the
    hand ready (shanten 0) are examined further, their waits counted up to
    two (:func:`_waits`).
    """
    if _shanten(hand, np.int64(NO_JOKER), tabs) > 0:
        return 0
    after = work[0]
    draw = work[1]
    own = work[2]
    held = np.int64(0)
    for t in range(N_KINDS):
        held |= np.int64(hand[t] != 0) << t
    _changes_compact(hand, np.int64(NO_JOKER), tabs, np.int64(-1), held, np.int64(N_KINDS), after)
    bits = 0
    first = True
    for k in range(N_KINDS):
        if hand[k] == 0 or after[k] != 0:
            continue
        if first:
            _own_copies(hand, meld_types, meld_kinds, n_melds, own)
            first = False
        hand[k] -= 1
        own[k] -= 1
        n = _waits(hand, own, tabs, draw, np.int64(2))  # up to two: one is what J-4.1 asks
        own[k] += 1
        hand[k] += 1
        if n == 1:
            bits |= 1 << k
    return bits
