"""Hand-computed scoring cases (as OpenSpiel's spades_scoring tests), via ``score_hand``.

Seats N, E, S, W = 0..3; NS is team 0 (seats 0, 2), EW team 1 (seats 1, 3). Each case says
how its expected numbers were worked out.
"""

from __future__ import annotations

import pytest

from spades_env.core import load_rules, score_hand
from spades_env.core.rules import RulesConfig

B = "blind"
OPENSPIEL_NIL = {"failed_nil_counts_toward_contract": True}

# (id, bids, tricks, bags before, rules changes, expected points, expected bags after)
CASES = [
    # --- the tournament rules' worked examples -------------------------------------------------
    # NS bid 3 + 2 = 5, won 4 + 3 = 7: 10 x 5 + 2 bags = 52. EW bid 8, won 6: set, -80.
    ("bid5_won7", [3, 4, 2, 4], [4, 3, 3, 3], (0, 0), {}, (52, -80), (2, 0)),
    # contract made exactly, no bags
    ("made_exactly", [4, 3, 3, 3], [4, 3, 3, 3], (0, 0), {}, (70, 60), (0, 0)),
    # set: NS bid 8, won 7 -> -80; EW bid 6 won 6 -> 60
    ("set", [4, 3, 4, 3], [4, 3, 3, 3], (0, 0), {}, (-80, 60), (0, 0)),
    # set by one trick with bags already on the books: bags unchanged
    ("set_keeps_bags", [7, 2, 3, 1], [5, 3, 4, 1], (6, 2), {}, (-100, 31), (6, 3)),
    # --- Nil --------------------------------------------------------------------------------
    # N nil made (+100), S bid 4 won 5 (40 + 1): 141. EW bid 6 won 8: 62.
    ("nil_made_partner_made", [0, 3, 4, 3], [0, 4, 5, 4], (0, 0), {}, (141, 62), (1, 2)),
    # N nil made (+100), S bid 6 won 4: set -60 -> 40. EW bid 7 won 9: 72.
    ("nil_made_partner_set", [0, 4, 6, 3], [0, 5, 4, 4], (0, 0), {}, (40, 72), (0, 2)),
    # N nil failed with 2 tricks (-100, 2 bags); S bid 4 won 4 (40): -58. EW bid 6 won 7: 61.
    ("nil_failed_partner_made", [0, 3, 4, 3], [2, 4, 4, 3], (0, 0), {}, (-58, 61), (2, 1)),
    # N nil failed with 2 tricks: those 2 do not count toward S's 5, S won 3 -> set -50;
    # the 2 are bags: -100 - 50 + 2 = -148. EW bid 7 won 8: 71.
    ("failed_nil_not_toward_contract", [0, 4, 5, 3], [2, 4, 3, 4], (0, 0), {}, (-148, 71), (2, 1)),
    # same hand, OpenSpiel's rule: N's 2 tricks count toward the 5, made exactly: 50 - 100 = -50
    ("failed_nil_toward_contract", [0, 4, 5, 3], [2, 4, 3, 4], (0, 0), OPENSPIEL_NIL, (-50, 71), (0, 1)),
    # OpenSpiel's rule, overtricks: N nil with 3, S bid 2 won 4: 7 toward 2 -> 20 + 5 bags - 100
    ("failed_nil_toward_contract_bags", [0, 3, 2, 3], [3, 3, 4, 3], (0, 0), OPENSPIEL_NIL, (-75, 60), (5, 0)),
    # --- both partners Nil: +200, -200 or 0 for the nils (a failed nil's tricks are bags) ---
    # both made: +200. EW bid 6 won 13: 60 + 7.
    ("both_nil_made", [0, 3, 0, 3], [0, 6, 0, 7], (0, 0), {}, (200, 67), (0, 7)),
    # both failed with 1 and 2 tricks: -200, and the 3 tricks are bags: -197. EW bid 6 won 10.
    ("both_nil_failed", [0, 3, 0, 3], [1, 5, 2, 5], (0, 0), {}, (-197, 64), (3, 4)),
    # one made, one failed with 2 tricks: +100 - 100 + 2 bags = 2. EW bid 6 won 11.
    ("both_nil_split", [0, 3, 0, 3], [0, 5, 2, 6], (0, 0), {}, (2, 65), (2, 5)),
    # --- Blind Nil: +400, -400 or 0 for both partners blind -------------------------------------
    ("both_blind_made", [B, 3, B, 3], [0, 6, 0, 7], (0, 0), {}, (400, 67), (0, 7)),
    ("both_blind_failed", [B, 3, B, 3], [1, 5, 2, 5], (0, 0), {}, (-397, 64), (3, 4)),
    ("both_blind_split", [B, 3, B, 3], [0, 5, 2, 6], (0, 0), {}, (2, 65), (2, 5)),
    # one Blind Nil made (+200) and partner's 4 made with 1 over (41): 241
    ("blind_made_partner_made", [B, 4, 4, 4], [0, 4, 5, 4], (0, 0), {}, (241, 80), (1, 0)),
    # Blind Nil failed with 1 trick: -200 + 1 bag; partner bid 5 won 4: set -50 -> -249
    ("blind_failed_partner_set", [B, 4, 5, 3], [1, 4, 4, 4], (0, 0), {}, (-249, 71), (1, 1)),
    # Blind Nil made (+200), partner Nil failed with 1 trick (-100 + 1): 101
    ("blind_and_nil", [B, 4, 0, 4], [0, 6, 1, 6], (0, 0), {}, (101, 84), (1, 4)),
    # both teams: EW nil and blind nil both made, NS bid 3 + 3 won 13: 60 + 7 bags
    ("nils_on_both_sides", [3, 0, 3, B], [6, 0, 7, 0], (0, 0), {}, (67, 300), (7, 0)),
    # --- bags ---------------------------------------------------------------------------------
    # 9 bags before, 1 more: 10 -> -100, 0 carried. 50 + 1 - 100 = -49
    ("bag_penalty_exact", [3, 4, 2, 3], [4, 4, 2, 3], (9, 0), {}, (-49, 70), (0, 0)),
    # 8 bags before, 3 more: 11 -> -100, 1 carried. 50 + 3 - 100 = -47
    ("bag_penalty_carry", [3, 3, 2, 2], [5, 2, 3, 3], (8, 0), {}, (-47, 50), (1, 0)),
    # bag limit and penalty knobs: limit 5, penalty 50: NS bid 5 won 11 -> 56, 6 bags -> -50, 1 left;
    # EW bid 2 won 2 -> 20
    ("bag_knobs", [3, 1, 2, 1], [6, 1, 5, 1], (0, 0), {"bag_limit": 5, "bag_penalty": 50}, (6, 20), (1, 0)),
    # limit 5, 4 bags before and 11 more: 15 -> three penalties of 50, 0 left; 20 + 11 - 150.
    # EW both nil made: +200.
    (
        "bag_knob_many",
        [1, 0, 1, 0],
        [7, 0, 6, 0],
        (4, 0),
        {"bag_limit": 5, "bag_penalty": 50},
        (-119, 200),
        (0, 0),
    ),
    # bag limit 0: no bag penalty, bags just accumulate
    ("no_bag_limit", [3, 1, 2, 1], [6, 1, 5, 1], (9, 0), {"bag_limit": 0}, (56, 20), (15, 0)),
    # --- nil values and trick value knobs -------------------------------------------------------
    # nil 50, blind nil 300: NS nil made (+50), S bid 3 won 13 (30 + 10 bags -> -100, 0 left): -10
    # EW Blind Nil + Nil made: 300 + 50.
    (
        "nil_value_knobs",
        [0, B, 3, 0],
        [0, 0, 13, 0],
        (0, 0),
        {"nil_value": 50, "blind_nil_value": 300},
        (-10, 350),
        (0, 0),
    ),
    # trick value 5: NS bid 5 won 7 -> 25 + 2; EW bid 8 won 6 -> -40
    ("trick_value", [3, 4, 2, 4], [4, 3, 3, 3], (0, 0), {"trick_value": 5}, (27, -40), (2, 0)),
]


@pytest.mark.parametrize(
    ("bids", "tricks", "bags", "changes", "points", "bags_after"),
    [c[1:] for c in CASES],
    ids=[c[0] for c in CASES],
)
def test_score_hand_table(bids, tricks, bags, changes, points, bags_after):
    rules = RulesConfig().replace(**changes)
    result = score_hand(bids, tricks, bags, rules)
    assert result.points == points
    assert result.bags == bags_after


def test_bags_3_3_4_reach_ten():
    """Three hands of 3, 3 and 4 bags: the 10th bag costs 100 and removes 10 bags."""
    bags = (0, 0)
    got = []
    # NS bid 3 + 2 = 5 each hand and win 8, 8, then 9 tricks
    for tricks_ns in ((5, 3), (5, 3), (5, 4)):
        n, s = tricks_ns
        ew = 13 - n - s
        r = score_hand([3, 2, 2, 2], [n, ew // 2, s, ew - ew // 2], bags)
        got.append(r.points[0])
        bags = r.bags
    assert got == [53, 53, 50 + 4 - 100]
    assert bags[0] == 0


def test_bags_3_3_5_reach_eleven_carry_one():
    """Bags 3 + 3 + 5 = 11: -100 once, 1 bag carried into the next hand."""
    bags = (0, 0)
    got = []
    for n, s in ((5, 3), (5, 3), (5, 5)):
        ew = 13 - n - s
        r = score_hand([3, 2, 2, 2], [n, ew // 2, s, ew - ew // 2], bags)
        got.append((r.points[0], r.bags[0]))
        bags = r.bags
    assert got == [(53, 3), (53, 6), (50 + 5 - 100, 1)]
    # the carried bag counts toward the next penalty: NS bid 4 won 13, 1 + 9 = 10 bags
    r = score_hand([2, 2, 2, 2], [9, 0, 4, 0], bags)
    assert r.points[0] == 40 + 9 - 100
    assert r.bags[0] == 0


def test_openspiel_preset_counts_failed_nil_toward_contract():
    """The openspiel preset scores the failed-nil case like OpenSpiel (toward the contract)."""
    r = score_hand([0, 4, 5, 3], [2, 4, 3, 4], (0, 0), "openspiel")
    assert r.points == (-50, 71)
    assert score_hand([0, 4, 5, 3], [2, 4, 3, 4], (0, 0), "tournament").points == (-148, 71)


# OpenSpiel's own scoring checks (open_spiel/games/spades/spades_test.cc, ScoringTests). Its
# Score() takes the teams' current scores and counts their last digit as bags (99 -> 9 bags).
OPENSPIEL_CASES = [
    ([4, 5, 5, 0], [5, 3, 5, 0], (0, 0), 0, 91),
    ([13, 5, 0, 1], [4, 6, 1, 2], (0, 0), 0, -230),
    ([3, 3, 3, 2], [4, 2, 5, 2], (9, 0), 0, -37),
    ([2, 3, 3, 3], [2, 4, 2, 5], (0, 9), 1, -37),
]


@pytest.mark.parametrize(("bids", "tricks", "bags", "team", "points"), OPENSPIEL_CASES)
def test_openspiel_scoring_cases(bids, tricks, bags, team, points):
    assert score_hand(bids, tricks, bags, "openspiel").points[team] == points


def test_openspiel_case_differs_under_tournament_rules():
    """OpenSpiel's second case with a failed Nil: under the tournament rules the Nil bidder's
    trick is a bag and does not help the contract (13 bid, 4 won: -130 - 100 + 1)."""
    assert score_hand([13, 5, 0, 1], [4, 6, 1, 2], (0, 0), "tournament").points[0] == -229


@pytest.mark.parametrize(
    ("bids", "tricks", "bags", "points", "bags_after"),
    [
        # each player its own side: P0 bid 4 won 9 -> 40 + 5; P1 bid 3 won 4 -> 30 + 1
        ([4, 3], [9, 4], (0, 0), (45, 31), (5, 1)),
        # P0 set: bid 8 won 6 -> -80; P1 bid 5 won 7 -> 52
        ([8, 5], [6, 7], (0, 0), (-80, 52), (0, 2)),
        # P0 nil made, P1 bid 10 won 13 -> 103, 8 + 3 bags = 11 -> -100, 1 left
        ([0, 10], [0, 13], (0, 8), (100, 3), (0, 1)),
        # P0 nil failed with 1 trick: -100 + 1 bag
        ([0, 10], [1, 12], (0, 0), (-99, 102), (1, 2)),
        # P1 Blind Nil made, P0 bid 4 won 13
        ([4, B], [13, 0], (0, 0), (49, 200), (9, 0)),
        # P1 Blind Nil failed with 3 tricks: -200 + 3
        ([4, B], [10, 3], (0, 0), (46, -197), (6, 3)),
    ],
)
def test_two_player_scoring(bids, tricks, bags, points, bags_after):
    r = score_hand(bids, tricks, bags, "two_player")
    assert r.points == points
    assert r.bags == bags_after


@pytest.mark.parametrize(
    ("bids", "tricks", "match"),
    [
        ([3, 3, 3], [4, 3, 3, 3], "need 4 bids"),
        ([3, 3, 3, 3], [4, 3, 3, 4], "sum to 13"),
        ([3, 3, 3, 3], [14, -1, 0, 0], "non-negative"),
        ([3, 14, 3, 3], [4, 3, 3, 3], "seat 1"),
        ([3, 3, "double", 3], [4, 3, 3, 3], "seat 2"),
    ],
)
def test_score_hand_rejects_bad_input(bids, tricks, match):
    with pytest.raises(ValueError, match=match):
        score_hand(bids, tricks, (0, 0))


def test_score_hand_accepts_preset_names_and_dicts():
    assert score_hand([3, 4, 2, 4], [4, 3, 3, 3], (0, 0), load_rules({"trick_value": 5})).points == (27, -40)
    assert score_hand([3, 4, 2, 4], [4, 3, 3, 3], (0, 0), {"trick_value": 5}).points == (27, -40)


@pytest.mark.parametrize(
    ("limit", "before", "won", "penalty", "after"),
    [(10, 8, 5, 100, 3), (10, 9, 12, 200, 1), (10, 0, 9, 0, 9), (0, 40, 5, 0, 45), (7, 6, 1, 100, 0)],
)
def test_bag_penalty_by_hand(limit, before, won, penalty, after):
    """The bag rule alone: ``bag_penalty`` each time the total reaches the limit."""
    from spades_env.core.scoring import bag_penalty

    params = load_rules("tournament").replace(bag_limit=limit).to_params()
    assert bag_penalty(before, won, params) == (penalty, after)
