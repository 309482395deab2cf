"""benchmarks/blind_nil_breakdown.py: hands grouped by the score before them (rebuilt game by game
from the hands' points) and by who declared Blind Nil, by hand and on real play."""

from __future__ import annotations

import importlib.util
from pathlib import Path

from spades_env.core import layout as L
from spades_env.eval.duplicate import BoardResult, Seating
from spades_env.eval.match import HandRecord, PlayResult, TeamHand

ROOT = Path(__file__).resolve().parents[1]
spec = importlib.util.spec_from_file_location("blind_nil_breakdown", ROOT / "benchmarks" / "blind_nil_breakdown.py")
bnb = importlib.util.module_from_spec(spec)
spec.loader.exec_module(bnb)

BN = L.BID_BLIND_NIL


def _team(points: int) -> TeamHand:
    return TeamHand(points, 0, 0, 0, 0, 0, 0, 0)


def _hand(game: int, bids: tuple[int, ...], ns: int, ew: int) -> HandRecord:
    return HandRecord(game, 0, (0, 0, 0, 0), bids, (0, 0, 0, 0), (_team(ns), _team(ew)))


def test_groups_by_score_before_the_hand_and_blind_nil():
    seat = ("p", "o", "p", "o")
    run = PlayResult(
        hands=[
            _hand(0, (3, 4, 3, 4), 120, 0),  # 0-0: within 100; then NS (the policy) leads 120-0
            _hand(0, (3, BN, 3, 4), 50, -200),  # E-W 100+ behind, declares BN and fails
            _hand(1, (3, 4, 3, 4), -10, 60),  # a new game: the score starts again at 0-0
        ]
    )
    flipped = PlayResult(hands=[_hand(0, (BN, 2, 4, 3), 60, -30)])  # policy at E-W here, 0-0 before
    res = [BoardResult((0, 0), [(Seating(seat, 0), run), (Seating(seat, 1), flipped)])]
    g = bnb.breakdown(res)
    assert g[("within 100", "-", "-")] == [2, 120 + (-10 - 60)]
    assert g[("opponents 100+ behind", "-", "opponents BN")] == [1, 250]
    assert g[("within 100", "-", "opponents BN")] == [1, -30 - 60]  # the policy is E-W: N declared
    assert sum(c for c, _ in g.values()) == 4
    # another deficit moves the BN hand (E-W 120 behind) out of the trailing group
    g150 = bnb.breakdown(res, 150)
    assert g150[("within 150", "-", "opponents BN")] == [2, 250 + (-30 - 60)]


def test_real_play_contributions_add_up_to_the_margin():
    from spades_env.eval.duplicate import run_duplicate

    res = run_duplicate(("blind", "blind"), ("heuristic", "heuristic"), 4, seed=3, rules="house", batched=True)
    g = bnb.breakdown(res, 100)
    hands = [h for b in res for s, r in b.runs for h in r.hands]
    margin = sum(h.teams[s.a_team].points - h.teams[1 - s.a_team].points for b in res for s, r in b.runs for h in r.hands)
    assert sum(c for c, _ in g.values()) == len(hands) > 0
    assert sum(m for _, m in g.values()) == margin
    # under the house rule only a team 100 or more behind may declare Blind Nil
    for (sit, pol, opp), _ in g.items():
        assert pol == "-" or sit == "policy 100+ behind"
        assert opp == "-" or sit == "opponents 100+ behind"


def test_declared_blind_nil_reads_each_teams_seats_in_both_games():
    four = _hand(0, (3, 4, BN, 4), 0, 0)
    assert bnb.declared_blind_nil(four, 0) and not bnb.declared_blind_nil(four, 1)
    two = HandRecord(0, 0, (0, 0), (4, BN), (9, 4), (_team(0), _team(0)))  # seat 0, seat 1
    assert not bnb.declared_blind_nil(two, 0) and bnb.declared_blind_nil(two, 1)
