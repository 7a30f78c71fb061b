"""``caishen piao``: the counterfactual 飘财 study as a command, its table, heatmap and check (K-9).

One run answers "at a 飘 chance, is throwing the 财神 worth more than
keeping it, and where?" for a given bot, in a directory ``OUT``:

1. **The study** (:func:`caishen.sim.analysis.piao_study.run_study` with
   ``per_hand``): every seat plays the policy ``P``; in each hand one 飘
   chance is drawn uniformly among the hand's chances (the others, and the
   real hand itself, are played by ``P``, so the field is ``P``'s own) and
   played on both ways ``R`` times on the same wall continuation: "飘 now,
   then ``P``" against "keep now, then ``Q``" (``--keep-then Q``; default
   ``P`` itself with 飘 turned off only at this chance: "keep now, decide
   again later").  The sentence of
   :func:`caishen.sim.analysis.piao_study.comparison` is in every output.
   Chunks are committed as they finish (``OUT/study/``); rerunning the same
   command resumes.
2. **The table** ``OUT/piao_table.csv``: the EV of 飘 minus keep per chance
   overall and by situation (tiles left, 财神 held, waits, live waiting
   tiles, chain length, dealer, 爆头 shape), every cell with its chances,
   hands and a 95% interval clustered by hand (the project's intervals,
   :func:`caishen.sim.analysis.piao_study.weighted_mean_ci`); and
   ``OUT/piao_cells.csv``, the 64 cells of the ``piao_table`` policy.
3. **The heatmap** ``OUT/piao_heatmap.png``: the EV by tiles left x waits.
4. **The check on duplicate deals** (``OUT/check/``, a ``caishen sweep``
   with ``P`` as the field): the implied policy ``piao_table:<bits>`` and
   the other 飘 policies (:data:`CHECK_POLICIES`, and ``P``) each play one
   seat on the same walls; ``OUT/piao_pairwise.csv`` is every pair's paired
   difference of points per hand (row minus column) with intervals
   adjusted for the ``m`` comparisons by Bonferroni (each at ``1 - 0.05 /
   m``, so all hold together with at least 95%) and Holm-adjusted p-values
   (:func:`pairwise`).
5. ``OUT/piao_answer.json`` and the printed answer: the comparison in
   words, the exploration rate (chances studied / all chances), the widest
   tiles-left half-width and, when it is above the target (0.5 points),
   how many hands would bring it there (:func:`hands_for`).
"""

from __future__ import annotations

import json
import math
import time
from pathlib import Path

import numpy as np
import pandas as pd

from caishen.sim import safeio
from caishen.sim.analysis import piao_study

#: default size: hands of the study and walls of the check (measured in :func:`run`'s docstring)
DEFAULT_HANDS = 1_000_000
DEFAULT_CHECK_WALLS = 20_000
#: the 飘 policies the implied one is checked against (with the study's policy)
CHECK_POLICIES = ("piao_table", "always", "never", "threshold:20", "threshold:40")
#: the widest tiles-left half-width the default size aims at (points)
TARGET_HALF_WIDTH = 0.5
#: cells with fewer chances are shown grey in the heatmap and left out of the implied table
MIN_POINTS = 30
STUDY_DIR, CHECK_DIR = "study", "check"
TABLE_CSV, CELLS_CSV, PAIRWISE_CSV = "piao_table.csv", "piao_cells.csv", "piao_pairwise.csv"
HEATMAP_PNG, ANSWER_JSON = "piao_heatmap.png", "piao_answer.json"


def piao_rules() -> str:
    """The rule set whose analysis names the ``piao`` decision."""
    return piao_study.decisions()["piao"][1]


def check_rules(rules: str) -> str:
    """``rules`` if it has the 飘 decision, else ``ValueError`` naming it and the one that has."""
    from caishen.sim.rules import base as rulesets

    if rules not in rulesets.names():
        raise ValueError(f"unknown rule set {rules!r}; known: {', '.join(rulesets.names())}")
    if rules != piao_rules():
        raise ValueError(f"rule set {rules!r} has no 飘 decision (no 财神 to throw, K-9.1); the 飘 study runs "
                         f"under {piao_rules()!r}")
    return rules


# ---------------------------------------------------------------------------
# statistics
# ---------------------------------------------------------------------------
def hands_for(hands: int, half_width: float, target: float = TARGET_HALF_WIDTH) -> int:
    """Hands for a half-width of ``target`` when ``hands`` gave ``half_width`` (the width falls as
    ``1 / sqrt(hands)``); ``hands`` itself when it is already there."""
    if not np.isfinite(half_width):
        return -1
    if half_width <= target:
        return int(hands)
    return int(math.ceil(hands * (half_width / target) ** 2))


def holm(p) -> np.ndarray:
    """Holm's step-down adjusted p-values of ``p: float[m]`` (each at most 1, monotone in the order of p)."""
    p = np.asarray(p, np.float64)
    m = len(p)
    order = np.argsort(p, kind="stable")
    adj = np.empty(m)
    run = 0.0
    for k, i in enumerate(order):
        run = max(run, min(1.0, (m - k) * p[i]))
        adj[i] = run
    return adj


def pairwise(values: dict, confidence: float = 0.95) -> pd.DataFrame:
    """Every pair's paired difference of per-wall values, with the multiple-comparison adjustment stated.

    ``values``: ``{policy: float[W]}``, the same ``W`` walls in the same
    order for every policy (duplicate deals; each wall an independent unit).
    One row per pair ``a`` before ``b`` (the dict's order): ``a, b, walls,
    diff`` (mean of ``a - b``), ``ci_low, ci_high`` (Bonferroni: the
    Student-t interval at ``1 - (1 - confidence) / m`` for ``m`` pairs),
    ``p`` (two-sided t-test of no difference), ``p_holm`` (Holm-adjusted),
    ``m``.  Raises ``ValueError`` for fewer than two policies or arrays of
    different lengths.
    """
    from scipy import stats

    from caishen.sim.analysis.intervals import cluster_mean_ci

    names = list(values)
    if len(names) < 2:
        raise ValueError(f"pairwise needs two policies or more, got {len(names)}")
    lens = {len(np.asarray(values[k])) for k in names}
    if len(lens) != 1:
        raise ValueError(f"the policies' per-wall values have different lengths {sorted(lens)}: not the same walls")
    pairs = [(a, b) for i, a in enumerate(names) for b in names[i + 1:]]
    m = len(pairs)
    level = 1 - (1 - confidence) / m
    rows = []
    for a, b in pairs:
        d = np.asarray(values[a], np.float64) - np.asarray(values[b], np.float64)
        mean, lo, hi = cluster_mean_ci(d, None, level)
        sd = float(d.std(ddof=1)) if len(d) > 1 else float("nan")
        if len(d) > 1 and sd > 0:
            p = float(2 * stats.t.sf(abs(mean) / (sd / math.sqrt(len(d))), len(d) - 1))
        else:
            p = 1.0 if mean == 0 else 0.0
        rows.append((a, b, len(d), mean, lo, hi, p))
    t = pd.DataFrame(rows, columns=["a", "b", "walls", "diff", "ci_low", "ci_high", "p"])
    t["p_holm"] = holm(t["p"].to_numpy())
    t["m"] = m
    return t


def pairwise_matrix(pairs: pd.DataFrame) -> pd.DataFrame:
    """The square table of :func:`pairwise`'s rows: cell (row, column) = ``row minus column`` with its
    adjusted interval, as text; ``*`` marks a Holm-adjusted p below 0.05."""
    names = list(dict.fromkeys([*pairs["a"], *pairs["b"]]))
    mat = pd.DataFrame("", index=names, columns=names)
    for r in pairs.itertuples(index=False):
        star = "*" if r.p_holm < 0.05 else ""
        mat.loc[r.a, r.b] = f"{r.diff:+.3f} [{r.ci_low:+.3f}, {r.ci_high:+.3f}]{star}"
        mat.loc[r.b, r.a] = f"{-r.diff:+.3f} [{-r.ci_high:+.3f}, {-r.ci_low:+.3f}]{star}"
    for n in names:
        mat.loc[n, n] = "."
    return mat


def joint_table(points: pd.DataFrame, rows: str = "tiles_left", cols: str = "waits",
                confidence: float = 0.95) -> pd.DataFrame:
    """The EV per chance by two features' groups (:data:`caishen.sim.analysis.piao_study.GROUPS`): one row per
    (row group, column group) with ``points, hands, diff, ci_low, ci_high`` (weighted, clustered by hand)."""
    cl = points["hand_id" if "hand_id" in points else "hand"].to_numpy()
    w = piao_study.point_weights(points)
    d = points["diff"].to_numpy(np.float64)
    lr = piao_study.group_labels(rows, points[rows].to_numpy())
    lc = piao_study.group_labels(cols, points[cols].to_numpy())
    out = []
    for gr in dict.fromkeys(piao_study.group_labels(rows, piao_study.GROUPS[rows])):
        for gc in dict.fromkeys(piao_study.group_labels(cols, piao_study.GROUPS[cols])):
            m = (lr == gr) & (lc == gc)
            est = piao_study.weighted_mean_ci(d[m], w[m], cl[m], confidence)
            out.append((gr, gc, int(m.sum()), int(len(np.unique(cl[m]))), *est))
    return pd.DataFrame(out, columns=[rows, cols, "points", "hands", "diff", "ci_low", "ci_high"])


# ---------------------------------------------------------------------------
# the figure
# ---------------------------------------------------------------------------
def heatmap(joint: pd.DataFrame, path, comparison: str, rows: str = "tiles_left", cols: str = "waits") -> None:
    """Write the heatmap of :func:`joint_table` to ``path`` (PNG): colour = EV of 飘 minus keep (points,
    centred at 0), each cell annotated with the EV, its 95% interval and its chances; cells with fewer than
    :data:`MIN_POINTS` chances grey."""
    import textwrap

    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    from matplotlib import font_manager

    from caishen.sim.analysis.report import save_figure

    rl = list(dict.fromkeys(joint[rows]))
    cll = list(dict.fromkeys(joint[cols]))
    v = np.full((len(rl), len(cll)), np.nan)
    for r in joint.itertuples(index=False):
        i, j = rl.index(getattr(r, rows)), cll.index(getattr(r, cols))
        if r.points >= MIN_POINTS:
            v[i, j] = r.diff
    lim = float(np.nanmax(np.abs(v))) if np.isfinite(v).any() else 1.0
    cjk = [f.name for f in font_manager.fontManager.ttflist if "CJK" in f.name or "Noto Sans SC" in f.name]
    if cjk:
        plt.rcParams["font.family"] = [cjk[0], "DejaVu Sans"]
    fig, ax = plt.subplots(figsize=(1.5 * len(cll) + 2.5, 0.9 * len(rl) + 2.4))
    cmap = plt.get_cmap("RdBu").with_extremes(bad="0.85")
    im = ax.imshow(np.ma.masked_invalid(v), cmap=cmap, vmin=-lim, vmax=lim, aspect="auto")
    for r in joint.itertuples(index=False):
        i, j = rl.index(getattr(r, rows)), cll.index(getattr(r, cols))
        if r.points == 0:
            txt = "n=0"
        elif r.points < MIN_POINTS or not np.isfinite(r.ci_low):
            txt = f"n={r.points}"
        else:
            txt = f"{r.diff:+.2f}\n[{r.ci_low:+.2f}, {r.ci_high:+.2f}]\nn={r.points:,}"
        dark = np.isfinite(v[i, j]) and abs(v[i, j]) > 0.6 * lim
        ax.text(j, i, txt, ha="center", va="center", fontsize=7, color="white" if dark else "black")
    ax.set_xticks(range(len(cll)), cll)
    ax.set_yticks(range(len(rl)), rl)
    ax.set_xlabel("waits after the throw (kinds)")
    ax.set_ylabel("live wall tiles left")
    fig.colorbar(im, ax=ax, label="EV of piao minus keep (points per chance)")
    plain = comparison.replace("飘", "piao").replace("财神", "caishen")
    ax.set_title("\n".join(textwrap.wrap(plain, 90)), fontsize=7, loc="left")
    fig.tight_layout()
    save_figure(fig, path, dpi=110)
    plt.close(fig)


# ---------------------------------------------------------------------------
# the check on duplicate deals
# ---------------------------------------------------------------------------
def check_policies(policy: str, implied: str) -> list[str]:
    """The policies of the check: the implied one, :data:`CHECK_POLICIES` and ``policy``, in normal form, once
    each."""
    from caishen.sim.bots.registry import normalize

    return list(dict.fromkeys(normalize(p) for p in (implied, *CHECK_POLICIES, policy)))


def sweep_wall_scores(out) -> dict[str, np.ndarray]:
    """``{policy: float64[W]}``: the hero's points per wall of each policy point of a finished sweep (the same
    walls in the same order at every point)."""
    import pyarrow.parquet as pq

    from caishen.sim.analysis import study
    from caishen.sim.selfplay import stream

    doc = study.read_sweep_json(out)
    rules = doc["grid"]["rules"]
    got = {}
    for p in doc["points"]:
        files = stream.verified_chunk_files(Path(out) / p["dir"])[0]
        cols = study._metric_columns(rules, stream.column_names(files))
        got[p[study.POLICY_AXIS]] = np.concatenate(
            [study.wall_metrics(pq.read_table(f, columns=cols).to_pandas(), rules)["score"].to_numpy() for f in files])
    return got


# ---------------------------------------------------------------------------
# the command
# ---------------------------------------------------------------------------
def run(rules: str, out, *, policy: str = "greedy", keep_then: str | None = None, hands: int = DEFAULT_HANDS,
        seed: int = 0, rollouts: int = piao_study.DEFAULT_ROLLOUTS, check_walls: int = DEFAULT_CHECK_WALLS,
        workers: int | None = None, progress: bool = True) -> dict:
    """Run (or resume) the 飘 study and its check into ``out``; return the answer (also ``OUT/piao_answer.json``).

    ``rules``: the rule set with the 飘 decision; ``policy``: one bot spec
    (every seat; any bot of the registry that plays ``rules``);
    ``keep_then``: the keep branch's bot after the chance (default: ``policy``
    itself, decided again at later chances); ``hands``: hands of the study;
    ``rollouts``: R per branch; ``check_walls``: walls per policy of the
    check (0 skips it); ``seed``: the study's walls (the check plays
    ``seed + 1``).  Raises ``ValueError`` for a bad argument (the registry's
    message for a bad spec), before anything is written.

    Measured: see the README (Studies) for the default size's wall time.
    """
    from caishen.sim.analysis import study
    from caishen.sim.bots.registry import normalize

    check_rules(rules)
    policy = normalize(policy)
    keep = None if keep_then is None else normalize(keep_then)
    if "," in policy:
        raise ValueError(f"--policy {policy!r}: give one bot (it plays every seat)")
    check_walls = piao_study._check_int("check_walls", check_walls, 0, 10**9)
    words = piao_study.comparison(policy, keep, per_hand=True)
    out = Path(out)
    t0 = time.perf_counter()
    pts = piao_study.run_study(hands, seed, rollouts, "piao", policy, None, workers=workers,
                               out=out / STUDY_DIR, progress=progress, keep_then=keep, per_hand=True)
    study_s = time.perf_counter() - t0
    if len(pts) == 0:
        raise ValueError(f"no 飘 chance in {hands} hands of {policy}: play more hands")
    est = piao_study.estimate(pts)
    est.insert(0, "comparison", words)
    cells = piao_study.table_estimate(pts)
    cells.insert(0, "comparison", words)
    joint = joint_table(pts)
    safeio.atomic_write(out / TABLE_CSV, est.to_csv(index=False))
    safeio.atomic_write(out / CELLS_CSV, cells.to_csv(index=False))
    heatmap(joint, out / HEATMAP_PNG, words)
    bits = piao_study.piao_table_bits(pts, MIN_POINTS)
    implied = f"piao_table:{bits}"
    tl = est[est["feature"] == "tiles_left"]
    widest = float(((tl["ci_high"] - tl["ci_low"]) / 2).max())
    n_chances = float(pts["chances"].sum())
    answer = {
        "comparison": words, "rules": rules, "policy": policy, "keep_then": keep or policy,
        "hands": int(hands), "seed": int(seed), "rollouts": int(rollouts), "study_seconds": round(study_s, 1),
        "chances": int(n_chances), "studied": int(len(pts)),
        "exploration_rate": float(len(pts) / n_chances),
        "exploration": "one chance per hand with a chance, drawn uniformly among its chances; the real hand is "
                       f"played by {policy} at every chance (the study never makes it throw or keep: the field is {policy}'s own)",
        "ev": {k: float(est.iloc[0][k]) for k in ("diff", "ci_low", "ci_high")},
        "tiles_left": {g: [float(d), float(lo), float(hi), int(n)] for g, d, lo, hi, n in
                       zip(tl["group"], tl["diff"], tl["ci_low"], tl["ci_high"], tl["points"])},
        "widest_tiles_left_half_width": widest, "target_half_width": TARGET_HALF_WIDTH,
        "hands_for_target": hands_for(hands, widest), "implied_policy": implied,
    }
    if check_walls:
        pols = check_policies(policy, implied)
        study.sweep(rules, out / CHECK_DIR, policies=",".join(pols), field=policy, walls=check_walls, seed=seed + 1,
                    workers=workers, progress=progress)
        scores = sweep_wall_scores(out / CHECK_DIR)
        pw = pairwise({p: scores[p] for p in pols})
        pw.insert(0, "comparison", f"points per hand of policy a minus policy b at one seat, the other three seats "
                                   f"{policy}, on the same {check_walls} walls (duplicate deals)")
        safeio.atomic_write(out / PAIRWISE_CSV, pw.to_csv(index=False))
        means = {p: float(np.mean(v)) for p, v in scores.items()}
        answer["check"] = {"walls": check_walls, "field": policy, "mean_points": means,
                           "adjustment": f"Bonferroni over m = {int(pw['m'].iloc[0])} pairs (each interval at "
                                         f"{100 * (1 - 0.05 / pw['m'].iloc[0]):.2f}%), Holm-adjusted p-values",
                           "best": max(means, key=means.get)}
    safeio.atomic_write(out / ANSWER_JSON, json.dumps(answer, indent=1, ensure_ascii=False) + "\n")
    return answer


def format_answer(answer: dict, out) -> str:
    """The printed answer of :func:`run` (comparison, estimate, rate, sizes, the check's matrix)."""
    out = Path(out)
    a = answer
    e = a["ev"]
    lines = [f"comparison: {a['comparison']}",
             f"EV of 飘 minus keep per chance: {e['diff']:+.2f} points [95% CI {e['ci_low']:+.2f}, {e['ci_high']:+.2f}]"
             f" ({a['studied']:,} chances studied of {a['chances']:,} in {a['hands']:,} hands, R = {a['rollouts']}, "
             f"{a['study_seconds']:.0f} s)",
             f"exploration rate: {a['exploration_rate']:.1%} of chances studied ({a['exploration']})",
             "by live wall tiles left: " + ", ".join(f"{g} {v[0]:+.2f} [{v[1]:+.2f}, {v[2]:+.2f}] n={v[3]:,}"
                                                    for g, v in a["tiles_left"].items())]
    w = a["widest_tiles_left_half_width"]
    if w <= a["target_half_width"]:
        lines.append(f"widest tiles-left half-width {w:.2f} points <= {a['target_half_width']}")
    else:
        lines.append(f"widest tiles-left half-width {w:.2f} points > {a['target_half_width']}: about "
                     f"{a['hands_for_target']:,} hands would bring it to {a['target_half_width']}")
    lines.append(f"implied policy: {a['implied_policy']} (飘 in the piao_table cells where the EV is positive over "
                 f">= {MIN_POINTS} chances, "
                 "greedy's play otherwise: the 飘 policies are greedy bots, whatever the study's policy)")
    if "check" in a:
        c = a["check"]
        pw = pd.read_csv(out / PAIRWISE_CSV)
        lines.append(f"check on {c['walls']:,} duplicate walls, field {c['field']}: points per hand of the row's "
                     f"policy minus the column's; {c['adjustment']}; * = Holm p < 0.05")
        with pd.option_context("display.width", 250, "display.max_colwidth", 40):
            lines.append(pairwise_matrix(pw).to_string())
        lines.append("mean points per hand: " + ", ".join(f"{p} {v:+.3f}" for p, v in c["mean_points"].items())
                     + f"; best: {c['best']}")
    lines.append(f"files: {out / TABLE_CSV}, {out / CELLS_CSV}, {out / HEATMAP_PNG}"
                 + (f", {out / PAIRWISE_CSV}" if "check" in a else "") + f", {out / ANSWER_JSON}")
    return "\n".join(lines)

