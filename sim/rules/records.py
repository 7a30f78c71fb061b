"""The records contract: the columns of a hand's record, and the per-hand record the engine fills.

A rule set's record of a finished hand is a row of named, typed columns
(``caishen.sim.rules.<name>.records``; rule K-10 says what a Kaihua hand's
record must show).  This module states what every rule set shares and what
the engine and the rule sets agree on:

- the columns every rule set's records have (:data:`COMMON_COLUMNS`,
  :data:`COMMON_TAIL_COLUMNS`, :data:`COMMON_END_COLUMNS`), a rule set's
  whole contract (:func:`record_columns`) and the check of a chunk of
  records against it (:func:`check_chunk`: names, lengths, dtypes,
  zero-sum scores K-8.5);
- the engine's per-hand record, a numpy record of named fields
  (:data:`RECORD_DTYPE`; a batch is ``RECORD_DTYPE[n]``, :func:`new_records`,
  filled by :func:`caishen.sim.engine.record._write_record`, read by
  kernels as ``rec[i].winner``, ``rec[i].score[s]``): its record columns
  (:data:`RECORD_COLUMNS`, under the record's generic field names: joker,
  chain, circle; a rule set records some of them under its own names,
  :func:`engine_columns`, as Kaihua's 财神 / 飘 columns), the engine's extra columns
  (:data:`ENGINE_EXTRA_COLUMNS`; a per-seat field ``score (4,)`` is the
  columns ``score_0..score_3``, :func:`record_column`) and the win contexts
  (``wins``: :data:`WIN_DTYPE` ``[MAX_WINNERS]``, ``rec[i].wins[j].tile``), which a
  rule set scored after the hand reads in its finisher (``RuleSet.finish``).

The run's own columns and the Parquet files are the play layer's
(:mod:`caishen.sim.selfplay.records`).
"""

from __future__ import annotations

from collections.abc import Mapping

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

#: the context of one win, for rule sets scored after the hand (Jiating,
#: caishen.sim.rules.jiating.records): ``rec[i].wins[j].<field>`` and the state's ``st.wins[j].<field>``
WIN_DTYPE = np.dtype(
    [
        ("seat", np.int8),               # winning seat
        ("tile", np.int8),               # winning tile kind
        ("type", np.int8),               # WIN_* code
        ("discarder", np.int8),          # discarder / robbed seat, -1 on a self-draw
        ("decl", np.int8),               # the winner's DECL_* declaration
        ("first_turn", np.int8),         # 1: the dealer's self-draw on the dealt tiles (天胡, J-5.4)
        ("replacement", np.int8),        # 1: won on a kong replacement draw (P18)
        ("on_first", np.int8),           # 1: won on the dealer's first discard (P47 option)
        ("visible", np.int8),            # copies of the winning kind the winner could see elsewhere (P27)
        ("n_melds", np.int8),            # the winner's melds
        ("meld_type", np.int8, (4,)),    # their types (caishen.sim.tiles.MELD_*), the first n_melds used
        ("meld_kind", np.int8, (4,)),    # their kinds (a chow's lowest tile)
        ("dealer_ready", np.int8),       # 1: the dealer was ready right after its first discard (J-4.2; P47 option)
        ("hand", np.int8, (34,)),        # the winner's concealed tiles before the winning tile
    ]
)

#: one finished hand's record as the engine writes it (:func:`caishen.sim.engine.record._write_record`):
#: ``rec[i].<field>``; a per-seat field (shape ``(4,)``) is the columns ``<field>_0`` .. ``<field>_3``.
#: Its fields up to ``tiles_left`` are :data:`RECORD_COLUMNS`, then :data:`ENGINE_EXTRA_COLUMNS`, then ``wins``.
RECORD_DTYPE = np.dtype(
    [
        ("hand", np.int64),              # hand index within the chunk (0..n-1)
        ("match_hand", np.int32),        # index of the hand inside its match
        ("dealer", np.int8),
        ("winner", np.int8),             # the first winner, -1 on a draw
        ("winners_mask", np.uint8),      # bit s set if seat s won
        ("win_type", np.int8),           # WIN_* code, -1 on a draw
        ("discarder", np.int8),          # discarder / robbed seat, -1 if none
        ("exponent", np.int8),           # K-6 exponent of the (first) winner, 0 on a draw
        ("hand_flags", np.int32),        # hand-type FLAG_* bits of the (first) winner (not "flags": pandas.DataFrame.flags)
        ("chain_len", np.int8),          # chain links the (first) winner's exponent counted (K-6.5, K-9.4, K-10)
        ("chain_joker", np.int8),        # ... of which joker-discard links (0 when the win kernel did not count them)
        ("chain_kong", np.int8),         # ... of which kong links
        ("score", np.int32, (4,)),       # each seat's score change, sums to zero (K-8.5)
        ("jokers_held", np.int8, (4,)),  # jokers each seat holds at the end (0 in a rule set without one)
        ("joker_discards", np.int16, (4,)),  # jokers each seat discarded this hand (its SEAT_DTYPE joker_discards)
        ("circle_failed", np.int8, (4,)),    # 1 if somebody else won inside the seat's open joker-discard circle
        ("turns", np.int16),             # discards in the hand
        ("tiles_left", np.int16),        # tiles left in the wall at the end
        # the engine's extra columns: the J-9 facts the engine knows (filled for every rule set)
        ("streak", np.int16),            # J-2.4 the dealer's streak k
        ("win_tile", np.int8),           # kind of the winning tile, -1 on a draw
        ("first_turn", np.int8),         # the first winner won on the dealt tiles (天胡, J-5.4)
        ("replacement", np.int8),        # the first winner won on a kong replacement draw
        ("n_winners", np.int8),          # wins recorded in ``wins``
        ("decl", np.int8, (4,)),         # DECL_* of each seat (J-4.1, J-4.2)
        ("decl_turn", np.int16, (4,)),   # turns count of the declaring discard, -1 none
        ("hard_offer", np.int8, (4,)),   # 1 if the seat was offered 硬子 (J-4.2)
        ("passed_win", np.int16, (4,)),  # wins the seat passed (J-3.5)
        ("wins", WIN_DTYPE, (MAX_WINNERS,)),  # the context of each win, first winner first (n_winners used)
    ],
    align=True,
)


def _columns(fields, names=None) -> tuple[tuple[str, np.dtype], ...]:
    """The ``(name, dtype)`` columns of record fields: a per-seat field ``f`` (shape ``(4,)``) gives ``f_0..f_3``;
    ``names``: ``{field: column stem}`` for the fields a rule set names itself (:func:`engine_columns`)."""
    names = names or {}
    out = []
    for f in fields:
        dt, stem = RECORD_DTYPE.fields[f][0], names.get(f, f)
        out.extend(((f"{stem}_{s}", dt.base) for s in SEATS) if dt.shape else ((stem, dt),))
    return tuple(out)


_NAMES = RECORD_DTYPE.names
#: the fields of the engine's record columns (:data:`RECORD_COLUMNS`)
_RECORD_FIELDS = _NAMES[: _NAMES.index("streak")]
#: the engine's record columns (records.md; K-10), in order, under the record's generic field names: a rule
#: set without a finisher records these, its own names for some fields given by its ``field_columns``
#: (:func:`engine_columns`: Kaihua's ``jokers_held`` is its ``caishen_0..3``)
RECORD_COLUMNS = _columns(_RECORD_FIELDS)
#: the engine's columns after :data:`RECORD_COLUMNS`: the J-9 facts the engine knows (Jiating's records,
#: ``caishen.sim.rules.jiating.records``; filled for every rule set)
ENGINE_EXTRA_COLUMNS = _columns(_NAMES[_NAMES.index("streak"): _NAMES.index("wins")])
#: column name -> (record field, seat or None)
_COLUMN_FIELD = {
    **{f: (f, None) for f in _NAMES if not RECORD_DTYPE.fields[f][0].shape},
    **{f"{f}_{s}": (f, s) for f in _NAMES if f != "wins" and RECORD_DTYPE.fields[f][0].shape for s in SEATS},
}


def engine_columns(names: Mapping[str, str] | None = None) -> tuple[tuple[str, np.dtype], ...]:
    """The engine's record columns (:data:`RECORD_COLUMNS`, same order and dtypes) under a rule set's own names.

    ``names``: ``{record field: column stem}``, the names a rule set records
    some of the record's generic fields under (its ``RuleSet.field_columns``;
    Kaihua's :data:`caishen.sim.rules.kaihua.records.FIELD_COLUMNS`:
    ``jokers_held`` -> ``caishen_0..caishen_3``, ``chain_joker`` ->
    ``chain_piao``); the other fields keep their names.  Raises
    ``ValueError`` naming a key that is no field of :data:`RECORD_COLUMNS`,
    a stem that is not an identifier, or a column named twice.
    """
    names = dict(names or {})
    for field, stem in names.items():
        if field not in _RECORD_FIELDS:
            raise ValueError(f"field_columns names {field!r}, which is no field of the engine's record columns "
                             f"({', '.join(_RECORD_FIELDS)})")
        if not (isinstance(stem, str) and stem.isidentifier()):
            raise ValueError(f"field_columns gives {field!r} the column stem {stem!r}, which is not an identifier")
    cols = _columns(_RECORD_FIELDS, names)
    seen = set()
    for c, _ in cols:
        if c in seen:
            raise ValueError(f"field_columns {names!r} names the column {c!r} twice")
        seen.add(c)
    return cols


def engine_record_columns(rec: np.ndarray, names: Mapping[str, str] | None = None) -> dict[str, np.ndarray]:
    """The columns :func:`engine_columns` ``(names)`` of the records ``rec: RECORD_DTYPE[n]``:
    ``{name: array[n]}``, each a contiguous copy with its field's dtype (:func:`record_column`).
    Raises ``ValueError`` as :func:`engine_columns` does."""
    # engine_columns(names) is RECORD_COLUMNS renamed, column for column
    return {c: record_column(rec, generic) for (c, _), (generic, _) in zip(engine_columns(names), RECORD_COLUMNS)}


def new_records(n: int) -> np.ndarray:
    """Zeroed records of ``n`` hands: ``RECORD_DTYPE[n]``, the array the engine's batch kernels fill."""
    return np.zeros(int(n), RECORD_DTYPE)


def record_column(rec: np.ndarray, name: str) -> np.ndarray:
    """Column ``name`` of the records ``rec: RECORD_DTYPE[n]``: a contiguous copy with the field's dtype.

    ``name``: a field (``"winner"``) or one seat of a per-seat field
    (``"score_2"``: ``rec["score"][:, 2]``), as in :data:`RECORD_COLUMNS`
    and :data:`ENGINE_EXTRA_COLUMNS`.  Raises ``ValueError`` naming an unknown column.
    """
    if name not in _COLUMN_FIELD:
        raise ValueError(f"no record column {name!r} in the engine's records (RECORD_DTYPE)")
    field, seat = _COLUMN_FIELD[name]
    return (rec[field] if seat is None else rec[field][:, seat]).copy()


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
