"""The rule reference that ships with the package: every rule, pattern and decision ID, defined.

The pages are ``docs/rules/*.md`` in the repository, installed as the
package data of ``caishen.rules_docs`` (``pyproject.toml``) and read with
:mod:`importlib.resources`, so an installed user can look up any ID the
code cites: ``caishen rules K-2.5`` prints :func:`rule_text`.
``docs/rules/README.md`` says how IDs are written; ``tests/test_rule_docs.py``
checks that every ID cited in the code is defined here exactly once.

In a page a definition is a bold ID at the start of a list item
(``- **K-2.5** ...``), a bold ID in the first cell of a table row
(``| **P27** | ...``), or a heading that starts with the ID (``## K-6 ...``).
"""

from __future__ import annotations

import dataclasses
import functools
import re
from importlib import resources

from caishen.sim.validate import short_repr

#: the package that holds the pages (``docs/rules/`` in the repository)
PACKAGE = "caishen.rules_docs"

#: rule IDs; a rule set's decisions are ``<Its title word> D<n>`` (e.g. ``Kaihua D3``, written in its page)
_ID = r"[KJ]-\d{1,2}(?:\.\d{1,2})?|P\d\d|[A-Z][a-z]+ D\d{1,2}|engine [EJ]\d{1,2}"
#: a definition in the pages: a heading ``## K-2 ...``, a list item ``- **K-2.5** ...``
#: or a table row ``| **P01** | ...``, at the start of a line
DEF_RE = re.compile(rf"^(?:(?P<hashes>#{{2,4}}) +(?P<hid>{_ID})\b|(?:- |\| )\*\*(?P<id>{_ID})\*\*)", re.M)


@dataclasses.dataclass(frozen=True)
class Definition:
    """Where an ID is defined: ``id`` as the pages write it, ``doc`` the page's file name,
    ``line`` 1-based, ``level`` the heading level (2..4) or 0 for a list item or table row."""

    id: str
    doc: str
    line: int
    level: int


def pages() -> dict[str, str]:
    """``{file name: text}`` of every page (``*.md``), in name order."""
    root = resources.files(PACKAGE)
    return {p.name: p.read_text(encoding="utf-8")
            for p in sorted(root.iterdir(), key=lambda p: p.name) if p.name.endswith(".md")}


@functools.lru_cache(maxsize=None)
def definitions() -> tuple[Definition, ...]:
    """Every definition in the pages, in page and line order."""
    out = []
    for name, text in pages().items():
        for m in DEF_RE.finditer(text):
            line = text.count("\n", 0, m.start()) + 1
            if m["hid"]:
                out.append(Definition(m["hid"], name, line, len(m["hashes"])))
            else:
                out.append(Definition(m["id"], name, line, 0))
    return tuple(out)


def defined_ids() -> set[str]:
    """The IDs the pages define."""
    return {d.id for d in definitions()}


def canonical(rule_id: str) -> str:
    """An ID as the pages write it: ``"k_2_5"`` -> ``"K-2.5"``, ``"p27"`` -> ``"P27"``,
    ``"kaihua d3"`` -> ``"Kaihua D3"``, ``"engine e3"`` -> ``"engine E3"``."""
    s = str(rule_id).strip()
    m = re.fullmatch(r"(?i)([kj])[-_](\d{1,2})(?:[._](\d{1,2}))?", s)
    if m:
        return f"{m[1].upper()}-{m[2]}" + (f".{m[3]}" if m[3] else "")
    m = re.fullmatch(r"(?i)p(\d\d)", s)
    if m:
        return "P" + m[1]
    m = re.fullmatch(r"(?i)([a-z]+)[\s_-]+d(\d{1,2})", s)
    if m:
        return f"{m[1].capitalize()} D{m[2]}"
    m = re.fullmatch(r"(?i)engine[\s_-]+([ej])(\d{1,2})", s)
    if m:
        return f"engine {m[1].upper()}{m[2]}"
    return s


def rule_text(rule_id: str) -> str:
    """The pages' text of one rule, pattern, section or decision: what ``caishen rules ID`` prints.

    ``rule_id``: ``"K-2.5"``, ``"k_2_5"``, ``"P27"``, ``"J-7"`` (a whole
    section), ``"Kaihua D3"``, ``"engine E3"`` (case and ``_`` / ``-`` / ``.``
    are forgiven).  Returns the definition's lines (a list item with its
    continuation lines, a table row under its table's header row and
    separator, or a heading with its section).
    Raises ``ValueError`` naming an ID that the pages do not define.
    """
    if not isinstance(rule_id, str):
        raise ValueError(f"a rule ID must be a string such as 'K-2.5', got {short_repr(rule_id)}")
    want = canonical(rule_id)
    hits = [d for d in definitions() if d.id == want]
    if not hits:
        raise ValueError(f"rule {short_repr(rule_id)}: not defined in the rule reference (docs/rules/; "
                         "IDs look like K-2.5, J-4.2, P27, 'Kaihua D3', 'engine E3')")
    d = hits[0]
    lines = pages()[d.doc].splitlines()
    out = [lines[d.line - 1]]
    if not d.level and out[0].startswith("|"):  # a table row: its table's header and separator above it
        top = d.line - 1
        while top > 0 and lines[top - 1].startswith("|"):
            top -= 1
        if top + 2 <= d.line - 1:
            out = lines[top:top + 2] + out
    for line in lines[d.line:]:
        if d.level:  # a section: up to the next heading of the same or a higher level
            h = re.match(r"#+", line)
            if h and len(h.group()) <= d.level:
                break
        elif not line.strip() or not line.startswith((" ", "\t")):
            break  # a list item or a row ends at a blank line or the next item
        out.append(line)
    return "\n".join(out).rstrip() + "\n"


def plain_text(markdown: str) -> str:
    """A reference excerpt (:func:`rule_text`'s Markdown) for a terminal: ``**bold**``, ``*italic*`` and
    ``code`` marks dropped, a heading's ``#`` marks dropped, a table as one block per row (its first
    cell, then ``column: cell`` lines) instead of pipes, and every line wrapped to 100 terminal columns
    (:func:`caishen.sim.termtext.wrap`, its continuation indented two more spaces)."""
    out: list[str] = []
    lines = markdown.split("\n")
    i = 0
    while i < len(lines):
        line = lines[i]
        if line.startswith("|") and i + 1 < len(lines) and re.fullmatch(r"\|[-:| ]+\|", lines[i + 1].strip()):
            header = _cells(line)
            i += 2
            while i < len(lines) and lines[i].startswith("|"):
                row = _cells(lines[i])
                out.append(row[0])
                out += [f"  {h}: {c}" for h, c in zip(header[1:], row[1:])]
                i += 1
            continue
        out.append(re.sub(r"^#+ ", "", line))
        i += 1
    text = "\n".join(out)
    text = re.sub(r"\*\*(.+?)\*\*", r"\1", text)
    text = re.sub(r"(?<![\w*])\*(\S(?:.*?\S)?)\*(?![\w*])", r"\1", text, flags=re.S)
    text = re.sub(r"`([^`]+)`", r"\1", text)
    from caishen.sim.termtext import wrap

    return "\n".join(piece for line in text.split("\n")
                     for piece in wrap(line, indent=" " * (len(line) - len(line.lstrip(" ")) + 2)))


def _cells(row: str) -> list[str]:
    return [c.strip() for c in row.strip().strip("|").split("|")]
