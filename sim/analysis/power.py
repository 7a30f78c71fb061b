"""How many walls for a target interval: ``caishen power`` (issue 27 item 4).

Every interval of a sweep or a match is over walls, each wall its own
independent unit, so a mean over ``n`` walls has the Student-t half-width

    h(n) = t(1 - (1 - c) / 2, n - 1) * sd / sqrt(n)

(``sd``: the spread of the per-wall values -- a policy's points per hand,
or the paired difference of two policies or grid points on the same wall;
``c``: the confidence, 0.95).  :func:`half_width` is ``h(n)``;
:func:`walls_for` the smallest ``n >= 2`` with ``h(n) <= target``.  A pilot
run gives ``sd``: :func:`caishen.sim.analysis.intervals.sd_from_ci` inverts ``h`` on an interval it
printed, exactly (the same formula, :func:`caishen.sim.analysis.intervals.cluster_mean_ci`
with one cluster per wall), and :func:`pilot_sds` reads every per-wall sd of
a finished sweep (``sweep.csv``: the ``score`` metric of each point and its
difference to the baseline) or match (``match.json``: each policy's points
and each pair's difference).  ``caishen sweep`` and ``caishen match`` print
the same sds.

The pilot's ``sd`` is itself an estimate, and for the difference of two
policies that play alike on most walls a poor one: it rests on the few walls
where they differ.  So a pilot's sds come with their own 95% interval
(:func:`sd_interval`: Bonett's (2006) interval for a standard deviation,
which takes the values' kurtosis into account and so widens when a few walls
carry the whole spread), read from the pilot's per-wall values, and
:func:`plan` sizes on the interval's **upper bound** (``walls_for_target``;
``walls_at_estimate`` is what the point estimate alone would say).  A pilot
in which no wall differed says nothing about the sd: its bound is NaN and the
plan says so.
"""

from __future__ import annotations

import math
import os
from pathlib import Path

import numpy as np
import pandas as pd

from caishen.sim.analysis.intervals import sd_from_ci  # noqa: F401  (re-exported: the inverse of half_width)

CONFIDENCE = 0.95
#: the most walls :func:`walls_for` returns (beyond it: ValueError)
MAX_WALLS = 10**12


def _t(n: int, confidence: float) -> float:
    from scipy.stats import t

    return float(t.ppf(0.5 + confidence / 2, n - 1))


def _check(name: str, value, lo_open: float = 0.0) -> float:
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value) or value <= lo_open:
        raise ValueError(f"{name} {value!r}: must be a finite number > {lo_open:g}")
    return float(value)


def _check_confidence(confidence) -> float:
    c = _check("confidence", confidence)
    if not c < 1:
        raise ValueError(f"confidence {confidence!r}: must be in (0, 1)")
    return c


def half_width(sd: float, walls: int, confidence: float = CONFIDENCE) -> float:
    """The half-width (same unit as ``sd``) of the Student-t interval of a mean over ``walls`` independent walls
    (``walls >= 2``) with per-wall spread ``sd >= 0``.  Raises ``ValueError`` naming a bad value."""
    if isinstance(sd, bool) or not isinstance(sd, (int, float)) or not math.isfinite(sd) or sd < 0:
        raise ValueError(f"sd {sd!r}: must be a finite number >= 0")
    if isinstance(walls, bool) or not isinstance(walls, int) or not 2 <= walls <= MAX_WALLS:
        raise ValueError(f"walls {walls!r}: must be an integer in 2..{MAX_WALLS:.0e}")
    c = _check_confidence(confidence)
    return _t(walls, c) * (float(sd) / math.sqrt(walls))  # sd / sqrt first: no overflow before it must


def walls_for(sd: float, target: float, confidence: float = CONFIDENCE) -> int:
    """The fewest walls (>= 2) whose interval half-width is at most ``target`` (same unit as ``sd``).

    Raises ``ValueError`` for a negative or non-finite ``sd``, a ``target <= 0``, or more walls than
    :data:`MAX_WALLS`."""
    target = _check("half-width", target)
    if isinstance(sd, bool) or not isinstance(sd, (int, float)) or not math.isfinite(sd) or sd < 0:
        raise ValueError(f"sd {sd!r}: must be a finite number >= 0")
    c = _check_confidence(confidence)
    if sd == 0:
        return 2
    z = _t(10**9, c)  # the normal quantile
    log_n = 2 * (math.log(z) + math.log(sd) - math.log(target))  # in logs: sd / target may overflow a float

    def too_many(log_n: float) -> ValueError:
        e10 = log_n / math.log(10)
        return ValueError(f"a half-width of {target:g} with sd {sd:g} needs about {10 ** (e10 % 1):.3g}e+{int(e10)} "
                          f"walls (over {MAX_WALLS:g})")

    if log_n > math.log(MAX_WALLS):
        raise too_many(log_n)
    n = max(2, math.ceil(math.exp(log_n)))
    while half_width(sd, n, c) > target:  # t > z: a few more walls
        n += max(1, n // 1000)
        if n > MAX_WALLS:
            raise too_many(math.log(n))
    while n > 2 and half_width(sd, n - 1, c) <= target:
        n -= 1
    return n


def sd_interval(values, confidence: float = CONFIDENCE) -> tuple[float, float, float]:
    """``(sd, low, high)``: the sample sd (ddof 1) of ``values`` with Bonett's (2006) interval for a standard
    deviation (log scale, kurtosis-adjusted, trimmed-mean centre for the kurtosis).  NaN bounds for fewer than
    5 values or values without spread (then no pilot knows the sd).  Raises ``ValueError`` for a non-finite
    value."""
    from scipy import stats

    x = np.asarray(values, np.float64)
    if not np.all(np.isfinite(x)):
        raise ValueError("the pilot's per-wall values hold a NaN or infinite value")
    n = len(x)
    if n < 2:
        return float("nan"), float("nan"), float("nan")
    s2 = float(x.var(ddof=1))
    if n < 5 or s2 <= 0:
        return math.sqrt(s2), float("nan"), float("nan")
    c = _check_confidence(confidence)
    z = float(stats.norm.ppf(0.5 + c / 2))
    m = float(stats.trim_mean(x, 1 / (2 * math.sqrt(n - 4))))
    d = x - x.mean()
    kurt = n * float(np.sum((x - m) ** 4)) / float(d @ d) ** 2
    cc = n / (n - z)
    se = cc * math.sqrt(max(kurt - (n - 3) / n, 0.0) / (n - 1))
    centre = math.log(cc * s2)
    return math.sqrt(s2), math.sqrt(math.exp(centre - z * se)), math.sqrt(math.exp(centre + z * se))


def _sweep_wall_values(d: Path, doc: dict, metric: str) -> dict[str, np.ndarray]:
    """``{point label: float64[W]}``: the sweep's per-wall ``metric`` at each point (the same walls, in order)."""
    import pyarrow.parquet as pq

    from caishen.sim.analysis import study
    from caishen.sim.selfplay import stream

    rules = doc["grid"]["rules"]
    axes = list(doc["grid"]["axes"])
    out = {}
    for p in doc["points"]:
        files = stream.verified_chunk_files(d / p["dir"])[0]
        cols = study._metric_columns(rules, stream.column_names(files))
        parts = [study.wall_metrics(pq.read_table(f, columns=cols).to_pandas(), rules) for f in files]
        if parts and metric not in parts[0]:
            raise ValueError(f"{str(d)!r}: the sweep has no metric {metric!r}; it has {', '.join(parts[0].columns)}")
        out[" ".join(f"{a}={p[a]}" for a in axes)] = np.concatenate([x[metric].to_numpy() for x in parts]) \
            if parts else np.zeros(0)
    return out


def _sd_row(quantity: str, x: np.ndarray, confidence: float) -> tuple:
    sd, lo, hi = sd_interval(x, confidence)
    return (quantity, len(x), float(x.mean()) if len(x) else float("nan"), sd, lo, hi, int(np.count_nonzero(x)))


def pilot_sds(run_dir: str | os.PathLike, metric: str = "score", confidence: float = CONFIDENCE) -> pd.DataFrame:
    """The per-wall sds of a finished pilot with their own intervals: ``quantity, walls, value, sd, sd_low,
    sd_high, walls_nonzero`` (one row per quantity; :func:`sd_interval` on the pilot's per-wall values).

    A sweep directory (``sweep.json``): for each grid point the ``metric``'s
    per-wall value and its difference to the baseline point; a match
    directory (``run.json`` of a match): each policy's points per hand and
    each pair's difference.  Raises ``ValueError`` for a directory that is
    neither, or a sweep without ``metric``.
    """
    d = Path(run_dir)
    rows = []
    if (d / "sweep.json").exists():
        from caishen.sim.analysis import study

        doc, _ = study.read_sweep(d)
        axes = list(doc["grid"]["axes"])
        vals = _sweep_wall_values(d, doc, metric)
        base = {a: doc["baseline"].get(a) for a in axes}
        for p in doc["points"]:
            where = " ".join(f"{a}={p[a]}" for a in axes)
            bwhere = " ".join(f"{a}={base[a] if base[a] is not None else p[a]}" for a in axes)
            x = vals[where]
            rows.append(_sd_row(f"{metric} at {where}", x, confidence))
            if bwhere != where:
                y = vals[bwhere]
                k = min(len(x), len(y))
                rows.append(_sd_row(f"{metric} at {where} minus {bwhere}", x[:k] - y[:k], confidence))
    elif (d / "run.json").exists():
        from caishen.sim.analysis import arena

        s = arena.summarize_match(d)
        pts = np.concatenate([v["points"] for v, _ in arena.iter_wall_values(d)])
        for r in s["policy_rows"]:
            rows.append(_sd_row(f"points of {r['index']}:{r['policy']}", pts[:, r["index"]], confidence))
        for p in s["pairs"]:
            rows.append(_sd_row(f"points of {p['ia']}:{p['a']} minus {p['ib']}:{p['b']}",
                                pts[:, p["ia"]] - pts[:, p["ib"]], confidence))
    else:
        raise ValueError(f"{str(d)!r} is neither a sweep (no sweep.json) nor a match directory (no run.json)")
    return pd.DataFrame(rows, columns=["quantity", "walls", "value", "sd", "sd_low", "sd_high", "walls_nonzero"])


def plan(sds: pd.DataFrame, target: float | None = None, walls: int | None = None,
         confidence: float = CONFIDENCE) -> pd.DataFrame:
    """``sds`` (``quantity, sd`` and maybe ``sd_high``) with ``walls_for_target`` (walls for a half-width of
    ``target`` at the sd's upper bound ``sd_high`` where there is one; -1 where the bound is unknown) and
    ``walls_at_estimate`` (at the sd itself), and/or ``half_width_at`` (the half-width ``walls`` walls buy at
    the sd) and ``half_width_at_high`` (at its upper bound).  ``ValueError`` when neither is given or one is
    bad."""
    if target is None and walls is None:
        raise ValueError("give a target half-width (--half-width) or a number of walls (--walls), or both")
    out = sds.copy()
    high = out["sd_high"] if "sd_high" in out else out["sd"]
    if target is not None:
        _check("half-width", target)
        out["walls_for_target"] = [walls_for(s, target, confidence) if math.isfinite(s) else -1 for s in high]
        if "sd_high" in out:
            out["walls_at_estimate"] = [walls_for(s, target, confidence) if math.isfinite(s) else -1
                                        for s in out["sd"]]
    if walls is not None:
        half_width(0.0, walls, confidence)  # validates walls
        out["half_width_at"] = [half_width(s, walls, confidence) if math.isfinite(s) else float("nan")
                                for s in out["sd"]]
        if "sd_high" in out:
            out["half_width_at_high"] = [half_width(s, walls, confidence) if math.isfinite(s) else float("nan")
                                         for s in high]
    return out


def format_plan(p: pd.DataFrame, target: float | None, walls: int | None, confidence: float = CONFIDENCE) -> str:
    """The plan as text, with what it assumes."""
    if "sd_high" in p:
        head = [f"{100 * confidence:g}% intervals over walls (Student t; each wall an independent unit); the pilot's "
                f"per-wall sd with its own {100 * confidence:g}% interval [sd_low, sd_high] (Bonett; walls_nonzero: "
                "walls whose value is not 0, for a difference the walls that differ); the plan sizes on sd_high"]
        if (~np.isfinite(p["sd_high"].to_numpy(float))).any():
            head.append("sd_high NaN: the pilot's values have no spread (or under 5 walls), so the pilot says nothing "
                        "about the sd: walls_for_target -1; plan on a stated --sd")
    else:
        head = [f"{100 * confidence:g}% intervals over walls (Student t; each wall an independent unit); the stated "
                "per-wall sd assumed to hold at the planned size"]
    if target is not None:
        head.append(f"walls_for_target: walls for a half-width of {target:g}"
                    + (" at sd_high (walls_at_estimate: at the sd itself)" if "sd_high" in p else ""))
    if walls is not None:
        head.append(f"half_width_at: the half-width {walls:,} walls buy"
                    + (" (half_width_at_high: at sd_high)" if "sd_high" in p else ""))
    from caishen.sim.bots.names import spec_words
    from caishen.sim.termtext import WIDTH, wrap_lines

    if "quantity" in p:  # a 飘 table bot by its cells, not its 64-bit number (the pilot's files keep the spec)
        named = p["quantity"].astype(str).map(spec_words)
        if (named != p["quantity"].astype(str)).any():
            head.append("piao_table[k/64 cells]: the 飘 table bot that throws in k of its 64 cells (its spec in the "
                        "pilot's files)")
        p = p.assign(quantity=named)
    # the table in blocks of columns of at most WIDTH columns, the quantity left-aligned
    wide = max([len("quantity"), *map(len, p["quantity"])]) if "quantity" in p else 0
    table = p.to_string(index=False, float_format=lambda v: f"{v:.4g}", line_width=WIDTH,
                        formatters={"quantity": lambda q: q.ljust(wide)} if "quantity" in p else None)
    return "\n".join(wrap_lines(head, indent="  ")) + "\n" + table
