"""The sections of ``caishen balance``'s report (:mod:`caishen.sim.analysis.balance_report`): tables, figures, text.

:func:`write` reads the report's finished runs and sweeps and writes
``OUT/balance.md`` (figures linked), ``OUT/report.html`` (one page, the
figures embedded; :class:`caishen.sim.analysis.report._Page`), the figures
``OUT/fig-*.png`` and the tables ``OUT/balance_*.csv``.  Every number comes
with its 95% interval over independent units (sessions for the runs, walls
for the option checks); nothing here plays a hand.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from caishen.sim import safeio
from caishen.sim.analysis import markdown as md
from caishen.sim.analysis.report import _Page, _plt, ascii_label
from caishen.sim.analysis.sessions import STARTING_SEATS, Sessions

#: the sweep metrics of the option checks (the dealer edge is 4/3 of ``dealer_score`` on one-hand walls)
OPTION_METRICS = ("dealer_score", "points_moved", "draw")
#: at most this many hand types / patterns labelled in the value-frequency figure (the largest shares)
MAX_LABELS = 18
#: the headline targets (95% half-widths): a placement rate, a mean placement, and the dealer edge relative
#: to its own size (its sign and size to 10%)
TARGETS = {"placement rate": 0.01, "mean placement": 0.025, "dealer edge (relative)": 0.10}


class _Doc:
    """One report written twice: Markdown lines and an HTML page (:class:`_Page`), the same figures."""

    def __init__(self, out, title):
        self.page = _Page(out, title)
        self.lines = [f"# {title}", ""]

    def heading(self, s):
        self.page.heading(s)
        self.lines += [f"## {s}", ""]

    def text(self, s):
        self.page.text(s)
        self.lines += [s, ""]

    def table(self, df, floatfmt=".4g"):
        self.page.table(df)
        self.lines += [md.table(df, floatfmt), ""]

    def figure(self, fig, name, caption):
        self.page.figure(fig, name, caption)
        self.lines += [f"![{name}](fig-{name}.png)", "", f"*{caption}*", ""]

    def write(self, path):
        safeio.atomic_write(path, "\n".join(self.lines) + "\n")
        return self.page.write()


# ---------------------------------------------------------------------------
# reading the runs
# ---------------------------------------------------------------------------
def bot_tables(run_dir, session_hands: int) -> tuple[dict, Sessions, dict]:
    """``(the rule set's balance tables, the sessions, run.json)`` of one finished run (streamed)."""
    from caishen.sim.analysis import balance
    from caishen.sim.selfplay import rundir, stream

    meta = rundir.read_run_json(run_dir)
    files, _ = stream.verified_chunk_files(run_dir, meta)
    ses = Sessions(stream.column_names(files), session_hands)
    tables = balance.run_tables(run_dir, files, meta.get("options"), extra=[ses])
    return tables, ses, meta


def dealer_edge(tables: dict) -> tuple[float, float, float, int]:
    """``(edge, low, high, seat-hands)`` from a rule set's balance table (its ``dealer edge`` row)."""
    for t in tables.values():
        if "metric" in t:
            row = t[t["metric"].astype(str).str.startswith("dealer edge")]
            if len(row):
                r = row.iloc[0]
                return float(r["value"]), float(r["ci_low"]), float(r["ci_high"]), int(r["n"])
    raise ValueError("the rule set's balance tables have no dealer edge row")


def value_frequency(tables: dict) -> pd.DataFrame | None:
    """Hand types (or patterns) with ``name, frequency, freq_low, freq_high, points, points_low, points_high,
    share, share_low, share_high`` from the rule set's tables (long or wide form), or None."""
    for t in tables.values():
        if {"frequency", "points", "name"} <= set(t.columns):  # wide: one row per pattern
            w = t[t["fires"] > 0].copy() if "fires" in t else t.copy()
            w["name"] = (w["pattern"].astype(str) + " " + w["name"].astype(str)) if "pattern" in w else w["name"]
            return w[["name", "frequency", "freq_low", "freq_high", "points", "points_low", "points_high", "share",
                      "share_low", "share_high"]].reset_index(drop=True)
        if "metric" in t and {"frequency", "points when it fires", "share of points"} <= set(t["metric"]):
            rows = []
            sec = t["section"].iloc[0]
            sub = t[t["section"] == sec]
            for g in dict.fromkeys(sub["group"]):
                x = sub[sub["group"] == g].set_index("metric")
                f, p, s = x.loc["frequency"], x.loc["points when it fires"], x.loc["share of points"]
                if f["value"] > 0:
                    rows.append((g, f["value"], f["ci_low"], f["ci_high"], p["value"], p["ci_low"], p["ci_high"],
                                 s["value"], s["ci_low"], s["ci_high"]))
            return pd.DataFrame(rows, columns=["name", "frequency", "freq_low", "freq_high", "points", "points_low",
                                               "points_high", "share", "share_low", "share_high"])
    return None


def option_effects(sweeps: dict) -> pd.DataFrame:
    """One row per option value against its default: ``option, value, walls`` and for the dealer edge (4/3 of
    the dealer's points per one-hand wall), points moved per hand and the draw rate: the paired difference with
    its interval; sorted by the size of the dealer edge's change."""
    rows = []
    for name, t in sweeps.items():
        if t is None or not len(t):
            continue
        default = str(t[name].iloc[0])
        for v in dict.fromkeys(t[name].astype(str)):
            if v == default:
                continue
            sub = t[t[name].astype(str) == v].set_index("metric")
            r = [name, f"{v} (default {default})", int(sub.loc["dealer_score", "walls"])]
            for m in OPTION_METRICS:
                k = 4 / 3 if m == "dealer_score" else 1.0
                r += [k * sub.loc[m, "diff"], k * sub.loc[m, "diff_low"], k * sub.loc[m, "diff_high"]]
            rows.append(r)
    cols = ["option", "value", "walls"]
    for m in ("dealer_edge", "points_moved", "draw"):
        cols += [f"{m}_diff", f"{m}_low", f"{m}_high"]
    t = pd.DataFrame(rows, columns=cols)
    if len(t):
        t = t.reindex(t["dealer_edge_diff"].abs().sort_values(ascending=False).index).reset_index(drop=True)
    return t


def strength_table(per_bot: dict) -> pd.DataFrame:
    """Every row of the rule set's balance table, one column per bot: ``value [low, high]``."""
    frames = []
    for bot, tables in per_bot.items():
        t = tables.get("balance")
        if t is None:
            continue
        t = t.copy()
        t[bot] = [md.ci(v, lo, hi, "+.4g") if np.isfinite(lo) else md.fmt(v) for v, lo, hi in
                  zip(t["value"], t["ci_low"], t["ci_high"])]
        frames.append(t.set_index(["section", "metric", "group"])[[bot]])
    if not frames:
        return pd.DataFrame()
    return pd.concat(frames, axis=1).reset_index()


# ---------------------------------------------------------------------------
# figures
# ---------------------------------------------------------------------------
def _err(v, lo, hi):
    v = np.asarray(v, float)
    e = np.vstack([v - np.asarray(lo, float), np.asarray(hi, float) - v])
    return np.where(np.isfinite(e), np.maximum(e, 0), 0)


def placement_figure(plt, placements: dict, note: str):
    fig, ax = plt.subplots(figsize=(8, 3.8))
    width = 0.8 / max(1, len(placements))
    for i, (bot, t) in enumerate(placements.items()):
        m = t[t["metric"] == "mean placement"]
        x = np.arange(len(m)) + (i - (len(placements) - 1) / 2) * width
        ax.bar(x, m["value"] - 2.5, width, bottom=2.5, yerr=_err(m["value"], m["ci_low"], m["ci_high"]), capsize=3,
               label=ascii_label(bot))
    ax.axhline(2.5, color="k", lw=0.7)
    ax.set_xticks(range(4), [s.split(" ")[0] for s in STARTING_SEATS])
    ax.set_xlabel("starting seat (east = the session's first dealer)")
    ax.set_ylabel("mean placement (1 = first; 2.5 = fair)")
    ax.set_title("Mean placement over a 16-hand session by starting seat (95% CI over sessions)\n" + note,
                 fontsize=8)
    ax.legend(fontsize=7)
    return fig


def totals_figure(plt, totals: dict, note: str):
    fig, ax = plt.subplots(figsize=(8, 0.5 * 4 * len(totals) + 1.6))
    y = 0
    ticks, labels = [], []
    for bot, t in totals.items():
        for r in t[t["starting_seat"] != "every seat"].itertuples(index=False):
            ax.plot([r.q01, r.q99], [y, y], color="#9ab", lw=1.5)
            ax.plot([r.q05, r.q95], [y, y], color="#4c72b0", lw=4)
            ax.plot([r.q50], [y], "o", color="k", ms=3)
            ax.plot([r.shortfall_5], [y], "x", color="#c44", ms=5)
            ticks.append(y)
            labels.append(f"{ascii_label(bot)}: {r.starting_seat.split(' ')[0]}")
            y += 1
        y += 0.6
    ax.axvline(0, color="k", lw=0.6)
    ax.set_yticks(ticks, labels, fontsize=7)
    ax.invert_yaxis()
    ax.set_xlabel("a seat's total over a 16-hand session (points)")
    ax.set_title("Session totals by starting seat: 1%-99% (thin), 5%-95% (thick), median (dot), mean of the worst "
                 "5% (x)\n" + note, fontsize=8)
    return fig


def value_figure(plt, vf: pd.DataFrame, note: str):
    fig, ax = plt.subplots(figsize=(8, 6))
    ax.errorbar(vf["frequency"], vf["points"], xerr=_err(vf["frequency"], vf["freq_low"], vf["freq_high"]),
                yerr=_err(vf["points"], vf["points_low"], vf["points_high"]), fmt="o", ms=4, capsize=2, lw=0.8)
    f = vf["frequency"].to_numpy(float)
    p = vf["points"].to_numpy(float)
    ok = (f > 0) & (p > 0)
    if ok.any():
        med = float(np.median(f[ok] * p[ok]))
        xs = np.geomspace(f[ok].min() / 2, min(1.0, f[ok].max() * 2), 50)
        for k, ls in ((1, "-"), (10, ":"), (0.1, ":")):
            ax.plot(xs, k * med / xs, ls, color="0.6", lw=0.8)
    top = vf.assign(_s=vf["share"]).sort_values("_s", ascending=False).head(MAX_LABELS)
    for j, r in enumerate(top.itertuples(index=False)):
        label = ascii_label(str(r.name)).split(" (")[0]
        label = label.split(" ")[0] if label[:1] == "P" and label[1:3].isdigit() else label
        ax.annotate(label, (r.frequency, r.points), fontsize=6.5, xytext=(4, 6 if j % 2 else -9),
                    textcoords="offset points")
    ax.set_xscale("log")
    ax.set_yscale("log")
    ax.set_xlabel("frequency (share of won hands, 95% CI)")
    ax.set_ylabel("points when it fires (95% CI)")
    ax.set_title("Value against frequency; grey lines: equal points per won hand (median type; x10, /10 dotted)\n"
                 + note, fontsize=8)
    return fig


def options_figure(plt, eff: pd.DataFrame, note: str):
    t = eff.head(20)
    fig, ax = plt.subplots(figsize=(8, 0.32 * len(t) + 1.8))
    v = t["dealer_edge_diff"].to_numpy(float)
    ax.barh(range(len(t)), v, xerr=_err(v, t["dealer_edge_low"], t["dealer_edge_high"]), color="#4c72b0", capsize=2)
    ax.set_yticks(range(len(t)), [ascii_label(f"{o}={str(x).split(' (')[0]}") for o, x in zip(t["option"], t["value"])],
                  fontsize=7)
    ax.invert_yaxis()
    ax.axvline(0, color="k", lw=0.6)
    ax.set_xlabel("change of the dealer edge (points per hand; paired 95% CI over walls)")
    ax.set_title("The options that move the dealer edge most\n" + note, fontsize=8)
    return fig


# ---------------------------------------------------------------------------
# the report
# ---------------------------------------------------------------------------
def _yes(ok: bool) -> str:
    return "yes" if ok else "no"


def _targets(hands, edge, placement):
    from caishen.sim.analysis.piao_answer import hands_for

    rows = []
    e, lo, hi = edge
    hw = (hi - lo) / 2
    tgt = TARGETS["dealer edge (relative)"] * abs(e) if e else float("nan")
    rows.append(("dealer edge", md.ci(e, lo, hi), hw, tgt, _yes(hw <= tgt), hands_for(hands, hw, tgt)))
    pr = placement[placement["metric"].str.startswith("place ")]
    hw = float(((pr["ci_high"] - pr["ci_low"]) / 2).max())
    worst = pr.iloc[int(np.argmax(np.abs(pr["value"] - 0.25)))]
    rows.append((f"placement rate furthest from 25% ({worst['starting_seat'].split(' ')[0]}, {worst['metric']})",
                 md.ci(worst["value"], worst["ci_low"], worst["ci_high"], ".3f"), hw, TARGETS["placement rate"],
                 _yes(hw <= TARGETS["placement rate"]), hands_for(hands, hw, TARGETS["placement rate"])))
    mp = placement[placement["metric"] == "mean placement"]
    hw = float(((mp["ci_high"] - mp["ci_low"]) / 2).max())
    worst = mp.iloc[int(np.argmax(np.abs(mp["value"] - 2.5)))]
    rows.append((f"mean placement furthest from 2.5 ({worst['starting_seat'].split(' ')[0]})",
                 md.ci(worst["value"], worst["ci_low"], worst["ci_high"], ".3f"), hw, TARGETS["mean placement"],
                 _yes(hw <= TARGETS["mean placement"]), hands_for(hands, hw, TARGETS["mean placement"])))
    return rows


def write(out, rules, bots, run_dirs, sweeps, config, *, command, machine, seconds) -> dict:
    """Write the report (module docstring) from the finished runs and sweeps; returns the answers."""
    from caishen.sim.rules import base as rulesets

    plt = _plt()
    hands = config["hands"]
    sh = config["session_hands"]
    per_bot, placement, totals, edges = {}, {}, {}, {}
    dropped = {}
    for b, d in zip(bots, run_dirs):
        tables, ses, meta = bot_tables(d, sh)
        per_bot[b] = tables
        placement[b] = ses.placement()
        totals[b] = ses.totals()
        edges[b] = dealer_edge(tables)
        dropped[b] = ses.dropped()
    eff = option_effects(sweeps)
    opts = rulesets.get(rules).options.from_dict(meta.get("options")).to_dict()
    note = f"{rules}, {hands:,} hands per bot in {hands // sh:,} sessions of {sh}, seed {config['seed']}"
    doc = _Doc(out, f"Is {rules} balanced? caishen balance")
    doc.text(f"Command: `{command}`")
    doc.text(f"Seed {config['seed']} (every bot's run; the option checks play seed {config['seed'] + 1}); bots: "
             + ", ".join(f"`{b}`" for b in bots) + " (each at every seat of its own run); "
             f"{hands:,} hands per bot in {hands // sh:,} sessions of {sh} hands (dealer rotation as the rules say); "
             + (f"option checks: {config['option_walls']:,} duplicate one-hand walls per option value, `{bots[0]}` at "
                "every seat; " if config["option_walls"] else "no option checks; ")
             + f"caishen {config['version']} (source {config['source_digest']}); {machine}; {seconds:,.0f} s.")
    doc.text("Readings (every rule option, as played): " + ", ".join(f"`{k}={v}`" for k, v in opts.items()
                                                                     if not isinstance(v, (list, tuple, dict))))
    doc.text("Intervals are 95%: over sessions (the hands of a session share its dealer rotation) for the runs, "
             "over walls for the option checks (paired: every option value on the same walls as its default).")
    # --- answers
    doc.heading("Answers")
    ans_rows = []
    for b in bots:
        for r in _targets(hands, edges[b][:3], placement[b]):
            ans_rows.append((b, *r))
        t = totals[b]
        ev = t[t["starting_seat"] == "every seat"].iloc[0]
        ans_rows.append((b, "session total: sd, 1% / 99% quantiles", f"{ev['sd']:.1f}, {ev['q01']:+.0f} / "
                         f"{ev['q99']:+.0f}", float("nan"), float("nan"), "", ""))
    ans = pd.DataFrame(ans_rows, columns=["bot", "question", "answer (95% CI)", "half-width", "target",
                                          "target met", "hands for the target"])
    doc.table(ans)
    if len(eff):
        top = eff.iloc[0]
        doc.text(f"The option that moves the dealer edge most: `{top['option']}={top['value']}`, "
                 f"{md.ci(top['dealer_edge_diff'], top['dealer_edge_low'], top['dealer_edge_high'])} points per "
                 f"hand ({int(top['walls']):,} walls, `{bots[0]}`).")
    # --- 1 dealer edge and strength
    doc.heading("1. Dealer edge, and how it depends on the bots' strength")
    et = pd.DataFrame([(b, *edges[b]) for b in bots], columns=["bot", "dealer edge", "ci_low", "ci_high", "hands"])
    doc.table(et)
    fig, ax = plt.subplots(figsize=(6, 0.5 * len(bots) + 1.6))
    ax.barh(range(len(bots)), et["dealer edge"], xerr=_err(et["dealer edge"], et["ci_low"], et["ci_high"]),
            color="#4c72b0", capsize=3)
    ax.set_yticks(range(len(bots)), [ascii_label(b) for b in bots])
    ax.invert_yaxis()
    ax.axvline(0, color="k", lw=0.6)
    ax.set_xlabel("dealer's points per hand minus a non-dealer's (95% CI over sessions)")
    ax.set_title("Dealer edge by bot\n" + note, fontsize=8)
    doc.figure(fig, "dealer-edge", "The dealer edge with each bot at every seat.")
    st = strength_table(per_bot)
    if len(st):
        doc.text("Every row of the rule set's balance table, the bots side by side (value [95% CI over sessions]):")
        doc.table(st)
    # --- 2 seats over sessions
    doc.heading(f"2. Seat fairness over {sh}-hand sessions")
    doc.text("Placement 1..4 by a seat's session total (1 = the most points; ties shared: tied seats split the "
             "places they span), by starting seat (east = the session's first dealer, then south, west, north in "
             "turn order). Fair: every rate 25%, every mean placement 2.5."
             + (" Sessions cut short by a run's end are left out: " + ", ".join(f"{b} {n}" for b, n in dropped.items())
                + "." if any(dropped.values()) else ""))
    pl = pd.concat([t.assign(bot=b) for b, t in placement.items()], ignore_index=True)
    doc.table(pl[["bot", "starting_seat", "metric", "sessions", "value", "ci_low", "ci_high"]])
    doc.figure(placement_figure(plt, placement, note), "placement", "Mean placement by starting seat, per bot.")
    # --- 3 score distribution
    doc.heading("3. Session totals: distribution and tails per seat")
    tt = pd.concat([t.assign(bot=b) for b, t in totals.items()], ignore_index=True)
    doc.table(tt[["bot", *[c for c in tt.columns if c != "bot"]]], ".3g")
    doc.figure(totals_figure(plt, totals, note), "totals", "Quantiles of a seat's session total by starting seat.")
    # --- 4 hand types
    doc.heading("4. Hand types: value against frequency")
    for b in bots[:1]:
        vf = value_frequency(per_bot[b])
        if vf is None or not len(vf):
            doc.text("The rule set reports no hand-type table.")
            continue
        doc.text(f"`{b}` at every seat. A type far above the grey line through the median pays more for its "
                 "rarity than the median type, far below it less (share = its part of all points paid).")
        doc.figure(value_figure(plt, vf, note + f", {b}"), "value-frequency", "Hand types' points when they fire "
                   "against their frequency (log-log, 95% CIs).")
        doc.table(vf.sort_values("share", ascending=False), ".3g")
    # --- 5 options
    doc.heading("5. The options that move it most")
    if len(eff):
        zero = [o for o in dict.fromkeys(eff["option"]) if (eff[eff["option"] == o][["dealer_edge_diff",
                "points_moved_diff", "draw_diff"]] == 0).all().all()]
        doc.text(f"Each option at other values against its default on the same {config['option_walls']:,} one-hand "
                 f"walls (`{bots[0]}` at every seat), sorted by the change of the dealer edge."
                 + (" No change at all (an option about the dealer's rotation or streak cannot act on one-hand "
                    "walls, or one the bots' play never reaches): " + ", ".join(zero) + "." if zero else ""))
        onote = (f"{rules}, {config['option_walls']:,} duplicate one-hand walls per option value, {bots[0]} at every "
                 f"seat, seed {config['seed'] + 1}")
        doc.figure(options_figure(plt, eff, onote), "options", "Change of the dealer edge per option value (paired "
                   "95% CI over walls).")
        doc.table(eff, ".3g")
    else:
        doc.text("Option checks skipped (--option-walls 0).")
    safeio.atomic_write(out / "balance_answers.csv", ans.to_csv(index=False))
    safeio.atomic_write(out / "balance_placement.csv", pl.to_csv(index=False))
    safeio.atomic_write(out / "balance_totals.csv", tt.to_csv(index=False))
    safeio.atomic_write(out / "balance_options.csv", eff.to_csv(index=False))
    if len(st):
        safeio.atomic_write(out / "balance_strength.csv", st.to_csv(index=False))
    doc.write(out / "balance.md")
    return {"command": command, "rules": rules, "bots": bots, "hands": hands, "seed": config["seed"],
            "seconds": round(seconds, 1), "machine": machine,
            "dealer_edge": {b: list(edges[b][:3]) for b in bots},
            "answers": ans.to_dict("records"),
            "top_options": eff.head(5).to_dict("records") if len(eff) else []}
