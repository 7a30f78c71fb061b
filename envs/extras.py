"""The observation layouts computed after a batch step from its planes: the suit grid, assist, candidates.

:class:`caishen.envs.batched.BatchedGames` fills its planes (or flat
vectors) inside its step kernel.  The other options of
:mod:`caishen.envs.observation` (``observation="grid"``, ``"candidates"``,
``assist=True`` on any layout) are built from those planes and the games'
states by one more numba call per step (:func:`_extras`), into buffers
allocated once here: the step kernel keeps its one job.  The final
observation of an ended hand is built from its final planes by the same
kernel, the decision-time blocks (assist, candidates) left empty: the hand
is over and the state is already dealt again (module docstring of
:mod:`caishen.envs.observation`).
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np
from numba import njit

from caishen.envs.assist import N_ASSIST_ROWS, _assist_rows
from caishen.envs.observation import (
    _flat_tables,
    candidate_shapes,
    check_layout,
    flat_size,
    n_planes,
)
from caishen.sim.borrow import borrowed
from caishen.sim.bots.candidates import N_CONTEXT, _context_from_planes, _encode_candidates, new_candidate_scratch
from caishen.sim.bots.features import _flatten, _to_grid
from caishen.sim.bots.policies import new_work
from caishen.sim.engine import N_KINDS

__all__ = ["Extras", "needs_extras"]

MODE_PLANES, MODE_FLAT, MODE_GRID, MODE_CANDIDATES = range(4)
_MODES = {"planes": MODE_PLANES, "flat": MODE_FLAT, "grid": MODE_GRID, "candidates": MODE_CANDIDATES}


def needs_extras(layout: str, assist: bool) -> bool:
    """True when the layout is built after the step kernel (anything but plain planes or flat vectors)."""
    return layout in ("grid", "candidates") or bool(assist)


class ExtraOut(NamedTuple):
    """The output buffers of :func:`_extras` (the layout's own is sized, the others have 0 rows)."""

    planes: np.ndarray  #: uint8[m, R (+ assist rows), 34]: the planes layout
    flat: np.ndarray  #: float32[m, F]: the flat layout
    grid: np.ndarray  #: uint8[m, R (+ assist rows), 4, 9]: the suit-grid layout
    cand: tuple  #: the candidates layout: (context float32[m, C], candidates float32[m, 40, 36],
    #: actions int64[m, 40], valid int8[m, 40])


@njit(cache=True)
def _extras(idx, games_of, seats, live, states, planes, ep, tabs, cfg, scr, out):
    """Row ``idx[j]`` of the outputs from row ``idx[j]`` of ``planes: uint8[m, R, 34]``, seen by ``seats[j]``
    in game ``games_of[j]`` of ``states``: the planes with the assist rows (``cfg[1]``; computed from the
    state where ``live[j]``, else 0), then per ``cfg[0]`` the planes, the flat vector, the grid, or the
    candidates ``(ctx: float32[m, C], x: float32[m, 40, 36], acts: int64[m, 40], valid: int8[m, 40])``
    (candidates only where ``live[j]`` and the seat is to act).  ``scr``: ``(xa: uint8[R + 4, 34], scalar,
    inv_high, work, tmp, rows, cols, scale)``; ``out``: the :class:`ExtraOut`.  Writes the outputs' rows
    ``idx`` only."""
    out_planes, out_flat, out_grid = out.planes, out.flat, out.grid
    idx, games_of, seats, live, states, planes, cand = borrowed((idx, games_of, seats, live, states, planes,
                                                                 out.cand))
    mode, assist, n_rows = cfg[0], cfg[1], cfg[2]
    xa, scalar, inv_high, work, tmp, rows, cols, scale = scr
    ctx, xs, acts, valid = cand
    joker = ep.joker
    for j in range(idx.shape[0]):
        r = idx[j]
        st = states[games_of[j]]
        seat = seats[j]
        for a in range(n_rows):
            for k in range(N_KINDS):
                xa[a, k] = planes[r, a, k]
        if assist != 0:
            if live[j]:
                _assist_rows(st, seat, joker, tabs, work, tmp, xa, n_rows)
            else:
                for a in range(n_rows, xa.shape[0]):
                    for k in range(N_KINDS):
                        xa[a, k] = 0
        if mode == MODE_PLANES:
            for a in range(xa.shape[0]):
                for k in range(N_KINDS):
                    out_planes[r, a, k] = xa[a, k]
        elif mode == MODE_FLAT:
            _flatten(xa, scalar, inv_high, out_flat[r])
        elif mode == MODE_GRID:
            _to_grid(xa, scalar, out_grid[r])
        else:
            _context_from_planes(xa, joker, tabs, rows, cols, scale, ctx[r])
            if assist != 0:
                _flatten(xa[n_rows:], scalar[n_rows:], inv_high[n_rows:], ctx[r, N_CONTEXT:])
            n = 0
            if live[j] and st.table.to_act == seat:
                n = _encode_candidates(st, ep, tabs, work, xs[r], acts[r])
            else:
                for i in range(xs.shape[1]):
                    acts[r, i] = -1
                    for f in range(xs.shape[2]):
                        xs[r, i, f] = 0.0
            for i in range(valid.shape[1]):
                valid[r, i] = 1 if i < n else 0


class Extras:
    """Buffers and the call of :func:`_extras` for one batch (module docstring).

    ``Extras(n, k, layout, history, assist, final_obs)``: ``n`` games, ``k``
    final observations per game (1 versus, 4 self-play).  :attr:`obs` and
    :attr:`final_obs` (None without ``final_obs``) are the batch's
    observations in its layout: ``uint8[n, R, 34]``, ``float32[n, F]``,
    ``uint8[n, R, 4, 9]``, or the candidates dict of ``[n, ...]`` arrays
    (``[n, k, ...]`` for the final ones).
    """

    def __init__(self, n: int, k: int, layout: str, history: bool, assist: bool, final_obs: bool):
        self.layout, self.history, self.assist = check_layout(layout, history, assist)
        self.n, self.k = n, k
        rows = n_planes(history)
        self._cfg = np.array([_MODES[layout], int(assist), rows], np.int64)
        scalar, inv_high = _flat_tables(history, assist)
        cs = new_candidate_scratch()
        self._scr = (np.zeros((rows + (N_ASSIST_ROWS if assist else 0), N_KINDS), np.uint8), scalar, inv_high,
                     new_work(), np.zeros(N_KINDS, np.uint8), cs[1], cs[2], cs[3])
        self.obs, self._out = self._buffers(n, rows)
        nf = n * k if final_obs else 0
        fin, self._fin_out = self._buffers(nf, rows)
        self.final_obs = self._shape_final(fin) if final_obs else None
        self._idx = np.arange(n, dtype=np.int64)
        self._live = np.ones(n, np.bool_)

    @property
    def shape(self) -> tuple[int, ...] | None:
        """One observation's shape (None for the candidates dict)."""
        return None if self.layout == "candidates" else self.obs.shape[1:]

    @property
    def dtype(self) -> np.dtype | None:
        """One observation's dtype (None for the candidates dict)."""
        return None if self.layout == "candidates" else self.obs.dtype

    def _buffers(self, m: int, rows: int):
        """``(obs, out)``: the buffers of ``m`` observations and the kernel's :class:`ExtraOut` over them."""
        ra = rows + (N_ASSIST_ROWS if self.assist else 0)
        planes = np.zeros((m if self.layout == "planes" else 0, ra, N_KINDS), np.uint8)
        flat = np.zeros((m if self.layout == "flat" else 0, flat_size(self.history, self.assist)), np.float32)
        grid = np.zeros((m if self.layout == "grid" else 0, ra, 4, 9), np.uint8)
        mc = m if self.layout == "candidates" else 0
        cand = {key: np.zeros((mc, *shape), dtype) for key, (shape, dtype) in candidate_shapes(self.assist).items()}
        cand["actions"][:] = -1
        obs = {"planes": planes, "flat": flat, "grid": grid, "candidates": cand}[self.layout]
        return obs, ExtraOut(planes, flat, grid, (cand["context"], cand["candidates"], cand["actions"], cand["valid"]))

    def _shape_final(self, fin):
        """The final buffers as ``[n, k, ...]`` views."""
        if isinstance(fin, dict):
            return {key: v.reshape(self.n, self.k, *v.shape[1:]) for key, v in fin.items()}
        return fin.reshape(self.n, self.k, *fin.shape[1:])

    def _run(self, idx, games_of, seats, live, states, planes, ep, tabs, out) -> None:
        _extras(idx, games_of, seats, live, states, planes, ep, tabs, self._cfg, self._scr, out)

    def update(self, states, player, ep, tabs, planes, fin_planes, ended) -> None:
        """The observations of the seats to act (``player: int64[n]``) from the step's ``planes: uint8[n, R,
        34]``, and the final observations of the games that ``ended: bool[n]`` from ``fin_planes: uint8[n, k,
        R, 34]`` (their ``k`` seats: the learning seat ``player`` in versus mode, else 0..3)."""
        self._run(self._idx, self._idx, player, self._live, states, planes, ep, tabs, self._out)
        if self.final_obs is None or not ended.any():
            return
        g = np.repeat(np.flatnonzero(ended), self.k).astype(np.int64)
        j = np.tile(np.arange(self.k, dtype=np.int64), g.size // self.k)
        seats = j if self.k > 1 else player[g]
        flat_fin = fin_planes.reshape(self.n * self.k, *fin_planes.shape[2:])
        self._run(g * self.k + j, g, seats.astype(np.int64), np.zeros(g.size, np.bool_), states, flat_fin, ep, tabs,
                  self._fin_out)

    def observe(self, states, seats, ep, tabs, planes, out=None):
        """The observations of ``seats: int64[n]`` (candidates only for a seat to act) from their ``planes``;
        into new buffers, or ``out`` (as :attr:`obs`)."""
        if out is None:
            obs, kernel_out = self._buffers(self.n, n_planes(self.history))
        else:
            obs, kernel_out = out, _as_out(out, self.layout)
        self._run(self._idx, self._idx, seats, self._live, states, planes, ep, tabs, kernel_out)
        return obs

    def buffers(self) -> list[np.ndarray]:
        """Every array held (for :meth:`caishen.envs.batched.BatchedGames.nbytes`)."""
        out = []
        for o in (self._out, self._fin_out):
            out += [o.planes, o.flat, o.grid, *o.cand]
        return out


def _as_out(obs, layout: str) -> ExtraOut:
    """The kernel's outputs (:class:`ExtraOut`) writing into ``obs`` (a buffer of :attr:`Extras.obs`'s shape)."""
    empty = (np.zeros((0, 1, N_KINDS), np.uint8), np.zeros((0, 1), np.float32), np.zeros((0, 1, 4, 9), np.uint8))
    if layout == "candidates":
        return ExtraOut(*empty, (obs["context"], obs["candidates"], obs["actions"], obs["valid"]))
    z = candidate_shapes(False)
    cand = tuple(np.zeros((0, *shape), dtype) for shape, dtype in z.values())
    cand = (cand[1], cand[0], cand[2], cand[3])
    parts = list(empty)
    parts[{"planes": 0, "flat": 1, "grid": 2}[layout]] = obs
    return ExtraOut(*parts, cand)
