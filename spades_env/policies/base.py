"""The Policy protocol: anything that picks an action from one seat's observation.

Bots and trained networks implement it, and the arena, the Gymnasium adapter and the CLI take
any of them. A policy sees only what its seat may know: the observation vector and the
legal-action mask (see :mod:`spades_env.core.observation`).
"""

from __future__ import annotations

from typing import Protocol, runtime_checkable

import numpy as np

from spades_env.core.validate import InputError, is_int


@runtime_checkable
class Policy(Protocol):
    """Chooses an action id (0..69) for one seat."""

    def act(self, observation: np.ndarray, action_mask: np.ndarray) -> int:
        """Pick a legal action given the seat's observation vector and ``int8[70]`` mask."""
        ...


def learner_seats_of(learner_seats: tuple[int, ...] | list[int] | None, num_seats: int) -> tuple[int, ...]:
    """The seats a learner plays: one team's seats (default N/S, or seat 0 in the two-player
    game), validated with a clear error."""
    given = learner_seats if learner_seats is not None else ((0, 2) if num_seats == 4 else (0,))
    if isinstance(given, (str, bytes)) or not hasattr(given, "__iter__"):
        raise InputError(f"learner_seats must be a list of seats of 0..{num_seats - 1}, got {learner_seats!r}")
    seats = tuple(int(s) if is_int(s) else -1 for s in given)  # 1.7 and True are not seats
    if not seats or len(set(seats)) != len(seats) or any(not 0 <= s < num_seats for s in seats):
        raise InputError(f"learner_seats must be distinct seats of 0..{num_seats - 1}, got {learner_seats!r}")
    if len({s % 2 for s in seats}) != 1:
        raise InputError(f"learner_seats must be one team (N/S or E/W), got {seats}")
    return seats


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
