"""Markdown text of the studies' reports: tables and numbers as people read them (no extra dependency)."""

from __future__ import annotations

import math

import pandas as pd


def fmt(v, spec: str = ".4g") -> str:
    """``v`` for a table cell: thousands separators for integers (``100,000``), ``spec`` for other numbers,
    ``""`` for NaN, text as it is (``|`` escaped)."""
    if isinstance(v, bool) or getattr(getattr(v, "dtype", None), "kind", "") == "b":
        return str(bool(v))
    if isinstance(v, int) or (hasattr(v, "dtype") and getattr(v.dtype, "kind", "") in "iu"):
        return f"{int(v):,}"
    if isinstance(v, float) or hasattr(v, "dtype"):
        x = float(v)
        if math.isnan(x):
            return ""
        if x == int(x) and abs(x) < 1e15 and spec == ".4g":
            return f"{int(x):,}"
        return format(x, spec)
    return str(v).replace("|", "\\|")


def table(df: pd.DataFrame, floatfmt: str = ".4g", index: bool = False) -> str:
    """A GitHub-flavoured Markdown table of ``df`` (each cell :func:`fmt`)."""
    d = df.reset_index() if index else df
    head = "| " + " | ".join(str(c) for c in d.columns) + " |"
    sep = "|" + "|".join("---" for _ in d.columns) + "|"
    rows = ["| " + " | ".join(fmt(v, floatfmt) for v in r) + " |" for r in d.itertuples(index=False)]
    return "\n".join([head, sep, *rows])


def ci(m: float, lo: float, hi: float, spec: str = "+.3f") -> str:
    """``"+0.123 [+0.050, +0.196]"``."""
    return f"{format(m, spec)} [{format(lo, spec)}, {format(hi, spec)}]"
