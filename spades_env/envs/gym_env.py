"""Single-agent Gymnasium env: one seat (or one team) learns, given Policies play the others.

``gymnasium.make("Spades-v0", learner_seats=(0, 2), opponents=...)`` or :class:`SpadesGymEnv`.

==================  ===============================================================
observations        ``Box(OBS_SIZE)`` float32: the acting learner seat's observation
                    (:mod:`spades_env.core.observation`; relative to that seat)
actions             ``Discrete(70)`` (see :mod:`spades_env.core.actions`)
``action_masks()``  ``bool[70]``, the legal actions now (sb3-contrib ``MaskablePPO``);
                    also ``info["action_mask"]`` (``int8``)
reward              the learner team's reward (``episode.settle``: hand score change times
                    ``reward_scale``, or +1/-1 for a win) summed since its last action
episode             ``"hand"``, ``"game"`` (default) or ``"match"``; truncated when the
                    rules' ``max_hands`` cuts a game short
illegal action      ``illegal="penalty"`` (default, as ``spades_env.env()``): the episode
                    ends (terminated) with ``illegal_reward`` (default -1) and
                    ``info["illegal_action"]``; ``illegal="raise"``: ``IllegalActionError``,
                    nothing changed (the one setting of every front-end,
                    :mod:`spades_env.core.episode`)
render modes        ``"ansi"`` (text) and ``"rgb_array"`` (``uint8[600, 800, 3]``, the
                    learner's view, :mod:`spades_env.io.render`); ``render_fps`` 4
==================  ===============================================================

The learner plays ``learner_seats`` (default North and South; ``(0,)`` in the two-player
game); when it holds two seats, each step is whichever of them is to act. The other seats are
played by ``opponents``: a Policy for all of them, a ``{seat: Policy}`` dict, bots registry
names (``"heuristic"``) or checkpoint paths, or ``None`` for random players; names get seeds
from ``reset`` (the one resolver, :mod:`spades_env.policies.registry`). The rules run in
:mod:`spades_env.core`: each step is one :meth:`~spades_env.core.game.SpadesGame.step`, and the
other seats play through the one driver (:func:`spades_env.policies.driver.drive`); this module holds
no rules, no stepping of its own, and never imports torch.

``import spades_env`` registers ``Spades-v0``. Gymnasium 1.x loads no plugins; a worker started
with ``spawn`` re-imports the main script (so a script that imports ``spades_env`` is fine), and
where the main module does not import it (a notebook, pytest) the id ``"spades_env:Spades-v0"``
imports the package first; Gymnasium's and SB3's ``check_env`` pass
(``tests/envs/test_gym_env.py``).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import gymnasium
import numpy as np
from gymnasium import spaces

from spades_env.core import layout as L
from spades_env.core.actions import NUM_ACTIONS
from spades_env.core.episode import RUNNING, TERMINATED, EpisodeKnobs
from spades_env.core.files import brief
from spades_env.core.game import OrderError, SpadesGame, check_action
from spades_env.core.observation import OBS_SIZE, encode_observation
from spades_env.core.rules import RulesConfig, load_rules
from spades_env.core.validate import InputError, check_seed
from spades_env.envs.aec import check_reset_options, observation_bounds, start_game
from spades_env.policies.base import Policy, learner_seats_of
from spades_env.policies.driver import drive
from spades_env.policies.registry import OpponentSpec, opponent_specs, resolve_opponents

ENV_ID = "Spades-v0"


class SpadesGymEnv(gymnasium.Env):
    """One learner seat or team against given Policies (see the module docstring)."""

    metadata = {"render_modes": ["ansi", "rgb_array"], "render_fps": 4}

    def __init__(
        self,
        rules: RulesConfig | str | dict | None = None,
        learner_seats: Sequence[int] | None = None,
        opponents: OpponentSpec = None,
        episode: str = "game",
        reward: str = "score",
        reward_scale: float = 0.01,
        render_mode: str | None = None,
        illegal: str = "penalty",
        illegal_reward: float = -1.0,
    ) -> None:
        self.rules = load_rules(rules)
        self.params = self.rules.to_params()
        n = self.rules.num_players
        seats = learner_seats_of(learner_seats, n)
        self.learner_seats = seats
        self.others = [s for s in range(n) if s not in seats]
        self._specs = opponent_specs(opponents, self.others)  # a bad one fails here, not at reset
        if render_mode is not None and render_mode not in self.metadata["render_modes"]:
            raise InputError(
                f"render_mode must be None or one of {self.metadata['render_modes']}, got {brief(render_mode)}"
            )
        self.render_mode = render_mode
        self.knobs = EpisodeKnobs(episode, reward, reward_scale, illegal, illegal_reward)
        self.reward_scale = self.knobs.reward_scale
        self.illegal, self.illegal_reward = self.knobs.illegal, self.knobs.illegal_reward
        self._ended = False
        low, high = observation_bounds(self.rules)
        self.observation_space = spaces.Box(low, high, dtype=np.float32)
        self.action_space = spaces.Discrete(NUM_ACTIONS)
        self.game: SpadesGame | None = None
        self.policies: dict[int, Policy] = {}
        self._closed = False

    def _make_policies(self, rng: np.random.Generator) -> None:
        seeds = rng.integers(2**62, size=4)
        self.policies = resolve_opponents(self._specs, self.rules, {s: int(seeds[s]) for s in self._specs})

    def reset(
        self, *, seed: int | None = None, options: dict[str, Any] | None = None
    ) -> tuple[np.ndarray, dict]:
        """A new game (seeded through ``np_random``); the other seats play until the learner acts.

        ``options`` are the AEC env's (``hands``, ``stock``, ``dealer``, ``scores``, ``bags``;
        :func:`~spades_env.envs.aec.check_reset_options`), checked the same way: a bad one
        raises before anything changes (the episode in play and ``np_random`` stay as they were)."""
        if self._closed:
            raise OrderError("the env is closed: close() ended it; make a new env")
        seed = check_seed(seed)
        options = check_reset_options(options)
        if options:  # check the values on a throwaway game before touching np_random
            start_game(self.rules, self.knobs, 0, options)
        super().reset(seed=seed)
        game_seed = int(self.np_random.integers(2**63 - 1))
        if seed is not None or not self.policies:
            self._make_policies(self.np_random)
        self.game = start_game(self.rules, self.knobs, game_seed, options)
        self._ended = False
        if (
            drive(self.game, self.policies).status != RUNNING
        ):  # cannot happen: a hand needs the learner's cards
            raise RuntimeError("the episode ended before the learner acted")
        return self._observe(), self._info()

    def step(self, action: int) -> tuple[np.ndarray, float, bool, bool, dict]:
        """The learner's action (one :meth:`SpadesGame.step`), then the other seats' through
        the one driver until the learner acts or the episode ends."""
        if self._closed:
            raise OrderError("the env is closed: close() ended it; make a new env")
        if self.game is None:
            raise OrderError("step() before reset(): call reset() first")
        action = check_action(action)  # not an action id: an error, never a move (as every front-end)
        if self._ended:
            raise OrderError("step() after the episode ended: call reset()")
        game = self.game
        r = game.step(action)  # "raise": IllegalActionError, nothing changed
        learner = self.learner_seats[0]
        if r.illegal:  # "penalty": the episode ends here, the game as it was
            self._ended = True
            info = self._info(True)
            info["illegal_action"] = True
            return self._observe(r.seat), r.rewards[r.seat], True, False, info
        reward = r.rewards[learner]
        if not r.done:
            reward += drive(game, self.policies).rewards[learner]
        status = game.episode_status
        done = status != RUNNING
        self._ended = done
        obs = self._observe(r.seat if done else None)
        info = self._info(done)
        return obs, float(reward), status == TERMINATED, done and status != TERMINATED, info

    def _observe(self, seat: int | None = None) -> np.ndarray:
        state = self.game.state
        s = int(state[L.TURN]) if seat is None else seat
        if s < 0 or s not in self.learner_seats:
            s = self.learner_seats[0]
        out = np.zeros(OBS_SIZE, dtype=np.float32)
        encode_observation(state, self.params, s, out)
        return out

    def action_masks(self) -> np.ndarray:
        """``bool[70]``: the legal actions of the learner seat to act (all False when done)."""
        g = self.game
        if g is None or self._ended or g.state[L.TURN] < 0 or g.state[L.PHASE] >= L.PH_HAND_END:
            return np.zeros(NUM_ACTIONS, dtype=bool)
        return self.game.legal_mask().astype(bool)

    def _info(self, done: bool = False) -> dict[str, Any]:
        state = self.game.state
        info: dict[str, Any] = {
            "action_mask": self.action_masks().astype(np.int8),
            "seat": int(state[L.TURN]),
            "scores": (int(state[L.SCORES]), int(state[L.SCORES + 1])),
        }
        if done:
            info["winner"] = int(state[L.GAME_WINNER])
        return info

    def close(self) -> None:
        """End the env: the game and the opponents are released, and a later ``reset`` or
        ``step`` raises :class:`~spades_env.core.game.OrderError`. Closing twice is allowed."""
        self._closed = True
        self.game = None
        self.policies = {}
        self._ended = True
        super().close()

    def render(self) -> str | np.ndarray | None:
        """The game as text (``render_mode="ansi"``) or a picture of the table as the learner
        sees it (``"rgb_array"``: ``uint8[600, 800, 3]``)."""
        if self.game is None or self.render_mode is None:
            return None
        if self.render_mode == "rgb_array":
            from spades_env.io.render import render_rgb

            return render_rgb(self.game, viewer=self.learner_seats[0])
        return self.game.to_text()


def register_env() -> None:
    """Register ``Spades-v0`` with Gymnasium (done on import of this module; idempotent)."""
    if ENV_ID not in gymnasium.registry:
        # the env enforces its own order (OrderError, the package's type), not Gymnasium's wrapper
        gymnasium.register(id=ENV_ID, entry_point="spades_env.envs.gym_env:SpadesGymEnv", order_enforce=False)


register_env()

__all__ = ["ENV_ID", "SpadesGymEnv", "register_env"]
