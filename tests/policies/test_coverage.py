"""Rules a network never trained under: ``settings_in_effect`` (hand-checked), the settings a
checkpoint's training did not cover, the warning on loading, and the CLI's one-line note."""

from __future__ import annotations

import warnings

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from spades_env.cli import main
from spades_env.core.rules import MATCH_SETTINGS, load_rules, rules_with, settings_in_effect
from spades_env.policies import load
from spades_env.policies.checkpoint import load_meta
from spades_env.policies.coverage import UntrainedRulesWarning, trained_rules, untrained_settings
from spades_env.policies.shipped import agents_dir


def _meta(*rules: str | dict) -> dict:
    return {"rules_family": [load_rules(r).to_dict() for r in rules]}


def _loading_warnings(agent: str, rules: str | dict) -> list[str]:
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        load(agent, rules=rules)
    return [str(w.message) for w in caught if issubclass(w.category, UntrainedRulesWarning)]


def test_settings_in_effect_by_hand() -> None:
    tournament = settings_in_effect(load_rules("tournament"))
    assert tournament["blind_nil_exchange"] == 3 and tournament["blind_nil_value"] == 200
    assert "mercy_threshold" not in tournament  # no mercy rule
    assert not set(MATCH_SETTINGS) & set(tournament)
    no_blind = settings_in_effect(rules_with({"blind_nil": False}))
    assert no_blind["blind_nil"] is False
    assert not {"blind_nil_exchange", "blind_nil_min_deficit", "blind_nil_value"} & set(no_blind)
    assert settings_in_effect(rules_with({"mercy_rule": True}))["mercy_threshold"] == -200
    two = settings_in_effect(load_rules("two_player"))
    assert two["num_players"] == 2 and two["blind_nil_exchange"] == 0


def test_match_settings_do_not_change_what_is_in_effect() -> None:
    base = load_rules("house")
    other = rules_with({"name": "mine", "first_dealer": 2, "match_games": 5, "max_hands": 40}, base)
    assert settings_in_effect(other) == settings_in_effect(base)


def test_untrained_settings_by_hand() -> None:
    meta = _meta("tournament", {"blind_nil": False})
    assert untrained_settings(meta, "tournament") == {}
    assert untrained_settings(meta, {"blind_nil": False, "target_score": 500}) == {}
    assert untrained_settings(meta, {"blind_nil_exchange": 0}) == {"blind_nil_exchange": (0, [3])}
    assert untrained_settings(meta, {"trick_value": 1, "bag_limit": 7}) == {
        "bag_limit": (7, [10]),
        "trick_value": (1, [10]),
    }
    only_off = _meta({"blind_nil": False})
    got = untrained_settings(only_off, "tournament")
    assert got["blind_nil"] == (True, [False])
    assert got["blind_nil_exchange"] == (3, [])  # never in effect in training
    assert untrained_settings({}, {"blind_nil_exchange": 0}) == {}  # nothing recorded: no claim
    assert untrained_settings({"rules": load_rules("two_player").to_dict()}, "two_player") == {}


@settings(max_examples=30, deadline=None)
@given(st.sampled_from(["spades4_net_v1", "spades4_net_v4", "spades4_net_v5", "spades2_v1"]), st.data())
def test_every_training_rule_set_is_covered(agent: str, data: st.DataObject) -> None:
    meta = load_meta(agents_dir() / agent)
    family = trained_rules(meta)
    assert family
    member = data.draw(st.sampled_from(family))
    match = data.draw(st.fixed_dictionaries({"max_hands": st.integers(1, 100), "first_dealer": st.integers(-1, 1)}))
    assert untrained_settings(meta, rules_with(match, member)) == {}


def test_loading_warns_for_an_untrained_setting() -> None:
    (text,) = _loading_warnings("spades4_v1", {"blind_nil_exchange": 0})
    assert "spades4_net_v1" in text and "blind_nil_exchange=0 (trained: 3)" in text
    assert _loading_warnings("spades4_net_v5", {"blind_nil_exchange": 0}) == []
    (text,) = _loading_warnings("spades2_v1", {"name": "x", "num_players": 2, "blind_nil_exchange": 0, "trick_value": 1})
    assert "trick_value=1 (trained: 10)" in text


@pytest.mark.parametrize("agent", ["spades4_v1", "spades4_net_v1", "spades4_net_v4", "spades4_net_v5"])
@pytest.mark.parametrize("rules", ["tournament", "house", {"blind_nil": False}])
def test_loading_is_silent_under_the_training_rules(agent: str, rules: str | dict) -> None:
    assert _loading_warnings(agent, rules) == []


def test_the_cli_prints_one_note_and_goes_on(capsys: pytest.CaptureFixture[str]) -> None:
    rc = main(["eval", "spades4_net_v1", "random", "--games", "2", "--rules", '{"blind_nil_exchange": 0}', "--no-progress"])
    assert rc == 0
    captured = capsys.readouterr()
    notes = [line for line in captured.err.splitlines() if line.strip()]
    assert len(notes) == 1, notes
    assert notes[0].startswith("spades eval: note: ") and "blind_nil_exchange=0 (trained: 3)" in notes[0]
    assert "margin per hand" in captured.out
