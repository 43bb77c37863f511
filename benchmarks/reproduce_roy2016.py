"""roy2016 Table 1 on the shared data: ``python benchmarks/reproduce_roy2016.py [--quick]``.

The protocol is :mod:`pacbound._src.apps.reproduce.runner`, the code of
``pacbound reproduce roy2016-table1``; results go to ``results/reproduce_roy2016.json``
(rewritten after every row) and ``.md``.
Needs ``PACBOUND_DATA`` (e.g. ``../shared/data``) or ``--data-dir``.
"""

import sys

from pacbound._src.apps.reproduce.command import main

if __name__ == "__main__":
    sys.exit(main("roy2016-table1", script=__file__))
