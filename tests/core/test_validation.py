"""Every bad input at a public boundary is a clear error of the documented type, naming the
input, the value and what is allowed, and changes nothing (issue 13). In process: the Python
API. The CLI and the inputs that once crashed the interpreter are in tests/cli/test_cli_errors.py.
"""

from __future__ import annotations

import copy
import json

import gymnasium
import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import spades_env
import spades_env.envs.gym_env  # noqa: F401 (registers Spades-v0)
from spades_env.core.actions import action_to_str, bid_action
from spades_env.core.cards import RANK_CHARS, card_to_str
from spades_env.core.game import DealError, IllegalActionError, SpadesGame
from spades_env.core.rules import RulesError, load_rules
from spades_env.core.scoring import score_hand
from spades_env.core.validate import (
    InputError,
    InputTypeError,
    SpadesError,
    check_count,
    check_float,
    check_seat,
)
from spades_env.envs.aec import raw_env
from spades_env.envs.vector import VectorSpades
from spades_env.eval import make_jobs, play_boards, run_round_robin
from spades_env.io.paths import check_output_dir, check_output_file
from spades_env.io.records import (
    RecordError,
    load_record,
    record_from_game,
    replay_record,
    save_record,
)
from spades_env.policies.base import learner_seats_of
from spades_env.policies.bots import PolicyNameError, parse_policy_name
from spades_env.policies.registry import check_policy_name

SETTINGS = settings(
    max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)


def suit(s: str) -> list[str]:
    return [r + s for r in RANK_CHARS]


ONE_SUIT_DEAL = [suit("C"), suit("D"), suit("H"), suit("S")]


# ---- the error hierarchy ----------------------------------------------------------------------
def test_every_error_type_is_a_spades_error_and_a_value_error():
    for cls in (
        InputError,
        InputTypeError,
        RulesError,
        IllegalActionError,
        DealError,
        RecordError,
        PolicyNameError,
    ):
        assert issubclass(cls, SpadesError) and issubclass(cls, ValueError)
    assert issubclass(InputTypeError, TypeError)


# ---- typed checkers ---------------------------------------------------------------------------
@pytest.mark.parametrize("bad", [1.7, True, np.bool_(True), "1", None, 1.0])
def test_a_seat_is_an_exact_integer(bad):
    with pytest.raises(InputTypeError, match=r"seat must be a seat number 0\.\.3"):
        check_seat(bad, 4)


def test_numpy_integers_are_integers():
    assert check_seat(np.int64(2), 4) == 2 and type(check_seat(np.int8(1), 4)) is int
    assert check_count(np.uint16(5), "games") == 5


@pytest.mark.parametrize("bad", [float("inf"), float("nan"), True, "0.5", 10**400])
def test_a_number_option_is_finite(bad):
    with pytest.raises(InputError):
        check_float(bad, "budget", 0, 10)


# ---- the facade: SpadesGame -------------------------------------------------------------------
def test_hand_of_a_seat_outside_the_game_is_an_error():
    g = SpadesGame(seed=1)
    for bad in (-1, 4, 1.0, True):
        with pytest.raises(InputError, match="seat"):
            g.hand(bad)
    with pytest.raises(InputError, match="seat 2 is not a seat of the 2-player game"):
        SpadesGame("two_player", seed=1).hand(2)
    with pytest.raises(InputError, match="viewer"):
        g.to_text(viewer=7)


@pytest.mark.parametrize("dealer", [1.7, "1", True, "N", 9, -1])
def test_constructor_dealer_is_an_integer_seat(dealer):
    with pytest.raises(InputError, match="dealer"):
        SpadesGame(seed=0, dealer=dealer)


@pytest.mark.parametrize("seed", [-1, 2.5, True, "7"])
def test_constructor_seed_is_a_non_negative_integer(seed):
    with pytest.raises(InputError, match="seed"):
        SpadesGame(seed=seed)


@pytest.mark.parametrize(
    ("kwargs", "words"),
    [
        ({"dealer": 1.7}, "dealer"),
        ({"scores": [1.7, 0]}, r"scores\[0\]"),
        ({"bags": [True, 0]}, r"bags\[0\]"),
        ({"bags": [-5, 0]}, r"bags\[0\]"),
        ({"bags": [25, 0]}, "bag_limit 10"),
        ({"bags": [10, 0]}, "bag_limit 10"),
        ({"scores": [600, 0]}, "target_score 500"),
        ({"scores": [500, 499]}, "target_score 500"),
        ({"scores": [10**30, 0]}, r"scores\[0\]"),
        ({"scores": [1, 2, 3]}, "needs 2 values"),
        ({"scores": "12"}, "2 integers"),
    ],
)
def test_set_hand_refuses_what_no_game_can_reach_and_changes_nothing(kwargs, words):
    g = SpadesGame(seed=3)
    before, logs = g.state.copy(), len(g.hand_logs)
    with pytest.raises(InputError, match=words):
        g.set_hand(hands=ONE_SUIT_DEAL, **kwargs)
    assert np.array_equal(g.state, before) and len(g.hand_logs) == logs


@pytest.mark.parametrize(
    ("card", "words"), [(5.7, "5.7"), (True, "True"), (52, "out of range"), ("ZZ", "bad card")]
)
def test_a_card_is_an_id_or_a_string_never_coerced(card, words):
    deal = copy.deepcopy(ONE_SUIT_DEAL)
    deal[0][0] = card
    g = SpadesGame(seed=3)
    before = g.state.copy()
    with pytest.raises(DealError, match=words):
        g.set_hand(hands=deal)
    assert np.array_equal(g.state, before)


def test_legitimate_positions_a_tie_past_the_target_and_analysis_with_a_higher_target():
    """Choices: a tie at or past the target plays on, so [600, 600] is a real position; a
    game at [600, 0] is not, but raising target_score makes it one for analysis."""
    g = SpadesGame(seed=3)
    g.set_hand(hands=ONE_SUIT_DEAL, scores=[600, 600], bags=[9, 0])
    assert g.scores == (600, 600) and g.bags == (9, 0)
    a = SpadesGame(load_rules("tournament").replace(target_score=1000), seed=3)
    a.set_hand(hands=ONE_SUIT_DEAL, scores=[600, 0])
    assert a.scores == (600, 0)
    no_limit = SpadesGame(load_rules("tournament").replace(bag_limit=0), seed=3)
    no_limit.set_hand(hands=ONE_SUIT_DEAL, bags=[25, 0])
    assert no_limit.bags == (25, 0)
    mercy = SpadesGame({"mercy_rule": True, "mercy_threshold": -200}, seed=3)
    with pytest.raises(InputError, match="mercy"):
        mercy.set_hand(hands=ONE_SUIT_DEAL, scores=[-200, 0])


@pytest.mark.parametrize("action", [10**20, -(10**20), 70, -1, 2.5, True, "52", None])
def test_apply_refuses_any_action_outside_the_table_and_changes_nothing(action):
    g = SpadesGame(seed=3)
    before = g.state.copy()
    with pytest.raises(IllegalActionError, match="action"):
        g.apply(action)
    assert np.array_equal(g.state, before)


def test_scoring_inputs_are_exact():
    with pytest.raises(InputError, match=r"bags\[0\]"):
        score_hand([3, 3, 3, 3], [4, 3, 3, 3], bags=(-5, 0))
    with pytest.raises(InputError, match=r"bags\[0\].*bag_limit"):
        score_hand([3, 3, 3, 3], [4, 3, 3, 3], bags=(10, 0))
    with pytest.raises(InputError, match="bid of seat 0 must be 0..13 or 'blind', got 2.5"):
        score_hand([2.5, 3, 3, 3], [4, 3, 3, 3])
    with pytest.raises(InputError, match="tricks of seat 1"):
        score_hand([3, 3, 3, 3], [4, 3.0, 3, 3])
    with pytest.raises(InputError, match="bid 2.5"):
        bid_action(2.5)
    with pytest.raises(InputError):
        card_to_str(5.7)
    with pytest.raises(InputError):
        action_to_str(2.5)
    assert score_hand([np.int64(3), 3, 3, 3], [np.int32(4), 3, 3, 3]).points == (61, 60)


# ---- rules ------------------------------------------------------------------------------------
def test_rules_of_the_wrong_kind_are_a_clear_rules_error():
    for bad in ([1, 2], 5, 2.5, b"tournament", ""):
        with pytest.raises(RulesError, match="rules must be a preset name"):
            spades_env.env(rules=bad)


def test_empty_and_duplicate_key_rules_files_are_errors(tmp_path):
    empty = tmp_path / "empty.yaml"
    empty.write_text("# nothing here\n")
    with pytest.raises(RulesError, match=r"empty\.yaml: the rules file is empty"):
        load_rules(empty)
    dup = tmp_path / "dup.yaml"
    dup.write_text("target_score: 300\nbag_limit: 5\ntarget_score: 400\n")
    with pytest.raises(RulesError, match=r"dup\.yaml.*duplicate key 'target_score'"):
        load_rules(dup)
    latin = tmp_path / "latin.yaml"
    latin.write_bytes("name: caf\xe9\n".encode("latin-1"))
    with pytest.raises(RulesError, match=r"latin\.yaml' is not UTF-8 text: byte 0xe9"):
        load_rules(latin)
    folder = tmp_path / "folder.yaml"
    folder.mkdir()
    with pytest.raises(RulesError, match="is a directory"):
        load_rules(folder)


def test_rules_with_numpy_values_are_plain_python_and_records_save(tmp_path):
    rules = load_rules(
        {"target_score": np.int64(300), "bag_limit": np.int32(7), "blind_nil": np.bool_(False)}
    )
    assert type(rules.target_score) is int and type(rules.bag_limit) is int and rules.blind_nil is False
    json.dumps(rules.to_dict())
    g = SpadesGame({"target_score": np.int64(300), "max_hands": np.int64(1)}, seed=2)
    rng = np.random.default_rng(0)
    while not g.is_over:
        if g.is_hand_over:
            g.next_hand()
            continue
        legal = g.legal_actions()
        g.apply(legal[int(rng.integers(len(legal)))])
    path = tmp_path / "r.json"
    save_record(record_from_game(g), path)
    assert replay_record(path).final["phase"] == "match_end"


def test_rules_with_bad_numbers_are_rules_errors():
    for bad in (
        {"target_score": 1.5},
        {"target_score": True},
        {"target_score": 10**30},
        {1: 2},
        {"nil_value": "100"},
    ):
        with pytest.raises(RulesError):
            load_rules(bad)


# ---- the AEC env --------------------------------------------------------------------------------
RESET_BAD = [
    {"dealer": 9},
    {"dealer": 1.7},
    {"dealer": "1"},
    {"dealer": True},
    {"dealer": "N"},
    {"scores": [1.7, 0]},
    {"bags": [True, 0]},
    {"bags": [25, 0]},
    {"scores": [600, 0]},
    {"hands": [[5.7] + suit("C")[1:], suit("D"), suit("H"), suit("S")]},
    {"hands": [[True] + suit("C")[1:], suit("D"), suit("H"), suit("S")]},
    {"hands": ONE_SUIT_DEAL, "scores": [10**30, 0]},
]


@pytest.mark.parametrize("options", RESET_BAD)
def test_reset_refuses_bad_options_and_leaves_the_seed_generator_alone(options):
    ref = raw_env()
    ref.reset(seed=1)
    ref.reset()
    expected = ref.game.state.copy()

    a = raw_env()
    a.reset(seed=1)
    playing = a.game.state.copy()
    with pytest.raises((InputError, DealError)):
        a.reset(seed=5, options=options)
    with pytest.raises((InputError, DealError)):
        a.reset(options=options)
    assert np.array_equal(a.game.state, playing)  # the episode in play is untouched
    a.reset()
    assert np.array_equal(a.game.state, expected)  # and the generator did not move


def test_reset_seed_and_options_types():
    e = raw_env()
    for seed in (-1, 2.5, True, "3"):
        with pytest.raises(InputError, match="seed"):
            e.reset(seed=seed)
    with pytest.raises(InputError, match="options"):
        e.reset(options=[("dealer", 1)])
    with pytest.raises(InputError, match="unknown key.*unknown_key"):  # a typo is an error
        e.reset(seed=1, options={"unknown_key": 1})
    e.reset(seed=1, options={"options": 1})  # the probe PettingZoo's api_test sends is ignored


def test_aec_step_with_a_huge_action_is_a_clear_error():
    e = raw_env()
    e.reset(seed=4)
    before = e.game.state.copy()
    with pytest.raises(IllegalActionError, match="out of range 0..69"):
        e.step(10**20)
    assert np.array_equal(e.game.state, before)


def test_aec_knobs_and_agents():
    with pytest.raises(InputError, match="reward_scale"):
        raw_env(reward_scale="0.5")
    with pytest.raises(InputError, match="render_viewer"):
        raw_env(render_viewer=4)
    e = raw_env()
    e.reset(seed=0)
    with pytest.raises(InputError, match="unknown agent 'player_9'"):
        e.observe("player_9")


# ---- Gymnasium ------------------------------------------------------------------------------------
def test_gym_make_with_an_unknown_opponent_fails_at_construction():
    with pytest.raises(PolicyNameError, match="unknown policy 'nobot'"):
        gymnasium.make("Spades-v0", opponents="nobot")
    with pytest.raises(PolicyNameError, match="budget"):
        gymnasium.make("Spades-v0", opponents="search:budget=inf")
    with pytest.raises(InputError, match="no such checkpoint"):
        gymnasium.make("Spades-v0", opponents="no/such/checkpoint")
    with pytest.raises(InputError, match="learner_seats must be distinct seats"):
        learner_seats_of([0.0, 2], 4)


# ---- the batched engine ---------------------------------------------------------------------------
@pytest.mark.parametrize("n", [-5, 2.5, True, None, "10", 2**63])
def test_play_random_counts(n):
    v = VectorSpades(2, seed=0)
    before = v.states.copy()
    with pytest.raises(InputError, match="decisions_per_game"):
        v.play_random(n)
    assert np.array_equal(v.states, before)


def test_vector_constructor_and_reset_arguments():
    for bad in (0, -1, 2.5, True):
        with pytest.raises(InputError, match="num_envs"):
            VectorSpades(bad)
    v = VectorSpades(2, seed=0)
    for bad in (-1, True, 2.5):
        with pytest.raises(InputError, match="seed"):
            v.reset(bad)
    with pytest.raises(InputTypeError, match="actions"):
        v.step(np.array([1.5, 2.5]))


def test_observe_seat_in_range_still_works():
    v = VectorSpades(2, seed=0)
    obs = v.observe_seat(1, 3)
    assert obs.shape[0] > 0 and np.isfinite(obs).all()
    assert np.array_equal(v.observe_seat(0, 2, state=v.states[1].copy()), v.observe_seat(1, 2))


# ---- records --------------------------------------------------------------------------------------
def one_hand_record(**hand_changes) -> dict:
    g = SpadesGame(seed=5, dealer=3)
    g.set_hand(hands=ONE_SUIT_DEAL)
    rng = np.random.default_rng(1)
    while not g.is_hand_over:
        legal = g.legal_actions()
        g.apply(legal[int(rng.integers(len(legal)))])
    rec = record_from_game(g)
    rec["hands"][0].update(hand_changes)
    return rec


@pytest.mark.parametrize(
    ("field", "value", "words"),
    [
        (
            "scores_before",
            [10**30, 0],
            r"hands\[0\]\.scores_before\[0\]: 1000000000000000000000000000000 is out of range",
        ),
        ("bags_before", [10**30, 0], r"hands\[0\]\.bags_before\[0\]: .* is out of range"),
        ("scores_before", [600, 0], r"hands\[0\]: scores \[600, 0\]: a game is over"),
        ("bags_before", [25, 0], r"hands\[0\]: bags\[0\] must be an integer in 0\.\.9"),
    ],
)
def test_records_that_start_where_no_game_can_be_are_record_errors(field, value, words):
    rec = one_hand_record(**{field: value})
    key = "start_scores" if field == "scores_before" else "start_bags"
    rec[key] = value
    with pytest.raises(RecordError, match=words):
        replay_record(rec)


def test_deeply_nested_duplicate_key_non_utf8_and_nan_record_files(tmp_path):
    good = one_hand_record()
    deep = tmp_path / "deep.json"
    text = json.dumps(good)
    deep.write_text(text[:-1] + ', "meta": ' + "[" * 100_000 + "]" * 100_000 + "}")
    with pytest.raises(RecordError, match="deep.json: JSON nested too deeply"):
        load_record(deep)
    nested = dict(good, meta={"a": json.loads("[" * 200 + "]" * 200)})
    with pytest.raises(RecordError, match=r"nested more than 100 levels"):
        load_record(nested)
    dup = tmp_path / "dup.json"
    dup.write_text(text[:-1] + ', "format": "x"}')
    with pytest.raises(RecordError, match="key 'format' appears twice"):
        load_record(dup)
    latin = tmp_path / "latin.json"
    latin.write_bytes(text.replace('"hands"', '"meta": {"who": "caf\xe9"}, "hands"').encode("latin-1"))
    with pytest.raises(RecordError, match=r"latin\.json' is not UTF-8 text: byte 0xe9 at offset \d+"):
        load_record(latin)
    nan = tmp_path / "nan.json"
    nan.write_text(text.replace('"hands"', '"meta": {"x": NaN}, "hands"'))
    with pytest.raises(RecordError, match="NaN is not a JSON number"):
        load_record(nan)
    with pytest.raises(RecordError, match="not JSON data"):
        load_record(dict(good, meta={"x": {1, 2}}))


def test_record_dicts_with_numpy_integers_load_and_save(tmp_path):
    rec = one_hand_record()
    rec["first_dealer"] = np.int64(rec["first_dealer"])
    rec["hands"][0]["actions"] = [np.int16(a) for a in rec["hands"][0]["actions"]]
    save_record(rec, tmp_path / "np.json")
    assert replay_record(tmp_path / "np.json").hands[0] is not None


# ---- policy names and options ---------------------------------------------------------------------
@pytest.mark.parametrize(
    ("name", "words"),
    [
        ("search:budget=inf", "finite"),
        ("search:budget=nan", "finite"),
        ("search:budget=-inf", "positive"),
        ("search:budget=1e400", "finite"),
        ("search:budget=100000", "at most 3600"),
        ("search:samples=2.5", "not a valid int"),
        ("search:samples=0", "positive"),
        ("search:samples=10000000", r"1\.\.1000000"),
        ("search:noise=-1", r"0\.\.1000"),
        ("search:noise=5000", r"0\.\.1000"),
        ("search:budget=0.1,budget=0.2", "given twice"),
        ("cheat:max_samples=1e9", "not a valid int"),
    ],
)
def test_policy_options_out_of_range_are_refused(name, words):
    with pytest.raises(PolicyNameError, match=words):
        parse_policy_name(name)


def test_arena_counts_are_checked_before_play():
    rules = load_rules("tournament")
    for boards in (0, -5, 2.5, True):
        with pytest.raises(InputError, match="boards"):
            make_jobs(("random", "random"), ("random", "random"), boards, seed=0, rules=rules)
    with pytest.raises(InputError, match="seed"):
        make_jobs(("random", "random"), ("random", "random"), 1, seed=-1, rules=rules)
    jobs = make_jobs(("random", "random"), ("random", "random"), 1, seed=0, rules=rules)
    for workers in (0, -1, 1.5):
        with pytest.raises(InputError, match="workers"):
            play_boards(jobs, workers=workers)
    with pytest.raises(InputError, match="at least 2 teams"):
        run_round_robin(["random"], 1)
    with pytest.raises(InputError, match="policy"):
        check_policy_name(5)


# ---- paths ----------------------------------------------------------------------------------------
def test_output_paths(tmp_path):
    f = tmp_path / "file"
    f.write_text("keep me")
    with pytest.raises(InputError, match="exists and is not a folder"):
        check_output_dir(f, "--out")
    with pytest.raises(InputError, match="is a file, not a folder"):
        check_output_dir(f / "sub", "--out")
    assert check_output_dir(tmp_path / "new" / "deeper", "--out") == tmp_path / "new" / "deeper"
    with pytest.raises(InputError, match="does not exist"):
        check_output_file(tmp_path / "no" / "x.json", "--record")
    with pytest.raises(InputError, match="is a folder"):
        check_output_file(tmp_path, "--record")
    assert check_output_file(f, "--record") == f and f.read_text() == "keep me"
    assert not (tmp_path / "new").exists()  # checking creates nothing


# ---- generated malformed input --------------------------------------------------------------------
BASE_RECORD = one_hand_record()
JUNK = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(min_value=-(10**40), max_value=10**40),
    st.floats(allow_nan=True, allow_infinity=True),
    st.text(max_size=5),
    st.lists(st.integers(-3, 80), max_size=5),
    st.dictionaries(st.text(max_size=3), st.integers(), max_size=2),
)


def _paths(value, prefix=()):
    yield prefix
    if isinstance(value, dict):
        for k, v in value.items():
            yield from _paths(v, (*prefix, k))
    elif isinstance(value, list):
        for i, v in enumerate(value):
            yield from _paths(v, (*prefix, i))


RECORD_PATHS = [p for p in _paths(BASE_RECORD) if p]


@SETTINGS
@given(st.lists(st.tuples(st.sampled_from(RECORD_PATHS), JUNK), min_size=1, max_size=3))
def test_generated_malformed_records_end_in_record_error(edits):
    rec = copy.deepcopy(BASE_RECORD)
    for path, value in edits:
        node = rec
        try:
            for k in path[:-1]:
                node = node[k]
            node[path[-1]] = value
        except (KeyError, IndexError, TypeError):
            continue
    snapshot = copy.deepcopy(rec)
    try:
        replay_record(rec)
    except RecordError:
        pass
    assert rec == snapshot or json.dumps(rec, default=str) == json.dumps(snapshot, default=str)


OPTION_VALUES = st.one_of(
    JUNK,
    st.sampled_from([0, 1, 3, 4, -1, 9, 1.7, "1", "N", True]),
    st.lists(st.one_of(st.integers(-20, 700), st.floats(-5, 5), st.booleans()), min_size=0, max_size=3),
    st.just(ONE_SUIT_DEAL),
)


@SETTINGS
@given(
    st.dictionaries(
        st.sampled_from(["dealer", "scores", "bags", "hands", "stock"]), OPTION_VALUES, max_size=3
    )
)
def test_generated_option_dicts_end_in_a_documented_error_with_nothing_changed(options):
    ref = raw_env()
    ref.reset(seed=11)
    ref.reset()
    expected = ref.game.state.copy()
    e = raw_env()
    e.reset(seed=11)
    playing = e.game.state.copy()
    try:
        e.reset(options=options)
    except (InputError, DealError):
        assert np.array_equal(e.game.state, playing)
        e.reset()
        assert np.array_equal(e.game.state, expected)


@SETTINGS
@given(
    st.one_of(
        st.text(max_size=30),
        st.builds(
            lambda base, opts: base + ":" + ",".join(f"{k}={v}" for k, v in opts),
            st.sampled_from(["search", "cheat", "random", "heuristic"]),
            st.lists(
                st.tuples(
                    st.sampled_from(["budget", "samples", "max_samples", "noise", "depth", ""]),
                    st.one_of(
                        st.sampled_from(["inf", "nan", "-inf", "1e400", "0", "-1", "", "x"]),
                        st.floats().map(str),
                        st.integers().map(str),
                    ),
                ),
                max_size=3,
            ),
        ),
    )
)
def test_generated_policy_names_end_in_policy_name_error_or_parse(name):
    try:
        base, opts = parse_policy_name(name)
    except PolicyNameError:
        return
    for key, value in opts.items():
        assert np.isfinite(value), (name, key, value)
        assert value >= 0
