"""``python -m caishen`` is the ``caishen`` command (:mod:`caishen.sim.cli`)."""

from caishen.sim.cli import main

raise SystemExit(main())
