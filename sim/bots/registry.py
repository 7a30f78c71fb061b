"""The one bot registry: every bot's spec, its one grammar and parser, the bots' data and the one numba dispatch.

Every command, environment and agent that takes a bot reads this module:
``caishen simulate`` / ``match`` / ``sweep`` (and their ``--help``), the 飘
study (:mod:`caishen.sim.analysis.piao_study`), ``caishen warmup``, the
environments' opponent seats (:mod:`caishen.envs`) and
:func:`caishen.agents.make_agent`.  So a spec means one bot everywhere, is
refused everywhere with the same message, and a new bot is known to all of
them at once.

Grammar
-------
``SPEC := NAME [":" ARG]`` (spaces around the parts ignored); four specs for
the four seats are comma-separated (:func:`split_specs`).  The bots
(:data:`BOTS`; ``caishen simulate --help`` prints the same lines, but for the
step-API-only ``ppo:PATH``: :func:`help_lines`):

======================  ================================================================
spec                    bot
======================  ================================================================
``random``              uniform over the legal actions
``greedy``              minimise shanten, ties by live effective tiles (:mod:`.policies`)
``greedy_safe``         greedy that folds against a likely ready opponent (:mod:`.policies`)
``never``               greedy that never throws a 财神 unless forced (飘 policy)
``always``              greedy that throws a surplus 财神 whenever still ready (飘 policy)
``threshold:N``         ``always`` while at most N live-wall tiles are gone, then ``never``
``piao_table[:BITS][:BASE]``  飘 where a 64-cell table says it pays (:mod:`.piao_table`); on
                        ``BASE`` (default greedy: never outside the table), the bot that plays
                        every other move (``piao_table:tuned:NAME``)
``tuned:NAME|PATH``     the parametric bot (:mod:`.tuned`) with the weights of rule set
                        NAME (``sim/rules/NAME/tuned.json``) or of a JSON file
``mc:N[:BASE]``         the search bot (:mod:`.search`): up to N rollouts per candidate action
                        (1..4096) around its base, ``greedy`` or ``tuned:NAME|PATH``
                        (default: the tuned bot of the rule set played)
``learned:NAME|PATH``   a learned policy (:mod:`.learned`): an action-scoring network read
                        from an ``.npz`` weights file (``sim/rules/NAME/learned.npz``;
                        ``learned:NAME-V`` its ``learned-V.npz``, the env trainer's
                        ``-env``; or PATH), played by a numba forward pass in the kernels
``ppo:PATH``            a trained torch policy (:mod:`caishen.agents.ppo`): it has no kernel,
                        so it plays only in the step API (``caishen.agents.make_agent``);
                        every kernel seat refuses it (:func:`check_fits`)
``python:MODULE:FN``    an open seat: your Python policy, ``FN(obs, mask) -> int[n]`` on a
                        batch of decisions (or ``python:PATH.py:FN``; an object with
                        ``act(obs, mask)``); played by the arena host (below)
``exec:CMD``            an open seat: an external program in any language speaking the
                        JSON-lines seat protocol (``docs/protocol.md``); the arena host
======================  ================================================================

Open seats (``python:``, ``exec:``)
-----------------------------------
The registry owns their grammar (:func:`parse`: ``python:TARGET:FN`` where
``TARGET`` is a dotted module name or a path ending in ``.py`` and ``FN`` a
name in it; ``exec:CMD`` split by :func:`shlex.split`, never a shell; normal
form ``shlex.join``).  They have no kernel (code :data:`POLICY_HOST`): a host
above the kernels plays them, batching their decisions across many hands
(:mod:`caishen.envs.arena_host`, which registers itself here with
:func:`register_host` when imported; ``import caishen.envs`` and the
``caishen`` command do that).  So ``sim/`` never imports ``envs/``:
:func:`caishen.sim.selfplay.batch.play_batch` hands a table with an open seat
to the registered host (:func:`host_player`), and every command that plays
through it (``simulate``, ``match``, ``ladder``, ``sweep``, ``balance``, the 飘 check's ``--field``) takes open seats,
checked by :func:`check_seats`.  A kernel table (:func:`bot_table`) refuses
them (:func:`check_fits`).  Open seats play in the process that registered the
host (:func:`seat_workers`: one worker).

:func:`parse` is the one parser: it returns a :class:`Bot` whose ``spec`` is
the normal form (``mc:02`` and ``mc:2`` are one bot, ``threshold:007`` is
``threshold:7``, ``piao_table:0x10`` is ``piao_table:16``), and every
message it raises starts with ``policy 'SPEC'`` or ``unknown policy 'SPEC';
known: ...``.  :func:`check_fits` says where a parsed bot cannot play, the
same way everywhere: a 飘 policy under a rule set without a 财神 (K-9.1,
J-1.1), weights tuned for another rule set.

Bots with data
--------------
``tuned`` and ``mc`` play with a weight vector (``float64[N_W]``,
:data:`caishen.sim.bots.tuned.FEATURES`).  A weights file is JSON:
``{"rules": NAME, "features": [...], "weights": [...]}`` with
:data:`caishen.sim.bots.tuned.FEATURES` as ``features`` (same order) and one
finite number per feature; anything else is a ``ValueError`` naming the file
and the bad value.  A file tuned for one rule set refuses to play another
(``rules``).  ``NAME`` resolves through the rule set's own folder
(:meth:`caishen.sim.rules.base.RuleSet.data_path`, :func:`data_file`).

The data travels into the kernels as one named tuple, the *bot context*
(:class:`BotContext`, built by :func:`make_context`): ``weights``, the
weights of each seat; ``search``, the search bot's :class:`SearchContext`
(two scratch game states for the rollouts, scratch rows, its random stream
seeded from the batch seed apart from the stream of the walls and the random
bots, the rule set's points context the rollouts score a finished hand with,
:func:`caishen.sim.rules.kernels.points_context`, and its scratch), or None
when no seat searches; and ``slots``, one entry per registered bot kind that
declares a ``context`` function (today ``learned``'s: its scratch,
:func:`caishen.sim.bots.learned.new_scratch`), built from the four seats' bots;
``bases``, the seats' base bots (:func:`base_table`: the bot a
``piao_table:BASE`` seat plays outside its table's chances; its weights are
the seat's weights row).

Every batch, match, replay, env and agent passes a context, with the kernel
policies too, so they all run one compiled copy of the play loop and of
:func:`_bot_action` with the tuned and learned bots in it: a ``caishen match``
with ``tuned:`` after a ``caishen simulate`` with ``greedy`` compiles nothing
new.  Only the search bot, whose rollouts score hands of every rule set
(a minute of compiling on its own), compiles apart: with ``search`` None,
:func:`_search_action` is a stub at compile time and the search is left out.

How to add a bot
----------------
1. Write its module ``sim/bots/<name>.py``: the kernel
   ``_<name>_action(param, data, st, ep, rp, tabs, mask, work) -> action``
   (legal, reading only what its seat may see), the parser of its argument
   ``(arg, spec) -> (param: int, normal arg: str)`` raising ``ValueError``
   ``policy 'SPEC': ...``, and, for a bot with data (a learned bot's network,
   ``learned:NAME|PATH``), ``context(bots, rules_name, rules) -> arrays``:
   ``bots`` is the four seats' :class:`Bot` (None for a seat of another
   kind); it loads each file once (``NAME`` through :func:`data_file`, like
   ``tuned``: ``data_file(NAME, "learned.npz", ".npz")`` is
   the rule set's shipped file for ``learned:NAME``, else a path) and
   returns the arrays its kernel reads, e.g. the seats' weights stacked,
   indexed by the seat to act (``st.table.to_act``).  A file of another
   rule set is refused there, as :func:`check_fits` refuses ``tuned``'s.
2. Add one :class:`BotKind` line to :data:`BOTS` (name, kernel code, usage,
   one-line description, its parser, ``piao`` if it decides when to throw a
   财神, ``weights`` / ``context`` if it has data, an example spec).  Every
   command, ``--help``, warmup, the agents and the envs know it from then on;
   a bot that reuses a kernel (an alias with its own parameter grammar) is
   done (``tests/test_bot_registry.py`` registers such a toy bot and plays
   it through every command).
3. A bot with a kernel of its own also needs its one branch in
   :func:`_bot_action` (``if code == POLICY_<NAME>: return
   _<name>_action(param, bx.slots[i], ...)``, ``i`` its slot's index among
   the kinds with a ``context``).  This line is unavoidable: the dispatch is
   one compiled numba function with ``cache=True``, and numba calls no
   function picked at run time from a Python table without giving up the
   disk cache.
"""

from __future__ import annotations

import dataclasses
import hashlib
import os
import re
from collections.abc import Callable
from typing import Any, NamedTuple

import numpy as np
from numba import njit, types
from numba.extending import overload

from caishen.sim.bots.piao_table import (
    DEFAULT_PIAO_TABLE,
    _piao_chance,
    _piao_table_says,
    parse_piao_table,
    policy_bits_int64,
    split_piao_arg,
)
from caishen.sim.bots.policies import (
    MAX_THRESHOLD,
    PIAO_POLICIES,
    POLICY_ALWAYS,
    POLICY_GREEDY,
    POLICY_NEVER,
    POLICY_PIAO_TABLE,
    POLICY_RANDOM,
    POLICY_SAFE,
    POLICY_THRESHOLD,
    _choose_action,
    parse_threshold,
)
from caishen.sim.bots.botdata import (  # noqa: F401  (the data files' names, re-exported: the registry's API)
    LEARNED_FILE,
    MAX_WEIGHTS_FILE,
    TUNED_FILE,
    _builtin_learned,
    _short,
    data_file,
    learned_path,
    load_tuned,
    shipped_learned,
    shipped_tuned,
    tuned_path,
)
from caishen.sim.bots.search import MAX_DETERMINIZATIONS, SearchContext, _mc_action
from caishen.sim.bots.learned import _learned_action, load_learned, new_scratch
from caishen.sim.bots.tuned import GREEDY_WEIGHTS, N_W, _tuned_action
from caishen.sim.engine import A_DISCARD, N_SEATS, new_state
from caishen.sim.rng import _rng_seed

POLICY_TUNED = 10
POLICY_MC = 11
POLICY_LEARNED = 12
#: ``piao_table:BASE``: the table decides at a 飘 chance, the base bot (the bot context's ``bases`` row) plays the rest
POLICY_PIAO_BASE = 13
#: the code of a bot without a kernel (``ppo:PATH``: torch, one decision at a time): no kernel table takes it
POLICY_STEP_ONLY = -1
#: the code of an open seat (``python:``, ``exec:``) played by the registered host (:func:`register_host`):
#: no kernel table takes it
POLICY_HOST = -2

#: the scratch width of the search bot's rows (>= 136 tiles, >= its candidates)
_SCRATCH = 160


# ---------------------------------------------------------------------------
# the registry
# ---------------------------------------------------------------------------
@dataclasses.dataclass(frozen=True)
class Bot:
    """One parsed spec (:func:`parse`): ``kind`` (a :data:`BOTS` name), ``code`` and ``param`` (the
    ``int64`` pair a kernel table row holds), ``arg`` (the argument in normal form, ``""`` for none) and
    ``spec`` (the normal form of the whole spec: ``"mc:2"`` for ``" mc:02 "``).  ``code`` is the kind's, or
    the one its argument chose (``piao_table:tuned:NAME`` plays :data:`POLICY_PIAO_BASE`)."""

    kind: str
    code: int
    param: int
    arg: str
    spec: str

    @property
    def has_data(self) -> bool:
        """True for a bot that plays with data (the bot context, :func:`make_context`)."""
        return self.code >= POLICY_TUNED

    def weights(self, rules: str) -> tuple[np.ndarray | None, str | None]:
        """``(weights: float64[N_W] or None, rule set they were tuned for or None)`` when played under rule
        set ``rules`` (``mc:N`` takes ``tuned:<rules>``'s); ``ValueError`` as :func:`load_tuned`."""
        fn = BOTS[self.kind].weights
        return (None, None) if fn is None else fn(self, rules)


@dataclasses.dataclass(frozen=True)
class BotKind:
    """One registry entry (module docstring, "How to add a bot").

    ``name``: the spec's head; ``code``: its kernel code (:func:`_bot_action`); ``usage``: the spec
    as help shows it; ``about``: one line; ``arg``: ``(arg, spec) -> (param, normal arg)`` (``arg`` is
    ``""`` when the spec has none: the parser raises or gives the default), None for a bot that takes
    no argument; it may return ``(param, normal arg, code)`` for an argument that picks another kernel
    (``piao_table:BASE``); ``base``: its argument may name a base bot, which makes it a bot with data
    (:func:`has_data` parses such a spec); ``piao``: decides when to throw a 财神 (needs a rule set with a
    joker); ``weights``:
    :meth:`Bot.weights` of a bot with a weight vector; ``context``: builds its slot of the bot context
    (module docstring); ``example``: a spec that the registry's tests and warmup play.
    """

    name: str
    code: int
    usage: str
    about: str
    arg: Callable[[str, str], tuple] | None = None
    piao: bool = False
    base: bool = False
    weights: Callable[[Bot, str], tuple[np.ndarray | None, str | None]] | None = None
    context: Callable | None = None
    example: str = ""


def _threshold_arg(arg: str, spec: str) -> tuple[int, str]:
    n = parse_threshold(arg, spec)
    return n, str(n)


def _piao_table_arg(arg: str, spec: str) -> tuple:
    text, base = split_piao_arg(arg)
    bits = parse_piao_table(text)
    norm = "" if bits == policy_bits_int64(DEFAULT_PIAO_TABLE) else str(int(bits) % 2**64)
    if not base:
        return bits, norm
    try:
        b = parse(base)
    except ValueError as e:
        raise ValueError(f"policy {_short(spec)}: its base bot: {e}") from None
    if b.kind == "greedy":  # the greedy table bot itself
        return bits, norm
    if BOTS[b.kind].piao or BOTS[b.kind].base or b.code in PIAO_POLICIES or b.code == POLICY_STEP_ONLY:
        raise ValueError(f"policy {_short(spec)}: the base bot {b.spec!r} cannot carry a 飘 table (it decides 飘 by "
                         "a rule of its own, or has no kernel); a base is a bot such as greedy_safe, tuned:NAME, "
                         "learned:NAME or mc:N")
    return bits, f"{norm}:{b.spec}" if norm else b.spec, POLICY_PIAO_BASE


def _piao_base(bot: Bot) -> Bot | None:
    """The base bot of a ``piao_table:[BITS:]BASE`` (None for the greedy table bot)."""
    if bot.code != POLICY_PIAO_BASE:
        return None
    return parse(split_piao_arg(bot.arg)[1])


def _piao_weights(bot: Bot, rules: str):
    base = _piao_base(bot)
    return (None, None) if base is None else base.weights(rules)


def base_table(bots) -> np.ndarray:
    """``int64[4, 2]``: each seat's base bot (code, param) of a ``piao_table:BASE`` seat, zeros for the others
    (``bots``: the four seats' :class:`Bot`, or None); the bot context's field ``bases``."""
    table = np.zeros((N_SEATS, 2), np.int64)
    for s, b in enumerate(bots):
        base = None if b is None else _piao_base(b)
        if base is not None:
            table[s] = base.code, base.param
    return table


def _tuned_arg(arg: str, spec: str) -> tuple[int, str]:
    name = arg.strip()
    load_tuned(name)  # ValueError naming the file now, not when the first hand is played
    return 0, name


def _mc_arg(arg: str, spec: str) -> tuple[int, str]:
    count, _, base = arg.partition(":")
    if not re.fullmatch(r"\s*[0-9]{1,6}\s*", count):
        raise ValueError(f"policy {_short(spec)}: give the rollouts per candidate, e.g. mc:32")
    n = int(count)
    if not 1 <= n <= MAX_DETERMINIZATIONS:
        raise ValueError(f"policy {_short(spec)}: N must be in 1..{MAX_DETERMINIZATIONS}")
    base = base.strip()
    if base:
        head = base.partition(":")[0].strip()
        if head not in ("greedy", "tuned"):
            raise ValueError(f"policy {_short(spec)}: the base policy is the tuned bot (mc:N, mc:N:tuned:NAME) or "
                             "greedy (mc:N:greedy)")
        base = parse(base).spec
    return n, f"{n}:{base}" if base else str(n)


def _path_arg(arg: str, spec: str) -> tuple[int, str]:
    if not arg.strip():
        raise ValueError(f"policy {_short(spec)}: give the checkpoint's path, e.g. ppo:runs/ppo/model.safetensors")
    return 0, arg.strip()


def _learned_arg(arg: str, spec: str) -> tuple[int, str]:
    name = arg.strip()
    if not name:
        raise ValueError(f"policy {_short(spec)}: give the weights file, e.g. learned:net.npz, or a built-in learned "
                         f"bot ({_builtin_learned()})")
    path = learned_path(name)
    if not os.path.lexists(path):
        from caishen.sim import rules

        if name in rules.names():
            raise ValueError(f"policy {_short(spec)}: no learned bot ships for rule set {name!r}; built-in learned "
                             f"bots: {_builtin_learned()} (or learned:PATH, an .npz weights file)")
        raise ValueError(f"policy {_short(spec)}: no such weights file {str(path)!r}; built-in learned bots: "
                         f"{_builtin_learned()} (or learned:PATH, an .npz weights file)")
    try:
        load_learned(path)  # ValueError naming the file and the field now
    except ValueError as e:
        raise ValueError(f"policy {_short(spec)}: {e}") from None
    return 0, name


_DOTTED = r"[A-Za-z_][A-Za-z0-9_]*(\.[A-Za-z_][A-Za-z0-9_]*)*"


def _python_arg(arg: str, spec: str) -> tuple[int, str]:
    """``TARGET:FN`` of ``python:TARGET:FN``: a dotted module name or a ``.py`` path, then a (dotted) name."""
    target, colon, fn = arg.strip().rpartition(":")
    target, fn = target.strip(), fn.strip()
    if not colon or not target or not re.fullmatch(_DOTTED, fn):
        raise ValueError(f"policy {_short(spec)}: give python:MODULE:FN or python:PATH.py:FN, e.g. "
                         "python:mybots.torch_seat:act or python:bots/seat.py:Policy")
    if not (target.endswith(".py") or re.fullmatch(_DOTTED, target)):
        raise ValueError(f"policy {_short(spec)}: {target!r} is neither a module name (a.b.c) nor a path ending in .py")
    return 0, f"{target}:{fn}"


def _exec_arg(arg: str, spec: str) -> tuple[int, str]:
    """``CMD`` of ``exec:CMD`` as its argument list (:func:`shlex.split`; no shell), in ``shlex.join`` form."""
    import shlex

    try:
        argv = shlex.split(arg)
    except ValueError as e:
        raise ValueError(f"policy {_short(spec)}: the command does not parse ({e})") from None
    if not argv:
        raise ValueError(f"policy {_short(spec)}: give the program to run, e.g. exec:python3 examples/bots/seat_bot.py")
    return 0, shlex.join(argv)


def _learned_weights(bot: Bot, rules: str):
    row, hdr = load_learned(learned_path(bot.arg))
    return row, hdr["rules"]


def _learned_context(bots, rules_name: str, rules):
    return new_scratch()


def _tuned_weights(bot: Bot, rules: str):
    w, meta = load_tuned(bot.arg)
    return w, meta.get("rules")


def _mc_weights(bot: Bot, rules: str):
    base = bot.arg.partition(":")[2]
    if base == "greedy":
        return GREEDY_WEIGHTS.copy(), None
    return _tuned_weights(parse(base or f"tuned:{rules}"), rules)


#: every bot by the head of its spec (module docstring); one line per bot
BOTS: dict[str, BotKind] = {k.name: k for k in (
    BotKind("random", POLICY_RANDOM, "random", "uniform over the legal actions", example="random"),
    BotKind("greedy", POLICY_GREEDY, "greedy", "win when allowed; discard to minimise shanten, ties by live "
            "effective tiles; meld only to lower it", example="greedy"),
    BotKind("greedy_safe", POLICY_SAFE, "greedy_safe", "greedy that folds to the safest discard when an "
            "opponent is likely ready", example="greedy_safe"),
    BotKind("never", POLICY_NEVER, "never", "greedy that never throws a 财神 unless forced (飘 policy)",
            piao=True, example="never"),
    BotKind("always", POLICY_ALWAYS, "always", "greedy that throws a surplus 财神 (飘财) whenever the hand "
            "stays ready (飘 policy)", piao=True, example="always"),
    BotKind("threshold", POLICY_THRESHOLD, "threshold:N", f"always while at most N (0..{MAX_THRESHOLD}) "
            "live-wall tiles are gone, then never (飘 policy)", _threshold_arg, piao=True, example="threshold:30"),
    BotKind("piao_table", POLICY_PIAO_TABLE, "piao_table[:BITS][:BASE]", "飘 where a 64-cell table (default: "
            "the greedy study's) says it pays; BASE (default greedy, then never outside the table; e.g. "
            "tuned:NAME) plays every other move (飘 policy)", _piao_table_arg, piao=True, base=True,
            weights=_piao_weights, example="piao_table"),
    BotKind("tuned", POLICY_TUNED, "tuned:NAME|PATH", "the parametric bot with the weights of rule set NAME "
            "(sim/rules/NAME/tuned.json) or of a .json file", _tuned_arg, weights=_tuned_weights,
            example="tuned:{rules}"),
    BotKind("mc", POLICY_MC, "mc:N[:BASE]", f"the search bot: up to N (1..{MAX_DETERMINIZATIONS}) determinized "
            "rollouts per candidate action around BASE (greedy or tuned:NAME; default the rule set's tuned bot; "
            "N < 4 plays as BASE)",
            _mc_arg, weights=_mc_weights, example="mc:2"),
    BotKind("learned", POLICY_LEARNED, "learned:NAME|PATH", "a learned policy: the action-scoring network of "
            "an .npz weights file (sim/rules/NAME/learned.npz; learned:NAME-V its learned-V.npz, the env "
            "trainer's -env; or PATH), played in the kernels", _learned_arg,
            weights=_learned_weights, context=_learned_context),
    BotKind("ppo", POLICY_STEP_ONLY, "ppo:PATH", "a trained PPO checkpoint (torch, the [rl] extra; step API "
            "only: caishen.agents.make_agent, an env's opponent given as that agent)", _path_arg),
    BotKind("python", POLICY_HOST, "python:MODULE:FN|PATH.py:FN", "your Python policy: FN(obs, mask) -> int[n] "
            "legal actions for a batch of decisions, or an object with act(obs, mask) (docs/arena.md)", _python_arg),
    BotKind("exec", POLICY_HOST, "exec:CMD", "an external program in any language on the JSON-lines seat protocol, "
            "a time limit per decision (docs/protocol.md)", _exec_arg),
)}


def register(kind: BotKind) -> None:
    """Add ``kind`` to :data:`BOTS` (``ValueError`` if its name is taken or not a plain word).  The
    registry's lines above are the place for a shipped bot; this is for a bot defined at run time (a test,
    a notebook), known in this process only."""
    if not re.fullmatch(r"[a-z][a-z0-9_]*", kind.name) or kind.name in BOTS:
        raise ValueError(f"bot name {kind.name!r} is taken or not a lowercase word")
    BOTS[kind.name] = kind


def unregister(name: str) -> None:
    """Remove a bot added by :func:`register` (the shipped ones stay: ``ValueError``)."""
    if name in _SHIPPED:
        raise ValueError(f"bot {name!r} is shipped with caishen and stays registered")
    BOTS.pop(name, None)


_SHIPPED = frozenset(BOTS)


def known_policies() -> list[str]:
    """Every bot name a spec may start with, in registry order."""
    return list(BOTS)


def usages() -> str:
    """``"random, greedy, ..., mc:N[:BASE]"``: the specs as the messages list them."""
    return ", ".join(k.usage for k in BOTS.values())


def help_lines(kernel: bool = False, hosted: bool = False) -> list[str]:
    """One line per bot, ``"usage: description"``.  ``kernel``: only the bots that play in the kernels, the
    specs every command's seats accept (``caishen simulate``, ``match``, ``sweep``, ``train``, ``piao``:
    their help), not one without a kernel (``ppo:PATH``: the step API only, :func:`check_fits`); with
    ``hosted`` also the open seats (``python:``, ``exec:``) of the commands that play through
    :func:`host_player` (``simulate``, ``match``, ``ladder``, ``sweep``)."""
    return [f"{k.usage}: {k.about}" for k in BOTS.values()
            if not kernel or k.code >= 0 or (hosted and k.code == POLICY_HOST)]


def examples(rules: str | None = None) -> list[str]:
    """Each bot's example spec (``{rules}`` filled with ``rules``; None: the default rule set's)."""
    from caishen.sim.rules.base import DEFAULT

    return [k.example.format(rules=rules or DEFAULT) for k in BOTS.values() if k.example]


def parse(spec) -> Bot:
    """The one parser: ``spec`` (module docstring, "Grammar") -> :class:`Bot` in normal form.

    Raises ``ValueError`` starting ``unknown policy 'SPEC'; known: ...`` for a name not in
    :data:`BOTS`, or ``policy 'SPEC': ...`` for a non-string, a missing, extra or bad argument, or an
    unreadable weights file.
    """
    if not isinstance(spec, str):
        raise ValueError(f"policy {_short(spec)}: must be a string such as 'greedy', 'mc:32' or 'tuned:NAME'")
    name, colon, arg = spec.strip().partition(":")
    name = name.strip()
    kind = BOTS.get(name)
    if kind is None:
        raise ValueError(f"unknown policy {_short(spec)}; known: {usages()}")
    if kind.arg is None:
        if colon:
            raise ValueError(f"policy {_short(spec)}: {name} takes no parameter")
        return Bot(name, kind.code, 0, "", name)
    got = kind.arg(arg, spec)  # "" without a colon: the kind's parser says what is missing
    param, norm = got[0], got[1]
    code = got[2] if len(got) > 2 else kind.code
    return Bot(name, code, int(param), norm, f"{name}:{norm}" if norm else name)


def normalize(spec) -> str:
    """The normal form of ``spec`` (:func:`parse`)."""
    return parse(spec).spec


def check_fits(bot: Bot, rules: str, joker: int, where: str = "") -> np.ndarray | None:
    """The one check that ``bot`` can play rule set ``rules`` (its joker kind ``joker``, -1 none); returns
    the weights it plays with there (None for a bot without).

    ``where`` follows the spec in the message (``" (seat 2)"``).  Raises ``ValueError`` for a 飘 policy
    (``never``, ``always``, ``threshold:N``, ``piao_table``) on a rule set without a 财神 (K-9.1: they
    decide when to throw one; J-1.1: a rule set without one, where they would silently play greedy), and for weights
    tuned for another rule set (they mean nothing there; a learned bot's: "was trained for"), and for a bot
    without a kernel (``ppo:PATH``).
    """
    if bot.code == POLICY_STEP_ONLY:
        raise ValueError(f"policy {bot.spec!r}{where} plays through torch in the step API only "
                         "(caishen.agents.make_agent; an env's opponent given as that agent), not in a kernel")
    if bot.code == POLICY_HOST:
        raise ValueError(f"policy {bot.spec!r}{where} is an open seat played by the arena host, not inside a kernel: "
                         "it plays in caishen simulate, match, ladder and sweep (caishen.envs.arena_host) and as an opponent "
                         "of the envs (caishen.envs.open_opponents)")
    if joker < 0 and (BOTS[bot.kind].piao or bot.code in PIAO_POLICIES):
        raise ValueError(
            f"policy {bot.spec!r}{where} decides when to throw a 财神 (飘财), but rule set {rules!r} has no 财神 "
            "(no joker): use greedy or random"
        )
    w, made_for = bot.weights(rules)
    if made_for is not None and made_for != rules and bot.code == POLICY_LEARNED:
        plays = f"learned:{rules} plays it" if rules in shipped_learned() else f"no learned bot ships for {rules!r}"
        raise ValueError(f"policy {bot.spec!r}{where} was trained for {made_for!r} (its weights file's 'rules'), "
                         f"not {rules!r}; {plays} (built-in learned bots: {_builtin_learned()})")
    if made_for is not None and made_for != rules:
        raise ValueError(f"policy {bot.spec!r}{where} was tuned for {made_for!r}, not {rules!r}")
    return w


# ---------------------------------------------------------------------------
# open seats: the host that plays them (module docstring, "Open seats")
# ---------------------------------------------------------------------------
@dataclasses.dataclass(frozen=True)
class Host:
    """What plays the open seats, registered from above ``sim`` (:mod:`caishen.envs.arena_host`).

    ``play_batch``: a function with the signature and the return value of
    :func:`caishen.sim.selfplay.batch.play_batch` (the same record columns, the
    same duplicate deals) for a table with at least one open seat;
    ``check(bot, rules)``: loads / finds an open seat's code for rule set
    ``rules`` and raises ``ValueError`` naming the spec if it cannot play;
    ``digest(bot)``: hex digest of its code (a run records it: a bot edited
    between a run and its resume would mix two bots under one name);
    ``agent(spec)``: the seat as a step-API agent (``act(game) -> action``,
    :func:`caishen.sim.bots.agent.make_agent`: an env's opponent).
    """

    play_batch: Callable
    check: Callable[[Bot, str], None]
    digest: Callable[[Bot], str]
    agent: Callable[[str], object]


_HOST: list[Host] = []


def register_host(host: Host) -> None:
    """Register ``host`` as the player of the open seats in this process (the last registration wins)."""
    if not isinstance(host, Host):
        raise ValueError(f"register_host needs a registry.Host, got {type(host).__name__}")
    _HOST[:] = [host]


def _bots(policies) -> list[Bot]:
    return [parse(p) for p in split_specs(policies)]


def is_open(spec) -> bool:
    """True if ``spec`` parses to an open seat (``python:``, ``exec:``); a bad spec raises as :func:`parse`."""
    return parse(spec).code == POLICY_HOST


def require_host(spec: str) -> Host:
    """The registered :class:`Host`; ``ValueError`` naming ``spec`` when none is (``sim`` alone cannot play it)."""
    if not _HOST:
        raise ValueError(f"policy {_short(spec)} is an open seat: import caishen.envs (it registers the arena host "
                         "that plays python: and exec: seats; the caishen command does this)")
    return _HOST[0]


def host_player(policies) -> Callable | None:
    """The host's ``play_batch`` when a seat of ``policies`` (1 or 4 specs) is an open seat, else None.
    Raises ``ValueError`` as :func:`parse`, or :func:`require_host` when no host is registered."""
    open_specs = [b.spec for b in _bots(policies) if b.code == POLICY_HOST]
    return require_host(open_specs[0]).play_batch if open_specs else None


def seat_workers(policies, workers: int | None) -> int | None:
    """``workers`` for a run of ``policies`` (any number of specs): 1 when one is an open seat (the host plays
    in the process that registered it: one torch model, one program per seat), else ``workers``."""
    specs = [p.strip() for p in policies.split(",")] if isinstance(policies, str) else list(policies)
    return 1 if any(is_open(p) for p in specs) else workers


def check_seats(policies, rules: str, joker: int, label: str | None = None) -> list[Bot]:
    """The seats' bots (1 or 4 specs) checked for rule set ``rules``, open seats included: a kernel bot by
    :func:`check_fits`, an open seat by the registered host's ``check`` (its module or program is found).
    What a command that plays through :func:`host_player` checks before it starts; ``label`` as
    :func:`bot_table`.  Raises ``ValueError`` naming the spec."""
    out = []
    for s, spec in enumerate(split_specs(policies)):
        bot = parse(spec)
        where = f" ({'seat ' + str(s) if label is None else label})"
        if bot.code == POLICY_HOST:
            try:
                require_host(bot.spec).check(bot, rules)
            except ValueError as e:
                msg = str(e)
                head = f"policy {bot.spec!r}"
                raise ValueError(f"{head}{where}{msg[len(head):]}" if msg.startswith(head) else msg) from None
        else:
            check_fits(bot, rules, joker, where)
        out.append(bot)
    return out


def split_specs(policies) -> list[str]:
    """One spec per seat from ``"a"``, ``"a,b,c,d"`` or a sequence of 1 or 4 specs (``ValueError`` otherwise)."""
    specs = [p.strip() for p in policies.split(",")] if isinstance(policies, str) else list(policies)
    if len(specs) == 1:
        specs = specs * N_SEATS
    if len(specs) != N_SEATS:
        raise ValueError(f"give one policy or one per seat (4), got {len(specs)}: {_short(policies)}")
    return specs


def parse_seats(policies) -> tuple[str, str, str, str]:
    """The four seats' specs in normal form (:func:`split_specs`, :func:`parse`)."""
    return tuple(parse(p).spec for p in split_specs(policies))


def code_table(policies) -> np.ndarray:
    """``int64[4, 2]`` (code, param) of the seats' specs, not checked against a rule set (a kernel test's
    table; :func:`bot_table` is the checked one).  Raises ``ValueError`` as :func:`parse` does."""
    return np.array([(b.code, b.param) for b in map(parse, split_specs(policies))], np.int64)


def has_data(spec) -> bool:
    """True for a spec of a bot with data (``tuned:...``, ``mc:...``): it reads the bot context
    (:func:`make_context`): its weights row."""
    kind = BOTS.get(str(spec).partition(":")[0].strip())
    if kind is not None and kind.base and kind.code < POLICY_TUNED:  # piao_table:BASE: the base decides
        try:
            return parse(spec).has_data
        except ValueError:
            return False
    return kind is not None and kind.code >= POLICY_TUNED


def bot_table(policies, rules: str, joker: int, label: str | None = None) -> tuple[np.ndarray, np.ndarray]:
    """``(table: int64[4, 2], weights: float64[4, N_W])`` of the seats' specs for rule set ``rules``.

    ``joker``: the rule set's joker kind (-1 none); ``label``: what the messages call every seat (a
    match's ``"policy 2 of the match"``), default ``"seat <s>"``.  Raises ``ValueError`` for a wrong
    count, a bad spec (:func:`parse`) or one that cannot play ``rules`` (:func:`check_fits`).
    """
    table = np.zeros((N_SEATS, 2), np.int64)
    rows = [None] * N_SEATS
    for s, spec in enumerate(split_specs(policies)):
        bot = parse(spec)
        rows[s] = check_fits(bot, rules, joker, f" ({'seat ' + str(s) if label is None else label})")
        table[s] = bot.code, bot.param
    # a learned bot's row is longer than N_W (caishen.sim.bots.learned, "Kernel layout"): pad to the longest
    weights = np.zeros((N_SEATS, max([N_W] + [len(w) for w in rows if w is not None])))
    for s, w in enumerate(rows):
        if w is not None:
            weights[s, :len(w)] = w
    return table, weights


def weights_digest(policies, rules: str) -> str:
    """sha256 (16 hex digits) of the weights each seat's bot plays with in rule set ``rules``.

    Zeros stand for a bot without weights; ``mc:N`` counts with its base
    policy's weights, an open seat with the digest of its code
    (:class:`Host`).  A run records it (``caishen.sim.selfplay.runner``)
    because a ``tuned:PATH.json`` file is read when the run starts, not part
    of the source digest: a resume after the file changed would mix two bots
    under one name.  Raises ``ValueError`` as :func:`parse` does.
    """
    h = hashlib.sha256()
    for spec in split_specs(policies):
        kind = BOTS.get(str(spec).partition(":")[0].strip())
        if kind is not None and kind.code == POLICY_HOST:  # an open seat: the digest of its code (Host.digest)
            bot = parse(spec)
            h.update(require_host(bot.spec).digest(bot).encode())
            continue
        w = parse(spec).weights(rules)[0] if has_data(spec) else None
        h.update(np.zeros(N_W) if w is None else np.ascontiguousarray(w, dtype=np.float64))
    return h.hexdigest()[:16]


# ---------------------------------------------------------------------------
# the kernels' side
# ---------------------------------------------------------------------------
class BotContext(NamedTuple):
    """What the bots with data read inside the kernels (module docstring, "Bots with data")."""

    weights: np.ndarray  #: float64[4, W]: each seat's weights row (tuned, mc's base, learned's network)
    search: Any  #: :class:`SearchContext`, or None when no seat searches (then no search bot is compiled)
    slots: tuple  #: one entry per bot kind with a ``context`` function (learned's scratch)
    bases: np.ndarray  #: int64[4, 2]: each ``piao_table:BASE`` seat's base bot (code, param; :func:`base_table`)


def needs_search(policies) -> bool:
    """True if some seat's spec is the search bot (``mc:N``): its context carries a :class:`SearchContext`."""
    return any(parse(p).code == POLICY_MC for p in split_specs(policies))


def make_context(name: str, rules, weights: np.ndarray, seed: int, policies=None, search: bool | None = None):
    """The bot context of the kernels (:class:`BotContext`, module docstring).

    ``name``/``rules``: the rule set and its options object (its points
    context, :func:`caishen.sim.rules.kernels.points_context`: the search
    bot's rollouts score a hand with it); ``weights: float64[4, W]``; ``seed``: int, seeds the
    search bot's stream; ``policies``: the seats' specs, for the slots of the
    kinds with a ``context`` (None: every seat without one); ``search``: build
    the :class:`SearchContext` (default: when a seat of ``policies`` is ``mc:N``).
    """
    from caishen.sim.rules import base as rulesets
    from caishen.sim.rules.kernels import points_context

    bots = [parse(p) for p in split_specs(policies)] if policies is not None else [None] * N_SEATS
    if search is None:
        search = any(b is not None and b.code == POLICY_MC for b in bots)
    sx = None
    if search:
        rng = np.zeros(4, np.uint64)
        _rng_seed(rng, (int(seed) * 0x9E3779B1 + 0x5EED) % 2**63)
        sx = SearchContext(new_state(2), np.zeros((4, _SCRATCH)), np.zeros((4, _SCRATCH), np.int64), rng,
                           points_context(rulesets.get(name), rules), np.zeros(N_SEATS, np.int64))
    slots = tuple(k.context([b if b is not None and b.kind == k.name else None for b in bots], name, rules)
                  for k in BOTS.values() if k.context is not None)
    return BotContext(np.ascontiguousarray(weights, dtype=np.float64), sx, slots, base_table(bots))


def _search_action(param, w, st, ep, rp, tabs, mask, work, sx):
    """The search bot's action with its context ``sx`` (:class:`SearchContext`); only called from kernels,
    where it is resolved at compile time: with ``sx`` None it is a stub returning -1 and the search bot is
    not compiled (no context without a search seat is built, :func:`make_context`)."""
    raise NotImplementedError("_search_action runs inside the numba kernels only")


@overload(_search_action)
def _search_action_kernel(param, w, st, ep, rp, tabs, mask, work, sx):
    if isinstance(sx, types.NoneType):
        return lambda param, w, st, ep, rp, tabs, mask, work, sx: -1

    def search(param, w, st, ep, rp, tabs, mask, work, sx):
        return _mc_action(param, w, st, ep, rp, tabs, mask, work, sx)

    return search


@njit(cache=True)
def _bot_action(code, param, st, ep, rp, tabs, mask, work, bx):
    """The action of bot ``code`` (with ``param``, a row of :func:`bot_table`) for the seat to act: a
    kernel policy (:func:`caishen.sim.bots.policies._choose_action`), the tuned bot or the search bot.

    ``bx``: the bot context (:class:`BotContext`, :func:`make_context`); the search bot is compiled only
    for a context whose ``search`` is not None.  The action is legal.  One branch per kernel of its own
    (module docstring, "How to add a bot").
    """
    j = -1  # the 财神 discard a piao_table seat keeps (masked out for its base bot), or -1
    if code == POLICY_PIAO_BASE:  # the table at a 飘 chance, else the seat's base bot (bx.bases)
        s = st.table.to_act
        if _piao_chance(st, ep, tabs, mask, s):
            j = A_DISCARD + ep.joker
            if _piao_table_says(st, ep, tabs, param):
                return j
            mask[j] = 0  # keep: the base bot's move without the 财神 discard
        code, param = bx.bases[s, 0], bx.bases[s, 1]
    # one call site of the inlined _base_action: no compiled copy of every bot apart from this one
    a = _base_action(code, param, st, ep, rp, tabs, mask, work, bx)
    if j >= 0:
        mask[j] = 1
    return a


@njit(cache=True, inline="always")
def _base_action(code, param, st, ep, rp, tabs, mask, work, bx):
    """:func:`_bot_action` of a bot that is not ``piao_table:BASE``: the tuned, learned or search bot, or a
    kernel policy.  Inlined into its one caller (each compiled kernel's library holds every bot it calls
    again: one level fewer is seconds less of a cold compile)."""
    # the learned bot typed last: a cold first compile's side process has it in the cache by then
    # (caishen.sim.warmup.side_compile)
    if code != POLICY_TUNED and code != POLICY_LEARNED and code != POLICY_MC:
        return _choose_action(code, param, st, ep, rp, tabs, mask, work)
    if code == POLICY_TUNED:
        return _tuned_action(bx.weights[st.table.to_act], st, ep, tabs, mask, work)
    if code == POLICY_MC:
        return _search_action(param, bx.weights[st.table.to_act], st, ep, rp, tabs, mask, work, bx.search)
    return _learned_action(bx.weights[st.table.to_act], st, ep, tabs, mask, work, bx.slots[0])  # its slot


@njit(cache=True)
def _seat_action(code, param, st, ep, rp, tabs, work, bx):
    """:func:`_bot_action` with the state's own legal mask (``st.mask``): the call of the step API and the
    replays from Python.  A mask passed from Python is an ``Array``, not the record's field the batch loops
    pass, and numba would compile every bot once more for it (~25 s); through this kernel the bots are
    the ones the batch loops use.  Needs ``_legal_mask`` first."""
    return _bot_action(code, param, st, ep, rp, tabs, st.mask, work, bx)
