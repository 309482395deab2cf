"""The ``openspiel`` preset reproduces OpenSpiel's spades hand scores.

OpenSpiel's spades (``open_spiel/games/spades``) plays one hand: chance deals card ``i`` of the
deal order to player ``i % 4``, North (0) bids first and leads the first trick, bids are 0..13
with a partnership's two bids summing to at most 13, and there is no Blind Nil. Its scoring
(``spades_scoring.cc``) counts a failed Nil bidder's tricks toward the partnership contract,
and derives bags from the running score (``current_score % 10``). The ``openspiel`` preset
(``failed_nil_counts_toward_contract: true``, no Blind Nil, first dealer W so N bids and leads)
scores the same hands the same way.

Where the play rules differ, the comparison plays only moves both engines allow:

* OpenSpiel never marks spades as broken (``is_spades_broken_`` is never set), so a leader
  holding any non-spade must lead a non-spade all hand; here spades may be led once broken.
  OpenSpiel's legal set is then a strict subset of ours, and the tests pick from it.
* OpenSpiel forbids a bid that makes the partnership's bids exceed 13; here any 0..13 bid is
  legal. Again OpenSpiel's set is the subset the tests pick from.
* OpenSpiel keeps no bag count: it uses ``score % 10``. Both agree whenever our bag count
  equals the last digit of a non-negative score, which is how the tests start every hand
  (from zero, or from a non-negative score with ``bags = score % 10``). With a negative score
  (C++ ``%`` is negative) or bags that do not match the score, the two differ by design.
"""

from __future__ import annotations

import numpy as np
import pytest

from spades_env.core import layout as L
from spades_env.core.game import SpadesGame
from spades_env.core.rules import load_rules
from spades_env.core.scoring import score_hand

OPENSPIEL = load_rules("openspiel")


def openspiel_score(contracts, taken, current_scores) -> list[int]:
    """A line-by-line port of ``open_spiel::spades::Score`` (games/spades/spades_scoring.cc)."""

    def cpp_div(a: int, b: int) -> int:  # C++ integer division truncates toward zero
        q = abs(a) // abs(b)
        return q if (a >= 0) == (b > 0) else -q

    def cpp_mod(a: int, b: int) -> int:
        return a - b * cpp_div(a, b)

    out = [0, 0]
    for p in range(2):
        contract = contracts[p] + contracts[p + 2]
        contract_result = taken[p] + taken[p + 2] - contract
        bonuses = 0
        if contracts[p] == 0:
            bonuses += -100 if taken[p] > 0 else 100
        if contracts[p + 2] == 0:
            bonuses += -100 if taken[p + 2] > 0 else 100
        if contract_result < 0:
            contract_score = -contract * 10
        else:
            contract_score = contract * 10
            bags = cpp_mod(current_scores[p], 10) + contract_result
            bonuses += contract_result + -100 * cpp_div(bags, 10)
        out[p] = contract_score + bonuses
    return out


@pytest.mark.parametrize(
    "bids, tricks, scores, team, expected",
    [  # OpenSpiel's own ScoringTests (games/spades/spades_test.cc)
        ([4, 5, 5, 0], [5, 3, 5, 0], [0, 0], 0, 91),
        ([13, 5, 0, 1], [4, 6, 1, 2], [0, 0], 0, -230),
        ([3, 3, 3, 2], [4, 2, 5, 2], [99, 0], 0, -37),
        ([2, 3, 3, 3], [2, 4, 2, 5], [0, 99], 1, -37),
    ],
)
def test_openspiel_scoring_tests(bids, tricks, scores, team, expected) -> None:
    assert openspiel_score(bids, tricks, scores)[team] == expected
    bags = (scores[0] % 10, scores[1] % 10)
    assert score_hand(bids, tricks, bags, rules=OPENSPIEL).points[team] == expected


def _random_tricks(rng: np.random.Generator) -> list[int]:
    cuts = np.sort(rng.integers(0, 14, size=3))
    return [int(cuts[0]), int(cuts[1] - cuts[0]), int(cuts[2] - cuts[1]), int(13 - cuts[2])]


def test_scoring_matches_openspiel_formula_on_random_bids_and_tricks() -> None:
    rng = np.random.default_rng(7)
    nils = failed_nils = bag_penalties = 0
    for i in range(20_000):
        bids = [int(b) for b in rng.integers(0, 14, size=4)]
        if i % 3 == 0:  # more Nil bids than uniform draws give
            bids[int(rng.integers(4))] = 0
        tricks = _random_tricks(rng)
        # from zero, or from a non-negative score whose last digit is the team's bags
        scores = [0, 0] if i % 2 == 0 else [int(s) for s in rng.integers(0, 500, size=2)]
        bags = (scores[0] % 10, scores[1] % 10)
        ours = score_hand(bids, tricks, bags, rules=OPENSPIEL)
        theirs = openspiel_score(bids, tricks, scores)
        assert list(ours.points) == theirs, (bids, tricks, scores)
        nils += bids.count(0)
        failed_nils += sum(b == 0 and t > 0 for b, t in zip(bids, tricks, strict=True))
        bag_penalties += sum(ours.bags[t] < bags[t] for t in range(2))
    assert nils > 5000 and failed_nils > 2000 and bag_penalties > 200


def test_the_preset_differs_from_tournament_only_where_documented() -> None:
    # N bids 4 and wins 6, S's Nil fails with 2 tricks: OpenSpiel counts S's 2 toward the
    # contract (4 bid, 8 won -> 40 + 4 bags - 100 nil = -56); tournament scores them as bags
    # (40 + 2 bags + 2 nil bags - 100 = -56 too) -- but with N winning only 3, OpenSpiel makes
    # the contract (3 + 2 >= 4: 40 + 1 - 100 = -59) and tournament sets it (-40 + 2 - 100 = -138).
    assert score_hand([4, 3, 0, 3], [6, 3, 2, 2], rules=OPENSPIEL).points[0] == -56
    assert score_hand([4, 3, 0, 3], [6, 3, 2, 2], rules="tournament").points[0] == -56
    assert score_hand([4, 3, 0, 3], [3, 5, 2, 3], rules=OPENSPIEL).points[0] == -59
    assert score_hand([4, 3, 0, 3], [3, 5, 2, 3], rules="tournament").points[0] == -138
    assert openspiel_score([4, 3, 0, 3], [3, 5, 2, 3], [0, 0])[0] == -59


def test_same_deals_and_moves_as_pyspiel_give_the_same_hand_scores() -> None:
    """Play identical random deals and actions in pyspiel's ``spades`` and in
    ``SpadesGame(rules="openspiel")``; compare the legal sets at every step and the hand
    scores at the end (see the module docstring for where the legal sets may differ)."""
    pyspiel = pytest.importorskip("pyspiel")
    # no mercy bonus in the returns (a hand score can never reach -350 or +500 anyway)
    os_game = pyspiel.load_game("spades(use_mercy_rule=false)")
    rng = np.random.default_rng(2024)
    extra_spade_leads = partner_capped_bids = nil_hands = 0
    for h in range(1000):
        deal = [int(c) for c in rng.permutation(52)]
        scores = [0, 0] if h % 2 == 0 else [int(s) for s in rng.integers(0, 500, size=2)]
        state = os_game.new_initial_state()
        for c in deal:
            assert state.is_chance_node()
            state.apply_action(c)
        if scores != [0, 0]:
            state.set_current_scores(scores)
        game = SpadesGame(OPENSPIEL, seed=h)
        assert game.dealer == 3  # W deals, so N bids and leads
        game.set_hand(
            hands=[deal[p::4] for p in range(4)], scores=scores, bags=[scores[0] % 10, scores[1] % 10]
        )
        for p in range(4):  # same card ids: OpenSpiel writes suit then rank ("SA" for our "AS")
            theirs_txt = [state.action_to_string(p, c) for c in deal[p::4]]
            assert sorted(game.hand(p)) == sorted(t[1] + t[0] for t in theirs_txt)
        while not state.is_terminal():
            seat = state.current_player()
            assert seat == game.current_player
            theirs = list(state.legal_actions())
            ours = game.legal_actions()
            if theirs != ours:
                assert set(theirs) < set(ours)
                if game.phase == "bid":
                    partner_bid = game.bids[(seat + 2) % 4]
                    assert theirs == list(range(52, 52 + 14 - partner_bid))
                    partner_capped_bids += 1
                else:  # leading after spades are broken here (never in OpenSpiel)
                    assert game.phase == "play" and int(game.state[L.TRICK_SIZE]) == 0
                    assert game.state[L.SPADES_BROKEN] == 1
                    assert theirs == [c for c in ours if c < 39]
                    extra_spade_leads += 1
            action = theirs[int(rng.integers(len(theirs)))]
            state.apply_action(action)
            game.apply(action)
        assert game.is_hand_over
        result = game.hand_result()
        returns = state.returns()
        assert [int(returns[0]), int(returns[1])] == result["points"], (h, result)
        assert [int(returns[2]), int(returns[3])] == result["points"]
        assert list(state.get_current_scores()) == result["scores"]
        assert openspiel_score(result["bids"], result["tricks"], scores) == result["points"]
        nil_hands += 0 in result["bids"]
    assert extra_spade_leads > 200 and partner_capped_bids > 200 and nil_hands > 100
