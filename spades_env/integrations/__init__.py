"""Adapters for other RL libraries, each imported only on demand.

``import spades_env`` never imports these: ``spades_env.integrations.rllib`` imports Ray, so
import it explicitly (and install the ``rllib`` extra: ``pip install "spades_env[rllib]"``).
"""
