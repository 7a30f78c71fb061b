"""The search bot ``mc:N``: determinized Monte Carlo rollouts from the seat's information set.

At a decision with more than one reasonable action the bot

1. lists *candidates* (below);
2. draws ``N`` *determinizations*: the tiles hidden from its seat -- the
   other seats' concealed tiles, the kinds of their concealed kongs and the
   rest of the wall -- are redealt at random, consistently with everything
   the seat can see (its own hand and melds, every discard, every exposed
   meld, the hand sizes, the number of tiles left).  The bot never reads
   the real hidden tiles: the redeal is built from the seat's view only
   (:func:`_determinize`), and the other seats' private flags (passed pong
   or win, K-4.4 / J-3.5; the K-2.5 force, never set outside their own turn)
   are reset.  A uniform redeal gives the opponents hands far worse than
   the hands they hold after some turns of play, so each opponent's hand
   gets *virtual turns*: one tile drawn from the unseen tiles left for the
   wall and its shanten-greedy discard (not a 财神) put back in its place,
   once per discard the opponent made (at most :data:`MAX_VIRTUAL`), so the
   redeal stays consistent with the view;
3. plays every candidate on every determinization (the same ones for all
   candidates: common random numbers, so the comparison is paired), then
   its own seat with its *base policy* and every other seat with the greedy
   bot (``caishen.sim.bots.policies``) to the *end of the hand* (win or 流局: the
   rollouts stop there, no match or streak value beyond the hand);
4. keeps its base policy's choice unless another candidate gains more points
   for its own seat than that one (the mean of the paired differences over the
   ``N`` rollouts) by more than :data:`Z_SWITCH` standard errors; then it
   takes the candidate with the largest such lower bound.  Points: the
   rule set's points kernel (:func:`caishen.sim.rules.kernels._hand_points`:
   the engine's payments, K-8, or the recorded wins scored after the hand, J-6).

This is the rollout algorithm (policy improvement by simulation): the base
policy is the tuned bot of the rule set (``mc:N``, :mod:`caishen.sim.bots.tuned` with
``sim/rules/<rules>/tuned.json``) or greedy (``mc:N:greedy``, the tuned bot
with ``GREEDY_WEIGHTS``); the search changes its choice only where the
rollouts say another action is better.

Candidates: on its own turn the base policy's action, the discards that keep the
best shanten (at most :data:`MAX_TIED` of them, most live effective tiles
first), the least dangerous discard (``caishen.sim.bots.policies`` "Defence") when an
opponent may be ready, a 财神 discard (飘财, K-9.1) and every legal kong;
on a claim, ``pass`` and every legal pong, chow and exposed kong; on an
offered discard win, the win and ``pass`` (a discard win is paid by the
discarder alone under J-6.5, a self-draw by all three: passing a
small one can pay, at the price of J-3.5's ban on discard wins until the
next draw).  A self-draw, a robbed kong and a further winner of the same
discard always win; 硬子 is always declared (J-4.2), as the base policy does.

What the rollouts assume: the opponents play greedy (which the arena's
``greedy`` opponents do); the hidden tiles are distributed as a uniform
redeal improved by the virtual turns -- the sampler does not infer anything
from *which* tiles an opponent discarded, claimed or passed, and a declared
seat (架听 / 硬子, J-4) gets such a hand like the others (its
declaration stays).  Its edge comes from the value of its own hands
(exponents, patterns), its claims and 飘财, and the defence greedy's order
of tied discards cannot see.

Cost: every candidate costs one greedy rollout per determinization
(``benchmarks/bench_bots.py`` prints microseconds per rollout and rollouts
per second per core).
"""

from __future__ import annotations

import numpy as np
from numba import njit

from caishen.sim.engine import (
    SF_N_DISCARDS,
    A_CHOW_HIGH,
    A_CHOW_LOW,
    A_DECLARE,
    A_DISCARD,
    A_KONG_ADDED,
    A_KONG_CONCEALED,
    A_KONG_EXPOSED,
    A_PASS,
    A_WIN,
    EP_POINTS,
    EP_JOKER,
    N_KINDS,
    N_SEATS,
    PH_CLAIM,
    PH_DONE,
    PH_TURN,
    SC_DEALER,
    SC_DRAWN,
    SC_HEAD,
    SC_N_RON,
    SC_N_WINS,
    SC_PHASE,
    SC_Q_LEN,
    SC_Q_POS,
    SC_SRC,
    SC_STREAK,
    SC_TAIL,
    SC_TILE,
    SC_TO_ACT,
    SC_TURN,
    SF_CLAIM_OPTS,
    SF_FORCE_PIAO,
    SF_N_MELDS,
    SF_PASSED_PONG,
    SF_PASSED_WIN,
    SF_SCORE,
    SF_TENPAI,
    _legal_mask,
    _step,
)
from caishen.sim.engine.claims import _build_claims
from caishen.sim.hand import _shanten, _shanten_each_change
from caishen.sim.bots.policies import (
    POLICY_GREEDY,
    _W_AFTER,
    _W_DRAW,
    _W_LIVE,
    _W_TMP,
    _choose_action,
    _danger,
    _live_counts,
    _threats,
)
from caishen.sim.rng import _rng_below
from caishen.sim.rules.kernels import _hand_points
from caishen.sim.tiles import MELD_KONG_CONCEALED
from caishen.sim.bots.tuned import _tuned_action

#: most tied discards searched besides greedy's, the safest and the 财神
MAX_TIED = 2
#: most candidates of one decision
MAX_CAND = 10
#: largest N of mc:N (determinizations per decision)
MAX_DETERMINIZATIONS = 4096

# rows of the integer scratch ``ib: int64[4, 160]``
_I_CAND = 0  #: candidate actions
_I_POOL = 1  #: hidden tiles as a flat list (up to 136)
_I_COUNT = 2  #: hidden counts per kind, then scratch
_I_EFF = 3  #: live effective tiles per discard kind; shanten scratch of the virtual turns
#: most virtual turns of an opponent (module docstring)
MAX_VIRTUAL = 12
#: a candidate replaces greedy's choice only if its mean gain over greedy's exceeds this many standard errors
Z_SWITCH = 2.0


@njit(cache=True)
def _copy_state(dst, src):
    """Copy the game state record ``src`` into ``dst`` (every field)."""
    dst.wall[:] = src.wall
    dst.hands[:] = src.hands
    dst.meld_type[:] = src.meld_type
    dst.meld_kind[:] = src.meld_kind
    dst.discards[:] = src.discards
    dst.dflags[:] = src.dflags
    dst.circle[:] = src.circle
    dst.mask[:] = src.mask
    dst.legal[:] = src.legal
    dst.seat[:] = src.seat
    dst.sc[:] = src.sc
    dst.queue[:] = src.queue
    dst.tmp[:] = src.tmp
    dst.counts[:] = src.counts
    dst.wins[:] = src.wins
    dst.work[:] = src.work
    dst.rng[:] = src.rng


@njit(cache=True)
def _determinize(root, st, me, ep, rp, tabs, rng, ib):
    """Fill ``root`` with ``st`` whose tiles hidden from seat ``me`` are redealt at random.

    Reads from ``st`` only what ``me`` sees (module docstring); the hidden
    parts of ``root`` are overwritten: the other seats' concealed tiles (same
    sizes), the kinds of their concealed kongs (a kind with four unseen
    copies), the wall from the next draw to the last replacement draw.  The
    other seats' readiness cache is recomputed, their private flags reset;
    on a pending claim the claim queue is rebuilt from the new hands and
    resumes at ``me``.  ``rng``: ``uint64[4]`` stream; ``ib``: int scratch.
    """
    _copy_state(root, st)
    joker = ep[EP_JOKER]
    pool = ib[_I_POOL]
    cnt = ib[_I_COUNT]
    _live_counts(st, me, cnt)  # 4 - what me sees (others' concealed kongs are unseen)
    head = st.sc[SC_HEAD]
    tail = st.sc[SC_TAIL]
    # the kinds of the others' concealed kongs: uniform among kinds with four unseen copies
    for p in range(N_SEATS):
        if p == me:
            continue
        for i in range(st.seat[p, SF_N_MELDS]):
            if st.meld_type[p, i] == MELD_KONG_CONCEALED:
                n4 = 0
                for k in range(N_KINDS):
                    if cnt[k] >= 4:
                        n4 += 1
                j = _rng_below(rng, n4) if n4 > 0 else 0
                for k in range(N_KINDS):
                    if cnt[k] >= 4:
                        if j == 0:
                            root.meld_kind[p, i] = k
                            cnt[k] -= 4
                            break
                        j -= 1
    n = 0
    for k in range(N_KINDS):
        for _ in range(cnt[k]):
            pool[n] = k
            n += 1
    # Fisher-Yates over the pool (its size is public: hands + wall left)
    for i in range(n - 1, 0, -1):
        j = _rng_below(rng, i + 1)
        t = pool[i]
        pool[i] = pool[j]
        pool[j] = t
    pos = 0
    for p in range(N_SEATS):  # the hands, sizes as before
        if p == me:
            continue
        size = 0
        for k in range(N_KINDS):
            size += root.hands[p, k]
            root.hands[p, k] = 0
        for _ in range(size):
            root.hands[p, pool[pos]] += 1
            pos += 1
    # virtual turns: a hand as far along as p's play (one draw from the unseen tiles left and the
    # shanten-greedy discard put back in its place, once per discard of p)
    row = ib[_I_EFF]
    for p in range(N_SEATS):
        if p == me:
            continue
        v = st.seat[p, SF_N_DISCARDS]
        if v > MAX_VIRTUAL:
            v = MAX_VIRTUAL
        if pos >= n:
            v = 0
        hp = root.hands[p]
        for _ in range(v):
            j = pos + _rng_below(rng, n - pos)
            hp[pool[j]] += 1
            _shanten_each_change(hp, joker, tabs, -1, row)
            pick = -1
            for k in range(N_KINDS):
                if hp[k] > 0 and k != joker and (pick < 0 or row[k] <= row[pick]):
                    pick = k
            if pick < 0:
                pick = joker
            hp[pick] -= 1
            pool[j] = pick
    for p in range(N_SEATS):
        if p != me:
            root.seat[p, SF_TENPAI] = 1 if _shanten(root.hands[p], joker, tabs) <= 0 else 0
            root.seat[p, SF_FORCE_PIAO] = 0
            root.seat[p, SF_PASSED_PONG] = 0
            root.seat[p, SF_PASSED_WIN] = 0
    for i in range(head, tail + 1):
        if pos < n:
            root.wall[i] = pool[pos]
            pos += 1
    if root.sc[SC_TURN] != me or root.sc[SC_PHASE] != PH_TURN:  # not me on my own turn
        root.sc[SC_DRAWN] = -1  # the discarder's drawn tile is private
    if st.sc[SC_PHASE] == PH_CLAIM:
        # who else may claim depends on the hidden hands: rebuild the queue, resume at me
        _build_claims(root, ep, rp, tabs, st.sc[SC_SRC], st.sc[SC_TILE], False)
        root.seat[me, SF_CLAIM_OPTS] = st.seat[me, SF_CLAIM_OPTS]
        q = 0
        while q < root.sc[SC_Q_LEN] and root.queue[q, 0] != me:
            q += 1
        root.sc[SC_Q_POS] = q
        root.sc[SC_TO_ACT] = me
        root.sc[SC_PHASE] = PH_CLAIM


@njit(cache=True)
def _hand_value(roll, me, ep, pt, pay):
    """Seat ``me``'s points in the finished hand ``roll``: its rule set's points kernel
    (:func:`caishen.sim.rules.kernels._hand_points`, code ``ep[EP_POINTS]``) with the points
    context ``pt``; ``pay: int64[4]`` scratch."""
    _hand_points(ep[EP_POINTS], roll.sc[SC_DEALER], roll.sc[SC_STREAK], roll.sc[SC_N_WINS], roll.wins,
                 roll.seat[:, SF_SCORE], pt, pay)
    return pay[me]


@njit(cache=True)
def _rollout(roll, me, w, ep, rp, tabs, work):
    """Play ``roll`` to the end of the hand: seat ``me`` with its base policy (the tuned bot
    with weights ``w``), every other seat with greedy."""
    while roll.sc[SC_PHASE] != PH_DONE:
        _legal_mask(roll, ep)
        if roll.sc[SC_TO_ACT] == me:
            a = _tuned_action(w, roll, ep, tabs, roll.mask, work)
        else:
            a = _choose_action(POLICY_GREEDY, 0, roll, ep, rp, tabs, roll.mask, work)
        _step(roll, ep, rp, tabs, a)


@njit(cache=True)
def _add_cand(cand, n, a):
    for i in range(n):
        if cand[i] == a:
            return n
    if n < MAX_CAND:
        cand[n] = a
        n += 1
    return n


@njit(cache=True)
def _turn_candidates(st, ep, tabs, mask, work, base_a, cand, eff):
    """Candidates of an own turn (module docstring); the base policy's first.  Returns how many."""
    s = st.sc[SC_TO_ACT]
    h = st.hands[s]
    joker = ep[EP_JOKER]
    n = _add_cand(cand, 0, base_a)
    after = work[_W_AFTER]
    _shanten_each_change(h, joker, tabs, -1, after)
    best = 99
    for k in range(N_KINDS):
        if mask[A_DISCARD + k] and after[k] < best:
            best = after[k]
    live = work[_W_LIVE]
    _live_counts(st, s, live)
    for k in range(N_KINDS):
        eff[k] = -1
        if mask[A_DISCARD + k] and after[k] == best:
            h[k] -= 1
            _shanten_each_change(h, joker, tabs, 1, work[_W_DRAW])
            h[k] += 1
            e = 0
            for t in range(N_KINDS):
                if work[_W_DRAW, t] < best:
                    e += live[t]
            eff[k] = e
    for _ in range(MAX_TIED):  # the tied discards, most live effective tiles first
        pick = -1
        for k in range(N_KINDS):
            if eff[k] >= 0 and (pick < 0 or eff[k] > eff[pick]):
                pick = k
        if pick < 0:
            break
        eff[pick] = -1
        n = _add_cand(cand, n, A_DECLARE + pick if mask[A_DECLARE + pick] else A_DISCARD + pick)
    row = work[_W_TMP]
    if _threats(st, ep, s, row) >= 0.3:  # the least dangerous discard
        pick = -1
        pick_d = 1e9
        for k in range(N_KINDS):
            if mask[A_DISCARD + k]:
                d = _danger(k, joker, live, row, s)
                if d < pick_d:
                    pick = k
                    pick_d = d
        if pick >= 0:
            n = _add_cand(cand, n, A_DECLARE + pick if mask[A_DECLARE + pick] else A_DISCARD + pick)
    if joker >= 0 and mask[A_DISCARD + joker]:  # 飘财
        n = _add_cand(cand, n, A_DISCARD + joker)
    for t in range(N_KINDS):
        if mask[A_KONG_CONCEALED + t]:
            n = _add_cand(cand, n, A_KONG_CONCEALED + t)
        if mask[A_KONG_ADDED + t]:
            n = _add_cand(cand, n, A_KONG_ADDED + t)
    return n


@njit(cache=True)
def _mc_action(n_det, w, st, ep, rp, tabs, mask, work, sims, fb, ib, rng, pt, pay):
    """The search bot's action for the seat to act (module docstring).

    ``n_det``: determinizations (``N`` of ``mc:N``); ``w: float64[N_W]``: the
    weights of its base policy (:mod:`caishen.sim.bots.tuned`; ``GREEDY_WEIGHTS`` play as
    greedy); ``mask``: the legal mask of ``st``; ``work: int64[4, 34]``:
    scratch of the policy kernels; ``sims: STATE_DTYPE[2]``: scratch states
    (the determinized root and the rollout); ``fb: float64[4, 160]``, ``ib:
    int64[4, 160]``: scratch; ``rng: uint64[4]``: the bot's stream (the
    determinizations); ``pt``, ``pay``: :func:`_hand_value`'s points context
    and scratch.  ``st`` is not changed.
    """
    ph = st.sc[SC_PHASE]
    if mask[A_WIN] and (ph != PH_CLAIM or st.sc[SC_N_RON] > 0):
        return A_WIN  # self-draws, robbed kongs, a further winner of one discard
    if ph != PH_TURN and ph != PH_CLAIM:
        return _tuned_action(w, st, ep, tabs, mask, work)  # 硬子 (J-4.2)
    me = st.sc[SC_TO_ACT]
    base_a = _tuned_action(w, st, ep, tabs, mask, work)
    cand = ib[_I_CAND]
    if mask[A_WIN]:  # a discard win: take it, or pass it for a better hand (J-3.5 bans discard wins meanwhile)
        n = _add_cand(cand, 0, A_WIN)
        n = _add_cand(cand, n, A_PASS)
    elif ph == PH_TURN:
        n = _turn_candidates(st, ep, tabs, mask, work, base_a, cand, ib[_I_EFF])
    else:
        n = _add_cand(cand, 0, base_a)
        n = _add_cand(cand, n, A_PASS)
        for a in range(A_CHOW_LOW, A_KONG_EXPOSED + 1):
            if mask[a]:
                n = _add_cand(cand, n, a)
    if n <= 1:
        return base_a
    gain = fb[0]  # sum over determinizations of (value of c - value of the base policy's choice)
    gain2 = fb[1]  # ... of its square
    for c in range(n):
        gain[c] = 0.0
        gain2[c] = 0.0
    root = sims[0]
    roll = sims[1]
    for _ in range(n_det):
        _determinize(root, st, me, ep, rp, tabs, rng, ib)
        v0 = 0.0
        for c in range(n):
            _copy_state(roll, root)
            _step(roll, ep, rp, tabs, cand[c])
            _rollout(roll, me, w, ep, rp, tabs, work)
            v = float(_hand_value(roll, me, ep, pt, pay))
            if c == 0:
                v0 = v
            else:
                gain[c] += v - v0
                gain2[c] += (v - v0) * (v - v0)
    # the base choice stands unless a candidate gains more than Z_SWITCH standard errors (paired)
    pick = 0
    pick_sc = 0.0
    for c in range(1, n):
        m = gain[c] / n_det
        if n_det > 1:
            var = (gain2[c] - gain[c] * m) / (n_det - 1)
            sc = m - Z_SWITCH * np.sqrt(max(var, 0.0) / n_det)
        else:
            sc = m
        if sc > pick_sc:
            pick = c
            pick_sc = sc
    return cand[pick]
