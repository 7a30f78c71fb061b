"""Train ``sb3_contrib.MaskablePPO`` on the batched env against greedy bots, log a learning curve,
save a checkpoint, and evaluate it on duplicate deals.

Needs the ``[rl]`` extra (README, "Training").  The default run (Kaihua,
the learning seat 0 against three greedy bots) takes about 12 minutes on 2
cores::

    python -m agents.train_ppo --out runs/ppo-kaihua            # train, then evaluate
    python -m agents.train_ppo --evaluate runs/ppo-kaihua/model.zip   # evaluate a checkpoint only

Written to ``--out``:

============== ================================================================
``model.zip``  the trained policy (``agents.make_agent("ppo:runs/.../model.zip")``)
``untrained.zip`` the same network before training (same seed), for the
               evaluation's "untrained" row
``curve.csv``  the learning curve, one row per PPO rollout: ``timesteps``,
               ``seconds``, ``hands`` (learner hands that ended in the
               rollout), ``mean_points`` (the learning seat's mean points
               per hand in them, while training: sampled actions),
               ``se_points`` (its standard error), ``steps_per_s``
``eval.csv``   points per hand of trained / untrained / random masked /
               greedy in the learning seat against three greedy bots, the
               same deals for all four (:func:`agents.ppo.evaluate_vs_greedy`),
               with a 95% CI and the paired difference from the trained policy
``eval.md``    the same as a Markdown table
============== ================================================================

Defaults and why (``--help`` lists them all):

- observation ``flat`` (``float32[967]``, every input in [0, 1], each
  scalar once: made for an MLP, :mod:`envs.observation`); a 256x256 MLP for
  the policy and another for the value (separate, SB3's ``net_arch`` dict);
- reward ``scaled`` (points / 8 in Kaihua, about one sd of a seat's points
  per hand under greedy play), one episode = one hand, ``gamma = 1`` (the
  reward arrives only at the hand's end and a hand is at most a few dozen
  learner decisions), ``gae_lambda = 0.95``;
- 256 games per numba call x 64 steps = 16,384 decisions per rollout,
  minibatches of 4,096, 4 epochs, learning rate 3e-4, entropy 0.01.

Self-play is not offered here: SB3's rollout buffer keeps one trajectory
per env index, while a self-play game hands its decisions to another seat
every step (:mod:`envs.sb3_vec`).
"""

from __future__ import annotations

import argparse
import csv
import json
import math
import os
import sys
import time

import numpy as np

__all__ = ["train", "evaluate_checkpoints", "main", "DEFAULTS"]

#: the default run's settings (module docstring)
DEFAULTS = dict(
    rules="kaihua",
    timesteps=4_000_000,
    n_envs=256,
    n_steps=64,
    batch_size=4096,
    n_epochs=4,
    learning_rate=3e-4,
    gamma=1.0,
    gae_lambda=0.95,
    ent_coef=0.01,
    clip_range=0.2,
    net=(256, 256),
    observation="flat",
    history=False,
    reward="scaled",
    reward_scale=None,
    shaping=0.0,
    assist=True,
    opponents="greedy",
    seat=0,
    seed=0,
    eval_hands=20_480,
    eval_seed=1_000_000,
    threads=1,
)


def _curve_callback(path: str, t0: float):
    from stable_baselines3.common.callbacks import BaseCallback

    class CurveCallback(BaseCallback):
        """Writes one ``curve.csv`` row per rollout: the learning seat's points per hand that ended in it."""

        def _on_training_start(self) -> None:
            self._pts: list[int] = []
            self._f = open(path, "w", newline="")
            self._w = csv.writer(self._f)
            self._w.writerow(["timesteps", "seconds", "hands", "mean_points", "se_points", "steps_per_s"])
            self._last = (0, time.time())

        def _on_step(self) -> bool:
            for info in self.locals["infos"]:
                if "points" in info:
                    self._pts.append(info["points"])
            return True

        def _on_rollout_end(self) -> None:
            x = np.asarray(self._pts, np.float64)
            now = time.time()
            sps = (self.num_timesteps - self._last[0]) / max(now - self._last[1], 1e-9)
            self._last = (self.num_timesteps, now)
            mean = float(x.mean()) if x.size else float("nan")
            se = float(x.std(ddof=1) / math.sqrt(x.size)) if x.size > 1 else float("nan")
            self._w.writerow([self.num_timesteps, round(now - t0, 1), x.size, round(mean, 4), round(se, 4),
                              round(sps)])
            self._f.flush()
            if self.verbose:
                print(f"{self.num_timesteps:>10,d} steps {now - t0:7.1f}s  points/hand {mean:+.3f} ± {se:.3f} "
                      f"({x.size} hands, {sps:,.0f} steps/s)", flush=True)
            self._pts = []

        def _on_training_end(self) -> None:
            self._f.close()

    return CurveCallback(verbose=1)


def train(out: str, **kw) -> str:
    """Train with the settings ``kw`` (keys of :data:`DEFAULTS`), write ``out/model.zip``,
    ``out/untrained.zip`` and ``out/curve.csv``; returns the path of ``model.zip``.
    Raises ``ValueError`` for an unknown setting or a bad env argument."""
    unknown = set(kw) - set(DEFAULTS)
    if unknown:
        raise ValueError(f"unknown training settings: {sorted(unknown)}")
    cfg = {**DEFAULTS, **kw}
    import torch
    from sb3_contrib import MaskablePPO

    from envs.sb3_vec import BatchedVecEnv

    if cfg["threads"] > 0:
        torch.set_num_threads(int(cfg["threads"]))
    os.makedirs(out, exist_ok=True)
    t0 = time.time()
    env = BatchedVecEnv(cfg["n_envs"], rules=cfg["rules"], seed=cfg["seed"], seat=cfg["seat"],
                        opponents=cfg["opponents"], observation=cfg["observation"], history=cfg["history"],
                        reward=cfg["reward"], reward_scale=cfg["reward_scale"], shaping=cfg["shaping"],
                        assist=cfg["assist"])
    net = [int(h) for h in cfg["net"]]
    model = MaskablePPO(
        "MlpPolicy", env, n_steps=cfg["n_steps"], batch_size=cfg["batch_size"], n_epochs=cfg["n_epochs"],
        learning_rate=cfg["learning_rate"], gamma=cfg["gamma"], gae_lambda=cfg["gae_lambda"],
        ent_coef=cfg["ent_coef"], clip_range=cfg["clip_range"],
        policy_kwargs=dict(net_arch=dict(pi=net, vf=net), activation_fn=torch.nn.ReLU),
        seed=cfg["seed"], device="cpu", verbose=0,
    )
    model.caishen_meta = {
        "rules": cfg["rules"], "observation": cfg["observation"], "history": bool(cfg["history"]),
        "reward": cfg["reward"], "reward_scale": env.games.reward_scale, "opponents": cfg["opponents"],
        "seat": cfg["seat"], "seed": cfg["seed"], "shaping": cfg["shaping"], "assist": cfg["assist"],
        "timesteps": 0,
    }
    model.save(os.path.join(out, "untrained.zip"))
    print(f"setup {time.time() - t0:.1f}s (numba compiles on the first run); training "
          f"{cfg['timesteps']:,d} steps: {cfg['n_envs']} games x {cfg['n_steps']} steps per rollout", flush=True)
    model.learn(cfg["timesteps"], callback=_curve_callback(os.path.join(out, "curve.csv"), time.time()))
    model.caishen_meta["timesteps"] = int(model.num_timesteps)
    path = os.path.join(out, "model.zip")
    model.save(path)
    with open(os.path.join(out, "config.json"), "w") as f:
        json.dump({**cfg, "net": net, "seconds": round(time.time() - t0, 1)}, f, indent=1)
    print(f"saved {path} after {model.num_timesteps:,d} steps, {time.time() - t0:.0f}s", flush=True)
    return path


def evaluate_checkpoints(model_path: str, untrained_path: str | None = None, *, hands: int = 20_480,
                         seed: int = 1_000_000, out: str | None = None, rules: str | None = None) -> list[dict]:
    """Evaluate ``model_path`` (and ``untrained_path`` if given), a random masked policy and the greedy
    bot in the learning seat against three greedy bots on the same deals; print and (with ``out``)
    write ``eval.csv`` / ``eval.md``.  Returns :func:`agents.ppo.ci_table`'s rows (reference: trained)."""
    from agents.ppo import PPOAgent, ci_table, evaluate_vs_greedy, format_ci_table

    trained = PPOAgent(model_path)
    meta = trained.meta
    rules = rules or meta.get("rules", "kaihua")
    policies = {"trained": trained}
    if untrained_path:
        policies["untrained"] = PPOAgent(untrained_path)
    policies["random (masked)"] = "random"
    policies["greedy"] = "greedy"
    seat = meta.get("seat", 0)
    seat = seat if isinstance(seat, int) else 0  # a drawn learning seat: evaluate in seat 0
    t = time.time()
    pts = evaluate_vs_greedy(policies, rules, hands=hands, seed=seed, seat=seat,
                             observation=trained.layout, history=trained.history)
    rows = ci_table(pts, reference="trained")
    table = format_ci_table(rows, "trained")
    print(f"evaluation: {rules}, learning seat {seat} vs 3 greedy bots, duplicate deals "
          f"(game seeds {seed}..), {time.time() - t:.0f}s\n{table}", flush=True)
    if out:
        with open(os.path.join(out, "eval.csv"), "w", newline="") as f:
            w = csv.DictWriter(f, fieldnames=list(rows[0]))
            w.writeheader()
            w.writerows(rows)
        with open(os.path.join(out, "eval.md"), "w") as f:
            f.write(table + "\n")
    return rows


def build_parser() -> argparse.ArgumentParser:
    d = DEFAULTS
    p = argparse.ArgumentParser(prog="python -m agents.train_ppo", description=__doc__.split("\n\n")[0])
    p.add_argument("--out", default="runs/ppo", help="output folder (default %(default)s)")
    p.add_argument("--evaluate", metavar="MODEL_ZIP", help="only evaluate this checkpoint (and its folder's "
                   "untrained.zip if present)")
    p.add_argument("--rules", default=d["rules"], choices=["kaihua", "jiating"])
    p.add_argument("--timesteps", type=int, default=d["timesteps"], help="learner decisions (default %(default)s)")
    p.add_argument("--n-envs", type=int, default=d["n_envs"], help="games per numba call")
    p.add_argument("--n-steps", type=int, default=d["n_steps"], help="steps per game per rollout")
    p.add_argument("--batch-size", type=int, default=d["batch_size"])
    p.add_argument("--n-epochs", type=int, default=d["n_epochs"])
    p.add_argument("--learning-rate", type=float, default=d["learning_rate"])
    p.add_argument("--gamma", type=float, default=d["gamma"])
    p.add_argument("--gae-lambda", type=float, default=d["gae_lambda"])
    p.add_argument("--ent-coef", type=float, default=d["ent_coef"])
    p.add_argument("--clip-range", type=float, default=d["clip_range"])
    p.add_argument("--net", default=",".join(map(str, d["net"])), help="hidden sizes, e.g. 256,256")
    p.add_argument("--observation", default=d["observation"], choices=["flat", "planes"])
    p.add_argument("--history", action="store_true", help="add the order-of-play block")
    p.add_argument("--reward", default=d["reward"], choices=["points", "scaled", "sign"])
    p.add_argument("--reward-scale", type=float, default=d["reward_scale"])
    p.add_argument("--shaping", type=float, default=d["shaping"],
                   help="potential-based shaping: c per shanten step (envs.sb3_vec; 0: off)")
    p.add_argument("--no-assist", action="store_true", help="without the hand-reading block (envs.assist)")
    p.add_argument("--opponents", default=d["opponents"], help="sim.policies spec of the three bots")
    p.add_argument("--seat", default=str(d["seat"]), help="learning seat 0..3 (evaluation needs a fixed one)")
    p.add_argument("--seed", type=int, default=d["seed"])
    p.add_argument("--eval-hands", type=int, default=d["eval_hands"], help="hands per policy (0: no evaluation)")
    p.add_argument("--eval-seed", type=int, default=d["eval_seed"])
    p.add_argument("--threads", type=int, default=d["threads"],
                   help="torch threads (default %(default)s; 0: torch's default, one per core)")
    return p


def main(argv: list[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    try:
        if args.evaluate:
            folder = os.path.dirname(args.evaluate)
            untrained = os.path.join(folder, "untrained.zip")
            evaluate_checkpoints(args.evaluate, untrained if os.path.isfile(untrained) else None,
                                 hands=args.eval_hands, seed=args.eval_seed, out=folder or ".")
            return 0
        try:
            net = tuple(int(h) for h in args.net.split(","))
        except ValueError:
            raise ValueError(f"--net must be comma-separated integers, got {args.net!r}") from None
        seat = int(args.seat) if args.seat.isdigit() else args.seat
        path = train(args.out, rules=args.rules, timesteps=args.timesteps, n_envs=args.n_envs, n_steps=args.n_steps,
                     batch_size=args.batch_size, n_epochs=args.n_epochs, learning_rate=args.learning_rate,
                     gamma=args.gamma, gae_lambda=args.gae_lambda, ent_coef=args.ent_coef,
                     clip_range=args.clip_range, net=net, observation=args.observation, history=args.history,
                     reward=args.reward, reward_scale=args.reward_scale, shaping=args.shaping, assist=not args.no_assist,
                     opponents=args.opponents, seat=seat,
                     seed=args.seed, threads=args.threads)
        if args.eval_hands > 0:
            evaluate_checkpoints(path, os.path.join(args.out, "untrained.zip"), hands=args.eval_hands,
                                 seed=args.eval_seed, out=args.out)
    except ValueError as e:
        print(f"train_ppo: error: {e}", file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main())
