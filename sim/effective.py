"""Effective tiles of every discard of a hand at once: the bots' tie-break and feature, exact and fast.

A bot on its turn holds a 3m+2 concealed hand ``h`` and asks, for some of its
discards ``k``, how many live tiles would lower the shanten of ``h - k``
(the live effective tiles of :func:`caishen.sim.hand.effective_tiles`).  Asked
one discard at a time that is 34 shanten evaluations per discard
(:func:`caishen.sim.hand._shanten_each_change`); greedy asks it of every
discard tied on shanten, about five a turn, and spent 70% of its time there.
The kernels here share the work between the discards:

- **Distance rows and their min-plus products.** The standard form's
  distance ``D`` (:mod:`caishen.sim.hand`) is a min-plus product of the four
  suits' rows (``row[2j + p]``: tiles to add to the suit for ``j`` sets and
  ``p`` pairs; :func:`caishen.sim.tables.class_rows`).  Per turn the products
  of every two suits (``H``) and of every three (``E``) are formed once.
  Discarding ``k`` changes one suit's row (``A``, the suit of ``k``): the
  distance of ``h - k`` is one product of the new row with ``E[A]``, and since a
  discard raises each entry by 0 or 1, it is ``h``'s distance while some split
  reaching that distance keeps its entry in ``A`` (a mask test, below), else one more.
- **Which splits are optimal.** Drawing ``t`` lowers a suit's row entries by
  0 or 1 (a bit mask ``delta(t)`` of the entries it lowers).  So ``t`` lowers
  the distance of ``h - k`` exactly when some split of the sets and the pair
  among the suits that reaches the distance gives ``t``'s suit an entry in
  ``delta(t)``: per discard, one 10-bit mask per suit of the entries used by
  optimal splits (a product of the new row with ``H``), then a bit test per
  draw.  Draws into ``A`` itself are looked up (the row after both changes).
- **Seven pairs and jokers** are counts: pairs, singles and jokers after the
  discard and the draw, as :func:`caishen.sim.hand._seven_pairs_from`.  A
  drawn joker lowers the standard form's shanten by one, always.
- **The shanten of each discard first** (:func:`_shanten_each_discard`): the
  rows and products are what the shanten of every ``h - k`` needs too (per held
  kind one class lookup and the mask test: the row after the discard against
  ``h``'s optimal entries of its suit), so a bot asks for those shanten here and
  the counting kernels reuse the rows: one setup per turn for both.
- **What a turn shares with the last ones.** The draws' masks ``delta(t)`` of a suit depend on
  its code alone, and between a seat's turns most suits' codes are the same: a memo in the scratch,
  keyed by the code (:func:`_draws_entry`), answers them without the 2 MB class table (the counts'
  own-suit draws read the memo of the code after the discard, often the next turn's code).
  Within a turn, two discards leaving their suit the same row share the other suits' masks and
  counts; and a discard leaving unchanged every entry of its suit's row that ``h``'s optimal
  splits use (the others can only rise) has ``h``'s own (the usual case: a tile no optimal split
  needs).
- **Greedy's choice, by branch and bound** (:func:`_best_effective`): greedy
  wants the discard with the most live effective tiles (ties: the later
  kind), not every count.  If ``h - k`` keeps ``h``'s distance, a draw
  effective for it is effective for ``h`` (removing a tile never lowers the
  distance), and ``k`` itself is not; that bounds each discard's count, and
  a discard whose bound cannot beat the best so far is never counted (about
  half of them, in greedy self-play).

Exactness: ``tests/test_effective.py`` compares both kernels with the
one-discard-at-a-time count (and that with the pure-Python reference of the
hand kernels) on random and structured hands of every size, with and
without a joker, holding kinds four times; the golden runs
(``tests/test_golden.py``) pin every bot's play.

Scratch: the kernels take ``w: int64[N_SCRATCH]`` from the caller (the bots
pass rows of their work matrix, :func:`caishen.sim.bots.policies.new_work`), so a
call allocates nothing.  It holds the memo from call to call: zero it once before its first use
(``np.zeros``, as ``new_work`` does) and use it with one hand table.  ``want`` is a bit mask of
kinds (bit ``k``: discard ``k``), each held in ``h``; ``after[k]`` the shanten of ``h - k``, from :func:`_shanten_each_discard`
(equal to :func:`caishen.sim.hand._shanten_each_change` with ``delta = -1``), which also leaves
the rows in ``w`` that the counting kernels read; ``live: int64[34]`` the copies of each kind the
seat cannot see.
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np
from numba import njit

from numba.cpython.unsafe.numbers import trailing_zeros

from caishen.sim.hand import _POW5, _load8, _scan, _seven_pairs_from, _shanten_of_distance
from caishen.sim.tables import H_NS, OFF_HONOR_CLASS, OFF_SUIT_CLASS, class_rows

__all__ = ["N_SCRATCH"]

#: an entry no split can reach (the rows' values are at most 14)
_INF = 100
#: a bound that is never cut (a discard whose count has no cheap bound)
_NO_BOUND = 1 << 20
#: gathers bit 0 of each byte of a word into one byte (byte i to bit i)
_GATHER = np.uint64(0x0102040810204080)

# the scratch layout (int64 offsets into ``w``)
_R = 0  # 4 x 10: the suits' rows
_H = 40  # 6 x 10: the product of the two suits other than a pair {a, b} (:func:`_pair_id`)
_E = 100  # 4 x (10 _INF, then 10): the product of the three suits other than a, read backwards from the end
_EB = 180  # 10 _INF, then 10: a product of one discard's (scratch)
_DM = 200  # 34: delta(t) of each draw (0: not drawable, not live, or the joker); bit _IN_T: t lowers D of h
_KC = 234  # 34: the row offset of suit A after discarding k
_BM = 268  # 4: the union of delta(t) over the suit's draws
_MB = 272  # 4: one discard's masks of the entries its optimal splits use
_CODE = 276  # 4: the suits' base-5 codes
_UB = 280  # 34: the discards' bounds as sort keys (branch and bound)
_RO = 314  # 4: the offsets of the suits' rows in the table
_LP = 318  # 2: live tiles of the natural kinds h holds an odd / even number of (fewer than four)
_M0 = 320  # 4: h's masks of the entries its optimal splits use, per suit
_U0 = 324  # 4: the live tiles of each suit's draws that lower the distance of h
_HD = 328  # 1: bit p: H of pair p is formed (the others on first use, :func:`_other_two`)
_ST = 329  # 6: h's distance, top, sevens, jokers, pairs, singles (:func:`_shanten_each_discard`)
_DK = 335  # 34: the distance of h - k for each held kind k (:func:`_shanten_each_discard`)
#: entries of the draws memo (a power of two, :func:`_draws_entry`), and words per entry: key + 1 (0:
#: empty), then per kind of the suit the entries of its row that a draw of it lowers (0: four held)
_N_MEMO = 256
_MW_WORDS = 10
_MW = 369  # the draws memo
#: 4 x 6: per suit a, the row offset after the discard of a counted last this turn (-1: none), the
#: other suits' masks of the entries optimal splits use (4) and their live effective tiles (:func:`_count`)
_RC = _MW + _N_MEMO * _MW_WORDS
#: int64 words of scratch the kernels need
N_SCRATCH = _RC + 24
#: the memo's hash multiplier (Fibonacci hashing) and the shift to its index bits
_HASH = np.uint64(0x9E3779B97F4A7C15)
_HASH_SHIFT = np.uint64(56)
#: bit of ``w[_DM + t]``: drawing t lowers the distance of h itself
_IN_T = 20


@njit(cache=True, inline="always")
def _suit(t):
    """The suit (0..2; honors 3) of kind ``t``."""
    return t // 9 if t < 27 else 3


@njit(cache=True, inline="always")
def _pair_id(a, b):
    """0..5: the index of the unordered pair of distinct suits ``{a, b}``."""
    if a > b:
        a, b = b, a
    return (0 if a == 0 else (2 if a == 1 else 3)) + b - 1


@njit(cache=True, inline="always")
def _row(tabs, rows, suit, code, strict):
    """Offset in ``tabs`` of the row of suit ``suit`` with base-5 code ``code`` (``strict``: the
    no-joker values); ``rows``: :func:`caishen.sim.tables.class_rows`."""
    if suit < 3:
        off = rows + np.int64(tabs[OFF_SUIT_CLASS + code]) * 20
    else:
        off = rows + (np.int64(tabs[H_NS]) + np.int64(tabs[OFF_HONOR_CLASS + code])) * 20
    return off + 10 if strict else off


@njit(cache=True, inline="always")
def _product(x, xo, y, yo, out, oo):
    """The min-plus product of two rows into ``out[oo:oo + 10]``: entry ``2j + p`` is the least
    ``x[2ja + pa] + y[2jb + pb]`` over ``ja + jb = j``, ``pa + pb = p`` (``j`` 0..4, ``p`` 0..1).
    Written out term by term: a loop here was a third slower."""
    x0 = np.int64(x[xo])
    x1 = np.int64(x[xo + 1])
    x2 = np.int64(x[xo + 2])
    x3 = np.int64(x[xo + 3])
    x4 = np.int64(x[xo + 4])
    x5 = np.int64(x[xo + 5])
    x6 = np.int64(x[xo + 6])
    x7 = np.int64(x[xo + 7])
    x8 = np.int64(x[xo + 8])
    x9 = np.int64(x[xo + 9])
    y0 = np.int64(y[yo])
    y1 = np.int64(y[yo + 1])
    y2 = np.int64(y[yo + 2])
    y3 = np.int64(y[yo + 3])
    y4 = np.int64(y[yo + 4])
    y5 = np.int64(y[yo + 5])
    y6 = np.int64(y[yo + 6])
    y7 = np.int64(y[yo + 7])
    y8 = np.int64(y[yo + 8])
    y9 = np.int64(y[yo + 9])
    out[oo] = x0 + y0
    out[oo + 1] = min(x1 + y0, x0 + y1)
    out[oo + 2] = min(x0 + y2, x2 + y0)
    out[oo + 3] = min(min(x1 + y2, x3 + y0), min(x0 + y3, x2 + y1))
    out[oo + 4] = min(min(x0 + y4, x2 + y2), x4 + y0)
    out[oo + 5] = min(min(min(x1 + y4, x3 + y2), min(x5 + y0, x0 + y5)), min(x2 + y3, x4 + y1))
    out[oo + 6] = min(min(x0 + y6, x2 + y4), min(x4 + y2, x6 + y0))
    out[oo + 7] = min(min(min(x1 + y6, x3 + y4), min(x5 + y2, x7 + y0)),
                      min(min(x0 + y7, x2 + y5), min(x4 + y3, x6 + y1)))
    out[oo + 8] = min(min(min(x0 + y8, x2 + y6), min(x4 + y4, x6 + y2)), x8 + y0)
    out[oo + 9] = min(min(min(min(x1 + y8, x3 + y6), min(x5 + y4, x7 + y2)), x9 + y0),
                      min(min(min(x0 + y9, x2 + y7), min(x4 + y5, x6 + y3)), x8 + y1))


@njit(cache=True, inline="always")
def _other_two(w, a, b):
    """Offset of ``H`` of the pair of suits ``{a, b}``: the product of the other two suits' rows, formed
    on first use."""
    p = _pair_id(a, b)
    if not (w[_HD] >> p) & 1:
        c = 0
        while c == a or c == b:
            c += 1
        _product(w, _R + 10 * c, w, _R + 10 * (6 - a - b - c), w, _H + 10 * p)
        w[_HD] |= 1 << p
    return _H + 10 * p


@njit(cache=True, inline="always")
def _lowered(tabs, ao, bo):
    """Bit mask of the entries ``i`` (0..9) where row ``tabs[bo:]`` is below row ``tabs[ao:]``: the
    entries a draw lowers.  A draw lowers an entry by at most one and raises none, so the bytes'
    difference is 0 or 1 with no borrow: two word loads, a subtraction and a gather of the bits."""
    lo = _load8(tabs, ao) - _load8(tabs, bo)  # entries 0..7
    hi = (_load8(tabs, ao + 2) - _load8(tabs, bo + 2)) >> np.uint64(48)  # entries 8, 9
    return np.int64(((lo * _GATHER) >> np.uint64(56)) | (((hi * _GATHER) >> np.uint64(56)) << np.uint64(8)))


@njit(cache=True)
def _fill_draws(tabs, rows, w, e, suit, code, strict):
    """Write the draws memo entry at ``w[e:]`` of suit ``suit`` (honors: 3) with base-5 code ``code``
    (``strict``: the no-joker rows): per kind ``i`` of the suit, the entries of the suit's row that a
    draw of it lowers (:func:`_lowered`; 0 if four are held)."""
    ro = _row(tabs, rows, suit, code, strict)
    c = code
    for i in range(9 if suit < 3 else 7):
        digit = c % 5
        c //= 5
        w[e + 1 + i] = _lowered(tabs, ro, _row(tabs, rows, suit, code + _POW5[i], strict)) if digit < 4 else 0


@njit(cache=True, inline="always")
def _draws_entry(tabs, rows, w, suit, code, strict):
    """Offset in ``w`` of the draws memo entry of suit ``suit`` with base-5 code ``code``, filled by
    :func:`_fill_draws` on a miss (direct-mapped by a hash of the code).  A suit's code changes by a
    tile or two between a seat's turns, so most turns find most suits here instead of looking up
    each draw's row in the 2 MB class table.  The next call may overwrite the entry: read it first."""
    key = ((np.int64(suit == 3) * 1953125 + code) << 1) | np.int64(strict)
    e = _MW + _MW_WORDS * np.int64((np.uint64(key) * _HASH) >> _HASH_SHIFT)
    if w[e] != key + 1:
        _fill_draws(tabs, rows, w, e, suit, code, strict)
        w[e] = key + 1
    return e + 1


@njit(cache=True, inline="always")
def _optimal(x, xo, y, ye, d):
    """Bit mask of the entries ``i`` with ``x[xo + i] + y[ye - i] == d``: the splits reaching ``d``
    (``y`` read backwards from ``ye``, the entry that completes ``i`` to the ``m`` sets and the pair)."""
    mb = 0
    for i in range(10):
        mb |= np.int64(np.int64(x[xo + i]) + y[ye - i] == d) << i
    return mb


@njit(cache=True)
def _shanten_each_discard(h, joker, tabs, after, w):
    """The shanten of each ``h - k`` into ``after``, and the per-turn rows the counting kernels reuse.

    ``h: uint8[34]`` a 3m+2 concealed hand; ``after: int64[34]``: ``after[k]`` the shanten of ``h``
    less one ``k`` (standard form and seven pairs, as :func:`caishen.sim.hand._shanten_each_change`
    with ``delta = -1``), 99 for a kind not held; ``w: int64[>= N_SCRATCH]``.  Per turn the suits'
    rows, the products of every three suits (``E``) and the entries of each suit's row that the
    optimal splits use are formed once; each held kind then costs one class lookup and a mask test
    (the distance of ``h - k`` is ``h``'s unless the discard raises every optimal entry of its suit).
    Leaves in ``w`` what :func:`_effective_each` and :func:`_best_effective` read (their callers
    call this first, on the same ``h``).
    """
    cm, cp, cs, cz, n, kj, pairs, singles = _scan(h, joker)
    strict = joker < 0
    rows = class_rows(tabs)
    top = 2 * ((n - 1) // 3) + 1
    sevens = n - 1 >= 13
    w[_CODE] = cm
    w[_CODE + 1] = cp
    w[_CODE + 2] = cs
    w[_CODE + 3] = cz
    # the class lookups first, independent loads of the large class-id table
    o0 = _row(tabs, rows, 0, cm, strict)
    o1 = _row(tabs, rows, 1, cp, strict)
    o2 = _row(tabs, rows, 2, cs, strict)
    o3 = _row(tabs, rows, 3, cz, strict)
    held = np.int64(0)
    for k in range(34):
        held |= np.int64(h[k] != 0) << k
        after[k] = 99
    todo = held & ~(np.int64(1) << joker) if joker >= 0 else held
    t = todo
    while t != 0:  # the discards' rows, more independent lookups
        k = np.int64(trailing_zeros(t))
        t &= t - 1
        a = _suit(k)
        w[_KC + k] = _row(tabs, rows, a, w[_CODE + a] - _POW5[k - 9 * a], strict)
    w[_RO] = o0
    w[_RO + 1] = o1
    w[_RO + 2] = o2
    w[_RO + 3] = o3
    for i in range(10):
        w[_R + i] = tabs[o0 + i]
        w[_R + 10 + i] = tabs[o1 + i]
        w[_R + 20 + i] = tabs[o2 + i]
        w[_R + 30 + i] = tabs[o3 + i]
    # the products in loops, one inlined copy each: six copies cost ~2 s of the first run's compile
    for j in range(2):  # H{0, 1} = suits 2 x 3, H{2, 3} = suits 0 x 1
        _product(w, _R + 20 * (1 - j), w, _R + 20 * (1 - j) + 10, w, _H + 50 * j)
    w[_HD] = 1 | (1 << 5)  # the other four when a discard first needs them
    for i in range(10):
        for a in range(4):
            w[_E + 20 * a + i] = _INF
        w[_EB + i] = _INF
    for a in range(4):  # all but a: the other suit of a's pair times the other pair's H
        _product(w, _R + 10 * (a ^ 1), w, _H + 50 * (a >> 1), w, _E + 20 * a + 10)
    d = _INF
    for i in range(10):
        d = min(d, w[_R + i] + w[_E + 10 + top - i])
    for b in range(4):  # the entries of each suit's row that h's optimal splits use
        w[_M0 + b] = _optimal(w, _R + 10 * b, w, _E + 20 * b + 10 + top, d)
    w[_ST] = d
    w[_ST + 1] = top
    w[_ST + 2] = sevens
    w[_ST + 3] = kj
    w[_ST + 4] = pairs
    w[_ST + 5] = singles
    while todo != 0:
        k = np.int64(trailing_zeros(todo))
        todo &= todo - 1
        c = np.int64(h[k])
        a = _suit(k)
        # d or d + 1 (a discard raises each entry by 0 or 1): d while an optimal split of h keeps its entry
        dk = d + np.int64((_lowered(tabs, w[_KC + k], w[_RO + a]) & w[_M0 + a]) == w[_M0 + a])
        w[_DK + k] = dk
        after[k] = _shanten_of_distance(dk, n - 1, kj, pairs - (c >> 1) + ((c - 1) >> 1),
                                        singles - (c & 1) + ((c - 1) & 1))
    if joker >= 0 and h[joker] != 0:
        w[_DK + joker] = d  # the jokers are not in the rows: discarding one leaves the distance
        after[joker] = _shanten_of_distance(d, n - 1, kj - 1, pairs, singles)


class Setup(NamedTuple):
    """What :func:`_setup` says of a 3m+2 hand ``h``, read by each discard's count (:func:`_count`)."""

    d: int  #: the standard form's distance of ``h``
    u: int  #: the live tiles of the draws that lower it (a drawn joker included)
    top: int  #: the last row entry the ``m`` sets and the pair use (``2m + 1``)
    sevens: bool  #: seven pairs counts (13 tiles after a discard)
    kj: int  #: the jokers of :func:`caishen.sim.hand._scan`
    pairs: int  #: its pairs
    singles: int  #: its singles


@njit(cache=True)
def _setup(h, joker, tabs, live, w):
    """The per-turn part that needs the live tiles: draw masks, the base bound (after
    :func:`_shanten_each_discard` on the same ``h``, which leaves which splits are optimal).  Returns the
    :class:`Setup`.
    """
    d = w[_ST]
    top = w[_ST + 1]
    sevens = w[_ST + 2] != 0
    kj = w[_ST + 3]
    pairs = w[_ST + 4]
    singles = w[_ST + 5]
    strict = joker < 0
    rows = class_rows(tabs)
    u = 0
    odd = 0
    even = 0
    for b in range(4):  # one pass over each suit's draws, without branches on the data
        w[_RC + 6 * b] = -1
        e = _draws_entry(tabs, rows, w, b, w[_CODE + b], strict)
        mb = w[_M0 + b]
        lo = 9 * b
        bm = 0
        ub = 0
        for i in range(9 if b < 3 else 7):
            t = lo + i
            lt = live[t]
            natural = np.int64(t != joker)
            dm = w[e + i] * (np.int64(lt > 0) & natural)
            bm |= dm
            hit = np.int64((mb & dm) != 0)
            ub += lt * hit
            w[_DM + t] = dm | (hit << _IN_T)
            c = np.int64(h[t])
            use = natural & np.int64(c < 4)
            odd += lt * (use & c)
            even += lt * (use & (1 - (c & 1)))
        w[_BM + b] = bm
        w[_U0 + b] = ub
        u += ub
    if joker >= 0 and h[joker] < 4:
        u += live[joker]
    w[_LP] = odd
    w[_LP + 1] = even
    return Setup(d, u, top, sevens, kj, pairs, singles)


@njit(cache=True, inline="always")
def _discard(k, h, joker, w, kj, pairs, singles, sevens):
    """What the standard form and seven pairs say of ``h - k``: ``(dk, std, kjk, pk, sk, spk)``: its
    distance (kept by :func:`_shanten_each_discard`) and standard shanten, and its jokers, pairs, singles
    and seven-pairs shanten (99: not 13 tiles)."""
    if k == joker:
        kjk = kj - 1
        pk = pairs
        sk = singles
    else:
        c = np.int64(h[k])
        kjk = kj
        pk = pairs - (c >> 1) + ((c - 1) >> 1)
        sk = singles - (c & 1) + ((c - 1) & 1)
    spk = _seven_pairs_from(kjk, pk, sk) if sevens else 99
    dk = w[_DK + k]
    std = dk - kjk
    if std < 0:
        std = 0
    std -= 1
    return dk, std, kjk, pk, sk, spk


@njit(cache=True, inline="always")
def _seven_pairs_gains(kjk, pk, sk, spk):
    """Whether a draw lowers the seven-pairs shanten ``spk`` of ``h - k`` (``kjk`` jokers, ``pk`` pairs,
    ``sk`` singles): ``(even, odd, joker)``, a natural kind ``h - k`` holds an even number of (a new
    single), an odd number of (a new pair), or a joker.  Nothing else matters to seven pairs."""
    return (_seven_pairs_from(kjk, pk, sk + 1) < spk, _seven_pairs_from(kjk, pk + 1, sk - 1) < spk,
            _seven_pairs_from(kjk + 1, pk, sk) < spk)


@njit(cache=True, inline="always")
def _seven_pairs_live(k, h, joker, live, w, kjk, pk, sk, spk):
    """The live tiles whose draw lowers the seven-pairs shanten ``spk`` of ``h - k``: the sums by parity of
    :func:`_setup` (``w[_LP]``), with ``k`` moved to its parity in ``h - k``."""
    even_gain, odd_gain, joker_gain = _seven_pairs_gains(kjk, pk, sk, spk)
    odd = w[_LP]
    even = w[_LP + 1]
    if k != joker:
        c = np.int64(h[k])
        if c < 4:  # counted in h's sums: take it out
            if c & 1:
                odd -= live[k]
            else:
                even -= live[k]
        if c & 1:  # h - k holds c - 1 of k
            even += live[k]
        else:
            odd += live[k]
    total = (odd if odd_gain else 0) + (even if even_gain else 0)
    if joker >= 0 and joker_gain and np.int64(h[joker]) - (joker == k) < 4:
        total += live[joker]
    return total


@njit(cache=True)
def _count(k, h, joker, tabs, after, live, w, su):
    """The live effective tiles of ``h - k``: the live copies of the draws that lower its shanten
    ``after[k]`` (``su``: the :class:`Setup` of :func:`_setup`)."""
    d, u, top, sevens, kj, pairs, singles = su
    base = after[k]
    dk, std, kjk, pk, sk, spk = _discard(k, h, joker, w, kj, pairs, singles, sevens)
    use_std = std == base
    use_sp = spk == base
    a = -1 if k == joker else _suit(k)
    if use_std and a < 0 and not use_sp:
        return u  # the natural tiles are h's: the draws that lower h's distance, and a joker
    total = 0
    m_a = 0
    off_a = 0
    ea = 0
    strict = joker < 0
    rows = class_rows(tabs)
    # k keeps h's distance: then only the draws that lower h's own distance can lower h - k's (removing a
    # tile never lowers a distance), and k itself does not (it gives back h)
    kept = dk == d
    if use_std and a >= 0:
        off_a = w[_KC + k]
        ea = _draws_entry(tabs, rows, w, a, w[_CODE + a] - _POW5[k - 9 * a], strict)  # the suit after k
        # discarding k often leaves the entries of its suit's row that h's optimal splits use as they
        # were (a tile no optimal split needs; the others can only rise): then every optimal split of h
        # is one of h - k (so k keeps h's distance) and no other is, so the optimal entries of every
        # suit, and the other suits' draws that count, are h's own
        same = (_lowered(tabs, off_a, w[_RO + a]) & w[_M0 + a]) == 0
        m_a = w[_M0 + a] if same else _optimal(tabs, off_a, w, _E + 20 * a + 10 + top, dk)
        rc = _RC + 6 * a  # otherwise the other suits' part depends on the row after k alone: kept per turn
        if same or w[rc] != off_a:
            other = 0
            for b in range(4):
                mb = 0
                if b != a and w[_BM + b] != 0 and not (kept and w[_U0 + b] == 0):
                    if same:
                        mb = w[_M0 + b]
                        other += w[_U0 + b]
                    else:
                        _product(tabs, off_a, w, _other_two(w, a, b), w, _EB + 10)
                        mb = _optimal(w, _R + 10 * b, w, _EB + 10 + top, dk)
                        lo = 9 * b
                        for t in range(lo, lo + (9 if b < 3 else 7)):
                            other += live[t] * np.int64((mb & w[_DM + t]) != 0)
                w[_MB + b] = mb
                w[rc + 1 + b] = mb
            w[rc] = off_a
            w[rc + 5] = other
        else:  # a discard of this suit counted before left the same row
            for b in range(4):
                w[_MB + b] = w[rc + 1 + b]
        if not use_sp:
            total += w[rc + 5]
    if not use_sp:
        # only the standard form: the draws into the discard's own suit, then a joker
        lo = 9 * a
        for t in range(lo, lo + (9 if a < 3 else 7)):
            if kept and (w[_DM + t] >> _IN_T) & 1 == 0:
                continue
            ok = np.int64(t != joker) & np.int64(live[t] > 0)  # four held in h - k: no entry lowered
            total += live[t] * (ok & np.int64((m_a & w[ea + t - lo]) != 0))
        if joker >= 0 and live[joker] > 0 and np.int64(h[joker]) - (joker == k) < 4:
            total += live[joker]
        return total
    even_gain, odd_gain, joker_gain = _seven_pairs_gains(kjk, pk, sk, spk)
    for t in range(34):
        ct = np.int64(h[t]) - (t == k)
        if live[t] <= 0 or ct >= 4:
            continue
        eff = False
        if use_std:
            if t == joker:
                eff = True
            elif a < 0:
                eff = (w[_DM + t] >> _IN_T) & 1 != 0
            elif _suit(t) != a:
                eff = (w[_MB + _suit(t)] & w[_DM + t]) != 0
            elif not kept or (w[_DM + t] >> _IN_T) & 1:
                eff = (m_a & w[ea + t - 9 * a]) != 0
        if not eff:
            eff = joker_gain if t == joker else (odd_gain if ct & 1 else even_gain)
        if eff:
            total += live[t]
    return total


@njit(cache=True)
def _effective_each(h, joker, tabs, after, want, live, w, out):
    """``out[k]`` for each kind ``k`` of ``want`` (bit mask): the live effective tiles of ``h - k``.

    ``h: uint8[34]`` a 3m+2 concealed hand holding every kind of ``want``; ``after: int64[34]`` the
    shanten of each ``h - k``; ``live: int64[34]``; ``w: int64[>= N_SCRATCH]`` scratch;
    ``out: int64[34]`` (other entries untouched).  Equals, for each ``k``, the count one discard
    at a time: ``live[t]`` summed over the draws ``t`` (fewer than four of ``t`` in ``h - k``) with
    :func:`caishen.sim.hand._shanten_each_change` of ``h - k`` below ``after[k]``.  The caller has
    called :func:`_shanten_each_discard` on ``h`` with these ``after`` and ``w`` (and changed neither).
    """
    su = _setup(h, joker, tabs, live, w)
    todo = np.int64(want)
    while todo != 0:  # the kinds of want, lowest first
        k = np.int64(trailing_zeros(todo))
        todo &= todo - 1
        out[k] = _count(k, h, joker, tabs, after, live, w, su)


@njit(cache=True)
def _best_effective(h, joker, tabs, after, want, live, w):
    """The kind ``k`` of ``want`` whose ``h - k`` has the most live effective tiles, the later kind on
    a tie, and that count: ``(k, count)`` (``(-1, -1)`` for an empty ``want``).

    Branch and bound (module docstring): each discard's bound first, then exact counts in the order
    of the bounds until no bound can beat the best.  Arguments and the call before it as
    :func:`_effective_each`.
    """
    su = _setup(h, joker, tabs, live, w)
    d, u, sevens, kj, pairs, singles = su.d, su.u, su.sevens, su.kj, su.pairs, su.singles
    n = 0
    todo = np.int64(want)
    while todo != 0:  # the kinds of want, lowest first (no branch per kind on the mask)
        k = np.int64(trailing_zeros(todo))
        todo &= todo - 1
        base = after[k]
        dk, std, kjk, pk, sk, spk = _discard(k, h, joker, w, kj, pairs, singles, sevens)
        bound = 0
        if std == base:
            if k == joker:
                bound = u
            elif dk == d:
                bound = u - (live[k] if (w[_DM + k] >> _IN_T) & 1 else 0)
            else:
                bound = _NO_BOUND
        if spk == base and bound < _NO_BOUND:
            bound += _seven_pairs_live(k, h, joker, live, w, kjk, pk, sk, spk)
        w[_UB + n] = bound * 64 + k
        n += 1
    best_k = -1
    best = -1
    for _ in range(n):
        j = 0
        for i in range(1, n):
            if w[_UB + i] > w[_UB + j]:
                j = i
        key = w[_UB + j]
        w[_UB + j] = -1
        bound = key >> 6
        k = key & 63
        if bound < best or (bound == best and k < best_k):
            break
        c = _count(k, h, joker, tabs, after, live, w, su)
        if c > best or (c == best and k > best_k):
            best = c
            best_k = k
    return best_k, best
