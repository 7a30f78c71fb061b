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
from caishen.sim.rules.options import MAX_INT_OPTION, Options, coerce_int, option, short_repr


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

    Each field is one :func:`~caishen.sim.rules.options.option` declaration
    (default, rule ID, bounds, doc line, kernel slot ``P_*`` of
    :mod:`caishen.sim.rules.jiating.layout`): :meth:`declarations` lists
    them, ``docs/rules/jiating.md``'s options table shows them.  The bounds
    keep every score below ``2**53`` (module docstring of
    :mod:`caishen.sim.rules.jiating`).  ``pattern_points`` accepts a partial
    mapping (or ``"P25:30,P38:50"``) merged over the J-8 defaults and is
    stored as ``((ID, points), ...)`` for all fifty IDs; ``exclusions``
    accepts a mapping or ``"P12>P10;P31>P08,P10,P09"``.

    Raises ``ValueError`` naming an unknown option, pattern ID or bad value.
    """

    N_PARAMS = N_PARAMS

    reserved_tiles: int = option(0, "tiles at the wall's end never drawn", rule="J-1.2", lo=0, hi=82,
                                 slot=P_RESERVED_TILES)
    passed_pong_scope: Literal["same_kind", "any"] = option(
        "same_kind", "the passed-pong ban: same_kind or any", rule="J-3.6", slot=P_PASSED_PONG_SCOPE,
        codes=PONG_SCOPE_CODES)
    dealer_factor: int = option(2, "the dealer's payments are min(dealer_factor * (P + G), dealer_cap)",
                                rule="J-6.2", lo=1, hi=MAX_FACTOR, slot=P_DEALER_FACTOR)
    dealer_cap: int | None = option(400, "cap of a payment with the dealer; None = no cap", rule="J-6.2", lo=0,
                                    hi=MAX_INT_OPTION, slot=P_DEALER_CAP)
    cap: int | None = option(200, "cap of the other payments, min(P + G, cap); None = no cap", rule="J-6.2", lo=0,
                             hi=MAX_INT_OPTION, slot=P_CAP)
    streak_step: int = option(2, "added per streak step k to every payment in which the dealer pays or wins",
                              rule="J-6.4", lo=0, hi=MAX_POINTS_OPTION, slot=P_STREAK_STEP)
    dihu: Literal["dealer_ready_first_discard", "win_on_dealers_first_discard",
                  "dealer_ready_undeclared"] = option(
        "dealer_ready_first_discard", "the P47 (地胡) variant: the hard-declared dealer ready after its first "
        "discard wins, a non-dealer wins on that discard, or the dealer ready after it wins (ambiguity 3)", rule="P47", slot=P_DIHU, codes=DIHU_CODES)
    kong_exposed_points: int = option(8, "G per exposed or added kong of the winner", rule="J-6.1", lo=0,
                                      hi=MAX_POINTS_OPTION, slot=P_KONG_EXPOSED_POINTS)
    kong_concealed_points: int = option(12, "G per concealed kong of the winner", rule="J-6.1", lo=0,
                                        hi=MAX_POINTS_OPTION, slot=P_KONG_CONCEALED_POINTS)
    bonus_discard: int = option(1, "bonus of a discard win between non-dealers", rule="J-6.4", lo=0,
                                hi=MAX_POINTS_OPTION, slot=P_BONUS_DISCARD)
    bonus_discard_dealer: int = option(2, "bonus of a discard win with the dealer on either side", rule="J-6.4",
                                       lo=0, hi=MAX_POINTS_OPTION, slot=P_BONUS_DISCARD_DEALER)
    bonus_self_draw: int = option(2, "bonus each other non-dealer pays on a non-dealer's self-draw", rule="J-6.4",
                                  lo=0, hi=MAX_POINTS_OPTION, slot=P_BONUS_SELF_DRAW)
    bonus_self_draw_dealer: int = option(4, "bonus of a self-draw the dealer pays or wins", rule="J-6.4", lo=0,
                                         hi=MAX_POINTS_OPTION, slot=P_BONUS_SELF_DRAW_DEALER)
    concealed_factor: int = option(2, "factor of a doubled pattern with an own witness", rule="J-6.3", lo=1,
                                   hi=MAX_FACTOR, slot=P_CONCEALED_FACTOR)
    pattern_points: tuple[tuple[str, int], ...] = option(
        tuple((pid, DEFAULT_POINTS[pid]) for pid in PATTERN_IDS),
        "pattern ID -> points, merged over the J-8 defaults (\"P25:30,P38:50\"); 0 switches a pattern off",
        rule="J-8")
    doubled_patterns: tuple[str, ...] = option(DEFAULT_DOUBLED, "the IDs concealed doubling applies to (J-8 暗x2)",
                                               rule="J-6.3")
    exclusions: tuple[tuple[str, tuple[str, ...]], ...] = option(
        DEFAULT_EXCLUSIONS, "pattern ID -> the IDs it excludes (\"P12>P10;P31>P08,P10,P09\"); replaces the list",
        rule="J-7")

    def _check(self) -> None:
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
