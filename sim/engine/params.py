"""Engine params: a rule set's facts, kernel codes and options as the named record ``ep``.

The turn structure differs between rule sets only through ``ep`` (a
``PARAMS_DTYPE`` record of :mod:`caishen.sim.engine.layout`: ``ep.joker``,
``ep.chow``, ...; the kernels read the same names): :func:`engine_params`
builds it from the registered rule set (:mod:`caishen.sim.rules.base`): its
*facts* (what the rule set is, e.g. the 财神 joker K-2.1, the 架听
declaration J-4.1), the codes of its win and payment kernels
(:mod:`caishen.sim.rules.kernels`) and its validated *options* (e.g.
``multiple_ron`` K-4.3).  :func:`load_rules` turns a name (or an options
object) and an options dict into the rule set's name and options.
"""

from __future__ import annotations

import numpy as np

from caishen.sim.engine.layout import (
    PARAMS_DTYPE,
    ROTATION_NEXT_AFTER_WIN,
    ROTATION_WINNER_STAYS,
)
from caishen.sim.rules import base as _rulesets
from caishen.sim.rules.base import DEFAULT
from caishen.sim.rules.options import short_repr


#: J-3.6 codes of the option ``passed_pong_scope`` as ep.passed_pong values
PASSED_PONG_SCOPES = {"same_kind": 1, "any": 2}


def load_rules(rules=DEFAULT, options=None):
    """``(name, rules_object)`` for a registered rule set's name and an options dict.

    ``rules`` may also be an options object (e.g. ``get(DEFAULT).options(...)``): its
    rule set is the one whose options class it is
    (:func:`caishen.sim.rules.base.of_options`).  Raises ``ValueError`` for an
    unknown rule set or option.
    """
    if not isinstance(rules, str):
        rs = _rulesets.of_options(rules)
        if rs is None:
            raise ValueError(f"unknown rule set {short_repr(rules)}; known: {', '.join(_rulesets.names())}")
        if options:
            rules = rules.with_options(**options)
        return rs.name, rules
    rs = _rulesets.get(rules)
    return rs.name, rs.options.from_dict(options)


def engine_params(name: str, rules) -> np.record:
    """The turn-structure params of a rule set: a ``PARAMS_DTYPE`` record (``ep.joker``, ``ep.chow``, ...;
    a ``numpy.record``, whose fields read as attributes in Python as in the kernels).

    ``name`` is the rule set's registered name
    (:func:`caishen.sim.rules.base.get`), ``rules`` its options object.  The
    facts and the kernel codes come from its
    :class:`~caishen.sim.rules.base.RuleSet`; ``reserved_tiles``,
    ``multiple_ron``, ``swap_call_max_chows``, ``dealer_rotation`` and
    ``discard_win`` come from the options where the rule set has them
    (K-4.3, K-4.5, K-3.3, K-7.1), else from its facts (J-3.4, J-2.3, J-5.2);
    ``passed_pong_scope`` (J-3.6) overrides the fact ``passed_pong``.
    Raises ``ValueError`` for an unknown rule set.
    """
    rs = _rulesets.get(name)
    f = rs.facts

    def opt(key):
        return getattr(rules, key) if hasattr(rules, key) else f[key]

    ep = np.zeros(1, PARAMS_DTYPE).view(np.recarray)[0]
    ep.joker = f["joker"]
    ep.reserve = rules.reserved_tiles
    ep.chow = f["chow"]
    ep.multi_win = int(opt("multiple_ron"))
    ep.swap_max_chows = opt("swap_call_max_chows")
    ep.rotation = {"next_after_win": ROTATION_NEXT_AFTER_WIN, "winner_stays": ROTATION_WINNER_STAYS}[
        opt("dealer_rotation")
    ]
    ep.discard_win = int(opt("discard_win"))
    ep.rob_kong = f["rob_kong"]
    ep.circle_ban = f["circle_ban"]
    ep.force_joker_min = f["force_joker_min"]
    ep.force_joker_shape = f["force_joker_shape"]
    ep.passed_pong = (
        PASSED_PONG_SCOPES[rules.passed_pong_scope] if hasattr(rules, "passed_pong_scope") else f["passed_pong"]
    )
    ep.passed_pong_claim_clears = f["passed_pong_claim_clears"]
    ep.passed_win = f["passed_win"]
    ep.kong_after_claim = f["kong_after_claim"]
    ep.first_dealer_random = f["first_dealer_random"]
    ep.win_kernel = rs.win_kernel
    ep.payments = rs.payments
    ep.points = rs.points
    ep.declare = f["declare"]
    ep.hard = f["hard"]
    return ep
