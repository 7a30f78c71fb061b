"""``caishen balance --rules R``: one reproducible report that answers "is this rule set balanced?".

:func:`run_balance` plays, into a directory ``OUT`` (every part resumable:
rerun the same command):

1. **Self-play sessions** for each bot of ``bots`` (default: greedy and the
   rule set's shipped tuned and learned bots), the bot at every seat,
   ``hands`` hands in sessions of 16 (``caishen simulate``'s runs, one per
   bot, in ``OUT/runs/``; the same seed, so the same walls where the bots
   play alike).
2. **Option checks** (``OUT/options/<option>/``, a ``caishen sweep`` each,
   the first bot at every seat): every declared rule option of a scalar
   type at its other values (:func:`option_values`: a bool's other value,
   a choice's other choices, an int's default halved and 1.5x, or -1 / +1
   when small; an option whose default is None or that is no scalar is
   left at its default) on the same duplicate walls as its default.

and writes ``OUT/balance.md`` and ``OUT/report.html`` (the same report:
Markdown with its figures ``OUT/fig-*.png`` beside it, and one
self-contained page) and the tables as CSV, answering with 95% intervals:

- **dealer edge**: the dealer's points per hand minus a non-dealer's, per
  bot (the rule set's balance table; intervals over sessions);
- **seat fairness over sessions**: placement rates and mean placement by
  starting seat, ties shared (:mod:`caishen.sim.analysis.sessions`);
- **score distribution and tails** of a session's total per starting seat
  (sd, quantiles, expected shortfall, tail probabilities);
- **hand types' value against frequency** (the rule set's hand-type or
  pattern table, plotted log-log with intervals);
- **sensitivity to bot strength**: every row of the rule set's balance
  table, the bots side by side;
- **the options that move it most**: each option value's paired difference
  in the dealer edge (``4/3`` of the dealer's points on one-hand walls:
  the four seats' points sum to zero), points moved per hand and draw
  rate, ranked by the dealer edge's change.

The top of the report states the command, the seed, the bots, the sizes,
every rule option's value (the readings of the rule text in force), the
machine (cores, load) and the time it took; the answers table states each
headline's half-width against its target (:data:`TARGETS`) and, where the
target is missed, how many hands would meet it.  Options that only change
the dealer's rotation (K-3.3, J-2.3) cannot move anything on one-hand walls;
the report says so for an option whose every difference is exactly 0.
"""

from __future__ import annotations

import json
import math
import os
import shlex
import time
from pathlib import Path


from caishen.sim import safeio
from caishen.sim.selfplay import rundir
from caishen.sim.analysis.balance_sections import TARGETS  # noqa: F401  (the report's targets: public here too)

#: default size: hands per bot (sessions of 16; measured in docs/studies.md), walls per option value
DEFAULT_HANDS = 320_000
DEFAULT_OPTION_WALLS = 20_000
SESSION_HANDS = 16
BALANCE_JSON, BALANCE_MD = "balance.json", "balance.md"
RUNS_DIR, OPTIONS_DIR = "runs", "options"


def default_bots(rules: str) -> list[str]:
    """``greedy``, then the rule set's shipped ``tuned:R`` and ``learned:R`` where they ship."""
    from caishen.sim.bots import registry

    bots = ["greedy"]
    if rules in registry.shipped_tuned():
        bots.append(f"tuned:{rules}")
    if rules in registry.shipped_learned():
        bots.append(f"learned:{rules}")
    return bots


def option_values(rules: str) -> dict[str, list]:
    """``{option: [default, other values...]}`` that the option checks play (module docstring)."""
    from typing import Literal, get_args, get_origin

    from caishen.sim.rules import base as rulesets

    out = {}
    for d in rulesets.get(rules).options.declarations():
        v = d.default
        if d.type is bool:
            out[d.name] = [v, not v]
        elif get_origin(d.type) is Literal:
            out[d.name] = [v, *[c for c in get_args(d.type) if c != v]]
        elif isinstance(v, int) and not isinstance(v, bool):
            cand = [v - 1, v + 1] if abs(v) <= 4 else [int(round(v / 2)), int(round(1.5 * v))]
            lo = -math.inf if d.lo is None else d.lo
            hi = math.inf if d.hi is None else d.hi
            alts = [c for c in dict.fromkeys(cand) if lo <= c <= hi and c != v]
            if alts:
                out[d.name] = [v, *alts]
    return out


def _slug(spec: str) -> str:
    return "".join(c if c.isalnum() or c in "-_" else "_" for c in spec)


def _machine() -> str:
    try:
        load = "/".join(f"{x:.1f}" for x in os.getloadavg())
    except OSError:
        load = "?"
    return f"{os.cpu_count()} cores, load average {load} (1/5/15 min)"


def _config(rules, hands, seed, bots, option_walls, options) -> dict:
    from caishen.sim import __version__
    from caishen.sim.selfplay import runner

    return {"kind": "balance", "rules": rules, "hands": int(hands), "seed": int(seed), "bots": list(bots),
            "option_walls": int(option_walls), "options": options, "session_hands": SESSION_HANDS,
            "version": __version__, "source_digest": runner.source_digest()}


def read_balance_json(out) -> dict:
    """The stored ``balance.json`` of ``out`` (``ValueError`` when there is none; a link, a file that is not
    regular, too large or not a JSON object is a :class:`caishen.sim.safeio.FileError` naming it)."""
    return rundir.read_marker(out, "balance report", BALANCE_JSON, 1 << 20)[0]


#: a balance report's directory (:mod:`caishen.sim.selfplay.rundir`): balance.json, then a run per bot and a
#: sweep per option
BALANCE = rundir.Kind("balance report", BALANCE_JSON, read_balance_json, writer="balance report")


def run_balance(rules: str, out, *, hands: int = DEFAULT_HANDS, seed: int = 0, bots=None,
                option_walls: int = DEFAULT_OPTION_WALLS, workers: int | None = None, progress: bool = True) -> dict:
    """Play (or resume) the balance report's runs into ``out`` and write the report; returns its answers.

    ``rules``: a registered rule set; ``hands``: hands per bot (at least 16,
    rounded up to whole sessions of 16); ``seed``: the runs' seed (the option
    checks play ``seed + 1``); ``bots``: specs, each plays every seat of its
    own run (default :func:`default_bots`); ``option_walls``: walls per
    option value (0 skips the option checks); ``workers``: processes.
    The report states the command that makes it again (every argument that
    shapes its numbers).  Raises ``ValueError`` naming a bad argument
    before anything is written.
    """
    from caishen.sim.analysis import study
    from caishen.sim.bots import registry
    from caishen.sim.selfplay import runner

    if rules not in runner.available_rules():
        raise ValueError(f"unknown rule set {rules!r}; available: {', '.join(runner.available_rules())}")
    if isinstance(hands, bool) or not isinstance(hands, int) or not SESSION_HANDS <= hands <= 10**10:
        raise ValueError(f"hands {hands!r}: must be an integer in {SESSION_HANDS}..10**10")
    if isinstance(option_walls, bool) or not isinstance(option_walls, int) or not 0 <= option_walls <= 10**9:
        raise ValueError(f"option walls {option_walls!r}: must be an integer in 0..10**9")
    hands = -(-hands // SESSION_HANDS) * SESSION_HANDS
    bots = default_bots(rules) if bots is None else [registry.normalize(b) for b in
                                                      (bots.split(",") if isinstance(bots, str) else bots)]
    if not bots or len(set(bots)) != len(bots):
        raise ValueError(f"bots {bots!r}: give one or more different bot specs")
    chunk = runner.DEFAULT_CHUNK_SIZE // SESSION_HANDS * SESSION_HANDS  # whole sessions in every chunk
    configs = [runner.make_config(rules, hands, seed, policies=b, chunk_size=min(chunk, hands)) for b in bots]
    opt_values = option_values(rules) if option_walls else {}
    config = _config(rules, hands, seed, bots, option_walls, {k: [str(x) for x in v] for k, v in opt_values.items()})
    out = Path(out)
    command = (f"caishen balance --rules {rules} --hands {hands} --seed {seed} --bots {','.join(bots)} "
               f"--option-walls {option_walls} --out {shlex.quote(str(out))}")
    with rundir.claim(out, BALANCE, config):  # checked, locked, no links; the same config resumes
        t0 = time.perf_counter()
        machine_start = _machine()
        run_dirs = []
        for b, cfg in zip(bots, configs):
            d = out / RUNS_DIR / _slug(b)
            if progress:
                import sys

                print(f"caishen balance: {hands:,} hands of {b} at every seat -> {d}", file=sys.stderr)
            runner.run(cfg, d, workers=workers, progress=progress)
            run_dirs.append(d)
        sweeps = {}
        for name, values in opt_values.items():
            d = out / OPTIONS_DIR / name
            sweeps[name] = study.sweep(rules, d, options=[f"{name}={','.join(map(str, values))}"], field=bots[0],
                                       walls=option_walls, seed=seed + 1,
                                       execution=runner.Execution(workers, progress=progress))
        from caishen.sim.analysis import balance_sections

        result = balance_sections.write(out, rules, bots, run_dirs, sweeps, config, command=command,
                                        machine=f"{machine_start} at the start, {_machine()} at the end",
                                        seconds=time.perf_counter() - t0)
        safeio.atomic_write(out / "answers.json", json.dumps(result, indent=1, ensure_ascii=False) + "\n")
        return result
