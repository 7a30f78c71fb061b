"""The step-API face of every kernel bot: ``act(observation) -> action``, the observation ``game.observe()``.

The decisions are the numba kernels of the bots (:mod:`caishen.sim.bots.policies`
and the bots with data of :mod:`caishen.sim.bots.registry`), the same code
that plays the batch self-play of ``caishen simulate``, so a bot behaves
identically one action at a time and inside a million-hand run.  A bot
sees only an observation (mjx's ``Agent.act(observation)``): an
:class:`caishen.sim.engine.Observation` from
:meth:`caishen.sim.engine.Game.observe`, the seat to act's view of the game,
in which every tile and flag hidden from that seat is canonical (so the same
bot runs in any env or server).  The environments' opponents are these
agents; :mod:`caishen.agents` adds the trained policies that need torch.

>>> from caishen.sim.engine import Game
>>> from caishen.sim.rules import DEFAULT
>>> from caishen.sim.bots.agent import kernel_agent
>>> game = Game(DEFAULT).reset(seed=7)
>>> bots = [kernel_agent("greedy")] * 4
>>> while not game.done:
...     game.step(bots[game.current_player].act(game.observe()))

Passing the :class:`caishen.sim.engine.Game` itself raises ``TypeError``: a
bot reads only what its seat may see.
"""

from __future__ import annotations

import numpy as np

from caishen.sim.engine import N_SEATS, Game, Observation, new_state
from caishen.sim.bots import registry
from caishen.sim.bots.policies import POLICY_RANDOM, new_work
from caishen.sim.bots.tuned import N_W
from caishen.sim.warmup import first_use

__all__ = ["Agent", "RandomAgent", "PolicyAgent", "BotAgent", "kernel_agent"]


class Agent:
    """Base class: ``act(observation) -> action index`` (a legal one) for the observing seat, the one to act
    (``observation``: :meth:`caishen.sim.engine.Game.observe`)."""

    name = "agent"

    def act(self, observation: Observation) -> int:  # pragma: no cover - interface
        raise NotImplementedError

    @staticmethod
    def _check(observation) -> Observation:
        """``observation`` if it is an :class:`caishen.sim.engine.Observation`; ``TypeError`` otherwise (a
        :class:`caishen.sim.engine.Game` included: a bot never receives the engine)."""
        if isinstance(observation, Game):
            raise TypeError("act takes the seat's observation, not the Game: pass game.observe()")
        if not isinstance(observation, Observation):
            raise TypeError(f"act takes an Observation (game.observe()), got {type(observation).__name__}")
        return observation


class _KernelAgent(Agent):
    """What a kernel bot's agent shares: its seat's action from the registry's dispatch kernel, with the
    bot context ``self._ctx`` and scratch ``self._work`` its subclass keeps."""

    def _kernel_action(self, obs: Observation) -> int:
        self._buf[0] = obs.state  # a writable copy (its mask and legal list are the seat's): bots write scratch
        with first_use("bots"):  # a cold numba cache compiles the bot kernels here: say so, as self-play does
            return int(registry._seat_action(self.code, self.param, self._buf[0], obs.ep.copy(), obs.rp.copy(),
                                             obs.tabs, self._work, self._ctx))


class RandomAgent(Agent):
    """Uniform over the legal actions, from its own ``numpy`` generator (``seed``)."""

    name = "random"

    def __init__(self, seed=None):
        self.rng = np.random.default_rng(seed)

    def act(self, observation: Observation) -> int:
        return int(self.rng.choice(self._check(observation).legal_actions()))


class PolicyAgent(_KernelAgent):
    """A kernel policy of :mod:`caishen.sim.bots.policies` (``greedy``, ``never``, ``always``, ``threshold:N``, ...).

    Raises ``ValueError`` for a bad spec (:func:`caishen.sim.bots.registry.parse`).
    """

    def __init__(self, policy: str = "greedy"):
        bot = registry.parse(policy)
        if bot.code == POLICY_RANDOM:
            raise ValueError("use RandomAgent for the random policy")
        if bot.has_data:
            raise ValueError(f"policy {bot.spec!r} plays with data: use BotAgent (caishen.agents.make_agent)")
        self.bot = bot
        self.name = bot.spec
        self.code, self.param = bot.code, bot.param
        self._work = new_work()
        self._buf = new_state()
        self._ctx = None
        self._ctx_rules = None

    def act(self, observation: Observation) -> int:
        """The policy's action for the observing seat; ``ValueError`` where it cannot play the game's rule set
        (:func:`caishen.sim.bots.registry.check_fits`: a 飘 policy without a 财神)."""
        obs = self._check(observation)
        registry.check_fits(self.bot, obs.rules_name, int(obs.ep.joker))
        if self._ctx is None or self._ctx_rules != obs.rules_name:  # the bot context every kernel seat passes
            self._ctx = registry.make_context(obs.rules_name, obs.rules, np.zeros((N_SEATS, N_W)), 0)
            self._ctx_rules = obs.rules_name
        return self._kernel_action(obs)


class BotAgent(_KernelAgent):
    """A bot that plays with data (:mod:`caishen.sim.bots.registry`): ``tuned:NAME|PATH``, ``mc:N[:BASE]``.

    ``seed``: seeds the search bot's stream (the determinizations); None is 0.
    Raises ``ValueError`` for a bad spec or weights file, and in :meth:`act`
    where it cannot play the game's rule set (weights tuned for another).
    """

    def __init__(self, policy: str, seed=None):
        self.bot = registry.parse(policy)
        self.code, self.param = self.bot.code, self.bot.param
        self.name = self.bot.spec
        self._seed = 0 if seed is None else int(seed)
        self._work = new_work()
        self._buf = new_state()
        self._ctx = None
        self._ctx_rules = None

    def act(self, observation: Observation) -> int:
        """The bot's action for the observing seat (legal)."""
        obs = self._check(observation)
        if self._ctx is None or self._ctx_rules != obs.rules_name:
            # the weights per seat as self-play builds them (mc:N loads the rule set's tuned base policy;
            # ValueError for weights tuned for another rule set)
            seats = [self.name] * 4
            _, w = registry.bot_table(seats, obs.rules_name, int(obs.ep.joker))
            self._ctx = registry.make_context(obs.rules_name, obs.rules, w, self._seed, seats)
            self._ctx_rules = obs.rules_name
        return self._kernel_action(obs)


def kernel_agent(policy: str = "greedy", seed=None) -> Agent:
    """The agent of a kernel bot of the registry (:func:`caishen.sim.bots.registry.parse`): ``'random'``
    (with ``seed``), ``'greedy'``, ``'threshold:30'``, ..., ``'tuned:NAME'``, ``'mc:32'`` (with ``seed``,
    :class:`BotAgent`).  Raises ``ValueError`` as the registry's parser does (the same text as every
    command).  Users call :func:`caishen.agents.make_agent`, the one factory of every bot (it adds the
    torch ones); this is its kernel half, for the layers below ``agents`` (the envs' opponents).  An open
    seat (``python:``, ``exec:``) is the arena host's agent (``import caishen.envs``)."""
    bot = registry.parse(policy)
    if bot.code == registry.POLICY_STEP_ONLY:
        raise ValueError(f"policy {bot.spec!r} needs torch: use caishen.agents.make_agent")
    if bot.code == registry.POLICY_HOST:  # an open seat (python:, exec:): the registered host's agent
        return registry.require_host(bot.spec).agent(bot.spec)
    if bot.has_data:
        return BotAgent(bot.spec, seed)
    return RandomAgent(seed) if bot.code == POLICY_RANDOM else PolicyAgent(bot.spec)
