"""A trained ``sb3_contrib.MaskablePPO`` policy as a bot, and the evaluation against greedy bots.

Needs the ``[rl]`` extra (torch, sb3-contrib); ``import caishen.agents`` does not
import this module (``caishen.agents.make_agent("ppo:PATH")`` imports it when asked).

- :class:`PPOAgent` (``make_agent("ppo:PATH")``): loads a checkpoint written
  by :mod:`caishen.agents.train_ppo` (a ``.safetensors`` file,
  :func:`save_policy` / :func:`load_policy`) and plays

  * the Python step API: ``act(observation)`` (``game.observe()``) encodes
    ``caishen.envs.observation.encode(observation, layout=...)`` in
    the layout the policy was trained on and returns its choice among
    ``observation.mask`` (so it can sit in any seat of a
    :class:`caishen.sim.engine.Game` or of the PettingZoo env);
  * the batched envs: ``act_games(games) -> int64[n]`` for the seat to act
    in every game of an :class:`caishen.envs.batched.BatchedGames` (``env.games`` of
    :class:`caishen.envs.vector_env.CaishenVectorEnv` /
    :class:`caishen.envs.vector_env.SelfPlayVectorEnv`; in self-play route by
    ``info["current_player"]`` to seat it next to bots), or
    ``act_batch(obs, masks)`` for observations already in its layout.

  The layout (planes / flat, with or without the order-of-play block, with
  or without :mod:`caishen.envs.assist`'s block) is read off the checkpoint's
  observation space; the rule set and the training settings are in
  :attr:`PPOAgent.meta` (saved by :mod:`caishen.agents.train_ppo`).

- Checkpoints that cannot run code: a ``.safetensors`` file holds the
  policy's tensors (its ``state_dict``: plain numbers) and, in the file's
  metadata, a JSON config (:data:`CHECKPOINT_FORMAT`, the observation
  shape and its feature set ``{"name", "version"}``
  (:mod:`caishen.sim.bots.features`: a checkpoint of another set or version,
  or of none, is refused naming the file and the field), the action count, the network's layer sizes and activation, the
  training settings).  Loading parses the JSON (strict, bounded), checks
  the header's tensor table against the network the config makes (names,
  shapes, float dtypes, byte ranges inside the file: a config never builds
  a network larger than the tensors the file holds), builds the network
  (``MaskableActorCriticPolicy``) and copies the tensors in, refusing a NaN
  or infinite one; nothing in the file is unpickled or imported.  An SB3
  ``.zip`` (``MaskablePPO.save``) unpickles objects on load, so a shared
  one can run code: ``ppo:PATH`` refuses it (:func:`load_policy`);
  :func:`convert_zip` turns a zip *you trust* (your own) into a
  ``.safetensors`` checkpoint.
  Actions are the policy's most likely legal action (``deterministic=True``,
  default) or a sample of its masked distribution.

- :func:`evaluate_vs_greedy`: mean points per hand of several policies in
  the same seat against three greedy bots, on *duplicate deals*: game ``i``
  of the batch is seeded ``seed + i`` for every policy, and its ``k``-th
  counted hand has the same wall and dealer whoever sits in the learning
  seat (a game's stream draws the dealer and the wall seed per hand whatever
  the actions, :mod:`caishen.envs.batched`; the wall seeds are compared, and a
  mismatch raises ``RuntimeError``).  So differences between policies are
  paired per hand, and their confidence intervals are much narrower than
  those of the means.  :func:`ci_table` summarizes: mean, a 95% normal
  interval over independent hands (``1.96 * sd / sqrt(hands)``), and each
  policy's paired difference from a reference policy.
"""

from __future__ import annotations

import json
import math
import os
import struct
from typing import Callable

import numpy as np

from caishen.sim.rules.base import DEFAULT
from caishen.sim.bots.agent import Agent
from caishen.envs.assist import N_ASSIST, assist_batch, assist_features
from caishen.envs.observation import encode, feature_set, flat_size, n_planes
from caishen.sim.bots.features import check_feature_set
from caishen.sim.engine import N_ACTIONS, N_KINDS, Observation

__all__ = ["PPOAgent", "load_model", "load_policy", "save_policy", "convert_zip", "layout_of", "evaluate_vs_greedy", "ci_table", "random_masked_policy",
           "greedy_policy"]

RL_HINT = ("the PPO agent needs the [rl] extra: pip install torch==<a CPU build> 'caishen[rl]' "
           "(README, 'Training')")


def _import_maskable_ppo():
    try:
        from sb3_contrib import MaskablePPO
    except ImportError as e:  # pragma: no cover - exercised only without the extra
        raise ImportError(f"{RL_HINT} ({e})") from e
    return MaskablePPO


#: the ``format`` of a checkpoint's JSON config, and the metadata key that holds the config
CHECKPOINT_FORMAT = "caishen-ppo-policy-1"
CONFIG_KEY = "caishen"
#: the file suffix of a checkpoint
SUFFIX = ".safetensors"
#: bytes of a checkpoint at most, and of its JSON header
MAX_CHECKPOINT = 1 << 30
MAX_HEADER = 16 << 20
_ACTIVATIONS = ("relu", "tanh")


def _policy_config(policy, meta: dict) -> dict:
    """The JSON config of a ``MaskableActorCriticPolicy`` (module docstring)."""
    arch = policy.net_arch
    pi, vf = (arch.get("pi", []), arch.get("vf", [])) if isinstance(arch, dict) else (arch, arch)
    act = policy.activation_fn.__name__.lower()
    if act not in _ACTIVATIONS:
        raise ValueError(f"activation {policy.activation_fn.__name__}: a checkpoint takes {', '.join(_ACTIVATIONS)}")
    layout, history, _ = layout_of(policy.observation_space)
    return {"format": CHECKPOINT_FORMAT, "observation_shape": [int(x) for x in policy.observation_space.shape],
            "feature_set": feature_set(layout, history).header(),
            "n_actions": int(policy.action_space.n), "net_arch": {"pi": [int(h) for h in pi],
                                                                  "vf": [int(h) for h in vf]},
            "activation": act, "meta": dict(meta or {})}


def save_policy(model, path: str | os.PathLike, meta: dict | None = None) -> str:
    """Write the policy of ``model`` (a ``MaskablePPO``, or its policy) as a ``.safetensors`` checkpoint.

    ``meta``: the training settings (JSON values; default the model's
    ``caishen_meta``).  Written atomically (:func:`caishen.sim.safeio.atomic_write`).
    Returns the path.  Raises ``ValueError`` for a path without the
    ``.safetensors`` suffix or settings that are not JSON.
    """
    from safetensors.torch import save

    from caishen.sim import safeio

    path = os.fspath(path)
    if not path.endswith(SUFFIX):
        raise ValueError(f"checkpoint {path!r}: the file name must end in {SUFFIX}")
    policy = getattr(model, "policy", model)
    if meta is None:
        meta = getattr(model, "caishen_meta", None) or {}
    cfg = _policy_config(policy, meta)
    tensors = {k: v.detach().cpu().contiguous() for k, v in policy.state_dict().items()}
    data = save(tensors, metadata={CONFIG_KEY: json.dumps(cfg, allow_nan=False, sort_keys=True)})
    safeio.atomic_write(path, data)
    return path


def _header(path: str, data: bytes) -> tuple[dict, int]:
    """``(header, n)``: a safetensors file's JSON header (its ``n`` bytes follow the 8-byte length);
    ``ValueError`` naming ``path`` for a file that has none."""
    from caishen.sim import safeio

    if len(data) < 8:
        raise ValueError(f"{path!r} is not a safetensors file ({len(data)} bytes)")
    n = struct.unpack("<Q", data[:8])[0]
    if n > min(MAX_HEADER, len(data) - 8):
        raise ValueError(f"{path!r} is not a safetensors file (a header of {n:,} bytes in a file of {len(data):,})")
    try:
        header = safeio.parse_json(data[8:8 + n])
    except ValueError as e:
        raise ValueError(f"{path!r} is not a safetensors file (its header: {e})") from None
    if not isinstance(header, dict):
        raise ValueError(f"{path!r} is not a safetensors file (its header is no JSON object)")
    return header, n


#: bytes per value of the tensor dtypes a checkpoint may hold
_DTYPE_BYTES = {"F32": 4, "F64": 8, "F16": 2, "BF16": 2}


def _expected_tensors(cfg: dict) -> dict[str, tuple[int, ...]]:
    """The tensor names and shapes of the ``MaskableActorCriticPolicy`` a config builds (flattened
    observations into the ``pi`` and ``vf`` layers, then the action and value heads)."""
    out: dict[str, tuple[int, ...]] = {}
    n_in = math.prod(cfg["observation_shape"])
    last = {}
    for net in ("policy", "value"):
        prev = n_in
        for j, h in enumerate(cfg["net_arch"]["pi" if net == "policy" else "vf"]):
            out[f"mlp_extractor.{net}_net.{2 * j}.weight"] = (h, prev)
            out[f"mlp_extractor.{net}_net.{2 * j}.bias"] = (h,)
            prev = h
        last[net] = prev
    out["action_net.weight"], out["action_net.bias"] = (cfg["n_actions"], last["policy"]), (cfg["n_actions"],)
    out["value_net.weight"], out["value_net.bias"] = (1, last["value"]), (1,)
    return out


def _check_tensor_table(path: str, header: dict, n: int, size: int, cfg: dict) -> None:
    """Before the network is built: the header's tensors must be exactly those the config's network has
    (:func:`_expected_tensors`), each of a float dtype and its shape, its bytes inside the file and as many as
    the shape makes -- so a config that declares a huge network without the tensors to fill it is refused
    here, having allocated nothing.  ``ValueError`` naming the file and the field or tensor."""
    want = _expected_tensors(cfg)
    have = {k: v for k, v in header.items() if k != "__metadata__"}
    if set(have) != set(want):
        missing, extra = sorted(set(want) - set(have)), sorted(set(have) - set(want))
        raise ValueError(f"{path!r}: its tensors do not fit the network of its config: field 'net_arch' "
                         f"{json.dumps(cfg['net_arch'])[:80]} makes tensors the file does not hold (missing "
                         f"{missing[:3]}, unexpected {extra[:3]})")
    for k, shape in want.items():
        t = have[k]
        ok = isinstance(t, dict) and t.get("dtype") in _DTYPE_BYTES and isinstance(t.get("shape"), list)
        if not ok or tuple(t["shape"]) != shape:
            got = f"{t.get('dtype')}{t.get('shape')}" if isinstance(t, dict) else type(t).__name__
            raise ValueError(f"{path!r}: its tensors do not fit the network of its config: tensor {k!r} is "
                             f"{str(got)[:60]}, the network has a float tensor {list(shape)}")
        off = t.get("data_offsets")
        need = math.prod(shape) * _DTYPE_BYTES[t["dtype"]]
        if not (isinstance(off, list) and len(off) == 2 and all(isinstance(o, int) and not isinstance(o, bool)
                                                                 for o in off)
                and 0 <= off[0] <= off[1] <= size - 8 - n and off[1] - off[0] == need):
            raise ValueError(f"{path!r}: tensor {k!r} claims bytes {str(off)[:40]} of a file with {size - 8 - n:,} "
                             f"bytes of tensors; its shape {list(shape)} needs {need:,}")


def _read_config(path: str, data: bytes) -> dict:
    """The JSON config in a safetensors file's header; ``ValueError`` naming ``path`` when there is none."""
    from caishen.sim import safeio

    header, n = _header(path, data)
    try:
        cfg = safeio.parse_json(header["__metadata__"][CONFIG_KEY])
    except (ValueError, KeyError, TypeError) as e:
        raise ValueError(f"{path!r} is not a caishen PPO checkpoint (no {CONFIG_KEY!r} config in its header: "
                         f"{e})") from None
    ok = (isinstance(cfg, dict) and cfg.get("format") == CHECKPOINT_FORMAT
          and isinstance(cfg.get("observation_shape"), list) and 1 <= len(cfg["observation_shape"]) <= 2
          and all(isinstance(x, int) and 1 <= x <= 10**5 for x in cfg["observation_shape"])
          and cfg.get("n_actions") == N_ACTIONS and cfg.get("activation") in _ACTIVATIONS
          and isinstance(cfg.get("net_arch"), dict) and set(cfg["net_arch"]) == {"pi", "vf"}
          and all(isinstance(v, list) and len(v) <= 16 and all(isinstance(h, int) and 1 <= h <= 1 << 16 for h in v)
                  for v in cfg["net_arch"].values())
          and isinstance(cfg.get("meta", {}), dict))
    if not ok:
        raise ValueError(f"{path!r}: its config is not a {CHECKPOINT_FORMAT} config "
                         f"({json.dumps(cfg)[:120] if isinstance(cfg, dict) else type(cfg).__name__})")
    _check_features(path, cfg)
    _check_tensor_table(path, header, n, len(data), cfg)
    return cfg


def _check_features(path: str, cfg: dict) -> None:
    """The checkpoint's ``feature_set`` must be a set and version this code has, and the one its
    ``observation_shape`` is (``ValueError`` naming the file and the field)."""
    shape = tuple(cfg["observation_shape"])
    try:
        layout, history, _ = _layout_of_shape(shape)
    except ValueError:
        raise ValueError(f"{path!r}: field 'observation_shape' {list(shape)} is none of the caishen layouts "
                         "(caishen.envs.observation)") from None
    want = feature_set(layout, history)
    check_feature_set(cfg.get("feature_set"), want, repr(path))


def load_policy(path: str | os.PathLike):
    """Load a ``.safetensors`` checkpoint (:func:`save_policy`) as a ``MaskableActorCriticPolicy`` on the
    CPU, its training settings in ``.caishen_meta``.  Nothing in the file is unpickled or imported.

    Raises ``ValueError`` naming the file if it is missing, not a regular
    file, larger than :data:`MAX_CHECKPOINT`, an SB3 ``.zip`` (pickles:
    refused), or not a checkpoint of this format (config, tensor names or
    shapes, checked from the header before the network is built: a config
    cannot make a network larger than the file's tensors), or holds a NaN or
    an infinite weight (naming the tensor); ``ImportError`` without the
    ``[rl]`` extra.
    """
    from caishen.sim import safeio

    if not isinstance(path, (str, os.PathLike)) or not str(path):
        raise ValueError(f"expected a checkpoint path, got {path!r}")
    p = os.fspath(path)
    if not p.endswith(SUFFIX):
        raise ValueError(f"checkpoint {p!r}: ppo: loads only {SUFFIX} files (tensors and a JSON config, nothing "
                         "that runs code); an SB3 .zip unpickles objects when loaded, so a shared one can run code. "
                         "Convert a zip you trust with caishen.agents.ppo.convert_zip")
    try:
        data = safeio.read_bytes(p, MAX_CHECKPOINT, follow=True, what="a PPO checkpoint")
    except FileNotFoundError:
        raise ValueError(f"no PPO checkpoint at {p!r}") from None
    cfg = _read_config(p, data)
    try:
        import torch
        from gymnasium import spaces
        from safetensors.torch import load
        from sb3_contrib.common.maskable.policies import MaskableActorCriticPolicy
    except ImportError as e:  # pragma: no cover - exercised only without the extra
        raise ImportError(f"{RL_HINT} ({e})") from e
    try:
        tensors = load(data)
    except Exception as e:  # safetensors raises its own error type for a damaged file
        raise ValueError(f"{p!r}: damaged tensors ({str(e)[:80]})") from None
    for k, t in tensors.items():  # a NaN or an infinity would load, then fail (or play nonsense) at the first move
        bad = torch.nonzero(~torch.isfinite(t.reshape(-1)))
        if len(bad):
            i = int(bad[0, 0])
            raise ValueError(f"{p!r}: tensor {k!r} holds {float(t.reshape(-1)[i])!r} at flat index {i}; every "
                             "weight must be finite")
    shape = tuple(cfg["observation_shape"])
    policy = MaskableActorCriticPolicy(
        spaces.Box(0.0, 1.0, shape, np.float32), spaces.Discrete(cfg["n_actions"]), lambda _: 0.0,
        net_arch=dict(cfg["net_arch"]), activation_fn={"relu": torch.nn.ReLU, "tanh": torch.nn.Tanh}[cfg["activation"]])
    try:
        policy.load_state_dict(tensors, strict=True)
    except (RuntimeError, ValueError) as e:
        raise ValueError(f"{p!r}: its tensors do not fit the network of its config "
                         f"({str(e).splitlines()[0][:120]})") from None
    policy.set_training_mode(False)
    policy.caishen_meta = dict(cfg.get("meta") or {})
    return policy


def load_model(path: str):
    """The policy of a checkpoint (:func:`load_policy`): what :class:`PPOAgent` plays."""
    return load_policy(path)


def convert_zip(zip_path: str | os.PathLike, out: str | os.PathLike) -> str:
    """Convert an SB3 ``MaskablePPO`` ``.zip`` **that you trust** (loading it unpickles: it can run code)
    into a ``.safetensors`` checkpoint (:func:`save_policy`, its ``caishen_meta`` kept); returns ``out``."""
    model = _import_maskable_ppo().load(os.fspath(zip_path), device="cpu")
    return save_policy(model, out, getattr(model, "caishen_meta", None) or {})


def layout_of(observation_space) -> tuple[str, bool, bool]:
    """``(layout, history, assist)`` of an observation space of the batched envs: ``(967,)`` flat,
    ``(2599,)`` flat with the order-of-play block, 36 more with the assist block
    (:mod:`caishen.envs.assist`), ``(76, 34)`` / ``(124, 34)`` planes.  Raises ``ValueError`` for any
    other shape."""
    return _layout_of_shape(tuple(observation_space.shape))


def _layout_of_shape(shape: tuple) -> tuple[str, bool, bool]:
    """:func:`layout_of` of an observation shape."""
    for history in (False, True):
        if shape == (flat_size(history),):
            return "flat", history, False
        if shape == (flat_size(history) + N_ASSIST,):
            return "flat", history, True
        if shape == (n_planes(history), N_KINDS):
            return "planes", history, False
    raise ValueError(f"observation shape {shape} is none of the caishen layouts (caishen.envs.observation)")


class PPOAgent(Agent):
    """A trained MaskablePPO policy as a bot (module docstring).

    ``PPOAgent(path_or_model, deterministic=True)``: a ``.safetensors``
    checkpoint path (:func:`load_policy`), or a ``MaskablePPO`` (or its
    policy) in memory.  Raises ``ValueError`` for a missing, refused or
    damaged checkpoint, or one whose observations are no caishen layout.
    """

    def __init__(self, model, deterministic: bool = True):
        if isinstance(model, (str, os.PathLike)):
            self.name = f"ppo:{os.fspath(model)}"
            model = load_policy(model)
        else:
            self.name = "ppo"
        self.model = model
        self.deterministic = bool(deterministic)
        self.layout, self.history, self.assist = layout_of(model.observation_space)
        #: training settings saved by caishen.agents.train_ppo ({} for other checkpoints)
        self.meta = dict(getattr(model, "caishen_meta", None) or {})

    def act_batch(self, obs: np.ndarray, masks: np.ndarray) -> np.ndarray:
        """``int64[n]``: the policy's action for each row of ``obs`` (``[n, ...]`` in its layout)
        among the legal actions ``masks: bool[n, 145]``.  Raises ``ValueError`` for a row without
        a legal action or mismatched shapes."""
        masks = np.asarray(masks, dtype=bool)
        obs = np.asarray(obs)
        if masks.ndim != 2 or masks.shape[1] != N_ACTIONS or obs.shape[0] != masks.shape[0]:
            raise ValueError(f"expected obs [n, ...] and masks bool[n, {N_ACTIONS}], got {obs.shape} and {masks.shape}")
        if obs.shape[1:] != tuple(self.model.observation_space.shape):
            raise ValueError(f"observations of shape {obs.shape[1:]}, the policy takes "
                             f"{tuple(self.model.observation_space.shape)} ({self.layout}, history={self.history})")
        if not masks.any(axis=1).all():
            raise ValueError(f"game {int(np.flatnonzero(~masks.any(axis=1))[0])} has no legal action")
        actions, _ = self.model.predict(obs, deterministic=self.deterministic, action_masks=masks)
        return np.asarray(actions, np.int64).reshape(-1)

    def act_games(self, games) -> np.ndarray:
        """``int64[n]``: the policy's action for the seat to act in each game of ``games``
        (an :class:`caishen.envs.batched.BatchedGames` in the policy's layout; ``ValueError`` otherwise)."""
        if (games.layout, games.history) != (self.layout, self.history):
            raise ValueError(f"the games' observations are {games.layout!r} (history={games.history}), the policy "
                             f"takes {self.layout!r} (history={self.history})")
        obs = games.obs
        if self.assist:
            obs = np.concatenate([obs, assist_batch(games.states, games.player, games.rules_name)], axis=1)
        return self.act_batch(obs, games.masks)

    def act(self, observation: Observation) -> int:
        """The policy's action from ``observation`` (``game.observe()``) encoded in its layout."""
        o = self._check(observation)
        x = encode(o, layout=self.layout, history=self.history)
        if self.assist:
            x = np.concatenate([x, assist_features(o)])
        return int(self.act_batch(x[None], o.mask.astype(bool)[None])[0])


# ---------------------------------------------------------------------------------------------
# evaluation
# ---------------------------------------------------------------------------------------------
BatchPolicy = Callable[[np.ndarray, np.ndarray], np.ndarray]


def random_masked_policy(seed: int = 0) -> BatchPolicy:
    """A batch policy uniform over each row's legal actions (its own numpy generator)."""
    rng = np.random.default_rng(seed)

    def act(obs, masks):
        u = rng.random(masks.shape)
        u[~masks] = -1.0
        return u.argmax(axis=1).astype(np.int64)

    return act


def greedy_policy(vec) -> BatchPolicy:
    """The built-in greedy bot (:mod:`caishen.sim.bots.policies`) in the learning seat of ``vec``."""
    return lambda obs, masks: vec.bot_actions("greedy")


def evaluate_vs_greedy(policies: dict, rules: str = DEFAULT, *, hands: int = 20_480, n_games: int = 1024,
                       seed: int = 10_000, seat: int = 0, observation: str = "flat", history: bool = False,
                       opponents="greedy") -> dict:
    """Points per hand of each policy in seat ``seat`` against ``opponents`` on duplicate deals.

    ``policies``: name -> a :class:`PPOAgent`, a batch policy
    ``f(obs, masks) -> int64[n]`` (observations in ``observation`` /
    ``history`` layout), or the strings ``"greedy"`` / ``"random"``.
    ``hands``: counted hands per policy, split over ``n_games`` games
    (``ceil(hands / n_games)`` each).  Returns name -> ``int64[n_games, k]``
    (the seat's points in hand ``k`` of game ``i``), identical deals across
    names.  A PPOAgent is fed its own layout.  Raises ``ValueError`` for
    bad arguments (as :class:`caishen.envs.vector_env.CaishenVectorEnv`).
    """
    from caishen.envs.vector_env import CaishenVectorEnv

    if not isinstance(policies, dict) or not policies:
        raise ValueError(f"policies must be a non-empty dict name -> policy, got {policies!r}")
    if isinstance(hands, bool) or not isinstance(hands, int) or hands < 1:
        raise ValueError(f"hands must be an integer >= 1, got {hands!r}")
    n_games = min(int(n_games), hands)
    k = math.ceil(hands / n_games)
    out, seeds_ref = {}, None
    for name, pol in policies.items():
        layout, hist = (pol.layout, pol.history) if isinstance(pol, PPOAgent) else (observation, history)
        vec = CaishenVectorEnv(n_games, rules=rules, seat=seat, opponents=opponents, observation=layout,
                               history=hist, reward="points")
        if isinstance(pol, PPOAgent):
            fn = lambda obs, masks, pol=pol, vec=vec: pol.act_games(vec.games)  # noqa: E731
        elif pol == "greedy":
            fn = greedy_policy(vec)
        elif pol == "random":
            fn = random_masked_policy(seed)
        elif callable(pol):
            fn = pol
        else:
            raise ValueError(f"policy {name!r}: expected a PPOAgent, a callable, 'greedy' or 'random', got {pol!r}")
        obs, _ = vec.reset(seed=seed)
        g = vec.games
        pts = np.zeros((n_games, k), np.int64)
        wall = np.zeros((n_games, k), np.int64)
        count = np.zeros(n_games, np.int64)
        current = g.hand_seed.copy()
        while (count < k).any():
            obs, _, _, _, info = vec.step(fn(obs, vec.action_masks()))
            ended = np.flatnonzero((info["hands_ended"] > 0) & (count < k))
            pts[ended, count[ended]] = info["hand_points"][ended, g.learner[ended]]
            wall[ended, count[ended]] = current[ended]
            count[ended] += 1
            current[:] = g.hand_seed
        if seeds_ref is None:
            seeds_ref = wall
        elif not np.array_equal(seeds_ref, wall):
            raise RuntimeError(f"policy {name!r} was dealt other walls than the first policy: "
                               "the deals are not duplicate")
        out[name] = pts
    return out


def ci_table(points: dict, reference: str | None = None) -> list[dict]:
    """Rows ``{"policy", "hands", "mean", "ci95", "diff", "diff_ci95"}`` from :func:`evaluate_vs_greedy`'s
    result: the mean points per hand with a 95% normal interval over independent hands, and the paired
    per-hand difference from ``reference`` (default: the first policy)."""
    names = list(points)
    reference = names[0] if reference is None else reference
    if reference not in points:
        raise ValueError(f"reference {reference!r} is not one of {names}")
    ref = points[reference].ravel().astype(np.float64)
    rows = []
    for name in names:
        x = points[name].ravel().astype(np.float64)
        d = x - ref
        half = 1.96 * x.std(ddof=1) / math.sqrt(x.size) if x.size > 1 else float("nan")
        dhalf = 1.96 * d.std(ddof=1) / math.sqrt(d.size) if d.size > 1 else float("nan")
        rows.append({"policy": name, "hands": int(x.size), "mean": float(x.mean()), "ci95": float(half),
                     "diff": float(d.mean()), "diff_ci95": float(dhalf)})
    return rows


def format_ci_table(rows: list[dict], reference: str) -> str:
    """A Markdown table of :func:`ci_table`'s rows."""
    lines = [f"| policy | hands | mean points/hand (95% CI) | paired diff vs {reference} (95% CI) |",
             "|---|---|---|---|"]
    for r in rows:
        lines.append(f"| {r['policy']} | {r['hands']} | {r['mean']:+.3f} ± {r['ci95']:.3f} | "
                     f"{r['diff']:+.3f} ± {r['diff_ci95']:.3f} |")
    return "\n".join(lines)
