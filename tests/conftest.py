"""Shared pytest fixtures: session-scoped numba warm-ups.

Compiling (or loading from numba's cache) the engine kernels costs seconds
once per session; these fixtures pay it once so that test timings show the
tests, not the compiler.  Other helpers append their own warm-ups here.
"""

from __future__ import annotations

import pytest


@pytest.fixture(scope="session")
def engine_warm():
    """The engine compiled: one checked batch hand and one Game hand played."""
    from caishen.sim import engine
    from caishen.sim.selfplay.batch import play_batch

    play_batch(2, 0, policies="random", check=True)
    g = engine.Game().reset(seed=0)
    while not g.done:
        g.step(g.legal_actions()[0])
    g.check()
    return engine


# --------------------------------------------------------------- the slow marker
def pytest_addoption(parser):
    parser.addoption("--runslow", action="store_true", default=False,
                     help="also run the tests marked slow (long batch runs, e.g. 100,000 checked hands)")


def pytest_configure(config):
    config.addinivalue_line("markers", "slow: a long run (> ~1 min); skipped unless --runslow or -m slow")


def pytest_collection_modifyitems(config, items):
    if config.getoption("--runslow") or "slow" in (config.getoption("-m") or ""):
        return
    skip = pytest.mark.skip(reason="slow: run with --runslow (or -m slow)")
    for item in items:
        if "slow" in item.keywords:
            item.add_marker(skip)


@pytest.fixture(scope="session")
def batched_warm(engine_warm):
    """The batched env's kernels compiled (caishen.envs.batched): one reset and step of each mode."""
    import numpy as np

    from caishen.envs.batched import BatchedGames, sample_legal
    from caishen.sim.rng import _rng_seed

    rng = np.zeros(4, np.uint64)
    _rng_seed(rng, 0)
    for kw in ({}, {"mode": "versus"}, {"rules": "jiating", "observation": "flat"}):
        g = BatchedGames(2, **kw).reset(0)
        a = np.zeros(2, np.int64)
        sample_legal(g.masks, rng, a)
        g.step(a)
        g.observe()
        g.bot_actions("greedy")
    return engine_warm


@pytest.fixture
def alarm():
    """Fail a test that blocks (a FIFO opened, a read that never ends) after 120 s instead of hanging (a
    rebuild of the hand tables takes 20 s and more on a loaded machine)."""
    import signal

    def boom(*_):
        raise TimeoutError("blocked for 120 s")

    old = signal.signal(signal.SIGALRM, boom)
    signal.alarm(120)
    yield
    signal.alarm(0)
    signal.signal(signal.SIGALRM, old)
