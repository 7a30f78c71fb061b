"""Jiating (架听) scoring as numba kernels: readings, waits, the fifty patterns, J-7, J-6.3, ``G``.

What :func:`caishen.sim.rules.jiating.evaluate` does in Python (binding spec
``shared/rules/jiating.md``), done in compiled code so that a Jiating win
costs no Python: the batch of recorded wins of a self-play call
(:mod:`caishen.sim.jiating_batch`) and, later, the engine's self-play loop call
:func:`_score_win` once per win.  Decisions D1..D12 are those of
:mod:`caishen.sim.rules.jiating`; the pattern definitions are those of
:mod:`caishen.sim.rules.jiating_patterns` (one predicate per pattern, witnesses).

How one win is scored (:func:`_score_win`)
-------------------------------------------
1. The concealed tiles before the win plus the winning tile are read every
   way (J-5.1, J-5.3): a *standard* reading is a pair and sets, found for
   each kind that can be the pair by walking the kinds in order -- the
   lowest kind left with ``c`` tiles is either ``c`` runs starting there
   or a triplet and ``c - 3`` runs, so each reading is produced once (the
   triplet-or-not choices are the bits of a small mask).  A 14-tile hand
   whose counts are all even is also read as seven pairs (a four of a kind
   is two pairs).  Declared melds are added as triplets (a kong is a
   triplet with a kong source).
2. Each reading gives one *view* per distinct group (type, kind) of the
   concealed groups that holds the winning tile: that group is the wait
   (J-5.3).  A group is the winner's own (J-6.3, D1, D12) when it is
   concealed (in hand or a concealed kong) and, being the wait, the tile was
   self-drawn.
3. :func:`_view_values` evaluates the fifty patterns of a view as the
   predicates do, keeping only what the score needs: whether the pattern
   holds and whether one of its witnesses is own (a doubled pattern is
   multiplied by ``concealed_factor`` then); P11 and P16 count per witness
   (D2).  A pattern with 0 points is off (D5).
4. :func:`_exclude` removes what J-7 excludes among the patterns that hold
   (D5) and sums ``P``.
5. The best view wins: highest ``P``, ties broken towards the
   lexicographically largest sorted ``(pattern ID, points)`` list (D6, the
   Python scorer's key), so the answer does not depend on enumeration order.
6. The waits before the win (D3: kinds completing the 13 - 3m concealed
   tiles, minus kinds whose four copies the winner holds in hand and melds;
   P02, P27, P28) are :func:`caishen.sim.rules.jiating_turn._n_waits`, the kernel
   the engine's 架听 test uses, so a hand that may declare 架听 is exactly a
   hand scored as a single wait.

``G`` (J-6.1) is the winner's kong points; payments (J-6.2, J-6.4, J-6.5)
are :func:`caishen.sim.rules.jiating._payments`, called by the caller per winner.

Rule tables are arguments, never module globals: ``params =
JiatingRules.params()`` (``int64[N_PARAMS]``) and ``pattern_tables()``:
``points: int64[51]``, ``doubled: bool[51]``, ``excludes: bool[51, 51]``
(index = pattern number, 0 unused); ``tabs = caishen.sim.tables.hand_tables()``.
Kernels allocate nothing: the caller passes ``work = new_work()``
(``int64[N_WORK_ROWS, WORK_WIDTH]``, rows ``W_*``) and reuses it.

Public face: :func:`score_win` (one win given as Python values, validated,
``ValueError`` naming a bad value) and :func:`check_context_code` /
:data:`ERR_MESSAGES` for the input checks the kernels share.

Compile time: the inner kernels have one explicit signature each and are
compiled (or loaded from numba's cache) when the module is imported; none is
``inline="always"``.  A cold cache costs about 7 s CPU at import and 9 s at
the first :func:`_score_win` call (5 s of it the wait kernel, shared with the
engine's compiled copy); a warm one about 0.5 s
(``benchmarks/bench_jiating_score.py``).
"""

from __future__ import annotations

import functools
from typing import NamedTuple, Sequence

import numpy as np
from numba import njit

from caishen.sim.rules.jiating import (
    DEFAULT_RULES,
    DIHU_DEALER_READY,
    N_PATTERN_SLOTS,
    P_CONCEALED_FACTOR,
    P_DIHU,
    P_KONG_CONCEALED_POINTS,
    P_KONG_EXPOSED_POINTS,
    PATTERN_IDS,
    WIN_DISCARD,
    WIN_ROBBED_KONG,
    WIN_SELF_DRAW,
    WIN_TYPES,
    JiatingRules,
    _payments,
)
from caishen.sim.rules.jiating_turn import _n_waits
from caishen.sim.tables import hand_tables
from caishen.sim.tiles import (
    MELD_KONG_ADDED,
    MELD_KONG_CONCEALED,
    MELD_KONG_EXPOSED,
    MELD_NONE,
    MELD_PONG,
    MELD_TYPE_NAMES,
    MELD_TYPES,
)

__all__ = [
    "score_win", "KernelWin", "ScoredGroup", "kernel_tables", "new_work", "check_context_code", "ERR_MESSAGES",
    "DECL_NONE", "DECL_JIATING", "DECL_HARD", "DECLARATION_CODES",
]

N_KINDS = 34
#: declarations: the engine's ``DECL_*`` codes (tests/test_jiating_kernels.py checks they agree)
DECL_NONE = 0
DECL_JIATING = 1
DECL_HARD = 2
DECLARATION_CODES = {"none": DECL_NONE, "jiating": DECL_JIATING, "hard": DECL_HARD}

#: group types of a view
G_PAIR = 0
G_RUN = 1
G_TRIPLET = 2
GROUP_TYPE_NAMES = {G_PAIR: "pair", G_RUN: "run", G_TRIPLET: "triplet"}
#: group source: concealed tiles in hand; melds use their ``caishen.sim.tiles.MELD_*`` code
SRC_HAND = MELD_NONE
MAX_GROUPS = 8  # 7 pairs, or a pair and 4 sets

# ---------------------------------------------------------------- workspace
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

# ---------------------------------------------------------------- input checks
ERR_OK = 0
ERR_SEAT = 1
ERR_WIN_TYPE = 2
ERR_DISCARDER = 3
ERR_DECLARATION = 4
ERR_MELDS = 5
ERR_WIN_KIND = 6
ERR_TILE_COUNT = 7
ERR_FIVE_COPIES = 8
ERR_REPLACEMENT = 9
ERR_FIRST_TURN = 10
ERR_ON_FIRST = 11
ERR_STREAK = 12
ERR_VISIBLE = 13
#: code -> what is wrong with a win context (the rule IDs of caishen.sim.rules.jiating's case checks)
ERR_MESSAGES = {
    ERR_SEAT: "dealer and winner must be seats 0..3",
    ERR_WIN_TYPE: "win_type must be self_draw, discard or robbed_kong",
    ERR_DISCARDER: "the discarder must be a seat other than the winner (none on a self-draw)",
    ERR_DECLARATION: "declaration must be none, jiating or hard",
    ERR_MELDS: "melds must be at most 4 pongs or kongs (J-3.1: no chow)",
    ERR_WIN_KIND: "the winning tile must be a kind 0..33",
    ERR_TILE_COUNT: "the concealed tiles before the win must number 13 - 3 * melds, each count 0..4",
    ERR_FIVE_COPIES: "more than four copies of a kind among hand, melds, winning tile and visible tiles",
    ERR_REPLACEMENT: "replacement_draw (J-3.2) needs a self-draw by a winner with a kong",
    ERR_FIRST_TURN: "first_turn (天胡, J-5.4) needs the dealer winning by self-draw on the dealt tiles",
    ERR_ON_FIRST: "on_dealers_first_discard needs a discard win on a tile the dealer discarded",
    ERR_STREAK: "streak must be >= 0",
    ERR_VISIBLE: "visible copies of the winning kind must be 0..3",
}


def new_work() -> np.ndarray:
    """A zeroed workspace for the kernels: ``int64[N_WORK_ROWS, WORK_WIDTH]``."""
    return np.zeros((N_WORK_ROWS, WORK_WIDTH), np.int64)


def kernel_tables(rules: JiatingRules | None = None) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """``(params, points, doubled, excludes)`` of ``rules`` (default: the spec's) for the kernels.

    ``JiatingRules.params()`` and ``pattern_tables()``, built once per rule
    set and shared (the kernels only read them; do not modify them).
    Raises ``ValueError`` if ``rules`` is not a ``JiatingRules``.
    """
    r = rules or DEFAULT_RULES
    if not isinstance(r, JiatingRules):
        raise ValueError(f"rules must be a JiatingRules, got {type(r).__name__}")
    return _tables_of(r)


@functools.lru_cache(maxsize=32)
def _tables_of(r: JiatingRules) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    points, doubled, excludes = r.pattern_tables()
    return r.params(), points, doubled, excludes


# ---------------------------------------------------------------- kernels
# The inner kernels have one explicit signature each (compiled when the module
# is imported, or loaded from numba's cache): numba would otherwise compile a
# copy for every literal argument type met while typing a caller (e.g.
# ``standard=Literal[int](1)``), which multiplied the cold compile time.
_I64_1D = "int64[::1]"
_SIG_VIEW = f"void(int64, int64, int64, {_I64_1D}, {_I64_1D}, boolean[::1], int64[:, ::1])"
_SIG_EXCLUDE = f"int64({_I64_1D}, boolean[:, ::1], {_I64_1D})"
_SIG_KEY = f"boolean(int64, {_I64_1D}, int64, {_I64_1D})"
_SIG_READING = (f"boolean(int64, int64, int64, {_I64_1D}, {_I64_1D}, boolean[::1], boolean[:, ::1], "
                "int64[:, ::1], boolean)")
_SIG_PREPARED = f"UniTuple(int64, 2)({_I64_1D}, {_I64_1D}, boolean[::1], boolean[:, ::1], int64[:, ::1])"


@njit(cache=True)
def _check_context(hand, win_kind, win_type, discarder, winner, dealer, streak, decl, first_turn,
                   replacement, on_first, visible, n_melds, meld_type, meld_kind):
    """``ERR_*`` code of one win context (0 = consistent); the case checks of ``caishen.sim.rules.jiating``.

    ``hand``: int array[34], concealed tiles before the win; ``visible``:
    copies of the winning kind seen outside the winner's hand and melds.
    Legality of the win itself (J-5.1) is not checked here.
    """
    if winner < 0 or winner > 3 or dealer < 0 or dealer > 3:
        return ERR_SEAT
    if win_type != WIN_SELF_DRAW and win_type != WIN_DISCARD and win_type != WIN_ROBBED_KONG:
        return ERR_WIN_TYPE
    if win_type == WIN_SELF_DRAW:
        if discarder != -1:
            return ERR_DISCARDER
    elif discarder < 0 or discarder > 3 or discarder == winner:
        return ERR_DISCARDER
    if streak < 0:
        return ERR_STREAK
    if decl != DECL_NONE and decl != DECL_JIATING and decl != DECL_HARD:
        return ERR_DECLARATION
    if n_melds < 0 or n_melds > 4:
        return ERR_MELDS
    has_kong = False
    for i in range(n_melds):
        t = meld_type[i]
        if t != MELD_PONG and t != MELD_KONG_EXPOSED and t != MELD_KONG_ADDED and t != MELD_KONG_CONCEALED:
            return ERR_MELDS
        if meld_kind[i] < 0 or meld_kind[i] >= N_KINDS:
            return ERR_MELDS
        if t != MELD_PONG:
            has_kong = True
    if win_kind < 0 or win_kind >= N_KINDS:
        return ERR_WIN_KIND
    n = 0
    for k in range(N_KINDS):
        c = hand[k]
        if c < 0 or c > 4:
            return ERR_TILE_COUNT
        n += c
    if n != 13 - 3 * n_melds:
        return ERR_TILE_COUNT
    if visible < 0 or visible > 3:
        return ERR_VISIBLE
    for k in range(N_KINDS):
        c = hand[k]
        for i in range(n_melds):
            if meld_kind[i] == k:
                c += 3 if meld_type[i] == MELD_PONG else 4
        if k == win_kind:
            c += 1 + visible
        if c > 4:
            return ERR_FIVE_COPIES
    if replacement != 0 and (win_type != WIN_SELF_DRAW or not has_kong):
        return ERR_REPLACEMENT
    if first_turn != 0 and (winner != dealer or win_type != WIN_SELF_DRAW or n_melds > 0 or replacement != 0):
        return ERR_FIRST_TURN
    if on_first != 0 and (discarder != dealer or win_type != WIN_DISCARD):
        return ERR_ON_FIRST
    return ERR_OK


@njit(_SIG_VIEW, cache=True)
def _view_values(standard, ng, wait, params, points, doubled, work):
    """Fill row ``W_VALS`` of ``work`` with each pattern's points in one view, before J-7.

    The view: the reading in rows ``W_GT``/``W_GK``/``W_GS`` (type, kind,
    source of groups ``0..ng-1``; ``standard`` 1: the pair is group 0, 0:
    seven pairs), ``wait``: the group the winning tile completes, the win's
    context in row ``W_CTX``.  A pattern that holds (row ``W_HIT``) gets its
    points, times ``concealed_factor`` when it is doubled and one of its
    witnesses is own (row ``W_OWNW``; J-6.3, D1); P11 and P16 sum their
    witnesses (D2); 0 = does not hold or is off (points 0, D5).  Scratch
    rows: ``W_GOWN``, ``W_RUNS``, ``W_OWN_RUNS``, ``W_TRIP``.
    """
    gt = work[W_GT]
    gk = work[W_GK]
    gs = work[W_GS]
    ctx = work[W_CTX]
    vals = work[W_VALS]
    hit = work[W_HIT]
    ownw = work[W_OWNW]
    gown = work[W_GOWN]
    runs_at = work[W_RUNS]
    own_runs_at = work[W_OWN_RUNS]
    trip_at = work[W_TRIP]
    f = params[P_CONCEALED_FACTOR]
    win_kind = ctx[C_WIN_KIND]
    self_draw = ctx[C_SELF_DRAW] != 0
    decl = ctx[C_DECL]
    single = ctx[C_N_WAITS] == 1
    for k in range(N_KINDS):
        runs_at[k] = 0
        own_runs_at[k] = 0
        trip_at[k] = -1
    for p in range(N_PATTERN_SLOTS):
        vals[p] = 0
        hit[p] = 0
        ownw[p] = 0

    # per group: own (D1, D12), suits, honors, runs and triplets by kind
    all_own = 1
    suits = 0
    honors = False
    claimed = False
    n_trip = 0
    n_lz = 0  # P11 老资格: triplets whose tiles are all the winner's own draws
    n_pong = 0
    t_m = 0  # triplets per suit, and own ones
    t_p = 0
    t_s = 0
    o_m = 0
    o_p = 0
    o_s = 0
    n_wind = 0  # wind triplets (P22), own ones
    o_wind = 0
    n_xsx = 0  # triplets among 东 南 西 北 中 (P45), own ones
    o_xsx = 0
    for i in range(ng):
        src = gs[i]
        own = 1 if ((src == SRC_HAND or src == MELD_KONG_CONCEALED) and (self_draw or i != wait)) else 0
        gown[i] = own
        if own == 0:
            all_own = 0
        if src == MELD_PONG or src == MELD_KONG_EXPOSED or src == MELD_KONG_ADDED:
            claimed = True
        k = gk[i]
        if k >= 27:
            honors = True
        else:
            suits |= 1 << (k // 9)
        if gt[i] == G_RUN:
            runs_at[k] += 1
            own_runs_at[k] += own
        elif gt[i] == G_TRIPLET:
            n_trip += 1
            trip_at[k] = i
            n_lz += own
            if src == MELD_PONG:
                n_pong += 1
            if k < 9:
                t_m += 1
                o_m += own
            elif k < 18:
                t_p += 1
                o_p += own
            elif k < 27:
                t_s += 1
                o_s += own
            else:
                if k <= 30:
                    n_wind += 1
                    o_wind += own
                if k <= 30 or k == 33:
                    n_xsx += 1
                    o_xsx += own
    n_suits = (suits & 1) + ((suits >> 1) & 1) + ((suits >> 2) & 1)
    wait_own = gown[wait]

    # patterns whose witness is the win itself (always own): P01 P02 P03 P06 P07 P14 P18 P19 ...
    hit[1] = 1
    hit[2] = 1 if decl != DECL_NONE and single else 0
    hit[3] = 1 if self_draw else 0
    hit[6] = 1 if n_suits == 2 else 0
    hit[7] = 0 if claimed else 1
    hit[14] = 1 if self_draw and not claimed else 0
    hit[18] = 1 if self_draw and ctx[C_REPLACEMENT] != 0 else 0
    hit[19] = 1 if ctx[C_WIN_TYPE] == WIN_ROBBED_KONG else 0
    hit[28] = 1 if self_draw and single and ctx[C_WAIT_KIND] == 3 and win_kind == 3 else 0
    hit[29] = 1 if ctx[C_N_MELDS] == 4 else 0
    hit[32] = 1 if n_lz >= 3 else 0
    hit[37] = 1 if n_lz >= 4 else 0
    hit[40] = 1 if standard != 0 and n_pong == 4 else 0
    dealer_wins = ctx[C_DEALER_WINS] != 0
    hit[46] = 1 if ctx[C_FIRST_TURN] != 0 and dealer_wins else 0
    if params[P_DIHU] == DIHU_DEALER_READY:
        hit[47] = 1 if dealer_wins and decl == DECL_HARD else 0
    else:
        hit[47] = 1 if not dealer_wins and ctx[C_WIN_TYPE] == WIN_DISCARD and ctx[C_ON_FIRST] != 0 else 0
    hit[48] = 1 if suits == 0 else 0
    hit[49] = 1 if standard != 0 and n_lz == 4 and wait == 0 and self_draw else 0
    for p in (1, 2, 3, 6, 7, 14, 18, 19, 28, 29, 32, 37, 40, 46, 47, 48, 49):
        ownw[p] = 1

    # the wait's group: P04 边三七, P05 中心五, P27 绝张子
    if gt[wait] == G_RUN:
        wk = gk[wait]
        r = wk % 9 + 1
        w = win_kind % 9 + 1
        hit[4] = 1 if (r == 1 and w == 3) or (r == 7 and w == 7) else 0
        hit[5] = 1 if r == 4 and win_kind == wk + 1 else 0
    hit[27] = 1 if single and ctx[C_WAIT_KIND] == win_kind and ctx[C_SEEN] == 3 else 0
    ownw[4] = wait_own
    ownw[5] = wait_own
    ownw[27] = wait_own

    # runs: P08 P09 P10 P12 P13 P15 P26 P31 (P16 below)
    five_suits = 0  # suits with a run holding a 5 (P13), and with an own one
    own_five_suits = 0
    n_five = 0  # runs holding a 5 (P26), and own ones
    o_five = 0
    for s in range(3):
        b = 9 * s
        nr = 0
        onr = 0
        for r in range(7):
            k = b + r
            nr += runs_at[k]
            onr += own_runs_at[k]
            if r <= 3:
                if runs_at[k] > 0 and runs_at[k + 3] > 0:
                    hit[8] = 1
                if own_runs_at[k] > 0 and own_runs_at[k + 3] > 0:
                    ownw[8] = 1
            if 2 <= r <= 4:  # a run starting at rank 3, 4 or 5 holds the 5
                n_five += runs_at[k]
                o_five += own_runs_at[k]
                if runs_at[k] > 0:
                    five_suits |= 1 << s
                if own_runs_at[k] > 0:
                    own_five_suits |= 1 << s
        if runs_at[b] > 0 and runs_at[b + 6] > 0:
            hit[9] = 1
        if own_runs_at[b] > 0 and own_runs_at[b + 6] > 0:
            ownw[9] = 1
        if nr >= 3:
            hit[10] = 1
        if onr >= 3:
            ownw[10] = 1
        if nr == 4:
            hit[12] = 1
            ownw[12] = 1 if onr == 4 else 0
        if runs_at[b] > 0 and runs_at[b + 3] > 0 and runs_at[b + 6] > 0:
            hit[31] = 1
        if own_runs_at[b] > 0 and own_runs_at[b + 3] > 0 and own_runs_at[b + 6] > 0:
            ownw[31] = 1
    hit[13] = 1 if five_suits == 7 else 0
    ownw[13] = 1 if own_five_suits == 7 else 0
    for r in range(7):
        if runs_at[r] > 0 and runs_at[9 + r] > 0 and runs_at[18 + r] > 0:
            hit[15] = 1
        if own_runs_at[r] > 0 and own_runs_at[9 + r] > 0 and own_runs_at[18 + r] > 0:
            ownw[15] = 1
    if n_five == 4 and five_suits == 7:  # P26: the four sets are runs holding a 5
        hit[26] = 1
        ownw[26] = 1 if o_five == 4 else 0

    # P20 四合一: a triplet (not a kong) of a suited kind and a run holding it
    for t in range(ng):
        if gt[t] != G_TRIPLET or gk[t] >= 27 or (gs[t] != SRC_HAND and gs[t] != MELD_PONG):
            continue
        for j in range(ng):
            if gt[j] == G_RUN and 0 <= gk[t] - gk[j] <= 2:
                hit[20] = 1
                if gown[t] != 0 and gown[j] != 0:
                    ownw[20] = 1
    # P33 四合二: the pair of a suited kind and two runs holding it
    if standard != 0 and gk[0] < 27:
        nr = 0
        onr = 0
        for j in range(1, ng):
            if gt[j] == G_RUN and 0 <= gk[0] - gk[j] <= 2:
                nr += 1
                onr += gown[j]
        hit[33] = 1 if nr >= 2 else 0
        ownw[33] = 1 if gown[0] != 0 and onr >= 2 else 0

    # triplets: P21 P22 P30 P34 P35 P39 P41 P45 P50
    for s in range(3):
        a = trip_at[9 * s]
        c = trip_at[9 * s + 8]
        if a >= 0 and c >= 0:
            hit[21] = 1
            if gown[a] != 0 and gown[c] != 0:
                ownw[21] = 1
    hit[22] = 1 if t_m >= 3 or t_p >= 3 or t_s >= 3 or n_wind >= 3 else 0
    ownw[22] = 1 if o_m >= 3 or o_p >= 3 or o_s >= 3 or o_wind >= 3 else 0
    for k in range(27):
        if k % 9 <= 6 and trip_at[k] >= 0 and trip_at[k + 1] >= 0 and trip_at[k + 2] >= 0:
            hit[34] = 1
            if gown[trip_at[k]] + gown[trip_at[k + 1]] + gown[trip_at[k + 2]] == 3:
                ownw[34] = 1
    hit[35] = 1 if t_m == 4 or t_p == 4 or t_s == 4 else 0
    ownw[35] = 1 if o_m == 4 or o_p == 4 or o_s == 4 else 0
    for k in range(9):
        if trip_at[k] >= 0 and trip_at[k + 9] >= 0 and trip_at[k + 18] >= 0:
            hit[39] = 1
            if gown[trip_at[k]] + gown[trip_at[k + 9]] + gown[trip_at[k + 18]] == 3:
                ownw[39] = 1
    if trip_at[31] >= 0 and trip_at[32] >= 0 and trip_at[33] >= 0:
        hit[41] = 1
        ownw[41] = 1 if gown[trip_at[31]] + gown[trip_at[32]] + gown[trip_at[33]] == 3 else 0
    hit[45] = 1 if n_xsx >= 3 else 0
    ownw[45] = 1 if o_xsx >= 3 else 0
    if trip_at[27] >= 0 and trip_at[28] >= 0 and trip_at[29] >= 0 and trip_at[30] >= 0:
        hit[50] = 1
        ownw[50] = 1 if gown[trip_at[27]] + gown[trip_at[28]] + gown[trip_at[29]] + gown[trip_at[30]] == 4 else 0

    # whole hand (witness: every group): P17 P23 P24 P25 P30 P36 P38 P42 P43 P44
    if standard != 0 and gk[0] < 27:
        pr = gk[0] % 9 + 1
        for q in range(3):  # 付付 (D9): P17 ranks 3/7, P36 ranks 1/9, P43 the pair's rank
            if q == 0:
                mask = (1 << 3) | (1 << 7)
            elif q == 1:
                mask = (1 << 1) | (1 << 9)
            else:
                mask = 1 << pr
            ok = ((mask >> pr) & 1) != 0
            for i in range(1, ng):
                k = gk[i]
                if k >= 27:
                    ok = False
                    break
                r = k % 9 + 1
                bits = ((mask >> r) & 7) if gt[i] == G_RUN else ((mask >> r) & 1)
                if bits == 0:
                    ok = False
                    break
            if ok:
                hit[17 if q == 0 else (36 if q == 1 else 43)] = 1
        yao = True
        for i in range(ng):
            k = gk[i]
            if gt[i] == G_RUN or k >= 27 or (k % 9 != 0 and k % 9 != 8):
                yao = False
        hit[44] = 1 if yao else 0
    if standard != 0:
        hit[30] = 1 if n_trip == 4 else 0
    hit[23] = 1 if n_suits == 1 and honors else 0
    hit[24] = 1 if decl == DECL_HARD else 0
    hit[42] = 1 if n_suits == 1 and not honors else 0
    if standard == 0:
        hit[25] = 1
        n_win_pairs = 0
        for i in range(ng):
            if gk[i] == win_kind:
                n_win_pairs += 1
        hit[38] = 1 if n_win_pairs == 2 else 0
    for p in (17, 23, 24, 25, 30, 36, 38, 42, 43, 44):
        ownw[p] = all_own

    # points, doubled when a witness is own (J-6.3); P11 and P16 count each witness (D2)
    for p in range(1, N_PATTERN_SLOTS):
        if hit[p] != 0 and points[p] != 0:
            vals[p] = points[p] * f if (ownw[p] != 0 and doubled[p]) else points[p]
    if n_lz > 0 and points[11] != 0:
        vals[11] = n_lz * (points[11] * f if doubled[11] else points[11])
    if points[16] != 0:
        pairs = 0
        own_pairs = 0
        for k in range(27):
            pairs += runs_at[k] // 2
            own_pairs += own_runs_at[k] // 2
        if pairs > 0:
            dbl = f if doubled[16] else 1
            vals[16] = points[16] * (pairs - own_pairs) + points[16] * dbl * own_pairs


@njit(_SIG_EXCLUDE, cache=True)
def _exclude(vals, excludes, removed):
    """J-7 (D5): zero every pattern that a holding pattern excludes; return ``P``, the sum left.

    ``vals: int64[51]`` changed in place; ``removed``: scratch ``int64[>=51]``.
    """
    n = vals.shape[0]
    for b in range(n):
        removed[b] = 0
    for a in range(1, n):
        if vals[a] > 0:
            for b in range(1, n):
                if excludes[a, b]:
                    removed[b] = 1
    total = 0
    for b in range(1, n):
        if removed[b] != 0:
            vals[b] = 0
        total += vals[b]
    return total


@njit(_SIG_KEY, cache=True)
def _key_greater(p_a, a, p_b, b):
    """D6: is ``(p_a, sorted items of a)`` greater than ``(p_b, sorted items of b)``?

    The items are ``(pattern ID, points)`` of the patterns with points > 0,
    compared as Python compares the sorted lists (IDs in order; a list that
    is a prefix of the other is smaller).
    """
    if p_a != p_b:
        return p_a > p_b
    n = a.shape[0]
    i = 1
    j = 1
    while True:
        while i < n and a[i] == 0:
            i += 1
        while j < n and b[j] == 0:
            j += 1
        if i >= n or j >= n:
            return i < n and j >= n  # a longer with an equal prefix: greater
        if i != j:
            return i > j  # a's next ID is larger: a greater
        if a[i] != b[j]:
            return a[i] > b[j]
        i += 1
        j += 1


@njit(_SIG_READING, cache=True)
def _consider_reading(standard, ng, n_conc, params, points, doubled, excludes, work, found):
    """Score every view (wait) of the reading in rows ``W_GT/W_GK/W_GS`` and keep the best (J-5.3, D6).

    ``standard``: 1 standard, 0 seven pairs; groups ``0..n_conc-1`` are
    concealed (the wait is one of them), the others melds.  ``found``: a
    best view exists already (rows ``W_BEST``, ``W_BG*``, ``W_META``).
    Returns whether a best view exists now.
    """
    gt = work[W_GT]
    gk = work[W_GK]
    gs = work[W_GS]
    vals = work[W_VALS]
    best = work[W_BEST]
    meta = work[W_META]
    w = work[W_CTX, C_WIN_KIND]
    for j in range(n_conc):
        holds = (gk[j] <= w <= gk[j] + 2) if gt[j] == G_RUN else gk[j] == w
        if not holds:
            continue
        dup = False
        for i in range(j):
            if gt[i] == gt[j] and gk[i] == gk[j]:
                dup = True
                break
        if dup:
            continue
        _view_values(standard, ng, j, params, points, doubled, work)
        P = _exclude(vals, excludes, work[W_TMP])
        if not found or _key_greater(P, vals, meta[M_P], best):
            found = True
            for p in range(N_PATTERN_SLOTS):
                best[p] = vals[p]
            for i in range(ng):
                work[W_BGT, i] = gt[i]
                work[W_BGK, i] = gk[i]
                work[W_BGS, i] = gs[i]
            meta[M_STANDARD] = standard
            meta[M_NG] = ng
            meta[M_WAIT] = j
            meta[M_P] = P
    return found


@njit(_SIG_PREPARED, cache=True)
def _score_prepared(params, points, doubled, excludes, work):
    """:func:`_score_win` after its inputs are copied into ``work`` (int64 rows; one compiled copy).

    Reads ``W_HAND`` (concealed before the win), ``W_MELDS`` and ``W_CTX``
    (win kind, self-draw, ..., the waits ``C_N_WAITS``/``C_WAIT_KIND`` and
    ``C_SEEN``: all filled by :func:`_score_win`); returns ``(P, G)``, ``P = -1``
    when no reading completes the hand (not a win, J-5.1).  The best view's
    patterns are in ``W_BEST``, its groups in ``W_BGT/W_BGK/W_BGS`` and
    ``W_META``.
    """
    hand = work[W_HAND]
    counts = work[W_COUNTS]
    rem = work[W_REM]
    ctx = work[W_CTX]
    gt = work[W_GT]
    gk = work[W_GK]
    gs = work[W_GS]
    melds = work[W_MELDS]
    win_kind = ctx[C_WIN_KIND]
    n_melds = ctx[C_N_MELDS]
    n = 0
    for k in range(N_KINDS):
        counts[k] = hand[k]
        n += hand[k]
    counts[win_kind] += 1
    n += 1
    G = 0
    for i in range(n_melds):
        t = melds[i]
        if t == MELD_KONG_EXPOSED or t == MELD_KONG_ADDED:
            G += params[P_KONG_EXPOSED_POINTS]
        elif t == MELD_KONG_CONCEALED:
            G += params[P_KONG_CONCEALED_POINTS]

    found = False
    # standard readings (J-5.1): a pair, then per kind in order c runs or a triplet and c - 3 runs
    n_branch = 0
    for k in range(N_KINDS):
        if counts[k] >= 3:
            n_branch += 1
    if n_branch > 4:
        n_branch = 4
    for p in range(N_KINDS):
        if counts[p] < 2:
            continue
        for mask in range(1 << n_branch):
            for k in range(N_KINDS):
                rem[k] = counts[k]
            rem[p] -= 2
            gt[0] = G_PAIR
            gk[0] = p
            gs[0] = SRC_HAND
            ng = 1
            nb = 0
            ok = True
            for k in range(N_KINDS):
                c = rem[k]
                if c == 0:
                    continue
                t = 0
                if c >= 3:
                    if (mask >> nb) & 1:
                        t = 1
                    nb += 1
                r = c - 3 * t
                if r > 0:
                    if k >= 27 or k % 9 > 6 or rem[k + 1] < r or rem[k + 2] < r:
                        ok = False
                        break
                    rem[k + 1] -= r
                    rem[k + 2] -= r
                    for _ in range(r):
                        gt[ng] = G_RUN
                        gk[ng] = k
                        gs[ng] = SRC_HAND
                        ng += 1
                if t == 1:
                    gt[ng] = G_TRIPLET
                    gk[ng] = k
                    gs[ng] = SRC_HAND
                    ng += 1
                rem[k] = 0
            if not ok or (mask >> nb) != 0:  # failed, or a choice made twice
                continue
            n_conc = ng
            for i in range(n_melds):
                gt[ng] = G_TRIPLET
                gk[ng] = melds[4 + i]
                gs[ng] = melds[i]
                ng += 1
            found = _consider_reading(1, ng, n_conc, params, points, doubled, excludes, work, found)
    # seven pairs (J-5.1): 14 concealed tiles, every count even (four of a kind = two pairs)
    if n == 14:
        even = True
        for k in range(N_KINDS):
            if counts[k] % 2 != 0:
                even = False
                break
        if even:
            ng = 0
            for k in range(N_KINDS):
                for _ in range(counts[k] // 2):
                    gt[ng] = G_PAIR
                    gk[ng] = k
                    gs[ng] = SRC_HAND
                    ng += 1
            found = _consider_reading(0, ng, ng, params, points, doubled, excludes, work, found)
    if not found:
        return -1, G
    return work[W_META, M_P], G


@njit(cache=True)
def _score_win(hand, win_kind, win_type, decl, first_turn, replacement, on_first, visible, winner_is_dealer,
               n_melds, meld_type, meld_kind, params, points, doubled, excludes, tabs, work, pats):
    """Score one Jiating win (J-5.1, J-5.3, J-6.1, J-6.3, J-7, J-8): ``(P, G)``, ``P = -1`` if no win.

    ``hand``: ``uint8[34]`` (any int array works; uint8 shares the engine's
    compiled wait kernel), the winner's concealed tiles *before* the
    winning tile (``13 - 3 * n_melds``); ``win_kind`` 0..33; ``win_type``:
    ``WIN_*`` of :mod:`caishen.sim.rules.jiating`; ``decl``: ``DECL_*``;
    ``first_turn`` (天胡), ``replacement`` (won on a kong replacement draw),
    ``on_first`` (won on the dealer's first discard): 0/1; ``visible``:
    copies of the winning kind seen outside the winner's hand and melds
    (P27); ``winner_is_dealer``: 0/1; ``meld_type``/``meld_kind``: int arrays
    (``caishen.sim.tiles.MELD_*``, kind) of the winner's ``n_melds`` melds.  Rule
    tables: ``params``, ``points``, ``doubled``, ``excludes`` (module
    docstring); ``tabs``: :func:`caishen.sim.tables.hand_tables`; ``work``:
    :func:`new_work`.  Fills ``pats: int64[51]`` with each pattern's points
    after doubling and exclusions (0 = not scored).  No validation: the
    context is assumed to pass :func:`_check_context`.  Payments are
    :func:`caishen.sim.rules.jiating._payments` with ``P + G``.
    """
    wh = work[W_HAND]
    for k in range(N_KINDS):
        wh[k] = hand[k]
    ctx = work[W_CTX]
    ctx[C_WIN_KIND] = win_kind
    ctx[C_SELF_DRAW] = 1 if win_type == WIN_SELF_DRAW else 0
    ctx[C_WIN_TYPE] = win_type
    ctx[C_DECL] = decl
    ctx[C_FIRST_TURN] = first_turn
    ctx[C_DEALER_WINS] = winner_is_dealer
    ctx[C_ON_FIRST] = on_first
    ctx[C_REPLACEMENT] = replacement
    ctx[C_N_MELDS] = n_melds
    melds = work[W_MELDS]
    own = work[W_OWN]
    for k in range(N_KINDS):
        own[k] = hand[k]
    for i in range(4):
        melds[i] = meld_type[i] if i < n_melds else 0
        melds[4 + i] = meld_kind[i] if i < n_melds else 0
        if i < n_melds:
            own[meld_kind[i]] += 3 if meld_type[i] == MELD_PONG else 4
    # D3: the waits before the win as the engine's 架听 test counts them (caishen.sim.rules.jiating_turn;
    # a uint8 hand shares the engine's compiled copy of it)
    draw = work[W_DRAW]
    n_waits = _n_waits(hand, own, tabs, draw)
    wait_kind = -1
    if n_waits == 1:
        for k in range(N_KINDS):
            if draw[k] == -1 and own[k] < 4:
                wait_kind = k
    ctx[C_N_WAITS] = n_waits
    ctx[C_WAIT_KIND] = wait_kind
    ctx[C_SEEN] = visible + own[win_kind]  # P27: copies seen elsewhere and held
    P, G = _score_prepared(params, points, doubled, excludes, work)
    best = work[W_BEST]
    for p in range(N_PATTERN_SLOTS):
        pats[p] = best[p] if P >= 0 else 0
    return P, G


# ---------------------------------------------------------------- Python face
class ScoredGroup(NamedTuple):
    """One group of the chosen reading: ``type`` ``"pair"`` | ``"run"`` | ``"triplet"``
    (a kong is a triplet with a kong source); ``kind``: the kind index (a
    run's lowest); ``source``: ``"hand"`` or the meld type name."""

    type: str
    kind: int
    source: str


class KernelWin(NamedTuple):
    """One win scored by the kernels (:func:`score_win`).

    ``win``: legal win (J-5.1); ``patterns``: ID -> points after doubling and
    exclusions, in ID order; ``P``, ``G`` (J-6.1); ``scores``: each seat's
    change (``[int] * 4``, zero-sum, J-6.5); ``form``: ``"standard"`` |
    ``"seven_pairs"`` | None; ``groups``: the chosen reading's groups
    (:class:`ScoredGroup`; standard: the pair first, then the concealed
    sets, then the melds); ``wait``: index of the group the winning tile
    completes (-1 when no win).
    """

    win: bool
    patterns: dict[str, int]
    P: int
    G: int
    scores: list[int]
    form: str | None
    groups: tuple[ScoredGroup, ...]
    wait: int


_SOURCE_NAMES = {SRC_HAND: "hand", **MELD_TYPE_NAMES}


def _int(name: str, v, lo: int | None = None, hi: int | None = None) -> int:
    if isinstance(v, (bool, np.bool_)) or not isinstance(v, (int, np.integer)):
        raise ValueError(f"{name} must be an integer, got {v!r}")
    v = int(v)
    if (lo is not None and v < lo) or (hi is not None and v > hi):
        bound = f"{lo}..{hi}" if hi is not None else f">= {lo}"
        raise ValueError(f"{name}={v!r}: must be {bound}")
    return v


def _flag(name: str, v) -> int:
    if not isinstance(v, (bool, np.bool_)):
        raise ValueError(f"{name} must be true or false, got {v!r}")
    return int(bool(v))


def check_context_code(code: int) -> None:
    """Raise ``ValueError`` with the message of a non-zero ``_check_context`` code."""
    if code != ERR_OK:
        raise ValueError(ERR_MESSAGES.get(int(code), f"bad win context (code {code})"))


def score_win(
    concealed,
    win_kind: int,
    *,
    melds: Sequence[tuple[str, int]] = (),
    win_type: str,
    winner: int,
    dealer: int,
    discarder: int | None = None,
    streak: int = 0,
    declaration: str = "none",
    first_turn: bool = False,
    replacement_draw: bool = False,
    on_dealers_first_discard: bool = False,
    visible: int = 0,
    rules: JiatingRules | None = None,
) -> KernelWin:
    """Score one Jiating win with the kernels (J-5, J-6, J-7, J-8) and settle its payments.

    ``concealed``: ``int[34]`` counts of the winner's concealed tiles
    *before* the winning tile (``13 - 3 * len(melds)``); ``win_kind``:
    0..33; ``melds``: ``[(type name, kind), ...]`` (``"pong"``,
    ``"kong_exposed"``, ``"kong_added"``, ``"kong_concealed"``);
    ``win_type``: ``"self_draw"`` | ``"discard"`` | ``"robbed_kong"``;
    ``discarder``: the paying seat (None on a self-draw); ``declaration``:
    ``"none"`` | ``"jiating"`` | ``"hard"``; ``visible``: copies of the
    winning kind seen outside the winner's hand and melds (P27).  A hand
    that is not complete gives ``win=False``, no patterns, zero scores.
    Raises ``ValueError`` naming a bad or contradictory value.
    """
    r = rules or DEFAULT_RULES
    params, points, doubled, excludes = kernel_tables(r)
    hand = np.asarray(concealed)
    if hand.shape != (N_KINDS,) or not np.issubdtype(hand.dtype, np.integer):
        raise ValueError(f"concealed must be 34 integer counts, got {concealed!r}")
    if hand.min() < 0 or hand.max() > 4:
        raise ValueError(f"concealed counts must be 0..4, got {concealed!r}")
    hand = hand.astype(np.uint8)
    wk = _int("win_kind", win_kind, 0, N_KINDS - 1)
    if win_type not in WIN_TYPES:
        raise ValueError(f"win_type={win_type!r}: must be one of {', '.join(WIN_TYPES)}")
    wt = WIN_TYPES[win_type]
    if declaration not in DECLARATION_CODES:
        raise ValueError(f"declaration={declaration!r}: must be one of {', '.join(DECLARATION_CODES)}")
    w = _int("winner", winner, 0, 3)
    d = _int("dealer", dealer, 0, 3)
    disc = -1 if discarder is None else _int("discarder", discarder, 0, 3)
    k = _int("streak", streak, 0)
    vis = _int("visible", visible, 0, 3)
    if wt == WIN_ROBBED_KONG:  # J-3.3: the robbed pong's three copies are seen, listed or not (P27)
        vis = 3
    if not isinstance(melds, (list, tuple)) or len(melds) > 4:
        raise ValueError(f"melds must be a list of at most 4 (type, kind) pairs, got {melds!r}")
    mt = np.zeros(4, np.int64)
    mk = np.zeros(4, np.int64)
    for i, m in enumerate(melds):
        if not isinstance(m, (tuple, list)) or len(m) != 2 or m[0] not in MELD_TYPES or m[0] == "chow":
            raise ValueError(f"meld {m!r}: expected (pong | kong_exposed | kong_added | kong_concealed, kind)")
        mt[i] = MELD_TYPES[m[0]]
        mk[i] = _int("meld kind", m[1], 0, N_KINDS - 1)
    ft = _flag("first_turn", first_turn)
    rd = _flag("replacement_draw", replacement_draw)
    of = _flag("on_dealers_first_discard", on_dealers_first_discard)
    dc = DECLARATION_CODES[declaration]
    check_context_code(_check_context(hand, wk, wt, disc, w, d, k, dc, ft, rd, of, vis, len(melds), mt, mk))
    work = new_work()
    pats = np.zeros(N_PATTERN_SLOTS, np.int64)
    P, G = _score_win(hand, wk, wt, dc, ft, rd, of, vis, int(w == d), len(melds), mt, mk,
                      params, points, doubled, excludes, hand_tables(), work, pats)
    if P < 0:
        return KernelWin(False, {}, 0, 0, [0, 0, 0, 0], None, (), -1)
    out = np.zeros(4, np.int64)
    _payments(d, k, w, wt, disc, P + G, params, out)
    patterns = {pid: int(pats[i + 1]) for i, pid in enumerate(PATTERN_IDS) if pats[i + 1] != 0}
    meta = work[W_META]
    ng = int(meta[M_NG])
    groups = tuple(
        ScoredGroup(GROUP_TYPE_NAMES[int(work[W_BGT, i])], int(work[W_BGK, i]), _SOURCE_NAMES[int(work[W_BGS, i])])
        for i in range(ng)
    )
    form = "standard" if meta[M_STANDARD] else "seven_pairs"
    return KernelWin(True, patterns, int(P), int(G), [int(x) for x in out], form, groups, int(meta[M_WAIT]))
