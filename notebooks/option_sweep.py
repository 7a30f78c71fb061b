# %% [markdown]
# # Which 飘 policy under which failed-飘 penalty? An option sweep on duplicate deals
#
# A jupytext percent script (`python notebooks/option_sweep.py`), the same as
#
#     caishen sweep --rules kaihua --option failed_piao_factor=1,2,3 \
#         --policy never,threshold:20,threshold:40,always,piao_table --walls 50000 --out runs/s1
#
# (the first form of this study had only `threshold:0,20,40` and `never` on its policy axis, and so said
# "threshold:40 is best at every factor"; with `always` and `piao_table` on the axis that no longer holds at
# factor 2: `within_factor` compares every pair of policies at each factor, Bonferroni-adjusted).
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
from caishen.sim.selfplay.runner import Execution

POLICIES = "never,threshold:20,threshold:40,always,piao_table"


def sweep_study(out, walls: int = 50_000, seed: int = 0, factors: str = "1,2,3", policies: str = POLICIES,
                workers: int | None = None, progress: bool = True) -> dict:
    """The sweep (resumable in ``out``) and its time; ``{"table", "seconds"}``."""
    t0 = time.perf_counter()
    table = study.sweep("kaihua", out, options=[f"failed_piao_factor={factors}"], policies=policies, walls=walls,
                        seed=seed, baseline="policy=never",
                        execution=Execution(workers, progress=progress))
    return {"table": table, "seconds": time.perf_counter() - t0}


def within_factor(out, confidence: float = 0.95):
    """Every pair of hero policies at each factor, on the same walls (the per-wall points of the sweep in
    ``out``): :func:`caishen.sim.analysis.piao_answer.pairwise`, Bonferroni over the pairs of one factor; a
    DataFrame with a first column ``failed_piao_factor``."""
    import pandas as pd

    from caishen.sim.analysis.piao_answer import pairwise
    from caishen.sim.analysis.power import _sweep_wall_values

    doc = study.read_sweep_json(out)
    vals = _sweep_wall_values(Path(out), doc, "score")
    out_rows = []
    for f in doc["grid"]["axes"]["failed_piao_factor"]:
        v = {p: vals[f"failed_piao_factor={f} policy={p}"] for p in doc["grid"]["axes"]["policy"]}
        t = pairwise(v, confidence)
        t.insert(0, "failed_piao_factor", str(f))
        out_rows.append(t)
    return pd.concat(out_rows, ignore_index=True)


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
    from caishen.sim.termtext import wrap

    ap = argparse.ArgumentParser(description="failed_piao_factor x 飘 policy on duplicate deals")
    ap.add_argument("--out", default="runs/option_sweep")
    ap.add_argument("--walls", type=int, default=50_000)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--workers", type=int, default=None)
    args = ap.parse_args()
    r = sweep_study(Path(args.out), args.walls, args.seed, workers=args.workers)
    print(study.format_table(r["table"], metrics=("score", "piao", "failed_piao", "win")))
    print("\n" + "\n".join(wrap(f"({r['seconds']:.0f} s) " + answer(r))))  # within 100 columns
    w = within_factor(Path(args.out))
    print(w[["failed_piao_factor", "a", "b", "walls_differ", "diff", "ci_low", "ci_high", "p_holm"]].round(4)
          .to_string(index=False, line_width=100))
