"""The one place where the engine reaches a rule set's kernels: kernel codes and their dispatch.

numba cannot call a method of a Python object, so the engine calls a rule
set's kernels through small dispatch functions that branch on an integer
code held in the engine params ``ep`` (:mod:`caishen.sim.engine.params`
copies it from the rule set's :class:`~caishen.sim.rules.base.RuleSet`):

==================  ================================  ==========================================
code                kernel                            rule sets
==================  ================================  ==========================================
``WIN_KERNEL_*``    :func:`_win_kernel` (the win      ``JOKER``: Kaihua's hand types and joker
                    test on every draw and discard,   rules (K-2.4..K-2.6, K-6, K-7);
                    ``ep.win_kernel``)            ``SHAPE``: any complete hand (J-5.1)
``PAYMENTS_*``      :func:`_pay` (the payments on a   ``EXPONENT``: K-8 (with 飘 circles, K-9.3);
                    win, ``ep.payments``)  ``NONE``: scored after the hand (J-6)
``POINTS_*``        :func:`_hand_points` (what a      ``ENGINE``: the engine's payments (K-8);
                    finished hand pays each seat,     ``PATTERNS``: each recorded win scored
                    ``ep.points``)                and paid (J-5 .. J-8)
==================  ================================  ==========================================

:func:`_hand_points` is the one "points of a finished hand": the search
bot's rollouts, the batched env, the records (the J-9 finisher) and the
tuner call it (:func:`hand_points` from Python on the records); its
rule-set data travel as the *points context* (:class:`PointsContext`, built
by :func:`points_context`): the rule set's options and the hand tables, and
one field per points kernel with data, of that kernel's own type, supplied
by its rule set (``patterns``: Jiating's
:class:`~caishen.sim.rules.jiating.points.PatternPoints`, its
``points_tables`` hook), empty under a rule set that plays another kernel.
So the context is one numba type for every rule set, and a kernel that
scores hands (the search bot, the labels) compiles once for all of them.

The codes are in :mod:`caishen.sim.rules.codes` (which a rule set imports to
name its kernels without importing this module).  A rule set with a kernel
of its own adds a code there and **one branch** here to
:func:`_win_kernel` (or :func:`_pay`, :func:`_hand_points`; a points kernel
with data also its field of :class:`PointsContext` and its line of
:data:`_POINTS_DATA`), nothing else in
the engine (numba forces that one line: the compiled engine step calls only
kernels it knows when it is compiled).  A win
kernel has the signature of :func:`caishen.sim.rules.kaihua.kernels._evaluate_win`:
``(concealed, win_tile, meld_types, meld_kinds, n_melds, self_draw,
replacement_draw, chain_joker, chain_kong, params, tabs) -> (legal, exponent,
flags, joker_links, kong_links)``; a payments kernel that of
:func:`caishen.sim.rules.kaihua.kernels._payments`.  Both dispatchers are
``inline="always"``: compiled into the engine's step they cost one integer
comparison, no call.

The engine's other rule-set hooks are kernels gated by a *fact* (a boolean
``ep`` slot) and re-exported here so that the engine imports rule-set code
from this module only: Kaihua's 爆头 test for the K-2.5 forced discard
(fact ``force_joker_shape``), Jiating's single-wait discards for 架听 (``declare``,
J-4.1) and its wait count for 硬子 (``hard``, J-4.2); and the win-flag bits
the engine's checker reads (a win that counts chain links says so, K-10).
The win types (``WIN_*``) are shared by every rule set's kernels and records.
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np
from numba import njit

from caishen.sim.rules.codes import (  # noqa: F401  (the codes and the shared win types, for the engine)
    FLAG_CHAIN,
    FLAG_JOKER_LINK,
    PAYMENTS,
    PAYMENTS_EXPONENT,
    PAYMENTS_NONE,
    POINTS,
    POINTS_ENGINE,
    POINTS_PATTERNS,
    WIN_DISCARD,
    WIN_KERNEL_JOKER,
    WIN_KERNEL_SHAPE,
    WIN_KERNELS,
    WIN_ROBBED_KONG,
    WIN_SELF_DRAW,
)
from caishen.sim.borrow import borrowed
from caishen.sim.rules import records as _records
from caishen.sim.rules.jiating.points import PatternPoints, no_points
from caishen.sim.rules.jiating.points import _hand_points as _pattern_points
from caishen.sim.rules.jiating.turn import _evaluate_win as _shape_win
from caishen.sim.rules.jiating.turn import _is_hard_ready, _own_copies, _single_wait_discards  # noqa: F401
from caishen.sim.rules.kaihua.kernels import _evaluate_win as _joker_win
from caishen.sim.rules.kaihua.kernels import _is_baotou_wait as _joker_forcing_shape  # noqa: F401  (K-2.5)
from caishen.sim.rules.kaihua.kernels import _payments as _exponent_payments


@njit(cache=True, inline="always")
def _win_kernel(code, concealed, win_tile, meld_types, meld_kinds, n_melds, self_draw, replacement_draw,
                chain_joker, chain_kong, params, tabs):
    """The win test of kernel ``code`` (``WIN_KERNEL_*``): ``(legal, exponent, flags, joker_links, kong_links)``.

    ``concealed``: the tiles *before* the winning tile (changed temporarily
    and restored); ``params``: the rule set's options as its kernel reads them
    (``rules.params()``); ``tabs``: :func:`caishen.sim.tables.hand_tables`.
    """
    if code == WIN_KERNEL_SHAPE:
        return _shape_win(concealed, win_tile, meld_types, meld_kinds, n_melds, self_draw, replacement_draw,
                          chain_joker, chain_kong, params, tabs)
    return _joker_win(concealed, win_tile, meld_types, meld_kinds, n_melds, self_draw, replacement_draw,
                       chain_joker, chain_kong, params, tabs)


@njit(cache=True, inline="always")
def _pay(code, dealer, winner, win_type, discarder, exponent, circle_failed, params, out):
    """Add one winner's payments of kernel ``code`` (``PAYMENTS_*``) to ``out: int64[4]``; nothing for ``NONE``."""
    if code == PAYMENTS_EXPONENT:
        _exponent_payments(dealer, winner, win_type, discarder, exponent, circle_failed, params, out)


class PointsContext(NamedTuple):
    """The points context of :func:`_hand_points` (:func:`points_context`; module docstring): one numba type
    for every rule set."""

    params: np.ndarray  #: int64[:]: the rule set's options as its kernels read them (``rules.params()``)
    tabs: tuple  #: the hand tables (:func:`caishen.sim.tables.hand_tables`)
    patterns: PatternPoints  #: ``POINTS_PATTERNS``'s tables and scratch (Jiating's); empty under another kernel


#: each points kernel with data: its code -> (its field of :class:`PointsContext`, the empty value of its type)
_POINTS_DATA = {POINTS_PATTERNS: ("patterns", no_points)}


@njit(cache=True)
def _hand_points(code, dealer, streak, n_wins, wins, scores, pt, out):
    """The points of a finished hand by kernel ``code`` (``POINTS_*``) into ``out: int64[4]``: ``(error, j)``.

    ``dealer``, ``streak``: the hand's; ``wins``: ``WIN_DTYPE[MAX_WINNERS]`` of
    :mod:`caishen.sim.rules.records`, its ``n_wins`` recorded wins (``rec[i].wins`` or the state's
    ``st.wins``); ``scores``: int array ``[4]``, the
    engine's payments (``POINTS_ENGINE`` copies them); ``pt``: the points
    context (:class:`PointsContext`).  Returns ``(0, 0)``, or a rule set's
    error code and the bad win's row (the engine and the scorer disagree).
    """
    if code == POINTS_PATTERNS:
        return _pattern_points(dealer, streak, n_wins, wins, pt.params, pt.tabs, pt.patterns, out)
    for s in range(4):
        out[s] = scores[s]
    return 0, 0


@njit(cache=True)
def _batch_points(code, rec, pt, out):
    """:func:`_hand_points` of every hand of the records ``rec: RECORD_DTYPE[n]`` into ``out: int64[n, 4]``;
    ``(hand, error, j)`` of the first bad hand, or ``(-1, 0, 0)``."""
    rec, pt, out = borrowed((rec, pt, out))  # no reference counts per hand (caishen.sim.borrow)
    for h in range(rec.shape[0]):
        r = rec[h]
        e, j = _hand_points(code, r.dealer, r.streak, r.n_winners, r.wins, r.score, pt, out[h])
        if e != 0:
            return h, e, j
    return -1, 0, 0


def points_context(ruleset, rules) -> PointsContext:
    """The :class:`PointsContext` of :func:`_hand_points` for the :class:`~caishen.sim.rules.base.RuleSet`
    ``ruleset`` and its options ``rules``.

    Its points kernel's field is what the rule set's ``points_tables(rules)``
    gives (a value of that kernel's type, e.g.
    :class:`~caishen.sim.rules.jiating.points.PatternPoints` for
    ``POINTS_PATTERNS``); every other field is its kernel's empty value.
    Raises ``ValueError`` naming the rule set when a kernel with data gets
    no tables or a value of another type (or arrays of other dtypes or
    dimensions), or a kernel without data gets tables.
    """
    from caishen.sim.tables import hand_tables

    tables = ruleset.points_tables_of(rules)
    data = {field: empty() for field, empty in _POINTS_DATA.values()}
    if ruleset.points in _POINTS_DATA:
        field, empty = _POINTS_DATA[ruleset.points]
        want = data[field]
        if (type(tables) is not type(want)
                or any(not isinstance(a, np.ndarray) or a.dtype != b.dtype or a.ndim != b.ndim
                       for a, b in zip(tables, want))):
            raise ValueError(f"rule set {ruleset.name!r}: points_tables must give a {type(want).__name__} "
                             f"({', '.join(f'{f}: {b.dtype}[{b.ndim}d]' for f, b in zip(want._fields, want))}), "
                             f"got {type(tables).__name__}")
        data[field] = type(want)(*(np.ascontiguousarray(a) for a in tables))
    elif tables is not None:
        raise ValueError(f"rule set {ruleset.name!r}: its points kernel ({ruleset.points}) reads no tables, "
                         f"but points_tables gives a {type(tables).__name__}")
    return PointsContext(np.ascontiguousarray(rules.params(), np.int64), hand_tables(), **data)


def hand_points(ruleset, rules, rec: np.ndarray) -> np.ndarray:
    """Every hand's points of the records ``rec: RECORD_DTYPE[n]`` (:mod:`caishen.sim.rules.records`):
    ``int64[n, 4]``.

    ``ruleset``: the :class:`~caishen.sim.rules.base.RuleSet` the hands were
    played under, ``rules`` its options.  Raises ``ValueError`` for records of another dtype or shape and
    ``RuntimeError`` naming the hand when its rule set's points kernel rejects a recorded win.
    """
    rec = np.asarray(rec)
    if rec.ndim != 1 or rec.dtype != _records.RECORD_DTYPE:
        raise ValueError(f"rec must be the records RECORD_DTYPE[n], got {rec.dtype}{list(rec.shape)}")
    rec = np.ascontiguousarray(rec)
    out = np.zeros((len(rec), 4), np.int64)
    h, e, j = _batch_points(ruleset.points, rec, points_context(ruleset, rules), out)
    if h >= 0:
        raise RuntimeError(f"hand {h}: rule set {ruleset.name!r} rejects recorded win {j} (error {e})")
    return out
