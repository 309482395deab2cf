"""Paths, options and the one-thread fixture shared by the training tests."""

from __future__ import annotations

from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
SMOKE = ROOT / "configs" / "train" / "smoke.yaml"
FAST = ["tensorboard=false", "eval_boards=0", "progress=false"]
"""Train options that keep a smoke run quiet and short (no TensorBoard, no evaluation boards)."""


@pytest.fixture(autouse=True)
def one_thread():
    """Torch on one thread (deterministic and fair to the other pytest worker); import it to use it."""
    torch = pytest.importorskip("torch")
    torch.set_num_threads(1)
