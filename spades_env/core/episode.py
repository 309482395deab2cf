"""What an episode is and what it pays: the one settle step of every front-end.

Episode knob: ``"hand"`` (one hand), ``"game"`` (to the target score, the default) or
``"match"`` (best of ``match_games``). Reward knob: ``"score"`` pays every seat its team's
score change at the end of each hand, times ``reward_scale``; ``"win"`` pays +1 / -1 to the
winning / losing team when the episode ends (for a one-hand episode, the team that scored more
points in the hand wins; 0 each on a tie or a truncated game).

Illegal-action setting (one name, one set of values for every front-end: ``SpadesGame.step``,
``spades_env.env()``, ``raw_env``, ``Spades-v0``, the vector adapters and ``VectorSpades``):
``illegal="raise"`` raises :class:`~spades_env.core.game.IllegalActionError` and changes
nothing; ``illegal="penalty"`` ends the episode (terminated) with ``illegal_reward`` for the
seat that tried it and 0 for the others, the game left as it was.

This is pure rules-side bookkeeping over the state row, so it lives in the core (the facade
:meth:`~spades_env.core.game.SpadesGame.step` and the batched engine call it);
:mod:`spades_env.core.episode` re-exports it.
"""

from __future__ import annotations

from dataclasses import dataclass

from spades_env.core import layout as L
from spades_env.core.engine import next_hand
from spades_env.core.jit import jit
from spades_env.core.validate import InputError, check_choice, check_float

EPISODES = ("hand", "game", "match")
REWARDS = ("score", "win")
ILLEGAL_MODES = ("raise", "penalty")
EP_HAND, EP_GAME, EP_MATCH = 0, 1, 2
RW_SCORE, RW_WIN = 0, 1
RUNNING, TERMINATED, TRUNCATED = 0, 1, 2


def episode_code(name: str) -> int:
    """Code of an episode knob value, with a clear error for a bad one."""
    return EPISODES.index(check_choice(name, "episode", EPISODES))


def reward_code(name: str) -> int:
    """Code of a reward knob value, with a clear error for a bad one."""
    return REWARDS.index(check_choice(name, "reward", REWARDS))


def check_illegal(mode: object) -> str:
    """The illegal-action setting ``"raise"`` or ``"penalty"``, with a clear error (an
    ``InputError``, a ``ValueError``) naming the setting for anything else."""
    if not isinstance(mode, str) or mode not in ILLEGAL_MODES:
        raise InputError(f"illegal must be one of {ILLEGAL_MODES}, got {mode!r}")
    return mode


REWARD_LIMIT = 1e6
"""Largest ``reward_scale`` and largest ``|illegal_reward|`` accepted (rewards stay finite)."""


@dataclass(frozen=True)
class EpisodeKnobs:
    """The episode, reward and illegal-action knobs of one game, validated.

    ``episode``: ``"hand" | "game" | "match"``; ``reward``: ``"score" | "win"``;
    ``reward_scale``: the factor of ``"score"`` rewards; ``illegal``: ``"raise" | "penalty"``;
    ``illegal_reward``: what ``"penalty"`` pays the offending seat."""

    episode: str = "game"
    reward: str = "score"
    reward_scale: float = 0.01
    illegal: str = "raise"
    illegal_reward: float = -1.0

    def __post_init__(self) -> None:
        episode_code(self.episode)
        reward_code(self.reward)
        check_illegal(self.illegal)
        object.__setattr__(
            self, "reward_scale", check_float(self.reward_scale, "reward_scale", 0.0, REWARD_LIMIT)
        )
        object.__setattr__(
            self, "illegal_reward", check_float(self.illegal_reward, "illegal_reward", -REWARD_LIMIT, REWARD_LIMIT)
        )

    @property
    def episode_code(self) -> int:
        return EPISODES.index(self.episode)

    @property
    def reward_code(self) -> int:
        return REWARDS.index(self.reward)


@jit
def settle(state, params, episode, reward, scale, rewards):
    """After an action: write each seat's reward into ``rewards[4]`` (zeroed first), deal on
    when a hand ends inside the episode, and return RUNNING, TERMINATED or TRUNCATED."""
    for i in range(4):
        rewards[i] = 0.0
    phase = state[L.PHASE]
    if phase < L.PH_HAND_END:
        return RUNNING
    n = state[L.NUM_SEATS]
    if reward == RW_SCORE:
        for s in range(n):
            rewards[s] = state[L.HAND_DELTA + s % 2] * scale
    truncated = state[L.TRUNCATED] != 0
    if episode == EP_HAND:
        done = True
    elif episode == EP_GAME:
        done = phase >= L.PH_GAME_END
    else:
        done = phase == L.PH_MATCH_END
    if not done:
        next_hand(state, params)
        return RUNNING
    if reward == RW_WIN and not (truncated and episode != EP_HAND):
        if episode == EP_HAND:
            d = state[L.HAND_DELTA] - state[L.HAND_DELTA + 1]
            w = -1 if d == 0 else (0 if d > 0 else 1)
        elif episode == EP_GAME:
            w = state[L.GAME_WINNER]
        else:
            w = state[L.MATCH_WINNER]
        if w >= 0:
            for s in range(n):
                rewards[s] = 1.0 if s % 2 == w else -1.0
    if truncated and episode != EP_HAND:
        return TRUNCATED
    return TERMINATED
