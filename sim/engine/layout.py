"""The engine's layout: sizes, the state record, its slots, the phases and the action space.

Everything here is data (no kernels): the ``STATE_DTYPE`` record every
kernel reads and writes, the column indices into its ``seat`` / ``sc`` /
``wins`` arrays and into the engine params ``ep``, the phases, declarations
and claim levels, and the flat action space with its names
(:func:`action_name`, :func:`parse_action`).  Numba freezes these integer
constants into the kernels that import them.

Action layout (``N_ACTIONS = 145``)
-----------------------------------
========  =====================  ==================================================
index     name                   meaning
========  =====================  ==================================================
0..33     ``discard <kind>``     discard one tile of kind ``a`` (own turn)
34..67    ``declare <kind>``     discard kind ``a - 34`` and declare 架听 (J-4.1;
                                 fact ``declare``)
68..101   ``kong_concealed <k>`` concealed kong of kind ``a - 68`` (K-5.3)
102..135  ``kong_added <k>``     add kind ``a - 102`` to an own pong (K-5.2)
136       ``chow_low``           chow, the claimed tile is the run's lowest (K-4.2)
137       ``chow_mid``           chow, the claimed tile is the run's middle
138       ``chow_high``          chow, the claimed tile is the run's highest
139       ``pong``               pong the claimed tile (K-4.2, K-4.6)
140       ``kong_exposed``       exposed kong on the claimed tile (K-5.1)
141       ``win``                self-draw win on own turn, or win on the offered
                                 discard / robbed added kong (K-4.3, K-5.5, K-7)
142       ``pass``               decline the offered claim
143       ``hard_declare``       硬子 declaration (J-4.2; fact ``hard``)
144       ``hard_decline``       decline it (J-4.2; fact ``hard``)
========  =====================  ==================================================

State layout (``STATE_DTYPE``: one numpy record of fixed-size arrays)
---------------------------------------------------------------------
========== ================= ================================================
field      dtype[shape]      meaning
========== ================= ================================================
wall       uint8[136]        tile kinds; normal draws at ``sc[SC_HEAD]``
                             upwards, replacement draws at ``sc[SC_TAIL]``
                             downwards (K-1.3); tiles left = tail - head + 1
hands      uint8[4, 34]      concealed tile counts per seat
meld_type  int8[4, 4]        ``caishen.sim.tiles.MELD_*`` per seat and meld slot
meld_kind  int8[4, 4]        kind of each meld (a chow's lowest tile)
discards   uint8[4, 64]      each seat's discards in order
dflags     uint8[4, 64]      ``DF_CLAIMED``: the discard went into a meld / a hand
seat       int64[4, N_SF]    per-seat counters and flags, ``SF_*`` columns
sc         int64[N_SC]       scalars, ``SC_*`` slots (pointers, phase, pending
                             tile, claim queue position, result)
queue      int64[8, 2]       claim queue: (seat, level) rows, ``LV_*`` levels
circle     uint8[4]          scratch: the 飘 circles passed to payments
mask       uint8[145]        the legal-action mask (1 = legal)
legal      int16[145]        the legal actions as a list, ``sc[SC_N_LEGAL]`` long
tmp        int64[4]          scratch for payments
counts     int64[34]         scratch for the checker
wins       int16[3, N_WX]    the context of each win (``WX_*``), first winner first
work       int64[3, 34]      scratch for the 架听 kernel (J-4.1)
========== ================= ================================================

A batch of games is the same record with a leading batch axis:
``states = new_state(n)`` is ``STATE_DTYPE[n]`` and ``states[i]`` one game
(a record view that the kernels modify in place).  A record passes to a
kernel as one pointer, without the reference counting that a tuple of
arrays costs on every call.
"""

from __future__ import annotations

import numpy as np

from caishen.sim import tiles as _tiles
from caishen.sim.rules.codes import DECL_HARD, DECL_JIATING, DECL_NONE  # noqa: F401
from caishen.sim.rules.records import (  # noqa: F401  (the win contexts, in the state's ``wins``)
    MAX_WINNERS,
    N_WX,
    WX_DEALER_READY,
    WX_DECL,
    WX_DISCARDER,
    WX_FIRST_TURN,
    WX_HAND,
    WX_MELD_KIND,
    WX_MELD_TYPE,
    WX_N_MELDS,
    WX_ON_FIRST,
    WX_REPLACEMENT,
    WX_SEAT,
    WX_TILE,
    WX_TYPE,
    WX_VISIBLE,
)
from caishen.sim.validate import check_int, short_repr


# sizes
N_SEATS = 4
N_KINDS = 34
N_TILES = 136
MAX_MELDS = 4
#: discards per seat; a seat discards at most ~(83 / 4 + claims + kongs) < 64
MAX_DISCARDS = 64
QUEUE_LEN = 8
# the win contexts (WX_*, MAX_WINNERS) are the records contract's: caishen.sim.rules.records

# actions (the layout: the module docstring)
A_DISCARD = 0
A_DECLARE = 34
A_KONG_CONCEALED = 68
A_KONG_ADDED = 102
A_CHOW_LOW = 136
A_CHOW_MID = 137
A_CHOW_HIGH = 138
A_PONG = 139
A_KONG_EXPOSED = 140
A_WIN = 141
A_PASS = 142
A_HARD_DECLARE = 143
A_HARD_DECLINE = 144
N_ACTIONS = 145

# phases
PH_TURN = 0
PH_CLAIM = 1
PH_ROB = 2
PH_DONE = 3
PH_HARD = 4  #: J-4.2: the seat to act declares or declines 硬子
PHASE_NAMES = {PH_TURN: "turn", PH_CLAIM: "claim", PH_ROB: "rob", PH_DONE: "done", PH_HARD: "hard"}

# declarations (seat[s, SF_DECL]; J-4.1, J-4.2): DECL_* of caishen.sim.rules.codes
# stages of PH_HARD (sc[SC_HARD_STAGE])
HARD_STAGE_NONE = 0
HARD_STAGE_DEAL = 1  #: ready non-dealers are asked before the dealer's first discard
HARD_STAGE_DEALER = 2  #: the dealer, ready after the first discard, is asked with it

# claim option bits (seat[s, SF_CLAIM_OPTS]) and claim levels (queue[:, 1])
OPT_WIN = 1
OPT_PONG = 2
OPT_KONG = 4
OPT_CHOW_LOW = 8
OPT_CHOW_MID = 16
OPT_CHOW_HIGH = 32
LV_WIN = 0
LV_MELD = 1
LV_CHOW = 2

#: discard flag: the tile was claimed (it now sits in a meld or a winner's hand)
DF_CLAIMED = 1

# per-seat columns: seat[s, SF_*]
SF_N_MELDS = 0  #: melds declared (kongs count one)
SF_N_DISCARDS = 1  #: discards made (claimed ones included)
SF_CHAIN_LEN = 2  #: K-6.5 links since the last non-财神 discard / chow / pong
SF_CHAIN_PIAO = 3  #: ... of which 飘财 (财神 discards)
SF_CHAIN_KONG = 4  #: ... of which kongs
SF_PIAO_OPEN = 5  #: K-9.2 the seat's 飘财 circle is open
SF_PASSED_PONG = 6  #: K-4.4 bit k set: may not pong kind k until the next turn
SF_PASSED_WIN = 7  #: passed a win (only used when EP_PASSED_WIN is set)
SF_N_CHOWS = 8  #: chows made this hand (K-4.5)
SF_SWAP_FORBID = 9  #: K-4.5 kind the next discard may not be, -1 none
SF_PIAO_COUNT = 10  #: 飘财 attempts (财神 discards) this hand
SF_FAILED_PIAO = 11  #: K-9.3 1 if somebody else won inside this seat's circle
SF_SCORE = 12  #: score change of this hand
SF_CLAIM_OPTS = 13  #: OPT_* bits on the pending discard / added kong
SF_CLAIM_EXP = 14  #: exponent of the pending claim win
SF_CLAIM_FLAGS = 15  #: flags of the pending claim win
SF_WON = 16  #: 1 if this seat won the hand
SF_EXPONENT = 17  #: exponent of this seat's win
SF_FLAGS = 18  #: hand-type flags of this seat's win
SF_TENPAI = 19  #: 1 if the seat's 3m+1 concealed tiles are ready (shanten <= 0)
SF_DECL = 20  #: DECL_* declaration of the seat (J-4.1, J-4.2)
SF_DECL_TURN = 21  #: sc[SC_TURNS] counting the declaring discard (0: hard at the deal), -1 none
SF_HARD_OFFER = 22  #: 1 if the seat was offered the 硬子 declaration (J-4.2)
SF_N_PASSED_WIN = 23  #: wins (on a discard or robbed kong) the seat was offered and passed (J-3.5)
SF_DECL_MELDS = 24  #: melds the seat had when it declared (a hard seat melds no more, J-4.2)
SF_FORCE_PIAO = 25  #: K-2.5 (E3) 1 from a 财神 draw in 爆头 shape until the seat's 财神 discard
SF_WIN_PIAO = 26  #: 飘 links counted in this seat's winning exponent (K-6.5, K-9.4, K-10)
SF_WIN_KONG = 27  #: kong links counted in this seat's winning exponent
SF_CLAIM_PIAO = 28  #: 飘 links the pending claim win would count (the win kernel's answer)
SF_CLAIM_KONG = 29  #: kong links the pending claim win would count
SF_SHANTEN = 30  #: the shanten of the seat's 3m+1 concealed tiles, or a lower bound >= 1 of it (engine-internal)
N_SF = 31

# scalar slots: sc[SC_*]
SC_HEAD = 0  #: next normal draw index
SC_TAIL = 1  #: next replacement draw index
SC_PHASE = 2
SC_TO_ACT = 3  #: seat to act, -1 when done
SC_TURN = 4  #: seat whose turn it is (the discarder during claims)
SC_DEALER = 5
SC_TILE = 6  #: pending discard / added-kong tile, -1 none
SC_SRC = 7  #: its seat
SC_DRAWN = 8  #: tile drawn this turn (-1 after a claim)
SC_REPLACEMENT = 9  #: 1 if SC_DRAWN came from the tail (K-5.4)
SC_JUST_CLAIMED = 10  #: 1 right after a chow / pong (must discard, K-4.1)
SC_CAN_TSUMO = 11  #: 1 if the self-draw win is legal this turn
SC_TSUMO_EXP = 12
SC_TSUMO_FLAGS = 13
SC_Q_LEN = 14
SC_Q_POS = 15
SC_N_RON = 16  #: winners declared on the pending discard (multiple_ron)
SC_ROB_MELD = 17  #: meld slot of the pending added kong
SC_TURNS = 18  #: discards made in the hand
SC_STEPS = 19  #: actions taken
SC_WINNER = 20  #: first winner, -1 none
SC_WIN_TYPE = 21  #: WIN_* code, -1 draw
SC_DISCARDER = 22  #: discarder / robbed seat, -1 none
SC_WINNERS_MASK = 23
SC_EXPONENT = 24
SC_FLAGS = 25
SC_WIN_TILE = 26
SC_MATCH_HAND = 27  #: index of this hand in its match
SC_N_LEGAL = 28  #: number of legal actions (set by _legal_mask)
SC_STREAK = 29  #: the dealer's streak k (J-2.4), set by the batch loop / Game.reset
SC_HARD_STAGE = 30  #: HARD_STAGE_* while sc[SC_PHASE] == PH_HARD
SC_DECLARE_KINDS = 31  #: bit k: ``declare <k>`` is legal this turn (J-4.1)
SC_N_WINS = 32  #: winners recorded in ``wins`` (0..MAX_WINNERS)
SC_TSUMO_PIAO = 33  #: 飘 links the self-draw win would count (the win kernel's answer)
SC_TSUMO_KONG = 34  #: kong links the self-draw win would count
N_SC = 35

# engine params: ep[EP_*] (a rule set's facts, kernel codes and options, caishen.sim.engine.params)
EP_JOKER = 0  #: joker kind or -1; a joker is never claimed nor melded (K-2.2, K-2.3)
EP_RESERVE = 1  #: tiles never drawn (K-3.4)
EP_CHOW = 2  #: 1 if the next seat may chow (K-4.2)
EP_MULTI_RON = 3  #: K-4.3
EP_SWAP_MAX_CHOWS = 4  #: K-4.5
EP_ROTATION = 5  #: 0 next_after_win, 1 winner_stays (K-3.3)
EP_DISCARD_WIN = 6  #: wins on discards and robbed kongs allowed (K-7.1, K-7.2)
EP_ROB_KONG = 7  #: added kongs can be robbed (K-5.5)
EP_PIAO_BAN = 8  #: no chow / pong / exposed kong while a 飘财 circle is open (K-9.2)
EP_FORCE_JOKER_MIN = 9  #: holding this many jokers forces a joker discard (K-2.4), 0 off
EP_BAOTOU_FORCE = 10  #: 爆头 shape + joker draw forces a joker discard (K-2.5)
EP_PASSED_PONG = 11  #: 0 off, 1 same kind, 2 any kind (K-4.4)
EP_PASSED_PONG_CLAIM_CLEARS = 12  #: 1: the ban ends at the next turn: a draw or a later claim (K-4.4)
EP_PASSED_WIN = 13  #: 1: a passed win bans wins on discards until the next draw
EP_KONG_AFTER_CLAIM = 14  #: 1: kongs allowed right after a chow / pong
EP_FIRST_DEALER_RANDOM = 15  #: 1: a match's first dealer is random (else seat 0)
EP_WIN_KERNEL = 16  #: the rule set's win test: a WIN_KERNEL_* code of caishen.sim.rules.kernels
EP_ENGINE_PAYMENTS = 17  #: the payments on a win: a PAYMENTS_* code of caishen.sim.rules.kernels (0: none)
EP_DECLARE = 18  #: 1: 架听 declarations with a discard (J-4.1)
EP_HARD = 19  #: 1: 硬子 hard declarations at the deal, automatic discards after (J-4.2)
EP_POINTS = 20  #: the points of a finished hand: a POINTS_* code of caishen.sim.rules.kernels
N_EP = 21

ROTATION_NEXT_AFTER_WIN = 0
ROTATION_WINNER_STAYS = 1

#: one game's state: a numpy record of fixed-size arrays (see the module docstring)
STATE_DTYPE = np.dtype(
    [
        ("wall", np.uint8, (N_TILES,)),
        ("hands", np.uint8, (N_SEATS, N_KINDS)),
        ("meld_type", np.int8, (N_SEATS, MAX_MELDS)),
        ("meld_kind", np.int8, (N_SEATS, MAX_MELDS)),
        ("discards", np.uint8, (N_SEATS, MAX_DISCARDS)),
        ("dflags", np.uint8, (N_SEATS, MAX_DISCARDS)),
        ("circle", np.uint8, (N_SEATS,)),
        ("mask", np.uint8, (N_ACTIONS,)),
        ("legal", np.int16, (N_ACTIONS,)),
        ("seat", np.int64, (N_SEATS, N_SF)),
        ("sc", np.int64, (N_SC,)),
        ("queue", np.int64, (QUEUE_LEN, 2)),
        ("tmp", np.int64, (N_SEATS,)),
        ("counts", np.int64, (N_KINDS,)),
        ("wins", np.int16, (MAX_WINNERS, N_WX)),
        ("work", np.int64, (3, N_KINDS)),
        ("rng", np.uint64, (4,)),
    ],
    align=True,
)

#: scratch fields (buffers) and the random stream (``rng``: caishen.sim.rng's state, used by
#: the wall shuffle and the random bots): not game state, ignored when comparing states
SCRATCH_FIELDS = ("circle", "mask", "legal", "tmp", "counts", "work", "rng")


#: bounds of Game.reset's counters: the record columns that hold them (int32, int16)
MAX_MATCH_HAND = 2**31 - 1
MAX_STREAK = 2**15 - 1


def new_state(batch: int = 1) -> np.ndarray:
    """Zeroed states: a structured array ``STATE_DTYPE[batch]``; ``states[i]`` is one game.

    A single game is ``new_state()[0]`` (a record view; kernels modify it in place).
    Raises ``ValueError`` unless ``batch`` is an integer >= 1 (not a bool).
    """
    return np.zeros(check_int("batch", batch, 1, 2**31 - 1), STATE_DTYPE)


_CLAIM_ACTION_NAMES = {
    A_CHOW_LOW: "chow_low",
    A_CHOW_MID: "chow_mid",
    A_CHOW_HIGH: "chow_high",
    A_PONG: "pong",
    A_KONG_EXPOSED: "kong_exposed",
    A_WIN: "win",
    A_PASS: "pass",
    A_HARD_DECLARE: "hard_declare",
    A_HARD_DECLINE: "hard_decline",
}
_KIND_ACTION_PREFIXES = (
    (A_DISCARD, "discard"),
    (A_DECLARE, "declare"),
    (A_KONG_CONCEALED, "kong_concealed"),
    (A_KONG_ADDED, "kong_added"),
)


def action_name(action: int) -> str:
    """Readable name of an action index: ``'discard 3m'``, ``'kong_added 7z'``, ``'pong'``, ``'pass'``.

    Raises ``ValueError`` for an index outside ``0 .. N_ACTIONS - 1`` or one
    that is not an integer (a bool included).
    """
    a = _check_action_index(action)
    for base, prefix in _KIND_ACTION_PREFIXES:
        if base <= a < base + N_KINDS:
            return f"{prefix} {_tiles.kind_name(a - base)}"
    return _CLAIM_ACTION_NAMES[a]


def parse_action(name: str) -> int:
    """Inverse of :func:`action_name` (``'discard 3m' -> 2``); raises ``ValueError`` for an unknown name."""
    if not isinstance(name, str):
        raise ValueError(f"action name must be a str, got {short_repr(name)}")
    parts = name.split()
    if len(parts) == 2:
        for base, prefix in _KIND_ACTION_PREFIXES:
            if parts[0] == prefix:
                kinds = _tiles.parse_kinds(parts[1])
                if len(kinds) != 1:
                    raise ValueError(f"action {short_repr(name)}: expected one tile")
                return base + kinds[0]
    for a, n in _CLAIM_ACTION_NAMES.items():
        if name == n:
            return a
    raise ValueError(f"unknown action name {short_repr(name)}")


def _check_action_index(action) -> int:
    """An action index ``0 .. N_ACTIONS - 1`` (int or numpy integer; a bool is not an action)."""
    return check_int("action", action, 0, N_ACTIONS - 1)
