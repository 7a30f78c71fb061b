"""Issue 11 item 2 (self-play per-step cost): the two-level suit table and greedy's all-at-once tie-break.

- The two-level suit class ids (:func:`caishen.sim.tables.split_suit_classes`)
  equal the flat ones on every one of the 5**9 suit codes, and the packed
  table reads them back (:func:`caishen.sim.tables.suit_class_id`).
- :func:`caishen.sim.hand._live_after_discards` equals the slow reference:
  for each candidate discard, the live tiles whose draw lowers the shanten,
  computed with :func:`hand_reference.shanten` on every changed hand.
"""

from __future__ import annotations

import numpy as np
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from numba import njit

import hand_reference as ref
from caishen.sim import tables
from caishen.sim.hand import _live_after_discards
from caishen.sim.tiles import CAISHEN

from test_hand import hands


@njit(cache=True)
def _all_suit_classes(tabs, out):
    hi = tables.suit_high_offset(tabs)
    for code in range(out.shape[0]):
        out[code] = tables.suit_class_id(tabs, hi, code)


def test_two_level_suit_classes_equal_the_flat_ids_on_every_code():
    """K-2.1 / J-1.1 tables: the split and the packed table give the flat class id of all 5**9 codes."""
    suit_class = tables.build_tables()[0]
    low, high = tables.split_suit_classes(suit_class)
    codes = np.arange(tables.SUIT_ROWS)
    assert (high[low[codes % tables.SUIT_LOW_ROWS], codes // tables.SUIT_LOW_ROWS] == suit_class).all()
    got = np.empty(tables.SUIT_ROWS, np.int64)
    _all_suit_classes(tables.hand_tables(), got)
    assert (got == suit_class).all()
    assert len(high) < 2000  # the second level stays small (cache-resident): ~1,100 states


def test_table_cache_of_another_layout_is_rebuilt(tmp_path, monkeypatch):
    """A cache file of the same name but another layout (a wrong header) is not used."""
    monkeypatch.setenv("CAISHEN_CACHE", str(tmp_path))
    monkeypatch.setattr(tables, "_cache", None)
    good = tables.hand_tables()
    bad = good.copy()
    bad[tables.H_VERSION] = 5
    np.save(tmp_path / tables.TABLE_FILE, bad)
    monkeypatch.setattr(tables, "_cache", None)
    again = tables.hand_tables()
    assert again[tables.H_VERSION] == tables.TABLE_VERSION
    assert np.array_equal(again, good)
    assert tables._tables_ok(np.load(tmp_path / tables.TABLE_FILE))


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
    out = np.full(34, -7, np.int64)
    _live_after_discards(c, joker, tables.hand_tables(), cand, best, live, out)
    assert list(out) == _reference_live_after_discards(c, joker, cand, best, live)
