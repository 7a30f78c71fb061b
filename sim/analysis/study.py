"""Sweeps on duplicate deals: a grid of rule options and seat policies played on the same walls.

``caishen sweep`` (and :func:`sweep` in Python) plays every point of a grid
-- the Cartesian product of rule-option values and *hero* policies -- on the
same walls (common random numbers), through the runner (:mod:`caishen.sim.selfplay.runner`:
worker processes or Ray, resumable Parquet chunks), and returns a tidy
table: one row per grid point and metric, its value with a 95% interval over
walls, and its difference to a named baseline point with the paired 95%
interval over walls.

Design
------
- **Walls.** Every hand is its own one-hand match: its wall and dealer come
  from the run's seed and the hand's index only (``play_batch(...,
  wall_seed=...)``, :mod:`caishen.sim.selfplay.batch`'s duplicate deals), never from the
  grid point or the bots (a random bot draws from its own stream), so wall
  ``w`` is the same deal at every point and the difference of a metric
  between two points is paired wall by wall.  (Dealer rotation and
  the dealer's streak, J-2.4, therefore play no part in a sweep; the
  ``simulate`` runs and :mod:`caishen.sim.analysis.balance` measure those.)  Walls are
  independent, so an interval over walls is an interval over independent
  units (:mod:`caishen.sim.analysis.intervals`).
- **The hero.** A policy grid value is the policy of one seat, the *hero*;
  the other three seats play the *field* policy (``--field``, default
  ``greedy``).  Each chunk plays a quarter of its walls with the hero at
  each seat; the dealer of a wall is drawn uniformly with it, so the hero
  deals a quarter of the walls.  Without a policy axis the hero plays the field policy (an
  option sweep: every seat the same).
- **Metrics** (per wall; the hero's where it says so): ``score`` (the
  hero's points), ``win`` (the hero won), ``deal_in`` (the hero discarded a
  winning tile or was robbed), ``draw`` (流局), ``self_draw`` (won by
  self-draw), ``dealer_score`` (the dealer's points), ``points_moved``
  (points paid in the hand: the sum of the positive scores), and the rule
  set's own (``Analysis.study_metrics`` of its ``analysis`` hook: whether the
  hero threw a 财神, K-9.1, and its 飘 failed, K-9.3; whether it declared
  架听, J-4.1, or 硬子, J-4.2).
- **Baseline.** ``baseline`` replaces some coordinates: each point is
  compared with the point that has those coordinates changed
  (``baseline="policy=never"``: every point against ``never`` at the same
  option values; ``"failed_piao_factor=2"``: against factor 2 with the same
  policy; both: against one point).  The default is the first value of
  every axis.  The paired difference's interval takes the Satterthwaite
  degrees of freedom (:mod:`caishen.sim.analysis.intervals`): two points
  that differ on a few walls only get an honest, wider interval.
- **Factorial.**  With two or more axes the sweep is a factorial design:
  :mod:`caishen.sim.analysis.factorial` gives the main effects and
  interactions with their intervals (``caishen sweep`` prints them and
  writes ``OUT/factorial.csv``).

Run directory::

    OUT/sweep.json          the grid, baseline, walls, seed (written first)
    OUT/points/p000/        one runner run per grid point (run.json, chunks/)
    OUT/sweep.csv           the tidy table, written last (atomically): its
                            presence means the sweep finished

The table is computed streamed (:func:`streamed_metric_table`): the
points' chunks are read side by side, chunk ``c`` of every point holding the
same walls, into per-point cluster sums: memory of one chunk per point,
whatever the number of walls (:func:`metric_table` is the same table from
per-wall metrics held in memory).

The directory is claimed through :mod:`caishen.sim.selfplay.rundir` (its
lock held for the whole sweep, no links inside; :data:`SWEEP`).  Rerunning
the same command resumes (finished chunks are skipped); another grid into
the same OUT is an error naming what differs; another baseline rewrites
sweep.json and the table.  Bad input -- an
unknown option, a value outside its range, an unknown policy, an empty grid
-- is a ``ValueError`` naming the value, raised before anything is written.

Measured (2 cores shared with other jobs, load ~8, warm numba cache): 4
policies x 3 values of ``failed_piao_factor`` x 50,000 walls (K-rules), the
README's example, took 325 s: killed (SIGKILL) after 181 s with 7 of 12
points done, then resumed in 144 s to the same table as an uninterrupted
path.  The sweep's spawned workers cost a few seconds per point.
"""

from __future__ import annotations

import itertools
from pathlib import Path

import numpy as np
import pandas as pd

from caishen.sim import safeio
from caishen.sim.rules import base as rulesets
from caishen.sim.selfplay import rundir

N_SEATS = 4
SWEEP_JSON = "sweep.json"
SWEEP_CSV = "sweep.csv"
POINTS_DIR = "points"
POLICY_AXIS = "policy"
#: columns of the tidy table, after the grid axes
TABLE_COLUMNS = ["metric", "walls", "value", "ci_low", "ci_high", "baseline", "diff", "diff_low", "diff_high"]
#: the metrics of every rule set (a rule set's own: ``Analysis.study_metrics`` of its ``analysis`` hook)
METRICS = ("score", "win", "deal_in", "draw", "self_draw", "dealer_score", "points_moved")
#: what each of :data:`METRICS` measures, with its unit (a rule set's own: ``Analysis.study_units``)
METRIC_UNITS = {
    "score": "the hero's points per wall",
    "win": "share of walls the hero won",
    "deal_in": "share of walls the hero dealt in (its discard won, or its added kong was robbed)",
    "draw": "share of walls drawn (流局)",
    "self_draw": "share of walls won by a self-draw (any seat)",
    "dealer_score": "the dealer's points per wall",
    "points_moved": "points paid per wall (the sum of the positive scores)",
}
MAX_POINTS = 1000


# ---------------------------------------------------------------------------
# the grid
# ---------------------------------------------------------------------------
def _split_values(text: str, what: str) -> list[str]:
    vals = [v.strip() for v in text.split(",")]
    if not text.strip() or any(v == "" for v in vals):
        from caishen.sim.rules.options import short_repr

        raise ValueError(f"{what} {short_repr(text)}: give one or more comma-separated values (an empty value "
                         "makes an empty grid)")
    return vals


def parse_grid(rules: str, options=(), policies=None, field: str = "greedy") -> dict:
    """The validated grid: ``{"rules", "axes": {name: [values]}, "field"}``.

    ``options``: strings ``"KEY=V1,V2,..."`` (one axis each; one value =
    fixed for every point) or a dict ``{key: [values]}``; ``policies``: the
    hero policies, a comma-separated string or a list (the ``policy`` axis),
    or None.  Every value is checked against the rule set (option ranges,
    policy names, 飘 policies only with a 财神) and the field policy too.
    Raises ``ValueError`` naming an unknown option or policy, a bad value,
    a repeated axis, or an empty grid.
    """
    from caishen.sim.selfplay import runner
    from caishen.sim.engine import engine_params, load_rules
    from caishen.sim.bots import registry
    from caishen.sim.rules.options import short_repr

    if rules not in runner.available_rules():
        raise ValueError(f"unknown rule set {short_repr(rules)}; available: {', '.join(runner.available_rules())}")
    axes: dict[str, list] = {}
    items = options.items() if isinstance(options, dict) else options
    for item in items:
        if isinstance(item, str):
            if "=" not in item:
                raise ValueError(f"option {short_repr(item)}: expected KEY=V1,V2,...")
            key, text = (s.strip() for s in item.split("=", 1))
            values = _split_values(text, f"option {key}")
        else:
            key, values = item
            values = [values] if isinstance(values, (str, int, float, bool)) or values is None else list(values)
            if not values:
                raise ValueError(f"option {short_repr(key)}: no values (an empty grid)")
        if key in axes or key == POLICY_AXIS:
            raise ValueError(f"option {short_repr(key)} given twice")
        cls = rulesets.get(rules).options
        declared = {d.name: d for d in cls.declarations()}
        if key not in declared:
            raise ValueError(f"unknown {cls.__name__} option {short_repr(key)}; an axis is a declared option: "
                             + ", ".join(f"{n} ({d.bounds()})" if d.bounds() else n
                                         for n, d in declared.items()))
        for v in values:  # names the bad option or value (unknown option, out of range)
            load_rules(rules, {key: v})
        axes[key] = values
    _, r = load_rules(rules)
    joker = int(engine_params(rules, r).joker)
    field = registry.normalize(field)
    registry.check_seats(field, rules, joker, label="the field policy")  # open seats too (python:, exec:)
    if policies is not None:
        pol = _split_values(policies, "policy") if isinstance(policies, str) else [str(p).strip() for p in policies]
        if not pol or any(p == "" for p in pol):
            raise ValueError("policy: no policies (an empty grid)")
        pol = [registry.normalize(p) for p in pol]
        for p in pol:
            registry.check_seats(p, rules, joker, label="hero policy")
        axes[POLICY_AXIS] = pol
    if not axes:
        raise ValueError("an empty grid: give --option KEY=V1,V2,... and/or --policy P1,P2,...")
    n = int(np.prod([len(v) for v in axes.values()]))
    if n > MAX_POINTS:
        raise ValueError(f"the grid has {n} points; at most {MAX_POINTS}")
    for key, values in axes.items():
        if len(set(map(str, values))) != len(values):
            raise ValueError(f"{key}: a value is repeated in {', '.join(map(str, values))}")
    return {"rules": rules, "axes": {k: [_plain(v) for v in vals] for k, vals in axes.items()}, "field": field}


def _plain(v):
    return v.item() if isinstance(v, np.generic) else v


def grid_points(grid: dict) -> list[dict]:
    """The grid's points in order: ``[{axis: value, ...}, ...]`` (the last axis varies fastest)."""
    names = list(grid["axes"])
    return [dict(zip(names, combo)) for combo in itertools.product(*(grid["axes"][k] for k in names))]


def parse_baseline(grid: dict, baseline) -> dict:
    """``"policy=never,failed_piao_factor=2"`` (or a dict) -> the coordinates it replaces, validated.

    ``None``: the first value of every axis.  Raises ``ValueError`` naming
    an axis the grid does not have or a value not on the axis.
    """
    from caishen.sim.rules.options import short_repr

    axes = grid["axes"]
    if baseline is None or baseline == "":
        return {k: v[0] for k, v in axes.items()}
    if isinstance(baseline, str):
        pairs = {}
        for part in baseline.split(","):
            if "=" not in part:
                raise ValueError(f"baseline {short_repr(baseline)}: expected AXIS=VALUE[,AXIS=VALUE]")
            k, v = (s.strip() for s in part.split("=", 1))
            pairs[k] = v
    else:
        pairs = dict(baseline)
    out = {}
    for k, v in pairs.items():
        if k not in axes:
            raise ValueError(f"baseline axis {short_repr(k)} is not in the grid (axes: {', '.join(axes)})")
        match = [x for x in axes[k] if str(x) == str(v)]
        if not match:
            raise ValueError(f"baseline {k}={short_repr(v)} is not a value of the grid "
                             f"({', '.join(map(str, axes[k]))})")
        out[k] = match[0]
    return out


def point_label(point: dict) -> str:
    """``"failed_piao_factor=2 policy=never"``."""
    return " ".join(f"{k}={v}" for k, v in point.items())


# ---------------------------------------------------------------------------
# the chunk function (runner side)
# ---------------------------------------------------------------------------
def sweep_chunk(rules: str, options: dict, policies: tuple, seed_entropy: int, n_hands: int) -> dict:
    """One chunk of one grid point: ``n_hands`` walls, each its own one-hand match.

    ``policies``: ``(hero, field, field, field)``.  The walls are played in
    four blocks (sizes differ by at most one), block ``r`` with the hero at
    seat ``r``; block ``r``'s walls and dealers come from the wall seed
    ``SeedSequence(seed_entropy).spawn(4)[r]`` only (duplicate deals,
    ``play_batch(wall_seed=...)``), so every grid point plays the same walls
    with the hero at the same seat.  Returns the record
    columns of :func:`caishen.sim.selfplay.batch.play_batch` (``hand`` renumbered
    ``0..n-1``) plus ``hero: int8``.
    """
    from caishen.sim.selfplay.batch import play_batch

    hero, field = policies[0], policies[1]
    seeds = [int(c.generate_state(1, np.uint32)[0]) for c in np.random.SeedSequence(int(seed_entropy)).spawn(4)]
    parts = []
    for r in range(N_SEATS):
        n = n_hands // N_SEATS + (1 if r < n_hands % N_SEATS else 0)
        seats = [field] * N_SEATS
        seats[r] = hero
        cols = play_batch(n, seeds[r], rules=rules, options=options, policies=tuple(seats), wall_seed=seeds[r])
        cols["hero"] = np.full(n, r, np.int8)
        parts.append(cols)
    out = {k: np.concatenate([p[k] for p in parts]) for k in parts[0]}
    out["hand"] = np.arange(n_hands, dtype=out["hand"].dtype)
    return out


# ---------------------------------------------------------------------------
# metrics and the table
# ---------------------------------------------------------------------------
def wall_metrics(df: pd.DataFrame, rules: str) -> pd.DataFrame:
    """One row per wall (``hand_id`` order): the metrics of the module docstring (float64)."""
    n = len(df)
    hero = df["hero"].to_numpy(np.int64) if "hero" in df else np.zeros(n, np.int64)
    scores = np.stack([df[f"score_{s}"].to_numpy(np.int64) for s in range(N_SEATS)], axis=1)
    idx = np.arange(n)
    mask = df["winners_mask"].to_numpy(np.int64)
    wt = df["win_type"].to_numpy(np.int64)
    dealer = df["dealer"].to_numpy(np.int64)
    m = {
        "score": scores[idx, hero],
        "win": (mask >> hero) & 1,
        "deal_in": (df["discarder"].to_numpy(np.int64) == hero) & (wt >= 1),
        "draw": wt == -1,
        "self_draw": wt == 0,
        "dealer_score": scores[idx, dealer],
        "points_moved": np.where(scores > 0, scores, 0).sum(axis=1),
    }
    if rules in rulesets.names():
        m.update(rulesets.get(rules).analysis_hooks().study_values(df, idx, hero))
    return pd.DataFrame({k: np.asarray(v, np.float64) for k, v in m.items()})


def metric_table(grid: dict, per_point: list[pd.DataFrame], baseline: dict) -> pd.DataFrame:
    """The tidy table from each point's per-wall metrics (same walls, same order at every point)."""
    from caishen.sim.analysis.intervals import cluster_mean_ci

    points = grid_points(grid)
    index = {tuple(str(v) for v in p.values()): i for i, p in enumerate(points)}
    rows = []
    for i, p in enumerate(points):
        b = {**p, **baseline}
        j = index[tuple(str(v) for v in b.values())]
        a_m, b_m = per_point[i], per_point[j]
        n = min(len(a_m), len(b_m))
        for metric in a_m.columns:
            x = a_m[metric].to_numpy()
            v, lo, hi = cluster_mean_ci(x)
            if j == i:
                d = (0.0, 0.0, 0.0)
            else:
                d = cluster_mean_ci(x[:n] - b_m[metric].to_numpy()[:n], df="satterthwaite")
            rows.append({**{k: str(val) for k, val in p.items()}, "metric": metric, "walls": len(x), "value": v,
                         "ci_low": lo, "ci_high": hi, "baseline": point_label(b), "diff": d[0],
                         "diff_low": d[1], "diff_high": d[2]})
    return pd.DataFrame(rows, columns=[*grid["axes"], *TABLE_COLUMNS])


def streamed_metric_table(grid: dict, point_dirs: list, baseline: dict) -> pd.DataFrame:
    """:func:`metric_table` over the points' run directories, streamed: memory of one chunk per point.

    Chunk ``c`` of every point holds the same walls (one seed, walls and
    chunk size for the whole sweep), so the points' chunks are read side by
    side, chunk by chunk, into :class:`caishen.sim.analysis.intervals.ClusterSums` of
    each point's per-wall metrics and of its differences from its baseline
    point (every wall its own cluster: the Student-t intervals of
    :func:`metric_table`, equal up to float rounding; a test).  Raises
    ``ValueError`` when the points do not hold the same number of verified
    chunks.
    """
    import pyarrow.parquet as pq

    from caishen.sim.selfplay import stream
    from caishen.sim.analysis.intervals import ClusterSums

    rules = grid["rules"]
    points = grid_points(grid)
    index = {tuple(str(v) for v in p.values()): i for i, p in enumerate(points)}
    base = [index[tuple(str(v) for v in {**p, **baseline}.values())] for p in points]
    files = [stream.verified_chunk_files(d)[0] for d in point_dirs]
    if len({len(f) for f in files}) != 1:
        raise ValueError("the sweep's points hold different numbers of verified chunks: "
                         + ", ".join(f"{d}: {len(f)}" for d, f in zip(point_dirs, files)))
    columns = [_metric_columns(rules, stream.column_names(f)) for f in files]
    names: list[str] = []
    values: list = [None] * len(points)
    diffs: list = [None] * len(points)
    for c in range(len(files[0])):
        got: dict[int, np.ndarray] = {}

        def metrics(i: int) -> np.ndarray:
            if i not in got:
                m = wall_metrics(pq.read_table(files[i][c], columns=columns[i]).to_pandas(), rules)
                names[:] = list(m.columns)
                got[i] = m.to_numpy()
            return got[i]

        for i, j in enumerate(base):
            x = metrics(i)
            if values[i] is None:
                values[i], diffs[i] = ClusterSums(x.shape[1]), ClusterSums(x.shape[1])
            values[i].add(x)
            if j != i:
                y = metrics(j)
                k = min(len(x), len(y))
                diffs[i].add(x[:k] - y[:k])
    rows = []
    for i, p in enumerate(points):
        b = {**p, **baseline}
        vals, ds = values[i].ci(), diffs[i].ci(df="satterthwaite")
        for q, metric in enumerate(names):
            v, lo, hi = vals[q]
            d = (0.0, 0.0, 0.0) if base[i] == i else ds[q]
            rows.append({**{k: str(val) for k, val in p.items()}, "metric": metric, "walls": values[i].g,
                         "value": v, "ci_low": lo, "ci_high": hi, "baseline": point_label(b), "diff": d[0],
                         "diff_low": d[1], "diff_high": d[2]})
    return pd.DataFrame(rows, columns=[*grid["axes"], *TABLE_COLUMNS])


# ---------------------------------------------------------------------------
# running a sweep
# ---------------------------------------------------------------------------
def _point_config(grid: dict, point: dict, walls: int, seed: int, chunk_size: int):
    from caishen.sim.selfplay import runner

    options = {k: v for k, v in point.items() if k != POLICY_AXIS}
    hero = point.get(POLICY_AXIS, grid["field"])
    return runner.make_config(grid["rules"], walls, seed, policies=(hero,) + (grid["field"],) * 3,
                              options=options, chunk_size=chunk_size, chunk_fn=sweep_chunk)


def sweep(rules: str, out, *, options=(), policies=None, field: str = "greedy", walls: int = 10_000,
          seed: int = 0, baseline=None, chunk_size: int = 10_000, execution=None) -> pd.DataFrame:
    """Run (or resume) a sweep into ``out`` and return the tidy table (also ``OUT/sweep.csv``).

    Arguments as :func:`parse_grid` and :func:`parse_baseline`; ``walls``:
    hands per point (1..10**9); ``seed``: the walls' root seed;
    ``chunk_size``: hands per chunk; ``execution``: how the points' runs
    are played (:class:`caishen.sim.selfplay.runner.Execution`: workers,
    backend, Ray address, progress; None: its defaults).  Everything is
    validated before ``out`` is touched; ``ValueError`` names a bad value,
    a repeated run into ``out`` with another grid, or an ``out`` that holds
    something else.
    """
    from caishen.sim.selfplay import runner

    ex = runner.Execution() if execution is None else execution
    grid = parse_grid(rules, options, policies, field)
    base = parse_baseline(grid, baseline)
    points = grid_points(grid)
    configs = [_point_config(grid, p, walls, seed, chunk_size) for p in points]  # validates walls, seed, chunks
    doc = {"kind": "sweep", "grid": grid, "baseline": {k: str(v) for k, v in base.items()}, "walls": int(walls),
           "seed": int(seed), "chunk_size": int(chunk_size),
           "points": [{"dir": f"{POINTS_DIR}/p{i:03d}", **{k: str(v) for k, v in p.items()}}
                      for i, p in enumerate(points)]}
    out = Path(out)
    with rundir.claim(out, SWEEP, doc):
        dirs = []
        for i, (p, config) in enumerate(zip(points, configs)):
            d = out / POINTS_DIR / f"p{i:03d}"
            if ex.progress:
                import sys

                from caishen.sim.bots.names import spec_words

                # a 飘 table by its cells, not its 64-bit number (sweep.csv keeps the exact spec)
                print(f"sweep point {i + 1}/{len(points)}: {spec_words(point_label(p))}", file=sys.stderr)
            runner.run(config, d, workers=ex.workers, backend=ex.backend, ray_address=ex.ray_address,
                       progress=ex.progress, chunk_fn=sweep_chunk)
            dirs.append(d)
        table = streamed_metric_table(grid, dirs, base)  # memory of one chunk per point, whatever the walls
        safeio.atomic_write(out / SWEEP_CSV, with_policy_names(table).to_csv(index=False))
    return table


#: the column of ``sweep.csv`` beside the ``policy`` axis: each policy as people read it
#: (:func:`caishen.sim.bots.names.spec_words`: ``piao_table[12/64 cells]``); the ``policy`` column keeps the
#: exact spec, which reproduces the point
POLICY_NAME = "policy_name"


def with_policy_names(table: pd.DataFrame) -> pd.DataFrame:
    """``table`` with :data:`POLICY_NAME` after its ``policy`` axis (none without one): what ``sweep.csv``
    holds (:func:`read_sweep` drops it again)."""
    from caishen.sim.bots.names import spec_words

    if POLICY_AXIS not in table.columns:
        return table
    t = table.copy()
    t.insert(list(t.columns).index(POLICY_AXIS) + 1, POLICY_NAME, t[POLICY_AXIS].astype(str).map(spec_words))
    return t


def _metric_columns(rules: str, available) -> list[str]:
    want = ["hero", "dealer", "winners_mask", "win_type", "discarder"]
    stems = ["score", *(rulesets.get(rules).analysis_hooks().study_stems if rules in rulesets.names() else ())]
    want += [f"{c}_{s}" for c in stems for s in range(N_SEATS)]
    return [c for c in want if c in set(available)]


#: bytes of a sweep.json / sweep.csv at most
MAX_SWEEP_JSON = 1 << 20
MAX_SWEEP_CSV = 64 << 20


def _short(v) -> str:
    from caishen.sim.rules.options import short_repr

    return short_repr(v)


def _check_sweep_json(doc: dict, where) -> dict:
    """``doc`` if it has the fields of a sweep.json with their types and bounds, else
    :class:`caishen.sim.safeio.FileError` naming ``where`` and the field."""
    def bad(key, what):
        raise safeio.FileError(where, f"field {key!r} is {_short(doc.get(key))}; it must be {what}")

    if doc.get("kind") != "sweep":
        bad("kind", "'sweep'")
    grid = doc.get("grid")
    if not (isinstance(grid, dict) and isinstance(grid.get("rules"), str) and isinstance(grid.get("field"), str)
            and isinstance(grid.get("axes"), dict) and grid["axes"]
            and all(isinstance(k, str) and isinstance(v, list) and v for k, v in grid["axes"].items())):
        bad("grid", "an object with rules, field and non-empty axes")
    n = int(np.prod([len(v) for v in grid["axes"].values()]))
    if n > MAX_POINTS:
        bad("grid", f"a grid of at most {MAX_POINTS} points")
    from caishen.sim.selfplay.runner import MAX_CHUNK_SIZE

    for key, lo, hi in (("walls", 1, 10**9), ("seed", 0, 2**63 - 1), ("chunk_size", 1, MAX_CHUNK_SIZE)):
        v = doc.get(key)
        if isinstance(v, bool) or not isinstance(v, int) or not lo <= v <= hi:
            bad(key, f"an integer in {lo} .. {hi}")
    if not isinstance(doc.get("baseline"), dict):
        bad("baseline", "an object")
    pts = doc.get("points")
    if not (isinstance(pts, list) and len(pts) == n
            and all(isinstance(q, dict) and q.get("dir") == f"{POINTS_DIR}/p{i:03d}" for i, q in enumerate(pts))):
        bad("points", f"the list of the grid's {n} points (dir {POINTS_DIR}/p000, ...)")
    return doc


def read_sweep_json(out) -> dict:
    """The validated ``sweep.json`` of ``out`` (:func:`_check_sweep_json`; a link, a file that is not a
    regular one, or larger than :data:`MAX_SWEEP_JSON` is a :class:`caishen.sim.safeio.FileError`)."""
    return _check_sweep_json(*rundir.read_marker(out, "sweep", SWEEP_JSON, MAX_SWEEP_JSON))


#: a sweep's directory (:mod:`caishen.sim.selfplay.rundir`): sweep.json written first; the baseline is an
#: analysis choice, not part of the runs: another baseline rewrites sweep.json and removes the old table
#: (a new one is written when the sweep ends)
SWEEP = rundir.Kind("sweep", SWEEP_JSON, read_sweep_json, analysis_keys=("baseline",), stale=(SWEEP_CSV,))


def read_sweep(out) -> tuple[dict, pd.DataFrame]:
    """``(sweep.json, the tidy table)`` of a finished sweep; ``ValueError`` if ``out`` is no finished sweep
    or its files are damaged (named)."""
    import io

    out = Path(out)
    if not (out / SWEEP_JSON).exists():
        raise ValueError(f"{str(out)!r} is not a sweep directory (no {SWEEP_JSON})")
    if not (out / SWEEP_CSV).exists():
        raise ValueError(f"{str(out)!r}: the sweep has not finished (no {SWEEP_CSV}); rerun its command to resume")
    doc = read_sweep_json(out)
    data = safeio.read_bytes(out / SWEEP_CSV, MAX_SWEEP_CSV, what="a sweep.csv")
    axes = list(doc["grid"]["axes"])
    try:
        table = pd.read_csv(io.BytesIO(data), dtype={k: str for k in axes})
    except (ValueError, pd.errors.ParserError) as e:
        raise safeio.FileError(out / SWEEP_CSV, f"is not the sweep's table ({str(e).splitlines()[0][:80]})") from None
    want = [*axes, *TABLE_COLUMNS]
    if POLICY_AXIS in axes and POLICY_NAME in table.columns:  # the readable names beside the specs
        named = [*axes[:axes.index(POLICY_AXIS) + 1], POLICY_NAME, *axes[axes.index(POLICY_AXIS) + 1:],
                 *TABLE_COLUMNS]
        if list(table.columns) == named:
            table = table.drop(columns=[POLICY_NAME])
    if list(table.columns) != want:
        raise safeio.FileError(out / SWEEP_CSV, f"has the columns {_short(list(table.columns))}, not {want}")
    return doc, table


def metric_units(rules: str) -> dict[str, str]:
    """``{metric: what it measures, with its unit}`` of a sweep of ``rules``: :data:`METRIC_UNITS` and the
    rule set's own (``Analysis.study_units``)."""
    own = rulesets.get(rules).analysis_hooks().study_units if rules in rulesets.names() else {}
    return {**METRIC_UNITS, **own}


def describe(grid: dict) -> str:
    """The lines printed above a sweep's table: who the hero is and what every metric measures (its unit).

    ``grid``: :func:`parse_grid`'s dict.  The hero is not one fixed seat: each chunk plays a quarter of its
    walls with the hero at each seat (module docstring), so its metrics average over the four seats."""
    policies = grid["axes"].get(POLICY_AXIS)
    if policies:
        hero = (f"hero: one seat playing the policy of the point ({', '.join(map(str, policies))}), the other "
                f"three play the field policy {grid['field']}")
    else:
        hero = f"hero: one seat; every seat plays the field policy {grid['field']} (an option sweep)"
    from caishen.sim.termtext import wrap_lines

    lines = [hero + "; the hero sits at seat 0, 1, 2 and 3 for a quarter of the walls each (hero column of "
             "the records), so its numbers average over the seats"]
    lines.append("metrics (mean per wall, 95% CI over walls; 'vs baseline': the paired difference):")
    lines += [f"  {m:<13} {text}" for m, text in metric_units(grid["rules"]).items()]
    return "\n".join(wrap_lines(lines, indent=" " * 16))


def format_grid(table: pd.DataFrame, width: int = 100) -> str:
    """The tidy table as two compact grids, a row per point (its axis values) and a column per metric (what
    ``caishen sweep`` and ``caishen report`` print; every figure is in ``sweep.csv``, and :func:`format_table`
    gives it line by line with the per-wall sds):

    - **mean per wall** ``value ±h``, ``h`` half the 95% CI over walls (Student-t, symmetric);
    - **vs baseline**: the paired difference to the point's baseline ``diff ±h``, ``*`` where its interval
      excludes 0; the baseline points themselves are left out (their difference is 0 by definition).

    A cell that is exactly 0 with a 0-wide interval prints as ``0``.  ``width``: characters per line; wider
    grids wrap into blocks of columns (pandas' ``line_width``)."""
    from caishen.sim.termtext import wrap

    axes = [c for c in table.columns if c not in TABLE_COLUMNS and c != POLICY_NAME]  # sweep.csv read as it is
    t = table.assign(**{a: table[a].astype(str) for a in axes})
    t["point"] = [point_label(dict(zip(axes, values))) for values in t[axes].itertuples(index=False)]
    order = list(dict.fromkeys(t["point"]))
    metrics = list(dict.fromkeys(t["metric"]))

    def cells(v, lo, hi, mark: bool) -> pd.Series:
        h = (hi - lo) / 2
        star = np.where(mark & ((lo > 0) | (hi < 0)), "*", "")
        text = v.map("{:+.3f}".format) + " ±" + h.map("{:.3f}".format) + star
        return text.where((v != 0) | (h != 0), "0")

    def grid(cell: pd.Series, rows: list) -> str:  # the points in the sweep's order, the metrics in the table's
        g = t.assign(cell=cell).pivot(index="point", columns="metric", values="cell").loc[rows, metrics]
        g.index = pd.MultiIndex.from_frame(t.drop_duplicates("point").set_index("point").loc[rows, axes])
        g.columns.name = None
        return g.to_string(line_width=width, justify="right")

    base_of = dict(zip(t["point"], t["baseline"]))
    others = [p for p in order if base_of[p] != p]
    lines = [f"mean per wall, ±: half the 95% CI over walls ({int(t['walls'].iloc[0]):,} walls per point):",
             grid(cells(t["value"], t["ci_low"], t["ci_high"], False), order)]
    if others:
        bases = sorted({base_of[p] for p in others})
        vs = bases[0] if len(bases) == 1 else "each point's own (sweep.csv's baseline column)"
        lines += ["", *wrap(f"vs baseline {vs}: the paired difference, ±: half its 95% CI over walls, * excludes 0:",
                            indent="    "),
                  grid(cells(t["diff"], t["diff_low"], t["diff_high"], True), others)]
    return "\n".join(lines)


def format_table(table: pd.DataFrame, metrics=None) -> str:
    """The tidy table as text: value [CI] and difference [CI] per point and metric; ``metrics``: the ones
    to show (default: every metric of the table, as written to ``sweep.csv``); each row also gives the
    per-wall sd (:func:`caishen.sim.analysis.intervals.sd_from_ci`; of a difference whose interval took few
    degrees of freedom, an upper estimate; ``caishen power --from`` reads the walls themselves)."""
    from caishen.sim.analysis.intervals import sd_from_ci
    from caishen.sim.termtext import wrap

    t = table if metrics is None else table[table["metric"].isin(metrics)]
    axes = [c for c in table.columns if c not in TABLE_COLUMNS and c != POLICY_NAME]  # sweep.csv read as it is
    lines = []
    for row in t.itertuples(index=False):
        d = row._asdict()
        where = " ".join(f"{a}={d[a]}" for a in axes)
        # two lines a row, each within 100 columns (one line took 162-173)
        lines += wrap(f"{where:<44} {d['metric']:<13} {d['value']:+9.4f} [{d['ci_low']:+.4f}, {d['ci_high']:+.4f}]",
                      indent=" " * 8)
        lines += wrap(f"{'':<8}vs baseline {d['diff']:+9.4f} [{d['diff_low']:+.4f}, {d['diff_high']:+.4f}]"
                      f"  sd/wall {sd_from_ci(d['ci_low'], d['ci_high'], d['walls']):.4g}, of the difference "
                      f"{sd_from_ci(d['diff_low'], d['diff_high'], d['walls']):.4g}", indent=" " * 8)
    return "\n".join(lines)
