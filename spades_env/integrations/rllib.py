"""Spades for RLlib (new API stack): a turn-based ``MultiAgentEnv``, seat-to-module mapping,
and the masked PPO module spec.

Import this module explicitly (it imports Ray; ``import spades_env`` never does) after
``pip install "spades_env[rllib]"``. Everything a remote env runner needs (the env class and
the mapping function) lives here, inside the installed package, so workers on other machines
import it from their own install of ``spades_env``.

===================  =================================================================
agents               ``player_0`` .. ``player_3`` (seats N, E, S, W), as in the AEC env
observation          ``{"observations": float32[OBS_SIZE], "action_mask": float32[70]}``:
                     the keys RLlib's ``ActionMaskingTorchRLModule`` expects; only the
                     agent to act gets one, except at the end of the episode, when every
                     agent gets its last observation (RLlib needs one to close a
                     truncated agent's episode)
reward               every agent's reward of the step (``rewards`` of the AEC env); RLlib
                     adds the rewards of agents that did not act to their next step
episode end          ``terminateds["__all__"]`` / ``truncateds["__all__"]`` as the AEC env
env config           passed to :func:`spades_env.env`: ``rules``, ``episode``, ``reward``,
                     ``reward_scale``, ``illegal_reward``
===================  =================================================================

Seats map to RLlib modules (policies) by :class:`SeatToModule`: ``"shared"`` (one module
plays every seat, self-play) or ``"team"`` (``team_ns`` plays seats 0 and 2, ``team_ew`` seats
1 and 3; in the two-player game seat 0 and seat 1).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np
from gymnasium import spaces

import spades_env
from spades_env.core.validate import InputError, brief, check_int

try:
    from ray.rllib.env.multi_agent_env import MultiAgentEnv
except ImportError as exc:  # no Ray (or one without RLlib): say which extra to install
    raise ModuleNotFoundError(
        f"spades_env.integrations.rllib needs Ray RLlib ({exc}): "
        'pip install "spades_env[rllib]"',
        name=exc.name,
    ) from exc

POLICY_MODES = ("shared", "team")
TEAM_MODULES = ("team_ns", "team_ew")
ENV_KEYS = ("rules", "episode", "reward", "reward_scale", "illegal_reward")


def seat_of(agent_id: str) -> int:
    """``"player_2"`` -> 2 (``InputError`` for anything but ``player_<seat>``)."""
    head, _, seat = agent_id.rpartition("_") if isinstance(agent_id, str) else ("", "", "")
    if head != "player" or not seat.isdigit() or int(seat) > 3:
        raise InputError(f"an agent id is 'player_0' to 'player_3', got {brief(agent_id)}")
    return int(seat)


def module_ids(mode: str) -> tuple[str, ...]:
    """The RLModule ids a policy mode trains: ``("shared",)`` or ``("team_ns", "team_ew")``."""
    if mode == "shared":
        return ("shared",)
    if mode == "team":
        return TEAM_MODULES
    raise InputError(f"policy mode must be one of {POLICY_MODES}, got {brief(mode)}")


class SeatToModule:
    """RLlib's ``policy_mapping_fn``: agent id (seat) -> module id. Picklable, so remote env
    runners get it with the config."""

    def __init__(self, mode: str = "shared") -> None:
        module_ids(mode)  # validates
        self.mode = mode

    def __call__(self, agent_id: str, episode: Any = None, **kwargs: Any) -> str:
        if self.mode == "shared":
            return "shared"
        return TEAM_MODULES[seat_of(agent_id) % 2]

    def __repr__(self) -> str:
        return f"SeatToModule({self.mode!r})"


def masked_observation_space(aec_space: spaces.Dict) -> spaces.Dict:
    """The AEC env's ``{"observation", "action_mask"}`` space under RLlib's keys."""
    obs = aec_space["observation"]
    n = aec_space["action_mask"].shape[0]
    return spaces.Dict(
        {
            "observations": spaces.Box(obs.low, obs.high, obs.shape, dtype=np.float32),
            "action_mask": spaces.Box(0.0, 1.0, (n,), dtype=np.float32),
        }
    )


def to_rllib_observation(obs: dict[str, np.ndarray]) -> dict[str, np.ndarray]:
    """One AEC observation dict under RLlib's keys (mask as float32 for the log-mask)."""
    return {
        "observations": np.asarray(obs["observation"], dtype=np.float32),
        "action_mask": np.asarray(obs["action_mask"], dtype=np.float32),
    }


class SpadesMultiAgentEnv(MultiAgentEnv):
    """The Spades AEC env (:func:`spades_env.env`) as a turn-based RLlib ``MultiAgentEnv``.

    ``config`` (RLlib's ``env_config``) holds keyword arguments of :func:`spades_env.env`
    (see ``ENV_KEYS``); an unknown key is a ``ValueError`` naming it.
    """

    metadata = {"render_modes": ["ansi"]}

    def __init__(self, config: dict[str, Any] | None = None) -> None:
        super().__init__()
        if config is not None and not isinstance(config, Mapping):
            raise InputError(f"SpadesMultiAgentEnv: env_config must be a dict, got {brief(config)}")
        cfg = dict(config or {})
        unknown = sorted(set(cfg) - set(ENV_KEYS), key=repr)
        if unknown:
            raise InputError(f"SpadesMultiAgentEnv: unknown env_config key(s) {unknown}; known: {list(ENV_KEYS)}")
        self.aec = spades_env.env(**cfg)
        self.aec.reset(seed=0)
        self.possible_agents = list(self.aec.possible_agents)
        self.agents = list(self.possible_agents)
        space = masked_observation_space(self.aec.observation_space(self.possible_agents[0]))
        self.observation_spaces = {a: space for a in self.possible_agents}
        self.action_spaces = {a: self.aec.action_space(a) for a in self.possible_agents}
        # old-API-stack style Dict spaces, still read by some RLlib code paths
        self.observation_space = spaces.Dict(self.observation_spaces)
        self.action_space = spaces.Dict(self.action_spaces)

    def _obs(self, agent: str) -> dict[str, np.ndarray]:
        return to_rllib_observation(self.aec.observe(agent))

    def reset(
        self, *, seed: int | None = None, options: dict[str, Any] | None = None
    ) -> tuple[dict[str, Any], dict[str, Any]]:
        self.aec.reset(seed=seed, options=options)
        self.agents = list(self.possible_agents)
        agent = self.aec.agent_selection
        return {agent: self._obs(agent)}, {agent: {}}

    def step(self, action_dict: dict[str, Any]) -> tuple[dict, dict, dict, dict, dict]:
        aec = self.aec
        agent = aec.agent_selection
        if agent not in action_dict:
            raise ValueError(f"SpadesMultiAgentEnv.step: {agent} is to act, got actions for {sorted(action_dict)}")
        aec.step(int(action_dict[agent]))
        rewards = {a: float(r) for a, r in aec.rewards.items()}
        terminated = any(aec.terminations.values())
        truncated = not terminated and any(aec.truncations.values())
        if terminated or truncated:
            obs = {a: self._obs(a) for a in self.possible_agents}
            infos = {a: dict(aec.infos.get(a, {})) for a in self.possible_agents}
            terms = {a: terminated for a in self.possible_agents}
            truncs = {a: truncated for a in self.possible_agents}
            terms["__all__"], truncs["__all__"] = terminated, truncated
            return obs, rewards, terms, truncs, infos
        nxt = aec.agent_selection
        return {nxt: self._obs(nxt)}, rewards, {"__all__": False}, {"__all__": False}, {}

    def render(self) -> str:
        return self.aec.unwrapped.game.to_text()

    def close(self) -> None:
        self.aec.close()


def model_config(hiddens: tuple[int, ...] | list[int] = (256, 256)) -> dict[str, Any]:
    """The model config of each masked PPO module: separate actor and critic encoders of
    ``hiddens`` (a non-empty list of layer widths), then heads of ``hiddens``."""
    if isinstance(hiddens, (str, bytes)) or not isinstance(hiddens, (tuple, list)) or not hiddens:
        raise InputError(f"hiddens must be a non-empty list of layer widths, got {brief(hiddens)}")
    hiddens = [check_int(h, f"hiddens[{i}]", 1, 1 << 16) for i, h in enumerate(hiddens)]
    return {
        "fcnet_hiddens": list(hiddens),
        "fcnet_activation": "relu",
        "head_fcnet_hiddens": list(hiddens),
        "head_fcnet_activation": "relu",
        "vf_share_layers": False,
    }


def module_spec(mode: str = "shared", hiddens: tuple[int, ...] | list[int] = (256, 256)) -> Any:
    """A ``MultiRLModuleSpec`` of RLlib's masked PPO module (``ActionMaskingTorchRLModule``)
    for each module id of ``mode``; spaces are inferred from the env by RLlib."""
    from ray.rllib.core.rl_module.multi_rl_module import MultiRLModuleSpec
    from ray.rllib.core.rl_module.rl_module import RLModuleSpec
    from ray.rllib.examples.rl_modules.classes.action_masking_rlm import ActionMaskingTorchRLModule

    return MultiRLModuleSpec(
        rl_module_specs={
            mid: RLModuleSpec(module_class=ActionMaskingTorchRLModule, model_config=model_config(hiddens))
            for mid in module_ids(mode)
        }
    )
