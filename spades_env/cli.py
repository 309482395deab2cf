"""The ``spades`` command.

Subcommands are contributed by modules: each listed module has ``register(subparsers)`` that
adds its parsers with ``set_defaults(func=...)``. A module that is missing is skipped, so a
partial install still runs.
"""

from __future__ import annotations

import argparse
import importlib
import sys

COMMAND_MODULES = (
    "spades_env.commands.demo",  # spades demo
    "spades_env.commands.replay",  # spades replay FILE
    "spades_env.commands.bench",  # spades bench
    "spades_env.arena.commands",  # spades eval, spades tournament
    "spades_env.commands.play",  # spades play
)


def build_parser() -> argparse.ArgumentParser:
    """The argument parser with every available subcommand."""
    parser = argparse.ArgumentParser(prog="spades", description="Spades for reinforcement learning")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    for name in COMMAND_MODULES:
        try:
            module = importlib.import_module(name)
        except ModuleNotFoundError as exc:
            if exc.name and name.startswith(exc.name):
                continue
            raise
        module.register(sub)
    return parser


def main(argv: list[str] | None = None) -> int:
    """Entry point of the ``spades`` console script."""
    parser = build_parser()
    args = parser.parse_args(argv)
    if not getattr(args, "func", None):
        parser.print_help()
        return 2
    try:
        return int(args.func(args) or 0)
    except ValueError as exc:  # bad names, rules, checkpoints, records: the message says what and where
        print(f"spades {args.command}: {exc}", file=sys.stderr)
        return 2


if __name__ == "__main__":
    sys.exit(main())
