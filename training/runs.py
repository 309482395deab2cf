"""Run folders that survive faults: what a PPO run writes, in which order, and how it resumes.

A run folder (``runs/<name>``)::

    config.json          the config in effect (rewritten, atomically, on every start)
    history.jsonl        one row per update, appended and flushed
    checkpoints/
        ckpt_NNNNNN/     complete checkpoints (built in a hidden folder, then renamed)
        latest           a symbolic link to the newest ckpt_NNNNNN (replaced in one step)
    final/               a copy of the last checkpoint (built beside it, then renamed)

The guarantees (``docs/training.md``, "Runs that survive faults"):

* **Nothing is half written.** Every file is written to a temporary path and renamed
  (:mod:`spades_env.io.atomic`); a checkpoint is built in a hidden folder (its evaluation
  included) and renamed into ``ckpt_NNNNNN``; ``latest`` is a pointer replaced in one step.
  A process killed at any instant leaves the previous checkpoints whole, plus hidden leftovers
  that the next start removes.
* **The history has no hole.** Row ``k`` is appended (and synced) before checkpoint ``k``
  exists, so every checkpoint's rows are on disk; resuming from checkpoint ``k`` keeps rows
  ``1..k`` (dropping a torn last line and the rows the killed process wrote after ``k``, which
  the resumed run writes again) and says so.
* **Resume finds the newest intact checkpoint** (``--resume`` without a path, ``latest``, or
  the run folder) and says which; a checkpoint that does not load is set aside as
  ``ckpt_NNNNNN.broken`` and named.
* **A run folder that holds a run is not overwritten** unless asked (``overwrite``); a resume
  whose config differs from the checkpoint's is refused unless asked (``allow_changes``), and
  then the new values take effect and ``config.json`` records them.
* **Ctrl-C** ends the run at the end of the update in progress with a checkpoint and one line
  (:class:`TrainingInterrupted`; ``python -m training.ppo`` exits with status 130).

:func:`set_fault_hook` lets a test stop the process at each write point (``tests/training/
test_faults.py`` kills runs there and at random instants, and checks all of the above).
"""

from __future__ import annotations

import json
import os
import re
import shutil
import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import Any

from spades_env.io.atomic import fsync_dir, replace_dir, write_text
from training.checkpoint import (
    MODEL_FILE,
    STATE_FILE,
    STATE_JSON,
    CheckpointError,
    _read_json,
    _read_tensors,
    load_meta,
)
from training.config import ConfigError

CKPT_RE = re.compile(r"^ckpt_(\d{6,})$")
LATEST = "latest"
RUN_FILES = ("config.json", "history.jsonl", "checkpoints", "final", "tb", "learning_curve.png")
"""What a PPO run writes in its folder (``overwrite`` removes these, nothing else)."""
FREE_KEYS = frozenset(
    {"run_name", "progress", "tensorboard", "eval_workers", "torch_threads", "max_minutes", "keep_checkpoints"}
)
"""Config keys a resume may change without ``allow_changes``: how the run is shown or paced,
not what it computes."""
FIXED_KEYS = ("seed", "num_envs", "hidden", "critic_hidden", "score_clip", "init_from", "init_logit_scale", "pool_start")
"""Config keys a resume can never change: they shape the run's start or its saved state."""


class RunFolderError(ConfigError):
    """A run folder that holds another run, a resume that changes the config, or nothing to
    resume from (the message says what to pass)."""


class NonFiniteError(RuntimeError):
    """Training produced a non-finite loss, gradient or weight; nothing of it was saved."""


class TrainingInterrupted(KeyboardInterrupt):
    """Ctrl-C: the run stopped at the end of an update with a checkpoint (``.checkpoint``)."""

    def __init__(self, message: str, checkpoint: Path | None) -> None:
        super().__init__(message)
        self.message = message
        self.checkpoint = checkpoint


# ---- fault injection (tests) ------------------------------------------------------------
_fault_hook: Callable[[str], None] | None = None


def set_fault_hook(hook: Callable[[str], None] | None) -> None:
    """Call ``hook(point)`` at every write point of a run (None: none). A test's hook may end
    the process there (``os._exit``), as a kill at that instant would."""
    global _fault_hook
    _fault_hook = hook


def fault_point(name: str) -> None:
    """A write point: where a kill is injected in the fault tests."""
    if _fault_hook is not None:
        _fault_hook(name)


# ---- checkpoints in a run folder --------------------------------------------------------
def numbered(ckdir: Path) -> list[tuple[int, Path]]:
    """The ``ckpt_NNNNNN`` folders of ``ckdir`` by update, oldest first."""
    if not ckdir.is_dir():
        return []
    out = []
    for p in ckdir.iterdir():
        m = CKPT_RE.match(p.name)
        if m and p.is_dir() and not p.is_symlink():
            out.append((int(m.group(1)), p))
    return sorted(out)


def check_intact(path: Path) -> int:
    """The update of a checkpoint that can resume training (every file present and loading),
    else a CheckpointError naming the problem."""
    meta = load_meta(path)
    _read_tensors(path / MODEL_FILE)
    if not (path / STATE_FILE).is_file():
        raise CheckpointError(f"{path / STATE_FILE}: missing file (this checkpoint cannot resume training)")
    _read_tensors(path / STATE_FILE)
    js = _read_json(path / STATE_JSON)
    update = js.get("update")
    if not isinstance(update, int) or update != meta.get("update"):
        raise CheckpointError(f"{path / STATE_JSON}: update {update!r} differs from meta.json's")
    return update


def newest_intact(run: Path, log: Callable[[str], None] = print) -> tuple[Path, int] | None:
    """The newest checkpoint of a run folder that loads (and its update), or None. Checkpoints
    that do not load are renamed ``ckpt_NNNNNN.broken`` and named in ``log``."""
    ckdir = run / "checkpoints"
    for update, path in reversed(numbered(ckdir)):
        try:
            check_intact(path)
        except CheckpointError as exc:
            broken = path.with_name(path.name + ".broken")
            shutil.rmtree(broken, ignore_errors=True)
            os.replace(path, broken)
            log(f"{path} does not load ({exc}); set aside as {broken.name}")
            continue
        return path, update
    # a folder of the old layout: a real ``latest`` copy only
    latest = ckdir / LATEST
    if latest.is_dir() and not latest.is_symlink():
        try:
            return latest, check_intact(latest)
        except CheckpointError as exc:
            log(f"{latest} does not load ({exc})")
    return None


def remove_leftovers(ckdir: Path) -> None:
    """Delete what a killed process left half done: hidden temporary folders and files."""
    if not ckdir.is_dir():
        return
    for p in ckdir.iterdir():
        if p.name.startswith("."):
            if p.is_dir() and not p.is_symlink():
                shutil.rmtree(p, ignore_errors=True)
            else:
                p.unlink(missing_ok=True)


def staging_path(ckdir: Path, update: int) -> Path:
    """The hidden folder a checkpoint is built in (``.staging.ckpt_NNNNNN``)."""
    return ckdir / f".staging.ckpt_{update:06d}"


def point_latest(ckdir: Path, target: Path) -> None:
    """``latest`` -> ``target`` in one step (a symbolic link replaced by rename; where the file
    system has no links, a copy built beside it and renamed)."""
    latest = ckdir / LATEST
    tmp = ckdir / f".{LATEST}.tmp.{os.getpid()}"
    try:
        if tmp.is_symlink() or tmp.exists():
            tmp.unlink()
        os.symlink(target.name, tmp, target_is_directory=True)
    except OSError:
        copy_dir(target, latest)
        return
    if latest.is_dir() and not latest.is_symlink():  # the old layout: a copy
        old = Path(tempfile.mkdtemp(prefix=f".{LATEST}.old.", dir=ckdir))
        os.replace(latest, old / LATEST)
        shutil.rmtree(old, ignore_errors=True)
    os.replace(tmp, latest)
    fsync_dir(ckdir)


def publish(ckdir: Path, staged: Path, update: int, keep: int) -> Path:
    """Rename a built checkpoint into ``ckpt_NNNNNN``, point ``latest`` at it, and delete the
    numbered checkpoints beyond the newest ``keep`` (renamed aside before deletion)."""
    dest = ckdir / f"ckpt_{update:06d}"
    fault_point("checkpoint:before_rename")
    replace_dir(staged, dest)
    fault_point("checkpoint:renamed")
    point_latest(ckdir, dest)
    fault_point("latest:pointed")
    for _, old in numbered(ckdir)[: -max(keep, 1)]:
        if old == dest:
            continue
        trash = ckdir / f".trash.{old.name}"
        os.replace(old, trash)
        fault_point("prune:renamed")
        shutil.rmtree(trash, ignore_errors=True)
    return dest


def copy_dir(src: Path, dest: Path) -> Path:
    """A copy of the folder ``src`` at ``dest``, built beside it and renamed (never half)."""
    tmp = Path(tempfile.mkdtemp(prefix=f".{dest.name}.tmp.", dir=dest.parent))
    try:
        shutil.copytree(src, tmp / "x")
        fault_point("copy:built")
        replace_dir(tmp / "x", dest)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    return dest


# ---- history -----------------------------------------------------------------------------
def read_history(path: Path) -> tuple[list[dict[str, Any]], int]:
    """The rows of ``history.jsonl`` and the number of lines that did not parse (a torn write)."""
    if not path.is_file():
        return [], 0
    rows, bad = [], 0
    for line in path.read_text(errors="replace").splitlines():
        if not line.strip():
            continue
        try:
            row = json.loads(line)
        except ValueError:
            bad += 1
            continue
        if isinstance(row, dict) and isinstance(row.get("update"), int):
            rows.append(row)
        else:
            bad += 1
    return rows, bad


def append_row(f, row: dict[str, Any], sync: bool) -> None:
    """Append one row to an open history file (flushed; synced to disk when ``sync``)."""
    f.write(json.dumps(row) + "\n")
    f.flush()
    if sync:
        os.fsync(f.fileno())
    fault_point("history:appended")


def _rows_to(rows: list[dict[str, Any]], update: int) -> dict[int, dict[str, Any]]:
    return {r["update"]: r for r in rows if r["update"] <= update}


def reconcile_history(run: Path, update: int, source: Path | None, log: Callable[[str], None]) -> None:
    """Make ``history.jsonl`` hold exactly rows ``1..update`` before a resume from checkpoint
    ``update``: drop torn lines and later rows (the resumed run writes them again), and take
    missing rows from the checkpoint's own run folder when it is another one (``source``)."""
    path = run / "history.jsonl"
    rows, bad = read_history(path)
    keep = _rows_to(rows, update)
    later = sum(1 for r in rows if r["update"] > update)
    taken = 0
    if source is not None and source.resolve() != path.resolve():
        for u, r in _rows_to(read_history(source)[0], update).items():
            if u not in keep:
                keep[u] = r
                taken += 1
    missing = [u for u in range(1, update + 1) if u not in keep]
    if keep or path.exists():
        write_text(path, "".join(json.dumps(keep[u]) + "\n" for u in sorted(keep)))
    notes = []
    if later:
        notes.append(f"dropped {later} rows after update {update} (written again now)")
    if bad:
        notes.append(f"dropped {bad} torn line{'s' if bad > 1 else ''}")
    if taken:
        notes.append(f"took {taken} rows from {source}")
    if missing:
        notes.append(f"rows of updates {_spans(missing)} are missing (not in any history file)")
    if notes:
        log(f"history.jsonl: {'; '.join(notes)}")


def _spans(nums: list[int]) -> str:
    out, start = [], None
    for i, n in enumerate(nums):
        if start is None:
            start = n
        if i + 1 == len(nums) or nums[i + 1] != n + 1:
            out.append(str(start) if start == n else f"{start}-{n}")
            start = None
    return ", ".join(out)


# ---- starting a run ------------------------------------------------------------------------
def holds_run(run: Path) -> str | None:
    """A short description of the run a folder holds, or None when it holds none."""
    if not run.is_dir():
        return None
    found = [name for name in RUN_FILES if (run / name).exists() or (run / name).is_symlink()]
    if not found:
        return None
    ck = numbered(run / "checkpoints")
    where = f"checkpoints up to update {ck[-1][0]}" if ck else "no checkpoint"
    return f"{', '.join(found)}; {where}"


DATA_RUN_FILES = ("config.json", "data", "final", "history.json")
"""What a behaviour-cloning or rollout run writes in its folder (``overwrite`` removes these)."""


def claim_data_folder(
    out: Path, config: dict[str, Any], overwrite: bool, command: str, extend: frozenset[str] = frozenset()
) -> None:
    """Start a chunked data run (``training.bc``, ``training.rollouts``) in ``out``. A folder
    whose ``config.json`` holds the same settings (but for :data:`FREE_KEYS`, ``workers`` and
    the ``extend`` keys, counts a longer run may raise: the chunks made are kept and more are
    added) is continued: its chunks are reused. A folder that holds a run with other settings is
    refused (its final network and history would be replaced by another run's) unless
    ``overwrite``, which removes what that run wrote (:data:`DATA_RUN_FILES`)."""
    from spades_env.core.files import read_json_file
    from spades_env.core.validate import SpadesError

    cfg_file = out / "config.json"
    if not cfg_file.is_file():
        return
    try:
        old = read_json_file(cfg_file, f"{command} run config")
    except SpadesError as exc:
        old = {"<unreadable>": str(exc)}
    free = FREE_KEYS | {"workers"} | extend
    new = json.loads(json.dumps(config, default=str))  # as config.json holds it (lists, not tuples)
    changes = {k: v for k, v in config_changes(old if isinstance(old, dict) else {}, new, {}).items() if k not in free}
    if not changes:
        return
    if not overwrite:
        shown = "; ".join(f"{k}: {_show(a)} -> {_show(b)}" for k, (a, b) in sorted(changes.items())[:6])
        more = f" and {len(changes) - 6} more" if len(changes) > 6 else ""
        raise RunFolderError(
            f"{out} holds a {command} run with other settings ({shown}{more}): give another --out, "
            "or --overwrite to replace that run"
        )
    for name in DATA_RUN_FILES:
        p = out / name
        if p.is_dir() and not p.is_symlink():
            shutil.rmtree(p)
        elif p.exists() or p.is_symlink():
            p.unlink()


def config_changes(old: dict[str, Any], new: dict[str, Any], defaults: dict[str, Any]) -> dict[str, tuple[Any, Any]]:
    """``{key: (checkpoint's value, new value)}`` for every key that differs (a key the
    checkpoint predates counts as its default)."""
    out = {}
    for k, v in new.items():
        was = old.get(k, defaults.get(k))
        if was != v:
            out[k] = (was, v)
    return out


def _show(v: Any) -> str:
    s = json.dumps(v)
    return s if len(s) <= 60 else s[:57] + "..."


def prepare(
    cfg: Any,
    run: Path,
    resume: str | Path | bool | None,
    overwrite: bool,
    allow_changes: bool,
    log: Callable[[str], None],
) -> tuple[Path | None, dict[str, tuple[Any, Any]]]:
    """Check the run folder and the resume before anything is written; returns the checkpoint
    to resume from (None: a new run) and the config changes allowed on resume."""
    from training.config import config_to_dict

    run.mkdir(parents=True, exist_ok=True)
    ckdir = run / "checkpoints"
    held = holds_run(run)
    ckpt: Path | None = None
    if resume is not None and resume is not False:
        source = run  # the run folder whose newest intact checkpoint is meant, if any
        if resume is True or str(resume) in ("latest", "auto"):
            pass
        else:
            p = Path(resume)
            if p.name == LATEST and p.parent.name == "checkpoints":  # a run's latest: its newest intact
                source = p.parent.parent
            elif p.resolve() != run.resolve():
                source = None
                ckpt = p.parent if p.is_file() else p
        if source is not None:
            if source.resolve() == run.resolve():
                remove_leftovers(ckdir)
            found = newest_intact(source, log)
            if found is None:
                raise RunFolderError(
                    f"{source}: no intact checkpoint to resume from"
                    + (f" ({held})" if held and source.resolve() == run.resolve() else "")
                    + ("; start a new run with --overwrite" if source.resolve() == run.resolve() else "")
                )
            ckpt = found[0]
            log(f"resuming from {ckpt} (update {found[1]}), the newest intact checkpoint of {source}")
    assert ckpt is None or isinstance(ckpt, Path)
    inside = ckpt is not None and ckpt.resolve().parent == ckdir.resolve()
    if held and not inside and not overwrite:
        what = "resume" if ckpt is None else f"resume from another run's checkpoint {ckpt}"
        raise RunFolderError(
            f"{run} holds a run ({held}): pass --resume to continue it, or --overwrite to "
            f"delete it and {'start over' if ckpt is None else what}"
        )
    changes: dict[str, tuple[Any, Any]] = {}
    if ckpt is not None:
        meta = load_meta(ckpt)
        update = meta.get("update", 0)
        have = meta.get("config")
        if isinstance(have, dict):
            changes = config_changes(have, config_to_dict(cfg), config_to_dict(type(cfg)()))
        fixed = [k for k in FIXED_KEYS if k in changes]
        if fixed:
            raise RunFolderError(
                f"{ckpt}: a resume cannot change {', '.join(fixed)} (the checkpoint's "
                + ", ".join(f"{k}={_show(changes[k][0])}" for k in fixed)
                + "); start a new run for that"
            )
        settings = {k: v for k, v in changes.items() if k not in FREE_KEYS}
        if settings and not allow_changes:
            raise RunFolderError(
                f"resuming {ckpt} with settings that differ from its run's: "
                + ", ".join(f"{k} {_show(a)} -> {_show(b)}" for k, (a, b) in settings.items())
                + "; pass --allow-changes to resume with the new values, or drop the --set"
            )
        if settings:
            log("resuming with changed settings: " + ", ".join(f"{k} {_show(a)} -> {_show(b)}" for k, (a, b) in settings.items()))
        if inside:
            later = [(u, p) for u, p in numbered(ckdir) if u > update]
            if later and not overwrite:
                raise RunFolderError(
                    f"{run} has checkpoints after update {update} ({', '.join(p.name for _, p in later)}): "
                    "resume from the newest (--resume), or pass --overwrite to delete them"
                )
            for _, p in later:
                shutil.rmtree(p)
                log(f"deleted {p} (after the resumed update {update}; --overwrite)")
        remove_leftovers(ckdir)
        src_hist = ckpt.resolve().parent.parent / "history.jsonl" if ckpt.resolve().parent.name == "checkpoints" else None
        reconcile_history(run, update, src_hist, log)
    elif held:  # overwrite
        for name in RUN_FILES:
            p = run / name
            if p.is_symlink() or p.is_file():
                p.unlink()
            elif p.is_dir():
                shutil.rmtree(p)
        log(f"{run}: deleted the run it held ({held}; --overwrite)")
    write_text(run / "config.json", json.dumps(config_to_dict(cfg), indent=2) + "\n")
    fault_point("config:written")
    return ckpt, changes


__all__ = [
    "NonFiniteError",
    "RunFolderError",
    "TrainingInterrupted",
    "append_row",
    "check_intact",
    "copy_dir",
    "holds_run",
    "newest_intact",
    "prepare",
    "publish",
    "read_history",
    "reconcile_history",
    "set_fault_hook",
]
