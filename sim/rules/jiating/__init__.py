"""Jiating mahjong (架听麻将) as one rule set: options, turn hooks, scoring, payments, records.

Binding spec: ``shared/rules/jiating.md`` (rule IDs ``J-...``, pattern IDs
``P..``), defined for this project in ``docs/rules/jiating.md``.  This
package registers the rule set ``"jiating"`` (:data:`RULESET`, see
:mod:`caishen.sim.rules.base`) and holds everything Jiating is:

==============  ===========================================================
module          what it owns
==============  ===========================================================
``layout``      the numbers the kernels share: the options packed as params
                (``P_*``), option codes, win types, declarations, bounds,
                the scoring workspace (rows ``W_*``, context ``C_*``)
``tables``      the fifty patterns P01..P50 (J-8) as data: IDs, names,
                default points, doubling, exclusions
``patterns``    :func:`_view_values`, the kernel that evaluates every
                pattern on one reading and wait: **where a Jiating pattern
                is scored**
``options``     :class:`JiatingRules` (J-1.2, J-3.6, J-6, J-7, J-8 as data)
``payments``    J-6.2, J-6.4, J-6.5, J-3.4: kernels and their Python face
``kernels``     one win scored (J-5, J-6, J-7): readings, waits, the best
                view, ``G``; :func:`score_win`, its checked Python face
``scoring``     one scoring-vector case: parse and check (D11), score,
                settle (:func:`evaluate`, :func:`score`, ``caishen score``)
``turn``        the engine's hooks: the win test (J-5.1), the 架听 single
                wait (J-4.1) and the 硬子 waits (J-4.2)
``points``      the points of a finished hand (every recorded win scored and
                paid): the kernel the engine's tools reach through
                ``POINTS_PATTERNS``
``batch``       every recorded win of a self-play batch in one numba call
``records``     the J-9 record columns from the engine's records
``words``       its records read as words (patterns by ID, pinyin and
                Chinese) and a win's score explained (points, caps, payments)
==============  ===========================================================

Importing this package is cheap: the scoring modules (``patterns``,
``payments``, ``kernels``, ``scoring``, ``batch``, ``records``; their
kernels compile on first call) are imported when first
used (their names are still importable from here: ``from
caishen.sim.rules.jiating import score``).  The slow obvious Python scorer
the kernels are compared with lives in the tests
(``tests/jiating_reference.py``).

The rules in brief
------------------
- J-1: 136 tiles, no jokers, no flowers; draws from the head, replacement
  draws from the tail; ``reserved_tiles`` (0) never drawn.
- J-2: dealer 14 tiles; the dealer keeps the deal after a 流局 or a win
  among the winners; the streak ``k`` counts kept deals.
- J-3: pong and kong only (no chow); only an added kong can be robbed;
  several winners on one discard, each paid by the discarder; passed win and
  passed pong (``passed_pong_scope``) are engine matters.
- J-4: 架听 (declared single wait) and 硬子 (hard ready at the deal).
- J-5: a win is 4 sets + a pair (melds included) or seven pairs (no melds,
  a four of a kind is two pairs); the reading and wait with the highest
  score count (J-5.3); 天胡 is a self-draw on the dealer's 14th tile.
- J-6: ``P`` = pattern points after exclusions (J-7) and concealed doubling
  (J-6.3); ``G`` = 8 per exposed/added kong, 12 per concealed kong of the
  winner.  Payer ``p`` owes winner ``w`` ``min(2 (P + G), 400) + bonus`` if
  either is the dealer, else ``min(P + G, 200) + bonus`` (J-6.2); bonuses
  and the dealer's streak ``2 k`` are added after the cap (J-6.4).
  Self-draw: the other three pay; discard or robbed kong: the discarder
  pays each winner (J-6.5, J-3.4).  Scores sum to zero.

Decisions on ambiguous points (each is the default of this implementation)
-------------------------------------------------------------------------
- D1 (J-6.3): a witness is a set of groups of the chosen reading; a group is
  the winner's own when it is concealed (in hand, or a concealed kong) and,
  if it is the group the winning tile completes, the tile was self-drawn.
  A pattern that can be made in several ways is doubled when any of its
  witnesses is own.  Whole-hand patterns (P06 P17 P23 P24 P25 P30 P36 P38
  P42 P43 P44) use every group; P27 绝张子 uses the winning tile's group, so it
  is doubled exactly when self-drawn (the seed's 暗绝张子).
- D2 (P11/P16 "each"): P11 counts every own triplet; P16 pairs identical runs
  disjointly (``n`` equal runs give ``n // 2`` 姊妹付), as P16's row states since round 4.  Every other pattern
  counts at most once per hand (e.g. two 半龙 in two suits count once).
- D3 (P02, P27, P28 "single wait"): the waits of the 13 tiles before the win
  (:func:`caishen.sim.hand.waits`, standard and seven pairs), without kinds whose
  four copies the winner already holds in hand and melds.  Visible tiles do
  not shrink the wait list.
- D4 (P49 "听对子"): the winning tile completes the pair in the chosen
  reading (单钓); the hand may have had other waits.
- D5 (J-7): exclusions are decided on the patterns whose definition holds
  (before any exclusion), so the list's order does not matter; a pattern
  with 0 points is switched off (it neither scores nor excludes).
- D6 (J-5.3): readings and waits are compared by ``P`` (``G`` is the same for
  all); ties go to the lexicographically largest (pattern, points) list so
  the answer does not depend on enumeration order.
- D7 (P10 P22 P32 P45 "three"): at least three; the stronger four-form
  excludes it through J-7 (清四付, 清四对, 暗四坎, 大四喜).
- D8 (P47 with ``dihu="win_on_dealers_first_discard"`` or
  ``"dealer_ready_undeclared"``): needs the case key
  ``on_dealers_first_discard`` (the winning tile was the dealer's first
  discard), respectively ``dealer_ready_after_first_discard`` (the dealer
  was ready right after its first discard, 下叫; a dealer's hard
  declaration implies it), which the vector format does not have; each
  defaults to false.  The engine records both with each win (``wins[j].on_first``,
  ``wins[j].dealer_ready``: the dealer was offered 硬子 with its first discard,
  engine J2).
- D9: the "付付" family (P17, P36, P43) only applies to standard readings;
  P44 幺幺胡 adds to P36 付付幺 and P30 对对胡 (J-7 lists no such exclusion).
- D10 (J-6.4, J-6.5): a robbed kong is paid like a discard win: the robbed
  player pays, with the discard-win bonus.
- D11 (J-4.1, J-4.2, J-5.4, P18, engine decisions J1-J10): a case that play
  cannot produce is contradictory input: :func:`score` raises
  ``ValueError`` naming the contradiction, never scores it.  The complete
  list of such combinations of declaration, melds, first turn, replacement
  draw, win type and visible tiles (each checked in :func:`_check_playable`;
  everything else can arise and is scored):

  1. ``first_turn`` (天胡) by a seat other than the dealer (J-5.4).
  2. ``first_turn`` with a win type other than ``self_draw`` (J-5.4).
  3. ``first_turn`` with any meld, a concealed kong included: nobody has
     claimed yet, and a win after the dealer's own kong is on its
     replacement draw, not on the 14 dealt tiles (J9).
  4. ``first_turn`` with ``replacement_draw`` (same reason).
  5. ``first_turn`` with a declaration (``"jiating"`` or ``"hard"``): the
     dealer declares only together with a discard (J-4.1, J-4.2) and 天胡
     comes before its first discard.
  6. ``first_turn`` with ``visible`` tiles: nothing is discarded or melded
     before the dealer's first discard.
  7. ``replacement_draw`` with a win type other than ``self_draw`` (J-3.2).
  8. ``replacement_draw`` without a kong among the winner's melds (J-3.2).
  9. ``replacement_draw`` with ``declaration: "hard"``: a hard seat makes no
     kong after declaring (J-4.2); the only kongs a hard seat can hold are
     the dealer's concealed kongs made before its first discard, and a win
     on their replacement draw ends the hand before the declaration.
  10. ``declaration: "hard"`` by a non-dealer holding any meld: it declares
      at the deal, before any meld, and makes none afterwards (J-4.2).
  11. ``declaration: "hard"`` by the dealer holding a pong, an exposed or an
      added kong: before its first discard it can only make concealed kongs
      (J2), and after declaring none at all (J-4.2).
  12. ``on_dealers_first_discard`` on anything but a discard win on a tile
      the dealer discarded (P47 option ``dihu``).
  13. ``on_dealers_first_discard`` with any meld of the winner: only the
      dealer has had a turn.
  14. ``on_dealers_first_discard`` with ``declaration: "jiating"``: the
      winner has not discarded yet (a hard declaration at the deal is fine).
  15. ``on_dealers_first_discard`` with ``visible`` tiles: nothing else has
      been discarded or melded (concealed kongs stay hidden, J10).
  16. ``robbed_kong`` (J-3.3) where the winner holds a copy of the winning
      kind (concealed or in a meld): the robbed pong holds three copies and
      the robbed tile is the fourth.  Those three are implied: they count
      toward P27 visibility whether or not ``visible`` lists them (a
      ``visible`` count of 1..3 of the winning kind is read as part of the
      pong; 4 is a fifth copy).
  17. (counting) more than four copies of a kind among the concealed tiles,
      the melds, the winning tile, the visible tiles and, on a robbed kong,
      the robbed pong.
  18. (seats) a self-draw with a discarder, a discard or robbed-kong win
      without one, or the winner as its own discarder.
  19. (several winners of one discard, :func:`score_discard_winners`,
      J-3.4) winners that differ in the winning tile, the discarder, the
      dealer, the streak, the win type, ``on_dealers_first_discard`` or
      ``dealer_ready_after_first_discard``, or that together hold more than
      four copies of a kind (with the winning tile and, on a robbed kong,
      the robbed pong).
  20. ``dealer_ready_after_first_discard`` with ``first_turn``: 天胡 is won
      before the dealer's first discard (P47 option ``dihu``).

  Accepted although unusual, because play produces them: a hard dealer with
  concealed kongs (J2), also winning on a later discard or robbed kong; a
  hard seat winning on the dealer's first discard; a 架听 seat with any
  melds, replacement-draw wins and robbed kongs (it plays on, J-4.1); four
  concealed kongs of a hard dealer.
- D12 (J-6.3): a pong later extended to an added kong is claimed (not own);
  an exposed kong is claimed; a concealed kong is own and counts for P11.

Bounds on the integers that enter (no ``int64`` overflow anywhere downstream)
-------------------------------------------------------------------------------
- the ``streak`` of a case and of :func:`payment` / :func:`settle_self_draw`
  / :func:`settle_discard`: ``0..MAX_STREAK`` (``10**6``, J-2.4);
- ``P`` and ``G`` given to those functions: ``0..MAX_HAND_POINTS``
  (``10**12``);
- the options (:class:`JiatingRules`): pattern points, kong points, bonuses
  and ``streak_step`` ``0..MAX_POINTS_OPTION`` (``10**6``); ``dealer_factor``
  and ``concealed_factor`` ``1..MAX_FACTOR`` (100); ``dealer_cap`` and
  ``cap`` ``0..10**9`` (:data:`caishen.sim.rules.options.MAX_INT_OPTION`) or None;
  ``reserved_tiles`` ``0..82``.

Then ``P <= 54 * 10**6 * 100`` (fifty patterns, P11 at most four times, P16
twice), a payment is below ``1.6 * 10**12`` and every score of a hand is
below ``2**53`` (exact in ``int64`` and ``float64``).  A value outside its
bound is a ``ValueError`` naming it.

What the implementation simplifies
----------------------------------
- Nothing beyond the decisions above: every reading and wait is scored
  (J-5.3), by the kernels of :mod:`caishen.sim.rules.jiating.kernels`.
"""

from __future__ import annotations

import importlib

from caishen.sim.rules.base import RuleSet, register
from caishen.sim.rules.jiating.layout import (  # noqa: F401  (the public names of this package)
    DECL_HARD,
    DECL_READY,
    DECL_NONE,
    DECLARATION_CODES,
    DIHU_CODES,
    DIHU_DEALER_READY,
    DIHU_DEALER_READY_UNDECLARED,
    DIHU_DEALERS_FIRST_DISCARD,
    MAX_FACTOR,
    MAX_HAND_POINTS,
    MAX_POINTS_OPTION,
    MAX_STREAK,
    N_PARAMS,
    N_PATTERN_SLOTS,
    P_BONUS_DISCARD,
    P_BONUS_DISCARD_DEALER,
    P_BONUS_SELF_DRAW,
    P_BONUS_SELF_DRAW_DEALER,
    P_CAP,
    P_CONCEALED_FACTOR,
    P_DEALER_CAP,
    P_DEALER_FACTOR,
    P_DIHU,
    P_KONG_CONCEALED_POINTS,
    P_KONG_EXPOSED_POINTS,
    P_PASSED_PONG_SCOPE,
    P_RESERVED_TILES,
    P_STREAK_STEP,
    PONG_SCOPE_ANY,
    PONG_SCOPE_CODES,
    PONG_SCOPE_SAME_KIND,
    WIN_DISCARD,
    WIN_ROBBED_KONG,
    WIN_SELF_DRAW,
    WIN_TYPES,
)
from caishen.sim.rules.jiating.options import DEFAULT_RULES, PATTERN_INDEX, JiatingRules  # noqa: F401
from caishen.sim.rules.jiating.tables import (  # noqa: F401
    DEFAULT_DOUBLED,
    DEFAULT_EXCLUSIONS,
    DEFAULT_POINTS,
    PATTERN_IDS,
    PATTERN_NAMES,
)
from caishen.sim.rules.codes import PAYMENTS_NONE, POINTS_PATTERNS, WIN_KERNEL_SHAPE

#: the turn-structure facts of Jiating (caishen.sim.rules.base.FACT_KEYS; the engine params)
FACTS = {
    "joker": -1,  # J-1.1 no jokers
    "chow": 0,  # J-3.1 no chow
    "rob_kong": 1,  # J-3.3 an added kong can be robbed (exposed and concealed kongs never are)
    "circle_ban": 0,
    "force_joker_min": 0,
    "force_joker_shape": 0,
    "passed_pong": 1,  # J-3.6 (option passed_pong_scope overrides: same_kind 1, any 2)
    "passed_pong_claim_clears": 0,  # J-3.6 "until after their own next draw": a pong does not end it
    "passed_win": 1,  # J-3.5
    "kong_after_claim": 0,  # engine J3 (as Kaihua's engine E2): after a pong, discard
    "first_dealer_random": 1,  # J-2.2
    "declare": 1,  # J-4.1
    "hard": 1,  # J-4.2
    # facts that are options in Kaihua
    "multiple_ron": 1,  # J-3.4 一炮多响
    "swap_call_max_chows": 0,  # no chow, no swap call
    "dealer_rotation": "winner_stays",  # J-2.3 (a 流局 keeps the dealer too)
    "discard_win": 1,  # J-5.2
}

#: the rule set "jiating", registered (caishen.sim.rules.base)
RULESET = register(RuleSet(
    name="jiating",
    title="Jiating 架听",
    options=JiatingRules,
    facts=FACTS,
    win_kernel=WIN_KERNEL_SHAPE,  # J-5.1 any complete hand (turn._evaluate_win)
    payments=PAYMENTS_NONE,  # J-6: the engine pays nothing (engine J11); the recorded wins are scored after the hand
    points=POINTS_PATTERNS,  # J-5 .. J-8 each recorded win scored and paid: points._hand_points
    points_tables="caishen.sim.rules.jiating.points:points_tables",
    reward_scale=40.0,  # about one sd of a seat's points per hand (seed 3: 38 over 6,000 hands)
    finish="caishen.sim.rules.jiating.records:finish_records",
    columns="caishen.sim.rules.jiating.records:COLUMNS",
    score="caishen.sim.rules.jiating.scoring:score",
    plain_case={"streak": 0, "declaration": "none", "first_turn": False, "visible": ""},
    analysis="caishen.sim.rules.jiating.analysis:ANALYSIS",
    words="caishen.sim.rules.jiating.words:WORDS",
    doc="jiating.md",
))

#: names of the scoring modules, importable from this package (imported on first use)
_LAZY = {
    "evaluate": "scoring", "score": "scoring", "score_discard_winners": "scoring", "kong_points": "scoring",
    "_parse_case": "scoring", "_parse_discard_winners": "scoring", "_check_playable": "scoring",
    "payment": "payments", "settle_self_draw": "payments", "settle_discard": "payments", "_payments": "payments",
    "score_win": "kernels", "WinTiming": "kernels", "JiatingWin": "kernels", "ScoredGroup": "kernels", "kernel_tables": "kernels",
}

__all__ = ["RULESET", "FACTS", "JiatingRules", "DEFAULT_RULES", "PATTERN_IDS", "PATTERN_NAMES",
           *(n for n in _LAZY if not n.startswith("_"))]


def __getattr__(name: str):
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    return getattr(importlib.import_module(f"{__name__}.{module}"), name)
