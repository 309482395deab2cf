"""L3 determinized search (PIMC) and L4, the same search on the true deal (cheating).

For a card to play, :class:`SearchPolicy` samples deals of the unseen cards consistent with
everything its seat has seen: the cards each seat has played (so how many it still holds),
the suits it has shown out of (:class:`~spades_env.bots.view.VoidTracker`), and the cards it
passed to its partner in the Blind Nil exchange. For each legal card it plays the card and then
the rest of the hand with a fast compiled playout policy, driving the core engine
(``apply_action``, ``legal_cards``, ``trick_winner``) on a state row; the hand is scored by the
core, and the card with the best mean ``HAND_DELTA`` margin (own team minus other team: Nil,
sets and bags included) is played. All legal cards are judged on the same sampled deals.
Bids, the Blind Nil choice, the exchange and the two-player draw are the L2 heuristic's.

``budget`` (seconds per decision) and ``samples`` (deals per decision) set the effort: with
``samples`` alone the search is deterministic given the seed; with ``budget`` it runs sample
batches until the time is spent (at most ``max_samples``). ``noise`` (per mille, default 100)
makes that share of playout cards random: averaging noisy playouts judges a card better than
one fixed playout policy does (measured: +27 against +23 points per hand over L2).

:class:`CheatingPolicy` is **not a legal Policy**: it reads the true state row from a callable
given to :meth:`CheatingPolicy.bind`, and exists only as an upper bound in evaluations.
"""

from __future__ import annotations

import time
from collections.abc import Callable

import numpy as np

from spades_env.bots.heuristic import HeuristicPolicy
from spades_env.bots.view import SeatView, decode, popcount
from spades_env.core import layout as L
from spades_env.core.engine import apply_action, legal_cards, trick_winner
from spades_env.core.jit import ctz, jit
from spades_env.core.rng import below
from spades_env.core.rules import RulesConfig

_SPADE = 3


# ---- compiled playout policy ------------------------------------------------------------
@jit
def _wins(state, seat, card):
    """Whether ``seat`` would be winning the current trick after playing ``card`` (core rule)."""
    size = state[L.TRICK_SIZE]
    if size == 0:
        return True
    state[L.TRICK_CARDS + seat] = card
    state[L.TRICK_SIZE] = size + 1
    w = trick_winner(state)
    state[L.TRICK_CARDS + seat] = L.NO_CARD
    state[L.TRICK_SIZE] = size
    return w == seat


@jit
def _higher_held(state, card, exclude_seat):
    """Whether a seat other than ``exclude_seat`` holds a higher card of ``card``'s suit."""
    s = card // 13
    r = card % 13
    above = ((1 << 13) - 1) & ~((1 << (r + 1)) - 1)
    m = above << (13 * s)
    for i in range(state[L.NUM_SEATS]):
        if i != exclude_seat and (state[L.HANDS + i] & m) != 0:
            return True
    return False


@jit
def _nil_alive(state, seat):
    b = state[L.BIDS + seat]
    return (b == 0 or b == L.BID_BLIND_NIL) and state[L.TRICKS_WON + seat] == 0


@jit
def _need(state, team):
    n = state[L.NUM_SEATS]
    contract = 0
    got = 0
    for s in range(team, n, 2):
        b = state[L.BIDS + s]
        if b != 0 and b != L.BID_BLIND_NIL and b > 0:
            contract += b
            got += state[L.TRICKS_WON + s]
    return contract - got


@jit
def _cards_into(mask, out):
    """Write the card ids of a bit mask into ``out`` (ascending); return how many."""
    k = 0
    while mask != 0:
        out[k] = ctz(mask)
        k += 1
        mask &= mask - 1
    return k


@jit
def playout_card(state, params):
    """The fast playout policy's card for the seat to act (full-information heuristic)."""
    seat = state[L.TURN]
    n = state[L.NUM_SEATS]
    legal = legal_cards(state, params)
    cards = np.empty(13, dtype=np.int64)
    k = _cards_into(legal, cards)
    if k == 1:
        return cards[0]
    size = state[L.TRICK_SIZE]
    last = size == n - 1
    led = -1
    if size > 0:
        led = state[L.TRICK_CARDS + state[L.TRICK_LEADER]] // 13
    partner = (seat + 2) % 4 if n == 4 else -1
    # keys: lowest = min (is_spade, rank); highest = max (is_spade, rank)
    lo = cards[0]
    hi = cards[0]
    for i in range(k):
        c = cards[i]
        kc = (c // 13 == _SPADE) * 100 + c % 13
        if kc < (lo // 13 == _SPADE) * 100 + lo % 13:
            lo = c
        if kc > (hi // 13 == _SPADE) * 100 + hi % 13:
            hi = c
    # best non-winning card (highest), lowest winning card
    best_under = -1
    low_win = -1
    low_boss_win = -1
    for i in range(k):
        c = cards[i]
        kc = (c // 13 == _SPADE) * 100 + c % 13
        if _wins(state, seat, c):
            if low_win < 0 or kc < (low_win // 13 == _SPADE) * 100 + low_win % 13:
                low_win = c
            if not _higher_held(state, c, seat):
                if low_boss_win < 0 or kc < (low_boss_win // 13 == _SPADE) * 100 + low_boss_win % 13:
                    low_boss_win = c
        else:
            if best_under < 0 or kc > (best_under // 13 == _SPADE) * 100 + best_under % 13:
                best_under = c
    cur = trick_winner(state) if size > 0 else -1
    # 1. own Nil
    if _nil_alive(state, seat):
        if size == 0:
            return lo
        if best_under >= 0:
            return best_under
        return hi if last else lo
    # 2. partner's Nil
    if partner >= 0 and _nil_alive(state, partner):
        if size == 0:
            return hi
        if state[L.TRICK_CARDS + partner] >= 0:
            if cur == partner and low_win >= 0:
                return low_win
        elif low_win >= 0:
            return hi if (hi // 13 == led or led < 0) and _wins(state, seat, hi) else low_win
    # 3. an opponent's Nil that is winning this trick: stay under it
    if size > 0 and cur >= 0 and cur % 2 != seat % 2 and _nil_alive(state, cur):
        if best_under >= 0:
            return best_under
    need = _need(state, seat % 2)
    if need > 0 or _need(state, 1 - seat % 2) > 0 and state[L.BAGS + seat % 2] < 7:
        if size == 0:
            # cash a boss card, else lead low
            boss = -1
            for i in range(k):
                c = cards[i]
                if not _higher_held(state, c, seat):
                    if boss < 0 or (c // 13 != _SPADE and boss // 13 == _SPADE):
                        boss = c
            return boss if boss >= 0 else lo
        if partner >= 0 and cur == partner:
            pc = state[L.TRICK_CARDS + partner]
            if last or not _higher_held(state, pc, partner):
                return lo
        if low_win >= 0:
            if last:
                return low_win
            if low_boss_win >= 0:
                return low_boss_win
            return low_win
        return lo
    # contract made: duck
    if size == 0:
        return lo
    if best_under >= 0:
        return best_under
    return hi if last else lo


@jit
def rollout(state, params, rng, eps):
    """Play the hand out with the playout policy (through the core engine), each card random
    with probability ``eps`` / 1000; False if the state was inconsistent (an empty hand)."""
    while state[L.PHASE] == L.PH_PLAY:
        if eps > 0 and below(rng, 0, 1000) < eps:
            m = legal_cards(state, params)
            pick = below(rng, 0, popcount_jit(m))
            for _ in range(pick):
                m &= m - 1
            low = m & -m
            c = ctz(low)
        else:
            c = playout_card(state, params)
        if apply_action(state, params, c) != 0:
            return False  # cannot happen with a consistent deal; never loop forever
    return True


# ---- sampling deals -----------------------------------------------------------------------
@jit
def sample_deal(base, pool, counts, fixed, voids, rng, n_seats, out_hands):
    """Deal the ``pool`` mask: seat ``s`` (1..3) gets ``counts[s]`` cards including the fixed
    ones, none of a suit in ``voids[s]``; seat 4 (two-player out-of-play cards) takes the rest.
    Returns False if the void constraints could not be met (then they are relaxed)."""
    cards = np.empty(52, dtype=np.int64)
    free = pool
    for s in range(5):
        free &= ~fixed[s]
    for attempt in range(30):
        relax = attempt >= 20
        k = _cards_into(free, cards)
        for i in range(k - 1, 0, -1):
            j = below(rng, 0, i + 1)
            t = cards[i]
            cards[i] = cards[j]
            cards[j] = t
        cap = np.zeros(5, dtype=np.int64)
        for s in range(5):
            out_hands[s] = fixed[s]
            cap[s] = counts[s] - popcount_jit(fixed[s])
        ok = True
        for i in range(k):
            c = cards[i]
            suit = c // 13
            total = 0
            for s in range(1, 5):
                if cap[s] > 0 and (relax or ((voids[s] >> suit) & 1) == 0):
                    total += cap[s]
            if total == 0:
                ok = False
                break
            r = below(rng, 0, total)
            for s in range(1, 5):
                if cap[s] > 0 and (relax or ((voids[s] >> suit) & 1) == 0):
                    if r < cap[s]:
                        out_hands[s] |= 1 << c
                        cap[s] -= 1
                        break
                    r -= cap[s]
        if ok:
            return not relax
    return False


@jit
def popcount_jit(m):
    c = 0
    while m != 0:
        m &= m - 1
        c += 1
    return c


@jit
def search_values(
    base, params, seat, cards, n_cards, pool, counts, fixed, voids, rng, n_samples, totals, eps
):
    """Add, for each candidate card, the summed hand margin over ``n_samples`` sampled deals
    (``pool`` empty: the deal in ``base``) into ``totals``; playouts are ``eps``-random."""
    work = np.empty_like(base)
    hands = np.zeros(5, dtype=np.int64)
    n = base[L.NUM_SEATS]
    team = seat % 2
    det = base.copy()
    for _ in range(n_samples):
        if pool != 0:
            sample_deal(base, pool, counts, fixed, voids, rng, n, hands)
            for s in range(1, n):
                det[L.HANDS + (seat + s) % n] = hands[s]
        for i in range(n_cards):
            work[:] = det
            apply_action(work, params, cards[i])
            rollout(work, params, rng, eps)
            totals[i] += work[L.HAND_DELTA + team] - work[L.HAND_DELTA + 1 - team]


# ---- policies ------------------------------------------------------------------------------
class SearchPolicy(HeuristicPolicy):
    """L3: determinized search over the card play (a Policy: its own observation only)."""

    name = "search"

    def __init__(
        self,
        rules: RulesConfig | str | dict | None = None,
        seed: int | None = None,
        budget: float | None = None,
        samples: int | None = None,
        max_samples: int = 1000,
        noise: int = 100,
    ) -> None:
        super().__init__(rules, seed=seed)
        if budget is None and samples is None:
            budget = 0.1
        if budget is not None and budget <= 0:
            raise ValueError(f"SearchPolicy: budget must be positive seconds, got {budget}")
        if samples is not None and samples <= 0:
            raise ValueError(f"SearchPolicy: samples must be positive, got {samples}")
        self.budget = budget
        self.samples = samples
        self.max_samples = samples if (samples is not None and budget is not None) else max_samples
        self._rng = np.zeros(1, dtype=np.int64)
        self.last_samples = 0
        if not 0 <= noise <= 1000:
            raise ValueError(
                f"SearchPolicy: noise is per mille of random playout cards, 0..1000, got {noise}"
            )
        self.eps = int(noise)  # averaging noisy playouts beats one deterministic playout policy

    def play(self, v: SeatView, legal: list[int]) -> int:
        if len(legal) == 1:
            return legal[0]
        base = v.state_row()
        base[L.TURN] = 0
        pool, counts, fixed, voids = self._constraints(v)
        return self._search(base, 0, legal, pool, counts, fixed, voids)

    def _constraints(self, v: SeatView):
        n = v.num_seats
        counts = np.zeros(5, dtype=np.int64)
        fixed = np.zeros(5, dtype=np.int64)
        voids = np.zeros(5, dtype=np.int64)
        pool = v.unseen
        for s in range(1, n):
            counts[s] = 13 - popcount(v.played[s])
            voids[s] = v.voids[s]
        if n == 4:
            fixed[2] = v.passed & pool  # what we passed to partner and it has not played
            counts[4] = 0
        else:
            counts[4] = popcount(pool) - counts[1]
        return pool, counts, fixed, voids

    def _search(self, base, seat, legal, pool, counts, fixed, voids) -> int:
        cards = np.asarray(legal, dtype=np.int64)
        totals = np.zeros(len(legal), dtype=np.float64)
        self._rng[0] = int(self.rng.integers(1, 2**47))
        eps = self.eps

        def run(k: int) -> None:
            search_values(
                base,
                self.params,
                seat,
                cards,
                len(cards),
                pool,
                counts,
                fixed,
                voids,
                self._rng,
                k,
                totals,
                eps,
            )

        if pool == 0 and eps == 0:  # deterministic playouts on a known deal: one is enough
            run(1)
            self.last_samples = 1
        elif self.budget is None:
            run(self.samples)
            self.last_samples = self.samples
        else:
            start = time.perf_counter()
            done = 0
            batch = 4
            while done < self.max_samples:
                k = min(batch, self.max_samples - done)
                run(k)
                done += k
                elapsed = time.perf_counter() - start
                if elapsed >= self.budget:
                    break
                per = elapsed / done
                batch = max(1, min(64, int((self.budget - elapsed) / max(per, 1e-6))))
            self.last_samples = done
        return int(cards[int(np.argmax(totals))])


class CheatingPolicy(SearchPolicy):
    """L4 (evaluation only, CHEATING): the search on the true deal, an upper bound.

    Not a legal Policy: before use, :meth:`bind` it to a callable returning the game's true
    state row (``int64[STATE_SIZE]``, absolute seats). It plays each legal card against the
    real hands with playouts that play ``noise`` per mille random cards, averaged over
    ``samples`` (or the ``budget``); bids and other phases are the heuristic's, from its own
    observation."""

    name = "cheat"

    def __init__(self, *args, **kwargs) -> None:
        super().__init__(*args, **kwargs)
        self._getter: Callable[[], np.ndarray] | None = None

    def bind(self, state_getter: Callable[[], np.ndarray]) -> CheatingPolicy:
        """Give the policy access to the true state (returns ``self``)."""
        self._getter = state_getter
        return self

    def play(self, v: SeatView, legal: list[int]) -> int:
        if self._getter is None:
            raise RuntimeError(
                "CheatingPolicy needs the true state: call .bind(state_getter) first "
                "(it is an evaluation-only upper bound, not a legal policy)"
            )
        if len(legal) == 1:
            return legal[0]
        state = np.asarray(self._getter(), dtype=np.int64).copy()
        seat = int(state[L.TURN])
        e = np.zeros(5, dtype=np.int64)
        return self._search(state, seat, legal, 0, e, e, e)


__all__ = ["CheatingPolicy", "SearchPolicy", "decode", "playout_card", "rollout"]
