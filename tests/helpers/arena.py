"""Deterministic policies and a picklable policy factory for the arena tests."""

from __future__ import annotations

import numpy as np

from spades_env.policies.base import RandomPolicy


class FirstLegal:
    """Deterministic given the observation: the lowest legal action id."""

    def act(self, observation, action_mask):
        return int(np.flatnonzero(action_mask)[0])


class LastLegal:
    """Deterministic: the highest legal action id (sees its cards, then bids 13)."""

    def act(self, observation, action_mask):
        return int(np.flatnonzero(action_mask)[-1])


class Factory:
    """A picklable named policy factory ``f(seed, rules)``."""

    def __init__(self, name: str, kind: str) -> None:
        self.name, self.kind = name, kind

    def __call__(self, seed, rules):
        return {"first": FirstLegal, "last": LastLegal}.get(self.kind, lambda: RandomPolicy(seed))()


FIRST, LAST, RAND = Factory("first", "first"), Factory("last", "last"), Factory("rand", "random")
