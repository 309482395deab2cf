"""L2 expert heuristic bot.

Bidding counts sure and likely tricks (spade honours and length, side aces and guarded kings,
short suits with spare trumps), adjusted for the bids already made and the bag count. Nil is
bid with a hand that has no high spades, no side ace and its high cards guarded by low ones;
Blind Nil only when far behind. In the Blind Nil exchange the partner passes its lowest cards
and the Blind Nil bidder passes back its highest (a Nil bidder wants low cards: passing it high
cards would set it). Play covers partner's Nil, attacks opponents' Nil, wins tricks while the
contract is short (cashing boss cards, trumping and over-trumping cheaply), tries to set the
opponents when bags allow, and ducks once the contract is made. Cards are counted from the
played cards; voids come from :class:`~spades_env.bots.view.VoidTracker`. Who wins a trick is
always asked of the core (``trick_winner``).
"""

from __future__ import annotations

from spades_env.bots.base import ScriptedBot
from spades_env.bots.view import BLIND, SeatView, is_nil, popcount, suit_cards
from spades_env.core.actions import ACTION_BLIND_NIL, ACTION_DISCARD, ACTION_KEEP, ACTION_SEE_CARDS

SPADES = 3
ACE, KING, QUEEN, JACK, TEN = 12, 11, 10, 9, 8


def _ranks(mask: int, suit: int) -> list[int]:
    """Ranks of ``suit`` in ``mask``, highest first."""
    m = suit_cards(mask, suit) >> (13 * suit)
    return [r for r in range(12, -1, -1) if (m >> r) & 1]


def estimate_tricks(hand: int, num_seats: int = 4) -> float:
    """Expected tricks of a hand: spade honours and length, side aces and guarded kings,
    ruffs with spare spades in short suits."""
    sp = _ranks(hand, SPADES)
    ns = len(sp)
    t = 0.0
    honours = 0
    if ACE in sp:
        t += 1.0
        honours += 1
    if KING in sp:
        t += 1.0 if ns >= 2 else 0.35
        honours += ns >= 2
    if QUEEN in sp:
        t += 1.0 if ns >= 3 else (0.5 if ns == 2 and (ACE in sp or KING in sp) else 0.2)
        honours += ns >= 3
    if JACK in sp and ns >= 4:
        t += 0.5
    if ns >= 4:
        t += ns - 3.0 - (0.5 if JACK in sp else 0.0) * 0
    shortness = 0.0
    for s in range(3):
        r = _ranks(hand, s)
        n = len(r)
        if n == 0:
            shortness += 2.0
        elif n == 1:
            shortness += 1.0 if r[0] != ACE else 0.6
        elif n == 2:
            shortness += 0.4
        if ACE in r:
            t += 1.0 if n <= 5 else 0.6
        if KING in r:
            if ACE in r:
                t += 0.85 if n <= 4 else 0.45
            elif n >= 2:
                t += 0.55 if n <= 5 else 0.3
            else:
                t += 0.1
        if QUEEN in r and n >= 3 and n <= 4 and (ACE in r or KING in r):
            t += 0.25
    spare = max(0, min(ns, 3) - honours)
    t += 0.7 * min(spare, shortness)
    if num_seats == 2:
        t *= 1.05
    return t


def nil_danger(hand: int) -> float:
    """How likely a hand is to take a trick as a Nil (0 safe; >= 1 do not bid Nil)."""
    danger = 0.0
    sp = _ranks(hand, SPADES)
    if sp and sp[0] >= JACK:
        return 9.0
    if len(sp) >= 4:
        return 9.0
    if sp:
        danger += {TEN: 0.6, 7: 0.3, 6: 0.15}.get(sp[0], 0.0)
        if len(sp) == 3:
            danger += 0.3
    for s in range(3):
        r = _ranks(hand, s)
        n = len(r)
        for i, rank in enumerate(r):
            lower = n - i - 1
            if rank == ACE:
                return 9.0
            need = {KING: 3, QUEEN: 3, JACK: 2, TEN: 2, 7: 1, 6: 1}.get(rank, 0)
            if lower < need:
                danger += (need - lower) * (0.45 if rank >= QUEEN else 0.25)
    return danger


class HeuristicPolicy(ScriptedBot):
    """L2: the expert heuristic (a Policy; acts on its own observation only)."""

    name = "heuristic"
    nil_max_tricks = 2.6
    """Bid Nil only with at most this many expected tricks..."""
    nil_limit = 1.0
    """...and a Nil danger below this (``nil_limit_weak`` after a partner's bid of 1-2)."""
    nil_limit_weak = 0.6
    bid_round = 0.5
    """Added to the expected tricks before rounding down."""

    # ---- bidding ------------------------------------------------------------------------
    def blind(self, v: SeatView) -> int:
        own, other = v.scores
        partner_bid = v.bids[2] if v.num_seats == 4 else -1
        far_behind = other - own >= 200 and other >= v.target_score - 150
        if far_behind and v.num_seats == 4 and not is_nil(partner_bid):
            return ACTION_BLIND_NIL
        return ACTION_SEE_CARDS

    def bid(self, v: SeatView) -> int:
        hand = v.hand
        t = estimate_tricks(hand, v.num_seats)
        partner_bid = v.bids[2] if v.num_seats == 4 else -1
        others = [b for s, b in enumerate(v.bids[: v.num_seats]) if s != 0 and b >= 0]
        known = sum(0 if is_nil(b) else b for b in others)
        # Nil
        if v.num_seats == 4 and not is_nil(partner_bid):
            danger = nil_danger(hand)
            limit = self.nil_limit if partner_bid < 0 or partner_bid >= 3 else self.nil_limit_weak
            if t <= self.nil_max_tricks and danger < limit:
                return 0
        elif v.num_seats == 2:
            # no partner to cover it: only a hand that cannot take a trick
            if t <= 0.8 and nil_danger(hand) <= 0.0:
                return 0
        bid = int(t + self.bid_round)
        if v.bags[0] >= 7:
            bid = int(t + 0.55)
        if partner_bid >= 0 and is_nil(partner_bid):
            bid = int(t + 0.5)
        total_cap = 13 - known
        bid = min(bid, max(1, total_cap))
        return max(1, min(13, bid))

    def exchange(self, v: SeatView, legal: list[int]) -> int:
        if v.bids[0] == BLIND:  # pass back the most dangerous card
            return max(legal, key=lambda c: (c // 13 == SPADES, c % 13))
        # partner of the Blind Nil: lowest cards, keeping own high cards to cover
        return min(legal, key=lambda c: (c % 13, c // 13 == SPADES))

    def draw(self, v: SeatView) -> int:
        c = v.draw_shown
        if c < 0:
            return ACTION_KEEP
        suit, rank = c // 13, c % 13
        length = popcount(suit_cards(v.hand, suit))
        value = rank / 12.0 + (0.45 if suit == SPADES else 0.0) + 0.05 * max(0, length - 3)
        return ACTION_KEEP if value >= 0.75 else ACTION_DISCARD

    # ---- play -----------------------------------------------------------------------------
    def play(self, v: SeatView, legal: list[int]) -> int:
        ctx = _Ctx(v, legal)
        if v.nil_alive(0):
            return ctx.nil_play()
        if v.num_seats == 4 and v.nil_alive(2):
            c = ctx.cover_play()
            if c is not None:
                return c
        opp_nil = [s for s in v.opponents if v.nil_alive(s)]
        remaining = 13 - v.tricks_played
        need = v.need(0)
        if opp_nil and need < remaining - 1:
            c = ctx.attack_play(opp_nil)
            if c is not None:
                return c
        if need > 0:
            return ctx.win_play()
        need_them = v.need(1)
        for_set = remaining - need_them + 1  # tricks we need to set them
        if need_them > 0 and for_set <= remaining and v.bags[0] + for_set <= 8 and for_set <= 3:
            return ctx.win_play()
        return ctx.duck_play()


class _Ctx:
    """Facts about the current decision, computed once."""

    def __init__(self, v: SeatView, legal: list[int]) -> None:
        self.v = v
        self.legal = legal
        self.row = v.state_row()
        self.unseen = v.unseen
        self.size = v.trick_size
        self.led = v.led_suit()
        self.last = self.size == v.num_seats - 1
        self.winner = v.current_winner(self.row)
        self._wins: dict[int, bool] = {}

    def wins(self, c: int) -> bool:
        if c not in self._wins:
            self._wins[c] = self.size == 0 or self.v.winner_with(c, self.row) == 0
        return self._wins[c]

    def higher_unseen(self, c: int) -> int:
        """Unseen cards of ``c``'s suit ranking above it."""
        s, r = c // 13, c % 13
        above = ((1 << 13) - 1) & ~((1 << (r + 1)) - 1)
        return popcount(self.unseen & (above << (13 * s)))

    def boss(self, c: int) -> bool:
        return self.higher_unseen(c) == 0

    def yet_to_play(self) -> list[int]:
        n = self.v.num_seats
        return [s for s in range(1, n) if self.v.trick[s] < 0] if self.size > 0 else list(range(1, n))

    def suit_len(self, s: int) -> int:
        return popcount(suit_cards(self.v.hand, s))

    def lowest(self, cards: list[int]) -> int:
        """Lowest card, side suits before spades, shortest suit first on ties."""
        return min(cards, key=lambda c: (c // 13 == SPADES, c % 13, self.suit_len(c // 13)))

    def highest(self, cards: list[int]) -> int:
        return max(cards, key=lambda c: (c // 13 == SPADES, c % 13))

    def discard(self) -> int:
        """Card to throw when not winning: a low side card from a short suit (keeps spades)."""
        side = [c for c in self.legal if c // 13 != SPADES]
        pool = side or self.legal
        return min(pool, key=lambda c: (c % 13 >= QUEEN, self.suit_len(c // 13) * 0.3 + c % 13))

    def opp_may_ruff(self, suit: int) -> bool:
        """Some opponent still to play may be void in ``suit`` (and hold spades)."""
        if suit == SPADES:
            return False
        v = self.v
        if suit_cards(self.unseen, SPADES) == 0:
            return False
        for s in self.yet_to_play():
            if s in v.opponents and (v.voids[s] >> suit) & 1:
                return True
        return False

    # ---- modes ------------------------------------------------------------------------------
    def nil_play(self) -> int:
        legal = self.legal
        if self.size == 0:
            # lead the card with the most unseen cards above it
            side = [c for c in legal if c // 13 != SPADES] or legal
            return max(side, key=lambda c: (self.higher_unseen(c) - 2 * (c % 13 > 7), -(c % 13)))
        safe = [c for c in legal if not self.wins(c)]
        if safe:
            return max(safe, key=lambda c: c % 13 + (6 if c // 13 == SPADES else 0))
        if self.last:
            return self.highest(legal)
        return self.lowest(legal)

    def cover_play(self) -> int | None:
        v = self.v
        legal = self.legal
        if self.size == 0:
            bosses = [c for c in legal if self.boss(c)]
            if bosses:
                return max(bosses, key=lambda c: (c // 13 != SPADES, c % 13))
            return max(legal, key=lambda c: (c // 13 != SPADES, c % 13))
        if v.trick[2] >= 0:  # partner already played
            if self.winner == 2:
                winners = [c for c in legal if self.wins(c)]
                if winners:
                    return self.lowest(winners)
                return self.discard()
            return None  # partner is safe in this trick: play normally
        # partner still to play: win as high as possible so partner can duck under
        winners = [c for c in legal if self.wins(c)]
        if winners:
            follow = [c for c in winners if c // 13 == self.led]
            if follow:
                return max(follow, key=lambda c: c % 13)
            return max(winners, key=lambda c: c % 13)
        return self.highest(legal) if self.led >= 0 and legal[0] // 13 == self.led else self.discard()

    def attack_play(self, nils: list[int]) -> int | None:
        v = self.v
        legal = self.legal
        if self.size == 0:
            target = nils[0]
            side = [c for c in legal if not (v.voids[target] >> (c // 13)) & 1] or legal
            return min(side, key=lambda c: (c // 13 == SPADES, c % 13))
        played_nils = [s for s in nils if v.trick[s] >= 0]
        if played_nils and self.winner in played_nils:
            under = [c for c in legal if not self.wins(c)]
            if under:
                return max(under, key=lambda c: (c // 13 != SPADES, c % 13))
            return self.lowest(legal)
        if any(v.trick[s] < 0 for s in nils):
            # the Nil still has to play: keep the winning card low
            under = [c for c in legal if not self.wins(c)]
            if under:
                return self.lowest(under)
            return self.lowest(legal)
        return None

    def win_play(self) -> int:
        v = self.v
        legal = self.legal
        if self.size == 0:
            return self.lead_to_win()
        if self.winner == 2 and v.num_seats == 4:
            pc = v.trick[2]
            secure = self.last or (
                (self.boss(pc) or pc // 13 == SPADES and self.boss(pc)) and not self.opp_may_ruff(pc // 13)
            )
            if secure:
                return self.lowest(legal) if legal[0] // 13 == self.led else self.discard()
        winners = [c for c in legal if self.wins(c)]
        if not winners:
            return self.lowest(legal) if legal[0] // 13 == self.led else self.discard()
        if self.last:
            return self.lowest(winners)
        follow = [c for c in winners if c // 13 == self.led]
        if follow:
            bosses = [c for c in follow if self.boss(c)]
            if bosses and not self.opp_may_ruff(self.led):
                return min(bosses, key=lambda c: c % 13)
            if self.size == 1 and self.led != SPADES:
                # second hand: play low unless a high card is cheap
                cheap = min(follow, key=lambda c: c % 13)
                if self.higher_unseen(cheap) <= 1:
                    return cheap
                return self.lowest(legal)
            return max(follow, key=lambda c: c % 13) if self.size >= 2 else min(follow, key=lambda c: c % 13)
        # trumping: the cheapest spade that wins, a bit higher if an opponent may over-trump
        spades = sorted(winners, key=lambda c: c % 13)
        if self.size < v.num_seats - 1:
            for c in spades:
                if self.higher_unseen(c) <= 1:
                    return c
        return spades[0]

    def lead_to_win(self) -> int:
        legal = self.legal
        side_bosses = [
            c for c in legal if c // 13 != SPADES and self.boss(c) and not self._opps_void(c // 13)
        ]
        if side_bosses:
            return max(side_bosses, key=lambda c: (c % 13, self.suit_len(c // 13)))
        spades = [c for c in legal if c // 13 == SPADES]
        if spades:
            top = max(spades, key=lambda c: c % 13)
            unseen_sp = popcount(suit_cards(self.unseen, SPADES))
            if self.boss(top) and (len(spades) >= 3 or len(spades) >= unseen_sp):
                return top
        side = [c for c in legal if c // 13 != SPADES]
        if side:
            n_sp = self.suit_len(SPADES)
            if n_sp > 0:
                shorts = [c for c in side if self.suit_len(c // 13) <= 2 and c % 13 < KING]
                if shorts:
                    return min(shorts, key=lambda c: (self.suit_len(c // 13), c % 13))
            return min(side, key=lambda c: (-self.suit_len(c // 13), c % 13))
        return min(legal, key=lambda c: c % 13)

    def _opps_void(self, suit: int) -> bool:
        v = self.v
        return any((v.voids[s] >> suit) & 1 for s in v.opponents) and suit_cards(self.unseen, SPADES) != 0

    def duck_play(self) -> int:
        legal = self.legal
        if self.size == 0:
            # lead the card most likely to be beaten
            side = [c for c in legal if c // 13 != SPADES] or legal
            return max(side, key=lambda c: (self.higher_unseen(c) > 0, self.higher_unseen(c), -(c % 13)))
        under = [c for c in legal if not self.wins(c)]
        if under:
            return max(under, key=lambda c: (c // 13 == SPADES, c % 13))
        if self.last:
            return self.highest(legal)
        return self.lowest(legal)


__all__ = ["HeuristicPolicy", "estimate_tricks", "nil_danger"]
