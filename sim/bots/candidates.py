"""Per-candidate features: every legal action of the seat to act, described as the strong bots see it.

The tuned bot (:mod:`caishen.sim.bots.tuned`) and the learned bots
(:mod:`caishen.sim.bots.learned`) decide by scoring each candidate action
on a few hand-reading features (shanten after the discard, live effective
tiles, the danger of dealing in, ...).  This module computes those features
for **every** legal action of the seat to act, in the engine's action order,
as the feature set ``candidates`` v1 (:data:`caishen.sim.bots.features.CANDIDATE_V1`,
36 values per candidate), beside the seat's context (``candidates-context``
v1, :data:`caishen.sim.bots.features.CANDIDATE_CONTEXT_V1`, 84 values).  It is
the env's ``observation="candidates"`` (:mod:`caishen.envs.observation`) and
the input of the ``cand-mlp`` learned bot, which plays it inside the kernels:
one encoder for both, so a network trained on the env plays the same
features in every command.

=========================  =====================================================
candidate                  features filled (beside ``type``, ``held``, ``seen``)
=========================  =====================================================
``discard k``,             the 12 discard features of ``action`` v1 (the tuned
``declare k``              bot's, :func:`caishen.sim.bots.tuned._discard_features`,
                           scaled as the learned bot scales them),
                           ``shanten_gap``, ``danger_seat``
``kong_concealed t``,      ``shanten`` (of the hand left by the kong),
``kong_added t``           ``shanten_gap``
``chow_*``, ``pong``,      the 5 claim features of ``action`` v1 (the tuned bot's
``kong_exposed``           :func:`caishen.sim.bots.tuned._claim_linear` inputs)
``win``, ``pass``,         none
``hard_*``
=========================  =====================================================

Everything is computed from what the seat may see: its own hand, every
discard and exposed meld, meld counts, declarations, the tiles drawn
(``caishen.sim.bots.policies``' live counts and threat model); never the
other hands, concealed kong kinds or the wall.  The context is computed from
the seat's planes (:func:`caishen.sim.bots.features._encode`) alone, so an
env computes the final observation of an ended hand from its final planes
with the same kernel (:func:`_context_from_planes`).

Scratch: ``work`` is the bots' (:func:`caishen.sim.bots.policies.new_work`); a
call allocates nothing.
"""

from __future__ import annotations

import numpy as np
from numba import njit

from caishen.sim.bots.features import (
    CANDIDATE_TYPES,
    FEATURE_SETS,
    MAX_CANDIDATES,
    P_HAND,
    _encode,
    context_tables,
)
from caishen.sim.bots.policies import (
    _PPM,
    _T_SEEN,
    _W_AFTER,
    _W_EFF,
    _W_LIVE,
    _W_TMP,
    _claim_shanten,
    _live_counts,
    _scratch,
    _threats,
    _unsafe,
    _wall_gone,
)
from caishen.sim.bots.tuned import _discard_features
from caishen.sim.effective import _effective_each, _shanten_each_discard
from caishen.sim.engine import (
    A_CHOW_HIGH,
    A_CHOW_LOW,
    A_DECLARE,
    A_DISCARD,
    A_KONG_ADDED,
    A_KONG_CONCEALED,
    A_KONG_EXPOSED,
    A_PONG,
    N_ACTIONS,
    N_KINDS,
    N_SEATS,
    PH_DONE,
    PH_TURN,
)
from caishen.sim.hand import _shanten

__all__ = ["N_CANDIDATE", "N_CONTEXT", "MAX_CANDIDATES", "candidate_type", "new_candidate_scratch"]

#: features per candidate (``candidates`` v1) and of the context (``candidates-context`` v1)
N_CANDIDATE = FEATURE_SETS["candidates"].rows
N_CONTEXT = FEATURE_SETS["candidates-context"].rows
_IN = FEATURE_SETS["candidates"].first_input
X_TYPE = _IN["type"]
X_ACTION = _IN["shanten"]  # the 17 ``action`` v1 features from here
X_GAP = _IN["shanten_gap"]
X_HELD = _IN["held"]
X_SEEN = _IN["seen"]
X_DANGER_SEAT = _IN["danger_seat"]
N_TYPES = len(CANDIDATE_TYPES)
_N_CTX_V1 = FEATURE_SETS["context"].rows
_BIG = 99
assert N_CANDIDATE == X_DANGER_SEAT + N_SEATS - 1 and X_ACTION == X_TYPE + N_TYPES


def candidate_type(action: int) -> int:
    """The index in :data:`caishen.sim.bots.features.CANDIDATE_TYPES` of an action of the engine's layout."""
    return _type_of(int(action))


@njit(cache=True, inline="always")
def _type_of(a):
    """The candidate type of action ``a`` (``discard``, ``declare``, both kongs: by its block of 34;
    then one type per claim action, in the engine's order)."""
    if a < A_CHOW_LOW:
        return a // N_KINDS
    return 4 + (a - A_CHOW_LOW)


def new_candidate_scratch() -> tuple:
    """``(planes: uint8[76, 34], rows, cols, scale)``: the scratch planes and the ``context`` tables
    (:func:`caishen.sim.bots.features.context_tables`) that :func:`_context_from_planes` reads."""
    rows, cols, scale = context_tables()
    return (np.zeros((FEATURE_SETS["planes"].rows, N_KINDS), np.uint8), rows, cols, scale)


@njit(cache=True)
def _context_from_planes(x, joker, tabs, rows, cols, scale, out):
    """Fill ``out[:84]`` with the ``candidates-context`` v1 of the seat whose planes are ``x: uint8[>= 76,
    34]``: ``out[j] = x[rows[j], cols[j]] * scale[j]`` (the ``context`` set), then the own shanten from the
    ``hand`` row.  Writes ``out`` only."""
    for j in range(rows.shape[0]):
        out[j] = x[rows[j], cols[j]] * scale[j]
    n = 0
    for k in range(N_KINDS):
        n += x[P_HAND, k]
    s = _shanten(x[P_HAND], joker, tabs) if n > 0 else 8
    out[_N_CTX_V1] = min(s + 1, 8) / 8.0


@njit(cache=True)
def _encode_context(st, seat, joker, tabs, cs, out):
    """``candidates-context`` v1 of ``seat`` into ``out[:84]``, through the scratch planes of ``cs``
    (:func:`new_candidate_scratch`)."""
    _encode(st, seat, joker, cs[0])
    _context_from_planes(cs[0], joker, tabs, cs[1], cs[2], cs[3], out)


@njit(cache=True)
def _encode_candidates(st, ep, tabs, work, cand, acts):
    """Fill ``cand: float[>= n, 36]`` (rows ``0..n-1``, the rest zeroed) and ``acts: int64[40]`` (-1 past
    ``n``) with the candidates of the seat to act (module docstring), one per legal action in the
    engine's order; returns ``n`` (0 when the hand is over).  Needs ``st.mask`` (``_legal_mask``).
    ``work``: the bots' scratch.  Reads only what the seat to act may see."""
    for i in range(cand.shape[0]):
        for j in range(cand.shape[1]):
            cand[i, j] = 0.0
        acts[i] = -1
    phase = st.table.phase
    if phase == PH_DONE:
        return 0
    mask = st.mask
    s = st.table.to_act
    h = st.hands[s]
    joker = ep.joker
    gone = _wall_gone(st) / 70.0
    live = work[_W_LIVE]
    after = work[_W_AFTER]
    row = work[_W_TMP]
    best = np.int64(_BIG)  # not a literal: _discard_features compiles once
    base = pong = kong = c0 = c1 = c2 = 0
    if phase == PH_TURN:
        _shanten_each_discard(h, joker, tabs, after, _scratch(work))
        for k in range(N_KINDS):
            if (mask[A_DISCARD + k] or mask[A_DECLARE + k]) and after[k] < best:
                best = after[k]
        _live_counts(st, s, live)
        _threats(st, ep, s, row)
        want = np.int64(0)
        for k in range(N_KINDS):
            if (mask[A_DISCARD + k] or mask[A_DECLARE + k]) and after[k] <= best + 1:
                want |= np.int64(1) << k
        _effective_each(h, joker, tabs, after, want, live, _scratch(work), work[_W_EFF])
    else:
        base, pong, kong, c0, c1, c2 = _claim_shanten(st, ep, tabs, mask, work)
        _live_counts(st, s, live)
    opens = 1.0 if st.seat[s].n_melds == 0 else 0.0
    tile = st.table.tile
    n = 0
    for a in range(N_ACTIONS):
        if not mask[a] or n >= acts.shape[0]:
            continue
        x = cand[n]
        acts[n] = a
        x[X_TYPE + _type_of(a)] = 1.0
        kind = -1
        if a < A_KONG_CONCEALED:  # a discard or a declare of k
            k = a % N_KINDS
            kind = k
            f = _discard_features(k, best, joker, tabs, st, live, row, gone, mask, work, np.bool_(True), np.bool_(True))
            o = X_ACTION
            x[o] = f[0]
            x[o + 1] = 0.1 * f[1]
            x[o + 2] = f[2]
            x[o + 3] = f[2] * f[3]
            x[o + 4] = f[2] * f[4]
            x[o + 5] = f[5]
            x[o + 6] = f[6]
            x[o + 7] = f[7] / 7.0
            x[o + 8] = f[8] / 14.0
            x[o + 9] = f[9]
            x[o + 10] = f[10]
            x[o + 11] = f[11]
            x[X_GAP] = f[0] - best
            for r in range(1, N_SEATS):
                p = (s + r) % N_SEATS
                if row[p] > 0:
                    x[X_DANGER_SEAT + r - 1] = 10.0 * row[p] * (1.0 / _PPM) * _unsafe(k, joker, live[k],
                                                                                    row[_T_SEEN + p])
        elif a < A_CHOW_LOW:  # a kong of t
            t = a % N_KINDS
            kind = t
            if a < A_KONG_ADDED:
                h[t] -= 4
                sh = _shanten(h, joker, tabs)
                h[t] += 4
            else:
                sh = after[t]
            x[X_ACTION] = sh
            x[X_GAP] = sh - best
        elif a <= A_KONG_EXPOSED:  # a claim of the tile on offer
            kind = tile
            if a == A_PONG:
                left = pong
            elif a == A_KONG_EXPOSED:
                left = kong
            elif a == A_CHOW_LOW:
                left = c0
            elif a == A_CHOW_HIGH:
                left = c2
            else:
                left = c1
            o = X_ACTION + 12
            x[o] = 1.0
            x[o + 1] = base - left
            x[o + 2] = opens
            x[o + 3] = 1.0 if a >= A_PONG else 0.0
            x[o + 4] = gone
        if kind >= 0:
            x[X_HELD] = h[kind] / 4.0
            x[X_SEEN] = (4 - live[kind]) / 4.0
        n += 1
    return n
