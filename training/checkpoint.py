"""Checkpoints: safetensors weights plus JSON metadata; loading never unpickles.

A checkpoint is a directory::

    model.safetensors    network weights (actor.*, critic.*)
    meta.json            format, observation version, action table, network shapes, rules,
                         training config, evaluation results, code revision, counters
    train_state.safetensors, train_state.json
                         (optional) everything needed to resume training exactly: optimizer
                         moments, torch and numpy generator states, the games in progress,
                         seat roles, the opponent pool, scripted bots' histories

Any of the three paths (the directory, ``model.safetensors`` or ``meta.json``) names the
checkpoint. A missing file, a corrupt file, another observation version or action table, or
weights of the wrong shape raise :class:`CheckpointError` naming the file and the problem.
Reading and checking the metadata, and playing a checkpoint without torch, is
:mod:`spades_env.policies.checkpoint` (NumPy only); this module adds the torch side: saving, the full
actor-critic network, the training state.
"""

from __future__ import annotations

import functools
import json
import math
import os
import shutil
import subprocess
import tempfile
import time
from pathlib import Path
from typing import Any

import torch
from safetensors import SafetensorError
from safetensors.torch import load_file, save_file

from spades_env.core.actions import NUM_ACTIONS
from spades_env.core.observation import OBS_SIZE, OBS_VERSION, STATE_VEC_SIZE
from spades_env.io.atomic import fsync_dir, new_mode, replace_dir, write_text
from spades_env.policies.checkpoint import (  # the torch-free half: constants, errors, metadata checks
    FORMAT,
    META_FILE,
    MODEL_FILE,
    OBS_SIZES,
    STATE_FILE,
    STATE_JSON,
    CheckpointError,
    action_table,
    checkpoint_dir,
    load_meta,
)
from spades_env.policies.checkpoint import read_json as _read_json
from training.network import ActorCritic

__all__ = [
    "FORMAT",
    "META_FILE",
    "MODEL_FILE",
    "OBS_SIZES",
    "STATE_FILE",
    "STATE_JSON",
    "CheckpointError",
    "action_table",
    "build_model",
    "checkpoint_dir",
    "load_checkpoint",
    "load_meta",
    "load_train_state",
    "save_checkpoint",
    "update_meta",
    "update_train_json",
]


@functools.lru_cache(maxsize=1)
def code_revision() -> str | None:
    """``git rev-parse HEAD`` of the source tree, when available (asked once per process)."""
    try:
        out = subprocess.run(
            ["git", "rev-parse", "HEAD"],
            cwd=Path(__file__).resolve().parent,
            capture_output=True,
            text=True,
            timeout=5,
            check=False,
        )
    except (OSError, subprocess.SubprocessError):
        return None
    return out.stdout.strip() or None if out.returncode == 0 else None


def json_safe(value: Any) -> Any:
    """``value`` with every NaN or infinite float replaced by None (checkpoint metadata is
    strict JSON: :mod:`spades_env.core.files` refuses ``NaN``), e.g. the accuracy of an empty
    validation split."""
    if isinstance(value, float):
        return value if math.isfinite(value) else None
    if isinstance(value, dict):
        return {k: json_safe(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [json_safe(v) for v in value]
    return value


def dump_json(value: Any, indent: int | None = None) -> str:
    """Strict JSON text of checkpoint metadata (non-finite floats as null)."""
    return json.dumps(json_safe(value), indent=indent, allow_nan=False) + "\n"


def save_checkpoint(
    path: str | Path,
    model: ActorCritic,
    meta: dict[str, Any],
    train_tensors: dict[str, torch.Tensor] | None = None,
    train_json: dict[str, Any] | None = None,
) -> Path:
    """Write a checkpoint directory atomically: every file into a hidden temporary directory
    beside ``path``, synced to disk, then the directory renamed into place (a process killed
    at any instant leaves ``path`` as it was, or complete)."""
    from training.runs import fault_point

    dest = Path(path)
    dest.parent.mkdir(parents=True, exist_ok=True)
    tmp = Path(tempfile.mkdtemp(prefix=f".{dest.name}.tmp.", dir=dest.parent))
    try:
        os.chmod(tmp, new_mode(folder=True))
        weights = {k: v.detach().cpu().contiguous() for k, v in model.state_dict().items()}
        save_file(weights, str(tmp / MODEL_FILE))
        fault_point("checkpoint:weights_written")
        full = {
            "format": FORMAT,
            "obs_version": OBS_VERSION,
            "obs_size": OBS_SIZE,
            "critic_size": STATE_VEC_SIZE,
            "actions": action_table(),
            "arch": model.arch(),
            "code_revision": code_revision(),
            "saved_at": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
            **meta,
        }
        (tmp / META_FILE).write_text(dump_json(full, indent=2))
        fault_point("checkpoint:meta_written")
        if train_tensors is not None:
            save_file(
                {k: v.detach().cpu().contiguous() for k, v in train_tensors.items()}, str(tmp / STATE_FILE)
            )
            fault_point("checkpoint:state_written")
            (tmp / STATE_JSON).write_text(dump_json(train_json or {}))
        for f in tmp.iterdir():
            with open(f, "rb") as fh:
                os.fsync(fh.fileno())
        fault_point("checkpoint:synced")
        replace_dir(tmp, dest)
    except BaseException:
        shutil.rmtree(tmp, ignore_errors=True)
        raise
    fsync_dir(dest.parent)
    return dest


def _read_tensors(path: Path) -> dict[str, torch.Tensor]:
    if not path.is_file():
        raise CheckpointError(f"{path}: missing file")
    try:
        return load_file(str(path))  # safetensors: no pickle
    except (SafetensorError, OSError, ValueError, RuntimeError) as exc:
        raise CheckpointError(f"{path}: corrupt safetensors file ({exc})") from None


def build_model(meta: dict[str, Any]) -> ActorCritic:
    """An untrained network of the shapes recorded in ``meta``."""
    a = meta["arch"]
    obs_size, critic_size = OBS_SIZES[meta.get("obs_version", OBS_VERSION)]
    return ActorCritic(
        obs_size, critic_size, NUM_ACTIONS, tuple(a["hidden"]), tuple(a["critic_hidden"]), a.get("score_clip")
    )


def load_weights(
    model: torch.nn.Module, tensors: dict[str, torch.Tensor], where: Path, prefix: str = ""
) -> None:
    """Copy ``tensors`` (keys ``prefix + name``) into ``model``, checking names and shapes."""
    own = model.state_dict()
    have = {k[len(prefix) :]: v for k, v in tensors.items() if k.startswith(prefix)}
    missing = sorted(set(own) - set(have))
    extra = sorted(set(have) - set(own))
    if missing or extra:
        raise CheckpointError(
            f"{where}: weights do not match the network: missing {missing[:4]}, unexpected {extra[:4]}"
        )
    for k, v in own.items():
        if tuple(have[k].shape) != tuple(v.shape) or have[k].dtype != v.dtype:
            raise CheckpointError(
                f"{where}: weight {prefix}{k} has shape {tuple(have[k].shape)} {have[k].dtype}, "
                f"the network expects {tuple(v.shape)} {v.dtype}"
            )
    model.load_state_dict(have)


def load_checkpoint(path: str | Path) -> tuple[ActorCritic, dict[str, Any]]:
    """The network and metadata of a checkpoint (checked; never unpickles)."""
    d = checkpoint_dir(path)
    meta = load_meta(d)
    model = build_model(meta)
    load_weights(model, _read_tensors(d / MODEL_FILE), d / MODEL_FILE)
    model.eval()
    return model, meta


def load_train_state(path: str | Path) -> tuple[dict[str, torch.Tensor], dict[str, Any]]:
    """The resume state of a checkpoint (tensors, JSON); an error if it was saved without one."""
    d = checkpoint_dir(path)
    if not (d / STATE_FILE).is_file():
        raise CheckpointError(f"{d / STATE_FILE}: missing file (this checkpoint cannot resume training)")
    return _read_tensors(d / STATE_FILE), _read_json(d / STATE_JSON)


def update_meta(path: str | Path, **fields: Any) -> None:
    """Add or replace top-level metadata fields (e.g. evaluation results) in place."""
    d = checkpoint_dir(path)
    meta = _read_json(d / META_FILE)
    meta.update(fields)
    write_text(d / META_FILE, dump_json(meta, indent=2))


def update_train_json(path: str | Path, **fields: Any) -> None:
    """Add or replace fields of a checkpoint's ``train_state.json`` (atomically)."""
    d = checkpoint_dir(path)
    js = _read_json(d / STATE_JSON)
    js.update(fields)
    write_text(d / STATE_JSON, dump_json(js))
