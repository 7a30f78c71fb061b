"""``python -m caishen`` is the ``caishen`` command (:mod:`caishen.cli`); Ctrl-C while the command
line module loads is one line too (and never lost in a native callback: :mod:`caishen.interrupt`)."""

import sys

from caishen import interrupt

interrupt.install()
try:
    from caishen.cli import command
except BaseException as e:  # a Ctrl-C, or an import it cut short (numpy reports that as an ImportError)
    if not (isinstance(e, KeyboardInterrupt) or interrupt.seen()):
        raise
    sys.stderr.write("caishen: interrupted\n")
    raise SystemExit(130) from None

command()
