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

The planning assumes the pilot's ``sd`` holds at the planned size (it is an
estimate: a pilot of a few thousand walls gives it within a few per cent);
a difference of policies that play alike has a far smaller sd than either
policy's points, which is why paired walls need fewer walls.
"""

from __future__ import annotations

import math
import os
from pathlib import Path

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


def pilot_sds(run_dir: str | os.PathLike, metric: str = "score") -> pd.DataFrame:
    """The per-wall sds of a finished pilot: ``quantity, walls, value, sd`` (one row per quantity).

    A sweep directory (``sweep.json``): for each grid point the ``metric``'s
    value and its difference to the baseline point; a match directory
    (``run.json`` of a match): each policy's points per hand and each pair's
    difference.  Raises ``ValueError`` for a directory that is neither, or a
    sweep without ``metric``.
    """
    d = Path(run_dir)
    rows = []
    if (d / "sweep.json").exists():
        from caishen.sim.analysis import study

        doc, table = study.read_sweep(d)
        axes = list(doc["grid"]["axes"])
        t = table[table["metric"] == metric]
        if len(t) == 0:
            raise ValueError(f"{str(d)!r}: the sweep has no metric {metric!r}; it has "
                             f"{', '.join(dict.fromkeys(table['metric']))}")
        for r in t.to_dict("records"):
            where = " ".join(f"{a}={r[a]}" for a in axes) or "all"
            rows.append((f"{metric} at {where}", int(r["walls"]), r["value"],
                         sd_from_ci(r["ci_low"], r["ci_high"], int(r["walls"]))))
            if r["baseline"] != where:
                rows.append((f"{metric} at {where} minus {r['baseline']}", int(r["walls"]), r["diff"],
                             sd_from_ci(r["diff_low"], r["diff_high"], int(r["walls"]))))
    elif (d / "run.json").exists():
        from caishen.sim.analysis import arena

        s = arena.summarize_match(d)
        n = int(s["walls_done"])
        for r in s["policy_rows"]:
            rows.append((f"points of {r['index']}:{r['policy']}", n, r["points"], sd_from_ci(r["lo"], r["hi"], n)))
        for p in s["pairs"]:
            rows.append((f"points of {p['ia']}:{p['a']} minus {p['ib']}:{p['b']}", n, p["diff"],
                         sd_from_ci(p["lo"], p["hi"], n)))
    else:
        raise ValueError(f"{str(d)!r} is neither a sweep (no sweep.json) nor a match directory (no run.json)")
    return pd.DataFrame(rows, columns=["quantity", "walls", "value", "sd"])


def plan(sds: pd.DataFrame, target: float | None = None, walls: int | None = None,
         confidence: float = CONFIDENCE) -> pd.DataFrame:
    """``sds`` (``quantity, sd`` and maybe more) with ``walls_for_target`` (walls for a half-width of
    ``target``) and/or ``half_width_at`` (the half-width ``walls`` walls buy).  ``ValueError`` when neither is
    given or one is bad."""
    if target is None and walls is None:
        raise ValueError("give a target half-width (--half-width) or a number of walls (--walls), or both")
    out = sds.copy()
    if target is not None:
        _check("half-width", target)
        out["walls_for_target"] = [walls_for(s, target, confidence) if math.isfinite(s) else -1 for s in out["sd"]]
    if walls is not None:
        half_width(0.0, walls, confidence)  # validates walls
        out["half_width_at"] = [half_width(s, walls, confidence) if math.isfinite(s) else float("nan")
                                for s in out["sd"]]
    return out


def format_plan(p: pd.DataFrame, target: float | None, walls: int | None, confidence: float = CONFIDENCE) -> str:
    """The plan as text, with what it assumes."""
    head = [f"{100 * confidence:g}% intervals over walls (Student t; each wall an independent unit); the pilot's "
            "per-wall sd assumed to hold at the planned size"]
    if target is not None:
        head.append(f"walls_for_target: walls for a half-width of {target:g}")
    if walls is not None:
        head.append(f"half_width_at: the half-width {walls:,} walls buy")
    with pd.option_context("display.width", 200, "display.max_colwidth", 70):
        return "\n".join(head) + "\n" + p.to_string(index=False, float_format=lambda v: f"{v:.4g}")
