"""spades_env: Spades for reinforcement learning.

``spades_env.env()`` / ``spades_env.raw_env`` are the PettingZoo AEC environment and
``spades_env.parallel_env()`` the same game through PettingZoo's Parallel API (turn-based);
importing the package registers the Gymnasium env ``Spades-v0`` (:mod:`spades_env.envs.gym_env`).
The rules live in :mod:`spades_env.core`.
"""

__version__ = "0.1.0"  # the one version source (pyproject.toml reads it)

from spades_env.core import IllegalActionError, RulesConfig, SpadesGame, load_rules  # noqa: E402
from spades_env.envs.aec import env, parallel_env, raw_env  # noqa: E402
from spades_env.envs.gym_env import ENV_ID, SpadesGymEnv  # noqa: E402 (registers Spades-v0)
from spades_env.policies.base import Policy, RandomPolicy  # noqa: E402

__all__ = [
    "ENV_ID",
    "IllegalActionError",
    "Policy",
    "RandomPolicy",
    "RulesConfig",
    "SpadesGame",
    "SpadesGymEnv",
    "__version__",
    "env",
    "load_rules",
    "parallel_env",
    "raw_env",
]
