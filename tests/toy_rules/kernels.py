"""The toy's own numba kernel: its record finisher adds ``hand_kinds`` to the engine's columns."""

from __future__ import annotations

import numpy as np
from numba import njit

from caishen.sim.rules import records as R

#: the toy's records contract: the engine's columns and its own
COLUMNS = (*R.RECORD_COLUMNS, ("hand_kinds", np.int8))
_N_WINNERS = R.EXTRA_INDEX["n_winners"]
_HAND = R.WINS_OFFSET + R.WX_HAND


@njit(cache=True)
def _hand_kinds(rec, out):
    """``out[h]``: distinct kinds in hand ``h``'s first winner's concealed tiles before the win, -1 without one."""
    for h in range(rec.shape[0]):
        if rec[h, _N_WINNERS] <= 0:
            out[h] = -1
            continue
        k = 0
        for t in range(34):
            if rec[h, _HAND + t] > 0:
                k += 1
        out[h] = k


def finish(rules, rec: np.ndarray) -> dict[str, np.ndarray]:
    """The toy's record columns of the engine's batch matrix ``rec: int64[n, N_RECORD]``."""
    cols = {c: rec[:, i].astype(dt) for i, (c, dt) in enumerate(R.RECORD_COLUMNS)}
    kinds = np.zeros(len(rec), np.int64)
    _hand_kinds(np.ascontiguousarray(rec, np.int64), kinds)
    cols["hand_kinds"] = kinds.astype(np.int8)
    return cols
