"""No function of the package takes more than 12 parameters (issue 44; the developers' guide's house rule).

Every function and method in ``sim/``, ``envs/``, ``agents/`` and
``caishen/`` (nested ones and lambdas' enclosing functions included) is read
with ``ast``; its parameters are counted as written in its signature:
positional, keyword-only, ``*args`` and ``**kwargs``, and ``self`` / ``cls``.
What a caller would pass as a thirteenth argument belongs in a named,
documented config (:class:`caishen.sim.selfplay.runner.Execution` for how a
job runs, :class:`caishen.agents.tune.Search` for what a tuning computes, a
numba named tuple for a kernel's context).
"""

from __future__ import annotations

import ast
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
FOLDERS = ("sim", "envs", "agents", "caishen")
MAX_PARAMETERS = 12
#: functions allowed over the limit (``path:Class.function``: their count today): none since issue 44's round;
#: an entry that no longer exceeds the limit fails below
ALLOWED: dict[str, int] = {}


def parameters(fn: ast.FunctionDef | ast.AsyncFunctionDef) -> int:
    """The parameters of ``fn`` as written in its signature (``self`` and ``*args`` / ``**kwargs`` count)."""
    a = fn.args
    return len(a.posonlyargs) + len(a.args) + len(a.kwonlyargs) + (a.vararg is not None) + (a.kwarg is not None)


def functions(tree: ast.AST, prefix: str = ""):
    """``(qualified name, node)`` of every function in ``tree``: ``Class.method``, ``outer.inner``."""
    for node in ast.iter_child_nodes(tree):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            yield prefix + node.name, node
            yield from functions(node, f"{prefix}{node.name}.")
        elif isinstance(node, ast.ClassDef):
            yield from functions(node, f"{prefix}{node.name}.")
        else:
            yield from functions(node, prefix)


def too_long(text: str, where: str, limit: int = MAX_PARAMETERS) -> dict[str, int]:
    """``{"where:qualified name": parameters}`` of the functions of the source ``text`` over ``limit``."""
    return {f"{where}:{name}": n for name, fn in functions(ast.parse(text))
            if (n := parameters(fn)) > limit}


def package_over_limit() -> dict[str, int]:
    found = {}
    for folder in FOLDERS:
        for path in sorted((ROOT / folder).rglob("*.py")):
            found.update(too_long(path.read_text(encoding="utf-8"), path.relative_to(ROOT).as_posix()))
    return found


def test_no_function_takes_more_than_12_parameters():
    found = package_over_limit()
    new = {k: v for k, v in found.items() if k not in ALLOWED}
    assert not new, (f"functions over {MAX_PARAMETERS} parameters: {new}; group related arguments into one named, "
                     "documented config (runner.Execution, a frozen dataclass, a numba named tuple)")
    grown = {k: v for k, v in found.items() if k in ALLOWED and v > ALLOWED[k]}
    assert not grown, f"allowed functions grew: {grown} (allowed: at most {ALLOWED})"
    fixed = sorted(set(ALLOWED) - set(found))
    assert not fixed, f"{fixed} no longer take more than {MAX_PARAMETERS} parameters: remove them from ALLOWED"


def test_the_check_counts_every_kind_of_parameter_and_can_fail():
    src = '''
def ok(a, b, c, d, e, f, g, h, i, j, k, l): pass
def positional(a, b, c, d, e, f, g, h, i, j, k, l, m): pass
def star(a, b, c, d, e, f, g, h, i, j, k, *rest, **more): pass
def keywords(a, /, b, *, c, d, e, f, g, h, i, j, k, l, m): pass
class C:
    def method(self, a, b, c, d, e, f, g, h, i, j, k, l): pass
    def fine(self, a, b, c, d, e, f, g, h, i, j, k): pass
def outer():
    def inner(a, b, c, d, e, f, g, h, i, j, k, l, m): pass
'''
    assert too_long(src, "x.py") == {"x.py:positional": 13, "x.py:star": 13, "x.py:keywords": 13,
                                     "x.py:C.method": 13, "x.py:outer.inner": 13}
