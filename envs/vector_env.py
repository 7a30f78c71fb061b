"""Vectorized environments over :mod:`caishen.envs.batched`: many games per numba call, for training.

================== =============================================================
Versus bots        :class:`CaishenVectorEnv`, a ``gymnasium.vector.VectorEnv``:
                   ``gymnasium.make_vec("caishen/<Name>-v0", num_envs=1024)``
                   (one id per rule set; ``import caishen.envs`` registers them,
                   ``vectorization_mode="vector_entry_point"`` is the default)
Self-play          :class:`SelfPlayVectorEnv`: every seat is an agent of one
                   shared policy; rewards ``float32[n, 4]``, the seat to act in
                   ``info["current_player"]``
One game           :class:`caishen.envs.gym_env.MahjongEnv`, a ``gymnasium.Env``
                   over one game of the same core (``gymnasium.make``)
Action space       ``MultiDiscrete([145] * n)``; ``single_action_space``
                   ``Discrete(145)`` (the engine's layout, :mod:`caishen.sim.engine`)
Observation space  ``single_observation_space``: ``Box(0, high, (76, 34),
                   uint8)`` planes (default), ``Box(0, 1, (967,), float32)``
                   with ``observation="flat"``, ``Box(0, high, (76, 4, 9),
                   uint8)`` with ``"grid"``, a ``Dict`` with ``"candidates"``;
                   124 rows / 2599 inputs with ``history=True``, 4 rows / 70
                   inputs more with ``assist=True`` (tables:
                   :mod:`caishen.envs.observation`)
Oracle labels      ``oracle=True``: ``info["oracle"]`` (:mod:`caishen.envs.oracle`;
                   training targets, never in an observation)
Action masking     ``env.action_masks()`` -> ``bool[num_envs, 145]``
Autoreset          ``metadata["autoreset_mode"]``: ``AutoresetMode.SAME_STEP``
================== =============================================================

Versus bots
-----------
One seat per game learns (``seat``: 0..3, default 0, or ``"random"`` per
episode); the other three are played inside the numba kernel by
``opponents`` (``"greedy"`` default, or any spec of the bot registry,
:mod:`caishen.sim.bots.registry`: ``"random"``, ``"tuned:NAME"``, ``"mc:8"``, ...;
or three specs, the other seats in seat order, as a list or ``"a,b,c"``).  ``step(actions)`` applies
each game's learning seat's action, then the bots play until that seat must decide again.  Open seats
(``"python:mybot.py:Policy"``, ``"exec:./mybot"``) and step-API agent objects (``act(observation) ->
int``, one call per decision) are opponents too, alone or beside numba bots: each is asked once per round
for all the games waiting for it (:mod:`caishen.envs.open_opponents`); ``close()`` stops the ``exec:``
programs.
Returns ``(obs, rewards: float32[n], terminated, truncated, info)``.

Autoreset is *same-step* (Gymnasium's ``AutoresetMode.SAME_STEP``, and
stable-baselines3's ``VecEnv`` habit): where ``terminated | truncated``, the
game was already dealt again and ``obs[i]`` is the new episode's first
observation; the last observation of the ended episode is
``info["final_obs"][i]`` (valid where ``info["_final_obs"][i]``; a full
array, not an object array, so nothing is built per game).  Other ``info``
keys, one entry per game: ``"seat"`` (the learning seat), ``"hand_points":
int64[n, 4]`` (the points of the hands that ended in the step, for
evaluation whatever the reward mode), ``"hands_ended": int64[n]``, and with
``illegal_action="penalty"`` ``"illegal": bool[n]``.

The arrays returned are views of preallocated buffers that the next step
overwrites (no allocation per step); pass ``copy=True`` for copies.
Rewards, episodes (a hand, or a match with ``truncated`` at the limit),
seeding, illegal actions and the scoring after the hand are as in
:mod:`caishen.envs.batched`: the same ``seed`` gives the same games whatever
``num_envs`` (game ``i`` gets ``seed + i``).

Self-play
---------
:class:`SelfPlayVectorEnv` has the same arguments but ``seat`` and
``opponents``.  ``reset`` / ``step`` return the observation and mask of the
seat that must act in each game, and that seat in
``info["current_player"]: int64[n]``; ``step`` returns ``rewards:
float32[n, 4]``, ``rewards[i, s]`` being seat ``s``'s (pgx's convention;
zero-sum per hand with ``reward="points"`` or ``"scaled"``).  The exact
rule for assigning them to each seat's transitions is in
:mod:`caishen.envs.batched` ("Rewards").  ``info["final_obs"]: [n, 4, ...]`` holds
every seat's last observation of an ended episode.  To put a built-in bot
in some seats next to a trained policy:
``np.where(info["current_player"] == 0, mine, env.bot_actions("greedy"))``.

Putting a bot or a trained policy in a seat
-------------------------------------------
- Versus bots: ``opponents`` sets the bot of every other seat: a numba bot,
  a trained policy as ``"python:MODULE:FN"`` (called with a batch of
  observations and masks, :mod:`caishen.envs.open_opponents`), or any
  step-API agent object (``make_agent("ppo:PATH")``, your own
  :class:`caishen.agents.Agent`: called with each deciding seat's
  :class:`caishen.sim.engine.Observation`, :class:`caishen.envs.open_opponents.AgentSeat`);
  or use :class:`SelfPlayVectorEnv` and route actions by ``info["current_player"]``.
- :class:`caishen.envs.gym_env.MahjongEnv` (one game of this core): the same
  ``seat`` and ``opponents``.
- The PettingZoo AEC env (one self-play game of this core): every seat is yours; step a bot's seat with
  ``caishen.agents.make_agent("greedy").act(env.unwrapped.game.observe())``.
"""

from __future__ import annotations

import numpy as np
from gymnasium import spaces
from gymnasium.vector import AutoresetMode, VectorEnv
from gymnasium.vector.utils import batch_space

from caishen.sim.rules.base import DEFAULT
from caishen.envs.batched import BatchedGames, check_seeds, env_config
from caishen.envs.observation import observation_space
from caishen.envs.render import check_render_mode
from caishen.sim.engine import N_ACTIONS

__all__ = ["CaishenVectorEnv", "SelfPlayVectorEnv", "single_spaces", "observation_space", "index_obs"]


def single_spaces(games: BatchedGames) -> tuple[spaces.Space, spaces.Space]:
    """``(observation_space, action_space)`` of one game of ``games``."""
    return observation_space(games.layout, games.history, games.assist), spaces.Discrete(N_ACTIONS)


def index_obs(obs, i):
    """Game ``i``'s observation of a batch (a copy; the candidates dict key by key)."""
    if isinstance(obs, dict):
        return {k: v[i].copy() for k, v in obs.items()}
    return obs[i].copy()


class _BatchedVectorBase:
    """Shared code of the two vector envs (spaces, reset, step, info, copies); a subclass names what differs: the
    per-game reward (``_reward``: the :class:`BatchedGames` attribute, ``reward: float32[n]`` or ``rewards:
    float32[n, 4]``) and the seat of each game in ``info`` (``_seat_key`` from the attribute ``_seat``)."""

    metadata = {"autoreset_mode": AutoresetMode.SAME_STEP, "render_modes": []}
    games: BatchedGames
    _reward: str
    _seat_key: str
    _seat: str

    def _setup(self, num_envs, copy, render_mode, **kwargs):
        check_render_mode(render_mode, modes=())
        self.games = BatchedGames(num_envs, **kwargs)
        self.num_envs = self.games.n
        self.copy = bool(copy)
        self.render_mode = None
        self.single_observation_space, self.single_action_space = single_spaces(self.games)
        self.observation_space = batch_space(self.single_observation_space, self.num_envs)
        self.action_space = batch_space(self.single_action_space, self.num_envs)
        self._ended = np.zeros(self.num_envs, np.bool_)

    def _out(self, x):
        if isinstance(x, dict):
            return {k: self._out(v) for k, v in x.items()}
        return x.copy() if self.copy else x

    def reset(self, *, seed=None, options=None):
        """Deal every game's first episode: ``(obs, info)``.  ``seed``: an int (game ``i`` gets
        ``seed + i``), ``num_envs`` ints, or None (fresh entropy); ``options`` is ignored."""
        self.games.reset(check_seeds(seed, self.num_envs))
        return self._out(self.games.obs), self._info()

    def step(self, actions):
        """Apply ``actions[i]`` for the seat to act in game ``i``: ``(obs, rewards, terminated, truncated, info)``.

        Raises ``ValueError`` (before any game changes) for a wrong shape or
        dtype, an action outside ``0..144`` or, unless
        ``illegal_action="penalty"``, an illegal one, naming the game index and the action.
        """
        g = self.games.step(actions)
        return (self._out(g.obs), self._out(getattr(g, self._reward)), self._out(g.terminated),
                self._out(g.truncated), self._info())

    def _info(self) -> dict:
        g = self.games
        np.logical_or(g.terminated, g.truncated, out=self._ended)
        info = {"hand_points": self._out(g.points), "hands_ended": self._out(g.hands_ended),
                self._seat_key: self._out(getattr(g, self._seat))}
        if g.final_obs is not None:
            fin = g.final_obs
            if g.mode == "versus":
                fin = {k: v[:, 0] for k, v in fin.items()} if isinstance(fin, dict) else fin[:, 0]
            info["final_obs"] = self._out(fin)
            info["_final_obs"] = self._out(self._ended)
        if g.illegal_action == "penalty":
            info["illegal"] = self._out(g.illegal)
        if g.oracle_labels is not None:
            info["oracle"] = self._out(g.oracle_labels)
        return info

    def action_masks(self) -> np.ndarray:
        """``bool[num_envs, 145]``: the legal actions of the seat to act in each game."""
        return self._out(self.games.masks)

    def bot_actions(self, policy: str = "greedy") -> np.ndarray:
        """``int64[num_envs]``: a built-in bot's action for the seat to act in each game (:mod:`caishen.sim.bots.policies`)."""
        return self.games.bot_actions(policy)

    def close_extras(self, **kwargs):
        """Stop the ``exec:`` opponents' programs, if any (``env.close()``; :mod:`caishen.envs.open_opponents`)."""
        self.games.close()


class CaishenVectorEnv(_BatchedVectorBase, VectorEnv):
    """One learning seat per game against numba bots, ``num_envs`` games per numba call (module docstring).

    ``CaishenVectorEnv(num_envs=1, rules=DEFAULT, options=None, seat=0,
    opponents="greedy", dealer=None, *, episode="hand", match_len=16,
    copy=False, render_mode=None, **config)``, ``config`` the observation
    and reward keywords of :class:`caishen.envs.batched.EnvConfig`
    (``observation="planes", history=False, assist=False, oracle=False,
    final_obs=True, reward="points", reward_scale=None,
    illegal_action="raise", illegal_reward=None``).  Raises ``ValueError`` for a bad
    argument (``num_envs < 1`` included; an unsupported ``render_mode``
    raises an error that is both ``ValueError`` and ``TypeError``).
    """

    _reward, _seat_key, _seat = "reward", "seat", "learner"  # rewards: float32[n]; info["seat"]: the learning seat

    def __init__(self, num_envs: int = 1, rules=DEFAULT, options=None, seat=0, opponents="greedy", dealer=None, *,
                 episode="hand", match_len=16, copy=False, render_mode=None, **config):
        config = env_config(type(self).__name__, config)._asdict()
        self._setup(num_envs, copy, render_mode, rules=rules, options=options, mode="versus", seat=seat,
                    opponents=opponents, dealer=dealer, episode=episode, match_len=match_len, **config)


class SelfPlayVectorEnv(_BatchedVectorBase):
    """Every seat of ``num_envs`` games is an agent of one shared policy (module docstring, "Self-play").

    Same arguments as :class:`CaishenVectorEnv` without ``seat`` and
    ``opponents``: ``SelfPlayVectorEnv(num_envs=1, rules=DEFAULT,
    options=None, dealer=None, *, episode="hand", match_len=16, copy=False,
    render_mode=None, **config)``.  ``reset(seed=None) -> (obs, info)``; ``step(actions) ->
    (obs, rewards: float32[n, 4], terminated, truncated, info)``;
    ``info["current_player"]: int64[n]`` is the seat whose observation and
    mask are returned, and who plays ``actions[i]`` next.
    """

    _reward, _seat_key, _seat = "rewards", "current_player", "player"  # rewards: float32[n, 4]; the seat to act

    def __init__(self, num_envs: int = 1, rules=DEFAULT, options=None, dealer=None, *, episode="hand", match_len=16,
                 copy=False, render_mode=None, **config):
        config = env_config(type(self).__name__, config)._asdict()
        self._setup(num_envs, copy, render_mode, rules=rules, options=options, mode="selfplay", dealer=dealer,
                    episode=episode, match_len=match_len, **config)

    def close(self):
        pass
