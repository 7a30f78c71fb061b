"""Bots for the Python step API (:class:`caishen.sim.engine.Game`) and the environments, and the trainers.

A bot acts on what its seat may see: ``bot.act(game.observe())`` (an
:class:`caishen.sim.engine.Observation`), never on the ``Game``.

Every kernel bot's step-API face is :mod:`caishen.sim.bots.agent`
(its classes re-exported here: :class:`Agent`, ...); :func:`make_agent` is the one factory of every bot:

>>> from caishen.sim.engine import Game
>>> from caishen.sim.rules import DEFAULT
>>> from caishen.agents import make_agent
>>> game = Game(DEFAULT).reset(seed=7)
>>> bots = [make_agent("greedy")] * 4
>>> while not game.done:
...     game.step(bots[game.current_player].act(game.observe()))

Policies: every spec of the one bot registry (:mod:`caishen.sim.bots.registry`:
``random``, ``greedy``, ``greedy_safe``, ``never``, ``always``, ``threshold:N``,
``piao_table[:BITS]``, ``tuned:NAME|PATH``, ``mc:N[:BASE]``, ``ppo:PATH``).  A
bot reads only what its seat may see.
``ppo:PATH`` loads a checkpoint written by :mod:`caishen.agents.train_ppo`
(:class:`caishen.agents.ppo.PPOAgent`; needs the ``[rl]`` extra, imported
only then: ``import caishen.agents`` never imports torch).  The trainers:
:mod:`caishen.agents.tune` (CMA-ES, ``caishen train``),
:mod:`caishen.agents.train_ppo`.  :mod:`caishen.agents.play`: a person against the bots
(``caishen play``).
"""

from __future__ import annotations

from caishen.sim.bots import agent as _agent
from caishen.sim.bots.agent import Agent, BotAgent, PolicyAgent, RandomAgent

__all__ = ["Agent", "RandomAgent", "PolicyAgent", "BotAgent", "make_agent"]


def make_agent(policy: str = "greedy", seed=None) -> Agent:
    """An agent for every spec of the bot registry (:mod:`caishen.sim.bots.registry`): a kernel bot's
    (:func:`caishen.sim.bots.agent.kernel_agent`), or ``'ppo:PATH'`` (a trained checkpoint,
    :class:`caishen.agents.ppo.PPOAgent`; ``ValueError`` if ``PATH`` is no checkpoint, ``ImportError``
    without the ``[rl]`` extra).  A bad spec raises the registry's ``ValueError``."""
    from caishen.sim.bots import registry

    bot = registry.parse(policy)  # the one parser: the same message as every command for a bad spec
    if bot.kind == "ppo":
        from caishen.agents.ppo import PPOAgent  # lazy: torch only when a PPO agent is asked for

        return PPOAgent(bot.arg)
    return _agent.kernel_agent(bot.spec, seed)
