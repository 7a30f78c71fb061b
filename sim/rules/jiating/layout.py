"""The numbers Jiating's kernels share: params layout, codes, win types, declarations, bounds, workspace.

- ``P_*``: the slots of ``JiatingRules.params()`` (``int64[N_PARAMS]``), the
  options as the kernels read them; ``PONG_SCOPE_*`` (J-3.6) and ``DIHU_*``
  (P47) codes.
- ``WIN_*``: the win types (the engine's codes); ``DECL_*``: the
  declarations (架听 J-4.1, 硬子 J-4.2; the engine's codes).
- ``MAX_*``: the bounds on the integers that enter (the package docstring:
  every score of a hand below ``2**53``).
- The scoring workspace of :mod:`caishen.sim.rules.jiating.kernels`
  (:func:`new_work`: ``int64[N_WORK_ROWS, WORK_WIDTH]``): its rows ``W_*``,
  the best view's ``M_*`` entries, the win context ``C_*``, the group types
  ``G_*`` of a reading (a group's source is ``SRC_HAND`` or its
  ``caishen.sim.tiles.MELD_*`` code).
"""

from __future__ import annotations

import numpy as np

from caishen.sim.tiles import MELD_NONE


P_RESERVED_TILES = 0  #: J-1.2 tiles never drawn
P_PASSED_PONG_SCOPE = 1  #: J-3.6, one of PONG_SCOPE_*
P_DEALER_FACTOR = 2  #: J-6.2
P_DEALER_CAP = 3  #: J-6.2, -1 = none
P_CAP = 4  #: J-6.2, -1 = none
P_STREAK_STEP = 5  #: J-6.4
P_DIHU = 6  #: P47, one of DIHU_*
P_KONG_EXPOSED_POINTS = 7  #: J-6.1 per exposed or added kong
P_KONG_CONCEALED_POINTS = 8  #: J-6.1 per concealed kong
P_BONUS_DISCARD = 9  #: J-6.4 non-dealer discarder to non-dealer winner
P_BONUS_DISCARD_DEALER = 10  #: J-6.4 discard win with the dealer on either side
P_BONUS_SELF_DRAW = 11  #: J-6.4 each other non-dealer on a non-dealer's self-draw
P_BONUS_SELF_DRAW_DEALER = 12  #: J-6.4 the dealer paying or winning a self-draw
P_CONCEALED_FACTOR = 13  #: J-6.3 factor of an own witness
N_PARAMS = 14

PONG_SCOPE_SAME_KIND = 0
PONG_SCOPE_ANY = 1
PONG_SCOPE_CODES = {"same_kind": PONG_SCOPE_SAME_KIND, "any": PONG_SCOPE_ANY}
DIHU_DEALER_READY = 0
DIHU_DEALERS_FIRST_DISCARD = 1
DIHU_DEALER_READY_UNDECLARED = 2
DIHU_CODES = {"dealer_ready_first_discard": DIHU_DEALER_READY,
              "win_on_dealers_first_discard": DIHU_DEALERS_FIRST_DISCARD,
              "dealer_ready_undeclared": DIHU_DEALER_READY_UNDECLARED}

from caishen.sim.rules.codes import WIN_DISCARD, WIN_ROBBED_KONG, WIN_SELF_DRAW, WIN_TYPES  # noqa: E402,F401

#: bounds on the integers that enter (module docstring; every score of a hand below 2**53)
MAX_STREAK = 10**6  #: J-2.4 streak k of a case or payment
MAX_POINTS_OPTION = 10**6  #: pattern points, kong points, bonuses, streak_step
MAX_FACTOR = 100  #: dealer_factor, concealed_factor
MAX_HAND_POINTS = 10**12  #: P and G given to payment() / settle_*()

N_PATTERN_SLOTS = 51  # index 0 unused

N_KINDS = 34
#: declarations: the engine's ``DECL_*`` codes (tests/test_jiating_kernels.py checks they agree)
DECL_NONE = 0
DECL_READY = 1
DECL_HARD = 2
DECLARATION_CODES = {"none": DECL_NONE, "jiating": DECL_READY, "hard": DECL_HARD}

#: group types of a view
G_PAIR = 0
G_RUN = 1
G_TRIPLET = 2
GROUP_TYPE_NAMES = {G_PAIR: "pair", G_RUN: "run", G_TRIPLET: "triplet"}
#: group source: concealed tiles in hand; melds use their ``caishen.sim.tiles.MELD_*`` code
SRC_HAND = MELD_NONE
MAX_GROUPS = 8  # 7 pairs, or a pair and 4 sets

WORK_WIDTH = 64
W_HAND = 0  #: the concealed tiles before the win
W_COUNTS = 1  #: concealed tiles with the winning tile
W_OWN = 2  #: copies held in hand and melds before the win (D3, P27)
W_DRAW = 3  #: shanten after drawing each kind (waits)
W_REM = 4  #: tiles left while a reading is built
W_GT = 5  #: group types of the current reading (``G_*``)
W_GK = 6  #: group kinds (lowest kind of a run)
W_GS = 7  #: group sources (``SRC_HAND`` or ``MELD_*``)
W_VALS = 8  #: pattern values of the current view (index = pattern number)
W_BEST = 9  #: pattern values of the best view
W_BGT = 10  #: the best view's group types
W_BGK = 11  #: ... kinds
W_BGS = 12  #: ... sources
W_META = 13  #: the best view: [M_STANDARD, M_NG, M_WAIT, M_P]
W_RUNS = 14  #: runs starting at each kind
W_OWN_RUNS = 15  #: own runs starting at each kind
W_TRIP = 16  #: index of the triplet of each kind, -1 none
W_CTX = 17  #: the win's context (``C_*``)
W_TMP = 18  #: scratch: patterns removed by J-7
W_HIT = 19  #: the patterns that hold in the current view
W_OWNW = 20  #: ... and have an own witness (J-6.3)
W_GOWN = 21  #: own groups of the current view (D1)
W_MELDS = 22  #: the winner's melds: types at 0..3, kinds at 4..7
N_WORK_ROWS = 23
M_STANDARD = 0
M_NG = 1
M_WAIT = 2
M_P = 3

# the win context, row W_CTX
C_WIN_KIND = 0
C_SELF_DRAW = 1
C_WIN_TYPE = 2
C_DECL = 3
C_FIRST_TURN = 4
C_DEALER_WINS = 5
C_ON_FIRST = 6
C_REPLACEMENT = 7
C_N_WAITS = 8
C_WAIT_KIND = 9
C_SEEN = 10
C_N_MELDS = 11
C_DEALER_READY = 12  #: the dealer was ready right after its first discard (P47, dihu="dealer_ready_undeclared")


def new_work() -> np.ndarray:
    """A zeroed workspace for the kernels: ``int64[N_WORK_ROWS, WORK_WIDTH]``."""
    return np.zeros((N_WORK_ROWS, WORK_WIDTH), np.int64)
