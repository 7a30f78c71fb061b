"""``caishen sweep``: a grid of rule options and hero policies on the same walls (:mod:`caishen.sim.analysis.study`)."""

from __future__ import annotations

import sys

from caishen.cli import common
from caishen.sim.rules.base import DEFAULT


def add(sub) -> None:
    p = sub.add_parser(
        "sweep",
        help="a grid of rule options and/or hero policies on the same walls (duplicate deals), with CIs",
        description="Play every point of a grid -- each --option KEY=V1,V2,... is an axis, --policy P1,P2,... "
        "the hero's policies (one seat; the others play --field) -- on the same walls, each wall its own "
        "one-hand match, through the runner (resumable). Prints and writes OUT/sweep.csv: one row per point "
        "and metric with its 95% CI over walls and the paired difference to the baseline point. With two or "
        "more axes (a factorial): also the main effects and interactions with their CIs (OUT/factorial.csv).",
    )
    p.add_argument("--rules", default=DEFAULT, help=f"rule set (default {DEFAULT})")
    p.add_argument("--option", action="append", default=[], metavar="KEY=V1,V2",
                   help="a rule-option axis (repeatable; one value = fixed at every point)")
    p.add_argument("--policy", default=None, metavar="P1,P2",
                   help="the hero's bot specs, comma-separated (e.g. threshold:0,threshold:20,never; the bots: below)")
    p.add_argument("--field", default="greedy", help="the other three seats' bot spec (default greedy; any bot "
                   "of --policy's list)")
    p.add_argument("--baseline", default=None, metavar="AXIS=V[,AXIS=V]",
                   help="compare each point with the point that has these coordinates (default: the first value "
                   "of every axis), e.g. policy=never")
    p.add_argument("--walls", type=int, required=True, help="walls (hands) per point, 1..10**9")
    p.add_argument("--seed", type=int, default=0, help="root seed of the walls, 0..2**63-1 (default 0)")
    p.add_argument("--out", required=True, help="sweep directory (created; reused to resume)")
    common.add_executor_args(p)
    common.add_seat_args(p)
    p.add_argument("--chunk-size", type=int, default=None, help="walls per chunk (default 10000)")
    p.add_argument("--no-progress", action="store_true", help="no progress bar")
    p.set_defaults(func=run)


def run(args) -> int:
    from caishen.sim.selfplay import runner
    from caishen.sim.analysis import study

    if not 1 <= args.walls <= 10**9:
        raise ValueError(f"--walls {args.walls}: must be in 1..10**9")
    common.check_executor_args(args)
    if args.chunk_size is not None and not 1 <= args.chunk_size <= common.MAX_CHUNK_SIZE:
        raise ValueError(f"--chunk-size {args.chunk_size}: must be in 1..{common.MAX_CHUNK_SIZE}")
    workers = 1 if common.open_seats([*common.specs(args.policy), *common.specs(args.field)], args) else args.workers
    try:
        table = study.sweep(args.rules, args.out, options=args.option, policies=args.policy, field=args.field,
                            walls=args.walls, seed=args.seed, baseline=args.baseline,
                            chunk_size=args.chunk_size or runner.DEFAULT_CHUNK_SIZE,
                            execution=runner.Execution.from_args(args, workers))
    except KeyboardInterrupt:
        print(f"caishen sweep: interrupted; rerun the same command to resume ({args.out})", file=sys.stderr)
        return 130
    print(common.wrapped(f"sweep {args.rules}: {args.walls:,} walls per point, seed {args.seed}; every figure: "
                         f"{args.out}/sweep.csv"))
    doc = study.read_sweep_json(args.out)
    print(study.describe(doc["grid"]))
    print()
    print(study.format_grid(table, width=common.width()))
    from caishen.sim.analysis import factorial

    if factorial.is_factorial(doc):  # two or more axes: main effects and interactions (OUT/factorial.csv)
        from pathlib import Path

        from caishen.sim import safeio

        effects = factorial.factorial_table(args.out)
        safeio.atomic_write(Path(args.out) / "factorial.csv", effects.to_csv(index=False))
        print()
        print(factorial.format_effects(effects))
        print(f"(every effect and metric: {args.out}/factorial.csv)")
    return 0
