"""Matplotlib for every figure of caishen: the headless backend with CJK fonts first, labels a default
font can draw, and figures saved atomically.

Below :mod:`caishen.sim.analysis.report` and the writers that draw their own
figures (the ladder, the 飘 answer, the balance pages), so none of them needs
the report module to draw.
"""

from __future__ import annotations

import io

from caishen.sim import safeio


def _plt():
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        raise ValueError("caishen draws figures with matplotlib, which is not installed: pip install matplotlib "
                         "(or, for caishen report, --no-figures)") from None
    plt.rcParams["font.sans-serif"] = ["Noto Sans CJK SC", "WenQuanYi Zen Hei", "SimHei", "DejaVu Sans"]
    plt.rcParams["axes.unicode_minus"] = False
    return plt


def ascii_label(text) -> str:
    """A figure label without CJK characters (matplotlib's default fonts lack them): ``"爆头 baotou (K-6.2)"``
    -> ``"baotou (K-6.2)"``; a label that is all CJK keeps its characters."""
    t = " ".join("".join(c if ord(c) < 0x2E80 else " " for c in str(text)).split())
    return t or str(text)


def _labels(values) -> list[str]:
    return [ascii_label(v) for v in values]


def save_figure(fig, path, **savefig_kw) -> bytes:
    """Save a matplotlib figure as PNG to ``path`` atomically (:func:`caishen.sim.safeio.atomic_write`: never
    a half-written file, never through a link at ``path``); returns the PNG bytes."""
    buf = io.BytesIO()
    fig.savefig(buf, format="png", **savefig_kw)
    data = buf.getvalue()
    safeio.atomic_write(path, data)
    return data
