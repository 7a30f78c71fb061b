"""Learning from the env: Monte-Carlo Q over the candidates, from random initialisation (``python -m caishen.agents.train_env``).

The recipe (DouZero's *deep Monte-Carlo*, on this toolkit's batched env):

1. **The env.**  :class:`caishen.envs.vector_env.SelfPlayVectorEnv` with
   ``observation="candidates"`` (every legal action of the seat to act, each
   with the features the tuned and learned bots score, beside the seat's
   context: :mod:`caishen.envs.observation`), ``oracle=True`` (training labels
   from the hidden state, :mod:`caishen.envs.oracle`) and ``reward="scaled"``
   (points / the rule set's ``reward_scale``).  One episode is one hand.
2. **The network.**  :class:`caishen.agents.env_net.CandidateNet` from
   random initialisation (``--seed``): ``q(a)`` per candidate, an MLP over
   ``[x(a), context]``, and two oracle heads on its last hidden layer.
3. **Self-play against a pool.**  At every hand each seat of each game is
   played by the current network (probability ``--self``) or by a member of
   the pool: one of the last ``--pool`` snapshots of the network (one every
   ``--snapshot-every`` updates) or ``greedy``, a registry bot as an
   *opponent* (nothing imitates it).  The current network acts
   epsilon-greedily on ``q`` (``--eps`` down to ``--eps-final`` over the
   first half of the budget); only its decisions are learned from.
4. **Targets.**  A decision's target is its seat's points of the hand /
   ``reward_scale`` (the Monte-Carlo return of the hand); the loss is the
   Huber loss of ``q`` of the chosen candidate, plus ``--aux`` times the
   binary cross-entropies of the oracle heads: ``deal_in`` of a chosen discard
   (does it deal in now) and ``ready`` of each opponent.  Adam, ``--lr``
   decayed along a cosine to a tenth of it at the end of the budget (the
   targets are noisy: a smaller step averages more hands), minibatches of
   ``--batch`` over each rollout of ``--steps`` env steps.
5. **Budget.**  ``--cpu-minutes`` of this process's CPU time spent on
   training (the evaluations below are counted apart, and reported; a
   resumed run counts on), and ``--wall-minutes`` if given.
6. **Curve and export.**  Every ``--eval-every`` updates a duplicate-deal
   evaluation in the env (``--eval-walls`` walls of seed ``--seed + EVAL_SEED``,
   each in both seatings ``N G N G`` / ``G N G N``: the network's points per
   hand minus greedy's, with its 95% CI over walls) goes to ``DIR/curve.csv``,
   and ``DIR/learned.npz`` (``learned:DIR/learned.npz``, architecture
   ``cand-mlp``: the exported network plays in every command without torch,
   :mod:`caishen.sim.bots.learned`) and ``DIR/checkpoint.pt`` are rewritten
   (atomically: an interrupted run keeps its last ones; the same command
   resumes from the checkpoint).

**DAgger** (``--expert SPEC``, any bot of the registry): the same loop with
the current network in every seat, each decision labelled with the expert's
action (``env.bot_actions(SPEC)``), the roll-in following the expert with
probability ``beta`` (1 at the start, halved every ``--snapshot-every``
updates), and the cross-entropy of ``softmax(q)`` over the candidates to
the expert's candidate as the loss, on the aggregated labelled states (the
newest ``DAGGER_BUFFER``).  The curve adds ``agree``: how often the
network's choice is the expert's on the newest states.

Needs torch (the ``[rl]`` extra).  Measured curves and the shipped bot
(``learned:<rule set>-env``): ``docs/learning.md``.
"""

from __future__ import annotations

import argparse
import copy
import csv
import json
import os
import sys
import time
from dataclasses import asdict, dataclass, fields
from pathlib import Path

import numpy as np

from caishen.sim.rules.base import DEFAULT

__all__ = ["Config", "EVAL_SEED", "DAGGER_BUFFER", "train", "evaluate", "main"]

#: the evaluation's seed is ``seed + EVAL_SEED`` (training games are seeded ``seed * 10**6 + ...``: never those)
EVAL_SEED = 7_000_003
#: labelled states kept by DAgger (the newest)
DAGGER_BUFFER = 60_000
_CURVE = ("update", "train_cpu_s", "eval_cpu_s", "wall_s", "decisions", "hands", "eps", "loss", "q_loss", "aux_loss",
          "vs_greedy", "vs_greedy_lo", "vs_greedy_hi", "agree")
_RING = 8  # hands per game remembered for the returns


@dataclass
class Config:
    """The trainer's settings (the command's flags, module docstring)."""

    rules: str = DEFAULT
    out: str = "runs/train_env"
    envs: int = 256
    hidden: tuple = (64, 64)
    lr: float = 1e-3
    batch: int = 1024
    steps: int = 64
    self_share: float = 0.5
    pool: int = 4
    snapshot_every: int = 50
    greedy_share: float = 0.5
    eps: float = 0.1
    eps_final: float = 0.01
    aux: float = 0.5
    cpu_minutes: float = 30.0
    wall_minutes: float = 0.0
    max_updates: int = 0
    eval_every: int = 100
    eval_walls: int = 1000
    seed: int = 0
    threads: int = 1
    device: str = "cpu"
    expert: str = ""


def _torch():
    try:
        import torch
    except ImportError:
        raise ValueError("train_env needs torch: install a CPU build of torch, then pip install 'caishen[rl]' "
                         "(docs/tutorials/train-a-bot.md)") from None
    return torch


def _q_valid(net, torch, device, cand, ctx, valid) -> np.ndarray:
    """``q: float32[M, 40]`` of the rows (``-inf`` past the valid candidates), through
    :meth:`CandidateNet.q_packed` on the valid candidates only."""
    row, col = np.nonzero(valid)
    with torch.no_grad():
        qk = net.q_packed(torch.from_numpy(cand[row, col]).to(device), torch.from_numpy(ctx).to(device),
                          torch.from_numpy(row).to(device)).float().cpu().numpy()
    q = np.full(valid.shape, -np.inf, np.float32)
    q[row, col] = qk
    return q


def _random_valid(rng, valid: np.ndarray) -> np.ndarray:
    """A uniformly random valid candidate index per row."""
    return np.argmax(rng.random(valid.shape) * valid, axis=1)


def evaluate(net, rules: str, walls: int, seed: int, opponent: str = "greedy", batch: int = 500,
             device: str = "cpu") -> tuple[float, float, float]:
    """``(mean, lo, hi)``: the points per hand of ``net`` (a :class:`CandidateNet`, played greedily on ``q``)
    minus those of the bot ``opponent`` on ``walls`` duplicate deals (game seeds ``seed + i``, one hand each,
    both seatings: the net in seats 0 and 2, then 1 and 3), with the 95% CI over walls (normal)."""
    torch = _torch()
    from caishen.envs.vector_env import SelfPlayVectorEnv

    diffs = []
    for start in range(0, walls, batch):
        m = min(batch, walls - start)
        env = SelfPlayVectorEnv(m, rules, observation="candidates", final_obs=False)
        per = np.zeros(m)
        for seating in (0, 1):
            obs, info = env.reset(seed=int(seed) + start)
            done = np.zeros(m, bool)
            pts = np.zeros((m, 4))
            while not done.all():
                player = info["current_player"]
                mine = (player % 2) == seating
                acts = env.bot_actions(opponent).copy()
                idx = np.flatnonzero(mine & ~done)
                if idx.size:
                    valid = obs["valid"][idx].astype(bool)
                    q = _q_valid(net, torch, device, obs["candidates"][idx], obs["context"][idx], valid)
                    acts[idx] = obs["actions"][idx, q.argmax(1)]
                obs, _, term, _, info = env.step(acts)
                new = term & ~done
                pts[new] = info["hand_points"][new]
                done |= term
            seats = [seating, seating + 2]
            others = [1 - seating, 3 - seating]
            per += (pts[:, seats].mean(1) - pts[:, others].mean(1)) / 2
        diffs.append(per)
    d = np.concatenate(diffs)
    half = 1.96 * d.std(ddof=1) / np.sqrt(len(d)) if len(d) > 1 else float("nan")
    return float(d.mean()), float(d.mean() - half), float(d.mean() + half)


class _Returns:
    """Per game: the hand counter and the last :data:`_RING` hands' rewards of each seat."""

    def __init__(self, n: int):
        self.hand = np.zeros(n, np.int64)
        self.ret = np.zeros((n, _RING, 4), np.float32)

    def end(self, games: np.ndarray, rewards: np.ndarray) -> None:
        self.ret[games, self.hand[games] % _RING] = rewards
        self.hand[games] += 1

    def split(self, game, hand, seat):
        """``(done: bool[m], target: float32[m])`` of the decisions ``(game, hand, seat)``."""
        done = hand < self.hand[game]
        return done, self.ret[game, hand % _RING, seat]


def _save_checkpoint(torch, path: Path, state: dict) -> None:
    tmp = path.with_suffix(".tmp")
    torch.save(state, tmp)
    os.replace(tmp, path)


def _append_curve(path: Path, row: dict) -> None:
    new = not path.exists()
    with open(path, "a", newline="") as f:
        w = csv.DictWriter(f, fieldnames=_CURVE)
        if new:
            w.writeheader()
        w.writerow({k: row.get(k, "") for k in _CURVE})


def train(cfg: Config, log=print) -> dict:
    """Run the recipe of the module docstring with ``cfg``; returns the last curve row (with ``"path"``, the
    exported weights).  Raises ``ValueError`` for bad settings or a checkpoint of other settings."""
    torch = _torch()
    from caishen.agents.env_net import CandidateNet
    from caishen.envs.vector_env import SelfPlayVectorEnv
    from caishen.sim.bots import registry

    _check(cfg)
    torch.set_num_threads(cfg.threads)
    device = torch.device(cfg.device)
    out = Path(cfg.out)
    out.mkdir(parents=True, exist_ok=True)
    torch.manual_seed(cfg.seed)
    rng = np.random.default_rng(cfg.seed)
    net = CandidateNet(tuple(cfg.hidden), cfg.rules).to(device)
    opt = torch.optim.Adam(net.parameters(), lr=cfg.lr)
    ck = out / "checkpoint.pt"
    counters = {"update": 0, "train_cpu_s": 0.0, "eval_cpu_s": 0.0, "decisions": 0, "hands": 0, "wall_s": 0.0}
    pool_states: list[dict] = []
    if ck.exists():
        try:  # tensors and plain containers only: a checkpoint runs no code
            state = torch.load(ck, map_location=device, weights_only=True)
            saved = {k: (tuple(v) if isinstance(v, list) else v) for k, v in json.loads(state["config"]).items()}
        except Exception as e:  # noqa: BLE001 (any damage: one line naming the file)
            raise ValueError(f"{ck}: not a checkpoint of this trainer ({str(e).splitlines()[0][:80]})") from None
        mine = {k: (tuple(v) if isinstance(v, list) else v) for k, v in asdict(cfg).items()}
        for k in ("rules", "hidden", "expert"):
            if saved.get(k) != mine[k]:
                raise ValueError(f"{ck}: written with {k}={saved.get(k)!r}, not {mine[k]!r}; use another --out")
        net.load_state_dict(state["net"])
        opt.load_state_dict(state["opt"])
        counters.update(json.loads(state["counters"]))
        pool_states = state["pool"]
        log(f"resumed at update {counters['update']} ({counters['train_cpu_s']:.0f} CPU-s of training)")
    pool = []
    for ps in pool_states:
        p = CandidateNet(tuple(cfg.hidden), cfg.rules).to(device)
        p.load_state_dict(ps)
        pool.append(p.eval())

    dagger = bool(cfg.expert)
    if dagger:
        registry.parse(cfg.expert)  # the registry's message for a bad spec
    n = cfg.envs
    log(f"{'DAgger from ' + cfg.expert if dagger else 'DMC self-play'}, {cfg.rules}, {n} games at a time, budget "
        f"{cfg.cpu_minutes} CPU-minutes; a line per evaluation (every {cfg.eval_every} updates)")
    env = SelfPlayVectorEnv(n, cfg.rules, observation="candidates", oracle=True, reward="scaled", final_obs=False)
    obs, info = env.reset(seed=cfg.seed * 10**6 + counters["update"] * n)
    oracle = info["oracle"]
    player = info["current_player"]
    ar = np.arange(n)
    owner = np.zeros((n, 4), np.int64)  # 0: the current net; 1..len(pool): a snapshot; -1: greedy

    def draw_owners(games):
        m = len(games)
        greedy = (rng.random((m, 4)) < cfg.greedy_share) | (len(pool) == 0)
        pick = np.where(greedy, -1, 1 + rng.integers(0, max(len(pool), 1), (m, 4)))
        owner[games] = 0 if dagger else np.where(rng.random((m, 4)) < cfg.self_share, 0, pick)

    draw_owners(ar)
    returns = _Returns(n)
    budget = cfg.cpu_minutes * 60.0
    t_wall0 = time.time() - counters["wall_s"]
    t_cpu0 = time.process_time() - counters["train_cpu_s"] - counters["eval_cpu_s"]
    pending = None  # DMC: decisions whose hand has not ended yet
    buffer = None  # DAgger: the aggregated labelled states
    last: dict = {}
    while True:
        spent = time.process_time() - t_cpu0 - counters["eval_cpu_s"]
        if spent >= budget or (cfg.max_updates and counters["update"] >= cfg.max_updates) or (
                cfg.wall_minutes and time.time() - t_wall0 >= cfg.wall_minutes * 60):
            break
        frac = min(spent / max(budget / 2, 1e-9), 1.0)
        eps = cfg.eps + (cfg.eps_final - cfg.eps) * frac
        for grp in opt.param_groups:
            grp["lr"] = float(cfg.lr * (0.55 + 0.45 * np.cos(np.pi * min(spent / budget, 1.0))))
        beta = 0.5 ** (counters["update"] // max(cfg.snapshot_every, 1))
        rows = []
        net.eval()
        for _ in range(cfg.steps):
            valid = obs["valid"].astype(bool)
            own = owner[ar, player]
            acts = np.full(n, -1, np.int64)
            g = own == -1
            bot = env.bot_actions(cfg.expert if dagger else "greedy").copy() if dagger or g.any() else acts
            idx = np.flatnonzero(own == 0)
            if idx.size:
                q = _q_valid(net, torch, device, obs["candidates"][idx], obs["context"][idx], valid[idx])
                pick = q.argmax(1)
                if dagger:
                    follow = rng.random(idx.size) < beta
                    acts[idx] = np.where(follow, bot[idx], obs["actions"][idx, pick])
                    expert_pos = np.argmax(obs["actions"][idx] == bot[idx, None], axis=1)
                    rows.append((obs["candidates"][idx].astype(np.float16), obs["context"][idx].copy(),
                                 valid[idx], expert_pos, pick == expert_pos))
                else:
                    explore = rng.random(idx.size) < eps
                    if explore.any():
                        pick[explore] = _random_valid(rng, valid[idx][explore])
                    acts[idx] = obs["actions"][idx, pick]
                    a = acts[idx]
                    kind = np.where(a < 68, a % 34, 0)
                    deal = np.where(a < 68, oracle["deal_in"][idx, kind].astype(np.float32), -1.0)
                    rows.append((idx, player[idx].copy(), returns.hand[idx].copy(),
                                 obs["candidates"][idx, pick].copy(), obs["context"][idx].copy(), deal,
                                 oracle["ready"][idx].astype(np.float32)))
            for j, p in enumerate(pool, start=1):
                jdx = np.flatnonzero(own == j)
                if jdx.size:
                    q = _q_valid(p, torch, device, obs["candidates"][jdx], obs["context"][jdx], valid[jdx])
                    acts[jdx] = obs["actions"][jdx, q.argmax(1)]
            acts[g] = bot[g]
            obs, rew, term, trunc, info = env.step(acts)
            oracle = info["oracle"]
            player = info["current_player"]
            counters["decisions"] += int(idx.size)
            ended = np.flatnonzero(term | trunc)
            if ended.size:
                counters["hands"] += int(ended.size)
                returns.end(ended, rew[ended])
                draw_owners(ended)
        net.train()
        if dagger:
            buffer = _grow(buffer, rows)
            loss, q_loss, aux_loss, agree = _dagger_update(net, opt, torch, device, buffer, cfg, rng)
        else:
            pending = _grow(pending, rows, dmc=True)
            done, target = returns.split(pending[0], pending[2], pending[1])
            ready = [a[done] for a in pending]
            pending = [a[~done] for a in pending]
            loss, q_loss, aux_loss = _dmc_update(net, opt, torch, device, ready, target[done], cfg, rng)
            agree = float("nan")
        counters["update"] += 1
        last = {"update": counters["update"], "eps": round(eps, 4), "loss": loss, "q_loss": q_loss,
                "aux_loss": aux_loss, "agree": agree}
        if counters["update"] % cfg.snapshot_every == 0 and not dagger:
            pool.append(copy.deepcopy(net).eval())
            pool = pool[-cfg.pool:]
        if counters["update"] % cfg.eval_every == 0:
            last = _checkpoint(cfg, torch, net, opt, pool, counters, t_cpu0, t_wall0, last, device, log)
    last = _checkpoint(cfg, torch, net, opt, pool, counters, t_cpu0, t_wall0, last, device, log)
    return last


def _checkpoint(cfg, torch, net, opt, pool, counters, t_cpu0, t_wall0, last, device, log) -> dict:
    """Evaluate, append to the curve, export ``learned.npz`` and save the checkpoint (module docstring)."""
    out = Path(cfg.out)
    spent = time.process_time() - t_cpu0
    counters["train_cpu_s"] = round(spent - counters["eval_cpu_s"], 1)
    c0 = time.process_time()
    net.eval()
    if cfg.eval_walls:
        m, lo, hi = evaluate(net, cfg.rules, cfg.eval_walls, cfg.seed + EVAL_SEED, device=device)
    else:
        m = lo = hi = float("nan")
    counters["eval_cpu_s"] = round(counters["eval_cpu_s"] + time.process_time() - c0, 1)
    counters["wall_s"] = round(time.time() - t_wall0, 1)
    row = {**last, **{k: counters[k] for k in ("train_cpu_s", "eval_cpu_s", "wall_s", "decisions", "hands")},
           "vs_greedy": round(m, 4), "vs_greedy_lo": round(lo, 4), "vs_greedy_hi": round(hi, 4)}
    _append_curve(out / "curve.csv", row)
    meta = {"trainer": "caishen.agents.train_env", "mode": "dagger" if cfg.expert else "dmc",
            "config": asdict(cfg), "update": counters["update"], "train_cpu_s": counters["train_cpu_s"],
            "decisions": counters["decisions"], "vs_greedy": None if np.isnan(m) else [m, lo, hi],
            "eval_seed": cfg.seed + EVAL_SEED}
    path = copy.deepcopy(net).cpu().double().export(out / "learned.npz", json.loads(json.dumps(meta, default=str)))
    _save_checkpoint(torch, out / "checkpoint.pt",
                     {"net": net.state_dict(), "opt": opt.state_dict(), "pool": [p.state_dict() for p in pool],
                      "config": json.dumps(asdict(cfg)), "counters": json.dumps(counters)})
    log(" ".join(f"{k}={v}" for k, v in row.items() if not (isinstance(v, float) and np.isnan(v))))  # no agree=nan
    return {**row, "path": path}


def _grow(acc, rows, dmc: bool = False):
    """Concatenate the rollout's rows onto ``acc`` (a list of arrays; DAgger keeps the newest
    :data:`DAGGER_BUFFER`)."""
    if not rows:
        return acc
    cols = [np.concatenate(c) for c in zip(*rows)]
    if acc is not None:
        cols = [np.concatenate([a, c]) for a, c in zip(acc, cols)]
    if not dmc:
        cols = [c[-DAGGER_BUFFER:] for c in cols]
    return cols


def _dmc_update(net, opt, torch, device, ready, target, cfg, rng):
    """One pass of minibatches over the decisions whose hands ended: ``(loss, q_loss, aux_loss)``."""
    _, _, _, x, ctx, deal, rdy = ready
    m = len(target)
    if m == 0:
        return float("nan"), float("nan"), float("nan")
    order = rng.permutation(m)
    tot = qs = aux = 0.0
    nb = 0
    bce = torch.nn.functional.binary_cross_entropy_with_logits
    for s in range(0, m, cfg.batch):
        b = order[s:s + cfg.batch]
        xt = torch.from_numpy(x[b]).to(device).unsqueeze(1)
        ct = torch.from_numpy(ctx[b]).to(device)
        q, d, r = net.heads(xt, ct)
        q_loss = torch.nn.functional.huber_loss(q[:, 0], torch.from_numpy(target[b]).to(device))
        dl = torch.from_numpy(deal[b]).to(device)
        has = dl >= 0
        a_loss = bce(r[:, 0], torch.from_numpy(rdy[b]).to(device))
        if bool(has.any()):
            a_loss = a_loss + bce(d[:, 0][has], dl[has])
        loss = q_loss + cfg.aux * a_loss
        opt.zero_grad()
        loss.backward()
        opt.step()
        tot += loss.item()
        qs += q_loss.item()
        aux += a_loss.item()
        nb += 1
    return round(tot / nb, 5), round(qs / nb, 5), round(aux / nb, 5)


def _dagger_update(net, opt, torch, device, buffer, cfg, rng):
    """One pass over a sample of the aggregated states (as many as the rollout brought): cross-entropy to the
    expert's candidate.  Returns ``(loss, loss, 0, agree)``, ``agree`` on the newest states before the update."""
    x, ctx, valid, target, agreed = buffer
    m = len(target)
    fresh = agreed[-cfg.steps * cfg.envs // 2:]
    agree = round(float(fresh.mean()), 4) if len(fresh) else float("nan")
    take = rng.permutation(m)[: min(m, cfg.steps * cfg.envs)]
    tot, nb = 0.0, 0
    for s in range(0, len(take), cfg.batch):
        b = take[s:s + cfg.batch]
        q = net(torch.from_numpy(x[b].astype(np.float32)).to(device), torch.from_numpy(ctx[b]).to(device))
        q = q.masked_fill(~torch.from_numpy(valid[b]).to(device), -1e9)
        loss = torch.nn.functional.cross_entropy(q, torch.from_numpy(target[b]).to(device))
        opt.zero_grad()
        loss.backward()
        opt.step()
        tot += loss.item()
        nb += 1
    v = round(tot / max(nb, 1), 5)
    return v, v, 0.0, agree


def _check(cfg: Config) -> None:
    from caishen.sim import rules as rulesets
    from caishen.sim.engine import load_rules

    load_rules(cfg.rules, None)  # ValueError naming an unknown rule set
    if cfg.rules not in rulesets.names():
        raise ValueError(f"--rules {cfg.rules!r}: a registered rule set's name")
    for name in ("envs", "batch", "steps", "snapshot_every", "eval_every", "threads"):
        v = getattr(cfg, name)
        if isinstance(v, bool) or not isinstance(v, int) or v < 1:
            raise ValueError(f"--{name.replace('_', '-')} {v!r}: must be an integer >= 1")
    for name in ("pool", "eval_walls", "max_updates"):
        v = getattr(cfg, name)
        if isinstance(v, bool) or not isinstance(v, int) or v < 0:
            raise ValueError(f"--{name.replace('_', '-')} {v!r}: must be an integer >= 0")
    for name in ("self_share", "greedy_share", "eps", "eps_final"):
        v = getattr(cfg, name)
        if not 0.0 <= v <= 1.0:
            raise ValueError(f"--{name.replace('_', '-')} {v!r}: must lie in [0, 1]")
    if not (cfg.lr > 0 and cfg.aux >= 0 and cfg.cpu_minutes > 0 and cfg.wall_minutes >= 0):
        raise ValueError("--lr and --cpu-minutes must be > 0, --aux and --wall-minutes >= 0")
    if cfg.eval_walls == 1:
        raise ValueError("--eval-walls 1: give 0 (no evaluation) or at least 2 walls (a CI)")
    if cfg.device != "cpu" and not cfg.device.startswith("cuda"):
        raise ValueError(f"--device {cfg.device!r}: cpu or cuda[:N]")


def add_arguments(p: argparse.ArgumentParser) -> None:
    """The command's flags (one per :class:`Config` field)."""
    d = Config()
    p.add_argument("--rules", default=d.rules, help=f"rule set (default {d.rules})")
    p.add_argument("--out", default=d.out, help="run directory: curve.csv, learned.npz, checkpoint.pt (resumes)")
    p.add_argument("--envs", type=int, default=d.envs, help="games stepped together (default %(default)s)")
    p.add_argument("--hidden", type=int, nargs=2, default=list(d.hidden), help="hidden layers (default 64 64)")
    p.add_argument("--lr", type=float, default=d.lr, help="Adam learning rate (default %(default)s)")
    p.add_argument("--batch", type=int, default=d.batch, help="minibatch (default %(default)s)")
    p.add_argument("--steps", type=int, default=d.steps, help="env steps per update (default %(default)s)")
    p.add_argument("--self", dest="self_share", type=float, default=d.self_share,
                   help="share of seats the current network plays (default %(default)s)")
    p.add_argument("--pool", type=int, default=d.pool, help="snapshots kept in the pool (default %(default)s)")
    p.add_argument("--snapshot-every", type=int, default=d.snapshot_every,
                   help="updates between snapshots (DAgger: between halvings of beta; default %(default)s)")
    p.add_argument("--greedy-share", type=float, default=d.greedy_share,
                   help="share of the pool's seats played by greedy (default %(default)s)")
    p.add_argument("--eps", type=float, default=d.eps, help="exploration at the start (default %(default)s)")
    p.add_argument("--eps-final", type=float, default=d.eps_final, help="... after half the budget")
    p.add_argument("--aux", type=float, default=d.aux, help="weight of the oracle heads' loss (default %(default)s)")
    p.add_argument("--cpu-minutes", type=float, default=d.cpu_minutes,
                   help="training budget in CPU minutes of this process, evaluations apart (default %(default)s)")
    p.add_argument("--wall-minutes", type=float, default=d.wall_minutes,
                   help="also stop after this many wall minutes (0: no limit; a GPU job's bound)")
    p.add_argument("--max-updates", type=int, default=d.max_updates, help="stop after this many updates (0: none)")
    p.add_argument("--eval-every", type=int, default=d.eval_every, help="updates between evaluations")
    p.add_argument("--eval-walls", type=int, default=d.eval_walls, help="walls per evaluation (0: none)")
    p.add_argument("--seed", type=int, default=d.seed, help="seed of the network, the games and the evaluation")
    p.add_argument("--threads", type=int, default=d.threads, help="torch threads (default %(default)s)")
    p.add_argument("--device", default=d.device, help="torch device: cpu or cuda (batched inference and updates)")
    p.add_argument("--expert", default=d.expert,
                   help="DAgger from this bot spec (e.g. tuned:NAME, greedy) instead of Monte-Carlo Q (module docstring)")


def config_of(args: argparse.Namespace) -> Config:
    """The :class:`Config` of parsed arguments."""
    kw = {f.name: getattr(args, f.name) for f in fields(Config)}
    kw["hidden"] = tuple(kw["hidden"])
    return Config(**kw)


def main(argv=None) -> int:
    """``python -m caishen.agents.train_env [flags]``: train, print the curve rows, export ``OUT/learned.npz``."""
    p = argparse.ArgumentParser(prog="python -m caishen.agents.train_env", description=__doc__.split("\n\n")[0])
    add_arguments(p)
    args = p.parse_args(argv)
    try:
        row = train(config_of(args), log=lambda s: print(s, flush=True))
    except ValueError as e:
        print(f"train_env: {e}", file=sys.stderr)
        return 2
    print(f"exported {row['path']} (learned:{row['path']})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
