"""A python: seat (docs/arena.md): a policy that acts on a batch of decisions at once.

    caishen match --policies "python:examples/bots/python_seat.py:Policy,greedy" --walls 200 --out runs/py

The arena host calls ``act(obs, mask)`` with the observations of every game waiting for this seat
(``uint8[n, 76, 34]`` planes, or what the class declares: ``observation = "flat"`` and ``history = True``
give ``float32[n, 2599]``, as ``gymnasium.make_vec(..., observation="flat", history=True)``) and
``mask: bool[n, 145]``, and takes back ``int[n]`` legal actions.  A torch policy does the same with
``torch.from_numpy(obs)`` and one forward pass for the whole batch.

This one needs only numpy: it wins when it can, never claims, and otherwise discards the kind it holds the
fewest of (read from the planes' row 0, its own concealed tiles), never the joker (row 26) while it has
another discard, ties broken at random.
"""

import numpy as np

#: actions (caishen.sim.engine.layout): discards 0..33, win 141, pass 142
WIN, PASS, N_KINDS = 141, 142, 34


class Policy:
    """``act(obs, mask) -> int64[n]``; ``reset()`` is called before each batch of hands."""

    observation = "planes"  # the make_vec argument of the same name (planes is the default)

    def __init__(self):
        self.rng = np.random.default_rng(0)

    def reset(self):
        self.rng = np.random.default_rng(0)

    def act(self, obs: np.ndarray, mask: np.ndarray) -> np.ndarray:
        n = len(mask)
        held = obs[:, 0, :].astype(np.float64)  # row 0: own concealed tiles per kind
        joker = obs[:, 26, :].astype(np.float64)  # row 26: the joker kind (none: all 0)
        score = -held - 10.0 * joker + self.rng.random((n, N_KINDS)) * 0.5
        score = np.where(mask[:, :N_KINDS], score, -np.inf)
        out = score.argmax(axis=1)
        out = np.where(mask[:, PASS], PASS, out)  # a claim on offer: decline it
        out = np.where(mask[:, WIN], WIN, out)
        none = ~mask[np.arange(n), out]  # no discard, win or pass legal (a kong-only or 硬子 decision)
        out[none] = mask[none].argmax(axis=1)
        return out.astype(np.int64)
