"""What one seat sees, as fixed-shape arrays: the observation layouts of every env (planes, flat, grid, candidates).

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

Suit grid (``layout="grid"``, feature set ``grid`` / ``grid+history``, for convolutions)
--------------------------------------------------------------------------------------
``uint8[R, 4, 9]``: each plane of the planes layout on a grid whose rows are
the suits (row 0 ``1m..9m``, 1 ``1p..9p``, 2 ``1s..9s``) and row 3 the
honours ``1z..7z`` with two padding cells, 0 in a tile plane and the plane's
value in a scalar plane (so a scalar plane stays constant).  In the 34-kind
rows ``9m`` sits next to ``1p``; on the grid a 3-wide convolution sees
only a suit's neighbours.

Assist (``assist=True``, any layout; feature sets ``<layout>+assist``)
------------------------------------------------------------------------
The hand-reading block ``assist`` v1 (:mod:`caishen.envs.assist`, table in
:data:`caishen.sim.bots.features.ASSIST_V1`): the shanten now and with the
tile on offer (scalar rows), and per kind the shanten after its discard and
the live effective tiles after it, from the seat's own tiles and what it
sees.  Planes and grid: 4 rows after the last row (``uint8[80, 34]``,
``[128, 34]`` with the order-of-play block); flat: 70 inputs after the
last (``float32[1037]`` / ``[2669]``); candidates: 70 inputs after the
context.  It is what a seat reads at its decision: in the final
observation of an ended hand (``final_obs``) the block is 0.

Candidates (``layout="candidates"``, feature sets ``candidates`` and ``candidates-context``)
-------------------------------------------------------------------------------------------
A dict of fixed shapes, one row per legal action of the seat to act (in the
engine's action order, :mod:`caishen.sim.bots.candidates`):

================  =================  ==========================================
key               dtype[shape]       meaning
================  =================  ==========================================
``candidates``    float32[40, 36]    per candidate: its type (one-hot) and the
                                     features the tuned and learned bots score
                                     (``candidates`` v1); zero rows past ``n``
``context``       float32[84]        the seat's context (``candidates-context``
                                     v1; ``[154]`` with ``assist=True``)
``actions``       int64[40]          the action of each candidate (the engine's
                                     layout), -1 past ``n``: the candidate-to-
                                     action map
``valid``         int8[40]           1 for the ``n`` candidates
================  =================  ==========================================

A seat that is not to act (and the final observation of an ended hand) has
no candidates: ``valid`` all 0, only the context.  The order-of-play block
is not offered with candidates (``history=True`` raises).
"""

from __future__ import annotations

import numpy as np
from gymnasium import spaces

from caishen.envs.assist import _assist_rows
from caishen.sim.bots.candidates import N_CANDIDATE, _context_from_planes, _encode_candidates, new_candidate_scratch
from caishen.sim.bots.features import (
    ASSIST_V1,
    FEATURE_SETS,
    HISTORY_DISCARDS,
    HISTORY_V1,
    MAX_CANDIDATES,
    PLANES_V1,
    FeatureSet,
    _encode,
    _encode_history,
    _flatten,
    _to_grid,
    candidate_sets,
    flat_tables,
    observation_set,
)
from caishen.sim.bots.policies import new_work
from caishen.sim.engine import N_ACTIONS, N_KINDS, N_SEATS, Game, Observation, _legal_mask
from caishen.sim.rules import base as _rulesets

__all__ = [
    "PLANES", "N_PLANES", "PLANE", "PLANE_HIGH", "HISTORY_PLANES", "N_HISTORY_PLANES", "HISTORY_DISCARDS",
    "FLAT_INDEX", "LAYOUTS", "encode", "feature_set", "flat_size", "n_planes", "plane_groups", "plane_high",
    "relative_seats", "candidate_shapes", "check_layout", "observation_space", "grid_high",
]

#: (name, rows, high, scalar) of each plane group of ``planes`` v1, in order (the table of
#: :data:`caishen.sim.bots.features.PLANES_V1`)
PLANES: tuple[tuple[str, int, int, bool], ...] = tuple((g.name, g.rows, g.high, g.scalar) for g in PLANES_V1)
#: the order-of-play block (``history=True``), appended after :data:`PLANES`
HISTORY_PLANES: tuple[tuple[str, int, int, bool], ...] = tuple((g.name, g.rows, g.high, g.scalar) for g in HISTORY_V1)
#: the assist block (``assist=True``), appended last
ASSIST_PLANES: tuple[tuple[str, int, int, bool], ...] = tuple((g.name, g.rows, g.high, g.scalar) for g in ASSIST_V1)
#: observation layouts: planes ``uint8[R, 34]``, the flat ``float32[F]`` vector, the suit grid
#: ``uint8[R, 4, 9]``, or the candidates (a dict, module docstring)
LAYOUTS = ("planes", "flat", "grid", "candidates")
#: first row of each plane group, by name (the order-of-play groups included)
PLANE: dict[str, int] = FEATURE_SETS["planes+history"].first_row
N_PLANES = FEATURE_SETS["planes"].rows
N_HISTORY_PLANES = FEATURE_SETS["planes+history"].rows - N_PLANES
#: first input of each plane group in the flat vector, by name
FLAT_INDEX: dict[str, int] = FEATURE_SETS["flat+history"].first_input


def check_layout(layout, history=False, assist=False) -> tuple[str, bool, bool]:
    """``(layout, history, assist)`` checked: ``ValueError`` naming a bad layout, a non-bool flag, or the
    order-of-play block asked with ``"candidates"``."""
    if layout not in LAYOUTS:
        raise ValueError(f"layout must be one of {LAYOUTS}, got {layout!r}")
    for name, v in (("history", history), ("assist", assist)):
        if not isinstance(v, (bool, np.bool_)):
            raise ValueError(f"{name} must be True or False, got {v!r}")
    if layout == "candidates" and history:
        raise ValueError("the order-of-play block (history=True) is not offered with observation='candidates'")
    return layout, bool(history), bool(assist)


def feature_set(layout: str = "planes", history: bool = False, assist: bool = False) -> FeatureSet:
    """The named, versioned feature set of a layout (:func:`caishen.sim.bots.features.observation_set`);
    for ``"candidates"`` the per-candidate set (its context: :func:`caishen.sim.bots.features.candidate_sets`)."""
    if layout == "candidates":
        return candidate_sets(bool(assist))[0]
    return observation_set(layout, bool(history), bool(assist))


def plane_groups(history: bool = False, assist: bool = False) -> tuple[tuple[str, int, int, bool], ...]:
    """The plane groups ``(name, rows, high, scalar)`` of a layout, in row order."""
    return PLANES + (HISTORY_PLANES if history else ()) + (ASSIST_PLANES if assist else ())


def n_planes(history: bool = False, assist: bool = False) -> int:
    """Rows of the planes: 76, 124 with the order-of-play block, 4 more with the assist block."""
    return feature_set("planes", history, assist).rows


def plane_high(history: bool = False, assist: bool = False) -> np.ndarray:
    """``uint8[n_planes(history, assist), 34]``: the largest value of each row (the Box space's ``high``)."""
    return np.concatenate([np.full((n, N_KINDS), high, np.uint8) for _, n, high, _ in plane_groups(history, assist)])


def grid_high(history: bool = False, assist: bool = False) -> np.ndarray:
    """``uint8[R, 4, 9]``: the largest value of each cell of the grid layout."""
    high = plane_high(history, assist)
    out = np.zeros((high.shape[0], 4, 9), np.uint8)
    _to_grid(high, flat_tables(feature_set("planes", history, assist))[0], out)
    return out


def flat_size(history: bool = False, assist: bool = False) -> int:
    """Length of the flat vector: 967, or 2599 with the order-of-play block (70 more with the assist block)."""
    return feature_set("flat", history, assist).shape[0]


def candidate_shapes(assist: bool = False) -> dict[str, tuple[tuple[int, ...], np.dtype]]:
    """The keys of a candidates observation: ``{key: (shape, dtype)}`` (module docstring)."""
    ctx = candidate_sets(bool(assist))[1].rows
    return {"candidates": ((MAX_CANDIDATES, N_CANDIDATE), np.dtype(np.float32)),
            "context": ((ctx,), np.dtype(np.float32)),
            "actions": ((MAX_CANDIDATES,), np.dtype(np.int64)),
            "valid": ((MAX_CANDIDATES,), np.dtype(np.int8))}


def _flat_tables(history: bool, assist: bool = False) -> tuple[np.ndarray, np.ndarray]:
    """``(scalar: uint8[R], inv_high: float32[R])`` per row, the arguments of ``_flatten``."""
    return flat_tables(feature_set("flat", history, assist))


#: ``uint8[N_PLANES, 34]``: the largest value of each row (the Box space's ``high``)
PLANE_HIGH = plane_high(False)


def relative_seats(seat: int) -> list[int]:
    """The seats in observation order for ``seat``: itself, next, opposite, previous."""
    return [(seat + r) % N_SEATS for r in range(N_SEATS)]


def _source(game, seat) -> tuple:
    """``(state, ep, tabs, rules_name, seat, acting)`` of a started :class:`Game` or an :class:`Observation`
    (a writable copy of its state and params: the kernels take the types of a ``Game``'s); ``ValueError``
    for anything else, a bad seat, or another seat than an observation's own."""
    if isinstance(game, Observation):
        if seat is None:
            seat = game.seat
        if isinstance(seat, bool) or seat != game.seat:
            raise ValueError(f"an observation is seat {game.seat}'s view, seat {seat!r} asked")
        return np.array([game.state])[0], np.array(game.ep), game.tabs, game.rules_name, int(seat), True
    if not isinstance(game, Game):
        raise ValueError(f"encode expects a caishen.sim.engine.Game or its observe(), got {type(game).__name__}")
    game.current_player  # raises ValueError if the game was never reset
    if isinstance(seat, bool) or seat not in range(N_SEATS):
        raise ValueError(f"seat must be 0..3, got {seat!r}")
    acting = not game.done and game.current_player == seat
    return game.state, game._ep, game._tabs, game.rules_name, int(seat), acting


def encode(game: Game | Observation, seat: int | None = None, out: np.ndarray | None = None, *,
           layout: str = "planes", history: bool = False, assist: bool = False):
    """The observation of ``seat`` (layouts in the module docstring).

    ``layout="planes"``: ``uint8[R, 34]`` with ``R = n_planes(history, assist)``
    (76, or 124 with the order-of-play block, 4 more with the assist block);
    ``layout="flat"``: ``float32[F]`` with ``F = flat_size(history, assist)``
    (967 or 2599, 70 more with assist), every value in ``[0, 1]``;
    ``layout="grid"``: ``uint8[R, 4, 9]``; ``layout="candidates"``: a dict
    (:func:`candidate_shapes`), no ``out``.  ``game``: a started
    :class:`caishen.sim.engine.Game`, or an :class:`caishen.sim.engine.Observation`
    (``game.observe()``: a step-API bot's input; ``seat`` its own, the default); ``seat``: 0..3; ``out``: an optional
    buffer of that shape and dtype to fill (returned).  Depends only on what
    ``seat`` may see.  Raises ``ValueError`` for a bad seat, layout, flag, an
    unstarted game or a wrong ``out`` buffer.
    """
    st, ep, tabs, rules_name, seat, acting = _source(game, seat)
    layout, history, assist = check_layout(layout, history, assist)
    joker = int(_rulesets.get(rules_name).facts["joker"])
    rows = n_planes(history)
    x = np.zeros((rows + (4 if assist else 0), N_KINDS), np.uint8)
    _encode(st, seat, joker, x)
    if history:
        _encode_history(st, seat, x)
    work = new_work()
    if assist:
        _assist_rows(st, seat, joker, tabs, work, np.zeros(N_KINDS, np.uint8), x, rows)
    if layout == "candidates":
        if out is not None:
            raise ValueError("encode(layout='candidates') returns a new dict; out is not taken")
        return _candidates(st, ep, tabs, acting, joker, x, assist, work)
    fs = feature_set(layout, history, assist)
    dtype = np.float32 if layout == "flat" else np.uint8
    if out is None:
        out = np.empty(fs.shape, dtype)
    elif not isinstance(out, np.ndarray) or out.shape != fs.shape or out.dtype != dtype:
        raise ValueError(f"out must be a {np.dtype(dtype).name}{list(fs.shape)} array")
    if layout == "planes":
        out[...] = x
    elif layout == "flat":
        _flatten(x, *_flat_tables(history, assist), out)
    else:
        _to_grid(x, _flat_tables(history, assist)[0], out)
    return out


def _candidates(st, ep, tabs, acting: bool, joker: int, x: np.ndarray, assist: bool, work) -> dict:
    """The candidates observation of a seat from its planes ``x`` (with the assist rows if ``assist``) in the
    game state ``st`` (``acting``: the seat is to act)."""
    shapes = candidate_shapes(assist)
    obs = {k: np.zeros(shape, dtype) for k, (shape, dtype) in shapes.items()}
    cs = new_candidate_scratch()
    _context_from_planes(x, joker, tabs, cs[1], cs[2], cs[3], obs["context"])
    if assist:
        n0 = candidate_sets(False)[1].rows
        _flatten(x[N_PLANES:], *flat_tables(FeatureSet("assist", 1, "flat", ASSIST_V1)), obs["context"][n0:])
    obs["actions"][:] = -1
    if acting:
        _legal_mask(st, ep)
        n = _encode_candidates(st, ep, tabs, work, obs["candidates"], obs["actions"])
        obs["valid"][:n] = 1
    return obs


def observation_space(layout: str, history: bool = False, assist: bool = False) -> spaces.Space:
    """The observation space of one seat in a layout (:mod:`caishen.envs.observation`): a ``Box``, or for
    ``"candidates"`` a ``Dict`` of ``candidates`` (``Box(-inf, inf)``: real features), ``context`` (in
    ``[0, 1]``), ``actions`` (``-1 .. 144``) and ``valid`` (0 or 1)."""
    if layout == "candidates":
        sh = candidate_shapes(assist)
        return spaces.Dict({
            "candidates": spaces.Box(-np.inf, np.inf, sh["candidates"][0], np.float32),
            "context": spaces.Box(0.0, 1.0, sh["context"][0], np.float32),
            "actions": spaces.Box(-1, N_ACTIONS - 1, sh["actions"][0], np.int64),
            "valid": spaces.Box(0, 1, sh["valid"][0], np.int8)})
    if layout == "planes":
        high = plane_high(history, assist)
        return spaces.Box(0, high, high.shape, np.uint8)
    if layout == "grid":
        high = grid_high(history, assist)
        return spaces.Box(0, high, high.shape, np.uint8)
    return spaces.Box(0.0, 1.0, (flat_size(history, assist),), np.float32)
