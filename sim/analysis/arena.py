"""Duplicate-deal matches between two to four policies (``caishen match``).

Every wall is played once per distinct *seating*: the policies fill the
four seats by rotation (two policies ``A B A B``, three ``A B C A``, four
``A B C D``) and each seating is a rotation of that order by 0..3 seats.
Rotations that give the same seating are played once (``A B A B`` has two:
``A B A B`` and ``B A B A``).  So on every wall each *slot* of the filled
order sits in every seat exactly once, and a policy sits in every seat as
often as it has slots (once each with two or four policies; with three the
first policy twice, the others once).  The same wall means the same tiles
and the same dealer in every seating (``caishen.sim.selfplay.batch.play_batch(wall_seed=...)``):
what differs between the seatings is only who plays which seat.

The match runs through :mod:`caishen.sim.selfplay.runner` (chunks, worker processes or Ray,
resume, Parquet): chunk function ``caishen.sim.analysis.arena:chunk_P`` for ``P`` policies,
one chunk = ``chunk_walls`` walls x the seatings, rows wall-major (row
``w * n_seatings + r`` of a chunk is wall ``w`` in seating ``r``, so the
global wall of a row is ``hand_id // n_seatings``).  The chunk's
``seed_entropy`` (from ``SeedSequence(seed)``, as every run) is the wall
seed of its walls; the bots' streams get other seeds derived from it.
Columns added to the engine's: ``wall`` (index in the chunk), ``seating``,
``wall_seed`` and ``policy_0..3`` (the index in the policy list of the
policy in each seat).  The policies are recorded in run.json as the filled
four-seat order (``policies``) and the chunk function names ``P``.

Results (:func:`summarize_match`): per policy, points per hand averaged
over its seats of each wall first (one value per wall: the independent
unit), then the mean and 95% CI across walls (Student-t; :class:`caishen.sim.analysis.intervals.ClusterSums`
with one cluster per wall, streamed over the chunks);
win rate (the seat won, several winners of one discard included), deal-in
rate (the seat was the discarder of a discard win or the robbed seat of a
robbed kong: it paid, K-8.3 / J-6.5), 飘 rate (the seat discarded a 财神
at least once, K-9.1; with a joker only); and every pairwise difference with its
paired CI over walls (the t interval of the per-wall differences).
"""

from __future__ import annotations

import os
from pathlib import Path

import numpy as np

from caishen.sim.selfplay import rundir, runner

#: walls per chunk by default
DEFAULT_CHUNK_WALLS = 1000
MIN_POLICIES = 2
MAX_POLICIES = 4
N_SEATS = 4
#: the match summary files
SUMMARY_JSON = "match.json"
SUMMARY_CSV = "match.csv"


# ---------------------------------------------------------------------------
# the schedule
# ---------------------------------------------------------------------------
def fill_seats(n_policies: int) -> tuple[int, int, int, int]:
    """The policy index of each of the four slots: ``(0, 1, 0, 1)``, ``(0, 1, 2, 0)``, ``(0, 1, 2, 3)``."""
    if not MIN_POLICIES <= n_policies <= MAX_POLICIES:
        raise ValueError(f"a match needs {MIN_POLICIES} to {MAX_POLICIES} policies, got {n_policies}")
    return tuple(i % n_policies for i in range(N_SEATS))


def seatings(n_policies: int) -> list[tuple[int, ...]]:
    """The distinct seatings of ``n_policies`` policies: ``seating[s]`` is the policy in seat ``s``.

    Rotation ``r`` puts slot ``(s - r) % 4`` of :func:`fill_seats` in seat
    ``s``; rotations giving the same seating are listed once, in order of ``r``.
    """
    slots = fill_seats(n_policies)
    out: list[tuple[int, ...]] = []
    for r in range(N_SEATS):
        seat = tuple(slots[(s - r) % N_SEATS] for s in range(N_SEATS))
        if seat not in out:
            out.append(seat)
    return out


def check_policies(policies, rules: str, options: dict | None) -> list[str]:
    """The policy specs of a match as a list of 2..4 strings, each checked against ``rules``.

    ``policies``: ``"greedy,mc:16"`` or a sequence.  Raises ``ValueError``
    naming fewer than two or more than four policies, an unknown spec, a bad
    parameter, a bad weights file or a 飘 policy on a rule set without a 财神.
    """
    from caishen.sim import engine
    from caishen.sim.bots.registry import bot_table, normalize
    from caishen.sim.rules.options import short_repr

    if isinstance(policies, str):
        specs = [p.strip() for p in policies.split(",")]
    else:
        try:
            specs = [str(p).strip() for p in policies]
        except TypeError:
            raise ValueError(f"policies {short_repr(policies)}: give 2 to 4 comma-separated specs") from None
    if not MIN_POLICIES <= len(specs) <= MAX_POLICIES:
        raise ValueError(f"a match needs {MIN_POLICIES} to {MAX_POLICIES} policies, got {len(specs)}: "
                         f"{short_repr(','.join(specs))}")
    name, r = engine.load_rules(rules, options)
    joker = int(engine.engine_params(name, r)[engine.EP_JOKER])
    for i, p in enumerate(specs):
        bot_table([p] * N_SEATS, name, joker, label=f"policy {i + 1} of the match")  # ValueError naming the spec
    return [normalize(p) for p in specs]


# ---------------------------------------------------------------------------
# the chunk functions (one per policy count: the runner's config names it)
# ---------------------------------------------------------------------------
def _bots_seed(seed_entropy: int, r: int) -> int:
    return int(np.random.SeedSequence([int(seed_entropy), 7919, r]).generate_state(1, np.uint32)[0])


def duplicate_chunk(n_policies: int, rules: str, options: dict, policies: tuple, seed_entropy: int,
                    n_hands: int) -> dict[str, np.ndarray]:
    """Play one chunk of a match: ``n_hands // n_seatings`` walls, each in every seating.

    ``policies``: the filled four-seat order (:func:`fill_seats`) as specs;
    ``seed_entropy``: the wall seed.  Returns the record columns, wall-major
    (module docstring), with the arena's columns added.
    """
    from caishen.sim.selfplay.batch import play_batch

    seats = seatings(n_policies)
    slots = fill_seats(n_policies)
    names = [None] * n_policies
    for i, p in zip(slots, policies):
        names[i] = p
    n_s = len(seats)
    if n_hands % n_s:
        raise ValueError(f"a chunk of {n_hands} hands is not a whole number of walls x {n_s} seatings")
    n_walls = n_hands // n_s
    parts = []
    for r, seat in enumerate(seats):
        cols = play_batch(n_walls, _bots_seed(seed_entropy, r), rules=rules, options=options,
                          policies=[names[i] for i in seat], wall_seed=int(seed_entropy))
        parts.append(cols)
    out: dict[str, np.ndarray] = {}
    for c in parts[0]:
        stacked = np.stack([p[c] for p in parts], axis=1)  # [wall, seating]
        out[c] = stacked.reshape(n_walls * n_s)
    out["hand"] = np.arange(n_walls * n_s, dtype=np.int64)
    out["wall"] = np.repeat(np.arange(n_walls, dtype=np.int64), n_s)
    out["seating"] = np.tile(np.arange(n_s, dtype=np.int8), n_walls)
    out["wall_seed"] = np.full(n_walls * n_s, int(seed_entropy), np.int64)
    for s in range(N_SEATS):
        out[f"policy_{s}"] = np.tile(np.array([seat[s] for seat in seats], np.int8), n_walls)
    return out


def chunk_2(rules, options, policies, seed_entropy, n_hands):
    """:func:`duplicate_chunk` of a two-policy match."""
    return duplicate_chunk(2, rules, options, policies, seed_entropy, n_hands)


def chunk_3(rules, options, policies, seed_entropy, n_hands):
    """:func:`duplicate_chunk` of a three-policy match."""
    return duplicate_chunk(3, rules, options, policies, seed_entropy, n_hands)


def chunk_4(rules, options, policies, seed_entropy, n_hands):
    """:func:`duplicate_chunk` of a four-policy match."""
    return duplicate_chunk(4, rules, options, policies, seed_entropy, n_hands)


CHUNK_FNS = {2: chunk_2, 3: chunk_3, 4: chunk_4}


# ---------------------------------------------------------------------------
# running a match
# ---------------------------------------------------------------------------
def make_config(rules: str, policies, walls: int, seed: int, options: dict | None = None,
                chunk_walls: int = DEFAULT_CHUNK_WALLS) -> runner.RunConfig:
    """The runner configuration of a match (``games`` = walls x seatings).

    Raises ``ValueError`` naming a bad rule set, option, policy list, wall
    count, chunk size or seed.
    """
    specs = check_policies(policies, rules, options)
    for name, v, lo in (("walls", walls, 1), ("chunk_walls", chunk_walls, 1)):
        if isinstance(v, bool) or not isinstance(v, (int, np.integer)) or v < lo:
            raise ValueError(f"{name} {v!r}: must be a positive integer")
    opts = runner.resolve_options(rules, options)
    n_s = len(seatings(len(specs)))
    filled = tuple(specs[i] for i in fill_seats(len(specs)))
    fn = CHUNK_FNS[len(specs)]
    return runner.RunConfig(rules, opts, filled, seed, int(walls) * n_s, int(chunk_walls) * n_s,
                            f"{fn.__module__}:{fn.__qualname__}")


def n_policies_of(config: runner.RunConfig | dict) -> int:
    """How many policies a match configuration (or its run.json) plays: from its chunk function."""
    fn = config.chunk_fn if isinstance(config, runner.RunConfig) else config.get("chunk_fn", "")
    mod, _, name = str(fn).partition(":")
    if mod != __name__ or not name.startswith("chunk_") or name[6:] not in ("2", "3", "4"):
        raise ValueError(f"{fn!r} is not a match's chunk function (caishen.sim.analysis.arena:chunk_2/3/4)")
    return int(name[6:])


def play_match(rules: str, policies, walls: int, seed: int, out: str | os.PathLike, *,
               options: dict | None = None, chunk_walls: int = DEFAULT_CHUNK_WALLS, workers: int | None = None,
               backend: str = "local", ray_address: str | None = None, progress: bool = True):
    """Play (or resume) a match into ``out`` and return ``(RunResult, summary)``.

    The summary is :func:`summarize_match` of the finished run, also written
    to ``out/match.json`` and ``out/match.csv``.  Raises ``ValueError`` for
    bad arguments or another run in ``out``.
    """
    config = make_config(rules, policies, walls, seed, options, chunk_walls)
    fn = CHUNK_FNS[n_policies_of(config)]
    res = runner.run(config, out, workers=workers, backend=backend, ray_address=ray_address, progress=progress,
                     chunk_fn=fn)
    summary = summarize_match(out)
    save_summary(out, summary)
    return res, summary


# ---------------------------------------------------------------------------
# results
# ---------------------------------------------------------------------------
def _policy_names(filled: list[str], n: int) -> list[str]:
    names = [None] * n
    for i, p in zip(fill_seats(n), filled):
        names[i] = p
    return names


def wall_values(cols: dict, n_policies: int, n_seatings: int) -> dict[str, np.ndarray]:
    """Per-wall statistics of each policy from rows of a match, in wall-major order (complete walls only).

    ``cols``: column name -> array (``hand_id``, ``winners_mask``,
    ``win_type``, ``discarder``, ``score_0..3``, ``policy_0..3`` and, with
    飘, ``piao_0..3``).  Returns ``{"points", "win", "deal_in", "piao"}``,
    each ``float64[n_walls, n_policies]``: the policy's mean over its
    seat-hands of the wall (``piao`` zeros when the rule set has no 飘
    columns), and ``"walls": int64[n_walls]`` (global wall indices).
    """
    wall = np.asarray(cols["hand_id"]) // n_seatings
    order = np.argsort(wall, kind="stable")
    wall = wall[order]
    uniq, count = np.unique(wall, return_counts=True)
    full = count == n_seatings
    n_rows = len(wall)
    pol = np.stack([np.asarray(cols[f"policy_{s}"])[order] for s in range(N_SEATS)], 1).astype(np.int64)
    score = np.stack([np.asarray(cols[f"score_{s}"])[order] for s in range(N_SEATS)], 1).astype(np.float64)
    mask = np.asarray(cols["winners_mask"])[order].astype(np.int64)
    won = np.stack([(mask >> s) & 1 for s in range(N_SEATS)], 1).astype(np.float64)
    wt = np.asarray(cols["win_type"])[order]
    disc = np.asarray(cols["discarder"])[order]
    dealt = np.stack([((disc == s) & (wt >= 1)) for s in range(N_SEATS)], 1).astype(np.float64)
    if "piao_0" in cols:
        piao = np.stack([np.asarray(cols[f"piao_{s}"])[order] > 0 for s in range(N_SEATS)], 1).astype(np.float64)
    else:
        piao = np.zeros((n_rows, N_SEATS))
    row_wall = np.repeat(np.arange(len(uniq)), count)
    out = {}
    for key, val in (("points", score), ("win", won), ("deal_in", dealt), ("piao", piao)):
        sums = np.zeros((len(uniq), n_policies))
        cnt = np.zeros((len(uniq), n_policies))
        for s in range(N_SEATS):
            np.add.at(sums, (row_wall, pol[:, s]), val[:, s])
            np.add.at(cnt, (row_wall, pol[:, s]), 1.0)
        out[key] = (sums / np.maximum(cnt, 1.0))[full]
    out["walls"] = uniq[full]
    return out


def _wall_batches(files, columns: list[str], n_seatings: int, batch_size: int | None = None):
    """The rows of the chunk files as column dicts holding whole walls only (a wall's rows are
    contiguous: a chunk holds whole walls, rows wall-major); the last, unfinished wall of a batch waits
    for the next batch.  Memory: one record batch (:mod:`caishen.sim.selfplay.stream`)."""
    from caishen.sim.selfplay import stream

    carry = None
    for batch in stream.record_batches(files, columns, batch_size or stream.BATCH_SIZE):
        cols = {c: batch.column(c).to_numpy(zero_copy_only=False) for c in columns}
        if carry is not None:
            cols = {c: np.concatenate([carry[c], cols[c]]) for c in columns}
        wall = cols["hand_id"] // n_seatings
        if len(wall) == 0:
            continue
        keep = wall < wall[-1]  # the last wall may go on in the next batch
        carry = {c: v[~keep] for c, v in cols.items()}
        yield {c: v[keep] for c, v in cols.items()}
    if carry is not None:
        yield carry


def iter_wall_values(run_dir: str | os.PathLike, meta: dict | None = None, batch_size: int | None = None):
    """:func:`wall_values` of a match's verified chunks, batch by batch: yields ``(values, has_piao)``.

    ``meta``: the run's validated run.json (read when None).  Streamed as
    :func:`summarize_match` (memory: one record batch); damaged chunks are
    left out.  Raises ``ValueError`` if ``run_dir`` is not a match or has
    no verified chunk.
    """
    from caishen.sim.selfplay import stream

    meta = rundir.read_run_json(run_dir) if meta is None else meta
    n = n_policies_of(meta)
    n_s = len(seatings(n))
    files, _ = stream.verified_chunk_files(run_dir, meta)
    if not files:
        raise ValueError(f"{str(run_dir)!r} has no complete wall yet")
    has_piao = "piao_0" in set(stream.column_names(files))
    cols = ["hand_id", "winners_mask", "win_type", "discarder", *(f"score_{s}" for s in range(N_SEATS)),
            *(f"policy_{s}" for s in range(N_SEATS))]
    cols += [f"piao_{s}" for s in range(N_SEATS) if has_piao]
    for part in _wall_batches(files, cols, n_s, batch_size):
        yield wall_values(part, n, n_s), has_piao


def summarize_match(run_dir: str | os.PathLike, batch_size: int | None = None) -> dict:
    """The match table of a run directory (module docstring), as a JSON-ready dict.

    ``{"rules", "policies", "seed", "walls", "walls_done", "seatings",
    "policy_rows": [...], "pairs": [...]}``; each policy row has ``policy``,
    ``index``, ``points`` with ``lo``/``hi`` (95% CI over walls), ``win``,
    ``deal_in``, ``piao`` (None without 飘); each pair row ``a``, ``b``,
    ``diff``, ``lo``, ``hi`` (paired 95% CI of a - b over walls).  Streamed
    over the verified chunks (:mod:`caishen.sim.selfplay.stream`; damaged chunks are
    left out, as by ``caishen report``): memory does not grow with the
    number of walls (``batch_size``: rows per record batch, default
    :data:`caishen.sim.selfplay.stream.BATCH_SIZE`).  Raises ``ValueError`` if
    ``run_dir`` is not a match or has no complete wall.
    """
    from caishen.sim.analysis.intervals import ClusterSums

    meta = rundir.read_run_json(run_dir)
    n = n_policies_of(meta)
    n_s = len(seatings(n))
    names = _policy_names(list(meta["policies"]), n)
    has_piao = False
    pairs_ij = [(i, j) for i in range(n) for j in range(i + 1, n)]
    points, diffs = ClusterSums(n), ClusterSums(max(1, len(pairs_ij)))  # one cluster per wall
    rates = {k: np.zeros(n) for k in ("win", "deal_in", "piao")}
    n_walls = 0
    for v, has_piao in iter_wall_values(run_dir, meta, batch_size):
        w = len(v["walls"])
        if w == 0:
            continue
        n_walls += w
        points.add(v["points"])
        diffs.add(np.stack([v["points"][:, i] - v["points"][:, j] for i, j in pairs_ij], 1))
        for k in rates:
            rates[k] += v[k].sum(0)
    if n_walls == 0:
        raise ValueError(f"{str(run_dir)!r} has no complete wall yet")
    rows = []
    for i, (name, (m, lo, hi)) in enumerate(zip(names, points.ci())):
        rows.append({
            "policy": name, "index": i, "points": m, "lo": lo, "hi": hi,
            "win": float(rates["win"][i] / n_walls), "deal_in": float(rates["deal_in"][i] / n_walls),
            "piao": float(rates["piao"][i] / n_walls) if has_piao else None,
        })
    pairs = [{"a": names[i], "b": names[j], "ia": i, "ib": j, "diff": d, "lo": lo, "hi": hi}
             for (i, j), (d, lo, hi) in zip(pairs_ij, diffs.ci())]
    return {
        "rules": meta["rules"], "options": meta.get("options", {}), "policies": names, "seed": meta["seed"],
        "walls": meta["games"] // n_s, "walls_done": n_walls, "seatings": n_s,
        "policy_rows": rows, "pairs": pairs,
    }


def _fmt(x, spec=".3f") -> str:
    return "-" if x is None or (isinstance(x, float) and not np.isfinite(x)) else format(x, spec)


def format_summary(summary: dict, head: str = "") -> str:
    """The match table as text (per policy, then the pairwise differences)."""
    from caishen.sim.analysis.intervals import sd_from_ci

    rows = summary["policy_rows"]
    n = int(summary.get("walls_done", 0))
    w = max(8, *(len(f"{r['index']}:{r['policy']}") for r in rows))
    lines = [head] if head else []
    lines.append(f"{'policy':<{w}}  {'points/hand':>11}  {'95% CI (walls)':>19}  {'win':>6}  {'deal-in':>7}  "
                 f"{'飘':>6}  {'sd/wall':>7}")
    for r in rows:
        ci = f"[{_fmt(r['lo'])}, {_fmt(r['hi'])}]"
        piao = _fmt(r["piao"], ".3f")
        lines.append(f"{str(r['index']) + ':' + r['policy']:<{w}}  {_fmt(r['points']):>11}  {ci:>19}  "
                     f"{r['win']:>6.3f}  {r['deal_in']:>7.3f}  {piao:>6}  {_fmt(sd_from_ci(r['lo'], r['hi'], n)):>7}")
    lines.append("")
    lines.append("pairwise differences (points/hand, paired 95% CI over walls; sd/wall: the per-wall sd of the "
                 "difference, for `caishen power`):")
    for p in summary["pairs"]:
        sign = "excludes 0" if p["lo"] > 0 or p["hi"] < 0 else "covers 0"
        lines.append(f"  {p['ia']}:{p['a']} - {p['ib']}:{p['b']}: {_fmt(p['diff'])}  "
                     f"[{_fmt(p['lo'])}, {_fmt(p['hi'])}]  ({sign})  sd/wall {_fmt(sd_from_ci(p['lo'], p['hi'], n))}")
    return "\n".join(lines)


def save_summary(run_dir: str | os.PathLike, summary: dict) -> None:
    """Write ``match.json`` (strict JSON: an interval that does not exist is null) and ``match.csv`` (one
    row per policy) into ``run_dir``, each atomically (:func:`caishen.sim.safeio.atomic_write`)."""
    import pandas as pd

    from caishen.sim import safeio

    d = Path(run_dir)
    safeio.write_json(d / SUMMARY_JSON, summary)
    safeio.atomic_write(d / SUMMARY_CSV, pd.DataFrame(summary["policy_rows"]).to_csv(index=False))
