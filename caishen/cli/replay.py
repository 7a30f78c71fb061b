"""``caishen replay RUN --hand N``: one hand of a run, move by move, and its replay page (:mod:`caishen.sim.analysis.replay`)."""

from __future__ import annotations

from caishen.cli import common


def add(sub) -> None:
    p = sub.add_parser(
        "replay",
        help="show one hand of a run (or a hand log) move by move; --html writes a replay page",
        description="Print a hand move by move: a hand of a `caishen simulate` run or of a `caishen match` (a "
        "ladder's pair OUT/pairs/II-JJ is one), re-played from the run's rules, options, seeds and bots and "
        "checked against the stored row, or a JSON-lines hand log written by "
        "Game.write_log.  --html FILE also writes one self-contained page (step forward/back, a seat's-eye "
        "toggle, the claims offered, the 飘 circle, the score breakdown).",
    )
    p.add_argument("run", metavar="RUN", help="a run directory or a hand log (.jsonl)")
    p.add_argument("--hand", default=None, metavar="N",
                   help="the run's hand: its hand_id (0..games-1) or CHUNK:INDEX; in a match, hand_id = wall x seatings "
                   "+ seating (the summary's hands)")
    p.add_argument("--seat", type=int, default=None, metavar="S", help="only what seat S (0..3) sees")
    p.add_argument("--html", default=None, metavar="FILE", help="also write the replay page to FILE")
    p.add_argument("--quiet", action="store_true", help="print no table (with --html)")
    p.set_defaults(func=run)


def run(args) -> int:
    from caishen.sim.analysis import replay

    if args.seat is not None and not 0 <= args.seat < 4:
        raise ValueError(f"--seat {args.seat}: a seat is 0..3")
    if args.html:  # before the replay is played and printed: a page that cannot be written is named first
        common.check_html(args.html)
    trace = replay.load(args.run, args.hand)
    if not args.quiet:
        print(replay.render_text(trace, args.seat), end="")
    if args.html:
        from caishen.sim.analysis.replay_html import write_html

        print(f"replay page: {write_html(trace, args.html)}")
    return 0
