"""One Kaihua scoring-vector case (``caishen score``): parse and check it, then score it with the kernels.

:func:`score` reads a case of the ``shared/vectors`` format, rejects what
play cannot produce (:data:`IMPOSSIBLE_CASES`, each with a message naming
the contradiction), and runs the engine's own kernels
(:func:`caishen.sim.rules.kaihua.kernels._evaluate_win`,
:func:`caishen.sim.rules.kaihua.kernels._payments`).
"""

from __future__ import annotations

import numpy as np

from caishen.sim import tiles as _tiles
from caishen.sim.rules.kaihua.kernels import _evaluate_win, _payments
from caishen.sim.rules.kaihua.options import (
    WIN_DISCARD,
    WIN_ROBBED_KONG,
    WIN_SELF_DRAW,
    WIN_TYPES,
    KaihuaRules,
    flag_names,
)
from caishen.sim.tables import hand_tables
from caishen.sim.validate import check_int
from caishen.sim.tiles import CAISHEN, MELD_CHOW, MELD_KONG_ADDED, MELD_KONG_CONCEALED, MELD_KONG_EXPOSED, MELD_PONG


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
    """The seat under ``key`` (0..3, :func:`caishen.sim.validate.check_int`)."""
    return check_int(key, case[key], 0, 3)


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


def evaluate(case: dict, rules: KaihuaRules | None = None) -> dict:
    """Parse, check and score one Kaihua vector case: what :func:`score` reports and what it is made of.

    Returns the parsed case (:func:`_parse_case`'s keys) with ``legal``,
    ``exponent``, ``flags`` (``FLAG_*`` bits), ``piao_links`` and
    ``kong_links`` (the chain links the counted reading counted) of
    :func:`_evaluate_win` and ``scores`` (``int64[4]``, :func:`_payments`; zero
    when not legal).  Raises ``ValueError`` as :func:`score`.
    """
    if rules is None:
        rules = KaihuaRules()
    if not isinstance(rules, KaihuaRules):
        raise ValueError(f"rules must be a KaihuaRules, got {type(rules).__name__}")
    c = _parse_case(case)
    params = rules.params()
    # the counts as uint8, as the engine passes them: the compiled copy every self-play run has cached
    legal, exponent, flags, piao_links, kong_links = _evaluate_win(
        c["concealed"].astype(np.uint8), c["win_tile"], c["meld_types"], c["meld_kinds"], c["n_melds"],
        c["win_type"] == WIN_SELF_DRAW, c["replacement_draw"], c["chain_piao"], c["chain_kong"],
        params, hand_tables(),
    )
    scores = np.zeros(4, np.int64)
    if legal:
        _payments(c["dealer"], c["winner"], c["win_type"], c["discarder"], exponent, c["piao_circle"],
                  params, scores)
    return {**c, "legal": bool(legal), "exponent": int(exponent), "flags": int(flags),
            "piao_links": int(piao_links), "kong_links": int(kong_links), "scores": scores}


def score(case: dict, rules: KaihuaRules | None = None) -> dict:
    """Score one Kaihua vector case (format: ``shared/vectors/README.md``).

    ``case`` is a dict with the keys ``id, rules, dealer, winner, win_type,
    discarder, concealed, melds, win_tile, replacement_draw, chain,
    piao_circle`` (``expect`` is ignored); ``rules`` defaults to
    ``KaihuaRules()``.  Runs the engine's kernels :func:`_evaluate_win` and
    :func:`_payments` (K-2 .. K-9), through :func:`evaluate`.

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
    e = evaluate(case, rules)
    legal = e["legal"]
    return {
        "id": e["id"],
        "win": legal,
        "exponent": e["exponent"] if legal else None,
        "flags": flag_names(e["flags"]) if legal else [],
        "scores": [int(x) for x in e["scores"]],
    }
