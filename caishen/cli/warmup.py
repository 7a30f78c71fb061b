"""``caishen warmup [TARGET...]``: compile the numba kernels ahead of time (:mod:`caishen.sim.warmup`)."""

from __future__ import annotations


def add(sub) -> None:
    from caishen.sim.warmup import TARGETS

    p = sub.add_parser(
        "warmup",
        help="compile the numba kernels of every command ahead of time (for a cluster image, a container, CI)",
        description="Compile (or load from numba's disk cache) the kernels of each target by running a tiny "
        "workload of it; on stderr one line as each target starts and one as it ends (kernels compiled, "
        "seconds). The targets: selfplay (the self-play loop of simulate, match, ladder and sweep with every "
        "bot without data: greedy, the 飘 policies, ...), bots (the bots with data, tuned:NAME and mc:N, in "
        "self-play and in the step API), game (the Game API, caishen play), envs (the batched and the "
        "Gymnasium envs), hand (caishen hand), score (caishen score), seats (python: and exec: seats), "
        "labels (caishen learn's rollout labels) and piao (caishen piao's study). A first run on a fresh "
        "machine compiles for several minutes (measured: 16 minutes of compiling in all, 8.4 wall minutes "
        "with --workers 2, on a 2-core machine shared with other jobs); afterwards the "
        "commands load their kernels in about a second, except caishen learn --arch conv (its labels "
        "compile on first use). Run it once after installing (or upgrading) caishen, with --workers set to "
        "your cores: the targets compile side by side into the shared cache.",
    )
    p.add_argument("targets", nargs="*", metavar="TARGET",
                   help=f"what to compile (default: all of {', '.join(TARGETS)})")
    p.add_argument("--workers", type=int, default=1,
                   help="compile this many targets at once, each in its own process (default 1; e.g. your cores)")
    p.set_defaults(func=run)


def _workloads() -> dict:
    """``{target: workload}``: each target's tiny workload is the ``warm()`` of the module owning its kernels."""
    import caishen.envs
    from caishen.sim import hand
    from caishen.sim.engine import game
    from caishen.sim.rules import vectors
    from caishen.sim.selfplay import batch

    return {"selfplay": batch.warm, "bots": batch.warm_bots, "game": game.warm, "envs": caishen.envs.warm,
            "hand": hand.warm, "score": vectors.warm, "seats": caishen.envs.warm_seats, "labels": warm_labels,
            "piao": warm_piao}


def warm_piao() -> None:
    """Four hands of the counterfactual 飘 study (:func:`caishen.sim.analysis.piao_study.study_chunk`, the
    kernel of ``caishen piao``; its check plays the 飘 policies through the self-play loop, ``selfplay``):
    ``caishen warmup piao``."""
    from caishen.sim.analysis import piao_study

    piao_study.study_chunk(0, 4, 1, "piao", "greedy")


def warm_labels() -> None:
    """The labels of ``caishen learn`` (:func:`caishen.sim.selfplay.labels.label_hands`: the rollouts, the
    pruning) on one wall of every rule set with a learned bot, with the argument types ``caishen learn``
    gives them (an MLP learner, ``learned:NAME``, among the tuned bot and greedy; the start's linear weights
    as the anchor): ``caishen warmup labels``.  (``caishen learn --arch conv`` labels with other types and
    still compiles on first use.)"""
    import numpy as np

    from caishen.sim import rules
    from caishen.sim.bots.registry import load_tuned, parse
    from caishen.sim.selfplay.labels import Pruning, label_hands, new_buffer

    for name in rules.names():
        try:
            parse(f"learned:{name}")
        except ValueError:  # no learned bot of this rule set
            continue
        anchor = np.ascontiguousarray(load_tuned(name)[0], np.float64)
        label_hands(f"learned:{name},tuned:{name},greedy,learned:{name}", name, np.array([1], np.int64), n_det=1,
                    frac=1.0, cap=16, seed=0, buf=new_buffer(16, False),
                    prune=Pruning(top_k=2, anchor=anchor))


def warmup(targets=None, progress=None, bar: bool | str = True) -> dict[str, float]:
    """Compile (or load from the cache) the kernels of each target; ``{target: seconds}``.

    ``targets``: names from :data:`caishen.sim.warmup.TARGETS` (default all).
    ``progress(line)`` is called before and after each target (e.g.
    ``print``); with ``bar`` (and ``progress``) also ``kernel N of M`` on stderr while a target compiles
    (``bar="lines"``: a line every few seconds, never a bar, as in :func:`warmup_parallel`'s workers, whose
    bars would draw over each other).  Marks each target
    so that the first-use warning (:func:`caishen.sim.warmup.first_use`) stays quiet afterwards.  Raises
    ``ValueError`` for an unknown target.
    """
    import sys
    import time

    from caishen.sim import warmup as W

    targets = W.TARGETS if targets is None else (targets,) if isinstance(targets, str) else tuple(targets)
    for t in targets:
        W.check_target(t)
    if progress and len(targets) > 1:  # at once: the imports below take seconds before the first target
        progress(f"{len(targets)} target(s) one after the other: {', '.join(targets)}")
    work, took = _workloads(), {}
    for t in targets:
        if progress:
            progress(f"kernels: {t} ...")
        t0 = time.perf_counter()
        before = set(W._announced)
        for other in W.TARGETS:  # no first-use warning inside the warmup itself (bots uses the game's kernels)
            W.announce(other)
        # with progress: "kernel N of M" while it compiles (a bar on a terminal, a line every 5 s on a pipe or
        # in a worker process beside others: bar="lines")
        kbar = W._KernelBar(f"caishen warmup {t}", sys.stderr, lines=bar == "lines") if progress and bar else None
        with W.CompileWatch(on_kernel=kbar and kbar.step, on_idle=kbar and kbar.clear,
                            on_begin=kbar and kbar.begin) as w:  # compiled, or cached
            try:
                work[t]()
            finally:
                if kbar is not None:
                    kbar.close()
        W._announced.intersection_update(before | {t})  # the other targets warn again on their first use
        if w.kernels:
            W._record_estimate(f"caishen warmup {t}", w.kernels, w.seconds)
        took[t] = time.perf_counter() - t0
        W.set_mark(t)
        if progress:
            what = f"compiled {w.kernels} kernel(s)" if w.kernels else "loaded from the cache"
            progress(f"kernels: {t} {what} in {took[t]:.1f} s")
    return took


def _stderr(line: str) -> None:
    import sys

    from caishen.sim.termtext import wrap
    from caishen.sim.warmup import say

    say(sys.stderr, "\n".join(wrap(f"caishen warmup: {line}")))  # one write: the workers' lines never merge


def _one(target: str, progress: bool = False) -> dict[str, float]:
    """A worker process's warmup of one target (:func:`warmup_parallel`); with ``progress`` a line on stderr
    when it starts and when it ends, and ``kernel N of M`` lines while it compiles (the worker's stderr is
    the command's)."""
    return warmup((target,), progress=_stderr if progress else None, bar="lines")


def warmup_parallel(targets, workers: int, progress=None) -> dict[str, float]:
    """:func:`warmup` of ``targets`` with up to ``workers`` targets compiling at once, each in a fresh
    process (numba compiles one kernel at a time per process) into the one shared cache; the largest
    targets first.  With ``progress(line)``: one line before anything starts (the targets, the processes),
    then each worker says on stderr when its target starts and ends.  ``{target: seconds}``."""
    import concurrent.futures
    import multiprocessing

    from caishen.sim import warmup as W

    targets = W.TARGETS if targets is None else tuple(targets)
    for t in targets:
        W.check_target(t)
    order = sorted(targets, key=lambda t: -W.COLD_SECONDS[t])
    took = {}
    n = min(workers, len(order))
    if progress:
        progress(f"{len(order)} target(s) ({', '.join(order)}) in {n} process(es); each line below says when a "
                 "target starts and ends")
    with concurrent.futures.ProcessPoolExecutor(n, mp_context=multiprocessing.get_context("spawn")) as pool:
        jobs = {pool.submit(_one, t, progress is not None): t for t in order}
        for job in concurrent.futures.as_completed(jobs):
            took.update(job.result())
    return took


def run(args) -> int:
    from caishen.cli import common
    from caishen.sim.warmup import cache_dir

    if not 1 <= args.workers <= common.MAX_WORKERS:
        raise ValueError(f"--workers {args.workers}: must be in 1..{common.MAX_WORKERS}")
    import time

    t0 = time.perf_counter()
    if args.workers == 1:
        took = warmup(args.targets or None, progress=_stderr)
    else:
        took = warmup_parallel(args.targets or None, args.workers, progress=_stderr)
    print(f"ready in {time.perf_counter() - t0:.1f} s ({sum(took.values()):.1f} s of compiling or loading, "
          f"{len(took)} target(s))\nnumba cache: {cache_dir()}")
    return 0
