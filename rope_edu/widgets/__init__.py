"""Interactive figures. Each submodule holds one figure as ``DEMO``, a :class:`Figure`.

Import a submodule to use it, e.g. ``from rope_edu.widgets import rotation2d; rotation2d.DEMO.show()``.
"""

from ._core import JS_DIR, STATIC_ENV, Control, Figure, bundle, static_mode

__all__ = ["JS_DIR", "STATIC_ENV", "Control", "Figure", "bundle", "static_mode"]
