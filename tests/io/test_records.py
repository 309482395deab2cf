"""Game records: export then replay reproduces every score; malformed records are clear errors."""

from __future__ import annotations

import copy
import json

import numpy as np
import pytest

from spades_env.core.cards import RANK_CHARS
from spades_env.core.game import SpadesGame
from spades_env.core.rules import load_rules
from spades_env.io.records import (
    FORMAT,
    RecordError,
    dumps_record,
    format_record,
    load_record,
    record_from_game,
    replay_record,
    rules_to_record,
    save_record,
)


def suit(s: str) -> list[str]:
    return [r + s for r in RANK_CHARS]


def play_random(rules, seed: int) -> SpadesGame:
    """A whole match of random legal play (legal actions from the core's mask)."""
    game = SpadesGame(rules, seed=seed)
    rng = np.random.default_rng(seed)
    while not game.is_over:
        if game.is_hand_over:
            game.next_hand()
            continue
        legal = np.flatnonzero(game.legal_mask())
        game.apply(int(legal[rng.integers(legal.size)]))
    return game


# ---- a hand-written record: every seat dealt one suit ------------------------------------
# Dealer W, so N sees/bids first and leads. N: clubs, E: diamonds, S: hearts, W: spades.
# Bids: N Nil, E 3, S 4, W 13. Trick 1: N 2C, E 2D, S 2H, W 2S -> W wins (spades broken);
# then W leads a spade every trick and wins all 13.
# NS: N's Nil made +100, S bid 4 won 0 -> set -40: +60.  EW: contract 16, won 13 -> -160.
ONE_SUIT_ACTIONS = [67, 52, 67, 55, 67, 56, 67, 65, 0, 13, 26, 39]
for k in range(1, 13):
    ONE_SUIT_ACTIONS += [39 + k, k, 13 + k, 26 + k]


def one_suit_record() -> dict:
    return {
        "format": FORMAT,
        "rules": "tournament",
        "first_dealer": 3,
        "start_scores": [0, 0],
        "start_bags": [0, 0],
        "hands": [
            {
                "dealer": 3,
                "scores_before": [0, 0],
                "bags_before": [0, 0],
                "deal": [suit("C"), suit("D"), suit("H"), suit("S")],
                "actions": list(ONE_SUIT_ACTIONS),
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


def test_hand_written_record_replays_to_the_hand_checked_scores() -> None:
    rec = one_suit_record()
    before = copy.deepcopy(rec)
    result = replay_record(rec)
    assert result.hands[0]["points"] == [60, -160]
    assert result.hands[0]["bids"] == [0, 3, 4, 13]
    assert result.hands[0]["tricks"] == [0, 0, 0, 13]
    assert result.final["scores"] == [60, -160]
    assert result.final["phase"] == "hand_end"
    assert rec == before  # the input is not touched


def test_illegal_action_names_hand_position_action_and_legal_set() -> None:
    rec = one_suit_record()
    rec["hands"][0]["actions"][11] = 1  # W plays 3C (N's card) instead of 2S: W holds only spades
    with pytest.raises(RecordError) as info:
        replay_record(rec)
    err = info.value
    assert (err.hand, err.position, err.action) == (0, 11, 1)
    assert err.legal == list(range(39, 52))
    msg = str(err)
    assert "hands[0].actions[11]" in msg and "illegal action 1 (3C)" in msg and "seat W" in msg
    assert "legal: 39 (2S), 40 (3S)" in msg and "51 (AS)" in msg


def test_bid_out_of_phase_is_an_illegal_action() -> None:
    rec = one_suit_record()
    rec["hands"][0]["actions"][0] = 55  # N must first choose Blind Nil or See cards
    with pytest.raises(
        RecordError,
        match=r"hands\[0\]\.actions\[0\].*phase 'blind'.*legal: 66 \(Blind Nil\), 67 \(See cards\)",
    ):
        replay_record(rec)


def test_truncated_actions_are_an_error() -> None:
    rec = one_suit_record()
    del rec["hands"][0]["actions"][-3:]  # the last trick stops after W leads AS: N must play AC
    with pytest.raises(RecordError) as info:
        replay_record(rec)
    assert "stop after 57 before the hand is over" in str(info.value)
    assert "seat N" in str(info.value) and "legal: 12 (AC)" in str(info.value)
    assert info.value.position == 57


def test_extra_action_after_the_hand_is_an_error() -> None:
    rec = one_suit_record()
    rec["hands"][0]["actions"].append(0)
    with pytest.raises(RecordError, match=r"hands\[0\]\.actions\[60\].*after the hand is over"):
        replay_record(rec)


def test_wrong_result_is_named() -> None:
    rec = one_suit_record()
    rec["hands"][0]["result"]["points"] = [60, -150]
    with pytest.raises(
        RecordError, match=r"hands\[0\]\.result\.points: record says \[60, -150\], replay gives \[60, -160\]"
    ):
        replay_record(rec)


@pytest.mark.parametrize(
    "mutate, pattern",
    [
        (
            lambda r: r["hands"][0]["deal"][1].__setitem__(3, "XS"),
            r"hands\[0\]\.deal\[1\]\[3\]: bad card string 'XS'",
        ),
        (
            lambda r: r["hands"][0]["deal"][1].__setitem__(3, 51),
            r"hands\[0\]\.deal\[1\]\[3\]: a card must be a string",
        ),
        (
            lambda r: r["hands"][0]["deal"][2].__setitem__(0, "AS"),
            r"card AS is dealt twice \(seats 2 and 3\)",
        ),
        (
            lambda r: r["hands"][0]["deal"][0].pop(),
            r"hands\[0\]\.deal\[0\]: hand of seat 0 has 12 cards, needs 13",
        ),
        (lambda r: r["hands"][0]["deal"].pop(), r"hands\[0\]\.deal: a four-player deal needs 4 hands"),
        (lambda r: r.__setitem__("rules", {"foo": 1}), r"unknown rule key\(s\) \['foo'\]"),
        (lambda r: r.__setitem__("rules", {"max_hands": -1}), r"rule 'max_hands' = -1 is out of range"),
        (lambda r: r.__setitem__("rules", "no_such_preset"), r"rules: unknown rules preset 'no_such_preset'"),
        (lambda r: r.__setitem__("format", "other/v9"), r"format: unknown record format 'other/v9'"),
        (lambda r: r.__setitem__("colour", "red"), r"record: unknown key\(s\) \['colour'\]"),
        (lambda r: r.pop("hands"), r"record: missing key\(s\) \['hands'\]"),
        (lambda r: r.__setitem__("hands", []), r"hands: must be a non-empty list"),
        (
            lambda r: r["hands"][0]["actions"].__setitem__(5, 70),
            r"hands\[0\]\.actions\[5\]: 70 is out of range 0\.\.69",
        ),
        (
            lambda r: r["hands"][0]["actions"].__setitem__(5, "bid 4"),
            r"hands\[0\]\.actions\[5\]: must be an integer",
        ),
        (lambda r: r["hands"][0].__setitem__("dealer", 4), r"hands\[0\]\.dealer: 4 is out of range 0\.\.3"),
        (
            lambda r: r.__setitem__("first_dealer", 1),
            r"first_dealer: first_dealer is 1 but hands\[0\]\.dealer is 3",
        ),
        (
            lambda r: r.__setitem__("start_scores", [10, 0]),
            r"start_scores: \[10, 0\] differ from hands\[0\]\.scores_before",
        ),
        (
            lambda r: r["hands"][0]["bags_before"].__setitem__(0, -1),
            r"hands\[0\]\.bags_before\[0\]: -1 is out of range",
        ),
        (
            lambda r: r["hands"][0]["result"]["tricks"].__setitem__(0, 1),
            r"tricks \[1, 0, 0, 13\] do not add up to 13",
        ),
        (
            lambda r: r["hands"][0]["result"]["bids"].__setitem__(0, "nil"),
            r"result\.bids\[0\]: a bid is 0\.\.13 or 'blind'",
        ),
        (
            lambda r: r["hands"][0]["result"].__setitem__("winner", 0),
            r"result: unknown key\(s\) \['winner'\]",
        ),
        (lambda r: r["hands"][0]["result"].pop("points"), r"result: missing key\(s\) \['points'\]"),
        (
            lambda r: r["hands"][0].__setitem__("stock", suit("S")),
            r"a four-player record has 'deal', not 'stock'",
        ),
    ],
)
def test_malformed_records_raise_record_error_naming_the_problem(mutate, pattern) -> None:
    rec = one_suit_record()
    mutate(rec)
    with pytest.raises(RecordError, match=pattern):
        load_record(rec)
    with pytest.raises(RecordError, match=pattern):
        replay_record(rec)


def test_two_player_stock_is_validated() -> None:
    game = play_random(load_rules("two_player").replace(max_hands=1), seed=3)
    rec = record_from_game(game)
    assert len(rec["hands"][0]["stock"]) == 52 and "deal" not in rec["hands"][0]
    replay_record(rec)
    bad = copy.deepcopy(rec)
    bad["hands"][0]["stock"].pop()
    with pytest.raises(RecordError, match=r"hands\[0\]\.stock: the stock has 51 cards, needs 52"):
        load_record(bad)
    bad = copy.deepcopy(rec)
    bad["hands"][0]["stock"][10] = bad["hands"][0]["stock"][0]
    with pytest.raises(
        RecordError,
        match=r"hands\[0\]\.stock\[10\]: card .. appears twice in the stock \(positions 0 and 10\)",
    ):
        load_record(bad)


def test_later_hand_must_follow_from_the_previous_one() -> None:
    game = play_random(load_rules("tournament").replace(max_hands=3), seed=11)
    rec = record_from_game(game)
    bad = copy.deepcopy(rec)
    bad["hands"][1]["scores_before"][0] += 10
    with pytest.raises(
        RecordError, match=r"hands\[1\]\.scores_before: record says .*, but the previous hand leads to"
    ):
        replay_record(bad)
    bad = copy.deepcopy(rec)
    bad["hands"][2]["dealer"] = (bad["hands"][2]["dealer"] + 1) % 4
    with pytest.raises(RecordError, match=r"hands\[2\]\.dealer"):
        replay_record(bad)
    bad = copy.deepcopy(rec)
    bad["hands"].append(copy.deepcopy(bad["hands"][-1]))  # the match ended at the 3-hand cap
    with pytest.raises(RecordError, match=r"hands\[3\]: the match is over after hands\[2\]"):
        replay_record(bad)
    bad = copy.deepcopy(rec)
    bad["final"]["scores"][1] += 1
    with pytest.raises(RecordError, match=r"final\.scores: record says"):
        replay_record(bad)


def test_unfinished_last_hand_replays_and_only_the_last_may_be_unfinished() -> None:
    game = play_random(load_rules("tournament").replace(max_hands=2), seed=5)
    part = SpadesGame(game.rules, seed=5)
    # the same deal and the first 20 actions of hand 0
    log = game.hand_logs[0]
    for a in log.actions[:20]:
        part.apply(a)
    rec = record_from_game(part)
    assert rec["hands"][0]["result"] is None and "final" not in rec
    result = replay_record(rec)
    assert result.hands == [None] and result.final["phase"] == "play"
    assert "unfinished: 20 actions so far" in format_record(rec)
    full = record_from_game(game)
    full["hands"][0]["result"] = None
    with pytest.raises(RecordError, match=r"hands\[0\]\.result: only the last hand may be unfinished"):
        load_record(full)


def test_rules_are_a_preset_name_or_the_full_dict() -> None:
    assert rules_to_record(load_rules("openspiel")) == "openspiel"
    assert rules_to_record(load_rules(None)) == "tournament"
    changed = load_rules("tournament").replace(max_hands=3)
    d = rules_to_record(changed)
    assert isinstance(d, dict) and d["max_hands"] == 3 and d["blind_nil_exchange"] == 3
    game = play_random(load_rules("openspiel").replace(max_hands=1), seed=2)
    rec = record_from_game(game)
    assert rec["rules"]["failed_nil_counts_toward_contract"] is True
    assert rec["first_dealer"] == 3  # the openspiel preset deals from W


def test_save_and_load_file(tmp_path) -> None:
    game = play_random(load_rules("tournament").replace(max_hands=2), seed=9)
    rec = record_from_game(game, meta={"seed": 9})
    path = tmp_path / "game.json"
    save_record(rec, path)
    assert json.loads(path.read_text()) == rec
    assert load_record(path) == rec
    assert load_record(str(path)) == rec
    assert replay_record(path).final["scores"] == list(game.scores)
    bad = copy.deepcopy(rec)
    bad["hands"][0]["deal"][0][0] = "1X"
    out = tmp_path / "bad.json"
    with pytest.raises(RecordError, match="bad card string"):
        save_record(bad, out)
    assert not out.exists()
    out.write_text('{"format": ')
    with pytest.raises(RecordError, match=r"not valid JSON \(line 1"):
        load_record(out)
    with pytest.raises(RecordError, match="cannot read record file"):
        load_record(tmp_path / "missing.json")


# ---- export then replay: 10,000 random games ------------------------------------------------
VARIANTS = {
    "tournament": load_rules("tournament").replace(max_hands=2),
    "openspiel": load_rules("openspiel").replace(max_hands=2),
    "two_player": load_rules("two_player").replace(max_hands=2),
    # low target and a mercy rule: games and matches end, scores reset between games
    "short_games": load_rules("tournament").replace(
        max_hands=3, target_score=40, mercy_rule=True, mercy_threshold=-150
    ),
}
GAMES_PER_VARIANT = 2500  # 4 x 2500 = 10,000 random games


@pytest.mark.parametrize("variant", sorted(VARIANTS))
def test_export_then_replay_reproduces_every_score(variant: str) -> None:
    rules = VARIANTS[variant]
    rng = np.random.default_rng(2026)
    seen = {"hands": 0, "exchanges": 0, "blind": 0, "nil": 0, "game_end": 0, "won_match": 0, "truncated": 0}
    for g in range(GAMES_PER_VARIANT):
        game = SpadesGame(rules, seed=g)
        while not game.is_over:
            if game.is_hand_over:
                game.next_hand()
                continue
            legal = np.flatnonzero(game.legal_mask())
            game.apply(int(legal[rng.integers(legal.size)]))
        record = json.loads(dumps_record(record_from_game(game)))  # through JSON text
        result = replay_record(record)
        logs = game.hand_logs
        assert len(result.hands) == len(logs)
        for log, got in zip(logs, result.hands, strict=True):
            assert got == log.result
            seen["hands"] += 1
            bids = got["bids"]
            seen["blind"] += bids.count("blind")
            seen["nil"] += bids.count(0)
            if rules.num_players == 4:
                seen["exchanges"] += sum(
                    bids[s] == "blind" and bids[(s + 2) % 4] != "blind" for s in range(4)
                )
            seen["game_end"] += got["phase"] == "game_end"
        assert result.final["scores"] == list(game.scores)
        assert result.final["bags"] == list(game.bags)
        assert result.final["game_wins"] == list(game.game_wins)
        assert result.final["truncated"] == game.truncated
        seen["truncated"] += game.truncated
        seen["won_match"] += result.final["match_winner"] >= 0
    assert seen["hands"] >= 2 * GAMES_PER_VARIANT
    assert seen["nil"] > 100
    if variant == "openspiel":
        assert seen["blind"] == 0
    else:
        assert seen["blind"] > 100
    if variant in ("tournament", "short_games"):
        assert seen["exchanges"] > 100  # Blind Nil exchanges replayed card by card
    if variant == "short_games":
        assert seen["game_end"] > 50 and seen["won_match"] > 50
    else:
        assert seen["truncated"] > GAMES_PER_VARIANT // 2


def test_format_record_text() -> None:
    text = format_record(one_suit_record())
    assert "Game 1, hand 1: dealer W, N bids and leads" in text
    assert "N  bid Nil        won  0   S: -  H: -  D: -  C: A K Q J T 9 8 7 6 5 4 3 2" in text
    assert "NS: bid 4 + Nil, won  0  ->    +60 points,  score    60, bags 0" in text
    assert "EW: bid 16, won 13  ->   -160 points,  score  -160, bags 0" in text


@pytest.mark.parametrize("episode", ["hand", "game", "match"])
def test_aec_env_games_export_and_replay(episode: str) -> None:
    import spades_env

    rules = load_rules("tournament").replace(max_hands=4, target_score=60)
    env = spades_env.raw_env(rules=rules, episode=episode)
    rng = np.random.default_rng(1)
    for seed in range(12):
        preset = {"scores": [50, 20], "bags": [3, 9]} if seed % 2 else None
        env.reset(seed=seed, options=preset)
        for _agent in env.agent_iter():
            obs, _r, term, trunc, _info = env.last()
            env.step(None if term or trunc else int(rng.choice(np.flatnonzero(obs["action_mask"]))))
        rec = record_from_game(env.game)
        if preset:
            assert rec["start_scores"] == [50, 20] and rec["start_bags"] == [3, 9]
        result = replay_record(rec)
        assert result.final["scores"] == list(env.game.scores)
        assert result.final["phase"] == env.game.phase
        if episode == "hand":
            assert len(rec["hands"]) == 1
