"""The bots: every kernel bot and every bot with data, and the one registry of their specs.

====================  ======================================================================
module                what it is
====================  ======================================================================
``features``          the observation feature sets: named, versioned tables and their numba
                      encoders (the envs' observations, the learned bots' inputs)
``policies``          the kernel policies (``random``, ``greedy``, ``greedy_safe``, the 飘
                      policies ``never`` / ``always`` / ``threshold:N``) and the danger model
``piao_table``        the ``piao_table`` policy: 飘 where a measured table says it pays
``tuned``             the parametric bot (a linear score over features its seat can see)
``search``            the search bot ``mc:N`` (determinized rollouts)
``learned_file``      the learned bots' weights file (npz + JSON header, validated) and the
                      kernel row it becomes
``learned``           learned policies ``learned:PATH``: an action-scoring network's numba
                      forward pass (an MLP, or a 1-D conv over the 34 kinds); re-exports
                      ``learned_file``'s names
``botdata``           the bots' data files: where ``tuned:NAME`` / ``learned:NAME`` read their
                      weights, which rule sets ship them, the tuned weights read and checked
``registry``          the one bot registry (``BOTS``): one spec grammar, one parser (``parse``),
                      the check of where a bot can play (``check_fits``), the bots' data
                      (weights, the bot context) and the one numba dispatch that plays them
                      all (``_bot_action``); its docstring says how to add a bot
``agent``             the step-API face of every kernel bot (``kernel_agent``; users: ``caishen.agents.make_agent``)
====================  ======================================================================

Imports go down this list, never up: a module imports only modules above it
in the table, the engine (:mod:`caishen.sim.engine`), the rule sets
(:mod:`caishen.sim.rules`) and the game layer (:mod:`caishen.sim.hand`,
:mod:`caishen.sim.tiles`, ...).  Nothing here imports the play layer
(:mod:`caishen.sim.selfplay`), the analysis, the environments or the agents.
"""
