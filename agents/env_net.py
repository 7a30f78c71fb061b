"""The torch model of the ``cand-mlp`` learned bot: a Q network over the env's candidates, with oracle heads.

Needs torch (the ``[rl]`` extra); ``import caishen.agents`` does not import
this module.  :class:`CandidateNet` is the architecture ``cand-mlp`` of
:mod:`caishen.sim.bots.learned` written in torch, parameter for parameter:

    ``q(a) = w3 . relu(W2 relu(W1 [x(a), c] + b1) + b2) + b3``

``forward(cand, ctx)`` takes ``cand: float[N, 40, 36]`` (the ``candidates``
key of ``observation="candidates"``, :mod:`caishen.envs.observation`) and
``ctx: float[N, 84]`` (its ``context``) and returns ``q: [N, 40]`` (the rows
past ``n`` are garbage: mask them with ``valid``).  Two auxiliary heads read
the last hidden layer for training on the oracle's labels
(:mod:`caishen.envs.oracle`): ``deal_in`` (a logit per candidate: does this
discard deal in now) and ``ready`` (three logits: is opponent +1, +2, +3
ready).  They are never exported: the kernel bot plays ``q`` alone.
:meth:`CandidateNet.export` writes a ``learned:`` weights file
(:func:`caishen.sim.bots.learned.save_learned`); :meth:`CandidateNet.from_file`
reads one.
"""

from __future__ import annotations

import numpy as np
import torch
from torch import nn

from caishen.sim.bots import learned
from caishen.sim.bots.candidates import N_CANDIDATE, N_CONTEXT
from caishen.sim.rules.base import DEFAULT

__all__ = ["CandidateNet", "HIDDEN"]

#: the hidden layers of the trainer's default (and of the shipped ``learned:<rule set>-env``)
HIDDEN = (64, 64)


class CandidateNet(nn.Module):
    """``CandidateNet(hidden=HIDDEN, rules=DEFAULT, dtype=torch.float32)`` (module docstring).  Raises
    ``ValueError`` for hidden sizes outside ``1..MAX_HIDDEN``."""

    def __init__(self, hidden=HIDDEN, rules: str = DEFAULT, dtype=torch.float32):
        super().__init__()
        hidden = tuple(hidden)
        if len(hidden) != 2 or not all(isinstance(h, int) and 1 <= h <= learned.MAX_HIDDEN for h in hidden):
            raise ValueError(f"hidden must be two sizes in 1..{learned.MAX_HIDDEN}, got {hidden!r}")
        h1, h2 = hidden
        self.rules = rules
        self.hidden = hidden
        self.fc1 = nn.Linear(N_CANDIDATE + N_CONTEXT, h1, dtype=dtype)
        self.fc2 = nn.Linear(h1, h2, dtype=dtype)
        self.q = nn.Linear(h2, 1, dtype=dtype)
        self.deal_in = nn.Linear(h2, 1, dtype=dtype)
        self.ready = nn.Linear(h2, 3, dtype=dtype)

    def trunk(self, cand: torch.Tensor, ctx: torch.Tensor) -> torch.Tensor:
        """The last hidden layer ``[N, C, H2]`` of each candidate."""
        c = ctx.unsqueeze(1).expand(-1, cand.shape[1], -1)
        return torch.relu(self.fc2(torch.relu(self.fc1(torch.cat([cand, c], dim=-1)))))

    def forward(self, cand: torch.Tensor, ctx: torch.Tensor) -> torch.Tensor:
        """``cand: [N, C, 36]``, ``ctx: [N, 84]`` -> ``q: [N, C]``."""
        return self.q(self.trunk(cand, ctx)).squeeze(-1)

    def q_packed(self, cand: torch.Tensor, ctx: torch.Tensor, row: torch.Tensor) -> torch.Tensor:
        """``q [K]`` of ``K`` candidates ``cand: [K, 36]`` whose contexts are ``ctx[row]`` (``ctx: [M, 84]``,
        ``row: int64[K]``): :meth:`forward` on the valid candidates only, the context's share of the first
        layer computed once per row (as the kernel does)."""
        n_x = cand.shape[-1]
        w = self.fc1.weight
        hc = ctx @ w[:, n_x:].T + self.fc1.bias
        h = torch.relu(cand @ w[:, :n_x].T + hc[row])
        return self.q(torch.relu(self.fc2(h))).squeeze(-1)

    def heads(self, cand: torch.Tensor, ctx: torch.Tensor):
        """``(q [N, C], deal_in logits [N, C], ready logits [N, C, 3])``."""
        h = self.trunk(cand, ctx)
        return self.q(h).squeeze(-1), self.deal_in(h).squeeze(-1), self.ready(h)

    def arrays(self) -> dict[str, np.ndarray]:
        """The weights file's members (:data:`caishen.sim.bots.learned.CAND_MEMBERS`) as float64 arrays."""
        t = {"w1": self.fc1.weight, "b1": self.fc1.bias, "w2": self.fc2.weight, "b2": self.fc2.bias,
             "w3": self.q.weight[0], "b3": self.q.bias}
        return {k: v.detach().cpu().double().numpy().copy() for k, v in t.items()}

    def export(self, path, meta: dict | None = None) -> str:
        """Write the ``q`` network as a ``learned:`` weights file (``cand-mlp``); returns the path
        (``ValueError`` for NaN weights)."""
        h1, h2 = self.hidden
        return learned.save_learned(path, {"header": learned.cand_header(self.rules, h1, h2, meta),
                                           **self.arrays()})

    def load_arrays(self, arrays: dict[str, np.ndarray]) -> "CandidateNet":
        """Copy the members of a weights file in (the auxiliary heads are left as they are)."""
        with torch.no_grad():
            dt = self.fc1.weight.dtype
            for param, m in ((self.fc1.weight, "w1"), (self.fc1.bias, "b1"), (self.fc2.weight, "w2"),
                             (self.fc2.bias, "b2"), (self.q.bias, "b3")):
                param.copy_(torch.as_tensor(arrays[m], dtype=dt))
            self.q.weight.copy_(torch.as_tensor(arrays["w3"], dtype=dt).reshape(1, -1))
        return self

    @classmethod
    def from_file(cls, path, rules: str | None = None, dtype=torch.float32) -> "CandidateNet":
        """The network of a ``cand-mlp`` weights file (``ValueError`` naming the file and the field)."""
        row, hdr = learned.load_learned(path, rules)
        if hdr["arch"] != learned.ARCH_CAND:
            raise ValueError(f"{path}: field 'arch' is {hdr['arch']!r}; CandidateNet reads {learned.ARCH_CAND!r}")
        return cls(tuple(hdr["layers"]["hidden"]), hdr["rules"], dtype).load_arrays(learned.unpack(row))
