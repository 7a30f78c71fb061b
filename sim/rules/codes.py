"""The integers every rule set and the engine agree on: kernel codes, win types, the win flags the engine reads.

The kernel codes name a rule set's kernels in the one dispatch module,
:mod:`caishen.sim.rules.kernels` (a :class:`~caishen.sim.rules.base.RuleSet`
gives them; :mod:`caishen.sim.engine.params` copies them into the engine
params).  They live apart from the dispatch so that a rule set can name its
codes without importing the dispatch, which imports every rule set's kernels.
"""

WIN_KERNEL_JOKER = 0  #: hand types with a joker and chain links (the 财神 rule set's win test, K-2, K-6, K-7)
WIN_KERNEL_SHAPE = 1  #: any complete hand (J-5.1)
WIN_KERNELS = (WIN_KERNEL_JOKER, WIN_KERNEL_SHAPE)

PAYMENTS_NONE = 0  #: the engine pays nothing: the rule set scores the recorded wins after the hand
PAYMENTS_EXPONENT = 1  #: base share x 2**exponent, with failed 飘 circles (K-8, K-9.3)
PAYMENTS = (PAYMENTS_NONE, PAYMENTS_EXPONENT)

POINTS_ENGINE = 0  #: a finished hand's points are the engine's payments (K-8; 0 each on a 流局)
POINTS_PATTERNS = 1  #: each recorded win scored by its patterns and kongs, then paid (J-5 .. J-8, J-6.5)
POINTS = (POINTS_ENGINE, POINTS_PATTERNS)

# how a hand was won (every rule set's kernels and records)
WIN_SELF_DRAW = 0
WIN_DISCARD = 1
WIN_ROBBED_KONG = 2
WIN_TYPES = {"self_draw": WIN_SELF_DRAW, "discard": WIN_DISCARD, "robbed_kong": WIN_ROBBED_KONG}

# bits of a win kernel's flags that the engine's checker reads (K-10: a counted chain link says so)
FLAG_CHAIN = 1 << 8  #: at least one chain link counted (K-6.5)
FLAG_JOKER_LINK = 1 << 9  #: at least one 飘财 link counted (K-6.5, K-9.1)

# declarations of a seat (J-4.1, J-4.2; the engine's seat flags and the records)
DECL_NONE = 0
DECL_READY = 1  #: 架听, declared with a discard that leaves a single wait (J-4.1)
DECL_HARD = 2  #: 硬子, hard ready declared at the deal (J-4.2)
