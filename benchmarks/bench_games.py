"""Self-play throughput: Kaihua hands per second per core.

Side by side in one run, on one core:

- ``caishen.sim.selfplay.play_batch``: a whole batch of hands in one numba call,
  with random and with greedy bots (and a 飘财 policy mix);
- the same bots through the engine's Python step API (``caishen.sim.engine.Game``
  + ``agents``), one action at a time, as a person or an env would drive it;

printed as hands/s and the ratio batch / step API, both on the same number
of hands by default.  Targets (issue 4): >= 50,000 hands/s per core with
random bots, >= 5,000 with greedy bots.  CPU time (``time.process_time``)
of this process is used, so other load on the machine disturbs the figures
less than wall time would; the batch figure is the median of ``--repeat``
runs (a shared machine's speed varies by +-20% from run to run), with the
slowest and fastest beside it.

    python benchmarks/bench_games.py [--hands 5000] [--step-hands N] [--repeat 9]   # about 3 minutes
"""

from __future__ import annotations

import argparse
import time

from caishen.agents import make_agent
from caishen.sim.engine import Game
from caishen.sim.selfplay import play_batch


def batch_rates(policies: str, hands: int, seed: int, repeat: int) -> list[float]:
    """hands/s of ``repeat`` batch runs, sorted."""
    play_batch(10, seed, policies=policies)  # compile / load the cache
    rates = []
    for r in range(repeat):
        t = time.process_time()
        play_batch(hands, seed + r, policies=policies)
        rates.append(hands / (time.process_time() - t))
    return sorted(rates)


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
    ap.add_argument("--hands", type=int, default=5_000, help="hands per batch run (and, by default, through the step API)")
    ap.add_argument("--step-hands", type=int, default=None, help="hands through the step API (default: --hands)")
    ap.add_argument("--repeat", type=int, default=9, help="batch runs per policy; the median is reported")
    ap.add_argument("--seed", type=int, default=1)
    args = ap.parse_args()
    for name in ("hands", "repeat"):
        if getattr(args, name) < 1:
            ap.error(f"--{name} must be >= 1, got {getattr(args, name)}")
    step_hands = args.hands if args.step_hands is None else args.step_hands
    if step_hands < 1:
        ap.error(f"--step-hands must be >= 1, got {step_hands}")
    rows = []
    for policies in ("random", "greedy", "greedy,greedy,always,never"):
        b = batch_rates(policies, args.hands, args.seed, args.repeat)
        s = step_rate(policies, step_hands, args.seed)
        rows.append((policies, b, s))
    print(f"Kaihua self-play, one core (CPU time); batch {args.hands:,} hands x {args.repeat} runs, "
          f"step API {step_hands:,} hands")
    print(f"{'policies':<28} {'batch hands/s (median)':>23} {'[slowest, fastest]':>20} {'step API hands/s':>17} {'ratio':>7}")
    for policies, b, s in rows:
        med = b[len(b) // 2]
        print(f"{policies:<28} {med:23,.0f} {f'[{b[0]:,.0f}, {b[-1]:,.0f}]':>20} {s:17,.0f} {med / s:6.0f}x")
    print("targets: random >= 50,000 hands/s, greedy >= 5,000 hands/s per core")


if __name__ == "__main__":
    main()
