"""A toy rule set in a folder of its own, with a numba kernel of its own: the steps of ``caishen.sim.rules``.

``toy``: no joker, no chow, no declarations, no 飘; any complete hand wins
(the shape win test, ``WIN_KERNEL_SHAPE``) and is paid by the exponent
payments at exponent 0 (``PAYMENTS_EXPONENT``, whose points the engine's
payments are: ``POINTS_ENGINE``).  Its own kernel is its record finisher
(:mod:`toy_rules.kernels`): a numba pass over the batch matrix that adds
the column ``hand_kinds`` (how many distinct kinds the first winner held
before the winning tile).  Its analysis hook adds one balance table and a
sweep metric.  Nothing outside this folder knows it: :func:`register` adds
it to the registry of this process.
"""

from __future__ import annotations

import dataclasses
from typing import Literal

from caishen.sim.rules import base as rulesets
from caishen.sim.rules import codes
from caishen.sim.rules.kaihua import KaihuaRules

NAME = "toy"


@dataclasses.dataclass(frozen=True)
class ToyRules(KaihuaRules):
    """The toy's options: the exponent payments' option fields, its own defaults."""

    reserved_tiles: int = 14
    multiple_ron: bool = True
    dealer_rotation: Literal["next_after_win", "winner_stays"] = "winner_stays"
    discard_win_payment: Literal["all_three", "own_share"] = "own_share"


FACTS = {
    "joker": -1, "chow": 0, "rob_kong": 1, "circle_ban": 0, "force_joker_min": 0, "force_joker_shape": 0,
    "passed_pong": 1, "passed_pong_claim_clears": 1, "passed_win": 0, "kong_after_claim": 0,
    "first_dealer_random": 0, "declare": 0, "hard": 0,
}


def make_ruleset() -> rulesets.RuleSet:
    return rulesets.RuleSet(
        name=NAME, title="a toy rule set with a kernel of its own", options=ToyRules, facts=FACTS,
        win_kernel=codes.WIN_KERNEL_SHAPE, payments=codes.PAYMENTS_EXPONENT, points=codes.POINTS_ENGINE,
        reward_scale=4.0, finish="toy_rules.kernels:finish", columns="toy_rules.kernels:COLUMNS",
        field_columns="caishen.sim.rules.kaihua.records:FIELD_COLUMNS",
        analysis="toy_rules.analysis:ANALYSIS")


def register() -> rulesets.RuleSet:
    """Register the toy in this process (``replace``: a test may register it again)."""
    return rulesets.register(make_ruleset(), replace=True)
