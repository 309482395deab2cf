"""Cards: ids, text form and bit masks.

A card id is ``13 * suit + rank`` with suits C, D, H, S = 0..3 and ranks 2..A = 0..12, so
``51`` is the ace of spades. As text a card is rank then suit: ``"AS"``, ``"TD"``, ``"2C"``.
A set of cards is an ``int64`` bit mask with bit ``id`` set for each card.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from spades_env.core.validate import InputError, brief, is_int

NUM_CARDS = 52
NUM_SUITS = 4
NUM_RANKS = 13
CLUBS, DIAMONDS, HEARTS, SPADES = 0, 1, 2, 3
SUIT_CHARS = "CDHS"
RANK_CHARS = "23456789TJQKA"
SUIT_NAMES = ("clubs", "diamonds", "hearts", "spades")
SUIT_SYMBOLS = ("♣", "♦", "♥", "♠")
FULL_SUIT = (1 << NUM_RANKS) - 1
SUIT_MASKS = tuple(FULL_SUIT << (NUM_RANKS * s) for s in range(NUM_SUITS))
FULL_DECK = (1 << NUM_CARDS) - 1


def card_suit(card: int) -> int:
    """Suit of a card id (0 = clubs .. 3 = spades)."""
    return card // NUM_RANKS


def card_rank(card: int) -> int:
    """Rank of a card id (0 = two .. 12 = ace)."""
    return card % NUM_RANKS


def card_to_str(card: int) -> str:
    """Text form of a card id, rank then suit: ``51 -> "AS"``."""
    if not is_int(card) or not 0 <= int(card) < NUM_CARDS:
        raise InputError(f"card id {brief(card)} is out of range 0..51 (an integer card id)")
    return RANK_CHARS[card_rank(int(card))] + SUIT_CHARS[card_suit(int(card))]


def card_from_str(text: str) -> int:
    """Card id of a card string such as ``"AS"``, ``"TD"`` or ``"10h"`` (case-insensitive)."""
    if not isinstance(text, str):
        raise ValueError(f"a card must be a string like 'AS', got {brief(text)}")
    t = text.strip().upper()
    if t.startswith("10"):
        t = "T" + t[2:]
    if len(t) != 2 or t[0] not in RANK_CHARS or t[1] not in SUIT_CHARS:
        raise ValueError(
            f"bad card string {brief(text)}: expected rank (2-9, T, J, Q, K, A) then suit (C, D, H, S)"
        )
    return NUM_RANKS * SUIT_CHARS.index(t[1]) + RANK_CHARS.index(t[0])


def cards_from_mask(mask: int) -> list[int]:
    """Card ids in a bit mask, ascending."""
    mask = int(mask)
    return [c for c in range(NUM_CARDS) if (mask >> c) & 1]


def mask_from_cards(cards: Iterable[int]) -> int:
    """Bit mask of card ids; raises ValueError on a duplicate or out-of-range id."""
    mask = 0
    for c in cards:
        c = int(c)
        if not 0 <= c < NUM_CARDS:
            raise ValueError(f"card id {c} is out of range 0..51")
        if (mask >> c) & 1:
            raise ValueError(f"card {card_to_str(c)} appears twice")
        mask |= 1 << c
    return mask


def format_cards(mask: int) -> str:
    """A hand as text grouped by suit, spades first: ``"S: A K 4  H: Q  D: -  C: 9 2"``."""
    parts = []
    for s in (SPADES, HEARTS, DIAMONDS, CLUBS):
        ranks = [RANK_CHARS[r] for r in range(NUM_RANKS - 1, -1, -1) if (int(mask) >> (13 * s + r)) & 1]
        parts.append(f"{SUIT_CHARS[s]}: {' '.join(ranks) if ranks else '-'}")
    return "  ".join(parts)

def check_card(value: Any, name: str = "card") -> int:
    """A card id ``0..51`` or a card string (``"AS"``, ``"10h"``), as an id."""
    if isinstance(value, str):
        try:
            return card_from_str(value)
        except ValueError as exc:
            raise InputError(f"{name}: {exc}") from None
    if not is_int(value):
        raise InputError(
            f"{name} must be a card id 0..51 or a card string like 'AS', got {brief(value)} "
            f"({type(value).__name__})"
        )
    v = int(value)
    if not 0 <= v < NUM_CARDS:
        raise InputError(f"{name}: card id {v} is out of range 0..51")
    return v
