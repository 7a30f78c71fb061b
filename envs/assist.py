"""Hand-reading features for a learner: shanten now, with the tile on offer, after each discard, and live effective tiles.

An MLP given only tile counts must learn by itself which discard brings a
hand closer to a win (what :mod:`caishen.sim.bots.policies`' greedy bot computes
exactly); PPO against greedy bots then learns to stop feeding wins long
before it learns to win (issue 12).  This block hands the learner what the
greedy bot reads, from the observing seat's own concealed tiles and the
public tile on offer only (no hidden information), as ``float32[36]``
(:data:`N_ASSIST`), every value in ``[0, 1]``:

=====  ==================  =====================================================
index  name                meaning
=====  ==================  =====================================================
0      ``shanten``         ``min(shanten + 1, 8) / 8`` of the seat's concealed
                           tiles (``caishen.sim.hand``: jokers wild, seven pairs
                           included; 0 = complete, 1/8 = ready)
1      ``shanten_offer``   the same with the tile on offer added (a discard or
                           an added kong's tile, when the hand has 3m+1 tiles);
                           equal to ``shanten`` when nothing is on offer
2-35   ``after_discard``   for the hand ``h'`` (the concealed tiles, plus the
                           tile on offer in a claim): per kind ``k``,
                           ``min(shanten(h' - k) - best, 3) / 3`` where ``best``
                           is the lowest over the held kinds: 0 for the
                           discards that keep the best shanten; 1 for kinds
                           not held (or when ``h'`` has 3m+1 tiles)
=====  ==================  =====================================================

The flat layout with this block appended (``float32[967 + 36]``, or
``[2599 + 36]`` with the order-of-play block) is what
:class:`caishen.envs.sb3_vec.BatchedVecEnv` returns with ``assist=True`` and what
:class:`caishen.agents.ppo.PPOAgent` feeds a policy trained that way.

The envs' ``assist=True`` (every layout: :mod:`caishen.envs.observation`) shows
the feature set ``assist`` v1 (:data:`caishen.sim.bots.features.ASSIST_V1`):
the three groups above as plane rows (values ``min(shanten + 1, 8)`` and
``min(shanten(h' - k) - best, 3)``, their ``high`` 8, 8 and 3), and a fourth
row, ``assist_effective``: for each held kind ``k`` of the 3m+2 hand ``h'``,
the live effective tiles of ``h' - k`` (copies the seat cannot see of the
kinds whose draw lowers the shanten: :func:`caishen.sim.effective._effective_each`,
the tuned bot's count, here for every held kind).  Flat, they are 70 inputs,
each row divided by its ``high``; the first 36 are the block above.
:func:`_assist_rows` fills them.
"""

from __future__ import annotations

import numpy as np
from numba import njit

from caishen.sim.borrow import borrowed
from caishen.sim.bots.features import ASSIST_V1
from caishen.sim.bots.policies import _W_AFTER, _W_EFF, _W_LIVE, _live_counts, _scratch
from caishen.sim.effective import _effective_each, _shanten_each_discard
from caishen.sim.engine import Game, Observation
from caishen.sim.hand import _shanten, _shanten_each_change
from caishen.sim.rules import base as _rulesets
from caishen.sim.tables import hand_tables

__all__ = ["N_ASSIST", "N_ASSIST_ROWS", "N_ASSIST_INPUTS", "assist_features", "assist_batch"]

#: length of the assist block
N_ASSIST = 36
_NOT_HELD = 99  # caishen.sim.hand._shanten_each_change's value for a kind not held


@njit(cache=True)
def _shanten_now_and_on_offer(hand, pending, joker, tabs, tmp):
    """``(n, s0, s1)``: the tiles of ``hand: uint8[34]``, its shanten, and its shanten with ``pending`` (the
    kind on offer, -1 none) taken when the hand waits for a tile (3m+1) and the kind is not used up (else
    ``s0``).  Leaves the hand, with the pending tile when taken, in ``tmp: uint8[34]`` (``n`` counts it)."""
    n = 0
    for k in range(34):
        n += hand[k]
        tmp[k] = hand[k]
    s0 = _shanten(hand, joker, tabs)
    s1 = s0
    if n % 3 == 1 and pending >= 0 and tmp[pending] < 4:
        tmp[pending] += 1
        n += 1
        s1 = _shanten(tmp, joker, tabs)
    return n, s0, s1


@njit(cache=True)
def _assist_one(hand, pending, joker, tabs, tmp, each, out):
    """Fill ``out: float32[36]`` from ``hand: uint8[34]`` (concealed tiles) and ``pending`` (the kind
    on offer or -1); ``tmp: uint8[34]``, ``each: int64[34]`` are scratch."""
    n, s0, s1 = _shanten_now_and_on_offer(hand, pending, joker, tabs, tmp)
    out[0] = min(s0 + 1, 8) / 8.0
    out[1] = min(s1 + 1, 8) / 8.0
    if n % 3 != 2:
        for k in range(34):
            out[2 + k] = 1.0
        return
    _shanten_each_change(tmp, joker, tabs, np.int64(-1), each)
    best = _NOT_HELD
    for k in range(34):
        if each[k] < best:
            best = each[k]
    for k in range(34):
        if each[k] >= _NOT_HELD:
            out[2 + k] = 1.0
        else:
            out[2 + k] = min(each[k] - best, 3) / 3.0


@njit(cache=True)
def _assist_games(states, seats, joker, tabs, tmp, each, out):
    """Row ``i`` of ``out: float32[n, >= 36]`` (its first 36 columns) from game ``i`` of
    ``states: STATE_DTYPE[n]`` seen by ``seats[i]``."""
    states, seats, tabs, tmp, each, out = borrowed((states, seats, tabs, tmp, each, out))  # caishen.sim.borrow
    for i in range(states.shape[0]):
        st = states[i]
        _assist_one(st.hands[seats[i]], st.table.tile, joker, tabs, tmp, each, out[i])


def assist_batch(states: np.ndarray, seats: np.ndarray, rules_name: str, out: np.ndarray | None = None) -> np.ndarray:
    """``float32[n, 36]``: the block of seat ``seats[i]`` in game ``i`` of ``states: STATE_DTYPE[n]``
    (e.g. :attr:`caishen.envs.batched.BatchedGames.states` with ``.player``).  ``out``: a
    ``float32[n, 36]`` array to fill.  Raises ``ValueError`` for bad seats, rules or ``out``."""
    n = states.shape[0]
    seats = np.asarray(seats)
    if seats.shape != (n,) or seats.dtype.kind not in "iu" or ((seats < 0) | (seats > 3)).any():
        raise ValueError(f"seats must be {n} seats 0..3, got {seats!r}")
    joker = _rulesets.get(rules_name).facts["joker"]  # ValueError for an unknown rule set
    if out is None:
        out = np.zeros((n, N_ASSIST), np.float32)
    elif not isinstance(out, np.ndarray) or out.shape != (n, N_ASSIST) or out.dtype != np.float32:
        raise ValueError(f"out must be a float32[{n}, {N_ASSIST}] array")
    _assist_games(states, seats.astype(np.int64), int(joker), hand_tables(),
                  np.zeros(34, np.uint8), np.zeros(34, np.int64), out)
    return out


def assist_features(game: Game | Observation, seat: int | None = None) -> np.ndarray:
    """``float32[36]``: the block of ``seat`` in a started :class:`caishen.sim.engine.Game`, or of the observing
    seat in an :class:`caishen.sim.engine.Observation` (``game.observe()``).  Raises ``ValueError``
    for a bad seat or an unstarted game."""
    if isinstance(game, Observation):
        if seat is not None and (isinstance(seat, bool) or seat != game.seat):
            raise ValueError(f"an observation is seat {game.seat}'s view, seat {seat!r} asked")
        return assist_batch(np.array([game.state]), np.array([game.seat]), game.rules_name)[0]
    if not isinstance(game, Game):
        raise ValueError(f"expected a caishen.sim.engine.Game, got {type(game).__name__}")
    game.current_player  # raises ValueError if the game was never reset
    if isinstance(seat, bool) or seat not in range(4):
        raise ValueError(f"seat must be 0..3, got {seat!r}")
    return assist_batch(game._buf, np.array([seat]), game.rules_name)[0]


#: rows of the assist block in the planes and the grid (feature set ``assist`` v1,
#: :data:`caishen.sim.bots.features.ASSIST_V1`) and its inputs in a flat vector
N_ASSIST_ROWS = len(ASSIST_V1)
N_ASSIST_INPUTS = sum(1 if g.scalar else 34 for g in ASSIST_V1)
_HIGH_EFFECTIVE = ASSIST_V1[3].high


@njit(cache=True)
def _assist_rows(st, seat, joker, tabs, work, tmp, x, r0):
    """Fill rows ``r0 .. r0 + 3`` of the planes ``x: uint8[R, 34]`` with the assist block v1 of ``seat``
    (:data:`caishen.sim.bots.features.ASSIST_V1`): its shanten, with the tile on offer, after each
    discard, and the live effective tiles after each discard.  ``work``: the bots' scratch
    (:func:`caishen.sim.bots.policies.new_work`), ``tmp: uint8[34]``.  Reads only the seat's own tiles,
    the tile on offer and what the seat sees (its live counts).  The first three rows, divided by their
    ``high``, are :func:`_assist_one`'s 36 values."""
    hand = st.hands[seat]
    pending = st.table.tile
    n, s0, s1 = _shanten_now_and_on_offer(hand, pending, joker, tabs, tmp)
    v0 = min(s0 + 1, 8)
    v1 = min(s1 + 1, 8)
    for k in range(34):
        x[r0, k] = v0
        x[r0 + 1, k] = v1
        x[r0 + 2, k] = 3
        x[r0 + 3, k] = 0
    if n % 3 != 2:
        return
    after = work[_W_AFTER]
    _shanten_each_discard(tmp, joker, tabs, after, _scratch(work))
    best = _NOT_HELD
    want = np.int64(0)
    for k in range(34):
        if tmp[k] > 0:
            want |= np.int64(1) << k
            if after[k] < best:
                best = after[k]
    live = work[_W_LIVE]
    _live_counts(st, seat, live)
    eff = work[_W_EFF]
    _effective_each(tmp, joker, tabs, after, want, live, _scratch(work), eff)
    for k in range(34):
        if tmp[k] > 0:
            x[r0 + 2, k] = min(after[k] - best, 3)
            x[r0 + 3, k] = min(eff[k], _HIGH_EFFECTIVE)
