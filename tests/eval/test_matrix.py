"""``spades matrix``: one policy's gauntlet under several rule settings, a table per rules and
one plot, on a tiny game count."""

from __future__ import annotations

import json

import pytest

from spades_env.cli import main
from spades_env.core.rules import rules_item
from spades_env.core.validate import InputError
from spades_env.eval.matrix import matrix_table, run_matrix


def test_rules_item_items():
    label, r = rules_item("no_blind")
    assert label == "no_blind" and not r.blind_nil and r.blind_nil_exchange == 0 and r.target_score == 500
    label, r = rules_item("house")
    assert label == "house" and r.blind_nil_min_deficit == 100
    label, r = rules_item('short={"target_score": 300, "bag_limit": 7}')
    assert label == "short" and (r.target_score, r.bag_limit) == (300, 7)
    for bad, words in (
        ("nope", "unknown rules preset"),
        ('{"bag_limt": 7}', "unknown rule key"),
        ("{x", "JSON"),
    ):
        with pytest.raises(InputError, match=words):
            rules_item(bad)


def test_run_matrix_one_entry_per_rules():
    rules = [rules_item(x) for x in ("tournament", "no_blind")]
    rules = [(label, r.replace(max_hands=2)) for label, r in rules]
    out = run_matrix("heuristic", 2, rules, opponents=["random"], partner="greedy", progress=False)
    assert [e["label"] for e in out] == ["tournament", "no_blind"]
    assert all(len(e["matchups"]) == 2 for e in out)
    assert out[1]["rules"]["blind_nil"] is False
    assert all(t["blind_nil_bids_per_hand"] == 0 for m in out[1]["matchups"] for t in m["teams"])
    table = matrix_table("heuristic", out[0])
    assert "policy vs random" in table and "policy+greedy vs greedy" in table


def test_matrix_command_writes_a_table_per_rules_and_one_plot(tmp_path, capsys):
    args = ["matrix", "heuristic", "--games", "2", "--max-hands", "2", "--opponents", "random"]
    args += ["--partner", "", "--workers", "1", "--no-progress", "--out", str(tmp_path)]
    assert main(args) == 0
    text = capsys.readouterr().out
    for label in ("tournament:", "house:", "no_blind:"):
        assert label in text
    data = json.loads((tmp_path / "matrix.json").read_text())
    assert [e["label"] for e in data["rules"]] == ["tournament", "house", "no_blind"]
    assert (tmp_path / "matrix.png").stat().st_size > 0


def test_matrix_command_errors(capsys):
    assert main(["matrix", "heuristic", "--rules", "tournament", "nope", "--no-progress"]) == 2
    assert "spades matrix" in capsys.readouterr().err
    assert main(["matrix", "heuristic", "--rules", "tournament", "tournament"]) == 2
    assert "same label" in capsys.readouterr().err
    assert main(["matrix", "heuristic", "--games", "0"]) == 2


def test_matrix_workers_default_to_the_available_cpus(monkeypatch, capsys):
    import os

    import spades_env.cli.matrix as matrix_mod  # the command (the matrix itself: spades_env.eval.matrix)
    from spades_env.eval.boards import available_cpus

    assert 1 <= available_cpus() <= (os.cpu_count() or 1)
    seen = []

    def fake_run_matrix(policy, games, rules, **kw):
        seen.append(kw["workers"])
        return []

    monkeypatch.setattr(matrix_mod, "run_matrix", fake_run_matrix)
    monkeypatch.setattr(matrix_mod, "available_cpus", lambda: 5)
    assert main(["matrix", "heuristic", "--games", "2", "--no-progress"]) == 0
    assert main(["matrix", "heuristic", "--games", "2", "--workers", "3", "--no-progress"]) == 0
    assert seen == [5, 3]
    assert main(["matrix", "heuristic", "--workers", "0"]) == 2
    assert "--workers must be an integer of at least 1" in capsys.readouterr().err
