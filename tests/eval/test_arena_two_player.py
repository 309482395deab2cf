"""The arena under two-player rules: heads-up duplicate (the players swap seats on the same
deals), hand records of one seat per side, the batched path equal to the one-at-a-time path,
and the commands (``spades eval`` / ``spades gauntlet --rules two_player``)."""

from __future__ import annotations

import json

import pytest

from helpers.arena import FIRST, LAST, FirstLegal, LastLegal
from spades_env.cli import main
from spades_env.core import layout as L
from spades_env.core.game import SpadesGame
from spades_env.core.rules import load_rules
from spades_env.core.validate import InputError
from spades_env.eval import match as arena_match
from spades_env.eval.batched import play_boards_batched
from spades_env.eval.boards import make_jobs, play_board, seatings
from spades_env.eval.duplicate import play_boards, run_duplicate
from spades_env.eval.gauntlet import run_gauntlet
from spades_env.eval.stats import summarize
from spades_env.eval.tournament import run_mixed_table

TWO = load_rules("two_player").replace(max_hands=3)


def test_two_player_seatings_swap_the_two_seats():
    runs = seatings((FIRST, FIRST), (LAST, LAST), num_players=2)
    assert [(r.seats, r.a_team) for r in runs] == [((FIRST, LAST), 0), ((LAST, FIRST), 1)]


@pytest.mark.parametrize("teams", [(("heuristic", "random"), ("greedy", "greedy")), (("random", "random"), ("heuristic", "blind"))])
def test_two_player_sides_are_one_policy(teams):
    with pytest.raises(InputError, match="two-player game has no partners"):
        seatings(*teams, num_players=2)
    with pytest.raises(InputError, match="two-player game has no partners"):
        run_duplicate(*teams, 1, rules=TWO)


def test_two_player_board_replays_the_same_stock_with_seats_swapped():
    (job,) = make_jobs((FIRST, FIRST), (LAST, LAST), 1, seed=5, rules=TWO, fmt="game")
    board = play_board(job)
    assert len(board.runs) == 2
    stocks = []
    for seating, res in board.runs:
        g = SpadesGame(TWO, seed=job.deal_seed)
        pols = [FirstLegal() if spec is FIRST else LastLegal() for spec in seating.seats]
        replay = arena_match.play(g, pols, "game")
        assert replay == res  # the board's run is this game
        stocks.append([h.stock for h in g.hand_logs])
        assert len(res.hands) == 3
        for h in res.hands:
            assert len(h.bids) == len(h.tricks) == 2 and sum(h.tricks) == 13
            a = seating.a_team
            # FirstLegal declares Blind Nil (or bids Nil), LastLegal bids 13: who sat where
            assert h.bids[a] in (0, L.BID_BLIND_NIL) and h.bids[1 - a] == 13
    assert stocks[0] == stocks[1]  # the same deals, the players swapped


def test_two_player_hand_record_is_the_seat_alone():
    g = SpadesGame(TWO, seed=11)
    res = arena_match.play(g, [LastLegal(), LastLegal()], "hand")
    (h,) = res.hands
    for seat in (0, 1):
        t = h.teams[seat]
        assert t.contract == h.bids[seat] == 13
        assert t.contract_tricks == h.tricks[seat]
        assert t.set == (h.tricks[seat] < 13)
        # a set contract of 13 loses 130 (trick value 10); 13 tricks made win 130
        assert t.points == (130 if h.tricks[seat] == 13 else -130)
        assert t.nil_bids == t.blind_bids == 0
    assert [t.points for t in h.teams] == [int(x) for x in g.state[L.SCORES : L.SCORES + 2]]


def test_a_policy_against_itself_heads_up_has_margin_zero():
    res = run_duplicate(("heuristic", "heuristic"), ("heuristic", "heuristic"), 3, seed=1, rules=TWO)
    s = summarize(res, "game")
    assert s["hands"] == 18 and s["margin_per_hand"]["mean"] == 0.0
    for board in res:
        (s0, r0), (s1, r1) = board.runs
        # the same player in both seats with the seats' own seeds: one game twice, which
        # counts once for A and once against it
        assert s0.a_team == 0 and s1.a_team == 1 and r0 == r1


@pytest.mark.parametrize("fmt", ["hand", "game", "match"])
def test_two_player_batched_boards_equal_one_at_a_time(fmt):
    rules = load_rules("two_player").replace(target_score=150, max_hands=4)
    for teams in ((("heuristic", "heuristic"), ("random", "random")), (("greedy", "greedy"), ("blind", "blind"))):
        jobs = make_jobs(*teams, 3, seed=7, rules=rules, fmt=fmt)
        want = play_boards(jobs)
        assert play_boards_batched(jobs, slots=2) == want
        assert sum(len(pr.hands) for b in want for _, pr in b.runs) >= 6


def test_two_player_gauntlet_has_no_partner_row_and_the_baselines_rank():
    out = run_gauntlet("heuristic", 8, rules=load_rules("two_player"), opponents=["random"], progress=False)
    assert [(s["team_a"], s["team_b"]) for s in out] == [("policy", "random")]
    assert out[0]["margin_per_hand"]["mean"] > 50 and out[0]["game_win"]["rate"] > 0.8


def test_two_player_mixed_table_is_refused():
    with pytest.raises(InputError, match="mixed-partner table needs partners"):
        run_mixed_table(["random", "greedy"], "heuristic", 1, rules="two_player")


def test_eval_cli_two_player(tmp_path, capsys):
    argv = ["eval", "heuristic", "random", "--rules", "two_player", "--games", "4", "--no-progress"]
    assert main([*argv, "--out", str(tmp_path)]) == 0
    data = json.loads((tmp_path / "eval.json").read_text())
    assert data["runs"] == 4 and data["rules"]["num_players"] == 2
    assert main(["eval", "heuristic+random", "random", "--rules", "two_player", "--games", "2"]) == 2
    assert "two-player game has no partners" in capsys.readouterr().err
