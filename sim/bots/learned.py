"""Learned policies as kernel bots: a numba forward pass that scores each legal action, from a weights file.

``learned:PATH`` (:mod:`caishen.sim.bots.registry`) plays a small network
inside the self-play kernels, so it sits in every seat of ``simulate``,
``match``, the sweeps, the studies and the envs' opponents without torch.

The network (architecture ``action-mlp``): an *action-scoring head*.  Its
fixed rules are the tuned bot's (:mod:`caishen.sim.bots.tuned`): a win is
always taken, greedy's kongs stand, 硬子 is always declared (J-4.2), a
discard is made as ``declare <k>`` when that is legal (J-4.1).  Every other
decision is a choice among candidates: on its own turn the legal discards,
on a claim ``pass`` and each legal pong, exposed kong or chow.  Candidate
``a`` gets the logit

    ``logit(a) = lin . f(a) + w3 . relu(W2 relu(W1 [x(a), c] + b1) + b2) + b3``

with ``x(a): float64[17]`` the ``action`` v1 features of ``a`` and ``c:
float64[83]`` the ``context`` v1 features of the seat
(:mod:`caishen.sim.bots.features`; ``pass`` has ``x = 0``).  The linear
part ``lin . f(a)`` is computed exactly as the tuned bot scores (same
terms, same order: :func:`caishen.sim.bots.tuned._discard_linear`), so a
network whose residual is zero (``w3 = 0``, ``b3 = 0``: :func:`from_tuned`)
plays exactly as ``tuned`` with the weights ``lin``.  The bot plays the
candidate of the largest logit: ties go to the later kind on a discard (as
tuned), and a claim is made only if its logit beats ``pass``'s.  The torch
model of the same architecture is :mod:`caishen.agents.learned_torch`
(tested equal on 10,000+ states).

Weights file (``.npz``, read with ``allow_pickle=False``: nothing in it can
run code).  Members, nothing else: ``header`` (``uint8[]``: UTF-8 JSON),
``linear`` ``[17]``, ``w1`` ``[H1, 100]``, ``b1`` ``[H1]``, ``w2`` ``[H2, H1]``,
``b2`` ``[H2]``, ``w3`` ``[H2]``, ``b3`` ``[1]`` (float32 or float64, every
value finite).  The header:

=================  =============================================================
field              value
=================  =============================================================
``format``         :data:`FORMAT` (``"caishen-learned-1"``)
``arch``           ``"action-mlp"``
``rules``          the rule set it plays (another one is refused)
``feature_sets``   ``{"action": {"name": "action", "version": 1}, "context":
                   {"name": "context", "version": 1}}`` (another set or version
                   is refused, :func:`caishen.sim.bots.features.check_feature_set`)
``layers``         ``{"n_action": 17, "n_context": 83, "hidden": [H1, H2]}``
                   (``1 <= H <= 256``); every member's shape must follow
``meta``           free JSON (how it was trained)
=================  =============================================================

A missing, truncated or oversized file (:data:`MAX_FILE`), a link or other
non-regular file, a foreign zip member, a wrong shape or dtype, a NaN or
infinite weight: one ``ValueError`` naming the file and the field.

Kernel layout: a file becomes one ``float64`` row (:func:`pack`): the four
sizes ``n_action, n_context, H1, H2``, then ``linear, w1.T, b1, w2.T, b2, w3,
b3`` flattened row-major: the weight matrices transposed, so that the forward
pass adds one input's column of weights to all the units of a layer at once
(contiguous, vectorized by LLVM) and skips an input that is 0 (most context
inputs, every other candidate's half of ``x``, a unit the ReLU cut).  The rows of the four seats travel as the bot
context's weights (``bx[0]``, padded to the longest row; the tuned bot reads
the first 17 values of its row, a learned bot all of it) and the scratch of
:func:`new_scratch` as its slot of the bot context (``bx[SLOTS][0]``, :mod:`caishen.sim.bots.registry`).
"""

from __future__ import annotations

import io
import json
import zipfile

import numpy as np
from numba import njit

from caishen.sim import safeio
from caishen.sim.rules.base import DEFAULT
from caishen.sim.bots.features import FEATURE_SETS, _encode_context, check_feature_set, context_tables
from caishen.sim.bots.policies import _wall_gone
from caishen.sim.bots.tuned import (
    N_W,
    _W_AFTER,
    _W_LIVE,
    _W_TMP,
    _claim_linear,
    _claim_shanten,
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
    SC_TO_ACT,
    SF_N_MELDS,
)

__all__ = ["FORMAT", "ARCH", "MAX_FILE", "MAX_HIDDEN", "N_ACTION", "N_CONTEXT", "MEMBERS", "load_learned",
           "save_learned", "from_tuned", "pack", "unpack", "new_scratch", "decisions"]

#: the ``format`` of a weights file's header
FORMAT = "caishen-learned-1"
#: the one architecture of this format
ARCH = "action-mlp"
#: bytes of a weights file at most (the default network is ~40 KB)
MAX_FILE = 32 << 20
#: the largest hidden layer
MAX_HIDDEN = 256
#: inputs: per-action features (``action`` v1) and context features (``context`` v1)
N_ACTION = FEATURE_SETS["action"].rows
N_CONTEXT = FEATURE_SETS["context"].rows
#: the zip members of a weights file, in packing order after ``header``
MEMBERS = ("linear", "w1", "b1", "w2", "b2", "w3", "b3")
#: the members stored transposed in the kernel row (module docstring, "Kernel layout")
_TRANSPOSED = ("w1", "w2")
#: at most this many candidates per decision (34 discards; pass + pong + kong + 3 chows)
MAX_CANDIDATES = 40
_HDR = 4
# rows of the float scratch
_R_CTX, _R_HC, _R_H1, _R_H2, _R_X, _R_LOGIT = range(6)
assert N_ACTION == N_W


def _shapes(h1: int, h2: int) -> dict[str, tuple[int, ...]]:
    return {"linear": (N_ACTION,), "w1": (h1, N_ACTION + N_CONTEXT), "b1": (h1,), "w2": (h2, h1), "b2": (h2,),
            "w3": (h2,), "b3": (1,)}


def header(rules: str, h1: int, h2: int, meta: dict | None = None) -> dict:
    """The JSON header of a weights file (module docstring)."""
    return {"format": FORMAT, "arch": ARCH, "rules": rules,
            "feature_sets": {"action": FEATURE_SETS["action"].header(), "context": FEATURE_SETS["context"].header()},
            "layers": {"n_action": N_ACTION, "n_context": N_CONTEXT, "hidden": [int(h1), int(h2)]},
            "meta": dict(meta or {})}


def pack(arrays: dict[str, np.ndarray]) -> np.ndarray:
    """The kernel row ``float64[P]`` of a network's arrays (module docstring, "Kernel layout")."""
    h1, h2 = arrays["w1"].shape[0], arrays["w2"].shape[0]
    parts = [np.array([N_ACTION, N_CONTEXT, h1, h2], np.float64)]
    parts += [(np.asarray(arrays[m], np.float64).T if m in _TRANSPOSED else np.asarray(arrays[m], np.float64)).ravel()
              for m in MEMBERS]
    return np.concatenate(parts)


def unpack(row: np.ndarray) -> dict[str, np.ndarray]:
    """The arrays of a kernel row (the inverse of :func:`pack`; padding after the row is ignored)."""
    h1, h2 = int(row[2]), int(row[3])
    out, i = {}, _HDR
    for m, shape in _shapes(h1, h2).items():
        n = int(np.prod(shape))
        out[m] = row[i:i + n].reshape(shape[::-1]).T.copy() if m in _TRANSPOSED else row[i:i + n].reshape(shape).copy()
        i += n
    return out


def from_tuned(weights, hidden: tuple[int, int] = (32, 16), seed: int = 0, rules: str = DEFAULT) -> dict:
    """A network that plays exactly as the tuned bot with ``weights: float64[17]``: ``linear`` is the
    weights, ``w1``/``w2`` small random numbers (``seed``), ``w3 = b3 = 0`` (a zero residual).
    Returns ``{"header": ..., member: array}`` for :func:`save_learned`."""
    from caishen.sim.bots.tuned import check_weights

    h1, h2 = hidden
    rng = np.random.default_rng(seed)
    sh = _shapes(h1, h2)
    arrays = {"linear": check_weights(weights, "from_tuned").copy(),
              "w1": rng.normal(0, 0.1, sh["w1"]), "b1": np.zeros(h1), "w2": rng.normal(0, 0.1, sh["w2"]),
              "b2": np.zeros(h2), "w3": np.zeros(h2), "b3": np.zeros(1)}
    return {"header": header(rules, h1, h2, {"from": "tuned", "residual": "zero"}), **arrays}


def save_learned(path, net: dict) -> str:
    """Write ``net`` (``{"header": dict, member: array}``, as :func:`from_tuned` or the torch model's
    export) as a weights file, atomically; returns the path.  The file is checked as
    :func:`load_learned` checks it before it is written (``ValueError`` naming the field)."""
    path = str(path)
    hdr = net["header"]
    arrays = {m: np.asarray(net[m], np.float64) for m in MEMBERS}
    _check(path, hdr, arrays, None)
    buf = io.BytesIO()
    text = json.dumps(hdr, allow_nan=False, sort_keys=True).encode()
    np.savez(buf, header=np.frombuffer(text, np.uint8), **arrays)
    safeio.atomic_write(path, buf.getvalue())
    return path


def _check(where: str, hdr, arrays: dict, rules: str | None) -> None:
    """Raise ``ValueError`` naming ``where`` and the field for anything but a valid header and members."""
    if not isinstance(hdr, dict):
        raise ValueError(f"{where}: field 'header' must be a JSON object")
    for field, want in (("format", FORMAT), ("arch", ARCH)):
        if hdr.get(field) != want:
            raise ValueError(f"{where}: field {field!r} is {str(hdr.get(field))[:40]!r}, expected {want!r}")
    if not isinstance(hdr.get("rules"), str):
        raise ValueError(f"{where}: field 'rules' must name the rule set the network plays")
    if rules is not None and hdr["rules"] != rules:
        raise ValueError(f"{where}: field 'rules' is {hdr['rules'][:40]!r}, not {rules!r}")
    sets = hdr.get("feature_sets")
    if not isinstance(sets, dict) or set(sets) != {"action", "context"}:
        raise ValueError(f"{where}: field 'feature_sets' must hold 'action' and 'context'")
    for k in ("action", "context"):
        check_feature_set(sets[k], FEATURE_SETS[k], where, f"feature_sets.{k}")
    layers = hdr.get("layers")
    hid = layers.get("hidden") if isinstance(layers, dict) else None
    if not (isinstance(layers, dict) and layers.get("n_action") == N_ACTION and layers.get("n_context") == N_CONTEXT
            and isinstance(hid, list) and len(hid) == 2
            and all(isinstance(h, int) and not isinstance(h, bool) and 1 <= h <= MAX_HIDDEN for h in hid)):
        raise ValueError(f"{where}: field 'layers' must be {{\"n_action\": {N_ACTION}, \"n_context\": {N_CONTEXT}, "
                         f"\"hidden\": [H1, H2]}} with 1 <= H <= {MAX_HIDDEN}, got {str(layers)[:80]}")
    if not isinstance(hdr.get("meta", {}), dict):
        raise ValueError(f"{where}: field 'meta' must be a JSON object")
    for m, shape in _shapes(*hid).items():
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
    non-regular file, too large, not a zip of exactly the members, a damaged member, a wrong header,
    shape or dtype, another rule set or feature set version, a NaN or infinite weight).
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
    want = {"header.npy"} | {m + ".npy" for m in MEMBERS}
    if sorted(names) != sorted(want):
        raise ValueError(f"{where}: its members are {sorted(names)[:10]}, expected {sorted(want)}")
    if sum(i.file_size for i in infos) > MAX_FILE:
        raise ValueError(f"{where}: its members unpack to more than {MAX_FILE:,} bytes")
    arrays = {}
    try:
        for m in ("header", *MEMBERS):
            with zf.open(m + ".npy") as f:
                arrays[m] = np.lib.format.read_array(f, allow_pickle=False)
    except (ValueError, OSError, EOFError, zipfile.BadZipFile) as e:
        raise ValueError(f"{where}: member {m!r} is damaged ({str(e)[:60]})") from None
    raw = arrays.pop("header")
    if raw.dtype != np.uint8 or raw.ndim != 1:
        raise ValueError(f"{where}: member 'header' must be uint8 JSON text")
    try:
        hdr = safeio.parse_json(raw.tobytes())
    except ValueError as e:
        raise ValueError(f"{where}: field 'header' is not strict JSON ({str(e)[:60]})") from None
    _check(where, hdr, arrays, rules)
    return pack(arrays), hdr


def new_scratch():
    """The learned bots' scratch (its slot of the bot context, ``bx[SLOTS][0]``): ``(planes: uint8[76, 34], fb:
    float64[6, 256], acts: int64[40], rows, cols, scale, xs: float64[40, 17])`` with the ``context``
    tables (``xs[i]``: candidate ``i``'s action features)."""
    rows, cols, scale = context_tables()
    return (np.zeros((FEATURE_SETS["planes"].rows, N_KINDS), np.uint8), np.zeros((6, MAX_HIDDEN)),
            np.zeros(MAX_CANDIDATES, np.int64), rows, cols, scale, np.zeros((MAX_CANDIDATES, N_ACTION)))


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


@njit(cache=True, inline="always")
def _claim_candidate(p, lx, n, act, base, after, is_pong, opens, gone):
    """Candidate ``n`` of a claim: ``act`` leaving shanten ``after``; returns ``n + 1``."""
    x = lx[6][n]
    x[:] = 0.0
    x[12] = 1.0
    x[13] = base - after
    x[14] = opens
    x[15] = 1.0 if is_pong else 0.0
    x[16] = gone
    fb = lx[1]
    lx[2][n] = act
    fb[_R_LOGIT, n] = (_claim_linear(p[_HDR:_HDR + N_ACTION], base, after, is_pong, opens, gone)
                       + _residual(p, x, fb[_R_HC], fb[_R_H1], fb[_R_H2]))
    return n + 1


@njit(cache=True)
def _learned_scores(p, st, ep, tabs, mask, work, lx):
    """Fill the candidates of the decision (``lx[2][:n]`` actions, ``lx[1][5, :n]`` logits,
    ``lx[6][:n]`` their action features, ``lx[1][0]`` the context) and return ``n``; 0 for a
    decision the fixed rules make (win, kong, 硬子).  ``p``: the kernel row; ``lx``: :func:`new_scratch`."""
    planes, fb, acts, rows, cols, scale, xs = lx
    phase = st.sc[SC_PHASE]
    if phase == PH_HARD or mask[A_WIN]:
        return 0
    s = st.sc[SC_TO_ACT]
    joker = ep[EP_JOKER]
    gone = _wall_gone(st) / 70.0
    best = base = pong = kong = c0 = c1 = c2 = 0
    if phase == PH_TURN:
        kong, best = _turn_context(st, ep, tabs, mask, work)
        if kong >= 0:
            return 0
    else:
        base, pong, kong, c0, c1, c2 = _claim_shanten(st, ep, tabs, mask, work)
    _encode_context(st, s, joker, planes, rows, cols, scale, fb[_R_CTX])
    _context_hidden(p, fb[_R_CTX], fb[_R_HC])
    lin = p[_HDR:_HDR + N_ACTION]
    n = 0
    if phase == PH_TURN:
        h = st.hands[s]
        after = work[_W_AFTER]
        for k in range(N_KINDS):
            if not mask[A_DISCARD + k]:
                continue
            f = _discard_features(k, after[k], best, h, joker, tabs, st, s, work[_W_LIVE], work[_W_TMP], gone, mask,
                                  work, True, True)
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
            fb[_R_LOGIT, n] = _discard_linear(lin, f) + _residual(p, x, fb[_R_HC], fb[_R_H1], fb[_R_H2])
            n += 1
        return n
    opens = 1.0 if st.seat[s, SF_N_MELDS] == 0 else 0.0
    xs[0, :] = 0.0
    acts[0] = A_PASS
    fb[_R_LOGIT, 0] = _residual(p, xs[0], fb[_R_HC], fb[_R_H1], fb[_R_H2])
    n = 1
    if mask[A_PONG]:
        n = _claim_candidate(p, lx, n, A_PONG, base, pong, True, opens, gone)
    if mask[A_KONG_EXPOSED]:
        n = _claim_candidate(p, lx, n, A_KONG_EXPOSED, base, kong, True, opens, gone)
    if mask[A_CHOW_LOW]:
        n = _claim_candidate(p, lx, n, A_CHOW_LOW, base, c0, False, opens, gone)
    if mask[A_CHOW_LOW + 1]:
        n = _claim_candidate(p, lx, n, A_CHOW_LOW + 1, base, c1, False, opens, gone)
    if mask[A_CHOW_LOW + 2]:
        n = _claim_candidate(p, lx, n, A_CHOW_LOW + 2, base, c2, False, opens, gone)
    return n


@njit(cache=True)
def _learned_action(p, st, ep, tabs, mask, work, lx):
    """The learned bot's action for the seat to act (module docstring); ``p``: its kernel row.  Legal."""
    if st.sc[SC_PHASE] == PH_HARD:
        return A_HARD_DECLARE
    if mask[A_WIN]:
        return A_WIN
    n = _learned_scores(p, st, ep, tabs, mask, work, lx)
    acts = lx[2]
    logit = lx[1][_R_LOGIT]
    if st.sc[SC_PHASE] == PH_TURN:
        if n == 0:  # a kong of the fixed rules
            kong, _ = _turn_context(st, ep, tabs, mask, work)
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


def decisions(row: np.ndarray, rules: str = DEFAULT, n_rows: int = 10_000, seed: int = 0) -> dict:
    """Play hands (walls ``seed, seed + 1, ...``, dealer drawn from ``seed``) with the learned bot
    ``row`` (a kernel row, :func:`load_learned`) in every seat, and return its first ``n_rows``
    scored decisions: ``ctx: float64[N, 83]``, ``x: float64[N, 40, 17]`` (each candidate's action
    features, zero rows past ``n``), ``n: int64[N]`` candidates, ``logits: float64[N, 40]`` (the
    kernel's), ``actions: int64[N, 40]``, ``chosen: int64[N]`` (the bot's action) and ``claim: bool[N]``.
    For tests (the torch model equals the kernel) and for training data (issue 26)."""
    from caishen.sim.engine import PH_DONE, _legal_mask, _reset, _seeded_wall, _step, engine_params, load_rules
    from caishen.sim.engine import new_state
    from caishen.sim.tables import hand_tables

    name, r = load_rules(rules, None)
    ep, rp, tabs = engine_params(name, r), r.params(), hand_tables()
    work = np.zeros((4, N_KINDS), np.int64)
    lx = new_scratch()
    row = np.ascontiguousarray(row, np.float64)
    out = {"ctx": np.zeros((n_rows, N_CONTEXT)), "x": np.zeros((n_rows, MAX_CANDIDATES, N_ACTION)),
           "n": np.zeros(n_rows, np.int64), "logits": np.zeros((n_rows, MAX_CANDIDATES)),
           "actions": np.zeros((n_rows, MAX_CANDIDATES), np.int64), "chosen": np.zeros(n_rows, np.int64),
           "claim": np.zeros(n_rows, np.bool_)}
    rng = np.random.default_rng(seed)
    st = new_state()[0]
    i, wall = 0, int(seed)
    while i < n_rows:
        _seeded_wall(wall, st)
        wall += 1
        _reset(st, ep, rp, tabs, int(rng.integers(4)))
        while st["sc"][SC_PHASE] != PH_DONE:
            _legal_mask(st, ep)
            n = _learned_scores(row, st, ep, tabs, st["mask"], work, lx)
            a = int(_learned_action(row, st, ep, tabs, st["mask"], work, lx))
            if n and i < n_rows:
                out["ctx"][i] = lx[1][_R_CTX, :N_CONTEXT]
                out["x"][i, :n] = lx[6][:n]
                out["n"][i] = n
                out["logits"][i, :n] = lx[1][_R_LOGIT, :n]
                out["actions"][i, :n] = lx[2][:n]
                out["chosen"][i] = a
                out["claim"][i] = st["sc"][SC_PHASE] != PH_TURN
                i += 1
            _step(st, ep, rp, tabs, a)
    return out
