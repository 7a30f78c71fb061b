"""The rule reference ``docs/rules/`` defines every rule and decision ID the code cites.

Docstrings, comments and test names cite rule IDs (``K-2.5``, ``J-4.2``,
``P27``) and decision IDs (``E3`` and ``J5`` of the engine, ``D3`` of a rule
set); ``docs/rules/kaihua.md`` and ``docs/rules/jiating.md`` define them
(``docs/rules/README.md`` says how an ID is written and cited).  These tests
read text only (no numba compile; a few seconds):

- (a) every ID cited in ``sim/ envs/ agents/ benchmarks/ notebooks/ tests/``
  and the README is defined in ``docs/rules/``, each ID exactly once, and
  the docs define exactly the rule IDs of the binding spec (when it is
  beside the repository);
- (b) every scoring rule (K-6.x, K-7.x, K-8.x, K-9.x, J-6.x, J-7, P01..P50)
  has a test whose name holds its ID (``K-6.2`` -> ``K_6_2``);
- (c) the docs are readable where a user looks: the package ships them
  (``caishen.rules_docs``; :mod:`caishen.sim.ruledocs` reads them, and
  ``caishen rules K-2.5`` prints :func:`rule_text`; an installed package is
  checked in ``tests/test_packaging.py``); the traceability tables in the docs
  name only tests and functions that exist.

A bare decision ID ``D3`` means the rule set of its context: a qualifier
just before it on the same line (``kaihua D3``, ``Jiating's D3``), else the
file (``sim/rules/kaihua.py``, ``tests/test_jiating_*.py``), else the rule set
of the nearest rule ID cited before it (``J2 (J-4.2 ...): ... (D3)``).  An ID
that none of these resolves fails test (a): write ``Kaihua D3`` or
``Jiating D3`` there.

As a script it prints (or writes into the docs) the traceability tables::

    python tests/test_rule_docs.py kaihua      # print the table
    python tests/test_rule_docs.py --write     # refresh both docs in place
    python tests/test_rule_docs.py --missing   # scoring rules without a named test
"""

from __future__ import annotations

import ast
import bisect
import dataclasses
import functools
import re
import sys
from pathlib import Path

import pytest

import shared_data
from caishen.sim.ruledocs import DEF_RE, Definition, definitions, defined_ids, pages, plain_text, rule_text  # noqa: F401

ROOT = Path(__file__).resolve().parents[1]
DOCS = ROOT / "docs" / "rules"
RULE_DOCS = {"kaihua": DOCS / "kaihua.md", "jiating": DOCS / "jiating.md"}
#: where cited IDs are looked for (files *.py and *.md below these, and README.md)
SOURCE_DIRS = ("sim", "envs", "agents", "benchmarks", "notebooks", "tests")
#: where the code that implements a rule lives (the traceability column "where")
IMPL_DIRS = ("sim", "envs", "agents")
THIS = Path(__file__).resolve()
#: pattern IDs that tests use on purpose as examples of an unknown ID (a ValueError must name them)
NOT_CITATIONS = {"tests/test_jiating_scoring.py": {"P00", "P51", "P99"}}

# --------------------------------------------------------------------------- ID syntax
#: a cited rule or pattern ID in text
RULE_RE = re.compile(r"(?<![\w-])(?:(?P<rs>[KJ])-(?P<a>\d{1,2})(?:\.(?P<b>\d{1,2}))?|P(?P<p>\d\d))(?![\w])")
#: the same IDs normalized in a test name: K_6_2, J_7, P27 (test_P29_P40_... holds four)
NAME_RE = re.compile(r"(?<![A-Za-z0-9])(?:(?P<rs>[KJ])_(?P<a>\d{1,2})(?:_(?P<b>\d{1,2}))?|P(?P<p>\d\d))(?!\d|_\d)")
#: a cited decision ID: D3 (of a rule set), E3 and J5 (of the engine)
DEC_RE = re.compile(r"(?<![\w-])(?P<kind>[DEJ])(?P<n>\d{1,2})(?![\w])")
#: IDs of the scoring rules, which test (b) wants a named test for
SCORING_RE = re.compile(r"K-[6-9]\.\d+|J-6\.\d+|J-7|P\d\d")


def _rule_id(m: re.Match) -> str:
    if m["p"]:
        return "P" + m["p"]
    return f"{m['rs']}-{m['a']}" + (f".{m['b']}" if m["b"] else "")


def normalized(rule_id: str) -> str:
    """The form of a rule ID inside a test name: ``K-6.2`` -> ``K_6_2``, ``P27`` -> ``P27``."""
    return rule_id.replace("-", "_").replace(".", "_")


# --------------------------------------------------------------------------- citations in the code
@dataclasses.dataclass(frozen=True)
class Citation:
    path: str  #: repository-relative, posix
    line: int
    id: str  #: as the docs define it ("K-2.5", "P27", "Kaihua D3", "engine J5"), "" if unresolved
    raw: str  #: as written ("D3", "K_2_5", ...)


def source_files() -> list[Path]:
    files = [ROOT / "README.md"] if (ROOT / "README.md").exists() else []
    for d in SOURCE_DIRS:
        for ext in ("*.py", "*.md"):
            files.extend(p for p in (ROOT / d).rglob(ext) if ".venv" not in p.parts)
    return sorted(p for p in set(files) if p.resolve() != THIS)


def _rel(path: Path) -> str:
    return path.resolve().relative_to(ROOT).as_posix()


def _ruleset_of(path: str, text: str, pos: int) -> str:
    """The rule set ("Kaihua" / "Jiating") a bare ``D<n>`` at ``text[pos]`` belongs to, "" if unknown."""
    line_start = text.rfind("\n", 0, pos) + 1
    before = text[max(line_start, pos - 40):pos].lower()
    k, j = before.rfind("kaihua"), before.rfind("jiating")
    if k >= 0 or j >= 0:
        return "Kaihua" if k > j else "Jiating"
    name = path.lower()  # the file's path: sim/rules/jiating/scoring.py is Jiating's
    if "kaihua" in name:
        return "Kaihua"
    if "jiating" in name:
        return "Jiating"
    last = None
    for last in RULE_RE.finditer(text, max(0, pos - 1500), pos):
        pass
    if last is None:
        return ""
    return "Kaihua" if last["rs"] == "K" else "Jiating"


@functools.lru_cache(maxsize=None)
def citations() -> tuple[Citation, ...]:
    """Every rule and decision ID cited in the source files (text and test names)."""
    out = []
    for p in source_files():
        rel = _rel(p)
        text = p.read_text(encoding="utf-8")
        skip = NOT_CITATIONS.get(rel, set())

        starts = [0] + [m.end() for m in re.finditer("\n", text)]

        def line_of(pos: int) -> int:
            return bisect.bisect_right(starts, pos)

        for m in RULE_RE.finditer(text):
            rid = _rule_id(m)
            if rid not in skip:
                out.append(Citation(rel, line_of(m.start()), rid, m.group()))
        for m in DEC_RE.finditer(text):
            if m["kind"] in "EJ":
                did = f"engine {m['kind']}{m['n']}"
            else:
                rs = _ruleset_of(rel, text, m.start())
                did = f"{rs} D{m['n']}" if rs else ""
            out.append(Citation(rel, line_of(m.start()), did, m.group()))
        if p.suffix == ".py" and rel.startswith("tests/"):
            for name, line in _test_functions_in(p):
                for m in NAME_RE.finditer(name):
                    out.append(Citation(rel, line, _rule_id(m), m.group()))
    return tuple(out)


def _test_functions_in(path: Path) -> list[tuple[str, int]]:
    """``(name, line)`` of every test function (``test*``, methods included) in a file."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    return [(n.name, n.lineno) for n in ast.walk(tree)
            if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef)) and n.name.startswith("test")]


@functools.lru_cache(maxsize=None)
def all_tests() -> tuple[tuple[str, str], ...]:
    """``(file, test name)`` of every test in ``tests/test_*.py`` (this file included)."""
    return tuple((_rel(p), name) for p in sorted((ROOT / "tests").glob("test_*.py"))
                 for name, _ in _test_functions_in(p))


def _tests_named_after(rule_id: str) -> list[str]:
    """``file::test`` of the tests whose name holds ``rule_id`` (normalized, ``K_6_2``)."""
    pat = re.compile(rf"(?<![A-Za-z0-9]){re.escape(normalized(rule_id))}(?!\d|_\d)")
    return [f"{f}::{n}" for f, n in all_tests() if pat.search(n)]


# --------------------------------------------------------------------------- where a citation sits
@functools.lru_cache(maxsize=None)
def _scopes(rel: str) -> tuple[list[tuple[int, int, str]], list[tuple[int, int, str]]]:
    """Functions / classes ``(start, end, qualname)`` and top-level statements ``(start, end, name)``."""
    tree = ast.parse((ROOT / rel).read_text(encoding="utf-8"))
    defs: list[tuple[int, int, str]] = []

    def visit(node, prefix):
        for child in ast.iter_child_nodes(node):
            if isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
                q = prefix + child.name
                start = min([child.lineno] + [d.lineno for d in child.decorator_list])
                defs.append((start, child.end_lineno, q))
                visit(child, q + ".")

    visit(tree, "")
    tops = []
    for i, st in enumerate(tree.body):
        if i == 0 and isinstance(st, ast.Expr) and isinstance(getattr(st, "value", None), ast.Constant):
            name = "(module docstring)"
        elif isinstance(st, ast.Assign):
            name = ", ".join(t.id for t in st.targets if isinstance(t, ast.Name)) or ""
        elif isinstance(st, ast.AnnAssign) and isinstance(st.target, ast.Name):
            name = st.target.id
        else:
            name = ""
        tops.append((st.lineno, st.end_lineno, name))
    return defs, tops


@functools.lru_cache(maxsize=None)
def _lines(rel: str) -> list[str]:
    return (ROOT / rel).read_text(encoding="utf-8").splitlines()


def scope_of(rel: str, line: int) -> str:
    """The innermost function or class holding ``line`` of a Python file, else the
    top-level name assigned there (a ``#:`` comment goes with the statement below it),
    else ``""``."""
    defs, tops = _scopes(rel)
    inner = [d for d in defs if d[0] <= line <= d[1]]
    if inner:
        return max(inner, key=lambda d: d[0])[2]
    lines = _lines(rel)
    for start, end, name in tops:
        if start <= line <= end:
            return name
        if start > line:
            between = lines[line - 1:start - 1]
            if all(s.lstrip().startswith("#") for s in between):
                return name
            break
    return ""


# --------------------------------------------------------------------------- traceability tables
def _where(rid: str) -> str:
    """Where ``rid`` is implemented: for a decision the *Where:* of its definition (written
    by hand); for a rule the places in IMPL_DIRS that cite it, ``file: f, g`` groups (a file
    whose module docstring alone cites it is listed only when nothing else does)."""
    if " " in rid:
        text = " ".join(rule_text(rid).split())
        return text.split("*Where:* ", 1)[1].rstrip(".") if "*Where:* " in text else "—"
    registries = _registries()
    for level in (0, 1):  # 0: functions and constants other than registries; 1: registries too
        by_file: dict[str, list[str]] = {}
        for c in _impl_citations():
            if c.id != rid:
                continue
            s = scope_of(c.path, c.line)
            names = by_file.setdefault(c.path, [])
            if s and s != "(module docstring)" and s not in names and (level or (c.path, s) not in registries):
                names.append(s)
        parts = [f"`{f}`: " + ", ".join(f"`{n}`" for n in names) for f, names in by_file.items() if names]
        if parts:
            return "; ".join(parts)
    return "; ".join(f"`{f}` (docstring)" for f in by_file) or "—"


def _impl_citations() -> list[Citation]:
    return [c for c in citations()
            if c.path.endswith(".py") and c.path.startswith(tuple(d + "/" for d in IMPL_DIRS))]


@functools.lru_cache(maxsize=None)
def _registries() -> set[tuple[str, str]]:
    """Top-level constants that cite more than 25 pattern IDs (``PATTERNS``, ``DEFAULT_POINTS``,
    ...): listed for an ID only when nothing else cites it."""
    ids: dict[tuple[str, str], set[str]] = {}
    for c in _impl_citations():
        if re.fullmatch(r"P\d\d", c.id):
            ids.setdefault((c.path, scope_of(c.path, c.line)), set()).add(c.id)
    defs = {(f, q) for f, _ in ids for _, _, q in _scopes(f)[0]}
    return {k for k, v in ids.items() if len(v) > 25 and k not in defs and k[1] != "(module docstring)"}


def named_locations(text: str) -> list[tuple[str, str]]:
    """``(file, name)`` pairs of a "where" text: each backticked ``*.py`` path starts a
    file, each backticked identifier after it (``_draw``, ``Game.reset``,
    ``RULESET_FACTS["kaihua"]``: its leading name) is a name in that file."""
    out, current = [], None
    for tok in re.findall(r"`([^`]+)`", text):
        if tok.endswith(".py"):
            current = tok
            out.append((tok, ""))
        elif current:
            m = re.match(r"[A-Za-z_][\w.]*", tok)
            if m:
                out.append((current, m.group()))
    return out


def _citing_tests(rid: str) -> list[str]:
    out = []
    for c in citations():
        if c.id == rid and c.path.startswith("tests/") and c.path.endswith(".py"):
            s = scope_of(c.path, c.line)
            name = s.rsplit(".", 1)[-1]
            key = f"{c.path}::{name}"
            if name.startswith("test") and key not in out:
                out.append(key)
    return out


def traceability(ruleset: str) -> str:
    """The Markdown table of one rule set's doc: every ID it defines -> where the code
    cites it -> the tests named after it (for a decision: the tests citing it)."""
    rows = ["| ID | where the code cites it | tests |", "|---|---|---|"]
    for d in definitions():
        if d.doc != RULE_DOCS[ruleset].name:
            continue
        decision = " " in d.id
        tests = _citing_tests(d.id) if decision else _tests_named_after(d.id)
        tcell = "<br>".join(f"`{t.split('::')[1]}` ({t.split('::')[0][6:]})" for t in tests) or "—"
        rows.append(f"| {d.id} | {_where(d.id)} | {tcell} |")
    return "\n".join(rows) + "\n"


BEGIN, END = "<!-- traceability:begin -->", "<!-- traceability:end -->"


def write_tables() -> None:
    for rs, path in RULE_DOCS.items():
        text = path.read_text(encoding="utf-8")
        a, b = text.index(BEGIN) + len(BEGIN), text.index(END)
        path.write_text(text[:a] + "\n" + traceability(rs) + text[b:], encoding="utf-8")


def scoring_ids() -> list[str]:
    return [d.id for d in definitions() if SCORING_RE.fullmatch(d.id)]


def missing_scoring_tests() -> list[str]:
    return [rid for rid in scoring_ids() if not _tests_named_after(rid)]


# =========================================================================== tests
def test_docs_exist_and_define_ids():
    """(c) the three pages are in the repository and each rule-set page defines IDs."""
    for name in ("README.md", "kaihua.md", "jiating.md"):
        assert (DOCS / name).is_file(), f"docs/rules/{name} is missing"
    docs = {d.doc for d in definitions()}
    assert {"kaihua.md", "jiating.md"} <= docs
    assert "README.md" not in docs, "the index defines no IDs; definitions live in kaihua.md / jiating.md"


def test_every_id_is_defined_once():
    seen: dict[str, Definition] = {}
    twice = []
    for d in definitions():
        if d.id in seen:
            twice.append(f"{d.id}: {seen[d.id].doc}:{seen[d.id].line} and {d.doc}:{d.line}")
        seen[d.id] = d
    assert not twice, "IDs defined more than once:\n" + "\n".join(twice)


def test_every_cited_id_is_defined():
    """(a) every rule, pattern and decision ID cited in the code and tests is in docs/rules/."""
    assert len(citations()) > 1000  # the scan found the code's citations at all
    ids = defined_ids()
    bad = [f"{c.path}:{c.line}: {c.raw!r}" + (f" = {c.id}" if c.id else " (which rule set's? write 'Kaihua "
                                                                       f"{c.raw}' or 'Jiating {c.raw}')")
           for c in citations() if c.id not in ids]
    assert not bad, "IDs cited in the code but not defined in docs/rules/:\n" + "\n".join(bad)


def test_citation_scanner_reads_ids_as_written():
    """The scanner itself: forms of IDs, test names, and how a bare D3 is resolved."""
    text = "K-6.1 .. K-6.6, J-2.2..J-2.4, K-2.4/K-2.5 (P27). x-1 XK-1 K-12.3"
    assert [_rule_id(m) for m in RULE_RE.finditer(text)] == [
        "K-6.1", "K-6.6", "J-2.2", "J-2.4", "K-2.4", "K-2.5", "P27", "K-12.3"]
    name = "test_K_8_1_to_K_8_3_J_7_exclusions_P29_P40_K_6_23"
    assert [_rule_id(m) for m in NAME_RE.finditer(name)] == ["K-8.1", "K-8.3", "J-7", "P29", "P40", "K-6.23"]
    assert _tests_named_after("K-6.2") and not any("K_6_23" in t for t in _tests_named_after("K-6.2"))
    assert _ruleset_of("sim/engine.py", "x = 1  # K-2.5 (kaihua D3)", 25) == "Kaihua"
    assert _ruleset_of("sim/engine.py", "x  # Jiating's D3", 17) == "Jiating"
    assert _ruleset_of("tests/test_kaihua_scoring.py", "# D3: shape", 2) == "Kaihua"
    assert _ruleset_of("sim/engine.py", "- J2 (J-4.2 ready): (scorer decision D3)", 37) == "Jiating"
    assert _ruleset_of("sim/selfplay/runner.py", "see D3", 4) == ""
    assert normalized("K-6.2") == "K_6_2" and normalized("J-7") == "J_7" and normalized("P27") == "P27"


#: where each list of decisions is stated: a module, or a package whose modules each state
#: the decisions governing their code (the engine: E1-E10, J1-J11)
DECISION_SOURCES = {"Kaihua D": "sim/rules/kaihua", "Jiating D": "sim/rules/jiating",
                    "engine E": "sim/engine", "engine J": "sim/engine"}


def stated_decisions(prefix: str, rel: str) -> dict[str, list[str]]:
    """``{decision ID: [files whose module docstring states it as a '- X<n>' bullet]}``."""
    path = ROOT / rel
    files = sorted(path.glob("*.py")) if path.is_dir() else [path]
    letter = prefix[-1]
    out: dict[str, list[str]] = {}
    for f in files:
        doc = ast.get_docstring(ast.parse(f.read_text(encoding="utf-8"))) or ""
        for n in re.findall(rf"^- {letter}(\d+)\b", doc, re.M):
            out.setdefault(f"{prefix}{n}", []).append(_rel(f))
    return out


def test_decision_lists_of_the_modules_are_the_docs_lists():
    """Each ``- D<n>`` / ``- E<n>`` / ``- J<n>`` bullet of a module docstring is defined in the
    docs under its module's name, each is stated once (the engine's in the module whose code
    it governs), and the docs define no decision the modules do not state."""
    for prefix, rel in DECISION_SOURCES.items():
        where = stated_decisions(prefix, rel)
        stated = set(where)
        documented = {i for i in defined_ids() if i.startswith(prefix) and i[len(prefix):].isdigit()}
        assert stated, f"no '- {prefix[-1]}<n>' bullets found in the docstrings of {rel}"
        twice = {i: f for i, f in where.items() if len(f) > 1}
        assert not twice, f"decisions stated in more than one module: {twice}"
        assert stated == documented, f"{rel} states {sorted(stated - documented)} not in the docs; " \
                                     f"the docs define {sorted(documented - stated)} not in {rel}"


def _spec_dir() -> Path | None:
    d = shared_data.path("rules")  # $CAISHEN_SHARED or ../shared
    return d if (d / "kaihua.md").is_file() and (d / "jiating.md").is_file() else None


def test_docs_define_exactly_the_ids_of_the_binding_spec():
    """The docs are the spec's rule IDs, no more, no fewer (K-..., J-..., P..)."""
    spec = _spec_dir()
    if spec is None:
        pytest.skip(shared_data.reason("rules", "kaihua.md"))
    for rs, prefix in (("kaihua", "K-"), ("jiating", "J-")):
        text = (spec / f"{rs}.md").read_text(encoding="utf-8")
        want = set(re.findall(rf"^(?:- |## )({prefix}\d+(?:\.\d+)?)\b", text, re.M))
        want |= set(re.findall(r"^\| (P\d\d) \|", text, re.M))
        got = {d.id for d in definitions() if d.doc == f"{rs}.md" and not re.search(r"\s", d.id)}
        assert want, f"no rule IDs parsed from {spec / (rs + '.md')}"
        assert got == want, f"{rs}: missing {sorted(want - got)}, not in the spec {sorted(got - want)}"


def test_every_scoring_rule_has_a_test_named_after_it():
    """(b) K-6.x, K-7.x, K-8.x, K-9.x, J-6.x, J-7 and P01..P50 each have a named test."""
    ids = scoring_ids()
    assert len([i for i in ids if i.startswith("P")]) == 50
    assert {"K-6.1", "K-6.6", "K-7.1", "K-8.5", "K-9.4", "J-6.1", "J-6.5", "J-7"} <= set(ids)
    missing = missing_scoring_tests()
    assert not missing, "scoring rules without a test named after them: " + ", ".join(missing)


def test_rule_text_prints_one_rule():
    """(c) the lookup ``caishen rules ID`` prints."""
    k25 = rule_text("K-2.5")
    assert k25.startswith("- **K-2.5**") and "财神" in k25 and "kong" in k25
    assert "K-2.6" not in k25.split("\n", 1)[0] and "**K-2.6**" not in k25
    assert rule_text("k_2_5") == k25
    p27 = rule_text("p27").splitlines()  # a table row under its table's header and separator
    assert len(p27) == 3 and p27[2].startswith("| **P27** | 绝张子 | 20 暗x2 |"), p27
    assert p27[0].startswith("| ID | name | points") and set(p27[1]) <= set("|-: "), p27
    assert rule_text("Kaihua D3") != rule_text("Jiating D3")
    assert "**engine E3**" in rule_text("engine e3")
    section = rule_text("J-7")
    assert section.startswith("## J-7") and "大四喜" in section and "## J-8" not in section
    with pytest.raises(ValueError, match="'K-99.1'"):
        rule_text("K-99.1")


_TRACE_ROW = re.compile(r"^\| (?P<id>[^|]+?) \| (?P<where>[^|]*) \| (?P<tests>[^|]*) \|$", re.M)


def test_traceability_tables_name_what_exists():
    """(c) the tables in the docs (and the decisions' *Where:*) name only files, functions
    and tests that exist, and every defined ID has a row; after code moves, refresh them:
    python tests/test_rule_docs.py --write."""
    known_tests = {(f[6:], n) for f, n in all_tests()}
    for path in RULE_DOCS.values():
        text = path.read_text(encoding="utf-8")
        assert BEGIN in text and END in text, f"{path.name}: no traceability markers"
        table = text[text.index(BEGIN):text.index(END)]
        rows = {m["id"]: m for m in _TRACE_ROW.finditer(table) if m["id"] not in ("ID", "---")}
        ids = [d.id for d in definitions() if d.doc == path.name]
        assert set(ids) <= set(rows), f"{path.name}: no table row for {sorted(set(ids) - set(rows))}"
        stale = []
        wheres = [(rid, m["where"]) for rid, m in rows.items()]
        wheres += [(i, rule_text(i)) for i in ids if " " in i]  # the decisions' *Where:*
        for rid, where in wheres:
            for f, name in named_locations(where):
                if not (ROOT / f).is_file():
                    stale.append(f"{rid}: file {f}")
                elif name:
                    defs, tops = _scopes(f)
                    names = {q for _, _, q in defs} | {n for _, _, t in tops for n in t.split(", ")}
                    if name not in names:
                        stale.append(f"{rid}: {f}::{name}")
        for rid, m in rows.items():
            for n, f in re.findall(r"`(test\w+)` \(([\w.]+)\)", m["tests"]):
                if (f, n) not in known_tests:
                    stale.append(f"{rid}: test {f}::{n}")
        assert not stale, (f"{path.name}: names what no longer exists "
                           "(python tests/test_rule_docs.py --write):\n" + "\n".join(sorted(set(stale))))


def test_options_of_the_rule_sets_are_documented():
    """Every field of every rule set's options is declared once (``option``), and its doc's options table is
    the table of those declarations (name, rule ID, default, bounds or choices, doc line)."""
    from caishen.sim.rules import base
    from caishen.sim.rules.options import options_table

    for rs in base.names():
        cls = base.get(rs).options
        assert [d.name for d in cls.declarations()] == [f.name for f in dataclasses.fields(cls)], rs
        text = RULE_DOCS[rs].read_text(encoding="utf-8")
        m = re.search(r"^\| option \| rule \| default \| values \|\n(?:\|.*\n)+", text, re.M)
        assert m and m.group(0) == options_table(cls), (
            f"docs/rules/{rs}.md: the options table is not caishen.sim.rules.options.options_table of its options")


def test_options_table_check_can_fail():
    from caishen.sim.rules.kaihua import KaihuaRules
    from caishen.sim.rules.options import options_table

    table = options_table(KaihuaRules)
    assert "| `reserved_tiles` | K-3.4 | **20** | 0..82:" in table
    assert options_table(KaihuaRules).replace("**20**", "**21**") != table


def test_K_7_1_P47_options_of_issue_22_are_in_the_rules_command(capsys):
    """``caishen rules K-7.1`` names the option discard_win_max_caishen, ``caishen rules P47``
    every value of dihu (the options tables list them too)."""
    from caishen.cli import main

    assert main(["rules", "K-7.1", "P47", "--markdown"]) == 0
    out = capsys.readouterr().out
    assert "`discard_win_max_caishen`" in out and "**1**" in out
    for value in ("dealer_ready_first_discard", "win_on_dealers_first_discard", "dealer_ready_undeclared"):
        assert f'`"{value}"`' in out
    assert "| `discard_win_max_caishen` | K-7.1 | **1** |" in RULE_DOCS["kaihua"].read_text(encoding="utf-8")
    assert '"dealer_ready_undeclared"' in rule_text("P47")


def test_the_package_reads_the_repositorys_pages():
    """(c) what the package reads (``caishen.rules_docs``) is ``docs/rules/``, page for page."""
    assert pages() == {p.name: p.read_text(encoding="utf-8") for p in sorted(DOCS.glob("*.md"))}


def test_caishen_rules_command_prints_definitions(capsys):
    """(c) ``caishen rules ID ...`` prints each definition; an unknown ID exits 2 naming it; no ID: the index."""
    from caishen.cli import main

    assert main(["rules", "K-2.5", "p27", "--markdown"]) == 0
    out = capsys.readouterr().out
    assert out == rule_text("K-2.5") + "\n" + rule_text("P27")
    # issue 45: by default plain text for a terminal: no emphasis marks, a table row as "column: cell" lines
    assert main(["rules", "K-2.5", "p27"]) == 0
    out = capsys.readouterr().out
    assert out == plain_text(rule_text("K-2.5") + "\n" + rule_text("P27"))
    assert "**" not in out and "|" not in out and out.startswith("- K-2.5 A player")
    assert "\nP27\n  name: 绝张子\n" in out and "  predicate: juezhang" in out
    assert main(["rules"]) == 0 and "where each ID is defined" in capsys.readouterr().out
    with pytest.raises(SystemExit) as e:
        main(["rules", "K-99.1"])
    assert e.value.code == 2 and "'K-99.1'" in capsys.readouterr().err


if __name__ == "__main__":
    args = sys.argv[1:]
    if args == ["--write"]:
        write_tables()
    elif args == ["--missing"]:
        print("\n".join(missing_scoring_tests()) or "none")
    elif len(args) == 1 and args[0] in RULE_DOCS:
        print(traceability(args[0]), end="")
    else:
        sys.exit("usage: python tests/test_rule_docs.py kaihua|jiating|--write|--missing")


def test_rules_command_prints_the_options_declarations(capsys):
    """``caishen rules --options NAME``: the declared options' table (as plain text in lines of at most 100
    terminal columns, issue 45; the Markdown table with --markdown); an unknown rule set exits 2 naming it."""
    from caishen.cli import main
    from caishen.sim.rules import base
    from caishen.sim.rules.options import options_table
    from caishen.sim.termtext import display_width

    for rs in base.names():
        assert main(["rules", "--options", rs, "--markdown"]) == 0
        assert capsys.readouterr().out == options_table(base.get(rs).options)
        assert main(["rules", "--options", rs]) == 0
        out = capsys.readouterr().out
        assert out == plain_text(options_table(base.get(rs).options))
        assert max(display_width(line) for line in out.splitlines()) <= 100
    with pytest.raises(SystemExit) as e:
        main(["rules", "--options", "nope"])
    assert e.value.code == 2 and "unknown rule set 'nope'" in capsys.readouterr().err


def test_plain_text_drops_markdown_marks_and_unfolds_tables():
    """plain_text (``caishen rules`` on a terminal): emphasis and code marks dropped, a table row unfolded."""
    md = "## K-1 Title\n**bold** and *italic* and `code`, 2*3*4 stays\n| ID | name |\n|---|---|\n| **P1** | `x` |\nend"
    assert plain_text(md) == "K-1 Title\nbold and italic and code, 2*3*4 stays\nP1\n  name: x\nend"
