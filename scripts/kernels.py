"""Kernels that cannot lose their ports: each listens on Unix sockets in a folder of its own.

A Jupyter kernel manager picks five free TCP ports by binding and closing them; the kernel binds
them a moment later. Between the two, any other process may take one: with the book's chapters,
the lower-bound runs and a browser all starting at once on one machine, that happened (a CI run:
``ZMQError: Address already in use`` in the kernel, then nbclient waited 60 s and failed with
``Kernel didn't respond``). Unix sockets in a private folder have no such window.

Used by ``scripts/build_book.py`` and by the tests that run notebooks in their own kernels.
"""

from __future__ import annotations

import contextlib
import os
import tempfile
from collections.abc import Iterator


@contextlib.contextmanager
def private_kernel(kernel_name: str) -> Iterator:
    """An ``AsyncKernelManager`` for ``kernel_name`` over ``ipc`` sockets in a new folder, for
    ``nbclient.NotebookClient(km=...)``; the folder is removed afterwards.

    The folder is made under the system's temporary directory (not the notebook's): a Unix
    socket's path is limited to about 107 bytes."""
    from jupyter_client.manager import AsyncKernelManager

    with tempfile.TemporaryDirectory(prefix="rope-kernel-") as folder:
        # the sockets are <folder>/k-ipc-<n>: jupyter-client names them after the connection file
        yield AsyncKernelManager(kernel_name=kernel_name, transport="ipc",
                                 connection_file=os.path.join(folder, "k.json"))
