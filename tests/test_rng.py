"""caishen.sim.rng against a pure-Python transcription of the reference C code
(xoshiro256**, splitmix64, Lemire's bounded draw), and for uniformity."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from numba import njit
from scipy import stats

from caishen.sim.rng import _rng_below, _rng_next, _rng_seed, _rng_shuffle

M64 = (1 << 64) - 1


def ref_seed(seed):
    """splitmix64, four outputs (https://prng.di.unimi.it/splitmix64.c)."""
    x, out = seed & M64, []
    for _ in range(4):
        x = (x + 0x9E3779B97F4A7C15) & M64
        z = x
        z = ((z ^ (z >> 30)) * 0xBF58476D1CE4E5B9) & M64
        z = ((z ^ (z >> 27)) * 0x94D049BB133111EB) & M64
        out.append(z ^ (z >> 31))
    return out


def rotl(x, k):
    return ((x << k) | (x >> (64 - k))) & M64


def ref_next(s):
    """xoshiro256** 1.0 (https://prng.di.unimi.it/xoshiro256starstar.c), state list in place."""
    result = (rotl((s[1] * 5) & M64, 7) * 9) & M64
    t = (s[1] << 17) & M64
    s[2] ^= s[0]
    s[3] ^= s[1]
    s[1] ^= s[2]
    s[0] ^= s[3]
    s[2] ^= t
    s[3] = rotl(s[3], 45)
    return result


def ref_below(s, n):
    """Lemire's nearly divisionless method on the high 32 bits."""
    m = (ref_next(s) >> 32) * n
    low = m & 0xFFFFFFFF
    if low < n:
        threshold = ((1 << 32) - n) % n
        while low < threshold:
            m = (ref_next(s) >> 32) * n
            low = m & 0xFFFFFFFF
    return m >> 32


@njit
def draws(seed, bounds, out_next, out_below):
    state = np.zeros(4, np.uint64)
    _rng_seed(state, seed)
    for i in range(out_next.shape[0]):
        out_next[i] = _rng_next(state)
    for i in range(bounds.shape[0]):
        out_below[i] = _rng_below(state, bounds[i])


@njit
def shuffled(seed, a):
    state = np.zeros(4, np.uint64)
    _rng_seed(state, seed)
    _rng_shuffle(state, a)


@settings(max_examples=60, deadline=None)
@given(seed=st.integers(0, 2**63 - 1), bounds=st.lists(st.integers(1, 2**32 - 1), min_size=1, max_size=50))
def test_kernels_equal_the_reference(seed, bounds):
    b = np.array(bounds, np.int64)
    out_next = np.zeros(20, np.uint64)
    out_below = np.zeros(len(b), np.int64)
    draws(seed, b, out_next, out_below)
    s = ref_seed(seed)
    assert [int(x) for x in out_next] == [ref_next(s) for _ in range(20)]
    assert [int(x) for x in out_below] == [ref_below(s, n) for n in bounds]


def test_bounds_that_reject_often_still_equal_the_reference():
    """n just over 2**31 rejects about half the products (the retry loop)."""
    bounds = np.full(400, 2**31 + 12345, np.int64)
    out_below = np.zeros(400, np.int64)
    draws(7, bounds, np.zeros(0, np.uint64), out_below)
    s = ref_seed(7)
    assert [int(x) for x in out_below] == [ref_below(s, int(n)) for n in bounds]
    assert (out_below < bounds).all()


def test_shuffle_is_fisher_yates_and_a_permutation():
    a = np.arange(136, dtype=np.uint8)
    shuffled(3, a)
    s, ref = ref_seed(3), list(range(136))
    for i in range(135, 0, -1):
        j = ref_below(s, i + 1)
        ref[i], ref[j] = ref[j], ref[i]
    assert a.tolist() == ref
    assert sorted(a.tolist()) == list(range(136))


@pytest.mark.parametrize("n", [2, 3, 7, 34, 1000])
def test_bounded_draws_are_uniform(n):
    """Chi-square goodness of fit of 200,000 draws; p < 1e-4 would be a defect."""
    b = np.full(200_000, n, np.int64)
    out = np.zeros(len(b), np.int64)
    draws(11, b, np.zeros(0, np.uint64), out)
    counts = np.bincount(out, minlength=n)
    assert len(counts) == n
    assert stats.chisquare(counts).pvalue > 1e-4


def test_shuffle_positions_are_uniform():
    """Where tile 0 lands after 40,000 shuffles of 8 items: uniform over the 8 places."""
    where = np.zeros(8, np.int64)
    for seed in range(40_000):
        a = np.arange(8, dtype=np.uint8)
        shuffled(seed, a)
        where[int(np.flatnonzero(a == 0)[0])] += 1
    assert stats.chisquare(where).pvalue > 1e-4
