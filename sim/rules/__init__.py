"""Rule sets: one module per rule set (``kaihua``, ``jiating``) plus the
validated options machinery in :mod:`sim.rules.options`.

Rule sets import the hand kernels (:mod:`sim.hand`), never the engine.
"""
