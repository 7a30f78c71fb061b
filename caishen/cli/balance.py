"""``caishen balance --rules NAME --out DIR``: is the rule set balanced?  One report (Markdown, HTML, figures:
:mod:`caishen.sim.analysis.balance_report`) of sessions played by each bot and the rule options checked on
duplicate walls."""

from __future__ import annotations

import sys

from caishen.cli import common
from caishen.sim.rules.base import DEFAULT


def add(sub) -> None:
    from caishen.sim.analysis import balance_report

    p = sub.add_parser(
        "balance",
        help="is this rule set balanced? one reproducible report (Markdown, HTML, figures) with CIs",
        description="Play sessions of 16 hands with each bot at every seat and each rule option at other values on "
        "duplicate walls; write OUT/balance.md and OUT/report.html: the dealer edge, placement and mean placement "
        "by starting seat, session totals and their tails, hand types' value against frequency, the bots side by "
        "side, and the options that move the dealer edge most, each with its 95% CI and the half-width against "
        "its target. Resumable: rerun the same command.",
    )
    p.add_argument("--rules", default=DEFAULT, help=f"rule set (default {DEFAULT})")
    p.add_argument("--hands", type=int, default=balance_report.DEFAULT_HANDS,
                   help=f"hands per bot, in sessions of 16 (default {balance_report.DEFAULT_HANDS:,})")
    p.add_argument("--bots", default=None, help="comma-separated bot specs, each at every seat of its own run "
                   "(default: greedy and the rule set's shipped tuned and learned bots)")
    p.add_argument("--option-walls", type=int, default=balance_report.DEFAULT_OPTION_WALLS,
                   help=f"duplicate walls per option value (default {balance_report.DEFAULT_OPTION_WALLS:,}; 0 skips "
                   "the option checks)")
    p.add_argument("--seed", type=int, default=0, help="seed of the runs (the option checks play seed + 1)")
    p.add_argument("--out", required=True, help="report directory (created; reused to resume)")
    p.add_argument("--workers", type=int, default=None, help="worker processes (default: all cores)")
    p.add_argument("--no-progress", action="store_true", help="no progress bar")
    p.set_defaults(func=run)


def run(args) -> int:
    from caishen.sim.analysis import balance_report

    if args.workers is not None and not 1 <= args.workers <= common.MAX_WORKERS:
        raise ValueError(f"--workers {args.workers}: must be in 1..{common.MAX_WORKERS}")
    if not 0 <= args.seed < 2**63:
        raise ValueError(f"--seed {args.seed}: must be in 0..2**63-1")
    workers = args.workers
    if common.open_seats(common.specs(args.bots), args):  # python:/exec: bots: the arena host, in this process
        from caishen.sim.bots.registry import seat_workers

        workers = seat_workers(common.specs(args.bots), workers)
    try:
        res = balance_report.run_balance(args.rules, args.out, hands=args.hands, seed=args.seed, bots=args.bots,
                                         option_walls=args.option_walls, workers=workers,
                                         progress=not args.no_progress)
    except KeyboardInterrupt:
        print(f"caishen balance: interrupted; rerun the same command to resume ({args.out})", file=sys.stderr)
        return 130
    print(f"caishen balance {args.rules}: {res['hands']:,} hands per bot, seed {res['seed']}, {res['seconds']:.0f} s")
    for b, (e, lo, hi) in res["dealer_edge"].items():
        print(f"  dealer edge, {b} at every seat: {e:+.3f} [{lo:+.3f}, {hi:+.3f}] points per hand")
    for o in res["top_options"][:3]:
        print(f"  option {o['option']}={o['value']}: dealer edge {o['dealer_edge_diff']:+.3f} "
              f"[{o['dealer_edge_low']:+.3f}, {o['dealer_edge_high']:+.3f}]")
    print(f"report: {args.out}/balance.md, {args.out}/report.html")
    return 0
