"""Interactive figures. Each submodule holds one chapter's demo as a :class:`Demo`.

Import a submodule to use it, e.g. ``from rope_edu.widgets import rotation2d; rotation2d.DEMO.show()``.
"""

from ._core import STATIC_ENV, Demo, render, static_mode

__all__ = ["STATIC_ENV", "Demo", "render", "static_mode"]
