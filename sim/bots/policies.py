"""Bots as numba kernels, so that a whole self-play hand is one compiled loop.

Each policy picks one action for the seat to act from the engine state
(:mod:`caishen.sim.engine`) and its legal mask, seeing only what that seat may see
(its own hand, every discard and exposed meld; never other hands, concealed
kong kinds or the wall).  The Python faces of these bots, for the step API
and the environments, are in the ``agents`` package.

========== ====== ==========================================================
policy     param  behaviour
========== ====== ==========================================================
random     --     uniform over the legal actions
greedy     --     win whenever allowed; discard to minimise shanten, ties
                  broken by live effective tiles (then honors, then the
                  highest kind); a concealed / added kong when it does not
                  raise the shanten; chow / pong only when it lowers the
                  shanten; never an exposed kong unless it lowers it
never      --     greedy, but never discards a 财神 unless every legal
                  discard is one (forced 飘, K-2.4 / K-2.5)
always     --     greedy, but discards a surplus 财神 (飘财, K-9.1) whenever
                  the hand stays ready (shanten 0) without it
threshold  N      ``always`` while at most N tiles of the live wall are gone
                  (draws after the deal, replacement draws included), then
                  ``never``
greedy_safe --    greedy that defends (below): folds to the safest discard
                  when its hand is far and an opponent is likely ready, and
                  breaks greedy's ties towards safer tiles
piao_table [BITS] ``always`` where a 64-cell table says 飘 pays (by tiles
                  left, 财神 held, chain, dealer), else ``never``: the policy
                  the counterfactual study implies (:mod:`caishen.sim.bots.piao_table`)
========== ====== ==========================================================

Defence (``greedy_safe``; the danger model the tuned bot reuses)
----------------------------------------------------------------
A discard win makes the discarder pay all three shares (K-7, K-8.3), so
dealing in is the costliest event of a K-8 hand (about 9.5 points; 68%
of greedy hands end on a discard).  The danger of discarding kind ``k`` is an
estimate of the probability of dealing in, from what the seat sees only:
``danger(k) = sum over opponents p of ready(p) * unsafe(k, p)``.

- ``ready(p)``: 1 for a declared seat (架听 / 硬子, public, J-4); otherwise a
  logistic in p's discards ``d`` and melds ``m`` (concealed kongs count: the
  meld is visible, its kind is not), fitted to greedy self-play (how often a
  greedy seat is ready, shanten <= 0): rule sets with a joker
  ``-4.26 + 0.458 d + 0.742 m``, without ``-5.30 + 0.303 d + 0.957 m``.
- ``unsafe(k, p)``: 0 for a 财神 (never claimed, K-2.2) and for a kind whose
  every copy the seat can see; 0.002 if p itself discarded ``k`` before
  (greedy keeps its wait: 0.1% measured); otherwise the measured rate at
  which a ready greedy seat could win on ``k`` by tile class (honor,
  terminal, 2/8, 3..7) and live copies the seat cannot see (1, 2, 3).

``greedy_safe`` folds (discards the least dangerous tile, ties by shanten
and greedy's order) when its best shanten is at least 2 and some opponent is
ready with probability >= 0.5, or its best shanten is 1 and an opponent is
ready with probability >= 0.85 -- on a rule set with a 财神 only; otherwise
it plays greedy, but among the discards of minimal shanten takes the safest
one when greedy's pick is more than 0.03 more dangerous.  Kongs and claims
are greedy's.  Measured on duplicate deals against greedy (A B A B): K-rules
+0.19 +- 0.11 points per hand (4,000 walls; deal-in 14.8% against 18.9%);
J-rules folding cost -2.8 +- 1.1 (a discard win costs the discarder only
its own share, J-6.5, and an opponent's self-draw costs every seat more),
hence no folding there (tie-breaks only: -0.5 +- 0.8, 3,000 walls).  Next
to a random seat, which deals in often, folding gains less (``caishen
match``, four policies: -0.11 against greedy).  The tuned bot (``caishen.sim.bots.tuned``)
weighs the same danger estimate by rule set.

``never``, ``always`` and ``threshold`` decide when to throw a 财神: they
are 飘 policies, an error on a rule set without a 财神 (J-1.1),
where they would silently play greedy; the one check is the bot registry's
(:func:`caishen.sim.bots.registry.check_fits`, reading :data:`PIAO_POLICIES`).
The threshold ``N`` is ``0..136``.  The spec grammar and its one parser are
:mod:`caishen.sim.bots.registry`'s.

With 架听 and 硬子 (facts ``declare``, ``hard``), for every policy but ``random``: a
discard that leaves a single wait is made as ``declare <k>`` (架听, J-4.1);
an offered 硬子 is always declared (J-4.2).  The random policy picks among
the legal actions, declarations included.

Scratch memory (``work = new_work()``: ``int64[N_WORK_ROWS, 34]``) is allocated once per batch by
the caller and reused, so a decision allocates nothing.  Its rows ``_W_*``: live tiles, shanten after
each discard, live effective tiles of each discard, threats, then the scratch of
:mod:`caishen.sim.effective` (:func:`_scratch`).
"""

from __future__ import annotations

import re

import numpy as np
from numba import njit

from caishen.sim.engine import (
    A_CHOW_LOW,
    A_DECLARE,
    A_DISCARD,
    A_HARD_DECLARE,
    A_KONG_ADDED,
    A_KONG_CONCEALED,
    A_KONG_EXPOSED,
    A_PASS,
    A_PONG,
    A_WIN,
    DECL_NONE,
    DF_CLAIMED,
    N_KINDS,
    N_SEATS,
    N_TILES,
    PH_HARD,
    PH_TURN,
    _random_action,
)
from caishen.sim.borrow import flat_rows
from caishen.sim.effective import N_SCRATCH, _best_effective, _shanten_each_discard
from caishen.sim.hand import _shanten
from caishen.sim.bots.piao_table import _piao_table_says
from caishen.sim.tiles import MELD_CHOW, MELD_KONG_CONCEALED, MELD_NONE

POLICY_RANDOM = 0
POLICY_GREEDY = 1
POLICY_NEVER = 2
POLICY_ALWAYS = 3
POLICY_THRESHOLD = 4
POLICY_SAFE = 6
POLICY_PIAO_TABLE = 5  # caishen.sim.bots.piao_table (issue 14)

#: policies that decide when to throw a 财神 (飘财, K-9.1): meaningless without a joker
PIAO_POLICIES = (POLICY_NEVER, POLICY_ALWAYS, POLICY_THRESHOLD, POLICY_PIAO_TABLE)
#: largest threshold N (tiles of the wall); any N >= 83 already means "always"
MAX_THRESHOLD = 136

#: live wall tiles at the start of a hand: 136 minus the 53 dealt
_DEALT = 53
_BIG = 99

# rows of the scratch matrix (:func:`new_work`)
_W_LIVE = 0
_W_AFTER = 1
_W_EFF = 2  # live effective tiles of each discard (caishen.sim.effective)
_W_TMP = 3
_W_SCRATCH = 4  # from here: caishen.sim.effective's scratch, N_SCRATCH words
#: rows of the bots' scratch matrix
N_WORK_ROWS = _W_SCRATCH + -(-N_SCRATCH // N_KINDS)


def new_work() -> np.ndarray:
    """The bots' scratch matrix, ``int64[N_WORK_ROWS, 34]`` (module docstring): allocate one per batch or
    game and pass it to every decision."""
    return np.zeros((N_WORK_ROWS, N_KINDS), np.int64)


@njit(cache=True, inline="always")
def _scratch(work):
    """The flat scratch of :mod:`caishen.sim.effective` inside ``work`` (a view).  Raises ``ValueError`` for
    a ``work`` with fewer than ``N_WORK_ROWS`` rows (one not made by :func:`new_work`)."""
    if work.shape[0] < N_WORK_ROWS:
        raise ValueError("the bots' work matrix has too few rows; make it with caishen.sim.bots.policies.new_work()")
    return flat_rows(work, _W_SCRATCH)


def parse_threshold(arg: str, spec: str) -> int:
    """The ``N`` of ``threshold:N`` (the registry's parser, :func:`caishen.sim.bots.registry.parse`, calls it):
    an integer ``0..MAX_THRESHOLD`` (tiles of the wall; leading zeros and a sign of zero allowed).

    Raises ``ValueError`` naming ``spec`` for a missing, non-integer or out-of-range ``N``.
    """
    from caishen.sim.rules.options import short_repr

    if not arg.strip():
        raise ValueError(f"policy {short_repr(spec)}: give the wall threshold, e.g. threshold:30")
    m = re.fullmatch(r"\s*([+-]?)([0-9]+)\s*", arg)
    if m is None:
        raise ValueError(f"policy {short_repr(spec)}: the threshold must be an integer")
    digits = m.group(2).lstrip("0") or "0"
    if m.group(1) == "-" and digits != "0":
        raise ValueError(f"policy {short_repr(spec)}: the threshold must be >= 0")
    param = int(digits) if len(digits) <= 4 else MAX_THRESHOLD + 1  # no slow int() of a huge string
    if param > MAX_THRESHOLD:
        raise ValueError(f"policy {short_repr(spec)}: the threshold must be <= {MAX_THRESHOLD} "
                         "(tiles of the wall)")
    return param


@njit(cache=True)
def _live_counts(st, s, live):
    """``live[k] = 4 -`` copies of ``k`` that seat ``s`` can see (own hand, discards, melds).

    Others' concealed kongs are not seen (K-5.3).
    """
    for k in range(N_KINDS):
        live[k] = 4 - np.int64(st.hands[s, k])
    for p in range(N_SEATS):
        for i in range(st.seat[p].n_discards):  # a claimed discard is counted in its meld
            live[st.discards[p, i]] -= 1 - np.int64((st.dflags[p, i] & DF_CLAIMED) != 0)
        for i in range(st.seat[p].n_melds):
            t = st.meld_type[p, i]
            k = st.meld_kind[p, i]
            if t == MELD_NONE or (t == MELD_KONG_CONCEALED and p != s):
                continue
            if t == MELD_CHOW:
                live[k] -= 1
                live[k + 1] -= 1
                live[k + 2] -= 1
            elif t == 2:  # pong
                live[k] -= 3
            else:
                live[k] -= 4
    for k in range(N_KINDS):
        live[k] = max(live[k], 0)


@njit(cache=True, inline="always")  # one caller (_greedy_turn): no kernel level of its own (registry._base_action)
def _best_discard(st, s, h, joker, tabs, mask, allow_joker, work):
    """Greedy discard among the legal discards: ``(kind, shanten after it)``.

    Minimum shanten, ties broken by live effective tiles, then the later
    kind (honors come last): :func:`caishen.sim.effective._best_effective`.  Without ``allow_joker``
    a joker is discarded only when nothing else is legal.  Fills ``work[_W_AFTER]`` with the
    shanten after each discard.
    """
    scratch = _scratch(work)  # checked on every turn, tie or not
    after = work[_W_AFTER]
    _shanten_each_discard(h, joker, tabs, after, scratch)
    legal = np.int64(0)  # bit k: discard k is legal (counted without branches on the data: faster)
    for k in range(N_KINDS):
        legal |= np.int64(mask[A_DISCARD + k] != 0) << k
    if not allow_joker and joker >= 0 and legal & ~(np.int64(1) << joker) != 0:
        legal &= ~(np.int64(1) << joker)  # a joker only when nothing else is legal
    best = _BIG
    for k in range(N_KINDS):
        best = min(best, after[k] if (legal >> k) & 1 else _BIG)
    tied = np.int64(0)  # bit k: discard k reaches the best shanten
    for k in range(N_KINDS):
        tied |= (((legal >> k) & 1) & np.int64(after[k] == best)) << k
    if tied & (tied - 1) == 0:  # one discard (or none): no tie to break
        pick = -1
        for k in range(N_KINDS):
            if (tied >> k) & 1:
                pick = k
        return pick, best
    live = work[_W_LIVE]
    _live_counts(st, s, live)
    pick, _ = _best_effective(h, joker, tabs, after, tied, live, scratch)
    return pick, best


@njit(cache=True)
def _greedy_turn(st, ep, tabs, mask, piao, work):
    """Own turn.  ``piao``: 0 plain greedy, 1 never 飘, 2 飘 whenever still ready."""
    s = st.table.to_act
    h = st.hands[s]
    joker = ep.joker
    if mask[A_WIN]:
        return A_WIN
    if piao == 2 and joker >= 0 and h[joker] > 0 and mask[A_DISCARD + joker]:
        h[joker] -= 1
        ready = _shanten(h, joker, tabs) <= 0
        h[joker] += 1
        if ready:
            return A_DISCARD + joker
    k, best = _best_discard(st, s, h, joker, tabs, mask, piao != 1, work)
    # kongs that keep the shanten (a free replacement draw and a chain link, K-6.5)
    for t in range(N_KINDS):
        if mask[A_KONG_ADDED + t] and work[_W_AFTER, t] <= best:
            return A_KONG_ADDED + t
        if mask[A_KONG_CONCEALED + t]:
            h[t] -= 4
            keep = _shanten(h, joker, tabs) <= best
            h[t] += 4
            if keep:
                return A_KONG_CONCEALED + t
    return A_DISCARD + k


@njit(cache=True)
def _best_after_claim(h, joker, tabs, work):
    """Best shanten reachable by one discard from the 3m+2 hand ``h`` (a joker only if
    nothing else is held); fills ``work[_W_TMP]``."""
    after = work[_W_TMP]
    _shanten_each_discard(h, joker, tabs, after, _scratch(work))
    best = _BIG
    for k in range(N_KINDS):
        if k != joker and after[k] < best:
            best = after[k]
    if best == _BIG and joker >= 0:
        best = after[joker]
    return best


@njit(cache=True, inline="always")
def _chow_shanten(h, k, j, joker, tabs, mask, work):
    """The shanten after the chow ``A_CHOW_LOW + j`` of ``k`` and its best discard, ``_BIG`` if not legal."""
    if not mask[A_CHOW_LOW + j]:
        return _BIG
    low = k - j
    for t in range(low, low + 3):
        if t != k:
            h[t] -= 1
    v = _best_after_claim(h, joker, tabs, work)
    for t in range(low, low + 3):
        if t != k:
            h[t] += 1
    return v


@njit(cache=True)
def _claim_options(h, joker, k, tabs, mask, work):
    """``(pong, kong, chow_low, chow_mid, chow_high)``: the shanten of the concealed ``h`` after each legal
    claim of the tile ``k`` on offer (and, but for the kong, its best discard); ``_BIG`` for a claim that
    is not legal.  ``h`` is changed and restored."""
    pong = _BIG
    kong = _BIG
    if mask[A_PONG]:
        h[k] -= 2
        pong = _best_after_claim(h, joker, tabs, work)
        h[k] += 2
    if mask[A_KONG_EXPOSED]:
        h[k] -= 3
        kong = _shanten(h, joker, tabs)
        h[k] += 3
    return (pong, kong, _chow_shanten(h, k, 0, joker, tabs, mask, work),
            _chow_shanten(h, k, 1, joker, tabs, mask, work), _chow_shanten(h, k, 2, joker, tabs, mask, work))


@njit(cache=True)
def _claim_shanten(st, ep, tabs, mask, work):
    """``(base, pong, kong, chow_low, chow_mid, chow_high)``: the seat's shanten now and after each
    legal claim of the tile on offer (:func:`_claim_options`; the tuned and learned bots' claim inputs)."""
    h = st.hands[st.table.to_act]
    joker = ep.joker
    base = _shanten(h, joker, tabs)
    pong, kong, c0, c1, c2 = _claim_options(h, joker, st.table.tile, tabs, mask, work)
    return base, pong, kong, c0, c1, c2


@njit(cache=True, inline="always")  # one caller (_choose_action), as _best_discard
def _greedy_claim(st, ep, tabs, mask, work):
    """Claim decision: win if allowed; meld only when it lowers the shanten."""
    if mask[A_WIN]:
        return A_WIN
    s = st.table.to_act
    h = st.hands[s]
    joker = ep.joker
    k = st.table.tile
    base = _shanten(h, joker, tabs)
    # with a joker, no meld of k does better than drawing it: the meld is one set of a target of h + k,
    # and a discard never lowers a shanten.  So unless k lowers the shanten of h, greedy passes (most
    # offers): one shanten instead of one per meld and discard.  Not without a joker: there the shanten
    # of a concealed hand caps each kind at four copies but does not see the meld's (the caller's to
    # count), and a meld can beat the bound (1m x 3 + 5z x 4 pongs the fourth 1m: tests/test_policies.py)
    if joker >= 0:
        h[k] += 1  # at most 3 held: the fourth copy is on offer
        bound = _shanten(h, joker, tabs)
        h[k] -= 1
        if bound >= base:
            return A_PASS
    pong, kong, c0, c1, c2 = _claim_options(h, joker, k, tabs, mask, work)
    choice = A_PASS
    best = base
    if pong < best:
        best = pong
        choice = A_PONG
    if kong < best:
        best = kong
        choice = A_KONG_EXPOSED
    if c0 < best:
        best = c0
        choice = A_CHOW_LOW
    if c1 < best:
        best = c1
        choice = A_CHOW_LOW + 1
    if c2 < best:
        choice = A_CHOW_LOW + 2
    return choice


#: scale of the fixed-point threats in the scratch row (parts per million)
_PPM = 1_000_000
#: layout of the threat row (``work[_W_TMP]`` on an own turn): threats, then discard masks
_T_SEEN = 4


@njit(cache=True)
def _threats(st, ep, s, row):
    """What seat ``s`` can tell of the others' readiness (module docstring, "Defence").

    Fills ``row: int64[>= 8]``: ``row[p]`` the estimated probability that seat
    ``p`` is ready in parts per million (0 for ``s``), ``row[4 + p]`` the
    kinds ``p`` discarded in this hand (bit ``k``).  Returns the largest
    threat as a float.  Reads only public facts: discards, meld counts,
    declarations.
    """
    tmax = 0.0
    for p in range(N_SEATS):
        row[p] = 0
        row[_T_SEEN + p] = 0
        if p == s:
            continue
        nd = st.seat[p].n_discards
        seen = np.int64(0)
        for i in range(nd):
            seen |= np.int64(1) << np.int64(st.discards[p, i])
        row[_T_SEEN + p] = seen
        nm = st.seat[p].n_melds
        if ep.declare != 0 and st.seat[p].decl != DECL_NONE:
            t = 1.0  # 架听 / 硬子 declared: ready (J-4.1, J-4.2)
        else:
            if ep.joker >= 0:
                z = -4.26 + 0.458 * nd + 0.742 * nm
            else:
                z = -5.30 + 0.303 * nd + 0.957 * nm
            t = 1.0 / (1.0 + np.exp(-z))
        row[p] = np.int64(t * _PPM)
        if t > tmax:
            tmax = t
    return tmax


@njit(cache=True)
def _unsafe(k, joker, live_k, seen_mask):
    """Probability that a ready opponent wins on kind ``k`` (module docstring, "Defence").

    ``live_k``: copies of ``k`` the discarding seat cannot see;
    ``seen_mask``: the opponent's discarded kinds (bits).
    """
    if k == joker or live_k <= 0:
        return 0.0
    if (seen_mask >> np.int64(k)) & 1:
        return 0.002
    u = live_k if live_k < 3 else 3
    if k >= 27:
        return 0.003 if u == 1 else (0.01 if u == 2 else 0.025)
    r = k % 9
    if r == 0 or r == 8:
        return 0.025 if u == 1 else (0.04 if u == 2 else 0.075)
    if r == 1 or r == 7:
        return 0.035 if u == 1 else (0.055 if u == 2 else 0.095)
    return 0.06 if u == 1 else (0.09 if u == 2 else 0.115)


@njit(cache=True)
def _danger(k, joker, live, row, s):
    """Estimated probability that seat ``s`` deals in by discarding ``k``: the sum over the
    opponents of ``ready(p) * unsafe(k, p)``; ``live``: :func:`_live_counts` of ``s``;
    ``row``: filled by :func:`_threats`."""
    d = 0.0
    for p in range(N_SEATS):
        if p != s and row[p] > 0:
            d += row[p] * (1.0 / _PPM) * _unsafe(k, joker, live[k], row[_T_SEEN + p])
    return d


@njit(cache=True, inline="always")  # one caller (_choose_action), as _best_discard
def _safe_turn(st, ep, tabs, mask, work):
    """``greedy_safe`` on its own turn (module docstring, "Defence")."""
    s = st.table.to_act
    joker = ep.joker
    a = _greedy_turn(st, ep, tabs, mask, np.int64(0), work)  # int64: one compile (_choose_action)
    if a == A_WIN or a >= A_KONG_CONCEALED:  # wins and greedy's kongs stand
        return a
    after = work[_W_AFTER]  # shanten after each discard (filled inside _greedy_turn)
    best = _BIG
    for k in range(N_KINDS):
        if mask[A_DISCARD + k] and after[k] < best:
            best = after[k]
    row = work[_W_TMP]
    tmax = _threats(st, ep, s, row)
    if tmax < 0.3:
        return a
    live = work[_W_LIVE]
    _live_counts(st, s, live)
    pick = a
    if joker >= 0 and ((best >= 2 and tmax >= 0.5) or (best == 1 and tmax >= 0.85)):  # fold
        pick_d = 1e9
        pick_sh = _BIG
        for k in range(N_KINDS):
            if not mask[A_DISCARD + k]:
                continue
            d = _danger(k, joker, live, row, s)
            if d < pick_d - 1e-9 or (abs(d - pick_d) <= 1e-9 and after[k] < pick_sh):
                pick = A_DISCARD + k
                pick_d = d
                pick_sh = after[k]
        return pick
    dg = _danger(a - A_DISCARD, joker, live, row, s)
    pick_d = dg
    for k in range(N_KINDS):
        if mask[A_DISCARD + k] and after[k] == best:
            d = _danger(k, joker, live, row, s)
            if d < pick_d:
                pick = A_DISCARD + k
                pick_d = d
    return pick if dg - pick_d > 0.03 else a


@njit(cache=True)
def _wall_gone(st):
    """Tiles of the live wall drawn since the deal (head and tail)."""
    return (st.table.head - _DEALT) + (N_TILES - 1 - st.table.tail)


@njit(cache=True)
def _choose_action(code, param, st, ep, rp, tabs, mask, work):
    """The action that policy ``code`` (with ``param``) takes for the seat to act.

    ``mask: uint8[N_ACTIONS]`` is the legal mask of the state; the returned
    action is always legal.  ``work``: :func:`new_work`, scratch.
    """
    if code == POLICY_RANDOM:
        return _random_action(st)
    if st.table.phase == PH_HARD:  # J-4.2: the bots declare 硬子 whenever offered
        return A_HARD_DECLARE
    if st.table.phase != PH_TURN:
        return _greedy_claim(st, ep, tabs, mask, work)
    if code == POLICY_SAFE:
        a = _safe_turn(st, ep, tabs, mask, work)
    else:
        # one call with a run-time int64 level: a literal per call site would compile _greedy_turn (and
        # everything it calls) once per literal (issue 11 item 3)
        piao = np.int64(0)  # POLICY_GREEDY
        if code == POLICY_NEVER:
            piao = 1
        elif code == POLICY_ALWAYS:
            piao = 2
        elif code == POLICY_THRESHOLD:
            piao = 2 if _wall_gone(st) <= param else 1
        elif code == POLICY_PIAO_TABLE:
            piao = 2 if _piao_table_says(st, ep, tabs, param) else 1
        a = _greedy_turn(st, ep, tabs, mask, piao, work)
    # J-4.1: declare 架听 with the chosen discard when it leaves a single wait
    if a < A_DECLARE and mask[A_DECLARE + a]:
        return A_DECLARE + a
    return a
