"""Records (issue 37): read boundedly and strictly, and every record the package writes
replays, mercy-rule games included."""

from __future__ import annotations

import json
import os

import pytest

from helpers.bad_input import HUGE_INT
from spades_env.core.game import SpadesGame
from spades_env.core.rules import load_rules
from spades_env.io.records import RecordError, load_record, record_from_game, replay_record, save_record
from spades_env.policies.base import RandomPolicy
from spades_env.policies.driver import drive


@pytest.mark.parametrize("threshold", [-1, -20, -60])
@pytest.mark.parametrize("seed", range(4))
def test_mercy_rule_games_saved_by_save_record_replay(tmp_path, threshold, seed):
    rules = load_rules({"mercy_rule": True, "mercy_threshold": threshold, "target_score": 150, "max_hands": 12})
    g = SpadesGame(rules, seed=seed, episode="match")
    drive(g, {s: RandomPolicy(seed * 10 + s) for s in range(4)})
    path = tmp_path / "mercy.json"
    save_record(record_from_game(g), path)
    assert replay_record(path).final["scores"] == list(g.scores)


def _good(tmp_path):
    g = SpadesGame(load_rules("tournament").replace(max_hands=1), seed=2, episode="hand")
    drive(g, {s: RandomPolicy(s) for s in range(4)})
    path = tmp_path / "good.json"
    save_record(record_from_game(g), path)
    return path


@pytest.mark.parametrize(
    "edit, words",
    [
        (lambda t: t.replace('"format"', f'"n": {HUGE_INT}, "format"', 1), "5000 digits"),
        (lambda t: t[:-2] + ', "meta": NaN}', "NaN"),
        (lambda t: t.replace('"format"', '"format": 1, "format"', 1), "appears twice"),
    ],
)
def test_bad_record_files_are_record_errors(tmp_path, edit, words):
    path = _good(tmp_path)
    path.write_text(edit(path.read_text().rstrip()) + "\n")
    with pytest.raises(RecordError, match=words) as err:
        load_record(path)
    assert len(str(err.value)) < 1000


@pytest.mark.parametrize("special", ["fifo", "/dev/zero", "dir"])
def test_a_record_is_read_only_from_a_regular_file(tmp_path, special):
    path = tmp_path / "r.json"
    if special == "fifo":
        os.mkfifo(path)
    elif special == "dir":
        path.mkdir()
    else:
        path.symlink_to(special)
    with pytest.raises(RecordError, match="regular file|directory"):
        load_record(path)


def test_a_huge_value_in_a_record_is_shown_briefly(tmp_path):
    path = _good(tmp_path)
    data = json.loads(path.read_text())
    data["hands"][0]["deal"][0][0] = "X" * 100_000
    with pytest.raises(RecordError) as err:
        load_record(data)
    assert len(str(err.value)) < 1000
