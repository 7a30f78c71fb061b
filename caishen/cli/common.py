"""What the ``caishen`` subcommands share: the integer bounds, the help formatter with the bot list,
the executor flags (``--workers``, ``--backend``, ``--ray-address``), and the lines a run prints
(its play rate, the cold-cache note, the example hands, the repair hint)."""

from __future__ import annotations

import argparse
import shlex

#: bounds of the integer arguments of ``caishen simulate``
MAX_GAMES = 10**10
MAX_CHUNK_SIZE = 10**6
MAX_WORKERS = 1024
#: bounds of ``caishen match``
MAX_WALLS = 10**9
MAX_CHUNK_WALLS = 10**6


class HelpFormatter(argparse.HelpFormatter):
    """argparse's formatter, but a text of several lines (the bot list of an epilog) is wrapped line by line."""

    def _fill_text(self, text, width, indent):
        import textwrap

        return "\n".join(textwrap.fill(" ".join(line.split()), width, initial_indent=indent + "  " * (line[:1] == " "),
                                        subsequent_indent=indent + "      " * (line[:1] == " "))
                         for line in text.splitlines())


#: the bot commands that also seat open seats (python:, exec:; caishen.envs.seats)
OPEN_SEAT_COMMANDS = ("simulate", "sweep", "match")


def width() -> int:
    """Characters per line of a printed table: the terminal's (``COLUMNS`` first), 100 on a pipe, at least 60."""
    import shutil

    return max(60, shutil.get_terminal_size((100, 24)).columns)


def bots_epilog(hosted: bool = False) -> str:
    from caishen.sim.bots.registry import help_lines

    return "bots (one spec grammar everywhere, caishen.sim.bots.registry):\n" + "\n".join(
        f" {line}" for line in help_lines(kernel=True, hosted=hosted))  # the bots these commands play; not %-formatted


def add_seat_args(p) -> None:
    """``--time-limit``: the seconds an ``exec:`` seat may take per decision."""
    p.add_argument("--time-limit", type=float, default=None, metavar="SECONDS",
                   help="seconds an exec: seat may take per decision (default 5; docs/protocol.md)")


def open_seats(specs, args) -> bool:
    """True if a spec of ``specs`` is an open seat (python:, exec:): then the arena host is registered
    (caishen.envs.arena_host) with ``--time-limit`` (checked whatever the seats).  A bad spec is left to the
    command's own check."""
    from caishen.sim.bots.registry import is_open

    limit = getattr(args, "time_limit", None)
    if limit is not None and not 0 < limit <= 3600:
        raise ValueError(f"--time-limit {limit}: must be a number of seconds in (0, 3600]")
    found = False
    for spec in specs:
        try:
            found = found or is_open(spec)
        except ValueError:
            continue
    if found:
        from caishen.envs import arena_host, seats  # noqa: F401  (arena_host registers the host)

        if limit is not None:
            seats.set_time_limit(limit)
    return found


def specs(text) -> list[str]:
    """The comma-separated specs of a ``--policy`` / ``--policies`` / ``--field`` value."""
    return [p.strip() for p in str(text).split(",")] if text else []


def add_executor_args(p, what: str = "") -> None:
    """``--workers``, ``--backend``, ``--ray-address``: how a runner command spreads its chunks."""
    p.add_argument("--workers", type=int, default=None,
                   help=f"worker processes / Ray tasks{what} (default: all cores; 1 = in-process)")
    p.add_argument("--backend", choices=("local", "ray"), default="local", help="local process pool (default) or Ray")
    p.add_argument("--ray-address", default=None, help="Ray cluster address for ray.init (default: start local Ray)")


def check_executor_args(args) -> None:
    """``ValueError`` naming a bad ``--workers`` (1..MAX_WORKERS) or a ``--ray-address`` without Ray."""
    if args.workers is not None and args.workers < 1:
        raise ValueError(f"--workers {args.workers}: must be a positive integer")
    if args.workers is not None and args.workers > MAX_WORKERS:
        raise ValueError(f"--workers {args.workers}: at most {MAX_WORKERS}")
    if args.ray_address and args.backend != "ray":
        raise ValueError("--ray-address needs --backend ray")


def played(res) -> str:
    """``"played N chunk(s) now (hands, seconds, hands/s ...), "`` of a run's summary line; a finished run's
    rerun played nothing and says so (not "0 hands/s")."""
    if not res.chunks_run:
        return "played 0 chunk(s) now (nothing left to play), "
    return (f"played {res.chunks_run} chunk(s) now ({res.hands_run} hands in {res.seconds:.1f} s, of which "
            f"{res.compile_seconds:.1f} s of start-up: kernels, tables, warm-up; {res.hands_per_second:.0f} "
            "hands/s of play), ")


def new_run_dir(kind: str) -> str:
    """``runs/KIND-YYYYMMDD-HHMMSS`` under the current directory (``-2``, ``-3``, ... after it when that
    exists already): the run directory of a command given no ``--out``.  Not created here."""
    import os
    import time

    base = os.path.join("runs", f"{kind}-{time.strftime('%Y%m%d-%H%M%S')}")
    path, k = base, 1
    while os.path.lexists(path):
        k += 1
        path = f"{base}-{k}"
    return path


def wrapped(*lines: str) -> str:
    """``lines`` each wrapped to 100 columns (:func:`caishen.sim.termtext.wrap`, wide characters count 2),
    joined by newlines: a command's head lines."""
    from caishen.sim.termtext import wrap_lines

    return "\n".join(wrap_lines(lines))


def print_examples(lines: list[str]) -> None:
    """The summary's example hands of a simulate run or a match (summary.example_hands), each a command to
    open it."""
    print("example hands (each line: the command that replays it):")
    for line in lines:
        print(f"  {line}")


def repair_hint(run_dir, chunks: bool = True, lines: bool = True) -> str:
    """The repair line of a run with damaged ``chunks`` and/or damaged manifest ``lines``."""
    does = (["replays exactly these chunks from their seeds (the rows come out as in an uninterrupted run)"]
            if chunks else []) + (["drops the manifest's damaged lines"] if lines else [])
    again = f"caishen simulate --resume {shlex.quote(str(run_dir))}"  # as a shell runs it, whatever the name
    return (f"repair: rerun the same `caishen simulate` command, or `{again}`: it "
            + " and ".join(does))


def check_html(path: str) -> None:
    """``ValueError`` naming ``--html FILE`` when the page cannot go there: no such folder, or something
    other than a regular file at FILE (a device, a FIFO, a link: :func:`caishen.sim.safeio.check_target`)."""
    from pathlib import Path

    from caishen.sim import safeio

    folder = Path(path).expanduser().parent
    if not folder.is_dir():
        raise ValueError(f"--html {path}: no such folder {str(folder)!r} to write the page in")
    safeio.check_target(Path(path).expanduser(), "the replay page")
