"""A seat's view decoded from its observation vector, for scripted bots.

Bots act only on what their seat may know. :func:`decode` turns the observation vector
(:mod:`spades_env.observation`) back into readable fields, all **relative to the observer**:
relative seat 0 is the observer, 1 its left-hand opponent, 2 its partner, 3 its right-hand
opponent (two-player game: 0 and 1). :meth:`SeatView.state_row` builds a core state row with
the observer as seat 0 and the other hands empty, so that rules questions (legal cards, who
wins the trick) are answered by :mod:`spades_env.core.engine`, never re-implemented here.

:class:`VoidTracker` remembers the seat's earlier observations in the hand to infer which
suits other seats have shown out of (the observation itself keeps the cards each seat played,
not the trick they were played to).
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from spades_env.core import layout as L
from spades_env.core.cards import NUM_RANKS, SUIT_MASKS
from spades_env.core.engine import trick_winner
from spades_env.observation import OBS_SIZE, SLICES

BLIND = L.BID_BLIND_NIL  # bid value 14: Blind Nil
FULL_DECK = (1 << 52) - 1


def _mask(vec: np.ndarray) -> int:
    m = 0
    for c in np.flatnonzero(vec > 0.5):
        m |= 1 << int(c)
    return m


def _onehot(vec: np.ndarray) -> int:
    nz = np.flatnonzero(vec > 0.5)
    return int(nz[0]) if nz.size else -1


def popcount(mask: int) -> int:
    """Number of cards in a mask."""
    return bin(mask).count("1")


def cards_of(mask: int) -> list[int]:
    """Card ids in a mask, ascending."""
    out = []
    while mask:
        low = mask & -mask
        out.append(low.bit_length() - 1)
        mask ^= low
    return out


def suit_cards(mask: int, suit: int) -> int:
    """The cards of ``suit`` in ``mask``."""
    return mask & SUIT_MASKS[suit]


def is_nil(bid: int) -> bool:
    """Whether a bid value (0..13, 14 = Blind Nil, -1 = none) is a Nil or Blind Nil."""
    return bid == 0 or bid == BLIND


@dataclass
class SeatView:
    """One seat's observation, decoded (seats relative to the observer)."""

    num_seats: int
    hand: int
    phase: int
    to_act: int
    dealer: int
    bids: list[int]  # -1 none, 0..13, 14 Blind Nil
    played: list[int]  # masks
    trick: list[int]  # card each seat put on the current trick, -1
    leader: int  # seat that led the current trick, -1 when it is empty
    tricks_won: list[int]
    scores: tuple[int, int]  # own team, other team
    bags: tuple[int, int]
    game_wins: tuple[int, int]
    spades_broken: bool
    passed: int
    received: int
    draw_shown: int  # card, -1
    discarded: int
    target_score: int = 500
    voids: list[int] = field(default_factory=lambda: [0, 0, 0, 0])  # suit bit sets, by seat

    # ---- derived facts ------------------------------------------------------------------
    @property
    def partner(self) -> int:
        """Relative seat of the partner (-1 in the two-player game)."""
        return 2 if self.num_seats == 4 else -1

    @property
    def opponents(self) -> tuple[int, ...]:
        return (1, 3) if self.num_seats == 4 else (1,)

    @property
    def trick_size(self) -> int:
        return sum(1 for c in self.trick[: self.num_seats] if c >= 0)

    @property
    def tricks_played(self) -> int:
        return sum(self.tricks_won[: self.num_seats])

    @property
    def all_played(self) -> int:
        m = 0
        for p in self.played:
            m |= p
        return m

    @property
    def unseen(self) -> int:
        """Cards not in the observer's hand, not played: held by others (or out of play)."""
        return FULL_DECK & ~self.hand & ~self.all_played & ~self.discarded

    def led_suit(self) -> int:
        """Suit led to the current trick, -1 when the trick is empty."""
        if self.leader < 0 or self.trick[self.leader] < 0:
            return -1
        return self.trick[self.leader] // NUM_RANKS

    def team_seats(self, team: int) -> tuple[int, ...]:
        """Relative seats of a team: 0 = own team, 1 = the other."""
        if self.num_seats == 2:
            return (team,)
        return (0, 2) if team == 0 else (1, 3)

    def contract(self, team: int) -> int:
        """Tricks the team bid, Nil bids excluded (0 if nobody bid yet)."""
        return sum(max(self.bids[s], 0) for s in self.team_seats(team) if not is_nil(self.bids[s]))

    def contract_tricks(self, team: int) -> int:
        """Tricks won by the team's non-Nil bidders (what counts toward its contract)."""
        return sum(self.tricks_won[s] for s in self.team_seats(team) if not is_nil(self.bids[s]))

    def need(self, team: int) -> int:
        """Tricks the team still needs to make its contract (<= 0: made)."""
        return self.contract(team) - self.contract_tricks(team)

    def nil_alive(self, seat: int) -> bool:
        """Whether ``seat`` bid (Blind) Nil and has not taken a trick yet."""
        return is_nil(self.bids[seat]) and self.tricks_won[seat] == 0

    # ---- rules questions, answered by the core ---------------------------------------------
    def state_row(self) -> np.ndarray:
        """A core state row with the observer as seat 0 and other seats' hands empty."""
        row = np.zeros(L.STATE_SIZE, dtype=np.int64)
        n = self.num_seats
        row[L.NUM_SEATS] = n
        row[L.PHASE] = self.phase if self.phase >= 0 else L.PH_PLAY
        row[L.DEALER] = max(self.dealer, 0)
        row[L.TURN] = self.to_act
        row[L.TRICK_LEADER] = self.leader if self.leader >= 0 else 0
        row[L.TRICK_SIZE] = self.trick_size
        row[L.TRICKS_PLAYED] = self.tricks_played
        row[L.SPADES_BROKEN] = int(self.spades_broken)
        row[L.GAME_WINNER] = -1
        row[L.MATCH_WINNER] = -1
        row[L.LAST_TRICK_WINNER] = -1
        row[L.HANDS] = self.hand
        for s in range(4):
            row[L.BIDS + s] = self.bids[s] if s < n else L.BID_NONE
            row[L.TRICKS_WON + s] = self.tricks_won[s] if s < n else 0
            row[L.TRICK_CARDS + s] = self.trick[s] if s < n else L.NO_CARD
            row[L.PLAYED + s] = self.played[s] if s < n else 0
            row[L.LAST_TRICK + s] = L.NO_CARD
            row[L.EXCH_SEQ + s] = -1
        row[L.PASSED] = self.passed
        row[L.RECEIVED] = self.received
        row[L.DISCARDED] = self.discarded
        for k in range(2):
            row[L.SCORES + k] = self.scores[k]
            row[L.BAGS + k] = self.bags[k]
            row[L.GAME_WINS + k] = self.game_wins[k]
        return row

    def winner_with(self, card: int, row: np.ndarray | None = None) -> int:
        """Relative seat that would be winning the current trick if the observer played ``card``
        now (the core's ``trick_winner``)."""
        row = self.state_row() if row is None else row
        size, leader = row[L.TRICK_SIZE], row[L.TRICK_LEADER]
        if size == 0:
            return 0
        row[L.TRICK_CARDS] = card
        row[L.TRICK_SIZE] = size + 1
        w = int(trick_winner(row))
        row[L.TRICK_CARDS] = L.NO_CARD
        row[L.TRICK_SIZE] = size
        row[L.TRICK_LEADER] = leader
        return w

    def current_winner(self, row: np.ndarray | None = None) -> int:
        """Relative seat winning the current trick so far, -1 when it is empty."""
        if self.trick_size == 0:
            return -1
        row = self.state_row() if row is None else row
        return int(trick_winner(row))


def decode(observation: np.ndarray, num_seats: int = 4, target_score: int = 500) -> SeatView:
    """Decode an observation vector (``OBS_SIZE`` floats) into a :class:`SeatView`.

    ``num_seats`` and ``target_score`` come from the rules (scores are stored divided by the
    target score)."""
    obs = np.asarray(observation)
    if obs.shape != (OBS_SIZE,):
        raise ValueError(f"decode: expected an observation of shape ({OBS_SIZE},), got {obs.shape}")
    S = SLICES
    n = num_seats
    bids_v = obs[S["bids"]].reshape(4, 16)
    played_v = obs[S["played"]].reshape(4, 52)
    trick_v = obs[S["trick"]].reshape(4, 52)
    bids, played, trick = [], [], []
    for k in range(4):
        b = _onehot(bids_v[k])
        bids.append(b - 1 if b >= 0 else -1)
        played.append(_mask(played_v[k]) if k < n else 0)
        trick.append(_onehot(trick_v[k]) if k < n else -1)
    tw = obs[S["tricks_won"]]
    sc = obs[S["scores"]]
    bg = obs[S["bags"]]
    gw = obs[S["game_wins"]]
    return SeatView(
        num_seats=n,
        hand=_mask(obs[S["hand"]]),
        phase=_onehot(obs[S["phase"]]),
        to_act=_onehot(obs[S["to_act"]]),
        dealer=_onehot(obs[S["dealer"]]),
        bids=bids,
        played=played,
        trick=trick,
        leader=_onehot(obs[S["leader"]]),
        tricks_won=[int(round(float(x) * 13)) for x in tw],
        scores=(int(round(float(sc[0]) * target_score)), int(round(float(sc[1]) * target_score))),
        bags=(int(round(float(bg[0]) * 10)), int(round(float(bg[1]) * 10))),
        game_wins=(int(round(float(gw[0]))), int(round(float(gw[1])))),
        spades_broken=bool(obs[S["spades_broken"]][0] > 0.5),
        passed=_mask(obs[S["passed"]]),
        received=_mask(obs[S["received"]]),
        draw_shown=_onehot(obs[S["draw_shown"]]),
        discarded=_mask(obs[S["discarded"]]),
        target_score=target_score,
    )


class VoidTracker:
    """Infers the suits other seats have shown out of, from one seat's successive views.

    Feed it every view of the seat that is to act (``update``); it resets itself when a new
    hand starts or when the views do not follow on (e.g. one instance shared by two seats, where
    it only loses information). Voids are suit bit sets per relative seat."""

    def __init__(self) -> None:
        self.prev: SeatView | None = None
        self.voids = [0, 0, 0, 0]

    def _follows(self, v: SeatView) -> bool:
        p = self.prev
        if p is None or p.num_seats != v.num_seats or v.tricks_played < p.tricks_played:
            return False
        if v.hand & ~p.hand:  # own hand only shrinks during play
            return False
        return all(p.played[s] & ~v.played[s] == 0 for s in range(v.num_seats))

    def update(self, v: SeatView) -> list[int]:
        """Record ``v`` (the observer to act) and return the voids known so far, which are also
        stored in ``v.voids``."""
        if v.phase != L.PH_PLAY:
            self.prev, self.voids = None, [0, 0, 0, 0]
            v.voids = list(self.voids)
            return v.voids
        n = v.num_seats
        if not self._follows(v):
            self.voids = [0, 0, 0, 0]
        else:
            p = self.prev
            # the trick that was current at the previous view has been completed since
            if v.tricks_played > p.tricks_played:
                mine = p.played[0] ^ v.played[0]
                led = p.led_suit()
                if led < 0 and mine:
                    led = (mine & -mine).bit_length() - 1
                    led //= NUM_RANKS
                if led >= 0:
                    for s in range(1, n):
                        if p.trick[s] >= 0:
                            continue  # already seen at the previous view
                        new = v.played[s] & ~p.played[s]
                        if v.trick[s] >= 0:
                            new &= ~(1 << v.trick[s])
                        if new and popcount(new) == 1:
                            c = new.bit_length() - 1
                            if c // NUM_RANKS != led:
                                self.voids[s] |= 1 << led
        led = v.led_suit()
        if led >= 0:
            for s in range(1, n):
                c = v.trick[s]
                if c >= 0 and c // NUM_RANKS != led:
                    self.voids[s] |= 1 << led
        # a seat that played every card of a suit it could hold: nothing to infer; but a seat
        # cannot hold a suit whose every unseen card is gone
        unseen = v.unseen
        for s in range(1, n):
            for suit in range(4):
                if suit_cards(unseen, suit) == 0:
                    self.voids[s] |= 1 << suit
        self.prev = v
        v.voids = list(self.voids)
        return v.voids
