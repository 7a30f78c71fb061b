"""Engine params: a rule set's facts, kernel codes and options as the ``int64[N_EP]`` array ``ep``.

The turn structure differs between rule sets only through ``ep`` (the
``EP_*`` slots of :mod:`caishen.sim.engine.layout`): :func:`engine_params`
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
    EP_BAOTOU_FORCE,
    EP_CHOW,
    EP_DECLARE,
    EP_DISCARD_WIN,
    EP_ENGINE_PAYMENTS,
    EP_FIRST_DEALER_RANDOM,
    EP_FORCE_JOKER_MIN,
    EP_HARD,
    EP_JOKER,
    EP_KONG_AFTER_CLAIM,
    EP_MULTI_RON,
    EP_PASSED_PONG,
    EP_PASSED_PONG_CLAIM_CLEARS,
    EP_PASSED_WIN,
    EP_PIAO_BAN,
    EP_POINTS,
    EP_RESERVE,
    EP_ROB_KONG,
    EP_ROTATION,
    EP_SWAP_MAX_CHOWS,
    EP_WIN_KERNEL,
    N_EP,
    ROTATION_NEXT_AFTER_WIN,
    ROTATION_WINNER_STAYS,
)
from caishen.sim.rules import base as _rulesets
from caishen.sim.rules.base import DEFAULT
from caishen.sim.rules.options import short_repr


#: J-3.6 codes of the option ``passed_pong_scope`` as EP_PASSED_PONG values
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


def engine_params(name: str, rules) -> np.ndarray:
    """The turn-structure params ``int64[N_EP]`` (``EP_*``) of a rule set.

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

    ep = np.zeros(N_EP, np.int64)
    ep[EP_JOKER] = f["joker"]
    ep[EP_RESERVE] = rules.reserved_tiles
    ep[EP_CHOW] = f["chow"]
    ep[EP_MULTI_RON] = int(opt("multiple_ron"))
    ep[EP_SWAP_MAX_CHOWS] = opt("swap_call_max_chows")
    ep[EP_ROTATION] = {"next_after_win": ROTATION_NEXT_AFTER_WIN, "winner_stays": ROTATION_WINNER_STAYS}[
        opt("dealer_rotation")
    ]
    ep[EP_DISCARD_WIN] = int(opt("discard_win"))
    ep[EP_ROB_KONG] = f["rob_kong"]
    ep[EP_PIAO_BAN] = f["piao_ban"]
    ep[EP_FORCE_JOKER_MIN] = f["force_joker_min"]
    ep[EP_BAOTOU_FORCE] = f["baotou_force"]
    ep[EP_PASSED_PONG] = (
        PASSED_PONG_SCOPES[rules.passed_pong_scope] if hasattr(rules, "passed_pong_scope") else f["passed_pong"]
    )
    ep[EP_PASSED_PONG_CLAIM_CLEARS] = f["passed_pong_claim_clears"]
    ep[EP_PASSED_WIN] = f["passed_win"]
    ep[EP_KONG_AFTER_CLAIM] = f["kong_after_claim"]
    ep[EP_FIRST_DEALER_RANDOM] = f["first_dealer_random"]
    ep[EP_WIN_KERNEL] = rs.win_kernel
    ep[EP_ENGINE_PAYMENTS] = rs.payments
    ep[EP_POINTS] = rs.points
    ep[EP_DECLARE] = f["declare"]
    ep[EP_HARD] = f["hard"]
    return ep
