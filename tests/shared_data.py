"""Where the tests find the data beside the repository: the binding rule specs, the scoring vectors and
the external shanten cases (``shared/``).

:data:`ENV` (``CAISHEN_SHARED``) names that folder; unset, it is ``../shared`` next to the repository
(``shared`` beside the checkout's folder).  A test that needs a file of it calls :func:`require` (or
``skipif(not path(...).is_file(), reason=reason(...))``): without the file it is skipped with a message
naming the variable and the folder looked in, never failed.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest

#: the environment variable naming the shared folder
ENV = "CAISHEN_SHARED"
#: the repository's folder
ROOT = Path(__file__).resolve().parents[1]
#: the fallback: ``shared`` next to the repository
DEFAULT = ROOT.parent / "shared"


def root() -> Path:
    """The shared folder: ``$CAISHEN_SHARED`` when set (not empty), else :data:`DEFAULT`."""
    value = os.environ.get(ENV, "").strip()
    return Path(value).expanduser() if value else DEFAULT


def path(*parts: str) -> Path:
    """A path inside the shared folder (it may not exist)."""
    return root().joinpath(*parts)


def reason(*parts: str) -> str:
    """The skip message of a test that needs ``shared/<parts>``: what is missing and how to point at it."""
    where = f"{ENV}={os.environ[ENV]!r}" if os.environ.get(ENV, "").strip() else f"{ENV} unset, so {DEFAULT}"
    return (f"shared data {'/'.join(parts)} not found in {root()} ({where}): set {ENV} to the folder holding "
            "rules/, vectors/ and data/shanten/")


def require(*parts: str) -> Path:
    """``path(*parts)``, or skip the calling test (:func:`reason`) when it does not exist."""
    p = path(*parts)
    if not p.exists():
        pytest.skip(reason(*parts))
    return p
