"""Safe file helpers: atomic writes, reads that cannot hang or follow a planted link, one-line errors.

Every file the tools write (run.json, sweep.json, study.json, the summaries,
the figures, the report page, weights files, the hand-table cache) and every
file they read from a run directory or from a path the user gives goes
through these helpers instead of code of its own (the chunk files and the
manifest use the same primitives, :mod:`caishen.sim.selfplay.manifest`):

- :func:`atomic_write` (the one safe-write path; :func:`atomic_write_with`
  for a writer that streams its bytes, :func:`commit` its last step for the
  chunk files): the bytes
  go to a new temporary file beside the target (``.NAME.<pid>.<random>.tmp``,
  opened ``O_CREAT | O_EXCL | O_NOFOLLOW``: a planted file or link at that
  name is never written through), which is fsynced, renamed onto the target
  and the directory is fsynced.  The target must be a regular file or
  absent, in a directory (:func:`check_target`, checked before the bytes are
  written and again just before the rename): a device (``/dev/null``,
  ``/dev/full``), a FIFO, a socket, a directory or a symbolic link there is
  refused with a :class:`FileError` naming it, never replaced (in a folder
  the caller owns and holds -- a run directory under its lock, the
  hand-table cache: ``owned`` -- such an entry is damage to one of its own
  files and is removed, the device itself untouched).  A crash
  leaves the old file or the new one, never a part, and the temporary files
  of writers that died (their pid is gone) are removed by the next write of
  the same file (:func:`clean_temps`) or by the next run that locks the
  directory (:class:`DirLock`); a full disk (``ENOSPC``), a read-only disk
  (``EROFS``) or a missing permission is a :class:`FileError` naming the
  file, and the temporary file is removed.
- :func:`open_regular`, :func:`read_bytes`, :func:`read_text`,
  :func:`read_json`: a read opens with ``O_NONBLOCK`` (a FIFO cannot block
  the open) and, for files inside a run directory, ``O_NOFOLLOW``; anything
  but a regular file (a FIFO, ``/dev/zero``, a directory, a link) is
  refused, and so is a file larger than the caller's bound (a weights file,
  a run.json), which is read at most that far.  JSON must be strict JSON
  (no ``NaN`` unless the reader names such values itself), nested at most
  as deep as Python's parser allows (deeper is an error, not a
  ``RecursionError``), and an object.
- :func:`open_lock` and the :func:`nofollow` / :func:`create_new` openers
  (the run lock, the manifest's appends, the chunk files): never through a
  link, the lock never truncated; :class:`DirLock`, the lock a writer
  holds on its directory (every tool's directory is claimed with it, and
  with :func:`refuse_links`, by :mod:`caishen.sim.selfplay.rundir`, the one
  module that creates and resumes run directories).
- :func:`read_npz`: the arrays of an ``.npz`` file from elsewhere (a
  learned bot, a training buffer), each member's ``.npy`` header checked
  before anything is allocated: a plain numeric dtype, a shape whose bytes
  are exactly the member's, members that unpack to at most the caller's
  bound, and (``finite``) no NaN or infinity; a refusal names the file and
  the member.
- :func:`find_links` / :func:`refuse_links`: a run directory that holds
  symbolic links is refused by the writers (:mod:`caishen.sim.selfplay.rundir`),
  naming them.
- :func:`make_dir`: ``mkdir -p`` whose failure (a file on the path, a
  read-only disk, ``/proc``) is a :class:`FileError` naming the directory.

:class:`FileError` is a ``ValueError`` (bad input: the command line exits
with status 2 and its one line); ``errno`` holds the OS error number when
an OS call failed.
"""

from __future__ import annotations

import json
import math
import os
import re
import secrets
import stat
from collections.abc import Callable
from pathlib import Path

#: ``O_NOFOLLOW`` where the platform has it (POSIX), else 0
O_NOFOLLOW = getattr(os, "O_NOFOLLOW", 0)
O_NONBLOCK = getattr(os, "O_NONBLOCK", 0)
O_CLOEXEC = getattr(os, "O_CLOEXEC", 0)
#: how deep :func:`find_links` looks below a run directory (RUN/points/p000/chunks/FILE)
LINK_DEPTH = 4


class FileError(ValueError):
    """A file or directory the tools read or write is unusable: one line naming it and saying why.

    ``path``: the file; ``errno``: the OS error number when an OS call failed
    (``ENOSPC``, ``EROFS``, ``EACCES``, ...), else None.
    """

    def __init__(self, path, why: str, errno: int | None = None):
        self.path = str(path)
        self.errno = errno
        super().__init__(f"{self.path!r}: {why}")


def os_error(path, e: OSError, doing: str) -> FileError:
    """A :class:`FileError` for an ``OSError`` raised while ``doing`` (``"write"``, ``"read"``) ``path``."""
    what = os.strerror(e.errno) if e.errno else str(e)
    return FileError(path, f"cannot {doing} it ({what})", e.errno)


def file_kind(mode: int) -> str:
    """What a file of ``st_mode`` ``mode`` is, for a message: ``"a FIFO"``, ``"a directory"``, ..."""
    for test, name in ((stat.S_ISFIFO, "a FIFO"), (stat.S_ISCHR, "a character device"),
                       (stat.S_ISBLK, "a block device"), (stat.S_ISDIR, "a directory"),
                       (stat.S_ISSOCK, "a socket"), (stat.S_ISLNK, "a symbolic link")):
        if test(mode):
            return name
    return "not a regular file"


# ---------------------------------------------------------------------------
# writing
# ---------------------------------------------------------------------------
def temp_path(path: str | os.PathLike) -> Path:
    """A fresh temporary name beside ``path``: ``.NAME.<pid>.<8 hex>.tmp``."""
    p = Path(path)
    return p.with_name(f".{p.name}.{os.getpid()}.{secrets.token_hex(4)}.tmp")


#: the temporary names of :func:`temp_path`: ``.NAME.<pid>.<8 hex>.tmp`` (group 1 the target's name, 2 the pid)
TEMP_NAME = re.compile(r"\.(.+)\.([0-9]{1,10})\.[0-9a-f]{8}\.tmp")


def _alive(pid: int) -> bool:
    """True if a process ``pid`` exists (a temporary file it names may still be in use)."""
    if pid == os.getpid():
        return True
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except (PermissionError, OverflowError, OSError):
        return True  # another user's process, or not a pid we can ask about: leave its file
    return True


def clean_temps(folder: str | os.PathLike, name: str | None = None) -> int:
    """Remove the temporary files (:data:`TEMP_NAME`, regular files) that writers which died left in
    ``folder`` -- those of target ``name`` only, or all (None) -- skipping any whose writer's pid is still
    alive.  Returns how many were removed; a folder that cannot be listed removes none."""
    n = 0
    try:
        entries = list(os.scandir(folder))
    except OSError:
        return 0
    for e in entries:
        m = TEMP_NAME.fullmatch(e.name)
        if m is None or (name is not None and m.group(1) != name):
            continue
        try:
            if e.is_file(follow_symlinks=False) and not _alive(int(m.group(2))):
                os.unlink(e.path)
                n += 1
        except OSError:
            pass
    return n


def check_target(path: str | os.PathLike, what: str = "", owned: bool = False) -> Path:
    """``path`` if a writer may put a file there: absent or a regular file (never a link), in a directory.

    Raises :class:`FileError` naming ``path`` for a device (``/dev/null``), a FIFO, a socket, a directory
    or a symbolic link at ``path`` -- the tools replace only their own regular files -- and for a parent
    that is no directory.  ``what`` names the file in the message (``"the replay page"``).  ``owned``: the
    caller owns the folder and holds it (a run directory under its lock, the hand-table cache), so a FIFO,
    socket or device entry at ``path`` is damage to one of its own files: the entry is removed (the device
    itself is untouched) and the file is written in its place, as a damaged chunk is replayed; a link or a
    directory is still refused.
    """
    p = Path(path)
    label = f" ({what})" if what else ""
    try:
        mode = os.lstat(p).st_mode
    except FileNotFoundError:
        mode = None
    except OSError as e:
        raise os_error(p, e, "write") from None
    if mode is not None and owned and not (stat.S_ISREG(mode) or stat.S_ISDIR(mode) or stat.S_ISLNK(mode)):
        try:
            os.unlink(p)
        except OSError as e:
            raise os_error(p, e, "remove the damaged entry") from None
        mode = None
    if mode is not None and not stat.S_ISREG(mode):
        raise FileError(p, f"is {file_kind(mode)}{label}; the tools write only regular files and never replace "
                           "anything else: give another file name")
    parent = p.parent
    if not parent.is_dir():
        raise FileError(p, f"cannot be written{label}: {str(parent)!r} is not a directory")
    return p


def create_new(path, flags: int) -> int:
    """``open(..., opener=create_new)``: create a new file, never an existing one, never through a link."""
    return os.open(path, flags | os.O_CREAT | os.O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0o644)


def nofollow(path, flags: int) -> int:
    """``open(..., opener=nofollow)``: open without following a link at ``path`` (``ELOOP`` then)."""
    return os.open(path, flags | O_NOFOLLOW | O_CLOEXEC, 0o644)


def sync(f) -> None:
    """Flush and fsync an open file."""
    f.flush()
    os.fsync(f.fileno())


def fsync_dir(path: str | os.PathLike) -> None:
    """fsync a directory so that a rename inside it survives a power cut (POSIX; a no-op elsewhere)."""
    try:
        fd = os.open(path, os.O_RDONLY | O_CLOEXEC)
    except OSError:
        return
    try:
        os.fsync(fd)
    except OSError:
        pass
    finally:
        os.close(fd)


def commit(tmp: str | os.PathLike, path: str | os.PathLike, owned: bool = False) -> None:
    """Rename the fsynced temporary file ``tmp`` onto ``path`` and fsync the directory; :class:`FileError`
    (nothing renamed) when ``path`` is no longer a place for a regular file (:func:`check_target`, with
    ``owned``)."""
    check_target(path, owned=owned)
    os.replace(tmp, path)
    fsync_dir(Path(path).parent)


def discard(tmp: str | os.PathLike) -> None:
    """Remove a temporary file if it is still there (an error removing it is left to the next run's cleanup)."""
    try:
        os.unlink(tmp)
    except OSError:
        pass


def atomic_write(path: str | os.PathLike, data: bytes | str, owned: bool = False) -> None:
    """Write ``data`` (``str``: UTF-8) to ``path`` atomically (module docstring).

    Raises :class:`FileError` naming ``path`` when it cannot be written, or when something other than a
    regular file is there (a device, a FIFO, a socket, a directory, a link: :func:`check_target`; with
    ``owned``, a folder the caller holds, a FIFO, socket or device entry is replaced).
    """
    if isinstance(data, str):
        data = data.encode("utf-8")
    atomic_write_with(path, lambda f: f.write(data), owned)


def atomic_write_with(path: str | os.PathLike, write: Callable, owned: bool = False) -> None:
    """:func:`atomic_write` of what ``write(f)`` writes into the open binary file ``f`` (``np.savez``,
    ``torch.save``: a large file is streamed, never held in memory twice).  Errors as :func:`atomic_write`."""
    path = check_target(path, owned=owned)
    clean_temps(path.parent, path.name)
    tmp = temp_path(path)
    try:
        with open(tmp, "wb", opener=create_new) as f:
            write(f)
            sync(f)
        commit(tmp, path, owned)
    except OSError as e:
        raise os_error(path, e, "write") from None
    finally:
        discard(tmp)


def strict_json(obj):
    """``obj`` with every non-finite float (NaN, +-inf: not JSON) replaced by None, recursively."""
    if isinstance(obj, float):
        return obj if math.isfinite(obj) else None
    if isinstance(obj, dict):
        return {k: strict_json(v) for k, v in obj.items()}
    if isinstance(obj, (list, tuple)):
        return [strict_json(v) for v in obj]
    if hasattr(obj, "item") and callable(obj.item):  # a numpy scalar
        return strict_json(obj.item())
    return obj


def json_text(obj, indent: int | None = 2) -> str:
    """Strict JSON text of ``obj`` (non-finite floats as null) with a final newline."""
    return json.dumps(strict_json(obj), indent=indent, ensure_ascii=False, allow_nan=False) + "\n"


def write_json(path: str | os.PathLike, obj) -> None:
    """:func:`atomic_write` of :func:`json_text` of ``obj``."""
    atomic_write(path, json_text(obj))


def make_dir(path: str | os.PathLike) -> Path:
    """Create ``path`` and its parents (no error if it is a directory already); :class:`FileError` naming it
    when it cannot be (a file on the path, a read-only disk, no permission)."""
    path = Path(path)
    try:
        path.mkdir(parents=True, exist_ok=True)
    except FileExistsError:
        raise FileError(path, "exists and is not a directory") from None
    except OSError as e:
        raise os_error(path, e, "create the directory") from None
    return path


def open_lock(path: str | os.PathLike) -> int:
    """A file descriptor of the lock file ``path`` (created, never truncated, never through a link)."""
    try:
        fd = os.open(path, os.O_RDWR | os.O_CREAT | O_NOFOLLOW | O_CLOEXEC | O_NONBLOCK, 0o644)
    except OSError as e:
        if os.path.islink(path):
            raise FileError(path, "is a symbolic link; the lock is never taken through a link (remove it)") from None
        raise os_error(path, e, "open the lock file") from None
    mode = os.fstat(fd).st_mode
    if not stat.S_ISREG(mode):
        os.close(fd)
        raise FileError(path, f"is {file_kind(mode)}, not a lock file (remove it)")
    return fd


# ---------------------------------------------------------------------------
# reading
# ---------------------------------------------------------------------------
class DirLock:
    """An exclusive OS lock on ``DIR/.lock`` for a run, a ladder or another writer that owns ``DIR``
    (released when the process dies; never taken through a link, never truncating: :func:`open_lock`).
    ``what`` names the writer in the error.  Raises ``ValueError`` if another process holds it.  Once
    taken, the temporary files that killed writers left in ``DIR`` are removed (:func:`clean_temps`)."""

    NAME = ".lock"

    def __init__(self, run_dir: Path, what: str = "simulation"):
        self.path = Path(run_dir) / self.NAME
        self.what = what
        self.fd = None

    def __enter__(self):
        try:
            import fcntl
        except ImportError:  # not POSIX: no lock
            return self
        self.fd = open_lock(self.path)
        try:
            fcntl.flock(self.fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError:
            os.close(self.fd)
            self.fd = None
            raise ValueError(f"{str(self.path.parent)!r} is in use by another running {self.what}") from None
        clean_temps(self.path.parent)  # the temporary files of a writer killed here before
        return self

    def __exit__(self, *exc):
        if self.fd is not None:
            os.close(self.fd)
            self.fd = None


def open_regular(path: str | os.PathLike, follow: bool = False):
    """``path`` opened for binary reading, refusing anything but a regular file.

    ``follow=False`` (files inside a run directory): a symbolic link is
    refused too.  The open never blocks (``O_NONBLOCK``: a FIFO).  Raises
    ``FileNotFoundError`` for a missing file, :class:`FileError` for the rest.
    """
    flags = os.O_RDONLY | O_NONBLOCK | O_CLOEXEC | (0 if follow else O_NOFOLLOW)
    try:
        fd = os.open(path, flags)
    except FileNotFoundError:
        raise
    except OSError as e:
        if not follow and os.path.islink(path):
            raise FileError(path, "is a symbolic link; files of a run are never read through a link") from None
        raise os_error(path, e, "read") from None
    mode = os.fstat(fd).st_mode
    if not stat.S_ISREG(mode):
        os.close(fd)
        raise FileError(path, f"is {file_kind(mode)}, not a regular file")
    if O_NONBLOCK:
        import fcntl

        fcntl.fcntl(fd, fcntl.F_SETFL, fcntl.fcntl(fd, fcntl.F_GETFL) & ~O_NONBLOCK)
    return os.fdopen(fd, "rb")


def read_bytes(path: str | os.PathLike, limit: int, follow: bool = False, what: str = "file") -> bytes:
    """The bytes of the regular file ``path`` (:func:`open_regular`), at most ``limit`` of them.

    Raises :class:`FileError` when it is larger (``what`` names what it
    should be: "a weights file"), ``FileNotFoundError`` when it is missing.
    """
    with open_regular(path, follow) as f:
        size = os.fstat(f.fileno()).st_size
        if size > limit:
            raise FileError(path, f"is {size:,} bytes; {what} holds at most {limit:,}")
        try:
            data = f.read(limit + 1)
        except OSError as e:
            raise os_error(path, e, "read") from None
    if len(data) > limit:
        raise FileError(path, f"holds more than {limit:,} bytes; {what} holds at most {limit:,}")
    return data


def read_text(path: str | os.PathLike, limit: int, follow: bool = False, what: str = "file") -> str:
    """:func:`read_bytes` decoded as UTF-8 (:class:`FileError` if it is not UTF-8 text)."""
    data = read_bytes(path, limit, follow, what)
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as e:
        raise FileError(path, f"is not UTF-8 text ({e.reason} at byte {e.start})") from None


def _no_constant(name: str):
    raise ValueError(f"{name} is not a JSON number")


def parse_json(text: str | bytes, constants: bool = False):
    """Strict JSON (no NaN / Infinity unless ``constants``: a reader that names a non-finite value
    itself); ``ValueError`` for bad JSON or nesting too deep to parse."""
    try:
        return json.loads(text, parse_constant=None if constants else _no_constant)
    except RecursionError:
        raise ValueError("nested too deeply") from None
    except json.JSONDecodeError as e:
        raise ValueError(f"{e.msg}, line {e.lineno} column {e.colno}") from None


def read_json(path: str | os.PathLike, limit: int, follow: bool = False, what: str = "file",
              constants: bool = False):
    """The JSON object in ``path`` (:func:`read_text`, :func:`parse_json`); :class:`FileError` if it is
    not one."""
    text = read_text(path, limit, follow, what)
    try:
        obj = parse_json(text, constants)
    except ValueError as e:
        raise FileError(path, f"is not JSON ({e})") from None
    if not isinstance(obj, dict):
        raise FileError(path, f"holds a JSON {type(obj).__name__}, not an object")
    return obj


# ---------------------------------------------------------------------------
# .npz files from elsewhere
# ---------------------------------------------------------------------------
#: members of an .npz file at most (a learned bot has about ten, a training buffer about a dozen)
MAX_NPZ_MEMBERS = 64
#: dimensions of one array at most
MAX_NDIM = 8


def _npy_header(f) -> tuple:
    """``(shape, fortran_order, dtype)`` of the ``.npy`` stream ``f`` (at its start), read and checked
    before any array is allocated: a bool, integer or float dtype (never an object or a record), at most
    :data:`MAX_NDIM` non-negative dimensions.  ``ValueError`` saying what is wrong."""
    import numpy as np

    fmt = np.lib.format
    version = fmt.read_magic(f)
    if version == (1, 0):
        shape, fortran, dtype = fmt.read_array_header_1_0(f)
    elif version in ((2, 0), (3, 0)):
        shape, fortran, dtype = fmt.read_array_header_2_0(f)
    else:
        raise ValueError(f"an .npy version {version} header")
    if dtype.hasobject or dtype.fields is not None or dtype.subdtype is not None or dtype.kind not in "biuf":
        raise ValueError(f"dtype {str(dtype)[:40]}: only bool, integer and float arrays are read")
    if not isinstance(shape, tuple) or len(shape) > MAX_NDIM or not all(isinstance(d, int) and d >= 0 for d in shape):
        raise ValueError(f"shape {str(shape)[:60]}: not the shape of an array")
    return shape, bool(fortran), dtype


def read_npy_member(zf, name: str, limit: int):
    """The array of member ``name`` (``"w1.npy"``) of the open ``zipfile.ZipFile`` ``zf``, its header
    checked before anything is allocated (:func:`_npy_header`): the bytes its shape and dtype make must be
    exactly the member's after the header, and at most ``limit``.  ``ValueError`` saying what is wrong (a
    header claiming more bytes than the member holds, a damaged member)."""
    import zipfile
    import zlib

    import numpy as np

    info = zf.getinfo(name)
    try:
        with zf.open(info) as f:
            shape, fortran, dtype = _npy_header(f)
            start = f.tell()
            need = math.prod(shape) * dtype.itemsize  # a Python int: no overflow
            if need > limit:
                raise ValueError(f"its header claims {dtype}{list(shape)}: {need:,} bytes, more than {limit:,}")
            if need != info.file_size - start:
                raise ValueError(f"its header claims {dtype}{list(shape)}: {need:,} bytes, the member holds "
                                 f"{max(info.file_size - start, 0):,}")
        with zf.open(info) as f:
            return np.lib.format.read_array(f, allow_pickle=False)
    except (OSError, EOFError, zipfile.BadZipFile, zlib.error, NotImplementedError, KeyError) as e:
        raise ValueError(f"a damaged member ({str(e)[:60] or type(e).__name__})") from None


def read_npz(path: str | os.PathLike, limit: int, follow: bool = False, what: str = "an .npz file",
             finite: bool = False) -> dict:
    """``{name: array}`` of the ``.npz`` file ``path`` (module docstring), read without unpickling anything.

    At most :data:`MAX_NPZ_MEMBERS` members, each ``NAME.npy`` (:func:`read_npy_member`), unpacking to at
    most ``limit`` bytes in all (as the file itself); ``finite``: a NaN or an infinity in a float member is
    refused.  Raises ``FileNotFoundError`` for a missing file, :class:`FileError` naming the file (and the
    member) for anything else.
    """
    import zipfile

    import numpy as np

    with open_regular(path, follow) as f:
        size = os.fstat(f.fileno()).st_size
        if size > limit:
            raise FileError(path, f"is {size:,} bytes; {what} holds at most {limit:,}")
        try:
            zf = zipfile.ZipFile(f)
            infos = zf.infolist()
        except (zipfile.BadZipFile, OSError, ValueError, EOFError) as e:
            raise FileError(path, f"is not {what} ({str(e)[:60]})") from None
        if len(infos) > MAX_NPZ_MEMBERS:
            raise FileError(path, f"has {len(infos):,} members; {what} has at most {MAX_NPZ_MEMBERS}")
        if sum(i.file_size for i in infos) > limit:
            raise FileError(path, f"its members unpack to more than {limit:,} bytes; {what} holds at most that")
        out = {}
        for info in infos:
            key = info.filename[:-4] if info.filename.endswith(".npy") else None
            if not key or key in out:
                raise FileError(path, f"member {info.filename[:60]!r} is not one array of {what}")
            try:
                a = read_npy_member(zf, info.filename, limit)
            except ValueError as e:
                raise FileError(path, f"member {key[:60]!r}: {e}") from None
            if finite and a.dtype.kind == "f":
                bad = np.flatnonzero(~np.isfinite(a.ravel()))
                if bad.size:
                    raise FileError(path, f"member {key[:60]!r} holds {float(a.ravel()[bad[0]])!r} at flat index "
                                          f"{int(bad[0])}; every value must be finite")
            out[key] = a
    return out


# ---------------------------------------------------------------------------
# run directories
# ---------------------------------------------------------------------------
def find_links(root: str | os.PathLike, depth: int = LINK_DEPTH, limit: int = 5) -> list[str]:
    """Up to ``limit`` symbolic links inside ``root`` (paths relative to it), ``depth`` levels down.

    ``root`` itself may be a link (the user's choice); nothing below it is
    followed.
    """
    found: list[str] = []

    def walk(d: str, rel: str, level: int) -> None:
        try:
            entries = list(os.scandir(d))
        except OSError:
            return
        for e in entries:
            if len(found) >= limit:
                return
            name = f"{rel}{e.name}"
            if e.is_symlink():
                found.append(name)
            elif level < depth and e.is_dir(follow_symlinks=False):
                walk(e.path, f"{name}/", level + 1)

    if os.path.isdir(root):
        walk(os.fspath(root), "", 1)
    return found


def refuse_links(root: str | os.PathLike) -> None:
    """:class:`FileError` naming the symbolic links inside the run directory ``root`` (:func:`find_links`):
    the tools never write through a link, nor read a run's files through one."""
    links = find_links(root)
    if links:
        raise FileError(root, f"holds symbolic link(s) {', '.join(links)}: the tools never read or write a run's "
                              "files through a link; remove them (or copy the run without links)")
