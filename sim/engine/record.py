"""The per-hand record: the batch matrix, its columns, dealer rotation and the rule set's columns.

:func:`_write_record` fills one row of the batch kernel's ``int64`` matrix
(``N_RECORD`` wide): the records contract's columns (``RECORD_COLUMNS``,
records.md; K-10 says what a K-rules hand's record shows), the engine's
extra columns (``ENGINE_EXTRA_COLUMNS``: the J-9 facts the engine knows)
and the win contexts (``WX_*`` rows at ``WINS_OFFSET``).
:func:`batch_columns` turns a batch matrix into the rule set's record
columns (a rule set scored after the hand names its finisher,
``RuleSet.finish``).  :func:`_next_dealer` and :func:`_next_streak` carry a
match from one hand to the next (K-3.3, J-2.3, J-2.4).

Decisions (engine side; each cites its rule)
--------------------------------------------
- E10 (K-3.2, K-3.3): a match is ``match_len`` hands (16 by default); its
  first dealer is seat 0; the next dealer follows ``dealer_rotation``.
- J8 (J-2.2..J-2.4): a match's first dealer is random (the batch RNG); the
  streak counts kept deals inside a match (0 at a new match and a new
  dealer); :meth:`Game.reset` takes ``streak``.
"""

from __future__ import annotations

import numpy as np
from numba import njit

from caishen.sim.engine.deal import _tiles_left
from caishen.sim.rules import base as _rulesets
from caishen.sim.rules.records import (  # noqa: F401  (the batch matrix's layout: the records contract)
    ENGINE_EXTRA_COLUMNS,
    EXTRA_INDEX,
    EXTRA_OFFSET,
    N_RECORD,
    RECORD_COLUMNS,
    RECORD_INDEX,
    WINS_OFFSET,
)
from caishen.sim.engine.layout import (
    MAX_WINNERS,
    N_SEATS,
    N_WX,
    ROTATION_WINNER_STAYS,
    WX_FIRST_TURN,
    WX_REPLACEMENT,
)


@njit(cache=True)
def _write_record(st, ep, hand, row):
    """Fill ``row: int64[N_RECORD]`` with the finished hand's record (records.md),
    the engine's extra columns and the win contexts."""
    w = st.table.winner
    row[0] = hand
    row[1] = st.table.match_hand
    row[2] = st.table.dealer
    row[3] = w
    row[4] = st.table.winners_mask
    row[5] = st.table.win_type
    row[6] = st.table.discarder
    row[7] = st.table.exponent if w >= 0 else 0
    row[8] = st.table.flags if w >= 0 else 0
    # K-9.4 / K-10: the chain links counted in the winning exponent (the win
    # kernel's answer), not the winner's live chain
    row[9] = st.seat[w].win_joker_links + st.seat[w].win_kong_links if w >= 0 else 0
    row[10] = st.seat[w].win_joker_links if w >= 0 else 0
    row[11] = st.seat[w].win_kong_links if w >= 0 else 0
    joker = ep.joker
    for s in range(N_SEATS):
        row[12 + s] = st.seat[s].score
        row[16 + s] = st.hands[s, joker] if joker >= 0 else 0
        row[20 + s] = st.seat[s].joker_discards
        row[24 + s] = st.seat[s].circle_failed
    row[28] = st.table.turns
    row[29] = _tiles_left(st)
    o = EXTRA_OFFSET
    n_wins = st.table.n_wins if w >= 0 else 0
    row[o] = st.table.streak
    row[o + 1] = st.table.win_tile if w >= 0 else -1
    row[o + 2] = st.wins[0, WX_FIRST_TURN] if n_wins > 0 else 0
    row[o + 3] = st.wins[0, WX_REPLACEMENT] if n_wins > 0 else 0
    row[o + 4] = n_wins
    for s in range(N_SEATS):
        row[o + 5 + s] = st.seat[s].decl
        row[o + 9 + s] = st.seat[s].decl_turn
        row[o + 13 + s] = st.seat[s].hard_offer
        row[o + 17 + s] = st.seat[s].n_passed_win
    for j in range(MAX_WINNERS):
        for f in range(N_WX):
            row[WINS_OFFSET + j * N_WX + f] = st.wins[j, f] if j < n_wins else 0


@njit(cache=True)
def _next_dealer(ep, dealer, winners_mask):
    """K-3.3: a 流局 keeps the dealer; a win passes the deal on (or keeps it under winner_stays)."""
    if winners_mask == 0:
        return dealer
    if ep.rotation == ROTATION_WINNER_STAYS and (winners_mask >> dealer) & 1:
        return dealer
    return (dealer + 1) % N_SEATS


@njit(cache=True)
def _next_streak(dealer, next_dealer, streak):
    """J-2.4: the streak ``k`` of the next hand: one more when the dealer keeps the deal, else 0."""
    return streak + 1 if next_dealer == dealer else 0


def batch_columns(name: str, rules, rec: np.ndarray) -> dict[str, np.ndarray]:
    """The per-hand record columns of a batch matrix ``rec: int64[n, N_RECORD]`` of rule set ``name``.

    A rule set with a record finisher (its ``RuleSet.finish``, e.g.
    one scored after the hand, J-9) returns its own
    columns; the others the :data:`RECORD_COLUMNS` (records.md; K-10).
    Raises ``ValueError`` for an unknown rule set.
    """
    finish = _rulesets.get(name).finisher()
    if finish is None:
        return {c: rec[:, i].astype(dt) for i, (c, dt) in enumerate(RECORD_COLUMNS)}
    return finish(rules, rec)
