"""The records contract of a Kaihua hand (K-10): the columns of ``caishen simulate``'s Parquet files.

The engine fills them (:data:`caishen.sim.engine.RECORD_COLUMNS`, same order):
its generic record fields (joker, joker discards, their circle, the chain's
joker links) are recorded under Kaihua's own names, :data:`FIELD_COLUMNS`
(the 财神 / 飘 columns, ``RuleSet.field_columns``;
:func:`caishen.sim.rules.records.engine_columns`);
:func:`caishen.sim.rules.records.check_chunk` checks a chunk against :data:`COLUMNS`.
"""

from __future__ import annotations

import numpy as np

from caishen.sim.rules.records import COMMON_COLUMNS, COMMON_END_COLUMNS, COMMON_TAIL_COLUMNS, SEATS

#: Kaihua's column stems of the engine's generic record fields (``caishen.sim.rules.records.RECORD_DTYPE``, K-10)
FIELD_COLUMNS: dict[str, str] = {
    "chain_joker": "chain_piao",  # the winner's 飘财 chain links (K-6.5, K-9.1)
    "jokers_held": "caishen",  # 财神 each seat holds at the end (K-2.1)
    "joker_discards": "piao",  # 飘财 attempts: 财神 discards (K-9.1)
    "circle_failed": "failed_piao",  # failed 飘 (K-9.3)
}

#: the record columns of a Kaihua hand, in the contract's order (:mod:`caishen.sim.rules.records`)
COLUMNS: tuple[tuple[str, np.dtype], ...] = (
    *COMMON_COLUMNS,
    ("exponent", np.dtype(np.int8)),  # K-6 exponent E of the (first) winner, 0 on a draw
    ("hand_flags", np.dtype(np.int32)),  # caishen.sim.rules.kaihua FLAG_* bits (not "flags": pandas.DataFrame.flags)
    ("chain_len", np.dtype(np.int8)),  # the winner's chain (K-6.5)
    ("chain_piao", np.dtype(np.int8)),  # ... its 飘 links
    ("chain_kong", np.dtype(np.int8)),  # ... its kong links
    *COMMON_TAIL_COLUMNS,
    *((f"caishen_{s}", np.dtype(np.int8)) for s in SEATS),  # 财神 held at the end
    *((f"piao_{s}", np.dtype(np.int16)) for s in SEATS),  # 飘财 attempts (K-9.1)
    *((f"failed_piao_{s}", np.dtype(np.int8)) for s in SEATS),  # failed 飘 (K-9.3)
    *COMMON_END_COLUMNS,
)
