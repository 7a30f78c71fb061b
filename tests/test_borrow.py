"""caishen.sim.borrow: borrowed views (no reference counts) of arrays and of tuples of them.

:func:`caishen.sim.borrow.borrowed` gives views without their reference count (a null meminfo); the
batch loop and the labelling loop read and write through them.  They must be the same memory:
reads see the arrays, writes land in them, inside nested tuples too, and other values pass
unchanged.  (That the batch results do not move is tests/test_golden.py.)
"""

from __future__ import annotations

import numpy as np
from numba import njit

from caishen.sim.borrow import borrowed, flat_rows


@njit(cache=True)
def _sum_and_bump(a):
    b = borrowed(a)
    s = 0
    for i in range(b.shape[0]):
        for j in range(b.shape[1]):
            s += b[i, j]
            b[i, j] += 1
    return s, b.shape[0], b.shape[1]


@njit(cache=True)
def _through_a_tuple(bx):
    b = borrowed(bx)
    b[0][1] += 10  # an array of the tuple
    b[2][0][0, 0] = 7.5  # an array inside a nested tuple
    return b[1], b[2][1], b[0].sum() + b[2][0].sum()


@njit(cache=True)
def _none(x):
    return borrowed(x) is None


def test_borrowed_view_is_the_same_memory():
    a = np.arange(12, dtype=np.int64).reshape(3, 4)
    s, r, c = _sum_and_bump(a)
    assert (s, r, c) == (66, 3, 4)
    assert (a == np.arange(1, 13).reshape(3, 4)).all()
    t = np.arange(20, dtype=np.int64).reshape(4, 5)[:, 1:4]  # strided
    s, r, c = _sum_and_bump(t)
    assert (s, r, c) == (int(np.arange(20).reshape(4, 5)[:, 1:4].sum()), 4, 3)


def test_borrowed_tuple_reaches_every_array_and_keeps_the_rest():
    first, inner = np.arange(4, dtype=np.int64), np.zeros((2, 2))
    n, label, total = _through_a_tuple((first, 5, (inner, 3)))
    assert first.tolist() == [0, 11, 2, 3] and inner[0, 0] == 7.5
    assert (n, label, total) == (5, 3, 16 + 7.5)
    assert _none(None)


@njit(cache=True)
def _tail(a, first):
    v = flat_rows(a, first)
    v[0] = -1  # lands in row first, column 0
    return v.shape[0], v.sum()


def test_flat_rows_is_the_tail_of_the_matrix():
    a = np.arange(24, dtype=np.int64).reshape(6, 4)
    n, total = _tail(a, 2)
    assert n == 16 and a[2, 0] == -1 and total == int(a[2:].sum())
