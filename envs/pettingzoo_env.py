"""Caishen mahjong (every registered rule set) as a PettingZoo AEC environment.

================== ==========================================================
Creation           ``from caishen.envs.pettingzoo_env import env; env(rules=NAME)``
                   (any registered rule set; ``raw_env`` without wrappers)
Actions            Discrete(145)
Parallel API       No (claims are asked one seat at a time)
Agents             ``player_0``, ``player_1``, ``player_2``, ``player_3`` (seats 0..3)
Observation        dict: ``observation`` uint8[76, 34] planes (or any layout of
                   :mod:`caishen.envs.observation`: ``observation=``, ``history=``,
                   ``assist=``), ``action_mask`` int8[145]
Observation values 0 .. the plane's ``high`` (in caishen.envs.observation)
================== ==========================================================

One episode is one hand of four-player mahjong: one game of the batched numba
core in self-play mode (:class:`caishen.envs.batched.BatchedGames` ``(1,
mode="selfplay", final_state=True)``, ``env.unwrapped.games``: every seat is an
agent, as in :class:`caishen.envs.vector_env.SelfPlayVectorEnv`), so its
observations, masks and rewards are game 0 of that core's, step by step
(``tests/test_batched_env.py``), which equal :class:`caishen.sim.engine.Game`'s.
Specs: ``shared/rules/<name>.md`` (IDs ``K-..``, ``J-..``); rule options go in
``options`` (e.g. ``env(rules=DEFAULT, options={"multiple_ron": True})``).

Rules in brief
--------------
Both: 136 tiles, no flowers (K-1.1, J-1.1); the dealer gets 14 tiles, the
others 13, and the dealer discards first (K-3.1, J-2.1); on a turn a player
draws, may kong or win by self-draw, else discards; the others may claim
the discard (win > pong / kong > chow, K-4.3, J-3.1), asked one at a time
in priority order; kongs draw a replacement from the wall's tail (K-5.4,
J-3.2) and an added kong can be robbed (K-5.5, J-3.3).  The hand ends with
a win or when the live wall runs out (流局: nobody pays).

- With the 财神 (K-2.1): the four 白 (``5z``) are the 财神 jokers (K-2.1), never claimed
  or melded (K-2.2, K-2.3); 3+ 财神 force a 财神 discard (K-2.4, K-2.5);
  chow by the next seat (K-4.2); the last 20 tiles are never drawn
  (K-3.4).  Winning hands: 4 sets + a pair or seven pairs, with exponents
  for 爆头, 七对, 清一色 and the chain of kongs and 飘财 (财神 discards)
  (K-6); the payment is ``base * 2**E`` (K-8).  While a 飘财 circle is
  open nobody may chow, pong or exposed-kong (K-9.2); a win inside
  another's circle makes that player pay extra (K-9.3).
- Without (J-1.1): no jokers and no chow (J-1.1, J-3.1); several players may win
  on one discard (J-3.4); passed wins and pongs are banned until the next
  draw (J-3.5, J-3.6); 架听 is declared with a discard that leaves a single
  wait (J-4.1, action ``declare <k>``); a ready hand at the deal may declare
  硬子 (J-4.2, ``hard_declare`` / ``hard_decline``), after which every drawn
  tile it cannot win with is discarded by the engine without asking.
  Wins are scored from fifty patterns (J-6 .. J-8).

Observation space
-----------------
``observe(agent)`` returns ``{"observation": uint8[76, 34],
"action_mask": int8[145]}`` (once the hand is over, every agent's last
observation of it, the decision-time blocks empty as in the vector envs'
``final_obs``: the assist block 0, no candidates).  The planes are what that seat can see and
nothing else (never others' concealed tiles, their concealed kong kinds, the
wall, or which seat is being asked to claim); seats are seat-relative
(``+0`` itself, ``+1`` next, ``+2`` opposite, ``+3`` previous).  Scalar
planes repeat one value over the 34 kind columns.  The planes are the feature set ``planes`` version 1
(:mod:`caishen.sim.bots.features`): the table of its 76 rows (name, largest
value, meaning, rule IDs) is in :mod:`caishen.envs.observation`, the one
place it is written.

Legal action mask
-----------------
``action_mask`` (int8, 1 = legal) is the engine's legal mask for the agent to
act (``caishen.sim.engine.Game.legal_mask``) and all zeros for every other agent
(and for every agent once the hand is over).

Action space
------------
One flat ``Discrete(145)``, the engine's layout (``caishen.sim.engine``):

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
Zero until the hand ends; then every agent receives its score change of the
hand in points (``Game.result["score_<seat>"]``: the K-8 or
J-6 payments).  The four rewards sum to zero (K-8.5, J-6.5); a 流局 gives
0 to everyone.  ``infos[agent]["result"]`` then holds the hand's record.

Illegal actions
---------------
``raw_env.step`` raises ``ValueError`` naming the action and the legal ones.
``env()`` follows PettingZoo classic's convention instead: its
``TerminateIllegalWrapper`` ends the episode, the offending agent gets
``illegal_reward`` (default -500, worse than losing almost any hand) and the
others 0; pass ``illegal_reward=None`` to keep the error.  A bool action
(``True``) raises ``ValueError`` in both (bools are not actions).  Every
seat is an agent of yours: to put a built-in bot in a seat, step that agent
with ``caishen.agents.make_agent("greedy").act(env.unwrapped.game.observe())``
(any step-API agent), or with the kernel bot's own choice,
``int(env.unwrapped.games.bot_actions("greedy")[0])`` (any spec of the bot registry).

Arguments
---------
``env(rules=DEFAULT, options=None, dealer=None, illegal_reward=-500.0,
render_mode=None, observation="planes", history=False, assist=False,
oracle=False)``: ``observation`` / ``history`` / ``assist`` the layout of
``observe(agent)["observation"]`` (``"planes"``, ``"flat"``, ``"grid"`` or
``"candidates"``, :mod:`caishen.envs.observation`); ``oracle=True`` puts
the training labels of the agent to act in ``infos[agent]["oracle"]``
(:mod:`caishen.envs.oracle`; never in an observation); ``rules`` a registered rule set's name (or a rule
options object); ``options`` a dict of rule options; ``dealer`` a seat 0..3,
or None for a dealer drawn per hand; ``render_mode`` ``"ansi"`` (``render()``
returns the whole table as text) or ``"human"`` (prints it after every step).
``reset(seed=s)`` deals the same hand (wall and dealer) for the same ``s``: the
game's stream is seeded with ``s`` (:mod:`caishen.envs.batched`, "Episodes, seeds
and determinism"; ``SelfPlayVectorEnv(1).reset(seed=s)`` deals the same hand);
``reset()`` after a finished hand deals the next hand of that stream (the
vector env's next episode), and in the middle of a hand (or before any seed)
a hand seeded from the env's own stream (seeded by the last ``s``), so it
too is reproducible; ``reset(options=...)`` ignores ``options``.
``env.unwrapped.game`` is the live hand as a read-only
:class:`caishen.sim.engine.Game` (the state, ``legal_mask()``, ``result``,
``observe()`` with an empty public log: the batched core keeps no event log;
after the last step of a hand, the finished hand); step the env, not it.

What this env simplifies
------------------------
- One episode is one hand, not a match: no dealer rotation between hands
  (K-3.3, J-2.3); the dealer's streak (J-2.4) is 0.
- The claim phase exists only when some seat can claim (the engine skips
  it otherwise); a non-acting seat that is observed while another is
  asked sees "a discard on offer", as at a real table, but the pause itself
  only happens when somebody may claim.
"""

from __future__ import annotations

import math

import gymnasium
import numpy as np
from gymnasium import spaces
from gymnasium.utils import EzPickle
from pettingzoo import AECEnv
from pettingzoo.utils import wrappers

from caishen.envs.batched import BatchedGames, LiveGame, check_seeds
from caishen.envs.observation import check_layout, observation_space
from caishen.envs.oracle import oracle_labels
from caishen.envs.render import RENDER_MODES, check_render_mode, render_text
from caishen.envs.vector_env import index_obs
from caishen.sim.engine import N_ACTIONS, N_SEATS, action_name
from caishen.sim.rules.base import DEFAULT
from caishen.sim.rules.options import short_repr

__all__ = ["env", "raw_env", "DEFAULT_ILLEGAL_REWARD", "AGENTS"]

#: agent names, seat order
AGENTS = tuple(f"player_{i}" for i in range(N_SEATS))
#: reward of an illegal action under ``env()`` (PettingZoo's TerminateIllegalWrapper)
DEFAULT_ILLEGAL_REWARD = -500.0


def _check_dealer(dealer):
    if dealer is not None and (isinstance(dealer, bool) or dealer not in range(N_SEATS)):
        raise ValueError(f"dealer must be a seat 0..3 or None, got {dealer!r}")
    return None if dealer is None else int(dealer)


def _check_action_type(action):
    """Bools are not actions (``True`` would otherwise play action 1); anything but None or an
    integer index ``0..N_ACTIONS-1`` is a ``ValueError`` naming it (before PettingZoo's bounds
    wrapper would raise a bare ``AssertionError``)."""
    if isinstance(action, (bool, np.bool_)):
        raise ValueError(f"action must be an integer index or None, got {action!r} (bools are not actions)")
    if action is None:
        return
    if not isinstance(action, (int, np.integer)):
        raise ValueError(f"action must be an integer index or None, got {short_repr(action)}")
    if not 0 <= int(action) < N_ACTIONS:
        raise ValueError(f"action {short_repr(action)} is outside 0..{N_ACTIONS - 1}")


class _RejectBoolActions(wrappers.BaseWrapper):
    """Raises ``ValueError`` for a bool, a non-integer or out-of-range action, or None for an agent
    still playing, before the other wrappers see it (their assertion would not name it)."""

    def step(self, action):
        _check_action_type(action)
        agent = self.agent_selection
        if action is None and not (self.terminations[agent] or self.truncations[agent]):
            raise ValueError(f"action None is only for an agent whose hand is over; {agent} is to act")
        super().step(action)


def env(rules=DEFAULT, options=None, dealer=None, illegal_reward=DEFAULT_ILLEGAL_REWARD, render_mode=None,
        observation="planes", history=False, assist=False, oracle=False):
    """The wrapped AEC env: ``OrderEnforcing(AssertOutOfBounds(TerminateIllegal(raw_env)))``.

    ``illegal_reward=None`` leaves out ``TerminateIllegalWrapper``, so an
    illegal action raises ``ValueError``; another value must be a finite number (``ValueError`` for NaN,
    an infinity or a non-number).  Other arguments as :class:`raw_env`.
    """
    if illegal_reward is not None and (isinstance(illegal_reward, (bool, np.bool_))
                                       or not isinstance(illegal_reward, (int, float, np.integer, np.floating))
                                       or not math.isfinite(float(illegal_reward))):
        raise ValueError(f"illegal_reward must be a finite number or None, got {short_repr(illegal_reward)}")
    e = raw_env(rules=rules, options=options, dealer=dealer, render_mode=render_mode, observation=observation,
                history=history, assist=assist, oracle=oracle)
    if illegal_reward is not None:
        e = wrappers.TerminateIllegalWrapper(e, illegal_reward=float(illegal_reward))
    e = wrappers.AssertOutOfBoundsWrapper(e)
    return wrappers.OrderEnforcingWrapper(_RejectBoolActions(e))


class raw_env(AECEnv, EzPickle):
    """The unwrapped AEC env over one self-play game of :class:`caishen.envs.batched.BatchedGames` (documented in
    the module docstring).

    Raises ``ValueError`` for an unknown rule set or option, a bad dealer or
    render mode, and (in :meth:`step`) an illegal action.
    """

    metadata = {"render_modes": list(RENDER_MODES), "name": "caishen_v0", "is_parallelizable": False, "render_fps": 1}

    def __init__(self, rules=DEFAULT, options=None, dealer=None, render_mode=None, observation="planes",
                 history=False, assist=False, oracle=False):
        EzPickle.__init__(self, rules, options, dealer, render_mode, observation, history, assist, oracle)
        super().__init__()
        self.dealer = _check_dealer(dealer)
        self.render_mode = check_render_mode(render_mode)
        self.layout, self.history, self.assist = check_layout(observation, history, assist)
        if not isinstance(oracle, (bool, np.bool_)):
            raise ValueError(f"oracle must be True or False, got {oracle!r}")
        self.oracle = bool(oracle)
        #: the batched core: one self-play game (every seat an agent), its ended hand kept (``final_state``)
        self.games = BatchedGames(1, rules, options, mode="selfplay", dealer=self.dealer, final_state=True,
                                  observation=self.layout, history=self.history, assist=self.assist,
                                  oracle=self.oracle)
        #: the live hand as a read-only :class:`caishen.sim.engine.Game` (the finished one once it is over)
        self.game = LiveGame(self.games)
        self.metadata = {**type(self).metadata, "name": f"caishen_{self.game.rules_name}_v0"}
        self.possible_agents = list(AGENTS)
        self.agent_name_mapping = {a: i for i, a in enumerate(self.possible_agents)}
        obs_space = spaces.Dict(
            {
                "observation": observation_space(self.layout, self.history, self.assist),
                "action_mask": spaces.Box(0, 1, (N_ACTIONS,), np.int8),
            }
        )
        self.observation_spaces = {a: obs_space for a in self.possible_agents}
        self.action_spaces = {a: spaces.Discrete(N_ACTIONS) for a in self.possible_agents}
        self._rng = np.random.default_rng()
        self._action = np.zeros(1, np.int64)
        self._seat = np.zeros(1, np.int64)
        self._over = True  # the core's hand is over (its autoreset dealt the next one), or none was dealt
        self._dealt = False
        self.agents = []

    # -- spaces ----------------------------------------------------------------
    def observation_space(self, agent):
        return self.observation_spaces[agent]

    def action_space(self, agent):
        return self.action_spaces[agent]

    # -- episode -----------------------------------------------------------------
    def reset(self, seed=None, options=None):
        """Deal a new hand: ``seed`` seeds the game's stream (the wall and, if not fixed, the dealer); without it,
        the next hand of the stream (module docstring, "Arguments")."""
        g = self.games
        if seed is not None:
            s = int(check_seeds(seed, 1)[0])
            self._rng = np.random.default_rng(s)
            g.reset(s)
        elif not (self._dealt and self._over):  # a hand in play is abandoned: deal from the env's stream
            g.reset(int(self._rng.integers(2**62)))
        # else: the core's autoreset dealt the next hand of the game's stream when the last one ended
        self._dealt = self.game._started = True
        self._over = False
        self.game._show(g.states)
        self.agents = self.possible_agents[:]
        self.rewards = dict.fromkeys(self.agents, 0.0)
        self._cumulative_rewards = dict.fromkeys(self.agents, 0.0)
        self.terminations = dict.fromkeys(self.agents, False)
        self.truncations = dict.fromkeys(self.agents, False)
        self.infos = {a: {} for a in self.agents}
        self.agent_selection = self.possible_agents[int(g.player[0])]
        self._add_oracle()
        if self.render_mode == "human":
            self.render()

    def _add_oracle(self) -> None:
        """``oracle=True``: the labels of the agent to act in its infos (only its: the others' are cleared)."""
        if self.oracle:
            for a in self.agents:
                self.infos[a].pop("oracle", None)
            labels = index_obs(self.games.oracle_labels, 0)
            labels["final_points"][:] = 0  # no hand of this episode ended (the core's say the last one's, after
            labels["hand_ended"] = np.False_  # its autoreset dealt this one)
            self.infos[self.agent_selection]["oracle"] = labels

    def observe(self, agent):
        """``{"observation": ..., "action_mask": int8[145]}`` of ``agent`` (the mask all zeros but for the agent to
        act); once the hand is over, every agent's last observation of it."""
        seat = self.agent_name_mapping[agent]
        g = self.games
        mask = np.zeros(N_ACTIONS, np.int8)
        if self._over:
            obs = index_obs(index_obs(g.final_obs, 0), seat)
        elif seat == g.player[0]:
            mask[:] = g.masks[0]
            obs = index_obs(g.obs, 0)
        else:
            self._seat[0] = seat
            obs = index_obs(g.observe(self._seat), 0)
        return {"observation": obs, "action_mask": mask}

    def step(self, action):
        """Apply ``action`` of :attr:`agent_selection` (``None`` for an agent whose hand is over).

        Raises ``ValueError`` naming the action if it is illegal (changing nothing).
        """
        _check_action_type(action)
        agent = self.agent_selection
        if self.terminations[agent] or self.truncations[agent]:
            self._was_dead_step(action)
            return
        if action is None:
            raise ValueError(f"action None is only for an agent whose hand is over; {agent} is to act")
        g = self.games
        if not g.masks[0, action]:
            legal = ", ".join(action_name(x) for x in np.flatnonzero(g.masks[0]))
            raise ValueError(f"illegal action {action_name(action)!r} ({action}) for {agent} (seat "
                             f"{self.agent_name_mapping[agent]}) in phase {self.game.phase}; legal: {legal}")
        self._action[0] = action
        g.step(self._action)
        self._cumulative_rewards[agent] = 0.0
        self._clear_rewards()
        if g.terminated[0]:
            self._over = True
            self.game._show(g.final_states)  # the finished hand; the core has dealt the next one
            result = self.game.result
            for p, a in enumerate(self.possible_agents):
                self.rewards[a] = float(g.points[0, p])
                self.infos[a] = {"result": result}
            if self.oracle:
                labels = oracle_labels(self.game)  # the hand's final points
                for a in self.possible_agents:
                    self.infos[a]["oracle"] = labels
            self.terminations = dict.fromkeys(self.agents, True)
            self._accumulate_rewards()
            self._deads_step_first()
        else:
            self.agent_selection = self.possible_agents[int(g.player[0])]
            self._add_oracle()
        if self.render_mode == "human":
            self.render()

    # -- rendering -------------------------------------------------------------------
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

    def close(self):
        pass
