"""The step-API face of every kernel bot: ``act(game) -> action`` on a :class:`caishen.sim.engine.Game`.

The decisions are the numba kernels of the bots (:mod:`caishen.sim.bots.policies`
and the bots with data of :mod:`caishen.sim.bots.registry`), the same code
that plays the batch self-play of ``caishen simulate``, so a bot behaves
identically one action at a time and inside a million-hand run.  The
environments' opponents are these agents; :mod:`caishen.agents` adds the
trained policies that need torch.

>>> from caishen.sim.engine import Game
>>> from caishen.sim.rules import DEFAULT
>>> from caishen.sim.bots.agent import kernel_agent
>>> game = Game(DEFAULT).reset(seed=7)
>>> bots = [kernel_agent("greedy")] * 4
>>> while not game.done:
...     game.step(bots[game.current_player].act(game))

A bot reads only what its seat may see.
"""

from __future__ import annotations

import numpy as np

from caishen.sim.engine import Game
from caishen.sim.engine import N_SEATS
from caishen.sim.bots import registry
from caishen.sim.bots.policies import POLICY_RANDOM, new_work
from caishen.sim.bots.tuned import N_W
from caishen.sim.warmup import first_use

__all__ = ["Agent", "RandomAgent", "PolicyAgent", "BotAgent", "kernel_agent"]


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


class _KernelAgent(Agent):
    """What a kernel bot's agent shares: its seat's action from the registry's dispatch kernel, with the
    bot context ``self._ctx`` and scratch ``self._work`` its subclass keeps."""

    def _kernel_action(self, game: Game) -> int:
        game.legal_mask()  # fills the state's mask and legal list
        with first_use("bots"):  # a cold numba cache compiles the bot kernels here: say so, as self-play does
            return int(registry._seat_action(self.code, self.param, game.state, game._ep, game._rp, game._tabs,
                                             self._work, self._ctx))


class RandomAgent(Agent):
    """Uniform over the legal actions, from its own ``numpy`` generator (``seed``)."""

    name = "random"

    def __init__(self, seed=None):
        self.rng = np.random.default_rng(seed)

    def act(self, game: Game) -> int:
        self._check(game)
        return int(self.rng.choice(game.legal_actions()))


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
        self._ctx = None
        self._ctx_rules = None

    def act(self, game: Game) -> int:
        """The policy's action for the seat to act; ``ValueError`` where it cannot play the game's rule set
        (:func:`caishen.sim.bots.registry.check_fits`: a 飘 policy without a 财神)."""
        self._check(game)
        registry.check_fits(self.bot, game.rules_name, int(game._ep.joker))
        if self._ctx is None or self._ctx_rules != game.rules_name:  # the bot context every kernel seat passes
            self._ctx = registry.make_context(game.rules_name, game.rules, np.zeros((N_SEATS, N_W)), 0)
            self._ctx_rules = game.rules_name
        return self._kernel_action(game)


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
        self._ctx = None
        self._ctx_rules = None

    def act(self, game: Game) -> int:
        """The bot's action for the seat to act (legal)."""
        self._check(game)
        if self._ctx is None or self._ctx_rules != game.rules_name:
            # the weights per seat as self-play builds them (mc:N loads the rule set's tuned base policy;
            # ValueError for weights tuned for another rule set)
            seats = [self.name] * 4
            _, w = registry.bot_table(seats, game.rules_name, int(game._ep.joker))
            self._ctx = registry.make_context(game.rules_name, game.rules, w, self._seed, seats)
            self._ctx_rules = game.rules_name
        return self._kernel_action(game)


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
