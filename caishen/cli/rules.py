"""``caishen rules ID...``: rule definitions from the reference that ships with the package (:mod:`caishen.sim.ruledocs`).

Imports nothing heavy: ``caishen rules`` starts in well under a CPU second."""

from __future__ import annotations


def add(sub) -> None:
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
                   "and sweep); one block per option (--markdown: the table)")
    p.add_argument("--markdown", action="store_true",
                   help="print the reference's Markdown as written (default: plain text, tables as one block per row)")
    p.set_defaults(func=run)


def run(args) -> int:
    from caishen.sim import ruledocs

    show = (lambda md: md) if args.markdown else ruledocs.plain_text
    if args.options is not None:
        from caishen.sim.rules import base
        from caishen.sim.rules.options import options_table

        print(show(options_table(base.get(args.options).options)), end="")  # ValueError (exit 2): unknown one
        return 0
    if not args.ids:
        print(show(ruledocs.pages()["README.md"]), end="")
        return 0
    texts = [ruledocs.rule_text(i) for i in args.ids]  # ValueError (exit 2) names an unknown ID
    print(show("\n".join(texts)), end="")
    return 0
