"""The rule sets, as peers: each one a package that describes itself and registers (``kaihua``, ``jiating``).

====================  ===================================================================
module                what it is
====================  ===================================================================
``base``              the interface: :class:`RuleSet` (what a rule set gives the engine
                      and the tools) and the registry :func:`register`, :func:`get`,
                      :func:`names`
``codes``             the kernel codes (win test, payments, points of a finished hand)
                      and the win types every rule set shares
``kernels``           the one place where the engine and the tools reach a rule set's
                      numba kernels: the dispatch on those codes
``options``           the validated options machinery every rule set's options derive from
``kaihua/``           Kaihua 开化 with the 财神 joker (``docs/rules/kaihua.md``)
``jiating/``          Jiating 架听 (``docs/rules/jiating.md``)
====================  ===================================================================

Rule sets import the hand kernels (:mod:`caishen.sim.hand`), never the
engine's turn structure (a rule set's record finisher reads the engine's
record layout).  The engine, the runner, the CLI and the scoring vectors
find a rule set by name in the registry; nothing branches on a rule set's
name, and outside this package no library module names one
(``tests/test_layers.py``; the tools' default is :data:`DEFAULT`).  A rule
set's own analysis (``<name>/analysis.py``: its balance tables, report
figures, sweep metrics and studied decisions, a
:class:`~caishen.sim.rules.base.Analysis`) lives in its folder but belongs
to the analysis layer: nothing below that layer imports it.

How to add a rule set
---------------------
A third regional rule set, say ``wenzhou``, is a package beside the two;
``tests/test_ruleset_toy.py`` follows these steps with a toy rule set
defined in the test.

1. **Options.**  ``sim/rules/wenzhou/options.py``: a frozen dataclass
   deriving from :class:`caishen.sim.rules.options.Options`, every field
   one :func:`~caishen.sim.rules.options.option` declaration (below; a
   ``reserved_tiles`` field, the tiles never drawn, among them), and
   ``N_PARAMS``: the length of the ``int64`` array ``params()`` packs for
   its kernels.
2. **Facts.**  In ``sim/rules/wenzhou/__init__.py`` a ``FACTS`` dict with
   every key of :data:`caishen.sim.rules.base.FACT_KEYS` (joker kind or -1,
   chow, robbing an added kong, the passed-pong and passed-win bans,
   kongs after a claim, a random first dealer, 架听 / 硬子 declarations,
   the 飘 rules), and the :data:`~caishen.sim.rules.base.OPTION_FACTS` the
   options class lacks (several winners, swap call, dealer rotation,
   discard wins).  Cite the rule of each value.
3. **Kernels.**  Reuse a win test, a payments and a points code of
   :mod:`caishen.sim.rules.codes` (``WIN_KERNEL_JOKER``: hand types with a
   joker; ``WIN_KERNEL_SHAPE``: any complete hand; ``PAYMENTS_EXPONENT``;
   ``PAYMENTS_NONE``: scored after the hand; ``POINTS_ENGINE``: the engine's
   payments are the points; ``POINTS_PATTERNS``: the recorded wins scored by
   pattern tables, J-6), or write ``sim/rules/wenzhou/kernels.py`` with an
   ``@njit(cache=True)`` ``_evaluate_win`` of the shared signature (and
   ``_payments``, or a points kernel of the signature of
   :func:`caishen.sim.rules.kernels._hand_points` with its
   ``points_tables(rules)`` giving a named tuple of its own: its tables and
   scratch, as Jiating's ``PatternPoints``) and add its code to ``codes`` and
   **one branch** to ``_win_kernel`` (``_pay``, ``_hand_points``) in
   :mod:`caishen.sim.rules.kernels` (a points kernel with data: also its
   field of ``PointsContext`` and its line of ``_POINTS_DATA`` there).  That one-line edit outside the rule
   set's folder is forced by numba: a compiled engine step can only call a
   kernel it knows when it is compiled, and a dispatch on an integer code
   (not a function passed in) keeps one compiled engine for every rule set.
   Nothing else in the engine, the bots, the envs or the tools changes: the
   search bot's rollouts, the batched env, the records and the tuner all
   score a finished hand through ``_hand_points``.  A rule set registered at
   run time outside the package (a test) reuses the codes, and may add its
   own numba kernels behind the hooks that are plain Python calls (its
   record finisher, its scorer).
4. **Records.**  Without a finisher a hand's record is the engine's
   ``RECORD_COLUMNS``, whose generic joker / chain fields (``jokers_held``,
   ``joker_discards``, ``circle_failed``, ``chain_joker``) a rule set may
   record under its own names: ``field_columns="...records:FIELD_COLUMNS"``,
   ``{field: column stem}`` (Kaihua's 财神 / 飘 columns,
   :func:`caishen.sim.rules.records.engine_columns`).  A rule set scored after the hand (Jiating) gives
   ``finish="caishen.sim.rules.wenzhou.records:finish_records"`` (the
   engine's records, ``RECORD_DTYPE[n]`` of :mod:`caishen.sim.rules.records`
   read by field, ``rec["winner"]``, ``rec[i].wins[j].hand`` in a kernel,
   -> its columns) and
   ``columns="...records:COLUMNS"`` (its records contract).
5. **Scoring vectors.**  ``score="caishen.sim.rules.wenzhou.scoring:score"``,
   ``score(case, rules) -> dict`` for ``caishen score`` (``ValueError``
   naming a bad key or value), and ``plain_case``: the keys of a plain
   self-draw case besides the common ones (``caishen hand --rules``).
6. **Register.**  At the end of ``sim/rules/wenzhou/__init__.py``:
   ``RULESET = register(RuleSet(name="wenzhou", options=..., facts=FACTS,
   win_kernel=..., payments=..., points=..., reward_scale=...,
   analysis="caishen.sim.rules.wenzhou.analysis:ANALYSIS", ...))``
   (``reward_scale``: about one standard deviation of a seat's points per
   hand, the envs' ``reward="scaled"``; ``analysis``: optional, its
   :class:`~caishen.sim.rules.base.Analysis` subclass instance), and add
   ``"caishen.sim.rules.wenzhou"`` to :data:`caishen.sim.rules.base.BUILTIN`
   (so that worker processes and the CLI import it) and the package to
   ``pyproject.toml``'s ``packages``.  A rule set registered at run time
   (a notebook, a test) plays in this process (``Game``, ``play_batch``,
   the runner with ``workers=1``).
7. **Docs and tests.**  ``docs/rules/wenzhou.md`` defining every rule ID the
   code cites and its options table (``options_table`` of its options;
   ``tests/test_rule_docs.py`` checks both), and tests named after
   the rule IDs; the engine's invariant checker runs on your rule set with
   ``play_batch(..., check=True)``.

How to add a rule option
------------------------
An option is declared once, as a field of the rule set's options class::

    failed_piao_factor: int = option(
        2, "a failed 飘 player's self-draw share counts this many times in total",
        rule="K-9.3", lo=1, hi=16, slot=P_FAILED_PIAO_FACTOR)

with its type (``bool``, ``int``, ``int | None``, ``Literal[...]`` with
``codes=``: value -> kernel code, or a tuple read in Python), the spec's
default, its doc line, the rule ID it implements, its bounds and its slot
in ``params()`` (a new ``P_*`` constant, ``N_PARAMS`` one larger; no slot:
an option read in Python only).  From that one declaration
:class:`~caishen.sim.rules.options.Options` checks the value (``ValueError``
naming it), packs ``params()``, and
:meth:`~caishen.sim.rules.options.Options.declarations` gives the docs'
options table (regenerate it with ``options_table``; the test compares),
``caishen rules --options NAME`` and the axes ``caishen sweep`` accepts.
Then read ``params[P_...]`` in the kernel that implements the rule, and
test the rule by its ID.  An option only the engine's turn structure needs
is read by :func:`caishen.sim.engine.params.engine_params` by its name.
"""

from caishen.sim.rules.base import (  # noqa: F401
    BUILTIN,
    DEFAULT,
    FACT_KEYS,
    OPTION_FACTS,
    Analysis,
    RuleSet,
    get,
    names,
    register,
)
