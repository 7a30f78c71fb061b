"""Readings of a complete concealed hand: every decomposition into a pair and sets, or seven pairs.

Pure Python (a readable enumeration, not a kernel): :func:`readings` lists
each way a complete hand can be read (J-5.3 and K-6 choose the best one),
with the jokers' stand-ins.  The scoring kernels enumerate readings
themselves; this is what people and the tests' reference scorers use
(the slow references of the tests).
It is below the hand kernels it uses (:mod:`caishen.sim.hand`), which do not import it.
"""

from __future__ import annotations

from typing import NamedTuple

from caishen.sim.hand import _check_hand, _is_seven_pairs


class Group(NamedTuple):
    """One group of a reading.

    ``type``: ``"run" | "triplet" | "pair"``; ``kind``: the lowest kind of a
    run, the kind of a triplet or pair, or -1 for a group made only of
    jokers (it stands for anything; an all-joker set is reported as a
    triplet of kind -1); ``joker_as``: the kinds the jokers inside the group
    stand for, sorted (``()`` if none, and for kind -1 groups).
    """

    type: str
    kind: int
    joker_as: tuple[int, ...] = ()


class Reading(NamedTuple):
    """One decomposition of a complete concealed hand.

    ``form``: ``"standard"`` (groups = the pair, then the sets, sorted) or
    ``"seven_pairs"`` (groups = seven pairs; a four of a kind is two equal
    pairs).  Declared melds are not part of a reading.
    """

    form: str
    groups: tuple[Group, ...]

    @property
    def pair(self) -> Group | None:
        return self.groups[0] if self.form == "standard" else None

    @property
    def sets(self) -> tuple[Group, ...]:
        return self.groups[1:] if self.form == "standard" else ()


def _standard_readings(nat: list[int], k: int, m: int) -> set[tuple]:
    """All (pair, sets...) decompositions of natural counts ``nat`` plus ``k`` jokers."""
    found: set[tuple] = set()

    def rec(jk: int, sets_left: int, pair: Group | None, sets: list[Group]) -> None:
        i = next((t for t in range(34) if nat[t]), -1)
        if i < 0:
            need = 3 * sets_left + (2 if pair is None else 0)
            if jk != need:
                return
            p = pair if pair is not None else Group("pair", -1)
            allsets = sets + [Group("triplet", -1)] * sets_left
            found.add((p, *sorted(allsets)))
            return
        have = nat[i]
        # i in the pair
        if pair is None:
            for u in range(1, min(2, have) + 1):
                if 2 - u <= jk:
                    nat[i] -= u
                    rec(jk - (2 - u), sets_left, Group("pair", i, (i,) * (2 - u)), sets)
                    nat[i] += u
        if sets_left == 0:
            return
        # i in a triplet
        for u in range(1, min(3, have) + 1):
            if 3 - u <= jk:
                nat[i] -= u
                rec(jk - (3 - u), sets_left - 1, pair, sets + [Group("triplet", i, (i,) * (3 - u))])
                nat[i] += u
        # i in a run: lower members must be jokers (all lower naturals are used)
        if i < 27:
            r = i % 9
            for pos in range(3):  # position of i inside the run
                lo = i - pos
                if lo < i - r or lo + 2 > i - r + 8:
                    continue
                lower = list(range(lo, i))
                if len(lower) > jk:
                    continue
                higher = list(range(i + 1, lo + 3))
                # each higher member: natural (if held) or joker
                for mask in range(1 << len(higher)):
                    jokers = list(lower)
                    ok = True
                    used = []
                    for b, t in enumerate(higher):
                        if mask >> b & 1:
                            jokers.append(t)
                        elif nat[t] > 0:
                            used.append(t)
                        else:
                            ok = False
                            break
                    if not ok or len(jokers) > jk:
                        continue
                    nat[i] -= 1
                    for t in used:
                        nat[t] -= 1
                    rec(jk - len(jokers), sets_left - 1, pair, sets + [Group("run", lo, tuple(sorted(jokers)))])
                    nat[i] += 1
                    for t in used:
                        nat[t] += 1

    rec(k, m, None, [])
    return found


def readings(counts, joker: int = -1) -> list[Reading]:
    """Every reading of a complete 3m+2 concealed hand (for scoring), deduplicated.

    Standard readings: a pair and m sets, with what each joker stands for
    (:class:`Group`); a seven-pairs reading (14 tiles): natural pairs, each
    single completed by a joker, leftover jokers as all-joker pairs.  Empty
    list if the hand is not complete.  Slow pure Python: for scoring and
    tests, not for hot loops.  Raises ``ValueError`` for a 3m+1 hand.
    """
    c, j, n = _check_hand(counts, joker, "complete")
    k = int(c[j]) if j >= 0 else 0
    nat = [int(x) for x in c]
    if j >= 0:
        nat[j] = 0
    out = [Reading("standard", g) for g in sorted(_standard_readings(nat, k, (n - 1) // 3))]
    if n == 14 and _is_seven_pairs(c, j):
        pairs: list[Group] = []
        jk = k
        for t in range(34):
            pairs += [Group("pair", t)] * (nat[t] // 2)
            if nat[t] % 2:
                pairs.append(Group("pair", t, (t,)))
                jk -= 1
        pairs += [Group("pair", -1)] * (jk // 2)
        out.append(Reading("seven_pairs", tuple(sorted(pairs))))
    return out
