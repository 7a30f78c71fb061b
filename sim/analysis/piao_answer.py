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
   tiles, chain length, dealer, 爆头 shape, the policy's own choice), every
   cell with its chances, hands and a 95% interval clustered by hand (the
   project's intervals, :func:`caishen.sim.analysis.piao_estimate.weighted_mean_ci`)
   and the EV's parts (doubling, failure penalty, the rest: the win 飘
   unlocks and every other change of play; :mod:`caishen.sim.analysis.piao_estimate`);
   the whole table first over every chance, then again where the policy
   throws by itself and where it keeps (column ``own_choice``: ``all``,
   ``throws``, ``keeps``).  ``OUT/piao_cells.csv``: the 64 cells of the
   ``piao_table`` policy, split the same way.  ``OUT/piao_risk.csv``: each
   branch's outcome distribution per chance (quantiles of the score, the
   probability of losing 24 points or more, of a failed 飘, of a win), by
   own choice and tiles left.
3. **The heatmap** ``OUT/piao_heatmap.png``: the EV by tiles left x waits,
   one panel over every chance and one each where the policy throws and
   keeps by itself.
4. **The check on duplicate deals** (``OUT/check/``, a ``caishen sweep``
   with ``P`` as the field, or ``--field F``: any bot, an open seat
   ``python:`` / ``exec:`` included, for "which 飘 policy does best among
   *my* bot"): the implied table **on P itself**
   (``piao_table:<bits>:P``, :mod:`caishen.sim.bots.piao_table`: P plays
   every move but the 飘 decision), P, and the other 飘 decisions on the same
   base (:func:`check_policies`: the shipped table, never, always; with
   greedy also ``threshold:20``, ``threshold:40``) each play one seat on the
   same walls, so no comparison mixes two bots' strength;
   ``OUT/piao_pairwise.csv`` is every pair's paired difference of points per
   hand (row minus column) with intervals adjusted for the ``m``
   comparisons by Bonferroni (each at ``1 - 0.05 / m``, so all hold together
   with at least 95%) and Holm-adjusted p-values (:func:`pairwise`), under
   readable labels (``implied``, ``shipped``, ``never``, ``always``, ``own``:
   :func:`check_labels`; the specs beside them); ``OUT/piao_pairwise.md``
   the square matrix (too wide for a terminal: the printout lists the pairs).
   Its size follows the study's (:func:`default_check_walls`).
5. ``OUT/piao_answer.json`` and the printed answer: the comparison in
   words, the exploration rate (chances studied / all chances), the EV where
   the policy throws and where it keeps, the parts, the risk, the widest
   tiles-left half-width and, when it is above the target (0.5 points),
   how many hands would bring it there (:func:`hands_for`).

Rule options (``options``, ``caishen piao --option K=V``) apply to the
study and the check alike and are stated in every output.
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
from caishen.sim.selfplay import rundir, runner
from caishen.sim.analysis.intervals import holm  # noqa: F401  (public here too: the check's p-values)

#: default size: hands of the study; the check's walls: :func:`default_check_walls` (at most this many)
DEFAULT_HANDS = 1_000_000
DEFAULT_CHECK_WALLS = 20_000
#: the check's walls per hand of the study by default (1,000,000 hands -> 20,000 walls), and its floor
CHECK_WALLS_PER_HAND = 0.02
MIN_CHECK_WALLS = 1_000
#: the greedy 飘 policies checked beside the tables when the base is greedy
GREEDY_CHECK = ("threshold:20", "threshold:40")
#: all 64 cells of a table: 飘 at every chance (``always`` on a base)
ALL_CELLS = 2**64 - 1
#: the widest tiles-left half-width the default size aims at (points)
TARGET_HALF_WIDTH = 0.5
#: cells with fewer chances are shown grey in the heatmap and left out of the implied table
MIN_POINTS = 30
STUDY_DIR, CHECK_DIR = "study", "check"
TABLE_CSV, CELLS_CSV, PAIRWISE_CSV = "piao_table.csv", "piao_cells.csv", "piao_pairwise.csv"
RISK_CSV, PAIRWISE_MD = "piao_risk.csv", "piao_pairwise.md"
HEATMAP_PNG, ANSWER_JSON = "piao_heatmap.png", "piao_answer.json"
#: the printed answer's width: longer lines wrap (the square matrix goes to :data:`PAIRWISE_MD`)
WIDTH = 100


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


def pairwise(values: dict, confidence: float = 0.95) -> pd.DataFrame:
    """Every pair's paired difference of per-wall values, with the multiple-comparison adjustment stated.

    ``values``: ``{policy: float[W]}``, the same ``W`` walls in the same
    order for every policy (duplicate deals; each wall an independent unit).
    One row per pair ``a`` before ``b`` (the dict's order): ``a, b, walls,
    walls_differ`` (walls where the two scored differently), ``diff`` (mean
    of ``a - b``), ``ci_low, ci_high`` (Bonferroni: the Student-t interval
    at ``1 - (1 - confidence) / m`` for ``m`` pairs, on the Satterthwaite
    degrees of freedom: wide when few walls differ,
    :mod:`caishen.sim.analysis.intervals`), ``p`` (two-sided t-test of no
    difference, the same degrees of freedom), ``p_holm`` (Holm-adjusted),
    ``m``.  Raises ``ValueError`` for fewer than two policies or arrays of
    different lengths.
    """
    from scipy import stats

    from caishen.sim.analysis.intervals import cluster_mean_ci, satterthwaite_df

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
        mean, lo, hi = cluster_mean_ci(d, None, level, df="satterthwaite")
        sd = float(d.std(ddof=1)) if len(d) > 1 else float("nan")
        e = d - mean
        dof = satterthwaite_df(float(e @ e), float(np.sum(e ** 4)), len(d)) if len(d) > 1 else float("nan")
        if len(d) > 1 and sd > 0:
            p = float(2 * stats.t.sf(abs(mean) / (sd / math.sqrt(len(d))), dof))
        else:
            p = 1.0 if mean == 0 else 0.0
        rows.append((a, b, len(d), int(np.count_nonzero(d)), mean, lo, hi, p))
    t = pd.DataFrame(rows, columns=["a", "b", "walls", "walls_differ", "diff", "ci_low", "ci_high", "p"])
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
                confidence: float = 0.95, split: str | None = None) -> pd.DataFrame:
    """The EV per chance by two features' groups (:data:`caishen.sim.analysis.piao_estimate.GROUPS`): one row per
    (row group, column group) with ``points, hands, diff, ci_low, ci_high`` (weighted, clustered by hand);
    ``split``: a feature (``"own_choice"``) whose groups each get the table again after the one over every
    point, in a first column named after it (``"all"`` for every point)."""
    from caishen.sim.analysis import piao_estimate as pe

    cl = points["hand_id" if "hand_id" in points else "hand"].to_numpy()
    w = pe.point_weights(points)
    d = points["diff"].to_numpy(np.float64)
    lr = pe.group_labels(rows, points[rows].to_numpy())
    lc = pe.group_labels(cols, points[cols].to_numpy())
    splits = [("all", np.ones(len(points), bool))]
    if split is not None:
        ls = pe.group_labels(split, points[split].to_numpy())
        splits += [(g, ls == g) for g in dict.fromkeys(pe.group_labels(split, pe.GROUPS[split]))]
    out = []
    for sname, smask in splits:
        for gr in dict.fromkeys(pe.group_labels(rows, pe.GROUPS[rows])):
            for gc in dict.fromkeys(pe.group_labels(cols, pe.GROUPS[cols])):
                m = smask & (lr == gr) & (lc == gc)
                est = pe.weighted_mean_ci(d[m], w[m], cl[m], confidence)
                out.append(((sname,) if split else ()) + (gr, gc, int(m.sum()), int(len(np.unique(cl[m]))), *est))
    return pd.DataFrame(out, columns=[*([split] if split else []), rows, cols, "points", "hands", "diff", "ci_low",
                                      "ci_high"])


# ---------------------------------------------------------------------------
# the figure
# ---------------------------------------------------------------------------
def heatmap_panels(joint: pd.DataFrame, split: str | None) -> tuple[list, object]:
    """``(panels, only)`` of :func:`heatmap`: the first group (``"all"``) and every other group of ``split`` with
    some but not all of the chances; ``only``: the group holding every chance, if one does (else None)."""
    if not split:
        return [None], None
    groups = list(dict.fromkeys(joint[split]))
    total = {g: int(joint.loc[joint[split] == g, "points"].sum()) for g in groups}
    full = [g for g in groups[1:] if total[g] == total[groups[0]]]
    return [groups[0]] + [g for g in groups[1:] if 0 < total[g] < total[groups[0]]], (full[0] if full else None)


def heatmap(joint: pd.DataFrame, path, comparison: str, rows: str = "tiles_left", cols: str = "waits",
            split: str | None = None, note: str = "") -> None:
    """Write the heatmap of :func:`joint_table` to ``path`` (PNG): colour = EV of 飘 minus keep (points,
    centred at 0), each cell annotated with the EV, its 95% interval and its chances; cells with fewer than
    :data:`MIN_POINTS` chances grey.  ``split``: the table's split column: one panel per group, side by side
    (one colour scale), leaving out a group with no chance and one holding every chance (it would repeat the
    first panel: its name joins that panel's title); ``note``: a line under the title (bots, size, seed)."""
    import textwrap

    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    from caishen.sim.analysis.figures import save_figure

    panels, only = heatmap_panels(joint, split)
    rl = list(dict.fromkeys(joint[rows]))
    cll = list(dict.fromkeys(joint[cols]))
    vals = {}
    for pn in panels:
        t = joint if pn is None else joint[joint[split] == pn]
        v = np.full((len(rl), len(cll)), np.nan)
        for r in t.itertuples(index=False):
            if r.points >= MIN_POINTS:
                v[rl.index(getattr(r, rows)), cll.index(getattr(r, cols))] = r.diff
        vals[pn] = v
    finite = [np.abs(v[np.isfinite(v)]) for v in vals.values() if np.isfinite(v).any()]
    lim = float(max(x.max() for x in finite)) if finite else 1.0
    fig, axes = plt.subplots(1, len(panels), figsize=(len(panels) * (1.5 * len(cll) + 1.2) + 1.5,
                                                       0.9 * len(rl) + 2.8), squeeze=False,
                             layout="constrained")  # room for the wrapped title above the panels' titles
    cmap = plt.get_cmap("RdBu").with_extremes(bad="0.85")
    im = None
    for ax, pn in zip(axes[0], panels):
        t = joint if pn is None else joint[joint[split] == pn]
        v = vals[pn]
        im = ax.imshow(np.ma.masked_invalid(v), cmap=cmap, vmin=-lim, vmax=lim, aspect="auto")
        for r in t.itertuples(index=False):
            i, j = rl.index(getattr(r, rows)), cll.index(getattr(r, cols))
            if r.points == 0:
                txt = "n=0"
            elif r.points < MIN_POINTS or not np.isfinite(r.ci_low):
                txt = f"n={r.points}"
            else:
                txt = f"{r.diff:+.2f}\n[{r.ci_low:+.2f}, {r.ci_high:+.2f}]\nn={r.points:,}"
            dark = np.isfinite(v[i, j]) and abs(v[i, j]) > 0.6 * lim
            ax.text(j, i, txt, ha="center", va="center", fontsize=6.5, color="white" if dark else "black")
        ax.set_xticks(range(len(cll)), cll)
        ax.set_yticks(range(len(rl)), rl)
        ax.set_xlabel("waits after the throw (kinds)")
        if pn is not None:
            n = int(t["points"].sum())
            names = {"all": "every chance", "throws": "where the policy throws by itself",
                     "keeps": "where the policy keeps by itself"}
            every = {"throws": "the policy throws at every one", "keeps": "the policy keeps at every one"}
            extra = "" if only is None or pn != panels[0] else f"; {every.get(only, f'{split} = {only} at every one')}"
            ax.set_title("\n".join(textwrap.wrap(names.get(pn, f"{split} = {pn}") + f" (n={n:,}{extra})",
                                                  int(12 * len(cll) + 10))), fontsize=8)
    axes[0][0].set_ylabel("live wall tiles left")
    fig.colorbar(im, ax=list(axes[0]), label="EV of piao minus keep (points per chance)")
    plain = comparison.replace("飘", "piao").replace("财神", "caishen")
    title = "\n".join(textwrap.wrap(plain, 60 * len(panels) + 30))
    fig.suptitle(title + (f"\n{note}" if note else ""), fontsize=7, x=0.01, ha="left")
    fig.canvas.draw()  # the constrained layout places the title and the panels' titles apart
    save_figure(fig, path, dpi=110, bbox_inches="tight")
    plt.close(fig)


# ---------------------------------------------------------------------------
# the check on duplicate deals
# ---------------------------------------------------------------------------
def piao_base(policy: str) -> str:
    """The bot a table sits on for ``policy`` (normal form): ``policy`` itself, its base for a
    ``piao_table:...:BASE``, ``"greedy"`` for greedy and the greedy 飘 policies (never, always, threshold:N,
    piao_table[:BITS])."""
    from caishen.sim.bots import registry
    from caishen.sim.bots.policies import PIAO_POLICIES

    b = registry.parse(policy)
    base = registry._piao_base(b)
    if base is not None:
        return base.spec
    if b.kind == "greedy" or registry.BOTS[b.kind].piao or b.code in PIAO_POLICIES:
        return "greedy"
    return b.spec


def table_spec(bits: int, base: str) -> str:
    """The normal form of the table ``bits`` on ``base`` (``piao_table:BITS[:BASE]``)."""
    from caishen.sim.bots.registry import normalize

    return normalize(f"piao_table:{int(bits)}" + ("" if base == "greedy" else f":{base}"))


def check_labels(policy: str, bits: int) -> dict[str, str]:
    """``{label: spec}`` of the check's policies, every one on ``policy``'s base (:func:`piao_base`):
    ``implied`` (the study's table ``bits``), ``shipped`` (the default table), ``never`` and ``always`` (tables
    with no cell and every cell: on greedy, the ``never`` and ``always`` bots themselves), with greedy also
    :data:`GREEDY_CHECK`, and ``policy`` itself (under its spec); a spec already listed keeps its first
    label."""
    from caishen.sim.bots.piao_table import DEFAULT_PIAO_TABLE
    from caishen.sim.bots.registry import normalize

    base = piao_base(policy)
    labels = {"implied": table_spec(bits, base), "shipped": table_spec(DEFAULT_PIAO_TABLE, base)}
    if base == "greedy":
        labels.update({"never": "never", "always": "always", **{g: normalize(g) for g in GREEDY_CHECK}})
    else:
        labels.update({"never": table_spec(0, base), "always": table_spec(ALL_CELLS, base)})
    labels[normalize(policy)] = normalize(policy)
    out: dict[str, str] = {}
    for k, v in labels.items():
        if v not in out.values():
            out[k] = v
    return out


def check_policies(policy: str, implied) -> list[str]:
    """The specs of the check (:func:`check_labels`; ``implied``: the table's bits, or its spec
    ``piao_table:BITS[:BASE]``)."""
    from caishen.sim.bots.piao_table import parse_piao_table, split_piao_arg

    if isinstance(implied, str):
        implied = int(parse_piao_table(split_piao_arg(implied.partition(":")[2])[0])) % 2**64
    return list(check_labels(policy, int(implied)).values())


def default_check_walls(hands: int) -> int:
    """The check's walls for a study of ``hands`` hands: :data:`CHECK_WALLS_PER_HAND` of them, between
    :data:`MIN_CHECK_WALLS` and :data:`DEFAULT_CHECK_WALLS` (the check then costs a few per cent of the
    study: ~7 policies x walls one-hand deals against 2 R rollouts per studied chance)."""
    return int(min(DEFAULT_CHECK_WALLS, max(MIN_CHECK_WALLS, round(hands * CHECK_WALLS_PER_HAND))))


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
def _option_dict(rules: str, options) -> dict:
    """``options`` (``["K=V", ...]``, a dict or None) as a dict of the options given, each at its resolved value
    (``ValueError`` naming a bad option or value)."""
    from caishen.sim.selfplay import runner

    if not options:
        return {}
    if isinstance(options, dict):
        return {k: v for k, v in runner.resolve_options(rules, options).items() if k in options}
    raw = {}
    for item in options:
        if not isinstance(item, str) or "=" not in item:
            raise ValueError(f"--option {item!r}: expected KEY=VALUE")
        k, v = (x.strip() for x in item.split("=", 1))
        if k in raw:
            raise ValueError(f"--option {k!r} given twice")
        raw[k] = v
    from caishen.sim.engine import load_rules

    for k, v in raw.items():  # one value each: names the bad option or value
        load_rules(rules, {k: v})
    return {k: v for k, v in runner.resolve_options(rules, raw).items() if k in raw}


def _estimate_row(est: pd.DataFrame, own: str, feature: str = "all") -> dict | None:
    t = est[(est["own_choice"] == own) & (est["feature"] == feature)]
    return None if t.empty else t.iloc[0].to_dict()


def run(rules: str, out, *, policy: str = "greedy", keep_then: str | None = None, hands: int = DEFAULT_HANDS,
        seed: int = 0, rollouts: int = piao_study.DEFAULT_ROLLOUTS, check_walls: int | None = None,
        field: str | None = None, workers: int | None = None, progress: bool = True, options=None) -> dict:
    """Run (or resume) the 飘 study and its check into ``out``; return the answer (also ``OUT/piao_answer.json``).

    ``rules``: the rule set with the 飘 decision; ``policy``: one bot spec
    (every seat; any bot of the registry that plays ``rules``);
    ``keep_then``: the keep branch's bot after the chance (default: ``policy``
    itself, decided again at later chances); ``hands``: hands of the study;
    ``rollouts``: R per branch; ``check_walls``: walls per policy of the
    check (0 skips it; None: :func:`default_check_walls`); ``field``: the
    check's other three seats (one bot spec, default ``policy``; an open
    seat ``python:`` / ``exec:`` plays there through the arena host, in this
    process; the study itself stays inside the kernel); ``seed``: the
    study's walls (the check plays ``seed + 1``); ``options``: rule options
    (``["K=V", ...]`` or a dict) for the study and the check.  ``out`` is
    held while it runs (:func:`caishen.sim.selfplay.rundir.workspace`: its
    lock, no link inside).  Raises
    ``ValueError`` for a bad argument (the registry's message for a bad
    spec), before anything is written.

    Measured: see ``docs/studies.md`` for the default size's wall time.
    """
    from caishen.sim.analysis import markdown, piao_estimate, study
    from caishen.sim.bots.registry import check_seats, normalize, seat_workers

    check_rules(rules)
    policy = normalize(policy)
    keep = None if keep_then is None else normalize(keep_then)
    if "," in policy:
        raise ValueError(f"--policy {policy!r}: give one bot (it plays every seat)")
    field = policy if field is None else normalize(field)
    if "," in field:
        raise ValueError(f"--field {field!r}: give one bot (it plays the check's other three seats)")
    hands = piao_study._check_int("hands", hands, 1, 10**9)
    check_walls = default_check_walls(hands) if check_walls is None else \
        piao_study._check_int("check_walls", check_walls, 0, 10**9)
    opts = _option_dict(rules, options)
    if check_walls:  # the check's field (an open seat's module or program found) before the study spends its time
        from caishen.sim import engine

        name, r = engine.load_rules(rules, opts or None)
        check_seats([field], name, int(engine.engine_params(name, r).joker), label="--field")
    ex = runner.Execution(workers=workers, progress=progress)
    words = piao_study.comparison(policy, keep, per_hand=True)
    if opts:
        words += "; rule options " + ", ".join(f"{k}={v}" for k, v in opts.items())
    out = Path(out)
    with rundir.workspace(out, "飘 answer"):  # one writer, no links inside
        # a rerun resumes the study: its seconds are then this call's only, and the answer says so
        resumed = (out / STUDY_DIR).is_dir() and any((out / STUDY_DIR).iterdir())
        t0 = time.perf_counter()
        pts = piao_study.run_study(hands, seed, rollouts, "piao", policy, opts or None, out=out / STUDY_DIR,
                                   keep_then=keep, per_hand=True, execution=ex)
        study_s = time.perf_counter() - t0
        if len(pts) == 0:
            raise ValueError(f"no 飘 chance in {hands} hands of {policy}: play more hands")
        est = piao_study.estimate(pts, split="own_choice")
        est.insert(0, "comparison", words)
        cells = piao_study.table_estimate(pts, split="own_choice")
        cells.insert(0, "comparison", words)
        rk = piao_estimate.risk(pts)
        rk.insert(0, "comparison", words)
        joint = joint_table(pts, split="own_choice")
        safeio.atomic_write(out / TABLE_CSV, est.to_csv(index=False))
        safeio.atomic_write(out / CELLS_CSV, cells.to_csv(index=False))
        safeio.atomic_write(out / RISK_CSV, rk.to_csv(index=False))
        heatmap(joint, out / HEATMAP_PNG, words, split="own_choice",
                note=f"{hands:,} hands, R = {rollouts}, seed {seed}; every seat {policy}; "
                     f"{len(pts):,} chances studied; 95% CI clustered by hand")
        bits = piao_study.piao_table_bits(pts, MIN_POINTS)
        base = piao_base(policy)
        implied = table_spec(bits, base)
        allrows = est[est["own_choice"] == "all"]
        tl = allrows[allrows["feature"] == "tiles_left"]
        widest = float(((tl["ci_high"] - tl["ci_low"]) / 2).max())
        n_chances = float(pts["chances"].sum())
        first = allrows.iloc[0]

        def triple(row, k="diff", lo="ci_low", hi="ci_high"):
            return [float(row[k]), float(row[lo]), float(row[hi])]

        own = {}
        for g in ("throws", "keeps"):
            r = _estimate_row(est, g)
            if r is not None:
                own[g] = {"ev": triple(r), "chances": int(r["points"]),
                          "share": float(pts.loc[pts["own_choice"] == (g == "throws"), "chances"].sum() / n_chances)}
        risk_all = rk[(rk["own_choice"] == "all") & (rk["group"] == "all")].set_index("branch")
        answer = {
            "comparison": words, "rules": rules, "options": opts, "policy": policy, "keep_then": keep or policy,
            "hands": int(hands), "seed": int(seed), "rollouts": int(rollouts), "study_seconds": round(study_s, 1),
            "study_resumed": bool(resumed),
            "chances": int(n_chances), "studied": int(len(pts)),
            "exploration_rate": float(len(pts) / n_chances),
            "exploration": "one chance per hand with a chance, drawn uniformly among its chances; the real hand is "
                           f"played by {policy} at every chance (the study never makes it throw or keep: the field is "
                           f"{policy}'s own)",
            "ev": {k: float(first[k]) for k in ("diff", "ci_low", "ci_high")},
            "own_choice": own, "own_worth": float(first["own_worth"]),
            "parts": {p: triple(first, p, f"{p}_low", f"{p}_high") for p in ("doubling", "penalty", "rest")},
            "risk": {b: {k: float(risk_all.loc[b, k]) for k in ("mean", "sd", "q01", "q50", "q99", "p_loss",
                                                                "p_failed", "p_won")}
                     for b in ("piao", "keep") if b in risk_all.index},
            "tiles_left": {g: [float(d), float(lo), float(hi), int(n)] for g, d, lo, hi, n in
                           zip(tl["group"], tl["diff"], tl["ci_low"], tl["ci_high"], tl["points"])},
            "widest_tiles_left_half_width": widest, "target_half_width": TARGET_HALF_WIDTH,
            "hands_for_target": hands_for(hands, widest), "implied_policy": implied, "implied_bits": int(bits),
            "base": base,
        }
        if check_walls:
            labels = check_labels(policy, bits)
            pols = list(labels.values())
            t1 = time.perf_counter()
            check_ex = runner.Execution(workers=seat_workers([field], workers), progress=progress)  # open: 1 process
            study.sweep(rules, out / CHECK_DIR, options=[f"{k}={v}" for k, v in opts.items()], policies=",".join(pols),
                        field=field, walls=check_walls, seed=seed + 1, execution=check_ex)
            scores = sweep_wall_scores(out / CHECK_DIR)
            pw = pairwise({lab: scores[spec] for lab, spec in labels.items()})
            from caishen.sim.bots.names import spec_words

            pw.insert(2, "a_spec", pw["a"].map(labels))
            pw.insert(3, "a_name", pw["a_spec"].map(spec_words))  # piao_table[12/64 cells]: the spec reproduces
            pw.insert(4, "b_spec", pw["b"].map(labels))
            pw.insert(5, "b_name", pw["b_spec"].map(spec_words))
            pw.insert(0, "comparison", f"points per hand of policy a minus policy b at one seat, the other three seats "
                                       f"{field}, on the same {check_walls} walls (duplicate deals)")
            safeio.atomic_write(out / PAIRWISE_CSV, pw.to_csv(index=False))
            legend = "\n".join(f"- `{lab}`: `{spec}`" for lab, spec in labels.items())
            safeio.atomic_write(out / PAIRWISE_MD, f"# 飘 check: {pw['comparison'].iloc[0]}\n\n"
                                "Row minus column, points per hand, Bonferroni-adjusted interval; "
                                "* = Holm p < 0.05.\n\n"
                                + markdown.table(pairwise_matrix(pw), index=True) + "\n\n" + legend + "\n")
            means = {lab: float(np.mean(scores[spec])) for lab, spec in labels.items()}
            answer["check"] = {"walls": check_walls, "field": field, "labels": labels, "mean_points": means,
                               "seconds": round(time.perf_counter() - t1, 1),
                               "adjustment": f"Bonferroni over m = {int(pw['m'].iloc[0])} pairs (each interval at "
                                             f"{100 * (1 - 0.05 / pw['m'].iloc[0]):.2f}%), Holm-adjusted p-values",
                               "best": max(means, key=means.get)}
        safeio.atomic_write(out / ANSWER_JSON, json.dumps(answer, indent=1, ensure_ascii=False) + "\n")
        return answer


def format_answer(answer: dict, out) -> str:
    """The printed answer of :func:`run` (comparison, estimate by own choice, parts, risk, sizes, the check's
    pairs one per line; the square matrix is in ``OUT/piao_pairwise.md``)."""
    from caishen.sim.bots.names import spec_words

    out = Path(out)
    a = answer
    e = a["ev"]

    def ci(v):
        return f"{v[0]:+.2f} [{v[1]:+.2f}, {v[2]:+.2f}]"

    lines = [f"comparison: {a['comparison']}",
             f"EV of 飘 minus keep per chance: {e['diff']:+.2f} points [95% CI {e['ci_low']:+.2f}, {e['ci_high']:+.2f}]"
             f" ({a['studied']:,} chances studied of {a['chances']:,} in {a['hands']:,} hands, R = {a['rollouts']}, "
             f"seed {a['seed']}, " + (f"resumed: {a['study_seconds']:.0f} s in this run, the earlier runs' not "
                                      "counted)" if a.get("study_resumed") else f"{a['study_seconds']:.0f} s)"),
             f"exploration rate: {a['exploration_rate']:.1%} of chances studied ({a['exploration']})"]
    for g, words in (("throws", "where it throws by itself"), ("keeps", "where it keeps by itself")):
        if g in a.get("own_choice", {}):
            o = a["own_choice"][g]
            lines.append(f"  {words} ({o['share']:.1%} of chances): {ci(o['ev'])}")
    if "own_worth" in a:
        lines.append(f"  its own choices are worth {a['own_worth']:+.2f} per chance over the other branch "
                     "(throw where it throws, keep where it keeps)")
    if "parts" in a:
        p = a["parts"]
        lines.append(f"parts of the EV: doubling (飘 links in its own win) {ci(p['doubling'])}, failure penalty "
                     f"(K-9.3) {ci(p['penalty'])}, the rest (the win it unlocks, other play) {ci(p['rest'])}")
    for b, r in a.get("risk", {}).items():
        lines.append(f"risk, {b} branch: mean {r['mean']:+.2f}, sd {r['sd']:.1f}, 1%/50%/99% {r['q01']:+.0f} / "
                     f"{r['q50']:+.0f} / {r['q99']:+.0f}, P(lose >= {piao_study.LOSS_POINTS}) {r['p_loss']:.2%}, "
                     f"P(failed 飘) {r['p_failed']:.2%}, P(win) {r['p_won']:.1%}")
    lines.append("by live wall tiles left: " + ", ".join(f"{g} {v[0]:+.2f} [{v[1]:+.2f}, {v[2]:+.2f}] n={v[3]:,}"
                                                        for g, v in a["tiles_left"].items()))
    w = a["widest_tiles_left_half_width"]
    if w <= a["target_half_width"]:
        lines.append(f"widest tiles-left half-width {w:.2f} points <= {a['target_half_width']}")
    else:
        lines.append(f"widest tiles-left half-width {w:.2f} points > {a['target_half_width']}: about "
                     f"{a['hands_for_target']:,} hands would bring it to {a['target_half_width']}")
    lines.append(f"implied policy: {spec_words(a['implied_policy'])} (飘 in the piao_table cells where the EV is "
                 f"positive over >= {MIN_POINTS} chances; {a.get('base', 'greedy')} plays every other move)")
    lines.append(f"  its spec, for --policies: {a['implied_policy']}")
    if "check" in a:
        c = a["check"]
        pw = pd.read_csv(out / PAIRWISE_CSV)
        # a label that is a spec itself (--policy piao_table:BITS) reads as words too: the specs are in the JSON
        lines.append(f"check on {c['walls']:,} duplicate walls ({c.get('seconds', 0):.0f} s), field "
                     f"{spec_words(str(c['field']))}; {c['adjustment']}; * = Holm p < 0.05; policies (specs in "
                     f"{ANSWER_JSON}): " + ", ".join(f"{spec_words(k)} = {spec_words(v)}" if k != v else spec_words(k)
                                                     for k, v in c.get("labels", {}).items()))
        for r in pw.itertuples(index=False):
            star = " *" if r.p_holm < 0.05 else ""
            a, b = spec_words(str(r.a)), spec_words(str(r.b))
            if r.diff == r.ci_low == r.ci_high == 0:  # e.g. never and greedy, which never throws by itself
                lines.append(f"  {a} minus {b}: 0, the same points on every wall (they played alike)")
            else:
                lines.append(f"  {a} minus {b}: {r.diff:+.3f} [{r.ci_low:+.3f}, {r.ci_high:+.3f}]{star}")
        lines.append("mean points per hand: " + ", ".join(f"{spec_words(p)} {v:+.3f}" for p, v in
                                                          c["mean_points"].items())
                     + f"; best: {spec_words(str(c['best']))}")
    lines.append(f"files: {out / TABLE_CSV}, {out / CELLS_CSV}, {out / RISK_CSV}, {out / HEATMAP_PNG}"
                 + (f", {out / PAIRWISE_CSV}, {out / PAIRWISE_MD}" if "check" in a else "") + f", {out / ANSWER_JSON}")
    from caishen.sim.termtext import wrap_lines

    return "\n".join(wrap_lines(lines, WIDTH))
