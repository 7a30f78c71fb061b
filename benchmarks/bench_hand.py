"""Hand-kernel throughput and the cost of one call, side by side with xiangting, riichienv and `mahjong`.

Two parts, on one core, in one process (``--part batch|call|all``):

**batch** (hands per second):

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
  built on ``Shanten`` — a pure-Python riichi library, so no jokers.

**call** (nanoseconds per call, issue 48): the public one-hand functions
(``shanten``, ``is_win``, ``waits``, ``effective_tiles``) called once per hand
from a Python loop (random hands of 14 / 13 tiles, and complete hands for
the win test: on a random hand ``mahjong``'s ``is_agari`` stops after
reading the seven honor counts), on a ``uint8`` numpy row and on a list of 34 ints, beside
the peers' one-hand calls on the same hands in their own input: xiangting's
``calculate_replacement_number`` and ``calculate_necessary_tiles`` (Rust,
a list of 34 counts), riichienv's ``calculate_shanten`` and
``HandEvaluator(...).get_waits`` (Rust, a list of 136-tile ids), and
``mahjong``'s ``Shanten`` / ``Agari`` (pure Python, a list of 34 counts).
The measures are interleaved: each round times one pass of every measure
over the same hands, and the best round of each is kept, so load that
comes and goes hits all of them alike.  An empty Python function called
in the same loop is the floor of a call.  Peers that are not installed are
left out (``pip install xiangting riichienv mahjong``).

Times are this process's CPU time (``time.process_time``), so other load
disturbs them less than wall time would; a quiet machine is still best.
Results are compared for agreement on the joker-free forms (the riichi
libraries count kokushi and, in seven pairs, not four of a kind as two
pairs; ours the other way round, so a few hands differ).

    python benchmarks/bench_hand.py [--part all] [--hands 1000000] [--peer-hands 20000] [--repeat 5]
    python benchmarks/bench_hand.py --part call [--call-hands 2000] [--rounds 9]
"""

from __future__ import annotations

import argparse
import time

import numpy as np

from caishen.sim import hand
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


def complete_hands(n: int, seed: int) -> np.ndarray:
    """``uint8[n, 34]``: n complete 14-tile hands without a joker (four random runs or triplets and a pair,
    at most four copies of a kind), the hands a win test is asked about when it matters."""
    rng = np.random.default_rng(seed)
    counts = np.zeros((n, 34), np.uint8)
    for r in range(n):
        while counts[r].sum() < 14:
            counts[r] = 0
            for g in range(5):
                t = int(rng.integers(0, 34))
                if g == 4:
                    counts[r, t] += 2
                elif t < 27 and t % 9 < 7 and rng.random() < 0.7:
                    counts[r, t:t + 3] += 1
                else:
                    counts[r, t] += 3
            if counts[r].max() > 4:
                counts[r] = 0
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


def batch_part(args) -> None:
    """Hands per second of the batch kernels and APIs, beside ``mahjong`` where it is installed."""
    mahjong = peers().get("mahjong")
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

    if mahjong is None:
        print("(mahjong is not installed: its columns are left out)")
    m = args.peer_hands if mahjong is not None else 0
    Shanten, Agari = (mahjong.shanten.Shanten, mahjong.agari.Agari) if mahjong is not None else (None, None)
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

    nan = float("nan")
    peer = {
        "shanten, no joker": best_rate(peer_shanten, m, 1) if m else nan,
        "standard shanten": best_rate(peer_standard, m, 1) if m else nan,
        "win test, 5z joker": best_rate(peer_agari, m, 1) if m else nan,
        "effective tiles (13)": best_rate(peer_effective, len(lists13), 1) if m else nan,
        "shanten, 5z joker": nan,  # no jokers in riichi
    }

    # agreement on the joker-free standard form, random hands and hands holding fours
    agree = agree4 = nan
    if m:
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
    if m:
        print(f"standard-form shanten agreement with mahjong on {m:,} hands: {agree:.4%}")
        print(f"  and on {m:,} hands of 4-14 tiles holding a kind four times: {agree4:.4%}")
    else:  # no peer: nothing was compared (not a 'nan%' agreement)
        why = "the peer library `mahjong` is not installed" if mahjong is None else "--peer-hands 0"
        print(f"standard-form shanten agreement with mahjong: skipped ({why})")
    block = int(strict_block(tabs))
    print(
        f"hand table: {tabs.nbytes:,} bytes: header and class ids {OFF_PAIRS:,}, min-plus rows 2 x {block:,}\n"
        f"    (lenient for a joker, strict without; {int(tabs[0])} suit / {int(tabs[1])} honor classes)"
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


def peers() -> dict:
    """The peer libraries that are installed: ``{"xiangting": module, "riichienv": module, "mahjong": module}``."""
    import importlib

    found = {}
    for name, modules in (("xiangting", ("xiangting",)), ("riichienv", ("riichienv", "riichienv._riichienv")),
                          ("mahjong", ("mahjong", "mahjong.shanten", "mahjong.agari"))):
        try:
            for mod in modules:
                importlib.import_module(mod)
            found[name] = importlib.import_module(name)
        except ImportError:
            pass
    return found


def tile_ids(row: np.ndarray) -> list[int]:
    """A hand's counts as riichienv's 136-tile ids (copy ``j`` of kind ``k`` is ``4 * k + j``)."""
    return [4 * int(k) + j for k in np.flatnonzero(row) for j in range(int(row[k]))]


def per_call(measures: dict, hands: int, rounds: int) -> dict:
    """Nanoseconds per call of each ``measures[name]()`` (one pass over ``hands`` hands), interleaved: each
    round times one pass of every measure, and the best round of each is kept."""
    best = {name: float("inf") for name in measures}
    for fn in measures.values():
        fn()  # compile, load, warm the caches
    for _ in range(rounds):
        for name, fn in measures.items():
            t = time.process_time()
            fn()
            best[name] = min(best[name], time.process_time() - t)
    return {name: 1e9 * s / hands for name, s in best.items()}


def call_part(args) -> None:
    """Nanoseconds per call of the public one-hand functions, beside the peers' one-hand calls."""
    found = peers()
    n = args.call_hands
    h14 = random_hands(n, 14, args.seed + 3)
    h13 = random_hands(n, 13, args.seed + 4)
    rows14, rows13 = list(h14), list(h13)  # numpy rows, each a uint8[34] view
    lists14 = [[int(x) for x in r] for r in h14]
    lists13 = [[int(x) for x in r] for r in h13]
    ids14, ids13 = [tile_ids(r) for r in h14], [tile_ids(r) for r in h13]
    won = complete_hands(n, args.seed + 5)
    rows_won, lists_won = list(won), [[int(x) for x in r] for r in won]

    def loop(fn, hands):
        def run():
            for h in hands:
                fn(h)
        return run

    def nothing(h):
        return None

    m = {  # (question, input) -> one pass over the hands
        ("a Python call", "floor"): loop(nothing, lists14),
        ("shanten", "caishen, uint8 row"): loop(hand.shanten, rows14),
        ("shanten", "caishen, list"): loop(hand.shanten, lists14),
        ("shanten", "caishen, 5z joker, row"): loop(lambda h: hand.shanten(h, CAISHEN), rows14),
        ("is_win", "caishen, uint8 row"): loop(hand.is_win, rows14),
        ("is_win", "caishen, list"): loop(hand.is_win, lists14),
        ("is_win, complete", "caishen, uint8 row"): loop(hand.is_win, rows_won),
        ("is_win, complete", "caishen, list"): loop(hand.is_win, lists_won),
        ("waits", "caishen, uint8 row"): loop(hand.waits, rows13),
        ("waits", "caishen, list"): loop(hand.waits, lists13),
        ("effective tiles", "caishen, uint8 row"): loop(hand.effective_tiles, rows13),
        ("effective tiles", "caishen, list"): loop(hand.effective_tiles, lists13),
    }
    if "xiangting" in found:
        xt = found["xiangting"]
        four = xt.PlayerCount.FOUR
        m["shanten", "xiangting, list"] = loop(lambda h: xt.calculate_replacement_number(h, four), lists14)
        m["effective tiles", "xiangting, list"] = loop(lambda h: xt.calculate_necessary_tiles(h, four), lists13)
    if "riichienv" in found:
        rv = found["riichienv"]
        evaluator = rv._riichienv.HandEvaluator
        m["shanten", "riichienv, 136 ids"] = loop(rv.calculate_shanten, ids14)
        m["waits", "riichienv, 136 ids"] = loop(lambda h: evaluator(h, []).get_waits(), ids13)
    if "mahjong" in found:
        sh, ag = found["mahjong"].shanten.Shanten, found["mahjong"].agari.Agari
        m["shanten", "mahjong, list"] = loop(lambda h: sh.calculate_shanten(h, use_kokushi=False), lists14)
        m["is_win", "mahjong, list"] = loop(ag.is_agari, lists14)
        m["is_win, complete", "mahjong, list"] = loop(ag.is_agari, lists_won)
    ns = per_call(m, n, args.rounds)

    missing = sorted({"xiangting", "riichienv", "mahjong"} - set(found))
    print(f"one call from a Python loop: {n:,} hands, best of {args.rounds} interleaved rounds, CPU time"
          + (f"\n    not installed: {', '.join(missing)}" if missing else ""))
    assert all(hand.is_win(r) for r in rows_won)
    print("ratios: peer ns / ours ns (> 1 means we are faster)")
    print(f"{'question':<16} {'input':<26} {'ns/call':>9}  ratios")
    for (question, form), t in ns.items():
        line = f"{question:<16} {form:<26} {t:9.0f}"
        if form.startswith("caishen"):
            peers_here = [(f, ns[q, f]) for q, f in ns if q == question and not f.startswith("caishen")]
            line += "  " + ", ".join(f"{f.split(',')[0]} {pt / t:.2f}x" for f, pt in peers_here)
        print(line)

    # agreement on the joker-free forms (riichi counts kokushi and not four of a kind as two pairs)
    ours = np.array([hand.shanten(r) for r in rows14])
    if "xiangting" in found:
        theirs = np.array([found["xiangting"].calculate_replacement_number(h, four) - 1 for h in lists14])
        print(f"shanten agreement with xiangting on {n:,} hands: {(ours == theirs).mean():.2%}")
    if "riichienv" in found:
        theirs = np.array([found["riichienv"].calculate_shanten(h) for h in ids14])
        print(f"shanten agreement with riichienv on {n:,} hands: {(ours == theirs).mean():.2%}")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--part", choices=("batch", "call", "all"), default="all")
    ap.add_argument("--hands", type=int, default=1_000_000, help="hands for our batch kernels")
    ap.add_argument("--peer-hands", type=int, default=20_000, help="hands for the mahjong package (batch part)")
    ap.add_argument("--repeat", type=int, default=5, help="runs of each batch measure (the best is kept)")
    ap.add_argument("--call-hands", type=int, default=2_000, help="hands per pass of each one-call measure")
    ap.add_argument("--rounds", type=int, default=9, help="interleaved rounds of the one-call measures")
    ap.add_argument("--seed", type=int, default=1)
    args = ap.parse_args()
    if args.part in ("call", "all"):
        call_part(args)
    if args.part in ("batch", "all"):
        batch_part(args)


if __name__ == "__main__":
    main()
