"""What one seat may see, as the bots read it: :class:`Observation` (``Game.observe()``) and the public log.

A step-API bot acts on an observation, never on the engine (mjx's
``Agent.act(observation)``): :meth:`caishen.sim.engine.Game.observe` returns
an :class:`Observation` of the seat to act, and
``game.step(bot.act(game.observe()))`` plays one decision.  The observation
holds a copy of the ``STATE_DTYPE`` record in which everything the seat may
not see is replaced by a *canonical* value, a function of what it sees
only: the same facts as :meth:`caishen.sim.engine.Game.observation` (the
engine's statement of what a seat may see, which the envs' encoders and the
``exec:`` seat's ``request`` follow), in the layout the kernel bots read.
So the kernel bots run on it unchanged, and a bot that read hidden
information would answer otherwise than in self-play (the tests compare
them on every state of many hands).

Hidden, hence canonical in :attr:`Observation.state` (:func:`seat_view`):

- the other seats' concealed tiles: the tiles the seat cannot see (4 per
  kind minus what it sees) are dealt out in kind order, first into the
  kinds of the others' concealed kongs (K-5.3, J-3.2: the first kinds with
  four unseen copies), then the other seats' hands (sizes kept), then the
  live wall (from the next draw to the last replacement draw);
- the tiles already drawn from the wall (the deal and every draw): 0;
- the other seats' private flags (passed pong K-4.4, passed win J-3.5,
  the K-4.5 swap ban, the K-2.5 force, their claim options and what a
  claim would count, their 硬子 offers, their readiness cache, recomputed
  from their canonical hands), who else is asked on a claim (the claim
  queue keeps only the seat's own question), the self-draw facts of
  another seat's turn and its drawn tile;
- the number of actions taken (it counts the others' hidden passes), the
  game's random stream, the win contexts recorded so far and the scratch
  fields (:data:`caishen.sim.engine.layout.SCRATCH_FIELDS`, the legal
  mask and list excepted, which are the seat's own).

:class:`PublicLog` is the hand's events as one seat sees them
(:func:`public_action`: a concealed kong of another seat without its tile,
no pass and no 硬子 refusal of another seat), the ``exec:`` seats' events.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import NamedTuple

import numpy as np

from caishen.sim.hand import _shanten
from caishen.sim.engine.layout import (
    A_HARD_DECLINE,
    A_KONG_CONCEALED,
    A_PASS,
    DF_CLAIMED,
    EP_JOKER,
    MAX_DISCARDS,
    N_KINDS,
    N_SEATS,
    PH_CLAIM,
    PH_ROB,
    PH_TURN,
    SC_CAN_TSUMO,
    SC_DECLARE_KINDS,
    SC_DRAWN,
    SC_HEAD,
    SC_PHASE,
    SC_Q_LEN,
    SC_Q_POS,
    SC_STEPS,
    SC_TAIL,
    SC_TO_ACT,
    SC_TSUMO_EXP,
    SC_TSUMO_FLAGS,
    SC_TSUMO_KONG,
    SC_TSUMO_PIAO,
    SC_TURN,
    SF_CLAIM_EXP,
    SF_CLAIM_FLAGS,
    SF_CLAIM_KONG,
    SF_CLAIM_OPTS,
    SF_CLAIM_PIAO,
    SF_FORCE_PIAO,
    SF_HARD_OFFER,
    SF_N_DISCARDS,
    SF_N_PASSED_WIN,
    SF_PASSED_PONG,
    SF_PASSED_WIN,
    SF_SHANTEN,
    SF_SWAP_FORBID,
    SF_TENPAI,
    action_name,
)
from caishen.sim.tiles import (
    MELD_CHOW,
    MELD_KONG_ADDED,
    MELD_KONG_CONCEALED,
    MELD_KONG_EXPOSED,
    MELD_NONE,
    MELD_PONG,
)

__all__ = ["Observation", "PublicLog", "public_action", "seat_view"]

#: the other seats' private columns of ``seat[s, SF_*]`` and their canonical value (the module docstring)
_PRIVATE_SF = ((SF_PASSED_PONG, 0), (SF_PASSED_WIN, 0), (SF_SWAP_FORBID, -1), (SF_FORCE_PIAO, 0),
               (SF_CLAIM_OPTS, 0), (SF_CLAIM_EXP, 0), (SF_CLAIM_FLAGS, 0), (SF_CLAIM_PIAO, 0),
               (SF_CLAIM_KONG, 0), (SF_HARD_OFFER, 0), (SF_N_PASSED_WIN, 0))
_PRIVATE_COLS = [c for c, _ in _PRIVATE_SF]
_PRIVATE_VALUES = np.array([x for _, x in _PRIVATE_SF], np.int64)
#: the self-draw facts of the turn's seat (hidden unless the observing seat is on its own turn)
_TURN_SC = [SC_CAN_TSUMO, SC_TSUMO_EXP, SC_TSUMO_FLAGS, SC_TSUMO_PIAO, SC_TSUMO_KONG, SC_DECLARE_KINDS]
#: fields of the record hidden as a whole (zeroed): scratch, the claim queue, the random stream, the win contexts
_ZEROED = ("circle", "tmp", "counts", "work", "rng", "queue", "wins")


def public_action(actor: int, action: int, viewer: int) -> str | None:
    """The name of ``actor``'s ``action`` as ``viewer`` sees it: all of its own; of another seat a concealed
    kong without its tile (K-5.3), no pass and no 硬子 refusal (which seat is asked is private), the rest
    in full (names of :func:`caishen.sim.engine.action_name`)."""
    if actor == viewer:
        return action_name(action)
    if action in (A_PASS, A_HARD_DECLINE):
        return None
    if A_KONG_CONCEALED <= action < A_KONG_CONCEALED + N_KINDS:
        return "kong_concealed"
    return action_name(action)


class PublicLog(Sequence):
    """One hand's events as one seat sees them, oldest first: a read-only sequence of tuples,
    ``("start_hand", dealer)``, ``("action", seat, name)`` (:func:`public_action`) and, once the hand is
    over, ``("end_hand", scores, winners)`` (4 ints in seat order; the winning seats).  It is live: the
    :class:`caishen.sim.engine.Game` appends to it as the hand goes on; a new hand gets a new log."""

    __slots__ = ("seat", "_items")

    def __init__(self, seat: int):
        self.seat = int(seat)  #: the seat whose view this is
        self._items: list[tuple] = []

    def __getitem__(self, i):
        return self._items[i]

    def __len__(self) -> int:
        return len(self._items)

    def __repr__(self) -> str:
        return f"PublicLog(seat={self.seat}, {len(self)} events)"


class Observation(NamedTuple):
    """What the seat to act may see, and what a kernel bot needs to decide (:meth:`caishen.sim.engine.Game.observe`).

    Immutable: its arrays are read-only (a bot copies ``state``, ``ep`` and ``rp`` before a kernel writes into
    them), but for the hand tables ``tabs``, shared by every game of the process, which nobody writes.
    """

    seat: int  #: the observing seat, the one to act (0..3)
    state: np.void  #: a ``STATE_DTYPE`` record: the game with what ``seat`` may not see canonical (:func:`seat_view`)
    mask: np.ndarray  #: ``uint8[145]``: the legal actions of ``seat`` (1 = legal)
    rules_name: str  #: the rule set's registered name
    rules: object  #: the rule set's options object (:func:`caishen.sim.engine.load_rules`)
    ep: np.ndarray  #: ``int64[N_EP]``: the engine params (:func:`caishen.sim.engine.engine_params`)
    rp: object  #: the rule set's kernel params (``rules.params()``)
    tabs: tuple  #: the hand tables (:func:`caishen.sim.tables.hand_tables`)
    log: PublicLog  #: the hand's events as ``seat`` sees them (live: it grows as the hand goes on)

    def legal_actions(self) -> list[int]:
        """Sorted legal action indices of :attr:`seat`."""
        return [int(a) for a in np.flatnonzero(self.mask)]


#: ``_SEEN[type, j]``: tiles of kind ``meld_kind + j`` in a meld of type ``MELD_*`` (a chow: kind, +1, +2)
_SEEN = np.zeros((MELD_KONG_CONCEALED + 1, 3), np.int64)
_SEEN[MELD_CHOW] = 1
_SEEN[MELD_PONG, 0] = 3
_SEEN[[MELD_KONG_EXPOSED, MELD_KONG_ADDED, MELD_KONG_CONCEALED], 0] = 4
_SLOTS = np.arange(MAX_DISCARDS)[None, :]


def _unseen(st, seat: int) -> np.ndarray:
    """``int64[34]``: copies of each kind that ``seat`` cannot see (4 minus its hand, the discards not
    claimed, every meld but the others' concealed kongs)."""
    cnt = 4 - st["hands"][seat].astype(np.int64)
    nd = st["seat"][:, SF_N_DISCARDS]
    live = (_SLOTS < nd[:, None]) & ((st["dflags"] & DF_CLAIMED) == 0)
    cnt -= np.bincount(st["discards"][live], minlength=N_KINDS)
    mt, mk = st["meld_type"].astype(np.int64), st["meld_kind"].astype(np.int64)
    shown = mt != MELD_NONE
    shown[np.arange(N_SEATS) != seat] &= mt[np.arange(N_SEATS) != seat] != MELD_KONG_CONCEALED
    t, k = mt[shown], mk[shown]
    for j in range(3):
        cnt -= np.bincount(k + j, weights=_SEEN[t, j], minlength=N_KINDS + 2)[:N_KINDS].astype(np.int64)
    return cnt


def _own_question(st, seat: int) -> np.ndarray:
    """The rows of the claim queue asking ``seat`` now (its own question: the levels it is asked at),
    none outside a claim."""
    q, n = int(st["sc"][SC_Q_POS]), int(st["sc"][SC_Q_LEN])
    if int(st["sc"][SC_PHASE]) not in (PH_CLAIM, PH_ROB) or q >= n or int(st["queue"][q, 0]) != seat:
        return st["queue"][:0].copy()
    e = q + 1
    while e < n and int(st["queue"][e, 0]) == seat:
        e += 1
    return st["queue"][q:e].copy()


def seat_view(state, seat: int, ep: np.ndarray, tabs) -> np.ndarray:
    """``STATE_DTYPE[1]``: a copy of the game record ``state`` with what ``seat`` may not see replaced by
    canonical values (module docstring), a function of what ``seat`` sees only.  ``ep``/``tabs``: the
    engine params and hand tables (the others' readiness cache is recomputed for their canonical hands).
    Raises ``ValueError`` if the state's tiles are not conserved."""
    seat = int(seat)
    out = np.array([state])
    v = out[0]
    sc, sf = v["sc"], v["seat"]
    cnt = _unseen(v, seat)
    if (cnt < 0).any():
        k = int(np.flatnonzero(cnt < 0)[0])
        raise ValueError(f"seat {seat} sees {4 - int(cnt[k])} copies of kind {k}: the state is broken")
    others = [p for p in range(N_SEATS) if p != seat]
    hidden_kongs = np.argwhere(v["meld_type"] == MELD_KONG_CONCEALED)
    for p, i in hidden_kongs[hidden_kongs[:, 0] != seat]:  # the first kinds with four unseen copies
        k = int(np.flatnonzero(cnt >= 4)[0])
        v["meld_kind"][p, i] = k
        cnt[k] -= 4
    pool = np.repeat(np.arange(N_KINDS, dtype=np.uint8), cnt)
    head, tail = int(sc[SC_HEAD]), int(sc[SC_TAIL])
    sizes = v["hands"][others].sum(axis=1, dtype=np.int64)
    if pool.size != int(sizes.sum()) + tail - head + 1:
        raise ValueError(f"seat {seat} cannot see {pool.size} tiles, the others' hands and the wall hold "
                         "another number: the state is broken")
    ends = np.cumsum(sizes)
    for p, e, n in zip(others, ends, sizes):
        v["hands"][p] = np.bincount(pool[e - n:e], minlength=N_KINDS)
    v["wall"][:] = 0
    v["wall"][head:tail + 1] = pool[ends[-1]:]
    sf[np.ix_(others, _PRIVATE_COLS)] = _PRIVATE_VALUES
    joker = int(ep[EP_JOKER])
    for p in others:
        sh = int(_shanten(v["hands"][p], joker, tabs))
        sf[p, SF_SHANTEN], sf[p, SF_TENPAI] = sh, int(sh <= 0)
    if not (int(sc[SC_PHASE]) == PH_TURN and int(sc[SC_TURN]) == seat and int(sc[SC_TO_ACT]) == seat):
        sc[SC_DRAWN] = -1  # another seat's turn: its drawn tile and self-draw facts
        sc[_TURN_SC] = 0
    own = _own_question(v, seat)
    sc[SC_STEPS] = 0
    for name in _ZEROED:
        v[name] = 0
    v["queue"][:len(own)] = own  # the seat's own question alone: its legal mask stays the state's
    sc[SC_Q_POS], sc[SC_Q_LEN] = 0, len(own)
    out.flags.writeable = False
    return out
