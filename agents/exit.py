"""Expert iteration from the tuned bot: a learned bot improved on rollout labels (``caishen learn``, issue 26).

The recipe, in its simplest form:

1. **Start at the tuned bot.**  The network is the learned bot's
   (:class:`caishen.agents.learned_torch.ActionMLP`, architecture
   ``action-mlp`` of :mod:`caishen.sim.bots.learned`) initialised with
   :func:`caishen.sim.bots.learned.from_tuned`: the tuned weights of the rule
   set as its linear part and a zero residual, so step 0 plays exactly as
   ``tuned:R`` (a test).  ``--arch conv``: the ``action-conv`` net instead
   (:class:`caishen.agents.learned_torch.ActionConv`,
   :func:`~caishen.agents.learned_torch.conv_model_from_tuned`: the tuned
   weights, small random conv layers and a zero head; it too plays as
   ``tuned:R`` at step 0), its labels storing its inputs (the ``kinds``
   planes and each candidate's score index).
2. **Label its own states.**  Each iteration plays ``--hands`` hands with the
   current net (``learned:DIR/current.npz``) in the learner seats against a
   pool (the tuned bot, greedy and the net itself; the lineup cycles over
   :data:`LINEUPS`) and, at a fraction ``--frac`` of the learner's decisions
   with two or more candidates, labels the candidates it keeps with their paired
   rollout advantage over the net's own choice on ``--det`` shared
   determinizations from the seat's view (:mod:`caishen.sim.selfplay.labels`,
   numba; hidden tiles enter the labels only, never the policy's inputs).
   It keeps the net's ``--top-k`` (:data:`TOP_K`) candidates by logit, the
   net's own choice (the behaviour policy's: the learner's seats play the
   net) and the start's (tuned's) choice; ``--top-k 0`` keeps every one.  The
   kept set depends on the policy's inputs only, so each kept label is as
   unbiased as without pruning; the rollouts saved label more states in the
   same time, or with ``--spend-saved`` go to more determinizations.
   The labelled states of all iterations so far (the newest
   :data:`BUFFER` of them) are the training set: DAgger on the net's own states.
3. **Improve on the labels.**  Adam on the all-actions policy gradient
   ``L = -sum_{a kept} pi_K(a|s) A(a) / c + beta * KL(pi_0(.|s) || pi(.|s))`` averaged over
   the labelled states, ``pi = softmax(logits / tau)`` over the state's
   candidates, ``pi_K`` the same softmax over the kept candidates only (a pruned one has
   no label; without pruning ``pi_K = pi``), ``pi_0`` the start (the tuned bot's scores): the expected
   advantage under the policy rises while the KL term holds it near its start.
   ``c`` is the rule set's advantage scale (:func:`advantage_scale`: its
   ``RuleSet.reward_scale``, about one sd of a seat's points per hand, over
   that of :data:`REFERENCE_RULES`, the default rule set, where the defaults
   were tuned): 1 there, 5 for a rule set whose points are 5 times as spread
   (J-6; without it the same ``beta`` let the net drift,
   the first benchmark of issue 26, its second section).
   **Oracle heads** (``--aux W``, issue 46; 0: off): two training-only heads on the MLP's last hidden
   layer (:class:`~caishen.agents.learned_torch.OracleHeads`, as the env trainer's) add ``W`` times their
   binary cross-entropies to ``L``: per candidate discard, does it deal in now; per opponent, is it ready.
   Their targets come from the real hidden state where the labels are made (the labels' "Oracle
   targets", the kernel of the envs' ``info["oracle"]``); they feed the net's hidden layer through the
   shared loss only, never its inputs, and are not exported (``learned.npz`` is the same format, played by
   the same kernel).  ``--arch conv`` has no oracle heads.
4. **Export and check.**  ``DIR/learned.npz`` (``learned:DIR/learned.npz``
   plays it in every command) after each iteration; at the end a
   duplicate-deal match (``caishen match`` through the runner) of
   ``learned:DIR/learned.npz,tuned:R,greedy,greedy`` on ``--eval-walls``
   walls of seed ``--seed + EVAL_SEED`` (the match's walls are
   ``SeedSequence`` streams; training walls are the wall seeds
   ``seed * 10**9 + k`` of :func:`caishen.sim.engine._seeded_wall`: never the same).

Budgets (:func:`learn`'s :class:`Budget`; the first spent ends the run, each iteration's line gives its ETA):
``--minutes`` of wall time, ``--labels`` labelled states, ``--cpu-minutes`` of CPU time of the process and
its workers, this process's numba compile on a cold cache left out (none given: :data:`DEFAULT_CPU_MINUTES`).  The settings travel as named configs
(:class:`Budget`, :class:`LabelConfig`, :class:`TrainConfig`, :class:`NetConfig`, :class:`Execution`); the
run folder's files are :mod:`caishen.agents.exit_store`'s.

Files in ``DIR``: ``checkpoint.pt`` (the net, its architecture and shape, its start, the optimiser,
the MLP's oracle heads and theirs, the counters, the curve's rows and the batch stream: a rerun of the
same command resumes there; one of another ``--arch`` is refused), ``buffer.npz`` (the labelled states, tagged with their iteration), ``current.npz``
(the net the next labels play),
``learned.npz``, ``curve.csv`` (one row per iteration: wall seconds,
hands, learner decisions, labelled states, their rates per second, the
loss, the KL to the start, ``heldout_gain``: on the iteration's newest labelled
states, which it was not trained on yet, the mean advantage of the updated
net's choice minus that of the net's choice before the update (points per
decision, the updated net's choice taken among the kept candidates; above 0: the update picks better
actions than the net that labelled them), the agreement with the start's choices, and the
per-decision diagnostics of :func:`diagnostics` on the iteration's labelled
states: ``agree_tuned`` and ``agree_greedy``, how often the net that played
the hands chose as ``tuned:R`` and as ``greedy`` would have, and
``shanten_up``, the fraction of its discards that leave a worse shanten than
its best discard; then ``aux_loss``, the oracle heads' loss at the iteration's last step, NaN without
``--aux``), and ``eval/`` (the match's run directory, ``match.json``,
whose table also gives each seat's deal-in rate; :func:`learn` returns the
learner's in ``"eval"``; a resumed run that trains on replaces it).

The folder is the run's alone: :func:`learn` holds it as every tool holds its folder
(:func:`caishen.sim.selfplay.rundir.workspace`: its lock ``DIR/.lock``, a second learn there is refused,
and no symbolic link inside); every file is written
atomically through :mod:`caishen.sim.safeio`.  The finished iterations commit as one unit (:func:`_commit`)
at most every :data:`COMMIT_SECONDS` and at the end of the run (a commit rewrites the whole labels buffer,
so one per iteration cost more than the iteration once the buffer was large; a killed run loses at most
that minute's iterations, and ``learned.npz`` is exported after each one): the labels
go to ``buffer.next.npz``, then the checkpoint -- the commit point, holding the curve's rows -- replaces the
last one, then the labels become ``buffer.npz`` and ``curve.csv`` is rewritten from the checkpoint.  So a
crash or a full disk at any write resumes to exactly the rows of an uninterrupted run, never an iteration
twice (``tests/test_crash_consistency.py`` kills it at every rename and fsync).  A checkpoint or a buffer is
checked field by field before it is used (sizes, shapes, finite values, the run's iteration): a damaged one
is a one-line error naming the file and the field.  The settings are checked before anything is trained
(:func:`_check_settings`: the evaluation's walls included).

Needs torch (the ``[rl]`` extra): ``import caishen.agents`` does not import it.
"""

from __future__ import annotations

import math
import shutil
import time
from pathlib import Path

from typing import NamedTuple

import numpy as np

from caishen.agents.exit_store import (  # noqa: F401  (BUFFER_FILE, the checked files: re-exported)
    ARCHS,
    BUFFER,
    BUFFER_FILE,
    BUFFER_NEXT,
    CHECKPOINT,
    DIAGNOSTICS,
    _append,
    _commit,
    _curve_text,
    _load_heads,
    _read_buffer,
    _read_checkpoint,
)
from caishen.sim import safeio
from caishen.sim.rules.base import DEFAULT
from caishen.sim.selfplay import rundir
from caishen.sim.warmup import CompileWatch

__all__ = ["LINEUPS", "BUFFER", "EVAL_SEED", "REFERENCE_RULES", "ARCHS", "TOP_K", "DEFAULT_CPU_MINUTES", "Budget",
           "LabelConfig", "TrainConfig", "NetConfig", "Execution", "settings", "advantage_scale", "greedy_choice",
           "diagnostics", "device_of", "initial_model", "label_iteration", "learn", "evaluate", "add_command",
           "main"]

#: the conv's channels when none are given (conv_model_from_tuned's default)
CONV_CHANNELS = (16, 16)
#: the lineups of the labelled hands, cycled per iteration (``L``: the current net, ``T``: the tuned bot)
LINEUPS = ("L,T,greedy,greedy", "L,greedy,T,L", "L,T,L,greedy")
#: the evaluation match's seed is ``seed + EVAL_SEED``
EVAL_SEED = 1_000_003
#: the rule set whose points scale the defaults were tuned at (the first benchmark of issue 26)
REFERENCE_RULES = DEFAULT
# action v1 feature rows (caishen.sim.bots.features.ACTION_V1) the greedy rule reads
_X_SHANTEN, _X_EFF, _X_CLAIM_GAIN = 0, 1, 13


def _torch():
    try:
        import torch
    except ImportError:
        raise ValueError("caishen learn needs torch: install a CPU build of torch, then pip install 'caishen[rl]' "
                         "(docs/tutorials/train-a-bot.md)") from None
    return torch


def advantage_scale(rules: str = DEFAULT) -> float:
    """The divisor ``c`` of the labels' advantages in the loss (module docstring, step 3): the rule set's
    ``reward_scale`` (about one sd of a seat's points per hand, :class:`caishen.sim.rules.base.RuleSet`)
    over :data:`REFERENCE_RULES`' (1.0 for that rule set; 8 and 40 give 5.0).  Raises ``ValueError`` for an
    unknown rule set."""
    from caishen.sim import rules as rulesets
    from caishen.sim.engine import load_rules

    name, _ = load_rules(rules, None)  # the error for an unknown rule set
    return float(rulesets.get(name).reward_scale) / float(rulesets.get(REFERENCE_RULES).reward_scale)


def greedy_choice(x: np.ndarray, n: np.ndarray, claim: np.ndarray) -> np.ndarray:
    """The candidate the ``greedy`` bot takes at labelled states, from their action features alone.

    ``x: float64[N, C, 17]`` (``action`` v1), ``n: int64[N]`` candidates, ``claim: bool[N]``.  On a turn
    (the learned bot's candidates there are discards only) greedy discards to the lowest shanten left,
    ties by the most live effective tiles, the later kind on a full tie (policies._best_discard); at a
    claim it takes the first of pong, kong, chows (the learned bot's order after ``pass``) that lowers
    the shanten most, if any does (policies._greedy_claim).  Returns ``int64[N]`` candidate indices.
    A test compares it with the greedy kernel on played states: the same choice on every one of them."""
    x = np.asarray(x, np.float64)
    c = x.shape[1]
    valid = np.arange(c)[None, :] < np.asarray(n)[:, None]
    sh = np.where(valid, x[:, :, _X_SHANTEN], np.inf)
    eff = np.where(valid & (sh == sh.min(1, keepdims=True)), x[:, :, _X_EFF], -np.inf)
    turn = c - 1 - np.argmax(eff[:, ::-1], 1)  # the last of the best
    gain = np.where(valid, x[:, :, _X_CLAIM_GAIN], -np.inf)
    return np.where(np.asarray(claim, bool), np.argmax(gain, 1), turn).astype(np.int64)


def diagnostics(buf: dict, chosen: np.ndarray, tuned: np.ndarray) -> dict:
    """Per-decision diagnostics of a policy's choices ``chosen: int64[N]`` (candidate indices) at the
    labelled states ``buf`` (rows ``:N`` of :func:`caishen.sim.selfplay.labels.new_buffer`), with the
    tuned bot's choices ``tuned: int64[N]``: ``agree_tuned``, ``agree_greedy`` (:func:`greedy_choice`)
    and ``shanten_up`` (of the turn states, the fraction whose chosen discard leaves a higher shanten
    than the best discard).  Each a fraction in [0, 1]; NaN where there is no state to count."""
    m = len(chosen)
    if m == 0:
        return {k: float("nan") for k in DIAGNOSTICS}
    x, n, claim = buf["x"][:m], buf["n"][:m], buf["claim"][:m]
    rows = np.arange(m)
    greedy = greedy_choice(x, n, claim)
    valid = np.arange(x.shape[1])[None, :] < n[:, None]
    best = np.where(valid, x[:, :, _X_SHANTEN], np.inf).min(1)
    up = x[rows, chosen, _X_SHANTEN] > best
    turns = ~claim
    return {"agree_tuned": float((chosen == tuned).mean()), "agree_greedy": float((chosen == greedy).mean()),
            "shanten_up": float(up[turns].mean()) if turns.any() else float("nan")}


def _check_arch(arch) -> str:
    if arch not in ARCHS:
        raise ValueError(f"arch {arch!r}: must be one of {', '.join(ARCHS)}")
    return arch


def initial_model(rules: str = DEFAULT, hidden: tuple[int, int] = (32, 16), seed: int = 0, arch: str = "mlp",
                  channels: tuple[int, ...] = CONV_CHANNELS):
    """The start of training: ``arch`` ``"mlp"``: :class:`~caishen.agents.learned_torch.ActionMLP`
    (``hidden``) with the tuned weights of ``rules`` and a zero residual
    (:func:`caishen.sim.bots.learned.from_tuned`); ``"conv"``:
    :class:`~caishen.agents.learned_torch.ActionConv` (``channels``) with the tuned weights, random conv
    layers (``seed``) and a zero head (:func:`~caishen.agents.learned_torch.conv_model_from_tuned`).
    Either plays as ``tuned:rules``.  ``ValueError`` for another ``arch``."""
    from caishen.agents.learned_torch import ActionMLP, conv_model_from_tuned
    from caishen.sim.bots import learned
    from caishen.sim.bots.registry import load_tuned

    if _check_arch(arch) == "conv":
        return conv_model_from_tuned(rules, tuple(channels), seed)

    w, _ = load_tuned(rules)
    net = learned.from_tuned(w, hidden, seed, rules)
    return ActionMLP(hidden, rules).load_arrays(net)


def device_of(torch, device: str | None = "auto"):
    """The ``torch.device`` the update runs on (``--device``): ``"auto"`` (or None) a CUDA GPU when torch
    finds one, else the CPU; ``"cpu"``; ``"cuda"`` or ``"cuda:N"``.  Raises ``ValueError`` naming the value
    for another one, and for a CUDA device that torch does not find (a CPU build of torch, no GPU, an index
    past the GPUs)."""
    if device is None or device == "auto":
        return torch.device("cuda" if torch.cuda.is_available() else "cpu")
    if device == "cpu":
        return torch.device("cpu")
    if isinstance(device, str) and (device == "cuda" or (device.startswith("cuda:") and device[5:].isdigit())):
        if not torch.cuda.is_available():
            raise ValueError(f"device {device!r}: torch finds no CUDA GPU here (a CPU build of torch "
                             f"{torch.__version__}, or no GPU); use --device cpu or auto")
        index = int(device[5:]) if ":" in device else 0
        if index >= torch.cuda.device_count():
            raise ValueError(f"device {device!r}: torch finds {torch.cuda.device_count()} CUDA GPU(s)")
        return torch.device(device)
    raise ValueError(f"device {device!r}: must be auto, cpu, cuda or cuda:N")


def _tensors(torch, buf: dict, idx: np.ndarray, device=None):
    """The batch of rows ``idx`` on ``device`` (None: the CPU): ``(*inputs, adv, kept, valid)``, ``inputs`` the
    model's: ``(x, ctx)`` (MLP) or, for a buffer with the conv's inputs, ``(x, kinds, cand)`` (the planes
    back from quarters); ``kept``: the candidates the labels rolled out (all ``valid`` ones in a buffer
    without the column)."""
    from caishen.sim.selfplay.labels import KINDS_SCALE

    n = buf["n"][idx]
    c = max(2, int(n.max()))
    x = torch.as_tensor(buf["x"][idx, :c], dtype=torch.float64)
    adv = torch.as_tensor(buf["adv"][idx, :c], dtype=torch.float64)
    valid = torch.as_tensor(np.arange(c)[None, :] < n[:, None])
    kept = torch.as_tensor(buf["kept"][idx, :c]) & valid if "kept" in buf else valid
    if "kinds" in buf:
        kinds = torch.as_tensor(buf["kinds"][idx].astype(np.float64) / KINDS_SCALE)
        cand = torch.as_tensor(buf["cand"][idx, :c].astype(np.int64))
        out = (x, kinds, cand, adv, kept, valid)
    else:
        out = (x, torch.as_tensor(buf["ctx"][idx], dtype=torch.float64), adv, kept, valid)
    return out if device is None else tuple(t.to(device) for t in out)


def _oracle_tensors(torch, buf: dict, idx: np.ndarray, width: int, device=None):
    """The oracle targets of rows ``idx`` (:mod:`caishen.sim.selfplay.labels`, "Oracle targets"):
    ``(deal int8[N, width], ready int8[N, 3])`` on ``device``, -1 where there is none."""
    out = (torch.as_tensor(buf["deal"][idx, :width]), torch.as_tensor(buf["ready"][idx]))
    return out if device is None else tuple(t.to(device) for t in out)


def _new_heads(torch, model, seed: int, lr: float, dev):
    """``(heads, opt)``: the oracle heads of the MLP ``model`` (:class:`~caishen.agents.learned_torch.
    OracleHeads`, initialised from ``seed`` without touching torch's global stream) and their own Adam (Adam
    is per parameter: the same steps as one Adam over the net and the heads); ``None`` for the conv."""
    from caishen.agents.learned_torch import OracleHeads

    if not hasattr(model, "fc2"):
        return None
    with torch.random.fork_rng(devices=[]):
        torch.manual_seed(int(seed) + 46)
        heads = OracleHeads(model.fc2.out_features).to(dev)
    return heads, torch.optim.Adam(heads.parameters(), lr=lr)


def _aux_loss(torch, heads, h, valid, deal, ready):
    """The oracle heads' loss on the hidden layer ``h: [N, C, H2]``: the mean binary cross-entropy of
    ``deal_in`` over the candidates with a target (``deal >= 0``) plus that of ``ready`` over the opponents
    with one; 0 where a batch has none."""
    bce = torch.nn.functional.binary_cross_entropy_with_logits
    d, r = heads(h, valid)
    loss = h.new_zeros(())
    has = valid & (deal >= 0)
    if bool(has.any()):
        loss = loss + bce(d[has], deal[has].to(h.dtype))
    has = ready >= 0
    if bool(has.any()):
        loss = loss + bce(r[has], ready[has].to(h.dtype))
    return loss


def _policy(torch, model, inputs, valid, tau):
    logits = model(*inputs).masked_fill(~valid, -1e30)
    return torch.log_softmax(logits / tau, dim=-1), logits


def _start_logits(torch, model0):
    """The start's logits as a function of a batch's inputs: ``(x * linear).sum(-1)`` when the net's last
    layer is zero, as :func:`initial_model` makes it (the very numbers of its forward pass, whose other
    term is then exactly 0, at a fifth of the update's cost), else the net ``model0`` itself."""
    last = model0.fc3 if hasattr(model0, "fc3") else model0.head
    if any(bool(p.detach().any()) for p in last.parameters()):
        return model0
    lin = model0.linear.detach()
    return lambda x, *rest: (x * lin).sum(-1)


def _loss(torch, model, model0, batch, tau, beta, scale=1.0, aux=None):
    """``(loss, kl, aux_loss)`` of a batch of :func:`_tensors` (module docstring, step 3): the policy-gradient
    term over the candidates the labels kept (the policy's softmax restricted to them: a pruned candidate has
    no label), the KL to the start over all of them (it holds the pruned ones near the start too).
    ``model0``: the start, a net or :func:`_start_logits`'s function.  ``aux``: ``(weight, heads, deal,
    ready)`` adds ``weight`` times :func:`_aux_loss` (None: no oracle heads; ``aux_loss`` NaN)."""
    inputs, adv, kept, valid = batch[:-3], batch[-3], batch[-2], batch[-1]
    adv = adv / scale
    aux_loss = None
    if aux is None:
        logits = model.logits(*inputs)  # the forward pass, its first layer split as the kernel's
    else:  # the same logits, the hidden layer kept for the heads
        h = model.hidden(*inputs)
        logits = model.head(inputs[0], h)
        aux_loss = _aux_loss(torch, aux[1], h, valid, aux[2], aux[3])
    logp = torch.log_softmax(logits.masked_fill(~valid, -1e30) / tau, dim=-1)
    p_kept = torch.softmax(logits.masked_fill(~kept, -1e30) / tau, dim=-1)
    with torch.no_grad():
        logp0, _ = _policy(torch, model0, inputs, valid, tau)
    p0 = logp0.exp()
    pg = -(p_kept * adv.masked_fill(~kept, 0.0)).sum(-1).mean()
    kl = (p0 * (logp0 - logp)).masked_fill(~valid, 0.0).sum(-1).mean()
    if aux_loss is None:
        return pg + beta * kl, kl, None
    return pg + beta * kl + aux[0] * aux_loss, kl, aux_loss


def _choice(torch, model, batch, kept_only: bool = False) -> np.ndarray:
    """The net's choice per state (the kernel's: largest logit; ties to the later candidate on a turn):
    ``int64[N]`` candidate indices; ``kept_only``: among the candidates the labels kept."""
    inputs, valid = batch[:-3], batch[-2 if kept_only else -1]
    with torch.no_grad():
        logits = model(*inputs).masked_fill(~valid, -1e30)
    c = logits.shape[1]
    rev = torch.flip(logits, [1])
    return (c - 1 - rev.argmax(1)).cpu().numpy()  # the last maximum (claims: 'pass' first, a tie there is rare)


def _part_seed(seed: int, j: int) -> int:
    """The labels' seed of part ``j`` of an iteration's walls: part 0 keeps the iteration's own seed (one
    worker labels exactly as before), the others a SeedSequence stream of it."""
    if j == 0:
        return int(seed)
    return int(np.random.SeedSequence([int(seed) % 2**63, j]).generate_state(1, np.uint64)[0] % 2**63)


def _label_part(lineup: str, rules: str, walls: np.ndarray, cfg, seed: int, conv: bool, anchor=None,
                oracle: bool = False):
    """Label one part of an iteration's walls (:func:`caishen.sim.selfplay.labels.label_hands` with the
    :class:`LabelConfig` ``cfg``, the start's linear weights ``anchor`` and ``oracle``: the oracle targets
    filled): the filled rows, the decision and rollout counts and the CPU seconds spent (by this process).
    Module level: a worker runs it."""
    from caishen.sim.selfplay.labels import Pruning, label_hands, new_buffer

    c0 = time.process_time()
    cap = max(16, len(walls) * 8)
    new, m, stats = label_hands(lineup, rules, walls, n_det=cfg.n_det, frac=cfg.frac, cap=cap, seed=seed,
                                buf=new_buffer(cap, conv), prune=Pruning(cfg.top_k, cfg.spend_saved, anchor),
                                oracle=oracle)
    return {k: v[:m] for k, v in new.items()}, m, stats, time.process_time() - c0


def label_iteration(lineup: str, rules: str, walls: np.ndarray, cfg, seed: int, conv: bool, anchor=None,
                    pool=None, workers: int = 1, oracle: bool = False):
    """An iteration's labels over ``walls`` (:class:`LabelConfig` ``cfg``; ``anchor``: the start's linear
    weights, whose choice pruning keeps; ``oracle``: with the oracle targets), split in ``workers`` contiguous
    parts labelled side by side
    in ``pool`` (a ``concurrent.futures`` executor; None: in this process), part ``j`` with the seed
    :func:`_part_seed` ``(seed, j)``; the parts' rows concatenated in order.  Returns ``(rows, m,
    stats: int64[3], cpu_s)`` (stats: learner decisions, all decisions, rollouts), ``cpu_s`` the parts' CPU
    seconds summed (in this process or the workers').  The same ``workers`` gives the same labels;
    ``workers=1`` those of one call of ``label_hands``."""
    parts = [p for p in np.array_split(np.asarray(walls), max(1, int(workers))) if len(p)]
    args = [(lineup, rules, p, cfg, _part_seed(seed, j), conv, anchor, oracle) for j, p in enumerate(parts)]
    done = [pool.submit(_label_part, *a) for a in args] if pool is not None else None
    results = [f.result() for f in done] if done is not None else [_label_part(*a) for a in args]
    rows = {k: np.concatenate([r[0][k] for r in results]) for k in results[0][0]}
    return rows, sum(r[1] for r in results), np.sum([r[2] for r in results], axis=0), sum(r[3] for r in results)


#: bounds of the settings, checked before anything is trained: hands per iteration (each labels up to 8
#: states per hand, ~5.4 KB each), Adam steps and batch, the evaluation's walls (as ``caishen match``), the seed
MAX_HANDS = 50_000
MAX_STEPS = 10**6
MAX_BATCH = 1 << 16
MAX_EVAL_WALLS = 10**9
MAX_SEED = 10**9
#: the most labelled states ``--labels`` may ask for
MAX_LABELS = 10**12
#: wall seconds between two commits of the run folder (module docstring, "Files"): a commit writes the whole
#: labels buffer (1.3 CPU s at 100,000 states), so it is not done after every iteration; the budgets' end
#: commits the rest
COMMIT_SECONDS = 60.0
#: the budget of a run given none (:func:`learn`): CPU minutes of its training
DEFAULT_CPU_MINUTES = 8.0
#: candidates kept by the net's logits before the rollouts (``--top-k``; labels' module docstring, "Pruning")
TOP_K = 2


class Budget(NamedTuple):
    """When a :func:`learn` run stops: the first budget spent ends it (none given:
    :data:`DEFAULT_CPU_MINUTES` CPU minutes), or ``max_iterations``, whatever the budgets."""

    minutes: float | None = None  #: wall minutes of this call (``--minutes``)
    labels: int | None = None  #: labelled states of the run, a resumed run counting on (``--labels``)
    cpu_minutes: float | None = None  #: CPU minutes of the run, its workers' too, the evaluation and a cold compile apart
    max_iterations: int | None = None  #: iterations of the run, whatever the budgets (tests, benchmarks)


class LabelConfig(NamedTuple):
    """How an iteration's hands are played and labelled (:func:`label_iteration`)."""

    hands: int = 400  #: hands played per iteration (``--hands``)
    n_det: int = 8  #: determinizations per labelled state (``--det``)
    frac: float = 0.1  #: fraction of the learner's decisions of two or more candidates labelled (``--frac``)
    top_k: int = TOP_K  #: candidates kept by the net's logits, 0 all (``--top-k``; with the net's and start's choice)
    spend_saved: bool = False  #: the rollouts pruning saves go to more determinizations (``--spend-saved``)


class TrainConfig(NamedTuple):
    """The net's update per iteration (module docstring, step 3)."""

    steps: int = 50  #: Adam steps per iteration (``--steps``)
    batch: int = 256  #: labelled states per step
    lr: float = 3e-4  #: Adam's learning rate (``--lr``)
    beta: float = 1.0  #: weight of the KL to the start (``--beta``)
    tau: float = 1.0  #: temperature of the policy's softmax (``--tau``)
    adv_scale: float | None = None  #: the advantages' divisor (None: :func:`advantage_scale` of the rule set)
    aux: float = 0.0  #: weight of the oracle heads' loss, 0 off (``--aux``; module docstring, step 3)


class NetConfig(NamedTuple):
    """The net trained (:func:`initial_model`; a resumed run keeps its checkpoint's shape)."""

    arch: str = "mlp"  #: ``"mlp"`` (action-mlp) or ``"conv"`` (action-conv): ``--arch``
    hidden: tuple = (32, 16)  #: the MLP's hidden sizes
    channels: tuple = CONV_CHANNELS  #: the conv's channels


class Execution(NamedTuple):
    """Where and how a run computes, and its final evaluation."""

    workers: int = 1  #: processes labelling each iteration's walls side by side (``--workers``)
    device: str | None = "auto"  #: where the net's updates run (:func:`device_of`; ``--device``)
    eval_walls: int = 20_000  #: walls of the final match (0: none; ``--eval-walls``)


_CONFIGS = {"budget": Budget, "labelling": LabelConfig, "train": TrainConfig, "net": NetConfig, "run": Execution}


def settings(**flat) -> dict:
    """The configs of :func:`learn` from flat settings, each into its config (``settings(hands=12,
    max_iterations=2)`` gives ``{"budget": Budget(max_iterations=2), "labelling": LabelConfig(hands=12), ...}``,
    the defaults elsewhere): ``learn(rules, out, **settings(...))``.  ``ValueError`` naming an unknown one."""
    out = {k: {} for k in _CONFIGS}
    for name, v in flat.items():
        home = next((k for k, cls in _CONFIGS.items() if name in cls._fields), None)
        if home is None:
            known = ", ".join(f for c in _CONFIGS.values() for f in c._fields)
            raise ValueError(f"setting {name!r}: not one of learn's ({known})")
        out[home][name] = v
    return {k: _CONFIGS[k](**v) for k, v in out.items()}


def _check_settings(rules: str, **kw) -> None:
    """``ValueError`` naming the first bad setting of :func:`learn` (its bounds above), before anything is
    trained: the evaluation match's configuration too (``eval_walls`` walls in every seating)."""
    from caishen.sim.bots.search import MAX_DETERMINIZATIONS

    ints = {"hands": (1, MAX_HANDS), "steps": (0, MAX_STEPS), "batch": (1, MAX_BATCH),
            "eval_walls": (0, MAX_EVAL_WALLS), "seed": (0, MAX_SEED), "n_det": (1, MAX_DETERMINIZATIONS),
            "labels": (1, MAX_LABELS), "top_k": (0, 40), "max_iterations": (0, 10**9)}
    for name, (lo, hi) in ints.items():
        v = kw[name]
        if v is None and name in ("labels", "max_iterations"):  # no such budget
            continue
        if isinstance(v, bool) or not isinstance(v, (int, np.integer)) or not lo <= v <= hi:
            raise ValueError(f"{name} {str(v)[:40]}: must be an integer in {lo}..{hi:,}")
    if not isinstance(kw["spend_saved"], (bool, np.bool_)):
        raise ValueError(f"spend_saved {str(kw['spend_saved'])[:40]}: must be True or False")
    if kw["labels"] is not None and not kw["frac"]:
        raise ValueError("labels: a label budget needs frac > 0 (no state is labelled at frac 0)")
    for name, lo, hi in (("minutes", 0, math.inf), ("cpu_minutes", 1e-9, math.inf), ("lr", 0, math.inf),
                         ("beta", 0, math.inf), ("tau", 1e-6, math.inf), ("adv_scale", 1e-9, math.inf),
                         ("frac", 0, 1), ("aux", 0, math.inf)):
        v = kw[name]
        if name in ("adv_scale", "minutes", "cpu_minutes") and v is None:
            continue
        ok = not isinstance(v, bool) and isinstance(v, (int, float, np.integer, np.floating))
        if not ok or not math.isfinite(float(v)) or not lo <= float(v) <= hi:
            raise ValueError(f"{name} {str(v)[:40]}: must be a finite number in {lo:g}..{hi:g}")
    if kw["eval_walls"]:
        from caishen.sim.analysis import arena

        try:  # the evaluation's own bounds (walls x seatings in a run), checked now rather than after training
            arena.make_config(rules, f"tuned:{rules},tuned:{rules},greedy,greedy", int(kw["eval_walls"]),
                              int(kw["seed"]) + EVAL_SEED, {})
        except ValueError as e:
            raise ValueError(f"eval_walls {kw['eval_walls']}: the evaluation match cannot be run ({e})") from None



def _start(torch, out: Path, rules: str, net: NetConfig, seed: int, lr: float, dev, log):
    """``(model, model0, opt, heads, state, buf, gen)``: a fresh start in ``out`` (the net of
    :func:`initial_model`, its oracle heads of :func:`_new_heads`, an empty curve), or the committed iteration
    of its checkpoint (:func:`_read_checkpoint`, :func:`_read_buffer`), ``curve.csv`` rewritten from it (a
    crash after the commit may have left the previous one)."""
    if not (out / CHECKPOINT).exists():
        safeio.discard(out / BUFFER_NEXT)  # labels of a first iteration killed before its commit
        model = initial_model(rules, net.hidden, seed, net.arch, net.channels).to(dev)
        model0 = initial_model(rules, net.hidden, seed, net.arch, net.channels).to(dev)
        state = {"iteration": 0, "hands": 0, "decisions": 0, "labelled": 0, "seconds": 0.0, "cpu_seconds": 0.0,
                 "rules": rules, "curve": []}
        safeio.atomic_write(out / "curve.csv", _curve_text([]))
        return (model, model0, torch.optim.Adam(model.parameters(), lr=lr), _new_heads(torch, model, seed, lr, dev),
                state, None, torch.Generator().manual_seed(seed))
    model, model0, opt, state, gen, ck_heads = _read_checkpoint(torch, out, rules, net.arch, lr, dev, seed)
    heads = _new_heads(torch, model, seed, lr, dev)
    if heads is not None and ck_heads is not None:  # a checkpoint from before the heads starts them afresh
        _load_heads(torch, out / CHECKPOINT, heads, ck_heads)
    buf = _read_buffer(out, state, net.arch == "conv")
    safeio.atomic_write(out / "curve.csv", _curve_text(state["curve"]))
    log(f"resumed at iteration {state['iteration']} ({state['labelled']} labelled states)")
    return model, model0, opt, heads, state, buf, gen




def _budget(budget: Budget) -> dict:
    """The budgets given (:class:`Budget`, ``max_iterations`` apart) by name, or ``{"cpu_minutes":
    DEFAULT_CPU_MINUTES}`` when none is."""
    given = {"minutes": budget.minutes, "labels": budget.labels, "cpu_minutes": budget.cpu_minutes}
    return {k: v for k, v in given.items() if v is not None} or {"cpu_minutes": DEFAULT_CPU_MINUTES}


def _left(budget: dict, state: dict, t_end: float) -> bool:
    """Whether every budget still has some left (the run stops at the first one spent)."""
    return (("minutes" not in budget or time.time() < t_end)
            and ("labels" not in budget or state["labelled"] < budget["labels"])
            and ("cpu_minutes" not in budget or state["cpu_seconds"] < 60.0 * budget["cpu_minutes"]))


def _eta(budget: dict, state: dict, t_end: float, dt: float, m: int, cpu: float) -> tuple[float | None, str]:
    """``(seconds, budget name)``: wall seconds until the first budget is spent, at the rates of the last
    iteration (``dt`` wall seconds, ``m`` labelled states, ``cpu`` CPU seconds); ``(None, "")`` when unknown."""
    etas = {"wall minutes": t_end - time.time()} if "minutes" in budget else {}
    if "labels" in budget and m:
        etas["labels"] = (budget["labels"] - state["labelled"]) * dt / m
    if "cpu_minutes" in budget and cpu > 0:
        etas["CPU minutes"] = (60.0 * budget["cpu_minutes"] - state["cpu_seconds"]) * dt / cpu
    name = min(etas, key=etas.get, default="")
    return (max(0.0, etas[name]), name) if name else (None, "")


#: the columns of an iteration's progress row (:func:`_iteration_row`), and their heading (``{}``: the budget
#: the first ETA counts to)
_ROW_FORMAT = "{:>9} {:>10} {:>7} {:>8} {:>8} {:>12} {:>7} {:>8}"
ROW_HEADING = ("one row per iteration (every figure of each: OUT/curve.csv; ETA: until the first budget is "
               "spent{})\n" + _ROW_FORMAT.format("iteration", "labelled", "loss", "KL", "gain", "agree tuned",
                                                 "CPU s", "ETA"))


def _iteration_row(it: int, labelled: int, loss: float, kl: float, gain: float, agree_tuned: float,
                   cpu_seconds: float, eta: float | None) -> str:
    """An iteration's progress as one aligned row under :data:`ROW_HEADING` (``-`` for a figure not known
    yet: no update without labels, no ETA); every figure of the iteration is in ``OUT/curve.csv``."""
    upd = loss == loss
    return _ROW_FORMAT.format(it, f"{labelled:,}", f"{loss:.3f}" if upd else "-", f"{kl:.4f}" if upd else "-",
                              f"{gain:+.3f}", f"{agree_tuned:.3f}", f"{cpu_seconds:,.0f}",
                              f"{eta:,.0f} s" if eta is not None else "-")


def learn(rules: str = DEFAULT, out="runs/learn", budget: Budget | None = None,
          labelling: LabelConfig | None = None, train: TrainConfig | None = None, net: NetConfig | None = None,
          run: Execution | None = None, seed: int = 0, log=print) -> dict:
    """Run the recipe (module docstring) into the folder ``out`` until a budget is spent, resuming from
    ``out/checkpoint.pt`` if there is one; then export ``out/learned.npz`` and evaluate it
    (``run.eval_walls`` walls; 0: no evaluation).  The settings come in named configs, each defaulting to
    its class's defaults (:func:`settings` builds them from flat names):

    - ``budget`` (:class:`Budget`): ``minutes`` of wall time of this call, ``labels`` labelled states and
      ``cpu_minutes`` CPU minutes of the run (this process's and its labelling workers'; a resumed run
      counts on; the evaluation apart); the first spent ends the run (none given:
      :data:`DEFAULT_CPU_MINUTES`); ``max_iterations`` ends it whatever the budgets.  Each iteration's line
      ends with the ETA of the first budget.
    - ``labelling`` (:class:`LabelConfig`): ``hands`` per iteration, ``n_det`` determinizations per labelled
      state, ``frac`` of the learner's decisions labelled, ``top_k`` candidates kept by the net's logits
      before the rollouts (with the net's own choice and the start's; 0: all), ``spend_saved``: the
      rollouts saved by pruning spent on more determinizations
      (:mod:`caishen.sim.selfplay.labels`, "Pruning").
    - ``train`` (:class:`TrainConfig`): ``steps`` Adam steps of ``batch`` states per iteration at learning
      rate ``lr``; ``beta``: weight of the KL to the start; ``tau``: temperature of the policy's softmax;
      ``adv_scale``: the advantages' divisor in the loss (None: the rule set's, :func:`advantage_scale`).
    - ``net`` (:class:`NetConfig`): ``arch`` ``"mlp"`` (``hidden``) or ``"conv"`` (``channels``).
    - ``run`` (:class:`Execution`): ``workers`` processes labelling each iteration's walls side by side
      (:func:`label_iteration`; the labels are most of an iteration, so the recipe's time scales with the
      cores; 1 labels in this process, and a run with another count labels other, equally good, states);
      ``device`` where the net's updates run (:func:`device_of`: ``"auto"`` a CUDA GPU when torch finds
      one; the labels are numba rollouts on the CPU whatever it is); ``eval_walls``.

    ``seed``: of the walls, the labels, the batches and the evaluation.  ``log``: called with each progress
    line (None: silent).  Returns ``{"iterations", "labelled", "seconds", "cpu_seconds", "learned": path,
    "adv_scale", "match": the evaluation's summary or None, "eval": the learner's row of its ``policy_rows``
    (points, lo, hi, win, deal_in) or None}``.
    Raises ``ValueError`` for a bad setting (naming it; :func:`_check_settings`, before anything is
    trained), a ``device`` torch does not find, a checkpoint of another rule set or ``arch``, a folder in
    use by another learn or holding a symbolic link; :class:`caishen.sim.safeio.FileError` (a
    ``ValueError``) naming the file and field for a damaged checkpoint or buffer, or a file that cannot be
    written (a full disk: the last committed iteration stays, and a rerun resumes there).
    """
    budget, labelling, train = budget or Budget(), labelling or LabelConfig(), train or TrainConfig()
    net, run = net or NetConfig(), run or Execution()
    torch = _torch()
    _check_settings(rules, **budget._asdict(), **labelling._asdict(), **train._asdict(),
                    eval_walls=run.eval_walls, seed=seed)
    budgets = _budget(budget)
    arch, workers, hands = _check_arch(net.arch), run.workers, labelling.hands
    if isinstance(workers, bool) or not isinstance(workers, (int, np.integer)) or not 1 <= workers <= 256:
        raise ValueError(f"workers {workers!r}: must be an integer in 1..256")
    if train.aux and arch == "conv":
        raise ValueError(f"aux {train.aux:g}: the oracle heads read the MLP's hidden layer; --arch conv trains "
                         "without them (--aux 0)")
    scale = advantage_scale(rules) if train.adv_scale is None else float(train.adv_scale)
    dev = device_of(torch, run.device)
    log = log or (lambda s: None)
    torch.set_num_threads(1)
    with rundir.workspace(out, "caishen learn") as out:  # one learn per folder; never a write through a link in it
        model, model0, opt, heads, state, buf, gen = _start(torch, out, rules, net, seed, train.lr, dev, log)
        anchor = model0.linear.detach().cpu().numpy().astype(np.float64)  # the start's choice: kept by pruning
        start = _start_logits(torch, model0)
        log(f"training on {dev}; labelling on the CPU with {workers} worker(s); budget "
            + ", ".join(f"{k.replace('_', ' ')} {v:,}" for k, v in budgets.items()))
        current = out / "current.npz"
        first_iteration = state["iteration"]
        t_end = time.time() + 60.0 * budgets.get("minutes", 0.0)
        max_iterations = budget.max_iterations
        pool = None  # the labelling workers (workers > 1), started at the first iteration
        pending, last_commit, c0 = False, time.time(), time.process_time()
        try:
            while (max_iterations is None and _left(budgets, state, t_end)) or (
                    max_iterations is not None and state["iteration"] < max_iterations):
                it = state["iteration"]
                t0 = time.time()
                model.export(current, {"from": "caishen learn", "iteration": it})
                lineup = LINEUPS[it % len(LINEUPS)].replace("L", f"learned:{current}").replace("T", f"tuned:{rules}")
                walls = seed * 10**9 + state["hands"] + np.arange(hands)
                if workers > 1 and pool is None:
                    import concurrent.futures
                    import multiprocessing

                    # spawn: the workers start clean (no torch state forked), load the kernels from the cache once
                    pool = concurrent.futures.ProcessPoolExecutor(workers,
                                                                  mp_context=multiprocessing.get_context("spawn"))
                with CompileWatch() as compiling:  # a cold cache compiles the kernels here: not learning
                    fresh, m, stats, cpu_workers = label_iteration(lineup, rules, walls, labelling, seed * 7919 + it,
                                                                   arch == "conv", anchor, pool, workers,
                                                                   oracle=train.aux > 0)
                t_label = time.time() - t0
                state["hands"] += hands
                state["decisions"] += int(stats[0])
                held = _tensors(torch, fresh, np.arange(m), dev) if m else None
                before = _choice(torch, model, held) if m else None
                loss = kl = aux_loss = float("nan")
                if buf is not None and len(buf["n"]) and train.steps:
                    for _ in range(train.steps):
                        idx = torch.randint(len(buf["n"]), (min(train.batch, len(buf["n"])),), generator=gen).numpy()
                        batch = _tensors(torch, buf, idx, dev)
                        aux = (None if not train.aux else
                               (train.aux, heads[0], *_oracle_tensors(torch, buf, idx, batch[-1].shape[1], dev)))
                        lo, k, a = _loss(torch, model, start, batch, train.tau, train.beta, scale, aux)
                        opt.zero_grad()
                        if aux is not None:
                            heads[1].zero_grad()
                        lo.backward()
                        opt.step()
                        if aux is not None:
                            heads[1].step()
                        loss, kl = float(lo.detach()), float(k.detach())
                        aux_loss = float("nan") if a is None else float(a.detach())
                gain = agree = float("nan")
                diag = {k: float("nan") for k in DIAGNOSTICS}
                if m:  # the updated net's choices against the net's before the update, on labels it has not seen
                    pick = _choice(torch, model, held, kept_only=True)  # the labels hold only the kept ones'
                    rows = np.arange(m)
                    gain = float((fresh["adv"][rows, pick] - fresh["adv"][rows, before]).mean())
                    tuned = _choice(torch, model0, held)
                    agree = float((pick == tuned).mean())
                    diag = diagnostics(fresh, fresh["base"], tuned)  # of the net that played the hands
                buf = _append(buf, fresh, m)
                state["labelled"] += m
                state["iteration"] = it + 1
                dt = time.time() - t0
                # CPU since the last count: this iteration's, and the last one's commit and export
                # (this process's numba compile left out, so a small budget on a cold cache still learns)
                cpu, c0 = time.process_time() - c0 + (cpu_workers if pool is not None else 0.0), time.process_time()
                cpu = max(0.0, cpu - compiling.seconds)
                state["seconds"] += dt
                state["cpu_seconds"] += cpu
                row = [it + 1, round(state["seconds"], 1), state["hands"], state["decisions"], state["labelled"],
                       round(stats[0] / t_label, 1), round(m / t_label, 2), loss, kl, gain, agree,
                       *(diag[k] for k in DIAGNOSTICS), aux_loss]
                state["curve"] = [*state["curve"], [int(v) if isinstance(v, (int, np.integer)) else float(v)
                                                    for v in row]]
                pending = True
                if time.time() - last_commit >= COMMIT_SECONDS:
                    _commit(torch, out, model, model0, opt, state, buf, gen, arch, heads)
                    pending, last_commit = False, time.time()
                model.export(out / "learned.npz", {"from": "caishen learn", "iteration": it + 1, "rules": rules,
                                                   "labelled": state["labelled"], "seed": seed})
                eta, first_budget = _eta(budgets, state, t_end, dt, m, cpu)
                row = _iteration_row(it + 1, state["labelled"], loss, kl, gain, diag["agree_tuned"],
                                     state["cpu_seconds"], eta)
                now = f", now the {first_budget} budget" if first_budget else ""
                log(row if it > first_iteration else f"{ROW_HEADING.format(now)}\n{row}")
        finally:
            if pool is not None:
                pool.shutdown(wait=False, cancel_futures=True)
        if pending:
            _commit(torch, out, model, model0, opt, state, buf, gen, arch, heads)
        learned_path = str(out / "learned.npz")
        model.export(learned_path, {"from": "caishen learn", "iteration": state["iteration"], "rules": rules,
                                    "labelled": state["labelled"], "seed": seed})
        eval_dir = out / "eval"
        if state["iteration"] > first_iteration and eval_dir.exists():
            # a resumed run trained on: the evaluation of the earlier learned.npz is stale (one of this same net,
            # cut short, is kept and resumes)
            if not eval_dir.is_dir():
                raise ValueError(f"{eval_dir}: not a folder (the run's evaluation goes there); move it away")
            shutil.rmtree(eval_dir)
        summary = (evaluate(learned_path, rules, run.eval_walls, seed + EVAL_SEED, eval_dir, log) if run.eval_walls
                   else None)
    row = summary["policy_rows"][0] if summary else None
    if row is not None:
        log(f"learner in the evaluation: {row['points']:+.3f} points/hand, win rate {row['win']:.3f}, "
            f"deal-in rate {row['deal_in']:.3f}")
    return {"iterations": state["iteration"], "labelled": state["labelled"], "seconds": state["seconds"],
            "cpu_seconds": state["cpu_seconds"], "learned": learned_path, "adv_scale": scale,
            "match": summary, "eval": row}


def evaluate(path, rules: str, walls: int, seed: int, run_dir, log=print) -> dict:
    """``caishen match --policies learned:PATH,tuned:R,greedy,greedy --walls W --seed S --workers 1`` into
    ``run_dir`` through the runner (resumable); prints and returns its summary (``match.json``)."""
    from caishen.sim.analysis import arena
    from caishen.sim.selfplay import runner

    policies = f"learned:{path},tuned:{rules},greedy,greedy"
    config = arena.make_config(rules, policies, int(walls), int(seed), {})
    res = runner.run(config, str(run_dir), workers=1, progress=False, chunk_fn=arena.CHUNK_FNS[4])
    summary = arena.summarize_match(str(run_dir))
    arena.save_summary(str(run_dir), summary)
    if log:
        log(arena.format_summary(summary, f"evaluation: {rules}, {summary['walls_done']} walls x "
                                          f"{summary['seatings']} seatings, seed {seed} ({res.seconds:.0f} s)"))
    return summary


def add_command(sub) -> None:
    """The ``learn`` command of ``caishen`` (and of ``python -m caishen.agents.exit``) on the subparsers ``sub``."""
    lab, tr = LabelConfig(), TrainConfig()  # the defaults
    p = sub.add_parser(
        "learn",
        help="train a learned bot from the tuned bot by expert iteration on rollout labels ([rl] extra)",
        description="Expert iteration (caishen.agents.exit): start at the tuned bot (a zero-residual learned "
        "net), label the net's own decisions with paired rollout advantages on shared determinizations "
        "(common random numbers), raise the expected advantage under the policy with a KL term to the start, "
        "repeat. Writes OUT/curve.csv, OUT/learned.npz (play it as learned:OUT/learned.npz), resumable "
        "checkpoints, and ends with a duplicate-deal match against tuned and greedy.",
    )
    p.add_argument("--rules", default=DEFAULT, help=f"rule set (default {DEFAULT})")
    p.add_argument("--arch", choices=ARCHS, default="mlp",
                   help="the net trained: mlp (action-mlp) or conv (action-conv, channels "
                   f"{','.join(map(str, CONV_CHANNELS))}); default mlp")
    p.add_argument("--out", required=True, help="run directory (created; reused to resume)")
    p.add_argument("--minutes", type=float, default=None,
                   help="wall minutes of training in this call; the first budget spent ends the run, and each "
                   f"iteration's line gives its ETA (no budget given: --cpu-minutes {DEFAULT_CPU_MINUTES:g})")
    p.add_argument("--labels", type=int, default=None,
                   help="labelled states of the run (a rerun resumes and counts on), e.g. 50000")
    p.add_argument("--cpu-minutes", type=float, default=None,
                   help="CPU minutes of the run, this process's and its --workers' (the evaluation and this "
                   "process's first compile apart; "
                   f"default {DEFAULT_CPU_MINUTES:g} when neither --minutes nor --labels is given)")
    p.add_argument("--seed", type=int, default=0, help="seed of the walls, labels and batches (default 0)")
    p.add_argument("--hands", type=int, default=lab.hands,
                   help=f"hands played per iteration (default {lab.hands})")
    p.add_argument("--det", type=int, default=lab.n_det,
                   help=f"determinizations per labelled state (default {lab.n_det})")
    p.add_argument("--frac", type=float, default=lab.frac,
                   help=f"fraction of the learner's decisions labelled (default {lab.frac:g})")
    p.add_argument("--top-k", type=int, default=TOP_K,
                   help=f"candidates of a labelled state rolled out: the net's top k by logit, plus its own choice "
                   f"and the start's (tuned's); 0: every candidate (default {TOP_K})")
    p.add_argument("--spend-saved", action="store_true",
                   help="spend the rollouts --top-k saves on more determinizations of the same state (default: "
                   "saved, so more states are labelled in the same time)")
    p.add_argument("--beta", type=float, default=1.0, help="weight of the KL to the start (default 1)")
    p.add_argument("--tau", type=float, default=1.0, help="softmax temperature of the policy (default 1)")
    p.add_argument("--lr", type=float, default=3e-4, help="Adam learning rate (default 3e-4)")
    p.add_argument("--steps", type=int, default=tr.steps,
                   help=f"Adam steps per iteration (default {tr.steps})")
    p.add_argument("--aux", type=float, default=tr.aux,
                   help="weight of the oracle heads' loss (training only: per candidate discard, does it deal in "
                   "now; per opponent, is it ready; from the hidden state; never an input, never exported); 0: "
                   f"off (default {tr.aux:g}; --arch mlp only)")
    p.add_argument("--adv-scale", type=float, default=None,
                   help=f"divisor of the advantages in the loss (default: the rule set's reward_scale over {DEFAULT}'s)")
    p.add_argument("--workers", type=int, default=1,
                   help="processes labelling each iteration's walls side by side (default 1: this process; the "
                   "labels are most of the time, so a many-core machine gives a worker per core)")
    p.add_argument("--device", default="auto",
                   help="where the net's updates run: auto (a CUDA GPU when torch finds one, else the CPU), cpu, "
                   "cuda or cuda:N (default auto; the labels are CPU rollouts whatever it is)")
    p.add_argument("--eval-walls", type=int, default=20_000, help="walls of the final match (default 20000; 0: none)")
    p.set_defaults(func=_run_command)


def _print_wrapped(text: str) -> None:
    """``caishen learn``'s progress: ``text``'s lines wrapped to 100 columns where they do not fit
    (:func:`caishen.sim.termtext.wrap_lines`; a table or an iteration's row that fits keeps its alignment)."""
    from caishen.sim.termtext import wrap_lines

    print("\n".join(wrap_lines(text.splitlines(), indent="    ")), flush=True)


def _run_command(args) -> int:
    res = learn(args.rules, args.out, seed=args.seed, log=_print_wrapped, **settings(
        minutes=args.minutes, labels=args.labels, cpu_minutes=args.cpu_minutes, hands=args.hands, n_det=args.det,
        frac=args.frac, top_k=args.top_k, spend_saved=args.spend_saved, beta=args.beta, tau=args.tau, lr=args.lr,
        steps=args.steps, adv_scale=args.adv_scale, aux=args.aux, arch=args.arch, workers=args.workers, device=args.device,
        eval_walls=args.eval_walls))
    print(f"wrote {res['learned']}: {res['iterations']} iterations, {res['labelled']} labelled states, "
          f"{res['seconds']:.0f} s, {res['cpu_seconds']:.0f} CPU s")
    return 0


def main(argv=None) -> int:
    import argparse

    parser = argparse.ArgumentParser(prog="python -m caishen.agents.exit")
    add_command(parser.add_subparsers(dest="command", required=True))
    args = parser.parse_args(["learn", *(argv if argv is not None else __import__("sys").argv[1:])])
    return args.func(args)


if __name__ == "__main__":
    raise SystemExit(main())
