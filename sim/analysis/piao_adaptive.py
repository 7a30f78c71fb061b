"""An adaptive 飘 study: every seat plays the 飘 table estimated against the current field, until it settles.

Round 0 studies the base bot ``B`` itself (:func:`caishen.sim.analysis.piao_answer.run`'s
study: one chance per hand, 飘 now against keep now then decide again, the
field ``B`` at every seat) and takes its implied table ``T0``
(:func:`caishen.sim.analysis.piao_estimate.piao_table_bits`).  Round ``k >= 1``
makes the field ``piao_table:T(k-1):B`` at every seat -- every seat now
throws where the last table says -- and studies that field, giving ``Tk``.
The loop stops when a table repeats the previous one (**converged**), when
every cell that changed has an interval covering 0 (**settled**: the
changes are noise), when it returns to a table of an earlier round
(**cycle**), or after ``max_rounds``.

Each round reports its table, the cells that changed, its EV of 飘 minus
keep per chance (and where the field throws / keeps by itself), and its
**value against the previous field**: ``piao_table:Tk:B`` at one seat, the
previous field at the other three, against the previous field's own bot at
that seat, on the same duplicate walls (``caishen sweep``; paired 95%
interval over walls, Satterthwaite degrees of freedom).  Each round lives
in ``OUT/round-<k>/`` (the study and the check, resumable); the summary in
``OUT/adaptive.csv``, ``OUT/adaptive.json`` and ``OUT/adaptive.md``.
"""

from __future__ import annotations

import json
import time
from pathlib import Path

import pandas as pd

from caishen.sim import safeio
from caishen.sim.selfplay import rundir, runner

#: default size of a round: hands of its study, walls of its check; the most rounds
DEFAULT_HANDS = 200_000
DEFAULT_CHECK_WALLS = 10_000
DEFAULT_MAX_ROUNDS = 6


def _cells(bits: int) -> set[int]:
    return {c for c in range(64) if (int(bits) >> c) & 1}


def run_adaptive(rules: str, out, *, base: str = "greedy", hands: int = DEFAULT_HANDS, rollouts: int = 4,
                 check_walls: int = DEFAULT_CHECK_WALLS, max_rounds: int = DEFAULT_MAX_ROUNDS, seed: int = 0,
                 workers: int | None = None, progress: bool = True, options=None) -> dict:
    """Run (or resume) the adaptive study (module docstring) into ``out``; returns its summary.

    ``base``: the bot every table sits on (any spec a table can carry:
    :func:`caishen.sim.analysis.piao_answer.piao_base`); ``hands``,
    ``rollouts``: each round's study; ``check_walls``: each round's check
    (0 skips it); ``seed``: round ``k`` studies seed ``seed + 2 k`` and
    checks on ``seed + 2 k + 1`` (fresh walls each round); ``options``: rule
    options.  ``out`` is held while it runs (:func:`caishen.sim.selfplay.rundir.workspace`:
    its lock, no link inside).  Raises ``ValueError`` for a bad argument before anything runs.
    """
    from caishen.sim.analysis import piao_answer, piao_study, study

    piao_answer.check_rules(rules)
    base = piao_answer.piao_base(base)
    if isinstance(max_rounds, bool) or not isinstance(max_rounds, int) or not 1 <= max_rounds <= 50:
        raise ValueError(f"max_rounds {max_rounds!r}: must be an integer in 1..50")
    hands = piao_study._check_int("hands", hands, 1, 10**9)
    check_walls = piao_study._check_int("check_walls", check_walls, 0, 10**9)
    opts = piao_answer._option_dict(rules, options)
    ex = runner.Execution(workers=workers, progress=progress)
    out = Path(out)
    with rundir.workspace(out, "adaptive 飘 study"):  # one writer, no links inside
        rounds = []
        field = base
        seen: dict[int, int] = {}
        status = "max_rounds"
        t_all = time.perf_counter()
        for k in range(max_rounds):
            t0 = time.perf_counter()
            d = out / f"round-{k}"
            pts = piao_study.run_study(hands, seed + 2 * k, rollouts, "piao", field, opts or None, out=d / "study",
                                       per_hand=True, execution=ex)
            if len(pts) == 0:
                raise ValueError(f"no 飘 chance in {hands} hands of {field}: play more hands")
            est = piao_study.estimate(pts, by=(), split="own_choice")
            cells = piao_study.table_estimate(pts)
            bits = piao_study.piao_table_bits(pts, piao_answer.MIN_POINTS)
            prev_bits = rounds[-1]["bits"] if rounds else None
            changed = sorted(_cells(bits) ^ _cells(prev_bits)) if prev_bits is not None else sorted(_cells(bits))
            cell_t = cells.set_index("cell")
            noisy = all(not (cell_t.loc[c, "ci_low"] > 0 or cell_t.loc[c, "ci_high"] < 0) for c in changed)
            new = piao_answer.table_spec(bits, base)
            row = {"round": k, "field": field, "bits": int(bits), "table": new, "hex": f"0x{int(bits):016x}",
                   "cells_set": len(_cells(bits)), "changed_cells": changed, "changes_are_noise": bool(noisy),
                   "chances": int(pts["chances"].sum()), "studied": int(len(pts))}
            for g in ("all", "throws", "keeps"):
                r = est[(est["own_choice"] == g) & (est["feature"] == "all")]
                if len(r):
                    row[f"ev_{g}"] = [float(r.iloc[0][c]) for c in ("diff", "ci_low", "ci_high")]
                    row[f"points_{g}"] = int(r.iloc[0]["points"])
            if check_walls and new != field:
                sw = study.sweep(rules, d / "check", options=[f"{a}={v}" for a, v in opts.items()],
                                 policies=f"{new},{field}", field=field, walls=check_walls, seed=seed + 2 * k + 1,
                                 baseline=f"policy={field}", execution=ex)
                s = sw[(sw["metric"] == "score") & (sw["policy"] == new)].iloc[0]
                row["value_vs_previous_field"] = [float(s["diff"]), float(s["diff_low"]), float(s["diff_high"])]
                row["check_walls"] = int(check_walls)
            row["seconds"] = round(time.perf_counter() - t0, 1)
            rounds.append(row)
            _write(out, rules, base, rounds, status="running", seconds=time.perf_counter() - t_all, hands=hands,
                   check_walls=check_walls, seed=seed, options=opts)
            if prev_bits is not None and bits == prev_bits:
                status = "converged"
                break
            if bits in seen:
                status = f"cycle (round {k} repeats round {seen[bits]})"
                break
            if k > 0 and noisy:
                status = "settled (every changed cell's interval covers 0)"
                break
            seen[bits] = k
            field = new
        summary = _write(out, rules, base, rounds, status=status, seconds=time.perf_counter() - t_all, hands=hands,
                         check_walls=check_walls, seed=seed, options=opts)
        return summary


def _fmt(v) -> str:
    return "" if v is None else f"{v[0]:+.3f} [{v[1]:+.3f}, {v[2]:+.3f}]"


def _write(out: Path, rules, base, rounds, *, status, seconds, hands, check_walls, seed, options) -> dict:
    from caishen.sim.analysis import markdown as md

    t = pd.DataFrame([{"round": r["round"], "field": r["field"], "table": r["hex"], "cells set": r["cells_set"],
                       "cells changed": len(r["changed_cells"]), "changes are noise": r["changes_are_noise"],
                       "EV 飘 minus keep": _fmt(r.get("ev_all")), "where the field throws": _fmt(r.get("ev_throws")),
                       "where it keeps": _fmt(r.get("ev_keeps")),
                       "new table vs previous field": _fmt(r.get("value_vs_previous_field")),
                       "seconds": r["seconds"]} for r in rounds])
    safeio.atomic_write(out / "adaptive.csv", t.to_csv(index=False))
    doc = {"rules": rules, "base": base, "status": status, "hands_per_round": hands, "check_walls": check_walls,
           "seed": seed, "options": options, "seconds": round(seconds, 1), "rounds": rounds}
    safeio.atomic_write(out / "adaptive.json", json.dumps(doc, indent=1, ensure_ascii=False) + "\n")
    text = [f"# Adaptive 飘 study: {rules}, tables on `{base}`", "",
            f"Status: **{status}** after {len(rounds)} round(s), {seconds:,.0f} s; each round {hands:,} hands "
            f"(one chance per hand, R as the study's), check on {check_walls:,} duplicate walls; seed {seed} "
            "(round k studies seed + 2k, checks on seed + 2k + 1).", "",
            "EV per chance with 95% CI clustered by hand; the check is the new table's bot at one seat against the "
            "previous field's bot there, the previous field at the other three (points per hand, paired 95% CI "
            "over walls).", "", md.table(t), ""]
    safeio.atomic_write(out / "adaptive.md", "\n".join(text))
    return doc


def format_summary(doc: dict) -> str:
    """The summary as printed lines (a field's 飘 table by its cells, :func:`caishen.sim.bots.names.spec_words`;
    each round's table by its hex bits, the exact spec; wrapped to 100 columns)."""
    from caishen.sim.bots.names import spec_words
    from caishen.sim.termtext import wrap_lines

    lines = [f"adaptive 飘 study, {doc['rules']}, tables on {doc['base']}: {doc['status']} after {len(doc['rounds'])} "
             f"round(s) ({doc['seconds']:.0f} s)"]
    for r in doc["rounds"]:
        lines.append(f"  round {r['round']}: field {spec_words(str(r['field']))}; table {r['hex']} ({r['cells_set']} cells, "
                     f"{len(r['changed_cells'])} changed{', all within noise' if r['changes_are_noise'] else ''}); "
                     f"EV {_fmt(r.get('ev_all'))}; new table vs previous field "
                     f"{_fmt(r.get('value_vs_previous_field')) or 'not checked'}")
    return "\n".join(wrap_lines(lines, indent="      "))


def table_diff(a: int, b: int) -> list[int]:
    """The cells where the tables ``a`` and ``b`` differ."""
    return sorted(_cells(a) ^ _cells(b))

