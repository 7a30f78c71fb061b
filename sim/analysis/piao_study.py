"""The 飘财 decision answered where it is made: counterfactual rollouts on the same wall (K-9).

At every *decision point* of a self-play hand the state is cloned and
played on both ways -- the *alternative* (飘: throw a 财神) and the *base*
(keep it) -- ``R`` times, each time with a fresh order of the tiles not yet
drawn that is the **same for both branches** (common random numbers), and
the deciding seat's final points of the two branches are recorded.  The
difference, averaged over rollouts and over decision points, is the expected
value of 飘 minus keep at that kind of point; no selection effect enters
(the summary's observational "飘 minus comparable" compares seats that did
and did not 飘, which differ in what happened next).

Decision points (``decision``: a name the rule set gives to one of these
kernel codes, ``Analysis.decisions`` of its ``analysis`` hook; ``piao``,
and the 架听 and 硬子 decisions ``hard`` and the declaration's own pinyin):

=====================  ==================================================  ================  ================
code                   when (seat to act, in the real hand)                alternative       base
=====================  ==================================================  ================  ================
``DECISION_PIAO``      own turn with a joker (K-2.1): holds a 财神,         discard a 财神    the keep bot's
                       cannot win now, may discard a 财神 and another       (飘财, K-9.1)     move without the
                                                                                             财神 discard
                       tile (not forced, K-2.4 / K-2.5), and stays ready
                       (shanten <= 0) without the 财神
``DECISION_DECLARE``   own turn: the bot's discard leaves a single wait    ``declare <k>``   ``discard <k>``
                       (架听 offered, J-4.1)                                (架听)            (no declaration)
``DECISION_HARD``      the 硬子 question (J-4.2)                            ``hard_declare``  ``hard_decline``
=====================  ==================================================  ================  ================

In the rollouts every seat plays its policy, with one change in the base
branch.  At a 飘 chance the deciding seat plays the *keep bot*
(``keep_then``; default its own policy) from the keep move on: "飘 now,
then the policy" against "keep now (the keep bot with 飘 turned off only
at this chance), then the keep bot" -- with the default, "keep now, decide
again later" (:func:`comparison` says it in words).  At a 架听 or 硬子
decision the deciding seat never takes that kind of action again in the
hand, so that the comparison is "this decision, then the seat's policy"
against "never that decision in this hand".

Which points are studied: with ``per_hand`` (the 飘 study of ``caishen
piao``) one chance per hand, drawn uniformly among the hand's chances
(reservoir sampling), while the real hand is played by the policy
throughout, so the field is the policy's own; each point carries its
hand's number of chances (``chances``), the weight that makes
:func:`estimate` a mean per chance.  Otherwise every point is studied and
the real hand goes on with the alternative taken with probability
``explore`` (default 0.5, a stream apart from the walls), so that the
points include 飘 chains (a seat whose last discards were 财神, K-6.5) and
states after declarations (a field that 飘 more than the policy).  Walls and the dealer of
hand ``h`` (each hand its own one-hand match) come from the stream of
``seed``; the rollout orders and the exploration from two others, so the
walls do not depend on ``R`` or ``explore``.

Features recorded at a 飘 point (:data:`PIAO_FEATURES`): ``tiles_left``
(live wall tiles left: the wall minus the reserved tiles, K-3.4),
``caishen`` (财神 held before the discard, 1 or 2), ``waits`` (non-财神
kinds that complete the hand after the 飘 discard, by shape), ``live_waits``
(their copies the seat cannot see: not in its hand, any discard or any
exposed meld), ``chain`` (the seat's chain links so far, K-6.5), ``dealer``,
``baotou`` (the hand after the 飘 is in 爆头 shape, K-6.2), ``taken``
(the real hand took the alternative), ``turns`` (discards so far),
``chances`` (the hand's 飘 chances with ``per_hand``, else 1) and
``own_choice`` (the seat's policy takes the alternative there by itself:
where it throws, 飘 minus keep is what its choice is worth over the other
branch; where it keeps, its negative is).

Per point and branch, averaged over the ``R`` rollouts (:func:`study_chunk`):
the score, won, failed 飘 (K-9.3), the 飘 *doubling* and the *failure
penalty* (:mod:`caishen.sim.analysis.piao_kernels`: the parts of the score
only 飘 makes), the share of rollouts that lost at least
:data:`LOSS_POINTS` points, and the first rollout's score (one draw from
the branch's outcome distribution per point: its quantiles are the
branch's).

The module has three parts: the kernels (:mod:`caishen.sim.analysis.piao_kernels`),
this module (the Python face, the runs in chunks and their files), and the
estimates (:mod:`caishen.sim.analysis.piao_estimate`, whose public names are
also this module's).

Estimates (:func:`estimate`) are means of the per-point difference (per
chance: weighted by ``chances``) with 95% intervals over **independent
units**: the points of one hand share its wall and are correlated, so the
interval is cluster-robust with the hand as the cluster
(:func:`caishen.sim.analysis.intervals.cluster_mean_ci`, or its weighted form
:func:`weighted_mean_ci`; checked for coverage on replicates by
``tests/test_interval_coverage.py``).  :func:`piao_table_bits` turns the estimate
by (tiles-left bucket, many waits, chain, dealer) into the 64-bit table of the
``piao_table`` policy (:func:`caishen.sim.bots.piao_table._piao_table_says`), which throws a 财神
at a point exactly where the estimated EV of 飘 is positive.

Cost: a point costs ``2 R`` rest-of-hand rollouts.  The variance of a
point's difference splits into between points (~52 points^2) and within its
rollouts (~81 / R); with ~0.17 points per hand, R = 2..4 gives the most
precision per second (the default is 4).  Measured numbers are in
:func:`run_study`'s docstring.
"""

from __future__ import annotations

import concurrent.futures as cf
import json
import multiprocessing
import os
import time
from pathlib import Path

import numpy as np
import pandas as pd

from caishen.sim.engine import N_SEATS, engine_params, load_rules, new_records
from caishen.sim.bots.registry import bot_table, make_context
from caishen.sim.rules import base as rulesets
from caishen.sim.rules.codes import POINTS_ENGINE
from caishen.sim.rules.kernels import hand_points
from caishen.sim.selfplay import records, rundir
from caishen.sim.tables import hand_tables
from caishen.sim.analysis.piao_kernels import (  # noqa: F401  (the kernels' names: public here too)
    DECISION_DECLARE,
    DECISION_HARD,
    DECISION_PIAO,
    F_BAOTOU,
    F_CAISHEN,
    F_CHAIN,
    F_CHANCES,
    F_DEALER,
    F_HAND,
    F_LIVE,
    F_OWN,
    F_SEAT,
    F_TAKEN,
    F_TILES_LEFT,
    F_TURNS,
    F_WAITS,
    FEATURES,
    N_FEAT,
    N_RES,
    R_DOUBLE,
    R_FAILED,
    R_PENALTY,
    R_SCORE,
    R_WON,
    _piao_features,
    _piao_point,
    StudyOut,
    StudyPlan,
    _study_hands,
    new_scratch,
)
from caishen.sim.analysis.piao_estimate import (  # noqa: F401  (the estimates: public here too)
    GROUPS,
    LOSS_POINTS,
    PIAO_FEATURES,
    estimate,
    group_labels,
    piao_table_bits,
    point_weights,
    table_cells,
    table_estimate,
    weighted_mean_ci,
)


def decisions() -> dict[str, tuple[int, str]]:
    """``{decision: (code, rule set)}``: the decisions every registered rule set names (``Analysis.decisions``)."""
    out = {}
    for name in rulesets.names():
        for decision, code in rulesets.get(name).analysis_hooks().decisions.items():
            out[decision] = (code, name)
    return out


#: default size of :func:`run_study` (hands, rollouts per branch); see its docstring for the numbers
DEFAULT_HANDS = 500_000
DEFAULT_ROLLOUTS = 4
DEFAULT_CHUNK = 500
#: the per-point columns :func:`study_chunk` adds to :data:`FEATURES` (float64; ``diff_sd`` apart: NaN at R = 1)
RESULT_COLUMNS = ("alt_score", "base_score", "diff", "alt_won", "base_won", "alt_failed", "base_failed",
                  "alt_double", "base_double", "alt_penalty", "base_penalty", "alt_loss", "base_loss",
                  "alt_first", "base_first")


# ---------------------------------------------------------------------------
# Python API
# ---------------------------------------------------------------------------
def _check_int(name, value, lo, hi) -> int:
    from caishen.sim.engine import _check_int as check

    return check(name, value, lo, hi)


def study_bots(decision: str, policies, options=None, seed: int = 0) -> tuple:
    """``(rule set name, rules, engine params, table: int64[4, 2], bot context)`` of a study of
    ``decision`` with ``policies`` (one spec or four, any bot of :mod:`caishen.sim.bots.registry` that can
    play the decision's rule set; the bots with data search from their own stream, seeded by ``seed``).

    Raises ``ValueError`` for an unknown decision, a bad option or a spec the registry refuses.
    """
    known = decisions()
    if decision not in known:
        raise ValueError(f"unknown decision {decision!r}; known: {', '.join(known)}")
    name, r = load_rules(known[decision][1], options)
    ep = engine_params(name, r)
    table, weights = bot_table(policies, name, int(ep.joker))
    bx = make_context(name, r, weights, seed, policies)
    return name, r, ep, table, bx


def keep_specs(policies, keep_then=None) -> list[str]:
    """The four seats' keep-branch bots (normal form): ``keep_then`` (one spec or four) or, when None, each
    seat's own policy ("keep now, decide again later").  Raises ``ValueError`` as the registry's parser."""
    from caishen.sim.bots.registry import parse_seats

    return list(parse_seats(policies if keep_then is None else keep_then))


def comparison(policies, keep_then=None, per_hand: bool = False) -> str:
    """The 飘 study's comparison in words (every output of ``caishen piao`` states it)."""
    from caishen.sim.bots.registry import parse_seats

    pol = parse_seats(policies)
    keep = keep_specs(policies, keep_then)
    p = pol[0] if len(set(pol)) == 1 else ",".join(pol)
    if keep_then is None:
        then = f"keep the 财神 now (the same bot, {p}, with 飘 turned off only at this chance), then {p} decides again"
    else:
        k = keep[0] if len(set(keep)) == 1 else ",".join(keep)
        then = f"keep the 财神 now ({k}'s move without the 财神 discard), then {k} plays the rest of the hand"
    field = (f"; one chance per hand studied, drawn uniformly among the hand's chances, the hand itself played "
             f"by {p} throughout" if per_hand else "")
    return (f"飘 now (throw a 财神), then {p} plays the rest of the hand, against: {then}; the other seats play "
            f"{p}; same wall continuation for both branches{field}")


def study_chunk(seed: int, n_hands: int, rollouts: int = DEFAULT_ROLLOUTS, decision: str = "piao",
                policies="never", options=None, explore: float = 0.5, *, reshuffle: bool = True,
                hand_scores: np.ndarray | None = None, keep_then=None, per_hand: bool = False) -> pd.DataFrame:
    """Study the decision points of ``n_hands`` hands in one numba call; one row per point.

    ``seed``: int ``0 .. 2**32-1`` (walls, dealers, rollout orders and the
    exploration all derive from it); ``rollouts``: R, 1..4096;
    ``decision``: a name of :func:`decisions` (its rule set's); ``policies``: one spec or four
    (:func:`study_bots`);
    ``options``: rule options; ``explore``: probability in [0, 1] that the
    real hand takes the alternative at a point; ``keep_then``: the keep
    branch's bot after a 飘 chance (:func:`keep_specs`; default each seat's
    own); ``per_hand`` (``decision="piao"`` only): study one chance per
    hand, drawn uniformly among its chances, the real hand played by
    ``policies`` throughout (``explore`` unused; the row's ``chances`` is the
    hand's number of chances, the weight of :func:`estimate`).  ``reshuffle=False`` keeps
    the real wall's order in the rollouts (for checks); ``hand_scores``: an
    ``int64[n_hands, 4]`` array to receive the real hands' score changes
    (where the engine pays them, K-8).

    Returns a DataFrame with :data:`FEATURES` (``hand`` local to this call)
    and, averaged over the R rollouts, ``alt_score``, ``base_score``,
    ``diff`` (points of the deciding seat: alternative minus base),
    ``diff_sd`` (the spread of the R differences) and, per branch
    (``alt_``/``base_``), ``won``, ``failed`` (K-9.3 failed 飘),
    ``double`` (the 飘 doubling of its win), ``penalty`` (the failed-飘
    extra it paid, <= 0), ``loss`` (share of rollouts with a score <=
    -:data:`LOSS_POINTS`) and ``first`` (the first rollout's score).
    Raises ``ValueError`` for a bad argument (named).
    """
    seed = _check_int("seed", seed, 0, 2**32 - 1)
    n_hands = _check_int("n_hands", n_hands, 0, 10**8)
    rollouts = _check_int("rollouts", rollouts, 1, 4096)
    known = decisions()
    if decision not in known:
        raise ValueError(f"unknown decision {decision!r}; known: {', '.join(known)}")
    if isinstance(explore, bool) or not isinstance(explore, (int, float, np.floating, np.integer)) \
            or not 0.0 <= float(explore) <= 1.0:
        raise ValueError(f"explore {explore!r}: must be a probability in [0, 1]")
    name, r, ep, table, bx = study_bots(decision, policies, options, seed)
    keep = keep_specs(policies, keep_then)
    ktable, kweights = bot_table(keep, name, int(ep.joker), "the keep branch's bot")
    kx = make_context(name, r, kweights, seed + 1, keep)
    code = known[decision][0]
    if per_hand and code != DECISION_PIAO:
        raise ValueError(f"per_hand: only the 飘 decision studies one chance per hand, not {decision!r}")
    keep_rec = rulesets.get(name).points != POINTS_ENGINE  # scored after the hand, by its points kernel
    room = max(16, n_hands if per_hand else 4 * n_hands)
    while True:
        feat = np.zeros((room, N_FEAT), np.int64)
        res = np.zeros((room, rollouts, 2, N_RES), np.int64)
        rec = new_records(room * rollouts * 2 if keep_rec else 0)
        scores = np.zeros((n_hands, N_SEATS), np.int64)
        plan = StudyPlan(table, ktable, bx, kx, code, int(round(float(explore) * 1_000_000)), bool(per_hand), rollouts,
                         bool(reshuffle))
        n = _study_hands(seed, n_hands, ep, r.params(), hand_tables(), plan, StudyOut(feat, res, rec, scores),
                         new_scratch())
        if n >= 0:
            break
        room *= 2
    if hand_scores is not None:
        hand_scores[...] = scores
    df = pd.DataFrame(feat[:n], columns=list(FEATURES))
    if keep_rec:
        scores = hand_points(rulesets.get(name), r, rec[: n * rollouts * 2])
        seats = np.repeat(feat[:n, F_SEAT], rollouts * 2)
        res[:n, :, :, R_SCORE] = scores[np.arange(len(seats)), seats].reshape(n, rollouts, 2)
    d = (res[:n, :, 0, R_SCORE] - res[:n, :, 1, R_SCORE]).astype(np.float64)
    df["alt_score"] = res[:n, :, 0, R_SCORE].mean(axis=1)
    df["base_score"] = res[:n, :, 1, R_SCORE].mean(axis=1)
    df["diff"] = d.mean(axis=1)
    df["diff_sd"] = d.std(axis=1, ddof=1) if rollouts > 1 else np.nan
    for b, br in ((0, "alt"), (1, "base")):
        df[f"{br}_won"] = res[:n, :, b, R_WON].mean(axis=1)
        df[f"{br}_failed"] = res[:n, :, b, R_FAILED].mean(axis=1)
        df[f"{br}_double"] = res[:n, :, b, R_DOUBLE].mean(axis=1)
        df[f"{br}_penalty"] = res[:n, :, b, R_PENALTY].mean(axis=1)
        df[f"{br}_loss"] = (res[:n, :, b, R_SCORE] <= -LOSS_POINTS).mean(axis=1)
        df[f"{br}_first"] = res[:n, 0, b, R_SCORE].astype(np.float64)
    return df[[*FEATURES, "alt_score", "base_score", "diff", "diff_sd", *RESULT_COLUMNS[3:]]]


# ---------------------------------------------------------------------------
# runs: chunks in worker processes, resumable Parquet, progress
# ---------------------------------------------------------------------------
STUDY_JSON = "study.json"


def _chunk_job(args: dict) -> pd.DataFrame:
    """Worker side of :func:`run_study`: one chunk (module-level so spawned processes can import it)."""
    return study_chunk(args["seed"], args["n_hands"], args["rollouts"], args["decision"], args["policies"],
                       args["options"], args["explore"], keep_then=args.get("keep_then"),
                       per_hand=args.get("per_hand", False))


def run_study(hands: int = DEFAULT_HANDS, seed: int = 0, rollouts: int = DEFAULT_ROLLOUTS, decision: str = "piao",
              policies="never", options=None, explore: float = 0.5, *, chunk_size: int = DEFAULT_CHUNK,
              out: str | os.PathLike | None = None, keep_then=None, per_hand: bool = False,
              execution=None) -> pd.DataFrame:
    """Study the decision points of ``hands`` hands, in chunks on worker processes; one row per point.

    Chunk ``i`` (``chunk_size`` hands) gets the 32-bit seed of
    ``SeedSequence(seed).spawn(n)[i]`` (:func:`caishen.sim.selfplay.runner.chunk_seeds`), so
    the rows do not depend on ``workers``.  ``out``: a directory (:data:`STUDY`,
    claimed by :func:`caishen.sim.selfplay.rundir.claim`: locked while the
    study runs, no links inside) for
    ``study.json`` (the configuration, written first, atomically) and one
    Parquet file per finished chunk, committed with its identity and
    recorded in a manifest as a run's chunks are
    (:func:`caishen.sim.selfplay.manifest.commit_chunk`); rerunning the same
    configuration into it resumes, reading only the chunks that verify
    (:func:`study_layout`) and replaying the others; another configuration
    is a ``ValueError`` naming what differs.  The returned rows carry
    ``chunk`` and ``hand_id`` (global hand index: the cluster of
    :func:`estimate`'s intervals).  ``execution``: how the chunks run
    (:class:`caishen.sim.selfplay.runner.Execution`: ``workers`` local
    processes, ``progress``; backend ``local`` only; None: its defaults).
    Other arguments as :func:`study_chunk`.

    Measured here (2 cores shared with other jobs; ``python
    notebooks/piao_decision.py --workers 2``): the default size, 500,000
    hands with R = 4, took 450 s (compile included) for 87,516 飘 points;
    the widest 95% half-width over the tiles-left groups was 0.37 points.
    """
    from caishen.sim.selfplay import runner

    hands = _check_int("hands", hands, 1, 10**9)
    chunk_size = _check_int("chunk_size", chunk_size, 1, 10**6)
    ex = (runner.Execution() if execution is None else execution).local_only("a counterfactual study")
    if ex.workers is not None:
        _check_int("workers", ex.workers, 1, 1024)
    known = decisions()
    if decision not in known:
        raise ValueError(f"unknown decision {decision!r}; known: {', '.join(known)}")
    rules = known[decision][1]
    opts = runner.resolve_options(rules, options)
    pol = runner.parse_policies(policies)
    keep = None if keep_then is None else keep_specs(pol, keep_then)
    study_chunk(0, 0, rollouts, decision, pol, opts, explore, keep_then=keep,
                per_hand=per_hand)  # validates everything, compiles once
    n_chunks = -(-hands // chunk_size)
    config = {"kind": "counterfactual", "decision": decision, "rules": rules, "options": opts,
              "policies": list(pol), "seed": int(seed), "hands": hands, "rollouts": int(rollouts),
              "explore": float(explore), "keep_then": keep, "per_hand": bool(per_hand),
              "chunk_size": chunk_size, "n_chunks": n_chunks,
              "source_digest": runner.source_digest()}
    lay = study_layout(config)
    if out is None:
        return _run_chunks(config, lay, None, ex)
    out = Path(out)
    with rundir.claim(out, STUDY, {**config, "created": time.strftime("%Y-%m-%dT%H:%M:%S")}):
        return _run_chunks(config, lay, out, ex)


def _run_chunks(config: dict, lay, out: Path | None, ex) -> pd.DataFrame:
    """:func:`run_study`'s chunks: those ``out`` holds verified are read, the others played (and committed
    into ``out``, which :func:`run_study` holds; None: kept in memory only)."""
    from caishen.sim.selfplay import manifest, runner
    from caishen.sim.warmup import progress_bar

    hands, chunk_size, n_chunks = config["hands"], config["chunk_size"], config["n_chunks"]
    decision, rollouts, per_hand, explore = config["decision"], config["rollouts"], config["per_hand"], \
        config["explore"]
    keep = config["keep_then"]
    pol, opts, seeds = tuple(config["policies"]), config["options"], runner.chunk_seeds(config["seed"], n_chunks)
    done: dict[int, pd.DataFrame] = {}
    if out is not None:
        records.remove_stale_tmp(out)
        for i in manifest.verify(out, layout=lay).ok:
            done[i] = pd.read_parquet(records.chunk_path(out, i))
    todo = [i for i in range(n_chunks) if i not in done]

    def job(i):
        n = min(chunk_size, hands - i * chunk_size)
        return {"seed": int(seeds[i]), "n_hands": n, "rollouts": rollouts, "decision": decision,
                "policies": pol, "options": opts, "explore": explore, "keep_then": keep, "per_hand": per_hand}

    bar = progress_bar(hands, f"{decision} study", initial=sum(min(chunk_size, hands - i * chunk_size) for i in done),
                       disable=not ex.progress)

    def finish(i, df):
        df = df.copy()
        df.insert(0, "chunk", np.int32(i))
        df.insert(1, "hand_id", i * np.int64(chunk_size) + df["hand"].to_numpy(np.int64))
        if out is not None:
            import pyarrow as pa

            manifest.commit_chunk(out, i, pa.Table.from_pandas(df, preserve_index=False), lay)
        done[i] = df
        bar.update(min(chunk_size, hands - i * chunk_size))

    n_workers = min(ex.workers or runner.default_workers(), len(todo))
    try:
        if n_workers <= 1:
            for i in todo:
                finish(i, _chunk_job(job(i)))
        else:
            ctx = multiprocessing.get_context("spawn")
            with cf.ProcessPoolExecutor(max_workers=n_workers, mp_context=ctx) as ex:
                runner._drain(todo, lambda i: ex.submit(_chunk_job, job(i)), 2 * n_workers, finish)
    finally:
        bar.close()
    frames = [done[i] for i in sorted(done)]
    return pd.concat(frames, ignore_index=True) if frames else pd.DataFrame()


#: the columns every chunk file of a study holds (checked on read; ``diff_sd`` is NaN with one rollout)
STUDY_COLUMNS = (("chunk", np.int32), ("hand_id", np.int64), *((f, np.int64) for f in FEATURES),
                 *((c, np.float64) for c in RESULT_COLUMNS))
#: bytes of a study.json at most
MAX_STUDY_JSON = 1 << 20


def study_layout(config: dict):
    """The chunk layout of a study (:class:`caishen.sim.selfplay.manifest.Layout`): its chunks, seed and chunk
    size, the digest of its configuration in every chunk's identity, :data:`STUDY_COLUMNS`; the rows of
    a chunk (decision points) are the manifest's."""
    import hashlib

    import pyarrow as pa

    from caishen.sim.selfplay import manifest

    canon = json.dumps({k: v for k, v in config.items() if k != "created"}, sort_keys=True, separators=(",", ":"))
    return manifest.Layout(n_chunks=int(config["n_chunks"]), seed=int(config["seed"]),
                           chunk_size=int(config["chunk_size"]), games=None,
                           digest=hashlib.sha256(canon.encode()).hexdigest()[:16],
                           columns=tuple((n, pa.from_numpy_dtype(np.dtype(t))) for n, t in STUDY_COLUMNS))


def _check_study_json(doc: dict, where) -> dict:
    """``doc`` if it has a study.json's fields with their types and bounds, else
    :class:`caishen.sim.safeio.FileError` naming ``where`` and the field."""
    from caishen.sim import safeio
    from caishen.sim.rules.options import short_repr

    def ints(lo, hi):
        return lambda v: isinstance(v, int) and not isinstance(v, bool) and lo <= v <= hi

    known = decisions()
    fields = {"kind": lambda v: v == "counterfactual", "decision": lambda v: v in known,
              "rules": lambda v: v in {r for _, r in known.values()}, "options": lambda v: isinstance(v, dict),
              "policies": lambda v: isinstance(v, list) and len(v) == N_SEATS and all(isinstance(p, str) for p in v),
              "seed": ints(0, 2**63 - 1), "hands": ints(1, 10**9), "rollouts": ints(1, 4096),
              "explore": lambda v: isinstance(v, (int, float)) and not isinstance(v, bool) and 0 <= v <= 1,
              "chunk_size": ints(1, 10**6), "n_chunks": ints(1, 10**5),
              "source_digest": lambda v: isinstance(v, str),
              "keep_then": lambda v: v is None or (isinstance(v, list) and len(v) == N_SEATS
                                                   and all(isinstance(p, str) for p in v)),
              "per_hand": lambda v: isinstance(v, bool)}
    optional = {"keep_then": None, "per_hand": False}  # studies written before they existed
    for key, ok in fields.items():
        if key in optional and key not in doc:
            continue
        if key not in doc or not ok(doc[key]):
            raise safeio.FileError(where, f"field {key!r} is {short_repr(doc.get(key))}: not a study.json caishen "
                                          "wrote")
    if doc["n_chunks"] != -(-doc["hands"] // doc["chunk_size"]):
        raise safeio.FileError(where, f"field 'n_chunks' is {doc['n_chunks']}, but {doc['hands']} hands in chunks "
                                      f"of {doc['chunk_size']} make {-(-doc['hands'] // doc['chunk_size'])}")
    return doc


def read_study_json(out) -> dict:
    """The validated ``study.json`` of ``out`` (:func:`_check_study_json`; ``ValueError`` when there is none,
    :class:`caishen.sim.safeio.FileError` for a link, a file that is not regular, too large or not JSON)."""
    return _check_study_json(*rundir.read_marker(out, "study", STUDY_JSON, MAX_STUDY_JSON))


#: a study's directory (:mod:`caishen.sim.selfplay.rundir`): study.json written first, then ``chunks/``
STUDY = rundir.Kind("study", STUDY_JSON, read_study_json, subdirs=(records.CHUNKS_DIR,),
                    new_out="choose a new directory")


def read_points(out) -> tuple[dict, pd.DataFrame, "object"]:
    """``(study.json, the decision points of its verified chunks, the verification)`` of a study directory
    (:func:`run_study` with ``out``).  Raises ``ValueError`` when it has no verified chunk."""
    from caishen.sim.selfplay import manifest

    doc = read_study_json(out)
    check = manifest.verify(out, layout=study_layout(doc))
    if not check.ok:
        raise ValueError(f"no verified chunk in {str(out)!r}" + (f" ({'; '.join(check.describe(3))})"
                                                                 if check.problems else ""))
    pts = pd.concat([pd.read_parquet(records.chunk_path(out, i)) for i in check.ok], ignore_index=True)
    return doc, pts, check
