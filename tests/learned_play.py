"""Play a learned bot in Python over the kernels, stopping at its decisions (tests of the learn recipe)."""

from __future__ import annotations

from caishen.sim.bots import learned
from caishen.sim.bots.policies import new_work
from caishen.sim.rules.base import DEFAULT


def learned_decisions(path, walls, rules=DEFAULT):
    """Play ``walls`` (dealer wall % 4) of rule set ``rules`` with the learned bot ``path`` in every seat,
    in Python over the kernels; yield ``(st, ep, rp, tabs, lx, n)`` at each decision of two or more candidates, its scores in
    the scratch ``lx`` (the caller may use ``st`` but leaves it as it found it)."""
    yield from row_decisions(learned.load_learned(path)[0], walls, rules)


def row_decisions(row, walls, rules=DEFAULT):
    """:func:`learned_decisions` of a packed learned bot ``row`` (``learned.pack``) rather than a file."""
    from caishen.sim.engine import PH_DONE, _legal_mask, _reset, _seeded_wall, _step
    from caishen.sim.engine import engine_params, load_rules, new_state
    from caishen.sim.tables import hand_tables

    name, r = load_rules(rules, None)
    ep, rp, tabs = engine_params(name, r), r.params(), hand_tables()
    work = new_work()
    lx = learned.new_scratch()
    st = new_state()[0]
    for wall in walls:
        _seeded_wall(wall, st)
        _reset(st, ep, rp, tabs, wall % 4)
        while st["table"]["phase"] != PH_DONE:
            _legal_mask(st, ep)
            n = learned._learned_scores(row, st, ep, tabs, st["mask"], work, lx)
            if n >= 2:
                yield st, ep, rp, tabs, lx, n
                _legal_mask(st, ep)
            _step(st, ep, rp, tabs, int(learned._learned_action(row, st, ep, tabs, st["mask"], work, lx)))
