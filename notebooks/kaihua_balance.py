# %% [markdown]
# # Is Kaihua's scoring balanced? (K-6, K-8, K-9)
#
# A jupytext percent script (`python notebooks/kaihua_balance.py`).  Greedy
# bots play Kaihua hands in 16-hand matches (dealer rotation, K-3.3); for
# every hand type and exponent we measure how often it wins, what it pays
# when it does and its share of all points moved, then the dealer's edge, the
# seat balance and how often a discarder pays three shares (K-8.3).  The
# same walls are replayed under rule options to show what each moves
# (`caishen.sim.analysis.balance.compare_options`).  Intervals: 95% over matches.

# %%
from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

import numpy as np
import pandas as pd

from caishen.sim.analysis import balance
from caishen.sim.rules.kaihua import analysis as KA
from caishen.sim import safeio
from caishen.sim.analysis.report import save_figure
from caishen.sim.selfplay.batch import play_batch

#: the option settings compared on the same walls
SETTINGS = {
    "default": {},
    "failed_piao_factor=1": {"failed_piao_factor": 1},
    "discard_win_payment=own_share": {"discard_win_payment": "own_share"},
    "max_exponent=3": {"max_exponent": 3},
}


def say(what: str) -> None:
    """One progress line on stderr (the study is silent for tens of seconds otherwise)."""
    print(f"kaihua_balance: {what}", file=sys.stderr, flush=True)


def kaihua_study(hands: int = 200_000, seed: int = 21, policies: str = "greedy", settings=None,
                 option_hands: int | None = None, figures=None) -> dict:
    """Balance tables of ``hands`` Kaihua hands, and the key rows under each option setting.

    Returns ``{"types", "balance", "options", "seconds"}`` (DataFrames of
    :func:`caishen.sim.rules.kaihua.analysis.hand_types`, :func:`caishen.sim.rules.kaihua.analysis.balance`
    and the stacked comparison).
    """
    t0 = time.perf_counter()
    say(f"playing {hands:,} hands of {policies} ...")
    df = pd.DataFrame(play_batch(hands, seed, policies=policies))
    types = KA.hand_types(df)
    bal = KA.balance(df)
    n_opt = option_hands or hands // 4
    say(f"each of {len(settings or SETTINGS)} option settings on {n_opt:,} walls ...")
    opts = balance.compare_options(settings or SETTINGS, option_hands or hands // 4, seed, "kaihua", policies,
                                   tables=(KA.balance,))
    if figures is not None:
        _figures(types, Path(figures),
                 f"kaihua, {policies} at every seat, {hands:,} hands in 16-hand matches, seed {seed}")
    return {"types": types, "balance": bal, "options": opts, "seconds": time.perf_counter() - t0}


def _figures(types: pd.DataFrame, out: Path, note: str = "") -> None:
    """The hand types' points when they fire against their frequency, log-log, with 95% intervals (the figure of
    `caishen balance`, `caishen.sim.analysis.balance_sections.value_figure`); ``note``: bots, size and seed."""
    from caishen.sim.analysis.balance_sections import value_figure, value_frequency
    from caishen.sim.analysis.report import _plt

    plt = _plt()
    safeio.make_dir(out)
    fig = value_figure(plt, value_frequency({"hand_types": types}), note)
    save_figure(fig, out / "kaihua_balance.png", dpi=100)
    plt.close(fig)


def answer(r: dict) -> str:
    b = r["balance"].set_index(["section", "metric", "group"])
    edge = b.loc[("dealer", "dealer edge (dealer minus non-dealer)", "all")]
    three = b.loc[("three shares (K-8.3)", "points paid by a discarder", "share of points")]
    t = r["types"]
    share = t[(t["metric"] == "share of points") & (t["section"] == "hand type")].sort_values("value")
    top = share.iloc[-1]
    return (f"the dealer gains {edge['value']:+.2f} points per hand over a non-dealer [95% CI {edge['ci_low']:+.2f}, "
            f"{edge['ci_high']:+.2f}]; discarders pay {three['value']:.1%} of all points "
            f"[{three['ci_low']:.1%}, {three['ci_high']:.1%}]; {top['group'].split(' (')[0]} hands carry "
            f"{top['value']:.1%} of the points [{top['ci_low']:.1%}, {top['ci_high']:.1%}]")


# %% [markdown]
# ## Run it

# %%
def narrow(table: pd.DataFrame) -> str:
    """A balance table (``section, metric, group, n, value, ci_low, ci_high``) as text within 100 columns:
    each section a heading over its rows (pandas wrapped the whole frame into blocks of columns), 汉字
    counted two columns wide, a row of too few hands (:func:`caishen.sim.analysis.balance.few_marked`)
    marked ``*`` without its interval."""
    t = balance.few_marked(table).round(4)
    t["note"] = np.where(t["note"] != "", "*", "")
    blocks = []
    with pd.option_context("display.unicode.east_asian_width", True):
        for section, rows in t.groupby("section", sort=False):
            body = rows.drop(columns="section").rename(columns={"note": ""})
            blocks.append(f"{section}:\n" + body.to_string(index=False))
    return "\n".join(blocks)


if __name__ == "__main__":
    from caishen.sim.termtext import wrap

    ap = argparse.ArgumentParser(description="Kaihua scoring balance")
    ap.add_argument("--hands", type=int, default=200_000, help="self-play hands of the study (default 200,000)")
    ap.add_argument("--seed", type=int, default=21, help="seed of the walls (default 21)")
    ap.add_argument("--figures", default="runs/figures",
                    help="where the figures go (default runs/figures; the docs' figures in notebooks/figures/ were made at the default sizes with --figures notebooks/figures)")
    args = ap.parse_args()
    r = kaihua_study(args.hands, args.seed, figures=args.figures)
    o = r["options"]
    keep = o["metric"].isin(["dealer edge (dealer minus non-dealer)", "points paid by a discarder", "attempt rate",
                             "failed rate (K-9.3)", "draw rate (流局)"])
    print("\n\n".join(narrow(t) for t in (r["types"], r["balance"], o[keep])))
    print(f"(*: too few hands, n < {balance.MIN_CI_N}: no interval)")
    print("\n" + "\n".join(wrap(f"({r['seconds']:.0f} s) " + answer(r))))  # within 100 columns
