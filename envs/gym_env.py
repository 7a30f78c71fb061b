"""Caishen mahjong (every registered rule set) as a Gymnasium single-agent environment.

================== ==========================================================
Creation           ``import caishen.envs; gymnasium.make("caishen/<Name>-v0")``, one id
                   per rule set (:func:`env_id`; without the import:
                   ``gymnasium.make("caishen.envs.gym_env:caishen/<Name>-v0")``), or
                   ``caishen.envs.gym_env.MahjongEnv(rules=...)``
Action space       Discrete(145)
Observation space  Box(0, high, (76, 34), uint8)
Action masking     ``env.action_masks()`` (bool[145]; ``gymnasium.make``
                   returns the env itself; through your own wrappers
                   ``env.get_wrapper_attr("action_masks")()``) and
                   ``info["action_mask"]``
Vectorized         ``gymnasium.make_vec("caishen/<Name>-v0", num_envs=1024)``:
                   :class:`caishen.envs.vector_env.CaishenVectorEnv`, the bots inside
                   numba: about 17x the learner steps/s of this env against
                   greedy bots, whose own decisions take most of the time
                   (``benchmarks/bench_envs.py``)
================== ==========================================================

One episode is one hand of four-player mahjong (:class:`caishen.sim.engine.Game`)
seen from one learning seat (``seat``, default 0); the other three seats are
played by bots (:mod:`caishen.sim.bots.agent`) (default ``"greedy"``: the shanten-greedy
policy of :mod:`caishen.sim.bots.policies`).  ``step`` applies the learning seat's action,
then lets the bots act until the learning seat must decide again or the hand
is over.  It is made for maskable RL (``sb3_contrib.MaskablePPO`` calls
``action_masks()``).  Specs: ``shared/rules/<name>.md`` (``K-..``, ``J-..``).

Rules in brief
--------------
Both: 136 tiles, no flowers; the dealer gets 14 tiles, the others 13, and
the dealer discards first (K-3.1, J-2.1); on a turn a player draws, may kong
or win by self-draw, else discards; the others may claim the discard (win >
pong / kong > chow, K-4.3, J-3.1); kongs draw a replacement from the wall's
tail and an added kong can be robbed (K-5, J-3.3).  The hand ends with a
win or when the live wall runs out (流局: nobody pays).

- With the 财神 (K-2.1): the four 白 (``5z``) are 财神 jokers, never claimed or melded
  (K-2); chow by the next seat (K-4.2); 20 tiles are never drawn (K-3.4);
  payments ``base * 2**E`` with exponents for 爆头, 七对, 清一色 and the
  chain of kongs and 飘财 (K-6, K-8); no chow / pong / exposed kong inside
  a 飘财 circle, and a win inside another's circle costs that player extra
  (K-9).
- Without (J-1.1): no jokers, no chow, several winners on one discard (J-1.1,
  J-3.1, J-3.4); passed wins and pongs are banned until the next draw
  (J-3.5, J-3.6); 架听 (``declare <k>``, J-4.1) and 硬子 (``hard_declare``,
  J-4.2; afterwards the engine discards the seat's unwinnable draws by
  itself); wins are scored from fifty patterns (J-6 .. J-8).

Observation
-----------
``uint8[76, 34]``: what the learning seat can see, seat-relative (``+0``
itself, ``+1`` next, ``+2`` opposite, ``+3`` previous); scalar planes repeat
one value over the 34 kind columns.  Never others' concealed tiles, their
concealed kong kinds, the wall, or which seat is being asked to claim.
The planes are the feature set ``planes`` version 1
(:mod:`caishen.sim.bots.features`): the table of its 76 rows (name, largest
value, meaning, rule IDs) is in :mod:`caishen.envs.observation`, the one
place it is written.

Action space
------------
One flat ``Discrete(145)``, the engine's layout (``caishen.sim.engine``); only the
actions in ``action_masks()`` are legal:

========  =====================  ==================================================
index     name                   meaning
========  =====================  ==================================================
0..33     ``discard <kind>``     discard one tile of kind ``a``
34..67    ``declare <kind>``     discard kind ``a - 34`` and declare 架听 (J-4.1)
68..101   ``kong_concealed <k>`` concealed kong of kind ``a - 68`` (K-5.3)
102..135  ``kong_added <k>``     add kind ``a - 102`` to an own pong (K-5.2)
136       ``chow_low``           chow, the claimed tile is the run's lowest (K-4.2)
137       ``chow_mid``           chow, the claimed tile is the run's middle
138       ``chow_high``          chow, the claimed tile is the run's highest
139       ``pong``               pong the claimed tile (K-4.2, K-4.6)
140       ``kong_exposed``       exposed kong on the claimed tile (K-5.1)
141       ``win``                self-draw win, or win on the offered discard /
                                 robbed added kong (K-4.3, K-5.5, K-7)
142       ``pass``               decline the offered claim
143       ``hard_declare``       declare 硬子 (J-4.2)
144       ``hard_decline``       decline it (J-4.2)
========  =====================  ==================================================

Rewards
-------
Zero until the hand ends; then the learning seat's score change of the hand
in points (``Game.result["score_<seat>"]``, K-8 / J-6), and
``terminated=True``; ``info["result"]`` holds the hand's record.  A 流局
gives 0.  ``truncated`` is always False (a hand always ends).

An illegal action ends the episode (``terminated=True``) with reward
``illegal_reward`` (default -500, worse than losing almost any hand) and
``info["illegal_action"] = True``; the hand is left unfinished.  With
``illegal_reward=None`` an illegal action raises ``ValueError`` instead.
An action that is no integer index (a bool, a float such as 1.5, None) or
outside ``0..144`` always raises ``ValueError``: ``step(True)`` is not
action 1.

Arguments and seeding
---------------------
``MahjongEnv(rules=DEFAULT, options=None, seat=0, opponents="greedy",
dealer=None, illegal_reward=-500.0, render_mode=None, observation="planes",
history=False, assist=False, oracle=False)``: ``observation`` / ``history`` /
``assist`` the layout (:mod:`caishen.envs.observation`: ``"planes"``,
``"flat"``, ``"grid"``, ``"candidates"``); ``oracle=True`` adds the learning
seat's training labels as ``info["oracle"]`` (:mod:`caishen.envs.oracle`;
never in an observation); ``options`` a dict
of rule options; ``seat`` the learning seat 0..3; ``opponents`` one policy
spec for the three bots (any spec of the bot registry, :mod:`caishen.sim.bots.registry`:
``"greedy"``, ``"random"``, ``"tuned:NAME"``, ``"mc:8"``, ...) or a sequence of three
specs or :class:`caishen.sim.bots.agent.Agent` objects, for the other seats in seat order;
``dealer`` a seat 0..3 or None (drawn per hand); ``render_mode`` ``"ansi"`` or
``"human"`` (the whole table as text; another mode raises
:class:`RenderModeError`, a ``ValueError`` that is also the ``TypeError``
stable-baselines3's ``make_vec_env`` expects when it tries
``render_mode="rgb_array"``).

A bot or a trained policy in any seat: ``seat`` is the learning seat, and
each of the other three is a policy spec or an :class:`caishen.sim.bots.agent.Agent`; a
trained policy plays a seat as an ``Agent`` subclass whose
``act(observation)`` returns its masked choice from
``caishen.envs.observation.encode(observation)`` and ``observation.mask``
(``observation``: ``game.observe()``, the seat to act's view).  To evaluate
a built-in bot in the learning seat, step it with
``make_agent("greedy").act(env.game.observe())``.

``reset(seed=s)`` deals the same hand and replays the same bots' choices for
the same ``s`` (the wall seed, the dealer and the random bots' seeds come
from the env's ``np_random``; ``options`` is ignored); a hand that ends before the learning seat's
first decision (e.g. the dealer's 天胡) is dealt again, since it gives the
learner nothing to decide.
"""

from __future__ import annotations

from collections.abc import Sequence

import gymnasium
import numpy as np
from gymnasium import spaces

from caishen.sim.rules import base as rulesets
from caishen.sim.rules.base import DEFAULT
from caishen.sim.bots.agent import Agent, kernel_agent
from caishen.envs.observation import check_layout, encode, observation_space
from caishen.envs.oracle import oracle_labels
from caishen.envs.render import render_text
from caishen.sim.engine import N_ACTIONS, N_SEATS, Game
from caishen.sim.bots import registry
from caishen.sim.bots.policies import POLICY_RANDOM
from caishen.sim.validate import check_int

__all__ = ["MahjongEnv", "DEFAULT_ILLEGAL_REWARD", "ENV_IDS", "RenderModeError", "env_id", "register_envs"]

#: reward of an illegal action (the episode ends)
DEFAULT_ILLEGAL_REWARD = -500.0


def env_id(rules: str) -> str:
    """The Gymnasium id of rule set ``rules``: ``caishen/<Name>-v0``."""
    return f"caishen/{rules.capitalize()}-v0"


#: registered ids -> rule set (the built-in rule sets; :func:`register_envs` adds those registered later)
ENV_IDS = {env_id(name): name for name in rulesets.names()}
_RENDER_MODES = ("human", "ansi")


class RenderModeError(TypeError, ValueError):
    """An unsupported ``render_mode``: a ``ValueError``, and a ``TypeError`` too, which is what
    stable-baselines3's ``make_vec_env`` expects before it retries without ``render_mode``."""


class MahjongEnv(gymnasium.Env):
    """One learning seat against three kernel bots (:mod:`caishen.sim.bots.agent`) (documented in the module docstring).

    Raises ``ValueError`` for an unknown rule set or option, a bad seat,
    dealer, opponents spec or render mode.
    """

    metadata = {"render_modes": list(_RENDER_MODES), "render_fps": 1}

    def __init__(
        self,
        rules=DEFAULT,
        options=None,
        seat: int = 0,
        opponents="greedy",
        dealer=None,
        illegal_reward=DEFAULT_ILLEGAL_REWARD,
        render_mode=None,
        observation="planes",
        history=False,
        assist=False,
        oracle=False,
    ):
        self.game = Game(rules, options)
        self.layout, self.history, self.assist = check_layout(observation, history, assist)
        if not isinstance(oracle, (bool, np.bool_)):
            raise ValueError(f"oracle must be True or False, got {oracle!r}")
        self.oracle = bool(oracle)
        if isinstance(seat, bool) or seat not in range(N_SEATS):
            raise ValueError(f"seat must be 0..3, got {seat!r}")
        if dealer is not None and (isinstance(dealer, bool) or dealer not in range(N_SEATS)):
            raise ValueError(f"dealer must be a seat 0..3 or None, got {dealer!r}")
        if render_mode is not None and render_mode not in _RENDER_MODES:
            raise RenderModeError(f"render_mode must be one of {_RENDER_MODES} or None, got {render_mode!r}")
        if illegal_reward is not None and not np.isfinite(float(illegal_reward)):
            raise ValueError(f"illegal_reward must be a finite number or None, got {illegal_reward!r}")
        self.seat = int(seat)
        self.dealer = None if dealer is None else int(dealer)
        self.illegal_reward = None if illegal_reward is None else float(illegal_reward)
        self.render_mode = render_mode
        self._opponent_specs = self._check_opponents(opponents)
        for spec in self._opponent_specs:  # every bot of the registry that fits the rule set
            if isinstance(spec, str):
                registry.check_fits(registry.parse(spec), self.game.rules_name, int(self.game._ep.joker),
                                    " (an opponent)")
        self._bots: dict[int, Agent] = {}
        self.observation_space = observation_space(self.layout, self.history, self.assist)
        self.action_space = spaces.Discrete(N_ACTIONS)
        self._over = True  # no episode running yet

    @staticmethod
    def _check_opponents(opponents) -> list:
        """Three specs / agents, validated (a spec is parsed now, so a typo fails at construction)."""
        specs = [opponents] * (N_SEATS - 1) if isinstance(opponents, (str, Agent)) else opponents
        if not isinstance(specs, Sequence) or len(specs) != N_SEATS - 1:
            raise ValueError(f"opponents must be a policy spec, an Agent, or 3 of them, got {opponents!r}")
        for spec in specs:
            if isinstance(spec, str):
                registry.parse(spec)  # ValueError for a bad spec, as every command says it
            elif not isinstance(spec, Agent):
                raise ValueError(f"an opponent must be a policy spec or a caishen.sim.bots.agent.Agent, got {spec!r}")
        return list(specs)

    def _make_bots(self) -> None:
        """The bots of this hand; random ones get seeds from ``np_random`` (reproducible hands)."""
        others = [p for p in range(N_SEATS) if p != self.seat]
        self._bots = {}
        for p, spec in zip(others, self._opponent_specs):
            if isinstance(spec, Agent):
                self._bots[p] = spec
            elif registry.parse(spec).code == POLICY_RANDOM or registry.has_data(spec):  # their own streams
                self._bots[p] = kernel_agent(spec, seed=int(self.np_random.integers(2**63)))
            else:
                self._bots[p] = kernel_agent(spec)

    def _play_bots(self) -> None:
        """Let the bots act until the learning seat must decide or the hand is over."""
        g = self.game
        while not g.done and g.current_player != self.seat:
            g.step(self._bots[g.current_player].act(g.observe()))

    # -- API ---------------------------------------------------------------------
    def reset(self, *, seed=None, options=None):
        """Deal a hand and play the bots up to the learning seat's first decision: ``(obs, info)``."""
        super().reset(seed=seed)
        while True:
            wall_seed = int(self.np_random.integers(2**32))
            dealer = self.dealer if self.dealer is not None else int(self.np_random.integers(N_SEATS))
            self._make_bots()
            self.game.reset(seed=wall_seed, dealer=dealer)
            self._play_bots()
            if not self.game.done:
                break
        self._over = False
        if self.render_mode == "human":
            self.render()
        return self._obs(), self._info()

    def step(self, action):
        """Apply the learning seat's ``action``: ``(obs, reward, terminated, truncated, info)``.

        Raises ``ValueError`` when no episode is running (call :meth:`reset`),
        for an action outside ``0..144``, and for an illegal one if
        ``illegal_reward`` is None.
        """
        if self._over:
            raise ValueError("the episode is over (or was never started); call reset()")
        mask = self.game.legal_mask()
        a = check_int("action", action, 0, N_ACTIONS - 1)  # no bools, floats, NaN or infinities
        if not mask[a] and self.illegal_reward is not None:
            self._over = True
            info = self._info()
            info["illegal_action"] = True
            return self._obs(), self.illegal_reward, True, False, info
        self.game.step(a)  # ValueError for an illegal action when illegal_reward is None
        self._play_bots()
        reward, terminated = 0.0, self.game.done
        if terminated:
            reward = float(self.game.result[f"score_{self.seat}"])
            self._over = True
        if self.render_mode == "human":
            self.render()
        return self._obs(), reward, terminated, False, self._info()

    def action_masks(self) -> np.ndarray:
        """``bool[145]``: the learning seat's legal actions now (all False when the episode is over)."""
        if self._over:
            return np.zeros(N_ACTIONS, bool)
        return self.game.legal_mask()

    def render(self):
        """The whole table as text (``"ansi"``: returned; ``"human"``: printed)."""
        if self.render_mode is None:
            gymnasium.logger.warn("render() called without a render_mode; use 'ansi' or 'human'")
            return None
        text = render_text(self.game)
        if self.render_mode == "human":
            print(text)
            return None
        return text

    # -- helpers -------------------------------------------------------------------
    def _obs(self) -> np.ndarray:
        return encode(self.game, self.seat, layout=self.layout, history=self.history, assist=self.assist)

    def _info(self) -> dict:
        info = {"action_mask": self.action_masks(), "seat": self.seat}
        if self.game.done:
            info["result"] = self.game.result
        if self.oracle:
            info["oracle"] = oracle_labels(self.game)
        return info


def register_envs() -> None:
    """Register every registered rule set's id (:func:`env_id`) with Gymnasium and :data:`ENV_IDS`
    (idempotent; done when this module is imported)."""
    ENV_IDS.update({env_id(name): name for name in rulesets.names()})
    for eid, rules in ENV_IDS.items():
        if eid not in gymnasium.registry:
            gymnasium.register(
                id=eid,
                entry_point="caishen.envs.gym_env:MahjongEnv",
                vector_entry_point="caishen.envs.vector_env:CaishenVectorEnv",
                # gym.make returns the MahjongEnv itself, so env.action_masks() works (Gymnasium 1.x
                # wrappers no longer forward attributes); the env checks its own order and inputs
                order_enforce=False,
                disable_env_checker=True,
                kwargs={"rules": rules},
            )


register_envs()
