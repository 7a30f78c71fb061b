"""``python -m caishen`` is the ``caishen`` command."""

from caishen.sim.cli import main

raise SystemExit(main())
