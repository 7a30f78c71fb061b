"""``caishen power``: walls for a target CI half-width, or the half-width a number of walls buys (:mod:`caishen.sim.analysis.power`)."""

from __future__ import annotations


def add(sub) -> None:
    p = sub.add_parser(
        "power",
        help="walls needed for a target CI half-width, or the half-width a number of walls buys",
        description="Plan a sweep or match: from a finished pilot (--from DIR: a sweep's or a match's directory, "
        "every per-wall sd it measured, each with its own 95% interval; the plan sizes on the interval's upper "
        "bound) or a stated per-wall sd (--sd), print the walls a 95% interval of the given half-width needs "
        "(--half-width) and/or the half-width --walls walls buy (Student t over walls).",
    )
    src = p.add_mutually_exclusive_group(required=True)
    src.add_argument("--from", dest="pilot", metavar="DIR", help="a finished sweep or match directory (the pilot)")
    src.add_argument("--sd", type=float, help="a per-wall standard deviation (points per hand, or of a paired "
                     "difference)")
    p.add_argument("--half-width", type=float, default=None, help="the target half-width (same unit as the sd)")
    p.add_argument("--walls", type=int, default=None, help="a number of walls to price")
    p.add_argument("--metric", default="score", help="the sweep metric to plan for (default score)")
    p.set_defaults(func=run)


def run(args) -> int:
    import math

    import pandas as pd

    from caishen.sim.analysis import power

    if args.pilot is not None:
        sds = power.pilot_sds(args.pilot, args.metric)
    else:
        if not (math.isfinite(args.sd) and args.sd >= 0):
            raise ValueError(f"--sd {args.sd}: must be a finite number >= 0")
        sds = pd.DataFrame({"quantity": ["stated"], "sd": [args.sd]})
    print(power.format_plan(power.plan(sds, args.half_width, args.walls), args.half_width, args.walls))
    return 0
