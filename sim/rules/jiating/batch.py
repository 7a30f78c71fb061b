"""The recorded Jiating wins of a self-play batch scored in one numba call (J-5..J-9).

The engine records the context of every Jiating win in its per-hand records
(``RECORD_DTYPE[n]`` of :mod:`caishen.sim.rules.records`: ``rec[i].wins[j]``,
a :data:`~caishen.sim.rules.records.WIN_DTYPE` record each).  :func:`score_batch` scores all of them with the numba
hand kernel (:func:`caishen.sim.rules.jiating.points._hand_points`: the
context checks, :func:`caishen.sim.rules.jiating.kernels._score_win`, the
payments) in one call and returns the J-9
scoring columns of :data:`caishen.sim.rules.jiating.records.COLUMNS`:

- ``P_s``, ``G_s`` (J-6.1) of each winning seat, 0 for the others;
- ``pay_p_w``: what seat ``p`` paid seat ``w`` (J-6.2..J-6.5, J-3.4);
- ``P01`` .. ``P50``: the first winner's pattern points (after doubling and
  exclusions); ``patterns_s``: each winner's patterns as ``"P01:2,P03:2"``
  (``""`` for a seat that did not win), built once per distinct pattern
  list, not once per win;
- ``score_s``: each seat's change (zero-sum, J-6.5).

The columns the engine fills itself (hand, dealer, declarations, ...) are
not here: :func:`caishen.sim.rules.jiating.records.finish_records` copies them and takes
the others from :func:`score_batch` (the Python scorer is the slow obvious
reference in the tests, ``tests/jiating_reference.py``).  A recorded win the
scorer does not accept (inconsistent context, not a complete hand, payments
that do not sum to zero) raises ``RuntimeError`` naming the hand: the engine
and the scorer must agree on every win.
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np
from numba import njit

from caishen.sim import tiles as _tiles
from caishen.sim.borrow import borrowed
from caishen.sim.rules import codes as _codes
from caishen.sim.rules import records as _E  # the per-hand records and their win contexts
from caishen.sim.rules import jiating as _J
from caishen.sim.rules.jiating import kernels as _K
from caishen.sim.rules.jiating import points as _points
from caishen.sim.rules.jiating.points import D_G, D_P, D_PATS, D_PAY, _hand_points
from caishen.sim.tables import hand_tables

N_SEATS = 4
N_PATTERNS = len(_J.PATTERN_IDS)  # 50
PATTERN_IDS = _J.PATTERN_IDS

_MAX_WINNERS = _E.MAX_WINNERS

_BATCH_MESSAGES = _points.MESSAGES

WIN_TYPE_NAMES = {_J.WIN_SELF_DRAW: "self_draw", _J.WIN_DISCARD: "discard", _J.WIN_ROBBED_KONG: "robbed_kong"}
DECLARATION_NAMES = {_codes.DECL_NONE: "none", _codes.DECL_READY: "jiating", _codes.DECL_HARD: "hard"}


def _meld_tiles(t: int, k: int) -> str:
    n = 3 if t == _tiles.MELD_PONG else 4
    return _tiles.kind_name(k) * n


def _win_case(x: np.void, dealer: int, streak: int) -> dict:
    """The scoring-vector case of one recorded win ``x`` (a :data:`~caishen.sim.rules.records.WIN_DTYPE` record)."""
    win_type = WIN_TYPE_NAMES[int(x["type"])]
    melds = [{"type": _tiles.MELD_TYPE_NAMES[int(x["meld_type"][i])],
              "tiles": _meld_tiles(int(x["meld_type"][i]), int(x["meld_kind"][i]))}
             for i in range(int(x["n_melds"]))]
    tile = int(x["tile"])
    return {
        "rules": "jiating",
        "dealer": dealer,
        "streak": streak,
        "winner": int(x["seat"]),
        "win_type": win_type,
        "discarder": None if win_type == "self_draw" else int(x["discarder"]),
        "concealed": _tiles.to_str(x["hand"].astype(np.uint8)),
        "melds": melds,
        "win_tile": _tiles.kind_name(tile),
        "replacement_draw": bool(x["replacement"]),
        "declaration": DECLARATION_NAMES[int(x["decl"])],
        "first_turn": bool(x["first_turn"]),
        "visible": _tiles.kind_name(tile) * int(x["visible"]),
        "on_dealers_first_discard": bool(x["on_first"]),
        "dealer_ready_after_first_discard": bool(x["dealer_ready"]),
    }


def win_cases(row: np.void) -> list[dict]:
    """The scoring-vector cases of the wins of one hand's record (a ``RECORD_DTYPE`` record), first winner first.

    ``visible`` holds only the copies of the winning kind that the winner
    could see (discards and others' exposed melds, P27 绝张子): the scorer
    uses nothing else of it.
    """
    dealer, streak = int(row["dealer"]), int(row["streak"])
    return [_win_case(row["wins"][j], dealer, streak) for j in range(int(row["n_winners"]))]


class ScoredRows(NamedTuple):
    """What :func:`_score_rows` fills for ``n`` hands and their ``n_wins`` wins (the caller zeroes them, ``err``
    -1s)."""

    P: np.ndarray  #: int32[n, 4]: each winner's P (J-6.1)
    G: np.ndarray  #: int32[n, 4]: each winner's G (J-6.1)
    pay: np.ndarray  #: int32[n, 4, 4]: ``[h, p, w]``: what ``p`` paid ``w``
    score: np.ndarray  #: int64[n, 4]: each seat's score change
    first_pats: np.ndarray  #: int16[50, n]: the first winner's pattern points (pattern-major: contiguous columns)
    win_pats: np.ndarray  #: int16[n_wins, 50]: every win's pattern points, in order
    win_row: np.ndarray  #: int64[n_wins, 2]: every win's (hand, seat), in order
    err: np.ndarray  #: int64[3]: ``[hand, code, j]`` of the first win the scorer rejects (-1s: none)


@njit(cache=True)
def _score_rows(rec, params, tabs, pp, pay, out):
    """Score every recorded win of the records ``rec: RECORD_DTYPE[n]`` (``rec[h].wins``) with the hand kernel
    :func:`caishen.sim.rules.jiating.points._hand_points` into ``out`` (:class:`ScoredRows`).

    ``pp``: the :class:`~caishen.sim.rules.jiating.points.PatternPoints` of
    :func:`caishen.sim.rules.jiating.points.points_tables`; ``pay: int64[4]``:
    scratch.  Returns the number of wins scored; on the first bad
    win it stops and sets ``out.err = [hand, code, j]`` (``code``: an ``ERR_*`` of
    the kernels or of :mod:`caishen.sim.rules.jiating.points`, ``j``: the win's row).
    """
    rec, params, tabs, pp, pay, out = borrowed((rec, params, tabs, pp, pay, out))
    # no reference counts per win (caishen.sim.borrow)
    P_out, G_out, pay_out, score_out = out.P, out.G, out.pay, out.score
    first_pats, win_pats, win_row, err = out.first_pats, out.win_pats, out.win_row, out.err
    detail = pp.detail
    n = rec.shape[0]
    m = 0
    for h in range(n):
        r = rec[h]
        nw = r.n_winners
        if nw == 0:
            continue
        code, j = _hand_points(r.dealer, r.streak, nw, r.wins, params, tabs, pp, pay)
        if code != 0:
            err[0] = h
            err[1] = code
            err[2] = j
            return m
        for j in range(nw):
            w = r.wins[j].seat
            P_out[h, w] = detail[j, D_P]
            G_out[h, w] = detail[j, D_G]
            for p in range(N_SEATS):
                if p != w:
                    pay_out[h, p, w] = detail[j, D_PAY + p]
            for i in range(N_PATTERNS):
                win_pats[m, i] = detail[j, D_PATS + i]
                if j == 0:
                    first_pats[i, h] = detail[j, D_PATS + i]
            win_row[m, 0] = h
            win_row[m, 1] = w
            m += 1
        for p in range(N_SEATS):
            score_out[h, p] = pay[p]
    return m


def patterns_text(points: np.ndarray) -> str:
    """``"P01:2,P03:2"`` of one win's pattern points (``int[50]``, P01 first; 0 = not scored)."""
    return ",".join(f"{PATTERN_IDS[i]}:{int(points[i])}" for i in np.flatnonzero(points))


def _texts(win_pats: np.ndarray) -> np.ndarray:
    """The pattern text of each row of ``win_pats: int16[m, 50]``, built once per distinct row."""
    if len(win_pats) == 0:
        return np.empty(0, dtype=object)
    rows = np.ascontiguousarray(win_pats)
    keys = rows.view(np.dtype((np.void, rows.dtype.itemsize * rows.shape[1]))).ravel()
    uniq, first, inverse = np.unique(keys, return_index=True, return_inverse=True)
    texts = np.array([patterns_text(rows[i]) for i in first], dtype=object)
    return texts[inverse.ravel()]


def score_batch(rules: _J.JiatingRules | None, rec: np.ndarray) -> dict[str, np.ndarray]:
    """The J-9 scoring columns of the engine's records, every recorded win scored by the numba scorer.

    ``rules``: the :class:`~caishen.sim.rules.jiating.JiatingRules` the hands were
    played under (None: the spec's defaults); ``rec``: the engine's records
    ``RECORD_DTYPE[n]`` (:mod:`caishen.sim.rules.records`).  Returns ``{name: array[n]}`` for
    ``P_s``, ``G_s``, ``pay_p_w``, ``P01``..``P50``, ``patterns_s`` and
    ``score_s`` with the dtypes of :data:`caishen.sim.rules.jiating.records.COLUMNS`.
    Raises ``ValueError`` for records of another shape or dtype and
    ``RuntimeError`` naming the hand when a recorded win is not accepted by
    the scorer (the engine and the scorer disagree).
    """
    rec = np.asarray(rec)
    if rec.ndim != 1 or rec.dtype != _E.RECORD_DTYPE:
        raise ValueError(f"rec must be the records RECORD_DTYPE[n], got {rec.dtype}{list(rec.shape)}")
    params = _K.kernel_tables(rules)[0]
    n = len(rec)
    nw = rec["n_winners"]
    n_wins = int(np.clip(nw, 0, _MAX_WINNERS).sum())
    P_out = np.zeros((n, N_SEATS), np.int32)
    G_out = np.zeros((n, N_SEATS), np.int32)
    pay_out = np.zeros((n, N_SEATS, N_SEATS), np.int32)
    score_out = np.zeros((n, N_SEATS), np.int64)
    first_pats = np.zeros((N_PATTERNS, n), np.int16)
    win_pats = np.zeros((n_wins, N_PATTERNS), np.int16)
    win_row = np.zeros((n_wins, 2), np.int64)
    err = np.full(3, -1, np.int64)
    m = _score_rows(rec, params, hand_tables(), _points.points_tables(rules), np.zeros(N_SEATS, np.int64),
                    ScoredRows(P_out, G_out, pay_out, score_out, first_pats, win_pats, win_row, err))
    if err[0] >= 0:
        h, code, j = (int(v) for v in err)
        what = _BATCH_MESSAGES.get(code) or _K.ERR_MESSAGES.get(code, f"code {code}")

        try:
            case = win_cases(rec[h])[j]
        except Exception:  # pragma: no cover - a row too broken to print as a case
            case = rec[h]["wins"][j].tolist()
        raise RuntimeError(f"hand {h}: the scorer rejects recorded win {j}: {what}; case: {case}")
    out: dict[str, np.ndarray] = {}
    for s in range(N_SEATS):
        out[f"P_{s}"] = P_out[:, s].copy()
        out[f"G_{s}"] = G_out[:, s].copy()
    for p in range(N_SEATS):
        for w in range(N_SEATS):
            if p != w:
                out[f"pay_{p}_{w}"] = pay_out[:, p, w].copy()
    for i, pid in enumerate(PATTERN_IDS):
        out[pid] = first_pats[i]
    texts = _texts(win_pats[:m])
    for s in range(N_SEATS):
        col = np.full(n, "", dtype=object)
        sel = win_row[:m, 1] == s
        col[win_row[:m, 0][sel]] = texts[sel]
        out[f"patterns_{s}"] = col
    for s in range(N_SEATS):
        out[f"score_{s}"] = score_out[:, s].astype(np.int32)
    return out
