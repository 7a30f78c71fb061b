"""Analysis: what finished runs say, with intervals; and the commands that design runs to ask it.

====================  ======================================================================
module                what it is
====================  ======================================================================
``intervals``         confidence intervals over independent units, cluster-robust (CR1)
``summary_tally``     the streaming reduction behind the summary
``summary``           a run's summary table (``caishen simulate`` / ``report``)
``balance_tally``     the streaming reduction behind the balance tables
``arena``             duplicate-deal matches between bots (``caishen match``)
``study``             sweeps of rule options x hero policies on duplicate deals
                      (``caishen sweep``)
``piao_study``        the 飘财 decision by counterfactual rollouts
``balance``           scoring balance tables of each rule set
``report``            figures and one HTML page for a run (``caishen report``)
``ladder``            a round robin of bots on duplicate deals, their rating table
                      (``caishen ladder``)
``replay``            one hand re-played from a run or a hand log, shown move by move
                      (``caishen replay``)
``replay_html``       the replay page of a hand (``caishen replay --html``)
====================  ======================================================================

Imports go down this list, never up, and to the layers below (play
:mod:`caishen.sim.selfplay`, the bots, the engine, the rule sets, the game
layer); the environments and the agents are peers or above, never imported.
"""
