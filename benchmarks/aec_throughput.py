"""AEC agent steps per second: spades_env against PettingZoo's texas_holdem_v4, same loop.

Every env is driven by the same loop, single process: ``agent_iter()``, ``last()`` (which
builds the observation vector and the action mask), a uniformly random legal action from the
mask, ``step()``. An agent step is a ``step()`` call with an action; ``steps/s`` does not count
the ``None`` steps of agents that are done, ``steps/s incl. done`` counts every ``step()`` call
(which favours envs with short episodes). Episodes restart with ``reset()`` until the time is
up (the last episode is finished, so a run can last a little longer). Each env is timed
``--repeat`` times and the fastest run is reported, which filters out noise from other
processes on a shared machine; ``steps/CPU-s`` divides by the CPU time of the process instead
of the wall time, which is about what a run gets on an idle machine.

    .venv/bin/python benchmarks/aec_throughput.py --seconds 5 --repeat 3
    spades bench aec_throughput --seconds 5

Environments: ``spades_env.env()`` (the wrapped env users use), ``spades_env.raw_env``, and
``pettingzoo.classic.texas_holdem_v4`` (needs ``rlcard`` and ``pygame``; skipped with a
message if either is missing).
"""

from __future__ import annotations

import argparse
import random
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np

try:
    import spades_env
except ModuleNotFoundError:  # run from a checkout without installing
    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
    import spades_env


def run_loop(
    make_env: Callable[[], Any], seconds: float, seed: int = 0
) -> tuple[int, float, int, int, float]:
    """Play random legal moves for about ``seconds``; returns (agent steps, elapsed seconds,
    episodes, all ``step()`` calls including the ``None`` steps of agents that are done,
    CPU seconds of this process)."""
    env = make_env()
    rnd = random.Random(seed)
    flatnonzero = np.flatnonzero
    steps = episodes = calls = 0
    episode_seed = seed
    cpu_start = time.process_time()
    start = time.perf_counter()
    deadline = start + seconds
    while True:
        env.reset(seed=episode_seed)
        episode_seed += 1
        for _agent in env.agent_iter():
            obs, _reward, termination, truncation, _info = env.last()
            if termination or truncation:
                action = None
            else:
                legal = flatnonzero(obs["action_mask"])
                action = int(legal[rnd.randrange(len(legal))])
                steps += 1
            env.step(action)
            calls += 1
        episodes += 1
        if time.perf_counter() >= deadline:
            break
    elapsed = time.perf_counter() - start
    cpu = time.process_time() - cpu_start
    env.close()
    return steps, elapsed, episodes, calls, cpu


def _texas() -> Callable[[], Any] | None:
    try:
        from pettingzoo.classic import texas_holdem_v4

        texas_holdem_v4.env().reset(seed=0)  # fails here if rlcard is missing
    except Exception as exc:  # ImportError / DependencyNotInstalled
        print(f"texas_holdem_v4 skipped: {type(exc).__name__}: {exc}", file=sys.stderr)
        return None
    return texas_holdem_v4.env


def main(argv: list[str] | None = None) -> int:
    """Measure and print the table."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seconds", type=float, default=5.0, help="time per env (default 5)")
    parser.add_argument(
        "--repeat", type=int, default=3, help="timed runs per env; the best is reported (default 3)"
    )
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument(
        "--rules", default="tournament", help="spades rules preset or YAML (default tournament)"
    )
    args = parser.parse_args(argv)

    envs: list[tuple[str, Callable[[], Any]]] = [
        ("spades_env.env()", lambda: spades_env.env(rules=args.rules)),
        ("spades_env.raw_env()", lambda: spades_env.raw_env(rules=args.rules)),
    ]
    texas = _texas()
    if texas is not None:
        envs.append(("texas_holdem_v4.env()", texas))

    # warm up (numba compile / cache load, imports) outside the timed runs
    for _, make in envs:
        run_loop(make, 0.05, args.seed)

    rates: dict[str, float] = {}
    print(
        f"AEC agent steps/s, random legal play, single process, "
        f"best of {args.repeat} x {args.seconds:g} s per env"
    )
    print(
        f"{'env':<24}{'steps':>10}{'episodes':>10}{'seconds':>9}{'steps/s':>11}{'steps/s incl. done':>20}{'steps/CPU-s':>13}"
    )
    for name, make in envs:
        runs = [run_loop(make, args.seconds, args.seed) for _ in range(max(1, args.repeat))]
        steps, elapsed, episodes, calls, cpu = max(runs, key=lambda r: r[0] / r[1])
        rates[name] = steps / elapsed
        print(
            f"{name:<24}{steps:>10}{episodes:>10}{elapsed:>9.2f}{rates[name]:>11,.0f}"
            f"{calls / elapsed:>20,.0f}{steps / cpu:>13,.0f}"
        )
    if texas is not None:
        t = rates["texas_holdem_v4.env()"]
        print()
        for name in ("spades_env.env()", "spades_env.raw_env()"):
            print(f"ratio {name} / texas_holdem_v4.env(): {rates[name] / t:.2f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
