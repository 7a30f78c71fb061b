"""Behaviour must not move under refactoring or speed work: golden run digests (see tests/golden_runs.py)."""

from __future__ import annotations

import json

import pytest

from golden_runs import GOLDEN, RUNS, run_digest


@pytest.mark.parametrize("name", sorted(RUNS))
def test_golden_run_records_unchanged(name, engine_warm):
    want = json.loads(GOLDEN.read_text())[name]
    got = run_digest(name)
    assert got == want, (
        f"golden run {name!r} changed: {got} != {want}. If the change of behaviour is deliberate "
        "(a rule fix), regenerate with `python tests/golden_runs.py --update` and say why in the commit."
    )
