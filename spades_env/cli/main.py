"""The ``spades`` command.

Each subcommand is one module of this package (:data:`COMMAND_MODULES`) with
``register(subparsers)``, which adds its parser with ``set_defaults(func=run)``: argument
parsing and checking only, what the command does lives in the layers below. A module that is
missing is skipped, so a partial install still runs. Help is plain text for a terminal.

Bad input ends with one line on stderr, ``spades COMMAND: what and where``, and exit status 2:
the package's own errors (:class:`~spades_env.core.validate.SpadesError` and its subclasses,
the training package's ``CheckpointError`` and ``ConfigError``) and file-system errors
(``OSError``: a file that cannot be read or written). Any other exception is a bug and keeps
its traceback. A warning (such as a network asked to play rules it never trained under,
:class:`~spades_env.policies.coverage.UntrainedRulesWarning`) is one line,
``spades COMMAND: note: ...``, and the command goes on. ``spades replay`` exits 1 when the
record itself is bad (its verdict).
Ctrl-C ends any command with one line, ``spades COMMAND: interrupted (Ctrl-C)``, and exit
status 130 (128 + SIGINT), no traceback; the arena's worker processes leave Ctrl-C to the
parent (:func:`spades_env.eval.boards.worker_init`), so they print nothing either.
"""

from __future__ import annotations

import argparse
import importlib
import sys
import warnings
from collections.abc import Callable

from spades_env.core.validate import SpadesError

COMMAND_MODULES = (
    "spades_env.cli.demo",  # spades demo
    "spades_env.cli.replay",  # spades replay FILE
    "spades_env.cli.eval",  # spades eval
    "spades_env.cli.tournament",  # spades tournament
    "spades_env.cli.gauntlet",  # spades gauntlet
    "spades_env.cli.matrix",  # spades matrix
    "spades_env.cli.play",  # spades play
    "spades_env.cli.breakdown",  # spades breakdown
    "spades_env.cli.serve",  # spades serve (the web app)
    "spades_env.cli.crossplay",  # spades crossplay (partner matrix)
    "spades_env.cli.exploit",  # spades exploit (best response)
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


def own_errors() -> tuple[type[BaseException], ...]:
    """The exception types the CLI reports as one line (see the module docstring)."""
    errors: list[type[BaseException]] = [SpadesError, OSError]
    for module, name in (("training.checkpoint", "CheckpointError"), ("training.config", "ConfigError")):
        cls = getattr(sys.modules.get(module), name, None)
        if isinstance(cls, type) and issubclass(cls, BaseException):
            errors.append(cls)
    return tuple(errors)


def one_line(exc: BaseException) -> str:
    """An error as one line: its message with the line breaks folded."""
    if isinstance(exc, OSError) and exc.strerror:
        text = exc.strerror + (f": {exc.filename!s}" if exc.filename else "")
    else:
        text = str(exc) or type(exc).__name__
    return " ".join(text.split())


def _note_for(command: str) -> Callable[..., None]:
    """A ``warnings.showwarning`` that prints a warning as one line, ``spades COMMAND: note:
    ...`` (a loaded network never trained under a setting of the rules, say), not as the
    file and line that raised it; each note once (every seat's network is loaded, some
    twice)."""
    shown: set[str] = set()

    def show(message: Warning | str, category: type[Warning], *args: object, **kwargs: object) -> None:
        text = " ".join(str(message).split())
        if text not in shown:
            shown.add(text)
            print(f"spades {command}: note: {text}", file=sys.stderr, flush=True)

    return show


def main(argv: list[str] | None = None) -> int:
    """Entry point of the ``spades`` console script."""
    parser = build_parser()
    args = parser.parse_args(argv)
    if not getattr(args, "func", None):
        parser.print_help()
        return 2
    try:
        with warnings.catch_warnings():
            warnings.showwarning = _note_for(args.command)
            return int(args.func(args) or 0)
    except KeyboardInterrupt:
        print(f"spades {args.command}: interrupted (Ctrl-C)", file=sys.stderr, flush=True)
        return 130
    except Exception as exc:  # the package's own errors say what and where; others are bugs
        if not isinstance(exc, own_errors()):
            raise
        print(f"spades {args.command}: {one_line(exc)}", file=sys.stderr)
        return 2


if __name__ == "__main__":
    sys.exit(main())
