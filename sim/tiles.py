"""Tile encoding: 34 kinds, mpsz strings, constants.

A hand is ``counts: uint8[34]``, index order ``1m..9m 1p..9p 1s..9s 1z..7z``
(``1z..7z`` = 东 南 西 北 白 发 中).  Kaihua's 财神 (the four 白) is index
:data:`CAISHEN` = 31 and is counted like any tile; kernels receive the joker
index (or -1) as an argument.
"""

from __future__ import annotations

import re

import numpy as np

N_KINDS = 34
N_TILES = 136
SUITS = "mps"
#: index of 白 (5z), the Kaihua 财神 (K-2.1)
CAISHEN = 31
#: index of 东, 南, 西, 北, 白, 发, 中
EAST, SOUTH, WEST, NORTH, WHITE, GREEN, RED = range(27, 34)
HONOR_NAMES = "东南西北白发中"
SUIT_NAMES = "万筒条"

_TOKEN = re.compile(r"([0-9]+)([mpsz])")


def kind_index(rank: int, suit: str) -> int:
    """Index 0..33 of the kind ``rank`` (1-based) of ``suit`` in ``mpsz``."""
    return "mpsz".index(suit) * 9 + rank - 1


def kind_name(kind: int) -> str:
    """mpsz name of one kind, ``kind_name(31) == '5z'``.

    Raises ``ValueError`` for an index outside 0..33.
    """
    if not 0 <= int(kind) < N_KINDS:
        raise ValueError(f"tile kind index {kind!r} is outside 0..33")
    return f"{int(kind) % 9 + 1}{'mpsz'[int(kind) // 9]}"


def parse_kinds(s: str) -> list[int]:
    """The kinds of an mpsz string in written order (``'12m5z' -> [0, 1, 31]``).

    No copy limit is checked here; see :func:`parse`.
    Raises ``ValueError`` naming the bad part of the string.
    """
    if not isinstance(s, str):
        raise ValueError(f"tile string must be a str, got {type(s).__name__}: {s!r}")
    text = s.replace(" ", "")
    out: list[int] = []
    pos = 0
    for m in _TOKEN.finditer(text):
        if m.start() != pos:
            raise ValueError(f"bad tile string {s!r}: cannot read {text[pos:m.start()]!r}")
        digits, suit = m.groups()
        for d in digits:
            rank = int(d)
            if rank == 0 or (suit == "z" and rank > 7):
                raise ValueError(f"bad tile string {s!r}: no tile '{d}{suit}'")
            out.append(kind_index(rank, suit))
        pos = m.end()
    if pos != len(text):
        raise ValueError(f"bad tile string {s!r}: cannot read {text[pos:]!r}")
    return out


def parse(s: str) -> np.ndarray:
    """Counts of an mpsz string: ``parse('123m456p11z5z') -> uint8[34]``.

    Raises ``ValueError`` for a malformed string (``'0m'``, ``'8z'``, stray
    characters, a digit without a suit) or a fifth copy of a kind.
    """
    counts = np.zeros(N_KINDS, dtype=np.uint8)
    for k in parse_kinds(s):
        if counts[k] == 4:
            raise ValueError(f"bad tile string {s!r}: a fifth copy of {kind_name(k)}")
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

    Raises ``ValueError`` for an index outside 0..33.
    """
    c = np.zeros(N_KINDS, dtype=np.int64)
    for k in kinds:
        kind_name(k)  # validates
        c[int(k)] += 1
    return _format(c)


def check_counts(counts, max_copies: int = 4) -> np.ndarray:
    """Validate a hand: 34 integers in ``0..max_copies``; returns ``uint8[34]``.

    Raises ``ValueError`` naming the bad value.
    """
    a = np.asarray(counts)
    if a.shape != (N_KINDS,):
        raise ValueError(f"counts must have shape (34,), got {a.shape}")
    if a.dtype.kind not in "iu":
        raise ValueError(f"counts must be integers, got dtype {a.dtype}")
    if (a < 0).any() or (a > max_copies).any():
        bad = int(np.flatnonzero((a < 0) | (a > max_copies))[0])
        raise ValueError(f"counts[{bad}] ({kind_name(bad)}) = {int(a[bad])} is outside 0..{max_copies}")
    return a.astype(np.uint8)


def check_joker(joker: int) -> int:
    """Validate a joker kind: -1 (none) or 0..33."""
    j = int(joker)
    if j != joker or not -1 <= j < N_KINDS:
        raise ValueError(f"joker must be -1 or a kind index 0..33, got {joker!r}")
    return j


def suit_of(kind: int) -> int:
    """0, 1, 2 for m, p, s; 3 for honors."""
    return kind // 9


def is_suited(kind: int) -> bool:
    return kind < 27


def rank_of(kind: int) -> int:
    """1-based rank (1..9 for suits, 1..7 for honors)."""
    return kind % 9 + 1


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
