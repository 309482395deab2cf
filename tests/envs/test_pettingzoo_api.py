"""PettingZoo conventions: per-instance metadata, the action mask also in infos, the turn-based
parallel_env() through PettingZoo's own conversion (parallel_api_test), rgb_array frames."""

from __future__ import annotations

import warnings

import numpy as np
import pytest
from pettingzoo.test import parallel_api_test
from pettingzoo.utils.wrappers import CaptureStdoutWrapper

import spades_env
from spades_env.envs.aec import raw_env


def test_metadata_is_per_instance():
    before = {k: (list(v) if isinstance(v, list) else v) for k, v in raw_env.metadata.items()}
    e = raw_env(render_mode="human")
    CaptureStdoutWrapper(e)  # appends "ansi" to the env's render_modes
    CaptureStdoutWrapper(raw_env(render_mode="human"))
    assert raw_env.metadata == before
    assert raw_env().metadata == before and raw_env().metadata is not raw_env.metadata
    assert raw_env.metadata["render_fps"] > 0


@pytest.mark.parametrize("rules", [None, "two_player"])
def test_action_mask_in_infos(rules):
    e = spades_env.env(rules=rules, episode="hand")
    e.reset(seed=4)
    rng = np.random.default_rng(0)
    steps = 0
    for agent in e.agent_iter():
        obs, _, term, trunc, info = e.last()
        np.testing.assert_array_equal(info["action_mask"], obs["action_mask"])
        for other in e.agents:  # only the agent to act has legal actions
            if other != agent:
                assert not e.infos[other]["action_mask"].any()
        if term or trunc:
            assert not info["action_mask"].any()
            e.step(None)
            continue
        e.step(int(rng.choice(np.flatnonzero(info["action_mask"]))))
        steps += 1
    assert steps > 13


@pytest.mark.parametrize("rules", [None, "two_player"])
def test_parallel_api(rules):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # the tests' advisory warnings (unknown reset options)
        parallel_api_test(spades_env.parallel_env(rules=rules), num_cycles=400)


def test_parallel_env_plays_a_game():
    par = spades_env.parallel_env(rules={"max_hands": 2})
    obs, infos = par.reset(seed=2)
    assert set(obs) == set(par.possible_agents)
    rng = np.random.default_rng(1)
    totals = dict.fromkeys(par.possible_agents, 0.0)
    steps = 0
    while par.agents:
        acting = [a for a in par.agents if obs[a]["action_mask"].any()]
        assert len(acting) == 1  # turn-based: one agent acts each step
        actions = {a: (int(rng.choice(np.flatnonzero(obs[a]["action_mask"]))) if a in acting else 0) for a in par.agents}
        obs, rew, term, trunc, infos = par.step(actions)
        for a, r in rew.items():
            totals[a] += r
        steps += 1
    assert steps > 50 and totals["player_0"] == totals["player_2"]  # partners share rewards


@pytest.mark.parametrize("viewer", [None, 0, 3])
def test_rgb_array(viewer):
    e = spades_env.env(render_mode="rgb_array", render_viewer=viewer)
    e.reset(seed=0)
    for _ in range(20):
        obs, *_ = e.last()
        e.step(int(np.flatnonzero(obs["action_mask"])[0]))
    frame = e.render()
    assert frame.dtype == np.uint8 and frame.ndim == 3 and frame.shape[2] == 3


def test_state_space_holds_every_state():
    e = spades_env.env(rules={"max_hands": 3})
    e.reset(seed=6)
    space = e.unwrapped.state_space
    assert np.isfinite(space.low).all() and np.isfinite(space.high).all()
    for _agent in e.agent_iter():
        obs, _, term, trunc, _ = e.last()
        assert space.contains(e.unwrapped.state())
        e.step(None if term or trunc else int(np.flatnonzero(obs["action_mask"])[-1]))
