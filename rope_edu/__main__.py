"""``python -m rope_edu check PATH`` / ``diff A B``: the ``rope-edu`` command (:mod:`rope_edu.cli`)."""

import sys

from .cli import main

sys.exit(main())
