"""Interactive figures. Each submodule holds one figure as ``DEMO``, a :class:`Figure`.

Import a submodule to use it, e.g. ``from rope_edu.widgets import rotation2d; rotation2d.DEMO.show()``.
"""

from ._core import (
    COLORMAPS, JS_DIR, NOSCRIPT, STATIC_ENV, Control, Figure, Placeholder, bundle, placeholders, replace_placeholders, snap_zero,
    static_mode, static_modules,
)

__all__ = ["COLORMAPS", "JS_DIR", "NOSCRIPT", "STATIC_ENV", "Control", "Figure", "Placeholder", "bundle", "placeholders",
           "replace_placeholders", "snap_zero", "static_mode", "static_modules"]
