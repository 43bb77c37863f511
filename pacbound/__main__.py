"""``python -m pacbound``: the ``pacbound`` command."""

import sys

from pacbound._src.apps.cli import main

sys.exit(main())
