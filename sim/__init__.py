"""``caishen.sim``: the engine and everything around it (folder ``sim/``).

Layers (arrows point one way): ``caishen.sim.tiles`` -> ``caishen.sim.tables``
-> ``caishen.sim.hand`` -> ``caishen.sim.rules`` -> ``caishen.sim.engine`` ->
``caishen.sim.bots.policies`` / ``caishen.sim.selfplay.batch`` -> ``caishen.sim.selfplay.runner``;
``caishen.envs``, ``caishen.agents`` and the CLI import ``caishen.sim``.  The package
map and the numba cache directory (a digest of the kernel sources) are set up
by :mod:`caishen`, which every ``import caishen.sim...`` imports first.
"""

from caishen import __version__  # noqa: F401  (the package version, e.g. for run.json)
