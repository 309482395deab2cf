"""What the arena commands play, below the CLI: ``run_matchup`` (``spades eval``, each gauntlet
row) and ``run_tournament`` (``spades tournament``); and the commands' options reaching them."""

from __future__ import annotations

import pytest

from spades_env.cli import main
from spades_env.core.rules import load_rules
from spades_env.core.validate import InputError
from spades_env.eval.duplicate import run_duplicate
from spades_env.eval.matchup import boards_for, default_workers, run_matchup
from spades_env.eval.stats import summarize
from spades_env.eval.tournament import QUICK, QUICK_TEAMS, run_round_robin, run_tournament

SHORT = load_rules({"max_hands": 1})


def test_boards_round_up_to_whole_duplicate_boards():
    greedy, random = ("greedy", "greedy"), ("random", "random")
    assert boards_for(3, greedy, random) == 2  # two runs per board (partnerships swapped)
    assert boards_for(4, ("greedy", "random"), random) == 1  # a mixed pair: four runs per board
    assert boards_for(5, ("greedy", "random"), random) == 2
    assert boards_for(3, greedy, random, num_players=2) == 2
    with pytest.raises(InputError, match="games must be an integer of at least 1"):
        boards_for(0, greedy, random)
    assert default_workers(True) == 1 and 1 <= default_workers(False) <= 2


@pytest.mark.parametrize("team", ["heuristic", ("heuristic",), ("heuristic", "random", "greedy"), None])
def test_a_team_that_is_not_a_pair_is_refused_before_play(team):
    """A bare name once indexed its letters as seats (``'h'``, ``'e'``); three policies played the
    first two. Either team, four or two players, the same error, naming the team."""
    with pytest.raises(InputError, match="team A must be a pair of policies"):
        run_duplicate(team, ("random", "random"), 1, rules=SHORT, fmt="hand")
    with pytest.raises(InputError, match="team B must be a pair of policies"):
        run_duplicate(("random", "random"), team, 1, rules="two_player", fmt="hand")
    assert len(run_duplicate(["random", "greedy"], ("random", "random"), 1, rules=SHORT, fmt="hand")) == 1


@pytest.mark.parametrize("batched", [None, False, True])
def test_run_matchup_is_run_duplicate_summarized(batched):
    a, b = ("greedy", "greedy"), ("random", "random")
    s = run_matchup(a, b, 3, rules=SHORT, seed=4, batched=batched, workers=1)
    ref = summarize(run_duplicate(a, b, 2, seed=4, rules=SHORT), "game", ("greedy", "random"), seed=4)
    assert s.pop("seconds") >= 0
    assert s == ref
    labelled = run_matchup(a, b, 3, rules=SHORT, seed=4, labels=("A", "B"), workers=1)
    assert (labelled["team_a"], labelled["team_b"]) == ("A", "B")


def test_run_tournament_plays_the_parts_asked_for_in_order():
    seen = []
    out = run_tournament(
        ["random", "greedy", "heuristic"],
        1,
        partners=["greedy", "random"],
        against="greedy",
        rules=SHORT,
        seed=2,
        on_part=lambda name, result: seen.append(name),
    )
    assert seen == ["round_robin", "bracket", "mixed_partners"]
    assert set(out) == {"seed", "rules", "round_robin", "bracket", "mixed_partners", "seconds"}
    assert out["round_robin"] == run_round_robin(["random", "greedy", "heuristic"], 1, seed=2, rules=SHORT)
    assert out["mixed_partners"]["against"] == "greedy"
    only_rr = run_tournament(["random", "greedy"], 1, bracket=False, rules=SHORT)
    assert "bracket" not in only_rr and "round_robin" in only_rr and "mixed_partners" not in only_rr
    with pytest.raises(InputError, match="needs teams or partners"):
        run_tournament(None, 1, rules=SHORT)


def test_tournament_quick_and_eval_one_at_a_time_reach_the_eval_layer(monkeypatch, capsys):
    import spades_env.cli.eval as eval_cmd
    import spades_env.cli.tournament as tournament_cmd

    calls = {}

    def fake_tournament(teams, boards, **kw):
        calls["tournament"] = (list(teams), boards, kw)
        return {"seconds": 0.0}

    monkeypatch.setattr(tournament_cmd, "run_tournament", fake_tournament)
    assert main(["tournament", "--quick", "--no-progress"]) == 0
    teams, boards, kw = calls["tournament"]
    assert teams == list(QUICK_TEAMS) and boards == QUICK["boards"]
    assert kw["fmt"] == QUICK["fmt"] and kw["bracket_boards"] == QUICK["bracket_boards"]

    def fake_matchup(team_a, team_b, games, **kw):
        calls.setdefault("eval", []).append(kw["batched"])
        raise InputError("stop here")

    monkeypatch.setattr(eval_cmd, "run_matchup", fake_matchup)
    assert main(["eval", "greedy", "random", "--no-progress"]) == 2
    assert main(["eval", "greedy", "random", "--one-at-a-time", "--no-progress"]) == 2
    assert calls["eval"] == [None, False]  # None: batched where every policy has a batched form
    assert capsys.readouterr().err.count("spades eval: stop here") == 2


def test_summarize_refuses_what_run_duplicate_never_returns():
    boards = run_duplicate(("random", "random"), ("greedy", "greedy"), 1, rules=SHORT, fmt="hand")
    assert summarize(boards, "hand", ("random", "greedy"))["hands"] == 2
    for args, words in [
        ((boards, "set", ("a", "b")), "format must be one of"),
        (("boards", "hand", ("a", "b")), "boards must be a list of BoardResult"),
        (([boards[0], {"runs": []}], "hand", ("a", "b")), r"boards\[1\] must be a BoardResult"),
        ((boards, "hand", "ab"), "names must be two team labels"),
    ]:
        with pytest.raises(InputError, match=words):
            summarize(*args)
