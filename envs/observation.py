"""What one seat sees, as fixed-shape numeric planes: the observation of both envs.

:func:`encode` turns a :class:`sim.engine.Game` and a seat into
``uint8[N_PLANES, 34]``: one row ("plane") per feature, one column per tile
kind (``1m..9m 1p..9p 1s..9s 1z..7z``).  *Tile planes* hold a value per
kind; *scalar planes* repeat one value in all 34 columns (the AlphaZero
habit, so a convolution over kinds sees them everywhere).  Planes of the
four seats come in seat-relative order: ``+0`` the observing seat itself,
``+1`` its next seat (下家), ``+2`` the seat opposite (对家), ``+3`` its
previous seat (上家).  One layout serves both rule sets; features of the
other rule set stay 0 (Kaihua has no 架听, Jiating no 财神 and no chow).

The planes are filled by one numba kernel (:func:`_encode`, a few
microseconds) straight from the engine's state record; it shows the same
facts as :meth:`sim.engine.Game.observation` (the engine's statement of what
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
26     ``joker``               1      the joker kind (Kaihua 财神 ``5z``, K-2.1)
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
The order of the discards is kept only as each seat's latest discard.
"""

from __future__ import annotations

import numpy as np
from numba import njit

from sim.engine import (
    N_KINDS,
    N_SEATS,
    PH_DONE,
    PH_TURN,
    RULESET_FACTS,
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
from sim.tiles import MELD_CHOW, MELD_KONG_ADDED, MELD_KONG_CONCEALED, MELD_KONG_EXPOSED, MELD_PONG

__all__ = ["PLANES", "N_PLANES", "PLANE", "PLANE_HIGH", "encode", "relative_seats"]

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

#: first row of each plane group, by name
PLANE: dict[str, int] = {}
_row = 0
for _name, _n, _high, _scalar in PLANES:
    PLANE[_name] = _row
    _row += _n
N_PLANES = _row
del _row, _name, _n, _high, _scalar

#: ``uint8[N_PLANES, 34]``: the largest value of each row (the Box space's ``high``)
PLANE_HIGH = np.concatenate([np.full((n, N_KINDS), high, np.uint8) for _, n, high, _ in PLANES])

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


def encode(game: Game, seat: int, out: np.ndarray | None = None) -> np.ndarray:
    """The observation planes of ``seat``: ``uint8[N_PLANES, 34]`` (layout in the module docstring).

    ``game``: a started :class:`sim.engine.Game`; ``seat``: 0..3; ``out``: an
    optional ``uint8[N_PLANES, 34]`` buffer to fill (returned).  Depends only
    on what ``seat`` may see.  Raises ``ValueError`` for a bad seat, an
    unstarted game or a wrong ``out`` buffer.
    """
    if not isinstance(game, Game):
        raise ValueError(f"encode expects a sim.engine.Game, got {type(game).__name__}")
    game.current_player  # raises ValueError if the game was never reset
    if isinstance(seat, bool) or seat not in range(N_SEATS):
        raise ValueError(f"seat must be 0..3, got {seat!r}")
    if out is None:
        out = np.empty((N_PLANES, N_KINDS), np.uint8)
    elif not isinstance(out, np.ndarray) or out.shape != (N_PLANES, N_KINDS) or out.dtype != np.uint8:
        raise ValueError(f"out must be a uint8[{N_PLANES}, {N_KINDS}] array")
    _encode(game.state, int(seat), RULESET_FACTS[game.rules_name]["joker"], out)
    return out
