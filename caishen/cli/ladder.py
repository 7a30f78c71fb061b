"""``caishen ladder``: a round robin of bots on duplicate deals (:mod:`caishen.sim.analysis.ladder`)."""

from __future__ import annotations

import sys

from caishen.cli import common
from caishen.sim.rules.base import DEFAULT


def add(sub) -> None:
    from caishen.sim.analysis import ladder

    p = sub.add_parser(
        "ladder",
        help="a round robin of bots on duplicate deals: a rating table with CIs over walls",
        description="Play every pair of BOTS as a `caishen match` (A B A B and B A B A on each wall), every pair "
        "on the same walls, each pair a resumable run in OUT/pairs/ii-jj (chunks, workers, Ray, Parquet). Prints "
        "and writes OUT/ladder.csv (per bot: points per hand against the field with a 95% CI over walls, a "
        "Bradley-Terry rating on the Elo scale with a 95% bootstrap CI over walls), OUT/pairs.csv (every "
        "paired difference with its 95% and Bonferroni-adjusted CI), OUT/ladder.md and OUT/ladder.png. "
        "Rerunning the same command resumes.",
    )
    p.add_argument("--rules", default=DEFAULT, help=f"rule set (default {DEFAULT})")
    p.add_argument("--bots", default=None,
                   help=f"{ladder.MIN_BOTS} to {ladder.MAX_BOTS} comma-separated bot specs (those of `caishen match "
                   "--policies`, python: and exec: seats included; a spec may appear twice); default: the built-in "
                   "bots random, greedy, "
                   f"greedy_safe, tuned:RULES, mc:{ladder.BUILTIN_MC}")
    p.add_argument("--walls", type=int, default=None, help="walls per pair (each in both seatings); required "
                   "unless --add")
    p.add_argument("--add", default=None, metavar="SPEC",
                   help="append one bot to the ladder in --out and play only its pairs (the pairs played keep their "
                   "walls and are not played again); the rest of the configuration comes from OUT/ladder.json")
    p.add_argument("--seed", type=int, default=0, help="root seed, 0..2**63-1 (default 0)")
    p.add_argument("--out", required=True, help="ladder directory (created; reused to resume)")
    p.add_argument("--option", action="append", default=[], metavar="KEY=VALUE",
                   help="rule option, e.g. discard_win=false (repeatable)")
    p.add_argument("--bootstrap", type=int, default=ladder.DEFAULT_BOOTSTRAP,
                   help=f"bootstrap resamples of the walls for the rating CIs (default {ladder.DEFAULT_BOOTSTRAP})")
    common.add_executor_args(p, " per pair")
    p.add_argument("--chunk-walls", type=int, default=None, help="walls per chunk (default 1000)")
    common.add_seat_args(p)
    p.add_argument("--no-progress", action="store_true", help="no progress bar")
    p.set_defaults(func=run)


def run(args) -> int:
    from caishen.sim.analysis import arena, ladder
    from caishen.sim.rules.options import parse_option_strings

    common.check_executor_args(args)
    if args.add is not None:
        given = [f for f, v in (("--bots", args.bots), ("--walls", args.walls), ("--option", args.option or None),
                                ("--chunk-walls", args.chunk_walls)) if v is not None]
        if given:
            raise ValueError(f"--add takes the ladder's configuration from {args.out}/ladder.json; drop "
                             + ", ".join(given))
        common.open_seats([*ladder.read_config(args.out).bots, args.add], args)
        config = ladder.add_bot(args.out, args.add)
    else:
        if args.walls is None:
            raise ValueError("ladder needs --walls (or --add SPEC to extend the ladder in --out)")
        options = parse_option_strings(args.option)
        bots = ladder.builtin_bots(args.rules) if args.bots is None else args.bots
        common.open_seats(common.specs(bots) if isinstance(bots, str) else bots, args)
        config = ladder.make_config(args.rules, bots, args.walls, args.seed, options,
                                    args.chunk_walls or arena.DEFAULT_CHUNK_WALLS, args.bootstrap)
    log = None if args.no_progress else (lambda line: print(line, file=sys.stderr))
    if log:
        log(f"{config.rules}: {len(config.bots)} bots, {len(ladder.pairs_of(len(config.bots)))} pairs x "
            f"{config.walls} walls to {args.out}")
    try:
        summary = ladder.run_ladder(config, args.out, workers=args.workers, backend=args.backend,
                                    ray_address=args.ray_address, progress=not args.no_progress, log=log)
    except KeyboardInterrupt:
        print(f"caishen ladder: interrupted; rerun the same command to resume into {args.out}", file=sys.stderr)
        return 130
    print(ladder.format_markdown(summary))
    return 0
