"""Validated rule options shared by every rule set.

A rule set's options are a frozen dataclass deriving from :class:`Options`;
each field's type annotation (``bool``, ``int``, ``float``, ``Literal[...]``,
``int | None``) is the validation.  ``Options.from_dict`` / ``with_options``
raise ``ValueError`` naming an unknown option or a bad value, so a typo in
``--option dicard_win=0`` is an error, never silently ignored.

One declaration per option (OpenSpiel's habit): a field declared with
:func:`option` carries its name, default, bounds, rule ID, doc line and
kernel slot together.  :class:`Options` checks the bounds, packs the kernel
params (``params()``: a bool as 0/1, a ``Literal`` choice as its code, None
as -1, in the declared slot), and :meth:`Options.declarations` lists them
for the docs' options tables (``tests/test_rule_docs.py`` checks the tables
against them), ``caishen rules --options NAME`` and the sweep's axes.  A
subclass that only changes a default (``reserved_tiles: int = 14``) keeps
the declaration of its base class.

Bounds: every ``int`` option, of every rule set, must lie in
``-MAX_INT_OPTION .. MAX_INT_OPTION`` (``10**9``), whatever the rule set's own
``_check`` allows, so that the option fits an ``int64`` kernel parameter and a
product of two options cannot overflow ``int64``; a ``float`` option must be
finite.  Rule sets narrow these ranges in ``_check`` (Jiating's bounds keep
every score of a hand below ``2**53``, see :mod:`caishen.sim.rules.jiating`); the
integer checks are :func:`caishen.sim.validate.check_int`.  An echoed bad value is
cut to :data:`MAX_ECHO` characters (:func:`short_repr`).
"""

from __future__ import annotations

import dataclasses
import typing
from types import MappingProxyType
from typing import Any, ClassVar, Literal, NamedTuple, get_args, get_origin

import numpy as np

from collections.abc import Mapping

from caishen.sim.validate import MAX_ECHO, check_int, short_repr  # noqa: F401  (re-exported)

#: bound on the magnitude of every integer rule option (a product of two stays inside int64)
MAX_INT_OPTION = 10**9
#: longest error message kept whole (:func:`short_text`)
MAX_MESSAGE = 400


def short_text(text: str, limit: int = MAX_MESSAGE) -> str:
    """``text`` cut to ``limit`` characters (head and tail kept, the cut length said)."""
    if len(text) <= limit:
        return text
    half = limit // 2
    return f"{text[:half]}... [{len(text) - 2 * half} characters cut] ...{text[-half:]}"


def _coerce(name: str, hint: Any, value: Any) -> Any:
    origin = get_origin(hint)
    if origin is Literal:
        choices = get_args(hint)
        if not any(isinstance(value, type(c)) and value == c for c in choices):
            raise ValueError(f"option {name}={short_repr(value)}: must be one of {', '.join(map(repr, choices))}")
        return value
    if origin in (typing.Union, getattr(__import__("types"), "UnionType", None)):
        args = get_args(hint)
        if value is None or (isinstance(value, str) and value.lower() in ("none", "null")):
            if type(None) in args:
                return None
            raise ValueError(f"option {name}: None is not allowed")
        inner = [a for a in args if a is not type(None)]
        return _coerce(name, inner[0], value)
    if hint is bool:
        if isinstance(value, bool):
            return value
        if isinstance(value, str) and value.lower() in ("1", "true", "yes", "on"):
            return True
        if isinstance(value, str) and value.lower() in ("0", "false", "no", "off"):
            return False
        if isinstance(value, int) and value in (0, 1):
            return bool(value)
        raise ValueError(f"option {name}={short_repr(value)}: must be a boolean (true/false)")
    if hint is int:
        return coerce_int(f"option {name}", value, -MAX_INT_OPTION, MAX_INT_OPTION)
    if hint is float:
        try:
            fv = float(value)
        except (TypeError, ValueError, OverflowError):
            raise ValueError(f"option {name}={short_repr(value)}: must be a number") from None
        if fv != fv or fv in (float("inf"), float("-inf")):
            raise ValueError(f"option {name}={short_repr(value)}: must be a finite number")
        return fv
    if hint is str:
        return str(value)
    return value


def coerce_int(what: str, value: Any, lo: int, hi: int) -> int:
    """``value`` (an int, an integral float or a decimal string) as an int in ``lo..hi``.

    ``what`` names the value in the message (``"option cap"``).  A decimal
    string (the command line's ``--option cap=200``) is converted first (a
    string longer than any int in the bounds is not: no slow ``int()``), then
    :func:`caishen.sim.validate.check_int` checks it: ``ValueError`` for a
    bool, a non-integer, or a value outside the bounds.
    """
    if isinstance(value, str) and len(value.strip()) <= 40:
        try:
            value = int(value)
        except ValueError:
            pass  # check_int names it
    return check_int(what, value, lo, hi, integral_float=True)


class Declaration(NamedTuple):
    """One rule option as declared (:func:`option`): what the docs, the CLI and the kernels read."""

    name: str
    type: Any
    default: Any
    rule: str
    doc: str
    lo: int | None
    hi: int | None
    slot: int | None
    codes: Mapping[str, int] | None

    def bounds(self) -> str:
        """``"lo..hi"`` (``"lo.."`` without an upper bound), or ``""``."""
        if self.lo is None and self.hi is None:
            return ""
        return f"{'' if self.lo is None else self.lo}..{'' if self.hi is None else self.hi}"


def option(default, doc: str, *, rule: str, lo: int | None = None, hi: int | None = None, slot: int | None = None,
           codes: Mapping[str, int] | None = None):
    """A rule option's one declaration: a dataclass field of an :class:`Options` subclass.

    ``default``: the spec's value; ``doc``: one line for the docs and the
    help; ``rule``: the rule ID it implements (``"K-2.6"``); ``lo`` / ``hi``:
    the bounds of an ``int`` (checked by :class:`Options`, None = open; a
    None value, where the type allows it, is never out of bounds); ``slot``:
    its index in ``params()`` (the ``P_*`` constant the kernels read; None:
    not a kernel param); ``codes``: a ``Literal``'s value -> kernel code.
    """
    meta = {"doc": doc, "rule": rule, "lo": lo, "hi": hi, "slot": slot,
            "codes": None if codes is None else MappingProxyType(dict(codes))}
    return dataclasses.field(default=default, metadata=MappingProxyType(meta))


def _declared(cls, name: str) -> Mapping[str, Any]:
    """The metadata of the nearest declaration of field ``name`` in ``cls``'s bases (a default changed below
    keeps it)."""
    for klass in cls.__mro__:
        f = getattr(klass, "__dataclass_fields__", {}).get(name)
        if f is not None and f.metadata:
            return f.metadata
    return {}


@dataclasses.dataclass(frozen=True)
class Options:
    """Base of every rule set's options (a frozen, validated dataclass).

    Fields declared with :func:`option` are checked against their bounds and
    packed by :meth:`params` (``N_PARAMS``: the length of the array; 0: the
    rule set has no kernel params).  Subclasses may define ``_check(self)``
    for checks beyond the bounds; it raises ``ValueError`` naming the option.
    """

    N_PARAMS: ClassVar[int] = 0

    def __post_init__(self) -> None:
        hints = typing.get_type_hints(type(self))
        for f in dataclasses.fields(self):
            v = _coerce(f.name, hints[f.name], getattr(self, f.name))
            object.__setattr__(self, f.name, v)
        for d in self.declarations():
            v = getattr(self, d.name)
            if (d.lo is not None or d.hi is not None) and v is not None and isinstance(v, int):
                check_int(f"option {d.name}", v, d.lo, d.hi)
        self._check()

    @classmethod
    def declarations(cls) -> tuple[Declaration, ...]:
        """The declared options (:func:`option`) in field order."""
        hints = typing.get_type_hints(cls)
        out = []
        for f in dataclasses.fields(cls):
            m = _declared(cls, f.name)
            if m:
                out.append(Declaration(f.name, hints[f.name], f.default, m["rule"], m["doc"], m["lo"], m["hi"],
                                       m["slot"], m["codes"]))
        return tuple(out)

    def params(self) -> np.ndarray:
        """The declared options packed for the kernels: ``int64[N_PARAMS]`` indexed by their ``slot``;
        a bool is 0/1, a ``Literal`` its code, None -1."""
        p = np.zeros(self.N_PARAMS, dtype=np.int64)
        for d in self.declarations():
            if d.slot is None:
                continue
            v = getattr(self, d.name)
            p[d.slot] = -1 if v is None else d.codes[v] if d.codes is not None else int(v)
        return p

    def _check(self) -> None:  # overridden by rule sets with range checks
        return None

    @classmethod
    def from_dict(cls, options: dict[str, Any] | None = None):
        """Build from a mapping; unknown keys raise ``ValueError``."""
        options = dict(options or {})
        names = {f.name for f in dataclasses.fields(cls)}
        unknown = sorted(set(options) - names)
        if unknown:
            raise ValueError(
                f"unknown {cls.__name__} option(s) {', '.join(map(repr, unknown))}; "
                f"known: {', '.join(sorted(names))}"
            )
        return cls(**options)

    def with_options(self, **changes):
        """A copy with some options changed (validated)."""
        return type(self).from_dict({**self.to_dict(), **changes})

    def to_dict(self) -> dict[str, Any]:
        return dataclasses.asdict(self)


def _render(value) -> str:
    if isinstance(value, str):
        return f'`"{value}"`'
    if isinstance(value, tuple):
        return "the spec's"
    return str(value)


def options_table(cls) -> str:
    """The markdown options table of an :class:`Options` class, from its declarations (the docs' table, which
    ``tests/test_rule_docs.py`` checks against this)."""
    rows = ["| option | rule | default | values |", "|---|---|---|---|"]
    for d in cls.declarations():
        if get_origin(d.type) is Literal:
            values = ", ".join(_render(c) for c in get_args(d.type))
        elif d.lo is not None or d.hi is not None:
            values = d.bounds()
            if type(None) in get_args(d.type):
                values += ", or None"
        elif d.type is bool:
            values = "True, False"
        else:
            values = ""
        rows.append(f"| `{d.name}` | {d.rule} | **{_render(d.default)}** | {values + ': ' if values else ''}{d.doc} |")
    return "\n".join(rows) + "\n"


def parse_option_strings(items: list[str] | None) -> dict[str, str]:
    """``['key=value', ...]`` from the command line into a dict.

    Raises ``ValueError`` for an item without ``=`` and for a key given twice (the later one would
    silently win).
    """
    out: dict[str, str] = {}
    for item in items or []:
        if "=" not in item:
            raise ValueError(f"option {short_repr(item)}: expected key=value")
        k, v = item.split("=", 1)
        k = k.strip()
        if k in out:
            raise ValueError(f"option {short_repr(k)} is given twice ({short_repr(out[k])} and {short_repr(v.strip())})")
        out[k] = v.strip()
    return out
