"""The layers are folders, and imports go one way (issue 24; ``shared/ARCHITECTURE.md``).

Every import of every module of the package is read with ``ast`` (imports
inside functions included) and checked against :data:`LAYERS`: a module may
import only from its own layer or the ones before it; layers of one rank
(analysis and envs) do not import each other; one rule set never imports
another (and, with ``naming``, outside ``caishen.sim.rules`` no module imports a
rule-set package); a rule set's own analysis (``sim/rules/<name>/analysis.py``)
is in the analysis layer; outside ``caishen.sim.rules`` no string, docstring or
comment names a rule set (:func:`named_rule_sets`); and no two packages import each other, directly or round a
loop.  ``test_checker_catches_*`` show that the check can fail.
"""

from __future__ import annotations

import ast
import io
import re
import tokenize
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
FOLDERS = {"caishen": "caishen", "sim": "caishen.sim", "envs": "caishen.envs", "agents": "caishen.agents"}
GAME = ("tiles", "tables", "hand", "effective", "borrow", "readings", "rng", "validate", "safeio", "ruledocs", "termtext",
        "warmup")
#: (rank, layer, module prefixes) in import order; a prefix matches itself and its submodules
LAYERS = (
    (0, "root", ("caishen", "caishen.sim")),
    (1, "game", tuple(f"caishen.sim.{m}" for m in GAME)),
    (2, "rules", ("caishen.sim.rules",)),
    (3, "engine", ("caishen.sim.engine",)),
    (4, "bots", ("caishen.sim.bots",)),
    (5, "play", ("caishen.sim.selfplay",)),
    (6, "analysis", ("caishen.sim.analysis",)),
    (6, "envs", ("caishen.envs",)),
    (7, "agents", ("caishen.agents",)),
    (8, "app", ("caishen.cli", "caishen.__main__")),
)
#: the root package's lazy attributes (``caishen.read_run``): the one import that points up, made on first use
#: so that ``import caishen`` stays cheap; (importer, imported)
FACADES = {("caishen", "caishen.sim.analysis.run_table")}
RULES = "caishen.sim.rules."
RULES_SHARED = ("base", "codes", "kernels", "options", "records", "vectors", "words")  # the rule sets' common modules


def sources() -> dict[str, tuple[str, bool]]:
    """``module name -> (source, is a package __init__)`` of every module of the package."""
    out = {}
    for folder, pkg in FOLDERS.items():
        for path in sorted((ROOT / folder).rglob("*.py")):
            parts = path.relative_to(ROOT / folder).with_suffix("").parts
            name = ".".join([pkg, *(p for p in parts if p != "__init__")])
            out[name] = (path.read_text(encoding="utf-8"), path.name == "__init__.py")
    return out


def imports(name: str, text: str, is_pkg: bool, known) -> set[str]:
    """The package modules that module ``name`` imports anywhere in its source."""
    found = set()
    for node in ast.walk(ast.parse(text)):
        if isinstance(node, ast.Import):
            found.update(a.name for a in node.names)
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                here = name.split(".") if is_pkg else name.split(".")[:-1]
                base = ".".join(here[: len(here) - node.level + 1] + ([base] if base else []))
            found.update(f"{base}.{a.name}" if f"{base}.{a.name}" in known else base for a in node.names)
    return {m for m in found if m in known and m != name}


#: a rule set's own analysis (``sim/rules/<name>/analysis.py``): in the rule set's folder, in the analysis layer
RULES_ANALYSIS = "analysis"


def layer(module: str) -> tuple[int, str]:
    if rule_set(module) is not None and module.split(".")[4:5] == [RULES_ANALYSIS]:
        return 6, "analysis"
    best = None
    for rank, lay, prefixes in LAYERS:
        for p in prefixes:
            if (module == p or module.startswith(p + ".")) and (best is None or len(p) > best[0]):
                best = (len(p), rank, lay)
    assert best is not None, f"module {module} is in no layer of LAYERS"
    return best[1], best[2]


def rule_set(module: str) -> str | None:
    """The rule-set package ``module`` belongs to (``caishen.sim.rules.<name>...``), or None."""
    if not module.startswith(RULES):
        return None
    head = module[len(RULES):].split(".")[0]
    return None if head in RULES_SHARED else head


def package(module: str, is_pkg: bool) -> str:
    return module if is_pkg else module.rpartition(".")[0]


def violations(src: dict[str, tuple[str, bool]], naming: bool = True) -> list[str]:
    """What breaks the layers in ``src`` (:func:`sources`); ``naming=False`` leaves out imports of a rule-set
    package from outside ``caishen.sim.rules`` (one rule set importing another is always counted)."""
    bad, edges, graph = [], {}, {}
    for name, (text, is_pkg) in src.items():
        (rank, lay), own = layer(name), rule_set(name)
        deps = {d for d in imports(name, text, is_pkg, src) if (name, d) not in FACADES}
        # importing a.b.c runs the __init__ of a.b first: those edges make loops too (not the importer's own)
        graph[name] = {p for d in deps for p in _parents(d) if p in src and p != name and not name.startswith(p + ".")} | deps
        for dep in sorted(deps):
            (drank, dlay), theirs = layer(dep), rule_set(dep)
            if drank > rank or (drank == rank and dlay != lay):
                bad.append(f"{name} ({lay}) imports {dep} ({dlay}): up or sideways")
            if theirs is not None and theirs != own and name != RULES + "kernels" and (own is not None or naming):
                bad.append(f"{name} imports the rule set {theirs!r} ({dep})")
            a, b = package(name, is_pkg), package(dep, src[dep][1])
            if a != b and not b.startswith(a + ".") and not a.startswith(b + "."):
                edges.setdefault(a, set()).add(b)
    bad += [f"packages import each other round a loop: {c}" for c in loops(edges)]
    bad += [f"modules import each other round a loop: {c}" for c in loops(graph)]
    return bad


def _parents(module: str) -> list[str]:
    parts = module.split(".")
    return [".".join(parts[:i]) for i in range(1, len(parts))] + [module]


def loops(graph: dict[str, set[str]]) -> list[str]:
    """One loop (``a -> b -> a``) per back edge of a depth-first search of ``graph``."""
    state, found = {}, []

    def visit(p, path):
        state[p] = 1
        for q in sorted(graph.get(p, ())):
            if state.get(q) == 1:
                found.append(" -> ".join(path[path.index(q):] + [q]))
            elif q not in state:
                visit(q, path + [q])
        state[p] = 2

    for p in sorted(graph):
        if p not in state:
            visit(p, [p])
    return found


def test_imports_go_down_the_layers():
    assert violations(sources()) == []  # naming included: no rule-set package imported outside sim/rules


#: a rule set's decision IDs (``Kaihua D3``) are rule IDs, which any module may cite
_RULE_ID = re.compile(r"\b[a-z]+ d\d{1,2}\b")
#: modules outside ``caishen.sim.rules`` allowed to name a rule set: none (the CLI's default is ``rules.DEFAULT``)
NAMING_EXEMPT: tuple[str, ...] = ()


def named_rule_sets(src: dict[str, tuple[str, bool]], names) -> list[str]:
    """``module:line: name`` for every string literal (docstrings included) or comment of a library module outside
    ``caishen.sim.rules`` that contains a rule set's name (rule IDs such as ``Kaihua D3`` aside)."""
    found = []
    for module, (text, _) in sorted(src.items()):
        if module == RULES.rstrip(".") or module.startswith(RULES) or module in NAMING_EXEMPT:
            continue
        for tok in tokenize.generate_tokens(io.StringIO(text).readline):
            if tok.type not in (tokenize.STRING, tokenize.COMMENT):
                continue
            words = _RULE_ID.sub("", tok.string.lower())
            found += [f"{module}:{tok.start[0]}: {n}" for n in names if n in words]
    return found


def test_no_library_module_outside_rules_names_a_rule_set():
    from caishen.sim.rules import base

    assert named_rule_sets(sources(), base.names()) == []


def test_naming_check_catches_a_name_in_a_literal_a_comment_and_a_docstring():
    from caishen.sim.rules import base

    names = base.names()
    for line in ('x = "tuned:jiating"', "pass  # the Kaihua payments", '"""Scored as in Jiating."""'):
        bad = named_rule_sets(_with("caishen.sim.analysis.summary", line), names)
        assert any(b.startswith("caishen.sim.analysis.summary:") for b in bad), (line, bad)
    assert named_rule_sets(_with("caishen.sim.analysis.summary", "pass  # Kaihua D3, K-2.5"), names) == []


def _with(module: str, line: str) -> dict:
    src = sources()
    text, is_pkg = src[module]
    return {**src, module: (text + f"\n\ndef _injected():\n    {line}\n", is_pkg)}


def test_checker_catches_an_upward_import_inside_a_function():
    bad = violations(_with("caishen.sim.hand", "from caishen.sim.selfplay import runner"))
    assert any("caishen.sim.hand (game) imports caishen.sim.selfplay.runner" in b for b in bad), bad


def test_checker_catches_one_rule_set_importing_another_and_a_rule_set_named_outside_rules():
    bad = violations(_with("caishen.sim.rules.kaihua.kernels", "import caishen.sim.rules.jiating.patterns"))
    assert any("imports the rule set 'jiating'" in b for b in bad), bad
    bad = violations(_with("caishen.sim.bots.search", "from caishen.sim.rules.jiating import kernels"))
    assert any("caishen.sim.bots.search imports the rule set 'jiating'" in b for b in bad), bad


def test_checker_catches_peers_and_loops():
    assert any("sideways" in b for b in violations(_with("caishen.envs.render", "import caishen.sim.analysis.arena")))
    bad = violations(_with("caishen.sim.engine.deal", "from caishen.sim.bots import policies"), naming=False)
    assert any("packages import each other" in b and "caishen.sim.bots" in b for b in bad), bad
    bad = violations(_with("caishen.sim.rules.base", "import caishen.sim.rules.kaihua"), naming=False)
    assert any("round a loop: caishen.sim.rules.base -> caishen.sim.rules.kaihua" in b for b in bad), bad
    bad = violations(_with("caishen.sim.engine.layout", "from caishen.sim.engine import claims"), naming=False)
    assert any("modules import each other" in b and "caishen.sim.engine.claims" in b for b in bad), bad


def test_the_imports_users_write_keep_working():
    """The names issue 24 promised to keep, from their new home or a re-export."""
    import caishen.envs
    from caishen.agents import make_agent
    from caishen.sim.engine import Game, action_name, build_wall
    from caishen.sim.hand import shanten
    from caishen.sim.selfplay import duplicate_deal, play_batch
    from caishen.sim.tiles import parse

    assert callable(play_batch) and callable(duplicate_deal) and callable(make_agent)
    assert callable(Game) and callable(build_wall) and action_name(0)
    assert shanten(parse("123m456p789s11z22z")) == 0 and caishen.envs.__name__ == "caishen.envs"
