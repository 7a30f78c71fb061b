"""A numba cache locator that keys compiled kernels by module, not by the checkout's path.

numba's own user-directory locator files each kernel under a hash of the *absolute*
folder of its source file, so the same sources in another checkout, a moved clone or a
CI workspace compile everything again (10-15 minutes on 2 cores) even though
:mod:`caishen` already names the cache directory after a digest of every kernel
source.  :class:`ModuleCacheLocator` files a kernel of a ``caishen`` module under that
module's dotted name instead; numba's source stamp is a hash of the file's contents,
so a cache is reused exactly when the sources are the same, wherever they lie.

:mod:`caishen` puts this class first in ``NUMBA_CACHE_LOCATOR_CLASSES`` (numba reads
that setting at its import; worker processes inherit it).  Kernels of other modules
(a user's own ``@njit(cache=True)``) fall through to numba's usual locators.
"""

from __future__ import annotations

import os

from numba.core import config
from numba.core.caching import UserProvidedCacheLocator

__all__ = ["ModuleCacheLocator"]


class ModuleCacheLocator(UserProvidedCacheLocator):
    """numba cache locator: ``NUMBA_CACHE_DIR/<module name>/`` for kernels of ``caishen.*``."""

    def __init__(self, py_func, py_file):
        super().__init__(py_func, py_file)
        self._cache_path = os.path.join(config.CACHE_DIR, py_func.__module__)

    @classmethod
    def from_function(cls, py_func, py_file):
        module = getattr(py_func, "__module__", "") or ""
        if not module.startswith("caishen."):
            return None
        return super().from_function(py_func, py_file)
