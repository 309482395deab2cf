"""What the shipped agents' metadata records and how they play, read from the agent folders
with NumPy only (``spades_env.policies.checkpoint.load_meta``): ``spades4_net_v1`` (the family
network after two PPO rounds, once ``spades_family_v5``), ``spades4_net_v2`` (that network
fitted to L3's values at its full budget), ``spades4_net_v3`` (the same fit, its tournament
decisions fitted to ``spades4_net_v1``'s own policy), ``spades4_net_v4`` (its tournament and
house decisions so fitted, the network ``spades4_v3`` searches with), ``spades4_net_v5`` (it,
fine-tuned by PPO over Blind Nil exchanges of 0 to 3 cards), ``spades4_v1`` (``spades4_net_v1`` with L3
in the Nil hands, once ``spades_family_v11``), ``spades4_v2`` (``spades4_net_v2`` with its own
search), ``spades4_v3`` (``spades4_net_v4`` with the same search) and ``spades2_v1`` (the two-player game, once
``spades_2p_v1``). The histories (v4 to v11, ``spades_ppo_v1``) are rows of the cards."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from spades_env.core.game import SpadesGame
from spades_env.core.observation import OBS_SIZE, OBS_VERSION, encode_observation
from spades_env.core.rules import load_rules
from spades_env.eval import run_duplicate, summarize
from spades_env.policies import load
from spades_env.policies.agents import agent_dir
from spades_env.policies.checkpoint import CheckpointError, load_meta

ROOT = Path(__file__).resolve().parents[2]
RULES = {
    "tournament": load_rules("tournament"),
    "house": load_rules("house"),
    "no_blind": load_rules("tournament").replace(blind_nil=False, blind_nil_exchange=0),
    "short_bags7": load_rules("house").replace(target_score=300, bag_limit=7),
}


def _phases_played(agent: str, rules, seed: int, steps: int) -> set[str]:
    """Play a game with the agent at every seat; the phases met (an illegal action raises)."""
    pol = load(agent, seed=0, rules=rules)
    game = SpadesGame(rules, seed=seed)
    obs = np.zeros(OBS_SIZE, dtype=np.float32)
    phases = set()
    for _ in range(steps):  # several hands: blind decision, bids, exchanges, play
        if game.is_hand_over:
            if game.is_game_over:
                break
            game.next_hand()
        phases.add(game.phase)
        encode_observation(game.state, game.params, game.current_player, obs)
        game.apply(pol.act(obs, game.legal_mask()))
    return phases


def test_the_network_records_its_ppo_rounds():
    folder = agent_dir("spades4_net_v1")
    meta = load_meta(folder)
    cfg = meta["config"]
    assert meta["obs_version"] == OBS_VERSION and meta["policy"]["deterministic"] is True
    assert cfg["init_from"]  # ppo2 starts from ppo1's policy
    assert cfg["pool_start"] and cfg["pool_opponent_share"] == 0.5 and cfg["anchor_coef"] == 0.5
    assert meta["update"] == cfg["total_updates"] == 1200
    assert meta["arch"]["score_clip"] == 2.0 and meta["arch"]["hidden"]
    assert {"tournament", "house", "no_blind"} <= {r["name"] for r in meta["rules_family"]}
    assert not (folder / "train_state.safetensors").exists()  # weights and metadata only


@pytest.mark.parametrize(("agent", "pipeline", "kept"), [
    ("spades4_net_v2", "pipeline_v2.yaml", []),
    ("spades4_net_v3", "pipeline_v3.yaml", ["tournament"]),
    ("spades4_net_v4", "pipeline_v4.yaml", ["tournament", "house"]),
])
def test_the_l3_fitted_networks_record_their_committed_lineage(agent, pipeline, kept):
    """The meta of each network fitted to L3 (``spades4_net_v2`` to ``spades4_net_v4``) holds the
    config of its pipeline's one stage key for key (but the progress bar; a key added to
    ``BCConfig`` after the network shipped is at its default, which changes nothing): the
    committed config rebuilds it."""
    import dataclasses

    from training.bc import BCConfig, load_bc_config
    from training.config import config_to_dict
    from training.pipeline import load_pipeline

    meta = load_meta(agent_dir(agent))
    (stage,) = load_pipeline(ROOT / "configs" / "train" / pipeline).stages
    committed = json.loads(json.dumps(config_to_dict(load_bc_config(ROOT / stage.config)), default=str))
    defaults = {f.name: f.default for f in dataclasses.fields(BCConfig)}
    for key in set(committed) - set(meta["config"]):
        assert committed.pop(key) == json.loads(json.dumps(defaults[key], default=str)), key
    assert {k: v for k, v in meta["config"].items() if k != "progress"} == {
        k: v for k, v in committed.items() if k != "progress"
    }
    cfg = meta["config"]
    assert cfg["teacher"] == "search:samples=1000,bid_infer=1" and cfg["suit_augment"] is True
    assert cfg["init_from"] == cfg["play_by"] == "checkpoints/spades4_net_v1"
    assert cfg.get("keep_start_on", []) == kept
    assert meta["trainer"] == "training.bc" and meta["decisions"] == cfg["decisions"] == 600_000
    assert meta["obs_version"] == OBS_VERSION and meta["policy"]["deterministic"] is True


def test_the_exchange_fine_tune_records_its_committed_lineage():
    """``spades4_net_v5``'s meta holds its pipeline's one PPO stage config key for key (but the
    progress bar): ``spades4_net_v4`` fine-tuned over rules whose Blind Nil exchange is 0 to 3."""
    from training.config import config_to_dict
    from training.pipeline import load_pipeline
    from training.ppo import load_train_config
    from training.rules_family import load_family

    meta = load_meta(agent_dir("spades4_net_v5"))
    (stage,) = load_pipeline(ROOT / "configs" / "train" / "pipeline_v5.yaml").stages
    assert stage.kind == "ppo" and not stage.init_from
    from training.ppo_config import TrainConfig

    def as_json(cfg: TrainConfig) -> dict:
        return json.loads(json.dumps(config_to_dict(cfg), default=str))

    committed = as_json(load_train_config(ROOT / stage.config))
    defaults = as_json(TrainConfig())
    drop = {"progress"}
    assert {k: v for k, v in meta["config"].items() if k not in drop} == {
        k: v for k, v in committed.items() if k not in drop and k in meta["config"]
    }
    # a key the trainer gained after the run is at its default in the committed config
    for key in set(committed) - set(meta["config"]):
        assert committed[key] == defaults[key], key
    cfg = meta["config"]
    assert cfg["init_from"] == "checkpoints/spades4_net_v4" and cfg["anchor_coef"] > 0
    assert meta["update"] == cfg["total_updates"] and meta["policy"]["deterministic"] is True
    exchanges = {r.blind_nil_exchange for r in load_family(cfg["rules_family"]) if r.blind_nil}
    assert {0, 1, 2, 3} <= exchanges


@pytest.mark.parametrize(
    ("net", "declared", "margin"),
    [("spades4_net_v4", (1.0, 1.0), (-300, -100)), ("spades4_net_v5", (0.0, 0.3), (-40, 100))],
)
def test_blind_nil_without_the_exchange(net, declared, margin):
    """Under tournament rules with no Blind Nil exchange, ``spades4_net_v4`` (which met Blind Nil
    only with the 3-card exchange) still declares it every hand and loses heavily to L2, who
    declines it; ``spades4_net_v5`` declares it on few hands and stays near L2 (60 hands)."""
    rules = load_rules("tournament").replace(blind_nil_exchange=0)
    boards = run_duplicate((net, net), ("heuristic",) * 2, 30, seed=7, rules=rules, fmt="hand", batched=True)
    s = summarize(boards, "hand", (net, "heuristic"))
    assert declared[0] <= s["teams"][0]["blind_nil_bids_per_hand"] <= declared[1]
    assert margin[0] < s["margin_per_hand"]["mean"] < margin[1]


def test_the_two_player_network_records_its_lineage():
    folder = agent_dir("spades2_v1")
    meta = load_meta(folder)
    cfg = meta["config"]
    assert meta["rules"]["num_players"] == 2 and meta["policy"]["deterministic"] is True
    assert meta["obs_version"] == OBS_VERSION and meta["update"] == 1000
    assert cfg["rules"] == "two_player" and cfg["init_from"].endswith("bc/final")
    assert not (folder / "train_state.safetensors").exists()


def test_make_run_plays_the_reference_agent():
    from spades_env.policies.checkpoint import _SHIPPED_FOR

    assert "spades matrix spades4_v1 " in (ROOT / "Makefile").read_text()
    assert _SHIPPED_FOR == {4: "spades4_v1", 2: "spades2_v1"}


@pytest.mark.parametrize(
    "agent",
    ["spades4_v1", "spades4_net_v1", "spades4_net_v2", "spades4_net_v3", "spades4_net_v4", "spades4_net_v5", "spades4_v2", "spades4_v3"],
)
def test_the_four_player_agents_play_every_phase(agent):
    assert {"blind", "bid", "play"} <= _phases_played(agent, RULES["tournament"], 11, 300)


@pytest.mark.parametrize("net", ["spades4_net_v1", "spades4_net_v2", "spades4_net_v3", "spades4_net_v4", "spades4_net_v5"])
@pytest.mark.parametrize("name", sorted(RULES))
def test_the_networks_play_legal_moves_under_each_rules(net, name):
    assert {"bid", "play"} <= _phases_played(net, RULES[name], 5, 400)


@pytest.mark.parametrize("agent", ["spades4_v2", "spades4_v3"])
@pytest.mark.parametrize("name", sorted(RULES))
def test_the_network_search_plays_legal_moves_under_each_rules(agent, name):
    """The search agents search with the rules they are given (two hands each: a search is slower)."""
    assert {"bid", "play"} <= _phases_played(agent, RULES[name], 7, 120)


@pytest.mark.parametrize(("agent", "name"), [("spades4_net_v1", "no_blind"), ("spades4_v1", "house")])
def test_the_four_player_agents_beat_random(agent, name):
    boards = run_duplicate(
        (agent, agent), ("random", "random"), 6, seed=3, rules=RULES[name], fmt="hand", batched=True
    )
    assert summarize(boards, "hand")["margin_per_hand"]["mean"] > 50


def test_the_two_player_agent_plays_every_phase_and_beats_random_and_greedy():
    rules = load_rules("two_player")
    assert {"bid", "draw", "play"} <= _phases_played("spades2_v1", rules, 5, 600)
    for opp, floor in (("random", 50), ("greedy", 0)):
        boards = run_duplicate(("spades2_v1",) * 2, (opp, opp), 20, seed=4, rules=rules, fmt="hand", batched=True)
        assert summarize(boards, "hand")["margin_per_hand"]["mean"] > floor


@pytest.mark.parametrize(
    ("agent", "rules", "message"),
    [
        ("spades4_net_v1", "two_player", "trained for 4 players, asked to play 2"),
        ("spades4_net_v2", "two_player", "trained for 4 players, asked to play 2"),
        ("spades4_net_v3", "two_player", "trained for 4 players, asked to play 2"),
        ("spades4_v1", "two_player", "trained for 4 players, asked to play 2"),
        ("spades4_v2", "two_player", "trained for 4 players, asked to play 2"),
        ("spades4_net_v4", "two_player", "trained for 4 players, asked to play 2"),
        ("spades4_net_v5", "two_player", "trained for 4 players, asked to play 2"),
        ("spades4_v3", "two_player", "trained for 4 players, asked to play 2"),
        ("spades2_v1", "tournament", "trained for 2 players, asked to play 4"),
    ],
)
def test_an_agent_refuses_the_other_number_of_players(agent, rules, message):
    with pytest.raises(CheckpointError, match=message):
        load(agent, seed=0, rules=rules)
