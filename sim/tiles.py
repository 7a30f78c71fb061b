"""Tile encoding: 34 kinds, mpsz strings, constants.

A hand is ``counts: uint8[34]``, index order ``1m..9m 1p..9p 1s..9s 1z..7z``
(``1z..7z`` = 东 南 西 北 白 发 中).  The 财神 (the four 白, K-2.1) is index
:data:`CAISHEN` = 31 and is counted like any tile; kernels receive the joker
index (or -1) as an argument.
"""

from __future__ import annotations

import re

import numpy as np

from caishen.sim.validate import check_int

N_KINDS = 34
N_TILES = 136
SUITS = "mps"
#: index of 白 (5z), the 财神 (K-2.1)
CAISHEN = 31
#: index of 东, 南, 西, 北, 白, 发, 中
EAST, SOUTH, WEST, NORTH, WHITE, GREEN, RED = range(27, 34)
HONOR_NAMES = "东南西北白发中"
SUIT_NAMES = "万筒条"

_TOKEN = re.compile(r"([0-9]+)([mpsz])")
#: how much of a bad input an error message shows
SHOW_CHARS = 40


def _show(value) -> str:
    """``repr(value)`` for an error message, cut to :data:`SHOW_CHARS` characters plus the length.

    A 5 MB bad tile string is not echoed back whole.
    """
    text = repr(value)
    if len(text) <= SHOW_CHARS:
        return text
    size = f"{len(value):,} characters" if isinstance(value, str) else f"{len(text):,} characters as text"
    return f"{text[:SHOW_CHARS]}... ({size})"


def check_kind(kind, what: str = "tile kind") -> int:
    """Validate a tile kind index: an integer in 0..33 (:func:`caishen.sim.validate.check_int`, an
    integral float allowed); returns it as ``int``.

    Raises ``ValueError`` naming the value (a bool, ``None``, a fraction, a
    string or an index outside 0..33).
    """
    return check_int(what, kind, 0, N_KINDS - 1, integral_float=True)


def kind_index(rank: int, suit: str) -> int:
    """Index 0..33 of the kind ``rank`` (1-based: 1..9, honors 1..7) of ``suit`` in ``mpsz``.

    Raises ``ValueError`` naming a bad rank or suit.
    """
    if not isinstance(suit, str) or len(suit) != 1 or suit not in "mpsz":
        raise ValueError(f"suit must be one of m, p, s, z; got {_show(suit)}")
    r = check_int(f"rank of suit {suit!r}", rank, 1, 7 if suit == "z" else 9, integral_float=True)
    return "mpsz".index(suit) * 9 + r - 1


def kind_name(kind: int) -> str:
    """mpsz name of one kind, ``kind_name(31) == '5z'``.

    Raises ``ValueError`` for an index outside 0..33 or a value that is not
    an integer (a bool, ``None``, a fraction).
    """
    k = check_kind(kind)
    return f"{k % 9 + 1}{'mpsz'[k // 9]}"


def parse_kinds(s: str) -> list[int]:
    """The kinds of an mpsz string in written order (``'12m5z' -> [0, 1, 31]``).

    No copy limit is checked here; see :func:`parse`.
    Raises ``ValueError`` naming the bad part of the string (long input is
    cut to its first :data:`SHOW_CHARS` characters and its length).
    """
    if not isinstance(s, str):
        raise ValueError(f"tile string must be a str, got {type(s).__name__}: {_show(s)}")
    text = s.replace(" ", "")
    out: list[int] = []
    pos = 0
    for m in _TOKEN.finditer(text):
        if m.start() != pos:
            raise ValueError(f"bad tile string {_show(s)}: cannot read {_show(text[pos:m.start()])}")
        digits, suit = m.groups()
        for d in digits:
            rank = int(d)
            if rank == 0 or (suit == "z" and rank > 7):
                raise ValueError(f"bad tile string {_show(s)}: no tile '{d}{suit}'")
            out.append("mpsz".index(suit) * 9 + rank - 1)
        pos = m.end()
    if pos != len(text):
        raise ValueError(f"bad tile string {_show(s)}: cannot read {_show(text[pos:])}")
    return out


def parse(s: str) -> np.ndarray:
    """Counts of an mpsz string: ``parse('123m456p11z5z') -> uint8[34]``.

    Raises ``ValueError`` for a malformed string (``'0m'``, ``'8z'``, stray
    characters, a digit without a suit) or a fifth copy of a kind.
    """
    counts = np.zeros(N_KINDS, dtype=np.uint8)
    for k in parse_kinds(s):
        if counts[k] == 4:
            raise ValueError(f"bad tile string {_show(s)}: a fifth copy of {kind_name(k)}")
        counts[k] += 1
    return counts


def _format(c) -> str:
    parts = []
    for si, suit in enumerate("mpsz"):
        n = 7 if suit == "z" else 9
        digits = "".join(str(r + 1) * int(c[si * 9 + r]) for r in range(n))
        if digits:
            parts.append(digits + suit)
    return "".join(parts)


def to_str(counts) -> str:
    """mpsz string of ``counts: uint8[34]``, suits in order m p s z.

    Raises ``ValueError`` if ``counts`` is not 34 values in 0..4.
    """
    return _format(check_counts(counts))


def kinds_to_str(kinds) -> str:
    """mpsz string of a sequence of kind indices, in sorted order (any number of copies).

    Raises ``ValueError`` for an index outside 0..33 or a value that is not
    an integer (:func:`check_kind`).
    """
    c = np.zeros(N_KINDS, dtype=np.int64)
    for k in kinds:
        c[check_kind(k)] += 1
    return _format(c)


def int_array(values, what: str = "counts") -> np.ndarray:
    """``values`` (an integer array or a sequence of integers) as an ``int64`` array.

    Raises ``ValueError`` naming the first bad element: a bool (also inside
    a list of ints, which numpy would silently read as 0/1), ``None``, a
    float, a string; for a bool or float array its dtype and first element.
    """
    def first_bad(elements):
        for index, x in np.ndenumerate(elements):
            if isinstance(x, (bool, np.bool_)) or not isinstance(x, (int, np.integer)):
                at = index[0] if len(index) == 1 else index
                raise ValueError(f"{what}[{at}] must be an integer, got {_show(x)} ({type(x).__name__})")

    if isinstance(values, np.ndarray):
        a = values
        if a.dtype.kind == "O":
            first_bad(a)
    else:
        try:
            a = np.asarray(values)
        except (ValueError, TypeError):
            raise ValueError(f"{what} must be integers, got {_show(values)}") from None
        if a.dtype.kind in "iuO":  # a list may mix bools into ints: look at each element
            first_bad(np.asarray(values, dtype=object))
    if a.dtype.kind not in "iuO":
        first = f" ({what}[0] = {_show(a.flat[0])})" if a.size else ""
        raise ValueError(f"{what} must be integers, got dtype {a.dtype}{first}")
    return a.astype(np.int64)


def check_counts(counts, max_copies: int = 4) -> np.ndarray:
    """Validate a hand: 34 integers in ``0..max_copies``; returns ``uint8[34]``.

    Raises ``ValueError`` naming the bad value (bools, ``None`` and floats
    are not counts, :func:`int_array`).
    """
    a = int_array(counts)
    if a.shape != (N_KINDS,):
        raise ValueError(f"counts must have shape (34,), got {a.shape}")
    if (a < 0).any() or (a > max_copies).any():
        bad = int(np.flatnonzero((a < 0) | (a > max_copies))[0])
        raise ValueError(f"counts[{bad}] ({kind_name(bad)}) = {int(a[bad])} is outside 0..{max_copies}")
    return a.astype(np.uint8)


def check_joker(joker: int) -> int:
    """Validate a joker kind: -1 (none) or 0..33; returns it as ``int``.

    Raises ``ValueError`` naming the value for anything else, including
    ``True``/``False`` (not ``2m``/``1m``), ``None`` and fractions.
    """
    return check_int("joker", joker, -1, N_KINDS - 1, integral_float=True)


def suit_of(kind: int) -> int:
    """0, 1, 2 for m, p, s; 3 for honors.  Raises ``ValueError`` for a bad kind (:func:`check_kind`)."""
    return check_kind(kind) // 9


def is_suited(kind: int) -> bool:
    """True for 1m..9s.  Raises ``ValueError`` for a bad kind (:func:`check_kind`)."""
    return check_kind(kind) < 27


def rank_of(kind: int) -> int:
    """1-based rank (1..9 for suits, 1..7 for honors).  Raises ``ValueError`` for a bad kind."""
    return check_kind(kind) % 9 + 1


# Meld types shared by the engine, the rule sets and the records (0 = no meld).
# A meld is (type, kind); the kind of a chow is its lowest tile.
MELD_NONE = 0
MELD_CHOW = 1
MELD_PONG = 2
MELD_KONG_EXPOSED = 3
MELD_KONG_ADDED = 4
MELD_KONG_CONCEALED = 5
MELD_TYPE_NAMES = {
    MELD_CHOW: "chow",
    MELD_PONG: "pong",
    MELD_KONG_EXPOSED: "kong_exposed",
    MELD_KONG_ADDED: "kong_added",
    MELD_KONG_CONCEALED: "kong_concealed",
}
MELD_TYPES = {v: k for k, v in MELD_TYPE_NAMES.items()}
