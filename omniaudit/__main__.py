"""``python -m omniaudit``: the ``omniaudit`` command (also what ``accelerate launch -m omniaudit`` runs)."""

import sys

from omniaudit.cli import main

if __name__ == "__main__":
    sys.exit(main())
