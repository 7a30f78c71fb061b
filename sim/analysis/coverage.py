"""Replicate checks of the intervals: how often each method's 95% interval covers a known truth.

Each *scenario* draws one replicate data set with a known true value, the
shape a study meets (:data:`SCENARIOS`); :func:`coverage` draws ``reps``
independent replicates and counts the intervals that cover the truth.  The
methods are the project's (:mod:`caishen.sim.analysis.intervals`, the 飘
study's weighted mean, the pairwise Bonferroni matrix, ``caishen power``'s
sd interval):

======================  =============================================================================
scenario                data and method
======================  =============================================================================
``cluster_mean``        rows in walls of 1-7 with a wall effect; :func:`cluster_mean_ci` over walls
``naive_mean``          the same rows as if independent (the interval that must fail)
``rate``                four seat-hands per wall, a wall-level win probability; Wilson at the
                        effective size (:func:`cluster_rate_ci`)
``ratio``               a share of points (points of a hand type / all points) over matches of 16
                        hands; :func:`cluster_ratio_ci`
``paired``              two policies on the same walls; :func:`cluster_diff_ci`
``weighted``            one 飘 chance per hand weighted by the hand's chances, points of a hand
                        clustered (:func:`caishen.sim.analysis.piao_estimate.weighted_mean_ci`)
``near_identical``      two policies that differ on 0.3% of 1,000 walls (heavy-tailed points):
                        the paired mean with the t quantile on ``G - 1`` degrees of freedom
``near_identical_df``   the same with the Satterthwaite degrees of freedom (``df="satterthwaite"``)
``pairwise``            four policies on the same walls, every pair's Bonferroni interval; covered
                        when all six cover together (simultaneous coverage, at least 95%)
``sd``                  per-wall differences of two policies (10% of walls differ); Bonett's
                        interval of the sd (:func:`caishen.sim.analysis.power.sd_interval`)
======================  =============================================================================

:func:`engine_coverage` does the same on real self-play: independent
replicate runs (disjoint seeds) of a small ``play_batch``, the truth a
symmetry gives exactly (a seat's mean score is 0 when every seat plays the
same bot and the first dealer is drawn uniformly, as J-2.2 draws it; K-3.2
seats the first dealer at seat 0, so there a seat's truth is not 0: pass a
rule set that draws it).  ``tests/test_interval_coverage.py`` runs every
scenario at the suite's size; the large runs' numbers are in
``docs/studies.md`` (``python notebooks/interval_coverage.py``).
"""

from __future__ import annotations

import math

import numpy as np
import pandas as pd

#: the near-identical scenario's points on a wall where the policies differ, and their probabilities
_MAGS = np.array([8, 12, 16, 24, 32, 48, 64, 96], np.float64)
_MAG_P = np.array([0.25, 0.2, 0.15, 0.12, 0.1, 0.08, 0.06, 0.04])


def _walls(rng, n_walls=200, mean=1.5, sd_wall=2.0, sd_row=1.0):
    sizes = rng.integers(1, 8, n_walls)
    walls = np.repeat(np.arange(n_walls), sizes)
    return mean + rng.normal(0, sd_wall, n_walls)[walls] + rng.normal(0, sd_row, len(walls)), walls


def _cluster_mean(rng):
    from caishen.sim.analysis.intervals import cluster_mean_ci

    y, walls = _walls(rng)
    return 1.5, cluster_mean_ci(y, walls)


def _naive_mean(rng):
    from caishen.sim.analysis.intervals import cluster_mean_ci

    y, _ = _walls(rng)
    return 1.5, cluster_mean_ci(y)


def _rate(rng):
    from caishen.sim.analysis.intervals import cluster_rate_ci

    n_walls = 300
    pw = rng.beta(2, 8, n_walls)  # mean 0.2
    walls = np.repeat(np.arange(n_walls), 4)
    return 0.2, cluster_rate_ci(rng.random(len(walls)) < pw[walls], walls)


def _ratio(rng):
    from caishen.sim.analysis.intervals import cluster_ratio_ci

    n_matches, hands = 150, 16
    won = rng.random((n_matches, hands)) < 0.9
    kind = rng.random((n_matches, hands)) < 0.1  # the hand type, 10% of hands
    points = np.where(won, np.where(kind, rng.exponential(40, won.shape), rng.exponential(10, won.shape)), 0.0)
    truth = 0.9 * 0.1 * 40 / (0.9 * (0.1 * 40 + 0.9 * 10))
    clusters = np.repeat(np.arange(n_matches), hands)
    return truth, cluster_ratio_ci(np.where(kind, points, 0).ravel(), points.ravel(), clusters)


def _paired(rng):
    from caishen.sim.analysis.intervals import cluster_diff_ci

    n_walls = 300
    w = rng.normal(0, 3, n_walls)
    a = w + 0.5 + rng.normal(0, 1, n_walls)
    b = w + rng.normal(0, 1, n_walls)
    return 0.5, cluster_diff_ci(a, np.arange(n_walls), b, np.arange(n_walls))


def _weighted(rng):
    from caishen.sim.analysis.piao_estimate import weighted_mean_ci

    n = 600
    chances = rng.integers(1, 5, n).astype(np.float64)  # the hand's chances: one studied per hand
    # a chance's value depends on how many chances its hand has: the weights matter
    values = rng.normal(2.0 - 0.5 * chances, 6.0)
    p = np.array([0.25, 0.25, 0.25, 0.25])
    truth = float((p * np.arange(1, 5) * (2.0 - 0.5 * np.arange(1, 5))).sum() / (p * np.arange(1, 5)).sum())
    return truth, weighted_mean_ci(values, chances, np.arange(n))


def _near(rng, n=1000, p=0.003, p_plus=0.6):
    k = rng.random(n) < p
    v = np.zeros(n)
    v[k] = rng.choice(_MAGS, int(k.sum()), p=_MAG_P) * np.where(rng.random(int(k.sum())) < p_plus, 1.0, -1.0)
    return p * float(_MAG_P @ _MAGS) * (2 * p_plus - 1), v


def _near_identical(rng):
    from caishen.sim.analysis.intervals import cluster_mean_ci

    truth, v = _near(rng)
    return truth, cluster_mean_ci(v)


def _near_identical_df(rng):
    from caishen.sim.analysis.intervals import cluster_mean_ci

    truth, v = _near(rng)
    return truth, cluster_mean_ci(v, df="satterthwaite")


def _pairwise(rng):
    from caishen.sim.analysis.piao_answer import pairwise

    n = 400
    wall = rng.normal(0, 5, n)
    means = {"a": 0.0, "b": 0.1, "c": 0.3, "d": 0.3}
    vals = {k: wall + m + rng.normal(0, 2, n) for k, m in means.items()}
    pw = pairwise(vals)
    ok = all(r.ci_low <= means[r.a] - means[r.b] <= r.ci_high for r in pw.itertuples(index=False))
    return 0.0, (0.0, -1.0, 1.0) if ok else (0.0, 1.0, 2.0)


def _sd(rng):
    from caishen.sim.analysis.power import sd_interval

    n, p = 2000, 0.1
    k = rng.random(n) < p
    v = np.where(k, rng.choice(_MAGS, n, p=_MAG_P) * np.where(rng.random(n) < 0.55, 1.0, -1.0), 0.0)
    second = float(p * (_MAG_P @ _MAGS ** 2))
    first = p * float(_MAG_P @ _MAGS) * 0.1
    return math.sqrt(second - first * first), sd_interval(v)


#: scenario name -> one replicate: ``rng -> (truth, (estimate, low, high))``
SCENARIOS = {"cluster_mean": _cluster_mean, "naive_mean": _naive_mean, "rate": _rate, "ratio": _ratio,
             "paired": _paired, "weighted": _weighted, "near_identical": _near_identical,
             "near_identical_df": _near_identical_df, "pairwise": _pairwise, "sd": _sd}


def coverage(scenario: str, reps: int = 1000, seed: int = 0) -> dict:
    """``{"scenario", "reps", "coverage", "low", "high", "width"}``: the share of ``reps`` replicates whose
    interval covers the truth, its 95% Wilson interval, and the mean interval width.  Raises ``ValueError``
    for an unknown scenario."""
    from caishen.sim.analysis.intervals import wilson

    if scenario not in SCENARIOS:
        raise ValueError(f"unknown scenario {scenario!r}; known: {', '.join(SCENARIOS)}")
    rng = np.random.default_rng(seed)
    hit = 0
    widths = []
    for _ in range(int(reps)):
        truth, (_, lo, hi) = SCENARIOS[scenario](rng)
        hit += bool(lo <= truth <= hi)
        widths.append(hi - lo)
    c, lo, hi = wilson(hit, int(reps))
    return {"scenario": scenario, "reps": int(reps), "coverage": c, "low": lo, "high": hi,
            "width": float(np.nanmean(widths))}


def engine_coverage(rules: str, reps: int = 40, hands: int = 320, policies: str = "greedy",
                    seed: int = 0) -> pd.DataFrame:
    """Replicate runs of real self-play (``reps`` runs of ``hands`` hands in sessions of 16, disjoint seeds):
    per seat, whether the 95% interval of its mean score per hand (clustered by session) covers 0, the truth
    by the seats' symmetry (``rules``: a rule set that draws the first dealer uniformly).  One row per seat:
    ``seat, reps, coverage, low, high`` (Wilson)."""
    from caishen.sim.analysis.intervals import cluster_mean_ci, wilson
    from caishen.sim.selfplay.batch import play_batch

    hits = np.zeros(4, np.int64)
    for r in range(int(reps)):
        cols = play_batch(int(hands), int(seed) * 100_003 + r, rules=rules, policies=policies)
        session = np.asarray(cols["hand"]) - np.asarray(cols["match_hand"])
        for s in range(4):
            _, lo, hi = cluster_mean_ci(np.asarray(cols[f"score_{s}"], np.float64), session)
            hits[s] += bool(lo <= 0.0 <= hi)
    rows = [(s, int(reps), *wilson(int(hits[s]), int(reps))) for s in range(4)]
    return pd.DataFrame(rows, columns=["seat", "reps", "coverage", "low", "high"])


def engine_near_identical(reps: int = 200, walls: int = 1000, policies=("piao_table", "always"),
                          field: str = "greedy", *, rules: str, seed: int = 0) -> pd.DataFrame:
    """Replicate sweeps of two near-identical hero policies on the same walls (``caishen sweep``'s chunk, the
    hero at each seat for a quarter of the walls): per replicate, the paired difference of the hero's points
    per wall with the t interval on ``G - 1`` and on the Satterthwaite degrees of freedom.  The truth is the
    pooled mean over every replicate's walls (``reps * walls`` walls; its own error is ``1 / sqrt(reps)`` of
    a replicate's).  One row per method: ``method, reps, walls, walls_differ`` (mean per replicate),
    ``truth, coverage, low, high`` (Wilson), ``width`` (mean)."""
    from caishen.sim.analysis import study
    from caishen.sim.analysis.intervals import cluster_mean_ci, wilson

    a, b = policies
    diffs = []
    for r in range(int(reps)):
        ent = int(seed) * 1_000_003 + r
        ya = study.wall_metrics(pd.DataFrame(study.sweep_chunk(rules, {}, (a, field, field, field), ent, walls)),
                                rules)["score"].to_numpy()
        yb = study.wall_metrics(pd.DataFrame(study.sweep_chunk(rules, {}, (b, field, field, field), ent, walls)),
                                rules)["score"].to_numpy()
        diffs.append(ya - yb)
    truth = float(np.mean(np.concatenate(diffs)))
    rows = []
    for method in ("clusters", "satterthwaite"):
        cis = [cluster_mean_ci(d, df=method) for d in diffs]
        hit = sum(lo <= truth <= hi for _, lo, hi in cis)
        rows.append((f"t on {'G - 1' if method == 'clusters' else 'Satterthwaite'} df", int(reps), int(walls),
                     float(np.mean([np.count_nonzero(d) for d in diffs])), truth, *wilson(hit, int(reps)),
                     float(np.mean([hi - lo for _, lo, hi in cis]))))
    return pd.DataFrame(rows, columns=["method", "reps", "walls", "walls_differ", "truth", "coverage", "low", "high",
                                       "width"])
