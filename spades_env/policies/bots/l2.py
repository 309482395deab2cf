"""The L2 expert heuristic, compiled: one implementation for one seat or a batch of games.

Every decision starts from the seat's observation alone: :func:`~spades_env.core.observation.decode_into`
turns it into a core state row with the observer as seat 0 (other hands unknown, empty) and
the rules row, and the rules questions (who wins the trick, what is legal, how many tricks a
team still needs) are asked of :mod:`spades_env.core`. Relative seats: 0 self, 1 left-hand
opponent, 2 partner, 3 right-hand opponent.

* **Blind Nil** by value, not by rule: :func:`blind_choice` compares, on a table of simulated
  hands (:mod:`spades_env.policies.bots.blind_value`), the chance of winning the game after this hand
  with a Blind Nil and after seeing the cards, for the rules and the score at hand.
* **Bidding** counts sure and likely tricks (spade honours and length, side aces and guarded
  kings, short suits with spare trumps); Nil with a hand that cannot be forced to win.
* **Exchange**: the Blind Nil bidder's partner passes its lowest cards; the bidder passes back
  its most dangerous ones (high spades, then the highest cards).
* **Play**: a Nil bidder ducks with its highest safe card; its partner covers (leads suits the
  Nil bidder has shown out of, wins high ahead of it, overtakes it, ducks when the trick is
  already safe for it); opponents attack a Nil (lead low in suits the Nil bidder still holds,
  stay under its card, keep the winning card low while it is to play, throw high cards while
  the Nil is alive); otherwise win while the contract is short (boss cards, cheap trumps), try
  to set the opponents when bags allow, and duck once the contract is made.

``MODE_EV`` is L2; ``MODE_ALWAYS_BLIND`` is the ``blind`` baseline (L2's play, and a Blind Nil
whenever the rules offer one and the partner has not bid a Nil).
"""

from __future__ import annotations

import numpy as np
from numba import njit, prange

from spades_env.core import layout as L
from spades_env.core.actions import (
    ACTION_DISCARD,
    ACTION_KEEP,
    BID_BASE,
    NUM_ACTIONS,
)
from spades_env.core.cards import FULL_DECK, FULL_SUIT
from spades_env.core.engine import trick_winner
from spades_env.core.jit import ctz, jit
from spades_env.core.observation import O_PHASE, OBS_SIZE, decode_into
from spades_env.core.scoring import is_nil_bid, tricks_needed
from spades_env.policies.bots.blind_value import (
    MODE_ALWAYS_BLIND,
    MODE_EV,
    MODE_NEVER_BLIND,
    blind_choice,
    model_entry,
    row_config,
)

pjit = njit(cache=True, nogil=True, parallel=True)
sjit = njit(cache=True, nogil=True, error_model="numpy")


SPADE = 3
ACE, KING, QUEEN, JACK, TEN = 12, 11, 10, 9, 8

NIL_MAX_TRICKS = 2.6
NIL_LIMIT = 1.0
NIL_LIMIT_WEAK = 0.6
BID_ROUND = 0.5


# ---- small card helpers ------------------------------------------------------------------
@jit
def popc(m):
    """Number of set bits (cards) of a mask."""
    c = 0
    while m != 0:
        m &= m - 1
        c += 1
    return c


@jit
def suit_bits(mask, suit):
    """Ranks of ``suit`` in ``mask`` as a 13-bit set."""
    return (mask >> (13 * suit)) & FULL_SUIT


@jit
def top_rank(bits):
    """Highest rank in a 13-bit set, -1 if empty."""
    for r in range(12, -1, -1):
        if (bits >> r) & 1:
            return r
    return -1


@jit
def higher_unseen(unseen, c):
    """Unseen cards of ``c``'s suit ranking above it."""
    r = c % 13
    above = FULL_SUIT & ~((1 << (r + 1)) - 1)
    return popc(unseen & (above << (13 * (c // 13))))


@jit
def _spade_key(c):
    """(is spade, rank) as one number: spades above every side card."""
    return (100 if c // 13 == SPADE else 0) + c % 13


# ---- hand evaluation ---------------------------------------------------------------------
@jit
def estimate_tricks(hand, num_seats):
    """Expected tricks of a hand: spade honours and length, side aces and guarded kings,
    ruffs with spare spades in short suits."""
    sp = suit_bits(hand, SPADE)
    ns = popc(sp)
    a = (sp >> ACE) & 1
    k = (sp >> KING) & 1
    q = (sp >> QUEEN) & 1
    j = (sp >> JACK) & 1
    t = 0.0
    honours = 0
    if a:
        t += 1.0
        honours += 1
    if k:
        t += 1.0 if ns >= 2 else 0.35
        if ns >= 2:
            honours += 1
    if q:
        if ns >= 3:
            t += 1.0
            honours += 1
        elif ns == 2 and (a or k):
            t += 0.5
        else:
            t += 0.2
    if j and ns >= 4:
        t += 0.5
    if ns >= 4:
        t += ns - 3.0
    shortness = 0.0
    for s in range(3):
        bits = suit_bits(hand, s)
        n = popc(bits)
        sa = (bits >> ACE) & 1
        sk = (bits >> KING) & 1
        sq = (bits >> QUEEN) & 1
        if n == 0:
            shortness += 2.0
        elif n == 1:
            shortness += 0.6 if sa else 1.0
        elif n == 2:
            shortness += 0.4
        if sa:
            t += 1.0 if n <= 5 else 0.6
        if sk:
            if sa:
                t += 0.85 if n <= 4 else 0.45
            elif n >= 2:
                t += 0.55 if n <= 5 else 0.3
            else:
                t += 0.1
        if sq and 3 <= n <= 4 and (sa or sk):
            t += 0.25
    spare = max(0, min(ns, 3) - honours)
    t += 0.7 * min(spare, shortness)
    if num_seats == 2:
        t *= 1.05
    return t


@jit
def nil_danger(hand):
    """How likely a hand is to take a trick as a Nil (0 safe; >= 1: do not bid Nil)."""
    sp = suit_bits(hand, SPADE)
    ns = popc(sp)
    top = top_rank(sp)
    if top >= JACK or ns >= 4:
        return 9.0
    danger = 0.0
    if top == TEN:
        danger += 0.6
    elif top == 7:
        danger += 0.3
    elif top == 6:
        danger += 0.15
    if ns == 3:
        danger += 0.3
    for s in range(3):
        bits = suit_bits(hand, s)
        if (bits >> ACE) & 1:
            return 9.0
        lower = popc(bits)
        for r in range(12, -1, -1):
            if not (bits >> r) & 1:
                continue
            lower -= 1
            need = 0
            if r == KING or r == QUEEN:
                need = 3
            elif r == JACK or r == TEN:
                need = 2
            elif r == 7 or r == 6:
                need = 1
            if lower < need:
                danger += (need - lower) * (0.45 if r >= QUEEN else 0.25)
    return danger


# ---- bidding, exchange, draw ------------------------------------------------------------------
@jit
def choose_bid(row, params):
    """L2's bid (0..13) for seat 0 of a decoded row."""
    n = row[L.NUM_SEATS]
    hand = row[L.HANDS]
    t = estimate_tricks(hand, n)
    partner_bid = row[L.BIDS + 2] if n == 4 else L.BID_NONE
    known = 0
    for s in range(1, n):
        b = row[L.BIDS + s]
        if b >= 0 and not is_nil_bid(b):
            known += b
    if n == 4 and not is_nil_bid(partner_bid):
        limit = NIL_LIMIT if (partner_bid < 0 or partner_bid >= 3) else NIL_LIMIT_WEAK
        if params[L.P_NIL_VALUE] > 0 and t <= NIL_MAX_TRICKS and nil_danger(hand) < limit:
            return 0
    elif n == 2:
        if params[L.P_NIL_VALUE] > 0 and t <= 0.8 and nil_danger(hand) <= 0.0:
            return 0
    bid = int(t + BID_ROUND)
    if row[L.BAGS] >= params[L.P_BAG_LIMIT] - 3 and params[L.P_BAG_LIMIT] > 0:
        bid = int(t + 0.55)
    if is_nil_bid(partner_bid):
        bid = int(t + 0.5)
    cap = max(1, 13 - known)
    return max(1, min(13, min(bid, cap)))


@jit
def choose_exchange(row, legal):
    """The card seat 0 passes in the Blind Nil exchange."""
    hand = row[L.HANDS]
    best = -1
    best_key = 0.0
    blind = row[L.BIDS] == L.BID_BLIND_NIL
    for c in range(52):
        if not (legal >> c) & 1:
            continue
        r = c % 13
        s = c // 13
        if blind:
            # the most dangerous card for a Nil: high spades, then high cards of short suits
            key = r + (8.0 if s == SPADE else 0.0) + 0.2 * (4 - min(popc(suit_bits(hand, s)), 4))
            if best < 0 or key > best_key:
                best, best_key = c, key
        else:
            # the partner keeps its high cards to cover: pass the lowest, side suits first
            key = r + (0.5 if s == SPADE else 0.0)
            if best < 0 or key < best_key:
                best, best_key = c, key
    return best


@jit
def choose_draw(row):
    """Two-player draw: keep the shown card if it is a spade or high enough."""
    c = row[L.DECK]
    if c < 0:
        return ACTION_KEEP
    s = c // 13
    r = c % 13
    length = popc(suit_bits(row[L.HANDS], s))
    value = r / 12.0 + (0.45 if s == SPADE else 0.0) + 0.05 * max(0, length - 3)
    return ACTION_KEEP if value >= 0.75 else ACTION_DISCARD


# ---- card play --------------------------------------------------------------------------------
@jit
def wins_with(row, c):
    """Whether seat 0 would be winning the current trick after playing ``c`` (core rule)."""
    size = row[L.TRICK_SIZE]
    if size == 0:
        return True
    row[L.TRICK_CARDS] = c
    row[L.TRICK_SIZE] = size + 1
    w = trick_winner(row)
    row[L.TRICK_CARDS] = L.NO_CARD
    row[L.TRICK_SIZE] = size
    return w == 0


@jit
def _nil_alive(row, seat):
    return is_nil_bid(row[L.BIDS + seat]) and row[L.TRICKS_WON + seat] == 0




@jit
def _side_count(cards, k):
    """How many of the first ``k`` cards are not spades."""
    side = 0
    for i in range(k):
        if cards[i] // 13 != SPADE:
            side += 1
    return side


@jit
def _lowest(cards, k, hand):
    """Lowest card: side suits before spades, the shortest suit on ties."""
    best = -1
    bk = 0.0
    for i in range(k):
        c = cards[i]
        key = (1000.0 if c // 13 == SPADE else 0.0) + 10.0 * (c % 13) + popc(suit_bits(hand, c // 13)) * 0.1
        if best < 0 or key < bk:
            best, bk = c, key
    return best


@jit
def _highest(cards, k):
    best = -1
    for i in range(k):
        if best < 0 or _spade_key(cards[i]) > _spade_key(best):
            best = cards[i]
    return best


@jit
def _discard(cards, k, hand):
    """The card to throw when not winning: a low side card from a short suit."""
    best = -1
    bk = 0.0
    side = _side_count(cards, k)
    for i in range(k):
        c = cards[i]
        if side > 0 and c // 13 == SPADE:
            continue
        key = (100.0 if c % 13 >= QUEEN else 0.0) + popc(suit_bits(hand, c // 13)) * 0.3 + c % 13
        if best < 0 or key < bk:
            best, bk = c, key
    return best


@jit
def _follows(cards, k, led):
    return k > 0 and cards[0] // 13 == led


@jit
def _opp_may_ruff(row, unseen, suit):
    """An opponent still to play may be void in ``suit`` and hold a spade."""
    if suit == SPADE or suit_bits(unseen, SPADE) == 0:
        return False
    size = row[L.TRICK_SIZE]
    for s in (1, 3):
        if size > 0 and row[L.TRICK_CARDS + s] >= 0:
            continue
        if (row[L.SHOWN_OUT + s] >> suit) & 1:
            return True
    return False


@jit
def _opps_void(row, unseen, suit):
    if suit_bits(unseen, SPADE) == 0:
        return False
    return (((row[L.SHOWN_OUT + 1] | row[L.SHOWN_OUT + 3]) >> suit) & 1) == 1


@jit
def _nil_play(row, cards, k, wins, unseen):
    size = row[L.TRICK_SIZE]
    hand = row[L.HANDS]
    if size == 0:
        # lead the card with the most unseen cards above it (low cards of long-held suits)
        best = -1
        bk = 0.0
        side = _side_count(cards, k)
        for i in range(k):
            c = cards[i]
            if side > 0 and c // 13 == SPADE:
                continue
            key = higher_unseen(unseen, c) - 2.0 * (c % 13 > 7) - 0.01 * (c % 13)
            if best < 0 or key > bk:
                best, bk = c, key
        return best
    # the highest card that does not win; spades first (the most dangerous to keep)
    best = -1
    for i in range(k):
        c = cards[i]
        if not wins[i]:
            key = c % 13 + (6 if c // 13 == SPADE else 0)
            if best < 0 or key > best % 13 + (6 if best // 13 == SPADE else 0):
                best = c
    if best >= 0:
        return best
    if size == row[L.NUM_SEATS] - 1:
        return _highest(cards, k)
    return _lowest(cards, k, hand)


@jit
def _cover_play(row, cards, k, wins, unseen):
    """Seat 0 covers its partner's (Blind) Nil; -1: the partner is safe, play normally."""
    size = row[L.TRICK_SIZE]
    hand = row[L.HANDS]
    if size == 0:
        # a suit the Nil bidder has shown out of lets it throw its dangerous cards
        best = -1
        bk = 0.0
        for i in range(k):
            c = cards[i]
            s = c // 13
            key = 0.0
            if s != SPADE and (row[L.SHOWN_OUT + 2] >> s) & 1 and not _opps_void(row, unseen, s):
                key += 50.0
            if higher_unseen(unseen, c) == 0:
                key += 30.0
            if s != SPADE:
                key += 10.0
            key += c % 13
            if best < 0 or key > bk:
                best, bk = c, key
        return best
    led = row[L.TRICK_CARDS + row[L.TRICK_LEADER]] // 13
    cur = trick_winner(row)
    if row[L.TRICK_CARDS + 2] >= 0:  # partner already played
        if cur == 2:
            low = -1
            for i in range(k):
                if wins[i] and (low < 0 or _spade_key(cards[i]) < _spade_key(low)):
                    low = cards[i]
            if low >= 0:
                return low
            return _discard(cards, k, hand)
        return -1
    # partner still to play: the trick is safe for it if the winning card is a boss
    wc = row[L.TRICK_CARDS + cur]
    if cur != 0 and wc // 13 == led and higher_unseen(unseen, wc) == 0 and not _opp_may_ruff(row, unseen, led):
        if _follows(cards, k, led):
            return _lowest(cards, k, hand)
        return _discard(cards, k, hand)
    # win as high as possible so that the partner can duck under
    best = -1
    for i in range(k):
        if wins[i]:
            c = cards[i]
            f = c // 13 == led
            if best < 0:
                best = c
            else:
                bf = best // 13 == led
                if (f and not bf) or (f == bf and c % 13 > best % 13):
                    best = c
    if best >= 0:
        return best
    if _follows(cards, k, led):
        return _highest(cards, k)
    return _discard(cards, k, hand)


@jit
def _attack_play(row, cards, k, wins, unseen, target):
    """Seat 0 attacks the opponent ``target``'s Nil; -1: nothing to gain in this trick."""
    size = row[L.TRICK_SIZE]
    hand = row[L.HANDS]
    cover = (target + 2) % 4
    if size == 0:
        # lead low in a suit the Nil bidder still holds (and its partner cannot ruff), where
        # many unseen high cards may be stuck in the Nil bidder's hand
        best = -1
        bk = 0.0
        for i in range(k):
            c = cards[i]
            s = c // 13
            key = -(c % 13) * 1.0
            if (row[L.SHOWN_OUT + target] >> s) & 1:
                key -= 100.0
            if s != SPADE and (row[L.SHOWN_OUT + cover] >> s) & 1 and suit_bits(unseen, SPADE) != 0:
                key -= 30.0
            if s == SPADE:
                key -= 20.0
            key += 0.5 * higher_unseen(unseen, c) / max(popc(suit_bits(unseen, s)), 1) * 4.0
            if best < 0 or key > bk:
                best, bk = c, key
        return best
    cur = trick_winner(row)
    played_t = row[L.TRICK_CARDS + target] >= 0
    if played_t and cur == target:
        # stay under the Nil bidder's card; throw high cards while it is winning
        best = -1
        for i in range(k):
            if not wins[i]:
                c = cards[i]
                key = (0 if c // 13 == SPADE else 100) + c % 13
                if best < 0 or key > (0 if best // 13 == SPADE else 100) + best % 13:
                    best = c
        if best >= 0:
            return best
        return _lowest(cards, k, hand)
    if not played_t:
        if cur == cover and row[L.TRICK_CARDS + cover] >= 0:
            return -1  # its partner already covers this trick
        # the Nil bidder is still to play: keep the winning card low; when not following,
        # throw a high side card (the low ones are kept to lead against the Nil later)
        led = row[L.TRICK_CARDS + row[L.TRICK_LEADER]] // 13
        if not _follows(cards, k, led):
            best = -1
            for i in range(k):
                c = cards[i]
                if c // 13 != SPADE and (best < 0 or c % 13 > best % 13):
                    best = c
            if best >= 0:
                return best
        best = -1
        for i in range(k):
            if not wins[i] and (best < 0 or _spade_key(cards[i]) < _spade_key(best)):
                best = cards[i]
        if best >= 0:
            return best
        return _lowest(cards, k, hand)
    return -1


@jit
def _lead_to_win(row, cards, k, unseen):
    hand = row[L.HANDS]
    best = -1
    for i in range(k):
        c = cards[i]
        if c // 13 != SPADE and higher_unseen(unseen, c) == 0 and not _opps_void(row, unseen, c // 13):
            if best < 0 or 16 * (c % 13) + popc(suit_bits(hand, c // 13)) > 16 * (best % 13) + popc(
                suit_bits(hand, best // 13)
            ):
                best = c
    if best >= 0:
        return best
    n_sp = 0
    top = -1
    for i in range(k):
        c = cards[i]
        if c // 13 == SPADE:
            n_sp += 1
            if top < 0 or c > top:
                top = c
    if top >= 0:
        if higher_unseen(unseen, top) == 0 and (n_sp >= 3 or n_sp >= popc(suit_bits(unseen, SPADE))):
            return top
    side = k - n_sp
    if side > 0:
        my_sp = popc(suit_bits(hand, SPADE))
        if my_sp > 0:
            best = -1
            for i in range(k):
                c = cards[i]
                ln = popc(suit_bits(hand, c // 13))
                if c // 13 != SPADE and ln <= 2 and c % 13 < KING:
                    if best < 0 or 16 * ln + c % 13 < 16 * popc(suit_bits(hand, best // 13)) + best % 13:
                        best = c
            if best >= 0:
                return best
        best = -1
        for i in range(k):
            c = cards[i]
            if c // 13 != SPADE:
                ln = popc(suit_bits(hand, c // 13))
                if best < 0 or -16 * ln + c % 13 < -16 * popc(suit_bits(hand, best // 13)) + best % 13:
                    best = c
        return best
    best = cards[0]
    for i in range(k):
        if cards[i] % 13 < best % 13:
            best = cards[i]
    return best


@jit
def _win_play(row, cards, k, wins, unseen):
    n = row[L.NUM_SEATS]
    size = row[L.TRICK_SIZE]
    hand = row[L.HANDS]
    if size == 0:
        return _lead_to_win(row, cards, k, unseen)
    led = row[L.TRICK_CARDS + row[L.TRICK_LEADER]] // 13
    last = size == n - 1
    cur = trick_winner(row)
    if n == 4 and cur == 2:
        pc = row[L.TRICK_CARDS + 2]
        if last or (higher_unseen(unseen, pc) == 0 and not _opp_may_ruff(row, unseen, pc // 13)):
            if _follows(cards, k, led):
                return _lowest(cards, k, hand)
            return _discard(cards, k, hand)
    nw = 0
    for i in range(k):
        if wins[i]:
            nw += 1
    if nw == 0:
        if _follows(cards, k, led):
            return _lowest(cards, k, hand)
        return _discard(cards, k, hand)
    if last:
        low = -1
        for i in range(k):
            if wins[i] and (low < 0 or _spade_key(cards[i]) < _spade_key(low)):
                low = cards[i]
        return low
    # following suit with a winner
    if _follows(cards, k, led):
        boss = -1
        for i in range(k):
            c = cards[i]
            if wins[i] and higher_unseen(unseen, c) == 0 and (boss < 0 or c < boss):
                boss = c
        if boss >= 0 and not _opp_may_ruff(row, unseen, led):
            return boss
        if size == 1 and led != SPADE:
            cheap = -1
            for i in range(k):
                if wins[i] and (cheap < 0 or cards[i] < cheap):
                    cheap = cards[i]
            if higher_unseen(unseen, cheap) <= 1:
                return cheap
            return _lowest(cards, k, hand)
        pick = -1
        for i in range(k):
            c = cards[i]
            if wins[i]:
                if pick < 0 or (c > pick if size >= 2 else c < pick):
                    pick = c
        return pick
    # trumping: the cheapest spade that wins, a bit higher if an opponent may over-trump
    if size < n - 1:
        for r in range(13):
            for i in range(k):
                c = cards[i]
                if wins[i] and c % 13 == r and higher_unseen(unseen, c) <= 1:
                    return c
    low = -1
    for i in range(k):
        if wins[i] and (low < 0 or cards[i] % 13 < low % 13):
            low = cards[i]
    return low


@jit
def _duck_play(row, cards, k, wins, unseen):
    size = row[L.TRICK_SIZE]
    hand = row[L.HANDS]
    if size == 0:
        # lead the card most likely to be beaten
        best = -1
        bk = 0.0
        side = _side_count(cards, k)
        for i in range(k):
            c = cards[i]
            if side > 0 and c // 13 == SPADE:
                continue
            h = higher_unseen(unseen, c)
            key = (100.0 if h > 0 else 0.0) + h - 0.01 * (c % 13)
            if best < 0 or key > bk:
                best, bk = c, key
        return best
    best = -1
    for i in range(k):
        if not wins[i] and (best < 0 or _spade_key(cards[i]) > _spade_key(best)):
            best = cards[i]
    if best >= 0:
        return best
    if size == row[L.NUM_SEATS] - 1:
        return _highest(cards, k)
    return _lowest(cards, k, hand)


@jit
def choose_card(row, params, legal):
    """L2's card (or -1 if ``legal`` is empty) for seat 0 of a decoded row."""
    n = row[L.NUM_SEATS]
    cards = np.empty(13, dtype=np.int64)
    wins = np.zeros(13, dtype=np.bool_)
    k = 0
    m = legal
    while m != 0 and k < 13:
        cards[k] = ctz(m)
        k += 1
        m &= m - 1
    if k == 0:
        return -1
    if k == 1:
        return cards[0]
    for i in range(k):
        wins[i] = wins_with(row, cards[i])
    all_played = 0
    for s in range(4):
        all_played |= row[L.PLAYED + s]
    unseen = FULL_DECK & ~row[L.HANDS] & ~all_played & ~row[L.DISCARDED]
    if _nil_alive(row, 0):
        return _nil_play(row, cards, k, wins, unseen)
    if n == 4 and _nil_alive(row, 2):
        c = _cover_play(row, cards, k, wins, unseen)
        if c >= 0:
            return c
    bids = row[L.BIDS : L.BIDS + 4]
    tricks = row[L.TRICKS_WON : L.TRICKS_WON + 4]
    remaining = 13 - row[L.TRICKS_PLAYED]
    need = tricks_needed(bids, tricks, 0, n, params)
    if need < remaining - 1:
        for t in (1, 3):
            if t < n and _nil_alive(row, t):
                c = _attack_play(row, cards, k, wins, unseen, t)
                if c >= 0:
                    return c
                break
    if need > 0:
        return _win_play(row, cards, k, wins, unseen)
    need_them = tricks_needed(bids, tricks, 1, n, params)
    for_set = remaining - need_them + 1
    bag_room = params[L.P_BAG_LIMIT] - 2 if params[L.P_BAG_LIMIT] > 0 else 99
    if need_them > 0 and for_set <= remaining and row[L.BAGS] + for_set <= bag_room and for_set <= 3:
        return _win_play(row, cards, k, wins, unseen)
    return _duck_play(row, cards, k, wins, unseen)


# ---- the decision -----------------------------------------------------------------------------
@jit
def l2_decide(obs, mask, mode, model, row, params):
    """L2's action for one observation and ``int8[70]`` mask (``mode``: ``MODE_EV`` or
    ``MODE_ALWAYS_BLIND``; ``model``: the Blind Nil ``BlindModel``; ``row``/``params``:
    scratch). Returns -1 if the mask has no legal action."""
    decode_into(obs, row, params)
    phase = row[L.PHASE]
    legal_cards_mask = 0
    first = -1
    for a in range(NUM_ACTIONS):
        if mask[a] != 0:
            if first < 0:
                first = a
            if a < 52:
                legal_cards_mask |= 1 << a
    if first < 0:
        return -1
    a = first
    if phase == L.PH_BLIND:
        a = blind_choice(row, params, mode, model)
    elif phase == L.PH_BID:
        a = BID_BASE + choose_bid(row, params)
    elif phase == L.PH_EXCHANGE:
        a = choose_exchange(row, legal_cards_mask)
    elif phase == L.PH_PLAY:
        a = choose_card(row, params, legal_cards_mask)
    elif phase == L.PH_DRAW:
        a = choose_draw(row)
    if a < 0 or a >= NUM_ACTIONS or mask[a] == 0:
        return -2  # a bot bug: the caller raises
    return a


@jit
def l2_act_one(obs, mask, mode, model):
    """:func:`l2_decide` with its own scratch rows."""
    row = np.zeros(L.STATE_SIZE, dtype=np.int64)
    params = np.zeros(L.PARAMS_SIZE, dtype=np.int64)
    return l2_decide(obs, mask, mode, model, row, params)


@pjit
def l2_act_batch(obs, mask, modes, model, out):
    """L2's action for each row of ``obs [B, OBS_SIZE]`` / ``mask [B, 70]`` into ``out [B]``
    (``modes [B]`` per game), over numba's threads; rows whose mask is empty get -1. The
    Blind Nil cache entries the rows need are filled first, in this thread."""
    b = obs.shape[0]
    row = np.zeros(L.STATE_SIZE, dtype=np.int64)
    params = np.zeros(L.PARAMS_SIZE, dtype=np.int64)
    for i in range(b):
        if obs[i, O_PHASE + L.PH_BLIND] > 0.5:  # exactly the rows blind_choice will see
            decode_into(obs[i], row, params)
            model_entry(model, params, row_config(row, params))
    for i in prange(b):
        row_i = np.zeros(L.STATE_SIZE, dtype=np.int64)
        params_i = np.zeros(L.PARAMS_SIZE, dtype=np.int64)
        out[i] = l2_decide(obs[i], mask[i], modes[i], model, row_i, params_i)


@sjit
def l2_act_batch_serial(obs, mask, modes, model, out):
    """:func:`l2_act_batch` in the calling thread (no thread pool: the default, so that a
    learner's torch threads in the same process are not slowed by numba's)."""
    row = np.zeros(L.STATE_SIZE, dtype=np.int64)
    params = np.zeros(L.PARAMS_SIZE, dtype=np.int64)
    for i in range(obs.shape[0]):
        out[i] = l2_decide(obs[i], mask[i], modes[i], model, row, params)


__all__ = [
    "MODE_ALWAYS_BLIND",
    "MODE_NEVER_BLIND",
    "MODE_EV",
    "OBS_SIZE",
    "choose_bid",
    "choose_card",
    "estimate_tricks",
    "l2_act_batch",
    "l2_act_batch_serial",
    "l2_act_one",
    "l2_decide",
    "nil_danger",
]
