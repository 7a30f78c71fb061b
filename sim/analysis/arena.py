"""Duplicate-deal matches between two to four policies (``caishen match``): the fair arena.

Every wall is played once per *seating* of a **schedule**; a seating says
which policy sits in each seat, and the same wall means the same tiles and
the same dealer in every seating (``caishen.sim.selfplay.batch.play_batch(wall_seed=...)``):
what differs between the seatings is only who plays which seat.  Why the
schedule matters: where a seat chows only from its 上家 (K-4.2), the seat
after a weak bot gains; with three or four policies, the rotations of one
order leave each policy always after the same neighbour, and two bots that
play identically differ (+0.48 points/hand on 5,000 walls, issue 43).

Schedules (:data:`SCHEDULES`; :func:`seatings` lists them, ``docs/arena.md``
shows why each is fair):

=================  ==========================================================
``all`` (default)  every order of the policies, each rotated to every seat:
                   2 policies ``A B A B`` and ``B A B A``; 3 policies the six
                   orders of ``P Q R P`` x 4 rotations (24 seatings, each
                   policy holds two slots in a third of them); 4 policies the
                   24 orders.  Any relabelling of the policies maps the set
                   of seatings onto itself, so no policy has a place the
                   others lack (identical bots differ by 0 in expectation,
                   and by exactly 0 on every wall when all play deterministically)
``1v3``            the last policy is the *field*; each other policy (a
                   challenger) sits alone against three copies of it, in each
                   of the four seats (Mortal's habit): 4 seatings per
                   challenger; the challengers meet only the field
``interleaved``    three policies ``A,B,F``: ``A F B F`` rotated (4 seatings):
                   each challenger has the field before and after it
``rotate``         the rotations of one order (``A B C A`` / ``A B C D``): the
                   old schedule, unfair with 3-4 policies (kept to read and
                   repeat old runs)
=================  ==========================================================

A schedule is a *base order* (:func:`fill_seats`, the policy index of each of
the four slots) and its seatings.  The match runs through
:mod:`caishen.sim.selfplay.runner` (chunks, worker processes or Ray, resume,
Parquet): its chunk function (:func:`chunk_name`, :data:`CHUNKS`) names the schedule and the
number of policies (``chunk_2``, ``chunk_all_3``, ``chunk_1v3_2``,
``chunk_interleaved_3``, ...; ``chunk_3`` / ``chunk_4`` are the rotations
of the runs made before the schedules, read as such); one chunk =
``chunk_walls`` walls x the seatings, rows wall-major (row ``w * n_seatings
+ r`` of a chunk is wall ``w`` in seating ``r``, so the global wall of a row
is ``hand_id // n_seatings``).  The chunk's ``seed_entropy`` (from
``SeedSequence(seed)``, as every run) is the wall seed of its walls; the
bots' streams get other seeds derived from it.  Columns added to the
engine's: ``wall`` (index in the chunk), ``seating``, ``wall_seed`` and
``policy_0..3`` (the index in the policy list of the policy in each seat).
The policies are recorded in run.json as the base order (``policies``).
Open seats (``python:``, ``exec:``; :mod:`caishen.sim.bots.registry`) play
like any bot, in one process (:func:`caishen.sim.bots.registry.seat_workers`).

Results (:func:`summarize_match`): per policy, points per hand averaged
over its seats of each wall first (one value per wall: the independent
unit), then the mean and 95% CI across walls (Student-t; :class:`caishen.sim.analysis.intervals.ClusterSums`
with one cluster per wall, streamed over the chunks);
win rate (the seat won, several winners of one discard included), deal-in
rate (the seat was the discarder of a discard win or the robbed seat of a
robbed kong: it paid, K-8.3 / J-6.5), 飘 rate (the seat discarded a 财神
at least once, K-9.1; with a joker only); and every pairwise difference with its
paired CI over walls (the t interval of the per-wall differences).  The
schedule and its seatings are printed and stored in ``match.json``.
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
#: the schedules (module docstring) and the numbers of policies each takes
SCHEDULES = {"all": (2, 3, 4), "1v3": (2, 3, 4), "interleaved": (3,), "rotate": (2, 3, 4)}
DEFAULT_SCHEDULE = "all"
#: one line per schedule, for messages and ``caishen match --help``
SCHEDULE_ABOUT = {
    "all": "every order of the policies, each rotated to every seat; fair",
    "1v3": "each policy but the last alone against three copies of the last (the field), in every seat; "
           "fair between the challengers",
    "interleaved": "A,B,F as A F B F rotated: each challenger between two field seats; fair between A and B",
    "rotate": "the rotations of one order only (the old schedule): biased with 3 or 4 policies",
}
#: the match summary files
SUMMARY_JSON = "match.json"
SUMMARY_CSV = "match.csv"


# ---------------------------------------------------------------------------
# the schedule
# ---------------------------------------------------------------------------
def check_schedule(schedule: str, n_policies: int) -> str:
    """``schedule`` if it plays ``n_policies`` policies, else ``ValueError`` naming both."""
    if schedule not in SCHEDULES:
        raise ValueError(f"schedule {schedule!r}: choose one of {', '.join(SCHEDULES)}")
    if n_policies not in SCHEDULES[schedule]:
        want = " or ".join(map(str, SCHEDULES[schedule]))
        raise ValueError(f"schedule {schedule!r} plays {want} policies, got {n_policies}")
    return schedule


def fill_seats(n_policies: int, schedule: str = "rotate") -> tuple[int, int, int, int]:
    """The base order of ``schedule``: the policy index of each of the four slots.

    ``rotate`` / ``all``: ``(0, 1, 0, 1)``, ``(0, 1, 2, 0)``, ``(0, 1, 2, 3)``; ``1v3``: the last policy
    fills the slots the others leave, ``(0, 1, 1, 1)``, ``(0, 1, 2, 2)``, ``(0, 1, 2, 3)``;
    ``interleaved``: ``(0, 2, 1, 2)``.  Raises ``ValueError`` for a count the schedule does not play.
    """
    if not MIN_POLICIES <= n_policies <= MAX_POLICIES:
        raise ValueError(f"a match needs {MIN_POLICIES} to {MAX_POLICIES} policies, got {n_policies}")
    check_schedule(schedule, n_policies)
    if schedule == "1v3":
        return tuple(min(i, n_policies - 1) for i in range(N_SEATS))
    if schedule == "interleaved":
        return (0, 2, 1, 2)
    return tuple(i % n_policies for i in range(N_SEATS))


def _rotations(order: tuple) -> list[tuple[int, ...]]:
    """Rotation ``r`` puts slot ``(s - r) % 4`` of ``order`` in seat ``s``; r = 0..3."""
    return [tuple(order[(s - r) % N_SEATS] for s in range(N_SEATS)) for r in range(N_SEATS)]


def seatings(n_policies: int, schedule: str = "rotate") -> list[tuple[int, ...]]:
    """The distinct seatings of ``schedule`` for ``n_policies`` policies: ``seating[s]`` is the policy in seat ``s``.

    ``rotate``: the rotations of :func:`fill_seats`, in order of the rotation;
    ``all``: those of every relabelling of the base order, relabellings in
    lexicographic order (2 policies: the same two as ``rotate``);
    ``1v3``: challenger ``c`` in seat ``s`` (``c`` major), the field elsewhere;
    ``interleaved``: the rotations of ``A F B F``.  A seating met twice is listed once.
    """
    import itertools

    base = fill_seats(n_policies, schedule)
    if schedule == "all":
        cands = [s for perm in itertools.permutations(range(n_policies))
                 for s in _rotations(tuple(perm[i] for i in base))]
    elif schedule == "1v3":
        cands = [tuple(c if t == s else n_policies - 1 for t in range(N_SEATS))
                 for c in range(n_policies - 1) for s in range(N_SEATS)]
    else:
        cands = _rotations(base)
    out: list[tuple[int, ...]] = []
    for seat in cands:
        if seat not in out:
            out.append(seat)
    return out


def describe_schedule(schedule: str, n_policies: int) -> str:
    """``"all: 24 seatings per wall (every order ...); the policy (its number) in seats 0-3 of each seating:
    0120 1201 ..."``: the schedule in one line."""
    seats = seatings(n_policies, schedule)
    return (f"{schedule}: {len(seats)} seatings per wall ({SCHEDULE_ABOUT[schedule]}); the policy (its number "
            "below) in seats 0-3 of each seating: " + " ".join("".join(map(str, seat)) for seat in seats))


def check_policies(policies, rules: str, options: dict | None) -> list[str]:
    """The policy specs of a match as a list of 2..4 strings, each checked against ``rules``.

    ``policies``: ``"greedy,mc:16"`` or a sequence.  Raises ``ValueError``
    naming fewer than two or more than four policies, an unknown spec, a bad
    parameter, a bad weights file, a 飘 policy on a rule set without a 财神
    or an open seat that cannot play (:func:`caishen.sim.bots.registry.check_seats`).
    """
    from caishen.sim import engine
    from caishen.sim.bots.registry import check_seats, normalize
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
    joker = int(engine.engine_params(name, r).joker)
    for i, p in enumerate(specs):
        check_seats(p, name, joker, label=f"policy {i + 1} of the match")  # ValueError naming the spec
    return [normalize(p) for p in specs]


# ---------------------------------------------------------------------------
# the chunk functions (one per schedule and policy count: the runner's config names it)
# ---------------------------------------------------------------------------
def _bots_seed(seed_entropy: int, r: int) -> int:
    return int(np.random.SeedSequence([int(seed_entropy), 7919, r]).generate_state(1, np.uint32)[0])


def duplicate_chunk(n_policies: int, rules: str, options: dict, policies: tuple, seed_entropy: int,
                    n_hands: int, schedule: str = "rotate") -> dict[str, np.ndarray]:
    """Play one chunk of a match: ``n_hands // n_seatings`` walls, each in every seating of ``schedule``.

    ``policies``: the base order (:func:`fill_seats`) as specs;
    ``seed_entropy``: the wall seed.  Returns the record columns, wall-major
    (module docstring), with the arena's columns added.
    """
    from caishen.sim.selfplay.batch import play_batch

    seats = seatings(n_policies, schedule)
    names = policy_names(policies, n_policies, schedule)
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


def chunk_name(schedule: str, n_policies: int) -> str:
    """The name of the chunk function of ``schedule`` with ``n_policies`` policies (module docstring)."""
    check_schedule(schedule, n_policies)
    if schedule == "rotate" or (schedule == "all" and n_policies == 2):  # two policies: one pair of seatings
        return f"chunk_{n_policies}"
    return f"chunk_{schedule}_{n_policies}"


def _make_chunk_fn(schedule: str, n: int):
    def chunk(rules, options, policies, seed_entropy, n_hands):
        return duplicate_chunk(n, rules, options, policies, seed_entropy, n_hands, schedule)

    chunk.__name__ = chunk.__qualname__ = chunk_name(schedule, n)
    chunk.__module__ = __name__
    chunk.__doc__ = f":func:`duplicate_chunk` of a {n}-policy match, schedule {schedule!r}."
    globals()[chunk.__name__] = chunk  # the runner's workers find it by its name (and pickle it by reference)
    return chunk


def _chunk_fns() -> dict:
    out = {}
    for sched, counts in SCHEDULES.items():
        for n in counts:
            name = chunk_name(sched, n)  # chunk_2 plays the rotations, which are every order of two policies
            out[(sched, n)] = globals().get(name) or _make_chunk_fn("rotate" if name[6:].isdigit() else sched, n)
    return out


#: every chunk function by ``(schedule, number of policies)``
CHUNKS = _chunk_fns()
#: the chunk function of the default schedule by number of policies (what :func:`make_config` picks by default)
CHUNK_FNS = {n: CHUNKS[(DEFAULT_SCHEDULE, n)] for n in SCHEDULES[DEFAULT_SCHEDULE]}


# ---------------------------------------------------------------------------
# running a match
# ---------------------------------------------------------------------------
def make_config(rules: str, policies, walls: int, seed: int, options: dict | None = None,
                chunk_walls: int = DEFAULT_CHUNK_WALLS, schedule: str = DEFAULT_SCHEDULE) -> runner.RunConfig:
    """The runner configuration of a match (``games`` = walls x seatings of ``schedule``).

    Raises ``ValueError`` naming a bad rule set, option, policy list, wall
    count, chunk size, seed, or a schedule that does not play this many policies.
    """
    specs = check_policies(policies, rules, options)
    check_schedule(schedule, len(specs))
    for name, v, lo in (("walls", walls, 1), ("chunk_walls", chunk_walls, 1)):
        if isinstance(v, bool) or not isinstance(v, (int, np.integer)) or v < lo:
            raise ValueError(f"{name} {v!r}: must be a positive integer")
    opts = runner.resolve_options(rules, options)
    n_s = len(seatings(len(specs), schedule))
    filled = tuple(specs[i] for i in fill_seats(len(specs), schedule))
    fn = CHUNKS[(schedule, len(specs))]
    return runner.RunConfig(rules, opts, filled, seed, int(walls) * n_s, int(chunk_walls) * n_s,
                            f"{fn.__module__}:{fn.__qualname__}")


def schedule_of(config: runner.RunConfig | dict) -> tuple[str, int]:
    """``(schedule, number of policies)`` of a match configuration (or its run.json), from its chunk function
    (``chunk_2`` is ``all``: two policies have one pair of seatings; ``chunk_3``/``chunk_4`` ``rotate``)."""
    fn = config.chunk_fn if isinstance(config, runner.RunConfig) else config.get("chunk_fn", "")
    mod, _, name = str(fn).partition(":")
    for (sched, n), f in CHUNKS.items():  # ("all", 2) comes before ("rotate", 2): chunk_2 reads as "all"
        if mod == __name__ and name == f.__name__:
            return sched, n
    raise ValueError(f"{fn!r} is not a match's chunk function ({__name__}:chunk_2, chunk_all_3, ...)")


def n_policies_of(config: runner.RunConfig | dict) -> int:
    """How many policies a match configuration (or its run.json) plays: from its chunk function."""
    return schedule_of(config)[1]


def play_match(rules: str, policies, walls: int, seed: int, out: str | os.PathLike, *,
               options: dict | None = None, chunk_walls: int = DEFAULT_CHUNK_WALLS, workers: int | None = None,
               backend: str = "local", ray_address: str | None = None, progress: bool = True,
               schedule: str = DEFAULT_SCHEDULE):
    """Play (or resume) a match into ``out`` and return ``(RunResult, summary)``.

    The summary is :func:`summarize_match` of the finished run, also written
    to ``out/match.json`` and ``out/match.csv``.  With an open seat the match
    plays in this process (``workers`` 1).  Raises ``ValueError`` for bad
    arguments or another run in ``out``.
    """
    from caishen.sim.bots.registry import seat_workers

    config = make_config(rules, policies, walls, seed, options, chunk_walls, schedule)
    fn = CHUNKS[schedule_of(config)]
    res = runner.run(config, out, workers=seat_workers(config.policies, workers), backend=backend,
                     ray_address=ray_address, progress=progress, chunk_fn=fn)
    summary = summarize_match(out)
    save_summary(out, summary)
    return res, summary


# ---------------------------------------------------------------------------
# results
# ---------------------------------------------------------------------------
def policy_names(filled, n: int, schedule: str = "rotate") -> list[str]:
    """The policy list of a match from its base order ``filled`` (4 specs, run.json's ``policies``)."""
    names = [None] * n
    for i, p in zip(fill_seats(n, schedule), filled):
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
    sched, n = schedule_of(meta)
    n_s = len(seatings(n, sched))
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

    ``{"rules", "policies", "seed", "walls", "walls_done", "schedule", "seatings", "seating_order",
    "policy_rows": [...], "pairs": [...]}`` (``seatings``: their number; ``seating_order``: the policy index
    in seats 0..3 of each, :func:`seatings`); each policy row has ``policy``,
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
    sched, n = schedule_of(meta)
    seats = seatings(n, sched)
    n_s = len(seats)
    names = policy_names(list(meta["policies"]), n, sched)
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
        "walls": meta["games"] // n_s, "walls_done": n_walls, "schedule": sched, "seatings": n_s,
        "seating_order": [list(seat) for seat in seats], "policy_rows": rows, "pairs": pairs,
    }


def _fmt(x, spec=".3f") -> str:
    return "-" if x is None or (isinstance(x, float) and not np.isfinite(x)) else format(x, spec)


#: the columns left for a policy's label in the match table's rows of 100 columns (the numbers take 68)
_LABEL_ROOM = 32


def format_summary(summary: dict, head: str = "") -> str:
    """The match table as text (per policy, then the pairwise differences), in lines of at most 100 columns
    where the policies' names allow: each policy by its number and its words
    (:func:`caishen.sim.bots.names.spec_words`: a 飘 table by its cells), the exact specs once on a line of
    their own where they differ."""
    from caishen.sim.analysis.intervals import sd_from_ci
    from caishen.sim.bots.names import exact_specs, spec_words
    from caishen.sim.termtext import wrap

    rows = summary["policy_rows"]
    n = int(summary.get("walls_done", 0))
    label = {r["index"]: f"{r['index']}:{spec_words(r['policy'])}" for r in rows}
    lines = [head] if head else []
    if summary.get("schedule") in SCHEDULES:
        lines += wrap("schedule " + describe_schedule(summary["schedule"], len(rows)), indent="    ")
    if max(len(x) for x in label.values()) > _LABEL_ROOM:  # a long name (python:path.py:Class): named above
        lines += [piece for r in rows for piece in wrap(f"policy {label[r['index']]}", indent="    ")]
        label = {r["index"]: f"{r['index']}" for r in rows}
    w = max(8, *(len(x) for x in label.values()))
    lines.append(f"{'policy':<{w}}  {'points/hand':>11}  {'95% CI (walls)':>19}  {'win':>6}  {'deal-in':>7}  "
                 f"{'飘':>6}  {'sd/wall':>7}")
    for r in rows:
        ci = f"[{_fmt(r['lo'])}, {_fmt(r['hi'])}]"
        piao = _fmt(r["piao"], ".3f")
        lines.append(f"{label[r['index']]:<{w}}  {_fmt(r['points']):>11}  {ci:>19}  "
                     f"{r['win']:>6.3f}  {r['deal_in']:>7.3f}  {piao:>6}  {_fmt(sd_from_ci(r['lo'], r['hi'], n)):>7}")
    specs = exact_specs([r["policy"] for r in rows], [label[r["index"]] for r in rows])
    if specs:
        lines += wrap("exact specs (to rerun): " + "; ".join(specs), indent="    ")
    copies = {}
    for r in rows:
        copies.setdefault(r["policy"], []).append(str(r["index"]))
    for policy, idx in copies.items():
        if len(idx) > 1:
            lines.append(f"({', '.join(f'{i}:{spec_words(policy)}' for i in idx)}: the same bot, {len(idx)} copies)")
    lines.append("")
    lines += wrap("pairwise differences (points/hand, paired 95% CI over walls; sd/wall: the per-wall sd of the "
                  "difference, for `caishen power`):", indent="")
    for p in summary["pairs"]:
        pair = f"  {p['ia']}:{spec_words(p['a'])} - {p['ib']}:{spec_words(p['b'])}"
        if p["a"] == p["b"] and p["diff"] == p["lo"] == p["hi"] == 0:  # every seating played: identical walls
            lines += wrap(f"{pair}: the same bot twice, the same points on every wall", indent="      ")
            continue
        sign = "excludes 0" if p["lo"] > 0 or p["hi"] < 0 else "covers 0"
        lines += wrap(f"{pair}: {_fmt(p['diff'])}  [{_fmt(p['lo'])}, {_fmt(p['hi'])}]  ({sign})  sd/wall "
                      f"{_fmt(sd_from_ci(p['lo'], p['hi'], n))}", indent="      ")
    return "\n".join(lines)


def save_summary(run_dir: str | os.PathLike, summary: dict) -> None:
    """Write ``match.json`` (strict JSON: an interval that does not exist is null) and ``match.csv`` (one
    row per policy) into ``run_dir``, each atomically (:func:`caishen.sim.safeio.atomic_write`)."""
    import pandas as pd

    from caishen.sim import safeio

    d = Path(run_dir)
    safeio.write_json(d / SUMMARY_JSON, summary)
    safeio.atomic_write(d / SUMMARY_CSV, pd.DataFrame(summary["policy_rows"]).to_csv(index=False))
