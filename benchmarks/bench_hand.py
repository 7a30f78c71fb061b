"""Hand-kernel throughput, side by side with the `mahjong` PyPI package (riichi).

Measures, on one core, hands per second of

- ``caishen.sim.hand`` kernels: shanten (standard + seven pairs) without and with a
  joker (Kaihua's 财神, 5z, drawn as part of the 136 tiles), the win test,
  and effective tiles (34 shanten calls per hand);
- the public batch APIs (``shanten_batch`` ...: the rows checked inside
  the same numba call) beside the raw kernels, as a ratio (goal >= 0.8x);
- the joker shanten on the same hands in random order, sorted, and one
  hand repeated (its table rows in L1): how much of its time is the
  table's latency (issue 11's "<= 25 ns" goal);
- the same hands through ``mahjong.shanten.Shanten`` (regular + seven pairs,
  no kokushi), ``mahjong.agari.Agari.is_agari`` and an effective-tile loop
  built on ``Shanten`` — a pure-Python riichi library, so no jokers;

and prints each rate and the ratio ours / mahjong in one table, and the size
of the hand table the kernels read.  Times are this process's CPU time
(``time.process_time``), so other load disturbs them less than wall time
would; a quiet machine is still best.  Results of the two libraries are
compared for agreement on the joker-free standard form, on random hands and
on hands holding a kind four times (where a fifth copy must not count, J-1.1).

    python benchmarks/bench_hand.py [--hands 2000000] [--peer-hands 20000] [--repeat 5]
"""

from __future__ import annotations

import argparse
import time

import numpy as np
from mahjong.agari import Agari
from mahjong.shanten import Shanten

from caishen.sim.hand import effective_tiles_batch, is_win_batch, shanten_batch
from caishen.sim.hand import _effective_batch, _is_win_batch, _shanten_batch, _shanten_standard_batch
from caishen.sim.tables import OFF_PAIRS, hand_tables, strict_block
from caishen.sim.tiles import CAISHEN


def random_hands(n: int, size: int, seed: int) -> np.ndarray:
    """``uint8[n, 34]``: n uniformly random hands of ``size`` tiles from the 136."""
    rng = np.random.default_rng(seed)
    keys = rng.random((n, 136), dtype=np.float32)
    idx = np.argpartition(keys, size, axis=1)[:, :size] // 4
    counts = np.zeros((n, 34), np.uint8)
    np.add.at(counts, (np.repeat(np.arange(n), size), idx.ravel()), 1)
    return counts


def hands_with_fours(n: int, seed: int) -> np.ndarray:
    """``uint8[n, 34]``: hands of 4..14 tiles (3m+1 / 3m+2) that hold one or two kinds four times,
    half of them in one suit (kinds 0..8)."""
    rng = np.random.default_rng(seed)
    counts = np.zeros((n, 34), np.uint8)
    sizes = rng.choice([4, 5, 7, 8, 10, 11, 13, 14], n)
    for r in range(n):
        span = 9 if r % 2 else 34
        for q in rng.choice(span, rng.integers(1, 3), replace=False):
            if counts[r].sum() + 4 <= sizes[r]:
                counts[r, q] = 4
        while counts[r].sum() < sizes[r]:
            t = rng.integers(0, span)
            if counts[r, t] < 4:
                counts[r, t] += 1
    return counts


def best_rate(fn, n: int, repeat: int) -> float:
    """Hands per second: n / the fastest of ``repeat`` runs."""
    fn()
    times = []
    for _ in range(repeat):
        t = time.process_time()
        fn()
        times.append(time.process_time() - t)
    return n / min(times)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--hands", type=int, default=1_000_000, help="hands for our kernels")
    ap.add_argument("--peer-hands", type=int, default=20_000, help="hands for the mahjong package")
    ap.add_argument("--repeat", type=int, default=5)
    ap.add_argument("--seed", type=int, default=1)
    args = ap.parse_args()

    tabs = hand_tables()
    h14 = random_hands(args.hands, 14, args.seed)
    h13 = random_hands(max(args.hands // 10, 1000), 13, args.seed + 1)
    n13 = len(h13)
    out8 = np.empty(args.hands, np.int8)
    outb = np.empty(args.hands, np.bool_)
    eff = np.zeros((n13, 34), np.bool_)

    ours = {
        "shanten, no joker": best_rate(lambda: _shanten_batch(h14, -1, tabs, out8), args.hands, args.repeat),
        "shanten, 5z joker": best_rate(lambda: _shanten_batch(h14, CAISHEN, tabs, out8), args.hands, args.repeat),
        "standard shanten": best_rate(lambda: _shanten_standard_batch(h14, -1, tabs, out8), args.hands, args.repeat),
        "win test, 5z joker": best_rate(lambda: _is_win_batch(h14, CAISHEN, tabs, outb), args.hands, args.repeat),
        "effective tiles (13)": best_rate(lambda: _effective_batch(h13, CAISHEN, tabs, eff), n13, args.repeat),
    }

    # the public APIs (input checked inside the same numba call) beside the raw kernels
    public = {
        "shanten, no joker": best_rate(lambda: shanten_batch(h14, -1), args.hands, args.repeat),
        "shanten, 5z joker": best_rate(lambda: shanten_batch(h14, CAISHEN), args.hands, args.repeat),
        "win test, 5z joker": best_rate(lambda: is_win_batch(h14, CAISHEN), args.hands, args.repeat),
        "effective tiles (13)": best_rate(lambda: effective_tiles_batch(h13, CAISHEN), n13, args.repeat),
    }

    m = args.peer_hands
    lists14 = [list(map(int, r)) for r in h14[:m]]
    lists13 = [list(map(int, r)) for r in h13[: max(m // 10, 200)]]

    def peer_shanten():
        for r in lists14:
            Shanten.calculate_shanten(r, use_chiitoitsu=True, use_kokushi=False)

    def peer_standard():
        for r in lists14:
            Shanten.calculate_shanten_for_regular_hand(r)

    def peer_agari():
        for r in lists14:
            Agari.is_agari(r)

    def peer_effective():
        for r in lists13:
            base = Shanten.calculate_shanten(r, use_kokushi=False)
            for t in range(34):
                if r[t] < 4:
                    r[t] += 1
                    Shanten.calculate_shanten(r, use_kokushi=False)
                    r[t] -= 1
        return base

    peer = {
        "shanten, no joker": best_rate(peer_shanten, m, 1),
        "standard shanten": best_rate(peer_standard, m, 1),
        "win test, 5z joker": best_rate(peer_agari, m, 1),
        "effective tiles (13)": best_rate(peer_effective, len(lists13), 1),
    }
    peer["shanten, 5z joker"] = float("nan")  # no jokers in riichi

    # agreement on the joker-free standard form, random hands and hands holding fours
    _shanten_standard_batch(h14[:m], -1, tabs, out8[:m])
    theirs = np.array([Shanten.calculate_shanten_for_regular_hand(r) for r in lists14])
    agree = float((theirs == out8[:m]).mean())
    fours = hands_with_fours(m, args.seed + 2)
    ours4 = np.empty(m, np.int8)
    _shanten_standard_batch(fours, -1, tabs, ours4)
    theirs4 = np.array([Shanten.calculate_shanten_for_regular_hand(list(map(int, r))) for r in fours])
    agree4 = float((theirs4 == ours4).mean())

    print(f"hands: ours {args.hands:,} (effective tiles {n13:,}), mahjong {m:,}; one core; best of {args.repeat}")
    print(f"{'measure':<22} {'caishen hands/s':>16} {'mahjong hands/s':>16} {'ratio':>9} {'ns/hand':>9}")
    for name, rate in ours.items():
        p = peer[name]
        ratio = f"{rate / p:9.0f}x" if p == p else "      n/a"
        ps = f"{p:16,.0f}" if p == p else f"{'(no jokers)':>16}"
        print(f"{name:<22} {rate:16,.0f} {ps} {ratio} {1e9 / rate:9.1f}")
    print(f"standard-form shanten agreement with mahjong on {m:,} hands: {agree:.4%}")
    print(f"  and on {m:,} hands of 4-14 tiles holding a kind four times: {agree4:.4%}")
    block = int(strict_block(tabs))
    print(
        f"hand table: {tabs.nbytes:,} bytes: header and class ids {OFF_PAIRS:,}, min-plus rows 2 x {block:,} "
        f"(lenient for a joker, strict without; {int(tabs[0])} suit / {int(tabs[1])} honor classes)"
    )
    print(f"{'public API (checked)':<22} {'hands/s':>16} {'kernel hands/s':>16} {'ratio':>9} {'ns/hand':>9}")
    for name, rate in public.items():
        print(f"{name:<22} {rate:16,.0f} {ours[name]:16,.0f} {rate / ours[name]:8.2f}x {1e9 / rate:9.1f}")
    print("(win test: mahjong's is_agari has no jokers; it runs on the same hands with 5z as a plain tile)")

    # what bounds the joker shanten: the same kernel on the same hands in three orders.  If the table's
    # latency (cache misses) dominated, the sorted and the repeated hands would be much faster than random ones.
    orders = {
        "random order (as above)": h14,
        "sorted rows (neighbours share suits)": h14[np.lexsort(h14.T[::-1])],
        "one hand repeated (table rows in L1)": np.repeat(h14[:1], args.hands, axis=0),
    }
    print(f"{'shanten, 5z joker, hands in':<40} {'ns/hand':>9}")
    for name, x in orders.items():
        x = np.ascontiguousarray(x)
        rate = best_rate(lambda: _shanten_batch(x, CAISHEN, tabs, out8), args.hands, args.repeat)
        print(f"{name:<40} {1e9 / rate:9.1f}")


if __name__ == "__main__":
    main()
