"""Analysis: what finished runs say, with intervals; and the commands that design runs to ask it.

====================  ======================================================================
module                what it is
====================  ======================================================================
``intervals``         confidence intervals over independent units, cluster-robust (CR1)
``markdown``          Markdown tables of the reports
``summary_tally``     the streaming reduction behind the summary
``summary``           a run's summary table (``caishen simulate`` / ``report``)
``balance_tally``     the streaming reduction behind the balance tables
``arena``             duplicate-deal matches between bots (``caishen match``)
``study``             sweeps of rule options x hero policies on duplicate deals
                      (``caishen sweep``)
``factorial``         main effects and interactions of a sweep's axes (``caishen sweep``)
``piao_kernels``      the kernels of the counterfactual decision study
``piao_estimate``     its estimates: EV by situation and own choice, its parts, the risk
``piao_study``        the 飘财 decision by counterfactual rollouts (runs and files)
``piao_answer``       ``caishen piao``: the study, its table, heatmap and check
``piao_adaptive``     the adaptive 飘 study (every seat plays the table of the current field)
``balance``           scoring balance tables of each rule set
``sessions``          seats over whole sessions: placement and totals by starting seat
``report``            figures and one HTML page for a run (``caishen report``)
``balance_sections``  the sections of the balance report
``balance_report``    ``caishen balance``: is a rule set balanced? one report
``power``             walls for a target half-width (``caishen power``)
``coverage``          replicate checks of the intervals
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
