#!/usr/bin/env python3
"""A small exec: seat in plain Python (docs/protocol.md), standard library only:

    caishen match --policies "exec:python3 examples/bots/seat_bot.py,greedy" --walls 100 --out runs/seat-bot

It reads the host's JSON lines on stdin and answers each request on stdout: win when it can, never claims
a discard, declares 硬子 when offered, and otherwise discards the tile with the fewest neighbours in its
hand (it keeps the joker).  One process plays one seat of many games at once: the host tags every message
with its game.
"""

import json
import re
import sys


def counts(hand: str) -> dict:
    """``{"1m": 2, ...}`` of an mpsz hand such as ``"123m55p7z"``."""
    out = {}
    for digits, suit in re.findall(r"([0-9]+)([mpsz])", hand):
        for d in digits:
            out[d + suit] = out.get(d + suit, 0) + 1
    return out


def keep_value(tile: str, held: dict) -> int:
    """How much ``tile`` is worth keeping: its copies, and for a suited tile its neighbours within two."""
    value = 3 * held[tile]
    if tile[1] != "z":
        rank = int(tile[0])
        for step, weight in ((-2, 1), (-1, 2), (1, 2), (2, 1)):
            if 1 <= rank + step <= 9:
                value += weight * min(1, held.get(f"{rank + step}{tile[1]}", 0))
    return value


def choose(msg: dict, joker) -> str:
    legal = msg["legal"]
    for wanted in ("win", "hard_declare", "pass"):
        if wanted in legal:
            return wanted
    held = counts(msg["hand"])
    discards = [a for a in legal if a.startswith("discard ")]
    if not discards:
        return legal[0]
    tiles = [a.split()[1] for a in discards]
    plain = [t for t in tiles if t != joker] or tiles
    return "discard " + min(plain, key=lambda t: (keep_value(t, held), t))


def main() -> None:
    jokers = {}  # game -> its joker tile (start_hand), forgotten at end_hand
    for line in sys.stdin:
        msg = json.loads(line)
        kind = msg.get("type")
        if kind == "hello":
            answer = {"type": "ready"}
        elif kind == "start_hand":
            jokers[msg["game"]] = msg["joker"]
            continue
        elif kind == "end_hand":
            jokers.pop(msg["game"], None)
            continue
        elif kind == "request":
            answer = {"action": choose(msg, jokers.get(msg["game"]))}
        elif kind == "bye":
            return
        else:
            continue
        sys.stdout.write(json.dumps(answer) + "\n")
        sys.stdout.flush()


if __name__ == "__main__":
    main()
