"""Hand kernels: shanten, win test, waits, effective tiles, 爆头 (the readings of a complete hand: :mod:`caishen.sim.readings`).

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
bad value; the ``_underscore`` numba kernels do no validation and are what
the engine, the rule sets and the bots call from compiled code, with
``tabs = caishen.sim.tables.hand_tables()`` passed through as an argument.  Only
the innermost helpers (``_scan``, ``_distance_codes``, ``_shanten_from``)
are inlined at numba level (``inline="always"``); the kernels other modules
call are not, because numba-level inlining at every call site multiplies
compile time.

How: the natural (non-joker) tiles have a *distance* ``D``: the fewest tiles
to add so that they are part of ``m`` sets and a pair (per-suit tables,
combined by min-plus; see :mod:`caishen.sim.tables`; without a joker no kind may
exceed four copies).  With ``k`` jokers the
standard shanten is ``max(D - k, 0) - 1`` and a 3m+2 hand is complete iff
``D == k``.  Seven pairs (13/14 tiles only, four of a kind = two pairs):
``6 - min(7, pairs + min(k, singles) + (k - min(k, singles)) // 2)``.
Shanten -1 means complete.
"""

from __future__ import annotations

import sys

import numpy as np
from llvmlite import ir as llvm_ir
from numba import njit, types
from numba.cpython.unsafe.numbers import trailing_zeros
from numba.extending import intrinsic, overload

from caishen.sim import tiles as _tiles
from caishen.sim.borrow import borrowed
from caishen.sim.tiles import MELD_CHOW, MELD_PONG
from caishen.sim.tables import H_NH, H_NS, OFF_HONOR_CLASS, OFF_PAIRS, OFF_SUIT_CLASS, hand_tables

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


# ---------------------------------------------------------------- kernels

#: 5**r for r = 0..8 (a constant of the base-5 code, not a rule table)
_POW5 = (1, 5, 25, 125, 625, 3125, 15625, 78125, 390625)
# masks of the SWAR scan (:func:`_scan`): constants of the byte arithmetic, not rule tables
_LANES8 = np.uint64(0x00FF00FF00FF00FF)
_LANES16 = np.uint64(0x0000FFFF0000FFFF)
_LOW32 = np.uint64(0xFFFFFFFF)
_ONES = np.uint64(0x0101010101010101)
_ADD123 = np.uint64(0x7B7B7B7B7B7B7B7B)
_HIGH = np.uint64(0x8080808080808080)
_HALF = np.uint64(0x7F7F7F7F7F7F7F7F)
if sys.byteorder != "little":  # pragma: no cover - numba's hosts are little-endian
    raise ImportError("caishen's hand kernels read counts as little-endian words (sys.byteorder is big)")


def _load8(counts, off):
    """``counts[off:off + 8]`` as one little-endian ``uint64`` (byte ``off`` lowest); numba only (below)."""
    raise NotImplementedError("a numba kernel helper")  # pragma: no cover


@intrinsic
def _load8_unaligned(typingctx, arr, off):
    """One unaligned 8-byte load of ``arr[off:off + 8]`` (C-contiguous ``uint8``) as ``uint64``.

    The caller keeps ``off + 8 <= len(arr)``.  Little-endian hosts only (numba's: x86-64,
    aarch64, ppc64le; checked at import).
    """
    if not (isinstance(arr, types.Array) and arr.dtype == types.uint8 and arr.ndim == 1 and arr.layout == "C"):
        return None

    def codegen(context, builder, sig, args):
        a = context.make_array(sig.args[0])(context, builder, args[0])
        ptr = builder.bitcast(builder.gep(a.data, [args[1]]), llvm_ir.IntType(64).as_pointer())
        return builder.load(ptr, align=1)

    return types.uint64(arr, off), codegen


@overload(_load8, inline="always")
def _load8_impl(counts, off):
    """:func:`_load8`: one load for a C-contiguous row, eight byte reads for any other layout."""
    if isinstance(counts, types.Array) and counts.dtype == types.uint8 and counts.layout == "C":
        return lambda counts, off: _load8_unaligned(counts, off)

    def strided(counts, off):  # written out: a loop inlined here trips numba's IR scope check
        return (np.uint64(counts[off]) | (np.uint64(counts[off + 1]) << np.uint64(8))
                | (np.uint64(counts[off + 2]) << np.uint64(16)) | (np.uint64(counts[off + 3]) << np.uint64(24))
                | (np.uint64(counts[off + 4]) << np.uint64(32)) | (np.uint64(counts[off + 5]) << np.uint64(40))
                | (np.uint64(counts[off + 6]) << np.uint64(48)) | (np.uint64(counts[off + 7]) << np.uint64(56)))

    return strided


@njit(cache=True, inline="always")
def _code8(x):
    """The base-5 code ``sum(c[i] * 5**i)`` of the eight counts (bytes, each 0..4) packed in ``x: uint64``.

    Pairs of bytes are merged into 16-bit lanes, those into 32-bit lanes, then the two halves (SWAR).
    """
    y = (x & _LANES8) + ((x >> np.uint64(8)) & _LANES8) * np.uint64(5)
    z = (y & _LANES16) + ((y >> np.uint64(16)) & _LANES16) * np.uint64(25)
    return np.int64((z & _LOW32) + (z >> np.uint64(32)) * np.uint64(625))


@njit(cache=True, inline="always")
def _byte_sum(x):
    """Sum of the eight bytes of ``x: uint64`` (the sum must stay below 256)."""
    return np.int64((x * _ONES) >> np.uint64(56))


@njit(cache=True, inline="always")
def _scan(counts, joker):
    """One pass over ``counts``: per-suit base-5 codes of the natural tiles and counts.

    Returns ``(code_m, code_p, code_s, code_z, n_tiles, n_jokers, pairs,
    singles)``; the joker kind is left out of the codes, pairs and singles.
    Reads the 34 counts as four 8-byte words (kinds 0-7, 9-16, 18-25, 26-33) and the
    ninth kind of each suit, and sums tiles, pairs (``c >> 1``) and singles (``c & 1``)
    of all four words at once (bytes of at most 4: no lane overflows).
    """
    xm = _load8(counts, 0)
    xp = _load8(counts, 9)
    xs = _load8(counts, 18)
    xz = _load8(counts, 26) >> np.uint64(8)  # the honors, 27..33 (a load from 27 would pass the end)
    m9 = np.int64(counts[8])
    p9 = np.int64(counts[17])
    s9 = np.int64(counts[26])
    cm = _code8(xm) + m9 * 390625
    cp = _code8(xp) + p9 * 390625
    cs = _code8(xs) + s9 * 390625
    cz = _code8(xz)
    n = _byte_sum(xm + xp + xs + xz) + m9 + p9 + s9
    half = _HALF
    pairs = (_byte_sum(((xm >> np.uint64(1)) & half) + ((xp >> np.uint64(1)) & half)
                       + ((xs >> np.uint64(1)) & half) + ((xz >> np.uint64(1)) & half))
             + (m9 >> 1) + (p9 >> 1) + (s9 >> 1))
    singles = _byte_sum((xm & _ONES) + (xp & _ONES) + (xs & _ONES) + (xz & _ONES)) + (m9 & 1) + (p9 & 1) + (s9 & 1)
    k = 0
    if joker >= 0:
        k = np.int64(counts[joker])
        pairs -= k >> 1
        singles -= k & 1
        pw = _POW5[joker % 9]
        suit = joker // 9
        if suit == 0:
            cm -= k * pw
        elif suit == 1:
            cp -= k * pw
        elif suit == 2:
            cs -= k * pw
        else:
            cz -= k * pw
    return cm, cp, cs, cz, n, k, pairs, singles


@njit(cache=True, inline="always")
def _min_plus4(tabs, ra, rb):
    """min over ja + jb = 4 and one pair of rows ``tabs[ra:ra+10] + tabs[rb:rb+10]`` (unrolled)."""
    best = 255
    for ja in range(5):  # constant bounds: LLVM unrolls this
        jb = 4 - ja
        v = np.int64(tabs[ra + 2 * ja + 1]) + np.int64(tabs[rb + 2 * jb])
        w = np.int64(tabs[ra + 2 * ja]) + np.int64(tabs[rb + 2 * jb + 1])
        if w < v:
            v = w
        if v < best:
            best = v
    return best


@njit(cache=True, inline="always")
def _suit_class(tabs, code):
    """Class id of a suit's base-5 code (:mod:`caishen.sim.tables`)."""
    return np.int64(tabs[OFF_SUIT_CLASS + code])


@njit(cache=True, inline="always")
def _class_ids(cm, cp, cs, cz, tabs):
    """Class ids ``(km, kp, ks, kz)`` of the four suit codes (:mod:`caishen.sim.tables`)."""
    return _suit_class(tabs, cm), _suit_class(tabs, cp), _suit_class(tabs, cs), np.int64(tabs[OFF_HONOR_CLASS + cz])


@njit(cache=True, inline="always")
def _distance_classes(km, kp, ks, kz, n_sets, n_pairs, strict, tabs):
    """Fewest tiles to add to the suits of class ids ``km, kp, ks, kz`` to hold ``n_sets`` sets + ``n_pairs`` pair.

    ``strict`` (the no-joker path, ``joker < 0``): the sets and pair hold at
    most four copies of a kind; else a fifth copy is allowed, for a joker to
    fill (K-2.1).  ``tabs`` is the flat table of
    :func:`caishen.sim.tables.hand_tables`: class ids of each suit code, then the
    lenient and the strict block of suit-pair and suit-honor min-plus rows.
    """
    ns = np.int64(tabs[H_NS])
    nh = np.int64(tabs[H_NH])
    a = km * ns + kp
    b = ks * nh + kz
    base = OFF_PAIRS
    if strict:
        base += (ns * ns + ns * nh) * 10  # the strict block (caishen.sim.tables.strict_block)
    ra = base + a * 10
    rb = base + (ns * ns + b) * 10
    if n_sets == 4 and n_pairs == 1:  # the 13/14-tile case, unrolled for speed
        return _min_plus4(tabs, ra, rb)
    best = 255
    for ja in range(n_sets + 1):
        jb = n_sets - ja
        if n_pairs == 0:
            v = np.int64(tabs[ra + 2 * ja]) + np.int64(tabs[rb + 2 * jb])
        else:
            v = np.int64(tabs[ra + 2 * ja + 1]) + np.int64(tabs[rb + 2 * jb])
            w = np.int64(tabs[ra + 2 * ja]) + np.int64(tabs[rb + 2 * jb + 1])
            if w < v:
                v = w
        if v < best:
            best = v
    return best


@njit(cache=True, inline="always")
def _distance_codes(cm, cp, cs, cz, n_sets, n_pairs, strict, tabs):
    """:func:`_distance_classes` of the suits with these base-5 codes."""
    km, kp, ks, kz = _class_ids(cm, cp, cs, cz, tabs)
    return _distance_classes(km, kp, ks, kz, n_sets, n_pairs, strict, tabs)


@njit(cache=True, inline="always")
def _add_meld_tiles(counts, mtype, kind):
    """Add the tiles of one meld to ``counts``: a chow (``kind`` its lowest tile)
    one each of three kinds, a pong 3, any kong 4 (``mtype``: ``caishen.sim.tiles.MELD_*``)."""
    if mtype == MELD_CHOW:
        counts[kind] += 1
        counts[kind + 1] += 1
        counts[kind + 2] += 1
    elif mtype == MELD_PONG:
        counts[kind] += 3
    else:
        counts[kind] += 4


@njit(cache=True)
def _distance(counts, joker, n_sets, n_pairs, tabs):
    """Fewest tiles to add to the natural tiles to hold ``n_sets`` sets + ``n_pairs`` (0/1) pair.

    ``n_sets`` in 0..4.  Jokers (``counts[joker]``) are ignored here.  With
    no joker (``joker == -1``) the sets and pair hold at most four copies of
    a kind; with a joker kind a fifth copy is allowed (a joker fills it).
    """
    cm, cp, cs, cz, n, k, pairs, singles = _scan(counts, joker)
    return _distance_codes(cm, cp, cs, cz, n_sets, n_pairs, joker < 0, tabs)


@njit(cache=True, inline="always")
def _seven_pairs_from(k, pairs, singles):
    used = k if k < singles else singles
    total = pairs + used + (k - used) // 2
    if total > 7:
        total = 7
    return 6 - total


@njit(cache=True)
def _shanten_standard(counts, joker, tabs):
    """Standard-form (m sets + pair) shanten of a 3m+1 / 3m+2 concealed hand."""
    cm, cp, cs, cz, n, k, pairs, singles = _scan(counts, joker)
    d = _distance_codes(cm, cp, cs, cz, (n - 1) // 3, 1, joker < 0, tabs) - k
    if d < 0:
        d = 0
    return d - 1


@njit(cache=True)
def _shanten_seven_pairs(counts, joker):
    """Seven-pairs shanten (13/14 tiles; four of a kind = two pairs, jokers wild)."""
    cm, cp, cs, cz, n, k, pairs, singles = _scan(counts, joker)
    return _seven_pairs_from(k, pairs, singles)


@njit(cache=True, inline="always")
def _shanten_of_distance(d, n, k, pairs, singles):
    """Shanten from the standard form's distance ``d`` (before the jokers ``k`` are spent) and the seven-pairs
    values of :func:`_scan`: the smaller of the two forms (seven pairs only for 13/14 tiles)."""
    d -= k
    if d < 0:
        d = 0
    s = d - 1
    if n >= 13:
        q = _seven_pairs_from(k, pairs, singles)
        if q < s:
            s = q
    return s


@njit(cache=True, inline="always")
def _shanten_from(cm, cp, cs, cz, n, k, pairs, singles, strict, tabs):
    """Shanten from the values of :func:`_scan`; ``strict``: no joker (``joker < 0``)."""
    return _shanten_of_distance(_distance_codes(cm, cp, cs, cz, (n - 1) // 3, 1, strict, tabs), n, k, pairs,
                                singles)


@njit(cache=True)
def _shanten(counts, joker, tabs):
    """min(standard, seven pairs) shanten; seven pairs only for 13/14 tiles."""
    cm, cp, cs, cz, n, k, pairs, singles = _scan(counts, joker)
    return _shanten_from(cm, cp, cs, cz, n, k, pairs, singles, joker < 0, tabs)


@njit(cache=True)
def _is_win_standard(counts, joker, tabs):
    """True if the 3m+2 concealed tiles are m sets + a pair (jokers wild)."""
    cm, cp, cs, cz, n, k, pairs, singles = _scan(counts, joker)
    if n % 3 != 2:
        return False
    return _distance_codes(cm, cp, cs, cz, (n - 1) // 3, 1, joker < 0, tabs) <= k


@njit(cache=True)
def _is_seven_pairs(counts, joker):
    """True if the 14 concealed tiles are seven pairs (jokers wild, four = two pairs)."""
    cm, cp, cs, cz, n, k, pairs, singles = _scan(counts, joker)
    return n == 14 and _seven_pairs_from(k, pairs, singles) == -1


@njit(cache=True)
def _is_win(counts, joker, tabs):
    """Standard win, or seven pairs with 14 tiles."""
    cm, cp, cs, cz, n, k, pairs, singles = _scan(counts, joker)
    if n % 3 != 2:
        return False
    if n == 14 and _seven_pairs_from(k, pairs, singles) == -1:
        return True
    return _distance_codes(cm, cp, cs, cz, (n - 1) // 3, 1, joker < 0, tabs) <= k


@njit(cache=True)
def _is_baotou(counts13, joker, tabs):
    """爆头 shape (K-6.2): the 3m+1 tiles minus one joker are m complete sets.

    The other jokers stay wild inside the sets, so every drawn tile wins with
    the removed joker as its pair partner.
    """
    cm, cp, cs, cz, n, k, pairs, singles = _scan(counts13, joker)
    if k < 1 or n % 3 != 1:
        return False
    return _distance_codes(cm, cp, cs, cz, (n - 1) // 3, 0, joker < 0, tabs) <= k - 1


@njit(cache=True, inline="always")
def _shanten_classes(km, kp, ks, kz, n, k, pairs, singles, strict, tabs):
    """:func:`_shanten_from` with the suits given by class ids (:func:`_class_ids`)."""
    return _shanten_of_distance(_distance_classes(km, kp, ks, kz, (n - 1) // 3, 1, strict, tabs), n, k, pairs,
                                singles)


@njit(cache=True, inline="always")
def _changed(t, delta, counts, joker, cm, cp, cs, cz, km, kp, ks, kz, k, pairs, singles, tabs):
    """What :func:`_scan` and :func:`_class_ids` say after adding ``delta`` (+-1) tiles of kind ``t``:
    ``(km, kp, ks, kz, jokers, pairs, singles)``, from those values of ``counts`` (codes ``cm..cz``, class ids
    ``km..kz``, ``k`` jokers): one class lookup for a natural kind, none for the joker.  The caller evaluates
    the result at one call site (each inlined copy of the distance costs ~0.5 s of compile), at the price of
    recomputing both suit-pair rows per kind: for kernels that are compiled everywhere and run rarely."""
    if t == joker:
        return km, kp, ks, kz, k + delta, pairs, singles
    c = np.int64(counts[t])
    c2 = c + delta
    p2 = pairs - (c >> 1) + (c2 >> 1)
    s2 = singles - (c & 1) + (c2 & 1)
    if t < 9:
        return _suit_class(tabs, cm + delta * _POW5[t]), kp, ks, kz, k, p2, s2
    if t < 18:
        return km, _suit_class(tabs, cp + delta * _POW5[t - 9]), ks, kz, k, p2, s2
    if t < 27:
        return km, kp, _suit_class(tabs, cs + delta * _POW5[t - 18]), kz, k, p2, s2
    return km, kp, ks, np.int64(tabs[OFF_HONOR_CLASS + cz + delta * _POW5[t - 27]]), k, p2, s2


@njit(cache=True)
def _shanten_each_change(counts, joker, tabs, delta, out):
    """Shanten after adding (``delta = 1``) or removing (``delta = -1``) one tile of each kind.

    ``out: int64[34]``: ``out[t]`` is the shanten of ``counts`` with one more
    (fewer) ``t``, or 99 where that is impossible (four held / none held).
    Incremental: the four class ids are read once and only the changed
    suit's is read again per kind, so all 34 cost about as much as a few
    full evaluations (used by the bots and effective tiles).  The kinds to
    evaluate are the bits of one mask, visited lowest first: no branch on
    each kind's count (a removal touches only the ~11 kinds held).  Kernels
    pass ``delta`` as ``np.int64(-1)`` / ``np.int64(1)``: a bare constant types as a
    literal and compiles a copy of this kernel per value (3 s each, cold).
    """
    cm, cp, cs, cz, n, k, pairs, singles = _scan(counts, joker)
    strict = joker < 0
    km, kp, ks, kz = _class_ids(cm, cp, cs, cz, tabs)
    n2 = n + delta
    todo = np.int64(0)
    for t in range(34):
        c = np.int64(counts[t])
        todo |= np.int64(c < 4 if delta > 0 else c > 0) << t
        out[t] = 99
    while todo != 0:
        t = np.int64(trailing_zeros(todo))
        todo &= todo - 1
        if t == joker:
            out[t] = _shanten_classes(km, kp, ks, kz, n2, k + delta, pairs, singles, strict, tabs)
            continue
        # a call site per suit (not one through _changed): the other suits' pair row stays loop-invariant
        c = np.int64(counts[t])
        c2 = c + delta
        p2 = pairs - (c >> 1) + (c2 >> 1)
        s2 = singles - (c & 1) + (c2 & 1)
        if t < 9:
            v = _shanten_classes(_suit_class(tabs, cm + delta * _POW5[t]), kp, ks, kz, n2, k, p2, s2, strict, tabs)
        elif t < 18:
            v = _shanten_classes(km, _suit_class(tabs, cp + delta * _POW5[t - 9]), ks, kz, n2, k, p2, s2, strict,
                                 tabs)
        elif t < 27:
            v = _shanten_classes(km, kp, _suit_class(tabs, cs + delta * _POW5[t - 18]), kz, n2, k, p2, s2, strict,
                                 tabs)
        else:
            v = _shanten_classes(km, kp, ks, np.int64(tabs[OFF_HONOR_CLASS + cz + delta * _POW5[t - 27]]), n2, k,
                                 p2, s2, strict, tabs)
        out[t] = v


#: bits of the suited kinds (0..26), of each suit's first kind and of its last
_SUITED = (1 << 27) - 1
_FIRST = (1 << 0) | (1 << 9) | (1 << 18)
_LAST = (1 << 8) | (1 << 17) | (1 << 26)


@njit(cache=True, inline="always")
def _near(held):
    """Bit mask of the kinds that can join the kinds of bit mask ``held`` in a set or a pair: those kinds,
    and the suited kinds one or two away from one of them in its suit.  A kind outside it cannot complete
    a hand (standard form or seven pairs) that holds none of it and no joker, but for a joker kind (wild:
    add it; a held joker can join any kind)."""
    s = held & _SUITED
    up1 = (s << 1) & _SUITED & ~_FIRST
    up2 = (s << 2) & _SUITED & ~(_FIRST | (_FIRST << 1))
    dn1 = (s >> 1) & ~_LAST
    dn2 = (s >> 2) & ~(_LAST | (_LAST >> 1))
    return held | up1 | up2 | dn1 | dn2


@njit(cache=True)
def _changes_compact(counts, joker, tabs, delta, todo, limit, out):
    """:func:`_shanten_each_change` over the kinds of the bit mask ``todo`` only, lowest first, stopping
    once ``limit`` of them leave a complete hand (shanten -1): ``out[t]`` the shanten after adding
    (``delta = 1``) or removing (``-1``) one ``t``, for the kinds of ``todo`` it reached (others untouched);
    returns how many of those are complete.

    ``todo`` holds kinds that can change (fewer than four copies to add, at least one to remove); pass
    draws through :func:`_near` of the held kinds to skip kinds that cannot complete the hand.  Each kind
    is evaluated at one call site (:func:`_changed`): about 1 s of compile against 3 s, and ~1.4x the
    time per kind.  For the engine's rarely run checks (a rule set's readiness declarations), which the
    play kernel compiles for every rule set.
    """
    cm, cp, cs, cz, n, k, pairs, singles = _scan(counts, joker)
    strict = joker < 0
    km, kp, ks, kz = _class_ids(cm, cp, cs, cz, tabs)
    n2 = n + delta
    found = 0
    while todo != 0 and found < limit:
        t = np.int64(trailing_zeros(todo))
        todo &= todo - 1
        a, b, e, z, k2, p2, s2 = _changed(t, delta, counts, joker, cm, cp, cs, cz, km, kp, ks, kz, k, pairs,
                                          singles, tabs)
        v = _shanten_classes(a, b, e, z, n2, k2, p2, s2, strict, tabs)
        out[t] = v
        found += np.int64(v < 0)
    return found


@njit(cache=True)
def _shanten_batch(counts, joker, tabs, out):
    """Fill ``out: int8[n]`` with the shanten of each row of ``counts: uint8[n, 34]``."""
    counts, tabs, out = borrowed((counts, tabs, out))  # no reference count per row (caishen.sim.borrow)
    for r in range(counts.shape[0]):
        # spelled out rather than via _shanten: measurably faster in numba 0.6x
        cm, cp, cs, cz, n, k, pairs, singles = _scan(counts[r], joker)
        out[r] = _shanten_from(cm, cp, cs, cz, n, k, pairs, singles, joker < 0, tabs)


@njit(cache=True)
def _shanten_standard_batch(counts, joker, tabs, out):
    counts, tabs, out = borrowed((counts, tabs, out))
    for r in range(counts.shape[0]):
        out[r] = _shanten_standard(counts[r], joker, tabs)


@njit(cache=True)
def _is_win_batch(counts, joker, tabs, out):
    """Fill ``out: bool[n]`` with the win test of each row of ``counts: uint8[n, 34]``."""
    counts, tabs, out = borrowed((counts, tabs, out))
    for r in range(counts.shape[0]):
        out[r] = _is_win(counts[r], joker, tabs)


@njit(cache=True)
def _effective_kinds(counts, joker, tabs, out, after):
    """Mark in ``out: bool[34]`` the kinds whose draw lowers the shanten of a 3m+1 hand.

    Kinds with four copies in the hand are never marked.  ``after: int64[34]``: scratch.  Returns the
    current shanten.
    """
    base = _shanten(counts, joker, tabs)
    _shanten_each_change(counts, joker, tabs, np.int64(1), after)
    for t in range(34):
        out[t] = after[t] < base
    return base


@njit(cache=True)
def _effective_batch(counts, joker, tabs, out):
    """Fill ``out: bool[n, 34]`` with the effective kinds of each 3m+1 row of ``counts: uint8[n, 34]``.

    Rows of ``counts`` are modified temporarily and restored.
    """
    after = np.empty(34, np.int64)  # not borrowed: the kernel's own array (numba frees it at its last use)
    counts, tabs, out = borrowed((counts, tabs, out))
    for r in range(counts.shape[0]):
        _effective_kinds(counts[r], joker, tabs, out[r], after)


@njit(cache=True, inline="always")
def _over4(x):
    """Nonzero when a byte of ``x: uint64`` exceeds 4 (SWAR: the low seven bits plus 123 carry into the
    top bit exactly when they exceed 4, and no byte carries into the next; a byte of 128 or more has it)."""
    return (((x & _HALF) + _ADD123) | x) & _HIGH


@njit(cache=True, inline="always")
def _row_fault(row, need):
    """0 if ``row: uint8[34]`` is a hand the batch APIs accept, else the fault.

    ``need``: the required tiles mod 3 (1 for 3m+1 rows) or -1 for 3m+1 or
    3m+2.  Faults: 1 a count over 4, 2 a size that is not 3m+1 / 3m+2 (at
    most 14), 3 a size not ``need`` mod 3.  The public batch APIs run this
    inside the kernel's loop, so checking costs four word loads and no numpy
    temporaries (issue 11 item 4), the words of :func:`_scan`.
    """
    xm = _load8(row, 0)
    xp = _load8(row, 9)
    xs = _load8(row, 18)
    xz = _load8(row, 26)  # kinds 26..33: kind 26 (9s) is read here
    m9 = np.int64(row[8])
    p9 = np.int64(row[17])
    if (_over4(xm) | _over4(xp) | _over4(xs) | _over4(xz)) != 0 or m9 > 4 or p9 > 4:
        return 1
    n = _byte_sum(xm + xp + xs + xz) + m9 + p9
    if n > 14 or n % 3 == 0:
        return 2
    if need >= 0 and n % 3 != need:
        return 3
    return 0


@njit(cache=True)
def _shanten_batch_checked(counts, joker, tabs, out):
    """:func:`_shanten_batch` that stops at the first bad row: returns its index, or -1 if all are good."""
    counts, tabs, out = borrowed((counts, tabs, out))  # no reference count per row (caishen.sim.borrow)
    strict = joker < 0
    for r in range(counts.shape[0]):
        if _row_fault(counts[r], -1) != 0:
            return r
        cm, cp, cs, cz, n, k, pairs, singles = _scan(counts[r], joker)
        out[r] = _shanten_from(cm, cp, cs, cz, n, k, pairs, singles, strict, tabs)
    return -1


@njit(cache=True)
def _is_win_batch_checked(counts, joker, tabs, out):
    """:func:`_is_win_batch` that stops at the first bad row: returns its index, or -1."""
    counts, tabs, out = borrowed((counts, tabs, out))
    for r in range(counts.shape[0]):
        if _row_fault(counts[r], -1) != 0:
            return r
        out[r] = _is_win(counts[r], joker, tabs)
    return -1


@njit(cache=True)
def _effective_batch_checked(counts, joker, tabs, out):
    """:func:`_effective_batch` on 3m+1 rows that stops at the first bad row: returns its index, or -1."""
    after = np.empty(34, np.int64)  # not borrowed (as in _effective_batch)
    counts, tabs, out = borrowed((counts, tabs, out))
    for r in range(counts.shape[0]):
        if _row_fault(counts[r], 1) != 0:
            return r
        _effective_kinds(counts[r], joker, tabs, out[r], after)
    return -1


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


def shanten_standard(counts, joker: int = -1) -> int:
    """Standard-form shanten (m sets + a pair) of ``counts: uint8[34]``; -1 = complete.

    Raises ``ValueError`` for bad counts, a bad joker or a tile count that is
    not 3m+1 / 3m+2 (at most 14).
    """
    c, j, _ = _check_hand(counts, joker)
    return int(_shanten_standard(c, j, hand_tables()))


def shanten_seven_pairs(counts, joker: int = -1) -> int:
    """Seven-pairs shanten (four of a kind = two pairs, jokers wild) of 13 or 14 tiles.

    Raises ``ValueError`` for other sizes.
    """
    c, j, n = _check_hand(counts, joker)
    if n not in (13, 14):
        raise ValueError(f"seven pairs needs a 13 or 14 tile hand, got {n} tiles")
    return int(_shanten_seven_pairs(c, j))


def shanten(counts, joker: int = -1) -> int:
    """Shanten of ``counts: uint8[34]``: min of standard and (13/14 tiles) seven pairs.

    -1 means complete, 0 ready (tenpai).  ``joker``: wildcard kind or -1.
    Raises ``ValueError`` for bad counts or tile count.
    """
    c, j, _ = _check_hand(counts, joker)
    return int(_shanten(c, j, hand_tables()))


def is_win_standard(counts, joker: int = -1) -> bool:
    """True if the 3m+2 tiles are m sets + a pair (jokers wild)."""
    c, j, _ = _check_hand(counts, joker, "complete")
    return bool(_is_win_standard(c, j, hand_tables()))


def is_seven_pairs(counts, joker: int = -1) -> bool:
    """True if the 14 tiles are seven pairs (four of a kind = two pairs, jokers wild)."""
    c, j, _ = _check_hand(counts, joker, "complete")
    return bool(_is_seven_pairs(c, j))


def is_win(counts, joker: int = -1) -> bool:
    """True if the 3m+2 concealed tiles are complete: standard or (14 tiles) seven pairs.

    Hand shape only; rule-set restrictions (e.g. K-2.4) are applied
    by :mod:`caishen.sim.rules`.  Raises ``ValueError`` for a 3m+1 hand or bad counts.
    """
    c, j, _ = _check_hand(counts, joker, "complete")
    return bool(_is_win(c, j, hand_tables()))


def is_baotou(counts13, joker: int) -> bool:
    """爆头 (敲响) shape, K-6.2: the 3m+1 tiles minus one joker form complete sets.

    ``counts13: uint8[34]`` is the concealed hand before the draw.  Returns
    False when it holds no joker.  Raises ``ValueError`` for a 3m+2 hand.
    """
    c, j, _ = _check_hand(counts13, joker, "ready")
    return bool(_is_baotou(c, j, hand_tables()))


def waits(counts, joker: int = -1) -> list[int]:
    """Kinds that complete the 3m+1 hand ``counts: uint8[34]`` (sorted kind indices).

    A kind already held four times is not a wait.  When the hand is ready
    and a joker kind is given, drawing a joker completes it too, so the joker
    kind is listed.  Raises ``ValueError`` for a 3m+2 hand.
    """
    c, j, _ = _check_hand(counts, joker, "ready")
    tabs = hand_tables()
    out = []
    for t in range(34):
        if c[t] >= 4:
            continue
        c[t] += 1
        if _is_win(c, j, tabs):
            out.append(t)
        c[t] -= 1
    return out


def _check_seen(c: np.ndarray, vis: np.ndarray) -> None:
    """Raise ``ValueError`` naming the first kind of which ``c`` (held) and ``vis`` (visible) make more than 4."""
    over = np.flatnonzero(c.astype(int) + vis > 4)
    if over.size:
        k = int(over[0])
        raise ValueError(f"{_tiles.kind_name(k)}: {int(c[k])} held + {int(vis[k])} visible is more than 4")


def effective_tiles(counts, joker: int = -1, visible=None) -> list[tuple[int, int]]:
    """Effective tiles (ukeire) of a 3m+1 hand: ``[(kind, live copies), ...]``.

    A kind is effective if drawing it lowers the shanten.  Live copies are
    ``4 - held - visible`` (``visible: uint8[34]``, tiles seen elsewhere:
    discards, exposed melds).  Raises ``ValueError`` for a 3m+2 hand or when
    held + visible exceeds 4 for a kind.
    """
    c, j, _ = _check_hand(counts, joker, "ready")
    vis = np.zeros(34, np.uint8) if visible is None else _tiles.check_counts(visible)
    _check_seen(c, vis)
    mark = np.zeros(34, np.bool_)
    _effective_kinds(c, j, hand_tables(), mark, np.empty(34, np.int64))
    return [(int(t), int(4 - c[t] - vis[t])) for t in np.flatnonzero(mark)]


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
    j = _tiles.check_joker(joker)
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
    c, c13 = _tiles.parse("123456789m1234p"), _tiles.parse("123456789m123p4s")
    for j in (-1, _tiles.CAISHEN):
        shanten(c, j)
        waits(c13, j)
        effective_tiles(c13, j)
        shanten_batch(np.stack([c]), j)
        is_win_batch(np.stack([c]), j)
        effective_tiles_batch(np.stack([c13]), j)
