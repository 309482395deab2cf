"""Writes that a crash cannot leave half done: a temporary path in the same folder, renamed.

A reader of ``path`` sees the old file or the new one, never a part of either: the data goes to
a hidden temporary file beside ``path`` (same file system), is flushed and ``fsync``'d, and
``os.replace`` puts it in place in one step (the folder is ``fsync``'d too where the system
allows, so the rename itself survives a power cut). A process killed before the rename leaves
a hidden ``.<name>.tmp.*`` file and ``path`` as it was.

:func:`replace_dir` does the same for a folder whose content was built beside it.
"""

from __future__ import annotations

import os
import shutil
import tempfile
from pathlib import Path

__all__ = ["fsync_dir", "new_mode", "replace_dir", "write_bytes", "write_text"]


def new_mode(folder: bool = False) -> int:
    """The mode a new file (or folder) gets under the process's umask (temporary files are
    created private; they are given this before the rename)."""
    mask = os.umask(0o022)
    os.umask(mask)
    return (0o777 if folder else 0o666) & ~mask


def fsync_dir(folder: str | Path) -> None:
    """``fsync`` a folder (its entries: renames, new files); a no-op where the system cannot."""
    try:
        fd = os.open(folder, os.O_RDONLY)
    except OSError:
        return
    try:
        os.fsync(fd)
    except OSError:
        pass
    finally:
        os.close(fd)


def write_bytes(path: str | Path, data: bytes) -> Path:
    """Write ``data`` to ``path`` atomically (temporary file in the same folder, then rename)."""
    dest = Path(path)
    fd, tmp = tempfile.mkstemp(prefix=f".{dest.name}.tmp.", dir=dest.parent)
    try:
        os.chmod(tmp, new_mode())
        with os.fdopen(fd, "wb") as f:
            f.write(data)
            f.flush()
            os.fsync(f.fileno())
        os.replace(tmp, dest)
    except BaseException:
        try:
            os.unlink(tmp)
        except OSError:
            pass
        raise
    fsync_dir(dest.parent)
    return dest


def write_text(path: str | Path, text: str) -> Path:
    """Write ``text`` (UTF-8) to ``path`` atomically."""
    return write_bytes(path, text.encode("utf-8"))


def replace_dir(src: str | Path, dest: str | Path) -> Path:
    """Put the folder ``src`` (complete, on the same file system) at ``dest``, replacing any
    folder there. ``dest`` is never a mix of the two: while the old folder is moved aside it is
    absent for an instant (as ``.<name>.old.*`` beside it), then whole."""
    s, d = Path(src), Path(dest)
    fsync_dir(s)
    if d.is_symlink() or d.is_file():
        d.unlink()
    if d.exists():
        old = Path(tempfile.mkdtemp(prefix=f".{d.name}.old.", dir=d.parent))
        os.replace(d, old / d.name)
        os.replace(s, d)
        shutil.rmtree(old, ignore_errors=True)
    else:
        os.replace(s, d)
    fsync_dir(d.parent)
    return d
