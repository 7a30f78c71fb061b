"""Kaihua mahjong (开化麻将) as one rule set: options, hand types, payments, records.

Binding spec: ``shared/rules/kaihua.md`` (rule IDs ``K-...``), defined for
this project in ``docs/rules/kaihua.md``.  This package registers the rule
set ``"kaihua"`` (:data:`RULESET`, see :mod:`caishen.sim.rules.base`) and is
the one place where Kaihua's hand types and payments live:

=============  ============================================================
module         what it owns
=============  ============================================================
``options``    :class:`KaihuaRules` (every K-rule option), the params
               layout ``P_*`` its kernels read, the win types, the
               hand-type flag bits ``FLAG_*``
``kernels``    the numba kernels the engine calls: :func:`_evaluate_win`
               (K-2.4 .. K-2.6, K-6, K-7.1: hand types and the joker
               rules), :func:`_payments` (K-8, K-9.3), :func:`_is_baotou_wait`
               (K-2.5)
``scoring``    one scoring-vector case (``caishen score``): parse and check
               it (:data:`IMPOSSIBLE_CASES`), then the very same kernels, so
               ``caishen score`` and the simulator can never disagree
``records``    the records contract of a Kaihua hand (K-10)
``words``      its records read as words (hand types by name) and a win's
               score explained (exponents, caps, payments)
=============  ============================================================

The engine reaches the kernels through :mod:`caishen.sim.rules.kernels`
(``WIN_KERNEL_JOKER``, ``PAYMENTS_EXPONENT``); its turn structure is the
engine's, shaped by :data:`FACTS` (the 财神 joker K-2.1, chow, robbing, the
飘 ban K-9.2, the forced 飘 K-2.4 / K-2.5, passed pong K-4.4).

The rules in brief
------------------
- K-1: 136 tiles, four seats, turn order seat+1; normal draws from the wall's
  head, kong replacement draws from its tail.
- K-2: the four 白 (``5z``, index 31) are the 财神 (joker), wild inside the
  concealed tiles only.  A discarded 财神 can never be claimed (K-2.2) and is
  never part of a meld (K-2.3).  3 or 4 财神 in the 14 tiles cannot win
  (K-2.4); a 爆头-shape hand that draws a 财神 cannot win on it (K-2.5); with
  exactly 2 财神 the hand needs a hand-type exponent of at least
  ``two_caishen_min_exponent`` (K-2.6: 爆头, the 七对 family and kong links
  count, 清一色 and 飘 links do not).
- K-3: dealer rotation, the reserved tail of ``reserved_tiles`` tiles.
- K-4/K-5: claims, priority, passed pong, swap call, kongs, robbing an added
  kong (K-5.5).  No points for kongs (K-5.6).
- K-6: a hand's value is ``2**E``; exponents add (K-6.6), the best reading
  counts.  平胡 0 (K-6.1); 爆头 (敲响) +1, self-draw only (K-6.2); 七对子 +1,
  清七对 +1, 豪华 +1 per four of a kind, 七子爆头 +1, 去不去 floor 3 (K-6.3);
  清一色 +1 (K-6.4); on a self-draw win + one per chain link (kong or 飘财,
  K-6.5).
- K-7: a win on a discard (放冲) needs ``discard_win``, at most
  ``discard_win_max_caishen`` (1) 财神, and a hand that is not 爆头 /
  七子爆头 (K-7.1; option ``baotou_discard_win``, D6);
  robbing a kong is a discard-style win (K-7.2).
- K-8: share ``base * 2**E`` with ``base`` 4 if loser or winner is the dealer,
  else 2 (K-8.1); self-draw: everybody pays their share (K-8.2); discard win
  and robbed kong: the discarder pays all three shares (K-8.3,
  ``discard_win_payment``).  Scores sum to zero (K-8.5).
- K-9: 飘财 (discarding a 财神) opens a circle until the player's next draw;
  if somebody else wins inside it, the 飘 player pays ``failed_piao_factor``
  times their self-draw share in total (K-9.3).

Decisions on ambiguous points (each is the default of this implementation)
-------------------------------------------------------------------------
- D1 (K-6.3 豪华, whose sentence "a 财神 never completes a four for 豪华" states it
  since round 4): only a *natural* four of a kind (four identical non-财神
  tiles) counts as 豪华; a 财神 never completes a 豪华 four.  The seed says
  "手中有四张一样的牌" (four identical tiles), 去不去 asks for a natural four,
  and otherwise every seven pairs with two 财神 would be 豪华 (the 财神 pair
  can always stand for a kind already paired).
- D2 (K-6.3 七子爆头): the 13 concealed tiles before a self-draw are 6 pairs
  (a pair may use one 财神) plus a lone 财神; tested as "the 13 tiles plus one
  tile of an absent kind are seven pairs".  It is a property of the 13 tiles,
  like 爆头, so any non-财神 draw completes it.
- D3 (K-2.5 with 七子爆头): a hand in 七子爆头 shape that draws a 财神 cannot
  win on that draw either (the seed: "形成爆头牌型时,发现又摸到张财神，也强制
  飘财"; 七子爆头 is the seven-pairs 爆头, K-6.3 calls its +1 "the 爆头 bonus").
- D4 (K-6.3 去不去): the 13 tiles before the win hold no 财神, at least one
  natural four of a kind, and are six pairs plus a single (a four is two
  pairs); the winning tile completes seven pairs (a natural tile pairing the
  single, or a drawn 财神).  The seven-pairs exponent is then at least 3
  (``max``, not ``+``): with a natural completion it is already 1+1+1 = 3
  (清七对 + 豪华), so the floor only matters for a 财神 completion (2 -> 3).
- D5 (K-6.4 清一色): every non-财神 tile of the 14, melds included, is of one
  suit; 财神 are allowed; honors break it.  It adds to any reading, seven
  pairs included (the seed's 清一色七对子).
- D6 (K-7.1, option ``baotou_discard_win``): by default (``"never"``) a hand
  whose 13 tiles before the win are in 爆头 shape (K-6.2) or 七子爆头 shape
  (D2) cannot win on a discard or a robbed kong at all, even where the 14
  tiles could also be read as a plain 平胡 (the 财神 pairing the discard).
  Under ``"other_readings"`` such a discard (or robbed-kong) win is allowed
  and scored by its best reading without the 爆头 / 七子爆头 bonus
  (``123m456m789p234s5z`` + a discarded ``2s`` is a 平胡, exponent 0; six
  pairs + a lone 财神 + a discard is a 七对子, exponent 1); every other gate
  stays (``discard_win_max_caishen``, K-2.2, K-2.4, K-2.6, ``discard_win``).
- D7 (K-7.2): robbing a kong is a discard-style win, so every K-7.1
  condition applies to it, the ``discard_win`` switch included (the kernel
  sees only ``self_draw=False`` for both).  A 财神 can never be won on a
  discard (K-2.2).
- D8 (K-6.5 ``piao_requires_baotou``): "the win is 爆头" means the counted
  reading has a 爆头 bonus: 爆头 (K-6.2) or 七子爆头 (K-6.3).
- D9 (K-6.5): chain links count only on a self-draw win (a replacement draw
  is a self-draw).  ``replacement_draw`` adds nothing by itself: the kong that
  caused it is the last chain link (杠上开花 = one kong link = x2).
  :func:`_evaluate_win` returns the 飘 and kong links its chosen reading
  counted (0 on a discard win; 飘 links 0 under ``piao_requires_baotou``
  when that reading is not 爆头); the engine's record shows exactly these
  (K-9.4, K-10), never the links that merely existed.
- D10 (K-2.6): the gate compares the uncapped hand-type exponent (爆头, the
  七对 family with its 去不去 floor, kong links) with
  ``two_caishen_min_exponent``; the reading is then chosen among legal ones.
- D11 (K-6): readings are compared by their uncapped exponent; on a tie the
  standard reading is reported (the score is the same).  ``max_exponent``
  caps the chosen exponent.

What the implementation simplifies
----------------------------------
- The dice and the wall break (K-1.3) are not modelled: a uniformly shuffled
  wall is the same distribution.
- Flags report the chosen reading only; a case that is not a win reports no
  flags and no exponent.
"""

from __future__ import annotations

from caishen.sim.rules.base import RuleSet, register
from caishen.sim.rules.kaihua.kernels import _evaluate_win, _is_baotou_wait, _payments  # noqa: F401
from caishen.sim.rules.kaihua.options import (  # noqa: F401  (the options, codes and flags)
    BAOTOU_DISCARD_CODES,
    BAOTOU_DISCARD_NEVER,
    BAOTOU_DISCARD_OTHER_READINGS,
    FLAG_BAOTOU,
    FLAG_CHAIN,
    FLAG_HAOHUA,
    FLAG_NAMES,
    FLAG_JOKER_LINK,
    FLAG_PINGHU,
    FLAG_QIDUI,
    FLAG_QIDUI_BAOTOU,
    FLAG_QIDUI_PURE,
    FLAG_QINGYISE,
    FLAG_QUBUQU,
    N_PARAMS,
    PAYMENT_ALL_THREE,
    PAYMENT_CODES,
    PAYMENT_OWN_SHARE,
    P_BAOTOU_DISCARD_WIN,
    P_DEALER_ROTATION,
    P_DISCARD_WIN,
    P_DISCARD_WIN_MAX_CAISHEN,
    P_DISCARD_WIN_PAYMENT,
    P_FAILED_PIAO_FACTOR,
    P_FAILED_PIAO_POINTS,
    P_MAX_EXPONENT,
    P_MULTIPLE_RON,
    P_PIAO_REQUIRES_BAOTOU,
    P_RESERVED_TILES,
    P_SWAP_CALL_MAX_CHOWS,
    P_TWO_CAISHEN_MIN_EXPONENT,
    ROTATION_CODES,
    ROTATION_NEXT_AFTER_WIN,
    ROTATION_WINNER_STAYS,
    WIN_DISCARD,
    WIN_ROBBED_KONG,
    WIN_SELF_DRAW,
    WIN_TYPES,
    KaihuaRules,
    flag_names,
)
from caishen.sim.rules.kaihua.scoring import IMPOSSIBLE_CASES, MAX_TILE_STRING, _parse_case, score  # noqa: F401
from caishen.sim.rules.codes import PAYMENTS_EXPONENT, POINTS_ENGINE, WIN_KERNEL_JOKER
from caishen.sim.tiles import CAISHEN

#: the turn-structure facts of Kaihua (caishen.sim.rules.base.FACT_KEYS; the engine params)
FACTS = {
    "joker": CAISHEN,  # K-2.1
    "chow": 1,  # K-4.2
    "rob_kong": 1,  # K-5.5
    "circle_ban": 1,  # K-9.2
    "force_joker_min": 3,  # K-2.4
    "force_joker_shape": 1,  # K-2.5
    "passed_pong": 1,  # K-4.4 same kind
    "passed_pong_claim_clears": 1,  # K-4.4 "until their own next turn"
    "passed_win": 0,
    "kong_after_claim": 0,  # K-4.1 "after a chow or pong they must discard"
    "first_dealer_random": 0,  # K-3.2
    "declare": 0,
    "hard": 0,
}

#: the rule set "kaihua", registered (caishen.sim.rules.base)
RULESET = register(RuleSet(
    name="kaihua",
    title="Kaihua 开化 (财神 joker)",
    options=KaihuaRules,
    facts=FACTS,
    win_kernel=WIN_KERNEL_JOKER,  # K-6, K-7 (joker rules, exponent, flags): kernels._evaluate_win
    payments=PAYMENTS_EXPONENT,  # K-8 paid inside the engine: kernels._payments
    points=POINTS_ENGINE,  # a hand's points are the engine's payments (K-8)
    reward_scale=8.0,  # about one sd of a seat's points per hand (seed 3: 7.2 over 20,000 hands)
    field_columns="caishen.sim.rules.kaihua.records:FIELD_COLUMNS",  # its 财神 / 飘 column names (K-10)
    columns="caishen.sim.rules.kaihua.records:COLUMNS",
    score="caishen.sim.rules.kaihua.scoring:score",
    plain_case={"chain": [], "piao_circle": []},
    analysis="caishen.sim.rules.kaihua.analysis:ANALYSIS",
    words="caishen.sim.rules.kaihua.words:WORDS",
    doc="kaihua.md",
))
