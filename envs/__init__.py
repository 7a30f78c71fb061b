"""Gymnasium / PettingZoo faces of the engine (:mod:`caishen.sim.engine`), for people who train bots.

- :mod:`caishen.envs.pettingzoo_env`: ``env(rules=...)`` / ``raw_env``, a PettingZoo
  AEC env with four agents ``player_0..player_3`` (self-play, multi-agent RL).
- :mod:`caishen.envs.gym_env`: :class:`MahjongEnv`, the Gymnasium env: one
  learning seat against bots of the registry, one game of the batched core
  (:mod:`caishen.envs.batched`), with ``action_masks()`` and ``render``;
  registered as ``caishen/<Name>-v0`` (one per rule set) when
  ``caishen.envs.gym_env`` (and so this package) is imported.
- :mod:`caishen.envs.vector_env`: :class:`CaishenVectorEnv` (a Gymnasium
  ``VectorEnv``, one learning seat per game against numba bots; the vector
  entry point of every id, ``gymnasium.make_vec("caishen/<Name>-v0",
  num_envs=1024)``) and :class:`SelfPlayVectorEnv` (every seat an agent),
  over :mod:`caishen.envs.batched` (:class:`BatchedGames`: thousands of games
  stepped, observed and masked in one numba call).
- :mod:`caishen.envs.observation`: the observation layouts every env shares
  (planes, the flat vector, the suit grid, the candidates; the order-of-play
  and assist blocks); :mod:`caishen.envs.extras` builds the batch's layouts
  beyond planes and flat vectors after each step.
- :mod:`caishen.envs.oracle`: training labels from the hidden state
  (``oracle=True``: ``info["oracle"]``), never in an observation.
- :mod:`caishen.envs.seats`: open seats, ``python:MODULE:FN`` and ``exec:CMD``
  (:mod:`caishen.envs.exec_seat`), played beside the numba bots by the arena
  host (:mod:`caishen.envs.arena_host`); importing this package registers it.  They are the vector
  envs' opponents too (:mod:`caishen.envs.open_opponents`).

>>> import gymnasium
>>> from caishen.envs import env_id
>>> from caishen.sim.rules import DEFAULT
>>> e = gymnasium.make(env_id(DEFAULT))
>>> obs, info = e.reset(seed=0)
>>> obs.shape
(76, 34)
"""

from caishen.envs.batched import BatchedGames
from caishen.envs.gym_env import ENV_IDS, MahjongEnv, env_id, register_envs  # registers the Gymnasium ids
from caishen.envs.observation import N_PLANES, PLANES, encode
from caishen.envs.pettingzoo_env import env, raw_env
from caishen.envs import arena_host  # noqa: F401  (registers the host of the open seats, python: and exec:)
from caishen.envs import open_opponents  # noqa: F401  (registers the open seats as the batched env's opponents)
from caishen.envs.vector_env import CaishenVectorEnv, SelfPlayVectorEnv

__all__ = [
    "BatchedGames", "CaishenVectorEnv", "SelfPlayVectorEnv", "MahjongEnv", "ENV_IDS", "N_PLANES",
    "PLANES", "encode", "env", "env_id", "raw_env", "register_envs",
]


def warm() -> None:
    """Reset, observe and step the batched env and the Gymnasium env of every rule set (``caishen warmup
    envs``)."""
    import numpy as np

    from caishen.sim import rules

    for name in rules.names():
        b = BatchedGames(4, name, mode="selfplay").reset(seeds=np.arange(4))
        for _ in range(8):
            b.observe()
            b.step(b.bot_actions("random"))
        x = BatchedGames(2, name, mode="selfplay", observation="candidates", assist=True, oracle=True).reset(0)
        x.step(x.bot_actions("random"))  # the layouts built after the kernel, and the oracle (caishen.envs.extras)
        e = MahjongEnv(name)
        e.reset(seed=1)
        e.step(int(np.flatnonzero(e.action_masks())[0]))


def warm_seats() -> None:
    """Play a few hands with a ``python:`` seat at the arena host's table and as the vector env's opponent, every
    rule set (``caishen warmup seats``: the kernels of the open seats, ``python:`` and ``exec:``)."""
    import numpy as np

    from caishen.sim import rules

    seat = "python:caishen.envs.seats:uniform_random"
    for name in rules.names():
        arena_host.play_batch(4, 0, name, policies=f"{seat},greedy,random,random", match_len=2)
        v = CaishenVectorEnv(2, rules=name, opponents=seat)
        v.reset(seed=0)
        for _ in range(4):
            v.step(np.array([int(np.flatnonzero(m)[0]) for m in v.games.masks]))
        v.close()

