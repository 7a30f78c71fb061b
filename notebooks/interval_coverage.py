# %% [markdown]
# # Do the intervals cover? Replicate checks of every interval method (issue 47 item 4)
#
# A jupytext percent script (`python notebooks/interval_coverage.py`).  Each
# scenario of `caishen.sim.analysis.coverage` draws independent replicate data
# sets with a known truth (clustered means, rates, shares of points, paired
# and weighted means, two policies that differ on 0.3% of 1,000 walls, the
# Bonferroni matrix, the sd interval `caishen power` plans on), and the
# engine check plays independent tiny Jiating runs whose truth is exact by
# symmetry.  The suite runs the same checks at a few seconds' size
# (`tests/test_interval_coverage.py`); this script runs them large and its
# numbers are in `docs/studies.md`.

# %%
from __future__ import annotations

import argparse
import time

import pandas as pd

from caishen.sim.analysis import coverage


def coverage_study(reps: int = 10_000, engine_reps: int = 400, engine_hands: int = 320, near_reps: int = 300,
                   near_walls: int = 1000, seed: int = 47) -> dict:
    """Every scenario at ``reps`` replicates, the engine check at ``engine_reps`` runs of ``engine_hands``, and
    ``near_reps`` replicate sweeps of two near-identical policies (``piao_table`` and ``always`` at one seat,
    greedy at the others) on ``near_walls`` walls each."""
    t0 = time.perf_counter()
    rows = [coverage.coverage(s, reps if s != "pairwise" else reps // 4, seed) for s in coverage.SCENARIOS]
    eng = coverage.engine_coverage("jiating", engine_reps, engine_hands, seed=seed)  # J-2.2 draws the first dealer
    near = coverage.engine_near_identical(near_reps, near_walls, rules="kaihua", seed=seed) if near_reps else None
    return {"table": pd.DataFrame(rows), "engine": eng, "near": near, "seconds": time.perf_counter() - t0}


# %%
if __name__ == "__main__":
    ap = argparse.ArgumentParser(description="replicate coverage of every interval method")
    ap.add_argument("--reps", type=int, default=10_000)
    ap.add_argument("--engine-reps", type=int, default=400)
    ap.add_argument("--engine-hands", type=int, default=320)
    ap.add_argument("--near-reps", type=int, default=300)
    ap.add_argument("--near-walls", type=int, default=1000)
    ap.add_argument("--seed", type=int, default=47)
    a = ap.parse_args()
    r = coverage_study(a.reps, a.engine_reps, a.engine_hands, a.near_reps, a.near_walls, a.seed)
    pd.set_option("display.width", 160)
    print(r["table"].round(4).to_string(index=False, line_width=100))
    print(r["engine"].round(4).to_string(index=False, line_width=100))
    if r["near"] is not None:
        print(r["near"].round(4).to_string(index=False, line_width=100))
    print(f"({r['seconds']:.0f} s)")
