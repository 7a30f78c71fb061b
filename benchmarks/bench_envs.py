"""RL environment throughput: agent decisions per second, observations and masks produced.

Side by side in one run, on one core (CPU time of this process,
``time.process_time``; numba runs single-threaded here):

- the batched env (:mod:`caishen.envs.batched`, what :class:`caishen.envs.vector_env.CaishenVectorEnv`
  and :class:`caishen.envs.vector_env.SelfPlayVectorEnv` step): self-play (every
  decision is an agent's) at several batch sizes, with the planes and with
  the flat vector, and versus bots (only the learning seat's decisions
  count; the bots play inside the kernel), Kaihua and Jiating;
- :class:`caishen.envs.gym_env.MahjongEnv` (a learner against greedy bots, one
  Python call per learner step);
- the PettingZoo AEC env (four agents);
- and, when installed (``pip install -e ".[peers]"``), RiichiEnv, pymahjong
  and RLCard's mahjong with random agents, each producing its observation
  features and legal actions at every decision.

Agents pick uniformly among the legal actions (the batched env's with the
numba :func:`caishen.envs.batched.sample_legal`, so the agent costs almost nothing).
A decision counts once an observation and a mask were produced for it and
an action applied.  Printed: decisions/s, hands/s, and the ratio to
RiichiEnv's decisions/s measured in the same run (the goal of issue 12:
the batched env >= 10x RiichiEnv), plus the batch's memory per game.

    python benchmarks/bench_envs.py [--seconds 3] [--batches 16,64,256,1024,4096]   # about 2 minutes
    python benchmarks/bench_envs.py --versus-only   # RiichiEnv and the batched env against greedy bots

``--versus-only``: only RiichiEnv and the learner against three greedy bots (issue 48: >= 5x
RiichiEnv).  Before / after a change to the bots: ``benchmarks/bench_trees.py OLD_TREE`` (interleaved,
each tree in its own process and numba cache; ``PYTHONPATH`` pointing at the other tree is not enough:
``caishen.sim`` still comes from this checkout's editable install).
"""

from __future__ import annotations

import argparse
import random
import time

import numpy as np

from caishen.envs.batched import BatchedGames, sample_legal
from caishen.envs.gym_env import MahjongEnv
from caishen.envs.pettingzoo_env import raw_env
from caishen.sim.rng import _rng_seed


def _timed(fn, seconds: float) -> tuple[float, int, int]:
    """Run ``fn() -> (decisions, hands)`` repeatedly for about ``seconds`` of CPU time."""
    dec = hands = 0
    t0 = time.process_time()
    while True:
        d, h = fn()
        dec += d
        hands += h
        dt = time.process_time() - t0
        if dt >= seconds:
            return dt, dec, hands


def batched_rate(n: int, seconds: float, rules="kaihua", **kw) -> tuple[float, float, int]:
    """(decisions/s, hands/s, bytes per game) of a :class:`BatchedGames` batch of ``n`` games."""
    games = BatchedGames(n, rules, final_obs=kw.pop("final_obs", True), **kw)
    games.reset(1)
    rng = np.zeros(4, np.uint64)
    _rng_seed(rng, 7)
    actions = np.zeros(n, np.int64)
    steps = max(1, 20_000 // n)

    def run():
        hands = 0
        for _ in range(steps):
            sample_legal(games.masks, rng, actions)
            games.step(actions)
            hands += int(games.hands_ended.sum())
        return steps * n, hands

    # warm-up: compile or load the kernels, fill the caches -- until as many hands as the batch has games
    # have ended, since the end of a hand runs kernels of its own, some only for some endings (a Jiating
    # hand of random play lasts ~90 turns: more steps than one run; stopping at the first ended hand left
    # a compile inside the timed rows after a kernel changed: 125,731 decisions/s for 900,000)
    ended = 0
    for _ in range(10_000):
        ended += run()[1]
        if ended >= n:
            break
    dt, dec, hands = _timed(run, seconds)
    return dec / dt, hands / dt, games.nbytes() // n


def gym_rate(seconds: float, rules="kaihua") -> tuple[float, float]:
    env = MahjongEnv(rules=rules, illegal_reward=None)
    rng = np.random.default_rng(0)
    seed = [0]

    def run():
        obs, info = env.reset(seed=seed[0])
        seed[0] += 1
        dec, done = 0, False
        while not done:
            a = int(rng.choice(np.flatnonzero(env.action_masks())))
            obs, r, done, _, info = env.step(a)
            dec += 1
        return dec, 1

    run()
    dt, dec, hands = _timed(run, seconds)
    return dec / dt, hands / dt


def aec_rate(seconds: float, rules="kaihua") -> tuple[float, float]:
    env = raw_env(rules=rules)
    rng = np.random.default_rng(0)
    seed = [0]

    def run():
        env.reset(seed=seed[0])
        seed[0] += 1
        dec = 0
        for agent in env.agent_iter():
            obs, r, term, trunc, info = env.last()
            if term or trunc:
                env.step(None)
                continue
            env.step(int(rng.choice(np.flatnonzero(obs["action_mask"]))))
            dec += 1
        return dec, 1

    run()
    dt, dec, hands = _timed(run, seconds)
    return dec / dt, hands / dt


def riichienv_rate(seconds: float):
    try:
        import riichienv
    except ImportError:
        return None
    rng = random.Random(0)
    env = riichienv.RiichiEnv(game_mode="4p-red-single", seed=1)

    def run():
        obs = env.reset()
        dec = 0
        while not env.done():
            acts = {}
            for p, o in obs.items():
                o.encode()  # the (74, 34) float32 features
                o.mask()
                acts[p] = rng.choice(o.legal_actions())
                dec += 1
            obs = env.step(acts)
        return dec, 1

    run()
    dt, dec, hands = _timed(run, seconds)
    return dec / dt, hands / dt


def pymahjong_rate(seconds: float):
    try:
        import pymahjong
    except ImportError:
        return None
    env = pymahjong.MahjongEnv()
    rng = np.random.default_rng(0)

    def run():
        env.reset()
        dec = 0
        while not env.is_over():
            p = env.get_curr_player_id()
            env.get_obs(p)
            env.step(p, rng.choice(env.get_valid_actions()))
            dec += 1
        return dec, 1

    run()
    dt, dec, hands = _timed(run, seconds)
    return dec / dt, hands / dt


def rlcard_rate(seconds: float):
    try:
        import rlcard
        from rlcard.agents import RandomAgent
    except ImportError:
        return None
    env = rlcard.make("mahjong", config={"seed": 0})
    agent = RandomAgent(num_actions=env.num_actions)

    def run():
        state, _ = env.reset()
        dec = 0
        while not env.is_over():
            state, _ = env.step(agent.step(state))  # the state holds the obs and legal actions
            dec += 1
        return dec, 1

    run()
    dt, dec, hands = _timed(run, seconds)
    return dec / dt, hands / dt


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--seconds", type=float, default=3.0, help="CPU seconds per measurement")
    ap.add_argument("--batches", default="16,64,256,1024,4096", help="batch sizes of the self-play rows")
    ap.add_argument("--batch", type=int, default=1024, help="batch size of the other batched rows")
    ap.add_argument("--versus-only", action="store_true",
                    help="only RiichiEnv and the batched env against greedy bots (Kaihua, Jiating)")
    args = ap.parse_args()
    if args.seconds <= 0:
        ap.error(f"--seconds must be > 0, got {args.seconds}")
    try:
        batches = [int(b) for b in args.batches.split(",")]
    except ValueError:
        ap.error(f"--batches must be integers separated by commas, got {args.batches!r}")
    if any(b < 1 for b in batches) or args.batch < 1:
        ap.error("batch sizes must be >= 1")
    s, n = args.seconds, args.batch
    rows = []  # (name, decisions/s, hands/s, bytes/game or None)
    if args.versus_only:
        base = riichienv_rate(s)
        if base is None:
            ap.error("--versus-only needs RiichiEnv (pip install -e \".[peers]\")")
        print(f"agent decisions/s with observations and masks, one core (CPU time, {s:g} s per row)")
        print(f"{'RiichiEnv (riichi, Rust)':<52} {base[0]:12,.0f} {base[1]:9,.0f}")
        for rules in ("kaihua", "jiating"):
            d, h, _ = batched_rate(n, s, rules, mode="versus")
            print(f"{'batched vs greedy bots, ' + rules.capitalize() + f', n={n}':<52} {d:12,.0f} {h:9,.0f} "
                  f"{d / base[0]:10.2f}x")
        return
    peers = {"RiichiEnv (riichi, Rust)": riichienv_rate(s), "pymahjong (riichi, C++)": pymahjong_rate(s),
             "RLCard mahjong (Python)": rlcard_rate(s)}
    for b in batches:
        rows.append((f"batched self-play, Kaihua, planes, n={b}", *batched_rate(b, s)))
    rows.append((f"batched self-play, Kaihua, flat, n={n}", *batched_rate(n, s, observation="flat")))
    rows.append((f"batched self-play, Kaihua, planes+history, n={n}", *batched_rate(n, s, history=True)))
    rows.append((f"batched self-play, Jiating, planes, n={n}", *batched_rate(n, s, "jiating")))
    rows.append((f"batched vs random bots, Kaihua, n={n}", *batched_rate(n, s, mode="versus", opponents="random")))
    rows.append((f"batched vs greedy bots, Kaihua, n={n}", *batched_rate(n, s, mode="versus")))
    rows.append((f"batched vs greedy bots, Jiating, n={n}", *batched_rate(n, s, "jiating", mode="versus")))
    rows.append(("caishen/Kaihua-v0 (MahjongEnv, vs greedy)", *gym_rate(s), None))
    rows.append(("PettingZoo AEC (raw_env), Kaihua", *aec_rate(s), None))
    for name, r in peers.items():
        rows.append((name, *r, None) if r is not None else (name + ": not installed", None, None, None))
    base = peers["RiichiEnv (riichi, Rust)"]
    print(f"agent decisions/s with observations and masks, one core (CPU time, {s:g} s per row)")
    print(f"{'env':<52} {'decisions/s':>12} {'hands/s':>9} {'x RiichiEnv':>11} {'bytes/game':>10}")
    for name, d, h, mem in rows:
        if d is None:
            print(f"{name:<52} {'-':>12}")
            continue
        ratio = f"{d / base[0]:10.1f}x" if base else "-"
        print(f"{name:<52} {d:12,.0f} {h:9,.0f} {ratio:>11} {mem if mem else '':>10}")
    if base:
        goal = 10 * base[0]
        hits = [b for b, row in zip(batches, rows) if row[1] >= goal]
        print(f"goal: >= 10x RiichiEnv = {goal:,.0f} decisions/s; self-play reaches it at n = "
              + (", ".join(map(str, hits)) if hits else "none of the batch sizes run"))
    print("versus rows count the learning seat's decisions only (the bots' are inside the kernel)")


if __name__ == "__main__":
    main()
