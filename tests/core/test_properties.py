"""Property tests over random seeded games, random rules and random legal play.

Every game is reproducible: hypothesis draws the seed (deal and dealer), the seed of the random
policy and the rules; a failure prints them.
"""

from __future__ import annotations

import random

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from helpers.game import play_random
from spades_env.core import IllegalActionError, RulesConfig, SpadesGame, load_rules, score_hand
from spades_env.core import layout as L
from spades_env.core.cards import FULL_DECK

SEEDS = st.integers(min_value=0, max_value=2**63 - 1)


@st.composite
def four_player_rules(draw) -> RulesConfig:
    """Four-player rules with every knob drawn; short games so they end."""
    blind = draw(st.booleans())  # the exchange and deficit only with Blind Nil (else contradictory)
    return load_rules(
        {
            "blind_nil": blind,
            "blind_nil_min_deficit": draw(st.sampled_from([0, 0, 50])) if blind else 0,
            "blind_nil_exchange": draw(st.integers(0, 3)) if blind else 0,
            "nil_value": draw(st.sampled_from([50, 100])),
            "blind_nil_value": draw(st.sampled_from([200, 300])),
            "bag_limit": draw(st.sampled_from([0, 3, 5, 10])),
            "bag_penalty": draw(st.sampled_from([50, 100])),
            "failed_nil_counts_toward_contract": draw(st.booleans()),
            "must_break_spades": draw(st.booleans()),
            "target_score": draw(st.sampled_from([30, 100, 500])),
            "mercy_rule": draw(st.booleans()),
            "mercy_threshold": draw(st.sampled_from([-200, -50])),
            "max_hands": draw(st.integers(1, 4)),
            "match_games": draw(st.sampled_from([1, 3])),
            "first_dealer": draw(st.integers(-1, 3)),
        }
    )


@st.composite
def two_player_rules(draw) -> RulesConfig:
    return load_rules(
        {
            "num_players": 2,
            "blind_nil_exchange": 0,
            "blind_nil": draw(st.booleans()),
            "bag_limit": draw(st.sampled_from([0, 3, 10])),
            "must_break_spades": draw(st.booleans()),
            "target_score": draw(st.sampled_from([30, 100, 500])),
            "max_hands": draw(st.integers(1, 4)),
            "match_games": draw(st.sampled_from([1, 3])),
        }
    )


ANY_RULES = st.one_of(
    four_player_rules(),
    two_player_rules(),
    st.sampled_from(["tournament", "openspiel", "two_player"]).map(
        lambda n: load_rules(n).replace(max_hands=2)
    ),
)


class Checker:
    """Checks every step and every scored hand of one random game."""

    def __init__(self, game: SpadesGame, rng: random.Random) -> None:
        self.game = game
        self.rng = rng
        self.played: list[int] = []
        self.hands_checked = 0
        self.refusals = 0
        self.game_points = [0, 0]

    def on_step(self, game: SpadesGame, action: int) -> None:
        legal = game.legal_actions()
        assert legal, "a seat must act with no legal action"
        assert action in legal
        mask = game.legal_mask()
        assert mask.sum() == len(legal) and all(mask[a] == 1 for a in legal)
        if game.phase == "play":
            self.played.append(action)
        assert (game.bags[0] >= 0) and (game.bags[1] >= 0)
        if self.rng.random() < 0.15:
            self.try_illegal(game, legal)

    def try_illegal(self, game: SpadesGame, legal: list[int]) -> None:
        illegal = [a for a in range(-1, 71) if a not in legal]
        bad = self.rng.choice(illegal)
        before = game.state.copy()
        n_actions = len(game.hand_logs[-1].actions)
        try:
            game.apply(bad)
        except IllegalActionError:
            pass
        else:
            raise AssertionError(f"illegal action {bad} was accepted in phase {game.phase}")
        assert np.array_equal(game.state, before), f"refused action {bad} changed the state"
        assert len(game.hand_logs[-1].actions) == n_actions
        self.refusals += 1

    def on_hand_end(self, game: SpadesGame) -> None:
        s = game.state
        n = game.num_seats
        assert game.legal_actions() == [] and game.current_player == -1
        # 13 tricks, 13 cards per seat, every card once
        assert int(s[L.TRICKS_PLAYED]) == 13
        assert sum(game.tricks_won) == 13
        assert len(self.played) == 13 * n
        assert len(set(self.played)) == 13 * n
        union = 0
        for seat in range(n):
            assert bin(int(s[L.PLAYED + seat])).count("1") == 13
            assert union & int(s[L.PLAYED + seat]) == 0
            union |= int(s[L.PLAYED + seat])
            assert game.hand(seat) == []
        assert union == sum(1 << c for c in self.played)
        if n == 4:
            assert union == FULL_DECK
            assert sorted(self.played) == list(range(52))
        else:
            discards = [int(s[L.DISCARDED + seat]) for seat in range(2)]
            assert bin(discards[0]).count("1") == bin(discards[1]).count("1") == 13
            assert union | discards[0] | discards[1] == FULL_DECK
        # the hand's score is the pure scoring function of (bids, tricks, bags before)
        log = game.hand_logs[-1]
        res = log.result
        assert res is not None
        expected = score_hand(res["bids"], res["tricks"], log.bags_before, game.rules)
        assert tuple(res["points"]) == expected.points
        assert tuple(res["bags"]) == expected.bags == game.bags
        # totals: the score before plus the hand's points
        assert tuple(res["scores"]) == game.scores
        for t in range(2):
            assert log.scores_before[t] + res["points"][t] == game.scores[t]
            assert 0 <= game.bags[t]
            if game.rules.bag_limit > 0:
                assert game.bags[t] < game.rules.bag_limit
        # the game's score is the sum of its hands' scores
        if log.scores_before == (0, 0) and int(s[L.HAND_NUM]) == 1:
            self.game_points = [0, 0]
        for t in range(2):
            self.game_points[t] += res["points"][t]
        assert tuple(self.game_points) == game.scores
        self.played = []
        self.hands_checked += 1


def run_checked(rules: RulesConfig, seed: int, policy_seed: int) -> Checker:
    game = SpadesGame(rules, seed=seed)
    assert game.hand_logs[0].scores_before == (0, 0)
    rng = random.Random(policy_seed)
    checker = Checker(game, random.Random(policy_seed + 1))
    play_random(game, rng, on_step=checker.on_step, on_hand_end=checker.on_hand_end)
    assert game.is_over
    # every hand of the match was checked and logged with a result
    assert checker.hands_checked == len(game.hand_logs) == int(game.state[L.TOTAL_HANDS])
    assert all(h.result is not None for h in game.hand_logs)
    if game.truncated:
        assert int(game.state[L.HAND_NUM]) == rules.max_hands
        assert int(game.state[L.MATCH_WINNER]) == -1
    else:
        wins = game.game_wins
        assert max(wins) == rules.match_games // 2 + 1
        assert int(game.state[L.MATCH_WINNER]) == int(np.argmax(wins))
    return checker


@settings(max_examples=100, deadline=None)
@given(rules=ANY_RULES, seed=SEEDS, policy_seed=st.integers(0, 2**32))
def test_random_games_keep_every_invariant(rules, seed, policy_seed):
    run_checked(rules, seed, policy_seed)


@settings(max_examples=50, deadline=None)
@given(seed=SEEDS, policy_seed=st.integers(0, 2**32))
def test_default_rules_random_games(seed, policy_seed):
    checker = run_checked(load_rules({"max_hands": 3}), seed, policy_seed)
    assert checker.hands_checked >= 1


@settings(max_examples=50, deadline=None)
@given(seed=SEEDS, policy_seed=st.integers(0, 2**32))
def test_game_boundaries_reset_scores(seed, policy_seed):
    """With a low target, games end and new ones start at 0: each hand log chains on."""
    game = SpadesGame({"target_score": 30, "max_hands": 6, "match_games": 3}, seed=seed)
    play_random(game, random.Random(policy_seed))
    logs = game.hand_logs
    assert logs[0].scores_before == (0, 0)
    for prev, nxt in zip(logs, logs[1:], strict=False):
        if prev.result["phase"] == "game_end":
            assert nxt.scores_before == (0, 0) and nxt.bags_before == (0, 0)
        else:
            assert prev.result["phase"] == "hand_end"
            assert nxt.scores_before == tuple(prev.result["scores"])
            assert nxt.bags_before == tuple(prev.result["bags"])
        # the dealer rotates every hand, across games too
        assert nxt.dealer == (prev.dealer + 1) % 4


@settings(max_examples=50, deadline=None)
@given(seed=SEEDS)
def test_same_seed_same_game(seed):
    """A seed fixes the deal and dealer; a seeded policy then fixes the whole game."""
    a = SpadesGame({"max_hands": 2}, seed=seed)
    b = SpadesGame({"max_hands": 2}, seed=seed)
    play_random(a, random.Random(seed % 1000))
    play_random(b, random.Random(seed % 1000))
    assert np.array_equal(a.state, b.state)
    assert [h.actions for h in a.hand_logs] == [h.actions for h in b.hand_logs]
