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
   with two or more candidates, labels every candidate with its paired
   rollout advantage over the net's own choice on ``--det`` shared
   determinizations from the seat's view (:mod:`caishen.sim.selfplay.labels`,
   numba; hidden tiles enter the labels only, never the policy's inputs).
   The labelled states of all iterations so far (the newest
   :data:`BUFFER` of them) are the training set: DAgger on the net's own states.
3. **Improve on the labels.**  Adam on the all-actions policy gradient
   ``L = -sum_a pi(a|s) A(a) / c + beta * KL(pi_0(.|s) || pi(.|s))`` averaged over
   the labelled states, ``pi = softmax(logits / tau)`` over the state's
   candidates, ``pi_0`` the start (the tuned bot's scores): the expected
   advantage under the policy rises while the KL term holds it near its start.
   ``c`` is the rule set's advantage scale (:func:`advantage_scale`: its
   ``RuleSet.reward_scale``, about one sd of a seat's points per hand, over
   that of :data:`REFERENCE_RULES`, the default rule set, where the defaults
   were tuned): 1 there, 5 for a rule set whose points are 5 times as spread
   (J-6; without it the same ``beta`` let the net drift,
   the first benchmark of issue 26, its second section).
4. **Export and check.**  ``DIR/learned.npz`` (``learned:DIR/learned.npz``
   plays it in every command) after each iteration; at the end a
   duplicate-deal match (``caishen match`` through the runner) of
   ``learned:DIR/learned.npz,tuned:R,greedy,greedy`` on ``--eval-walls``
   walls of seed ``--seed + EVAL_SEED`` (the match's walls are
   ``SeedSequence`` streams; training walls are the wall seeds
   ``seed * 10**9 + k`` of :func:`caishen.sim.engine._seeded_wall`: never the same).

Budgets (:func:`learn`; the first spent ends the run, each iteration's line gives its ETA): ``--minutes``
of wall time, ``--labels`` labelled states, ``--cpu-minutes`` of CPU time of the process and its workers.

Files in ``DIR``: ``checkpoint.pt`` (the net, its architecture and shape, its start, the optimiser,
the counters, the curve's rows and the batch stream: a rerun of the same command resumes there; one of
another ``--arch`` is refused), ``buffer.npz`` (the labelled states, tagged with their iteration), ``current.npz``
(the net the next labels play),
``learned.npz``, ``curve.csv`` (one row per iteration: wall seconds,
hands, learner decisions, labelled states, their rates per second, the
loss, the KL to the start, ``heldout_gain``: on the iteration's newest labelled
states, which it was not trained on yet, the mean advantage of the updated
net's choice minus that of the net's choice before the update (points per
decision; above 0: the update picks better actions than the net that
labelled them), the agreement with the start's choices, and the
per-decision diagnostics of :func:`diagnostics` on the iteration's labelled
states: ``agree_tuned`` and ``agree_greedy``, how often the net that played
the hands chose as ``tuned:R`` and as ``greedy`` would have, and
``shanten_up``, the fraction of its discards that leave a worse shanten than
its best discard), and ``eval/`` (the match's run directory, ``match.json``,
whose table also gives each seat's deal-in rate; :func:`learn` returns the
learner's in ``"eval"``; a resumed run that trains on replaces it).

The folder is the run's alone: :func:`learn` holds its lock (``DIR/.lock``, :class:`caishen.sim.safeio.DirLock`:
a second learn there is refused) and refuses a folder that holds a symbolic link; every file is written
atomically through :mod:`caishen.sim.safeio`.  An iteration commits as one unit (:func:`_commit`): its labels
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

import csv
import io
import math
import shutil
import time
from pathlib import Path

import numpy as np

from caishen.sim import safeio
from caishen.sim.rules.base import DEFAULT

__all__ = ["LINEUPS", "BUFFER", "EVAL_SEED", "REFERENCE_RULES", "ARCHS", "advantage_scale", "greedy_choice",
           "diagnostics", "device_of", "initial_model", "learn", "evaluate", "add_command", "main"]

#: the architectures ``caishen learn`` trains (``--arch``): ``mlp`` is ``action-mlp``, ``conv`` ``action-conv``
ARCHS = ("mlp", "conv")
#: the conv's channels when none are given (conv_model_from_tuned's default)
CONV_CHANNELS = (16, 16)
#: the lineups of the labelled hands, cycled per iteration (``L``: the current net, ``T``: the tuned bot)
LINEUPS = ("L,T,greedy,greedy", "L,greedy,T,L", "L,T,L,greedy")
#: most labelled states kept (the newest)
BUFFER = 200_000
#: the evaluation match's seed is ``seed + EVAL_SEED``
EVAL_SEED = 1_000_003
#: the rule set whose points scale the defaults were tuned at (the first benchmark of issue 26)
REFERENCE_RULES = DEFAULT
#: the curve's diagnostics (:func:`diagnostics`), each a fraction in [0, 1]
DIAGNOSTICS = ("agree_tuned", "agree_greedy", "shanten_up")
_CURVE = ("iteration", "seconds", "hands", "learner_decisions", "labelled", "decisions_per_s", "labelled_per_s",
          "loss", "kl", "heldout_gain", "agree_start") + DIAGNOSTICS
# action v1 feature rows (caishen.sim.bots.features.ACTION_V1) the greedy rule reads
_X_SHANTEN, _X_EFF, _X_CLAIM_GAIN = 0, 1, 13


def _torch():
    try:
        import torch
    except ImportError:
        raise ValueError("caishen learn needs torch: pip install 'caishen[rl]' (README, \"Training\")") from None
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
    """The batch of rows ``idx`` on ``device`` (None: the CPU): ``(*inputs, adv, valid)``, ``inputs`` the
    model's: ``(x, ctx)`` (MLP) or, for a buffer with the conv's inputs, ``(x, kinds, cand)`` (the planes
    back from quarters)."""
    from caishen.sim.selfplay.labels import KINDS_SCALE

    n = buf["n"][idx]
    c = max(2, int(n.max()))
    x = torch.as_tensor(buf["x"][idx, :c], dtype=torch.float64)
    adv = torch.as_tensor(buf["adv"][idx, :c], dtype=torch.float64)
    valid = torch.as_tensor(np.arange(c)[None, :] < n[:, None])
    if "kinds" in buf:
        kinds = torch.as_tensor(buf["kinds"][idx].astype(np.float64) / KINDS_SCALE)
        cand = torch.as_tensor(buf["cand"][idx, :c].astype(np.int64))
        out = (x, kinds, cand, adv, valid)
    else:
        out = (x, torch.as_tensor(buf["ctx"][idx], dtype=torch.float64), adv, valid)
    return out if device is None else tuple(t.to(device) for t in out)


def _policy(torch, model, inputs, valid, tau):
    logits = model(*inputs).masked_fill(~valid, -1e30)
    return torch.log_softmax(logits / tau, dim=-1), logits


def _loss(torch, model, model0, batch, tau, beta, scale=1.0):
    inputs, adv, valid = batch[:-2], batch[-2], batch[-1]
    adv = adv / scale
    logp, _ = _policy(torch, model, inputs, valid, tau)
    with torch.no_grad():
        logp0, _ = _policy(torch, model0, inputs, valid, tau)
    p, p0 = logp.exp(), logp0.exp()
    pg = -(p * adv).sum(-1).mean()
    kl = (p0 * (logp0 - logp)).masked_fill(~valid, 0.0).sum(-1).mean()
    return pg + beta * kl, kl


def _choice(torch, model, batch) -> np.ndarray:
    """The net's choice per state (the kernel's: largest logit; ties to the later candidate on a turn):
    ``int64[N]`` candidate indices."""
    inputs, valid = batch[:-2], batch[-1]
    with torch.no_grad():
        logits = model(*inputs).masked_fill(~valid, -1e30)
    c = logits.shape[1]
    rev = torch.flip(logits, [1])
    return (c - 1 - rev.argmax(1)).cpu().numpy()  # the last maximum (claims: 'pass' first, a tie there is rare)


#: the buffer's arrays with a column per candidate, and the value of a column no candidate fills
_WIDE = {"x": 0.0, "actions": 0, "adv": 0.0, "cand": -1}


def _widen(rows: dict, width: int) -> dict:
    """``rows`` with each per-candidate array (:data:`_WIDE`) cut or padded to ``width`` columns."""
    out = dict(rows)
    for k, fill in _WIDE.items():
        if k in out:
            a = out[k]
            if a.shape[1] >= width:
                out[k] = a[:, :width]
            else:
                pad = np.full((a.shape[0], width - a.shape[1]) + a.shape[2:], fill, a.dtype)
                out[k] = np.concatenate([a, pad], axis=1)
    return out


def _append(buf: dict, new: dict, m: int) -> dict:
    """The buffer with the first ``m`` rows of ``new`` appended (the newest :data:`BUFFER` kept).  The
    per-candidate arrays keep only as many columns as the most candidates of a stored state (at least 2;
    the labels' :data:`~caishen.sim.bots.learned.MAX_CANDIDATES` columns are mostly empty: a turn has at most
    14 discards), and a conv buffer drops the context (its net does not read it): the MLP's
    buffer of a 25-minute run (73,839 states) takes 207 MB, not 499 MB, in memory and in each iteration's
    write of ``buffer.npz``."""
    new = {k: v[:m] for k, v in new.items() if not (k == "ctx" and "kinds" in new)}
    width = max(2, int(new["n"].max()) if m else 0, int(buf["n"].max()) if buf is not None and len(buf["n"]) else 0)
    new = _widen(new, width)
    if buf is None:
        return {k: v.copy() for k, v in new.items()}
    buf = _widen({k: v for k, v in buf.items() if k in new}, width)
    return {k: np.concatenate([buf[k], new[k]])[-BUFFER:] for k in new}


def _part_seed(seed: int, j: int) -> int:
    """The labels' seed of part ``j`` of an iteration's walls: part 0 keeps the iteration's own seed (one
    worker labels exactly as before), the others a SeedSequence stream of it."""
    if j == 0:
        return int(seed)
    return int(np.random.SeedSequence([int(seed) % 2**63, j]).generate_state(1, np.uint64)[0] % 2**63)


def _label_part(lineup: str, rules: str, walls: np.ndarray, n_det: int, frac: float, seed: int, conv: bool):
    """Label one part of an iteration's walls (:func:`caishen.sim.selfplay.labels.label_hands`): the filled
    rows, the decision counts and the CPU seconds spent (by this process).  Module level: a worker runs it."""
    from caishen.sim.selfplay.labels import label_hands, new_buffer

    c0 = time.process_time()
    cap = max(16, len(walls) * 8)
    new, m, stats = label_hands(lineup, rules, walls, n_det=n_det, frac=frac, cap=cap, seed=seed,
                                buf=new_buffer(cap, conv))
    return {k: v[:m] for k, v in new.items()}, m, stats, time.process_time() - c0


def label_iteration(lineup: str, rules: str, walls: np.ndarray, n_det: int, frac: float, seed: int, conv: bool,
                    pool=None, workers: int = 1):
    """An iteration's labels over ``walls``, split in ``workers`` contiguous parts labelled side by side
    in ``pool`` (a ``concurrent.futures`` executor; None: in this process), part ``j`` with the seed
    :func:`_part_seed` ``(seed, j)``; the parts' rows concatenated in order.  Returns ``(rows, m,
    stats: int64[2], cpu_s)``, ``cpu_s`` the parts' CPU seconds summed (in this process or the workers').
    The same ``workers`` gives the same labels; ``workers=1`` those of one call of ``label_hands``."""
    parts = [p for p in np.array_split(np.asarray(walls), max(1, int(workers))) if len(p)]
    args = [(lineup, rules, p, n_det, frac, _part_seed(seed, j), conv) for j, p in enumerate(parts)]
    done = [pool.submit(_label_part, *a) for a in args] if pool is not None else None
    results = [f.result() for f in done] if done is not None else [_label_part(*a) for a in args]
    rows = {k: np.concatenate([r[0][k] for r in results]) for k in results[0][0]}
    return rows, sum(r[1] for r in results), np.sum([r[2] for r in results], axis=0), sum(r[3] for r in results)


#: the files of a run folder (module docstring, "Files"): the checkpoint, the labels buffer and the next
#: iteration's buffer before its checkpoint commits it
CHECKPOINT, BUFFER_FILE, BUFFER_NEXT = "checkpoint.pt", "buffer.npz", "buffer.next.npz"
#: bytes of a checkpoint at most (a net of the largest shapes with its Adam state and curve: a few MB) and of a
#: labels buffer (BUFFER states of the widest rows)
MAX_CHECKPOINT = 64 << 20
MAX_BUFFER_FILE = 8 << 30
#: bounds of the settings, checked before anything is trained: hands per iteration (each labels up to 8
#: states per hand, ~5.4 KB each), Adam steps and batch, the evaluation's walls (as ``caishen match``), the seed
MAX_HANDS = 50_000
MAX_STEPS = 10**6
MAX_BATCH = 1 << 16
MAX_EVAL_WALLS = 10**9
MAX_SEED = 10**9
#: the most labelled states ``--labels`` may ask for; the wall minutes of a run given no budget (:func:`learn`)
MAX_LABELS, DEFAULT_MINUTES = 10**12, 25.0
#: the state fields of a checkpoint that count (iterations, hands, decisions, labelled states)
_COUNTS = ("iteration", "hands", "decisions", "labelled")
_REPAIR = "move it aside to start again, or restore it from a backup"


def _check_settings(rules: str, **kw) -> None:
    """``ValueError`` naming the first bad setting of :func:`learn` (its bounds above), before anything is
    trained: the evaluation match's configuration too (``eval_walls`` walls in every seating)."""
    from caishen.sim.bots.search import MAX_DETERMINIZATIONS

    ints = {"hands": (1, MAX_HANDS), "steps": (0, MAX_STEPS), "batch": (1, MAX_BATCH),
            "eval_walls": (0, MAX_EVAL_WALLS), "seed": (0, MAX_SEED), "n_det": (1, MAX_DETERMINIZATIONS),
            "labels": (1, MAX_LABELS)}
    for name, (lo, hi) in ints.items():
        v = kw[name]
        if v is None and name == "labels":  # no label budget
            continue
        if isinstance(v, bool) or not isinstance(v, (int, np.integer)) or not lo <= v <= hi:
            raise ValueError(f"{name} {str(v)[:40]}: must be an integer in {lo}..{hi:,}")
    if kw["labels"] is not None and not kw["frac"]:
        raise ValueError("labels: a label budget needs frac > 0 (no state is labelled at frac 0)")
    for name, lo, hi in (("minutes", 0, math.inf), ("cpu_minutes", 1e-9, math.inf), ("lr", 0, math.inf),
                         ("beta", 0, math.inf), ("tau", 1e-6, math.inf), ("adv_scale", 1e-9, math.inf),
                         ("frac", 0, 1)):
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


def _curve_text(rows: list) -> str:
    """``curve.csv``: the header :data:`_CURVE` and one row per iteration."""
    buf = io.StringIO()
    w = csv.writer(buf)
    w.writerow(_CURVE)
    w.writerows(rows)
    return buf.getvalue()


def _new_model(torch, arch: str, shape, rules: str):
    from caishen.agents.learned_torch import ActionConv, ActionMLP

    return ActionConv(tuple(shape), rules) if arch == "conv" else ActionMLP(tuple(shape), rules)


def _start(torch, out: Path, rules: str, arch: str, hidden, channels, seed: int, lr: float, dev, log):
    """``(model, model0, opt, state, buf, gen)``: a fresh start in ``out`` (the net of :func:`initial_model`,
    an empty curve), or the committed iteration of its checkpoint (:func:`_read_checkpoint`,
    :func:`_read_buffer`), ``curve.csv`` rewritten from it (a crash after the commit may have left the
    previous one)."""
    if not (out / CHECKPOINT).exists():
        safeio.discard(out / BUFFER_NEXT)  # labels of a first iteration killed before its commit
        model = initial_model(rules, hidden, seed, arch, channels).to(dev)
        model0 = initial_model(rules, hidden, seed, arch, channels).to(dev)
        state = {"iteration": 0, "hands": 0, "decisions": 0, "labelled": 0, "seconds": 0.0, "cpu_seconds": 0.0,
                 "rules": rules, "curve": []}
        safeio.atomic_write(out / "curve.csv", _curve_text([]))
        return (model, model0, torch.optim.Adam(model.parameters(), lr=lr), state, None,
                torch.Generator().manual_seed(seed))
    model, model0, opt, state, gen = _read_checkpoint(torch, out, rules, arch, lr, dev, seed)
    buf = _read_buffer(out, state, arch == "conv")
    safeio.atomic_write(out / "curve.csv", _curve_text(state["curve"]))
    log(f"resumed at iteration {state['iteration']} ({state['labelled']} labelled states)")
    return model, model0, opt, state, buf, gen


def _commit(torch, out: Path, model, model0, opt, state: dict, buf: dict, gen, arch: str) -> None:
    """Commit an iteration as one unit: the labels go to ``buffer.next.npz`` (tagged with the iteration),
    then the checkpoint (net, start, optimiser, counters, the curve's rows, the batch stream) replaces the
    old one -- the commit point -- then the labels become ``buffer.npz`` and ``curve.csv`` is rewritten
    from the checkpoint.  Every file is written atomically (:func:`caishen.sim.safeio.atomic_write_with`):
    a crash or a full disk at any write leaves the last committed iteration, which the rerun resumes to the
    same rows (:func:`_read_buffer` finishes or drops an uncommitted buffer)."""
    tagged = {**buf, "iteration": np.int64(state["iteration"])}
    safeio.atomic_write_with(out / BUFFER_NEXT, lambda f: np.savez(f, **tagged))
    shape = ({"channels": list(model.channels)} if arch == "conv"
             else {"hidden": [model.fc1.out_features, model.fc2.out_features]})
    ck = {"model": model.state_dict(), "model0": model0.state_dict(), "opt": opt.state_dict(), "state": state,
          "arch": arch, "gen": gen.get_state(), **shape}
    data = io.BytesIO()  # a few MB; torch.save into the file itself would turn a full disk into a RuntimeError
    torch.save(ck, data)
    safeio.atomic_write(out / CHECKPOINT, data.getvalue())
    try:
        safeio.commit(out / BUFFER_NEXT, out / BUFFER_FILE)
    except OSError as e:
        raise safeio.os_error(out / BUFFER_FILE, e, "write") from None
    safeio.atomic_write(out / "curve.csv", _curve_text(state["curve"]))


def _bad(path, field: str, why: str) -> safeio.FileError:
    return safeio.FileError(path, f"field {field!r} {why}: not a checkpoint caishen learn wrote; {_REPAIR}")


def _check_zip(path, data: bytes) -> None:
    """A torch checkpoint is a zip of stored records: refuse another file, compressed records (a small file
    that would unpack to gigabytes) or records larger than the file, before torch reads any of it."""
    import zipfile

    try:
        infos = zipfile.ZipFile(io.BytesIO(data)).infolist()
    except (zipfile.BadZipFile, OSError, ValueError, EOFError) as e:
        raise safeio.FileError(path, f"is not a checkpoint caishen learn wrote (not a torch zip: {str(e)[:60]}); "
                                     f"{_REPAIR}") from None
    for i in infos:
        if i.compress_type != zipfile.ZIP_STORED or i.file_size > len(data):
            raise safeio.FileError(path, f"record {i.filename[:60]!r} is compressed or larger than the file: not a "
                                         f"checkpoint caishen learn wrote; {_REPAIR}")


def _check_tensors(path, field: str, got, want: dict) -> None:
    """``got`` must be a state dict of exactly ``want``'s names and shapes, floating point and finite."""
    if not isinstance(got, dict) or set(got) != set(want):
        held = sorted(map(str, got))[:6] if isinstance(got, dict) else type(got).__name__
        raise _bad(path, field, f"holds the tensors {held}, the net of its shape has {sorted(want)[:6]}")
    for k, t in got.items():
        if not (hasattr(t, "shape") and tuple(t.shape) == tuple(want[k].shape) and t.is_floating_point()):
            raise _bad(path, f"{field}.{k}", f"is {getattr(t, 'dtype', type(t).__name__)}"
                                             f"{list(getattr(t, 'shape', []))}, expected {list(want[k].shape)}")
        if not bool(t.isfinite().all()):
            raise _bad(path, f"{field}.{k}", "holds a NaN or an infinity")


def _read_checkpoint(torch, out: Path, rules: str, arch: str, lr: float, dev, seed: int):
    """``(model, model0, opt, state, gen)`` of ``out/checkpoint.pt``, every field checked before it is used:
    the file's size and records (:func:`_check_zip`), then torch's tensor-only loader, the counters, the rule
    set and ``arch`` (a ``ValueError`` naming another), the net's shape (its bounds), every tensor's name,
    shape and finiteness, the optimiser's state, the curve's rows and the batch stream.  A damaged or
    foreign checkpoint is a :class:`caishen.sim.safeio.FileError` naming the file and the field."""
    from caishen.sim.bots import learned

    path = out / CHECKPOINT
    data = safeio.read_bytes(path, MAX_CHECKPOINT, what="a caishen learn checkpoint")
    _check_zip(path, data)
    try:
        ck = torch.load(io.BytesIO(data), weights_only=True, map_location="cpu")  # a run resumes on any device
    except Exception as e:  # noqa: BLE001 - torch raises many types for a damaged file
        why = str(e).strip().splitlines()[0][:80] if str(e).strip() else type(e).__name__
        raise safeio.FileError(path, f"is not a checkpoint caishen learn wrote ({why}); {_REPAIR}") from None
    if not isinstance(ck, dict) or not isinstance(ck.get("state"), dict):
        raise _bad(path, "state", "is missing")
    st = dict(ck["state"])
    for k in _COUNTS:
        if isinstance(st.get(k), bool) or not isinstance(st.get(k), int) or not 0 <= st[k] <= 10**15:
            raise _bad(path, f"state.{k}", f"is {str(st.get(k))[:40]}, not a count")
    for f in ("seconds", "cpu_seconds"):  # CPU seconds: 0 in a checkpoint from before the CPU budget
        sec = st.setdefault(f, 0.0) if f == "cpu_seconds" else st.get(f)
        if isinstance(sec, bool) or not isinstance(sec, (int, float)) or not math.isfinite(sec) or sec < 0:
            raise _bad(path, f"state.{f}", f"is {str(sec)[:40]}, not a number of seconds")
    if not isinstance(st.get("rules"), str):
        raise _bad(path, "state.rules", "is not a rule set's name")
    if st["rules"] != rules:
        raise ValueError(f"{path}: a checkpoint of rule set {st['rules'][:40]!r}, not {rules!r}")
    ck_arch = ck.get("arch", "mlp")  # checkpoints from before --arch are the MLP's
    if ck_arch not in ARCHS:
        raise _bad(path, "arch", f"is {str(ck_arch)[:40]!r}, not one of {', '.join(ARCHS)}")
    if ck_arch != arch:
        raise ValueError(f"{path}: a checkpoint of --arch {ck_arch}, not {arch} (resume with --arch "
                         f"{ck_arch} or use another --out)")
    key, n_max, lengths = (("channels", learned.MAX_CHANNELS, (1, 2)) if arch == "conv"
                           else ("hidden", learned.MAX_HIDDEN, (2,)))
    shape = ck.get(key)
    if not (isinstance(shape, (list, tuple)) and len(shape) in lengths
            and all(isinstance(h, int) and not isinstance(h, bool) and 1 <= h <= n_max for h in shape)):
        raise _bad(path, key, f"is {str(shape)[:40]}, not {' or '.join(map(str, lengths))} sizes in 1..{n_max}")
    model, model0 = _new_model(torch, arch, shape, rules), _new_model(torch, arch, shape, rules)
    for field, net in (("model", model), ("model0", model0)):
        _check_tensors(path, field, ck.get(field), net.state_dict())
        net.load_state_dict(ck[field])
    model, model0 = model.to(dev), model0.to(dev)
    opt = torch.optim.Adam(model.parameters(), lr=lr)
    try:
        opt.load_state_dict(ck["opt"])
    except (KeyError, ValueError, TypeError, RuntimeError, IndexError, AttributeError) as e:
        raise _bad(path, "opt", f"is not this net's Adam state ({str(e)[:60]})") from None
    for p_state in opt.state.values():
        if not all(bool(v.isfinite().all()) for v in p_state.values() if hasattr(v, "isfinite")):
            raise _bad(path, "opt", "holds a NaN or an infinity")
    curve = st.get("curve")
    if curve is None:  # a checkpoint from before the curve was committed with it: the rows of curve.csv
        curve = _legacy_curve(out, st["iteration"])
    elif not (isinstance(curve, list) and len(curve) == st["iteration"]
              and all(isinstance(r, list) and len(r) == len(_CURVE) and r[0] == i + 1
                      and all(isinstance(v, (int, float)) and not isinstance(v, bool) for v in r)
                      for i, r in enumerate(curve))):
        raise _bad(path, "state.curve", f"is not {st['iteration']} rows of the curve's {len(_CURVE)} columns")
    st["curve"] = curve
    gen = torch.Generator()
    if ck.get("gen") is None:  # from before the batch stream was kept: a new one (the run stays valid)
        gen.manual_seed(seed)
    else:
        try:
            gen.set_state(ck["gen"])
        except (TypeError, RuntimeError, ValueError) as e:
            raise _bad(path, "gen", f"is not a torch generator's state ({str(e)[:60]})") from None
    return model, model0, opt, st, gen


def _legacy_curve(out: Path, iterations: int) -> list:
    """The curve rows 1..``iterations`` of an older run's ``curve.csv`` (its first row of each; an iteration
    that a crash repeated there appears once), as numbers."""
    try:
        text = safeio.read_text(out / "curve.csv", 64 << 20, what="a curve")
    except (FileNotFoundError, ValueError):
        return []
    rows: dict[int, list] = {}
    for r in list(csv.reader(io.StringIO(text)))[1:]:
        try:
            vals = [int(v) if v.lstrip("-").isdigit() else float(v) for v in r]
        except ValueError:
            continue
        if len(vals) == len(_CURVE) and isinstance(vals[0], int) and 1 <= vals[0] <= iterations:
            rows.setdefault(vals[0], vals)
    return [rows[i] for i in range(1, iterations + 1) if i in rows]


#: a buffer's arrays: (dtype, trailing shape; None: the per-candidate width) for every learner, then the
#: MLP's and the conv's own
_BUFFER_ARRAYS = {"n": (np.int64, ()), "x": (np.float64, (None, 17)), "adv": (np.float64, (None,)),
                  "actions": (np.int64, (None,)), "base": (np.int64, ()), "claim": (np.bool_, ())}
_BUFFER_MLP = {"ctx": (np.float64, (83,))}
_BUFFER_CONV = {"kinds": (np.uint8, (15, 34)), "cand": (np.int8, (None,))}


def _read_buffer(out: Path, state: dict, conv: bool) -> dict | None:
    """The labels of the checkpoint's iteration: ``buffer.next.npz`` when the checkpoint committed it (the
    rename was cut short; finished now), else ``buffer.npz`` (an uncommitted ``buffer.next.npz`` is
    dropped).  Read with every member's header, dtype, shape and values checked
    (:func:`caishen.sim.safeio.read_npz`), and its rows the checkpoint's count; a buffer of another
    iteration, or none where the checkpoint has labels, is a :class:`caishen.sim.safeio.FileError`."""
    k = state["iteration"]

    def load(path):
        arrays = safeio.read_npz(path, MAX_BUFFER_FILE, what="a labels buffer", finite=True)
        it = arrays.pop("iteration", None)
        return (None if it is None or it.shape != () else int(it)), arrays

    nxt, main = out / BUFFER_NEXT, out / BUFFER_FILE
    if nxt.exists():
        it, arrays = load(nxt)
        if it == k:  # the checkpoint committed these labels; their rename was cut short
            try:
                safeio.commit(nxt, main)
            except OSError as e:
                raise safeio.os_error(main, e, "write") from None
            return _checked_buffer(main, arrays, state, conv)
        safeio.discard(nxt)
    if not main.exists():
        if k == 0:
            return None
        raise safeio.FileError(main, f"is missing: the checkpoint is at iteration {k} and its labels are gone; "
                                     "restore it, or start again with a new --out")
    it, arrays = load(main)
    if it is not None and it != k:
        raise safeio.FileError(main, f"holds the labels of iteration {it}, the checkpoint is at iteration {k}: "
                                     f"not this run's buffer; {_REPAIR}")
    return _checked_buffer(main, arrays, state, conv)


def _checked_buffer(path, arrays: dict, state: dict, conv: bool) -> dict:
    """``arrays`` if they are a labels buffer of the run (:data:`_BUFFER_ARRAYS`, the learner's own, rows
    ``min(labelled, BUFFER)``, one width), else a :class:`caishen.sim.safeio.FileError` naming the member."""
    from caishen.sim.bots.learned import MAX_CANDIDATES

    want = {**_BUFFER_ARRAYS, **(_BUFFER_CONV if conv else _BUFFER_MLP)}
    if set(arrays) != set(want):
        raise safeio.FileError(path, f"holds the members {sorted(arrays)[:10]}, a labels buffer of this learner "
                                     f"{sorted(want)}; {_REPAIR}")
    rows = min(state["labelled"], BUFFER)
    width = arrays["adv"].shape[1] if arrays["adv"].ndim == 2 else -1
    if not 0 <= width <= MAX_CANDIDATES:
        raise safeio.FileError(path, f"member 'adv' has shape {list(arrays['adv'].shape)}; {_REPAIR}")
    for k, (dtype, tail) in want.items():
        shape = (rows, *(width if d is None else d for d in tail))
        if arrays[k].dtype != dtype or arrays[k].shape != shape:
            raise safeio.FileError(path, f"member {k!r} is {arrays[k].dtype}{list(arrays[k].shape)}, expected "
                                         f"{np.dtype(dtype)}{list(shape)} (the checkpoint's {rows} labelled "
                                         f"states); {_REPAIR}")
    n, base = arrays["n"], arrays["base"]
    if rows and not ((n >= 0).all() and (n <= width).all() and (base >= 0).all() and (base < np.maximum(n, 1)).all()):
        raise safeio.FileError(path, f"member 'n' or 'base' holds a count outside 0..{width}; {_REPAIR}")
    return arrays


def _budget(minutes, labels, cpu_minutes) -> dict:
    """The budgets given (:func:`learn`) by name, or ``{"minutes": DEFAULT_MINUTES}`` when none is."""
    given = {"minutes": minutes, "labels": labels, "cpu_minutes": cpu_minutes}
    return {k: v for k, v in given.items() if v is not None} or {"minutes": DEFAULT_MINUTES}


def _left(budget: dict, state: dict, t_end: float) -> bool:
    """Whether every budget still has some left (the run stops at the first one spent)."""
    return (("minutes" not in budget or time.time() < t_end)
            and ("labels" not in budget or state["labelled"] < budget["labels"])
            and ("cpu_minutes" not in budget or state["cpu_seconds"] < 60.0 * budget["cpu_minutes"]))


def _eta(budget: dict, state: dict, t_end: float, dt: float, m: int, cpu: float) -> str:
    """``"ETA N s (the B budget)"``: wall seconds until the first budget is spent, at the rates of the last
    iteration (``dt`` wall seconds, ``m`` labelled states, ``cpu`` CPU seconds)."""
    etas = {"wall minutes": t_end - time.time()} if "minutes" in budget else {}
    if "labels" in budget and m:
        etas["labels"] = (budget["labels"] - state["labelled"]) * dt / m
    if "cpu_minutes" in budget and cpu > 0:
        etas["CPU minutes"] = (60.0 * budget["cpu_minutes"] - state["cpu_seconds"]) * dt / cpu
    name = min(etas, key=etas.get, default="")
    return f"ETA {max(0.0, etas[name]):,.0f} s (the {name} budget)" if name else "ETA unknown (no label yet)"


def learn(rules: str = DEFAULT, out="runs/learn", minutes: float | None = None, seed: int = 0, hands: int = 200,
          n_det: int = 8, frac: float = 0.2, hidden: tuple[int, int] = (32, 16), lr: float = 3e-4,
          beta: float = 1.0, tau: float = 1.0, steps: int = 50, batch: int = 256, eval_walls: int = 20_000,
          max_iterations: int | None = None, adv_scale: float | None = None, arch: str = "mlp",
          channels: tuple[int, ...] = CONV_CHANNELS, workers: int = 1, device: str | None = "auto",
          labels: int | None = None, cpu_minutes: float | None = None, log=print) -> dict:
    """Run the recipe (module docstring) into the folder ``out`` until a budget is spent (or for
    ``max_iterations``, whatever the budgets), resuming from ``out/checkpoint.pt`` if there is one; then
    export ``out/learned.npz`` and evaluate it (``eval_walls`` walls; 0: no evaluation).

    Budgets, the first one spent ends the run (none given: :data:`DEFAULT_MINUTES` wall minutes):
    ``minutes`` of wall time of this call; ``labels``: labelled states of the run (a resumed run counts
    on); ``cpu_minutes``: CPU minutes of the run, this process's and its labelling workers' (resumed
    runs count on; the evaluation apart).  Each iteration's line ends with the ETA of the first budget.

    ``hands``: hands played per iteration; ``n_det``: determinizations per labelled state; ``frac``:
    fraction of the learner's decisions labelled; ``steps`` Adam steps of ``batch`` states per
    iteration at learning rate ``lr``; ``beta``: weight of the KL to the start; ``tau``: temperature
    of the policy's softmax; ``adv_scale``: the advantages' divisor in the loss (None: the rule set's,
    :func:`advantage_scale`); ``arch``: ``"mlp"`` (``hidden``) or ``"conv"`` (``channels``), the
    net trained (:func:`initial_model`; a resumed run keeps its checkpoint's shape); ``workers``: processes
    labelling each iteration's walls side by side (:func:`label_iteration`; the labels are the rollouts,
    ~93% of an iteration: the recipe's time scales with the cores; 1 labels in this process, and a run
    with another count labels other, equally good, states); ``device``: where the net's updates run
    (:func:`device_of`: ``"auto"`` a CUDA GPU when torch finds one; the labels are numba rollouts on the CPU
    whatever it is, so a GPU speeds up only the update, ~6% of an iteration on 2 cores).  ``log``: called
    with each progress line (None: silent).  Returns ``{"iterations", "labelled", "seconds", "cpu_seconds",
    "learned": path, "adv_scale", "match": the evaluation's summary or None, "eval": the learner's row of its
    ``policy_rows`` (points, lo, hi, win, deal_in) or None}``.
    Raises ``ValueError`` for a bad argument (naming it; :func:`_check_settings`, before anything is
    trained), a ``device`` torch does not find, a checkpoint of another rule set or ``arch``, a folder in
    use by another learn or holding a symbolic link; :class:`caishen.sim.safeio.FileError` (a
    ``ValueError``) naming the file and field for a damaged checkpoint or buffer, or a file that cannot be
    written (a full disk: the last committed iteration stays, and a rerun resumes there).
    """
    torch = _torch()
    _check_settings(rules, minutes=minutes, hands=hands, steps=steps, batch=batch, eval_walls=eval_walls, lr=lr,
                    beta=beta, tau=tau, adv_scale=adv_scale, seed=seed, n_det=n_det, frac=frac, labels=labels,
                    cpu_minutes=cpu_minutes)
    budget = _budget(minutes, labels, cpu_minutes)
    _check_arch(arch)
    if isinstance(workers, bool) or not isinstance(workers, (int, np.integer)) or not 1 <= workers <= 256:
        raise ValueError(f"workers {workers!r}: must be an integer in 1..256")
    scale = advantage_scale(rules) if adv_scale is None else float(adv_scale)
    dev = device_of(torch, device)
    log = log or (lambda s: None)
    torch.set_num_threads(1)
    out = safeio.make_dir(out)
    with safeio.DirLock(out, "caishen learn"):  # one learn per folder; never a write through a link in it
        safeio.refuse_links(out)
        model, model0, opt, state, buf, gen = _start(torch, out, rules, arch, hidden, channels, seed, lr, dev, log)
        log(f"training on {dev}; labelling on the CPU with {workers} worker(s); budget "
            + ", ".join(f"{k.replace('_', ' ')} {v:,}" for k, v in budget.items()))
        current = out / "current.npz"
        first_iteration = state["iteration"]
        t_end = time.time() + 60.0 * budget.get("minutes", 0.0)
        pool = None  # the labelling workers (workers > 1), started at the first iteration
        try:
            while (max_iterations is None and _left(budget, state, t_end)) or (
                    max_iterations is not None and state["iteration"] < max_iterations):
                it = state["iteration"]
                t0, c0 = time.time(), time.process_time()
                model.export(current, {"from": "caishen learn", "iteration": it})
                lineup = LINEUPS[it % len(LINEUPS)].replace("L", f"learned:{current}").replace("T", f"tuned:{rules}")
                walls = seed * 10**9 + state["hands"] + np.arange(hands)
                if workers > 1 and pool is None:
                    import concurrent.futures
                    import multiprocessing

                    # spawn: the workers start clean (no torch state forked), load the kernels from the cache once
                    pool = concurrent.futures.ProcessPoolExecutor(workers,
                                                                  mp_context=multiprocessing.get_context("spawn"))
                fresh, m, stats, cpu_workers = label_iteration(lineup, rules, walls, n_det, frac, seed * 7919 + it,
                                                               arch == "conv", pool, workers)
                t_label = time.time() - t0
                state["hands"] += hands
                state["decisions"] += int(stats[0])
                held = _tensors(torch, fresh, np.arange(m), dev) if m else None
                before = _choice(torch, model, held) if m else None
                loss = kl = float("nan")
                if buf is not None and len(buf["n"]) and steps:
                    for _ in range(steps):
                        idx = torch.randint(len(buf["n"]), (min(batch, len(buf["n"])),), generator=gen).numpy()
                        lo, k = _loss(torch, model, model0, _tensors(torch, buf, idx, dev), tau, beta, scale)
                        opt.zero_grad()
                        lo.backward()
                        opt.step()
                        loss, kl = float(lo.detach()), float(k.detach())
                gain = agree = float("nan")
                diag = {k: float("nan") for k in DIAGNOSTICS}
                if m:  # the updated net's choices against the net's before the update, on labels it has not seen
                    pick = _choice(torch, model, held)
                    rows = np.arange(m)
                    gain = float((fresh["adv"][rows, pick] - fresh["adv"][rows, before]).mean())
                    tuned = _choice(torch, model0, held)
                    agree = float((pick == tuned).mean())
                    diag = diagnostics(fresh, fresh["base"], tuned)  # of the net that played the hands
                buf = _append(buf, fresh, m)
                state["labelled"] += m
                state["iteration"] = it + 1
                dt = time.time() - t0
                cpu = time.process_time() - c0 + (cpu_workers if pool is not None else 0.0)
                state["seconds"] += dt
                state["cpu_seconds"] += cpu
                row = [it + 1, round(state["seconds"], 1), state["hands"], state["decisions"], state["labelled"],
                       round(stats[0] / t_label, 1), round(m / t_label, 2), loss, kl, gain, agree,
                       *(diag[k] for k in DIAGNOSTICS)]
                state["curve"] = [*state["curve"], [int(v) if isinstance(v, (int, np.integer)) else float(v)
                                                    for v in row]]
                _commit(torch, out, model, model0, opt, state, buf, gen, arch)
                model.export(out / "learned.npz", {"from": "caishen learn", "iteration": it + 1, "rules": rules,
                                                   "labelled": state["labelled"], "seed": seed})
                log(f"iteration {it + 1}: {stats[0] / t_label:,.0f} learner decisions/s, {m / t_label:.1f} labelled "
                    f"states/s ({state['labelled']} in all), "
                    + (f"loss {loss:.3f}, KL {kl:.4f}" if loss == loss else "no update yet (the buffer was empty)")
                    + f", held-out gain {gain:+.3f} points, "
                    f"agreement with start {agree:.3f}; played: agreement with tuned {diag['agree_tuned']:.3f}, "
                    f"with greedy {diag['agree_greedy']:.3f}, shanten-raising discards {diag['shanten_up']:.3f}; "
                    f"{state['cpu_seconds']:,.0f} CPU s; " + _eta(budget, state, t_end, dt, m, cpu))
        finally:
            if pool is not None:
                pool.shutdown(wait=False, cancel_futures=True)
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
        summary = evaluate(learned_path, rules, eval_walls, seed + EVAL_SEED, eval_dir, log) if eval_walls else None
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
                   help=f"wall minutes of training in this call (default {DEFAULT_MINUTES:g} when neither --labels "
                   "nor --cpu-minutes is given); the first budget spent ends the run, and each iteration's line "
                   "gives its ETA")
    p.add_argument("--labels", type=int, default=None,
                   help="labelled states of the run (a rerun resumes and counts on), e.g. 50000")
    p.add_argument("--cpu-minutes", type=float, default=None,
                   help="CPU minutes of the run, this process's and its --workers' (the evaluation apart)")
    p.add_argument("--seed", type=int, default=0, help="seed of the walls, labels and batches (default 0)")
    p.add_argument("--hands", type=int, default=200, help="hands played per iteration (default 200)")
    p.add_argument("--det", type=int, default=8, help="determinizations per labelled state (default 8)")
    p.add_argument("--frac", type=float, default=0.2, help="fraction of the learner's decisions labelled (0.2)")
    p.add_argument("--beta", type=float, default=1.0, help="weight of the KL to the start (default 1)")
    p.add_argument("--tau", type=float, default=1.0, help="softmax temperature of the policy (default 1)")
    p.add_argument("--lr", type=float, default=3e-4, help="Adam learning rate (default 3e-4)")
    p.add_argument("--steps", type=int, default=50, help="Adam steps per iteration (default 50)")
    p.add_argument("--adv-scale", type=float, default=None,
                   help=f"divisor of the advantages in the loss (default: the rule set's reward_scale over {DEFAULT}'s)")
    p.add_argument("--workers", type=int, default=1,
                   help="processes labelling each iteration's walls side by side (default 1: this process; the "
                   "labels are ~93%% of the time, so a many-core machine gives a worker per core)")
    p.add_argument("--device", default="auto",
                   help="where the net's updates run: auto (a CUDA GPU when torch finds one, else the CPU), cpu, "
                   "cuda or cuda:N (default auto; the labels are CPU rollouts whatever it is)")
    p.add_argument("--eval-walls", type=int, default=20_000, help="walls of the final match (default 20000; 0: none)")
    p.set_defaults(func=_run_command)


def _run_command(args) -> int:
    res = learn(args.rules, args.out, minutes=args.minutes, seed=args.seed, hands=args.hands, n_det=args.det,
                frac=args.frac, beta=args.beta, tau=args.tau, lr=args.lr, steps=args.steps,
                eval_walls=args.eval_walls, adv_scale=args.adv_scale, arch=args.arch, workers=args.workers,
                device=args.device, labels=args.labels, cpu_minutes=args.cpu_minutes, log=print)
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
