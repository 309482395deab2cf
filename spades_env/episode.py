"""What an episode is and what it pays: shared by the AEC env and the batched engine.

The knobs and the one ``settle`` step live in :mod:`spades_env.core.episode` (the facade
:meth:`spades_env.core.game.SpadesGame.step` needs them, and the core imports nothing above
it); this module re-exports them under their old names.

Episode knob: ``"hand"`` (one hand), ``"game"`` (to the target score, the default) or
``"match"`` (best of ``match_games``). Reward knob: ``"score"`` pays every seat its team's
score change at the end of each hand, times ``reward_scale``; ``"win"`` pays +1 / -1 to the
winning / losing team when the episode ends (for a one-hand episode, the team that scored more
points in the hand wins; 0 each on a tie or a truncated game). Illegal-action setting:
``"raise"`` or ``"penalty"`` (with ``illegal_reward``), the same for every front-end.
"""

from __future__ import annotations

from spades_env.core.episode import (
    EP_GAME,
    EP_HAND,
    EP_MATCH,
    EPISODES,
    ILLEGAL_MODES,
    REWARDS,
    RUNNING,
    RW_SCORE,
    RW_WIN,
    TERMINATED,
    TRUNCATED,
    EpisodeKnobs,
    check_illegal,
    episode_code,
    reward_code,
    settle,
)

__all__ = [
    "EPISODES",
    "EP_GAME",
    "EP_HAND",
    "EP_MATCH",
    "ILLEGAL_MODES",
    "REWARDS",
    "RUNNING",
    "RW_SCORE",
    "RW_WIN",
    "TERMINATED",
    "TRUNCATED",
    "EpisodeKnobs",
    "check_illegal",
    "episode_code",
    "reward_code",
    "settle",
]
