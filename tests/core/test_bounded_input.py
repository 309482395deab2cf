"""One bounded reader for every YAML and JSON input (core.files), numbers checked before the
core, contradictory rules refused (issue 37)."""

from __future__ import annotations

import os
import string

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from helpers.bad_input import BAD_NUMBERS, BILLION_LAUGHS, HUGE_INT
from spades_env.core.episode import EpisodeKnobs
from spades_env.core.files import MAX_INT_DIGITS, parse_json, parse_yaml, read_json_file, read_text_bounded
from spades_env.core.rules import RulesError, load_rules, rules_with
from spades_env.core.validate import InputError, SpadesError, brief


def test_billion_laughs_is_refused_quickly_with_a_short_message(tmp_path):
    path = tmp_path / "bomb.yaml"
    path.write_text(BILLION_LAUGHS)
    assert len(BILLION_LAUGHS) < 400
    with pytest.raises(RulesError, match="bomb.yaml.*aliases") as err:
        load_rules(path)
    assert len(str(err.value)) < 500


@pytest.mark.parametrize("text", [f"target_score: {HUGE_INT}\n", f"target_score: -{HUGE_INT}\n"])
def test_a_huge_integer_in_a_rules_file_is_a_clear_rules_error(tmp_path, text):
    path = tmp_path / "huge.yaml"
    path.write_text(text)
    with pytest.raises(RulesError, match=f"5000 digits.*at most {MAX_INT_DIGITS}") as err:
        load_rules(path)
    assert len(str(err.value)) < 500


@pytest.mark.parametrize("special", ["/dev/zero", "/dev/null", "fifo", "dir"])
def test_only_regular_files_are_read(tmp_path, special):
    if special == "fifo":
        path = tmp_path / "pipe.yaml"
        os.mkfifo(path)  # a reader would block forever
    elif special == "dir":
        path = tmp_path / "folder.yaml"
        path.mkdir()
    else:
        path = tmp_path / "device.yaml"
        path.symlink_to(special)  # a device under a rules file's name
    with pytest.raises(RulesError, match="regular file|directory"):
        load_rules(path)
    with pytest.raises(InputError, match="regular file|directory"):
        read_text_bounded(path, "record file")


def test_a_file_past_the_size_limit_is_refused(tmp_path):
    path = tmp_path / "big.yaml"
    path.write_text("# " + "x" * 200_000 + "\ntarget_score: 300\n")
    with pytest.raises(RulesError, match="bytes, more than the limit"):
        load_rules(path)
    with pytest.raises(InputError, match="more than the limit of 10 bytes"):
        read_json_file(path, "record file", limit=10)


@pytest.mark.parametrize(
    "text, words",
    [
        ('{"a": NaN}', "NaN is not a JSON number"),
        ('{"a": Infinity}', "Infinity is not a JSON number"),
        ('{"a": 1e999}', "overflows to infinity"),
        ('{"a": 1, "a": 2}', "appears twice"),
        (f'{{"a": {HUGE_INT}}}', "5000 digits"),
        ("[" * 10_000 + "]" * 10_000, "nested too deeply"),
        ('{"a": ', "not valid JSON"),
    ],
)
def test_strict_bounded_json(text, words):
    with pytest.raises(InputError, match=words) as err:
        parse_json(text, "x.json")
    assert len(str(err.value)) < 400


@pytest.mark.parametrize(
    "text, words",
    [("a: 1\na: 2\n", "duplicate key 'a'"), ("[" * 200 + "]" * 200, "nested"), ("a: *b\n", "not valid YAML")],
)
def test_safe_bounded_yaml(text, words):
    with pytest.raises(InputError, match=words):
        parse_yaml(text, "x.yaml")


def test_yaml_is_safe_no_python_objects():
    with pytest.raises(InputError):
        parse_yaml("a: !!python/object/apply:os.system ['true']\n", "x.yaml")


def test_brief_bounds_every_value():
    assert len(brief(10**5000)) < 60 and "5001 digits" in brief(10**5000)
    assert len(brief("x" * 10**6)) <= 80
    assert len(brief(list(range(10**5)))) <= 80
    assert brief(3) == "3"


@given(st.text(alphabet=string.printable, max_size=300))
@settings(max_examples=150, deadline=None)
def test_any_text_as_a_rules_file_loads_or_is_a_rules_error(tmp_path_factory, text):
    path = tmp_path_factory.mktemp("r") / "r.yaml"
    path.write_text(text)
    try:
        load_rules(path)
    except RulesError as exc:
        assert len(str(exc)) < 1500
    # anything else (ValueError from int(), RecursionError, TypeError...) fails the test


@given(st.one_of(st.sampled_from(BAD_NUMBERS), st.text(max_size=5), st.lists(st.integers(), max_size=2)))
@settings(max_examples=60, deadline=None)
def test_real_knobs_refuse_anything_but_a_finite_number(value):
    for knob in ("reward_scale", "illegal_reward"):
        with pytest.raises(InputError, match=knob):
            EpisodeKnobs(**{knob: value})


@pytest.mark.parametrize(
    "knob, value", [("reward_scale", -0.5), ("reward_scale", 1e7), ("illegal_reward", -1e9), ("illegal_reward", 1e9)]
)
def test_real_knobs_are_in_range(knob, value):
    with pytest.raises(InputError, match=knob):
        EpisodeKnobs(**{knob: value})


@pytest.mark.parametrize(
    "rules, words",
    [
        ({"blind_nil": False, "blind_nil_exchange": 3}, "blind_nil_exchange"),
        ({"blind_nil": False, "blind_nil_min_deficit": 100}, "blind_nil_min_deficit"),
        ({"mercy_rule": True, "mercy_threshold": 0}, "mercy_threshold"),
        ({"num_players": 2, "blind_nil_exchange": 3}, "two-player"),
        ({"first_dealer": 3, "num_players": 2, "blind_nil_exchange": 0}, "first_dealer"),
        ({"target_score": "500"}, "must be an integer"),
        ({"blind_nil": "no"}, "true or false"),
        ({"max_hands": 2.0}, "must be an integer"),
        ({"target_score": 10**5000}, "out of range"),
    ],
)
def test_contradictory_or_coerced_rules_are_refused(rules, words):
    with pytest.raises(RulesError, match=words) as err:
        load_rules(rules)
    assert len(str(err.value)) < 600


def test_blind_nil_off_alone_turns_its_exchange_off():
    assert load_rules({"blind_nil": False}).blind_nil_exchange == 0
    assert load_rules("tournament").replace(blind_nil=False).blind_nil_exchange == 0
    assert rules_with({"blind_nil": False}).blind_nil_min_deficit == 0


@pytest.mark.parametrize("name", ["../x", "../configs/rules/tournament", "a/b", "~x", ".hidden", "tournament "])
def test_a_preset_name_never_reaches_outside_the_presets(name):
    with pytest.raises(RulesError, match="unknown rules preset"):
        load_rules(name)


def test_every_refusal_is_a_spades_error():
    for bad in ({"bogus": 1}, 5, [1], "nope"):
        with pytest.raises(SpadesError):
            load_rules(bad)
