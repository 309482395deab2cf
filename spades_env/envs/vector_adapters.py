"""Training adapters over :class:`~spades_env.envs.vector.VectorSpades`: one learner, other seats
played by given Policies.

* :class:`SpadesVectorEnv`: a ``gymnasium.vector.VectorEnv`` (same-step autoreset) whose
  observations are ``{"observation": float32[B, OBS_SIZE], "action_mask": int8[B, 70]}``
  (``OBS_SIZE``: :mod:`spades_env.core.observation`).
* :class:`SpadesSB3VecEnv`: a Stable-Baselines3 ``VecEnv`` (``Box(OBS_SIZE)`` observations) with
  ``action_masks()`` for sb3-contrib's ``MaskablePPO``.

In both, game ``i`` of the batch is one environment: the learner plays ``learner_seats``
(default N and S, ``(0, 2)``; ``(0,)`` in the two-player game), and the other seats are
played by ``opponents`` (a Policy for all of them, a ``{seat: Policy}`` dict, bots registry
names or checkpoint paths, or ``None`` for seeded :class:`~spades_env.policies.base.RandomPolicy`
players), resolved by the one resolver (:mod:`spades_env.policies.registry`) and stepped by the one
batched driver (:func:`spades_env.policies.driver.step_seated`). The illegal-action setting is the one
of every front-end: ``illegal="raise"`` (the default, as ``VectorSpades``) or ``"penalty"``
(with ``illegal_reward``: that game ends, terminated, with the penalty as its reward;
``info["illegal_action"]``). After each learner action the other
seats' moves are stepped internally until a learner seat is to act again in every game, so
every observation is a learner seat's. The reward is the learner team's (the reward of
``learner_seats[0]``, summed over the internal steps). A finished episode resets its game at
once: the returned observation is the new game's, the final one is in the infos
(``final_obs`` for Gymnasium, ``terminal_observation`` for SB3, as the learner seat
``learner_seats[0]`` sees the final state).

SB3 and Gymnasium are imported here only; :mod:`spades_env.envs.vector` does not need them.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np
from gymnasium import spaces
from gymnasium.vector import AutoresetMode, VectorEnv
from gymnasium.vector.utils import batch_space

from spades_env.core.actions import NUM_ACTIONS
from spades_env.core.episode import EpisodeKnobs
from spades_env.core.observation import OBS_SIZE, encode_observation
from spades_env.core.rules import RulesConfig
from spades_env.envs.aec import observation_bounds
from spades_env.envs.vector import VectorSpades
from spades_env.policies.base import learner_seats_of
from spades_env.policies.driver import step_seated
from spades_env.policies.registry import OpponentSpec, opponent_specs, resolve_opponents


class LearnerDriver:
    """The shared core of the adapters: steps the other seats, through the one batched driver
    (:func:`spades_env.policies.driver.step_seated`), until a learner seat acts."""

    def __init__(
        self,
        num_envs: int,
        rules: RulesConfig | str | dict | None = None,
        learner_seats: Sequence[int] | None = None,
        opponents: OpponentSpec = None,
        episode: str = "game",
        reward: str = "score",
        reward_scale: float = 0.01,
        seed: int | None = None,
        parallel: bool = False,
        illegal: str = "raise",
        illegal_reward: float = -1.0,
    ) -> None:
        knobs = EpisodeKnobs(episode, reward, float(reward_scale), illegal, illegal_reward)
        self.engine = VectorSpades(
            num_envs,
            rules,
            episode=episode,
            reward=reward,
            reward_scale=reward_scale,
            seed=seed,
            illegal=knobs.illegal,
            illegal_reward=knobs.illegal_reward,
            parallel=parallel,
        )
        self.num_envs = num_envs
        n = self.engine.num_seats
        seats = learner_seats_of(learner_seats, n)
        self.learner_seats = seats
        self.is_learner = np.zeros(4, dtype=np.bool_)
        self.is_learner[list(seats)] = True
        others = [s for s in range(n) if s not in seats]
        self._opponent_specs = opponent_specs(opponents, others)  # the one resolver of opponent specs
        self._seat_opponents(seed)
        self._actions = np.zeros(num_envs, dtype=np.int64)
        self.reward = np.zeros(num_envs, dtype=np.float32)
        self.terminated = np.zeros(num_envs, dtype=np.bool_)
        self.truncated = np.zeros(num_envs, dtype=np.bool_)
        self.illegal = np.zeros(num_envs, dtype=np.bool_)
        """``illegal="penalty"``: the learner's action in game ``i`` was illegal and ended it."""
        self.final_obs = np.zeros((num_envs, OBS_SIZE), dtype=np.float32)

    def _seat_opponents(self, seed: int | Sequence[int] | None) -> None:
        others = sorted(self._opponent_specs)
        base = np.random.SeedSequence(seed).spawn(len(others)) if others else []
        self.opponents = resolve_opponents(
            self._opponent_specs, self.engine.rules, dict(zip(others, base, strict=True))
        )

    def reset(self, seed: int | Sequence[int] | None = None) -> tuple[np.ndarray, np.ndarray]:
        """New games everywhere; returns the learner's observations and masks. A ``seed``
        also reseeds the other seats' policies, so the same seed plays the same games."""
        self.engine.reset(seed)
        if seed is not None:
            self._seat_opponents(seed)
        self.reward[:] = 0.0
        self.terminated[:] = False
        self.truncated[:] = False
        self.illegal[:] = False
        self._play_others()
        res = self.engine._result()
        return res.obs, res.mask

    def step(self, actions: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """Apply the learner's actions, then the other seats' until the learner acts again."""
        res = self.engine.step(actions)
        self.reward[:] = res.reward[:, self.learner_seats[0]]
        self.illegal[:] = res.illegal
        if res.illegal.any():  # the penalty goes to the learner seat that acted
            self.reward[:] = np.where(res.illegal, res.reward.sum(axis=1), self.reward)
        self.terminated[:] = res.terminated
        self.truncated[:] = res.truncated
        self._finals(np.flatnonzero(res.terminated | res.truncated))
        self._play_others()
        res = self.engine._result()
        return res.obs, res.mask

    def _finals(self, games: np.ndarray) -> None:
        eng = self.engine
        for i in games:
            encode_observation(eng.final_states[i], eng.params, self.learner_seats[0], self.final_obs[i])

    def _play_others(self) -> None:
        eng = self.engine
        while True:
            others = ~self.is_learner[eng._seat]
            if not others.any():
                return
            was_done = self.terminated | self.truncated
            res = step_seated(eng, self.opponents, others, self._actions)
            # a reward after the episode ended belongs to the next one (none arrives before the
            # learner's first move of a game, but keep the books straight anyway)
            self.reward += np.where(was_done, 0.0, res.reward[:, self.learner_seats[0]]).astype(np.float32)
            ended = (res.terminated | res.truncated) & ~was_done
            self.terminated |= res.terminated & ~was_done
            self.truncated |= res.truncated & ~was_done
            self._finals(np.flatnonzero(ended))


def _obs_box(rules: RulesConfig) -> spaces.Box:
    low, high = observation_bounds(rules)
    return spaces.Box(low, high, dtype=np.float32)


# ---- Gymnasium -------------------------------------------------------------------------------


class SpadesVectorEnv(VectorEnv):
    """A Gymnasium vector env of ``num_envs`` games; one learner, Policies for the others."""

    metadata = {"autoreset_mode": AutoresetMode.SAME_STEP, "render_modes": []}

    def __init__(self, num_envs: int, rules: RulesConfig | str | dict | None = None, **kwargs: Any) -> None:
        self.driver = LearnerDriver(num_envs, rules, **kwargs)
        self.num_envs = num_envs
        self.rules = self.driver.engine.rules
        self.single_observation_space = spaces.Dict(
            {
                "observation": _obs_box(self.rules),
                "action_mask": spaces.Box(0, 1, (NUM_ACTIONS,), dtype=np.int8),
            }
        )
        self.single_action_space = spaces.Discrete(NUM_ACTIONS)
        self.observation_space = batch_space(self.single_observation_space, num_envs)
        self.action_space = batch_space(self.single_action_space, num_envs)
        self.render_mode = None

    def _obs(self, obs: np.ndarray, mask: np.ndarray) -> dict[str, np.ndarray]:
        return {"observation": obs.copy(), "action_mask": mask.copy()}

    def reset(
        self, *, seed: int | list[int] | None = None, options: dict[str, Any] | None = None
    ) -> tuple[dict[str, np.ndarray], dict[str, Any]]:
        """New games everywhere (``seed``: see :class:`~spades_env.envs.vector.VectorSpades`)."""
        obs, mask = self.driver.reset(seed)
        return self._obs(obs, mask), {}

    def step(
        self, actions: np.ndarray
    ) -> tuple[dict[str, np.ndarray], np.ndarray, np.ndarray, np.ndarray, dict[str, Any]]:
        """Learner actions in; next learner observations, team rewards and flags out."""
        d = self.driver
        obs, mask = d.step(np.asarray(actions))
        infos: dict[str, Any] = {}
        done = d.terminated | d.truncated
        for i in np.flatnonzero(done):
            info: dict[str, Any] = {
                "final_obs": {
                    "observation": d.final_obs[i].copy(),
                    "action_mask": np.zeros(NUM_ACTIONS, np.int8),
                }
            }
            if d.illegal[i]:
                info["illegal_action"] = True
            infos = self._add_info(infos, info, int(i))
        return self._obs(obs, mask), d.reward.copy(), d.terminated.copy(), d.truncated.copy(), infos

    def action_masks(self) -> np.ndarray:
        """``bool[B, 70]``: the legal actions of the learner seat to act in each game."""
        return self.driver.engine._mask.astype(bool)

    def close_extras(self, **kwargs: Any) -> None:
        pass


# ---- Stable-Baselines3 -----------------------------------------------------------------------
# SB3 (and so torch) is imported only when ``SpadesSB3VecEnv`` is first used: the class is built
# by the module ``__getattr__`` below, so ``import spades_env.envs.vector_adapters`` stays torch-free.
def _build_sb3_vec_env() -> type:
    try:
        from stable_baselines3.common.vec_env import VecEnv as _SB3VecEnv
    except ImportError as exc:
        raise ImportError(
            'SpadesSB3VecEnv needs stable-baselines3: pip install "spades_env[training]" '
            "(or pip install stable-baselines3 sb3-contrib)"
        ) from exc

    class SpadesSB3VecEnv(_SB3VecEnv):
        """An SB3 ``VecEnv`` of ``num_envs`` games with ``action_masks()`` for MaskablePPO."""

        def __init__(
            self, num_envs: int, rules: RulesConfig | str | dict | None = None, **kwargs: Any
        ) -> None:
            self.driver = LearnerDriver(num_envs, rules, **kwargs)
            self.rules = self.driver.engine.rules
            self.render_mode = None
            self._actions: np.ndarray | None = None
            super().__init__(num_envs, _obs_box(self.rules), spaces.Discrete(NUM_ACTIONS))

        def reset(self) -> np.ndarray:
            seed = None
            if any(s is not None for s in self._seeds):
                seed = [int(s) if s is not None else 0 for s in self._seeds]
            obs, _ = self.driver.reset(seed)
            self._reset_seeds()
            return obs.copy()

        def step_async(self, actions: np.ndarray) -> None:
            self._actions = np.asarray(actions).reshape(self.num_envs).astype(np.int64)

        def step_wait(self) -> tuple[np.ndarray, np.ndarray, np.ndarray, list[dict[str, Any]]]:
            d = self.driver
            obs, _ = d.step(self._actions)
            done = d.terminated | d.truncated
            infos: list[dict[str, Any]] = [{} for _ in range(self.num_envs)]
            for i in np.flatnonzero(done):
                infos[i] = {
                    "terminal_observation": d.final_obs[i].copy(),
                    "TimeLimit.truncated": bool(d.truncated[i] and not d.terminated[i]),
                }
                if d.illegal[i]:
                    infos[i]["illegal_action"] = True
            return obs.copy(), d.reward.copy(), done.copy(), infos

        def action_masks(self) -> np.ndarray:
            """``bool[B, 70]``: legal actions of the learner seat to act in each game."""
            return self.driver.engine._mask.astype(bool)

        def close(self) -> None:
            pass

        def get_attr(self, attr_name: str, indices: Any = None) -> list[Any]:
            value = getattr(self, attr_name)
            return [value for _ in self._get_indices(indices)]

        def set_attr(self, attr_name: str, value: Any, indices: Any = None) -> None:
            setattr(self, attr_name, value)

        def env_method(
            self, method_name: str, *method_args: Any, indices: Any = None, **method_kwargs: Any
        ) -> list[Any]:
            idx = list(self._get_indices(indices))
            if method_name == "action_masks":
                masks = self.action_masks()
                return [masks[i] for i in idx]
            result = getattr(self, method_name)(*method_args, **method_kwargs)
            return [result for _ in idx]

        def env_is_wrapped(self, wrapper_class: type, indices: Any = None) -> list[bool]:
            return [False for _ in self._get_indices(indices)]

    SpadesSB3VecEnv.__module__, SpadesSB3VecEnv.__qualname__ = __name__, "SpadesSB3VecEnv"
    return SpadesSB3VecEnv


def __getattr__(name: str) -> Any:
    if name == "SpadesSB3VecEnv":
        cls = _build_sb3_vec_env()
        globals()[name] = cls
        return cls
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


__all__ = ["LearnerDriver", "SpadesSB3VecEnv", "SpadesVectorEnv"]  # noqa: F822 (SpadesSB3VecEnv: __getattr__)
