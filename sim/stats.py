"""Confidence intervals with the wall as the independent unit (duplicate-deal comparisons).

In a duplicate-deal match (:mod:`caishen.sim.arena`) every wall is played several
times (once per seat rotation), so the hands of one wall are not
independent: the wall's luck is shared by all of them.  The independent
unit is the wall.  A policy's result on one wall is therefore first averaged
over its seats and rotations of that wall (one number per wall), and only
then do the intervals below run across walls: a Student-t interval of the
mean over ``n_walls`` values (:func:`wall_mean_ci`), and for two policies
the t interval of the per-wall differences (:func:`paired_diff_ci`, a
paired comparison: the wall's luck cancels in the difference).

``values`` are ``float64[n_walls]``; NaN is an error (a wall without a
result is a bug upstream, not a missing value to skip).  With one wall the
bounds are NaN (no spread to estimate).  ``level`` is the two-sided
confidence level (0.95 by default).
"""

from __future__ import annotations

import numpy as np
from scipy import stats as _st

__all__ = ["wall_mean_ci", "paired_diff_ci", "mean_ci"]


def _as_values(name: str, values) -> np.ndarray:
    """``values`` as a finite ``float64[n]`` (n >= 1); ``ValueError`` naming ``name`` otherwise."""
    try:
        a = np.asarray(values, dtype=np.float64)
    except (TypeError, ValueError):
        raise ValueError(f"{name}: expected numbers, got {type(values).__name__}") from None
    if a.ndim != 1:
        raise ValueError(f"{name}: expected a 1-d array of per-wall values, got shape {a.shape}")
    if a.size == 0:
        raise ValueError(f"{name}: no walls (empty array)")
    bad = np.flatnonzero(~np.isfinite(a))
    if bad.size:
        raise ValueError(f"{name}: wall {int(bad[0])} has the non-finite value {float(a[bad[0]])!r}")
    return a


def _check_level(level) -> float:
    if isinstance(level, bool) or not isinstance(level, (int, float, np.floating)) or not 0.0 < float(level) < 1.0:
        raise ValueError(f"level {level!r}: must be a number strictly between 0 and 1 (e.g. 0.95)")
    return float(level)


def mean_ci(values, level: float = 0.95, name: str = "values") -> tuple[float, float, float]:
    """``(mean, lo, hi)``: the Student-t interval of the mean of independent ``values: float64[n]``.

    ``lo``/``hi`` are NaN when ``n == 1``; equal to the mean when all values
    are equal.  Raises ``ValueError`` for an empty, non-1-d or non-finite
    input or a bad ``level``.
    """
    a = _as_values(name, values)
    level = _check_level(level)
    m = float(a.mean())
    n = a.size
    if n < 2:
        return m, float("nan"), float("nan")
    se = float(a.std(ddof=1)) / np.sqrt(n)
    half = float(_st.t.ppf(0.5 + level / 2.0, n - 1)) * se
    return m, m - half, m + half


def wall_mean_ci(values, level: float = 0.95) -> tuple[float, float, float]:
    """``(mean, lo, hi)`` of one policy's per-wall results ``values: float64[n_walls]``.

    Each value is the policy's mean points per hand on one wall (averaged
    over its seats and rotations of that wall first); the interval is the
    Student-t interval across walls (module docstring).  Raises
    ``ValueError`` naming an empty or non-finite input.
    """
    return mean_ci(values, level, name="wall values")


def paired_diff_ci(a, b, level: float = 0.95) -> tuple[float, float, float]:
    """``(diff, lo, hi)``: mean of ``a - b`` over walls with its paired Student-t interval.

    ``a``, ``b``: ``float64[n_walls]``, two policies' per-wall results on
    the same walls (same order).  The wall's luck cancels in ``a - b``, so
    this interval is much narrower than the difference of two
    :func:`wall_mean_ci` intervals.  Raises ``ValueError`` for different
    lengths, empty or non-finite inputs.
    """
    x = _as_values("a", a)
    y = _as_values("b", b)
    if x.size != y.size:
        raise ValueError(f"paired values need the same walls: a has {x.size}, b has {y.size}")
    return mean_ci(x - y, level, name="a - b")
