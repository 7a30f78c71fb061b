"""caishen.sim.effective: the live effective tiles of every discard at once, and greedy's choice among them.

Two references: the obvious count one discard at a time (numba, on the hand kernels' shanten after
each draw: :func:`one_at_a_time`), compared on many random and structured hands of every size, with
and without a joker (of any kind), holding kinds four times; and the pure-Python shanten of
``hand_reference`` under hypothesis.  The golden runs (``test_golden.py``) pin the bots' play.
"""

from __future__ import annotations

import hand_reference as ref
import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from numba import njit
from test_hand import hands

from caishen.sim import engine as E
from caishen.sim.bots.policies import N_WORK_ROWS, POLICY_GREEDY, _choose_action, new_work
from caishen.sim.effective import N_SCRATCH, _best_effective, _draws_entry, _effective_each, _shanten_each_discard
from caishen.sim.hand import _shanten_each_change
from caishen.sim.tables import class_rows, hand_tables
from caishen.sim.tiles import CAISHEN


@njit(cache=True)
def one_at_a_time(h, joker, tabs, after, want, live, draw, out):
    """The reference count: for each ``k`` of ``want``, ``live[t]`` summed over the draws ``t`` with
    the shanten of ``h - k + t`` below ``after[k]`` (99 for ``t`` held four times in ``h - k``)."""
    for k in range(34):
        if (want >> k) & 1:
            h[k] -= 1
            _shanten_each_change(h, joker, tabs, 1, draw)
            h[k] += 1
            total = 0
            for t in range(34):
                if draw[t] < after[k]:
                    total += live[t]
            out[k] = total


@njit(cache=True)
def _compare(hands_, jokers, lives, wants, tabs, w, bad):
    """For each row: ``_shanten_each_discard`` against ``_shanten_each_change``, and ``_effective_each``
    and ``_best_effective`` against :func:`one_at_a_time`.  ``bad[0]``: rows whose counts differ,
    ``bad[1]``: rows whose choice differs, ``bad[3]``: rows whose shanten after a discard differs; the
    first bad row in ``bad[2]``."""
    after = np.zeros(34, np.int64)
    after_ref = np.zeros(34, np.int64)
    draw = np.zeros(34, np.int64)
    want_out = np.zeros(34, np.int64)
    got = np.zeros(34, np.int64)
    for r in range(hands_.shape[0]):
        h = hands_[r]
        joker = jokers[r]
        _shanten_each_change(h, joker, tabs, -1, after_ref)
        _shanten_each_discard(h, joker, tabs, after, w)
        for k in range(34):
            if after[k] != after_ref[k]:
                bad[3] += 1
                if bad[2] < 0:
                    bad[2] = r
                break
        want_out[:] = 0
        got[:] = 0
        one_at_a_time(h, joker, tabs, after, wants[r], lives[r], draw, want_out)
        _effective_each(h, joker, tabs, after, wants[r], lives[r], w, got)
        pick, best = -1, -1
        for k in range(34):
            if (wants[r] >> k) & 1 and want_out[k] >= best:
                pick, best = k, want_out[k]
        k2, best2 = _best_effective(h, joker, tabs, after, wants[r], lives[r], w)
        differs = False
        for k in range(34):
            if got[k] != want_out[k]:
                differs = True
        if differs:
            bad[0] += 1
        if k2 != pick or best2 != best:
            bad[1] += 1
        if (differs or k2 != pick or best2 != best) and bad[2] < 0:
            bad[2] = r


def _random_cases(n: int, seed: int):
    """``n`` 3m+2 hands (2..14 tiles) with jokers of any kind or none, live counts and discard masks.

    A third are built from runs, triplets, pairs and fours (near-ready hands, seven pairs, kinds held
    four times), the rest dealt from a shuffled wall; the live counts subtract a random part of the
    other tiles; each held kind is asked about with probability 3/4.
    """
    rng = np.random.default_rng(seed)
    out_h = np.zeros((n, 34), np.uint8)
    jokers = rng.choice([-1, -1, CAISHEN, 4, 13, 22, 27, 33], n).astype(np.int64)
    lives = np.zeros((n, 34), np.int64)
    wants = np.zeros(n, np.int64)
    for r in range(n):
        size = int(rng.choice([2, 5, 8, 11, 14, 14, 14]))
        c = np.zeros(34, np.int64)
        if r % 3 == 0:
            while c.sum() < size:
                g = rng.integers(5)
                t = int(rng.integers(34))
                add = {0: [t, t + 1, t + 2] if t < 27 and t % 9 < 7 else [t],
                       1: [t] * 3, 2: [t] * 2, 3: [t] * 4, 4: [t]}[int(g)][: size - int(c.sum())]
                if all(c[x] + add.count(x) <= 4 for x in add):
                    for x in add:
                        c[x] += 1
        else:
            wall = rng.permutation(136) // 4
            c = np.bincount(wall[:size], minlength=34)
        seen = np.zeros(34, np.int64)
        for t in rng.permutation(136)[: rng.integers(0, 70)] // 4:
            if c[t] + seen[t] < 4:
                seen[t] += 1
        out_h[r] = c
        lives[r] = 4 - c - seen
        for k in np.flatnonzero(c):
            if rng.random() < 0.75:
                wants[r] |= 1 << int(k)
    return out_h, jokers, lives, wants


@pytest.mark.parametrize("seed", [1, 2])
def test_every_discard_at_once_equals_one_at_a_time(seed):
    """50,000 hands a seed: the shanten after each discard equal the hand kernels', and both counting
    kernels equal the one-at-a-time count and its choice (the later kind on a tie), for every joker
    kind, hand size and live count."""
    hands_, jokers, lives, wants = _random_cases(50_000, seed)
    bad = np.array([0, 0, -1, 0])
    _compare(hands_, jokers, lives, wants, hand_tables(), np.zeros(N_SCRATCH, np.int64), bad)
    assert bad[0] == 0 and bad[1] == 0 and bad[3] == 0, (
        f"{bad[0]} counts, {bad[1]} choices and {bad[3]} shanten rows differ; first: "
        f"{hands_[bad[2]].tolist()} joker {jokers[bad[2]]}")


#: one scratch for all the examples below: the kernels keep a memo in it from call to call
_SHARED = np.zeros(N_SCRATCH, np.int64)


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(hands(sizes=(2, 5, 8, 11, 14)), st.sampled_from([-1, CAISHEN]), st.integers(0, 2**32 - 1),
       st.booleans())
def test_every_discard_at_once_matches_the_python_reference(c, joker, seed, fours):
    """Against hand_reference's pure-Python shanten: the shanten (99: not held) and the live effective tiles
    of each ``h - k``."""
    rng = np.random.default_rng(seed)
    live = np.array([rng.integers(0, 5 - c[t]) for t in range(34)], np.int64)
    if fours:
        live[:] = 4 - c
    after = np.zeros(34, np.int64)
    w = _SHARED  # its memo of the suits' rows filled by the examples before, with and without a joker
    _shanten_each_discard(c, joker, hand_tables(), after, w)
    assert all(after[k] == 99 for k in range(34) if c[k] == 0)
    want = 0
    for k in np.flatnonzero(c):
        want |= 1 << int(k)
    got = np.zeros(34, np.int64)
    _effective_each(c, joker, hand_tables(), after, want, live, w, got)
    for k in np.flatnonzero(c):
        h = c.copy()
        h[k] -= 1
        base = ref.shanten(h, joker)
        assert base == after[k]
        expected = 0
        for t in range(34):
            if h[t] < 4:
                h[t] += 1
                if ref.shanten(h, joker) < base:
                    expected += int(live[t])
                h[t] -= 1
        assert got[k] == expected, (k, c.tolist(), joker)


def test_a_work_matrix_too_small_is_refused():
    """A bot given a work matrix not made by new_work() says so instead of writing past its end."""
    game = E.Game("kaihua").reset(seed=3)
    st_ = game.state
    assert new_work().shape == (N_WORK_ROWS, 34)
    game.legal_mask()
    with pytest.raises(ValueError, match="new_work"):  # the state's own mask: the kernel the other tests compile
        _choose_action(POLICY_GREEDY, 0, st_, game._ep, game._rp, game._tabs, st_["mask"], np.zeros((4, 34), np.int64))


@settings(max_examples=80, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.integers(0, 3), st.lists(st.integers(0, 4), min_size=9, max_size=9), st.booleans())
def test_the_draws_memo_matches_the_python_reference(suit, digits, strict):
    """The memo entry of a suit's code (the scratch shared with the examples before, so entries are
    found as often as filled): for each kind of the suit, the bit mask of the row entries (``2j + p``:
    ``j`` sets and ``p`` pairs in the suit) that one more tile of it lowers, from hand_reference's
    distances (copies capped at four without a joker); 0 for a kind held four times."""
    n = 9 if suit < 3 else 7
    digits = digits[:n]
    while sum(digits) > 8:  # small suits: the reference search stays fast
        digits[digits.index(max(digits))] -= 1
    tabs = hand_tables()
    code = sum(d * 5**i for i, d in enumerate(digits))
    e = _draws_entry(tabs, class_rows(tabs), _SHARED, suit, code, strict)
    cap = 4 if strict else None
    nat = [0] * 34
    for i, d in enumerate(digits):
        nat[9 * suit + i] = d
    for i in range(n):
        expected = 0
        if digits[i] < 4:
            more = list(nat)
            more[9 * suit + i] += 1
            for j in range(5):
                for p in range(2):
                    expected |= int(ref.distance(more, j, p, cap) < ref.distance(nat, j, p, cap)) << (2 * j + p)
        assert _SHARED[e + i] == expected, (suit, digits, strict, i)
