"""The numba kernels behind :mod:`caishen.sim.hand`: shanten, win test, waits, effective tiles, 爆头.

The hand conventions (``counts: uint8[34]`` of the concealed tiles, ``joker``
-1 or a kind, a fifth copy only with a joker) are those of
:mod:`caishen.sim.hand`, whose public functions check their input and call
these.  The ``_underscore`` kernels do no validation and are what the engine,
the rule sets and the bots call from compiled code, with ``tabs =
caishen.sim.tables.hand_tables()`` passed through as an argument.  Only the
innermost helpers (``_scan``, ``_distance_codes``, ``_shanten_from``) are
inlined at numba level (``inline="always"``); the kernels other modules call
are not, because numba-level inlining at every call site multiplies compile
time.  The checked batch kernels (``_*_batch_checked``) and the one-hand
query (:func:`_query` and its two readers) check each hand inside the same
numba call and report a bad one, for the public functions to name.

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

from caishen.sim.borrow import borrowed
from caishen.sim.tiles import MELD_CHOW, MELD_PONG
from caishen.sim.tables import H_NH, H_NS, OFF_HONOR_CLASS, OFF_PAIRS, OFF_SUIT_CLASS

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
def _changed(t, delta, counts, joker, codes, ids, k, pairs, singles, tabs):
    """What :func:`_scan` and :func:`_class_ids` say after adding ``delta`` (+-1) tiles of kind ``t``:
    ``(km, kp, ks, kz, jokers, pairs, singles)``, from those values of ``counts`` (``codes``: the suits' codes
    ``(cm, cp, cs, cz)``, ``ids``: their class ids ``(km, kp, ks, kz)``, ``k`` jokers): one class lookup for a
    natural kind, none for the joker.  The caller evaluates the result at one call site (each inlined copy of
    the distance costs ~0.5 s of compile), at the price of recomputing both suit-pair rows per kind: for
    kernels that are compiled everywhere and run rarely."""
    cm, cp, cs, cz = codes
    km, kp, ks, kz = ids
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
        a, b, e, z, k2, p2, s2 = _changed(t, delta, counts, joker, (cm, cp, cs, cz), (km, kp, ks, kz), k, pairs,
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


# ---------------------------------------------------------------- the one-hand query

#: what :func:`_query` answers (its ``op``): shanten, standard-form shanten, seven-pairs shanten, the win test,
#: the standard-form win test, seven pairs, 爆头, the waits (bit mask), the effective kinds (bit mask)
Q_SHANTEN, Q_STANDARD, Q_SEVEN_PAIRS, Q_WIN, Q_WIN_STANDARD, Q_IS_SEVEN_PAIRS, Q_BAOTOU, Q_WAITS, Q_EFFECTIVE = range(9)
#: :func:`_query`'s answer for a hand or joker it refuses; every answer to a good one is -1 or more
FAULT = -1000
#: the size of ``marshal.dumps(x, 2)`` of a list or tuple ``x`` of 34 ints in -2**31..2**31-1: a type byte
#: (``[`` or ``(``), the length (int32), then per element the byte ``i`` and an int32 (all little-endian)
MARSHAL_34 = 5 + 34 * 5


@njit(cache=True)
def _query(c, joker, op, tabs):
    """One answer about the hand ``c: uint8[34]`` (C-contiguous) for the public functions of
    :mod:`caishen.sim.hand`: ``op`` one of ``Q_*`` -> ``int64``: a shanten, 0/1 for a test, or a bit
    mask of kinds (``Q_WAITS``: the kinds whose draw completes the 3m+1 hand; ``Q_EFFECTIVE``: those whose
    draw lowers its shanten; a kind held four times is in neither).

    Returns :data:`FAULT` for a joker outside -1..33, a count over 4, a size that is not 3m+1 / 3m+2 (at
    most 14), and a size the question does not take (3m+2 for the win tests, 3m+1 for 爆头, waits and
    effective tiles, 13 or 14 tiles for the seven-pairs shanten): the caller then names what is wrong.
    Allocates a 34-entry scratch for ``Q_WAITS`` / ``Q_EFFECTIVE`` only.
    """
    need = -1
    if op == Q_WIN or op == Q_WIN_STANDARD or op == Q_IS_SEVEN_PAIRS:
        need = 2
    elif op == Q_BAOTOU or op == Q_WAITS or op == Q_EFFECTIVE:
        need = 1
    if joker < -1 or joker > 33 or _row_fault(c, need) != 0:
        return FAULT
    if op == Q_SHANTEN:
        return _shanten(c, joker, tabs)
    if op == Q_STANDARD:
        return _shanten_standard(c, joker, tabs)
    if op == Q_SEVEN_PAIRS:
        cm, cp, cs, cz, n, k, pairs, singles = _scan(c, joker)
        return _seven_pairs_from(k, pairs, singles) if n >= 13 else FAULT
    if op == Q_WIN:
        return np.int64(_is_win(c, joker, tabs))
    if op == Q_WIN_STANDARD:
        return np.int64(_is_win_standard(c, joker, tabs))
    if op == Q_IS_SEVEN_PAIRS:
        return np.int64(_is_seven_pairs(c, joker))
    if op == Q_BAOTOU:
        return np.int64(_is_baotou(c, joker, tabs))
    if op != Q_WAITS and op != Q_EFFECTIVE:
        return FAULT
    after = np.empty(34, np.int64)
    _shanten_each_change(c, joker, tabs, np.int64(1), after)
    below = np.int64(0) if op == Q_WAITS else _shanten(c, joker, tabs)  # a wait leaves shanten -1
    mask = np.int64(0)
    for t in range(34):
        mask |= np.int64(after[t] < below) << t
    return mask


@njit(cache=True)
def _query_array(src, joker, op, tabs):
    """:func:`_query` of a hand given as a 1-d integer array ``src`` of any layout (the public functions
    compile it for ``uint8`` and ``int64`` rows): :data:`FAULT` unless it holds 34 counts in 0..4."""
    if src.shape[0] != 34:
        return FAULT
    c = np.empty(34, np.uint8)
    bad = False
    for t in range(34):
        x = src[t]
        bad |= (x < 0) | (x > 4)
        c[t] = x
    if bad:
        return FAULT
    return _query(c, joker, op, tabs)


@njit(cache=True)
def _query_marshal(data, joker, op, tabs):
    """:func:`_query` of a hand given as ``marshal.dumps(counts, 2)`` of a list or tuple: ``data: bytes``
    (:data:`MARSHAL_34`).  :data:`FAULT` unless it is 34 elements that are all exact ``int`` in 0..4: a bool
    (``T``, ``F``), a float, ``None`` or any other object has another type byte, and a negative or large
    int nonzero high bytes, so only such lists pass, with one C-level pass in ``marshal`` to read them.
    """
    if len(data) != MARSHAL_34 or (data[0] != 0x5B and data[0] != 0x28) or data[1] != 34:  # '[' / '(', 34
        return FAULT
    bad = np.int64(data[2] | data[3] | data[4])
    c = np.empty(34, np.uint8)
    for t in range(34):
        p = 5 + 5 * t
        bad |= np.int64(data[p] ^ 0x69) | np.int64(data[p + 2] | data[p + 3] | data[p + 4])  # 'i', high bytes 0
        c[t] = data[p + 1]
    if bad != 0:
        return FAULT
    return _query(c, joker, op, tabs)
