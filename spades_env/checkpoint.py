"""Checkpoints as Policies, without importing torch until one is loaded.

``spades_env.arena.resolve_policy`` (and so ``spades eval``, ``spades tournament`` and
``spades play``) sends names that look like paths here. Loading a checkpoint needs PyTorch and
the ``training`` package of the source tree; both are imported only inside ``load_policy``
(when ``training`` is not importable, the checkout that holds this package is tried).
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any


def _import_loader() -> Any:
    try:
        from training.policy_adapter import load_policy
    except ModuleNotFoundError as exc:
        root = Path(__file__).resolve().parents[1]
        if (
            exc.name not in ("training", "training.policy_adapter")
            or not (root / "training" / "policy_adapter.py").is_file()
        ):
            raise
        sys.path.append(str(root))  # a source checkout: training/ sits next to spades_env/
        from training.policy_adapter import load_policy
    return load_policy


def load_policy(path: str | Path, seed: int | None = None, rules: Any = None, **kwargs: Any) -> Any:
    """The Policy of the checkpoint at ``path`` (see ``training.policy_adapter.load_policy``)."""
    try:
        loader = _import_loader()
    except ImportError as exc:
        raise ImportError(
            f"loading checkpoint {str(path)!r} needs PyTorch, safetensors and the 'training' package of "
            f"the spades_env source tree (pip install 'spades_env[training]' in a checkout): {exc}"
        ) from exc
    return loader(path, seed=seed, rules=rules, **kwargs)
