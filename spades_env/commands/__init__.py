"""Subcommands of the ``spades`` CLI (see :mod:`spades_env.cli`)."""
