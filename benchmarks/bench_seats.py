"""Open seats' cost in ``caishen match``, beside the numba bots' (issue 43).

1. Wall seconds per hand of ``caishen match --policies SEAT,greedy --walls W --chunk-walls C`` in-process
   (:func:`caishen.sim.analysis.arena.play_match`, one worker, Parquet written), for ``SEAT``:

   - ``random``: the numba bot (uniform over the legal actions, in the kernel);
   - ``python:caishen.envs.seats:uniform_random``: the same policy as a ``python:`` seat (numpy, one
     call per batch of decisions, the observation planes encoded for every decision);
   - ``greedy`` (numba) and ``python:examples/bots/python_seat.py:Policy`` for scale.

   The rounds are interleaved (numba, python, numba, python, ...) and the medians reported with their
   ratio; the python seat's batch sizes (decisions per call) are counted.  Goal: the python seat at most
   3x the numba bot's wall time per hand at batches >= 256 (``--chunk-walls`` >= 256: each wall's
   seating is one table of that many games).
2. The ``exec:`` overhead per decision: a table of ``--exec-hands`` hands with an ``exec:`` seat against
   greedy (``examples/bots/seat_bot.py`` under this Python, and ``examples/bots/first_legal.sh`` where sh
   and awk exist): the seconds the host waits for the program per decision (request written, answer
   read and checked: the protocol's round trip and the program's own time), and the whole hand's wall
   time beside the same table with the numba bot.

Wall time (``time.perf_counter``), so run it on a quiet machine or read the ratios; ``uptime``'s load is
printed first.

    python benchmarks/bench_seats.py [--rules NAME] [--walls 2048] [--chunk-walls 512] [--rounds 3]
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

EXAMPLES = Path(__file__).resolve().parents[1] / "examples" / "bots"


def match_seconds_per_hand(rules: str, seat: str, walls: int, chunk_walls: int, seed: int) -> float:
    """Wall seconds per hand of one in-process ``caishen match --policies SEAT,greedy``."""
    from caishen.sim.analysis import arena

    with tempfile.TemporaryDirectory() as d:
        t = time.perf_counter()
        res, _ = arena.play_match(rules, f"{seat},greedy", walls, seed, f"{d}/m", chunk_walls=chunk_walls, workers=1,
                                  progress=False)
        took = time.perf_counter() - t
    return took / res.hands_run


def batch_sizes(rules: str, seat: str, walls: int, seed: int) -> list[int]:
    """The sizes of the batches a python: seat gets in a table of ``walls`` hands (the seat in seat 0)."""
    from caishen.envs import seats
    from caishen.sim.selfplay.batch import play_batch

    sizes, real = [], seats.PythonSeat.decide

    def counted(self, idx, host):
        sizes.append(len(idx))
        return real(self, idx, host)

    seats.PythonSeat.decide = counted
    try:
        play_batch(walls, 1, rules=rules, policies=f"{seat},greedy,greedy,greedy", wall_seed=seed)
    finally:
        seats.PythonSeat.decide = real
    return sizes


def exec_overhead(rules: str, spec: str, hands: int, seed: int) -> dict:
    """A table of ``hands`` hands, ``spec`` (an exec: seat) in seat 0 against greedy: decisions, seconds waiting
    for the program per decision, wall seconds per hand; and the same with the numba random bot in seat 0."""
    from caishen.envs import arena_host
    from caishen.sim import engine
    from caishen.sim.selfplay.batch import play_batch

    name, r = engine.load_rules(rules)
    table = arena_host.Table(hands, 1, name, r, [spec, "greedy", "greedy", "greedy"], 16, False, seed)
    t = time.perf_counter()
    table.run()
    wall = time.perf_counter() - t
    x = table.seats[0]
    t = time.perf_counter()
    play_batch(hands, 1, rules=rules, policies="random,greedy,greedy,greedy", wall_seed=seed)
    numba = time.perf_counter() - t
    return {"decisions": x.decisions, "us_per_decision": 1e6 * x.seconds / max(1, x.decisions),
            "ms_per_hand": 1e3 * wall / hands, "numba_ms_per_hand": 1e3 * numba / hands}


def main() -> None:
    import caishen.envs  # noqa: F401  (the arena host of the open seats)

    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--rules", default=None, help="rule set (default: the default rule set)")
    ap.add_argument("--walls", type=int, default=2048, help="walls per match measurement")
    ap.add_argument("--chunk-walls", type=int, default=512, help="walls per chunk: the python seat's batch size")
    ap.add_argument("--rounds", type=int, default=3, help="interleaved rounds of each measurement")
    ap.add_argument("--exec-hands", type=int, default=200, help="hands of the exec: tables")
    ap.add_argument("--seed", type=int, default=20261310)
    args = ap.parse_args()
    for k in ("walls", "chunk_walls", "rounds", "exec_hands"):
        if getattr(args, k) < 1:
            ap.error(f"--{k.replace('_', '-')} must be >= 1")
    from caishen.sim.rules import DEFAULT

    rules = args.rules or DEFAULT
    print(f"{rules}; load average {os.getloadavg()[0]:.2f} {os.getloadavg()[1]:.2f} {os.getloadavg()[2]:.2f}; "
          f"{args.walls} walls x 2 seatings, chunks of {args.chunk_walls} walls; wall time")
    pairs = [("random", "python:caishen.envs.seats:uniform_random"),
             ("greedy", f"python:{EXAMPLES / 'python_seat.py'}:Policy")]
    for a, b in pairs:  # warm: compile or load the kernels, import the seats
        match_seconds_per_hand(rules, a, 8, 8, args.seed)
        match_seconds_per_hand(rules, b, 8, 8, args.seed)
    sizes = batch_sizes(rules, pairs[0][1], args.chunk_walls, args.seed)
    print(f"python: seat batches in a table of {args.chunk_walls} hands: {len(sizes)} calls, first {sizes[0]}, "
          f"median {int(statistics.median(sizes))}, mean {np.mean(sizes):.0f} decisions per call")
    for a, b in pairs:
        ta, tb = [], []
        for k in range(args.rounds):
            ta.append(match_seconds_per_hand(rules, a, args.walls, args.chunk_walls, args.seed + k))
            tb.append(match_seconds_per_hand(rules, b, args.walls, args.chunk_walls, args.seed + k))
        ma, mb = statistics.median(ta), statistics.median(tb)
        print(f"  {a:<8} {ma * 1e6:8.1f} µs/hand   {b.replace(str(EXAMPLES) + '/', 'examples/bots/'):<52} "
              f"{mb * 1e6:8.1f} µs/hand   ratio {mb / ma:.2f}x")
    bots = [f"exec:{sys.executable} {EXAMPLES / 'seat_bot.py'}"]
    if shutil.which("sh") and shutil.which("awk"):
        bots.append(f"exec:sh {EXAMPLES / 'first_legal.sh'}")
    for spec in bots:
        c = exec_overhead(rules, spec, args.exec_hands, args.seed)
        print(f"exec: {spec.replace(str(EXAMPLES) + '/', 'examples/bots/')}: {c['decisions']} decisions, "
              f"{c['us_per_decision']:.0f} µs per decision waiting for the program; {c['ms_per_hand']:.1f} ms per "
              f"hand against {c['numba_ms_per_hand']:.2f} ms with the numba random bot")


if __name__ == "__main__":
    main()
