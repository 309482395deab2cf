"""Gymnasium vector env and SB3 VecEnv adapters: only learner seats act from outside, other
seats are played by Policies, the learner team's rewards, autoreset, MaskablePPO smoke run."""

from __future__ import annotations

import numpy as np
import pytest
from gymnasium.vector import VectorEnv

from spades_env import SpadesGame
from spades_env.core import layout as L
from spades_env.core.actions import NUM_ACTIONS
from spades_env.core.episode import episode_code, reward_code, settle
from spades_env.core.observation import OBS_SIZE, encode_observation
from spades_env.envs.vector import next_game_seed
from spades_env.envs.vector_adapters import LearnerDriver, SpadesVectorEnv
from spades_env.policies.base import RandomPolicy

SHORT = {"max_hands": 2}


class FirstLegal:
    """A deterministic Policy: the lowest legal action id."""

    def act(self, observation: np.ndarray, action_mask: np.ndarray) -> int:
        return int(np.flatnonzero(action_mask)[0])


def random_actions(masks: np.ndarray, rng: np.random.Generator) -> np.ndarray:
    return (rng.random(masks.shape) * masks).argmax(axis=1)


def test_gymnasium_vector_env_learner_seats_only_and_team_rewards():
    env = SpadesVectorEnv(6, SHORT, learner_seats=(0, 2), opponents=FirstLegal(), episode="game")
    assert isinstance(env, VectorEnv)
    obs, info = env.reset(seed=3)
    assert obs["observation"].shape == (6, OBS_SIZE) and obs["action_mask"].shape == (6, NUM_ACTIONS)
    assert env.observation_space["observation"].shape == (6, OBS_SIZE)
    rng = np.random.default_rng(0)
    eng = env.driver.engine
    total = np.zeros(6)
    ended = 0
    team_totals = []
    for _ in range(600):
        assert set(eng._seat.tolist()) <= {0, 2}
        assert (obs["action_mask"].sum(axis=1) > 0).all()
        a = random_actions(obs["action_mask"], rng)
        obs, rew, term, trunc, infos = env.step(a)
        total += rew
        for i in np.flatnonzero(term | trunc):
            f = eng.final_states[i]
            # over the game, the learner team's rewards add up to its final score / 100
            team_totals.append((total[i], f[L.SCORES] * 0.01))
            total[i] = 0.0
            ended += 1
            assert infos["_final_obs"][i]
            expect = np.empty(OBS_SIZE, dtype=np.float32)
            encode_observation(f, eng.params, 0, expect)
            assert np.array_equal(infos["final_obs"][i]["observation"], expect)
    assert ended >= 6
    for got, want in team_totals:
        assert got == pytest.approx(want, abs=1e-4)
    env.close()


def test_driver_matches_single_game_with_the_same_policies():
    """Game 0 of the driver, replayed alone: learner moves from the log, E/W FirstLegal."""
    rules = SHORT
    d = LearnerDriver(2, rules, learner_seats=(1, 3), opponents=FirstLegal(), episode="hand", seed=5)
    obs, mask = d.reset(5)
    g = SpadesGame(rules, seed=int(d.engine.game_seeds[0]))
    opp = FirstLegal()
    rng = np.random.default_rng(1)
    rew = np.zeros(4)

    ep, rw = episode_code("hand"), reward_code("score")
    while g.current_player not in (1, 3):
        g.apply(opp.act(None, g.legal_mask()))
    ends = 0
    for _ in range(300):
        o = np.empty(OBS_SIZE, dtype=np.float32)
        encode_observation(g.state, g.params, g.current_player, o)
        assert np.array_equal(obs[0], o) and np.array_equal(mask[0], g.legal_mask())
        a = random_actions(mask, rng)
        g.apply(int(a[0]))
        ended = settle(g.state, g.params, ep, rw, 0.01, rew) != 0
        r0 = rew[1]
        if ended:
            g = SpadesGame(rules, seed=next_game_seed(g.state))
        while g.current_player not in (1, 3):
            g.apply(opp.act(None, g.legal_mask()))
            st = settle(g.state, g.params, ep, rw, 0.01, rew)
            if not ended:
                r0 += rew[1]
                ended = st != 0
            if st:
                g = SpadesGame(rules, seed=next_game_seed(g.state))
        obs, mask = d.step(a)
        assert d.reward[0] == pytest.approx(r0)
        assert bool(d.terminated[0]) == ended
        ends += ended
    assert ends >= 3


def test_bad_learner_seats_and_opponents():
    with pytest.raises(ValueError, match="one team"):
        LearnerDriver(2, "tournament", learner_seats=(0, 1))
    with pytest.raises(ValueError, match="distinct seats"):
        LearnerDriver(2, "two_player", learner_seats=(2,))
    with pytest.raises(ValueError, match="no Policy for seat"):
        LearnerDriver(2, "tournament", learner_seats=(0, 2), opponents={1: RandomPolicy(0)})
    with pytest.raises(TypeError, match="Policy"):
        LearnerDriver(2, "tournament", opponents=42)


def test_two_player_learner_seat_zero():
    env = SpadesVectorEnv(4, "two_player", episode="hand", seed=1)
    obs, _ = env.reset(seed=1)
    rng = np.random.default_rng(2)
    for _ in range(100):
        assert (env.driver.engine._seat == 0).all()
        obs, *_ = env.step(random_actions(obs["action_mask"], rng))


def test_sb3_vecenv_and_maskable_ppo_smoke(tmp_path, monkeypatch):
    pytest.importorskip("stable_baselines3")
    from stable_baselines3.common.vec_env import VecEnv

    from spades_env.envs.vector_adapters import SpadesSB3VecEnv

    venv = SpadesSB3VecEnv(4, SHORT, episode="hand", seed=0)
    assert isinstance(venv, VecEnv)
    venv.seed(10)
    obs = venv.reset()
    assert obs.shape == (4, OBS_SIZE) and obs.dtype == np.float32
    masks = np.stack(venv.env_method("action_masks"))
    assert masks.shape == (4, NUM_ACTIONS) and masks.dtype == bool
    rng = np.random.default_rng(0)
    dones = 0
    for _ in range(80):
        obs, rew, done, infos = venv.step(random_actions(venv.action_masks(), rng))
        for i in np.flatnonzero(done):
            assert infos[i]["terminal_observation"].shape == (OBS_SIZE,)
            dones += 1
    assert dones >= 4
    sb3_contrib = pytest.importorskip("sb3_contrib")
    from sb3_contrib.common.maskable.utils import get_action_masks, is_masking_supported

    assert is_masking_supported(venv)
    assert get_action_masks(venv).shape == (4, NUM_ACTIONS)
    model = sb3_contrib.MaskablePPO(
        "MlpPolicy", venv, n_steps=64, batch_size=64, n_epochs=1, seed=0, device="cpu"
    )
    from training.sb3_train import log_nowhere

    logdir = tmp_path / "sb3_default_log"  # where SB3's default logger would make its folder
    monkeypatch.setenv("SB3_LOGDIR", str(logdir))
    log_nowhere(model)
    model.learn(total_timesteps=256)
    assert model.num_timesteps >= 256
    assert not logdir.exists()
