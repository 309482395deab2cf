"""The evaluation arena: confidence intervals, duplicate pairing, determinism, brackets, CLI."""

from __future__ import annotations

import json

import numpy as np
import pytest

from helpers.arena import FIRST, LAST, RAND, Factory, FirstLegal, LastLegal
from spades_env.cli import main
from spades_env.core import layout as L
from spades_env.core.game import SpadesGame
from spades_env.core.rules import RulesConfig
from spades_env.core.scoring import score_hand
from spades_env.eval import match as arena_match
from spades_env.eval.boards import BoardResult, Seating, make_jobs, play_board, seatings
from spades_env.eval.duplicate import run_duplicate
from spades_env.eval.stats import bootstrap_ci, summarize, wilson_ci
from spades_env.eval.tournament import draw_bracket, run_bracket, run_mixed_table, run_round_robin
from spades_env.policies import registry
from spades_env.policies.base import RandomPolicy

RULES = RulesConfig().replace(max_hands=3)


# ---- confidence intervals ----------------------------------------------------------------
def test_wilson_matches_hand_computed_values():
    # p = 0.8, n = 10, z = 1.96: centre (0.8 + 0.19207) / 1.38415, half 1.96 sqrt(0.016 + 0.0096) / 1.38415
    lo, hi = wilson_ci(8, 10)
    assert lo == pytest.approx(0.4902, abs=1e-4) and hi == pytest.approx(0.9433, abs=1e-4)
    lo, hi = wilson_ci(5, 10)
    assert lo == pytest.approx(0.2366, abs=1e-4) and hi == pytest.approx(0.7634, abs=1e-4)
    lo, hi = wilson_ci(0, 10)  # upper bound z^2 / (n + z^2) = 3.8415 / 13.8415
    assert lo == 0.0 and hi == pytest.approx(0.2775, abs=1e-4)
    assert wilson_ci(0, 0) == (0.0, 1.0)
    with pytest.raises(ValueError, match="0 <= successes <= n, got 11 of 10"):
        wilson_ci(11, 10)
    with pytest.raises(TypeError, match="wilson_ci successes must be a number, got 'a'"):
        wilson_ci("a", 10)
    with pytest.raises(ValueError, match="wilson_ci n must be an integer of at least 0, got -1"):
        wilson_ci(0, -1)
    assert wilson_ci(2.5, np.int64(5)) == wilson_ci(2.5, 5)  # a draw counts half; NumPy counts are counts


def test_bootstrap_matches_hand_computed_values():
    # two clusters {0, 10}: resampled means 0, 5, 10 with probabilities 1/4, 1/2, 1/4
    assert bootstrap_ci([0.0, 10.0], seed=1) == (5.0, 0.0, 10.0)
    # ratio estimator, not a mean of ratios: clusters (10 points, 1 hand), (0 points, 3 hands)
    # give 10/4; resamples give 20/2, 10/4, 0/6 with probabilities 1/4, 1/2, 1/4
    est, lo, hi = bootstrap_ci([10.0, 0.0], [1.0, 3.0], seed=2)
    assert (est, lo, hi) == (2.5, 0.0, 10.0)
    assert bootstrap_ci([7.0, 7.0, 7.0], seed=3) == (7.0, 7.0, 7.0)
    # a large sample: close to mean +- 1.96 s / sqrt(n)
    x = np.random.default_rng(0).normal(3.0, 10.0, size=400)
    est, lo, hi = bootstrap_ci(x, seed=4)
    half = 1.96 * x.std(ddof=1) / np.sqrt(x.size)
    assert est == pytest.approx(x.mean())
    assert lo == pytest.approx(x.mean() - half, abs=0.15 * half)
    assert hi == pytest.approx(x.mean() + half, abs=0.15 * half)


def _th(points, contract, ctricks, bags, nil=(0, 0), blind=(0, 0)):
    return arena_match.TeamHand(points, contract, ctricks, nil[0], nil[1], blind[0], blind[1], bags)


def test_summary_numbers_by_hand():
    # team A: bid 8 took 10 (+82, 2 bags); then bid 5 took 5 plus a made Nil (+150)
    # team B: bid 4 took 3 (set, -40); then bid 6 took 8 (+62, 2 bags)
    a1, a2 = _th(82, 8, 10, 2), _th(150, 5, 5, 0, nil=(1, 1))
    b1, b2 = _th(-40, 4, 3, 0), _th(62, 6, 8, 2)

    def run(a_team, game_winner):
        hands = [
            arena_match.HandRecord(0, 0, (), (), (), (x, y) if a_team == 0 else (y, x))
            for x, y in ((a1, b1), (a2, b2))
        ]
        return arena_match.PlayResult(hands=hands, game_winners=[game_winner])

    board = BoardResult(key=(0, 0), runs=[(Seating((), 0), run(0, 0)), (Seating((), 1), run(1, 0))])
    s = summarize([board], "game", ("A", "B"))
    assert s["hands"] == 4
    assert s["margin_per_hand"] == {"mean": 105.0, "ci95": [105.0, 105.0]}  # (122 + 88) / 2
    assert s["hand_win"]["rate"] == 1.0
    assert s["game_win"]["k"] == 1.0 and s["game_win"]["n"] == 2  # A won as NS, lost as EW
    ta, tb = s["teams"]
    assert ta["points_per_hand"] == 116.0 and tb["points_per_hand"] == 11.0
    assert (ta["set_rate"]["k"], ta["set_rate"]["n"]) == (0, 4) and (
        tb["set_rate"]["k"],
        tb["set_rate"]["n"],
    ) == (2, 4)
    assert ta["nil_success"]["rate"] == 1.0 and tb["nil_success"]["n"] == 0
    assert ta["bags_per_hand"] == 1.0 and tb["bags_per_hand"] == 1.0
    assert ta["bid_error"] == 1.0 and tb["bid_error"] == 1.5


def test_hand_records_agree_with_the_scoring_core():
    g = SpadesGame(RulesConfig().replace(max_hands=6), seed=21)
    res = arena_match.play(g, [RandomPolicy(1), FirstLegal(), RandomPolicy(2), LastLegal()], "game")
    assert len(res.hands) == 6
    bags = (0, 0)
    for h in res.hands:
        bids = ["blind" if b == L.BID_BLIND_NIL else b for b in h.bids]
        score = score_hand(bids, list(h.tricks), bags)
        assert tuple(t.points for t in h.teams) == score.points
        for team, t in enumerate(h.teams):
            seats = (team, team + 2)
            assert t.nil_bids == sum(h.bids[s] == 0 for s in seats)
            assert t.nil_made == sum(h.bids[s] == 0 and h.tricks[s] == 0 for s in seats)
            assert t.blind_bids == sum(h.bids[s] == L.BID_BLIND_NIL for s in seats)
            assert t.contract == sum(h.bids[s] for s in seats if h.bids[s] not in (0, L.BID_BLIND_NIL))
            assert (bags[team] + t.bags) % 10 == score.bags[team]
        bags = score.bags


# ---- duplicate pairing ---------------------------------------------------------------------
def test_same_seed_deals_the_same_hands_whatever_the_play():
    logs = []
    for policy in (FirstLegal(), LastLegal()):
        g = SpadesGame(RULES, seed=123)
        arena_match.play(g, [policy] * 4, "game")
        logs.append([(h.dealer, h.hands) for h in g.hand_logs])
    assert len(logs[0]) == len(logs[1]) == 3
    assert logs[0] == logs[1]
    g = SpadesGame(RULES, seed=124)
    assert g.hand_logs[0].hands != logs[0][0][1]


def test_duplicate_swaps_partnerships_and_replays_the_same_deals():
    runs = seatings((FIRST, FIRST), (LAST, LAST))
    assert [r.a_team for r in runs] == [0, 1]
    assert runs[0].seats == (FIRST, LAST, FIRST, LAST) and runs[1].seats == (LAST, FIRST, LAST, FIRST)
    (job,) = make_jobs((FIRST, FIRST), (LAST, LAST), 1, seed=5, rules=RULES, fmt="game")
    board = play_board(job)
    (s0, r0), (s1, r1) = board.runs
    assert [(h.dealer, h.hands) for h in r0.hands] == [(h.dealer, h.hands) for h in r1.hands]
    assert len(r0.hands) == 3
    # FirstLegal chooses Blind Nil (or Nil), LastLegal sees its cards and bids 13: the bids
    # show who really sat where
    for seating, res in board.runs:
        for h in res.hands:
            for seat in range(4):
                a_seat = seat % 2 == seating.a_team
                assert (h.bids[seat] in (0, L.BID_BLIND_NIL)) if a_seat else h.bids[seat] == 13


def test_mixed_teams_play_four_runs_with_each_policy_in_each_seat():
    runs = seatings((FIRST, LAST), (RAND, RAND))
    assert len(runs) == 4
    for policy in (FIRST, LAST):
        seats = {s for r in runs for s in range(4) if r.seats[s] is policy}
        assert seats == {0, 1, 2, 3}
    for r in runs:
        a = r.a_team
        assert {r.seats[a], r.seats[a + 2]} == {FIRST, LAST}
    (job,) = make_jobs((FIRST, LAST), (RAND, RAND), 1, seed=9, rules=RULES, fmt="hand")
    board = play_board(job)
    assert len({h.hands for _, res in board.runs for h in res.hands}) == 1


def test_self_play_of_a_deterministic_policy_has_margin_exactly_zero():
    boards = run_duplicate((FIRST, FIRST), (FIRST, FIRST), 3, seed=1, rules=RULES, fmt="game")
    s = summarize(boards, "game")
    assert s["hands"] == 18
    assert s["margin_per_hand"] == {"mean": 0.0, "ci95": [0.0, 0.0]}
    # and a real difference shows: first-legal bidding (blind) nil against random play
    s2 = summarize(run_duplicate((FIRST, FIRST), (RAND, RAND), 3, seed=1, rules=RULES, fmt="game"), "game")
    assert s2["margin_per_hand"]["mean"] != 0.0


def test_same_seed_same_result_with_one_and_two_workers():
    kw = dict(seed=7, rules=RULES, fmt="game")
    one = summarize(run_duplicate((RAND, LAST), (FIRST, RAND), 4, workers=1, **kw), "game", seed=7)
    two = summarize(run_duplicate((RAND, LAST), (FIRST, RAND), 4, workers=2, **kw), "game", seed=7)
    assert one == two
    other = summarize(
        run_duplicate((RAND, LAST), (FIRST, RAND), 4, workers=1, **{**kw, "seed": 8}), "game", seed=7
    )
    assert other != one


def test_match_format_plays_best_of_three():
    rules = RulesConfig().replace(max_hands=10, mercy_rule=True)  # a team set for 260 ends a game
    boards = run_duplicate((FIRST, FIRST), (LAST, LAST), 1, seed=3, rules=rules, fmt="match")
    for _, res in boards[0].runs:
        assert res.match_winner in (0, 1)
        w = res.game_winners
        assert 2 <= len(w) <= 3 and w.count(res.match_winner) == 2
    s = summarize(boards, "match")
    assert s["match_win"]["n"] == 2 and s["game_win"]["n"] >= 4


# ---- tournaments ---------------------------------------------------------------------------
@pytest.mark.parametrize("n", [2, 3, 4, 5, 6, 7, 8])
def test_bracket_draw_gives_byes_to_drawn_teams(n):
    size = 1 << (n - 1).bit_length()
    drawn_byes = set()
    for seed in range(20):
        slots = draw_bracket(n, np.random.default_rng(seed))
        assert len(slots) == size // 2
        teams = [t for a, b in slots for t in (a, b) if t is not None]
        assert sorted(teams) == list(range(n))  # everyone plays or has a bye, once
        byes = [a for a, b in slots if b is None]
        assert len(byes) == size - n
        drawn_byes.update(byes)
    if size != n:
        assert len(drawn_byes) > size - n  # the byes really are drawn


@pytest.mark.parametrize("n", [3, 5, 6])
def test_bracket_with_byes_is_valid(n):
    teams = [(Factory(f"t{i}", "random"), Factory(f"t{i}", "random")) for i in range(n)]
    br = run_bracket(teams, 1, seed=n, rules=RULES, fmt="hand")
    names = br["teams"]
    first = br["rounds"][0]
    seen = [m["a"] for m in first] + [m["b"] for m in first if not m["bye"]]
    assert sorted(seen) == sorted(names)
    size = 1 << (n - 1).bit_length()
    assert sum(m["bye"] for m in first) == size - n
    entrants = [m["winner"] for m in first]
    for rnd in br["rounds"][1:]:
        assert not any(m["bye"] for m in rnd)
        assert [t for m in rnd for t in (m["a"], m["b"])] == entrants
        entrants = [m["winner"] for m in rnd]
    for rnd in br["rounds"]:
        for m in rnd:
            assert m["winner"] in (m["a"], m["b"])
    assert len(br["rounds"][-1]) == 1 and entrants == [br["champion"]]
    again = run_bracket(teams, 1, seed=n, rules=RULES, fmt="hand")
    assert again["champion"] == br["champion"] and again["rounds"] == br["rounds"]


def test_round_robin_ratings_and_mixed_table():
    rr = run_round_robin([(FIRST, FIRST), (LAST, LAST), (RAND, RAND)], 2, seed=1, rules=RULES, fmt="hand")
    assert {r["team"] for r in rr["standings"]} == {"first", "last", "rand"}
    m = rr["margin_matrix"]
    assert m[0][1] == -m[1][0] and m[0][0] is None
    ratings = [r["rating"] for r in rr["standings"]]
    assert ratings == sorted(ratings, reverse=True)
    mx = run_mixed_table([FIRST, LAST], (RAND, RAND), 1, seed=2, rules=RULES, fmt="hand")
    assert mx["margin_matrix"][0][1] == mx["margin_matrix"][1][0] is not None
    assert [s["runs"] for s in mx["matches"]] == [2, 4, 2]  # the mixed pair plays four runs


# ---- CLI -----------------------------------------------------------------------------------
@pytest.fixture
def test_policies():
    """Names 'first', 'last' and 'rand' for the CLI, through the loader hook."""
    loaders = list(registry._LOADERS)
    registry.register_policy_loader(
        lambda n: n in ("first", "last", "rand"), lambda n, s, r: Factory(n, n)(s, r)
    )
    yield
    registry._LOADERS[:] = loaders


def test_cli_eval_writes_json_and_png(tmp_path, capsys, test_policies):
    rc = main(
        ["eval", "random", "first+rand", "--games", "8", "--format", "game", "--max-hands", "2"]
        + ["--seed", "3", "--workers", "1", "--out", str(tmp_path), "--no-progress"]
    )
    assert rc == 0
    data = json.loads((tmp_path / "eval.json").read_text())
    assert data["team_a"] == "random" and data["team_b"] == "first+rand"
    assert data["boards"] == 2 and data["runs"] == 8 and data["hands"] == 16
    assert set(data["margin_per_hand"]) == {"mean", "ci95"}
    assert data["game_win"]["n"] == 8
    assert (tmp_path / "eval.png").read_bytes()[:4] == b"\x89PNG"
    assert "margin per hand" in capsys.readouterr().out


def test_cli_tournament_writes_bracket_ratings_and_mixed_table(tmp_path, capsys, test_policies):
    rc = main(
        ["tournament", "--teams", "first", "last", "rand", "--partners", "first", "last", "--against", "rand"]
        + ["--boards", "1", "--format", "hand", "--seed", "2", "--workers", "2", "--out", str(tmp_path)]
        + ["--no-progress"]
    )
    assert rc == 0
    data = json.loads((tmp_path / "tournament.json").read_text())
    assert data["bracket"]["champion"] in ("first", "last", "rand")
    assert sum(m["bye"] for m in data["bracket"]["rounds"][0]) == 1
    assert len(data["round_robin"]["standings"]) == 3
    assert data["mixed_partners"]["policies"] == ["first", "last"]
    assert (tmp_path / "tournament.png").read_bytes()[:4] == b"\x89PNG"
    out = capsys.readouterr().out
    assert "Champion" in out and "Mixed partners" in out


def test_spawned_workers_give_the_same_result(monkeypatch):
    kw = dict(seed=4, rules=RULES, fmt="hand")
    one = summarize(run_duplicate(("random", "random"), ("greedy", "greedy"), 2, workers=1, **kw), "hand")
    monkeypatch.setenv("SPADES_ARENA_START_METHOD", "spawn")
    two = summarize(run_duplicate(("random", "random"), ("greedy", "greedy"), 2, workers=2, **kw), "hand")
    assert one == two and one["hands"] == 4


def test_bad_policy_and_team_names_are_clear_errors():
    with pytest.raises(ValueError, match="joined by '\\+'"):
        arena_match.parse_team("a+b+c")
    with pytest.raises((ValueError, OSError, ImportError)):  # no loader (or torch), or no such file
        registry.resolve_policy("runs/no_such_model.safetensors", 0, RULES)
    with pytest.raises(ValueError, match="nosuchbot"):
        registry.resolve_policy("nosuchbot", 0, RULES)
    assert arena_match.parse_team("heuristic+search:budget=0.1") == ("heuristic", "search:budget=0.1")
    with pytest.raises(TypeError, match="a team is a policy name or two joined by '\\+', got 5 \\(int\\)"):
        arena_match.parse_team(5)  # once read as the policy '5'

    assert arena_match.team_label(("greedy", "greedy")) == "greedy"
