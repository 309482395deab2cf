"""Spades as a PettingZoo AEC environment.

``spades_env.env(**kwargs)`` is :class:`raw_env` inside PettingZoo's standard wrappers. The
illegal-action setting is the one of every front-end (:mod:`spades_env.core.episode`):
``illegal="penalty"`` ends the game with ``illegal_reward`` for that agent (the default of
``env()``, through PettingZoo's ``TerminateIllegalWrapper``; ``raw_env(illegal="penalty")``
does it itself); ``illegal="raise"`` (the default of ``raw_env``) raises
:class:`~spades_env.core.IllegalActionError` with nothing changed. ``raw_env`` also raises when
stepped after the episode has ended. The wrappers are PettingZoo's ``TerminateIllegalWrapper``,
``AssertOutOfBoundsWrapper`` and ``OrderEnforcingWrapper``, subclassed only to read the
per-step attributes (``agent_selection``, ``terminations``, ...) without PettingZoo's
``__getattr__`` chain, which otherwise costs more than the game (see benchmarks/README.md).
Each ``step`` is one :meth:`~spades_env.core.game.SpadesGame.step` of the facade (apply,
settle the episode and reward knobs, deal the next hand, keep the hand log): the env holds no
rules and no stepping of its own.

===================  =================================================================
agents               ``player_0`` .. ``player_3`` = seats N, E, S, W; teams NS = {0, 2},
                     EW = {1, 3} (two-player rules: ``player_0``, ``player_1``)
action space         ``Discrete(70)``: cards 0-51 (``13 * suit + rank``), bids 52-65
                     (52 = Nil), 66 Blind Nil, 67 See cards, 68 / 69 keep / discard (draw)
observation          ``{"observation": float32[OBS_SIZE], "action_mask": int8[70]}``; the
                     vector is relative to the observer (``OBS_SIZE`` and the slice table:
                     :mod:`spades_env.core.observation`); the mask is all zeros for an agent not to act
state                ``state()``: float32[STATE_VEC_SIZE], the full deal, for centralized critics
episode              ``episode="hand" | "game" | "match"`` (default ``"game"``, to 500)
reward               ``reward="score"``: each hand, every seat gets its team's score change
                     times ``reward_scale`` (default 0.01); ``reward="win"``: +1 / -1 per
                     team at the end of the episode
truncation           a game longer than the rules' ``max_hands`` ends truncated
illegal action       ``illegal="penalty" | "raise"`` and ``illegal_reward`` (default -1),
                     as for ``Spades-v0``, the vector adapters and ``VectorSpades``
infos                ``infos[agent]["action_mask"]``: the same mask as in the observation
                     (for libraries that read it there, e.g. AgileRL); at the end of the
                     episode also scores, bags, games won and ``truncated_by_hand_cap``
render modes         ``"ansi"`` (returns the table), ``"human"`` (prints it) and
                     ``"rgb_array"`` (``uint8[600, 800, 3]``, :mod:`spades_env.io.render`;
                     ``render_viewer`` shows one seat's hand only); ``render_fps`` 4
metadata             per instance (a wrapper that edits ``env.metadata`` leaves the class's
                     alone)
===================  =================================================================

``spades_env.parallel_env(**kwargs)`` is the same game through PettingZoo's Parallel API, for
libraries that only take that: PettingZoo's own ``turn_based_aec_to_parallel`` over ``env()``.
Each ``step(actions)`` applies the action of the one agent to act (``infos[agent]["active_agent"]``
names it; the others' actions are ignored, their masks are all zeros) and returns every
agent's observation, reward, termination and truncation.

``reset(seed=..., options=...)`` takes ``options`` keys ``hands`` (four lists of 13 card
strings, by seat), ``stock`` (52 cards, two-player rules), ``dealer``, ``scores`` and ``bags``
(one value per team) to replay a recorded or duplicate deal. They are checked exactly (a
dealer is an integer seat, not ``1.7``, ``"1"`` or ``True``; scores and bags must be reachable
by a real game, see :mod:`spades_env.core.validate`); a bad one raises
:class:`~spades_env.core.validate.InputError` or :class:`~spades_env.core.game.DealError` and
changes nothing, not even the env's seed generator.
"""

from __future__ import annotations

import copy
from typing import Any

import numpy as np
from gymnasium import spaces
from pettingzoo import AECEnv, ParallelEnv
from pettingzoo.utils import wrappers

from spades_env.core import layout as L
from spades_env.core.actions import NUM_ACTIONS
from spades_env.core.engine import legal_mask
from spades_env.core.episode import EpisodeKnobs, check_illegal
from spades_env.core.files import brief
from spades_env.core.game import OrderError, SpadesGame, StepResult, check_action
from spades_env.core.jit import jit
from spades_env.core.observation import (
    OBS_SIZE,
    STATE_VEC_SIZE,
    encode_observation,
    encode_state,
    obs_bounds,
)
from spades_env.core.rules import RulesConfig, load_rules
from spades_env.core.validate import InputError, check_float, check_seat, check_seed

_OPTION_KEYS = ("hands", "stock", "dealer", "scores", "bags")
_API_PROBE = {"options": 1}  # what PettingZoo's api_test passes to see that reset takes options


def check_reset_options(options: Any) -> dict[str, Any]:
    """The ``reset(options=...)`` of every front-end (AEC, parallel, ``Spades-v0``), checked:
    ``None`` or a dict whose keys are ``hands``, ``stock``, ``dealer``, ``scores`` and
    ``bags``; any other key (a typo such as ``dealr``) is an :class:`InputError` naming it.
    The one exception is ``{"options": 1}``, the probe PettingZoo's ``api_test`` sends, which
    is ignored. The values are checked by :func:`start_game`."""
    if options is None:
        return {}
    if not isinstance(options, dict):
        raise InputError(f"reset(options=...) must be a dict or None, got {brief(options)} ({type(options).__name__})")
    if options == _API_PROBE:
        return {}
    unknown = [k for k in options if k not in _OPTION_KEYS]
    if unknown:
        shown = ", ".join(brief(k, 40) for k in unknown[:5])
        raise InputError(f"reset(options=...): unknown key(s) {shown}; the keys are {', '.join(_OPTION_KEYS)}")
    return dict(options)


def start_game(rules: RulesConfig, knobs: EpisodeKnobs, seed: int, options: dict[str, Any]) -> SpadesGame:
    """A new :class:`SpadesGame` seeded ``seed`` with the checked ``options`` (see
    :func:`check_reset_options`) applied: every front-end's reset. A bad value raises
    (``InputError``, ``DealError``) before anything outside the new game changes."""
    game = SpadesGame(
        rules,
        seed=seed,
        dealer=options.get("dealer"),
        episode=knobs.episode,
        reward=knobs.reward,
        reward_scale=knobs.reward_scale,
        illegal=knobs.illegal,
        illegal_reward=knobs.illegal_reward,
    )
    if options.keys() - {"dealer"}:
        game.set_hand(
            hands=options.get("hands"),
            stock=options.get("stock"),
            scores=options.get("scores"),
            bags=options.get("bags"),
        )
    return game


def observation_bounds(rules: RulesConfig) -> tuple[np.ndarray, np.ndarray]:
    """Lower and upper bounds of the observation vector under ``rules``: the encoding's own,
    :func:`spades_env.core.observation.obs_bounds` (the Box of every front-end)."""
    return obs_bounds(rules)


_NO_MASK = np.zeros(NUM_ACTIONS, dtype=np.int8)
_NO_MASK.flags.writeable = False  # the info mask of every agent not to act (shared, read-only)


def _forward(name: str) -> property:
    def get(self: _FastForward) -> Any:
        return getattr(self._target, name)

    get.__name__ = name
    return property(get, doc=f"``{name}`` of the wrapped env (forwarded without ``__getattr__``).")


class _FastForward:
    """Forwards the AEC attributes read on every step as properties.

    PettingZoo's ``BaseWrapper.__getattr__`` resolves them through every wrapper layer, which
    costs more than the game itself. Here a property reads them straight from the innermost env
    that is not one of these wrappers (none of the three standard wrappers overrides them), so
    each returns exactly what the plain wrapper stack would.
    """

    def __init__(self, env: AECEnv, *args: Any, **kwargs: Any) -> None:
        super().__init__(env, *args, **kwargs)
        self._target = env._target if isinstance(env, _FastForward) else env

    def action_space(self, agent: str) -> spaces.Space:
        return self._target.action_space(agent)

    def observation_space(self, agent: str) -> spaces.Space:
        return self._target.observation_space(agent)

    agents = _forward("agents")
    agent_selection = _forward("agent_selection")
    rewards = _forward("rewards")
    terminations = _forward("terminations")
    truncations = _forward("truncations")
    infos = _forward("infos")
    _cumulative_rewards = _forward("_cumulative_rewards")
    possible_agents = _forward("possible_agents")


class TerminateIllegalWrapper(_FastForward, wrappers.TerminateIllegalWrapper):
    """PettingZoo's ``TerminateIllegalWrapper`` with forwarded attributes."""


class AssertOutOfBoundsWrapper(_FastForward, wrappers.AssertOutOfBoundsWrapper):
    """PettingZoo's ``AssertOutOfBoundsWrapper`` with forwarded attributes; a value that is
    not an action id raises the package's :class:`~spades_env.core.game.NotAnActionError`
    (the same check as every front-end's) instead of an ``AssertionError``."""

    def step(self, action: Any) -> None:
        agent = self._target.agent_selection
        if not (action is None and (self._target.terminations[agent] or self._target.truncations[agent])):
            check_action(action)
        wrappers.BaseWrapper.step(self, action)


_GUARDED = ("agents", "agent_selection", "rewards", "terminations", "truncations", "infos", "_cumulative_rewards")


class OrderEnforcingWrapper(_FastForward, wrappers.OrderEnforcingWrapper):
    """PettingZoo's ``OrderEnforcingWrapper`` with forwarded attributes.

    Before ``reset()`` the forwarded properties raise ``AttributeError``, so Python falls back
    to the wrapper's ``__getattr__``, which raises PettingZoo's own "cannot be accessed before
    reset" error, exactly as the plain wrapper does.
    """

    def _guarded(name: str) -> property:  # noqa: N805 (class-body helper)
        def get(self: OrderEnforcingWrapper) -> Any:
            if not self._has_reset:
                raise OrderAttributeError(f"{name} cannot be accessed before reset (as PettingZoo says): call reset() first")
            return getattr(self._target, name)

        get.__name__ = name
        return property(get)

    agents = _guarded("agents")
    agent_selection = _guarded("agent_selection")
    rewards = _guarded("rewards")
    terminations = _guarded("terminations")
    truncations = _guarded("truncations")
    infos = _guarded("infos")
    del _guarded

    def _before_reset(self, what: str) -> None:
        if not self._has_reset:
            raise OrderError(f"{what} before reset(): call reset() first")

    def __getattr__(self, name: str) -> Any:
        if name in _GUARDED and not self.__dict__.get("_has_reset", False):
            raise OrderAttributeError(f"{name} cannot be accessed before reset (as PettingZoo says): call reset() first")
        return super().__getattr__(name)

    def step(self, action: Any) -> None:
        self._target._check_open()
        self._before_reset("step()")
        if not self._target.agents:  # PettingZoo's wrapper only warns here
            raise OrderError("step() after the episode ended: every agent is done and removed; call reset()")
        super().step(action)

    def observe(self, agent: str) -> Any:
        self._before_reset("observe()")
        return super().observe(agent)

    def state(self) -> np.ndarray:
        self._before_reset("state()")
        return super().state()

    def last(self, observe: bool = True) -> Any:
        self._before_reset("last()")
        return super().last(observe)


class _Discrete(spaces.Discrete):
    """``Discrete`` whose ``contains`` answers a Python or NumPy ``int64`` scalar without the
    generic checks (same answers as ``Discrete.contains``)."""

    def contains(self, x: Any) -> bool:
        t = type(x)
        if t is int or t is np.int64:
            return bool(self.start <= x < self.start + self.n)
        return super().contains(x)


def parallel_env(**kwargs: Any) -> ParallelEnv:
    """The game through PettingZoo's Parallel API (turn-based): PettingZoo's
    ``turn_based_aec_to_parallel`` over :func:`env` (same keyword arguments). Each step applies
    the action of the agent to act (``infos[agent]["active_agent"]``); the others' are ignored."""
    return _Parallel(env(**kwargs))


class OrderAttributeError(OrderError, AttributeError):
    """An env attribute (``agents``, ``rewards``...) read before ``reset()``: an
    :class:`~spades_env.core.game.OrderError` that is also an ``AttributeError`` (so
    ``hasattr`` answers False, as PettingZoo's wrapper does)."""


def _parallel_base() -> type:
    from pettingzoo.utils.conversions import turn_based_aec_to_parallel_wrapper

    return turn_based_aec_to_parallel_wrapper


class _Parallel(_parallel_base()):  # type: ignore[misc]
    """PettingZoo's turn-based parallel wrapper with the package's checks: ``step`` before
    ``reset()`` is an :class:`OrderError`; ``actions`` must be a mapping that holds the action
    of the agent to act (checked as the AEC env checks it); nothing changes on a refusal."""

    def step(self, actions: Any) -> Any:
        if not hasattr(self, "agents"):
            raise OrderError("step() before reset(): call reset() first")
        if not self.agents:
            raise OrderError("step() after the episode ended: every agent is done; call reset()")
        if not isinstance(actions, dict):
            raise InputError(f"step(actions) takes a dict of agent -> action, got {brief(actions)}")
        agent = self.aec_env.agent_selection
        if agent not in actions:
            raise InputError(
                f"step(actions): no action for {agent}, the agent to act (infos[agent]['active_agent'])"
            )
        return super().step(actions)


def env(**kwargs: Any) -> AECEnv:
    """The Spades AEC env in PettingZoo's standard wrappers (see :class:`raw_env`).

    ``illegal="penalty"`` (the default): an illegal move ends the game with ``illegal_reward``
    (default -1) for that agent (PettingZoo's ``TerminateIllegalWrapper``);
    ``illegal="raise"``: :class:`~spades_env.core.IllegalActionError`, nothing changed."""
    illegal = check_illegal(kwargs.pop("illegal", "penalty"))
    illegal_reward = check_float(kwargs.pop("illegal_reward", -1.0), "illegal_reward")
    e = raw_env(illegal="raise", illegal_reward=illegal_reward, **kwargs)
    if illegal == "penalty":
        e = TerminateIllegalWrapper(e, illegal_reward=illegal_reward)
    e = AssertOutOfBoundsWrapper(e)
    e = OrderEnforcingWrapper(e)
    return e


@jit
def _observe_into(state, params, seat, want_mask, obs, mask):
    """Encode ``seat``'s observation into ``obs`` and, if ``want_mask`` and the seat is to act,
    its legal actions into ``mask`` (left zero otherwise). One compiled call per observe."""
    encode_observation(state, params, seat, obs)
    if want_mask and state[L.TURN] == seat:
        legal_mask(state, params, mask)


class raw_env(AECEnv):
    """Spades (four-player partnership or two-player) with action masks."""

    metadata = {
        "name": "spades_v0",
        "render_modes": ["ansi", "human", "rgb_array"],
        "render_fps": 4,
        "is_parallelizable": False,  # turn-based: see parallel_env()
    }

    def __init__(
        self,
        rules: RulesConfig | str | dict | None = None,
        episode: str = "game",
        reward: str = "score",
        reward_scale: float = 0.01,
        render_mode: str | None = None,
        render_viewer: int | None = None,
        illegal: str = "raise",
        illegal_reward: float = -1.0,
    ) -> None:
        super().__init__()
        self.metadata = copy.deepcopy(type(self).metadata)  # per instance: wrappers may edit it
        self.rules = load_rules(rules)
        self.knobs = EpisodeKnobs(episode, reward, reward_scale, illegal, illegal_reward)
        self.episode, self.reward_kind = episode, reward
        self.reward_scale = self.knobs.reward_scale
        self.illegal, self.illegal_reward = self.knobs.illegal, self.knobs.illegal_reward
        if render_mode is not None and render_mode not in self.metadata["render_modes"]:
            raise InputError(
                f"render_mode must be one of {self.metadata['render_modes']}, got {render_mode!r}"
            )
        self.render_mode = render_mode
        n = self.rules.num_players
        self.render_viewer = None if render_viewer is None else check_seat(render_viewer, n, "render_viewer")
        self.possible_agents = [f"player_{i}" for i in range(n)]
        self.agent_name_mapping = {a: i for i, a in enumerate(self.possible_agents)}
        low, high = observation_bounds(self.rules)
        obs_space = spaces.Dict(
            {
                "observation": spaces.Box(low, high, dtype=np.float32),
                "action_mask": spaces.Box(0, 1, (NUM_ACTIONS,), dtype=np.int8),
            }
        )
        self.observation_spaces = {a: obs_space for a in self.possible_agents}
        self.action_spaces = {a: _Discrete(NUM_ACTIONS) for a in self.possible_agents}
        # the state: seat 0's observation, then every seat's hand and discards (bits)
        tail = STATE_VEC_SIZE - OBS_SIZE
        self.state_space = spaces.Box(
            np.concatenate([low, np.zeros(tail, np.float32)]),
            np.concatenate([high, np.ones(tail, np.float32)]),
            dtype=np.float32,
        )
        self.game: SpadesGame | None = None
        self.agents: list[str] = []
        self._closed = False
        self._seeder = np.random.default_rng()
        self._reward_pending = False

    def observation_space(self, agent: str) -> spaces.Space:
        return self.observation_spaces[agent]

    def action_space(self, agent: str) -> spaces.Space:
        return self.action_spaces[agent]

    # ---- episode ----------------------------------------------------------------------
    def reset(self, seed: int | None = None, options: dict[str, Any] | None = None) -> None:
        """Start a new episode; ``options`` may preset the deal, dealer, scores and bags.

        A bad seed or option raises (``InputError``, ``DealError``) with nothing changed: the
        episode in play and the seed generator stay as they were."""
        self._check_open()
        seed = check_seed(seed)
        options = check_reset_options(options)
        seeder = self._seeder if seed is None else np.random.default_rng(seed)
        saved = seeder.bit_generator.state if options and seed is None else None
        try:  # the options are checked by the game; a refusal puts the generator back
            game = start_game(self.rules, self.knobs, int(seeder.integers(2**63 - 1)), options)
        except BaseException:
            if saved is not None:
                seeder.bit_generator.state = saved
            raise
        self._seeder = seeder
        self.game = game
        self._state, self._params = game.state, game.params
        self.agents = self.possible_agents[:]
        self.rewards = {a: 0.0 for a in self.agents}
        self._cumulative_rewards = {a: 0.0 for a in self.agents}
        self.terminations = {a: False for a in self.agents}
        self.truncations = {a: False for a in self.agents}
        self.infos = {a: {"action_mask": _NO_MASK} for a in self.agents}
        self.agent_selection = self.possible_agents[int(self._state[L.TURN])]
        self._reward_pending = False
        self._mask_info(None)

    def step(self, action: int | None) -> None:
        """Apply the selected agent's action (``None`` for an agent that is done).

        Raises :class:`~spades_env.core.IllegalActionError` (nothing changed) for an illegal
        action, and after the episode has ended and every agent has been removed.
        """
        if not self.agents:
            self._check_open()
            raise OrderError(
                "step() after the episode ended: every agent is done and removed; call reset()"
                if self.game is not None
                else "step() before reset(): call reset() first"
            )
        agent = self.agent_selection
        if self.terminations[agent] or self.truncations[agent]:
            self._was_dead_step(action)
            return
        r = self.game.step(action)  # the facade applies, settles, deals on and keeps the log
        self._cumulative_rewards[agent] = 0.0
        if r.hand is not None or r.illegal:
            self._settled(r)
            if self.agents and not self.terminations[self.agent_selection] and not self.truncations[self.agent_selection]:
                self._mask_info(agent)
        else:
            if self._reward_pending:  # last step paid rewards: this one pays none
                self._reward_pending = False
                rewards = self.rewards
                for a in rewards:
                    rewards[a] = 0.0
            self.agent_selection = self.possible_agents[self._state[L.TURN]]
            self._mask_info(agent)
        if self.render_mode == "human":
            self.render()

    def _settled(self, r: StepResult) -> None:
        """A hand ended (or, under ``illegal="penalty"``, an illegal action ended the episode):
        pay the step's rewards, then end the episode or go on with the hand the game dealt."""
        rewards = self.rewards
        for i, a in enumerate(self.agents):
            rewards[a] = r.rewards[i]
        self._reward_pending = True
        if r.terminated or r.truncated:
            flags = self.terminations if r.terminated else self.truncations
            for a in self.agents:
                flags[a] = True
                self.infos[a] = self._end_info()
        else:
            turn = int(self._state[L.TURN])
            if turn < 0:
                raise RuntimeError("no seat to act in a running episode")
            self.agent_selection = self.possible_agents[turn]
        self._accumulate_rewards()

    def _mask_info(self, previous: str | None) -> None:
        """``infos[agent]["action_mask"]``: the agent to act gets its legal actions, the agent
        that just acted (``previous``) all zeros again."""
        if previous is not None:
            self.infos[previous]["action_mask"] = _NO_MASK
        mask = np.zeros(NUM_ACTIONS, dtype=np.int8)
        legal_mask(self._state, self._params, mask)
        self.infos[self.agent_selection]["action_mask"] = mask

    def _end_info(self) -> dict[str, Any]:
        g = self.game
        return {
            "action_mask": _NO_MASK,
            "scores": g.scores,
            "bags": g.bags,
            "game_wins": g.game_wins,
            "truncated_by_hand_cap": g.truncated,
        }

    # ---- views ------------------------------------------------------------------------
    def _check_open(self) -> None:
        if self._closed:
            raise OrderError("the env is closed: close() ended it; make a new env")

    def _check_started(self, what: str) -> None:
        self._check_open()
        if self.game is None:
            raise OrderError(f"{what} before reset(): call reset() first")

    def observe(self, agent: str) -> dict[str, np.ndarray]:
        """The agent's observation vector and its action mask (zeros unless it is to act)."""
        self._check_started("observe()")
        seat = self.agent_name_mapping.get(agent) if isinstance(agent, str) else None
        if seat is None:
            raise InputError(f"unknown agent {agent!r}; agents: {self.possible_agents}")
        obs = np.empty(OBS_SIZE, dtype=np.float32)
        mask = np.zeros(NUM_ACTIONS, dtype=np.int8)
        want_mask = (
            agent == self.agent_selection
            and not self.terminations.get(agent, True)
            and not self.truncations.get(agent, True)
        )
        _observe_into(self._state, self._params, seat, want_mask, obs, mask)
        return {"observation": obs, "action_mask": mask}

    def state(self) -> np.ndarray:
        """The full state (every hand) for centralized critics; never for acting."""
        self._check_started("state()")
        out = np.empty(STATE_VEC_SIZE, dtype=np.float32)
        encode_state(self._state, self._params, out)
        return out

    def render(self) -> str | np.ndarray | None:
        """Text (``"ansi"``; ``"human"`` prints it) or a picture (``"rgb_array"``) of the table;
        ``render_viewer`` (a seat) shows only that seat's hand."""
        self._check_open()
        if self.render_mode is None or self.game is None:
            return None
        if self.render_mode == "rgb_array":
            from spades_env.io.render import render_rgb

            return render_rgb(self.game, viewer=self.render_viewer)
        text = self.game.to_text(viewer=self.render_viewer)
        if self.render_mode == "ansi":
            return text
        print(text)
        return None

    def close(self) -> None:
        """End the env: the game and its buffers are released, and any later ``reset``,
        ``step``, ``observe`` or ``state`` raises :class:`~spades_env.core.game.OrderError`.
        Closing twice is allowed."""
        self._closed = True
        self.game = None
        self.agents = []
