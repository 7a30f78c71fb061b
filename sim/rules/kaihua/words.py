"""Kaihua's records as words and its scores explained: hand types by name, exponents, caps, payments.

:data:`WORDS` is the rule set's ``words`` hook (:class:`caishen.sim.rules.words.Words`):

- the hand types by name (:data:`HAND_TYPES`: the ``FLAG_*`` bit -> rule
  ID, pinyin, Chinese), so ``hand_flags`` reads as one boolean column per
  hand type (``hand_baotou``, ``hand_qidui``, ...) and ``failed_piao_s`` as
  a boolean;
- the meaning of each of its record columns (K-10), for ``docs/schema.md``;
- a win explained (:meth:`KaihuaWords.explain_case` for a scoring-vector
  case, :meth:`KaihuaWords.explain_record` for a finished hand's record):
  each hand type with the exponent it adds (K-6.1 .. K-6.5), the 去不去
  floor (K-6.3), the ``max_exponent`` cap (K-6.6), then each payment with
  its formula: the base share ``base x 2**E`` (K-8.1), who pays it (K-8.2,
  K-8.3) and the failed-飘 extra (K-9.3).

The exponent is the kernel's (:func:`caishen.sim.rules.kaihua.kernels._evaluate_win`);
the items are read off its flags and chain links and must add up to it (a
mismatch is stated as a note, and the tests hold them equal on every
scoring vector and on self-played hands); the payments restate
:func:`caishen.sim.rules.kaihua.kernels._payments` and must add up to the
scores (same tests).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np

from caishen.sim.rules.kaihua.options import (
    FLAG_BAOTOU,
    FLAG_CHAIN,
    FLAG_HAOHUA,
    FLAG_NAMES,
    FLAG_JOKER_LINK,
    FLAG_PINGHU,
    FLAG_QIDUI,
    FLAG_QIDUI_BAOTOU,
    FLAG_QIDUI_PURE,
    FLAG_QINGYISE,
    FLAG_QUBUQU,
    WIN_SELF_DRAW,
    KaihuaRules,
)
from caishen.sim.rules.records import SEATS
from caishen.sim.rules.words import (
    WIN_TYPE_WORDS,
    Bits,
    Flag,
    HandBreakdown,
    Item,
    Payment,
    WinBreakdown,
    Words,
    draw_breakdown,
)
from caishen.sim.tiles import CAISHEN

#: the hand types of a win: ``FLAG_*`` bit -> (rule ID, pinyin, Chinese, what it adds to the exponent E)
HAND_TYPES: dict[int, tuple[str, str, str, str]] = {
    FLAG_PINGHU: ("K-6.1", "pinghu", "平胡", "0: a standard hand and nothing else"),
    FLAG_BAOTOU: ("K-6.2", "baotou", "爆头", "+1: the 财神 pairs any drawn tile (敲响, self-draw only)"),
    FLAG_QIDUI: ("K-6.3", "qidui", "七对子", "+1: seven pairs"),
    FLAG_QIDUI_PURE: ("K-6.3", "qing qidui", "清七对", "+1: seven pairs without a 财神"),
    FLAG_QIDUI_BAOTOU: ("K-6.3", "qizi baotou", "七子爆头", "+1: six pairs and a lone 财神 before the draw (七客)"),
    FLAG_HAOHUA: ("K-6.3", "haohua", "豪华", "+1 per natural four of a kind read as two pairs"),
    FLAG_QUBUQU: ("K-6.3", "qubuqu", "去不去", "the seven-pairs exponent is at least 3"),
    FLAG_QINGYISE: ("K-6.4", "qingyise", "清一色", "+1: one suit (财神 allowed, no honors)"),
    FLAG_CHAIN: ("K-6.5", "lian", "连", "+1 per chain link (kong or 飘财) on a self-draw"),
    FLAG_JOKER_LINK: ("K-9.1", "piaocai", "飘财", "+1 per 财神 discard in the counted chain"),
}

#: the boolean column of each hand type when ``hand_flags`` is read as words
FLAG_COLUMNS: dict[int, str] = {bit: f"hand_{name}" for bit, name in FLAG_NAMES.items()}

_DOCS: dict[str, str] = {
    "exponent": "the (first) winner's exponent E after the max_exponent cap (K-6, K-6.6): the win is worth "
                "2**E base shares (K-8.1); 0 on a drawn hand",
    "hand_flags": "the hand-type bits (FLAG_* of caishen.sim.rules.kaihua) of the (first) winner's counted "
                  "reading (K-10); read as one boolean column per hand type, hand_baotou and so on",
    **{col: f"the (first) winner's hand is {HAND_TYPES[bit][2]} {HAND_TYPES[bit][1]} ({HAND_TYPES[bit][0]}: "
            f"{HAND_TYPES[bit][3]})" for bit, col in FLAG_COLUMNS.items()},
    "chain_len": "chain links the (first) winner's exponent counted (K-6.5; K-9.4: links that did not count "
                 "are not shown)",
    "chain_piao": "... of which 飘财 links (a 财神 discard, K-9.1)",
    "chain_kong": "... of which kong links",
    "caishen_<s>": "财神 (5z) seat s holds at the end (K-10)",
    "piao_<s>": "飘财 attempts of seat s: 财神 it discarded (K-9.1)",
    "failed_piao_<s>": "another seat won inside seat s's open 飘 circle, so s paid the failed-飘 extra (K-9.3)",
}


def _natural_fours(counts) -> int:
    """Kinds other than the 财神 held four times (豪华, K-6.3, decision D1)."""
    c = np.asarray(counts, np.int64)
    return int(sum(1 for k in range(len(c)) if k != CAISHEN and c[k] == 4))


def _items(flags: int, kong_links: int, piao_links: int, naturals: int | None, exponent: int) -> list[Item]:
    """The hand types of the counted reading (``flags``) with the exponent each adds (K-6.1 .. K-6.5)."""

    def item(bit: int, value: int, note: str = "") -> Item:
        rule, name, chinese, _ = HAND_TYPES[bit]
        return Item(rule, name, chinese, value, note)

    items: list[Item] = []
    if flags & FLAG_QIDUI:
        items.append(item(FLAG_QIDUI, 1))
        if flags & FLAG_QIDUI_PURE:
            items.append(item(FLAG_QIDUI_PURE, 1, "no 财神 among the 14 tiles"))
        if flags & FLAG_QIDUI_BAOTOU:
            items.append(item(FLAG_QIDUI_BAOTOU, 1, "the 爆头 bonus of seven pairs"))
        if flags & FLAG_HAOHUA:
            known = sum(i.value for i in items) + kong_links + piao_links + bool(flags & FLAG_QINGYISE)
            n = naturals if naturals is not None else max(1, exponent - known)
            items.append(item(FLAG_HAOHUA, n, f"{n} natural four(s) of a kind"))
        seven = sum(i.value for i in items)
        if flags & FLAG_QUBUQU:
            items.append(item(FLAG_QUBUQU, max(0, 3 - seven), f"the seven-pairs exponent {seven} is raised to "
                              f"at least 3" if seven < 3 else "the floor of 3 is reached already"))
    elif flags & FLAG_BAOTOU:
        items.append(item(FLAG_BAOTOU, 1))
    else:
        items.append(item(FLAG_PINGHU, 0, "a standard hand: four sets and a pair"))
    if flags & FLAG_QINGYISE:
        items.append(item(FLAG_QINGYISE, 1))
    if kong_links:
        items.append(Item("K-6.5", "gang lian", "连杠", kong_links,
                          f"{kong_links} kong link(s) in the winner's chain, self-draw (杠上开花)"))
    if piao_links:
        items.append(Item("K-9.1", "piaocai", "飘财", piao_links,
                          f"{piao_links} 财神 discard(s) in the winner's chain, self-draw"))
    return items


def _payments(rules: KaihuaRules, dealer: int, winner: int, win_type: int, discarder: int, exponent: int,
              circle) -> list[Payment]:
    """The payments of one win, each with its formula (K-8.1 .. K-8.3, K-9.3); as the kernel ``_payments``."""
    out, shares, parts = [], 0, []
    mult = 1 << exponent
    for p in SEATS:
        if p == winner:
            continue
        base = 4 if dealer in (p, winner) else 2
        share = base * mult
        formula = f"{base} x 2**{exponent}" + (" (the dealer pays or wins: base 4)" if base == 4 else "")
        if win_type == WIN_SELF_DRAW:
            out.append(Payment(p, winner, share, f"its share {formula} (K-8.1); self-draw: each of the three "
                                                 "pays its share (K-8.2)"))
        elif p == discarder or rules.discard_win_payment != "own_share":
            shares += share
            parts.append(f"{'its own' if p == discarder else f'seat {p}'} {share} = {formula}")
        if circle[p]:
            if rules.failed_piao_points is not None:
                extra = rules.failed_piao_points
                why = f"the fixed {extra} points (failed_piao_points)"
            else:
                extra = (rules.failed_piao_factor - 1) * share
                times = "once more" if rules.failed_piao_factor == 2 else f"{rules.failed_piao_factor - 1} more times"
                why = f"its self-draw share {share} {times} (failed_piao_factor {rules.failed_piao_factor})"
            if extra:
                out.append(Payment(p, winner, extra, f"failed 飘 (飘失败: seat {winner} won inside seat {p}'s "
                                                      f"open 飘 circle, K-9.3): {why}"))
    if shares:
        who = ("the discarder pays all three shares (K-8.3)" if rules.discard_win_payment != "own_share"
               else "the discarder pays its own share only (K-8.3, discard_win_payment own_share)")
        out.insert(0, Payment(discarder, winner, shares, "; ".join(parts) + f" (K-8.1): {who}"))
    return out


def _win(rules: KaihuaRules, *, dealer: int, winner: int, win_type: int, discarder: int, exponent: int,
         flags: int, kong_links: int, piao_links: int, naturals: int | None, circle) -> tuple[WinBreakdown, list[str]]:
    """One win explained, and the notes of anything that does not add up."""
    items = _items(flags, kong_links, piao_links, naturals, exponent)
    uncapped = sum(i.value for i in items)
    cap = rules.max_exponent
    caps, notes = [], []
    e = uncapped
    if cap is not None and uncapped > cap:
        caps.append(f"max_exponent {cap} (K-6.6): E {uncapped} -> {cap}")
        e = cap
    if e != exponent:
        notes.append(f"the hand types add up to E = {e}, the kernel's exponent is {exponent}")
    total = f"E = {exponent} (K-6.6): each base share is multiplied by 2**{exponent} = {1 << exponent}"
    pays = _payments(rules, dealer, winner, win_type, discarder, exponent, circle)
    return WinBreakdown(winner, WIN_TYPE_WORDS[win_type], discarder, "exponent", items, total, caps, pays), notes


def _not_a_win(case: dict, e: dict, rules: KaihuaRules) -> str:
    """Why the scoring case ``case`` (``e``: its :func:`caishen.sim.rules.kaihua.scoring.evaluate`) is no legal
    win, with the rule ID: the shape (K-6), three or four 财神 (K-2.4), a 财神 drawn to a 爆头 shape (K-2.5),
    two 财神 without an exponent (K-2.6), or the discard-win gates (K-2.2, K-7)."""
    import dataclasses

    from caishen.sim import hand
    from caishen.sim.rules.kaihua.scoring import evaluate

    held = np.array(e["concealed"], np.uint8)
    held[e["win_tile"]] += 1
    caishen = int(held[CAISHEN])
    if not hand.is_win(held, CAISHEN):
        return "not a winning shape (4 sets and a pair, or seven pairs; 财神 wild: K-2.1, K-6)"
    if caishen >= 3:
        return (f"{caishen} 财神 among the tiles: no win while holding 3 or 4; a 财神 must be discarded first "
                "(the forced 飘, K-2.4)")
    if e["win_type"] == WIN_SELF_DRAW and caishen == 2 and evaluate(
            case, dataclasses.replace(rules, two_caishen_min_exponent=0))["legal"]:
        return (f"two 财神 in the winning tiles need a hand-type exponent of at least "
                f"{rules.two_caishen_min_exponent} (爆头, 七对子 or kong links), and this hand has 0 (K-2.6)")
    if e["win_type"] == WIN_SELF_DRAW and e["win_tile"] == CAISHEN:
        return "a 财神 drawn to a 爆头 (or 七子爆头) shape cannot win: a 财神 must be discarded (the forced 飘, K-2.5)"
    if e["win_type"] != WIN_SELF_DRAW:
        return "not a legal win on a discard or a robbed kong under these rules (K-2.2, K-2.6, K-7)"
    return "not a legal win under these rules (K-2, K-6, K-7)"


class KaihuaWords(Words):
    """Kaihua's ``words`` hook (module docstring)."""

    decoders = {"hand_flags": Bits(FLAG_COLUMNS), **{f"failed_piao_{s}": Flag() for s in SEATS}}
    docs = _DOCS

    def explain_case(self, case: dict, rules=None) -> HandBreakdown:
        """A scoring-vector case explained (:func:`caishen.sim.rules.kaihua.scoring.evaluate`; its errors)."""
        from caishen.sim.rules.kaihua.scoring import evaluate

        rules = KaihuaRules() if rules is None else rules
        e = evaluate(case, rules)
        scores = [int(x) for x in e["scores"]]
        if not e["legal"]:
            return HandBreakdown("kaihua", e["dealer"], [], scores, [_not_a_win(case, e, rules) + ": nobody pays"])
        held = np.array(e["concealed"], np.int64)
        held[e["win_tile"]] += 1
        win, notes = _win(rules, dealer=e["dealer"], winner=e["winner"], win_type=e["win_type"],
                          discarder=e["discarder"], exponent=e["exponent"], flags=e["flags"],
                          kong_links=e["kong_links"], piao_links=e["piao_links"], naturals=_natural_fours(held),
                          circle=[bool(x) and s != e["winner"] for s, x in enumerate(e["piao_circle"])])
        return HandBreakdown("kaihua", e["dealer"], [win], scores, notes)

    def explain_record(self, record: Mapping[str, Any], rules=None, hands=None) -> HandBreakdown:
        """A finished hand's record explained (``hands``: each seat's concealed counts at the end, for the
        豪华 count; without them it is read off the exponent)."""
        rules = KaihuaRules() if rules is None else rules
        winner = int(record["winner"])
        if winner < 0:
            return draw_breakdown("kaihua", record)
        dealer = int(record["dealer"])
        naturals = None if hands is None else _natural_fours(hands[winner])
        circle = [bool(record[f"failed_piao_{s}"]) and s != winner for s in SEATS]
        win, notes = _win(rules, dealer=dealer, winner=winner, win_type=int(record["win_type"]),
                          discarder=int(record["discarder"]), exponent=int(record["exponent"]),
                          flags=int(record["hand_flags"]), kong_links=int(record["chain_kong"]),
                          piao_links=int(record["chain_piao"]), naturals=naturals, circle=circle)
        others = [s for s in SEATS if int(record["winners_mask"]) >> s & 1 and s != winner]
        if others:
            notes.append(f"seat(s) {', '.join(map(str, others))} also won on this discard (multiple_ron, K-4.3); "
                         "the record keeps the first winner's hand type only, so their payments are in the scores "
                         "but not itemized")
        scores = [int(record[f"score_{s}"]) for s in SEATS]
        return HandBreakdown("kaihua", dealer, [win], scores, notes)


#: the rule set's ``words`` hook
WORDS = KaihuaWords()
