"""Train a mahjong bot from the env's candidates, from scratch: a minimal deep Monte-Carlo loop to copy.

Every legal action of the seat to act is a candidate row of features (``observation="candidates"``);
a network scores each row, the seat plays the best (or a random one, epsilon of the time), and every
decision is regressed on the points its seat won or lost in that hand.  Self-play: the network plays
all four seats.  About 5 CPU-minutes lift it from random to about greedy's level; the full recipe
(a pool of opponents, oracle heads, evaluations, checkpoints) is ``python -m caishen.agents.train_env``.

    python examples/train_candidates.py --minutes 5 --out my_bot.npz
    caishen match --policies learned:my_bot.npz,greedy --walls 2000 --seed 99 --out runs/my_match
"""

import argparse
import time

import numpy as np
import torch

from caishen.agents.env_net import CandidateNet
from caishen.envs.vector_env import SelfPlayVectorEnv

p = argparse.ArgumentParser()
p.add_argument("--minutes", type=float, default=5.0, help="CPU minutes to train")
p.add_argument("--out", default="my_bot.npz", help="the exported learned bot")
p.add_argument("--games", type=int, default=256)
args = p.parse_args()

torch.set_num_threads(1)
torch.manual_seed(0)
rng = np.random.default_rng(0)
net = CandidateNet(hidden=(64, 64))
opt = torch.optim.Adam(net.parameters(), lr=1e-3)
env = SelfPlayVectorEnv(args.games, "kaihua", observation="candidates", reward="scaled", final_obs=False)
obs, info = env.reset(seed=0)
hand = np.zeros(args.games, int)  # hands finished per game
open_rows = []  # (game, hand, seat, chosen features, context) of decisions whose hand is running
start = time.process_time()
while time.process_time() - start < args.minutes * 60:
    data = []
    for _ in range(64):  # play 64 steps of every game
        valid = obs["valid"].astype(bool)
        with torch.no_grad():
            q = net(torch.from_numpy(obs["candidates"]), torch.from_numpy(obs["context"])).numpy()
        q[~valid] = -np.inf
        pick = q.argmax(1)
        explore = rng.random(args.games) < 0.05
        pick[explore] = np.argmax(rng.random(valid.shape) * valid, axis=1)[explore]
        seat = info["current_player"]
        rows = np.arange(args.games)
        open_rows.append((rows, hand.copy(), seat.copy(), obs["candidates"][rows, pick].copy(),
                          obs["context"].copy()))
        obs, rewards, ended, _, info = env.step(obs["actions"][rows, pick])
        for g in np.flatnonzero(ended):  # the hand's points of every seat: the target of its decisions
            data.append((g, hand[g], rewards[g].copy()))
            hand[g] += 1
    # decisions of the hands that ended get their seat's points; the others wait for their hand's end
    points = {(g, h): r for g, h, r in data}
    g, h, s, x, c = (np.concatenate(a) for a in zip(*open_rows))
    done = np.array([(gi, hi) in points for gi, hi in zip(g, h)])
    target = np.array([points[(gi, hi)][si] for gi, hi, si in zip(g[done], h[done], s[done])], np.float32)
    open_rows = [(g[~done], h[~done], s[~done], x[~done], c[~done])]
    order = rng.permutation(done.sum())
    xd, cd = x[done], c[done]
    for b in range(0, len(order), 1024):
        i = order[b:b + 1024]
        q = net(torch.from_numpy(xd[i]).unsqueeze(1), torch.from_numpy(cd[i]))[:, 0]
        loss = torch.nn.functional.huber_loss(q, torch.from_numpy(target[i]))
        opt.zero_grad()
        loss.backward()
        opt.step()
    print(f"{time.process_time() - start:6.0f} CPU-s  hands {hand.sum():7d}  loss {loss.item():.4f}", flush=True)

net.double().export(args.out, {"example": "examples/train_candidates.py"})
print(f"wrote {args.out}: play it as learned:{args.out}")
