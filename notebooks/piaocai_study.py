# %% [markdown]
# # Is 飘财 worth its risk? (Kaihua, K-9)
#
# A duplicate-deal study in the percent format (open it in Jupyter with
# jupytext, or run it with `python notebooks/piaocai_study.py --hands N`).
# Seats 0 and 2 play `always` (throw a surplus 财神 whenever the hand stays
# ready) and seats 1 and 3 play `never`; then the same walls (same seeds) are
# played again with the policies swapped, so every wall is seen from both
# sides and the luck of the deal cancels.  The answer is the mean score per
# seat-hand of each policy, with a 95% confidence interval over the paired
# differences (scipy).

# %%
from __future__ import annotations

import argparse

import numpy as np
from scipy import stats

from caishen.sim.selfplay.batch import play_batch


def study(hands: int = 20_000, seed: int = 1, options: dict | None = None) -> dict:
    """Mean points per seat-hand of ``always`` minus ``never`` on duplicate deals.

    Returns ``{"hands", "always", "never", "difference", "ci_low", "ci_high",
    "piao_rate_always", "piao_rate_never"}`` (points per seat-hand).
    """
    a = play_batch(hands, seed, options=options, policies="always,never,always,never")
    b = play_batch(hands, seed, options=options, policies="never,always,never,always")
    # per hand: points of the `always` seats minus the `never` seats, on the same wall
    always_pts = (a["score_0"] + a["score_2"] + b["score_1"] + b["score_3"]).astype(float) / 4
    never_pts = (a["score_1"] + a["score_3"] + b["score_0"] + b["score_2"]).astype(float) / 4
    diff = always_pts - never_pts
    ci = stats.ttest_1samp(diff, 0.0).confidence_interval(0.95)
    piao_always = np.mean([a["piao_0"] > 0, a["piao_2"] > 0, b["piao_1"] > 0, b["piao_3"] > 0])
    piao_never = np.mean([a["piao_1"] > 0, a["piao_3"] > 0, b["piao_0"] > 0, b["piao_2"] > 0])
    return {
        "hands": hands,
        "always": float(always_pts.mean()),
        "never": float(never_pts.mean()),
        "difference": float(diff.mean()),
        "ci_low": float(ci.low),
        "ci_high": float(ci.high),
        "piao_rate_always": float(piao_always),
        "piao_rate_never": float(piao_never),
    }


# %% [markdown]
# ## Run it: the default rules, then without the failed-飘 penalty (K-9.3 factor 1)

# %%
if __name__ == "__main__":
    ap = argparse.ArgumentParser(description="飘财 always vs never on duplicate deals")
    ap.add_argument("--hands", type=int, default=20_000)
    ap.add_argument("--seed", type=int, default=1)
    args = ap.parse_args()
    for label, options in (("default rules", None), ("failed_piao_factor=1", {"failed_piao_factor": 1})):
        r = study(args.hands, args.seed, options)
        print(
            f"{label:>22}: always {r['always']:+.3f}, never {r['never']:+.3f} points per seat-hand; "
            f"difference {r['difference']:+.3f} [95% CI {r['ci_low']:+.3f}, {r['ci_high']:+.3f}]; "
            f"飘 rate {r['piao_rate_always']:.3f} vs {r['piao_rate_never']:.3f} ({r['hands']:,} walls x 2)"
        )
