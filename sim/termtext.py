"""Text for a terminal: the columns a string takes (East Asian wide characters, 汉字, take two) and long
lines wrapped to :data:`WIDTH` columns, for the commands' tables and lists (``caishen rules --options``,
``power``, ``ladder``, ``replay``, ``play --hint``)."""

from __future__ import annotations

import unicodedata
from collections.abc import Iterable

__all__ = ["WIDTH", "display_width", "wrap", "wrap_lines"]

#: the widest line the commands print (a terminal of 100 columns shows every line whole)
WIDTH = 100


def display_width(text: str) -> int:
    """Columns ``text`` takes in a terminal: East Asian wide and full-width characters take two."""
    return sum(2 if unicodedata.east_asian_width(ch) in "WF" else 1 for ch in text)


def wrap(line: str, width: int = WIDTH, indent: str = "    ") -> list[str]:
    """``line`` cut at spaces into lines of at most ``width`` columns (:func:`display_width`), each after
    the first starting with ``indent``; a word longer than a line stays whole on its own line.  The
    line's own leading spaces are kept; a line that fits is returned as it is."""
    if display_width(line) <= width:
        return [line]
    lead = line[: len(line) - len(line.lstrip(" "))]
    out, cur = [], lead
    for word in line[len(lead):].split(" "):
        if not word:
            continue
        start = cur.strip() == ""
        candidate = cur + word if start else f"{cur} {word}"
        if display_width(candidate) <= width or start:
            cur = candidate
        else:
            out.append(cur)
            cur = indent + word
    out.append(cur)
    return out


def wrap_lines(lines: Iterable[str], width: int = WIDTH, indent: str = "    ") -> list[str]:
    """Every line of ``lines`` through :func:`wrap`."""
    return [piece for line in lines for piece in wrap(line, width, indent)]
