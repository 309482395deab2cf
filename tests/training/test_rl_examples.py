"""Smoke tests of the TorchRL and Tianshou examples (training/torchrl_example.py,
training/tianshou_example.py): a couple of tiny iterations each, in seconds, and every action
the learners took was legal."""

from __future__ import annotations

import math

import numpy as np
import pytest


def test_torchrl_masked_ppo_runs_and_plays_legal_moves():
    pytest.importorskip("torchrl", reason="torchrl is not installed (the test extra installs it)")
    import torch

    from training import torchrl_example as ex

    args = ex.Args(iterations=2, frames_per_batch=64, minibatch=32, hidden=16, epochs=1)
    history = ex.train(args, log=lambda *_: None)
    assert [h["iteration"] for h in history] == [1, 2]
    for h in history:
        assert h["env_steps"] == 64 and h["decisions"] == 64  # exactly one seat acts per step
        assert math.isfinite(h["loss"])

    env = ex.make_env(args)
    actor, _ = ex.make_modules(env, 16)
    with torch.no_grad():
        rollout = env.rollout(80, actor, break_when_any_done=False)
    acting = rollout[ex.GROUP, "mask"]
    assert (acting.sum(-1) == 1).all()
    action = rollout[ex.GROUP, "action"][acting]
    legal = rollout[ex.GROUP, "action_mask"][acting]
    assert legal.gather(-1, action.unsqueeze(-1)).all()
    assert rollout["next", "done"].any()  # a hand ended (and the env reset inside the rollout)


def test_tianshou_masked_dqn_runs_and_plays_legal_moves():
    pytest.importorskip("tianshou", reason="tianshou is not installed (the test extra installs it)")
    from tianshou.data import Collector, VectorReplayBuffer
    from tianshou.env import DummyVectorEnv

    from training import tianshou_example as ex

    args = ex.Args(iterations=2, steps_per_iteration=96, updates_per_iteration=2, batch_size=16, hidden=16)
    history = ex.train(args, log=lambda *_: None)
    assert [h["iteration"] for h in history] == [1, 2]
    assert all(h["env_steps"] >= 96 and math.isfinite(h["loss"]) for h in history)

    algorithm, _ = ex.make_algorithm(args)
    envs = DummyVectorEnv([ex.make_env])
    buffer = VectorReplayBuffer(200, 1)
    collector = Collector(algorithm, envs, buffer, exploration_noise=True)
    collector.reset()
    collector.collect(n_step=150)
    data = buffer[np.arange(len(buffer))]
    mask = np.asarray(data.obs.mask, dtype=bool)
    assert mask[np.arange(len(data)), data.act.astype(int)].all()
    assert set(data.obs.agent_id) == {"player_0", "player_1", "player_2", "player_3"}
    envs.close()
