"""caishen: self-play simulation and research toolkit for Chinese regional mahjong.

One import namespace over the repository's three top-level folders (mapped by
setuptools' ``package-dir`` in ``pyproject.toml``; nothing is installed under
the bare names ``sim``, ``envs``, ``agents``):

========================  ================  =============================================
import name               folder            what
========================  ================  =============================================
``caishen.sim``           ``sim/``          the engine and everything around it: tiles,
                                            hand kernels, self-play, runner, records, CLI
                                            (``caishen.cli``)
``caishen.sim.engine``    ``sim/engine/``   one hand as numba arrays, a module per concern
                                            (state and actions, deal and draws, claims,
                                            own turn, legal mask, checker, record, ``Game``)
``caishen.sim.rules``     ``sim/rules/``    the rule sets as peers (one package
                                            each), their interface and registry,
                                            the one kernel dispatch; how to add a rule
                                            set is its docstring
``caishen.envs``          ``envs/``         Gymnasium / PettingZoo faces, batched env
``caishen.agents``        ``agents/``       bots for the step API and the envs
``caishen.rules_docs``    ``docs/rules/``   the rule reference, package data
                                            (``caishen rules K-2.5``)
========================  ================  =============================================

Layers (arrows point one way): ``caishen.sim.tiles`` -> ``caishen.sim.tables``
-> ``caishen.sim.hand`` -> ``caishen.sim.rules`` -> ``caishen.sim.engine`` ->
``caishen.sim.bots.policies`` / ``caishen.sim.selfplay.batch`` -> ``caishen.sim.selfplay.runner``;
``caishen.envs``, ``caishen.agents`` and the CLI import ``caishen.sim``.  Importing
``caishen`` is cheap: tables are built (or read from the disk cache) on first
use, kernels compiled (or loaded) on first call.  ``python -m caishen`` is the
``caishen`` command; ``caishen.read_run(RUN)`` reads a run's table as words
(:func:`caishen.sim.analysis.run_table.read_run`, imported on first use;
the columns: ``docs/schema.md``).

numba's on-disk cache (``cache=True``) does not notice when a kernel that a
cached kernel calls changes in *another* module, and would keep running the
old code.  So unless ``NUMBA_CACHE_DIR`` is set by the user, the compiled
kernels are cached in a directory named after a digest of every source file
under ``sim/``, ``envs/`` and ``agents/`` that defines numba kernels (set here,
before any of them imports numba): any change there starts a fresh cache.
Inside it the kernels are filed by module name (:mod:`caishen.numba_cache`), so the
same sources in another folder (a second clone, a CI workspace) load the same cache.
"""

import hashlib
import importlib.util
import os
import sys
from pathlib import Path

#: the package version, its one source: pyproject.toml reads it ([tool.setuptools.dynamic]); `caishen --version`
__version__ = "0.1.0"

#: the subpackages whose kernel sources the numba cache digest covers
KERNEL_PACKAGES = ("sim", "envs", "agents")


def _package_dir(name: str) -> Path | None:
    """The folder of ``caishen.<name>`` (the repository folder in an editable install, the
    installed copy otherwise), found without importing it."""
    spec = importlib.util.find_spec(f"{__name__}.{name}")
    if spec is None or not spec.submodule_search_locations:
        return None
    return Path(list(spec.submodule_search_locations)[0]).resolve()


def _kernel_source_digest() -> str:
    """sha1 over the source files of ``caishen.sim``, ``caishen.envs`` and ``caishen.agents``
    that define numba kernels (path relative to its package, then the bytes)."""
    h = hashlib.sha1()
    for name in KERNEL_PACKAGES:
        root = _package_dir(name)
        if root is None:
            continue
        for path in sorted(root.rglob("*.py")):
            text = path.read_bytes()
            if b"@njit" in text or b"njit(" in text:
                h.update(f"{name}/{path.relative_to(root).as_posix()}".encode())
                h.update(text)
    return h.hexdigest()[:16]


#: the cache locator that files kernels by module name (see :mod:`caishen.numba_cache`)
_LOCATOR = "caishen.numba_cache.ModuleCacheLocator"


def _set_numba_cache_dir() -> None:
    if os.environ.get("NUMBA_CACHE_DIR"):
        return
    base = os.environ.get("CAISHEN_CACHE")
    if not base:
        from platformdirs import user_cache_dir

        base = user_cache_dir("caishen")
    path = str(Path(base) / f"numba-{_kernel_source_digest()}")
    os.environ["NUMBA_CACHE_DIR"] = path  # read by numba at import, and by worker processes
    # kernels filed by module name, not by this checkout's path (caishen.numba_cache)
    locators = _LOCATOR + ",UserProvidedCacheLocator,InTreeCacheLocator,UserWideCacheLocator"
    os.environ.setdefault("NUMBA_CACHE_LOCATOR_CLASSES", locators)
    if "numba" in sys.modules:  # numba already imported: set its config too
        from numba.core import config

        config.CACHE_DIR = path
        config.CACHE_LOCATOR_CLASSES = os.environ["NUMBA_CACHE_LOCATOR_CLASSES"]


_set_numba_cache_dir()


def __getattr__(name: str):
    """``caishen.read_run``: imported on first use, so that ``import caishen`` stays cheap (no pandas)."""
    if name == "read_run":
        from caishen.sim.analysis.run_table import read_run

        return read_run
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
