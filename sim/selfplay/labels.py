"""Rollout labels for expert iteration: each candidate's paired advantage at a learned bot's decisions.

The training recipe of :mod:`caishen.agents.exit` (issue 26) improves a
learned bot (:mod:`caishen.sim.bots.learned`) where rollouts say another of
its candidates is better.  :func:`label_hands` plays hands with a lineup of
four kernel bots (``learned:PATH`` seats are the *learner*; the others its
pool, e.g. ``tuned:R`` and ``greedy``) and, at a sampled fraction of the
learner's decisions with two or more candidates, records

* the policy's inputs, exactly as the learned bot reads them at play time
  (:func:`caishen.sim.bots.learned._learned_scores`): ``x: float64[40, 17]``
  (each candidate's ``action`` v1 features), ``ctx: float64[83]``
  (``context`` v1), the candidates' actions and their count ``n``; when
  the learner is an ``action-conv`` net also its inputs ``kinds`` (the
  ``kinds`` v1 planes, stored in quarters: ``uint8[15, 34]``, the planes
  times 4, exact since every plane is a count over 4 or a 0/1 flag) and
  ``cand`` (the score each candidate reads, ``h * 34 + kind``, -1 none and
  past ``n``: ``int8[40]``).  These
  come from the real state through the seat's own view only (the learned
  bot's feature kernels); a test checks that a redeal of the hidden tiles
  leaves them unchanged;
* the label ``adv: float64[40]``: on ``N`` determinizations of the hidden
  tiles drawn from the seat's view (:func:`caishen.sim.bots.search._determinize`,
  the same ``N`` for every candidate: common random numbers), each
  candidate is played and the hand rolled out to its end with every seat's
  bot of the lineup (the learner's own seat with the current net); ``v(a)``
  is the seat's points in the finished hand
  (:func:`caishen.sim.bots.search._hand_value`) and ``adv[a]`` the mean
  over the determinizations of ``v(a) - v(base)``, ``base`` the learned
  bot's own choice (so ``adv[base] = 0``).  Hidden information enters the
  labels only (through the rollouts, which play determinized states, never
  the real hidden tiles).

**Pruning** (``top_k``, issue 46): before the rollouts, the candidates may be cut to the net's ``top_k``
largest logits (ties as the bot breaks them: the later candidate on a turn, the earlier on a claim), plus
the net's own choice ``base`` (the behaviour policy's choice: the learner's seats play the net) and, given
``anchor`` (the start's linear weights, :mod:`caishen.agents.exit`), the start policy's choice (the
candidate of the largest ``anchor . x``, ties as the bot).  Only the kept candidates (``kept: bool[40]``)
are rolled out; the others' ``adv`` is 0 and means nothing.  The kept set is a function of the policy's
inputs alone, never of a rollout, so each kept candidate's label is the same unbiased paired estimate as
without pruning.  ``spend_saved``: the rollouts pruning saves go to more determinizations of the same
state, ``N * n // kept`` of them (at most :data:`MAX_DETERMINIZATIONS`), instead of being saved.

**Oracle targets** (``oracle``, issue 46; ``caishen learn --aux``): at each labelled state, from the real
hidden state the labeller holds (:func:`caishen.sim.selfplay.oracle._oracle_state`, the kernel of the envs'
``info["oracle"]``), ``deal: int8[40]``, per candidate: 1 if that discard deals in now (an opponent wins on
it, K-7.1, J-3.1), 0 if not, -1 where there is no target (a claim's candidates, past ``n``, or ``oracle``
off); and ``ready: int8[3]``, per opponent (``+1`` next, ``+2`` opposite, ``+3`` previous): 1 ready, 0 not,
-1 off.  They are training targets of auxiliary heads only: nothing of them is a policy input (the inputs
above are computed before them, from the seat's view).

Points are the rule set's hand points (its points kernel), one hand: no match
or streak value beyond the hand.  Cost: ``kept * N`` rollouts per labelled state (``n * N`` unpruned).
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np
from numba import njit

from caishen.sim.borrow import borrowed
from caishen.sim.bots.policies import POLICY_GREEDY, POLICY_RANDOM, new_work
from caishen.sim.bots.learned import (
    ARCH_CODES,
    ARCH_CONV,
    MAX_CANDIDATES,
    N_ACTION,
    N_CONTEXT,
    N_PLANES,
    _R_CTX,
    _R_LOGIT,
    _learned_scores,
)
from caishen.sim.bots.registry import POLICY_LEARNED, _bot_action, bot_table, make_context, parse, split_specs
from caishen.sim.bots.search import _determinize, _hand_value
from caishen.sim.bots.tuned import _discard_action
from caishen.sim.engine import (
    _copy_state,
    A_DISCARD,
    N_KINDS,
    PH_DONE,
    PH_TURN,
    _legal_mask,
    _reset,
    _seeded_wall,
    _step,
    engine_params,
    load_rules,
    new_records,
    new_state,
)
from caishen.sim.rng import _rng_below, _rng_seed
from caishen.sim.rules.options import short_repr
from caishen.sim.selfplay.oracle import OracleRow, _oracle_state, new_oracle_row
from caishen.sim.tables import hand_tables

__all__ = ["MAX_DETERMINIZATIONS", "KINDS_SCALE", "LabelRows", "Labelling", "Pruning", "label_hands", "new_buffer"]

#: most determinizations per labelled state
MAX_DETERMINIZATIONS = 256
_FRAC_ONE = 1 << 20
#: the stored ``kinds`` planes are the kernel's planes times this (module docstring)
KINDS_SCALE = 4
_N_KINDS = 34


def new_buffer(cap: int, conv: bool = False) -> dict:
    """Arrays for ``cap`` labelled states: ``ctx: float64[cap, 83]``, ``x: float64[cap, 40, 17]``,
    ``n: int64[cap]``, ``actions: int64[cap, 40]``, ``adv: float64[cap, 40]`` (points per hand),
    ``base: int64[cap]`` (index of the bot's own choice), ``claim: bool[cap]``, ``kept: bool[cap, 40]``
    (the candidates rolled out, module docstring "Pruning"); with ``conv`` (the
    learner is an ``action-conv`` net) also ``kinds: uint8[cap, 15, 34]`` (its input planes times
    :data:`KINDS_SCALE`) and ``cand: int8[cap, 40]`` (the score each candidate reads, -1 none; module
    docstring): 530 bytes more a state; then the oracle targets ``deal: int8[cap, 40]`` and ``ready:
    int8[cap, 3]`` (module docstring, "Oracle targets"; -1: none)."""
    buf = {"ctx": np.zeros((cap, N_CONTEXT)), "x": np.zeros((cap, MAX_CANDIDATES, N_ACTION)),
           "n": np.zeros(cap, np.int64), "actions": np.zeros((cap, MAX_CANDIDATES), np.int64),
           "adv": np.zeros((cap, MAX_CANDIDATES)), "base": np.zeros(cap, np.int64),
           "claim": np.zeros(cap, np.bool_), "kept": np.zeros((cap, MAX_CANDIDATES), np.bool_)}
    if conv:
        buf["kinds"] = np.zeros((cap, N_PLANES, _N_KINDS), np.uint8)
        buf["cand"] = np.full((cap, MAX_CANDIDATES), -1, np.int8)
    buf["deal"] = np.full((cap, MAX_CANDIDATES), -1, np.int8)
    buf["ready"] = np.full((cap, 3), -1, np.int8)
    return buf


class Pruning(NamedTuple):
    """Which candidates of a labelled state are rolled out (module docstring): the net's ``top_k`` largest
    logits plus its own and the start's choice (``top_k=0``: every candidate, as before pruning);
    ``spend_saved``: the saved rollouts go to more determinizations of the same state; ``anchor``: the
    start's linear weights (``float64[17]``) whose choice is kept, or None."""

    top_k: int = 0
    spend_saved: bool = False
    anchor: object = None


class LabelRows(NamedTuple):
    """The labelled states' rows that :func:`_label_batch` fills: the arrays of :func:`new_buffer` (module
    docstring), ``cap`` rows each."""

    ctx: np.ndarray  #: float64[cap, 83]: the learner's ``context`` v1 input (zeros for a conv learner)
    x: np.ndarray  #: float64[cap, 40, 17]: each candidate's ``action`` v1 features
    n: np.ndarray  #: int64[cap]: the number of candidates (2..40)
    actions: np.ndarray  #: int64[cap, 40]: the candidates' actions
    adv: np.ndarray  #: float64[cap, 40]: each candidate's mean paired advantage over ``base`` (points per hand)
    base: np.ndarray  #: int64[cap]: the index of the bot's own choice among the candidates
    claim: np.ndarray  #: bool[cap]: a claim decision (else the own turn)
    kept: np.ndarray  #: bool[cap, 40]: the candidates rolled out (module docstring, "Pruning"); adv means nothing elsewhere
    kinds: np.ndarray  #: uint8[cap, 15, 34]: a conv learner's input planes times KINDS_SCALE (MLP: zero rows)
    cand: np.ndarray  #: int8[cap, 40]: the score each candidate reads, -1 none (MLP: zero rows)
    deal: np.ndarray  #: int8[cap, 40]: oracle target, the candidate's discard deals in now (1/0; -1 none)
    ready: np.ndarray  #: int8[cap, 3]: oracle target, opponent +1, +2, +3 is ready (1/0; -1 none)


class Labelling(NamedTuple):
    """How :func:`_label_batch` plays and samples, and the scratch and stream of its rollouts (:func:`_label_state`)."""

    table: np.ndarray  #: int64[4, 2]: each seat's bot (code, param), in the hands and in the rollouts
    frac_q: int  #: a learner's decision of two or more candidates is labelled with probability frac_q / 2**20
    n_det: int  #: the determinizations of the hidden tiles per labelled state (1..MAX_DETERMINIZATIONS)
    pol: np.ndarray  #: int64[4]: each seat's kind for the redeal (:func:`caishen.sim.bots.search._determinize`)
    states: np.ndarray  #: three game states (:func:`caishen.sim.engine.new_state`): the hand, a root, a rollout
    scratch_i: np.ndarray  #: int64[4, 160]: the determinizations' rows
    rng: np.ndarray  #: uint64[4]: the stream of the sampling and the determinizations (:mod:`caishen.sim.rng`)
    vals: np.ndarray  #: float64[40]: scratch, each candidate's points in one determinization
    top_k: int  #: candidates kept by the net's logits before the rollouts (0: all; module docstring, "Pruning")
    spend_saved: bool  #: spend the rollouts pruning saves on more determinizations of the same state
    anchor: np.ndarray  #: float64[17]: the start policy's linear weights, whose choice is always kept (empty: none)
    oracle: bool  #: fill the oracle targets (module docstring); else they are -1
    orow: OracleRow  #: one state's oracle, scratch (:func:`caishen.sim.selfplay.oracle._oracle_state`)
    hb: np.ndarray  #: uint8[34]: scratch of the oracle
    rec: np.ndarray  #: an empty record array: the oracle's deal-in points are not needed (no record kept)
    rec_at: np.ndarray  #: int64[0]: with ``rec``


@njit(cache=True)
def _rollout_all(roll, table, ep, rp, tabs, work, bx):
    """Play ``roll`` to the end of the hand, every seat with its bot of ``table``."""
    while roll.table.phase != PH_DONE:
        _legal_mask(roll, ep)
        s = roll.table.to_act
        a = _bot_action(table[s, 0], table[s, 1], roll, ep, rp, tabs, roll.mask, work, bx)
        _step(roll, ep, rp, tabs, a)


@njit(cache=True)
def _keep(logit, x, n, base, turn, top_k, anchor, kept):
    """Fill ``kept[:n]`` with the candidates to roll out (module docstring, "Pruning") and return their count:
    all ``n`` when ``top_k`` is 0 or at least ``n``; else the ``top_k`` largest ``logit[:n]`` (ties: the later
    candidate on a ``turn``, the earlier on a claim), candidate ``base``, and with a non-empty ``anchor``
    (``float64[17]``) the candidate of the largest ``anchor . x[i]`` (the same ties).  ``x``: the candidates'
    ``action`` v1 features, ``float64[>=n, 17]``."""
    every = top_k <= 0 or n <= top_k
    for i in range(n):
        kept[i] = every
    if every:
        return n
    for _ in range(top_k):
        pick = -1
        for i in range(n):
            if not kept[i] and (pick < 0 or logit[i] > logit[pick] or (turn and logit[i] == logit[pick])):
                pick = i
        kept[pick] = True
    kept[base] = True
    if anchor.shape[0] > 0:
        pick = 0
        best = -np.inf
        for i in range(n):
            v = 0.0
            for j in range(anchor.shape[0]):
                v += anchor[j] * x[i, j]
            if i == 0 or v > best or (turn and v == best):
                best = v
                pick = i
        kept[pick] = True
    count = 0
    for i in range(n):
        count += kept[i]
    return count


@njit(cache=True)
def _label_state(st, n, acts, base, kept, adv, ep, rp, tabs, work, bx, lab):
    """``adv[:n]``: the paired advantage over candidate ``base`` of each kept candidate of ``acts[:n]``
    (``kept[:n]``; 0 for the others) of the seat to act in ``st`` on shared determinizations (module
    docstring: ``lab.n_det`` of them, more with ``lab.spend_saved``), rolled out with the bots of
    ``lab.table`` and scored by the points context of ``bx.search``; ``lab``: the :class:`Labelling` (a
    random bot keeps its uniform redeal, any other seat gets the virtual turns of a greedy-like player:
    ``lab.pol``).  Returns the rollouts played."""
    s = st.table.to_act
    root = lab.states[1]
    roll = lab.states[2]
    vals = lab.vals
    turn = st.table.phase == PH_TURN
    n_kept = 0
    for i in range(n):
        adv[i] = 0.0
        n_kept += kept[i]
    n_det = lab.n_det
    if lab.spend_saved:
        n_det = min(MAX_DETERMINIZATIONS, (lab.n_det * n) // n_kept)
    for j in range(n_det):
        _determinize(root, st, s, ep, rp, tabs, lab.rng, lab.scratch_i, lab.pol)
        for i in range(n):
            if not kept[i]:
                continue
            _copy_state(roll, root)
            _legal_mask(roll, ep)
            a = acts[i]
            if turn:
                a = _discard_action(a - A_DISCARD, roll.mask)
            _step(roll, ep, rp, tabs, a)
            _rollout_all(roll, lab.table, ep, rp, tabs, work, bx)
            vals[i] = _hand_value(roll, s, ep, bx.search.points, bx.search.pay)
        for i in range(n):
            if kept[i]:
                adv[i] += (vals[i] - vals[base]) / n_det
    return n_det * n_kept


@njit(cache=True)
def _oracle_targets(st, n, acts, turn, ep, rp, tabs, lab, deal, ready):
    """The oracle targets of the state ``st`` (module docstring, "Oracle targets") into ``deal: int8[40]``
    (the candidates ``acts[:n]``) and ``ready: int8[3]``; all -1 unless ``lab.oracle``.  Uses the rollout
    state ``lab.states[2]`` as scratch; reads ``st`` (its legal mask current) only."""
    for i in range(deal.shape[0]):
        deal[i] = -1
    for r in range(3):
        ready[r] = -1
    if not lab.oracle:
        return
    _oracle_state(st, ep, rp, tabs, lab.states[2], lab.hb, lab.orow, lab.rec, lab.rec_at, 0, 0)
    for r in range(3):
        ready[r] = np.int8(lab.orow.ready[r])
    if turn:
        for i in range(n):
            k = acts[i] - A_DISCARD
            if 0 <= k < N_KINDS:
                deal[i] = np.int8(lab.orow.deal_in[k])


@njit(cache=True)
def _label_batch(walls, dealers, ep, rp, tabs, work, bx, lab, rows, count, stats):
    """Play the hands ``walls[h]`` (dealer ``dealers[h]``) with the bots of ``lab.table`` (:class:`Labelling`)
    and label a fraction ``lab.frac_q / 2**20`` of the learned seats' decisions of two or more candidates
    into ``rows`` (:class:`LabelRows`) from row ``count`` on (while rows are left), rolling out the
    candidates :func:`_keep` keeps; ``rows.kinds`` and ``rows.cand`` are zero rows for an MLP learner (not
    stored).  ``stats``: ``[learner decisions, all decisions, rollouts]`` added to.  Returns the new
    ``count``."""
    # borrowed views: no atomic reference counting in the millions of bot calls of the rollouts
    # (caishen.sim.borrow; 43% of the labelling's time before)
    ep, rp, tabs, work, bx, lab = borrowed((ep, rp, tabs, work, bx, lab))
    table, rng, kinds, cand = lab.table, lab.rng, rows.kinds, rows.cand
    st = lab.states[0]
    cap = rows.n.shape[0]
    conv = kinds.shape[0] > 0
    lx = bx.slots[0]
    for h in range(walls.shape[0]):
        _seeded_wall(walls[h], st)
        _reset(st, ep, rp, tabs, dealers[h])
        while st.table.phase != PH_DONE:
            _legal_mask(st, ep)
            s = st.table.to_act
            stats[1] += 1
            if table[s, 0] == POLICY_LEARNED:
                stats[0] += 1
                if count < cap and _rng_below(rng, _FRAC_ONE) < lab.frac_q:
                    p = bx.weights[s]
                    n = _learned_scores(p, st, ep, tabs, st.mask, work, lx)
                    if n >= 2:
                        fb = lx.vectors
                        turn = st.table.phase == PH_TURN
                        b = np.int64(0)  # not the constant 0: typing the loop would compile _label_state for it
                        best = fb[_R_LOGIT, 0]
                        for i in range(1, n):  # the bot's own choice, ties as it breaks them
                            if fb[_R_LOGIT, i] > best or (turn and fb[_R_LOGIT, i] == best):
                                best = fb[_R_LOGIT, i]
                                b = i
                        rows.ctx[count, :] = fb[_R_CTX, :N_CONTEXT]
                        rows.x[count, :n, :] = lx.features[:n]
                        rows.n[count] = n
                        rows.actions[count, :n] = lx.actions[:n]
                        rows.base[count] = b
                        rows.claim[count] = not turn
                        if conv:
                            for r in range(kinds.shape[1]):
                                for k in range(kinds.shape[2]):
                                    kinds[count, r, k] = np.uint8(np.int64(lx.kinds[r, k] * KINDS_SCALE + 0.5))
                            for i in range(n):
                                cand[count, i] = np.int8(lx.cand[i])
                        kept = rows.kept[count]
                        _keep(fb[_R_LOGIT], lx.features, n, b, turn, lab.top_k, lab.anchor, kept)
                        _oracle_targets(st, n, lx.actions, turn, ep, rp, tabs, lab, rows.deal[count],
                                        rows.ready[count])
                        stats[2] += _label_state(st, n, rows.actions[count], b, kept, rows.adv[count], ep, rp,
                                                 tabs, work, bx, lab)
                        count += 1
                        _legal_mask(st, ep)
            a = _bot_action(table[s, 0], table[s, 1], st, ep, rp, tabs, st.mask, work, bx)
            _step(st, ep, rp, tabs, a)
    return count


def label_hands(policies, rules: str, walls, n_det: int = 8, frac: float = 0.1, cap: int = 10_000,
                seed: int = 0, buf: dict | None = None, count: int = 0, prune: Pruning = Pruning(),
                oracle: bool = False) -> tuple[dict, int, np.ndarray]:
    """Play the hands of ``walls`` (an int sequence of wall seeds; dealer ``wall % 4``) with the four
    bots of ``policies`` (e.g. ``"learned:net.npz,tuned:R,greedy,learned:net.npz"``) and label a
    fraction ``frac`` of the decisions of its ``learned:`` seats that have two or more candidates
    (module docstring) on ``n_det`` determinizations each, into ``buf`` (:func:`new_buffer`, ``cap``
    rows; made if None) from row ``count`` on; labelling stops when it is full.  An ``action-conv``
    learner's labels also store its inputs (``kinds``, ``cand``: a buffer of ``new_buffer(cap, conv=True)``).
    ``prune``: the pruning of the module docstring (:class:`Pruning`; the default rolls out every candidate,
    as before pruning).  ``oracle``: fill the oracle targets
    ``deal`` and ``ready`` (module docstring; else -1); they change no label, no input and no random draw.

    Returns ``(buf, count, stats: int64[3])``: the rows now filled, and the learner's and all seats'
    decisions played and the rollouts of the labels.  ``seed`` seeds the sampling and the determinizations.
    Raises ``ValueError`` for a bad spec (as the commands do), no ``learned:`` seat, learned seats of both
    architectures, a ``buf`` without (MLP: with) the conv's inputs for a conv (MLP) learner, ``n_det`` outside
    ``1..MAX_DETERMINIZATIONS``, ``frac`` outside ``0..1``, ``top_k`` outside ``0..40`` or an ``anchor`` not
    17 finite numbers.
    """
    if not isinstance(n_det, int) or isinstance(n_det, bool) or not 1 <= n_det <= MAX_DETERMINIZATIONS:
        raise ValueError(f"n_det must be an integer in 1..{MAX_DETERMINIZATIONS}, got {n_det!r}")
    if not isinstance(frac, (int, float)) or isinstance(frac, bool) or not 0.0 <= float(frac) <= 1.0:
        raise ValueError(f"frac must be a number in 0..1, got {frac!r}")
    if not isinstance(prune, Pruning):
        raise ValueError(f"prune must be a caishen.sim.selfplay.labels.Pruning, got {short_repr(prune)}")
    top_k, spend_saved, anchor = prune
    if not isinstance(top_k, (int, np.integer)) or isinstance(top_k, bool) or not 0 <= top_k <= MAX_CANDIDATES:
        raise ValueError(f"top_k must be an integer in 0..{MAX_CANDIDATES}, got {top_k!r}")
    anchor = np.zeros(0) if anchor is None else np.ascontiguousarray(anchor, np.float64)
    if anchor.shape not in ((0,), (N_ACTION,)) or not np.isfinite(anchor).all():
        raise ValueError(f"anchor must be {N_ACTION} finite numbers (the start's linear weights), got shape "
                         f"{list(anchor.shape)}")
    specs = split_specs(policies)
    if not any(parse(p).code == POLICY_LEARNED for p in specs):
        raise ValueError(f"policies {policies!r}: no learned: seat to label")
    name, r = load_rules(rules, None)
    ep, rp, tabs = engine_params(name, r), r.params(), hand_tables()
    table, weights = bot_table(policies, name, int(ep.joker))
    bx = make_context(name, r, weights, seed, policies, search=True)  # its points context scores the rollouts
    codes = {int(bx.weights[s][0]) for s in range(4) if table[s, 0] == POLICY_LEARNED}
    if len(codes) > 1:
        raise ValueError(f"policies {policies!r}: learned seats of both architectures; label one at a time")
    conv = codes == {ARCH_CODES[ARCH_CONV]}
    if buf is None:
        buf = new_buffer(cap, conv)
    if ("kinds" in buf) != conv:
        raise ValueError(f"policies {policies!r}: the learner is {'an action-conv' if conv else 'an action-mlp'} "
                         f"net but the buffer {'lacks' if conv else 'has'} the conv's inputs "
                         f"(new_buffer(cap, conv={conv}))")
    if conv:
        kinds, cand = buf["kinds"], buf["cand"]
    else:
        kinds, cand = np.zeros((0, N_PLANES, _N_KINDS), np.uint8), np.zeros((0, MAX_CANDIDATES), np.int8)
    rng = np.zeros(4, np.uint64)
    _rng_seed(rng, (int(seed) * 0x2545F491 + 0x1AB) % 2**63)
    walls = np.asarray(walls, np.int64)
    stats = np.zeros(3, np.int64)
    # the redeal's kind of each seat: the random bot as random, every other bot greedy-like
    pol = np.where(table[:, 0] == POLICY_RANDOM, POLICY_RANDOM, POLICY_GREEDY).astype(np.int64)
    lab = Labelling(table, int(round(float(frac) * _FRAC_ONE)), int(n_det), pol, new_state(3),
                    np.zeros((4, 160), np.int64), rng, np.zeros(MAX_CANDIDATES), int(top_k), bool(spend_saved), anchor,
                    bool(oracle), new_oracle_row(), np.zeros(N_KINDS, np.uint8), new_records(0), np.zeros(0, np.int64))
    rows = LabelRows(buf["ctx"], buf["x"], buf["n"], buf["actions"], buf["adv"], buf["base"], buf["claim"],
                     buf["kept"], kinds, cand, buf["deal"], buf["ready"])
    count = _label_batch(walls, walls % 4, ep, rp, tabs, new_work(), bx, lab, rows, int(count), stats)
    return buf, int(count), stats
