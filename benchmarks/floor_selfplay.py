"""The floor of random self-play: one numba loop doing only the work no engine can skip (issue 48 item 2).

``bench_games.py`` times it beside the engine's Kaihua random self-play
(``caishen.sim.selfplay.batch.play_batch(..., policies="random")``) in one
process; the ratio engine / floor per turn says how much of the engine's time
is its structure rather than the game.  A *turn* is a discard, the record's
``turns``, in both.

What the floor does, per hand, as the engine and its random bot do (same
stream, :mod:`caishen.sim.rng`; same hand kernels, :mod:`caishen.sim.hand`):

- shuffle the 136-tile wall, draw the dealer from the stream (the engine draws
  one per 16-hand match), deal 13 tiles each and the dealer's 14th (K-3.1);
- readiness: the shanten of the four dealt hands, then after each discard
  the engine's lower bound (a discard other than the drawn tile lowers the
  cached shanten bound by one; the shanten is computed only once the bound
  reaches 0), and after each kong;
- a draw (from the head, or the tail after a kong, K-5.4), and the win test
  when the drawer is ready (the tile completes a standard or seven-pairs
  hand holding fewer than three 财神, K-2.4);
- the legal actions of the turn: a discard of each kind held (only the 财神
  with three or more, K-2.4), a concealed kong of each four (not of the
  财神, not right after a chow or pong, only above the 20-tile reserve,
  K-2.3, K-4.1, K-3.4), the self-draw win; one chosen uniformly;
- the claims on a discard (none on a 财神, K-2.2): the discard win of each
  ready seat (its win test), pong and exposed kong, the next seat's chows;
  asked in priority order (win, then pong / kong, then chow, K-4.3), each
  seat once with all its options and ``pass``, one chosen uniformly; a
  pong or chow is followed by a discard without a draw (K-4.1), an exposed
  kong by a replacement draw;
- the end: a win, or the wall down to the reserve (K-3.4); the turns,
  winner and kind of win written per hand.

What it leaves out, all of it per event rather than per turn or a choice of
the engine that a redesign could remake: the scoring the engine's rule-set
win kernel does once a ready seat's hand is complete (its 爆头 shapes and
hand types; the floor asks only whether the hand is complete: the exponent
is needed only for a win taken), the payments and the 256-byte record (``RECORD_DTYPE`` of
``caishen.sim.rules.records``), the bans (passed
pong K-4.4, the swap call K-4.5, the 飘 circle K-9.2), the 爆头 force
(K-2.5), the 飘 chance statistic of ``play_batch``, the kong chain links,
and added kongs and robbing (K-5.2, K-5.5): an added kong needs a pong and
its fourth tile, rare under random play.

    python benchmarks/floor_selfplay.py [--hands 20000]   # the floor alone: hands/s, turns/hand
"""

from __future__ import annotations

import argparse
import time

import numpy as np
from numba import njit

from caishen.sim.borrow import borrowed
from caishen.sim.hand.kernels import _distance_codes, _scan, _seven_pairs_from, _shanten_from
from caishen.sim.rng import _rng_below, _rng_seed, _rng_shuffle
from caishen.sim.tables import hand_tables

#: Kaihua's facts the floor plays by (K-2.1 the 财神 is 白 = 5z; K-3.4 the reserve; K-2.4 the forced 飘)
JOKER = 31
RESERVE = 20
FORCE = 3
#: the options of a claim (bits), in the engine's action order
O_CHOW_LOW, O_CHOW_MID, O_CHOW_HIGH, O_PONG, O_KONG, O_WIN = 1, 2, 4, 8, 16, 32
#: how a hand ended (the floor's record)
END_DRAWN, END_SELF_DRAW, END_DISCARD = 0, 1, 2


@njit(cache=True, inline="always")
def _shanten_of(c, tabs):
    """Shanten of ``c: uint8[34]`` with the 财神 wild (``caishen.sim.hand._shanten``, inlined)."""
    cm, cp, cs, cz, n, k, pairs, singles = _scan(c, JOKER)
    return _shanten_from(cm, cp, cs, cz, n, k, pairs, singles, False, tabs)


@njit(cache=True, inline="always")
def _complete(c, tabs):
    """``c``'s 3m+2 tiles are a complete hand with fewer than three 财神 (``_is_win`` inlined; K-2.4)."""
    cm, cp, cs, cz, n, k, pairs, singles = _scan(c, JOKER)
    if k >= FORCE:
        return False
    if n == 14 and _seven_pairs_from(k, pairs, singles) == -1:
        return True
    return _distance_codes(cm, cp, cs, cz, (n - 1) // 3, 1, False, tabs) <= k


@njit(cache=True, inline="always")
def _draw(hands, wall, ready, s, pos, tabs):
    """Seat ``s`` draws ``wall[pos]``; whether it may win by self-draw (asked only when ready)."""
    t = wall[pos]
    hands[s, t] += 1
    return ready[s] != 0 and _complete(hands[s], tabs)


@njit(cache=True, inline="always")
def _nth_bit(bits, r):
    """The ``r``-th lowest set bit of ``bits`` (as a one-bit mask)."""
    for _ in range(r):
        bits &= bits - 1
    return bits & -bits


@njit(cache=True)
def _floor_batch(seed, n_hands, tabs, hands, wall, rng, bound, ready, melds, opts, legal, out):
    """Play ``n_hands`` random hands (module docstring); ``out: int64[n, 4]`` turns, winner (-1), end, decisions
    (own-turn choices and claim questions).

    The arrays are the caller's (borrowed: no reference counting in the loop): ``hands: uint8[4, 34]``,
    ``wall: uint8[136]``, ``rng: uint64[4]``, ``bound, ready, melds, opts: int64[4]``, ``legal:
    int64[64]``.  Returns the turns of all hands.
    """
    tabs, hands, wall, rng, bound, ready, melds, opts, legal, out = borrowed(
        (tabs, hands, wall, rng, bound, ready, melds, opts, legal, out))
    _rng_seed(rng, seed)
    total = 0
    for h in range(n_hands):
        for i in range(136):
            wall[i] = i // 4
        _rng_shuffle(rng, wall)
        dealer = _rng_below(rng, 4)
        hands[:] = 0
        for i in range(4):
            s = (dealer + i) % 4
            for j in range(13):
                hands[s, wall[13 * i + j]] += 1
            melds[s] = 0
        for s in range(4):
            bound[s] = _shanten_of(hands[s], tabs)
            ready[s] = bound[s] <= 0
        head, tail = 53, 135
        s = dealer
        drawn = np.int64(wall[52])
        can_win = _draw(hands, wall, ready, s, 52, tabs)
        claimed = False
        turns, winner, end, decisions = 0, -1, END_DRAWN, 0
        while True:
            # ---- the own turn of seat s (3m+2 tiles): the legal actions, one chosen
            hs = hands[s]
            n = 0
            if hs[JOKER] >= FORCE:  # K-2.4: only the 财神 may go
                legal[0] = JOKER
                n = 1
            else:
                for k in range(34):
                    legal[n] = k
                    n += hs[k] > 0
            left = tail - head + 1
            if not claimed and left > RESERVE and melds[s] < 4:
                for k in range(34):
                    if hs[k] == 4 and k != JOKER:
                        legal[n] = 34 + k
                        n += 1
            if can_win:
                legal[n] = 68
                n += 1
            a = legal[_rng_below(rng, n)]
            decisions += 1
            if a == 68:
                winner, end = s, END_SELF_DRAW
                break
            if a >= 34:  # concealed kong, then a replacement draw from the tail
                hs[a - 34] -= 4
                melds[s] += 1
                bound[s] = _shanten_of(hs, tabs)
                ready[s] = bound[s] <= 0
                drawn = np.int64(wall[tail])
                can_win = _draw(hands, wall, ready, s, tail, tabs)
                tail -= 1
                claimed = False
                continue
            k = a
            hs[k] -= 1
            turns += 1
            if k != drawn:  # readiness: the engine's lower bound (caishen.sim.engine.deal._update_tenpai_discard)
                if bound[s] - 1 >= 1:
                    bound[s] -= 1
                    ready[s] = False
                else:
                    bound[s] = _shanten_of(hs, tabs)
                    ready[s] = bound[s] <= 0
            # ---- the claims on k: each other seat's options
            any_claim = 0
            for i in range(1, 4):
                p = (s + i) % 4
                o = 0
                if k != JOKER:  # K-2.2
                    hp = hands[p]
                    if ready[p] != 0:
                        hp[k] += 1
                        if _complete(hp, tabs):
                            o |= O_WIN
                        hp[k] -= 1
                    if melds[p] < 4:
                        if hp[k] >= 2:
                            o |= O_PONG
                        if hp[k] >= 3 and left > RESERVE:
                            o |= O_KONG
                        if i == 1 and k < 27:
                            r = k % 9
                            if r <= 6 and hp[k + 1] > 0 and hp[k + 2] > 0:  # suited: never the 财神
                                o |= O_CHOW_LOW
                            if 1 <= r <= 7 and hp[k - 1] > 0 and hp[k + 1] > 0:
                                o |= O_CHOW_MID
                            if r >= 2 and hp[k - 2] > 0 and hp[k - 1] > 0:
                                o |= O_CHOW_HIGH
                opts[i] = o
                any_claim |= o
            taken, by = 0, -1
            if any_claim != 0:  # K-4.3: wins in turn order, then pong / kong, then chow; a seat asked once
                asked = 0
                for level in range(3):
                    for i in range(1, 4):
                        o = opts[i]
                        want = O_WIN if level == 0 else (O_PONG | O_KONG) if level == 1 else 7
                        if o & want and not (asked >> i) & 1 and taken == 0:
                            asked |= 1 << i
                            decisions += 1
                            c = _rng_below(rng, _popcount6(o) + 1)  # its options and pass
                            if c < _popcount6(o):
                                taken, by = _nth_bit(o, c), (s + i) % 4
                if taken == O_WIN:
                    winner, end = by, END_DISCARD
                    hands[by, k] += 1
                    break
            if taken == 0:  # nobody claims: the next seat draws, or the wall is down to the reserve
                if tail - head + 1 <= RESERVE:
                    break
                s = (s + 1) % 4
                drawn = np.int64(wall[head])
                can_win = _draw(hands, wall, ready, s, head, tabs)
                head += 1
                claimed = False
                continue
            s = by
            hs = hands[s]
            melds[s] += 1
            if taken == O_KONG:  # exposed kong: a replacement draw
                hs[k] -= 3
                bound[s] = _shanten_of(hs, tabs)
                ready[s] = bound[s] <= 0
                drawn = np.int64(wall[tail])
                can_win = _draw(hands, wall, ready, s, tail, tabs)
                tail -= 1
                claimed = False
                continue
            if taken == O_PONG:
                hs[k] -= 2
            else:  # a chow: the two held tiles of the run
                low = k - (0 if taken == O_CHOW_LOW else 1 if taken == O_CHOW_MID else 2)
                for t in range(low, low + 3):
                    if t != k:
                        hs[t] -= 1
            drawn = -1  # K-4.1: discard at once, no draw, no kong, no win
            can_win = False
            claimed = True
        out[h, 0] = turns
        out[h, 1] = winner
        out[h, 2] = end
        out[h, 3] = decisions
        total += turns
    return total


@njit(cache=True, inline="always")
def _popcount6(o):
    return (o & 1) + (o >> 1 & 1) + (o >> 2 & 1) + (o >> 3 & 1) + (o >> 4 & 1) + (o >> 5 & 1)


def play_floor(n_hands: int, seed: int) -> np.ndarray:
    """Play ``n_hands`` floor hands from ``seed``; ``int64[n, 4]``: turns, winner (-1: none), end (``END_*``),
    decisions."""
    out = np.zeros((n_hands, 4), np.int64)
    z = np.zeros(4, np.int64)
    _floor_batch(int(seed), int(n_hands), hand_tables(), np.zeros((4, 34), np.uint8), np.zeros(136, np.uint8),
                 np.zeros(4, np.uint64), z, z.copy(), z.copy(), z.copy(), np.zeros(64, np.int64), out)
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--hands", type=int, default=20_000)
    ap.add_argument("--seed", type=int, default=1)
    args = ap.parse_args()
    play_floor(16, args.seed)  # compile / load
    t = time.process_time()
    out = play_floor(args.hands, args.seed)
    dt = time.process_time() - t
    turns = out[:, 0].mean()
    print(f"floor: {args.hands / dt:,.0f} hands/s, {turns:.1f} turns/hand, {1e9 * dt / out[:, 0].sum():.1f} ns/turn, "
          f"{out[:, 3].sum() / out[:, 0].sum():.2f} decisions/turn; "
          f"ends: drawn {np.mean(out[:, 2] == END_DRAWN):.1%}, self-draw {np.mean(out[:, 2] == END_SELF_DRAW):.1%}, "
          f"discard win {np.mean(out[:, 2] == END_DISCARD):.1%}")


if __name__ == "__main__":
    main()
