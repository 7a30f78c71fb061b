"""How many candidates are worth a rollout: the out-of-sample gain of following the labels among the net's top k.

``caishen learn`` labels a state's candidates with paired rollout advantages over the net's own choice
(:mod:`caishen.sim.selfplay.labels`); with ``--top-k`` only the net's top k (plus its own and the start's
choice) are rolled out.  This measures what the labels of the step-0 net (the tuned bot) can buy at each
k: the same states (every learner decision of two or more candidates, ``frac=1``) are labelled twice on
independent determinizations (seeds A and B); at each state the candidate with the best label of A among
the kept ones is scored by B's label (and the other way round, averaged): the mean, in points per decision
over the net's own choice, is an unbiased estimate of the gain of moving to the labels' favourite, where
the same label's maximum over many candidates is biased up by its noise.

Usage::

    python -m benchmarks.learn_topk --rules kaihua --walls 120 --det 8
"""

from __future__ import annotations

import argparse
import tempfile

import numpy as np


def main(argv=None) -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--rules", default="kaihua")
    ap.add_argument("--walls", type=int, default=120)
    ap.add_argument("--det", type=int, default=8, help="determinizations per label (caishen learn's --det)")
    ap.add_argument("--ks", default="1,2,3,4,6,40")
    args = ap.parse_args(argv)

    from caishen.sim.bots import learned
    from caishen.sim.bots.registry import load_tuned
    from caishen.sim.selfplay.labels import label_hands

    w, _ = load_tuned(args.rules)
    path = learned.save_learned(tempfile.mkdtemp() + "/start.npz", learned.from_tuned(w, rules=args.rules))
    lineup = f"learned:{path},tuned:{args.rules},greedy,greedy"
    walls = np.arange(args.walls) + 7 * 10**8
    cap = args.walls * 40
    a, m, _ = label_hands(lineup, args.rules, walls, n_det=args.det, frac=1.0, cap=cap, seed=11)
    b, m2, _ = label_hands(lineup, args.rules, walls, n_det=args.det, frac=1.0, cap=cap, seed=12)
    assert m == m2 and (a["n"][:m] == b["n"][:m]).all()
    n = a["n"][:m]
    logit = (a["x"][:m] * w).sum(-1)  # the step-0 net's logits: tuned's linear score
    print(f"rules {args.rules}, {args.walls} walls, {args.det} determinizations; out-of-sample gain of the "
          "labels' favourite among the kept candidates, points per decision over the net's choice (s.e.)")
    for claim in (False, True):
        sel = np.flatnonzero((a["claim"][:m] == claim) & (n >= 3))
        row = []
        for k in map(int, args.ks.split(",")):
            g = []
            for i in sel:
                order = sorted(range(n[i]), key=lambda j: (-logit[i, j], j if claim else -j))
                kept = sorted(set(order[:k]) | {int(a["base"][i])})
                best_a = kept[int(np.argmax(a["adv"][i, kept]))]
                best_b = kept[int(np.argmax(b["adv"][i, kept]))]
                g.append(0.5 * (b["adv"][i, best_a] + a["adv"][i, best_b]))
            row.append(f"k={k}: {np.mean(g):+.3f} ({np.std(g) / np.sqrt(max(len(g), 1)):.3f})")
        print(f"{'claims' if claim else 'turns'} ({len(sel)} states, {n[sel].mean():.1f} candidates): "
              + ", ".join(row))


if __name__ == "__main__":
    main()
