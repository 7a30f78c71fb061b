"""``python -m caishen.sim`` is the ``caishen`` command (as ``python -m caishen``)."""

from caishen.sim.cli import main

raise SystemExit(main())
