"""Bad input to the ``spades`` command, and inputs that once crashed the interpreter, run in a
subprocess (issue 13): each ends with one line on stderr naming the problem and a non-zero
exit status 2, never a traceback or a
signal, and nothing is played or written first."""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap

import pytest

from spades_env.cli import main
from spades_env.core.cards import RANK_CHARS
from spades_env.core.game import SpadesGame
from spades_env.io.records import record_from_game


def spades(*args: str, cwd) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "spades_env.cli", *args],
        cwd=cwd,
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )


def assert_one_line(proc: subprocess.CompletedProcess, command: str, words: str, rc: int = 2) -> None:
    err = proc.stderr.strip()
    assert proc.returncode == rc, (proc.returncode, err)
    assert "Traceback" not in err
    assert len(err.splitlines()) == 1, err
    assert err.startswith(f"spades {command}: "), err
    assert words in err, err


# ---- inputs that once crashed the interpreter (SIGSEGV) -----------------------------------------
CRASH_SCRIPT = textwrap.dedent(
    """
    import numpy as np
    from spades_env.envs.vector import VectorSpades
    from spades_env.core.validate import InputError

    v4, v2 = VectorSpades(2, seed=0), VectorSpades(2, rules="two_player", seed=0)
    garbage = v4.states[0].copy()
    garbage[3] = 100000  # the seat to act
    cases = [(v4, (0, s), {}) for s in (-1, -5, 100000, 4, 5, 6, 7)]
    cases += [(v2, (0, 3), {}), (v2, (0, 2), {}), (v4, (2, 0), {}), (v4, (-1, 0), {})]
    cases += [
        (v4, (0, 0), {"state": np.zeros(3, np.int64)}),
        (v4, (0, 0), {"state": np.zeros(128, np.float64)}),
        (v4, (0, 0), {"state": np.zeros(128, np.int64)}),
        (v4, (0, 0), {"state": garbage}),
        (v4, (0, 0), {"state": v2.states[0].copy()}),
        (v4, (0, 0), {"state": [0] * 128}),
    ]
    for v, args, kw in cases:
        try:
            v.observe_seat(*args, **kw)
            print("ACCEPTED", args)
        except InputError as exc:
            print("InputError", exc)
    print("alive")
    """
)


def test_observe_seat_out_of_range_is_an_error_not_a_crash(tmp_path):
    proc = subprocess.run(
        [sys.executable, "-c", CRASH_SCRIPT], cwd=tmp_path, capture_output=True, text=True, timeout=300
    )
    assert proc.returncode == 0, (proc.returncode, proc.stderr[-2000:])
    lines = proc.stdout.strip().splitlines()
    assert lines[-1] == "alive"
    assert len(lines) == 18 and all(line.startswith("InputError") for line in lines[:-1]), lines
    assert "seat 4 is not a seat of the 4-player game (0..3)" in proc.stdout
    assert "seat 3 is not a seat of the 2-player game (0..1)" in proc.stdout
    assert "state must be an int64 array of shape (128,), got int64 (3,)" in proc.stdout


# ---- records --------------------------------------------------------------------------------------
def one_suit_record() -> dict:
    g = SpadesGame(seed=5, dealer=3)
    g.set_hand(hands=[[r + s for r in RANK_CHARS] for s in "CDHS"])
    while not g.is_hand_over:
        g.apply(g.legal_actions()[0])
    return record_from_game(g)


@pytest.mark.parametrize(
    ("change", "words"),
    [
        (
            {"scores_before": [10**30, 0]},
            "hands[0].scores_before[0]: 1000000000000000000000000000000 is out of range",
        ),
        ({"bags_before": [10**30, 0]}, "hands[0].bags_before[0]:"),
        ({"scores_before": [600, 0]}, "a game is over once a team reaches target_score 500"),
        ({"bags_before": [25, 0]}, "bags[0] must be an integer in 0..9"),
    ],
)
def test_replay_of_impossible_or_huge_starting_scores(tmp_path, change, words):
    rec = one_suit_record()
    rec["hands"][0].update(change)
    rec.pop("start_scores")
    rec.pop("start_bags")
    (tmp_path / "r.json").write_text(json.dumps(rec))
    assert_one_line(spades("replay", "r.json", cwd=tmp_path), "replay", words, rc=2)


def test_replay_of_deep_non_utf8_and_duplicate_key_files(tmp_path):
    text = json.dumps(one_suit_record())
    (tmp_path / "deep.json").write_text(text[:-1] + ', "meta": ' + "[" * 100_000 + "]" * 100_000 + "}")
    assert_one_line(spades("replay", "deep.json", cwd=tmp_path), "replay", "nested too deeply", rc=2)
    bad = text.replace('"hands"', '"meta": {"who": "caf\xe9"}, "hands"').encode("latin-1")
    (tmp_path / "latin.json").write_bytes(bad)
    assert_one_line(
        spades("replay", "latin.json", cwd=tmp_path), "replay", "'latin.json' is not UTF-8 text", rc=2
    )
    (tmp_path / "dup.json").write_text(text[:-1] + ', "first_dealer": 0}')
    assert_one_line(
        spades("replay", "dup.json", cwd=tmp_path), "replay", "'first_dealer' appears twice", rc=2
    )


# ---- policy names ---------------------------------------------------------------------------------
@pytest.mark.parametrize(
    ("name", "words"),
    [
        ("search:budget=inf", "option budget must be a finite number, got inf"),
        ("search:budget=nan", "option budget must be a finite number, got nan"),
        ("search:samples=0", "option samples must be positive"),
        ("search:noise=5000", "option noise must be an integer in 0..1000"),
        ("nobot", "unknown policy 'nobot'"),
        ("netsearch:net=.", "net='.' is not a network"),  # a folder without a checkpoint
        ("netsearch:samples=x", "option samples='x' is not a valid int"),
        ("netsearch:net=spades2_v1", "net='spades2_v1' was trained for 2 players; these rules have 4"),
    ],
)
def test_eval_with_a_bad_policy_option(tmp_path, name, words):
    proc = spades("eval", name, "random", "--games", "2", "--no-progress", cwd=tmp_path)
    assert_one_line(proc, "eval", words)
    assert proc.stdout == ""


# ---- counts and paths -----------------------------------------------------------------------------
@pytest.mark.parametrize(
    ("args", "words"),
    [
        (
            ["eval", "random", "random", "--games", "-5", "--workers", "0"],
            "--workers must be an integer of at least 1, got 0",
        ),
        (["eval", "random", "random", "--games", "-5"], "--games must be an integer of at least 1, got -5"),
        (["eval", "random", "random", "--games", "0"], "--games must be an integer of at least 1, got 0"),
        (
            ["eval", "random", "random", "--workers", "-1"],
            "--workers must be an integer of at least 1, got -1",
        ),
        (["eval", "random", "random", "--seed", "-1"], "--seed must be an integer of at least 0"),
        (["tournament", "--teams", "random"], "--teams needs at least 2 teams"),
        (
            ["tournament", "--teams", "random", "greedy", "--boards", "0"],
            "--boards must be an integer of at least 1",
        ),
        (["gauntlet", "greedy", "--games", "0"], "--games must be at least 1"),
        (["demo", "--record", "no/such/dir/x.json"], "the folder"),
        (["demo", "--seed", "-3"], "--seed must be an integer of at least 0"),
    ],
)
def test_counts_and_paths_are_checked_before_play(tmp_path, args, words):
    proc = spades(*args, "--no-progress" if args[0] != "demo" else "--no-deal", cwd=tmp_path)
    assert_one_line(proc, args[0], words)
    assert proc.stdout == ""  # nothing was played
    assert not (tmp_path / "no").exists()


def test_out_onto_an_existing_file_and_record_onto_a_folder(tmp_path):
    (tmp_path / "F").write_text("keep me")
    proc = spades("eval", "random", "random", "--games", "2", "--no-progress", "--out", "F", cwd=tmp_path)
    assert_one_line(proc, "eval", "--out 'F' exists and is not a folder")
    assert proc.stdout == "" and (tmp_path / "F").read_text() == "keep me"
    (tmp_path / "folder").mkdir()
    proc = spades("demo", "--record", "folder", cwd=tmp_path)
    assert_one_line(proc, "demo", "--record 'folder' is a folder")
    assert proc.stdout == "" and list((tmp_path / "folder").iterdir()) == []


# ---- rules files ----------------------------------------------------------------------------------
def test_empty_duplicate_and_non_utf8_rules_files(tmp_path):
    (tmp_path / "empty.yaml").write_text("")
    assert_one_line(spades("demo", "--rules", "empty.yaml", cwd=tmp_path), "demo", "the rules file is empty")
    (tmp_path / "dup.yaml").write_text("target_score: 300\ntarget_score: 200\n")
    proc = spades("eval", "random", "random", "--rules", "dup.yaml", "--games", "2", cwd=tmp_path)
    assert_one_line(proc, "eval", "duplicate key 'target_score'")
    (tmp_path / "latin.yaml").write_bytes(b"name: caf\xe9\n")
    assert_one_line(spades("demo", "--rules", "latin.yaml", cwd=tmp_path), "demo", "is not UTF-8 text")


# ---- what the CLI catches -------------------------------------------------------------------------
def test_only_the_packages_own_errors_become_one_line(monkeypatch, capsys):
    from spades_env.cli import demo
    from spades_env.core.validate import InputError

    def own(args):
        raise InputError("bad thing\nsecond line")

    def bug(args):
        raise ValueError("an internal bug")

    monkeypatch.setattr(demo, "run", own)
    assert main(["demo"]) == 2
    assert capsys.readouterr().err == "spades demo: bad thing second line\n"
    monkeypatch.setattr(demo, "run", bug)
    with pytest.raises(ValueError, match="an internal bug"):
        main(["demo"])


ENCODE_SCRIPT = textwrap.dedent(
    """
    import numpy as np
    from spades_env.core.game import SpadesGame
    from spades_env.core.observation import OBS_SIZE, encode_observation

    g = SpadesGame(seed=0)
    for seat, size in ((-1, 771), (-1, OBS_SIZE), (4, OBS_SIZE), (100000, OBS_SIZE)):
        try:
            encode_observation(g.state, g.params, seat, np.zeros(size, np.float32))
            print("ACCEPTED", seat, size)
        except ValueError as exc:
            print("ValueError", exc)
    print("alive")
    """
)


def test_encode_observation_with_a_bad_seat_is_an_error_not_a_crash(tmp_path):
    proc = subprocess.run(
        [sys.executable, "-c", ENCODE_SCRIPT], cwd=tmp_path, capture_output=True, text=True, timeout=300
    )
    assert proc.returncode == 0, (proc.returncode, proc.stderr[-2000:])
    lines = proc.stdout.strip().splitlines()
    assert lines[-1] == "alive" and len(lines) == 5
    assert all(line.startswith("ValueError") for line in lines[:-1]), lines
