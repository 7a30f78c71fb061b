"""Engine params: a rule set's facts and options as the ``int64[N_EP]`` array ``ep``.

The turn structure differs between rule sets only through ``ep`` (the
``EP_*`` slots of :mod:`caishen.sim.engine.layout`): :func:`engine_params`
builds it from a rule set's *facts* (``RULESET_FACTS``: what the rule set
is, e.g. Kaihua's 财神 joker K-2.1, Jiating's 架听 J-4.1) and its validated
*options* (``RULESET_OPTIONS``: the options class, e.g. ``multiple_ron``
K-4.3).  :func:`load_rules` turns a name (or an options object) and an
options dict into both.
"""

from __future__ import annotations

import numpy as np

from caishen.sim import tiles as _tiles
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
    EP_RESERVE,
    EP_ROB_KONG,
    EP_ROTATION,
    EP_SWAP_MAX_CHOWS,
    EP_WIN_KERNEL,
    N_EP,
    ROTATION_NEXT_AFTER_WIN,
    ROTATION_WINNER_STAYS,
    WIN_KERNEL_KAIHUA,
    WIN_KERNEL_SHAPE,
)
from caishen.sim.rules import jiating as _jiating
from caishen.sim.rules import kaihua as _kaihua


#: rule-set facts (not options) that shape the turn structure, by rule set
RULESET_FACTS = {
    "kaihua": {
        "joker": _tiles.CAISHEN,  # K-2.1
        "chow": 1,  # K-4.2
        "rob_kong": 1,  # K-5.5
        "piao_ban": 1,  # K-9.2
        "force_joker_min": 3,  # K-2.4
        "baotou_force": 1,  # K-2.5
        "passed_pong": 1,  # K-4.4 same kind
        "passed_pong_claim_clears": 1,  # K-4.4 "until their own next turn"
        "passed_win": 0,
        "kong_after_claim": 0,  # K-4.1 "after a chow or pong they must discard"
        "first_dealer_random": 0,  # K-3.2
        "win_kernel": WIN_KERNEL_KAIHUA,  # K-6, K-7 (joker rules, exponent, flags)
        "engine_payments": 1,  # K-8 paid inside the engine
        "declare": 0,
        "hard": 0,
    },
    "jiating": {
        "joker": -1,  # J-1.1 no jokers
        "chow": 0,  # J-3.1 no chow
        "rob_kong": 1,  # J-3.3 an added kong can be robbed (exposed and concealed kongs never are)
        "piao_ban": 0,
        "force_joker_min": 0,
        "baotou_force": 0,
        "passed_pong": 1,  # J-3.6 (option passed_pong_scope overrides: same_kind 1, any 2)
        "passed_pong_claim_clears": 0,  # J-3.6 "until after their own next draw": a pong does not end it
        "passed_win": 1,  # J-3.5
        "kong_after_claim": 0,  # decision J3 (as Kaihua's E2): after a pong, discard
        "first_dealer_random": 1,  # J-2.2
        "win_kernel": WIN_KERNEL_SHAPE,  # J-5.1 any complete hand
        "engine_payments": 0,  # J-6: scored after the hand by caishen.sim.rules.jiating (caishen.sim.jiating_records)
        "declare": 1,  # J-4.1
        "hard": 1,  # J-4.2
        # facts that are options in Kaihua
        "multiple_ron": 1,  # J-3.4 一炮多响
        "swap_call_max_chows": 0,  # no chow, no swap call
        "dealer_rotation": "winner_stays",  # J-2.3 (a 流局 keeps the dealer too)
        "discard_win": 1,  # J-5.2
    },
}

#: the classes of rule options, by rule set
RULESET_OPTIONS = {"kaihua": _kaihua.KaihuaRules, "jiating": _jiating.JiatingRules}

#: J-3.6 codes of the option ``passed_pong_scope`` as EP_PASSED_PONG values
PASSED_PONG_SCOPES = {"same_kind": 1, "any": 2}


def load_rules(rules="kaihua", options=None):
    """``(name, rules_object)`` for a rule-set name and an options dict.

    ``rules`` may also be an options object (e.g. ``KaihuaRules(...)``).
    Raises ``ValueError`` for an unknown rule set or option.
    """
    for name, cls in RULESET_OPTIONS.items():
        if isinstance(rules, cls):
            if options:
                rules = rules.with_options(**options)
            return name, rules
    if not isinstance(rules, str) or rules not in RULESET_OPTIONS:
        raise ValueError(f"unknown rule set {rules!r}; known: {', '.join(sorted(RULESET_OPTIONS))}")
    return rules, RULESET_OPTIONS[rules].from_dict(options)


def engine_params(name: str, rules) -> np.ndarray:
    """The turn-structure params ``int64[N_EP]`` (``EP_*``) of a rule set.

    ``name`` is the rule set's name (a key of :data:`RULESET_FACTS`),
    ``rules`` its options object.  ``reserved_tiles``, ``multiple_ron``,
    ``swap_call_max_chows``, ``dealer_rotation`` and ``discard_win`` come
    from the options where the rule set has them (Kaihua), else from its
    facts (Jiating: J-3.4, J-2.3, J-5.2); ``passed_pong_scope`` (J-3.6)
    overrides the fact ``passed_pong``.
    """
    if name not in RULESET_FACTS:
        raise ValueError(f"unknown rule set {name!r}")
    f = RULESET_FACTS[name]

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
    ep[EP_WIN_KERNEL] = f["win_kernel"]
    ep[EP_ENGINE_PAYMENTS] = f["engine_payments"]
    ep[EP_DECLARE] = f["declare"]
    ep[EP_HARD] = f["hard"]
    return ep
