"""The ``spades`` command: ``demo``, ``replay``, plain help for every command, and one seat spelling
(``--seat``, ``--viewer``)."""

from __future__ import annotations

import argparse
import json
import re

import pytest

from spades_env.cli import main
from spades_env.cli.common import doc_paragraph, plain
from spades_env.cli.main import build_parser
from spades_env.core.cards import RANK_CHARS
from spades_env.core.validate import InputError, parse_seat
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
    err = capsys.readouterr().err
    assert "cannot read record file" in err and err.count("nope.json") == 1  # the path named once
    (tmp_path / "text.json").write_text("not json")
    assert main(["replay", str(tmp_path / "text.json")]) == 2
    err = capsys.readouterr().err
    assert err.count("text.json") == 1 and "not valid JSON (line 1, column 1" in err
    assert err.startswith(f"spades replay: {tmp_path / 'text.json'}: ")


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


# ---- help is plain text ---------------------------------------------------------------------------
def _commands() -> dict:
    parser = build_parser()
    (sub,) = [a for a in parser._actions if isinstance(a, argparse._SubParsersAction)]
    return sub.choices


def test_every_command_is_registered_and_bench_is_gone() -> None:
    commands = _commands()
    assert {"demo", "eval", "gauntlet", "matrix", "play", "replay", "tournament"} <= set(commands)
    assert "bench" not in commands  # benchmarks are scripts: python benchmarks/NAME.py
    for name in commands:  # one module per command, in spades_env/cli/
        assert commands[name].get_default("func").__module__ == f"spades_env.cli.{name}", name


def test_help_of_every_command_is_plain_text(capsys) -> None:
    for argv in [["--help"], *([name, "--help"] for name in _commands())]:
        with pytest.raises(SystemExit) as exit_:
            main(argv)
        assert exit_.value.code == 0, argv
        text = capsys.readouterr().out
        assert "usage: spades" in text, argv
        for markup in (":class:", ":func:", ":mod:", ":data:", ":meth:", "``"):
            assert markup not in text, (argv, markup, text)
        assert not re.search(r":[a-z]+:`", text), (argv, text)


def test_plain_turns_rest_into_terminal_text() -> None:
    assert plain(":class:`~spades_env.policies.base.RandomPolicy` players") == "RandomPolicy players"
    assert (
        plain("see :func:`spades_env.core.validate.parse_seat`") == "see spades_env.core.validate.parse_seat"
    )
    assert plain("``--seat``, default\n  South") == "--seat, default South"
    assert plain(":mod:`the video module <spades_env.io.video>`") == "the video module"
    assert doc_paragraph("title\n\nsecond ``x``\nparagraph") == "second x paragraph"


# ---- one seat spelling for every command ----------------------------------------------------------
def test_parse_seat_spellings() -> None:
    for text, seat in [
        ("N", 0),
        ("e", 1),
        ("South", 2),
        ("WEST", 3),
        ("north", 0),
        ("2", 2),
        (" w ", 3),
        (3, 3),
    ]:
        assert parse_seat(text, 4) == seat, text
    for text, seat in [("P0", 0), ("p1", 1), ("0", 0), ("1", 1), (1, 1)]:
        assert parse_seat(text, 2) == seat, text
    for text, n, words in [
        ("X", 4, "--seat 'X' is not a seat of the 4-player game: give N, E, S, W"),
        ("4", 4, "--seat 4 is not a seat of the 4-player game (0..3)"),
        ("-1", 4, "--seat '-1' is not a seat"),
        ("P0", 4, "give N, E, S, W"),
        ("S", 2, "--seat 'S' is not a seat of the 2-player game: give P0, P1 or a number 0..1"),
        ("2", 2, "--seat 2 is not a seat of the 2-player game (0..1)"),
        ("", 4, "is not a seat"),
    ]:
        with pytest.raises(InputError, match=re.escape(words)):
            parse_seat(text, n, "--seat")


def _play_once(monkeypatch, capsys, *args: str) -> tuple[int, str, str]:
    monkeypatch.setattr("builtins.input", lambda prompt="": "q")
    rc = main(["play", "--max-hands", "1", "--opponents", "random", "--partner", "random", *args])
    captured = capsys.readouterr()
    return rc, captured.out, captured.err


def test_play_seat_by_letter_word_or_number(monkeypatch, capsys) -> None:
    for spelling, name in [("S", "S"), ("south", "S"), ("2", "S"), ("n", "N"), ("East", "E"), ("3", "W")]:
        rc, out, _ = _play_once(monkeypatch, capsys, "--seat", spelling)
        assert rc == 0 and f"You are {name}." in out and "Bye." in out, (spelling, out)
    rc, out, _ = _play_once(monkeypatch, capsys)  # default: South
    assert rc == 0 and "You are S." in out


def test_play_seat_in_the_two_player_game(monkeypatch, capsys) -> None:
    for spelling, name in [("P1", "P1"), ("p0", "P0"), ("1", "P1"), (None, "P0")]:
        seat = [] if spelling is None else ["--seat", spelling]
        rc, out, _ = _play_once(monkeypatch, capsys, "--rules", "two_player", *seat)
        assert rc == 0 and f"You are {name}." in out, (spelling, out)


def test_play_bad_seat_is_one_line(monkeypatch, capsys) -> None:
    for args, words in [
        (["--seat", "X"], "spades play: --seat 'X' is not a seat of the 4-player game: give N, E, S, W"),
        (["--seat", "4"], "spades play: --seat 4 is not a seat of the 4-player game (0..3)"),
        (
            ["--seat", "S", "--rules", "two_player"],
            "spades play: --seat 'S' is not a seat of the 2-player game",
        ),
    ]:
        rc, out, err = _play_once(monkeypatch, capsys, *args)
        assert rc == 2 and out == "" and err.startswith(words) and len(err.strip().splitlines()) == 1, (
            args,
            err,
        )


def _replay_viewer(monkeypatch, capsys, path, *viewer: str) -> tuple[int, list, str, str]:
    import spades_env.io.video as video

    seen: list = []

    def frames(record, viewer=None):
        seen.append(viewer)
        return iter(())

    monkeypatch.setattr(video, "record_frames", frames)
    monkeypatch.setattr(video, "write_video", lambda frames, path, fps=2.0: len(list(frames)))
    rc = main(["replay", str(path), "--video", str(path.parent / "x.gif"), *viewer])
    captured = capsys.readouterr()
    return rc, seen, captured.out, captured.err


def test_replay_viewer_by_letter_word_or_number(tmp_path, monkeypatch, capsys) -> None:
    path = tmp_path / "good.json"
    path.write_text(json.dumps(_one_suit_record()))
    for spelling, seat in [("S", 2), ("south", 2), ("2", 2), ("w", 3), ("NORTH", 0), ("1", 1)]:
        rc, seen, out, _ = _replay_viewer(monkeypatch, capsys, path, "--viewer", spelling)
        assert rc == 0 and seen == [seat] and "Video:" in out, (spelling, seen)
    rc, seen, _, _ = _replay_viewer(monkeypatch, capsys, path)
    assert rc == 0 and seen == [None]  # every hand shown
    rc, seen, out, err = _replay_viewer(monkeypatch, capsys, path, "--viewer", "X")
    assert rc == 2 and seen == [] and out == ""  # refused before anything is printed
    assert err.startswith("spades replay: --viewer 'X' is not a seat of the 4-player game: give N, E, S, W")
    rc, seen, out, err = _replay_viewer(monkeypatch, capsys, path, "--viewer", "5")
    assert rc == 2 and out == "" and "--viewer 5 is not a seat of the 4-player game (0..3)" in err


def test_replay_viewer_in_the_two_player_game(tmp_path, monkeypatch, capsys) -> None:
    path = tmp_path / "two.json"
    assert main(["demo", "--rules", "two_player", "--hands", "1", "--record", str(path)]) == 0
    capsys.readouterr()
    for spelling, seat in [("P1", 1), ("p0", 0), ("1", 1)]:
        rc, seen, _, _ = _replay_viewer(monkeypatch, capsys, path, "--viewer", spelling)
        assert rc == 0 and seen == [seat], spelling
    rc, seen, out, err = _replay_viewer(monkeypatch, capsys, path, "--viewer", "S")
    assert rc == 2 and out == "" and "--viewer 'S' is not a seat of the 2-player game: give P0, P1" in err


def test_eval_reads_rules_as_every_arena_command_does(tmp_path, capsys) -> None:
    """--rules takes a preset, a variant (no_blind) or a JSON object in eval as in matrix and
    exploit; the report holds the rules played."""
    for spec, key, value in (("no_blind", "blind_nil", False), ('{"bag_limit": 7}', "bag_limit", 7)):
        out = tmp_path / key
        args = ["eval", "random", "random", "--games", "2", "--format", "hand", "--rules", spec]
        assert main([*args, "--no-progress", "--out", str(out)]) == 0
        report = json.loads(next(out.glob("*.json")).read_text())
        assert report["rules"][key] == value
    assert main(["eval", "random", "random", "--rules", "no_such_rules"]) == 2
    assert "unknown rules preset 'no_such_rules'" in capsys.readouterr().err


@pytest.mark.parametrize(
    ("argv", "key", "want"),
    [
        (["breakdown", "x", "--rules", "house", "--rules", "no_blind"], "rules", ["house", "no_blind"]),
        (["breakdown", "x", "--opponents", "a", "b", "--opponents", "c"], "opponents", ["a", "b", "c"]),
        (["matrix", "x", "--rules", "house", "--rules", "tournament"], "rules", ["house", "tournament"]),
        (["matrix", "x", "--opponents", "a", "--opponents", "b"], "opponents", ["a", "b"]),
        (["gauntlet", "x", "--opponents"], "opponents", []),
        (["tournament", "--teams", "a", "b", "--teams", "c"], "teams", ["a", "b", "c"]),
        (["tournament", "--partners", "a", "--partners", "b"], "partners", ["a", "b"]),
    ],
)
def test_a_repeated_list_option_adds_up(argv, key, want) -> None:
    """``--rules a --rules b`` is ``--rules a b``: the first list is not silently dropped, and
    the default is replaced, not extended."""
    from spades_env.cli.main import build_parser

    parser = build_parser()
    base = argv[:1] if argv[0] == "tournament" else argv[:2]
    before = getattr(parser.parse_args(base), key)
    assert getattr(parser.parse_args(argv), key) == want
    assert getattr(parser.parse_args(base), key) == before != want  # the default list untouched
