"""``python -m pacbound``: the ``pacbound`` command."""

import sys

from pacbound.cli import main

sys.exit(main())
