"""Scoring balance of a rule set: what each hand type, pattern and seat earns, with intervals.

Every function takes per-hand records (``caishen.sim.selfplay.records`` columns: a run read
with ``caishen.sim.selfplay.stream.read_run``, or the columns of
``caishen.sim.selfplay.batch.play_batch``) and returns a tidy ``pandas.DataFrame``.

Each table is a streaming reduction (a ``_Table`` of
:mod:`caishen.sim.analysis.balance_tally`):
``add`` a batch of whole matches, ``merge`` the tally of other matches,
``frame`` the table.  A batch is reduced to per-match totals, and those to
the cluster sums of every row's interval (exact integer
:class:`~caishen.sim.analysis.intervals.ClusterMoments` and
:class:`~caishen.sim.analysis.intervals.ClusterCross` for rates, means and the dealer's
edge; :class:`~caishen.sim.analysis.intervals.ClusterRatioSums` for shares of points),
whose size does not depend on the number of matches.  There is one
implementation and two entry points giving the same numbers: a table's
function applies the reduction to a DataFrame as one batch, and
:func:`run_tables` streams a run directory's verified chunks one batch of
whole matches at a time (:func:`match_batches`: ``pyarrow`` record batches
of the columns the tables read, a match cut by a batch carried on), so that
``caishen report`` covers every hand of a run in bounded memory
(``tests/test_balance.py`` checks the streamed tables against these
functions on the concatenated rows).
Intervals are 95% and over **independent units**: the *match* (hands
``match_hand = 0, 1, ...`` of one dealer rotation; one hand when matches
are one hand long), the cluster of :mod:`caishen.sim.analysis.intervals`.  A "won hand" is a
hand with a winner; "points" are what the winners received (the sum of the
positive score changes of the hand, which is also what the losers paid).

Which tables a rule set has is its own business: its
:class:`~caishen.sim.rules.base.Analysis` (``sim/rules/<name>/analysis.py``,
the ``analysis`` hook of its :class:`~caishen.sim.rules.base.RuleSet`) gives
them (``balance_tables``: the streaming tables, ``table_functions``: the
in-memory ones) from the generic pieces here (:func:`_dealer_rows`,
:func:`_add_dealer`, :func:`_points`).  How each rule option moves them:
:func:`compare_options` runs the same walls under each option setting
(``caishen.sim.selfplay.batch.play_batch`` with one seed) and stacks the tables
with an ``option`` column.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from caishen.sim.analysis.balance_tally import (  # noqa: F401  (match_ids, match_batches, feed_run: public here too)
    BALANCE_COLUMNS,
    N_SEATS,
    _Batch,
    _Rows,
    _Sums,
    feed_run,
    match_batches,
    match_ids,
)
from caishen.sim.rules import DEFAULT
from caishen.sim.rules import base as rulesets


def _seat_hands(dealer: np.ndarray, sc: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """``(is_dealer: bool[4n], score: int64[4n])`` of the seat-hands, seat by seat (the order of ``_Batch.inv4``)."""
    return np.concatenate([dealer == s for s in range(N_SEATS)]), sc.T.ravel()


def _dealer_rows(r: _Rows, s: _Sums) -> None:
    from caishen.sim.analysis.intervals import ClusterCross, ClusterMoments

    a, b = s.get("dealer", ClusterMoments), s.get("non-dealer", ClusterMoments)
    r.mean("dealer", "score per seat-hand", "dealer", a)
    r.mean("dealer", "score per seat-hand", "non-dealer", b)
    r.add("dealer", "dealer edge (dealer minus non-dealer)", "all", s.hands, *s.get("edge", ClusterCross).ci(a, b))


def _add_dealer(s: _Sums, b: _Batch, dealer, sc) -> None:
    is_dealer, seat_score = _seat_hands(dealer, sc)
    s.mean("dealer", b, seat_score, is_dealer, b.inv4)
    s.mean("non-dealer", b, seat_score, ~is_dealer, b.inv4)
    s.diff("edge", b, seat_score, is_dealer, ~is_dealer, b.inv4)


def _points(sc: np.ndarray) -> np.ndarray:
    """``int64[n]``: what the winners received in each hand (the sum of the positive score changes)."""
    return np.where(sc > 0, sc, 0).sum(axis=1)


def compare_options(settings: dict, hands: int, seed: int = 0, rules: str = DEFAULT, policies="greedy",
                    tables=None) -> pd.DataFrame:
    """The balance tables under each option setting, on the same walls, stacked with an ``option`` column.

    ``settings``: label -> option dict (``{"default": {}, "factor 1":
    {"failed_piao_factor": 1}}``); every setting plays ``hands`` hands from
    the same ``seed`` (the same walls: the deterministic bots draw nothing
    from the stream the walls come from).  ``tables``: the functions to
    apply (default: the rule set's two tables).
    """
    from caishen.sim.selfplay.batch import play_batch

    if not settings:
        raise ValueError("no option settings to compare")
    if tables is None:
        tables = rulesets.get(rules).analysis_hooks().table_functions()
    out = []
    for label, opts in settings.items():
        df = pd.DataFrame(play_batch(hands, seed, rules=rules, options=opts, policies=policies))
        for f in tables:
            t = f(df)
            t.insert(0, "option", label)
            out.append(t)
    return pd.concat(out, ignore_index=True)


# ---------------------------------------------------------------------------
# a run's tables, streamed
# ---------------------------------------------------------------------------
def run_tables(run_dir, files=None, options=None, batch_size: int | None = None,
               extra=()) -> dict[str, pd.DataFrame]:
    """The balance tables of a run directory over all its verified hands, streamed (memory independent of the
    number of hands).

    ``files``: the run's verified chunk files (default
    :func:`caishen.sim.selfplay.stream.verified_chunk_files`); ``options``: the run's
    rule options (default its ``run.json``'s); ``extra``: more streaming
    tables fed the same batches (``columns()``, ``add(df)``: the report's
    histogram).  Returns the rule set's tables by name (its
    ``Analysis.balance_tables``; ``{}`` for a rule set without any): the same numbers as the in-memory functions on
    the concatenated rows (up to float rounding).  Raises ``ValueError`` for
    no verified chunk, or as those functions do.
    """
    from caishen.sim.selfplay import rundir, stream

    meta = rundir.read_run_json(run_dir)
    if files is None:
        files, _ = stream.verified_chunk_files(run_dir, meta)
    cols = stream.column_names(files)
    rules = meta.get("rules")
    if options is None:
        options = meta.get("options")
    tables = rulesets.get(rules).analysis_hooks().balance_tables(cols, options) if rules in rulesets.names() else {}
    feed_run(files, [*tables.values(), *extra], batch_size)
    return {k: t.frame() for k, t in tables.items()}


#: a row measured on fewer units (hands, wins) than this prints no interval: the normal interval of 2 hands'
#: points can reach below 0 and means nothing (issue 45)
MIN_CI_N = 30


def few_marked(table: pd.DataFrame, min_n: int = MIN_CI_N) -> pd.DataFrame:
    """A copy of a balance table (``section, metric, group, n, value, ci_low, ci_high``) for printing: the
    interval of a row with ``n < min_n`` blanked (NaN) and a ``note`` column saying ``too few hands (n < 30)``
    there, empty elsewhere."""
    out = table.copy()
    few = out["n"] < min_n
    out.loc[few, ["ci_low", "ci_high"]] = np.nan
    out["note"] = np.where(few, f"too few hands (n < {min_n})", "")
    return out
