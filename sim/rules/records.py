"""The records contract: the columns of a hand's record, and the batch matrix the engine fills.

A rule set's record of a finished hand is a row of named, typed columns
(``caishen.sim.rules.<name>.records``; rule K-10 says what a Kaihua hand's
record must show).  This module states what every rule set shares and what
the engine and the rule sets agree on:

- the columns every rule set's records have (:data:`COMMON_COLUMNS`,
  :data:`COMMON_TAIL_COLUMNS`, :data:`COMMON_END_COLUMNS`), a rule set's
  whole contract (:func:`record_columns`) and the check of a chunk of
  records against it (:func:`check_chunk`: names, lengths, dtypes,
  zero-sum scores K-8.5);
- the engine's batch matrix (``int64[n, N_RECORD]``, filled by
  :func:`caishen.sim.engine.record._write_record`): its record columns
  (:data:`RECORD_COLUMNS`), the engine's extra columns
  (:data:`ENGINE_EXTRA_COLUMNS`) and the win contexts (``WX_*`` rows at
  :data:`WINS_OFFSET`), which a rule set scored after the hand reads in its
  finisher (``RuleSet.finish``).

The run's own columns and the Parquet files are the play layer's
(:mod:`caishen.sim.selfplay.records`).
"""

from __future__ import annotations

import numpy as np

from caishen.sim.rules import base as _rulesets

N_SEATS = 4
SEATS = range(N_SEATS)

#: columns every rule set's records have (the summary's common part), in contract order
COMMON_COLUMNS: tuple[tuple[str, np.dtype], ...] = (
    ("hand", np.dtype(np.int64)),  # hand index within the chunk (0..n-1)
    ("match_hand", np.dtype(np.int32)),  # index of the hand inside its match
    ("dealer", np.dtype(np.int8)),
    ("winner", np.dtype(np.int8)),  # -1 for a drawn hand (流局); the first winner
    ("winners_mask", np.dtype(np.uint8)),  # bit s set if seat s won
    ("win_type", np.dtype(np.int8)),  # -1 draw, 0 self_draw, 1 discard, 2 robbed_kong
    ("discarder", np.dtype(np.int8)),  # discarder / robbed seat, -1 if none
)
#: columns after the rule-set specific block: scores and the hand's length
COMMON_TAIL_COLUMNS: tuple[tuple[str, np.dtype], ...] = (
    *((f"score_{s}", np.dtype(np.int32)) for s in SEATS),  # score change, sums to zero (K-8.5)
)
COMMON_END_COLUMNS: tuple[tuple[str, np.dtype], ...] = (
    ("turns", np.dtype(np.int16)),  # discards in the hand
    ("tiles_left", np.dtype(np.int16)),  # tiles left in the wall at the end
)


#: winners of one hand at most (several winners on one discard, K-4.3 option / J-3.4)
MAX_WINNERS = 3

# win context: wins[j, WX_*], one row per winner (first winner first), for rule sets scored
# after the hand (Jiating, caishen.sim.rules.jiating.records)
WX_SEAT = 0  #: winning seat
WX_TILE = 1  #: winning tile kind
WX_TYPE = 2  #: WIN_* code
WX_DISCARDER = 3  #: discarder / robbed seat, -1 on a self-draw
WX_DECL = 4  #: the winner's DECL_* declaration
WX_FIRST_TURN = 5  #: 1: the dealer's self-draw on the dealt tiles (天胡, J-5.4)
WX_REPLACEMENT = 6  #: 1: won on a kong replacement draw (P18)
WX_ON_FIRST = 7  #: 1: won on the dealer's first discard (P47 option)
WX_VISIBLE = 8  #: copies of the winning kind the winner could see elsewhere (discards, others' exposed melds; P27)
WX_N_MELDS = 9
WX_MELD_TYPE = 10  #: 4 slots: meld types (caishen.sim.tiles.MELD_*)
WX_MELD_KIND = 14  #: 4 slots: meld kinds
WX_DEALER_READY = 18  #: 1: the dealer was ready right after its first discard (J-4.2 offer; P47 option)
WX_HAND = 19  #: 34 slots: the winner's concealed tiles before the winning tile
N_WX = WX_HAND + 34


#: record columns (records.md) in the order of the batch kernel's int64 matrix
RECORD_COLUMNS = (
    ("hand", np.int64),
    ("match_hand", np.int32),
    ("dealer", np.int8),
    ("winner", np.int8),
    ("winners_mask", np.uint8),
    ("win_type", np.int8),
    ("discarder", np.int8),
    ("exponent", np.int8),
    ("hand_flags", np.int32),  # hand-type FLAG_* bits of the (first) winner (not "flags": pandas.DataFrame.flags)
    ("chain_len", np.int8),  # K-6.5 chain links the (first) winner's exponent counted (K-9.4, K-10)
    ("chain_piao", np.int8),  # ... of which 飘 links (0 unless counted: discard win, piao_requires_baotou)
    ("chain_kong", np.int8),  # ... of which kong links
    ("score_0", np.int32),
    ("score_1", np.int32),
    ("score_2", np.int32),
    ("score_3", np.int32),
    ("caishen_0", np.int8),
    ("caishen_1", np.int8),
    ("caishen_2", np.int8),
    ("caishen_3", np.int8),
    ("piao_0", np.int16),
    ("piao_1", np.int16),
    ("piao_2", np.int16),
    ("piao_3", np.int16),
    ("failed_piao_0", np.int8),
    ("failed_piao_1", np.int8),
    ("failed_piao_2", np.int8),
    ("failed_piao_3", np.int8),
    ("turns", np.int16),
    ("tiles_left", np.int16),
)
#: engine columns after RECORD_COLUMNS in the batch matrix: the J-9 facts the
#: engine knows (Jiating's records, ``caishen.sim.rules.jiating.records``; filled for every rule set)
ENGINE_EXTRA_COLUMNS = (
    ("streak", np.int16),  # J-2.4 the dealer's streak k
    ("win_tile", np.int8),  # -1 on a draw
    ("first_turn", np.int8),  # the first winner won on the dealt tiles (天胡, J-5.4)
    ("replacement", np.int8),  # the first winner won on a kong replacement draw
    ("n_winners", np.int8),  # rows of the win-context block used
    *((f"decl_{s}", np.int8) for s in range(N_SEATS)),  # DECL_* (J-4.1, J-4.2)
    *((f"decl_turn_{s}", np.int16) for s in range(N_SEATS)),  # turns count of the declaring discard, -1
    *((f"hard_offer_{s}", np.int8) for s in range(N_SEATS)),  # 1 if offered 硬子 (J-4.2)
    *((f"passed_win_{s}", np.int16) for s in range(N_SEATS)),  # wins passed (J-3.5)
)
#: column name -> index in the batch matrix
RECORD_INDEX = {name: i for i, (name, _) in enumerate(RECORD_COLUMNS)}
EXTRA_OFFSET = len(RECORD_COLUMNS)
EXTRA_INDEX = {name: EXTRA_OFFSET + i for i, (name, _) in enumerate(ENGINE_EXTRA_COLUMNS)}
#: then MAX_WINNERS rows of the win context (``WX_*``, N_WX each), first winner first
WINS_OFFSET = EXTRA_OFFSET + len(ENGINE_EXTRA_COLUMNS)
#: width of the batch kernel's int64 matrix
N_RECORD = WINS_OFFSET + MAX_WINNERS * N_WX


def record_columns(rules: str) -> tuple[tuple[str, np.dtype], ...]:
    """The contract's ``(name, dtype)`` record columns of rule set ``rules``.

    A registered rule set's own contract (``RuleSet.columns``: Kaihua's
    K-10 columns, Jiating's J-9 columns); a rule set without one (or not
    registered) must still provide the common columns.
    """
    own = _rulesets.get(rules).record_columns() if rules in _rulesets.names() else None
    return own or (*COMMON_COLUMNS, *COMMON_TAIL_COLUMNS, *COMMON_END_COLUMNS)


def check_chunk(cols: dict[str, np.ndarray], rules: str, n_hands: int) -> None:
    """Check one chunk's records against the contract.

    ``cols``: ``dict[str, np.ndarray]``, each of length ``n_hands``.  Every
    contract column of ``rules`` (:func:`record_columns`) must be present
    with its exact dtype; extra columns are allowed (new engine columns pass
    through to the Parquet files).  ``hand`` must be ``0..n_hands-1`` and
    the scores of every row must sum to zero (K-8.5).  Raises ``ValueError``
    naming the first bad column.
    """
    for name, dtype in record_columns(rules):
        if name not in cols:
            raise ValueError(f"chunk records lack the column {name!r} (records contract of {rules!r})")
        a = np.asarray(cols[name])
        if a.dtype != dtype:
            raise ValueError(f"chunk column {name!r} has dtype {a.dtype}, the records contract says {dtype}")
    for name, a in cols.items():
        a = np.asarray(a)
        if a.ndim != 1 or len(a) != n_hands:
            raise ValueError(f"chunk column {name!r} has shape {a.shape}, expected ({n_hands},)")
    if not np.array_equal(cols["hand"], np.arange(n_hands)):
        raise ValueError("chunk column 'hand' is not 0..n-1")
    total = sum(cols[f"score_{s}"].astype(np.int64) for s in SEATS)
    bad = np.flatnonzero(total)
    if len(bad):
        raise ValueError(f"scores do not sum to zero in hand {int(bad[0])} of the chunk (K-8.5): {int(total[bad[0]])}")
