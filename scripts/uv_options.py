"""The command that installs with uv from the package sources this machine's pip is configured with.

    $(python3 scripts/uv_options.py) --python .venv/bin/python -r requirements.txt

uv reads no pip configuration (pip.conf, PIP_* variables). This prints ``uv pip install`` (uv as
the Python running this installed it) and, for each source pip would use (``pip config list``: index-url, extra-index-url, find-links, constraint), the uv option that
says the same; and two options that make uv do what pip does by default:
``--index-strategy unsafe-best-match`` (take each package's best version from all indexes together,
not from the first index that has the package) and ``--compile-bytecode`` (write each module's
``.pyc`` as it installs: uv's venv otherwise has none, and where PYTHONDONTWRITEBYTECODE is set,
as on this machine, no process writes them either, so every process compiled every module it
imported; a CI run took 21.7 minutes instead of 18.3). .ci/run sets
ROPE_EDU_UV to this, which the Makefile and tests/lower_bounds.py read.
"""

from __future__ import annotations

import shlex
import shutil
import subprocess
import sys
import sysconfig
from pathlib import Path

#: pip's configuration key -> uv's option (each value may list several, separated by spaces)
OPTIONS = {"index-url": "--index-url", "extra-index-url": "--extra-index-url",
           "find-links": "--find-links", "constraint": "--constraint"}


def uv_options(config: str) -> list[str]:
    """uv's options for ``config``, the output of ``pip config list`` (lines ``scope.key='value'``)."""
    out, seen = ["--index-strategy", "unsafe-best-match", "--compile-bytecode"], set()
    for line in config.splitlines():
        key, sep, value = line.partition("=")
        name = key.rpartition(".")[2]
        if not sep or name not in OPTIONS:
            continue
        for item in " ".join(shlex.split(value)).split():
            if (name, item) not in seen:
                seen.add((name, item))
                out += [OPTIONS[name], item]
    return out


if __name__ == "__main__":
    # uv's executable where `python -m pip install uv` puts it (this Python's scripts folder, which
    # need not be on PATH), else the one on PATH
    here = Path(sysconfig.get_path("scripts")) / "uv"
    uv = str(here) if here.exists() else shutil.which("uv")
    if uv is None:
        sys.exit("uv is not installed: python3 -m pip install uv")
    listed = subprocess.run([sys.executable, "-m", "pip", "config", "list"], capture_output=True, text=True, check=True)
    print(shlex.join([uv, "pip", "install", *uv_options(listed.stdout)]))
