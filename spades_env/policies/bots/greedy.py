"""L1 greedy bot: bids from high cards and spade length; plays high to win while its team's
contract is short, low once it is made. Never bids Nil."""

from __future__ import annotations

from spades_env.core.observation import SeatView, cards_of, popcount, suit_cards
from spades_env.policies.bots.base import ScriptedBot


class GreedyPolicy(ScriptedBot):
    """L1: simple greedy play (a Policy; acts on its own observation only)."""

    name = "greedy"

    def bid(self, v: SeatView) -> int:
        hand = cards_of(v.hand)
        aces = sum(1 for c in hand if c % 13 == 12)
        kings = sum(1 for c in hand if c % 13 == 11)
        spades = popcount(suit_cards(v.hand, 3))
        est = aces + 0.5 * kings + max(0, spades - 3)
        return int(min(13, max(1, round(est))))

    def exchange(self, v: SeatView, legal: list[int]) -> int:
        # the blind nil bidder passes its highest card, its partner its lowest
        if v.bids[0] == 14:
            return max(legal, key=lambda c: (c // 13 == 3, c % 13))
        return min(legal, key=lambda c: (c % 13, c // 13 == 3))

    def play(self, v: SeatView, legal: list[int]) -> int:
        low = min(legal, key=lambda c: (c // 13 == 3, c % 13))
        if v.need(0) <= 0:
            return low
        if v.trick_size == 0:
            return max(legal, key=lambda c: (c // 13 != 3, c % 13))  # lead a high side card
        row = v.state_row()
        winners = [c for c in legal if v.winner_with(c, row) == 0]
        if winners:
            return max(winners, key=lambda c: (c // 13 == 3, c % 13))
        return low
