"""caishen.numba_inline: numba's inliner copies an inlined IR in time linear in its size, with the same result."""

from __future__ import annotations

import copy

from numba import njit
from numba.core import inline_closurecall as icc
from numba.core import ir

import caishen.sim  # noqa: F401  (installs the patch)
from caishen.numba_inline import install, installed


def _callee_and_caller(k: int):
    """A fresh callee of ``k`` if/else pairs (about 3k blocks, 2k variables), inlined into a fresh caller."""
    lines = ["def callee(x):", "    y0 = x"]
    for i in range(k):
        lines += [f"    if x > {i}:", f"        y{i + 1} = y{i} + {i}", "    else:", f"        y{i + 1} = y{i} - 1"]
    lines += [f"    return y{k}", "def caller(x):", "    return callee(x) + 1"]
    ns: dict = {}
    exec("\n".join(lines), ns)  # noqa: S102  (test code generating test functions)
    python = ns["caller"]
    ns["callee"] = njit(inline="always")(ns["callee"])
    return njit(python), python


def _var_copies(monkeypatch, k: int) -> int:
    """How many ``ir.Var`` objects numba copies while compiling a caller that inlines the callee of ``k``."""
    count = [0]
    original = ir.Var.__deepcopy__

    def counting(self, memo):
        count[0] += 1
        return original(self, memo)

    monkeypatch.setattr(ir.Var, "__deepcopy__", counting)
    jitted, python = _callee_and_caller(k)
    for x in (-1, 0, 3, k // 2, k + 5):
        assert jitted(x) == python(x)
    monkeypatch.setattr(ir.Var, "__deepcopy__", original)
    return count[0]


def test_installed_on_import_and_idempotent():
    assert installed()
    assert install() and installed()
    assert not hasattr(icc.InlineWorker.inline_ir.__wrapped__, "__wrapped__")  # wrapped once


def test_copies_grow_linearly_and_numba_alone_quadratically(monkeypatch):
    # doubling the callee doubles the copies with the patch; without it (numba's per-block memo) they
    # grow four-fold: the test tells the two apart, and the inlined code computes the same either way
    small, large = _var_copies(monkeypatch, 20), _var_copies(monkeypatch, 40)
    assert 0 < small and large < 2.6 * small, (small, large)
    with monkeypatch.context() as m:
        m.setattr(icc, "copy", copy)
        m.setattr(icc.InlineWorker, "inline_ir", icc.InlineWorker.inline_ir.__wrapped__)
        assert not installed()
        small_numba, large_numba = _var_copies(m, 20), _var_copies(m, 40)
    assert installed()
    assert large_numba > 3.4 * small_numba and small_numba > 5 * small, (small_numba, large_numba, small)
