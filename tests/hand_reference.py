"""Slow, obvious pure-Python references for the hand kernels (tests only).

Nothing here shares code with :mod:`caishen.sim.hand` / :mod:`caishen.sim.tables`: the
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


def _choices(nat: tuple, sets: int, pair: int):
    """The ways to place the lowest held tile ``i`` of ``nat`` (which must hold one):
    ``(rest, added, sets_left, pair_left)`` with ``rest`` the held tiles still to
    place and ``added`` the kinds of the tiles the group needs added.

    ``i`` is left out of the target, or is in the pair, a triplet or a run.
    Run members below ``i`` are added (all lower held tiles are placed);
    members above may be held or added.
    """
    i = next(t for t in range(34) if nat[t])

    def rest(changes):
        c = list(nat)
        for t in changes:
            c[t] -= 1
        return tuple(c)

    yield rest([i]), [], sets, pair  # this copy is not used by the target
    if pair:
        for u in range(1, min(2, nat[i]) + 1):
            yield rest([i] * u), [i] * (2 - u), sets, 0
    if sets:
        for u in range(1, min(3, nat[i]) + 1):
            yield rest([i] * u), [i] * (3 - u), sets - 1, pair
        for run in _runs_through(i):
            above = [t for t in run if t > i]
            for mask in range(1 << len(above)):
                held = [i] + [t for b, t in enumerate(above) if mask >> b & 1]
                if all(nat[t] > 0 for t in held):
                    yield rest(held), [t for t in run if t not in held], sets - 1, pair


@lru_cache(maxsize=None)
def _distance(nat: tuple, sets: int, pair: int) -> int:
    """:func:`distance` without a copy limit: a memoised search over :func:`_choices`.

    The groups made only of added tiles are the base case.
    """
    if not any(nat):
        return 3 * sets + 2 * pair
    return min(len(added) + _distance(rest, s, p) for rest, added, s, p in _choices(nat, sets, pair))


def _distance_capped(nat: tuple, sets: int, pair: int, room: list, bound: int) -> int:
    """:func:`distance` with a copy limit, or ``bound`` if it is not below ``bound``.

    ``room[t]``: copies of ``t`` that may still be added.  Branch and bound
    over :func:`_choices`: the distance without a limit is a lower bound (a
    limit can only make it larger), so a branch that cannot beat the best so
    far is cut.  The groups made only of added tiles (the base case) go to
    kinds that no group uses and no held tile is of: at most 14 kinds are
    used, so there are always enough, each with room 4.
    """
    if not any(nat):
        return min(3 * sets + 2 * pair, bound)
    best = bound
    options = sorted(
        ((len(added) + _distance(rest, s, p), rest, added, s, p) for rest, added, s, p in _choices(nat, sets, pair)),
        key=lambda o: o[0],
    )
    for low, rest, added, s, p in options:
        if low >= best:
            break
        if any(added.count(t) > room[t] for t in added):
            continue  # a fifth copy
        r2 = list(room)
        for t in added:
            r2[t] -= 1
        best = min(best, len(added) + _distance_capped(rest, s, p, r2, best - len(added)))
    return best


def distance(nat: tuple, sets: int, pair: int, cap: int | None = None) -> int:
    """Fewest tiles to add to the natural tiles ``nat`` (34 counts) so that a
    sub-multiset of them is ``sets`` sets plus ``pair`` (0/1) pairs.

    ``cap=None``: targets may use any number of copies of a kind (jokers may
    be fifth copies, K-2.1).  ``cap=4``: no kind may hold more than ``cap``
    copies after the adding (no joker: a fifth copy does not exist).
    """
    nat = tuple(int(x) for x in nat)
    if cap is None:
        return _distance(nat, sets, pair)
    return _distance_capped(nat, sets, pair, [cap - x for x in nat], 99)


def split_jokers(counts, joker):
    nat = [int(x) for x in counts]
    k = 0
    if joker >= 0:
        k = nat[joker]
        nat[joker] = 0
    return tuple(nat), k


def cap_of(joker) -> int | None:
    """The copy limit of the targets: none with a joker kind (a joker may be a
    fifth copy, K-2.1), 4 without (J-1.1: a kind has four tiles)."""
    return None if joker >= 0 else 4


def shanten_standard(counts, joker=-1) -> int:
    nat, k = split_jokers(counts, joker)
    n = sum(int(x) for x in counts)
    return max(distance(nat, (n - 1) // 3, 1, cap_of(joker)) - k, 0) - 1


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
    return k >= 1 and distance(nat, (n - 1) // 3, 0, cap_of(joker)) == k - 1


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
