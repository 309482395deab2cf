"""The contract every env front-end passes (one test, as pgx's ``api_test`` for every env).

Each front-end is driven through a small adapter that gives the seat to act's observation and
mask, steps one action and says when the episode ended. For the facade, the AEC, Parallel and
Gymnasium envs, the batched engine and its Gymnasium and SB3 adapters, under four- and
two-player rules:

* an observation is ``float32 [OBS_SIZE]``, finite and inside the bounds the observation space
  declares (``obs_bounds(rules)``); a mask is ``int8 [70]`` of 0/1 with a legal action;
* random legal play ends the episode within a bound, with finite rewards;
* the same seed and actions give the same observations, masks and rewards;
* under ``illegal="raise"`` an illegal action raises ``IllegalActionError`` and changes
  nothing: the game goes on exactly as if it had not been tried.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator

import gymnasium
import numpy as np
import pytest

import spades_env
from spades_env.core.game import IllegalActionError, SpadesGame
from spades_env.core.observation import OBS_SIZE, obs_bounds
from spades_env.core.rules import load_rules
from spades_env.envs.vector import VectorSpades

Step = tuple[np.ndarray, np.ndarray, float, bool]  # next observation, mask, reward, episode over


class Facade:
    def __init__(self, rules, illegal):
        self.rules, self.illegal = rules, illegal

    def reset(self, seed: int) -> tuple[np.ndarray, np.ndarray]:
        self.g = SpadesGame(self.rules, seed=seed, episode="game", illegal=self.illegal)
        return self.g.observe()

    def step(self, action: int) -> Step:
        r = self.g.step(action)
        over = self.g.episode_over
        obs, mask = (np.zeros(OBS_SIZE, np.float32), np.zeros(70, np.int8)) if over else self.g.observe()
        return obs, mask, float(sum(r.rewards)), over


class AEC:
    def __init__(self, rules, illegal, make=spades_env.env):
        self.e = make(rules=rules, episode="game", illegal=illegal)

    def _next(self) -> tuple[np.ndarray, np.ndarray]:
        e = self.e
        while e.agents and (e.terminations[e.agent_selection] or e.truncations[e.agent_selection]):
            e.step(None)
        if not e.agents:
            return np.zeros(OBS_SIZE, np.float32), np.zeros(70, np.int8)
        o = e.observe(e.agent_selection)
        return o["observation"], o["action_mask"]

    def reset(self, seed: int):
        self.e.reset(seed=seed)
        return self._next()

    def step(self, action: int) -> Step:
        self.e.step(action)
        reward = float(sum(self.e.unwrapped.rewards.values()))
        obs, mask = self._next()
        return obs, mask, reward, not self.e.agents


class Parallel:
    def __init__(self, rules, illegal):
        self.p = spades_env.parallel_env(rules=rules, episode="game", illegal=illegal)

    def _acting(self):
        acting = [a for a in self.p.agents if self.obs[a]["action_mask"].any()]
        if not acting:
            return np.zeros(OBS_SIZE, np.float32), np.zeros(70, np.int8)
        self.agent = acting[0]
        return self.obs[self.agent]["observation"], self.obs[self.agent]["action_mask"]

    def reset(self, seed: int):
        self.obs, _ = self.p.reset(seed=seed)
        return self._acting()

    def step(self, action: int) -> Step:
        actions = {a: (action if a == self.agent else 0) for a in self.p.agents}
        self.obs, rew, _, _, _ = self.p.step(actions)
        obs, mask = self._acting()
        return obs, mask, float(sum(rew.values())), not self.p.agents


class Gym:
    def __init__(self, rules, illegal):
        self.e = gymnasium.make("Spades-v0", rules=rules, episode="game", illegal=illegal)

    def reset(self, seed: int):
        obs, info = self.e.reset(seed=seed)
        return obs, info["action_mask"]

    def step(self, action: int) -> Step:
        obs, r, term, trunc, info = self.e.step(action)
        return obs, info["action_mask"], float(r), bool(term or trunc)


class Vector:
    """One game of a batch (the others step alongside with their first legal action)."""

    def __init__(self, rules, illegal):
        self.v = VectorSpades(2, rules, episode="game", illegal=illegal)

    def reset(self, seed: int):
        self.res = self.v.reset(seed=[seed, seed + 1])
        return self.res.obs[0].copy(), self.res.mask[0].copy()

    def step(self, action: int) -> Step:
        actions = np.argmax(self.res.mask, axis=1)
        actions[0] = action
        self.res = self.v.step(actions)
        done = bool(self.res.terminated[0] or self.res.truncated[0])
        return self.res.obs[0].copy(), self.res.mask[0].copy(), float(self.res.reward[0].sum()), done


class GymVector:
    """The Gymnasium vector adapter: game 0 of two, the learner's seats (the rest by random)."""

    def __init__(self, rules, illegal):
        from spades_env.envs.vector_adapters import SpadesVectorEnv

        self.e = SpadesVectorEnv(2, rules, episode="game", illegal=illegal)

    def reset(self, seed: int):
        self.obs, _ = self.e.reset(seed=[seed, seed + 1])
        return self.obs["observation"][0], self.obs["action_mask"][0]

    def step(self, action: int) -> Step:
        actions = np.argmax(self.obs["action_mask"], axis=1)
        actions[0] = action
        self.obs, r, term, trunc, _ = self.e.step(actions)
        return self.obs["observation"][0], self.obs["action_mask"][0], float(r[0]), bool(term[0] or trunc[0])


class SB3Vector:
    def __init__(self, rules, illegal):
        pytest.importorskip("stable_baselines3")
        from spades_env.envs.vector_adapters import SpadesSB3VecEnv

        self.e = SpadesSB3VecEnv(2, rules, episode="game", illegal=illegal)

    def reset(self, seed: int):
        self.e.seed(seed)
        self.obs = self.e.reset()
        return self.obs[0], self.e.action_masks()[0].astype(np.int8)

    def step(self, action: int) -> Step:
        masks = self.e.action_masks()
        actions = np.argmax(masks, axis=1)
        actions[0] = action
        self.obs, r, done, _ = self.e.step(actions)
        return self.obs[0], self.e.action_masks()[0].astype(np.int8), float(r[0]), bool(done[0])


FRONT_ENDS: dict[str, Callable] = {
    "SpadesGame": Facade,
    "env": AEC,
    "raw_env": lambda rules, illegal: AEC(rules, illegal, spades_env.raw_env),
    "parallel_env": Parallel,
    "Spades-v0": Gym,
    "VectorSpades": Vector,
    "SpadesVectorEnv": GymVector,
    "SpadesSB3VecEnv": SB3Vector,
}
RULES = {
    "four": load_rules("tournament").replace(max_hands=2),
    "two": load_rules("two_player").replace(max_hands=2),
}


def _episode(front, seed: int, pick: np.random.Generator, rules) -> Iterator[tuple]:
    """Random legal play of one episode: (observation, mask, action, reward) per decision."""
    low, high = obs_bounds(rules)
    obs, mask = front.reset(seed)
    for _ in range(2000):
        assert obs.dtype == np.float32 and obs.shape == (OBS_SIZE,)
        assert np.isfinite(obs).all() and (obs >= low).all() and (obs <= high).all()
        assert mask.dtype == np.int8 and mask.shape == (70,) and set(np.unique(mask)) <= {0, 1}
        assert mask.any(), "a running episode has a legal action"
        action = int(pick.choice(np.flatnonzero(mask)))
        obs2, mask2, reward, over = front.step(action)
        assert np.isfinite(reward)
        yield obs.copy(), mask.copy(), action, reward
        if over:
            return
        obs, mask = obs2, mask2
    raise AssertionError("the episode did not end within 2000 decisions")


@pytest.mark.parametrize("players", sorted(RULES))
@pytest.mark.parametrize("name", sorted(FRONT_ENDS))
def test_front_end_contract(name, players):
    rules = RULES[players]
    make = FRONT_ENDS[name]
    first = list(_episode(make(rules, "raise"), 11, np.random.default_rng(0), rules))
    assert len(first) >= 13 * rules.num_players  # at least a hand's card plays
    again = list(_episode(make(rules, "raise"), 11, np.random.default_rng(0), rules))
    assert len(again) == len(first)
    for a, b in zip(first, again, strict=True):
        assert np.array_equal(a[0], b[0]) and np.array_equal(a[1], b[1]) and a[2:] == b[2:]

    # an illegal action is refused and changes nothing: the same episode follows
    front = make(rules, "raise")
    obs, mask = front.reset(11)
    tried = 0
    for k, (o, m, action, _reward) in enumerate(first[:40]):
        assert np.array_equal(obs, o) and np.array_equal(mask, m), f"decision {k} differs after a refusal"
        if k % 7 == 3:
            with pytest.raises(IllegalActionError):
                front.step(int(np.flatnonzero(m == 0)[0]))
            tried += 1
        obs, mask, r, _ = front.step(action)
        assert r == first[k][3] or k == len(first) - 1
    assert tried >= 5
