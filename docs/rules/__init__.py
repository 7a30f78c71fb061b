"""``caishen.rules_docs``: the rule reference's pages (``*.md``), shipped as package data.

Read them with :mod:`caishen.sim.ruledocs` (``rule_text("K-2.5")``) or
``caishen rules K-2.5``; ``README.md`` is the index.
"""
