"""``caishen match``: two to four policies on duplicate deals (:mod:`caishen.sim.analysis.arena`)."""

from __future__ import annotations

import sys

from caishen.cli import common
from caishen.sim.rules.base import DEFAULT

#: ``--walls`` when not given: a first look (tuned vs greedy under the default rules: 95% CI about +-0.17 points per hand)
DEFAULT_WALLS = 1000


def add(sub) -> None:
    from caishen.sim.analysis import arena

    p = sub.add_parser(
        "match",
        help="two to four policies on duplicate deals: points per hand with CIs over walls",
        description="Play every wall once per seating of --schedule (default all: every order of the policies, "
        "each rotated to every seat; 2 policies: A B A B and B A B A; 3 or 4: 24 seatings), so each policy "
        "sits in every seat after every other on the same tiles, through the "
        "runner (chunks, workers, Ray, resume, Parquet in OUT/chunks). Prints per policy the mean points per "
        "hand with its 95% CI over walls (the independent unit), win rate, deal-in rate (paid for a discard "
        "win or a robbed kong), 飘 rate, and the pairwise differences with paired CIs; also saved as "
        "OUT/match.json and OUT/match.csv. Rerunning the same command resumes.",
    )
    p.add_argument("--rules", default=DEFAULT, help=f"rule set (default {DEFAULT})")
    p.add_argument("--policies", required=True,
                   help="2 to 4 comma-separated bot specs, e.g. greedy,tuned:NAME,mc:16 (the bots: below)")
    p.add_argument("--walls", type=int, default=DEFAULT_WALLS,
                   help=f"walls to play, each in every seating (default {DEFAULT_WALLS:,}: 2 policies, 2,000 hands)")
    p.add_argument("--seed", type=int, default=0, help="root seed, 0..2**63-1 (default 0)")
    p.add_argument("--out", default=None,
                   help="run directory (created; reused to resume); default runs/match-<date>-<time> under the "
                   "current directory, a new one each time (the run stays, for caishen replay and report; the "
                   "command names it on stderr)")
    p.add_argument("--option", action="append", default=[], metavar="KEY=VALUE",
                   help="rule option, e.g. discard_win=false (repeatable)")
    common.add_executor_args(p)
    p.add_argument("--chunk-walls", type=int, default=None, help="walls per chunk (default 1000)")
    p.add_argument("--schedule", default=None, choices=tuple(arena.SCHEDULES),
                   help="the seatings of each wall: "
                   + "; ".join(f"{k}: {v}" for k, v in arena.SCHEDULE_ABOUT.items())
                   + f" (default {arena.DEFAULT_SCHEDULE}; docs/arena.md)")
    common.add_seat_args(p)
    p.add_argument("--no-progress", action="store_true", help="no progress bar")
    p.set_defaults(func=run)


def run(args) -> int:
    from caishen.sim.analysis import arena
    from caishen.sim.selfplay import runner
    from caishen.sim.rules.options import parse_option_strings

    for name, v, hi in (("--walls", args.walls, common.MAX_WALLS), ("--chunk-walls", args.chunk_walls, common.MAX_CHUNK_WALLS)):
        if v is not None and v < 1:
            raise ValueError(f"{name} {v}: must be a positive integer")
        if v is not None and v > hi:
            raise ValueError(f"{name} {v}: at most {hi}")
    common.check_executor_args(args)
    if args.out is None:  # a quick look: a new run directory of its own, kept (its example hands replay from it)
        args.out = common.new_run_dir("match")
        print(common.wrapped(f"caishen match: no --out given: the run goes to {args.out} (give --out {args.out} "
                             "to resume it)"), file=sys.stderr)
    options = parse_option_strings(args.option)
    hosted = common.open_seats(common.specs(args.policies), args)
    workers = 1 if hosted else args.workers  # open seats play in this process
    config = arena.make_config(args.rules, args.policies, args.walls, args.seed, options,
                               args.chunk_walls or arena.DEFAULT_CHUNK_WALLS, args.schedule or arena.DEFAULT_SCHEDULE)
    sched, n = arena.schedule_of(config)

    def start() -> None:
        print(common.wrapped(f"{config.rules}: {args.walls} walls x {len(arena.seatings(n, sched))} seatings in "
                             f"{config.n_chunks} chunk(s) to {args.out}"),
              file=sys.stderr)

    try:
        res = runner.run(config, args.out, workers=workers, backend=args.backend, ray_address=args.ray_address,
                         progress=not args.no_progress, chunk_fn=arena.CHUNKS[(sched, n)],
                         on_start=None if args.no_progress else start)  # a refused --out prints its error alone
    except KeyboardInterrupt:
        from caishen.sim.selfplay import records

        done = len(records.finished_chunks(args.out))
        print(f"caishen match: interrupted with {done} of {config.n_chunks} chunk(s) written to {args.out}; "
              "rerun the same command to resume", file=sys.stderr)
        return 130
    from caishen.sim.bots.names import spec_words

    summary = arena.summarize_match(args.out)
    arena.save_summary(args.out, summary)
    head = common.wrapped(
        f"{config.rules}: {summary['walls_done']} walls x {summary['seatings']} seatings, seed {config.seed}, "
        f"policies {','.join(map(spec_words, summary['policies']))}",
        f"{common.played(res)}{res.chunks_skipped} already done; run directory {args.out}")
    print(arena.format_summary(summary, head))
    if hosted:
        print(common.wrapped("example hands: none (a hand with a python: or exec: seat is not re-played by "
                             "`caishen replay`: their moves are not stored)"))
        return 0
    from caishen.sim.analysis import summary as run_summary

    common.print_examples(run_summary.example_hands(args.out))  # a match's hands replay as a simulate run's
    return 0
