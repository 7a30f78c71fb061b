"""Rewrite the bare package names ``sim``, ``envs``, ``agents`` to the ``caishen`` namespace (issue 10).

The folders stay where they are (``sim/``, ``envs/``, ``agents/``); what moves is
the import name: ``sim.engine`` -> ``caishen.sim.engine``, ``from envs import x``
-> ``from caishen.envs import x``, ``python -m sim`` -> ``python -m caishen``.
Strings and docstrings are rewritten too (``"sim.runner:engine_chunk"``,
``:mod:`sim.hand```), but not folder paths (``sim/engine.py`` stays).

Usage, from the repository root (no argument: the project's folders)::

    python tools/rename_imports.py                 # rewrite in place, list the changed files
    python tools/rename_imports.py --check         # exit 1 if something would change
    python tools/rename_imports.py path/to/new_module.py other_dir/

Idempotent: a second run changes nothing (``caishen.sim`` is never prefixed
again).  A line that must keep a bare name (e.g. a test that imports a user's
own ``agents`` package on purpose) carries the marker ``rename_imports: keep``.

The rules, in order, each with ``NAME`` = ``sim|envs|agents`` not preceded by a
word character, ``.``, ``/`` or ``-``:

1. ``NAME.<identifier>`` -> ``caishen.NAME.<identifier>`` (dotted paths in code,
   strings and prose: imports, ``"module:function"`` strings, docstrings);
2. ``from NAME import`` -> ``from caishen.NAME import``;
3. each bare ``NAME`` item of an ``import a, b as c`` list -> ``caishen.NAME``;
4. ``-m NAME`` / ``"-m", "NAME"`` with ``NAME`` = ``sim`` -> ``caishen``
   (``python -m caishen`` is the command line);
5. the modules that moved when the rule sets became packages (:data:`MOVES`):
   ``caishen.sim.jiating_records`` -> ``caishen.sim.rules.jiating.records``,
   ``from caishen.sim import jiating_batch as JB`` ->
   ``from caishen.sim.rules.jiating import batch as JB``, and their file
   paths (``sim/jiating_records.py`` -> ``sim/rules/jiating/records.py``).
"""

from __future__ import annotations

import re
import sys
from pathlib import Path

NAMES = r"(?:sim|envs|agents)"
#: not part of a longer name, a dotted path (caishen.sim), a folder path (tests/sim) or a word-with-hyphen
_NOT_AFTER = r"(?<![\w./\-])"
KEEP = "rename_imports: keep"
#: what is rewritten by default (relative to the repository root)
DEFAULT_PATHS = ("sim", "envs", "agents", "tests", "benchmarks", "notebooks", "docs", "README.md", "caishen")
SUFFIXES = {".py", ".md", ".txt", ".ipynb", ".cfg", ".ini"}

_DOTTED = re.compile(rf"{_NOT_AFTER}({NAMES})(?=\.[A-Za-z_])")
_FROM = re.compile(rf"(?<![\w.])from ({NAMES}) import\b")
_IMPORT_LIST = re.compile(r"(?<![\w.])import ((?:[A-Za-z_][\w.]*(?: as \w+)?)(?:, *[A-Za-z_][\w.]*(?: as \w+)?)*)")
_BARE_ITEM = re.compile(rf"^({NAMES})(?=$| as )")
_DASH_M = re.compile(r"-m sim\b(?![./\-])")
_DASH_M_ARGS = re.compile(r"""(["'])-m\1(, *)(["'])sim\3""")

#: modules moved by the layout change (issue 10): old dotted name -> new dotted name
MOVES = (
    ("caishen.sim.rules.jiating_kernels", "caishen.sim.rules.jiating.kernels"),
    ("caishen.sim.rules.jiating_turn", "caishen.sim.rules.jiating.turn"),
    ("caishen.sim.rules.jiating_patterns", "caishen.sim.rules.jiating.tables"),
    ("caishen.sim.jiating_batch", "caishen.sim.rules.jiating.batch"),
    ("caishen.sim.jiating_records", "caishen.sim.rules.jiating.records"),
)


def _moves(line: str) -> str:
    for old, new in MOVES:
        parent, leaf = old.rsplit(".", 1)
        new_parent, new_leaf = new.rsplit(".", 1)
        # from PARENT import LEAF [as X]  ->  from NEW_PARENT import NEW_LEAF [as X]
        line = re.sub(rf"from {re.escape(parent)} import {leaf}\b( as \w+)?",
                      lambda m: f"from {new_parent} import {new_leaf}" + (m.group(1) or f" as {leaf}"), line)
        line = re.sub(rf"(?<![\w.]){re.escape(old)}(?![\w])", new, line)
        old_path = old.replace("caishen.", "", 1).replace(".", "/") + ".py"
        new_path = new.replace("caishen.", "", 1).replace(".", "/") + ".py"
        line = re.sub(rf"(?<![\w/]){re.escape(old_path)}", new_path, line)
    return line


def _import_list(m: re.Match) -> str:
    items = [_BARE_ITEM.sub(r"caishen.\1", item.strip()) for item in m.group(1).split(",")]
    return "import " + ", ".join(items)


def rewrite_line(line: str) -> str:
    """One line with the rules applied (unchanged if it carries the keep marker)."""
    if KEEP in line:
        return line
    line = _DOTTED.sub(r"caishen.\1", line)
    line = _FROM.sub(r"from caishen.\1 import", line)
    line = _IMPORT_LIST.sub(_import_list, line)
    line = _DASH_M_ARGS.sub(r"\1-m\1\2\3caishen\3", line)
    line = _DASH_M.sub("-m caishen", line)
    return _moves(line)


def rewrite(text: str) -> str:
    return "".join(rewrite_line(line) for line in text.splitlines(keepends=True))


def files(paths) -> list[Path]:
    out = []
    for p in map(Path, paths):
        if p.is_dir():
            out += [f for f in sorted(p.rglob("*")) if f.is_file() and f.suffix in SUFFIXES
                    and not {".venv", ".git", "__pycache__", "build"} & set(f.parts)]
        elif p.is_file():
            out.append(p)
    this = Path(__file__).resolve()
    return [f for f in out if f.resolve() != this]


def main(argv: list[str]) -> int:
    check = "--check" in argv
    paths = [a for a in argv if a != "--check"] or [p for p in DEFAULT_PATHS if Path(p).exists()]
    changed = []
    for f in files(paths):
        text = f.read_text(encoding="utf-8")
        new = rewrite(text)
        if new != text:
            changed.append(f)
            if not check:
                f.write_text(new, encoding="utf-8")
    for f in changed:
        print(f)
    return 1 if check and changed else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
