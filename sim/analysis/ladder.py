"""A round robin of bots on duplicate deals, and the rating table it gives (``caishen ladder``).

The ladder is a :mod:`caishen.sim.analysis.arena` match over every pair of
the bot list (``A B A B`` and ``B A B A`` on each wall), all pairs on the
*same walls*: every pair is a match with the ladder's seed, wall count and
walls per chunk, so chunk ``c`` of every pair has the same wall seed and
wall ``w`` is the same tiles and dealer in every pair.  Each pair is its own
runner run directory (chunks, ``--workers``, Ray, resume, Parquet, the
crash safety of :mod:`caishen.sim.selfplay.runner`)::

    OUT/ladder.json              the ladder's configuration (written first, atomically)
    OUT/pairs/00-01/             the match of bots 0 and 1 (a run directory: run.json, chunks/, ...)
    OUT/ladder.csv               one row per bot (rank, points with CI, rating with CI)
    OUT/pairs.csv                one row per pair (paired difference, CIs, wall wins)
    OUT/ladder.md                both tables and the methods, as Markdown
    OUT/ladder.png               the ratings with their CIs and the matrix of differences

Rerunning the same command resumes every pair where it stopped (a
``kill -9`` included: each pair is a resumable run); another configuration
into the same ``OUT`` is an error naming what differs.  Any bot spec of
:mod:`caishen.sim.bots.registry` plays (:func:`check_bots` asks the registry),
open seats included (``python:``, ``exec:``: a pair with one plays in this
process).  :func:`add_bot` (``caishen ladder --add SPEC --out OUT``) appends
one bot to a ladder: the pairs already played keep their directories and are
not played again (the new bot takes the next index, so no pair is
renumbered); only its pairs with every other bot are played, on the same walls.
Adding a bot the ladder holds already (an interrupted ``--add`` run again)
adds nothing and resumes the ladder.

The numbers (:func:`summarize_ladder`), all over the walls that every pair
has finished (the wall is the independent unit):

- *points per hand against the field*: bot ``i``'s points per hand on a
  wall averaged over its pairs (each pair: its mean over its 4 seat-hands of
  the wall), then the mean over walls with a 95% Student-t CI
  (:func:`caishen.sim.analysis.intervals.cluster_mean_ci`);
- the *pairwise matrix*: ``d[i, j]``, the mean over walls of bot ``i``'s
  points per hand minus bot ``j``'s in their match, with the paired CI over
  walls, both unadjusted (95%) and **Bonferroni-adjusted** over the
  ``K = n (n - 1) / 2`` pairs (each at ``1 - 0.05 / K``: family-wise 95%);
  the Markdown matrix shows the adjusted intervals;
- a **Bradley-Terry rating on the Elo scale**: on each wall each pair has
  one result, a win for the bot with more points over the wall's two
  seatings (a tie, e.g. a wall that every seating draws, counts half to
  each); :func:`fit_bradley_terry` fits ``P(i beats j) = 1 / (1 + 10 **
  ((R_j - R_i) / 400))`` by maximum likelihood with one virtual tie per pair
  (:data:`PRIOR_TIES`, so a bot that wins every wall keeps a finite
  rating), ratings centred on mean 0; a gap of 400 means 10:1 odds of
  winning a wall.  95% CIs: percentile bootstrap over walls
  (:data:`DEFAULT_BOOTSTRAP` resamples of the walls, the same resample for
  every pair, seeded from the ladder's seed).
"""

from __future__ import annotations

import dataclasses
import math
import os
from pathlib import Path

import numpy as np

from caishen.sim import safeio
from caishen.sim.analysis import arena
from caishen.sim.selfplay import rundir, runner

LADDER_JSON = "ladder.json"
PAIRS_DIR = "pairs"
LADDER_CSV = "ladder.csv"
PAIRS_CSV = "pairs.csv"
LADDER_MD = "ladder.md"
LADDER_PNG = "ladder.png"
#: version of ladder.json
LADDER_FORMAT = 1
MIN_BOTS = 2
MAX_BOTS = 16
MAX_SPEC = 4096
#: bootstrap resamples of the walls by default, and at most
DEFAULT_BOOTSTRAP = 1000
MAX_BOOTSTRAP = 100_000
#: bounds of a ladder's walls and walls per chunk (as ``caishen match``)
MAX_WALLS = 10**9
MAX_CHUNK_WALLS = 10**6
#: virtual ties added to every pair's wall results before the Bradley-Terry fit (half a win to each side)
PRIOR_TIES = 1.0
#: the Elo scale: rating = ELO_SCALE * log10(strength)
ELO_SCALE = 400.0
CONFIDENCE = 0.95
#: determinizations of the search bot in :func:`builtin_bots`
BUILTIN_MC = 2
#: bytes of a ladder.json at most
MAX_LADDER_JSON = 1 << 20
_BOOT_TAG = 0x1ADDE5


# ---------------------------------------------------------------------------
# the bots and the configuration
# ---------------------------------------------------------------------------
def builtin_bots(rules: str, mc: int = BUILTIN_MC) -> list[str]:
    """The built-in bots of rule set ``rules``: ``random``, ``greedy``, ``greedy_safe``, ``tuned:<rules>``
    and ``mc:<mc>`` where the rule set ships tuned weights (else ``mc:<mc>:greedy``)."""
    from caishen.sim.bots.registry import shipped_tuned

    if rules in shipped_tuned():
        return ["random", "greedy", "greedy_safe", f"tuned:{rules}", f"mc:{mc}"]
    return ["random", "greedy", "greedy_safe", f"mc:{mc}:greedy"]


def check_bots(bots, rules: str, options: dict | None) -> list[str]:
    """The bot specs of a ladder as a list of 2..:data:`MAX_BOTS` strings, each one checked by the
    registry for rule set ``rules``.

    ``bots``: ``"random,greedy,mc:4"`` or a sequence.  Raises ``ValueError``
    naming too few or too many bots, or the bad spec (unknown, bad parameter,
    bad weights file, a 飘 bot on a rule set without a 财神).
    """
    from caishen.sim import engine
    from caishen.sim.bots.registry import check_seats, parse
    from caishen.sim.rules.options import short_repr

    if isinstance(bots, str):
        specs = [p.strip() for p in bots.split(",")]
    else:
        try:
            specs = [p.strip() if isinstance(p, str) else p for p in bots]
        except TypeError:
            raise ValueError(f"bots {short_repr(bots)}: give {MIN_BOTS} to {MAX_BOTS} comma-separated specs") from None
    if not MIN_BOTS <= len(specs) <= MAX_BOTS:
        raise ValueError(f"a ladder needs {MIN_BOTS} to {MAX_BOTS} bots, got {len(specs)}: {short_repr(bots)}")
    name, r = engine.load_rules(rules, options)
    joker = int(engine.engine_params(name, r).joker)
    for i, p in enumerate(specs):
        if not isinstance(p, str) or not p or len(p) > MAX_SPEC:
            raise ValueError(f"bot {i + 1} of the ladder: {short_repr(p)} is not a bot spec")
        check_seats(p, name, joker, label=f"bot {i + 1} of the ladder")  # open seats too (python:, exec:)
    specs = [parse(p).spec for p in specs]  # the registry's normal form, as every command stores it (mc:02 is mc:2)
    return specs


def pairs_of(n: int) -> list[tuple[int, int]]:
    """The pairs ``(i, j)``, ``i < j``, of ``n`` bots in the order they are played."""
    return [(i, j) for i in range(n) for j in range(i + 1, n)]


def pair_dir(out: str | os.PathLike, i: int, j: int) -> Path:
    """The run directory of the match of bots ``i`` and ``j``: ``OUT/pairs/ii-jj``."""
    return Path(out) / PAIRS_DIR / f"{i:02d}-{j:02d}"


@dataclasses.dataclass(frozen=True)
class LadderConfig:
    """What determines a ladder: ``rules`` (name), ``options`` (full dict), ``bots`` (specs),
    ``seed``, ``walls`` (per pair), ``chunk_walls`` and ``bootstrap`` (resamples of the walls)."""

    rules: str
    options: dict
    bots: tuple
    seed: int
    walls: int
    chunk_walls: int = arena.DEFAULT_CHUNK_WALLS
    bootstrap: int = DEFAULT_BOOTSTRAP

    def to_json(self) -> dict:
        return {"format": LADDER_FORMAT, "kind": "ladder", "rules": self.rules, "options": dict(self.options),
                "bots": list(self.bots), "seed": int(self.seed), "walls": int(self.walls),
                "chunk_walls": int(self.chunk_walls), "bootstrap": int(self.bootstrap)}

    def pair_config(self, i: int, j: int) -> runner.RunConfig:
        """The runner configuration of the match of bots ``i`` and ``j``."""
        return arena.make_config(self.rules, [self.bots[i], self.bots[j]], self.walls, self.seed, self.options,
                                 self.chunk_walls)


def _int_in(name: str, v, lo: int, hi: int) -> int:
    if isinstance(v, bool) or not isinstance(v, (int, np.integer)) or not lo <= v <= hi:
        raise ValueError(f"{name} {v!r}: must be an integer in {lo:,} .. {hi:,}")
    return int(v)


def make_config(rules: str, bots, walls: int, seed: int, options: dict | None = None,
                chunk_walls: int = arena.DEFAULT_CHUNK_WALLS, bootstrap: int = DEFAULT_BOOTSTRAP) -> LadderConfig:
    """A validated :class:`LadderConfig`.  Raises ``ValueError`` naming a bad rule set, option, bot spec,
    wall count, chunk size, bootstrap count or seed."""
    opts = runner.resolve_options(rules, options)
    specs = check_bots(bots, rules, options)
    config = LadderConfig(rules, opts, tuple(specs), _int_in("seed", seed, 0, 2**63 - 1),
                          _int_in("walls", walls, 1, MAX_WALLS),
                          _int_in("chunk_walls", chunk_walls, 1, MAX_CHUNK_WALLS),
                          _int_in("bootstrap", bootstrap, 1, MAX_BOOTSTRAP))
    config.pair_config(0, 1)  # the runner's own bounds (chunks, hands)
    return config


_FIELDS = {
    "format": lambda v: v == LADDER_FORMAT and not isinstance(v, bool),
    "kind": lambda v: v == "ladder",
    "rules": lambda v: isinstance(v, str) and 0 < len(v) <= 64,
    "options": lambda v: isinstance(v, dict) and len(v) <= 256,
    "bots": lambda v: isinstance(v, list) and MIN_BOTS <= len(v) <= MAX_BOTS
    and all(isinstance(p, str) and 0 < len(p) <= MAX_SPEC for p in v),
    "seed": lambda v: not isinstance(v, bool) and isinstance(v, int) and 0 <= v < 2**63,
    "walls": lambda v: not isinstance(v, bool) and isinstance(v, int) and 1 <= v <= MAX_WALLS,
    "chunk_walls": lambda v: not isinstance(v, bool) and isinstance(v, int) and 1 <= v <= MAX_CHUNK_WALLS,
    "bootstrap": lambda v: not isinstance(v, bool) and isinstance(v, int) and 1 <= v <= MAX_BOOTSTRAP,
}


def read_config(out: str | os.PathLike) -> LadderConfig:
    """The stored configuration of a ladder directory, every field checked.

    Raises ``ValueError`` if ``out`` has no ladder.json, and
    :class:`caishen.sim.safeio.FileError` (a ``ValueError``) naming the file
    if it is a link, not a regular file, too large, not JSON, or a field is
    missing or bad.
    """
    from caishen.sim.rules.options import short_repr

    meta, p = rundir.read_marker(out, "ladder", LADDER_JSON, MAX_LADDER_JSON)
    if not isinstance(meta, dict):
        raise safeio.FileError(p, "is not a JSON object: not a ladder.json caishen wrote")
    for key, ok in _FIELDS.items():
        if key not in meta:
            raise safeio.FileError(p, f"has no field {key!r}: not a ladder.json caishen wrote")
        if not ok(meta[key]):
            raise safeio.FileError(p, f"field {key!r} is {short_repr(meta[key])}: not a ladder.json caishen wrote")
    return LadderConfig(meta["rules"], meta["options"], tuple(meta["bots"]), meta["seed"], meta["walls"],
                        meta["chunk_walls"], meta["bootstrap"])


def _differences(stored: dict, wanted: dict) -> list[str]:
    return [f"{k}: stored {stored[k]!r}, now {wanted[k]!r}" for k in wanted if stored[k] != wanted[k]]


#: a ladder's directory (:mod:`caishen.sim.selfplay.rundir`): ladder.json, then ``pairs/``, one match per pair
LADDER = rundir.Kind("ladder", LADDER_JSON, lambda out: read_config(out).to_json(), differences=_differences,
                     new_out="choose a new --out", subdirs=(PAIRS_DIR,))


def prepare_dir(out: str | os.PathLike, config: LadderConfig) -> None:
    """Write ``out/ladder.json`` for a new ladder, or check that the stored one is ``config``
    (:func:`caishen.sim.selfplay.rundir.prepare`; :func:`run_ladder` claims the directory, lock included).

    Raises ``ValueError`` naming every difference from a stored ladder, and
    for an ``out`` that is a file or a non-empty directory holding no ladder.
    """
    rundir.prepare(out, LADDER, config.to_json())


def add_bot(out: str | os.PathLike, spec: str) -> LadderConfig:
    """Append bot ``spec`` to the ladder stored in ``out`` and return the new configuration (module docstring).

    Rewrites ``ladder.json`` (atomically, under the ladder's lock) with the
    bot list one longer and nothing else changed; the pairs played so far
    keep their directories, so :func:`run_ladder` with the returned
    configuration plays only the new bot's pairs (and finishes any pair left
    unfinished).  A ``spec`` whose normal form (:func:`caishen.sim.bots.registry.normalize`)
    is one of the ladder's bots already adds nothing: the stored configuration
    is returned unchanged, so rerunning an interrupted ``--add`` resumes it
    (:func:`bot_index` tells the two apart).  Raises ``ValueError`` if ``out``
    holds no ladder, the ladder is full (:data:`MAX_BOTS`), or ``spec`` cannot
    play its rule set.
    """
    out = Path(out)
    if not out.is_dir():
        raise ValueError(f"{str(out)!r} is not a ladder directory; play a ladder first (caishen ladder --bots ...)")
    with rundir.workspace(out, LADDER.noun):
        config = read_config(out)
        if bot_index(config, spec) is not None:
            return config
        if len(config.bots) >= MAX_BOTS:
            raise ValueError(f"the ladder in {str(out)!r} holds {len(config.bots)} bots already; at most {MAX_BOTS}")
        specs = check_bots([*config.bots, spec], config.rules, config.options)
        new = dataclasses.replace(config, bots=tuple(specs))
        rundir.rewrite(out, LADDER, new.to_json())
    return new


def bot_index(config: LadderConfig, spec: str) -> int | None:
    """The index of bot ``spec`` (compared in the registry's normal form) in ``config.bots``, the first if it
    is there twice; None if it is not there.  Raises ``ValueError`` for a spec the registry cannot parse."""
    from caishen.sim.bots.registry import normalize

    spec = normalize(spec)
    return config.bots.index(spec) if spec in config.bots else None


# ---------------------------------------------------------------------------
# playing
# ---------------------------------------------------------------------------
def pair_done(run_dir: str | os.PathLike) -> bool:
    """True if the match in ``run_dir`` has every chunk written and recorded (a quick look: sizes and
    footers, no checksums; :func:`caishen.sim.selfplay.runner.run` still verifies it in full)."""
    from caishen.sim.selfplay import manifest, rundir

    if not (Path(run_dir) / rundir.RUN_JSON).is_file():
        return False
    try:
        check = manifest.verify(run_dir, checksums=False)
    except (ValueError, OSError):
        return False
    return len(check.ok) == check.n_chunks
def run_ladder(config: LadderConfig, out: str | os.PathLike, *, workers: int | None = None, backend: str = "local",
               ray_address: str | None = None, progress: bool = True, log=None) -> dict:
    """Play (or resume) every pair of ``config`` into ``out``, then write and return :func:`summarize_ladder`.

    ``workers``/``backend``/``ray_address``: as :func:`caishen.sim.selfplay.runner.run`, for each pair in
    turn (a pair with an open seat in this process); ``log``: a function taking one line per pair (e.g.
    ``print``).  A pair already finished is verified, not played again.  Writes ladder.csv, pairs.csv,
    ladder.md and ladder.png (:func:`save_tables`).  Raises ``ValueError`` for another ladder or anything
    else in ``out``, a link in it, or a ladder running there now; what the runner raises for a pair.
    """
    from caishen.sim.bots.names import spec_words
    from caishen.sim.bots.registry import seat_workers

    out = Path(out)
    with rundir.claim(out, LADDER, config.to_json()):
        todo = pairs_of(len(config.bots))
        for k, (i, j) in enumerate(todo):
            d = pair_dir(out, i, j)
            done = pair_done(d)
            if log is not None:
                head = f"pair {k + 1}/{len(todo)}: {spec_words(config.bots[i])} vs {spec_words(config.bots[j])}"
                log(f"{head}: done, kept (not replayed)" if done else f"{head} -> {d}")
            pair = config.pair_config(i, j)
            runner.run(pair, d, workers=seat_workers(pair.policies, workers), backend=backend,
                       ray_address=ray_address, progress=progress and not done, chunk_fn=arena.CHUNK_FNS[2])
        summary = summarize_ladder(out, config)
        save_tables(out, summary)
    return summary


# ---------------------------------------------------------------------------
# the Bradley-Terry fit
# ---------------------------------------------------------------------------
def fit_bradley_terry(wins, tol: float = 1e-12, max_iter: int = 100_000) -> np.ndarray:
    """Bradley-Terry log10-strengths of ``wins: float64[..., n, n]`` (``wins[..., i, j]``: results of ``i``
    against ``j``, ties counted half), centred on mean 0; multiply by :data:`ELO_SCALE` for Elo.

    Maximum likelihood by Hunter's MM iteration (2004), vectorised over the
    leading axes: ``p_i <- W_i / sum_j n_ij / (p_i + p_j)``, until no
    log-strength moves by ``tol``.  The MLE exists when the comparison graph
    is strongly connected (e.g. every pair has a positive result both ways:
    :data:`PRIOR_TIES`).  Raises ``ValueError`` for a matrix that is not
    square, has a negative or non-finite entry or a bot without a win;
    ``RuntimeError`` if ``max_iter`` iterations do not converge.
    """
    w = np.asarray(wins, dtype=np.float64)
    if w.ndim < 2 or w.shape[-1] != w.shape[-2] or w.shape[-1] < 2:
        raise ValueError(f"wins has shape {w.shape}; it must be [..., n, n] with n >= 2")
    if not np.all(np.isfinite(w)) or np.any(w < 0):
        raise ValueError("wins holds a negative, NaN or infinite value")
    n = w.shape[-1]
    w = w * (1 - np.eye(n))
    games = w + np.swapaxes(w, -1, -2)
    won = w.sum(-1)
    if np.any(won <= 0):
        raise ValueError("a bot has no win in the results: its Bradley-Terry strength is not finite")
    logp = np.zeros(w.shape[:-1])
    for _ in range(max_iter):
        p = np.exp(logp)
        denom = (games / (p[..., :, None] + p[..., None, :])).sum(-1)
        new = np.log(won) - np.log(denom)
        new -= new.mean(-1, keepdims=True)
        step = np.max(np.abs(new - logp))
        logp = new
        if step < tol:
            return logp / math.log(10)
    raise RuntimeError(f"the Bradley-Terry fit did not converge in {max_iter} iterations (last step {step:.3g})")


def wins_matrix(results: np.ndarray, counts: np.ndarray | None, n: int) -> np.ndarray:
    """The wins matrices ``float64[B, n, n]`` of per-wall results ``results: float64[walls, pairs]`` (1: the
    pair's first bot won the wall, 0.5 tie, 0 lost; pairs in :func:`pairs_of` order), each wall counted
    ``counts: int[B, walls]`` times (None: once, ``B = 1``), plus :data:`PRIOR_TIES` per pair."""
    if counts is None:
        counts = np.ones((1, len(results)))
    first = counts @ results  # [B, pairs]
    games = counts.sum(1)[:, None]
    out = np.zeros((len(counts), n, n))
    for k, (i, j) in enumerate(pairs_of(n)):
        out[:, i, j] = first[:, k] + PRIOR_TIES / 2
        out[:, j, i] = games[:, 0] - first[:, k] + PRIOR_TIES / 2
    return out


# ---------------------------------------------------------------------------
# results
# ---------------------------------------------------------------------------
def pair_points(run_dir: str | os.PathLike) -> tuple[np.ndarray, np.ndarray]:
    """``(walls: int64[w], points: float64[w, 2])`` of one pair's match: each verified wall's index and
    the two bots' points per hand on it (:func:`caishen.sim.analysis.arena.wall_values`)."""
    walls, points = [], []
    for v, _ in arena.iter_wall_values(run_dir):
        walls.append(v["walls"])
        points.append(v["points"])
    if not walls:
        return np.zeros(0, np.int64), np.zeros((0, 2))
    return np.concatenate(walls), np.concatenate(points)


def wall_points(out: str | os.PathLike, config: LadderConfig) -> tuple[np.ndarray, np.ndarray]:
    """``(walls: int64[w], points: float64[w, pairs, 2])`` over the walls every pair has verified.

    Raises ``ValueError`` naming a pair's run directory that is not the
    match of the ladder's configuration (another run was put there).
    """
    from caishen.sim.selfplay import rundir

    per = []
    for i, j in pairs_of(len(config.bots)):
        d = pair_dir(out, i, j)
        wanted = config.pair_config(i, j).to_json()
        diffs = rundir.config_differences(rundir.read_run_json(d), wanted)
        if diffs:
            raise ValueError(f"{str(d)!r} is not this ladder's match of {config.bots[i]} and {config.bots[j]}: "
                             + "; ".join(diffs))
        w, p = pair_points(d)
        order = np.argsort(w, kind="stable")
        per.append((w[order], p[order]))
    common = per[0][0]
    for w, _ in per[1:]:
        common = np.intersect1d(common, w)
    pts = np.stack([p[np.searchsorted(w, common)] for w, p in per], 1) if len(common) else np.zeros((0, len(per), 2))
    return common, pts


def _ci(x: np.ndarray, confidence: float) -> tuple[float, float, float]:
    from caishen.sim.analysis.intervals import cluster_mean_ci

    return cluster_mean_ci(x, None, confidence)


def summarize_ladder(out: str | os.PathLike, config: LadderConfig | None = None) -> dict:
    """The rating table of a ladder directory (module docstring), as a JSON-ready dict.

    ``{"rules", "bots", "seed", "walls", "walls_done", "bootstrap", "adjustment", "scale", "bots_rows":
    [...], "pairs": [...]}``: one row per bot (``rank``, ``bot``, ``index``, ``points``/``lo``/``hi``,
    ``rating``/``rating_lo``/``rating_hi``, ``wall_wins``: its share of wall results won, ties half), one
    per pair (``a``, ``b``, ``ia``, ``ib``, ``diff``, ``lo``/``hi`` at 95%, ``adj_lo``/``adj_hi``
    Bonferroni-adjusted, ``wins_a``, ``ties``, ``wins_b`` in walls).  Raises ``ValueError`` if ``out`` is
    not a ladder or has no wall that every pair has finished.
    """
    config = read_config(out) if config is None else config
    n = len(config.bots)
    pij = pairs_of(n)
    walls, pts = wall_points(out, config)
    g = len(walls)
    if g == 0:
        raise ValueError(f"{str(out)!r} has no wall that every pair has finished yet")
    diff = pts[:, :, 0] - pts[:, :, 1]  # [walls, pairs]
    results = (np.sign(diff) + 1) / 2
    field = np.zeros((g, n))
    for k, (i, j) in enumerate(pij):
        field[:, i] += pts[:, k, 0]
        field[:, j] += pts[:, k, 1]
    field /= n - 1
    adjusted = 1 - (1 - CONFIDENCE) / len(pij)
    rating = ELO_SCALE * fit_bradley_terry(wins_matrix(results, None, n))[0]
    rng = np.random.default_rng(np.random.SeedSequence([config.seed, _BOOT_TAG]))
    boot = []
    for start in range(0, config.bootstrap, 100):
        b = min(100, config.bootstrap - start)
        counts = rng.multinomial(g, np.full(g, 1.0 / g), size=b).astype(np.float64)
        boot.append(ELO_SCALE * fit_bradley_terry(wins_matrix(results, counts, n)))
    boot = np.concatenate(boot)
    q = np.quantile(boot, [(1 - CONFIDENCE) / 2, (1 + CONFIDENCE) / 2], axis=0)
    won = np.zeros(n)
    for k, (i, j) in enumerate(pij):
        won[i] += results[:, k].sum()
        won[j] += (1 - results[:, k]).sum()
    rows = []
    for i in range(n):
        m, lo, hi = _ci(field[:, i], CONFIDENCE)
        rows.append({"bot": config.bots[i], "index": i, "points": m, "lo": lo, "hi": hi,
                     "rating": float(rating[i]), "rating_lo": float(q[0, i]), "rating_hi": float(q[1, i]),
                     "wall_wins": float(won[i] / (g * (n - 1)))})
    for rank, r in enumerate(sorted(rows, key=lambda r: (-r["rating"], r["index"])), 1):
        r["rank"] = rank
    pairs = []
    for k, (i, j) in enumerate(pij):
        m, lo, hi = _ci(diff[:, k], CONFIDENCE)
        _, alo, ahi = _ci(diff[:, k], adjusted)
        pairs.append({"a": config.bots[i], "b": config.bots[j], "ia": i, "ib": j, "diff": m, "lo": lo, "hi": hi,
                      "adj_lo": alo, "adj_hi": ahi, "wins_a": int((diff[:, k] > 0).sum()),
                      "ties": int((diff[:, k] == 0).sum()), "wins_b": int((diff[:, k] < 0).sum())})
    return {
        "rules": config.rules, "options": config.options, "bots": list(config.bots), "seed": config.seed,
        "walls": config.walls, "walls_done": g, "bootstrap": config.bootstrap,
        "adjustment": f"Bonferroni over {len(pij)} pairs (each interval at {adjusted:.4%})",
        "scale": f"Bradley-Terry on wall results, Elo scale ({ELO_SCALE:g} = 10:1 odds), mean 0, "
                 f"{PRIOR_TIES:g} virtual tie per pair",
        "bots_rows": sorted(rows, key=lambda r: r["rank"]), "pairs": pairs,
    }


def _f(x, spec="+.3f") -> str:
    return "-" if x is None or not np.isfinite(x) else format(x, spec)


def format_markdown(summary: dict) -> str:
    """The ladder as Markdown: the rating table, the matrix of paired differences, and the methods.  Bots read
    as words (:func:`caishen.sim.bots.names.spec_words`: a 飘 table by its cells), the matrix's columns
    headed by each bot's number and short name, the exact specs once in a list where they differ."""
    from caishen.sim.bots.names import exact_specs, short_name, spec_words

    n = len(summary["bots"])
    bots = [spec_words(b) for b in summary["bots"]]
    lines = [f"# Ladder: {summary['rules']}, {n} bots, {summary['walls_done']:,} walls per pair "
             f"(seed {summary['seed']})", "",
             "| rank | bot | points/hand vs field | 95% CI | rating (Elo) | 95% CI (bootstrap) | walls won |",
             "|---|---|---|---|---|---|---|"]
    for r in summary["bots_rows"]:
        lines.append(f"| {r['rank']} | `{spec_words(r['bot'])}` | {_f(r['points'])} | [{_f(r['lo'])}, {_f(r['hi'])}] | "
                     f"{_f(r['rating'], '+.0f')} | [{_f(r['rating_lo'], '+.0f')}, {_f(r['rating_hi'], '+.0f')}] | "
                     f"{r['wall_wins']:.1%} |")
    specs = exact_specs(summary["bots"])
    if specs:
        lines += ["", "Exact specs (to rerun):", ""] + [f"- `{x}`" for x in specs]
    d = {(p["ia"], p["ib"]): p for p in summary["pairs"]}
    # the matrix holds the differences only (a column per bot: its number and a short name), so that it
    # stays narrow; each pair's interval follows it, one line a pair
    width = max(12, (100 - 30) // max(n, 1) - 3)  # columns of a short name: the matrix near 100 columns
    lines += ["", "Row minus column, points per hand in their match (* : the adjusted 95% CI excludes 0):", "",
              "| | " + " | ".join(f"{j}:{short_name(b, width)}" for j, b in enumerate(summary["bots"])) + " |",
              "|---" * (n + 1) + "|"]
    for i, b in enumerate(bots):
        cells = []
        for j in range(n):
            if i == j:
                cells.append("")
                continue
            p = d[(min(i, j), max(i, j))]
            s = 1 if i < j else -1
            star = "*" if p["adj_lo"] > 0 or p["adj_hi"] < 0 else ""
            cells.append(f"{_f(s * p['diff'])}{star}")
        lines.append(f"| {i}:`{b}` | " + " | ".join(cells) + " |")
    lines += ["", f"Each pair, row minus column, with its 95% CI ({summary['adjustment']}):", ""]
    for (i, j), p in sorted(d.items()):
        lines.append(f"- {i}:`{bots[i]}` minus {j}:`{bots[j]}`: {_f(p['diff'])} "
                     f"[{_f(p['adj_lo'])}, {_f(p['adj_hi'])}]")
    lines += ["", "Points per hand against the field: the bot's points per hand on a wall averaged over its "
              "matches, 95% Student-t CI over walls.  Matrix: paired CI over walls.  Rating: "
              f"{summary['scale']}; 95% percentile CI from {summary['bootstrap']:,} bootstrap resamples of "
              "the walls.", ""]
    from caishen.sim.termtext import wrap

    # prose lines wrap to 100 columns (a Markdown paragraph or list item still); table rows stay whole
    return "\n".join(piece for line in lines for piece in ([line] if line.startswith("|") else
                                                           wrap(line, indent="  " if line.startswith("- ") else "")))


def plot(out: str | os.PathLike, summary: dict) -> None:
    """Write ``out/ladder.png``: the ratings with their bootstrap CIs, and the matrix of differences."""
    from caishen.sim.analysis import figures

    plt = figures._plt()
    n = len(summary["bots"])
    rows = summary["bots_rows"]
    fig, (ax, bx) = plt.subplots(1, 2, figsize=(6 + 0.9 * n, 0.5 * n + 3))
    y = np.arange(len(rows))[::-1]
    r = np.array([x["rating"] for x in rows])
    err = np.array([[x["rating"] - x["rating_lo"], x["rating_hi"] - x["rating"]] for x in rows]).T
    ax.errorbar(r, y, xerr=err, fmt="o", capsize=4)
    ax.set_yticks(y, [x["bot"] for x in rows])
    ax.axvline(0, color="grey", lw=0.5)
    ax.set_xlabel("Bradley-Terry rating (Elo scale), 95% bootstrap CI")
    m = np.zeros((n, n))
    for p in summary["pairs"]:
        m[p["ia"], p["ib"]], m[p["ib"], p["ia"]] = p["diff"], -p["diff"]
    lim = max(1e-9, float(np.abs(m).max()))
    im = bx.imshow(m, cmap="RdBu", vmin=-lim, vmax=lim)
    labels = [f"{i}:{b}" for i, b in enumerate(summary["bots"])]
    bx.set_xticks(range(n), labels, rotation=45, ha="right")
    bx.set_yticks(range(n), labels)
    for i in range(n):
        for j in range(n):
            if i != j:
                bx.text(j, i, f"{m[i, j]:+.2f}", ha="center", va="center", fontsize=8)
    fig.colorbar(im, ax=bx, label="row minus column, points/hand")
    fig.suptitle(f"{summary['rules']}: {summary['walls_done']:,} walls per pair")
    fig.tight_layout()
    figures.save_figure(fig, Path(out) / LADDER_PNG, dpi=110)
    plt.close(fig)


def save_tables(out: str | os.PathLike, summary: dict) -> None:
    """Write ladder.csv, pairs.csv, ladder.md and ladder.png into ``out``, each atomically."""
    import pandas as pd

    d = Path(out)
    cols = ["rank", "bot", "index", "points", "lo", "hi", "rating", "rating_lo", "rating_hi", "wall_wins"]
    safeio.atomic_write(d / LADDER_CSV, pd.DataFrame(summary["bots_rows"])[cols].to_csv(index=False))
    safeio.atomic_write(d / PAIRS_CSV, pd.DataFrame(summary["pairs"]).to_csv(index=False))
    safeio.atomic_write(d / LADDER_MD, format_markdown(summary))
    plot(d, summary)
