"""``caishen report RUN``: figures (PNG, matplotlib) and one self-contained HTML page for a run.

:func:`write_report` reads a run directory and writes, beside its
``summary.csv``:

- ``fig-*.png``: the figures (below);
- ``report.html``: one page that embeds every figure (base64 PNG, so the
  file can be mailed alone) with the tables under them; written last and
  atomically, so a page that exists is a finished report.

Run kinds (recognised by the file a run starts with):

==========  ===============  ================================================
kind        marker           figures
==========  ===============  ================================================
simulate    ``run.json``     score per seat-hand by seat and dealer, win types,
(or match)                   the winner's gain (log scales, fixed bins
                             :data:`GAIN_EDGES`); then the rule set's own
                             figures and tables (``Analysis.report`` of its
                             ``analysis`` hook, :mod:`caishen.sim.analysis.balance`:
                             hand types and exponents, K-6; pattern
                             frequency against points, J-8; caps, streak)
sweep       ``sweep.json``   every metric by grid point with its 95% CI, and
                             the difference to the baseline (:mod:`caishen.sim.analysis.study`)
study       ``study.json``   the EV of the alternative minus the base by each
                             feature (:mod:`caishen.sim.analysis.piao_study`)
ladder      ``ladder.json``  the ratings and the matrix of paired differences
                             (:mod:`caishen.sim.analysis.ladder`), the field named
piao        ``piao_answer``  the 飘 answer of ``caishen piao``: its heatmap, the
            ``.json``        EV by the bot's own choice, the check
                             (:mod:`caishen.sim.analysis.piao_answer`)
==========  ===============  ================================================

Every page opens with its headline (what was played, with which bots, how
many hands or walls and which seed, and the main number with its
interval), tables print numbers for people (``100,000``, never ``1e+05``),
and each figure carries the same bots, size and seed in a corner line.

A simulate run's page covers every hand of its verified chunks, in memory
that does not grow with the hands: the summary streams them
(:func:`caishen.sim.analysis.summary.summarize_run`), and so do the balance tables and
the figures drawn from them (:func:`caishen.sim.analysis.balance.run_tables`, with the
winner's-gain counts :class:`GainCounts` fed the same batches); the chunks
are verified once for both.  ``benchmarks/bench_summary_scale.py`` measures
the peak memory on runs of 10^7 and 10^8 hands.

Any other directory is a ``ValueError`` naming it, and nothing is written.
Intervals on the figures are the 95% intervals of the tables (over
independent units: matches, walls or hands; :mod:`caishen.sim.analysis.intervals`).
Matplotlib is a dependency of the package (figures of report, ladder and the studies).
"""

from __future__ import annotations

import base64
import html
from pathlib import Path

import numpy as np
import pandas as pd

from caishen.sim import safeio
from caishen.sim.analysis.figures import _labels, _plt, ascii_label, save_figure  # noqa: F401 (the page's and its callers')
from caishen.sim.rules import base as rulesets

REPORT_HTML = "report.html"
#: the page's font-family list: CJK fonts of the common systems first (Linux Noto / Source Han / WenQuanYi,
#: macOS PingFang, Windows Microsoft YaHei), then the browser's sans-serif
CJK_FONTS = ('"Noto Sans CJK SC", "Source Han Sans SC", "WenQuanYi Zen Hei", "PingFang SC", "Microsoft YaHei", '
             '"SimHei", sans-serif')
#: Chinese terms every report may show, with pinyin (a rule set's own: ``Analysis.glossary``)
GLOSSARY = {"流局": "liuju (a drawn hand)", "庄": "zhuang (the dealer)"}


def number(v) -> str:
    """A number for people: ``100,000`` (thousands grouped, no exponent), ``0.0123``, ``+1.47`` stays
    ``1.47``; NaN is empty."""
    if v is None or (isinstance(v, float) and not np.isfinite(v)):
        return ""
    v = float(v)
    if abs(v) >= 1000 or (v == round(v) and abs(v) < 1e15):
        return f"{v:,.0f}"
    if abs(v) >= 1e-4:
        return f"{v:.4g}"
    return f"{v:.2e}"


def options_text(options, rules: str | None = None) -> str:
    """A run's rule options as ``K=V, K=V``: with ``rules``, only those that differ from the rule set's
    defaults (a run stores every option); ``the defaults`` when none does."""
    options = dict(options or {})
    if rules in rulesets.names():
        defaults = rulesets.get(rules).options().to_dict()
        options = {k: v for k, v in options.items() if defaults.get(k, object()) != v}
    if not options:
        return "the defaults"
    return ", ".join(f"{k}={v}" for k, v in options.items())


def run_kind(run_dir) -> str:
    """``"sweep"``, ``"study"``, ``"ladder"``, ``"piao"``, ``"match"`` or ``"simulate"`` by the marker file (a
    match is a run whose run.json names an arena chunk function, :mod:`caishen.sim.analysis.arena`);
    ``ValueError`` for anything else."""
    d = Path(run_dir)
    if not d.is_dir():
        raise ValueError(f"{str(run_dir)!r} is not a directory")
    if (d / "sweep.json").exists():
        return "sweep"
    if (d / "ladder.json").exists():
        return "ladder"
    if (d / "piao_answer.json").exists():
        return "piao"
    if (d / "study.json").exists():
        return "study"
    if (d / "run.json").exists():
        from caishen.sim.selfplay import rundir

        try:
            fn = safeio.read_json(d / "run.json", rundir.MAX_RUN_JSON).get("chunk_fn", "")
        except (OSError, ValueError):
            fn = ""  # the runner names what is wrong with run.json
        return "match" if str(fn).startswith("caishen.sim.analysis.arena:") else "simulate"
    raise ValueError(f"{str(run_dir)!r} is not a run directory (no run.json), nor a sweep (no sweep.json), a "
                     "study (no study.json), a ladder (no ladder.json) or a 飘 answer (no piao_answer.json)")


def stamp(fig, label: str):
    """Write ``label`` under everything ``fig`` draws, flush with its right edge: below the lowest tick label
    and axis label, so it overlaps nothing (the PNG, saved with ``bbox_inches="tight"``, grows to hold it).
    Returns the text artist."""
    box = fig.get_tightbbox()  # inches, every artist drawn so far
    w, h = fig.get_size_inches()  # in figure fractions: savefig's tight box moves those, not inches
    return fig.text(box.x1 / w, (box.y0 - 2 / 72) / h, label, ha="right", va="top", fontsize=6.5, color="#666")


class _Page:
    """Figures and tables collected for one HTML page; PNG files written beside it."""

    def __init__(self, run_dir: Path, title: str):
        self.dir = run_dir
        self.title = title
        #: the line every figure carries in its corner: rules, bots, size, seed (set by the kind's writer)
        self.label = ""
        self.parts: list[str] = []
        self.files: list[str] = []
        #: Chinese terms of the page with their pinyin, named in the font note (a rule set adds its own)
        self.glossary: dict[str, str] = dict(GLOSSARY)

    def text(self, s: str):
        self.parts.append(f"<p>{html.escape(s)}</p>")

    def heading(self, s: str):
        self.parts.append(f"<h2>{html.escape(s)}</h2>")

    def headline(self, s: str):
        """The page's first paragraph: what was played and the main number (bold)."""
        self.parts.insert(0, f"<p class='headline'>{html.escape(s)}</p>")

    def table(self, df: pd.DataFrame):
        self.parts.append(df.to_html(index=False, float_format=number, na_rep="", border=0, classes="t"))

    def image(self, path: Path, caption: str):
        """Embed a PNG another writer made (the ladder's, the 飘 heatmap) with its caption."""
        b64 = base64.b64encode(safeio.read_bytes(path, 64 << 20, what="a figure")).decode("ascii")
        self.parts.append(f'<figure><img alt="{html.escape(path.name)}" src="data:image/png;base64,{b64}"/>'
                          f"<figcaption>{html.escape(caption)}</figcaption></figure>")

    def figure(self, fig, name: str, caption: str):
        if self.label:  # bots, size and seed on every figure (it may travel without the page)
            stamp(fig, ascii_label(self.label))
        path = self.dir / f"fig-{name}.png"
        data = save_figure(fig, path, dpi=110, bbox_inches="tight")
        self.files.append(path.name)
        b64 = base64.b64encode(data).decode("ascii")
        self.parts.append(f'<figure><img alt="{html.escape(name)}" src="data:image/png;base64,{b64}"/>'
                          f"<figcaption>{html.escape(caption)}</figcaption></figure>")
        import matplotlib.pyplot as plt

        plt.close(fig)

    def write(self) -> Path:
        style = (f"body{{font-family:{CJK_FONTS};max-width:1100px;margin:2em auto;padding:0 1em}}"
                 "table.t{border-collapse:collapse;font-size:13px}table.t td,table.t th{padding:2px 8px;"
                 "border-bottom:1px solid #ddd;text-align:right}img{max-width:100%}"
                 "figcaption{color:#555;font-size:13px}p.headline{font-size:17px}"
                 "p.fonts{color:#777;font-size:12px;margin-top:3em}")
        note = ("<p class='fonts'>Chinese text is shown in the first of these fonts installed: "
                f"{html.escape(CJK_FONTS)}; without a CJK font it shows as boxes, and the figures' labels carry "
                "pinyin or English instead (" + html.escape(", ".join(f"{k} {v}" for k, v in self.glossary.items()))
                + ").</p>")
        doc = (f"<!DOCTYPE html><html><head><meta charset='utf-8'><title>{html.escape(self.title)}</title>"
               f"<style>{style}</style></head><body><h1>{html.escape(self.title)}</h1>"
               + "\n".join(self.parts) + note + "</body></html>\n")
        path = self.dir / REPORT_HTML
        safeio.atomic_write(path, doc)
        return path


def _bars(plt, labels, values, lows, highs, title, ylabel, horizontal=False):
    fig, ax = plt.subplots(figsize=(7, 0.35 * len(labels) + 1.5) if horizontal else (7, 3.8))
    v = np.asarray(values, float)
    err = np.vstack([v - np.asarray(lows, float), np.asarray(highs, float) - v])
    err = np.where(np.isfinite(err), err, 0)
    if horizontal:
        ax.barh(range(len(v)), v, xerr=err, color="#4c72b0", capsize=3)
        ax.set_yticks(range(len(v)), _labels(labels))
        ax.invert_yaxis()
        ax.set_xlabel(ylabel)
        ax.axvline(0, color="k", lw=0.6)
    else:
        ax.bar(range(len(v)), v, yerr=err, color="#4c72b0", capsize=3)
        ax.set_xticks(range(len(v)), _labels(labels), rotation=30, ha="right")
        ax.set_ylabel(ylabel)
        ax.axhline(0, color="k", lw=0.6)
    ax.set_title(title)
    return fig


# ---------------------------------------------------------------------------
# simulate / match runs
# ---------------------------------------------------------------------------
#: bin edges of the winner's-gain histogram, fixed in advance so that its counts stream over every hand: one bin
#: per integer 0..10, then log-spaced bins (about 24% wider each) up to 2**40 points; a larger gain counts in the
#: last bin
GAIN_EDGES = np.concatenate([np.arange(-0.5, 11), np.unique(np.round(np.geomspace(12, 2.0 ** 40, 120))) + 0.5])


class GainCounts:
    """The winner's gain (the points a won hand moves: the sum of the positive score changes) counted over the
    fixed bins :data:`GAIN_EDGES`, batch by batch (a table of :func:`caishen.sim.analysis.balance.feed_run`)."""

    def __init__(self):
        self.counts = np.zeros(len(GAIN_EDGES) - 1, np.int64)
        self.hands = 0

    def columns(self) -> list[str]:
        return ["win_type"] + [f"score_{s}" for s in range(4)]

    def add(self, df) -> "GainCounts":
        sc = np.stack([np.asarray(df[f"score_{s}"]).astype(np.int64) for s in range(4)], axis=1)
        gain = np.where(sc > 0, sc, 0).sum(axis=1)[np.asarray(df["win_type"]) >= 0]
        idx = np.clip(np.searchsorted(GAIN_EDGES, gain, side="right") - 1, 0, len(self.counts) - 1)
        self.counts += np.bincount(idx, minlength=len(self.counts))
        self.hands += len(sc)
        return self


def _gain_figure(plt, counts: np.ndarray):
    nz = np.flatnonzero(counts)
    last = int(nz[-1]) + 1
    edges = GAIN_EDGES[: last + 1]
    fig, ax = plt.subplots(figsize=(7, 3.5))
    ax.hist((edges[:-1] + edges[1:]) / 2, bins=edges, weights=counts[:last], color="#4c72b0")
    ax.set_yscale("log")
    ax.set_xscale("symlog")
    ax.set_xlim(-0.5, edges[-1])  # a gain is never negative, and the axis ends at the largest bin used
    ax.set_xlabel("points paid in a won hand")
    ax.set_ylabel("hands")
    ax.set_title("the winner's gain")
    return fig


def _report_simulate(page: _Page, run_dir: Path, plt) -> None:
    from caishen.sim.analysis import balance, summary
    from caishen.sim.selfplay import rundir, stream

    files, check = stream.verified_chunk_files(run_dir, rundir.read_run_json(run_dir))
    rows, defs, meta, done = summary.summarize_run(run_dir, verification=check)
    summary.save_summary(run_dir, rows, defs, meta)
    rules = meta.get("rules")
    policies = ",".join(meta.get("policies", []))
    page.label = f"{rules}, {policies}, {number(meta.get('games'))} hands, seed {meta.get('seed')}"
    pts = rows[(rows["section"] == "points") & (rows["metric"] == "score")]
    page.text(f"{rules}: {number(meta.get('games'))} hands, seed {meta.get('seed')}, policies {policies}, rule "
              f"options {options_text(meta.get('options'), rules)}; finished chunks {done} of {meta.get('n_chunks')}")
    dealer = pts[pts["group"].astype(str).str.contains("dealer") & ~pts["group"].astype(str).str.contains("non")]
    head = f"{rules}, {policies} at the seats, {number(meta.get('games'))} hands (seed {meta.get('seed')})"
    if len(dealer):
        d = dealer.iloc[0]
        head += (f": the dealer scores {d['value']:+.2f} points per hand [95% CI {d['ci_low']:+.2f}, "
                 f"{d['ci_high']:+.2f}]")
    page.headline(head + ".")
    page.heading("Points")
    page.figure(_bars(plt, pts["group"], pts["value"], pts["ci_low"], pts["ci_high"],
                      "score per seat-hand (95% CI over matches)", "points"), "score", "Mean score change by seat "
                "and for the dealer / non-dealers.")
    wt = rows[rows["section"] == "win type"]
    if len(wt):
        page.figure(_bars(plt, wt["group"], wt["value"], wt["ci_low"], wt["ci_high"], "share of wins", "share"),
                    "win-types", "How hands are won.")
    gain = GainCounts()
    tables = balance.run_tables(run_dir, files, meta.get("options"), extra=[gain])
    page.text(f"Every table and figure on this page covers all {gain.hands:,} hands of the verified chunks (read "
              "chunk by chunk: the memory does not grow with the hands).")
    if gain.counts.any():
        page.figure(_gain_figure(plt, gain.counts), "gain", "Distribution of the points a won hand moves (log "
                    "scales; fixed log-spaced bins).")
    page.heading("Summary")
    page.table(rows)
    for key, text in defs.items():  # what each rate counts (the 飘 rates), the intervals, the comparison
        page.text(f"{key}: {text}")
    if rules in rulesets.names():
        hooks = rulesets.get(rules).analysis_hooks()
        page.glossary.update(hooks.glossary)
        hooks.report(page, plt, tables)  # the rule set's own figures and tables


# ---------------------------------------------------------------------------
# sweeps and studies
# ---------------------------------------------------------------------------
def _report_sweep(page: _Page, run_dir: Path, plt) -> None:
    from caishen.sim.analysis import study

    doc, table = study.read_sweep(run_dir)
    axes = list(doc["grid"]["axes"])
    units = study.metric_units(doc["grid"]["rules"])
    page.label = f"{doc['grid']['rules']}, field {doc['grid']['field']}, {number(doc['walls'])} walls, seed {doc['seed']}"
    page.headline(f"{doc['grid']['rules']}: {number(len(table) // max(1, table['metric'].nunique()))} grid points on "
                  f"the same {number(doc['walls'])} walls each (seed {doc['seed']}), field {doc['grid']['field']}, "
                  "each compared with the baseline " + options_text(doc["baseline"]) + ".")
    label = pd.Series([" ".join(f"{a}={v}" for a, v in zip(axes, row)) for row in table[axes].astype(str).values],
                      index=table.index)
    for metric in dict.fromkeys(table["metric"]):
        m = table["metric"] == metric
        t = table[m]
        fig, (a1, a2) = plt.subplots(1, 2, figsize=(11, 0.35 * m.sum() + 1.8), sharey=True)
        for ax, (v, lo, hi), title in ((a1, ("value", "ci_low", "ci_high"), metric),
                                       (a2, ("diff", "diff_low", "diff_high"), f"{metric}: minus baseline")):
            val = t[v].to_numpy()
            err = np.vstack([val - t[lo].to_numpy(), t[hi].to_numpy() - val])
            ax.errorbar(val, range(len(val)), xerr=np.where(np.isfinite(err), err, 0), fmt="o", capsize=3)
            ax.axvline(0, color="k", lw=0.6)
            ax.set_title(title)
            ax.set_xlabel(ascii_label(units.get(metric, metric)))
        a1.set_yticks(range(m.sum()), _labels(label[m]))
        a1.invert_yaxis()
        page.figure(fig, f"sweep-{metric}", f"{metric} ({units.get(metric, metric)}) by grid point (95% CI over "
                    "walls) and its paired difference to the baseline point.")
    page.heading("Table")
    page.table(table)
    safeio.atomic_write(run_dir / "summary.csv", table.to_csv(index=False))


def _report_study(page: _Page, run_dir: Path, plt) -> None:
    from caishen.sim.analysis import piao_study

    doc, pts, _ = piao_study.read_points(run_dir)  # verified chunks only
    by = piao_study.PIAO_FEATURES if doc.get("decision") == "piao" else ()
    est = piao_study.estimate(pts, by=by)
    page.label = (f"decision {doc.get('decision')}, {','.join(doc.get('policies', []))}, {number(doc.get('hands'))} "
                  f"hands, seed {doc.get('seed')}")
    page.headline(f"decision {doc.get('decision')}: {number(doc.get('hands'))} hands, {doc.get('rollouts')} rollouts "
                  f"per branch, seed {doc.get('seed')}, policies {','.join(doc.get('policies', []))}; "
                  f"{number(len(pts))} decision points.")
    for feature in dict.fromkeys(est["feature"]):
        t = est[est["feature"] == feature]
        page.figure(_bars(plt, t["group"], t["diff"], t["ci_low"], t["ci_high"],
                          f"EV of the alternative minus the base, by {feature}", "points"),
                    f"study-{feature}", f"By {feature}: 95% CI over hands (points of one hand are clustered).")
    page.table(est)
    safeio.atomic_write(run_dir / "summary.csv", est.to_csv(index=False))


def _report_match(page: _Page, run_dir: Path, plt) -> None:
    from caishen.sim.analysis import arena

    summ = arena.summarize_match(run_dir)
    arena.save_summary(run_dir, summ)
    rows = pd.DataFrame(summ["policy_rows"])
    pairs = pd.DataFrame(summ["pairs"])
    page.label = f"{summ['rules']}, {', '.join(summ['policies'])}, {number(summ['walls_done'])} walls, seed {summ['seed']}"
    head = (f"{summ['rules']}: {', '.join(summ['policies'])} on {number(summ['walls_done'])} of {number(summ['walls'])} "
            f"walls, each played in {summ['seatings']} seatings (seed {summ['seed']})")
    if len(pairs):
        p0 = pairs.iloc[0]
        head += f": {p0['a']} minus {p0['b']} {p0['diff']:+.3f} points per hand [95% CI {p0['lo']:+.3f}, {p0['hi']:+.3f}]"
    page.headline(head + ".")
    page.figure(_bars(plt, rows["policy"], rows["points"], rows["lo"], rows["hi"], "points per hand",
                      "points per hand"), "match-points",
                "Mean points per hand of each policy (95% CI over walls: a wall's seat-hands are averaged first).")
    if len(pairs):
        page.figure(_bars(plt, pairs["a"] + " - " + pairs["b"], pairs["diff"], pairs["lo"], pairs["hi"],
                          "pairwise differences", "points per hand", horizontal=True), "match-pairs",
                    "Paired differences on the same walls (95% CI over walls).")
    page.heading("Table")
    page.table(rows)
    page.table(pairs)


def _report_ladder(page: _Page, run_dir: Path, plt) -> None:
    from caishen.sim.analysis import ladder

    summ = ladder.summarize_ladder(run_dir)
    ladder.save_tables(run_dir, summ)  # ladder.csv, pairs.csv, ladder.md, ladder.png, as the command writes them
    top = summ["bots_rows"][0]
    page.headline(f"{summ['rules']}: a ladder of {len(summ['bots'])} bots ({', '.join(summ['bots'])}: the field every "
                  f"rating is against), {number(summ['walls_done'])} walls per pair, seed {summ['seed']}; first "
                  f"{top['bot']} at {top['points']:+.3f} points per hand against the field [95% CI {top['lo']:+.3f}, "
                  f"{top['hi']:+.3f}].")
    page.image(run_dir / ladder.LADDER_PNG, "The ratings (Bradley-Terry, Elo scale, against this field) with their "
               "bootstrap CIs, and the paired differences of every pair (row minus column).")
    page.heading("Ratings")
    page.table(pd.DataFrame(summ["bots_rows"]))
    page.heading("Pairs")
    page.table(pd.DataFrame(summ["pairs"]))


def _report_piao(page: _Page, run_dir: Path, plt) -> None:
    from caishen.sim.analysis import piao_answer

    a = safeio.read_json(run_dir / piao_answer.ANSWER_JSON, 16 << 20, what="a piao_answer.json", constants=True)
    e = a["ev"]
    page.headline(f"{a.get('comparison', '')}: 飘 now minus keep now is {e['diff']:+.2f} points per chance [95% CI "
                  f"{e['ci_low']:+.2f}, {e['ci_high']:+.2f}] over {number(a['studied'])} chances of "
                  f"{number(a['hands'])} hands (seed {a['seed']}).")
    for g, words in (("throws", "where the bot throws by itself"), ("keeps", "where it keeps by itself")):
        o = a.get("own_choice", {}).get(g)
        if o:
            page.text(f"{words} ({o['share']:.1%} of chances): {o['ev'][0]:+.2f} [{o['ev'][1]:+.2f}, "
                      f"{o['ev'][2]:+.2f}]")
    heat = run_dir / piao_answer.HEATMAP_PNG
    if heat.is_file():
        page.image(heat, "EV of 飘 minus keep per chance by live tiles left and waits (every chance, where the bot "
                   "throws, where it keeps).")
    for name, title in ((piao_answer.TABLE_CSV, "By situation"), (piao_answer.PAIRWISE_CSV, "The check")):
        path = run_dir / name
        if path.is_file():
            page.heading(title)
            page.table(pd.read_csv(path))


def write_report(run_dir) -> Path:
    """Write the figures and ``report.html`` of ``run_dir``; returns the page's path.

    Raises ``ValueError`` for a directory that is no run (nothing written),
    an unfinished sweep, a run without a finished chunk, or a missing
    matplotlib.
    """
    d = Path(run_dir)
    kind = run_kind(d)
    plt = _plt()
    page = _Page(d, f"caishen report: {d.name} ({kind})")
    if kind == "sweep":
        _report_sweep(page, d, plt)
    elif kind == "ladder":
        _report_ladder(page, d, plt)
    elif kind == "piao":
        _report_piao(page, d, plt)
    elif kind == "study":
        _report_study(page, d, plt)
    elif kind == "match":
        _report_match(page, d, plt)
    else:
        _report_simulate(page, d, plt)
    return page.write()
