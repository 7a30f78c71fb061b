"""Kaihua mahjong (开化麻将): rule options, win evaluation and payments.

This module is the one place where Kaihua's hand types and payments live
(binding spec: ``shared/rules/kaihua.md``; rule IDs ``K-...`` below refer to
it).  The engine calls the numba kernels :func:`_evaluate_win` and
:func:`_payments`; :func:`score` runs the very same kernels on one scoring
vector, so ``caishen score`` and the simulator can never disagree.

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
- K-7: a win on a discard (放冲) needs ``discard_win``, at most one 财神, and a
  hand that is not 爆头 / 七子爆头 (K-7.1); robbing a kong is a discard-style
  win (K-7.2).
- K-8: share ``base * 2**E`` with ``base`` 4 if loser or winner is the dealer,
  else 2 (K-8.1); self-draw: everybody pays their share (K-8.2); discard win
  and robbed kong: the discarder pays all three shares (K-8.3,
  ``discard_win_payment``).  Scores sum to zero (K-8.5).
- K-9: 飘财 (discarding a 财神) opens a circle until the player's next draw;
  if somebody else wins inside it, the 飘 player pays ``failed_piao_factor``
  times their self-draw share in total (K-9.3).

Decisions on ambiguous points (each is the default of this implementation)
-------------------------------------------------------------------------
- D1 (K-6.3 豪华): only a *natural* four of a kind (four identical non-财神
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
- D6 (K-7.1 literal): a hand whose 13 tiles before the win are in 爆头 shape
  (K-6.2) or 七子爆头 shape (D2) cannot win on a discard or a robbed kong at
  all, even where the 14 tiles could also be read as a plain 平胡 (the 财神
  pairing the discard).
- D7 (K-7.2): robbing a kong is a discard-style win, so every K-7.1
  condition applies to it, the ``discard_win`` switch included (the kernel
  sees only ``self_draw=False`` for both).  A 财神 can never be won on a
  discard (K-2.2).
- D8 (K-6.5 ``piao_requires_baotou``): "the win is 爆头" means the counted
  reading has a 爆头 bonus: 爆头 (K-6.2) or 七子爆头 (K-6.3).
- D9 (K-6.5): chain links count only on a self-draw win (a replacement draw
  is a self-draw).  ``replacement_draw`` adds nothing by itself: the kong that
  caused it is the last chain link (杠上开花 = one kong link = x2).
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

import dataclasses
from typing import Literal

import numpy as np
from numba import njit

from sim.rules.options import Options
from sim.tiles import CAISHEN

# ---------------------------------------------------------------------------
# params layout (KaihuaRules.params() -> int64[N_PARAMS])
# ---------------------------------------------------------------------------
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
N_PARAMS = 10

#: K-3.3 codes for ``dealer_rotation``
ROTATION_NEXT_AFTER_WIN = 0
ROTATION_WINNER_STAYS = 1
ROTATION_CODES = {"next_after_win": ROTATION_NEXT_AFTER_WIN, "winner_stays": ROTATION_WINNER_STAYS}
#: K-8.3 codes for ``discard_win_payment``
PAYMENT_ALL_THREE = 0
PAYMENT_OWN_SHARE = 1
PAYMENT_CODES = {"all_three": PAYMENT_ALL_THREE, "own_share": PAYMENT_OWN_SHARE}

# win types (the engine's records and _payments use these codes)
WIN_SELF_DRAW = 0
WIN_DISCARD = 1
WIN_ROBBED_KONG = 2
WIN_TYPES = {"self_draw": WIN_SELF_DRAW, "discard": WIN_DISCARD, "robbed_kong": WIN_ROBBED_KONG}

# hand-type flag bits (the third value returned by _evaluate_win)
FLAG_PINGHU = 1 << 0  #: 平胡: standard reading with nothing else (K-6.1)
FLAG_BAOTOU = 1 << 1  #: 爆头 / 敲响 (K-6.2)
FLAG_QIDUI = 1 << 2  #: 七对子 (K-6.3)
FLAG_QIDUI_PURE = 1 << 3  #: 清七对, no 财神 (K-6.3)
FLAG_QIDUI_BAOTOU = 1 << 4  #: 七子爆头 / 七客 (K-6.3)
FLAG_HAOHUA = 1 << 5  #: 豪华, at least one natural four read as two pairs (K-6.3)
FLAG_QUBUQU = 1 << 6  #: 去不去 (K-6.3)
FLAG_QINGYISE = 1 << 7  #: 清一色 (K-6.4)
FLAG_CHAIN = 1 << 8  #: at least one chain link counted (K-6.5)
FLAG_PIAO = 1 << 9  #: at least one 飘财 link counted (K-6.5, K-9.1)
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

    def _check(self) -> None:
        def in_range(name: str, lo: int, hi: int | None) -> None:
            v = getattr(self, name)
            if v < lo or (hi is not None and v > hi):
                bound = f"{lo}..{hi}" if hi is not None else f">= {lo}"
                raise ValueError(f"option {name}={v!r}: must be {bound}")

        in_range("two_caishen_min_exponent", 0, 8)
        in_range("reserved_tiles", 0, 82)
        in_range("swap_call_max_chows", 0, 4)
        in_range("failed_piao_factor", 1, 16)
        if self.max_exponent is not None:
            in_range("max_exponent", 0, None)

    def params(self) -> np.ndarray:
        """The options packed for the kernels: ``int64[N_PARAMS]``, indexed by ``P_*``.

        Booleans are 0/1, Literal choices their ``ROTATION_*`` / ``PAYMENT_*``
        codes, ``max_exponent=None`` is -1.
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
        return p


# ---------------------------------------------------------------------------
# payments (K-8, K-9.3)
# ---------------------------------------------------------------------------
@njit(cache=True)
def _payments(dealer, winner, win_type, discarder, exponent, piao_circle, params, out):
    """Add one winner's score changes to ``out: int64[4]`` in place (K-8, K-9.3).

    ``win_type`` is ``WIN_SELF_DRAW`` / ``WIN_DISCARD`` / ``WIN_ROBBED_KONG``;
    ``discarder`` the seat that discarded (or whose added kong was robbed),
    ignored on a self-draw; ``exponent`` the win's ``E``; ``piao_circle:
    bool[4]`` the seats whose 飘财 circle is open (the winner's own is
    ignored).  Each loser ``p``'s share is ``base * 2**E`` with ``base`` 4 when
    ``p`` or the winner is the dealer, else 2 (K-8.1).  Self-draw: each of the
    other three pays their share (K-8.2); discard win and robbed kong: the
    discarder pays all three shares, or only their own under
    ``discard_win_payment="own_share"`` (K-8.3).  A seat in an open 飘 circle
    also pays ``failed_piao_factor - 1`` times its own share (K-9.3).  The
    changes added sum to zero (K-8.5); with several winners call once each.
    """
    mult = np.int64(1) << np.int64(exponent)
    own_share_only = params[P_DISCARD_WIN_PAYMENT] == PAYMENT_OWN_SHARE
    extra_factor = params[P_FAILED_PIAO_FACTOR] - 1
    total = np.int64(0)
    for p in range(4):
        if p == winner:
            continue
        base = 4 if (p == dealer or winner == dealer) else 2
        share = base * mult
        if win_type == WIN_SELF_DRAW:
            out[p] -= share
            total += share
        elif p == discarder or not own_share_only:
            out[discarder] -= share
            total += share
        if piao_circle[p]:  # K-9.3 failed 飘
            out[p] -= extra_factor * share
            total += extra_factor * share
    out[winner] += total
