"""Validated rule options shared by every rule set.

A rule set's options are a frozen dataclass deriving from :class:`Options`;
each field's type annotation (``bool``, ``int``, ``float``, ``Literal[...]``,
``int | None``) is the validation.  ``Options.from_dict`` / ``with_options``
raise ``ValueError`` naming an unknown option or a bad value, so a typo in
``--option dicard_win=0`` is an error, never silently ignored.

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
from typing import Any, Literal, get_args, get_origin

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


@dataclasses.dataclass(frozen=True)
class Options:
    """Base of every rule set's options (a frozen, validated dataclass).

    Subclasses may define ``_check(self)`` for range checks; it raises
    ``ValueError`` naming the option.
    """

    def __post_init__(self) -> None:
        hints = typing.get_type_hints(type(self))
        for f in dataclasses.fields(self):
            v = _coerce(f.name, hints[f.name], getattr(self, f.name))
            object.__setattr__(self, f.name, v)
        self._check()

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


def parse_option_strings(items: list[str] | None) -> dict[str, str]:
    """``['key=value', ...]`` from the command line into a dict.

    Raises ``ValueError`` for an item without ``=``.
    """
    out: dict[str, str] = {}
    for item in items or []:
        if "=" not in item:
            raise ValueError(f"option {short_repr(item)}: expected key=value")
        k, v = item.split("=", 1)
        out[k.strip()] = v.strip()
    return out
