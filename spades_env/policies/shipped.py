"""Where the shipped agents' folders are: the one place that knows the wheel's and the
checkout's layouts (below the registry, so bots that name an agent's network can find it)."""

from __future__ import annotations

from pathlib import Path


def agents_dir() -> Path:
    """The folder holding the agent folders: ``spades_env/agents`` in an installed wheel, the
    top-level ``checkpoints/`` in a source checkout (an editable install)."""
    package = Path(__file__).resolve().parents[1]
    installed = package / "agents"  # the data package spades_env.agents of a wheel install
    return installed if installed.is_dir() else package.parent / "checkpoints"  # a source checkout
