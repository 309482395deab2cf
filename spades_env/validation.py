"""Validation of input at the public boundaries: the typed checkers of
:mod:`spades_env.core.validate` (seats, cards, bids, scores and bags, counts, option values),
and the checks of paths that the CLI and the tools make before any long work starts.

Every check raises :class:`InputError` (a :class:`SpadesError`, so a ``ValueError``) naming
the input, the value and what is allowed, and changes nothing. Error types of the package,
all :class:`SpadesError` subclasses (and so ``ValueError``):

=======================  ================================================================
``InputError``           a bad argument (``InputTypeError``: of the wrong type, also a
                         ``TypeError``)
``RulesError``           a bad rules config or rules file (``spades_env.core.rules``)
``IllegalActionError``   an action that is not legal now (``spades_env.core.game``)
``DealError``            a preset deal that is not a deal (``spades_env.core.game``)
``RecordError``          a malformed record, or one the rules do not reproduce
                         (``spades_env.records``)
``PolicyNameError``      a policy name or option the bots registry refuses
                         (``spades_env.bots``)
=======================  ================================================================

Output paths: a folder (``--out``) may be missing (it is created, with its parents) but must
not be an existing file, nor lie under one; a file (``--record``) must be in an existing
folder and must not be a folder itself; an existing file is replaced. Both must be writable.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

from spades_env.core.validate import (
    MAX_COUNT,
    SCORE_LIMIT,
    InputError,
    InputTypeError,
    SpadesError,
    check_bags,
    check_bid,
    check_bool,
    check_card,
    check_choice,
    check_count,
    check_float,
    check_int,
    check_pair,
    check_scores,
    check_seat,
    check_seed,
    check_state_row,
    is_int,
    read_text_file,
)


def _as_path(path: Any, name: str) -> Path:
    if not isinstance(path, (str, os.PathLike)) or not str(path):
        raise InputError(f"{name} must be a path, got {path!r}")
    return Path(path)


def _nearest_existing(p: Path) -> Path:
    q = p.absolute()
    while not q.exists() and q != q.parent:
        q = q.parent
    return q


def check_output_dir(path: Any, name: str = "output folder") -> Path:
    """A folder to write into: it may be missing (it will be created) but must not be a file,
    nor lie under a file, and must be writable."""
    p = _as_path(path, name)
    if p.exists() and not p.is_dir():
        raise InputError(
            f"{name} {str(p)!r} exists and is not a folder; give a folder (it is created if missing)"
        )
    base = _nearest_existing(p)
    if not base.is_dir():
        raise InputError(f"{name} {str(p)!r} cannot be created: {str(base)!r} is a file, not a folder")
    if not os.access(base, os.W_OK | os.X_OK):
        raise InputError(f"{name} {str(p)!r}: the folder {str(base)!r} is not writable")
    return p


def check_output_file(path: Any, name: str = "output file") -> Path:
    """A file to write: its folder must exist and be writable; the path must not be a folder.
    An existing file is replaced."""
    p = _as_path(path, name)
    if p.is_dir():
        raise InputError(f"{name} {str(p)!r} is a folder; give a file name")
    parent = p.absolute().parent
    if not parent.exists():
        raise InputError(f"{name} {str(p)!r}: the folder {str(parent)!r} does not exist")
    if not parent.is_dir():
        raise InputError(f"{name} {str(p)!r}: {str(parent)!r} is not a folder")
    if p.exists() and not os.access(p, os.W_OK):
        raise InputError(f"{name} {str(p)!r} exists and is not writable")
    if not p.exists() and not os.access(parent, os.W_OK | os.X_OK):
        raise InputError(f"{name} {str(p)!r}: the folder {str(parent)!r} is not writable")
    return p


__all__ = [
    "MAX_COUNT",
    "SCORE_LIMIT",
    "InputError",
    "InputTypeError",
    "SpadesError",
    "check_bags",
    "check_bid",
    "check_bool",
    "check_card",
    "check_choice",
    "check_count",
    "check_float",
    "check_int",
    "check_output_dir",
    "check_output_file",
    "check_pair",
    "check_scores",
    "check_seat",
    "check_seed",
    "check_state_row",
    "is_int",
    "read_text_file",
]
