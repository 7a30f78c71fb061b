"""Batched games for RL: thousands of hands stepped by one numba call, observations included.

This is the functional batch API under :mod:`caishen.envs.vector_env` (pgx's
``init / step / observe`` habit, on CPU with numba).  A batch of ``n``
games is the engine's state record with a batch axis (``STATE_DTYPE[n]``,
:mod:`caishen.sim.engine`) plus a small per-game record (:data:`GAME_DTYPE`: the
game's seed stream, counters, rewards not yet returned) and preallocated
output buffers.  One call steps every game with one action each:

- :meth:`BatchedGames.reset` ``(seeds)``: seed each game's own stream and
  deal its first hand;
- :meth:`BatchedGames.step` ``(actions: int[n])``: apply ``actions[i]`` for
  the seat to act in game ``i`` (in ``mode="versus"`` the learning seat;
  the other seats are then played inside the kernel by numba bots until the
  learning seat must decide again); a game whose episode ends is dealt again
  in place (autoreset, Gymnasium's *same-step* mode), so a batch never stalls;
- after either: :attr:`~BatchedGames.obs` (the observation of the seat to
  act), :attr:`~BatchedGames.masks` ``bool[n, 145]`` (its legal actions),
  :attr:`~BatchedGames.player` ``int64[n]`` (that seat, pgx's
  ``current_player``), :attr:`~BatchedGames.rewards` ``float32[n, 4]``,
  :attr:`~BatchedGames.terminated` / :attr:`~BatchedGames.truncated`
  ``bool[n]``, and for the games whose episode ended
  :attr:`~BatchedGames.final_obs`;
- :meth:`BatchedGames.observe` ``(seats)``: the observation of any seat;
- :meth:`BatchedGames.bot_actions` ``(policy)``: what a built-in bot would
  play for the seat to act in every game (to put a bot in any seat of a
  self-play batch, next to a trained policy).

Everything per game runs in numba: the Python work of a step is a fixed
handful of calls whatever ``n`` (validation of the action array, one kernel
call), except for the scoring after the hand (below).

Episodes, seeds and determinism
-------------------------------
``episode="hand"`` (default): one episode is one hand; the dealer is drawn
per hand from the game's stream (or fixed with ``dealer=``), the streak is
0.  ``episode="match"``: one episode is a match of ``match_len`` hands
(default 16): the first dealer is seat 0 (K-3.2, E10) or drawn
(J-2.2, fact ``first_dealer_random``), then the dealer rotates (K-3.3, J-2.3) and the dealer's
streak counts (J-2.4); the match limit sets ``truncated`` (the
observation does not show the hand's index in the match, so for the
learner the limit is a time limit), ``terminated`` stays False.

Game ``i`` seeded with ``s`` owns a stream (``caishen.sim.rng``'s xoshiro256**,
seeded with ``s``).  Every hand draws from it, in this order: the learning
seat if ``seat="random"`` (new episodes only), the dealer if drawn, then the
hand's wall seed ``hand_seed`` (32 bits): the wall is exactly
``caishen.sim.engine.Game().reset(seed=hand_seed, dealer=...)``'s, and random bots
draw from the wall's stream after the shuffle.  So a game's hands depend
only on its seed and its actions, never on ``n`` or on the other games;
:attr:`BatchedGames.hand_seed`, ``dealer`` and ``streak`` replay any hand
through :class:`caishen.sim.engine.Game`.

Rewards (``rewards[i, s]``: what seat ``s`` of game ``i`` earned in this step)
-------------------------------------------------------------------------------
Points are the hand's score changes (``score_s`` of the hand's record:
the K-8 or J-6 payments); they sum to zero over the four
seats (K-8.5, J-6.5); a 流局 gives 0.  ``reward=`` turns them into rewards:

============  ==============================================================
``points``    the points (default)
``scaled``    points / ``reward_scale`` (default: the rule set's
              ``RuleSet.reward_scale``, about one standard deviation of a
              seat's points per hand under greedy play); still zero-sum,
              and heavy-tailed (J-6 points up to about 9 sd)
``sign``      +1 if the seat won points, -1 if it lost points, 0 otherwise
              (not zero-sum: a self-draw gives +1 -1 -1 -1)
============  ==============================================================

A hand's rewards arrive in the step in which the hand ends, all four seats
at once, whoever acted last.  **How a self-play learner assigns them**
(pgx's ``current_player`` / ``rewards[n, 4]`` convention): keep, per game
and per seat, the index of that seat's last transition (observation,
action).  After every step, for every seat ``s`` add ``rewards[i, s]`` to
the reward of seat ``s``'s last transition in game ``i``; where
``terminated[i] | truncated[i]``, mark every seat's last transition as the
end of its episode (``terminated``: no bootstrap; ``truncated``: bootstrap
from ``final_obs[i, s]``) and start fresh per-seat trajectories, since the
observations now returned belong to the new episode.  A seat that made no
decision in the episode (e.g. a hand won on the dealer's first turn) has
no transition; its reward is then dropped.  In ``mode="versus"`` there is
one agent per game: ``reward[i]`` (:attr:`BatchedGames.reward`, also
``rewards[i, learner]``) is the learning seat's, for its action of this
step; in ``episode="hand"`` a hand that ends before the learning seat's
first decision (the dealer's 天胡, or bots finishing it) is dealt again
and counts for nobody (:class:`caishen.envs.gym_env.MahjongEnv` is one such game); in
``episode="match"`` it counts and its points arrive with the learning
seat's next step.

Illegal actions
---------------
``illegal_action="raise"`` (default): a step with any illegal action
raises ``ValueError`` naming the first such game, its action and the legal
ones, before any game is stepped (no state changes).
``illegal_action="penalty"``: that game's episode ends
(``terminated``, :attr:`BatchedGames.illegal` set), the offending seat gets
``illegal_reward`` and the others 0 (plus rewards already earned).  The
penalty must lie outside the reward range: with ``reward="sign"`` it
defaults to -2; points have no lower bound (the exponent of K-6 has no cap
by default), so with ``points`` / ``scaled`` give ``illegal_reward``
yourself (``ValueError`` otherwise).  An action outside ``0..144``, a wrong
shape or dtype (bools and floats are not actions) always raises.

Scoring a finished hand: the one seam
-------------------------------------
A rule set that pays inside the engine (``seat.score``, its points
kernel ``POINTS_ENGINE``) costs no per-game Python work at all.  Where a
finished hand's points come from is one kernel,
:func:`caishen.envs.batched_kernels._hand_points`: it returns them when the
engine has them (and on every 流局) and otherwise returns False; the game then
pauses at that hand's end with its record
(``caishen.sim.engine._write_record``) in :attr:`BatchedGames.records`, the
Python side scores the paused games' records at once with the rule set's points
kernel (:func:`caishen.sim.rules.kernels.hand_points`, the kernel the search
bot, the records and the tuner use) and resumes them in numba.  So a rule set
scored after the hand costs Python work only at the end of a won hand.

Memory (no allocation per step)
-------------------------------
Per game: the engine state (``STATE_DTYPE``, 3,968 bytes), the game record
(:data:`GAME_DTYPE`, 168 bytes), one observation (planes 2,584 bytes, 4,216
with the order-of-play block; flat 3,868 / 10,396 bytes), the final
observation (the same, 4 of them in self-play), the mask (145), rewards,
flags and the record for the Python scorer (``RECORD_DTYPE``, 256 bytes):
:meth:`BatchedGames.nbytes` sums it.  Versus bots with planes: 9,784
bytes per game, 4,096 games in about 40 MB; self-play with planes: 17,536
bytes per game (72 MB).  :meth:`BatchedGames.step` and :meth:`reset` write
into these buffers and return them (views, overwritten by the next call:
copy what you keep).

The layouts (:data:`GAME_DTYPE`, the configuration slots) and the kernels
live in :mod:`caishen.envs.batched_kernels`; this module is their Python face.
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np

from caishen.sim.rules.base import DEFAULT
from caishen.envs.extras import Extras, needs_extras
from caishen.envs.observation import LAYOUTS, _flat_tables, check_layout, flat_size, n_planes
from caishen.envs.oracle import Oracle
from caishen.sim.warmup import first_use
from caishen.sim.engine import (
    N_ACTIONS,
    N_KINDS,
    N_SEATS,
    Game,
    PublicLog,
    action_name,
    engine_params,
    load_rules,
    new_records,
    new_state,
)
from caishen.sim.bots import registry
from caishen.sim.bots.agent import Agent, BotAgent, PolicyAgent, RandomAgent
from caishen.sim.bots.policies import new_work
from caishen.sim.bots.registry import POLICY_HOST
from caishen.sim.rules import base as rulesets
from caishen.sim.rules.kernels import hand_points
from caishen.sim.rules.options import short_repr
from caishen.sim.tables import hand_tables

from caishen.envs.batched_kernels import (  # the layouts and kernels under BatchedGames
    C_DEALER,
    C_EPISODE,
    C_FINAL_OBS,
    C_FLAT,
    C_HISTORY,
    C_FINAL_STATE,
    C_LOG,
    C_MATCH_LEN,
    C_MODE,
    C_PENALTY,
    C_REWARD,
    C_SEAT,
    GAME_DTYPE,
    GI_HAND_SEED,
    GI_LEARNER,
    GI_WAIT,
    MODE_SELFPLAY,
    MODE_VERSUS,
    N_C,
    _bot_actions,
    _first_bad_action,
    _init_games,
    _observe_games,
    _resume_games,
    _sample_legal,
    _step_games,
)

__all__ = [
    "BatchedGames",
    "EnvConfig",
    "GAME_DTYPE",
    "REWARDS",
    "EPISODES",
    "MODES",
    "SIGN_ILLEGAL_REWARD",
    "MAX_GAMES",
]

#: reward modes (module docstring, "Rewards")
REWARDS = ("points", "scaled", "sign")
#: games of one batch at most (~30 KB each with their observations: 65,536 take about 2 GB); num_envs above it
#: is a ValueError, not a MemoryError
MAX_GAMES = 1 << 16
#: default illegal-action reward of ``reward="sign"`` (outside its range -1..1)
SIGN_ILLEGAL_REWARD = -2.0
#: episode kinds
EPISODES = ("hand", "match")
#: who plays: every seat is an agent (``selfplay``) or one learning seat per game (``versus``)
MODES = ("selfplay", "versus")


# ---------------------------------------------------------------------------
# Python API
# ---------------------------------------------------------------------------
def sample_legal(masks: np.ndarray, rng_state: np.ndarray, out: np.ndarray) -> np.ndarray:
    """``out[i]``: a uniformly random legal action of ``masks: bool[n, 145]``; -1 for a row
    without a legal action.  ``rng_state: uint64[4]`` is a ``caishen.sim.rng`` stream (seed it with
    ``caishen.sim.rng._rng_seed``), advanced in place; ``out: int64[n]``.  Returns ``out``.

    A random agent for benchmarks and tests that costs almost nothing next to the env.
    Raises ``ValueError`` for wrong shapes or dtypes, or an all-zero (unseeded) stream.
    """
    if not (isinstance(masks, np.ndarray) and masks.ndim == 2 and masks.shape[1] == N_ACTIONS
            and masks.dtype == np.bool_):
        raise ValueError(f"masks must be a bool[n, {N_ACTIONS}] array")
    if not (isinstance(out, np.ndarray) and out.shape == (masks.shape[0],) and out.dtype == np.int64):
        raise ValueError(f"out must be an int64[{masks.shape[0]}] array")
    if not (isinstance(rng_state, np.ndarray) and rng_state.shape == (4,) and rng_state.dtype == np.uint64
            and rng_state.any()):
        raise ValueError("rng_state must be a seeded uint64[4] stream (caishen.sim.rng._rng_seed), not all zeros")
    _sample_legal(masks, rng_state, out)
    return out



class EnvConfig(NamedTuple):
    """What each step of a batch returns: the observation and the reward options (:class:`BatchedGames` and the
    vector envs take them as keywords of the same names, ``gymnasium.make_vec(..., observation="candidates",
    assist=True)``; ``BatchedGames.config`` holds them).  Checked by :class:`BatchedGames`, naming a bad one."""

    observation: str = "planes"  #: "planes", "flat", "grid" or "candidates" (caishen.envs.observation)
    history: bool = False  #: add the order-of-play block
    assist: bool = False  #: add the assist block (shanten, effective tiles)
    oracle: bool = False  #: training labels from the hidden state in ``oracle_labels``, never in an observation
    final_obs: bool = True  #: keep the final observations of ended episodes
    reward: str = "points"  #: "points", "scaled" (by ``reward_scale``) or "sign" (module docstring, "Rewards")
    reward_scale: float | None = None  #: points per reward unit of "scaled" (None: the rule set's)
    illegal_action: str = "raise"  #: "raise" or "penalty" (``illegal_reward``; module docstring, "Illegal actions")
    illegal_reward: float | None = None  #: the penalty's reward (None: -2 with "sign"; required otherwise)


def env_config(owner: str, config: dict) -> EnvConfig:
    """``EnvConfig(**config)``; ``TypeError`` naming ``owner`` and an unknown keyword, as Python's own."""
    unknown = sorted(set(config) - set(EnvConfig._fields))
    if unknown:
        raise TypeError(f"{owner}() got an unexpected keyword argument {unknown[0]!r} (its options: "
                        f"{', '.join(EnvConfig._fields)})")
    return EnvConfig(**config)


#: what seats open opponents: :class:`caishen.envs.open_opponents.OpenOpponents`, registered when that module is
#: imported (``import caishen.envs`` does; it imports this module, so this one cannot import it)
_OPEN_OPPONENTS: list = []


def register_open_opponents(cls) -> None:
    """Register ``cls`` (``cls(games, specs)``) as what seats the open opponents of every batch."""
    _OPEN_OPPONENTS[:] = [cls]


def opponent(x):
    """An opponent as a batch seats it: a bot spec (str) as is; the agent of a kernel bot's spec
    (:func:`caishen.agents.make_agent` of ``"greedy"``, ``"random"``, ``"tuned:NAME"`` ...) as its spec, played
    inside numba; any other step-API agent (:class:`caishen.sim.bots.agent.Agent`, ``act(observation) -> int``)
    as itself, an open seat (:class:`caishen.envs.open_opponents.OpenOpponents`: an open seat's agent as that
    seat, another as an :class:`caishen.envs.open_opponents.AgentSeat`); anything else as is (refused by
    :class:`BatchedGames`)."""
    if type(x) is RandomAgent:
        return "random"
    if type(x) in (PolicyAgent, BotAgent):  # not a subclass: its act() may be another
        return x.name
    return x


def _choice(name, value, allowed):
    if not isinstance(value, str) or value not in allowed:
        raise ValueError(f"{name} must be one of {allowed}, got {value!r}")
    return value


def _seat_or(name, value, allowed_str):
    if value is None or value == allowed_str:
        return -1
    if isinstance(value, (bool, np.bool_)) or not isinstance(value, (int, np.integer)) or value not in range(N_SEATS):
        raise ValueError(f"{name} must be a seat 0..3 or {allowed_str!r}, got {value!r}")
    return int(value)


def check_seeds(seeds, n: int) -> np.ndarray:
    """``int64[n]`` game seeds from an int (game ``i`` gets ``seeds + i``), ``n`` ints, or None
    (fresh entropy).  Raises ``ValueError`` for a bool, a negative or too large seed (> 2**63 - 1)
    or a wrong count."""
    if seeds is None:
        return np.random.SeedSequence().generate_state(n, np.uint64).astype(np.int64) & np.int64(2**62 - 1)
    if isinstance(seeds, (bool, np.bool_)):
        raise ValueError(f"seed must be an integer, got {seeds!r}")
    if isinstance(seeds, (int, np.integer)):
        if not 0 <= int(seeds) <= 2**63 - 1 - n:
            raise ValueError(f"seed must be an integer in 0..2**63-1-n, got {seeds!r}")
        return np.arange(int(seeds), int(seeds) + n, dtype=np.int64)
    arr = np.asarray(seeds)
    if arr.shape != (n,) or arr.dtype.kind not in "iu":
        raise ValueError(f"seeds must be an int or {n} integers, got {seeds!r}")
    if (arr < 0).any() or (arr.astype(np.uint64) > 2**63 - 1).any():
        raise ValueError(f"seeds must lie in 0..2**63-1, got {arr[(arr < 0)][:1]!r}")
    return arr.astype(np.int64)


class BatchedGames:
    """``n`` games stepped together in numba (the functional batch API; module docstring).

    ``BatchedGames(n, rules=DEFAULT, options=None, *, mode="selfplay",
    seat=0, opponents="greedy", dealer=None, episode="hand", match_len=16,
    final_state=False, **config)``, ``config`` the keywords of :class:`EnvConfig`
    (``observation="planes", history=False, assist=False, oracle=False,
    final_obs=True, reward="points", reward_scale=None,
    illegal_action="raise", illegal_reward=None``):

    - ``n``: games (1..:data:`MAX_GAMES`, checked before anything is allocated); ``rules`` /
      ``options``: as :class:`caishen.sim.engine.Game`;
    - ``mode``: ``"selfplay"`` (the caller acts for every seat) or
      ``"versus"`` (the caller acts for the learning seat ``seat``: 0..3 or
      ``"random"``, drawn per episode; ``opponents``: a bot spec of
      :mod:`caishen.sim.bots.registry` for the three other seats, or three specs in seat order for a
      fixed ``seat`` (a list or ``"a,b,c"``); open seats ``python:`` / ``exec:`` and step-API agent
      objects (:func:`opponent`) among them are asked after the step kernel,
      :mod:`caishen.envs.open_opponents`, and :meth:`close` stops the programs);
    - ``dealer``: a fixed dealer 0..3 or None (drawn; module docstring);
    - ``episode``: ``"hand"`` or ``"match"`` (``match_len`` hands);
    - ``observation``: ``"planes"`` (``uint8[76, 34]``), ``"flat"``
      (``float32[967]``), ``"grid"`` (``uint8[76, 4, 9]``) or ``"candidates"``
      (a dict), ``history``: add the order-of-play block, ``assist``: the
      assist block (:mod:`caishen.envs.observation`; all but planes and flat
      are built after the step kernel, :mod:`caishen.envs.extras`);
    - ``oracle``: training labels from the hidden state in
      :attr:`oracle_labels` (:mod:`caishen.envs.oracle`; never in an observation);
    - ``reward``: ``"points"``, ``"scaled"`` (``reward_scale``) or ``"sign"``;
    - ``illegal_action``: ``"raise"`` or ``"penalty"`` (``illegal_reward``);
    - ``final_obs``: keep the final observations of ended episodes;
    - ``final_state``: keep each ended episode's last state (the finished hand, or the one an illegal action
      ended) in :attr:`final_states` ``[i]``, written where the episode ends, before the autoreset deals
      again (the single-game env's ``env.game`` and ``info["result"]``, :class:`caishen.envs.gym_env.MahjongEnv`).

    Raises ``ValueError`` for any bad argument, naming it (``TypeError`` for an unknown keyword).
    """

    def __init__(self, n: int, rules=DEFAULT, options=None, *, mode: str = "selfplay", seat=0, opponents="greedy",
                 dealer=None, episode: str = "hand", match_len: int = 16, final_state: bool = False, **config):
        #: the observation and reward options (:class:`EnvConfig`)
        self.config = c = env_config(type(self).__name__, config)
        observation, history, assist, oracle, final_obs = c.observation, c.history, c.assist, c.oracle, c.final_obs
        reward, reward_scale, illegal_action, illegal_reward = (c.reward, c.reward_scale, c.illegal_action,
                                                                c.illegal_reward)
        if isinstance(n, (bool, np.bool_)) or not isinstance(n, (int, np.integer)) or not 1 <= n <= MAX_GAMES:
            raise ValueError(f"the number of games (num_envs) must be an integer in 1..{MAX_GAMES}, got {n!r}")
        self.n = n = int(n)
        self.rules_name, self.rules = load_rules(rules, options)
        self._ep = engine_params(self.rules_name, self.rules)
        self._rp = self.rules.params()
        self._tabs = hand_tables()
        self.mode = _choice("mode", mode, MODES)
        self.episode = _choice("episode", episode, EPISODES)
        if isinstance(match_len, (bool, np.bool_)) or not isinstance(match_len, (int, np.integer)) or match_len < 1:
            raise ValueError(f"match_len must be an integer >= 1, got {match_len!r}")
        self.layout = _choice("observation", observation, LAYOUTS)
        _, self.history, self.assist = check_layout(self.layout, history, assist)
        if not isinstance(oracle, (bool, np.bool_)):
            raise ValueError(f"oracle must be True or False, got {oracle!r}")
        self.reward_mode = _choice("reward", reward, REWARDS)
        if reward_scale is None:
            reward_scale = rulesets.get(self.rules_name).reward_scale
        if isinstance(reward_scale, (bool, np.bool_)) or not np.isfinite(float(reward_scale)) or reward_scale <= 0:
            raise ValueError(f"reward_scale must be a positive number, got {reward_scale!r}")
        self.reward_scale = float(reward_scale)
        self.illegal_action = _choice("illegal_action", illegal_action, ("raise", "penalty"))
        if illegal_reward is None and self.illegal_action == "penalty":
            if self.reward_mode != "sign":
                raise ValueError(
                    f"illegal_action='penalty' with reward={self.reward_mode!r} needs an illegal_reward below every "
                    "reward (points have no lower bound); give one, or use reward='sign' (penalty -2)"
                )
            illegal_reward = SIGN_ILLEGAL_REWARD
        if illegal_reward is not None and (isinstance(illegal_reward, (bool, np.bool_))
                                           or not np.isfinite(float(illegal_reward))):
            raise ValueError(f"illegal_reward must be a finite number, got {illegal_reward!r}")
        self.illegal_reward = None if illegal_reward is None else float(illegal_reward)
        self.dealer = _seat_or("dealer", dealer, None)
        versus = self.mode == "versus"
        self.seat = _seat_or("seat", seat, "random") if versus else -1
        self.opponents = opponents
        self._bots = self._bot_table(opponents if versus else "greedy")  # self-play: a table no seat reads
        self.final_obs_enabled = bool(final_obs)

        self._cfg = np.zeros(N_C, np.int64)
        self._cfg[C_MODE] = MODE_VERSUS if versus else MODE_SELFPLAY
        self._cfg[C_EPISODE] = EPISODES.index(self.episode)
        self._cfg[C_MATCH_LEN] = int(match_len)
        self.match_len = int(match_len)
        self._cfg[C_DEALER] = self.dealer
        self._cfg[C_SEAT] = self.seat
        extras = needs_extras(self.layout, self.assist)  # built from the kernel's planes (caishen.envs.extras)
        self._cfg[C_FLAT] = self.layout == "flat" and not extras
        self._cfg[C_HISTORY] = self.history
        self._cfg[C_REWARD] = REWARDS.index(self.reward_mode)
        self._cfg[C_PENALTY] = self.illegal_action == "penalty"
        self._cfg[C_FINAL_OBS] = self.final_obs_enabled
        self._cfg[C_LOG] = self._open is not None and bool(self._open.hearing)
        if not isinstance(final_state, (bool, np.bool_)):
            raise ValueError(f"final_state must be True or False, got {final_state!r}")
        self._cfg[C_FINAL_STATE] = bool(final_state)
        #: ``STATE_DTYPE[n]`` with ``final_state=True``: the last state of each game's ended episode (``[1]``
        #: unused otherwise)
        self.final_states = new_state(n if final_state else 1)
        self._fcfg = np.array([self.reward_scale, self.illegal_reward or 0.0], np.float64)

        # buffers: everything a step writes is allocated here, once
        rows = n_planes(self.history)
        self.obs_shape = (rows, N_KINDS) if self.layout == "planes" else (flat_size(self.history),)
        self.obs_dtype = np.dtype(np.uint8 if self.layout == "planes" else np.float32)
        self.states = new_state(n)
        self.games = np.zeros(n, GAME_DTYPE)
        k = 1 if versus else N_SEATS
        planes = self.layout == "planes" or extras
        self._obs_planes = np.zeros((n if planes else 0, rows, N_KINDS), np.uint8)
        self._obs_flat = np.zeros((0 if planes else n, flat_size(self.history)), np.float32)
        nf = n if self.final_obs_enabled else 0
        self._fin_planes = np.zeros((nf if planes else 0, k, rows, N_KINDS), np.uint8)
        self._fin_flat = np.zeros((0 if planes else nf, k, flat_size(self.history)), np.float32)
        #: the observation of the seat to act in each game: ``uint8[n, R, 34]`` or ``float32[n, F]``
        self.obs = self._obs_planes if planes else self._obs_flat
        #: the final observations of the episodes that ended in the last step (rows where
        #: ``terminated | truncated``): ``[n, 1, ...]`` (versus: the learning seat's) or ``[n, 4, ...]``
        #: (self-play: every seat's, seat order); None with ``final_obs=False``
        self.final_obs = (self._fin_planes if planes else self._fin_flat) if self.final_obs_enabled else None
        #: ``bool[n, 145]``: the legal actions of the seat to act
        self.masks = np.zeros((n, N_ACTIONS), np.bool_)
        #: ``int64[n]``: the seat to act (pgx's ``current_player``)
        self.player = np.zeros(n, np.int64)
        #: ``float32[n, 4]``: what each seat earned in the last step (module docstring, "Rewards")
        self.rewards = np.zeros((n, N_SEATS), np.float32)
        #: ``float32[n]``: versus: the learning seat's reward of the last step (0 in self-play)
        self.reward = np.zeros(n, np.float32)
        #: ``bool[n]``: the episode ended in the last step (by a hand's end, or an illegal action)
        self.terminated = np.zeros(n, np.bool_)
        #: ``bool[n]``: the match limit was reached in the last step (``episode="match"``)
        self.truncated = np.zeros(n, np.bool_)
        #: ``bool[n]``: the last step's action was illegal (``illegal_action="penalty"``)
        self.illegal = np.zeros(n, np.bool_)
        #: ``int64[n, 4]``: the points of the hands that ended in the last step (summed), whatever the reward mode
        self.points = np.zeros((n, N_SEATS), np.int64)
        #: ``int64[n]``: hands that ended (and counted) in the last step
        self.hands_ended = np.zeros(n, np.int64)
        #: ``RECORD_DTYPE[n]``: records of the games paused for the Python scorer
        self.records = new_records(n)
        self._learner = np.full(n, self.seat, np.int64)
        #: grid / candidates / assist: their buffers, filled after every step (None otherwise)
        self._extras = Extras(n, k, self.layout, self.history, self.assist, self.final_obs_enabled) if extras else None
        if extras:
            self.obs, self.final_obs = self._extras.obs, self._extras.final_obs
            self.obs_shape, self.obs_dtype = self._extras.shape, self._extras.dtype
        #: ``oracle=True``: the labels of the last step (:mod:`caishen.envs.oracle`), else None
        self._oracle = Oracle(self) if oracle else None
        self.oracle_labels = self._oracle.labels if oracle else None
        self._work = new_work()
        self._x = np.zeros((rows, N_KINDS), np.uint8)
        self._scalar, self._inv_high = _flat_tables(self.history)
        self._bot_work = new_work()
        self._bx_of: dict = {}  # bot_actions: the bot context of each bot with data asked for
        self._tab = (self._ep, self._rp, self._tabs, self._cfg, self._fcfg, self._bots)
        self._scr = (self._work, self._x, self._scalar, self._inv_high, self.final_states)
        self._out = (self._obs_planes, self._obs_flat, self._fin_planes, self._fin_flat, self.masks, self.player,
                     self.rewards, self.reward, self.terminated, self.truncated, self.illegal, self.points,
                     self.hands_ended, self.records)
        self._started = False

    # -- setup -------------------------------------------------------------------------------
    def _bot_table(self, opponents) -> tuple:
        """``(table: int64[4, 2], bot context, log, log_n)`` of the opponents: any specs of the bot registry
        (:func:`caishen.sim.bots.registry.bot_table`; the bots with data search from one stream seeded 0); an
        open seat (``python:``, ``exec:``, a step-API agent: :func:`opponent`) gets the code ``POLICY_HOST`` and a
        place in ``self._open`` (:class:`caishen.envs.open_opponents.OpenOpponents`, which owns the log of the
        seats that hear the hands: ``exec:`` programs, agents)."""
        if isinstance(opponents, str) and opponents.count(",") == N_SEATS - 2:  # "a,b,c": the other seats in order
            opponents = [p.strip() for p in opponents.split(",")]
        if isinstance(opponents, (str, Agent)):
            opponents = opponent(opponents)
            specs = registry.split_specs(opponents) if isinstance(opponents, str) else [opponents] * N_SEATS
        else:
            specs = [opponent(p) for p in opponents] if isinstance(opponents, (list, tuple)) else None
            if specs is None or len(specs) != N_SEATS - 1 or not all(isinstance(s, (str, Agent)) for s in specs):
                raise ValueError("opponents must be a bot spec of caishen.sim.bots.registry ('greedy', 'random', "
                                 "'tuned:NAME', 'mc:8', 'python:MODULE:FN', 'exec:CMD', ...) or a step-API agent "
                                 f"(caishen.agents.Agent), or 3 of them, got {short_repr(opponents)}")
            if self.seat < 0:
                raise ValueError("three opponent specs need a fixed seat (the learning seat is drawn with "
                                 "seat='random')")
            specs.insert(self.seat, "greedy")  # the learning seat's row is never read
        joker = int(self._ep.joker)
        self._open = None
        hosted = [not isinstance(p, str) or registry.is_open(p) for p in specs]  # an agent is an open seat
        if any(hosted) and self.seat >= 0:  # the learning seat is nobody's open seat
            specs[self.seat], hosted[self.seat] = "greedy", False
        if any(hosted):  # an open seat's code is found, or named
            registry.check_seats([p if isinstance(p, str) else "random" for p in specs], self.rules_name, joker)
            if not _OPEN_OPPONENTS:
                raise ValueError("open seats among the opponents need caishen.envs imported (it registers "
                                 "caishen.envs.open_opponents)")
            self._open = _OPEN_OPPONENTS[0](self, specs)
        kernel = ["random" if h else p for p, h in zip(specs, hosted)]  # an open seat's row: never read
        table, weights = registry.bot_table(kernel, self.rules_name, joker)
        table[np.array(hosted, bool), 0] = POLICY_HOST  # the kernel stops there (caishen.envs.batched_kernels)
        bx = registry.make_context(self.rules_name, self.rules, weights, 0, kernel)
        log = self._open.log if self._open is not None else np.zeros((0, 0, 3), np.int64)
        return table, bx, log, self._open.log_n if self._open is not None else np.zeros(0, np.int64)

    def _args(self):
        """``(states, games, tab, scr, out)``: what every batch kernel takes
        (:func:`caishen.envs.batched_kernels._advance`)."""
        return self.states, self.games, self._tab, self._scr, self._out

    def reset(self, seeds=None) -> "BatchedGames":
        """Seed every game's stream and deal its first episode, up to the first decision.

        ``seeds``: an int (game ``i`` gets ``seeds + i``), ``n`` ints, or None
        (fresh entropy).  Fills the output buffers; returns ``self``.
        """
        s = check_seeds(seeds, self.n)
        if self._open is not None:
            self._open.begin()
        a = self._args()
        with first_use("envs"):  # a cold numba cache compiles here: say so (issue 11 item 3)
            n_wait = _init_games(s, self._learner, *a)
        self._settle(n_wait)
        # an episode that ended before the first decision (a one-hand match) is not the caller's
        self.terminated[:] = False
        self.truncated[:] = False
        self.illegal[:] = False
        self.rewards[:] = 0.0
        self.reward[:] = 0.0
        self.points[:] = 0
        self.hands_ended[:] = 0
        self._started = True
        self._after_step()
        return self

    # -- stepping ------------------------------------------------------------------------------
    def check_actions(self, actions) -> np.ndarray:
        """``actions`` as ``int64[n]``; raises ``ValueError`` for a wrong shape or dtype (bools and
        floats are not actions), an action outside ``0..144``, or (``illegal_action="raise"``) an
        illegal one, naming the game, the action and the legal ones.  Changes nothing."""
        if not self._started:
            raise ValueError("call reset() before step()")
        a = np.asarray(actions)
        if a.dtype.kind not in "iu":
            raise ValueError(f"actions must be integers (not {a.dtype}; bools are not actions), got {short_repr(actions)}")
        if a.shape != (self.n,):
            raise ValueError(f"actions must have shape ({self.n},), got {a.shape}")
        if a.dtype.kind == "u" and a.size and a.max() >= N_ACTIONS:  # name it before int64 could wrap it
            bad = int(np.flatnonzero(a >= N_ACTIONS)[0])
            raise ValueError(f"game {bad}: action {int(a[bad])} is outside 0..{N_ACTIONS - 1}")
        a = a.astype(np.int64, copy=False)
        bad = _first_bad_action(self.states, a, self.illegal_action == "raise")
        if bad >= 0:
            v = int(a[bad])
            if not 0 <= v < N_ACTIONS:
                raise ValueError(f"game {bad}: action {v} is outside 0..{N_ACTIONS - 1}")
            legal = ", ".join(f"{action_name(x)} ({x})" for x in np.flatnonzero(self.states[bad]["mask"]))
            raise ValueError(
                f"game {bad}: illegal action {action_name(v)!r} ({v}) for seat {int(self.player[bad])}; legal: {legal}"
            )
        return a

    def step(self, actions) -> "BatchedGames":
        """Apply ``actions[i]`` for the seat to act in game ``i`` (the learning seat in versus mode).

        ``actions``: ``int[n]`` (``int64`` avoids a copy).  Every game moves
        to its next decision; ended episodes are dealt again in place.
        Fills the output buffers; returns ``self``.  Raises ``ValueError``
        as :meth:`check_actions`, before any game changes.
        """
        a = self.check_actions(actions)
        n_wait = _step_games(a, *self._args())
        self._settle(n_wait)
        self._after_step()
        return self

    def _after_step(self) -> None:
        """The layouts built after the kernel (:mod:`caishen.envs.extras`) and the oracle's labels."""
        if self._extras is not None:
            ended = self.terminated | self.truncated
            self._extras.update(self.states, self.player, self._ep, self._tabs, self._obs_planes, self._fin_planes,
                                ended)
        if self._oracle is not None:
            self._oracle.update()

    def _settle(self, n_wait: int) -> None:
        """Score the games paused at a hand's end (wins scored after the hand) and resume them, until none waits;
        with open seats among the opponents, ask them too (:meth:`caishen.envs.open_opponents.OpenOpponents.settle`)."""
        if self._open is not None:
            self._open.settle()
            return
        while n_wait:
            n_wait = self._score_paused()

    def close(self) -> None:
        """Stop the ``exec:`` opponents' programs (:mod:`caishen.envs.open_opponents`); nothing to do without."""
        if self._open is not None:
            self._open.close()

    def _score_paused(self) -> int:
        idx = np.flatnonzero(self.games["gi"][:, GI_WAIT]).astype(np.int64)
        self.games["points"][idx] = hand_points(rulesets.get(self.rules_name), self.rules, self.records[idx])
        return _resume_games(idx, *self._args())

    # -- reading ---------------------------------------------------------------------------------
    def observe(self, seats=None, out=None) -> np.ndarray:
        """The observation of seat ``seats[i]`` in game ``i`` (default: the seat to act), in this
        batch's layout: ``uint8[n, R, 34]`` or ``float32[n, F]`` (into ``out`` if given)."""
        if not self._started:
            raise ValueError("call reset() first")
        s = self.player if seats is None else np.asarray(seats)
        if s.shape != (self.n,) or s.dtype.kind not in "iu" or ((s < 0) | (s >= N_SEATS)).any():
            raise ValueError(f"seats must be {self.n} seats 0..3, got {seats!r}")
        if self._extras is not None:  # grid, candidates, assist: from the planes (caishen.envs.extras)
            planes = np.zeros((self.n, *self._x.shape), np.uint8)
            _observe_games(s.astype(np.int64), self.states, self._ep, self._cfg, self._x, self._scalar,
                           self._inv_high, planes, np.zeros((0, flat_size(self.history)), np.float32))
            if out is not None and self.layout == "candidates":
                raise ValueError("observe(out=...) is not taken with observation='candidates' (a dict)")
            if out is not None and (not isinstance(out, np.ndarray) or out.shape != (self.n, *self.obs_shape)
                                    or out.dtype != self.obs_dtype):
                raise ValueError(f"out must be a {self.obs_dtype}{[self.n, *self.obs_shape]} array")
            return self._extras.observe(self.states, s.astype(np.int64), self._ep, self._tabs, planes, out)
        shape = (self.n, *self.obs_shape)
        if out is None:
            out = np.zeros(shape, self.obs_dtype)
        elif not isinstance(out, np.ndarray) or out.shape != shape or out.dtype != self.obs_dtype:
            raise ValueError(f"out must be a {self.obs_dtype}{list(shape)} array")
        planes = self.layout == "planes"
        empty_p = np.zeros((0, *self._x.shape), np.uint8)
        empty_f = np.zeros((0, flat_size(self.history)), np.float32)
        _observe_games(s.astype(np.int64), self.states, self._ep, self._cfg, self._x, self._scalar, self._inv_high,
                       out if planes else empty_p, empty_f if planes else out)
        return out

    def observe_states(self, states, seats, out=None) -> np.ndarray:
        """The observation of seat ``seats[i]`` in ``states[i]``, any engine states (``STATE_DTYPE[k]``: an
        arena's games, :mod:`caishen.envs.seats`), in this batch's layout and options, as :meth:`observe`
        (the same kernel): ``uint8[k, R, 34]`` or ``float32[k, F]`` (into ``out`` if given).  Needs no
        :meth:`reset`.  Raises ``ValueError`` for states of another dtype or seats that are not ``k`` seats
        0..3."""
        if not isinstance(states, np.ndarray) or states.dtype != self.states.dtype or states.ndim != 1:
            raise ValueError("states must be a one-dimensional array of engine states (caishen.sim.engine.new_state)")
        k = len(states)
        s = np.asarray(seats)
        if s.shape != (k,) or s.dtype.kind not in "iu" or ((s < 0) | (s >= N_SEATS)).any():
            raise ValueError(f"seats must be {k} seats 0..3, got {short_repr(seats)}")
        shape = (k, *self.obs_shape)
        if out is None:
            out = np.zeros(shape, self.obs_dtype)
        elif not isinstance(out, np.ndarray) or out.shape != shape or out.dtype != self.obs_dtype:
            raise ValueError(f"out must be a {self.obs_dtype}{list(shape)} array")
        planes = self.layout == "planes"
        empty_p = np.zeros((0, *self._x.shape), np.uint8)
        empty_f = np.zeros((0, flat_size(self.history)), np.float32)
        _observe_games(s.astype(np.int64), states, self._ep, self._cfg, self._x, self._scalar, self._inv_high,
                       out if planes else empty_p, empty_f if planes else out)
        return out

    def bot_actions(self, policy: str = "greedy", out=None) -> np.ndarray:
        """``int64[n]``: the action that the built-in bot ``policy`` (a spec of :mod:`caishen.sim.bots.registry`) would
        play for the seat to act in each game.  Mix it with a trained policy's actions by seat to
        put a bot in any seat of a self-play batch::

            acts = np.where(games.player == 0, trained_actions, games.bot_actions("greedy"))
        """
        if not self._started:
            raise ValueError("call reset() first")
        table, weights = registry.bot_table(policy, self.rules_name, int(self._ep.joker))
        if self._bx_of.get(policy) is None:
            self._bx_of[policy] = registry.make_context(self.rules_name, self.rules, weights, 0, policy)
        if out is None:
            out = np.zeros(self.n, np.int64)
        elif not isinstance(out, np.ndarray) or out.shape != (self.n,) or out.dtype != np.int64:
            raise ValueError(f"out must be an int64[{self.n}] array")
        _bot_actions(table[0, 0], table[0, 1], self.states, self._ep, self._rp, self._tabs, self._bot_work, out,
                     self._bx_of.get(policy))
        return out

    @property
    def hand_seed(self) -> np.ndarray:
        """``int64[n]``: each game's current wall seed (``Game().reset(seed=...)`` deals it)."""
        return self.games["gi"][:, GI_HAND_SEED]

    @property
    def learner(self) -> np.ndarray:
        """``int64[n]``: versus mode: each game's learning seat in the current episode."""
        return self.games["gi"][:, GI_LEARNER]

    def nbytes(self) -> int:
        """Bytes held by this batch: states, game records and every buffer (module docstring, "Memory")."""
        arrays = [self.states, self.games, self._obs_planes, self._obs_flat, self._fin_planes, self._fin_flat,
                  self.masks, self.player, self.rewards, self.reward, self.terminated, self.truncated, self.illegal,
                  self.points, self.hands_ended, self.records, self._learner]
        arrays += self._extras.buffers() if self._extras is not None else []
        arrays += [self._bots[2], self._bots[3]]  # the exec: opponents' log (empty without one)
        return int(sum(a.nbytes for a in arrays))


class LiveGame(Game):
    """Game ``0`` of a :class:`BatchedGames` as a read-only :class:`Game` (``env.game``): its live state,
    ``done``, ``legal_mask()``, ``result``, ``observe()`` (an empty public log); :meth:`step` and :meth:`reset`
    raise (step the env)."""

    def __init__(self, games: BatchedGames):  # no Game.__init__: the state is the batch's
        self.rules_name, self.rules = games.rules_name, games.rules
        self._ep, self._rp, self._tabs = games._ep, games._rp, games._tabs
        self._buf = games.states[:1]
        self.state = self._buf[0]
        self.events: list[dict] = []
        self._logs = tuple(PublicLog(p) for p in range(N_SEATS))
        self.seed = None
        self._started = False

    def _show(self, states) -> None:
        """Show ``states[0]`` (the live game, or the last state of the episode that just ended)."""
        self._buf = states[:1]
        self.state = self._buf[0]

    def reset(self, *args, **kwargs):
        raise ValueError("env.game is the env's live hand: call env.reset()")

    def step(self, action):
        raise ValueError("env.game is the env's live hand: call env.step(action)")
