"""Oracle labels for training: what the hidden state says about the seat to act's decision, never an observation.

A learner may use the simulator's exact hidden state as *training targets*
(auxiliary heads, an oracle critic) but never as an input at play time.
``oracle=True`` (:class:`caishen.envs.batched.BatchedGames`, the vector envs'
``info["oracle"]``, the PettingZoo env's ``infos[agent]["oracle"]``) adds these
labels, per game, for the seat to act after the step (opponents seat-relative:
``+1`` next, ``+2`` opposite, ``+3`` previous):

==================  ===============  ===================================================
key                 dtype[shape]     meaning
==================  ===============  ===================================================
``deal_in``         bool[n, 34]      on its own turn, discarding kind ``k`` now lets an
                                     opponent win on it (K-7.1, J-3.1); False for a kind
                                     it cannot discard and outside its turn
``deal_in_to``      bool[n, 34, 3]   which opponents win on it (several where one
                                     discard may have several winners, J-3.4)
``deal_in_points``  float32[n, 34]   the points the seat pays for it (minus its score
                                     change of the hand that win ends: K-8 / J-6)
``ready``           bool[n, 3]       the opponent is ready: some kind completes its
                                     concealed tiles
``waits``           bool[n, 3, 34]   the kinds that complete them (a kind it holds four
                                     times is none; a joker completes a ready hand,
                                     K-2.1): :func:`caishen.sim.hand.waits`
``final_points``    int64[n, 4]      the points of the hands that ended in the step, by
                                     absolute seat (``info["hand_points"]``)
``hand_ended``      bool[n]          a hand ended in the step
==================  ===============  ===================================================

How ``deal_in`` is decided (one state's kernel, :mod:`caishen.sim.selfplay.oracle`, which ``caishen
learn``'s oracle targets share): exactly as the engine would.  A win needs a
complete hand, so only the kinds some opponent waits on are tried: the state
is copied, the discard stepped (``discard <k>``, or ``declare <k>`` where
only that is legal), and while that discard is on offer every opponent
offered the win takes it and the others pass (a 硬子 offer is declined,
J-4.2).  It deals in when the hand then ends with a win on that discard; its
points are the engine's payments, or for a rule set scored after the hand
(J-6) its points kernel on the hand's record
(:func:`caishen.sim.rules.kernels.hand_points`).  The tests compare every
label with a slow pure-Python reference on random states.

These labels read the other seats' concealed tiles: they go to ``info`` only.
No observation of any layout changes with ``oracle=True``, and no
observation depends on what they read (``tests/test_learning_env.py``).
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np
from numba import njit

from caishen.sim.borrow import borrowed
from caishen.sim.engine import N_KINDS, N_SEATS, Game, _legal_mask, new_records, new_state
from caishen.sim.rules import base as rulesets
from caishen.sim.rules.codes import POINTS_ENGINE
from caishen.sim.selfplay.oracle import OracleRow, _oracle_state
from caishen.sim.rules.kernels import hand_points

__all__ = ["KEYS", "Oracle", "oracle_labels"]

#: the label keys, in the module docstring's order
KEYS = ("deal_in", "deal_in_to", "deal_in_points", "ready", "waits", "final_points", "hand_ended")


def _new_labels(n: int) -> dict[str, np.ndarray]:
    return {"deal_in": np.zeros((n, N_KINDS), np.bool_), "deal_in_to": np.zeros((n, N_KINDS, 3), np.bool_),
            "deal_in_points": np.zeros((n, N_KINDS), np.float32), "ready": np.zeros((n, 3), np.bool_),
            "waits": np.zeros((n, 3, N_KINDS), np.bool_), "final_points": np.zeros((n, N_SEATS), np.int64),
            "hand_ended": np.zeros(n, np.bool_)}


class KernelLabels(NamedTuple):
    """The labels :func:`_oracle_games` fills for ``n`` games (the module docstring's keys)."""

    deal_in: np.ndarray  #: bool[n, 34]: ``deal_in``
    deal_to: np.ndarray  #: bool[n, 34, 3]: ``deal_in_to``
    deal_pts: np.ndarray  #: float32[n, 34]: ``deal_in_points`` (the engine's points; others by the caller)
    ready: np.ndarray  #: bool[n, 3]: ``ready``
    waits: np.ndarray  #: bool[n, 3, 34]: ``waits``


@njit(cache=True)
def _oracle_games(states, ep, rp, tabs, tmp, hb, labels, rec, rec_at):
    """Fill ``labels`` (:class:`KernelLabels`) of every game of ``states`` (module docstring) for its seat to
    act, each by :func:`caishen.sim.selfplay.oracle._oracle_state`; ``tmp``: a scratch state record, ``hb:
    uint8[34]``.  Wins to be scored after the hand (``ep.points`` not the engine's) leave their record row in
    ``rec[j]`` and ``rec_at[j] = 34 * game + kind``; returns how many.  Reads ``states`` (and their legal
    masks) only."""
    states, labels, rec, rec_at = borrowed((states, labels, rec, rec_at))
    deal_in, deal_to, deal_pts, ready, waits = labels
    n_rec = 0
    for i in range(states.shape[0]):
        row = OracleRow(deal_in[i], deal_to[i], deal_pts[i], ready[i], waits[i])
        n_rec = _oracle_state(states[i], ep, rp, tabs, tmp, hb, row, rec, rec_at, n_rec, i)
    return n_rec


class Oracle:
    """The labels of one batch (:class:`caishen.envs.batched.BatchedGames`), recomputed after every step:
    :attr:`labels` (module docstring; arrays overwritten in place)."""

    def __init__(self, games):
        self.games = games
        n = games.n
        self.labels = _new_labels(n)
        self._tmp = new_state(1)[0]
        self._hb = np.zeros(N_KINDS, np.uint8)
        self._ruleset = rulesets.get(games.rules_name)
        after = int(games._ep.points) != POINTS_ENGINE  # wins scored after the hand (J-6)
        self._rec = new_records(n * N_KINDS if after else 0)
        self._rec_at = np.zeros(self._rec.shape[0], np.int64)

    def update(self) -> None:
        """Recompute the labels from the batch's states (after a reset or a step)."""
        g = self.games
        lab = self.labels
        _fill(lab, g.states, g._ep, g._rp, g._tabs, self._tmp, self._hb, self._rec, self._rec_at, self._ruleset,
              g.rules, g.player)
        lab["final_points"][:] = g.points
        np.greater(g.hands_ended, 0, out=lab["hand_ended"])


def _fill(lab, states, ep, rp, tabs, tmp, hb, rec, rec_at, ruleset, rules, player) -> None:
    """Run the kernel and score the wins it left for the rule set's points kernel."""
    labels = KernelLabels(lab["deal_in"], lab["deal_in_to"], lab["deal_in_points"], lab["ready"], lab["waits"])
    m = _oracle_games(states, ep, rp, tabs, tmp, hb, labels, rec, rec_at)
    if m:
        pts = hand_points(ruleset, rules, rec[:m])
        game, kind = np.divmod(rec_at[:m], N_KINDS)
        lab["deal_in_points"][game, kind] = -pts[np.arange(m), player[game]]


def oracle_labels(game: Game) -> dict[str, np.ndarray]:
    """The labels of one :class:`caishen.sim.engine.Game` for its seat to act (the keys of the module
    docstring, without the batch axis; ``final_points`` the hand's points once it is over, else 0).
    Raises ``ValueError`` for an unstarted game."""
    if not isinstance(game, Game):
        raise ValueError(f"oracle_labels expects a caishen.sim.engine.Game, got {type(game).__name__}")
    seat = game.current_player  # raises ValueError if the game was never reset
    lab = _new_labels(1)
    ruleset = rulesets.get(game.rules_name)
    if not game.done:
        _legal_mask(game.state, game._ep)
    _fill(lab, game._buf, game._ep, game._rp, game._tabs, new_state(1)[0], np.zeros(N_KINDS, np.uint8),
          new_records(N_KINDS), np.zeros(N_KINDS, np.int64), ruleset, game.rules,
          np.array([max(seat, 0)]))
    if game.done:
        res = game.record
        lab["final_points"][0] = [res[f"score_{p}"] for p in range(N_SEATS)]
        lab["hand_ended"][0] = True
    return {k: v[0] for k, v in lab.items()}
