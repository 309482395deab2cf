"""Helpers for the rules tests: preset deals, scripted moves, random play.

Moves in scripts are written as text so a test reads like a hand record: a card (``"AS"``),
``"bid 4"`` / ``"nil"``, ``"blind"`` (Blind Nil, 66), ``"see"`` (See cards, 67), ``"keep"`` /
``"discard"`` (two-player draw, 68 / 69), or a raw action id.
"""

from __future__ import annotations

import random
from collections.abc import Callable, Iterable, Sequence

import numpy as np

from spades_env.core.actions import (
    ACTION_BLIND_NIL,
    ACTION_DISCARD,
    ACTION_KEEP,
    ACTION_SEE_CARDS,
    BID_BASE,
)
from spades_env.core.cards import RANK_CHARS, card_from_str, card_to_str
from spades_env.core.game import SpadesGame
from spades_env.core.observation import OBS_SIZE, SLICES, encode_observation

SUITS_BY_CHAR = {"C": 0, "D": 1, "H": 2, "S": 3}


def hands_from_strings(*hands: str) -> list[list[str]]:
    """Hands written as space-separated card strings (``"AS KS 2C ..."``), one string a seat."""
    return [h.split() for h in hands]


def full_suit(suit: str) -> list[str]:
    """The 13 cards of a suit (``"S"``, ``"H"``, ``"D"`` or ``"C"``), 2 up to A."""
    return [r + suit for r in RANK_CHARS]


def one_suit_deal(spade_seat: int = 0) -> list[list[str]]:
    """A deal where ``spade_seat`` holds all 13 spades and the other seats hold one plain suit
    each (clubs, diamonds, hearts in seat order): that seat wins every trick, whoever leads."""
    plain = iter(["C", "D", "H"])
    return [full_suit("S") if s == spade_seat else full_suit(next(plain)) for s in range(4)]


def action_of(move: int | str) -> int:
    """Action id of a scripted move (see the module docstring)."""
    if isinstance(move, (int, np.integer)):
        return int(move)
    m = move.strip().lower()
    named = {
        "blind": ACTION_BLIND_NIL,
        "see": ACTION_SEE_CARDS,
        "keep": ACTION_KEEP,
        "discard": ACTION_DISCARD,
        "nil": BID_BASE,
    }
    if m in named:
        return named[m]
    if m.startswith("bid "):
        return BID_BASE + int(m[4:])
    return card_from_str(move)


def do(game: SpadesGame, *moves: int | str) -> None:
    """Apply scripted moves in order (each must be legal)."""
    for m in moves:
        game.apply(action_of(m))


def cards(*texts: str) -> set[int]:
    """Card ids of card strings (each argument may hold several, space-separated)."""
    return {card_from_str(c) for t in texts for c in t.split()}


def legal_cards(game: SpadesGame) -> set[str]:
    """Legal card actions of the seat to act, as card strings."""
    return {card_to_str(a) for a in game.legal_actions() if a < 52}


def bid_hand(game: SpadesGame, bids: Sequence[int | str]) -> None:
    """Answer the auction: each seat in turn bids ``bids[seat]`` (an int, or ``"blind"`` for
    Blind Nil); a seat offered Blind Nil that bids normally first says See cards."""
    while game.phase in ("blind", "bid"):
        seat = game.current_player
        want = bids[seat]
        if game.phase == "blind":
            game.apply(ACTION_BLIND_NIL if want == "blind" else ACTION_SEE_CARDS)
        else:
            assert want != "blind", f"seat {seat} was not offered Blind Nil"
            game.apply(BID_BASE + int(want))


def finish_hand(game: SpadesGame, choose: Callable[[list[int]], int] = min) -> None:
    """Play the rest of the hand (exchange and tricks), choosing ``choose(legal)`` each time."""
    while game.phase in ("exchange", "play"):
        game.apply(choose(game.legal_actions()))


def play_hand(game: SpadesGame, bids: Sequence[int | str]) -> None:
    """Bid ``bids`` and play the hand to its end with the lowest legal card each time."""
    bid_hand(game, bids)
    finish_hand(game)


def observation(game: SpadesGame, seat: int) -> np.ndarray:
    """``seat``'s observation vector now."""
    out = np.zeros(OBS_SIZE, dtype=np.float32)
    encode_observation(game.state, game.params, seat, out)
    return out


def obs_cards(game: SpadesGame, seat: int, name: str) -> set[str]:
    """The cards set in a 52-wide observation slice (``hand``, ``passed``, ...) of ``seat``."""
    part = observation(game, seat)[SLICES[name]]
    assert part.shape == (52,)
    return {card_to_str(int(c)) for c in np.flatnonzero(part)}


def play_random(
    game: SpadesGame,
    rng: random.Random,
    *,
    on_step: Callable[[SpadesGame, int], None] | None = None,
    on_hand_end: Callable[[SpadesGame], None] | None = None,
    max_steps: int = 200_000,
) -> int:
    """Play ``game`` to the end of its match with uniformly random legal actions, dealing
    each next hand; ``on_step(game, action)`` is called before each action and
    ``on_hand_end(game)`` after each scored hand. Returns the number of actions applied."""
    steps = 0
    while True:
        if game.current_player < 0:
            if on_hand_end is not None:
                on_hand_end(game)
            if game.is_over:
                break
            game.next_hand()
            continue
        legal = game.legal_actions()
        assert legal, f"seat {game.current_player} must act in phase {game.phase} with no legal action"
        a = rng.choice(legal)
        if on_step is not None:
            on_step(game, a)
        game.apply(a)
        steps += 1
        assert steps < max_steps, "random game did not end"
    return steps


def turn_order(game: SpadesGame, moves: Iterable[int | str]) -> list[int]:
    """Apply moves and return the seat that made each one."""
    seats = []
    for m in moves:
        seats.append(game.current_player)
        game.apply(action_of(m))
    return seats


def state_field(game: SpadesGame, offset: int, n: int = 1) -> list[int]:
    """Raw state row entries (for checks with no facade property)."""
    return [int(x) for x in game.state[offset : offset + n]]
