"""Watching one hand: a run's hand or a ``Game`` hand log re-played move by move, shown as text.

A :class:`Trace` is one hand as frames: the table after the deal and after
every action (each seat's concealed tiles, melds, discards, 飘 circle,
declaration and score; the seat to act and the claims it is offered), the
actions taken, and the hand's record (``result``).  It comes from

- :func:`from_log`: a JSON-lines hand log written by
  :meth:`caishen.sim.engine.Game.write_log` (checked by the engine's
  :func:`caishen.sim.engine.replay`: the recorded result must come out again);
- :func:`from_run`: a hand of a ``caishen simulate`` run or a ``caishen
  match`` (a ladder's pairs are matches), addressed by chunk and index or by
  ``hand_id``.  A run stores only each hand's record, so the
  hand is *re-played*: self-play is reproducible from (rules, options, chunk
  seed, policies) (:mod:`caishen.sim.selfplay.batch`), so the chunk's earlier
  hands are played by the batch kernel to bring the random stream, the bots'
  state, the dealer and the streak to the hand (a match: the seating's
  earlier walls, :mod:`caishen.sim.analysis.arena`), and the hand itself is dealt
  and stepped through :class:`~caishen.sim.engine.Game` with the same kernel
  bots.  The replayed record must equal the stored row, column by column, or
  the replay is refused (``ValueError`` naming the column).  Before
  anything is played, the options, the engine and bot sources and the
  bots' weights must still be those the run recorded in run.json
  (:func:`check_recorded`): a changed ``tuned:`` file can give the stored
  record with other moves;
- :func:`trace_game`: any :class:`Game` driven by a chooser (``caishen play``).

:func:`render_text` prints a trace as a table per move (every seat's tiles,
or one seat's view); :mod:`caishen.sim.analysis.replay_html` writes the page.
Every file is read through :mod:`caishen.sim.safeio`.
"""

from __future__ import annotations

import dataclasses
import io
import os
from collections.abc import Callable
from pathlib import Path

import numpy as np

from caishen.sim import safeio
from caishen.sim.engine import (
    DF_CLAIMED,
    N_SEATS,
    PH_TURN,
    Game,
    _next_dealer,
    _next_streak,
    _random_action,
    _shuffle_wall,
    action_name,
    new_records,
    new_state,
    replay as replay_log,
)
from caishen.sim.hand import _shanten
from caishen.sim.rng import _rng_below
from caishen.sim.tiles import MELD_KONG_CONCEALED, MELD_NONE, MELD_TYPE_NAMES, kind_name

#: bytes of a hand log at most (a hand has a few hundred events of ~100 bytes)
MAX_LOG_BYTES = 4 << 20
#: bytes of one chunk file at most (10**6 rows of ~100 columns, compressed)
MAX_CHUNK_BYTES = 1 << 31
#: the chunk function of ``caishen simulate`` runs (the only runs whose hands are re-played here)
ENGINE_CHUNK_FN = "caishen.sim.selfplay.runner:engine_chunk"
#: the chunk functions of ``caishen match`` runs (:mod:`caishen.sim.analysis.arena`: ``chunk_2/3/4``)
MATCH_CHUNK_PREFIX = "caishen.sim.analysis.arena:chunk_"
#: hands per match in a run (``engine_chunk`` plays ``play_batch``'s default)
RUN_MATCH_LEN = 16
DECL_NAMES = {0: "", 1: "架听 (declared ready)", 2: "硬子 (declared hard)"}


@dataclasses.dataclass
class Trace:
    """One hand as frames (module docstring).

    ``frames[k]``: the table before action ``k`` (``frames[-1]``: the end),
    a dict of plain ints, strings and lists (JSON-ready): ``step``,
    ``to_act`` (-1 at the end), ``phase``, ``tiles_left``, ``pending``
    (``[kind, seat]`` of the discard or added kong on offer, or None),
    ``drawn`` (the kind the seat to act just drew, -1), ``legal`` (names of
    the actions offered to the seat to act: its claims in a claim phase),
    ``action`` (``{"seat", "name"}`` taken from this frame, None at the end),
    and ``seats``: four dicts with ``hand`` (kinds, sorted), ``melds``
    (``[type name, kind]``, the kind of a chow is its lowest tile),
    ``discards`` (``[kind, claimed]``), ``decl`` (0 none, 1 架听, 2 硬子),
    ``piao_open`` (inside a 飘 circle, K-6.5), ``piao_count``, ``score``,
    ``dealer``.  ``result``: the hand's record (records.md), ``joker``: the
    财神 kind or -1, ``source``: where the hand came from (text).
    """

    rules: str
    options: dict
    joker: int
    frames: list
    result: dict
    source: str

    def to_json(self) -> dict:
        return dataclasses.asdict(self)


def snapshot(game: Game, step: int) -> dict:
    """The table of ``game`` now as one frame of a :class:`Trace` (``action`` None), numbered ``step``."""
    st = game.state
    sc = st["table"]
    seats = []
    for p in range(N_SEATS):
        hand = [k for k in range(34) for _ in range(int(st["hands"][p, k]))]
        melds = [[MELD_TYPE_NAMES[int(t)], int(k)] for t, k in zip(st["meld_type"][p], st["meld_kind"][p])
                 if int(t) != MELD_NONE]
        n = int(st["seat"][p]["n_discards"])
        discards = [[int(st["discards"][p, i]), bool(st["dflags"][p, i] & DF_CLAIMED)] for i in range(n)]
        seats.append({
            "hand": hand, "melds": melds, "discards": discards, "decl": int(st["seat"][p]["decl"]),
            "piao_open": bool(st["seat"][p]["circle_open"]), "piao_count": int(st["seat"][p]["joker_discards"]),
            "score": int(st["seat"][p]["score"]), "dealer": p == int(sc["dealer"]),
        })
    done = game.done
    own_turn = not done and int(sc["phase"]) == PH_TURN
    return {
        "step": step,
        "to_act": -1 if done else game.current_player,
        "phase": game.phase,
        "tiles_left": game.tiles_left,
        "pending": None if done or int(sc["tile"]) < 0 else [int(sc["tile"]), int(sc["src"])],
        "drawn": int(sc["drawn"]) if own_turn else -1,
        "legal": [] if done else [action_name(a) for a in game.legal_actions()],
        "action": None,
        "seats": seats,
    }


def trace_game(game: Game, choose: Callable[[Game], int], source: str = "a game") -> Trace:
    """Play ``game`` (just reset) to its end, ``choose(game) -> action`` for every move, recording frames.

    Raises ``ValueError`` if ``game`` is over already or a chosen action is illegal (:meth:`Game.step`).
    """
    if game.done:
        raise ValueError("the hand is over already: nothing to trace")
    frames = [snapshot(game, 0)]
    while not game.done:
        seat = game.current_player
        a = int(choose(game))
        game.step(a)
        frames[-1]["action"] = {"seat": seat, "name": action_name(a)}
        frames.append(snapshot(game, len(frames)))
    result = game.record
    for p, s in enumerate(frames[-1]["seats"]):  # a rule set scored after the hand pays in the record
        s["score"] = int(result[f"score_{p}"])
    return Trace(game.rules_name, game.rules.to_dict(), int(game._ep.joker), frames, result, source)


# ---------------------------------------------------------------------------
# a hand log
# ---------------------------------------------------------------------------
def from_log(path: str | os.PathLike) -> Trace:
    """The hand of a JSON-lines log (:meth:`Game.write_log`), checked by :func:`caishen.sim.engine.replay`.

    Raises :class:`caishen.sim.safeio.FileError` for a file that is missing, a link, not a regular file,
    too large or not UTF-8, and ``ValueError`` naming the file for a log that is malformed or does not
    replay to its recorded result.
    """
    try:
        text = safeio.read_text(path, MAX_LOG_BYTES, what="a hand log")
    except FileNotFoundError:
        raise ValueError(f"{str(path)!r}: no such run directory or hand log") from None
    lines = [x for x in text.splitlines() if x.strip()]
    try:
        events = [safeio.parse_json(x) for x in lines]
        if not all(isinstance(e, dict) for e in events):
            raise ValueError("every line must be a JSON object")
        game = replay_log(events)  # the engine's checks: legal actions by the right seat, the recorded result
    except (ValueError, KeyError, TypeError) as e:
        raise ValueError(f"{str(path)!r} is not a replayable hand log: {e}") from None
    if not game.done:
        raise ValueError(f"{str(path)!r} is not a replayable hand log: it ends before the hand does")
    actions = iter([e["action"] for e in game.events if e["event"] == "action"])
    r = game.events[0]  # the reset event as Game wrote it again: every key present
    fresh = Game(r["rules"], r["options"]).reset(seed=r["seed"], dealer=r["dealer"], wall=r["wall"],
                                                  match_hand=r["match_hand"], streak=r["streak"])
    return trace_game(fresh, lambda g: next(actions), source=f"hand log {Path(path).name}")


# ---------------------------------------------------------------------------
# a run's hand
# ---------------------------------------------------------------------------
def locate(meta: dict, hand: str | int) -> tuple[int, int]:
    """``(chunk, index)`` of a run's hand given as ``hand_id`` (``"1234"``) or ``"CHUNK:INDEX"``.

    ``meta``: the run's validated run.json.  Raises ``ValueError`` naming the hand if it is malformed or
    outside the run.
    """
    text = str(hand).strip()
    size, games, n_chunks = int(meta["chunk_size"]), int(meta["games"]), int(meta["n_chunks"])
    try:
        if ":" in text:
            c, i = (int(x) for x in text.split(":"))
        else:
            hid = int(text)
            if not 0 <= hid < games:
                raise IndexError
            c, i = divmod(hid, size)
    except ValueError:
        raise ValueError(f"--hand {text!r}: give a hand number (0..{games - 1}) or CHUNK:INDEX") from None
    except IndexError:
        raise ValueError(f"--hand {text}: the run has hands 0..{games - 1}") from None
    rows = min(size, games - c * size) if 0 <= c < n_chunks else 0
    if not 0 <= c < n_chunks:
        raise ValueError(f"--hand {text}: the run has chunks 0..{n_chunks - 1}")
    if not 0 <= i < rows:
        raise ValueError(f"--hand {text}: chunk {c} has hands 0..{rows - 1}")
    return c, i


def _stored_row(run_dir: Path, meta: dict, chunk: int, index: int) -> dict:
    import pyarrow as pa
    import pyarrow.parquet as pq

    from caishen.sim.selfplay import manifest, records

    check = manifest.verify(run_dir, meta)
    if chunk not in check.ok:
        why = "; ".join(d for d in check.describe(50) if f"chunk {chunk}" in d or f"{chunk:05d}" in d)
        raise ValueError(f"{str(run_dir)!r}: chunk {chunk} is not a verified chunk of the run"
                         + (f" ({why})" if why else " (not played yet)") + "; rerun its command to repair it")
    data = safeio.read_bytes(records.chunk_path(run_dir, chunk), MAX_CHUNK_BYTES, what="a chunk file")
    table = pq.read_table(pa.BufferReader(data)).slice(index, 1)
    return {name: col[0].as_py() for name, col in zip(table.column_names, table.columns)}


def _match_hand(meta: dict, seed_entropy: int, chunk: int, index: int) -> tuple[list[str], int, int, int, int, str]:
    """Row ``index`` of a match chunk (:mod:`caishen.sim.analysis.arena`): ``(seat policies, bots' seed,
    wall_seed, wall in the chunk, seating, where)``; the row is wall ``index // n_seatings`` in seating
    ``index % n_seatings`` (the arena's wall-major rows)."""
    from caishen.sim.analysis import arena

    sched, n_p = arena.schedule_of(meta)
    seats = arena.seatings(n_p, sched)
    names = arena.policy_names(meta["policies"], n_p, sched)
    wall, r = divmod(index, len(seats))
    seat_policies = [names[i] for i in seats[r]]
    hand_id = chunk * int(meta["chunk_size"]) + index
    where = (f"wall {hand_id // len(seats)} of the match, seating {r}: "
             + ", ".join(f"seat {s} {p}" for s, p in enumerate(seat_policies)))
    return seat_policies, arena._bots_seed(seed_entropy, r), int(seed_entropy), wall, r, where


def check_recorded(run_dir: str | os.PathLike, meta: dict) -> None:
    """Refuse (``ValueError`` naming what changed) to re-play a run whose hands this code and these files
    would not play again: the rule options it recorded (resolved by this version: an option added or a
    default changed), the engine and bot sources (run.json's ``source_digest``: the rows depend on them),
    and the digest of the bots' weights (``bot_weights``: a ``tuned:``/``learned:`` file changed since, or a
    ``mc:`` bot's base).  Checked before anything is played: a changed file could still give the stored
    record with other moves."""
    from caishen.sim.bots.registry import has_data, split_specs, weights_digest
    from caishen.sim.selfplay.rundir import _json_norm
    from caishen.sim.selfplay.runner import resolve_options, source_digest

    where = repr(str(run_dir))
    try:
        now = _json_norm(resolve_options(meta["rules"], meta.get("options", {})))
    except ValueError as e:
        raise ValueError(f"{where}: the run's rule options do not load in this version ({e})") from None
    stored = _json_norm(meta.get("options", {}))
    changed = sorted(k for k in set(now) | set(stored) if now.get(k) != stored.get(k))
    if changed:
        k = changed[0]
        raise ValueError(f"{where}: rule option {k} was {stored.get(k)!r} when the run was written, this version "
                         f"plays {now.get(k)!r}: refusing a replay that would not be the run's hands")
    if meta.get("source_digest") not in (None, source_digest()):
        raise ValueError(f"{where}: the engine or bot code changed since the run was written (source digest "
                         f"{meta['source_digest']}, now {source_digest()}; the run was written by caishen "
                         f"{meta.get('version', '?')}): refusing a replay that might not be the run's hands")
    recorded = meta.get("bot_weights")
    if recorded is not None:
        specs = list(dict.fromkeys(split_specs(meta["policies"])))
        try:
            digest = weights_digest(meta["policies"], meta["rules"])
        except ValueError as e:
            raise ValueError(f"{where}: a bot of the run cannot be loaded now ({e})") from None
        if digest != recorded:
            data = [p for p in specs if has_data(p)]
            raise ValueError(f"{where}: the bots' weights changed since the run was written (bot_weights {recorded}, "
                             f"now {digest}): the weights of {' or '.join(data) or 'a bot'} are not the run's; "
                             "refusing a replay that would not be the run's hands")


def from_run(run_dir: str | os.PathLike, hand: str | int) -> Trace:
    """Hand ``hand`` (``hand_id`` or ``"CHUNK:INDEX"``, :func:`locate`) of a ``caishen simulate`` run or of a
    ``caishen match`` (a ladder's pair ``OUT/pairs/II-JJ`` included), re-played and checked against its
    stored row (module docstring).  A match's ``hand_id`` is ``wall * n_seatings + seating``: the hands
    ``n_seatings * w .. n_seatings * (w + 1) - 1`` are wall ``w`` in each seating.

    Raises ``ValueError`` (one line, naming the run, hand or file) for a directory that is no run, holds
    symbolic links or a damaged chunk, a run of another chunk function (a sweep point, a 飘 study), a ladder's
    own folder (naming its pairs), a hand outside the run, a run whose options, code or bots' weights changed
    since it was written (:func:`check_recorded`, before anything is played), and a replay whose record
    differs from the stored row.
    """
    from caishen.sim.bots.registry import _seat_action, bot_table, make_context
    from caishen.sim.bots.policies import POLICY_RANDOM, new_work
    from caishen.sim.selfplay.batch import Bots, _duplicate_deal, _play_batch_walls
    from caishen.sim.selfplay.rundir import read_run_json
    from caishen.sim.selfplay.runner import chunk_seeds

    run_dir = Path(run_dir)
    if not run_dir.is_dir() or run_dir.is_symlink():
        raise ValueError(f"{str(run_dir)!r}: no such run directory")
    safeio.refuse_links(run_dir)
    if not (run_dir / "run.json").exists() and (run_dir / "pairs").is_dir():
        pairs = sorted(p.name for p in (run_dir / "pairs").iterdir() if p.is_dir())[:3]
        raise ValueError(f"{str(run_dir)!r} is a `caishen ladder`: replay a hand of one of its pairs, e.g. "
                         + ", ".join(repr(str(run_dir / "pairs" / p)) for p in pairs))
    meta = read_run_json(run_dir)
    fn = str(meta.get("chunk_fn", ENGINE_CHUNK_FN))
    is_match = fn.startswith(MATCH_CHUNK_PREFIX)
    if fn != ENGINE_CHUNK_FN and not is_match:
        kind = {"piao_study": "a 飘 study", "analysis.study": "a `caishen sweep` point"}  # a name the function holds
        what = next((v for k, v in kind.items() if k in fn), "not a `caishen simulate` or `caishen match` run")
        raise ValueError(f"{str(run_dir)!r} is {what}; replay re-plays the hands of `caishen simulate` and "
                         "`caishen match` runs (a ladder's pairs included), a `Game` and hand logs only")
    chunk, index = locate(meta, hand)
    check_recorded(run_dir, meta)
    row = _stored_row(run_dir, meta, chunk, index)
    seed = int(chunk_seeds(int(meta["seed"]), int(meta["n_chunks"]))[chunk])
    if is_match:  # the seating's batch: its bots' seed, the wall seed, the walls before this one
        policies, seed, wall_seed, before, r, seating = _match_hand(meta, seed, chunk, index)
        expect = {"wall": before, "seating": r, "wall_seed": wall_seed}  # the arena's own columns
    else:  # the chunk's batch: the hands before this one, in matches of RUN_MATCH_LEN
        policies, wall_seed, before, seating, expect = list(meta["policies"]), -1, index, "", {}

    game = Game(meta["rules"], meta["options"])
    ep, rp, tabs = game._ep, game._rp, game._tabs
    table, weights = bot_table(policies, game.rules_name, int(ep.joker))
    bx = make_context(game.rules_name, game.rules, weights, seed, policies)
    # the batch's hands before this one, by the batch kernel: the stream, the bots' state and work arrays
    st = new_state()[0]
    rec = new_records(before)
    work = new_work()
    # check None: the runs' kernel, no checker compiled in (caishen.sim.selfplay.batch._play_hand)
    hand_err, err = _play_batch_walls(seed, wall_seed, before, RUN_MATCH_LEN, Bots(table, bx, work), ep, rp, tabs,
                                      None, st, rec, np.zeros((before, N_SEATS), np.int8))
    if err != 0:
        raise ValueError(f"{str(run_dir)!r}: re-playing chunk {chunk} failed in hand {hand_err} (error {err})")
    if wall_seed >= 0:  # a duplicate deal (caishen.sim.selfplay.batch._play_batch_walls): a one-hand match
        dealer, mh, streak = int(_duplicate_deal(st, wall_seed, before, np.zeros(4, np.uint64))), 0, 0
    else:
        mh = index % RUN_MATCH_LEN  # the batch loop's dealer and streak
        if mh == 0:
            dealer = int(_rng_below(st["rng"], N_SEATS)) if ep.first_dealer_random != 0 else 0
            streak = 0
        else:
            prev = rec[index - 1]
            dealer = int(_next_dealer(ep, int(prev["dealer"]), int(prev["winners_mask"])))
            streak = int(_next_streak(int(prev["dealer"]), dealer, int(prev["streak"])))
        _shuffle_wall(st)
    game.state["rng"][:] = st["rng"]
    game.reset(wall=st["wall"].copy(), dealer=dealer, match_hand=mh, streak=streak)

    joker = int(ep.joker)
    chance = [0] * N_SEATS

    def choose(g: Game) -> int:
        g.legal_mask()  # the state's mask and legal list, as the batch loop's _legal_mask
        s, gs = g.current_player, g.state
        if (joker >= 0 and not chance[s] and int(gs["table"]["phase"]) == PH_TURN and gs["hands"][s, joker] > 0
                and (gs["seat"][s]["ready"] != 0 or gs["table"]["drawn"] < 0)):
            h = gs["hands"][s].copy()
            h[joker] -= 1
            chance[s] = int(_shanten(h, joker, tabs) <= 0)  # a 飘财 chance (K-9.1), as _play_hand counts it
        code, param = int(table[s, 0]), int(table[s, 1])
        if code == POLICY_RANDOM:
            return int(_random_action(gs))
        return int(_seat_action(code, param, gs, ep, rp, tabs, work, bx))

    where = f"hand {chunk}:{index} (hand_id {row.get('hand_id')}) of {str(run_dir)!r}"
    source = f"{'match' if is_match else 'run'} {run_dir.name}, chunk {chunk}, hand {index}"
    trace = trace_game(game, choose, source=source + (f" ({seating})" if seating else ""))
    replayed = {**{k: v for k, v in trace.result.items() if k != "next_dealer"}, "hand": index, **expect}
    if joker >= 0:
        replayed.update({f"piao_chance_{s}": chance[s] for s in range(N_SEATS)})
    for k, v in replayed.items():
        if k not in row:
            raise ValueError(f"{where}: the stored row has no column {k!r}; cannot check the replay")
        if row[k] != v:
            raise ValueError(f"{where}: the replayed {k} is {v!r} but the run stored {row[k]!r}: the engine or a "
                             "bot changed since the run was written; refusing a replay that is not the run's hand")
    return trace


def load(source: str | os.PathLike, hand: str | int | None = None) -> Trace:
    """A run directory's hand ``hand`` (:func:`from_run`) or a hand log file (:func:`from_log`, no ``hand``).

    Raises ``ValueError`` for a missing path, a run without ``hand``, or a log with one.
    """
    p = Path(source)
    if p.is_dir() and not p.is_symlink():
        if hand is None:
            raise ValueError(f"{str(source)!r} is a run directory: name a hand with --hand N or --hand CHUNK:INDEX")
        return from_run(p, hand)
    if not os.path.lexists(p):
        raise ValueError(f"{str(source)!r}: no such run directory or hand log")
    if hand is not None:
        raise ValueError(f"{str(source)!r} is a hand log (one hand): --hand is for run directories")
    return from_log(p)


# ---------------------------------------------------------------------------
# text
# ---------------------------------------------------------------------------
def _tiles(kinds, joker: int = -1) -> str:
    """Tile names, a joker marked ``*`` (``5z*``)."""
    return " ".join(kind_name(k) + ("*" if k == joker else "") for k in kinds) or "-"


def _meld_text(meld, hidden: bool) -> str:
    """A meld with its tiles: ``chow 3m4m5m``, ``pong 7z7z7z``, ``kong_exposed 2p2p2p2p``; a concealed kong
    another seat made is ``kong_concealed ??`` (K-5.3)."""
    kind_, k = meld
    if hidden and kind_ == MELD_TYPE_NAMES[MELD_KONG_CONCEALED]:
        return f"{kind_} ??"
    if kind_ == "chow":
        return f"{kind_} {kind_name(k)}{kind_name(k + 1)}{kind_name(k + 2)}"
    return f"{kind_} {kind_name(k) * (3 if kind_ == 'pong' else 4)}"


def frame_lines(frame: dict, seat: int | None = None, offers: bool = True, joker: int = -1) -> list[str]:
    """The table of one frame (:func:`snapshot`) as lines: a header, one line per seat (``seat``'s view
    hides the other seats' concealed tiles and concealed kong kinds, K-5.3), with ``offers`` the actions
    the seat to act is offered (its claims in a claim phase), and the action taken; ``joker``: the joker
    kind, marked ``*`` in hands and discards (-1: none)."""
    head = f"step {frame['step']}: {frame['phase']}, {frame['tiles_left']} tiles left"
    if frame["pending"]:
        head += f", on offer {kind_name(frame['pending'][0])} from seat {frame['pending'][1]}"
    lines = [head]
    for p, s in enumerate(frame["seats"]):
        own = seat is None or seat == p
        marks = (" D" if s["dealer"] else "  ") + (">" if frame["to_act"] == p else " ")
        extra = "".join([f" {DECL_NAMES[s['decl']]}" if s["decl"] else "",
                         " 飘-circle" if s["piao_open"] else "",
                         f" 飘x{s['piao_count']}" if s["piao_count"] else ""])
        hand = _tiles(s["hand"], joker) if own else f"[{len(s['hand'])} tiles]"
        if own and frame["drawn"] >= 0 and frame["to_act"] == p:
            hand += f"  (drew {kind_name(frame['drawn'])})"
        melds = ", ".join(_meld_text(m, not own) for m in s["melds"])
        lines.append(f"{marks}seat {p}{extra}: {hand}" + (f" | {melds}" if melds else "")
                     + f" | discards: {_tiles((k for k, _ in s['discards']), joker)}")
    if offers and frame["to_act"] >= 0 and (seat is None or seat == frame["to_act"]):
        from caishen.sim.termtext import wrap

        lines += wrap(f"   seat {frame['to_act']} may: " + ", ".join(frame["legal"]), indent=" " * 14)
    if frame["action"]:
        lines.append(f"-> seat {frame['action']['seat']}: {frame['action']['name']}")
    return lines


def breakdown(trace: Trace) -> dict:
    """The hand's score explained (the rule set's ``words`` hook,
    :class:`caishen.sim.rules.words.HandBreakdown`, from the record and the winners' tiles at the end):
    ``{"lines": [text], "scores": [4 ints], "breakdown": the HandBreakdown as JSON}``."""
    from caishen.sim.engine.params import load_rules
    from caishen.sim.rules import base

    name, rules = load_rules(trace.rules, trace.options)
    hands = [np.bincount(np.asarray(s["hand"], np.int64), minlength=34) for s in trace.frames[-1]["seats"]]
    b = base.get(name).words_hooks().explain_record(trace.result, rules, hands)
    return {"lines": b.lines(), "scores": list(b.scores), "breakdown": b.to_json()}


def result_lines(trace: Trace) -> list[str]:
    """The score breakdown as lines (:func:`breakdown`), after a ``result:`` line."""
    return ["result:", *(f"  {line}" for line in breakdown(trace)["lines"])]


def render_text(trace: Trace, seat: int | None = None) -> str:
    """The hand move by move: each frame's table (:func:`frame_lines`), then the score breakdown.

    ``seat``: None for every seat's tiles, or 0..3 for that seat's view (``ValueError`` otherwise).
    """
    if seat is not None and (isinstance(seat, bool) or seat not in range(N_SEATS)):
        raise ValueError(f"--seat {seat!r}: a seat is 0..3")
    out = io.StringIO()
    joker = f", 财神 (joker) {kind_name(trace.joker)}, marked *" if trace.joker >= 0 else ""
    out.write(f"{trace.rules} hand ({trace.source}{joker}); {len(trace.frames) - 1} moves\n")
    for f in trace.frames:
        out.write("\n".join(frame_lines(f, seat, joker=trace.joker)) + "\n\n")
    out.write("\n".join(result_lines(trace)) + "\n")
    return out.getvalue()
