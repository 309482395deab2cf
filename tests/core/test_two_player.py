"""The two-player variant (issue 6), hand-checked with preset stocks.

Seats P0, P1, each its own side. The non-dealer draws, bids and leads first. On a turn a player
sees the top card of the stock and keeps it (68; the next card is discarded) or discards it
(69; the next card is kept).
"""

from __future__ import annotations

import random

import numpy as np
import pytest

from helpers.game import (
    bid_hand,
    do,
    finish_hand,
    full_suit,
    legal_cards,
    obs_cards,
    play_random,
    state_field,
)
from spades_env.core import IllegalActionError, SpadesGame, load_rules
from spades_env.core import layout as L
from spades_env.core.actions import ACTION_BLIND_NIL, ACTION_DISCARD, ACTION_KEEP, ACTION_SEE_CARDS
from spades_env.core.cards import FULL_DECK, card_from_str

RULES = "two_player"


def stock_from_keeps(first_keeps, first_discards, second_keeps, second_discards) -> list[str]:
    """The stock that gives each player these cards when both always keep (68): round r shows
    the first drawer ``first_keeps[r]`` then ``first_discards[r]``, then the second drawer
    ``second_keeps[r]`` then ``second_discards[r]``."""
    stock = []
    for r in range(13):
        stock += [first_keeps[r], first_discards[r], second_keeps[r], second_discards[r]]
    assert len(set(stock)) == 52
    return stock


# the first drawer keeps all spades, the second all hearts; clubs and diamonds are discarded
SUIT_STOCK = stock_from_keeps(full_suit("S"), full_suit("C"), full_suit("H"), full_suit("D"))

# a stock for a hand of real play (see test_hand_of_play_by_hand)
MIXED_FIRST = "AC KC QC 2S 3S 4S 5S 6S 7S 8S 9S TS JS".split()
MIXED_SECOND = "2C 3C 4C 2H 3H 4H 5H 6H 7H 8H QS KS AS".split()
_REST = [c for c in full_suit("C") + full_suit("D") + full_suit("H") if c not in MIXED_FIRST + MIXED_SECOND]
MIXED_STOCK = stock_from_keeps(MIXED_FIRST, _REST[:13], MIXED_SECOND, _REST[13:])


def new_game(stock=SUIT_STOCK, dealer: int = 1, rules=RULES, **kw) -> SpadesGame:
    game = SpadesGame(rules, seed=0)
    game.set_hand(stock=stock, dealer=dealer, **kw)
    return game


def draw_all(game: SpadesGame, choice: str = "keep") -> None:
    while game.phase == "draw":
        do(game, choice)


def shown(game: SpadesGame, seat: int) -> set[str]:
    return obs_cards(game, seat, "draw_shown")


# ---- set-up --------------------------------------------------------------------------------
def test_two_player_preset():
    rules = load_rules(RULES)
    assert rules.num_players == 2 and rules.blind_nil_exchange == 0
    game = SpadesGame(RULES, seed=4)
    assert game.num_seats == 2
    assert game.dealer in (0, 1)
    assert {SpadesGame(RULES, seed=s).dealer for s in range(20)} == {0, 1}
    # no deal: nobody holds a card before the draw
    assert game.hand(0) == [] and game.hand(1) == []


# ---- the draw ------------------------------------------------------------------------------
def test_blind_nil_is_declared_before_the_draw_non_dealer_first():
    game = new_game(dealer=1)
    assert game.phase == "blind" and game.current_player == 0
    assert game.legal_actions() == [ACTION_BLIND_NIL, ACTION_SEE_CARDS]
    do(game, "see")
    assert game.phase == "blind" and game.current_player == 1
    do(game, "see")
    assert game.phase == "draw" and game.current_player == 0
    assert game.legal_actions() == [ACTION_KEEP, ACTION_DISCARD]


def test_draw_keep_then_discard_and_discard_then_keep():
    game = new_game(dealer=1)
    do(game, "see", "see")
    # P0 (non-dealer) is shown the top card, 2S; P1 sees nothing of it
    assert shown(game, 0) == {"2S"}
    assert shown(game, 1) == set()
    do(game, "keep")  # keep 2S, then 2C is seen and discarded
    assert game.hand(0) == ["2S"]
    assert obs_cards(game, 0, "hand") == {"2S"}
    assert obs_cards(game, 0, "discarded") == {"2C"}
    assert game.current_player == 1
    assert shown(game, 1) == {"2H"}
    assert shown(game, 0) == set()
    do(game, "discard")  # discard 2H, then 2D must be kept
    assert game.hand(1) == ["2D"]
    assert obs_cards(game, 1, "hand") == {"2D"}
    assert obs_cards(game, 1, "discarded") == {"2H"}
    # neither player's observation holds the other's kept or discarded cards
    assert obs_cards(game, 0, "hand") == {"2S"} and obs_cards(game, 0, "discarded") == {"2C"}
    assert obs_cards(game, 1, "hand") == {"2D"} and obs_cards(game, 1, "discarded") == {"2H"}
    assert game.current_player == 0
    assert shown(game, 0) == {"3S"}
    assert state_field(game, L.STOCK_POS) == [4]


def test_draw_ends_with_13_each_and_26_out_of_play():
    game = new_game(dealer=1)
    do(game, "see", "see")
    turns = []
    while game.phase == "draw":
        turns.append(game.current_player)
        do(game, "keep")
    assert turns == [0, 1] * 13  # alternate, the non-dealer first, 13 rounds
    assert set(game.hand(0)) == set(full_suit("S"))
    assert set(game.hand(1)) == set(full_suit("H"))
    disc = [int(game.state[L.DISCARDED + s]) for s in range(2)]
    assert bin(disc[0]).count("1") == bin(disc[1]).count("1") == 13
    held = sum(1 << card_from_str(c) for s in range(2) for c in game.hand(s))
    assert held | disc[0] | disc[1] == FULL_DECK and held & (disc[0] | disc[1]) == 0
    assert obs_cards(game, 0, "discarded") == set(full_suit("C"))
    assert obs_cards(game, 1, "discarded") == set(full_suit("D"))
    # after the draw: bidding, the non-dealer first, and no card is shown any more
    assert game.phase == "bid" and game.current_player == 0
    assert shown(game, 0) == shown(game, 1) == set()


def test_observation_never_holds_the_opponents_cards_during_the_draw():
    game = new_game(stock=MIXED_STOCK, dealer=0)
    do(game, "see", "see")
    rng = np.random.default_rng(3)
    while game.phase == "draw":
        do(game, "keep" if rng.random() < 0.5 else "discard")
        for seat in range(2):
            other = 1 - seat
            own_hand = set(game.hand(seat))
            assert obs_cards(game, seat, "hand") == own_hand
            assert not obs_cards(game, seat, "hand") & set(game.hand(other))
            other_disc = {
                c for c in MIXED_STOCK if (int(game.state[L.DISCARDED + other]) >> card_from_str(c)) & 1
            }
            assert not obs_cards(game, seat, "discarded") & other_disc
            assert not obs_cards(game, seat, "hand") & other_disc


def test_draw_actions_are_the_only_legal_ones_in_the_draw():
    game = new_game()
    do(game, "see", "see")
    before = game.state.copy()
    for bad in (0, 39, 52, 66, 67):
        with pytest.raises(IllegalActionError, match=r"legal: \[68, 69\]"):
            game.apply(bad)
    assert np.array_equal(game.state, before)


# ---- bidding ---------------------------------------------------------------------------------
@pytest.mark.parametrize("dealer", [0, 1])
def test_non_dealer_draws_bids_and_leads_first(dealer):
    game = new_game(dealer=dealer)
    first = 1 - dealer
    assert game.current_player == first
    do(game, "see", "see")
    assert game.current_player == first
    draw_all(game)
    assert game.phase == "bid" and game.current_player == first
    assert game.legal_actions() == list(range(52, 66))
    do(game, "bid 5")
    assert game.current_player == dealer
    do(game, "bid 4")
    assert game.phase == "play" and game.current_player == first


def test_blind_nil_bidder_skips_the_bidding():
    game = new_game(dealer=1)
    do(game, "see", "blind")  # P1 (dealer) declares Blind Nil before drawing
    assert game.bids == [None, "blind"]
    assert game.phase == "draw"
    draw_all(game)
    assert game.phase == "bid" and game.current_player == 0
    do(game, "bid 10")
    assert game.phase == "play"  # no exchange in the two-player game
    finish_hand(game)
    # P0 (all spades) wins 13: 100 + 3 bags; P1's Blind Nil made: +200
    assert game.tricks_won == [13, 0]
    assert game.hand_result()["points"] == [103, 200]


def test_blind_nil_off_goes_straight_to_the_draw():
    game = new_game(rules=load_rules(RULES).replace(blind_nil=False))
    assert game.phase == "draw" and game.current_player == 0


def test_blind_nil_min_deficit_in_two_player_game():
    rules = load_rules(RULES).replace(blind_nil_min_deficit=100)
    game = new_game(rules=rules, scores=[0, 150])
    assert game.phase == "blind" and game.current_player == 0  # P0 trails by 150
    do(game, "see")
    assert game.phase == "draw"  # P1, ahead by 150, is not offered Blind Nil


# ---- play and scoring ----------------------------------------------------------------------
def test_hand_of_play_by_hand():
    """Follow suit, breaking spades, two cards a trick, the winner leads; hand-checked."""
    game = new_game(stock=MIXED_STOCK, dealer=1)
    do(game, "see", "see")
    draw_all(game)
    assert set(game.hand(0)) == set(MIXED_FIRST) and set(game.hand(1)) == set(MIXED_SECOND)
    bid_hand(game, [9, 3])
    assert game.current_player == 0
    # P0 holds clubs: no spade lead while unbroken
    assert legal_cards(game) == {"AC", "KC", "QC"}
    do(game, "AC")
    assert legal_cards(game) == {"2C", "3C", "4C"}  # P1 must follow clubs
    do(game, "2C")
    # two cards make a trick
    assert state_field(game, L.TRICKS_PLAYED) == [1] and state_field(game, L.TRICK_SIZE) == [0]
    assert game.tricks_won == [1, 0] and game.current_player == 0
    do(game, "KC", "3C", "QC", "4C")
    assert game.tricks_won == [3, 0]
    # P0 holds only spades: it may lead one, which breaks spades
    assert legal_cards(game) == {f"{r}S" for r in "23456789TJ"}
    do(game, "2S")
    assert state_field(game, L.SPADES_BROKEN) == [1]
    assert legal_cards(game) == {"QS", "KS", "AS"}
    do(game, "QS")
    assert game.tricks_won == [3, 1] and game.current_player == 1
    do(game, "AS", "3S", "KS", "4S")
    assert game.tricks_won == [3, 3] and game.current_player == 1
    do(game, "2H")
    assert legal_cards(game) == {f"{r}S" for r in "56789TJ"}  # void in hearts: any card
    do(game, "5S")  # trumps
    assert game.tricks_won == [4, 3] and game.current_player == 0
    finish_hand(game)
    assert game.tricks_won == [10, 3]
    assert game.phase == "hand_end"
    # P0 bid 9 won 10: 91, 1 bag. P1 bid 3 won 3: 30.
    assert game.hand_result()["points"] == [91, 30]
    assert game.scores == (91, 30) and game.bags == (1, 0)


def test_scoring_nil_and_bag_penalty_per_player():
    game = new_game(bags=[8, 0])
    do(game, "see", "see")
    draw_all(game)
    bid_hand(game, [10, 0])
    finish_hand(game)
    # P0 bid 10 won 13: 100 + 3 bags, 8 + 3 = 11 bags -> -100, 1 left. P1's Nil made: +100
    assert game.hand_result()["points"] == [3, 100]
    assert game.bags == (1, 0)


def test_failed_blind_nil_counts_bags():
    game = new_game()
    do(game, "blind", "see")  # P0, who will win every trick, bids Blind Nil
    draw_all(game)
    bid_hand(game, [None, 2])
    finish_hand(game)
    # P0: -200, 13 bags -> -100, 3 left: -287. P1 bid 2 won 0: -20
    assert game.hand_result()["points"] == [-287, -20]
    assert game.bags == (3, 0)


@pytest.mark.parametrize(
    ("before", "after", "phase", "wins"),
    [
        ([397, 400], (500, 500), "hand_end", (0, 0)),  # exact tie at 500: another hand
        ([400, 400], (503, 500), "game_end", (1, 0)),  # both over: higher wins
        ([420, 450], (523, 550), "game_end", (0, 1)),
        ([300, 450], (403, 550), "game_end", (0, 1)),
        ([300, 300], (403, 400), "hand_end", (0, 0)),
    ],
)
def test_game_to_500_with_the_tie_rule(before, after, phase, wins):
    game = new_game(scores=before)
    do(game, "see", "see")
    draw_all(game)
    bid_hand(game, [10, 0])  # +103 and +100
    finish_hand(game)
    assert game.scores == after
    assert game.phase == phase
    assert game.game_wins == wins


def test_dealer_alternates():
    game = SpadesGame(load_rules(RULES).replace(max_hands=0, target_score=100_000), seed=9, dealer=0)
    dealers = []
    for _ in range(4):
        dealers.append(game.dealer)
        assert game.current_player == 1 - game.dealer
        bid_hand(game, [1, 1])
        draw_all(game)
        bid_hand(game, [1, 1])
        finish_hand(game)
        assert game.phase == "hand_end"
        game.next_hand()
    assert dealers == [0, 1, 0, 1]


def test_random_two_player_games_end_with_13_tricks_per_hand():
    for seed in range(5):
        game = SpadesGame(load_rules(RULES).replace(max_hands=3), seed=seed)
        play_random(game, random.Random(seed))
        for log in game.hand_logs:
            assert sum(log.result["tricks"]) == 13
            draws = [a for a in log.actions if a in (ACTION_KEEP, ACTION_DISCARD)]
            assert len(draws) == 26
