"""One place for checking the integers that enter the package: :func:`check_int`.

Every public function and method that takes an integer -- a seed, a seat,
a dealer, a number of hands, an action index, a tile kind or rank, a joker,
a streak, a number of points, an integer rule option -- checks it with
:func:`check_int`, so the same bad input gets the same kind of answer
everywhere: a ``ValueError`` whose message names the argument and the bad
value (cut to a readable length, :func:`short_repr`), never a numba
traceback, a silent wrap-around in ``int64`` or ``True`` taken for 1.

- Accepted: a Python ``int``, a numpy integer, a 0-d integer array; with
  ``integral_float=True`` also a finite float without a fraction (``3.0``:
  tile kinds and ranks, an integer option written as a float).
- Refused: ``bool`` and ``numpy.bool_`` (``Game.step(True)`` is a mistake,
  not action 1), ``None``, strings, fractions, NaN, infinities, anything
  else; and a value outside ``lo .. hi`` (inclusive; either may be None).

Messages: ``"seat must be an integer in 0..3, got the bool True"``,
``"streak must be an integer in 0..1000000, got -1"`` (the range said once), ``"hands must be an integer
>= 1, got 0 (below 1)"``;
a huge integer is cut to its first digits and its length (:func:`short_int`).
"""

from __future__ import annotations

from typing import Any

import numpy as np

#: longest repr of a bad value echoed in an error message
MAX_ECHO = 80


def short_repr(value: Any, limit: int = MAX_ECHO) -> str:
    """``repr(value)`` cut to about ``limit`` characters, saying how long it was.

    For error messages: a 5 MB bad value must not be echoed whole.  Never
    raises (a value whose ``repr`` fails or recurses too deeply is named by
    its type).
    """
    try:
        if isinstance(value, str) and len(value) > 4 * limit:
            text = repr(value[: 4 * limit])  # repr of a huge string: cut first
            n = len(value)
        else:
            text = repr(value)
            n = None
    except Exception:  # noqa: BLE001 - RecursionError from a deeply nested value, a broken __repr__
        return f"<{type(value).__name__}>"
    if len(text) <= limit and n is None:
        return text
    size = f"{n} characters" if n is not None else f"repr of {len(text)} characters"
    return f"{text[:limit]}... ({type(value).__name__}, {size})"


def short_int(v: int) -> str:
    """An integer as text, a huge one cut to its first 20 digits and its length
    (``"10000000000000000000... (1001 digits)"``; Python's ``str`` refuses more than 4,300 digits,
    where :func:`short_repr` could only name the type)."""
    a = abs(int(v))
    if a.bit_length() <= 192:  # up to 57 digits: whole
        return str(int(v))
    d = int(a.bit_length() * 0.30102999566398120) + 1  # the digits, or one more
    if 10 ** (d - 1) > a:
        d -= 1
    return f"{'-' if v < 0 else ''}{a // 10 ** (d - 20)}... ({d} digits)"


def check_int(what: str, value: Any, lo: int | None = None, hi: int | None = None, *,
              integral_float: bool = False) -> int:
    """``value`` as a Python ``int`` within ``lo .. hi``; ``ValueError`` naming ``what`` and the value.

    ``what`` names the argument (``"seat"``, ``"option cap"``).  See the module
    docstring for what is accepted (``integral_float`` admits ``3.0``).
    """
    if lo is not None and hi is not None:
        wanted, outside = f"{what} must be an integer in {lo}..{hi}", ""  # the range is said once
    elif lo is not None:
        wanted, outside = f"{what} must be an integer >= {lo}", f"below {lo}"
    elif hi is not None:
        wanted, outside = f"{what} must be an integer <= {hi}", f"above {hi}"
    else:
        wanted, outside = f"{what} must be an integer", ""
    if isinstance(value, np.ndarray) and value.ndim == 0:
        value = value[()]
    if isinstance(value, (bool, np.bool_)):
        raise ValueError(f"{wanted}, got the bool {value!r}")
    if isinstance(value, (int, np.integer)):
        v = int(value)
    elif (integral_float and isinstance(value, (float, np.floating)) and bool(np.isfinite(value))
          and float(value).is_integer()):
        v = int(value)
    else:
        raise ValueError(f"{wanted}, got {short_repr(value)} ({type(value).__name__})")
    if (lo is not None and v < lo) or (hi is not None and v > hi):
        raise ValueError(f"{wanted}, got {short_int(v)}" + (f" ({outside})" if outside else ""))
    return v
