"""Golden runs: fixed-seed self-play through the runner, reduced to one digest per run.

A refactoring or a speed-up must not move a single record.  Each run below
plays a few thousand hands through ``caishen.sim.selfplay.runner.run`` (the same path as
``caishen simulate``: chunks, Parquet), reads the rows back and hashes them
column by column (name, dtype, values).  ``tests/golden/records.json`` holds
the digests taken when the behaviour was last changed on purpose; the test
compares against it.  After a deliberate rule change, regenerate it with::

    python tests/golden_runs.py --update

and say in the commit why the records moved.
"""

from __future__ import annotations

import hashlib
import json
import sys
import tempfile
from pathlib import Path

import numpy as np

GOLDEN = Path(__file__).parent / "golden" / "records.json"

#: name -> (rules, policies, options, games, seed, chunk_size)
RUNS = {
    "kaihua_random": ("kaihua", "random", {}, 3000, 11, 1000),
    "kaihua_greedy_piao": ("kaihua", "greedy,always,never,threshold:30", {}, 2000, 12, 1000),
    "kaihua_options": ("kaihua", "greedy,random,always,greedy",
                       {"multiple_ron": True, "failed_piao_factor": 1, "dealer_rotation": "winner_stays"},
                       1000, 13, 500),
    "jiating_random": ("jiating", "random", {}, 2000, 21, 1000),
    "jiating_greedy": ("jiating", "greedy", {}, 2000, 22, 1000),
}


def run_digest(name: str) -> dict:
    """Play golden run ``name`` into a temporary directory; ``{"rows", "digest"}``."""
    from caishen.sim.selfplay import runner, stream

    rules, policies, options, games, seed, chunk = RUNS[name]
    config = runner.make_config(rules, games, seed, policies=policies, options=options, chunk_size=chunk)
    with tempfile.TemporaryDirectory() as d:
        runner.run(config, d, workers=1, progress=False)
        df = stream.read_run(d)
    h = hashlib.sha256()
    for col in sorted(df.columns):
        values = df[col].to_numpy()
        h.update(col.encode())
        h.update(str(values.dtype).encode())
        h.update(np.ascontiguousarray(values).tobytes() if values.dtype != object
                 else json.dumps([str(v) for v in values]).encode())
    return {"rows": int(len(df)), "columns": int(len(df.columns)), "digest": h.hexdigest()}


def main(argv: list[str]) -> int:
    got = {name: run_digest(name) for name in RUNS}
    if "--update" in argv:
        GOLDEN.parent.mkdir(exist_ok=True)
        GOLDEN.write_text(json.dumps(got, indent=2, sort_keys=True) + "\n")
        print(f"wrote {GOLDEN}")
    else:
        print(json.dumps(got, indent=2, sort_keys=True))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
