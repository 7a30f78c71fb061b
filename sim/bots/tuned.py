"""The parametric bot: a linear score over features its seat can see, weights tuned by self-play.

``tuned:NAME`` (``caishen.sim.bots.registry``) plays with a weight vector ``w: float64[N_W]``
(``sim/rules/<rules>/tuned.json``, fitted by ``agents/tune.py`` with CMA-ES on
duplicate deals).  Every feature is computed from what the seat may see: its
own hand, every discard and exposed meld, meld counts, declarations, the
number of tiles drawn; never other hands, concealed kong kinds or the wall.

Own turn: a win is always taken; greedy's kongs stand (a kong that keeps the
shanten, ``caishen.sim.bots.policies``); otherwise each legal discard ``k`` gets the
score ``sum_i w[i] * f_i(k)`` and the best is discarded (ties: the later
kind, as greedy), made as ``declare <k>`` when that is legal (架听,
J-4.1, as greedy).  Claims: a win is always taken; each legal pong, chow or
exposed kong gets ``sum_i w[i] * g_i``; the best is taken if its score is
positive, else ``pass``.  硬子 is always declared (J-4.2, as greedy).

Discard features (``f_i(k)``, after discarding ``k`` from the 3m+2 hand):

=================== ============================================================
``shanten``         shanten of the hand left (0 = ready)
``effective``       live effective tiles of the hand left / 10 (kinds whose draw
                    lowers the shanten, copies the seat cannot see; computed
                    only when the shanten is at most the best + 1, else 0)
``danger``          10 x estimated deal-in probability of ``k``
                    (``caishen.sim.bots.policies`` "Defence": ready(p) x unsafe(k, p))
``danger_far``      ``danger`` x (best shanten - 1, at least 0): folding pays
                    when the hand is far
``danger_late``     ``danger`` x tiles drawn since the deal / 70
``joker``           1 if ``k`` is the 财神 (a wild tile given away, K-9.1)
``piao_ready``      1 if ``k`` is the 财神 and the hand left is ready (a 飘财
                    chain link with a ready hand, K-6.5)
``pairs``           pairs (non-joker kinds held twice or more) left / 7
                    (seven pairs, K-6.3, P25)
``suit``            tiles of the most held suit (hand left and melds) / 14
                    (清一色 K-6.4; 混一色 / 清 patterns, J-8)
``honor``           1 if ``k`` is an honor (not the 财神)
``terminal``        1 if ``k`` is a 1 or a 9
``declare``         1 if ``declare <k>`` is legal (a single wait, J-4.1)
=================== ============================================================

Claim features (``g_i`` of a pong, chow or exposed kong):

=================== ============================================================
``claim_bias``      1
``claim_gain``      shanten now - shanten after the claim (and its best discard)
``claim_opens``     1 if the seat has no meld yet (the claim opens the hand:
                    门清 P07 / P14 and the concealed doubling J-6.3 are lost)
``claim_pong``      1 for a pong or an exposed kong, 0 for a chow
``claim_late``      tiles drawn since the deal / 70
=================== ============================================================

:data:`GREEDY_WEIGHTS` reproduces greedy's order of discards and claims
(shanten first, then live effective tiles; claim when it lowers the
shanten); CMA-ES starts from it.
"""

from __future__ import annotations

import numpy as np
from numba import njit

from caishen.sim.engine import (
    A_CHOW_HIGH,
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
    N_KINDS,
    PH_HARD,
    PH_TURN,
)
from caishen.sim.effective import _effective_each, _shanten_each_discard
from caishen.sim.hand import _shanten
from caishen.sim.bots.policies import (
    _W_AFTER,
    _W_EFF,
    _W_LIVE,
    _W_TMP,
    _claim_shanten,
    _danger,
    _live_counts,
    _scratch,
    _threats,
    _wall_gone,
    new_work,
)
from caishen.sim.tiles import MELD_KONG_EXPOSED, MELD_NONE

#: feature names, in weight order (the JSON files list them; a file must match)
FEATURES = (
    "shanten", "effective", "danger", "danger_far", "danger_late", "joker", "piao_ready", "pairs", "suit",
    "honor", "terminal", "declare",
    "claim_bias", "claim_gain", "claim_opens", "claim_pong", "claim_late",
)
N_W = len(FEATURES)
F_SHANTEN, F_EFF, F_DANGER, F_DANGER_FAR, F_DANGER_LATE, F_JOKER, F_PIAO_READY, F_PAIRS, F_SUIT, F_HONOR, \
    F_TERMINAL, F_DECLARE, C_BIAS, C_GAIN, C_OPENS, C_PONG, C_LATE = range(N_W)
#: the first claim weight
N_DISCARD_FEATURES = C_BIAS

#: weights that play as greedy does (shanten, then live effective tiles; claim iff it lowers the shanten)
GREEDY_WEIGHTS = np.zeros(N_W)
GREEDY_WEIGHTS[F_SHANTEN] = -10.0
GREEDY_WEIGHTS[F_EFF] = 1.0
GREEDY_WEIGHTS[C_BIAS] = -0.5
GREEDY_WEIGHTS[C_GAIN] = 1.0

_BIG = 99


@njit(cache=True)
def _suit_max(h, st, s):
    """Tiles of the most held suit in the concealed counts ``h`` plus seat ``s``'s melds."""
    c0 = 0
    c1 = 0
    c2 = 0
    for k in range(27):
        if k < 9:
            c0 += h[k]
        elif k < 18:
            c1 += h[k]
        else:
            c2 += h[k]
    for i in range(st.seat[s].n_melds):
        t = st.meld_type[s, i]
        k = st.meld_kind[s, i]
        if t == MELD_NONE or k >= 27:
            continue
        n = 4 if t >= MELD_KONG_EXPOSED else 3  # kongs (exposed, added, concealed: own seat) hold 4
        if k < 9:
            c0 += n
        elif k < 18:
            c1 += n
        else:
            c2 += n
    m = c0 if c0 > c1 else c1
    return m if m > c2 else c2


@njit(cache=True)
def _discard_features(k, best, joker, tabs, st, live, row, gone, mask, work, need_eff, need_shape):
    """The raw discard features of the legal discard ``k`` of the seat to act in ``st``, a tuple of 12
    floats: shanten after (``work[_W_AFTER, k]``, which :func:`_turn_context` filled),
    live effective tiles (0 unless ``need_eff`` and the shanten is at most ``best + 1``: then
    ``work[_W_EFF, k]``, filled there too), 10 x danger (``live``, ``row``: scratch rows of ``work``),
    ``max(best - 1, 0)``, ``gone``, joker, piao_ready, pairs, suit tiles (0 unless ``need_shape``),
    honor, terminal, declare.  :func:`_discard_linear` weighs them; the ``action`` feature set
    (:mod:`caishen.sim.bots.features`) is them scaled as the module docstring says."""
    s = st.table.to_act
    after_k = work[_W_AFTER, k]
    eff = 0.0
    if after_k <= best + 1 and need_eff:
        eff = float(work[_W_EFF, k])
    d = 10.0 * _danger(k, joker, live, row, s)
    far = float(best - 1 if best > 1 else 0)
    pairs = 0.0
    suit = 0.0
    if need_shape:
        h = st.hands[s]
        h[k] -= 1
        n = 0
        for t in range(N_KINDS):
            if t != joker and h[t] >= 2:
                n += 1
        pairs = float(n)
        suit = float(_suit_max(h, st, s))
        h[k] += 1
    is_joker = 1.0 if k == joker else 0.0
    piao = 1.0 if k == joker and after_k <= 0 else 0.0
    honor = 1.0 if k >= 27 and k != joker else 0.0
    terminal = 1.0 if k < 27 and (k % 9 == 0 or k % 9 == 8) else 0.0
    declare = 1.0 if mask[A_DECLARE + k] else 0.0
    return (float(after_k), eff, d, far, gone, is_joker, piao, pairs, suit, honor, terminal, declare)


@njit(cache=True, inline="always")
def _discard_linear(w, f):
    """``sum_i w[i] f_i(k)`` of the raw features ``f`` (:func:`_discard_features`), in the tuned bot's order."""
    sc = w[F_SHANTEN] * f[0]
    sc += w[F_EFF] * 0.1 * f[1]
    sc += f[2] * (w[F_DANGER] + w[F_DANGER_FAR] * f[3] + w[F_DANGER_LATE] * f[4])
    sc += w[F_JOKER] * f[5]
    sc += w[F_PIAO_READY] * f[6]
    sc += w[F_PAIRS] * f[7] / 7.0
    sc += w[F_SUIT] * f[8] / 14.0
    sc += w[F_HONOR] * f[9]
    sc += w[F_TERMINAL] * f[10]
    sc += w[F_DECLARE] * f[11]
    return sc


@njit(cache=True)
def _turn_context(st, ep, tabs, mask, work, need_eff):
    """``(kong, best)`` of the own turn: a kong action greedy would make (or -1), and the best shanten
    after a legal discard; fills ``work``'s after / live / threat rows for :func:`_discard_features`,
    and with ``need_eff`` its effective-tiles row for the legal discards of shanten at most ``best + 1``
    (:func:`caishen.sim.effective._effective_each`, all at once)."""
    s = st.table.to_act
    h = st.hands[s]
    joker = ep.joker
    after = work[_W_AFTER]
    _shanten_each_discard(h, joker, tabs, after, _scratch(work))
    best = _BIG
    for k in range(N_KINDS):
        if mask[A_DISCARD + k] and after[k] < best:
            best = after[k]
    # greedy's kongs: a free replacement draw and a chain link when the shanten stays
    for t in range(N_KINDS):
        if mask[A_KONG_ADDED + t] and after[t] <= best:
            return A_KONG_ADDED + t, best
        if mask[A_KONG_CONCEALED + t]:
            h[t] -= 4
            keep = _shanten(h, joker, tabs) <= best
            h[t] += 4
            if keep:
                return A_KONG_CONCEALED + t, best
    _live_counts(st, s, work[_W_LIVE])
    _threats(st, ep, s, work[_W_TMP])
    if need_eff:
        want = np.int64(0)
        for k in range(N_KINDS):
            if mask[A_DISCARD + k] and after[k] <= best + 1:
                want |= np.int64(1) << k
        _effective_each(h, joker, tabs, after, want, work[_W_LIVE], _scratch(work), work[_W_EFF])
    return -1, best


@njit(cache=True, inline="always")  # one caller (_tuned_action): no kernel level of its own (registry._base_action)
def _tuned_turn(w, st, ep, tabs, mask, work):
    """Own turn of the tuned bot (module docstring)."""
    if mask[A_WIN]:
        return A_WIN
    need_eff = w[F_EFF] != 0.0
    kong, best = _turn_context(st, ep, tabs, mask, work, need_eff)
    if kong >= 0:
        return kong
    joker = ep.joker
    live = work[_W_LIVE]
    row = work[_W_TMP]
    gone = _wall_gone(st) / 70.0
    need_shape = w[F_PAIRS] != 0.0 or w[F_SUIT] != 0.0
    pick = -1
    pick_sc = -1e300
    for k in range(N_KINDS):
        if not mask[A_DISCARD + k]:
            continue
        f = _discard_features(k, best, joker, tabs, st, live, row, gone, mask, work, need_eff, need_shape)
        sc = _discard_linear(w, f)
        if sc >= pick_sc:
            pick = k
            pick_sc = sc
    return _discard_action(pick, mask)


@njit(cache=True, inline="always")
def _discard_action(pick, mask):
    """The action of discarding ``pick`` (``declare <pick>`` when legal: J-4.1 as greedy)."""
    if pick < 0:  # no legal discard: a forced kong-only turn cannot happen, but stay legal
        for a in range(A_HARD_DECLARE + 2):
            if mask[a]:
                return a
    if mask[A_DECLARE + pick]:
        return A_DECLARE + pick
    return A_DISCARD + pick


@njit(cache=True, inline="always")
def _claim_linear(w, base, after, pong, opens, gone):
    """The tuned score of a claim leaving shanten ``after`` (``pong``: a pong or exposed kong)."""
    sc = w[C_BIAS] + w[C_OPENS] * opens + w[C_LATE] * gone + w[C_GAIN] * (base - after)
    return sc + w[C_PONG] if pong else sc


@njit(cache=True, inline="always")  # one caller (_tuned_action), as _tuned_turn
def _tuned_claim(w, st, ep, tabs, mask, work):
    """Claim decision of the tuned bot (module docstring): the best claim if its score is positive."""
    if mask[A_WIN]:
        return A_WIN
    s = st.table.to_act
    base, pong, kong, c0, c1, c2 = _claim_shanten(st, ep, tabs, mask, work)
    opens = 1.0 if st.seat[s].n_melds == 0 else 0.0
    gone = _wall_gone(st) / 70.0
    choice = A_PASS
    best_sc = 0.0
    if mask[A_PONG]:
        sc = _claim_linear(w, base, pong, True, opens, gone)
        if sc > best_sc:
            best_sc = sc
            choice = A_PONG
    if mask[A_KONG_EXPOSED]:
        sc = _claim_linear(w, base, kong, True, opens, gone)
        if sc > best_sc:
            best_sc = sc
            choice = A_KONG_EXPOSED
    for a in range(A_CHOW_LOW, A_CHOW_HIGH + 1):
        if mask[a]:
            sc = _claim_linear(w, base, (c0, c1, c2)[a - A_CHOW_LOW], False, opens, gone)
            if sc > best_sc:
                best_sc = sc
                choice = a
    return choice


@njit(cache=True)
def _tuned_action(w, st, ep, tabs, mask, work):
    """The tuned bot's action for the seat to act; ``w: float64[N_W]`` its weights.

    ``mask``: the legal mask of the state; the action returned is legal.
    ``work``: scratch (:func:`caishen.sim.bots.policies.new_work`).
    """
    if st.table.phase == PH_HARD:  # J-4.2 declare 硬子 whenever offered (as greedy)
        return A_HARD_DECLARE
    if st.table.phase != PH_TURN:
        return _tuned_claim(w, st, ep, tabs, mask, work)
    return _tuned_turn(w, st, ep, tabs, mask, work)


def check_weights(weights, where: str = "weights") -> np.ndarray:
    """``weights`` as ``float64[N_W]``; ``ValueError`` naming ``where`` for a wrong length,
    a non-number or a NaN / infinite entry (and which one)."""
    try:
        w = np.asarray(weights, dtype=np.float64)
    except OverflowError:  # an integer of hundreds of digits: no float holds it
        i = next((i for i, v in enumerate(weights) if isinstance(v, int) and abs(v) > 2**1023), None)
        name = f"weight {i} ({FEATURES[i]})" if i is not None and i < N_W else "a weight"
        raise ValueError(f"{where}: {name} is an integer too large for a float; every weight must be a finite "
                         "number") from None
    except (TypeError, ValueError):
        raise ValueError(f"{where}: the weights must be {N_W} numbers") from None
    if w.ndim != 1 or w.size != N_W:
        raise ValueError(f"{where}: {w.size if w.ndim == 1 else w.shape} weights, expected {N_W} "
                         f"({', '.join(FEATURES)})")
    bad = np.flatnonzero(~np.isfinite(w))
    if bad.size:
        i = int(bad[0])
        raise ValueError(f"{where}: weight {i} ({FEATURES[i]}) is {float(w[i])!r}; every weight must be a finite number")
    return w


def compile_ahead() -> None:
    """Compile the tuned bot's kernel (:func:`_tuned_action`, with what it calls) into numba's cache without
    running it, with the argument types of the self-play loop (a weights row, the state, the state's own mask
    field, as :func:`caishen.sim.bots.learned.compile_ahead`): the side process of a cold first compile
    (:func:`caishen.sim.warmup.side_compile`), after the learned bot."""
    import numba

    row, st, ep, tabs, work = (numba.typeof(a) for a in _ahead_args())
    _tuned_action.compile((row, st, ep, tabs, st.typeof("mask"), work))


def _ahead_args() -> tuple:
    """Arguments of the bots with data of the self-play loop's types (:func:`compile_ahead`; a test holds them
    equal): a weights row, a state, the engine params, the hand table's type (uint8[:], C; not built) and the
    bots' scratch."""
    from caishen.sim.engine import engine_params, load_rules, new_state

    name, r = load_rules()
    return np.zeros(1), new_state()[0], engine_params(name, r), np.zeros(1, np.uint8), new_work()
