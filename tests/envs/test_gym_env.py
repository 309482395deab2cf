"""Spades-v0 as Gymnasium and SB3 expect it: registered on import, check_env passes (illegal
actions end the episode with a penalty, or raise), make_vec_env with Dummy and Subproc (spawn),
render_fps, rgb_array frames, RecordVideo, bounds that hold every observation."""

from __future__ import annotations

import subprocess
import sys

import gymnasium
import numpy as np
import pytest

import spades_env
from spades_env.core.game import IllegalActionError
from spades_env.envs.gym_env import SpadesGymEnv


def test_registered_on_import_of_the_package():
    code = "import gymnasium, spades_env; e = gymnasium.make('Spades-v0'); print(e.reset(seed=0)[0].shape)"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == f"({spades_env.core.observation.OBS_SIZE},)"
    # the module-qualified id imports the package itself (spawned workers)
    code = "import gymnasium; e = gymnasium.make('spades_env:Spades-v0'); print(e.spec.id)"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == "Spades-v0"


def test_metadata():
    md = SpadesGymEnv.metadata
    assert md["render_fps"] > 0 and {"ansi", "rgb_array"} <= set(md["render_modes"])


def test_gymnasium_check_env():
    from gymnasium.utils.env_checker import check_env

    env = gymnasium.make("Spades-v0", rules={"max_hands": 2}, render_mode="rgb_array")
    check_env(env.unwrapped, skip_render_check=False)


def test_sb3_check_env():
    pytest.importorskip("stable_baselines3")
    from stable_baselines3.common.env_checker import check_env

    check_env(SpadesGymEnv(rules={"max_hands": 2}), warn=True)


def test_illegal_penalty_ends_the_episode():
    env = gymnasium.make("Spades-v0", illegal_reward=-3.0)
    obs, info = env.reset(seed=1)
    illegal = int(np.flatnonzero(info["action_mask"] == 0)[0])
    state = env.unwrapped.game.state.copy()
    obs2, r, term, trunc, info = env.step(illegal)
    assert (r, term, trunc, info["illegal_action"]) == (-3.0, True, False, True)
    assert (env.unwrapped.game.state == state).all() and (obs2 == obs).all()
    assert not info["action_mask"].any()
    with pytest.raises(RuntimeError, match="after the episode ended"):
        env.step(0)
    env.reset(seed=1)  # and a new episode starts


def test_illegal_raise_changes_nothing():
    env = SpadesGymEnv(illegal="raise")
    _, info = env.reset(seed=1)
    state = env.game.state.copy()
    with pytest.raises(IllegalActionError):
        env.step(int(np.flatnonzero(info["action_mask"] == 0)[0]))
    assert (env.game.state == state).all()
    env.step(int(np.flatnonzero(info["action_mask"])[0]))  # still playable
    for bad in ("nonsense", None):
        with pytest.raises(ValueError, match="illegal must be"):
            SpadesGymEnv(illegal=bad)


def test_bounds_hold_every_observation():
    env = SpadesGymEnv(rules={"max_hands": 6}, opponents="greedy")
    rng = np.random.default_rng(0)
    box = env.observation_space
    assert np.isfinite(box.low).all() and np.isfinite(box.high).all()
    for ep in range(3):
        obs, info = env.reset(seed=ep)
        done = False
        while not done:
            assert box.contains(obs), np.flatnonzero((obs < box.low) | (obs > box.high))
            obs, _, term, trunc, info = env.step(int(rng.choice(np.flatnonzero(info["action_mask"]))))
            done = term or trunc
        assert box.contains(obs)


@pytest.mark.parametrize("kind", ["dummy", "subproc"])
def test_make_vec_env(kind):
    pytest.importorskip("stable_baselines3")
    from stable_baselines3.common.env_util import make_vec_env
    from stable_baselines3.common.vec_env import DummyVecEnv, SubprocVecEnv

    kwargs = {"env_kwargs": {"rules": {"max_hands": 1}}, "seed": 0}
    if kind == "dummy":
        venv = make_vec_env("Spades-v0", n_envs=2, vec_env_cls=DummyVecEnv, **kwargs)
    else:  # a spawned worker has not imported spades_env: the qualified id does it
        venv = make_vec_env(
            "spades_env:Spades-v0",
            n_envs=2,
            vec_env_cls=SubprocVecEnv,
            vec_env_kwargs={"start_method": "spawn"},
            **kwargs,
        )
    try:
        obs = venv.reset()
        assert obs.shape == (2, spades_env.core.observation.OBS_SIZE)
        for _ in range(30):
            masks = np.array(venv.env_method("action_masks"))
            actions = np.array([np.flatnonzero(m)[0] for m in masks])
            obs, rew, done, infos = venv.step(actions)
            assert obs.shape[0] == 2 and rew.shape == (2,)
        frames = venv.get_images()
        assert len(frames) == 2 and frames[0].shape[2] == 3 and frames[0].dtype == np.uint8
    finally:
        venv.close()


def test_rgb_array_render():
    env = gymnasium.make("Spades-v0", render_mode="rgb_array")
    env.reset(seed=0)
    frame = env.render()
    assert frame.dtype == np.uint8 and frame.ndim == 3 and frame.shape[2] == 3
    text = gymnasium.make("Spades-v0", render_mode="ansi")
    text.reset(seed=0)
    assert "Spades" in text.render()


def test_record_video(tmp_path):
    pytest.importorskip("moviepy")
    from gymnasium.wrappers import RecordVideo

    env = gymnasium.make("Spades-v0", rules={"max_hands": 1}, render_mode="rgb_array")
    env = RecordVideo(env, str(tmp_path / "videos"), episode_trigger=lambda ep: True, disable_logger=True)
    obs, info = env.reset(seed=0)
    done = False
    while not done:
        obs, _, term, trunc, info = env.step(int(np.flatnonzero(info["action_mask"])[0]))
        done = term or trunc
    env.close()
    videos = list((tmp_path / "videos").glob("*.mp4"))
    assert videos and videos[0].stat().st_size > 1000


def test_plain_id_in_spawned_workers_of_a_script(tmp_path):
    # a script that imports spades_env: spawn re-imports it in each worker, so "Spades-v0" is found
    pytest.importorskip("stable_baselines3")
    script = tmp_path / "train.py"
    script.write_text(
        "import numpy as np\n"
        "from stable_baselines3.common.env_util import make_vec_env\n"
        "from stable_baselines3.common.vec_env import SubprocVecEnv\n"
        "import spades_env  # noqa: F401\n"
        "if __name__ == '__main__':\n"
        "    venv = make_vec_env('Spades-v0', n_envs=2, vec_env_cls=SubprocVecEnv,\n"
        "                        vec_env_kwargs={'start_method': 'spawn'}, env_kwargs={'rules': {'max_hands': 1}})\n"
        "    obs = venv.reset()\n"
        "    masks = np.array(venv.env_method('action_masks'))\n"
        "    venv.step(np.array([np.flatnonzero(m)[0] for m in masks]))\n"
        "    venv.close()\n"
        "    print('ok', obs.shape[0])\n"
    )
    out = subprocess.run([sys.executable, str(script)], capture_output=True, text=True, timeout=300, cwd=tmp_path)
    assert out.returncode == 0, out.stderr
    assert out.stdout.split() == ["ok", "2"]


@pytest.mark.parametrize(
    ("opponents", "error", "words"),
    [
        ({9: "random"}, ValueError, r"no Policy for seat\(s\) \[1, 3\]: its keys are \[9\], the opponents' seats \[1, 3\]"),
        ({1: "random", 3: ("heuristic", 3)}, TypeError, "opponent for seat 3 must be a Policy, a bot name or None, got tuple"),
    ],
)
def test_opponents_that_miss_a_seat_or_are_not_policies_are_refused_at_construction(opponents, error, words):
    from spades_env.core.validate import InputError

    with pytest.raises(error, match=words) as info:
        SpadesGymEnv(learner_seats=[0, 2], opponents=opponents)
    assert isinstance(info.value, InputError)  # one family of input errors, ValueError or TypeError
