"""Hand analysis: shanten, win test, waits, effective tiles, 爆头 (the readings of a complete hand: :mod:`caishen.sim.readings`).

All functions take ``counts: uint8[34]`` of the *concealed* tiles (declared
melds removed, so 3m+1 or 3m+2 tiles, at most 14) and ``joker``: the kind
index of the wildcard (31 = 白 for the 财神, K-2.1) or -1 for none.  A
joker stands for any kind inside a set or pair, also for a fifth copy; so
with a joker kind given, the sets and pair a hand aims at may hold a fifth
copy of a kind (a held or drawn joker fills it).  Without a joker
(``joker == -1``, J-1.1) they hold at most four copies: a kind held
four times is neither waited on nor counted a fifth time (the kernels read
the strict rows of the tables, :mod:`caishen.sim.tables`).  Only concealed tiles are
seen here: copies in the player's own melds are the caller's to count
(D3 of J-5, the 架听 single wait of the rule set's turn hooks).

Public functions validate their input and raise ``ValueError`` naming the
bad value; the numba kernels they call live in :mod:`caishen.sim.hand.kernels`
(how they work is its docstring), and those that other modules call from
compiled code are imported here too, so ``from caishen.sim.hand import
_shanten`` keeps working.

One call costs little more than a Python call to a compiled function (issue 48;
``benchmarks/bench_hand.py``, ``docs/speed.md``): for a hand given as a
``uint8`` or ``int64`` numpy row, or as a list or tuple of 34 ``int``, and an
``int`` joker, the one-hand functions check the hand inside the same numba call
that answers (:func:`caishen.sim.hand.kernels._query`), through entry points
compiled (or loaded) once per process, so numba does not type the arguments
on every call; a list or tuple reaches the kernel as ``marshal.dumps(counts,
2)``, one C-level pass that also tells an ``int`` from a ``bool``.  Any other
input, and every hand or joker the kernel refuses, takes the slow path that
names what is wrong (:func:`_check_hand`, as before) or, for input it accepts
(numpy integers, ``int32`` arrays, a joker of ``31.0``), answers the same.
"""

from __future__ import annotations

import functools
import marshal

import numpy as np
from numba import types

from caishen.sim import tiles as _tiles
from caishen.sim.hand.kernels import (  # noqa: F401  (the kernels other modules import from here)
    FAULT,
    Q_BAOTOU,
    Q_EFFECTIVE,
    Q_IS_SEVEN_PAIRS,
    Q_SEVEN_PAIRS,
    Q_SHANTEN,
    Q_STANDARD,
    Q_WAITS,
    Q_WIN,
    Q_WIN_STANDARD,
    _POW5,
    _add_meld_tiles,
    _changes_compact,
    _distance,
    _distance_codes,
    _effective_batch,
    _effective_batch_checked,
    _is_baotou,
    _is_seven_pairs,
    _is_win,
    _is_win_batch,
    _is_win_batch_checked,
    _is_win_standard,
    _load8,
    _near,
    _query_array,
    _query_marshal,
    _row_fault,
    _scan,
    _seven_pairs_from,
    _shanten,
    _shanten_batch,
    _shanten_batch_checked,
    _shanten_each_change,
    _shanten_from,
    _shanten_of_distance,
    _shanten_standard_batch,
)
from caishen.sim.tables import hand_tables

__all__ = [
    "shanten",
    "shanten_standard",
    "shanten_seven_pairs",
    "is_win",
    "is_win_standard",
    "is_seven_pairs",
    "is_baotou",
    "waits",
    "effective_tiles",
    "shanten_batch",
    "is_win_batch",
    "effective_tiles_batch",
    "shanten_after_draws",
    "shanten_after_discards",
    "describe",
]


# ---------------------------------------------------------------- the fast path


def _first_call(src, joker: int, op: int, tabs) -> int:
    """What each of the three entry points below is until its first call: compile (or load) that one
    entry (a command that passes one kind of input compiles one) and read the hand table, then answer as
    the entry for ``src`` does.

    ``kernel.compile(signature)`` compiles a kernel for one signature, or loads it from numba's cache, and
    returns its entry point: called directly it unboxes the arguments as those types, skipping the
    dispatcher's typing of each argument (about a third of a call).  So the caller checks the types first
    (:func:`_one_hand`); the kernel checks the values.
    """
    global _TABS, _FROM_U8, _FROM_I64, _FROM_MARSHAL
    table, q = types.Array(types.uint8, 1, "C"), types.int64
    if type(src) is bytes:
        entry = _FROM_MARSHAL = _query_marshal.compile((types.Bytes(types.uint8, 1, "C", readonly=True), q, q,
                                                        table))
    elif src.dtype == np.uint8:
        entry = _FROM_U8 = _query_array.compile((types.Array(types.uint8, 1, "A"), q, q, table))
    else:
        entry = _FROM_I64 = _query_array.compile((types.Array(types.int64, 1, "A"), q, q, table))
    if _TABS is None:
        _TABS = hand_tables()
    return entry(src, joker, op, _TABS)


#: the entry points of :func:`caishen.sim.hand.kernels._query_array` for a ``uint8`` and an ``int64`` row and of
#: ``_query_marshal`` (any layout: they copy the 34 counts), called as ``entry(src, joker, op, _TABS)``
_FROM_U8 = _FROM_I64 = _FROM_MARSHAL = _first_call
#: the hand table (:func:`caishen.sim.tables.hand_tables`) once an entry point has run
_TABS = None
_NDARRAY, _U8, _I64, _DUMPS = np.ndarray, np.dtype(np.uint8), np.dtype(np.int64), marshal.dumps


def _answer(counts, joker, op: int) -> int:
    """The answer of :func:`caishen.sim.hand.kernels._query` (question ``op``, one of its ``Q_*``) for input the
    fast path takes (module docstring), else ``FAULT``: the body of :func:`_one_hand`'s functions, for the
    public functions that do more with the answer."""
    if type(joker) is int:
        kind = type(counts)
        try:
            if kind is list or kind is tuple:
                return _FROM_MARSHAL(_DUMPS(counts, 2), joker, op, _TABS)
            if kind is _NDARRAY and counts.ndim == 1:
                if counts.dtype is _U8:
                    return _FROM_U8(counts, joker, op, _TABS)
                if counts.dtype is _I64:
                    return _FROM_I64(counts, joker, op, _TABS)
        except (ValueError, OverflowError):  # an element marshal cannot write; a joker beyond int64
            pass
    return FAULT


def _one_hand(op: int, test: bool = False):
    """Decorator of a public one-hand function ``f(counts, joker)`` answering question ``op`` (a ``Q_*`` of
    :func:`caishen.sim.hand.kernels._query`): ``test`` for a bool (the kernel's 1 / 0), else the kernel's
    number.  The decorated function is the slow path, run for input the fast path refuses: it checks the
    input (raising the ``ValueError`` that names what is wrong) and answers; the wrapper keeps its name,
    docstring and defaults.  The fast path is :func:`_answer` written out here, to spare the call of it.
    """
    def decorate(checked):
        def call(counts, joker=-1):
            if type(joker) is int:
                kind = type(counts)
                try:
                    if kind is list or kind is tuple:
                        r = _FROM_MARSHAL(_DUMPS(counts, 2), joker, op, _TABS)
                        if r != FAULT:
                            return r == 1 if test else r
                    elif kind is _NDARRAY and counts.ndim == 1:
                        if counts.dtype is _U8:
                            r = _FROM_U8(counts, joker, op, _TABS)
                            if r != FAULT:
                                return r == 1 if test else r
                        elif counts.dtype is _I64:
                            r = _FROM_I64(counts, joker, op, _TABS)
                            if r != FAULT:
                                return r == 1 if test else r
                except (ValueError, OverflowError):  # an element marshal cannot write; a joker beyond int64
                    pass
            return checked(counts, joker)

        functools.update_wrapper(call, checked)
        call.__defaults__ = checked.__defaults__  # is_baotou's joker stays required
        return call

    return decorate


#: ``_BYTE_KINDS[i][v]``: the kinds ``8 * i + b`` for the set bits ``b`` of the byte value ``v`` (i = 0..4)
_BYTE_KINDS = tuple(tuple(tuple(8 * i + b for b in range(8) if v >> b & 1) for v in range(256)) for i in range(5))


def _kinds(mask: int) -> list[int]:
    """The kinds whose bits are set in ``mask`` (34 bits), lowest first: five table lookups, a byte each."""
    k0, k1, k2, k3, k4 = _BYTE_KINDS
    return [*k0[mask & 255], *k1[mask >> 8 & 255], *k2[mask >> 16 & 255], *k3[mask >> 24 & 255], *k4[mask >> 32]]


# ---------------------------------------------------------------- validation


def _check_hand(counts, joker, sizes: str = "any") -> tuple[np.ndarray, int, int]:
    c = _tiles.check_counts(counts)
    j = _tiles.check_joker(joker)
    n = int(c.sum())
    if n > 14 or n % 3 == 0:
        raise ValueError(
            f"a concealed hand has 3m+1 or 3m+2 tiles (at most 14); got {n} tiles: {_tiles.to_str(c) or '(empty)'}"
        )
    if sizes == "complete" and n % 3 != 2:
        raise ValueError(f"expected a 3m+2 tile hand (e.g. 14 tiles), got {n} tiles: {_tiles.to_str(c)}")
    if sizes == "ready" and n % 3 != 1:
        raise ValueError(f"expected a 3m+1 tile hand (e.g. 13 tiles), got {n} tiles: {_tiles.to_str(c)}")
    return c, j, n


# ---------------------------------------------------------------- public API


def _slow(counts, joker, op: int, sizes: str = "any") -> int:
    """:func:`_answer` for input the fast path refused: checked by :func:`_check_hand` (``sizes``), which
    raises the ``ValueError`` naming what is wrong, then answered from the checked ``uint8`` copy."""
    c, j, n = _check_hand(counts, joker, sizes)
    if op == Q_SEVEN_PAIRS and n not in (13, 14):
        raise ValueError(f"seven pairs needs a 13 or 14 tile hand, got {n} tiles")
    r = _answer(c, j, op)
    if r == FAULT:  # pragma: no cover - the checks above refuse everything the kernel refuses
        raise ValueError(f"the hand kernel refused {_tiles.to_str(c)} (joker {j}, question {op})")
    return r


@_one_hand(Q_STANDARD)
def shanten_standard(counts, joker: int = -1) -> int:
    """Standard-form shanten (m sets + a pair) of ``counts: uint8[34]``; -1 = complete.

    Raises ``ValueError`` for bad counts, a bad joker or a tile count that is
    not 3m+1 / 3m+2 (at most 14).
    """
    return _slow(counts, joker, Q_STANDARD)


@_one_hand(Q_SEVEN_PAIRS)
def shanten_seven_pairs(counts, joker: int = -1) -> int:
    """Seven-pairs shanten (four of a kind = two pairs, jokers wild) of 13 or 14 tiles.

    Raises ``ValueError`` for other sizes.
    """
    return _slow(counts, joker, Q_SEVEN_PAIRS)


@_one_hand(Q_SHANTEN)
def shanten(counts, joker: int = -1) -> int:
    """Shanten of ``counts: uint8[34]``: min of standard and (13/14 tiles) seven pairs.

    -1 means complete, 0 ready (tenpai).  ``joker``: wildcard kind or -1.
    Raises ``ValueError`` for bad counts or tile count.  ``counts`` may be any
    integer array or sequence of 34; a ``uint8`` or ``int64`` row, a list or a
    tuple of ``int`` is fastest (module docstring).
    """
    return _slow(counts, joker, Q_SHANTEN)


@_one_hand(Q_WIN_STANDARD, test=True)
def is_win_standard(counts, joker: int = -1) -> bool:
    """True if the 3m+2 tiles are m sets + a pair (jokers wild)."""
    return _slow(counts, joker, Q_WIN_STANDARD, "complete") == 1


@_one_hand(Q_IS_SEVEN_PAIRS, test=True)
def is_seven_pairs(counts, joker: int = -1) -> bool:
    """True if the 14 tiles are seven pairs (four of a kind = two pairs, jokers wild)."""
    return _slow(counts, joker, Q_IS_SEVEN_PAIRS, "complete") == 1


@_one_hand(Q_WIN, test=True)
def is_win(counts, joker: int = -1) -> bool:
    """True if the 3m+2 concealed tiles are complete: standard or (14 tiles) seven pairs.

    Hand shape only; rule-set restrictions (e.g. K-2.4) are applied
    by :mod:`caishen.sim.rules`.  Raises ``ValueError`` for a 3m+1 hand or bad counts.
    """
    return _slow(counts, joker, Q_WIN, "complete") == 1


@_one_hand(Q_BAOTOU, test=True)
def is_baotou(counts, joker: int) -> bool:
    """爆头 (敲响) shape, K-6.2: the 3m+1 tiles minus one joker form complete sets.

    ``counts: uint8[34]`` is the concealed hand before the draw.  Returns
    False when it holds no joker.  Raises ``ValueError`` for a 3m+2 hand.
    """
    return _slow(counts, joker, Q_BAOTOU, "ready") == 1


def waits(counts, joker: int = -1) -> list[int]:
    """Kinds that complete the 3m+1 hand ``counts: uint8[34]`` (sorted kind indices).

    A kind already held four times is not a wait.  When the hand is ready
    and a joker kind is given, drawing a joker completes it too, so the joker
    kind is listed.  Raises ``ValueError`` for a 3m+2 hand.
    """
    r = _answer(counts, joker, Q_WAITS)
    return _kinds(r if r != FAULT else _slow(counts, joker, Q_WAITS, "ready"))


def _check_seen(c: np.ndarray, vis: np.ndarray) -> None:
    """Raise ``ValueError`` naming the first kind of which ``c`` (held) and ``vis`` (visible) make more than 4."""
    over = np.flatnonzero(c.astype(int) + vis > 4)
    if over.size:
        k = int(over[0])
        raise ValueError(f"{_tiles.kind_name(k)}: {int(c[k])} held + {int(vis[k])} visible is more than 4")


def effective_tiles(counts, joker: int = -1, visible=None) -> list[tuple[int, int]]:
    """Effective tiles (ukeire) of a 3m+1 hand: ``[(kind, live copies), ...]``, by kind.

    A kind is effective if drawing it lowers the shanten.  Live copies are
    ``4 - held - visible`` (``visible: uint8[34]``, tiles seen elsewhere:
    discards, exposed melds).  Raises ``ValueError`` for a 3m+2 hand or when
    held + visible exceeds 4 for a kind.
    """
    if visible is None:
        r = _answer(counts, joker, Q_EFFECTIVE)
        if r != FAULT:  # a list, a tuple or a numpy row of 34 counts in 0..4
            held = counts.tolist() if type(counts) is _NDARRAY else counts
            return [(t, 4 - held[t]) for t in _kinds(r)]
    c, j, _ = _check_hand(counts, joker, "ready")
    vis = np.zeros(34, np.uint8) if visible is None else _tiles.check_counts(visible)
    _check_seen(c, vis)
    return [(t, 4 - int(c[t]) - int(vis[t])) for t in _kinds(_slow(c, j, Q_EFFECTIVE, "ready"))]


def _check_batch(counts) -> np.ndarray:
    """Validate ``counts: uint8[n, 34]`` of 3m+1 / 3m+2 rows (at most 14 tiles); returns it C-contiguous.

    Raises ``ValueError`` naming the bad value (bools, ``None`` and floats
    are not counts, :func:`caishen.sim.tiles.int_array`).
    """
    a = counts if isinstance(counts, np.ndarray) and counts.dtype == np.uint8 else _tiles.int_array(counts)
    if a.ndim != 2 or a.shape[1] != 34:
        raise ValueError(f"counts must have shape (n, 34), got {a.shape}")
    if (a > 4).any() or (a < 0).any():
        r, k = np.argwhere((a > 4) | (a < 0))[0]
        raise ValueError(f"counts[{r}, {k}] ({_tiles.kind_name(k)}) = {a[r, k]} is outside 0..4")
    a = a.astype(np.uint8, copy=False)
    n = a.sum(axis=1, dtype=np.int64)
    bad = np.flatnonzero((n > 14) | (n % 3 == 0))
    if bad.size:
        raise ValueError(f"row {int(bad[0])} has {int(n[bad[0]])} tiles; rows need 3m+1 or 3m+2 tiles (at most 14)")
    return np.ascontiguousarray(a)


def _batch_input(counts) -> np.ndarray:
    """``counts`` as a C-contiguous ``uint8[n, 34]`` for the checked kernels.

    A ``uint8[n, 34]`` array is passed through (its rows are checked inside
    the kernel); anything else goes through :func:`_check_batch` first.
    """
    if isinstance(counts, np.ndarray) and counts.dtype == np.uint8 and counts.ndim == 2 and counts.shape[1] == 34:
        return np.ascontiguousarray(counts)
    return _check_batch(counts)


def _raise_bad_row(a: np.ndarray, r: int, need_ready: bool = False) -> None:
    """Raise the ``ValueError`` for row ``r`` of ``a``, which a checked kernel refused."""
    _check_batch(a[r : r + 1])  # raises for a count over 4 or a bad size (its message says row 0)
    n = int(a[r].sum())
    if need_ready:
        raise ValueError(f"row {r} has {n} tiles; effective tiles need 3m+1 tiles")
    raise ValueError(f"row {r} is not a valid hand: {_tiles.to_str(a[r])}")  # pragma: no cover


def _rerow(err: ValueError, r: int) -> ValueError:
    """``err`` from checking one row, its message naming row ``r`` of the caller's batch."""
    return ValueError(str(err).replace("row 0 ", f"row {r} ", 1).replace("counts[0, ", f"counts[{r}, ", 1))


def _run_checked(kernel, a: np.ndarray, joker: int, out: np.ndarray, need_ready: bool = False) -> np.ndarray:
    j = joker if type(joker) is int and -1 <= joker < 34 else _tiles.check_joker(joker)
    r = int(kernel(a, j, hand_tables(), out))
    if r >= 0:
        try:
            _raise_bad_row(a, r, need_ready)
        except ValueError as e:
            raise _rerow(e, r) from None
    return out


def shanten_batch(counts, joker: int = -1) -> np.ndarray:
    """Shanten of every row of ``counts: uint8[n, 34]`` -> ``int8[n]`` (numba loop).

    Rows may have different sizes (3m+1 / 3m+2).  Raises ``ValueError`` for a
    bad shape, a count over 4 or a bad row size, naming the row.  The rows of
    a ``uint8`` array are checked inside the same numba call.
    """
    a = _batch_input(counts)
    return _run_checked(_shanten_batch_checked, a, joker, np.empty(a.shape[0], np.int8))


def is_win_batch(counts, joker: int = -1) -> np.ndarray:
    """Win test (standard or seven pairs) of every row of ``counts: uint8[n, 34]`` -> ``bool[n]``.

    Raises ``ValueError`` like :func:`shanten_batch`.
    """
    a = _batch_input(counts)
    return _run_checked(_is_win_batch_checked, a, joker, np.empty(a.shape[0], np.bool_))


def effective_tiles_batch(counts, joker: int = -1) -> np.ndarray:
    """Effective kinds of every 3m+1 row of ``counts: uint8[n, 34]`` -> ``bool[n, 34]``.

    Raises ``ValueError`` for a bad shape or a row that is not 3m+1 tiles.
    The input is not modified (the kernel works on a copy).
    """
    a = _batch_input(counts).copy()
    return _run_checked(_effective_batch_checked, a, joker, np.zeros((a.shape[0], 34), np.bool_), True)


def shanten_after_draws(counts, joker: int = -1) -> np.ndarray:
    """``int64[34]``: shanten of the hand after drawing one tile of each kind (99: four held).

    ``counts: uint8[34]`` of a 3m+1 hand.  Raises ``ValueError`` otherwise.
    """
    c, j, _ = _check_hand(counts, joker, "ready")
    out = np.empty(34, np.int64)
    _shanten_each_change(c, j, hand_tables(), 1, out)
    return out


def shanten_after_discards(counts, joker: int = -1) -> np.ndarray:
    """``int64[34]``: shanten of the hand after discarding one tile of each kind (99: none held).

    ``counts: uint8[34]`` of a 3m+2 hand.  Raises ``ValueError`` otherwise.
    """
    c, j, _ = _check_hand(counts, joker, "complete")
    out = np.empty(34, np.int64)
    _shanten_each_change(c, j, hand_tables(), -1, out)
    return out


# ---------------------------------------------------------------- report


def describe(counts, joker: int = -1, visible=None) -> dict:
    """Everything ``caishen hand`` prints, as a JSON-ready dict.

    3m+1 hands: shanten, waits, effective tiles with live counts.  3m+2
    hands: shanten, whether complete, and for each discard that keeps the
    lowest shanten its effective tiles (best first by live tiles); the
    discarded tile counts as seen (it lies in the discards), so it is not
    live.  ``visible: uint8[34]``: tiles seen elsewhere.  Raises
    ``ValueError`` for bad counts or joker, and when held + visible exceeds
    4 for a kind (naming the kind), whatever the hand's size.
    """
    c, j, n = _check_hand(counts, joker)
    vis = np.zeros(34, np.uint8) if visible is None else _tiles.check_counts(visible)
    _check_seen(c, vis)
    name = _tiles.kind_name
    info: dict = {
        "hand": _tiles.to_str(c),
        "joker": name(j) if j >= 0 else None,
        "tiles": n,
        "shanten": shanten(c, j),
        "shanten_standard": shanten_standard(c, j),
        "shanten_seven_pairs": shanten_seven_pairs(c, j) if n >= 13 else None,
    }
    if n % 3 == 1:
        eff = effective_tiles(c, j, vis)
        info["waits"] = [name(t) for t in waits(c, j)] if info["shanten"] == 0 else []
        info["effective"] = [(name(t), live) for t, live in eff]
        info["live"] = sum(live for _, live in eff)
    else:
        info["win"] = is_win(c, j)
        options = []
        for t in np.flatnonzero(c):
            c2 = c.copy()
            c2[t] -= 1
            seen = vis.copy()
            seen[t] += 1  # the discarded copy
            s = shanten(c2, j)
            eff = effective_tiles(c2, j, seen)
            options.append(
                {
                    "discard": name(t),
                    "shanten": s,
                    "live": sum(x for _, x in eff),
                    "effective": [(name(k), x) for k, x in eff],
                }
            )
        best = min(o["shanten"] for o in options)
        info["discards"] = sorted(
            (o for o in options if o["shanten"] == best), key=lambda o: (-o["live"], o["discard"])
        )
    return info


def warm() -> None:
    """Call every public hand function once with and without a joker (``caishen warmup hand``)."""
    c, c13, c14 = (_tiles.parse(s) for s in ("123456789m1234p", "123456789m123p4s", "123456789m123p44s"))
    for j in (-1, _tiles.CAISHEN):
        shanten(c, j)  # the fast path's three entry points: a uint8 row, a list (marshal), an int64 row
        shanten([int(x) for x in c], j)
        shanten(c.astype(np.int64), j)
        is_win(c14, j)
        waits(c13, j)
        effective_tiles(c13, j)
        shanten_batch(np.stack([c]), j)
        is_win_batch(np.stack([c]), j)
        effective_tiles_batch(np.stack([c13]), j)
