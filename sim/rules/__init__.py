"""Rule sets: one module per rule set (``kaihua``, ``jiating``) plus the
validated options machinery in :mod:`caishen.sim.rules.options`.

Rule sets import the hand kernels (:mod:`caishen.sim.hand`), never the engine.
"""
