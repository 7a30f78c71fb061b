"""Issue 11 item 2 (self-play per-step cost): greedy's all-at-once tie-break.

:func:`caishen.sim.hand._live_after_discards` equals the slow reference:
  for each candidate discard, the live tiles whose draw lowers the shanten,
  computed with :func:`hand_reference.shanten` on every changed hand.
"""

from __future__ import annotations

import numpy as np
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import hand_reference as ref
from caishen.sim import tables
from caishen.sim.hand import _live_after_discards
from caishen.sim.tiles import CAISHEN

from test_hand import hands


def _reference_live_after_discards(c, joker, cand, best, live):
    out = [0] * 34
    for k in range(34):
        if not cand[k]:
            continue
        d = c.astype(int)
        d[k] -= 1
        total = 0
        for t in range(34):
            if d[t] >= 4 or live[t] <= 0:
                continue
            d[t] += 1
            if ref.shanten(d, joker) < best:
                total += int(live[t])
            d[t] -= 1
        out[k] = total
    return out


@settings(max_examples=150, deadline=None,
          suppress_health_check=[HealthCheck.too_slow, HealthCheck.large_base_example, HealthCheck.data_too_large])
@given(hands(sizes=(2, 5, 8, 11, 14), fours=True), st.sampled_from([-1, CAISHEN]), st.data())
def test_K_2_1_J_1_1_live_after_discards_matches_reference(c, joker, data):
    """Greedy's tie-break kernel equals the reference on random hands (fourth and fifth copies, jokers)."""
    held = [k for k in range(34) if c[k] > 0]
    chosen = data.draw(st.lists(st.sampled_from(held), min_size=1, max_size=len(held), unique=True))
    cand = np.zeros(145, np.uint8)
    cand[chosen] = 1
    live = np.array([data.draw(st.integers(-1, 4 - int(c[t]))) for t in range(34)], np.int64)
    best = data.draw(st.integers(-1, 4))
    want = _reference_live_after_discards(c, joker, cand, best, live)
    out = np.full(34, -7, np.int64)
    _live_after_discards(c, joker, tables.hand_tables(), cand, best, live, out, np.zeros(34, np.int64))
    assert list(out) == want
    inplace = cand[:34].astype(np.int64)  # candidates and results in one array (as greedy calls it)
    _live_after_discards(c, joker, tables.hand_tables(), inplace, best, live, inplace, np.zeros(34, np.int64))
    assert list(inplace) == want
