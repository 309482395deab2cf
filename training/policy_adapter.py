"""A checkpoint as a :class:`spades_env.policies.base.Policy`: ``load_policy("checkpoints/x")``.

The arena and ``spades play`` take a checkpoint by path: ``spades_env.eval.resolve_policy``
hands path-like names to ``spades_env.policies.checkpoint.load_policy``, a torch-free shim that imports
this module only then. The policy samples from the masked softmax with its own seeded
generator (``deterministic=True``: the most likely legal action).
"""

from __future__ import annotations

import threading
from pathlib import Path
from typing import Any

import numpy as np
import torch

from spades_env.core.observation import OBS_VERSION, convert_observation
from spades_env.core.rules import RulesConfig
from spades_env.policies.checkpoint import play_settings
from training.checkpoint import checkpoint_dir, load_checkpoint
from training.network import ActorCritic, masked_logits

_CACHE: dict[tuple[str, int], tuple[ActorCritic, dict[str, Any]]] = {}
_LOCK = threading.Lock()


def _cached(path: str | Path) -> tuple[ActorCritic, dict[str, Any]]:
    d = checkpoint_dir(path).resolve()
    key = (str(d), (d / "model.safetensors").stat().st_mtime_ns if (d / "model.safetensors").exists() else 0)
    with _LOCK:
        if key not in _CACHE:
            if len(_CACHE) > 16:
                _CACHE.clear()
            _CACHE[key] = load_checkpoint(d)
        return _CACHE[key]


class CheckpointPolicy:
    """A trained actor playing one seat from its observation (Policy protocol)."""

    def __init__(
        self,
        model: ActorCritic,
        seed: int | None = None,
        deterministic: bool = False,
        name: str = "checkpoint",
        meta: dict[str, Any] | None = None,
    ) -> None:
        self.model = model
        self.deterministic = deterministic
        self.name = name
        self.meta = meta or {}
        self.rng = np.random.default_rng(seed)
        self.obs_version = int(self.meta.get("obs_version", OBS_VERSION))

    def act(self, observation: np.ndarray, action_mask: np.ndarray) -> int:
        """The action for one seat: sampled (or argmax) from the masked policy."""
        mask = np.asarray(action_mask)
        if not mask.any():
            raise ValueError(f"{self.name}: the action mask has no legal action")
        with torch.no_grad():
            x = np.asarray(observation, dtype=np.float32)
            if self.obs_version != OBS_VERSION:
                x = convert_observation(x, self.obs_version)
            obs = torch.as_tensor(np.ascontiguousarray(x)).reshape(1, -1)
            logits = masked_logits(self.model.actor(obs), torch.as_tensor(mask).reshape(1, -1))[0]
        if self.deterministic:
            return int(torch.argmax(logits))
        p = torch.softmax(logits.double(), -1).numpy()
        p[mask == 0] = 0.0
        p /= p.sum()
        return int(self.rng.choice(p.size, p=p))


def load_policy(
    path: str | Path,
    seed: int | None = None,
    rules: RulesConfig | str | dict | None = None,
    deterministic: bool | None = None,
) -> CheckpointPolicy:
    """A Policy from a checkpoint path (directory, ``model.safetensors`` or ``meta.json``);
    ``rules``, when given, must have the checkpoint's number of players. ``deterministic``
    None: as the checkpoint's ``meta.json`` says (``policy.deterministic``, default false)."""
    model, meta = _cached(path)
    deterministic = play_settings(path, meta, rules, deterministic)
    return CheckpointPolicy(model, seed=seed, deterministic=deterministic, name=str(path), meta=meta)
