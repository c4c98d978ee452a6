"""``python -m rope_edu check PATH`` / ``diff A B``: the ``rope-edu`` command (:mod:`rope_edu.cli`)."""

import sys

from .cli import main

if __name__ == "__main__":  # importing the package's modules one by one (pkgutil) must not run it
    sys.exit(main())
