"""`python -m xmemo …` is the `xmemo` command."""

import sys

from .cli import main

sys.exit(main())
