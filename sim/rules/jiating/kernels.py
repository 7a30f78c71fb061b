"""Jiating (架听) scoring as numba kernels: readings, waits, the fifty patterns, J-7, J-6.3, ``G``.

The one Jiating scorer (binding spec ``shared/rules/jiating.md``), in
compiled code so that a Jiating win costs no Python: the recorded wins of a
self-play batch (:mod:`caishen.sim.rules.jiating.batch`, the J-9 records) and one case of
:func:`caishen.sim.rules.jiating.scoring.evaluate` (``caishen score``, the vectors) call
:func:`_score_win` once per win.  Decisions D1..D12 are those of
:mod:`caishen.sim.rules.jiating`; each pattern P01..P50 is evaluated in
:func:`caishen.sim.rules.jiating.patterns._view_values` (its definition in J-8).
The slow obvious Python reference the kernels are compared with (one
predicate per pattern, with witnesses) is ``tests/jiating_reference.py``.

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
3. :func:`~caishen.sim.rules.jiating.patterns._view_values` evaluates the fifty patterns of a view as the
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
   P02, P27, P28) are :func:`caishen.sim.rules.jiating.turn._n_waits`, the
   count (:func:`caishen.sim.rules.jiating.turn._waits`) the engine's 架听
   test uses, so a hand that may declare 架听 is exactly a hand scored as a
   single wait.

``G`` (J-6.1) is the winner's kong points; payments (J-6.2, J-6.4, J-6.5)
are :func:`caishen.sim.rules.jiating.payments._payments`, called by the caller per winner.

Rule tables are arguments, never module globals: ``params =
JiatingRules.params()`` (``int64[N_PARAMS]``) and ``pattern_tables()``:
``points: int64[51]``, ``doubled: bool[51]``, ``excludes: bool[51, 51]``
(index = pattern number, 0 unused); ``tabs = caishen.sim.tables.hand_tables()``.
Kernels allocate nothing: the caller passes ``work = new_work()``
(``int64[N_WORK_ROWS, WORK_WIDTH]``, rows ``W_*``) and reuses it.

Public face: :func:`score_win` (one win given as Python values, validated,
``ValueError`` naming a bad value) and :func:`check_context_code` /
:data:`ERR_MESSAGES` for the input checks the kernels share.

Compile time: the inner kernels compile (or load from numba's cache) on first
use, not at import (a Kaihua run never compiles them: 4 s of its first run when
they compiled at import); none is ``inline="always"``.  Each compiles once: no
caller passes a literal (a constant argument such as ``standard=1`` would
type as ``Literal[int](1)`` and compile a copy of its own, so the constants
are passed as ``np.int64``; a test checks one signature each).  A cold cache
costs about 9 s CPU at the first :func:`score_win` (the wait kernel included,
shared with the engine's compiled copy); a warm one about 0.5 s
(``benchmarks/bench_jiating_score.py``).
"""

from __future__ import annotations

import functools
from typing import NamedTuple, Sequence

import numpy as np
from numba import njit

from caishen.sim.rules.jiating.layout import (
    C_DEALER_READY,
    C_DEALER_WINS,
    C_DECL,
    C_FIRST_TURN,
    C_N_MELDS,
    C_N_WAITS,
    C_ON_FIRST,
    C_REPLACEMENT,
    C_SEEN,
    C_SELF_DRAW,
    C_WAIT_KIND,
    C_WIN_KIND,
    C_WIN_TYPE,
    DECLARATION_CODES,
    DECL_HARD,
    DECL_READY,
    DECL_NONE,
    GROUP_TYPE_NAMES,
    G_PAIR,
    G_RUN,
    G_TRIPLET,
    M_NG,
    M_P,
    M_STANDARD,
    M_WAIT,
    N_KINDS,
    N_PATTERN_SLOTS,
    P_KONG_CONCEALED_POINTS,
    P_KONG_EXPOSED_POINTS,
    SRC_HAND,
    WIN_DISCARD,
    WIN_ROBBED_KONG,
    WIN_SELF_DRAW,
    WIN_TYPES,
    W_BEST,
    W_BGK,
    W_BGS,
    W_BGT,
    W_COUNTS,
    W_CTX,
    W_DRAW,
    W_GK,
    W_GS,
    W_GT,
    W_HAND,
    W_MELDS,
    W_META,
    W_OWN,
    W_REM,
    W_TMP,
    W_VALS,
    new_work,
)
from caishen.sim.rules.jiating.options import DEFAULT_RULES, JiatingRules
from caishen.sim.rules.jiating.patterns import _view_values
from caishen.sim.rules.jiating.payments import _payments
from caishen.sim.rules.jiating.tables import PATTERN_IDS
from caishen.sim.rules.jiating.turn import _n_waits
from caishen.sim.tables import hand_tables
from caishen.sim.tiles import (
    MELD_KONG_ADDED,
    MELD_KONG_CONCEALED,
    MELD_KONG_EXPOSED,
    MELD_PONG,
    MELD_TYPES,
    MELD_TYPE_NAMES,
)
from caishen.sim.validate import check_int


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
ERR_DEALER_READY = 14
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
    ERR_DEALER_READY: "dealer_ready_after_first_discard with first_turn: 天胡 (J-5.4) is won before the dealer's "
                      "first discard",
}


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


class WinContext(NamedTuple):
    """One win as the scorer reads it (:func:`_check_context`, :func:`_score_win`); flags are 0/1."""

    win_kind: int  #: the winning tile's kind, 0..33
    win_type: int  #: ``WIN_*`` of :mod:`caishen.sim.rules.jiating`: self-draw, discard, robbed kong
    decl: int  #: the winner's declaration, ``DECL_*``
    first_turn: int  #: won on the dealer's first draw (天胡)
    replacement: int  #: won on a kong's replacement draw
    on_first: int  #: won on the dealer's first discard
    dealer_ready: int  #: the dealer was ready right after its first discard (P47)
    visible: int  #: copies of the winning kind seen outside the winner's hand and melds (P27), 0..3
    n_melds: int  #: the winner's melds, 0..4
    meld_type: np.ndarray  #: int[4]: the melds' types (``caishen.sim.tiles.MELD_*``), the first ``n_melds`` read
    meld_kind: np.ndarray  #: int[4]: the melds' kinds


@njit(cache=True)
def _check_context(hand, wc, discarder, winner, dealer, streak):
    """``ERR_*`` code of one win context (0 = consistent); the case checks of ``caishen.sim.rules.jiating``.

    ``hand``: int array[34], concealed tiles before the win; ``wc``: the :class:`WinContext`;
    ``discarder`` (-1 on a self-draw), ``winner``, ``dealer``: seats; ``streak``: the dealer's streak.
    Legality of the win itself (J-5.1) is not checked here.
    """
    win_kind, win_type, decl, visible, n_melds = wc.win_kind, wc.win_type, wc.decl, wc.visible, wc.n_melds
    first_turn, replacement, on_first, dealer_ready = wc.first_turn, wc.replacement, wc.on_first, wc.dealer_ready
    meld_type, meld_kind = wc.meld_type, wc.meld_kind
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
    if decl != DECL_NONE and decl != DECL_READY and decl != DECL_HARD:
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
    if dealer_ready != 0 and first_turn != 0:
        return ERR_DEALER_READY
    return ERR_OK


@njit(cache=True)
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


@njit(cache=True)
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


@njit(cache=True)
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


@njit(cache=True)
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
            found = _consider_reading(np.int64(1), np.int64(ng), np.int64(n_conc), params, points, doubled, excludes,
                                      work, bool(found))
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
            found = _consider_reading(np.int64(0), np.int64(ng), np.int64(ng), params, points, doubled, excludes,
                                      work, bool(found))
    if not found:
        return -1, G
    return work[W_META, M_P], G


@njit(cache=True)
def _score_win(hand, wc, winner_is_dealer, params, points, doubled, excludes, tabs, work, pats):
    """Score one Jiating win (J-5.1, J-5.3, J-6.1, J-6.3, J-7, J-8): ``(P, G)``, ``P = -1`` if no win.

    ``hand``: ``uint8[34]`` (any int array works; uint8 shares the engine's
    compiled wait kernel), the winner's concealed tiles *before* the
    winning tile (``13 - 3 * wc.n_melds``); ``wc``: the :class:`WinContext`;
    ``winner_is_dealer``: 0/1.  Rule
    tables: ``params``, ``points``, ``doubled``, ``excludes`` (module
    docstring); ``tabs``: :func:`caishen.sim.tables.hand_tables`; ``work``:
    :func:`new_work`.  Fills ``pats: int64[51]`` with each pattern's points
    after doubling and exclusions (0 = not scored).  No validation: the
    context is assumed to pass :func:`_check_context`.  Payments are
    :func:`caishen.sim.rules.jiating._payments` with ``P + G``.
    """
    win_kind, win_type, n_melds, meld_type, meld_kind = wc.win_kind, wc.win_type, wc.n_melds, wc.meld_type, wc.meld_kind
    wh = work[W_HAND]
    for k in range(N_KINDS):
        wh[k] = hand[k]
    ctx = work[W_CTX]
    ctx[C_WIN_KIND] = win_kind
    ctx[C_SELF_DRAW] = 1 if win_type == WIN_SELF_DRAW else 0
    ctx[C_WIN_TYPE] = win_type
    ctx[C_DECL] = wc.decl
    ctx[C_FIRST_TURN] = wc.first_turn
    ctx[C_DEALER_WINS] = winner_is_dealer
    ctx[C_ON_FIRST] = wc.on_first
    ctx[C_DEALER_READY] = wc.dealer_ready
    ctx[C_REPLACEMENT] = wc.replacement
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
    # D3: the waits before the win, the kinds the engine's 架听 test counts (caishen.sim.rules.jiating.turn)
    draw = work[W_DRAW]
    n_waits = _n_waits(hand, own, tabs, draw)
    wait_kind = -1
    if n_waits == 1:
        for k in range(N_KINDS):
            if draw[k] == -1 and own[k] < 4:
                wait_kind = k
    ctx[C_N_WAITS] = n_waits
    ctx[C_WAIT_KIND] = wait_kind
    ctx[C_SEEN] = wc.visible + own[win_kind]  # P27: copies seen elsewhere and held
    P, G = _score_prepared(params, points, doubled, excludes, work)
    best = work[W_BEST]
    for p in range(N_PATTERN_SLOTS):
        pats[p] = best[p] if P >= 0 else 0
    return P, G


class ScoredGroup(NamedTuple):
    """One group of the chosen reading: ``type`` ``"pair"`` | ``"run"`` | ``"triplet"``
    (a kong is a triplet with a kong source); ``kind``: the kind index (a
    run's lowest); ``source``: ``"hand"`` or the meld type name."""

    type: str
    kind: int
    source: str


class JiatingWin(NamedTuple):
    """The scored win of one hand (:func:`evaluate`, :func:`caishen.sim.rules.jiating.kernels.score_win`).

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


#: one win scored by the kernels (:func:`score_win`): :class:`caishen.sim.rules.jiating.JiatingWin`
KernelWin = JiatingWin

_SOURCE_NAMES = {SRC_HAND: "hand", **MELD_TYPE_NAMES}


def _flag(name: str, v) -> int:
    if not isinstance(v, (bool, np.bool_)):
        raise ValueError(f"{name} must be true or false, got {v!r}")
    return int(bool(v))


def check_context_code(code: int) -> None:
    """Raise ``ValueError`` with the message of a non-zero ``_check_context`` code."""
    if code != ERR_OK:
        raise ValueError(ERR_MESSAGES.get(int(code), f"bad win context (code {code})"))


class WinTiming(NamedTuple):
    """When a win came, for :func:`score_win`: the flags of 天胡, 地胡 and a kong's replacement draw (each
    named as the scoring-vector case key of the same meaning; default: none of them)."""

    first_turn: bool = False  #: the dealer won on its first draw, before any discard (天胡, P46, J-5.4)
    replacement_draw: bool = False  #: won on a kong's replacement draw
    on_dealers_first_discard: bool = False  #: won on the dealer's first discard (P47, dihu="win_on_dealers_...")
    #: the dealer was ready right after its first discard (下叫, P47 under ``dihu="dealer_ready_undeclared"``;
    #: a dealer's hard declaration implies it)
    dealer_ready_after_first_discard: bool = False


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
    timing: WinTiming = WinTiming(),
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
    ``"none"`` | ``"jiating"`` | ``"hard"``; ``timing``: the :class:`WinTiming`
    flags (天胡, 地胡, a replacement draw); ``visible``: copies of the
    winning kind seen outside the winner's hand and melds (P27).  A hand
    that is not complete gives ``win=False``, no patterns, zero scores.
    Raises ``ValueError`` naming a bad or contradictory value.
    """
    if not isinstance(timing, WinTiming):
        raise ValueError(f"timing must be a WinTiming, got {type(timing).__name__}")
    r = rules or DEFAULT_RULES
    params, points, doubled, excludes = kernel_tables(r)
    hand = np.asarray(concealed)
    if hand.shape != (N_KINDS,) or not np.issubdtype(hand.dtype, np.integer):
        raise ValueError(f"concealed must be 34 integer counts, got {concealed!r}")
    if hand.min() < 0 or hand.max() > 4:
        raise ValueError(f"concealed counts must be 0..4, got {concealed!r}")
    hand = hand.astype(np.uint8)
    wk = check_int("win_kind", win_kind, 0, N_KINDS - 1)
    if win_type not in WIN_TYPES:
        raise ValueError(f"win_type={win_type!r}: must be one of {', '.join(WIN_TYPES)}")
    wt = WIN_TYPES[win_type]
    if declaration not in DECLARATION_CODES:
        raise ValueError(f"declaration={declaration!r}: must be one of {', '.join(DECLARATION_CODES)}")
    w = check_int("winner", winner, 0, 3)
    d = check_int("dealer", dealer, 0, 3)
    disc = -1 if discarder is None else check_int("discarder", discarder, 0, 3)
    k = check_int("streak", streak, 0)
    vis = check_int("visible", visible, 0, 3)
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
        mk[i] = check_int("meld kind", m[1], 0, N_KINDS - 1)
    ft, rd, of, dr = (_flag(name, v) for name, v in zip(WinTiming._fields, timing))
    dc = DECLARATION_CODES[declaration]
    wc = WinContext(wk, wt, dc, ft, rd, of, dr, vis, len(melds), mt, mk)
    check_context_code(_check_context(hand, wc, disc, w, d, k))
    work = new_work()
    pats = np.zeros(N_PATTERN_SLOTS, np.int64)
    P, G = _score_win(hand, wc, int(w == d), params, points, doubled, excludes, hand_tables(), work, pats)
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
