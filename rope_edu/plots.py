"""The book's shared figure style: colour-blind-safe colours and matplotlib settings.

Every figure in the notebooks and widgets uses :data:`COLORS` (the Okabe–Ito palette) and
:func:`use_style`, so that q is always blue, k always vermillion, and so on, across chapters.

In a notebook, :func:`use_style` (called by every chapter's shared first cell) also decides how a
plot is shown: as SVG, sharp on any screen (a plot whose SVG would pass :data:`SVG_LIMIT` bytes,
e.g. a dense scatter, is shown as a PNG at twice its display size instead), with a caption and an
alt text carried inside the image (SVG ``<dc:title>`` / ``<dc:description>``, PNG ``Title`` /
``Description``). The book's build (``_ext/book_plots.py``) turns them into a numbered figure
caption and the ``alt`` of the ``<img>``. Give them with :func:`describe`; without it, the caption
is the figure's title (``suptitle``, or its axes' titles) and the alt text is made from its
axes (:func:`alt_text`).
"""

from __future__ import annotations

import io
from typing import Any

import matplotlib as mpl  # pyplot (0.3 s to import) only where a figure is made: new_figure

__all__ = ["COLORS", "CYCLE", "STYLE", "SVG_LIMIT", "use_style", "use_cjk_font", "new_figure", "describe", "alt_text",
           "caption_text", "figure_image"]

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


#: Largest SVG (bytes) a plot is shown as; a bigger one is shown as a PNG at 2x its display size.
SVG_LIMIT = 120_000


def use_style() -> None:
    """Apply the book's style to matplotlib globally (call once per notebook).

    In IPython (a notebook, or the book's build) plots are then displayed by
    :func:`figure_image`: SVG (or PNG at 2x) with their caption and alt text embedded.
    In Chinese (:func:`rope_edu.i18n.language`), the package's Chinese font is registered too
    (:func:`use_cjk_font`).
    """
    from .i18n import language

    mpl.rcParams.update(STYLE)
    if language() != "en":
        use_cjk_font()
    _install_display()


def use_cjk_font() -> None:
    """Register the package's Chinese font (:data:`rope_edu.i18n.FONT`, Noto Sans SC cut down to the
    catalog's characters) with matplotlib, as the font that Chinese characters fall back on: Latin
    letters, digits and symbols keep the book's sans-serif, CJK characters come from it."""
    from matplotlib import font_manager

    from .i18n import FONT, FONT_FAMILY

    if FONT_FAMILY not in {f.name for f in font_manager.fontManager.ttflist}:
        font_manager.fontManager.addfont(str(FONT))
    families = [f for f in mpl.rcParams["font.family"] if f != FONT_FAMILY]
    mpl.rcParams["font.family"] = families + [FONT_FAMILY]


def describe(fig, *, caption: str | None = None, alt: str | None = None):
    """Give a figure the caption (shown numbered under it in the book) and the alt text (read by
    screen readers in place of the image) it carries when displayed; returns ``fig``.

    Parameters
    ----------
    fig : matplotlib.figure.Figure
    caption : str, optional
        One sentence saying what the figure shows. Default: :func:`caption_text`.
    alt : str, optional
        What a reader who cannot see the plot needs from it. Default: :func:`alt_text`.
    """
    from matplotlib.figure import Figure

    if not isinstance(fig, Figure):
        raise TypeError(f"fig must be a matplotlib Figure, got {type(fig).__name__}")
    for name, value in (("caption", caption), ("alt", alt)):
        if value is not None and (not isinstance(value, str) or not value.strip()):
            raise ValueError(f"{name} must be a non-empty string or None, got {value!r}")
    fig._rope_edu_caption = caption
    fig._rope_edu_alt = alt
    return fig


def _visible_axes(fig) -> list:
    return [ax for ax in fig.axes if ax.get_visible() and ax.get_label() != "<colorbar>"]


def _clean(text: str) -> str:
    """Plain text from a matplotlib label: mathtext commands as their characters (\\lambda_i ->
    λ_i), no dollar signs or braces."""
    import re

    try:  # matplotlib's table of mathtext command names (a private module: fall back to none)
        from matplotlib._mathtext_data import tex2uni
    except ImportError:  # pragma: no cover
        tex2uni = {}

    text = re.sub(r"\\([A-Za-z]+)", lambda m: chr(tex2uni[m.group(1)]) if m.group(1) in tex2uni else m.group(1) + " ", text)
    return " ".join(text.replace("$", "").replace("{", "").replace("}", "").split())


def caption_text(fig) -> str:
    """The caption a figure carries: the one given to :func:`describe`, else its ``suptitle``,
    else its axes' titles joined by "; " (empty when it has none of these)."""
    given = getattr(fig, "_rope_edu_caption", None)
    if given:
        return given
    sup = fig._suptitle.get_text() if getattr(fig, "_suptitle", None) is not None else ""
    if sup.strip():
        return _clean(sup)
    titles = [_clean(ax.get_title()) for ax in _visible_axes(fig) if ax.get_title().strip()]
    return "; ".join(titles)


def alt_text(fig) -> str:
    """The alt text a figure carries: the one given to :func:`describe`, else a description made
    from its axes: per panel its title, what it plots (lines, points, an image) against what, the
    axis ranges and the legend's entries."""
    from matplotlib.figure import Figure

    if not isinstance(fig, Figure):
        raise TypeError(f"fig must be a matplotlib Figure, got {fig!r} of type {type(fig).__name__}")
    given = getattr(fig, "_rope_edu_alt", None)
    if given:
        return given
    # in the language of rope_edu.i18n (English: the templates themselves)
    from .i18n import message as _m, translate as _t

    axes = _visible_axes(fig)
    parts = []
    sup = fig._suptitle.get_text() if getattr(fig, "_suptitle", None) is not None else ""
    if sup.strip():
        parts.append(_m("{0}.", _t(_clean(sup))))
    for i, ax in enumerate(axes):
        kinds = []
        if ax.images:
            kinds.append(_m("an image (heatmap)"))
        if ax.lines:
            kinds.append(_m("{0} lines" if len(ax.lines) > 1 else "{0} line", len(ax.lines)))
        if ax.collections:
            kinds.append(_m("points or patches"))
        if ax.patches:
            kinds.append(_m("bars or shapes"))
        what = _m(" and ").join(kinds) or _m("an empty panel")
        name = _m("Panel {0} of {1}", i + 1, len(axes)) if len(axes) > 1 else _m("Plot")
        if ax.get_title().strip():
            text = _m("{0} ({1}): {2}", name, _t(_clean(ax.get_title())), what)
        else:
            text = _m("{0}: {1}", name, what)
        x, y = _t(_clean(ax.get_xlabel())), _t(_clean(ax.get_ylabel()))
        if x or y:
            text += _m(", {0} against {1}", y or _m("values"), x or _m("index"))
        (x0, x1), (y0, y1) = ax.get_xlim(), ax.get_ylim()
        text += _m("; x from {0} to {1}, y from {2} to {3}", f"{x0:.3g}", f"{x1:.3g}", f"{y0:.3g}", f"{y1:.3g}")
        labels = [_t(_clean(lab)) for lab in ax.get_legend_handles_labels()[1] if not lab.startswith("_")]
        if labels:
            text += _m("; legend: {0}", _m(", ").join(labels))
        parts.append(_m("{0}.", text))
    return _m(" ").join(parts) or _m("Empty figure.")


def figure_image(fig) -> tuple[str, bytes]:
    """The image a figure is displayed as, with :func:`caption_text` and :func:`alt_text` as its
    title and description: ``("image/svg+xml", svg)``; or, when the SVG passes :data:`SVG_LIMIT`
    bytes (a line of thousands of points), the smaller of it and ``("image/png", png)``, a PNG
    at twice the display resolution in 256 colours (the same look, a third of the bytes)."""
    caption, alt = caption_text(fig), alt_text(fig)
    buf = io.BytesIO()
    # a line's points closer than half a pixel to a straight run are dropped (invisible); text
    # stays text (the browser draws it; glyphs as paths would add 10-20 KB to every plot)
    with mpl.rc_context({"path.simplify_threshold": 0.5, "svg.fonttype": "none"}):
        fig.savefig(buf, format="svg", bbox_inches="tight",
                    metadata={"Title": caption, "Description": alt, "Date": None})
    svg = buf.getvalue()
    if len(svg) <= SVG_LIMIT:
        return "image/svg+xml", svg
    from PIL import Image
    from PIL.PngImagePlugin import PngInfo

    buf = io.BytesIO()
    fig.savefig(buf, format="png", dpi=2 * mpl.rcParams["figure.dpi"], bbox_inches="tight")
    image = Image.open(buf).convert("RGB")
    image = image.quantize(colors=256, method=Image.Quantize.MEDIANCUT, dither=Image.Dither.NONE)
    info = PngInfo()
    info.add_itxt("Title", caption)
    info.add_itxt("Description", alt)
    out = io.BytesIO()
    image.save(out, format="PNG", optimize=True, pnginfo=info)
    png = out.getvalue()
    return ("image/png", png) if len(png) < len(svg) else ("image/svg+xml", svg)


def _install_display() -> None:
    """Show figures through :func:`figure_image` in IPython (no-op outside IPython)."""
    try:
        from IPython import get_ipython
    except ImportError:  # pragma: no cover - IPython ships with every notebook front end
        return
    ip = get_ipython()
    if ip is None:
        return
    from matplotlib.figure import Figure

    formatters = ip.display_formatter.formatters
    try:  # the inline backend draws PNG by default; keep only our formatters for figures
        from matplotlib_inline.backend_inline import set_matplotlib_formats

        set_matplotlib_formats("svg")
    except Exception:  # pragma: no cover - no inline backend (plain IPython)
        pass

    last: dict[int, tuple[str, bytes]] = {}

    def as_svg(fig):
        kind, data = figure_image(fig)
        last[id(fig)] = (kind, data)
        return data.decode("utf-8") if kind == "image/svg+xml" else None

    def as_png(fig):
        kind, data = last.pop(id(fig), None) or figure_image(fig)
        if kind != "image/png":
            return None
        # drawn at 2x: shown at half its pixel size (the PNG header's width, bytes 16-20)
        width = int.from_bytes(data[16:20], "big")
        return data, {"width": width // 2}  # no height: a narrow column scales it, keeping its shape

    formatters["image/svg+xml"].for_type(Figure, as_svg)
    formatters["image/png"].for_type(Figure, as_png)


def new_figure(nrows: int = 1, ncols: int = 1, **kwargs: Any):
    """``plt.subplots`` with the book's style applied; returns ``(fig, axes)``."""
    import matplotlib.pyplot as plt

    with mpl.rc_context(STYLE):
        return plt.subplots(nrows, ncols, **kwargs)

