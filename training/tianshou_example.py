"""Tianshou example: a few iterations of masked DQN on the Spades AEC env, through Tianshou's own
``PettingZooEnv`` wrapper and multi-agent dispatcher.

Run::

    python -m training.tianshou_example --iterations 5 --steps-per-iteration 512

North and South share one DQN (the learner team); East and West play Tianshou's masked random
policy. ``tianshou.env.PettingZooEnv`` turns the AEC env's ``action_mask`` into ``obs.mask``;
the DQN's Q-values and its epsilon-greedy exploration both respect it. Tianshou stores one
transition per env step whoever moved, and each agent learns from the steps it acted on: its
reward there is the reward of that step only, so a hand's score (paid when the last card
falls) reaches a seat's earlier moves through the ``n_step`` return (default 4 = one trick).
This is Tianshou's AEC design, kept as is: the example shows the plumbing, not a strong player.

Needs ``tianshou`` (installed by the ``test`` extra).
"""

from __future__ import annotations

import argparse
import dataclasses
import time
from dataclasses import dataclass

import numpy as np
import torch
from tianshou.algorithm import DQN, MARLRandomDiscreteMaskedOffPolicyAlgorithm, MultiAgentOffPolicyAlgorithm
from tianshou.algorithm.modelfree.dqn import DiscreteQLearningPolicy
from tianshou.algorithm.optim import AdamOptimizerFactory
from tianshou.data import Collector, CollectStats, VectorReplayBuffer
from tianshou.env import DummyVectorEnv
from tianshou.env.pettingzoo_env import PettingZooEnv
from tianshou.utils.net.common import Net
from tianshou.utils.torch_utils import policy_within_training_step, torch_train_mode

import spades_env


@dataclass(frozen=True)
class Args:
    """Command-line options (``--steps-per-iteration`` for ``steps_per_iteration``)."""

    iterations: int = 3
    """Collect-then-update rounds."""
    steps_per_iteration: int = 256
    """Env steps collected per iteration (over all envs; one seat acts per step)."""
    updates_per_iteration: int = 8
    """Gradient steps per iteration."""
    num_envs: int = 2
    """Envs in Tianshou's DummyVectorEnv."""
    batch_size: int = 64
    """Transitions per gradient step."""
    buffer_size: int = 20_000
    """Replay buffer size (all envs together)."""
    hidden: int = 64
    """Width of the two hidden layers of the Q-network."""
    lr: float = 1e-3
    """Adam learning rate."""
    gamma: float = 0.99
    """Discount per env step."""
    n_step: int = 4
    """n-step return horizon (4 env steps = one trick)."""
    eps: float = 0.1
    """Epsilon of epsilon-greedy exploration while collecting."""
    target_update_freq: int = 50
    """Gradient steps between target-network syncs."""
    episode: str = "hand"
    """Episode length of the env (``hand``, ``game``, ``match``)."""
    seed: int = 0
    """Seed of numpy, torch and the envs' deals."""
    threads: int = 1
    """torch threads (small networks: more threads only add contention)."""


def make_env(episode: str = "hand") -> PettingZooEnv:
    """The AEC env (:func:`spades_env.env`) in Tianshou's PettingZoo wrapper."""
    return PettingZooEnv(spades_env.env(episode=episode))


def make_algorithm(args: Args) -> tuple[MultiAgentOffPolicyAlgorithm, DQN]:
    """A multi-agent algorithm: one DQN for seats N and S, masked random for E and W."""
    env = make_env(args.episode)
    obs_space = env.observation_space["observation"]
    n_actions = int(env.action_space.n)
    net = Net(state_shape=obs_space.shape, action_shape=n_actions, hidden_sizes=[args.hidden, args.hidden])
    policy = DiscreteQLearningPolicy(
        model=net, action_space=env.action_space, eps_training=args.eps, eps_inference=0.0
    )
    dqn = DQN(
        policy=policy,
        optim=AdamOptimizerFactory(lr=args.lr),
        gamma=args.gamma,
        n_step_return_horizon=args.n_step,
        target_update_freq=args.target_update_freq,
    )
    random_seats = MARLRandomDiscreteMaskedOffPolicyAlgorithm(action_space=env.action_space)
    by_seat = [dqn if i % 2 == 0 else random_seats for i in range(len(env.agents))]
    return MultiAgentOffPolicyAlgorithm(algorithms=by_seat, env=env), dqn


def train(args: Args, log=print) -> list[dict[str, float]]:
    """Run ``args.iterations`` rounds of collect + DQN updates; returns per-iteration figures."""
    np.random.seed(args.seed)  # noqa: NPY002  Tianshou explores with numpy's global RNG
    torch.manual_seed(args.seed)
    torch.set_num_threads(args.threads)
    envs = DummyVectorEnv([lambda: make_env(args.episode) for _ in range(args.num_envs)])
    envs.seed(args.seed)
    algorithm, dqn = make_algorithm(args)
    buffer = VectorReplayBuffer(args.buffer_size, args.num_envs)
    collector = Collector[CollectStats](algorithm, envs, buffer, exploration_noise=True)
    collector.reset()
    history = []
    t0 = time.perf_counter()
    steps = 0
    for it in range(1, args.iterations + 1):
        # Tianshou's Trainer sets these flags; this loop does it by hand: epsilon-greedy while
        # collecting, torch train mode while updating
        with policy_within_training_step(algorithm.policy), policy_within_training_step(dqn.policy):
            with torch_train_mode(algorithm.policy, False):
                stats = collector.collect(n_step=args.steps_per_iteration)
            steps += stats.n_collected_steps
            losses = []
            with torch_train_mode(algorithm.policy):
                for _ in range(args.updates_per_iteration):
                    result = algorithm.update(buffer=buffer, sample_size=args.batch_size)
                    losses.extend(v for k, v in result.get_loss_stats_dict().items() if k.endswith("loss"))
        row = {
            "iteration": it,
            "env_steps": int(stats.n_collected_steps),
            "hands_ended": int(stats.n_collected_episodes),
            "loss": float(np.mean(losses)) if losses else float("nan"),
            "env_steps_per_s": steps / (time.perf_counter() - t0),
        }
        history.append(row)
        log(
            f"iter {it}/{args.iterations}: {row['env_steps']} env steps, {row['hands_ended']} hands ended, "
            f"DQN loss {row['loss']:.4f}, {row['env_steps_per_s']:.0f} env steps/s"
        )
    envs.close()
    return history


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    for f in dataclasses.fields(Args):
        parser.add_argument(f"--{f.name.replace('_', '-')}", type=type(f.default), default=f.default)
    train(Args(**vars(parser.parse_args(argv))))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
