"""Train ``sb3_contrib.MaskablePPO`` on the batched env against greedy bots, log a learning curve,
save a checkpoint, and evaluate it on duplicate deals.

Needs the ``[rl]`` extra (README, "Training").  The default run (the default rule set,
the learning seat 0 against three greedy bots: 1.5M decisions imitating
the greedy bot, then 2M decisions of PPO, then the evaluation) took 9 min
50 s here (one torch thread, numba's cache warm)::

    python -m caishen.agents.train_ppo --out runs/ppo-default            # train, then evaluate
    python -m caishen.agents.train_ppo --evaluate runs/ppo-default/model.safetensors   # evaluate a checkpoint only

Written to ``--out``:

========================= ========================================================
``model.safetensors``     the trained policy (``caishen.agents.make_agent("ppo:runs/.../model.safetensors")``):
                          tensors and a JSON config, nothing that can run code when
                          loaded (:func:`caishen.agents.ppo.save_policy`)
``untrained.safetensors`` the same network before any training (same seed)
``imitated.safetensors``  after the imitation phase, before PPO
``imitation.csv``         one row per imitation chunk: ``steps``, ``accuracy`` (the
                          policy's most likely action equals greedy's), ``value_loss``
``curve.csv``             the PPO learning curve, one row per rollout:
                          ``timesteps``, ``seconds``, ``hands`` (learner hands that
                          ended in the rollout), ``mean_points`` (the learning seat's
                          mean points per hand in them, while training: sampled
                          actions), ``se_points`` (its standard error), ``steps_per_s``
``eval.csv``              points per hand of trained / imitation only / untrained /
                          random masked / greedy in the learning seat against three
                          greedy bots, the same deals for all
                          (:func:`caishen.agents.ppo.evaluate_vs_greedy`), with a 95% CI and
                          the paired difference from the trained policy
``eval.md``               the same as a Markdown table
``config.json``           the settings and the run's seconds
========================= ========================================================

Defaults and why (``--help`` lists them all):

- observation ``flat`` (``float32[967]``, every input in [0, 1], each
  scalar once: made for an MLP, :mod:`caishen.envs.observation`) plus the
  hand-reading block of :mod:`caishen.envs.assist` (shanten now and after each
  discard, from the seat's own tiles: what the greedy bot reads; without it
  the MLP spends millions of steps learning shanten from counts); a 256x256
  MLP for the policy and another for the value;
- a kickstart: ``--imitate`` decisions of behaviour cloning of the greedy
  bot in the learning seat (:func:`imitate`, about 80 s per million),
  which also fits the value head.  PPO from scratch learns to stop feeding
  wins long before it learns to win (measured here: from -3.4 to about
  -2.0 points per hand in 2.5M steps, 73% of its discards keeping the best
  shanten, 3.5% of hands won); after imitation PPO starts from a policy
  that builds hands (95% of discards keep the best shanten).  Measured
  (default run, 20,480 duplicate hands): untrained -3.36, imitation only
  -0.69, trained -0.70, greedy +0.04 points per hand: the PPO phase lifts
  the sampled policy of the learning curve (-1.46 -> -1.16) but not yet
  the most-likely-action policy that the evaluation plays (after 1M
  imitation steps and 1.5M PPO steps it added +0.23 +- 0.14).  ``--imitate
  0`` for pure PPO;
- reward ``scaled`` (points / the rule set's ``reward_scale``, about one sd of a seat's points
  per hand under greedy play), one episode = one hand, ``gamma = 1`` (the
  reward arrives only at the hand's end and a hand is a few dozen learner
  decisions at most), ``gae_lambda = 0.95``; ``--shaping c`` adds
  potential-based shaping on the shanten (:mod:`caishen.envs.sb3_vec`; off by
  default: it gained little in these runs);
- 256 games per numba call x 64 steps = 16,384 decisions per rollout,
  minibatches of 4,096, 4 epochs, learning rate 3e-4, entropy 0.01;
- one torch thread (``--threads``): two are about 30% faster on an idle
  machine, but ten times slower when another process holds a core.

Self-play is not offered here: SB3's rollout buffer keeps one trajectory
per env index, while a self-play game hands its decisions to another seat
every step (:mod:`caishen.envs.sb3_vec`).
"""

from __future__ import annotations

import argparse
import csv
import math
import os
import sys
import time

import numpy as np

from caishen.sim.rules import base as rulesets
from caishen.sim.rules.base import DEFAULT
from caishen.sim import safeio
from caishen.sim.selfplay import rundir

__all__ = ["train", "evaluate_checkpoints", "main", "DEFAULTS"]

#: the default run's settings (module docstring)
DEFAULTS = dict(
    rules=DEFAULT,
    timesteps=2_000_000,
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
    imitate=1_500_000,
    imitate_lr=1e-3,
)


def _curve_callback(path: str, t0: float):
    from stable_baselines3.common.callbacks import BaseCallback

    class CurveCallback(BaseCallback):
        """Writes one ``curve.csv`` row per rollout: the learning seat's points per hand that ended in it."""

        def _on_training_start(self) -> None:
            self._pts: list[int] = []
            self._rows: list[dict] = []  # the whole curve, rewritten atomically per rollout (safeio.atomic_write)
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
            self._rows.append({"timesteps": self.num_timesteps, "seconds": round(now - t0, 1), "hands": x.size,
                               "mean_points": round(mean, 4), "se_points": round(se, 4), "steps_per_s": round(sps)})
            safeio.atomic_write(path, _csv_text(self._rows))
            if self.verbose:
                print(f"{self.num_timesteps:>10,d} steps {now - t0:7.1f}s  points/hand {mean:+.3f} ± {se:.3f} "
                      f"({x.size} hands, {sps:,.0f} steps/s)", flush=True)
            self._pts = []

    return CurveCallback(verbose=1)


def imitate(model, env, steps: int, lr: float, seed: int, policy: str = "greedy") -> list[dict]:
    """Kickstart ``model`` by imitating the built-in bot ``policy`` in the learning seat (behaviour cloning).

    The bot plays the learning seat of every game of ``env`` (a
    :class:`caishen.envs.sb3_vec.BatchedVecEnv`) for ``steps`` decisions, in chunks of
    64 steps per game; after each chunk, one pass of minibatches of 2,048
    trains the policy head on the bot's actions (masked cross-entropy) and
    the value head on the chunk's Monte Carlo returns (``gamma = 1``, the
    episodes that end inside the chunk).  Returns one dict per chunk
    (``steps``, ``accuracy``: the policy's most likely action equal to the
    bot's, before the chunk's update, ``value_loss``).
    """
    import torch as th

    pol = model.policy
    opt = th.optim.Adam(pol.parameters(), lr=lr)
    n, T = env.num_envs, 64
    dim = env.observation_space.shape[0]
    b_obs = np.zeros((T, n, dim), np.float32)
    b_mask = np.zeros((T, n, env.action_space.n), bool)
    b_act = np.zeros((T, n), np.int64)
    b_rew = np.zeros((T, n), np.float32)
    b_done = np.zeros((T, n), bool)
    rng = np.random.default_rng(seed)
    env.seed(seed)
    obs = env.reset()
    log, done = [], 0
    while done < steps:
        for t in range(T):
            b_obs[t] = obs
            b_mask[t] = env.action_masks()
            b_act[t] = env.vec.bot_actions(policy)
            obs, b_rew[t], b_done[t], _ = env.step(b_act[t])
        ret = np.zeros((T, n), np.float32)
        valid = np.zeros((T, n), bool)
        g, seen = np.zeros(n, np.float32), np.zeros(n, bool)
        for t in range(T - 1, -1, -1):
            g = b_rew[t] + np.where(b_done[t], 0.0, g)
            seen |= b_done[t]
            ret[t], valid[t] = g, seen
        o, m, a = b_obs.reshape(T * n, dim), b_mask.reshape(T * n, -1), b_act.reshape(-1)
        r, v = ret.reshape(-1), valid.reshape(-1)
        pol.set_training_mode(True)
        hits, vloss, batches = 0, 0.0, 0
        for idx in np.array_split(rng.permutation(T * n), max(1, T * n // 2048)):
            ot = th.as_tensor(o[idx])
            values, logp, _ = pol.evaluate_actions(ot, th.as_tensor(a[idx]), action_masks=m[idx])
            with th.no_grad():
                dist = pol.get_distribution(ot, action_masks=m[idx])
                hits += int((dist.distribution.probs.argmax(dim=1).numpy() == a[idx]).sum())
            vt = th.as_tensor(v[idx])
            err = (values.flatten() - th.as_tensor(r[idx]))[vt]
            value_loss = (err**2).mean() if err.numel() else th.zeros(())
            loss = -logp.mean() + 0.5 * value_loss
            opt.zero_grad()
            loss.backward()
            th.nn.utils.clip_grad_norm_(pol.parameters(), 0.5)
            opt.step()
            vloss += float(value_loss.detach())
            batches += 1
        done += T * n
        log.append({"steps": done, "accuracy": hits / (T * n), "value_loss": vloss / batches})
        print(f"imitation {done:>10,d} steps  accuracy {hits / (T * n):.3f}  value loss {vloss / batches:.3f}",
              flush=True)
    pol.set_training_mode(False)
    return log


def train(out: str, **kw) -> str:
    """Train with the settings ``kw`` (keys of :data:`DEFAULTS`), write ``out/model.safetensors``,
    ``out/untrained.safetensors`` and ``out/curve.csv``; returns the path of ``model.safetensors``.
    Raises ``ValueError`` for an unknown setting or a bad env argument."""
    unknown = set(kw) - set(DEFAULTS)
    if unknown:
        raise ValueError(f"unknown training settings: {sorted(unknown)}")
    cfg = {**DEFAULTS, **kw}
    import torch

    if cfg["threads"] > 0:
        torch.set_num_threads(int(cfg["threads"]))
    with rundir.workspace(out, "caishen train"):  # one training per folder, never writing through a link in it
        return _train(out, cfg)


def _train(out: str, cfg: dict) -> str:
    """:func:`train`'s work, holding the lock on ``out``."""
    import torch
    from sb3_contrib import MaskablePPO

    from caishen.agents.ppo import save_policy
    from caishen.envs.sb3_vec import BatchedVecEnv

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
    save_policy(model, os.path.join(out, "untrained.safetensors"))
    if cfg["imitate"] > 0:
        t1 = time.time()
        log = imitate(model, env, cfg["imitate"], cfg["imitate_lr"], cfg["seed"] + 7919)
        safeio.atomic_write(os.path.join(out, "imitation.csv"), _csv_text(log))
        model.caishen_meta["imitated"] = int(cfg["imitate"])
        save_policy(model, os.path.join(out, "imitated.safetensors"))
        print(f"imitation of greedy: {cfg['imitate']:,d} steps in {time.time() - t1:.0f}s", flush=True)
        env.seed(cfg["seed"])  # the PPO phase deals from the run's own seed
    print(f"setup {time.time() - t0:.1f}s (numba compiles on the first run); training "
          f"{cfg['timesteps']:,d} steps: {cfg['n_envs']} games x {cfg['n_steps']} steps per rollout", flush=True)
    model.learn(cfg["timesteps"], callback=_curve_callback(os.path.join(out, "curve.csv"), time.time()))
    model.caishen_meta["timesteps"] = int(model.num_timesteps)
    path = save_policy(model, os.path.join(out, "model.safetensors"))
    safeio.write_json(os.path.join(out, "config.json"), {**cfg, "net": net, "seconds": round(time.time() - t0, 1)})
    print(f"saved {path} after {model.num_timesteps:,d} steps, {time.time() - t0:.0f}s", flush=True)
    return path


def evaluate_checkpoints(model_path: str, untrained_path: str | None = None, *, hands: int = 20_480,
                         seed: int = 1_000_000, out: str | None = None, rules: str | None = None) -> list[dict]:
    """Evaluate ``model_path`` (and ``untrained_path`` if given), a random masked policy and the greedy
    bot in the learning seat against three greedy bots on the same deals; print and (with ``out``)
    write ``eval.csv`` / ``eval.md``.  Returns :func:`caishen.agents.ppo.ci_table`'s rows (reference: trained)."""
    from caishen.agents.ppo import PPOAgent, ci_table, evaluate_vs_greedy, format_ci_table

    trained = PPOAgent(model_path)
    meta = trained.meta
    rules = rules or meta.get("rules", DEFAULT)
    policies = {"trained": trained}
    imitated = os.path.join(os.path.dirname(model_path), "imitated.safetensors")
    if os.path.isfile(imitated):
        policies["imitation only"] = PPOAgent(imitated)
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
        safeio.atomic_write(os.path.join(out, "eval.csv"), _csv_text(rows))
        safeio.atomic_write(os.path.join(out, "eval.md"), table + "\n")
    return rows


def _csv_text(rows: list[dict]) -> str:
    """CSV text of a list of dicts (the first row's keys as the header)."""
    import io

    buf = io.StringIO()
    w = csv.DictWriter(buf, fieldnames=list(rows[0]))
    w.writeheader()
    w.writerows(rows)
    return buf.getvalue()


def build_parser() -> argparse.ArgumentParser:
    d = DEFAULTS
    p = argparse.ArgumentParser(prog="python -m caishen.agents.train_ppo", description=__doc__.split("\n\n")[0])
    p.add_argument("--out", default="runs/ppo", help="output folder (default %(default)s)")
    p.add_argument("--evaluate", metavar="MODEL", help="only evaluate this checkpoint (and its folder's "
                   "untrained.safetensors if present)")
    p.add_argument("--rules", default=d["rules"], choices=list(rulesets.names()))
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
                   help="potential-based shaping: c per shanten step (caishen.envs.sb3_vec; 0: off)")
    p.add_argument("--no-assist", action="store_true", help="without the hand-reading block (caishen.envs.assist)")
    p.add_argument("--opponents", default=d["opponents"], help="caishen.sim.bots.policies spec of the three bots")
    p.add_argument("--seat", default=str(d["seat"]), help="learning seat 0..3 (evaluation needs a fixed one)")
    p.add_argument("--seed", type=int, default=d["seed"])
    p.add_argument("--eval-hands", type=int, default=d["eval_hands"], help="hands per policy (0: no evaluation)")
    p.add_argument("--eval-seed", type=int, default=d["eval_seed"])
    p.add_argument("--imitate", type=int, default=d["imitate"],
                   help="kickstart: decisions of imitating the greedy bot before PPO (0: none)")
    p.add_argument("--imitate-lr", type=float, default=d["imitate_lr"])
    p.add_argument("--threads", type=int, default=d["threads"],
                   help="torch threads (default %(default)s; 0: torch's default, one per core)")
    return p


def main(argv: list[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    try:
        if args.evaluate:
            folder = os.path.dirname(args.evaluate)
            untrained = os.path.join(folder, "untrained.safetensors")
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
                     reward=args.reward, reward_scale=args.reward_scale, shaping=args.shaping,
                     assist=not args.no_assist, opponents=args.opponents, seat=seat, seed=args.seed,
                     threads=args.threads, imitate=args.imitate, imitate_lr=args.imitate_lr)
        if args.eval_hands > 0:
            evaluate_checkpoints(path, os.path.join(args.out, "untrained.safetensors"), hands=args.eval_hands,
                                 seed=args.eval_seed, out=args.out)
    except ValueError as e:
        print(f"train_ppo: error: {e}", file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main())
