"""Checkpoints of a PPO run and exact resume.

A checkpoint (:mod:`training.checkpoint`: safetensors + JSON, never a pickle) holds the weights,
Adam's moments, the torch and numpy generator states, the games in progress (their state rows,
seeds and, under a rules family, which rules each plays), the seat roles, the snapshot pool,
and each scripted bot's seed and the observations it has seen this hand (bots are re-created
every hand, so a restored bot is rebuilt by replaying them). Resuming from the checkpoint of
update ``k`` and running to ``n`` gives the same weights as running to ``n`` at once.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any

import torch

from training.checkpoint import (
    CheckpointError,
    _read_tensors,
    checkpoint_dir,
    load_meta,
    load_train_state,
    load_weights,
    save_checkpoint,
)
from training.config import config_to_dict

if TYPE_CHECKING:
    from training.ppo import Trainer


def init_weights(model: torch.nn.Module, cfg: Any, path: str | Path) -> None:
    """Start from a checkpoint's weights (``init_from``; network shapes must match the config's)."""
    d = checkpoint_dir(path)
    arch = load_meta(d).get("arch", {})
    want = {"hidden": list(cfg.hidden), "critic_hidden": list(cfg.critic_hidden)}
    if arch.get("hidden") != want["hidden"] or arch.get("critic_hidden") != want["critic_hidden"]:
        raise CheckpointError(
            f"{d / 'meta.json'}: init_from network shapes {arch} differ from the config's "
            f"hidden {want['hidden']} / critic_hidden {want['critic_hidden']}"
        )
    load_weights(model, _read_tensors(d / "model.safetensors"), d / "model.safetensors")


def run_meta(tr: Trainer) -> dict[str, Any]:
    """The JSON metadata of a checkpoint of the run (rules, config, evaluations...)."""
    meta = {
        "rules": tr.rules.to_dict(),
        "config": config_to_dict(tr.cfg),
        "policy": {"deterministic": tr.cfg.deterministic},
        "update": tr.update,
        "decisions": tr.decisions,
        "evaluation": tr.eval_results,
    }
    if len(tr.engine.rules_family) > 1:
        meta["rules_family"] = [r.to_dict() for r in tr.engine.rules_family]
        meta["rules_weights"] = [float(w) for w in tr.engine.rules_weights]
    return meta


def save(tr: Trainer, path: str | Path) -> Path:
    """A checkpoint of ``tr`` with everything needed to resume exactly."""
    tensors: dict[str, torch.Tensor] = {}
    opt = tr.optimizer.state_dict()
    for idx, st in opt["state"].items():
        for name, val in st.items():
            tensors[f"optim.{idx}.{name}"] = torch.as_tensor(val)
    tensors["rng.torch"] = tr.gen.get_state()
    tensors["rng.torch_global"] = torch.get_rng_state()
    e = tr.engine
    tensors["env.states"] = torch.from_numpy(e.states.copy())
    tensors["env.game_seeds"] = torch.from_numpy(e.game_seeds.copy())
    tensors["env.rules_index"] = torch.from_numpy(e.rules_index.copy())
    lt, ljs = tr.league.state()
    tensors.update(lt)
    groups = [{k: v for k, v in g.items() if k != "params"} for g in opt["param_groups"]]
    js = {
        "update": tr.update,
        "decisions": tr.decisions,
        "numpy_rng": tr.rng.bit_generator.state,
        "param_groups": groups,
        **ljs,
        "eval_results": tr.eval_results,
    }
    return save_checkpoint(path, tr.model, run_meta(tr), tensors, js)


def restore(tr: Trainer, path: str | Path) -> None:
    """Continue ``tr`` exactly from a checkpoint saved by :func:`save` with compatible shapes."""
    meta = load_meta(path)
    d = checkpoint_dir(path)
    cfg = tr.cfg
    if meta.get("arch", {}).get("hidden") != list(cfg.hidden) or meta["arch"].get("critic_hidden") != list(
        cfg.critic_hidden
    ):
        raise CheckpointError(f"{d / 'meta.json'}: network shapes {meta['arch']} differ from the config's")
    if meta["arch"].get("score_clip") != cfg.score_clip:
        raise CheckpointError(
            f"{d / 'meta.json'}: score_clip {meta['arch'].get('score_clip')!r} differs from the "
            f"config's {cfg.score_clip!r}"
        )
    load_weights(tr.model, _read_tensors(d / "model.safetensors"), d / "model.safetensors")
    tensors, js = load_train_state(d)
    where = d / "train_state.safetensors"
    try:
        state: dict[int, dict[str, torch.Tensor]] = {}
        for key, val in tensors.items():
            if key.startswith("optim."):
                _, idx, name = key.split(".", 2)
                state.setdefault(int(idx), {})[name] = val
        groups = js["param_groups"]
        groups[0]["params"] = list(range(len(list(tr.model.parameters()))))
        tr.optimizer.load_state_dict({"state": state, "param_groups": groups})
        tr.gen.set_state(tensors["rng.torch"])
        torch.set_rng_state(tensors["rng.torch_global"])
        tr.rng.bit_generator.state = js["numpy_rng"]
        e = tr.engine
        states = tensors["env.states"].numpy()
        if states.shape != e.states.shape:
            raise CheckpointError(
                f"{where}: games in progress have shape {states.shape}, num_envs needs {e.states.shape}"
            )
        e.states[:] = states
        e.game_seeds[:] = tensors["env.game_seeds"].numpy()
        if "env.rules_index" in tensors:  # absent in checkpoints of single-rules runs before families
            idx = tensors["env.rules_index"].numpy()
            if idx.max(initial=0) >= len(e.rules_family):
                raise CheckpointError(
                    f"{where}: games play rules {int(idx.max())} of a family of {len(e.rules_family)}"
                )
            e.rules_index[:] = idx
            e.game_params[:] = e._family[0][idx]
        e.refresh()
        tr.league.load_state(tensors, js, where)
        tr.update, tr.decisions = int(js["update"]), int(js["decisions"])
        tr.eval_results = list(js.get("eval_results", []))
    except KeyError as exc:
        raise CheckpointError(f"{where}: missing entry {exc} in the training state") from None


__all__ = ["init_weights", "restore", "run_meta", "save"]
