"""Checks of output paths that the CLI and the tools make before any long work starts.

A folder (``--out``) may be missing (it is created, with its parents) but must not be an
existing file, nor lie under one; a file (``--record``) must be in an existing folder and must
not be a folder itself; an existing file is replaced. Both must be writable. A bad path raises
:class:`~spades_env.core.validate.InputError` naming it, and nothing is written.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

from spades_env.core.validate import InputError


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
    _probe(base, p, name)
    return p


def _probe(base: Path, p: Path, name: str) -> None:
    """Write and remove a small file in ``base`` (the folder ``p`` will be made in): the one
    sure test of writability (``os.access`` says yes to root on a read-only file system, or
    where a quota or ACL refuses)."""
    import tempfile

    try:
        fd, tmp = tempfile.mkstemp(prefix=".spades-write-test-", dir=base)
        os.close(fd)
        os.unlink(tmp)
    except OSError as exc:
        raise InputError(
            f"{name} {str(p)!r}: cannot write in the folder {str(base)!r} ({exc.strerror or exc}); "
            "nothing was run"
        ) from None


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
    _probe(parent, p, name)
    return p


__all__ = ["check_output_dir", "check_output_file"]
