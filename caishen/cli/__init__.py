"""The ``caishen`` command line (also ``python -m caishen``): one module per subcommand.

==============  =====================================================================================
command         what it does (module)
==============  =====================================================================================
``simulate``    batch self-play into a resumable Parquet run directory, then the summary (the main
                job; ``--resume DIR`` continues or repairs a run) (:mod:`caishen.cli.simulate`)
``report``      a run's, match's, sweep's or study's summary again, figures and one HTML page
``sweep``       a grid of rule options and hero policies on the same walls, with CIs
``match``       two to four policies on duplicate deals: points per hand with CIs over walls
``ladder``      a round robin of bots on duplicate deals: a rating table with CIs
``piao``        the counterfactual 飘财 study: EV of 飘 minus keep by situation
``power``       walls needed for a target CI half-width
``balance``     is a rule set balanced? one report: dealer edge, seats over sessions, tails, hand types
``score``       score finished hands given as JSON lines (the shared vector format)
``hand``        shanten, waits and effective tiles of a hand
``replay``      one hand of a run (or a hand log) move by move; ``--html`` writes a replay page
``play``        play one seat against bots in the terminal
``train``       fit the tuned bot's weights by CMA-ES (:mod:`caishen.agents.tune`; ``[tune]`` extra)
``learn``       train a learned bot by expert iteration (:mod:`caishen.agents.exit`; ``[rl]`` extra)
``rules``       the definition of rule IDs (``K-2.5``, ``P27``, ``'Kaihua D3'``)
``warmup``      compile the numba kernels ahead of time
==============  =====================================================================================

Each command's module has ``add(sub)`` (its parser, registered on argparse's subparsers) and
``run(args)`` (its exit status); :data:`COMMANDS` lists them with their one-line help.  Only the
command being run is imported and given its full parser (:func:`build_parser`): ``caishen rules``
and ``caishen --help`` import no numba, numpy or pandas and start in a fraction of a CPU second.

Errors in user input -- a bad value, a damaged or hostile file, a full or read-only disk
(:class:`caishen.sim.safeio.FileError`) -- exit with status 2 and one line naming the value or the
file, Ctrl-C with 130 and one line (:func:`main`).  Integer arguments are bounded
(:mod:`caishen.cli.common`) so that no run allocates or spawns without limit.
"""

from __future__ import annotations

import argparse
import importlib
import sys

from caishen import __version__, interrupt

#: every subcommand: name -> (``module:function`` that adds its full parser, its one-line help).  The
#: help is the stub's that ``caishen --help`` lists without importing the module (tests check it is the
#: full parser's).
COMMANDS: dict[str, tuple[str, str]] = {
    "hand": ("caishen.cli.hand:add", "shanten, waits and effective tiles of a hand"),
    "score": ("caishen.cli.score:add", "score finished hands given as JSON lines (the shared vector format); "
              "--check compares their expect fields"),
    "simulate": ("caishen.cli.simulate:add", "self-play many hands into a resumable Parquet run directory and "
                 "print the summary"),
    "report": ("caishen.cli.report:add", "the summary of a run directory, with figures (PNG) and a "
               "self-contained HTML page"),
    "rules": ("caishen.cli.rules:add", "print the definition of rule IDs (K-2.5, J-4.2, P27, 'Kaihua D3', "
              "'engine E3')"),
    "warmup": ("caishen.cli.warmup:add", "compile the numba kernels of every command ahead of time (for a "
               "cluster image, a container, CI)"),
    "sweep": ("caishen.cli.sweep:add", "a grid of rule options and/or hero policies on the same walls "
              "(duplicate deals), with CIs"),
    "match": ("caishen.cli.match:add", "two to four policies on duplicate deals: points per hand with CIs over "
              "walls"),
    "ladder": ("caishen.cli.ladder:add", "a round robin of bots on duplicate deals: a rating table with CIs over "
               "walls"),
    "replay": ("caishen.cli.replay:add", "show one hand of a run (or a hand log) move by move; --html writes a "
               "replay page"),
    "play": ("caishen.cli.play:add", "play one seat against bots in the terminal, then see the score explained"),
    "train": ("caishen.agents.tune:add_command", "fit the tuned bot's weights by CMA-ES on duplicate deals "
              "(caishen.agents.tune; [tune] extra)"),
    "learn": ("caishen.agents.exit:add_command", "train a learned bot from the tuned bot by expert iteration "
              "on rollout labels ([rl] extra)"),
    "piao": ("caishen.cli.piao:add", "the counterfactual 飘财 study: EV of 飘 minus keep by situation, heatmap, "
             "check on duplicate deals"),
    "power": ("caishen.cli.power:add", "walls needed for a target CI half-width, or the half-width a number of "
              "walls buys"),
    "balance": ("caishen.cli.balance:add", "is this rule set balanced? one reproducible report (Markdown, HTML, "
                "figures) with CIs"),
}

#: the subcommands that take bot specs: their help ends with the bot registry's list, one line per bot
BOT_COMMANDS = ("simulate", "sweep", "match", "train", "piao", "balance")

#: commands that never call a numba kernel (rules) or say what they compile themselves (warmup): no compile line
NO_KERNELS = ("rules", "warmup")


def _adder(name: str):
    module, function = COMMANDS[name][0].split(":")
    return getattr(importlib.import_module(module), function)


def build_parser(commands=None) -> argparse.ArgumentParser:
    """The ``caishen`` parser.  ``commands``: the subcommands given their full parser (imported);
    None = all of them (the CLI reference, the tests).  The others get a stub that carries only
    their one-line help, enough for ``caishen --help`` and for argparse to name a command."""
    parser = argparse.ArgumentParser(
        prog="caishen",
        description="Self-play simulation and research toolkit for Chinese regional mahjong (开化 with the 财神, "
        "架听): the registered rule sets.",
    )
    parser.add_argument("--version", action="version", version=f"caishen {__version__}")
    sub = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")
    full = set(COMMANDS) if commands is None else set(commands)
    for name, (_, help_line) in COMMANDS.items():
        if name in full:
            _adder(name)(sub)
        else:
            sub.add_parser(name, help=help_line, add_help=False)
    from caishen.cli import common

    for name in full & set(BOT_COMMANDS):
        sub.choices[name].epilog = common.bots_epilog(name in common.OPEN_SEAT_COMMANDS)
        sub.choices[name].formatter_class = common.HelpFormatter
    parser.commands = sub.choices  # each command's parser, for its own usage line on an unknown option
    return parser


def _parse(parser: argparse.ArgumentParser, argv: list[str]) -> argparse.Namespace:
    """``parser.parse_args(argv)``, except that an argument the command does not take is refused by the
    command's own parser (its usage line, not ``caishen``'s) with the nearest option it has: ``caishen
    simulate: error: unrecognized arguments: --gams 10 (did you mean --games?)``; exits 2."""
    import difflib

    args, extra = parser.parse_known_args(argv)
    if not extra:
        return args
    command = parser.commands[args.command]
    options = [o for a in command._actions for o in a.option_strings]
    near = [m[0] for w in extra if w.startswith("--") for m in [difflib.get_close_matches(w.split("=")[0], options, 1)]
            if m]
    hint = f" (did you mean {', '.join(dict.fromkeys(near))}?)" if near else ""
    command.error(f"unrecognized arguments: {' '.join(extra)}{hint}")


def _command_of(argv: list[str]) -> str | None:
    """The subcommand named in ``argv`` (its first word that is not an option), if it is one."""
    for word in argv:
        if not word.startswith("-"):
            return word if word in COMMANDS else None
    return None


def _one_line(command: str, e: BaseException) -> str:
    from caishen.sim.rules.options import short_text

    return f"caishen {command}: error: {short_text(str(e))}\n"


def main(argv: list[str] | None = None) -> int:
    """Run one ``caishen`` command; returns its exit status.

    Every other command than :data:`NO_KERNELS` runs inside
    :func:`caishen.sim.warmup.compile_line`: a line on stderr when numba
    starts compiling (a kernel not in the cache), one with the kernels and
    seconds at the end.

    Bad input (a ``ValueError``, :class:`caishen.sim.safeio.FileError`
    included: a damaged or hostile file, a full or read-only disk) exits 2
    (``SystemExit``) with one line naming the value or the file; another
    ``OSError`` exits 1 the same way; Ctrl-C (at start-up, in a run or in
    its summary) returns 130 after one line; never a traceback.
    """
    command = "?"
    old_handler = interrupt.install()  # a Ctrl-C that lands in a numba/llvmlite callback is not lost
    try:
        argv = sys.argv[1:] if argv is None else list(argv)
        named = _command_of(argv)
        parser = build_parser([named] if named else [])
        args = _parse(parser, argv)
        command = args.command
        if command in NO_KERNELS:
            return int(args.func(args) or 0)
        from caishen.sim.warmup import compile_line

        with compile_line(f"caishen {command}"):  # says so when numba really compiles, and how long it took
            return int(args.func(args) or 0)
    except ValueError as e:
        sys.stderr.write(_one_line(command, e))
        raise SystemExit(2) from None
    except BrokenPipeError:
        return 0
    except OSError as e:
        where = f"{e.filename!r}: " if getattr(e, "filename", None) else ""
        sys.stderr.write(_one_line(command, f"{where}{e.strerror or e}"))
        raise SystemExit(1) from None
    except RecursionError:
        sys.stderr.write(_one_line(command, "an input nested too deeply"))
        raise SystemExit(2) from None
    except (KeyboardInterrupt, ImportError) as e:
        # a Ctrl-C inside a command's lazy import of numpy reaches us as numpy's ImportError
        if isinstance(e, ImportError) and not interrupt.seen():
            raise
        sys.stderr.write(f"caishen{'' if command == '?' else ' ' + command}: interrupted\n")
        return 130
    finally:
        interrupt.restore(old_handler)


def command() -> None:
    """The ``caishen`` console command: :func:`main`, then an exit that a late Ctrl-C cannot turn into a
    traceback (:func:`caishen.interrupt.quiet_exit`).  Raises ``SystemExit`` with main's status."""
    try:
        status = main()
    finally:
        interrupt.quiet_exit()
    raise SystemExit(status)


if __name__ == "__main__":
    command()
