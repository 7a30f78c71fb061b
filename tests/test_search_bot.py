"""The search bot mc:N (caishen.sim.bots.search): determinizations from the seat's view only, rollout values."""

from __future__ import annotations

import numpy as np
import pytest

from caishen.sim import engine as E
from caishen.sim.bots.registry import bot_table, make_context, parse as parse_bot
from caishen.sim.bots.search import _determinize, _hand_value, _mc_action
from caishen.sim.tiles import MELD_KONG_CONCEALED
from test_tuned import states_of


def _unseen(st, me):
    """Counts per kind of the tiles hidden from ``me``: other hands, other concealed kongs, the wall left."""
    c = np.zeros(34, np.int64)
    for p in range(4):
        if p == me:
            continue
        c += st["hands"][p]
        for i in range(int(st["seat"][p, E.SF_N_MELDS])):
            if st["meld_type"][p, i] == MELD_KONG_CONCEALED:
                c[st["meld_kind"][p, i]] += 4
    head, tail = int(st["sc"][E.SC_HEAD]), int(st["sc"][E.SC_TAIL])
    c += np.bincount(st["wall"][head:tail + 1], minlength=34)
    return c


def _redeal(st, me, rng):
    """A twin of ``st`` with the tiles hidden from ``me`` (other hands, the wall left) dealt anew."""
    twin = st.copy()
    head, tail = int(twin["sc"][E.SC_HEAD]), int(twin["sc"][E.SC_TAIL])
    others = [p for p in range(4) if p != me]
    pool = list(twin["wall"][head:tail + 1])
    sizes = [int(twin["hands"][p].sum()) for p in others]
    for p in others:
        pool += [k for k in range(34) for _ in range(int(twin["hands"][p, k]))]
    pool = list(rng.permutation(pool))
    for p, n in zip(others, sizes):
        twin["hands"][p] = np.bincount(pool[:n], minlength=34)
        pool = pool[n:]
    twin["wall"][head:tail + 1] = pool
    return twin


def _context(rules, spec="mc:3:greedy", seed=0):
    name, r = E.load_rules(rules, None)
    table, w = bot_table([spec] * 4, name, int(E.engine_params(name, r)[E.EP_JOKER]))
    return make_context(name, r, w, seed), w[0], int(table[0, 1])


@pytest.mark.parametrize("rules", ["kaihua", "jiating"])
def test_determinize_keeps_the_view_and_the_unseen_tiles(rules):
    """The redeal changes only what the seat cannot see: its hand, every meld it can see, the
    discards, the hand sizes and the public counters stay; the unseen tiles are the same
    multiset (other hands + other concealed kongs + the wall left), only placed anew."""
    states, ep, rp, tabs, work = states_of(rules, 120, seed=31)
    bx, w, _ = _context(rules)
    sims, ib, rng = bx[1], bx[3], bx[4]
    moved = 0
    for i in range(len(states)):
        st = states[i]
        if st["sc"][E.SC_PHASE] not in (E.PH_TURN, E.PH_CLAIM):
            continue
        me = int(st["sc"][E.SC_TO_ACT])
        root = sims[0]
        _determinize(root, st, me, ep, rp, tabs, rng, ib)
        assert np.array_equal(root["hands"][me], st["hands"][me])
        for p in range(4):
            assert root["hands"][p].sum() == st["hands"][p].sum()
            visible = st["meld_type"][p] != (MELD_KONG_CONCEALED if p != me else -1)
            assert np.array_equal(root["meld_kind"][p][visible], st["meld_kind"][p][visible])
        for f in ("discards", "dflags", "meld_type"):
            assert np.array_equal(root[f], st[f]), f
        for j in (E.SC_HEAD, E.SC_TAIL, E.SC_TURN, E.SC_DEALER, E.SC_TILE, E.SC_SRC, E.SC_TURNS):
            assert root["sc"][j] == st["sc"][j]
        assert root["sc"][E.SC_TO_ACT] == me and root["sc"][E.SC_PHASE] == st["sc"][E.SC_PHASE]
        assert np.array_equal(_unseen(root, me), _unseen(st, me))
        moved += int(not np.array_equal(root["hands"], st["hands"]))
        for p in range(4):
            if p != me:
                joker = int(ep[E.EP_JOKER])
                from caishen.sim.hand import shanten

                assert root["seat"][p, E.SF_TENPAI] == int(shanten(root["hands"][p].astype(np.uint8), joker) <= 0)
    assert moved > 50


@pytest.mark.parametrize("rules", ["kaihua", "jiating"])
def test_search_bot_never_reads_hidden_tiles(rules):
    """For a fixed rollout seed the search bot's choice is the same when the tiles hidden from its
    seat (the other hands, the wall) are redealt consistently with its view."""
    states, ep, rp, tabs, work = states_of(rules, 60, seed=41)
    bx, w, n_det = _context(rules)
    gen = np.random.default_rng(0)
    searched = 0
    for i in range(len(states)):
        st = states[i]
        me = int(st["sc"][E.SC_TO_ACT])
        twin = _redeal(st, me, gen)
        assert not np.array_equal(twin["hands"], st["hands"]) or st["sc"][E.SC_PHASE] == E.PH_HARD
        start = np.array([i + 1, 2, 3, 4], np.uint64)
        picks = []
        for s in (st, twin):
            rng = start.copy()
            picks.append(int(_mc_action(n_det, w, s, ep, rp, tabs, s["mask"], work, bx[1], bx[2], bx[3], rng,
                                        bx[5], bx[6])))
            searched += int(not np.array_equal(rng, start))  # the bot drew determinizations
        assert picks[0] == picks[1], (i, E.action_name(picks[0]), E.action_name(picks[1]))
        assert st["mask"][picks[0]] == 1
    assert searched > 20


@pytest.mark.parametrize("rules", ["kaihua", "jiating"])
def test_rollout_value_is_the_records_score(rules):
    """_hand_value (the rollouts' points) equals each seat's score in the hand's record
    (Kaihua the engine's payments, Jiating the J-6 scorer)."""
    from caishen.agents import make_agent

    bx, w, _ = _context(rules)
    for seed in range(12):
        game = E.Game(rules).reset(seed=seed)
        bots = [make_agent("greedy")] * 4
        while not game.done:
            game.step(bots[game.current_player].act(game))
        for s in range(4):
            assert _hand_value(game.state, s, game._ep, bx[5], bx[6]) == game.result[f"score_{s}"]


@pytest.mark.parametrize("rules", ["kaihua", "jiating"])
def test_search_bot_plays_checked_hands(rules, engine_warm):
    """mc:N and mc:N:greedy next to other bots: legal actions, every state check passes."""
    from caishen.sim.selfplay.batch import play_batch

    r = play_batch(4, 3, rules=rules, policies=f"mc:2,greedy,mc:2:greedy,tuned:{rules}", check=True)
    total = sum(r[f"score_{s}"].astype(int) for s in range(4))
    assert not total.any()


@pytest.mark.parametrize("spec,msg", [
    ("mc", "determinizations"), ("mc:", "determinizations"), ("mc:x", "determinizations"), ("mc:0", "1..4096"),
    ("mc:5000", "1..4096"), ("mc:4:foo", "base policy"), ("mcts:4", "unknown policy 'mcts:4'"),
])
def test_bad_search_specs_are_named(spec, msg):
    with pytest.raises(ValueError, match=msg):
        parse_bot(spec)
