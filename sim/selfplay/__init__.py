"""Play: whole hands in one numba call, and runs of millions of them (chunks, workers, Parquet, resume).

====================  ======================================================================
module                what it is
====================  ======================================================================
``batch``             :func:`play_batch`: whole hands in one numba call, bots choosing every
                      action, duplicate deals
``oracle``            the oracle of one state (deals in now, opponents ready): the hidden
                      state as training targets, never an input
``labels``            rollout labels of a learned bot's decisions (``caishen learn``), with
                      the oracle's targets
``records``           a run's Parquet chunks: the chunk table, atomic writes, reading a run
``manifest``          each finished chunk's row count and checksum, and their verification
``stream``            streaming reads of a run's chunks in bounded memory
``runner``            runs: seeding, chunks, executors (processes, Ray), progress, resume
====================  ======================================================================

Imports go down this list, never up, and only to the layers below (the bots
:mod:`caishen.sim.bots`, the engine, the rule sets, the game layer); the
analysis (:mod:`caishen.sim.analysis`), the environments and the agents sit
above.  ``from caishen.sim.selfplay import play_batch`` is
:func:`caishen.sim.selfplay.batch.play_batch` (imported on first use, so that
the run-reading modules stay cheap to import).
"""


def __getattr__(name):
    if name in ("play_batch", "duplicate_deal"):
        from caishen.sim.selfplay import batch

        return getattr(batch, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
