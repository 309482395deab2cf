"""rgb_array frames per second: spades_env.io.render against PettingZoo's texas_holdem_v4.

A game of random legal moves is rendered after every action, as ``RecordVideo`` does: first
the picture alone (``render_rgb``: a copy of the cached table, card sprites pasted, text), then
through the envs (``spades_env.env(render_mode="rgb_array")`` with ``last()``/``step()``/
``render()``; ``Spades-v0``). PettingZoo's texas_holdem_v4 (pygame) is measured in the same run
as the peer when ``pygame`` and ``rlcard`` are installed. Each figure is the best of
``--repeat`` runs of ``--seconds`` seconds; the target is at least 30 frames per second.

    .venv/bin/python benchmarks/render_speed.py --seconds 3 --repeat 3
"""

from __future__ import annotations

import argparse
import time
from collections.abc import Callable

import numpy as np

import spades_env
from spades_env.core.game import SpadesGame
from spades_env.io.render import render_rgb


def best_fps(step: Callable[[], None], seconds: float, repeat: int) -> float:
    best = 0.0
    for _ in range(repeat):
        frames, t0 = 0, time.perf_counter()
        while time.perf_counter() - t0 < seconds:
            step()
            frames += 1
        best = max(best, frames / (time.perf_counter() - t0))
    return best


def picture_only() -> Callable[[], None]:
    rng = np.random.default_rng(0)
    game = SpadesGame("tournament", seed=0)

    def step() -> None:
        nonlocal game
        if game.is_over:
            game = SpadesGame("tournament", seed=int(rng.integers(1 << 30)))
        elif game.is_hand_over:
            game.next_hand()
        else:
            game.apply(int(rng.choice(game.legal_actions())))
        render_rgb(game)

    return step


def aec(make: Callable[[], object]) -> Callable[[], None]:
    rng = np.random.default_rng(0)
    env = make()
    env.reset(seed=0)

    def step() -> None:
        obs, _, term, trunc, _ = env.last()
        if term or trunc:
            env.step(None)
            if not env.agents:
                env.reset(seed=int(rng.integers(1 << 30)))
        else:
            env.step(int(rng.choice(np.flatnonzero(obs["action_mask"]))))
        frame = env.render()
        assert frame.ndim == 3

    return step


def gym() -> Callable[[], None]:
    import gymnasium

    rng = np.random.default_rng(0)
    env = gymnasium.make("Spades-v0", render_mode="rgb_array")
    _, info = env.reset(seed=0)

    def step() -> None:
        nonlocal info
        _, _, term, trunc, info = env.step(int(rng.choice(np.flatnonzero(info["action_mask"]))))
        if term or trunc:
            _, info = env.reset(seed=int(rng.integers(1 << 30)))
        env.render()

    return step


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--seconds", type=float, default=3.0)
    ap.add_argument("--repeat", type=int, default=3)
    args = ap.parse_args()
    frame = render_rgb(SpadesGame(seed=0))
    print(f"frame {frame.shape[1]}x{frame.shape[0]} RGB; best of {args.repeat} x {args.seconds:g} s")
    rows: list[tuple[str, Callable[[], Callable[[], None]]]] = [
        ("spades_env.io.render.render_rgb (picture only)", picture_only),
        (
            "spades_env.env(render_mode='rgb_array')",
            lambda: aec(lambda: spades_env.env(render_mode="rgb_array")),
        ),
        ("gymnasium.make('Spades-v0', render_mode='rgb_array')", gym),
    ]
    try:
        import rlcard  # noqa: F401
        from pettingzoo.classic import texas_holdem_v4

        rows.append(
            (
                "pettingzoo texas_holdem_v4 (pygame, peer)",
                lambda: aec(lambda: texas_holdem_v4.env(render_mode="rgb_array")),
            )
        )
    except ImportError as exc:
        print(f"(peer texas_holdem_v4 skipped: {exc})")
    for name, make in rows:
        print(f"{name:<55} {best_fps(make(), args.seconds, args.repeat):8.1f} frames/s", flush=True)


if __name__ == "__main__":
    main()
