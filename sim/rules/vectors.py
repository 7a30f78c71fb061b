"""Scoring vectors: read the JSON-lines case format and score every case.

The format is ``shared/vectors/README.md``: one JSON object per line, a
finished hand seen from the winner, with ``rules`` naming the rule set
(``"kaihua"`` or ``"jiating"``).  Each line is dispatched to that registered
rule set's ``score(case, rules)`` (its ``RuleSet.score``, imported only
when a line of that rule set is met: :func:`caishen.sim.rules.kaihua.score`,
``caishen.sim.rules.jiating.scoring.score``).  A line that cannot be scored gives an
error object ``{"line": n, "id": ..., "error": "..."}`` and the other lines
are still scored, whatever went wrong: bad or too deeply nested JSON, a
known key of the wrong JSON type (checked here, before the rule set sees
the case: :data:`KEY_TYPES`), a missing key, a bad tile string, a value out
of bounds, a case play cannot produce, an unavailable rule set, or an
unexpected error inside a rule set (named by its type, e.g. a numba error).
Messages are cut to :data:`caishen.sim.rules.options.MAX_MESSAGE` characters and
an echoed ``id`` to :data:`MAX_ID` characters, so a 5 MB bad value is never
echoed whole.  ``caishen score`` is the command-line face of
:func:`score_lines`.
"""

from __future__ import annotations

import dataclasses
import json
import math
from collections.abc import Iterable, Iterator
from typing import IO, Any

from caishen.sim import tiles
from caishen.sim.rules import base as _rulesets
from caishen.sim.rules.options import short_repr, short_text

#: longest ``id`` echoed in an error object
MAX_ID = 200

_INT = "an integer"
_STR = "a string"
_BOOL = "true or false"
#: JSON type of every key of the vector format (README), checked before dispatch:
#: key -> (allowed Python types, description); ``None`` in the types allows null
KEY_TYPES: dict[str, tuple[tuple, str]] = {
    "id": ((str, int, float, type(None)), "a string, a number or null"),
    "rules": ((str,), _STR),
    "dealer": ((int,), _INT),
    "winner": ((int,), _INT),
    "streak": ((int,), _INT),
    "discarder": ((int, type(None)), "an integer or null"),
    "win_type": ((str,), _STR),
    "concealed": ((str,), _STR),
    "melds": ((list, type(None)), "a list of melds"),
    "win_tile": ((str,), _STR),
    "replacement_draw": ((bool,), _BOOL),
    "first_turn": ((bool,), _BOOL),
    "on_dealers_first_discard": ((bool,), _BOOL),
    "dealer_ready_after_first_discard": ((bool,), _BOOL),
    "declaration": ((str,), _STR),
    "visible": ((str, type(None)), "a string"),
    "chain": ((list,), "a list of strings"),
    "piao_circle": ((list,), "a list of seats"),
}
#: element types of the list-valued keys
_ITEM_TYPES = {"chain": ((str,), _STR), "piao_circle": ((int,), _INT)}
#: JSON type of a meld's keys
MELD_KEY_TYPES = {"type": ((str,), _STR), "tiles": ((str,), _STR)}


def _is(value: Any, types: tuple) -> bool:
    """JSON-type check: a bool is not an integer, an integer is a number."""
    if isinstance(value, bool):
        return bool in types
    return isinstance(value, types)


def _type_error(where: str, what: str, value: Any) -> ValueError:
    return ValueError(f"key {where} must be {what}, got {type(value).__name__} {short_repr(value)}")


def check_key_types(case: dict) -> None:
    """Check the JSON type of every known key of a decoded case (:data:`KEY_TYPES`).

    Only types: values, missing and unknown keys are the rule set's to judge.
    Raises ``ValueError`` naming the key (``key 'win_type' must be a string,
    got list [...]``; a meld's keys as ``melds[0].type``).
    """
    for key, (types, what) in KEY_TYPES.items():
        if key not in case:
            continue
        v = case[key]
        if not _is(v, types):
            raise _type_error(repr(key), what, v)
        if key in _ITEM_TYPES and isinstance(v, list):
            itypes, iwhat = _ITEM_TYPES[key]
            for i, x in enumerate(v):
                if not _is(x, itypes):
                    raise _type_error(f"'{key}[{i}]'", iwhat, x)
        if key == "melds" and isinstance(v, list):
            for i, m in enumerate(v):
                if not isinstance(m, dict):
                    raise _type_error(f"'melds[{i}]'", "an object with 'type' and 'tiles'", m)
                for mk, (mtypes, mwhat) in MELD_KEY_TYPES.items():
                    if mk in m and not _is(m[mk], mtypes):
                        raise _type_error(f"'melds[{i}].{mk}'", mwhat, m[mk])


#: keys a case of any rule set may omit, and the value each then takes (a hand typed by hand:
#: a concealed self-draw needs only rules, dealer, winner, win_type, concealed, win_tile);
#: the rule set's own ones are its ``RuleSet.plain_case`` (:func:`defaults`)
COMMON_DEFAULTS: dict[str, Any] = {"discarder": None, "melds": [], "replacement_draw": False}


def defaults(rules: str) -> dict[str, Any]:
    """The keys a case of rule set ``rules`` may omit, with the value each then takes:
    :data:`COMMON_DEFAULTS` and the rule set's ``plain_case`` (Kaihua: ``chain`` and ``piao_circle``
    empty; Jiating: ``streak`` 0, ``declaration`` "none", ``first_turn`` false, ``visible`` "").
    ``id`` is not here: a missing one is the case's line, ``"line N"`` (:func:`with_defaults`)."""
    return {**COMMON_DEFAULTS, **_rulesets.get(rules).plain_case}


def with_defaults(case: dict, line: int | None = None) -> dict:
    """``case`` with every omitted key of :func:`defaults` filled in (a key given, even as null, is
    kept), and a missing ``id`` as ``"line N"`` (N = ``line``, 1-based) when the line is known."""
    out = {k: (list(v) if isinstance(v, list) else v) for k, v in defaults(case["rules"]).items() if k not in case}
    if "id" not in case and line is not None:
        out["id"] = f"line {line}"
    return {**case, **out}


def _vector_rule_sets() -> tuple[str, ...]:
    """The registered rule sets that score vector cases (a ``RuleSet.score``)."""
    return tuple(n for n in _rulesets.names() if _rulesets.get(n).score is not None)


def _score_function(name: str):
    """A rule set's ``score(case, rules)``, imported lazily; ``ValueError`` if it is not available."""
    try:
        return _rulesets.get(name).scorer()
    except ValueError as e:
        raise ValueError(f"rules {name!r}: {e}") from None


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
        for name in _vector_rule_sets():
            try:
                _score_function(name)
            except ValueError:
                unavailable.append(name)
                continue
            known |= {f.name for f in dataclasses.fields(_rulesets.get(name).options)}
        unknown = sorted(set(self.options) - known)
        if unknown:
            extra = f" (rule set(s) {', '.join(unavailable)} not available)" if unavailable else ""
            raise ValueError(
                f"unknown rule option(s) {', '.join(map(repr, unknown))}; known: {', '.join(sorted(known))}{extra}"
            )
        for name in _vector_rule_sets():  # validate values now, not on the first line
            if name not in unavailable:
                self._rules_for(name)

    def _rules_for(self, name: str):
        if name not in self._rules:
            _score_function(name)  # available at all
            cls = _rulesets.get(name).options
            fields = {f.name for f in dataclasses.fields(cls)}
            self._rules[name] = cls.from_dict({k: v for k, v in self.options.items() if k in fields})
        return self._rules[name]

    def score(self, case: Any, line: int | None = None) -> dict:
        """Score one decoded case; ``ValueError`` naming the bad key or value.

        The JSON types of the known keys are checked first
        (:func:`check_key_types`), the keys a hand typed by hand may omit are
        filled in (:func:`with_defaults`; ``line``: the case's 1-based input
        line, for a missing ``id``), then the case goes to its rule set.
        """
        if not isinstance(case, dict):
            raise ValueError(f"a case must be a JSON object, got {type(case).__name__}")
        if "rules" not in case:
            raise ValueError("missing key 'rules'")
        check_key_types(case)
        name = case["rules"]
        known = _vector_rule_sets()
        if name not in known:
            raise ValueError(f"rules {name!r}: must be one of {', '.join(map(repr, known))}")
        rules = self._rules_for(name)
        # the README: the ``expect`` key is ignored on input
        return _score_function(name)(with_defaults({k: v for k, v in case.items() if k != "expect"}, line), rules)

    def explain(self, case: Any, line: int | None = None):
        """The score of one decoded case explained (a :class:`caishen.sim.rules.words.HandBreakdown`, the
        rule set's ``words`` hook); checked as :meth:`score`, ``ValueError`` naming the bad key or value."""
        self.score(case, line)  # every check of a scored case, and a rule set that scores at all
        name = case["rules"]
        body = with_defaults({k: v for k, v in case.items() if k != "expect"}, line)
        return _rulesets.get(name).words_hooks().explain_case(body, self._rules_for(name))


def _error_text(e: BaseException) -> str:
    """The message of a per-line failure, cut to ``MAX_MESSAGE`` characters.

    A ``ValueError`` (the documented bad-input error) is its message; a
    missing key is named; anything else (a bug or a library error on input
    that slipped through) is prefixed by its type, e.g. ``OverflowError: ...``.
    """
    if isinstance(e, json.JSONDecodeError):
        text = f"bad JSON: {e.msg} at column {e.colno}"
    elif isinstance(e, KeyError):
        text = f"missing key {short_repr(e.args[0] if e.args else None)}"
    elif type(e) is ValueError:
        text = str(e)
    else:
        text = f"{type(e).__name__}: {e}"
    return short_text(text)


def _echo_id(case: Any) -> Any:
    """The case's ``id`` for an error object: a string (cut to ``MAX_ID``), a number, or None."""
    cid = case.get("id") if isinstance(case, dict) else None
    if isinstance(cid, str):
        return short_text(cid, MAX_ID)
    if isinstance(cid, (int, float)) and not isinstance(cid, bool):
        return cid
    return None


#: characters of one input line of ``caishen score`` at most (a case is a few hundred)
MAX_LINE = 1 << 20


def bounded_lines(stream: IO[str], limit: int = MAX_LINE) -> Iterator[str | None]:
    """The lines of a text stream, each read at most ``limit`` characters at a time: a longer line is
    skipped in pieces and yielded as None, so no line of the input (``/dev/zero`` piped in) is held whole."""
    while True:
        line = stream.readline(limit + 1)
        if not line:
            return
        if len(line) > limit and not line.endswith("\n"):
            while line and not line.endswith("\n"):
                line = stream.readline(1 << 16)
            yield None
            continue
        yield line


def _scored(lines: Iterable[str | None], options: dict[str, Any] | None) -> Iterator[tuple[int, Any, dict]]:
    """``(1-based line, decoded case or None, result or error object)`` of each non-blank line
    (:func:`score_lines`)."""
    scorer = Scorer(options)
    for n, text in enumerate(lines, start=1):
        if text is None:  # from bounded_lines: a line too long to be a case
            yield n, None, {"line": n, "id": None, "error": f"bad JSON: a line of more than {MAX_LINE:,} characters"}
            continue
        if not text.strip():
            continue
        try:
            case = json.loads(text)
        except RecursionError:
            yield n, None, {"line": n, "id": None, "error": "bad JSON: nested too deeply"}
            continue
        except Exception as e:  # noqa: BLE001 - JSONDecodeError, or a UnicodeError from a bad surrogate
            yield n, None, {"line": n, "id": None, "error": _error_text(e)}
            continue
        try:
            result = scorer.score(case, n)
        except Exception as e:  # noqa: BLE001 - one bad line must not stop the others
            yield n, case, {"line": n, "id": _echo_id(case), "error": _error_text(e)}
            continue
        yield n, case, result


def score_lines(lines: Iterable[str | None], options: dict[str, Any] | None = None) -> Iterator[dict]:
    """Score each non-blank line; yield the result or an error object per line.

    ``lines``: strings, or None for a line too long to read (:func:`bounded_lines`).
    Results are the rule set's ``score`` output (``{"id", "win", ...}``);
    failures are ``{"line": n, "id": id or None, "error": message}`` with
    ``n`` 1-based.  Every error of a line (any ``Exception``) is caught and
    reported on that line, and the later lines are scored.  Omitted keys take
    their defaults (:func:`with_defaults`).  Raises ``ValueError`` only for
    bad ``options``.
    """
    for _, _, result in _scored(lines, options):
        yield result


#: ``expect`` keys that ``caishen score --check`` does not compare (shared/vectors/README.md:
#: Kaihua's ``flags`` are informative, not compared by checks)
UNCHECKED = frozenset({"flags"})


def check_case(n: int, case: Any, result: dict) -> list[dict]:
    """What ``caishen score --check`` reports for one scored line ``n`` (1-based): nothing when it agrees.

    ``[result]`` for an error object; ``[{"line": n, "id": id, "unchecked": "no expect key"}]`` for a
    case without ``expect``; an error object for an ``expect`` that is no JSON object; else one
    ``{"line": n, "id": id, "field": key, "expected": value, "got": value}`` per key of ``expect``
    (except :data:`UNCHECKED`) whose scored value differs (``got`` null when the result has no such key).
    """
    if "error" in result:
        return [result]
    cid = result.get("id")
    expect = case.get("expect")
    if expect is None:
        return [{"line": n, "id": cid, "unchecked": "no expect key"}]
    if not isinstance(expect, dict):
        return [{"line": n, "id": cid,
                 "error": f"key 'expect' must be an object, got {type(expect).__name__} {short_repr(expect)}"}]
    return [{"line": n, "id": cid, "field": field, "expected": want, "got": result.get(field)}
            for field, want in expect.items() if field not in UNCHECKED and result.get(field) != want]


def check_lines(lines: Iterable[str | None], options: dict[str, Any] | None = None) -> Iterator[dict]:
    """Score each non-blank line and compare it with its ``expect`` object (``caishen score --check``):
    the objects of :func:`check_case` in input order.  Raises ``ValueError`` only for bad ``options``."""
    for n, case, result in _scored(lines, options):
        yield from check_case(n, case, result)


def _strict(obj):
    """``obj`` as a strict JSON value: non-finite numbers (an input's ``NaN`` id) as null, lone surrogates
    (``"\\ud800"`` in the input) as U+FFFD, so that every output line is valid JSON in UTF-8."""
    if isinstance(obj, float):
        return obj if math.isfinite(obj) else None
    if isinstance(obj, str):
        return obj.encode("utf-16", "surrogatepass").decode("utf-16", "replace")
    if isinstance(obj, dict):
        return {_strict(k): _strict(v) for k, v in obj.items()}
    if isinstance(obj, (list, tuple)):
        return [_strict(v) for v in obj]
    return obj


def json_line(result: dict, ascii_only: bool = False) -> str:
    """One output line of ``caishen score``: strict JSON (:func:`_strict`), ASCII escapes with ``ascii_only``."""
    return json.dumps(_strict(result), ensure_ascii=ascii_only, allow_nan=False) + "\n"


def _ascii_only(out: IO[str]) -> bool:
    """Whether lines to ``out`` must be ASCII: its encoding is not a Unicode one (``PYTHONIOENCODING=ascii``)."""
    import codecs

    try:
        enc = codecs.lookup(getattr(out, "encoding", None) or "utf-8").name
    except LookupError:
        enc = "ascii"
    return not enc.startswith("utf")


def score_file(stream: IO[str], out: IO[str], options: dict[str, Any] | None = None) -> tuple[int, int]:
    """Score a JSON-lines stream, writing one JSON object per case to ``out``.

    Every line written is valid JSON whatever the input (:func:`json_line`);
    to a stream whose encoding is not a Unicode one (``PYTHONIOENCODING=ascii``)
    the lines are ASCII with ``\\u`` escapes, so no line is lost to an
    encoding error.  Returns ``(n_cases, n_failed)``.
    """
    ascii_only = _ascii_only(out)
    n = failed = 0
    for result in score_lines(bounded_lines(stream), options):
        n += 1
        failed += "error" in result
        out.write(json_line(result, ascii_only))
        out.flush()
    return n, failed


def check_file(stream: IO[str], out: IO[str], options: dict[str, Any] | None = None) -> dict[str, int]:
    """``caishen score --check``: write :func:`check_case`'s objects to ``out``, one JSON line each.

    Returns the counts ``{"cases", "checked", "mismatched", "mismatches", "failed", "unchecked"}``:
    non-blank lines, lines compared with their ``expect``, lines with at least one
    mismatch, mismatching fields in all, lines that could not be scored (or
    whose ``expect`` is no object), and scored lines without ``expect``.
    """
    ascii_only = _ascii_only(out)
    counts = dict.fromkeys(("cases", "checked", "mismatched", "mismatches", "failed", "unchecked"), 0)
    for n, case, result in _scored(bounded_lines(stream), options):
        found = check_case(n, case, result)
        counts["cases"] += 1
        kinds = {"error" if "error" in o else "unchecked" if "unchecked" in o else "field" for o in found}
        counts["failed"] += "error" in kinds
        counts["unchecked"] += "unchecked" in kinds
        counts["checked"] += not kinds & {"error", "unchecked"}
        counts["mismatched"] += "field" in kinds
        counts["mismatches"] += sum("field" in o for o in found)
        for obj in found:
            out.write(json_line(obj, ascii_only))
        out.flush()
    return counts


def explain_file(stream: IO[str], out: IO[str], options: dict[str, Any] | None = None) -> tuple[int, int]:
    """``caishen score --explain``: each case of a JSON-lines stream explained as text
    (:meth:`Scorer.explain`, :meth:`caishen.sim.rules.words.HandBreakdown.lines`), a blank line between
    cases; a line that cannot be scored gets one ``line N: error: ...`` line.  Returns ``(n_cases, n_failed)``."""
    scorer = Scorer(options)
    ascii_only = _ascii_only(out)

    def write(text: str) -> None:
        text = _strict(text)
        out.write(text.encode("ascii", "backslashreplace").decode("ascii") if ascii_only else text)

    n = failed = 0
    for i, text in enumerate(bounded_lines(stream), start=1):
        if text is not None and not text.strip():
            continue
        n += 1
        try:
            if text is None:
                raise ValueError(f"bad JSON: a line of more than {MAX_LINE:,} characters")
            try:
                case = json.loads(text)
            except RecursionError:
                raise ValueError("bad JSON: nested too deeply") from None
            b = scorer.explain(case, i)
        except Exception as e:  # noqa: BLE001 - one bad line must not stop the others
            failed += 1
            write(f"line {i}: error: {_error_text(e)}\n\n")
            continue
        named = f", case {short_text(str(case['id']), MAX_ID)}" if case.get("id") is not None else ""  # no "case line 1"
        write("\n".join([f"line {i}{named} ({case['rules']}):", *b.lines()]) + "\n\n")
        out.flush()
    return n, failed


def best_self_draw(rules: str, counts) -> tuple[str, Any] | None:
    """``(tile, breakdown)``: the complete 14 concealed tiles ``counts`` (``uint8[34]``) read as a plain
    self-draw by a non-dealer (:func:`plain_case`) on the tile of them that pays the winner most, with
    its score explained (the rule set's ``words`` hook); None when no tile of them wins under ``rules``."""
    import numpy as np

    scorer = Scorer()
    best = None
    for k in np.flatnonzero(counts):
        rest = np.array(counts, np.int64)
        rest[k] -= 1
        case = plain_case(rules, tiles.to_str(rest), tiles.kind_name(int(k)))
        if not scorer.score(case)["win"]:
            continue
        b = scorer.explain(case)
        if best is None or b.scores[1] > best[1].scores[1]:
            best = (tiles.kind_name(int(k)), b)
    return best


def plain_case(rules: str, concealed: str, win_tile: str) -> dict:
    """The scoring-vector case of a plain self-draw by a non-dealer (what the win gate asks about).

    Seat 1 wins by self-draw (dealer seat 0) on ``win_tile`` with the
    concealed tiles ``concealed``, no melds, no replacement draw, and the
    rule set's ``plain_case`` keys (Kaihua: no chain links and no open 飘
    circle; Jiating: no declaration, not the first turn, nothing visible).
    """
    case = {"id": "hand", "rules": rules, "dealer": 0, "winner": 1, "win_type": "self_draw", "discarder": None,
            "concealed": concealed, "melds": [], "win_tile": win_tile, "replacement_draw": False}
    case.update(_rulesets.get(rules).plain_case)  # the rule set's own keys of a plain case
    return case


def gated_waits(rules: str, counts, waits: list[str]) -> list[str]:
    """The waits (mpsz names) on which a self-draw win is legal under ``rules``.

    ``counts: uint8[34]`` the 13 concealed tiles (no melds), ``waits`` their
    shape-only waits.  A wait ``w`` is kept iff the rule set's public
    ``score(case)`` (:func:`caishen.sim.rules.kaihua.score`,
    :func:`caishen.sim.rules.jiating.score`) says ``win`` for :func:`plain_case`:
    seat 1 (not the dealer) draws ``w`` itself, with no melds, no kong
    replacement draw, no chain links or open 飘 circles (Kaihua) and no
    declaration (Jiating).  A wait the hand already holds four times is
    dropped (a fifth copy does not exist).  The gates of the hand's history
    (K-2.5's force lasting after a kong, J-3.5 passed wins) and of discard
    wins (K-7.1) are not applied: the list answers "could this hand win by
    drawing w now".
    """
    scorer = Scorer()
    concealed = tiles.to_str(counts)
    out = []
    for w in waits:
        if counts[tiles.parse_kinds(w)[0]] >= 4:
            continue
        if scorer.score(plain_case(rules, concealed, w))["win"]:
            out.append(w)
    return out


def gate_notes(rules: str, counts, dropped: list[str]) -> dict[str, str]:
    """Why each shape wait of ``dropped`` (mpsz names) is no wait under ``rules`` (:func:`gated_waits`
    dropped it): ``{tile: reason}``, the reason with its rule ID from the rule set's ``words`` hook (its
    explanation of the :func:`plain_case`), or that all four copies are held."""
    scorer = Scorer()
    concealed = tiles.to_str(counts)
    out = {}
    for w in dropped:
        if counts[tiles.parse_kinds(w)[0]] >= 4:
            out[w] = "the hand holds all four (a fifth does not exist)"
            continue
        try:
            notes = scorer.explain(plain_case(rules, concealed, w)).notes
        except ValueError:  # a rule set that explains no cases
            notes = []
        out[w] = notes[0].removesuffix(": nobody pays") if notes else f"a self-draw win on it is not legal under {rules}"
    return out


def warm() -> None:
    """Score one plain case of every rule set that scores cases (``caishen warmup score``: the scorers'
    kernels compiled or loaded); ``RuntimeError`` if a rule set refuses it (the workload must reach them)."""
    for name in _vector_rule_sets():
        case = plain_case(name, "123m456m789p234s5s", "5s")
        out = next(score_lines([json.dumps(case)]))
        if "error" in out:
            raise RuntimeError(f"warm-up case of {name!r} was refused: {out['error']}")
