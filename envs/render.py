"""Text rendering of a hand for the envs' ``render()`` (``render_mode`` ``"ansi"`` / ``"human"``).

This is a debugging view for a person watching the whole table: it shows
every seat's concealed tiles and concealed kongs, so it is never part of an
observation (those are built by :mod:`caishen.envs.observation`).
"""

from __future__ import annotations

import numpy as np

from caishen.sim.engine import N_SEATS, Game, action_name
from caishen.sim.tiles import MELD_NONE, MELD_TYPE_NAMES, kind_name, to_str

_DECL_NAMES = {1: " 架听", 2: " 硬子"}
#: the render modes of the single-game envs (the batched vector envs render none)
RENDER_MODES = ("human", "ansi")


class RenderModeError(TypeError, ValueError):
    """An unsupported ``render_mode``: a ``ValueError``, and a ``TypeError`` too, which is what
    stable-baselines3's ``make_vec_env`` expects before it retries without ``render_mode``."""


def check_render_mode(render_mode, modes=RENDER_MODES):
    """``render_mode`` if it is None or one of ``modes``; raises :class:`RenderModeError` naming it otherwise
    (``modes=()``: the batched envs, which render nothing)."""
    if render_mode is not None and render_mode not in modes:
        allowed = f"one of {modes} or None" if modes else "None (the batched envs do not render)"
        raise RenderModeError(f"render_mode must be {allowed}, got {render_mode!r}")
    return render_mode


def render_text(game: Game) -> str:
    """The table as lines of text: the phase, each seat's tiles, melds and discards, the result.

    Raises ``ValueError`` for an unstarted game.
    """
    st = game.state
    sc = st["table"]
    lines = [
        f"{game.rules_name}: phase {game.phase}, {game.tiles_left} tiles left, "
        + (f"seat {game.current_player} to act" if not game.done else "hand over")
    ]
    if int(sc["tile"]) >= 0:
        lines.append(f"on offer: {kind_name(int(sc['tile']))} from seat {int(sc['src'])}")
    for p in range(N_SEATS):
        melds = [
            f"{MELD_TYPE_NAMES[int(t)]} {kind_name(int(k))}"
            for t, k in zip(st["meld_type"][p], st["meld_kind"][p])
            if int(t) != MELD_NONE
        ]
        n = int(st["seat"][p]["n_discards"])
        discards = " ".join(kind_name(int(k)) for k in st["discards"][p, :n])
        flags = (" dealer" if p == int(sc["dealer"]) else "") + _DECL_NAMES.get(int(st["seat"][p]["decl"]), "")
        if st["seat"][p]["circle_open"]:
            flags += " 飘-circle"
        lines.append(
            f"seat {p}{flags}: {to_str(np.asarray(st['hands'][p]))}"
            + (f" | {', '.join(melds)}" if melds else "")
            + f" | discards: {discards or '-'}"
        )
    if game.done:
        r = game.result
        lines.append("scores: " + " ".join(f"{r[f'score_{p}']:+d}" for p in range(N_SEATS)))
    else:
        lines.append("legal: " + ", ".join(action_name(a) for a in game.legal_actions()))
    return "\n".join(lines)
