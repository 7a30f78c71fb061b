"""Factorial effects of a sweep: main effects and interactions of its axes, with intervals over walls.

A sweep (:mod:`caishen.sim.analysis.study`) with two or more axes of two or
more values each is a full factorial design on duplicate walls: every point
plays the same walls, so any linear contrast of the points is a per-wall
value, and its mean over walls has the Student-t interval over walls (each
wall an independent unit: :class:`caishen.sim.analysis.intervals.ClusterSums`
with one value per wall).

Effects, each against the axes' *reference* values (the sweep's baseline
point: by default the first value of every axis), of a metric ``y``:

- **main effect** of axis ``A`` at value ``a``: ``y(A=a) - y(A=a0)``,
  averaged over every combination of the other axes' values (the effect
  "on average over the design", not at the others' reference only: the
  sweep's own table gives that, its ``diff`` column);
- **interaction** of ``A=a`` and ``B=b``: ``y(a, b) - y(a0, b) - y(a, b0) +
  y(a0, b0)``, averaged over the other axes: how much the effect of ``a``
  changes when ``B`` moves from ``b0`` to ``b`` (0: the effects add up);
  of order ``k`` for ``k`` axes (the alternating sum over the ``2**k``
  corners), up to ``max_order``.

Each interval takes the Satterthwaite degrees of freedom of the per-wall
values (:mod:`caishen.sim.analysis.intervals`: an effect that shows on a
few walls only gets a wide interval).  With ``m`` effects in a table, each
interval is at 95%; ``p`` and ``p_holm``
(Holm over the table's effects of one metric) say which survive the
multiplicity.  The table streams the points' chunks side by side (memory of
one chunk per point, as the sweep's own table).
"""

from __future__ import annotations

import itertools
from pathlib import Path

import numpy as np
import pandas as pd

#: columns of :func:`factorial_table`
COLUMNS = ["metric", "effect", "order", "walls", "estimate", "ci_low", "ci_high", "sd_per_wall", "p", "p_holm"]
#: a per-wall sd or an estimate this small is 0 up to floating rounding (the contrasts average over thirds;
#: points are whole numbers and rates multiples of 1/walls, far above it)
TINY = 1e-9
#: the metrics :func:`format_effects` shows by default (those of the table that exist)
SHOWN = ("score", "dealer_score", "points_moved", "draw", "piao", "failed_piao")


def factors(doc: dict) -> dict[str, list[str]]:
    """``{axis: [reference value, other values...]}`` of a sweep.json's grid, the axes with two or more values
    only, the reference first (the sweep's baseline value of that axis)."""
    out = {}
    for axis, values in doc["grid"]["axes"].items():
        vals = [str(v) for v in values]
        if len(vals) < 2:
            continue
        ref = str(doc.get("baseline", {}).get(axis, vals[0]))
        out[axis] = [ref] + [v for v in vals if v != ref]
    return out


def is_factorial(doc: dict) -> bool:
    """True for a sweep with two or more axes of two or more values (a factorial design)."""
    return len(factors(doc)) >= 2


def contrasts(doc: dict, max_order: int = 2) -> tuple[list[str], list[int], np.ndarray]:
    """``(names, orders, C: float64[points, effects])``: the effects of the module docstring as coefficients
    over the sweep's points (in ``doc["points"]`` order), up to ``max_order`` axes at a time."""
    fac = factors(doc)
    pts = [{k: str(v) for k, v in p.items() if k != "dir"} for p in doc["points"]]
    axes = list(fac)
    names, orders, cols = [], [], []
    for k in range(1, min(max_order, len(axes)) + 1):
        for combo in itertools.combinations(axes, k):
            others = [a for a in axes if a not in combo]
            n_other = int(np.prod([len(fac[a]) for a in others])) if others else 1
            for levels in itertools.product(*(fac[a][1:] for a in combo)):
                c = np.zeros(len(pts))
                for i, p in enumerate(pts):
                    sign = 1.0
                    hit = True
                    for a, lv in zip(combo, levels):
                        if p[a] == lv:
                            continue
                        if p[a] == fac[a][0]:
                            sign = -sign
                            continue
                        hit = False
                        break
                    if hit:
                        c[i] = sign / n_other
                names.append(" x ".join(f"{a}={lv}" for a, lv in zip(combo, levels)))
                orders.append(k)
                cols.append(c)
    return names, orders, np.stack(cols, axis=1) if cols else np.zeros((len(pts), 0))


def factorial_table(out, metrics=None, max_order: int = 2, confidence: float = 0.95) -> pd.DataFrame:
    """The effects (:data:`COLUMNS`) of the finished sweep in ``out`` for each metric (default: every metric of
    the sweep).  Raises ``ValueError`` for a sweep that is not factorial (:func:`is_factorial`) or whose points
    hold different numbers of verified chunks."""
    import pyarrow.parquet as pq
    from scipy import stats

    from caishen.sim.analysis import study
    from caishen.sim.analysis.intervals import ClusterSums, holm
    from caishen.sim.selfplay import stream

    out = Path(out)
    doc = study.read_sweep_json(out)
    if not is_factorial(doc):
        raise ValueError(f"{str(out)!r}: a factorial needs two or more axes of two or more values; this sweep has "
                         + (", ".join(f"{k} ({len(v)})" for k, v in doc["grid"]["axes"].items()) or "none"))
    rules = doc["grid"]["rules"]
    names, orders, C = contrasts(doc, max_order)
    files = [stream.verified_chunk_files(out / p["dir"])[0] for p in doc["points"]]
    if len({len(f) for f in files}) != 1:
        raise ValueError("the sweep's points hold different numbers of verified chunks: rerun its command to finish")
    cols = [study._metric_columns(rules, stream.column_names(f)) for f in files]
    sums: dict[str, ClusterSums] = {}
    order_metrics: list[str] = []
    for c in range(len(files[0])):
        per_point = [study.wall_metrics(pq.read_table(files[i][c], columns=cols[i]).to_pandas(), rules)
                     for i in range(len(files))]
        if not order_metrics:
            order_metrics = [m for m in per_point[0].columns if metrics is None or m in metrics]
        n = min(len(x) for x in per_point)
        for m in order_metrics:
            Y = np.stack([x[m].to_numpy()[:n] for x in per_point], axis=1)
            sums.setdefault(m, ClusterSums(C.shape[1])).add(Y @ C)
    rows = []
    for m in order_metrics:
        s = sums[m]
        cis = s.ci(confidence, df="satterthwaite")
        dfs = s.dfs()
        sds, ps = [], []
        for j, (est, lo, hi) in enumerate(cis):
            sd = float(np.sqrt(s._ss(j, est) / (s.g - 1))) if s.g > 1 else float("nan")
            sds.append(sd)
            if s.g > 1 and sd > TINY:
                ps.append(float(2 * stats.t.sf(abs(est) / (sd / np.sqrt(s.g)), dfs[j])))
            else:  # the same on every wall: no evidence when it is 0 up to rounding (sums of thirds), proof when not
                ps.append(1.0 if abs(est) <= TINY else 0.0)
        adj = holm(ps) if ps else []
        for j, (est, lo, hi) in enumerate(cis):
            rows.append((m, names[j], orders[j], s.g, est, lo, hi, sds[j], ps[j], float(adj[j])))
    return pd.DataFrame(rows, columns=COLUMNS)


def format_effects(table: pd.DataFrame, metrics=None, full=("score",)) -> str:
    """The effects as text, one line each (``*``: Holm-adjusted p < 0.05 within its metric): every effect of
    the ``full`` metrics, and of the other shown metrics (``metrics``, default :data:`SHOWN`) only the starred
    ones (the rest are in ``factorial.csv``)."""
    shown = [m for m in (metrics or SHOWN) if m in set(table["metric"])] or list(dict.fromkeys(table["metric"]))
    from caishen.sim.termtext import wrap

    lines = wrap("factorial effects on the same walls (95% CI over walls; main = averaged over the other axes' "
                 "values; interaction = difference of differences; * = Holm p < 0.05 within the metric):",
                 indent="    ")
    for m in shown:
        t = table[table["metric"] == m]
        if m not in full:
            t = t[t["p_holm"] < 0.05]
        if t.empty:
            continue
        lines.append(f"  {m}:" if m in full else f"  {m} (the starred effects only):")
        for r in t.itertuples(index=False):
            kind = "main" if r.order == 1 else f"interaction ({r.order})"
            star = " *" if r.p_holm < 0.05 else ""
            lines += wrap(f"    {kind:<16} {r.effect:<48} {r.estimate:+.4f} [{r.ci_low:+.4f}, {r.ci_high:+.4f}]{star}",
                          indent=" " * 21)
    quiet = [m for m in shown if m not in full and not (table[table["metric"] == m]["p_holm"] < 0.05).any()]
    if quiet:
        lines.append(f"  no starred effect on {', '.join(quiet)}")
    return "\n".join(lines)
