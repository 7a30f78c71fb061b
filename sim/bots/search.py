"""The search bot ``mc:N``: determinized Monte Carlo rollouts from the seat's information set.

At a decision with more than one reasonable action the bot

1. lists *candidates* (below);
2. draws *determinizations* (the race, 4., says how many): the tiles hidden from its seat -- the
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
3. plays the candidates on the determinizations (every candidate in the race
   on the same ones: common random numbers, so the comparison is paired), then
   its own seat with its *base policy* and every other seat with greedy or
   random (``caishen.sim.bots.policies``; the *opponent model* below) to the *end
   of the hand* (win or 流局: the rollouts stop there, no match or streak value
   beyond the hand);
4. races them (successive elimination): every candidate plays the first
   ``max(2, N // 2)`` determinizations; after each further one a candidate is
   dropped once its mean paired gain over the base policy's choice is at or
   below 0 by a one-sided Student-t bound at level :data:`ALPHA_DROP`
   (:func:`_drop`); the survivors play on until the budget of ``N`` rollouts
   per candidate is spent (at most ``N * candidates`` rollouts a decision,
   fewer when the race ends early because only the base choice is left);
5. keeps its base policy's choice unless a candidate with at least
   :data:`MIN_SWITCH` paired rollouts has a one-sided lower confidence bound on
   its mean gain above 0: the bound is ``mean - t * sd / sqrt(k)`` with ``t``
   Student's quantile ``1 - ALPHA_SWITCH / (candidates - 1)`` for ``k - 1``
   degrees of freedom (Bonferroni over the candidates tested,
   :func:`_switch_pick`); then it takes the candidate with the largest bound.
   With ``N`` of 2..8 the standard error is itself noisy and several
   candidates are tested at once, so a normal 2-standard-error rule would
   switch on noise; ``mc:1`` .. ``mc:3`` never switch.  Points: the
   rule set's points kernel (:func:`caishen.sim.rules.kernels._hand_points`:
   the engine's payments, K-8, or the recorded wins scored after the hand, J-6).

Opponent model (:func:`_opp_posterior`, :func:`_opp_sample`): from the discards
alone, which every seat sees, each opponent gets a posterior probability of
playing like the random bot rather than the greedy one: the prior
:data:`OPP_PRIOR` times the likelihood ratio of its discards' categories
(honour or terminal, 2 or 8, 3 to 7; greedy throws its isolated honours and
terminals first, random any kind it holds) by their place in its discards
(:data:`OPP_LLR`, measured on greedy and random seats; the 财神 is left out).
Each determinization draws every opponent's type from its posterior: a random
one keeps its uniform redeal and plays random in the rollout, a greedy one
gets the virtual turns and plays greedy.  The random bots' choices in a
rollout come from the bot's own stream, never from the game's.

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

What the rollouts assume: the opponents play greedy or random (the tuned
bot and other bots are modelled as one of the two); the hidden tiles are distributed as a uniform
redeal improved by the virtual turns -- beyond the opponent's type the
sampler infers nothing from *which* tiles it discarded, claimed or passed, and a declared
seat (架听 / 硬子, J-4) gets such a hand like the others (its
declaration stays).  Its edge comes from the value of its own hands
(exponents, patterns), its claims and 飘财, and the defence greedy's order
of tied discards cannot see.

Cost: at most ``N`` rollouts per candidate, fewer after the race drops
candidates (``benchmarks/bench_bots.py`` prints microseconds per rollout and
milliseconds per decision, one core).
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np
from numba import njit
from scipy.special import stdtrit

from caishen.sim.engine import (
    _copy_state,
    A_CHOW_LOW,
    A_DECLARE,
    A_DISCARD,
    A_KONG_ADDED,
    A_KONG_CONCEALED,
    A_KONG_EXPOSED,
    A_PASS,
    A_WIN,
    N_KINDS,
    N_SEATS,
    PH_CLAIM,
    PH_DONE,
    PH_TURN,
    _legal_mask,
    _step,
)
from caishen.sim.engine.claims import _build_claims
from caishen.sim.effective import _effective_each, _shanten_each_discard
from caishen.sim.hand import _shanten, _shanten_each_change
from caishen.sim.bots.policies import (
    POLICY_GREEDY,
    POLICY_RANDOM,
    _W_AFTER,
    _W_LIVE,
    _W_TMP,
    _choose_action,
    _danger,
    _live_counts,
    _scratch,
    _threats,
)
from caishen.sim.rng import _rng_below, _rng_next
from caishen.sim.rules.kernels import _hand_points
from caishen.sim.tiles import MELD_KONG_CONCEALED
from caishen.sim.bots.tuned import _tuned_action

#: most tied discards searched besides greedy's, the safest and the 财神
MAX_TIED = 2
#: most candidates of one decision
MAX_CAND = 10
#: largest N of mc:N (rollouts per candidate action at most)
MAX_DETERMINIZATIONS = 4096

# rows of the integer scratch ``ib: int64[4, 160]``
_I_CAND = 0  #: candidate actions
_I_POOL = 1  #: hidden tiles as a flat list (up to 136)
_I_COUNT = 2  #: hidden counts per kind, then scratch
_I_EFF = 3  #: live effective tiles per discard kind; shanten scratch of the virtual turns
#: most virtual turns of an opponent (module docstring)
MAX_VIRTUAL = 12

# the switch rule and the race (module docstring)
#: one-sided family-wise error of the switch rule: the chance that some candidate no better than the base
#: choice replaces it (Bonferroni over the candidates tested)
ALPHA_SWITCH = 0.05
#: fewest paired rollouts a candidate needs before it may replace the base choice (mc:1..3 never switch)
MIN_SWITCH = 4
#: one-sided level at which the race drops a candidate as no better than the base choice
ALPHA_DROP = 0.2
#: degrees of freedom of the tables' last row; more use that row (conservative: t's quantiles fall with df)
T_DF_MAX = 256
#: ``T_SWITCH[df - 1, m - 1]``: Student's t quantile ``1 - ALPHA_SWITCH / m`` with ``df`` degrees of freedom
T_SWITCH = np.array([[stdtrit(df, 1.0 - ALPHA_SWITCH / m) for m in range(1, MAX_CAND)]
                     for df in range(1, T_DF_MAX + 1)])
#: ``T_DROP[df - 1]``: Student's t quantile ``1 - ALPHA_DROP`` with ``df`` degrees of freedom
T_DROP = np.array([stdtrit(df, 1.0 - ALPHA_DROP) for df in range(1, T_DF_MAX + 1)])

# the opponent model (module docstring)
#: prior probability that an opponent plays like the random bot
OPP_PRIOR = 0.2
#: discards per row of :data:`OPP_LLR`
OPP_ROW = 4
#: ``OPP_LLR[i // OPP_ROW, category]``: log-likelihood ratio, random bot over greedy bot, of a seat's
#: ``i``-th discard (``i`` from 0; later discards use the last row) by its category (:func:`_discard_category`:
#: 0 an honour or a terminal, 1 a 2 or an 8, 2 a 3 to 7); measured on hands of seeds 0..299 of both rule
#: sets, greedy and random seats (add-one counts)
OPP_LLR = np.array([[-0.717, 0.809, 1.051],
                    [-0.094, -0.219, 0.190],
                    [-0.133, -0.086, 0.154],
                    [-0.104, 0.025, 0.073]])
#: first column of row ``_I_CAND`` of ``ib`` holding the seats' rollout policies (after the candidates)
_POL_AT = 16
#: first column of row ``_F_COUNT`` of ``fb`` holding the opponents' posteriors (after the candidates)
_Q_AT = 16
# rows of the float scratch ``fb: float64[4, 160]``
_F_GAIN = 0  #: per candidate: sum of its paired differences to the base choice
_F_GAIN2 = 1  #: ... of their squares
_F_COUNT = 2  #: per candidate: its paired rollouts; then the opponents' posteriors
_F_ACTIVE = 3  #: per candidate: 1 while still in the race


class SearchContext(NamedTuple):
    """The search bot's scratch and stream (:func:`_mc_action`), the ``search`` field of the bot context
    (:class:`caishen.sim.bots.registry.BotContext`, built by :func:`caishen.sim.bots.registry.make_context`)."""

    states: np.ndarray  #: two scratch game states (:func:`caishen.sim.engine.new_state`): the root copy and a rollout
    scratch_f: np.ndarray  #: float64[4, 160]: rows for the candidates' values
    scratch_i: np.ndarray  #: int64[4, 160]: rows for the determinized tiles and candidates
    rng: np.ndarray  #: uint64[4]: the determinizations' random stream (:mod:`caishen.sim.rng`)
    points: tuple  #: the rule set's points context (:func:`caishen.sim.rules.kernels.points_context`)
    pay: np.ndarray  #: int64[4]: the scratch of a rollout's scores, points per seat


@njit(cache=True)
def _determinize(root, st, me, ep, rp, tabs, rng, ib, pol):
    """Fill ``root`` with ``st`` whose tiles hidden from seat ``me`` are redealt at random.

    Reads from ``st`` only what ``me`` sees (module docstring); the hidden
    parts of ``root`` are overwritten: the other seats' concealed tiles (same
    sizes), the kinds of their concealed kongs (a kind with four unseen
    copies), the wall from the next draw to the last replacement draw.  The
    other seats' readiness cache is recomputed, their private flags reset;
    on a pending claim the claim queue is rebuilt from the new hands and
    resumes at ``me``.  ``pol: int64[4]``: the rollout policy of each seat (:func:`_opp_sample`): an
    opponent played as greedy gets the virtual turns, one played as random keeps its uniform redeal.
    ``root``'s random stream (the random bots' choices) is drawn from ``rng: uint64[4]``, the bot's
    stream, not copied from ``st``; ``ib``: int scratch.
    """
    _copy_state(root, st)
    for i in range(4):
        root.rng[i] = _rng_next(rng)
    joker = ep.joker
    pool = ib[_I_POOL]
    cnt = ib[_I_COUNT]
    _live_counts(st, me, cnt)  # 4 - what me sees (others' concealed kongs are unseen)
    head = st.table.head
    tail = st.table.tail
    # the kinds of the others' concealed kongs: uniform among kinds with four unseen copies
    for p in range(N_SEATS):
        if p == me:
            continue
        for i in range(st.seat[p].n_melds):
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
        v = st.seat[p].n_discards
        if v > MAX_VIRTUAL:
            v = MAX_VIRTUAL
        if pos >= n or pol[p] != POLICY_GREEDY:
            v = 0
        hp = root.hands[p]
        for _ in range(v):
            j = pos + _rng_below(rng, n - pos)
            hp[pool[j]] += 1
            _shanten_each_change(hp, joker, tabs, np.int64(-1), row)
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
            sh = _shanten(root.hands[p], joker, tabs)  # the redealt hand's (engine.deal._update_tenpai)
            root.seat[p].shanten = sh
            root.seat[p].ready = 1 if sh <= 0 else 0
            root.seat[p].force_joker = 0
            root.seat[p].passed_pong = 0
            root.seat[p].passed_win = 0
    for i in range(head, tail + 1):
        if pos < n:
            root.wall[i] = pool[pos]
            pos += 1
    if root.table.turn != me or root.table.phase != PH_TURN:  # not me on my own turn
        root.table.drawn = -1  # the discarder's drawn tile is private
    if st.table.phase == PH_CLAIM:
        # who else may claim depends on the hidden hands: rebuild the queue, resume at me
        _build_claims(root, ep, rp, tabs, st.table.src, st.table.tile, False)
        root.seat[me].claim_opts = st.seat[me].claim_opts
        q = 0
        while q < root.table.q_len and root.queue[q, 0] != me:
            q += 1
        root.table.q_pos = q
        root.table.to_act = me
        root.table.phase = PH_CLAIM


@njit(cache=True)
def _hand_value(roll, me, ep, pt, pay):
    """Seat ``me``'s points in the finished hand ``roll``: its rule set's points kernel
    (:func:`caishen.sim.rules.kernels._hand_points`, code ``ep.points``) with the points
    context ``pt``; ``pay: int64[4]`` scratch."""
    _hand_points(ep.points, roll.table.dealer, roll.table.streak, roll.table.n_wins, roll.wins,
                 roll.seat.score, pt, pay)
    return pay[me]


@njit(cache=True)
def _rollout(roll, me, w, ep, rp, tabs, work, pol):
    """Play ``roll`` to the end of the hand: seat ``me`` with its base policy (the tuned bot
    with weights ``w``), every other seat ``p`` with the kernel policy ``pol[p]`` (greedy or random)."""
    while roll.table.phase != PH_DONE:
        _legal_mask(roll, ep)
        s = roll.table.to_act
        if s == me:
            a = _tuned_action(w, roll, ep, tabs, roll.mask, work)
        else:
            a = _choose_action(pol[s], np.int64(0), roll, ep, rp, tabs, roll.mask, work)  # not a literal: one compile
        _step(roll, ep, rp, tabs, a)


@njit(cache=True)
def _discard_category(k):
    """:data:`OPP_LLR`'s column of a discard of kind ``k``: 0 an honour or a terminal (1, 9), 1 a 2 or
    an 8, 2 a 3 to 7."""
    if k >= 27:
        return 0
    r = k % 9
    if r == 0 or r == 8:
        return 0
    if r == 1 or r == 7:
        return 1
    return 2


@njit(cache=True)
def _opp_posterior(st, me, ep, q):
    """Fill ``q: float64[4]`` with each opponent's posterior probability of playing like the random bot
    (``q[me] = 0``): :data:`OPP_PRIOR` updated by :data:`OPP_LLR` over its discards, the 财神 left out.
    Reads only the discards, which every seat sees."""
    joker = ep.joker
    for p in range(N_SEATS):
        q[p] = 0.0
        if p == me:
            continue
        llr = np.log(OPP_PRIOR / (1.0 - OPP_PRIOR))
        for i in range(st.seat[p].n_discards):
            k = st.discards[p, i]
            if k != joker:
                row = i // OPP_ROW
                if row >= OPP_LLR.shape[0]:
                    row = OPP_LLR.shape[0] - 1
                llr += OPP_LLR[row, _discard_category(k)]
        q[p] = 1.0 / (1.0 + np.exp(-llr))


@njit(cache=True)
def _opp_sample(q, me, rng, pol):
    """Draw each seat's rollout policy into ``pol: int64[4]``: seat ``p != me`` random with probability
    ``q[p]``, else greedy (``pol[me]``: greedy, unused); ``rng: uint64[4]``."""
    for p in range(N_SEATS):
        pol[p] = POLICY_GREEDY
        if p != me and float(_rng_next(rng) >> np.uint64(11)) * (1.0 / 9007199254740992.0) < q[p]:
            pol[p] = POLICY_RANDOM


@njit(cache=True)
def _switch_pick(gain, gain2, cnt, n):
    """The switch rule (module docstring): the index of the candidate to play, 0 (the base choice) unless a
    candidate's one-sided lower confidence bound on its mean paired gain is above 0.

    ``gain``, ``gain2``, ``cnt``: ``float64`` per candidate (index 0 the base choice, unused): the sum of
    its paired differences to the base choice, of their squares, and their number; ``n``: candidates.
    The bound of a candidate with ``k >= MIN_SWITCH`` rollouts is ``mean - t * sd / sqrt(k)``, ``t``
    Student's quantile ``1 - ALPHA_SWITCH / (n - 1)`` with ``k - 1`` degrees of freedom
    (:data:`T_SWITCH`); the largest bound above 0 wins.
    """
    pick = 0
    best = 0.0
    for c in range(1, n):
        k = cnt[c]
        if k < MIN_SWITCH:
            continue
        m = gain[c] / k
        var = (gain2[c] - gain[c] * m) / (k - 1.0)
        df = int(k) - 1
        if df > T_DF_MAX:
            df = T_DF_MAX
        lb = m - T_SWITCH[df - 1, n - 2] * np.sqrt(max(var, 0.0) / k)
        if lb > best:
            pick = c
            best = lb
    return pick


@njit(cache=True)
def _drop(gain, gain2, cnt, c):
    """True if the race drops candidate ``c`` (module docstring): two or more paired rollouts and a
    one-sided upper bound ``mean + t * sd / sqrt(k)`` at or below 0, ``t`` Student's quantile
    ``1 - ALPHA_DROP`` with ``k - 1`` degrees of freedom (:data:`T_DROP`); arrays as :func:`_switch_pick`."""
    k = cnt[c]
    if k < 2:
        return False
    m = gain[c] / k
    var = (gain2[c] - gain[c] * m) / (k - 1.0)
    df = int(k) - 1
    if df > T_DF_MAX:
        df = T_DF_MAX
    return m + T_DROP[df - 1] * np.sqrt(max(var, 0.0) / k) <= 0.0


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
    s = st.table.to_act
    h = st.hands[s]
    joker = ep.joker
    n = _add_cand(cand, 0, base_a)
    after = work[_W_AFTER]
    _shanten_each_discard(h, joker, tabs, after, _scratch(work))
    best = 99
    for k in range(N_KINDS):
        if mask[A_DISCARD + k] and after[k] < best:
            best = after[k]
    live = work[_W_LIVE]
    _live_counts(st, s, live)
    tied = np.int64(0)
    for k in range(N_KINDS):
        eff[k] = -1
        if mask[A_DISCARD + k] and after[k] == best:
            tied |= np.int64(1) << k
    _effective_each(h, joker, tabs, after, tied, live, _scratch(work), eff)
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
def _mc_action(n_det, w, st, ep, rp, tabs, mask, work, sx):
    """The search bot's action for the seat to act (module docstring).

    ``n_det``: ``N`` of ``mc:N``, rollouts per candidate (the race's budget); ``w: float64[N_W]``: the
    weights of its base policy (:mod:`caishen.sim.bots.tuned`; ``GREEDY_WEIGHTS`` play as
    greedy); ``mask``: the legal mask of ``st``; ``work: int64[4, 34]``:
    scratch of the policy kernels; ``sx``: its :class:`SearchContext` (scratch states, the
    determinized root and the rollout; scratch rows; the bot's stream for the determinizations, the
    opponents' types and the rollouts' random bots; :func:`_hand_value`'s points context and scratch).
    ``st`` is not changed.
    """
    sims, fb, ib, rng, pt, pay = sx.states, sx.scratch_f, sx.scratch_i, sx.rng, sx.points, sx.pay
    ph = st.table.phase
    if mask[A_WIN] and (ph != PH_CLAIM or st.table.n_discard_wins > 0):
        return A_WIN  # self-draws, robbed kongs, a further winner of one discard
    if ph != PH_TURN and ph != PH_CLAIM:
        return _tuned_action(w, st, ep, tabs, mask, work)  # 硬子 (J-4.2)
    me = st.table.to_act
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
    gain = fb[_F_GAIN]
    gain2 = fb[_F_GAIN2]
    cnt = fb[_F_COUNT]
    active = fb[_F_ACTIVE]
    for c in range(n):
        gain[c] = 0.0
        gain2[c] = 0.0
        cnt[c] = 0.0
        active[c] = 1.0
    q = fb[_F_COUNT, _Q_AT:_Q_AT + N_SEATS]
    pol = ib[_I_CAND, _POL_AT:_POL_AT + N_SEATS]
    _opp_posterior(st, me, ep, q)
    root = sims[0]
    roll = sims[1]
    # the race: every candidate on the first max(2, N // 2) determinizations, then only those not dropped,
    # until the budget of N rollouts per candidate is spent or only the base choice is left
    budget = n_det * n
    first = max(2, n_det // 2)
    used = 0
    n_act = n
    d = 0
    while n_act > 1 and used + n_act <= budget:
        _opp_sample(q, me, rng, pol)
        _determinize(root, st, me, ep, rp, tabs, rng, ib, pol)
        v0 = 0.0
        for c in range(n):
            if active[c] == 0.0:
                continue
            _copy_state(roll, root)
            _step(roll, ep, rp, tabs, cand[c])
            _rollout(roll, me, w, ep, rp, tabs, work, pol)
            v = float(_hand_value(roll, me, ep, pt, pay))
            if c == 0:
                v0 = v
            else:
                gain[c] += v - v0
                gain2[c] += (v - v0) * (v - v0)
                cnt[c] += 1.0
        used += n_act
        d += 1
        if d >= first:
            for c in range(1, n):
                if active[c] == 1.0 and _drop(gain, gain2, cnt, c):
                    active[c] = 0.0
                    n_act -= 1
    return cand[_switch_pick(gain, gain2, cnt, n)]
