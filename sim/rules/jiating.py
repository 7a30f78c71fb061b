"""Jiating mahjong (架听麻将): rule options, win evaluation, scoring and payments.

This module is the one place where Jiating's scoring lives (binding spec:
``shared/rules/jiating.md``; rule IDs ``J-...`` and pattern IDs ``P..`` refer
to it).  The fifty patterns are small named predicates in
:mod:`caishen.sim.rules.jiating_patterns`; this module chooses the reading, applies
the exclusions and the concealed doubling, adds kong points, caps and bonuses
and settles the payments.  ``caishen score`` calls :func:`score` for lines
with ``"rules": "jiating"``.

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
  witnesses is own.  Whole-hand patterns (P17 P23 P24 P25 P30 P36 P38 P42
  P43 P44) use every group; P27 绝张子 uses the winning tile's group, so it
  is doubled exactly when self-drawn (the seed's 暗绝张子).
- D2 (P11/P16 "each"): P11 counts every own triplet; P16 pairs identical runs
  disjointly (``n`` equal runs give ``n // 2`` 姊妹付).  Every other pattern
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
- D8 (P47 with ``dihu="win_on_dealers_first_discard"``): needs the case key
  ``on_dealers_first_discard`` (the winning tile was the dealer's first
  discard), which the vector format does not have; it defaults to false.
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
      dealer, the streak, the win type or ``on_dealers_first_discard``, or
      that together hold more than four copies of a kind (with the winning
      tile and, on a robbed kong, the robbed pong).

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
- Readings come from :func:`caishen.sim.hand.readings` in pure Python: scoring runs
  once per won hand, not in the engine's inner loop.
"""

from __future__ import annotations

import dataclasses
import json
from typing import Any, Literal, Sequence

import numpy as np
from numba import njit

from caishen.sim import hand as _hand
from caishen.sim import tiles as _tiles
from caishen.sim.rules import jiating_patterns as _pat
from caishen.sim.rules.jiating_patterns import (
    DEFAULT_DOUBLED,
    DEFAULT_EXCLUSIONS,
    DEFAULT_POINTS,
    PATTERN_IDS,
    PATTERN_NAMES,
    PATTERNS,
    HandGroup,
    WinContext,
    WinningHand,
)
from caishen.sim.rules.options import MAX_INT_OPTION, Options, coerce_int, short_repr, short_text

__all__ = [
    "JiatingRules", "JiatingWin", "score", "evaluate", "score_discard_winners",
    "settle_self_draw", "settle_discard", "payment", "kong_points",
    "PATTERN_IDS", "PATTERN_NAMES",
]

# ---------------------------------------------------------------------------
# params layout (JiatingRules.params() -> int64[N_PARAMS])
# ---------------------------------------------------------------------------
P_RESERVED_TILES = 0  #: J-1.2 tiles never drawn
P_PASSED_PONG_SCOPE = 1  #: J-3.6, one of PONG_SCOPE_*
P_DEALER_FACTOR = 2  #: J-6.2
P_DEALER_CAP = 3  #: J-6.2, -1 = none
P_CAP = 4  #: J-6.2, -1 = none
P_STREAK_STEP = 5  #: J-6.4
P_DIHU = 6  #: P47, one of DIHU_*
P_KONG_EXPOSED_POINTS = 7  #: J-6.1 per exposed or added kong
P_KONG_CONCEALED_POINTS = 8  #: J-6.1 per concealed kong
P_BONUS_DISCARD = 9  #: J-6.4 non-dealer discarder to non-dealer winner
P_BONUS_DISCARD_DEALER = 10  #: J-6.4 discard win with the dealer on either side
P_BONUS_SELF_DRAW = 11  #: J-6.4 each other non-dealer on a non-dealer's self-draw
P_BONUS_SELF_DRAW_DEALER = 12  #: J-6.4 the dealer paying or winning a self-draw
P_CONCEALED_FACTOR = 13  #: J-6.3 factor of an own witness
N_PARAMS = 14

PONG_SCOPE_SAME_KIND = 0
PONG_SCOPE_ANY = 1
PONG_SCOPE_CODES = {"same_kind": PONG_SCOPE_SAME_KIND, "any": PONG_SCOPE_ANY}
DIHU_DEALER_READY = 0
DIHU_DEALERS_FIRST_DISCARD = 1
DIHU_CODES = {"dealer_ready_first_discard": DIHU_DEALER_READY,
              "win_on_dealers_first_discard": DIHU_DEALERS_FIRST_DISCARD}

WIN_SELF_DRAW = 0
WIN_DISCARD = 1
WIN_ROBBED_KONG = 2
WIN_TYPES = {"self_draw": WIN_SELF_DRAW, "discard": WIN_DISCARD, "robbed_kong": WIN_ROBBED_KONG}

#: bounds on the integers that enter (module docstring; every score of a hand below 2**53)
MAX_STREAK = 10**6  #: J-2.4 streak k of a case or payment
MAX_POINTS_OPTION = 10**6  #: pattern points, kong points, bonuses, streak_step
MAX_FACTOR = 100  #: dealer_factor, concealed_factor
MAX_HAND_POINTS = 10**12  #: P and G given to payment() / settle_*()

#: pattern number (1..50) of each ID, the index into ``pattern_tables()``
PATTERN_INDEX = {pid: int(pid[1:]) for pid in PATTERN_IDS}
N_PATTERN_SLOTS = 51  # index 0 unused


def _check_pattern_id(pid: Any, what: str) -> str:
    if not isinstance(pid, str) or pid not in PATTERN_NAMES:
        raise ValueError(f"{what}: unknown pattern ID {short_repr(pid)} (known: P01..P50)")
    return pid


def _json_option(name: str, text: str) -> Any:
    """An option value written as JSON; ``ValueError`` naming the option for bad or too deep JSON."""
    try:
        return json.loads(text)
    except json.JSONDecodeError as e:
        raise ValueError(f"option {name}: bad JSON ({e.msg} at column {e.colno})") from None
    except RecursionError:
        raise ValueError(f"option {name}: JSON nested too deeply") from None


def _split(text: str, seps: str) -> list[str]:
    for s in seps[1:]:
        text = text.replace(s, seps[0])
    return [t.strip() for t in text.split(seps[0]) if t.strip()]


def _parse_points(value: Any) -> dict[str, int]:
    """pattern_points given as a mapping, pairs or ``"P25:30,P38:50"`` -> validated dict."""
    if isinstance(value, str):
        text = value.strip()
        if text.startswith("{"):
            value = _json_option("pattern_points", text)
        else:
            pairs = []
            for item in _split(text, ",;"):
                if ":" not in item and "=" not in item:
                    raise ValueError(f"option pattern_points: {short_repr(item)} is not ID:points")
                k, v = item.replace("=", ":").split(":", 1)
                pairs.append((k.strip(), v.strip()))
            value = pairs
    items = value.items() if isinstance(value, dict) else value
    pts: dict[str, int] = {}
    try:
        items = list(items)
    except TypeError:
        raise ValueError(f"option pattern_points={short_repr(value)}: must map pattern IDs to points") from None
    for item in items:
        if not isinstance(item, (tuple, list)) or len(item) != 2:
            raise ValueError(f"option pattern_points: {short_repr(item)} is not an (ID, points) pair")
        pid, p = item
        _check_pattern_id(pid, "option pattern_points")
        if not isinstance(p, (int, float, str, np.integer)):
            raise ValueError(f"option pattern_points[{pid}]={short_repr(p)}: must be an integer "
                             f"in 0..{MAX_POINTS_OPTION}")
        pts[pid] = coerce_int(f"option pattern_points[{pid}]", p, 0, MAX_POINTS_OPTION)
    return pts


def _norm_points(value: Any, base: dict[str, int] | None = None) -> tuple[tuple[str, int], ...]:
    """pattern_points merged over ``base`` (default J-8), as ``((ID, points), ...)`` in ID order."""
    pts = {**(base or DEFAULT_POINTS), **_parse_points(value)}
    return tuple((pid, pts[pid]) for pid in PATTERN_IDS)


def _norm_doubled(value: Any) -> tuple[str, ...]:
    """doubled_patterns: iterable of IDs or ``"P04,P05"`` (``""`` = none)."""
    if isinstance(value, str):
        value = _split(value, ",; ")
    try:
        ids = set(value)
    except TypeError:
        raise ValueError(f"option doubled_patterns={short_repr(value)}: must be pattern IDs") from None
    for pid in ids:
        _check_pattern_id(pid, "option doubled_patterns")
    return tuple(pid for pid in PATTERN_IDS if pid in ids)


def _norm_exclusions(value: Any) -> tuple[tuple[str, tuple[str, ...]], ...]:
    """exclusions: ``{winner: [losers]}`` / pairs / ``"P12>P10;P31>P08,P10,P09"``."""
    if isinstance(value, str):
        text = value.strip()
        if text.startswith("{") or text.startswith("["):
            value = _json_option("exclusions", text)
        else:
            pairs = []
            for item in _split(text, ";"):
                if ">" not in item:
                    raise ValueError(f"option exclusions: {short_repr(item)} is not 'ID>ID,ID'")
                left, right = item.split(">", 1)
                pairs.append((left.strip(), _split(right, ", ")))
            value = pairs
    items = value.items() if isinstance(value, dict) else value
    merged: dict[str, set[str]] = {}
    try:
        items = list(items)
    except TypeError:
        raise ValueError(f"option exclusions={short_repr(value)}: must map a pattern ID to the IDs it excludes") \
            from None
    for item in items:
        if not isinstance(item, (tuple, list)) or len(item) != 2:
            raise ValueError(f"option exclusions: {short_repr(item)} is not a (pattern, excluded patterns) pair")
        left, right = item
        _check_pattern_id(left, "option exclusions")
        if isinstance(right, str):
            right = [right]
        if not isinstance(right, (tuple, list)):
            raise ValueError(f"option exclusions[{left}]={short_repr(right)}: must be pattern IDs")
        for r in right:
            _check_pattern_id(r, "option exclusions")
            if r == left:
                raise ValueError(f"option exclusions: {left} cannot exclude itself")
        merged.setdefault(left, set()).update(right)
    return tuple(
        (left, tuple(r for r in PATTERN_IDS if r in merged[left])) for left in PATTERN_IDS if left in merged
    )


@dataclasses.dataclass(frozen=True)
class JiatingRules(Options):
    """Jiating rule options (``shared/rules/jiating.md``); defaults are the spec's.

    - ``reserved_tiles`` (J-1.2): tiles at the wall's end never drawn; 0..82.
    - ``passed_pong_scope`` (J-3.6): ``"same_kind"`` | ``"any"``.
    - ``dealer_factor``, ``dealer_cap``, ``cap`` (J-6.2): the dealer's payments
      are ``min(dealer_factor * (P + G), dealer_cap)``, others
      ``min(P + G, cap)``; a cap of None means no cap.
    - ``streak_step`` (J-6.4): added per streak step ``k`` to every payment in
      which the dealer pays or wins.
    - ``dihu`` (P47, ambiguity 3): ``"dealer_ready_first_discard"`` |
      ``"win_on_dealers_first_discard"``.
    - ``kong_exposed_points``, ``kong_concealed_points`` (J-6.1): ``G`` per
      exposed/added and per concealed kong of the winner (8, 12).
    - ``bonus_discard`` (1), ``bonus_discard_dealer`` (2), ``bonus_self_draw``
      (2), ``bonus_self_draw_dealer`` (4) (J-6.4): the bonuses, see
      :func:`payment`.
    - ``concealed_factor`` (J-6.3): factor of a doubled pattern (2).
    - ``pattern_points`` (J-8): pattern ID -> points; a partial mapping (or
      ``"P25:30,P38:50"``) is merged over the J-8 defaults; 0 switches a
      pattern off.  Stored as ``((ID, points), ...)`` for all fifty IDs.

    Bounds (no int64 overflow, see the module docstring): ``reserved_tiles`` 0..82;
    ``dealer_factor``, ``concealed_factor`` 1..100; pattern points, kong
    points, bonuses and ``streak_step`` 0..10**6; ``dealer_cap``, ``cap``
    0..10**9 or None.
    - ``doubled_patterns`` (J-8 "暗x2"): the IDs that concealed doubling
      applies to.
    - ``exclusions`` (J-7): ``((ID, (excluded IDs...)), ...)``; accepts a
      mapping or ``"P12>P10;P31>P08,P10,P09"``; replaces the default list.

    Raises ``ValueError`` naming an unknown option, pattern ID or bad value.
    """

    reserved_tiles: int = 0
    passed_pong_scope: Literal["same_kind", "any"] = "same_kind"
    dealer_factor: int = 2
    dealer_cap: int | None = 400
    cap: int | None = 200
    streak_step: int = 2
    dihu: Literal["dealer_ready_first_discard", "win_on_dealers_first_discard"] = "dealer_ready_first_discard"
    kong_exposed_points: int = 8
    kong_concealed_points: int = 12
    bonus_discard: int = 1
    bonus_discard_dealer: int = 2
    bonus_self_draw: int = 2
    bonus_self_draw_dealer: int = 4
    concealed_factor: int = 2
    pattern_points: tuple[tuple[str, int], ...] = tuple((pid, DEFAULT_POINTS[pid]) for pid in PATTERN_IDS)
    doubled_patterns: tuple[str, ...] = DEFAULT_DOUBLED
    exclusions: tuple[tuple[str, tuple[str, ...]], ...] = DEFAULT_EXCLUSIONS

    def _check(self) -> None:
        def in_range(name: str, lo: int, hi: int | None = None) -> None:
            v = getattr(self, name)
            if v < lo or (hi is not None and v > hi):
                bound = f"{lo}..{hi}" if hi is not None else f">= {lo}"
                raise ValueError(f"option {name}={v!r}: must be {bound}")

        in_range("reserved_tiles", 0, 82)
        in_range("dealer_factor", 1, MAX_FACTOR)
        for name in ("dealer_cap", "cap"):
            if getattr(self, name) is not None:
                in_range(name, 0, MAX_INT_OPTION)
        for name in ("streak_step", "kong_exposed_points", "kong_concealed_points", "bonus_discard",
                     "bonus_discard_dealer", "bonus_self_draw", "bonus_self_draw_dealer"):
            in_range(name, 0, MAX_POINTS_OPTION)
        in_range("concealed_factor", 1, MAX_FACTOR)
        object.__setattr__(self, "pattern_points", _norm_points(self.pattern_points))
        object.__setattr__(self, "doubled_patterns", _norm_doubled(self.doubled_patterns))
        object.__setattr__(self, "exclusions", _norm_exclusions(self.exclusions))

    def with_options(self, **changes) -> "JiatingRules":
        """A copy with some options changed (validated); a partial
        ``pattern_points`` is merged over this instance's points."""
        if "pattern_points" in changes:
            changes["pattern_points"] = _norm_points(changes["pattern_points"], self.points)
        return super().with_options(**changes)

    def _tables(self) -> tuple[dict[str, int], dict[str, tuple[str, ...]], frozenset[str]]:
        """(points, exclusions, doubled) as dict / dict / frozenset, built once per instance."""
        t = self.__dict__.get("_tables_cache")
        if t is None:
            t = (dict(self.pattern_points), dict(self.exclusions), frozenset(self.doubled_patterns))
            object.__setattr__(self, "_tables_cache", t)
        return t

    @property
    def points(self) -> dict[str, int]:
        """Pattern ID -> points (J-8 merged with ``pattern_points``)."""
        return dict(self.pattern_points)

    @property
    def excluded_by(self) -> dict[str, tuple[str, ...]]:
        """Pattern ID -> the IDs it excludes (J-7)."""
        return dict(self.exclusions)

    def params(self) -> np.ndarray:
        """The options packed for kernels: ``int64[N_PARAMS]``, indexed by ``P_*``.

        Literal choices are their ``*_CODES`` values, a cap of None is -1.
        Pattern data is in :meth:`pattern_tables`.
        """
        p = np.zeros(N_PARAMS, dtype=np.int64)
        p[P_RESERVED_TILES] = self.reserved_tiles
        p[P_PASSED_PONG_SCOPE] = PONG_SCOPE_CODES[self.passed_pong_scope]
        p[P_DEALER_FACTOR] = self.dealer_factor
        p[P_DEALER_CAP] = -1 if self.dealer_cap is None else self.dealer_cap
        p[P_CAP] = -1 if self.cap is None else self.cap
        p[P_STREAK_STEP] = self.streak_step
        p[P_DIHU] = DIHU_CODES[self.dihu]
        p[P_KONG_EXPOSED_POINTS] = self.kong_exposed_points
        p[P_KONG_CONCEALED_POINTS] = self.kong_concealed_points
        p[P_BONUS_DISCARD] = self.bonus_discard
        p[P_BONUS_DISCARD_DEALER] = self.bonus_discard_dealer
        p[P_BONUS_SELF_DRAW] = self.bonus_self_draw
        p[P_BONUS_SELF_DRAW_DEALER] = self.bonus_self_draw_dealer
        p[P_CONCEALED_FACTOR] = self.concealed_factor
        return p

    def pattern_tables(self) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """Pattern data as arrays indexed by pattern number (``P25`` -> 25; 0 unused).

        Returns ``points: int64[51]``, ``doubled: bool[51]`` (J-6.3) and
        ``excludes: bool[51, 51]`` (``excludes[a, b]``: pattern a applying
        removes pattern b, J-7).
        """
        points = np.zeros(N_PATTERN_SLOTS, np.int64)
        for pid, pts in self.pattern_points:
            points[PATTERN_INDEX[pid]] = pts
        doubled = np.zeros(N_PATTERN_SLOTS, np.bool_)
        for pid in self.doubled_patterns:
            doubled[PATTERN_INDEX[pid]] = True
        excludes = np.zeros((N_PATTERN_SLOTS, N_PATTERN_SLOTS), np.bool_)
        for left, right in self.exclusions:
            for r in right:
                excludes[PATTERN_INDEX[left], PATTERN_INDEX[r]] = True
        return points, doubled, excludes


DEFAULT_RULES = JiatingRules()

# ---------------------------------------------------------------------------
# payments (J-6.2, J-6.4, J-6.5, J-3.4)
# ---------------------------------------------------------------------------


@njit(cache=True)
def _payment(dealer, streak, payer, winner, self_draw, total, params):
    """Amount ``payer`` owes ``winner`` for ``total = P + G`` points (J-6.2, J-6.4)."""
    dealer_in = payer == dealer or winner == dealer
    if dealer_in:
        amount = params[P_DEALER_FACTOR] * total
        cap = params[P_DEALER_CAP]
    else:
        amount = total
        cap = params[P_CAP]
    if cap >= 0 and amount > cap:
        amount = cap
    if self_draw:
        bonus = params[P_BONUS_SELF_DRAW_DEALER] if dealer_in else params[P_BONUS_SELF_DRAW]
    else:
        bonus = params[P_BONUS_DISCARD_DEALER] if dealer_in else params[P_BONUS_DISCARD]
    if dealer_in:
        bonus += params[P_STREAK_STEP] * streak
    return amount + bonus


@njit(cache=True)
def _payments(dealer, streak, winner, win_type, discarder, total, params, out):
    """Add one winner's score changes to ``out: int64[4]`` in place (J-6.5).

    ``win_type``: ``WIN_SELF_DRAW`` (each other seat pays its amount) or
    ``WIN_DISCARD`` / ``WIN_ROBBED_KONG`` (``discarder`` pays); ``total`` is
    ``P + G``.  The changes added sum to zero; with several winners of one
    discard (J-3.4) call once per winner.
    """
    got = 0
    if win_type == WIN_SELF_DRAW:
        for p in range(4):
            if p != winner:
                a = _payment(dealer, streak, p, winner, True, total, params)
                out[p] -= a
                got += a
    else:
        a = _payment(dealer, streak, discarder, winner, False, total, params)
        out[discarder] -= a
        got += a
    out[winner] += got


def _check_seat(name: str, seat: Any) -> int:
    if isinstance(seat, bool) or not isinstance(seat, (int, np.integer)) or not 0 <= int(seat) <= 3:
        raise ValueError(f"{name} must be a seat 0..3, got {short_repr(seat)}")
    return int(seat)


def _check_nonneg(name: str, v: Any, hi: int) -> int:
    """``v`` as an int in ``0..hi`` (the bounds); ``ValueError`` naming ``name`` otherwise."""
    if isinstance(v, bool) or not isinstance(v, (int, np.integer)) or not 0 <= int(v) <= hi:
        raise ValueError(f"{name} must be an integer in 0..{hi}, got {short_repr(v)}")
    return int(v)


def _check_streak(v: Any) -> int:
    return _check_nonneg("streak", v, MAX_STREAK)


def _check_points(name: str, v: Any) -> int:
    return _check_nonneg(name, v, MAX_HAND_POINTS)


def payment(payer: int, winner: int, P: int, G: int, *, dealer: int, streak: int = 0,
            self_draw: bool, rules: JiatingRules | None = None) -> int:
    """Points ``payer`` owes ``winner`` (J-6.2 with the J-6.4 bonus).

    ``min(dealer_factor * (P + G), dealer_cap) + bonus`` when payer or winner
    is the dealer, else ``min(P + G, cap) + bonus``.  Bonus: discard win 1
    (non-dealers), 2 (dealer on either side); self-draw 2 (non-dealer payer to
    non-dealer winner), 4 (dealer on either side); plus ``streak_step *
    streak`` whenever the dealer pays or wins.  Raises ``ValueError`` for bad
    seats, ``P`` or ``G`` outside ``0..MAX_HAND_POINTS`` or ``streak``
    outside ``0..MAX_STREAK`` (the module's bounds).
    """
    r = rules or DEFAULT_RULES
    payer, winner, dealer = _check_seat("payer", payer), _check_seat("winner", winner), _check_seat("dealer", dealer)
    if payer == winner:
        raise ValueError(f"payer and winner are both seat {payer}")
    total = _check_points("P", P) + _check_points("G", G)
    return int(_payment(dealer, _check_streak(streak), payer, winner, bool(self_draw), total, r.params()))


def settle_self_draw(winner: int, P: int, G: int, *, dealer: int, streak: int = 0,
                     rules: JiatingRules | None = None) -> list[int]:
    """Each seat's score change for a self-draw (J-6.5): the other three pay.

    Returns ``[int] * 4`` summing to zero.  Raises ``ValueError`` for bad input
    (bounds as :func:`payment`).
    """
    r = rules or DEFAULT_RULES
    out = np.zeros(4, np.int64)
    total = _check_points("P", P) + _check_points("G", G)
    _payments(_check_seat("dealer", dealer), _check_streak(streak), _check_seat("winner", winner),
              WIN_SELF_DRAW, -1, total, r.params(), out)
    return [int(x) for x in out]


def settle_discard(discarder: int, winners: Sequence[tuple[int, int, int]], *, dealer: int,
                   streak: int = 0, rules: JiatingRules | None = None) -> list[int]:
    """Score changes for one discard (or robbed kong) won by one or more seats.

    ``winners``: ``[(seat, P, G), ...]``, distinct seats other than the
    discarder; the discarder pays each winner separately (J-3.4, J-6.5).
    Returns ``[int] * 4`` summing to zero.  Raises ``ValueError`` for bad
    seats, duplicates, no winner, or values out of bounds (as :func:`payment`).
    """
    r = rules or DEFAULT_RULES
    discarder, dealer = _check_seat("discarder", discarder), _check_seat("dealer", dealer)
    streak = _check_streak(streak)
    if not winners:
        raise ValueError("settle_discard needs at least one winner")
    seen: set[int] = set()
    params = r.params()
    out = np.zeros(4, np.int64)
    for item in winners:
        if not isinstance(item, (tuple, list)) or len(item) != 3:
            raise ValueError(f"winner {short_repr(item)}: expected (seat, P, G)")
        w = _check_seat("winner", item[0])
        if w == discarder or w in seen:
            raise ValueError(f"winner seat {w} is the discarder or listed twice")
        seen.add(w)
        total = _check_points("P", item[1]) + _check_points("G", item[2])
        _payments(dealer, streak, w, WIN_DISCARD, discarder, total, params, out)
    return [int(x) for x in out]


# ---------------------------------------------------------------------------
# win evaluation (J-5, J-6.1, J-6.3, J-7)
# ---------------------------------------------------------------------------
_CASE_KEYS = {
    "id", "rules", "dealer", "streak", "winner", "win_type", "discarder", "concealed", "melds",
    "win_tile", "replacement_draw", "declaration", "first_turn", "visible", "on_dealers_first_discard",
    "expect",
}
_REQUIRED = ("dealer", "winner", "win_type", "concealed", "win_tile")
_MELD_SIZE = {"pong": 3, "kong_exposed": 4, "kong_added": 4, "kong_concealed": 4}


@dataclasses.dataclass(frozen=True)
class JiatingWin:
    """The scored win of one hand.

    ``win``: legal win (J-5.1); ``patterns``: ID -> points after doubling and
    exclusions (ID order); ``P``, ``G`` (J-6.1); ``scores``: each seat's change
    (``[int] * 4``, zero-sum); ``hand``: the chosen reading and wait
    (:class:`WinningHand`, None when not a win); ``context``.
    """

    win: bool
    patterns: dict[str, int]
    P: int
    G: int
    scores: list[int]
    hand: WinningHand | None
    context: WinContext | None


def kong_points(melds: Sequence[tuple[str, int]], rules: JiatingRules | None = None) -> int:
    """``G`` (J-6.1): the winner's kong points, ``melds = [(type name, kind), ...]``."""
    r = rules or DEFAULT_RULES
    g = 0
    for t, _ in melds:
        if t in ("kong_exposed", "kong_added"):
            g += r.kong_exposed_points
        elif t == "kong_concealed":
            g += r.kong_concealed_points
    return g


def score_hand(h: WinningHand, rules: JiatingRules | None = None) -> tuple[int, dict[str, int]]:
    """``(P, patterns)`` of one reading and wait (J-6.1, J-6.3, J-7).

    Patterns with 0 points are off.  Exclusions act on the patterns whose
    definition holds; an ``each`` pattern sums its witnesses; any other
    pattern is multiplied by ``concealed_factor`` when it is a doubled pattern
    and one of its witnesses is the winner's own (J-6.3).
    """
    r = rules or DEFAULT_RULES
    pts, excl, doubled = r._tables()
    hits: dict[str, tuple[_pat.Pattern, list]] = {}
    for pat in PATTERNS:
        if pts[pat.id] == 0:
            continue
        w = pat.predicate(h)
        if w:
            hits[pat.id] = (pat, w)
    removed: set[str] = set()
    for pid in hits:
        removed.update(excl.get(pid, ()))
    f = r.concealed_factor
    out: dict[str, int] = {}
    for pid, (pat, ws) in hits.items():
        if pid in removed:
            continue
        base = pts[pid]
        dbl = pid in doubled
        if pat.each:
            out[pid] = sum(base * (f if dbl and h.is_own(w) else 1) for w in ws)
        else:
            out[pid] = base * (f if dbl and any(h.is_own(w) for w in ws) else 1)
    return sum(out.values()), out


def winning_hands(reading, melds: Sequence[tuple[str, int]], ctx: WinContext) -> list[WinningHand]:
    """Every (reading, wait) view of one concealed reading (J-5.3).

    ``reading``: a :class:`caishen.sim.hand.Reading` (or any object with ``form`` and
    ``groups`` of ``type``/``kind``) of the concealed tiles including the
    winning tile; ``melds``: ``[(type name, kind), ...]`` added as sets.
    One view per distinct group (type, kind) that holds the winning tile.
    """
    concealed = [HandGroup(g.type, int(g.kind), _pat.SOURCE_HAND) for g in reading.groups]
    groups = concealed + [HandGroup("triplet", int(k), t) for t, k in melds]
    w = ctx.win_kind
    out = []
    seen = set()
    for i, g in enumerate(concealed):
        holds = (g.kind <= w <= g.kind + 2) if g.type == "run" else g.kind == w
        if holds and (g.type, g.kind) not in seen:
            seen.add((g.type, g.kind))
            out.append(WinningHand(reading.form, groups, i, ctx))
    return out


def _parse_bool(case: dict, key: str) -> bool:
    v = case.get(key, False)
    if not isinstance(v, bool):
        raise ValueError(f"case key {key!r} must be true or false, got {short_repr(v)}")
    return v


def _parse_str(case: dict, key: str, default: str | None = None) -> str:
    """The string value of ``key`` (JSON type checked before any lookup)."""
    v = case.get(key, default)
    if not isinstance(v, str):
        raise ValueError(f"case key {key!r} must be a string, got {type(v).__name__} {short_repr(v)}")
    return v


def _parse_tiles(case: dict, key: str, default: str | None = None) -> np.ndarray:
    """``int64[34]`` counts of the tile string under ``key``; errors name the key."""
    text = _parse_str(case, key, default)
    try:
        return _tiles.parse(text).astype(np.int64)
    except ValueError as e:
        raise ValueError(f"{key}: {short_text(str(e), 300)}") from None


def _check_playable(c: dict) -> None:
    """Reject a case that play cannot produce (decision D11, items 1-16).

    ``c``: the parsed case of :func:`_parse_case`.  Raises ``ValueError``
    naming the contradiction and its rule.
    """
    decl, melds, wt = c["declaration"], c["melds"], c["win_type"]
    dealer_wins = c["winner"] == c["dealer"]
    n_visible = int(c["visible"].sum())
    if c["first_turn"]:  # 天胡, J-5.4, J9
        if not dealer_wins:
            raise ValueError(f"first_turn (天胡, J-5.4) is the dealer's win, but the winner is seat {c['winner']} "
                             f"and the dealer seat {c['dealer']}")
        if wt != "self_draw":
            raise ValueError(f"first_turn (天胡, J-5.4) is a self-draw on the dealt tiles, not a {wt} win")
        if melds:
            raise ValueError(f"first_turn (天胡, J-5.4) with a {melds[0][0]}: the dealer wins on its 14 dealt tiles, "
                             "before any meld or kong")
        if c["replacement"]:
            raise ValueError("first_turn (天胡, J-5.4) with replacement_draw: 天胡 is won on the dealt tiles")
        if decl != "none":
            raise ValueError(f"first_turn (天胡, J-5.4) with declaration {decl!r}: the dealer declares only with a "
                             "discard (J-4.1, J-4.2), and 天胡 comes before its first discard")
        if n_visible:
            raise ValueError("first_turn (天胡, J-5.4) with visible tiles: nothing is discarded or melded before "
                             "the dealer's first discard")
    if c["replacement"]:  # 杠后开花, J-3.2, P18
        if wt != "self_draw":
            raise ValueError(f"replacement_draw (J-3.2) is a self-draw from the wall's tail, not a {wt} win")
        if not any(t.startswith("kong") for t, _ in melds):
            raise ValueError("replacement_draw (J-3.2) needs a kong among the winner's melds")
        if decl == "hard":
            raise ValueError("replacement_draw with declaration 'hard': a 硬子 seat makes no kong after declaring "
                             "(J-4.2), and a win on the replacement draw of a kong made before comes before the "
                             "declaration")
    if decl == "hard":  # 硬子, J-4.2, J2
        if not dealer_wins and melds:
            raise ValueError(f"declaration 'hard' by a non-dealer holding a {melds[0][0]}: a non-dealer declares "
                             "硬子 at the deal, before any meld, and makes none afterwards (J-4.2)")
        claimed = [t for t, _ in melds if t != "kong_concealed"]
        if dealer_wins and claimed:
            raise ValueError(f"declaration 'hard' by the dealer holding a {claimed[0]}: before its first discard "
                             "the dealer can only make concealed kongs, and after declaring no pong or kong (J-4.2)")
    if c["on_first"]:  # P47 option dihu
        if wt != "discard" or c["discarder"] != c["dealer"]:
            raise ValueError("on_dealers_first_discard needs a discard win on a tile the dealer discarded")
        if melds:
            raise ValueError(f"on_dealers_first_discard with a {melds[0][0]}: before the dealer's first discard "
                             "nobody else has had a turn")
        if decl == "jiating":
            raise ValueError("on_dealers_first_discard with declaration 'jiating': the winner declares 架听 only "
                             "with a discard (J-4.1) and has not discarded yet")
        if n_visible:
            raise ValueError("on_dealers_first_discard with visible tiles: nothing but the winning tile has been "
                             "discarded or melded yet")
    if wt == "robbed_kong" and c["own"][c["win_kind"]] > 0:  # J-3.3
        raise ValueError(
            f"robbed_kong on {_tiles.kind_name(c['win_kind'])}: the robbed pong holds three copies and the robbed "
            f"tile is the fourth, but the winner holds {int(c['own'][c['win_kind']])} more (J-3.3)")


def _parse_case(case: dict) -> dict:
    if not isinstance(case, dict):
        raise ValueError(f"a case must be a JSON object, got {type(case).__name__}")
    cid = case.get("id")
    unknown = sorted(set(case) - _CASE_KEYS, key=repr)
    if unknown:
        raise ValueError(f"case {short_repr(cid)}: unknown key(s) {', '.join(short_repr(k) for k in unknown)}")
    for k in _REQUIRED:
        if k not in case:
            raise ValueError(f"case {short_repr(cid)}: missing key {k!r}")
    rules = case.get("rules", "jiating")
    if rules != "jiating" or not isinstance(rules, str):
        raise ValueError(f"case {short_repr(cid)}: rules={short_repr(rules)}, expected 'jiating'")
    dealer = _check_seat("dealer", case["dealer"])
    winner = _check_seat("winner", case["winner"])
    streak = _check_streak(case.get("streak", 0))
    win_type = _parse_str(case, "win_type")
    if win_type not in WIN_TYPES:
        raise ValueError(f"win_type={short_repr(win_type)}: must be one of {', '.join(WIN_TYPES)}")
    discarder = case.get("discarder")
    if win_type == "self_draw":
        if discarder is not None:
            raise ValueError(f"discarder={short_repr(discarder)} given for a self-draw; use null")
    else:
        discarder = _check_seat("discarder", discarder)
        if discarder == winner:
            raise ValueError(f"discarder {discarder} is the winner")
    declaration = _parse_str(case, "declaration", "none")
    if declaration not in _pat.DECLARATIONS:
        raise ValueError(f"declaration={short_repr(declaration)}: must be one of {', '.join(_pat.DECLARATIONS)}")
    replacement = _parse_bool(case, "replacement_draw")
    first_turn = _parse_bool(case, "first_turn")
    on_first = _parse_bool(case, "on_dealers_first_discard")
    melds_in = case.get("melds")
    if melds_in is None:
        melds_in = []
    if not isinstance(melds_in, list) or len(melds_in) > 4:
        raise ValueError(f"melds must be a list of at most 4 melds, got {short_repr(melds_in)}")
    melds: list[tuple[str, int]] = []
    for i, m in enumerate(melds_in):
        if not isinstance(m, dict) or set(m) != {"type", "tiles"}:
            raise ValueError(f"melds[{i}] {short_repr(m)}: expected {{'type': ..., 'tiles': ...}}")
        t = m["type"]
        if not isinstance(t, str) or t not in _MELD_SIZE:
            raise ValueError(f"melds[{i}] type {short_repr(t)} is not allowed in Jiating (J-3.1: pong and kong "
                             f"only: {', '.join(_MELD_SIZE)})")
        if not isinstance(m["tiles"], str):
            raise ValueError(f"melds[{i}] tiles must be a string, got {type(m['tiles']).__name__}")
        try:
            ks = _tiles.parse_kinds(m["tiles"])
        except ValueError as e:
            raise ValueError(f"melds[{i}]: {short_text(str(e), 300)}") from None
        if len(ks) != _MELD_SIZE[t] or len(set(ks)) != 1:
            raise ValueError(f"melds[{i}] {short_repr(m['tiles'])}: a {t} is {_MELD_SIZE[t]} tiles of one kind")
        melds.append((t, ks[0]))
    concealed = _parse_tiles(case, "concealed")
    need = 13 - 3 * len(melds)
    if int(concealed.sum()) != need:
        raise ValueError(f"concealed {short_repr(case['concealed'])} has {int(concealed.sum())} tiles; "
                         f"with {len(melds)} meld(s) the hand before the win has {need}")
    win_text = _parse_str(case, "win_tile")
    try:
        wk = _tiles.parse_kinds(win_text)
    except ValueError as e:
        raise ValueError(f"win_tile: {short_text(str(e), 300)}") from None
    if len(wk) != 1:
        raise ValueError(f"win_tile {short_repr(case['win_tile'])}: give exactly one tile")
    win_kind = wk[0]
    own = concealed.copy()
    for t, k in melds:
        own[k] += _MELD_SIZE[t]
    visible = _parse_tiles(case, "visible", "") if case.get("visible") is not None else np.zeros(34, np.int64)
    # J-3.3 (D11 item 16): a robbed kong implies the robbed pong's three copies, listed in visible or not
    seen = visible.copy()
    if win_type == "robbed_kong":
        seen[win_kind] = max(seen[win_kind], 3)
    total = own + seen
    total[win_kind] += 1
    c = dict(id=cid, dealer=dealer, winner=winner, streak=streak, win_type=win_type,
             discarder=discarder, declaration=declaration, replacement=replacement, first_turn=first_turn,
             on_first=on_first, melds=melds, concealed=concealed, win_kind=win_kind, own=own,
             visible=visible, seen=seen)
    _check_playable(c)  # D11 items 1-16 (item 16 before the count, for its clearer message)
    if (total > 4).any():
        k = int(np.flatnonzero(total > 4)[0])
        robbed = " (with the robbed pong's three)" if win_type == "robbed_kong" and k == win_kind else ""
        raise ValueError(f"more than four {_tiles.kind_name(k)} ({int(total[k])}) among hand, melds, winning tile "
                         f"and visible tiles{robbed}")
    return c


def evaluate(case: dict, rules: JiatingRules | None = None) -> JiatingWin:
    """Score one won hand given as a scoring-vector case (``shared/vectors``).

    Checks the win (J-5.1), enumerates every reading of the concealed tiles
    (:func:`caishen.sim.hand.readings`) with the declared melds as extra sets and
    every wait, keeps the one with the highest ``P`` (J-5.3), adds ``G``
    (J-6.1) and settles the payments (J-6.2, J-6.4, J-6.5).  A case that is
    not a legal win gets ``win=False``, no patterns and zero scores.  Raises
    ``ValueError`` naming a bad key or value (unknown key, a key of the wrong
    JSON type, bad seat or tile, wrong tile count, a fifth copy of a kind, a
    chow, a streak outside ``0..MAX_STREAK``) or the contradiction of a
    case that play cannot produce (decision D11).
    """
    r = rules or DEFAULT_RULES
    c = _parse_case(case)
    full = c["concealed"].copy()
    full[c["win_kind"]] += 1
    rds = _hand.readings(full.astype(np.uint8))
    if not rds:
        return JiatingWin(False, {}, 0, 0, [0, 0, 0, 0], None, None)
    waits = tuple(k for k in _hand.waits(c["concealed"].astype(np.uint8)) if c["own"][k] < 4)
    ctx = WinContext(
        win_kind=c["win_kind"], win_type=c["win_type"], replacement_draw=c["replacement"],
        declaration=c["declaration"], first_turn=c["first_turn"], winner_is_dealer=c["winner"] == c["dealer"],
        on_dealers_first_discard=c["on_first"], waits=waits,
        seen_of_win_kind=int(c["own"][c["win_kind"]] + c["seen"][c["win_kind"]]), dihu=r.dihu,
    )
    best = None
    for rd in rds:
        for h in winning_hands(rd, c["melds"], ctx):
            P, pats = score_hand(h, r)
            key = (P, sorted(pats.items()))
            if best is None or key > best[0]:
                best = (key, h, pats)
    (P, _), h, pats = best
    G = kong_points(c["melds"], r)
    if c["win_type"] == "self_draw":
        scores = settle_self_draw(c["winner"], P, G, dealer=c["dealer"], streak=c["streak"], rules=r)
    else:
        scores = settle_discard(c["discarder"], [(c["winner"], P, G)], dealer=c["dealer"],
                                streak=c["streak"], rules=r)
    patterns = {pid: pats[pid] for pid in PATTERN_IDS if pid in pats}
    return JiatingWin(True, patterns, P, G, scores, h, ctx)


def score(case: dict, rules: JiatingRules | None = None) -> dict:
    """Score one scoring-vector case: ``{id, win, patterns, P, G, scores}``.

    See :func:`evaluate` (rules J-5, J-6, J-7; errors raised).  The ``expect``
    key of a vector is ignored.
    """
    res = evaluate(case, rules)
    return {"id": case.get("id"), "win": res.win, "patterns": res.patterns, "P": res.P, "G": res.G,
            "scores": res.scores}


def score_discard_winners(cases: Sequence[dict], rules: JiatingRules | None = None) -> dict:
    """Several winners of one discard (一炮多响, J-3.4): each paid by the discarder.

    ``cases``: one case per winner, all with the same ``dealer``, ``streak``,
    ``win_type`` (discard or robbed kong), ``discarder``, ``win_tile`` and
    ``on_dealers_first_discard`` (it is one tile), distinct winners, and
    together at most four copies of any kind among the winners' hands and
    melds, the one winning tile and, on a robbed kong, the robbed pong
    (decision D11 across the winners).  Returns ``{"wins": [score(case)
    ...], "scores": [int] * 4}`` with the summed score changes (zero-sum).
    A case that is not a legal win raises ``ValueError``, as do mismatched
    or together impossible cases.
    """
    if not isinstance(cases, (list, tuple)) or not cases:
        raise ValueError("score_discard_winners needs a non-empty list of cases")
    r = rules or DEFAULT_RULES
    parsed = [_parse_case(c) for c in cases]
    first = parsed[0]
    for c in parsed:
        for k, name in (("dealer", "dealer"), ("streak", "streak"), ("win_type", "win_type"),
                        ("discarder", "discarder"), ("win_kind", "win_tile"), ("on_first", "on_dealers_first_discard")):
            if c[k] != first[k]:
                raise ValueError(f"case {short_repr(c['id'])}: {name} differs from the first case's "
                                 "(several winners of one discard share it)")
    if first["win_type"] not in ("discard", "robbed_kong"):
        raise ValueError(f"win_type={first['win_type']!r}: several winners need a discard or robbed kong")
    total = sum(c["own"] for c in parsed)
    total[first["win_kind"]] += 1 + (3 if first["win_type"] == "robbed_kong" else 0)
    if (total > 4).any():
        k = int(np.flatnonzero(total > 4)[0])
        raise ValueError(f"more than four {_tiles.kind_name(k)} ({int(total[k])}) among the winners' hands and "
                         "melds and the winning tile")
    results = [evaluate(c, r) for c in cases]
    for c, res in zip(parsed, results):
        if not res.win:
            raise ValueError(f"case {short_repr(c['id'])} is not a legal win (J-5.1)")
    winners = [(c["winner"], res.P, res.G) for c, res in zip(parsed, results)]
    scores = settle_discard(first["discarder"], winners, dealer=first["dealer"], streak=first["streak"], rules=r)
    wins = [{"id": c["id"], "win": True, "patterns": res.patterns, "P": res.P, "G": res.G,
             "scores": settle_discard(c["discarder"], [(c["winner"], res.P, res.G)], dealer=c["dealer"],
                                      streak=c["streak"], rules=r)}
            for c, res in zip(parsed, results)]
    return {"wins": wins, "scores": scores}
