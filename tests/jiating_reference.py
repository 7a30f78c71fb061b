"""The Python Jiating scorer: the slow obvious reference of the numba kernels (tests only).

The package scores Jiating wins with the numba kernels
(``caishen.sim.rules.jiating.kernels``: ``evaluate`` / ``score`` / ``caishen score``
and the self-play records).  This module is the reference they are
compared with (``tests/test_jiating_kernels.py`` on every vector, every
pattern, random wins under random rule tables and every win of checked
self-play runs; ``tests/test_jiating_scoring.py`` on the predicates):
each J-8 pattern as a small named predicate over one winning hand, the
reading and wait chosen in plain Python, J-7 exclusions and J-6.3 doubling
applied by dictionaries.  Decisions D1..D12 are Jiating's (docs/rules/jiating.md).

A :class:`WinningHand` is one *reading* of the winner's whole hand (the
concealed groups from :func:`caishen.sim.readings.readings` plus the declared melds as
extra sets), one choice of the group the winning tile completes (the "wait",
J-5.3), and a :class:`WinContext` (win type, declaration, waits, ...).

Every predicate takes a ``WinningHand`` and returns its **witnesses**: a list
of tuples of group indices, one per way the pattern is made (J-6.3); an empty
list means the pattern does not apply.  Whole-hand patterns return
``[h.all]`` (every group, so the winning tile and every meld are in the
witness); patterns about the win itself (P01, P03, ...) return ``[()]``.
Patterns marked ``each`` (P11 老资格, P16 姊妹付) count once per witness;
every other pattern counts once, doubled when *any* of its witnesses is
concealed (J-6.3).  Points, doubling and the J-7 exclusions are rule-set data
in :class:`caishen.sim.rules.jiating.JiatingRules`, not here.

Terms (J-8): a *set* is a run or a triplet/kong of the reading (melds
included); "suited" = m/p/s; a *triplet* includes kongs.  Jiating has no
chow (J-3.1), so every run is concealed.
"""

from __future__ import annotations

from dataclasses import dataclass
from itertools import combinations, product
from typing import Callable, NamedTuple, Sequence

import numpy as np

from caishen.sim import engine as _E
from caishen.sim import hand as _hand
from caishen.sim import readings as _readings
from caishen.sim.rules.jiating import records as _JR
from caishen.sim.rules import jiating as _J
from caishen.sim.rules.jiating import DEFAULT_RULES, JiatingRules

# group sources: where a group's tiles came from
SOURCE_HAND = "hand"
SOURCE_PONG = "pong"
SOURCE_KONG_EXPOSED = "kong_exposed"
SOURCE_KONG_ADDED = "kong_added"
SOURCE_KONG_CONCEALED = "kong_concealed"
#: sources whose tiles were all the winner's own draws (J-6.3)
OWN_SOURCES = frozenset({SOURCE_HAND, SOURCE_KONG_CONCEALED})
#: sources of claimed melds (they break 门清, P07)
CLAIMED_SOURCES = frozenset({SOURCE_PONG, SOURCE_KONG_EXPOSED, SOURCE_KONG_ADDED})
KONG_SOURCES = frozenset({SOURCE_KONG_EXPOSED, SOURCE_KONG_ADDED, SOURCE_KONG_CONCEALED})

WINDS = (27, 28, 29, 30)  # 东 南 西 北
DRAGONS = (31, 32, 33)  # 白 发 中
XIAOSIXI_KINDS = (27, 28, 29, 30, 33)  # 东 南 西 北 中 (P45)
KIND_4M = 3  # P28 万事如意

WIN_TYPES = ("self_draw", "discard", "robbed_kong")
DECLARATIONS = ("none", "jiating", "hard")
DIHU_MODES = ("dealer_ready_first_discard", "win_on_dealers_first_discard", "dealer_ready_undeclared")


class HandGroup(NamedTuple):
    """One group of a whole-hand reading.

    ``type``: ``"run"`` | ``"triplet"`` | ``"pair"`` (a kong is a triplet whose
    ``source`` is a kong); ``kind``: lowest kind of a run, else the kind;
    ``source``: ``"hand"`` (concealed tiles) or the meld type
    (``"pong"``, ``"kong_exposed"``, ``"kong_added"``, ``"kong_concealed"``).
    """

    type: str
    kind: int
    source: str


@dataclass(frozen=True)
class WinContext:
    """Facts about a win that do not depend on the reading.

    ``win_kind``: kind index of the winning tile; ``win_type``: one of
    :data:`WIN_TYPES`; ``replacement_draw``: won on a kong replacement draw
    (P18); ``declaration``: one of :data:`DECLARATIONS` (J-4); ``first_turn``:
    天胡 (P46, J-5.4); ``winner_is_dealer``; ``on_dealers_first_discard``: the
    winning tile was the dealer's first discard (P47 option ``dihu``);
    ``dealer_ready_after_first_discard``: the dealer was ready right after its
    first discard (P47 option ``dihu="dealer_ready_undeclared"``); ``waits``:
    kinds the hand waited on before the win (kinds whose four copies the
    winner already holds excluded), sorted; ``seen_of_win_kind``:
    copies of the winning kind visible to the winner before the win (own
    concealed tiles and melds, discards, exposed melds; P27); ``dihu``: the
    rule option ``JiatingRules.dihu``.
    """

    win_kind: int
    win_type: str
    replacement_draw: bool = False
    declaration: str = "none"
    first_turn: bool = False
    winner_is_dealer: bool = False
    on_dealers_first_discard: bool = False
    dealer_ready_after_first_discard: bool = False
    waits: tuple[int, ...] = ()
    seen_of_win_kind: int = 0
    dihu: str = "dealer_ready_first_discard"

    @property
    def self_draw(self) -> bool:
        """J-5.2: 自摸 (also 杠后开花 and 天胡); a robbed kong is not."""
        return self.win_type == "self_draw"

    @property
    def single_wait(self) -> bool:
        """The hand waited on exactly one kind (P02, P27, P28)."""
        return len(self.waits) == 1


def _rank(kind: int) -> int:
    return kind % 9 + 1


def _run_has_rank(kind: int, rank: int) -> bool:
    """A run starting at ``kind`` holds a tile of ``rank``."""
    r = _rank(kind)
    return r <= rank <= r + 2


class WinningHand:
    """One reading of the whole winning hand with one wait (J-5.3).

    ``form``: ``"standard"`` | ``"seven_pairs"``; ``groups``: tuple of
    :class:`HandGroup` (standard: the pair first, then the concealed sets,
    then the melds; seven pairs: the 7 pairs); ``wait``: index of the group
    the winning tile completes; ``ctx``: :class:`WinContext`.

    Derived (read-only): ``own[i]`` (J-6.3: group ``i``'s tiles all came from
    the winner's own draws), ``all`` (every index), ``pair``, ``runs``,
    ``triplets``, ``sets`` (index tuples), ``counts`` (list of 34 tile counts
    of the whole hand, kongs as 4), ``suits`` (suits 0..2 present),
    ``honors`` (any honor present), ``laoziga`` (indices of P11 triplets).
    """

    __slots__ = (
        "form", "groups", "wait", "ctx", "own", "all", "pair", "runs", "triplets",
        "sets", "counts", "suits", "honors", "laoziga", "n_melds", "_runs_by_suit", "_triplet_at",
    )

    def __init__(self, form: str, groups, wait: int, ctx: WinContext):
        self.form = form
        self.groups = tuple(groups)
        self.wait = int(wait)
        self.ctx = ctx
        self_draw = ctx.self_draw
        self.own = tuple(
            g.source in OWN_SOURCES and (self_draw or i != self.wait) for i, g in enumerate(self.groups)
        )
        self.all = tuple(range(len(self.groups)))
        self.pair = 0 if form == "standard" else None
        self.runs = tuple(i for i, g in enumerate(self.groups) if g.type == "run")
        self.triplets = tuple(i for i, g in enumerate(self.groups) if g.type == "triplet")
        self.sets = tuple(i for i, g in enumerate(self.groups) if g.type != "pair")
        counts = [0] * 34
        for g in self.groups:
            if g.type == "run":
                counts[g.kind] += 1
                counts[g.kind + 1] += 1
                counts[g.kind + 2] += 1
            elif g.type == "triplet":
                counts[g.kind] += 4 if g.source in KONG_SOURCES else 3
            else:
                counts[g.kind] += 2
        self.counts = counts
        self.suits = frozenset(k // 9 for k in range(27) if counts[k])
        self.honors = any(counts[27:])
        self.laoziga = tuple(
            i for i in self.triplets if self.groups[i].source in OWN_SOURCES and self.own[i]
        )
        self.n_melds = sum(1 for g in self.groups if g.source != SOURCE_HAND)
        self._runs_by_suit = tuple([i for i in self.runs if self.groups[i].kind // 9 == s] for s in range(3))
        self._triplet_at = {self.groups[i].kind: i for i in reversed(self.triplets)}

    def is_own(self, witness) -> bool:
        """J-6.3: every group of ``witness`` (indices) is the winner's own."""
        return all(self.own[i] for i in witness)

    def kind(self, i: int) -> int:
        return self.groups[i].kind

    def runs_in_suit(self, suit: int) -> list[int]:
        return self._runs_by_suit[suit]

    def triplets_in_suit(self, suit: int) -> list[int]:
        return [i for i in self.triplets if self.groups[i].kind // 9 == suit]

    def triplet_of(self, kind: int) -> int | None:
        """Index of a triplet (or kong) of ``kind``, None if there is none."""
        return self._triplet_at.get(kind)

    def __repr__(self) -> str:
        parts = ", ".join(f"{g.type}:{g.kind}:{g.source}" for g in self.groups)
        return f"WinningHand({self.form}, [{parts}], wait={self.wait})"


Witnesses = list[tuple[int, ...]]
_NONE: Witnesses = []
_WIN: Witnesses = [()]


def _yes(cond: bool) -> Witnesses:
    return _WIN if cond else _NONE


# ---------------------------------------------------------------- 2 points
def putong_hu(h: WinningHand) -> Witnesses:
    """P01 普通胡牌 (2): every win."""
    return _WIN


def jiating_hu(h: WinningHand) -> Witnesses:
    """P02 架听胡牌 (2): the winner holds a 架听 declaration (J-4.1, or a hard
    one, J-4.3) and the hand waited on exactly one kind."""
    return _yes(h.ctx.declaration != "none" and h.ctx.single_wait)


def zimo(h: WinningHand) -> Witnesses:
    """P03 自摸 (2): the win is a self-draw (also 杠后开花 and 天胡, J-5.4)."""
    return _yes(h.ctx.self_draw)


def bian_san_qi(h: WinningHand) -> Witnesses:
    """P04 边三七 (2, 暗x2): the winning tile is the 3 of a 1-2-3 or the 7 of a
    7-8-9 run, read as an edge wait.  Witness: that run."""
    g = h.groups[h.wait]
    if g.type != "run" or g.kind >= 27:
        return _NONE
    r, w = _rank(g.kind), _rank(h.ctx.win_kind)
    return [(h.wait,)] if (r == 1 and w == 3) or (r == 7 and w == 7) else _NONE


def zhongxin_wu(h: WinningHand) -> Witnesses:
    """P05 中心五 (2, 暗x2): the winning tile is the 5 in the middle of a 4-5-6
    run, read as a closed wait.  Witness: that run."""
    g = h.groups[h.wait]
    if g.type == "run" and _rank(g.kind) == 4 and h.ctx.win_kind == g.kind + 1:
        return [(h.wait,)]
    return _NONE


def que_yimen(h: WinningHand) -> Witnesses:
    """P06 缺一门 (2, 暗x2): tiles of exactly two of the three suits (honors
    allowed).  Whole-hand witness (J-6.3: the seed's 所有牌型)."""
    return [h.all] if len(h.suits) == 2 else _NONE


def menqing(h: WinningHand) -> Witnesses:
    """P07 门清 (2): no claimed pong or claimed/added kong (concealed kongs allowed)."""
    return _yes(all(g.source not in CLAIMED_SOURCES for g in h.groups))


# ---------------------------------------------------------------- 4 points
def banlong(h: WinningHand) -> Witnesses:
    """P08 半龙 (4, 暗x2): two runs of one suit covering six consecutive ranks
    (123+456, 234+567, 345+678, 456+789).  Witness: the two runs."""
    out = []
    for i in h.runs:
        for j in h.runs:
            if h.kind(j) == h.kind(i) + 3 and h.kind(i) // 9 == h.kind(j) // 9:
                out.append((i, j))
    return out


def laoshao_fu(h: WinningHand) -> Witnesses:
    """P09 老少付 (4, 暗x2): runs 1-2-3 and 7-8-9 of one suit."""
    return [
        (i, j) for i in h.runs for j in h.runs
        if _rank(h.kind(i)) == 1 and h.kind(j) == h.kind(i) + 6
    ]


def qing_san_fu(h: WinningHand) -> Witnesses:
    """P10 清三付 (4, 暗x2): three runs of one suit (any three)."""
    out: Witnesses = []
    for s in range(3):
        out.extend(combinations(h.runs_in_suit(s), 3))
    return out


# ---------------------------------------------------------------- 6 points
def laoziga(h: WinningHand) -> Witnesses:
    """P11 老资格 (6 each): each concealed triplet or concealed kong whose tiles
    were all self-drawn; a triplet completed by a discard win does not count.
    One witness per such triplet (counted each)."""
    return [(i,) for i in h.laoziga]


# ---------------------------------------------------------------- 8 points
def qing_si_fu(h: WinningHand) -> Witnesses:
    """P12 清四付 (8, 暗x2): four runs of one suit."""
    for s in range(3):
        rs = h.runs_in_suit(s)
        if len(rs) == 4:
            return [tuple(rs)]
    return _NONE


# --------------------------------------------------------------- 10 points
def _runs_with_five(h: WinningHand, suit: int) -> list[int]:
    return [i for i in h.runs_in_suit(suit) if _run_has_rank(h.kind(i), 5)]


def san_fu_wu(h: WinningHand) -> Witnesses:
    """P13 三付五 (10, 暗x2): a run containing a 5 in each of the three suits."""
    return list(product(*(_runs_with_five(h, s) for s in range(3))))


def menqing_zimo_hu(h: WinningHand) -> Witnesses:
    """P14 门清自摸胡 (10): 门清 (P07) and a self-draw."""
    return _yes(h.ctx.self_draw and bool(menqing(h)))


def san_fu_tong(h: WinningHand) -> Witnesses:
    """P15 三付同 (10, 暗x2): the same run (same ranks) in all three suits."""
    out: Witnesses = []
    if not all(h.runs_in_suit(s) for s in range(3)):
        return out
    for r in range(1, 8):
        per_suit = [[i for i in h.runs_in_suit(s) if _rank(h.kind(i)) == r] for s in range(3)]
        out.extend(product(*per_suit))
    return out


def zimei_fu(h: WinningHand) -> Witnesses:
    """P16 姊妹付 (10 each, 暗x2): two identical runs of one suit; each such pair
    counts.  Identical runs are paired disjointly (``n`` equal runs make
    ``n // 2`` pairs), concealed runs first."""
    by_kind: dict[int, list[int]] = {}
    for i in h.runs:
        by_kind.setdefault(h.kind(i), []).append(i)
    out: Witnesses = []
    for idx in by_kind.values():
        idx.sort(key=lambda i: not h.own[i])
        out.extend((idx[2 * p], idx[2 * p + 1]) for p in range(len(idx) // 2))
    return out


def _fufu(h: WinningHand, ranks: tuple[int, ...]) -> Witnesses:
    """Pair is a suited tile of one of ``ranks`` and every set holds one."""
    if h.form != "standard":
        return _NONE
    pk = h.kind(h.pair)
    if pk >= 27 or _rank(pk) not in ranks:
        return _NONE
    for i in h.sets:
        g = h.groups[i]
        if g.kind >= 27:
            return _NONE
        if g.type == "run":
            if not any(_run_has_rank(g.kind, r) for r in ranks):
                return _NONE
        elif _rank(g.kind) not in ranks:
            return _NONE
    return [h.all]


def fufu_jian(h: WinningHand) -> Witnesses:
    """P17 付付尖 (10, 暗x2): the pair is a suited 3 or 7 and every set holds a
    suited 3 or 7.  Whole-hand witness."""
    return _fufu(h, (3, 7))


def ganghou_kaihua(h: WinningHand) -> Witnesses:
    """P18 杠后开花 (10): win on a kong replacement draw (P03 自摸 adds 2)."""
    return _yes(h.ctx.self_draw and h.ctx.replacement_draw)


def qiang_gang_hu(h: WinningHand) -> Witnesses:
    """P19 抢杠胡 (10): win by robbing an added kong (J-3.3)."""
    return _yes(h.ctx.win_type == "robbed_kong")


def si_he_yi(h: WinningHand) -> Witnesses:
    """P20 四合一 (10, 暗x2): all four copies of a suited kind in the hand, not
    as a kong: three as a triplet (a pong counts), one in a run.
    Witness: the triplet and the run (暗四合一 when both are concealed)."""
    out = []
    for t in h.triplets:
        g = h.groups[t]
        if g.kind >= 27 or g.source in KONG_SOURCES:
            continue
        out.extend((t, r) for r in h.runs if 0 <= g.kind - h.kind(r) <= 2)
    return out


def tiandi_peng(h: WinningHand) -> Witnesses:
    """P21 天地碰 (10, 暗x2): triplets of both the 1 and the 9 of one suit."""
    out = []
    for s in range(3):
        a, b = h.triplet_of(9 * s), h.triplet_of(9 * s + 8)
        if a is not None and b is not None:
            out.append((a, b))
    return out


def qing_san_dui(h: WinningHand) -> Witnesses:
    """P22 清三对 (10, 暗x2): three triplets of one suit, or three honor
    triplets (对 = triplet here, ambiguity 4; 风 = any honor, ambiguity 7)."""
    out: Witnesses = []
    for s in range(3):
        out.extend(combinations(h.triplets_in_suit(s), 3))
    honors = [i for i in h.triplets if h.kind(i) >= 27]
    out.extend(combinations(honors, 3))
    return out


# --------------------------------------------------------------- 20 points
def hun_yise(h: WinningHand) -> Witnesses:
    """P23 混一色 (20, 暗x2): one suit plus honors (both present)."""
    return [h.all] if len(h.suits) == 1 and h.honors else _NONE


def yingzi(h: WinningHand) -> Witnesses:
    """P24 硬子 (20, 暗x2): the winner made a hard declaration (J-4.2).
    Whole-hand witness: 暗硬子 when self-drawn, 明硬子 on a discard."""
    return [h.all] if h.ctx.declaration == "hard" else _NONE


def qidui(h: WinningHand) -> Witnesses:
    """P25 七对子 (20, 暗x2): seven pairs (self-drawn: 40, 七对自摸胡)."""
    return [h.all] if h.form == "seven_pairs" else _NONE


def si_fu_wu(h: WinningHand) -> Witnesses:
    """P26 四付五 (20, 暗x2): four runs each containing a 5, all three suits
    present among them."""
    rs = [i for i in h.runs if _run_has_rank(h.kind(i), 5) and h.kind(i) < 27]
    if len(rs) == 4 and len({h.kind(i) // 9 for i in rs}) == 3:
        return [tuple(rs)]
    return _NONE


def juezhang(h: WinningHand) -> Witnesses:
    """P27 绝张子 (20, 暗x2): single wait on a kind whose other three copies are
    all visible to the winner (own hand and melds, discards, exposed melds).
    Witness: the winning tile's group (暗绝张子 when self-drawn)."""
    c = h.ctx
    if c.single_wait and c.waits[0] == c.win_kind and c.seen_of_win_kind == 3:
        return [(h.wait,)]
    return _NONE


def wanshi_ruyi(h: WinningHand) -> Witnesses:
    """P28 万事如意 (20): single wait on 4m, won by self-draw."""
    c = h.ctx
    return _yes(c.self_draw and c.single_wait and c.waits[0] == KIND_4M and c.win_kind == KIND_4M)


def quan_qiu_ren(h: WinningHand) -> Witnesses:
    """P29 全求人 (20): four melded sets (concealed kongs included), one tile
    left in hand (discard or self-draw)."""
    return _yes(h.n_melds == 4)


def duidui_hu(h: WinningHand) -> Witnesses:
    """P30 对对胡 (20, 暗x2): four triplets (kongs included) and a pair.
    Whole-hand witness."""
    return [h.all] if h.form == "standard" and len(h.triplets) == 4 else _NONE


def yitiaolong(h: WinningHand) -> Witnesses:
    """P31 一条龙 (20, 暗x2): runs 1-2-3, 4-5-6, 7-8-9 of one suit."""
    out: Witnesses = []
    for s in range(3):
        per = [[i for i in h.runs if h.kind(i) == 9 * s + r] for r in (0, 3, 6)]
        out.extend(product(*per))
    return out


def an_san_kan(h: WinningHand) -> Witnesses:
    """P32 暗三坎 (20): (at least) three P11 老资格 triplets."""
    return _yes(len(h.laoziga) >= 3)


def si_he_er(h: WinningHand) -> Witnesses:
    """P33 四合二 (20, 暗x2): all four copies of a suited kind in the hand (not
    as a kong): two as the pair, two in two runs (e.g. 66667788).
    Witness: the pair and the two runs."""
    if h.form != "standard":
        return _NONE
    k = h.kind(h.pair)
    if k >= 27:
        return _NONE
    rs = [r for r in h.runs if 0 <= k - h.kind(r) <= 2]
    return [(h.pair, *c) for c in combinations(rs, 2)]


def san_qing_san_lian(h: WinningHand) -> Witnesses:
    """P34 三清三连 (20, 暗x2): triplets of three consecutive ranks in one suit."""
    out = []
    for k, i in h._triplet_at.items():
        if k < 27 and _rank(k) <= 7:
            j, m = h.triplet_of(k + 1), h.triplet_of(k + 2)
            if j is not None and m is not None:
                out.append((i, j, m))
    return out


def qing_si_dui(h: WinningHand) -> Witnesses:
    """P35 清四对 (20, 暗x2): four triplets of one suit."""
    for s in range(3):
        ts = h.triplets_in_suit(s)
        if len(ts) == 4:
            return [tuple(ts)]
    return _NONE


# --------------------------------------------------------------- 40 points
def fufu_yao(h: WinningHand) -> Witnesses:
    """P36 付付幺 (40, 暗x2): the pair is a suited 1 or 9 and every set holds a
    suited 1 or 9.  Whole-hand witness."""
    return _fufu(h, (1, 9))


def an_si_kan(h: WinningHand) -> Witnesses:
    """P37 暗四坎 (40): four P11 老资格 triplets."""
    return _yes(len(h.laoziga) >= 4)


def qidui_juezhang(h: WinningHand) -> Witnesses:
    """P38 七对绝张 (40, 暗x2): seven pairs including four of a kind, won on its
    fourth copy (self-drawn: 80, 七对暗绝张).  Whole-hand witness."""
    if h.form == "seven_pairs" and h.counts[h.ctx.win_kind] == 4:
        return [h.all]
    return _NONE


def san_dui_tong(h: WinningHand) -> Witnesses:
    """P39 三对同 (40, 暗x2): triplets of the same rank in all three suits."""
    out = []
    for k, i in h._triplet_at.items():
        if k < 9:
            j, m = h.triplet_of(k + 9), h.triplet_of(k + 18)
            if j is not None and m is not None:
                out.append((i, j, m))
    return out


def duidui_hu_jin_shi_peng(h: WinningHand) -> Witnesses:
    """P40 对对胡尽是碰 (40): 对对胡 with no kong in which every triplet is a claimed
    pong, except at most one that the winning tile completes (ambiguity 6: the
    seed's three pongs, two pairs in hand, won on one of them)."""
    if h.form != "standard" or len(h.triplets) != 4:
        return _NONE
    if any(h.groups[i].source in KONG_SOURCES for i in h.triplets):
        return _NONE
    not_pongs = [i for i in h.triplets if h.groups[i].source != SOURCE_PONG]
    return _yes(not not_pongs or not_pongs == [h.wait])


# --------------------------------------------------------------- 60 points
def san_da_yuan(h: WinningHand) -> Witnesses:
    """P41 三大元 (60, 暗x2): triplets of 中, 发 and 白."""
    t = [h.triplet_of(k) for k in DRAGONS]
    return _NONE if None in t else [tuple(t)]


def qingyise(h: WinningHand) -> Witnesses:
    """P42 清一色 (60, 暗x2): one suit, no honors.  Whole-hand witness."""
    return [h.all] if len(h.suits) == 1 and not h.honors else _NONE


def fufu_quan(h: WinningHand) -> Witnesses:
    """P43 付付全 (60, 暗x2): the pair is a suited tile of rank r and every set
    holds a suited tile of rank r.  Whole-hand witness."""
    if h.form != "standard" or h.kind(h.pair) >= 27:
        return _NONE
    return _fufu(h, (_rank(h.kind(h.pair)),))


# --------------------------------------------------------------- 80 points
def yaoyao_hu(h: WinningHand) -> Witnesses:
    """P44 幺幺胡 (80, 暗x2): every set is a triplet of a suited 1 or 9 and the
    pair is a suited 1 or 9.  Whole-hand witness."""
    if h.form != "standard":
        return _NONE
    for i in h.all:
        g = h.groups[i]
        if g.type == "run" or g.kind >= 27 or _rank(g.kind) not in (1, 9):
            return _NONE
    return [h.all]


# -------------------------------------------------------------- 100 points
def xiao_si_xi(h: WinningHand) -> Witnesses:
    """P45 小四喜 (100, 暗x2): triplets of three kinds among 东 南 西 北 中."""
    ts = [i for i in h.triplets if h.kind(i) in XIAOSIXI_KINDS]
    return list(combinations(ts, 3))


# -------------------------------------------------------------- 200 points
def tianhu(h: WinningHand) -> Witnesses:
    """P46 天胡 (200): the dealer wins on the 14 dealt tiles (J-5.4)."""
    return _yes(h.ctx.first_turn and h.ctx.winner_is_dealer)


def dihu(h: WinningHand) -> Witnesses:
    """P47 地胡 (200): by default (option ``dihu="dealer_ready_first_discard"``,
    ambiguity 3) the dealer was ready right after the first discard, declared
    hard (J-4.2), and wins; with ``"win_on_dealers_first_discard"`` a
    non-dealer wins on the dealer's first discard; with
    ``"dealer_ready_undeclared"`` the dealer that was ready right after its
    first discard wins, declared or not."""
    c = h.ctx
    if c.dihu == "dealer_ready_first_discard":
        return _yes(c.winner_is_dealer and c.declaration == "hard")
    if c.dihu == "dealer_ready_undeclared":  # a hard declaration implies the dealer was ready
        return _yes(c.winner_is_dealer and (c.declaration == "hard" or c.dealer_ready_after_first_discard))
    return _yes(not c.winner_is_dealer and c.win_type == "discard" and c.on_dealers_first_discard)


def feng_hu(h: WinningHand) -> Witnesses:
    """P48 风胡 (200): all tiles are honors (风张 = 东南西北白发中)."""
    return _yes(not h.suits)


def kankan_hu(h: WinningHand) -> Witnesses:
    """P49 坎坎胡 (200): four P11 老资格 triplets (concealed kongs count), the
    winning tile completes the pair (单钓, "听对子"), won by self-draw."""
    return _yes(h.form == "standard" and len(h.laoziga) == 4 and h.wait == h.pair
                and h.ctx.self_draw)


def da_si_xi(h: WinningHand) -> Witnesses:
    """P50 大四喜 (200): triplets of 东 南 西 北."""
    t = [h.triplet_of(k) for k in WINDS]
    return _NONE if None in t else [tuple(t)]


class Pattern(NamedTuple):
    """A J-8 pattern: ID, Chinese name, predicate, and whether it counts per witness."""

    id: str
    name: str
    predicate: Callable[[WinningHand], Witnesses]
    each: bool = False


#: every J-8 pattern in ID order
PATTERNS: tuple[Pattern, ...] = (
    Pattern("P01", "普通胡牌", putong_hu),
    Pattern("P02", "架听胡牌", jiating_hu),
    Pattern("P03", "自摸", zimo),
    Pattern("P04", "边三七", bian_san_qi),
    Pattern("P05", "中心五", zhongxin_wu),
    Pattern("P06", "缺一门", que_yimen),
    Pattern("P07", "门清", menqing),
    Pattern("P08", "半龙", banlong),
    Pattern("P09", "老少付", laoshao_fu),
    Pattern("P10", "清三付", qing_san_fu),
    Pattern("P11", "老资格", laoziga, each=True),
    Pattern("P12", "清四付", qing_si_fu),
    Pattern("P13", "三付五", san_fu_wu),
    Pattern("P14", "门清自摸胡", menqing_zimo_hu),
    Pattern("P15", "三付同", san_fu_tong),
    Pattern("P16", "姊妹付", zimei_fu, each=True),
    Pattern("P17", "付付尖", fufu_jian),
    Pattern("P18", "杠后开花", ganghou_kaihua),
    Pattern("P19", "抢杠胡", qiang_gang_hu),
    Pattern("P20", "四合一", si_he_yi),
    Pattern("P21", "天地碰", tiandi_peng),
    Pattern("P22", "清三对", qing_san_dui),
    Pattern("P23", "混一色", hun_yise),
    Pattern("P24", "硬子", yingzi),
    Pattern("P25", "七对子", qidui),
    Pattern("P26", "四付五", si_fu_wu),
    Pattern("P27", "绝张子", juezhang),
    Pattern("P28", "万事如意", wanshi_ruyi),
    Pattern("P29", "全求人", quan_qiu_ren),
    Pattern("P30", "对对胡", duidui_hu),
    Pattern("P31", "一条龙", yitiaolong),
    Pattern("P32", "暗三坎", an_san_kan),
    Pattern("P33", "四合二", si_he_er),
    Pattern("P34", "三清三连", san_qing_san_lian),
    Pattern("P35", "清四对", qing_si_dui),
    Pattern("P36", "付付幺", fufu_yao),
    Pattern("P37", "暗四坎", an_si_kan),
    Pattern("P38", "七对绝张", qidui_juezhang),
    Pattern("P39", "三对同", san_dui_tong),
    Pattern("P40", "对对胡尽是碰", duidui_hu_jin_shi_peng),
    Pattern("P41", "三大元", san_da_yuan),
    Pattern("P42", "清一色", qingyise),
    Pattern("P43", "付付全", fufu_quan),
    Pattern("P44", "幺幺胡", yaoyao_hu),
    Pattern("P45", "小四喜", xiao_si_xi),
    Pattern("P46", "天胡", tianhu),
    Pattern("P47", "地胡", dihu),
    Pattern("P48", "风胡", feng_hu),
    Pattern("P49", "坎坎胡", kankan_hu),
    Pattern("P50", "大四喜", da_si_xi),
)
PATTERN_IDS: tuple[str, ...] = tuple(p.id for p in PATTERNS)
PATTERN_NAMES: dict[str, str] = {p.id: p.name for p in PATTERNS}


# ---------------------------------------------------------------- scoring one reading (J-6.1, J-6.3, J-7)
def score_hand(h: WinningHand, rules: JiatingRules | None = None) -> tuple[int, dict[str, int]]:
    """``(P, patterns)`` of one reading and wait (J-6.1, J-6.3, J-7).

    Patterns with 0 points are off.  Exclusions act on the patterns whose
    definition holds; an ``each`` pattern sums its witnesses; any other
    pattern is multiplied by ``concealed_factor`` when it is a doubled pattern
    and one of its witnesses is the winner's own (J-6.3).
    """
    r = rules or DEFAULT_RULES
    pts, excl, doubled = dict(r.pattern_points), dict(r.exclusions), frozenset(r.doubled_patterns)
    hits: dict[str, tuple[Pattern, list]] = {}
    for pat in PATTERNS:
        if pts[pat.id] == 0:
            continue
        w = pat.predicate(h)
        if w:
            hits[pat.id] = (pat, w)
    removed: set[str] = set()
    for pid in hits:
        removed.update(excl.get(pid, ()))
    f = r.concealed_factor
    out: dict[str, int] = {}
    for pid, (pat, ws) in hits.items():
        if pid in removed:
            continue
        base = pts[pid]
        dbl = pid in doubled
        if pat.each:
            out[pid] = sum(base * (f if dbl and h.is_own(w) else 1) for w in ws)
        else:
            out[pid] = base * (f if dbl and any(h.is_own(w) for w in ws) else 1)
    return sum(out.values()), out


def winning_hands(reading, melds: Sequence[tuple[str, int]], ctx: WinContext) -> list[WinningHand]:
    """Every (reading, wait) view of one concealed reading (J-5.3).

    ``reading``: a :class:`caishen.sim.readings.Reading` (or any object with ``form`` and
    ``groups`` of ``type``/``kind``) of the concealed tiles including the
    winning tile; ``melds``: ``[(type name, kind), ...]`` added as sets.
    One view per distinct group (type, kind) that holds the winning tile.
    """
    concealed = [HandGroup(g.type, int(g.kind), SOURCE_HAND) for g in reading.groups]
    groups = concealed + [HandGroup("triplet", int(k), t) for t, k in melds]
    w = ctx.win_kind
    out = []
    seen = set()
    for i, g in enumerate(concealed):
        holds = (g.kind <= w <= g.kind + 2) if g.type == "run" else g.kind == w
        if holds and (g.type, g.kind) not in seen:
            seen.add((g.type, g.kind))
            out.append(WinningHand(reading.form, groups, i, ctx))
    return out


# ---------------------------------------------------------------- one case, several winners, a batch
@dataclass(frozen=True)
class RefWin:
    """The reference's scored win: ``win``, ``patterns`` (ID order), ``P``, ``G``, ``scores``,
    the chosen :class:`WinningHand` ``hand`` and the :class:`WinContext` (None when no win)."""

    win: bool
    patterns: dict[str, int]
    P: int
    G: int
    scores: list[int]
    hand: WinningHand | None
    context: WinContext | None


def evaluate(case: dict, rules: JiatingRules | None = None) -> RefWin:
    """Score one scoring-vector case the slow obvious way (J-5, J-6, J-7).

    The case is parsed and checked by the package (``caishen.sim.rules.jiating._parse_case``,
    decision D11); every reading (:func:`caishen.sim.readings.readings`) and wait is scored
    and the best kept (highest ``P``, ties to the largest sorted pattern list, D6).
    """
    r = rules or DEFAULT_RULES
    c = _J._parse_case(case)
    full = c["concealed"].copy()
    full[c["win_kind"]] += 1
    rds = _readings.readings(full.astype(np.uint8))
    if not rds:
        return RefWin(False, {}, 0, 0, [0, 0, 0, 0], None, None)
    waits = tuple(k for k in _hand.waits(c["concealed"].astype(np.uint8)) if c["own"][k] < 4)
    ctx = WinContext(
        win_kind=c["win_kind"], win_type=c["win_type"], replacement_draw=c["replacement"],
        declaration=c["declaration"], first_turn=c["first_turn"], winner_is_dealer=c["winner"] == c["dealer"],
        on_dealers_first_discard=c["on_first"], dealer_ready_after_first_discard=c["dealer_ready"], waits=waits,
        seen_of_win_kind=int(c["own"][c["win_kind"]] + c["seen"][c["win_kind"]]), dihu=r.dihu,
    )
    best = None
    for rd in rds:
        for h in winning_hands(rd, c["melds"], ctx):
            P, pats = score_hand(h, r)
            key = (P, sorted(pats.items()))
            if best is None or key > best[0]:
                best = (key, h, pats)
    (P, _), h, pats = best
    G = _J.kong_points(c["melds"], r)
    if c["win_type"] == "self_draw":
        scores = _J.settle_self_draw(c["winner"], P, G, dealer=c["dealer"], streak=c["streak"], rules=r)
    else:
        scores = _J.settle_discard(c["discarder"], [(c["winner"], P, G)], dealer=c["dealer"],
                                   streak=c["streak"], rules=r)
    patterns = {pid: pats[pid] for pid in PATTERN_IDS if pid in pats}
    return RefWin(True, patterns, P, G, scores, h, ctx)


def score(case: dict, rules: JiatingRules | None = None) -> dict:
    """``{id, win, patterns, P, G, scores}`` of one case (as ``caishen.sim.rules.jiating.score``)."""
    res = evaluate(case, rules)
    return {"id": case.get("id"), "win": res.win, "patterns": res.patterns, "P": res.P, "G": res.G,
            "scores": res.scores}


def score_discard_winners(cases: Sequence[dict], rules: JiatingRules | None = None) -> dict:
    """Several winners of one discard (J-3.4): ``{"wins": [score(case)...], "scores": [int] * 4}``.

    The package's checks across the winners first (``caishen.sim.rules.jiating._parse_discard_winners``
    raises for mismatched or together impossible cases), then each case by :func:`evaluate`;
    a case that is not a legal win raises ``ValueError``.
    """
    r = rules or DEFAULT_RULES
    parsed = _J._parse_discard_winners(cases)  # the package's checks across the winners (D11 item 19)
    results = [evaluate(c, r) for c in cases]
    for c, res in zip(parsed, results):
        if not res.win:
            raise ValueError(f"case {c['id']!r} is not a legal win (J-5.1)")
    first = parsed[0]
    winners = [(c["winner"], res.P, res.G) for c, res in zip(parsed, results)]
    scores = _J.settle_discard(first["discarder"], winners, dealer=first["dealer"], streak=first["streak"], rules=r)
    wins = [{"id": c["id"], "win": True, "patterns": res.patterns, "P": res.P, "G": res.G,
             "scores": _J.settle_discard(c["discarder"], [(c["winner"], res.P, res.G)], dealer=c["dealer"],
                                         streak=c["streak"], rules=r)}
            for c, res in zip(parsed, results)]
    return {"wins": wins, "scores": scores}


def _patterns_text(patterns: dict[str, int]) -> str:
    return ",".join(f"{pid}:{pts}" for pid, pts in patterns.items())


def finish_records(rules: JiatingRules, rec: np.ndarray) -> dict[str, np.ndarray]:
    """The J-9 record columns of the engine's records (``RECORD_DTYPE[n]``), every win scored by this reference, hand by hand.

    The engine's columns are copied as ``caishen.sim.rules.jiating.records.finish_records`` copies
    them; each recorded win becomes a vector case (``caishen.sim.rules.jiating.records.win_cases``)
    scored by :func:`score` (several winners: :func:`score_discard_winners`).  Raises
    ``RuntimeError`` if a recorded win is not a legal win or the scores do not sum to zero.
    """
    rec = np.asarray(rec)
    n = len(rec)
    out: dict[str, np.ndarray] = {}
    for name, dt in _JR.COLUMNS:
        if name in _JR._ENGINE_COPIED:
            out[name] = _E.record_column(rec, name).astype(dt)
        elif dt == np.dtype(object):
            out[name] = np.full(n, "", dtype=object)
        else:
            out[name] = np.zeros(n, dt)
    for h in np.flatnonzero(rec["n_winners"] > 0):
        cases = _JR.win_cases(rec[h])
        try:
            if len(cases) == 1:
                results = [score(cases[0], rules)]
                scores = results[0]["scores"]
            else:
                multi = score_discard_winners(cases, rules)
                results, scores = multi["wins"], multi["scores"]
        except ValueError as e:
            raise RuntimeError(f"hand {h}: the scorer rejects a recorded win ({e}); cases: {cases}") from None
        if sum(scores) != 0:
            raise RuntimeError(f"hand {h}: scores {scores} do not sum to zero (J-6.5)")
        for case, res in zip(cases, results):
            if not res["win"]:
                raise RuntimeError(f"hand {h}: the scorer says the recorded win is no win (J-5.1): {case}")
            w = case["winner"]
            out[f"P_{w}"][h] = res["P"]
            out[f"G_{w}"][h] = res["G"]
            out[f"patterns_{w}"][h] = _patterns_text(res["patterns"])
            for p in range(4):
                if p != w and res["scores"][p] < 0:
                    out[f"pay_{p}_{w}"][h] = -res["scores"][p]
        for pid, pts in results[0]["patterns"].items():
            out[pid][h] = pts
        for s in range(4):
            out[f"score_{s}"][h] = scores[s]
    return out
