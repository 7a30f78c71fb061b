"""Where self-play spends its time: a per-kernel CPU profile and a per-kernel compile profile.

Two profiles of ``caishen.sim.selfplay.batch.play_batch`` (issue 11: "each goal is
met or the closing note says what limits it with a profile that shows it"):

- **run time** (default): the batch is played under Linux ``perf record``
  (sampling, ``--freq`` Hz) and the samples are attributed to the numba
  kernels.  numba's JIT code has no symbols ``perf`` can see, so this script
  compiles the kernels in a scratch ``NUMBA_CACHE_DIR`` (JIT, not loaded
  from a cache), asks the compiled library for the address of every function
  it defines and writes them to ``/tmp/perf-PID.map`` (the JIT symbol map
  ``perf`` reads).  A kernel inlined into its caller (``inline="always"``,
  or by LLVM) counts as its caller.  Printed: self time per kernel
  (qualified name; specializations summed), the rest (interpreter, numba
  runtime, libc) per symbol, and the hands/s of the profiled batch (CPU
  time, slowed a little by the sampling).
- **compile time** (``--compile``): numba's ``numba:compile`` events of the
  first call in a scratch cache, as exclusive seconds per dispatcher (a
  caller's own type inference, lowering and LLVM optimization, its callees'
  compiles subtracted, wall time), the largest first; the first call's CPU
  time beside its wall time (load on the machine inflates the wall time).

Needs ``perf`` (``linux-tools``) and ``kernel.perf_event_paranoid`` <= 2 for
the run-time profile; the compile profile needs neither.  Usage::

    python benchmarks/profile_selfplay.py --rules kaihua --policies greedy --hands 20000
    python benchmarks/profile_selfplay.py --rules jiating --policies random --hands 100000
    python benchmarks/profile_selfplay.py --compile --rules kaihua --policies greedy

Each run compiles every kernel it plays (a scratch cache; minutes).
"""

from __future__ import annotations

import argparse
import collections
import os
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import time


def qualified(symbol: str) -> str:
    """``caishen.sim.hand.kernels._shanten`` from numba's mangled ``_ZN7caishen3sim4hand7kernels8_shantenB3v46B40...E...``."""
    if not symbol.startswith("_ZN"):
        return symbol
    parts, i = [], 3
    while i < len(symbol) and symbol[i].isdigit():
        m = re.match(r"\d+", symbol[i:])
        n = int(m.group())
        i += len(m.group())
        parts.append(symbol[i:i + n])
        i += n
    return ".".join(parts) if parts else symbol


def write_perf_map(dispatchers) -> int:
    """Write ``/tmp/perf-PID.map`` for every function the dispatchers' compiled libraries define; how many."""
    funcs = set()
    for disp in dispatchers:
        for cres in disp.overloads.values():
            lib = cres.library
            for f in lib._final_module.functions:
                if f.is_declaration:
                    continue
                addr = lib.get_pointer_to_function(f.name)
                if addr:
                    funcs.add((addr, f.name))
    funcs = sorted(funcs)
    with open(f"/tmp/perf-{os.getpid()}.map", "w") as fh:
        for k, (addr, name) in enumerate(funcs):
            end = funcs[k + 1][0] if k + 1 < len(funcs) else addr + (1 << 16)
            fh.write(f"{addr:x} {min(end - addr, 1 << 20):x} {name}\n")
    return len(funcs)


def runtime_profile(args) -> None:
    from caishen.sim.selfplay import batch as selfplay

    if shutil.which("perf") is None:
        sys.exit("profile_selfplay: perf is not installed (linux-tools); --compile works without it")
    t = time.perf_counter()
    selfplay.play_batch(16, 1, rules=args.rules, policies=args.policies, check=args.check)
    print(f"compiled in {time.perf_counter() - t:.0f} s (scratch cache)")
    n = write_perf_map([selfplay._play_batch_walls])
    data = os.path.join(args.work, "perf.data")
    rec = subprocess.Popen(["perf", "record", "-F", str(args.freq), "-p", str(os.getpid()), "-o", data],
                           stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    time.sleep(1.0)
    if rec.poll() is not None:
        sys.exit(f"profile_selfplay: perf record failed: {rec.stderr.read().decode().strip()}")
    t = time.process_time()
    selfplay.play_batch(args.hands, 2, rules=args.rules, policies=args.policies, check=args.check)
    dt = time.process_time() - t
    rec.send_signal(signal.SIGINT)
    rec.wait()
    out = subprocess.run(["perf", "report", "-i", data, "--no-children", "--sort", "sym", "--stdio",
                          "--percent-limit", "0"], capture_output=True, text=True).stdout
    self_pct: dict[str, float] = collections.defaultdict(float)
    spec: dict[str, int] = collections.defaultdict(int)
    for line in out.splitlines():
        m = re.match(r"\s*([\d.]+)%\s+\[[.k]\]\s+(\S+)", line)
        if m:
            name = qualified(m.group(2))
            self_pct[name] += float(m.group(1))
            spec[name] += 1
    samples = re.search(r"# Samples: (\S+)", out)
    print(f"{args.rules} {args.policies}{' check=True' if args.check else ''}: {args.hands} hands, "
          f"{args.hands / dt:,.0f} hands/s (CPU time, under sampling); {n} kernel functions mapped; "
          f"{samples.group(1) if samples else '?'} samples at {args.freq} Hz")
    print(f"{'self %':>7}  {'kernel (specializations)':<70}")
    shown = 0.0
    for name, pct in sorted(self_pct.items(), key=lambda kv: -kv[1])[:args.top]:
        label = name + (f" ({spec[name]})" if spec[name] > 1 else "")
        print(f"{pct:7.2f}  {label:<70}")
        shown += pct
    print(f"{100 - shown:7.2f}  (the rest)")


def compile_profile(args) -> None:
    from numba.core import event

    from caishen.sim.selfplay import batch as selfplay

    with event.install_recorder("numba:compile") as rec:
        t, c = time.perf_counter(), time.process_time()
        selfplay.play_batch(16, 1, rules=args.rules, policies=args.policies, check=args.check)
        total, cpu = time.perf_counter() - t, time.process_time() - c
    own: dict[str, float] = collections.defaultdict(float)
    count: dict[str, int] = collections.defaultdict(int)
    stack: list[list] = []  # [name, start, children's seconds]
    for ts, ev in rec.buffer:
        disp = ev.data["dispatcher"]
        name = f"{disp.py_func.__module__}.{disp.py_func.__qualname__}"
        if ev.status == event.EventStatus.START:
            stack.append([name, ts, 0.0])
        else:
            name0, start, children = stack.pop()
            took = ts - start
            own[name0] += took - children
            count[name0] += 1
            if stack:
                stack[-1][2] += took
    print(f"{args.rules} {args.policies}: first call {total:.1f} s wall, {cpu:.1f} s CPU in a scratch cache; "
          f"{sum(count.values())} compiles of {len(count)} dispatchers, {sum(own.values()):.1f} s in all")
    print(f"{'own s':>7} {'share':>6}  dispatcher (compiles)")
    for name, s in sorted(own.items(), key=lambda kv: -kv[1])[:args.top]:
        print(f"{s:7.1f} {s / total:6.1%}  {name} ({count[name]})")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--rules", default="kaihua")
    ap.add_argument("--policies", default="greedy")
    ap.add_argument("--hands", type=int, default=20000)
    ap.add_argument("--check", action="store_true", help="with the invariant checker on every step (the soak)")
    ap.add_argument("--freq", type=int, default=999, help="perf sampling frequency (Hz)")
    ap.add_argument("--top", type=int, default=15)
    ap.add_argument("--compile", action="store_true", help="the compile profile instead of the run time one")
    args = ap.parse_args()
    args.work = tempfile.mkdtemp(prefix="caishen-prof-")
    os.environ["NUMBA_CACHE_DIR"] = os.path.join(args.work, "numba")  # before numba is imported: JIT code
    try:
        (compile_profile if args.compile else runtime_profile)(args)
    finally:
        shutil.rmtree(args.work, ignore_errors=True)
        if os.path.exists(f"/tmp/perf-{os.getpid()}.map"):
            os.remove(f"/tmp/perf-{os.getpid()}.map")


if __name__ == "__main__":
    main()
