"""``python -m capeval_core.cli``: the ``capeval`` command."""

import sys

from capeval_core.cli import main

if __name__ == "__main__":  # imported (every module is, by test_layering), it runs nothing
    sys.exit(main())
