"""The engine's layout: sizes, the state record and its named parts, the params, the phases and the action space.

Everything here is data (no kernels): the ``STATE_DTYPE`` record every
kernel reads and writes (its game scalars ``st.table.<field>``, each seat's
counters ``st.seat[s].<field>``: one named field each, a comment on its
line), the engine params record ``PARAMS_DTYPE`` (``ep.<field>``), the
win contexts' record ``WIN_DTYPE`` (``st.wins[j].<field>``), the phases, declarations
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
wall       uint8[136]        tile kinds; normal draws at ``table.head``
                             upwards, replacement draws at ``table.tail``
                             downwards (K-1.3); tiles left = tail - head + 1
hands      uint8[4, 34]      concealed tile counts per seat
meld_type  int8[4, 4]        ``caishen.sim.tiles.MELD_*`` per seat and meld slot
meld_kind  int8[4, 4]        kind of each meld (a chow's lowest tile)
discards   uint8[4, 64]      each seat's discards in order
dflags     uint8[4, 64]      ``DF_CLAIMED``: the discard went into a meld / a hand
seat       SEAT_DTYPE[4]     per-seat counters and flags: ``st.seat[s].n_melds``,
                             ``.score``, ``.decl``, ... (``SEAT_DTYPE``)
table      TABLE_DTYPE       the game's scalars: ``st.table.head``, ``.phase``,
                             ``.to_act``, ``.tile``, ... (pointers, phase,
                             pending tile, claim queue position, result)
queue      int64[8, 2]       claim queue: (seat, level) rows, ``LV_*`` levels
circle     uint8[4]          scratch: the joker-discard (飘) circles passed to payments
mask       uint8[145]        the legal-action mask (1 = legal)
legal      int16[145]        the legal actions as a list, ``table.n_legal`` long
tmp        int64[4]          scratch for payments
counts     int64[34]         scratch for the checker
wins       WIN_DTYPE[3]      the context of each win, first winner first:
                             ``st.wins[j].tile``, ``.hand[k]``, ... (``WIN_DTYPE``)
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
from caishen.sim.rules.codes import DECL_HARD, DECL_READY, DECL_NONE  # noqa: F401
from caishen.sim.rules.records import MAX_WINNERS, WIN_DTYPE  # noqa: F401  (the win contexts, the state's ``wins``)
from caishen.sim.validate import check_int, short_repr


# sizes
N_SEATS = 4
N_KINDS = 34
N_TILES = 136
MAX_MELDS = 4
#: discards per seat; a seat discards at most ~(83 / 4 + claims + kongs) < 64
MAX_DISCARDS = 64
QUEUE_LEN = 8
# the win contexts (WIN_DTYPE, MAX_WINNERS) are the records contract's: caishen.sim.rules.records

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

# declarations (seat[s].decl; J-4.1, J-4.2): DECL_* of caishen.sim.rules.codes
# stages of PH_HARD (table.hard_stage)
HARD_STAGE_NONE = 0
HARD_STAGE_DEAL = 1  #: ready non-dealers are asked before the dealer's first discard
HARD_STAGE_DEALER = 2  #: the dealer, ready after the first discard, is asked with it

# claim option bits (seat[s].claim_opts) and claim levels (queue[:, 1])
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

#: one seat's counters and flags: ``st.seat[s].<field>`` (int64 each)
SEAT_DTYPE = np.dtype(
    [
        ("n_melds", np.int64),             # melds declared (kongs count one)
        ("n_discards", np.int64),          # discards made (claimed ones included)
        ("chain_len", np.int64),           # K-6.5 links since the last non-财神 discard / chow / pong
        ("chain_joker", np.int64),         # ... of which 飘财 (财神 discards)
        ("chain_kong", np.int64),          # ... of which kongs
        ("circle_open", np.int64),         # K-9.2 the seat's 飘财 circle is open
        ("passed_pong", np.int64),         # K-4.4 bit k set: may not pong kind k until the next turn
        ("passed_win", np.int64),          # passed a win (only used when ep.passed_win is set)
        ("n_chows", np.int64),             # chows made this hand (K-4.5)
        ("swap_forbid", np.int64),         # K-4.5 kind the next discard may not be, -1 none
        ("joker_discards", np.int64),      # 飘财 attempts (财神 discards) this hand
        ("circle_failed", np.int64),       # K-9.3 1 if somebody else won inside this seat's circle
        ("score", np.int64),               # score change of this hand
        ("claim_opts", np.int64),          # OPT_* bits on the pending discard / added kong
        ("claim_exp", np.int64),           # exponent of the pending claim win
        ("claim_flags", np.int64),         # flags of the pending claim win
        ("won", np.int64),                 # 1 if this seat won the hand
        ("exponent", np.int64),            # exponent of this seat's win
        ("flags", np.int64),               # hand-type flags of this seat's win
        ("ready", np.int64),               # 1 if the seat's 3m+1 concealed tiles are ready (shanten <= 0)
        ("decl", np.int64),                # DECL_* declaration of the seat (J-4.1, J-4.2)
        ("decl_turn", np.int64),           # table.turns counting the declaring discard (0: hard at the deal), -1 none
        ("hard_offer", np.int64),          # 1 if the seat was offered the 硬子 declaration (J-4.2)
        ("n_passed_win", np.int64),        # wins (on a discard or robbed kong) the seat was offered and passed (J-3.5)
        ("decl_melds", np.int64),          # melds the seat had when it declared (a hard seat melds no more, J-4.2)
        ("force_joker", np.int64),         # K-2.5 (E3) 1 from a 财神 draw in 爆头 shape until the seat's 财神 discard
        ("win_joker_links", np.int64),     # 飘 links counted in this seat's winning exponent (K-6.5, K-9.4, K-10)
        ("win_kong_links", np.int64),      # kong links counted in this seat's winning exponent
        ("claim_joker_links", np.int64),   # 飘 links the pending claim win would count (the win kernel's answer)
        ("claim_kong_links", np.int64),    # kong links the pending claim win would count
        ("shanten", np.int64),             # the shanten of the seat's 3m+1 concealed tiles, or a lower bound >= 1 of it (engine-internal)
    ],
    align=True,
)

#: the game's scalars, shared by the seats: ``st.table.<field>`` (int64 each)
TABLE_DTYPE = np.dtype(
    [
        ("head", np.int64),                    # next normal draw index
        ("tail", np.int64),                    # next replacement draw index
        ("phase", np.int64),
        ("to_act", np.int64),                  # seat to act, -1 when done
        ("turn", np.int64),                    # seat whose turn it is (the discarder during claims)
        ("dealer", np.int64),
        ("tile", np.int64),                    # pending discard / added-kong tile, -1 none
        ("src", np.int64),                     # its seat
        ("drawn", np.int64),                   # tile drawn this turn (-1 after a claim)
        ("replacement", np.int64),             # 1 if table.drawn came from the tail (K-5.4)
        ("just_claimed", np.int64),            # 1 right after a chow / pong (must discard, K-4.1)
        ("can_self_draw", np.int64),           # 1 if the self-draw win is legal this turn
        ("self_draw_exp", np.int64),
        ("self_draw_flags", np.int64),
        ("q_len", np.int64),
        ("q_pos", np.int64),
        ("n_discard_wins", np.int64),          # winners declared on the pending discard (multiple_ron)
        ("rob_meld", np.int64),                # meld slot of the pending added kong
        ("turns", np.int64),                   # discards made in the hand
        ("steps", np.int64),                   # actions taken
        ("winner", np.int64),                  # first winner, -1 none
        ("win_type", np.int64),                # WIN_* code, -1 draw
        ("discarder", np.int64),               # discarder / robbed seat, -1 none
        ("winners_mask", np.int64),
        ("exponent", np.int64),
        ("flags", np.int64),
        ("win_tile", np.int64),
        ("match_hand", np.int64),              # index of this hand in its match
        ("n_legal", np.int64),                 # number of legal actions (set by _legal_actions)
        ("streak", np.int64),                  # the dealer's streak k (J-2.4), set by the batch loop / Game.reset
        ("hard_stage", np.int64),              # HARD_STAGE_* while table.phase == PH_HARD
        ("declare_kinds", np.int64),           # bit k: ``declare <k>`` is legal this turn (J-4.1)
        ("n_wins", np.int64),                  # winners recorded in ``wins`` (0..MAX_WINNERS)
        ("self_draw_joker_links", np.int64),   # 飘 links the self-draw win would count (the win kernel's answer)
        ("self_draw_kong_links", np.int64),    # kong links the self-draw win would count
    ],
    align=True,
)

#: engine params: ``ep.<field>`` (a rule set's facts, kernel codes and options, caishen.sim.engine.params)
PARAMS_DTYPE = np.dtype(
    [
        ("joker", np.int64),                      # joker kind or -1; a joker is never claimed nor melded (K-2.2, K-2.3)
        ("reserve", np.int64),                    # tiles never drawn (K-3.4)
        ("chow", np.int64),                       # 1 if the next seat may chow (K-4.2)
        ("multi_win", np.int64),                  # K-4.3
        ("swap_max_chows", np.int64),             # K-4.5
        ("rotation", np.int64),                   # 0 next_after_win, 1 winner_stays (K-3.3)
        ("discard_win", np.int64),                # wins on discards and robbed kongs allowed (K-7.1, K-7.2)
        ("rob_kong", np.int64),                   # added kongs can be robbed (K-5.5)
        ("circle_ban", np.int64),                 # no chow / pong / exposed kong while a 飘财 circle is open (K-9.2)
        ("force_joker_min", np.int64),            # holding this many jokers forces a joker discard (K-2.4), 0 off
        ("force_joker_shape", np.int64),          # 爆头 shape + joker draw forces a joker discard (K-2.5)
        ("passed_pong", np.int64),                # 0 off, 1 same kind, 2 any kind (K-4.4)
        ("passed_pong_claim_clears", np.int64),   # 1: the ban ends at the next turn: a draw or a later claim (K-4.4)
        ("passed_win", np.int64),                 # 1: a passed win bans wins on discards until the next draw
        ("kong_after_claim", np.int64),           # 1: kongs allowed right after a chow / pong
        ("first_dealer_random", np.int64),        # 1: a match's first dealer is random (else seat 0)
        ("win_kernel", np.int64),                 # the rule set's win test: a WIN_KERNEL_* code of caishen.sim.rules.kernels
        ("payments", np.int64),                   # the payments on a win: a PAYMENTS_* code of caishen.sim.rules.kernels (0: none)
        ("declare", np.int64),                    # 1: 架听 declarations with a discard (J-4.1)
        ("hard", np.int64),                       # 1: 硬子 hard declarations at the deal, automatic discards after (J-4.2)
        ("points", np.int64),                     # the points of a finished hand: a POINTS_* code of caishen.sim.rules.kernels
    ],
    align=True,
)

#: the field names, for kernels that walk every field (``numba.literal_unroll``)
SEAT_FIELDS = SEAT_DTYPE.names
TABLE_FIELDS = TABLE_DTYPE.names
#: a win context's scalar fields and its array fields (``meld_type``, ``meld_kind``, ``hand``)
WIN_SCALAR_FIELDS = tuple(f for f in WIN_DTYPE.names if not WIN_DTYPE.fields[f][0].shape)
WIN_ARRAY_FIELDS = tuple(f for f in WIN_DTYPE.names if WIN_DTYPE.fields[f][0].shape)

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
        ("seat", SEAT_DTYPE, (N_SEATS,)),
        ("table", TABLE_DTYPE),
        ("queue", np.int64, (QUEUE_LEN, 2)),
        ("tmp", np.int64, (N_SEATS,)),
        ("counts", np.int64, (N_KINDS,)),
        ("wins", WIN_DTYPE, (MAX_WINNERS,)),
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
