"""``python -m spades_env.cli``: the ``spades`` command."""

import sys

from spades_env.cli.main import main

sys.exit(main())
