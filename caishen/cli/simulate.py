"""``caishen simulate``: batch self-play into a resumable Parquet run directory, then its summary (the main job)."""

from __future__ import annotations

import sys

from caishen.cli import common
from caishen.sim.rules.base import DEFAULT


def add(sub) -> None:
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
    common.add_executor_args(p)
    common.add_seat_args(p)
    p.add_argument("--chunk-size", type=int, default=None, help="hands per chunk (default 10000)")
    p.add_argument("--no-progress", action="store_true", help="no progress bar")
    p.set_defaults(func=run)

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
    if args.games > common.MAX_GAMES:
        raise ValueError(f"--games {args.games}: at most {common.MAX_GAMES}")
    if args.chunk_size is not None and args.chunk_size < 1:
        raise ValueError(f"--chunk-size {args.chunk_size}: must be a positive integer")
    if args.chunk_size is not None and args.chunk_size > common.MAX_CHUNK_SIZE:
        raise ValueError(f"--chunk-size {args.chunk_size}: at most {common.MAX_CHUNK_SIZE} hands per chunk")
    config = runner.make_config(
        args.rules or DEFAULT,
        args.games,
        0 if args.seed is None else args.seed,
        policies=args.policy or "greedy",
        options=parse_option_strings(args.option),
        chunk_size=args.chunk_size or runner.DEFAULT_CHUNK_SIZE,
    )
    return config, args.out


def run(args) -> int:
    from caishen.sim.selfplay import manifest, runner
    from caishen.sim.analysis import summary

    common.check_executor_args(args)
    if args.resume is not None:
        from caishen.sim.selfplay import rundir

        common.open_seats(rundir.read_run_json(args.resume).get("policies", []), args)
    else:
        common.open_seats(common.specs(args.policy), args)
    config, out = _simulate_config(args)
    from caishen.sim.bots.registry import seat_workers

    def start() -> None:  # a cold cache's compile then says itself (caishen.sim.warmup.compile_line)
        print(common.wrapped(f"{config.rules}: {config.games} hands in {config.n_chunks} chunk(s) to {out}"),
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
    head = common.wrapped(
        f"{config.rules}: {config.games} hands in {config.n_chunks} chunk(s) of {config.chunk_size}, seed {config.seed}, "
        f"policies {','.join(config.policies)}",
        f"{common.played(res)}{res.chunks_skipped} already done; run directory {out}"
    )
    print(summary.format_summary(rows, head))
    # the footnotes, wrapped (飘 minus comparable is a selection effect: said beside it, as report says it)
    notes = {**{k: defs.get(k) for k in ("independent units", "dealer share")},
             "comparable non-飘": defs.get("comparable"),
             **{k: defs.get(k) for k in (summary.PIAO_RATES_KEY, "observational")}}
    if any(notes.values()):
        print(summary.format_definitions(notes))
    common.print_examples(summary.example_hands(out))
    return 0
