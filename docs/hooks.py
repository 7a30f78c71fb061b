"""The mkdocs hooks of caishen's documentation site (``hooks:`` in ``mkdocs.yml``; not a page).

- :func:`on_startup`: the Python API pages (mkdocstrings, read statically by
  griffe, nothing imported) need the import names ``caishen.sim``,
  ``caishen.envs``, ... that ``pip install`` maps onto the repository's
  folders (``[tool.setuptools] package-dir`` in ``pyproject.toml``).  griffe
  finds a package by its folder, so this lays that mapping out as symbolic
  links under ``build/docs-api/caishen/`` (``build/`` is ignored by git), the
  path ``mkdocs.yml`` gives mkdocstrings.
- :func:`on_page_markdown`: the CLI reference is generated from the argparse
  parsers (``caishen.cli.build_parser()``) at every build, where a page holds
  the marker :data:`CLI_MARKER`: a table of the commands, then each command's
  ``--help`` as it prints.
"""

from __future__ import annotations

import argparse
import os
import shutil
import tomllib
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
#: where the import-name tree of the API pages is laid out (``mkdocs.yml``: mkdocstrings ``paths``)
API_SRC = ROOT / "build" / "docs-api"
#: a page line replaced by the generated CLI reference
CLI_MARKER = "<!-- caishen: cli-reference -->"
#: the width argparse formats ``--help`` to in the reference (it reads COLUMNS)
HELP_COLUMNS = 100


def api_source_tree(root: Path = ROOT, dest: Path = API_SRC) -> Path:
    """Lay out ``dest/caishen/...`` as the installed package's folders (symbolic links to the repository's
    files and folders, after ``package-dir``); returns ``dest``.  Raises ``ValueError`` naming a mapping
    that is not below ``caishen``."""
    mapping = tomllib.loads((root / "pyproject.toml").read_text(encoding="utf-8"))["tool"]["setuptools"]["package-dir"]
    if dest.is_symlink() or dest.is_file():
        dest.unlink()
    elif dest.exists():
        shutil.rmtree(dest)
    top = dest / "caishen"
    top.mkdir(parents=True)
    for child in sorted((root / mapping.get("caishen", "caishen")).iterdir()):
        if child.name != "__pycache__":
            (top / child.name).symlink_to(child)
    for name, folder in sorted(mapping.items()):
        if name == "caishen":
            continue
        if not name.startswith("caishen."):
            raise ValueError(f"package-dir entry {name!r} is not below caishen")
        link = dest.joinpath(*name.split("."))
        if link.is_symlink():  # a folder that caishen/ itself holds under that name: the mapping wins
            link.unlink()
        link.symlink_to(root / folder)
    return dest


def _escape_cell(text: str) -> str:
    return " ".join(text.split()).replace("|", "\\|")


def cli_reference() -> str:
    """The CLI reference as Markdown: a table of the ``caishen`` commands (name, help line), then for each
    ``## caishen NAME`` and its ``--help`` text, formatted ``HELP_COLUMNS`` wide."""
    from caishen.cli import build_parser

    old = os.environ.get("COLUMNS")
    os.environ["COLUMNS"] = str(HELP_COLUMNS)
    try:
        parser = build_parser()
        (sub,) = [a for a in parser._actions if isinstance(a, argparse._SubParsersAction)]
        helps = {a.dest: a.help or "" for a in sub._choices_actions}
        out = ["| command | what it does |", "|---|---|"]
        out += [f"| [`caishen {name}`](#caishen-{name}) | {_escape_cell(helps.get(name, ''))} |"
                for name in sub.choices]
        out += ["", "## caishen {#caishen}", "", "```text", parser.format_help().rstrip(), "```"]
        for name, command in sub.choices.items():
            out += ["", f"## caishen {name} {{#caishen-{name}}}", "", "```text", command.format_help().rstrip(), "```"]
    finally:
        if old is None:
            os.environ.pop("COLUMNS", None)
        else:
            os.environ["COLUMNS"] = old
    return "\n".join(out) + "\n"


def on_startup(command, dirty):
    api_source_tree()  # before mkdocstrings reads its paths (its on_config)


def on_page_markdown(markdown, page, config, files):
    if CLI_MARKER in markdown:
        return markdown.replace(CLI_MARKER, cli_reference())
    return markdown
