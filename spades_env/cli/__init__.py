"""The ``spades`` command: argument parsing only, one module per command (see
:mod:`spades_env.cli.main`)."""

from spades_env.cli.main import main

__all__ = ["main"]
