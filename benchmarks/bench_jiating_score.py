"""Jiating scoring throughput: the Python scorer against the numba kernels, in wins per second.

Side by side in one run, on one core, on the same recorded wins of greedy
(and random) self-play batches:

- ``python``: the tests' reference scorer (``tests/jiating_reference.py``,
  ``finish_records``: each win turned into a case and scored in Python, the
  path of the records before the kernels were wired);
- ``kernel batch``: :func:`caishen.sim.rules.jiating.batch.score_batch`, every win of the
  records in one numba call plus the ``patterns_s`` texts;
- ``kernel per call``: :func:`caishen.sim.rules.jiating.kernels.score_win` called
  from Python once per win (what ``caishen score`` would pay per line,
  argument checks included);

then greedy Jiating self-play in hands/s with the wins scored each way
(the engine's time from a timed ``_play_batch`` call, the records' time
from the reference or from :func:`caishen.sim.rules.jiating.records.finish_records`, the
package's path: the engine columns copied and ``score_batch``), and the
kernels' first-use time in a scratch numba cache (cold: compiled; warm:
loaded), in a fresh process each.

CPU time of this process (``time.process_time``) is used; each rate is the
median of ``--repeat`` runs with the slowest and fastest beside it.

    python benchmarks/bench_jiating_score.py [--hands 4000] [--repeat 5] [--no-compile]
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time

import numpy as np

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "tests"))
import jiating_reference as REF  # noqa: E402  (the tests' Python scorer)

from caishen.sim.bots.policies import new_work
from caishen.sim import engine as E
from caishen.sim.rules.jiating import batch as JB
from caishen.sim.rules.jiating import records as JR
from caishen.sim.selfplay import batch as selfplay
from caishen.sim.bots.registry import code_table
from caishen.sim.rules.jiating import kernels as JK
from caishen.sim.tiles import MELD_TYPE_NAMES


def play(policy: str, n: int, seed: int) -> tuple[object, np.ndarray, float]:
    """``(rules, records RECORD_DTYPE[n], CPU seconds of the numba call)`` of ``n`` Jiating hands."""
    name, r = E.load_rules("jiating", None)
    st = E.new_state()[0]
    rec = E.new_records(n)
    args = (seed, n, 16, code_table(policy), False, st, rec, new_work(), np.zeros((n, 4), np.int8), (name, r))
    t = time.process_time()
    hand, err = selfplay._play_batch(*args)
    dt = time.process_time() - t
    assert err == 0, (hand, err)
    return r, rec, dt


def n_wins(rec: np.ndarray) -> int:
    return int(rec["n_winners"].sum())


def timed(f, repeat: int) -> list[float]:
    out = []
    for _ in range(repeat):
        t = time.process_time()
        f()
        out.append(time.process_time() - t)
    return sorted(out)


def per_call_args(rec: np.ndarray) -> list[tuple]:
    """``score_win`` arguments of every recorded win (Python values, as a CLI line would give)."""
    names = {0: "self_draw", 1: "discard", 2: "robbed_kong"}
    decl = {v: k for k, v in JK.DECLARATION_CODES.items()}
    out = []
    for h in np.flatnonzero(rec["n_winners"] > 0):
        dealer = int(rec[h]["dealer"])
        streak = int(rec[h]["streak"])
        for j in range(int(rec[h]["n_winners"])):
            x = rec[h]["wins"][j]
            wt = names[int(x["type"])]
            melds = [(MELD_TYPE_NAMES[int(x["meld_type"][i])], int(x["meld_kind"][i]))
                     for i in range(int(x["n_melds"]))]
            out.append((x["hand"].astype(np.int64), int(x["tile"]), dict(
                melds=melds, win_type=wt, winner=int(x["seat"]), dealer=dealer,
                discarder=None if wt == "self_draw" else int(x["discarder"]), streak=streak,
                declaration=decl[int(x["decl"])],
                timing=JK.WinTiming(bool(x["first_turn"]), bool(x["replacement"]), bool(x["on_first"]),
                                    bool(x["dealer_ready"])),
                visible=int(x["visible"]))))
    return out


def fmt(rates: list[float]) -> str:
    return f"{statistics.median(rates):>12,.0f}   ({min(rates):,.0f} .. {max(rates):,.0f})"


COMPILE_SCRIPT = r"""
import time, numpy as np
t = time.process_time()
from caishen.sim.rules.jiating import kernels as JK
t_import = time.process_time() - t
t = time.process_time()
JK.score_win(np.array([1]*9 + [0]*18 + [3, 1] + [0]*5, np.int64), 28, win_type="self_draw", winner=1, dealer=0)
t_call = time.process_time() - t
from caishen.sim import engine as E
from caishen.sim.rules.jiating import batch as JB
t = time.process_time()
JB.score_batch(None, E.new_records(1))
t_batch = time.process_time() - t
print(t_import, t_call, t_batch)
"""


def first_use_times(cache_dir: str) -> list[float]:
    """CPU seconds of (import of the kernels, first score_win, first score_batch) in a fresh process."""
    env = dict(os.environ, NUMBA_CACHE_DIR=cache_dir)
    out = subprocess.run([sys.executable, "-c", COMPILE_SCRIPT], env=env, capture_output=True, text=True,
                         check=True)
    return [float(v) for v in out.stdout.split()]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--hands", type=int, default=4_000, help="hands per self-play batch (default 4000)")
    ap.add_argument("--repeat", type=int, default=5, help="runs per rate; the median is shown (default 5)")
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--no-compile", action="store_true", help="skip the cold / warm first-use timing")
    a = ap.parse_args()

    # warm-up: compile or load everything once
    r, rec, _ = play("greedy", 50, a.seed)
    JB.score_batch(r, rec)
    JR.finish_records(r, rec)
    REF.finish_records(r, rec)

    print(f"Jiating scoring, wins/s (median of {a.repeat}, slowest .. fastest), one core, CPU time")
    for policy in ("greedy", "random"):
        r, rec, t_play = play(policy, a.hands, a.seed)
        w = n_wins(rec)
        print(f"\n{policy} bots: {a.hands:,} hands, {w:,} wins")
        if w == 0:
            continue
        py = [w / t for t in timed(lambda: REF.finish_records(r, rec), max(1, a.repeat // 2))]
        kb = [w / t for t in timed(lambda: JB.score_batch(r, rec), a.repeat)]
        calls = per_call_args(rec)

        def per_call():
            for hand, wk, kw in calls:
                JK.score_win(hand, wk, rules=r, **kw)

        kc = [w / t for t in timed(per_call, max(1, a.repeat // 2))]
        print(f"  {'python (reference)':28s}{fmt(py)}")
        print(f"  {'kernel batch (score_batch)':28s}{fmt(kb)}   x{statistics.median(kb) / statistics.median(py):,.0f}")
        print(f"  {'kernel per call (score_win)':28s}{fmt(kc)}   x{statistics.median(kc) / statistics.median(py):,.1f}")
        if policy == "greedy":
            t_records = statistics.median(timed(lambda: JR.finish_records(r, rec), a.repeat))
            t_py = w / statistics.median(py)
            plays = [play(policy, a.hands, a.seed + 1 + i)[2] for i in range(a.repeat)]
            t_play = statistics.median(plays)
            hp = a.hands / (t_play + t_py)
            hk = a.hands / (t_play + t_records)
            print(f"  self-play hands/s: engine alone {a.hands / t_play:,.0f}; with Python scoring {hp:,.0f};"
                  f" with the package's records (kernel batch) {hk:,.0f} (x{hk / hp:.1f})")

    if not a.no_compile:
        with tempfile.TemporaryDirectory(prefix="numba-cache-") as d:
            cold = first_use_times(d)
            warm = first_use_times(d)
        print("\nfirst use in a fresh process, CPU s: import (eager kernels) / first score_win / first score_batch")
        print(f"  cold (scratch numba cache): {cold[0]:.1f} / {cold[1]:.1f} / {cold[2]:.1f}  total {sum(cold):.1f}")
        print(f"  warm (cache filled):        {warm[0]:.1f} / {warm[1]:.1f} / {warm[2]:.1f}  total {sum(warm):.1f}")


if __name__ == "__main__":
    main()
