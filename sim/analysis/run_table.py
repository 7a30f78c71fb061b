"""A run's table read as words (:func:`read_run`, ``caishen.read_run``) and the record schema page.

The Parquet files keep integer codes (``win_type`` 1, ``hand_flags`` 6,
``win_tile`` 10): they are compact, the runs' resume checks and the golden
digests (``tests/test_golden.py``) are taken over them, and the analysis
counts them.  :func:`read_run` reads a run's verified chunks (those
:func:`caishen.sim.selfplay.stream.verified_chunk_files` finds recorded as
finished by the manifest and intact, whatever else sits in the folder) and
turns every coded column into words with the decoders of :mod:`caishen.sim.rules.words` (the
same words as :attr:`caishen.sim.engine.Game.result`): categories
(``win_type``: ``self_draw`` / ``discard_win`` / ``robbed_kong`` /
``draw``; tiles in mpsz; declarations; a match's ``policy_s`` as the bot
spec it names), named booleans (``won_0`` .. ``won_3`` for
``winners_mask``, a rule set's hand-type flags, 0/1 columns), patterns with
their names.  ``codes=True`` returns the stored integers.

:func:`schema_markdown` writes ``docs/schema.md``: every column a run can
hold (the run's, the records contract of :mod:`caishen.sim.rules.records`
and of each registered rule set, the self-play and match / sweep columns),
how it is stored, how :func:`read_run` shows it and what it means.  The
meanings are data (:data:`caishen.sim.rules.words.COMMON_DOCS`, each rule
set's ``words`` hook, :data:`RUN_DOCS` here), and ``tests/test_run_table.py``
checks that the page is the generated one and that every column of real runs
is documented.  Regenerate it with::

    python -m caishen.sim.analysis.run_table > docs/schema.md
"""

from __future__ import annotations

import os
import re
import sys
import warnings
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq

from caishen.sim.rules import base as _rulesets
from caishen.sim.rules import records as _contract
from caishen.sim.rules import words as _words
from caishen.sim.selfplay import records, rundir, stream

N_SEATS = 4

#: the meaning of the columns the play layer adds (the run's own, self-play's, a match's and a sweep's)
RUN_DOCS: dict[str, str] = {
    "seed": "the run's root seed (--seed)",
    "chunk": "the chunk's index 0 .. n_chunks-1",
    "hand_id": "the hand's index in the run: chunk x chunk_size + hand (caishen replay RUN --hand N)",
    "piao_chance_<s>": "seat s had a 飘 chance: on some own turn it held a joker and was ready without it (the "
                       "summary's comparable non-飘 group); self-play of a rule set with a joker only",
    "wall": "a match: the wall's index in its chunk",
    "seating": "a match: the seating 0..n-1 (a rotation of the policies over the seats)",
    "wall_seed": "a match: the seed of the wall, the same in every seating (duplicate deals)",
    "policy_<s>": "a match: the bot in seat s, stored as its index in the match's --policies, read as its spec",
    "hero": "a sweep: the seat of the hero policy",
}
#: decoders of the columns the play layer adds (a match's ``policy_s`` is decoded per run, :func:`decoders`)
RUN_DECODERS: dict[str, Any] = {f"piao_chance_{s}": _words.Flag() for s in range(N_SEATS)}


def doc_key(column: str) -> str:
    """The key of ``column``'s meaning: a seat's column as ``name_<s>`` (``score_2`` -> ``score_<s>``),
    a pair's as ``name_<p>_<w>`` (``pay_0_1``), any other column itself."""
    m = re.fullmatch(r"(.+)_[0-3]_[0-3]", column)
    if m:
        return f"{m.group(1)}_<p>_<w>"
    m = re.fullmatch(r"(.+)_[0-3]", column)
    return f"{m.group(1)}_<s>" if m else column


def docs(rules: str | None = None) -> dict[str, str]:
    """``{doc key: meaning}`` of every column a run of ``rules`` can hold (every registered rule set's
    when None)."""
    names = _rulesets.names() if rules is None else (rules,)
    out = {**RUN_DOCS, **_words.COMMON_DOCS}
    for name in names:
        out.update(_rulesets.get(name).words_hooks().docs)
    return out


def decoders(meta: dict) -> dict[str, Any]:
    """``{column: decoder}`` for the records of the run whose run.json is ``meta``: the common ones, its
    rule set's (when registered in this process) and the play layer's; a match's ``policy_s`` reads as
    the spec of the bot (run.json's ``policies``: the specs as given, then repeated to fill four seats)."""
    rules = meta.get("rules")
    decs = {**_words.COMMON_DECODERS, **RUN_DECODERS}
    if isinstance(rules, str) and rules in _rulesets.names():
        decs.update(_words.decoders(rules))
    chunk_fn = str(meta.get("chunk_fn", ""))
    if chunk_fn in records.CHUNK_FN_COLUMNS and any(c == "policy_0" for c, _ in records.CHUNK_FN_COLUMNS[chunk_fn]):
        from caishen.sim.analysis import arena

        n = arena.n_policies_of(meta)
        specs = _words.Codes({i: str(p) for i, p in enumerate(list(meta["policies"])[:n])})
        decs.update({f"policy_{s}": specs for s in range(N_SEATS)})
    return decs


def to_frame(cols: dict[str, Any], index=None) -> pd.DataFrame:
    """Decoded columns (:func:`caishen.sim.rules.words.decode_columns`) as a DataFrame: a
    :class:`~caishen.sim.rules.words.Categories` as a pandas categorical, the rest as they are."""
    data = {}
    for name, v in cols.items():
        if isinstance(v, _words.Categories):
            data[name] = pd.Categorical.from_codes(v.codes, categories=list(v.categories))
        else:
            data[name] = v
    return pd.DataFrame(data, index=index)


def words_frame(df: pd.DataFrame, meta: dict) -> pd.DataFrame:
    """The records ``df`` (stored codes) of the run whose run.json is ``meta``, read as words.

    Raises ``ValueError`` naming a column that holds a value that is no code of it.
    """
    decs = decoders(meta)
    cols = {c: (df[c].to_numpy() if c in decs else df[c]) for c in df.columns}
    return to_frame(_words.decode_columns(cols, decs), index=df.index)


def read_run(run_dir: str | os.PathLike, columns: list[str] | None = None, *, codes: bool = False) -> pd.DataFrame:
    """A run's table, one row per hand in ``hand_id`` order, read as words (module docstring).

    ``run_dir``: a ``caishen simulate``, ``match`` or ``sweep`` run directory (a ladder's pairs are
    matches).  Only the chunks its manifest records as finished and whose files verify
    (:func:`caishen.sim.selfplay.stream.verified_chunk_files`) are read: a stray file in ``RUN/chunks/`` is
    ignored, a chunk file without its manifest line (a run stopped between the two) is left out with a
    warning, a run still going is read as far as it got.  ``columns``: read only these stored columns
    (``hand_id`` is always read).  ``codes=True``: the stored integer codes, as in the Parquet files.
    Column meanings: ``docs/schema.md``.

    Raises ``ValueError`` (or :class:`caishen.sim.safeio.FileError`) naming the folder: not a run
    directory, no finished chunk, a damaged chunk (named; rerun the run's command to replay it), a
    column the chunks lack.
    """
    meta = rundir.read_run_json(run_dir)
    if columns is not None:
        if isinstance(columns, str) or not all(isinstance(c, str) for c in columns):
            raise ValueError(f"columns must be a list of column names, got {columns!r}")
        columns = [*columns, *(["hand_id"] if "hand_id" not in columns else [])]
    files, check = stream.verified_chunk_files(run_dir, meta)
    unrecorded = check.by_state("unrecorded")
    if len(unrecorded) < len(check.problems):
        raise ValueError(f"{str(run_dir)!r} has damaged chunks: " + "; ".join(check.describe(5))
                         + "; rerun its command (caishen simulate --resume RUN) to replay them")
    if unrecorded:
        warnings.warn(f"{str(run_dir)!r}: left out chunk(s) {', '.join(map(str, unrecorded[:10]))} without a "
                      "manifest line (the run stopped before recording them; --resume replays them)", stacklevel=2)
    if not files:
        raise ValueError(f"no finished chunk in {str(run_dir)!r} (expected "
                         f"{str(Path(run_dir) / records.CHUNKS_DIR)}/chunk-*.parquet with a manifest line)")
    names = stream.column_names(files)
    missing = [c for c in (columns or ()) if c not in names]
    if missing:
        raise ValueError(f"{str(run_dir)!r} has no column(s) {', '.join(map(repr, missing))} "
                         "(the columns: docs/schema.md)")
    batches = list(stream.record_batches(files, columns or names))
    table = pa.Table.from_batches(batches) if batches else pq.read_schema(files[0]).empty_table()
    df = table.to_pandas().sort_values("hand_id", kind="stable").reset_index(drop=True)
    return df if codes else words_frame(df, meta)


# ---------------------------------------------------------------------------
# the schema page
# ---------------------------------------------------------------------------
def _dtype(dt) -> str:
    return "string" if np.dtype(dt) == np.dtype(object) else str(np.dtype(dt))


def _read_as(column: str, decs: dict) -> str:
    dec = decs.get(column)
    return "as stored" if dec is None else dec.describe()


def _rows(cols, decs: dict, meanings: dict[str, str], seen: set[str]) -> list[str]:
    """Markdown table rows of ``cols`` (``(name, dtype)``), a family of seat columns once (``score_<s>``),
    each bit column of a :class:`~caishen.sim.rules.words.Bits` after its mask."""
    out = []
    for name, dt in cols:
        key = doc_key(name)
        if key in seen:
            continue
        seen.add(key)
        out.append(f"| `{key}` | {_dtype(dt)} | {_read_as(name, decs)} | {meanings.get(key, '')} |")
        dec = decs.get(name)
        if isinstance(dec, _words.Bits):
            for bit_col in dec.bits.values():
                bkey = doc_key(bit_col)
                if bkey not in seen:
                    seen.add(bkey)
                    out.append(f"| `{bkey}` | (a bit of `{name}`) | bool | {meanings.get(bkey, '')} |")
    return out


_HEAD = ["| column | stored as | read as (`caishen.read_run`) | meaning |", "|---|---|---|---|"]

_INTRO = """# Record schema

Every run directory (`caishen simulate`, `caishen match`, `caishen sweep`; a ladder's pairs are
matches) stores one row per hand in Parquet files, `RUN/chunks/chunk-NNNNN.parquet`.  Read a run's
table with

```python
import caishen

df = caishen.read_run("runs/r1")              # words: categories, named booleans, tiles as '5z'
raw = caishen.read_run("runs/r1", codes=True)  # the stored integer codes
```

`caishen.read_run` reads only the chunks the run's manifest records as finished (a stray file in
`RUN/chunks/` is ignored, a chunk file without its manifest line is left out with a warning; a damaged
chunk is named, and `caishen simulate --resume RUN` replays it).
The files keep integer codes, which are compact and what the resume checks and the golden digests
are taken over; the words are made on reading, the same words as `Game.result` (`Game.record` holds
the codes).  A seat's columns are written once as `name_<s>` (seats 0..3); `pay_<p>_<w>` is one
column per payer `p` and winner `w`.  Seats are integers 0..3 and -1 where there is none.

This page is generated from the records contract (`python -m caishen.sim.analysis.run_table >
docs/schema.md`); a test checks it against the code and against real runs.
"""


def schema_markdown() -> str:
    """The record schema page ``docs/schema.md`` (module docstring), generated from the contract."""
    every = docs()
    common = (*_contract.COMMON_COLUMNS, *_contract.COMMON_TAIL_COLUMNS, *_contract.COMMON_END_COLUMNS)
    common_names = {c for c, _ in common}
    parts = [_INTRO]
    seen: set[str] = set()
    parts += ["## Every run", "", *_HEAD,
              *_rows(records.RUN_COLUMNS, {}, every, seen), ""]
    parts += ["## Every rule set", "", *_HEAD, *_rows(common, _words.COMMON_DECODERS, every, seen), ""]
    for name in _rulesets.names():
        rs = _rulesets.get(name)
        own = [(c, dt) for c, dt in _contract.record_columns(name) if c not in common_names]
        decs = {**_words.COMMON_DECODERS, **_words.decoders(name)}
        title = rs.title or name
        rows = _rows(own, decs, every, seen)
        if rs.facts.get("joker", -1) >= 0:
            rows += _rows([(f"piao_chance_{s}", np.int8) for s in range(N_SEATS)], RUN_DECODERS, every, seen)
        parts += [f"## {title} (`--rules {name}`)", "", *_HEAD, *rows, ""]
    match = next(cols for fn, cols in records.CHUNK_FN_COLUMNS.items() if any(c == "wall" for c, _ in cols))
    policy = _words.Text(str, "category: the bot's spec ('greedy', 'tuned:NAME', ...)")
    parts += ["## A match (`caishen match`, a ladder's pairs)", "", *_HEAD,
              *_rows(match, {f"policy_{s}": policy for s in range(N_SEATS)}, every, seen), ""]
    sweep = next(cols for cols in records.CHUNK_FN_COLUMNS.values() if any(c == "hero" for c, _ in cols))
    parts += ["## A sweep (`caishen sweep`)", "", *_HEAD, *_rows(sweep, {}, every, seen), ""]
    return "\n".join(parts)


if __name__ == "__main__":  # python -m caishen.sim.analysis.run_table > docs/schema.md
    sys.stdout.write(schema_markdown())
