"""Where ``caishen learn``'s time goes: the learner's decisions/s beside the raw decisions/s (issue 26).

One process, CPU time (``time.process_time``), ``torch.set_num_threads(1)``; for the rule set given:

- **env raw**: :class:`caishen.envs.batched.BatchedGames` stepping uniformly random legal actions
  (``benchmarks/bench_envs.py``'s measure, batch 256): the environment's own decisions/s;
- **play only**: the recipe's hands (:func:`caishen.sim.selfplay.labels.label_hands`, lineup
  ``L,T,greedy,greedy`` with ``L`` the step-0 net) with ``frac=0``: no label, the bots alone;
  learner decisions/s and all seats' decisions/s;
- **recipe**: the same hands with the defaults ``frac=0.2, n_det=8``: learner decisions/s and labelled
  states/s (each labelled state costs ``n x n_det`` rollouts to the end of the hand);
- **update**: one iteration's ``steps=50`` Adam steps of ``batch=256`` states on those labels.

Usage::

    python benchmarks/profile_learn.py --rules jiating --hands 200
"""

from __future__ import annotations

import argparse
import tempfile
import time

import numpy as np


def _cpu(fn):
    t0 = time.process_time()
    out = fn()
    return time.process_time() - t0, out


def main(argv=None) -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--rules", default="jiating")
    ap.add_argument("--hands", type=int, default=200)
    ap.add_argument("--seconds", type=float, default=5.0, help="CPU seconds of the env measure")
    args = ap.parse_args(argv)

    import torch

    torch.set_num_threads(1)
    from benchmarks.bench_envs import batched_rate
    from caishen.agents.exit import _loss, _tensors, advantage_scale, initial_model
    from caishen.sim.selfplay.labels import label_hands

    env_dps, env_hps, _ = batched_rate(256, args.seconds, args.rules)
    path = initial_model(args.rules).export(tempfile.mkdtemp() + "/step0.npz")
    lineup = f"learned:{path},tuned:{args.rules},greedy,greedy"
    walls = np.arange(args.hands) + 10**9
    label_hands(lineup, args.rules, walls[:2], frac=0.0)  # load the kernels
    t_play, (_, _, s_play) = _cpu(lambda: label_hands(lineup, args.rules, walls, frac=0.0, cap=16))
    t_lab, (buf, m, s_lab) = _cpu(lambda: label_hands(lineup, args.rules, walls, n_det=8, frac=0.2,
                                                      cap=args.hands * 8))
    model, model0 = initial_model(args.rules), initial_model(args.rules)
    opt = torch.optim.Adam(model.parameters(), lr=3e-4)
    gen = torch.Generator().manual_seed(0)
    scale = advantage_scale(args.rules)

    def update():
        for _ in range(50):
            idx = torch.randint(m, (min(256, m),), generator=gen).numpy()
            lo, _ = _loss(torch, model, model0, _tensors(torch, buf, idx), 1.0, 1.0, scale)
            opt.zero_grad()
            lo.backward()
            opt.step()

    t_upd, _ = _cpu(update)
    n_cand = float(buf["n"][:m].mean())
    print(f"rules {args.rules}, {args.hands} hands, CPU seconds")
    print(f"env raw (BatchedGames, random actions): {env_dps:,.0f} decisions/s, {env_hps:,.1f} hands/s")
    print(f"play only (frac 0): {s_play[0] / t_play:,.0f} learner decisions/s, {s_play[1] / t_play:,.0f} "
          f"decisions/s of all seats ({t_play:.2f} s)")
    print(f"recipe (frac 0.2, n_det 8): {s_lab[0] / t_lab:,.0f} learner decisions/s, {m / t_lab:,.1f} labelled "
          f"states/s ({t_lab:.2f} s; {m} states, {n_cand:.1f} candidates each: {m * n_cand * 8:,.0f} rollouts)")
    print(f"update (50 Adam steps of 256 states): {t_upd:.2f} s")
    tot = t_lab + t_upd
    print(f"per iteration: labels {100 * (t_lab - t_play) / tot:.1f}%, playing the hands {100 * t_play / tot:.1f}%, "
          f"update {100 * t_upd / tot:.1f}%; learner decisions/s of a whole iteration {s_lab[0] / tot:,.0f}")


if __name__ == "__main__":
    main()
