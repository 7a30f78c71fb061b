"""The documentation site and the front page (issue 45 item 2).

- ``mkdocs build --strict`` passes (every link and anchor resolves, every
  page under ``docs/`` is in the nav, the API pages find their objects),
  with at least 8 pages; skipped when the ``[docs]`` extra is not installed;
- every page the nav names exists, and every page is in the nav;
- the CLI reference is generated from ``caishen.cli.build_parser()``: a
  section for every command, holding its ``--help``;
- the API pages' import names are laid out after ``pyproject.toml``'s
  package-dir, and the docstrings' reST habits become Markdown;
- the README stays a front page (at most 200 lines) whose relative links
  resolve, those into ``docs/`` to pages of the site;
- LICENSE, CHANGELOG (an Unreleased section and one for the version) and
  the changelog page that includes it.
"""

from __future__ import annotations

import importlib.util
import os
import re
import subprocess
import sys
import tomllib
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
DOCS = ROOT / "docs"
MKDOCS_YML = ROOT / "mkdocs.yml"
README = ROOT / "README.md"
#: a Markdown link's target: [text](target)
LINK_RE = re.compile(r"\]\(([^)\s]+)\)")


def _module(name: str):
    """A helper module of docs/ (hooks.py, griffe_rst.py), loaded from its file."""
    spec = importlib.util.spec_from_file_location(f"_docs_{name}", DOCS / f"{name}.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def nav_pages() -> list[str]:
    """The pages the nav of mkdocs.yml names (docs-relative paths), commented-out lines left out."""
    text = MKDOCS_YML.read_text(encoding="utf-8")
    nav = text.split("\nnav:\n", 1)[1]
    pages = []
    for line in nav.splitlines():
        if line.strip().startswith("#"):
            continue
        pages += re.findall(r"([\w./-]+\.md)\s*$", line)
    return pages


def test_every_nav_page_exists_and_every_page_is_in_the_nav():
    pages = nav_pages()
    assert len(pages) >= 8 and len(set(pages)) == len(pages), pages
    missing = [p for p in pages if not (DOCS / p).is_file()]
    assert not missing, f"mkdocs.yml's nav names pages that do not exist: {missing}"
    on_disk = {p.relative_to(DOCS).as_posix() for p in DOCS.rglob("*.md")}
    left_out = sorted(on_disk - set(pages))
    assert not left_out, f"pages under docs/ not in mkdocs.yml's nav (add them there): {left_out}"


def test_readme_is_a_front_page_whose_links_resolve():
    text = README.read_text(encoding="utf-8")
    n_lines = len(text.splitlines())
    assert n_lines <= 200, f"README.md has {n_lines} lines; the rest belongs in docs/"
    targets = LINK_RE.findall(text)
    pages = set(nav_pages())
    into_docs = []
    for target in targets:
        if re.match(r"[a-z]+:", target):  # https:, mailto:
            continue
        path = target.split("#", 1)[0]
        assert (ROOT / path).exists(), f"README.md links to {target!r}, which does not exist"
        if path.startswith("docs/"):
            rel = path.removeprefix("docs/")
            assert rel in pages, f"README.md links to {target!r}, which is not a page of the site (mkdocs.yml nav)"
            into_docs.append(rel)
    for page in ("index.md", "getting-started.md", "results.md", "reference/cli.md", "glossary.md"):
        assert page in into_docs, f"README.md does not link to docs/{page}"


def test_cli_reference_is_generated_from_the_parsers():
    import argparse

    from caishen.cli import build_parser

    hooks = _module("hooks")
    text = hooks.cli_reference()
    (sub,) = [a for a in build_parser()._actions if isinstance(a, argparse._SubParsersAction)]
    assert len(sub.choices) >= 10
    for name, parser in sub.choices.items():
        assert f"## caishen {name} {{#caishen-{name}}}" in text, name
        assert f"| [`caishen {name}`](#caishen-{name}) |" in text, name
        usage = parser.format_usage().split()[1:3]  # ["caishen", NAME]
        assert " ".join(usage) in text
    assert "--version" in text
    page = (DOCS / "reference" / "cli.md").read_text(encoding="utf-8")
    assert hooks.CLI_MARKER in page
    assert hooks.on_page_markdown(page, None, None, None).count("```text") == len(sub.choices) + 1
    before = os.environ.get("COLUMNS")
    hooks.cli_reference()
    assert os.environ.get("COLUMNS") == before


def test_api_source_tree_follows_the_package_dir(tmp_path):
    hooks = _module("hooks")
    dest = hooks.api_source_tree(ROOT, tmp_path / "api")
    mapping = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["tool"]["setuptools"]["package-dir"]
    for name, folder in mapping.items():
        if name != "caishen":  # caishen/ itself is a folder of links to caishen/'s entries
            assert dest.joinpath(*name.split(".")).resolve() == (ROOT / folder).resolve(), name
    assert (dest / "caishen" / "sim" / "hand").resolve() == ROOT / "sim" / "hand"
    assert (dest / "caishen" / "cli.py").exists() or (dest / "caishen" / "cli" / "__init__.py").exists()
    hooks.api_source_tree(ROOT, tmp_path / "api")  # laid out again over the old tree
    assert (dest / "caishen" / "sim" / "hand" / "kernels.py").is_file()


def test_rst_habits_become_markdown():
    pytest.importorskip("griffe", reason="the [docs] extra (mkdocstrings) is not installed")
    rst = _module("griffe_rst").rst_to_markdown
    assert rst("see :func:`caishen.sim.hand.shanten` and :mod:`~caishen.sim`") == (
        "see ``caishen.sim.hand.shanten`` and ``caishen.sim``")
    assert rst(":param counts: ``uint8[34]``") == ":param counts: ``uint8[34]``"  # a field, not a role
    table = """The bots:

=========  ===========
spec       bot
=========  ===========
``a|b``    one | two
``c``      first line
           continued
=========  ===========

after"""
    assert rst(table) == """The bots:

| spec | bot |
|---|---|
| ``a|b`` | one \\| two |
| ``c`` | first line continued |

after"""
    assert rst("Usage::\n\n    caishen rules K-2.5") == "Usage:\n\n    caishen rules K-2.5"
    assert rst("text\n\n>>> 1 + 1\n2\n\nmore") == "text\n\n```pycon\n>>> 1 + 1\n2\n```\n\nmore"


def test_license_and_changelog():
    import caishen

    license_text = (ROOT / "LICENSE").read_text(encoding="utf-8")
    assert license_text.startswith("MIT License") and "caishen contributors" in license_text
    changelog = (ROOT / "CHANGELOG.md").read_text(encoding="utf-8")
    assert "## [Unreleased]" in changelog
    assert re.search(rf"^## \[{re.escape(caishen.__version__)}\] - \d{{4}}-\d\d-\d\d$", changelog, re.M)
    assert '--8<-- "CHANGELOG.md"' in (DOCS / "changelog.md").read_text(encoding="utf-8")


def _docs_extra_missing() -> str | None:
    for module in ("mkdocs", "material", "mkdocstrings", "mkdocstrings_handlers.python"):
        try:
            if importlib.util.find_spec(module) is None:
                return module
        except ModuleNotFoundError:
            return module
    return None


def test_mkdocs_build_strict(tmp_path):
    """The site builds offline with every warning an error; the generated pages hold what they promise."""
    missing = _docs_extra_missing()
    if missing:
        pytest.skip(f"the [docs] extra is not installed ({missing}): pip install -e '.[docs]'")
    site = tmp_path / "site"
    env = dict(os.environ, NO_MKDOCS_2_WARNING="1")
    r = subprocess.run([sys.executable, "-m", "mkdocs", "build", "--strict", "--site-dir", str(site)], cwd=ROOT,
                       capture_output=True, text=True, env=env, timeout=600)
    assert r.returncode == 0, (r.stdout + r.stderr)[-4000:]
    assert not re.search(r"^(WARNING|ERROR)", r.stderr, re.M), r.stderr[-4000:]
    built = [p for p in site.rglob("index.html") if p.parent != site / "404"]
    assert len(built) >= 8, [str(p) for p in built]
    assert len(built) == len(nav_pages()), (len(built), len(nav_pages()))
    cli = (site / "reference" / "cli" / "index.html").read_text(encoding="utf-8")
    for name in ("simulate", "match", "ladder", "piao", "rules", "warmup"):
        assert f'id="caishen-{name}"' in cli and f"usage: caishen {name}" in cli, name
    api = (site / "reference" / "api" / "hand" / "index.html").read_text(encoding="utf-8")
    assert 'id="caishen.sim.hand.shanten"' in api and ":func:" not in api
    results = (site / "results" / "index.html").read_text(encoding="utf-8")
    assert "20261203" in results and "learned:kaihua" in results
    assert "[Unreleased]" in (site / "changelog" / "index.html").read_text(encoding="utf-8")


def test_glossary_names_every_jiating_pattern_as_J_8_does():
    """Issue 45: the Jiating pattern names the scores print (付付尖, 清四付, ...) are in the glossary, each row
    the J-8 table's ID, name, points and definition, with the pinyin of caishen.sim.rules.jiating.tables."""
    from caishen.sim.rules.jiating.tables import PATTERN_IDS, PATTERN_NAMES, PATTERN_PINYIN

    j8 = {m.group(1): (m.group(2).strip(), m.group(3).strip(), m.group(4).strip())
          for m in re.finditer(r"^\| \*\*(P\d\d)\*\* \| ([^|]+) \| ([^|]+) \| ([^|]+) \|",
                               (ROOT / "docs/rules/jiating.md").read_text(encoding="utf-8"), re.M)}
    rows = {m.group(1): tuple(c.strip() for c in m.group(2).split(" | "))
            for m in re.finditer(r"^\| (P\d\d) \| (.+) \|$", (ROOT / "docs/glossary.md").read_text(encoding="utf-8"),
                                 re.M)}
    assert list(rows) == list(j8) == list(PATTERN_IDS)
    for pid, (name, pinyin, points, meaning) in rows.items():
        assert (name, points, meaning) == j8[pid] and name == PATTERN_NAMES[pid] and pinyin == PATTERN_PINYIN[pid]
