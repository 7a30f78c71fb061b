"""``caishen hand TILES``: shanten, waits and effective tiles of a hand (:mod:`caishen.sim.hand`)."""

from __future__ import annotations

import json


def add(sub) -> None:
    p = sub.add_parser(
        "hand",
        help="shanten, waits and effective tiles of a hand",
        description="Shanten (-1 = complete), waits and effective tiles of a concealed hand "
        "in mpsz notation, e.g. 123m456p789s23s55z (13 tiles)."
    )
    p.add_argument("tiles", help="concealed tiles in mpsz notation (3m+1 or 3m+2 tiles)")
    p.add_argument("--joker", default=None, help="wildcard kind, e.g. 5z (the 财神, K-2.1); default none "
                   "(with --rules: the rule set's joker)")
    p.add_argument("--visible", default="", help="tiles already seen elsewhere (discards, melds), mpsz")
    p.add_argument("--rules", default=None,
                   help="a rule set (see --rules of simulate): apply its win gates to the waits (and to 'complete'): keep a wait only if a "
                   "self-draw win on it is legal under the rule set (e.g. K-2.4 three or four 财神, K-2.5 a "
                   "财神 drawn to a 爆头 shape, K-2.6 two 财神 need an exponent). Default: shape only")
    p.add_argument("--json", action="store_true", help="print one JSON object instead of text")
    p.set_defaults(func=run)


def _hand_joker(rules: str) -> str | None:
    """The joker of a registered rule set as a tile name (``"5z"``), None without one;
    ``ValueError`` for an unknown rule set or one that scores no vector cases (no win gate)."""
    from caishen.sim import tiles
    from caishen.sim.rules import base as _rulesets

    rs = _rulesets.get(rules)
    if rs.score is None:
        raise ValueError(f"--rules {rules}: the rule set scores no cases, so it has no win gate")
    joker = rs.facts["joker"]
    return tiles.kind_name(joker) if joker >= 0 else None


def run(args) -> int:
    import numpy as np

    from caishen.sim import hand, tiles
    from caishen.sim.rules import vectors
    from caishen.sim.rules.options import short_repr

    counts = tiles.parse(args.tiles)
    joker = -1
    rules_joker = _hand_joker(args.rules) if args.rules is not None else None
    if args.rules is not None and args.joker:
        if rules_joker is None:
            raise ValueError(f"--joker {short_repr(args.joker)} with --rules {args.rules}: {args.rules} has no joker "
                             "(J-1.1)")
        if tiles.parse_kinds(args.joker) != tiles.parse_kinds(rules_joker):
            raise ValueError(f"--joker {short_repr(args.joker)} with --rules {args.rules}: its 财神 is "
                             f"{rules_joker} (K-2.1)")
    joker_text = args.joker or rules_joker
    if joker_text:
        ks = tiles.parse_kinds(joker_text)
        if len(ks) != 1:
            raise ValueError(f"--joker {short_repr(joker_text)}: give exactly one tile kind, e.g. 5z")
        joker = ks[0]
    visible = tiles.parse(args.visible) if args.visible else None
    n = int(counts.sum())
    if n % 3 == 0 or n > 14:
        raise ValueError(f"hand {short_repr(args.tiles)} has {n} tiles; a concealed hand has 3m+1 or 3m+2 tiles "
                         "(at most 14)")
    if args.rules is not None and n < 13:
        raise ValueError(f"--rules {args.rules} gates a hand without melds: give 13 or 14 tiles, not {n}")
    info = hand.describe(counts, joker, visible)
    info["rules"] = args.rules  # which list "waits" / "win" show: None = shape only
    if args.rules is not None:
        if n % 3 == 1:
            info["waits_shape"] = info["waits"]
            info["waits"] = vectors.gated_waits(args.rules, counts, info["waits"])
        else:  # complete under the rules: some tile of the 14, taken as the drawn tile, wins by self-draw
            info["win_shape"] = info["win"]
            info["win"] = any(
                vectors.gated_waits(args.rules, counts - (np.arange(34) == k), [tiles.kind_name(k)])
                for k in np.flatnonzero(counts)
            ) if info["win"] else False
            best = vectors.best_self_draw(args.rules, counts) if info["win"] else None
            if best is not None:  # the score explained (the rule set's words hook)
                info["score"] = {"tile": best[0], "lines": best[1].lines(), "breakdown": best[1].to_json()}
    if args.json:
        print(json.dumps(info, ensure_ascii=False))
        return 0
    shows = "shape only" if args.rules is None else f"{args.rules} win gates, self-draw"
    print(f"hand:      {tiles.to_str(counts)}" + (f"   (joker {tiles.kind_name(joker)})" if joker >= 0 else ""))
    print(f"shanten:   {info['shanten']}  (standard {info['shanten_standard']}, seven pairs {info['shanten_seven_pairs']})")
    if n % 3 == 2:
        print(f"complete:  {'yes' if info['win'] else 'no'}  ({shows})")
        if info["win"] and args.rules is None:
            print("           (give --rules R to see what it scores under rule set R)")
        if info.get("score"):
            print(f"score:     as a self-draw on {info['score']['tile']} by seat 1, the dealer seat 0 "
                  "(no melds, no chain, no declaration):")
            print("\n".join(f"  {line}" for line in info["score"]["lines"]))
        for d in info.get("discards", []):
            eff = " ".join(f"{k}({c})" for k, c in d["effective"])
            print(f"discard {d['discard']}: shanten {d['shanten']}, {d['live']} live tiles: {eff}")
    else:
        print(f"waits:     {' '.join(info['waits']) or '-'}  ({shows})")
        if args.rules is not None and info["waits"] != info["waits_shape"]:
            print(f"           by shape: {' '.join(info['waits_shape']) or '-'}")
        eff = " ".join(f"{k}({c})" for k, c in info["effective"])
        print(f"effective: {eff or '-'}  [{info['live']} live tiles]")
    return 0
