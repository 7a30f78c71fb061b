"""The torch model of the learned kernel bot (:mod:`caishen.sim.bots.learned`): train it here, play it there.

Needs torch (the ``[rl]`` extra); ``import caishen.agents`` does not import
this module.  :class:`ActionMLP` is the architecture ``action-mlp`` of
:mod:`caishen.sim.bots.learned` written in torch, parameter for parameter:

    ``logit(a) = linear . x(a) + w3 . relu(W2 relu(W1 [x(a), c] + b1) + b2) + b3``

``forward(x, ctx)`` takes ``x: float[N, C, 17]`` (each candidate's ``action``
v1 features) and ``ctx: float[N, 83]`` (``context`` v1) and returns the
logits ``float[N, C]``; which candidates exist (``n``), and the bot's fixed
rules (wins, kongs, 硬子) are the kernel's (:func:`caishen.sim.bots.learned.decisions`
collects both).  :meth:`ActionMLP.export` writes a ``learned:`` weights file
(:func:`caishen.sim.bots.learned.save_learned`), :meth:`ActionMLP.from_file`
reads one (validated as the kernel reads it).  The kernel's linear part sums
the tuned bot's raw terms in the tuned bot's order; torch's dot product sums
the same products in another order, so the two agree to about 1e-12.
"""

from __future__ import annotations

import numpy as np
import torch
from torch import nn

from caishen.sim.bots import learned
from caishen.sim.rules.base import DEFAULT

__all__ = ["ActionMLP"]


class ActionMLP(nn.Module):
    """``ActionMLP(hidden=(32, 16), rules=DEFAULT, dtype=torch.float64)``: the learned bot's network
    (module docstring).  ``linear``: the tuned bot's 17 weights (a parameter)."""

    def __init__(self, hidden: tuple[int, int] = (32, 16), rules: str = DEFAULT, dtype=torch.float64):
        super().__init__()
        h1, h2 = hidden
        if not all(isinstance(h, int) and 1 <= h <= learned.MAX_HIDDEN for h in hidden):
            raise ValueError(f"hidden must be two sizes in 1..{learned.MAX_HIDDEN}, got {hidden!r}")
        self.rules = rules
        self.linear = nn.Parameter(torch.zeros(learned.N_ACTION, dtype=dtype))
        self.fc1 = nn.Linear(learned.N_ACTION + learned.N_CONTEXT, h1, dtype=dtype)
        self.fc2 = nn.Linear(h1, h2, dtype=dtype)
        self.fc3 = nn.Linear(h2, 1, dtype=dtype)

    def forward(self, x: torch.Tensor, ctx: torch.Tensor) -> torch.Tensor:
        """``x: [N, C, 17]``, ``ctx: [N, 83]`` -> logits ``[N, C]``."""
        c = ctx.unsqueeze(1).expand(-1, x.shape[1], -1)
        h = torch.relu(self.fc1(torch.cat([x, c], dim=-1)))
        h = torch.relu(self.fc2(h))
        return (x * self.linear).sum(-1) + self.fc3(h).squeeze(-1)

    def arrays(self) -> dict[str, np.ndarray]:
        """The weights file's members (:data:`caishen.sim.bots.learned.MEMBERS`) as float64 arrays."""
        t = {"linear": self.linear, "w1": self.fc1.weight, "b1": self.fc1.bias, "w2": self.fc2.weight,
             "b2": self.fc2.bias, "w3": self.fc3.weight[0], "b3": self.fc3.bias}
        return {k: v.detach().cpu().double().numpy().copy() for k, v in t.items()}

    def export(self, path, meta: dict | None = None) -> str:
        """Write this network as a ``learned:`` weights file; returns the path (``ValueError`` for NaN weights)."""
        h1, h2 = self.fc1.out_features, self.fc2.out_features
        return learned.save_learned(path, {"header": learned.header(self.rules, h1, h2, meta), **self.arrays()})

    def load_arrays(self, arrays: dict[str, np.ndarray]) -> "ActionMLP":
        """Copy the members of a weights file in (shapes as this network's)."""
        with torch.no_grad():
            dt = self.linear.dtype
            self.linear.copy_(torch.as_tensor(arrays["linear"], dtype=dt))
            self.fc1.weight.copy_(torch.as_tensor(arrays["w1"], dtype=dt))
            self.fc1.bias.copy_(torch.as_tensor(arrays["b1"], dtype=dt))
            self.fc2.weight.copy_(torch.as_tensor(arrays["w2"], dtype=dt))
            self.fc2.bias.copy_(torch.as_tensor(arrays["b2"], dtype=dt))
            self.fc3.weight.copy_(torch.as_tensor(arrays["w3"], dtype=dt).reshape(1, -1))
            self.fc3.bias.copy_(torch.as_tensor(arrays["b3"], dtype=dt))
        return self

    @classmethod
    def from_file(cls, path, rules: str | None = None, dtype=torch.float64) -> "ActionMLP":
        """The network of a ``learned:`` weights file (``ValueError`` naming the file and the field)."""
        row, hdr = learned.load_learned(path, rules)
        h1, h2 = hdr["layers"]["hidden"]
        return cls((h1, h2), hdr["rules"], dtype).load_arrays(learned.unpack(row))
