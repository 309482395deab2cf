"""spades_env: Spades for reinforcement learning.

``spades_env.env()`` / ``spades_env.raw_env`` are the PettingZoo AEC environment; the rules
live in :mod:`spades_env.core`.
"""

from spades_env.core import IllegalActionError, RulesConfig, SpadesGame, load_rules
from spades_env.pettingzoo_env import env, raw_env
from spades_env.policy import Policy, RandomPolicy

__version__ = "0.1.0"

__all__ = [
    "IllegalActionError",
    "Policy",
    "RandomPolicy",
    "RulesConfig",
    "SpadesGame",
    "env",
    "load_rules",
    "raw_env",
]
