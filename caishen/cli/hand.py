"""``caishen hand TILES``: shanten, waits and effective tiles of a hand (:mod:`caishen.sim.hand`)."""

from __future__ import annotations

import json


def add(sub) -> None:
    p = sub.add_parser(
        "hand",
        help="shanten, waits and effective tiles of a hand",
        description="Shanten (-1 = complete), waits and effective tiles of a concealed hand "
        "in mpsz notation, e.g. 123m456p789s23s55z (13 tiles).  Effective tiles are the tiles that lower the "
        "shanten by shape (the joker among them: it stands for any tile); with --rules the waits are the "
        "tiles a self-draw win is legal on, and each shape wait the rules refuse is named with the rule "
        "that refuses it (a 财神 drawn with two more in hand is one: K-2.4)."
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
    from caishen.sim.termtext import WIDTH, wrap, wrap_lines

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
            info["not_waits"] = vectors.gate_notes(args.rules, counts,
                                                   [w for w in info["waits_shape"] if w not in info["waits"]])
        else:  # complete under the rules: some tile of the 14, taken as the drawn tile, wins by self-draw
            info["win_shape"] = info["win"]
            info["win"] = any(
                vectors.gated_waits(args.rules, counts - (np.arange(34) == k), [tiles.kind_name(k)])
                for k in np.flatnonzero(counts)
            ) if info["win"] else False
            if info["win_shape"] and not info["win"]:  # why not, as a self-draw of one of them (not the joker)
                kinds = sorted(np.flatnonzero(counts), key=lambda k: k == joker)
                draw = tiles.kind_name(int(kinds[0]))
                info["why_not"] = vectors.gate_notes(args.rules, counts - (np.arange(34) == kinds[0]), [draw])[draw]
            best = vectors.best_self_draw(args.rules, counts) if info["win"] else None
            if best is not None:  # the score explained (the rule set's words hook)
                info["score"] = {"tile": best[0], "lines": best[1].lines(), "breakdown": best[1].to_json()}
    if args.json:
        print(json.dumps(info, ensure_ascii=False))
        return 0
    shows = "shape only" if args.rules is None else f"{args.rules} win gates, self-draw"
    jname = tiles.kind_name(joker) if joker >= 0 else None
    what = "the 财神" if rules_joker else "the joker"

    def named(t: str) -> str:  # the joker said in words wherever a tile list shows it
        return f"{t} ({what})" if t == jname else t

    def say(label: str, text: str) -> None:  # wrapped to 100 columns (wide characters count 2) under its label
        pieces = wrap(text, WIDTH - 11, indent="")
        print("\n".join(f"{label if i == 0 else '':<11}{piece}" for i, piece in enumerate(pieces)))

    say("hand:", tiles.to_str(counts) + (f"   (joker {jname}" + (": the 财神" if rules_joker else "") + ", wild)"
                                         if jname else ""))
    say("shanten:", f"{info['shanten']}  (standard {info['shanten_standard']}, seven pairs "
        f"{info['shanten_seven_pairs']})")
    if n % 3 == 2:
        say("complete:", f"{'yes' if info['win'] else 'no'}  ({shows})")
        if args.rules is not None and info["win_shape"] and not info["win"]:
            say("", f"why: {info['why_not']}")
        if info["win"] and args.rules is None:
            say("", "(give --rules R to see what it scores under rule set R)")
        if info.get("score"):
            say("score:", f"as a self-draw on {info['score']['tile']} by seat 1, the dealer seat 0 (no melds, no "
                "chain, no declaration):")
            print("\n".join(wrap_lines((f"  {line}" for line in info["score"]["lines"]), indent="      ")))
        for d in info.get("discards", []):
            eff = " ".join(f"{k}({c})" for k, c in d["effective"])
            line = f"discard {named(d['discard'])}: shanten {d['shanten']}, {d['live']} live tiles: {eff}"
            print("\n".join(wrap(line, indent=" " * 11)))
    else:
        say("waits:", f"{' '.join(map(named, info['waits'])) or '-'}  ({shows})")
        if args.rules is not None and info["waits"] != info["waits_shape"]:
            say("", f"by shape: {' '.join(map(named, info['waits_shape'])) or '-'}")
            for t, why in info["not_waits"].items():
                say("", f"not a wait under {args.rules}: {named(t)}: {why}")
        eff = " ".join(f"{k}({c})" for k, c in info["effective"])
        say("effective:", f"{eff or '-'}  [{info['live']} live tiles]")
        if jname in {k for k, _ in info["effective"]}:
            gated = args.rules is not None and jname in info.get("not_waits", {})
            say("", f"{named(jname)} lowers the shanten by shape (it stands for any tile)"
                + (f"; under {args.rules} drawing it is no win (above)" if gated else ""))
    return 0
