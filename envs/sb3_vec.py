"""The batched env (:mod:`caishen.envs.batched`) as a stable-baselines3 ``VecEnv``, for ``sb3_contrib.MaskablePPO``.

Needs the ``[rl]`` extra (stable-baselines3, and so torch): this module
imports ``stable_baselines3`` at import time, and ``import caishen.envs`` does not
import it (only ``import caishen.envs.sb3_vec`` does).

>>> from caishen.envs.sb3_vec import BatchedVecEnv
>>> from sb3_contrib import MaskablePPO
>>> env = BatchedVecEnv(256, rules=DEFAULT, observation="flat", reward="scaled", seed=0)
>>> model = MaskablePPO("MlpPolicy", env, n_steps=64).learn(100_000)

One SB3 env index is one game of a :class:`caishen.envs.vector_env.CaishenVectorEnv`
(versus bots): one learning seat per game, the three other seats played
inside the numba kernel by ``opponents`` (default ``"greedy"``).  Every
``step`` is one numba call for all games.  What SB3 asks of a ``VecEnv``,
and what this adapter gives:

============================  =================================================
``step`` returns              ``(obs, rewards: float32[n], dones: bool[n],
                              infos: list of n dicts)``; ``obs`` and
                              ``rewards`` are fresh copies (SB3 keeps
                              ``_last_obs`` across the next step)
autoreset                     same-step: where ``dones[i]``, the game was dealt
                              again and ``obs[i]`` is the new episode's first
                              observation; ``infos[i]["terminal_observation"]``
                              is the ended episode's last one and
                              ``infos[i]["TimeLimit.truncated"]`` tells a match
                              limit (``episode="match"``) from a real end
episode statistics            ``infos[i]["episode"] = {"r", "l", "t"}`` where an
                              episode ended (what ``VecMonitor`` adds, so SB3's
                              ``rollout/ep_rew_mean`` is logged without a
                              wrapper), and ``infos[i]["points"]``: the learning
                              seat's points in that episode, whatever the
                              reward mode
action masks                  ``env.action_masks() -> bool[n, 145]``, and
                              ``env_method("action_masks")`` (a list of ``n``
                              rows): ``sb3_contrib.common.maskable.utils``
                              checks ``has_attr("action_masks")`` and stacks
                              ``env_method("action_masks")``; the masks are not
                              put in ``infos`` (MaskablePPO never reads them there)
seeding                       ``seed(s)`` (what ``MaskablePPO(seed=s)`` calls)
                              seeds game ``i`` with ``s + i`` at the next
                              ``reset()``; else the constructor's ``seed``
                              (first reset), else fresh entropy
============================  =================================================

Shaping (``shaping=c``, default 0: off): the reward gets the potential
difference ``Phi(s') - Phi(s)`` with ``Phi(s) = -c * shanten`` of the
learning seat's concealed hand at its decision ``s`` (``caishen.sim.hand``: jokers
wild, seven pairs included), and ``Phi = 0`` at an episode's end, so a hand
pays back exactly what its steps were given (``-Phi(s_0)`` in all, whatever
the play): potential-based shaping (Ng, Harada & Russell 1999), which
leaves the optimal policy unchanged for ``gamma = 1``.  It tells the learner
at once that a discard moved its hand towards a win.  ``infos[i]["episode"]``
and ``["points"]`` stay unshaped.

Assist (``assist=True``, flat observations only): the observation is the
flat vector with :mod:`caishen.envs.assist`'s hand-reading block appended
(``float32[967 + 36]``): the shanten now, with the tile on offer, and after
each discard, from the learning seat's own tiles.  The
``terminal_observation`` of an ended episode has that block as zeros (the
game was dealt again in place before it could be read; SB3 reads the
terminal observation only to bootstrap a truncated match).

Empty per-env info dicts are built fresh every step (``n`` small dicts;
ended episodes fill theirs).  Every other argument goes to
:class:`caishen.envs.vector_env.CaishenVectorEnv` (``rules``, ``options``, ``seat``,
``opponents``, ``observation``, ``history``, ``reward``, ``reward_scale``,
``episode``, ...); rewards are those of :mod:`caishen.envs.batched` ("Rewards").
Bad arguments raise ``ValueError`` as there.

Self-play through SB3 is not offered: SB3's rollout buffer keeps one
trajectory per env index, while a self-play game hands its decisions to a
different seat every step (see :class:`caishen.envs.vector_env.SelfPlayVectorEnv`
for the assignment rule a learner needs).
"""

from __future__ import annotations

import time

import numpy as np
from gymnasium import spaces
from stable_baselines3.common.vec_env import VecEnv

from caishen.sim.rules.base import DEFAULT
from caishen.envs.assist import N_ASSIST, assist_batch
from caishen.envs.batched import check_seeds
from caishen.envs.vector_env import CaishenVectorEnv
from caishen.sim.hand import _shanten_batch
from caishen.sim.rules import base as _rulesets
from caishen.sim.tables import hand_tables

__all__ = ["BatchedVecEnv"]


class BatchedVecEnv(VecEnv):
    """``num_envs`` games versus numba bots as an SB3 ``VecEnv`` (module docstring).

    ``BatchedVecEnv(num_envs=256, rules=DEFAULT, *, seed=None, shaping=0.0,
    assist=False, **vector_env_kwargs)``; ``self.vec`` is the underlying
    :class:`caishen.envs.vector_env.CaishenVectorEnv` and ``self.games`` its
    :class:`caishen.envs.batched.BatchedGames`.
    """

    def __init__(self, num_envs: int = 256, rules=DEFAULT, *, seed=None, shaping: float = 0.0,
                 assist: bool = False, **kwargs):
        if "copy" in kwargs or "render_mode" in kwargs:
            raise ValueError("BatchedVecEnv takes no copy / render_mode argument (it copies what SB3 keeps)")
        self.vec = CaishenVectorEnv(num_envs, rules=rules, copy=False, **kwargs)
        self.games = self.vec.games
        if isinstance(shaping, (bool, np.bool_)) or not np.isfinite(float(shaping)) or float(shaping) < 0:
            raise ValueError(f"shaping must be a number >= 0, got {shaping!r}")
        self.shaping = float(shaping)
        self._joker = int(_rulesets.get(self.games.rules_name).facts["joker"])
        self._tabs = hand_tables()
        self._shanten = np.zeros(self.vec.num_envs, np.int8)
        self._phi = np.zeros(self.vec.num_envs, np.float64)
        self.render_mode = None
        self._first_seed = None if seed is None else check_seeds(seed, self.vec.num_envs)
        if not isinstance(assist, (bool, np.bool_)):
            raise ValueError(f"assist must be True or False, got {assist!r}")
        self.assist = bool(assist)
        obs_space = self.vec.single_observation_space
        if self.assist:
            if self.games.layout != "flat":
                raise ValueError(f"assist=True needs observation='flat', got {self.games.layout!r}")
            self._n_base = obs_space.shape[0]
            obs_space = spaces.Box(0.0, 1.0, (self._n_base + N_ASSIST,), np.float32)
        super().__init__(self.vec.num_envs, obs_space, self.vec.single_action_space)
        n = self.num_envs
        self._actions = np.zeros(n, np.int64)
        self._ep_return = np.zeros(n, np.float64)
        self._ep_len = np.zeros(n, np.int64)
        self._ep_points = np.zeros(n, np.int64)
        self._t0 = time.time()
        self._rows = np.arange(n)
        self._assist_buf = np.zeros((n, N_ASSIST), np.float32)

    # -- the VecEnv API ---------------------------------------------------------------------
    def reset(self):
        """Deal every game's first episode; returns ``obs`` (a copy).  Seeds as in the module docstring."""
        if any(s is not None for s in self._seeds):
            if any(s is None for s in self._seeds):
                raise ValueError(f"seed every game or none, got {self._seeds!r}")
            seeds = check_seeds([int(s) for s in self._seeds], self.num_envs)
        else:
            seeds, self._first_seed = self._first_seed, None
        obs, _ = self.vec.reset(seed=seeds)
        self._reset_seeds()
        self._reset_options()
        self._ep_return[:] = 0.0
        self._ep_len[:] = 0
        self._ep_points[:] = 0
        self.reset_infos = [{} for _ in range(self.num_envs)]
        if self.shaping:
            self._phi[:] = self.potential()
        return self._observation(obs)

    def _observation(self, obs: np.ndarray) -> np.ndarray:
        """A fresh copy of the env's observations, with the assist block appended if asked."""
        if not self.assist:
            return obs.copy()
        out = np.empty((self.num_envs, self._n_base + N_ASSIST), np.float32)
        out[:, : self._n_base] = obs
        assist_batch(self.games.states, self.games.learner, self.games.rules_name, out=self._assist_buf)
        out[:, self._n_base:] = self._assist_buf
        return out

    def potential(self) -> np.ndarray:
        """``float64[n]``: ``-shaping * shanten`` of the learning seat's concealed hand in each game."""
        g = self.games
        counts = g.states["hands"][self._rows, g.learner]
        _shanten_batch(counts, self._joker, self._tabs, self._shanten)
        return -self.shaping * self._shanten.astype(np.float64)

    def step_async(self, actions) -> None:
        a = np.asarray(actions)
        if a.dtype.kind not in "iu":
            raise ValueError(f"actions must be integers, got dtype {a.dtype}")
        self._actions[:] = a.reshape(self.num_envs)

    def step_wait(self):
        obs, rew, term, trunc, info = self.vec.step(self._actions)
        g = self.games
        dones = term | trunc
        self._ep_return += rew
        self._ep_len += 1
        self._ep_points += g.points[self._rows, g.learner]
        infos = [{} for _ in range(self.num_envs)]
        ended = np.flatnonzero(dones)
        if ended.size:
            final = info.get("final_obs")
            t = round(time.time() - self._t0, 6)
            for i in ended.tolist():
                d = infos[i]
                if final is not None:
                    d["terminal_observation"] = (np.concatenate([final[i], np.zeros(N_ASSIST, np.float32)])
                                                 if self.assist else final[i].copy())
                d["TimeLimit.truncated"] = bool(trunc[i] and not term[i])
                d["episode"] = {"r": float(self._ep_return[i]), "l": int(self._ep_len[i]), "t": t}
                d["points"] = int(self._ep_points[i])
            self._ep_return[ended] = 0.0
            self._ep_len[ended] = 0
            self._ep_points[ended] = 0
        if self.shaping:
            phi = self.potential()
            shaped = rew + np.where(dones, 0.0, phi) - self._phi
            self._phi[:] = phi
            return self._observation(obs), shaped.astype(np.float32), dones, infos
        return self._observation(obs), rew.astype(np.float32), dones, infos

    def close(self) -> None:
        self.vec.close()

    def action_masks(self) -> np.ndarray:
        """``bool[num_envs, 145]`` (a copy): the learning seat's legal actions in each game."""
        return self.games.masks.copy()

    def get_attr(self, attr_name: str, indices=None) -> list:
        value = getattr(self, attr_name)
        return [value for _ in self._get_indices(indices)]

    def set_attr(self, attr_name: str, value, indices=None) -> None:
        setattr(self, attr_name, value)

    def env_method(self, method_name: str, *method_args, indices=None, **method_kwargs) -> list:
        idx = list(self._get_indices(indices))
        if method_name == "action_masks":
            return list(self.action_masks()[idx])
        out = getattr(self, method_name)(*method_args, **method_kwargs)
        return [out for _ in idx]

    def env_is_wrapped(self, wrapper_class, indices=None) -> list[bool]:
        return [False for _ in self._get_indices(indices)]
