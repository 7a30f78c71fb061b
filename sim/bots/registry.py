"""Every self-play bot by its spec: the kernel policies plus the bots that need data.

:mod:`caishen.sim.bots.policies` holds the policies that are a ``(code, param)`` pair and
nothing else (``random``, ``greedy``, ``never``, ``always``,
``threshold:N``, ``greedy_safe``); the environments and the step API use
them directly.  This module adds the bots that need more than that, and the
one numba dispatch that plays them all (:func:`_bot_action`):

=============== ================================================================
spec            bot
=============== ================================================================
``tuned:NAME``  the parametric bot of :mod:`caishen.sim.bots.tuned` with the weights of
                ``sim/rules/NAME/tuned.json`` (shipped by each rule set);
                ``tuned:PATH.json`` reads another weights file
``mc:N``        the search bot of :mod:`caishen.sim.bots.search`: ``N`` determinizations
                (1..4096) per decision, rollouts to the end of the hand; its
                base policy (kept unless the rollouts find better, and its own
                seat's rollout policy) is ``tuned:<rules>``
``mc:N:greedy`` the same search with greedy as its base policy
``learned:PATH`` a learned policy (:mod:`caishen.sim.bots.learned`): the network of the
                ``.npz`` weights file ``PATH``, played by a numba forward pass
=============== ================================================================

A weights file is JSON: ``{"rules": "kaihua", "features": [...], "weights":
[...]}`` with :data:`caishen.sim.bots.tuned.FEATURES` as ``features`` (same order) and
one finite number per feature; anything else is a ``ValueError`` naming the
file and the bad value.  A file tuned for one rule set refuses to play
another (``rules``), since its weights mean nothing there.

The bots' data travels with the kernels as one tuple, the *bot context*
(:func:`make_context`): the weights of each seat (a learned bot's kernel
row, padded to the longest row), two scratch game states for the rollouts,
scratch rows, the search bot's random stream (seeded from the batch seed,
apart from the stream of the walls and the random bots), the Jiating
scoring tables the rollouts score with, and the learned bots' scratch
(:func:`caishen.sim.bots.learned.new_scratch`).
"""

from __future__ import annotations

import hashlib
import re
from pathlib import Path

import numpy as np
from numba import njit

from caishen.sim import safeio
from caishen.sim.engine import N_SEATS, SC_TO_ACT, new_state
from caishen.sim.bots.policies import POLICIES, _choose_action, check_piao_policy, parse_policy
from caishen.sim.rng import _rng_seed
from caishen.sim.bots.search import MAX_DETERMINIZATIONS, _mc_action
from caishen.sim.bots.learned import _learned_action, load_learned, new_scratch
from caishen.sim.bots.tuned import FEATURES, GREEDY_WEIGHTS, N_W, _tuned_action, check_weights

POLICY_TUNED = 10
POLICY_MC = 11
POLICY_LEARNED = 12
#: bots with data: name -> (code, takes a parameter)
BOT_POLICIES = {"tuned": (POLICY_TUNED, True), "mc": (POLICY_MC, True), "learned": (POLICY_LEARNED, True)}

#: the file name of a rule set's shipped tuned weights, in its package folder (``tuned:<rule set>``)
TUNED_FILE = "tuned.json"
#: bytes of a weights file at most (a tuned file with its history is a few KB)
MAX_WEIGHTS_FILE = 4 << 20
#: the scratch width of the search bot's rows (>= 136 tiles, >= its candidates)
_SCRATCH = 160


def known_policies() -> list[str]:
    """Every policy name a spec may start with (kernel policies, then the bots with data)."""
    return [*POLICIES, *BOT_POLICIES]


def _short(x) -> str:
    from caishen.sim.rules.options import short_repr

    return short_repr(x)


def tuned_path(name: str) -> Path:
    """The weights file of ``tuned:NAME``: a rule set's shipped ``tuned.json`` for a rule set's name
    (``sim/rules/<name>/tuned.json``), else the path ``NAME``."""
    if re.fullmatch(r"[A-Za-z0-9_-]+", name):
        from caishen.sim import rules

        if name in rules.names():
            return rules.get(name).data_path(TUNED_FILE)
        return Path(f"{name}.json")
    return Path(name)


def shipped_tuned() -> list[str]:
    """The rule sets that ship tuned weights (``tuned:<name>`` loads without a path)."""
    from caishen.sim import rules

    return [n for n in rules.names() if rules.get(n).data_path(TUNED_FILE).is_file()]


def load_tuned(name: str) -> tuple[np.ndarray, dict]:
    """``(weights: float64[N_W], meta)`` of ``tuned:NAME`` (module docstring).

    Raises ``ValueError`` naming the file for a missing or unreadable file,
    bad JSON, features that are not :data:`caishen.sim.bots.tuned.FEATURES`, or weights of
    the wrong length or with a NaN / infinite value.
    """
    if not isinstance(name, str) or not name.strip():
        raise ValueError(f"tuned:{_short(name)}: give a shipped name (kaihua, jiating) or a .json path")
    path = tuned_path(name.strip())
    try:
        meta = safeio.read_json(path, MAX_WEIGHTS_FILE, follow=True, what="a weights file",
                                constants=True)  # a NaN weight is named by check_weights
    except FileNotFoundError:
        shipped = ", ".join(shipped_tuned()) or "none"
        raise ValueError(f"tuned:{_short(name)}: cannot read {str(path)!r} (No such file or directory); "
                         f"shipped: {shipped}") from None
    except safeio.FileError as e:
        raise ValueError(f"tuned:{_short(name)}: {e}") from None
    if "weights" not in meta:
        raise ValueError(f"tuned:{_short(name)}: {str(path)!r} has no 'weights' list")
    if not isinstance(meta.get("rules"), str):
        raise ValueError(f"tuned:{_short(name)}: {str(path)!r} has no 'rules' (the rule set the weights were "
                         "tuned for, e.g. \"rules\": \"kaihua\")")
    feats = meta.get("features")
    if feats is not None and (not isinstance(feats, list) or feats != list(FEATURES)):
        raise ValueError(f"tuned:{_short(name)}: {str(path)!r} lists the features {_short(feats)}, "
                         f"this version needs {list(FEATURES)}")
    w = meta["weights"]
    if not isinstance(w, list) or any(isinstance(v, bool) or not isinstance(v, (int, float)) for v in w):
        raise ValueError(f"tuned:{_short(name)}: {str(path)!r}: 'weights' must be a list of {N_W} numbers")
    return check_weights(w, f"tuned:{name} ({path})"), meta


def parse_bot(spec) -> tuple[int, int, np.ndarray | None, str | None]:
    """``(code, param, weights, rules)`` of one spec: a kernel policy (``weights`` None),
    ``tuned:NAME`` (its weights and the rule set they were tuned for), ``mc:N``
    (weights None and rules ``"*"``: the base policy is the tuned bot of the
    rule set played, :func:`bot_table` loads it) or ``mc:N:greedy``
    (``GREEDY_WEIGHTS``).

    Raises ``ValueError`` naming an unknown policy (listing the known ones)
    or a bad parameter.
    """
    if not isinstance(spec, str):
        raise ValueError(f"policy {_short(spec)}: must be a string such as 'greedy', 'mc:32' or 'tuned:kaihua'")
    name, _, arg = spec.strip().partition(":")
    if name == "tuned":
        w, meta = load_tuned(arg)
        return POLICY_TUNED, 0, w, meta.get("rules")
    if name == "learned":
        if not arg.strip():
            raise ValueError(f"policy {_short(spec)}: give the weights file, e.g. learned:net.npz")
        row, hdr = load_learned(arg.strip())
        return POLICY_LEARNED, 0, row, hdr["rules"]
    if name == "mc":
        count, _, base = (arg or "").partition(":")
        if not re.fullmatch(r"\s*[0-9]{1,6}\s*", count):
            raise ValueError(f"policy {_short(spec)}: give the determinizations per decision, e.g. mc:32")
        n = int(count)
        if not 1 <= n <= MAX_DETERMINIZATIONS:
            raise ValueError(f"policy {_short(spec)}: N must be in 1..{MAX_DETERMINIZATIONS}")
        base = base.strip()
        if base not in ("", "greedy"):
            raise ValueError(f"policy {_short(spec)}: the base policy is the tuned bot (mc:N) or greedy "
                             "(mc:N:greedy)")
        return POLICY_MC, n, (GREEDY_WEIGHTS.copy() if base == "greedy" else None), (None if base else "*")
    if name not in POLICIES:
        raise ValueError(f"unknown policy {_short(spec)}; known: {', '.join(known_policies())} "
                         "(threshold:N, tuned:NAME, mc:N take a parameter)")
    code, param = parse_policy(spec)
    return code, param, None, None


def split_specs(policies) -> list[str]:
    """One spec per seat from ``"a"``, ``"a,b,c,d"`` or a sequence of 1 or 4 specs (``ValueError`` otherwise)."""
    specs = [p.strip() for p in policies.split(",")] if isinstance(policies, str) else list(policies)
    if len(specs) == 1:
        specs = specs * N_SEATS
    if len(specs) != N_SEATS:
        raise ValueError(f"give one policy or one per seat (4), got {len(specs)}: {_short(policies)}")
    return specs


def has_data(spec) -> bool:
    """True for a spec of a bot with data (``tuned:...``, ``mc:...``): it needs the bot context of
    :func:`make_context` and compiles apart from the kernel policies (:mod:`caishen.sim.selfplay.batch`)."""
    return str(spec).partition(":")[0].strip() in BOT_POLICIES


def _seat_bot(spec, rules: str) -> tuple[int, int, np.ndarray | None, str | None]:
    """:func:`parse_bot` with ``mc:N``'s base resolved: its weights are those of ``tuned:<rules>``."""
    code, param, w, tuned_for = parse_bot(spec)
    if tuned_for == "*":
        w, tuned_for = load_tuned(rules)[0], rules
    return code, param, w, tuned_for


def bot_table(policies, rules: str, joker: int, label: str | None = None) -> tuple[np.ndarray, np.ndarray]:
    """``(table: int64[4, 2], weights: float64[4, >= N_W])`` of the seats' specs for rule set ``rules``
    (a learned bot's row is its kernel row, :func:`caishen.sim.bots.learned.pack`).

    ``joker``: the rule set's joker kind (-1 none); ``label``: what the
    messages call every seat (a match's ``"policy 2 of the match"``,
    :func:`caishen.sim.analysis.arena.check_policies`), default ``"seat <s>"``.  Raises
    ``ValueError`` for a wrong count, an unknown spec, a 飘 policy without a
    财神 (:func:`caishen.sim.bots.policies.check_piao_policy`) or weights tuned for
    another rule set.
    """
    table = np.zeros((N_SEATS, 2), np.int64)
    rows = [None] * N_SEATS
    for s, spec in enumerate(split_specs(policies)):
        where = f"seat {s}" if label is None else label
        code, param, w, tuned_for = _seat_bot(spec, rules)
        if w is not None:
            if tuned_for is not None and tuned_for != rules:
                raise ValueError(f"policy {spec!r} ({where}) was tuned for {tuned_for!r}, not {rules!r}")
            rows[s] = w
        else:
            check_piao_policy(code, param, joker, rules, f" ({where})")
        table[s] = code, param
    # a learned bot's row is longer than N_W (caishen.sim.bots.learned, "Kernel layout"): pad to the longest
    weights = np.zeros((N_SEATS, max([N_W] + [len(w) for w in rows if w is not None])))
    for s, w in enumerate(rows):
        if w is not None:
            weights[s, :len(w)] = w
    return table, weights


def weights_digest(policies, rules: str) -> str:
    """sha256 (16 hex digits) of the weights each seat's bot plays with in rule set ``rules``.

    Zeros stand for any other spec (a kernel policy; a test's chunk function
    may name its own); ``mc:N`` counts with its base policy's weights.  A
    run records it (``caishen.sim.selfplay.runner``) because a ``tuned:PATH.json``
    file is read when the run starts, not part of the source digest: a
    resume after the file changed would mix two bots under one name.
    Raises ``ValueError`` as :func:`parse_bot` does for a bad ``tuned`` or
    ``mc`` spec.
    """
    h = hashlib.sha256()
    for spec in split_specs(policies):
        w = _seat_bot(spec, rules)[2] if has_data(spec) else None
        h.update(np.zeros(N_W) if w is None else np.ascontiguousarray(w, dtype=np.float64))
    return h.hexdigest()[:16]


def make_context(name: str, rules, weights: np.ndarray, seed: int):
    """The bot context tuple of the kernels (module docstring).

    ``name``/``rules``: the rule set and its options object (for the Jiating
    scoring tables); ``weights: float64[4, >= N_W]`` (:func:`bot_table`); ``seed``: int, seeds the
    search bot's stream.
    """
    from caishen.sim.rules.jiating import kernels as jk

    tables = jk.kernel_tables(rules if name == "jiating" else None)
    jt = (*tables, jk.new_work(), np.zeros(len(tables[1]), np.int64))
    bf = (np.zeros(34, np.uint8), np.zeros(N_SEATS, np.int64))
    rng = np.zeros(4, np.uint64)
    _rng_seed(rng, (int(seed) * 0x9E3779B1 + 0x5EED) % 2**63)
    return (np.ascontiguousarray(weights, dtype=np.float64), new_state(2), np.zeros((4, _SCRATCH)),
            np.zeros((4, _SCRATCH), np.int64), rng, jt, bf, new_scratch())


@njit(cache=True)
def _bot_action(code, param, st, ep, rp, tabs, mask, work, bx):
    """The action of policy ``code`` (with ``param``) for the seat to act: a kernel policy
    (:func:`caishen.sim.bots.policies._choose_action`), the tuned bot, the learned bot or the search bot.

    ``bx``: the bot context (:func:`make_context`).  The action is legal.
    """
    if code == POLICY_TUNED:
        return _tuned_action(bx[0][st.sc[SC_TO_ACT]], st, ep, tabs, mask, work)
    if code == POLICY_LEARNED:
        return _learned_action(bx[0][st.sc[SC_TO_ACT]], st, ep, tabs, mask, work, bx[7])
    if code == POLICY_MC:
        return _mc_action(param, bx[0][st.sc[SC_TO_ACT]], st, ep, rp, tabs, mask, work, bx[1], bx[2], bx[3],
                          bx[4], bx[5], bx[6])
    return _choose_action(code, param, st, ep, rp, tabs, mask, work)
