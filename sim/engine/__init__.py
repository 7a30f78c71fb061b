"""The game engine: one hand of mahjong as fixed-size arrays, stepped by numba kernels.

This package holds the turn structure shared by the rule sets (deal, draws,
discards, claims, kongs, robbing, wall end, dealer rotation) as numba kernels
over a ``STATE_DTYPE`` record of numpy arrays, a flat discrete action space,
the legal-action mask, an invariant checker, the per-hand record, and a
Python :class:`Game` that a person or an environment drives one action at a
time.  Hand types and payments are *not* here: they come from the rule set's
kernels, each called at one place (the win test in :func:`_win_eval`,
``deal.py``; the payments in :func:`_finish_wins`, ``claims.py``).  Rule
differences that shape the turn structure are data: the named
engine params (``ep.joker``, ``ep.chow``, ...) built by :func:`engine_params` (``params.py``) from a rule
set's facts and options.

Binding rules: ``shared/rules/<name>.md`` of each rule set (IDs ``K-...``,
``J-...``, patterns ``P..``), defined for this project in ``docs/rules/``.
Every rule set's turn structure is the same code with other params (its
facts: a joker or none, chow or none, several winners, passed win, 架听 and
硬子, its win kernel); a rule set scored after the hand scores its wins with
its points kernel and record finisher from the recorded win contexts
(``wins``, :func:`batch_columns`, ``ep.points``).

Using it::

    from caishen.sim.engine import Game
    g = Game(DEFAULT, {"multiple_ron": True}).reset(seed=7)   # DEFAULT: caishen.sim.rules
    while not g.done:
        g.step(g.legal_actions()[0])      # or an index / 'discard 3m' / 'pong'
    g.result                              # the hand's record in words (g.record: its codes)
    lines = g.log_lines()                 # JSON lines; replay(lines) rebuilds it

Whole hands with bots in one numba call are :func:`caishen.sim.selfplay.batch.play_batch`
(its loop: ``_legal_mask`` -- ``_legal_actions`` for a random seat --, a policy kernel per seat,
``_step``).

Module map (one concern each; imports go down this list, never up)
-------------------------------------------------------------------
============  ====================================================================
module        what it owns
============  ====================================================================
``layout``    sizes; ``STATE_DTYPE`` and its named parts (``TABLE_DTYPE``,
              ``SEAT_DTYPE``, the win contexts ``WIN_DTYPE``), ``PARAMS_DTYPE``; phases, declarations, claim levels; the
              action layout (``A_*``, ``N_ACTIONS``, :func:`action_name`,
              :func:`parse_action`); :func:`new_state`
``params``    :func:`load_rules`, :func:`engine_params`: a registered rule
              set's facts, kernel codes and options as the params ``ep``
``deal``      the wall, the deal, draws and replacement draws, the win test
              (:func:`_win_eval`), the readiness cache, the 架听 / 硬子 offers
              made when a turn starts (E1, J2)
``claims``    what a discard or an added kong offers, the ask queue, the claim
              step (pass, chow, pong, exposed kong, win, robbing), several
              winners, paying and recording the wins (E5, E6, E9, J5-J7,
              J9-J11): **where claims are resolved**
``turn``      the own-turn actions (discard, 架听, concealed and added kongs,
              self-draw win), the 硬子 stage, :func:`_step` (E8, J1)
``mask``      :func:`_legal_actions`, :func:`_legal_mask`, :func:`_forced_joker`, the random action
              (E2, E3, E4, E7, J3, J4)
``check``     the invariant checker: ``ERR_*``, :func:`_action_ok` (the rules
              restated independently of the mask), :func:`_check_state`
``record``    the per-hand record: ``RECORD_DTYPE`` (``rec[i].<field>``), its ``RECORD_COLUMNS``,
              :func:`_write_record`, dealer rotation and streak,
              :func:`batch_columns` (E10, J8)
``view``      :class:`Observation` (what the seat to act sees, as the bots
              read it: :meth:`Game.observe`), :class:`PublicLog`,
              :func:`public_action`
``game``      :class:`Game` (log, replay, observation hiding),
              :func:`build_wall`, :func:`check_state`, :func:`legal_mask`
============  ====================================================================

The draws sit below the claims and the own-turn actions above them: a
discard opens the claims (``turn`` -> ``claims``) and a claim ends in a
draw (``claims`` -> ``deal``).  The decisions E1-E10 (the K-rules' turn
structure) and J1-J11 (the J-rules') are stated in the docstring of the module
whose code they govern (listed above); the rule sets' pages under
``docs/rules/`` define them with the rest of the rules.

How rule sets plug in
---------------------
A rule set is data and kernels, never an ``if rules == ...`` here.  It
registers a :class:`~caishen.sim.rules.base.RuleSet` (:mod:`caishen.sim.rules`
says how to add one); the engine looks it up by name: its facts and options
become the params ``ep`` (:func:`engine_params`: joker kind, chow, robbing,
passed pong and passed win, declarations, ...); its win test is the kernel
of code ``ep.win_kernel``, asked in :func:`_win_eval`, and its payments
the kernel of code ``ep.payments``, made in :func:`_finish_wins`
(both through :mod:`caishen.sim.rules.kernels`, the one dispatch module);
a rule set scored after the hand names its record finisher
(``RuleSet.finish``, used by :func:`batch_columns`).

Phases and who acts
-------------------
- ``PH_TURN``: ``to_act`` holds ``3m+2`` concealed tiles (after a draw, a
  replacement draw, or a claim): discard, concealed / added kong, or
  self-draw win.
- ``PH_CLAIM``: a discard is pending.  Claimants are asked one at a time in
  priority order (K-4.3): every seat that can win, in turn order after the
  discarder; then the seat that can pong / kong; then the next seat for a
  chow.  A seat whose asks are consecutive is asked once with the union of
  its options.  ``pass`` moves to the next claimant; a pong, kong or chow is
  taken at once (everybody with higher priority has already passed); a win
  ends the hand (with ``multiple_ron`` the remaining win claimants are asked
  first and every winner is paid).  When everybody passed, the next seat
  draws.
- ``PH_ROB``: an added kong is pending; seats that can win on its tile are
  asked (win / pass) in turn order (K-5.5).  If nobody robs, the kong stands
  and its owner draws a replacement from the tail.
- ``PH_DONE``: the hand is over (a win or 流局).
- ``PH_HARD`` (J-4.2): the seat to act answers ``hard_declare`` /
  ``hard_decline``: at the deal each ready non-dealer in turn order from
  the dealer (the dealer holds its 14 tiles meanwhile), then the dealer's
  first turn starts; and the dealer right after its first discard if then
  ready (the discard is pending; the claims on it are asked afterwards).

What the engine simplifies
--------------------------
- The dice and the wall break (K-1.3) are not modelled; the wall is one
  uniform shuffle, dealt 13 tiles per seat from the dealer on, then the
  dealer's 14th.
- Only the winning tile of a discard win moves into the winner's hand; under
  ``multiple_ron`` the other winners' hands stay at 13 tiles.
- Who is asked reveals something, as in real play only partly: a claim
  question shows that the seat can claim, the 硬子 question (J-4.2) that
  the seat is ready.  Declarations are public (observations show them).
"""

from __future__ import annotations

# re-exports: the public API, and the kernels and constants other packages use
from caishen.sim import tiles as _tiles  # noqa: F401
from caishen.sim.rules.kernels import WIN_DISCARD, WIN_ROBBED_KONG, WIN_SELF_DRAW  # noqa: F401
from caishen.sim.tables import hand_tables  # noqa: F401
from caishen.sim.validate import check_int as _check_int  # noqa: F401  (the engine's former name)
from caishen.sim.engine.layout import (  # noqa: F401
    A_CHOW_HIGH, A_CHOW_LOW, A_CHOW_MID, A_DECLARE, A_DISCARD, A_HARD_DECLARE, A_HARD_DECLINE, A_KONG_ADDED,
    A_KONG_CONCEALED, A_KONG_EXPOSED, A_PASS, A_PONG, A_WIN, DECL_HARD, DECL_READY, DECL_NONE, DF_CLAIMED,
    HARD_STAGE_DEAL, HARD_STAGE_DEALER, HARD_STAGE_NONE, LV_CHOW, LV_MELD, LV_WIN, MAX_DISCARDS, MAX_MATCH_HAND,
    MAX_MELDS, MAX_STREAK, MAX_WINNERS, N_ACTIONS, N_KINDS, N_SEATS, N_TILES, OPT_CHOW_HIGH, OPT_CHOW_LOW,
    OPT_CHOW_MID, OPT_KONG, OPT_PONG, OPT_WIN, PARAMS_DTYPE, PHASE_NAMES, PH_CLAIM, PH_DONE, PH_HARD, PH_ROB,
    PH_TURN, QUEUE_LEN, ROTATION_NEXT_AFTER_WIN, ROTATION_WINNER_STAYS, SCRATCH_FIELDS, SEAT_DTYPE, STATE_DTYPE,
    TABLE_DTYPE, WIN_DTYPE, _check_action_index, action_name, new_state, parse_action,
)
from caishen.sim.engine.params import (  # noqa: F401
    PASSED_PONG_SCOPES, engine_params, load_rules,
)
from caishen.sim.engine.deal import (  # noqa: F401
    _copy_state, _reset, _seeded_wall, _shuffle_wall,
)
from caishen.sim.engine.turn import (  # noqa: F401
    _step, _step_inlined,
)
from caishen.sim.engine.mask import (  # noqa: F401
    _legal_actions, _legal_mask, _random_action,
)
from caishen.sim.engine.check import (  # noqa: F401
    ERR_DECL, ERR_EMPTY_MASK, ERR_FORCE, ERR_HAND_RANGE, ERR_HAND_SIZE, ERR_HARD_AUTO, ERR_JOKER_MELD,
    ERR_MASK_ILLEGAL, ERR_MASK_LIST, ERR_MELDS, ERR_MESSAGES, ERR_MISSING, ERR_PASSED_WIN, ERR_POINTERS, ERR_SCORES,
    ERR_TENPAI, ERR_TILES, ERR_TO_ACT, ERR_WIN_LINKS, _check_state,
)
from caishen.sim.engine.record import (  # noqa: F401
    ENGINE_EXTRA_COLUMNS, RECORD_COLUMNS, RECORD_DTYPE, _next_dealer, _next_streak, _write_record, batch_columns,
    new_records, record_column,
)
from caishen.sim.engine.view import Observation, PublicLog, public_action  # noqa: F401
from caishen.sim.engine.game import (  # noqa: F401
    Game, build_wall, check_state, legal_mask, replay,
)
