"""The ``caishen`` command line (also ``python -m sim``).

Subcommands:

- ``caishen hand TILES [--joker 5z]``: shanten, waits and effective tiles of a hand.

Each subcommand is registered by one ``_add_<name>`` function below and runs
through one ``_cmd_<name>`` function; errors in user input exit with status 2
and a message naming the bad value.
"""

from __future__ import annotations

import argparse
import json
import sys


def _add_hand(sub) -> None:
    p = sub.add_parser(
        "hand",
        help="shanten, waits and effective tiles of a hand",
        description="Shanten (-1 = complete), waits and effective tiles of a concealed hand "
        "in mpsz notation, e.g. 123m456p789s23s5z.",
    )
    p.add_argument("tiles", help="concealed tiles in mpsz notation (3m+1 or 3m+2 tiles)")
    p.add_argument("--joker", default=None, help="wildcard kind, e.g. 5z (Kaihua's 财神); default none")
    p.add_argument("--visible", default="", help="tiles already seen elsewhere (discards, melds), mpsz")
    p.add_argument("--json", action="store_true", help="print one JSON object instead of text")
    p.set_defaults(func=_cmd_hand)


def _cmd_hand(args) -> int:
    from sim import hand, tiles

    counts = tiles.parse(args.tiles)
    joker = -1
    if args.joker:
        ks = tiles.parse_kinds(args.joker)
        if len(ks) != 1:
            raise ValueError(f"--joker {args.joker!r}: give exactly one tile kind, e.g. 5z")
        joker = ks[0]
    visible = tiles.parse(args.visible) if args.visible else None
    n = int(counts.sum())
    if n % 3 == 0 or n > 14:
        raise ValueError(f"hand {args.tiles!r} has {n} tiles; a concealed hand has 3m+1 or 3m+2 tiles (at most 14)")
    info = hand.describe(counts, joker, visible)
    if args.json:
        print(json.dumps(info, ensure_ascii=False))
        return 0
    print(f"hand:      {tiles.to_str(counts)}" + (f"   (joker {tiles.kind_name(joker)})" if joker >= 0 else ""))
    print(f"shanten:   {info['shanten']}  (standard {info['shanten_standard']}, seven pairs {info['shanten_seven_pairs']})")
    if n % 3 == 2:
        print(f"complete:  {'yes' if info['win'] else 'no'}")
        for d in info.get("discards", []):
            eff = " ".join(f"{k}({c})" for k, c in d["effective"])
            print(f"discard {d['discard']}: shanten {d['shanten']}, {d['live']} live tiles: {eff}")
    else:
        print(f"waits:     {' '.join(info['waits']) or '-'}")
        eff = " ".join(f"{k}({c})" for k, c in info["effective"])
        print(f"effective: {eff or '-'}  [{info['live']} live tiles]")
    return 0


def _add_score(sub) -> None:
    p = sub.add_parser(
        "score",
        help="score finished hands given as JSON lines (the shared vector format)",
        description="Score finished hands, one JSON object per line in the scoring-vector format "
        "(shared/vectors/README.md), and print one JSON object per case: the result, or "
        '{"line": n, "id": ..., "error": ...} for a line that cannot be scored. '
        "Exit status 1 if any line failed.",
    )
    p.add_argument("file", nargs="?", default="-", help="JSON-lines file, or - for stdin (default)")
    p.add_argument(
        "--rules-option",
        action="append",
        default=[],
        metavar="KEY=VALUE",
        help="score under a changed rule option, e.g. max_exponent=3 (repeatable; applies to every "
        "rule set that has the option)",
    )
    p.set_defaults(func=_cmd_score)


def _cmd_score(args) -> int:
    from sim import vectors
    from sim.rules.options import parse_option_strings

    options = parse_option_strings(args.rules_option)
    if args.file == "-":
        n, failed = vectors.score_file(sys.stdin, sys.stdout, options)
    else:
        try:
            stream = open(args.file, encoding="utf-8")
        except OSError as e:
            raise ValueError(f"cannot read {args.file!r}: {e.strerror}") from None
        with stream:
            n, failed = vectors.score_file(stream, sys.stdout, options)
    if failed:
        print(f"caishen score: {failed} of {n} case(s) could not be scored", file=sys.stderr)
        return 1
    return 0


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="caishen",
        description="Self-play simulation and research toolkit for Kaihua (开化) and Jiating (架听) mahjong.",
    )
    sub = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")
    for add in (_add_hand, _add_score):
        add(sub)
    return parser


def main(argv: list[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    try:
        return int(args.func(args) or 0)
    except ValueError as e:
        parser.exit(2, f"caishen {args.command}: error: {e}\n")
    except BrokenPipeError:
        return 0


if __name__ == "__main__":
    sys.exit(main())
