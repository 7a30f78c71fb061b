"""Kaihua's own analysis: its balance tables, report figures, study metrics and studied decision (K-6, K-8, K-9).

The generic tools of :mod:`caishen.sim.analysis` reach this module through the
rule set's ``analysis`` hook (:data:`ANALYSIS`, a
:class:`caishen.sim.rules.base.Analysis`); it sits in the analysis layer
(``tests/test_layers.py``) although it lives in the rule set's folder, and
nothing below that layer imports it.

- :func:`hand_types` (:class:`HandTypes`): for each hand type of the (first)
  winner -- 平胡 (K-6.1), 爆头 (K-6.2), the 七对 family (K-6.3: 七对子, 清七对,
  七子爆头, 豪华, 去不去), 清一色 (K-6.4), chain links (K-6.5: any, kong
  links, 飘 links), and each exponent ``E`` -- its frequency (share of won
  hands), its mean points when it fires, and its share of all points paid.
  Types overlap (a 爆头 hand can be 清一色), so shares add up to more than 1.
- :func:`balance` (:class:`Balance`): the dealer's edge (dealer minus
  non-dealer mean score per seat-hand), seat balance (mean score by seat),
  how often a discard pays three shares (K-8.3: share of wins that are
  discard or robbed-kong wins, and their share of points), 飘 attempts and
  failed 飘.
- the report's hand-type figure, the sweep metrics ``piao`` and
  ``failed_piao`` (the hero threw a 财神, K-9.1; its 飘 failed, K-9.3), and
  the counterfactual decision ``piao`` of :mod:`caishen.sim.analysis.piao_study`.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from caishen.sim.analysis.balance import _add_dealer, _dealer_rows, _points
from caishen.sim.analysis.balance_tally import N_SEATS, _col, _Rows, _scores, _Table
from caishen.sim.rules.base import Analysis


def _hand_types() -> list[tuple[str, object]]:
    from caishen.sim.rules.kaihua import options as K

    def flag(bit):
        return lambda d: (d["hand_flags"] & bit) != 0

    return [
        ("平胡 pinghu (K-6.1)", flag(K.FLAG_PINGHU)),
        ("爆头 baotou (K-6.2)", flag(K.FLAG_BAOTOU)),
        ("七对 family qidui (K-6.3)", flag(K.FLAG_QIDUI)),
        ("清七对 qidui_pure (K-6.3)", flag(K.FLAG_QIDUI_PURE)),
        ("七子爆头 qidui_baotou (K-6.3)", flag(K.FLAG_QIDUI_BAOTOU)),
        ("豪华 haohua (K-6.3)", flag(K.FLAG_HAOHUA)),
        ("去不去 qubuqu (K-6.3)", flag(K.FLAG_QUBUQU)),
        ("清一色 qingyise (K-6.4)", flag(K.FLAG_QINGYISE)),
        ("chain links (K-6.5)", lambda d: d["chain_len"] > 0),
        ("kong links (K-6.5)", lambda d: d["chain_kong"] > 0),
        ("飘 piao links (K-9.1)", lambda d: d["chain_piao"] > 0),
    ]


class HandTypes(_Table):
    """:func:`hand_types` as a streaming reduction (K-6): per type and exponent, the cluster sums of its
    frequency, points when it fires and share of points."""

    NEEDS = ("win_type", *(f"score_{s}" for s in range(N_SEATS)), "hand_flags", "chain_len", "chain_kong",
             "chain_piao", "exponent")

    def __init__(self, columns):
        super().__init__(columns)
        self.types = _hand_types()

    def _add(self, df, b):
        s = self.sums
        won = _col(df, "win_type") >= 0
        points = _points(_scores(df))
        d = {c: _col(df, c) for c in ("hand_flags", "chain_len", "chain_kong", "chain_piao", "exponent")}
        exps = d["exponent"]
        groups = [(name, f(d)) for name, f in self.types]
        if won.any():
            s.seen.add("won")
            s.top["E"] = max(s.top.get("E", 0), int(exps[won].max()))
        seen = {k[1] for k in s.acc if k[0] == "frequency" and isinstance(k[1], int)}  # known exponents: zeros too
        groups += [(e, exps == e) for e in sorted(seen.union(np.unique(exps[won]).tolist()))]
        zero = np.zeros(b.n, np.int64)
        for key, hit in groups:  # an exponent first seen here starts from the all-zero sums of the batches before
            late = isinstance(key, int)
            h = hit & won
            s.mean(("frequency", key), b, h, won, base=("frequency", "zero") if late else None)
            s.mean(("points", key), b, points, h)
            s.ratio(("share", key), b, np.where(h, points, 0), points, won, base=("share", "zero") if late else None)
        s.mean(("frequency", "zero"), b, zero, won)
        s.ratio(("share", "zero"), b, zero, points, won)

    def frame(self) -> pd.DataFrame:
        from caishen.sim.analysis.intervals import ClusterMoments, ClusterRatioSums

        s = self.sums
        if "won" not in s.seen:
            raise ValueError("no won hand in the records")
        r = _Rows()
        keys = [(name, name) for name, _ in self.types] + [(e, f"E = {e}") for e in range(s.top["E"] + 1)]
        for key, name in keys:
            section = "hand type" if isinstance(key, str) else "exponent"
            f = s.acc.get(("frequency", key)) or s.acc[("frequency", "zero")]
            r.rate(section, "frequency", name, f)
            r.mean(section, "points when it fires", name, s.get(("points", key), ClusterMoments))
            share = s.acc.get(("share", key)) or s.get(("share", "zero"), ClusterRatioSums)
            r.add(section, "share of points", name, f.sy, *share.ci())
        return r.frame()


def hand_types(df: pd.DataFrame) -> pd.DataFrame:
    """Hand types and exponents of Kaihua wins: frequency, points when it fires, share of points.

    One row per (type, measure): ``section`` ``"hand type"`` or
    ``"exponent"``; ``metric`` ``"frequency"`` (share of won hands),
    ``"points when it fires"`` (mean points of the hand), ``"share of
    points"`` (its hands' points / all points); intervals over matches.
    :class:`HandTypes` applied to ``df`` as one batch (``run_tables``
    streams a run).  Raises ``ValueError`` without won hands.
    """
    return HandTypes(df.columns).add(df).frame()


class Balance(_Table):
    """:func:`balance` as a streaming reduction (dealer edge, seats, K-8.3 three shares, K-9 飘)."""

    NEEDS = ("dealer", "win_type", "winners_mask", *(f"score_{s}" for s in range(N_SEATS)))
    OPTIONAL = tuple(f"{c}_{s}" for c in ("piao", "failed_piao") for s in range(N_SEATS))

    def __init__(self, columns):
        super().__init__(columns)
        self.has_piao = all(c in self.available for c in self.OPTIONAL)

    def _add(self, df, b):
        s = self.sums
        sc = _scores(df)
        dealer = _col(df, "dealer")
        wt = _col(df, "win_type")
        _add_dealer(s, b, dealer, sc)
        mask = _col(df, "winners_mask")
        s.mean("win rate", b, (mask >> dealer) & 1)
        for seat in range(N_SEATS):
            s.mean(("score", seat), b, sc[:, seat])
            s.mean(("dealer share", seat), b, dealer == seat)
        won = wt >= 0
        points = _points(sc)
        s.mean("draw", b, ~won)
        disc = (wt == 1) | (wt == 2)
        s.mean("discard wins", b, disc, won)
        s.ratio("discard points", b, np.where(disc, points, 0), points, won)
        if self.has_piao:
            piao = np.concatenate([_col(df, f"piao_{k}") > 0 for k in range(N_SEATS)])
            failed = np.concatenate([_col(df, f"failed_piao_{k}") > 0 for k in range(N_SEATS)])
            s.mean("piao", b, piao, None, b.inv4)
            s.mean("failed piao", b, failed, piao, b.inv4)
            if piao.any():
                s.seen.add("piao")

    def frame(self) -> pd.DataFrame:
        from caishen.sim.analysis.intervals import ClusterMoments, ClusterRatioSums

        s = self.sums
        if s.hands == 0:
            raise ValueError("no hands in the records")
        m = lambda key: s.get(key, ClusterMoments)  # noqa: E731
        r = _Rows()
        _dealer_rows(r, s)
        r.rate("dealer", "win rate", "dealer", m("win rate"))
        for seat in range(N_SEATS):
            r.mean("seats", "score per hand", f"seat {seat}", m(("score", seat)))
            r.rate("seats", "dealer share", f"seat {seat}", m(("dealer share", seat)))
        r.rate("outcome", "draw rate (流局)", "all", m("draw"))
        wins = m("discard wins")
        r.rate("three shares (K-8.3)", "discard or robbed-kong wins", "share of wins", wins)
        r.add("three shares (K-8.3)", "points paid by a discarder", "share of points", wins.sn,
              *s.get("discard points", ClusterRatioSums).ci())
        if self.has_piao:
            r.rate("飘财 (K-9)", "attempt rate", "seat-hands", m("piao"))
            if "piao" in s.seen:
                r.rate("飘财 (K-9)", "failed rate (K-9.3)", "of attempts", m("failed piao"))
        return r.frame()


def balance(df: pd.DataFrame) -> pd.DataFrame:
    """Dealer edge, seat balance, three-share discards and 飘 rates of Kaihua records (intervals over matches).

    :class:`Balance` applied to ``df`` as one batch.  Raises ``ValueError`` without hands.
    """
    return Balance(df.columns).add(df).frame()


def _type_figures(page, plt, types: pd.DataFrame) -> None:
    from caishen.sim.analysis.report import _labels

    page.heading("Hand types (K-6)")
    f = types[types["metric"] == "frequency"]
    p = types[types["metric"] == "points when it fires"]
    s = types[types["metric"] == "share of points"]
    fig, axes = plt.subplots(1, 2, figsize=(11, 0.32 * len(f) + 1.8), sharey=True)
    for ax, t, title, lab in ((axes[0], f, "how often", "frequency (share of won hands)"),
                              (axes[1], s, "what share of the points", "share of all points paid")):
        v = t["value"].to_numpy()
        err = np.vstack([v - t["ci_low"].to_numpy(), t["ci_high"].to_numpy() - v])
        ax.barh(range(len(v)), v, xerr=np.where(np.isfinite(err), err, 0), color="#4c72b0", capsize=2)
        ax.set_yticks(range(len(v)), _labels(t["group"]))
        ax.set_title(f"hand types and exponents: {title}")
        ax.set_xlabel(lab)
        ax.set_xscale("log")
    axes[0].invert_yaxis()
    page.figure(fig, "hand-types", "Hand types and exponents (K-6): how often, and what share of the points "
                "they move (95% CI over matches; types overlap).")
    page.table(pd.concat([f, p, s]).sort_values(["section", "group"], kind="stable"))


def _piao_figure(page, plt, bal: pd.DataFrame) -> None:
    """The 飘财 figure (K-9): attempt rate per seat-hand and failed rate per attempt, with their intervals."""
    from caishen.sim.analysis.report import _bars

    t = bal[bal["section"] == "飘财 (K-9)"]
    if t.empty:
        return
    page.heading("飘财 piaocai (K-9)")
    names = {"attempt rate": "attempt rate (per seat-hand, K-9.1)", "failed rate (K-9.3)": "failed rate (per attempt, K-9.3)"}
    page.figure(_bars(plt, [names.get(m, m) for m in t["metric"]], t["value"], t["ci_low"], t["ci_high"],
                      "piaocai (K-9): how often a seat throws a caishen, and how often that fails",
                      "share (95% CI over matches)"), "piao",
                "飘财 (piaocai, K-9): the share of seat-hands with a 飘 (a 财神 thrown, K-9.1) and the share of "
                "attempts that failed (K-9.3).")


class KaihuaAnalysis(Analysis):
    """The hooks of :class:`caishen.sim.rules.base.Analysis` for Kaihua (module docstring)."""

    study_metrics = ("piao", "failed_piao")
    study_units = {"piao": "share of walls the hero threw a 财神 (飘财, K-9.1)",
                   "failed_piao": "share of walls a 飘 of the hero failed (K-9.3)"}
    study_stems = ("piao", "failed_piao")

    @property
    def decisions(self) -> dict[str, int]:
        from caishen.sim.analysis.piao_study import DECISION_PIAO

        return {"piao": DECISION_PIAO}

    def balance_tables(self, columns, options=None) -> dict:
        return {"hand_types": HandTypes(columns), "balance": Balance(columns)}

    def table_functions(self) -> tuple:
        return hand_types, balance

    glossary = {"财神": "caishen (the wildcard, 白板)", "飘财": "piaocai (throwing a caishen, K-9)",
                "飘": "piao", "平胡": "pinghu", "爆头": "baotou", "七对": "qidui", "清一色": "qingyise"}

    def report(self, page, plt, tables: dict) -> None:
        _type_figures(page, plt, tables["hand_types"])
        _piao_figure(page, plt, tables["balance"])
        page.heading("Balance")
        page.table(tables["balance"])

    def study_values(self, df: pd.DataFrame, idx: np.ndarray, hero: np.ndarray) -> dict:
        piao = np.stack([df[f"piao_{s}"].to_numpy(np.int64) for s in range(N_SEATS)], axis=1)
        failed = np.stack([df[f"failed_piao_{s}"].to_numpy(np.int64) for s in range(N_SEATS)], axis=1)
        return {"piao": piao[idx, hero] > 0, "failed_piao": failed[idx, hero] > 0}

    example_columns = ("winner", "exponent", *(f"failed_piao_{s}" for s in range(N_SEATS)))

    def example_hands(self, df: pd.DataFrame, options) -> dict:
        failed = np.stack([df[f"failed_piao_{s}"].to_numpy(np.int64) for s in range(N_SEATS)], axis=1)
        out = {"a failed 飘 (K-9.3)": failed.any(axis=1)}
        cap = options.max_exponent
        label = "a capped win (exponent at max_exponent, K-6.6)"
        if cap is None:
            out[label] = "none (no cap: max_exponent is None)"
        else:
            out[label] = (df["winner"].to_numpy() >= 0) & (df["exponent"].to_numpy(np.int64) >= cap)
        return out


#: the rule set's analysis hooks (``RuleSet.analysis``)
ANALYSIS = KaihuaAnalysis()
