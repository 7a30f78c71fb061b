"""A griffe extension for the API pages (``mkdocs.yml``, mkdocstrings ``extensions``; not a page).

caishen's docstrings are written in reStructuredText habits (``:mod:`x```
roles, simple tables framed by ``=====`` lines, ``text::`` before a literal
block) while mkdocstrings renders Markdown.  :func:`rst_to_markdown` rewrites
those three habits, and nothing else, in every docstring griffe loads:

- a role ``:func:`caishen.sim.hand.shanten``` becomes the code span
  ``caishen.sim.hand.shanten`` (``~`` and ``<target>`` dropped);
- a simple table becomes a Markdown table: columns from the ``=`` runs of its
  first border, the rows above the second border the header, a row whose
  first column is blank continues the row above (a ``|`` outside code is
  escaped);
- a line ending in ``::`` ends in ``:`` (the indented block after it is
  already a Markdown code block);
- a doctest block (lines from ``>>>`` to a blank line) is fenced as
  ``pycon`` code.

Sphinx fields (``:param x:``, ``:raises ValueError:``) have no backticks and
are left to the docstring parser.
"""

from __future__ import annotations

import re

import griffe

ROLE_RE = re.compile(r":(?:[a-z]+:)?[a-z]+:`~?([^`<]+?)(?:\s*<[^>`]*>)?`")
BORDER_RE = re.compile(r"^\s*=+(?: +=+)+\s*$")


def _cells(line: str, starts: list[int]) -> list[str]:
    ends = starts[1:] + [None]
    return [line[a:b].strip() if b is not None else line[a:].strip() for a, b in zip(starts, ends)]


def _escape_pipes(cell: str) -> str:
    """``|`` escaped outside code spans (the table extension leaves a pipe inside backticks alone, and would
    show the backslash there)."""
    parts = re.split(r"(`+[^`]*?`+)", cell)
    return "".join(part if part.startswith("`") else part.replace("|", "\\|") for part in parts)


def _table(lines: list[str]) -> list[str]:
    """A simple table (its lines, borders included) as Markdown table lines."""
    starts = [m.start() for m in re.finditer(r"=+", lines[0])]
    borders = [i for i, line in enumerate(lines) if BORDER_RE.match(line)]
    header_end = borders[1] if len(borders) > 2 else 0
    rows: list[list[str]] = []
    header: list[list[str]] = []
    for i, line in enumerate(lines):
        if i in borders or not line.strip():
            continue
        target = header if i < header_end else rows
        cells = _cells(line, starts)
        if target and not cells[0]:  # a continuation line
            target[-1] = [f"{a} {b}".strip() for a, b in zip(target[-1], cells)]
        else:
            target.append(cells)
    head = [" ".join(col).strip() for col in zip(*header)] if header else [""] * len(starts)

    def row(cells: list[str]) -> str:
        return "| " + " | ".join(_escape_pipes(c) for c in cells) + " |"

    return [row(head), "|" + "---|" * len(starts), *(row(r) for r in rows)]


def rst_to_markdown(text: str) -> str:
    """The docstring ``text`` with its roles, simple tables, ``::`` and doctests rewritten (the module docstring)."""
    text = ROLE_RE.sub(lambda m: f"``{m.group(1).strip()}``", text)
    lines = text.split("\n")
    out: list[str] = []
    i = 0
    while i < len(lines):
        if BORDER_RE.match(lines[i]):
            j, borders = i + 1, 1
            # a table ends at its third border (header form) or at a blank line after a border
            while j < len(lines) and borders < 3:
                if BORDER_RE.match(lines[j]):
                    borders += 1
                elif not lines[j].strip() and BORDER_RE.match(lines[j - 1]):
                    break
                j += 1
            if out and out[-1].strip():
                out.append("")
            out.extend(_table(lines[i:j]))
            if j < len(lines) and lines[j].strip():
                out.append("")
            i = j
            continue
        if lines[i].lstrip().startswith(">>>"):
            j = i
            while j < len(lines) and lines[j].strip():
                j += 1
            block = lines[i:j]
            indent = min(len(b) - len(b.lstrip()) for b in block)
            out.extend(["```pycon", *(b[indent:] for b in block), "```"])
            i = j
            continue
        line = lines[i]
        if line.rstrip().endswith("::"):
            line = line.rstrip()[:-1]
        out.append(line)
        i += 1
    return "\n".join(out)


class RstToMarkdown(griffe.Extension):
    """Rewrites every loaded docstring with :func:`rst_to_markdown`."""

    def on_instance(self, *, obj: griffe.Object, **kwargs) -> None:
        if obj.docstring is not None:
            obj.docstring.value = rst_to_markdown(obj.docstring.value)
