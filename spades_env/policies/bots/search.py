"""L3 determinized search (PIMC) and L4, the same search on the true deal (cheating).

For a card to play, :class:`SearchPolicy` samples deals of the unseen cards consistent with
everything its seat has seen: the cards each seat has played (so how many it still holds),
the suits it has shown out of (the observation's ``shown_out``), and the cards it
passed to its partner in the Blind Nil exchange. For each legal card it plays the card and then
the rest of the hand with a fast compiled playout policy, driving the core engine
(``legal_cards``, ``trick_winner``, ``card_beats``, and ``play_card``: the cards come from
``legal_cards``, so the playouts skip ``apply_action``'s checks) on a state row; the hand is
scored by the core, and the card with the best mean ``HAND_DELTA`` margin (own team minus other team: Nil,
sets and bags included) is played. All legal cards are judged on the same sampled deals.
The Blind Nil choice and the exchange are searched too, by sampling: for Blind Nil, deals of
all 52 cards (nothing of the hand is known yet) each played out twice by compiled L2 seats
(:func:`~spades_env.policies.bots.blind_sim.play_hand_l2`), declaring and seeing, judged by the chance
of winning the game afterwards; for each card to pass, and for each bid near L2's (and Nil),
deals of the unseen cards consistent with what the seat knows, played out the same way and
judged by the hand margin. The two-player draw is L2's.

``budget`` (seconds per decision) and ``samples`` (deals per decision) set the effort: with
``samples`` alone the search is deterministic given the seed; with ``budget`` it runs sample
batches until the time is spent (at most ``max_samples``). ``noise`` (per mille, default 100)
makes that share of playout cards random: averaging noisy playouts judges a card better than
one fixed playout policy does (measured: +27 against +23 points per hand over L2).
``card_search=0`` keeps the searched Blind Nil choice, exchange and bid and plays L2's cards
(what the bidding alone is worth: docs/baselines.md). ``bid_infer=1`` reads the bids as
evidence about the hands: a seat that bid Nil having seen its cards is dealt the cards that would
win it a trick (``NIL_AVOID``: spades from the jack up, side aces and kings) at 1 /
``AVOID_ODDS`` the odds of another card. It is off by default: L3, the baseline, deals the unseen
cards uniformly (subject to the voids and the exchange).

:class:`CheatingPolicy` is **not a legal Policy**: it reads the true state row from a callable
given to :meth:`CheatingPolicy.bind`, and exists only as an upper bound in evaluations.
"""

from __future__ import annotations

import time
from collections.abc import Callable

import numpy as np

from spades_env.core import layout as L
from spades_env.core.actions import ACTION_BLIND_NIL, ACTION_SEE_CARDS, BID_BASE, NUM_ACTIONS
from spades_env.core.cards import card_from_str, mask_from_cards
from spades_env.core.engine import (
    _after_bidding,
    apply_action,
    card_beats,
    legal_cards,
    play_card,
    trick_winner,
)
from spades_env.core.jit import ctz, inline_jit, jit
from spades_env.core.observation import SeatView, decode, decode_into, popcount
from spades_env.core.rng import below, shuffle_into
from spades_env.core.rules import RulesConfig
from spades_env.core.scoring import tricks_needed
from spades_env.policies.bots.base import ScriptedBot
from spades_env.policies.bots.blind_sim import OTHERS_L2, play_hand_l2
from spades_env.policies.bots.blind_value import MODE_EV, blind_model, model_hand, row_config, win_chance
from spades_env.policies.bots.l2 import l2_act_one
from spades_env.policies.bots.l2 import popc as popcount_jit

_SPADE = 3


# ---- compiled playout policy ------------------------------------------------------------
@inline_jit
def _key(card):
    """The playout policy's order of cards: spades above every other suit, then rank."""
    return (card // 13 == _SPADE) * 100 + card % 13


@inline_jit
def _above(card):
    """The cards of ``card``'s suit ranked above it (a bit mask)."""
    r = card % 13
    return (((1 << 13) - 1) & ~((1 << (r + 1)) - 1)) << (13 * (card // 13))


@inline_jit
def _higher_held(state, card, exclude_seat):
    """Whether a seat other than ``exclude_seat`` holds a higher card of ``card``'s suit."""
    m = _above(card)
    for i in range(state[L.NUM_SEATS]):
        if i != exclude_seat and (state[L.HANDS + i] & m) != 0:
            return True
    return False


@inline_jit
def _nil_alive(state, seat):
    b = state[L.BIDS + seat]
    return (b == 0 or b == L.BID_BLIND_NIL) and state[L.TRICKS_WON + seat] == 0


@inline_jit
def _need(state, params, team):
    """Tricks ``team`` still needs (the core's contract accounting)."""
    return tricks_needed(state[L.BIDS : L.BIDS + 4], state[L.TRICKS_WON : L.TRICKS_WON + 4], team, state[L.NUM_SEATS], params)


@inline_jit
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
    return _playout_choice(state, params, legal_cards(state, params))


@inline_jit
def _playout_choice(state, params, legal):
    """:func:`playout_card` given the seat's legal cards (a non-empty bit mask)."""
    seat = state[L.TURN]
    n = state[L.NUM_SEATS]
    if legal & (legal - 1) == 0:
        return ctz(legal)
    size = state[L.TRICK_SIZE]
    last = size == n - 1
    led = -1
    cur = -1
    best = -1  # the card winning the trick so far
    if size > 0:
        led = state[L.TRICK_CARDS + state[L.TRICK_LEADER]] // 13
        cur = trick_winner(state)
        best = state[L.TRICK_CARDS + cur]
    others = 0  # the cards the other seats hold
    for i in range(n):
        if i != seat:
            others |= state[L.HANDS + i]
    partner = (seat + 2) % 4 if n == 4 else -1
    # over the legal cards in ascending order (ties go to the first): the lowest and highest
    # by _key, the best non-winning card (highest), the lowest winning card and the lowest
    # winning card no other seat can beat
    lo = ctz(legal)
    hi = lo
    best_under = -1
    low_win = -1
    low_boss_win = -1
    m = legal
    while m != 0:
        c = ctz(m)
        m &= m - 1
        kc = _key(c)
        if kc < _key(lo):
            lo = c
        if kc > _key(hi):
            hi = c
        if card_beats(c, best):
            if low_win < 0 or kc < _key(low_win):
                low_win = c
            if others & _above(c) == 0:
                if low_boss_win < 0 or kc < _key(low_boss_win):
                    low_boss_win = c
        elif best_under < 0 or kc > _key(best_under):
            best_under = c
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
            return hi if (hi // 13 == led or led < 0) and card_beats(hi, best) else low_win
    # 3. an opponent's Nil that is winning this trick: stay under it
    if size > 0 and cur >= 0 and cur % 2 != seat % 2 and _nil_alive(state, cur):
        if best_under >= 0:
            return best_under
    need = _need(state, params, seat % 2)
    if need > 0 or _need(state, params, 1 - seat % 2) > 0 and state[L.BAGS + seat % 2] < 7:
        if size == 0:
            # cash a boss card, else lead low
            boss = -1
            b = legal
            while b != 0:
                c = ctz(b)
                b &= b - 1
                if others & _above(c) == 0:
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
        legal = legal_cards(state, params)
        if legal == 0:
            return False  # cannot happen with a consistent deal; never loop forever
        if eps > 0 and below(rng, 0, 1000) < eps:
            m = legal
            pick = below(rng, 0, popcount_jit(m))
            for _ in range(pick):
                m &= m - 1
            c = ctz(m)
        else:
            c = _playout_choice(state, params, legal)
        play_card(state, params, state[L.TURN], c)
    return True


# ---- sampling deals -----------------------------------------------------------------------
# A seat that bid Nil is dealt each card of its ``avoid`` mask (cards that would likely win it a
# trick) at 1 / AVOID_ODDS the odds of another card: a bid is evidence about the hand.
AVOID_ODDS = 8


@jit
def sample_deal(base, pool, counts, fixed, voids, rng, n_seats, out_hands, avoid):
    """Deal the ``pool`` mask: seat ``s`` (1..3) gets ``counts[s]`` cards including the fixed
    ones, none of a suit in ``voids[s]``, each card of ``avoid[s]`` at 1 / ``AVOID_ODDS`` the
    odds (all zero: a uniform deal); seat 4 (two-player out-of-play cards) takes the rest.
    Returns False if the void constraints could not be met (then they are relaxed)."""
    cards = np.empty(52, dtype=np.int64)
    free = pool
    odds = 1
    for s in range(5):
        free &= ~fixed[s]
        if avoid[s] != 0:
            odds = AVOID_ODDS
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
                    total += cap[s] * (1 if (avoid[s] >> c) & 1 else odds)
            if total == 0:
                ok = False
                break
            r = below(rng, 0, total)
            for s in range(1, 5):
                if cap[s] > 0 and (relax or ((voids[s] >> suit) & 1) == 0):
                    wt = cap[s] * (1 if (avoid[s] >> c) & 1 else odds)
                    if r < wt:
                        out_hands[s] |= 1 << c
                        cap[s] -= 1
                        break
                    r -= wt
        if ok:
            return not relax
    return False


# The cards a Nil bidder rarely holds: spades from the jack up, and the side aces and kings.
NIL_AVOID = mask_from_cards(card_from_str(c) for c in "JS QS KS AS AC KC AD KD AH KH".split())


@jit
def search_values(
    base, params, seat, cards, n_cards, pool, counts, fixed, voids, rng, n_samples, totals, eps, model, l2_playout, avoid
):
    """Add, for each candidate card, the summed hand margin over ``n_samples`` sampled deals
    (``pool`` empty: the deal in ``base``; ``avoid``: per relative seat, cards dealt to it at
    reduced odds, see :func:`sample_deal`) into ``totals``; playouts are ``eps``-random, or
    played by L2 seats (``l2_playout``)."""
    work = np.empty_like(base)
    hands = np.zeros(5, dtype=np.int64)
    n = base[L.NUM_SEATS]
    team = seat % 2
    det = base.copy()
    for _ in range(n_samples):
        if pool != 0:
            sample_deal(base, pool, counts, fixed, voids, rng, n, hands, avoid)
            for s in range(1, n):
                det[L.HANDS + (seat + s) % n] = hands[s]
        for i in range(n_cards):
            work[:] = det
            apply_action(work, params, cards[i])
            if l2_playout:
                play_hand_l2(work, params, model, -1, -1, OTHERS_L2)
            else:
                rollout(work, params, rng, eps)
            totals[i] += work[L.HAND_DELTA + team] - work[L.HAND_DELTA + 1 - team]


@jit
def blind_search(base, params, model, n_samples, rng, values):
    """Add into ``values[0]`` (Blind Nil) and ``values[1]`` (see the cards) the chance of
    winning the game after this hand, over ``n_samples`` random deals of every card, for seat 0
    of the decoded row ``base`` (in its Blind Nil choice)."""
    n = base[L.NUM_SEATS]
    det = base.copy()
    work = base.copy()
    gain, spread = model_hand(model, params, row_config(base, params))
    for s in range(4):
        b = base[L.BIDS + s]
        det[L.BLIND_STATUS + s] = L.BLIND_NIL if b == L.BID_BLIND_NIL else (L.BLIND_SAW if b >= 0 else 0)
    det[L.BLIND_STATUS] = L.BLIND_UNDECIDED
    for _ in range(n_samples):
        shuffle_into(rng, 0, det[L.DECK : L.DECK + 52])
        for s in range(4):
            det[L.HANDS + s] = 0
        if n == 4:
            for i in range(52):
                det[L.HANDS + i % 4] |= 1 << det[L.DECK + i]
        det[L.STOCK_POS] = 0
        for opt in range(2):
            work[:] = det
            a = ACTION_BLIND_NIL if opt == 0 else ACTION_SEE_CARDS
            if play_hand_l2(work, params, model, 0, a, OTHERS_L2):
                values[opt] += win_chance(work[L.SCORES], work[L.SCORES + 1], params, gain, spread)


@jit
def exchange_state(base, params, det):
    """Rebuild in ``det`` the Blind Nil exchange of the decoded row ``base`` at seat 0's turn
    to pass (the core's order of the exchange, the steps before seat 0's complete, seat 0's
    with the cards it passed so far). False if the observation does not make one."""
    n = base[L.NUM_SEATS]
    k = params[L.P_EXCHANGE_CARDS]
    if n != 4 or k <= 0:
        return False
    det[:] = base
    _after_bidding(det, params)  # the core's exchange order: pairs (giver, then its partner)
    if det[L.PHASE] != L.PH_EXCHANGE:
        return False
    step = -1
    for j in range(4):
        if det[L.EXCH_SEQ + j] == 0:
            step = j
    # the steps before ours are complete; ours has passed what we passed so far
    if step < 0 or popcount_jit(base[L.PASSED]) >= k:
        return False
    det[L.EXCH_STEP] = step
    det[L.EXCH_LEFT] = k - popcount_jit(base[L.PASSED])
    det[L.TURN] = 0
    return True


@jit
def exchange_search(base, params, model, cards, n_cards, n_samples, rng, totals):
    """Add into ``totals[i]`` the summed hand margin of passing ``cards[i]`` now, over deals of
    the unseen cards consistent with the exchange so far (seat 0 of the decoded row ``base``
    is to pass). False if the exchange cannot be rebuilt from the observation: the caller then
    uses L2's choice."""
    n = base[L.NUM_SEATS]
    det = base.copy()
    if not exchange_state(base, params, det):
        return False
    pool = ((1 << 52) - 1) & ~base[L.HANDS]
    counts = np.zeros(5, dtype=np.int64)
    fixed = np.zeros(5, dtype=np.int64)
    voids = np.zeros(5, dtype=np.int64)
    hands = np.zeros(5, dtype=np.int64)
    uniform = np.zeros(5, dtype=np.int64)  # no card dealt at reduced odds
    counts[1] = 13
    counts[3] = 13
    counts[2] = 13 + popcount_jit(base[L.PASSED]) - popcount_jit(base[L.RECEIVED])
    fixed[2] = base[L.PASSED]
    work = det.copy()
    team = 0
    for _ in range(n_samples):
        sample_deal(det, pool, counts, fixed, voids, rng, n, hands, uniform)
        for s in range(1, 4):
            det[L.HANDS + s] = hands[s]
        for i in range(n_cards):
            work[:] = det
            if apply_action(work, params, cards[i]) != 0:
                continue
            if play_hand_l2(work, params, model, -1, -1, OTHERS_L2):
                totals[i] += work[L.HAND_DELTA + team] - work[L.HAND_DELTA + 1 - team]
    return True


@jit
def bid_search(base, params, model, bids, n_bids, n_samples, rng, totals):
    """Add into ``totals[i]`` the summed hand margin of bidding ``bids[i]`` now, over deals of
    the unseen cards (the other seats' hands; in the two-player game the cards out of play
    too) played out by L2 seats (seat 0 of the decoded row ``base`` is to bid)."""
    n = base[L.NUM_SEATS]
    pool = ((1 << 52) - 1) & ~base[L.HANDS] & ~base[L.DISCARDED]
    counts = np.zeros(5, dtype=np.int64)
    fixed = np.zeros(5, dtype=np.int64)
    voids = np.zeros(5, dtype=np.int64)
    hands = np.zeros(5, dtype=np.int64)
    uniform = np.zeros(5, dtype=np.int64)  # no card dealt at reduced odds
    for s in range(1, n):
        counts[s] = 13
    if n == 2:
        counts[4] = popcount_jit(pool) - 13
    det = base.copy()
    for s in range(4):
        b = base[L.BIDS + s]
        det[L.BLIND_STATUS + s] = L.BLIND_NIL if b == L.BID_BLIND_NIL else (L.BLIND_SAW if b >= 0 else 0)
    det[L.BLIND_STATUS] = L.BLIND_SAW
    work = det.copy()
    for _ in range(n_samples):
        sample_deal(det, pool, counts, fixed, voids, rng, n, hands, uniform)
        for s in range(1, n):
            det[L.HANDS + s] = hands[s]
        for i in range(n_bids):
            work[:] = det
            if apply_action(work, params, BID_BASE + bids[i]) != 0:
                continue
            if play_hand_l2(work, params, model, -1, -1, OTHERS_L2):
                totals[i] += work[L.HAND_DELTA] - work[L.HAND_DELTA + 1]


# ---- policies ------------------------------------------------------------------------------
class SearchPolicy(ScriptedBot):
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
        blind_samples: int = 48,
        exchange_samples: int = 12,
        playout_l2: int = 0,
        bid_samples: int = 24,
        card_search: int = 1,
        bid_infer: int = 0,
    ) -> None:
        super().__init__(rules, seed=seed)
        if bid_infer not in (0, 1):
            raise ValueError(
                f"SearchPolicy: bid_infer is 0 (uniform deals) or 1 (a Nil bidder rarely holds high cards), got {bid_infer}"
            )
        self.bid_infer = bool(bid_infer)
        if blind_samples <= 0 or exchange_samples <= 0 or bid_samples <= 0:
            raise ValueError(
                f"SearchPolicy: blind_samples, exchange_samples and bid_samples must be positive, got "
                f"{blind_samples}, {exchange_samples} and {bid_samples}"
            )
        self.bid_samples = int(bid_samples)
        self.card_search = bool(card_search)
        self.playout_l2 = bool(playout_l2)
        self.blind_samples = int(blind_samples)
        self.exchange_samples = int(exchange_samples)
        self._obs: np.ndarray | None = None
        self._mask: np.ndarray | None = None
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
        self.last_values = np.full(NUM_ACTIONS, np.nan, dtype=np.float32)
        """The last decision's searched actions' mean hand margins (points, own team minus
        the other; NaN where an action was not searched: the Blind Nil choice, forced moves,
        bids outside the candidates, L2's own choices). BC's soft targets read them."""
        if not 0 <= noise <= 1000:
            raise ValueError(
                f"SearchPolicy: noise is per mille of random playout cards, 0..1000, got {noise}"
            )
        self.eps = int(noise)  # averaging noisy playouts beats one deterministic playout policy

    def act(self, observation: np.ndarray, action_mask: np.ndarray) -> int:
        self._obs = np.ascontiguousarray(observation, dtype=np.float32)
        self._mask = np.ascontiguousarray(action_mask, dtype=np.int8)
        self.last_values = np.full(NUM_ACTIONS, np.nan, dtype=np.float32)
        return super().act(observation, action_mask)

    def _record(self, actions: np.ndarray, totals: np.ndarray, samples: int) -> None:
        """Keep the searched actions' mean hand margins (``last_values``)."""
        self.last_values[np.asarray(actions, dtype=np.int64)] = totals / max(samples, 1)

    def _l2(self) -> int:
        return int(l2_act_one(self._obs, self._mask, MODE_EV, blind_model()))

    def _decoded(self) -> tuple[np.ndarray, np.ndarray]:
        row = np.zeros(L.STATE_SIZE, dtype=np.int64)
        params = np.zeros(L.PARAMS_SIZE, dtype=np.int64)
        decode_into(self._obs, row, params)
        return row, params

    def _seed_rng(self) -> None:
        self._rng[0] = int(self.rng.integers(1, 2**47))

    def blind(self, v: SeatView) -> int:
        """Blind Nil or not, by sampled deals played out both ways (see the module docstring)."""
        if v.num_seats == 4 and v.bids[2] in (0, L.BID_BLIND_NIL):
            return ACTION_SEE_CARDS
        row, params = self._decoded()
        values = np.zeros(2, dtype=np.float64)
        self._seed_rng()
        blind_search(row, params, blind_model(), self.blind_samples, self._rng, values)
        return ACTION_BLIND_NIL if values[0] > values[1] else ACTION_SEE_CARDS

    def bid(self, v: SeatView) -> int:
        """The bid, by sampled deals played out by L2 seats: L2's bid, one or two tricks less,
        one more, and Nil (ties go to L2's bid)."""
        l2 = self._l2() - BID_BASE
        cands = sorted({b for b in (l2 - 2, l2 - 1, l2, l2 + 1, 0) if 0 <= b <= 13})
        if v.num_seats == 4 and v.bids[2] in (0, L.BID_BLIND_NIL) and l2 != 0:
            cands = [b for b in cands if b != 0]  # no double Nil
        row, params = self._decoded()
        bids = np.asarray(cands, dtype=np.int64)
        totals = np.zeros(len(cands), dtype=np.float64)
        self._seed_rng()
        bid_search(row, params, blind_model(), bids, len(bids), self.bid_samples, self._rng, totals)
        self._record(BID_BASE + bids, totals, self.bid_samples)
        if totals[cands.index(l2)] >= totals.max():
            return l2
        return int(bids[int(np.argmax(totals))])

    def draw(self, v: SeatView) -> int:
        return self._l2()

    def exchange(self, v: SeatView, legal: list[int]) -> int:
        """The card to pass, by sampled deals played out by L2 seats (L2's choice where the
        exchange cannot be rebuilt)."""
        if len(legal) == 1:
            return legal[0]
        row, params = self._decoded()
        cards = np.asarray(legal, dtype=np.int64)
        totals = np.zeros(len(legal), dtype=np.float64)
        self._seed_rng()
        ok = exchange_search(row, params, blind_model(), cards, len(cards), self.exchange_samples, self._rng, totals)
        l2 = self._l2()
        if not ok:
            return l2
        self._record(cards, totals, self.exchange_samples)
        best = float(totals.max())
        if totals[legal.index(l2)] >= best:  # ties (the order of the passes) go to L2's pick
            return l2
        return int(cards[int(np.argmax(totals))])

    def play(self, v: SeatView, legal: list[int]) -> int:
        if len(legal) == 1:
            return legal[0]
        if not self.card_search:  # the searched bidding with L2's card play
            return self._l2()
        self.params = v.params
        base = v.state_row()
        base[L.TURN] = 0
        pool, counts, fixed, voids = self._constraints(v)
        return self._search(base, 0, legal, pool, counts, fixed, voids, self._avoid(v, pool))

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

    def _avoid(self, v: SeatView, pool: int) -> np.ndarray:
        """Per relative seat, the unseen cards its deals hold at reduced odds: with ``bid_infer``,
        a seat that bid Nil (seeing its cards) rarely holds :data:`NIL_AVOID`; else none."""
        avoid = np.zeros(5, dtype=np.int64)
        if self.bid_infer:
            for s in range(1, v.num_seats):
                if v.bids[s] == 0:
                    avoid[s] = NIL_AVOID & pool
        return avoid

    def _search(self, base, seat, legal, pool, counts, fixed, voids, avoid) -> int:
        cards = np.asarray(legal, dtype=np.int64)
        totals = np.zeros(len(legal), dtype=np.float64)
        self._seed_rng()
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
                blind_model(),
                self.playout_l2,
                avoid,
            )

        if pool == 0 and (eps == 0 or self.playout_l2):  # deterministic playouts on a known deal: one
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
        self._record(cards, totals, self.last_samples)
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
        return self._search(state, seat, legal, 0, e, e, e, e)


__all__ = ["CheatingPolicy", "SearchPolicy", "decode", "playout_card", "rollout"]
