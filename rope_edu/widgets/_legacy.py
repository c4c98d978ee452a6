"""TEMPORARY (removed once every figure uses the engine in _core.py). One pattern for every interactive figure in the book.

A :class:`Demo` is a drawing function plus the controls that drive it. The same drawing
function gives

* :meth:`Demo.widget`: a live ipywidgets control panel whose plot is redrawn by the kernel
  (JupyterLab, Notebook 7, VS Code, Colab);
* :meth:`Demo.animation`: a kernel-free matplotlib ``to_jshtml`` player, with a slider over
  precomputed frames, for the static book (no server, no request to any other host);
* :meth:`Demo.show`: the widget in a live kernel, the animation while the book is being built
  (``make book`` sets the environment variable :data:`STATIC_ENV`), so a reader never meets a
  slider that does nothing.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from typing import Any, Callable, Mapping, Sequence

import matplotlib as mpl
import matplotlib.pyplot as plt
from matplotlib.animation import FuncAnimation
from matplotlib.figure import Figure

from ..plots import STYLE, strip_external_links

__all__ = ["STATIC_ENV", "static_mode", "Demo", "render"]

#: Set to ``"1"`` by ``make book``: notebooks then show kernel-free animations, not widgets.
STATIC_ENV = "ROPE_EDU_STATIC"


def static_mode() -> bool:
    """True while the static book is being built (``ROPE_EDU_STATIC=1``)."""
    return os.environ.get(STATIC_ENV, "") == "1"


def render(draw: Callable[..., Any], params: Mapping[str, Any], figsize: tuple[float, float]) -> Figure:
    """Draw one frame: a new styled figure, ``draw(fig, **params)``; returns the figure."""
    with mpl.rc_context(STYLE):
        fig = plt.figure(figsize=figsize)
        draw(fig, **params)
    return fig


@dataclass(frozen=True)
class Demo:
    """An interactive figure: ``draw(fig, **params)`` and the controls that set ``params``.

    Parameters
    ----------
    draw : callable
        ``draw(fig, **params)`` fills an empty :class:`~matplotlib.figure.Figure`. It must depend
        only on its arguments (pure), so the live widget and every animation frame agree.
    controls : callable
        ``controls() -> dict[name, ipywidgets.ValueWidget]``; built on demand so that importing
        the package does not import ipywidgets.
    frames : callable
        ``frames() -> list[dict]``: the parameter sets of the kernel-free animation, in order.
    figsize : (float, float)
        Figure size in inches.
    dpi : int
        Resolution of the animation frames (keeps the page small).
    interval : int
        Milliseconds between animation frames when playing.
    """

    draw: Callable[..., Any]
    controls: Callable[[], dict[str, Any]]
    frames: Callable[[], Sequence[Mapping[str, Any]]]
    figsize: tuple[float, float] = (6.0, 4.0)
    dpi: int = 72
    interval: int = 250
    defaults: Mapping[str, Any] = field(default_factory=dict)

    def figure(self, **params: Any) -> Figure:
        """One static frame; parameters not given take ``draw``'s defaults.

        Creates no ipywidgets (a widget created while the book is built would pull the
        ipywidgets JavaScript from a CDN into the page).
        """
        return render(self.draw, {**self.defaults, **params}, self.figsize)

    def widget(self):
        """The live widget: controls above, a plot redrawn by the kernel on every change."""
        import ipywidgets as widgets
        from IPython.display import display

        controls = self.controls()
        out = widgets.Output()

        def redraw(**values: Any) -> None:
            fig = render(self.draw, {**self.defaults, **values}, self.figsize)
            with out:
                out.clear_output(wait=True)
                display(fig)
            plt.close(fig)

        def on_change(_change: Any = None) -> None:
            redraw(**{name: w.value for name, w in controls.items()})

        for w in controls.values():
            w.observe(on_change, names="value")
        on_change()
        box = widgets.VBox([widgets.HBox(list(controls.values()), layout={"flex_flow": "row wrap"}), out])
        box.add_class("rope-edu-demo")
        return box

    def animation(self):
        """The kernel-free counterpart: an HTML player (slider, play buttons) over :meth:`frames`."""
        from IPython.display import HTML

        frames = list(self.frames())
        if not frames:
            raise ValueError("frames() returned no frames; an animation needs at least one")
        with mpl.rc_context({**STYLE, "savefig.dpi": self.dpi}):
            fig = plt.figure(figsize=self.figsize, dpi=self.dpi)
            # FuncAnimation asks for a redraw after each frame and then saves it, which renders
            # every frame twice; saving alone is enough for a recorded animation.
            fig.canvas.draw_idle = lambda *args, **kwargs: None

            def update(i: int) -> list:
                fig.clear()
                with mpl.rc_context(STYLE):
                    self.draw(fig, **{**self.defaults, **frames[i]})
                return []

            anim = FuncAnimation(fig, update, frames=len(frames), interval=self.interval, blit=False)
            html = anim.to_jshtml(fps=None, embed_frames=True, default_mode="once")
        plt.close(fig)
        return HTML(strip_external_links(html))

    def show(self):
        """The widget in a live kernel; the animation while the static book is built."""
        return self.animation() if static_mode() else self.widget()
