"""The Python face of the engine: :class:`Game` (one hand, one action at a time), replay, checks.

:class:`Game` holds one ``STATE_DTYPE`` record and drives the kernels:
:meth:`Game.reset` deals (a seeded wall, or a fixed one from
:func:`build_wall`), :meth:`Game.step` checks and applies one action,
:attr:`Game.record` is the hand's record (the rule set's columns, as
integer codes) and :attr:`Game.result` the same read as words
(:mod:`caishen.sim.rules.words`: ``win_type`` ``'self_draw'``, tiles as
``'5z'``, flags as named booleans), and every hand is logged as events
that :func:`replay` turns back into the same game.
:meth:`Game.observation` is what one seat may see (the other seats'
concealed tiles and concealed kong kinds hidden, K-5.3), and
:meth:`Game.observe` the same for the seat to act as the bots read it (an
:class:`caishen.sim.engine.view.Observation`: ``game.step(bot.act(game.observe()))``);
:func:`check_state` runs the invariant checker and, with
``observations=True``, checks that no observation depends on hidden tiles.
"""

from __future__ import annotations

import json

import numpy as np

from caishen.sim.rules.base import DEFAULT
from caishen.sim.warmup import first_use
from caishen.sim import tiles as _tiles
from caishen.sim.engine.check import ERR_MESSAGES, _check_state
from caishen.sim.engine.deal import _reset, _seeded_wall
from caishen.sim.engine.layout import (
    DF_CLAIMED,
    MAX_DISCARDS,
    MAX_MATCH_HAND,
    MAX_STREAK,
    N_ACTIONS,
    N_KINDS,
    N_SEATS,
    N_TILES,
    PHASE_NAMES,
    PH_DONE,
    PH_TURN,
    _check_action_index,
    action_name,
    new_state,
    parse_action,
)
from caishen.sim.engine.mask import _legal_mask
from caishen.sim.engine.params import engine_params, load_rules
from caishen.sim.engine.record import _next_dealer, _write_record, batch_columns, new_records
from caishen.sim.engine.turn import _step
from caishen.sim.engine.view import Observation, PublicLog, public_action, seat_view
from caishen.sim.tables import hand_tables
from caishen.sim.validate import check_int
from caishen.sim.tiles import MELD_KONG_CONCEALED, MELD_NONE


def _check_wall(wall) -> np.ndarray:
    """A wall as ``uint8[136]`` from 136 kind indices or an mpsz string; each kind exactly 4 times."""
    kinds = _tiles.parse_kinds(wall) if isinstance(wall, str) else list(wall)
    w = np.asarray(kinds)
    if w.shape != (N_TILES,):
        raise ValueError(f"wall must hold 136 tiles, got {w.size}")
    if w.dtype.kind not in "iu" or (w < 0).any() or (w >= N_KINDS).any():
        raise ValueError(f"wall must hold kind indices 0..33, got {w!r}")
    counts = np.bincount(w, minlength=N_KINDS)
    if (counts != 4).any():
        k = int(np.flatnonzero(counts != 4)[0])
        raise ValueError(f"wall holds {int(counts[k])} copies of {_tiles.kind_name(k)}, expected 4")
    return w.astype(np.uint8)


def build_wall(hands, draws: str = "", replacements: str = "", dealer: int = 0) -> np.ndarray:
    """A wall that deals given hands and draws given tiles (for tests and puzzles).

    ``hands``: four mpsz strings of 13 tiles, seat order 0..3.  ``draws``:
    the normal draws in order, starting with the dealer's 14th tile (K-3.1).
    ``replacements``: the kong replacement draws in order (from the tail,
    K-5.4).  The other tiles fill the middle of the wall in kind order.
    Returns ``uint8[136]``; raises ``ValueError`` if a hand is not 13 tiles,
    a kind is used more than 4 times, or ``dealer`` is not a seat 0..3.
    """
    if len(hands) != N_SEATS:
        raise ValueError(f"hands must give 4 seats' tiles, got {len(hands)}")
    dealer = check_int("dealer", dealer, 0, N_SEATS - 1)
    wall = np.full(N_TILES, 255, np.int64)
    for i in range(N_SEATS):
        kinds = _tiles.parse_kinds(hands[(dealer + i) % N_SEATS])
        if len(kinds) != 13:
            raise ValueError(f"seat {(dealer + i) % N_SEATS}'s hand must be 13 tiles, got {len(kinds)}")
        wall[13 * i : 13 * i + 13] = kinds
    d = _tiles.parse_kinds(draws)
    r = _tiles.parse_kinds(replacements)
    if 52 + len(d) > N_TILES - len(r):
        raise ValueError("too many draws and replacements for one wall")
    wall[52 : 52 + len(d)] = d
    for j, k in enumerate(r):
        wall[N_TILES - 1 - j] = k
    used = np.bincount(wall[wall != 255], minlength=N_KINDS)
    if (used > 4).any():
        k = int(np.flatnonzero(used > 4)[0])
        raise ValueError(f"{_tiles.kind_name(k)} is used {int(used[k])} times")
    rest = [k for k in range(N_KINDS) for _ in range(4 - int(used[k]))]
    wall[wall == 255] = rest
    return wall.astype(np.uint8)


def _read_only(a):
    """A read-only view of the array ``a``, or a read-only copy of the record ``a`` (``numpy.record``)."""
    if isinstance(a, np.record):
        v = np.array([a], a.dtype).view(np.recarray)
        v.flags.writeable = False
        return v[0]
    v = a.view()
    v.flags.writeable = False
    return v


class Game:
    """One hand of mahjong driven one action at a time (a person, a test or an env).

    ``Game(rules=DEFAULT, options=None)``: ``rules`` a rule-set name or an
    options object, ``options`` a dict of rule options (validated; unknown
    names raise ``ValueError``).  Then :meth:`reset`, and :meth:`step` with
    actions from :meth:`legal_actions` until :attr:`done`; :attr:`result` is
    the hand's record read as words, :attr:`record` the same as codes (records.md).  Every hand is logged as events
    (:attr:`events`, :meth:`log_lines`) that :func:`replay` turns back into
    the same game.  :attr:`state` is the live ``STATE_DTYPE`` record.
    """

    def __init__(self, rules=DEFAULT, options=None):
        self.rules_name, self.rules = load_rules(rules, options)
        self._ep = engine_params(self.rules_name, self.rules)
        self._rp = self.rules.params()
        self._tabs = hand_tables()
        self._buf = new_state()
        self.state = self._buf[0]
        self.events: list[dict] = []
        self._logs = tuple(PublicLog(p) for p in range(N_SEATS))  # each seat's view of the events
        self.seed = None
        self._started = False

    # -- setup -------------------------------------------------------------
    def reset(self, seed=None, dealer: int = 0, wall=None, match_hand: int = 0, streak: int = 0) -> "Game":
        """Deal a new hand.

        ``seed``: int in ``0 .. 2**32-1`` (the wall is shuffled with :mod:`caishen.sim.rng`
        seeded by it: the same wall as the first hand of ``caishen.sim.selfplay.batch.play_batch(seed=...)``)
        or None (fresh entropy).  ``wall``: a fixed wall instead (136 kinds or
        an mpsz string, e.g. from :func:`build_wall`).  ``dealer``: seat 0..3.
        ``streak``: the dealer's streak ``k`` (J-2.4; J-6.4 payments use it),
        ``0 .. MAX_STREAK`` (32767, the record's int16 column).
        ``match_hand``: the hand's index in its match, ``0 .. MAX_MATCH_HAND``.
        Raises ``ValueError`` for a bad seed, dealer, match_hand, streak or
        wall (the integers must be ints or numpy integers, never bools).
        """
        dealer = check_int("dealer", dealer, 0, N_SEATS - 1)
        match_hand = check_int("match_hand", match_hand, 0, MAX_MATCH_HAND)
        streak = check_int("streak", streak, 0, MAX_STREAK)
        if wall is not None:
            w = _check_wall(wall)
            self.state["wall"][:] = w
            self.seed = None if seed is None else self._check_seed(seed)
        else:
            if seed is None:
                seed = int(np.random.SeedSequence().generate_state(1)[0])
            self.seed = self._check_seed(seed)
        with first_use("game"):  # a cold numba cache compiles here: say so (issue 11 item 3)
            if wall is None:
                _seeded_wall(self.seed, self.state)
            _reset(self.state, self._ep, self._rp, self._tabs, int(dealer))
        self.state["table"]["match_hand"] = int(match_hand)
        self.state["table"]["streak"] = int(streak)
        self._started = True
        self.events = [
            {
                "event": "reset",
                "rules": self.rules_name,
                "options": self.rules.to_dict(),
                "seed": self.seed,
                "dealer": int(dealer),
                "match_hand": int(match_hand),
                "streak": int(streak),
                "wall": [int(k) for k in self.state["wall"]],
            }
        ]
        self._logs = tuple(PublicLog(p) for p in range(N_SEATS))
        for log in self._logs:
            log._items.append(("start_hand", int(dealer)))
        return self

    @staticmethod
    def _check_seed(seed) -> int:
        return check_int("seed", seed, 0, 2**32 - 1)

    def _need_started(self):
        if not self._started:
            raise ValueError("call reset() before playing")

    # -- inspection ----------------------------------------------------------
    @property
    def done(self) -> bool:
        """True when the hand is over (a win or 流局)."""
        self._need_started()
        return int(self.state["table"]["phase"]) == PH_DONE

    @property
    def current_player(self) -> int:
        """Seat to act (0..3), -1 when the hand is over."""
        self._need_started()
        return int(self.state["table"]["to_act"])

    @property
    def phase(self) -> str:
        """``'turn'``, ``'claim'``, ``'rob'`` or ``'done'``."""
        self._need_started()
        return PHASE_NAMES[int(self.state["table"]["phase"])]

    @property
    def tiles_left(self) -> int:
        self._need_started()
        return int(self.state["table"]["tail"] - self.state["table"]["head"] + 1)

    def legal_mask(self) -> np.ndarray:
        """``bool[N_ACTIONS]``: the legal actions of :attr:`current_player` (all False when done)."""
        self._need_started()
        _legal_mask(self.state, self._ep)
        return self.state["mask"].astype(bool)

    def legal_actions(self) -> list[int]:
        """Sorted legal action indices of :attr:`current_player`."""
        return [int(a) for a in np.flatnonzero(self.legal_mask())]

    def step(self, action) -> "Game":
        """Apply ``action`` (an index or a name such as ``'discard 3m'``) of :attr:`current_player`.

        Raises ``ValueError`` naming the action if it is illegal now, the hand
        is over, or it is neither a name nor an integer index (a bool is not
        an action: ``step(True)`` raises).
        """
        self._need_started()
        a = parse_action(action) if isinstance(action, str) else _check_action_index(action)
        if self.done:
            raise ValueError(f"the hand is over; action {action_name(a)!r} ({a}) is not allowed")
        mask = self.legal_mask()
        if not mask[a]:
            legal = ", ".join(action_name(x) for x in np.flatnonzero(mask))
            raise ValueError(
                f"illegal action {action_name(a)!r} ({a}) for seat {self.current_player} "
                f"in phase {self.phase}; legal: {legal}"
            )
        seat = self.current_player
        _step(self.state, self._ep, self._rp, self._tabs, a)
        self.events.append({"event": "action", "seat": seat, "action": a, "name": action_name(a)})
        for log in self._logs:
            name = public_action(seat, a, log.seat)
            if name is not None:
                log._items.append(("action", seat, name))
        if self.done:
            self.events.append({"event": "result", **self.record})
            scores = tuple(int(x) for x in self.state["seat"]["score"])
            mask = int(self.state["table"]["winners_mask"])
            winners = tuple(p for p in range(N_SEATS) if (mask >> p) & 1)
            for log in self._logs:
                log._items.append(("end_hand", scores, winners))
        return self

    @property
    def result(self) -> dict | None:
        """The finished hand's record read as words (:func:`caishen.sim.rules.words.record_words`, the
        same words as :func:`caishen.read_run`'s table): ``win_type`` ``'self_draw'`` / ``'discard_win'`` /
        ``'robbed_kong'`` / ``'draw'``, ``won_0 .. won_3`` for ``winners_mask``, tiles in mpsz (``win_tile``
        ``'5z'``, None on a draw), the rule set's flags as named booleans (``hand_baotou``, ``first_turn``),
        declarations as words, patterns with their names (the rule set's ``words`` hook); seats, counts
        and points as ints, and ``next_dealer``.  None while the hand is running.  The integer
        codes are :attr:`record`."""
        record = self.record
        if record is None:
            return None
        from caishen.sim.rules.words import record_words

        return record_words(self.rules_name, record)

    def summary(self) -> str | None:
        """The finished hand in a few lines of at most 100 columns, as ``caishen play`` and ``caishen
        replay`` print it: who won and how, each hand type or pattern with its exponent or points and rule
        ID, and who pays whom what (the rule set's ``words`` hook,
        :class:`caishen.sim.rules.words.HandBreakdown`); a drawn hand in one line.  None while the hand is
        running.  :attr:`result` is the same hand as a dict of words, :attr:`record` as codes."""
        record = self.record
        if record is None:
            return None
        from caishen.sim.rules import base

        hands = np.asarray(self.state["hands"], np.int64)
        return "\n".join(base.get(self.rules_name).words_hooks().explain_record(record, self.rules, hands).lines())

    @property
    def record(self) -> dict | None:
        """The finished hand's record (the rule set's record columns as Python
        ints / str, see :func:`batch_columns`: the codes of the Parquet files) plus ``next_dealer``
        (K-3.3, J-2.3); None while the hand is running.  Wins scored after the hand are scored here
        by the rule set's record finisher (J-9 columns).  :attr:`result` reads it as words."""
        if not self.done:
            return None
        row = new_records(1)
        _write_record(self.state, self._ep, 0, row[0])
        cols = batch_columns(self.rules_name, self.rules, row)
        out = {name: (str(v[0]) if v.dtype == object else int(v[0])) for name, v in cols.items() if name != "hand"}
        out["next_dealer"] = int(_next_dealer(self._ep, self.state["table"]["dealer"], self.state["table"]["winners_mask"]))
        return out

    def check(self) -> None:
        """Run the invariant checker (:func:`check_state`); raises ``ValueError`` on a violation."""
        check_state(self)

    def observation(self, seat: int) -> dict:
        """What ``seat`` can see, as a dict of numpy arrays and ints.

        Hidden: the other seats' concealed tiles (only their counts are
        shown), the kind of their concealed kongs (K-5.3; ``meld_kind`` -1),
        the wall, their drawn tile and private flags.  Keys: ``seat``,
        ``dealer``, ``phase``, ``to_act``, ``tiles_left``, ``turns``,
        ``hand: uint8[34]``, ``drawn_tile`` (own, -1 none), ``hand_sizes:
        int8[4]``, ``meld_type / meld_kind: int8[4, 4]``, ``discards:
        int16[4, 64]`` (-1 padding), ``discard_claimed: bool[4, 64]``,
        ``n_discards: int16[4]``, ``pending_tile`` / ``pending_seat`` (the
        discard or added kong on offer, -1), ``chain: int16[4, 3]`` (each
        seat's live chain, K-6.5: length, 飘 links, kong links -- what a
        self-draw would have to build on, not what a win counted; the
        record's chain columns show that, K-10), ``circle_open: bool[4]`` (a
        joker-discard circle is open: 飘财, K-9.2), ``joker_discards:
        int16[4]``, ``n_chows: int8[4]``, ``passed_pong: bool[34]`` and
        ``swap_forbid`` (own), ``declarations: int8[4]`` (``DECL_*``, public:
        架听 and 硬子 are announced, J-4), ``passed_win`` (own, J-3.5),
        ``scores: int64[4]``, ``legal_mask:
        bool[N_ACTIONS]`` (all False unless ``seat`` is to act).
        Raises ``ValueError`` for a seat that is not an integer 0..3 (a bool included).
        """
        self._need_started()
        seat = check_int("seat", seat, 0, N_SEATS - 1)
        st = self.state
        sc = st["table"]
        sf = st["seat"]
        n_melds = sf["n_melds"]
        hand_sizes = st["hands"].sum(axis=1).astype(np.int8)
        meld_type = st["meld_type"].copy()
        meld_kind = st["meld_kind"].copy()
        meld_kind[meld_type == MELD_NONE] = -1
        for p in range(N_SEATS):
            if p != seat:
                meld_kind[p][meld_type[p] == MELD_KONG_CONCEALED] = -1  # K-5.3
        nd = sf["n_discards"]
        discards = np.full((N_SEATS, MAX_DISCARDS), -1, np.int16)
        claimed = np.zeros((N_SEATS, MAX_DISCARDS), bool)
        for p in range(N_SEATS):
            discards[p, : nd[p]] = st["discards"][p, : nd[p]]
            claimed[p, : nd[p]] = (st["dflags"][p, : nd[p]] & DF_CLAIMED) != 0
        acting = int(sc["to_act"]) == seat
        own_turn = acting and int(sc["phase"]) == PH_TURN
        passed = int(sf[seat]["passed_pong"])
        return {
            "seat": int(seat),
            "dealer": int(sc["dealer"]),
            "phase": int(sc["phase"]),
            "to_act": int(sc["to_act"]),
            "tiles_left": self.tiles_left,
            "turns": int(sc["turns"]),
            "hand": st["hands"][seat].copy(),
            "drawn_tile": int(sc["drawn"]) if own_turn else -1,
            "hand_sizes": hand_sizes,
            "meld_type": meld_type,
            "meld_kind": meld_kind,
            "discards": discards,
            "discard_claimed": claimed,
            "n_discards": nd.astype(np.int16),
            "pending_tile": int(sc["tile"]),
            "pending_seat": int(sc["src"]),
            "chain": np.stack([sf["chain_len"], sf["chain_joker"], sf["chain_kong"]], axis=1).astype(np.int16),
            "circle_open": sf["circle_open"] != 0,
            "joker_discards": sf["joker_discards"].astype(np.int16),
            "n_chows": sf["n_chows"].astype(np.int8),
            "n_melds": n_melds.astype(np.int8),
            "passed_pong": np.array([(passed >> k) & 1 for k in range(N_KINDS)], bool),
            "declarations": sf["decl"].astype(np.int8),
            "passed_win": bool(sf[seat]["passed_win"]),
            "swap_forbid": int(sf[seat]["swap_forbid"]),
            "scores": sf["score"].copy(),
            "legal_mask": self.legal_mask() if acting else np.zeros(N_ACTIONS, bool),
        }

    def observe(self) -> Observation:
        """What the seat to act may see, as the bots read it: an immutable
        :class:`caishen.sim.engine.view.Observation` (``seat``, the state record with what the seat may not
        see made canonical, the legal ``mask: uint8[145]``, the rule context, the seat's public log).  A
        step-API bot acts on it: ``game.step(bot.act(game.observe()))``.  It shows the facts of
        :meth:`observation` for that seat and nothing else (:func:`caishen.sim.engine.view.seat_view`).
        Raises ``ValueError`` before :meth:`reset` and when the hand is over (no seat to act)."""
        if self.done:
            raise ValueError("the hand is over: no seat to act, nothing to observe")
        seat = self.current_player
        _legal_mask(self.state, self._ep)  # the seat's own mask and legal list, copied with the state
        view = seat_view(self.state, seat, self._ep, self._tabs)
        return Observation(seat, view[0], view[0]["mask"], self.rules_name, self.rules, _read_only(self._ep),
                           _read_only(self._rp), self._tabs, self._logs[seat])

    # -- event log -----------------------------------------------------------
    def log_lines(self) -> list[str]:
        """The hand's events as JSON lines (reset with the wall, every action, the result)."""
        return [json.dumps(e, ensure_ascii=False) for e in self.events]

    def write_log(self, path) -> None:
        """Write :meth:`log_lines` to ``path`` (one JSON object per line) atomically
        (:func:`caishen.sim.safeio.atomic_write`: never through a link nor onto a device or FIFO; a
        :class:`caishen.sim.safeio.FileError` naming ``path`` when it cannot be written)."""
        from caishen.sim import safeio

        safeio.atomic_write(path, "".join(line + "\n" for line in self.log_lines()))


def replay(lines) -> Game:
    """Rebuild a :class:`Game` from its event log (JSON strings or dicts, as :meth:`Game.log_lines`).

    Replays the recorded wall and actions; raises ``ValueError`` if the log
    is malformed, an action is illegal or made by the wrong seat, or the
    replayed result differs from a recorded one.
    """
    events = [json.loads(x) if isinstance(x, str) else dict(x) for x in lines if not (isinstance(x, str) and not x.strip())]
    if not events or events[0].get("event") != "reset":
        raise ValueError("an event log must start with a 'reset' event")
    r = events[0]
    g = Game(r["rules"], r.get("options"))
    g.reset(seed=r.get("seed"), dealer=r["dealer"], wall=r["wall"], match_hand=r.get("match_hand", 0),
            streak=r.get("streak", 0))
    for i, e in enumerate(events[1:], start=1):
        if e.get("event") == "action":
            if e["seat"] != g.current_player:
                raise ValueError(f"event {i}: seat {e['seat']} acts but seat {g.current_player} is to act")
            g.step(e["action"])
        elif e.get("event") == "result":
            got = g.record
            want = {k: v for k, v in e.items() if k != "event"}
            if got != want:
                raise ValueError(f"event {i}: replayed result {got} differs from the recorded {want}")
        else:
            raise ValueError(f"event {i}: unknown event {e.get('event')!r}")
    return g


def legal_mask(game: Game) -> np.ndarray:
    """``bool[N_ACTIONS]``: the legal actions of the seat to act in ``game`` (all False when done).

    Same as :meth:`Game.legal_mask`; raises ``ValueError`` for a non-Game or an unstarted game.
    """
    if not isinstance(game, Game):
        raise ValueError(f"legal_mask expects a Game, got {type(game).__name__}")
    return game.legal_mask()


def check_state(game: Game, observations: bool = False) -> None:
    """Check a game's invariants; raises ``ValueError`` naming the violated one.

    Always (compiled, :func:`_check_state`): 136 tiles conserved (wall
    remainder + hands + melds + unclaimed discards), no kind over 4, no joker
    in a meld (K-2.3), hand sizes, the seat to act, a non-empty mask whose
    every action is legal by an independent restatement of the rules, the
    legal list holding no action twice, scores summing to zero (K-8.5), the
    wall pointers above the reserve (K-3.4).  With ``observations=True`` also
    that no seat's observation depends on what it cannot see: every seat's
    observation is unchanged when the tiles hidden from it (the live wall and
    the other concealed hands) are dealt out again at random, and other
    seats' concealed kong kinds and drawn tiles are hidden (K-5.3).
    """
    if not isinstance(game, Game):
        raise ValueError(f"check_state expects a Game, got {type(game).__name__}")
    game._need_started()
    err = _check_state(game.state, game._ep, game._rp, game._tabs)
    if err != 0:
        raise ValueError(f"state check failed: {ERR_MESSAGES[err]}")
    if observations:
        _check_observations(game)


def _hidden_twin(game: Game, seat: int, rng: np.random.Generator) -> Game:
    """A copy of ``game`` whose tiles hidden from ``seat`` are redistributed at random."""
    twin = Game(game.rules_name, game.rules.to_dict())
    twin._buf[0] = game.state
    twin._started = True
    st = twin.state
    head, tail = int(st["table"]["head"]), int(st["table"]["tail"])
    pool = [int(k) for k in st["wall"][head:tail + 1]]
    others = [p for p in range(N_SEATS) if p != seat]
    sizes = [int(st["hands"][p].sum()) for p in others]
    for p in others:
        pool += [k for k in range(N_KINDS) for _ in range(int(st["hands"][p, k]))]
    pool = [int(k) for k in rng.permutation(pool)]
    for p, n in zip(others, sizes):
        st["hands"][p] = np.bincount(pool[:n], minlength=N_KINDS)
        pool = pool[n:]
    st["wall"][head:tail + 1] = pool
    return twin


def _check_observations(game: Game) -> None:
    rng = np.random.default_rng(int(game.state["table"]["steps"]))
    st = game.state
    for seat in range(N_SEATS):
        obs = game.observation(seat)
        if not np.array_equal(obs["hand"], st["hands"][seat]):
            raise ValueError(f"state check failed: seat {seat}'s observation does not show its own hand")
        for p in range(N_SEATS):
            hidden = obs["meld_kind"][p][obs["meld_type"][p] == MELD_KONG_CONCEALED]
            if p != seat and (hidden != -1).any():
                raise ValueError(f"state check failed: seat {seat} sees seat {p}'s concealed kong kind (K-5.3)")
        if obs["drawn_tile"] >= 0 and not (obs["to_act"] == seat and obs["phase"] == PH_TURN):
            raise ValueError(f"state check failed: seat {seat} sees a drawn tile that is not its own")
        twin = _hidden_twin(game, seat, rng)
        other = twin.observation(seat)
        for key in obs:
            if not np.array_equal(obs[key], other[key]):
                raise ValueError(
                    f"state check failed: seat {seat}'s observation {key!r} depends on tiles hidden from it"
                )


def warm() -> None:
    """Play one hand of every rule set through :class:`Game` (reset, legal mask, step, the invariant
    checker, an observation: ``caishen warmup game``)."""
    from caishen.sim import rules

    for name in rules.names():
        g = Game(name).reset(seed=1)
        while not g.done:
            g.step(g.legal_actions()[0])
        g.check()
        g.observation(0)
