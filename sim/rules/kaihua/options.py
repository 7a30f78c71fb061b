"""Kaihua's rule options (:class:`KaihuaRules`), the params layout, win types and hand-type flags.

Each option is declared once (:func:`caishen.sim.rules.options.option`: default,
bounds, rule ID, doc line, slot ``P_*``); ``KaihuaRules.params()`` packs
them as ``int64[N_PARAMS]``, the array the kernels of :mod:`caishen.sim.rules.kaihua.kernels`
read; ``WIN_*`` are the win types (shared by every rule set and the engine);
``FLAG_*`` the hand-type bits of a win (K-6, K-10), named as the scoring
vectors name them (:func:`flag_names`).
"""

from __future__ import annotations

import dataclasses
from typing import Literal

from caishen.sim.rules.codes import FLAG_CHAIN, FLAG_JOKER_LINK, WIN_DISCARD, WIN_ROBBED_KONG, WIN_SELF_DRAW, WIN_TYPES  # noqa: F401
from caishen.sim.rules.options import Options, option


#: K-2.6 minimum hand-type exponent with exactly two 财神 (0 disables the gate)
P_TWO_CAISHEN_MIN_EXPONENT = 0
#: K-3.3 dealer rotation, one of ROTATION_*
P_DEALER_ROTATION = 1
#: K-3.4 tiles at the wall's end that are never drawn
P_RESERVED_TILES = 2
#: K-4.3 1 if every claimant may win on one discard, 0 = head bump
P_MULTIPLE_RON = 3
#: K-4.5 swap call allowed on a player's first this-many chows
P_SWAP_CALL_MAX_CHOWS = 4
#: K-6.5 1 if 飘财 links count only when the win is 爆头
P_PIAO_REQUIRES_BAOTOU = 5
#: K-6.6 cap on the exponent, -1 = none
P_MAX_EXPONENT = 6
#: K-7.1 1 if wins on a discard (and robbed kongs, K-7.2) are allowed
P_DISCARD_WIN = 7
#: K-8.3 who pays a discard win, one of PAYMENT_*
P_DISCARD_WIN_PAYMENT = 8
#: K-9.3 a failed 飘 player's self-draw share counts this many times in total
P_FAILED_PIAO_FACTOR = 9
#: K-7.1 a discard win on a 爆头-shaped hand, one of BAOTOU_DISCARD_*
P_BAOTOU_DISCARD_WIN = 10
#: K-7.1 most 财神 a hand may hold to win on a discard (or a robbed kong, K-7.2)
P_DISCARD_WIN_MAX_CAISHEN = 11
#: K-9.3 variant: the fixed points a failed 飘 player pays instead of the extra shares, -1 = none (the shares)
P_FAILED_PIAO_POINTS = 12
N_PARAMS = 13

#: K-3.3 codes for ``dealer_rotation``
ROTATION_NEXT_AFTER_WIN = 0
ROTATION_WINNER_STAYS = 1
ROTATION_CODES = {"next_after_win": ROTATION_NEXT_AFTER_WIN, "winner_stays": ROTATION_WINNER_STAYS}
#: K-8.3 codes for ``discard_win_payment``
PAYMENT_ALL_THREE = 0
PAYMENT_OWN_SHARE = 1
PAYMENT_CODES = {"all_three": PAYMENT_ALL_THREE, "own_share": PAYMENT_OWN_SHARE}
#: K-7.1 codes for ``baotou_discard_win``
BAOTOU_DISCARD_NEVER = 0
BAOTOU_DISCARD_OTHER_READINGS = 1
BAOTOU_DISCARD_CODES = {"never": BAOTOU_DISCARD_NEVER, "other_readings": BAOTOU_DISCARD_OTHER_READINGS}

# hand-type flag bits (the third value returned by _evaluate_win)
FLAG_PINGHU = 1 << 0  #: 平胡: standard reading with nothing else (K-6.1)
FLAG_BAOTOU = 1 << 1  #: 爆头 / 敲响 (K-6.2)
FLAG_QIDUI = 1 << 2  #: 七对子 (K-6.3)
FLAG_QIDUI_PURE = 1 << 3  #: 清七对, no 财神 (K-6.3)
FLAG_QIDUI_BAOTOU = 1 << 4  #: 七子爆头 / 七客 (K-6.3)
FLAG_HAOHUA = 1 << 5  #: 豪华, at least one natural four read as two pairs (K-6.3)
FLAG_QUBUQU = 1 << 6  #: 去不去 (K-6.3)
FLAG_QINGYISE = 1 << 7  #: 清一色 (K-6.4)
# FLAG_CHAIN (1 << 8, a chain link counted, K-6.5) and FLAG_JOKER_LINK (1 << 9, a 飘财 link counted, K-9.1) are the
# bits the engine reads: caishen.sim.rules.codes
#: flag bit -> the flag name used by the scoring vectors
FLAG_NAMES = {
    FLAG_PINGHU: "pinghu",
    FLAG_BAOTOU: "baotou",
    FLAG_QIDUI: "qidui",
    FLAG_QIDUI_PURE: "qidui_pure",
    FLAG_QIDUI_BAOTOU: "qidui_baotou",
    FLAG_HAOHUA: "haohua",
    FLAG_QUBUQU: "qubuqu",
    FLAG_QINGYISE: "qingyise",
    FLAG_CHAIN: "chain",
    FLAG_JOKER_LINK: "piao",
}


def flag_names(flags: int) -> list[str]:
    """Sorted vector flag names of a flag bit set (``FLAG_*``)."""
    return sorted(name for bit, name in FLAG_NAMES.items() if int(flags) & bit)


@dataclasses.dataclass(frozen=True)
class KaihuaRules(Options):
    """Kaihua rule options (``shared/rules/kaihua.md``); defaults are the spec's.

    Each field is one :func:`~caishen.sim.rules.options.option` declaration
    (default, rule ID, bounds, doc line, kernel slot): :meth:`declarations`
    lists them, ``docs/rules/kaihua.md``'s options table shows them.

    Raises ``ValueError`` naming a bad option or value.
    """

    N_PARAMS = N_PARAMS

    two_caishen_min_exponent: int = option(
        1, "minimum hand-type exponent of a win holding exactly two 财神; 0 disables the gate",
        rule="K-2.6", lo=0, hi=8, slot=P_TWO_CAISHEN_MIN_EXPONENT)
    dealer_rotation: Literal["next_after_win", "winner_stays"] = option(
        "next_after_win", "next_after_win (轮庄) or winner_stays (the dealer keeps the deal when the dealer wins)",
        rule="K-3.3", slot=P_DEALER_ROTATION, codes=ROTATION_CODES)
    reserved_tiles: int = option(20, "tiles at the end of the wall that are never drawn", rule="K-3.4", lo=0, hi=82,
                                 slot=P_RESERVED_TILES)
    multiple_ron: bool = option(False, "every claimant may win on one discard (False: head bump)", rule="K-4.3",
                                slot=P_MULTIPLE_RON)
    swap_call_max_chows: int = option(2, "the swap call is allowed on a player's first this-many chows",
                                      rule="K-4.5", lo=0, hi=4, slot=P_SWAP_CALL_MAX_CHOWS)
    piao_requires_baotou: bool = option(False, "飘财 links count only on a 爆头 win", rule="K-6.5",
                                        slot=P_PIAO_REQUIRES_BAOTOU)
    max_exponent: int | None = option(None, "cap on the exponent E; None = no cap", rule="K-6.6", lo=0,
                                      slot=P_MAX_EXPONENT)
    discard_win: bool = option(True, "wins on a discard (and on a robbed kong, K-7.2) are allowed", rule="K-7.1",
                               slot=P_DISCARD_WIN)
    discard_win_payment: Literal["all_three", "own_share"] = option(
        "all_three", "all_three (the discarder pays the three shares) or own_share (only their own)",
        rule="K-8.3", slot=P_DISCARD_WIN_PAYMENT, codes=PAYMENT_CODES)
    failed_piao_factor: int = option(2, "a failed 飘 player's self-draw share counts this many times in total",
                                     rule="K-9.3", lo=1, hi=16, slot=P_FAILED_PIAO_FACTOR)
    baotou_discard_win: Literal["never", "other_readings"] = option(
        "never", "never (a 爆头 / 七子爆头-shaped hand never wins on a discard) or other_readings (D6)",
        rule="K-7.1", slot=P_BAOTOU_DISCARD_WIN, codes=BAOTOU_DISCARD_CODES)
    discard_win_max_caishen: int = option(1, "the most 财神 a hand may hold to win on a discard or robbed kong",
                                          rule="K-7.1", lo=0, hi=2, slot=P_DISCARD_WIN_MAX_CAISHEN)
    failed_piao_points: int | None = option(
        None, "a study variant, not in the original Chinese rule documents: a failed 飘 player pays the winner "
        "this many points instead of failed_piao_factor's extra shares; None = the shares", rule="K-9.3", lo=0, hi=1_000_000,
        slot=P_FAILED_PIAO_POINTS)
