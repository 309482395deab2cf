"""No leak: a seat's observation depends on nothing it may not know (DESIGN.md).

At many points of random seeded games, for each observing seat, the cards unseen by that seat
are re-dealt among their holders with the same counts, by editing a copy of the state row
(hands, the two-player discards, the deck / stock, and the other partnership's exchange). What
is public stays: cards played, the seat's own hand (unless it is hidden during the Blind Nil
decision, when it is unseen too), the cards the seat passed to its partner (still known to it),
and in the two-player draw the card shown to it. The seat's observation, and its action mask
when it is to act, must be byte-identical.
"""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from spades_env import SpadesGame, load_rules
from spades_env.core import layout as L
from spades_env.core.engine import legal_mask
from spades_env.core.observation import OBS_SIZE, SLICES, encode_observation, hand_hidden

RULES = {
    "tournament": load_rules({"max_hands": 3}),
    "deficit": load_rules({"max_hands": 4, "blind_nil_min_deficit": 100}),
    "two_player": load_rules("two_player").replace(max_hands=2),
}
ALL_CARDS = (1 << 52) - 1


def bits(mask: int) -> list[int]:
    return [c for c in range(52) if (mask >> c) & 1]


def unseen_cards(state: np.ndarray, params: np.ndarray, seat: int) -> int:
    """Mask of the cards whose whereabouts ``seat`` does not know."""
    n = int(state[L.NUM_SEATS])
    unseen = 0
    if n == 4:
        partner = (seat + 2) % 4
        for s in range(4):
            if s == seat:
                continue
            held = int(state[L.HANDS + s])
            if s == partner:
                held &= ~int(state[L.PASSED + seat])  # what I passed my partner, I know it holds
            unseen |= held
    else:
        opp = 1 - seat
        unseen = int(state[L.HANDS + opp]) | int(state[L.DISCARDED + opp])
        pos = int(state[L.STOCK_POS])
        for i in range(pos, 52):  # the undrawn stock
            unseen |= 1 << int(state[L.DECK + i])
        if int(state[L.PHASE]) == L.PH_DRAW and int(state[L.TURN]) == seat:
            unseen &= ~(1 << int(state[L.DECK + pos]))  # the card shown to me
    if hand_hidden(state, params, seat):
        unseen |= int(state[L.HANDS + seat])
    return unseen


def redeal(state: np.ndarray, unseen: int, rng: np.random.Generator) -> np.ndarray:
    """A copy of ``state`` with the ``unseen`` cards permuted among their places."""
    cards = bits(unseen)
    perm = dict(zip(cards, (int(c) for c in rng.permutation(cards)), strict=True))

    def remap(mask: int) -> int:
        out = mask & ~unseen
        for c in bits(mask & unseen):
            out |= 1 << perm[c]
        return out

    new = state.copy()
    for off in (L.HANDS, L.DISCARDED, L.PASSED, L.RECEIVED):
        for s in range(4):
            new[off + s] = remap(int(state[off + s]))
    for i in range(52):
        c = int(state[L.DECK + i])
        if c in perm:
            new[L.DECK + i] = perm[c]
    return new


def view(state: np.ndarray, params: np.ndarray, seat: int) -> bytes:
    """The seat's observation bytes, plus its legal mask when it is to act."""
    obs = np.empty(OBS_SIZE, dtype=np.float32)
    encode_observation(state, params, seat, obs)
    out = obs.tobytes()
    if int(state[L.TURN]) == seat:
        mask = np.zeros(70, dtype=np.int8)
        legal_mask(state, params, mask)
        out += mask.tobytes()
    return out


def check_consistent(state: np.ndarray) -> None:
    """The re-dealt state is still a deal: every card in exactly one place."""
    n = int(state[L.NUM_SEATS])
    places = [int(state[L.HANDS + s]) for s in range(n)] + [int(state[L.PLAYED + s]) for s in range(n)]
    places += [int(state[L.DISCARDED + s]) for s in range(n)]
    if n == 2:
        pos = int(state[L.STOCK_POS])
        places += [1 << int(state[L.DECK + i]) for i in range(pos, 52)]
    union = 0
    for m in places:
        assert union & m == 0
        union |= m
    assert union == ALL_CARDS
    assert sorted(int(c) for c in state[L.DECK : L.DECK + 52]) == list(range(52))


def game_states(rules, seed: int, max_states: int | None = None):
    """Every state (copies) of a random seeded game, with the facade's params."""
    g = SpadesGame(rules, seed=seed)
    rng = np.random.default_rng(seed)
    count = 0
    while True:
        if g.is_over:
            return
        if g.is_hand_over:
            g.next_hand()
        yield g.state.copy(), g.params
        count += 1
        if max_states is not None and count >= max_states:
            return
        acts = g.legal_actions()
        g.apply(acts[rng.integers(len(acts))])


def check_no_leak(state, params, rng, tries: int = 1) -> int:
    """Re-deal for every seat; returns how many re-deals changed the state."""
    changed = 0
    for seat in range(int(state[L.NUM_SEATS])):
        base = view(state, params, seat)
        unseen = unseen_cards(state, params, seat)
        for _ in range(tries):
            new = redeal(state, unseen, rng)
            check_consistent(new)
            changed += new.tobytes() != state.tobytes()
            assert view(new, params, seat) == base, (
                f"seat {seat} sees a re-deal of unseen cards, phase {L.PHASE_NAMES[int(state[L.PHASE])]}"
            )
    return changed


@pytest.mark.parametrize("name", list(RULES))
def test_redeal_unseen_cards_leaves_observation_identical(name):
    rules = RULES[name]
    rng = np.random.default_rng(123)
    phases, changed, points = set(), 0, 0
    for seed in range(6):
        for state, params in game_states(rules, seed):
            phases.add(int(state[L.PHASE]))
            changed += check_no_leak(state, params, rng)
            points += 1
    expected = {L.PH_BLIND, L.PH_BID, L.PH_PLAY}
    expected |= {L.PH_DRAW} if name == "two_player" else {L.PH_EXCHANGE}
    assert expected <= phases
    assert points > 300 and changed > 0.8 * points


def test_own_hand_hidden_during_blind_decision_is_redealt():
    """While a seat decides Blind Nil its own hand is among the unseen cards."""
    rng = np.random.default_rng(0)
    hits = 0
    for state, params in game_states(RULES["tournament"], 1, max_states=400):
        seat = int(state[L.TURN])
        if int(state[L.PHASE]) == L.PH_BLIND:
            unseen = unseen_cards(state, params, seat)
            assert int(state[L.HANDS + seat]) & ~unseen == 0
            check_no_leak(state, params, rng, tries=3)
            hits += 1
    assert hits > 0


def test_redeal_detects_a_leak():
    """The check is not vacuous: moving a card the seat can see changes its observation."""
    rng = np.random.default_rng(1)
    detected = 0
    for state, params in game_states(RULES["tournament"], 2, max_states=200):
        if int(state[L.PHASE]) != L.PH_PLAY:
            continue
        seat = int(state[L.TURN])
        own = int(state[L.HANDS + seat])
        unseen = unseen_cards(state, params, seat)
        if own == 0 or unseen == 0:
            continue
        mine, theirs = bits(own)[0], int(rng.choice(bits(unseen)))
        holder = next(s for s in range(4) if (int(state[L.HANDS + s]) >> theirs) & 1)
        new = state.copy()
        new[L.HANDS + seat] = own ^ (1 << mine) ^ (1 << theirs)
        new[L.HANDS + holder] = int(state[L.HANDS + holder]) ^ (1 << theirs) ^ (1 << mine)
        assert view(new, params, seat) != view(state, params, seat)
        detected += 1
    assert detected > 20


@pytest.mark.parametrize("opponent", [1, 3])
def test_partner_hand_never_appears(opponent):
    """Seat 0's observation never changes when seat 2's unseen cards are swapped with an
    opponent's cards; and it never holds seat 2's cards in any slice."""
    rng = np.random.default_rng(opponent)
    swaps = 0
    for seed in range(2):
        for state, params in game_states(RULES["tournament"], seed):
            partner_unseen = int(state[L.HANDS + 2]) & ~int(state[L.PASSED + 0])
            opp = int(state[L.HANDS + opponent])
            k = min(bin(partner_unseen).count("1"), bin(opp).count("1"))
            if k == 0:
                continue
            give = rng.choice(bits(partner_unseen), size=k, replace=False)
            take = rng.choice(bits(opp), size=k, replace=False)
            g_mask = int(sum(1 << int(c) for c in give))
            t_mask = int(sum(1 << int(c) for c in take))
            new = state.copy()
            new[L.HANDS + 2] = int(state[L.HANDS + 2]) ^ g_mask ^ t_mask
            new[L.HANDS + opponent] = opp ^ t_mask ^ g_mask
            assert view(new, params, 0) == view(state, params, 0)
            swaps += 1
            # a card in the partner's hand is in none of seat 0's per-card slices
            obs = np.empty(OBS_SIZE, dtype=np.float32)
            encode_observation(state, params, 0, obs)
            for name in ("hand", "passed", "draw_shown", "discarded"):
                assert not obs[SLICES[name]][bits(partner_unseen)].any(), name
            for name in ("played", "trick"):
                per_seat = obs[SLICES[name]].reshape(4, 52)
                assert not per_seat[:, bits(partner_unseen)].any(), name
    assert swaps > 100


@settings(max_examples=25, deadline=None)
@given(seed=st.integers(0, 2**40), name=st.sampled_from(sorted(RULES)))
def test_no_leak_property(seed, name):
    rng = np.random.default_rng(seed)
    for i, (state, params) in enumerate(game_states(RULES[name], seed, max_states=150)):
        if i % 3 == 0:
            check_no_leak(state, params, rng)
