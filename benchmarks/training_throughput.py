"""End-to-end training throughput: our self-play PPO against SB3 MaskablePPO, same engine, same run.

    .venv/bin/python benchmarks/training_throughput.py [--config configs/train/shipped.yaml]
        [--updates 5] [--sb3-rollouts 2] [--threads 1]

* **ours**: ``training.ppo.Trainer`` with the config's network and PPO settings (default the
  shipped config), timed over ``--updates`` updates after one warm-up update: collection
  (network forward for every seat, engine steps, critic inputs) plus the PPO update.
  Checkpoints, evaluation and TensorBoard are off. Printed twice: pure self-play (scripted and
  pool shares 0) and the config's own opponent mix.
* **SB3**: sb3-contrib ``MaskablePPO`` on ``SpadesSB3VecEnv`` (the same batched engine, as many
  games, the same rollout length, epochs, minibatches and layer sizes), learner team N-S, the
  other team uniformly random Python Policies. SB3 counts learner decisions only; the
  ``all seats`` column adds the opponents' decisions the env played inside each step.

Decisions/s = decisions played (collection) / wall time of collection + update.
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

import numpy as np  # noqa: E402
import torch  # noqa: E402


def bench_ours(config: str, overrides: list[str], updates: int) -> tuple[float, float, float]:
    from training.ppo import Trainer, load_train_config

    # init_from off: the starting weights do not change the cost of a decision
    cfg = load_train_config(
        config, [*overrides, "eval_boards=0", "tensorboard=false", "checkpoint_every=0", "init_from="]
    )
    tr = Trainer(cfg, "/tmp/unused_bench")
    tr.collect()
    tr.learn(updates + 1)  # warm-up (compiles, allocates)
    tc = tl = 0.0
    for _ in range(updates):
        t0 = time.perf_counter()
        tr.collect()
        t1 = time.perf_counter()
        tr.learn(updates + 1)
        t2 = time.perf_counter()
        tc += t1 - t0
        tl += t2 - t1
    n = updates * cfg.num_envs * cfg.num_steps
    return n / (tc + tl), n / tc, n / tl


def bench_sb3(config: str, rollouts: int, seed: int = 0) -> tuple[float, float]:
    from sb3_contrib import MaskablePPO

    from spades_env.policy import RandomPolicy
    from spades_env.vector_adapters import SpadesSB3VecEnv
    from training.ppo import load_train_config

    cfg = load_train_config(config)
    rules = cfg.rules_config()
    opp = {1: RandomPolicy(seed + 1), 3: RandomPolicy(seed + 3)}
    env = SpadesSB3VecEnv(cfg.num_envs, rules, opponents=opp, seed=seed)
    batch = cfg.num_envs * cfg.num_steps
    model = MaskablePPO(
        "MlpPolicy",
        env,
        n_steps=cfg.num_steps,
        batch_size=batch // cfg.num_minibatches,
        n_epochs=cfg.update_epochs,
        learning_rate=cfg.learning_rate,
        seed=seed,
        policy_kwargs={"net_arch": {"pi": list(cfg.hidden), "vf": list(cfg.critic_hidden)}},
        device="cpu",
        verbose=0,
    )
    model.learn(total_timesteps=batch)  # warm-up rollout and update
    t0 = time.perf_counter()
    model.learn(total_timesteps=rollouts * batch, reset_num_timesteps=True)
    dt = time.perf_counter() - t0
    learner = model.num_timesteps / dt
    return learner, 2 * learner  # the random team decides as often as the learner team


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--config", default=str(ROOT / "configs" / "train" / "shipped.yaml"))
    p.add_argument("--updates", type=int, default=5, help="timed PPO updates (after one warm-up)")
    p.add_argument("--sb3-rollouts", type=int, default=2, help="timed MaskablePPO rollouts + updates")
    p.add_argument("--threads", type=int, default=1, help="torch threads for both")
    args = p.parse_args()
    torch.set_num_threads(args.threads)
    np.seterr(all="ignore")
    print(
        f"config {args.config}; torch {torch.__version__}, {args.threads} thread(s); load average "
        f"{os.getloadavg()[0]:.1f} on {os.cpu_count()} CPUs"
    )
    pure = bench_ours(
        args.config,
        [
            "pool_opponent_share=0",
            "scripted_opponent_share=0",
            "scripted_partner_share=0",
            f"torch_threads={args.threads}",
        ],
        args.updates,
    )
    mixed = bench_ours(args.config, [f"torch_threads={args.threads}"], args.updates)
    sb3_learner, sb3_all = bench_sb3(args.config, args.sb3_rollouts)
    rows = [
        ("ours, self-play only", pure[0], pure[1], pure[2]),
        ("ours, config's opponent mix", mixed[0], mixed[1], mixed[2]),
    ]
    print("\n| trainer | decisions/s end to end | collection only | update only |")
    print("|---|---:|---:|---:|")
    for name, tot, col, upd in rows:
        print(f"| {name} | {tot:,.0f} | {col:,.0f} | {upd:,.0f} |")
    print(f"| SB3 MaskablePPO, SpadesSB3VecEnv (learner decisions) | {sb3_learner:,.0f} | | |")
    print(f"| SB3 MaskablePPO, all seats' decisions | {sb3_all:,.0f} | | |")
    print(
        f"\nratio, training samples per second (ours self-play: every decision is the learner's; SB3: "
        f"learner decisions): {pure[0] / sb3_learner:.2f}x; with the config's opponent mix: {mixed[0] / sb3_learner:.2f}x"
    )
    print(f"ratio, decisions simulated per second (all seats): {pure[0] / sb3_all:.2f}x")
    print("target (issue 5): at least 20,000 decisions/s end to end with the shipped network")
    return 0


if __name__ == "__main__":
    sys.exit(main())
