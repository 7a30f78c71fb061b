"""The ``piao_table`` policy: throw a 财神 (飘财, K-9.1) where a measured table says it pays.

A 64-cell table, one bit per cell, decides at every own turn where a 财神
could be thrown with the hand staying ready (the ``always`` bot's 飘
chance).  A cell is (live wall tiles left in buckets of
:data:`TABLE_BUCKET`, the last open; many waits: the hand after the 飘 waits
on at least :data:`MANY_WAITS` non-财神 kinds; the seat's chain links so far
(K-6.5): none, or some; dealer or not):

    cell = ((bucket * 2 + many_waits) * 2 + chain_1) * 2 + dealer

(The number of 财神 held is no axis: at a 飘 chance it is nearly always two,
since with one the hand would be complete and win, K-2.6 aside.)

**On a base bot** (``piao_table:BASE``, ``piao_table:BITS:BASE``): any bot of the
registry that does not itself decide 飘 by rule (``tuned:NAME``,
``learned:NAME``, ``greedy_safe``, ``mc:N``, ...) plays every move, except
at a 飘 chance (:func:`_piao_chance`: its own turn, a 财神 in hand, no win
now, a 财神 and another tile may be discarded and the hand stays ready
without the 财神): there the table decides, and "keep" is the base bot's
move with the 财神 discard taken out of the legal actions.  The dispatch is
:func:`caishen.sim.bots.registry._bot_action`'s (it calls the base bot);
``piao_table:BITS:greedy`` is ``piao_table:BITS`` (the greedy kernel below).

The table comes from the counterfactual study (:mod:`caishen.sim.analysis.piao_study`:
:func:`caishen.sim.analysis.piao_study.piao_table_bits` sets a cell where the estimated EV of
飘 minus keep is positive).  The policy spec is ``piao_table`` (the default
table, :data:`DEFAULT_PIAO_TABLE`, from the default study) or
``piao_table:BITS`` (decimal or ``0x`` hex, ``0 .. 2**64-1``; a negative
int64 is read as its two's complement).  Outside the table's cells it plays
``never``.  The kernel lives here, apart from :mod:`caishen.sim.bots.policies` (which
dispatches to it) and :mod:`caishen.sim.analysis.piao_study` (which imports the policies), so
that neither imports the other in a circle.
"""

from __future__ import annotations

import numpy as np
from numba import njit

from caishen.sim.engine import (
    A_DISCARD,
    A_WIN,
    N_KINDS,
    PH_TURN,
)
from caishen.sim.hand import _is_win, _shanten

#: live-wall tiles per bucket of the table, and the number of buckets (the last is open)
TABLE_BUCKET = 8
TABLE_BUCKETS = 8
N_CELLS = 64
#: waits (non-财神 kinds completing the hand after the 飘) from which a chance counts as "many waits"
MANY_WAITS = 5


@njit(cache=True)
def _live_left(st, ep):
    """Live wall tiles left for normal draws: the wall minus the reserved tiles (K-3.4), at least 0."""
    n = st.table.tail - st.table.head + 1 - ep.reserve
    return n if n > 0 else 0


@njit(cache=True)
def _piao_chance(st, ep, tabs, mask, s):
    """True if seat ``s`` (to act; ``mask`` its legal actions) is at a 飘 chance: its own turn with a 财神,
    no win now, a 财神 discard and another discard legal (not a forced 飘, K-2.4 / K-2.5), and the hand
    ready (shanten <= 0) without the 财神 (K-9.1).  The decision point of the 飘 study
    (:mod:`caishen.sim.analysis.piao_study`) and of ``piao_table:BASE``."""
    joker = ep.joker
    if joker < 0 or st.table.phase != PH_TURN or st.hands[s, joker] == 0:
        return False
    if mask[A_WIN] or not mask[A_DISCARD + joker]:
        return False
    other = False
    for k in range(N_KINDS):
        if k != joker and mask[A_DISCARD + k]:
            other = True
            break
    if not other:  # forced 飘 (K-2.4, K-2.5): no decision
        return False
    st.hands[s, joker] -= 1
    ready = _shanten(st.hands[s], joker, tabs) <= 0
    st.hands[s, joker] += 1
    return ready


@njit(cache=True)
def _n_waits_after_piao(h, joker, tabs):
    """Non-财神 kinds that complete the 3m+2 hand ``h`` minus one 财神 (by shape; a kind held four times
    cannot be drawn).  ``h`` must hold a 财神; it is restored."""
    h[joker] -= 1
    n = 0
    for t in range(N_KINDS):
        if t == joker or h[t] >= 4:
            continue
        h[t] += 1
        if _is_win(h, joker, tabs):
            n += 1
        h[t] -= 1
    h[joker] += 1
    return n


@njit(cache=True)
def _piao_table_says(st, ep, tabs, bits):
    """The ``piao_table`` policy's answer for the seat to act: throw a 财神 now?

    ``bits``: the policy's 64-bit table (an int64 holding 64 cells); cell
    ``((bucket * 2 + many_waits) * 2 + chain_1) * 2 + dealer`` with
    ``bucket = min(live tiles left // TABLE_BUCKET, TABLE_BUCKETS - 1)``,
    ``many_waits`` = the hand after a 财神 discard waits on at least
    :data:`MANY_WAITS` kinds, ``chain_1`` = has chain links (K-6.5),
    ``dealer`` = is the dealer.  False without a 财神 in hand.
    ``caishen.sim.bots.policies`` asks it on the seat's own turn and throws a 财神 only if
    the hand then stays ready (as ``always`` does); otherwise it plays
    ``never``.
    """
    s = st.table.to_act
    joker = ep.joker
    if joker < 0 or st.hands[s, joker] == 0:
        return False
    b = _live_left(st, ep) // TABLE_BUCKET
    if b > TABLE_BUCKETS - 1:
        b = TABLE_BUCKETS - 1
    mw = 1 if _n_waits_after_piao(st.hands[s], joker, tabs) >= MANY_WAITS else 0
    ch = 1 if st.seat[s].chain_len > 0 else 0
    d = 1 if st.table.dealer == s else 0
    cell = ((b * 2 + mw) * 2 + ch) * 2 + d
    return ((np.uint64(bits) >> np.uint64(cell)) & np.uint64(1)) != 0


def policy_bits_int64(bits: int) -> int:
    """A 64-bit table (0 .. 2**64-1) as the int64 a policy table row holds (two's complement)."""
    if isinstance(bits, bool) or not isinstance(bits, (int, np.integer)) or not 0 <= int(bits) < 2**64:
        raise ValueError(f"piao_table {bits!r}: must be an integer in 0..2**64-1 (64 cells)")
    bits = int(bits)
    return bits - 2**64 if bits >= 2**63 else bits


def split_piao_arg(arg: str) -> tuple[str, str]:
    """``(BITS, BASE)`` of the argument of ``piao_table[:BITS][:BASE]``: the first part is the table when it
    starts with a digit or a sign (an integer, decimal or ``0x`` hex: :func:`parse_piao_table` says what is
    wrong with it), else the whole argument is the base bot's spec, whose name starts with a letter
    (``"tuned:NAME"`` -> ``("", "tuned:NAME")``)."""
    head, colon, rest = arg.partition(":")
    h = head.strip()
    if h[:1] and h[:1] in "0123456789+-":
        return h, rest.strip() if colon else ""
    return "", arg.strip()


def parse_piao_table(arg: str) -> int:
    """The parameter of ``piao_table[:BITS]``: ``BITS`` decimal or ``0x`` hex, 0..2**64-1; empty = the
    default table :data:`DEFAULT_PIAO_TABLE`.  Returns the int64 a policy table row holds."""
    from caishen.sim.rules.options import short_repr

    a = arg.strip()
    if not a:
        return policy_bits_int64(DEFAULT_PIAO_TABLE)
    if len(a) > 24:
        raise ValueError(f"policy piao_table:{short_repr(a)}: the table is a 64-bit integer")
    try:
        v = int(a, 16) if a.lower().startswith("0x") else int(a, 10)
    except ValueError:
        raise ValueError(f"policy piao_table:{short_repr(a)}: the table must be an integer (decimal or 0x hex)") \
            from None
    if not -(2**63) <= v < 2**64:
        raise ValueError(f"policy piao_table:{short_repr(a)}: the table must be in 0..2**64-1 (64 cells)")
    return policy_bits_int64(v % 2**64)


def cell_of(tiles_left: int, waits: int, chain: int, dealer: bool) -> int:
    """The table cell of a 飘 chance (the same arithmetic as :func:`_piao_table_says`)."""
    b = min(int(tiles_left) // TABLE_BUCKET, TABLE_BUCKETS - 1)
    return ((b * 2 + int(waits >= MANY_WAITS)) * 2 + int(chain > 0)) * 2 + int(bool(dealer))


#: the table the default study implies (``piao_table`` without a parameter): ``python
#: notebooks/piao_decision.py --workers 2`` (500,000 hands, R = 4, seed 14; the README's notebooks list)
DEFAULT_PIAO_TABLE = 220411464116012819
