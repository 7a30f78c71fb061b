"""The kernels' random stream: xoshiro256** seeded by splitmix64, exact bounded draws.

Batch self-play draws a few hundred random integers per hand (the wall
shuffle, K-1.3, and the random bots).  numba's ``np.random.randint`` costs
about 15 ns a call inside the engine loop (a thread-local state lookup and a
call each time) and was 13% of random self-play; these inlined kernels cost
a few ns.  The state is a ``uint64[4]`` array (the ``rng`` field of a game
state, :data:`caishen.sim.engine.STATE_DTYPE`), so the stream is explicit and
reproducible: the same seed gives the same draws on every platform.

- xoshiro256** 1.0 (Blackman and Vigna, https://prng.di.unimi.it/), the
  generator numpy's ``PCG64`` documentation lists as a peer of PCG64;
- seeding expands a 64-bit seed with splitmix64, as its authors recommend;
- :func:`_rng_below` is Lemire's nearly divisionless method (exactly
  uniform: the rare biased products are rejected);
- :func:`_rng_shuffle` is the Fisher-Yates shuffle.

``tests/test_rng.py`` checks them against a pure-Python transcription of the
reference C code and for uniformity.
"""

from __future__ import annotations

import numpy as np
from numba import njit

_GOLDEN = np.uint64(0x9E3779B97F4A7C15)
_MIX1 = np.uint64(0xBF58476D1CE4E5B9)
_MIX2 = np.uint64(0x94D049BB133111EB)
_MASK32 = np.uint64(0xFFFFFFFF)


@njit(cache=True, inline="always")
def _rotl(x, k):
    return (x << np.uint64(k)) | (x >> np.uint64(64 - k))


@njit(cache=True)
def _rng_seed(state, seed):
    """Seed ``state: uint64[4]`` from ``seed`` (int, 0 .. 2**63-1) with splitmix64."""
    x = np.uint64(seed)
    for i in range(4):
        x += _GOLDEN
        z = x
        z = (z ^ (z >> np.uint64(30))) * _MIX1
        z = (z ^ (z >> np.uint64(27))) * _MIX2
        state[i] = z ^ (z >> np.uint64(31))


@njit(cache=True, inline="always")
def _rng_next(state):
    """The next ``uint64`` of xoshiro256** (advances ``state`` in place)."""
    s0 = state[0]
    s1 = state[1]
    s2 = state[2] ^ s0
    s3 = state[3] ^ s1
    result = _rotl(s1 * np.uint64(5), 7) * np.uint64(9)
    state[0] = s0 ^ s3
    state[1] = s1 ^ s2
    state[2] = s2 ^ (s1 << np.uint64(17))
    state[3] = _rotl(s3, 45)
    return result


@njit(cache=True, inline="always")
def _rng_below(state, n):
    """A uniform ``int64`` in ``0 .. n-1`` (``1 <= n < 2**32``), Lemire's method."""
    bound = np.uint64(n)
    m = (_rng_next(state) >> np.uint64(32)) * bound
    low = m & _MASK32
    if low < bound:
        threshold = (np.uint64(1 << 32) - bound) % bound
        while low < threshold:
            m = (_rng_next(state) >> np.uint64(32)) * bound
            low = m & _MASK32
    return np.int64(m >> np.uint64(32))


@njit(cache=True, inline="always")
def _rng_shuffle(state, a):
    """Shuffle the 1-d array ``a`` in place, uniformly (Fisher-Yates)."""
    for i in range(a.shape[0] - 1, 0, -1):
        j = _rng_below(state, i + 1)
        t = a[i]
        a[i] = a[j]
        a[j] = t
