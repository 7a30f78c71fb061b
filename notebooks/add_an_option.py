# %% [markdown]
# # Adding a rule option and sweeping it: a failed 飘 that costs fixed points
#
# A jupytext percent script (`python notebooks/add_an_option.py --walls 20000`).
# The question: the seed doubles a failed 飘 player's share (K-9.3,
# `failed_piao_factor`); what if a failed 飘 cost a *fixed* number of points
# instead -- at what cost does 飘 stop paying?  No such rule exists, so we add
# one.  An option is one declaration plus the line of kernel code that reads
# it; everything else (`--option`, validation, `caishen rules --options`,
# `run.json`, sweeps, the docs table) follows from the declaration.
#
# **1. Declare it** in the rule set's options (`sim/rules/kaihua/options.py`):
# a kernel slot and one `option(...)` field of `KaihuaRules`:
#
#     P_FAILED_PIAO_POINTS = 12          # the params slot; N_PARAMS = 13
#
#     failed_piao_points: int | None = option(
#         None, "a study variant, not the seed's: a failed 飘 player pays the winner this many "
#         "points instead of failed_piao_factor's extra shares; None = the shares",
#         rule="K-9.3", lo=0, hi=1_000_000, slot=P_FAILED_PIAO_POINTS)
#
# `KaihuaRules.params()` now carries it to every kernel as `int64[N_PARAMS]`
# (None is -1): rule tables travel as kernel arguments, never as globals.
#
# **2. Read it** where the rule is applied, `_payments` in
# `sim/rules/kaihua/kernels.py` (K-8, K-9.3):
#
#     fixed = params[P_FAILED_PIAO_POINTS]  # -1: the shares
#     ...
#     if piao_circle[p]:  # K-9.3 failed 飘
#         extra = fixed if fixed >= 0 else extra_factor * share
#
# **3. Test and document it**: the slow reference `ref_payments` of
# `tests/test_kaihua_scoring.py` learns the variant, hypothesis compares it
# with the kernel on random wins, a test named after the rule ID
# (`test_K_9_3_variant_failed_piao_points_replace_the_extra_shares`) pins
# hand-checked payments, and `docs/rules/kaihua.md`'s options table is
# regenerated from the declarations (`caishen.sim.rules.options.options_table`;
# `tests/test_rule_docs.py` fails until it is).  The default is None, so no
# golden run moves.
#
# **4. Sweep it** on duplicate deals: the hero plays `always` (throw a surplus
# 财神 whenever the hand stays ready) or `never`, the other three greedy, every
# cost on the same walls; the difference `always - never` at each cost is the
# value of 飘 to the hero under that rule, with a paired 95% CI over walls:
#
#     caishen sweep --rules kaihua --option failed_piao_points=None,16,64,256 \
#         --policy always,never --walls 20000 --seed 51 --out runs/add_an_option

# %%
from __future__ import annotations

import argparse
import time
from pathlib import Path

import pandas as pd

from caishen.sim.analysis import study
from caishen.sim.selfplay.runner import Execution

#: the costs swept (None: the specification's doubling, K-9.3)
COSTS = "None,16,64,256"


def option_study(out, walls: int = 20_000, seed: int = 51, costs: str = COSTS, workers: int | None = None,
                 progress: bool = True) -> dict:
    """The sweep (resumable in ``out``); ``{"table", "value", "seconds"}``: the sweep's tidy table and, per
    cost, the hero's points per hand with ``always`` minus with ``never`` (paired 95% CI over walls)."""
    t0 = time.perf_counter()
    table = study.sweep("kaihua", out, options=[f"failed_piao_points={costs}"], policies="always,never",
                        walls=walls, seed=seed, baseline="policy=never",
                        execution=Execution(workers, progress=progress))
    s = table[(table["metric"] == "score") & (table["policy"] == "always")]
    value = pd.DataFrame({"cost": s["failed_piao_points"].astype(str), "diff": s["diff"],
                          "diff_low": s["diff_low"], "diff_high": s["diff_high"]}).reset_index(drop=True)
    return {"table": table, "value": value, "seconds": time.perf_counter() - t0}


def answer(r: dict) -> str:
    """The value of 飘 at each cost, in words."""
    parts = []
    for row in r["value"].itertuples():
        what = "the spec's doubling" if row.cost == "None" else f"a fixed {row.cost} points"
        parts.append(f"{what}: {row.diff:+.3f} [{row.diff_low:+.3f}, {row.diff_high:+.3f}]")
    return "飘 (always minus never, points per hand to the hero) under " + "; ".join(parts)


# %% [markdown]
# ## Run it

# %%
if __name__ == "__main__":
    from caishen.sim.termtext import wrap

    ap = argparse.ArgumentParser(description="a failed 飘 at a fixed cost, swept on duplicate deals")
    ap.add_argument("--out", default="runs/add_an_option")
    ap.add_argument("--walls", type=int, default=20_000)
    ap.add_argument("--seed", type=int, default=51)
    ap.add_argument("--costs", default=COSTS)
    ap.add_argument("--workers", type=int, default=None)
    args = ap.parse_args()
    r = option_study(Path(args.out), args.walls, args.seed, args.costs, workers=args.workers)
    print(study.format_table(r["table"], metrics=("score", "piao", "failed_piao", "win")))
    print("\n" + "\n".join(wrap(f"({r['seconds']:.0f} s) " + answer(r))))  # within 100 columns
