"""Fit the tuned bot's weights by self-play: CMA-ES with duplicate-deal fitness.

The parametric bot (:mod:`caishen.sim.bots.tuned`) scores discards and claims with a
weight vector over features its seat can see.  This script fits the
weights with CMA-ES (the ``cma`` package, ``pip install 'caishen[tune]'``):

- a candidate plays a duplicate-deal match against a fixed *pool* of 1 to 3
  opponents (``greedy`` by default), every wall once per seating of the
  arena's fair schedule (:mod:`caishen.sim.analysis.arena`'s ``all``,
  :data:`SCHEDULE`): every order of the candidate and the pool, each
  rotated to every seat -- 2 seatings with one opponent (``A B A B``), 24
  with two or three -- so no pool member always sits before or after
  the candidate (a rotation of one order would keep that seat-order bias,
  issue 43); a seating where the candidate fills two seats counts both;
- its fitness is its mean points per hand over those hands;
- all candidates of a generation play the same walls (a wall seed per
  generation: common random numbers, so the ranking inside a generation is
  not drowned by the walls' luck); every generation draws new walls, so the
  search does not fit one set of walls;
- optionally (``--scan-walls``) a coordinate scan first: one pass of
  coordinate ascent over the features (``x +- step`` on fixed walls, a step
  kept when it gains more than 0.05 points per hand), the start of CMA-ES;
  J-6 points are so spread (a per-wall standard deviation of about
  13 points per hand against 1.7 under K-8) that CMA-ES from greedy alone
  found nothing that held on fresh walls;
- the search starts at :data:`caishen.sim.bots.tuned.GREEDY_WEIGHTS` (the weights that
  play exactly as greedy), so anything it finds is an improvement on greedy
  under the same features; or at a weights file (``--start``: a second,
  finer run from a first one's result, its command recorded in the file);
- the result is CMA-ES's final mean (under noisy fitness a better estimate
  than the best single sample), checked on fresh walls (``validation``, a
  wall seed no generation used) and written as JSON with the command that
  reproduces it.

Wall seeds: generation ``g`` plays walls of seed
``SeedSequence([seed, g]).generate_state(1)[0]``; the validation uses
``SeedSequence([seed, 10**6])``.  ``caishen match`` seeds its chunks from
``SeedSequence(seed).spawn(...)``, which are other streams, so a match with
any seed plays walls this tuning never saw.

Usage::

    caishen train --rules NAME --out sim/rules/NAME/tuned.json
    python -m caishen.agents.tune --rules NAME --out sim/rules/NAME/tuned.json --walls 800
"""

from __future__ import annotations

import argparse
import dataclasses
import datetime
import json
import sys
import time
from pathlib import Path

import numpy as np

from caishen.sim import __version__, safeio
from caishen.sim.rules.base import DEFAULT

__all__ = ["Search", "tune", "evaluate", "add_command", "main"]


def _require_cma():
    try:
        import cma
    except ImportError:
        raise ValueError("tuning needs the optional dependency cma: pip install 'caishen[tune]'") from None
    return cma


#: the arena schedule of a candidate's seatings (module docstring): every order of the policies, every seat
SCHEDULE = "all"


@dataclasses.dataclass(frozen=True)
class Search:
    """What a tuning run computes (:func:`tune`; the command line's flags of the same names).

    ``generations``: CMA-ES generations (1..10,000); ``popsize``:
    candidates per generation (4..1000); ``walls``: walls per candidate
    and generation, each played in every seating (10..10**7); ``sigma``:
    the initial step size, in (0, 100); ``seed``: CMA-ES's and the walls'
    seed (0..2**32-1); ``validation_walls``: walls of the final check on
    unseen walls (1..10**7); ``scan_walls``: > 0 runs
    :func:`coordinate_scan` on that many walls first (0..10**7);
    ``start``: a weights file (``tuned:`` name or path) to start from
    instead of :data:`caishen.sim.bots.tuned.GREEDY_WEIGHTS` (a second,
    finer run).  Raises ``ValueError`` naming a value out of its range.
    """

    generations: int = 30
    popsize: int = 12
    walls: int = 1500
    sigma: float = 1.0
    seed: int = 0
    validation_walls: int = 4000
    scan_walls: int = 0
    start: str | None = None

    def __post_init__(self):
        for name, lo, hi in (("generations", 1, 10_000), ("popsize", 4, 1000), ("walls", 10, 10**7),
                             ("seed", 0, 2**32 - 1), ("validation_walls", 1, 10**7), ("scan_walls", 0, 10**7)):
            v = getattr(self, name)
            if isinstance(v, bool) or not isinstance(v, (int, np.integer)) or not lo <= v <= hi:
                raise ValueError(f"{name} {v!r}: must be an integer in {lo}..{hi}")
        if isinstance(self.sigma, bool) or not isinstance(self.sigma, (int, float)) or not 0 < self.sigma < 100:
            raise ValueError(f"sigma {self.sigma!r}: must be a number in (0, 100)")


def _wall_seed(seed: int, g: int) -> int:
    return int(np.random.SeedSequence([int(seed), int(g)]).generate_state(1, np.uint32)[0])


class _Evaluator:
    """Plays candidate weights against the pool on duplicate deals (one numba batch per seating)."""

    def __init__(self, rules: str, options: dict | None, pool: list[str]):
        from caishen.sim import engine
        from caishen.sim.analysis.arena import seatings
        from caishen.sim.bots.policies import new_work
        from caishen.sim.bots.registry import POLICY_TUNED, bot_table
        from caishen.sim.tables import hand_tables
        from caishen.sim.bots.tuned import N_W

        self.name, self.r = engine.load_rules(rules, options)
        self.ep = engine.engine_params(self.name, self.r)
        self.rp = self.r.params()
        self.tabs = hand_tables()
        joker = int(self.ep.joker)
        self.pool_rows = []
        for spec in pool:
            t, w = bot_table([spec] * 4, self.name, joker)  # ValueError naming a bad spec
            self.pool_rows.append((t[0].copy(), w[0].copy()))
        if not 1 <= len(pool) <= 3:
            raise ValueError(f"the pool holds 1 to 3 opponents, got {len(pool)}: {','.join(pool)}")
        self.seats = seatings(1 + len(pool), SCHEDULE)
        self.tuned_code = POLICY_TUNED
        self.n_w = N_W
        self.st = engine.new_state()[0]
        self.work = new_work()

    def fitness(self, w: np.ndarray, wall_seed: int, n_walls: int, bots_seed: int = 1) -> float:
        """Mean points per hand of weights ``w`` against the pool on ``n_walls`` walls of ``wall_seed``."""
        from caishen.sim import engine
        from caishen.sim.bots.registry import POLICY_MC, make_context
        from caishen.sim.selfplay.batch import Bots, _play_batch_walls

        total = 0.0
        count = 0
        rec = engine.new_records(n_walls)
        chance = np.zeros((n_walls, 4), np.int8)
        for r, seat in enumerate(self.seats):
            table = np.zeros((4, 2), np.int64)
            weights = np.zeros((4, self.n_w))
            mine = []
            for s, i in enumerate(seat):
                if i == 0:
                    table[s] = self.tuned_code, 0
                    weights[s] = w
                    mine.append(s)
                else:
                    table[s], weights[s] = self.pool_rows[i - 1]
            bx = make_context(self.name, self.r, weights, bots_seed + r, search=bool((table[:, 0] == POLICY_MC).any()))
            # check None: no checker compiled in (caishen.sim.selfplay.batch._play_hand)
            hand, err = _play_batch_walls(bots_seed + r, wall_seed, n_walls, 1, Bots(table, bx, self.work), self.ep,
                                          self.rp, self.tabs, None, self.st, rec, chance)
            if err != 0:
                raise RuntimeError(f"hand {hand} of wall seed {wall_seed}: engine error {err}")
            scores = self._scores(rec)
            total += float(scores[:, mine].sum())
            count += n_walls * len(mine)
        return total / count

    def _scores(self, rec: np.ndarray) -> np.ndarray:
        from caishen.sim.rules import base as rulesets
        from caishen.sim.rules.kernels import hand_points

        return hand_points(rulesets.get(self.name), self.r, rec)  # the rule set's points kernel


def evaluate(rules: str, weights, pool="greedy", walls: int = 1000, wall_seed: int = 12345,
             options: dict | None = None) -> float:
    """Mean points per hand of ``weights`` against ``pool`` on ``walls`` duplicate walls of ``wall_seed``."""
    from caishen.sim.bots.tuned import check_weights

    pool_specs = [p.strip() for p in pool.split(",")] if isinstance(pool, str) else list(pool)
    ev = _Evaluator(rules, options, pool_specs)
    return ev.fitness(check_weights(weights), int(wall_seed), int(walls))


#: the coordinate scan's step per feature (the features' scales differ: caishen.sim.bots.tuned)
SCAN_STEPS = {
    "shanten": 5.0, "effective": 1.0, "danger": 2.0, "danger_far": 2.0, "danger_late": 2.0, "joker": 2.0,
    "piao_ready": 5.0, "pairs": 2.0, "suit": 2.0, "honor": 1.0, "terminal": 1.0, "declare": 3.0,
    "claim_bias": 1.0, "claim_gain": 2.0, "claim_opens": 1.0, "claim_pong": 1.0, "claim_late": 1.0,
}
#: the scan accepts a step only if it gains more than this (points per hand) on its walls
SCAN_MARGIN = 0.05
#: the scan's walls: generation "-1" of the wall seeds
_SCAN_GENERATION = 10**6 + 1


def coordinate_scan(ev: "_Evaluator", x0: np.ndarray, walls: int, seed: int, log=print) -> tuple[np.ndarray, float]:
    """One pass of coordinate ascent from ``x0``: for each feature in order, try ``x +- step``
    (:data:`SCAN_STEPS`) on the same walls and keep the better one if it gains more than
    :data:`SCAN_MARGIN`.  Returns ``(x, fitness)``.  A cheap first stage where the fitness is so
    noisy that CMA-ES from the greedy weights finds little (J-6 points)."""
    from caishen.sim.bots.tuned import FEATURES

    ws = _wall_seed(seed, _SCAN_GENERATION)
    x = np.array(x0, dtype=np.float64)
    best = ev.fitness(x, ws, walls)
    for i, f in enumerate(FEATURES):
        tries = []
        for sgn in (-1.0, 1.0):
            y = x.copy()
            y[i] += sgn * SCAN_STEPS[f]
            tries.append((ev.fitness(y, ws, walls), sgn))
        fit, sgn = max(tries)
        if fit > best + SCAN_MARGIN:
            x[i] += sgn * SCAN_STEPS[f]
            best = fit
        if log:
            log(f"scan {f:<12} -: {tries[0][0]:+.3f}  +: {tries[1][0]:+.3f}  -> {x[i]:+.2f} (fitness {best:+.3f})")
    return x, best


def tune(rules: str, out, pool="greedy", search: Search | None = None, options: dict | None = None,
         log=print) -> dict:
    """Run CMA-ES (module docstring) and write the weights file ``out``; returns its content.

    ``pool``: 1 to 3 bot specs (a comma-separated string or a list);
    ``search``: what to compute (:class:`Search`; None: its defaults);
    ``options``: rule options; ``log``: a function taking one line per
    generation (None: quiet).  Raises ``ValueError`` for bad arguments
    (naming them) or a missing ``cma``, before any tuning.
    """
    cma = _require_cma()
    from caishen.sim.bots.tuned import FEATURES, GREEDY_WEIGHTS, N_W, check_weights

    sr = Search() if search is None else search
    generations, popsize, walls, sigma, seed = sr.generations, sr.popsize, sr.walls, sr.sigma, sr.seed
    validation_walls, scan_walls, start = sr.validation_walls, sr.scan_walls, sr.start
    out = Path(out)
    if out.suffix != ".json":
        raise ValueError(f"out {str(out)!r}: the weights file must end in .json")
    if out.is_dir():
        raise ValueError(f"out {str(out)!r} is a directory, not a weights file")
    try:  # before any tuning: a bad path fails now, not after the last generation
        safeio.make_dir(out.parent)
    except safeio.FileError as e:
        raise ValueError(f"out {str(out)!r}: cannot create its directory ({str(e).split(': ', 1)[-1]})") from None
    pool_specs = [p.strip() for p in pool.split(",")] if isinstance(pool, str) else list(pool)
    ev = _Evaluator(rules, options, pool_specs)
    x0 = GREEDY_WEIGHTS
    if start is not None:
        from caishen.sim.bots.registry import load_tuned

        x0, start_meta = load_tuned(start)
        if start_meta["rules"] != ev.name:
            raise ValueError(f"start {start!r} was tuned for {start_meta['rules']!r}, not {ev.name!r}")
    t0 = time.perf_counter()
    if scan_walls:
        x0, fit = coordinate_scan(ev, x0, scan_walls, seed, log)
    stds = np.ones(N_W)
    stds[0] = 2.0  # the shanten weight (-10 at the start) moves on a larger scale
    es = cma.CMAEvolutionStrategy(x0.tolist(), float(sigma),
                                  {"popsize": int(popsize), "seed": int(seed) + 1, "CMA_stds": stds.tolist(),
                                   "verbose": -9})
    base = ev.fitness(GREEDY_WEIGHTS, _wall_seed(seed, 0), walls)
    if log:
        log(f"{rules}: greedy weights score {base:+.3f} points/hand against {','.join(pool_specs)} "
            f"({walls} walls x {len(ev.seats)} seatings per candidate)")
    n_eval = 1
    history = []
    for g in range(1, generations + 1):
        xs = es.ask()
        ws = _wall_seed(seed, g)
        fits = [ev.fitness(np.asarray(x), ws, walls) for x in xs]
        n_eval += len(xs)
        es.tell(xs, [-f for f in fits])
        history.append({"generation": g, "best": max(fits), "mean": float(np.mean(fits))})
        if log:
            log(f"gen {g:3d}: best {max(fits):+.3f}  mean {np.mean(fits):+.3f}  sigma {es.sigma:.3f}  "
                f"({time.perf_counter() - t0:.0f} s)")
    w = check_weights(np.asarray(es.result.xfavorite), "CMA-ES mean")
    val_seed = _wall_seed(seed, 10**6)
    fitness = ev.fitness(w, val_seed, validation_walls)
    greedy_val = ev.fitness(GREEDY_WEIGHTS, val_seed, validation_walls)
    cmd = (f"caishen train --rules {ev.name} --out {out.as_posix()} --pool {','.join(pool_specs)} "
           f"--generations {generations} --popsize {popsize} --walls {walls} --sigma {sigma} --seed {seed} "
           f"--validation-walls {validation_walls}")
    if start is not None:
        cmd += f" --start {start}"
    if scan_walls:
        cmd += f" --scan-walls {scan_walls}"
    for k, v in sorted((options or {}).items()):
        cmd += f" --option {k}={v}"
    content = {
        "rules": ev.name,
        "features": list(FEATURES),
        "weights": [float(x) for x in w],
        "pool": pool_specs,
        "fitness": fitness,
        "fitness_greedy_weights": greedy_val,
        "validation": {"walls": validation_walls, "wall_seed": val_seed,
                       "note": "mean points per hand against the pool on walls no generation used"},
        "command": cmd,
        "cma": {"generations": generations, "popsize": popsize, "walls": walls, "sigma": sigma, "seed": seed,
                "evaluations": n_eval, "start": start, "scan_walls": scan_walls},
        "options": options or {},
        "history": history,
        "version": __version__,
        "created": datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds"),
    }
    try:  # atomically: a crash or a full disk never leaves half a weights file
        safeio.atomic_write(out, json.dumps(content, indent=1, ensure_ascii=False, allow_nan=False) + "\n")
    except safeio.FileError as e:
        raise ValueError(f"out {str(out)!r}: cannot write the weights file ({e})") from None
    content["evaluations"] = n_eval
    content["seconds"] = time.perf_counter() - t0
    if log:
        log(f"validation ({validation_walls} walls): tuned {fitness:+.3f}, greedy weights {greedy_val:+.3f}")
    return content


def add_command(sub) -> None:
    """The ``train`` command of ``caishen`` (and of ``python -m caishen.agents.tune``) on the subparsers ``sub``."""
    p = sub.add_parser(
        "train",
        help="fit the tuned bot's weights by CMA-ES on duplicate deals (caishen.agents.tune; [tune] extra)",
        description="Fit the weights of the parametric bot (caishen.sim.bots.tuned) with CMA-ES: each candidate plays "
        "duplicate deals (every order of it and the pool, each rotated to every seat: the arena's 'all' schedule) "
        "against a fixed pool of opponents, fitness = its mean "
        "points per hand; the walls are fixed per generation (common random numbers). Writes the weights "
        "as JSON (loadable as tuned:PATH, or tuned:NAME from sim/rules/NAME/tuned.json) with the command that "
        "reproduces them.",
    )
    p.add_argument("--rules", default=DEFAULT, help=f"rule set (default {DEFAULT})")
    p.add_argument("--out", required=True, help="weights file to write (.json)")
    p.add_argument("--pool", default="greedy", help="opponents: 1 to 3 bot specs, comma-separated (default greedy; "
                   "caishen.sim.bots.registry, listed below by caishen train --help)")
    p.add_argument("--generations", type=int, default=30, help="CMA-ES generations (default 30)")
    p.add_argument("--popsize", type=int, default=12, help="candidates per generation (default 12)")
    p.add_argument("--walls", type=int, default=1500, help="walls per candidate and generation (default 1500)")
    p.add_argument("--sigma", type=float, default=1.0, help="initial CMA-ES step size (default 1.0)")
    p.add_argument("--seed", type=int, default=0, help="seed of CMA-ES and of the walls (default 0)")
    p.add_argument("--option", action="append", default=[], metavar="KEY=VALUE", help="rule option (repeatable)")
    p.add_argument("--start", default=None, help="start from this weights file (tuned: name or .json path) "
                   "instead of the greedy weights")
    p.add_argument("--scan-walls", type=int, default=0,
                   help="first a coordinate scan on this many walls, CMA-ES starts from its result (default 0: none)")
    p.add_argument("--validation-walls", type=int, default=4000,
                   help="walls of the final check on unseen walls (default 4000)")
    p.add_argument("--quiet", action="store_true", help="no per-generation lines")
    p.set_defaults(func=_run_command)


def _run_command(args) -> int:
    from caishen.sim.rules.options import parse_option_strings

    search = Search(generations=args.generations, popsize=args.popsize, walls=args.walls, sigma=args.sigma,
                    seed=args.seed, validation_walls=args.validation_walls, scan_walls=args.scan_walls,
                    start=args.start)
    res = tune(args.rules, args.out, pool=args.pool, search=search, options=parse_option_strings(args.option),
               log=None if args.quiet else print)
    print(f"wrote {args.out}: fitness {res['fitness']:.3f} points/hand against {args.pool} "
          f"({res['evaluations']} evaluations, {res['seconds']:.0f} s)")
    return 0


def main(argv: list[str] | None = None) -> int:
    """``python -m caishen.agents.tune`` (the same arguments as ``caishen train``)."""
    parser = argparse.ArgumentParser(prog="python -m caishen.agents.tune")
    sub = parser.add_subparsers(dest="command")
    add_command(sub)
    args = parser.parse_args(["train", *(sys.argv[1:] if argv is None else argv)])
    try:
        return int(args.func(args) or 0)
    except ValueError as e:
        parser.exit(2, f"caishen.agents.tune: error: {e}\n")


if __name__ == "__main__":
    sys.exit(main())
