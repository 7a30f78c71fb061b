"""Jiating's rule options: :class:`JiatingRules`, validated and packed for the kernels.

Every option of J-1.2, J-3.6, J-6 (caps, factors, bonuses, kong points), the
P47 variant (``dihu``) and the J-7 / J-8 data (pattern points, doubled
patterns, exclusions) is a field with the spec's default; ``params()`` packs
them as ``int64[N_PARAMS]`` (``P_*`` of :mod:`caishen.sim.rules.jiating.layout`)
and ``pattern_tables()`` as the arrays the scoring kernels read.  The bounds
(``MAX_*``) keep every score of a hand below ``2**53``.
"""

from __future__ import annotations

import dataclasses
import json
from typing import Any, Literal

import numpy as np

from caishen.sim.rules.jiating.layout import (
    DIHU_CODES,
    MAX_FACTOR,
    MAX_POINTS_OPTION,
    N_PARAMS,
    N_PATTERN_SLOTS,
    PONG_SCOPE_CODES,
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
)
from caishen.sim.rules.jiating.tables import (
    DEFAULT_DOUBLED,
    DEFAULT_EXCLUSIONS,
    DEFAULT_POINTS,
    PATTERN_IDS,
    PATTERN_NAMES,
)
from caishen.sim.rules.options import MAX_INT_OPTION, Options, coerce_int, short_repr
from caishen.sim.validate import check_int


#: pattern number (1..50) of each ID, the index into ``pattern_tables()``
PATTERN_INDEX = {pid: int(pid[1:]) for pid in PATTERN_IDS}


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
    - ``dihu`` (P47, ambiguity 3): ``"dealer_ready_first_discard"`` (the
      dealer ready after its first discard, declared hard, wins) |
      ``"win_on_dealers_first_discard"`` (a non-dealer wins on that discard) |
      ``"dealer_ready_undeclared"`` (the dealer ready after its first
      discard wins, with or without the hard declaration).
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
    dihu: Literal["dealer_ready_first_discard", "win_on_dealers_first_discard",
                  "dealer_ready_undeclared"] = "dealer_ready_first_discard"
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
            check_int(f"option {name}", getattr(self, name), lo, hi)

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
