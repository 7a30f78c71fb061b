"""``caishen piao``: the counterfactual 飘财 study (:mod:`caishen.sim.analysis.piao_answer`)."""

from __future__ import annotations

import sys

from caishen.cli import common


def add(sub) -> None:
    from caishen.sim.analysis import piao_answer, piao_study

    p = sub.add_parser(
        "piao",
        help="the counterfactual 飘财 study: EV of 飘 minus keep by situation, heatmap, check on duplicate deals",
        description="At one 飘 chance per hand (drawn uniformly among the hand's chances; the hand itself is "
        "played by --policy at every seat) play the state on both ways, 飘 now then --policy against keep now "
        "then --keep-then, on the same wall continuations; write OUT/piao_table.csv (EV per chance by situation, "
        "each cell with n and a 95% CI clustered by hand), OUT/piao_heatmap.png, and check the implied "
        "piao_table policy against the other 飘 policies on duplicate deals (pairwise, Bonferroni/Holm). "
        "Resumable: rerun the same command.",
    )
    p.add_argument("--rules", default=piao_answer.piao_rules(), help="rule set with the 飘 decision (default "
                   f"{piao_answer.piao_rules()})")
    p.add_argument("--policy", default="greedy", help="the bot of every seat (any bot spec below; default greedy)")
    p.add_argument("--keep-then", default=None, metavar="Q",
                   help="the keep branch's bot after the chance (default: --policy itself with 飘 turned off only "
                   "at this chance: keep now, decide again later)")
    p.add_argument("--field", default=None, metavar="F",
                   help="the check's other three seats (default: --policy): any bot spec, an open seat python:/exec: "
                   "included (played in this process), to ask which 飘 policy does best among your bot")
    common.add_seat_args(p)
    p.add_argument("--hands", type=int, default=piao_answer.DEFAULT_HANDS,
                   help=f"hands of the study (default {piao_answer.DEFAULT_HANDS:,})")
    p.add_argument("--rollouts", type=int, default=piao_study.DEFAULT_ROLLOUTS,
                   help=f"rollouts per branch at a chance (default {piao_study.DEFAULT_ROLLOUTS})")
    p.add_argument("--check-walls", type=int, default=None,
                   help=f"walls per policy of the duplicate-deal check (default: {piao_answer.CHECK_WALLS_PER_HAND:g} "
                   f"per hand of the study, {piao_answer.MIN_CHECK_WALLS:,}..{piao_answer.DEFAULT_CHECK_WALLS:,}; "
                   "0 skips it)")
    p.add_argument("--option", action="append", default=[], metavar="K=V",
                   help="a rule option for the study and the check (repeatable), e.g. failed_piao_factor=1")
    p.add_argument("--adaptive", type=int, default=None, metavar="ROUNDS",
                   help="the adaptive study instead: every seat plays the table estimated against the current field "
                   "(on --policy's base), re-estimated until it settles, at most ROUNDS rounds of --hands hands, "
                   "each checked on --check-walls walls against the previous field (OUT/adaptive.md)")
    p.add_argument("--seed", type=int, default=0, help="seed of the study's walls (the check plays seed + 1)")
    p.add_argument("--out", required=True, help="directory (created; reused to resume)")
    p.add_argument("--workers", type=int, default=None, help="worker processes (default: all cores; 1 = in-process)")
    p.add_argument("--no-progress", action="store_true", help="no progress bar")
    p.set_defaults(func=run)


def refuse_open_seats(args) -> None:
    """``ValueError`` (one line) for a python: / exec: bot in ``--policy`` or ``--keep-then`` (the study's
    counterfactual rollouts replay each chance's state inside the numba kernel, where only kernel bots play) or in
    ``--field`` with ``--adaptive`` (whose fields are the study's own tables); ``--field`` of the check takes them."""
    from caishen.sim.bots.registry import is_open

    for flag, spec in (("--policy", args.policy), ("--keep-then", args.keep_then)):
        try:
            found = spec is not None and is_open(spec)
        except ValueError:
            continue  # a bad spec: the study's own check names it
        if found:
            raise ValueError(
                f"{flag} {spec.strip()!r} is an open seat (python:/exec:), and caishen piao plays every hand and its "
                "counterfactual rollouts inside the numba kernel, where only the registry's kernel bots play; "
                "seat your bot in the check instead (--field " + repr(spec.strip()) + ": the 飘 policies each at one "
                "seat among three of it), or caishen match --policies '" + spec.strip() + ",piao_table,always,never'")
    if args.adaptive is not None and args.field is not None:
        raise ValueError(f"--field {args.field!r} is for the check of the one-round study; --adaptive plays every "
                         "seat with the table estimated against the current field")


def run(args) -> int:
    from caishen.sim.analysis import piao_answer

    refuse_open_seats(args)
    common.open_seats(common.specs(args.field), args)  # a python:/exec: field: the arena host, in this process
    if args.workers is not None and not 1 <= args.workers <= common.MAX_WORKERS:
        raise ValueError(f"--workers {args.workers}: must be in 1..{common.MAX_WORKERS}")
    if args.adaptive is not None:
        from caishen.sim.analysis import piao_adaptive

        try:
            doc = piao_adaptive.run_adaptive(
                args.rules, args.out, base=args.policy, hands=args.hands, rollouts=args.rollouts,
                check_walls=piao_adaptive.DEFAULT_CHECK_WALLS if args.check_walls is None else args.check_walls,
                max_rounds=args.adaptive, seed=args.seed, workers=args.workers, progress=not args.no_progress,
                options=args.option)
        except KeyboardInterrupt:
            print(f"caishen piao: interrupted; rerun the same command to resume ({args.out})", file=sys.stderr)
            return 130
        print(piao_adaptive.format_summary(doc))
        print(f"files: {args.out}/adaptive.md, {args.out}/adaptive.csv, {args.out}/adaptive.json")
        return 0
    try:
        ans = piao_answer.run(args.rules, args.out, policy=args.policy, keep_then=args.keep_then, hands=args.hands,
                              seed=args.seed, rollouts=args.rollouts, check_walls=args.check_walls,
                              field=args.field, workers=args.workers, progress=not args.no_progress, options=args.option)
    except KeyboardInterrupt:
        print(f"caishen piao: interrupted; rerun the same command to resume ({args.out})", file=sys.stderr)
        return 130
    print(piao_answer.format_answer(ans, args.out))
    return 0
