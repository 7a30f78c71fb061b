"""Bots for the Python step API (:class:`caishen.sim.engine.Game`) and the environments.

The decisions are the numba kernels of :mod:`caishen.sim.policies` (the same code
that plays the batch self-play of ``caishen simulate``), so a bot behaves
identically one action at a time and inside a million-hand run:

>>> from caishen.sim.engine import Game
>>> from caishen.agents import make_agent
>>> game = Game("kaihua").reset(seed=7)
>>> bots = [make_agent("greedy")] * 4
>>> while not game.done:
...     game.step(bots[game.current_player].act(game))

Policies: ``random``, ``greedy``, ``never``, ``always``, ``threshold:N``
(see :mod:`caishen.sim.policies`).  A bot reads only what its seat may see.
``ppo:PATH`` loads a ``MaskablePPO`` checkpoint written by
:mod:`caishen.agents.train_ppo` (:class:`caishen.agents.ppo.PPOAgent`; needs the ``[rl]``
extra, imported only then: ``import caishen.agents`` never imports torch).
"""

from __future__ import annotations

import numpy as np

from caishen.sim.engine import Game
from caishen.sim.engine import EP_JOKER
from caishen.sim.policies import POLICY_RANDOM, _choose_action, check_piao_policy, parse_policy

__all__ = ["Agent", "RandomAgent", "PolicyAgent", "make_agent"]


class Agent:
    """Base class: ``act(game) -> action index`` for ``game.current_player``."""

    name = "agent"

    def act(self, game: Game) -> int:  # pragma: no cover - interface
        raise NotImplementedError

    @staticmethod
    def _check(game: Game) -> None:
        if not isinstance(game, Game):
            raise ValueError(f"expected a caishen.sim.engine.Game, got {type(game).__name__}")
        if game.done:
            raise ValueError("the hand is over: no action to choose")


class RandomAgent(Agent):
    """Uniform over the legal actions, from its own ``numpy`` generator (``seed``)."""

    name = "random"

    def __init__(self, seed=None):
        self.rng = np.random.default_rng(seed)

    def act(self, game: Game) -> int:
        self._check(game)
        return int(self.rng.choice(game.legal_actions()))


class PolicyAgent(Agent):
    """A numba policy of :mod:`caishen.sim.policies` (``greedy``, ``never``, ``always``, ``threshold:N``).

    Raises ``ValueError`` for an unknown policy spec.
    """

    def __init__(self, policy: str = "greedy"):
        code, param = parse_policy(policy)
        if code == POLICY_RANDOM:
            raise ValueError("use RandomAgent for the random policy")
        self.name = str(policy)
        self.code, self.param = code, param
        self._work = np.zeros((4, 34), np.int64)

    def act(self, game: Game) -> int:
        """The policy's action for the seat to act; ``ValueError`` for a 飘 policy on a rule set
        without a 财神 (it would silently play greedy)."""
        self._check(game)
        check_piao_policy(self.code, self.param, int(game._ep[EP_JOKER]), game.rules_name)
        game.legal_mask()  # fills the state's mask and legal list
        st = game.state
        return int(_choose_action(self.code, self.param, st, game._ep, game._rp, game._tabs, st["mask"], self._work))


def make_agent(policy: str = "greedy", seed=None) -> Agent:
    """An agent by policy spec: ``'random'`` (with ``seed``), ``'greedy'``, ``'threshold:30'``, ...,
    or ``'ppo:PATH'`` (a trained checkpoint, :class:`caishen.agents.ppo.PPOAgent`; ``ValueError`` if
    ``PATH`` is no checkpoint, ``ImportError`` without the ``[rl]`` extra)."""
    if isinstance(policy, str) and policy.startswith("ppo:"):
        from caishen.agents.ppo import PPOAgent  # lazy: torch only when a PPO agent is asked for

        return PPOAgent(policy[len("ppo:"):])
    code, _ = parse_policy(policy)
    return RandomAgent(seed) if code == POLICY_RANDOM else PolicyAgent(policy)
