"""Where a Jiating pattern is scored: the kernel that evaluates P01..P50 on one reading and wait.

:func:`_view_values` evaluates every pattern on one *view* (a reading of
the whole hand and the group the winning tile completes, J-5.3), each under
its ID (``hit[27]`` is P27 绝张子; the comments name each pattern): whether
it holds and whether one of its witnesses is the winner's own, so that a
doubled pattern is multiplied by ``concealed_factor`` (J-6.3, D1); P11 and
P16 count per witness (D2); a pattern with 0 points is off (D5).
:mod:`caishen.sim.rules.jiating.kernels` calls it for every view of every
reading and keeps the best (J-5.3, D6), after the J-7 exclusions.  The
tables (names, J-8 points, doubling, J-7 exclusions) are
:mod:`caishen.sim.rules.jiating.tables`; the definitions in words are J-8
(``docs/rules/jiating.md``); the slow obvious Python scorer the kernel is
compared with (one predicate per pattern, with witnesses) is
``tests/jiating_reference.py``.

Compiled on first use, once (see :mod:`caishen.sim.rules.jiating.kernels`).
"""

from __future__ import annotations

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
    DECL_HARD,
    DECL_NONE,
    DIHU_DEALER_READY,
    DIHU_DEALER_READY_UNDECLARED,
    G_RUN,
    G_TRIPLET,
    N_KINDS,
    N_PATTERN_SLOTS,
    P_CONCEALED_FACTOR,
    P_DIHU,
    SRC_HAND,
    WIN_DISCARD,
    WIN_ROBBED_KONG,
    W_CTX,
    W_GK,
    W_GOWN,
    W_GS,
    W_GT,
    W_HIT,
    W_OWNW,
    W_OWN_RUNS,
    W_RUNS,
    W_TRIP,
    W_VALS,
)
from caishen.sim.tiles import MELD_KONG_ADDED, MELD_KONG_CONCEALED, MELD_KONG_EXPOSED, MELD_PONG


@njit(cache=True)
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
    n_honor = 0  # honor triplets (P22: 风 = any honor), own ones
    o_honor = 0
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
                n_honor += 1
                o_honor += own
                if k <= 30 or k == 33:
                    n_xsx += 1
                    o_xsx += own
    n_suits = (suits & 1) + ((suits >> 1) & 1) + ((suits >> 2) & 1)
    wait_own = gown[wait]

    # patterns whose witness is the win itself (always own): P01 P02 P03 P07 P14 P18 P19 P28 P29
    # P32 P37 P40 P46 P47 P48 P49
    hit[1] = 1
    hit[2] = 1 if decl != DECL_NONE and single else 0
    hit[3] = 1 if self_draw else 0
    hit[7] = 0 if claimed else 1
    hit[14] = 1 if self_draw and not claimed else 0
    hit[18] = 1 if self_draw and ctx[C_REPLACEMENT] != 0 else 0
    hit[19] = 1 if ctx[C_WIN_TYPE] == WIN_ROBBED_KONG else 0
    hit[28] = 1 if self_draw and single and ctx[C_WAIT_KIND] == 3 and win_kind == 3 else 0  # P28 万事如意
    hit[29] = 1 if ctx[C_N_MELDS] == 4 else 0  # P29 全求人
    hit[32] = 1 if n_lz >= 3 else 0  # P32 暗三坎
    hit[37] = 1 if n_lz >= 4 else 0  # P37 暗四坎
    # P40 对对胡尽是碰: four triplets, no kong, every one a claimed pong except at most
    # the one the winning tile completes (the seed's three pongs + a win on one of two pairs)
    hit[40] = 1 if standard != 0 and n_trip == 4 and (n_pong == 4 or (n_pong == 3 and gt[wait] == G_TRIPLET)) else 0
    dealer_wins = ctx[C_DEALER_WINS] != 0
    hit[46] = 1 if ctx[C_FIRST_TURN] != 0 and dealer_wins else 0  # P46 天胡
    if params[P_DIHU] == DIHU_DEALER_READY:  # P47 地胡
        hit[47] = 1 if dealer_wins and decl == DECL_HARD else 0
    elif params[P_DIHU] == DIHU_DEALER_READY_UNDECLARED:  # ready after its first discard, declared or not
        hit[47] = 1 if dealer_wins and (decl == DECL_HARD or ctx[C_DEALER_READY] != 0) else 0
    else:
        hit[47] = 1 if not dealer_wins and ctx[C_WIN_TYPE] == WIN_DISCARD and ctx[C_ON_FIRST] != 0 else 0
    hit[48] = 1 if suits == 0 else 0  # P48 风胡
    hit[49] = 1 if standard != 0 and n_lz == 4 and wait == 0 and self_draw else 0  # P49 坎坎胡
    for p in (1, 2, 3, 7, 14, 18, 19, 28, 29, 32, 37, 40, 46, 47, 48, 49):
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
    hit[22] = 1 if t_m >= 3 or t_p >= 3 or t_s >= 3 or n_honor >= 3 else 0
    ownw[22] = 1 if o_m >= 3 or o_p >= 3 or o_s >= 3 or o_honor >= 3 else 0
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

    # whole hand (witness: every group): P06 P17 P23 P24 P25 P30 P36 P38 P42 P43 P44
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
    hit[6] = 1 if n_suits == 2 else 0  # P06 缺一门
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
    for p in (6, 17, 23, 24, 25, 30, 36, 38, 42, 43, 44):
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
