"""A ``python:`` seat for the tests (tests/test_open_opponents.py): it records what it is given and answers
as a numba bot would, by reading the env's own states (which a real seat never sees: only a test may).

``ENV`` (the :class:`caishen.envs.batched.BatchedGames` it plays in) and ``BOT`` (``"random"`` or
``"greedy"``) are set by the test; ``CALLS`` gets ``(obs, mask, states, seats)`` copies of every call.
"""

import numpy as np

ENV = None
BOT = "greedy"
CALLS: list = []


def replay(obs, mask):
    """The action numba bot ``BOT`` takes in each waiting game, played on the game's own state (its random
    stream advanced as the kernel's bot advances it), so the episodes are the kernel bots' own."""
    from caishen.envs.batched_kernels import GI_OPEN, _bot_actions
    from caishen.sim.bots import registry
    from caishen.sim.bots.policies import new_work

    g = ENV
    gi = g.games["gi"]
    idx = np.flatnonzero((gi[:, GI_OPEN] >= 0) & (gi[:, GI_OPEN] < 4))  # the host's order: the games waiting
    CALLS.append((obs.copy(), mask.copy(), g.states[idx].copy(), gi[idx, GI_OPEN].copy()))
    table, weights = registry.bot_table(BOT, g.rules_name, int(g._ep.joker))
    bx = registry.make_context(g.rules_name, g.rules, weights, 0, [BOT] * 4)
    out = np.zeros(len(idx), np.int64)
    one = np.zeros(1, np.int64)
    for j, i in enumerate(idx):
        _bot_actions(table[0, 0], table[0, 1], g.states[i:i + 1], g._ep, g._rp, g._tabs, new_work(), one, bx)
        out[j] = one[0]
    return out


def record(obs, mask):
    """The first legal action of each row, recording what it was given (as :func:`replay`)."""
    from caishen.envs.batched_kernels import GI_OPEN

    g = ENV
    gi = g.games["gi"]
    idx = np.flatnonzero((gi[:, GI_OPEN] >= 0) & (gi[:, GI_OPEN] < 4))
    CALLS.append((obs.copy(), mask.copy(), g.states[idx].copy(), gi[idx, GI_OPEN].copy()))
    return mask.argmax(1)


def illegal(obs, mask):
    """An illegal action in every row (the first action not allowed)."""
    return (~mask).argmax(1)


def boom(obs, mask):
    """A policy that raises."""
    raise RuntimeError("boom")


def first(obs, mask):
    """The first (lowest) legal action of each row."""
    return mask.argmax(1)
