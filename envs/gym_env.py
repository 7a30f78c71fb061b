"""Caishen mahjong (every registered rule set) as a Gymnasium single-agent environment.

================== ==========================================================
Creation           ``import caishen.envs; gymnasium.make("caishen/<Name>-v0")``, one id
                   per rule set (:func:`env_id`; without the import:
                   ``gymnasium.make("caishen.envs.gym_env:caishen/<Name>-v0")``), or
                   ``caishen.envs.gym_env.MahjongEnv(rules=...)``; one game of the
                   batched core (:mod:`caishen.envs.batched`, the bots inside numba)
Action space       Discrete(145)
Observation space  Box(0, high, (76, 34), uint8)
Action masking     ``env.action_masks()`` (bool[145]; ``gymnasium.make``
                   returns the env itself; through your own wrappers
                   ``env.get_wrapper_attr("action_masks")()``) and
                   ``info["action_mask"]``
Vectorized         ``gymnasium.make_vec("caishen/<Name>-v0", num_envs=1024)``:
                   :class:`caishen.envs.vector_env.CaishenVectorEnv`, the same core
                   with many games per numba call (``benchmarks/bench_envs.py``)
================== ==========================================================

One episode is one hand of four-player mahjong (or a match, ``episode="match"``)
seen from one learning seat (``seat``, default 0); the other three seats are
played by bots of the registry (:mod:`caishen.sim.bots.registry`) inside the numba
step (default ``"greedy"``: the shanten-greedy policy of :mod:`caishen.sim.bots.policies`).
``step`` applies the learning seat's action, then lets the bots act until the learning
seat must decide again or the episode is over.  It is one game of
:class:`caishen.envs.batched.BatchedGames` (``env.games``; ``final_state=True``: an ended
episode's last state is kept for ``env.game``, ``render`` and ``info["result"]`` while the
batch's autoreset deals the next one, which :meth:`MahjongEnv.reset` then returns), so its
observations, masks and rewards are the vector env's, which equal :class:`caishen.sim.engine.Game`'s step by step
(``tests/test_batched_env.py``).  It is made for maskable RL (``sb3_contrib.MaskablePPO`` calls
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
``terminated=True``; ``info["result"]`` holds the hand's record and
``info["hand_points"]`` every seat's points.  A 流局 gives 0.  ``reward="scaled"`` /
``"sign"`` transform the points (:mod:`caishen.envs.batched`, "Rewards").
``truncated`` is False but at the end of a match (``episode="match"``, ``match_len``
hands, the dealer rotating).

An illegal action ends the episode (``terminated=True``) with reward
``illegal_reward`` (default -500, worse than losing almost any hand) and
``info["illegal_action"] = True``; the hand is left unfinished.  With
``illegal_reward=None`` (or ``illegal_action="raise"``) an illegal action raises
``ValueError`` instead, changing nothing.
An action that is no integer index (a bool, a float such as 1.5, None) or
outside ``0..144`` always raises ``ValueError``: ``step(True)`` is not
action 1.

Arguments and seeding
---------------------
``MahjongEnv(rules=DEFAULT, options=None, seat=0, opponents="greedy",
dealer=None, render_mode=None, *, episode="hand", match_len=16, **config)``,
``config`` the keywords of :class:`caishen.envs.batched.EnvConfig`:
``observation="planes"`` / ``history=False`` / ``assist=False`` the layout
(:mod:`caishen.envs.observation`: ``"planes"``, ``"flat"``, ``"grid"``,
``"candidates"``); ``oracle=True`` adds the learning seat's training labels as
``info["oracle"]`` (:mod:`caishen.envs.oracle`; never in an observation);
``reward="points"`` / ``reward_scale``; ``illegal_reward=-500.0`` and
``illegal_action`` (``"penalty"`` when ``illegal_reward`` is a number, ``"raise"``
when it is None).  ``options`` a dict of rule options; ``seat`` the learning seat
0..3 or ``"random"`` (drawn per episode); ``opponents`` one bot spec for the three
other seats (any spec of the bot registry: ``"greedy"``, ``"random"``,
``"tuned:NAME"``, ``"mc:8"``, an open seat ``"python:MODULE:FN"`` /
``"exec:CMD"`` (:mod:`caishen.envs.open_opponents`) ..., or a step-API agent
object) or three, the other seats in seat order (a list or ``"a,b,c"``); an agent
of :func:`caishen.agents.make_agent` of a kernel bot's spec stands for its spec
(it plays inside numba);
``dealer`` a seat 0..3 or None (drawn per hand); ``render_mode`` ``"ansi"`` or
``"human"`` (the whole table as text; another mode raises
:class:`RenderModeError`, a ``ValueError`` that is also the ``TypeError``
stable-baselines3's ``make_vec_env`` expects when it tries
``render_mode="rgb_array"``).  ``close()`` stops the ``exec:`` opponents' programs.

A bot or a trained policy in any seat: ``seat`` is the learning seat, and
each of the other three is a bot spec or an agent; a trained policy plays a seat as a
``python:MODULE:FN`` open seat, called with a batch of observations and masks
(:mod:`caishen.envs.seats`; :class:`caishen.agents.ppo.PPOAgent` has ``act_batch``), or
as itself: any step-API agent object (a :class:`caishen.agents.Agent` with
``act(observation) -> int``: ``make_agent("ppo:PATH")``, your own class) is seated as an
open seat (:class:`caishen.envs.open_opponents.AgentSeat`) that calls ``act`` once per
decision with the seat's :class:`caishen.sim.engine.Observation`, built as
:meth:`caishen.sim.engine.Game.observe` builds it (its public log included); an
exception or an illegal answer raises :class:`caishen.envs.seats.SeatError` naming it.
``env.game`` is
the env's live hand as a read-only :class:`caishen.sim.engine.Game` (the state,
``legal_mask()``, ``result``, ``observe()`` with an empty public log: the batched
core keeps no event log); to evaluate a built-in bot in the learning seat, step
``make_agent("greedy").act(env.game.observe())``.

``reset(seed=s)`` deals the same episode and replays the same bots' choices for
the same ``s`` (the game's stream is seeded with ``s``: :mod:`caishen.envs.batched`,
"Episodes, seeds and determinism"; ``options`` is ignored); ``reset()`` without a
seed deals the next episode of that stream (the first time, from a seed drawn from
``np_random``).  A hand that ends before the learning seat's first decision (e.g.
the dealer's 天胡) is dealt again, since it gives the learner nothing to decide.
"""

from __future__ import annotations

import gymnasium
import numpy as np

from caishen.sim.rules import base as rulesets
from caishen.sim.rules.base import DEFAULT
from caishen.envs.batched import BatchedGames, LiveGame, check_seeds, env_config
from caishen.envs.render import RENDER_MODES, RenderModeError, check_render_mode, render_text
from caishen.envs.vector_env import index_obs, single_spaces
from caishen.sim.engine import N_ACTIONS
from caishen.sim.validate import check_int

__all__ = ["MahjongEnv", "DEFAULT_ILLEGAL_REWARD", "ENV_IDS", "RenderModeError", "env_id", "register_envs"]

#: reward of an illegal action (the episode ends)
DEFAULT_ILLEGAL_REWARD = -500.0


def env_id(rules: str) -> str:
    """The Gymnasium id of rule set ``rules``: ``caishen/<Name>-v0``."""
    return f"caishen/{rules.capitalize()}-v0"


#: registered ids -> rule set (the built-in rule sets; :func:`register_envs` adds those registered later)
ENV_IDS = {env_id(name): name for name in rulesets.names()}


class MahjongEnv(gymnasium.Env):
    """One learning seat against three bots, one game of the batched core (documented in the module docstring).

    Raises ``ValueError`` for an unknown rule set or option, a bad seat,
    dealer, opponents spec, render mode or observation / reward keyword
    (``TypeError`` for an unknown keyword).
    """

    metadata = {"render_modes": list(RENDER_MODES), "render_fps": 1}

    def __init__(self, rules=DEFAULT, options=None, seat=0, opponents="greedy", dealer=None, render_mode=None, *,
                 episode="hand", match_len=16, **config):
        check_render_mode(render_mode)
        config.setdefault("illegal_reward", DEFAULT_ILLEGAL_REWARD)
        if config.get("illegal_action") is None:
            config["illegal_action"] = "raise" if config["illegal_reward"] is None else "penalty"
        if not config.setdefault("final_obs", True):
            raise ValueError("final_obs must be True: the single-game env returns an episode's last observation")
        config = env_config(type(self).__name__, config)._asdict()
        self.games = BatchedGames(1, rules, options, mode="versus", seat=seat, opponents=opponents, dealer=dealer,
                                  episode=episode, match_len=match_len, final_state=True, **config)
        self.game = LiveGame(self.games)
        self.observation_space, self.action_space = single_spaces(self.games)
        self.render_mode = render_mode
        self._action = np.zeros(1, np.int64)
        self._over = True  # no episode running yet
        self._seat = int(self.games.learner[0])
        self._dealt = False

    @property
    def seat(self) -> int:
        """The learning seat of the current episode, or of the one that just ended (0..3)."""
        return self._seat

    # -- API ---------------------------------------------------------------------
    def reset(self, *, seed=None, options=None):
        """Deal an episode and play the bots up to the learning seat's first decision: ``(obs, info)``."""
        super().reset(seed=seed)
        g = self.games
        if seed is not None or not self._dealt:
            s = int(self.np_random.integers(2**62)) if seed is None else int(check_seeds(seed, 1)[0])
            g.reset(s)
            self._dealt = self.game._started = True
        # else: the batch's autoreset dealt the next episode when the last one ended, up to its first decision
        self.game._show(g.states)
        self._seat = int(g.learner[0])
        self._over = False
        if self.render_mode == "human":
            self.render()
        return index_obs(g.obs, 0), self._info()

    def step(self, action):
        """Apply the learning seat's ``action``: ``(obs, reward, terminated, truncated, info)``.

        Raises ``ValueError`` when no episode is running (call :meth:`reset`),
        for an action that is no integer in ``0..144``, and for an illegal one
        with ``illegal_reward=None``, changing nothing.
        """
        if self._over:
            raise ValueError("the episode is over (or was never started); call reset()")
        self._action[0] = check_int("action", action, 0, N_ACTIONS - 1)  # no bools, floats, NaN or infinities
        g = self.games.step(self._action)
        self._over = bool(g.terminated[0] or g.truncated[0])
        if self._over:  # env.game shows the ended episode's last state until reset()
            self.game._show(g.final_states)
        obs = index_obs(index_obs(g.final_obs, 0), 0) if self._over else index_obs(g.obs, 0)
        if self.render_mode == "human":
            self.render()
        return obs, float(g.reward[0]), bool(g.terminated[0]), bool(g.truncated[0]), self._info()

    def action_masks(self) -> np.ndarray:
        """``bool[145]``: the learning seat's legal actions now (all False when the episode is over)."""
        return self.games.masks[0] & (not self._over)

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
        """Stop the ``exec:`` opponents' programs, if any."""
        self.games.close()

    # -- helpers -------------------------------------------------------------------
    def _info(self) -> dict:
        g = self.games
        info = {"action_mask": self.action_masks(), "seat": self.seat, "hand_points": g.points[0].copy()}
        if g.illegal_action == "penalty":
            info["illegal_action"] = bool(g.illegal[0])
        if self._over and self.game.done:
            info["result"] = self.game.result
        if g.oracle_labels is not None:
            info["oracle"] = {k: v[0].copy() for k, v in g.oracle_labels.items()}
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
