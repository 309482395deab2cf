"""The Policy protocol: anything that picks an action from one seat's observation.

Bots and trained networks implement it, and the arena, the Gymnasium adapter and the CLI take
any of them. A policy sees only what its seat may know: the observation vector and the
legal-action mask (see :mod:`spades_env.observation`).
"""

from __future__ import annotations

from typing import Protocol, runtime_checkable

import numpy as np


@runtime_checkable
class Policy(Protocol):
    """Chooses an action id (0..69) for one seat."""

    def act(self, observation: np.ndarray, action_mask: np.ndarray) -> int:
        """Pick a legal action given the seat's observation vector and ``int8[70]`` mask."""
        ...


class RandomPolicy:
    """L0: a uniformly random legal action, from its own seeded generator."""

    name = "random"

    def __init__(self, seed: int | np.random.Generator | None = None) -> None:
        self.rng = seed if isinstance(seed, np.random.Generator) else np.random.default_rng(seed)

    def act(self, observation: np.ndarray, action_mask: np.ndarray) -> int:
        legal = np.flatnonzero(action_mask)
        if legal.size == 0:
            raise ValueError("RandomPolicy.act: the action mask has no legal action")
        return int(legal[self.rng.integers(legal.size)])
