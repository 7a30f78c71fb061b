"""The game engine: one hand of mahjong as fixed-size arrays, stepped by numba kernels.

This module holds the turn structure shared by the rule sets (deal, draws,
discards, claims, kongs, robbing, wall end, dealer rotation) as numba kernels
over a ``STATE_DTYPE`` record of numpy arrays, a flat discrete action space,
the legal-action mask, an invariant checker, a batch self-play kernel, and
a Python :class:`Game` that a person or an environment drives one action at
a time.  Hand types and payments are *not* here: they come from the rule
set's kernels (``caishen.sim.rules.kaihua._evaluate_win`` and ``_payments``), called
at one place (:func:`_win_eval`, :func:`_finish_wins`).  Rule differences
that shape the turn structure are data: the ``int64[N_EP]`` engine params
built by :func:`engine_params` from a rule set's facts and options.

Binding rules: ``shared/rules/kaihua.md`` (IDs ``K-...``) and
``shared/rules/jiating.md`` (IDs ``J-...``, patterns ``P..``).  Jiating's
turn structure is the same code with other params (``RULESET_FACTS
["jiating"]``: no joker, no chow, several winners, passed win, 架听 and 硬子,
the shape-only win kernel ``caishen.sim.rules.jiating_turn``); its wins are scored
after the hand by ``caishen.sim.rules.jiating`` from the recorded win contexts
(``wins``, :func:`batch_columns`, ``caishen.sim.jiating_records``).

Using it::

    from caishen.sim.engine import Game
    g = Game("kaihua", {"multiple_ron": True}).reset(seed=7)
    while not g.done:
        g.step(g.legal_actions()[0])      # or an index / 'discard 3m' / 'pong'
    g.result                              # the hand's record (records.md)
    lines = g.log_lines()                 # JSON lines; replay(lines) rebuilds it

Whole hands with bots in one numba call are :func:`caishen.sim.selfplay.play_batch`
(its loop: ``_legal_mask``, a policy kernel per seat, ``_step``).

Action layout (``N_ACTIONS = 145``)
-----------------------------------
========  =====================  ==================================================
index     name                   meaning
========  =====================  ==================================================
0..33     ``discard <kind>``     discard one tile of kind ``a`` (own turn)
34..67    ``declare <kind>``     discard kind ``a - 34`` and declare 架听 (Jiating
                                 J-4.1; never legal in Kaihua)
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
143       ``hard_declare``       硬子 declaration (Jiating J-4.2; never legal in Kaihua)
144       ``hard_decline``       decline it (Jiating; never legal in Kaihua)
========  =====================  ==================================================

Phases and who acts
-------------------
- ``PH_TURN``: ``to_act`` holds ``3m+2`` concealed tiles (after a draw, a
  replacement draw, or a claim): discard, concealed / added kong, or
  self-draw win.
- ``PH_CLAIM``: a discard is pending.  Claimants are asked one at a time in
  priority order (K-4.3): every seat that can win, in turn order after the
  discarder; then the seat that can pong / kong; then the next seat for a
  chow.  A seat whose asks are consecutive is asked once with the union of
  its options.  ``pass`` moves to the next claimant; a pong, kong or chow is
  taken at once (everybody with higher priority has already passed); a win
  ends the hand (with ``multiple_ron`` the remaining win claimants are asked
  first and every winner is paid).  When everybody passed, the next seat
  draws.
- ``PH_ROB``: an added kong is pending; seats that can win on its tile are
  asked (win / pass) in turn order (K-5.5).  If nobody robs, the kong stands
  and its owner draws a replacement from the tail.
- ``PH_DONE``: the hand is over (a win or 流局).
- ``PH_HARD`` (Jiating, J-4.2): the seat to act answers ``hard_declare`` /
  ``hard_decline``: at the deal each ready non-dealer in turn order from
  the dealer (the dealer holds its 14 tiles meanwhile), then the dealer's
  first turn starts; and the dealer right after its first discard if then
  ready (the discard is pending; the claims on it are asked afterwards).

Decisions on points the spec leaves open (engine side; each cites its rule)
--------------------------------------------------------------------------
- E1 (K-3.1): the dealer's 14th tile (``wall[52]``) counts as the dealer's
  first draw: a self-draw win on it is allowed, and K-2.5 applies to it.
- E2 (K-4.1, K-5.2): right after a chow or pong the player must discard: no
  kong (and no win) in that turn; an added kong waits for a later turn
  (``EP_KONG_AFTER_CLAIM`` = 0).  After an exposed kong the replacement draw
  starts a normal turn.
- E3 (K-2.4, K-2.5): a forced 飘 restricts the *discards* to 财神; concealed
  and added kongs stay legal (they discard nothing).  K-2.4's force is a
  count (3 or 4 财神 in hand; the win kernel refuses such hands).  K-2.5's
  is a per-seat state, ``SF_FORCE_PIAO``: set when a seat whose 13 tiles
  are in 爆头 or 七子爆头 shape (kaihua D3) draws a 财神 (any draw, a
  replacement included), cleared only by that seat's 财神 discard or the
  hand's end.  While it is set the seat cannot win by self-draw -- the
  replacement draws of kongs declared meanwhile included, however many in a
  row (seed: 不飘不能胡牌).  A forced seat leaves its turn only by
  discarding a 财神, so it is never offered a claim while forced (the
  checker verifies that the force sits only with the seat whose turn it is).
- E4 (K-3.4): every kong, exposed ones included, needs more than
  ``reserved_tiles`` tiles left, so replacement draws never touch the reserve.
- E5 (K-4.3): a seat's consecutive asks are merged into one decision (e.g.
  the last win claimant that can also pong gets win / pong / pass).  Under
  ``multiple_ron`` the discard goes into the first winner's hand (the record
  shows the first winner, ``winners_mask`` all of them) and every winner is
  paid separately by the discarder (and by open 飘 circles, K-9.3).
- E6 (K-4.4): a seat offered a pong that takes anything else (pass, chow)
  passes that kind; the ban ends at the seat's next turn (its next draw or
  its next claim).
- E7 (K-4.5): on a banned swap call only the other end of the two held
  tiles is banned (claiming 6s with 4s5s bans 3s; a middle chow bans
  nothing); if the ban left no legal discard it would yield.
- E8 (K-5.5, K-6.5): a robbed added kong reverts to a pong and is no chain
  link; an unrobbed added kong, a concealed and an exposed kong each add a
  link; a chow or pong (and a non-财神 discard) ends the chain.
- E9 (K-9.2, K-9.3): a 飘 circle closes at that player's next draw
  (normal or replacement); a win inside somebody else's open circle marks it
  failed (``failed_piao_s``); the winner's own open circle does not count.
- E10 (K-3.2, K-3.3): a match is ``match_len`` hands (16 by default); its
  first dealer is seat 0; the next dealer follows ``dealer_rotation``.

Jiating decisions (engine side; ``shared/rules/jiating.md``)
------------------------------------------------------------
- J1 (J-4.2 "discarded automatically"): a seat with 硬子 is never asked to
  discard: when it cannot win on its drawn tile, :func:`_step` discards
  that tile itself before returning (no decision, no event in the log;
  replaying the actions reproduces it).  When it can win it is asked
  ``win`` / ``discard <drawn>``; on another seat's discard ``win`` /
  ``pass``.  It is offered no pong, kong or 架听.
- J2 (J-4.2 "ready"): ready = at least one kind completes the hand of which
  the seat holds fewer than four (scorer decision D3); the hard question is
  asked only of ready seats, once (declining is final).  A dealer that made
  a concealed kong before its first discard may still declare.
- J3 (silent): after a pong the seat must discard (no kong in that turn),
  as Kaihua's E2; a kong needs a tile left in the wall (J-1.2, above
  ``reserved_tiles``).
- J4 (J-4.1): ``declare <k>`` = discard ``k`` and declare 架听, legal iff
  after that discard the hand waits on exactly one kind (D3, the scorer's
  own "single wait"), for a seat without a declaration; a declaration stays
  and is made once.  A declared seat plays on (pong, kong, pass a win).
- J5 (J-3.5): a passed win on a discard or on a robbable added kong bans
  wins on discards and robberies until the seat's next draw (normal or
  replacement); a pong does not end it; self-draws stay free; a hard seat
  discarding a drawn winning tile passes no discard win.
- J6 (J-3.6): a pong offered and not taken bans ponging that kind (option
  ``any``: every kind) until the seat's next draw; a pong does not end it.
- J7 (J-3.4): several win claimants are asked in turn order from the
  discarder; once one has won only the other win claimants are asked.  The
  tile goes into the first winner's hand; every winner is recorded.
- J8 (J-2.2..J-2.4): a match's first dealer is random (the batch RNG); the
  streak counts kept deals inside a match (0 at a new match and a new
  dealer); :meth:`Game.reset` takes ``streak``.
- J9 (J-5.4, P46, P47): 天胡 = the dealer's self-draw on its first turn
  with no kong before; ``dihu="win_on_dealers_first_discard"`` uses the
  flag "won on the dealer's first discard" (a discard win, not a robbery).
- J10 (P27): the winner sees the winning kind in unclaimed discards (not
  the winning discard) and in the other seats' exposed melds (a pong 3, an
  exposed / added kong 4, a robbed added kong 3); concealed kongs are hidden.
- J11 (J-6): the engine pays nothing in Jiating (``EP_ENGINE_PAYMENTS`` 0):
  the scores exist only in the record (:func:`batch_columns`,
  :attr:`Game.result`), where ``caishen.sim.rules.jiating`` computes them.

What the engine simplifies
--------------------------
- The dice and the wall break (K-1.3) are not modelled; the wall is one
  uniform shuffle, dealt 13 tiles per seat from the dealer on, then the
  dealer's 14th.
- Only the winning tile of a discard win moves into the winner's hand; under
  ``multiple_ron`` the other winners' hands stay at 13 tiles.
- Who is asked reveals something, as in real play only partly: a claim
  question shows that the seat can claim, the 硬子 question (J-4.2) that
  the seat is ready.  Declarations are public (observations show them).

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

import json

import numpy as np
from numba import njit

from caishen.sim import tiles as _tiles
from caishen.sim.hand import _add_meld_tiles, _is_win, _shanten
from caishen.sim.rng import _rng_below, _rng_seed, _rng_shuffle
from caishen.sim.rules import jiating as _jiating
from caishen.sim.rules import jiating_turn as _jturn
from caishen.sim.rules import kaihua as _kaihua
from caishen.sim.rules.kaihua import (
    WIN_DISCARD,
    WIN_ROBBED_KONG,
    WIN_SELF_DRAW,
    _evaluate_win,
    _is_baotou_wait,
    _payments,
)
from caishen.sim.tables import hand_tables
from caishen.sim.tiles import (
    MELD_CHOW,
    MELD_KONG_ADDED,
    MELD_KONG_CONCEALED,
    MELD_KONG_EXPOSED,
    MELD_NONE,
    MELD_PONG,
)

#: decorator of the engine's internal step helpers: numba inlines them into
#: their callers (``_step``, ``_reset``), so that the state, params and hand
#: tables cross no call boundary inside a step (each boundary costs reference
#: counting on every array argument); ~1.7x faster batch play, longer compile
_inline_kernel = njit(cache=True, inline="always")

# ---------------------------------------------------------------------------
# sizes
# ---------------------------------------------------------------------------
N_SEATS = 4
N_KINDS = 34
N_TILES = 136
MAX_MELDS = 4
#: discards per seat; a seat discards at most ~(83 / 4 + claims + kongs) < 64
MAX_DISCARDS = 64
QUEUE_LEN = 8
#: winners of one hand at most (several winners on one discard, K-4.3 option / J-3.4)
MAX_WINNERS = 3

# ---------------------------------------------------------------------------
# win context: wins[j, WX_*], one row per winner (first winner first), for
# rule sets scored after the hand in Python (Jiating, caishen.sim.jiating_records)
# ---------------------------------------------------------------------------
WX_SEAT = 0  #: winning seat
WX_TILE = 1  #: winning tile kind
WX_TYPE = 2  #: WIN_* code
WX_DISCARDER = 3  #: discarder / robbed seat, -1 on a self-draw
WX_DECL = 4  #: the winner's DECL_* declaration
WX_FIRST_TURN = 5  #: 1: the dealer's self-draw on the dealt tiles (天胡, J-5.4)
WX_REPLACEMENT = 6  #: 1: won on a kong replacement draw (P18)
WX_ON_FIRST = 7  #: 1: won on the dealer's first discard (P47 option)
WX_VISIBLE = 8  #: copies of the winning kind the winner could see elsewhere (discards, others' exposed melds; P27)
WX_N_MELDS = 9
WX_MELD_TYPE = 10  #: 4 slots: meld types (caishen.sim.tiles.MELD_*)
WX_MELD_KIND = 14  #: 4 slots: meld kinds
WX_HAND = 18  #: 34 slots: the winner's concealed tiles before the winning tile
N_WX = WX_HAND + 34

# ---------------------------------------------------------------------------
# actions
# ---------------------------------------------------------------------------
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

# ---------------------------------------------------------------------------
# phases
# ---------------------------------------------------------------------------
PH_TURN = 0
PH_CLAIM = 1
PH_ROB = 2
PH_DONE = 3
PH_HARD = 4  #: Jiating J-4.2: the seat to act declares or declines 硬子
PHASE_NAMES = {PH_TURN: "turn", PH_CLAIM: "claim", PH_ROB: "rob", PH_DONE: "done", PH_HARD: "hard"}

# declarations (seat[s, SF_DECL]; Jiating J-4.1, J-4.2)
DECL_NONE = 0
DECL_JIATING = 1  #: 架听, declared with a discard that leaves a single wait (J-4.1)
DECL_HARD = 2  #: 硬子, hard ready declared at the deal (J-4.2)
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

# ---------------------------------------------------------------------------
# per-seat columns: seat[s, SF_*]
# ---------------------------------------------------------------------------
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
N_SF = 30

# ---------------------------------------------------------------------------
# scalar slots: sc[SC_*]
# ---------------------------------------------------------------------------
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
#: unused, always 0 (the K-2.5 force of a turn became the per-seat state
#: SF_FORCE_PIAO, which lasts until a 财神 discard); the slot keeps the numbering
SC_FORCE_JOKER = 11
SC_CAN_TSUMO = 12  #: 1 if the self-draw win is legal this turn
SC_TSUMO_EXP = 13
SC_TSUMO_FLAGS = 14
SC_Q_LEN = 15
SC_Q_POS = 16
SC_N_RON = 17  #: winners declared on the pending discard (multiple_ron)
SC_ROB_MELD = 18  #: meld slot of the pending added kong
SC_TURNS = 19  #: discards made in the hand
SC_STEPS = 20  #: actions taken
SC_WINNER = 21  #: first winner, -1 none
SC_WIN_TYPE = 22  #: WIN_* code, -1 draw
SC_DISCARDER = 23  #: discarder / robbed seat, -1 none
SC_WINNERS_MASK = 24
SC_EXPONENT = 25
SC_FLAGS = 26
SC_WIN_TILE = 27
SC_MATCH_HAND = 28  #: index of this hand in its match
SC_N_LEGAL = 29  #: number of legal actions (set by _legal_mask)
SC_STREAK = 30  #: the dealer's streak k (J-2.4), set by the batch loop / Game.reset
SC_HARD_STAGE = 31  #: HARD_STAGE_* while sc[SC_PHASE] == PH_HARD
SC_DECLARE_KINDS = 32  #: bit k: ``declare <k>`` is legal this turn (J-4.1)
SC_N_WINS = 33  #: winners recorded in ``wins`` (0..MAX_WINNERS)
SC_TSUMO_PIAO = 34  #: 飘 links the self-draw win would count (the win kernel's answer)
SC_TSUMO_KONG = 35  #: kong links the self-draw win would count
N_SC = 36

# ---------------------------------------------------------------------------
# engine params: ep[EP_*] (rule-set facts and options that shape the turn)
# ---------------------------------------------------------------------------
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
EP_PASSED_PONG_CLAIM_CLEARS = 12  #: 1: the ban ends at the next turn (claims too)
EP_PASSED_WIN = 13  #: 1: a passed win bans wins on discards until the next draw
EP_KONG_AFTER_CLAIM = 14  #: 1: kongs allowed right after a chow / pong
EP_FIRST_DEALER_RANDOM = 15  #: 1: a match's first dealer is random (else seat 0)
EP_WIN_KERNEL = 16  #: WIN_KERNEL_*: the rule set's win test (K-6/K-7 or J-5.1)
EP_ENGINE_PAYMENTS = 17  #: 1: the engine pays (K-8); 0: the Python scorer scores the recorded wins (J-6)
EP_DECLARE = 18  #: 1: 架听 declarations with a discard (J-4.1)
EP_HARD = 19  #: 1: 硬子 hard declarations at the deal, automatic discards after (J-4.2)
N_EP = 20

WIN_KERNEL_KAIHUA = 0  #: caishen.sim.rules.kaihua._evaluate_win
WIN_KERNEL_SHAPE = 1  #: caishen.sim.rules.jiating_turn._evaluate_win: any complete hand

ROTATION_NEXT_AFTER_WIN = 0
ROTATION_WINNER_STAYS = 1

#: rule-set facts (not options) that shape the turn structure, by rule set
RULESET_FACTS = {
    "kaihua": {
        "joker": _tiles.CAISHEN,  # K-2.1
        "chow": 1,  # K-4.2
        "rob_kong": 1,  # K-5.5
        "piao_ban": 1,  # K-9.2
        "force_joker_min": 3,  # K-2.4
        "baotou_force": 1,  # K-2.5
        "passed_pong": 1,  # K-4.4 same kind
        "passed_pong_claim_clears": 1,  # K-4.4 "until their own next turn"
        "passed_win": 0,
        "kong_after_claim": 0,  # K-4.1 "after a chow or pong they must discard"
        "first_dealer_random": 0,  # K-3.2
        "win_kernel": WIN_KERNEL_KAIHUA,  # K-6, K-7 (joker rules, exponent, flags)
        "engine_payments": 1,  # K-8 paid inside the engine
        "declare": 0,
        "hard": 0,
    },
    "jiating": {
        "joker": -1,  # J-1.1 no jokers
        "chow": 0,  # J-3.1 no chow
        "rob_kong": 1,  # J-3.3 an added kong can be robbed (exposed and concealed kongs never are)
        "piao_ban": 0,
        "force_joker_min": 0,
        "baotou_force": 0,
        "passed_pong": 1,  # J-3.6 (option passed_pong_scope overrides: same_kind 1, any 2)
        "passed_pong_claim_clears": 0,  # J-3.6 "until after their own next draw": a pong does not end it
        "passed_win": 1,  # J-3.5
        "kong_after_claim": 0,  # decision J3 (as Kaihua's E2): after a pong, discard
        "first_dealer_random": 1,  # J-2.2
        "win_kernel": WIN_KERNEL_SHAPE,  # J-5.1 any complete hand
        "engine_payments": 0,  # J-6: scored after the hand by caishen.sim.rules.jiating (caishen.sim.jiating_records)
        "declare": 1,  # J-4.1
        "hard": 1,  # J-4.2
        # facts that are options in Kaihua
        "multiple_ron": 1,  # J-3.4 一炮多响
        "swap_call_max_chows": 0,  # no chow, no swap call
        "dealer_rotation": "winner_stays",  # J-2.3 (a 流局 keeps the dealer too)
        "discard_win": 1,  # J-5.2
    },
}

#: the classes of rule options, by rule set
RULESET_OPTIONS = {"kaihua": _kaihua.KaihuaRules, "jiating": _jiating.JiatingRules}

#: J-3.6 codes of the option ``passed_pong_scope`` as EP_PASSED_PONG values
PASSED_PONG_SCOPES = {"same_kind": 1, "any": 2}

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


def _show(value, limit: int = 80) -> str:
    """``repr(value)``, cut to ``limit`` characters (error messages never echo huge input)."""
    r = repr(value)
    return r if len(r) <= limit else f"{r[:limit]}... ({len(r)} characters)"


def _check_int(name: str, value, lo: int, hi: int) -> int:
    """``value`` as a Python int in ``lo .. hi``, else ``ValueError`` naming ``name`` and the value.

    Accepts ``int`` and numpy integers.  Rejects bools (``True`` / ``np.True_``
    are not 1 here: ``Game.step(True)`` is a mistake, not action 1), floats,
    strings and anything else.
    """
    if isinstance(value, (bool, np.bool_)):
        raise ValueError(f"{name} must be an integer in {lo}..{hi}, got the bool {value!r}")
    if not isinstance(value, (int, np.integer)):
        raise ValueError(f"{name} must be an integer in {lo}..{hi}, got {_show(value)}")
    v = int(value)
    if not lo <= v <= hi:
        raise ValueError(f"{name} {v} is outside {lo}..{hi}")
    return v


#: bounds of Game.reset's counters: the record columns that hold them (int32, int16)
MAX_MATCH_HAND = 2**31 - 1
MAX_STREAK = 2**15 - 1


def new_state(batch: int = 1) -> np.ndarray:
    """Zeroed states: a structured array ``STATE_DTYPE[batch]``; ``states[i]`` is one game.

    A single game is ``new_state()[0]`` (a record view; kernels modify it in place).
    Raises ``ValueError`` unless ``batch`` is an integer >= 1 (not a bool).
    """
    return np.zeros(_check_int("batch", batch, 1, 2**31 - 1), STATE_DTYPE)


# ---------------------------------------------------------------------------
# engine params
# ---------------------------------------------------------------------------
def load_rules(rules="kaihua", options=None):
    """``(name, rules_object)`` for a rule-set name and an options dict.

    ``rules`` may also be an options object (e.g. ``KaihuaRules(...)``).
    Raises ``ValueError`` for an unknown rule set or option.
    """
    for name, cls in RULESET_OPTIONS.items():
        if isinstance(rules, cls):
            if options:
                rules = rules.with_options(**options)
            return name, rules
    if not isinstance(rules, str) or rules not in RULESET_OPTIONS:
        raise ValueError(f"unknown rule set {rules!r}; known: {', '.join(sorted(RULESET_OPTIONS))}")
    return rules, RULESET_OPTIONS[rules].from_dict(options)


def engine_params(name: str, rules) -> np.ndarray:
    """The turn-structure params ``int64[N_EP]`` (``EP_*``) of a rule set.

    ``name`` is the rule set's name (a key of :data:`RULESET_FACTS`),
    ``rules`` its options object.  ``reserved_tiles``, ``multiple_ron``,
    ``swap_call_max_chows``, ``dealer_rotation`` and ``discard_win`` come
    from the options where the rule set has them (Kaihua), else from its
    facts (Jiating: J-3.4, J-2.3, J-5.2); ``passed_pong_scope`` (J-3.6)
    overrides the fact ``passed_pong``.
    """
    if name not in RULESET_FACTS:
        raise ValueError(f"unknown rule set {name!r}")
    f = RULESET_FACTS[name]

    def opt(key):
        return getattr(rules, key) if hasattr(rules, key) else f[key]

    ep = np.zeros(N_EP, np.int64)
    ep[EP_JOKER] = f["joker"]
    ep[EP_RESERVE] = rules.reserved_tiles
    ep[EP_CHOW] = f["chow"]
    ep[EP_MULTI_RON] = int(opt("multiple_ron"))
    ep[EP_SWAP_MAX_CHOWS] = opt("swap_call_max_chows")
    ep[EP_ROTATION] = {"next_after_win": ROTATION_NEXT_AFTER_WIN, "winner_stays": ROTATION_WINNER_STAYS}[
        opt("dealer_rotation")
    ]
    ep[EP_DISCARD_WIN] = int(opt("discard_win"))
    ep[EP_ROB_KONG] = f["rob_kong"]
    ep[EP_PIAO_BAN] = f["piao_ban"]
    ep[EP_FORCE_JOKER_MIN] = f["force_joker_min"]
    ep[EP_BAOTOU_FORCE] = f["baotou_force"]
    ep[EP_PASSED_PONG] = (
        PASSED_PONG_SCOPES[rules.passed_pong_scope] if hasattr(rules, "passed_pong_scope") else f["passed_pong"]
    )
    ep[EP_PASSED_PONG_CLAIM_CLEARS] = f["passed_pong_claim_clears"]
    ep[EP_PASSED_WIN] = f["passed_win"]
    ep[EP_KONG_AFTER_CLAIM] = f["kong_after_claim"]
    ep[EP_FIRST_DEALER_RANDOM] = f["first_dealer_random"]
    ep[EP_WIN_KERNEL] = f["win_kernel"]
    ep[EP_ENGINE_PAYMENTS] = f["engine_payments"]
    ep[EP_DECLARE] = f["declare"]
    ep[EP_HARD] = f["hard"]
    return ep


# ---------------------------------------------------------------------------
# small kernels
# ---------------------------------------------------------------------------
@njit(cache=True, inline="always")
def _tiles_left(st):
    return st.sc[SC_TAIL] - st.sc[SC_HEAD] + 1


@njit(cache=True, inline="always")
def _level_bits(level):
    if level == LV_WIN:
        return OPT_WIN
    if level == LV_MELD:
        return OPT_PONG | OPT_KONG
    return OPT_CHOW_LOW | OPT_CHOW_MID | OPT_CHOW_HIGH


@njit(cache=True)
def _fill_wall(wall):
    """Put the 136 tiles (4 of each kind) in kind order into ``wall`` in place."""
    for i in range(N_TILES):
        wall[i] = i // 4


@njit(cache=True)
def _shuffle_wall(st):
    """Fill ``st.wall: uint8[136]`` and shuffle it uniformly with the stream ``st.rng`` (K-1.3)."""
    _fill_wall(st.wall)
    _rng_shuffle(st.rng, st.wall)


@njit(cache=True)
def _seeded_wall(seed, st):
    """Seed ``st.rng`` with ``seed`` and shuffle ``st.wall`` (the wall of a batch's first Kaihua hand)."""
    _rng_seed(st.rng, seed)
    _shuffle_wall(st)


@_inline_kernel
def _win_eval(st, ep, rp, tabs, s, tile, self_draw, replacement):
    """The rule set's win test for seat ``s`` on ``tile``:
    ``(legal, exponent, flags, piao_links, kong_links)``, the last two the
    chain links the win would count (K-6.5; the record shows them, K-10).

    ``st.hands[s]`` must hold the concealed tiles *before* the winning tile.
    This is the one place where the engine calls the rule set's win kernel,
    chosen by ``ep[EP_WIN_KERNEL]``: Kaihua's (K-2.4..K-2.6, K-6, K-7.1 are
    applied there) or Jiating's shape test (J-5.1).
    """
    if ep[EP_WIN_KERNEL] == WIN_KERNEL_SHAPE:
        return _jturn._evaluate_win(
            st.hands[s], tile, st.meld_type[s], st.meld_kind[s], st.seat[s, SF_N_MELDS], self_draw, replacement,
            st.seat[s, SF_CHAIN_PIAO], st.seat[s, SF_CHAIN_KONG], rp, tabs,
        )
    return _evaluate_win(
        st.hands[s],
        tile,
        st.meld_type[s],
        st.meld_kind[s],
        st.seat[s, SF_N_MELDS],
        self_draw,
        replacement,
        st.seat[s, SF_CHAIN_PIAO],
        st.seat[s, SF_CHAIN_KONG],
        rp,
        tabs,
    )


@_inline_kernel
def _update_tenpai(st, ep, tabs, s):
    """Cache whether seat ``s``'s 3m+1 concealed tiles are ready (shanten <= 0).

    A win needs a complete hand (standard or seven pairs), so only a ready
    hand can win on the next tile: the engine asks the rule set's win kernel
    only for ready seats.  Called whenever a seat's concealed tiles become
    3m+1 (deal, discard, kong before its replacement draw); not after
    discarding the tile just drawn, which gives back the hand it was cached for.
    """
    st.seat[s, SF_TENPAI] = 1 if _shanten(st.hands[s], ep[EP_JOKER], tabs) <= 0 else 0


@_inline_kernel
def _add_meld(st, s, mtype, kind):
    n = st.seat[s, SF_N_MELDS]
    st.meld_type[s, n] = mtype
    st.meld_kind[s, n] = kind
    st.seat[s, SF_N_MELDS] = n + 1


@njit(cache=True, inline="always")
def _chain_reset(st, s):
    st.seat[s, SF_CHAIN_LEN] = 0
    st.seat[s, SF_CHAIN_PIAO] = 0
    st.seat[s, SF_CHAIN_KONG] = 0


@njit(cache=True, inline="always")
def _chain_kong(st, s):
    """K-6.5: a kong of any kind is a chain link."""
    st.seat[s, SF_CHAIN_LEN] += 1
    st.seat[s, SF_CHAIN_KONG] += 1


# ---------------------------------------------------------------------------
# declarations (Jiating J-4.1, J-4.2)
# ---------------------------------------------------------------------------
@njit(cache=True)
def _declare_options(st, ep, tabs, s):
    """J-4.1: at the start of seat ``s``'s turn, cache the kinds ``k`` whose
    ``declare <k>`` is legal (after discarding ``k`` a single wait) in
    ``sc[SC_DECLARE_KINDS]``; 0 when the rule set has no 架听 or ``s`` has
    declared already (a declaration stays, J-4.1).

    A plain call (not inlined): :func:`_step` calls it once, when a turn
    begins, which keeps the inlined step small to compile."""
    bits = 0
    # a 3m+2 hand of shanten > 0 has no discard that leaves it ready (cheap test first)
    if ep[EP_DECLARE] != 0 and st.seat[s, SF_DECL] == DECL_NONE and _shanten(st.hands[s], ep[EP_JOKER], tabs) <= 0:
        bits = _jturn._single_wait_discards(
            st.hands[s], st.meld_type[s], st.meld_kind[s], st.seat[s, SF_N_MELDS], tabs, st.work
        )
    st.sc[SC_DECLARE_KINDS] = bits


@njit(cache=True)
def _hard_ready(st, tabs, s):
    """J-4.2: seat ``s``'s 3m+1 concealed tiles are ready: at least one kind
    completes them of which ``s`` holds fewer than four (jiating decision D3)."""
    if st.seat[s, SF_TENPAI] == 0:
        return False
    own = st.work[2]
    _jturn._own_copies(st.hands[s], st.meld_type[s], st.meld_kind[s], st.seat[s, SF_N_MELDS], own)
    return _jturn._n_waits(st.hands[s], own, tabs, st.work[1]) > 0


@njit(cache=True)
def _next_hard_candidate(st, tabs, s):
    """The next non-dealer after seat ``s`` (turn order, before the dealer) whose dealt tiles are ready, or -1."""
    dealer = st.sc[SC_DEALER]
    for i in range(1, N_SEATS):
        p = (s + i) % N_SEATS
        if p == dealer:
            return -1
        if _hard_ready(st, tabs, p):
            return p
    return -1


@_inline_kernel
def _ask_hard(st, s, stage):
    """Enter PH_HARD: seat ``s`` declares or declines 硬子 (J-4.2)."""
    st.sc[SC_PHASE] = PH_HARD
    st.sc[SC_HARD_STAGE] = stage
    st.sc[SC_TO_ACT] = s
    st.seat[s, SF_HARD_OFFER] = 1


@njit(cache=True, inline="always")
def _set_declaration(st, s, decl, turn):
    st.seat[s, SF_DECL] = decl
    st.seat[s, SF_DECL_TURN] = turn
    st.seat[s, SF_DECL_MELDS] = st.seat[s, SF_N_MELDS]


@njit(cache=True, inline="always")
def _auto_action(st, ep):
    """J-4.2: the action the engine takes by itself for the seat to act, or -1.

    A seat with a hard declaration discards every drawn tile it cannot win
    with; the engine does that without asking (decision J5), so such a seat
    is asked only when it could win by self-draw (win, or discard the drawn tile).
    """
    if ep[EP_HARD] == 0 or st.sc[SC_PHASE] != PH_TURN:
        return -1
    s = st.sc[SC_TO_ACT]
    t = st.sc[SC_DRAWN]
    if st.seat[s, SF_DECL] == DECL_HARD and st.sc[SC_CAN_TSUMO] == 0 and t >= 0:
        return A_DISCARD + t
    return -1


# ---------------------------------------------------------------------------
# deal and draws
# ---------------------------------------------------------------------------
@njit(cache=True)
def _reset(st, ep, rp, tabs, dealer):
    """Start a hand from ``st.wall`` (already filled) with ``dealer``; in place.

    K-3.1: seat ``dealer + i`` gets ``wall[13 i : 13 i + 13]``, the dealer's
    14th tile is ``wall[52]`` and counts as the dealer's first draw; normal
    draws continue at 53, replacement draws start at 135 (K-1.3).
    """
    st.hands[:] = 0
    st.meld_type[:] = MELD_NONE
    st.meld_kind[:] = 0
    st.discards[:] = 0
    st.dflags[:] = 0
    st.seat[:] = 0
    st.sc[:] = 0
    st.queue[:] = 0
    st.tmp[:] = 0
    st.circle[:] = 0
    st.mask[:] = 0
    st.legal[:] = 0
    st.wins[:] = 0
    for i in range(N_SEATS):
        s = (dealer + i) % N_SEATS
        st.seat[s, SF_SWAP_FORBID] = -1
        st.seat[s, SF_DECL_TURN] = -1
        for j in range(13):
            st.hands[s, st.wall[13 * i + j]] += 1
    st.sc[SC_DEALER] = dealer
    st.sc[SC_HEAD] = 52
    st.sc[SC_TAIL] = N_TILES - 1
    st.sc[SC_TILE] = -1
    st.sc[SC_SRC] = -1
    st.sc[SC_WINNER] = -1
    st.sc[SC_WIN_TYPE] = -1
    st.sc[SC_DISCARDER] = -1
    st.sc[SC_WIN_TILE] = -1
    for s in range(N_SEATS):
        _update_tenpai(st, ep, tabs, s)
    _draw(st, ep, rp, tabs, dealer, False)
    if ep[EP_HARD] != 0:  # J-4.2: ready non-dealers declare 硬子 before the dealer's first discard
        p = _next_hard_candidate(st, tabs, dealer)
        if p >= 0:
            _ask_hard(st, p, HARD_STAGE_DEAL)
    if ep[EP_DECLARE] != 0 and st.sc[SC_PHASE] == PH_TURN:
        _declare_options(st, ep, tabs, dealer)


@_inline_kernel
def _draw(st, ep, rp, tabs, s, replacement):
    """Seat ``s`` draws from the head (or the tail for a kong replacement, K-5.4)."""
    if replacement:
        t = st.wall[st.sc[SC_TAIL]]
        st.sc[SC_TAIL] -= 1
    else:
        t = st.wall[st.sc[SC_HEAD]]
        st.sc[SC_HEAD] += 1
    st.seat[s, SF_PIAO_OPEN] = 0  # K-9.2 the circle ends at the 飘 player's next draw
    st.seat[s, SF_PASSED_PONG] = 0  # K-4.4 until their own next turn
    st.seat[s, SF_PASSED_WIN] = 0
    st.seat[s, SF_SWAP_FORBID] = -1
    st.sc[SC_TURN] = s
    st.sc[SC_TO_ACT] = s
    st.sc[SC_PHASE] = PH_TURN
    st.sc[SC_DRAWN] = t
    st.sc[SC_REPLACEMENT] = 1 if replacement else 0
    st.sc[SC_JUST_CLAIMED] = 0
    st.sc[SC_TILE] = -1
    st.sc[SC_SRC] = -1
    joker = ep[EP_JOKER]
    # K-2.5 (E3): 爆头 shape before the draw + a 财神 drawn -> no self-draw win
    # until the seat has discarded a 财神 (kongs meanwhile do not lift it)
    force = st.seat[s, SF_FORCE_PIAO]
    legal = False
    e = 0
    f = 0
    lp = 0
    lk = 0
    if st.seat[s, SF_TENPAI] != 0:  # only a ready hand can be 爆头 or win
        if force == 0 and joker >= 0 and ep[EP_BAOTOU_FORCE] != 0 and t == joker:
            # K-2.5 (kaihua D3: 七子爆头 shape too)
            if _is_baotou_wait(st.hands[s], st.seat[s, SF_N_MELDS], tabs):
                force = 1
                st.seat[s, SF_FORCE_PIAO] = 1
        if force == 0:
            legal, e, f, lp, lk = _win_eval(st, ep, rp, tabs, s, t, True, replacement)
    st.hands[s, t] += 1
    st.sc[SC_CAN_TSUMO] = 1 if legal else 0
    st.sc[SC_TSUMO_EXP] = e
    st.sc[SC_TSUMO_FLAGS] = f
    st.sc[SC_TSUMO_PIAO] = lp
    st.sc[SC_TSUMO_KONG] = lk


@_inline_kernel
def _draw_next(st, ep, rp, tabs, s):
    """Normal draw for seat ``s``, or 流局 when only the reserve is left (K-3.4)."""
    if _tiles_left(st) <= ep[EP_RESERVE]:
        _end_exhausted(st)
    else:
        _draw(st, ep, rp, tabs, s, False)


@_inline_kernel
def _end_exhausted(st):
    """流局 (K-3.4): nobody pays (K-8.4)."""
    st.sc[SC_PHASE] = PH_DONE
    st.sc[SC_TO_ACT] = -1
    st.sc[SC_TILE] = -1
    st.sc[SC_WINNER] = -1
    st.sc[SC_WIN_TYPE] = -1
    st.sc[SC_DISCARDER] = -1


@_inline_kernel
def _begin_claimed_turn(st, s):
    """After a chow / pong: seat ``s`` must discard without drawing (K-4.1)."""
    st.sc[SC_TURN] = s
    st.sc[SC_TO_ACT] = s
    st.sc[SC_PHASE] = PH_TURN
    st.sc[SC_DRAWN] = -1
    st.sc[SC_REPLACEMENT] = 0
    st.sc[SC_JUST_CLAIMED] = 1
    st.sc[SC_CAN_TSUMO] = 0
    st.sc[SC_TILE] = -1
    st.sc[SC_SRC] = -1


# ---------------------------------------------------------------------------
# claims
# ---------------------------------------------------------------------------
@_inline_kernel
def _build_claims(st, ep, rp, tabs, src, k, rob):
    """Claim options of the three other seats on tile ``k`` from ``src`` and the ask queue.

    ``rob``: the tile is an added kong's (only wins, K-5.5).  Sets
    ``seat[:, SF_CLAIM_OPTS]``, ``queue``, ``sc[SC_Q_LEN]``.
    """
    joker = ep[EP_JOKER]
    any_circle = False
    if ep[EP_PIAO_BAN] != 0:
        for p in range(N_SEATS):
            if st.seat[p, SF_PIAO_OPEN] != 0:
                any_circle = True
    left = _tiles_left(st)
    for i in range(1, N_SEATS):
        s = (src + i) % N_SEATS
        opts = 0
        if k != joker:  # K-2.2 a discarded joker can never be claimed
            if (
                ep[EP_DISCARD_WIN] != 0
                and st.seat[s, SF_TENPAI] != 0
                and (not rob or ep[EP_ROB_KONG] != 0)
                and not (ep[EP_PASSED_WIN] != 0 and st.seat[s, SF_PASSED_WIN] != 0)
            ):
                legal, e, f, lp, lk = _win_eval(st, ep, rp, tabs, s, k, False, False)
                if legal:
                    opts |= OPT_WIN
                    st.seat[s, SF_CLAIM_EXP] = e
                    st.seat[s, SF_CLAIM_FLAGS] = f
                    st.seat[s, SF_CLAIM_PIAO] = lp
                    st.seat[s, SF_CLAIM_KONG] = lk
            # K-9.2: no chow / pong / exposed kong inside a 飘财 circle
            # J-4.2: no pong / kong after a hard declaration
            if not rob and not any_circle and st.seat[s, SF_N_MELDS] < MAX_MELDS and st.seat[s, SF_DECL] != DECL_HARD:
                h = st.hands[s]
                if h[k] >= 2 and ep[EP_PASSED_PONG] != 0 and (st.seat[s, SF_PASSED_PONG] >> k) & 1:
                    pass  # K-4.4 passed pong
                elif h[k] >= 2:
                    opts |= OPT_PONG
                if h[k] >= 3 and left > ep[EP_RESERVE]:  # K-3.4 kongs only above the reserve
                    opts |= OPT_KONG
                if ep[EP_CHOW] != 0 and i == 1 and k < 27:  # K-4.2 chow only by the next seat
                    r = k % 9
                    if r <= 6 and h[k + 1] > 0 and h[k + 2] > 0 and k + 1 != joker and k + 2 != joker:
                        opts |= OPT_CHOW_LOW
                    if 1 <= r <= 7 and h[k - 1] > 0 and h[k + 1] > 0 and k - 1 != joker and k + 1 != joker:
                        opts |= OPT_CHOW_MID
                    if r >= 2 and h[k - 2] > 0 and h[k - 1] > 0 and k - 2 != joker and k - 1 != joker:
                        opts |= OPT_CHOW_HIGH
        st.seat[s, SF_CLAIM_OPTS] = opts
    n = 0
    for level in range(3):  # K-4.3 win > pong / kong > chow, then turn order
        bits = _level_bits(level)
        for i in range(1, N_SEATS):
            s = (src + i) % N_SEATS
            if st.seat[s, SF_CLAIM_OPTS] & bits:
                st.queue[n, 0] = s
                st.queue[n, 1] = level
                n += 1
    st.sc[SC_Q_LEN] = n
    st.sc[SC_Q_POS] = 0
    st.sc[SC_N_RON] = 0
    st.sc[SC_TILE] = k
    st.sc[SC_SRC] = src


@_inline_kernel
def _group_end(st, q):
    """End of the run of queue entries from ``q`` that belong to the same seat."""
    s = st.queue[q, 0]
    e = q + 1
    while e < st.sc[SC_Q_LEN] and st.queue[e, 0] == s:
        e += 1
    return e


@njit(cache=True, inline="always")
def _claim_bit(a):
    """The OPT_* bit of claim action ``a`` (136..141)."""
    if a == A_CHOW_LOW:
        return OPT_CHOW_LOW
    if a == A_CHOW_MID:
        return OPT_CHOW_MID
    if a == A_CHOW_HIGH:
        return OPT_CHOW_HIGH
    if a == A_PONG:
        return OPT_PONG
    if a == A_KONG_EXPOSED:
        return OPT_KONG
    return OPT_WIN


@_inline_kernel
def _offered(st, q, e):
    """OPT_* bits offered to the seat asked at queue entries ``q .. e-1``."""
    s = st.queue[q, 0]
    bits = 0
    for j in range(q, e):
        bits |= st.seat[s, SF_CLAIM_OPTS] & _level_bits(st.queue[j, 1])
    if st.sc[SC_N_RON] > 0:  # multiple_ron: once somebody won, only wins are asked
        bits &= OPT_WIN
    return bits


@_inline_kernel
def _open_claims(st, ep, rp, tabs, rob):
    """After ``_build_claims``: ask the first claimant, or move on if nobody can claim."""
    if st.sc[SC_Q_LEN] == 0:
        _no_claim(st, ep, rp, tabs, rob)
    else:
        st.sc[SC_PHASE] = PH_ROB if rob else PH_CLAIM
        st.sc[SC_TO_ACT] = st.queue[0, 0]


@_inline_kernel
def _no_claim(st, ep, rp, tabs, rob):
    src = st.sc[SC_SRC]
    if rob:  # the added kong stands: link + replacement draw (K-5.4, K-6.5)
        _chain_kong(st, src)
        _draw(st, ep, rp, tabs, src, True)
    else:
        _draw_next(st, ep, rp, tabs, (src + 1) % N_SEATS)


@_inline_kernel
def _claim_step(st, ep, rp, tabs, a):
    s = st.sc[SC_TO_ACT]
    q = st.sc[SC_Q_POS]
    e = _group_end(st, q)
    offered = _offered(st, q, e)
    rob = st.sc[SC_PHASE] == PH_ROB
    k = st.sc[SC_TILE]
    src = st.sc[SC_SRC]
    if a == A_WIN:
        st.seat[s, SF_WON] = 1
        st.seat[s, SF_EXPONENT] = st.seat[s, SF_CLAIM_EXP]
        st.seat[s, SF_FLAGS] = st.seat[s, SF_CLAIM_FLAGS]
        st.seat[s, SF_WIN_PIAO] = st.seat[s, SF_CLAIM_PIAO]
        st.seat[s, SF_WIN_KONG] = st.seat[s, SF_CLAIM_KONG]
        st.sc[SC_N_RON] += 1
        st.sc[SC_Q_POS] = e
        if ep[EP_MULTI_RON] != 0 and e < st.sc[SC_Q_LEN] and st.queue[e, 1] == LV_WIN:
            st.sc[SC_TO_ACT] = st.queue[e, 0]  # K-4.3 option: ask the other win claimants
            return
        _finish_wins(st, ep, rp, WIN_ROBBED_KONG if rob else WIN_DISCARD, src, k)
        return
    # the seat gives up what it does not take
    if offered & OPT_PONG and a != A_PONG and ep[EP_PASSED_PONG] != 0:
        if ep[EP_PASSED_PONG] == 2:
            st.seat[s, SF_PASSED_PONG] = (1 << N_KINDS) - 1
        else:
            st.seat[s, SF_PASSED_PONG] |= 1 << k  # K-4.4
    if offered & OPT_WIN:
        st.seat[s, SF_N_PASSED_WIN] += 1
        if ep[EP_PASSED_WIN] != 0:
            st.seat[s, SF_PASSED_WIN] = 1  # J-3.5 until the seat's next draw
    if a == A_PASS:
        st.sc[SC_Q_POS] = e
        if e < st.sc[SC_Q_LEN] and (st.sc[SC_N_RON] == 0 or st.queue[e, 1] == LV_WIN):
            st.sc[SC_TO_ACT] = st.queue[e, 0]
        elif st.sc[SC_N_RON] > 0:
            _finish_wins(st, ep, rp, WIN_ROBBED_KONG if rob else WIN_DISCARD, src, k)
        else:
            _no_claim(st, ep, rp, tabs, rob)
        return
    # a melding claim (everybody with a higher priority has passed)
    nd = st.seat[src, SF_N_DISCARDS] - 1
    st.dflags[src, nd] |= DF_CLAIMED
    if ep[EP_PASSED_PONG_CLAIM_CLEARS] != 0:
        st.seat[s, SF_PASSED_PONG] = 0
    st.seat[s, SF_SWAP_FORBID] = -1
    if a == A_PONG:
        st.hands[s, k] -= 2
        _add_meld(st, s, MELD_PONG, k)
        _chain_reset(st, s)  # K-6.5 a pong ends the chain
        _begin_claimed_turn(st, s)
    elif a == A_KONG_EXPOSED:
        st.hands[s, k] -= 3
        _add_meld(st, s, MELD_KONG_EXPOSED, k)
        _chain_kong(st, s)
        _update_tenpai(st, ep, tabs, s)
        _draw(st, ep, rp, tabs, s, True)
    else:  # chow (K-4.2)
        low = k - (a - A_CHOW_LOW)
        for t in range(low, low + 3):
            if t != k:
                st.hands[s, t] -= 1
        _add_meld(st, s, MELD_CHOW, low)
        st.seat[s, SF_N_CHOWS] += 1
        _chain_reset(st, s)
        # K-4.5 swap call: the other end of the two held tiles is banned on
        # the chows after the first swap_call_max_chows
        if st.seat[s, SF_N_CHOWS] > ep[EP_SWAP_MAX_CHOWS]:
            r = k % 9
            if a == A_CHOW_LOW and r + 3 <= 8:
                st.seat[s, SF_SWAP_FORBID] = k + 3
            elif a == A_CHOW_HIGH and r - 3 >= 0:
                st.seat[s, SF_SWAP_FORBID] = k - 3
        _begin_claimed_turn(st, s)


@njit(cache=True)
def _record_win(st, j, w, win_type, discarder, tile):
    """Write row ``j`` of ``st.wins`` (``WX_*``): the context of seat ``w``'s win, before the hand changes.

    The Python scorer reads it after the hand (Jiating, ``caishen.sim.jiating_records``).
    """
    x = st.wins[j]
    dealer = st.sc[SC_DEALER]
    self_draw = win_type == WIN_SELF_DRAW
    x[WX_SEAT] = w
    x[WX_TILE] = tile
    x[WX_TYPE] = win_type
    x[WX_DISCARDER] = -1 if self_draw else discarder
    x[WX_DECL] = st.seat[w, SF_DECL]
    nm = st.seat[w, SF_N_MELDS]
    replacement = self_draw and st.sc[SC_REPLACEMENT] != 0
    # J-5.4 天胡: the dealer's self-draw on the dealt tiles (first turn, no kong before)
    x[WX_FIRST_TURN] = 1 if (self_draw and w == dealer and st.seat[w, SF_N_DISCARDS] == 0 and nm == 0
                             and not replacement) else 0
    x[WX_REPLACEMENT] = 1 if replacement else 0
    x[WX_ON_FIRST] = 1 if (win_type == WIN_DISCARD and discarder == dealer
                           and st.seat[dealer, SF_N_DISCARDS] == 1) else 0
    # P27: copies of the winning kind seen elsewhere: unclaimed discards (not the
    # winning discard itself) and the other seats' exposed melds (a robbed added
    # kong shows its three pong tiles; concealed kongs are hidden, J-3.2)
    seen = 0
    for p in range(N_SEATS):
        nd = st.seat[p, SF_N_DISCARDS]
        if win_type == WIN_DISCARD and p == discarder:
            nd -= 1
        for i in range(nd):
            if st.discards[p, i] == tile and st.dflags[p, i] & DF_CLAIMED == 0:
                seen += 1
        if p == w:
            continue
        for i in range(st.seat[p, SF_N_MELDS]):
            t = st.meld_type[p, i]
            k = st.meld_kind[p, i]
            if t == MELD_CHOW:
                if k <= tile <= k + 2:
                    seen += 1
            elif k != tile or t == MELD_KONG_CONCEALED:
                continue
            elif t == MELD_PONG or (win_type == WIN_ROBBED_KONG and p == discarder and i == st.sc[SC_ROB_MELD]):
                seen += 3
            else:
                seen += 4
    x[WX_VISIBLE] = seen
    x[WX_N_MELDS] = nm
    for i in range(MAX_MELDS):
        x[WX_MELD_TYPE + i] = st.meld_type[w, i]
        x[WX_MELD_KIND + i] = st.meld_kind[w, i]
    for k in range(N_KINDS):
        x[WX_HAND + k] = st.hands[w, k]
    if self_draw:
        x[WX_HAND + tile] -= 1


@_inline_kernel
def _finish_wins(st, ep, rp, win_type, discarder, tile):
    """Pay every seat with ``SF_WON`` (in turn order after the discarder) and end the hand.

    The 飘 circles open now are the failed 飘 of K-9.3 (a winner's own circle
    does not count).  On a discard / robbed-kong win the tile goes into the
    first winner's hand; a robbed added kong reverts to a pong (K-5.5).
    The hand's end lifts every K-2.5 force (E3).
    """
    dealer = st.sc[SC_DEALER]
    start = discarder if win_type != WIN_SELF_DRAW else st.sc[SC_TO_ACT]
    st.tmp[:] = 0
    first = -1
    mask = 0
    n_wins = 0
    for i in range(N_SEATS):
        w = (start + i) % N_SEATS if win_type == WIN_SELF_DRAW else (start + 1 + i) % N_SEATS
        if st.seat[w, SF_WON] == 0:
            continue
        for p in range(N_SEATS):
            st.circle[p] = 1 if (p != w and st.seat[p, SF_PIAO_OPEN] != 0) else 0
            if st.circle[p]:
                st.seat[p, SF_FAILED_PIAO] = 1
        if ep[EP_ENGINE_PAYMENTS] != 0:  # else the Python scorer pays (J-6, caishen.sim.jiating_records)
            _payments(dealer, w, win_type, discarder, st.seat[w, SF_EXPONENT], st.circle, rp, st.tmp)
        if n_wins < MAX_WINNERS:
            _record_win(st, n_wins, w, win_type, discarder, tile)
            n_wins += 1
        mask |= 1 << w
        if first < 0:
            first = w
    for p in range(N_SEATS):
        st.seat[p, SF_SCORE] += st.tmp[p]
        st.seat[p, SF_FORCE_PIAO] = 0  # E3: the force ends with the hand
    if win_type == WIN_DISCARD:
        st.dflags[discarder, st.seat[discarder, SF_N_DISCARDS] - 1] |= DF_CLAIMED
        st.hands[first, tile] += 1
    elif win_type == WIN_ROBBED_KONG:
        st.meld_type[discarder, st.sc[SC_ROB_MELD]] = MELD_PONG
        st.hands[first, tile] += 1
    st.sc[SC_PHASE] = PH_DONE
    st.sc[SC_TO_ACT] = -1
    st.sc[SC_WINNER] = first
    st.sc[SC_WIN_TYPE] = win_type
    st.sc[SC_DISCARDER] = discarder if win_type != WIN_SELF_DRAW else -1
    st.sc[SC_WINNERS_MASK] = mask
    st.sc[SC_EXPONENT] = st.seat[first, SF_EXPONENT]
    st.sc[SC_FLAGS] = st.seat[first, SF_FLAGS]
    st.sc[SC_WIN_TILE] = tile
    st.sc[SC_TILE] = -1
    st.sc[SC_N_WINS] = n_wins


# ---------------------------------------------------------------------------
# own-turn actions
# ---------------------------------------------------------------------------
@_inline_kernel
def _discard(st, ep, rp, tabs, s, k):
    st.hands[s, k] -= 1
    nd = st.seat[s, SF_N_DISCARDS]
    st.discards[s, nd] = k
    st.dflags[s, nd] = 0
    st.seat[s, SF_N_DISCARDS] = nd + 1
    st.sc[SC_TURNS] += 1
    if k == ep[EP_JOKER]:  # 飘财 (K-9.1): a chain link and a circle (K-9.2)
        st.seat[s, SF_CHAIN_LEN] += 1
        st.seat[s, SF_CHAIN_PIAO] += 1
        st.seat[s, SF_PIAO_OPEN] = 1
        st.seat[s, SF_PIAO_COUNT] += 1
        st.seat[s, SF_FORCE_PIAO] = 0  # K-2.5 (E3): the 财神 discard lifts the force
    else:
        _chain_reset(st, s)  # K-6.5 a non-财神 discard ends the chain
    if k != st.sc[SC_DRAWN]:  # discarding the drawn tile leaves the hand whose readiness is cached
        _update_tenpai(st, ep, tabs, s)
    st.seat[s, SF_SWAP_FORBID] = -1
    st.sc[SC_DRAWN] = -1
    st.sc[SC_JUST_CLAIMED] = 0
    st.sc[SC_CAN_TSUMO] = 0
    _build_claims(st, ep, rp, tabs, s, k, False)
    if (ep[EP_HARD] != 0 and s == st.sc[SC_DEALER] and nd == 0 and st.seat[s, SF_DECL] != DECL_HARD
            and _hard_ready(st, tabs, s)):
        _ask_hard(st, s, HARD_STAGE_DEALER)  # J-4.2: the dealer declares with the first discard
    else:
        _open_claims(st, ep, rp, tabs, False)


@_inline_kernel
def _kong_concealed(st, ep, rp, tabs, s, k):
    """K-5.3: four of a kind from the hand; then a replacement draw (K-5.4)."""
    st.hands[s, k] -= 4
    _add_meld(st, s, MELD_KONG_CONCEALED, k)
    _chain_kong(st, s)
    _update_tenpai(st, ep, tabs, s)
    _draw(st, ep, rp, tabs, s, True)


@_inline_kernel
def _kong_added(st, ep, rp, tabs, s, k):
    """K-5.2: the fourth tile onto an own pong; it may be robbed first (K-5.5)."""
    m = 0
    for i in range(st.seat[s, SF_N_MELDS]):
        if st.meld_type[s, i] == MELD_PONG and st.meld_kind[s, i] == k:
            m = i
    st.hands[s, k] -= 1
    st.meld_type[s, m] = MELD_KONG_ADDED
    _update_tenpai(st, ep, tabs, s)
    st.sc[SC_ROB_MELD] = m
    st.sc[SC_DRAWN] = -1
    st.sc[SC_CAN_TSUMO] = 0
    _build_claims(st, ep, rp, tabs, s, k, True)
    _open_claims(st, ep, rp, tabs, True)


@_inline_kernel
def _hard_step(st, ep, rp, tabs, s, a):
    """J-4.2: seat ``s`` declares (``hard_declare``) or declines 硬子; then the next
    ready non-dealer is asked, or the dealer's first turn starts (stage deal),
    or the claims on the dealer's first discard are opened (stage dealer)."""
    if a == A_HARD_DECLARE:
        _set_declaration(st, s, DECL_HARD, st.sc[SC_TURNS])
    if st.sc[SC_HARD_STAGE] == HARD_STAGE_DEAL:
        p = _next_hard_candidate(st, tabs, s)
        if p >= 0:
            _ask_hard(st, p, HARD_STAGE_DEAL)
        else:
            st.sc[SC_HARD_STAGE] = HARD_STAGE_NONE
            st.sc[SC_PHASE] = PH_TURN
            st.sc[SC_TO_ACT] = st.sc[SC_DEALER]
    else:
        st.sc[SC_HARD_STAGE] = HARD_STAGE_NONE
        _open_claims_call(st, ep, rp, tabs)


@njit(cache=True)
def _open_claims_call(st, ep, rp, tabs):
    """``_open_claims`` on a pending discard as a plain call (the rare 硬子 path; keeps ``_step`` small)."""
    _open_claims(st, ep, rp, tabs, False)


@njit(cache=True)
def _step(st, ep, rp, tabs, a):
    """Apply action ``a`` of the seat to act, in place.  ``a`` must be legal (no check).

    Then the automatic actions (J-4.2: a hard-declared seat discards what it
    drew and cannot win with) are applied until somebody must decide.
    """
    st.sc[SC_STEPS] += 1
    while True:
        s = st.sc[SC_TO_ACT]
        ph = st.sc[SC_PHASE]
        if ph == PH_TURN:
            if a < A_KONG_CONCEALED:  # discard, or discard and declare 架听 (J-4.1)
                k = a
                if a >= A_DECLARE:
                    k = a - A_DECLARE
                    _set_declaration(st, s, DECL_JIATING, st.sc[SC_TURNS] + 1)
                _discard(st, ep, rp, tabs, s, k)
            elif a < A_KONG_ADDED:
                _kong_concealed(st, ep, rp, tabs, s, a - A_KONG_CONCEALED)
            elif a < A_CHOW_LOW:
                _kong_added(st, ep, rp, tabs, s, a - A_KONG_ADDED)
            elif a == A_WIN:
                st.seat[s, SF_WON] = 1
                st.seat[s, SF_EXPONENT] = st.sc[SC_TSUMO_EXP]
                st.seat[s, SF_FLAGS] = st.sc[SC_TSUMO_FLAGS]
                st.seat[s, SF_WIN_PIAO] = st.sc[SC_TSUMO_PIAO]
                st.seat[s, SF_WIN_KONG] = st.sc[SC_TSUMO_KONG]
                _finish_wins(st, ep, rp, WIN_SELF_DRAW, -1, st.sc[SC_DRAWN])
        elif ph == PH_HARD:
            _hard_step(st, ep, rp, tabs, s, a)
        else:
            _claim_step(st, ep, rp, tabs, a)
        if ep[EP_DECLARE] != 0 and st.sc[SC_PHASE] == PH_TURN:  # a turn begins (J-4.1)
            _declare_options(st, ep, tabs, st.sc[SC_TO_ACT])
        a = _auto_action(st, ep)
        if a < 0:
            return


# ---------------------------------------------------------------------------
# legal actions
# ---------------------------------------------------------------------------
@_inline_kernel
def _forced_joker(st, ep, s):
    """True if seat ``s`` must discard a joker this turn (K-2.4; K-2.5, E3: ``SF_FORCE_PIAO``)."""
    joker = ep[EP_JOKER]
    if joker < 0 or st.hands[s, joker] == 0:
        return False
    if ep[EP_FORCE_JOKER_MIN] > 0 and st.hands[s, joker] >= ep[EP_FORCE_JOKER_MIN]:
        return True
    return st.seat[s, SF_FORCE_PIAO] != 0


@njit(cache=True)
def _legal_mask(st, ep):
    """Fill ``st.mask: uint8[N_ACTIONS]`` (1 = legal) and the list ``st.legal`` for the seat to act.

    Returns the number of legal actions ``n`` (also ``st.sc[SC_N_LEGAL]``);
    ``st.legal[:n]`` holds them (discards, 架听 declarations, concealed kongs,
    added kongs, win; or the claim actions in index order; or ``hard_declare,
    hard_decline``).  All 0 when the hand is over.
    Only the entries set by the previous call are cleared (the list says which).
    """
    m = st.mask
    lst = st.legal
    for i in range(st.sc[SC_N_LEGAL]):
        m[lst[i]] = 0
    n = 0
    ph = st.sc[SC_PHASE]
    if ph == PH_DONE:
        st.sc[SC_N_LEGAL] = 0
        return 0
    s = st.sc[SC_TO_ACT]
    if ph == PH_TURN and st.seat[s, SF_DECL] == DECL_HARD:
        # J-4.2: a hard seat is asked only when it can win: win or discard the drawn tile
        t = st.sc[SC_DRAWN]
        if t >= 0:
            m[A_DISCARD + t] = 1
            lst[n] = A_DISCARD + t
            n += 1
        else:  # unreachable (a hard seat never claims): any discard
            for k in range(N_KINDS):
                if st.hands[s, k] > 0:
                    m[A_DISCARD + k] = 1
                    lst[n] = A_DISCARD + k
                    n += 1
        if st.sc[SC_CAN_TSUMO] != 0:
            m[A_WIN] = 1
            lst[n] = A_WIN
            n += 1
    elif ph == PH_HARD:
        m[A_HARD_DECLARE] = 1
        lst[n] = A_HARD_DECLARE
        m[A_HARD_DECLINE] = 1
        lst[n + 1] = A_HARD_DECLINE
        n += 2
    elif ph == PH_TURN:
        h = st.hands[s]
        joker = ep[EP_JOKER]
        forced = _forced_joker(st, ep, s)  # K-2.4, K-2.5
        forbid = st.seat[s, SF_SWAP_FORBID]  # K-4.5
        fours = 0
        if forced:
            for k in range(N_KINDS):
                if h[k] > 0 and k == joker and k != forbid:
                    m[A_DISCARD + k] = 1
                    lst[n] = A_DISCARD + k
                    n += 1
                fours |= np.int64(h[k] == 4) << k
        else:
            # Branch-free (which kinds a hand holds is random: a branch per kind
            # is mispredicted often), and in two passes: storing the list entry
            # at a position computed from the previous load made every next load
            # wait for that store (about 80 ns a call before, 50 ns now)
            held = 0
            for k in range(N_KINDS):
                c = h[k]
                ok = (c > 0) & (k != forbid)
                m[A_DISCARD + k] = ok
                held |= np.int64(ok) << k
                fours |= np.int64(c == 4) << k
            for k in range(N_KINDS):  # no loads in this pass
                lst[n] = A_DISCARD + k
                n += (held >> k) & 1
        if n == 0:  # the swap-call ban covers every held tile: it yields
            for k in range(N_KINDS):
                if h[k] > 0:
                    m[A_DISCARD + k] = 1
                    lst[n] = A_DISCARD + k
                    n += 1
        decl = st.sc[SC_DECLARE_KINDS]  # J-4.1 (0 unless the rule set has 架听)
        if decl != 0:
            for k in range(N_KINDS):
                if (decl >> k) & 1 and m[A_DISCARD + k]:
                    m[A_DECLARE + k] = 1
                    lst[n] = A_DECLARE + k
                    n += 1
        if (st.sc[SC_JUST_CLAIMED] == 0 or ep[EP_KONG_AFTER_CLAIM] != 0) and _tiles_left(st) > ep[EP_RESERVE]:
            nm = st.seat[s, SF_N_MELDS]
            if nm < MAX_MELDS and fours != 0:
                for k in range(N_KINDS):
                    if (fours >> k) & 1 and k != joker:  # K-5.3; K-2.3 never a joker kong
                        m[A_KONG_CONCEALED + k] = 1
                        lst[n] = A_KONG_CONCEALED + k
                        n += 1
            for i in range(nm):  # K-5.2
                if st.meld_type[s, i] == MELD_PONG and h[st.meld_kind[s, i]] > 0:
                    a = A_KONG_ADDED + st.meld_kind[s, i]
                    m[a] = 1
                    lst[n] = a
                    n += 1
        if st.sc[SC_CAN_TSUMO] != 0:
            m[A_WIN] = 1
            lst[n] = A_WIN
            n += 1
    else:
        q = st.sc[SC_Q_POS]
        bits = _offered(st, q, _group_end(st, q))
        for a in range(A_CHOW_LOW, A_PASS):
            if bits & _claim_bit(a):
                m[a] = 1
                lst[n] = a
                n += 1
        m[A_PASS] = 1
        lst[n] = A_PASS
        n += 1
    st.sc[SC_N_LEGAL] = n
    return n


# ---------------------------------------------------------------------------
# invariant checker
# ---------------------------------------------------------------------------
ERR_TILES = 1
ERR_HAND_RANGE = 2
ERR_JOKER_MELD = 3
ERR_HAND_SIZE = 4
ERR_TO_ACT = 5
ERR_EMPTY_MASK = 6
ERR_MASK_ILLEGAL = 7
ERR_SCORES = 8
ERR_POINTERS = 9
ERR_MELDS = 10
ERR_TENPAI = 11
ERR_MASK_LIST = 12
ERR_DECL = 13
ERR_PASSED_WIN = 14
ERR_HARD_AUTO = 15
ERR_MISSING = 16
ERR_FORCE = 17
ERR_WIN_LINKS = 18
ERR_MESSAGES = {
    ERR_TILES: "tiles not conserved: wall remainder + hands + melds + discards != 4 of every kind",
    ERR_HAND_RANGE: "a hand holds a kind more than 4 times",
    ERR_JOKER_MELD: "a joker is part of a meld (K-2.3)",
    ERR_HAND_SIZE: "a hand has the wrong number of tiles",
    ERR_TO_ACT: "the seat to act is inconsistent with the phase",
    ERR_EMPTY_MASK: "no legal action while the hand is not over",
    ERR_MASK_ILLEGAL: "the mask allows an illegal action",
    ERR_SCORES: "scores do not sum to zero (K-8.5)",
    ERR_POINTERS: "wall pointers out of range (reserve touched, K-3.4)",
    ERR_MELDS: "meld table inconsistent",
    ERR_TENPAI: "a seat's cached ready flag (SF_TENPAI) is stale",
    ERR_MASK_LIST: "the legal-action list disagrees with the mask",
    ERR_DECL: "a declaration is inconsistent (J-4.1 / J-4.2: rule set, turn, offer, melds after 硬子)",
    ERR_PASSED_WIN: "a seat that passed a win is offered a win before its next draw (J-3.5)",
    ERR_HARD_AUTO: "a 硬子 seat is asked to discard although it cannot win (J-4.2: automatic discard)",
    ERR_MISSING: "a legal 架听 declaration or 硬子 offer is missing (J-4.1 / J-4.2)",
    ERR_FORCE: "a K-2.5 forced 飘 (SF_FORCE_PIAO) is held by a seat that is not on its own turn, "
    "holds no 财神, or plays a rule set without it (E3)",
    ERR_WIN_LINKS: "a winner's counted chain links disagree with its chain, its flags or the win type "
    "(K-6.5, K-9.4, K-10)",
}


@njit(cache=True)
def _winning_kinds_slow(st, tabs, s, discard):
    """Kinds that complete seat ``s``'s concealed tiles (minus one ``discard``, -1 none),
    of which ``s`` holds fewer than four in hand and melds: a plain loop over
    the 34 kinds with the win test (the checker's restatement of J-4.1 / J-4.2)."""
    h = st.hands[s]
    own = st.counts
    for k in range(N_KINDS):
        own[k] = h[k]
    for i in range(st.seat[s, SF_N_MELDS]):
        _add_meld_tiles(own, st.meld_type[s, i], st.meld_kind[s, i])
    if discard >= 0:
        h[discard] -= 1
        own[discard] -= 1
    n = 0
    for t in range(N_KINDS):
        if own[t] < 4:
            h[t] += 1
            if _is_win(h, -1, tabs):  # Jiating has no joker (J-1.1)
                n += 1
            h[t] -= 1
    if discard >= 0:
        h[discard] += 1
    return n


@njit(cache=True)
def _action_ok(st, ep, rp, tabs, a):
    """Necessary conditions of action ``a`` restated from the rules, independent of ``_legal_mask``."""
    s = st.sc[SC_TO_ACT]
    ph = st.sc[SC_PHASE]
    h = st.hands[s]
    joker = ep[EP_JOKER]
    if ph == PH_HARD:  # J-4.2: a ready seat at the deal, before the dealer's first discard
        if a != A_HARD_DECLARE and a != A_HARD_DECLINE:
            return False
        if ep[EP_HARD] == 0 or st.seat[s, SF_DECL] == DECL_HARD:
            return False
        dealer = st.sc[SC_DEALER]
        if s == dealer:  # with the first discard
            if st.seat[s, SF_N_DISCARDS] != 1 or st.sc[SC_TURNS] != 1 or st.sc[SC_SRC] != s:
                return False
        elif st.sc[SC_TURNS] != 0 or st.seat[s, SF_N_MELDS] != 0:
            return False
        return _winning_kinds_slow(st, tabs, s, -1) > 0
    hard = st.seat[s, SF_DECL] == DECL_HARD
    if ph == PH_TURN:
        if hard and a != A_WIN and a != A_DISCARD + st.sc[SC_DRAWN]:
            return False  # J-4.2: a hard seat only wins or gives back its drawn tile
        if A_DECLARE <= a < A_KONG_CONCEALED:  # J-4.1
            k = a - A_DECLARE
            if ep[EP_DECLARE] == 0 or st.seat[s, SF_DECL] != DECL_NONE or h[k] == 0:
                return False
            return _winning_kinds_slow(st, tabs, s, k) == 1
        if a < A_DECLARE:
            if h[a] == 0:
                return False
            if joker >= 0 and a != joker and ep[EP_FORCE_JOKER_MIN] > 0 and h[joker] >= ep[EP_FORCE_JOKER_MIN]:
                return False  # K-2.4
            if a != joker and st.seat[s, SF_FORCE_PIAO] != 0:
                return False  # K-2.5 (E3): only a 财神 until one is discarded
            return True
        if A_KONG_CONCEALED <= a < A_KONG_ADDED:
            k = a - A_KONG_CONCEALED
            return h[k] == 4 and k != joker and _tiles_left(st) > ep[EP_RESERVE]
        if A_KONG_ADDED <= a < A_CHOW_LOW:
            k = a - A_KONG_ADDED
            if h[k] == 0 or _tiles_left(st) <= ep[EP_RESERVE]:
                return False
            for i in range(st.seat[s, SF_N_MELDS]):
                if st.meld_type[s, i] == MELD_PONG and st.meld_kind[s, i] == k:
                    return True
            return False
        if a == A_WIN:
            t = st.sc[SC_DRAWN]
            if t < 0 or st.seat[s, SF_FORCE_PIAO] != 0:  # K-2.5 (E3): no win before the 财神 discard
                return False
            st.hands[s, t] -= 1
            legal, e, f, lp, lk = _win_eval(st, ep, rp, tabs, s, t, True, st.sc[SC_REPLACEMENT] != 0)
            st.hands[s, t] += 1
            return legal
        return False
    # claims: K-2.2 never on a joker; K-9.2 no meld inside a 飘 circle
    k = st.sc[SC_TILE]
    src = st.sc[SC_SRC]
    if a == A_PASS:
        return True
    if k == joker or s == src:
        return False
    if a == A_WIN:
        if ep[EP_DISCARD_WIN] == 0 or st.seat[s, SF_FORCE_PIAO] != 0:  # K-7.1; K-2.5 (E3)
            return False
        if ep[EP_PASSED_WIN] != 0 and st.seat[s, SF_PASSED_WIN] != 0:
            return False  # J-3.5
        legal, e, f, lp, lk = _win_eval(st, ep, rp, tabs, s, k, False, False)
        return legal
    if ph == PH_ROB or hard:  # J-4.2: no pong or kong after a hard declaration
        return False
    if a == A_PONG or a == A_KONG_EXPOSED or A_CHOW_LOW <= a <= A_CHOW_HIGH:
        for p in range(N_SEATS):
            if st.seat[p, SF_PIAO_OPEN] != 0 and ep[EP_PIAO_BAN] != 0:
                return False
    if a == A_PONG:
        return h[k] >= 2 and not (ep[EP_PASSED_PONG] != 0 and (st.seat[s, SF_PASSED_PONG] >> k) & 1)
    if a == A_KONG_EXPOSED:
        return h[k] >= 3 and _tiles_left(st) > ep[EP_RESERVE]
    if A_CHOW_LOW <= a <= A_CHOW_HIGH:
        if ep[EP_CHOW] == 0 or s != (src + 1) % N_SEATS or k >= 27:
            return False
        low = k - (a - A_CHOW_LOW)
        if low < 0 or low % 9 > 6 or low // 9 != k // 9:
            return False
        for t in range(low, low + 3):
            if t != k and (h[t] == 0 or t == joker):
                return False
        return True
    return False


@njit(cache=True)
def _check_declarations(st, ep, tabs):
    """The declaration and passed-win part of :func:`_check_state` (J-3.5, J-4.1, J-4.2); 0 or an ``ERR_*``."""
    ph = st.sc[SC_PHASE]
    turns = st.sc[SC_TURNS]
    dealer = st.sc[SC_DEALER]
    for s in range(N_SEATS):
        d = st.seat[s, SF_DECL]
        dt = st.seat[s, SF_DECL_TURN]
        if st.seat[s, SF_PASSED_WIN] != 0 and (ep[EP_PASSED_WIN] == 0 or st.seat[s, SF_N_PASSED_WIN] == 0):
            return ERR_PASSED_WIN
        if st.seat[s, SF_HARD_OFFER] != 0 and ep[EP_HARD] == 0:
            return ERR_DECL
        if d == DECL_NONE:
            if dt != -1:
                return ERR_DECL
        elif d == DECL_JIATING:
            # declared with a discard of this hand; the discard made it the seat's
            if ep[EP_DECLARE] == 0 or dt < 1 or dt > turns or st.seat[s, SF_N_DISCARDS] == 0:
                return ERR_DECL
        elif d == DECL_HARD:
            if ep[EP_HARD] == 0 or st.seat[s, SF_HARD_OFFER] != 1:
                return ERR_DECL
            if dt != (1 if s == dealer else 0):  # at the deal / with the dealer's first discard
                return ERR_DECL
            if st.seat[s, SF_N_MELDS] != st.seat[s, SF_DECL_MELDS]:  # no pong or kong after it
                return ERR_DECL
        else:
            return ERR_DECL
    if ep[EP_HARD] != 0 and ph != PH_DONE and ph != PH_HARD:
        # J-4.2 completeness: every ready non-dealer was offered 硬子 at the deal, and
        # the dealer after the first discard if then ready (hands unchanged until then)
        if turns == 0:
            for i in range(1, N_SEATS):
                p = (dealer + i) % N_SEATS
                ready = _winning_kinds_slow(st, tabs, p, -1) > 0
                if ready != (st.seat[p, SF_HARD_OFFER] != 0):
                    return ERR_MISSING
        elif turns == 1 and st.seat[dealer, SF_N_DISCARDS] == 1:
            ready = _winning_kinds_slow(st, tabs, dealer, -1) > 0
            if ready != (st.seat[dealer, SF_HARD_OFFER] != 0):
                return ERR_MISSING
    return 0


@njit(cache=True)
def _check_state(st, ep, rp, tabs):
    """0 if every invariant holds, else an ``ERR_*`` code (see :data:`ERR_MESSAGES`).

    Checks: 136 tiles conserved (wall remainder + hands + melds + unclaimed
    discards = 4 of each kind), hands within 0..4, no joker in a meld, hand
    sizes, the seat to act, a non-empty mask whose every action passes
    :func:`_action_ok`, scores summing to zero, wall pointers above the
    reserve.  Uses ``st.mask`` (recomputed).
    """
    head = st.sc[SC_HEAD]
    tail = st.sc[SC_TAIL]
    if head < 0 or tail >= N_TILES or tail - head + 1 < ep[EP_RESERVE]:
        return ERR_POINTERS
    counts = st.counts
    counts[:] = 0
    for i in range(head, tail + 1):
        counts[st.wall[i]] += 1
    joker = ep[EP_JOKER]
    for s in range(N_SEATS):
        for k in range(N_KINDS):
            if st.hands[s, k] > 4:
                return ERR_HAND_RANGE
            counts[k] += st.hands[s, k]
        nm = st.seat[s, SF_N_MELDS]
        if nm < 0 or nm > MAX_MELDS:
            return ERR_MELDS
        for i in range(MAX_MELDS):
            t = st.meld_type[s, i]
            if (i < nm) != (t != MELD_NONE):
                return ERR_MELDS
            if i < nm:
                k = st.meld_kind[s, i]
                if t == MELD_CHOW and (k >= 27 or k % 9 > 6):
                    return ERR_MELDS
                if k == joker or (t == MELD_CHOW and (k + 1 == joker or k + 2 == joker)):
                    return ERR_JOKER_MELD
                _add_meld_tiles(counts, st.meld_type[s, i], st.meld_kind[s, i])
        for j in range(st.seat[s, SF_N_DISCARDS]):
            if st.dflags[s, j] & DF_CLAIMED == 0:
                counts[st.discards[s, j]] += 1
    for k in range(N_KINDS):
        if counts[k] != 4:
            return ERR_TILES
    total = 0
    for s in range(N_SEATS):
        total += st.seat[s, SF_SCORE]
    if total != 0:
        return ERR_SCORES
    ph = st.sc[SC_PHASE]
    to_act = st.sc[SC_TO_ACT]
    for s in range(N_SEATS):
        n = 0
        for k in range(N_KINDS):
            n += st.hands[s, k]
        base = 13 - 3 * st.seat[s, SF_N_MELDS]
        # the seat holding 3m+2 tiles: the one to act on its turn, or the dealer
        # while the non-dealers are asked for 硬子 (J-4.2)
        acting = (ph == PH_TURN and s == to_act) or (
            ph == PH_HARD and st.sc[SC_HARD_STAGE] == HARD_STAGE_DEAL and s == st.sc[SC_DEALER]
        )
        if ph == PH_DONE:
            if n != base and n != base + 1:
                return ERR_HAND_SIZE
        elif n != base + (1 if acting else 0):
            return ERR_HAND_SIZE
        if ph != PH_DONE and not acting:
            ready = 1 if _shanten(st.hands[s], joker, tabs) <= 0 else 0
            if ready != st.seat[s, SF_TENPAI]:
                return ERR_TENPAI
    err = _check_declarations(st, ep, tabs)
    if err != 0:
        return err
    for s in range(N_SEATS):  # E3: the K-2.5 force sits only with the seat on its turn
        fp = st.seat[s, SF_FORCE_PIAO]
        if fp != 0:
            if fp != 1 or ep[EP_BAOTOU_FORCE] == 0 or joker < 0 or st.hands[s, joker] == 0:
                return ERR_FORCE
            if not ((ph == PH_TURN or ph == PH_ROB) and s == st.sc[SC_TURN]):
                return ERR_FORCE
        # K-6.5 / D9: a win counts chain links only on a self-draw, at most the
        # winner's own links, and its flags say so (K-9.4, K-10)
        wp = st.seat[s, SF_WIN_PIAO]
        wk = st.seat[s, SF_WIN_KONG]
        if st.seat[s, SF_WON] == 0:
            if wp != 0 or wk != 0:
                return ERR_WIN_LINKS
        else:
            fl = st.seat[s, SF_FLAGS]
            if wp < 0 or wk < 0 or wp > st.seat[s, SF_CHAIN_PIAO] or wk > st.seat[s, SF_CHAIN_KONG]:
                return ERR_WIN_LINKS
            if st.sc[SC_WIN_TYPE] != WIN_SELF_DRAW and wp + wk != 0:
                return ERR_WIN_LINKS
            if ((fl & _kaihua.FLAG_CHAIN) != 0) != (wp + wk > 0) or ((fl & _kaihua.FLAG_PIAO) != 0) != (wp > 0):
                return ERR_WIN_LINKS
    if ph == PH_DONE:
        if to_act != -1:
            return ERR_TO_ACT
        return 0
    if to_act < 0 or to_act >= N_SEATS:
        return ERR_TO_ACT
    if ph == PH_TURN and to_act != st.sc[SC_TURN]:
        return ERR_TO_ACT
    if ph == PH_CLAIM or ph == PH_ROB:
        q = st.sc[SC_Q_POS]
        if q >= st.sc[SC_Q_LEN] or st.queue[q, 0] != to_act or to_act == st.sc[SC_SRC]:
            return ERR_TO_ACT
        for j in range(q, st.sc[SC_Q_LEN]):  # J-3.5
            p = st.queue[j, 0]
            if st.queue[j, 1] == LV_WIN and ep[EP_PASSED_WIN] != 0 and st.seat[p, SF_PASSED_WIN] != 0:
                return ERR_PASSED_WIN
    if ph == PH_HARD:
        stage = st.sc[SC_HARD_STAGE]
        dealer = st.sc[SC_DEALER]
        if ep[EP_HARD] == 0 or st.seat[to_act, SF_HARD_OFFER] != 1:
            return ERR_TO_ACT
        if stage == HARD_STAGE_DEAL:
            if to_act == dealer or st.sc[SC_TURN] != dealer:
                return ERR_TO_ACT
        elif stage != HARD_STAGE_DEALER or to_act != dealer or st.sc[SC_SRC] != dealer:
            return ERR_TO_ACT
    elif st.sc[SC_HARD_STAGE] != HARD_STAGE_NONE:
        return ERR_TO_ACT
    if ph == PH_TURN and st.seat[to_act, SF_DECL] == DECL_HARD and st.sc[SC_CAN_TSUMO] == 0:
        return ERR_HARD_AUTO
    if ph == PH_TURN and st.seat[to_act, SF_DECL] == DECL_NONE and ep[EP_DECLARE] != 0:
        # J-4.1 completeness: every discard leaving a single wait may be declared
        _legal_mask(st, ep)
        h = st.hands[to_act]
        for k in range(N_KINDS):
            if h[k] > 0 and st.mask[A_DISCARD + k]:
                h[k] -= 1
                ready = _shanten(h, joker, tabs) <= 0
                h[k] += 1
                single = ready and _winning_kinds_slow(st, tabs, to_act, k) == 1
                if single != (st.mask[A_DECLARE + k] != 0):
                    return ERR_MISSING
    n_legal = _legal_mask(st, ep)
    m = st.mask
    n_set = 0
    for a in range(N_ACTIONS):
        if m[a]:
            n_set += 1
            if not _action_ok(st, ep, rp, tabs, a):
                return ERR_MASK_ILLEGAL
    if n_set != n_legal:
        return ERR_MASK_LIST
    for i in range(n_legal):
        if m[st.legal[i]] == 0:
            return ERR_MASK_LIST
    if n_legal == 0:
        return ERR_EMPTY_MASK
    return 0


# ---------------------------------------------------------------------------
# the random action and the per-hand record (the batch loop: caishen.sim.selfplay)
# ---------------------------------------------------------------------------
@njit(cache=True)
def _random_action(st):
    """A uniformly random legal action of the seat to act (stream ``st.rng``); needs ``_legal_mask`` first."""
    return st.legal[_rng_below(st.rng, st.sc[SC_N_LEGAL])]


#: :func:`_legal_mask` and :func:`_step` compiled into their caller (numba IR
#: inlining) for the batch loop of :mod:`caishen.sim.selfplay`: two calls fewer per
#: action, about 10% of random self-play.  Same source; everything else calls
#: the plain kernels, so only that loop pays the longer compile.
_legal_mask_inlined = _inline_kernel(_legal_mask.py_func)
_step_inlined = _inline_kernel(_step.py_func)


#: record columns (records.md) in the order of the batch kernel's int64 matrix
RECORD_COLUMNS = (
    ("hand", np.int64),
    ("match_hand", np.int32),
    ("dealer", np.int8),
    ("winner", np.int8),
    ("winners_mask", np.uint8),
    ("win_type", np.int8),
    ("discarder", np.int8),
    ("exponent", np.int8),
    ("flags", np.int32),
    ("chain_len", np.int8),  # K-6.5 chain links the (first) winner's exponent counted (K-9.4, K-10)
    ("chain_piao", np.int8),  # ... of which 飘 links (0 unless counted: discard win, piao_requires_baotou)
    ("chain_kong", np.int8),  # ... of which kong links
    ("score_0", np.int32),
    ("score_1", np.int32),
    ("score_2", np.int32),
    ("score_3", np.int32),
    ("caishen_0", np.int8),
    ("caishen_1", np.int8),
    ("caishen_2", np.int8),
    ("caishen_3", np.int8),
    ("piao_0", np.int16),
    ("piao_1", np.int16),
    ("piao_2", np.int16),
    ("piao_3", np.int16),
    ("failed_piao_0", np.int8),
    ("failed_piao_1", np.int8),
    ("failed_piao_2", np.int8),
    ("failed_piao_3", np.int8),
    ("turns", np.int16),
    ("tiles_left", np.int16),
)
#: engine columns after RECORD_COLUMNS in the batch matrix: the J-9 facts the
#: engine knows (Jiating's records, ``caishen.sim.jiating_records``; filled for every rule set)
ENGINE_EXTRA_COLUMNS = (
    ("streak", np.int16),  # J-2.4 the dealer's streak k
    ("win_tile", np.int8),  # -1 on a draw
    ("first_turn", np.int8),  # the first winner won on the dealt tiles (天胡, J-5.4)
    ("replacement", np.int8),  # the first winner won on a kong replacement draw
    ("n_winners", np.int8),  # rows of the win-context block used
    *((f"decl_{s}", np.int8) for s in range(N_SEATS)),  # DECL_* (J-4.1, J-4.2)
    *((f"decl_turn_{s}", np.int16) for s in range(N_SEATS)),  # turns count of the declaring discard, -1
    *((f"hard_offer_{s}", np.int8) for s in range(N_SEATS)),  # 1 if offered 硬子 (J-4.2)
    *((f"passed_win_{s}", np.int16) for s in range(N_SEATS)),  # wins passed (J-3.5)
)
#: column name -> index in the batch matrix
RECORD_INDEX = {name: i for i, (name, _) in enumerate(RECORD_COLUMNS)}
EXTRA_OFFSET = len(RECORD_COLUMNS)
EXTRA_INDEX = {name: EXTRA_OFFSET + i for i, (name, _) in enumerate(ENGINE_EXTRA_COLUMNS)}
#: then MAX_WINNERS rows of the win context (``WX_*``, N_WX each), first winner first
WINS_OFFSET = EXTRA_OFFSET + len(ENGINE_EXTRA_COLUMNS)
#: width of the batch kernel's int64 matrix
N_RECORD = WINS_OFFSET + MAX_WINNERS * N_WX


@njit(cache=True)
def _write_record(st, ep, hand, row):
    """Fill ``row: int64[N_RECORD]`` with the finished hand's record (records.md),
    the engine's extra columns and the win contexts."""
    w = st.sc[SC_WINNER]
    row[0] = hand
    row[1] = st.sc[SC_MATCH_HAND]
    row[2] = st.sc[SC_DEALER]
    row[3] = w
    row[4] = st.sc[SC_WINNERS_MASK]
    row[5] = st.sc[SC_WIN_TYPE]
    row[6] = st.sc[SC_DISCARDER]
    row[7] = st.sc[SC_EXPONENT] if w >= 0 else 0
    row[8] = st.sc[SC_FLAGS] if w >= 0 else 0
    # K-9.4 / K-10: the chain links counted in the winning exponent (the win
    # kernel's answer), not the winner's live chain
    row[9] = st.seat[w, SF_WIN_PIAO] + st.seat[w, SF_WIN_KONG] if w >= 0 else 0
    row[10] = st.seat[w, SF_WIN_PIAO] if w >= 0 else 0
    row[11] = st.seat[w, SF_WIN_KONG] if w >= 0 else 0
    joker = ep[EP_JOKER]
    for s in range(N_SEATS):
        row[12 + s] = st.seat[s, SF_SCORE]
        row[16 + s] = st.hands[s, joker] if joker >= 0 else 0
        row[20 + s] = st.seat[s, SF_PIAO_COUNT]
        row[24 + s] = st.seat[s, SF_FAILED_PIAO]
    row[28] = st.sc[SC_TURNS]
    row[29] = _tiles_left(st)
    o = EXTRA_OFFSET
    n_wins = st.sc[SC_N_WINS] if w >= 0 else 0
    row[o] = st.sc[SC_STREAK]
    row[o + 1] = st.sc[SC_WIN_TILE] if w >= 0 else -1
    row[o + 2] = st.wins[0, WX_FIRST_TURN] if n_wins > 0 else 0
    row[o + 3] = st.wins[0, WX_REPLACEMENT] if n_wins > 0 else 0
    row[o + 4] = n_wins
    for s in range(N_SEATS):
        row[o + 5 + s] = st.seat[s, SF_DECL]
        row[o + 9 + s] = st.seat[s, SF_DECL_TURN]
        row[o + 13 + s] = st.seat[s, SF_HARD_OFFER]
        row[o + 17 + s] = st.seat[s, SF_N_PASSED_WIN]
    for j in range(MAX_WINNERS):
        for f in range(N_WX):
            row[WINS_OFFSET + j * N_WX + f] = st.wins[j, f] if j < n_wins else 0


@njit(cache=True)
def _next_dealer(ep, dealer, winners_mask):
    """K-3.3: a 流局 keeps the dealer; a win passes the deal on (or keeps it under winner_stays)."""
    if winners_mask == 0:
        return dealer
    if ep[EP_ROTATION] == ROTATION_WINNER_STAYS and (winners_mask >> dealer) & 1:
        return dealer
    return (dealer + 1) % N_SEATS


@njit(cache=True)
def _next_streak(dealer, next_dealer, streak):
    """J-2.4: the streak ``k`` of the next hand: one more when the dealer keeps the deal, else 0."""
    return streak + 1 if next_dealer == dealer else 0


#: rule sets whose wins are scored after the hand, in Python (``EP_ENGINE_PAYMENTS`` 0):
#: name -> ``"module:function"`` of ``function(rules, rec) -> dict[str, np.ndarray]``
RULESET_FINISH = {"jiating": "caishen.sim.jiating_records:finish_records"}


def batch_columns(name: str, rules, rec: np.ndarray) -> dict[str, np.ndarray]:
    """The per-hand record columns of a batch matrix ``rec: int64[n, N_RECORD]`` of rule set ``name``.

    Kaihua: the :data:`RECORD_COLUMNS` (records.md).  A rule set in
    :data:`RULESET_FINISH` (Jiating) scores its recorded wins in Python and
    returns its own columns (``caishen.sim.jiating_records.COLUMNS``, J-9).
    """
    fin = RULESET_FINISH.get(name)
    if fin is None:
        return {c: rec[:, i].astype(dt) for i, (c, dt) in enumerate(RECORD_COLUMNS)}
    import importlib

    module, function = fin.split(":")
    return getattr(importlib.import_module(module), function)(rules, rec)


# ---------------------------------------------------------------------------
# Python API: one game driven one action at a time
# ---------------------------------------------------------------------------
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
        raise ValueError(f"action name must be a str, got {name!r}")
    parts = name.split()
    if len(parts) == 2:
        for base, prefix in _KIND_ACTION_PREFIXES:
            if parts[0] == prefix:
                kinds = _tiles.parse_kinds(parts[1])
                if len(kinds) != 1:
                    raise ValueError(f"action {name!r}: expected one tile")
                return base + kinds[0]
    for a, n in _CLAIM_ACTION_NAMES.items():
        if name == n:
            return a
    raise ValueError(f"unknown action name {name!r}")


def _check_action_index(action) -> int:
    """An action index ``0 .. N_ACTIONS - 1`` (int or numpy integer; a bool is not an action)."""
    return _check_int("action", action, 0, N_ACTIONS - 1)


def _check_wall(wall) -> np.ndarray:
    """A wall as ``uint8[136]`` from 136 kind indices or an mpsz string; each kind exactly 4 times."""
    kinds = _tiles.parse_kinds(wall) if isinstance(wall, str) else list(wall)
    w = np.asarray(kinds)
    if w.shape != (N_TILES,):
        raise ValueError(f"wall must hold 136 tiles, got {w.size}")
    if w.dtype.kind not in "iu" or (w < 0).any() or (w >= N_KINDS).any():
        raise ValueError(f"wall must hold kind indices 0..33, got {w!r}")
    counts = np.bincount(w, minlength=N_KINDS)
    if (counts != 4).any():
        k = int(np.flatnonzero(counts != 4)[0])
        raise ValueError(f"wall holds {int(counts[k])} copies of {_tiles.kind_name(k)}, expected 4")
    return w.astype(np.uint8)


def build_wall(hands, draws: str = "", replacements: str = "", dealer: int = 0) -> np.ndarray:
    """A wall that deals given hands and draws given tiles (for tests and puzzles).

    ``hands``: four mpsz strings of 13 tiles, seat order 0..3.  ``draws``:
    the normal draws in order, starting with the dealer's 14th tile (K-3.1).
    ``replacements``: the kong replacement draws in order (from the tail,
    K-5.4).  The other tiles fill the middle of the wall in kind order.
    Returns ``uint8[136]``; raises ``ValueError`` if a hand is not 13 tiles,
    a kind is used more than 4 times, or ``dealer`` is not a seat 0..3.
    """
    if len(hands) != N_SEATS:
        raise ValueError(f"hands must give 4 seats' tiles, got {len(hands)}")
    dealer = _check_int("dealer", dealer, 0, N_SEATS - 1)
    wall = np.full(N_TILES, 255, np.int64)
    for i in range(N_SEATS):
        kinds = _tiles.parse_kinds(hands[(dealer + i) % N_SEATS])
        if len(kinds) != 13:
            raise ValueError(f"seat {(dealer + i) % N_SEATS}'s hand must be 13 tiles, got {len(kinds)}")
        wall[13 * i : 13 * i + 13] = kinds
    d = _tiles.parse_kinds(draws)
    r = _tiles.parse_kinds(replacements)
    if 52 + len(d) > N_TILES - len(r):
        raise ValueError("too many draws and replacements for one wall")
    wall[52 : 52 + len(d)] = d
    for j, k in enumerate(r):
        wall[N_TILES - 1 - j] = k
    used = np.bincount(wall[wall != 255], minlength=N_KINDS)
    if (used > 4).any():
        k = int(np.flatnonzero(used > 4)[0])
        raise ValueError(f"{_tiles.kind_name(k)} is used {int(used[k])} times")
    rest = [k for k in range(N_KINDS) for _ in range(4 - int(used[k]))]
    wall[wall == 255] = rest
    return wall.astype(np.uint8)


class Game:
    """One hand of mahjong driven one action at a time (a person, a test or an env).

    ``Game(rules="kaihua", options=None)``: ``rules`` a rule-set name or an
    options object, ``options`` a dict of rule options (validated; unknown
    names raise ``ValueError``).  Then :meth:`reset`, and :meth:`step` with
    actions from :meth:`legal_actions` until :attr:`done`; :attr:`result` is
    the hand's record (records.md).  Every hand is logged as events
    (:attr:`events`, :meth:`log_lines`) that :func:`replay` turns back into
    the same game.  :attr:`state` is the live ``STATE_DTYPE`` record.
    """

    def __init__(self, rules="kaihua", options=None):
        self.rules_name, self.rules = load_rules(rules, options)
        self._ep = engine_params(self.rules_name, self.rules)
        self._rp = self.rules.params()
        self._tabs = hand_tables()
        self._buf = new_state()
        self.state = self._buf[0]
        self.events: list[dict] = []
        self.seed = None
        self._started = False

    # -- setup -------------------------------------------------------------
    def reset(self, seed=None, dealer: int = 0, wall=None, match_hand: int = 0, streak: int = 0) -> "Game":
        """Deal a new hand.

        ``seed``: int in ``0 .. 2**32-1`` (the wall is shuffled with :mod:`caishen.sim.rng`
        seeded by it: the same wall as the first Kaihua hand of ``caishen.sim.selfplay.play_batch(seed=...)``)
        or None (fresh entropy).  ``wall``: a fixed wall instead (136 kinds or
        an mpsz string, e.g. from :func:`build_wall`).  ``dealer``: seat 0..3.
        ``streak``: the dealer's streak ``k`` (J-2.4; Jiating's payments use it),
        ``0 .. MAX_STREAK`` (32767, the record's int16 column).
        ``match_hand``: the hand's index in its match, ``0 .. MAX_MATCH_HAND``.
        Raises ``ValueError`` for a bad seed, dealer, match_hand, streak or
        wall (the integers must be ints or numpy integers, never bools).
        """
        dealer = _check_int("dealer", dealer, 0, N_SEATS - 1)
        match_hand = _check_int("match_hand", match_hand, 0, MAX_MATCH_HAND)
        streak = _check_int("streak", streak, 0, MAX_STREAK)
        if wall is not None:
            w = _check_wall(wall)
            self.state["wall"][:] = w
            self.seed = None if seed is None else self._check_seed(seed)
        else:
            if seed is None:
                seed = int(np.random.SeedSequence().generate_state(1)[0])
            self.seed = self._check_seed(seed)
            _seeded_wall(self.seed, self.state)
        _reset(self.state, self._ep, self._rp, self._tabs, int(dealer))
        self.state["sc"][SC_MATCH_HAND] = int(match_hand)
        self.state["sc"][SC_STREAK] = int(streak)
        self._started = True
        self.events = [
            {
                "event": "reset",
                "rules": self.rules_name,
                "options": self.rules.to_dict(),
                "seed": self.seed,
                "dealer": int(dealer),
                "match_hand": int(match_hand),
                "streak": int(streak),
                "wall": [int(k) for k in self.state["wall"]],
            }
        ]
        return self

    @staticmethod
    def _check_seed(seed) -> int:
        return _check_int("seed", seed, 0, 2**32 - 1)

    def _need_started(self):
        if not self._started:
            raise ValueError("call reset() before playing")

    # -- inspection ----------------------------------------------------------
    @property
    def done(self) -> bool:
        """True when the hand is over (a win or 流局)."""
        self._need_started()
        return int(self.state["sc"][SC_PHASE]) == PH_DONE

    @property
    def current_player(self) -> int:
        """Seat to act (0..3), -1 when the hand is over."""
        self._need_started()
        return int(self.state["sc"][SC_TO_ACT])

    @property
    def phase(self) -> str:
        """``'turn'``, ``'claim'``, ``'rob'`` or ``'done'``."""
        self._need_started()
        return PHASE_NAMES[int(self.state["sc"][SC_PHASE])]

    @property
    def tiles_left(self) -> int:
        self._need_started()
        return int(self.state["sc"][SC_TAIL] - self.state["sc"][SC_HEAD] + 1)

    def legal_mask(self) -> np.ndarray:
        """``bool[N_ACTIONS]``: the legal actions of :attr:`current_player` (all False when done)."""
        self._need_started()
        _legal_mask(self.state, self._ep)
        return self.state["mask"].astype(bool)

    def legal_actions(self) -> list[int]:
        """Sorted legal action indices of :attr:`current_player`."""
        return [int(a) for a in np.flatnonzero(self.legal_mask())]

    def step(self, action) -> "Game":
        """Apply ``action`` (an index or a name such as ``'discard 3m'``) of :attr:`current_player`.

        Raises ``ValueError`` naming the action if it is illegal now, the hand
        is over, or it is neither a name nor an integer index (a bool is not
        an action: ``step(True)`` raises).
        """
        self._need_started()
        a = parse_action(action) if isinstance(action, str) else _check_action_index(action)
        if self.done:
            raise ValueError(f"the hand is over; action {action_name(a)!r} ({a}) is not allowed")
        mask = self.legal_mask()
        if not mask[a]:
            legal = ", ".join(action_name(x) for x in np.flatnonzero(mask))
            raise ValueError(
                f"illegal action {action_name(a)!r} ({a}) for seat {self.current_player} "
                f"in phase {self.phase}; legal: {legal}"
            )
        seat = self.current_player
        _step(self.state, self._ep, self._rp, self._tabs, a)
        self.events.append({"event": "action", "seat": seat, "action": a, "name": action_name(a)})
        if self.done:
            self.events.append({"event": "result", **self.result})
        return self

    @property
    def result(self) -> dict | None:
        """The finished hand's record (the rule set's record columns as Python
        ints / str, see :func:`batch_columns`) plus ``next_dealer`` (K-3.3,
        J-2.3); None while the hand is running.  Jiating's wins are scored here
        by ``caishen.sim.rules.jiating`` (J-9 columns)."""
        if not self.done:
            return None
        row = np.zeros((1, N_RECORD), np.int64)
        _write_record(self.state, self._ep, 0, row[0])
        cols = batch_columns(self.rules_name, self.rules, row)
        out = {name: (str(v[0]) if v.dtype == object else int(v[0])) for name, v in cols.items() if name != "hand"}
        out["next_dealer"] = int(_next_dealer(self._ep, self.state["sc"][SC_DEALER], self.state["sc"][SC_WINNERS_MASK]))
        return out

    def check(self) -> None:
        """Run the invariant checker (:func:`check_state`); raises ``ValueError`` on a violation."""
        check_state(self)

    def observation(self, seat: int) -> dict:
        """What ``seat`` can see, as a dict of numpy arrays and ints.

        Hidden: the other seats' concealed tiles (only their counts are
        shown), the kind of their concealed kongs (K-5.3; ``meld_kind`` -1),
        the wall, their drawn tile and private flags.  Keys: ``seat``,
        ``dealer``, ``phase``, ``to_act``, ``tiles_left``, ``turns``,
        ``hand: uint8[34]``, ``drawn_tile`` (own, -1 none), ``hand_sizes:
        int8[4]``, ``meld_type / meld_kind: int8[4, 4]``, ``discards:
        int16[4, 64]`` (-1 padding), ``discard_claimed: bool[4, 64]``,
        ``n_discards: int16[4]``, ``pending_tile`` / ``pending_seat`` (the
        discard or added kong on offer, -1), ``chain: int16[4, 3]`` (each
        seat's live chain, K-6.5: length, 飘 links, kong links -- what a
        self-draw would have to build on, not what a win counted; the
        record's chain columns show that, K-10), ``piao_open: bool[4]``, ``piao_count:
        int16[4]``, ``n_chows: int8[4]``, ``passed_pong: bool[34]`` and
        ``swap_forbid`` (own), ``declarations: int8[4]`` (``DECL_*``, public:
        架听 and 硬子 are announced, J-4), ``passed_win`` (own, J-3.5),
        ``scores: int64[4]``, ``legal_mask:
        bool[N_ACTIONS]`` (all False unless ``seat`` is to act).
        Raises ``ValueError`` for a seat that is not an integer 0..3 (a bool included).
        """
        self._need_started()
        seat = _check_int("seat", seat, 0, N_SEATS - 1)
        st = self.state
        sc = st["sc"]
        sf = st["seat"]
        n_melds = sf[:, SF_N_MELDS]
        hand_sizes = st["hands"].sum(axis=1).astype(np.int8)
        meld_type = st["meld_type"].copy()
        meld_kind = st["meld_kind"].copy()
        meld_kind[meld_type == MELD_NONE] = -1
        for p in range(N_SEATS):
            if p != seat:
                meld_kind[p][meld_type[p] == MELD_KONG_CONCEALED] = -1  # K-5.3
        nd = sf[:, SF_N_DISCARDS]
        discards = np.full((N_SEATS, MAX_DISCARDS), -1, np.int16)
        claimed = np.zeros((N_SEATS, MAX_DISCARDS), bool)
        for p in range(N_SEATS):
            discards[p, : nd[p]] = st["discards"][p, : nd[p]]
            claimed[p, : nd[p]] = (st["dflags"][p, : nd[p]] & DF_CLAIMED) != 0
        acting = int(sc[SC_TO_ACT]) == seat
        own_turn = acting and int(sc[SC_PHASE]) == PH_TURN
        passed = int(sf[seat, SF_PASSED_PONG])
        return {
            "seat": int(seat),
            "dealer": int(sc[SC_DEALER]),
            "phase": int(sc[SC_PHASE]),
            "to_act": int(sc[SC_TO_ACT]),
            "tiles_left": self.tiles_left,
            "turns": int(sc[SC_TURNS]),
            "hand": st["hands"][seat].copy(),
            "drawn_tile": int(sc[SC_DRAWN]) if own_turn else -1,
            "hand_sizes": hand_sizes,
            "meld_type": meld_type,
            "meld_kind": meld_kind,
            "discards": discards,
            "discard_claimed": claimed,
            "n_discards": nd.astype(np.int16),
            "pending_tile": int(sc[SC_TILE]),
            "pending_seat": int(sc[SC_SRC]),
            "chain": sf[:, [SF_CHAIN_LEN, SF_CHAIN_PIAO, SF_CHAIN_KONG]].astype(np.int16),
            "piao_open": sf[:, SF_PIAO_OPEN] != 0,
            "piao_count": sf[:, SF_PIAO_COUNT].astype(np.int16),
            "n_chows": sf[:, SF_N_CHOWS].astype(np.int8),
            "n_melds": n_melds.astype(np.int8),
            "passed_pong": np.array([(passed >> k) & 1 for k in range(N_KINDS)], bool),
            "declarations": sf[:, SF_DECL].astype(np.int8),
            "passed_win": bool(sf[seat, SF_PASSED_WIN]),
            "swap_forbid": int(sf[seat, SF_SWAP_FORBID]),
            "scores": sf[:, SF_SCORE].copy(),
            "legal_mask": self.legal_mask() if acting else np.zeros(N_ACTIONS, bool),
        }

    # -- event log -----------------------------------------------------------
    def log_lines(self) -> list[str]:
        """The hand's events as JSON lines (reset with the wall, every action, the result)."""
        return [json.dumps(e, ensure_ascii=False) for e in self.events]

    def write_log(self, path) -> None:
        """Write :meth:`log_lines` to ``path`` (one JSON object per line)."""
        with open(path, "w", encoding="utf-8") as f:
            for line in self.log_lines():
                f.write(line + "\n")


def replay(lines) -> Game:
    """Rebuild a :class:`Game` from its event log (JSON strings or dicts, as :meth:`Game.log_lines`).

    Replays the recorded wall and actions; raises ``ValueError`` if the log
    is malformed, an action is illegal or made by the wrong seat, or the
    replayed result differs from a recorded one.
    """
    events = [json.loads(x) if isinstance(x, str) else dict(x) for x in lines if not (isinstance(x, str) and not x.strip())]
    if not events or events[0].get("event") != "reset":
        raise ValueError("an event log must start with a 'reset' event")
    r = events[0]
    g = Game(r["rules"], r.get("options"))
    g.reset(seed=r.get("seed"), dealer=r["dealer"], wall=r["wall"], match_hand=r.get("match_hand", 0),
            streak=r.get("streak", 0))
    for i, e in enumerate(events[1:], start=1):
        if e.get("event") == "action":
            if e["seat"] != g.current_player:
                raise ValueError(f"event {i}: seat {e['seat']} acts but seat {g.current_player} is to act")
            g.step(e["action"])
        elif e.get("event") == "result":
            got = g.result
            want = {k: v for k, v in e.items() if k != "event"}
            if got != want:
                raise ValueError(f"event {i}: replayed result {got} differs from the recorded {want}")
        else:
            raise ValueError(f"event {i}: unknown event {e.get('event')!r}")
    return g


def legal_mask(game: Game) -> np.ndarray:
    """``bool[N_ACTIONS]``: the legal actions of the seat to act in ``game`` (all False when done).

    Same as :meth:`Game.legal_mask`; raises ``ValueError`` for a non-Game or an unstarted game.
    """
    if not isinstance(game, Game):
        raise ValueError(f"legal_mask expects a Game, got {type(game).__name__}")
    return game.legal_mask()


def check_state(game: Game, observations: bool = False) -> None:
    """Check a game's invariants; raises ``ValueError`` naming the violated one.

    Always (compiled, :func:`_check_state`): 136 tiles conserved (wall
    remainder + hands + melds + unclaimed discards), no kind over 4, no joker
    in a meld (K-2.3), hand sizes, the seat to act, a non-empty mask whose
    every action is legal by an independent restatement of the rules, the
    legal list agreeing with the mask, scores summing to zero (K-8.5), the
    wall pointers above the reserve (K-3.4).  With ``observations=True`` also
    that no seat's observation depends on what it cannot see: every seat's
    observation is unchanged when the tiles hidden from it (the live wall and
    the other concealed hands) are dealt out again at random, and other
    seats' concealed kong kinds and drawn tiles are hidden (K-5.3).
    """
    if not isinstance(game, Game):
        raise ValueError(f"check_state expects a Game, got {type(game).__name__}")
    game._need_started()
    err = _check_state(game.state, game._ep, game._rp, game._tabs)
    if err != 0:
        raise ValueError(f"state check failed: {ERR_MESSAGES[err]}")
    if observations:
        _check_observations(game)


def _hidden_twin(game: Game, seat: int, rng: np.random.Generator) -> Game:
    """A copy of ``game`` whose tiles hidden from ``seat`` are redistributed at random."""
    twin = Game(game.rules_name, game.rules.to_dict())
    twin._buf[0] = game.state
    twin._started = True
    st = twin.state
    head, tail = int(st["sc"][SC_HEAD]), int(st["sc"][SC_TAIL])
    pool = [int(k) for k in st["wall"][head:tail + 1]]
    others = [p for p in range(N_SEATS) if p != seat]
    sizes = [int(st["hands"][p].sum()) for p in others]
    for p in others:
        pool += [k for k in range(N_KINDS) for _ in range(int(st["hands"][p, k]))]
    pool = [int(k) for k in rng.permutation(pool)]
    for p, n in zip(others, sizes):
        st["hands"][p] = np.bincount(pool[:n], minlength=N_KINDS)
        pool = pool[n:]
    st["wall"][head:tail + 1] = pool
    return twin


def _check_observations(game: Game) -> None:
    rng = np.random.default_rng(int(game.state["sc"][SC_STEPS]))
    st = game.state
    for seat in range(N_SEATS):
        obs = game.observation(seat)
        if not np.array_equal(obs["hand"], st["hands"][seat]):
            raise ValueError(f"state check failed: seat {seat}'s observation does not show its own hand")
        for p in range(N_SEATS):
            hidden = obs["meld_kind"][p][obs["meld_type"][p] == MELD_KONG_CONCEALED]
            if p != seat and (hidden != -1).any():
                raise ValueError(f"state check failed: seat {seat} sees seat {p}'s concealed kong kind (K-5.3)")
        if obs["drawn_tile"] >= 0 and not (obs["to_act"] == seat and obs["phase"] == PH_TURN):
            raise ValueError(f"state check failed: seat {seat} sees a drawn tile that is not its own")
        twin = _hidden_twin(game, seat, rng)
        other = twin.observation(seat)
        for key in obs:
            if not np.array_equal(obs[key], other[key]):
                raise ValueError(
                    f"state check failed: seat {seat}'s observation {key!r} depends on tiles hidden from it"
                )
