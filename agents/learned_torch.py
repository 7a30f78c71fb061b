"""The torch models of the learned kernel bot (:mod:`caishen.sim.bots.learned`): train them here, play them there.

Needs torch (the ``[rl]`` extra); ``import caishen.agents`` does not import
this module.  :class:`ActionMLP` is the architecture ``action-mlp`` of
:mod:`caishen.sim.bots.learned` written in torch, parameter for parameter,
and :class:`ActionConv` the architecture ``action-conv`` (below);
:func:`conv_model_from_tuned` builds the conv net that plays as the tuned
bot (a zero head), :func:`model_from_file` reads a file of either.  The MLP:

    ``logit(a) = linear . x(a) + w3 . relu(W2 relu(W1 [x(a), c] + b1) + b2) + b3``

``forward(x, ctx)`` takes ``x: float[N, C, 17]`` (each candidate's ``action``
v1 features) and ``ctx: float[N, 83]`` (``context`` v1) and returns the
logits ``float[N, C]``; which candidates exist (``n``), and the bot's fixed
rules (wins, kongs, 硬子) are the kernel's (:func:`caishen.sim.bots.learned.decisions`
collects both).  :meth:`ActionMLP.export` writes a ``learned:`` weights file
(:func:`caishen.sim.bots.learned.save_learned`), :meth:`ActionMLP.from_file`
reads one (validated as the kernel reads it).  :class:`OracleHeads`: the
training-only auxiliary heads of ``caishen learn --aux`` on the MLP's last
hidden layer (:meth:`ActionMLP.hidden`), never exported.  The kernel's linear part sums
the tuned bot's raw terms in the tuned bot's order; torch's dot product sums
the same products in another order, so the two agree to about 1e-12.

:class:`ActionConv`: ``forward(x, kinds, cand)`` takes ``x: float[N, C, 17]``,
``kinds: float[N, 15, 34]`` (``kinds`` v1 planes) and ``cand: int64[N, C]``
(the score each candidate reads: ``h * 34 + kind``, ``h`` 0 discard, 1 claim;
-1 for ``pass`` and past ``n``; :func:`caishen.sim.bots.learned.decisions`
records both) and returns ``linear . x + S[cand]`` with the score map ``S``
of the conv.  The conv within each suit is written here as torch's
``conv1d`` (padding 1) on the three suits as three sequences of 9, and the
honors through the middle tap alone: a formulation apart from the kernel's
scatter loops, tested equal on 10,000+ states.
"""

from __future__ import annotations

import numpy as np
import torch
from torch import nn

from caishen.sim.bots import learned
from caishen.sim.rules.base import DEFAULT

__all__ = ["ActionMLP", "OracleHeads", "ActionConv", "conv_model_from_tuned", "model_from_file"]


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

    def logits(self, x: torch.Tensor, ctx: torch.Tensor) -> torch.Tensor:
        """:meth:`forward`'s logits for training (``caishen learn``'s update): the first layer's context
        part once per state and its action part per candidate, as the kernel computes it (half the
        multiplications; the sums round differently from :meth:`forward` in the last bits)."""
        return self.head(x, self.hidden(x, ctx))

    def hidden(self, x: torch.Tensor, ctx: torch.Tensor) -> torch.Tensor:
        """The last hidden layer ``[N, C, H2]`` of each candidate, as :meth:`logits` computes it (what the
        oracle heads read, :class:`OracleHeads`)."""
        w = self.fc1.weight
        hc = torch.nn.functional.linear(ctx, w[:, learned.N_ACTION:], self.fc1.bias)
        h = torch.relu(torch.matmul(x, w[:, :learned.N_ACTION].T) + hc.unsqueeze(1))
        return torch.relu(self.fc2(h))

    def head(self, x: torch.Tensor, h: torch.Tensor) -> torch.Tensor:
        """The logits ``[N, C]`` from the features ``x: [N, C, 17]`` and the last hidden layer ``h``
        (:meth:`hidden`)."""
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
        if hdr["arch"] != learned.ARCH:
            raise ValueError(f"{path}: field 'arch' is {hdr['arch']!r}; ActionMLP reads {learned.ARCH!r} "
                             "(model_from_file reads either)")
        h1, h2 = hdr["layers"]["hidden"]
        return cls((h1, h2), hdr["rules"], dtype).load_arrays(learned.unpack(row))


class OracleHeads(nn.Module):
    """``OracleHeads(h2, dtype=torch.float64)``: the training-only auxiliary heads of ``caishen learn --aux``
    on an :class:`ActionMLP`'s last hidden layer ``h: [N, C, H2]`` (:meth:`ActionMLP.hidden`), as the env
    trainer's (:class:`caishen.agents.env_net.CandidateNet`): ``deal_in``, a logit per candidate (does this
    discard deal in now), and ``ready``, three logits per state (is opponent +1, +2, +3 ready) from the mean of
    ``h`` over the state's valid candidates.  Their targets are the labels' oracle
    (:mod:`caishen.sim.selfplay.labels`, "Oracle targets"); they are never exported (the weights file and the
    kernel's forward pass are the :class:`ActionMLP`'s alone) and feed nothing into the logits: they shape
    the hidden layer through the shared loss only."""

    def __init__(self, h2: int, dtype=torch.float64):
        super().__init__()
        self.deal_in = nn.Linear(h2, 1, dtype=dtype)
        self.ready = nn.Linear(h2, 3, dtype=dtype)

    def forward(self, h: torch.Tensor, valid: torch.Tensor):
        """``h: [N, C, H2]``, ``valid: bool[N, C]`` -> ``(deal_in logits [N, C], ready logits [N, 3])``."""
        w = valid.to(h.dtype).unsqueeze(-1)
        pooled = (h * w).sum(1) / w.sum(1).clamp(min=1.0)
        return self.deal_in(h).squeeze(-1), self.ready(pooled)


def _suit_conv(conv: nn.Conv1d, h: torch.Tensor) -> torch.Tensor:
    """``relu(conv(h))`` over the 34 kinds of ``h: [N, I, 34]`` within each suit (module docstring)."""
    n, i = h.shape[0], h.shape[1]
    suits = h[:, :, :27].reshape(n, i, 3, 9).permute(0, 2, 1, 3).reshape(n * 3, i, 9)
    o = conv.out_channels
    s = torch.nn.functional.conv1d(suits, conv.weight, conv.bias, padding=1)
    s = s.reshape(n, 3, o, 9).permute(0, 2, 1, 3).reshape(n, o, 27)
    honors = torch.einsum("oi,nik->nok", conv.weight[:, :, 1], h[:, :, 27:]) + conv.bias[None, :, None]
    return torch.relu(torch.cat([s, honors], dim=-1))


class ActionConv(nn.Module):
    """``ActionConv(channels=(16, 16), rules=DEFAULT, dtype=torch.float64)``: the ``action-conv`` network
    (module docstring; ``channels`` ``(C1,)`` or ``(C1, C2)``, each in ``1..MAX_CHANNELS``).  ``linear``:
    the tuned bot's 17 weights (a parameter); ``head`` maps the last layer's channels to the two score
    rows (discard, claim) per kind."""

    def __init__(self, channels=(16, 16), rules: str = DEFAULT, dtype=torch.float64):
        super().__init__()
        channels = tuple(channels)
        if not (len(channels) in (1, 2) and all(isinstance(c, int) and not isinstance(c, bool)
                                                and 1 <= c <= learned.MAX_CHANNELS for c in channels)):
            raise ValueError(f"channels must be one or two sizes in 1..{learned.MAX_CHANNELS}, got {channels!r}")
        self.rules = rules
        self.channels = channels
        self.linear = nn.Parameter(torch.zeros(learned.N_ACTION, dtype=dtype))
        self.conv1 = nn.Conv1d(learned.N_PLANES, channels[0], learned.KERNEL, dtype=dtype)
        self.conv2 = nn.Conv1d(channels[0], channels[1], learned.KERNEL, dtype=dtype) if len(channels) == 2 else None
        self.head = nn.Conv1d(channels[-1], learned.N_HEADS, 1, dtype=dtype)

    def scores(self, kinds: torch.Tensor) -> torch.Tensor:
        """The score map ``[N, 2, 34]`` of the planes ``kinds: [N, 15, 34]``."""
        h = _suit_conv(self.conv1, kinds)
        if self.conv2 is not None:
            h = _suit_conv(self.conv2, h)
        return self.head(h)

    def forward(self, x: torch.Tensor, kinds: torch.Tensor, cand: torch.Tensor) -> torch.Tensor:
        """``x: [N, C, 17]``, ``kinds: [N, 15, 34]``, ``cand: int64[N, C]`` -> logits ``[N, C]``."""
        s = self.scores(kinds).flatten(1)  # [N, 68]: h * 34 + kind
        extra = torch.gather(s, 1, cand.clamp(min=0)).masked_fill(cand < 0, 0.0)
        return (x * self.linear).sum(-1) + extra

    def logits(self, x: torch.Tensor, kinds: torch.Tensor, cand: torch.Tensor) -> torch.Tensor:
        """:meth:`forward` (the training path's name, as :meth:`ActionMLP.logits`)."""
        return self.forward(x, kinds, cand)

    def arrays(self) -> dict[str, np.ndarray]:
        """The weights file's members (:data:`caishen.sim.bots.learned.CONV_MEMBERS`) as float64 arrays."""
        t = {"linear": self.linear, "conv1_w": self.conv1.weight, "conv1_b": self.conv1.bias}
        if self.conv2 is not None:
            t.update(conv2_w=self.conv2.weight, conv2_b=self.conv2.bias)
        t.update(head_w=self.head.weight[:, :, 0], head_b=self.head.bias)
        return {k: v.detach().cpu().double().numpy().copy() for k, v in t.items()}

    def export(self, path, meta: dict | None = None) -> str:
        """Write this network as a ``learned:`` weights file; returns the path (``ValueError`` for NaN weights)."""
        return learned.save_learned(path, {"header": learned.conv_header(self.rules, self.channels, meta),
                                           **self.arrays()})

    def load_arrays(self, arrays: dict[str, np.ndarray]) -> "ActionConv":
        """Copy the members of a weights file in (shapes as this network's)."""
        with torch.no_grad():
            dt = self.linear.dtype
            pairs = [(self.linear, "linear"), (self.conv1.weight, "conv1_w"), (self.conv1.bias, "conv1_b"),
                     (self.head.bias, "head_b")]
            if self.conv2 is not None:
                pairs += [(self.conv2.weight, "conv2_w"), (self.conv2.bias, "conv2_b")]
            for param, m in pairs:
                param.copy_(torch.as_tensor(arrays[m], dtype=dt))
            self.head.weight.copy_(torch.as_tensor(arrays["head_w"], dtype=dt).unsqueeze(-1))
        return self

    @classmethod
    def from_file(cls, path, rules: str | None = None, dtype=torch.float64) -> "ActionConv":
        """The network of an ``action-conv`` weights file (``ValueError`` naming the file and the field)."""
        row, hdr = learned.load_learned(path, rules)
        if hdr["arch"] != learned.ARCH_CONV:
            raise ValueError(f"{path}: field 'arch' is {hdr['arch']!r}; ActionConv reads {learned.ARCH_CONV!r} "
                             "(model_from_file reads either)")
        return cls(tuple(hdr["layers"]["channels"]), hdr["rules"], dtype).load_arrays(learned.unpack(row))


def conv_model_from_tuned(rules: str = DEFAULT, channels=(16, 16), seed: int = 0, dtype=torch.float64) -> ActionConv:
    """The start of training for the conv: :class:`ActionConv` with the tuned weights of ``rules`` as
    ``linear``, small random conv layers (``seed``) and a zero head
    (:func:`caishen.sim.bots.learned.conv_from_tuned`): it plays as ``tuned:rules``."""
    from caishen.sim.bots.registry import load_tuned

    w, _ = load_tuned(rules)
    net = learned.conv_from_tuned(w, channels, seed, rules)
    return ActionConv(channels, rules, dtype).load_arrays(net)


def model_from_file(path, rules: str | None = None, dtype=torch.float64):
    """The torch model (:class:`ActionMLP` or :class:`ActionConv`, by the header's ``arch``) of a
    ``learned:`` weights file (``ValueError`` naming the file and the field)."""
    _, hdr = learned.load_learned(path, rules)
    cls = ActionConv if hdr["arch"] == learned.ARCH_CONV else ActionMLP
    return cls.from_file(path, rules, dtype)
