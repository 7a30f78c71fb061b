# %% [markdown]
# # When is 飘财 worth its risk? The decision answered where it is made (Kaihua, K-9)
#
# A jupytext percent script (open it in Jupyter with jupytext, or run it:
# `python notebooks/piao_decision.py`).  At every 飘 chance of a self-play
# hand -- the seat holds a 财神, cannot win now, may throw the 财神 and stays
# ready without it -- the state is cloned and played on both ways, 飘 and
# keep, `R` times each, with the same fresh order of the unseen wall for both
# branches (`caishen.sim.analysis.piao_study`).  The difference of the deciding seat's points
# is the expected value of 飘 minus keep at that point, free of the
# selection effect of comparing seats that did and did not 飘.  Intervals are
# 95% over hands (the points of one hand share its wall).  Then the implied
# `piao_table` policy is checked on duplicate deals against `threshold:N`
# and `never` (`caishen sweep`).
#
# The comparison here: every seat plays `never`, so the keep branch keeps
# the 财神 for the rest of the hand ("飘 now" against "never 飘"), and the
# real hand takes the 飘 at half of the chances (a field that throws more
# than any bot).  `caishen piao` is the same study for any bot, with the keep
# branch's bot stated (`--keep-then`), one chance per hand studied and the
# hand itself played by the bot (README, Studies).

# %%
from __future__ import annotations

import argparse
import time
from pathlib import Path

import numpy as np
import pandas as pd

from caishen.sim.analysis import piao_study, study
from caishen.sim import safeio
from caishen.sim.bots.piao_table import MANY_WAITS
from caishen.sim.selfplay.runner import Execution


def decision_study(hands: int = piao_study.DEFAULT_HANDS, rollouts: int = piao_study.DEFAULT_ROLLOUTS,
                   seed: int = 14, workers: int | None = None, out=None, sweep_walls: int = 20_000,
                   figures=None, progress: bool = True) -> dict:
    """Run the counterfactual study, its estimates, the implied table and its check on duplicate deals.

    Returns ``{"points", "seconds", "estimate", "table", "bits", "check"}``: the study's rows, its
    wall-clock time, :func:`caishen.sim.analysis.piao_study.estimate`, the 64-cell estimate, the ``piao_table`` bits,
    and the sweep table of ``piao_table:<bits>`` vs ``threshold:0/20`` vs ``always`` vs ``never``
    (``sweep_walls`` walls each; 0 skips it).  ``figures``: a directory for the PNG figures.
    """
    t0 = time.perf_counter()
    pts = piao_study.run_study(hands, seed, rollouts, out=out, execution=Execution(workers, progress=progress))
    seconds = time.perf_counter() - t0
    est = piao_study.estimate(pts)
    table = piao_study.table_estimate(pts)
    bits = piao_study.piao_table_bits(pts)
    check = None
    if sweep_walls:
        import tempfile

        with tempfile.TemporaryDirectory() as tmp:
            check = study.sweep("kaihua", Path(tmp) / "check", walls=sweep_walls, seed=seed + 1,
                                policies=f"piao_table:{bits},threshold:20,threshold:0,always,never",
                                baseline="policy=never", execution=Execution(workers, progress=progress))
    if figures is not None:
        _figures(est, Path(figures))
    return {"points": pts, "seconds": seconds, "estimate": est, "table": table, "bits": bits, "check": check}


def _figures(est: pd.DataFrame, out: Path) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    from caishen.sim.analysis.report import save_figure

    safeio.make_dir(out)
    feats = [f for f in ("tiles_left", "waits", "live_waits", "chain", "dealer") if (est["feature"] == f).any()]
    fig, axes = plt.subplots(1, len(feats), figsize=(3.2 * len(feats), 3.4))
    for ax, f in zip(np.atleast_1d(axes), feats):
        t = est[(est["feature"] == f) & (est["points"] >= 30)]  # groups with a usable interval
        v = t["diff"].to_numpy()
        err = np.vstack([v - t["ci_low"].to_numpy(), t["ci_high"].to_numpy() - v])
        ax.errorbar(range(len(v)), v, yerr=np.where(np.isfinite(err), err, 0), fmt="o", capsize=3)
        ax.set_xticks(range(len(v)), t["group"], rotation=40)
        ax.axhline(0, color="k", lw=0.6)
        ax.set_title(f)
    np.atleast_1d(axes)[0].set_ylabel("EV of piao minus keep (points)")
    fig.tight_layout()
    save_figure(fig, out / "piao_decision.png", dpi=100)
    plt.close(fig)


def answer(r: dict) -> str:
    """The one-line answer."""
    e = r["estimate"]
    a = e.iloc[0]
    tl = e[e["feature"] == "tiles_left"]
    worst = tl["ci_high"].sub(tl["ci_low"]).max() / 2
    many = e[(e["feature"] == "waits") & e["group"].isin(["5-8", "9+"])]
    line = (f"飘 at a chance is worth {a['diff']:+.2f} points [95% CI {a['ci_low']:+.2f}, {a['ci_high']:+.2f}] "
            f"over keeping ({int(a['points']):,} chances, {r['seconds']:.0f} s); by tiles left from "
            + ", ".join(f"{g} {d:+.2f}" for g, d in zip(tl["group"], tl["diff"]))
            + f" (widest half-width {worst:.2f})")
    if len(many):
        m = many.iloc[0]
        line += f"; with {m['group']} waits it costs {m['diff']:+.2f} [{m['ci_low']:+.2f}, {m['ci_high']:+.2f}]"
    return line


# %% [markdown]
# ## Run it (the default size: 500,000 hands, R = 4)

# %%
if __name__ == "__main__":
    from caishen.sim.termtext import wrap

    ap = argparse.ArgumentParser(description="the 飘财 decision by counterfactual rollouts")
    ap.add_argument("--hands", type=int, default=piao_study.DEFAULT_HANDS)
    ap.add_argument("--rollouts", type=int, default=piao_study.DEFAULT_ROLLOUTS)
    ap.add_argument("--seed", type=int, default=14)
    ap.add_argument("--workers", type=int, default=None)
    ap.add_argument("--out", default=None, help="a directory for the study's chunks (resumable)")
    ap.add_argument("--sweep-walls", type=int, default=20_000)
    ap.add_argument("--figures", default="runs/figures",
                    help="where the figures go (default runs/figures; the docs' figures in notebooks/figures/ were made at the default sizes with --figures notebooks/figures)")
    args = ap.parse_args()
    r = decision_study(args.hands, args.rollouts, args.seed, args.workers, args.out, args.sweep_walls, args.figures)
    pd.set_option("display.width", 160)
    print(r["estimate"].round(3).to_string(index=False, line_width=100))
    print(f"\nimplied policy: piao_table:{r['bits']}  (cells: tiles-left bucket x waits >= {MANY_WAITS} x chain x "
          "dealer; 飘 where the EV is positive)")
    if r["check"] is not None:
        print(study.format_table(r["check"], metrics=("score", "piao", "failed_piao")))
    print("\n" + "\n".join(wrap(answer(r))))  # within 100 columns
