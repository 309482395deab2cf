"""RLlib path: PPO with action masking on RLlib's new API stack, on one machine or a Ray cluster.

Run::

    python -m training.rllib_train --config configs/train/rllib.yaml
    python -m training.rllib_train --config configs/train/rllib.yaml address=127.0.0.1:6390 iterations=50

The env is :class:`spades_env.integrations.rllib.SpadesMultiAgentEnv` (the AEC env, turn based,
observations under RLlib's ``observations`` / ``action_mask`` keys); every seat maps to an
RLModule by ``policy_mode`` (``shared``: one module for all four seats; ``team``: ``team_ns``
and ``team_ew``), each RLlib's ``ActionMaskingTorchRLModule``. ``num_env_runners`` env runners
sample in Ray actors, wherever the cluster has CPUs (with ``address`` set, on every node that
joined it); the learner runs in this process. Each iteration prints RLlib's env steps per
second. At the end the algorithm is saved (``out/checkpoint``), each module is exported as a
Policy (``out/export/<module id>``, see :mod:`training.rllib_policy`), and with
``eval_boards > 0`` the first module plays that many duplicate boards against ``random`` in
the arena.
"""

from __future__ import annotations

import argparse
import dataclasses
import functools
import os
import sys
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from training.config import ConfigError, config_to_dict, load_config


@dataclass(frozen=True)
class RLlibConfig:
    """Every key of ``configs/train/rllib.yaml``."""

    address: str | None = None
    """Ray cluster to join (``"127.0.0.1:6390"``, ``"auto"``); ``None``: start a local Ray."""
    rules: str = "tournament"
    """Rules preset of the env."""
    episode: str = "hand"
    """Episode length of the env: ``hand``, ``game`` or ``match``."""
    reward: str = "score"
    """``score`` (team score change each hand) or ``win`` (+1 / -1 at the end)."""
    reward_scale: float = 0.01
    """Multiplier of the score reward."""
    policy_mode: str = "shared"
    """``shared``: one module plays every seat; ``team``: one module per partnership."""
    iterations: int = 2
    """Training iterations (``algo.train()`` calls)."""
    num_env_runners: int = 2
    """Ray actors that sample (one CPU each by default)."""
    num_envs_per_env_runner: int = 1
    """Envs each env runner steps side by side."""
    num_cpus_per_env_runner: int = 1
    """CPUs Ray reserves for each env runner."""
    rollout_fragment_length: int = 128
    """Env steps each env runner samples per round."""
    train_batch_size: int = 1024
    """Agent steps per training iteration (RLlib's ``train_batch_size_per_learner``)."""
    minibatch_size: int = 256
    """SGD minibatch."""
    num_epochs: int = 2
    """SGD passes over each train batch."""
    lr: float = 3e-4
    """Adam learning rate."""
    gamma: float = 0.99
    """Discount."""
    gae_lambda: float = 0.95
    """GAE lambda."""
    entropy_coeff: float = 0.01
    """Entropy bonus."""
    hidden: tuple[int, ...] = (256, 256)
    """Hidden layers of the encoder and of each head."""
    seed: int = 0
    """Seed of RLlib (env runners' envs and the module init)."""
    torch_threads: int = 1
    """torch threads of the learner in this process."""
    out: str = "runs/rllib"
    """Output folder: ``checkpoint/`` (RLlib's) and ``export/<module id>/`` (Policies)."""
    eval_boards: int = 0
    """After training, duplicate boards of the first exported module against ``random``."""

    def validate(self) -> tuple[str, str] | None:
        if self.policy_mode not in ("shared", "team"):
            return "policy_mode", "must be 'shared' or 'team'"
        if self.episode not in ("hand", "game", "match"):
            return "episode", "must be 'hand', 'game' or 'match'"
        if self.reward not in ("score", "win"):
            return "reward", "must be 'score' or 'win'"
        for key in ("iterations", "num_envs_per_env_runner", "rollout_fragment_length", "train_batch_size",
                    "minibatch_size", "num_epochs", "num_cpus_per_env_runner"):
            if getattr(self, key) < 1:
                return key, "must be at least 1"
        if self.num_env_runners < 0:
            return "num_env_runners", "must be 0 (sample in this process) or more"
        if self.minibatch_size > self.train_batch_size:
            return "minibatch_size", "must not exceed train_batch_size"
        if not self.hidden or any(h < 1 for h in self.hidden):
            return "hidden", "must be a non-empty list of positive layer sizes"
        if self.eval_boards < 0:
            return "eval_boards", "must be 0 or more"
        return None


def ppo_config(cfg: RLlibConfig) -> Any:
    """RLlib's ``PPOConfig`` for ``cfg`` (new API stack, masked modules, seats -> modules)."""
    from ray.rllib.algorithms.ppo import PPOConfig

    from spades_env.integrations.rllib import SeatToModule, SpadesMultiAgentEnv, module_ids, module_spec

    env_config = {"rules": cfg.rules, "episode": cfg.episode, "reward": cfg.reward, "reward_scale": cfg.reward_scale}
    return (
        PPOConfig()
        .api_stack(enable_rl_module_and_learner=True, enable_env_runner_and_connector_v2=True)
        .environment(env=SpadesMultiAgentEnv, env_config=env_config)
        .env_runners(
            num_env_runners=cfg.num_env_runners,
            num_envs_per_env_runner=cfg.num_envs_per_env_runner,
            num_cpus_per_env_runner=cfg.num_cpus_per_env_runner,
            rollout_fragment_length=cfg.rollout_fragment_length,
        )
        .learners(num_learners=0)
        .multi_agent(
            policies=set(module_ids(cfg.policy_mode)),
            policy_mapping_fn=SeatToModule(cfg.policy_mode),
            policies_to_train=list(module_ids(cfg.policy_mode)),
        )
        .rl_module(rl_module_spec=module_spec(cfg.policy_mode, cfg.hidden))
        .training(
            lr=cfg.lr,
            gamma=cfg.gamma,
            lambda_=cfg.gae_lambda,
            entropy_coeff=cfg.entropy_coeff,
            train_batch_size_per_learner=cfg.train_batch_size,
            minibatch_size=cfg.minibatch_size,
            num_epochs=cfg.num_epochs,
        )
        .debugging(seed=cfg.seed)
    )


def _get(d: Any, *keys: str) -> Any:
    for k in keys:
        if not isinstance(d, dict) or k not in d:
            return None
        d = d[k]
    return d


def env_steps_per_s(result: dict[str, Any]) -> float | None:
    """RLlib's sampling throughput of one iteration's result (env steps per second)."""
    from ray.rllib.utils.metrics import ENV_RUNNER_RESULTS, NUM_ENV_STEPS_SAMPLED_LIFETIME

    v = _get(result, ENV_RUNNER_RESULTS, NUM_ENV_STEPS_SAMPLED_LIFETIME + "_throughput")
    if isinstance(v, dict):  # Ray >= 2.50: {"throughput_since_last_reduce": ..., ...}
        v = v.get("throughput_since_last_reduce")
    return None if v is None else float(v)


def train(cfg: RLlibConfig, log: Any = print) -> dict[str, Any]:
    """Train; returns the per-iteration figures, the checkpoint and the export paths."""
    import ray
    import torch
    from ray.rllib.utils.metrics import ENV_RUNNER_RESULTS, EPISODE_RETURN_MEAN, NUM_ENV_STEPS_SAMPLED

    from spades_env.integrations.rllib import module_ids
    from training.rllib_policy import export_module, load_rllib_policy

    torch.set_num_threads(cfg.torch_threads)
    started_ray = not ray.is_initialized()
    if started_ray:
        ray.init(address=cfg.address, include_dashboard=False, log_to_driver=False)
    nodes = [n for n in ray.nodes() if n.get("Alive")]
    log(f"ray {ray.__version__}: {len(nodes)} node(s), {ray.cluster_resources().get('CPU', 0):g} CPUs")
    out = Path(cfg.out)
    history = []
    algo = ppo_config(cfg).build_algo()
    try:
        if cfg.num_env_runners:
            where = algo.env_runner_group.foreach_env_runner(
                lambda runner: ray.get_runtime_context().get_node_id(), local_env_runner=False
            )
            log(f"{len(where)} env runner(s) on {len(set(where))} node(s)")
        for it in range(1, cfg.iterations + 1):
            t0 = time.perf_counter()
            result = algo.train()
            wall = time.perf_counter() - t0
            steps = _get(result, ENV_RUNNER_RESULTS, NUM_ENV_STEPS_SAMPLED) or 0
            rate = env_steps_per_s(result)
            sampling_s = _get(result, "timers", "env_runner_sampling_timer")
            ret = _get(result, ENV_RUNNER_RESULTS, EPISODE_RETURN_MEAN)
            history.append({"iteration": it, "env_steps": steps, "env_steps_per_s": rate, "wall_s": wall,
                            "sampling_s": sampling_s, "episode_return_mean": ret})
            rate_text = "n/a" if rate is None else f"{rate:,.0f}"
            sampling = f" (sampling {sampling_s:.2f}s)" if sampling_s else ""
            ret_text = "n/a" if ret is None else f"{ret:+.3f}"
            log(f"iter {it}/{cfg.iterations}: {steps} env steps in {wall:.1f}s{sampling}, "
                f"RLlib env steps/s {rate_text}, episode return mean {ret_text}")
        checkpoint = algo.save_to_path(str((out / "checkpoint").resolve()))
        exports = {
            mid: str(export_module(algo, mid, out / "export" / mid, cfg.hidden, cfg.rules,
                                   extra={"training_config": config_to_dict(cfg)}))
            for mid in module_ids(cfg.policy_mode)
        }
    finally:
        algo.stop()
        if started_ray:
            ray.shutdown()
    log(f"checkpoint: {checkpoint}; policies: {', '.join(exports.values())}")
    summary = None
    if cfg.eval_boards:
        from spades_env.eval import run_duplicate, summarize

        first = next(iter(exports.values()))
        factory = functools.partial(load_rllib_policy, first)
        boards = run_duplicate((factory, factory), ("random", "random"), cfg.eval_boards, seed=cfg.seed,
                               rules=cfg.rules, fmt="hand")
        summary = summarize(boards, "hand", names=(f"rllib:{Path(first).name}", "random"), seed=cfg.seed)
        log(f"arena, {cfg.eval_boards} duplicate boards vs random: {summary.get('margin_per_hand', summary)}")
    return {"history": history, "checkpoint": checkpoint, "exports": exports, "eval": summary}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--config", default="configs/train/rllib.yaml", help="YAML file of RLlibConfig keys")
    parser.add_argument("overrides", nargs="*", help="key=value overrides of the config")
    args = parser.parse_args(argv)
    try:
        cfg = load_config(RLlibConfig, args.config, args.overrides)
    except ConfigError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    if cfg.address is None and os.environ.get("RAY_ADDRESS"):
        cfg = dataclasses.replace(cfg, address=os.environ["RAY_ADDRESS"])
    train(cfg)
    return 0


if __name__ == "__main__":
    sys.exit(main())
