"""numba's ``inline="always"`` without its quadratic copy: the same machine code, half the compile.

numba inlines a kernel marked ``inline="always"`` by copying the callee's IR
into the caller, and it copies that IR one block at a time, each block with
a fresh ``copy.deepcopy`` memo (``InlineWorker.inline_ir``'s ``copy_ir``).
Every variable holds the function's scope, and the scope holds every
variable, so each block's copy copies *all* the callee's variables again: the
cost is blocks times variables.  The engine's step (one function of its
inlined helpers, thousands of blocks and variables) is inlined into the
self-play loop, the batched env and the studies, and this copy was half the
compile of the first run (``caishen.sim.selfplay.batch._play_hand``: 40 s on
one core, 19 s of it in these copies; numba issue #8989, open).

:func:`install` makes one ``copy_ir`` copy every block of one IR with one
memo: the scope and each variable are copied once, and a block's variables
are the same objects as in the original IR's one scope (they were equal
copies of it before).  The IR that results is the same, and so is the
code: ``_play_hand`` compiles to byte-identical assembly with and without it
(checked when this was written, numba 0.68), in 21 s instead of 40
(``_play_hand`` has since been inlined into ``_play_batch_walls``, its one caller).

How: numba's ``numba.core.inline_closurecall`` module calls ``copy.deepcopy``
only in ``copy_ir``; :func:`install` gives that module a ``copy`` whose
``deepcopy`` passes an ``ir.Block`` copied inside ``InlineWorker.inline_ir``
the memo of its source scope (one memo per IR copied: ``inline_ir`` copies the
callee and then its copy, which must stay apart) and is ``copy.deepcopy``
otherwise.  Where a numba release no longer has what this relies on,
:func:`install` changes nothing (the compile is then as slow as numba's).
:mod:`caishen.sim` installs it on import, before any kernel compiles; it
applies to the whole process (a user's own inlined kernels too).
"""

from __future__ import annotations

import copy
import functools
import threading
import types

__all__ = ["install", "installed"]

_state = threading.local()  # .memos: a stack, one {id(source scope): memo} per inline_ir call in progress


class _CopyModule(types.ModuleType):
    """``copy`` as :mod:`numba.core.inline_closurecall` sees it once installed (module docstring)."""

    def __init__(self, block_type):
        super().__init__("copy")
        self._block = block_type

    def __getattr__(self, name):
        return getattr(copy, name)

    def deepcopy(self, x, memo=None):
        stack = getattr(_state, "memos", None)
        if memo is None and stack and isinstance(x, self._block):
            memo = stack[-1].setdefault(id(x.scope), {})
        return copy.deepcopy(x, memo)


def _with_memos(inline_ir):
    @functools.wraps(inline_ir)
    def wrapper(*args, **kwargs):
        stack = getattr(_state, "memos", None)
        if stack is None:
            stack = _state.memos = []
        stack.append({})
        try:
            return inline_ir(*args, **kwargs)
        finally:
            stack.pop()

    wrapper._caishen_linear_copy = True
    return wrapper


def installed() -> bool:
    """True if :func:`install` is in effect in this process."""
    from numba.core import inline_closurecall as icc

    return isinstance(getattr(icc, "copy", None), _CopyModule) and getattr(
        icc.InlineWorker.inline_ir, "_caishen_linear_copy", False)


def install() -> bool:
    """Make numba's inliner copy each inlined IR with one memo (module docstring).

    Idempotent.  Returns True if in effect, False where this numba lacks
    ``inline_closurecall.copy`` (the :mod:`copy` module) or
    ``InlineWorker.inline_ir``: then nothing is changed.
    """
    from numba.core import inline_closurecall as icc
    from numba.core import ir

    if installed():
        return True
    worker = getattr(icc, "InlineWorker", None)
    if getattr(icc, "copy", None) is not copy or not callable(getattr(worker, "inline_ir", None)):
        return False
    worker.inline_ir = _with_memos(worker.inline_ir)
    icc.copy = _CopyModule(ir.Block)
    return True
