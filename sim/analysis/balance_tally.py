"""The streaming reduction behind :mod:`caishen.sim.analysis.balance`: batches of whole matches -> cluster sums -> rows.

Every balance table is a :class:`_Table`: it :meth:`~_Table.add` s
DataFrames of whole matches (a match never spans two batches: each hand's
match is :func:`match_ids`), keeps per-key cluster sums (:class:`_Sums`:
exact integer moments, paired cross sums and ratio sums of
:mod:`caishen.sim.analysis.intervals`) and :meth:`~_Table.merge` s with the tally of
other matches, so the same code gives the in-memory tables (one batch) and
a run's tables streamed chunk by chunk (:func:`match_batches`,
:func:`feed_run`: memory of one batch, whatever the number of hands).  Read
side only: nothing here shapes a run's rows (``caishen.sim.selfplay.runner.READ_SIDE``).
"""

from __future__ import annotations

import copy

import numpy as np
import pandas as pd

N_SEATS = 4
BALANCE_COLUMNS = ["section", "metric", "group", "n", "value", "ci_low", "ci_high"]


def match_ids(df: pd.DataFrame) -> np.ndarray:
    """``int64[n]``: the match of each hand (the independent unit), from ``hand_id`` (or ``hand``) and
    ``match_hand``: a match's hands share ``index - match_hand``."""
    idx = df["hand_id" if "hand_id" in df else "hand"].to_numpy(np.int64)
    if "chunk" in df and "hand_id" not in df:
        idx = idx + df["chunk"].to_numpy(np.int64) * (int(idx.max()) + 1 if len(idx) else 0)
    mh = df["match_hand"].to_numpy(np.int64) if "match_hand" in df else np.zeros(len(df), np.int64)
    return idx - mh


def _scores(df) -> np.ndarray:
    return np.stack([np.asarray(df[f"score_{s}"]).astype(np.int64) for s in range(N_SEATS)], axis=1)


def _col(df, name, dtype=np.int64) -> np.ndarray:
    return np.asarray(df[name]).astype(dtype)


# ---------------------------------------------------------------------------
# the reduction: batches of whole matches -> cluster sums -> rows
# ---------------------------------------------------------------------------
class _Batch:
    """One batch of whole matches: ``inv: int64[n]`` the cluster (0..g-1) of each hand, and per-cluster totals.

    Totals over the hands (``inv``) or the seat-hands (``inv4``) of a batch whose matches are consecutive rows
    (a run's chunks) are segment sums (``numpy.add.reduceat``, exact for integers); other row sets use
    ``numpy.bincount``.
    """

    def __init__(self, df):
        self.n = len(df)
        _, inv = np.unique(match_ids(df), return_inverse=True)
        self.inv = inv.ravel().astype(np.int64)
        self.g = int(self.inv.max()) + 1 if self.n else 0
        self.inv4 = np.tile(self.inv, N_SEATS)  # the seat-hands, seat by seat (seat 0's hands, seat 1's, ...)
        step = np.diff(self.inv)
        #: the first row of each cluster when the clusters are consecutive runs of rows 0, 1, ..., g-1, else None
        self.starts = (np.concatenate([[0], np.flatnonzero(step) + 1]) if self.n and np.all((step == 0) | (step == 1))
                       else None)
        self._counts: dict = {}  # (id of rows, id of inv) -> (rows, inv, counts): many numbers share their rows

    def count(self, rows=None, inv=None) -> np.ndarray:
        """``int64[g]``: rows per cluster (``rows``: a mask over ``inv``, default every row)."""
        inv = self.inv if inv is None else inv
        key = (id(rows), id(inv))
        got = self._counts.get(key)
        if got is None:
            ones = np.ones(len(inv), np.int64) if rows is None else np.asarray(rows, np.int64)
            got = self._counts[key] = (rows, inv, self.total(ones, None, inv))
        return got[2]

    def total(self, x, rows=None, inv=None) -> np.ndarray:
        """``[g]``: the sum of ``x`` over each cluster's rows (int64 for integer ``x``, else float64)."""
        inv = self.inv if inv is None else inv
        x = np.asarray(x)
        if x.dtype == bool or x.dtype.kind in "iu":  # int64 sums: reduceat adds in the input's dtype
            x = x.astype(np.int64, copy=False)
        if rows is not None:
            x = np.where(rows, x, 0)
        if self.starts is not None and inv is self.inv:
            return np.add.reduceat(x, self.starts)
        if self.starts is not None and inv is self.inv4:
            return np.add.reduceat(x.reshape(N_SEATS, self.n).sum(0), self.starts)
        t = np.bincount(inv, weights=x.astype(np.float64), minlength=self.g)
        return np.rint(t).astype(np.int64) if x.dtype.kind in "iu" else t


class _Sums:
    """The cluster sums of one table's rows by row key, added batch by batch (whole matches), mergeable.

    Each key holds a :class:`~caishen.sim.analysis.intervals.ClusterMoments` (a mean or rate
    of integer rows, exact), a :class:`~caishen.sim.analysis.intervals.ClusterCross` (a paired
    difference) or a :class:`~caishen.sim.analysis.intervals.ClusterRatioSums` (a ratio of
    totals).  A key that first appears in a later batch (an exponent never
    seen before) starts from its ``base``: the sums of the same rows with
    all-zero values, kept for every batch.  ``hands`` counts the hands,
    ``top`` keeps maxima (the largest exponent, streak), ``seen`` flags.
    """

    def __init__(self):
        self.acc: dict = {}
        self.base: dict = {}
        self._pending: list = []  # (ClusterMoments, y, n) of the batch being added, reduced at once by flush()
        self.hands = 0
        self.top: dict = {}
        self.seen: set = set()

    def _get(self, key, cls, base=None):
        a = self.acc.get(key)
        if a is None:
            if base is not None:
                self.base[key] = base
            a = self.acc[key] = copy.deepcopy(self.acc[base]) if base in self.acc else cls()
        return a

    def get(self, key, cls):
        """The sums of ``key`` (those of its base, or empty ones, if it never had a row)."""
        a = self.acc.get(key)
        return a if a is not None else cls()

    def moments(self, key, y: np.ndarray, n: np.ndarray, base=None) -> None:
        """Add per-cluster totals (``int64[g]`` each) of a mean over integer rows."""
        from caishen.sim.analysis.intervals import ClusterMoments

        self._pending.append((self._get(key, ClusterMoments, base), y, n))

    def flush(self) -> None:
        """Add the batch's pending cluster totals to their sums, a block of columns at a time (exact integers)."""
        from caishen.sim.analysis.intervals import exact_col_dots

        pending, self._pending = self._pending, []
        for i in range(0, len(pending), 64):
            block = pending[i:i + 64]
            ys = np.stack([p[1] for p in block], axis=1)
            ns = np.stack([p[2] for p in block], axis=1)
            gs, sy, sn = np.count_nonzero(ns, axis=0), ys.sum(0), ns.sum(0)
            syy, syn, snn = exact_col_dots(ys, ys), exact_col_dots(ys, ns), exact_col_dots(ns, ns)
            for j, (m, _, _) in enumerate(block):
                m.add_sums(int(gs[j]), int(sy[j]), int(sn[j]), syy[j], syn[j], snn[j])

    def mean(self, key, b: _Batch, values, rows=None, inv=None, base=None) -> None:
        """Add a mean (or rate: 0/1 values) of integer ``values`` over ``rows`` of the batch."""
        self.moments(key, b.total(values, rows, inv).astype(np.int64), b.count(rows, inv), base)

    def diff(self, key, b: _Batch, values, rows_a, rows_b, inv=None) -> None:
        """Add the cross sums of two means of ``values`` over the same clusters (``rows_a``, ``rows_b``)."""
        from caishen.sim.analysis.intervals import ClusterCross

        ya, yb = (b.total(values, r, inv).astype(np.int64) for r in (rows_a, rows_b))
        self._get(key, ClusterCross).add(ya, b.count(rows_a, inv), yb, b.count(rows_b, inv))

    def ratio(self, key, b: _Batch, num, den, rows=None, inv=None, base=None) -> None:
        """Add a ratio ``sum num / sum den`` over ``rows`` of the batch (float parts)."""
        from caishen.sim.analysis.intervals import ClusterRatioSums

        acc = self._get(key, ClusterRatioSums, base)
        has = b.count(rows, inv) > 0
        if not has.any():
            return
        num, den = np.asarray(num), np.asarray(den)
        rn, rd = (num, den) if rows is None else (num[rows], den[rows])
        acc.add(b.total(num, rows, inv)[has].astype(np.float64), b.total(den, rows, inv)[has].astype(np.float64),
                rn.min(), rd.min())

    def ratio_totals(self, key, num: np.ndarray, den: np.ndarray, min_num: float, min_den: float) -> None:
        """Add a ratio's per-cluster totals (``float64[g]``, clusters holding a row) and its rows' smallest parts."""
        from caishen.sim.analysis.intervals import ClusterRatioSums

        self._get(key, ClusterRatioSums).add(num, den, min_num, min_den)

    def merge(self, other: "_Sums") -> "_Sums":
        """Add the sums of ``other`` (other matches than these); a key missing on one side is its base there."""
        fresh = {}
        for key, a in other.acc.items():  # keys new here start from this side's base, as it was before the merge
            if key not in self.acc:
                base = other.base.get(key)
                fresh[key] = copy.deepcopy(self.acc[base]) if base in self.acc else type(a)()
                if base is not None:
                    self.base[key] = base
        missing = [key for key in self.acc if key not in other.acc and self.base.get(key) in other.acc]
        self.acc.update(fresh)
        for key, a in other.acc.items():
            self.acc[key].merge(a)
        for key in missing:
            self.acc[key].merge(other.acc[self.base[key]])
        self.hands += other.hands
        for k, v in other.top.items():
            self.top[k] = max(self.top.get(k, v), v)
        self.seen |= other.seen
        return self


class _Rows:
    def __init__(self):
        self.rows = []

    def add(self, section, metric, group, n, value, lo=float("nan"), hi=float("nan")):
        self.rows.append((section, metric, str(group), int(n), float(value), float(lo), float(hi)))

    def mean(self, section, metric, group, m):
        """A mean's row from its :class:`~caishen.sim.analysis.intervals.ClusterMoments` (``n``: its rows)."""
        self.add(section, metric, group, m.sn, *m.ci())

    def rate(self, section, metric, group, m):
        self.add(section, metric, group, m.sn, *m.rate_ci())

    def frame(self):
        return pd.DataFrame(self.rows, columns=BALANCE_COLUMNS)


_CLUSTER_COLUMNS = ("hand_id", "hand", "chunk", "match_hand")


class _Table:
    """A balance table as a streaming reduction: :meth:`add` batches of whole matches, :meth:`merge` the tallies
    of other matches, :meth:`frame` the table.  ``columns``: the record column names available."""

    #: the record columns the table reads (besides the cluster columns, and optional ones)
    NEEDS: tuple = ()
    #: columns read when present
    OPTIONAL: tuple = ()

    def __init__(self, columns):
        self.available = set(columns)
        missing = [c for c in self.NEEDS if c not in self.available]
        if missing:
            raise ValueError(f"records lack column(s) {', '.join(missing)}")
        self.sums = _Sums()

    def columns(self) -> list[str]:
        """The record columns :meth:`add` reads (cluster columns included, when present)."""
        want = [*_CLUSTER_COLUMNS, *self.NEEDS, *self.OPTIONAL]
        return [c for c in dict.fromkeys(want) if c in self.available]

    def add(self, df) -> "_Table":
        """Add one batch of whole matches (a DataFrame of the records, :meth:`columns` at least); returns self."""
        if len(df):
            self.sums.hands += len(df)
            self._add(df, _Batch(df))
            self.sums.flush()
        return self

    def merge(self, other: "_Table") -> "_Table":
        """Add the tally of other matches (the same table over disjoint records); returns self."""
        self.sums.merge(other.sums)
        return self

    def _add(self, df, b: _Batch) -> None:
        raise NotImplementedError

    def frame(self) -> pd.DataFrame:
        raise NotImplementedError


def match_batches(files, columns, batch_size: int | None = None):
    """DataFrames of whole matches from the Parquet chunk ``files`` (in order), of about ``batch_size`` rows.

    Reads one record batch of ``columns`` at a time (``pyarrow``) and
    carries a match cut by a batch boundary on to the next batch; a chunk
    file always ends a match (:mod:`caishen.sim.selfplay.runner`), so nothing is
    carried across files.  Without a ``match_hand`` column every hand is
    its own match.  Memory: about one batch, whatever the number of hands.
    """
    import pyarrow.parquet as pq

    from caishen.sim.selfplay import stream

    batch_size = int(batch_size or stream.BATCH_SIZE)
    for f in files:
        carry = None
        pf = pq.ParquetFile(f)
        left = pf.metadata.num_rows
        for rb in pf.iter_batches(batch_size=batch_size, columns=list(columns)):
            left -= rb.num_rows
            df = rb.to_pandas()
            if carry is not None:
                df = pd.concat([carry, df], ignore_index=True)
                carry = None
            if left <= 0 or "match_hand" not in df:  # the file's end ends a match
                if len(df):
                    yield df
                continue
            starts = np.flatnonzero(df["match_hand"].to_numpy() == 0)
            cut = int(starts[-1]) if len(starts) else 0
            if cut == 0:  # one match so far: wait for its end
                carry = df
                continue
            yield df.iloc[:cut].reset_index(drop=True)
            carry = df.iloc[cut:].reset_index(drop=True)
        if carry is not None and len(carry):
            yield carry
        del pf


def feed_run(files, tables, batch_size: int | None = None):
    """Feed the chunk ``files`` to the streaming ``tables`` (each with ``columns()`` and ``add(df)``), one batch of
    whole matches at a time, reading only the columns they need; returns ``tables``."""
    columns = list(dict.fromkeys(c for t in tables for c in t.columns()))
    for df in match_batches(files, columns, batch_size):
        for t in tables:
            t.add(df)
    return tables
