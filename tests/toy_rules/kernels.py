"""The toy's own numba kernel: its record finisher adds ``hand_kinds`` to the engine's columns."""

from __future__ import annotations

import numpy as np
from numba import njit

from caishen.sim.rules import records as R
from caishen.sim.rules.kaihua.records import FIELD_COLUMNS

#: the toy's records contract: the engine's columns (the generic joker / chain fields under Kaihua's
#: names, as the toy's options and payments are Kaihua's: its field_columns) and its own
COLUMNS = (*R.engine_columns(FIELD_COLUMNS), ("hand_kinds", np.int8))


@njit(cache=True)
def _hand_kinds(rec, out):
    """``out[h]``: distinct kinds in hand ``h``'s first winner's concealed tiles before the win, -1 without one."""
    for h in range(rec.shape[0]):
        if rec[h].n_winners <= 0:
            out[h] = -1
            continue
        hand = rec[h].wins[0].hand
        k = 0
        for t in range(34):
            if hand[t] > 0:
                k += 1
        out[h] = k


def finish(rules, rec: np.ndarray) -> dict[str, np.ndarray]:
    """The toy's record columns of the engine's records ``rec: RECORD_DTYPE[n]`` (:mod:`caishen.sim.rules.records`)."""
    cols = R.engine_record_columns(rec, FIELD_COLUMNS)
    kinds = np.zeros(len(rec), np.int64)
    _hand_kinds(np.ascontiguousarray(rec), kinds)
    cols["hand_kinds"] = kinds.astype(np.int8)
    return cols
