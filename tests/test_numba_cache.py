"""caishen.numba_cache: compiled kernels are found by module name and source contents, so the same
sources in another folder (a second clone, a CI workspace) load the cache instead of compiling."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap

import caishen

KERNEL = textwrap.dedent(
    """
    from numba import njit

    @njit(cache=True)
    def twice(x):
        return 2 * x
    """
)

#: import KERNEL from the file argv[1] as the module caishen._cachetest, call it, print the cache stats
PROBE = textwrap.dedent(
    """
    import importlib.util, json, sys
    import caishen  # sets NUMBA_CACHE_DIR / NUMBA_CACHE_LOCATOR_CLASSES from CAISHEN_CACHE
    spec = importlib.util.spec_from_file_location("caishen._cachetest", sys.argv[1])
    mod = importlib.util.module_from_spec(spec)
    sys.modules["caishen._cachetest"] = mod
    spec.loader.exec_module(mod)
    assert mod.twice(21) == 42
    st = mod.twice.stats
    print(json.dumps({"hits": sum(st.cache_hits.values()), "misses": sum(st.cache_misses.values())}))
    """
)


def _probe(path, cache, locators=None):
    env = {k: v for k, v in os.environ.items() if not k.startswith("NUMBA_CACHE")}
    env["CAISHEN_CACHE"] = str(cache)
    if locators is not None:
        env["NUMBA_CACHE_LOCATOR_CLASSES"] = locators
    out = subprocess.run([sys.executable, "-c", PROBE, str(path)], env=env, capture_output=True,
                         text=True, timeout=300)
    assert out.returncode == 0, out.stderr
    return json.loads(out.stdout.strip().splitlines()[-1])


def _two_copies(tmp_path):
    a, b = tmp_path / "clone-a" / "kern.py", tmp_path / "elsewhere" / "clone-b" / "kern.py"
    for p in (a, b):
        p.parent.mkdir(parents=True)
        p.write_text(KERNEL)
    return a, b


def test_the_same_sources_in_another_folder_load_the_cache(tmp_path):
    a, b = _two_copies(tmp_path)
    cache = tmp_path / "cache"
    assert _probe(a, cache) == {"hits": 0, "misses": 1}  # compiled once
    assert _probe(b, cache) == {"hits": 1, "misses": 0}  # the other folder loads it


def test_changed_sources_compile_again(tmp_path):
    a, b = _two_copies(tmp_path)
    b.write_text(KERNEL.replace("2 * x", "3 * x + 0 * x - x"))
    cache = tmp_path / "cache"
    _probe(a, cache)
    assert _probe(b, cache)["misses"] == 1  # numba's stamp is the file's contents


def test_without_the_locator_numba_would_compile_again(tmp_path):
    """The check above can fail: numba's own locator files kernels by absolute folder."""
    a, b = _two_copies(tmp_path)
    cache = tmp_path / "cache"
    plain = "UserProvidedCacheLocator"
    _probe(a, cache, plain)
    assert _probe(b, cache, plain) == {"hits": 0, "misses": 1}


def test_caishen_names_the_locator_for_numba():
    assert caishen._LOCATOR.split(",")[0] == "caishen.numba_cache.ModuleCacheLocator"
    if "NUMBA_CACHE_LOCATOR_CLASSES" in os.environ:  # unless a user set NUMBA_CACHE_DIR
        assert os.environ["NUMBA_CACHE_LOCATOR_CLASSES"].startswith(caishen._LOCATOR)
