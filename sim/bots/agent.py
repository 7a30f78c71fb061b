"""The step-API face of every kernel bot: ``act(game) -> action`` on a :class:`caishen.sim.engine.Game`.

The decisions are the numba kernels of the bots (:mod:`caishen.sim.bots.policies`
and the bots with data of :mod:`caishen.sim.bots.registry`), the same code
that plays the batch self-play of ``caishen simulate``, so a bot behaves
identically one action at a time and inside a million-hand run.  The
environments' opponents are these agents; :mod:`caishen.agents` adds the
trained policies that need torch.

>>> from caishen.sim.engine import Game
>>> from caishen.sim.bots.agent import make_agent
>>> game = Game("kaihua").reset(seed=7)
>>> bots = [make_agent("greedy")] * 4
>>> while not game.done:
...     game.step(bots[game.current_player].act(game))

A bot reads only what its seat may see.
"""

from __future__ import annotations

import numpy as np

from caishen.sim.engine import Game
from caishen.sim.engine import EP_JOKER
from caishen.sim.bots.policies import POLICY_RANDOM, _choose_action, check_piao_policy, parse_policy

__all__ = ["Agent", "RandomAgent", "PolicyAgent", "BotAgent", "make_agent"]


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
    """A numba policy of :mod:`caishen.sim.bots.policies` (``greedy``, ``never``, ``always``, ``threshold:N``).

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


class BotAgent(Agent):
    """A bot that needs data (:mod:`caishen.sim.bots.registry`): ``tuned:NAME`` or ``mc:N``.

    ``seed``: seeds the search bot's stream (the determinizations); None is 0.
    Raises ``ValueError`` for a bad spec or weights file, and in :meth:`act`
    for weights tuned for another rule set.
    """

    def __init__(self, policy: str, seed=None):
        from caishen.sim.bots.registry import parse_bot

        self.code, self.param, _, _ = parse_bot(policy)
        self.name = str(policy)
        self._seed = 0 if seed is None else int(seed)
        self._work = np.zeros((4, 34), np.int64)
        self._ctx = None
        self._ctx_rules = None

    def act(self, game: Game) -> int:
        """The bot's action for the seat to act (legal)."""
        from caishen.sim.bots.registry import _bot_action, make_context

        from caishen.sim.bots.registry import bot_table

        self._check(game)
        if self._ctx is None or self._ctx_rules != game.rules_name:
            # the weights per seat as self-play builds them (mc:N loads the rule set's tuned base policy;
            # ValueError for weights tuned for another rule set)
            _, w = bot_table([self.name] * 4, game.rules_name, int(game._ep[EP_JOKER]))
            self._ctx = make_context(game.rules_name, game.rules, w, self._seed)
            self._ctx_rules = game.rules_name
        game.legal_mask()
        st = game.state
        return int(_bot_action(self.code, self.param, st, game._ep, game._rp, game._tabs, st["mask"], self._work,
                               self._ctx))


def make_agent(policy: str = "greedy", seed=None) -> Agent:
    """An agent by bot spec: ``'random'`` (with ``seed``), ``'greedy'``, ``'threshold:30'``, ...,
    ``'tuned:kaihua'``, ``'mc:32'`` (with ``seed``, :class:`BotAgent`).  Raises ``ValueError`` naming an
    unknown spec (listing every known one) or a bad parameter."""
    if isinstance(policy, str) and policy.strip().partition(":")[0] in ("tuned", "mc", "learned"):
        return BotAgent(policy, seed)
    from caishen.sim.bots.registry import parse_bot

    parse_bot(policy)  # ValueError naming an unknown policy (listing every known one)
    code, _ = parse_policy(policy)
    return RandomAgent(seed) if code == POLICY_RANDOM else PolicyAgent(policy)
