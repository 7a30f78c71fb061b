"""The ``exec:CMD`` seat: an external program playing on a JSON-lines protocol (``docs/protocol.md``).

mjai's habit (the protocol riichi bots such as Mortal speak): the host
writes events, one JSON object per line, on the program's stdin; the program
answers each ``request`` with one line, ``{"action": NAME}``, on its stdout.
Tiles are mpsz names (``1m``..``9m``, ``1p``.., ``1s``.., ``1z``..``7z``;
:mod:`caishen.sim.tiles`), actions the names of
:mod:`caishen.sim.engine.layout` (``"discard 3m"``, ``"pong"``, ``"pass"``).
One process plays one seat of every game of a table (messages carry the
game), and sees only that seat's private information.

=================  =============================================================
message (host)     fields (compact JSON, one line each)
=================  =============================================================
``hello``          ``protocol``, ``rules``, ``seat``, ``time_limit``; answer
                   ``{"type": "ready"}`` (within :data:`STARTUP_LIMIT` s)
``start_hand``     ``game``, ``seat``, ``dealer``, ``joker`` (a tile or null)
``action``         ``game``, ``seat``, ``action``: every action of this seat,
                   and the public ones of the others (their passes and 硬子
                   refusals are not shown; a concealed kong without its tile)
``request``        ``game``, ``seat``, ``phase``, ``hand``, ``drawn``, ``melds``,
                   ``discards``, ``pending``, ``declarations``, ``tiles_left``,
                   ``dealer``, ``legal``; answer ``{"action": NAME}``, NAME one
                   of ``legal``, within the time limit
``end_hand``       ``game``, ``scores`` (4 ints, seat order), ``winners``
``bye``            the end: the program should exit (it is killed after 1 s)
=================  =============================================================

A program that crashes, answers late, writes garbage (not a JSON object with
a string ``action``, a line over :data:`MAX_LINE` bytes) or an action that is
not legal is killed with its process group, and the error
(:class:`caishen.envs.seats.SeatError`) names it, its seat and the decision.
Nothing it writes is evaluated: ``json.loads`` only; its command line is
split by :func:`shlex.split` and run without a shell.  POSIX only (pipes
watched with ``select``).
"""

from __future__ import annotations

import json
import os
import select
import signal
import subprocess
import tempfile
import time

import numpy as np

from caishen.envs.seats import SeatError, legal_names
from caishen.sim import tiles
from caishen.sim.engine import (
    MAX_MELDS,
    N_SEATS,
    PH_CLAIM,
    PH_ROB,
    PH_TURN,
    PHASE_NAMES,
    action_name,
    parse_action,
    public_action,
)

#: the protocol's name and version (the ``hello`` message)
PROTOCOL = "caishen-seat/1"
#: bytes of one answer line at most
MAX_LINE = 1 << 16
#: seconds a program may take to answer ``hello`` (its start-up; at least the time limit)
STARTUP_LIMIT = 30.0
#: seconds a program may take to exit after ``bye``
EXIT_WAIT = 1.0
#: bytes of a failed program's stderr quoted in the error
STDERR_TAIL = 400

_MELD_NAMES = {tiles.MELD_CHOW: "chow", tiles.MELD_PONG: "pong", tiles.MELD_KONG_EXPOSED: "kong_exposed",
               tiles.MELD_KONG_ADDED: "kong_added", tiles.MELD_KONG_CONCEALED: "kong_concealed"}


def _line(msg: dict) -> str:
    return json.dumps(msg, ensure_ascii=False, separators=(",", ":"))


# ---------------------------------------------------------------------------
# messages (pure functions of the state: what one seat may see)
# ---------------------------------------------------------------------------
def _meld(kind: int, mtype: int, hidden: bool) -> str:
    name = _MELD_NAMES[mtype]
    if hidden:
        return name
    if mtype == tiles.MELD_CHOW:
        return f"{name} {tiles.kinds_to_str([kind, kind + 1, kind + 2])}"
    n = 3 if mtype == tiles.MELD_PONG else 4
    return f"{name} {tiles.kinds_to_str([kind] * n)}"


def request(st, game: int, seat: int) -> dict:
    """The ``request`` message of ``seat`` to act in the engine state ``st`` (a ``STATE_DTYPE`` record): what
    that seat may see (as :meth:`caishen.sim.engine.Game.observation`) and its legal action names."""
    sc, sf = st["table"], st["seat"]
    phase = int(sc["phase"])
    drawn = int(sc["drawn"])
    melds = []
    for p in range(N_SEATS):
        row = []
        for k in range(MAX_MELDS):
            mtype = int(st["meld_type"][p, k])
            if mtype != tiles.MELD_NONE:
                row.append(_meld(int(st["meld_kind"][p, k]), mtype, p != seat and mtype == tiles.MELD_KONG_CONCEALED))
        melds.append(row)
    discards = [[tiles.kind_name(int(k)) for k in st["discards"][p, :int(sf[p]["n_discards"])]]
                for p in range(N_SEATS)]
    pending = None
    if phase in (PH_CLAIM, PH_ROB) and int(sc["tile"]) >= 0:
        pending = {"seat": int(sc["src"]), "tile": tiles.kind_name(int(sc["tile"]))}
    return {
        "type": "request", "game": int(game), "seat": int(seat), "phase": PHASE_NAMES[phase],
        "hand": tiles.to_str(st["hands"][seat]),
        "drawn": tiles.kind_name(drawn) if phase == PH_TURN and int(sc["to_act"]) == seat and drawn >= 0 else None,
        "melds": melds, "discards": discards, "pending": pending,
        "declarations": [int(sf[p]["decl"]) for p in range(N_SEATS)],
        "tiles_left": int(sc["tail"] - sc["head"] + 1), "dealer": int(sc["dealer"]),
        "legal": [action_name(int(a)) for a in np.flatnonzero(st["mask"])],
    }


# ---------------------------------------------------------------------------
# the process
# ---------------------------------------------------------------------------
class ExecSeat:
    """One ``exec:`` program playing seat ``seat`` of every game of a table (the arena host's :meth:`decide`).

    ``argv``: the command (already split); ``rules_name``/``joker``: for the
    ``hello`` and ``start_hand`` messages; ``limit``: seconds per decision.
    Started by :meth:`begin`, stopped by :meth:`close` (or killed on any
    failure).  ``seconds`` sums the time spent waiting for its answers.
    """

    def __init__(self, spec: str, argv: list[str], seat: int, rules_name: str, joker: int, limit: float):
        self.spec, self.argv, self.seats = spec, list(argv), (int(seat),)
        self.seat = int(seat)
        self.rules_name, self.joker, self.limit = rules_name, int(joker), float(limit)
        self.proc = None
        self._err = None
        self._buf = b""
        self._out: list[str] = []  # lines waiting to go out before the next request
        self.decisions = 0
        self.seconds = 0.0

    # -- life --------------------------------------------------------------------------------
    def begin(self) -> None:
        """Start the program and wait for its answer to ``hello``; a program started again (after a kill, or for
        the next ``reset()``) hears nothing that was queued for the one before it."""
        self._out, self._buf = [], b""
        self._err = tempfile.TemporaryFile()
        try:
            self.proc = subprocess.Popen(self.argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=self._err,
                                         close_fds=True, start_new_session=True)
        except OSError as e:
            raise SeatError(f"policy {self.spec!r} (seat {self.seat}): cannot start {self.argv[0]!r}: "
                            f"{e.strerror or e}") from None
        os.set_blocking(self.proc.stdin.fileno(), False)
        os.set_blocking(self.proc.stdout.fileno(), False)
        hello = {"type": "hello", "protocol": PROTOCOL, "rules": self.rules_name, "seat": self.seat,
                 "time_limit": self.limit}
        deadline = time.monotonic() + max(STARTUP_LIMIT, self.limit)
        self._send([_line(hello)], deadline, "hello")
        msg = self._recv(deadline, "hello")
        if msg.get("type") != "ready":
            self._fail("hello", f"answered {_quote(msg)} to hello; the first answer must be {{\"type\": \"ready\"}}")

    def close(self) -> None:
        """Send what is left and ``bye``, then let the program exit (killed after :data:`EXIT_WAIT` s)."""
        if self.proc is None:
            return
        try:
            self._send(self._out + [_line({"type": "bye"})], time.monotonic() + EXIT_WAIT, "bye")
            self._out = []
            self.proc.stdin.close()
            self.proc.wait(EXIT_WAIT)
        except (SeatError, OSError, subprocess.TimeoutExpired):
            pass
        self.kill()

    def kill(self) -> None:
        """Kill the program and its process group; release the pipes."""
        if self.proc is None:
            return
        try:
            os.killpg(self.proc.pid, signal.SIGKILL)
        except (ProcessLookupError, PermissionError):
            pass
        for f in (self.proc.stdin, self.proc.stdout):
            try:
                f.close()
            except OSError:
                pass
        try:
            self.proc.wait(EXIT_WAIT)
        except subprocess.TimeoutExpired:
            pass
        self.proc = None
        if self._err is not None:
            self._err.close()
            self._err = None

    # -- the table's side ------------------------------------------------------------------------
    def start_hand(self, game: int, dealer: int) -> None:
        self._out.append(_line({"type": "start_hand", "game": int(game), "seat": self.seat, "dealer": int(dealer),
                                "joker": tiles.kind_name(self.joker) if self.joker >= 0 else None}))

    def action(self, game: int, actor: int, action: int) -> None:
        """Queue ``actor``'s ``action`` as this seat sees it (:func:`caishen.sim.engine.public_action`)."""
        self.seen(game, actor, public_action(int(actor), int(action), self.seat))

    def seen(self, game: int, actor: int, name: str | None) -> None:
        """Queue an action already in the name this seat sees (None: one it does not see)."""
        if name is not None:
            self._out.append(_line({"type": "action", "game": int(game), "seat": int(actor), "action": name}))

    def end_hand(self, game: int, scores, winners) -> None:
        self._out.append(_line({"type": "end_hand", "game": int(game), "scores": [int(x) for x in scores],
                                "winners": [int(x) for x in winners]}))

    def decide(self, idx: np.ndarray, host) -> np.ndarray:
        """``int64[k]``: this seat's actions in the games ``idx`` of ``host`` (one request each, in turn)."""
        out = np.zeros(len(idx), np.int64)
        for j, i in enumerate(idx):
            st = host.states[i]
            game = host.game_of(i)
            where = host.where(i)
            msg = request(st, game, self.seat)
            t = time.monotonic()
            deadline = t + self.limit
            self._send(self._out + [_line(msg)], deadline, where)
            self._out = []
            answer = self._recv(deadline, where)
            self.seconds += time.monotonic() - t
            name = answer.get("action")
            if not isinstance(name, str):
                self._fail(where, f"answered {_quote(answer)}: an answer is {{\"action\": NAME}}, NAME a string")
            try:
                a = parse_action(name)
            except ValueError:
                a = -1
            if a < 0 or not st["mask"][a]:
                self._fail(where, f"answered action {_quote(name)}, which is not legal here; legal: "
                                  f"{legal_names(st['mask'].astype(bool))}")
            out[j] = a
        self.decisions += len(idx)
        return out

    # -- pipes -------------------------------------------------------------------------------
    def _send(self, lines: list[str], deadline: float, where: str) -> None:
        data = ("\n".join(lines) + "\n").encode()
        fd = self.proc.stdin.fileno()
        off = 0
        while off < len(data):
            left = deadline - time.monotonic()
            if left <= 0:
                self._fail(where, f"did not read its input within {self.limit:g} s")
            _, ready, _ = select.select([], [fd], [], left)
            if not ready:
                continue
            try:
                off += os.write(fd, data[off:off + (1 << 16)])
            except BlockingIOError:
                continue
            except (BrokenPipeError, ConnectionResetError):
                self._fail(where, "closed its input (it exited)")

    def _recv(self, deadline: float, where: str) -> dict:
        fd = self.proc.stdout.fileno()
        while b"\n" not in self._buf:
            if len(self._buf) > MAX_LINE:
                self._fail(where, f"wrote a line over {MAX_LINE} bytes")
            left = deadline - time.monotonic()
            if left <= 0:
                self._fail(where, f"did not answer within {self.limit:g} s (the time limit per decision, "
                                  "--time-limit)")
            ready, _, _ = select.select([fd], [], [], left)
            if not ready:
                continue
            try:
                chunk = os.read(fd, 1 << 16)
            except BlockingIOError:
                continue
            if not chunk:
                try:
                    self.proc.wait(EXIT_WAIT)  # its exit status for the message
                except subprocess.TimeoutExpired:
                    pass
                self._fail(where, "exited before answering")
            self._buf += chunk
        raw, _, self._buf = self._buf.partition(b"\n")
        if len(raw) > MAX_LINE:
            self._fail(where, f"wrote a line over {MAX_LINE} bytes")
        try:
            msg = json.loads(raw.decode("utf-8"))
        except (UnicodeDecodeError, ValueError, RecursionError):
            self._fail(where, f"wrote {_quote(raw.decode('utf-8', 'replace'))}, not a JSON object")
        if not isinstance(msg, dict):
            self._fail(where, f"wrote {_quote(msg)}, not a JSON object")
        return msg

    def _fail(self, where: str, what: str):
        """Kill the program and raise :class:`SeatError` naming it, its seat and the decision ``where``."""
        status = None if self.proc is None else self.proc.poll()
        tail = ""
        if self._err is not None:
            try:
                self._err.seek(0, os.SEEK_END)
                size = self._err.tell()
                self._err.seek(max(0, size - STDERR_TAIL))
                tail = self._err.read().decode("utf-8", "replace").strip()
            except OSError:
                tail = ""
        self.kill()
        parts = [f"policy {self.spec!r} (seat {self.seat}): {where}: the program {what}"]
        if status is not None:
            parts.append(f"exit status {status}")
        if tail:
            parts.append("its stderr ends: " + " | ".join(tail.splitlines()[-3:]))
        parts.append("it was killed; the chunks written before are kept: rerun the same command to resume")
        raise SeatError("; ".join(parts))


def _quote(x) -> str:
    """A short, printable rendering of what a program wrote (for messages)."""
    from caishen.sim.rules.options import short_repr

    return short_repr(x)
