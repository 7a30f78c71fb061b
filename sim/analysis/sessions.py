"""Seats over whole sessions: placement by starting seat, session totals and their tails.

A *session* is one match of a ``caishen simulate`` run: ``match_len``
hands (16 by default) with the dealer rotating (K-3.3, J-2.3), the
unit a player sits down for.  A seat's *starting seat* is its place
counted from the session's first dealer (0: the first dealer, 东; 1: the
seat after it, 南; 2: 西; 3: 北), so the four starting seats are the
four positions at the table whatever the seat numbers.  Per session and
starting seat:

- the **total** (the seat's points over the session's hands);
- the **placement** 1..4 by total (1: the most points), **ties shared**:
  seats with equal totals share the places they span equally (two seats
  tied for first: each gets half a first and half a second place; their
  mean placement is 1.5).

:class:`Sessions` reads a run's records (a streaming table of
:func:`caishen.sim.analysis.balance_tally.feed_run`: batches of whole
matches) and keeps each session's four totals (``int64[4]``: 32 bytes a
session).  Sessions shorter than the run's ``match_len`` (a run's last
match cut by its size) are left out and counted.  Its tables, with 95%
intervals over **sessions** (independent units: one value per session and
starting seat; Student t):

- :meth:`Sessions.placement`: the rate of each place by starting seat and
  the mean placement (2.5 for every seat when the game is fair);
- :meth:`Sessions.totals`: per starting seat the mean total, its sd, the
  quantiles, the expected shortfall (the mean of the worst 5% of totals)
  and the probability of a total at most ``-L`` or at least ``+L`` for
  ``L`` = one and two overall sds.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from caishen.sim.analysis.balance_tally import N_SEATS, match_ids

#: the starting seats' names (东南西北: east is the first dealer)
STARTING_SEATS = ("east (first dealer)", "south", "west", "north")
#: the quantiles of :meth:`Sessions.totals`
QUANTILES = (0.01, 0.05, 0.25, 0.5, 0.75, 0.95, 0.99)


def placements(totals: np.ndarray) -> np.ndarray:
    """``float64[g, 4, 4]``: each session's place credit, ``[session, seat, place]`` (places 0..3 = 1st..4th;
    ties shared: a seat tied with ``e`` others spreads 1 equally over the ``e + 1`` places they span).

    ``totals: int[g, 4]``."""
    t = np.asarray(totals)
    g = len(t)
    above = (t[:, None, :] > t[:, :, None]).sum(axis=2)  # [g, seat]: seats with more points
    ties = (t[:, None, :] == t[:, :, None]).sum(axis=2)  # [g, seat]: itself included
    place = np.arange(N_SEATS)[None, None, :]
    span = (place >= above[:, :, None]) & (place < (above + ties)[:, :, None])
    return np.where(span, 1.0 / ties[:, :, None], 0.0).reshape(g, N_SEATS, N_SEATS)


class Sessions:
    """The sessions of a run (module docstring): a streaming table (``columns()``, ``add(df)``) that keeps each
    whole session's totals by starting seat.  ``available``: the record columns there are (None: all of
    :meth:`columns`); ``match_len``: the run's hands per session (None: the longest match seen)."""

    def __init__(self, available=None, match_len: int | None = None):
        self.available = None if available is None else set(available)
        self.match_len = match_len
        self._totals: list[np.ndarray] = []
        self._lengths: list[np.ndarray] = []

    def columns(self) -> list[str]:
        """The record columns :meth:`add` reads (those available)."""
        want = ["hand_id", "hand", "chunk", "match_hand", "dealer", *(f"score_{s}" for s in range(N_SEATS))]
        return [c for c in want if self.available is None or c in self.available]

    def add(self, df) -> "Sessions":
        """Add a batch of whole matches (records with :meth:`columns`, ``hand_id`` or ``hand``)."""
        if not len(df):
            return self
        ids = match_ids(df)
        _, start, inv = np.unique(ids, return_index=True, return_inverse=True)
        inv = inv.ravel()
        g = len(start)
        sc = np.stack([np.asarray(df[f"score_{s}"]).astype(np.int64) for s in range(N_SEATS)], axis=1)
        tot = np.zeros((g, N_SEATS), np.int64)
        np.add.at(tot, inv, sc)
        mh = np.asarray(df["match_hand"]).astype(np.int64) if "match_hand" in df else np.zeros(len(df), np.int64)
        first = np.full(g, -1, np.int64)
        zero = mh == 0
        first[inv[zero]] = np.asarray(df["dealer"]).astype(np.int64)[zero]
        if (first < 0).any():
            raise ValueError("a session without its first hand (match_hand 0): not a batch of whole matches")
        # by starting seat: column k is the seat k places after the first dealer
        seat = (first[:, None] + np.arange(N_SEATS)[None, :]) % N_SEATS
        self._totals.append(np.take_along_axis(tot, seat, axis=1))
        self._lengths.append(np.bincount(inv, minlength=g))
        return self

    @property
    def lengths(self) -> np.ndarray:
        return np.concatenate(self._lengths) if self._lengths else np.zeros(0, np.int64)

    def totals_by_start(self) -> np.ndarray:
        """``int64[g, 4]``: the whole sessions' totals, column ``k`` the starting seat ``k``."""
        if not self._totals:
            return np.zeros((0, N_SEATS), np.int64)
        t = np.concatenate(self._totals)
        lens = self.lengths
        want = self.match_len or (int(lens.max()) if len(lens) else 0)
        return t[lens == want]

    def dropped(self) -> int:
        """Sessions left out (shorter than ``match_len``)."""
        return int(len(self.lengths) - len(self.totals_by_start()))

    def placement(self, confidence: float = 0.95) -> pd.DataFrame:
        """``starting_seat, metric, sessions, value, ci_low, ci_high``: the rate of each place (``metric``
        ``"place 1"`` .. ``"place 4"``) and ``"mean placement"`` by starting seat (ties shared)."""
        from caishen.sim.analysis.intervals import cluster_mean_ci

        t = self.totals_by_start()
        if not len(t):
            raise ValueError("no whole session in the records")
        cred = placements(t)
        rows = []
        for k in range(N_SEATS):
            for j in range(N_SEATS):
                rows.append((STARTING_SEATS[k], f"place {j + 1}", len(t), *cluster_mean_ci(cred[:, k, j], None,
                                                                                           confidence)))
            mean_place = cred[:, k, :] @ np.arange(1, N_SEATS + 1)
            rows.append((STARTING_SEATS[k], "mean placement", len(t), *cluster_mean_ci(mean_place, None, confidence)))
        return pd.DataFrame(rows, columns=["starting_seat", "metric", "sessions", "value", "ci_low", "ci_high"])

    def totals(self, confidence: float = 0.95) -> pd.DataFrame:
        """Per starting seat (and ``"every seat"``): ``sessions, mean, ci_low, ci_high, sd, q01 .. q99,
        shortfall_5`` (the mean of the worst 5% of totals), ``p_below_1sd``, ``p_below_2sd``, ``p_above_1sd``,
        ``p_above_2sd`` (a total at most minus / at least plus one and two overall sds)."""
        from caishen.sim.analysis.intervals import cluster_mean_ci

        t = self.totals_by_start().astype(np.float64)
        if not len(t):
            raise ValueError("no whole session in the records")
        sd_all = float(t.std(ddof=1)) if t.size > 1 else float("nan")
        rows = []
        for k, x in [*enumerate(t.T), (None, t.ravel())]:
            name = "every seat" if k is None else STARTING_SEATS[k]
            clusters = None if k is not None else np.repeat(np.arange(len(t)), N_SEATS)
            m, lo, hi = cluster_mean_ci(x, clusters, confidence)
            q = np.quantile(x, QUANTILES)
            worst = np.sort(x)[: max(1, int(np.ceil(0.05 * len(x))))]
            rows.append((name, len(t), m, lo, hi, float(x.std(ddof=1)) if len(x) > 1 else float("nan"), *q,
                         float(worst.mean()), float((x <= -sd_all).mean()), float((x <= -2 * sd_all).mean()),
                         float((x >= sd_all).mean()), float((x >= 2 * sd_all).mean())))
        qn = [f"q{int(round(100 * v)):02d}" for v in QUANTILES]
        return pd.DataFrame(rows, columns=["starting_seat", "sessions", "mean", "ci_low", "ci_high", "sd", *qn,
                                           "shortfall_5", "p_below_1sd", "p_below_2sd", "p_above_1sd",
                                           "p_above_2sd"])
