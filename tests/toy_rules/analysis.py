"""The toy's analysis hook: one balance table (its ``hand_kinds``) and one sweep metric."""

from __future__ import annotations

import numpy as np
import pandas as pd

from caishen.sim.rules.base import Analysis


class KindsTable:
    """Mean ``hand_kinds`` of the won hands, streamed (``add``, ``frame``; what ``run_tables`` feeds)."""

    def __init__(self, columns):
        self.n = 0
        self.total = 0

    def columns(self) -> list[str]:
        return ["hand_kinds"]

    def add(self, df) -> "KindsTable":
        k = np.asarray(df["hand_kinds"], np.int64)
        self.n += int((k >= 0).sum())
        self.total += int(k[k >= 0].sum())
        return self

    def frame(self) -> pd.DataFrame:
        return pd.DataFrame({"metric": ["mean hand_kinds of a win"], "n": [self.n],
                             "value": [self.total / self.n if self.n else float("nan")]})


def kinds(df) -> pd.DataFrame:
    return KindsTable(df.columns).add(df).frame()


class ToyAnalysis(Analysis):
    study_stems = ()
    study_metrics = ("hero_won_big",)

    def balance_tables(self, columns, options=None) -> dict:
        return {"kinds": KindsTable(columns)}

    def table_functions(self) -> tuple:
        return (kinds,)

    def report(self, page, plt, tables) -> None:
        page.heading("Hand kinds (toy)")
        page.table(tables["kinds"])

    def study_values(self, df, idx, hero) -> dict:
        scores = np.stack([df[f"score_{s}"].to_numpy(np.int64) for s in range(4)], axis=1)
        return {"hero_won_big": scores[idx, hero] >= 8}


ANALYSIS = ToyAnalysis()
