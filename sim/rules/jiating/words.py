"""Jiating's records as words and its scores explained: patterns by ID and name, points, caps, payments.

:data:`WORDS` is the rule set's ``words`` hook (:class:`caishen.sim.rules.words.Words`):

- its coded columns as words: ``decl_s`` -> ``none`` / ``jiating`` (架听,
  J-4.1) / ``hard`` (硬子, J-4.2), ``first_turn``, ``replacement`` and
  ``hard_offer_s`` -> booleans, ``patterns_s`` (``"P01:2,P07:2"``) ->
  ``"P01 putong hupai 普通胡牌 2, P07 menqing 门清 2"`` (:func:`pattern_words`);
- the meaning of each of its record columns (J-9), every pattern column
  ``P01`` .. ``P50`` with its names, for ``docs/schema.md``;
- a win explained (:meth:`JiatingWords.explain_case` for a scoring-vector
  case, :meth:`JiatingWords.explain_record` for a finished hand's record,
  every winner of one discard, J-3.4): each pattern with its points and how
  they came about (the J-8 points, doubled when a witness is the winner's
  own, J-6.3; counted per witness, D2), ``P`` and ``G`` (J-6.1), then each
  payment with its formula: ``min(dealer_factor (P + G), dealer_cap)`` or
  ``min(P + G, cap)``, the bonus and the dealer's streak (J-6.2, J-6.4,
  J-6.5), naming a cap that applied.

The patterns and points are the kernels' (:func:`caishen.sim.rules.jiating.kernels.score_win`,
the record's columns); the payment formulas restate
:func:`caishen.sim.rules.jiating.payments._payment` and must give the
amounts paid (a mismatch is stated as a note; the tests hold them equal on
every scoring vector and on self-played hands).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from caishen.sim.rules.jiating.options import DEFAULT_RULES, JiatingRules
from caishen.sim.rules.jiating.tables import PATTERN_IDS, PATTERN_NAMES, PATTERN_PINYIN
from caishen.sim.rules.records import SEATS
from caishen.sim.rules.words import (
    DECLARATION_WORDS,
    WIN_TYPE_WORDS,
    Codes,
    Flag,
    HandBreakdown,
    Item,
    Payment,
    Text,
    WinBreakdown,
    Words,
    draw_breakdown,
)

_WIN_TYPES = {"self_draw": 0, "discard": 1, "robbed_kong": 2}


def parse_patterns(text: str) -> dict[str, int]:
    """``"P01:2,P07:2"`` -> ``{"P01": 2, "P07": 2}`` (a ``patterns_s`` cell; ``""`` -> ``{}``);
    ``ValueError`` naming an item that is no ``ID:points``."""
    out: dict[str, int] = {}
    for item in filter(None, str(text).split(",")):
        pid, sep, pts = item.partition(":")
        if not sep or pid not in PATTERN_NAMES or not (pts.isascii() and pts.isdigit()) or len(pts) > 12:
            raise ValueError(f"{item[:40]!r} is no pattern entry (P01..P50:points)")
        out[pid] = int(pts)
    return out


def pattern_name(pid: str) -> str:
    """``"P07 menqing 门清"``: a pattern's ID, pinyin and Chinese name."""
    return f"{pid} {PATTERN_PINYIN[pid]} {PATTERN_NAMES[pid]}"


def pattern_words(text: str) -> str:
    """A ``patterns_s`` cell as words: ``"P01:2,P07:2"`` -> ``"P01 putong hupai 普通胡牌 2, P07 menqing 门清 2"``."""
    return ", ".join(f"{pattern_name(pid)} {pts}" for pid, pts in parse_patterns(text).items())


_DOCS: dict[str, str] = {
    "streak": "the dealer's streak k: deals kept in a row (J-2.4); the dealer's payments add streak_step x k "
              "(J-6.4)",
    "win_tile": "the winning tile in mpsz ('5z'); missing (-1 stored) on a drawn hand",
    "first_turn": "the (first) winner won on the dealt tiles (天胡 tian hu, J-5.4, P46)",
    "replacement": "the (first) winner won on a kong replacement draw (杠后开花, P18)",
    "P_<s>": "P of seat s's win: its pattern points after the J-7 exclusions and doubling (J-6.1); 0 if s did "
             "not win",
    "G_<s>": "G of seat s's win: its kong points (J-6.1: 8 per exposed or added kong, 12 per concealed one); 0 "
             "if s did not win",
    "pay_<p>_<w>": "points seat p paid seat w in this hand (J-6.2 .. J-6.5)",
    **{pid: f"points of {pattern_name(pid)} in the (first) winner's hand (J-8; after doubling and the J-7 "
            "exclusions); 0 if it did not count" for pid in PATTERN_IDS},
    "patterns_<s>": "every pattern of seat s's win with its points, stored as 'P01:2,P07:2' and read as "
                    "'P01 putong hupai 普通胡牌 2, P07 menqing 门清 2'; empty if s did not win",
    "decl_<s>": "seat s's declaration: none, jiating (架听, a declared single wait, J-4.1) or hard (硬子, "
                "declared ready at the deal, J-4.2)",
    "decl_turn_<s>": "discards made in the hand when seat s declared (0: a hard declaration at the deal); -1 none",
    "hard_offer_<s>": "seat s was offered the 硬子 declaration (J-4.2)",
    "passed_win_<s>": "wins seat s passed (J-3.5)",
}


def _item(pid: str, pts: int, rules: JiatingRules) -> Item:
    """One counted pattern with how its points came about (J-8 points, J-6.3 doubling, D2 per witness)."""
    base = dict(rules.pattern_points).get(pid, 0)
    f = rules.concealed_factor
    note = ""
    if pts != base and base:
        if pid in rules.doubled_patterns and pts == base * f:
            note = f"{base} x {f}: doubled, a witness is the winner's own, 暗x{f} J-6.3"
        elif pts % base == 0:
            note = f"{pts // base} x {base}: counted once per witness, D2" + (
                "; own witnesses doubled, J-6.3" if pid in rules.doubled_patterns else "")
    return Item(pid, PATTERN_PINYIN[pid], PATTERN_NAMES[pid], pts, note)


def _payment(rules: JiatingRules, *, payer: int, winner: int, dealer: int, streak: int, self_draw: bool,
             total: int) -> tuple[int, str, str | None]:
    """``(amount, formula, cap note or None)`` that ``payer`` owes ``winner`` for ``total = P + G``
    (J-6.2, J-6.4; as the kernel ``payments._payment``)."""
    dealer_in = dealer in (payer, winner)
    if dealer_in:
        raw, cap, cap_name = rules.dealer_factor * total, rules.dealer_cap, "dealer_cap"
        formula = f"{rules.dealer_factor} x {total} (the dealer pays or wins)"
    else:
        raw, cap, cap_name = total, rules.cap, "cap"
        formula = f"{total}"
    capped = raw if cap is None or raw <= cap else cap
    cap_note = None
    if capped != raw:
        formula = f"min({formula}, {cap_name} {cap})"
        cap_note = f"{cap_name} {cap} (J-6.2): seat {payer}'s {raw} to seat {winner} -> {cap}"
    if self_draw:
        bonus = rules.bonus_self_draw_dealer if dealer_in else rules.bonus_self_draw
        kind = "self-draw"
    else:
        bonus = rules.bonus_discard_dealer if dealer_in else rules.bonus_discard
        kind = "discard win"
    parts = [formula, f"bonus {bonus} ({kind}, J-6.4)"] if bonus else [formula]
    extra = rules.streak_step * streak if dealer_in else 0
    if extra:
        parts.append(f"streak {rules.streak_step} x {streak} (J-6.4)")
    return capped + bonus + extra, " + ".join(parts) + (" (J-6.2)" if not bonus and not extra else ""), cap_note


def _win(rules: JiatingRules, *, dealer: int, streak: int, winner: int, win_type: int, discarder: int,
         patterns: Mapping[str, int], P: int, G: int, paid: Mapping[int, int] | None,
         kongs: str = "") -> tuple[WinBreakdown, list[str]]:
    """One win explained.  ``paid``: ``{payer: amount}`` as recorded (None: the formulas' amounts)."""
    items = [_item(pid, pts, rules) for pid, pts in patterns.items()]
    notes = []
    if sum(i.value for i in items) != P:
        notes.append(f"seat {winner}'s patterns add up to {sum(i.value for i in items)}, its P is {P}")
    total = f"P = {P} (J-6.1, after the J-7 exclusions); G = {G}{kongs} (J-6.1); P + G = {P + G}"
    self_draw = win_type == 0
    payers = [p for p in SEATS if p != winner] if self_draw else [discarder]
    caps, pays = [], []
    for p in payers:
        amount, why, cap_note = _payment(rules, payer=p, winner=winner, dealer=dealer, streak=streak,
                                         self_draw=self_draw, total=P + G)
        if paid is not None and paid.get(p, amount) != amount:
            notes.append(f"seat {p} paid seat {winner} {paid[p]}, the formula gives {amount}")
            amount = paid[p]
        how = "self-draw: each of the three pays (J-6.5)" if self_draw else (
            "the discarder pays (J-6.5)" if win_type == 1 else "the robbed seat pays, as a discard (J-6.5, D10)")
        pays.append(Payment(p, winner, amount, f"{why}; {how}"))
        if cap_note:
            caps.append(cap_note)
    return WinBreakdown(winner, WIN_TYPE_WORDS[win_type], discarder, "points", items, total, caps, pays), notes


class JiatingWords(Words):
    """Jiating's ``words`` hook (module docstring)."""

    decoders = {
        "first_turn": Flag(),
        "replacement": Flag(),
        **{f"decl_{s}": Codes(DECLARATION_WORDS) for s in SEATS},
        **{f"hard_offer_{s}": Flag() for s in SEATS},
        **{f"patterns_{s}": Text(pattern_words, "text: 'P01 putong hupai 普通胡牌 2, ...'") for s in SEATS},
    }
    docs = _DOCS

    def explain_case(self, case: dict, rules=None) -> HandBreakdown:
        """A scoring-vector case explained (:func:`caishen.sim.rules.jiating.scoring.evaluate`; its errors)."""
        from caishen.sim.rules.jiating.scoring import _parse_case, evaluate

        rules = DEFAULT_RULES if rules is None else rules
        res = evaluate(case, rules)
        c = _parse_case(case)
        scores = [int(x) for x in res.scores]
        if not res.win:
            return HandBreakdown("jiating", c["dealer"], [], scores, ["not a complete hand (J-5.1): nobody pays"])
        n_exposed = sum(1 for t, _ in c["melds"] if t in ("kong_exposed", "kong_added"))
        n_concealed = sum(1 for t, _ in c["melds"] if t == "kong_concealed")
        kongs = f" = {n_exposed} x {rules.kong_exposed_points} + {n_concealed} x {rules.kong_concealed_points}" if (
            n_exposed or n_concealed) else ""
        discarder = -1 if c["discarder"] is None else c["discarder"]
        win, notes = _win(rules, dealer=c["dealer"], streak=c["streak"], winner=c["winner"],
                          win_type=_WIN_TYPES[c["win_type"]], discarder=discarder, patterns=res.patterns,
                          P=res.P, G=res.G, paid=None, kongs=kongs)
        return HandBreakdown("jiating", c["dealer"], [win], scores, notes)

    def explain_record(self, record: Mapping[str, Any], rules=None, hands=None) -> HandBreakdown:
        """A finished hand's record explained: every winner (``winners_mask``) with its ``patterns_s``,
        ``P_s``, ``G_s`` and the ``pay_p_s`` it was paid."""
        rules = DEFAULT_RULES if rules is None else rules
        if int(record["winner"]) < 0:
            return draw_breakdown("jiating", record)
        dealer, streak = int(record["dealer"]), int(record["streak"])
        wins, notes = [], []
        first = int(record["winner"])
        winners = [first] + [s for s in SEATS if int(record["winners_mask"]) >> s & 1 and s != first]
        for w in winners:
            paid = {p: int(record[f"pay_{p}_{w}"]) for p in SEATS if p != w and int(record[f"pay_{p}_{w}"])}
            win, n = _win(rules, dealer=dealer, streak=streak, winner=w, win_type=int(record["win_type"]),
                          discarder=int(record["discarder"]), patterns=parse_patterns(record[f"patterns_{w}"]),
                          P=int(record[f"P_{w}"]), G=int(record[f"G_{w}"]), paid=paid)
            wins.append(win)
            notes += n
        return HandBreakdown("jiating", dealer, wins, [int(record[f"score_{s}"]) for s in SEATS], notes)


#: the rule set's ``words`` hook
WORDS = JiatingWords()
