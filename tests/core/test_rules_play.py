"""Hand-checked rules of play, dealer rotation, game and match end, with preset deals.

Seats N, E, S, W = 0..3. With dealer W (3), N bids first and leads the first trick.
"""

from __future__ import annotations

import pytest

from helpers.game import (
    bid_hand,
    cards,
    do,
    finish_hand,
    hands_from_strings,
    legal_cards,
    one_suit_deal,
    play_hand,
    state_field,
)
from spades_env.core import IllegalActionError, SpadesGame, load_rules
from spades_env.core import layout as L
from spades_env.core.game import HandLog

# A deal with voids: E and S hold no clubs, W no diamonds.
VOID_DEAL = hands_from_strings(
    "2C 3C 4C 5C 6C 7C 2H 3H 4H 2D 3D 2S 3S",  # N
    "AD KD QD JD TD 9D AH KH QH KS QS JS TS",  # E
    "8D 7D 6D 5D 4D JH TH 9H 8H 9S 8S 7S 6S",  # S
    "AC KC QC JC TC 9C 8C 7H 6H 5H AS 5S 4S",  # W
)


def new_game(rules=None, seed: int = 0, **set_hand) -> SpadesGame:
    game = SpadesGame(rules, seed=seed)
    game.set_hand(**set_hand)
    return game


# ---- the deal ---------------------------------------------------------------------------
def test_preset_deal_gives_each_seat_its_13_cards():
    game = new_game(hands=VOID_DEAL, dealer=3)
    for seat in range(4):
        assert set(game.hand(seat)) == set(VOID_DEAL[seat])
        assert len(game.hand(seat)) == 13


def test_random_deal_is_52_distinct_cards_13_each():
    game = SpadesGame(seed=11)
    all_cards = [c for s in range(4) for c in game.hand(s)]
    assert [len(game.hand(s)) for s in range(4)] == [13] * 4
    assert len(set(all_cards)) == 52


# ---- dealer, first bidder, first leader ---------------------------------------------------
def test_first_dealer_comes_from_the_seed():
    dealers = [SpadesGame(seed=s).dealer for s in range(40)]
    assert set(dealers) == {0, 1, 2, 3}
    again = SpadesGame(seed=17)
    first = SpadesGame(seed=17)
    assert again.dealer == first.dealer
    assert [again.hand(s) for s in range(4)] == [first.hand(s) for s in range(4)]
    assert [SpadesGame(seed=17).hand(0)] != [SpadesGame(seed=18).hand(0)]


def test_first_dealer_given_or_from_rules():
    for seed in range(8):
        assert SpadesGame(seed=seed, dealer=2).dealer == 2
        assert SpadesGame({"first_dealer": 1}, seed=seed).dealer == 1
        # a dealer given to the game wins over the rules' first dealer
        assert SpadesGame({"first_dealer": 1}, seed=seed, dealer=3).dealer == 3
    # the openspiel preset deals from W so that N bids and leads first
    assert SpadesGame("openspiel", seed=5).dealer == 3
    assert SpadesGame("openspiel", seed=5).current_player == 0


@pytest.mark.parametrize("dealer", [0, 1, 2, 3])
def test_left_of_dealer_bids_first_and_leads_first(dealer):
    game = new_game(hands=VOID_DEAL, dealer=dealer)
    first = (dealer + 1) % 4
    assert game.dealer == dealer
    assert game.current_player == first
    bid_hand(game, [3, 3, 3, 3])
    assert game.phase == "play"
    assert game.current_player == first


def test_dealer_rotates_clockwise_every_hand():
    game = SpadesGame({"target_score": 100_000, "max_hands": 0}, seed=3, dealer=1)
    dealers = []
    for _ in range(6):
        dealers.append(game.dealer)
        assert game.current_player == (game.dealer + 1) % 4
        play_hand(game, [1, 1, 1, 1])
        assert game.phase == "hand_end"
        game.next_hand()
    assert dealers == [1, 2, 3, 0, 1, 2]
    assert [h.dealer for h in game.hand_logs[:6]] == dealers


# ---- trick play ---------------------------------------------------------------------------
def test_trick_play_by_hand():
    """Follow suit, voids, breaking spades, trick winners and the winner leading, by hand."""
    game = new_game(hands=VOID_DEAL, dealer=3)
    bid_hand(game, [3, 4, 3, 3])
    assert game.phase == "play" and game.current_player == 0

    # trick 1: N may not lead a spade (not broken, N holds other suits)
    assert legal_cards(game) == set(VOID_DEAL[0]) - {"2S", "3S"}
    before = game.state.copy()
    with pytest.raises(IllegalActionError, match="legal"):
        do(game, "2S")
    assert (game.state == before).all()
    do(game, "2C")
    assert legal_cards(game) == set(VOID_DEAL[1])  # E has no club: any card
    do(game, "AD")  # an off-suit ace does not win
    assert legal_cards(game) == set(VOID_DEAL[2])  # S has no club either
    assert state_field(game, L.SPADES_BROKEN) == [0]
    do(game, "6S")  # a spade on a club lead breaks spades
    assert state_field(game, L.SPADES_BROKEN) == [1]
    assert legal_cards(game) == {"AC", "KC", "QC", "JC", "TC", "9C", "8C"}  # W must follow
    do(game, "AC")
    # the lowest spade beats the ace of the suit led; the winner leads
    assert game.tricks_won == [0, 0, 1, 0]
    assert game.current_player == 2
    assert state_field(game, L.LAST_TRICK_WINNER) == [2]

    # trick 2: spades are broken, S may lead one; the highest spade wins
    assert {"9S", "8S", "7S"} <= legal_cards(game)
    do(game, "9S")
    assert legal_cards(game) == {"AS", "5S", "4S"}
    do(game, "4S")
    assert legal_cards(game) == {"2S", "3S"}
    do(game, "2S")
    assert legal_cards(game) == {"KS", "QS", "JS", "TS"}
    do(game, "KS")
    assert game.tricks_won == [0, 1, 1, 0]
    assert game.current_player == 1

    # trick 3: no spade played, the highest heart wins
    do(game, "AH")
    assert legal_cards(game) == {"JH", "TH", "9H", "8H"}
    do(game, "8H", "5H", "2H")
    assert game.tricks_won == [0, 2, 1, 0]
    assert game.current_player == 1

    # trick 4: a low diamond led; W, void, discards the KC and does not win
    do(game, "9D", "4D")
    assert "KC" in legal_cards(game) and "AS" in legal_cards(game)
    do(game, "KC", "3D")
    assert game.tricks_won == [0, 3, 1, 0]
    assert game.current_player == 1
    assert state_field(game, L.TRICKS_PLAYED) == [4]

    finish_hand(game)
    assert game.phase == "hand_end"
    assert sum(game.tricks_won) == 13
    assert state_field(game, L.TRICKS_PLAYED) == [13]
    assert all(game.hand(s) == [] for s in range(4))


def test_spades_cannot_be_led_until_broken_even_later_in_the_hand():
    # N holds clubs and spades, everyone follows clubs: spades stay unbroken
    hands = hands_from_strings(
        "AC KC QC JC 2S 3S 4S 5S 6S 7S 8S 9S TS",
        "TC 9C 8C 7C 2D 3D 4D 5D 6D 7D 8D 9D TD",
        "6C 5C 4C 3C JD QD KD AD 2H 3H 4H 5H 6H",
        "2C 7H 8H 9H TH JH QH KH AH JS QS KS AS",
    )
    game = new_game(hands=hands, dealer=3)
    bid_hand(game, [3, 3, 3, 3])
    clubs = ["AC", "KC", "QC", "JC"]
    for k, lead in enumerate(clubs):
        assert legal_cards(game) == set(clubs[k:])  # no spade lead while unbroken
        do(game, lead)
        for _ in range(3):  # the others play their lowest legal card: no spade
            game.apply(min(game.legal_actions()))
        assert game.current_player == 0  # N's club wins each trick
        assert state_field(game, L.SPADES_BROKEN) == [0]
    # N holds only spades now: it may lead one, and that lead breaks spades
    assert legal_cards(game) == {f"{r}S" for r in "23456789T"}
    do(game, "2S")
    assert state_field(game, L.SPADES_BROKEN) == [1]


def test_leader_with_only_spades_may_lead_them_and_wins_every_trick():
    game = new_game(hands=one_suit_deal(0), dealer=3)
    bid_hand(game, [10, 0, 0, 1])
    assert legal_cards(game) == set(one_suit_deal(0)[0])
    do(game, "2S")
    assert state_field(game, L.SPADES_BROKEN) == [1]
    finish_hand(game)
    assert game.tricks_won == [13, 0, 0, 0]
    # NS: 10 x 10 + 3 bags, S's Nil made: 203. EW: E's Nil made, W bid 1 won 0: 100 - 10
    assert game.hand_result()["points"] == [203, 90]
    assert game.scores == (203, 90)
    assert game.bags == (3, 0)


def test_must_break_spades_off_lets_spades_lead_anytime():
    game = new_game(load_rules({"must_break_spades": False}), hands=VOID_DEAL, dealer=3)
    bid_hand(game, [3, 3, 3, 3])
    assert legal_cards(game) == set(VOID_DEAL[0])


def test_failed_nil_tricks_in_play_count_as_bags_not_contract():
    # S (seat 2) holds all spades and bids Nil: it wins all 13 tricks, N bid 4 won 0
    game = new_game(hands=one_suit_deal(2), dealer=3)
    play_hand(game, [4, 3, 0, 3])
    assert game.tricks_won == [0, 0, 13, 0]
    # NS: N set -40, S's Nil failed -100, 13 bags: -127, bags 13 -> -100, 3 left: -227
    assert game.hand_result()["points"] == [-227, -60]
    assert game.bags == (3, 0)
    game2 = new_game(
        load_rules({"failed_nil_counts_toward_contract": True}), hands=one_suit_deal(2), dealer=3
    )
    play_hand(game2, [4, 3, 0, 3])
    # 13 tricks toward N's 4: 40 + 9 bags - 100 for the nil = -51
    assert game2.hand_result()["points"] == [-51, -60]
    assert game2.bags == (9, 0)


# ---- game end --------------------------------------------------------------------------
def win_hand(game: SpadesGame, scores, bids, spade_seat: int = 0, bags=(0, 0)) -> None:
    """Play a hand where ``spade_seat`` wins all 13 tricks, from the given scores."""
    game.set_hand(hands=one_suit_deal(spade_seat), scores=scores, bags=bags)
    play_hand(game, bids)


def test_game_ends_when_a_team_reaches_500():
    game = SpadesGame(seed=1, dealer=3)
    win_hand(game, [480, 100], [3, 3, 3, 3])
    # NS bid 6 won 13: 67 -> 547. EW bid 6 won 0: -60 -> 40
    assert game.scores == (547, 40)
    assert game.phase == "game_end"
    assert game.is_game_over and not game.is_over
    assert game.game_wins == (1, 0)
    assert state_field(game, L.GAME_WINNER) == [0]


def test_below_500_the_game_goes_on():
    game = SpadesGame(seed=1, dealer=3)
    win_hand(game, [432, 100], [3, 3, 3, 3])
    assert game.scores == (499, 40)
    assert game.phase == "hand_end"
    assert state_field(game, L.GAME_WINNER) == [-1]


def test_both_over_500_in_one_hand_higher_total_wins():
    game = SpadesGame(seed=1, dealer=3)
    # NS 480 + 67 = 547; EW (both Nil made) 420 + 200 = 620: EW wins though it was behind
    win_hand(game, [480, 420], [3, 0, 3, 0])
    assert game.scores == (547, 620)
    assert game.phase == "game_end"
    assert game.game_wins == (0, 1)
    assert state_field(game, L.GAME_WINNER) == [1]


def test_exact_tie_over_500_plays_another_hand():
    game = SpadesGame(seed=1, dealer=3)
    win_hand(game, [433, 300], [3, 0, 3, 0])
    assert game.scores == (500, 500)
    assert game.phase == "hand_end"
    assert game.game_wins == (0, 0)
    game.next_hand()
    assert game.scores == (500, 500)  # the same game goes on
    # the tie is broken by the next hand: NS 500 + 67, EW 500 - 60
    win_hand(game, [500, 500], [3, 3, 3, 3])
    assert game.scores == (567, 440)
    assert game.phase == "game_end" and game.game_wins == (1, 0)


def test_target_score_knob():
    game = SpadesGame({"target_score": 100}, seed=1, dealer=3)
    win_hand(game, [0, 0], [3, 0, 3, 0])
    assert game.scores == (67, 200)
    assert game.phase == "game_end" and game.game_wins == (0, 1)


def test_mercy_rule_knob():
    # EW at -120 bid 8 and win nothing: -80 -> -200, at the threshold: EW loses
    game = SpadesGame({"mercy_rule": True, "mercy_threshold": -200}, seed=1, dealer=3)
    win_hand(game, [0, -120], [3, 4, 3, 4])
    assert game.scores == (67, -200)
    assert game.phase == "game_end" and game.game_wins == (1, 0)
    # off (the default): the game goes on
    game = SpadesGame(seed=1, dealer=3)
    win_hand(game, [0, -120], [3, 4, 3, 4])
    assert game.phase == "hand_end"
    # a lower threshold is not reached
    game = SpadesGame({"mercy_rule": True, "mercy_threshold": -300}, seed=1, dealer=3)
    win_hand(game, [0, -120], [3, 4, 3, 4])
    assert game.phase == "hand_end"


def test_max_hands_truncates_the_game():
    game = SpadesGame({"max_hands": 2}, seed=4, dealer=0)
    play_hand(game, [1, 1, 1, 1])
    assert game.phase == "hand_end" and not game.truncated
    game.next_hand()
    play_hand(game, [1, 1, 1, 1])
    assert game.phase == "match_end"
    assert game.is_over and game.truncated
    assert state_field(game, L.GAME_WINNER) == [-1]
    assert state_field(game, L.MATCH_WINNER) == [-1]
    assert game.hand_logs[-1].result["truncated"] is True
    with pytest.raises(IllegalActionError, match="match_end"):
        game.next_hand()


def test_no_hand_cap_when_max_hands_is_zero():
    game = SpadesGame({"max_hands": 0, "target_score": 100_000}, seed=4, dealer=0)
    for _ in range(4):
        play_hand(game, [1, 1, 1, 1])
        assert game.phase == "hand_end"
        game.next_hand()


def test_next_hand_after_game_end_starts_a_new_game():
    game = SpadesGame(seed=2, dealer=3)
    win_hand(game, [480, 100], [3, 3, 3, 3], bags=(2, 5))
    assert game.phase == "game_end"
    assert game.bags == (9, 5)
    game.next_hand()
    assert game.scores == (0, 0)
    assert game.bags == (0, 0)
    assert game.dealer == 0  # still rotating
    assert state_field(game, L.HAND_NUM) == [0]
    assert state_field(game, L.GAME_NUM) == [1]
    assert game.game_wins == (1, 0)
    assert game.phase in ("blind", "bid")
    log: HandLog = game.hand_logs[-1]
    assert log.scores_before == (0, 0) and log.bags_before == (0, 0)


def test_match_is_best_of_three():
    game = SpadesGame(seed=2, dealer=3)
    win_hand(game, [480, 0], [3, 3, 3, 3], spade_seat=0)  # NS wins game 1
    assert game.phase == "game_end" and game.game_wins == (1, 0)
    game.next_hand()
    win_hand(game, [0, 480], [3, 3, 3, 3], spade_seat=1)  # EW wins game 2
    assert game.phase == "game_end" and game.game_wins == (1, 1)
    game.next_hand()
    win_hand(game, [0, 480], [3, 3, 3, 3], spade_seat=3)  # EW wins game 3 and the match
    assert game.phase == "match_end"
    assert game.is_over and not game.truncated
    assert game.game_wins == (1, 2)
    assert state_field(game, L.MATCH_WINNER) == [1]
    with pytest.raises(IllegalActionError, match="no seat is to act"):
        game.apply(52)


def test_match_games_knob():
    game = SpadesGame({"match_games": 1}, seed=2, dealer=3)
    win_hand(game, [480, 0], [3, 3, 3, 3])
    assert game.phase == "match_end" and game.game_wins == (1, 0)
    game = SpadesGame({"match_games": 5}, seed=2, dealer=3)
    for k in range(1, 3):
        win_hand(game, [480, 0], [3, 3, 3, 3])
        assert game.phase == "game_end" and game.game_wins == (k, 0)
        game.next_hand()
    win_hand(game, [480, 0], [3, 3, 3, 3])
    assert game.phase == "match_end" and game.game_wins == (3, 0)


def test_hand_log_records_every_action_and_result():
    game = new_game(hands=one_suit_deal(0), dealer=3)
    play_hand(game, [10, 0, 0, 1])
    log = game.hand_logs[-1]
    # 4 See cards + 4 bids + 52 cards
    assert len(log.actions) == 60
    assert sorted(a for a in log.actions[8:]) == list(range(52))
    assert log.result["bids"] == [10, 0, 0, 1]
    assert log.result["tricks"] == [13, 0, 0, 0]
    assert log.hands[0] == sum(1 << c for c in cards(*one_suit_deal(0)[0]))
