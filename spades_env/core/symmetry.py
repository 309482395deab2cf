"""Suit relabellings: clubs, diamonds and hearts play alike, spades is trump.

Renaming the three side suits (say clubs as hearts, hearts as diamonds, diamonds as clubs)
turns any position into an equally valid one with the same values: the rules never tell the
side suits apart. A learner can use this to see six positions for every one it records
(``training.bc``'s ``suit_augment``). It holds because no rule names a side suit; a rule that
did (a two of clubs opening lead, say) would break it, and ``tests/core/test_symmetry.py``, which
plays every preset relabelled, would say so.

* :data:`SIDE_SUIT_PERMUTATIONS`: the six relabellings, as ``perm[old suit] = new suit``
  (suits 0 clubs, 1 diamonds, 2 hearts, 3 spades; spades always stays).
* :func:`card_map`: the new id of every card.
* :func:`observation_columns` and :func:`action_columns`: column indices such that
  ``obs[..., observation_columns(perm)]`` is the observation of the relabelled position and
  ``mask[..., action_columns(perm)]`` (or any per-action array: values, logits) its actions.
"""

from __future__ import annotations

from collections.abc import Sequence
from itertools import permutations

import numpy as np

from spades_env.core.actions import NUM_ACTIONS
from spades_env.core.cards import NUM_CARDS, NUM_RANKS
from spades_env.core.observation import OBS_SIZE, SLICES

SPADES = 3
SIDE_SUIT_PERMUTATIONS: tuple[tuple[int, int, int, int], ...] = tuple(
    (*p, SPADES) for p in permutations(range(3))
)
"""Every relabelling of clubs, diamonds and hearts (the first is the identity)."""

_CARD_BLOCKS = ("hand", "passed", "received", "draw_shown", "discarded")
_SEAT_CARD_BLOCKS = ("played", "trick")  # four 52-card blocks, one per relative seat


def check_permutation(perm: Sequence[int]) -> tuple[int, ...]:
    """``perm`` as a tuple, or ``ValueError``: it must reorder 0..3 and keep spades (3)."""
    p = tuple(int(s) for s in perm)
    if sorted(p) != [0, 1, 2, 3] or p[SPADES] != SPADES:
        raise ValueError(
            f"suit permutation {list(perm)!r} must reorder the suits 0..3 (clubs, diamonds, "
            "hearts, spades) and keep spades in place: spades are trump"
        )
    return p


def card_map(perm: Sequence[int]) -> np.ndarray:
    """``new[card]``: the id of each card (``13 * suit + rank``) after the relabelling."""
    p = np.asarray(check_permutation(perm))
    cards = np.arange(NUM_CARDS)
    return p[cards // NUM_RANKS] * NUM_RANKS + cards % NUM_RANKS


def _card_columns(start: int, new: np.ndarray, cols: np.ndarray) -> None:
    cols[start + new] = start + np.arange(NUM_CARDS)


def observation_columns(perm: Sequence[int]) -> np.ndarray:
    """Indices ``cols`` such that ``obs[..., cols]`` is the observation of the same position
    with the suits relabelled by ``perm`` (every card slice and the per-seat suits shown out)."""
    p = check_permutation(perm)
    new = card_map(p)
    cols = np.arange(OBS_SIZE)
    for name in _CARD_BLOCKS:
        _card_columns(SLICES[name].start, new, cols)
    for name in _SEAT_CARD_BLOCKS:
        for k in range(4):
            _card_columns(SLICES[name].start + NUM_CARDS * k, new, cols)
    shown = SLICES["shown_out"].start
    for k in range(4):
        for suit in range(4):
            cols[shown + 4 * k + p[suit]] = shown + 4 * k + suit
    return cols


def action_columns(perm: Sequence[int]) -> np.ndarray:
    """Indices ``cols`` such that ``x[..., cols]`` of a per-action array (a mask, values,
    logits) is that array for the relabelled position: the card actions move, the rest stay."""
    cols = np.arange(NUM_ACTIONS)
    _card_columns(0, card_map(perm), cols)
    return cols


def relabel_action(action: int, perm: Sequence[int]) -> int:
    """The id of ``action`` after the relabelling (a card moves; bids and the rest stay)."""
    return int(card_map(perm)[action]) if 0 <= action < NUM_CARDS else int(action)
