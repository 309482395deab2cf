"""L3's compiled playouts against a plain reference: the playout policy's card, and a whole
rollout driven by ``play_card`` (the unchecked fast path) against one driven by
``apply_action``, on states from random deals and bids (Nils and Blind Nils included), under
several rule settings and in the two-player game."""

from __future__ import annotations

import numpy as np
import pytest

from spades_env.core import layout as L
from spades_env.core.actions import ACTION_BLIND_NIL, ACTION_SEE_CARDS, BID_BASE
from spades_env.core.engine import OK, apply_action, card_beats, legal_cards, trick_winner
from spades_env.core.game import SpadesGame
from spades_env.core.rng import below
from spades_env.core.scoring import tricks_needed
from spades_env.policies.bots.search import playout_card, rollout

SPADE = 3


def _key(c: int) -> int:
    return (c // 13 == SPADE) * 100 + c % 13


def _wins(state: np.ndarray, seat: int, card: int) -> bool:
    """Play ``card`` into a copy of the trick and ask the core who wins it."""
    if state[L.TRICK_SIZE] == 0:
        return True
    s = state.copy()
    s[L.TRICK_CARDS + seat] = card
    s[L.TRICK_SIZE] += 1
    return int(trick_winner(s)) == seat


def _higher_held(state: np.ndarray, card: int, exclude: int) -> bool:
    s, r = divmod(card, 13)
    return any(
        (int(state[L.HANDS + i]) >> (13 * s + q)) & 1
        for i in range(int(state[L.NUM_SEATS]))
        if i != exclude
        for q in range(r + 1, 13)
    )


def _nil_alive(state: np.ndarray, seat: int) -> bool:
    return int(state[L.BIDS + seat]) in (0, L.BID_BLIND_NIL) and state[L.TRICKS_WON + seat] == 0


def _need(state: np.ndarray, params: np.ndarray, team: int) -> int:
    return int(tricks_needed(state[L.BIDS : L.BIDS + 4], state[L.TRICKS_WON : L.TRICKS_WON + 4], team, state[L.NUM_SEATS], params))


def reference_playout_card(state: np.ndarray, params: np.ndarray) -> int:
    """The playout policy written out plainly (its first, straightforward form)."""
    seat = int(state[L.TURN])
    n = int(state[L.NUM_SEATS])
    legal = int(legal_cards(state, params))
    cards = [c for c in range(52) if (legal >> c) & 1]
    if len(cards) == 1:
        return cards[0]
    size = int(state[L.TRICK_SIZE])
    last = size == n - 1
    led = int(state[L.TRICK_CARDS + state[L.TRICK_LEADER]]) // 13 if size > 0 else -1
    partner = (seat + 2) % 4 if n == 4 else -1
    lo = min(cards, key=_key)  # min/max return the first of equal keys, as the kernel does
    hi = max(cards, key=_key)
    winning = [c for c in cards if _wins(state, seat, c)]
    losing = [c for c in cards if c not in winning]
    best_under = max(losing, key=_key) if losing else -1
    low_win = min(winning, key=_key) if winning else -1
    boss_wins = [c for c in winning if not _higher_held(state, c, seat)]
    low_boss_win = min(boss_wins, key=_key) if boss_wins else -1
    cur = int(trick_winner(state)) if size > 0 else -1
    if _nil_alive(state, seat):
        if size == 0:
            return lo
        if best_under >= 0:
            return best_under
        return hi if last else lo
    if partner >= 0 and _nil_alive(state, partner):
        if size == 0:
            return hi
        if state[L.TRICK_CARDS + partner] >= 0:
            if cur == partner and low_win >= 0:
                return low_win
        elif low_win >= 0:
            return hi if (hi // 13 == led or led < 0) and _wins(state, seat, hi) else low_win
    if size > 0 and cur >= 0 and cur % 2 != seat % 2 and _nil_alive(state, cur):
        if best_under >= 0:
            return best_under
    need = _need(state, params, seat % 2)
    if need > 0 or _need(state, params, 1 - seat % 2) > 0 and state[L.BAGS + seat % 2] < 7:
        if size == 0:
            boss = -1
            for c in cards:
                if not _higher_held(state, c, seat):
                    if boss < 0 or (c // 13 != SPADE and boss // 13 == SPADE):
                        boss = c
            return boss if boss >= 0 else lo
        if partner >= 0 and cur == partner:
            if last or not _higher_held(state, int(state[L.TRICK_CARDS + partner]), partner):
                return lo
        if low_win >= 0:
            if last:
                return low_win
            return low_boss_win if low_boss_win >= 0 else low_win
        return lo
    if size == 0:
        return lo
    if best_under >= 0:
        return best_under
    return hi if last else lo


def reference_rollout(state: np.ndarray, params: np.ndarray, rng: np.ndarray, eps: int) -> None:
    """:func:`rollout` through ``apply_action`` (every card checked), the same random draws."""
    while state[L.PHASE] == L.PH_PLAY:
        if eps > 0 and below(rng, 0, 1000) < eps:
            legal = [c for c in range(52) if (int(legal_cards(state, params)) >> c) & 1]
            c = legal[int(below(rng, 0, len(legal)))]
        else:
            c = reference_playout_card(state, params)
        assert apply_action(state, params, c) == OK


def _play_states(rules, seed: int, rng: np.random.Generator):
    """The states of one hand with random bids (a Nil or a Blind Nil now and then) and random
    card play, one per card played."""
    g = SpadesGame(rules, seed=seed)
    states = []
    while g.phase not in ("hand_end", "game_end", "match_end"):
        legal = g.legal_actions()
        if g.phase == "play":
            states.append(g.state.copy())
            a = int(rng.choice(legal))
        elif ACTION_BLIND_NIL in legal:
            a = ACTION_BLIND_NIL if rng.random() < 0.2 else ACTION_SEE_CARDS
        elif BID_BASE in legal:
            bids = [b for b in legal if BID_BASE <= b <= BID_BASE + 13]
            a = BID_BASE if rng.random() < 0.2 else int(rng.choice(bids[1:6]))
        else:
            a = int(rng.choice(legal))
        g.apply(a)
    return g.params, states


RULES = [
    "tournament",
    "house",
    {"blind_nil": False, "blind_nil_exchange": 0, "must_break_spades": False},
    {"failed_nil_counts_toward_contract": True, "bag_limit": 7},
    "two_player",
]


@pytest.mark.parametrize("rules", RULES, ids=["tournament", "house", "no_blind_no_break", "nil_counts", "two_player"])
def test_the_compiled_playout_card_is_the_reference_policy(rules):
    rng = np.random.default_rng(11)
    checked = 0
    for seed in range(12):
        params, states = _play_states(rules, seed, rng)
        for s in states:
            assert int(playout_card(s.copy(), params)) == reference_playout_card(s, params)
            checked += 1
    assert checked >= 12 * 26


@pytest.mark.parametrize("rules", RULES, ids=["tournament", "house", "no_blind_no_break", "nil_counts", "two_player"])
@pytest.mark.parametrize("eps", [0, 100, 1000])
def test_a_rollout_through_play_card_ends_as_one_through_apply_action(rules, eps):
    """Same final state (tricks, scores, bags, hand margin) and the same random stream."""
    rng = np.random.default_rng(5)
    for seed in range(4):
        params, states = _play_states(rules, 100 + seed, rng)
        for s in states[:: max(1, len(states) // 6)]:
            fast, slow = s.copy(), s.copy()
            r1 = np.array([seed * 7919 + 1], dtype=np.int64)
            r2 = r1.copy()
            assert rollout(fast, params, r1, eps)
            reference_rollout(slow, params, r2, eps)
            assert r1[0] == r2[0]
            for field in (L.TRICKS_WON, L.SCORES, L.BAGS, L.HAND_DELTA):
                width = 4 if field == L.TRICKS_WON else 2
                assert np.array_equal(fast[field : field + width], slow[field : field + width])
            assert fast[L.PHASE] == slow[L.PHASE] and fast[L.HANDS : L.HANDS + 4].sum() == 0


def test_card_beats_is_trick_winners_comparison():
    """A spade beats any other suit, a higher card of the same suit wins, an off-suit card
    never does, and anything beats an empty trick."""
    c = {name: 13 * s + r for s, suit in enumerate("CDHS") for r, rank in enumerate("23456789TJQKA") for name in [rank + suit]}
    assert card_beats(c["2S"], c["AH"]) and not card_beats(c["AH"], c["2S"])
    assert card_beats(c["KD"], c["QD"]) and not card_beats(c["QD"], c["KD"])
    assert not card_beats(c["AC"], c["2D"])
    assert card_beats(c["2C"], -1)
