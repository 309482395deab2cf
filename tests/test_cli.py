"""The ``spades`` command: ``demo`` and ``replay``."""

from __future__ import annotations

import json

from spades_env.cli import main
from spades_env.core.cards import RANK_CHARS
from spades_env.io.records import FORMAT, load_record, replay_record


def _one_suit_record() -> dict:
    """Each seat dealt one suit (N clubs .. W spades); W bids 13 and wins every trick."""
    actions = [67, 52, 67, 55, 67, 56, 67, 65, 0, 13, 26, 39]
    for k in range(1, 13):
        actions += [39 + k, k, 13 + k, 26 + k]
    return {
        "format": FORMAT,
        "rules": "tournament",
        "first_dealer": 3,
        "hands": [
            {
                "dealer": 3,
                "scores_before": [0, 0],
                "bags_before": [0, 0],
                "deal": [[r + s for r in RANK_CHARS] for s in "CDHS"],
                "actions": actions,
                "result": {
                    "bids": [0, 3, 4, 13],
                    "tricks": [0, 0, 0, 13],
                    "points": [60, -160],
                    "scores": [60, -160],
                    "bags": [0, 0],
                },
            }
        ],
    }


def test_replay_good_file_prints_the_result(tmp_path, capsys) -> None:
    path = tmp_path / "good.json"
    path.write_text(json.dumps(_one_suit_record()))
    assert main(["replay", str(path)]) == 0
    out = capsys.readouterr().out
    assert "Game 1, hand 1: dealer W, N bids and leads" in out
    assert "NS: bid 4 + Nil, won  0  ->    +60 points,  score    60" in out
    assert "EW: bid 16, won 13  ->   -160 points,  score  -160" in out
    assert "OK: 1 hands, 60 actions replayed" in out


def test_replay_bad_file_names_the_first_bad_action(tmp_path, capsys) -> None:
    rec = _one_suit_record()
    rec["hands"][0]["actions"][11] = 1  # W plays 3C, a card N holds
    path = tmp_path / "bad.json"
    path.write_text(json.dumps(rec))
    assert main(["replay", str(path)]) == 2
    captured = capsys.readouterr()
    assert captured.out == ""
    err = captured.err
    assert str(path) in err
    assert "hands[0].actions[11]: illegal action 1 (3C) by seat W in phase 'play'" in err
    assert "legal: 39 (2S), 40 (3S), 41 (4S)" in err and "51 (AS)" in err


def test_replay_malformed_and_missing_files(tmp_path, capsys) -> None:
    rec = _one_suit_record()
    rec["hands"][0]["deal"][0][4] = "ZZ"
    path = tmp_path / "malformed.json"
    path.write_text(json.dumps(rec))
    assert main(["replay", str(path)]) == 2
    assert "hands[0].deal[0][4]: bad card string 'ZZ'" in capsys.readouterr().err
    assert main(["replay", str(tmp_path / "nope.json")]) == 2
    assert "cannot read record file" in capsys.readouterr().err


def test_demo_prints_each_hand_and_the_result(capsys) -> None:
    assert main(["demo", "--seed", "0", "--hands", "3"]) == 0
    out = capsys.readouterr().out
    assert "Spades demo: four random players, rules 'tournament', seed 0, at most 3 hand(s)" in out
    for k in (1, 2, 3):
        assert f"Game 1, hand {k}: dealer" in out
    assert "Game 1, hand 4" not in out
    assert out.count("  NS: bid ") == 3 and out.count("  EW: bid ") == 3
    assert "S: " in out and "H: " in out  # the deals are printed
    assert "Result: " in out
    # same seed, same game; another seed, another game
    assert main(["demo", "--seed", "0", "--hands", "3"]) == 0
    assert capsys.readouterr().out == out
    assert main(["demo", "--seed", "1", "--hands", "3"]) == 0
    assert capsys.readouterr().out != out


def test_demo_record_replays(tmp_path, capsys) -> None:
    path = tmp_path / "demo.json"
    assert main(["demo", "--seed", "4", "--hands", "2", "--record", str(path)]) == 0
    out = capsys.readouterr().out
    assert f"saved to {path}" in out
    rec = load_record(path)
    assert rec["meta"] == {"command": "spades demo", "seed": 4}
    assert len(rec["hands"]) == 2 and rec["final"]["truncated"] is True
    assert replay_record(rec).final == rec["final"]
    assert main(["replay", str(path)]) == 0
    assert "every score reproduced" in capsys.readouterr().out


def test_demo_other_presets_and_bad_rules(capsys) -> None:
    assert main(["demo", "--seed", "2", "--rules", "two_player", "--hands", "1"]) == 0
    out = capsys.readouterr().out
    assert "two random players" in out and "stock: " in out and "P0: bid" in out
    assert main(["demo", "--seed", "2", "--rules", "openspiel", "--hands", "1", "--no-deal"]) == 0
    out = capsys.readouterr().out
    assert "dealer W, N bids and leads" in out and "H: " not in out and "as dealt" not in out
    assert main(["demo", "--rules", "no_such_rules"]) == 2
    assert "unknown rules preset 'no_such_rules'" in capsys.readouterr().err
