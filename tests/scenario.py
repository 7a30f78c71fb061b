"""Helpers for the engine tests: deal a hand-built wall and act by action name
with the state checker after every step; batch self-play with random bots."""

from __future__ import annotations

from caishen.sim import engine as E
from caishen.sim.selfplay import batch as selfplay
from caishen.sim.tiles import kind_index


def K(name: str) -> int:
    """Kind index of one tile name, ``K('3m') == 2``."""
    return kind_index(int(name[0]), name[1])


def deal(rules: str, hands, draws="", replacements="", dealer=0, streak=0, **options) -> E.Game:
    """A ``rules`` game on the wall of :func:`caishen.sim.engine.build_wall`, checked."""
    g = E.Game(rules, options or None)
    g.reset(wall=E.build_wall(hands, draws, replacements, dealer), dealer=dealer, streak=streak)
    g.check()
    return g


def legal(g: E.Game) -> set[str]:
    return {E.action_name(a) for a in g.legal_actions()}


def act(g: E.Game, *names: str) -> E.Game:
    for n in names:
        g.step(n)
        g.check()
    return g


def random_batch(n_hands, seed, **kw):
    """Batch self-play with uniformly random bots (``caishen.sim.selfplay.batch.play_batch``)."""
    kw.setdefault("policies", "random")
    return selfplay.play_batch(n_hands, seed, **kw)
