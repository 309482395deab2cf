"""Batched evaluation (spades_env.eval.batched) gives the one-at-a-time path's results exactly."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from spades_env.cli import main
from spades_env.core.game import SpadesGame
from spades_env.core.observation import OBS_SIZE
from spades_env.core.rules import load_rules
from spades_env.envs.vector import RandomLegal, VectorSpades
from spades_env.eval.batched import play_boards_batched
from spades_env.eval.boards import make_jobs
from spades_env.eval.duplicate import play_boards
from spades_env.policies.base import RandomPolicy, act_rows
from spades_env.policies.checkpoint import CheckpointPolicy, NumpyActor, act_policies, load_policy

SHIPPED = str(Path(__file__).resolve().parents[2] / "checkpoints" / "spades4_net_v1")


def sampling_checkpoint(seed, rules):
    """The shipped checkpoint sampling from its policy (not its argmax)."""
    return load_policy(SHIPPED, seed=seed, rules=rules, deterministic=False)


sampling_checkpoint.name = "shipped-sampling"


def _observations(n_games=64, steps=40, seed=5):
    v = VectorSpades(n_games, "tournament", seed=seed)
    pick = RandomLegal(n_games, seed=seed)
    res = v.reset(seed)
    obs, masks = [], []
    for _ in range(steps):
        obs.append(res.obs.copy())
        masks.append(res.mask.copy())
        res = v.step(pick(res.mask))
    return np.concatenate(obs), np.concatenate(masks)


def test_start_games_and_hand_end_states_match_the_facade():
    rules = load_rules("tournament")
    seeds = [11, 2**62 + 5, 12345]
    v = VectorSpades(4, rules, episode="game", seed=0)
    v.start_games(np.array(seeds), np.array([3, 0, 1]))
    games = {
        3: SpadesGame(rules, seed=seeds[0]),
        0: SpadesGame(rules, seed=seeds[1]),
        1: SpadesGame(rules, seed=seeds[2]),
    }
    for i, g in games.items():
        np.testing.assert_array_equal(v.states[i], g.state)
        assert v.game_seeds[i] == seeds[list(games).index(i)]
    pick = RandomLegal(4, seed=1)
    active = np.array([True, True, False, True])
    hands = 0
    for _ in range(400):
        a = pick(v._result().mask)
        res = v.step(a, active=active)
        for i, g in games.items():
            r = g.step(int(a[i]))
            assert bool(v.hand_done[i]) == (r.hand is not None)
            if r.hand is not None:
                hands += 1
                np.testing.assert_array_equal(v.hand_end_states[i], r.hand_end_state)
            if res.terminated[i] or res.truncated[i]:
                assert r.done
                games[i] = SpadesGame(rules, seed=int(v.game_seeds[i]))
            np.testing.assert_array_equal(v.states[i], games[i].state)
        assert not v.hand_done[2]
    assert hands >= 6


@pytest.mark.parametrize("deterministic", [True, False])
def test_act_policies_is_act_row_by_row(deterministic):
    obs, masks = _observations()
    rules = load_rules("tournament")

    def pool():  # seven seats' policies, each with its own generator, sharing one actor
        return [
            load_policy(SHIPPED, seed=100 + k, rules=rules, deterministic=deterministic) for k in range(7)
        ]

    mine, twins = pool(), pool()
    got = act_policies([mine[i % 7] for i in range(len(obs))], obs, masks)
    want = [twins[i % 7].act(o, m) for i, (o, m) in enumerate(zip(obs, masks, strict=True))]
    assert got.tolist() == want
    assert len(set(want)) > 20


@pytest.mark.parametrize("deterministic", [True, False])
def test_act_batch_with_ties_and_random_weights(deterministic):
    obs, masks = _observations(n_games=16, steps=30)
    rng = np.random.default_rng(3)
    for scale in (0.0, 0.05):  # all-zero weights: every legal logit ties (the recompute path)
        weights = {}
        sizes = [OBS_SIZE, 32, 70]
        for k in range(2):
            weights[f"actor.{2 * k}.weight"] = (scale * rng.normal(size=(sizes[k + 1], sizes[k]))).astype(
                np.float32
            )
            weights[f"actor.{2 * k}.bias"] = (scale * rng.normal(size=sizes[k + 1])).astype(np.float32)
        actor = NumpyActor(weights, [32])
        a = CheckpointPolicy(actor, seed=9, deterministic=deterministic)
        b = CheckpointPolicy(actor, seed=9, deterministic=deterministic)
        assert a.act_batch(obs, masks).tolist() == [b.act(o, m) for o, m in zip(obs, masks, strict=True)]


def test_decide_random_and_heuristic_rows():
    from spades_env.policies.bots.greedy import GreedyPolicy
    from spades_env.policies.bots.heuristic import BlindNilPolicy, HeuristicPolicy

    obs, masks = _observations(n_games=16, steps=30)

    def pool():
        return [RandomPolicy(1), RandomPolicy(2), HeuristicPolicy(), BlindNilPolicy(), GreedyPolicy(seed=3)]

    mine, twins = pool(), pool()
    got = act_rows([mine[i % 5] for i in range(len(obs))], obs, masks)
    assert got.tolist() == [twins[i % 5].act(o, m) for i, (o, m) in enumerate(zip(obs, masks, strict=True))]


@pytest.mark.parametrize(
    "team_a, team_b, fmt, rules",
    [
        ((SHIPPED, SHIPPED), ("heuristic", "heuristic"), "game", {"target_score": 200}),
        ((SHIPPED, "heuristic"), ("random", "blind"), "game", {"target_score": 150}),
        ((sampling_checkpoint, sampling_checkpoint), ("greedy", "random"), "hand", {}),
        ((SHIPPED, "random"), ("heuristic", "greedy"), "match", {"target_score": 100, "max_hands": 3}),
    ],
)
def test_batched_boards_equal_one_at_a_time(team_a, team_b, fmt, rules):
    cfg = load_rules("tournament").replace(**rules)
    jobs = make_jobs(team_a, team_b, 4, seed=7, rules=cfg, fmt=fmt)
    want = play_boards(jobs)
    got = play_boards_batched(jobs, slots=3)  # fewer slots than runs: slots are refilled
    assert got == want
    assert sum(len(pr.hands) for b in got for _, pr in b.runs) >= 8


def test_gauntlet_cli_json_identical_both_paths(tmp_path):
    common = ["gauntlet", SHIPPED, "--games", "4", "--target", "150", "--no-progress", "--workers", "1"]
    assert main([*common, "--out", str(tmp_path / "batched")]) == 0
    assert main([*common, "--one-at-a-time", "--out", str(tmp_path / "old")]) == 0

    def strip(d):
        if isinstance(d, dict):
            return {k: strip(v) for k, v in d.items() if k != "seconds"}
        if isinstance(d, list):
            return [strip(x) for x in d]
        return d

    a = json.loads((tmp_path / "batched" / "gauntlet.json").read_text())
    b = json.loads((tmp_path / "old" / "gauntlet.json").read_text())
    assert strip(a) == strip(b) and len(a["matchups"]) == 4


def test_batched_on_two_processes_equals_one_at_a_time():
    from spades_env.eval.duplicate import run_duplicate

    rules = load_rules("tournament").replace(target_score=120)
    teams = ((SHIPPED, "heuristic"), ("random", "random"))
    want = run_duplicate(*teams, 3, seed=2, rules=rules, workers=1)
    assert run_duplicate(*teams, 3, seed=2, rules=rules, workers=2, batched=True) == want
