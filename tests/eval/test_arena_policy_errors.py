"""The arena never plays an illegal move of a policy: a violation is a PolicyError naming the
policy (issue 37), on the per-game and the batched path."""

from __future__ import annotations

import pytest

from helpers.bad_input import AlwaysZero, BatchedZero
from spades_env.core.rules import load_rules
from spades_env.eval import make_jobs, play_boards
from spades_env.eval.batched import play_boards_batched
from spades_env.policies.base import PolicyError


def _factory(cls):
    return lambda seed, rules: cls()


@pytest.mark.parametrize("cls", [AlwaysZero, BatchedZero])
def test_the_arena_refuses_an_illegal_move_naming_the_policy(cls):
    rules = load_rules("tournament").replace(max_hands=1)
    jobs = make_jobs((_factory(cls), "random"), ("random", "random"), 1, seed=0, rules=rules, fmt="hand")
    with pytest.raises(PolicyError, match=cls.name):
        play_boards(jobs)
    with pytest.raises(PolicyError, match=cls.name):
        play_boards_batched(jobs)
