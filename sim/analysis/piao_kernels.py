"""The kernels of the counterfactual decision study (:mod:`caishen.sim.analysis.piao_study`, K-9, J-4).

One numba call plays a chunk of one-hand matches, finds the decision points
of one kind, and plays each point on both ways ``R`` times on the same wall
continuation (:func:`_study_hands`, :func:`_study_point`).  The Python face,
the runs and the files are :mod:`caishen.sim.analysis.piao_study`'s; the
estimates :mod:`caishen.sim.analysis.piao_estimate`'s.

Per rollout and branch the deciding seat's result is kept in ``res[..,
R_*]``: its score, won, failed 飘 (K-9.3), and the two parts of the score
that only 飘 makes (:func:`_piao_parts`): the *doubling* (what its own win
received because its 飘 links counted in the exponent, K-6.5 / K-9.1: the
win paid at ``E`` minus the win paid at ``E - links``) and the *failure
penalty* (the extra it paid because another seat won inside its 飘 circle,
K-9.3: its payment with its circle open minus with it closed; <= 0).  Both
are computed by the rule set's own payments kernel
(:func:`caishen.sim.rules.kernels._pay`), so they are exact (with a
``max_exponent`` cap, K-6.6, the doubling is measured on the capped
exponent); a rule set scored after the hand (J-9) has neither (zeros).
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np
from numba import njit

from caishen.sim.engine import (
    _copy_state,
    A_DECLARE,
    A_DISCARD,
    A_HARD_DECLARE,
    A_HARD_DECLINE,
    A_KONG_CONCEALED,
    N_KINDS,
    N_SEATS,
    PH_DONE,
    PH_HARD,
    PH_TURN,
    _legal_mask,
    _reset,
    _shuffle_wall,
    _step,
    _write_record,
    new_state,
)
from caishen.sim.hand import _is_baotou, _is_win
from caishen.sim.bots.piao_table import _live_left, _piao_chance
from caishen.sim.bots.policies import POLICY_NEVER, _choose_action, _live_counts, new_work
from caishen.sim.bots.registry import BotContext, _bot_action
from caishen.sim.rng import _rng_below, _rng_next, _rng_seed, _rng_shuffle
from caishen.sim.rules.kernels import _pay

#: decision kinds (:mod:`caishen.sim.analysis.piao_study`'s docstring)
DECISION_PIAO = 0
DECISION_DECLARE = 1
DECISION_HARD = 2

#: columns of the feature matrix, one row per decision point (``own_choice``: the deciding seat's policy took
#: the alternative there by itself: threw the 财神, declared)
FEATURES = ("hand", "seat", "dealer", "tiles_left", "caishen", "waits", "live_waits", "chain", "baotou", "turns",
            "taken", "chances", "own_choice")
(F_HAND, F_SEAT, F_DEALER, F_TILES_LEFT, F_CAISHEN, F_WAITS, F_LIVE, F_CHAIN, F_BAOTOU, F_TURNS, F_TAKEN,
 F_CHANCES, F_OWN) = range(13)
N_FEAT = len(FEATURES)
#: per rollout and branch: the deciding seat's score, won, failed 飘 (K-9.3), 飘 doubling, failure penalty
R_SCORE, R_WON, R_FAILED, R_DOUBLE, R_PENALTY = 0, 1, 2, 3, 4
N_RES = 5


@njit(cache=True)
def _piao_point(st, ep, tabs, s):
    """True if seat ``s`` (to act, ``st.mask`` filled) is at a 飘 decision point: the 飘 chance of
    :func:`caishen.sim.bots.piao_table._piao_chance` (the point ``piao_table:BASE`` decides at too)."""
    return _piao_chance(st, ep, tabs, st.mask, s)


@njit(cache=True)
def _piao_parts(x, ep, rp, s):
    """``(doubling, penalty)`` of seat ``s`` in the finished hand ``x`` (module docstring; points, penalty
    <= 0).  Uses ``x.tmp`` and ``x.circle`` as scratch (the hand is over)."""
    code = ep.payments
    wt = x.table.win_type
    if wt < 0 or code == 0:
        return 0, 0
    dealer = x.table.dealer
    disc = x.table.discarder
    double = 0
    penalty = 0
    for w in range(N_SEATS):
        if x.seat[w].won == 0:
            continue
        e = x.seat[w].exponent
        if w == s:
            links = x.seat[s].win_joker_links
            if links > 0:
                for p in range(N_SEATS):  # the circles open at the win (K-9.2): they stay set after it
                    x.circle[p] = 1 if (p != w and x.seat[p].circle_open != 0) else 0
                x.tmp[:] = 0
                _pay(code, dealer, w, wt, disc, e, x.circle, rp, x.tmp)
                got = x.tmp[s]
                x.tmp[:] = 0
                _pay(code, dealer, w, wt, disc, max(e - links, 0), x.circle, rp, x.tmp)
                double += got - x.tmp[s]
        elif x.seat[s].circle_failed != 0 and x.seat[s].circle_open != 0:
            x.circle[:] = 0
            x.circle[s] = 1
            x.tmp[:] = 0
            _pay(code, dealer, w, wt, disc, e, x.circle, rp, x.tmp)
            paid = x.tmp[s]
            x.circle[s] = 0
            x.tmp[:] = 0
            _pay(code, dealer, w, wt, disc, e, x.circle, rp, x.tmp)
            penalty += paid - x.tmp[s]
    return double, penalty


@njit(cache=True, inline="always")
def _situation(st, ep, h, s, row):
    """Fill the situation columns of a study row (``row: int64[N_FEAT]``, zeroed first): the hand, the seat,
    dealer or not, the live tiles left and the turn; the decision's own columns are the caller's."""
    row[:] = 0
    row[F_HAND] = h
    row[F_SEAT] = s
    row[F_DEALER] = 1 if st.table.dealer == s else 0
    row[F_TILES_LEFT] = _live_left(st, ep)
    row[F_TURNS] = st.table.turns


@njit(cache=True)
def _piao_features(st, ep, tabs, s, live, row):
    """Fill ``row[F_CAISHEN .. F_BAOTOU]`` for a 飘 point of seat ``s`` (``live: int64[34]`` scratch)."""
    joker = ep.joker
    h = st.hands[s]
    row[F_CAISHEN] = h[joker]
    row[F_CHAIN] = st.seat[s].chain_len
    h[joker] -= 1
    _live_counts(st, s, live)
    n_waits = 0
    n_live = 0
    for t in range(N_KINDS):
        if t == joker or h[t] >= 4:  # a fifth copy cannot be drawn
            continue
        h[t] += 1
        if _is_win(h, joker, tabs):
            n_waits += 1
            n_live += live[t]
        h[t] -= 1
    row[F_WAITS] = n_waits
    row[F_LIVE] = n_live
    row[F_BAOTOU] = 1 if (h[joker] > 0 and _is_baotou(h, joker, tabs)) else 0
    h[joker] += 1


@njit(cache=True)
def _rollout(st, ep, rp, tabs, policies, keep, s, base_branch, decision, work, bx, kx):
    """Play the state ``st`` to the end of the hand, in place, with ``policies: int64[4, 2]`` (a
    :func:`caishen.sim.bots.registry.bot_table`; ``bx`` its bot context).

    In the base branch (``base_branch``) seat ``s`` plays the keep branch's bot ``keep[s]`` (``int64[4, 2]``,
    ``kx`` its context) at a 飘 decision, and never takes the alternative kind of action at a 架听
    or 硬子 decision (module docstring).
    """
    while st.table.phase != PH_DONE:
        _legal_mask(st, ep)
        p = st.table.to_act
        if base_branch and p == s and decision == DECISION_PIAO:
            a = _bot_action(keep[p, 0], keep[p, 1], st, ep, rp, tabs, st.mask, work, kx)
        else:
            a = _bot_action(policies[p, 0], policies[p, 1], st, ep, rp, tabs, st.mask, work, bx)
        if base_branch and p == s:
            if decision == DECISION_DECLARE and A_DECLARE <= a < A_KONG_CONCEALED:
                a = a - A_DECLARE
            elif decision == DECISION_HARD and a == A_HARD_DECLARE:
                a = A_HARD_DECLINE
        _step(st, ep, rp, tabs, a)


@njit(cache=True)
def _keep_action(st, ep, rp, tabs, keep, s, work, kx, kmask):
    """The keep move at a 飘 chance of seat ``s``: the keep bot ``keep[s]``'s move with the 财神 discard
    taken out of the legal actions (``kmask``: scratch like ``st.mask``); ``never``'s move if the bot
    still names it (a bot that does not read its mask)."""
    joker = ep.joker
    kmask[:] = st.mask
    kmask[A_DISCARD + joker] = False
    a = _bot_action(keep[s, 0], keep[s, 1], st, ep, rp, tabs, kmask, work, kx)
    if not kmask[a]:
        # np.int64: a literal argument would compile a copy of _choose_action of its own
        a = _choose_action(np.int64(POLICY_NEVER), np.int64(0), st, ep, rp, tabs, kmask, work)
    return a


class StudyPlan(NamedTuple):
    """What :func:`_study_hands` plays and how it studies the points (its docstring)."""

    policies: np.ndarray  #: int64[4, 2]: every seat's bot (:func:`caishen.sim.bots.registry.bot_table`)
    keep: np.ndarray  #: int64[4, 2]: the keep branch's bot of the deciding seat after a 飘 chance
    bx: BotContext  #: the bot context of ``policies`` (:func:`caishen.sim.bots.registry.make_context`)
    kx: BotContext  #: the bot context of ``keep``
    decision: int  #: the kind of decision point (DECISION_*)
    explore_ppm: int  #: the real hand takes the alternative at a point with this chance (parts per million)
    per_hand: bool  #: (飘 only) one chance per hand, drawn uniformly among the hand's chances
    rollouts: int  #: R, the rollouts per point and branch
    reshuffle: bool  #: a fresh order of the undrawn tiles per rollout (False: the real wall's order, a check)


class StudyOut(NamedTuple):
    """What :func:`_study_hands` fills, ``m`` points at most (rows beyond the points found are left)."""

    feat: np.ndarray  #: int64[m, N_FEAT]: each point's features (FEATURES)
    res: np.ndarray  #: int64[m, R, 2, N_RES]: each rollout's results, branch 0 the alternative, 1 the base
    rec: np.ndarray  #: RECORD_DTYPE[m * R * 2] or [0]: the rollouts' records (none: zero rows)
    hand_scores: np.ndarray  #: int64[n_hands, 4]: the real hands' score changes


class StudyScratch(NamedTuple):
    """The scratch of :func:`_study_hands`."""

    states: np.ndarray  #: STATE_DTYPE[4]: the real hand, the two branches, a saved chance
    work: np.ndarray  #: int64[4, 34]: the bots' scratch (:func:`caishen.sim.bots.policies.new_work`)
    live: np.ndarray  #: int64[34]: the live counts of a 飘 point's features
    rr: np.ndarray  #: uint64[4]: the stream of the rollouts' orders (seeded by :func:`_study_hands`)


def new_scratch() -> StudyScratch:
    """A fresh :class:`StudyScratch`."""
    return StudyScratch(new_state(4), new_work(), np.zeros(N_KINDS, np.int64), np.zeros(4, np.uint64))


@njit(cache=True)
def _study_point(st, ep, rp, tabs, plan, out, scr, s, a_alt, a_base, n, h):
    """Play the decision point ``st`` (seat ``s`` to act, alternative ``a_alt``, base ``a_base``) on both ways
    ``plan.rollouts`` times into ``out.res[n]`` (and ``out.rec``'s rows of point ``n`` when it has rows; ``h``:
    the hand's index in the records), each time with the same fresh order of the undrawn tiles for both branches
    (stream ``scr.rr``; branches ``scr.states[1]``, ``scr.states[2]``)."""
    sa = scr.states[1]
    sb = scr.states[2]
    rr = scr.rr
    res = out.res
    rec = out.rec
    rollouts = plan.rollouts
    keep_rec = rec.shape[0] > 0
    head = st.table.head
    tail = st.table.tail
    for r in range(rollouts):
        _copy_state(sa, st)
        # a fresh order of the tiles not yet drawn, the same for both branches
        if plan.reshuffle:
            _rng_shuffle(rr, sa.wall[head:tail + 1])
        sa.rng[0] = _rng_next(rr)
        sa.rng[1] = _rng_next(rr)
        sa.rng[2] = _rng_next(rr)
        sa.rng[3] = _rng_next(rr)
        _copy_state(sb, sa)
        for b in range(2):
            x = sa if b == 0 else sb
            _step(x, ep, rp, tabs, a_alt if b == 0 else a_base)
            # base_branch a bool, not the constants False and True: one _rollout compiled, not two
            _rollout(x, ep, rp, tabs, plan.policies, plan.keep, s, b == 1, plan.decision, scr.work, plan.bx, plan.kx)
            res[n, r, b, R_SCORE] = x.seat[s].score
            res[n, r, b, R_WON] = x.seat[s].won
            res[n, r, b, R_FAILED] = x.seat[s].circle_failed
            dbl, pen = _piao_parts(x, ep, rp, s)
            res[n, r, b, R_DOUBLE] = dbl
            res[n, r, b, R_PENALTY] = pen
            if keep_rec:
                _write_record(x, ep, h, rec[(n * rollouts + r) * 2 + b])


@njit(cache=True)
def _study_hands(seed, n_hands, ep, rp, tabs, plan, out, scr):
    """Play ``n_hands`` one-hand matches and study the decision points of kind ``plan.decision``
    (:class:`StudyPlan`, :class:`StudyOut`, :class:`StudyScratch`).

    With ``plan.per_hand`` (飘 only) study one chance per hand, drawn uniformly
    among the hand's chances (reservoir sampling, stream ``explore``), while
    the real hand is played by ``plan.policies`` throughout; otherwise every
    point is studied and the real hand takes the alternative there with
    probability ``plan.explore_ppm`` (parts per million), else the base.
    Fills ``out.feat`` (``chances``: the hand's 飘 chances with ``per_hand``, else 1),
    ``out.res``, ``out.rec`` when it has rows (the rollouts' records, for rule
    sets scored after the hand) and ``out.hand_scores``.  Without ``plan.reshuffle`` the rollouts
    keep the real wall's order (a check: a branch that takes the real hand's
    action then replays it).  Returns the number of points, or -1 when more
    than ``m`` were found (the caller retries with more room).
    """
    policies, keep, bx, kx = plan.policies, plan.keep, plan.bx, plan.kx
    decision = plan.decision
    work, live, feat = scr.work, scr.live, out.feat
    st = scr.states[0]
    sa = scr.states[1]
    sv = scr.states[3]
    _rng_seed(st.rng, seed)
    wall_rng = st.rng.copy()
    xr = np.zeros(4, np.uint64)  # exploration
    _rng_seed(xr, seed ^ 0x5DEECE66D)
    _rng_seed(scr.rr, seed ^ 0x2545F4914F6CDD1D)
    m = feat.shape[0]
    n = np.int64(0)  # not the constant 0: numba would compile _study_point for it too while typing the loop
    joker = ep.joker
    kmask = sa.mask  # sa is scratch until _study_point copies into it; a record's field, as st.mask, so
    # that _keep_action's bots are the kernels compiled for every other call (one mask type)
    saved = np.zeros(N_FEAT, np.int64)
    for h in range(n_hands):
        st.rng[:] = wall_rng
        dealer = _rng_below(st.rng, N_SEATS)
        _shuffle_wall(st)
        wall_rng[:] = st.rng
        _reset(st, ep, rp, tabs, dealer)
        n_chances = 0
        while st.table.phase != PH_DONE:
            _legal_mask(st, ep)
            s = st.table.to_act
            if plan.per_hand and decision == DECISION_PIAO:
                chance = _piao_point(st, ep, tabs, s)
                pick = False
                if chance:
                    n_chances += 1
                    pick = _rng_below(xr, n_chances) == 0  # reservoir: each chance kept with chance 1/k
                    if pick:
                        _copy_state(sv, st)
                a = _bot_action(policies[s, 0], policies[s, 1], st, ep, rp, tabs, st.mask, work, bx)
                if pick:
                    _situation(st, ep, h, s, saved)
                    _piao_features(st, ep, tabs, s, live, saved)
                    saved[F_TAKEN] = 1 if a == A_DISCARD + joker else 0
                    saved[F_OWN] = saved[F_TAKEN]
                _step(st, ep, rp, tabs, a)
                continue
            a_alt = -1
            a_base = -1
            if decision == DECISION_PIAO:
                if _piao_point(st, ep, tabs, s):
                    a_alt = A_DISCARD + joker
                    a_base = _keep_action(st, ep, rp, tabs, keep, s, work, kx, kmask)
            elif decision == DECISION_DECLARE:
                if st.table.phase == PH_TURN:
                    a = _bot_action(policies[s, 0], policies[s, 1], st, ep, rp, tabs, st.mask, work, bx)
                    if A_DECLARE <= a < A_KONG_CONCEALED:
                        a_alt = a
                        a_base = a - A_DECLARE
            elif st.table.phase == PH_HARD:
                a_alt = A_HARD_DECLARE
                a_base = A_HARD_DECLINE
            if a_alt < 0:
                a = _bot_action(policies[s, 0], policies[s, 1], st, ep, rp, tabs, st.mask, work, bx)
                _step(st, ep, rp, tabs, a)
                continue
            if n >= m:
                return -1
            row = feat[n]
            _situation(st, ep, h, s, row)
            row[F_CHANCES] = 1
            if decision == DECISION_PIAO:
                _piao_features(st, ep, tabs, s, live, row)
            if decision == DECISION_DECLARE:  # the point is where the policy declares
                row[F_OWN] = 1
            else:
                own = _bot_action(policies[s, 0], policies[s, 1], st, ep, rp, tabs, st.mask, work, bx)
                row[F_OWN] = 1 if own == a_alt else 0
            _study_point(st, ep, rp, tabs, plan, out, scr, s, a_alt, a_base, n, h)
            take = _rng_below(xr, 1_000_000) < plan.explore_ppm
            row[F_TAKEN] = 1 if take else 0
            n += 1
            _step(st, ep, rp, tabs, a_alt if take else a_base)
        if n_chances > 0:
            if n >= m:
                return -1
            feat[n, :] = saved
            feat[n, F_CHANCES] = n_chances
            s = saved[F_SEAT]
            a_base = _keep_action(sv, ep, rp, tabs, keep, s, work, kx, kmask)
            _study_point(sv, ep, rp, tabs, plan, out, scr, s, A_DISCARD + joker, a_base, n, h)
            n += 1
        for q in range(N_SEATS):
            out.hand_scores[h, q] = st.seat[q].score
    return n

