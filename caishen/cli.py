"""The ``caishen`` command line (also ``python -m caishen``).

Subcommands:

- ``caishen simulate --rules NAME --games N --seed S --out DIR``: batch
  self-play into Parquet, with a summary (the main job; resumable; a rerun
  verifies the chunks against the run's manifest and replays the damaged
  ones).  ``caishen simulate --resume DIR`` continues or repairs a run with
  the configuration stored in ``DIR/run.json``.
- ``caishen report DIR``: the summary of a run again, streamed from its
  verified Parquet files; names any chunk that is missing, short, corrupt,
  foreign or unrecorded and says how to repair it (exit status 1 then); writes
  figures (PNG) and one HTML page (``caishen.sim.analysis.report``); also for a sweep.
- ``caishen sweep --rules NAME --option K=V1,V2 --policy P1,P2 --walls N
  --out DIR``: a grid of rule options and hero policies on the same walls
  (``caishen.sim.analysis.study``), a tidy table with differences to a baseline.
- ``caishen warmup [TARGET...]``: compile the numba kernels ahead of time.
- ``caishen score [FILE|-]``: score finished hands given as JSON lines.
- ``caishen hand TILES [--joker 5z] [--rules NAME]``: shanten,
  waits and effective tiles of a hand (waits by shape, or those a rule set's
  win gates allow).
- ``caishen match --rules NAME --policies greedy,mc:16 --walls N --seed S --out DIR``:
  two to four policies on duplicate deals (:mod:`caishen.sim.analysis.arena`), the table of
  points per hand with CIs over walls and the pairwise differences.
- ``caishen ladder --rules NAME --bots random,greedy,mc:2 --walls N --seed S --out DIR``:
  a round robin of bots on duplicate deals (every pair on the same walls,
  :mod:`caishen.sim.analysis.ladder`): points per hand against the field, the
  matrix of paired differences and a Bradley-Terry rating, with CIs over walls;
  writes DIR/ladder.csv, pairs.csv, ladder.md and ladder.png.
- ``caishen train --rules NAME --out FILE``: fit the tuned bot's weights by
  CMA-ES on duplicate deals (:mod:`caishen.agents.tune`; needs the ``[tune]`` extra).
- ``caishen learn --rules NAME --out DIR [--minutes M] [--seed S]``: train a
  learned bot from the tuned bot by expert iteration on rollout labels, then
  match it against tuned and greedy (:mod:`caishen.agents.exit`; the ``[rl]`` extra).
- ``caishen rules ID...``: the definition of rule IDs (``K-2.5``, ``P27``,
  ``'Kaihua D3'``) from the rule reference that ships with the package
  (:mod:`caishen.sim.ruledocs`).
- ``caishen warmup [TARGET...]``: compile the numba kernels ahead of time.
- ``caishen replay RUN --hand N [--seat S] [--html FILE]``: one hand of a run (``N`` its hand_id or
  ``CHUNK:INDEX``; re-played and checked against the stored row) or a JSON-lines hand log, move by move
  (:mod:`caishen.sim.analysis.replay`); ``--html`` writes the replay page.
- ``caishen play [--rules R] [--seat S] [--hint]``: play one seat against bots in the terminal
  (:mod:`caishen.agents.play`), then see the replay.
- ``caishen --version``: the package version.

Each subcommand is registered by one ``_add_<name>`` function below and runs
through one ``_cmd_<name>`` function; errors in user input -- a bad value, a
damaged or hostile file, a full or read-only disk
(:class:`caishen.sim.safeio.FileError`) -- exit with status 2 and one line
naming the value or the file, Ctrl-C with 130 and one line (:func:`main`).  Integer arguments are bounded
(``--games`` 1..10**10, ``--chunk-size`` 1..10**6, ``--workers`` 1..1024,
``--seed`` 0..2**63-1) so that no run allocates or spawns without limit.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from caishen import interrupt
from caishen.sim import __version__
from caishen.sim.rules.base import DEFAULT

#: bounds of the integer arguments of ``caishen simulate``
MAX_GAMES = 10**10
MAX_CHUNK_SIZE = 10**6
MAX_WORKERS = 1024


#: the subcommands that take bot specs: their help ends with the bot registry's list, one line per bot
BOT_COMMANDS = ("simulate", "sweep", "match", "train", "piao")


class _HelpFormatter(argparse.HelpFormatter):
    """argparse's formatter, but a text of several lines (the bot list of an epilog) is wrapped line by line."""

    def _fill_text(self, text, width, indent):
        import textwrap

        return "\n".join(textwrap.fill(" ".join(line.split()), width, initial_indent=indent + "  " * (line[:1] == " "),
                                        subsequent_indent=indent + "      " * (line[:1] == " "))
                         for line in text.splitlines())


#: the bot commands that also seat open seats (python:, exec:; caishen.envs.seats)
OPEN_SEAT_COMMANDS = ("simulate", "sweep", "match")


def _bots_epilog(hosted: bool = False) -> str:
    from caishen.sim.bots.registry import help_lines

    return "bots (one spec grammar everywhere, caishen.sim.bots.registry):\n" + "\n".join(
        f" {line}" for line in help_lines(kernel=True, hosted=hosted))  # the bots these commands play; not %-formatted


def _add_seat_args(p) -> None:
    """``--time-limit``: the seconds an ``exec:`` seat may take per decision."""
    p.add_argument("--time-limit", type=float, default=None, metavar="SECONDS",
                   help="seconds an exec: seat may take per decision (default 5; docs/protocol.md)")


def _open_seats(specs, args) -> bool:
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


def _specs(text) -> list[str]:
    return [p.strip() for p in str(text).split(",")] if text else []


def _add_hand(sub) -> None:
    p = sub.add_parser(
        "hand",
        help="shanten, waits and effective tiles of a hand",
        description="Shanten (-1 = complete), waits and effective tiles of a concealed hand "
        "in mpsz notation, e.g. 123m456p789s23s5z.",
    )
    p.add_argument("tiles", help="concealed tiles in mpsz notation (3m+1 or 3m+2 tiles)")
    p.add_argument("--joker", default=None, help="wildcard kind, e.g. 5z (the 财神, K-2.1); default none "
                   "(with --rules: the rule set's joker)")
    p.add_argument("--visible", default="", help="tiles already seen elsewhere (discards, melds), mpsz")
    p.add_argument("--rules", default=None,
                   help="a rule set (see --rules of simulate): apply its win gates to the waits (and to 'complete'): keep a wait only if a "
                   "self-draw win on it is legal under the rule set (e.g. K-2.4 three or four 财神, K-2.5 a "
                   "财神 drawn to a 爆头 shape, K-2.6 two 财神 need an exponent). Default: shape only")
    p.add_argument("--json", action="store_true", help="print one JSON object instead of text")
    p.set_defaults(func=_cmd_hand)


def _hand_joker(rules: str) -> str | None:
    """The joker of a registered rule set as a tile name (``"5z"``), None without one;
    ``ValueError`` for an unknown rule set or one that scores no vector cases (no win gate)."""
    from caishen.sim import tiles
    from caishen.sim.rules import base as _rulesets

    rs = _rulesets.get(rules)
    if rs.score is None:
        raise ValueError(f"--rules {rules}: the rule set scores no cases, so it has no win gate")
    joker = rs.facts["joker"]
    return tiles.kind_name(joker) if joker >= 0 else None


def _cmd_hand(args) -> int:
    import numpy as np

    from caishen.sim import hand, tiles
    from caishen.sim.rules import vectors
    from caishen.sim.rules.options import short_repr

    counts = tiles.parse(args.tiles)
    joker = -1
    rules_joker = _hand_joker(args.rules) if args.rules is not None else None
    if args.rules is not None and args.joker:
        if rules_joker is None:
            raise ValueError(f"--joker {short_repr(args.joker)} with --rules {args.rules}: {args.rules} has no joker "
                             "(J-1.1)")
        if tiles.parse_kinds(args.joker) != tiles.parse_kinds(rules_joker):
            raise ValueError(f"--joker {short_repr(args.joker)} with --rules {args.rules}: its 财神 is "
                             f"{rules_joker} (K-2.1)")
    joker_text = args.joker or rules_joker
    if joker_text:
        ks = tiles.parse_kinds(joker_text)
        if len(ks) != 1:
            raise ValueError(f"--joker {short_repr(joker_text)}: give exactly one tile kind, e.g. 5z")
        joker = ks[0]
    visible = tiles.parse(args.visible) if args.visible else None
    n = int(counts.sum())
    if n % 3 == 0 or n > 14:
        raise ValueError(f"hand {short_repr(args.tiles)} has {n} tiles; a concealed hand has 3m+1 or 3m+2 tiles "
                         "(at most 14)")
    if args.rules is not None and n < 13:
        raise ValueError(f"--rules {args.rules} gates a hand without melds: give 13 or 14 tiles, not {n}")
    info = hand.describe(counts, joker, visible)
    info["rules"] = args.rules  # which list "waits" / "win" show: None = shape only
    if args.rules is not None:
        if n % 3 == 1:
            info["waits_shape"] = info["waits"]
            info["waits"] = vectors.gated_waits(args.rules, counts, info["waits"])
        else:  # complete under the rules: some tile of the 14, taken as the drawn tile, wins by self-draw
            info["win_shape"] = info["win"]
            info["win"] = any(
                vectors.gated_waits(args.rules, counts - (np.arange(34) == k), [tiles.kind_name(k)])
                for k in np.flatnonzero(counts)
            ) if info["win"] else False
    if args.json:
        print(json.dumps(info, ensure_ascii=False))
        return 0
    shows = "shape only" if args.rules is None else f"{args.rules} win gates, self-draw"
    print(f"hand:      {tiles.to_str(counts)}" + (f"   (joker {tiles.kind_name(joker)})" if joker >= 0 else ""))
    print(f"shanten:   {info['shanten']}  (standard {info['shanten_standard']}, seven pairs {info['shanten_seven_pairs']})")
    if n % 3 == 2:
        print(f"complete:  {'yes' if info['win'] else 'no'}  ({shows})")
        for d in info.get("discards", []):
            eff = " ".join(f"{k}({c})" for k, c in d["effective"])
            print(f"discard {d['discard']}: shanten {d['shanten']}, {d['live']} live tiles: {eff}")
    else:
        print(f"waits:     {' '.join(info['waits']) or '-'}  ({shows})")
        if args.rules is not None and info["waits"] != info["waits_shape"]:
            print(f"           by shape: {' '.join(info['waits_shape']) or '-'}")
        eff = " ".join(f"{k}({c})" for k, c in info["effective"])
        print(f"effective: {eff or '-'}  [{info['live']} live tiles]")
    return 0


def _score_defaults_text() -> str:
    """The ``caishen score --help`` epilog: the keys a case may omit and their defaults (from
    caishen.sim.rules.vectors.defaults, so the help cannot drift from the parser)."""
    from caishen.sim.rules import vectors

    rows = [f"  {name}: " + ", ".join(f"{k}={json.dumps(v)}" for k, v in vectors.defaults(name).items())
            for name in vectors._vector_rule_sets()]
    return ("keys a hand typed by hand may omit, and the value each then takes:\n  id: \"line N\" "
            "(its line in the input)\n" + "\n".join(rows) + "\n(discarder null only suits a self-draw; "
            "rules, dealer, winner, win_type, concealed and win_tile are always needed)")


def _add_score(sub) -> None:
    p = sub.add_parser(
        "score",
        help="score finished hands given as JSON lines (the shared vector format); --check compares "
        "their expect fields",
        description="Score finished hands, one JSON object per line in the scoring-vector format "
        "(shared/vectors/README.md), and print one JSON object per case: the result, or "
        '{"line": n, "id": ..., "error": ...} for a line that cannot be scored. '
        "Exit status 1 if any line failed. With --check, compare each line's expect fields with "
        'the scored result instead and print only what disagrees: {"line", "id", "field", "expected", '
        '"got"} per mismatching field (flags are informative and not compared), the error object of a '
        'line that cannot be scored, {"line", "id", "unchecked"} for a line without expect; a count on '
        "stderr; exit status 1 if any mismatch or error.",
        epilog=_score_defaults_text(),
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    p.add_argument("file", nargs="?", default="-", help="JSON-lines file, or - for stdin (default)")
    p.add_argument("--check", action="store_true",
                   help="compare each line's expect fields with the scored result; print the mismatches")
    p.add_argument(
        "--rules-option",
        action="append",
        default=[],
        metavar="KEY=VALUE",
        help="score under a changed rule option, e.g. max_exponent=3 (repeatable; applies to every "
        "rule set that has the option)",
    )
    p.set_defaults(func=_cmd_score)


def _score_input(path: str):
    """The input of ``caishen score``: stdin for ``-``, else the file (a regular file, a FIFO or a
    terminal; ``/dev/zero`` and other devices are refused), decoded as UTF-8 with bad bytes replaced."""
    import io
    import os
    import stat

    from caishen.sim import safeio

    if path == "-":
        import contextlib

        buf = getattr(sys.stdin, "buffer", None)
        if buf is None:  # a text stream put in place of stdin (tests)
            return contextlib.nullcontext(sys.stdin)
        return io.TextIOWrapper(buf, encoding="utf-8", errors="replace")
    try:
        fd = os.open(path, os.O_RDONLY | safeio.O_NONBLOCK | safeio.O_CLOEXEC)
    except OSError as e:
        raise safeio.os_error(path, e, "read") from None
    mode = os.fstat(fd).st_mode
    if not (stat.S_ISREG(mode) or stat.S_ISFIFO(mode) or os.isatty(fd)):
        os.close(fd)
        raise safeio.FileError(path, f"is {safeio.file_kind(mode)}: give a JSON-lines file, a pipe or -")
    os.set_blocking(fd, True)
    return open(fd, encoding="utf-8", errors="replace")


def _cmd_score(args) -> int:
    from caishen.sim.rules import vectors
    from caishen.sim.rules.options import parse_option_strings

    options = parse_option_strings(args.rules_option)
    if args.check:
        with _score_input(args.file) as stream:
            c = vectors.check_file(stream, sys.stdout, options)
        print(f"caishen score --check: {c['cases']} case(s): {c['checked']} checked, {c['mismatched']} with "
              f"{c['mismatches']} mismatching field(s), {c['failed']} could not be scored, {c['unchecked']} "
              "without expect", file=sys.stderr)
        return 1 if c["mismatched"] or c["failed"] else 0
    with _score_input(args.file) as stream:
        n, failed = vectors.score_file(stream, sys.stdout, options)
    if failed:
        print(f"caishen score: {failed} of {n} case(s) could not be scored", file=sys.stderr)
        return 1
    return 0


def _add_simulate(sub) -> None:
    p = sub.add_parser(
        "simulate",
        help="self-play many hands into a resumable Parquet run directory and print the summary",
        description="Play GAMES hands of self-play (one policy per seat) in chunks, in worker processes or on "
        "Ray, into OUT/chunks/chunk-NNNNN.parquet (one row per hand; the columns: sim/selfplay/records.py and each rule set's records.py), then print "
        "the summary (also saved as OUT/summary.json and OUT/summary.csv). Rerunning the same command "
        "resumes an interrupted run; another configuration into the same OUT is an error. Rows depend only "
        "on the rules, options, policies, seed, games and chunk size, never on --workers or --backend.",
    )
    p.add_argument("--rules", default=None, help=f"rule set (default {DEFAULT})")
    p.add_argument("--games", type=int, default=None, help="hands to play (> 0; required unless --resume)")
    p.add_argument("--seed", type=int, default=None, help="root seed, 0..2**63-1 (default 0)")
    p.add_argument("--out", default=None, help="run directory (created; reused to resume; required unless --resume)")
    p.add_argument("--resume", default=None, metavar="RUN_DIR",
                   help="continue or repair the run in RUN_DIR with the configuration in its run.json (replays "
                   "exactly the chunks not played, missing, short, corrupt, foreign or unrecorded); takes no "
                   "--rules/--games/--seed/--policy/--option/--chunk-size/--out")
    p.add_argument(
        "--policy",
        default=None,
        help="one bot spec for all seats, or four comma-separated (seats 0..3), e.g. greedy,greedy,always,mc:8 "
        "(the bots: below; 飘 policies need a rule set with a 财神)",
    )
    p.add_argument(
        "--option",
        action="append",
        default=[],
        metavar="KEY=VALUE",
        help="rule option, e.g. discard_win=false (repeatable)",
    )
    _add_executor_args(p)
    _add_seat_args(p)
    p.add_argument("--chunk-size", type=int, default=None, help="hands per chunk (default 10000)")
    p.add_argument("--no-progress", action="store_true", help="no progress bar")
    p.set_defaults(func=_cmd_simulate)


#: the flags of ``caishen simulate`` that make a run's configuration (refused with --resume)
_CONFIG_FLAGS = {"rules": "--rules", "games": "--games", "seed": "--seed", "policy": "--policy",
                 "chunk_size": "--chunk-size", "out": "--out"}


def _simulate_config(args):
    """``(RunConfig, run directory)`` from the flags, or from ``--resume RUN_DIR``'s run.json."""
    from caishen.sim.selfplay import rundir, runner
    from caishen.sim.rules.options import parse_option_strings

    if args.resume is not None:
        given = [flag for name, flag in _CONFIG_FLAGS.items() if getattr(args, name) is not None]
        if args.option:
            given.append("--option")
        if given:
            raise ValueError(f"--resume {args.resume!r} takes the configuration from its run.json; drop "
                             + ", ".join(given))
        meta = rundir.read_run_json(args.resume)
        if meta.get("chunk_fn", "caishen.sim.selfplay.runner:engine_chunk") != runner.RunConfig.chunk_fn:
            raise ValueError(f"--resume {args.resume!r}: the run plays chunk function {meta.get('chunk_fn')!r}; "
                             "resume it from Python with caishen.sim.selfplay.runner.run")
        try:
            config = runner.make_config(meta["rules"], meta["games"], meta["seed"], policies=meta["policies"],
                                        options=meta["options"], chunk_size=meta["chunk_size"])
        except KeyError as e:
            raise ValueError(f"--resume {args.resume!r}: run.json lacks {e.args[0]!r}") from None
        return config, args.resume
    if args.games is None or args.out is None:
        raise ValueError("simulate needs --games and --out (or --resume RUN_DIR)")
    if args.games <= 0:
        raise ValueError(f"--games {args.games}: must be a positive integer")
    if args.games > MAX_GAMES:
        raise ValueError(f"--games {args.games}: at most {MAX_GAMES}")
    if args.chunk_size is not None and args.chunk_size < 1:
        raise ValueError(f"--chunk-size {args.chunk_size}: must be a positive integer")
    if args.chunk_size is not None and args.chunk_size > MAX_CHUNK_SIZE:
        raise ValueError(f"--chunk-size {args.chunk_size}: at most {MAX_CHUNK_SIZE} hands per chunk")
    config = runner.make_config(
        args.rules or DEFAULT,
        args.games,
        0 if args.seed is None else args.seed,
        policies=args.policy or "greedy",
        options=parse_option_strings(args.option),
        chunk_size=args.chunk_size or runner.DEFAULT_CHUNK_SIZE,
    )
    return config, args.out


def _repair_hint(run_dir, chunks: bool = True, lines: bool = True) -> str:
    """The repair line of a run with damaged ``chunks`` and/or damaged manifest ``lines``."""
    does = (["replays exactly these chunks from their seeds (the rows come out as in an uninterrupted run)"]
            if chunks else []) + (["drops the manifest's damaged lines"] if lines else [])
    return (f"repair: rerun the same `caishen simulate` command, or `caishen simulate --resume {run_dir}`: it "
            + " and ".join(does))


def _add_executor_args(p, what: str = "") -> None:
    """``--workers``, ``--backend``, ``--ray-address``: how a runner command spreads its chunks."""
    p.add_argument("--workers", type=int, default=None,
                   help=f"worker processes / Ray tasks{what} (default: all cores; 1 = in-process)")
    p.add_argument("--backend", choices=("local", "ray"), default="local", help="local process pool (default) or Ray")
    p.add_argument("--ray-address", default=None, help="Ray cluster address for ray.init (default: start local Ray)")


def _check_executor_args(args) -> None:
    """``ValueError`` naming a bad ``--workers`` (1..MAX_WORKERS) or a ``--ray-address`` without Ray."""
    if args.workers is not None and args.workers < 1:
        raise ValueError(f"--workers {args.workers}: must be a positive integer")
    if args.workers is not None and args.workers > MAX_WORKERS:
        raise ValueError(f"--workers {args.workers}: at most {MAX_WORKERS}")
    if args.ray_address and args.backend != "ray":
        raise ValueError("--ray-address needs --backend ray")


def _played(res) -> str:
    """``"played N chunk(s) now (hands, seconds, hands/s ...), "`` of a run's summary line; a finished run's
    rerun played nothing and says so (not "0 hands/s")."""
    if not res.chunks_run:
        return "played 0 chunk(s) now (nothing left to play), "
    return (f"played {res.chunks_run} chunk(s) now ({res.hands_run} hands in {res.seconds:.1f} s: "
            f"{res.hands_per_second:.0f} hands/s of play after {res.compile_seconds:.1f} s of numba kernels), ")


def _cold_note(config) -> str:
    """``"; first ..."`` for a run's first line when its self-play kernels are not in this numba cache yet
    (what a newcomer's first run spends its first minute or two on), else ``""``."""
    from caishen.sim.bots.registry import has_data
    from caishen.sim.warmup import COLD_SECONDS, is_marked

    part = "bots" if any(has_data(p) for p in config.policies) else "kernel"  # as the runner marks them
    if is_marked("selfplay", part):
        return ""
    return (f"; first the numba kernels compile (about {COLD_SECONDS['selfplay']} s on one core, once per "
            "cache; `caishen warmup` does it ahead of time)")


def _cmd_simulate(args) -> int:
    from caishen.sim.selfplay import manifest, runner
    from caishen.sim.analysis import summary

    _check_executor_args(args)
    if args.resume is not None:
        from caishen.sim.selfplay import rundir

        _open_seats(rundir.read_run_json(args.resume).get("policies", []), args)
    else:
        _open_seats(_specs(args.policy), args)
    config, out = _simulate_config(args)
    from caishen.sim.bots.registry import seat_workers

    def start() -> None:  # a cold numba cache keeps the bar at 0% for a minute or two: the first line says so
        print(f"{config.rules}: {config.games} hands in {config.n_chunks} chunk(s) to {out}{_cold_note(config)}",
              file=sys.stderr)

    try:
        res = runner.run(
            config,
            out,
            workers=seat_workers(config.policies, args.workers),  # open seats play in this process
            backend=args.backend,
            ray_address=args.ray_address,
            progress=not args.no_progress,
            on_start=None if args.no_progress else start,  # after the run directory is accepted: a refusal comes alone
        )
    except KeyboardInterrupt:
        try:
            done = len(manifest.verify(out, checksums=False).ok)
        except ValueError:  # interrupted before run.json was written
            done = 0
        print(
            f"caishen simulate: interrupted with {done} of {config.n_chunks} chunk(s) written to {out}; "
            "rerun the same command to resume",
            file=sys.stderr,
        )
        return 130
    except RuntimeError as e:  # a chunk that cannot be written (ENOSPC) or keeps killing its worker
        print(f"caishen simulate: {e}", file=sys.stderr)
        return 1
    if res.damaged_lines:
        print(f"caishen simulate: dropped {len(res.damaged_lines)} damaged line(s) of "
              f"{manifest.manifest_path(out)} (a chunk they recorded is replayed as unrecorded):", file=sys.stderr)
        for n, why in res.damaged_lines[:20]:
            print(f"  line {n}: {why}", file=sys.stderr)
    if res.repaired:
        print(f"caishen simulate: replayed {len(res.repaired)} damaged chunk(s):", file=sys.stderr)
        for i in sorted(res.repaired)[:20]:
            print(f"  chunk {i}: {res.repaired[i][0]} ({res.repaired[i][1]})", file=sys.stderr)
    if res.pool_restarts:
        print(f"caishen simulate: a worker process died; the pool was restarted {res.pool_restarts} time(s) and "
              "the chunks in flight replayed", file=sys.stderr)
    rows, defs, meta, _ = summary.summarize_run(out)
    summary.save_summary(out, rows, defs, meta)
    head = (
        f"{config.rules}: {config.games} hands in {config.n_chunks} chunk(s) of {config.chunk_size}, seed {config.seed}, "
        f"policies {','.join(config.policies)}\n"
        f"{_played(res)}{res.chunks_skipped} already done; run directory {out}"
    )
    print(summary.format_summary(rows, head))
    if defs.get("comparable"):
        print(f"comparable non-飘: {defs['comparable']}")
    if defs.get(summary.PIAO_RATES_KEY):
        print(f"{summary.PIAO_RATES_KEY}: {defs[summary.PIAO_RATES_KEY]}")
    _print_examples(summary.example_hands(out))
    return 0


def _print_examples(lines: list[str]) -> None:
    """The summary's example hands of a simulate run or a match (summary.example_hands), each a command to
    open it."""
    print("example hands (each line: the command that replays it):")
    for line in lines:
        print(f"  {line}")


def _add_report(sub) -> None:
    p = sub.add_parser(
        "report",
        help="the summary of a run directory, with figures (PNG) and a self-contained HTML page",
        description="Re-read RUN_DIR and print its summary table (a simulate or match run: the same as at the "
        "end of caishen simulate, a partial run summarized as far as it got; a sweep: its table; a study: "
        "its estimates), then write beside summary.csv the figures RUN_DIR/fig-*.png and RUN_DIR/report.html "
        "(one page embedding them; matplotlib). A simulate run's chunks are first "
        "verified against its manifest: damaged ones are named with the repair command (exit status 1).",
    )
    p.add_argument("run_dir", help="a directory written by caishen simulate, match or sweep, or a study")
    p.add_argument("--no-figures", action="store_true", help="print the summary only")
    p.add_argument("--section", default=None, metavar="NAME",
                   help="print only this section of a simulate run's summary (its name as in the table's first "
                   "column, case ignored; an unknown name lists the sections) and write no figures")
    p.set_defaults(func=_cmd_report)


def _cmd_report(args) -> int:
    from caishen.sim.analysis import report

    kind = report.run_kind(args.run_dir)  # ValueError for a directory of another kind: nothing written
    if args.section is not None and kind != "simulate":
        raise ValueError(f"--section applies to a simulate run's summary; {args.run_dir!r} is a {kind} run")
    status = {"simulate": _report_simulate, "match": _report_match, "sweep": _report_sweep,
              "study": _report_study}[kind](args)
    if status != 0:  # the figures read every chunk: only from a run whose chunks all verified
        print("report: no figures until the damaged chunks are repaired (see above)", file=sys.stderr)
    elif not args.no_figures and args.section is None:
        page = report.write_report(args.run_dir)
        print(f"report: {page}")
    return status


def _report_sweep(args) -> int:
    from caishen.sim.analysis import study

    doc, table = study.read_sweep(args.run_dir)
    print(f"sweep {doc['grid']['rules']}: {doc['walls']} walls per point, seed {doc['seed']}")
    print(study.describe(doc["grid"]))
    print(study.format_table(table))
    return 0


def _report_study(args) -> int:
    from caishen.sim.analysis import piao_study

    doc, pts, check = piao_study.read_points(args.run_dir)  # verified chunks only
    for line in check.describe():
        print(f"caishen report: {line}", file=sys.stderr)
    by = piao_study.PIAO_FEATURES if doc.get("decision") == "piao" else ()
    print(f"study {doc.get('decision')}: {doc.get('hands')} hands, {doc.get('rollouts')} rollouts per branch, "
          f"seed {doc.get('seed')}; {len(pts)} decision points")
    if doc.get("decision") == "piao":
        print("comparison: " + piao_study.comparison(doc["policies"], doc.get("keep_then"), doc.get("per_hand", False)))
    print(piao_study.estimate(pts, by=by).to_string(index=False))
    return 1 if check.problems else 0


def _report_match(args) -> int:
    from caishen.sim.analysis import arena
    from caishen.sim.selfplay import manifest, rundir

    meta = rundir.read_run_json(args.run_dir)
    check = manifest.verify(args.run_dir, meta)
    for line in check.describe():
        print(f"caishen report: {line}", file=sys.stderr)
    summ = arena.summarize_match(args.run_dir)  # verified chunks only
    arena.save_summary(args.run_dir, summ)
    print(arena.format_summary(summ, f"{summ['rules']}: {summ['walls_done']} of {summ['walls']} walls x "
                                     f"{summ['seatings']} seatings, seed {summ['seed']}"))
    if check.problems:
        print("repair: rerun the same `caishen match` command: it replays the damaged chunks from their seeds",
              file=sys.stderr)
    return 1 if check.problems else 0


def _report_simulate(args) -> int:
    from caishen.sim.selfplay import manifest, rundir
    from caishen.sim.analysis import summary

    meta = rundir.read_run_json(args.run_dir)
    check = manifest.verify(args.run_dir, meta)
    if check.problems or check.stray or check.damaged_lines:
        print(f"caishen report: {len(check.problems)} chunk(s) of {args.run_dir} are not usable and are left out "
              "of the summary:" if check.problems else f"caishen report: {args.run_dir}:", file=sys.stderr)
        for line in check.describe():
            print(f"  {line}", file=sys.stderr)
        if check.problems or check.damaged_lines:
            print(_repair_hint(args.run_dir, bool(check.problems), bool(check.damaged_lines)), file=sys.stderr)
    if not check.ok:
        raise ValueError(f"no verified chunk in {args.run_dir!r} to summarize"
                         + ("" if check.problems else " (the run has not finished a chunk yet)"))
    rows, defs, meta, done = summary.summarize_run(args.run_dir, verification=check)
    n_chunks = meta.get("n_chunks", done)
    status = "" if done == n_chunks else (" (partial run)" if not check.problems else " (damaged chunks left out)")
    head = (
        f"{meta.get('rules')}: {meta.get('games')} hands in {n_chunks} chunk(s) of {meta.get('chunk_size')}, "
        f"seed {meta.get('seed')}, policies {','.join(meta.get('policies', []))}\n"
        f"finished chunks: {done} of {n_chunks}" + status
        + ("; no manifest (a run of an older caishen): chunk checksums not verified" if check.legacy else "")
    )
    if args.section is not None:
        print(summary.format_summary(summary.section(rows, args.section), head))
        return 1 if check.problems else 0
    print(summary.format_summary(rows, head))
    for key, text in defs.items():
        print(f"{key}: {text}")
    _print_examples(summary.example_hands(args.run_dir, verification=check))
    return 1 if check.problems else 0


def _add_sweep(sub) -> None:
    p = sub.add_parser(
        "sweep",
        help="a grid of rule options and/or hero policies on the same walls (duplicate deals), with CIs",
        description="Play every point of a grid -- each --option KEY=V1,V2,... is an axis, --policy P1,P2,... "
        "the hero's policies (one seat; the others play --field) -- on the same walls, each wall its own "
        "one-hand match, through the runner (resumable). Prints and writes OUT/sweep.csv: one row per point "
        "and metric with its 95% CI over walls and the paired difference to the baseline point.",
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
    _add_executor_args(p)
    _add_seat_args(p)
    p.add_argument("--chunk-size", type=int, default=None, help="walls per chunk (default 10000)")
    p.add_argument("--no-progress", action="store_true", help="no progress bar")
    p.set_defaults(func=_cmd_sweep)


def _cmd_sweep(args) -> int:
    from caishen.sim.selfplay import runner
    from caishen.sim.analysis import study

    if not 1 <= args.walls <= 10**9:
        raise ValueError(f"--walls {args.walls}: must be in 1..10**9")
    _check_executor_args(args)
    if args.chunk_size is not None and not 1 <= args.chunk_size <= MAX_CHUNK_SIZE:
        raise ValueError(f"--chunk-size {args.chunk_size}: must be in 1..{MAX_CHUNK_SIZE}")
    workers = 1 if _open_seats([*_specs(args.policy), *_specs(args.field)], args) else args.workers
    try:
        table = study.sweep(args.rules, args.out, options=args.option, policies=args.policy, field=args.field,
                            walls=args.walls, seed=args.seed, baseline=args.baseline,
                            chunk_size=args.chunk_size or runner.DEFAULT_CHUNK_SIZE, workers=workers,
                            backend=args.backend, ray_address=args.ray_address, progress=not args.no_progress)
    except KeyboardInterrupt:
        print(f"caishen sweep: interrupted; rerun the same command to resume ({args.out})", file=sys.stderr)
        return 130
    print(f"sweep {args.rules}: {args.walls} walls per point, seed {args.seed}; table {args.out}/sweep.csv")
    print(study.describe(study.read_sweep_json(args.out)["grid"]))
    print(study.format_table(table))
    return 0


def _add_rules(sub) -> None:
    p = sub.add_parser(
        "rules",
        help="print the definition of rule IDs (K-2.5, J-4.2, P27, 'Kaihua D3', 'engine E3')",
        description="Print the definition of each rule, pattern or decision ID from the rule reference "
        "that ships with the package (docs/rules/): a rule with its continuation lines, a pattern's table "
        "row, or a whole section (J-7). Without an ID: the reference's index.",
    )
    p.add_argument("ids", nargs="*", metavar="ID", help="e.g. K-2.5, k_2_5, P27, J-7, 'Kaihua D3', 'engine E3'")
    p.add_argument("--options", default=None, metavar="RULES",
                   help="print the options of rule set RULES instead: name, rule, default, bounds or choices and "
                   "doc line of each, from their one declaration (also the --option KEY=VALUE of simulate, match "
                   "and sweep)")
    p.set_defaults(func=_cmd_rules)


def _cmd_rules(args) -> int:
    from caishen.sim import ruledocs

    if args.options is not None:
        from caishen.sim.rules import base
        from caishen.sim.rules.options import options_table

        print(options_table(base.get(args.options).options), end="")  # ValueError (exit 2) names an unknown one
        return 0
    if not args.ids:
        print(ruledocs.pages()["README.md"], end="")
        return 0
    texts = [ruledocs.rule_text(i) for i in args.ids]  # ValueError (exit 2) names an unknown ID
    print("\n".join(texts), end="")
    return 0


def _add_warmup(sub) -> None:
    from caishen.sim.warmup import TARGETS

    p = sub.add_parser(
        "warmup",
        help="compile every numba kernel ahead of time (for a cluster image, a container, CI)",
        description="Compile (or load from numba's disk cache) the kernels of each target by running a tiny "
        "workload of it, printing the seconds each took. A first run on a fresh machine compiles for a few "
        "minutes; afterwards every command starts in about a second.",
    )
    p.add_argument("targets", nargs="*", metavar="TARGET",
                   help=f"what to compile (default: all of {', '.join(TARGETS)})")
    p.set_defaults(func=_cmd_warmup)


def _workloads() -> dict:
    """``{target: workload}``: each target's tiny workload is the ``warm()`` of the module owning its kernels."""
    import caishen.envs
    from caishen.sim import hand
    from caishen.sim.engine import game
    from caishen.sim.rules import vectors
    from caishen.sim.selfplay import batch

    return {"selfplay": batch.warm, "bots": batch.warm_bots, "game": game.warm, "envs": caishen.envs.warm,
            "hand": hand.warm, "score": vectors.warm}


def warmup(targets=None, progress=None) -> dict[str, float]:
    """Compile (or load from the cache) the kernels of each target; ``{target: seconds}``.

    ``targets``: names from :data:`caishen.sim.warmup.TARGETS` (default all).
    ``progress(line)`` is called before and after each target (e.g.
    ``print``).  Marks each target so that the first-use warning
    (:func:`caishen.sim.warmup.first_use`) stays quiet afterwards.  Raises
    ``ValueError`` for an unknown target.
    """
    import time

    from caishen.sim import warmup as W

    targets = W.TARGETS if targets is None else (targets,) if isinstance(targets, str) else tuple(targets)
    for t in targets:
        W.check_target(t)
    work, took = _workloads(), {}
    for t in targets:
        if progress:
            progress(f"kernels: {t} ...")
        t0 = time.perf_counter()
        W.announce(t)  # no first-use warning inside the warmup itself
        with W.CompileWatch() as w:  # what really happened: compiled, or loaded from the cache
            work[t]()
        took[t] = time.perf_counter() - t0
        W.set_mark(t)
        if progress:
            what = f"compiled {w.kernels} kernel(s)" if w.kernels else "loaded from the cache"
            progress(f"kernels: {t} {what} in {took[t]:.1f} s")
    return took


def _cmd_warmup(args) -> int:
    from caishen.sim.warmup import cache_dir

    took = warmup(args.targets or None, progress=print)
    print(f"ready in {sum(took.values()):.1f} s; numba cache: {cache_dir()}")
    return 0


#: bounds of ``caishen match``
MAX_WALLS = 10**9
MAX_CHUNK_WALLS = 10**6


def _add_match(sub) -> None:
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
    p.add_argument("--walls", type=int, required=True, help="walls to play (each in every seating)")
    p.add_argument("--seed", type=int, default=0, help="root seed, 0..2**63-1 (default 0)")
    p.add_argument("--out", required=True, help="run directory (created; reused to resume)")
    p.add_argument("--option", action="append", default=[], metavar="KEY=VALUE",
                   help="rule option, e.g. discard_win=false (repeatable)")
    _add_executor_args(p)
    p.add_argument("--chunk-walls", type=int, default=None, help="walls per chunk (default 1000)")
    p.add_argument("--schedule", default=None, choices=tuple(_arena().SCHEDULES),
                   help="the seatings of each wall: "
                   + "; ".join(f"{k}: {v}" for k, v in _arena().SCHEDULE_ABOUT.items())
                   + f" (default {_arena().DEFAULT_SCHEDULE}; docs/arena.md)")
    _add_seat_args(p)
    p.add_argument("--no-progress", action="store_true", help="no progress bar")
    p.set_defaults(func=_cmd_match)


def _arena():
    from caishen.sim.analysis import arena

    return arena


def _cmd_match(args) -> int:
    from caishen.sim.analysis import arena
    from caishen.sim.selfplay import runner
    from caishen.sim.rules.options import parse_option_strings

    for name, v, hi in (("--walls", args.walls, MAX_WALLS), ("--chunk-walls", args.chunk_walls, MAX_CHUNK_WALLS)):
        if v is not None and v < 1:
            raise ValueError(f"{name} {v}: must be a positive integer")
        if v is not None and v > hi:
            raise ValueError(f"{name} {v}: at most {hi}")
    _check_executor_args(args)
    options = parse_option_strings(args.option)
    hosted = _open_seats(_specs(args.policies), args)
    workers = 1 if hosted else args.workers  # open seats play in this process
    config = arena.make_config(args.rules, args.policies, args.walls, args.seed, options,
                               args.chunk_walls or arena.DEFAULT_CHUNK_WALLS, args.schedule or arena.DEFAULT_SCHEDULE)
    sched, n = arena.schedule_of(config)

    def start() -> None:
        print(f"{config.rules}: {args.walls} walls x {len(arena.seatings(n, sched))} seatings in {config.n_chunks} "
              f"chunk(s) to {args.out}{_cold_note(config)}", file=sys.stderr)

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
    summary = arena.summarize_match(args.out)
    arena.save_summary(args.out, summary)
    head = (f"{config.rules}: {summary['walls_done']} walls x {summary['seatings']} seatings, seed {config.seed}, "
            f"policies {','.join(summary['policies'])}\n"
            f"{_played(res)}{res.chunks_skipped} already done; run directory {args.out}")
    print(arena.format_summary(summary, head))
    if hosted:
        print("example hands: none (a hand with a python: or exec: seat is not re-played by `caishen replay`: "
              "their moves are not stored)")
        return 0
    from caishen.sim.analysis import summary as run_summary

    _print_examples(run_summary.example_hands(args.out))  # a match's hands replay as a simulate run's
    return 0


def _add_ladder(sub) -> None:
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
    _add_executor_args(p, " per pair")
    p.add_argument("--chunk-walls", type=int, default=None, help="walls per chunk (default 1000)")
    _add_seat_args(p)
    p.add_argument("--no-progress", action="store_true", help="no progress bar")
    p.set_defaults(func=_cmd_ladder)


def _cmd_ladder(args) -> int:
    from caishen.sim.analysis import arena, ladder
    from caishen.sim.rules.options import parse_option_strings

    _check_executor_args(args)
    if args.add is not None:
        given = [f for f, v in (("--bots", args.bots), ("--walls", args.walls), ("--option", args.option or None),
                                ("--chunk-walls", args.chunk_walls)) if v is not None]
        if given:
            raise ValueError(f"--add takes the ladder's configuration from {args.out}/ladder.json; drop "
                             + ", ".join(given))
        _open_seats([*ladder.read_config(args.out).bots, args.add], args)
        config = ladder.add_bot(args.out, args.add)
    else:
        if args.walls is None:
            raise ValueError("ladder needs --walls (or --add SPEC to extend the ladder in --out)")
        options = parse_option_strings(args.option)
        bots = ladder.builtin_bots(args.rules) if args.bots is None else args.bots
        _open_seats(_specs(bots) if isinstance(bots, str) else bots, args)
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


def _add_replay(sub) -> None:
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
    p.set_defaults(func=_cmd_replay)


def _cmd_replay(args) -> int:
    from caishen.sim.analysis import replay

    if args.seat is not None and not 0 <= args.seat < 4:
        raise ValueError(f"--seat {args.seat}: a seat is 0..3")
    if args.html:  # before the replay is played and printed: a page that cannot be written is named first
        folder = Path(args.html).expanduser().parent
        if not folder.is_dir():
            raise ValueError(f"--html {args.html}: no such folder {str(folder)!r} to write the page in")
    trace = replay.load(args.run, args.hand)
    if not args.quiet:
        print(replay.render_text(trace, args.seat), end="")
    if args.html:
        from caishen.sim.analysis.replay_html import write_html

        print(f"replay page: {write_html(trace, args.html)}")
    return 0


def _add_play(sub) -> None:
    p = sub.add_parser(
        "play",
        help="play one seat against bots in the terminal, then see the replay",
        description="Play one hand as one seat against three bots: the table is drawn from your seat's view, "
        "your legal actions numbered; type a number or an action name (discard 3m).  At the end the whole "
        "hand is shown move by move.",
    )
    p.add_argument("--rules", default=DEFAULT, help=f"rule set (default {DEFAULT})")
    p.add_argument("--option", action="append", default=[], metavar="KEY=VALUE",
                   help="rule option, e.g. discard_win=false (repeatable)")
    p.add_argument("--seat", type=int, default=0, help="your seat 0..3 (default 0)")
    p.add_argument("--policy", default="greedy", help="the bots' policy (default greedy)")
    p.add_argument("--seed", type=int, default=None, help="the wall's seed 0..2**32-1 (default: fresh)")
    p.add_argument("--hint", action="store_true", help="show your shanten, the best discards and your waits")
    p.add_argument("--html", default=None, metavar="FILE", help="also write the replay page to FILE")
    p.set_defaults(func=_cmd_play)


def _cmd_play(args) -> int:
    from caishen.agents.play import play
    from caishen.sim.rules.options import parse_option_strings

    play(args.rules, parse_option_strings(args.option), seat=args.seat, policy=args.policy, seed=args.seed,
         hint=args.hint, html=args.html)
    return 0


def _add_piao(sub) -> None:
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
    p.add_argument("--hands", type=int, default=piao_answer.DEFAULT_HANDS,
                   help=f"hands of the study (default {piao_answer.DEFAULT_HANDS:,})")
    p.add_argument("--rollouts", type=int, default=piao_study.DEFAULT_ROLLOUTS,
                   help=f"rollouts per branch at a chance (default {piao_study.DEFAULT_ROLLOUTS})")
    p.add_argument("--check-walls", type=int, default=piao_answer.DEFAULT_CHECK_WALLS,
                   help=f"walls per policy of the duplicate-deal check (default {piao_answer.DEFAULT_CHECK_WALLS:,}; "
                   "0 skips it)")
    p.add_argument("--seed", type=int, default=0, help="seed of the study's walls (the check plays seed + 1)")
    p.add_argument("--out", required=True, help="directory (created; reused to resume)")
    p.add_argument("--workers", type=int, default=None, help="worker processes (default: all cores; 1 = in-process)")
    p.add_argument("--no-progress", action="store_true", help="no progress bar")
    p.set_defaults(func=_cmd_piao)


def _cmd_piao(args) -> int:
    from caishen.sim.analysis import piao_answer

    if args.workers is not None and not 1 <= args.workers <= MAX_WORKERS:
        raise ValueError(f"--workers {args.workers}: must be in 1..{MAX_WORKERS}")
    try:
        ans = piao_answer.run(args.rules, args.out, policy=args.policy, keep_then=args.keep_then, hands=args.hands,
                              seed=args.seed, rollouts=args.rollouts, check_walls=args.check_walls,
                              workers=args.workers, progress=not args.no_progress)
    except KeyboardInterrupt:
        print(f"caishen piao: interrupted; rerun the same command to resume ({args.out})", file=sys.stderr)
        return 130
    print(piao_answer.format_answer(ans, args.out))
    return 0


def _add_power(sub) -> None:
    p = sub.add_parser(
        "power",
        help="walls needed for a target CI half-width, or the half-width a number of walls buys",
        description="Plan a sweep or match: from a finished pilot (--from DIR: a sweep's or a match's directory, "
        "every per-wall sd it measured) or a stated per-wall sd (--sd), print the walls a 95% interval of the "
        "given half-width needs (--half-width) and/or the half-width --walls walls buy (Student t over walls).",
    )
    src = p.add_mutually_exclusive_group(required=True)
    src.add_argument("--from", dest="pilot", metavar="DIR", help="a finished sweep or match directory (the pilot)")
    src.add_argument("--sd", type=float, help="a per-wall standard deviation (points per hand, or of a paired "
                     "difference)")
    p.add_argument("--half-width", type=float, default=None, help="the target half-width (same unit as the sd)")
    p.add_argument("--walls", type=int, default=None, help="a number of walls to price")
    p.add_argument("--metric", default="score", help="the sweep metric to plan for (default score)")
    p.set_defaults(func=_cmd_power)


def _cmd_power(args) -> int:
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


def build_parser() -> argparse.ArgumentParser:
    from caishen.agents import exit as expert_iteration
    from caishen.agents import tune

    parser = argparse.ArgumentParser(
        prog="caishen",
        description="Self-play simulation and research toolkit for Chinese regional mahjong (开化 with the 财神, "
        "架听): the registered rule sets.",
    )
    parser.add_argument("--version", action="version", version=f"caishen {__version__}")
    sub = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")
    for add in (_add_hand, _add_score, _add_simulate, _add_report, _add_rules, _add_warmup, _add_sweep, _add_match,
                _add_ladder, _add_replay, _add_play, tune.add_command, expert_iteration.add_command, _add_piao,
                _add_power):
        add(sub)
    for name in BOT_COMMANDS:
        sub.choices[name].epilog = _bots_epilog(name in OPEN_SEAT_COMMANDS)
        sub.choices[name].formatter_class = _HelpFormatter
    return parser


def _one_line(command: str, e: BaseException) -> str:
    from caishen.sim.rules.options import short_text

    return f"caishen {command}: error: {short_text(str(e))}\n"


#: commands that never call a numba kernel (rules) or say what they compile themselves (warmup): no compile line
NO_KERNELS = ("rules", "warmup")


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
        parser = build_parser()
        args = parser.parse_args(argv)
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
    except KeyboardInterrupt:
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
