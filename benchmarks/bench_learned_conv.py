"""µs per decision of the learned conv bot (``action-conv``) beside the learned MLP, tuned and greedy.

Then self-play hands/s of each with the bot in all four seats (``play_batch``, one numba call, CPU time).
The same states of greedy play (own turns and claims) and the same numba loop over the bot dispatch
``_bot_action`` as ``bench_bots.py`` (:func:`bench_bots.decision_cost`, CPU time of this process, the
best of 3 passes); the networks are built from the tuned weights (:func:`caishen.sim.bots.learned.from_tuned`,
:func:`caishen.sim.bots.learned.conv_from_tuned`): a trained net of the same shape costs the same.

    python benchmarks/bench_learned_conv.py [--rules kaihua] [--states 4000]
"""

from __future__ import annotations

import argparse
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from bench_bots import decision_cost, selfplay_rate  # noqa: E402

#: the conv shapes measured (channels per layer)
CONV_SHAPES = ((8,), (16,), (8, 8), (16, 16))


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--rules", default="kaihua", choices=("kaihua", "jiating"))
    ap.add_argument("--states", type=int, default=4000, help="decision states of greedy play")
    ap.add_argument("--hands", type=int, default=2000, help="hands per self-play measurement")
    args = ap.parse_args()
    if args.states < 1 or args.hands < 1:
        ap.error("--states and --hands must be >= 1")
    from caishen.sim.bots import learned
    from caishen.sim.bots.registry import load_tuned

    rules, tmp = args.rules, tempfile.mkdtemp()
    w = load_tuned(rules)[0]
    names = {"greedy": "greedy", f"tuned:{rules}": f"tuned:{rules}"}
    path = learned.save_learned(f"{tmp}/mlp.npz", learned.from_tuned(w, rules=rules))
    names[f"learned:{path}"] = "learned MLP (32, 16)"
    for ch in CONV_SHAPES:
        path = learned.save_learned(f"{tmp}/conv{'_'.join(map(str, ch))}.npz",
                                    learned.conv_from_tuned(w, ch, rules=rules))
        names[f"learned:{path}"] = f"learned conv {ch}"
    cost = decision_cost(rules, list(names), n_states=args.states)
    print(f"{rules}, one core (CPU time), {args.states} states of greedy play")
    print("| bot | µs/decision | self-play hands/s (4 seats) |\n|---|---:|---:|")
    for spec, us in cost.items():
        print(f"| {names[spec]} | {us:.2f} | {selfplay_rate(rules, spec, args.hands):,.0f} |")


if __name__ == "__main__":
    main()
