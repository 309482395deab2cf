"""Fixtures shared by every test folder. Helper functions live in ``tests/helpers/`` (on the
path through pytest's ``pythonpath``): ``from helpers.game import do``."""

from __future__ import annotations

import pytest

from spades_env.core.rules import load_rules


@pytest.fixture
def fast_rules():
    """Tournament rules with a 3-hand cap, so random games end quickly."""
    return load_rules({"max_hands": 3})
