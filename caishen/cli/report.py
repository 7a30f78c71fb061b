"""``caishen report RUN_DIR``: a run's summary again, with figures and one HTML page (:mod:`caishen.sim.analysis.report`)."""

from __future__ import annotations

import sys

from caishen.cli import common


def add(sub) -> None:
    p = sub.add_parser(
        "report",
        help="the summary of a run directory, with figures (PNG) and a self-contained HTML page",
        description="Re-read RUN_DIR and print its summary table (a simulate or match run: the same as at the "
        "end of caishen simulate, a partial run summarized as far as it got; a sweep: its table; a study: "
        "its estimates; a ladder: its ratings; a caishen piao folder: its answer), then write beside summary.csv the figures RUN_DIR/fig-*.png and RUN_DIR/report.html "
        "(one page embedding them; matplotlib). A simulate run's chunks are first "
        "verified against its manifest: damaged ones are named with the repair command (exit status 1).",
    )
    p.add_argument("run_dir", help="a directory written by caishen simulate, match, sweep, ladder or piao, or a study")
    p.add_argument("--no-figures", action="store_true", help="print the summary only")
    p.add_argument("--section", default=None, metavar="NAME",
                   help="print only this section of a simulate run's summary (its name as in the table's first "
                   "column, case ignored; an unknown name lists the sections) and write no figures")
    p.set_defaults(func=run)


def run(args) -> int:
    from caishen.sim.analysis import report

    kind = report.run_kind(args.run_dir)  # ValueError for a directory of another kind: nothing written
    if args.section is not None and kind != "simulate":
        raise ValueError(f"--section applies to a simulate run's summary; {args.run_dir!r} is a {kind} run")
    status = {"simulate": _report_simulate, "match": _report_match, "sweep": _report_sweep,
              "study": _report_study, "ladder": _report_ladder, "piao": _report_piao}[kind](args)
    if status != 0:  # the figures read every chunk: only from a run whose chunks all verified
        print("report: no figures until the damaged chunks are repaired (see above)", file=sys.stderr)
    elif not args.no_figures and args.section is None:
        if sys.stderr.isatty():  # seconds on a million hands: say so at a terminal (a pipe gets only the result)
            print("report: drawing the figures and report.html ...", file=sys.stderr, flush=True)
        page = report.write_report(args.run_dir)
        print(f"report: {page}")
    return status


def _report_ladder(args) -> int:
    from caishen.sim.analysis import ladder

    print(ladder.format_markdown(ladder.summarize_ladder(args.run_dir)))
    return 0


def _report_piao(args) -> int:
    from pathlib import Path

    from caishen.sim import safeio
    from caishen.sim.analysis import piao_answer

    answer = safeio.read_json(Path(args.run_dir) / piao_answer.ANSWER_JSON, 16 << 20, what="a piao_answer.json",
                             constants=True)  # a cell without chances is NaN
    print(piao_answer.format_answer(answer, args.run_dir))
    return 0


def _report_sweep(args) -> int:
    from caishen.sim.analysis import study

    doc, table = study.read_sweep(args.run_dir)
    print(f"sweep {doc['grid']['rules']}: {doc['walls']} walls per point, seed {doc['seed']}")
    print(study.describe(doc["grid"]))
    print(study.format_grid(table, width=common.width()))
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
            print(common.repair_hint(args.run_dir, bool(check.problems), bool(check.damaged_lines)), file=sys.stderr)
    if not check.ok:
        raise ValueError(f"no verified chunk in {args.run_dir!r} to summarize"
                         + ("" if check.problems else " (the run has not finished a chunk yet)"))
    rows, defs, meta, done = summary.summarize_run(args.run_dir, verification=check)
    n_chunks = meta.get("n_chunks", done)
    status = "" if done == n_chunks else (" (partial run)" if not check.problems else " (damaged chunks left out)")
    head = common.wrapped(
        f"{meta.get('rules')}: {meta.get('games')} hands in {n_chunks} chunk(s) of {meta.get('chunk_size')}, "
        f"seed {meta.get('seed')}, policies {','.join(meta.get('policies', []))}",
        f"finished chunks: {done} of {n_chunks}" + status
        + ("; no manifest (a run of an older caishen): chunk checksums not verified" if check.legacy else "")
    )
    if args.section is not None:
        print(summary.format_summary(summary.section(rows, args.section), head))
        return 1 if check.problems else 0
    print(summary.format_summary(rows, head))
    print(summary.format_definitions(defs))
    common.print_examples(summary.example_hands(args.run_dir, verification=check))
    return 1 if check.problems else 0
