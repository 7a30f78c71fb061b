"""What one seat sees, as fixed-shape numeric planes: the observation of both envs.

:func:`encode` turns a :class:`caishen.sim.engine.Game` and a seat into
``uint8[N_PLANES, 34]``: one row ("plane") per feature, one column per tile
kind (``1m..9m 1p..9p 1s..9s 1z..7z``).  *Tile planes* hold a value per
kind; *scalar planes* repeat one value in all 34 columns (the AlphaZero
habit, so a convolution over kinds sees them everywhere).  Planes of the
four seats come in seat-relative order: ``+0`` the observing seat itself,
``+1`` its next seat (下家), ``+2`` the seat opposite (对家), ``+3`` its
previous seat (上家).  One layout serves both rule sets; features of the
other rule set stay 0 (without 架听, J-4.1, or a 财神, K-2.1, or chow, K-4.2).

The planes are filled by one numba kernel (:func:`_encode`, a few
microseconds) straight from the engine's state record; it shows the same
facts as :meth:`caishen.sim.engine.Game.observation` (the engine's statement of what
a seat may see), and the tests compare it with a pure-Python encoder built
on that method, on every state of many random hands.  Hidden, and therefore
absent: the other seats' concealed tiles (only their number is shown) and
drawn tiles, the kinds of their concealed kongs (K-5.3, J-3.2), the wall,
their private flags (passed pongs and wins, 硬子 offers), and which seat is
being asked to claim (a seat only learns that it is asked itself:
``acting``).  The only private facts shown are the observing seat's own.

Layout (``N_PLANES = 76``; ``high`` is the largest value a plane takes,
also the upper bound of the Box space; every lower bound is 0)

=====  ======================  =====  ===========================================
rows   name                    high   meaning
=====  ======================  =====  ===========================================
0      ``hand``                4      own concealed tiles, count per kind
1      ``drawn``               1      own tile drawn this turn (own turn only)
2-5    ``discards``            4      each seat's discards so far, count per kind
                                      (claimed ones included)
6-9    ``last_discard``        1      each seat's latest discard
10-13  ``chows``               4      tiles in each seat's chows, count per kind
14-17  ``pongs``               1      kinds of each seat's pongs
18-21  ``kongs``               1      kinds of each seat's exposed and added kongs
22     ``own_concealed_kongs`` 1      kinds of own concealed kongs
23     ``pending``             1      the discard or added-kong tile on offer
24     ``passed_pong``         1      own: kinds it may not pong now (K-4.4, J-3.6)
25     ``swap_forbid``         1      own: the kind its discard may not be (K-4.5)
26     ``joker``               1      the joker kind (the 财神 ``5z``, K-2.1)
27-30  ``dealer``              1      scalar: the seat is the dealer
31-34  ``turn``                1      scalar: it is the seat's turn (the discarder
                                      while its discard or kong is on offer)
35-38  ``pending_from``        1      scalar: the pending tile is the seat's
39-43  ``phase``               1      scalar, one-hot: turn, claim (a discard on
                                      offer), rob (an added kong on offer, K-5.5),
                                      done, hard (硬子 declarations, J-4.2)
44     ``acting``              1      scalar: the observing seat is to act
45     ``tiles_left``          136    scalar: tiles left in the wall (reserve
                                      included, K-3.4)
46-49  ``hand_size``           14     scalar: the seat's concealed tile count
50-53  ``concealed_kongs``     4      scalar: the seat's concealed kongs
54-57  ``n_chows``             4      scalar: the seat's chows (K-4.5)
58-61  ``chain``               8      scalar: the seat's chain length (K-6.5)
62-65  ``chain_kong``          4      scalar: ... of which kong links
66-69  ``piao_open``           1      scalar: the seat's 飘财 circle is open (K-9.2)
70-73  ``declared``            2      scalar: the seat's declaration: 1 架听
                                      (J-4.1), 2 硬子 (J-4.2)
74     ``passed_win``          1      scalar, own: passed a win, no discard win
                                      until its next draw (J-3.5)
75     ``streak``              255    scalar: the dealer's streak k (J-2.4;
                                      capped at 255)
=====  ======================  =====  ===========================================

A seat's 飘财 links in its chain (K-6.5) are ``chain - chain_kong``; its
飘财 count this hand is the number of ``5z`` in its ``discards`` plane.
The order of the discards is kept only as each seat's latest discard,
unless the order-of-play block below is added.

Order of play (``history=True``; ``N_HISTORY_PLANES = 48`` more rows)
----------------------------------------------------------------------
Strong mahjong agents read the order of play; the engine's state keeps each
seat's discards in order (with whether each was claimed) and its melds in
the order they were made, and this block shows exactly that, appended after
row 75 (so ``uint8[124, 34]`` with the block):

=======  ======================  =====  ===========================================
rows     name                    high   meaning
=======  ======================  =====  ===========================================
76-107   ``recent_discards``     2      seat-relative seat ``r`` (rows ``76 + 8 r``
                                        .. ``83 + 8 r``): its last 8 discards, most
                                        recent first, one row each: 1 at the kind
                                        if the tile is still on the table, 2 if it
                                        was claimed (went into a meld or a winner's
                                        hand: which claims happened); a row of
                                        zeros when the seat has fewer discards
108-123  ``meld_order``          5      seat ``r`` (rows ``108 + 4 r`` .. ``111 +
                                        4 r``): its melds in the order made, the
                                        meld type (1 chow, 2 pong, 3 exposed kong,
                                        4 added kong, 5 concealed kong;
                                        ``caishen.sim.tiles.MELD_*``) at the meld's kind (a
                                        chow's lowest tile); another seat's
                                        concealed kong is a row of zeros (its kind
                                        is hidden, K-5.3; ``concealed_kongs``
                                        counts it)
=======  ======================  =====  ===========================================

Flat vector (``layout="flat"``, for MLPs)
-----------------------------------------
``float32[967]`` (``float32[2599]`` with the order-of-play block): every
row of the planes in row order, each value divided by its row's ``high``
so that every input lies in ``[0, 1]``; a *tile* row gives its 34 values,
a *scalar* row (marked scalar in :data:`PLANES`) gives its value once
(not 34 copies).  So the 27 tile rows 0-26 are inputs ``0 .. 917``, the
49 scalar rows 27-75 are inputs ``918 .. 966`` (``dealer`` 918-921,
``turn`` 922-925, ``pending_from`` 926-929, ``phase`` 930-934,
``acting`` 935, ``tiles_left`` 936, ``hand_size`` 937-940,
``concealed_kongs`` 941-944, ``n_chows`` 945-948, ``chain`` 949-952,
``chain_kong`` 953-956, ``piao_open`` 957-960, ``declared`` 961-964,
``passed_win`` 965, ``streak`` 966), and the order-of-play rows (all tile
rows) follow as inputs ``967 .. 2598``.  :data:`FLAT_INDEX` gives the first
input of each group; :func:`flat_size` the length.
"""

from __future__ import annotations

import numpy as np
from numba import njit

from caishen.sim.engine import (
    DF_CLAIMED,
    N_KINDS,
    N_SEATS,
    PH_DONE,
    PH_TURN,
    SC_DEALER,
    SC_DRAWN,
    SC_HEAD,
    SC_PHASE,
    SC_SRC,
    SC_STREAK,
    SC_TAIL,
    SC_TILE,
    SC_TO_ACT,
    SC_TURN,
    SF_CHAIN_KONG,
    SF_CHAIN_LEN,
    SF_DECL,
    SF_N_CHOWS,
    SF_N_DISCARDS,
    SF_PASSED_PONG,
    SF_PASSED_WIN,
    SF_PIAO_OPEN,
    SF_SWAP_FORBID,
    Game,
)
from caishen.sim.rules import base as _rulesets
from caishen.sim.tiles import MELD_CHOW, MELD_KONG_ADDED, MELD_KONG_CONCEALED, MELD_KONG_EXPOSED, MELD_PONG

__all__ = [
    "PLANES", "N_PLANES", "PLANE", "PLANE_HIGH", "HISTORY_PLANES", "N_HISTORY_PLANES", "HISTORY_DISCARDS",
    "FLAT_INDEX", "LAYOUTS", "encode", "flat_size", "n_planes", "plane_groups", "plane_high", "relative_seats",
]

#: (name, rows, high, scalar) of each plane group, in order (see the module docstring)
PLANES: tuple[tuple[str, int, int, bool], ...] = (
    ("hand", 1, 4, False),
    ("drawn", 1, 1, False),
    ("discards", 4, 4, False),
    ("last_discard", 4, 1, False),
    ("chows", 4, 4, False),
    ("pongs", 4, 1, False),
    ("kongs", 4, 1, False),
    ("own_concealed_kongs", 1, 1, False),
    ("pending", 1, 1, False),
    ("passed_pong", 1, 1, False),
    ("swap_forbid", 1, 1, False),
    ("joker", 1, 1, False),
    ("dealer", 4, 1, True),
    ("turn", 4, 1, True),
    ("pending_from", 4, 1, True),
    ("phase", 5, 1, True),
    ("acting", 1, 1, True),
    ("tiles_left", 1, 136, True),
    ("hand_size", 4, 14, True),
    ("concealed_kongs", 4, 4, True),
    ("n_chows", 4, 4, True),
    ("chain", 4, 8, True),
    ("chain_kong", 4, 4, True),
    ("piao_open", 4, 1, True),
    ("declared", 4, 2, True),
    ("passed_win", 1, 1, True),
    ("streak", 1, 255, True),
)

#: discards per seat in the order-of-play block (``recent_discards``)
HISTORY_DISCARDS = 8
#: the order-of-play block (``history=True``), appended after :data:`PLANES`
HISTORY_PLANES: tuple[tuple[str, int, int, bool], ...] = (
    ("recent_discards", N_SEATS * HISTORY_DISCARDS, 2, False),
    ("meld_order", N_SEATS * 4, 5, False),
)
#: observation layouts: planes ``uint8[R, 34]`` or the flat ``float32[F]`` vector
LAYOUTS = ("planes", "flat")

#: first row of each plane group, by name (the order-of-play groups included)
PLANE: dict[str, int] = {}
_row = 0
for _name, _n, _high, _scalar in PLANES + HISTORY_PLANES:
    PLANE[_name] = _row
    _row += _n
N_PLANES = PLANE[HISTORY_PLANES[0][0]]
N_HISTORY_PLANES = _row - N_PLANES
del _row, _name, _n, _high, _scalar


def plane_groups(history: bool = False) -> tuple[tuple[str, int, int, bool], ...]:
    """The plane groups ``(name, rows, high, scalar)`` of a layout, in row order."""
    return PLANES + HISTORY_PLANES if history else PLANES


def n_planes(history: bool = False) -> int:
    """Rows of the planes: 76, or 124 with the order-of-play block."""
    return N_PLANES + (N_HISTORY_PLANES if history else 0)


def plane_high(history: bool = False) -> np.ndarray:
    """``uint8[n_planes(history), 34]``: the largest value of each row (the Box space's ``high``)."""
    return np.concatenate([np.full((n, N_KINDS), high, np.uint8) for _, n, high, _ in plane_groups(history)])


def flat_size(history: bool = False) -> int:
    """Length of the flat vector: 967, or 2599 with the order-of-play block."""
    return sum(n * (1 if scalar else N_KINDS) for _, n, _, scalar in plane_groups(history))


#: first input of each plane group in the flat vector, by name
FLAT_INDEX: dict[str, int] = {}
_i = 0
for _name, _n, _high, _scalar in PLANES + HISTORY_PLANES:
    FLAT_INDEX[_name] = _i
    _i += _n * (1 if _scalar else N_KINDS)
del _i, _name, _n, _high, _scalar


def _flat_tables(history: bool) -> tuple[np.ndarray, np.ndarray]:
    """``(scalar: uint8[R], inv_high: float32[R])`` per row, the arguments of :func:`_flatten`."""
    scalar = np.concatenate([np.full(n, sc, np.uint8) for _, n, _, sc in plane_groups(history)])
    inv = np.concatenate([np.full(n, 1.0 / high, np.float32) for _, n, high, _ in plane_groups(history)])
    return scalar, inv


#: ``uint8[N_PLANES, 34]``: the largest value of each row (the Box space's ``high``)
PLANE_HIGH = plane_high(False)

# first rows as plain ints for the kernel; the ``phase`` rows are the engine's
# phase codes in order (PH_TURN, PH_CLAIM, PH_ROB, PH_DONE, PH_HARD = 0..4)
P_HAND = PLANE["hand"]
P_DRAWN = PLANE["drawn"]
P_DISCARDS = PLANE["discards"]
P_LAST_DISCARD = PLANE["last_discard"]
P_CHOWS = PLANE["chows"]
P_PONGS = PLANE["pongs"]
P_KONGS = PLANE["kongs"]
P_OWN_CONCEALED_KONGS = PLANE["own_concealed_kongs"]
P_PENDING = PLANE["pending"]
P_PASSED_PONG = PLANE["passed_pong"]
P_SWAP_FORBID = PLANE["swap_forbid"]
P_JOKER = PLANE["joker"]
P_DEALER = PLANE["dealer"]
P_TURN = PLANE["turn"]
P_PENDING_FROM = PLANE["pending_from"]
P_PHASE = PLANE["phase"]
P_ACTING = PLANE["acting"]
P_TILES_LEFT = PLANE["tiles_left"]
P_HAND_SIZE = PLANE["hand_size"]
P_CONCEALED_KONGS = PLANE["concealed_kongs"]
P_N_CHOWS = PLANE["n_chows"]
P_CHAIN = PLANE["chain"]
P_CHAIN_KONG = PLANE["chain_kong"]
P_PIAO_OPEN = PLANE["piao_open"]
P_DECLARED = PLANE["declared"]
P_PASSED_WIN = PLANE["passed_win"]
P_STREAK = PLANE["streak"]
P_RECENT_DISCARDS = PLANE["recent_discards"]
P_MELD_ORDER = PLANE["meld_order"]


def relative_seats(seat: int) -> list[int]:
    """The seats in observation order for ``seat``: itself, next, opposite, previous."""
    return [(seat + r) % N_SEATS for r in range(N_SEATS)]


@njit(cache=True)
def _encode(st, seat, joker, x):
    """Fill ``x: uint8[N_PLANES, 34]`` with the planes of ``seat`` from the state record ``st``.

    ``joker``: the joker kind or -1.  Reads only what ``seat`` may see; writes ``x`` only.
    """
    x[:] = 0
    sc = st.sc
    sf = st.seat
    phase = sc[SC_PHASE]
    to_act = sc[SC_TO_ACT]
    # own tiles and flags
    for k in range(N_KINDS):
        x[P_HAND, k] = st.hands[seat, k]
        x[P_PASSED_PONG, k] = (sf[seat, SF_PASSED_PONG] >> k) & 1
    if phase == PH_TURN and to_act == seat and sc[SC_DRAWN] >= 0:
        x[P_DRAWN, sc[SC_DRAWN]] = 1
    if sf[seat, SF_SWAP_FORBID] >= 0:
        x[P_SWAP_FORBID, sf[seat, SF_SWAP_FORBID]] = 1
    if joker >= 0:
        x[P_JOKER, joker] = 1
    if sc[SC_TILE] >= 0:
        x[P_PENDING, sc[SC_TILE]] = 1
    # every seat's public tiles and counters, seat-relative
    for r in range(N_SEATS):
        p = (seat + r) % N_SEATS
        n = sf[p, SF_N_DISCARDS]
        for i in range(n):
            x[P_DISCARDS + r, st.discards[p, i]] += 1
        if n > 0:
            x[P_LAST_DISCARD + r, st.discards[p, n - 1]] = 1
        n_concealed = 0
        for m in range(st.meld_type.shape[1]):
            mtype = st.meld_type[p, m]
            kind = st.meld_kind[p, m]
            if mtype == MELD_CHOW:
                for j in range(3):
                    x[P_CHOWS + r, kind + j] += 1
            elif mtype == MELD_PONG:
                x[P_PONGS + r, kind] = 1
            elif mtype == MELD_KONG_EXPOSED or mtype == MELD_KONG_ADDED:
                x[P_KONGS + r, kind] = 1
            elif mtype == MELD_KONG_CONCEALED:
                n_concealed += 1
                if p == seat:  # others' concealed kong kinds are hidden (K-5.3, J-3.2)
                    x[P_OWN_CONCEALED_KONGS, kind] = 1
        hand_size = 0
        for k in range(N_KINDS):
            hand_size += st.hands[p, k]
        x[P_HAND_SIZE + r, :] = hand_size
        x[P_CONCEALED_KONGS + r, :] = n_concealed
        x[P_N_CHOWS + r, :] = sf[p, SF_N_CHOWS]
        x[P_CHAIN + r, :] = sf[p, SF_CHAIN_LEN]
        x[P_CHAIN_KONG + r, :] = sf[p, SF_CHAIN_KONG]
        x[P_PIAO_OPEN + r, :] = 1 if sf[p, SF_PIAO_OPEN] != 0 else 0
        x[P_DECLARED + r, :] = sf[p, SF_DECL]
    # public scalars
    x[P_DEALER + (sc[SC_DEALER] - seat) % N_SEATS, :] = 1
    if phase != PH_DONE:
        x[P_TURN + (sc[SC_TURN] - seat) % N_SEATS, :] = 1
    if sc[SC_SRC] >= 0:
        x[P_PENDING_FROM + (sc[SC_SRC] - seat) % N_SEATS, :] = 1
    x[P_PHASE + phase, :] = 1
    x[P_ACTING, :] = 1 if to_act == seat else 0
    x[P_TILES_LEFT, :] = sc[SC_TAIL] - sc[SC_HEAD] + 1
    x[P_PASSED_WIN, :] = 1 if sf[seat, SF_PASSED_WIN] != 0 else 0
    x[P_STREAK, :] = min(sc[SC_STREAK], 255)


@njit(cache=True)
def _encode_history(st, seat, x):
    """Fill the order-of-play rows of ``x: uint8[N_PLANES + N_HISTORY_PLANES, 34]`` (rows 76..123).

    Reads only what ``seat`` may see (discards, claimed flags, meld order;
    another seat's concealed kong kind never); writes those rows of ``x`` only.
    """
    for r in range(P_RECENT_DISCARDS, P_MELD_ORDER + 4 * N_SEATS):
        for k in range(N_KINDS):
            x[r, k] = 0
    for r in range(N_SEATS):
        p = (seat + r) % N_SEATS
        n = st.seat[p, SF_N_DISCARDS]
        for j in range(min(n, HISTORY_DISCARDS)):
            i = n - 1 - j
            x[P_RECENT_DISCARDS + HISTORY_DISCARDS * r + j, st.discards[p, i]] = 2 if st.dflags[p, i] & DF_CLAIMED else 1
        for m in range(st.meld_type.shape[1]):
            mtype = st.meld_type[p, m]
            if mtype == 0 or (mtype == MELD_KONG_CONCEALED and p != seat):
                continue
            x[P_MELD_ORDER + 4 * r + m, st.meld_kind[p, m]] = mtype


@njit(cache=True)
def _flatten(x, scalar, inv_high, out):
    """Fill ``out: float32[F]`` from the planes ``x: uint8[R, 34]``: each tile row's 34 values and
    each scalar row's value once (``scalar: uint8[R]``), times ``inv_high: float32[R]``."""
    j = 0
    for r in range(scalar.shape[0]):
        if scalar[r]:
            out[j] = x[r, 0] * inv_high[r]
            j += 1
        else:
            for k in range(N_KINDS):
                out[j + k] = x[r, k] * inv_high[r]
            j += N_KINDS


def encode(game: Game, seat: int, out: np.ndarray | None = None, *, layout: str = "planes",
           history: bool = False) -> np.ndarray:
    """The observation of ``seat`` (layouts in the module docstring).

    ``layout="planes"``: ``uint8[R, 34]`` with ``R = n_planes(history)`` (76,
    or 124 with the order-of-play block); ``layout="flat"``: ``float32[F]``
    with ``F = flat_size(history)`` (967 or 2599), every value in ``[0, 1]``.
    ``game``: a started :class:`caishen.sim.engine.Game`; ``seat``: 0..3; ``out``: an
    optional buffer of that shape and dtype to fill (returned).  Depends only
    on what ``seat`` may see.  Raises ``ValueError`` for a bad seat, layout,
    an unstarted game or a wrong ``out`` buffer.
    """
    if not isinstance(game, Game):
        raise ValueError(f"encode expects a caishen.sim.engine.Game, got {type(game).__name__}")
    game.current_player  # raises ValueError if the game was never reset
    if isinstance(seat, bool) or seat not in range(N_SEATS):
        raise ValueError(f"seat must be 0..3, got {seat!r}")
    if layout not in LAYOUTS:
        raise ValueError(f"layout must be one of {LAYOUTS}, got {layout!r}")
    rows = n_planes(bool(history))
    shape, dtype = ((rows, N_KINDS), np.uint8) if layout == "planes" else ((flat_size(bool(history)),), np.float32)
    if out is None:
        out = np.empty(shape, dtype)
    elif not isinstance(out, np.ndarray) or out.shape != shape or out.dtype != dtype:
        raise ValueError(f"out must be a {np.dtype(dtype).name}{list(shape)} array")
    x = out if layout == "planes" else np.empty((rows, N_KINDS), np.uint8)
    _encode(game.state, int(seat), _rulesets.get(game.rules_name).facts["joker"], x)
    if history:
        _encode_history(game.state, int(seat), x)
    if layout == "flat":
        _flatten(x, *_flat_tables(bool(history)), out)
    return out
