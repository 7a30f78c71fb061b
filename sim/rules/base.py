"""The rule-set interface: the :class:`RuleSet` descriptor and the registry (``register``, ``get``, ``names``).

A rule set is one place (a package beside ``kaihua/`` and ``jiating/``) that
describes itself with a :class:`RuleSet` and registers it when imported
(OpenSpiel-style: the engine, the runner, the CLI and the scoring vectors look
rule sets up here by name and never branch on a name).  What a rule set gives:

- ``options``: its options class (a :class:`caishen.sim.rules.options.Options`
  dataclass; ``params()`` packs them as the ``int64`` array ``rp`` that its
  kernels read);
- ``facts``: what the rule set *is*, as far as the turn structure is
  concerned (joker kind, chow, robbing, passed pong / passed win, 架听 and
  硬子 declarations, ...: every key of :data:`FACT_KEYS`), turned into the
  engine params by :func:`caishen.sim.engine.params.engine_params`; the
  facts of :data:`OPTION_FACTS` give a value the rule set fixes where another
  rule set has an option (Jiating's several winners, J-3.4);
- ``win_kernel`` and ``payments``: the codes of its kernels in the one
  dispatch module :mod:`caishen.sim.rules.kernels` (the win test the engine
  asks on every draw and discard; the payments the engine makes on a win,
  or ``PAYMENTS_NONE`` when the wins are scored after the hand);
- ``points`` and ``points_tables``: the code of its *points* kernel (what a
  finished hand pays each seat: ``POINTS_ENGINE``, the engine's payments, or
  ``POINTS_PATTERNS``, the recorded wins scored after the hand), dispatched by
  :func:`caishen.sim.rules.kernels._hand_points` for the search bot, the
  batched env, the records and the tuner, and ``"module:function"`` of
  ``tables(rules)``, the context of its points kernel, a value of that
  kernel's own type (:class:`caishen.sim.rules.kernels.PointsContext`;
  None: none needed);
- ``reward_scale``: about one standard deviation of a seat's points per
  hand (the envs' ``reward="scaled"``);
- ``analysis``: ``"module:attribute"`` of its :class:`Analysis` (balance
  tables, report figures, sweep metrics, studied decisions; None: none);
- ``words``: ``"module:attribute"`` of its :class:`Words`:
  its record columns read as words and documented, its scores explained
  (None: the common columns only, no explanation);
- ``finish``: ``"module:function"`` of ``function(rules, rec) -> columns``
  that turns the engine's records (``RECORD_DTYPE[n]``, :mod:`caishen.sim.rules.records`)
  into the rule set's record columns
  (None: the engine's ``RECORD_COLUMNS``), ``field_columns``:
  ``"module:attribute"`` of ``{record field: column stem}``, the names it
  records some of the engine's generic record fields under (Kaihua's
  ``jokers_held`` is its ``caishen_0..3``;
  :func:`caishen.sim.rules.records.engine_columns`; None: the generic
  names), and ``columns``:
  ``"module:attribute"`` of its records contract (``(name, dtype)`` pairs;
  None: the common columns only);
- ``score``: ``"module:function"`` of ``score(case, rules) -> dict`` for the
  scoring vectors (``caishen score``), and ``plain_case``: the keys a plain
  self-draw case needs besides the common ones (``caishen hand --rules``);
- ``doc``: its page under ``docs/rules/``.

The strings are imported only when used, so registering a rule set stays
cheap (no scorer compiled, no pandas imported).  The built-in rule sets
(:data:`BUILTIN`) are imported on the first lookup; a rule set registered
at run time (a test, a notebook) is known to this process only (worker
processes of the runner import :data:`BUILTIN`, so an added rule set that
should run there belongs in that list).  How to add one: the docstring of
:mod:`caishen.sim.rules`.
"""

from __future__ import annotations

import dataclasses
import importlib
import re
from collections.abc import Mapping
from typing import Any

from caishen.sim.rules.codes import POINTS_ENGINE
from caishen.sim.rules.options import Options, short_repr

#: the facts every rule set states (engine params, :func:`caishen.sim.engine.params.engine_params`)
FACT_KEYS = (
    "joker",  # joker kind, or -1 (Kaihua K-2.1: 白 is the 财神; Jiating J-1.1: none)
    "chow",  # 1 if the next seat may chow (K-4.2)
    "rob_kong",  # 1 if an added kong can be robbed (K-5.5, J-3.3)
    "circle_ban",  # 1: no chow / pong / exposed kong while a 飘财 circle is open (K-9.2)
    "force_joker_min",  # holding this many jokers forces a joker discard (K-2.4), 0 off
    "force_joker_shape",  # 1: 爆头 shape + joker draw forces a joker discard (K-2.5)
    "passed_pong",  # 0 off, 1 same kind, 2 any kind (K-4.4, J-3.6)
    "passed_pong_claim_clears",  # 1: the passed-pong ban ends at a later claim too (K-4.4)
    "passed_win",  # 1: a passed win bans wins on discards until the next draw (J-3.5)
    "kong_after_claim",  # 1: kongs allowed right after a chow / pong
    "first_dealer_random",  # 1: a match's first dealer is random (J-2.2), else seat 0
    "declare",  # 1: 架听 declarations with a discard (J-4.1)
    "hard",  # 1: 硬子 declarations at the deal, automatic discards after (J-4.2)
)
#: facts that are options in another rule set: the value where the options class lacks the option
OPTION_FACTS = ("multiple_ron", "swap_call_max_chows", "dealer_rotation", "discard_win")


class Analysis:
    """A rule set's own analysis, called by the generic tools of :mod:`caishen.sim.analysis` (the
    ``analysis`` hook of :class:`RuleSet`).  This base class adds nothing: a rule set with analysis of
    its own subclasses it (``sim/rules/<name>/analysis.py``, a module of the analysis layer) and
    overrides what it has:

    - ``decisions``: ``{name: code}``, the counterfactual decisions of
      :mod:`caishen.sim.analysis.piao_study` that belong to the rule set;
    - ``pattern_names``: ``{column: name}``, the scored pattern columns of its
      records (the summary's ``patterns`` section);
    - ``study_stems`` / ``study_metrics``: the per-seat record columns
      (``<stem>_<seat>``) a sweep reads and the metrics
      :meth:`study_values` makes of them (:mod:`caishen.sim.analysis.study`),
      ``study_units`` what each measures, with its unit;
    - :meth:`balance_tables`, :meth:`table_functions`: its balance tables
      (:mod:`caishen.sim.analysis.balance`); :meth:`report`: its section of
      a simulate run's report (:mod:`caishen.sim.analysis.report`).
    """

    decisions: Mapping[str, int] = {}
    pattern_names: Mapping[str, str] = {}
    study_stems: tuple[str, ...] = ()
    study_metrics: tuple[str, ...] = ()
    #: ``{metric: what it measures, with its unit}`` of :attr:`study_metrics` (``caishen sweep``'s printout)
    study_units: Mapping[str, str] = {}

    def balance_tables(self, columns, options=None) -> dict:
        """``{name: streaming table}`` over records with ``columns`` (``add(df)``, ``merge``, ``frame()``)."""
        return {}

    def table_functions(self) -> tuple:
        """The in-memory tables: functions ``f(df) -> DataFrame`` (``compare_options``)."""
        return ()

    def report(self, page, plt, tables: dict) -> None:
        """Add its figures and tables (``tables``: :meth:`balance_tables`' frames) to a report ``page``."""
        return None

    def study_values(self, df, idx, hero) -> dict:
        """``{metric: array[n]}`` of :attr:`study_metrics` for the hero seats ``hero: int64[n]`` of ``df``."""
        return {}

    #: ``{Chinese term: pinyin (meaning)}`` the rule set's report pages show (named beside the font note)
    glossary: Mapping[str, str] = {}

    #: record columns :meth:`example_hands` reads
    example_columns: tuple[str, ...] = ()

    def example_hands(self, df, options) -> dict:
        """``{label: bool[n]}``: the rows of ``df`` (records with :attr:`example_columns`) that are an example
        of ``label`` (the summary names the first of each, :func:`caishen.sim.analysis.summary.example_hands`),
        or ``{label: str}``: why a run under ``options`` (the rule set's options object) has none."""
        return {}


class Words:
    """A rule set's records as words (the ``words`` hook of :class:`RuleSet`; the machinery is
    :mod:`caishen.sim.rules.words`).  This base class adds nothing: a rule set with coded columns of its
    own subclasses it (``sim/rules/<name>/words.py``) and gives

    - ``decoders``: ``{column: decoder}`` of its own coded columns (the common ones are
      :data:`caishen.sim.rules.words.COMMON_DECODERS`);
    - ``docs``: ``{column: meaning}`` of its own columns (a seat's column as ``name_<s>``, a pair's as
      ``name_<p>_<w>``), which the schema page ``docs/schema.md`` shows;
    - :meth:`explain_case`: a scoring-vector case's score explained (``caishen score --explain``,
      ``caishen hand``), :meth:`explain_record`: a finished hand's record explained (``caishen play``,
      ``caishen replay``), each a :class:`caishen.sim.rules.words.HandBreakdown`.
    """

    decoders: Mapping[str, Any] = {}
    docs: Mapping[str, str] = {}

    def explain_case(self, case: dict, rules=None):
        """``ValueError``: the base rule set explains no scoring cases."""
        raise ValueError("this rule set explains no scoring cases")

    def explain_record(self, record: Mapping[str, Any], rules=None, hands=None):
        """``record``: the hand's record columns (codes, ``Game.record``); ``hands``: each seat's concealed
        counts at the end (the winners' tiles, where the record does not say all), or None.
        ``ValueError``: the base rule set explains no records."""
        raise ValueError("this rule set explains no records")


_NAME = re.compile(r"[a-z][a-z0-9_]{0,31}")
_REF = re.compile(r"[A-Za-z_][\w.]*:[A-Za-z_]\w*")


@dataclasses.dataclass(frozen=True)
class RuleSet:
    """What a rule set is, for the engine and the tools around it (the module docstring says each field).

    Raises ``ValueError`` naming a bad field: a name that is not a short
    lower-case identifier, an options class that is no ``Options``, a fact
    missing or unknown, a kernel code that :mod:`caishen.sim.rules.kernels`
    does not know, a reference that is not ``"module:name"``.
    """

    name: str
    options: type
    facts: Mapping[str, Any]
    win_kernel: int
    payments: int
    finish: str | None = None
    field_columns: str | None = None
    columns: str | None = None
    score: str | None = None
    plain_case: Mapping[str, Any] = dataclasses.field(default_factory=dict)
    doc: str | None = None
    title: str = ""
    points: int = POINTS_ENGINE
    points_tables: str | None = None
    reward_scale: float = 1.0
    analysis: str | None = None
    words: str | None = None

    def __post_init__(self) -> None:
        from caishen.sim.rules import codes as kernels

        if not isinstance(self.name, str) or not _NAME.fullmatch(self.name):
            raise ValueError(f"rule set name {short_repr(self.name)}: must be a lower-case identifier (a-z, 0-9, _)")
        if not (isinstance(self.options, type) and issubclass(self.options, Options)):
            raise ValueError(f"rule set {self.name!r}: options must be an Options subclass, got {short_repr(self.options)}")
        if not isinstance(self.facts, Mapping):
            raise ValueError(f"rule set {self.name!r}: facts must be a mapping, got {short_repr(self.facts)}")
        missing = [k for k in FACT_KEYS if k not in self.facts]
        unknown = [k for k in self.facts if k not in FACT_KEYS and k not in OPTION_FACTS]
        if missing or unknown:
            raise ValueError(f"rule set {self.name!r}: facts missing {missing}, unknown {unknown} "
                             f"(known: {', '.join(FACT_KEYS + OPTION_FACTS)})")
        object.__setattr__(self, "facts", dict(self.facts))
        if self.win_kernel not in kernels.WIN_KERNELS:
            raise ValueError(f"rule set {self.name!r}: win_kernel {short_repr(self.win_kernel)} is none of "
                             f"{kernels.WIN_KERNELS} (caishen.sim.rules.kernels)")
        if self.payments not in kernels.PAYMENTS:
            raise ValueError(f"rule set {self.name!r}: payments {short_repr(self.payments)} is none of "
                             f"{kernels.PAYMENTS} (caishen.sim.rules.kernels)")
        if self.points not in kernels.POINTS:
            raise ValueError(f"rule set {self.name!r}: points {short_repr(self.points)} is none of "
                             f"{kernels.POINTS} (caishen.sim.rules.kernels)")
        if (not isinstance(self.reward_scale, (int, float)) or isinstance(self.reward_scale, bool)
                or not 0 < self.reward_scale < float("inf")):
            raise ValueError(f"rule set {self.name!r}: reward_scale must be a positive number, "
                             f"got {short_repr(self.reward_scale)}")
        object.__setattr__(self, "reward_scale", float(self.reward_scale))
        for field in ("finish", "field_columns", "columns", "score", "points_tables", "analysis", "words"):
            ref = getattr(self, field)
            if ref is not None and not (isinstance(ref, str) and _REF.fullmatch(ref)):
                raise ValueError(f"rule set {self.name!r}: {field} must be 'module:name' or None, "
                                 f"got {short_repr(ref)}")
        object.__setattr__(self, "plain_case", dict(self.plain_case))

    # -- the lazy references ------------------------------------------------
    def _resolve(self, field: str):
        ref = getattr(self, field)
        module, attr = ref.split(":")
        try:
            return getattr(importlib.import_module(module), attr)
        except (ImportError, AttributeError) as e:
            raise ValueError(f"rule set {self.name!r}: {field} {ref!r} is not available ({e})") from None

    def finisher(self):
        """``function(rules, rec) -> dict[str, np.ndarray]`` (``finish``), or None."""
        return None if self.finish is None else self._resolve("finish")

    def field_column_names(self) -> dict[str, str]:
        """``{record field: column stem}`` (``field_columns``): the names it records some of the engine's
        generic record fields under; ``{}`` (the generic names) when it has none."""
        return {} if self.field_columns is None else dict(self._resolve("field_columns"))

    def record_columns(self) -> tuple | None:
        """The records contract's ``(name, dtype)`` pairs (``columns``), or None."""
        return None if self.columns is None else tuple(self._resolve("columns"))

    def points_tables_of(self, rules):
        """The tables and scratch of its points kernel (``points_tables``) for options ``rules``, or None
        (a rule set whose points need none); :func:`caishen.sim.rules.kernels.points_context` checks them."""
        return None if self.points_tables is None else self._resolve("points_tables")(rules)

    def analysis_hooks(self):
        """Its rule-specific analysis (``analysis``): an :class:`Analysis`, the base one (nothing
        rule-specific) when the rule set has none."""
        if self.analysis is None:
            return Analysis()
        hooks = self._resolve("analysis")
        if not isinstance(hooks, Analysis):
            raise ValueError(f"rule set {self.name!r}: analysis {self.analysis!r} is not an Analysis")
        return hooks

    def words_hooks(self):
        """Its records as words (``words``): a :class:`Words`, the base one (the common columns only,
        nothing explained) when the rule set has none."""
        if self.words is None:
            return Words()
        hooks = self._resolve("words")
        if not isinstance(hooks, Words):
            raise ValueError(f"rule set {self.name!r}: words {self.words!r} is not a Words")
        return hooks

    def data_path(self, filename: str):
        """``pathlib.Path`` of a data file the rule set ships beside its code (its package folder), such
        as its bots' weights (``tuned.json``: ``tuned:<name>``); the file may not exist."""
        from pathlib import Path

        module = importlib.import_module(self.options.__module__)
        here = Path(module.__file__).resolve().parent
        return here / filename

    def scorer(self):
        """``score(case, rules) -> dict`` for the scoring vectors; ``ValueError`` if the rule set has none."""
        if self.score is None:
            raise ValueError(f"rule set {self.name!r} scores no vector cases (no score function)")
        f = self._resolve("score")
        if not callable(f):
            raise ValueError(f"rule set {self.name!r}: score {self.score!r} is not a function")
        return f


# ---------------------------------------------------------------------------
# the registry
# ---------------------------------------------------------------------------
#: the rule sets of the package, imported on the first lookup (each registers itself)
BUILTIN = ("caishen.sim.rules.kaihua", "caishen.sim.rules.jiating")
#: the rule set a tool plays when none is named (the CLI's ``--rules``, ``Game()``, the envs)
DEFAULT = "kaihua"

_REGISTRY: dict[str, RuleSet] = {}
_loaded = False


def _order(rs: RuleSet) -> tuple[int, int]:
    """Built-in rule sets first, in :data:`BUILTIN` order; then the others as registered."""
    module = rs.options.__module__
    for i, m in enumerate(BUILTIN):
        if module == m or module.startswith(m + "."):
            return i, 0
    return len(BUILTIN), list(_REGISTRY).index(rs.name)


def _load_builtin() -> None:
    global _loaded
    if not _loaded:
        _loaded = True
        for module in BUILTIN:
            importlib.import_module(module)


def register(ruleset: RuleSet, *, replace: bool = False) -> RuleSet:
    """Add ``ruleset`` under its name; returns it.

    Raises ``ValueError`` if it is no :class:`RuleSet`, or if another rule set
    of that name is registered (``replace=True`` replaces it: for tests).
    Registering the same object twice is a no-op (a module imported again).
    """
    if not isinstance(ruleset, RuleSet):
        raise ValueError(f"register expects a RuleSet, got {type(ruleset).__name__}")
    old = _REGISTRY.get(ruleset.name)
    if old is not None and old is not ruleset and not replace:
        raise ValueError(f"a rule set named {ruleset.name!r} is already registered")
    _REGISTRY[ruleset.name] = ruleset
    return ruleset


def unregister(name: str) -> None:
    """Remove a rule set registered at run time (for tests); ``ValueError`` if unknown or built in."""
    _load_builtin()
    if name not in _REGISTRY:
        raise ValueError(f"unknown rule set {short_repr(name)}")
    if _order(_REGISTRY[name])[0] < len(BUILTIN):
        raise ValueError(f"rule set {name!r} is built in")
    del _REGISTRY[name]


def get(name) -> RuleSet:
    """The rule set registered as ``name``; ``ValueError`` naming the known ones otherwise."""
    if not isinstance(name, str) or name not in _REGISTRY:
        _load_builtin()
    if not isinstance(name, str) or name not in _REGISTRY:
        raise ValueError(f"unknown rule set {short_repr(name)}; known: {', '.join(names())}")
    return _REGISTRY[name]


def names() -> tuple[str, ...]:
    """The registered rule sets' names: the built-in ones in :data:`BUILTIN` order, then the others."""
    _load_builtin()
    return tuple(rs.name for rs in sorted(_REGISTRY.values(), key=_order))


def of_options(options) -> RuleSet | None:
    """The rule set whose options class ``options`` is an instance of (the most derived), or None."""
    _load_builtin()
    found = [rs for rs in _REGISTRY.values() if isinstance(options, rs.options)]
    if not found:
        return None
    return max(found, key=lambda rs: len(rs.options.__mro__))
