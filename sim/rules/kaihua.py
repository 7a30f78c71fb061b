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
  hand that is not 爆头 / 七子爆头 (K-7.1; option ``baotou_discard_win``, D6);
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
- D6 (K-7.1, option ``baotou_discard_win``): by default (``"never"``) a hand
  whose 13 tiles before the win are in 爆头 shape (K-6.2) or 七子爆头 shape
  (D2) cannot win on a discard or a robbed kong at all, even where the 14
  tiles could also be read as a plain 平胡 (the 财神 pairing the discard).
  Under ``"other_readings"`` such a discard (or robbed-kong) win is allowed
  and scored by its best reading without the 爆头 / 七子爆头 bonus
  (``123m456m789p234s5z`` + a discarded ``2s`` is a 平胡, exponent 0; six
  pairs + a lone 财神 + a discard is a 七对子, exponent 1); every other gate
  stays (at most one 财神, K-2.2, K-2.4, K-2.6, ``discard_win``).
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

import dataclasses
from typing import Literal

import numpy as np
from numba import njit

from caishen.sim import tiles as _tiles
from caishen.sim.hand import _is_baotou, _is_seven_pairs, _is_win_standard
from caishen.sim.rules.options import Options
from caishen.sim.tables import hand_tables
from caishen.sim.tiles import CAISHEN, MELD_CHOW, MELD_KONG_ADDED, MELD_KONG_CONCEALED, MELD_KONG_EXPOSED, MELD_PONG

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
#: K-7.1 a discard win on a 爆头-shaped hand, one of BAOTOU_DISCARD_*
P_BAOTOU_DISCARD_WIN = 10
N_PARAMS = 11

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
    - ``baotou_discard_win`` (K-7.1, D6): ``"never"`` (a hand whose 13
      tiles are in 爆头 / 七子爆头 shape never wins on a discard or a robbed
      kong) or ``"other_readings"`` (it may, scored by its best reading
      without the 爆头 / 七子爆头 bonus; every other gate stays).

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


# ---------------------------------------------------------------------------
# win evaluation (K-2.4 .. K-2.6, K-6, K-7.1)
# ---------------------------------------------------------------------------
@njit(cache=True)
def _is_qingyise(counts, meld_kinds, n_melds):
    """清一色 (K-6.4, D5): every non-财神 tile of ``counts`` and every meld is of one suit."""
    suit = -1
    for k in range(34):
        if k == CAISHEN or counts[k] == 0:
            continue
        if k >= 27:
            return False
        if suit < 0:
            suit = k // 9
        elif k // 9 != suit:
            return False
    for i in range(n_melds):
        k = meld_kinds[i]
        if k >= 27:
            return False
        if suit < 0:
            suit = k // 9
        elif k // 9 != suit:
            return False
    return suit >= 0


@njit(cache=True)
def _is_qidui_baotou(counts13):
    """七子爆头 shape (K-6.3, D2): 13 concealed tiles = 6 pairs (jokers wild) + a lone 财神.

    Tested as "the 13 tiles plus one tile of an absent kind are seven pairs":
    the added single can only pair with a 财神, the other 12 tiles must be six
    pairs.  ``counts13`` (no melds) is modified temporarily and restored.
    """
    if counts13[CAISHEN] < 1:
        return False
    x = 0
    while counts13[x] != 0 or x == CAISHEN:
        x += 1
    counts13[x] += 1
    r = _is_seven_pairs(counts13, CAISHEN)
    counts13[x] -= 1
    return r


@njit(cache=True)
def _is_baotou_wait(counts13, n_melds, tabs):
    """爆头 (K-6.2) or 七子爆头 (K-6.3, D2) shape of the concealed tiles before a draw.

    Such a hand cannot win on a drawn 财神 and must discard one (K-2.5, D3),
    and cannot win on a discard (K-7.1, D6; unless ``baotou_discard_win``
    is ``"other_readings"``).  ``counts13`` is modified temporarily and
    restored.  The engine uses this to set a seat's forced 飘 of K-2.5,
    which lasts until that seat discards a 财神.
    """
    if _is_baotou(counts13, CAISHEN, tabs):
        return True
    return n_melds == 0 and _is_qidui_baotou(counts13)


@njit(cache=True)
def _evaluate_win(concealed, win_tile, meld_types, meld_kinds, n_melds, self_draw, replacement_draw,
                  chain_piao, chain_kong, params, tabs):
    """Is this a legal Kaihua win, and with which exponent and hand-type flags?

    ``concealed``: int array[34], the winner's concealed tiles *before* the
    winning tile (``13 - 3 * n_melds`` tiles, 财神 at index 31); modified
    temporarily (the winning tile is added) and restored before returning.
    ``win_tile``: kind index; ``meld_types, meld_kinds``: int8[4] (codes of
    :mod:`caishen.sim.tiles`, a chow's kind is its lowest tile), the first
    ``n_melds`` used; ``self_draw``: True for a self-draw (a kong replacement
    draw included), False for a discard or a robbed kong;
    ``replacement_draw`` adds nothing by itself (D9: the kong is the last
    chain link); ``chain_piao, chain_kong``: the winner's 飘财 and kong chain
    links (K-6.5); ``params``: ``KaihuaRules.params()``; ``tabs``:
    ``caishen.sim.tables.hand_tables()``.

    Returns ``(legal: bool, exponent: int64, flags: int64, piao_links:
    int64, kong_links: int64)``: ``FLAG_*`` bits of the counted reading, and
    the 飘 and kong chain links that reading counted in its (uncapped)
    exponent (K-6.5, D8, D9: 0 on a discard win, 飘 links 0 under
    ``piao_requires_baotou`` when the reading is not 爆头); all 0 when not
    legal.  Applies K-2.2, K-2.4, K-2.5 (also for 七子爆头, D3), K-2.6
    (D10), K-6.1 .. K-6.6, K-7.1/K-7.2 (D6, D7, ``baotou_discard_win``) and
    ``max_exponent``; among the legal readings (standard / seven pairs) the
    largest exponent counts (D11).  The persistent K-2.5 force of a seat
    that drew a 财神 and has not discarded one yet (its later replacement
    draws) is the engine's state, not a fact of these tiles: the engine does
    not ask this kernel while it holds (``caishen.sim.engine``, E3).
    """
    zero = np.int64(0)
    j13 = np.int64(concealed[CAISHEN])
    jokers = j13 + (1 if win_tile == CAISHEN else 0)
    if jokers >= 3:  # K-2.4: three or four 财神 never win (forced 飘财)
        return False, zero, zero, zero, zero
    if not self_draw:
        # K-2.2: a discarded 财神 is never claimed; K-7.1/K-7.2: the discard_win
        # switch, and at most one 财神 in hand
        if win_tile == CAISHEN or params[P_DISCARD_WIN] == 0 or jokers > 1:
            return False, zero, zero, zero, zero
    # shapes of the 13 tiles before the win
    baotou = _is_baotou(concealed, CAISHEN, tabs)  # K-6.2
    qidui_baotou = n_melds == 0 and _is_qidui_baotou(concealed)  # K-6.3, D2
    if baotou or qidui_baotou:
        if win_tile == CAISHEN:  # K-2.5 (D3): must discard a 财神 instead
            return False, zero, zero, zero, zero
        if not self_draw:
            # K-7.1 (D6): 爆头 / 七子爆头 are self-draw only; under
            # "other_readings" the discard win counts without their bonus
            if params[P_BAOTOU_DISCARD_WIN] != BAOTOU_DISCARD_OTHER_READINGS:
                return False, zero, zero, zero, zero
            baotou = False
            qidui_baotou = False
    has_four = False
    for k in range(34):
        if k != CAISHEN and concealed[k] == 4:
            has_four = True
    qubuqu = n_melds == 0 and j13 == 0 and has_four  # K-6.3 (D4), if seven pairs below

    concealed[win_tile] += 1
    standard = _is_win_standard(concealed, CAISHEN, tabs)
    seven_pairs = n_melds == 0 and _is_seven_pairs(concealed, CAISHEN)
    qingyise = (standard or seven_pairs) and _is_qingyise(concealed, meld_kinds, n_melds)
    haohua = 0  # K-6.3 (D1): natural fours among the 14
    for k in range(34):
        if k != CAISHEN and concealed[k] == 4:
            haohua += 1
    concealed[win_tile] -= 1

    # K-6.5 (D9): chain links count on a self-draw only
    kong_links = np.int64(chain_kong) if self_draw else zero
    piao_links = np.int64(chain_piao) if self_draw else zero
    min_two = params[P_TWO_CAISHEN_MIN_EXPONENT]
    piao_needs_baotou = params[P_PIAO_REQUIRES_BAOTOU] != 0
    qys = np.int64(1) if qingyise else zero

    best = np.int64(-1)
    best_flags = zero
    best_piao = zero
    best_kong = zero
    if standard:  # K-6.1 平胡, K-6.2 爆头
        hand = np.int64(1) if baotou else zero
        if not (jokers == 2 and hand + kong_links < min_two):  # K-2.6
            piao = piao_links if (baotou or not piao_needs_baotou) else zero
            e = hand + qys + kong_links + piao
            flags = zero
            if baotou:
                flags |= FLAG_BAOTOU
            if qingyise:
                flags |= FLAG_QINGYISE
            if kong_links + piao > 0:
                flags |= FLAG_CHAIN
            if piao > 0:
                flags |= FLAG_PIAO
            if flags == 0:
                flags = np.int64(FLAG_PINGHU)
            best = e
            best_flags = flags
            best_piao = piao
            best_kong = kong_links
    if seven_pairs:  # K-6.3 七对子 family
        hand = np.int64(1 + haohua)
        flags = np.int64(FLAG_QIDUI)
        if jokers == 0:  # 清七对
            hand += 1
            flags |= FLAG_QIDUI_PURE
        if haohua > 0:
            flags |= FLAG_HAOHUA
        if qidui_baotou:  # 七子爆头 (self-draw, non-财神 draw: checked above)
            hand += 1
            flags |= FLAG_QIDUI_BAOTOU
        if qubuqu:  # 去不去: a floor, not a bonus (D4)
            flags |= FLAG_QUBUQU
            if hand < 3:
                hand = np.int64(3)
        if not (jokers == 2 and hand + kong_links < min_two):  # K-2.6
            piao = piao_links if (qidui_baotou or not piao_needs_baotou) else zero
            e = hand + qys + kong_links + piao
            if qingyise:
                flags |= FLAG_QINGYISE
            if kong_links + piao > 0:
                flags |= FLAG_CHAIN
            if piao > 0:
                flags |= FLAG_PIAO
            if e > best:  # D11: a tie keeps the standard reading
                best = e
                best_flags = flags
                best_piao = piao
                best_kong = kong_links
    if best < 0:
        return False, zero, zero, zero, zero
    cap = params[P_MAX_EXPONENT]  # K-6.6
    if cap >= 0 and best > cap:
        best = cap
    return True, best, best_flags, best_piao, best_kong


# ---------------------------------------------------------------------------
# Python API: one scoring vector
# ---------------------------------------------------------------------------
_CASE_KEYS = (
    "id", "rules", "dealer", "winner", "win_type", "discarder", "concealed", "melds",
    "win_tile", "replacement_draw", "chain", "piao_circle",
)
_OPTIONAL_KEYS = ("expect",)
_MELD_SIZES = {MELD_CHOW: 3, MELD_PONG: 3, MELD_KONG_EXPOSED: 4, MELD_KONG_ADDED: 4, MELD_KONG_CONCEALED: 4}
_KONGS = (MELD_KONG_EXPOSED, MELD_KONG_ADDED, MELD_KONG_CONCEALED)
#: longest tile string a case may hold (a hand needs about 30 characters);
#: longer ones are rejected before they are parsed or echoed
MAX_TILE_STRING = 200

#: The cases play cannot produce, each rejected by :func:`_parse_case` with a
#: message naming the contradiction (besides wrong types, bad tiles, wrong
#: counts and more than four copies of a kind).  ``W`` is the winner, ``D``
#: the discarder (or the robbed seat).
IMPOSSIBLE_CASES = (
    "replacement_draw true on a discard / robbed-kong win, or without a last chain link 'kong' (K-5.4, K-6.5)",
    "a chain ending in 'kong' with replacement_draw false: after a kong the player draws a replacement "
    "(K-5.4); if they then discard, the chain changes, so the win is on that replacement draw (K-6.5); on a "
    "discard or robbed-kong win W's last own action was a discard, so W's chain is empty or ends in 'piao'",
    "more kong links than kong melds; more than one exposed-kong link, or one that is not the chain's first: "
    "claiming an exposed kong is banned while W's own 飘 circle is open (K-9.2), so W's chain was empty",
    "a chain whose first link must be an exposed kong (more kong links than concealed / added kongs) and "
    "that has no 'piao' link, with seats in piao_circle: no circle was open at the claim (K-9.2) and nobody "
    "else has discarded since",
    "D in piao_circle (D drew before discarding or declaring the added kong, which closed D's circle, K-9.2; "
    "the discarded tile is not a 财神) -- except a discarded 5z, whose thrower's circle is open",
    "W in piao_circle on a self-draw (W's draw closed W's circle, K-9.2, engine decision E9)",
    "on a discard / robbed-kong win, W in piao_circle without a chain ending in 'piao', or a chain ending in "
    "'piao' without W in piao_circle: W's 财神 discard was W's last action, and W's circle stays open until "
    "W's next draw (K-9.2); W in the circle itself is possible (E9: W's own circle does not count)",
    "more than four 财神: those in W's 14 tiles, W's 'piao' links, and one per other seat in piao_circle "
    "(each threw a 财神 that is in nobody's hand) (K-2.1)",
    "robbed_kong on 5z: a 财神 is never part of a meld (K-2.3), so there is no 5z pong to add to",
    "robbed_kong on a kind W holds or melds: the robbed pong and the added tile are all four copies (K-5.5)",
)


def _show(value, limit: int = 60) -> str:
    """``repr(value)``, cut to ``limit`` characters (messages never echo huge input)."""
    r = repr(value)
    return r if len(r) <= limit else f"{r[:limit]}... ({len(r)} characters)"


def _seat(case: dict, key: str) -> int:
    v = case[key]
    if isinstance(v, bool) or not isinstance(v, int) or not 0 <= v <= 3:
        raise ValueError(f"{key} {_show(v)}: must be a seat 0..3")
    return v


def _tile_string(where: str, value) -> str:
    """``value`` if it is a tile string of reasonable length; ``ValueError`` naming ``where``."""
    if not isinstance(value, str):
        raise ValueError(f"{where} {_show(value)}: must be a tile string such as '123m5z', got {type(value).__name__}")
    if len(value) > MAX_TILE_STRING:
        raise ValueError(f"{where} {_show(value)}: longer than {MAX_TILE_STRING} characters")
    return value


def _parse_meld(i: int, meld) -> tuple[int, int, list[int]]:
    """(type code, kind, tile kinds) of one vector meld; ValueError naming the bad value."""
    if not isinstance(meld, dict) or set(meld) != {"type", "tiles"}:
        raise ValueError(f"melds[{i}] {_show(meld)}: must be an object with keys 'type' and 'tiles'")
    name = meld["type"]
    if not isinstance(name, str) or name not in _tiles.MELD_TYPES:
        raise ValueError(f"melds[{i}] type {_show(name)}: must be one of {', '.join(_tiles.MELD_TYPES)}")
    code = _tiles.MELD_TYPES[name]
    text = _tile_string(f"melds[{i}] tiles", meld["tiles"])
    try:
        kinds = sorted(_tiles.parse_kinds(text))
    except ValueError as e:
        raise ValueError(f"melds[{i}]: {e}") from None
    if len(kinds) != _MELD_SIZES[code]:
        raise ValueError(f"melds[{i}] {name} {text!r}: a {name} has {_MELD_SIZES[code]} tiles, got {len(kinds)}")
    if CAISHEN in kinds:  # K-2.3
        raise ValueError(f"melds[{i}] {text!r}: a 财神 (5z) is never part of a meld (K-2.3)")
    k0 = kinds[0]
    if code == MELD_CHOW:
        if k0 >= 27 or kinds != [k0, k0 + 1, k0 + 2] or k0 % 9 > 6:
            raise ValueError(f"melds[{i}] chow {text!r}: not three consecutive tiles of one suit")
    elif len(set(kinds)) != 1:
        raise ValueError(f"melds[{i}] {name} {text!r}: tiles must all be the same kind")
    return code, k0, kinds


def _parse_case(case: dict) -> dict:
    """Validate one Kaihua vector case (vectors README) into kernel inputs.

    Raises ``ValueError`` naming the key and the value for a missing or
    unknown key or a value of the wrong JSON type or range, and naming the
    contradiction for a case that play cannot produce (:data:`IMPOSSIBLE_CASES`).
    Every case that play can produce is accepted (a case that is no legal
    win, e.g. a 财神 won on a discard, is accepted and scored as no win).
    """
    if not isinstance(case, dict):
        raise ValueError(f"a case must be a JSON object, got {type(case).__name__}")
    missing = [k for k in _CASE_KEYS if k not in case]
    if missing:
        raise ValueError(f"missing key(s) {', '.join(map(repr, missing))}")
    unknown = sorted((k for k in case if k not in _CASE_KEYS and k not in _OPTIONAL_KEYS), key=repr)
    if unknown:
        raise ValueError(f"unknown key(s) {_show(', '.join(map(repr, unknown)), 200)} for a kaihua case")
    if not isinstance(case["rules"], str) or case["rules"] != "kaihua":
        raise ValueError(f"rules {_show(case['rules'])}: expected 'kaihua'")
    if not isinstance(case["id"], str):
        raise ValueError(f"id {_show(case['id'])}: must be a string")
    dealer, winner = _seat(case, "dealer"), _seat(case, "winner")
    wt_name = case["win_type"]
    if not isinstance(wt_name, str) or wt_name not in WIN_TYPES:
        raise ValueError(f"win_type {_show(wt_name)}: must be one of {', '.join(WIN_TYPES)}")
    win_type = WIN_TYPES[wt_name]
    self_draw = win_type == WIN_SELF_DRAW
    if self_draw:
        if case["discarder"] is not None:
            raise ValueError(f"discarder {_show(case['discarder'])}: must be null on a self-draw")
        discarder = -1
    else:
        if case["discarder"] is None:
            raise ValueError(f"discarder None: a {wt_name} win needs the discarding seat")
        discarder = _seat(case, "discarder")
        if discarder == winner:
            raise ValueError(f"discarder {discarder}: the winner cannot win on their own tile")

    melds = case["melds"]
    if not isinstance(melds, list) or len(melds) > 4:
        raise ValueError(f"melds {_show(melds)}: must be a list of at most 4 melds")
    meld_types = np.zeros(4, np.int8)
    meld_kinds = np.zeros(4, np.int8)
    total = np.zeros(_tiles.N_KINDS, np.int64)
    for i, m in enumerate(melds):
        code, kind, kinds = _parse_meld(i, m)
        meld_types[i], meld_kinds[i] = code, kind
        for k in kinds:
            total[k] += 1
    text = _tile_string("concealed", case["concealed"])
    concealed = _tiles.parse(text).astype(np.int64)
    need = 13 - 3 * len(melds)
    if int(concealed.sum()) != need:
        raise ValueError(
            f"concealed {text!r} has {int(concealed.sum())} tiles; with {len(melds)} meld(s) "
            f"the hand before the winning tile has {need}"
        )
    win = _tiles.parse_kinds(case["win_tile"]) if isinstance(case["win_tile"], str) and len(
        case["win_tile"]) <= MAX_TILE_STRING else None
    if win is None or len(win) != 1:
        raise ValueError(f"win_tile {_show(case['win_tile'])}: must be exactly one tile, e.g. '5s'")
    win_tile = win[0]
    total += concealed
    total[win_tile] += 1
    if (total > 4).any():
        k = int(np.flatnonzero(total > 4)[0])
        raise ValueError(f"{int(total[k])} copies of {_tiles.kind_name(k)} among concealed, melds and win_tile")

    chain = case["chain"]
    if not isinstance(chain, list) or any(not isinstance(x, str) or x not in ("piao", "kong") for x in chain):
        raise ValueError(f"chain {_show(chain)}: must be a list of 'piao' / 'kong' links")
    chain_piao, chain_kong = chain.count("piao"), chain.count("kong")
    n_exposed = sum(1 for t in meld_types[: len(melds)] if t == MELD_KONG_EXPOSED)
    n_own_kongs = sum(1 for t in meld_types[: len(melds)] if t in (MELD_KONG_ADDED, MELD_KONG_CONCEALED))
    if chain_kong > n_exposed + n_own_kongs:
        raise ValueError(
            f"chain {_show(chain)}: {chain_kong} kong link(s) but only {n_exposed + n_own_kongs} kong meld(s)"
        )
    exposed_first = n_exposed > 0 and bool(chain) and chain[0] == "kong"
    if chain_kong > n_own_kongs + (1 if exposed_first else 0):
        raise ValueError(
            f"chain {_show(chain)}: {chain_kong} kong link(s) but only {n_own_kongs} concealed / added kong(s); "
            f"an exposed kong can only be a chain's first link (claiming it is banned while the winner's own "
            f"飘 circle is open, K-9.2, so the winner's chain was empty then)"
        )
    replacement = case["replacement_draw"]
    if not isinstance(replacement, bool):
        raise ValueError(f"replacement_draw {_show(replacement)}: must be true or false")
    ends_kong = bool(chain) and chain[-1] == "kong"
    ends_piao = bool(chain) and chain[-1] == "piao"
    if replacement and not (self_draw and ends_kong):
        raise ValueError("replacement_draw true: needs a self_draw win whose last chain link is 'kong' (K-6.5)")
    if ends_kong and not self_draw:
        raise ValueError(
            f"chain {_show(chain)} ends in a kong link on a {wt_name} win: the winner's last own action before "
            f"another seat's discard or added kong was a discard, which ends the chain or adds a 'piao' link "
            f"(K-5.4, K-6.5)"
        )
    if ends_kong and not replacement:
        raise ValueError(
            f"chain {_show(chain)} ends in a kong link but replacement_draw is false: after a kong the player "
            f"draws a replacement (K-5.4) and a discard would change the chain, so the win is on that "
            f"replacement draw (K-6.5)"
        )
    if win_type == WIN_ROBBED_KONG and win_tile == CAISHEN:
        raise ValueError("robbed_kong on '5z': a 财神 is never part of a meld (K-2.3), so there is no 5z pong "
                         "to add a kong to")
    if win_type == WIN_ROBBED_KONG and total[win_tile] != 1:
        raise ValueError(
            f"robbed_kong on {case['win_tile']!r}: the robbed pong holds three copies, "
            f"but the winner holds {int(total[win_tile]) - 1} more (K-5.5)"
        )

    circle = case["piao_circle"]
    if not isinstance(circle, list):
        raise ValueError(f"piao_circle {_show(circle)}: must be a list of seats")
    piao_circle = np.zeros(4, np.bool_)
    for s in circle:
        if isinstance(s, bool) or not isinstance(s, int) or not 0 <= s <= 3:
            raise ValueError(f"piao_circle seat {_show(s)}: must be a seat 0..3")
        if piao_circle[s]:
            raise ValueError(f"piao_circle {_show(circle)}: seat {s} listed twice")
        piao_circle[s] = True
    # K-9.2 / E9: who can have an open 飘 circle when the hand is won
    thrown_caishen = not self_draw and win_tile == CAISHEN  # the discarder's circle is open then
    if not self_draw and piao_circle[discarder] and not thrown_caishen:
        who = "discarder" if win_type == WIN_DISCARD else "robbed seat"
        raise ValueError(
            f"piao_circle {circle!r} lists the {who} {discarder}: their draw before the "
            f"{'discard' if win_type == WIN_DISCARD else 'added kong'} closed their 飘 circle (K-9.2)"
        )
    if self_draw and piao_circle[winner]:
        raise ValueError(f"piao_circle {circle!r} lists the self-drawing winner {winner}: their draw closed "
                         f"their 飘 circle (K-9.2, E9)")
    if not self_draw and piao_circle[winner] and not ends_piao:
        raise ValueError(
            f"piao_circle {circle!r} lists the winner {winner}, but the chain {_show(chain)} does not end in "
            f"'piao': an open circle means the winner's last action was a 财神 discard (K-9.2, K-6.5)"
        )
    if not self_draw and ends_piao and not piao_circle[winner]:
        raise ValueError(
            f"chain {_show(chain)} ends in 'piao' on a {wt_name} win, but piao_circle {circle!r} does not list "
            f"the winner {winner}: their 财神 discard was their last action, so their circle is still open (K-9.2)"
        )
    others = [s for s in range(4) if piao_circle[s] and s != winner and not (thrown_caishen and s == discarder)]
    if chain_kong > n_own_kongs and chain_piao == 0 and others:
        raise ValueError(
            f"piao_circle {circle!r} with the chain {_show(chain)}: its first link is an exposed kong (more kong "
            f"links than concealed / added kongs), claimed while no circle was open (K-9.2), and nobody else has "
            f"discarded since"
        )
    n_caishen = int(total[CAISHEN])
    if n_caishen + chain_piao + len(others) > 4:
        raise ValueError(
            f"chain {_show(chain)} and piao_circle {circle!r}: {n_caishen} 财神 among the winner's tiles, "
            f"{chain_piao} 飘财 link(s) and {len(others)} other seat(s) in the circle (each threw a 财神) "
            f"exceed the four 财神 (K-2.1)"
        )

    return dict(
        id=case["id"], dealer=dealer, winner=winner, win_type=win_type, discarder=discarder,
        concealed=concealed, win_tile=win_tile, meld_types=meld_types, meld_kinds=meld_kinds,
        n_melds=len(melds), replacement_draw=replacement, chain_piao=chain_piao, chain_kong=chain_kong,
        piao_circle=piao_circle,
    )


def score(case: dict, rules: KaihuaRules | None = None) -> dict:
    """Score one Kaihua vector case (format: ``shared/vectors/README.md``).

    ``case`` is a dict with the keys ``id, rules, dealer, winner, win_type,
    discarder, concealed, melds, win_tile, replacement_draw, chain,
    piao_circle`` (``expect`` is ignored); ``rules`` defaults to
    ``KaihuaRules()``.  Runs the engine's kernels :func:`_evaluate_win` and
    :func:`_payments` (K-2 .. K-9).

    Returns ``{"id", "win": bool, "exponent": int | None, "flags": [names],
    "scores": [int] * 4}`` (points; ``exponent`` None, ``flags`` empty and
    scores all zero when the case is not a legal win).

    Raises ``ValueError`` naming the bad value: a missing or unknown key, a
    value of the wrong JSON type, a bad seat or win type, a bad tile string,
    a wrong tile count, a meld that is not a chow/pong/kong, more than four
    copies of a kind; and naming the contradiction for a case that play
    cannot produce (:data:`IMPOSSIBLE_CASES`: chain, replacement draw, 飘
    circles, 财神 count, robbed kong).
    """
    if rules is None:
        rules = KaihuaRules()
    if not isinstance(rules, KaihuaRules):
        raise ValueError(f"rules must be a KaihuaRules, got {type(rules).__name__}")
    c = _parse_case(case)
    params = rules.params()
    legal, exponent, flags, _, _ = _evaluate_win(
        c["concealed"], c["win_tile"], c["meld_types"], c["meld_kinds"], c["n_melds"],
        c["win_type"] == WIN_SELF_DRAW, c["replacement_draw"], c["chain_piao"], c["chain_kong"],
        params, hand_tables(),
    )
    scores = np.zeros(4, np.int64)
    if legal:
        _payments(c["dealer"], c["winner"], c["win_type"], c["discarder"], exponent, c["piao_circle"],
                  params, scores)
    return {
        "id": c["id"],
        "win": bool(legal),
        "exponent": int(exponent) if legal else None,
        "flags": flag_names(flags) if legal else [],
        "scores": [int(x) for x in scores],
    }
