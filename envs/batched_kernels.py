"""The kernels of the batched games (:mod:`caishen.envs.batched`, whose docstring says what they do).

One game is the engine's state record (``STATE_DTYPE``) plus its side record :data:`GAME_DTYPE` (the
game's seed stream, counters ``gi[GI_*]``, the finished hand's points, rewards not yet returned); the
batch's configuration is ``cfg[C_*]`` (int64) and ``fcfg[F_*]`` (float64).  Here are those layouts and
the kernels over them: the deal (:func:`_deal`), the one seam where a finished hand's points come from
(:func:`_hand_points`), an episode's end, advancing a game to its learner's next decision
(:func:`_advance`), the batch's init / step / resume / observe calls, the bots' actions of every game and
a uniform legal action per row (:func:`_sample_legal`).  :class:`caishen.envs.batched.BatchedGames` is
their Python face: it validates, owns the buffers and calls them.

An open seat among the opponents (``python:``, ``exec:``; code ``POLICY_HOST`` in the bot table) stops its
game at each of its decisions (``gi[GI_OPEN]``) for :mod:`caishen.envs.open_opponents` to ask it; with an
``exec:`` seat (``cfg[C_LOG]``) every deal, action and hand's end is logged as the arena host logs them
(:mod:`caishen.envs.seat_log`).
"""

from __future__ import annotations

import numpy as np
from numba import njit

from caishen.sim.bots.features import _encode, _encode_history, _flatten
from caishen.sim.engine import (
    _copy_state,
    N_ACTIONS,
    N_SEATS,
    PH_DONE,
    _legal_mask,
    _next_dealer,
    _next_streak,
    _reset,
    _seeded_wall,
    _random_action,
    _step,
    _write_record,
)
from caishen.envs.seat_log import LOG_ACT, LOG_CAP, LOG_DEAL, LOG_END, LOG_POINTS, _log
from caishen.sim.borrow import borrowed
from caishen.sim.bots.policies import POLICY_RANDOM
from caishen.sim.bots.registry import POLICY_HOST, _bot_action
from caishen.sim.rng import _rng_below, _rng_next, _rng_seed
from caishen.sim.rules.codes import POINTS_ENGINE

__all__ = ["GAME_DTYPE"]

# ---------------------------------------------------------------------------
# the per-game record: GAME_DTYPE, scalar slots gi[GI_*]
# ---------------------------------------------------------------------------
GI_HAND_SEED = 0  #: wall seed of the current hand (caishen.sim.engine.Game().reset(seed=...))
GI_HANDS = 1  #: hands dealt in this game (redeals included)
GI_EPISODES = 2  #: episodes started
GI_LEARNER = 3  #: versus: the learning seat of the current episode
GI_DECIDED = 4  #: versus: the learning seat has decided in the current hand
GI_WAIT = 5  #: paused at a hand's end until its points arrive (the scoring seam)
GI_READY = 6  #: the points of the paused hand are in ``points``
GI_ENDED = 7  #: an episode ended in the current step
GI_OPEN = 8  #: versus: the open seat (0..3) the game waits for, OPEN_DRAIN, or OPEN_NONE
N_GI = 9
OPEN_NONE = -1
OPEN_DRAIN = N_SEATS  #: the game's log is nearly full: drain it, then resume the game

#: one game's side record (besides its STATE_DTYPE state)
GAME_DTYPE = np.dtype(
    [
        ("stream", np.uint64, (4,)),  # the game's seed stream (caishen.sim.rng state)
        ("gi", np.int64, (N_GI,)),  # GI_* slots
        ("points", np.int64, (N_SEATS,)),  # the finished hand's points (the scoring seam)
        ("acc", np.float64, (N_SEATS,)),  # rewards earned and not yet returned
    ],
    align=True,
)

# ---------------------------------------------------------------------------
# configuration: cfg[C_*] (int64) and fcfg[F_*] (float64)
# ---------------------------------------------------------------------------
C_MODE = 0  #: MODE_SELFPLAY / MODE_VERSUS
C_EPISODE = 1  #: EPISODE_HAND / EPISODE_MATCH
C_MATCH_LEN = 2
C_DEALER = 3  #: -1 drawn, else the fixed dealer
C_SEAT = 4  #: versus: -1 drawn per episode, else the fixed learning seat
C_FLAT = 5  #: 1: flat float observations, 0: planes
C_HISTORY = 6  #: 1: the order-of-play block
C_REWARD = 7  #: REWARD_*
C_PENALTY = 8  #: 1: illegal actions end the episode with a penalty; 0: the caller raised already
C_FINAL_OBS = 9  #: 1: write the final observations of ended episodes
C_LOG = 10  #: 1: log every deal, action and hand's end (an exec: opponent reads them as events)
C_FINAL_STATE = 11  #: 1: copy each ended episode's last state into ``scr[4][i]`` (BatchedGames.final_states)
N_C = 12
F_SCALE = 0  #: reward_scale
F_ILLEGAL = 1  #: illegal_reward
N_F = 2

MODE_SELFPLAY = 0
MODE_VERSUS = 1
EPISODE_HAND = 0
EPISODE_MATCH = 1
REWARD_POINTS = 0
REWARD_SCALED = 1
REWARD_SIGN = 2


# ---------------------------------------------------------------------------
# kernels
# ---------------------------------------------------------------------------
@njit(cache=True)
def _hand_points(st, ep, rp, out):
    """THE seam where a finished hand's points come from: fill ``out: int64[4]``, return True.

    The engine's payments (``seat.score``, K-8) when they are the
    rule set's points (``ep.points`` is ``POINTS_ENGINE``), and 0 for
    everybody on a 流局.  Otherwise (wins scored after the hand, J-6)
    returns False and the caller pauses the game until the rule set's points
    kernel has filled ``out`` (:meth:`BatchedGames._score_paused`).
    """
    if ep.points == POINTS_ENGINE or st.table.winners_mask == 0:
        for s in range(N_SEATS):
            out[s] = st.seat[s].score
        return True
    return False


@njit(cache=True, inline="always")
def _reward_of(points, cfg, fcfg):
    """The reward of ``points`` under ``cfg[C_REWARD]`` (module docstring, "Rewards")."""
    if cfg[C_REWARD] == REWARD_SCALED:
        return points / fcfg[F_SCALE]
    if cfg[C_REWARD] == REWARD_SIGN:
        return 1.0 if points > 0 else (-1.0 if points < 0 else 0.0)
    return float(points)


@njit(cache=True, inline="always")
def _observe_one(st, seat, joker, cfg, x, dst_planes, dst_flat, scalar, inv_high):
    """Encode ``seat``'s observation of ``st`` into ``dst_planes: uint8[R, 34]`` (planes) or, through
    the scratch ``x: uint8[R, 34]``, into ``dst_flat: float32[F]`` (``cfg[C_FLAT]``)."""
    y = x if cfg[C_FLAT] != 0 else dst_planes
    _encode(st, seat, joker, y)
    if cfg[C_HISTORY] != 0:
        _encode_history(st, seat, y)
    if cfg[C_FLAT] != 0:
        _flatten(y, scalar, inv_high, dst_flat)


@njit(cache=True, inline="always")  # in the bots' loop: no call, no reference counts
def _play(i, st, a, tab):
    """The seat to act in game ``i`` (state ``st``) plays ``a``; logged with ``cfg[C_LOG]`` (``tab[5]``: the
    opponents ``(table, bot context, log, log_n)``)."""
    ep, rp, tabs, cfg, bots = tab[0], tab[1], tab[2], tab[3], tab[5]
    if cfg[C_LOG] != 0:
        _log(i, LOG_ACT, st.table.to_act, a, bots[2], bots[3])
    _step(st, ep, rp, tabs, a)


@njit(cache=True, inline="always")  # in the bots' loop: no call, no reference counts
def _deal_game(i, st, g, new_episode, tab):
    """:func:`_deal` game ``i``; with ``cfg[C_LOG]`` logged as ``(LOG_DEAL, dealer, learning seat)``."""
    ep, rp, tabs, cfg, bots = tab[0], tab[1], tab[2], tab[3], tab[5]
    _deal(st, g, new_episode, ep, rp, tabs, cfg)
    if cfg[C_LOG] != 0:
        _log(i, LOG_DEAL, st.table.dealer, g.gi[GI_LEARNER], bots[2], bots[3])


@njit(cache=True)
def _deal(st, g, new_episode, ep, rp, tabs, cfg):
    """Deal the game's next hand in place, drawing from its stream ``g.stream`` (module docstring).

    ``new_episode``: a new hand episode or match starts (a drawn learning seat,
    a first dealer); else the next hand of the match (K-3.3 / J-2.3 rotation,
    J-2.4 streak) or, in hand episodes, a redeal.
    """
    gi = g.gi
    if new_episode:
        gi[GI_EPISODES] += 1
        if cfg[C_MODE] == MODE_VERSUS and cfg[C_SEAT] < 0:
            gi[GI_LEARNER] = _rng_below(g.stream, N_SEATS)
    if new_episode or cfg[C_EPISODE] == EPISODE_HAND:
        if cfg[C_DEALER] >= 0:
            dealer = cfg[C_DEALER]
        elif cfg[C_EPISODE] == EPISODE_MATCH and ep.first_dealer_random == 0:
            dealer = 0  # K-3.2 (E10): a match's first dealer is seat 0
        else:
            dealer = _rng_below(g.stream, N_SEATS)
        streak = 0
        match_hand = 0
    else:
        old = st.table.dealer
        dealer = _next_dealer(ep, old, st.table.winners_mask)
        streak = _next_streak(old, dealer, st.table.streak)
        match_hand = st.table.match_hand + 1
    seed = np.int64(_rng_next(g.stream) >> np.uint64(32))
    gi[GI_HAND_SEED] = seed
    _seeded_wall(seed, st)
    _reset(st, ep, rp, tabs, dealer)
    st.table.match_hand = match_hand
    st.table.streak = streak
    gi[GI_HANDS] += 1
    gi[GI_DECIDED] = 0


@njit(cache=True)
def _end_episode(i, st, g, truncate, tab, scr, out):
    """Close game ``i``'s episode: flags, final observations, the rewards earned so far."""
    ep, rp, tabs, cfg, fcfg, bots = tab
    work, x, scalar, inv_high, final_states = scr
    obs_planes, obs_flat, fin_planes, fin_flat, masks, player, rewards, reward1, terminated, truncated, illegal, \
        points, hands_ended, rec = out
    joker = ep.joker
    gi = g.gi
    if cfg[C_FINAL_STATE] != 0:  # the finished episode's last state, before the autoreset deals again
        _copy_state(final_states[i], st)
    if truncate:
        truncated[i] = True
    else:
        terminated[i] = True
    gi[GI_ENDED] = 1
    versus = cfg[C_MODE] == MODE_VERSUS
    if cfg[C_FINAL_OBS] != 0:
        for k in range(1 if versus else N_SEATS):
            s = gi[GI_LEARNER] if versus else k
            if cfg[C_FLAT] != 0:
                _observe_one(st, s, joker, cfg, x, x, fin_flat[i, k], scalar, inv_high)
            else:
                _observe_one(st, s, joker, cfg, x, fin_planes[i, k], inv_high, scalar, inv_high)
    for s in range(N_SEATS):
        rewards[i, s] += g.acc[s]
        g.acc[s] = 0.0
    if versus:
        reward1[i] = rewards[i, gi[GI_LEARNER]]


@njit(cache=True)
def _advance(i, states, games, tab, scr, out):
    """Run game ``i`` from its current state to the next agent decision; True if it paused.

    ``states``: the engine's state records (``STATE_DTYPE[n]``), ``games``:
    the game records (:data:`GAME_DTYPE`), ``tab``: the batch's tables
    ``(ep, rp, tabs, cfg, fcfg, bots)``, ``scr``: scratch and the flat
    tables and the kept final states ``(work, x, scalar, inv_high, final_states)``, ``out``: the output buffers
    (:meth:`BatchedGames._buffers`).  Hands that end are scored
    (:func:`_hand_points`; a False pauses the game with its record row in
    ``rec[i]``, to be resumed once ``games[i].points`` is filled),
    rewarded, and dealt again; in ``versus`` mode the bots play every seat
    but the learning one.  At the decision: the legal mask, the seat and its
    observation are written to the outputs, and the rewards earned in this
    step (unless the episode ended in it: those of the new episode wait for
    the next step).
    """
    ep, rp, tabs, cfg, fcfg, bots = tab
    work, x, scalar, inv_high, _ = scr
    obs_planes, obs_flat, fin_planes, fin_flat, masks, player, rewards, reward1, terminated, truncated, illegal, \
        points, hands_ended, rec = out
    st = states[i]
    g = games[i]
    gi = g.gi
    versus = cfg[C_MODE] == MODE_VERSUS
    joker = ep.joker
    logged = cfg[C_LOG] != 0
    while True:
        if logged and bots[3][i] > LOG_CAP - 8:  # an iteration logs 6 entries at most
            gi[GI_OPEN] = OPEN_DRAIN
            return True
        if st.table.phase == PH_DONE:
            skip = versus and cfg[C_EPISODE] == EPISODE_HAND and gi[GI_DECIDED] == 0
            if skip and not logged:
                _deal(st, g, False, ep, rp, tabs, cfg)  # no learner decision: dealt again, counts for nobody
                continue
            if gi[GI_READY] == 0:
                if not _hand_points(st, ep, rp, g.points):
                    _write_record(st, ep, gi[GI_HANDS] - 1, rec[i])
                    gi[GI_WAIT] = 1
                    return True
            gi[GI_READY] = 0
            if logged:  # the hand's end and points, for the exec: opponents' end_hand
                _log(i, LOG_END, st.table.winners_mask, 0, bots[2], bots[3])
                for s in range(N_SEATS):
                    _log(i, LOG_POINTS, s, g.points[s], bots[2], bots[3])
            if skip:
                _deal_game(i, st, g, False, tab)  # scored for the exec: opponents only; counts for nobody
                continue
            hands_ended[i] += 1
            for s in range(N_SEATS):
                points[i, s] += g.points[s]
                g.acc[s] += _reward_of(g.points[s], cfg, fcfg)
            if cfg[C_EPISODE] == EPISODE_HAND:
                _end_episode(i, st, g, False, tab, scr, out)
                _deal_game(i, st, g, True, tab)
            elif st.table.match_hand + 1 >= cfg[C_MATCH_LEN]:
                _end_episode(i, st, g, True, tab, scr, out)
                _deal_game(i, st, g, True, tab)
            else:
                _deal_game(i, st, g, False, tab)
            continue
        _legal_mask(st, ep)
        s = st.table.to_act
        if versus and s != gi[GI_LEARNER]:
            code = bots[0][s, 0]  # bots: (table, bot context, log, log_n), BatchedGames._bot_table
            if code == POLICY_HOST:  # an open seat: the Python side asks it (caishen.envs.open_opponents)
                gi[GI_OPEN] = s
                return True
            if code == POLICY_RANDOM:
                a = _random_action(st)
            else:
                a = _bot_action(code, bots[0][s, 1], st, ep, rp, tabs, st.mask, work, bots[1])
            _play(i, st, a, tab)
            continue
        break
    player[i] = s
    for a in range(N_ACTIONS):
        masks[i, a] = st.mask[a] != 0
    if cfg[C_FLAT] != 0:
        _observe_one(st, s, joker, cfg, x, x, obs_flat[i], scalar, inv_high)
    else:
        _observe_one(st, s, joker, cfg, x, obs_planes[i], inv_high, scalar, inv_high)
    if gi[GI_ENDED] == 0:
        for p in range(N_SEATS):
            rewards[i, p] += g.acc[p]
            g.acc[p] = 0.0
        if versus:
            reward1[i] = rewards[i, gi[GI_LEARNER]]
    return False


#: :func:`_advance` compiled into :func:`_step_games` (numba IR inlining), as before the buffers
#: travelled as tuples: the call's argument handling costs about as much as the observation
_advance_inlined = njit(cache=True, inline="always")(_advance.py_func)


@njit(cache=True, inline="always")
def _clear_outputs(i, games, out):
    rewards, reward1, terminated, truncated, illegal, points, hands_ended = out[6], out[7], out[8], out[9], \
        out[10], out[11], out[12]
    for s in range(N_SEATS):
        rewards[i, s] = 0.0
        points[i, s] = 0
    reward1[i] = 0.0
    terminated[i] = False
    truncated[i] = False
    illegal[i] = False
    hands_ended[i] = 0
    games[i].gi[GI_ENDED] = 0


@njit(cache=True)
def _init_games(seeds, learner, states, games, tab, scr, out):
    """Seed game ``i``'s stream with ``seeds[i]`` (``learner[i]``: its fixed learning seat in versus
    mode, or -1 drawn) and deal its first episode, up to the first decision.  Returns the number of
    games paused for scoring (:func:`_advance`)."""
    states, games, tab, scr, out = borrowed((states, games, tab, scr, out))  # as _step_games
    n_wait = 0
    for i in range(seeds.shape[0]):
        g = games[i]
        g.gi[:] = 0
        g.acc[:] = 0.0
        g.points[:] = 0
        g.gi[GI_LEARNER] = learner[i]
        g.gi[GI_OPEN] = OPEN_NONE
        _rng_seed(g.stream, seeds[i])
        _clear_outputs(i, games, out)
        _deal_game(i, states[i], g, True, tab)
        if _advance(i, states, games, tab, scr, out):
            n_wait += 1
    return n_wait


@njit(cache=True)
def _first_bad_action(states, actions, check_legal):
    """The first game whose action is outside ``0..144`` (or, with ``check_legal``, not in its
    legal mask), or -1.  Reads only."""
    for i in range(actions.shape[0]):
        a = actions[i]
        if a < 0 or a >= N_ACTIONS:
            return i
        if check_legal and states[i].mask[a] == 0:
            return i
    return -1


@njit(cache=True)
def _step_games(actions, states, games, tab, scr, out):
    """Apply ``actions[i]`` (``int64[n]``, validated) for the seat to act in every game, then
    :func:`_advance` each to its next decision.  With ``cfg[C_PENALTY]`` an illegal action ends
    its episode with ``fcfg[F_ILLEGAL]`` for the offender.  Returns the number of paused games."""
    # borrowed views (caishen.sim.borrow): without them the reference counts of the tables, buffers and
    # bot context passed down at every bot call were ~30% of a step against greedy bots (perf)
    actions, states, games, tab, scr, out = borrowed((actions, states, games, tab, scr, out))
    fcfg = tab[4]
    illegal = out[10]
    n_wait = 0
    for i in range(actions.shape[0]):
        st = states[i]
        g = games[i]
        _clear_outputs(i, games, out)
        a = actions[i]
        if st.mask[a] == 0:  # only reachable with C_PENALTY (else the caller raised)
            illegal[i] = True
            g.acc[st.table.to_act] += fcfg[F_ILLEGAL]
            _end_episode(i, st, g, False, tab, scr, out)
            _deal_game(i, st, g, True, tab)
        else:
            g.gi[GI_DECIDED] = 1
            _play(i, st, a, tab)
        if _advance_inlined(i, states, games, tab, scr, out):
            n_wait += 1
    return n_wait


@njit(cache=True)
def _resume_games(idx, states, games, tab, scr, out):
    """Resume the paused games ``idx: int64[m]`` whose points are in ``games[i].points``."""
    idx, states, games, tab, scr, out = borrowed((idx, states, games, tab, scr, out))  # as _step_games
    n_wait = 0
    for j in range(idx.shape[0]):
        i = idx[j]
        games[i].gi[GI_WAIT] = 0
        games[i].gi[GI_READY] = 1
        if _advance(i, states, games, tab, scr, out):
            n_wait += 1
    return n_wait


@njit(cache=True)
def _resume_open(idx, actions, states, games, tab, scr, out):
    """The open seat that game ``idx[j]`` waits for plays ``actions[j]`` (checked legal by the caller; -1: none,
    the game stopped to drain its log), then the game advances.  Returns the number of paused games."""
    idx, actions, states, games, tab, scr, out = borrowed((idx, actions, states, games, tab, scr, out))
    n_wait = 0
    for j in range(idx.shape[0]):
        i = idx[j]
        games[i].gi[GI_OPEN] = OPEN_NONE
        if actions[j] >= 0:
            _play(i, states[i], actions[j], tab)
        if _advance(i, states, games, tab, scr, out):
            n_wait += 1
    return n_wait


@njit(cache=True)
def _observe_games(seats, states, ep, cfg, x, scalar, inv_high, out_planes, out_flat):
    """Encode seat ``seats[i]``'s observation of game ``i`` into ``out_planes[i]`` / ``out_flat[i]``."""
    seats, states, ep, cfg, x, scalar, inv_high, out_planes, out_flat = borrowed(
        (seats, states, ep, cfg, x, scalar, inv_high, out_planes, out_flat))  # as _step_games
    joker = ep.joker
    for i in range(seats.shape[0]):
        if cfg[C_FLAT] != 0:
            _observe_one(states[i], seats[i], joker, cfg, x, x, out_flat[i], scalar, inv_high)
        else:
            _observe_one(states[i], seats[i], joker, cfg, x, out_planes[i], inv_high, scalar, inv_high)


@njit(cache=True)
def _bot_actions(code, param, states, ep, rp, tabs, work, out, bx):
    """``out[i]``: the action of bot ``code`` (a row of :func:`caishen.sim.bots.registry.bot_table`; ``bx``
    its bot context) for the seat to act in game ``i``.

    Needs the games' legal masks (set by every step).  The random policy
    draws from each game's own stream."""
    states, ep, rp, tabs, work, out, bx = borrowed((states, ep, rp, tabs, work, out, bx))  # as _step_games
    for i in range(out.shape[0]):
        st = states[i]
        if code == POLICY_RANDOM:
            out[i] = _random_action(st)
        else:
            out[i] = _bot_action(code, param, st, ep, rp, tabs, st.mask, work, bx)


@njit(cache=True)
def _sample_legal(masks, rng_state, out):
    """The kernel of :func:`sample_legal`."""
    for i in range(masks.shape[0]):
        n = 0
        for a in range(N_ACTIONS):
            if masks[i, a]:
                n += 1
        if n == 0:
            out[i] = -1
            continue
        k = _rng_below(rng_state, n)
        for a in range(N_ACTIONS):
            if masks[i, a]:
                if k == 0:
                    out[i] = a
                    break
                k -= 1
