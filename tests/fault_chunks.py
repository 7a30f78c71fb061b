"""TEST DOUBLES of the runner's chunk function for ``tests/test_runner_faults.py``.

A separate, light module (numpy and ``caishen.sim.selfplay.records`` only) because the worker
processes of the fault tests import it by name, once per process: the pool
restarts there would otherwise pay for importing scipy and pytest each time.
None of these plays mahjong: :func:`plain_chunk` draws contract-shaped records.
"""

from __future__ import annotations

import os
import signal
import time
from pathlib import Path

import numpy as np


def plain_chunk(rules, options, policies, seed_entropy, n_hands):
    """TEST DOUBLE: records with every contract column of ``rules`` (its dtype), drawn from
    ``seed_entropy``: random outcomes and zero-sum scores (K-8.5), all else random small ints."""
    from caishen.sim.selfplay import records

    rng = np.random.default_rng(int(seed_entropy))
    n = int(n_hands)
    cols = {}
    for name, dtype in records.record_columns(rules):
        cols[name] = rng.integers(0, 3, n).astype(dtype)
    cols["hand"] = np.arange(n, dtype=np.int64)
    cols["winner"] = rng.integers(-1, 4, n).astype(np.int8)
    cols["win_type"] = np.where(cols["winner"] >= 0, rng.integers(0, 3, n), -1).astype(np.int8)
    cols["winners_mask"] = np.where(cols["winner"] >= 0, 1 << np.maximum(cols["winner"], 0), 0).astype(np.uint8)
    gain = rng.integers(0, 64, n)
    cols["score_0"] = gain.astype(np.int32)
    cols["score_1"] = (-gain).astype(np.int32)
    cols["score_2"] = np.zeros(n, np.int32)
    cols["score_3"] = np.zeros(n, np.int32)
    return cols


def dying_chunk(rules, options, policies, seed_entropy, n_hands):
    """:func:`plain_chunk`, except that the worker playing the chunk whose seed is
    ``$CAISHEN_TEST_KILL_SEED`` kills itself with SIGKILL mid-chunk -- once if
    ``$CAISHEN_TEST_MARK`` names a marker file (created on the first kill), else every time."""
    if str(seed_entropy) == os.environ.get("CAISHEN_TEST_KILL_SEED"):
        mark = os.environ.get("CAISHEN_TEST_MARK")
        if not mark or not os.path.exists(mark):
            if mark:
                Path(mark).write_text("killed once")
            time.sleep(0.05)
            os.kill(os.getpid(), signal.SIGKILL)
    return plain_chunk(rules, options, policies, seed_entropy, n_hands)


def slow_chunk(rules, options, policies, seed_entropy, n_hands):
    """:func:`plain_chunk` after 0.2 s (a run that is still going while the test acts)."""
    time.sleep(0.2)
    return plain_chunk(rules, options, policies, seed_entropy, n_hands)


def gil_holding_chunk(rules, options, policies, seed_entropy, n_hands):
    """Writes its pid into ``$CAISHEN_TEST_PIDS``, then blocks 120 s in C *holding the GIL*
    (``ctypes.PyDLL``: as a long numba kernel does), so that only the kernel can stop it."""
    import ctypes

    Path(os.environ["CAISHEN_TEST_PIDS"], f"{os.getpid()}.pid").write_text(str(os.getpid()))
    ctypes.PyDLL(None).sleep(120)
    return plain_chunk(rules, options, policies, seed_entropy, n_hands)
