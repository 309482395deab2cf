"""Stable-Baselines3 path: sb3-contrib ``MaskablePPO`` on the single-agent env or the batched VecEnv.

Run::

    python -m training.sb3_train --env gym --timesteps 100000 --opponents heuristic
    python -m training.sb3_train --env vec --num-envs 64 --timesteps 1000000

* ``--env gym``: ``num_envs`` copies of the registered Gymnasium env ``Spades-v0``
  (:class:`spades_env.envs.gym_env.SpadesGymEnv`: one learner team, bots for the others) in SB3's
  ``DummyVecEnv``; masks come from each env's ``action_masks()``.
* ``--env vec``: :class:`spades_env.envs.vector_adapters.SpadesSB3VecEnv`, ``num_envs`` games of
  the batched engine with ``action_masks()`` for the whole batch.

The learner team (North-South) plays against ``--opponents`` (a bots registry name or a
checkpoint path; ``random`` by default). The model is saved with SB3's own ``save`` (a zip
that SB3 loads with pickle: load only files you trust; our own checkpoints never unpickle).
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path
from typing import Any

import numpy as np

from spades_env.core.rules import RulesConfig, load_rules


def make_env(
    kind: str,
    num_envs: int,
    rules: RulesConfig | str | dict | None = None,
    opponents: str = "random",
    seed: int = 0,
) -> Any:
    """An SB3 VecEnv with ``action_masks`` for MaskablePPO: ``"gym"`` or ``"vec"``."""
    rules = load_rules(rules)
    if kind == "gym":
        import gymnasium
        from stable_baselines3.common.vec_env import DummyVecEnv

        import spades_env.envs.gym_env  # noqa: F401  registers Spades-v0

        def factory(i: int):
            def f():
                return gymnasium.make("Spades-v0", rules=rules, opponents=opponents)

            return f

        venv = DummyVecEnv([factory(i) for i in range(num_envs)])
        venv.seed(seed)
        return venv
    if kind == "vec":
        from spades_env.envs.vector_adapters import SpadesSB3VecEnv
        from spades_env.policies.registry import resolve_policy

        others = (
            {s: resolve_policy(opponents, seed + s, rules) for s in (1, 3)}
            if rules.num_players == 4
            else None
        )
        if others is None:
            others = {1: resolve_policy(opponents, seed + 1, rules)}
        return SpadesSB3VecEnv(num_envs, rules, opponents=others, seed=seed)
    raise ValueError(f"env kind must be 'gym' or 'vec', got {kind!r}")


def make_model(
    env: Any,
    seed: int = 0,
    n_steps: int = 128,
    batch_size: int = 256,
    hidden: tuple[int, ...] = (256, 256),
    **kwargs: Any,
):
    """A MaskablePPO with an MLP policy of ``hidden`` layers (actor and critic), logging nowhere
    (:func:`log_nowhere`)."""
    from sb3_contrib import MaskablePPO

    model = MaskablePPO(
        "MlpPolicy",
        env,
        n_steps=n_steps,
        batch_size=batch_size,
        seed=seed,
        policy_kwargs={"net_arch": {"pi": list(hidden), "vf": list(hidden)}},
        verbose=0,
        device="cpu",
        **kwargs,
    )
    return log_nowhere(model)


def log_nowhere(model: Any) -> Any:
    """``model`` (an SB3 algorithm) with a logger that writes nothing: SB3's default logger makes
    an empty ``SB3-<date>`` folder in the temp dir at every ``learn``."""
    from stable_baselines3.common.logger import Logger

    model.set_logger(Logger(None, []))
    return model


def train_sb3(
    kind: str = "gym",
    timesteps: int = 10_000,
    num_envs: int = 4,
    rules: RulesConfig | str | dict | None = None,
    opponents: str = "random",
    seed: int = 0,
    n_steps: int = 128,
    batch_size: int = 256,
    hidden: tuple[int, ...] = (256, 256),
    out: str | Path | None = None,
    threads: int = 1,
) -> tuple[Any, float]:
    """Train MaskablePPO; returns (model, learner decisions per second)."""
    if threads > 0:
        import torch

        torch.set_num_threads(threads)
    env = make_env(kind, num_envs, rules, opponents, seed)
    model = make_model(env, seed=seed, n_steps=n_steps, batch_size=batch_size, hidden=hidden)
    t0 = time.perf_counter()
    model.learn(total_timesteps=timesteps)
    rate = model.num_timesteps / (time.perf_counter() - t0)
    if out is not None:
        Path(out).parent.mkdir(parents=True, exist_ok=True)
        model.save(str(out))
    return model, rate


def evaluate_sb3(model: Any, kind: str, games: int, rules: Any, opponents: str, seed: int = 1) -> float:
    """Share of finished games the learner team won (masked, deterministic actions)."""
    env = make_env(kind, 1, rules, opponents, seed)
    from sb3_contrib.common.maskable.utils import get_action_masks

    obs = env.reset()
    wins = done_games = 0
    while done_games < games:
        action, _ = model.predict(obs, action_masks=get_action_masks(env), deterministic=True)
        obs, reward, done, infos = env.step(action)
        if done[0]:
            done_games += 1
            wins += float(reward[0]) > 0 if kind == "vec" else infos[0].get("winner", -1) == 0
    return wins / games


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="python -m training.sb3_train", description=__doc__.split("\n\n")[0])
    p.add_argument(
        "--env",
        choices=("gym", "vec"),
        default="gym",
        help="single-agent Gymnasium envs or the batched VecEnv",
    )
    p.add_argument("--timesteps", type=int, default=100_000, help="learner decisions to train for")
    p.add_argument("--num-envs", type=int, default=8)
    p.add_argument("--rules", default="tournament", help="rules preset or YAML file")
    p.add_argument("--max-hands", type=int, default=-1, help="hand cap per game (-1: the rules')")
    p.add_argument(
        "--opponents", default="random", help="bots registry name or checkpoint path for the other team"
    )
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--threads", type=int, default=1, help="torch threads (0: torch's default)")
    p.add_argument("--n-steps", type=int, default=128)
    p.add_argument("--batch-size", type=int, default=256)
    p.add_argument("--out", default="runs/sb3/maskable_ppo.zip", help="where to save the SB3 model")
    p.add_argument("--eval-games", type=int, default=0, help="games against the opponents after training")
    args = p.parse_args(argv)
    rules = load_rules(args.rules)
    if args.max_hands >= 0:
        rules = rules.replace(max_hands=args.max_hands)
    model, rate = train_sb3(
        args.env,
        args.timesteps,
        args.num_envs,
        rules,
        args.opponents,
        args.seed,
        args.n_steps,
        args.batch_size,
        out=args.out,
        threads=args.threads,
    )
    print(
        f"MaskablePPO ({args.env}): {model.num_timesteps} learner decisions, {rate:,.0f}/s; saved {args.out}"
    )
    if args.eval_games:
        w = evaluate_sb3(model, args.env, args.eval_games, rules, args.opponents)
        print(f"won {100 * w:.1f}% of {args.eval_games} games against {args.opponents}")
    return 0


if __name__ == "__main__":
    np.seterr(all="ignore")
    sys.exit(main())
