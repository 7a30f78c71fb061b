"""Self-play throughput: Kaihua and Jiating hands per second per core, and the first run's time.

Side by side in one run, on one core:

- ``caishen.sim.selfplay.batch.play_batch``: a whole batch of hands in one numba call,
  with random and with greedy bots (Kaihua also a 飘财 policy mix), for both
  rule sets (Jiating's batch time includes scoring its wins, J-9);
- the same bots through the engine's Python step API (``caishen.sim.engine.Game``
  + ``agents``), one action at a time, as a person or an env would drive it;

printed as hands/s, turns per hand and turns/s (a turn: one own turn of a seat, the record's
``turns``), and the ratio batch / step API, both on the same number
of hands by default.  Targets (issue 11): Kaihua >= 150,000 hands/s per core
with random bots, >= 20,000 with greedy bots; Jiating >= 0.8x Kaihua's.  CPU
time (``time.process_time``) of this process is used, so other load on the
machine disturbs the figures less than wall time would; the batch figure is
the median of ``--repeat`` runs (a shared machine's speed varies by +-20%
from run to run), with the slowest and fastest beside it.

``--against TREE``: also time another checkout (a git worktree or clone, or a
folder holding a laid-out ``caishen`` package) in a second process that imports
``caishen`` and its subpackages from that tree, with a numba cache of its own
(``bench_trees.TREE_IMPORT``: ``PYTHONPATH`` alone would take ``caishen.sim`` from
this checkout's editable install), its runs interleaved
with this tree's in alternating order (A B B A A B ...: on a loaded machine the
first run of a pair was seen 3% slower than the second), and print the ratio
new / old of the medians: a before / after comparison made in the same
minutes on the same machine.

``--cold``: the first-run time of the README's main job, ``caishen simulate
--rules kaihua --games 100000 --workers 2 --out DIR``, with ``NUMBA_CACHE_DIR``
and ``CAISHEN_CACHE`` pointed at an empty scratch directory (wall time; it
compiles every kernel, minutes).

    python benchmarks/bench_games.py [--hands 5000] [--step-hands N] [--repeat 9]   # about 5 minutes
    python benchmarks/bench_games.py --against /path/to/old/tree --step-hands 0
    python benchmarks/bench_games.py --cold --hands 0
    python benchmarks/bench_games.py --floor --hands 20000 --repeat 9   # engine / floor per turn

``--floor``: only Kaihua random self-play and the floor kernel of
``benchmarks/floor_selfplay.py`` (the work no engine can skip: draws, legal
discards, claims, readiness, win tests), their runs interleaved in one
worker process: hands/s, turns per hand, ns per turn and engine / floor per
turn (issue 48: <= 1.7x).
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
import time

#: (rules, policies) of the batch rows
CASES = (
    ("kaihua", "random"),
    ("kaihua", "greedy"),
    ("kaihua", "greedy,greedy,always,never"),
    ("jiating", "random"),
    ("jiating", "greedy"),
)

#: a worker process that times play_batch for each request line "rules policies hands seed", or the floor
#: kernel (benchmarks/floor_selfplay.py, found through the BENCH_DIR variable) for the line "floor - hands seed"
_WORKER = r"""
import os, sys, time
from caishen.sim.selfplay.batch import play_batch
for line in sys.stdin:
    rules, policies, hands, seed = line.split()
    t = time.process_time()
    if rules == "floor":
        sys.path.insert(0, os.environ["BENCH_DIR"])
        from floor_selfplay import play_floor
        t = time.process_time()
        turns = play_floor(int(hands), int(seed))[:, 0]
    else:
        turns = play_batch(int(hands), int(seed), rules=rules, policies=policies)["turns"]
    print(int(hands) / (time.process_time() - t), float(turns.mean()), flush=True)
"""


class _Worker:
    """A Python process timing batches: of this checkout (``tree`` None), or of the checkout ``tree``
    (``bench_trees.TREE_IMPORT``: its package and its own numba cache)."""

    def __init__(self, tree: str | None):
        here = os.path.dirname(os.path.abspath(__file__))
        code = _WORKER
        if tree:
            from bench_trees import TREE_IMPORT, tree_env

            env, code = tree_env(tree), TREE_IMPORT + _WORKER
        else:
            env = dict(os.environ)
            env.pop("PYTHONPATH", None)
        env["BENCH_DIR"] = here
        # an empty working directory of its own: ``python -c`` puts the working directory first on
        # sys.path, and a shared /tmp may hold anyone's stray modules (seen: slower, different runs)
        self.cwd = tempfile.TemporaryDirectory()
        self.p = subprocess.Popen([sys.executable, "-c", code], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                  text=True, env=env, cwd=self.cwd.name)

    def rate(self, rules: str, policies: str, hands: int, seed: int) -> tuple[float, float]:
        """``(hands/s, turns per hand)`` of one batch."""
        self.p.stdin.write(f"{rules} {policies} {hands} {seed}\n")
        self.p.stdin.flush()
        line = self.p.stdout.readline()
        if not line:
            raise RuntimeError(f"the benchmark worker died on {rules} {policies}")
        rate, turns = (float(x) for x in line.split())
        return rate, turns

    def close(self) -> None:
        self.p.stdin.close()
        self.p.wait()
        self.cwd.cleanup()


def note(text: str) -> None:
    """A progress line on stderr, one write, flushed (the table itself goes to stdout at the end)."""
    sys.stderr.write(f"bench_games: {text}\n")
    sys.stderr.flush()


def batch_rates(workers: dict, rules: str, policies: str, hands: int, seed: int, repeat: int) -> tuple[dict, float]:
    """hands/s of ``repeat`` batch runs per worker, interleaved in alternating order (A B, B A, ...), each
    list sorted; and the mean turns per hand of this tree's runs."""
    t0 = time.perf_counter()
    note(f"{rules} {policies}: compiling (an empty cache: minutes) or loading the self-play kernels ...")
    for w in workers.values():
        w.rate(rules, policies, 10, seed)  # compile / load the cache
    note(f"{rules} {policies}: kernels ready after {time.perf_counter() - t0:.1f} s; timing {repeat} x {hands:,} "
         f"hands per tree ...")
    rates = {k: [] for k in workers}
    turns = []
    for r in range(repeat):
        order = list(workers.items())
        for k, w in (order[::-1] if r % 2 else order):
            rate, t = w.rate(rules, policies, hands, seed + r)
            rates[k].append(rate)
            if k == "this":
                turns.append(t)
    return {k: sorted(v) for k, v in rates.items()}, sum(turns) / len(turns)


def floor_rates(worker: _Worker, hands: int, seed: int, repeat: int) -> tuple[list, list, float, float]:
    """Kaihua random self-play and the floor kernel (benchmarks/floor_selfplay.py) in one worker, their runs
    interleaved (engine, floor, engine, floor ...): the sorted hands/s of each and their mean turns per hand."""
    note("Kaihua random and the floor kernel compile on first use (numba; minutes on an empty cache) ...")
    for rules in ("kaihua", "floor"):
        worker.rate(rules, "random", 10, seed)  # compile / load the cache
    note(f"kernels ready; timing {repeat} x {hands:,} hands each ...")
    eng, flo, te, tf = [], [], [], []
    for r in range(repeat):
        rate, t = worker.rate("kaihua", "random", hands, seed + r)
        eng.append(rate)
        te.append(t)
        rate, t = worker.rate("floor", "-", hands, seed + r)
        flo.append(rate)
        tf.append(t)
    return sorted(eng), sorted(flo), sum(te) / repeat, sum(tf) / repeat


def step_rate(rules: str, policies: str, hands: int, seed: int) -> float:
    from caishen.agents import make_agent
    from caishen.sim.engine import Game

    specs = policies.split(",") * (4 if "," not in policies else 1)
    note(f"{rules} {policies}: the step API (Game; its kernels compile on first use), {hands:,} hands ...")
    bots = [make_agent(p, seed=seed + i) for i, p in enumerate(specs)]
    game = Game(rules)
    game.reset(seed=seed)  # warm-up hand: compile / load the step kernels
    while not game.done:
        game.step(bots[game.current_player].act(game.observe()))
    t = time.process_time()
    for h in range(hands):
        game.reset(seed=seed + h)
        while not game.done:
            game.step(bots[game.current_player].act(game.observe()))
    return hands / (time.process_time() - t)


def cold_run(games: int = 100_000, workers: int = 2) -> tuple[float, float, str]:
    """``caishen simulate --rules kaihua --games N --workers W`` on empty caches: ``(wall seconds, seconds
    to its first line, its first line)`` -- what a newcomer waits for and what they are told first."""
    with tempfile.TemporaryDirectory() as d:
        env = dict(os.environ, NUMBA_CACHE_DIR=os.path.join(d, "numba"), CAISHEN_CACHE=os.path.join(d, "tables"))
        env.pop("PYTHONPATH", None)
        cmd = [sys.executable, "-m", "caishen", "simulate", "--rules", "kaihua", "--games", str(games),
               "--workers", str(workers), "--out", os.path.join(d, "run")]
        t = time.perf_counter()
        p = subprocess.Popen(cmd, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, cwd=d)
        first, t_first = "", 0.0
        for line in p.stdout:
            if not first and line.strip():
                first, t_first = line.strip(), time.perf_counter() - t
        if p.wait() != 0:
            raise RuntimeError(f"{' '.join(cmd)} exited with {p.returncode}")
        return time.perf_counter() - t, t_first, first


def _med(v: list[float]) -> float:
    return v[len(v) // 2]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--hands", type=int, default=5_000,
                    help="hands per batch run (and, by default, through the step API); 0: no batch rows")
    ap.add_argument("--step-hands", type=int, default=None, help="hands through the step API (default: --hands; 0: none)")
    ap.add_argument("--repeat", type=int, default=9, help="batch runs per policy; the median is reported")
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--against", metavar="TREE", default=None,
                    help="a folder with another checkout's caishen package: before / after in the same run")
    ap.add_argument("--floor", action="store_true",
                    help="only Kaihua random self-play beside the floor kernel (benchmarks/floor_selfplay.py)")
    ap.add_argument("--cold", action="store_true",
                    help="also time the README main job on empty numba and table caches (minutes)")
    args = ap.parse_args()
    if args.hands < 0 or args.repeat < 1:
        ap.error(f"--hands must be >= 0 and --repeat >= 1, got {args.hands} and {args.repeat}")
    step_hands = args.hands if args.step_hands is None else args.step_hands
    if step_hands < 0:
        ap.error(f"--step-hands must be >= 0, got {step_hands}")
    if args.against is not None and not any(os.path.isfile(os.path.join(args.against, *p, "effective.py"))
                                            for p in (("sim",), ("caishen", "sim"))):
        ap.error(f"--against {args.against!r}: no caishen checkout in it (no sim/effective.py)")
    if args.floor and args.hands > 0:
        w = _Worker(None)
        try:
            eng, flo, te, tf = floor_rates(w, args.hands, args.seed, args.repeat)
        finally:
            w.close()
        print(f"Kaihua random self-play beside its floor, one core (CPU time); {args.hands:,} hands x {args.repeat} "
              "runs each, interleaved; median [slowest, fastest]")
        for name, v, t in (("engine (play_batch, random)", eng, te), ("floor (floor_selfplay.py)", flo, tf)):
            print(f"{name:<28} {_med(v):11,.0f} hands/s [{v[0]:,.0f}, {v[-1]:,.0f}]  {t:5.1f} turns/hand  "
                  f"{1e9 / (_med(v) * t):6.1f} ns/turn")
        ratio = (_med(flo) * tf) / (_med(eng) * te)
        print(f"engine / floor per turn: {ratio:.2f}x (goal <= 1.7x); Kaihua random: {_med(eng):,.0f} hands/s "
              "(goal >= 150,000)")
        return
    if args.hands > 0:
        workers = {"this": _Worker(None)}
        if args.against:
            workers["old"] = _Worker(args.against)
        rows = []
        try:
            for k, (rules, policies) in enumerate(CASES):
                b, turns = batch_rates(workers, rules, policies, args.hands, args.seed, args.repeat)
                s = step_rate(rules, policies, step_hands, args.seed) if step_hands > 0 else float("nan")
                rows.append((rules, policies, b, s, turns))
                note(f"row {k + 1} of {len(CASES)}: {rules} {policies}: {_med(b['this']):,.0f} hands/s batch"
                     + (f", {s:,.0f} hands/s step API" if s == s else "")
                     + (f", old tree {_med(b['old']):,.0f}" if "old" in b else ""))
        finally:
            for w in workers.values():
                w.close()
        print(f"self-play, one core (CPU time); batch {args.hands:,} hands x {args.repeat} runs, "
              f"step API {step_hands:,} hands" + (f"; old tree {args.against}" if args.against else ""))
        head = (f"{'rules':<8} {'policies':<28} {'batch hands/s (median)':>23} {'[slowest, fastest]':>20}"
                f" {'turns/hand':>10} {'turns/s':>11}")
        head += f" {'step API hands/s':>17} {'ratio':>7}"
        if args.against:
            head += f" {'old hands/s':>12} {'new/old':>8}"
        print(head)
        kaihua = {}
        for rules, policies, b, s, turns in rows:
            med = _med(b["this"])
            if rules == "kaihua":
                kaihua[policies] = (med, turns)
            lo, hi = b["this"][0], b["this"][-1]
            span = f"[{lo:,.0f}, {hi:,.0f}]"
            line = f"{rules:<8} {policies:<28} {med:23,.0f} {span:>20} {turns:10.1f} {med * turns:11,.0f}"
            line += f" {s:17,.0f} {med / s:6.0f}x" if s == s else f" {'-':>17} {'-':>7}"
            if args.against:
                old = _med(b["old"])
                line += f" {old:12,.0f} {med / old:7.2f}x"
            print(line)
        for policies in ("random", "greedy"):
            j = [(_med(b["this"]), t) for r, p, b, _, t in rows if r == "jiating" and p == policies]
            if j and policies in kaihua:
                (jh, jt), (kh, kt) = j[0], kaihua[policies]
                print(f"Jiating / Kaihua, {policies}: {jh / kh:.2f}x per hand, {jh * jt / (kh * kt):.2f}x per turn "
                      "(goal >= 1.0x per turn: a Jiating turn has no chows and no joker)")
        print("the project's targets: Kaihua random >= 150,000 hands/s, greedy >= 20,000 hands/s per core")
    if args.cold:
        note("first run: caishen simulate --rules kaihua --games 100000 --workers 2 on empty caches (compiles "
             "every kernel: about a minute on a quiet 2-core machine, more under load; nothing more is printed "
             "until it ends) ...")
        secs, t_first, first = cold_run()
        print(f"first run (empty numba and table caches), caishen simulate --rules kaihua --games 100000 "
              f"--workers 2: {secs:,.0f} s wall (goal <= 60 s); its first line, after {t_first:.1f} s: {first}")


if __name__ == "__main__":
    main()
