"""Where ``caishen learn``'s time goes: the learner's decisions/s beside the raw decisions/s (issues 26, 46).

One process, CPU time (``time.process_time``), ``torch.set_num_threads(1)``; for the rule set given:

- **env raw**: :class:`caishen.envs.batched.BatchedGames` stepping uniformly random legal actions
  (``benchmarks/bench_envs.py``'s measure, batch 256): the environment's own decisions/s;
- **play only**: the recipe's hands (:func:`caishen.sim.selfplay.labels.label_hands`, lineup
  ``L,T,greedy,greedy`` with ``L`` the step-0 net) with ``frac=0``: no label, the bots alone;
  learner decisions/s and all seats' decisions/s;
- **labels, unpruned**: the same hands labelled as before pruning (``top_k=0``, every candidate rolled
  out) at the recipe's ``frac`` and ``n_det``; **labels, pruned**: the same with the recipe's ``top_k``
  (:class:`caishen.agents.exit.LabelConfig`'s defaults, the start's choice kept): learner decisions/s,
  labelled states/s, candidates rolled out per state, rollouts/s;
- **update**: one iteration's ``steps`` Adam steps of ``batch`` states (:class:`~caishen.agents.exit.TrainConfig`'s
  defaults) on the pruned labels.

The last line is the issue's measure: the learner's decisions/s over a whole iteration of the default recipe
(``hands`` hands played and labelled, then the update), and its split.  ``--hands`` defaults to the recipe's.

Usage::

    python -m benchmarks.profile_learn --rules kaihua
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
    from caishen.agents.exit import LabelConfig, TrainConfig

    ap = argparse.ArgumentParser()
    ap.add_argument("--rules", default="jiating")
    ap.add_argument("--hands", type=int, default=LabelConfig().hands, help="hands of the iteration (the recipe's)")
    ap.add_argument("--seconds", type=float, default=5.0, help="CPU seconds of the env measure")
    args = ap.parse_args(argv)

    import torch

    torch.set_num_threads(1)
    from benchmarks.bench_envs import batched_rate
    from caishen.agents.exit import _loss, _start_logits, _tensors, advantage_scale, initial_model
    from caishen.sim.selfplay.labels import Pruning, label_hands

    cfg, tr = LabelConfig(), TrainConfig()
    env_dps, env_hps, _ = batched_rate(256, args.seconds, args.rules)
    model, model0 = initial_model(args.rules), initial_model(args.rules)
    path = model.export(tempfile.mkdtemp() + "/step0.npz")
    anchor = model0.linear.detach().numpy()
    lineup = f"learned:{path},tuned:{args.rules},greedy,greedy"
    walls = np.arange(args.hands) + 10**9
    label_hands(lineup, args.rules, walls[:2], frac=0.5, prune=Pruning(cfg.top_k, anchor=anchor))  # load the kernels
    cap = args.hands * 8
    t_play, (_, _, s_play) = _cpu(lambda: label_hands(lineup, args.rules, walls, frac=0.0, cap=16))
    t_full, (full, m_full, s_full) = _cpu(lambda: label_hands(lineup, args.rules, walls, n_det=cfg.n_det,
                                                              frac=cfg.frac, cap=cap))
    t_lab, (buf, m, s_lab) = _cpu(lambda: label_hands(lineup, args.rules, walls, n_det=cfg.n_det, frac=cfg.frac,
                                                      cap=cap, prune=Pruning(cfg.top_k, cfg.spend_saved, anchor)))
    opt = torch.optim.Adam(model.parameters(), lr=tr.lr)
    gen = torch.Generator().manual_seed(0)
    scale = advantage_scale(args.rules)
    start = _start_logits(torch, model0)

    def update():
        for _ in range(tr.steps):
            idx = torch.randint(m, (min(tr.batch, m),), generator=gen).numpy()
            lo = _loss(torch, model, start, _tensors(torch, buf, idx), tr.tau, tr.beta, scale)[0]
            opt.zero_grad()
            lo.backward()
            opt.step()

    t_upd, _ = _cpu(update)
    print(f"rules {args.rules}, {args.hands} hands, CPU seconds; recipe: frac {cfg.frac:g}, n_det {cfg.n_det}, "
          f"top_k {cfg.top_k}{' (spend_saved)' if cfg.spend_saved else ''}, {tr.steps} steps of {tr.batch}")
    print(f"env raw (BatchedGames, random actions): {env_dps:,.0f} decisions/s, {env_hps:,.1f} hands/s")
    print(f"play only (frac 0): {s_play[0] / t_play:,.0f} learner decisions/s, {s_play[1] / t_play:,.0f} "
          f"decisions/s of all seats ({t_play:.2f} s)")
    for name, t, mm, s, b in (("labels, unpruned (top_k 0)", t_full, m_full, s_full, full),
                              (f"labels, pruned (top_k {cfg.top_k})", t_lab, m, s_lab, buf)):
        print(f"{name}: {s[0] / t:,.0f} learner decisions/s, {mm / t:,.1f} labelled states/s ({t:.2f} s; {mm} "
              f"states, {b['n'][:mm].mean():.1f} candidates, {b['kept'][:mm].sum(1).mean():.2f} rolled out each: "
              f"{s[2]:,} rollouts, {s[2] / max(t - t_play, 1e-9):,.0f}/s)")
    print(f"update ({tr.steps} Adam steps of {tr.batch} states): {t_upd:.2f} s")
    for name, t in (("unpruned", t_full), ("pruned (the recipe)", t_lab)):
        tot = t + t_upd
        print(f"per iteration, {name}: labels {100 * (t - t_play) / tot:.1f}%, playing the hands "
              f"{100 * t_play / tot:.1f}%, update {100 * t_upd / tot:.1f}%; learner decisions/s of a whole "
              f"iteration {s_lab[0] / tot:,.0f}")


if __name__ == "__main__":
    main()
