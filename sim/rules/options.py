"""Validated rule options shared by every rule set.

A rule set's options are a frozen dataclass deriving from :class:`Options`;
each field's type annotation (``bool``, ``int``, ``float``, ``Literal[...]``,
``int | None``) is the validation.  ``Options.from_dict`` / ``with_options``
raise ``ValueError`` naming an unknown option or a bad value, so a typo in
``--option dicard_win=0`` is an error, never silently ignored.
"""

from __future__ import annotations

import dataclasses
import typing
from typing import Any, Literal, get_args, get_origin


def _coerce(name: str, hint: Any, value: Any) -> Any:
    origin = get_origin(hint)
    if origin is Literal:
        choices = get_args(hint)
        if value not in choices:
            raise ValueError(f"option {name}={value!r}: must be one of {', '.join(map(repr, choices))}")
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
        raise ValueError(f"option {name}={value!r}: must be a boolean (true/false)")
    if hint is int:
        if isinstance(value, bool):
            raise ValueError(f"option {name}={value!r}: must be an integer")
        try:
            iv = int(value)
        except (TypeError, ValueError):
            raise ValueError(f"option {name}={value!r}: must be an integer") from None
        if isinstance(value, float) and value != iv:
            raise ValueError(f"option {name}={value!r}: must be an integer")
        return iv
    if hint is float:
        try:
            return float(value)
        except (TypeError, ValueError):
            raise ValueError(f"option {name}={value!r}: must be a number") from None
    if hint is str:
        return str(value)
    return value


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
            raise ValueError(f"option {item!r}: expected key=value")
        k, v = item.split("=", 1)
        out[k.strip()] = v.strip()
    return out
