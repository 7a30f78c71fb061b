"""A slow, obvious pure-Python Kaihua hand, for checking the numba engine (tests only).

It replays the same wall and actions as :class:`caishen.sim.engine.Game` with
Python lists and dicts, written straight from ``shared/rules/kaihua.md``,
and says at every step who acts and which actions are legal.  It shares no
turn-structure code with :mod:`caishen.sim.engine`; for the two things that belong to
the rule set it calls the rule set's own kernels (``_evaluate_win`` for win
legality and exponents, ``_is_baotou_wait`` for K-2.5's 爆头 shape,
``_payments`` for K-8/K-9.3), which are tested against their own references
elsewhere.  The chain links a win counts (K-6.5, K-9.4, K-10) are restated
here from the rules (all of the chain on a self-draw, 飘 links only on a 爆头
win under ``piao_requires_baotou``, none on a discard win), not taken from
the kernel.  Action indices follow the engine's documented layout.
"""

from __future__ import annotations

import numpy as np

from caishen.sim.rules.kaihua import _evaluate_win, _is_baotou_wait, _payments, flag_names
from caishen.sim.tables import hand_tables
from caishen.sim.tiles import CAISHEN as J

DISCARD, KONG_CONCEALED, KONG_ADDED = 0, 68, 102
CHOW = {136: 0, 137: 1, 138: 2}  # action -> position of the claimed tile in the run
PONG, KONG_EXPOSED, WIN, PASS = 139, 140, 141, 142
CHOW_TYPE, PONG_TYPE, KONG_EXPOSED_TYPE, KONG_ADDED_TYPE, KONG_CONCEALED_TYPE = 1, 2, 3, 4, 5


class RefHand:
    """One hand from a fixed wall.  ``rules``: a ``KaihuaRules``."""

    def __init__(self, wall, dealer: int, rules):
        self.rules = rules
        self.params = rules.params()
        self.tabs = hand_tables()
        self.wall = [int(k) for k in wall]
        self.dealer = dealer
        self.hands = [[0] * 34 for _ in range(4)]
        for i in range(4):
            s = (dealer + i) % 4
            for k in self.wall[13 * i:13 * i + 13]:
                self.hands[s][k] += 1
        self.head, self.tail = 52, 135
        self.melds = [[] for _ in range(4)]  # [type, kind]
        self.chain = [[] for _ in range(4)]  # "piao" / "kong" links since the last non-财神 discard / chow / pong
        self.piao_open = [False] * 4
        self.forced = [False] * 4  # K-2.5: drew a 财神 in 爆头 shape, has not discarded a 财神 since
        self.passed_pong = [set() for _ in range(4)]
        self.n_chows = [0] * 4
        self.swap_ban = [None] * 4
        self.piao_count = [0] * 4
        self.failed = [0] * 4
        self.scores = [0] * 4
        self.winners: list[int] = []
        self.counted: dict[int, tuple[int, int]] = {}  # winner -> (飘 links, kong links) counted (K-10)
        self.win_type = -1
        self.discarder = -1
        self.done = False
        self.turns = 0
        self.pending = None  # (tile, src, rob)
        self.asks: list[tuple[int, str]] = []  # (seat, level) still to ask
        self._draw(dealer, replacement=False)

    # -- helpers --------------------------------------------------------------
    def left(self) -> int:
        return self.tail - self.head + 1

    def _draw(self, s: int, replacement: bool):
        if replacement:
            t = self.wall[self.tail]
            self.tail -= 1
        else:
            t = self.wall[self.head]
            self.head += 1
        self.before = list(self.hands[s])  # the tiles before the draw
        if t == J and _is_baotou_wait(np.array(self.before, np.uint8), len(self.melds[s]), self.tabs):
            self.forced[s] = True  # K-2.5: until a 财神 discard, kongs meanwhile included
        self.hands[s][t] += 1
        self.piao_open[s] = False  # K-9.2
        self.passed_pong[s].clear()  # K-4.4
        self.swap_ban[s] = None
        self.turn, self.to_act, self.phase = s, s, "turn"
        self.drawn, self.replacement, self.just_claimed = t, replacement, False

    def _normal_draw(self, s: int):
        if self.left() <= self.rules.reserved_tiles:  # K-3.4
            self.done, self.phase, self.to_act = True, "done", -1
        else:
            self._draw(s, replacement=False)

    def _win(self, s: int, tile: int, self_draw: bool, replacement: bool, hand=None):
        h = np.array(hand if hand is not None else self.hands[s], np.uint8)
        mt = np.zeros(4, np.int8)
        mk = np.zeros(4, np.int8)
        for i, (t, k) in enumerate(self.melds[s]):
            mt[i], mk[i] = t, k
        piao = sum(1 for x in self.chain[s] if x == "piao")
        kong = sum(1 for x in self.chain[s] if x == "kong")
        return _evaluate_win(h, tile, mt, mk, len(self.melds[s]), self_draw, replacement, piao, kong, self.params, self.tabs)

    def _options(self, s: int, tile: int, src: int, rob: bool) -> set[str]:
        h = self.hands[s]
        out = set()
        if tile == J:  # K-2.2
            return out
        if self.rules.discard_win and self._win(s, tile, False, False)[0]:  # K-7.1, K-7.2
            out.add("win")
        if rob or any(self.piao_open) or len(self.melds[s]) >= 4:  # K-5.5, K-9.2
            return out
        if h[tile] >= 2 and tile not in self.passed_pong[s]:  # K-4.2, K-4.4
            out.add("pong")
        if h[tile] >= 3 and self.left() > self.rules.reserved_tiles:  # K-5.1, K-3.4
            out.add("kong")
        if s == (src + 1) % 4 and tile < 27:  # K-4.2 chow by the next seat
            for a, pos in CHOW.items():
                low = tile - pos
                run = [low, low + 1, low + 2]
                if low >= 0 and low // 9 == tile // 9 and low % 9 <= 6:
                    if all(h[t] > 0 for t in run if t != tile):
                        out.add(a)
        return out

    def _offer(self, tile: int, src: int, rob: bool):
        """K-4.3: asks in priority order (win, then pong/kong, then chow), turn order after the discarder."""
        opts = {s: self._options(s, tile, src, rob) for s in range(4) if s != src}
        order = [(src + i) % 4 for i in (1, 2, 3)]
        self.asks = [(s, "win") for s in order if "win" in opts[s]]
        self.asks += [(s, "meld") for s in order if opts[s] & {"pong", "kong"}]
        self.asks += [(s, "chow") for s in order if opts[s] & set(CHOW)]
        self.opts = opts
        self.pending = (tile, src, rob)
        self.won_now: list[int] = []
        self._next_ask()

    def _next_ask(self):
        tile, src, rob = self.pending
        if self.won_now and (not self.asks or self.asks[0][1] != "win"):
            self._settle(self.won_now, 2 if rob else 1, src, tile)
            return
        if not self.asks:
            self.pending = None
            if rob:  # the added kong stands: link, replacement draw
                self.chain[src].append("kong")
                self._draw(src, replacement=True)
            else:
                self._normal_draw((src + 1) % 4)
            return
        self.phase = "rob" if rob else "claim"
        self.to_act = self.asks[0][0]

    def _asked(self) -> tuple[int, set]:
        s = self.asks[0][0]
        n = 0
        offered = set()
        while n < len(self.asks) and self.asks[n][0] == s:
            level = self.asks[n][1]
            o = self.opts[s]
            if level == "win":
                offered |= {"win"} & o
            elif level == "meld":
                offered |= {"pong", "kong"} & o
            else:
                offered |= set(CHOW) & o
            n += 1
        if self.won_now:
            offered &= {"win"}
        return n, offered

    def _settle(self, winners, win_type, discarder, tile):
        """K-8 / K-9.3 payments; the winning tile joins the first winner's hand."""
        for w in winners:
            circle = np.array([p != w and self.piao_open[p] for p in range(4)])
            for p in range(4):
                if circle[p]:
                    self.failed[p] = 1
            out = np.zeros(4, np.int64)
            _payments(self.dealer, w, win_type, discarder, self.exponents[w], circle, self.params, out)
            self.scores = [a + int(b) for a, b in zip(self.scores, out)]
        if win_type != 0:
            self.hands[winners[0]][tile] += 1
        self.forced = [False] * 4  # the force ends with the hand
        if win_type == 2:  # the robbed kong is a pong again
            for m in self.melds[discarder]:
                if m == [KONG_ADDED_TYPE, tile]:
                    m[0] = PONG_TYPE
        self.winners, self.win_type = winners, win_type
        self.discarder = discarder if win_type != 0 else -1
        self.done, self.phase, self.to_act = True, "done", -1

    # -- the two things a test asks -------------------------------------------
    def legal(self) -> set[int]:
        if self.done:
            return set()
        s = self.to_act
        h = self.hands[s]
        if self.phase == "turn":
            drawn = None if self.just_claimed else self.drawn
            forced = h[J] >= 3 or self.forced[s]  # K-2.4, K-2.5
            out = {DISCARD + k for k in range(34) if h[k] and (not forced or k == J) and k != self.swap_ban[s]}
            if not self.just_claimed and self.left() > self.rules.reserved_tiles:  # K-4.1, K-3.4
                if len(self.melds[s]) < 4:
                    out |= {KONG_CONCEALED + k for k in range(34) if h[k] == 4 and k != J}  # K-5.3, K-2.3
                out |= {KONG_ADDED + k for t, k in self.melds[s] if t == PONG_TYPE and h[k]}  # K-5.2
            if drawn is not None and not self.forced[s]:  # K-2.5: no win before the 财神 discard
                before = list(h)
                before[drawn] -= 1
                if self._win(s, drawn, True, self.replacement, before)[0]:
                    out.add(WIN)
            return out
        _, offered = self._asked()
        names = {"win": WIN, "pong": PONG, "kong": KONG_EXPOSED}
        return {names.get(o, o) for o in offered} | {PASS}

    def step(self, a: int):
        s = self.to_act
        h = self.hands[s]
        if self.phase == "turn":
            if a < 34:  # discard
                h[a] -= 1
                self.turns += 1
                if a == J:  # K-9.1 飘财
                    self.forced[s] = False  # K-2.5 satisfied
                    self.chain[s].append("piao")
                    self.piao_open[s] = True
                    self.piao_count[s] += 1
                else:
                    self.chain[s] = []
                self.swap_ban[s] = None
                self._offer(a, s, rob=False)
            elif a < KONG_ADDED:  # concealed kong
                k = a - KONG_CONCEALED
                h[k] -= 4
                self.melds[s].append([KONG_CONCEALED_TYPE, k])
                self.chain[s].append("kong")
                self._draw(s, replacement=True)
            elif a < 136:  # added kong
                k = a - KONG_ADDED
                h[k] -= 1
                for m in self.melds[s]:
                    if m == [PONG_TYPE, k]:
                        m[0] = KONG_ADDED_TYPE
                self._offer(k, s, rob=True)
            else:  # self-draw win
                before = list(h)
                before[self.drawn] -= 1
                _, e, flags, _, _ = self._win(s, self.drawn, True, self.replacement, before)
                self.exponents = {s: int(e)}
                piao, kong = self.chain[s].count("piao"), self.chain[s].count("kong")  # K-6.5: all on a self-draw
                if self.rules.piao_requires_baotou and not {"baotou", "qidui_baotou"} & set(flag_names(flags)):
                    piao = 0  # K-6.5 option (kaihua D8)
                self.counted = {s: (piao, kong)}
                self._settle([s], 0, -1, self.drawn)
            return
        tile, src, rob = self.pending
        n, offered = self._asked()
        self.asks = self.asks[n:]
        if a == WIN:
            _, e, _, _, _ = self._win(s, tile, False, False)
            self.exponents = getattr(self, "exponents", {}) if self.won_now else {}
            self.exponents[s] = int(e)
            self.counted[s] = (0, 0)  # K-6.5 (kaihua D9): links count only on a self-draw
            self.won_now.append(s)
            if not self.rules.multiple_ron:
                self.asks = []
            self._next_ask()
            return
        if a != PASS:  # K-4.4: a claim is the seat's next turn for the bans of earlier discards ...
            self.passed_pong[s].clear()
        if "pong" in offered and a not in (PONG, KONG_EXPOSED):
            self.passed_pong[s].add(tile)  # ... but a chow of this very discard keeps its ban (K-4.4)
        if a == PASS:
            self._next_ask()
            return
        self.pending = None
        if a == PONG:
            h[tile] -= 2
            self.melds[s].append([PONG_TYPE, tile])
            self.chain[s] = []
            self._claimed_turn(s)
        elif a == KONG_EXPOSED:
            h[tile] -= 3
            self.melds[s].append([KONG_EXPOSED_TYPE, tile])
            self.chain[s].append("kong")
            self._draw(s, replacement=True)
        else:
            low = tile - CHOW[a]
            for t in (low, low + 1, low + 2):
                if t != tile:
                    h[t] -= 1
            self.melds[s].append([CHOW_TYPE, low])
            self.chain[s] = []
            self.n_chows[s] += 1
            self._claimed_turn(s)
            if self.n_chows[s] > self.rules.swap_call_max_chows:  # K-4.5
                held = [t for t in (low, low + 1, low + 2) if t != tile]
                if CHOW[a] != 1:
                    end = held[0] - 1 if CHOW[a] == 2 else held[1] + 1
                    if end // 9 == tile // 9 and 0 <= end < 27:
                        self.swap_ban[s] = end

    def _claimed_turn(self, s):
        self.turn, self.to_act, self.phase = s, s, "turn"
        self.drawn, self.replacement, self.just_claimed = None, False, True
