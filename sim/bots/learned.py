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

The weights file, its header, its checks and the ``float64`` kernel row a file becomes
(:func:`pack`) are :mod:`caishen.sim.bots.learned_file`'s (re-exported here).  The rows of the four
seats travel as the bot context's weights (``bx.weights``, padded to the longest row; the tuned bot
reads the first 17 values of its row, a learned bot all of it) and the scratch of
:func:`new_scratch` as its slot of the bot context (``bx.slots[0]``,
:mod:`caishen.sim.bots.registry`).  The conv score map is computed once per decision, into the
scratch (the first layer at every kind, the second layer and the head only at the kinds the
candidates read: the discardable kinds, or the tile on offer): no allocation per decision in either
architecture.
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np
from numba import njit

from caishen.sim.rules.base import DEFAULT
from caishen.sim.bots.candidates import N_CANDIDATE, N_CONTEXT as N_CAND_CONTEXT, _context_from_planes, _encode_candidates
from caishen.sim.bots.features import FEATURE_SETS, _encode, _encode_context, _encode_kinds, context_tables
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
from caishen.sim.bots.tuned import _ahead_args as _tuned_ahead_args  # the bots' argument types (compile_ahead)
from caishen.sim.engine import (
    A_CHOW_LOW,
    A_DISCARD,
    A_HARD_DECLARE,
    A_KONG_EXPOSED,
    A_PASS,
    A_PONG,
    A_WIN,
    N_KINDS,
    PH_HARD,
    PH_TURN,
)

from caishen.sim.bots.learned_file import (  # noqa: F401  (the file API, re-exported: the learned bots' one module)
    ARCH,
    ARCHS,
    ARCH_CAND,
    ARCH_CODES,
    ARCH_CONV,
    CAND_MEMBERS,
    CONV_MEMBERS,
    FORMAT,
    KERNEL,
    MAX_CANDIDATES,
    MAX_CHANNELS,
    MAX_FILE,
    MAX_HIDDEN,
    MEMBERS,
    N_ACTION,
    N_CONTEXT,
    N_HEADS,
    N_PLANES,
    cand_header,
    conv_from_tuned,
    conv_header,
    from_tuned,
    header,
    load_learned,
    pack,
    save_learned,
    unpack,
    _CODE_CAND,
    _CODE_CONV,
    _HDR,
    _cand_shapes,
    _conv_shapes,
)

__all__ = ["FORMAT", "ARCH", "ARCH_CONV", "ARCH_CAND", "ARCHS", "CAND_MEMBERS", "cand_header", "ARCH_CODES", "MAX_FILE", "MAX_HIDDEN", "MAX_CHANNELS", "N_ACTION",
           "N_CONTEXT", "N_PLANES", "N_HEADS", "KERNEL", "MEMBERS", "CONV_MEMBERS", "load_learned", "save_learned", "from_tuned",
           "conv_from_tuned", "header", "conv_header", "pack", "unpack", "new_scratch", "conv_forward", "decisions",
           "LearnedScratch"]

# rows of the float scratch
_R_CTX, _R_HC, _R_H1, _R_H2, _R_X, _R_LOGIT = range(6)
assert N_ACTION == N_W


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
    phase = st.table.phase
    if phase == PH_HARD or mask[A_WIN]:
        return 0
    s = st.table.to_act
    joker = ep.joker
    gone = _wall_gone(st) / 70.0
    best = base = pong = kong = c0 = c1 = c2 = 0
    if phase == PH_TURN:
        kong, best = _turn_context(st, ep, tabs, mask, work, np.bool_(True))  # np.bool_: one compiled copy
        if kong >= 0:
            return 0
    else:
        base, pong, kong, c0, c1, c2 = _claim_shanten(st, ep, tabs, mask, work)
    if conv:
        need = lx.need
        for k in range(N_KINDS):
            need[k] = 1 if phase == PH_TURN and mask[A_DISCARD + k] else 0
        if phase != PH_TURN:
            need[st.table.tile] = 1
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
            f = _discard_features(k, best, joker, tabs, st, work[_W_LIVE], work[_W_TMP], gone, mask, work,
                                  np.bool_(True), np.bool_(True))
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
    opens = 1.0 if st.seat[s].n_melds == 0 else 0.0
    tile = st.table.tile
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
    joker = ep.joker
    n = _encode_candidates(st, ep, tabs, work, lx.cand_x, lx.actions)
    _encode(st, st.table.to_act, joker, lx.planes)
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
    if st.table.phase == PH_HARD:
        return A_HARD_DECLARE
    if mask[A_WIN]:
        return A_WIN
    n = _learned_scores(p, st, ep, tabs, mask, work, lx)
    acts = lx.actions
    logit = lx.vectors[_R_LOGIT]
    if st.table.phase == PH_TURN:
        if n == 0:  # a kong of the fixed rules
            kong, _ = _turn_context(st, ep, tabs, mask, work, np.bool_(False))
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


def compile_ahead() -> None:
    """Compile the learned bot's kernel (:func:`_learned_action`, with :func:`_learned_scores`,
    :func:`_cand_scores` and what they call) into numba's cache without running it, with the argument types
    of the self-play loop (a weights row, the state, the state's own mask field, ``bx.slots[0]``): the side
    process of a cold first compile (:func:`caishen.sim.warmup.side_compile`)."""
    import numba

    row, st, ep, tabs, work, lx = (numba.typeof(a) for a in _ahead_args())
    _learned_action.compile((row, st, ep, tabs, st.typeof("mask"), work, lx))


def _ahead_args() -> tuple:
    """Arguments of :func:`_scores_and_action` of the self-play loop's types (:func:`compile_ahead`; a test
    holds them equal): the tuned bot's (:func:`caishen.sim.bots.tuned._ahead_args`: a weights row, a state,
    the engine params, the hand table's type, the bots' scratch) and :func:`new_scratch`."""
    return (*_tuned_ahead_args(), new_scratch())


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
        while st["table"]["phase"] != PH_DONE:
            _legal_mask(st, ep)
            n, a = _scores_and_action(row, st, ep, tabs, work, lx)
            if n and i < n_rows:
                out["ctx"][i] = lx.vectors[_R_CTX, :nc]
                out["x"][i, :n] = xs[:n]
                out["n"][i] = n
                out["logits"][i, :n] = lx.vectors[_R_LOGIT, :n]
                out["actions"][i, :n] = lx.actions[:n]
                out["chosen"][i] = a
                out["claim"][i] = st["table"]["phase"] != PH_TURN
                if conv:
                    out["kinds"][i] = lx.kinds
                    out["cand"][i, :n] = lx.cand[:n]
                i += 1
            _step(st, ep, rp, tabs, a)
    return out
