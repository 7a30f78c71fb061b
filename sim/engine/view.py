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
from numba import njit

from caishen.sim.hand import _shanten
from caishen.sim.engine.deal import _zero_wins
from caishen.sim.engine.layout import (
    A_HARD_DECLINE,
    A_KONG_CONCEALED,
    A_PASS,
    DF_CLAIMED,
    N_KINDS,
    N_SEATS,
    PH_CLAIM,
    PH_ROB,
    PH_TURN,
    action_name,
)
from caishen.sim.tiles import (
    MELD_CHOW,
    MELD_KONG_CONCEALED,
    MELD_NONE,
    MELD_PONG,
)

__all__ = ["Observation", "PublicLog", "public_action", "seat_view"]

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
    ep: np.record  #: the engine params, ``ep.joker`` ... (:func:`caishen.sim.engine.engine_params`)
    rp: object  #: the rule set's kernel params (``rules.params()``)
    tabs: np.ndarray  #: the hand tables (:func:`caishen.sim.tables.hand_tables`)
    log: PublicLog  #: the hand's events as ``seat`` sees them (live: it grows as the hand goes on)

    def legal_actions(self) -> list[int]:
        """Sorted legal action indices of :attr:`seat`."""
        return [int(a) for a in np.flatnonzero(self.mask)]


def seat_view(state, seat: int, ep: np.record, tabs) -> np.ndarray:
    """``STATE_DTYPE[1]``: a copy of the game record ``state`` with what ``seat`` may not see replaced by
    canonical values (module docstring), a function of what ``seat`` sees only, read-only.  ``ep``/``tabs``:
    the engine params and hand tables (the others' readiness cache is recomputed for their canonical
    hands).  Raises ``ValueError`` if the state's tiles are not conserved (:func:`_seat_view`)."""
    out = np.empty(1, state.dtype)
    err = _seat_view(state, int(seat), ep, tabs, out[0], np.zeros(N_KINDS, np.int64))
    if err:
        raise ValueError(f"seat {seat} sees more tiles than there are, or the others' hands and the wall hold "
                         "another number than it cannot see: the state is broken")
    out.flags.writeable = False
    return out


@njit(cache=True, inline="always")
def _hide_private(row):
    """Set another seat's private flags in its ``SEAT_DTYPE`` row ``row`` to their canonical values."""
    row.passed_pong = 0  # K-4.4
    row.passed_win = 0  # J-3.5
    row.swap_forbid = -1  # K-4.5
    row.force_joker = 0  # K-2.5
    row.claim_opts = 0  # what a claim would offer and count
    row.claim_exp = 0
    row.claim_flags = 0
    row.claim_joker_links = 0
    row.claim_kong_links = 0
    row.hard_offer = 0  # J-4.2
    row.n_passed_win = 0  # J-3.5


@njit(cache=True)
def _seat_view(st, seat, ep, tabs, v, cnt):
    """Fill the record ``v`` with ``st`` as ``seat`` sees it (:func:`seat_view`); ``cnt: int64[34]`` scratch.
    Returns 0, or 1 when the tiles are not conserved.  Tests: a pure-Python reference (tests/test_observe.py)."""
    v.wall[:] = 0
    v.hands[:] = st.hands
    v.meld_type[:] = st.meld_type
    v.meld_kind[:] = st.meld_kind
    v.discards[:] = st.discards
    v.dflags[:] = st.dflags
    v.circle[:] = 0
    v.mask[:] = st.mask
    v.legal[:] = st.legal
    v.seat[:] = st.seat
    v.table = st.table
    v.queue[:] = 0
    v.tmp[:] = 0
    v.counts[:] = 0
    _zero_wins(v.wins)
    v.work[:] = 0
    v.rng[:] = 0
    # the tiles seat cannot see: 4 minus its hand, the discards not claimed, the melds it sees
    for k in range(N_KINDS):
        cnt[k] = 4 - np.int64(st.hands[seat, k])
    for p in range(N_SEATS):
        for i in range(st.seat[p].n_discards):
            if (st.dflags[p, i] & DF_CLAIMED) == 0:
                cnt[st.discards[p, i]] -= 1
        for i in range(st.seat[p].n_melds):
            t = st.meld_type[p, i]
            if t == MELD_NONE or (t == MELD_KONG_CONCEALED and p != seat):
                continue
            k = st.meld_kind[p, i]
            if t == MELD_CHOW:
                cnt[k] -= 1
                cnt[k + 1] -= 1
                cnt[k + 2] -= 1
            else:
                cnt[k] -= 3 if t == MELD_PONG else 4
    for k in range(N_KINDS):
        if cnt[k] < 0:
            return 1
    # the others' concealed kongs: the first kinds with four unseen copies
    for p in range(N_SEATS):
        if p == seat:
            continue
        for i in range(st.seat[p].n_melds):
            if st.meld_type[p, i] == MELD_KONG_CONCEALED:
                k = 0
                while k < N_KINDS and cnt[k] < 4:
                    k += 1
                if k == N_KINDS:
                    return 1
                v.meld_kind[p, i] = k
                cnt[k] -= 4
    # the rest in kind order: the other hands (sizes kept), then the live wall
    head = st.table.head
    tail = st.table.tail
    need = tail - head + 1
    for p in range(N_SEATS):
        if p != seat:
            for k in range(N_KINDS):
                need += st.hands[p, k]
    have = 0
    for k in range(N_KINDS):
        have += cnt[k]
    if have != need:
        return 1
    k = 0
    for p in range(N_SEATS):
        if p == seat:
            continue
        size = 0
        for j in range(N_KINDS):
            size += st.hands[p, j]
            v.hands[p, j] = 0
        for _ in range(size):
            while cnt[k] == 0:
                k += 1
            v.hands[p, k] += 1
            cnt[k] -= 1
        _hide_private(v.seat[p])
        sh = _shanten(v.hands[p], ep.joker, tabs)
        v.seat[p].shanten = sh
        v.seat[p].ready = 1 if sh <= 0 else 0
    for i in range(head, tail + 1):
        while cnt[k] == 0:
            k += 1
        v.wall[i] = k
        cnt[k] -= 1
    if not (st.table.phase == PH_TURN and st.table.turn == seat and st.table.to_act == seat):
        v.table.drawn = -1  # another seat's turn: its drawn tile and self-draw facts
        v.table.can_self_draw = 0
        v.table.self_draw_exp = 0
        v.table.self_draw_flags = 0
        v.table.self_draw_joker_links = 0
        v.table.self_draw_kong_links = 0
        v.table.declare_kinds = 0
    v.table.steps = 0
    # the seat's own question alone (the rows of the claim queue asking it now): its legal mask stays
    q = st.table.q_pos
    n = 0
    if (st.table.phase == PH_CLAIM or st.table.phase == PH_ROB) and q < st.table.q_len:
        while q + n < st.table.q_len and st.queue[q + n, 0] == seat:
            v.queue[n, 0] = st.queue[q + n, 0]
            v.queue[n, 1] = st.queue[q + n, 1]
            n += 1
    v.table.q_pos = 0
    v.table.q_len = n
    return 0
