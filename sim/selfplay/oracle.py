"""The oracle of one game state: what the hidden tiles say about the seat to act's decision (training targets only).

One numba kernel, :func:`_oracle_state`, shared by the two places that
train on the simulator's exact hidden state: the envs' ``info["oracle"]``
(:mod:`caishen.envs.oracle`, whose docstring is the labels' table) and the
oracle targets of ``caishen learn``'s labelled states
(:mod:`caishen.sim.selfplay.labels`, ``--aux``).  For the seat to act
(opponents seat-relative: ``r = 0, 1, 2`` is ``+1`` next, ``+2`` opposite,
``+3`` previous):

* ``ready[r]`` and ``waits[r, t]``: the opponent's concealed tiles are
  completed by kind ``t`` (a kind it holds four times is none; a joker
  completes a ready hand, K-2.1);
* on its own turn, ``deal_in[k]``: discarding kind ``k`` now lets an opponent
  win on it (K-7.1, J-3.1), ``deal_to[k, r]`` which ones (J-3.4), and
  ``deal_pts[k]`` what the seat pays (K-8; a rule set scored after the hand,
  J-6, leaves the hand's record for its points kernel instead).

Decided exactly as the engine would: only kinds some opponent waits on are
tried; the state is copied, the discard stepped (``discard <k>``, or
``declare <k>`` where only that is legal), and while the discard is on
offer every opponent offered the win takes it and the others pass (a 硬子
offer is declined, J-4.2).  These read the other seats' concealed tiles:
they are targets, never a policy's input.
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np
from numba import njit

from caishen.sim.engine import (
    A_DECLARE,
    A_DISCARD,
    A_HARD_DECLINE,
    A_PASS,
    A_WIN,
    N_KINDS,
    N_SEATS,
    PH_DONE,
    PH_TURN,
    _copy_state,
    _legal_mask,
    _step,
    _write_record,
)
from caishen.sim.hand import _is_win, _shanten
from caishen.sim.rules.codes import POINTS_ENGINE, WIN_DISCARD

__all__ = ["OracleRow", "new_oracle_row"]

_MAX_CLAIM_STEPS = 16  # claim decisions on one discard at most (three seats asked, a 硬子 offer)


class OracleRow(NamedTuple):
    """One state's oracle (module docstring), filled by :func:`_oracle_state`."""

    deal_in: np.ndarray  #: bool[34]: discarding the kind now deals in
    deal_to: np.ndarray  #: bool[34, 3]: to which opponents
    deal_pts: np.ndarray  #: float32[34]: the points the seat pays (the engine's; 0 for a rule set scored after)
    ready: np.ndarray  #: bool[3]: the opponent is ready
    waits: np.ndarray  #: bool[3, 34]: the kinds that complete its concealed tiles


def new_oracle_row() -> OracleRow:
    """An :class:`OracleRow` of zeros (scratch for one state)."""
    return OracleRow(np.zeros(N_KINDS, np.bool_), np.zeros((N_KINDS, 3), np.bool_), np.zeros(N_KINDS, np.float32),
                     np.zeros(3, np.bool_), np.zeros((3, N_KINDS), np.bool_))


@njit(cache=True)
def _oracle_state(st, ep, rp, tabs, tmp, hb, row, rec, rec_at, n_rec, tag):
    """Fill ``row`` (:class:`OracleRow`) for the seat to act of ``st`` (module docstring; all False/0 once
    the hand is over); ``st.mask`` must be its legal mask.  ``tmp``: a scratch state record; ``hb:
    uint8[34]`` scratch.  A win to be scored after the hand (``ep.points`` not the engine's) leaves its record
    in ``rec[n_rec]`` and ``rec_at[n_rec] = 34 * tag + kind`` while ``rec`` has room.  Returns the new
    ``n_rec``.  Reads ``st`` only."""
    deal_in, deal_to, deal_pts, ready, waits = row
    joker = ep.joker
    for k in range(N_KINDS):
        deal_in[k] = False
        deal_pts[k] = 0.0
        for r in range(3):
            deal_to[k, r] = False
            waits[r, k] = False
    for r in range(3):
        ready[r] = False
    phase = st.table.phase
    if phase == PH_DONE:
        return n_rec
    s = st.table.to_act
    union = np.int64(0)
    for r in range(1, N_SEATS):
        p = (s + r) % N_SEATS
        n = 0
        for t in range(N_KINDS):
            hb[t] = st.hands[p, t]
            n += hb[t]
        if n % 3 != 1 or _shanten(hb, joker, tabs) > 0:  # not ready: no wait (shanten agrees with the waits)
            continue
        for t in range(N_KINDS):
            if hb[t] >= 4:
                continue
            hb[t] += 1
            if _is_win(hb, joker, tabs):
                waits[r - 1, t] = True
                ready[r - 1] = True
                union |= np.int64(1) << t
            hb[t] -= 1
    if phase != PH_TURN or union == 0:
        return n_rec
    for k in range(N_KINDS):
        if not (union >> k) & 1:
            continue
        if st.mask[A_DISCARD + k]:
            a = A_DISCARD + k
        elif st.mask[A_DECLARE + k]:
            a = A_DECLARE + k
        else:
            continue
        _copy_state(tmp, st)
        _step(tmp, ep, rp, tabs, a)
        for _ in range(_MAX_CLAIM_STEPS):
            ph = tmp.table.phase
            if ph == PH_DONE or ph == PH_TURN or tmp.table.src != s:
                break
            _legal_mask(tmp, ep)
            m = tmp.mask
            if m[A_WIN]:
                b = A_WIN
            elif m[A_PASS]:
                b = A_PASS
            elif m[A_HARD_DECLINE]:
                b = A_HARD_DECLINE
            else:
                b = tmp.legal[0]
            _step(tmp, ep, rp, tabs, b)
        sc = tmp.table
        if sc.phase != PH_DONE or sc.win_type != WIN_DISCARD or sc.discarder != s:
            continue
        deal_in[k] = True
        for r in range(1, N_SEATS):
            if (sc.winners_mask >> ((s + r) % N_SEATS)) & 1:
                deal_to[k, r - 1] = True
        if ep.points == POINTS_ENGINE:
            deal_pts[k] = -tmp.seat[s].score
        elif n_rec < rec.shape[0]:
            _write_record(tmp, ep, 0, rec[n_rec])
            rec_at[n_rec] = N_KINDS * tag + k
            n_rec += 1
    return n_rec
