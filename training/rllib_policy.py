"""A trained RLlib module as a :class:`spades_env.policies.base.Policy`, for the arena and ``play``.

:func:`export_module` writes one RLModule of a trained RLlib algorithm (or of an RLlib
checkpoint directory) as the project's checkpoint shape: ``model.safetensors`` (the module's
torch weights) and ``meta.json`` (module id, layer sizes, rules, observation size, Ray
version). :func:`load_rllib_policy` rebuilds RLlib's masked PPO module from that metadata and
loads the weights, so loading never unpickles (an RLlib checkpoint itself holds pickles:
:func:`export_module` reads one only when given a path, so export only checkpoints you trust).

Needs the ``rllib`` extra (Ray and torch)::

    from training.rllib_policy import load_rllib_policy
    from spades_env.eval import run_duplicate, summarize
    policy = functools.partial(load_rllib_policy, "runs/rllib/export/shared")  # f(seed, rules)
    boards = run_duplicate((policy, policy), ("random", "random"), 8)
"""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path
from typing import Any

import numpy as np
import torch

FORMAT = "spades-rllib-masked-ppo/1"


def _json_safe(config: Any) -> dict[str, Any]:
    """The plain (JSON) entries of an RLModule's model config."""
    items = dataclasses.asdict(config) if dataclasses.is_dataclass(config) else dict(config or {})
    out = {}
    for k, v in items.items():
        try:
            json.dumps(v)
        except TypeError:
            continue
        out[k] = v
    return out


def export_module(
    source: Any,
    module_id: str,
    out: str | Path,
    hidden: list[int] | tuple[int, ...],
    rules: str = "tournament",
    extra: dict[str, Any] | None = None,
) -> Path:
    """Write module ``module_id`` of ``source`` (an RLlib ``Algorithm``, or the path of an
    RLlib algorithm checkpoint) to the directory ``out``; returns ``out``."""
    import ray

    if isinstance(source, (str, Path)):
        from ray.rllib.core.rl_module.rl_module import RLModule

        path = Path(source).resolve() / "learner_group" / "learner" / "rl_module" / module_id
        if not path.is_dir():
            raise FileNotFoundError(f"{source}: no module {module_id!r} in this RLlib checkpoint ({path})")
        module = RLModule.from_checkpoint(path)
    else:
        module = source.get_module(module_id)
        if module is None:
            raise KeyError(f"the algorithm has no module {module_id!r}")
    from safetensors.torch import save_file

    from spades_env.core.observation import OBS_SIZE

    out = Path(out)
    out.mkdir(parents=True, exist_ok=True)
    state = {k: v.detach().cpu().contiguous() for k, v in module.state_dict().items()}
    save_file(state, str(out / "model.safetensors"))
    meta = {
        "format": FORMAT,
        "module_id": module_id,
        "hidden": list(hidden),
        "model_config": _json_safe(module.model_config),
        "rules": rules,
        "obs_size": int(OBS_SIZE),
        "ray_version": ray.__version__,
        **(extra or {}),
    }
    (out / "meta.json").write_text(json.dumps(meta, indent=2) + "\n")
    return out


class RLlibPolicy:
    """An RLlib masked PPO module playing one seat (Policy protocol): the most likely legal
    action (``deterministic=True``), or a sample of the masked softmax."""

    def __init__(self, module: Any, deterministic: bool = True, seed: int | None = None, name: str = "rllib"):
        self.module = module
        self.deterministic = deterministic
        self.rng = np.random.default_rng(seed)
        self.name = name

    def act(self, observation: np.ndarray, action_mask: np.ndarray) -> int:
        mask = np.asarray(action_mask)
        if not mask.any():
            raise ValueError(f"{self.name}: the action mask has no legal action")
        batch = {
            "obs": {
                "observations": torch.as_tensor(np.asarray(observation, dtype=np.float32)).reshape(1, -1),
                "action_mask": torch.as_tensor(mask.astype(np.float32)).reshape(1, -1),
            }
        }
        with torch.no_grad():
            logits = self.module.forward_inference(batch)["action_dist_inputs"][0].double().numpy()
        logits = np.where(mask > 0, logits, -np.inf)
        if self.deterministic:
            return int(np.argmax(logits))
        p = np.exp(logits - logits.max())
        p /= p.sum()
        return int(self.rng.choice(p.size, p=p))


def load_rllib_policy(
    path: str | Path, seed: int | None = None, rules: Any = None, deterministic: bool = True
) -> RLlibPolicy:
    """A Policy from a directory written by :func:`export_module`; the signature fits the
    arena's factories ``f(seed, rules)`` (with ``functools.partial(load_rllib_policy, path)``)."""
    from gymnasium import spaces
    from ray.rllib.examples.rl_modules.classes.action_masking_rlm import ActionMaskingTorchRLModule
    from safetensors.torch import load_file

    from spades_env.core.actions import NUM_ACTIONS
    from spades_env.core.observation import OBS_SIZE
    from spades_env.integrations.rllib import masked_observation_space, model_config

    d = Path(path)
    try:
        meta = json.loads((d / "meta.json").read_text())
    except (OSError, json.JSONDecodeError) as exc:
        raise ValueError(f"{d}: not an exported RLlib policy (meta.json: {exc})") from None
    if meta.get("format") != FORMAT:
        raise ValueError(f"{d}/meta.json: format {meta.get('format')!r}, expected {FORMAT!r}")
    if meta.get("obs_size") != OBS_SIZE:
        raise ValueError(
            f"{d}: trained on observations of size {meta.get('obs_size')}, this spades_env encodes {OBS_SIZE}"
        )
    aec_space = spaces.Dict(
        {
            "observation": spaces.Box(-np.inf, np.inf, (OBS_SIZE,), dtype=np.float32),
            "action_mask": spaces.Box(0, 1, (NUM_ACTIONS,), dtype=np.int8),
        }
    )
    module = ActionMaskingTorchRLModule(
        observation_space=masked_observation_space(aec_space),
        action_space=spaces.Discrete(NUM_ACTIONS),
        model_config=meta.get("model_config") or model_config(meta["hidden"]),
    )
    module.load_state_dict(load_file(str(d / "model.safetensors")))
    module.eval()
    return RLlibPolicy(module, deterministic=deterministic, seed=seed, name=f"rllib:{meta['module_id']}")
