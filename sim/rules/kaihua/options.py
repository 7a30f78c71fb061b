"""Kaihua's rule options (:class:`KaihuaRules`), the params layout, win types and hand-type flags.

``KaihuaRules.params()`` packs the options as ``int64[N_PARAMS]`` (slots
``P_*``), the array the kernels of :mod:`caishen.sim.rules.kaihua.kernels`
read; ``WIN_*`` are the win types (shared by every rule set and the engine);
``FLAG_*`` the hand-type bits of a win (K-6, K-10), named as the scoring
vectors name them (:func:`flag_names`).
"""

from __future__ import annotations

import dataclasses
from typing import Literal

import numpy as np

from caishen.sim.rules.codes import FLAG_CHAIN, FLAG_PIAO, WIN_DISCARD, WIN_ROBBED_KONG, WIN_SELF_DRAW, WIN_TYPES  # noqa: F401
from caishen.sim.rules.options import Options
from caishen.sim.validate import check_int


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
N_PARAMS = 12

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
# FLAG_CHAIN (1 << 8, a chain link counted, K-6.5) and FLAG_PIAO (1 << 9, a 飘财 link counted, K-9.1) are the
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
    FLAG_PIAO: "piao",
}


def flag_names(flags: int) -> list[str]:
    """Sorted vector flag names of a flag bit set (``FLAG_*``)."""
    return sorted(name for bit, name in FLAG_NAMES.items() if int(flags) & bit)


@dataclasses.dataclass(frozen=True)
class KaihuaRules(Options):
    """Kaihua rule options (``shared/rules/kaihua.md``); defaults are the spec's.

    - ``two_caishen_min_exponent`` (K-2.6): minimum hand-type exponent of a
      win holding exactly two 财神; 0 disables the gate.  Range 0..8.
    - ``dealer_rotation`` (K-3.3): ``"next_after_win"`` (轮庄) or
      ``"winner_stays"`` (the dealer keeps the deal when the dealer wins).
    - ``reserved_tiles`` (K-3.4): tiles at the end of the wall that are never
      drawn.  Range 0..82 (83 tiles are left after the deal).
    - ``multiple_ron`` (K-4.3): every claimant may win on one discard
      (False: head bump, first in turn order).
    - ``swap_call_max_chows`` (K-4.5): the swap call is allowed on a player's
      first this-many chows.  Range 0..4.
    - ``piao_requires_baotou`` (K-6.5): 飘财 links count only on a 爆头 win.
    - ``max_exponent`` (K-6.6): cap on ``E``; None = no cap.  Range >= 0.
    - ``discard_win`` (K-7.1): wins on a discard (and on a robbed kong, K-7.2)
      are allowed.
    - ``discard_win_payment`` (K-8.3): ``"all_three"`` (the discarder pays
      the three shares) or ``"own_share"`` (only their own share).
    - ``failed_piao_factor`` (K-9.3): a failed 飘 player's self-draw share
      counts this many times in total (1 disables).  Range 1..16.
    - ``baotou_discard_win`` (K-7.1, D6): ``"never"`` (a hand whose 13
      tiles are in 爆头 / 七子爆头 shape never wins on a discard or a robbed
      kong) or ``"other_readings"`` (it may, scored by its best reading
      without the 爆头 / 七子爆头 bonus; every other gate stays).
    - ``discard_win_max_caishen`` (K-7.1, ambiguity 7): the most 财神 a hand
      may hold to win on a discard or a robbed kong; 2 lets a two-财神 hand
      that passes K-2.6 (七对 with two 财神) win on one.  Range 0..2 (three
      or four never win, K-2.4).

    Raises ``ValueError`` naming a bad option or value.
    """

    two_caishen_min_exponent: int = 1
    dealer_rotation: Literal["next_after_win", "winner_stays"] = "next_after_win"
    reserved_tiles: int = 20
    multiple_ron: bool = False
    swap_call_max_chows: int = 2
    piao_requires_baotou: bool = False
    max_exponent: int | None = None
    discard_win: bool = True
    discard_win_payment: Literal["all_three", "own_share"] = "all_three"
    failed_piao_factor: int = 2
    baotou_discard_win: Literal["never", "other_readings"] = "never"
    discard_win_max_caishen: int = 1

    def _check(self) -> None:
        def in_range(name: str, lo: int, hi: int | None = None) -> None:
            check_int(f"option {name}", getattr(self, name), lo, hi)

        in_range("two_caishen_min_exponent", 0, 8)
        in_range("reserved_tiles", 0, 82)
        in_range("swap_call_max_chows", 0, 4)
        in_range("failed_piao_factor", 1, 16)
        in_range("discard_win_max_caishen", 0, 2)
        if self.max_exponent is not None:
            in_range("max_exponent", 0, None)

    def params(self) -> np.ndarray:
        """The options packed for the kernels: ``int64[N_PARAMS]``, indexed by ``P_*``.

        Booleans are 0/1, Literal choices their ``ROTATION_*`` / ``PAYMENT_*`` /
        ``BAOTOU_DISCARD_*`` codes, ``max_exponent=None`` is -1.
        """
        p = np.zeros(N_PARAMS, dtype=np.int64)
        p[P_TWO_CAISHEN_MIN_EXPONENT] = self.two_caishen_min_exponent
        p[P_DEALER_ROTATION] = ROTATION_CODES[self.dealer_rotation]
        p[P_RESERVED_TILES] = self.reserved_tiles
        p[P_MULTIPLE_RON] = int(self.multiple_ron)
        p[P_SWAP_CALL_MAX_CHOWS] = self.swap_call_max_chows
        p[P_PIAO_REQUIRES_BAOTOU] = int(self.piao_requires_baotou)
        p[P_MAX_EXPONENT] = -1 if self.max_exponent is None else self.max_exponent
        p[P_DISCARD_WIN] = int(self.discard_win)
        p[P_DISCARD_WIN_PAYMENT] = PAYMENT_CODES[self.discard_win_payment]
        p[P_FAILED_PIAO_FACTOR] = self.failed_piao_factor
        p[P_BAOTOU_DISCARD_WIN] = BAOTOU_DISCARD_CODES[self.baotou_discard_win]
        p[P_DISCARD_WIN_MAX_CAISHEN] = self.discard_win_max_caishen
        return p
