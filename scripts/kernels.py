"""Kernels that cannot lose their ports: each listens on Unix sockets in a folder of its own.

A Jupyter kernel manager picks five free TCP ports by binding and closing them; the kernel binds
them a moment later. Between the two, any other process may take one: with the book's chapters,
the lower-bound runs and a browser all starting at once on one machine, that happened (a CI run:
``ZMQError: Address already in use`` in the kernel, then nbclient waited 60 s and failed with
``Kernel didn't respond``). Unix sockets in a private folder have no such window.

Used by ``scripts/build_book.py`` and by the tests that run notebooks in their own kernels, as
``NotebookClient(..., kernel_manager_class=PrivateSocketKernelManager)``: nbclient makes the
manager, so it also shuts the kernel down and cleans up after it (a manager handed to it as
``km=`` is left running, kernel and all).
"""

from __future__ import annotations

import os
import shutil
import tempfile

from jupyter_client.manager import AsyncKernelManager
from traitlets import default

FOLDER_PREFIX = "rope-kernel-"


class PrivateSocketKernelManager(AsyncKernelManager):
    """An ``AsyncKernelManager`` whose kernel listens on ``ipc`` sockets in a new folder under the
    system's temporary directory (not the notebook's: a Unix socket's path is limited to about
    107 bytes); the folder goes when the kernel is cleaned up."""

    @default("transport")
    def _default_transport(self) -> str:
        return "ipc"

    @default("connection_file")
    def _default_connection_file(self) -> str:
        # the sockets are <folder>/k-ipc-<n>: jupyter-client names them after the connection file
        return os.path.join(tempfile.mkdtemp(prefix=FOLDER_PREFIX), "k.json")

    def cleanup_connection_file(self) -> None:
        super().cleanup_connection_file()
        folder = os.path.dirname(self.connection_file)
        if os.path.basename(folder).startswith(FOLDER_PREFIX):
            shutil.rmtree(folder, ignore_errors=True)
