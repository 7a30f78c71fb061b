"""The rule sets, as peers: each one a package that describes itself and registers (``kaihua``, ``jiating``).

====================  ===================================================================
module                what it is
====================  ===================================================================
``base``              the interface: :class:`RuleSet` (what a rule set gives the engine
                      and the tools) and the registry :func:`register`, :func:`get`,
                      :func:`names`
``kernels``           the one place where the engine reaches a rule set's numba kernels:
                      the kernel codes and their dispatch
``options``           the validated options machinery every rule set's options derive from
``kaihua/``           Kaihua 开化 with the 财神 joker (``docs/rules/kaihua.md``)
``jiating/``          Jiating 架听 (``docs/rules/jiating.md``)
====================  ===================================================================

Rule sets import the hand kernels (:mod:`caishen.sim.hand`), never the
engine's turn structure (a rule set's record finisher reads the engine's
record layout).  The engine, the runner, the CLI and the scoring vectors
find a rule set by name in the registry; nothing branches on a rule set's
name.

How to add a rule set
---------------------
A third regional rule set, say ``wenzhou``, is a package beside the two;
``tests/test_ruleset_toy.py`` follows these steps with a toy rule set
defined in the test.

1. **Options.**  ``sim/rules/wenzhou/options.py``: a frozen dataclass
   deriving from :class:`caishen.sim.rules.options.Options` (every field
   typed and with the spec's default; ``_check`` for ranges; a
   ``reserved_tiles`` field, the tiles never drawn) and its ``params()``:
   the options packed as the ``int64`` array that its kernels read.
2. **Facts.**  In ``sim/rules/wenzhou/__init__.py`` a ``FACTS`` dict with
   every key of :data:`caishen.sim.rules.base.FACT_KEYS` (joker kind or -1,
   chow, robbing an added kong, the passed-pong and passed-win bans,
   kongs after a claim, a random first dealer, 架听 / 硬子 declarations,
   the 飘 rules), and the :data:`~caishen.sim.rules.base.OPTION_FACTS` the
   options class lacks (several winners, swap call, dealer rotation,
   discard wins).  Cite the rule of each value.
3. **Kernels.**  Reuse a win test and a payments code of
   :mod:`caishen.sim.rules.kernels` (``WIN_KERNEL_JOKER``: Kaihua's hand
   types; ``WIN_KERNEL_SHAPE``: any complete hand; ``PAYMENTS_EXPONENT``;
   ``PAYMENTS_NONE``: scored after the hand), or write
   ``sim/rules/wenzhou/kernels.py`` with an ``@njit(cache=True)``
   ``_evaluate_win`` of the shared signature (and ``_payments``) and add its
   code and **one branch** to ``_win_kernel`` (``_pay``) in
   :mod:`caishen.sim.rules.kernels`; nothing else in the engine changes.
4. **Records.**  Without a finisher a hand's record is the engine's
   ``RECORD_COLUMNS``.  A rule set scored after the hand (Jiating) gives
   ``finish="caishen.sim.rules.wenzhou.records:finish_records"`` (the
   engine's batch matrix -> its columns) and
   ``columns="...records:COLUMNS"`` (its records contract).
5. **Scoring vectors.**  ``score="caishen.sim.rules.wenzhou.scoring:score"``,
   ``score(case, rules) -> dict`` for ``caishen score`` (``ValueError``
   naming a bad key or value), and ``plain_case``: the keys of a plain
   self-draw case besides the common ones (``caishen hand --rules``).
6. **Register.**  At the end of ``sim/rules/wenzhou/__init__.py``:
   ``RULESET = register(RuleSet(name="wenzhou", options=..., facts=FACTS,
   win_kernel=..., payments=..., ...))``, and add
   ``"caishen.sim.rules.wenzhou"`` to :data:`caishen.sim.rules.base.BUILTIN`
   (so that worker processes and the CLI import it) and the package to
   ``pyproject.toml``'s ``packages``.  A rule set registered at run time
   (a notebook, a test) plays in this process (``Game``, ``play_batch``,
   the runner with ``workers=1``).
7. **Docs and tests.**  ``docs/rules/wenzhou.md`` defining every rule ID the
   code cites (``tests/test_rule_docs.py`` checks), and tests named after
   the rule IDs; the engine's invariant checker runs on your rule set with
   ``play_batch(..., check=True)``.
"""

from caishen.sim.rules.base import BUILTIN, FACT_KEYS, OPTION_FACTS, RuleSet, get, names, register  # noqa: F401
