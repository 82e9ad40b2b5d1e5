"""``python -m omniaudit.cli``: the ``omniaudit`` command."""

import sys

from omniaudit.cli import main

sys.exit(main())
