"""The soak: many hands of each rule set and policy mix under every invariant check (issue 15 item 4).

For each rule set and each policy mix (:data:`MIXES`) the soak plays
``--hands`` hands per rule set (split evenly over its mixes) in chunks of
``--chunk`` hands, on ``--workers`` processes, and checks

- **every step** (``caishen.sim.selfplay.batch.play_batch(check=True)``): tiles conserved
  (136 in wall, hands, melds and discards; no kind over 4), the legal mask
  non-empty and each legal action legal by an independent restatement of
  the rules, the bots' actions legal, hand sizes, the seat to act, scores
  summing to zero (K-8.5), the wall pointers above the reserve (K-3.4)
  (``caishen.sim.engine._check_state``);
- **every hand's record** (``caishen.sim.selfplay.records.check_chunk`` and
  :func:`check_records`): the contract's columns and dtypes, zero-sum scores
  (K-8.5), no points on a drawn hand (K-8.4), ``winner`` / ``win_type`` /
  ``winners_mask`` consistent, the dealer a seat;
- **a sample** of ``--sample`` hands per chunk, each played again one action
  at a time through :class:`caishen.sim.engine.Game` with the same bots and the same
  random stream (:func:`game_like_batch`): the record equals the batch
  kernel's, the game's event log replays (:func:`caishen.sim.engine.replay`) to the
  same record, and at every step ``check_state(observations=True)``: no
  seat's observation changes when the tiles hidden from it are dealt anew
  (hidden information).

Each violation is printed and logged with the seed that reproduces it::

    python -c "from caishen.sim.selfplay.batch import play_batch; play_batch(N, SEED, rules=R, policies=P, check=True)"

Resumable: every finished chunk appends one JSON line to ``OUT/soak.jsonl``
(rule set, mix, chunk, seed, hands, seconds, violations); a rerun with the
same arguments skips the chunks logged there.  Worker processes die with
the soak (``caishen.sim.selfplay.runner``'s parent watch).  Usage::

    python benchmarks/soak.py --hands 1000000 --out runs/soak           # both rule sets
    python benchmarks/soak.py --rules jiating --hands 10000000 --out runs/soak-j --workers 2

The last lines print, per rule set and mix, the hands checked, the
violations, and hands/s (per process and in total).  A small version runs in
the default tests (``tests/test_fuzz.py::test_soak_small_finds_no_violation``).
"""

from __future__ import annotations

import argparse
import concurrent.futures as cf
import json
import multiprocessing
import os
import sys
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

#: the policy mixes of each rule set (飘 policies only where there is a 财神)
MIXES = {
    "kaihua": ["random", "greedy", "greedy,greedy,always,never", "threshold:20,random,always,greedy"],
    "jiating": ["random", "greedy", "greedy,random,greedy,random"],
}


# ---------------------------------------------------------------------------
# checks of one chunk (worker side)
# ---------------------------------------------------------------------------
def check_records(cols: dict, rules: str, n: int) -> list[str]:
    """Violations in a chunk's records: the contract and K-8.5 (``caishen.sim.selfplay.records.check_chunk``), K-8.4
    (a drawn hand pays nothing), and the outcome columns agreeing with each other."""
    from caishen.sim.selfplay import records

    try:
        records.check_chunk(cols, rules, n)
    except ValueError as e:
        return [f"records: {e}"]
    out = []
    scores = np.stack([cols[f"score_{s}"] for s in range(4)], axis=1).astype(np.int64)
    wt, winner, mask, dealer = (cols[c].astype(np.int64) for c in ("win_type", "winner", "winners_mask", "dealer"))
    drawn = wt == -1
    for what, bad in (
        ("a drawn hand (流局) moved points (K-8.4)", drawn & (np.abs(scores).sum(axis=1) != 0)),
        ("win_type, winner and winners_mask disagree", ((wt >= 0) != (winner >= 0)) | ((wt >= 0) != (mask > 0))),
        ("the winner is not in winners_mask", (winner >= 0) & (((mask >> np.maximum(winner, 0)) & 1) == 0)),
        ("win_type out of -1..2", (wt < -1) | (wt > 2)),
        ("dealer out of 0..3", (dealer < 0) | (dealer > 3)),
    ):
        if bad.any():
            out.append(f"records: {what} in hand {int(np.flatnonzero(bad)[0])}")
    return out


def game_like_batch(rules: str, policies: str, seed: int, observations: bool = True):
    """Play the first hand of ``play_batch(1, seed, rules, policies=policies)`` through :class:`caishen.sim.engine.Game`.

    The wall and first dealer come from the same random stream as the batch
    kernel's (``caishen.sim.rng`` seeded with ``seed``: the dealer draw where the
    rule set's first dealer is random, then the shuffle), the stream then
    continues in the game's state for the random bots, and each seat's
    action is its policy kernel's (``caishen.sim.bots.policies``).  With
    ``observations``, ``check_state(game, observations=True)`` after every
    step.  Returns the finished :class:`~caishen.sim.engine.Game`.
    """
    from caishen.sim import engine as E
    from caishen.sim.bots.policies import POLICY_RANDOM, _choose_action, new_work
    from caishen.sim.bots.registry import code_table
    from caishen.sim.rng import _rng_below, _rng_seed

    g = E.Game(rules)
    st = E.new_state()[0]
    _rng_seed(st["rng"], seed)
    dealer = int(_rng_below(st["rng"], 4)) if g._ep.first_dealer_random else 0
    E._shuffle_wall(st)
    g.reset(wall=st["wall"].copy(), dealer=dealer)
    g.state["rng"][:] = st["rng"]
    table = code_table(policies)
    work = new_work()
    while not g.done:
        g.legal_mask()
        code, param = (int(x) for x in table[g.current_player])
        if code == POLICY_RANDOM:
            a = int(E._random_action(g.state))
        else:
            a = int(_choose_action(code, param, g.state, g._ep, g._rp, g._tabs, g.state["mask"], work))
        g.step(a)
        E.check_state(g, observations=observations)
    return g


def check_replay(rules: str, policies: str, seed: int) -> list[str]:
    """Violations of "replay equals record" for the hand of ``seed`` (see :func:`game_like_batch`)."""
    from caishen.sim import engine as E
    from caishen.sim.selfplay.batch import play_batch

    try:
        g = game_like_batch(rules, policies, seed)
    except (ValueError, RuntimeError) as e:
        return [f"step API: {e}"]
    batch = play_batch(1, seed, rules=rules, policies=policies, check=True)
    got = g.record
    out = []
    for col, v in batch.items():
        if col == "hand" or col.startswith("piao_chance"):
            continue
        want = str(v[0]) if v.dtype == object else int(v[0])
        if got.get(col) != want:
            out.append(f"replay: Game's record {col}={got.get(col)!r}, the batch kernel's {want!r}")
            break
    try:
        again = E.replay(g.log_lines())
    except ValueError as e:
        return out + [f"replay: {e}"]
    if again.record != got:
        out.append("replay: the event log replays to another record")
    return out


def soak_chunk(rules: str, policies: str, seed: int, n_hands: int, sample: int) -> dict:
    """Play and check one chunk: ``n_hands`` hands from ``seed``, and ``sample`` step-API replays.

    Returns ``{"hands", "seconds", "violations": [{"what", "reproduce"}]}``.
    """
    from caishen.sim.selfplay.batch import play_batch

    t0 = time.perf_counter()
    violations = []
    repro = (f"from caishen.sim.selfplay.batch import play_batch; play_batch({n_hands}, {seed}, rules={rules!r}, "
             f"policies={policies!r}, check=True)")
    try:
        cols = play_batch(n_hands, seed, rules=rules, policies=policies, check=True)
    except RuntimeError as e:  # the checker's violation names the hand and the seed
        violations.append({"what": str(e), "reproduce": repro})
    else:
        violations += [{"what": v, "reproduce": repro} for v in check_records(cols, rules, n_hands)]
    rng = np.random.default_rng(seed)
    for s in rng.integers(0, 2**32, sample):
        for v in check_replay(rules, policies, int(s)):
            violations.append({"what": v, "reproduce": "from benchmarks.soak import check_replay; "
                               f"check_replay({rules!r}, {policies!r}, {int(s)})"})
    return {"hands": n_hands, "seconds": time.perf_counter() - t0, "violations": violations}


# ---------------------------------------------------------------------------
# the plan, the log, the pool
# ---------------------------------------------------------------------------
def plan(rules_list, hands: int, chunk: int, seed: int) -> list[dict]:
    """The chunks to play: per rule set ``hands`` split over its mixes, chunk seeds from SeedSequence."""
    jobs = []
    for ri, rules in enumerate(rules_list):
        mixes = MIXES[rules]
        per_mix = -(-hands // len(mixes))
        for mi, mix in enumerate(mixes):
            n_chunks = -(-per_mix // chunk)
            seeds = [int(c.generate_state(1, np.uint32)[0])
                     for c in np.random.SeedSequence([seed, ri, mi]).spawn(n_chunks)]
            for c in range(n_chunks):
                jobs.append({"rules": rules, "mix": mix, "chunk": c, "seed": seeds[c],
                             "hands": min(chunk, per_mix - c * chunk)})
    return jobs


def read_log(path: Path) -> list[dict]:
    if not path.exists():
        return []
    out = []
    for line in path.read_text().splitlines():
        try:
            out.append(json.loads(line))
        except ValueError:
            continue  # a line torn by a kill
    return out


def _key(j: dict) -> tuple:
    return j["rules"], j["mix"], j["chunk"], j["seed"], j["hands"]


def soak(rules_list, hands: int, out: Path, chunk: int = 10_000, workers: int = 1, sample: int = 2,
         seed: int = 0, quiet: bool = False) -> list[dict]:
    """Run (or resume) the soak; returns the log entries of all its chunks."""
    from caishen.sim.selfplay.runner import _worker_init

    for r in rules_list:
        if r not in MIXES:
            raise ValueError(f"unknown rule set {r!r}; the soak knows {', '.join(MIXES)}")
    out.mkdir(parents=True, exist_ok=True)
    log_path = out / "soak.jsonl"
    jobs = plan(rules_list, hands, chunk, seed)
    done = {_key(e) for e in read_log(log_path)}
    todo = [j for j in jobs if _key(j) not in done]
    if not quiet:
        print(f"soak: {len(jobs)} chunks, {len(jobs) - len(todo)} already logged in {log_path}", flush=True)

    def log(job, res):
        entry = {**job, "seconds": round(res["seconds"], 3), "violations": res["violations"]}
        with open(log_path, "a") as f:
            f.write(json.dumps(entry, ensure_ascii=False) + "\n")
            f.flush()
        if not quiet:
            for v in res["violations"]:
                print(f"VIOLATION {job['rules']} {job['mix']} chunk {job['chunk']} seed {job['seed']}: {v['what']}\n"
                      f"  reproduce: {v['reproduce']}", flush=True)

    t0 = time.perf_counter()
    if workers <= 1:
        for j in todo:
            log(j, soak_chunk(j["rules"], j["mix"], j["seed"], j["hands"], sample))
    else:
        ctx = multiprocessing.get_context("spawn")
        with cf.ProcessPoolExecutor(workers, mp_context=ctx, initializer=_worker_init,
                                    initargs=(os.getpid(),)) as ex:
            futures = {ex.submit(soak_chunk, j["rules"], j["mix"], j["seed"], j["hands"], sample): j for j in todo}
            for k, f in enumerate(cf.as_completed(futures)):
                log(futures[f], f.result())
                if not quiet and (k + 1) % max(1, len(todo) // 20) == 0:
                    print(f"  {k + 1}/{len(todo)} chunks, {time.perf_counter() - t0:.0f} s", flush=True)
    wall = time.perf_counter() - t0
    entries = [e for e in read_log(log_path) if _key(e) in {_key(j) for j in jobs}]
    if not quiet:
        report(entries, wall if todo else None, len(todo))
    return entries


def report(entries: list[dict], wall: float | None, chunks_now: int) -> None:
    """Per rule set and mix: hands, violations, hands/s per process; total hands/s of this session."""
    print(f"{'rules':8} {'mix':36} {'hands':>10} {'violations':>10} {'hands/s/proc':>12}")
    groups: dict[tuple, list] = {}
    for e in entries:
        groups.setdefault((e["rules"], e["mix"]), []).append(e)
    for (rules, mix), es in groups.items():
        hands = sum(e["hands"] for e in es)
        secs = sum(e["seconds"] for e in es)
        nv = sum(len(e["violations"]) for e in es)
        print(f"{rules:8} {mix:36} {hands:>10} {nv:>10} {hands / max(secs, 1e-9):>12.0f}")
    total = sum(e["hands"] for e in entries)
    nv = sum(len(e["violations"]) for e in entries)
    line = f"total: {total} hands checked, {nv} violation(s)"
    if wall:
        now = sum(e["hands"] for e in entries[-chunks_now:]) if chunks_now else 0
        line += f"; this session {now} hands in {wall:.0f} s = {now / wall:.0f} hands/s"
    print(line, flush=True)


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--rules", nargs="+", default=list(MIXES), help="rule sets (default: all)")
    ap.add_argument("--hands", type=int, default=100_000, help="hands per rule set, split over its mixes")
    ap.add_argument("--out", required=True, help="directory of the log (soak.jsonl; reused to resume)")
    ap.add_argument("--chunk", type=int, default=10_000, help="hands per chunk (default 10,000)")
    ap.add_argument("--workers", type=int, default=1, help="processes (default 1)")
    ap.add_argument("--sample", type=int, default=2, help="step-API replays (with hidden-information checks) per chunk")
    ap.add_argument("--seed", type=int, default=0)
    a = ap.parse_args(argv)
    for name in ("hands", "chunk", "workers"):
        if getattr(a, name) < 1:
            ap.error(f"--{name} {getattr(a, name)}: must be a positive integer")
    try:
        entries = soak(a.rules, a.hands, Path(a.out), a.chunk, a.workers, a.sample, a.seed)
    except ValueError as e:
        ap.error(str(e))
    return 1 if any(e["violations"] for e in entries) else 0


if __name__ == "__main__":
    sys.exit(main())
