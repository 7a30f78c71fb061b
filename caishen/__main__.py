"""``python -m caishen`` is the ``caishen`` command (:mod:`caishen.cli`); Ctrl-C while the command
line module loads is one line too."""

import sys

try:
    from caishen.cli import main
except KeyboardInterrupt:
    sys.stderr.write("caishen: interrupted\n")
    raise SystemExit(130) from None

raise SystemExit(main())
