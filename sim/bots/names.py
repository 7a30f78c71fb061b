"""Bot specs as people read them: one helper for every table, row and line a person reads.

A spec is exact and reproducible but can be long: a 飘 table is a 64-bit
number of cells (``piao_table:72905330438242304``).  :func:`spec_words`
names it by the cells it throws in (``piao_table[29/64 cells]``) and leaves
every other spec as it is; :func:`short_name` cuts a name to a column's
width; :func:`exact_specs` lists the specs whose words differ from them, for
the one line that lets a reader reproduce the run.  The run's files keep the
exact specs.
"""

from __future__ import annotations

import re

__all__ = ["spec_words", "short_name", "exact_specs"]

#: a ``piao_table:BITS`` spec (decimal or hex bits) inside a policy spec or a label
TABLE_SPEC = re.compile(r"piao_table:(0[xX][0-9a-fA-F]+|\d+)(?![0-9a-zA-Z])")


def spec_words(text: str) -> str:
    """``text`` (a policy spec, a label, a difference ``A - B``) with each ``piao_table:BITS`` named by the
    cells it throws in instead of its 64-bit number: ``piao_table[12/64 cells]`` (a base bot after it stays:
    ``piao_table[64/64 cells]:tuned:NAME``).  For people; the exact spec stays in the run's files."""
    def words(m: re.Match) -> str:
        try:
            bits = int(m.group(1), 0) % (1 << 64)
        except ValueError:
            return m.group(0)
        return f"piao_table[{bin(bits).count('1')}/64 cells]"

    return TABLE_SPEC.sub(words, text)


def short_name(spec: str, width: int = 16) -> str:
    """:func:`spec_words` of ``spec`` in at most ``width`` characters, a column heading: a 飘 table as
    ``piao[N/64]`` when the words are too long, then cut (the last character ``~``)."""
    text = spec_words(spec)
    if len(text) > width:
        text = re.sub(r"piao_table\[(\d+)/64 cells\]", r"piao[\1/64]", text)
    return text if len(text) <= width else text[: width - 1] + "~"


def exact_specs(specs, labels=None) -> list[str]:
    """``["LABEL = SPEC", ...]`` for each spec of ``specs`` whose :func:`spec_words` differ from it (each
    once; ``labels``: what the reader sees for each, default the words): what a reader copies to rerun it."""
    out, seen = [], set()
    for i, spec in enumerate(specs):
        if spec_words(spec) != spec and spec not in seen:
            seen.add(spec)
            out.append(f"{spec_words(spec) if labels is None else labels[i]} = {spec}")
    return out
