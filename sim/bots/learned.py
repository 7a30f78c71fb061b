"""Learned policies as kernel bots: a numba forward pass that scores each legal action, from a weights file.

``learned:PATH`` (:mod:`caishen.sim.bots.registry`) plays a small network
inside the self-play kernels, so it sits in every seat of ``simulate``,
``match``, the sweeps, the studies and the envs' opponents without torch.

Three architectures, chosen by the header's ``arch``; the first two are
*action-scoring heads* on top of the tuned bot's linear score.  Their fixed rules are the
tuned bot's (:mod:`caishen.sim.bots.tuned`): a win is always taken, greedy's
kongs stand, 硬子 is always declared (J-4.2), a discard is made as
``declare <k>`` when that is legal (J-4.1).  Every other decision is a
choice among candidates: on its own turn the legal discards, on a claim
``pass`` and each legal pong, exposed kong or chow.

``action-mlp``: candidate ``a`` gets the logit

    ``logit(a) = lin . f(a) + w3 . relu(W2 relu(W1 [x(a), c] + b1) + b2) + b3``

with ``x(a): float64[17]`` the ``action`` v1 features of ``a`` and ``c:
float64[83]`` the ``context`` v1 features of the seat
(:mod:`caishen.sim.bots.features`; ``pass`` has ``x = 0``).

``action-conv``: a small 1-D convolution over the 34 kinds of the seat's
``kinds`` v1 planes ``K: float64[15, 34]`` (own hand, each seat's discards
and melds, the copies seen, the tile on offer, the joker: public
information and the own hand only) gives two per-kind scores ``S: [2, 34]``
(row 0 *discard*, row 1 *claim*):

    ``H1 = relu(conv3(W1, K) + b1)``, ``H2 = relu(conv3(W2, H1) + b2)`` (the second layer optional),
    ``S[h, k] = hb[h] + sum_c hw[h, c] H[c, k]``, and
    ``logit(discard k) = lin . f(a) + S[0, k]``, ``logit(claim a of the tile t) = lin . f(a) + S[1, t]``,
    ``logit(pass) = 0``.

``conv3`` has kernel size 3 *within each suit*: kind ``k`` of a suit reads
kinds ``k - 1, k, k + 1`` of the same suit only (a 9 never sees the next
suit's 1: the three suits are padded with zeros apart, as three sequences of
9), and an honor (``1z..7z``, no neighbours) reads only itself, through the
middle tap of the same weights; the ``honor`` and ``terminal`` planes of
``kinds`` let the filters tell those kinds apart.  A pong, an exposed kong
and a chow of the tile on offer share ``S[1, t]`` (their linear parts differ).

``cand-mlp`` (:mod:`caishen.agents.train_env`'s export): no fixed rules, no linear part; every legal
action is a candidate with the env's ``observation="candidates"`` features (one encoder,
:mod:`caishen.sim.bots.candidates`): ``q(a) = w3 . relu(W2 relu(W1 [x(a), c] + b1) + b2) + b3``
with ``x(a): float64[36]`` (``candidates`` v1), ``c: float64[84]`` (``candidates-context`` v1); it
plays the first candidate of the largest ``q`` (as ``torch.argmax``), by the ``action-mlp`` kernels.

In the first two, the linear part ``lin . f(a)`` is computed exactly as the tuned bot
scores (same terms, same order: :func:`caishen.sim.bots.tuned._discard_linear`),
so a network whose last layer is zero (MLP: ``w3 = 0``, ``b3 = 0``,
:func:`from_tuned`; conv: ``hw = 0``, ``hb = 0``, :func:`conv_from_tuned`)
plays exactly as ``tuned`` with the weights ``lin``.  The bot plays the
candidate of the largest logit: ties go to the later kind on a discard (as
tuned), and a claim is made only if its logit beats ``pass``'s.  The torch
models of the same architectures are :mod:`caishen.agents.learned_torch`
(tested equal on 10,000+ states).

Weights file (``.npz``, read with ``allow_pickle=False``: nothing in it can
run code).  Members, nothing else: ``header`` (``uint8[]``: UTF-8 JSON) and
the arrays of its architecture (float32 or float64, every value finite):

* ``action-mlp``: ``linear`` ``[17]``, ``w1`` ``[H1, 100]``, ``b1`` ``[H1]``,
  ``w2`` ``[H2, H1]``, ``b2`` ``[H2]``, ``w3`` ``[H2]``, ``b3`` ``[1]``;
* ``cand-mlp``: the same without ``linear``, ``w1`` ``[H1, 120]``;
* ``action-conv``: ``linear`` ``[17]``, ``conv1_w`` ``[C1, 15, 3]``,
  ``conv1_b`` ``[C1]``, with a second layer ``conv2_w`` ``[C2, C1, 3]``,
  ``conv2_b`` ``[C2]``, then ``head_w`` ``[2, C]`` (``C`` the last layer's
  channels), ``head_b`` ``[2]`` (torch's ``Conv1d`` weight layout
  ``[out, in, tap]``, tap 0 reading kind ``k - 1``).

The header:

=================  =============================================================
field              value
=================  =============================================================
``format``         :data:`FORMAT` (``"caishen-learned-1"``)
``arch``           ``"action-mlp"``, ``"action-conv"`` or ``"cand-mlp"`` (:data:`ARCHS`)
``rules``          the rule set it plays (another one is refused)
``feature_sets``   ``{"action": {"name": "action", "version": 1}, "context":
                   {"name": "context", "version": 1}}`` (MLP) or ``{"action":
                   ..., "kinds": {"name": "kinds", "version": 1}}`` (conv),
                   ``{"candidates": ..., "context": {"name":
                   "candidates-context", "version": 1}}`` (cand-mlp);
                   another set or version is refused
                   (:func:`caishen.sim.bots.features.check_feature_set`)
``layers``         MLP: ``{"n_action": 17, "n_context": 83, "hidden": [H1,
                   H2]}`` (``1 <= H <= 256``); conv: ``{"n_action": 17,
                   "n_planes": 15, "channels": [C1] or [C1, C2], "kernel": 3,
                   "heads": 2}`` (``1 <= C <= 64``); cand-mlp: ``{"n_candidate":
                   36, "n_context": 84, "hidden": [H1, H2]}``; every member's
                   shape must follow
``meta``           free JSON (how it was trained)
=================  =============================================================

A missing, truncated or oversized file (:data:`MAX_FILE`), a link or other
non-regular file, a foreign zip member, an unknown ``arch``, a wrong shape or
dtype, a NaN or infinite weight: one ``ValueError`` naming the file and the field.

Kernel layout: a file becomes one ``float64`` row (:func:`pack`): its
architecture's code (:data:`ARCH_CODES`: 0 MLP, 1 conv, 2 cand-mlp: the MLP body, ``linear`` 0),
then its body.  The MLP body: the four sizes ``n_action, n_context, H1, H2``, then ``linear, w1.T,
b1, w2.T, b2, w3, b3`` flattened row-major: the weight matrices transposed, so
that the forward pass adds one input's column of weights to all the units of a
layer at once (contiguous, vectorized by LLVM) and skips an input that is 0
(most context inputs, every other candidate's half of ``x``, a unit the ReLU
cut).  The conv body: ``n_planes, C1, C2 (0: one layer), heads``, then
``linear``, ``conv1_w`` as ``[in, tap, out]``, ``conv1_b``, (``conv2_w`` as
``[in, tap, out]``, ``conv2_b``), ``head_w.T`` (``[C, 2]``), ``head_b``: again
one input value's weights to every output channel are contiguous, and a zero
input (most of the planes) is skipped; the layers' outputs are kind-major
``[34, C]``.  The rows of the four seats travel as the bot context's weights
(``bx.weights``, padded to the longest row; the tuned bot reads the first 17 values
of its row, a learned bot all of it) and the scratch of :func:`new_scratch` as
its slot of the bot context (``bx.slots[0]``, :mod:`caishen.sim.bots.registry`).
The conv score map is computed once per decision, into the scratch (the
first layer at every kind, the second layer and the head only at the kinds
the candidates read: the discardable kinds, or the tile on offer): no
allocation per decision in either architecture.
"""

from __future__ import annotations

import io
import json
import zipfile
from typing import NamedTuple

import numpy as np
from numba import njit

from caishen.sim import safeio
from caishen.sim.rules.base import DEFAULT
from caishen.sim.bots.candidates import N_CANDIDATE, N_CONTEXT as N_CAND_CONTEXT, _context_from_planes, _encode_candidates
from caishen.sim.bots.features import FEATURE_SETS, _encode, _encode_context, _encode_kinds, check_feature_set, context_tables
from caishen.sim.bots.policies import _claim_shanten, _wall_gone, new_work
from caishen.sim.bots.tuned import (
    N_W,
    _W_LIVE,
    _W_TMP,
    _claim_linear,
    _discard_action,
    _discard_features,
    _discard_linear,
    _turn_context,
)
from caishen.sim.engine import (
    A_CHOW_LOW,
    A_DISCARD,
    A_HARD_DECLARE,
    A_KONG_EXPOSED,
    A_PASS,
    A_PONG,
    A_WIN,
    EP_JOKER,
    N_KINDS,
    PH_HARD,
    PH_TURN,
    SC_PHASE,
    SC_TILE,
    SC_TO_ACT,
    SF_N_MELDS,
)

__all__ = ["FORMAT", "ARCH", "ARCH_CONV", "ARCH_CAND", "ARCHS", "CAND_MEMBERS", "cand_header", "ARCH_CODES", "MAX_FILE", "MAX_HIDDEN", "MAX_CHANNELS", "N_ACTION",
           "N_CONTEXT", "N_PLANES", "N_HEADS", "KERNEL", "MEMBERS", "CONV_MEMBERS", "load_learned", "save_learned", "from_tuned",
           "conv_from_tuned", "header", "conv_header", "pack", "unpack", "new_scratch", "conv_forward", "decisions",
           "LearnedScratch"]

#: the ``format`` of a weights file's header
FORMAT = "caishen-learned-1"
#: the MLP architecture (the first of this format)
ARCH = "action-mlp"
#: the 1-D convolution over the 34 kinds
ARCH_CONV = "action-conv"
#: the MLP over every candidate of the env's ``observation="candidates"`` (no fixed rules)
ARCH_CAND = "cand-mlp"
#: the architectures of this format
ARCHS = (ARCH, ARCH_CONV, ARCH_CAND)
#: the code of each architecture, ``row[0]`` of a kernel row (module docstring, "Kernel layout")
ARCH_CODES = {ARCH: 0, ARCH_CONV: 1, ARCH_CAND: 2}
_CODE_CONV = 1  # ARCH_CODES[ARCH_CONV] as a plain int: a compile-time constant of the kernels
_CODE_CAND = 2
#: the zip members of a cand-mlp weights file, in packing order
CAND_MEMBERS = ("w1", "b1", "w2", "b2", "w3", "b3")
#: bytes of a weights file at most (the default network is ~40 KB)
MAX_FILE = 32 << 20
#: the largest hidden layer (MLP)
MAX_HIDDEN = 256
#: the most channels of a conv layer
MAX_CHANNELS = 64
#: inputs: per-action features (``action`` v1) and context features (``context`` v1)
N_ACTION = FEATURE_SETS["action"].rows
N_CONTEXT = FEATURE_SETS["context"].rows
#: the conv's input planes (``kinds`` v1) and its score rows (0 discard, 1 claim)
N_PLANES = FEATURE_SETS["kinds"].rows
N_HEADS = 2
#: the conv's kernel size (within a suit; module docstring)
KERNEL = 3
#: the zip members of an MLP weights file, in packing order after ``header``
MEMBERS = ("linear", "w1", "b1", "w2", "b2", "w3", "b3")
#: the zip members of a conv weights file (``conv2_*`` only with two layers), in packing order
CONV_MEMBERS = ("linear", "conv1_w", "conv1_b", "conv2_w", "conv2_b", "head_w", "head_b")
#: the members stored transposed in the kernel row (module docstring, "Kernel layout")
_TRANSPOSED = ("w1", "w2", "head_w")
_CONV_W = ("conv1_w", "conv2_w")  # [out, in, tap] stored as [in, tap, out]
#: at most this many candidates per decision (34 discards; pass + pong + kong + 3 chows)
MAX_CANDIDATES = 40
_HDR = 4
# rows of the float scratch
_R_CTX, _R_HC, _R_H1, _R_H2, _R_X, _R_LOGIT = range(6)
assert N_ACTION == N_W


def _shapes(h1: int, h2: int) -> dict[str, tuple[int, ...]]:
    return {"linear": (N_ACTION,), "w1": (h1, N_ACTION + N_CONTEXT), "b1": (h1,), "w2": (h2, h1), "b2": (h2,),
            "w3": (h2,), "b3": (1,)}


def _conv_shapes(channels) -> dict[str, tuple[int, ...]]:
    c = list(channels)
    out = {"linear": (N_ACTION,), "conv1_w": (c[0], N_PLANES, KERNEL), "conv1_b": (c[0],)}
    if len(c) == 2:
        out.update(conv2_w=(c[1], c[0], KERNEL), conv2_b=(c[1],))
    out.update(head_w=(N_HEADS, c[-1]), head_b=(N_HEADS,))
    return out


def _cand_shapes(h1: int, h2: int) -> dict[str, tuple[int, ...]]:
    return {m: v for m, v in _shapes(h1, h2).items() if m != "linear"} | {"w1": (h1, N_CANDIDATE + N_CAND_CONTEXT)}


def cand_header(rules: str, h1: int, h2: int, meta: dict | None = None) -> dict:
    """The JSON header of a ``cand-mlp`` weights file (module docstring)."""
    return {"format": FORMAT, "arch": ARCH_CAND, "rules": rules,
            "feature_sets": {"candidates": FEATURE_SETS["candidates"].header(),
                             "context": FEATURE_SETS["candidates-context"].header()},
            "layers": {"n_candidate": N_CANDIDATE, "n_context": N_CAND_CONTEXT, "hidden": [int(h1), int(h2)]},
            "meta": dict(meta or {})}


def _arch_shapes(hdr: dict) -> dict[str, tuple[int, ...]]:
    """The members and shapes a checked header asks for."""
    if hdr["arch"] == ARCH_CAND:
        return _cand_shapes(*hdr["layers"]["hidden"])
    if hdr["arch"] == ARCH_CONV:
        return _conv_shapes(hdr["layers"]["channels"])
    return _shapes(*hdr["layers"]["hidden"])


def header(rules: str, h1: int, h2: int, meta: dict | None = None) -> dict:
    """The JSON header of an ``action-mlp`` weights file (module docstring)."""
    return {"format": FORMAT, "arch": ARCH, "rules": rules,
            "feature_sets": {"action": FEATURE_SETS["action"].header(), "context": FEATURE_SETS["context"].header()},
            "layers": {"n_action": N_ACTION, "n_context": N_CONTEXT, "hidden": [int(h1), int(h2)]},
            "meta": dict(meta or {})}


def conv_header(rules: str, channels, meta: dict | None = None) -> dict:
    """The JSON header of an ``action-conv`` weights file with ``channels`` ``[C1]`` or ``[C1, C2]``."""
    return {"format": FORMAT, "arch": ARCH_CONV, "rules": rules,
            "feature_sets": {"action": FEATURE_SETS["action"].header(), "kinds": FEATURE_SETS["kinds"].header()},
            "layers": {"n_action": N_ACTION, "n_planes": N_PLANES, "channels": [int(c) for c in channels],
                       "kernel": KERNEL, "heads": N_HEADS},
            "meta": dict(meta or {})}


def _stored(m: str, a) -> np.ndarray:
    a = np.asarray(a, np.float64)
    if m in _CONV_W:
        return a.transpose(1, 2, 0).ravel()
    return (a.T if m in _TRANSPOSED else a).ravel()


def pack(arrays: dict[str, np.ndarray], arch: str = ARCH) -> np.ndarray:
    """The kernel row ``float64[P]`` of a network's arrays of architecture ``arch`` (module docstring,
    "Kernel layout"): ``row[0]`` the arch code, then its body."""
    if arch == ARCH_CONV:
        c1 = arrays["conv1_w"].shape[0]
        c2 = arrays["conv2_w"].shape[0] if "conv2_w" in arrays else 0
        parts = [np.array([ARCH_CODES[arch], N_PLANES, c1, c2, N_HEADS], np.float64)]
        parts += [_stored(m, arrays[m]) for m in CONV_MEMBERS if m in arrays]
        return np.concatenate(parts)
    h1, h2 = arrays["w1"].shape[0], arrays["w2"].shape[0]
    if arch == ARCH_CAND:  # the MLP body with the candidates' sizes and a zero linear part
        arrays = {**arrays, "linear": np.zeros(N_CANDIDATE)}
        parts = [np.array([ARCH_CODES[arch], N_CANDIDATE, N_CAND_CONTEXT, h1, h2], np.float64)]
    else:
        parts = [np.array([ARCH_CODES[arch], N_ACTION, N_CONTEXT, h1, h2], np.float64)]
    parts += [_stored(m, arrays[m]) for m in MEMBERS]
    return np.concatenate(parts)


def unpack(row: np.ndarray) -> dict[str, np.ndarray]:
    """The arrays of a kernel row (the inverse of :func:`pack`; padding after the row is ignored)."""
    if int(row[0]) == ARCH_CODES[ARCH_CONV]:
        c1, c2 = int(row[2]), int(row[3])
        shapes = _conv_shapes([c1] + ([c2] if c2 else []))
    elif int(row[0]) == _CODE_CAND:
        shapes = {"linear": (N_CANDIDATE,), **_cand_shapes(int(row[3]), int(row[4]))}
    else:
        shapes = _shapes(int(row[3]), int(row[4]))
    out, i = {}, 1 + _HDR
    for m, shape in shapes.items():
        n = int(np.prod(shape))
        flat = row[i:i + n]
        if m in _CONV_W:
            out[m] = flat.reshape(shape[1], shape[2], shape[0]).transpose(2, 0, 1).copy()
        elif m in _TRANSPOSED:
            out[m] = flat.reshape(shape[::-1]).T.copy()
        else:
            out[m] = flat.reshape(shape).copy()
        i += n
    if int(row[0]) == _CODE_CAND:
        del out["linear"]
    return out


def from_tuned(weights, hidden: tuple[int, int] = (32, 16), seed: int = 0, rules: str = DEFAULT) -> dict:
    """An ``action-mlp`` network that plays exactly as the tuned bot with ``weights: float64[17]``:
    ``linear`` is the weights, ``w1``/``w2`` small random numbers (``seed``), ``w3 = b3 = 0`` (a zero
    residual).  Returns ``{"header": ..., member: array}`` for :func:`save_learned`."""
    from caishen.sim.bots.tuned import check_weights

    h1, h2 = hidden
    rng = np.random.default_rng(seed)
    sh = _shapes(h1, h2)
    arrays = {"linear": check_weights(weights, "from_tuned").copy(),
              "w1": rng.normal(0, 0.1, sh["w1"]), "b1": np.zeros(h1), "w2": rng.normal(0, 0.1, sh["w2"]),
              "b2": np.zeros(h2), "w3": np.zeros(h2), "b3": np.zeros(1)}
    return {"header": header(rules, h1, h2, {"from": "tuned", "residual": "zero"}), **arrays}


def conv_from_tuned(weights, channels=(16, 16), seed: int = 0, rules: str = DEFAULT) -> dict:
    """An ``action-conv`` network that plays exactly as the tuned bot with ``weights: float64[17]``:
    ``linear`` is the weights, the conv layers small random numbers (``seed``, zero biases), the head
    ``head_w = head_b = 0`` (a zero last layer).  ``channels``: ``(C1,)`` or ``(C1, C2)``.  Returns
    ``{"header": ..., member: array}`` for :func:`save_learned`."""
    from caishen.sim.bots.tuned import check_weights

    rng = np.random.default_rng(seed)
    hdr = conv_header(rules, channels, {"from": "tuned", "head": "zero"})
    _check_header("conv_from_tuned", hdr, None)
    arrays = {}
    for m, shape in _conv_shapes(channels).items():
        arrays[m] = rng.normal(0, 0.3, shape) if m in _CONV_W else np.zeros(shape)
    arrays["linear"] = check_weights(weights, "conv_from_tuned").copy()
    return {"header": hdr, **arrays}


def save_learned(path, net: dict) -> str:
    """Write ``net`` (``{"header": dict, member: array}``, as :func:`from_tuned`, :func:`conv_from_tuned`
    or the torch models' export) as a weights file, atomically; returns the path.  The file is checked as
    :func:`load_learned` checks it before it is written (``ValueError`` naming the field)."""
    path = str(path)
    hdr = net["header"]
    _check_header(path, hdr, None)
    shapes = _arch_shapes(hdr)
    extra = sorted(set(net) - {"header"} - set(shapes))
    if extra:
        raise ValueError(f"{path}: member {extra[0]!r} is not one of {hdr['arch']}'s {list(shapes)} "
                         f"(layers {str(hdr['layers'])[:60]})")
    arrays = {m: np.asarray(net[m], np.float64) for m in shapes if m in net}
    _check_arrays(path, hdr, arrays)
    buf = io.BytesIO()
    text = json.dumps(hdr, allow_nan=False, sort_keys=True).encode()
    np.savez(buf, header=np.frombuffer(text, np.uint8), **arrays)
    safeio.atomic_write(path, buf.getvalue())
    return path


def _size_list(v, n_max: int, lengths: tuple[int, ...]) -> bool:
    return (isinstance(v, list) and len(v) in lengths
            and all(isinstance(h, int) and not isinstance(h, bool) and 1 <= h <= n_max for h in v))


def _check_header(where: str, hdr, rules: str | None) -> None:
    """Raise ``ValueError`` naming ``where`` and the field for anything but a valid header."""
    if not isinstance(hdr, dict):
        raise ValueError(f"{where}: field 'header' must be a JSON object")
    if hdr.get("format") != FORMAT:
        raise ValueError(f"{where}: field 'format' is {str(hdr.get('format'))[:40]!r}, expected {FORMAT!r}")
    arch = hdr.get("arch")
    if arch not in ARCHS:
        raise ValueError(f"{where}: field 'arch' is {str(arch)[:40]!r}, expected one of {list(ARCHS)}")
    if not isinstance(hdr.get("rules"), str):
        raise ValueError(f"{where}: field 'rules' must name the rule set the network plays")
    if rules is not None and hdr["rules"] != rules:
        raise ValueError(f"{where}: field 'rules' is {hdr['rules'][:40]!r}, not {rules!r}")
    wanted = {ARCH: ("action", "context"), ARCH_CONV: ("action", "kinds"), ARCH_CAND: ("candidates", "context")}[arch]
    expect = {"candidates": FEATURE_SETS["candidates"], "context": FEATURE_SETS["candidates-context"]} \
        if arch == ARCH_CAND else FEATURE_SETS
    sets = hdr.get("feature_sets")
    if not isinstance(sets, dict) or set(sets) != set(wanted):
        raise ValueError(f"{where}: field 'feature_sets' must hold {' and '.join(map(repr, wanted))} ({arch})")
    for k in wanted:
        check_feature_set(sets[k], expect[k], where, f"feature_sets.{k}")
    layers = hdr.get("layers")
    if arch == ARCH_CAND:
        want = {"n_candidate": N_CANDIDATE, "n_context": N_CAND_CONTEXT}
        if not (isinstance(layers, dict) and set(layers) == {*want, "hidden"} and all(layers[k] == v for k, v in
                want.items()) and _size_list(layers.get("hidden"), MAX_HIDDEN, (2,))):
            raise ValueError(f"{where}: field 'layers' must be {json.dumps(want)[:-1]}, \"hidden\": [H1, H2]}} with "
                             f"1 <= H <= {MAX_HIDDEN}, got {str(layers)[:80]}")
    elif arch == ARCH:
        hid = layers.get("hidden") if isinstance(layers, dict) else None
        if not (isinstance(layers, dict) and layers.get("n_action") == N_ACTION
                and layers.get("n_context") == N_CONTEXT and _size_list(hid, MAX_HIDDEN, (2,))):
            raise ValueError(f"{where}: field 'layers' must be {{\"n_action\": {N_ACTION}, \"n_context\": "
                             f"{N_CONTEXT}, \"hidden\": [H1, H2]}} with 1 <= H <= {MAX_HIDDEN}, got {str(layers)[:80]}")
    else:
        want = {"n_action": N_ACTION, "n_planes": N_PLANES, "kernel": KERNEL, "heads": N_HEADS}
        if not (isinstance(layers, dict) and set(layers) == set(want) | {"channels"}
                and all(layers[k] == v and not isinstance(layers[k], bool) for k, v in want.items())
                and _size_list(layers.get("channels"), MAX_CHANNELS, (1, 2))):
            raise ValueError(f"{where}: field 'layers' must be {{\"n_action\": {N_ACTION}, \"n_planes\": "
                             f"{N_PLANES}, \"channels\": [C1] or [C1, C2], \"kernel\": {KERNEL}, \"heads\": "
                             f"{N_HEADS}}} with 1 <= C <= {MAX_CHANNELS}, got {str(layers)[:100]}")
    if not isinstance(hdr.get("meta", {}), dict):
        raise ValueError(f"{where}: field 'meta' must be a JSON object")


def _check_arrays(where: str, hdr: dict, arrays: dict) -> None:
    """Raise ``ValueError`` naming ``where`` and the member for a missing member, a wrong shape or dtype,
    a NaN or infinite value (``hdr`` already checked)."""
    for m, shape in _arch_shapes(hdr).items():
        a = arrays.get(m)
        if a is None:
            raise ValueError(f"{where}: member {m!r} is missing")
        if a.dtype not in (np.float32, np.float64) or a.shape != shape:
            raise ValueError(f"{where}: member {m!r} is {a.dtype}{list(a.shape)}, expected float{list(shape)}")
        bad = np.flatnonzero(~np.isfinite(a.ravel()))
        if bad.size:
            raise ValueError(f"{where}: member {m!r} holds {float(a.ravel()[bad[0]])!r} at flat index "
                             f"{int(bad[0])}; every weight must be finite")


def load_learned(path, rules: str | None = None) -> tuple[np.ndarray, dict]:
    """``(row: float64[P], header)`` of the weights file ``path`` (module docstring): the kernel row
    (:func:`pack`) and its JSON header.  ``rules``: the rule set it must play (None: any).

    Raises ``ValueError`` naming the file and the field for anything but a valid file (a link or
    non-regular file, too large, not a zip of exactly the members, a damaged member, a wrong header
    or ``arch``, shape or dtype, another rule set or feature set version, a NaN or infinite weight).
    """
    where = str(path)
    try:
        data = safeio.read_bytes(path, MAX_FILE, follow=False, what="a learned weights file")
    except FileNotFoundError:
        raise ValueError(f"{where}: no such weights file") from None
    except safeio.FileError as e:
        raise ValueError(str(e)) from None
    try:
        zf = zipfile.ZipFile(io.BytesIO(data))
        infos = zf.infolist()
    except (zipfile.BadZipFile, OSError, ValueError) as e:
        raise ValueError(f"{where}: not an .npz weights file ({str(e)[:60]})") from None
    names = [i.filename for i in infos]
    if sum(i.file_size for i in infos) > MAX_FILE:
        raise ValueError(f"{where}: its members unpack to more than {MAX_FILE:,} bytes")

    def read(m):  # the .npy header checked before anything is allocated (a huge claimed shape is refused)
        try:
            return safeio.read_npy_member(zf, m + ".npy", MAX_FILE)
        except (ValueError, KeyError) as e:
            raise ValueError(f"{where}: member {m!r}: {str(e)[:160]}") from None

    if "header.npy" not in names:
        raise ValueError(f"{where}: its members are {sorted(names)[:10]}, with no 'header.npy'")
    raw = read("header")
    if raw.dtype != np.uint8 or raw.ndim != 1:
        raise ValueError(f"{where}: member 'header' must be uint8 JSON text")
    try:
        hdr = safeio.parse_json(raw.tobytes())
    except ValueError as e:
        raise ValueError(f"{where}: field 'header' is not strict JSON ({str(e)[:60]})") from None
    _check_header(where, hdr, rules)
    shapes = _arch_shapes(hdr)
    want = {"header.npy"} | {m + ".npy" for m in shapes}
    if sorted(names) != sorted(want):
        raise ValueError(f"{where}: its members are {sorted(names)[:10]}, expected {sorted(want)}")
    arrays = {m: read(m) for m in shapes}
    _check_arrays(where, hdr, arrays)
    return pack(arrays, hdr["arch"]), hdr


class LearnedScratch(NamedTuple):
    """The learned bots' scratch (:func:`new_scratch`): their slot of the bot context (``bx.slots[0]``,
    :mod:`caishen.sim.bots.registry`), filled by :func:`_learned_scores` at each decision."""

    planes: np.ndarray  #: uint8[76, 34]: the ``planes`` feature set of the seat's view (the MLP's context input)
    vectors: np.ndarray  #: float64[6, 256]: rows ``_R_*``: the context, the hidden units, a candidate, the logits
    actions: np.ndarray  #: int64[40]: the candidates' actions, the first ``n``
    ctx_rows: np.ndarray  #: int64[83]: context input ``j`` is ``planes[ctx_rows[j], ctx_cols[j]] * ctx_scale[j]``
    ctx_cols: np.ndarray  #: int64[83]: (:func:`caishen.sim.bots.features.context_tables`)
    ctx_scale: np.ndarray  #: float64[83]
    features: np.ndarray  #: float64[40, 17]: each candidate's ``action`` features
    kinds: np.ndarray  #: float64[15, 34]: the conv's input planes (the ``kinds`` feature set)
    conv: np.ndarray  #: float64[2, 34, 64]: the conv's layer outputs, kind-major
    score: np.ndarray  #: float64[2, 34]: the conv's score map (row 0 discard, row 1 claim)
    cand: np.ndarray  #: int64[40]: the score candidate ``i`` reads, ``h * 34 + kind``, -1 none
    need: np.ndarray  #: uint8[34]: the kinds whose scores the decision reads
    cand_x: np.ndarray  #: float64[40, 36]: cand-mlp's candidates, their ``candidates`` v1 features


def new_scratch() -> LearnedScratch:
    """A zeroed :class:`LearnedScratch` with the ``context`` tables
    (:func:`caishen.sim.bots.features.context_tables`)."""
    rows, cols, scale = context_tables()
    return LearnedScratch(np.zeros((FEATURE_SETS["planes"].rows, N_KINDS), np.uint8), np.zeros((6, MAX_HIDDEN)),
                          np.zeros(MAX_CANDIDATES, np.int64), rows, cols, scale, np.zeros((MAX_CANDIDATES, N_ACTION)),
                          np.zeros((N_PLANES, N_KINDS)), np.zeros((2, N_KINDS, MAX_CHANNELS)),
                          np.zeros((N_HEADS, N_KINDS)), np.full(MAX_CANDIDATES, -1, np.int64),
                          np.zeros(N_KINDS, np.uint8), np.zeros((MAX_CANDIDATES, N_CANDIDATE)))


def conv_forward(row: np.ndarray, kinds: np.ndarray) -> np.ndarray:
    """The score map ``float64[2, 34]`` (row 0 discard, row 1 claim) of the ``action-conv`` kernel row
    ``row`` (:func:`load_learned`) on the planes ``kinds: float[15, 34]``: the kernel's forward pass
    (:func:`_conv_map`), for tests.  Raises ``ValueError`` for a row of another architecture or planes of
    another shape."""
    row = np.ascontiguousarray(row, np.float64)
    if row.ndim != 1 or row.shape[0] < 1 + _HDR or int(row[0]) != _CODE_CONV:
        raise ValueError("conv_forward: row must be an action-conv kernel row (load_learned)")
    kinds = np.ascontiguousarray(kinds, np.float64)
    if kinds.shape != (N_PLANES, N_KINDS):
        raise ValueError(f"conv_forward: kinds must be float[{N_PLANES}, {N_KINDS}], got {list(kinds.shape)}")
    lx = new_scratch()
    lx.need[:] = 1
    _conv_map(row[1:], kinds, lx.conv, lx.score, lx.need)
    return lx.score.copy()


# ---------------------------------------------------------------------------------------------------
# kernels
# ---------------------------------------------------------------------------------------------------
@njit(cache=True)
def _context_hidden(p, ctx, hc):
    """``hc[j] = b1[j] + sum_i W1[j, 17 + i] ctx[i]``: the context's share of the first layer, once per decision
    (the sum in the order of ``i``, inputs that are 0 skipped)."""
    na, nc, h1 = int(p[0]), int(p[1]), int(p[2])
    o_w1 = _HDR + na
    o_b1 = o_w1 + h1 * (na + nc)
    for j in range(h1):
        hc[j] = p[o_b1 + j]
    for i in range(nc):
        v = ctx[i]
        if v != 0.0:
            col = o_w1 + (na + i) * h1
            for j in range(h1):
                hc[j] += p[col + j] * v


@njit(cache=True)
def _residual(p, x, hc, h1v, h2v):
    """The MLP residual of one candidate with action features ``x: float64[17]``."""
    na, nc, h1, h2 = int(p[0]), int(p[1]), int(p[2]), int(p[3])
    o_w1 = _HDR + na
    o_w2 = o_w1 + h1 * (na + nc) + h1
    o_b2 = o_w2 + h2 * h1
    o_w3 = o_b2 + h2
    o_b3 = o_w3 + h2
    for j in range(h1):
        h1v[j] = hc[j]
    for i in range(na):
        v = x[i]
        if v != 0.0:
            col = o_w1 + i * h1
            for j in range(h1):
                h1v[j] += p[col + j] * v
    for j in range(h2):
        h2v[j] = p[o_b2 + j]
    for i in range(h1):
        v = h1v[i]
        if v > 0.0:  # the ReLU: a unit at or below 0 adds nothing
            col = o_w2 + i * h2
            for j in range(h2):
                h2v[j] += p[col + j] * v
        else:
            h1v[i] = 0.0
    for j in range(h2):
        if h2v[j] < 0.0:
            h2v[j] = 0.0
    r = p[o_b3]
    for j in range(h2):
        r += p[o_w3 + j] * h2v[j]
    return r


@njit(cache=True)
def _conv_layer(q, o_w, o_b, inp, n_in, n_out, out):
    """One conv layer (module docstring): ``out[k, c] = relu(b[c] + sum_i sum_t w[c, i, t] in[i, k + t - 1])``
    over the kinds ``k + t - 1`` of ``k``'s own suit (an honor: ``t = 1`` only); ``out: float64[34, >= n_out]``,
    ``inp: [n_in, 34]`` (the planes), scattered input by input (a zero input, most of them, is skipped);
    the weights ``[in, tap, out]`` from ``q[o_w]``, the biases from ``q[o_b]``."""
    for k in range(N_KINDS):
        for c in range(n_out):
            out[k, c] = q[o_b + c]
    for i in range(n_in):
        for j in range(N_KINDS):
            v = inp[i, j]
            if v == 0.0:
                continue
            col = o_w + (3 * i + 1) * n_out  # the middle tap: kind j itself
            for c in range(n_out):
                out[j, c] += q[col + c] * v
            if j < 27:
                if j % 9 != 8:  # kind j is the left neighbour (tap 0) of kind j + 1 of its suit
                    col = o_w + 3 * i * n_out
                    for c in range(n_out):
                        out[j + 1, c] += q[col + c] * v
                if j % 9 != 0:  # ... and the right neighbour (tap 2) of kind j - 1
                    col = o_w + (3 * i + 2) * n_out
                    for c in range(n_out):
                        out[j - 1, c] += q[col + c] * v
    for k in range(N_KINDS):
        for c in range(n_out):
            if out[k, c] < 0.0:
                out[k, c] = 0.0


@njit(cache=True)
def _conv_layer_at(q, o_w, o_b, inp, n_in, n_out, out, need):
    """A conv layer as :func:`_conv_layer` on the kind-major ``inp: [34, >= n_in]``, its outputs only at the
    kinds ``need`` marks (each gathered from its suit neighbours: the same sum, another order)."""
    for k in range(N_KINDS):
        if not need[k]:
            continue
        for c in range(n_out):
            out[k, c] = q[o_b + c]
        for t in range(3):
            j = k + t - 1
            if t != 1 and (k >= 27 or j < 0 or j // 9 != k // 9):  # no neighbour across a suit, none for honors
                continue
            for i in range(n_in):
                v = inp[j, i]
                if v != 0.0:
                    col = o_w + (3 * i + t) * n_out
                    for c in range(n_out):
                        out[k, c] += q[col + c] * v
        for c in range(n_out):
            if out[k, c] < 0.0:
                out[k, c] = 0.0


@njit(cache=True)
def _conv_map(q, kinds, cb, score, need):
    """The conv's score map ``score: float64[2, 34]`` from the planes ``kinds: float64[15, 34]`` at the kinds
    ``need: uint8[34]`` marks (the candidates' kinds; the other columns are left as they were); ``q``: the
    conv body of a kernel row (after its arch code); ``cb: float64[2, 34, >= C]``: the layers' outputs."""
    n_in, c1, c2, heads = int(q[0]), int(q[1]), int(q[2]), int(q[3])
    o_w1 = _HDR + N_ACTION
    o_b1 = o_w1 + n_in * 3 * c1
    o = o_b1 + c1
    _conv_layer(q, o_w1, o_b1, kinds, n_in, c1, cb[0])  # every kind: the input is sparse
    last = cb[0]
    c = c1
    if c2 > 0:
        o_b2 = o + c1 * 3 * c2
        _conv_layer_at(q, o, o_b2, cb[0], c1, c2, cb[1], need)
        o = o_b2 + c2
        last = cb[1]
        c = c2
    o_hb = o + c * heads
    for k in range(N_KINDS):
        if not need[k]:
            continue
        for h in range(heads):
            score[h, k] = q[o_hb + h]
        for j in range(c):
            v = last[k, j]
            if v != 0.0:
                for h in range(heads):
                    score[h, k] += q[o + j * heads + h] * v


@njit(cache=True, inline="always")
def _claim_candidate(p, lx, n, act, base, after, is_pong, opens, gone, conv, tile):
    """Candidate ``n`` of a claim of ``tile``: ``act`` leaving shanten ``after``; returns ``n + 1``.  ``conv``:
    the conv's claim score of the tile is added (else the MLP residual)."""
    x = lx.features[n]
    x[:] = 0.0
    x[12] = 1.0
    x[13] = base - after
    x[14] = opens
    x[15] = 1.0 if is_pong else 0.0
    x[16] = gone
    fb = lx.vectors
    lx.actions[n] = act
    if conv:
        lx.cand[n] = N_KINDS + tile
        fb[_R_LOGIT, n] = _claim_linear(p[_HDR:_HDR + N_ACTION], base, after, is_pong, opens, gone) + lx.score[1, tile]
    else:
        fb[_R_LOGIT, n] = (_claim_linear(p[_HDR:_HDR + N_ACTION], base, after, is_pong, opens, gone)
                           + _residual(p, x, fb[_R_HC], fb[_R_H1], fb[_R_H2]))
    return n + 1


@njit(cache=True)
def _learned_scores(row, st, ep, tabs, mask, work, lx):
    """Fill the candidates of the decision (``lx.actions[:n]``, ``lx.vectors[_R_LOGIT, :n]`` their logits,
    ``lx.features[:n]`` their action features; MLP: ``lx.vectors[_R_CTX]`` the context; conv: ``lx.kinds``
    the planes, ``lx.score`` the score map, ``lx.cand[:n]`` the score each candidate reads) and return
    ``n``; 0 for a
    decision the fixed rules make (win, kong, 硬子).  ``row``: the kernel row (its arch code, then the
    body); ``lx``: the :class:`LearnedScratch`."""
    planes, fb, acts, xs = lx.planes, lx.vectors, lx.actions, lx.features
    conv = row[0] == _CODE_CONV
    p = row[1:]
    phase = st.sc[SC_PHASE]
    if phase == PH_HARD or mask[A_WIN]:
        return 0
    s = st.sc[SC_TO_ACT]
    joker = ep[EP_JOKER]
    gone = _wall_gone(st) / 70.0
    best = base = pong = kong = c0 = c1 = c2 = 0
    if phase == PH_TURN:
        kong, best = _turn_context(st, ep, tabs, mask, work, True)
        if kong >= 0:
            return 0
    else:
        base, pong, kong, c0, c1, c2 = _claim_shanten(st, ep, tabs, mask, work)
    if conv:
        need = lx.need
        for k in range(N_KINDS):
            need[k] = 1 if phase == PH_TURN and mask[A_DISCARD + k] else 0
        if phase != PH_TURN:
            need[st.sc[SC_TILE]] = 1
        _encode_kinds(st, s, joker, planes, lx.kinds)
        _conv_map(p, lx.kinds, lx.conv, lx.score, need)
    else:
        _encode_context(st, s, joker, planes, lx.ctx_rows, lx.ctx_cols, lx.ctx_scale, fb[_R_CTX])
        _context_hidden(p, fb[_R_CTX], fb[_R_HC])
    score = lx.score
    cand = lx.cand
    lin = p[_HDR:_HDR + N_ACTION]
    n = 0
    if phase == PH_TURN:
        for k in range(N_KINDS):
            if not mask[A_DISCARD + k]:
                continue
            f = _discard_features(k, best, joker, tabs, st, work[_W_LIVE], work[_W_TMP], gone, mask, work, True, True)
            x = xs[n]
            x[0] = f[0]
            x[1] = 0.1 * f[1]
            x[2] = f[2]
            x[3] = f[2] * f[3]
            x[4] = f[2] * f[4]
            x[5] = f[5]
            x[6] = f[6]
            x[7] = f[7] / 7.0
            x[8] = f[8] / 14.0
            x[9] = f[9]
            x[10] = f[10]
            x[11] = f[11]
            for i in range(12, N_ACTION):
                x[i] = 0.0
            acts[n] = A_DISCARD + k
            if conv:
                cand[n] = k
                fb[_R_LOGIT, n] = _discard_linear(lin, f) + score[0, k]
            else:
                fb[_R_LOGIT, n] = _discard_linear(lin, f) + _residual(p, x, fb[_R_HC], fb[_R_H1], fb[_R_H2])
            n += 1
        return n
    opens = 1.0 if st.seat[s, SF_N_MELDS] == 0 else 0.0
    tile = st.sc[SC_TILE]
    xs[0, :] = 0.0
    acts[0] = A_PASS
    if conv:
        cand[0] = -1
        fb[_R_LOGIT, 0] = 0.0
    else:
        fb[_R_LOGIT, 0] = _residual(p, xs[0], fb[_R_HC], fb[_R_H1], fb[_R_H2])
    n = 1
    if mask[A_PONG]:
        n = _claim_candidate(p, lx, n, A_PONG, base, pong, True, opens, gone, conv, tile)
    if mask[A_KONG_EXPOSED]:
        n = _claim_candidate(p, lx, n, A_KONG_EXPOSED, base, kong, True, opens, gone, conv, tile)
    if mask[A_CHOW_LOW]:
        n = _claim_candidate(p, lx, n, A_CHOW_LOW, base, c0, False, opens, gone, conv, tile)
    if mask[A_CHOW_LOW + 1]:
        n = _claim_candidate(p, lx, n, A_CHOW_LOW + 1, base, c1, False, opens, gone, conv, tile)
    if mask[A_CHOW_LOW + 2]:
        n = _claim_candidate(p, lx, n, A_CHOW_LOW + 2, base, c2, False, opens, gone, conv, tile)
    return n


@njit(cache=True)
def _cand_scores(row, st, ep, tabs, work, lx):
    """cand-mlp: the seat to act's candidates (``lx.cand_x[:n]``, actions ``lx.actions[:n]``, context
    ``lx.vectors[_R_CTX]``) and their ``q`` (``lx.vectors[_R_LOGIT, :n]``); returns ``n``.  ``lx``: the
    :class:`LearnedScratch`.  Needs ``st.mask``."""
    p = row[1:]
    fb = lx.vectors
    joker = ep[EP_JOKER]
    n = _encode_candidates(st, ep, tabs, work, lx.cand_x, lx.actions)
    _encode(st, st.sc[SC_TO_ACT], joker, lx.planes)
    _context_from_planes(lx.planes, joker, tabs, lx.ctx_rows, lx.ctx_cols, lx.ctx_scale, fb[_R_CTX])
    _context_hidden(p, fb[_R_CTX], fb[_R_HC])
    for i in range(n):
        fb[_R_LOGIT, i] = _residual(p, lx.cand_x[i], fb[_R_HC], fb[_R_H1], fb[_R_H2])
    return n


@njit(cache=True, inline="always")
def _cand_pick(n, lx):
    """The action of the first candidate of the largest ``q`` (as ``torch.argmax``)."""
    q = lx.vectors[_R_LOGIT]
    pick = 0
    for i in range(1, n):
        if q[i] > q[pick]:
            pick = i
    return lx.actions[pick]


@njit(cache=True)
def _learned_action(p, st, ep, tabs, mask, work, lx):
    """The learned bot's action for the seat to act (module docstring); ``p``: its kernel row.  Legal."""
    if p[0] == _CODE_CAND:  # every decision is the net's (module docstring)
        return _cand_pick(_cand_scores(p, st, ep, tabs, work, lx), lx)
    if st.sc[SC_PHASE] == PH_HARD:
        return A_HARD_DECLARE
    if mask[A_WIN]:
        return A_WIN
    n = _learned_scores(p, st, ep, tabs, mask, work, lx)
    acts = lx.actions
    logit = lx.vectors[_R_LOGIT]
    if st.sc[SC_PHASE] == PH_TURN:
        if n == 0:  # a kong of the fixed rules
            kong, _ = _turn_context(st, ep, tabs, mask, work, False)
            if kong >= 0:
                return kong
            return _discard_action(-1, mask)
        pick = -1
        best = -1e300
        for i in range(n):
            if logit[i] >= best:
                best = logit[i]
                pick = acts[i] - A_DISCARD
        return _discard_action(pick, mask)
    choice = acts[0]
    best = logit[0]
    for i in range(1, n):
        if logit[i] > best:
            best = logit[i]
            choice = acts[i]
    return choice


@njit(cache=True)
def _scores_and_action(row, st, ep, tabs, work, lx):
    """``(n, action)``: :func:`_learned_scores` and :func:`_learned_action` of the seat to act, with the state's
    own mask (``st.mask``, as the batch loops pass it: a mask from Python would compile both again)."""
    if row[0] == _CODE_CAND:
        n = _cand_scores(row, st, ep, tabs, work, lx)
        return n, _cand_pick(n, lx)
    n = _learned_scores(row, st, ep, tabs, st.mask, work, lx)
    return n, _learned_action(row, st, ep, tabs, st.mask, work, lx)


def decisions(row: np.ndarray, rules: str = DEFAULT, n_rows: int = 10_000, seed: int = 0) -> dict:
    """Play hands (walls ``seed, seed + 1, ...``, dealer drawn from ``seed``) with the learned bot
    ``row`` (a kernel row, :func:`load_learned`) in every seat, and return its first ``n_rows``
    scored decisions: ``ctx: float64[N, 83]`` (MLP; zeros for a conv row), ``x: float64[N, 40, 17]``
    (each candidate's action features, zero rows past ``n``), ``n: int64[N]`` candidates, ``logits:
    float64[N, 40]`` (the kernel's), ``actions: int64[N, 40]``, ``chosen: int64[N]`` (the bot's action)
    and ``claim: bool[N]``; for a conv row also ``kinds: float64[N, 15, 34]`` (its input planes) and
    ``cand: int64[N, 40]`` (the score each candidate reads, ``h * 34 + kind``, -1 none and past ``n``).
    A cand-mlp row: ``ctx: float64[N, 84]``, ``x: float64[N, 40, 36]`` (``candidates-context`` and
    ``candidates`` v1), its every decision.  For tests (the torch model equals the kernel) and for
    training data (issue 26)."""
    from caishen.sim.engine import PH_DONE, _legal_mask, _reset, _seeded_wall, _step, engine_params, load_rules
    from caishen.sim.engine import new_state
    from caishen.sim.tables import hand_tables

    name, r = load_rules(rules, None)
    ep, rp, tabs = engine_params(name, r), r.params(), hand_tables()
    work = new_work()
    lx = new_scratch()
    row = np.ascontiguousarray(row, np.float64)
    cand_mlp = int(row[0]) == _CODE_CAND
    nx, nc, xs = (N_CANDIDATE, N_CAND_CONTEXT, lx.cand_x) if cand_mlp else (N_ACTION, N_CONTEXT, lx.features)
    out = {"ctx": np.zeros((n_rows, nc)), "x": np.zeros((n_rows, MAX_CANDIDATES, nx)),
           "n": np.zeros(n_rows, np.int64), "logits": np.zeros((n_rows, MAX_CANDIDATES)),
           "actions": np.zeros((n_rows, MAX_CANDIDATES), np.int64), "chosen": np.zeros(n_rows, np.int64),
           "claim": np.zeros(n_rows, np.bool_)}
    conv = int(row[0]) == _CODE_CONV
    if conv:
        out["kinds"] = np.zeros((n_rows, N_PLANES, N_KINDS))
        out["cand"] = np.full((n_rows, MAX_CANDIDATES), -1, np.int64)
    rng = np.random.default_rng(seed)
    st = new_state()[0]
    i, wall = 0, int(seed)
    while i < n_rows:
        _seeded_wall(wall, st)
        wall += 1
        _reset(st, ep, rp, tabs, int(rng.integers(4)))
        while st["sc"][SC_PHASE] != PH_DONE:
            _legal_mask(st, ep)
            n, a = _scores_and_action(row, st, ep, tabs, work, lx)
            if n and i < n_rows:
                out["ctx"][i] = lx.vectors[_R_CTX, :nc]
                out["x"][i, :n] = xs[:n]
                out["n"][i] = n
                out["logits"][i, :n] = lx.vectors[_R_LOGIT, :n]
                out["actions"][i, :n] = lx.actions[:n]
                out["chosen"][i] = a
                out["claim"][i] = st["sc"][SC_PHASE] != PH_TURN
                if conv:
                    out["kinds"][i] = lx.kinds
                    out["cand"][i, :n] = lx.cand[:n]
                i += 1
            _step(st, ep, rp, tabs, a)
    return out
