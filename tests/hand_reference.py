"""Slow, obvious pure-Python references for the hand kernels (tests only).

Nothing here shares code with :mod:`sim.hand` / :mod:`sim.tables`: the
distance is a memoised search over groups built around the lowest tile.
"""

from __future__ import annotations

from functools import lru_cache

SUITED = 27


def _runs_through(i: int):
    """(lo, lo+1, lo+2) runs of the suit of ``i`` that contain ``i``."""
    if i >= SUITED:
        return []
    base = i - i % 9
    return [(lo, lo + 1, lo + 2) for lo in range(i - 2, i + 1) if base <= lo and lo + 2 <= base + 8]


@lru_cache(maxsize=None)
def distance(nat: tuple, sets: int, pair: int) -> int:
    """Fewest tiles to add to the natural tiles ``nat`` (34 counts) so that a
    sub-multiset of them is ``sets`` sets plus ``pair`` (0/1) pairs.

    Targets may use any number of copies of a kind (jokers may be fifth copies).
    """
    i = next((t for t in range(34) if nat[t]), -1)
    if i < 0:
        return 3 * sets + 2 * pair
    c = list(nat)
    best = None

    def take(changes, cost, s, p):
        nonlocal best
        c2 = list(c)
        for t, u in changes:
            c2[t] -= u
        v = cost + distance(tuple(c2), s, p)
        if best is None or v < best:
            best = v

    take([(i, 1)], 0, sets, pair)  # this copy is not used by the target
    for u in range(1, min(2, c[i]) + 1):
        if pair:
            take([(i, u)], 2 - u, sets, 0)
    if sets:
        for u in range(1, min(3, c[i]) + 1):
            take([(i, u)], 3 - u, sets - 1, pair)
        for run in _runs_through(i):
            # members below i are missing (all lower naturals are gone); above: use if held
            for mask in range(4):
                changes = [(i, 1)]
                cost = sum(1 for t in run if t < i)
                ok = True
                for b, t in enumerate(t for t in run if t > i):
                    if mask >> b & 1:
                        if c[t] == 0:
                            ok = False
                        changes.append((t, 1))
                    else:
                        cost += 1
                if ok:
                    take(changes, cost, sets - 1, pair)
    return best


def split_jokers(counts, joker):
    nat = [int(x) for x in counts]
    k = 0
    if joker >= 0:
        k = nat[joker]
        nat[joker] = 0
    return tuple(nat), k


def shanten_standard(counts, joker=-1) -> int:
    nat, k = split_jokers(counts, joker)
    n = sum(int(x) for x in counts)
    return max(distance(nat, (n - 1) // 3, 1) - k, 0) - 1


def shanten_seven_pairs(counts, joker=-1) -> int:
    """6 - the most pairs that 13/14 tiles can hold (four of a kind = two pairs)."""
    nat, k = split_jokers(counts, joker)
    pairs = 0
    singles = 0
    for c in nat:
        while c >= 2:
            pairs += 1
            c -= 2
        if c == 1:
            singles += 1
    while k and singles:  # a joker completes a single
        k -= 1
        singles -= 1
        pairs += 1
    while k >= 2:  # two jokers are a pair
        k -= 2
        pairs += 1
    return 6 - min(pairs, 7)


def shanten(counts, joker=-1) -> int:
    s = shanten_standard(counts, joker)
    if sum(int(x) for x in counts) >= 13:
        s = min(s, shanten_seven_pairs(counts, joker))
    return s


def is_win(counts, joker=-1) -> bool:
    n = sum(int(x) for x in counts)
    if n % 3 != 2:
        return False
    if n == 14 and shanten_seven_pairs(counts, joker) == -1:
        return True
    return shanten_standard(counts, joker) == -1


def waits(counts, joker=-1) -> list[int]:
    out = []
    for t in range(34):
        if counts[t] < 4:
            c = list(counts)
            c[t] += 1
            if is_win(c, joker):
                out.append(t)
    return out


def is_baotou(counts13, joker) -> bool:
    nat, k = split_jokers(counts13, joker)
    n = sum(int(x) for x in counts13)
    return k >= 1 and distance(nat, (n - 1) // 3, 0) == k - 1


def standard_decompositions_no_joker(counts) -> set:
    """Every (pair, sorted sets) of a joker-free 3m+2 hand: choose the pair kind and
    which kinds hold a triplet; the runs are then forced, lowest rank first."""
    from itertools import product

    out = set()
    n = sum(counts)
    for p in range(34):
        if counts[p] < 2:
            continue
        c = list(counts)
        c[p] -= 2
        kinds = [t for t in range(34) if c[t] >= 3]
        for choice in product((0, 1), repeat=len(kinds)):
            d = list(c)
            sets = []
            for t, on in zip(kinds, choice):
                if on:
                    d[t] -= 3
                    sets.append(("triplet", t))
            ok = True
            for t in range(34):
                while d[t] > 0 and ok:
                    if t >= SUITED or t % 9 > 6 or d[t + 1] == 0 or d[t + 2] == 0:
                        ok = False
                        break
                    d[t] -= 1
                    d[t + 1] -= 1
                    d[t + 2] -= 1
                    sets.append(("run", t))
                if not ok:
                    break
            if ok and len(sets) == (n - 2) // 3:
                out.add((("pair", p), *sorted(sets)))
    return out
