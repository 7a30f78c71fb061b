# %% [markdown]
# # Which 飘 policy under which failed-飘 penalty? An option sweep on duplicate deals
#
# A jupytext percent script (`python notebooks/option_sweep.py`), the same as
#
#     caishen sweep --rules kaihua --option failed_piao_factor=1,2,3 \
#         --policy threshold:0,threshold:20,threshold:40,never --walls 50000 --out runs/s1
#
# Each policy is one seat's (the *hero*, at every seat in turn); the other
# three play greedy; every grid point plays the same 50,000 walls, each its
# own one-hand match, so the differences are paired wall by wall
# (`caishen.sim.analysis.study`).  Intervals: 95% over walls.

# %%
from __future__ import annotations

import argparse
import time
from pathlib import Path


from caishen.sim.analysis import study

POLICIES = "threshold:0,threshold:20,threshold:40,never"


def sweep_study(out, walls: int = 50_000, seed: int = 0, factors: str = "1,2,3", policies: str = POLICIES,
                workers: int | None = None, progress: bool = True) -> dict:
    """The sweep (resumable in ``out``) and its time; ``{"table", "seconds"}``."""
    t0 = time.perf_counter()
    table = study.sweep("kaihua", out, options=[f"failed_piao_factor={factors}"], policies=policies, walls=walls,
                        seed=seed, baseline="policy=never", workers=workers, progress=progress)
    return {"table": table, "seconds": time.perf_counter() - t0}


def answer(r: dict) -> str:
    t = r["table"]
    s = t[(t["metric"] == "score") & (t["policy"] != "never")]
    parts = []
    for f, g in s.groupby("failed_piao_factor", sort=True):
        best = g.sort_values("diff").iloc[-1]
        parts.append(f"factor {f}: best {best['policy']} {best['diff']:+.3f} points/hand vs never "
                     f"[{best['diff_low']:+.3f}, {best['diff_high']:+.3f}]")
    return "; ".join(parts)


# %% [markdown]
# ## Run it

# %%
if __name__ == "__main__":
    ap = argparse.ArgumentParser(description="failed_piao_factor x 飘 policy on duplicate deals")
    ap.add_argument("--out", default="runs/option_sweep")
    ap.add_argument("--walls", type=int, default=50_000)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--workers", type=int, default=None)
    args = ap.parse_args()
    r = sweep_study(Path(args.out), args.walls, args.seed, workers=args.workers)
    print(study.format_table(r["table"], metrics=("score", "piao", "failed_piao", "win")))
    print(f"\n({r['seconds']:.0f} s) " + answer(r))
