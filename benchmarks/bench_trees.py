"""Before / after a change: two checkouts timed in one run, interleaved, each in a process of its own.

Each tree gets a worker process that imports ``caishen`` *and its subpackages* from that tree and
files its numba kernels in a cache folder named by a digest of that tree's sources.  Both matter:
with only ``PYTHONPATH`` set to the other tree, ``caishen.sim`` / ``caishen.envs`` still come from
this checkout's editable install (its finder maps them), and the kernel cache is shared, so an
unchanged caller loaded from it carries whichever tree's callees were compiled last -- a
comparison of a tree with itself (seen: "1.00x" for a change that gives 1.13x).

Workloads (``--what``): ``env``, the learner against three greedy bots (the batched row of
``bench_envs.py --versus-only``: learner decisions/s, n=1024, issue 48); ``greedy``, greedy
self-play (``play_batch``, hands/s).  Rounds alternate which tree goes first; printed: each tree's
median and the per-round new/old ratio's median and range, with the load.

    python benchmarks/bench_trees.py OLD_TREE [--what env,greedy] [--rules kaihua,jiating] [--rounds 8]

``OLD_TREE``: a folder with another checkout (``git worktree add --detach /tmp/old integ``); the
"new" tree is this checkout.  The first round of each worker compiles its kernels (minutes).
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys

#: the start of a worker's code: ``caishen`` and its subpackages from the tree in ``$TREE`` (a checkout, or a
#: folder holding a laid-out ``caishen`` package), its numba kernels in a cache folder under ``$CACHE_BASE``
#: named by a digest of that tree's sources (:func:`tree_env` sets both); ``bench_games.py --against`` uses it too
TREE_IMPORT = r"""
import hashlib, os, pathlib, sys, time
tree = os.environ["TREE"]
h = hashlib.sha1()
for name in ("caishen", "sim", "envs", "agents"):
    for p in sorted(pathlib.Path(tree, name).rglob("*.py")):
        h.update(str(p.relative_to(tree)).encode())
        h.update(p.read_bytes())
os.environ["NUMBA_CACHE_DIR"] = os.path.join(os.environ["CACHE_BASE"], "numba-tree-" + h.hexdigest()[:16])
sys.path.insert(0, tree)
import caishen
caishen.__path__[:] = [os.path.join(tree, "caishen"), tree]  # caishen.sim, .envs, .agents from this tree
import caishen.sim.effective
assert caishen.sim.effective.__file__.startswith(tree), caishen.sim.effective.__file__
"""
#: the worker: :data:`TREE_IMPORT`, then timings on request
_WORKER = TREE_IMPORT + r"""
sys.path.insert(0, os.path.join(tree, "benchmarks"))
what, rules = sys.argv[1], sys.argv[2]
if what == "greedy":
    from caishen.sim.selfplay.batch import play_batch
    play_batch(200, 1, rules=rules, policies="greedy")
    seed = 2
else:
    from bench_envs import batched_rate
    batched_rate(1024, 0.5, rules, mode="versus")
for line in sys.stdin:
    secs = float(line)
    if what == "greedy":
        hands, dt = 0, 0.0
        while dt < secs:
            t = time.process_time()
            play_batch(2000, seed, rules=rules, policies="greedy")
            dt += time.process_time() - t
            hands += 2000
            seed += 1
        print(hands / dt, flush=True)
    else:
        print(batched_rate(1024, secs, rules, mode="versus")[0], flush=True)
"""


def tree_env(tree: str) -> dict:
    """The environment of a worker that starts with :data:`TREE_IMPORT` for ``tree``."""
    from platformdirs import user_cache_dir

    env = dict(os.environ, TREE=os.path.abspath(tree), CACHE_BASE=user_cache_dir("caishen"))
    env.pop("PYTHONPATH", None)
    env.pop("NUMBA_CACHE_DIR", None)
    return env


def compare(old: str, new: str, what: str, rules: str, rounds: int, secs: float) -> str:
    """One line: both trees' medians and the per-round new/old ratio, ``rounds`` alternating rounds."""
    workers = {}
    for name, tree in (("old", old), ("new", new)):
        workers[name] = subprocess.Popen([sys.executable, "-c", _WORKER, what, rules], stdin=subprocess.PIPE,
                                         stdout=subprocess.PIPE, text=True, env=tree_env(tree), cwd=tree)
    res: dict[str, list[float]] = {"old": [], "new": []}
    try:
        for r in range(rounds):
            for name in ("old", "new") if r % 2 == 0 else ("new", "old"):
                w = workers[name]
                w.stdin.write(f"{secs}\n")
                w.stdin.flush()
                line = w.stdout.readline()
                if not line:
                    raise SystemExit(f"bench_trees: the {name} tree's worker died ({what}, {rules})")
                res[name].append(float(line))
    finally:
        for w in workers.values():
            w.stdin.close()
            w.wait()
    ratios = [n / o for n, o in zip(res["new"], res["old"])]
    unit = "hands/s" if what == "greedy" else "learner decisions/s"
    load = os.getloadavg()[0]
    return (f"{what:<6} {rules:<8} old {statistics.median(res['old']):>9,.0f}  new {statistics.median(res['new']):>9,.0f}"
            f" {unit}; new/old {statistics.median(ratios):.3f} [{min(ratios):.3f}, {max(ratios):.3f}]"
            f" ({rounds} rounds x {secs} s, load {load:.2f})")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("old", metavar="OLD_TREE", help="a folder with the other checkout")
    ap.add_argument("--what", default="env,greedy", help="env (learner vs greedy bots), greedy (self-play)")
    ap.add_argument("--rules", default="kaihua,jiating")
    ap.add_argument("--rounds", type=int, default=8)
    ap.add_argument("--seconds", type=float, default=1.5, help="CPU seconds per tree per round")
    args = ap.parse_args()
    new = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    old = os.path.abspath(args.old)
    if not os.path.isfile(os.path.join(old, "sim", "effective.py")):
        ap.error(f"OLD_TREE {args.old!r}: no sim/effective.py in it (not a caishen checkout)")
    whats = args.what.split(",")
    if any(w not in ("env", "greedy") for w in whats) or args.rounds < 1 or args.seconds <= 0:
        ap.error(f"--what takes env and greedy, --rounds >= 1, --seconds > 0; got {args.what!r}, {args.rounds}, "
                 f"{args.seconds}")
    for what in whats:
        for rules in args.rules.split(","):
            print(compare(old, new, what, rules, args.rounds, args.seconds), flush=True)


if __name__ == "__main__":
    main()
