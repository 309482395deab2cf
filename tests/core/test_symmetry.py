"""Suit relabellings (spades_env.core.symmetry): the rules never tell clubs, diamonds and
hearts apart, and the column maps relabel an observation and its actions exactly as relabelling
the position and encoding it again would."""

from __future__ import annotations

import numpy as np
import pytest

from spades_env.core import engine as E
from spades_env.core import layout as L
from spades_env.core.actions import NUM_ACTIONS
from spades_env.core.cards import card_from_str
from spades_env.core.game import SpadesGame
from spades_env.core.observation import OBS_SIZE, encode_observation
from spades_env.core.rules import load_rules, preset_names
from spades_env.core.symmetry import (
    SIDE_SUIT_PERMUTATIONS,
    action_columns,
    card_map,
    check_permutation,
    observation_columns,
    relabel_action,
)

CARD_MASK_FIELDS = (L.HANDS, L.PLAYED, L.PASSED, L.RECEIVED, L.DISCARDED)
CARD_ID_FIELDS = ((L.TRICK_CARDS, 4), (L.LAST_TRICK, 4), (L.DECK, 52))


def relabel_state(state: np.ndarray, perm: tuple[int, ...]) -> np.ndarray:
    """The state row with every card, card set and shown-out suit relabelled (written here,
    field by field from the layout, independently of the module under test's column maps)."""
    new = card_map(perm)
    out = state.copy()
    for base in CARD_MASK_FIELDS:
        for k in range(4):
            m = int(state[base + k])
            out[base + k] = sum(1 << int(new[c]) for c in range(52) if m >> c & 1)
    for base, size in CARD_ID_FIELDS:
        for k in range(size):
            c = int(state[base + k])
            out[base + k] = c if c < 0 else int(new[c])
    for k in range(4):
        bits = int(state[L.SHOWN_OUT + k])
        out[L.SHOWN_OUT + k] = sum(1 << perm[s] for s in range(4) if bits >> s & 1)
    return out


def observation(state: np.ndarray, params: np.ndarray, seat: int) -> np.ndarray:
    buf = np.zeros(OBS_SIZE, dtype=np.float32)
    encode_observation(state, params, seat, buf)
    return buf


def mask_of(state: np.ndarray, params: np.ndarray) -> np.ndarray:
    out = np.zeros(NUM_ACTIONS, dtype=np.int8)
    E.legal_mask(state, params, out)
    return out


def test_the_six_relabellings_keep_spades_and_start_with_the_identity():
    assert len(set(SIDE_SUIT_PERMUTATIONS)) == 6
    assert SIDE_SUIT_PERMUTATIONS[0] == (0, 1, 2, 3)
    assert all(p[3] == 3 for p in SIDE_SUIT_PERMUTATIONS)


def test_card_map_by_hand():
    hearts_as_clubs = (1, 2, 0, 3)  # clubs -> diamonds, diamonds -> hearts, hearts -> clubs
    new = card_map(hearts_as_clubs)
    assert new[card_from_str("AH")] == card_from_str("AC")
    assert new[card_from_str("2C")] == card_from_str("2D")
    assert new[card_from_str("TD")] == card_from_str("TH")
    assert new[card_from_str("QS")] == card_from_str("QS")
    assert relabel_action(card_from_str("KH"), hearts_as_clubs) == card_from_str("KC")
    assert relabel_action(52, hearts_as_clubs) == 52  # Nil stays Nil


@pytest.mark.parametrize("perm", [(0, 1, 3, 2), (3, 1, 2, 0), (0, 0, 1, 3), (0, 1, 2), (0, 1, 2, 3, 4)])
def test_a_relabelling_that_moves_spades_or_is_not_one_is_refused(perm):
    with pytest.raises(ValueError, match="keep spades"):
        check_permutation(perm)
    with pytest.raises(ValueError):
        observation_columns(perm)


@pytest.mark.parametrize("rules", preset_names())
def test_relabelled_play_is_the_same_game(rules):
    """Along random games: the relabelled state's observation and legal actions are the
    original's through the column maps, and playing the relabelled action from the relabelled
    state gives the relabelled next state (within a hand: a new deal draws fresh cards)."""
    game = SpadesGame(load_rules(rules), seed=11)
    params = game.params
    rng = np.random.default_rng(3)
    checked = 0
    while not game.is_over and checked < 600:
        if game.is_hand_over:
            game.next_hand()
            continue
        perm = SIDE_SUIT_PERMUTATIONS[int(rng.integers(1, 6))]
        state = game.state.copy()
        twin = relabel_state(state, perm)
        seat = game.current_player
        obs, mask = observation(state, params, seat), mask_of(state, params)
        np.testing.assert_array_equal(observation(twin, params, seat), obs[observation_columns(perm)])
        np.testing.assert_array_equal(mask_of(twin, params), mask[action_columns(perm)])
        action = int(rng.choice(np.flatnonzero(mask)))
        game.apply(action)
        if game.is_hand_over:
            continue
        assert E.apply_action(twin, params, relabel_action(action, perm)) == E.OK
        np.testing.assert_array_equal(twin, relabel_state(game.state, perm))
        checked += 1
    assert checked >= 300


def test_the_column_maps_are_permutations_and_the_identity_changes_nothing():
    for perm in SIDE_SUIT_PERMUTATIONS:
        assert sorted(observation_columns(perm)) == list(range(OBS_SIZE))
        assert sorted(action_columns(perm)) == list(range(NUM_ACTIONS))
    np.testing.assert_array_equal(observation_columns((0, 1, 2, 3)), np.arange(OBS_SIZE))
