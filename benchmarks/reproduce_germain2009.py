"""germain2009 Table 1 on the shared data: ``python benchmarks/reproduce_germain2009.py [--quick]``.

The protocol is :mod:`pacbound._src.apps.reproduce.runner`, the code of
``pacbound reproduce germain2009-table1``; results go to ``results/reproduce_germain2009.json``
(rewritten after every row) and ``.md``.
Needs ``PACBOUND_DATA`` (e.g. ``../shared/data``) or ``--data-dir``.
"""

import sys

from pacbound._src.apps.reproduce.command import main

if __name__ == "__main__":
    sys.exit(main("germain2009-table1", script=__file__))
