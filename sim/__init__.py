"""caishen: self-play simulation and research toolkit for Chinese regional mahjong.

Layers (arrows point one way): ``sim.tiles`` -> ``sim.tables`` -> ``sim.hand``
-> ``sim.rules`` -> ``sim.engine`` -> ``sim.runner``; ``envs``, ``agents`` and
the CLI import ``sim``.  Importing ``sim`` is cheap: tables are built (or read
from the disk cache) on first use.
"""

__version__ = "0.1.0"
