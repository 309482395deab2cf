"""The batched form of a Policy (``BatchPolicy``: ``batch_key`` and ``act_batch``) and the one
dispatcher, ``act_rows``: the arena, the driver and training reach a batched form through the
protocol, never through a policy's class, and the actions are those of ``act`` row by row."""

from __future__ import annotations

import numpy as np
import pytest

from spades_env.core.game import SpadesGame
from spades_env.core.rules import load_rules
from spades_env.eval.batched import has_batched_form
from spades_env.policies import load
from spades_env.policies.base import BatchPolicy, Policy, RandomPolicy, act_rows, batch_key_of
from spades_env.policies.driver import seated_actions


class CountingLowest:
    """A user's batched policy (no class of the package): the lowest legal action, counting
    its calls."""

    def __init__(self, log: list[str]) -> None:
        self.log = log

    def act(self, observation, action_mask) -> int:
        self.log.append("act")
        return int(np.flatnonzero(action_mask)[0])

    def batch_key(self):
        return ("lowest",)

    def act_batch(self, observations, action_masks, peers=None):
        self.log.append(f"batch:{len(observations)}")
        return np.argmax(np.asarray(action_masks) != 0, axis=1).astype(np.int64)


class PlainHighest:
    """A policy with no batched form."""

    def act(self, observation, action_mask) -> int:
        return int(np.flatnonzero(action_mask)[-1])


class LoudRandom(RandomPolicy):
    """A subclass that acts otherwise: it must not inherit the random batched form."""

    def act(self, observation, action_mask) -> int:
        return int(np.flatnonzero(action_mask)[-1])


def _decisions(n: int = 60, seed: int = 3) -> tuple[np.ndarray, np.ndarray]:
    game = SpadesGame(load_rules("tournament"), seed=seed)
    rng = np.random.default_rng(seed)
    obs, masks = [], []
    while len(obs) < n:
        o, m = game.observe()
        obs.append(o)
        masks.append(m)
        game.step(int(rng.choice(np.flatnonzero(m))))
    return np.array(obs), np.array(masks)


def test_the_protocol_and_the_keys():
    log: list[str] = []
    assert isinstance(CountingLowest(log), BatchPolicy) and isinstance(CountingLowest(log), Policy)
    assert not isinstance(PlainHighest(), BatchPolicy)
    assert batch_key_of(PlainHighest()) is None
    assert batch_key_of(RandomPolicy(0)) == ("random",)
    assert batch_key_of(LoudRandom(0)) is None  # overrides act: no batched form inherited
    assert batch_key_of(load("heuristic")) == batch_key_of(load("blind")) == ("heuristic",)
    assert has_batched_form(load("spades4_net_v1")) and has_batched_form(load("spades4_v1"))
    assert not has_batched_form(load("greedy"))


def test_act_rows_batches_by_key_and_equals_act_row_by_row():
    obs, masks = _decisions()
    log: list[str] = []
    user = CountingLowest(log)
    net = load("spades4_net_v1", seed=5)
    six = [user, PlainHighest(), RandomPolicy(7), load("heuristic"), net, LoudRandom(1)]
    policies = [six[i % 6] for i in range(len(obs))]  # each policy on every sixth row
    got = act_rows(policies, obs, masks)
    assert log == [f"batch:{len(obs) // 6}"]  # the user's rows in one call, no per-row act
    # the same policies, fresh (the random ones reseeded), one act per row in order
    fresh_net = load("spades4_net_v1", seed=5)
    again = [CountingLowest([]), PlainHighest(), RandomPolicy(7), load("heuristic"), fresh_net, LoudRandom(1)]
    want = [again[i % 6].act(obs[i], masks[i]) for i in range(len(obs))]
    assert got.tolist() == want
    for i, a in enumerate(got.tolist()):
        assert masks[i][a] == 1


def test_the_driver_takes_the_batched_form():
    obs, masks = _decisions(12)
    log: list[str] = []
    user = CountingLowest(log)
    out = np.full(12, -1, np.int64)
    seats = np.arange(12) % 4
    seated_actions(obs, masks, seats, {0: user, 1: PlainHighest(), 2: user, 3: PlainHighest()}, out)
    assert log == ["batch:6"]
    lowest = np.argmax(masks != 0, axis=1)
    highest = 69 - np.argmax(masks[:, ::-1] != 0, axis=1)
    assert out.tolist() == np.where(seats % 2 == 0, lowest, highest).tolist()


def test_reseeded_policies_act_as_freshly_loaded_ones():
    obs, masks = _decisions(40)
    for name in ("random", "heuristic", "blind", "spades4_net_v1"):
        proto = load(name, seed=1)
        a = proto.with_seed(9)
        b = load(name, seed=9)
        assert type(a) is type(b)
        assert [a.act(o, m) for o, m in zip(obs, masks, strict=True)] == [
            b.act(o, m) for o, m in zip(obs, masks, strict=True)
        ], name


def test_act_rows_refuses_a_row_without_a_legal_action():
    obs, masks = _decisions(4)
    masks = masks.copy()
    masks[2] = 0
    with pytest.raises(ValueError, match="no legal action"):
        act_rows([RandomPolicy(0)] * 4, obs, masks)
