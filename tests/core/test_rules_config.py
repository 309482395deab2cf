"""Bad input is a clear error naming the problem, with no state changed: rules configs,
illegal actions, stepping after the end, bad preset deals."""

from __future__ import annotations

import dataclasses
import re

import numpy as np
import pytest

from helpers.game import do, hands_from_strings, one_suit_deal, play_hand
from spades_env.core import IllegalActionError, RulesConfig, RulesError, SpadesGame, load_rules, preset_names
from spades_env.core.game import DealError
from spades_env.core.rules import presets_dir


# ---- rules configs ---------------------------------------------------------------------
def test_unknown_key_names_the_key():
    with pytest.raises(RulesError, match="target_scor"):
        load_rules({"target_scor": 300})


@pytest.mark.parametrize(
    ("key", "value"),
    [
        ("target_score", 0),
        ("target_score", -5),
        ("bag_limit", -1),
        ("blind_nil_exchange", 14),
        ("num_players", 3),
        ("num_players", 5),
        ("match_games", 2),
        ("match_games", 0),
        ("first_dealer", 4),
        ("mercy_threshold", 10),
        ("max_hands", -1),
        ("trick_value", 0),
    ],
)
def test_out_of_range_value_names_the_key(key, value):
    with pytest.raises(RulesError, match=re.escape(f"'{key}'")):
        load_rules({key: value})
    with pytest.raises(RulesError, match=re.escape(f"'{key}'")):
        RulesConfig().replace(**{key: value})


@pytest.mark.parametrize(
    ("key", "value"),
    [
        ("blind_nil", "yes"),
        ("blind_nil", 1),
        ("must_break_spades", None),
        ("target_score", "500"),
        ("target_score", 500.0),
        ("bag_limit", True),
        ("name", 3),
    ],
)
def test_wrong_type_names_the_key(key, value):
    with pytest.raises(RulesError, match=re.escape(f"'{key}'")):
        load_rules({key: value})


def test_direct_construction_is_validated():
    with pytest.raises(RulesError, match="'target_score'"):
        RulesConfig(target_score=0)


def test_two_player_rules_constraints():
    with pytest.raises(RulesError, match="'blind_nil_exchange'"):
        load_rules({"num_players": 2, "blind_nil_exchange": 3})
    with pytest.raises(RulesError, match="'first_dealer'"):
        load_rules({"num_players": 2, "blind_nil_exchange": 0, "first_dealer": 2})


def test_yaml_file_errors_name_file_and_key(tmp_path):
    path = tmp_path / "myrules.yaml"
    path.write_text("num_players: 4\nbag_limt: 10\n")
    with pytest.raises(RulesError) as err:
        load_rules(path)
    assert "bag_limt" in str(err.value) and str(path) in str(err.value)
    path.write_text("target_score: -10\n")
    with pytest.raises(RulesError) as err:
        load_rules(str(path))
    assert "'target_score'" in str(err.value) and str(path) in str(err.value)
    path.write_text("target_score: [1, 2\n")
    with pytest.raises(RulesError, match="YAML"):
        load_rules(path)
    path.write_text("- 1\n- 2\n")
    with pytest.raises(RulesError, match="mapping"):
        load_rules(path)
    with pytest.raises(RulesError, match="does not exist"):
        load_rules(tmp_path / "missing.yaml")


def test_yaml_file_loads(tmp_path):
    path = tmp_path / "fast.yaml"
    path.write_text("target_score: 250\nmax_hands: 7\n")
    cfg = load_rules(path)
    assert cfg.target_score == 250 and cfg.max_hands == 7
    assert cfg.name == "fast"  # named after the file
    assert cfg.bag_limit == 10  # other rules keep their defaults


def test_unknown_preset_is_an_error():
    with pytest.raises(RulesError, match="tournamnet"):
        load_rules("tournamnet")


def test_presets_load():
    names = preset_names()
    assert {"tournament", "openspiel", "two_player"} <= set(names)
    for name in names:
        cfg = load_rules(name)
        assert cfg.name == name
        assert load_rules(presets_dir() / f"{name}.yaml") == cfg
    # the tournament preset is the default rules
    assert load_rules("tournament") == RulesConfig() == load_rules(None)
    os_rules = load_rules("openspiel")
    assert os_rules.failed_nil_counts_toward_contract and not os_rules.blind_nil
    assert os_rules.first_dealer == 3
    two = load_rules("two_player")
    assert two.num_players == 2 and two.blind_nil_exchange == 0 and two.target_score == 500


def test_rules_config_is_frozen():
    cfg = RulesConfig()
    with pytest.raises(dataclasses.FrozenInstanceError):
        cfg.target_score = 100  # type: ignore[misc]
    assert cfg.target_score == 500
    changed = cfg.replace(target_score=300)
    assert changed.target_score == 300 and cfg.target_score == 500
    assert load_rules(cfg) is cfg


def test_to_dict_round_trips():
    cfg = load_rules({"target_score": 250, "mercy_rule": True})
    assert load_rules(cfg.to_dict()) == cfg


# ---- illegal actions ---------------------------------------------------------------------
def snapshot(game: SpadesGame):
    return game.state.copy(), [list(h.actions) for h in game.hand_logs]


def assert_unchanged(game: SpadesGame, snap) -> None:
    state, actions = snap
    assert np.array_equal(game.state, state)
    assert [list(h.actions) for h in game.hand_logs] == actions


@pytest.mark.parametrize("action", [52, 0, 51, 68, 69, 70, -1, 1000])
def test_illegal_action_names_the_legal_set(action):
    game = SpadesGame(seed=3, dealer=3)  # N to choose Blind Nil or See cards
    snap = snapshot(game)
    with pytest.raises(IllegalActionError) as err:
        game.apply(action)
    msg = str(err.value)
    assert str(action) in msg
    assert "legal: [66, 67]" in msg and "Blind Nil" in msg and "See cards" in msg
    assert_unchanged(game, snap)


@pytest.mark.parametrize("action", ["AS", 3.0, None, True, np.float64(52)])
def test_non_integer_action_is_refused(action):
    game = SpadesGame(seed=3, dealer=3)
    snap = snapshot(game)
    with pytest.raises(IllegalActionError, match="integer"):
        game.apply(action)
    assert_unchanged(game, snap)


def test_numpy_integer_action_is_accepted():
    game = SpadesGame(seed=3, dealer=3)
    game.apply(np.int64(67))
    assert game.phase == "bid"


def test_illegal_card_in_play_lists_the_legal_cards():
    game = SpadesGame(seed=3)
    game.set_hand(hands=one_suit_deal(0), dealer=0)  # E (clubs) leads
    for _ in range(4):
        do(game, "see", "bid 3")
    do(game, "2C")
    snap = snapshot(game)
    with pytest.raises(IllegalActionError) as err:
        do(game, "3C")  # S holds diamonds only
    msg = str(err.value)
    assert "seat 2" in msg and "'play'" in msg and "2D" in msg and "AD" in msg
    assert_unchanged(game, snap)


def test_stepping_between_hands_asks_for_next_hand():
    game = SpadesGame({"max_hands": 2}, seed=3)
    play_hand(game, [1, 1, 1, 1])
    assert game.phase == "hand_end"
    snap = snapshot(game)
    with pytest.raises(IllegalActionError, match="next_hand"):
        game.apply(52)
    assert_unchanged(game, snap)


def test_stepping_after_match_end_is_a_clear_error():
    game = SpadesGame({"max_hands": 1}, seed=3)
    play_hand(game, [1, 1, 1, 1])
    assert game.is_over
    snap = snapshot(game)
    for action in (52, 0, 67):
        with pytest.raises(IllegalActionError, match="no seat is to act in phase 'match_end'"):
            game.apply(action)
    with pytest.raises(IllegalActionError, match="match_end"):
        game.next_hand()
    assert_unchanged(game, snap)
    assert game.legal_actions() == []
    assert not game.legal_mask().any()


def test_next_hand_mid_hand_is_refused():
    game = SpadesGame(seed=3)
    snap = snapshot(game)
    with pytest.raises(IllegalActionError, match="finished hand"):
        game.next_hand()
    assert_unchanged(game, snap)


# ---- bad preset deals -------------------------------------------------------------------
GOOD = one_suit_deal(0)


def _swap(hands, seat, idx, card):
    out = [list(h) for h in hands]
    out[seat][idx] = card
    return out


@pytest.mark.parametrize(
    ("hands", "match"),
    [
        (GOOD[:3], "needs 4 hands"),
        ([GOOD[0][:12], *GOOD[1:]], "seat 0 has 12 cards"),
        ([GOOD[0], GOOD[1] + ["2S"], GOOD[2], GOOD[3]], "seat 1 has 14 cards"),
        (_swap(GOOD, 2, 5, "AS"), "AS is dealt twice"),
        (_swap(GOOD, 3, 0, "1X"), "hand of seat 3, card 0: bad card string '1X'"),
        (_swap(GOOD, 1, 4, "ZZ"), "bad card string 'ZZ'"),
        (_swap(GOOD, 1, 4, 52), "out of range"),
        (_swap(GOOD, 1, 4, None), "seat 1, card 4"),
    ],
)
def test_bad_preset_deal_is_refused_with_state_unchanged(hands, match):
    game = SpadesGame(seed=5)
    do(game, "see", "bid 4")
    snap = snapshot(game)
    with pytest.raises(DealError, match=re.escape(match)):
        game.set_hand(hands=hands, dealer=3, scores=[100, 200])
    assert_unchanged(game, snap)


def test_bad_set_hand_arguments_leave_state_unchanged():
    game = SpadesGame(seed=5)
    snap = snapshot(game)
    with pytest.raises(ValueError, match="dealer"):
        game.set_hand(hands=GOOD, dealer=4)
    with pytest.raises(ValueError, match="scores"):
        game.set_hand(hands=GOOD, scores=[1, 2, 3])
    with pytest.raises(ValueError, match="bags"):
        game.set_hand(hands=GOOD, bags=[-1, 0])
    with pytest.raises(DealError, match="give the hands"):
        game.set_hand(stock=[c for h in GOOD for c in h])
    with pytest.raises(DealError, match="either"):
        game.set_hand(hands=GOOD, stock=[c for h in GOOD for c in h])
    assert_unchanged(game, snap)


def test_bad_stock_is_refused_with_state_unchanged():
    game = SpadesGame("two_player", seed=5)
    snap = snapshot(game)
    stock = [c for h in GOOD for c in h]
    with pytest.raises(DealError, match="51 cards"):
        game.set_hand(stock=stock[:51])
    with pytest.raises(DealError, match="2C appears twice"):
        game.set_hand(stock=stock[:51] + ["2C"])
    with pytest.raises(DealError, match="stock, card 7"):
        game.set_hand(stock=stock[:7] + ["XX"] + stock[8:])
    with pytest.raises(DealError, match="stock"):
        game.set_hand(hands=hands_from_strings(*[" ".join(h) for h in GOOD]))
    assert_unchanged(game, snap)


def test_rules_with_applies_changes_on_a_base_and_names_unknown_keys():
    from spades_env.core.rules import RulesError, rules_with

    no_blind = rules_with({"blind_nil": False, "blind_nil_exchange": 0})
    assert no_blind == load_rules("tournament").replace(blind_nil=False, blind_nil_exchange=0)
    house300 = rules_with({"target_score": 300, "name": "house300"}, "house")
    assert house300 == load_rules("house").replace(target_score=300, name="house300")
    with pytest.raises(RulesError, match=r"unknown rule key\(s\) \['bag_limt'\]"):
        rules_with({"bag_limt": 7})
    with pytest.raises(RulesError, match="mapping"):
        rules_with(["target_score", 300])  # type: ignore[arg-type]


@pytest.mark.parametrize("name", ["tournament", "house", "openspiel", "two_player"])
def test_rules_features_are_what_every_observation_shows(name):
    """``rules_features`` is the observation's ``rules`` slice of a game under those rules, at
    every seat, and two presets that differ in one knob differ there."""
    from spades_env.core.observation import O_RULES, rules_features

    rules = load_rules(name)
    want = rules_features(rules.to_params())
    game = SpadesGame(rules, seed=3)
    for seat in range(rules.num_players):
        obs = game.observe(seat).observation
        assert np.array_equal(obs[O_RULES : O_RULES + len(want)], want.astype(obs.dtype))
    house, tournament = (rules_features(load_rules(n).to_params()) for n in ("house", "tournament"))
    assert not np.array_equal(house, tournament)
