"""The points of a finished Jiating hand: every recorded win scored and paid (J-5 .. J-8, J-6.5, J-3.4).

:func:`_hand_points` is the one kernel that turns a finished hand's recorded
wins (``wins[j].<field>``, :data:`caishen.sim.rules.records.WIN_DTYPE`) into the seats'
score changes; the engine reaches it through
:func:`caishen.sim.rules.kernels._hand_points` (code ``POINTS_PATTERNS``), so
that the search bot's rollouts, the batched env, the records
(:mod:`caishen.sim.rules.jiating.batch`) and the tuner all score a hand with
it.  Each win's context is checked (:func:`~caishen.sim.rules.jiating.kernels._check_context`),
scored (:func:`~caishen.sim.rules.jiating.kernels._score_win`) and paid
(:func:`~caishen.sim.rules.jiating.payments._payments`); its ``P``, ``G``,
what each seat paid it and its pattern points go to the row ``j`` of
``detail: int64[MAX_WINNERS, N_DETAIL]`` (columns ``D_*``).

Its tables and scratch are Jiating's own named tuple, :class:`PatternPoints`
(:func:`points_tables` builds it for the rule set's options: the
``points_tables`` hook of :class:`caishen.sim.rules.base.RuleSet`); it
travels as the ``patterns`` field of the shared points context
(:class:`caishen.sim.rules.kernels.PointsContext`).
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np
from numba import njit

from caishen.sim.rules import records as _E
from caishen.sim.rules.jiating.kernels import WinContext, _check_context, _score_win, kernel_tables, new_work
from caishen.sim.rules.jiating.layout import N_PATTERN_SLOTS, WIN_SELF_DRAW
from caishen.sim.rules.jiating.payments import _payments

N_SEATS = 4
N_PATTERNS = N_PATTERN_SLOTS - 1  # 50
#: columns of a win's row of ``detail``
D_P = 0  #: P, the pattern points (J-6.1, J-6.3)
D_G = 1  #: G, the kong points (J-6.1)
D_PAY = 2  #: D_PAY + p: what seat p paid this winner (J-6.2 .. J-6.5)
D_PATS = D_PAY + N_SEATS  #: D_PATS + i: the points of pattern P(i+1) after doubling and exclusions
N_DETAIL = D_PATS + N_PATTERNS

# errors of _hand_points beyond the context checks (caishen.sim.rules.jiating.kernels.ERR_*)
ERR_NOT_WIN = 100
ERR_ZERO_SUM = 101
ERR_MULTI = 102
ERR_N_WINNERS = 103
MESSAGES = {
    ERR_NOT_WIN: "the scorer says the recorded win is no win (J-5.1)",
    ERR_ZERO_SUM: "the scores do not sum to zero (J-6.5)",
    ERR_MULTI: "several winners need one discard or robbed kong with one discarder (J-3.4)",
    ERR_N_WINNERS: f"n_winners must be 0..{_E.MAX_WINNERS}",
}

_MAX_WINNERS = _E.MAX_WINNERS


class PatternPoints(NamedTuple):
    """The tables and scratch of :func:`_hand_points` (:func:`points_tables`): Jiating's points context,
    the ``patterns`` field of :class:`caishen.sim.rules.kernels.PointsContext`.  Index = pattern number
    (1..50, 0 unused) in the 51-long arrays."""

    points: np.ndarray  #: int64[51]: each pattern's points (J-8; 0: the pattern is off, D5)
    doubled: np.ndarray  #: bool[51]: the pattern doubles when one of its witnesses is the winner's own (J-6.3)
    excludes: np.ndarray  #: bool[51, 51]: ``[a, b]``: pattern a, when it holds, excludes pattern b (J-7)
    work: np.ndarray  #: int64[N_WORK_ROWS, WORK_WIDTH]: the scorer's rows (:func:`~.kernels.new_work`)
    pats: np.ndarray  #: int64[51]: scratch, one win's pattern points after doubling and exclusions
    hand8: np.ndarray  #: uint8[34]: scratch, the winner's concealed tiles as the wait kernel reads them
    detail: np.ndarray  #: int64[MAX_WINNERS, N_DETAIL]: each win's P, G, payments and pattern points (``D_*``)


def points_tables(rules) -> PatternPoints:
    """The :class:`PatternPoints` of :func:`_hand_points` for ``rules`` (a ``JiatingRules``; None: the spec's).
    Raises ``ValueError`` if ``rules`` is not a ``JiatingRules``."""
    _, points, doubled, excludes = kernel_tables(rules)
    return PatternPoints(points, doubled, excludes, new_work(), np.zeros(N_PATTERN_SLOTS, np.int64),
                         np.zeros(34, np.uint8), np.zeros((_MAX_WINNERS, N_DETAIL), np.int64))


def no_points() -> PatternPoints:
    """An empty :class:`PatternPoints` (one-element arrays of its dtypes): the ``patterns`` field of the points
    context of a rule set whose points kernel is another (its numba type is the same, so one compiled
    copy of a kernel that scores hands serves every rule set)."""
    return PatternPoints(np.zeros(1, np.int64), np.zeros(1, np.bool_), np.zeros((1, 1), np.bool_),
                         np.zeros((1, 1), np.int64), np.zeros(1, np.int64), np.zeros(1, np.uint8),
                         np.zeros((1, 1), np.int64))


@njit(cache=True)
def _hand_points(dealer, streak, n_wins, wins, params, tabs, pp, out):
    """Fill ``out: int64[4]`` with the score changes of a finished hand's ``n_wins`` recorded wins.

    ``wins``: the recorded wins, ``WIN_DTYPE[MAX_WINNERS]`` of
    :mod:`caishen.sim.rules.records` (``rec[i].wins`` or the state's ``st.wins``), first winner
    first; ``params``: ``JiatingRules.params()``; ``tabs``:
    :func:`caishen.sim.tables.hand_tables`; ``pp``: the :class:`PatternPoints`
    of :func:`points_tables` (its ``detail`` filled: each win's P, G, payments
    and pattern points, module docstring).  Returns ``(error, j)``: ``(0, 0)``,
    or the first bad win ``j`` and its ``ERR_*`` (a context check of
    :func:`~caishen.sim.rules.jiating.kernels._check_context` or this module's),
    with ``out`` then incomplete.
    """
    hand8, pats, detail = pp.hand8, pp.pats, pp.detail
    for p in range(N_SEATS):
        out[p] = 0
    if n_wins < 0 or n_wins > _MAX_WINNERS:
        return ERR_N_WINNERS, 0
    first_type = wins[0].type
    first_disc = wins[0].discarder
    for j in range(n_wins):
        x = wins[j]
        hand = x.hand
        w = x.seat
        wt = x.type
        disc = x.discarder
        wc = WinContext(x.tile, wt, x.decl, x.first_turn, x.replacement, x.on_first, x.dealer_ready, x.visible,
                        x.n_melds, x.meld_type, x.meld_kind)
        code = _check_context(hand, wc, disc, w, dealer, streak)
        if code == 0 and n_wins > 1 and (wt == WIN_SELF_DRAW or wt != first_type or disc != first_disc):
            code = ERR_MULTI
        if code != 0:
            return code, j
        for k in range(34):
            hand8[k] = hand[k]
        P, G = _score_win(hand8, wc, 1 if w == dealer else 0, params, pp.points, pp.doubled, pp.excludes, tabs,
                          pp.work, pats)
        if P < 0:
            return ERR_NOT_WIN, j
        for p in range(N_SEATS):
            detail[j, D_PAY + p] = out[p]
        _payments(dealer, streak, w, wt, disc, P + G, params, out)
        for p in range(N_SEATS):
            detail[j, D_PAY + p] = 0 if p == w else detail[j, D_PAY + p] - out[p]
        detail[j, D_P] = P
        detail[j, D_G] = G
        for i in range(N_PATTERNS):
            detail[j, D_PATS + i] = pats[i + 1]
    total = 0
    for p in range(N_SEATS):
        total += out[p]
    if total != 0:
        return ERR_ZERO_SUM, 0
    return 0, 0
