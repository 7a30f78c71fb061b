"""Peak memory of ``caishen report`` on runs of 10^6 .. 10^8 hands (issue 15 item 1).

A real base run (``--base-hands`` Kaihua hands of self-play, mixed policies,
chunks of ``--chunk-size``) is played once into ``WORK/base``; a run of N
hands is then *made of repeated real chunks*: ``WORK/run-N/run.json`` says
``games = N``, and chunk ``i`` holds the rows of base chunk ``i mod k`` with
its own ``chunk`` / ``hand_id`` columns and identity (every chunk file names
its run, seed and chunk, :mod:`caishen.sim.selfplay.manifest`, so a file cannot stand
for another chunk: each is written, ~1 MB per 10^4 hands), committed with
its manifest line, so ``caishen report`` verifies and streams N real rows.  Each
report runs in a child process under ``/usr/bin/time -v`` (its maximum
resident set size) or, where that is missing, ``resource.getrusage``::

    python benchmarks/bench_summary_scale.py --work /tmp/scale-bench --sizes 1e6 1e7 1e8
    python benchmarks/bench_summary_scale.py --target summary ...   # summarize_run alone

prints one line per size: hands, chunk files, peak RSS (MB), seconds, and
the hands/s of the summary.  The base run is reused when present and
complete, even if the sources changed since (its rows are only the input
of the summary; ``runner.source_digest`` would refuse to resume it).
"""

from __future__ import annotations

import argparse
import os
import resource
import shutil
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))


def base_run(work: Path, hands: int, chunk_size: int, workers: int):
    from caishen.sim.selfplay import rundir, runner

    cfg = runner.make_config("kaihua", hands, 2024, policies="greedy,greedy,always,never", chunk_size=chunk_size)
    out = work / "base"
    if (out / "run.json").exists():  # a finished base of the same size is reused even if the code changed since
        from caishen.sim.selfplay import manifest

        meta = rundir.read_run_json(out)
        if (meta.get("games"), meta.get("chunk_size")) == (hands, chunk_size) and manifest.verify(out).complete:
            return out, cfg
    t = time.perf_counter()
    res = runner.run(cfg, out, workers=workers, progress=False)
    if res.chunks_run:
        print(f"base run: {hands} hands in {cfg.n_chunks} chunks, {time.perf_counter() - t:.0f} s", flush=True)
    return out, cfg


def repeated_run(work: Path, base: Path, cfg, games: int) -> Path:
    """A run directory of ``games`` hands whose chunk ``i`` holds base chunk ``i mod k``'s rows (renumbered)."""
    import numpy as np
    import pyarrow as pa
    import pyarrow.parquet as pq

    from caishen.sim.selfplay import manifest, records, rundir
    from caishen.sim import safeio

    out = work / f"run-{games}"
    if out.exists():
        shutil.rmtree(out)
    (out / records.CHUNKS_DIR).mkdir(parents=True)
    meta = rundir.read_run_json(base)
    n_chunks = -(-games // cfg.chunk_size)
    if games % cfg.chunk_size:
        raise SystemExit("sizes must be multiples of the chunk size")
    meta.update(games=games, n_chunks=n_chunks)
    safeio.write_json(out / "run.json", meta)
    lay = rundir.layout(rundir.read_run_json(out))
    k = cfg.n_chunks
    tables = [pq.read_table(records.chunk_path(base, j)) for j in range(k)]
    for i in range(n_chunks):
        t = tables[i % k]
        t = t.set_column(t.schema.get_field_index("chunk"), "chunk", pa.array(np.full(t.num_rows, i, np.int32)))
        hand_id = i * np.int64(cfg.chunk_size) + np.arange(t.num_rows, dtype=np.int64)
        t = t.set_column(t.schema.get_field_index("hand_id"), "hand_id", pa.array(hand_id))
        manifest.commit_chunk(out, i, t, lay)
    return out


#: what the child process runs on the run directory (``--target``)
SUMMARY_ONLY = ("from caishen.sim import summary; import sys; "
                "rows, defs, meta, done = summary.summarize_run(sys.argv[1]); "
                "print(f'finished chunks: {done} of {meta[\"n_chunks\"]}'); "
                "print(rows[rows.metric == 'independent units'].to_string(index=False))")


def measure(run_dir: Path, target: str = "report") -> tuple[float, float, str]:
    """(peak RSS in MB, seconds, stdout) of ``caishen report run_dir`` (``target="report"``) or of
    :func:`caishen.sim.analysis.summary.summarize_run` alone (``"summary"``) in a child process."""
    if target == "summary":
        cmd = [sys.executable, "-c", SUMMARY_ONLY, str(run_dir)]
    else:
        cmd = [sys.executable, "-m", "caishen", "report", str(run_dir)]
    env = dict(os.environ, PYTHONPATH=str(ROOT))
    t = time.perf_counter()
    if Path("/usr/bin/time").exists():
        p = subprocess.run(["/usr/bin/time", "-v", *cmd], capture_output=True, text=True, env=env)
        secs = time.perf_counter() - t
        rss = next(int(x.split(":")[1]) for x in p.stderr.splitlines() if "Maximum resident set size" in x)
        return rss / 1024, secs, p.stdout
    p = subprocess.run(cmd, capture_output=True, text=True, env=env)
    secs = time.perf_counter() - t
    return resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024, secs, p.stdout


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--work", default="/tmp/caishen-summary-bench", help="working directory (base run and links)")
    ap.add_argument("--base-hands", type=int, default=200_000, help="real hands played once (default 200,000)")
    ap.add_argument("--chunk-size", type=int, default=10_000)
    ap.add_argument("--workers", type=int, default=2)
    ap.add_argument("--sizes", nargs="+", type=float, default=[1e6, 1e7, 1e8], help="hands per measured run")
    ap.add_argument("--target", choices=["report", "summary"], default="report",
                    help="measure `caishen report` (summary, figures and tables) or the streaming summary alone "
                         "(summary.summarize_run)")
    a = ap.parse_args(argv)
    work = Path(a.work)
    work.mkdir(parents=True, exist_ok=True)
    base, cfg = base_run(work, a.base_hands, a.chunk_size, a.workers)
    size = sum(p.stat().st_size for p in (base / "chunks").glob("*.parquet"))
    print(f"base: {cfg.games} real hands, {cfg.n_chunks} chunk files, {size / cfg.games:.1f} bytes/hand on disk")
    print(f"{'hands':>12} {'chunks':>7} {'peak RSS MB':>12} {'seconds':>8} {'hands/s':>12}")
    for n in a.sizes:
        n = int(n)
        run_dir = repeated_run(work, base, cfg, n)
        rss, secs, out = measure(run_dir, a.target)
        if f"finished chunks: {n // cfg.chunk_size} of {n // cfg.chunk_size}" not in out:
            raise SystemExit(f"report of {run_dir} did not summarize every chunk:\n{out[:2000]}")
        print(f"{n:>12} {n // cfg.chunk_size:>7} {rss:>12.0f} {secs:>8.1f} {n / secs:>12.0f}", flush=True)
        shutil.rmtree(run_dir)
    return 0


if __name__ == "__main__":
    sys.exit(main())
