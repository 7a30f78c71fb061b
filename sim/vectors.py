"""Scoring vectors: read the JSON-lines case format and score every case.

The format is ``shared/vectors/README.md``: one JSON object per line, a
finished hand seen from the winner, with ``rules`` naming the rule set
(``"kaihua"`` or ``"jiating"``).  Each line is dispatched to that rule set's
``score(case, rules)`` (:func:`sim.rules.kaihua.score`,
``sim.rules.jiating.score``; the latter is imported only when a Jiating line
is met, so Kaihua works on its own).  A line that cannot be scored (bad
JSON, a missing key, a bad tile string, an unavailable rule set) gives an
error object ``{"line": n, "id": ..., "error": "..."}`` and the other lines
are still scored.  ``caishen score`` is the command-line face of
:func:`score_lines`.
"""

from __future__ import annotations

import dataclasses
import importlib
import json
from collections.abc import Iterable, Iterator
from typing import IO, Any

from sim.rules.options import Options

#: rule set name -> module that provides ``score(case, rules=None) -> dict``
RULE_SETS = {"kaihua": "sim.rules.kaihua", "jiating": "sim.rules.jiating"}


def _rules_module(name: str):
    """Import a rule set's module lazily; ``ValueError`` if it is not available."""
    try:
        mod = importlib.import_module(RULE_SETS[name])
    except ImportError as e:
        raise ValueError(f"rules {name!r}: {RULE_SETS[name]} is not available ({e})") from None
    if not callable(getattr(mod, "score", None)):
        raise ValueError(f"rules {name!r}: {RULE_SETS[name]} has no score(case, rules) function")
    return mod


def _options_class(mod) -> type[Options] | None:
    """The rule set's options class: the ``Options`` subclass its module defines."""
    found = [
        v for v in vars(mod).values()
        if isinstance(v, type) and issubclass(v, Options) and v is not Options and v.__module__ == mod.__name__
    ]
    return found[0] if len(found) == 1 else None


class Scorer:
    """Scores vector cases under rule options given as ``{key: value}`` strings.

    Each option applies to every rule set that has an option of that name
    (``--rules-option max_exponent=3`` changes Kaihua only).  Rule sets are
    loaded when first needed (all of them at once only to check ``options``).  Raises ``ValueError`` if an option is unknown
    to every available rule set, or a value is invalid for a rule set that
    has it.
    """

    def __init__(self, options: dict[str, Any] | None = None):
        self.options = dict(options or {})
        self._rules: dict[str, Any] = {}
        self._errors: dict[str, str] = {}
        if not self.options:
            return
        known: set[str] = set()
        unavailable = []
        for name in RULE_SETS:
            try:
                cls = _options_class(_rules_module(name))
            except ValueError:
                unavailable.append(name)
                continue
            if cls is not None:
                known |= {f.name for f in dataclasses.fields(cls)}
        unknown = sorted(set(self.options) - known)
        if unknown:
            extra = f" (rule set(s) {', '.join(unavailable)} not available)" if unavailable else ""
            raise ValueError(
                f"unknown rule option(s) {', '.join(map(repr, unknown))}; known: {', '.join(sorted(known))}{extra}"
            )
        for name in RULE_SETS:  # validate values now, not on the first line
            if name not in unavailable:
                self._rules_for(name)

    def _rules_for(self, name: str):
        if name not in self._rules:
            mod = _rules_module(name)
            cls = _options_class(mod)
            if cls is None:
                if self.options:
                    raise ValueError(f"rules {name!r}: cannot find its options class to apply {self.options}")
                self._rules[name] = None
            else:
                fields = {f.name for f in dataclasses.fields(cls)}
                self._rules[name] = cls.from_dict({k: v for k, v in self.options.items() if k in fields})
        return self._rules[name]

    def score(self, case: Any) -> dict:
        """Score one decoded case; ``ValueError`` naming the bad value."""
        if not isinstance(case, dict):
            raise ValueError(f"a case must be a JSON object, got {type(case).__name__}")
        if "rules" not in case:
            raise ValueError("missing key 'rules'")
        name = case["rules"]
        if name not in RULE_SETS:
            raise ValueError(f"rules {name!r}: must be one of {', '.join(map(repr, RULE_SETS))}")
        rules = self._rules_for(name)
        # the README: the ``expect`` key is ignored on input
        return _rules_module(name).score({k: v for k, v in case.items() if k != "expect"}, rules)


def _error_text(e: Exception) -> str:
    if isinstance(e, KeyError):
        return f"missing key {e.args[0]!r}"
    return str(e)


def score_lines(lines: Iterable[str], options: dict[str, Any] | None = None) -> Iterator[dict]:
    """Score each non-blank line; yield the result or an error object per line.

    Results are the rule set's ``score`` output (``{"id", "win", ...}``);
    failures are ``{"line": n, "id": id or None, "error": message}`` with
    ``n`` 1-based.  Raises ``ValueError`` only for bad ``options``.
    """
    scorer = Scorer(options)
    for n, text in enumerate(lines, start=1):
        if not text.strip():
            continue
        case = None
        try:
            case = json.loads(text)
            yield scorer.score(case)
        except json.JSONDecodeError as e:
            yield {"line": n, "id": None, "error": f"bad JSON: {e.msg} at column {e.colno}"}
        except (ValueError, KeyError, TypeError) as e:
            cid = case.get("id") if isinstance(case, dict) else None
            yield {"line": n, "id": cid, "error": _error_text(e)}


def score_file(stream: IO[str], out: IO[str], options: dict[str, Any] | None = None) -> tuple[int, int]:
    """Score a JSON-lines stream, writing one JSON object per case to ``out``.

    Returns ``(n_cases, n_failed)``.
    """
    n = failed = 0
    for result in score_lines(stream, options):
        n += 1
        failed += "error" in result
        out.write(json.dumps(result, ensure_ascii=False) + "\n")
        out.flush()
    return n, failed
