"""Checkpoints as Policies, without importing torch until one is loaded.

``spades_env.arena.resolve_policy`` (and so ``spades eval``, ``spades tournament`` and
``spades play``) sends names that look like paths here. Loading a checkpoint needs PyTorch and
the ``training`` package (a source checkout); both are imported only inside ``load_policy``.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any


def load_policy(path: str | Path, seed: int | None = None, rules: Any = None, **kwargs: Any) -> Any:
    """The Policy of the checkpoint at ``path`` (see ``training.policy_adapter.load_policy``)."""
    try:
        from training.policy_adapter import load_policy as _load
    except ImportError as exc:
        raise ImportError(
            f"loading checkpoint {str(path)!r} needs PyTorch and the 'training' package of the "
            f"spades_env source tree (pip install 'spades_env[training]', run from the checkout): {exc}"
        ) from exc
    return _load(path, seed=seed, rules=rules, **kwargs)
