"""Self-play throughput: Kaihua hands per second per core.

Side by side in one run, on one core:

- ``sim.selfplay.play_batch``: a whole batch of hands in one numba call,
  with random and with greedy bots (and a 飘财 policy mix);
- the same bots through the engine's Python step API (``sim.engine.Game``
  + ``agents``), one action at a time, as a person or an env would drive it;

printed as hands/s and the ratio batch / step API.  Targets (issue 4):
>= 50,000 hands/s per core with random bots, >= 5,000 with greedy bots.
CPU time (``time.process_time``) of this process is used, so other load on
the machine disturbs the figures less than wall time would.

    python benchmarks/bench_games.py [--hands 20000] [--step-hands 200]
"""

from __future__ import annotations

import argparse
import time

from agents import make_agent
from sim.engine import Game
from sim.selfplay import play_batch


def batch_rate(policies: str, hands: int, seed: int) -> float:
    play_batch(10, seed, policies=policies)  # compile / load the cache
    t = time.process_time()
    play_batch(hands, seed, policies=policies)
    return hands / (time.process_time() - t)


def step_rate(policies: str, hands: int, seed: int) -> float:
    specs = policies.split(",") * (4 if "," not in policies else 1)
    bots = [make_agent(p, seed=seed + i) for i, p in enumerate(specs)]
    game = Game("kaihua")
    game.reset(seed=seed)  # warm-up hand: compile / load the step kernels
    while not game.done:
        game.step(bots[game.current_player].act(game))
    t = time.process_time()
    for h in range(hands):
        game.reset(seed=seed + h)
        while not game.done:
            game.step(bots[game.current_player].act(game))
    return hands / (time.process_time() - t)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--hands", type=int, default=20_000, help="hands per batch measurement")
    ap.add_argument("--step-hands", type=int, default=200, help="hands through the step API")
    ap.add_argument("--seed", type=int, default=1)
    args = ap.parse_args()
    rows = []
    for policies in ("random", "greedy", "greedy,greedy,always,never"):
        b = batch_rate(policies, args.hands, args.seed)
        s = step_rate(policies, args.step_hands, args.seed)
        rows.append((policies, b, s))
    print(f"Kaihua self-play, one core (CPU time); batch {args.hands:,} hands, step API {args.step_hands:,} hands")
    print(f"{'policies':<28} {'batch hands/s':>14} {'step API hands/s':>17} {'ratio':>8}")
    for policies, b, s in rows:
        print(f"{policies:<28} {b:14,.0f} {s:17,.0f} {b / s:7.0f}x")
    print("targets: random >= 50,000 hands/s, greedy >= 5,000 hands/s per core")


if __name__ == "__main__":
    main()
