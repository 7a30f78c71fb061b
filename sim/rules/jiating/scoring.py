"""One Jiating scoring-vector case: parse and check it, score it with the kernels, settle it.

:func:`evaluate` and :func:`score` (``caishen score`` for lines with
``"rules": "jiating"``, the ``shared/vectors`` format) parse a case
(:func:`_parse_case`: every key's type and value, a fifth copy of a kind)
and reject a case that play cannot produce (:func:`_check_playable`,
decision D11), then score it with
:func:`caishen.sim.rules.jiating.kernels.score_win` (J-5, J-6, J-7) and
settle the payments (J-6.2 .. J-6.5).  :func:`score_discard_winners` scores
several winners of one discard (一炮多响, J-3.4) after the checks across
the winners (D11 item 19).
"""

from __future__ import annotations

from typing import Sequence

import numpy as np

from caishen.sim import tiles as _tiles
from caishen.sim.rules.jiating.kernels import JiatingWin, WinTiming, score_win
from caishen.sim.rules.jiating.layout import WIN_TYPES
from caishen.sim.rules.jiating.options import DEFAULT_RULES, JiatingRules
from caishen.sim.rules.jiating.payments import _check_seat, _check_streak, settle_discard
from caishen.sim.rules.jiating.tables import DECLARATIONS
from caishen.sim.rules.options import short_repr, short_text


_CASE_KEYS = {
    "id", "rules", "dealer", "streak", "winner", "win_type", "discarder", "concealed", "melds",
    "win_tile", "replacement_draw", "declaration", "first_turn", "visible", "on_dealers_first_discard",
    "dealer_ready_after_first_discard", "expect",
}
_REQUIRED = ("dealer", "winner", "win_type", "concealed", "win_tile")
_MELD_SIZE = {"pong": 3, "kong_exposed": 4, "kong_added": 4, "kong_concealed": 4}


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
    """Reject a case that play cannot produce (decision D11, items 1-16 and 20).

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
    if c["dealer_ready"] and c["first_turn"]:  # P47 option dihu (D11 item 20)
        raise ValueError("dealer_ready_after_first_discard with first_turn: 天胡 (J-5.4) is won before the "
                         "dealer's first discard")
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
    if declaration not in DECLARATIONS:
        raise ValueError(f"declaration={short_repr(declaration)}: must be one of {', '.join(DECLARATIONS)}")
    replacement = _parse_bool(case, "replacement_draw")
    first_turn = _parse_bool(case, "first_turn")
    on_first = _parse_bool(case, "on_dealers_first_discard")
    dealer_ready = _parse_bool(case, "dealer_ready_after_first_discard")
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
             on_first=on_first, dealer_ready=dealer_ready, melds=melds, concealed=concealed, win_kind=win_kind,
             own=own, visible=visible, seen=seen)
    _check_playable(c)  # D11 items 1-16 and 20 (item 16 before the count, for its clearer message)
    if (total > 4).any():
        k = int(np.flatnonzero(total > 4)[0])
        robbed = " (with the robbed pong's three)" if win_type == "robbed_kong" and k == win_kind else ""
        raise ValueError(f"more than four {_tiles.kind_name(k)} ({int(total[k])}) among hand, melds, winning tile "
                         f"and visible tiles{robbed}")
    return c


def evaluate(case: dict, rules: JiatingRules | None = None) -> JiatingWin:
    """Score one won hand given as a scoring-vector case (``shared/vectors``).

    Parses and checks the case (:func:`_parse_case`), then scores it with the
    kernels (:func:`caishen.sim.rules.jiating.kernels.score_win`): the win (J-5.1),
    every reading of the concealed tiles with the declared melds as extra
    sets and every wait, the one with the highest ``P`` (J-5.3), ``G``
    (J-6.1) and the payments (J-6.2, J-6.4, J-6.5).  A case that is not a
    legal win gets ``win=False``, no patterns and zero scores.  Raises
    ``ValueError`` naming a bad key or value (unknown key, a key of the wrong
    JSON type, bad seat or tile, wrong tile count, a fifth copy of a kind, a
    chow, a streak outside ``0..MAX_STREAK``) or the contradiction of a
    case that play cannot produce (decision D11).
    """
    r = rules or DEFAULT_RULES
    c = _parse_case(case)
    wk = c["win_kind"]
    return score_win(
        c["concealed"], wk, melds=c["melds"], win_type=c["win_type"], winner=c["winner"], dealer=c["dealer"],
        discarder=c["discarder"], streak=c["streak"], declaration=c["declaration"],
        timing=WinTiming(c["first_turn"], c["replacement"], c["on_first"], c["dealer_ready"]),
        visible=int(c["visible"][wk]), rules=r,
    )


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
    ``win_type`` (discard or robbed kong), ``discarder``, ``win_tile``,
    ``on_dealers_first_discard`` (it is one tile) and
    ``dealer_ready_after_first_discard`` (one hand), distinct winners, and
    together at most four copies of any kind among the winners' hands and
    melds, the one winning tile and, on a robbed kong, the robbed pong
    (decision D11 across the winners).  Returns ``{"wins": [score(case)
    ...], "scores": [int] * 4}`` with the summed score changes (zero-sum).
    A case that is not a legal win raises ``ValueError``, as do mismatched
    or together impossible cases.
    """
    r = rules or DEFAULT_RULES
    parsed = _parse_discard_winners(cases)
    results = [evaluate(c, r) for c in cases]
    for c, res in zip(parsed, results):
        if not res.win:
            raise ValueError(f"case {short_repr(c['id'])} is not a legal win (J-5.1)")
    first = parsed[0]
    winners = [(c["winner"], res.P, res.G) for c, res in zip(parsed, results)]
    scores = settle_discard(first["discarder"], winners, dealer=first["dealer"], streak=first["streak"], rules=r)
    wins = [{"id": c["id"], "win": True, "patterns": res.patterns, "P": res.P, "G": res.G,
             "scores": settle_discard(c["discarder"], [(c["winner"], res.P, res.G)], dealer=c["dealer"],
                                      streak=c["streak"], rules=r)}
            for c, res in zip(parsed, results)]
    return {"wins": wins, "scores": scores}


def _parse_discard_winners(cases: Sequence[dict]) -> list[dict]:
    """The parsed cases of several winners of one discard, checked across the winners
    (decision D11 item 19); ``ValueError`` for mismatched or together impossible cases."""
    if not isinstance(cases, (list, tuple)) or not cases:
        raise ValueError("score_discard_winners needs a non-empty list of cases")
    parsed = [_parse_case(c) for c in cases]
    first = parsed[0]
    for c in parsed:
        for k, name in (("dealer", "dealer"), ("streak", "streak"), ("win_type", "win_type"),
                        ("discarder", "discarder"), ("win_kind", "win_tile"), ("on_first", "on_dealers_first_discard"),
                        ("dealer_ready", "dealer_ready_after_first_discard")):
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
    return parsed
