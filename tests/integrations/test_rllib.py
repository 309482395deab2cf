"""The RLlib integration: the MultiAgentEnv wrapper, seat-to-module mapping, Policy export.

No Ray cluster here (``make rllib-smoke`` trains on one); these run in seconds. They need the
``rllib`` extra: without Ray they skip, unless ``SPADES_REQUIRE_RAY=1`` (set by
``make rllib-smoke``, which CI runs), where a missing Ray is a failure.
"""

from __future__ import annotations

import importlib
import os
import subprocess
import sys

import numpy as np
import pytest

import spades_env


def _require(name: str):
    if os.environ.get("SPADES_REQUIRE_RAY") == "1":
        return importlib.import_module(name)  # a missing Ray fails here
    return pytest.importorskip(name, reason=f"{name} is not installed (the rllib extra: make rllib-smoke)")


def test_import_spades_env_does_not_import_ray_or_torch():
    code = "import sys, spades_env, spades_env.integrations; print(sorted(m for m in ('ray', 'torch') if m in sys.modules))"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "[]"


@pytest.fixture(scope="module")
def rl():
    _require("ray")
    from spades_env.integrations import rllib

    return rllib


def test_spaces_use_rllibs_action_masking_keys(rl):
    env = rl.SpadesMultiAgentEnv({"episode": "hand"})
    aec = spades_env.env()
    aec_space = aec.observation_space("player_0")
    assert env.possible_agents == ["player_0", "player_1", "player_2", "player_3"]
    for a in env.possible_agents:
        sp = env.observation_spaces[a]
        assert set(sp.spaces) == {"observations", "action_mask"}
        assert sp["observations"].shape == aec_space["observation"].shape
        assert sp["action_mask"].shape == (aec.action_space(a).n,)
        assert env.action_spaces[a].n == aec.action_space(a).n


def test_turn_based_steps_match_the_aec_env(rl):
    """Only the agent to act gets an observation, equal to the AEC env's; rewards add up to
    the AEC env's; at the end every agent gets a last observation and ``__all__`` is set."""
    env = rl.SpadesMultiAgentEnv({"episode": "hand"})
    aec = spades_env.env(episode="hand")
    rng = np.random.default_rng(3)
    for seed in (0, 1):
        obs, _ = env.reset(seed=seed)
        aec.reset(seed=seed)
        totals = dict.fromkeys(env.possible_agents, 0.0)
        aec_totals = dict.fromkeys(env.possible_agents, 0.0)
        for _ in range(1000):
            assert list(obs) == [aec.agent_selection]
            agent, o = next(iter(obs.items()))
            ref = aec.observe(agent)
            np.testing.assert_array_equal(o["observations"], ref["observation"])
            np.testing.assert_array_equal(o["action_mask"], ref["action_mask"].astype(np.float32))
            assert o["action_mask"].dtype == np.float32 and o["observations"].dtype == np.float32
            assert env.observation_spaces[agent].contains(o)
            action = int(rng.choice(np.flatnonzero(o["action_mask"])))
            obs, rew, term, trunc, _ = env.step({agent: action})
            aec.step(action)
            for a, r in rew.items():
                totals[a] += r
            for a in aec.possible_agents:
                aec_totals[a] += aec.rewards[a]
            if term["__all__"] or trunc["__all__"]:
                break
            assert term == {"__all__": False} and trunc == {"__all__": False}
        else:
            pytest.fail("a hand did not end in 1000 steps")
        assert set(obs) == set(env.possible_agents)
        assert all(not o["action_mask"].any() for o in obs.values())
        assert all(term[a] for a in env.possible_agents)
        assert totals == pytest.approx(aec_totals)
        assert any(v != 0 for v in totals.values())
        # partners share the team's reward
        assert totals["player_0"] == pytest.approx(totals["player_2"])


def test_rllibs_own_env_checker_passes(rl):
    from ray.rllib.utils.pre_checks.env import check_multiagent_environments

    check_multiagent_environments(rl.SpadesMultiAgentEnv({"episode": "hand"}))


def test_unknown_env_config_key_is_named(rl):
    with pytest.raises(ValueError, match="bogus"):
        rl.SpadesMultiAgentEnv({"bogus": 1})
    with pytest.raises(ValueError, match="env_config must be a dict, got 'x'"):
        rl.SpadesMultiAgentEnv("x")


@pytest.mark.parametrize("agent_id", ["bad", "player_x", "player_7", 3, "seat_1"])
def test_a_bad_agent_id_is_named(rl, agent_id):
    with pytest.raises(ValueError, match="an agent id is 'player_0' to 'player_3'"):
        rl.seat_of(agent_id)
    assert rl.seat_of("player_3") == 3


@pytest.mark.parametrize("hiddens", [[], "ab", [64, -1], [64, 1.5], None])
def test_bad_hidden_layer_widths_are_refused(rl, hiddens):
    with pytest.raises(ValueError, match="hiddens"):
        rl.model_config(hiddens)
    assert rl.model_config([32, 16])["fcnet_hiddens"] == [32, 16]


def test_seat_to_module_mapping(rl):
    import pickle

    shared, team = rl.SeatToModule("shared"), rl.SeatToModule("team")
    assert {shared(f"player_{i}") for i in range(4)} == {"shared"}
    assert [team(f"player_{i}") for i in range(4)] == ["team_ns", "team_ew", "team_ns", "team_ew"]
    assert pickle.loads(pickle.dumps(team))("player_3") == "team_ew"
    assert rl.module_ids("team") == ("team_ns", "team_ew")
    with pytest.raises(ValueError, match="policy mode"):
        rl.SeatToModule("solo")


def test_exported_module_plays_as_a_policy(rl, tmp_path):
    """A masked PPO module, exported (safetensors + meta.json) and loaded back, is a Policy
    with the module's logits that only picks legal actions, in the arena too."""
    pytest.importorskip("torch")
    import functools

    import torch
    from ray.rllib.core.rl_module.rl_module import RLModuleSpec
    from ray.rllib.examples.rl_modules.classes.action_masking_rlm import ActionMaskingTorchRLModule

    from spades_env.eval import run_duplicate
    from training.rllib_policy import RLlibPolicy, export_module, load_rllib_policy

    env = rl.SpadesMultiAgentEnv({"episode": "hand"})
    module = RLModuleSpec(
        module_class=ActionMaskingTorchRLModule,
        observation_space=env.observation_spaces["player_0"],
        action_space=env.action_spaces["player_0"],
        model_config=rl.model_config((16,)),
    ).build()

    class Algo:  # the one method export_module uses of an RLlib Algorithm
        def get_module(self, mid):
            return module if mid == "shared" else None

    out = export_module(Algo(), "shared", tmp_path / "shared", hidden=(16,))
    policy = load_rllib_policy(out, seed=0)
    assert isinstance(policy, spades_env.Policy) and isinstance(policy, RLlibPolicy)
    obs, _ = env.reset(seed=5)
    (agent, o), = obs.items()
    batch = lambda: {"obs": {k: torch.as_tensor(v).reshape(1, -1) for k, v in o.items()}}  # noqa: E731
    with torch.no_grad():
        want = module.forward_inference(batch())["action_dist_inputs"]
        got = policy.module.forward_inference(batch())["action_dist_inputs"]
    torch.testing.assert_close(got, want)
    a = policy.act(o["observations"], o["action_mask"].astype(np.int8))
    assert o["action_mask"][a] == 1
    sampler = load_rllib_policy(out, seed=1, deterministic=False)
    for _ in range(20):
        assert o["action_mask"][sampler.act(o["observations"], o["action_mask"])] == 1
    boards = run_duplicate(
        (functools.partial(load_rllib_policy, out),) * 2, ("random", "random"), 1, seed=0, fmt="hand"
    )
    assert len(boards) == 1
    # from an RLlib checkpoint directory (the layout Algorithm.save_to_path writes)
    module.save_to_path(str(tmp_path / "ckpt" / "learner_group" / "learner" / "rl_module" / "shared"))
    again = load_rllib_policy(export_module(tmp_path / "ckpt", "shared", tmp_path / "again", hidden=(16,)))
    with torch.no_grad():
        torch.testing.assert_close(again.module.forward_inference(batch())["action_dist_inputs"], want)
    with pytest.raises(FileNotFoundError, match="team_ns"):
        export_module(tmp_path / "ckpt", "team_ns", tmp_path / "nope", hidden=(16,))
    (tmp_path / "shared" / "meta.json").write_text('{"format": "other"}')
    with pytest.raises(ValueError, match="format"):
        load_rllib_policy(out)


def test_train_config_file_loads_and_rejects_bad_keys(tmp_path):
    from training.config import ConfigError, load_config
    from training.rllib_train import RLlibConfig

    cfg = load_config(RLlibConfig, "configs/train/rllib.yaml")
    assert cfg.iterations == 2 and cfg.num_env_runners == 2
    with pytest.raises(ConfigError, match="policy_mode"):
        load_config(RLlibConfig, "configs/train/rllib.yaml", ["policy_mode=solo"])
    with pytest.raises(ConfigError, match="nope"):
        load_config(RLlibConfig, "configs/train/rllib.yaml", ["nope=1"])
