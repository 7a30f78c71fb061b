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

The layouts are the feature sets of :mod:`caishen.sim.bots.features`, named and
versioned (``planes`` v1, ``planes+history`` v1, ``flat`` v1, ``flat+history``
v1: :func:`feature_set`); the tables below are that module's tables (a test
compares them), and a checkpoint records the set it was trained on.  The
planes are filled by one numba kernel
(:func:`caishen.sim.bots.features._encode`, a few microseconds) straight
from the engine's state record; it shows the same
facts as :meth:`caishen.sim.engine.Game.observation` (the engine's statement of what
a seat may see), and the tests compare it with a pure-Python encoder built
on that method, on every state of many random hands.  Hidden, and therefore
absent: the other seats' concealed tiles (only their number is shown) and
drawn tiles, the kinds of their concealed kongs (K-5.3, J-3.2), the wall,
their private flags (passed pongs and wins, 硬子 offers), and which seat is
being asked to claim (a seat only learns that it is asked itself:
``acting``).  The only private facts shown are the observing seat's own.

Layout: feature set ``planes`` version 1 (``N_PLANES = 76``; ``high`` is the largest value a plane takes,
also the upper bound of the Box space; every lower bound is 0)

=====  ========================  =====  ===========================================
rows   name                      high   meaning
=====  ========================  =====  ===========================================
0      ``hand``                  4      own concealed tiles, count per kind
1      ``drawn``                 1      own tile drawn this turn (own turn only)
2-5    ``discards``              4      each seat's discards so far, count per kind
                                        (claimed ones included)
6-9    ``last_discard``          1      each seat's latest discard
10-13  ``chows``                 4      tiles in each seat's chows, count per kind
14-17  ``pongs``                 1      kinds of each seat's pongs
18-21  ``kongs``                 1      kinds of each seat's exposed and added
                                        kongs
22     ``own_concealed_kongs``   1      kinds of own concealed kongs
23     ``pending``               1      the discard or added-kong tile on offer
24     ``passed_pong``           1      own: kinds it may not pong now (K-4.4,
                                        J-3.6)
25     ``swap_forbid``           1      own: the kind its discard may not be
                                        (K-4.5)
26     ``joker``                 1      the joker kind (the 财神 ``5z``, K-2.1)
27-30  ``dealer``                1      scalar: the seat is the dealer
31-34  ``turn``                  1      scalar: it is the seat's turn (the
                                        discarder while its discard or kong is on
                                        offer)
35-38  ``pending_from``          1      scalar: the pending tile is the seat's
39-43  ``phase``                 1      scalar, one-hot: turn, claim (a discard on
                                        offer), rob (an added kong on offer,
                                        K-5.5), done, hard (硬子 declarations, J-4.2)
44     ``acting``                1      scalar: the observing seat is to act
45     ``tiles_left``            136    scalar: tiles left in the wall (reserve
                                        included, K-3.4)
46-49  ``hand_size``             14     scalar: the seat's concealed tile count
50-53  ``concealed_kongs``       4      scalar: the seat's concealed kongs
54-57  ``n_chows``               4      scalar: the seat's chows (K-4.5)
58-61  ``chain``                 8      scalar: the seat's chain length (K-6.5)
62-65  ``chain_kong``            4      scalar: ... of which kong links
66-69  ``piao_open``             1      scalar: the seat's 飘财 circle is open
                                        (K-9.2)
70-73  ``declared``              2      scalar: the seat's declaration: 1 架听
                                        (J-4.1), 2 硬子 (J-4.2)
74     ``passed_win``            1      scalar, own: passed a win, no discard win
                                        until its next draw (J-3.5)
75     ``streak``                255    scalar: the dealer's streak k (J-2.4;
                                        capped at 255)
=====  ========================  =====  ===========================================

A seat's 飘财 links in its chain (K-6.5) are ``chain - chain_kong``; its
飘财 count this hand is the number of ``5z`` in its ``discards`` plane.
The order of the discards is kept only as each seat's latest discard,
unless the order-of-play block below is added.

Order of play (``history=True``, feature set ``planes+history``; 48 more rows)
-----------------------------------------------------------------------------
Strong mahjong agents read the order of play; the engine's state keeps each
seat's discards in order (with whether each was claimed) and its melds in
the order they were made, and this block shows exactly that, appended after
row 75 (so ``uint8[124, 34]`` with the block):

=======  ====================  =====  ===========================================
rows     name                  high   meaning
=======  ====================  =====  ===========================================
76-107   ``recent_discards``   2      seat-relative seat ``r`` (rows ``76 + 8 r``
                                      .. ``83 + 8 r``): its last 8 discards, most
                                      recent first, one row each: 1 at the kind
                                      if the tile is still on the table, 2 if it
                                      was claimed (went into a meld or a winner's
                                      hand: which claims happened); a row of
                                      zeros when the seat has fewer discards
108-123  ``meld_order``        5      seat ``r`` (rows ``108 + 4 r`` .. ``111 + 4
                                      r``): its melds in the order made, the meld
                                      type (1 chow, 2 pong, 3 exposed kong, 4
                                      added kong, 5 concealed kong;
                                      ``caishen.sim.tiles.MELD_*``) at the meld's
                                      kind (a chow's lowest tile); another seat's
                                      concealed kong is a row of zeros (its kind
                                      is hidden, K-5.3; ``concealed_kongs``
                                      counts it)
=======  ====================  =====  ===========================================

Flat vector (``layout="flat"``, feature set ``flat`` / ``flat+history``, for MLPs)
-----------------------------------------------------------------------------------
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

from caishen.sim.bots.features import (
    FEATURE_SETS,
    HISTORY_DISCARDS,
    HISTORY_V1,
    PLANES_V1,
    FeatureSet,
    _encode,
    _encode_history,
    _flatten,
    flat_tables,
    observation_set,
)
from caishen.sim.engine import N_KINDS, N_SEATS, Game
from caishen.sim.rules import base as _rulesets

__all__ = [
    "PLANES", "N_PLANES", "PLANE", "PLANE_HIGH", "HISTORY_PLANES", "N_HISTORY_PLANES", "HISTORY_DISCARDS",
    "FLAT_INDEX", "LAYOUTS", "encode", "feature_set", "flat_size", "n_planes", "plane_groups", "plane_high",
    "relative_seats",
]

#: (name, rows, high, scalar) of each plane group of ``planes`` v1, in order (the table of
#: :data:`caishen.sim.bots.features.PLANES_V1`)
PLANES: tuple[tuple[str, int, int, bool], ...] = tuple((g.name, g.rows, g.high, g.scalar) for g in PLANES_V1)
#: the order-of-play block (``history=True``), appended after :data:`PLANES`
HISTORY_PLANES: tuple[tuple[str, int, int, bool], ...] = tuple((g.name, g.rows, g.high, g.scalar) for g in HISTORY_V1)
#: observation layouts: planes ``uint8[R, 34]`` or the flat ``float32[F]`` vector
LAYOUTS = ("planes", "flat")
#: first row of each plane group, by name (the order-of-play groups included)
PLANE: dict[str, int] = FEATURE_SETS["planes+history"].first_row
N_PLANES = FEATURE_SETS["planes"].rows
N_HISTORY_PLANES = FEATURE_SETS["planes+history"].rows - N_PLANES
#: first input of each plane group in the flat vector, by name
FLAT_INDEX: dict[str, int] = FEATURE_SETS["flat+history"].first_input


def feature_set(layout: str = "planes", history: bool = False) -> FeatureSet:
    """The named, versioned feature set of a layout (:func:`caishen.sim.bots.features.observation_set`)."""
    return observation_set(layout, bool(history))


def plane_groups(history: bool = False) -> tuple[tuple[str, int, int, bool], ...]:
    """The plane groups ``(name, rows, high, scalar)`` of a layout, in row order."""
    return PLANES + HISTORY_PLANES if history else PLANES


def n_planes(history: bool = False) -> int:
    """Rows of the planes: 76, or 124 with the order-of-play block."""
    return feature_set("planes", history).rows


def plane_high(history: bool = False) -> np.ndarray:
    """``uint8[n_planes(history), 34]``: the largest value of each row (the Box space's ``high``)."""
    return np.concatenate([np.full((n, N_KINDS), high, np.uint8) for _, n, high, _ in plane_groups(history)])


def flat_size(history: bool = False) -> int:
    """Length of the flat vector: 967, or 2599 with the order-of-play block."""
    return feature_set("flat", history).shape[0]


def _flat_tables(history: bool) -> tuple[np.ndarray, np.ndarray]:
    """``(scalar: uint8[R], inv_high: float32[R])`` per row, the arguments of ``_flatten``."""
    return flat_tables(feature_set("flat", history))


#: ``uint8[N_PLANES, 34]``: the largest value of each row (the Box space's ``high``)
PLANE_HIGH = plane_high(False)


def relative_seats(seat: int) -> list[int]:
    """The seats in observation order for ``seat``: itself, next, opposite, previous."""
    return [(seat + r) % N_SEATS for r in range(N_SEATS)]


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
    fs = feature_set(layout, history)
    rows = n_planes(bool(history))
    shape, dtype = (fs.shape, np.uint8) if layout == "planes" else (fs.shape, np.float32)
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
