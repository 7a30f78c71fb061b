"""``caishen play``: one seat against bots in the terminal (:mod:`caishen.agents.play`)."""

from __future__ import annotations

from caishen.cli import common
from caishen.sim.rules.base import DEFAULT


def add(sub) -> None:
    p = sub.add_parser(
        "play",
        help="play one seat against bots in the terminal, then see the score explained",
        description="Play one hand as one seat against three bots: the table is drawn from your seat's view "
        "(the joker marked *), your legal actions numbered with their tiles (pong 5m5m[5m], the claimed tile in "
        "brackets); type a number, a tile to discard it (4z), an action (pong, discard 3m), hint, or help (the "
        "commands of the rule set played).  At the end the score is "
        "explained; the whole hand move by move with --replay (or type replay at the end).",
    )
    p.add_argument("--rules", default=DEFAULT, help=f"rule set (default {DEFAULT})")
    p.add_argument("--option", action="append", default=[], metavar="KEY=VALUE",
                   help="rule option, e.g. discard_win=false (repeatable)")
    p.add_argument("--seat", type=int, default=0, help="your seat 0..3 (default 0)")
    p.add_argument("--policy", default="greedy", help="the bots' policy (default greedy)")
    p.add_argument("--seed", type=int, default=None, help="the wall's seed 0..2**32-1 (default: fresh)")
    p.add_argument("--hint", action="store_true", help="every turn, show your shanten, the discards ranked by "
                   "shanten then live effective tiles, and your waits (the hint command shows it once)")
    p.add_argument("--replay", action="store_true", help="at the end, print the whole hand move by move")
    p.add_argument("--html", default=None, metavar="FILE", help="also write the replay page to FILE")
    p.set_defaults(func=run)


def run(args) -> int:
    from caishen.agents.play import play
    from caishen.sim.rules.options import parse_option_strings

    if args.html:  # named before the hand is played, not after
        common.check_html(args.html)
    play(args.rules, parse_option_strings(args.option), seat=args.seat, policy=args.policy, seed=args.seed,
         hint=args.hint, html=args.html, show_replay=args.replay)
    return 0
