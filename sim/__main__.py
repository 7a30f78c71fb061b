"""``python -m sim`` is the ``caishen`` command."""

from sim.cli import main

raise SystemExit(main())
