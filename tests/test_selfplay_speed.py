"""Issue 11 item 2 (self-play per-step cost): the borrowed views of the batch loop.

:func:`caishen.sim.selfplay.batch._borrowed` gives a view of an array without its
reference count (a null meminfo); the batch loop reads and writes through it.
It must be the same memory: reads see the array, writes land in it.  (That
the batch results do not move is tests/test_golden.py.)
"""

from __future__ import annotations

import numpy as np
from numba import njit

from caishen.sim.selfplay.batch import _borrowed


@njit(cache=True)
def _sum_and_bump(a):
    b = _borrowed(a)
    s = 0
    for i in range(b.shape[0]):
        for j in range(b.shape[1]):
            s += b[i, j]
            b[i, j] += 1
    return s, b.shape[0], b.shape[1]


def test_borrowed_view_is_the_same_memory():
    a = np.arange(12, dtype=np.int64).reshape(3, 4)
    s, r, c = _sum_and_bump(a)
    assert (s, r, c) == (66, 3, 4)
    assert (a == np.arange(1, 13).reshape(3, 4)).all()
    t = np.arange(20, dtype=np.int64).reshape(4, 5)[:, 1:4]  # strided
    s, r, c = _sum_and_bump(t)
    assert (s, r, c) == (int(np.arange(20).reshape(4, 5)[:, 1:4].sum()), 4, 3)
