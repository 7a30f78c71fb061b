"""Records read as words, and a hand's score explained: what every rule set shares.

A record stores codes (``win_type`` 1, ``hand_flags`` 6, ``win_tile`` 10,
``decl_2`` 1): compact, stable on disk, and what the analysis counts.  A
person reads words (``discard_win``, ``baotou`` and ``qidui``, ``2p``,
``jiating``).  This module holds the one translation, used by
:attr:`caishen.sim.engine.Game.result` (one hand) and :func:`caishen.read_run`
(a run's table, :mod:`caishen.sim.analysis.run_table`):

- the *decoders* of coded columns: :class:`Codes` (a code -> a category,
  e.g. ``win_type`` -> ``self_draw`` / ``discard_win`` / ``robbed_kong`` /
  ``draw``; :data:`TILE` a kind index -> its mpsz name, ``'5z'``),
  :class:`Flag` (0/1 -> a boolean), :class:`Bits` (a bit mask -> one named
  boolean column per bit, e.g. ``winners_mask`` -> ``won_0 .. won_3``) and
  :class:`Text` (a text column -> its words, e.g. Jiating's ``patterns_s``);
  :func:`decode_columns` applies them to a dict of columns, in order; a code
  no decoder knows is a ``ValueError`` naming the column and the value;
- the common columns' decoders and meanings (:data:`COMMON_DECODERS`,
  :data:`COMMON_DOCS`; the columns of :mod:`caishen.sim.rules.records`);
- the hook a rule set gives (``RuleSet.words``, a
  :class:`caishen.sim.rules.base.Words`) with the decoders and meanings of
  its own columns (the schema page ``docs/schema.md`` is generated from
  them) and its score explained;
- the explanation of a scored hand (:class:`HandBreakdown`: per winner each
  hand type or pattern by name (pinyin and Chinese) with its exponent or
  points and rule ID, the caps applied, and who pays whom what and why),
  written as text by :meth:`HandBreakdown.lines` (``caishen score
  --explain``, ``caishen hand``, ``caishen play``, ``caishen replay``) and as
  JSON for the replay page.

Numpy only (no pandas): the engine's ``Game.result`` decodes one row.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Mapping
from typing import Any

import numpy as np

from caishen.sim.rules.base import Words  # noqa: F401  (the hook's class, beside Analysis)
from caishen.sim.rules.codes import DECL_HARD, DECL_READY, DECL_NONE, WIN_DISCARD, WIN_ROBBED_KONG, WIN_SELF_DRAW
from caishen.sim.rules.records import SEATS
from caishen.sim.termtext import WIDTH, display_width, wrap  # noqa: F401  (display_width re-exported: the words' pad and callers)

N_KINDS = 34

#: a win type as a word (``win_type`` column; -1: a drawn hand, 流局)
WIN_TYPE_WORDS: dict[int, str] = {WIN_SELF_DRAW: "self_draw", WIN_DISCARD: "discard_win",
                                  WIN_ROBBED_KONG: "robbed_kong", -1: "draw"}
#: the Chinese and pinyin of each win type (the explanations)
WIN_TYPE_CHINESE: dict[str, str] = {"self_draw": "zimo 自摸", "discard_win": "fangchong 放冲",
                                    "robbed_kong": "qianggang 抢杠", "draw": "liuju 流局"}
#: a seat's declaration as a word (``decl_s``: J-4.1 架听, J-4.2 硬子)
DECLARATION_WORDS: dict[int, str] = {DECL_NONE: "none", DECL_READY: "jiating", DECL_HARD: "hard"}


def _tile_name(k: int) -> str:
    return f"{k % 9 + 1}{'mpsz'[k // 9]}"


# ---------------------------------------------------------------------------
# decoders
# ---------------------------------------------------------------------------
@dataclasses.dataclass(frozen=True)
class Categories:
    """A decoded categorical column: ``codes: int64[n]`` into ``categories`` (-1: missing)."""

    codes: np.ndarray
    categories: tuple[str, ...]

    def value(self, i: int) -> str | None:
        c = int(self.codes[i])
        return None if c < 0 else self.categories[c]


def _ints(name: str, values) -> np.ndarray:
    a = np.asarray(values)
    if a.dtype.kind not in "iub":
        raise ValueError(f"column {name!r} holds {a.dtype} values, expected integer codes")
    return a.astype(np.int64)


class Codes:
    """A coded integer column read as a category: ``words`` maps each code to its word (None: missing).

    Every value must be one of the codes; another is a ``ValueError`` naming the column and the value.
    """

    def __init__(self, words: Mapping[int, str | None], missing: str = ""):
        self.words = dict(words)
        self.categories = tuple(dict.fromkeys(w for w in self.words.values() if w is not None))
        self.missing = missing
        lo, hi = min(self.words), max(self.words)
        self._lo = lo
        self._lut = np.full(hi - lo + 1, -2, np.int64)
        for code, w in self.words.items():
            self._lut[code - lo] = -1 if w is None else self.categories.index(w)

    def describe(self) -> str:
        shown = ", ".join(f"{w} ({c})" for c, w in self.words.items() if w is not None)
        if len(self.categories) > 8:
            shown = f"{self.categories[0]} .. {self.categories[-1]}"
        return f"category: {shown}" + (f"; missing ({self.missing})" if self.missing else "")

    def decode(self, name: str, values) -> dict[str, Categories]:
        a = _ints(name, values)
        idx = a - self._lo
        ok = (idx >= 0) & (idx < len(self._lut))
        codes = np.where(ok, self._lut[np.clip(idx, 0, len(self._lut) - 1)], -2)
        bad = np.flatnonzero(codes == -2)
        if len(bad):
            known = sorted(self.words)
            shown = (f"{known[0]}..{known[-1]}" if known == list(range(known[0], known[-1] + 1)) and len(known) > 4
                     else ", ".join(map(str, known)))
            raise ValueError(f"column {name!r} holds {int(a[bad[0]])} in row {int(bad[0])}: not a code ({shown})")
        return {name: Categories(codes, self.categories)}


class Flag:
    """A 0/1 column read as a boolean; another value is a ``ValueError`` naming the column."""

    def describe(self) -> str:
        return "bool"

    def decode(self, name: str, values) -> dict[str, np.ndarray]:
        a = _ints(name, values)
        bad = np.flatnonzero((a != 0) & (a != 1))
        if len(bad):
            raise ValueError(f"column {name!r} holds {int(a[bad[0]])} in row {int(bad[0])}: not 0 or 1")
        return {name: a != 0}


class Bits:
    """A bit-mask column read as one boolean column per bit (``{bit: column name}``), in bit order;
    the mask column itself is replaced.  A bit no name covers is a ``ValueError``."""

    def __init__(self, bits: Mapping[int, str]):
        self.bits = dict(sorted(bits.items()))
        self._known = 0
        for b in self.bits:
            self._known |= b

    def describe(self) -> str:
        return "bool columns " + ", ".join(self.bits.values())

    def decode(self, name: str, values) -> dict[str, np.ndarray]:
        a = _ints(name, values)
        bad = np.flatnonzero((a < 0) | ((a & ~self._known) != 0))
        if len(bad):
            raise ValueError(f"column {name!r} holds {int(a[bad[0]])} in row {int(bad[0])}: bits outside "
                             f"{', '.join(self.bits.values())}")
        return {out: (a & bit) != 0 for bit, out in self.bits.items()}


class Text:
    """A text column read as other text: ``words(text) -> text`` applied to each distinct value
    (``ValueError`` from it names the column)."""

    def __init__(self, words: Callable[[str], str], describe: str):
        self.words = words
        self._describe = describe

    def describe(self) -> str:
        return self._describe

    def decode(self, name: str, values) -> dict[str, np.ndarray]:
        a = np.asarray(values, dtype=object)
        seen: dict[str, int] = {}  # distinct values (a few hundred in a run) -> index, in order of appearance
        inverse = np.fromiter((seen.setdefault(str(v), len(seen)) for v in a), np.int64, len(a))
        try:
            mapped = np.array([self.words(u) for u in seen] + [""], dtype=object)
        except ValueError as e:
            raise ValueError(f"column {name!r}: {e}") from None
        return {name: mapped[inverse]}


#: a tile kind index read as its mpsz name (``'5z'``); -1 is missing (no tile: a drawn hand)
TILE = Codes({-1: None, **{k: _tile_name(k) for k in range(N_KINDS)}}, missing="-1: no tile, a drawn hand")


def decode_columns(cols: Mapping[str, Any], decoders: Mapping[str, Any]) -> dict[str, Any]:
    """``cols`` with every column that has a decoder replaced by its decoded column(s), in place of it.

    Values are numpy arrays, or :class:`Categories` for a categorical column.
    Raises ``ValueError`` naming a column whose value no decoder knows.
    """
    out: dict[str, Any] = {}
    for name, values in cols.items():
        dec = decoders.get(name)
        if dec is None:
            out[name] = values
        else:
            out.update(dec.decode(name, values))
    return out


def python_value(v, i: int = 0):
    """Row ``i`` of a decoded column as a plain Python value (``str`` / ``bool`` / ``int`` / None)."""
    if isinstance(v, Categories):
        return v.value(i)
    x = np.asarray(v)[i]
    if isinstance(x, (np.bool_, bool)):
        return bool(x)
    if isinstance(x, (np.integer,)):
        return int(x)
    if isinstance(x, (np.floating,)):
        return float(x)
    return x


# ---------------------------------------------------------------------------
# the common columns (caishen.sim.rules.records)
# ---------------------------------------------------------------------------
#: decoders of the common columns and of the engine's columns a rule set's records may hold
COMMON_DECODERS: dict[str, Any] = {
    "win_type": Codes(WIN_TYPE_WORDS),
    "winners_mask": Bits({1 << s: f"won_{s}" for s in SEATS}),
    "win_tile": TILE,
}

#: the meaning of each common column (``score_<s>``: the four seats' columns), for the schema page
COMMON_DOCS: dict[str, str] = {
    "hand": "index of the hand within its chunk (0 .. n-1)",
    "match_hand": "index of the hand inside its match (a match: hands played with dealer rotation, K-3.3 / J-2.3)",
    "dealer": "the dealer's seat 0..3",
    "winner": "the (first) winner's seat 0..3, -1 on a drawn hand (流局)",
    "winners_mask": "bit s set if seat s won (several winners on one discard: K-4.3 option, J-3.4)",
    "won_<s>": "seat s won this hand",
    "win_type": "how the hand ended: self_draw (自摸), discard_win (放冲, K-7.1), robbed_kong (抢杠, K-7.2, "
                "J-3.3) or draw (流局)",
    "discarder": "the seat that discarded the winning tile (or whose added kong was robbed), -1 if none",
    "score_<s>": "seat s's score change in points; the four sum to zero (K-8.5, J-6.5)",
    "turns": "discards made in the hand",
    "tiles_left": "tiles left in the live wall at the end",
}


# ---------------------------------------------------------------------------
# a scored hand explained
# ---------------------------------------------------------------------------
@dataclasses.dataclass
class Item:
    """One hand type or pattern of a win: ``rule`` (``"K-6.2"``, ``"P04"``), ``name`` (pinyin),
    ``chinese``, ``value`` (the exponent it adds, or its points), ``note`` (how the value came about)."""

    rule: str
    name: str
    chinese: str
    value: int
    note: str = ""


@dataclasses.dataclass
class Payment:
    """``payer`` pays ``payee`` ``amount`` points, ``why`` (the formula with its rule IDs)."""

    payer: int
    payee: int
    amount: int
    why: str


@dataclasses.dataclass
class WinBreakdown:
    """One winner's score explained: the win, its :class:`Item` s (``unit``: ``"exponent"`` or
    ``"points"``), the total line, the caps applied, and the :class:`Payment` s it causes."""

    winner: int
    win_type: str
    discarder: int
    unit: str
    items: list[Item]
    total: str
    caps: list[str]
    payments: list[Payment]


@dataclasses.dataclass
class HandBreakdown:
    """A finished hand's score explained: the rule set, the dealer, one :class:`WinBreakdown` per winner
    (none on a drawn hand), each seat's score change (``scores``: the record's, zero-sum) and notes."""

    rules: str
    dealer: int
    wins: list[WinBreakdown]
    scores: list[int]
    notes: list[str] = dataclasses.field(default_factory=list)
    drawn: bool = False

    def paid(self) -> list[int]:
        """Each seat's score change as the explained payments add up (equal to :attr:`scores` when every
        payment is explained)."""
        out = [0] * len(self.scores)
        for w in self.wins:
            for p in w.payments:
                out[p.payer] -= p.amount
                out[p.payee] += p.amount
        return out

    def to_json(self) -> dict:
        return dataclasses.asdict(self)

    def lines(self) -> list[str]:
        """The explanation as text lines (module docstring)."""
        out = []
        if self.drawn:
            out.append(f"a drawn hand (liuju 流局): nobody wins, nobody pays (K-8.4, J-6.5); "
                       f"dealer seat {self.dealer}")
        for w in self.wins:
            how = f"{w.win_type} ({WIN_TYPE_CHINESE.get(w.win_type, w.win_type)})"
            if w.discarder >= 0:
                how += f" on seat {w.discarder}'s {'added kong' if w.win_type == 'robbed_kong' else 'discard'}"
            dealer = "the dealer" if w.winner == self.dealer else f"dealer seat {self.dealer}"
            out.append(f"seat {w.winner} wins by {how} ({dealer})")
            width = max([display_width(f"{i.name} {i.chinese}") for i in w.items] + [12])
            for i in w.items:  # the columns stay aligned; a long note wraps under itself
                value = f"E {i.value:+d}" if w.unit == "exponent" else f"{i.value:>4d}"
                out += _hang(f"  {i.rule:<6} {pad(f'{i.name} {i.chinese}', width)}  {value}",
                             f"  ({i.note})" if i.note else "")
            out.append(f"  {w.total}")
            out += [f"  cap: {c}" for c in w.caps]
            for p in w.payments:  # the amounts stay aligned; the reason wraps under itself
                out += _hang(f"  seat {p.payer} pays seat {p.payee} {p.amount:>5d}:", f" {p.why}")
        out += [f"note: {n}" for n in self.notes]
        out.append("scores: " + ", ".join(f"seat {s} {v:+d}" for s, v in enumerate(self.scores)))
        # within 96 columns (wide characters count 2; a caller's indent of up to 4 keeps them within 100): a
        # long line goes on under its own indent + 4
        return [piece for line in out
                for piece in wrap(line, _LINES_WIDTH, indent=" " * (len(line) - len(line.lstrip(" ")) + 4))]


#: the width of :meth:`HandBreakdown.lines` (the callers indent them by up to 4 columns: 100 in all)
_LINES_WIDTH = WIDTH - 4


def _hang(head: str, text: str) -> list[str]:
    """``head + text`` within :data:`_LINES_WIDTH` columns, ``head`` kept as it is (its aligned columns) and
    the rest of ``text`` wrapped on lines indented 6 columns."""
    if display_width(head + text) <= _LINES_WIDTH:
        return [head + text]
    lead = text[: len(text) - len(text.lstrip(" "))]
    first = wrap(text.strip(), _LINES_WIDTH - display_width(head + lead), indent="")
    rest = " ".join(first[1:])
    return [head + lead + first[0]] + (wrap(" " * 6 + rest, _LINES_WIDTH, indent=" " * 6) if rest else [])


def draw_breakdown(rules: str, record: Mapping[str, Any]) -> HandBreakdown:
    """The breakdown of a drawn hand (no winner): nobody pays."""
    return HandBreakdown(rules, int(record["dealer"]), [], [int(record[f"score_{s}"]) for s in SEATS], drawn=True)


def pad(text: str, width: int) -> str:
    """``text`` padded with spaces to ``width`` terminal columns (:func:`display_width`)."""
    return text + " " * max(0, width - display_width(text))


def decoders(rules: str) -> dict[str, Any]:
    """``{column: decoder}`` of a registered rule set's records: :data:`COMMON_DECODERS` and its own
    (``RuleSet.words``); ``ValueError`` for an unknown rule set."""
    from caishen.sim.rules.base import get

    return {**COMMON_DECODERS, **get(rules).words_hooks().decoders}


def record_words(rules: str, record: Mapping[str, Any]) -> dict[str, Any]:
    """One hand's record (``{column: int | str}``, :attr:`caishen.sim.engine.Game.record`) read as words:
    the coded columns decoded (:func:`decoders`) to plain ``str`` / ``bool`` / None, the rest as they are."""
    cols = decode_columns({k: np.array([v]) for k, v in record.items()}, decoders(rules))
    return {k: python_value(v) for k, v in cols.items()}
