"""The files of a ``caishen learn`` run folder (:mod:`caishen.agents.exit`, its docstring's "Files"): the
checkpoint, the labels buffer, the curve; the finished iterations committed as a unit, and every field of a checkpoint
or a buffer checked before it is used (a damaged one is a one-line :class:`caishen.sim.safeio.FileError`
naming the file and the field).

Needs torch for the checkpoint (the caller passes the module in).
"""

from __future__ import annotations

import csv
import io
import math
from pathlib import Path

import numpy as np

from caishen.sim import safeio

#: the architectures ``caishen learn`` trains (``--arch``): ``mlp`` is ``action-mlp``, ``conv`` ``action-conv``
ARCHS = ("mlp", "conv")

#: most labelled states kept (the newest)
BUFFER = 200_000

#: the curve's diagnostics (:func:`caishen.agents.exit.diagnostics`), each a fraction in [0, 1]
DIAGNOSTICS = ("agree_tuned", "agree_greedy", "shanten_up")
_CURVE = ("iteration", "seconds", "hands", "learner_decisions", "labelled", "decisions_per_s", "labelled_per_s",
          "loss", "kl", "heldout_gain", "agree_start") + DIAGNOSTICS + ("aux_loss",)


#: the buffer's arrays with a column per candidate, and the value of a column no candidate fills
_WIDE = {"x": 0.0, "actions": 0, "adv": 0.0, "cand": -1, "kept": False, "deal": -1}


def _widen(rows: dict, width: int) -> dict:
    """``rows`` with each per-candidate array (:data:`_WIDE`) cut or padded to ``width`` columns."""
    out = dict(rows)
    for k, fill in _WIDE.items():
        if k in out:
            a = out[k]
            if a.shape[1] >= width:
                out[k] = a[:, :width]
            else:
                pad = np.full((a.shape[0], width - a.shape[1]) + a.shape[2:], fill, a.dtype)
                out[k] = np.concatenate([a, pad], axis=1)
    return out


class _Grown(dict):
    """A labels buffer whose arrays are the first rows of larger ones (``store``): an append copies only the
    new rows, not the whole buffer (0.6 CPU s an iteration at 100,000 states before)."""

    def __init__(self, views: dict, store: dict):
        super().__init__(views)
        self.store = store


def _append(buf: dict, new: dict, m: int) -> dict:
    """The buffer with the first ``m`` rows of ``new`` appended (the newest :data:`BUFFER` kept).  The
    per-candidate arrays keep only as many columns as the most candidates of a stored state (at least 2;
    the labels' :data:`~caishen.sim.bots.learned.MAX_CANDIDATES` columns are mostly empty: a turn has at most
    14 discards), and a conv buffer drops the context (its net does not read it): the MLP's
    buffer of a 25-minute run (73,839 states) takes 207 MB, not 499 MB, in memory and in its writes of
    ``buffer.npz``.  The arrays are views of a store with room to grow (:class:`_Grown`), so appending
    costs the new rows only, until the store is full or wider rows come."""
    new = {k: v[:m] for k, v in new.items() if not (k == "ctx" and "kinds" in new)}
    rows = 0 if buf is None else len(buf["n"])
    width = max(2, int(new["n"].max()) if m else 0, int(buf["n"].max()) if rows else 0)
    new = _widen(new, width)
    store = getattr(buf, "store", None)
    cap = 0 if store is None or set(store) != set(new) else store["n"].shape[0]
    fits = cap > 0 and (cap == BUFFER >= m or rows + m <= cap <= BUFFER)
    if not fits or store["adv"].shape[1] != width:
        old = {} if buf is None else _widen({k: v for k, v in buf.items() if k in new}, width)
        whole = {k: np.concatenate([old[k], new[k]])[-BUFFER:] if old else new[k][-BUFFER:] for k in new}
        total = len(whole["n"])
        cap = min(BUFFER, max(4096, 2 * total))
        store = {k: np.empty((cap, *v.shape[1:]), v.dtype) for k, v in whole.items()}
        for k, v in whole.items():
            store[k][:total] = v
        return _Grown({k: v[:total] for k, v in store.items()}, store)
    drop = max(0, rows + m - cap)  # a full store (BUFFER rows): the oldest make room
    for k, v in store.items():
        if drop:
            v[:rows - drop] = v[drop:rows]  # overlapping: numpy copies through a buffer
        v[rows - drop:rows - drop + m] = new[k]
    return _Grown({k: v[:rows - drop + m] for k, v in store.items()}, store)


#: the files of a run folder (module docstring, "Files"): the checkpoint, the labels buffer and the next
#: iteration's buffer before its checkpoint commits it
CHECKPOINT, BUFFER_FILE, BUFFER_NEXT = "checkpoint.pt", "buffer.npz", "buffer.next.npz"
#: bytes of a checkpoint at most (a net of the largest shapes with its Adam state and curve: a few MB) and of a
#: labels buffer (BUFFER states of the widest rows)
MAX_CHECKPOINT = 64 << 20
MAX_BUFFER_FILE = 8 << 30
#: the state fields of a checkpoint that count (iterations, hands, decisions, labelled states)
_COUNTS = ("iteration", "hands", "decisions", "labelled")
_REPAIR = "move it aside to start again, or restore it from a backup"


def _curve_text(rows: list) -> str:
    """``curve.csv``: the header :data:`_CURVE` and one row per iteration."""
    buf = io.StringIO()
    w = csv.writer(buf)
    w.writerow(_CURVE)
    w.writerows(rows)
    return buf.getvalue()


def _new_model(torch, arch: str, shape, rules: str):
    from caishen.agents.learned_torch import ActionConv, ActionMLP

    return ActionConv(tuple(shape), rules) if arch == "conv" else ActionMLP(tuple(shape), rules)



def _commit(torch, out: Path, model, model0, opt, state: dict, buf: dict, gen, arch: str, heads=None) -> None:
    """Commit an iteration as one unit: the labels go to ``buffer.next.npz`` (tagged with the iteration),
    then the checkpoint (net, start, optimiser, counters, the curve's rows, the batch stream; ``heads``: the
    oracle heads and their optimiser, training only, as ``heads`` and ``opt_heads``) replaces the
    old one -- the commit point -- then the labels become ``buffer.npz`` and ``curve.csv`` is rewritten
    from the checkpoint.  Every file is written atomically (:func:`caishen.sim.safeio.atomic_write_with`):
    a crash or a full disk at any write leaves the last committed iteration, which the rerun resumes to the
    same rows (:func:`_read_buffer` finishes or drops an uncommitted buffer)."""
    tagged = {**buf, "iteration": np.int64(state["iteration"])}
    safeio.atomic_write_with(out / BUFFER_NEXT, lambda f: np.savez(f, **tagged))
    shape = ({"channels": list(model.channels)} if arch == "conv"
             else {"hidden": [model.fc1.out_features, model.fc2.out_features]})
    ck = {"model": model.state_dict(), "model0": model0.state_dict(), "opt": opt.state_dict(), "state": state,
          "arch": arch, "gen": gen.get_state(), **shape}
    if heads is not None:
        ck.update(heads=heads[0].state_dict(), opt_heads=heads[1].state_dict())
    data = io.BytesIO()  # a few MB; torch.save into the file itself would turn a full disk into a RuntimeError
    torch.save(ck, data)
    safeio.atomic_write(out / CHECKPOINT, data.getvalue())
    try:
        safeio.commit(out / BUFFER_NEXT, out / BUFFER_FILE)
    except OSError as e:
        raise safeio.os_error(out / BUFFER_FILE, e, "write") from None
    safeio.atomic_write(out / "curve.csv", _curve_text(state["curve"]))


def _bad(path, field: str, why: str) -> safeio.FileError:
    return safeio.FileError(path, f"field {field!r} {why}: not a checkpoint caishen learn wrote; {_REPAIR}")


def _check_zip(path, data: bytes) -> None:
    """A torch checkpoint is a zip of stored records: refuse another file, compressed records (a small file
    that would unpack to gigabytes) or records larger than the file, before torch reads any of it."""
    import zipfile

    try:
        infos = zipfile.ZipFile(io.BytesIO(data)).infolist()
    except (zipfile.BadZipFile, OSError, ValueError, EOFError) as e:
        raise safeio.FileError(path, f"is not a checkpoint caishen learn wrote (not a torch zip: {str(e)[:60]}); "
                                     f"{_REPAIR}") from None
    for i in infos:
        if i.compress_type != zipfile.ZIP_STORED or i.file_size > len(data):
            raise safeio.FileError(path, f"record {i.filename[:60]!r} is compressed or larger than the file: not a "
                                         f"checkpoint caishen learn wrote; {_REPAIR}")


def _check_tensors(path, field: str, got, want: dict) -> None:
    """``got`` must be a state dict of exactly ``want``'s names and shapes, floating point and finite."""
    if not isinstance(got, dict) or set(got) != set(want):
        held = sorted(map(str, got))[:6] if isinstance(got, dict) else type(got).__name__
        raise _bad(path, field, f"holds the tensors {held}, the net of its shape has {sorted(want)[:6]}")
    for k, t in got.items():
        if not (hasattr(t, "shape") and tuple(t.shape) == tuple(want[k].shape) and t.is_floating_point()):
            raise _bad(path, f"{field}.{k}", f"is {getattr(t, 'dtype', type(t).__name__)}"
                                             f"{list(getattr(t, 'shape', []))}, expected {list(want[k].shape)}")
        if not bool(t.isfinite().all()):
            raise _bad(path, f"{field}.{k}", "holds a NaN or an infinity")


def _read_checkpoint(torch, out: Path, rules: str, arch: str, lr: float, dev, seed: int):
    """``(model, model0, opt, state, gen, heads)`` of ``out/checkpoint.pt`` (``heads``: the oracle heads'
    ``(state dict, optimiser state)`` as stored, checked by :func:`_load_heads`; None in a checkpoint from
    before them), every field checked before it is used:
    the file's size and records (:func:`_check_zip`), then torch's tensor-only loader, the counters, the rule
    set and ``arch`` (a ``ValueError`` naming another), the net's shape (its bounds), every tensor's name,
    shape and finiteness, the optimiser's state, the curve's rows and the batch stream.  A damaged or
    foreign checkpoint is a :class:`caishen.sim.safeio.FileError` naming the file and the field."""
    from caishen.sim.bots import learned

    path = out / CHECKPOINT
    data = safeio.read_bytes(path, MAX_CHECKPOINT, what="a caishen learn checkpoint")
    _check_zip(path, data)
    try:
        ck = torch.load(io.BytesIO(data), weights_only=True, map_location="cpu")  # a run resumes on any device
    except Exception as e:  # noqa: BLE001 - torch raises many types for a damaged file
        why = str(e).strip().splitlines()[0][:80] if str(e).strip() else type(e).__name__
        raise safeio.FileError(path, f"is not a checkpoint caishen learn wrote ({why}); {_REPAIR}") from None
    if not isinstance(ck, dict) or not isinstance(ck.get("state"), dict):
        raise _bad(path, "state", "is missing")
    st = dict(ck["state"])
    for k in _COUNTS:
        if isinstance(st.get(k), bool) or not isinstance(st.get(k), int) or not 0 <= st[k] <= 10**15:
            raise _bad(path, f"state.{k}", f"is {str(st.get(k))[:40]}, not a count")
    for f in ("seconds", "cpu_seconds"):  # CPU seconds: 0 in a checkpoint from before the CPU budget
        sec = st.setdefault(f, 0.0) if f == "cpu_seconds" else st.get(f)
        if isinstance(sec, bool) or not isinstance(sec, (int, float)) or not math.isfinite(sec) or sec < 0:
            raise _bad(path, f"state.{f}", f"is {str(sec)[:40]}, not a number of seconds")
    if not isinstance(st.get("rules"), str):
        raise _bad(path, "state.rules", "is not a rule set's name")
    if st["rules"] != rules:
        raise ValueError(f"{path}: a checkpoint of rule set {st['rules'][:40]!r}, not {rules!r}")
    ck_arch = ck.get("arch", "mlp")  # checkpoints from before --arch are the MLP's
    if ck_arch not in ARCHS:
        raise _bad(path, "arch", f"is {str(ck_arch)[:40]!r}, not one of {', '.join(ARCHS)}")
    if ck_arch != arch:
        raise ValueError(f"{path}: a checkpoint of --arch {ck_arch}, not {arch} (resume with --arch "
                         f"{ck_arch} or use another --out)")
    key, n_max, lengths = (("channels", learned.MAX_CHANNELS, (1, 2)) if arch == "conv"
                           else ("hidden", learned.MAX_HIDDEN, (2,)))
    shape = ck.get(key)
    if not (isinstance(shape, (list, tuple)) and len(shape) in lengths
            and all(isinstance(h, int) and not isinstance(h, bool) and 1 <= h <= n_max for h in shape)):
        raise _bad(path, key, f"is {str(shape)[:40]}, not {' or '.join(map(str, lengths))} sizes in 1..{n_max}")
    model, model0 = _new_model(torch, arch, shape, rules), _new_model(torch, arch, shape, rules)
    for field, net in (("model", model), ("model0", model0)):
        _check_tensors(path, field, ck.get(field), net.state_dict())
        net.load_state_dict(ck[field])
    model, model0 = model.to(dev), model0.to(dev)
    opt = torch.optim.Adam(model.parameters(), lr=lr)
    try:
        opt.load_state_dict(ck["opt"])
    except (KeyError, ValueError, TypeError, RuntimeError, IndexError, AttributeError) as e:
        raise _bad(path, "opt", f"is not this net's Adam state ({str(e)[:60]})") from None
    for p_state in opt.state.values():
        if not all(bool(v.isfinite().all()) for v in p_state.values() if hasattr(v, "isfinite")):
            raise _bad(path, "opt", "holds a NaN or an infinity")
    curve = st.get("curve")
    if curve is None:  # a checkpoint from before the curve was committed with it: the rows of curve.csv
        curve = _legacy_curve(out, st["iteration"])
    else:
        if isinstance(curve, list):  # rows from before the aux_loss column: NaN there
            curve = [_pad_row(r) for r in curve]
        if not (isinstance(curve, list) and len(curve) == st["iteration"]
                and all(isinstance(r, list) and len(r) == len(_CURVE) and r[0] == i + 1
                        and all(isinstance(v, (int, float)) and not isinstance(v, bool) for v in r)
                        for i, r in enumerate(curve))):
            raise _bad(path, "state.curve", f"is not {st['iteration']} rows of the curve's {len(_CURVE)} columns")
    st["curve"] = curve
    gen = torch.Generator()
    if ck.get("gen") is None:  # from before the batch stream was kept: a new one (the run stays valid)
        gen.manual_seed(seed)
    else:
        try:
            gen.set_state(ck["gen"])
        except (TypeError, RuntimeError, ValueError) as e:
            raise _bad(path, "gen", f"is not a torch generator's state ({str(e)[:60]})") from None
    heads = (ck["heads"], ck.get("opt_heads")) if "heads" in ck else None
    return model, model0, opt, st, gen, heads


def _pad_row(r):
    """A curve row of an older run, without the last column (``aux_loss``), padded with NaN."""
    return [*r, math.nan] if isinstance(r, list) and len(r) == len(_CURVE) - 1 else r


def _load_heads(torch, path, heads, stored) -> None:
    """Load the oracle heads ``heads = (module, its Adam)`` from a checkpoint's ``stored = (state dict,
    optimiser state)``, each checked (names, shapes, finite): a damaged one is a
    :class:`caishen.sim.safeio.FileError` naming the field."""
    module, opt = heads
    _check_tensors(path, "heads", stored[0], module.state_dict())
    module.load_state_dict(stored[0])
    try:
        opt.load_state_dict(stored[1])
    except (KeyError, ValueError, TypeError, RuntimeError, IndexError, AttributeError) as e:
        raise _bad(path, "opt_heads", f"is not the oracle heads' Adam state ({str(e)[:60]})") from None
    for p_state in opt.state.values():
        if not all(bool(v.isfinite().all()) for v in p_state.values() if hasattr(v, "isfinite")):
            raise _bad(path, "opt_heads", "holds a NaN or an infinity")


def _legacy_curve(out: Path, iterations: int) -> list:
    """The curve rows 1..``iterations`` of an older run's ``curve.csv`` (its first row of each; an iteration
    that a crash repeated there appears once), as numbers."""
    try:
        text = safeio.read_text(out / "curve.csv", 64 << 20, what="a curve")
    except (FileNotFoundError, ValueError):
        return []
    rows: dict[int, list] = {}
    for r in list(csv.reader(io.StringIO(text)))[1:]:
        try:
            vals = [int(v) if v.lstrip("-").isdigit() else float(v) for v in r]
        except ValueError:
            continue
        vals = _pad_row(vals)
        if len(vals) == len(_CURVE) and isinstance(vals[0], int) and 1 <= vals[0] <= iterations:
            rows.setdefault(vals[0], vals)
    return [rows[i] for i in range(1, iterations + 1) if i in rows]


#: a buffer's arrays: (dtype, trailing shape; None: the per-candidate width) for every learner, then the
#: MLP's and the conv's own
_BUFFER_ARRAYS = {"n": (np.int64, ()), "x": (np.float64, (None, 17)), "adv": (np.float64, (None,)),
                  "actions": (np.int64, (None,)), "base": (np.int64, ()), "claim": (np.bool_, ()),
                  "kept": (np.bool_, (None,)), "deal": (np.int8, (None,)), "ready": (np.int8, (3,))}
_BUFFER_MLP = {"ctx": (np.float64, (83,))}
_BUFFER_CONV = {"kinds": (np.uint8, (15, 34)), "cand": (np.int8, (None,))}


def _read_buffer(out: Path, state: dict, conv: bool) -> dict | None:
    """The labels of the checkpoint's iteration: ``buffer.next.npz`` when the checkpoint committed it (the
    rename was cut short; finished now), else ``buffer.npz`` (an uncommitted ``buffer.next.npz`` is
    dropped).  Read with every member's header, dtype, shape and values checked
    (:func:`caishen.sim.safeio.read_npz`), and its rows the checkpoint's count; a buffer of another
    iteration, or none where the checkpoint has labels, is a :class:`caishen.sim.safeio.FileError`."""
    k = state["iteration"]

    def load(path):
        arrays = safeio.read_npz(path, MAX_BUFFER_FILE, what="a labels buffer", finite=True)
        it = arrays.pop("iteration", None)
        return (None if it is None or it.shape != () else int(it)), arrays

    nxt, main = out / BUFFER_NEXT, out / BUFFER_FILE
    if nxt.exists():
        it, arrays = load(nxt)
        if it == k:  # the checkpoint committed these labels; their rename was cut short
            try:
                safeio.commit(nxt, main)
            except OSError as e:
                raise safeio.os_error(main, e, "write") from None
            return _checked_buffer(main, arrays, state, conv)
        safeio.discard(nxt)
    if not main.exists():
        if k == 0:
            return None
        raise safeio.FileError(main, f"is missing: the checkpoint is at iteration {k} and its labels are gone; "
                                     "restore it, or start again with a new --out")
    it, arrays = load(main)
    if it is not None and it != k:
        raise safeio.FileError(main, f"holds the labels of iteration {it}, the checkpoint is at iteration {k}: "
                                     f"not this run's buffer; {_REPAIR}")
    return _checked_buffer(main, arrays, state, conv)


def _checked_buffer(path, arrays: dict, state: dict, conv: bool) -> dict:
    """``arrays`` if they are a labels buffer of the run (:data:`_BUFFER_ARRAYS`, the learner's own, rows
    ``min(labelled, BUFFER)``, one width), else a :class:`caishen.sim.safeio.FileError` naming the member."""
    from caishen.sim.bots.learned import MAX_CANDIDATES

    want = {**_BUFFER_ARRAYS, **(_BUFFER_CONV if conv else _BUFFER_MLP)}
    if "kept" not in arrays and "adv" in arrays and "n" in arrays and arrays["adv"].ndim == 2:
        # a buffer from before pruning: every candidate of a state was rolled out
        arrays["kept"] = np.arange(arrays["adv"].shape[1])[None, :] < arrays["n"].reshape(-1, 1)
    if "deal" not in arrays and "ready" not in arrays and "adv" in arrays and arrays["adv"].ndim == 2:
        # a buffer from before the oracle targets: none
        arrays["deal"] = np.full(arrays["adv"].shape, -1, np.int8)
        arrays["ready"] = np.full((arrays["adv"].shape[0], 3), -1, np.int8)
    if set(arrays) != set(want):
        raise safeio.FileError(path, f"holds the members {sorted(arrays)[:10]}, a labels buffer of this learner "
                                     f"{sorted(want)}; {_REPAIR}")
    rows = min(state["labelled"], BUFFER)
    width = arrays["adv"].shape[1] if arrays["adv"].ndim == 2 else -1
    if not 0 <= width <= MAX_CANDIDATES:
        raise safeio.FileError(path, f"member 'adv' has shape {list(arrays['adv'].shape)}; {_REPAIR}")
    for k, (dtype, tail) in want.items():
        shape = (rows, *(width if d is None else d for d in tail))
        if arrays[k].dtype != dtype or arrays[k].shape != shape:
            raise safeio.FileError(path, f"member {k!r} is {arrays[k].dtype}{list(arrays[k].shape)}, expected "
                                         f"{np.dtype(dtype)}{list(shape)} (the checkpoint's {rows} labelled "
                                         f"states); {_REPAIR}")
    n, base = arrays["n"], arrays["base"]
    if rows and not ((n >= 0).all() and (n <= width).all() and (base >= 0).all() and (base < np.maximum(n, 1)).all()):
        raise safeio.FileError(path, f"member 'n' or 'base' holds a count outside 0..{width}; {_REPAIR}")
    kept = arrays["kept"]
    past = ~(np.arange(width)[None, :] < n[:, None])
    if rows and not (kept[np.arange(rows), base].all() and not (kept & past).any()):
        raise safeio.FileError(path, f"member 'kept' leaves out a state's own choice or keeps a candidate past its "
                                     f"count; {_REPAIR}")
    for k in ("deal", "ready"):
        if rows and not ((arrays[k] >= -1) & (arrays[k] <= 1)).all():
            raise safeio.FileError(path, f"member {k!r} holds a value outside -1..1 (the oracle targets); {_REPAIR}")
    return arrays
