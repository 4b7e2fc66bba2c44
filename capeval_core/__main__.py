"""``python -m capeval_core``: the ``capeval`` command, where its script is not on PATH."""

import sys

from capeval_core.cli import main

if __name__ == "__main__":  # imported (every module is, by test_layering), it runs nothing
    sys.exit(main())
