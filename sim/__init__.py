"""``caishen.sim``: the game, the rule sets, the engine, the bots, play and analysis (folder ``sim/``).

Folders are layers; imports go down this table, never up (``tests/test_layers.py``):

=====================  ================================================================
layer                  what it is
=====================  ================================================================
the game (top level)   ``tiles`` (34-kind encoding), ``tables`` (shanten tables),
                       ``hand`` (shanten, win test, waits), ``readings``, ``rng``,
                       ``validate``, ``safeio``, ``ruledocs``, ``warmup`` (marks)
``rules/``             the rule sets as peers, their shared codes, records contract
                       and kernel dispatch; the scoring vectors
``engine/``            the game engine, one module per concern
``bots/``              every kernel bot and bot with data, and their one registry
``selfplay/``          play: whole hands in one numba call, runs, chunks, resume
``analysis/``          summaries, balance, intervals, arena, studies, report
=====================  ================================================================

Above ``sim/``: :mod:`caishen.envs` (the environments, a peer of the
analysis), :mod:`caishen.agents` (the step-API face of the bots and the
trainers) and :mod:`caishen.cli` (the ``caishen`` command).  The package
map and the numba cache directory (a digest of the kernel sources) are set up
by :mod:`caishen`, which every ``import caishen.sim...`` imports first; importing
``caishen.sim`` installs :mod:`caishen.numba_inline` (numba's inliner without its
quadratic IR copy) before any kernel compiles.
"""

from caishen import __version__  # noqa: F401  (the package version, e.g. for run.json)
from caishen.numba_inline import install as _install_inline

_install_inline()
