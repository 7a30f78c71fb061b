"""The learned bots' weights files: their format, header and checks, and the kernel row a file becomes.

:mod:`caishen.sim.bots.learned` plays a file's network inside the kernels; this module reads and writes the
files (:func:`load_learned`, :func:`save_learned`), makes the networks that start as the tuned bot
(:func:`from_tuned`, :func:`conv_from_tuned`) and packs a network into one kernel row (:func:`pack`,
:func:`unpack`).  The architectures are described in :mod:`caishen.sim.bots.learned`.

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
``[34, C]``.
"""

from __future__ import annotations

import io
import json
import zipfile

import numpy as np

from caishen.sim import safeio
from caishen.sim.rules.base import DEFAULT
from caishen.sim.bots.candidates import N_CANDIDATE, N_CONTEXT as N_CAND_CONTEXT
from caishen.sim.bots.features import FEATURE_SETS, check_feature_set

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
