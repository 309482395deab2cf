"""``spades gauntlet``: one policy against the baseline ladder (the README's main job)."""

from __future__ import annotations

import json

import pytest

from spades_env.cli import main
from spades_env.core.rules import load_rules
from spades_env.eval.gauntlet import gauntlet_matchups, gauntlet_table, run_gauntlet


def test_matchups_self_partnered_then_mixed():
    pairs = gauntlet_matchups("p", ("random", "heuristic"), "heuristic")
    assert pairs == [
        (("p", "p"), ("random", "random")),
        (("p", "p"), ("heuristic", "heuristic")),
        (("p", "heuristic"), ("heuristic", "heuristic")),
    ]
    assert gauntlet_matchups("p", ("greedy",), None) == [(("p", "p"), ("greedy", "greedy"))]


def test_run_gauntlet_scores_each_matchup():
    rules = load_rules({"max_hands": 2})
    out = run_gauntlet(
        "greedy", 4, rules=rules, opponents=("random", "greedy"), partner="greedy", progress=False
    )
    assert [(s["team_a"], s["team_b"]) for s in out] == [
        ("policy", "random"),
        ("policy", "greedy"),
        ("policy+greedy", "greedy"),
    ]
    assert out[0]["margin_per_hand"]["mean"] > 100  # greedy crushes random, hand by hand
    assert out[1]["margin_per_hand"]["mean"] == pytest.approx(0.0)  # a mirror on duplicate deals
    assert out[2]["game_win"]["n"] == 4  # a mixed pair plays four runs per board
    table = gauntlet_table("greedy", out)
    assert "policy+greedy vs greedy" in table and "game win" in table


def test_cli_writes_json_and_plot(tmp_path, capsys):
    rc = main(
        [
            "gauntlet",
            "greedy",
            "--games",
            "2",
            "--opponents",
            "random",
            "--partner",
            "",
            "--max-hands",
            "1",
            "--workers",
            "1",
            "--no-progress",
            "--out",
            str(tmp_path),
        ]
    )
    assert rc == 0
    data = json.loads((tmp_path / "gauntlet.json").read_text())
    assert data["policy"] == "greedy" and len(data["matchups"]) == 1
    assert (tmp_path / "gauntlet.png").stat().st_size > 1000
    assert "policy vs random" in capsys.readouterr().out


def test_cli_rejects_no_games(capsys):
    assert main(["gauntlet", "greedy", "--games", "0"]) == 2
    assert "--games must be at least 1" in capsys.readouterr().err


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["matrix", "random", "--rules", "two_player", "--games", "2"], "the matrix plays partnerships"),
        (["gauntlet", "nosuchbot", "--games", "2", "--no-progress"], "unknown policy 'nosuchbot'"),
        (["eval", "/nonexistent/ckpt", "random", "--games", "2", "--no-progress"], "no such checkpoint"),
    ],
)
def test_cli_bad_input_is_a_message_not_a_traceback(argv, message, capsys):
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert message in err and "Traceback" not in err
    assert err.startswith(f"spades {argv[0]}: ") or f"\nspades {argv[0]}: " in err
