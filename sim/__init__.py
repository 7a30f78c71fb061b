"""caishen: self-play simulation and research toolkit for Chinese regional mahjong.

Layers (arrows point one way): ``caishen.sim.tiles`` -> ``caishen.sim.tables`` -> ``caishen.sim.hand``
-> ``caishen.sim.rules`` -> ``caishen.sim.engine`` -> ``caishen.sim.policies`` / ``caishen.sim.selfplay`` ->
``caishen.sim.runner``; ``envs``, ``agents`` and the CLI import ``sim``.  Importing
``sim`` is cheap: tables are built (or read from the disk cache) on first use.

numba's on-disk cache (``cache=True``) does not notice when a kernel that a
cached kernel calls changes in *another* module, and would keep running the
old code.  So unless ``NUMBA_CACHE_DIR`` is set by the user, the compiled
kernels are cached in a directory named after a digest of every ``sim``
source file that defines numba kernels: any change there starts a fresh
cache.
"""

import hashlib
import os
import sys
from pathlib import Path

__version__ = "0.1.0"


def _kernel_source_digest() -> str:
    """sha1 over the ``sim`` source files that define numba kernels."""
    root = Path(__file__).resolve().parent
    h = hashlib.sha1()
    for path in sorted(root.rglob("*.py")):
        text = path.read_bytes()
        if b"@njit" in text:
            h.update(path.relative_to(root).as_posix().encode())
            h.update(text)
    return h.hexdigest()[:16]


def _set_numba_cache_dir() -> None:
    if os.environ.get("NUMBA_CACHE_DIR"):
        return
    base = os.environ.get("CAISHEN_CACHE")
    if not base:
        from platformdirs import user_cache_dir

        base = user_cache_dir("caishen")
    path = str(Path(base) / f"numba-{_kernel_source_digest()}")
    os.environ["NUMBA_CACHE_DIR"] = path  # read by numba at import, and by worker processes
    if "numba" in sys.modules:  # numba already imported: set its config too
        from numba.core import config

        config.CACHE_DIR = path


_set_numba_cache_dir()
