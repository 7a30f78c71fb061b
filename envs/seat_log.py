"""The action log that ``exec:`` seats hear their events from: entry tags and the one kernel that writes them.

Games with an ``exec:`` seat log every deal, action and hand's end inside numba
(``log: int64[m, LOG_CAP, 3]``, ``log_n: int64[m]``, one ``(tag, a, b)`` per
entry); the Python side turns them into each program's events between its
decisions.  The arena host's table (:mod:`caishen.envs.arena_host`) and the
batched env's open opponents (:mod:`caishen.envs.batched_kernels`,
:mod:`caishen.envs.open_opponents`) share these tags and :func:`_log`.
"""

from __future__ import annotations

from numba import njit

__all__ = ["LOG_ACT", "LOG_CAP", "LOG_DEAL", "LOG_END", "LOG_POINTS"]

#: log entries per game between two drains (a game stops to be drained when its log is full)
LOG_CAP = 256
LOG_DEAL = 0  #: hand a dealt, dealer b (the batched env: dealer a, learning seat b)
LOG_ACT = 1  #: seat a played action b
LOG_END = 2  #: hand a ended (its record row is written); the batched env: a hand with winners mask a ended, its
#: LOG_POINTS follow
LOG_POINTS = 3  #: the batched env: seat a scored b points in the hand that ended


@njit(cache=True)
def _log(i, tag, a, b, log, log_n):
    """Append ``(tag, a, b)`` to game ``i``'s log (the caller keeps room: ``log_n[i] < LOG_CAP``)."""
    n = log_n[i]
    log[i, n, 0] = tag
    log[i, n, 1] = a
    log[i, n, 2] = b
    log_n[i] = n + 1
