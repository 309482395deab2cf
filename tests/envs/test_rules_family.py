"""VectorSpades with a family of rules: each game plays the rules its seed picks, exactly as the
facade plays them, and its observation carries those rules."""

from __future__ import annotations

import numpy as np
import pytest

from spades_env.core.episode import RUNNING, episode_code, reward_code, settle
from spades_env.core.game import SpadesGame
from spades_env.core.observation import OBS_SIZE, encode_observation, rules_params_of
from spades_env.core.rules import load_rules
from spades_env.core.validate import InputError
from spades_env.envs.vector import RandomLegal, VectorSpades, next_game_seed, rules_index_of_seed

FAMILY = [
    "tournament",
    "house",
    {"blind_nil": False, "blind_nil_exchange": 0},
    {**load_rules("openspiel").to_dict(), "first_dealer": -1},
    {"target_score": 300, "bag_limit": 7},
]


def test_each_game_is_the_facades_game_of_its_rules():
    v = VectorSpades(24, FAMILY, episode="game", seed=3, rules_weights=[2, 1, 1, 1, 1])
    rules = v.rules_family
    pick = RandomLegal(24, seed=1)
    games = [SpadesGame(rules[int(v.rules_index[i])], seed=int(v.game_seeds[i])) for i in range(24)]
    rew = np.zeros(4)
    seen = set()
    for _ in range(1500):
        acts = pick(np.ascontiguousarray(v._result().mask))
        res = v.step(acts)
        for i in range(24):
            g = games[i]
            g.apply(int(acts[i]))
            st = settle(g.state, g.params, episode_code("game"), reward_code("score"), 0.01, rew)
            if st != RUNNING:
                assert res.terminated[i] or res.truncated[i]
                k = int(v.rules_index[i])
                assert k == rules_index_of_seed(next_game_seed(g.state), v._family[1])
                g = games[i] = SpadesGame(rules[k], seed=next_game_seed(g.state))
            assert np.array_equal(g.state, v.states[i])
            assert np.array_equal(v.game_params[i], g.params)
            seen.add(int(v.rules_index[i]))
            obs = np.empty(OBS_SIZE, np.float32)
            encode_observation(g.state, g.params, g.current_player, obs)
            assert np.array_equal(obs, res.obs[i])
    assert seen == set(range(len(FAMILY)))


def test_observation_carries_the_rules_of_its_game():
    v = VectorSpades(40, FAMILY, seed=5)
    res = v.reset(seed=5)
    for i in range(40):
        p = rules_params_of(res.obs[i])
        want = v.game_params[i]
        for k in range(len(p)):
            if k not in (13, 14, 16):  # max_hands, games to win, first dealer: not in the slice
                assert p[k] == want[k], (i, k)


def test_one_rules_is_unchanged_and_weights_pick_the_rules():
    a = VectorSpades(8, "house", seed=2)
    b = VectorSpades(8, ["house"], seed=2)
    assert np.array_equal(a.states, b.states) and (b.rules_index == 0).all()
    cum = VectorSpades(1, FAMILY[:2], rules_weights=[3, 1])._family[1]
    picks = np.array([rules_index_of_seed(s, cum) for s in range(4000)])
    assert 0.70 < np.mean(picks == 0) < 0.80


@pytest.mark.parametrize(
    "kw, words",
    [
        ({"rules": []}, "at least one"),
        ({"rules": ["tournament", "two_player"]}, "same num_players"),
        ({"rules": FAMILY[:2], "rules_weights": [1]}, "rules_weights"),
        ({"rules": FAMILY[:2], "rules_weights": [0, 0]}, "rules_weights"),
        ({"rules": FAMILY[:2], "rules_weights": [1, float("nan")]}, "rules_weights"),
    ],
)
def test_bad_families_are_clear_errors(kw, words):
    with pytest.raises(InputError, match=words):
        VectorSpades(2, **kw)
