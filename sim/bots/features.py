"""Observation feature sets: one named, versioned table per set, and the numba encoders that read them.

A *feature set* is what a policy reads, laid out once: its name, its
version, and its groups (name, rows, largest value, scalar or per kind,
meaning with the rule ID).  Everything that shows an observation reads
these tables and nothing else: the encoders below (numba, usable from the
self-play kernels and the bots as well as from the envs), the envs' face
:mod:`caishen.envs.observation` and its docstring tables (tested against
:func:`doc_table`), the spaces of the envs, the checkpoints of
:mod:`caishen.agents.ppo` and the weights files of
:mod:`caishen.sim.bots.learned` (both record the feature set's name and
version and refuse another, :func:`check_feature_set`).  Change a group
and the set's version goes up; a trained network of the old version then
stops with an error naming its file, instead of reading shifted inputs.
(mjx's ``mjx/observation.py`` does the same with its named feature sets.)

================  =====  ========================================================
feature set       ver.   what it is
================  =====  ========================================================
``planes``        1      ``uint8[76, 34]``: one row per feature, one column per
                         kind (:data:`PLANES_V1`)
``planes+history`` 1     ``uint8[124, 34]``: ``planes`` and the order-of-play
                         block (:data:`HISTORY_V1`, rows 76..123)
``flat``          1      ``float32[967]``: the rows of ``planes``, each divided
                         by its ``high``; a scalar row once, a tile row 34 times
``flat+history``  1      ``float32[2599]``: the same for ``planes+history``
``action``        1      ``float64[17]`` per legal action: the tuned bot's
                         per-action features (:data:`ACTION_V1`,
                         :mod:`caishen.sim.bots.tuned`)
``context``       1      ``float64[83]``: own hand / 4 and the 49 scalar rows of
                         ``planes`` / ``high`` (the learned bot's context)
``kinds``         1      ``float64[15, 34]``: per-kind planes of public tiles and
                         own hand, each / ``high`` (:data:`KINDS_V1`; the
                         ``action-conv`` learned bot's input)
``grid``          1      ``uint8[76, 4, 9]``: the planes on a suit grid for
                         convolutions (:data:`GRID_ROWS`; ``grid+history``
                         ``[124, 4, 9]``)
``assist``        1      the hand-reading block (:data:`ASSIST_V1`): 4 rows after
                         the planes or the grid, 70 inputs after the flat
                         vector (``planes+assist``, ``flat+history+assist``,
                         ``grid+assist``, ...: every layout, with or without
                         the order-of-play block, is a set of its own)
``candidates``    1      ``float[40, 36]``: one row per legal action of the seat
                         to act, the features the tuned and learned bots score
                         (:data:`CANDIDATE_V1`, :mod:`caishen.sim.bots.candidates`)
``candidates-``   1      ``float[84]``: ``context`` and the own shanten
``context``              (:data:`CANDIDATE_CONTEXT_V1`); ``candidates-context+assist``
                         ``float[154]`` with the assist block
================  =====  ========================================================

What a seat sees and what it never sees (the other seats' concealed tiles,
their concealed kong kinds, the wall, their private flags, who else is asked
to claim) is stated in :mod:`caishen.envs.observation`; every encoder here
reads only that.
"""

from __future__ import annotations

import textwrap
from dataclasses import dataclass

import numpy as np
from numba import njit

from caishen.sim.engine import (
    DF_CLAIMED,
    N_KINDS,
    N_SEATS,
    PH_DONE,
    PH_TURN,
)
from caishen.sim.tiles import MELD_CHOW, MELD_KONG_ADDED, MELD_KONG_CONCEALED, MELD_KONG_EXPOSED, MELD_PONG

__all__ = [
    "FeatureGroup", "FeatureSet", "FEATURE_SETS", "PLANES_V1", "HISTORY_V1", "ACTION_V1", "KINDS_V1", "HISTORY_DISCARDS",
    "ASSIST_V1", "CANDIDATE_V1", "CANDIDATE_CONTEXT_V1", "CANDIDATE_TYPES", "MAX_CANDIDATES", "GRID_ROWS", "LAYOUTS",
    "observation_set", "candidate_sets", "check_feature_set", "doc_table", "context_tables", "flat_tables",
]


@dataclass(frozen=True)
class FeatureGroup:
    """One group of a feature set: ``rows`` rows (or inputs) named ``name``; values ``0 .. high``
    (``high`` 0: a real number, no bound); ``scalar``: one value repeated over the 34 kinds;
    ``meaning``: one line, with its rule ID."""

    name: str
    rows: int
    high: int
    scalar: bool
    meaning: str


@dataclass(frozen=True)
class FeatureSet:
    """A named, versioned feature set: ``groups`` in row order, ``kind`` ``"planes"`` (``uint8[R, 34]``),
    ``"grid"`` (``uint8[R, 4, 9]``), ``"flat"`` (``float32[F]``), ``"vector"`` (``float64[F]``),
    ``"candidates"`` (``float[MAX_CANDIDATES, F]``: one row per candidate) or ``"kinds"``
    (``float64[R, 34]``, each row's counts divided by its ``high``)."""

    name: str
    version: int
    kind: str
    groups: tuple[FeatureGroup, ...]

    @property
    def rows(self) -> int:
        """Rows of the groups (planes) or inputs (a vector set)."""
        return sum(g.rows for g in self.groups)

    @property
    def shape(self) -> tuple[int, ...]:
        """The array shape of one observation of this set."""
        if self.kind in ("planes", "kinds"):
            return (self.rows, N_KINDS)
        if self.kind == "grid":
            return (self.rows, 4, 9)
        if self.kind == "candidates":
            return (MAX_CANDIDATES, self.rows)
        if self.kind == "flat":
            return (sum(g.rows * (1 if g.scalar else N_KINDS) for g in self.groups),)
        return (self.rows,)

    @property
    def first_row(self) -> dict[str, int]:
        """First row of each group, by name."""
        out, r = {}, 0
        for g in self.groups:
            out[g.name] = r
            r += g.rows
        return out

    @property
    def first_input(self) -> dict[str, int]:
        """First input of each group in the flattened vector, by name."""
        out, i = {}, 0
        for g in self.groups:
            out[g.name] = i
            i += g.rows * (1 if (g.scalar or self.kind in ("vector", "candidates")) else N_KINDS)
        return out

    def header(self) -> dict:
        """``{"name", "version"}``: what a checkpoint or a weights file records of this set."""
        return {"name": self.name, "version": self.version}


def _g(name, rows, high, scalar, meaning):
    return FeatureGroup(name, rows, high, scalar, meaning)


#: the planes, version 1 (``uint8[76, 34]``; seat groups in seat-relative order +0 own, +1 next,
#: +2 opposite, +3 previous)
PLANES_V1: tuple[FeatureGroup, ...] = (
    _g("hand", 1, 4, False, "own concealed tiles, count per kind"),
    _g("drawn", 1, 1, False, "own tile drawn this turn (own turn only)"),
    _g("discards", 4, 4, False, "each seat's discards so far, count per kind (claimed ones included)"),
    _g("last_discard", 4, 1, False, "each seat's latest discard"),
    _g("chows", 4, 4, False, "tiles in each seat's chows, count per kind"),
    _g("pongs", 4, 1, False, "kinds of each seat's pongs"),
    _g("kongs", 4, 1, False, "kinds of each seat's exposed and added kongs"),
    _g("own_concealed_kongs", 1, 1, False, "kinds of own concealed kongs"),
    _g("pending", 1, 1, False, "the discard or added-kong tile on offer"),
    _g("passed_pong", 1, 1, False, "own: kinds it may not pong now (K-4.4, J-3.6)"),
    _g("swap_forbid", 1, 1, False, "own: the kind its discard may not be (K-4.5)"),
    _g("joker", 1, 1, False, "the joker kind (the 财神 ``5z``, K-2.1)"),
    _g("dealer", 4, 1, True, "scalar: the seat is the dealer"),
    _g("turn", 4, 1, True, "scalar: it is the seat's turn (the discarder while its discard or kong is on offer)"),
    _g("pending_from", 4, 1, True, "scalar: the pending tile is the seat's"),
    _g("phase", 5, 1, True, "scalar, one-hot: turn, claim (a discard on offer), rob (an added kong on offer, "
                            "K-5.5), done, hard (硬子 declarations, J-4.2)"),
    _g("acting", 1, 1, True, "scalar: the observing seat is to act"),
    _g("tiles_left", 1, 136, True, "scalar: tiles left in the wall (reserve included, K-3.4)"),
    _g("hand_size", 4, 14, True, "scalar: the seat's concealed tile count"),
    _g("concealed_kongs", 4, 4, True, "scalar: the seat's concealed kongs"),
    _g("n_chows", 4, 4, True, "scalar: the seat's chows (K-4.5)"),
    _g("chain", 4, 8, True, "scalar: the seat's chain length (K-6.5)"),
    _g("chain_kong", 4, 4, True, "scalar: ... of which kong links"),
    _g("piao_open", 4, 1, True, "scalar: the seat's 飘财 circle is open (K-9.2)"),
    _g("declared", 4, 2, True, "scalar: the seat's declaration: 1 架听 (J-4.1), 2 硬子 (J-4.2)"),
    _g("passed_win", 1, 1, True, "scalar, own: passed a win, no discard win until its next draw (J-3.5)"),
    _g("streak", 1, 255, True, "scalar: the dealer's streak k (J-2.4; capped at 255)"),
)

#: discards per seat in the order-of-play block (``recent_discards``)
HISTORY_DISCARDS = 8
#: the order-of-play block, version 1 (appended after the planes: rows 76..123)
HISTORY_V1: tuple[FeatureGroup, ...] = (
    _g("recent_discards", N_SEATS * HISTORY_DISCARDS, 2, False,
       "seat-relative seat ``r`` (rows ``76 + 8 r`` .. ``83 + 8 r``): its last 8 discards, most recent first, "
       "one row each: 1 at the kind if the tile is still on the table, 2 if it was claimed (went into a meld or "
       "a winner's hand: which claims happened); a row of zeros when the seat has fewer discards"),
    _g("meld_order", N_SEATS * 4, 5, False,
       "seat ``r`` (rows ``108 + 4 r`` .. ``111 + 4 r``): its melds in the order made, the meld type (1 chow, "
       "2 pong, 3 exposed kong, 4 added kong, 5 concealed kong; ``caishen.sim.tiles.MELD_*``) at the meld's "
       "kind (a chow's lowest tile); another seat's concealed kong is a row of zeros (its kind is hidden, "
       "K-5.3; ``concealed_kongs`` counts it)"),
)

#: the per-action features, version 1: the tuned bot's features (:mod:`caishen.sim.bots.tuned`), one
#: value each, scaled as the tuned bot weighs them; a discard fills the first 12, a claim the last 5,
#: ``pass`` none
ACTION_V1: tuple[FeatureGroup, ...] = (
    _g("shanten", 1, 0, True, "discard: shanten of the hand left (0 = ready)"),
    _g("effective", 1, 0, True, "discard: live effective tiles of the hand left / 10 (0 when the shanten is "
                                "worse than the best + 1)"),
    _g("danger", 1, 0, True, "discard: 10 x estimated deal-in probability (caishen.sim.bots.policies)"),
    _g("danger_far", 1, 0, True, "discard: danger x (best shanten - 1, at least 0)"),
    _g("danger_late", 1, 0, True, "discard: danger x tiles drawn since the deal / 70"),
    _g("joker", 1, 1, True, "discard: the tile is the 财神 (K-9.1)"),
    _g("piao_ready", 1, 1, True, "discard: the 财神 with a ready hand left (a 飘财 link, K-6.5)"),
    _g("pairs", 1, 1, True, "discard: pairs left / 7 (K-6.3)"),
    _g("suit", 1, 1, True, "discard: tiles of the most held suit / 14 (K-6.4)"),
    _g("honor", 1, 1, True, "discard: an honor (not the 财神)"),
    _g("terminal", 1, 1, True, "discard: a 1 or a 9"),
    _g("declare", 1, 1, True, "discard: ``declare <k>`` is legal (J-4.1)"),
    _g("claim_bias", 1, 1, True, "claim: 1"),
    _g("claim_gain", 1, 0, True, "claim: shanten now - shanten after the claim"),
    _g("claim_opens", 1, 1, True, "claim: the seat has no meld yet (门清 lost)"),
    _g("claim_pong", 1, 1, True, "claim: a pong or exposed kong (0: a chow)"),
    _g("claim_late", 1, 1, True, "claim: tiles drawn since the deal / 70"),
)

#: the per-kind planes, version 1 (``float64[15, 34]``, each row's count / its ``high``; seat groups
#: seat-relative as in ``planes``): what the ``action-conv`` learned bot convolves over the 34 kinds
#: (:mod:`caishen.sim.bots.learned`).  Derived from ``planes`` v1 (and the claimed flags of the
#: discards, which every seat sees), so it reads nothing the planes do not
KINDS_V1: tuple[FeatureGroup, ...] = (
    _g("hand", 1, 4, False, "own concealed tiles, count per kind"),
    _g("own_concealed_kongs", 1, 1, False, "kinds of own concealed kongs"),
    _g("discards", 4, 4, False, "each seat's discards so far, count per kind (claimed ones included)"),
    _g("melds", 4, 4, False, "tiles in each seat's exposed melds: chow tiles, 3 per pong, 4 per exposed or "
                             "added kong (no meld holds a 财神, K-2.3; another seat's concealed kong is "
                             "hidden, K-5.3)"),
    _g("seen", 1, 4, False, "copies the seat has seen: own hand, own concealed kongs (4), every exposed meld's "
                            "tiles and the discards not claimed (the P27 count)"),
    _g("pending", 1, 1, False, "the discard or added-kong tile on offer"),
    _g("joker", 1, 1, False, "the joker kind (the 财神 ``5z``, K-2.1)"),
    _g("honor", 1, 1, False, "constant: the kind is an honor (``1z``..``7z``)"),
    _g("terminal", 1, 1, False, "constant: the kind is a 1 or a 9 of a suit"),
)

_SCALARS_V1 = tuple(g for g in PLANES_V1 if g.scalar)

#: the hand-reading block, version 1 (:mod:`caishen.envs.assist`; ``assist=True`` on any layout): from the
#: seat's own concealed tiles (and the tile on offer) and the copies it can see, nothing hidden.  ``h'``:
#: the concealed tiles, plus the tile on offer while the seat is asked to claim it
ASSIST_V1: tuple[FeatureGroup, ...] = (
    _g("assist_shanten", 1, 8, True, "scalar: min(shanten + 1, 8) of the own concealed tiles (0 complete, "
                                     "1 ready; jokers wild, seven pairs included)"),
    _g("assist_shanten_offer", 1, 8, True, "scalar: the same with the tile on offer added (a 3m+1 hand asked "
                                           "to claim); equal to ``assist_shanten`` otherwise"),
    _g("assist_after_discard", 1, 3, False, "per kind k held in the 3m+2 hand h': min(shanten(h' - k) - best, "
                                            "3), best the lowest over the held kinds; 3 for kinds not held and "
                                            "for every kind when h' has no discard to make"),
    _g("assist_effective", 1, 136, False, "per kind k held in the 3m+2 hand h': the live effective tiles of "
                                          "h' - k (copies the seat cannot see of the kinds whose draw lowers "
                                          "its shanten, K-2.1 jokers wild); 0 for kinds not held"),
)

#: the candidate types (``type`` one-hot of :data:`CANDIDATE_V1`), in the engine's action order
CANDIDATE_TYPES = ("discard", "declare", "kong_concealed", "kong_added", "chow_low", "chow_mid", "chow_high",
                   "pong", "kong_exposed", "win", "pass", "hard_declare", "hard_decline")
#: candidates per decision at most: the legal actions of one decision (a turn: at most 14 kinds to discard,
#: as many to declare, 3 concealed and 4 added kongs and the win; a claim: 7; :mod:`caishen.sim.bots.candidates`)
MAX_CANDIDATES = 40

#: one candidate's features, version 1 (:mod:`caishen.sim.bots.candidates`): every legal action of the seat
#: to act is a candidate; its type, the ``action`` v1 features of the tuned and learned bots (a discard or
#: a declare: its discard's; a chow, pong or exposed kong: the claim's), and the facts below
CANDIDATE_V1: tuple[FeatureGroup, ...] = (
    _g("type", len(CANDIDATE_TYPES), 1, True, "one-hot: " + ", ".join(CANDIDATE_TYPES)),
    _g("shanten", 1, 0, True, "discard, declare: shanten of the hand left (0 = ready); a kong: of the hand "
                              "left by the kong (before its replacement draw)"),
) + ACTION_V1[1:] + (
    _g("shanten_gap", 1, 0, True, "discard, declare, kong: its ``shanten`` minus the best over the legal "
                                  "discards"),
    _g("held", 1, 1, True, "copies of the candidate's kind in the own concealed tiles / 4 (a claim: of the "
                           "tile on offer)"),
    _g("seen", 1, 1, True, "copies of that kind the seat can see (own tiles, discards, exposed melds) / 4"),
    _g("danger_seat", 3, 0, True, "discard, declare: 10 x ready(p) x unsafe(k, p) for the opponents +1, +2, "
                                  "+3 (their sum is ``danger``; caishen.sim.bots.policies, \"Defence\")"),
)

#: the context beside the candidates, version 1: the ``context`` set and the own shanten
CANDIDATE_CONTEXT_V1: tuple[FeatureGroup, ...] = (
    FeatureGroup("hand", N_KINDS, 4, False, "own concealed tiles / 4, per kind"),) + _SCALARS_V1 + (
    _g("own_shanten", 1, 8, True, "min(shanten + 1, 8) / 8 of the own concealed tiles"),
)

#: the layouts of the env observations (:func:`observation_set`)
LAYOUTS = ("planes", "flat", "grid", "candidates")
#: the grid's rows and columns: row ``s`` of the three suits holds kinds ``9 s .. 9 s + 8``, row 3 the honours
#: ``1z .. 7z`` and two padding cells (0 in a tile plane, the value in a scalar plane)
GRID_ROWS = 4


def _inputs(groups):
    """``groups`` as inputs of a vector set: a tile group of ``r`` rows is ``34 r`` inputs."""
    return tuple(g if g.scalar else FeatureGroup(g.name, g.rows * N_KINDS, g.high, False, g.meaning)
                 for g in groups)


def _layout_sets():
    for layout, kind in (("planes", "planes"), ("flat", "flat"), ("grid", "grid")):
        for history in (False, True):
            for assist in (False, True):
                name = layout + ("+history" if history else "") + ("+assist" if assist else "")
                groups = PLANES_V1 + (HISTORY_V1 if history else ()) + (ASSIST_V1 if assist else ())
                yield FeatureSet(name, 1, kind, groups)


#: every feature set by name (module docstring); a set's version goes up whenever its table changes
FEATURE_SETS: dict[str, FeatureSet] = {
    fs.name: fs
    for fs in (
        *_layout_sets(),
        FeatureSet("action", 1, "vector", ACTION_V1),
        FeatureSet("context", 1, "vector",
                   (FeatureGroup("hand", N_KINDS, 4, False, "own concealed tiles / 4, per kind"),) + _SCALARS_V1),
        FeatureSet("kinds", 1, "kinds", KINDS_V1),
        FeatureSet("candidates", 1, "candidates", CANDIDATE_V1),
        FeatureSet("candidates-context", 1, "vector", CANDIDATE_CONTEXT_V1),
        FeatureSet("candidates-context+assist", 1, "vector", CANDIDATE_CONTEXT_V1 + _inputs(ASSIST_V1)),
    )
}


def observation_set(layout: str, history: bool, assist: bool = False) -> FeatureSet:
    """The feature set of an env observation: ``layout`` ``"planes"``, ``"flat"`` or ``"grid"``, with or
    without the order-of-play block and the assist block (``"candidates"``: :func:`candidate_sets`).  Raises
    ``ValueError`` for another layout."""
    if layout not in ("planes", "flat", "grid"):
        raise ValueError(f"layout must be one of ('planes', 'flat', 'grid'), got {layout!r}")
    return FEATURE_SETS[layout + ("+history" if history else "") + ("+assist" if assist else "")]


def candidate_sets(assist: bool = False) -> tuple[FeatureSet, FeatureSet]:
    """``(candidates, context)``: the two feature sets of ``observation="candidates"`` (the context with the
    assist block when ``assist``)."""
    return FEATURE_SETS["candidates"], FEATURE_SETS["candidates-context" + ("+assist" if assist else "")]


def check_feature_set(recorded, expected: FeatureSet | None, where: str, field: str = "feature_set") -> FeatureSet:
    """The :class:`FeatureSet` that a file records in ``field`` (``recorded``: ``{"name", "version"}``).

    ``expected``: the set the reader needs (None: any known set).  Raises
    ``ValueError`` naming ``where`` (the file) and ``field`` when the record
    is missing or malformed, names an unknown set, another set than
    ``expected``, or a version this code does not have.
    """
    if not (isinstance(recorded, dict) and isinstance(recorded.get("name"), str)
            and isinstance(recorded.get("version"), int) and not isinstance(recorded.get("version"), bool)):
        raise ValueError(f"{where}: field {field!r} must be {{\"name\": ..., \"version\": ...}} naming the feature "
                         f"set it was trained on, got {str(recorded)[:80]!r} (written before feature sets were "
                         "versioned? retrain or re-export it)")
    name, version = recorded["name"], recorded["version"]
    fs = FEATURE_SETS.get(name)
    if fs is None:
        raise ValueError(f"{where}: field {field!r} names the feature set {name[:40]!r}; known: "
                         f"{', '.join(FEATURE_SETS)}")
    if expected is not None and name != expected.name:
        raise ValueError(f"{where}: field {field!r} is the feature set {name!r}, this reader needs "
                         f"{expected.name!r}")
    if version != fs.version:
        raise ValueError(f"{where}: field {field!r} is {name!r} version {version}, this code has version "
                         f"{fs.version}; retrain or re-export it with this version")
    return fs


def doc_table(groups: tuple[FeatureGroup, ...], first: int = 0, width: int = 43) -> str:
    """The reStructuredText table of ``groups`` (rows from ``first``): rows, name, high, meaning, as the
    module docstrings of :mod:`caishen.envs.observation` show it (a test compares them)."""
    rw = max(5, len(f"{first + sum(g.rows for g in groups) - 1}-{first + sum(g.rows for g in groups) - 1}"))
    nw = max(len(f"``{g.name}``") for g in groups) + 1
    rule = f"{'=' * rw}  {'=' * nw}  =====  {'=' * width}"
    lines = [rule, f"{'rows':<{rw}}  {'name':<{nw}}  {'high':<5}  meaning", rule]
    r = first
    for g in groups:
        rows = f"{r}" if g.rows == 1 else f"{r}-{r + g.rows - 1}"
        wrapped = textwrap.wrap(g.meaning, width) or [""]
        lines.append(f"{rows:<{rw}}  {'``' + g.name + '``':<{nw}}  {g.high:<5}  {wrapped[0]}".rstrip())
        lines += [f"{'':<{rw}}  {'':<{nw}}  {'':<5}  {w}" for w in wrapped[1:]]
        r += g.rows
    lines.append(rule)
    return "\n".join(lines)


def flat_tables(fs: FeatureSet) -> tuple[np.ndarray, np.ndarray]:
    """``(scalar: uint8[R], inv_high: float32[R])`` per row of a planes or flat set: the tables of
    :func:`_flatten`."""
    scalar = np.concatenate([np.full(g.rows, g.scalar, np.uint8) for g in fs.groups])
    inv = np.concatenate([np.full(g.rows, 1.0 / g.high, np.float32) for g in fs.groups])
    return scalar, inv


def context_tables() -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """``(rows: int64[C], cols: int64[C], scale: float64[C])``: input ``j`` of the ``context`` set is
    ``planes[rows[j], cols[j]] * scale[j]`` (the tables of :func:`_encode_context`)."""
    first = FEATURE_SETS["planes"].first_row
    rows, cols, scale = [], [], []
    for g in FEATURE_SETS["context"].groups:
        for i in range(g.rows):
            if g.scalar:
                rows.append(first[g.name] + i)
                cols.append(0)
            else:  # a tile group: its one row, kind by kind
                rows.append(first[g.name])
                cols.append(i)
            scale.append(1.0 / g.high)
    return np.array(rows, np.int64), np.array(cols, np.int64), np.array(scale, np.float64)


# first rows as plain ints for the kernels (compile-time constants); the ``phase`` rows are the engine's
# phase codes in order (PH_TURN, PH_CLAIM, PH_ROB, PH_DONE, PH_HARD = 0..4)
_ROW = FEATURE_SETS["planes+history"].first_row
P_HAND = _ROW["hand"]
P_DRAWN = _ROW["drawn"]
P_DISCARDS = _ROW["discards"]
P_LAST_DISCARD = _ROW["last_discard"]
P_CHOWS = _ROW["chows"]
P_PONGS = _ROW["pongs"]
P_KONGS = _ROW["kongs"]
P_OWN_CONCEALED_KONGS = _ROW["own_concealed_kongs"]
P_PENDING = _ROW["pending"]
P_PASSED_PONG = _ROW["passed_pong"]
P_SWAP_FORBID = _ROW["swap_forbid"]
P_JOKER = _ROW["joker"]
P_DEALER = _ROW["dealer"]
P_TURN = _ROW["turn"]
P_PENDING_FROM = _ROW["pending_from"]
P_PHASE = _ROW["phase"]
P_ACTING = _ROW["acting"]
P_TILES_LEFT = _ROW["tiles_left"]
P_HAND_SIZE = _ROW["hand_size"]
P_CONCEALED_KONGS = _ROW["concealed_kongs"]
P_N_CHOWS = _ROW["n_chows"]
P_CHAIN = _ROW["chain"]
P_CHAIN_KONG = _ROW["chain_kong"]
P_PIAO_OPEN = _ROW["piao_open"]
P_DECLARED = _ROW["declared"]
P_PASSED_WIN = _ROW["passed_win"]
P_STREAK = _ROW["streak"]
P_RECENT_DISCARDS = _ROW["recent_discards"]
P_MELD_ORDER = _ROW["meld_order"]
N_PLANES_V1 = FEATURE_SETS["planes"].rows
_KROW = FEATURE_SETS["kinds"].first_row
K_HAND = _KROW["hand"]
K_OWN_CONCEALED_KONGS = _KROW["own_concealed_kongs"]
K_DISCARDS = _KROW["discards"]
K_MELDS = _KROW["melds"]
K_SEEN = _KROW["seen"]
K_PENDING = _KROW["pending"]
K_JOKER = _KROW["joker"]
K_HONOR = _KROW["honor"]
K_TERMINAL = _KROW["terminal"]
N_KINDS_V1 = FEATURE_SETS["kinds"].rows


@njit(cache=True)
def _encode(st, seat, joker, x):
    """Fill ``x: uint8[>= 76, 34]`` rows 0..75 with the ``planes`` v1 of ``seat`` from the state record ``st``.

    ``joker``: the joker kind or -1.  Reads only what ``seat`` may see; writes ``x`` only.
    """
    for r in range(N_PLANES_V1):
        for k in range(N_KINDS):
            x[r, k] = 0
    sc = st.table
    sf = st.seat
    phase = sc.phase
    to_act = sc.to_act
    # own tiles and flags
    for k in range(N_KINDS):
        x[P_HAND, k] = st.hands[seat, k]
        x[P_PASSED_PONG, k] = (sf[seat].passed_pong >> k) & 1
    if phase == PH_TURN and to_act == seat and sc.drawn >= 0:
        x[P_DRAWN, sc.drawn] = 1
    if sf[seat].swap_forbid >= 0:
        x[P_SWAP_FORBID, sf[seat].swap_forbid] = 1
    if joker >= 0:
        x[P_JOKER, joker] = 1
    if sc.tile >= 0:
        x[P_PENDING, sc.tile] = 1
    # every seat's public tiles and counters, seat-relative
    for r in range(N_SEATS):
        p = (seat + r) % N_SEATS
        n = sf[p].n_discards
        for i in range(n):
            x[P_DISCARDS + r, st.discards[p, i]] += 1
        if n > 0:
            x[P_LAST_DISCARD + r, st.discards[p, n - 1]] = 1
        n_concealed = 0
        for m in range(st.meld_type.shape[1]):
            mtype = st.meld_type[p, m]
            kind = st.meld_kind[p, m]
            if mtype == MELD_CHOW:
                for j in range(3):
                    x[P_CHOWS + r, kind + j] += 1
            elif mtype == MELD_PONG:
                x[P_PONGS + r, kind] = 1
            elif mtype == MELD_KONG_EXPOSED or mtype == MELD_KONG_ADDED:
                x[P_KONGS + r, kind] = 1
            elif mtype == MELD_KONG_CONCEALED:
                n_concealed += 1
                if p == seat:  # others' concealed kong kinds are hidden (K-5.3, J-3.2)
                    x[P_OWN_CONCEALED_KONGS, kind] = 1
        hand_size = 0
        for k in range(N_KINDS):
            hand_size += st.hands[p, k]
        x[P_HAND_SIZE + r, :] = hand_size
        x[P_CONCEALED_KONGS + r, :] = n_concealed
        x[P_N_CHOWS + r, :] = sf[p].n_chows
        x[P_CHAIN + r, :] = sf[p].chain_len
        x[P_CHAIN_KONG + r, :] = sf[p].chain_kong
        x[P_PIAO_OPEN + r, :] = 1 if sf[p].circle_open != 0 else 0
        x[P_DECLARED + r, :] = sf[p].decl
    # public scalars
    x[P_DEALER + (sc.dealer - seat) % N_SEATS, :] = 1
    if phase != PH_DONE:
        x[P_TURN + (sc.turn - seat) % N_SEATS, :] = 1
    if sc.src >= 0:
        x[P_PENDING_FROM + (sc.src - seat) % N_SEATS, :] = 1
    x[P_PHASE + phase, :] = 1
    x[P_ACTING, :] = 1 if to_act == seat else 0
    x[P_TILES_LEFT, :] = sc.tail - sc.head + 1
    x[P_PASSED_WIN, :] = 1 if sf[seat].passed_win != 0 else 0
    x[P_STREAK, :] = min(sc.streak, 255)


@njit(cache=True)
def _encode_history(st, seat, x):
    """Fill the order-of-play rows 76..123 (``history`` v1) of ``x: uint8[124, 34]``.

    Reads only what ``seat`` may see (discards, claimed flags, meld order;
    another seat's concealed kong kind never); writes those rows of ``x`` only.
    """
    for r in range(P_RECENT_DISCARDS, P_MELD_ORDER + 4 * N_SEATS):
        for k in range(N_KINDS):
            x[r, k] = 0
    for r in range(N_SEATS):
        p = (seat + r) % N_SEATS
        n = st.seat[p].n_discards
        for j in range(min(n, HISTORY_DISCARDS)):
            i = n - 1 - j
            x[P_RECENT_DISCARDS + HISTORY_DISCARDS * r + j, st.discards[p, i]] = 2 if st.dflags[p, i] & DF_CLAIMED else 1
        for m in range(st.meld_type.shape[1]):
            mtype = st.meld_type[p, m]
            if mtype == 0 or (mtype == MELD_KONG_CONCEALED and p != seat):
                continue
            x[P_MELD_ORDER + 4 * r + m, st.meld_kind[p, m]] = mtype


@njit(cache=True)
def _flatten(x, scalar, inv_high, out):
    """Fill ``out: float32[F]`` from the planes ``x: uint8[R, 34]``: each tile row's 34 values and
    each scalar row's value once (``scalar: uint8[R]``), times ``inv_high: float32[R]``
    (:func:`flat_tables`)."""
    j = 0
    for r in range(scalar.shape[0]):
        if scalar[r]:
            out[j] = x[r, 0] * inv_high[r]
            j += 1
        else:
            for k in range(N_KINDS):
                out[j + k] = x[r, k] * inv_high[r]
            j += N_KINDS


@njit(cache=True)
def _encode_context(st, seat, joker, x, rows, cols, scale, out):
    """Fill ``out: float64[C]`` with the ``context`` v1 of ``seat``: the planes into the scratch
    ``x: uint8[>= 76, 34]``, then ``out[j] = x[rows[j], cols[j]] * scale[j]`` (:func:`context_tables`)."""
    _encode(st, seat, joker, x)
    for j in range(rows.shape[0]):
        out[j] = x[rows[j], cols[j]] * scale[j]


@njit(cache=True)
def _encode_kinds(st, seat, joker, x, out):
    """Fill ``out: float64[15, 34]`` with the ``kinds`` v1 of ``seat`` (:data:`KINDS_V1`): the planes into
    the scratch ``x: uint8[>= 76, 34]`` (:func:`_encode`), then each row from them, divided by its ``high``.
    The ``seen`` row also reads the claimed flags of the discards (public).  Writes ``x`` and ``out`` only."""
    _encode(st, seat, joker, x)
    for k in range(N_KINDS):
        seen = x[P_HAND, k] + 4 * x[P_OWN_CONCEALED_KONGS, k]
        out[K_HAND, k] = x[P_HAND, k] * 0.25
        out[K_OWN_CONCEALED_KONGS, k] = x[P_OWN_CONCEALED_KONGS, k]
        for r in range(N_SEATS):
            meld = x[P_CHOWS + r, k] + 3 * x[P_PONGS + r, k] + 4 * x[P_KONGS + r, k]
            out[K_DISCARDS + r, k] = x[P_DISCARDS + r, k] * 0.25
            out[K_MELDS + r, k] = meld * 0.25
            seen += meld
        out[K_PENDING, k] = x[P_PENDING, k]
        out[K_JOKER, k] = x[P_JOKER, k]
        out[K_HONOR, k] = 1.0 if k >= 27 else 0.0
        out[K_TERMINAL, k] = 1.0 if k < 27 and (k % 9 == 0 or k % 9 == 8) else 0.0
        out[K_SEEN, k] = seen
    for p in range(N_SEATS):
        for i in range(st.seat[p].n_discards):
            if st.dflags[p, i] & DF_CLAIMED == 0:
                out[K_SEEN, st.discards[p, i]] += 1.0
    for k in range(N_KINDS):
        out[K_SEEN, k] *= 0.25


@njit(cache=True)
def _to_grid(x, scalar, out):
    """Fill ``out: uint8[R, 4, 9]`` (the ``grid`` layout) from the planes ``x: uint8[R, 34]``: row ``s`` < 3
    of a plane holds the suit's kinds ``9 s .. 9 s + 8``, row 3 the honours ``1z .. 7z`` and two padding
    cells, 0 in a tile plane and the plane's value in a scalar plane (``scalar: uint8[R]``,
    :func:`flat_tables`), so that a scalar plane stays constant.  Writes ``out`` only."""
    for r in range(x.shape[0]):
        for s in range(3):
            for j in range(9):
                out[r, s, j] = x[r, 9 * s + j]
        for j in range(7):
            out[r, 3, j] = x[r, 27 + j]
        pad = x[r, 0] if scalar[r] != 0 else 0
        out[r, 3, 7] = pad
        out[r, 3, 8] = pad
