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
                    ``ep[EP_WIN_KERNEL]``)            ``SHAPE``: any complete hand (J-5.1)
``PAYMENTS_*``      :func:`_pay` (the payments on a   ``EXPONENT``: K-8 (with 飘 circles, K-9.3);
                    win, ``ep[EP_ENGINE_PAYMENTS]``)  ``NONE``: scored after the hand (J-6)
==================  ================================  ==========================================

The codes are in :mod:`caishen.sim.rules.codes` (which a rule set imports to
name its kernels without importing this module).  A rule set with a kernel
of its own adds a code there and **one branch** here to
:func:`_win_kernel` (or :func:`_pay`), nothing else in the engine.  A win
kernel has the signature of :func:`caishen.sim.rules.kaihua.kernels._evaluate_win`:
``(concealed, win_tile, meld_types, meld_kinds, n_melds, self_draw,
replacement_draw, chain_piao, chain_kong, params, tabs) -> (legal, exponent,
flags, piao_links, kong_links)``; a payments kernel that of
:func:`caishen.sim.rules.kaihua.kernels._payments`.  Both dispatchers are
``inline="always"``: compiled into the engine's step they cost one integer
comparison, no call.

The engine's other rule-set hooks are kernels gated by a *fact* (a boolean
``ep`` slot) and re-exported here so that the engine imports rule-set code
from this module only: Kaihua's 爆头 test for the K-2.5 forced discard
(fact ``baotou_force``), Jiating's single-wait discards for 架听 (``declare``,
J-4.1) and its wait count for 硬子 (``hard``, J-4.2); and the win-flag bits
the engine's checker reads (a win that counts chain links says so, K-10).
The win types (``WIN_*``) are shared by every rule set's kernels and records.
"""

from __future__ import annotations

from numba import njit

from caishen.sim.rules.codes import (  # noqa: F401  (the codes and the shared win types, for the engine)
    FLAG_CHAIN,
    FLAG_PIAO,
    PAYMENTS,
    PAYMENTS_EXPONENT,
    PAYMENTS_NONE,
    WIN_DISCARD,
    WIN_KERNEL_JOKER,
    WIN_KERNEL_SHAPE,
    WIN_KERNELS,
    WIN_ROBBED_KONG,
    WIN_SELF_DRAW,
)
from caishen.sim.rules.jiating.turn import _evaluate_win as _shape_win
from caishen.sim.rules.jiating.turn import _n_waits, _own_copies, _single_wait_discards  # noqa: F401
from caishen.sim.rules.kaihua.kernels import _evaluate_win as _joker_win
from caishen.sim.rules.kaihua.kernels import _is_baotou_wait  # noqa: F401
from caishen.sim.rules.kaihua.kernels import _payments as _exponent_payments


@njit(cache=True, inline="always")
def _win_kernel(code, concealed, win_tile, meld_types, meld_kinds, n_melds, self_draw, replacement_draw,
                chain_piao, chain_kong, params, tabs):
    """The win test of kernel ``code`` (``WIN_KERNEL_*``): ``(legal, exponent, flags, piao_links, kong_links)``.

    ``concealed``: the tiles *before* the winning tile (changed temporarily
    and restored); ``params``: the rule set's options as its kernel reads them
    (``rules.params()``); ``tabs``: :func:`caishen.sim.tables.hand_tables`.
    """
    if code == WIN_KERNEL_SHAPE:
        return _shape_win(concealed, win_tile, meld_types, meld_kinds, n_melds, self_draw, replacement_draw,
                          chain_piao, chain_kong, params, tabs)
    return _joker_win(concealed, win_tile, meld_types, meld_kinds, n_melds, self_draw, replacement_draw,
                       chain_piao, chain_kong, params, tabs)


@njit(cache=True, inline="always")
def _pay(code, dealer, winner, win_type, discarder, exponent, piao_circle, params, out):
    """Add one winner's payments of kernel ``code`` (``PAYMENTS_*``) to ``out: int64[4]``; nothing for ``NONE``."""
    if code == PAYMENTS_EXPONENT:
        _exponent_payments(dealer, winner, win_type, discarder, exponent, piao_circle, params, out)
