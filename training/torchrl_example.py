"""TorchRL example: a few iterations of masked PPO on the Spades AEC env, through TorchRL's own
``PettingZooWrapper``.

Run::

    python -m training.torchrl_example --iterations 5 --frames-per-batch 512

The four seats are one TorchRL group, ``players`` (one actor and one critic shared by every
seat: self-play). For the AEC env the wrapper marks the seat to act with ``("players", "mask")``
and puts the legal actions in ``("players", "action_mask")`` (all true for the seats that wait);
the actor samples from ``MaskedCategorical``. GAE runs over every seat's timeline, so a hand's
score, paid to all four seats at its end, reaches every seat's earlier moves; the PPO loss
(TorchRL's ``ClipPPOLoss``) uses only the steps where a seat acted.

Needs ``torchrl`` (and ``tensordict``), installed by the ``test`` extra.
"""

from __future__ import annotations

import argparse
import dataclasses
import time
from dataclasses import dataclass

import torch
from tensordict import TensorDict
from tensordict.nn import TensorDictModule
from torch import nn
from torchrl.collectors import Collector
from torchrl.envs import PettingZooWrapper
from torchrl.modules import MLP, MaskedCategorical, ProbabilisticActor, ValueOperator
from torchrl.objectives import ClipPPOLoss
from torchrl.objectives.value import GAE

import spades_env

GROUP = "players"
OBS = (GROUP, "observation", "observation")


@dataclass(frozen=True)
class Args:
    """Command-line options (``--frames-per-batch`` for ``frames_per_batch``)."""

    iterations: int = 3
    """Collect-then-train rounds."""
    frames_per_batch: int = 256
    """Env steps collected per iteration (one seat acts per step)."""
    hidden: int = 64
    """Width of the two hidden layers of the actor and of the critic."""
    lr: float = 3e-4
    """Adam learning rate."""
    epochs: int = 2
    """PPO passes over each batch."""
    minibatch: int = 128
    """Acting steps per gradient step."""
    gamma: float = 0.99
    """Discount per env step."""
    lmbda: float = 0.95
    """GAE lambda."""
    clip: float = 0.2
    """PPO clip epsilon."""
    entropy: float = 0.01
    """Entropy bonus."""
    episode: str = "hand"
    """Episode length of the env (``hand``, ``game``, ``match``)."""
    seed: int = 0
    """Seed of torch and of the env's deals."""
    threads: int = 1
    """torch threads (small networks: more threads only add contention)."""


def make_env(args: Args) -> PettingZooWrapper:
    """The AEC env (:func:`spades_env.env`) wrapped by TorchRL, all seats in one group."""
    aec = spades_env.env(episode=args.episode)
    return PettingZooWrapper(
        aec,
        use_mask=True,  # compulsory for AEC envs: marks the acting seat
        group_map={GROUP: list(aec.possible_agents)},
        categorical_actions=True,
        seed=args.seed,
    )


def make_modules(env: PettingZooWrapper, hidden: int) -> tuple[ProbabilisticActor, ValueOperator]:
    """A masked categorical actor and a critic over the observation vector, shared by seats."""
    obs_size = env.observation_spec[OBS].shape[-1]
    n_actions = env.full_action_spec[GROUP, "action"].space.n
    logits = TensorDictModule(
        MLP(in_features=obs_size, out_features=n_actions, num_cells=[hidden, hidden], activation_class=nn.Tanh),
        in_keys=[OBS],
        out_keys=[(GROUP, "logits")],
    )
    actor = ProbabilisticActor(
        logits,
        in_keys={"logits": (GROUP, "logits"), "mask": (GROUP, "action_mask")},
        out_keys=[(GROUP, "action")],
        distribution_class=MaskedCategorical,
        return_log_prob=True,
        log_prob_key=(GROUP, "log_prob"),
    )
    critic = ValueOperator(
        MLP(in_features=obs_size, out_features=1, num_cells=[hidden, hidden], activation_class=nn.Tanh),
        in_keys=[OBS],
        out_keys=[(GROUP, "state_value")],
    )
    return actor, critic


def train(args: Args, log=print) -> list[dict[str, float]]:
    """Run ``args.iterations`` rounds of collect + PPO; returns per-iteration figures."""
    torch.manual_seed(args.seed)
    torch.set_num_threads(args.threads)
    env = make_env(args)
    actor, critic = make_modules(env, args.hidden)
    collector = Collector(
        env,
        actor,
        frames_per_batch=args.frames_per_batch,
        total_frames=args.frames_per_batch * args.iterations,
        auto_register_policy_transforms=False,  # the policy needs no env transforms
    )
    keys = {
        "reward": (GROUP, "reward"),
        "done": (GROUP, "done"),
        "terminated": (GROUP, "terminated"),
        "value": (GROUP, "state_value"),
        "advantage": (GROUP, "advantage"),
        "value_target": (GROUP, "value_target"),
    }
    gae = GAE(gamma=args.gamma, lmbda=args.lmbda, value_network=critic, average_gae=False)
    gae.set_keys(**keys)
    loss_fn = ClipPPOLoss(
        actor, critic, clip_epsilon=args.clip, entropy_coeff=args.entropy, normalize_advantage=True
    )
    loss_fn.set_keys(**keys, action=(GROUP, "action"), sample_log_prob=(GROUP, "log_prob"))
    optim = torch.optim.Adam(loss_fn.parameters(), lr=args.lr)
    history = []
    t0 = time.perf_counter()
    for it, data in enumerate(collector, start=1):
        with torch.no_grad():
            gae(data)
        acting = data.get((GROUP, "mask"))  # [T, 4]: the seat that moved at each step
        flat = data.get(GROUP)[acting]  # one row per decision
        batch = TensorDict({GROUP: flat}, batch_size=flat.batch_size)
        losses = []
        for _ in range(args.epochs):
            for idx in torch.randperm(batch.shape[0]).split(args.minibatch):
                out = loss_fn(batch[idx])
                loss = out["loss_objective"] + out["loss_critic"] + out["loss_entropy"]
                optim.zero_grad()
                loss.backward()
                nn.utils.clip_grad_norm_(loss_fn.parameters(), 1.0)
                optim.step()
                losses.append(float(loss.detach()))
        collector.update_policy_weights_()
        hands = int(data.get(("next", "done")).sum())
        reward = float(data.get(("next", GROUP, "reward")).sum()) / 4
        row = {
            "iteration": it,
            "env_steps": int(data.numel()),
            "decisions": int(acting.sum()),
            "hands_ended": hands,
            "reward_per_seat": reward,
            "loss": sum(losses) / len(losses),
            "env_steps_per_s": it * args.frames_per_batch / (time.perf_counter() - t0),
        }
        history.append(row)
        log(
            f"iter {it}/{args.iterations}: {row['decisions']} decisions, {hands} hands ended, "
            f"reward per seat {reward:+.3f}, loss {row['loss']:.4f}, {row['env_steps_per_s']:.0f} env steps/s"
        )
    collector.shutdown()
    return history


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    for f in dataclasses.fields(Args):
        parser.add_argument(f"--{f.name.replace('_', '-')}", type=type(f.default), default=f.default)
    train(Args(**vars(parser.parse_args(argv))))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
