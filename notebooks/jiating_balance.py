# %% [markdown]
# # Is Jiating's scoring table balanced? (J-6, J-8)
#
# A jupytext percent script (`python notebooks/jiating_balance.py`).  Greedy
# bots play Jiating hands in 16-hand matches (the dealer keeps the deal on a
# win or a 流局, J-2.3, so streaks build up).  For each pattern P01..P50:
# how often it fires, its points when it does, and its share of all points
# paid; a log-log plot of frequency against points shows the patterns
# priced out of line with their rarity.  Then how often the caps bind
# (J-6.2), the dealer's edge and streak (J-2.4), and what declaring 架听
# (J-4.1) and 硬子 (J-4.2) is worth, measured on the same wall continuation
# (declare vs not, `caishen.sim.rules.jiating.analysis.declaration_value`).  Intervals: 95% over
# matches (hands for the declarations).
#
# **Why 硬子 is worth hundreds of points: P47 (地胡).**  硬子 is offered in about
# 0.1% of hands, mostly to a dealer who is ready after the first discard.  Under
# the default reading of P47 (`dihu="dealer_ready_first_discard"`, ambiguity 3
# in `caishen rules P47`) such a dealer, once hard-declared, scores 地胡 on *any*
# later win, and every such payment reaches the dealer's 400 cap (J-6.2): that
# is nearly all of the 硬子 number below, and the only way the caps bind often.
# A non-dealer's 硬子 is worth far less.  Under the reading
# `dihu="win_on_dealers_first_discard"` (a non-dealer wins on the dealer's first
# discard) the dealer's 硬子 loses its 地胡 and the dealer's points per hand fall
# by 0.27 [0.19, 0.35] on the same walls (`notebooks/rule_readings.py`,
# 100,000 walls): about 15% of the dealer's edge.  `dealer_ready_undeclared`
# changes nothing for greedy bots, which always declare 硬子 when it is offered.

# %%
from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

import numpy as np
import pandas as pd

from caishen.sim.analysis import balance
from caishen.sim.rules.jiating import analysis as JA
from caishen.sim import safeio
from caishen.sim.selfplay.batch import play_batch


def say(what: str) -> None:
    """One progress line on stderr (the study is silent for a minute or two otherwise)."""
    print(f"jiating_balance: {what}", file=sys.stderr, flush=True)


def jiating_study(hands: int = 100_000, seed: int = 31, decl_hands: int = 5_000, rollouts: int = 4,
                  workers: int | None = None, figures=None, hard_hands: int = 200_000) -> dict:
    """Pattern and balance tables of ``hands`` Jiating hands and the declarations' value.

    Returns ``{"patterns", "balance", "declarations", "seconds"}``.
    """
    t0 = time.perf_counter()
    say(f"playing {hands:,} greedy hands ...")
    df = pd.DataFrame(play_batch(hands, seed, rules="jiating", policies="greedy"))
    pat = JA.patterns(df)
    bal = JA.balance(df)
    say(f"the 架听 declaration's value on {decl_hands:,} hands ({rollouts} rollouts a branch) and 硬子's on "
        f"{hard_hands:,} ...")
    decl = JA.declaration_value(decl_hands, seed, rollouts, workers=workers, hard_hands=hard_hands)
    if figures is not None:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt

        from caishen.sim.analysis.report import save_figure
        from caishen.sim.rules.jiating.analysis import pattern_figure

        out = Path(figures)
        safeio.make_dir(out)
        fig = pattern_figure(plt, pat)
        save_figure(fig, out / "jiating_patterns.png", dpi=100, bbox_inches="tight")
        plt.close(fig)
    return {"patterns": pat, "balance": bal, "declarations": decl, "seconds": time.perf_counter() - t0}


def out_of_line(pat: pd.DataFrame, min_fires: int = 30) -> pd.DataFrame:
    """Patterns by ``log(points x frequency)`` against the median pattern: positive = pays more than its
    rarity (``points x frequency`` is the pattern's points per win it contributes)."""
    t = pat[(pat["fires"] >= min_fires) & (pat["pattern"] != "G")].copy()
    t["ratio"] = np.log2(t["points"] * t["frequency"] / np.median(t["points"] * t["frequency"]))
    return t.sort_values("ratio", ascending=False)


def answer(r: dict) -> str:
    b = r["balance"].set_index(["section", "metric", "group"])
    cap = b.loc[("caps (J-6.2)", "wins with a capped payment", "share of winning seat-hands")]
    d = r["declarations"].set_index("decision")
    j, h = d.loc["jiating"], d.loc["hard"]
    o = out_of_line(r["patterns"])
    hi, lo = o.iloc[0], o.iloc[-1]
    return (f"a 架听 declaration is worth {j['diff']:+.2f} points [95% CI {j['ci_low']:+.2f}, {j['ci_high']:+.2f}], "
            f"硬子 {h['diff']:+.1f} [{h['ci_low']:+.1f}, {h['ci_high']:+.1f}] to the declarer; caps bind in "
            f"{cap['value']:.2%} of wins [{cap['ci_low']:.2%}, {cap['ci_high']:.2%}]; the pattern most overpaid "
            f"for its rarity is {hi['pattern']} {hi['name']} (x{2 ** hi['ratio']:.1f} the median points x "
            f"frequency), the most underpaid {lo['pattern']} {lo['name']} (x{2 ** lo['ratio']:.2f})")


# %% [markdown]
# ## Run it

# %%
if __name__ == "__main__":
    from caishen.sim.termtext import wrap

    ap = argparse.ArgumentParser(description="Jiating scoring balance")
    ap.add_argument("--hands", type=int, default=100_000)
    ap.add_argument("--decl-hands", type=int, default=5_000, help="hands for the 架听 study")
    ap.add_argument("--hard-hands", type=int, default=200_000, help="hands for the 硬子 study (offered in ~0.1%%)")
    ap.add_argument("--seed", type=int, default=31)
    ap.add_argument("--workers", type=int, default=None)
    ap.add_argument("--figures", default="runs/figures",
                    help="where the figures go (default runs/figures; the docs' figures in notebooks/figures/ were made at the default sizes with --figures notebooks/figures)")
    args = ap.parse_args()
    r = jiating_study(args.hands, args.seed, args.decl_hands, workers=args.workers, figures=args.figures,
                      hard_hands=args.hard_hands)
    pd.set_option("display.width", 180)
    print(r["patterns"].round(4).to_string(index=False, line_width=100))
    print(balance.few_marked(r["balance"]).round(4).to_string(index=False, line_width=100))  # "too few hands" under 30
    print(r["declarations"].round(3).to_string(index=False, line_width=100))
    print(out_of_line(r["patterns"])[["pattern", "name", "fires", "frequency", "points", "ratio"]].round(3)
          .to_string(index=False, line_width=100))
    print("\n" + "\n".join(wrap(f"({r['seconds']:.0f} s) " + answer(r))))  # within 100 columns
