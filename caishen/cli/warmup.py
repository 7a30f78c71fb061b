"""``caishen warmup [TARGET...]``: compile the numba kernels ahead of time (:mod:`caishen.sim.warmup`)."""

from __future__ import annotations


def add(sub) -> None:
    from caishen.sim.warmup import TARGETS

    p = sub.add_parser(
        "warmup",
        help="compile every numba kernel ahead of time (for a cluster image, a container, CI)",
        description="Compile (or load from numba's disk cache) the kernels of each target by running a tiny "
        "workload of it, printing the seconds each took. A first run on a fresh machine compiles for a few "
        "minutes; afterwards every command starts in about a second. Run it once after installing (or "
        "upgrading) caishen, with --workers set to your cores: the targets compile side by side into the "
        "shared cache.",
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
            "hand": hand.warm, "score": vectors.warm, "seats": caishen.envs.warm_seats}


def warmup(targets=None, progress=None) -> dict[str, float]:
    """Compile (or load from the cache) the kernels of each target; ``{target: seconds}``.

    ``targets``: names from :data:`caishen.sim.warmup.TARGETS` (default all).
    ``progress(line)`` is called before and after each target (e.g.
    ``print``).  Marks each target so that the first-use warning
    (:func:`caishen.sim.warmup.first_use`) stays quiet afterwards.  Raises
    ``ValueError`` for an unknown target.
    """
    import sys
    import time

    from caishen.sim import warmup as W

    targets = W.TARGETS if targets is None else (targets,) if isinstance(targets, str) else tuple(targets)
    for t in targets:
        W.check_target(t)
    work, took = _workloads(), {}
    for t in targets:
        if progress:
            progress(f"kernels: {t} ...")
        t0 = time.perf_counter()
        W.announce(t)  # no first-use warning inside the warmup itself
        # with progress: "kernel N of M" while it compiles (a bar on a terminal, a line every 20 s on a pipe)
        bar = W._KernelBar(f"caishen warmup {t}", sys.stderr) if progress else None
        with W.CompileWatch(on_kernel=bar and bar.step, on_idle=bar and bar.clear) as w:  # compiled, or cached
            try:
                work[t]()
            finally:
                if bar is not None:
                    bar.close()
        if w.kernels:
            W._record_estimate(f"caishen warmup {t}", w.kernels, w.seconds)
        took[t] = time.perf_counter() - t0
        W.set_mark(t)
        if progress:
            what = f"compiled {w.kernels} kernel(s)" if w.kernels else "loaded from the cache"
            progress(f"kernels: {t} {what} in {took[t]:.1f} s")
    return took


def _one(target: str) -> dict[str, float]:
    """A worker process's warmup of one target (:func:`warmup_parallel`)."""
    return warmup((target,))


def warmup_parallel(targets, workers: int, progress=None) -> dict[str, float]:
    """:func:`warmup` of ``targets`` with up to ``workers`` targets compiling at once, each in a fresh
    process (numba compiles one kernel at a time per process) into the one shared cache; the largest
    targets first.  ``progress(line)`` when each target is done.  ``{target: seconds}``."""
    import concurrent.futures
    import multiprocessing

    from caishen.sim import warmup as W

    targets = W.TARGETS if targets is None else tuple(targets)
    for t in targets:
        W.check_target(t)
    order = sorted(targets, key=lambda t: -W.COLD_SECONDS[t])
    took = {}
    with concurrent.futures.ProcessPoolExecutor(min(workers, len(order)),
                                                mp_context=multiprocessing.get_context("spawn")) as pool:
        jobs = {pool.submit(_one, t): t for t in order}
        for job in concurrent.futures.as_completed(jobs):
            took.update(job.result())
            if progress:
                progress(f"kernels: {jobs[job]} ready in {took[jobs[job]]:.1f} s")
    return took


def run(args) -> int:
    from caishen.cli import common
    from caishen.sim.warmup import cache_dir

    if not 1 <= args.workers <= common.MAX_WORKERS:
        raise ValueError(f"--workers {args.workers}: must be in 1..{common.MAX_WORKERS}")
    if args.workers == 1:
        took = warmup(args.targets or None, progress=print)
    else:
        took = warmup_parallel(args.targets or None, args.workers, progress=print)
    print(f"ready in {sum(took.values()):.1f} s of compiling; numba cache: {cache_dir()}")
    return 0
