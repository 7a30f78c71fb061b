"""The one place where the engine reaches a rule set's kernels: kernel codes and their dispatch.

numba cannot call a method of a Python object, so the engine calls a rule
set's kernels through small dispatch functions that branch on an integer
code held in the engine params ``ep`` (:mod:`caishen.sim.engine.params`
copies it from the rule set's :class:`~caishen.sim.rules.base.RuleSet`):

==================  ================================  ==========================================
code                kernel                            rule sets
==================  ================================  ==========================================
``WIN_KERNEL_*``    :func:`_win_kernel` (the win      ``KAIHUA``: Kaihua's hand types and joker
                    test on every draw and discard,   rules (K-2.4..K-2.6, K-6, K-7);
                    ``ep[EP_WIN_KERNEL]``)            ``SHAPE``: any complete hand (J-5.1)
``PAYMENTS_*``      :func:`_pay` (the payments on a   ``KAIHUA``: K-8 (with 飘 circles, K-9.3);
                    win, ``ep[EP_ENGINE_PAYMENTS]``)  ``NONE``: scored after the hand (J-6)
==================  ================================  ==========================================

A rule set with a kernel of its own adds a code here and **one branch** to
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

WIN_KERNEL_KAIHUA = 0  #: caishen.sim.rules.kaihua.kernels._evaluate_win
WIN_KERNEL_SHAPE = 1  #: caishen.sim.rules.jiating.turn._evaluate_win: any complete hand (J-5.1)
WIN_KERNELS = (WIN_KERNEL_KAIHUA, WIN_KERNEL_SHAPE)

PAYMENTS_NONE = 0  #: the engine pays nothing: the rule set scores the recorded wins after the hand
PAYMENTS_KAIHUA = 1  #: caishen.sim.rules.kaihua.kernels._payments (K-8, K-9.3)
PAYMENTS = (PAYMENTS_NONE, PAYMENTS_KAIHUA)

# the rule sets' kernels (imported after the codes: the rule-set packages read the codes when they
# register, and importing a kernel module imports its package)
from caishen.sim.rules.jiating.turn import _evaluate_win as _shape_win  # noqa: E402
from caishen.sim.rules.jiating.turn import _n_waits, _own_copies, _single_wait_discards  # noqa: E402,F401
from caishen.sim.rules.kaihua.kernels import _evaluate_win as _kaihua_win  # noqa: E402
from caishen.sim.rules.kaihua.kernels import _is_baotou_wait  # noqa: E402,F401
from caishen.sim.rules.kaihua.kernels import _payments as _kaihua_payments  # noqa: E402
from caishen.sim.rules.kaihua.options import (  # noqa: E402,F401
    FLAG_CHAIN,
    FLAG_PIAO,
    WIN_DISCARD,
    WIN_ROBBED_KONG,
    WIN_SELF_DRAW,
)


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
    return _kaihua_win(concealed, win_tile, meld_types, meld_kinds, n_melds, self_draw, replacement_draw,
                       chain_piao, chain_kong, params, tabs)


@njit(cache=True, inline="always")
def _pay(code, dealer, winner, win_type, discarder, exponent, piao_circle, params, out):
    """Add one winner's payments of kernel ``code`` (``PAYMENTS_*``) to ``out: int64[4]``; nothing for ``NONE``."""
    if code == PAYMENTS_KAIHUA:
        _kaihua_payments(dealer, winner, win_type, discarder, exponent, piao_circle, params, out)
