# %% [markdown]
# # Which rule readings matter? Every ambiguity option side by side, on duplicate deals
#
# A jupytext percent script (`python notebooks/rule_readings.py --walls 20000`).
# The specifications (`caishen rules K-7.1 J-6.2 P47`, their "Ambiguities
# resolved here" lists) settle every unclear sentence of the seed documents
# with one reading and keep the others as rule options.  This study plays the
# same walls under each reading of each such option (`caishen sweep`, one
# option at a time, every other option at its default; greedy bots at every
# seat) and compares each reading with the default one, wall by wall:
#
# - `dealer_score`: the dealer's points per hand (the dealer's edge: 0 would be
#   a fair seat), `points_moved`: points paid per hand (the sum of the positive
#   scores: how much a hand is worth), `draw`: 流局 rate, `self_draw`: the rate of
#   hands won by a self-draw, `win`: a seat's win rate;
# - Kaihua: `piao` (a seat threw a 财神, K-9.1) and `failed_piao` (its 飘 failed,
#   K-9.3); Jiating: `jiating` (a seat declared 架听, J-4.1) and `hard` (硬子, J-4.2).
#
# Each difference is a paired 95% interval over walls (each wall is its own
# one-hand match, so dealer rotation and streaks play no part: the balance
# notebooks measure those over matches).  Equivalent commands, one per option:
#
#     caishen sweep --rules jiating --option dihu=dealer_ready_first_discard,win_on_dealers_first_discard,dealer_ready_undeclared \
#         --walls 20000 --seed 41 --out runs/readings/jiating/dihu

# %%
from __future__ import annotations

import argparse
import time
from pathlib import Path

import pandas as pd

from caishen.sim import safeio
from caishen.sim.analysis import study
from caishen.sim.analysis.report import save_figure
from caishen.sim.selfplay.runner import Execution

#: per rule set: (option, its readings -- the default first --, the rule and what the reading is about)
READINGS = {
    "kaihua": [
        ("discard_win_max_caishen", "1,0,2", "K-7.1, ambiguity 7: the most 财神 a discard win may hold"),
        ("baotou_discard_win", "never,other_readings", "K-7.1, D6: a 爆头-shaped hand on a discard"),
        ("discard_win", "true,false", "K-7.1: wins on a discard at all"),
        ("failed_piao_factor", "2,1", "K-9.3, ambiguity 8: the failed 飘 player's extra self-draw share"),
        ("piao_requires_baotou", "false,true", "K-6.5, ambiguity 9: 飘 links count only on a 爆头 win"),
    ],
    "jiating": [
        ("dihu", "dealer_ready_first_discard,win_on_dealers_first_discard,dealer_ready_undeclared",
         "P47, ambiguity 3: who scores 地胡"),
        ("passed_pong_scope", "same_kind,any", "J-3.6, ambiguity 9: what a passed pong bans"),
        ("cap", "200,None", "J-6.2: the cap of a payment between non-dealers (None: no cap)"),
        ("dealer_cap", "400,None", "J-6.2, ambiguity 8: the cap of a payment with the dealer (None: no cap)"),
    ],
}
#: the metrics shown (the sweep writes more: ``OUT/<rules>/<option>/sweep.csv``)
METRICS = {"kaihua": ("dealer_score", "points_moved", "draw", "self_draw", "win", "piao", "failed_piao"),
           "jiating": ("dealer_score", "points_moved", "draw", "self_draw", "win", "jiating", "hard")}
#: the metrics of the figure
FIGURE_METRICS = ("dealer_score", "points_moved", "draw")


def readings_study(rules: str, out, walls: int = 20_000, seed: int = 41, workers: int | None = None,
                   readings=None, progress: bool = True, figures=None) -> dict:
    """Every reading of every ambiguity option of ``rules`` on the same ``walls`` walls (resumable in ``out``).

    ``readings``: a list as :data:`READINGS` (default: the rule set's).  Returns ``{"table", "seconds"}``:
    one row per option, reading and metric -- ``default`` (the option's default reading), ``value`` [``ci_low``, ``ci_high``] and ``diff``
    [``diff_low``, ``diff_high``] against the option's default reading (paired, 95% over walls) -- and
    writes ``figures/readings_<rules>.png`` when ``figures`` is given.  Raises ``ValueError`` (from the
    sweep) for an unknown option or value.
    """
    t0 = time.perf_counter()
    rows = []
    for option, values, what in readings or READINGS[rules]:
        t = study.sweep(rules, Path(out) / rules / option, options=[f"{option}={values}"], walls=walls, seed=seed,
                        execution=Execution(workers, progress=progress))
        t = t[t["metric"].isin(METRICS[rules])].rename(columns={option: "reading"})
        t.insert(0, "option", option)
        t.insert(2, "about", what)
        t["reading"] = t["reading"].astype(str)
        t.insert(3, "default", t["reading"] == t["reading"].iloc[0])  # the grid's first value: the baseline
        rows.append(t[["option", "reading", "about", "default", *study.TABLE_COLUMNS]])
    table = pd.concat(rows, ignore_index=True)
    if figures is not None:
        figure(table, rules, Path(figures) / f"readings_{rules}.png")
    return {"table": table, "seconds": time.perf_counter() - t0}


def figure(table: pd.DataFrame, rules: str, path: Path) -> Path:
    """Each non-default reading's paired difference from the default, one panel per metric of
    :data:`FIGURE_METRICS`, with its 95% interval."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    units = {"dealer_score": "points per hand", "points_moved": "points per hand", "draw": "rate"}
    t = table[~table["default"]]
    labels = [f"{o}={r}" for o, r in dict.fromkeys(zip(t["option"], t["reading"]))]
    fig, axes = plt.subplots(1, len(FIGURE_METRICS), figsize=(4.2 * len(FIGURE_METRICS), 0.45 * len(labels) + 1.6),
                             sharey=True)
    for ax, m in zip(axes, FIGURE_METRICS):
        s = t[t["metric"] == m]
        s = s.set_index(s["option"] + "=" + s["reading"]).reindex(labels)
        y = range(len(labels))
        ax.errorbar(s["diff"], y, xerr=[s["diff"] - s["diff_low"], s["diff_high"] - s["diff"]], fmt="o",
                    color="#4c72b0", capsize=3)
        ax.axvline(0, color="grey", lw=0.8)
        ax.set_title(m)
        ax.set_xlabel(f"minus the default reading ({units[m]})")
        ax.set_yticks(list(y), labels)
    axes[0].invert_yaxis()
    fig.suptitle(f"{rules}: each reading against the default, paired 95% CI over walls")
    safeio.make_dir(path.parent)
    save_figure(fig, path, dpi=100, bbox_inches="tight")
    plt.close(fig)
    return path


def answer(r: dict, metric: str = "dealer_score") -> str:
    """The readings that move ``metric`` with an interval excluding 0, largest first, in words."""
    t = r["table"]
    s = t[(t["metric"] == metric) & ~t["default"]]
    moved = s[(s["diff_low"] > 0) | (s["diff_high"] < 0)].copy()
    moved["size"] = moved["diff"].abs()
    if moved.empty:
        return f"no reading moves {metric} (every paired 95% CI covers 0)"
    parts = [f"{row.option}={row.reading}: {row.diff:+.3f} [{row.diff_low:+.3f}, {row.diff_high:+.3f}]"
             for row in moved.sort_values("size", ascending=False).itertuples()]
    return f"{metric} against the default reading, where the paired 95% CI excludes 0: " + "; ".join(parts)


# %% [markdown]
# ## Run it

# %%
if __name__ == "__main__":
    from caishen.sim.termtext import wrap

    ap = argparse.ArgumentParser(description="every rule reading against the default one, on duplicate deals")
    ap.add_argument("--rules", default="kaihua,jiating", help="rule sets, comma-separated")
    ap.add_argument("--out", default="runs/readings")
    ap.add_argument("--walls", type=int, default=20_000)
    ap.add_argument("--seed", type=int, default=41)
    ap.add_argument("--workers", type=int, default=None)
    args = ap.parse_args()
    for rules in args.rules.split(","):
        r = readings_study(rules, Path(args.out), args.walls, args.seed, workers=args.workers,
                           figures=Path(args.out))
        safeio.atomic_write(Path(args.out) / f"readings_{rules}.csv", r["table"].to_csv(index=False))
        print(r["table"][["option", "reading", "metric", "value", "diff", "diff_low", "diff_high"]]
              .to_string(index=False, line_width=100, float_format=lambda v: f"{v:+.4f}"))
        print("\n" + "\n".join(wrap(f"{rules} ({r['seconds']:.0f} s): " + answer(r))) + "\n")  # within 100 columns
