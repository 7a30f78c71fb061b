"""Per-suit distance tables for the hand kernels, built once and cached on disk.

A suit's nine counts (honors: seven) are read as a base-5 index
``sum(c[i] * 5**i)``.  For each row the table stores, for ``j = 0..4`` sets
and ``p = 0..1`` pairs, the fewest tiles that must be *added* to the suit's
tiles so that a sub-multiset of them is ``j`` sets plus ``p`` pairs of that
suit (runs and triplets; honors: triplets only), in two versions:

- *lenient* (the joker path, ``joker >= 0``): target patterns may hold more
  than four copies of a kind.  The missing copies are what jokers fill, and
  a joker, held or drawn, may stand for a fifth copy (K-2.1);
- *strict* (no joker, ``joker == -1``): targets hold at most four copies of
  each kind.  Without a joker a kind held four times can neither be waited
  on nor used a fifth time (J-1.1: no joker; D3).

The two differ only on rows holding four copies of some kind (by at most 1
per suit, 2 per honor row).

Rows are compressed to *joint* equivalence classes (identical lenient and
strict 10-value rows): a suit index maps to one class id (``uint8``: 133
suit and 79 honor classes) whose lenient and strict values sit in two
blocks of the same layout.  Two suits' classes are combined once more into
pair tables so that a whole hand needs three class lookups and two row
reads (see :func:`caishen.sim.hand._distance_codes`); the kernel picks the block by
``joker < 0``.  The class rows themselves follow (20 bytes a class: lenient,
then strict), for the kernels that combine single suits
(:mod:`caishen.sim.effective`).  The kernels receive everything as one flat
``uint8`` array (:func:`pack_tables`, offsets ``OFF_*``, :func:`strict_block`,
:func:`class_rows`).

How a row is computed: with ``U`` the sub-multisets of targets (capped at 4
copies, a downward-closed set), the distance is
``3j + 2p - max{|u| : u <= c, u in U}``; membership is propagated from the
targets downwards and the maximum upwards, each a pass over the ``5**9``
rows.  The strict rows leave out the targets with a fifth copy.  Building
takes a few seconds in numba; the result is cached under the user cache
directory (``platformdirs``), keyed by :data:`TABLE_VERSION`, with its
sha256 beside it, checked on every load and rebuilt (with a warning) when
it does not match (:func:`hand_tables`); never committed.  Tables are
passed to kernels as arguments, never read from module globals.
"""

from __future__ import annotations

import os
from pathlib import Path

import numpy as np
from numba import njit

#: version 5: strict (4-copy) rows for the no-joker path beside the lenient ones; 6: the class rows appended
TABLE_VERSION = 6
SUIT_ROWS = 5**9
HONOR_ROWS = 5**7

# Layout of the flat ``uint8`` table that the kernels receive (one array, so
# that a kernel call passes one pointer, not a tuple of arrays):
#: header bytes: number of suit classes, of honor classes
H_NS = 0
H_NH = 1
HEADER = 16
#: class id of each suit code (5**9 bytes), then of each honor code (5**7)
OFF_SUIT_CLASS = HEADER
OFF_HONOR_CLASS = OFF_SUIT_CLASS + SUIT_ROWS
#: then the lenient block: the suit-pair rows (ns * ns * 10 bytes) and the
#: suit-honor rows (ns * nh * 10); then the strict block, laid out the same
#: way, :func:`strict_block` bytes further on; then, from :func:`class_rows`,
#: each suit class's row (20 bytes: 10 lenient, 10 strict), then each honor class's
OFF_PAIRS = OFF_HONOR_CLASS + HONOR_ROWS

_cache: np.ndarray | None = None


@njit(cache=True)
def strict_block(tabs):
    """Bytes from the lenient block to the strict block of the flat table: ``(ns * ns + ns * nh) * 10``."""
    ns = np.int64(tabs[H_NS])
    return (ns * ns + ns * np.int64(tabs[H_NH])) * 10


@njit(cache=True)
def class_rows(tabs):
    """Offset of the class rows in the flat table: suit class ``c``'s row at ``+ 20 c`` (10 lenient
    values, then 10 strict: column ``2*j + p``), honor class ``c``'s at ``+ 20 (ns + c)``."""
    return OFF_PAIRS + 2 * strict_block(tabs)


@njit(cache=True)
def _mark_targets(n_kinds, runs, j, p, strict, member):
    """Mark every target of ``j`` sets + ``p`` pairs in ``member`` (codes capped at 4 copies).

    ``strict``: leave out the targets that hold more than four copies of a kind.
    """
    n_types = n_kinds + (n_kinds - 2 if runs else 0)
    c = np.zeros(n_kinds, np.int64)
    pw = np.ones(n_kinds, np.int64)
    for i in range(1, n_kinds):
        pw[i] = pw[i - 1] * 5
    # iterate over multisets of j set types (non-decreasing indices)
    idx = np.zeros(4, np.int64)
    for a0 in range(n_types if j >= 1 else 1):
        for a1 in range(a0 if j >= 2 else 0, n_types if j >= 2 else 1):
            for a2 in range(a1 if j >= 3 else 0, n_types if j >= 3 else 1):
                for a3 in range(a2 if j >= 4 else 0, n_types if j >= 4 else 1):
                    idx[0] = a0
                    idx[1] = a1
                    idx[2] = a2
                    idx[3] = a3
                    c[:] = 0
                    for s in range(j):
                        t = idx[s]
                        if t < n_kinds:
                            c[t] += 3
                        else:
                            r = t - n_kinds
                            c[r] += 1
                            c[r + 1] += 1
                            c[r + 2] += 1
                    for q in range(n_kinds if p == 1 else 1):
                        if p == 1:
                            c[q] += 2
                        code = 0
                        fifth = False
                        for i in range(n_kinds):
                            v = c[i]
                            if v > 4:
                                v = 4
                                fifth = True
                            code += v * pw[i]
                        if not (strict and fifth):
                            member[code] = True
                        if p == 1:
                            c[q] -= 2


@njit(cache=True)
def _build_rows(n_kinds, runs, strict):
    """uint8[5**n_kinds, 10]: distance for j sets (0..4) and p pairs (0..1).

    ``strict``: targets hold at most four copies of a kind (else any number).
    """
    n_rows = 5**n_kinds
    out = np.zeros((n_rows, 10), np.uint8)
    pw = np.ones(n_kinds, np.int64)
    for i in range(1, n_kinds):
        pw[i] = pw[i - 1] * 5
    size = np.zeros(n_rows, np.int64)
    for code in range(n_rows):
        x = code
        s = 0
        for i in range(n_kinds):
            s += x % 5
            x //= 5
        size[code] = s
    # process codes by decreasing size for closure, increasing for the maximum
    order = np.argsort(size, kind="mergesort")
    member = np.zeros(n_rows, np.bool_)
    best = np.zeros(n_rows, np.int64)
    for j in range(5):
        for p in range(2):
            member[:] = False
            _mark_targets(n_kinds, runs, j, p, strict, member)
            for oi in range(n_rows - 1, -1, -1):
                code = order[oi]
                if member[code]:
                    x = code
                    for i in range(n_kinds):
                        if x % 5 > 0:
                            member[code - pw[i]] = True
                        x //= 5
            for oi in range(n_rows):
                code = order[oi]
                if member[code]:
                    best[code] = size[code]
                else:
                    b = 0
                    x = code
                    for i in range(n_kinds):
                        if x % 5 > 0:
                            v = best[code - pw[i]]
                            if v > b:
                                b = v
                        x //= 5
                    best[code] = b
            total = 3 * j + 2 * p
            for code in range(n_rows):
                out[code, 2 * j + p] = total - best[code]
    return out


def _compress(lenient: np.ndarray, strict: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Joint classes of two row tables: ``(class id per row, uint8[n_classes, 20])``.

    Rows with equal lenient *and* strict values share a class; a class row is
    its 10 lenient values, then its 10 strict ones.
    """
    keys = []
    for rows in (lenient, strict):
        k = np.zeros(rows.shape[0], np.uint64)
        for col in range(rows.shape[1]):  # values < 16: 4 bits each
            k |= rows[:, col].astype(np.uint64) << np.uint64(4 * col)
        keys.append(np.unique(k, return_inverse=True)[1].reshape(-1).astype(np.int64))
    joint = keys[0] * (int(keys[1].max()) + 1) + keys[1]
    uniq, first, inverse = np.unique(joint, return_index=True, return_inverse=True)
    ids = inverse.reshape(-1)
    rows = np.concatenate([lenient[first], strict[first]], axis=1).astype(np.uint8)
    return ids.astype(np.uint8 if len(uniq) <= 256 else np.uint16), rows


@njit(cache=True)
def _combine_classes(table_a, table_b):
    """Min-plus product of two class tables: uint8[na * nb, 10]."""
    na = table_a.shape[0]
    nb = table_b.shape[0]
    out = np.empty((na * nb, 10), np.uint8)
    for a in range(na):
        for b in range(nb):
            row = a * nb + b
            for j in range(5):
                m0 = 255
                m1 = 255
                for ja in range(j + 1):
                    jb = j - ja
                    v = table_a[a, 2 * ja] + table_b[b, 2 * jb]
                    if v < m0:
                        m0 = v
                    v = table_a[a, 2 * ja + 1] + table_b[b, 2 * jb]
                    if v < m1:
                        m1 = v
                    v = table_a[a, 2 * ja] + table_b[b, 2 * jb + 1]
                    if v < m1:
                        m1 = v
                out[row, 2 * j] = m0
                out[row, 2 * j + 1] = m1
    return out


def cache_dir() -> Path:
    """Where the tables are cached (``$CAISHEN_CACHE`` or the user cache dir)."""
    env = os.environ.get("CAISHEN_CACHE")
    if env:
        return Path(env)
    from platformdirs import user_cache_dir

    return Path(user_cache_dir("caishen"))


def build_tables() -> tuple[np.ndarray, ...]:
    """Build the hand tables from scratch (a few seconds; see module docstring).

    Returns ``(suit_class: uint8[5**9], suit_table: uint8[ns, 20],
    honor_class: uint8[5**7], honor_table: uint8[nh, 20],
    suit_pair: uint8[2, ns * ns, 10], suit_honor: uint8[2, ns * nh, 10])``.
    A class row holds the 10 lenient values (joker path), then the 10 strict
    ones (no joker, at most four copies of a kind).  ``suit_pair[v, a * ns +
    b]`` is the min-plus combination of two suits' classes ``a`` and ``b``,
    ``suit_honor[v, a * nh + h]`` that of a suit class and an honor class, in
    version ``v`` (0 lenient, 1 strict).  Column ``2*j + p``: ``j`` sets,
    ``p`` pairs.
    """
    suit_class, suit_table = _compress(_build_rows(9, True, False), _build_rows(9, True, True))
    honor_class, honor_table = _compress(_build_rows(7, False, False), _build_rows(7, False, True))
    suit = [np.ascontiguousarray(suit_table[:, 10 * v : 10 * v + 10]) for v in (0, 1)]
    honor = [np.ascontiguousarray(honor_table[:, 10 * v : 10 * v + 10]) for v in (0, 1)]
    suit_pair = np.stack([_combine_classes(suit[v], suit[v]) for v in (0, 1)])
    suit_honor = np.stack([_combine_classes(suit[v], honor[v]) for v in (0, 1)])
    return suit_class, suit_table, honor_class, honor_table, suit_pair, suit_honor


def pack_tables(tables: tuple[np.ndarray, ...]) -> np.ndarray:
    """The flat ``uint8`` table of the kernels from the tuple of :func:`build_tables`.

    Layout: ``H_NS``, ``H_NH`` header bytes, then from ``OFF_SUIT_CLASS`` the
    suit class ids, from ``OFF_HONOR_CLASS`` the honor class ids, from
    ``OFF_PAIRS`` the lenient block (``suit_pair`` rows, then ``suit_honor``
    rows) and :func:`strict_block` bytes after it the strict block; from
    :func:`class_rows` the suit classes' rows (``suit_table``), then the honor
    classes' (``honor_table``).
    """
    suit_class, suit_table, honor_class, honor_table, suit_pair, suit_honor = tables
    ns, nh = len(suit_table), len(honor_table)
    if ns > 255 or nh > 255:
        raise ValueError(f"{ns} suit / {nh} honor classes do not fit the one-byte header")
    header = np.zeros(HEADER, np.uint8)
    header[H_NS] = ns
    header[H_NH] = nh
    blocks = [np.concatenate([suit_pair[v].ravel(), suit_honor[v].ravel()]) for v in (0, 1)]
    rows = [suit_table.ravel(), honor_table.ravel()]
    return np.concatenate([header, suit_class, honor_class, *blocks, *rows]).astype(np.uint8)


class CacheWarning(UserWarning):
    """A cached artefact (the hand tables) did not pass its checks and is rebuilt."""


#: bytes of a cached hand table at most (it is about 2.5 MB)
MAX_TABLE_BYTES = 16 << 20


def cache_path() -> Path:
    """The cached flat table: ``<cache dir>/hand_tables_v<TABLE_VERSION>.npy`` (its sha256 in
    ``... .npy.sha256`` beside it)."""
    return cache_dir() / f"hand_tables_v{TABLE_VERSION}.npy"


def check_tables(tabs: np.ndarray) -> None:
    """``ValueError`` unless ``tabs`` has the layout of :func:`pack_tables`: ``uint8``, one axis, the
    length its header's class counts make, and class ids below those counts."""
    if not isinstance(tabs, np.ndarray) or tabs.dtype != np.uint8 or tabs.ndim != 1:
        raise ValueError(f"a {getattr(tabs, 'dtype', type(tabs).__name__)} array of shape "
                         f"{getattr(tabs, 'shape', '?')}, not uint8[n]")
    if tabs.size < OFF_PAIRS:
        raise ValueError(f"{tabs.size} bytes, shorter than the class ids ({OFF_PAIRS})")
    ns, nh = int(tabs[H_NS]), int(tabs[H_NH])
    want = OFF_PAIRS + 2 * (ns * ns + ns * nh) * 10 + (ns + nh) * 20
    if ns == 0 or nh == 0 or tabs.size != want:
        raise ValueError(f"{tabs.size} bytes, but its header's {ns} suit and {nh} honor classes make {want}")
    if tabs[OFF_SUIT_CLASS:OFF_HONOR_CLASS].max() >= ns or tabs[OFF_HONOR_CLASS:OFF_PAIRS].max() >= nh:
        raise ValueError("a class id beyond the header's class counts")


def _load_cached(path: Path) -> np.ndarray:
    """The table cached at ``path``, checked: its ``.sha256`` file, the ``.npy`` header (dtype and
    shape, before anything is allocated), the bytes' sha256 and :func:`check_tables`.  Raises
    ``FileNotFoundError`` when it is not there, ``ValueError`` saying what is wrong with it."""
    import hashlib
    import io

    from caishen.sim import safeio

    data = safeio.read_bytes(path, MAX_TABLE_BYTES, what="the hand-table cache")
    try:
        digest = safeio.read_text(path.with_name(path.name + ".sha256"), 128, what="a checksum file").strip()
    except FileNotFoundError:
        raise ValueError("no sha256 recorded beside it") from None
    if hashlib.sha256(data).hexdigest() != digest:
        raise ValueError("its sha256 is not the one recorded beside it")
    f = io.BytesIO(data)
    fmt = np.lib.format
    try:
        version = fmt.read_magic(f)
        read_header = {(1, 0): fmt.read_array_header_1_0, (2, 0): fmt.read_array_header_2_0}[version]
        shape, _, dtype = read_header(f)
    except (KeyError, ValueError) as e:
        raise ValueError(f"not a .npy array ({e})") from None
    if dtype != np.uint8 or len(shape) != 1 or shape[0] > MAX_TABLE_BYTES:
        raise ValueError(f"a {dtype} array of shape {shape}, not uint8[n]")
    tabs = np.frombuffer(data, np.uint8, count=shape[0], offset=f.tell()).copy()
    check_tables(tabs)
    return tabs


def _save_cached(path: Path, tabs: np.ndarray) -> None:
    """Write the table and its sha256 (each atomically); a read-only cache keeps it in memory only."""
    import hashlib
    import io

    from caishen.sim import safeio

    buf = io.BytesIO()
    np.save(buf, tabs)
    data = buf.getvalue()
    try:
        safeio.make_dir(path.parent)
        safeio.atomic_write(path, data, owned=True)  # the cache is ours: a FIFO or socket there is damage
        safeio.atomic_write(path.with_name(path.name + ".sha256"), hashlib.sha256(data).hexdigest() + "\n",
                            owned=True)
    except ValueError:
        pass  # a read-only or missing cache directory: the tables live in memory only


def hand_tables() -> np.ndarray:
    """The flat hand table (:func:`pack_tables`), from memory, the disk cache, or built.

    The cached file is checked when it is loaded (:func:`_load_cached`:
    checksum, dtype, shape, layout); a cache that fails a check is rebuilt
    with a :class:`CacheWarning` naming the file and what was wrong.  Pass
    the result to the numba kernels of :mod:`caishen.sim.hand` as ``tabs``.
    """
    global _cache
    if _cache is not None:
        return _cache
    path = cache_path()
    try:
        tabs = _load_cached(path)
    except FileNotFoundError:
        tabs = None
    except ValueError as e:
        import warnings

        why = str(e).split(": ", 1)[-1] if str(e).startswith("'") else str(e)
        warnings.warn(f"the hand-table cache {str(path)!r} is damaged ({why}); rebuilding it", CacheWarning,
                      stacklevel=2)
        tabs = None
    if tabs is None:
        tabs = pack_tables(build_tables())
        check_tables(tabs)
        _save_cached(path, tabs)
    _cache = tabs
    return tabs
