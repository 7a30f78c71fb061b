"""Jiating pattern frequencies from a large self-play run (default: 10**6 greedy hands).

Plays the hands with the runner (``caishen.sim.selfplay.runner``: seeded chunks, worker
processes, resumable Parquet files in ``--out``), every win scored by
``caishen.sim.rules.jiating``, and prints for each pattern P01..P50 how many wins
scored it (every winner counts, also the second winner of one discard), its
share of wins with a 95% Wilson interval, and the mean points it added;
then the patterns that never fired, P and G per win, and the declarations.

    python benchmarks/report_jiating_patterns.py                 # 10**6 greedy hands
    python benchmarks/report_jiating_patterns.py --hands 20000 --workers 2
    python benchmarks/report_jiating_patterns.py --policy random --hands 100000

A rerun with the same arguments and ``--out`` reuses the finished chunks.
"""

from __future__ import annotations

import argparse
import tempfile
import time
from collections import Counter

import numpy as np

from caishen.sim.selfplay import runner, stream
from caishen.sim.rules.jiating.records import parse_patterns
from caishen.sim.rules.jiating import DEFAULT_RULES, JiatingRules
from caishen.sim.rules.jiating.tables import PATTERN_NAMES
from caishen.sim.rules.options import parse_option_strings
from caishen.sim.analysis.summary import wilson

N_SEATS = 4


def count_patterns(df) -> tuple[Counter, Counter, int]:
    """``(wins with the pattern, points summed, number of wins)`` over every winner of every hand."""
    hits: Counter = Counter()
    points: Counter = Counter()
    n_wins = 0
    for s in range(N_SEATS):
        for text in df[f"patterns_{s}"].to_numpy():
            if not text:
                continue
            n_wins += 1
            for pid, pts in parse_patterns(text).items():
                hits[pid] += 1
                points[pid] += pts
    return hits, points, n_wins


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--hands", type=int, default=10**6, help="hands to play (default 10**6)")
    ap.add_argument("--policy", default="greedy", help="one policy for all seats or four (default greedy)")
    ap.add_argument("--seed", type=int, default=2024, help="root seed")
    ap.add_argument("--workers", type=int, default=None, help="worker processes (default: all cores)")
    ap.add_argument("--chunk-size", type=int, default=10_000, help="hands per chunk")
    ap.add_argument("--option", action="append", default=[], metavar="KEY=VALUE", help="Jiating rule option")
    ap.add_argument("--out", default=None, help="run directory (default: a temporary one)")
    ap.add_argument("--no-progress", action="store_true")
    args = ap.parse_args(argv)

    options = parse_option_strings(args.option)
    rules = JiatingRules.from_dict(options) if options else DEFAULT_RULES
    config = runner.make_config("jiating", args.hands, args.seed, policies=args.policy, options=options,
                                chunk_size=args.chunk_size)
    out = args.out or tempfile.mkdtemp(prefix="jiating-patterns-")
    t0 = time.perf_counter()
    res = runner.run(config, out, workers=args.workers, progress=not args.no_progress)
    cols = ["winner", "winners_mask", "win_type", *(f"patterns_{s}" for s in range(N_SEATS)),
            *(f"P_{s}" for s in range(N_SEATS)), *(f"G_{s}" for s in range(N_SEATS)),
            *(f"decl_{s}" for s in range(N_SEATS)), *(f"hard_offer_{s}" for s in range(N_SEATS))]
    df = stream.read_run(out, columns=cols)
    hits, points, n_wins = count_patterns(df)
    H = len(df)
    print(f"Jiating, {H} hands of {','.join(config.policies)} self-play (seed {config.seed}), "
          f"{res.hands_run} played now in {res.seconds:.0f} s ({res.hands_per_second:.0f} hands/s, "
          f"{res.chunks_skipped} chunk(s) reused); run directory {out}")
    won_hands = int((df["winner"].to_numpy() >= 0).sum())
    print(f"won hands {won_hands} ({won_hands / H:.4f}), wins {n_wins} (several winners on one discard: "
          f"{n_wins - won_hands}), draws {H - won_hands}")
    pts_default = dict(rules.pattern_points)
    print(f"\n{'ID':4} {'pattern':12} {'pts':>4} {'wins':>9} {'share of wins':>14} {'95% CI':>22} {'mean pts':>9}")
    for pid, name in PATTERN_NAMES.items():
        k = hits[pid]
        share, lo, hi = wilson(k, n_wins) if n_wins else (float("nan"),) * 3
        mean_pts = points[pid] / k if k else float("nan")
        pad = " " * max(0, 12 - 2 * len(name))  # CJK characters take two columns
        print(f"{pid:4} {name}{pad} {pts_default[pid]:>4} {k:>9} {share:>14.6f} "
              f"{f'[{lo:.6f}, {hi:.6f}]':>22} {mean_pts:>9.2f}")
    never = [f"{pid} {PATTERN_NAMES[pid]}" for pid in PATTERN_NAMES if hits[pid] == 0]
    print(f"\nnever fired ({len(never)}): {', '.join(never) if never else '-'}")
    P = np.concatenate([df[f"P_{s}"].to_numpy() for s in range(N_SEATS)])
    G = np.concatenate([df[f"G_{s}"].to_numpy() for s in range(N_SEATS)])
    won = np.concatenate([(df["winners_mask"].to_numpy().astype(int) >> s) & 1 for s in range(N_SEATS)]) == 1
    if won.any():
        print(f"P per win: mean {P[won].mean():.3f}, median {np.median(P[won]):.0f}, max {P[won].max()}; "
              f"G per win: mean {G[won].mean():.3f}")
    decl = np.concatenate([df[f"decl_{s}"].to_numpy() for s in range(N_SEATS)])
    offer = np.concatenate([df[f"hard_offer_{s}"].to_numpy() for s in range(N_SEATS)])
    for code, what in ((1, "架听 (J-4.1)"), (2, "硬子 (J-4.2)")):
        d = decl == code
        rate = d.mean()
        wr = (d & won).sum() / d.sum() if d.any() else float("nan")
        print(f"{what}: {int(d.sum())} seat-hands ({rate:.5f} of seat-hands), of which won {wr:.4f}")
    print(f"硬子 offers: {int(offer.sum())} seat-hands; wall time {time.perf_counter() - t0:.0f} s")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
