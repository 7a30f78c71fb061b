"""Jiating hands from the engine to J-9 records: every recorded win scored by the numba scorer.

The numba engine plays Jiating's turns (declarations, passed wins, several
winners on one discard, ...) but does not score them: for each hand it
records the context of every win in its per-hand record (``rec[i].wins[j]``,
:data:`caishen.sim.rules.records.WIN_DTYPE`: winner, win tile, win type, discarder, the winner's
concealed tiles before the win, melds with their types, declaration, first
turn, replacement draw, visible copies of the winning kind, the dealer's
first discard).  After the numba call :func:`finish_records` copies the
engine's columns and scores every recorded win in one more numba call
(:func:`caishen.sim.rules.jiating.batch.score_batch`, the kernels of
:mod:`caishen.sim.rules.jiating.kernels`; several winners of one discard each paid by
the discarder, 一炮多响, J-3.4), giving the J-9 record columns
(:data:`COLUMNS`):

- the common columns (hand, match_hand, dealer, winner, winners_mask,
  win_type, discarder), ``streak`` (J-2.4), ``win_tile``, ``first_turn``
  (天胡 context), ``replacement`` (won on a kong replacement draw);
- ``P_s``, ``G_s`` (J-6.1) of each winning seat (0 for the others);
- ``pay_p_w``: what seat ``p`` paid seat ``w`` in this hand (J-6.2..J-6.5);
- ``P01`` .. ``P50``: the points of each pattern in the *first* winner's
  hand (the ``winner`` column; as Kaihua's ``exponent`` / ``hand_flags``), and
  ``patterns_s``: every winning seat's patterns as ``"P01:2,P03:2"`` ("" for
  a seat that did not win), so no winner's patterns are lost;
- ``decl_s`` (0 none, 1 架听 J-4.1, 2 硬子 J-4.2), ``decl_turn_s`` (the
  hand's discard count when the seat declared; 0 for a hard declaration at
  the deal; -1 none), ``hard_offer_s`` (1 if the seat was offered 硬子),
  ``passed_win_s`` (wins the seat passed, J-3.5);
- ``score_s`` (sums to zero, J-6.5), ``turns``, ``tiles_left``.

The case of a win is also available as a dict (:func:`win_cases`, the
``shared/vectors`` format) for inspection, error messages and the tests'
reference scorer (``tests/jiating_reference.py``).
"""

from __future__ import annotations

import numpy as np

from caishen.sim.rules import jiating as _J
from caishen.sim.rules import records as _E  # the per-hand records (the engine fills them)
from caishen.sim.rules.jiating import batch as _batch
from caishen.sim.rules.jiating.batch import DECLARATION_NAMES, WIN_TYPE_NAMES, win_cases  # noqa: F401
from caishen.sim.rules.records import COMMON_COLUMNS, COMMON_END_COLUMNS, COMMON_TAIL_COLUMNS

N_SEATS = 4
SEATS = range(N_SEATS)
PATTERN_IDS = _J.PATTERN_IDS
#: (payer, winner) seat pairs of the ``pay_p_w`` columns
PAY_PAIRS = tuple((p, w) for p in SEATS for w in SEATS if p != w)

#: the J-9 record columns of a Jiating hand, in the contract's order (the common
#: columns are caishen.sim.selfplay.records'; the rule set's ``columns``)
COLUMNS: tuple[tuple[str, np.dtype], ...] = (
    *COMMON_COLUMNS,
    ("streak", np.dtype(np.int16)),  # the dealer's streak k (J-2.4)
    ("win_tile", np.dtype(np.int8)),  # kind of the winning tile, -1 on a draw
    ("first_turn", np.dtype(np.int8)),  # the first winner won on the dealt tiles (天胡, J-5.4)
    ("replacement", np.dtype(np.int8)),  # ... on a kong replacement draw (P18)
    *((f"P_{s}", np.dtype(np.int32)) for s in SEATS),  # P of each winning seat (J-6.1), else 0
    *((f"G_{s}", np.dtype(np.int32)) for s in SEATS),  # G of each winning seat (J-6.1), else 0
    # what seat p paid seat w in this hand (J-6.2..J-6.5)
    *((f"pay_{p}_{w}", np.dtype(np.int32)) for p in SEATS for w in SEATS if p != w),
    # points of each pattern P01..P50 in the first winner's hand (after doubling and exclusions)
    *((f"P{i:02d}", np.dtype(np.int16)) for i in range(1, 51)),
    *((f"patterns_{s}", np.dtype(object)) for s in SEATS),  # "P01:2,P03:2" of each winner, else ""
    *((f"decl_{s}", np.dtype(np.int8)) for s in SEATS),  # 0 none, 1 架听 (J-4.1), 2 硬子 (J-4.2)
    *((f"decl_turn_{s}", np.dtype(np.int16)) for s in SEATS),  # discards made when declared, -1 none
    *((f"hard_offer_{s}", np.dtype(np.int8)) for s in SEATS),  # 1 if offered 硬子
    *((f"passed_win_{s}", np.dtype(np.int16)) for s in SEATS),  # wins passed (J-3.5)
    *COMMON_TAIL_COLUMNS,
    *COMMON_END_COLUMNS,
)

#: columns copied from the engine's records unchanged
_ENGINE_COPIED = (
    "hand", "match_hand", "dealer", "winner", "winners_mask", "win_type", "discarder", "streak", "win_tile",
    "first_turn", "replacement", *(f"{c}_{s}" for c in ("decl", "decl_turn", "hard_offer", "passed_win")
                                   for s in SEATS), "turns", "tiles_left",
)


def finish_records(rules: _J.JiatingRules, rec: np.ndarray) -> dict[str, np.ndarray]:
    """The J-9 record columns (:data:`COLUMNS`) of a batch of Jiating hands.

    ``rec``: the engine's records ``RECORD_DTYPE[n]``; ``rules``:
    the :class:`~caishen.sim.rules.jiating.JiatingRules` the hands were played
    under (points, caps, bonuses).  The engine's columns are copied; every
    recorded win is scored by :func:`caishen.sim.rules.jiating.batch.score_batch` (one
    numba call).  Raises ``RuntimeError`` naming the hand if a recorded win
    is not a legal win for the scorer (the engine and the scorer disagree)
    or the scores do not sum to zero.
    """
    rec = np.asarray(rec)
    scored = _batch.score_batch(rules, rec)
    out: dict[str, np.ndarray] = {}
    for name, dt in COLUMNS:
        if name in _ENGINE_COPIED:
            out[name] = _E.record_column(rec, name).astype(dt, copy=False)
        else:
            out[name] = scored.pop(name)
    if scored:  # pragma: no cover - the scorer's columns and the J-9 contract must be the same set
        raise RuntimeError(f"the scorer returns columns outside the J-9 contract: {sorted(scored)}")
    return out


def parse_patterns(text: str) -> dict[str, int]:
    """``"P01:2,P03:2"`` -> ``{"P01": 2, "P03": 2}`` (a ``patterns_s`` cell; ``""`` -> ``{}``)."""
    if not text:
        return {}
    out = {}
    for item in text.split(","):
        pid, _, pts = item.partition(":")
        out[pid] = int(pts)
    return out
