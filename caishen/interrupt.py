"""Ctrl-C for the ``caishen`` command: a ``KeyboardInterrupt`` that is never lost inside a native callback.

Python raises the ``KeyboardInterrupt`` of a SIGINT in whichever Python frame runs when its handler
runs.  When that frame is a ctypes callback (llvmlite calls back into Python while numba compiles a
kernel or loads one from the cache), the exception is printed as "Exception ignored on calling ctypes
callback function ... KeyboardInterrupt" and lost: the command goes on and exits 0 after a traceback.
:func:`install` sets a handler that raises as Python's own does, except while an llvmlite frame is on
the stack (or importlib's module-lock callback, as rare at start-up): there it sends the signal again :data:`RETRY_S` seconds later, by when the callback has
returned (and again, until it has).  :func:`seen` tells whether it raised: an import that a Ctrl-C
cut short can surface as another exception (numpy turns it into an ``ImportError``), which the
command then reports as the interruption it was.  :func:`quiet_exit`, once the command is done: a
Ctrl-C while the interpreter exits (numba's finalizers run in its atexit callbacks) ends the process
as SIGINT does, instead of a ``KeyboardInterrupt`` traceback from inside a callback.
"""

from __future__ import annotations

import os
import signal
import sys
import threading

#: seconds before a SIGINT that came inside llvmlite is sent again
RETRY_S = 0.02


def _in_llvmlite(frame) -> bool:
    """True inside a callback whose exception Python would print as "Exception ignored" and drop: llvmlite's
    ctypes callbacks, and the weakref callback of importlib's module locks (``_get_module_lock``'s ``cb``)."""
    while frame is not None:
        code = frame.f_code
        if "llvmlite" in code.co_filename or (getattr(code, "co_name", "") == "cb" and "importlib._bootstrap" in code.co_filename):
            return True
        frame = frame.f_back
    return False


_raised = False


def seen() -> bool:
    """True once the handler has raised a ``KeyboardInterrupt`` in this process."""
    return _raised


def _handler(signum, frame) -> None:
    global _raised
    if _in_llvmlite(frame):
        t = threading.Timer(RETRY_S, os.kill, (os.getpid(), signal.SIGINT))
        t.daemon = True
        t.start()
        return
    _raised = True
    raise KeyboardInterrupt


def install():
    """Set the handler for SIGINT if it has Python's default one now (never over a handler of the
    caller's, nor where SIGINT is ignored) and this is the main thread.  Returns the handler it
    replaced (give it to :func:`restore`), or None where nothing was set."""
    if threading.current_thread() is not threading.main_thread():
        return None
    old = signal.getsignal(signal.SIGINT)
    if old is not signal.default_int_handler:
        return None
    signal.signal(signal.SIGINT, _handler)
    return old


def restore(old) -> None:
    """Put back the handler :func:`install` replaced (None: nothing to do)."""
    if old is not None and signal.getsignal(signal.SIGINT) is _handler:
        signal.signal(signal.SIGINT, old)


def quiet_exit() -> None:
    """The command is done: flush what it wrote, then give SIGINT its default action (the process ends,
    as the signal's own status, with no traceback).  The console command's last step (main thread only)."""
    for f in (sys.stdout, sys.stderr):
        try:
            f.flush()
        except (OSError, ValueError):  # a closed pipe or stream: nothing more can be written to it
            pass
    if threading.current_thread() is threading.main_thread():
        signal.signal(signal.SIGINT, signal.SIG_DFL)
