"""A slow, obvious pure-Python reference of :mod:`caishen.envs.batched`: the same games through
:class:`caishen.sim.engine.Game`, the :mod:`agents` bots and a Python transcription of the seed
stream, following the module docstring of ``caishen.envs.batched`` (not its kernels)."""

from __future__ import annotations

import numpy as np

from caishen.agents import make_agent
from caishen.envs.batched import SIGN_ILLEGAL_REWARD
from caishen.envs.observation import encode
from caishen.sim.engine import N_SEATS, Game, _random_action
from caishen.sim.rules import base as rulesets
from test_rng import ref_below, ref_next, ref_seed


class RefGame:
    """One game of a batch, stepped in Python."""

    def __init__(self, seed, rules, options, mode, seat, opponents, dealer, episode, match_len, reward, reward_scale,
                 illegal_reward, observation, history):
        self.rules, self.options, self.mode = rules, options, mode
        self.fixed_seat, self.fixed_dealer = seat, dealer
        self.episode, self.match_len = episode, match_len
        self.reward_mode = reward
        self.scale = reward_scale or rulesets.get(rules).reward_scale
        self.illegal_reward = illegal_reward if illegal_reward is not None else SIGN_ILLEGAL_REWARD
        self.layout, self.history = observation, history
        specs = [opponents] * 3 if isinstance(opponents, str) else list(opponents)
        self.bot_specs = {}
        if mode == "versus":
            others = [s for s in range(N_SEATS) if s != seat] if seat != "random" else [0, 1, 2, 3]
            for s, spec in zip(others, specs * (2 if seat == "random" else 1)):
                self.bot_specs[s] = spec
        self.stream = ref_seed(int(seed))
        self.learner = seat if seat != "random" else -1
        self.acc = np.zeros(N_SEATS)
        self.game = None
        self.deal(new_episode=True)
        self.clear()
        self.advance()
        self.terminated = self.truncated = False  # an episode ended before the first decision is not the caller's
        self.rewards[:] = 0
        self.points[:] = 0
        self.hands_ended = 0

    # -- per step outputs --------------------------------------------------------------
    def clear(self):
        self.rewards = np.zeros(N_SEATS)
        self.reward = 0.0
        self.terminated = self.truncated = self.illegal = False
        self.points = np.zeros(N_SEATS, np.int64)
        self.hands_ended = 0
        self.ended = False
        self.final_obs = None

    def observe(self, seat):
        return encode(self.game, seat, layout=self.layout, history=self.history)

    def to_reward(self, p):
        if self.reward_mode == "scaled":
            return p / self.scale
        if self.reward_mode == "sign":
            return float(np.sign(p))
        return float(p)

    # -- the docstring's rules -----------------------------------------------------------
    def deal(self, new_episode):
        if new_episode and self.mode == "versus" and self.fixed_seat == "random":
            self.learner = ref_below(self.stream, N_SEATS)
        if new_episode or self.episode == "hand":
            if self.fixed_dealer is not None:
                dealer = self.fixed_dealer
            elif self.episode == "match" and not rulesets.get(self.rules).facts["first_dealer_random"]:
                dealer = 0
            else:
                dealer = ref_below(self.stream, N_SEATS)
            streak, match_hand = 0, 0
        else:
            old = self.game
            dealer = old.result["next_dealer"]
            streak = old.state["table"]["streak"] + 1 if dealer == old.state["table"]["dealer"] else 0
            match_hand = int(old.state["table"]["match_hand"]) + 1
        self.hand_seed = ref_next(self.stream) >> 32
        self.game = Game(self.rules, self.options).reset(seed=self.hand_seed, dealer=dealer, match_hand=match_hand,
                                                         streak=int(streak))
        self.decided = False

    def end_episode(self, truncate):
        if truncate:
            self.truncated = True
        else:
            self.terminated = True
        self.ended = True
        seats = [self.learner] if self.mode == "versus" else range(N_SEATS)
        self.final_obs = np.stack([self.observe(s) for s in seats])
        self.rewards += self.acc
        self.acc[:] = 0
        if self.mode == "versus":
            self.reward = self.rewards[self.learner]

    def advance(self):
        g = self.game
        while True:
            if g.done:
                if self.mode == "versus" and self.episode == "hand" and not self.decided:
                    self.deal(False)
                    g = self.game
                    continue
                pts = np.array([g.result[f"score_{s}"] for s in range(N_SEATS)])
                self.points += pts
                self.hands_ended += 1
                self.acc += [self.to_reward(p) for p in pts]
                if self.episode == "hand":
                    self.end_episode(False)
                    self.deal(True)
                elif int(g.state["table"]["match_hand"]) + 1 >= self.match_len:
                    self.end_episode(True)
                    self.deal(True)
                else:
                    self.deal(False)
                g = self.game
                continue
            s = g.current_player
            if self.mode == "versus" and s != self.learner:
                spec = self.bot_specs[s]
                if spec == "random":
                    g.legal_mask()
                    g.step(int(_random_action(g.state)))
                else:
                    g.step(make_agent(spec).act(g.observe()))
                continue
            break
        self.player = s
        self.mask = g.legal_mask()
        self.obs = self.observe(s)
        if not self.ended:
            self.rewards += self.acc
            self.acc[:] = 0
            if self.mode == "versus":
                self.reward = self.rewards[self.learner]

    def step(self, action, penalty=False):
        self.clear()
        if not self.mask[action]:
            assert penalty
            self.illegal = True
            self.acc[self.player] += self.illegal_reward
            self.end_episode(False)
            self.deal(True)
        else:
            self.decided = True
            self.game.step(int(action))
        self.advance()
