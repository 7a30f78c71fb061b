"""The bots' data files: where ``tuned:NAME`` and ``learned:NAME`` find their weights, which rule sets ship
them, and the tuned weights read and checked (:mod:`caishen.sim.bots.registry`'s grammar names the files;
the registry re-exports these names).

``NAME|PATH``: a registered rule set's name reads the rule set's shipped file (:data:`TUNED_FILE`,
:data:`LEARNED_FILE` or ``learned-<v>.npz`` in its package folder), another plain word ``NAME.json`` /
``NAME.npz``, anything else the path itself.
"""

from __future__ import annotations

import re
from pathlib import Path

import numpy as np

from caishen.sim import safeio
from caishen.sim.bots.tuned import FEATURES, N_W, check_weights

#: the file name of a rule set's shipped learned bot, in its package folder (``learned:<rule set>``)
LEARNED_FILE = "learned.npz"
#: the file name of a rule set's shipped tuned weights, in its package folder (``tuned:<rule set>``)
TUNED_FILE = "tuned.json"
#: bytes of a weights file at most (a tuned file with its history is a few KB)
MAX_WEIGHTS_FILE = 4 << 20


def _short(x) -> str:
    from caishen.sim.rules.options import short_repr

    return short_repr(x)


def data_file(name: str, filename: str, suffix: str = ".json") -> Path:
    """The data file of a bot argument ``NAME|PATH``: a registered rule set's name reads the rule set's
    shipped ``filename`` (:meth:`caishen.sim.rules.base.RuleSet.data_path`), another plain word
    ``NAME + suffix``, anything else the path itself."""
    if re.fullmatch(r"[A-Za-z0-9_-]+", name):
        from caishen.sim import rules

        if name in rules.names():
            return rules.get(name).data_path(filename)
        return Path(f"{name}{suffix}")
    return Path(name)


def learned_path(name: str) -> Path:
    """The weights file of ``learned:NAME`` (:func:`data_file` with ``learned.npz``); ``learned:<rule set>-<v>``
    (a word ``v``) is that rule set's shipped ``learned-<v>.npz`` (``learned:<rule set>-env``: the env trainer's)."""
    head, dash, variant = name.partition("-")
    if dash and re.fullmatch(r"[A-Za-z0-9_]+", head) and re.fullmatch(r"[A-Za-z0-9_]+", variant):
        from caishen.sim import rules

        if head in rules.names():
            return rules.get(head).data_path(f"learned-{variant}.npz")
    return data_file(name, LEARNED_FILE, ".npz")


def tuned_path(name: str) -> Path:
    """The weights file of ``tuned:NAME`` (:func:`data_file` with ``tuned.json``)."""
    return data_file(name, TUNED_FILE)


def shipped_learned() -> list[str]:
    """The rule sets that ship a learned bot (``learned:<name>`` loads without a path): those whose package
    folder holds :data:`LEARNED_FILE` now (read from the files, so a rule set that gains one is listed)."""
    from caishen.sim import rules

    return [n for n in rules.names() if rules.get(n).data_path(LEARNED_FILE).is_file()]


def _builtin_learned() -> str:
    """``"learned:NAME, ..."``: the built-in learned bots' specs, comma-separated (``"none"`` for none): each
    rule set's ``learned:<rule set>``, then its variants ``learned:<rule set>-<v>`` (``learned-<v>.npz``)."""
    from caishen.sim import rules

    variants = [f"{n}-{p.stem[len('learned-'):]}" for n in rules.names()
                for p in sorted(rules.get(n).data_path(LEARNED_FILE).parent.glob("learned-*.npz"))
                if re.fullmatch(r"[A-Za-z0-9_]+", p.stem[len("learned-"):])]
    return ", ".join(f"learned:{n}" for n in shipped_learned() + variants) or "none"


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
        raise ValueError(f"tuned:{_short(name)}: give a shipped name ({', '.join(shipped_tuned())}) or a .json path")
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
                         "tuned for, e.g. \"rules\": \"NAME\")")
    feats = meta.get("features")
    if feats is not None and (not isinstance(feats, list) or feats != list(FEATURES)):
        raise ValueError(f"tuned:{_short(name)}: {str(path)!r} lists the features {_short(feats)}, "
                         f"this version needs the list of its {len(FEATURES)} (caishen.sim.bots.tuned.FEATURES)")
    w = meta["weights"]
    if not isinstance(w, list) or any(isinstance(v, bool) or not isinstance(v, (int, float)) for v in w):
        raise ValueError(f"tuned:{_short(name)}: {str(path)!r}: 'weights' must be a list of {N_W} numbers")
    return check_weights(w, f"tuned:{name} ({path})"), meta
