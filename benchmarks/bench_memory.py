"""Memory of ``caishen simulate``: peak RSS per process against the number of hands, and bytes per hand in flight.

Runs the README's main job (``caishen simulate --rules R --policy P
--workers W``) for each ``--games`` and ``--chunk-size`` given, in a scratch
directory, and samples the resident set size (``VmRSS`` of ``/proc/PID/status``,
Linux) of the parent and of each worker process every ``--interval``
seconds.  Printed per run: hands, chunk size, seconds, the parent's and
the largest worker's peak RSS and the peak of their sum (MB).  A flat
peak across ``--games`` shows the run does not hold its hands in memory (issue
11 / 15: the rows go to Parquet chunk by chunk); the slope of the worker's
peak against ``--chunk-size`` is the memory per hand in flight (the
self-play record, its columns and the Parquet table of one chunk), printed
as bytes per hand.  The kernels are compiled (or loaded) once before the
first timed run.  Usage::

    python benchmarks/bench_memory.py                                   # 10^5 and 10^6 hands, chunks 10^4 and 10^5
    python benchmarks/bench_memory.py --games 1000000 10000000 --chunk-size 10000
"""

from __future__ import annotations

import argparse
import os
import shutil
import subprocess
import sys
import tempfile
import time


def _rss_kb(pid: int) -> int:
    try:
        with open(f"/proc/{pid}/status") as fh:
            for line in fh:
                if line.startswith("VmRSS:"):
                    return int(line.split()[1])
    except OSError:
        pass
    return 0


def _children(pid: int) -> list[int]:
    try:
        with open(f"/proc/{pid}/task/{pid}/children") as fh:
            return [int(x) for x in fh.read().split()]
    except OSError:
        return []


def measure(cmd: list[str], interval: float) -> tuple[float, int, int, int]:
    """Run ``cmd``; ``(seconds, parent peak kB, largest child-tree process peak kB, peak of the sum kB)``."""
    t = time.perf_counter()
    proc = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    parent = child = total = 0
    while proc.poll() is None:
        p = _rss_kb(proc.pid)
        kids, stack = [], _children(proc.pid)
        while stack:
            k = stack.pop()
            kids.append(_rss_kb(k))
            stack.extend(_children(k))
        parent = max(parent, p)
        child = max([child] + kids)
        total = max(total, p + sum(kids))
        time.sleep(interval)
    took = time.perf_counter() - t
    if proc.returncode != 0:
        sys.exit(f"bench_memory: {' '.join(cmd)} failed ({proc.returncode}): {proc.stderr.read().decode()[-2000:]}")
    return took, parent, child, total


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--rules", default="kaihua")
    ap.add_argument("--policy", default="greedy")
    ap.add_argument("--games", type=int, nargs="+", default=[100_000, 1_000_000])
    ap.add_argument("--chunk-size", type=int, nargs="+", default=[10_000, 100_000])
    ap.add_argument("--workers", type=int, default=2)
    ap.add_argument("--interval", type=float, default=0.1, help="seconds between RSS samples")
    args = ap.parse_args()
    work = tempfile.mkdtemp(prefix="caishen-mem-")
    exe = [sys.executable, "-m", "caishen"]
    try:
        subprocess.run(exe + ["simulate", "--rules", args.rules, "--policy", args.policy, "--games", "32",
                              "--workers", "1", "--no-progress", "--out", os.path.join(work, "warm")],
                       check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        print(f"{args.rules} {args.policy}, {args.workers} workers; peak RSS in MB")
        print(f"{'hands':>11} {'chunk':>7} {'seconds':>8} {'parent':>7} {'worker':>7} {'sum':>7}")
        by_chunk: dict[int, list[int]] = {}
        for chunk in args.chunk_size:
            for games in args.games:
                out = os.path.join(work, f"r{games}-{chunk}")
                cmd = exe + ["simulate", "--rules", args.rules, "--policy", args.policy, "--games", str(games),
                             "--chunk-size", str(chunk), "--workers", str(args.workers), "--no-progress",
                             "--out", out]
                took, parent, child, total = measure(cmd, args.interval)
                print(f"{games:>11,} {chunk:>7,} {took:8.1f} {parent / 1024:7.0f} {child / 1024:7.0f} "
                      f"{total / 1024:7.0f}", flush=True)
                by_chunk.setdefault(chunk, []).append(child or parent)  # --workers 1 plays in the parent
                shutil.rmtree(out, ignore_errors=True)
        sizes = sorted(by_chunk)
        if len(sizes) >= 2:
            lo, hi = sizes[0], sizes[-1]
            slope = (max(by_chunk[hi]) - max(by_chunk[lo])) * 1024 / (hi - lo)
            print(f"memory per hand in flight (worker peak, chunk {lo:,} -> {hi:,}): {slope:,.0f} bytes")
    finally:
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
