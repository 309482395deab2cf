"""spades_env.eval.breakdown and ``spades breakdown``: contracts grouped by the Nils in the hand
from each team's side, and hands grouped by the score before them (rebuilt game by game from
the hands' points) and by who declared Blind Nil; by hand and on real play (the groups add up
to the arena's set counts and margin)."""

from __future__ import annotations

import argparse
import importlib

import pytest

from spades_env.core import layout as L
from spades_env.core.rules import load_rules
from spades_env.core.validate import InputError
from spades_env.eval import breakdown as bd
from spades_env.eval.boards import BoardResult, Seating
from spades_env.eval.duplicate import run_duplicate
from spades_env.eval.match import HandRecord, PlayResult, TeamHand
from spades_env.eval.stats import summarize

BN = L.BID_BLIND_NIL
MODULE = "spades_env.cli.breakdown"
cli_main = importlib.import_module("spades_env.cli.main")


def _team(points: int, contract: int = 0, tricks: int = 0, nil: int = 0, blind: int = 0) -> TeamHand:
    return TeamHand(points, contract, tricks, nil, 0, blind, 0, 0)


def _hand(ns: TeamHand, ew: TeamHand, game: int = 0, bids: tuple[int, ...] = (0, 0, 0, 0)) -> HandRecord:
    return HandRecord(game, 0, (0, 0, 0, 0), bids, (0, 0, 0, 0), (ns, ew))


# ---- by sets: contracts by who bid Nil ------------------------------------------------------
def test_nil_group_reads_both_teams_nils():
    plain, nil, blind = _team(0, 4, 4), _team(0, 4, 4, nil=1), _team(0, 4, 4, blind=1)
    assert bd.nil_group(plain, plain) == "no Nil"
    assert bd.nil_group(nil, plain) == "own Nil"
    assert bd.nil_group(blind, plain) == "own Nil"  # Blind Nil counts as a Nil
    assert bd.nil_group(plain, blind) == "opponents' Nil"
    assert bd.nil_group(nil, blind) == "both Nil"


def test_sets_by_hand():
    seat = ("p", "o", "p", "o")
    run = PlayResult(
        hands=[
            # N-S (the agent, team A) bid 5 alone and took 3: set; E-W bid 6 + Nil, made
            _hand(_team(-50, 5, 3), _team(160, 6, 7, nil=1)),
            # both teams Nil: N-S 3 made with a bag, E-W 4 set
            _hand(_team(131, 3, 4, nil=1), _team(-140, 4, 2, blind=1)),
            # E-W bid only Nils (no contract): only N-S's side counts
            _hand(_team(60, 6, 6), _team(100, 0, 0, nil=2)),
        ]
    )
    flipped = PlayResult(hands=[_hand(_team(70, 7, 7), _team(-80, 8, 4))])  # the agent at E-W, set
    res = [BoardResult((0, 0), [(Seating(seat, 0), run), (Seating(seat, 1), flipped)])]
    g = bd.breakdown(res, "sets")
    assert g == bd.set_breakdown(res)
    pol, opp = g["agent"], g["opponents"]
    assert pol["opponents' Nil"] == {"contracts": 2, "sets": 1, "margin": -210 + -40, "contract": 11, "tricks": 9}
    assert pol["both Nil"] == {"contracts": 1, "sets": 0, "margin": 271, "contract": 3, "tricks": 4}
    assert pol["no Nil"] == {"contracts": 1, "sets": 1, "margin": -150, "contract": 8, "tricks": 4}
    assert "own Nil" not in pol
    assert opp["own Nil"] == {"contracts": 1, "sets": 0, "margin": 210, "contract": 6, "tricks": 7}
    assert opp["both Nil"] == {"contracts": 1, "sets": 1, "margin": -271, "contract": 4, "tricks": 2}
    assert opp["no Nil"] == {"contracts": 1, "sets": 0, "margin": 150, "contract": 7, "tricks": 7}
    text = bd.breakdown_table(g, "sets")
    assert "| agent | no Nil | 1 | 100.0% | -150.0 | 8.00 | 4.00 | 25.00% |" in text
    assert "| agent | all | 4 | 50.0% |" in text


def test_a_side_without_contracts_has_no_rows():
    seat = ("p", "o", "p", "o")
    run = PlayResult(hands=[_hand(_team(60, 6, 6), _team(100, 0, 0, nil=2))])
    g = bd.set_breakdown([BoardResult((0, 0), [(Seating(seat, 0), run)])])
    assert g["opponents"] == {}
    text = bd.set_table(g)
    assert "| agent | all | 1 |" in text and "| opponents |" not in text


def test_sets_on_real_play_add_up_to_the_arena_set_counts():
    res = run_duplicate(("blind", "blind"), ("greedy", "greedy"), 3, seed=5, rules="house", batched=True)
    g = bd.breakdown(res, "sets")
    s = summarize(res, "game")
    for side, team in zip(("agent", "opponents"), s["teams"], strict=True):
        groups = g[side].values()
        assert sum(x["contracts"] for x in groups) == team["set_rate"]["n"] > 0
        assert sum(x["sets"] for x in groups) == team["set_rate"]["k"]


# ---- by blind-nil: hands by the score before them and who declared Blind Nil ------------------
def test_blind_nil_groups_by_score_before_the_hand_and_blind_nil():
    seat = ("p", "o", "p", "o")
    run = PlayResult(
        hands=[
            _hand(_team(120), _team(0), 0, (3, 4, 3, 4)),  # 0-0: within 100; then NS (the agent) leads 120-0
            _hand(_team(50), _team(-200), 0, (3, BN, 3, 4)),  # E-W 100+ behind, declares BN and fails
            _hand(_team(-10), _team(60), 1, (3, 4, 3, 4)),  # a new game: the score starts again at 0-0
        ]
    )
    flipped = PlayResult(hands=[_hand(_team(60), _team(-30), 0, (BN, 2, 4, 3))])  # agent at E-W, 0-0 before
    res = [BoardResult((0, 0), [(Seating(seat, 0), run), (Seating(seat, 1), flipped)])]
    g = bd.blind_nil_breakdown(res)
    assert g[("within 100", "-", "-")] == [2, 120 + (-10 - 60)]
    assert g[("opponents 100+ behind", "-", "opponents BN")] == [1, 250]
    assert g[("within 100", "-", "opponents BN")] == [1, -30 - 60]  # the agent is E-W: N declared
    assert sum(c for c, _ in g.values()) == 4
    # another deficit moves the BN hand (E-W 120 behind) out of the trailing group
    g150 = bd.blind_nil_breakdown(res, 150)
    assert g150[("within 150", "-", "opponents BN")] == [2, 250 + (-30 - 60)]
    # breakdown() reads the deficit from the rules (100 where they set none)
    house150 = load_rules({**load_rules("house").to_dict(), "blind_nil_min_deficit": 150})
    assert bd.breakdown(res, "blind-nil", house150) == g150
    assert bd.breakdown(res, "blind-nil", load_rules("tournament")) == g
    text = bd.breakdown_table(g, "blind-nil")
    assert text.startswith("4 hands, margin ")
    assert "| opponents 100+ behind | - | opponents BN | 1 | 25.0% | +250.0 | +62.50 |" in text


def test_blind_nil_on_real_play_contributions_add_up_to_the_margin():
    res = run_duplicate(("blind", "blind"), ("heuristic", "heuristic"), 4, seed=3, rules="house", batched=True)
    g = bd.blind_nil_breakdown(res, 100)
    hands = [h for b in res for s, r in b.runs for h in r.hands]
    margin = sum(h.teams[s.a_team].points - h.teams[1 - s.a_team].points for b in res for s, r in b.runs for h in r.hands)
    assert sum(c for c, _ in g.values()) == len(hands) > 0
    assert sum(m for _, m in g.values()) == margin
    # under the house rule only a team 100 or more behind may declare Blind Nil
    for (sit, pol, opp), _ in g.items():
        assert pol == "-" or sit == "agent 100+ behind"
        assert opp == "-" or sit == "opponents 100+ behind"


def test_declared_blind_nil_reads_each_teams_seats_in_both_games():
    four = _hand(_team(0), _team(0), 0, (3, 4, BN, 4))
    assert bd.declared_blind_nil(four, 0) and not bd.declared_blind_nil(four, 1)
    two = HandRecord(0, 0, (0, 0), (4, BN), (9, 4), (_team(0), _team(0)))  # seat 0, seat 1
    assert not bd.declared_blind_nil(two, 0) and bd.declared_blind_nil(two, 1)


def test_an_unknown_grouping_is_an_input_error():
    with pytest.raises(InputError, match="by must be one of sets, blind-nil"):
        bd.breakdown([], "bids")
    with pytest.raises(InputError, match="games must be"):
        bd.play_breakdown("heuristic", "greedy", 0, rules=load_rules("house"))


# ---- the command --------------------------------------------------------------------------------
@pytest.fixture()
def spades(monkeypatch):
    """``spades`` with the breakdown command (whether or not the command list names it yet)."""
    if MODULE not in cli_main.COMMAND_MODULES:
        monkeypatch.setattr(cli_main, "COMMAND_MODULES", (*cli_main.COMMAND_MODULES, MODULE))
    return cli_main.main


def test_register_adds_the_command_with_its_defaults():
    from spades_env.cli.breakdown import register

    parser = argparse.ArgumentParser(prog="spades")
    register(parser.add_subparsers(dest="command"))
    args = parser.parse_args(["breakdown", "spades4_v1"])
    assert (args.agent, args.opponents, args.rules, args.games, args.seed, args.by) == (
        "spades4_v1", ["heuristic"], ["house"], 400, 0, "sets"
    )
    args = parser.parse_args(["breakdown", "x", "--opponents", "heuristic", "blind", "--rules", "house", "no_blind",
                              "--games", "10", "--seed", "3", "--by", "blind-nil"])
    assert (args.opponents, args.rules, args.games, args.seed, args.by) == (
        ["heuristic", "blind"], ["house", "no_blind"], 10, 3, "blind-nil"
    )


def test_the_command_takes_the_matrix_rules_and_refuses_bad_ones(spades, capsys):
    run = ["breakdown", "heuristic", "--opponents", "greedy", "--games", "2", "--no-progress", "--workers", "1"]
    assert spades([*run, "--rules", "no_blind"]) == 0
    out = capsys.readouterr().out
    assert "heuristic + itself vs greedy x2, no_blind rules, 1 boards (2 games), seed 0" in out
    assert "| agent | all |" in out and "| opponents | all |" in out
    assert spades([*run, "--rules", "nope"]) == 2
    assert "spades breakdown: --rules 'nope': unknown rules preset 'nope'" in capsys.readouterr().err
    assert spades([*run[:4], "--games", "0"]) == 2
    assert "spades breakdown: --games must be" in capsys.readouterr().err
    assert spades([*run, "--opponents", "nobody"]) == 2
    assert "nobody" in capsys.readouterr().err


def test_the_command_tables_each_rules_and_opponent_and_groups_by_blind_nil(spades, capsys):
    argv = ["breakdown", "blind", "--opponents", "greedy", "heuristic", "--rules", "house", "tournament",
            "--games", "2", "--by", "blind-nil", "--no-progress", "--workers", "1"]
    assert spades(argv) == 0
    out = capsys.readouterr().out
    heads = [line for line in out.splitlines() if " + itself vs " in line]
    assert [h.split(",")[0:2] for h in heads] == [
        ["blind + itself vs greedy x2", " house rules"],
        ["blind + itself vs heuristic x2", " house rules"],
        ["blind + itself vs greedy x2", " tournament rules"],
        ["blind + itself vs heuristic x2", " tournament rules"],
    ]
    assert out.count("| score before the hand | agent | opponents |") == 4


def test_the_two_player_game_plays_heads_up(spades, capsys):
    argv = ["breakdown", "heuristic", "--opponents", "greedy", "--rules", "two_player", "--games", "2",
            "--no-progress", "--workers", "1"]
    assert spades(argv) == 0
    out = capsys.readouterr().out
    assert "heuristic vs greedy, two_player rules, 1 boards (2 games), seed 0" in out
    assert "| agent | all |" in out
