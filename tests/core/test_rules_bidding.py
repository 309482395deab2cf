"""Hand-checked bidding rules: order, one round, no passing, Blind Nil and its exchange."""

from __future__ import annotations

import numpy as np
import pytest

from helpers.game import (
    bid_hand,
    do,
    finish_hand,
    hands_from_strings,
    legal_cards,
    obs_cards,
    observation,
    one_suit_deal,
    state_field,
    turn_order,
)
from spades_env.core import IllegalActionError, SpadesGame
from spades_env.core import layout as L
from spades_env.core.actions import ACTION_BLIND_NIL, ACTION_SEE_CARDS, BID_BASE
from spades_env.core.observation import SLICES

DEAL = hands_from_strings(
    "AS KS QS AH KH QH AD KD QD AC KC QC 2C",  # N
    "JS TS 9S JH TH 9H JD TD 9D JC TC 9C 3C",  # E
    "8S 7S 6S 8H 7H 6H 8D 7D 6D 8C 7C 6C 4C",  # S
    "5S 4S 3S 2S 5H 4H 3H 2H 5D 4D 3D 2D 5C",  # W
)
ALL_BIDS = list(range(BID_BASE, BID_BASE + 14))


def new_game(rules=None, dealer: int = 3, **kw) -> SpadesGame:
    game = SpadesGame(rules, seed=0)
    game.set_hand(hands=DEAL, dealer=dealer, **kw)
    return game


def hand_slice(game: SpadesGame, seat: int) -> np.ndarray:
    return observation(game, seat)[SLICES["hand"]]


# ---- order and the single round ------------------------------------------------------------
@pytest.mark.parametrize("dealer", [0, 1, 2, 3])
def test_bidding_goes_clockwise_from_left_of_dealer(dealer):
    game = new_game(dealer=dealer)
    seats = turn_order(game, ["see", "bid 3", "see", "bid 3", "see", "bid 3", "see", "bid 3"])
    first = (dealer + 1) % 4
    order = [(first + i) % 4 for i in range(4)]
    assert seats == [s for s in order for _ in range(2)]


def test_one_round_of_bids_need_not_increase_and_no_pass():
    game = new_game({"blind_nil": False})
    for seat, bid in zip([0, 1, 2, 3], [7, 2, 0, 13], strict=True):
        assert game.phase == "bid" and game.current_player == seat
        # every bid 0..13 is legal whatever was bid before; there is no pass action
        assert game.legal_actions() == ALL_BIDS
        do(game, f"bid {bid}")
    assert game.bids == [7, 2, 0, 13]
    assert game.phase == "play"  # one round only
    assert game.current_player == 0


def test_bid_out_of_turn_phase_is_refused():
    game = new_game({"blind_nil": False})
    do(game, "bid 3")
    before = game.state.copy()
    with pytest.raises(IllegalActionError, match="legal"):
        do(game, "AS")  # a card during the auction
    with pytest.raises(IllegalActionError):
        game.apply(ACTION_BLIND_NIL)  # Blind Nil is not offered with blind_nil off
    assert np.array_equal(game.state, before)


# ---- Blind Nil ------------------------------------------------------------------------------
def test_blind_nil_offered_first_with_hand_hidden():
    game = new_game()
    assert game.phase == "blind" and game.current_player == 0
    assert game.legal_actions() == [ACTION_BLIND_NIL, ACTION_SEE_CARDS]
    # N's own hand is hidden while it decides (and so are the hands of the seats after it)
    for seat in range(4):
        assert not hand_slice(game, seat).any()
    do(game, "see")
    assert game.phase == "bid" and game.current_player == 0
    assert game.legal_actions() == ALL_BIDS
    assert obs_cards(game, 0, "hand") == set(DEAL[0])
    assert not hand_slice(game, 1).any()  # E has not decided yet
    do(game, "bid 4")
    assert obs_cards(game, 0, "hand") == set(DEAL[0])
    assert game.phase == "blind" and game.current_player == 1
    do(game, "blind")
    assert game.bids == [4, "blind", None, None]
    assert game.phase == "blind" and game.current_player == 2  # no normal bid for E
    # once E bid Blind Nil the hand is E's to see (it is not offered Blind Nil again)
    assert obs_cards(game, 1, "hand") == set(DEAL[1])


def test_blind_nil_bidders_hand_shown_after_the_auction():
    game = new_game()
    bid_hand(game, ["blind", 3, "blind", 3])  # both N and S blind: no exchange
    assert game.phase == "play"
    assert obs_cards(game, 0, "hand") == set(DEAL[0])
    assert obs_cards(game, 2, "hand") == set(DEAL[2])


def test_blind_nil_min_deficit_knob():
    rules = {"blind_nil_min_deficit": 100}
    # NS trails by 150: N and S are offered Blind Nil, E and W are not
    game = new_game(rules, scores=[0, 150])
    phases = []
    for seat in range(4):
        assert game.current_player == seat
        phases.append(game.phase)
        if game.phase == "blind":
            do(game, "see")
        do(game, "bid 3")
    assert phases == ["blind", "bid", "blind", "bid"]
    # E was never offered it: its hand was visible from the start
    game = new_game(rules, scores=[0, 150])
    assert obs_cards(game, 1, "hand") == set(DEAL[1])
    # trailing by exactly 100 is enough; by 99 is not
    game = new_game(rules, scores=[200, 100])
    bid_hand(game, [3, "blind", 3, 3])
    assert game.bids == [3, "blind", 3, 3]
    game = new_game(rules, scores=[0, 99])
    assert game.phase == "bid"
    assert ACTION_BLIND_NIL not in game.legal_actions()


@pytest.mark.parametrize(
    "rules", [{"blind_nil_min_deficit": 100}, {"blind_nil_min_deficit": 0}, {"blind_nil": False}]
)
def test_blind_open_at_is_the_games_offer(rules):
    """``engine.blind_open_at(behind, params)`` (what the search's game value reads) says what
    the game does: seat 0's team, ``behind`` points back, is offered Blind Nil or not."""
    from spades_env.core.engine import blind_open_at

    for behind in (-150, -1, 0, 1, 99, 100, 101, 250):
        game = new_game(rules, scores=[0, behind] if behind >= 0 else [-behind, 0])
        offered = game.phase == "blind"
        assert blind_open_at(behind, game.params) == offered, (rules, behind)
        if rules.get("blind_nil") is False:
            assert not offered
        elif rules["blind_nil_min_deficit"] == 100:
            assert offered == (behind >= 100)


def test_blind_nil_off_is_never_offered():
    game = new_game({"blind_nil": False})
    for seat in range(4):
        assert game.phase == "bid" and game.current_player == seat
        assert hand_slice(game, seat).sum() == 13
        assert ACTION_BLIND_NIL not in game.legal_actions()
        do(game, "bid 3")
    assert game.phase == "play"


# ---- the exchange ----------------------------------------------------------------------------
def test_blind_nil_exchange_partner_passes_first():
    game = new_game()
    bid_hand(game, ["blind", 3, 4, 3])
    assert game.phase == "exchange"
    # S (the partner) passes 3 first, from its own 13 cards
    assert game.current_player == 2
    assert legal_cards(game) == set(DEAL[2])
    do(game, "8S", "7S")
    assert game.current_player == 2 and state_field(game, L.EXCH_LEFT) == [1]
    do(game, "4C")
    # then N passes 3 back, from the 16 it holds now
    assert game.current_player == 0
    assert legal_cards(game) == set(DEAL[0]) | {"8S", "7S", "4C"}
    assert obs_cards(game, 0, "received") == {"8S", "7S", "4C"}
    assert obs_cards(game, 2, "passed") == {"8S", "7S", "4C"}
    do(game, "2C", "QD", "QH")
    # the cards moved
    assert set(game.hand(0)) == set(DEAL[0]) - {"2C", "QD", "QH"} | {"8S", "7S", "4C"}
    assert set(game.hand(2)) == set(DEAL[2]) - {"8S", "7S", "4C"} | {"2C", "QD", "QH"}
    assert [len(game.hand(s)) for s in range(4)] == [13] * 4
    # each partner sees what it passed and received; the other team sees nothing of it
    assert obs_cards(game, 0, "passed") == {"2C", "QD", "QH"}
    assert obs_cards(game, 0, "received") == {"8S", "7S", "4C"}
    assert obs_cards(game, 2, "passed") == {"8S", "7S", "4C"}
    assert obs_cards(game, 2, "received") == {"2C", "QD", "QH"}
    for seat in (1, 3):
        assert obs_cards(game, seat, "passed") == set()
        assert obs_cards(game, seat, "received") == set()
    # play starts as usual: left of the dealer leads
    assert game.phase == "play" and game.current_player == 0
    finish_hand(game)
    assert sum(game.tricks_won) == 13


def test_exchange_passes_only_held_cards():
    game = new_game()
    bid_hand(game, ["blind", 3, 4, 3])
    before = game.state.copy()
    with pytest.raises(IllegalActionError, match="legal"):
        do(game, "AS")  # N's card, not S's
    assert np.array_equal(game.state, before)
    do(game, "8S", "7S", "6S")
    with pytest.raises(IllegalActionError):
        do(game, "JS")  # E's card
    do(game, "8S", "7S", "6S")  # N may pass back what it received
    assert set(game.hand(0)) == set(DEAL[0])
    assert game.phase == "play"


def test_exchange_cards_knob():
    game = new_game({"blind_nil_exchange": 1})
    bid_hand(game, [3, 3, 3, "blind"])
    assert game.phase == "exchange" and game.current_player == 1  # E, W's partner
    do(game, "JS")
    assert game.current_player == 3
    do(game, "2D")
    assert game.phase == "play"
    game = new_game({"blind_nil_exchange": 0})
    bid_hand(game, [3, 3, 3, "blind"])
    assert game.phase == "play"


def test_both_partners_blind_no_exchange():
    game = new_game()
    bid_hand(game, ["blind", 3, "blind", 3])
    assert game.phase == "play"
    assert [set(game.hand(s)) for s in range(4)] == [set(h) for h in DEAL]


def test_both_teams_blind_two_exchanges():
    game = new_game()
    bid_hand(game, ["blind", "blind", 4, 3])
    assert game.phase == "exchange"
    givers = []
    while game.phase == "exchange":
        givers.append(game.current_player)
        game.apply(min(game.legal_actions()))
    # from the first bidder (N) round: S passes to N, N back; then W passes to E, E back
    assert givers == [2, 2, 2, 0, 0, 0, 3, 3, 3, 1, 1, 1]
    assert game.phase == "play"
    for seat in range(4):
        assert len(obs_cards(game, seat, "passed")) == 3
        assert len(obs_cards(game, seat, "received")) == 3
    # each passed its lowest cards by id (clubs first), hand-checked from DEAL
    assert obs_cards(game, 2, "passed") == {"4C", "6C", "7C"}
    assert obs_cards(game, 0, "passed") == {"2C", "4C", "6C"}
    assert obs_cards(game, 3, "passed") == {"5C", "2D", "3D"}
    assert obs_cards(game, 1, "passed") == {"3C", "5C", "9C"}
    assert obs_cards(game, 0, "received") == {"4C", "6C", "7C"}
    assert obs_cards(game, 1, "received") == {"5C", "2D", "3D"}


def test_blind_nil_made_in_play_scores_200():
    # N (clubs) bids Blind Nil; S (all spades) passes 3 spades, N passes them back
    game = SpadesGame(seed=0)
    game.set_hand(hands=one_suit_deal(2), dealer=3)
    bid_hand(game, ["blind", 3, 5, 3])
    assert game.phase == "exchange"
    do(game, "2S", "3S", "4S")
    assert legal_cards(game) >= {"2S", "3S", "4S", "AC"}
    do(game, "2S", "3S", "4S")
    finish_hand(game)
    assert game.tricks_won == [0, 0, 13, 0]
    # NS: Blind Nil made +200, S bid 5 won 13: 50 + 8 bags -> 258. EW bid 6 won 0: -60
    assert game.hand_result()["points"] == [258, -60]
    assert game.bags == (8, 0)


def test_one_team_both_blind_other_team_one_blind_one_exchange():
    game = new_game()
    bid_hand(game, ["blind", "blind", "blind", 3])
    assert game.phase == "exchange"
    givers = []
    while game.phase == "exchange":
        givers.append(game.current_player)
        game.apply(min(game.legal_actions()))
    # NS both blind: no exchange; W passes to E, then E passes back
    assert givers == [3, 3, 3, 1, 1, 1]
    assert obs_cards(game, 0, "received") == set() and obs_cards(game, 2, "passed") == set()
