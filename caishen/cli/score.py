"""``caishen score [FILE|-]``: score finished hands given as JSON lines (:mod:`caishen.sim.rules.vectors`)."""

from __future__ import annotations

import json
import sys

from caishen.cli import common


def _score_defaults_text() -> str:
    """The ``caishen score --help`` epilog: the keys a case may omit and their defaults (from
    caishen.sim.rules.vectors.defaults, so the help cannot drift from the parser)."""
    from caishen.sim.rules import vectors

    rows = [f"  {name}: " + ", ".join(f"{k}={json.dumps(v)}" for k, v in vectors.defaults(name).items())
            for name in vectors._vector_rule_sets()]
    return ("keys a hand typed by hand may omit, and the value each then takes:\n  id: \"line N\" "
            "(its line in the input)\n" + "\n".join(rows) + "\n(discarder null only suits a self-draw; "
            "rules, dealer, winner, win_type, concealed and win_tile are always needed)")


def add(sub) -> None:
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
        formatter_class=common.HelpFormatter,  # each line wrapped, the epilog's rows kept apart
    )
    p.add_argument("file", nargs="?", default="-", help="JSON-lines file, or - for stdin (default)")
    p.add_argument("--check", action="store_true",
                   help="compare each line's expect fields with the scored result; print the mismatches")
    p.add_argument("--explain", action="store_true",
                   help="explain each case's score as text instead of JSON: every hand type or pattern by name "
                   "(rule ID, pinyin, Chinese) with its exponent or points, the caps applied, who pays whom what")
    p.add_argument(
        "--rules-option",
        action="append",
        default=[],
        metavar="KEY=VALUE",
        help="score under a changed rule option, e.g. max_exponent=3 (repeatable; applies to every "
        "rule set that has the option)",
    )
    p.set_defaults(func=run)


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


def run(args) -> int:
    from caishen.sim.rules import vectors
    from caishen.sim.rules.options import parse_option_strings

    options = parse_option_strings(args.rules_option)
    if args.explain and args.check:
        raise ValueError("--explain and --check: give one of them")
    if args.explain:
        with _score_input(args.file) as stream:
            n, failed = vectors.explain_file(stream, sys.stdout, options)
        if failed:
            print(f"caishen score: {failed} of {n} case(s) could not be scored", file=sys.stderr)
        return 1 if failed else 0
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
