"""AEC agent steps per second: spades_env against PettingZoo's texas_holdem_v4, same loop.

Every env is driven by the same loop, single process: ``agent_iter()``, ``last()`` (which
builds the observation vector and the action mask), a uniformly random legal action from the
mask, ``step()``. An agent step is a ``step()`` call with an action; ``steps/s`` does not count
the ``None`` steps of agents that are done, ``steps/s incl. done`` counts every ``step()`` call
(which favours envs with short episodes). Episodes restart with ``reset()`` until the time is
up (the last episode is finished, so a run can last a little longer). The envs are timed in
``--rounds`` interleaved rounds (each env once per round, the order reversed every other
round) and the median run is reported, so the machine's other load falls on all of them
alike; ``steps/CPU-s`` divides by the CPU time of the process instead of the wall time, which
is about what a run gets on an idle machine.

    .venv/bin/python benchmarks/aec_throughput.py --seconds 3 --rounds 3
    make bench                  # the defaults

Environments: ``spades_env.env()`` (the wrapped env users use), ``spades_env.raw_env``, and
``pettingzoo.classic.texas_holdem_v4`` (needs ``rlcard`` and ``pygame``; skipped with a
message if either is missing). The peer at its own best: RLCard's native loop for the same
game (``rlcard.make("limit-holdem")``, ``RandomAgent`` players, ``env.run()``, no PettingZoo
layer), decisions counted from the trajectories ``run()`` returns anyway (``(len - 1) // 2``
actions per player's list).
"""

from __future__ import annotations

import argparse
import os
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


def run_rlcard(seconds: float, seed: int = 0) -> tuple[int, float, int, int, float]:
    """RLCard's own loop for limit hold'em (the game under ``texas_holdem_v4``): ``env.run()``
    with ``RandomAgent`` players; same return values as ``run_loop`` (all decisions are
    actions, so ``calls == steps``)."""
    import rlcard
    from rlcard.agents import RandomAgent

    env = rlcard.make("limit-holdem", config={"seed": seed})
    env.set_agents([RandomAgent(num_actions=env.num_actions) for _ in range(env.num_players)])
    steps = episodes = 0
    cpu_start = time.process_time()
    start = time.perf_counter()
    deadline = start + seconds
    while True:
        trajectories, _ = env.run(is_training=False)
        steps += sum((len(t) - 1) // 2 for t in trajectories)  # state, action, ..., state
        episodes += 1
        if time.perf_counter() >= deadline:
            break
    return steps, time.perf_counter() - start, episodes, steps, time.process_time() - cpu_start


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
    parser.add_argument("--seconds", type=float, default=3.0, help="time per run (default 3)")
    parser.add_argument(
        "--rounds",
        "--repeat",
        type=int,
        default=3,
        help="interleaved rounds; the median run per env is reported (default 3)",
    )
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument(
        "--rules", default="tournament", help="spades rules preset or YAML (default tournament)"
    )
    args = parser.parse_args(argv)

    loop = "AEC loop: agent_iter / last / random legal action from the mask / step"
    envs: list[tuple[str, str, Callable[[float], tuple]]] = [
        (
            "spades_env.env()",
            loop,
            lambda s: run_loop(lambda: spades_env.env(rules=args.rules), s, args.seed),
        ),
        (
            "spades_env.raw_env()",
            loop,
            lambda s: run_loop(lambda: spades_env.raw_env(rules=args.rules), s, args.seed),
        ),
    ]
    texas = _texas()
    if texas is not None:
        envs.append(("texas_holdem_v4.env()", loop, lambda s: run_loop(texas, s, args.seed)))
    try:
        import rlcard  # noqa: F401
    except ImportError as exc:
        print(f"rlcard limit-holdem skipped: {exc}", file=sys.stderr)
    else:
        envs.append(
            (
                "rlcard limit-holdem",
                "RLCard native: env.run() with RandomAgent",
                lambda s: run_rlcard(s, args.seed),
            )
        )

    # warm up (numba compile / cache load, imports) outside the timed runs
    for _, _, run in envs:
        run(0.05)

    print(
        f"AEC agent steps/s, random legal play, single process, median of {args.rounds} interleaved "
        f"rounds x {args.seconds:g} s per env; load average at start {os.getloadavg()[0]:.2f}",
        flush=True,
    )
    runs: dict[str, list[tuple]] = {name: [] for name, _, _ in envs}
    loads = []
    for r in range(max(1, args.rounds)):
        for name, _, run in envs if r % 2 == 0 else envs[::-1]:
            runs[name].append(run(args.seconds))
        loads.append(os.getloadavg()[0])
    print(f"load average during the rounds: {min(loads):.2f}-{max(loads):.2f}")
    print(
        f"{'env':<24}{'steps':>10}{'episodes':>10}{'seconds':>9}{'steps/s':>11}"
        f"{'steps/s incl. done':>20}{'steps/CPU-s':>13}  method"
    )
    rates: dict[str, float] = {}
    for name, method, _ in envs:
        ordered = sorted(runs[name], key=lambda x: x[0] / x[1])
        steps, elapsed, episodes, calls, cpu = ordered[len(ordered) // 2]
        rates[name] = steps / elapsed
        print(
            f"{name:<24}{steps:>10}{episodes:>10}{elapsed:>9.2f}{rates[name]:>11,.0f}"
            f"{calls / elapsed:>20,.0f}{steps / cpu:>13,.0f}  {method}"
        )
    print()
    for peer in ("texas_holdem_v4.env()", "rlcard limit-holdem"):
        if peer in rates:
            for name in ("spades_env.env()", "spades_env.raw_env()"):
                print(f"ratio {name} / {peer}: {rates[name] / rates[peer]:.2f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
