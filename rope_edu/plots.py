"""The book's shared figure style: colour-blind-safe colours and matplotlib settings.

Every figure in the notebooks and widgets uses :data:`COLORS` (the Okabe–Ito palette) and
:func:`use_style`, so that q is always blue, k always vermillion, and so on, across chapters.
"""

from __future__ import annotations

from typing import Any

import matplotlib as mpl
import matplotlib.pyplot as plt

__all__ = ["COLORS", "CYCLE", "STYLE", "use_style", "new_figure"]

#: Okabe & Ito (2008) colour-blind-safe palette, with the book's meaning for each colour.
COLORS: dict[str, str] = {
    "q": "#0072B2",          # blue: queries
    "k": "#D55E00",          # vermillion: keys
    "v": "#009E73",          # bluish green: values / third series
    "accent": "#CC79A7",     # reddish purple
    "orange": "#E69F00",
    "sky": "#56B4E9",
    "yellow": "#F0E442",
    "grey": "#7F7F7F",
    "black": "#000000",
}

#: Order in which series take colours when none is given.
CYCLE: list[str] = [COLORS[c] for c in ("q", "k", "v", "orange", "accent", "sky", "grey")]

#: rcParams applied by :func:`use_style`.
STYLE: dict[str, Any] = {
    "figure.figsize": (6.0, 4.0),
    "figure.dpi": 100,
    "savefig.dpi": 100,
    "figure.constrained_layout.use": True,
    "axes.prop_cycle": mpl.cycler(color=CYCLE),
    "axes.grid": True,
    "grid.alpha": 0.3,
    "axes.spines.top": False,
    "axes.spines.right": False,
    "axes.titlesize": 11,
    "axes.labelsize": 10,
    "legend.frameon": False,
    "font.size": 10,
    "image.cmap": "cividis",  # perceptually uniform and colour-blind safe
    "lines.linewidth": 1.8,
}


def use_style() -> None:
    """Apply the book's style to matplotlib globally (call once per notebook)."""
    mpl.rcParams.update(STYLE)


def new_figure(nrows: int = 1, ncols: int = 1, **kwargs: Any):
    """``plt.subplots`` with the book's style applied; returns ``(fig, axes)``."""
    with mpl.rc_context(STYLE):
        return plt.subplots(nrows, ncols, **kwargs)
