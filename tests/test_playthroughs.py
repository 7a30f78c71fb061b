"""The playthroughs (tests/playthroughs.py): each hand played again reads line for line as its file."""

from __future__ import annotations

import difflib

import pytest

from playthroughs import PLAYTHROUGHS, path, play


@pytest.mark.parametrize("name", sorted(PLAYTHROUGHS))
def test_playthrough_unchanged(name, engine_warm):
    want = path(name).read_text(encoding="utf-8")
    got = play(name)
    if got != want:
        diff = list(difflib.unified_diff(want.splitlines(), got.splitlines(), f"{name}.txt", "now", n=2, lineterm=""))
        pytest.fail(f"playthrough {name!r} changed (if on purpose: python tests/playthroughs.py --update, and say "
                    "why in the commit); first differences:\n" + "\n".join(diff[:40]))


def test_playthroughs_are_whole_hands_with_every_move_and_the_score():
    for name in PLAYTHROUGHS:
        text = path(name).read_text(encoding="utf-8")
        assert text.count("-> seat ") > 20 and "step 0:" in text, name
        assert ("score" in text.lower()) and text.rstrip().splitlines()[-1].strip(), name
