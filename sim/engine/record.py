"""The per-hand record: its named fields, its columns, dealer rotation and the rule set's columns.

:func:`_write_record` fills one hand's record (``RECORD_DTYPE`` of
:mod:`caishen.sim.rules.records`, a batch is ``RECORD_DTYPE[n]``:
:func:`new_records`): the records contract's columns (``RECORD_COLUMNS``,
records.md; K-10 says what a K-rules hand's record shows; ``rec[i].winner``,
a per-seat ``rec[i].score[s]`` is the column ``score_s``; the generic
fields ``jokers_held``, ``joker_discards``, ``circle_failed``,
``chain_joker`` are columns under the rule set's own names, its
``RuleSet.field_columns``), the engine's
extra columns (``ENGINE_EXTRA_COLUMNS``: the J-9 facts the engine knows)
and the win contexts (``rec[i].wins[j]``, ``WIN_DTYPE``).
:func:`batch_columns` turns a batch of records into the rule set's record
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

from caishen.sim.engine.deal import _tiles_left, _zero_wins
from caishen.sim.rules import base as _rulesets
from caishen.sim.rules.records import (  # noqa: F401  (the record's layout: the records contract)
    ENGINE_EXTRA_COLUMNS,
    RECORD_COLUMNS,
    RECORD_DTYPE,
    engine_columns,
    engine_record_columns,
    new_records,
    record_column,
)
from caishen.sim.engine.layout import (
    MAX_WINNERS,
    N_SEATS,
    ROTATION_WINNER_STAYS,
)


@njit(cache=True)
def _write_record(st, ep, hand, rec):
    """Fill the record ``rec`` (a ``RECORD_DTYPE`` record, e.g. ``recs[h]``) with the finished hand's
    record (records.md), the engine's extra columns and the win contexts; every field is written."""
    w = st.table.winner
    won = w >= 0
    rec.hand = hand
    rec.match_hand = st.table.match_hand
    rec.dealer = st.table.dealer
    rec.winner = w
    rec.winners_mask = st.table.winners_mask
    rec.win_type = st.table.win_type
    rec.discarder = st.table.discarder
    rec.exponent = st.table.exponent if won else 0
    rec.hand_flags = st.table.flags if won else 0
    # K-9.4 / K-10: the chain links counted in the winning exponent (the win
    # kernel's answer), not the winner's live chain
    rec.chain_len = st.seat[w].win_joker_links + st.seat[w].win_kong_links if won else 0
    rec.chain_joker = st.seat[w].win_joker_links if won else 0
    rec.chain_kong = st.seat[w].win_kong_links if won else 0
    joker = ep.joker
    for s in range(N_SEATS):
        rec.score[s] = st.seat[s].score
        rec.jokers_held[s] = st.hands[s, joker] if joker >= 0 else 0
        rec.joker_discards[s] = st.seat[s].joker_discards
        rec.circle_failed[s] = st.seat[s].circle_failed
    rec.turns = st.table.turns
    rec.tiles_left = _tiles_left(st)
    n_wins = st.table.n_wins if won else 0
    rec.streak = st.table.streak
    rec.win_tile = st.table.win_tile if won else -1
    rec.first_turn = st.wins[0].first_turn if n_wins > 0 else 0
    rec.replacement = st.wins[0].replacement if n_wins > 0 else 0
    rec.n_winners = n_wins
    for s in range(N_SEATS):
        rec.decl[s] = st.seat[s].decl
        rec.decl_turn[s] = st.seat[s].decl_turn
        rec.hard_offer[s] = st.seat[s].hard_offer
        rec.passed_win[s] = st.seat[s].n_passed_win
    _zero_wins(rec.wins)
    for j in range(min(n_wins, MAX_WINNERS)):
        rec.wins[j] = st.wins[j]


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
    """The per-hand record columns of the records ``rec: RECORD_DTYPE[n]`` of rule set ``name``.

    A rule set with a record finisher (its ``RuleSet.finish``, e.g.
    one scored after the hand, J-9) returns its own
    columns; the others the :data:`RECORD_COLUMNS` (records.md; K-10),
    the generic fields it names itself under its names (its
    ``RuleSet.field_columns``, :func:`engine_columns`).
    Raises ``ValueError`` for an unknown rule set.
    """
    ruleset = _rulesets.get(name)
    finish = ruleset.finisher()
    if finish is None:
        return engine_record_columns(rec, ruleset.field_column_names())
    return finish(rules, rec)
