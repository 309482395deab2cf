"""game_value: the chance of winning from a score, by value iteration over the outcome table."""

from __future__ import annotations

import numpy as np
import pytest

from spades_env.core import layout as L
from spades_env.core.engine import blind_open_at
from spades_env.core.rules import load_rules
from spades_env.policies.bots.blind_value import OPT_BLIND, OPT_SEE
from spades_env.policies.bots.game_value import (
    GRID_STEP,
    _mean_after,
    chance_at,
    game_value_table,
    hand_points_table,
)
from spades_env.policies.bots.netsearch import VALUE_GAME, VALUE_SCORE, row_values

NO_BLIND = {"name": "no_blind", "blind_nil": False, "blind_nil_exchange": 0}


@pytest.fixture(scope="module", params=["house", "tournament", "no_blind"])
def rules_table(request):
    rules = load_rules(NO_BLIND if request.param == "no_blind" else request.param)
    params = rules.to_params()
    table, low = game_value_table(params)
    return request.param, params, table, low


def test_a_game_is_fair_from_level_scores_and_the_two_sides_add_up(rules_table):
    _, params, table, low = rules_table
    rng = np.random.default_rng(0)
    for own, opp in rng.integers(-300, 480, size=(40, 2)):
        assert chance_at(table, low, own, opp, params) + chance_at(table, low, opp, own, params) == pytest.approx(1, abs=2e-3)
    assert chance_at(table, low, 120, 120, params) == pytest.approx(0.5, abs=1e-3)
    assert chance_at(table, low, 510, 300, params) == 1.0 and chance_at(table, low, 300, 500, params) == 0.0


def test_the_table_is_the_fixed_point_of_a_hand(rules_table):
    """At grid scores the chance equals the mean chance after one hand, each team offered a
    Blind Nil taking its better answer (the value iteration converged)."""
    _, params, table, low = rules_table
    pts = hand_points_table(params)
    for own, opp in [(0, 0), (150, 40), (40, 150), (300, 420), (-100, 60)]:
        us, them = blind_open_at(opp - own, params), blind_open_at(own - opp, params)
        best = -1.0
        for ours in [OPT_SEE] + ([OPT_BLIND] if us else []):
            best = max(best, min(_mean_after(table, low, own, opp, pts, ours, t, params)
                                 for t in [OPT_SEE] + ([OPT_BLIND] if them else [])))
        i, j = (own - low) // GRID_STEP, (opp - low) // GRID_STEP
        assert table[int(i), int(j)] == pytest.approx(best, abs=1e-4)


@pytest.mark.parametrize("rules", ["tournament", NO_BLIND])
def test_more_points_are_better_where_no_deficit_changes_the_hands(rules):
    """Tournament rules offer a Blind Nil at any score, Blind Nil off never: more points, a
    better chance (house rules differ: the next test)."""
    params = load_rules(rules).to_params()
    table, low = game_value_table(params)
    for opp in (-100, 100, 300, 450):
        row = [chance_at(table, low, own, opp, params) for own in range(-200, 500, 10)]
        assert np.all(np.diff(row) >= -1e-6)


def test_house_rules_value_the_blind_nil_a_deficit_of_100_brings():
    """Under house rules a team 100 or more behind may bid Blind Nil (worth about 150 points a
    hand in the table): trailing by 100 is a better chance than trailing by 90, and leading by
    100 a worse one than leading by 90; a margin or a normal model says the opposite."""
    params = load_rules("house").to_params()
    table, low = game_value_table(params)
    assert chance_at(table, low, 200, 300, params) > chance_at(table, low, 200, 290, params) + 0.02
    assert chance_at(table, low, 300, 200, params) < chance_at(table, low, 290, 200, params) - 0.02
    base = np.zeros(L.STATE_SIZE, dtype=np.int64)
    base[L.NUM_SEATS] = 4
    base[L.SCORES : L.SCORES + 2] = (200, 200)
    rows = np.repeat(base[None], 2, axis=0)
    rows[0, L.SCORES] = 290  # the hand leaves us 90 ahead
    rows[1, L.SCORES] = 300  # 100 ahead: the other team gets a Blind Nil
    by_score = row_values(rows, base, params, VALUE_SCORE, 0.5, 100, -1.0, -1.0, table, low)
    by_game = row_values(rows, base, params, VALUE_GAME, 0.5, 100, -1.0, -1.0, table, low)
    assert by_score[1] - by_score[0] == pytest.approx(10)
    assert by_game[0] > by_game[1]
