"""Duplicate deals (``play_batch(wall_seed=...)``) and the arena (``caishen.sim.arena``, ``caishen match``)."""

from __future__ import annotations

import numpy as np
import pytest

from caishen.agents import make_agent
from caishen.sim.engine import Game
from caishen.sim.selfplay import duplicate_deal, play_batch


def _replay(rules, wall, dealer, specs):
    """Hand ``wall``/``dealer`` played one action at a time by the agents ``specs`` (one per seat)."""
    game = Game(rules).reset(wall=wall, dealer=dealer)
    bots = [make_agent(p) for p in specs]
    while not game.done:
        game.step(bots[game.current_player].act(game))
    return game.result


@pytest.mark.parametrize("rules,specs", [
    ("kaihua", ("greedy", "greedy", "greedy", "greedy")),
    ("kaihua", ("always", "never", "greedy", "threshold:20")),
    ("kaihua", ("never", "greedy", "threshold:20", "always")),  # the same policies, rotated one seat
    ("jiating", ("greedy", "greedy", "greedy", "greedy")),
])
def test_duplicate_deals_play_the_walls_of_duplicate_deal(rules, specs, engine_warm):
    """Hand h of play_batch(wall_seed=w) is the deal duplicate_deal(w, h) whatever the policies and
    their seats: deterministic bots replayed one action at a time on that wall and dealer reach
    the same record, for several policy tables (so the walls did not depend on them)."""
    n = 12
    batch = play_batch(n, 5, rules=rules, policies=",".join(specs), wall_seed=77)
    for h in range(n):
        wall, dealer = duplicate_deal(77, h)
        assert int(batch["dealer"][h]) == dealer
        assert int(batch["match_hand"][h]) == 0
        res = _replay(rules, wall, dealer, specs)
        for col in ("winner", "winners_mask", "win_type", "discarder", "turns", "tiles_left",
                    "score_0", "score_1", "score_2", "score_3"):
            assert res[col] == int(batch[col][h]), (h, col)


def test_duplicate_deals_depend_on_wall_seed_and_hand_only(engine_warm):
    """Dealers (and so the deals) are the same under other seeds, policies, match lengths and
    options; other wall seeds deal other walls; hands of one wall seed differ."""
    a = play_batch(64, 1, policies="random", wall_seed=9)
    b = play_batch(64, 2, policies="greedy,always,random,never", match_len=3, wall_seed=9,
                   options={"multiple_ron": True, "reserved_tiles": 14})
    assert np.array_equal(a["dealer"], b["dealer"])
    assert len(set(a["dealer"].tolist())) == 4  # drawn, not always seat 0
    walls = {duplicate_deal(9, h)[0].tobytes() for h in range(64)}
    assert len(walls) == 64
    assert duplicate_deal(10, 0)[0].tobytes() not in walls


def test_duplicate_deals_seed_drives_only_the_bots_stream(engine_warm):
    """With a wall seed, ``seed`` seeds the random bots: the same seed replays the same hands,
    another seed plays the same walls differently; streak and match_hand stay 0 (one-hand matches)."""
    a = play_batch(200, 1, policies="random", wall_seed=3)
    again = play_batch(200, 1, policies="random", wall_seed=3)
    other = play_batch(200, 2, policies="random", wall_seed=3)
    for col in a:
        assert np.array_equal(a[col], again[col]), col
    assert not np.array_equal(a["turns"], other["turns"])
    assert np.array_equal(a["dealer"], other["dealer"])
    j = play_batch(30, 1, rules="jiating", policies="greedy", wall_seed=3)
    assert not j["streak"].any() and not j["match_hand"].any()


@pytest.mark.parametrize("bad", [-1, 2**32, True, 1.5, "7"])
def test_duplicate_deals_bad_wall_seed_is_named(bad):
    with pytest.raises(ValueError, match="wall_seed"):
        play_batch(1, 0, policies="random", wall_seed=bad)
    with pytest.raises(ValueError, match="wall_seed"):
        duplicate_deal(bad, 0)


def test_without_wall_seed_nothing_changes(engine_warm):
    """wall_seed=None is the classic batch (the golden digests check the runner's path too)."""
    a = play_batch(50, 4, policies="greedy,random,always,never")
    b = play_batch(50, 4, policies="greedy,random,always,never", wall_seed=None)
    for col in a:
        assert np.array_equal(a[col], b[col]), col
