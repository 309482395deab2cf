"""The shipped policies in checkpoints/: they load without training code paths of their own,
play only legal actions, and beat the random baseline (the full evaluations are in their model
cards). ``spades_ppo_v1`` (tournament rules, observation v1), ``spades_family_v4`` (a family
of rules, observation v2, its lineage in its metadata), ``spades_family_v5`` (v4 after two
PPO rounds), ``spades_family_v6`` (v5's network with L3 playing its cards after an opponent's
Blind Nil), ``spades_family_v7`` (the same after an opponent's Nil too), ``spades_family_v8``
(the same after its partner's Nil too), ``spades_family_v9`` (v8 with L3 reading the bids),
``spades_family_v10`` (v9 searching 400 deals a card instead of 200), ``spades_family_v11``
(v10 bidding a trick lower after its partner's and an opponent's Nil; ``make run``) and
``spades_2p_v1`` (the two-player game)."""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
import pytest

pytest.importorskip("torch")
pytest.importorskip("safetensors")

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from spades_env.core.game import SpadesGame  # noqa: E402
from spades_env.core.observation import OBS_SIZE, OBS_VERSION, encode_observation  # noqa: E402
from spades_env.core.rules import load_rules  # noqa: E402
from spades_env.eval import resolve_policy, run_duplicate, summarize  # noqa: E402
from training.checkpoint import load_checkpoint  # noqa: E402

SHIPPED = ROOT / "checkpoints" / "spades_ppo_v1"
FAMILY = ROOT / "checkpoints" / "spades_family_v4"
FAMILY_V5 = ROOT / "checkpoints" / "spades_family_v5"
FAMILY_V6 = ROOT / "checkpoints" / "spades_family_v6"
FAMILY_V7 = ROOT / "checkpoints" / "spades_family_v7"
FAMILY_V8 = ROOT / "checkpoints" / "spades_family_v8"
FAMILY_V9 = ROOT / "checkpoints" / "spades_family_v9"
FAMILY_V10 = ROOT / "checkpoints" / "spades_family_v10"
FAMILY_V11 = ROOT / "checkpoints" / "spades_family_v11"
TWO_PLAYER = ROOT / "checkpoints" / "spades_2p_v1"
RULES = {
    "tournament": load_rules("tournament"),
    "house": load_rules("house"),
    "no_blind": load_rules("tournament").replace(blind_nil=False, blind_nil_exchange=0),
    "short_bags7": load_rules("house").replace(target_score=300, bag_limit=7),
}


def _phases_played(path: Path, rules, seed: int, steps: int) -> set[str]:
    """Play a game with the policy at every seat; the phases met (an illegal action raises)."""
    pol = resolve_policy(str(path), 0, rules)
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


def test_shipped_checkpoint_metadata():
    model, meta = load_checkpoint(SHIPPED)
    assert meta["obs_version"] == 1 and meta["arch"]["hidden"] == [512, 512]
    assert meta["policy"]["deterministic"] is True
    assert meta["rules"]["name"] == "tournament"
    assert meta["config"]["init_from"]  # PPO fine-tuning of a warm start
    assert (SHIPPED / "MODEL_CARD.md").is_file()
    assert not (SHIPPED / "train_state.safetensors").exists()  # weights and metadata only


def test_shipped_policy_plays_legal_moves_in_every_phase():
    assert {"blind", "bid", "play"} <= _phases_played(SHIPPED, load_rules("tournament"), 11, 300)


def test_shipped_policy_beats_random_on_duplicate_hands():
    rules = load_rules("tournament")
    boards = run_duplicate(
        (str(SHIPPED), str(SHIPPED)), ("random", "random"), 6, seed=3, rules=rules, fmt="hand"
    )
    s = summarize(boards, "hand")
    assert s["margin_per_hand"]["mean"] > 50


def test_family_checkpoint_metadata_records_its_lineage():
    _, meta = load_checkpoint(FAMILY)
    assert meta["obs_version"] == OBS_VERSION and meta["policy"]["deterministic"] is True
    assert meta["trainer"] == "training.bc" and meta["bc"]["teacher"].startswith("search:")
    assert meta["bc"]["init_from"].endswith("bc/final")  # from the lineage's first stage
    data_from = [Path(d).parent.name for d in meta["config"]["data_from"]]
    assert data_from == ["bc2", "bc3", "soft", "all2"]  # every L3 stage's labels, DAgger's included
    assert meta["config"]["soft_temperature"] > 0 and meta["config"]["regret_coef"] > 0  # values, and the regret term
    assert meta["config"]["play_by"].endswith("final/final")  # DAgger played by stage 7 (v3)
    assert meta["config"]["decisions"] == 600_000  # its own L3 labels, fitted with the earlier stages'
    assert meta["bc"]["decisions"] == 3_800_000 and len(meta["bc"]["history"]) == meta["config"]["epochs"]
    assert meta["arch"]["score_clip"] == meta["config"]["score_clip"] == 2.0  # the clipped score inputs
    assert {"tournament", "house", "no_blind"} <= {r["name"] for r in meta["rules_family"]}
    assert (FAMILY / "MODEL_CARD.md").is_file()
    assert not (FAMILY / "train_state.safetensors").exists()


@pytest.mark.parametrize("name", sorted(RULES))
def test_family_policy_plays_legal_moves_under_each_rules(name):
    assert {"bid", "play"} <= _phases_played(FAMILY, RULES[name], 5, 400)


@pytest.mark.parametrize("name", ["tournament", "no_blind"])
def test_family_policy_beats_random(name):
    boards = run_duplicate(
        (str(FAMILY), str(FAMILY)), ("random", "random"), 6, seed=3, rules=RULES[name], fmt="hand", batched=True
    )
    assert summarize(boards, "hand")["margin_per_hand"]["mean"] > 50


def test_v5_metadata_records_its_ppo_rounds():
    _, meta = load_checkpoint(FAMILY_V5)
    cfg = meta["config"]
    assert meta["obs_version"] == OBS_VERSION and meta["policy"]["deterministic"] is True
    assert cfg["init_from"] == "checkpoints/candidates/finetune_pool"  # ppo1, the first round
    assert cfg["pool_start"] and cfg["pool_opponent_share"] == 0.5 and cfg["anchor_coef"] == 0.5
    assert meta["update"] == cfg["total_updates"] == 1200
    _, start = load_checkpoint(ROOT / cfg["init_from"])
    assert start["config"]["init_from"] == "checkpoints/spades_family_v4" and start["update"] == 1000
    assert meta["arch"] == start["arch"] and meta["arch"]["score_clip"] == 2.0
    assert {"tournament", "house", "no_blind"} <= {r["name"] for r in meta["rules_family"]}
    assert (FAMILY_V5 / "MODEL_CARD.md").is_file()
    assert not (FAMILY_V5 / "train_state.safetensors").exists()


def test_make_run_plays_the_shipped_policy():
    from spades_env.policies.checkpoint import _SHIPPED_FOR

    assert "checkpoints/spades_family_v11 " in (ROOT / "Makefile").read_text()
    assert _SHIPPED_FOR[4] == "checkpoints/spades_family_v11"


def test_v6_is_v5s_network_with_a_search_defence():
    from spades_env.policies.checkpoint import CheckpointPolicy, load_meta, load_policy
    from spades_env.policies.composite import SearchDefencePolicy

    assert (FAMILY_V6 / "model.safetensors").read_bytes() == (FAMILY_V5 / "model.safetensors").read_bytes()
    meta, meta5 = load_meta(FAMILY_V6), load_meta(FAMILY_V5)
    assert meta["policy"] == {"deterministic": True, "search_defence": "search:samples=200"}
    assert {k: v for k, v in meta.items() if k not in ("policy", "derived_from")} == {
        k: v for k, v in meta5.items() if k != "policy"
    }
    pol = load_policy(FAMILY_V6, seed=0, rules="house")
    assert isinstance(pol, SearchDefencePolicy) and isinstance(pol.net, CheckpointPolicy)
    assert (FAMILY_V6 / "MODEL_CARD.md").is_file()


def test_v6_plays_as_v5_where_no_opponent_declares_blind_nil():
    rules = RULES["no_blind"]  # no Blind Nil: the search never plays, the two are one player
    a = run_duplicate((str(FAMILY_V6),) * 2, ("heuristic", "heuristic"), 3, seed=5, rules=rules, fmt="hand", batched=True)
    b = run_duplicate((str(FAMILY_V5),) * 2, ("heuristic", "heuristic"), 3, seed=5, rules=rules, fmt="hand", batched=True)
    assert summarize(a, "hand") == summarize(b, "hand")


def test_v7_is_v6_defending_nil_too():
    from spades_env.policies.checkpoint import load_meta, load_policy
    from spades_env.policies.composite import SearchDefencePolicy

    assert (FAMILY_V7 / "model.safetensors").read_bytes() == (FAMILY_V6 / "model.safetensors").read_bytes()
    meta, meta6 = load_meta(FAMILY_V7), load_meta(FAMILY_V6)
    assert meta["policy"] == {**meta6["policy"], "search_defence_against": ["blind_nil", "nil"]}
    assert {k: v for k, v in meta.items() if k not in ("policy", "derived_from")} == {
        k: v for k, v in meta6.items() if k not in ("policy", "derived_from")
    }
    pol, pol6 = load_policy(FAMILY_V7, seed=0, rules="house"), load_policy(FAMILY_V6, seed=0, rules="house")
    assert isinstance(pol, SearchDefencePolicy) and pol.against == ("blind_nil", "nil")
    assert pol6.against == ("blind_nil",)
    assert (FAMILY_V7 / "MODEL_CARD.md").is_file()


def test_v8_is_v7_covering_its_partners_nil_too():
    from spades_env.policies.checkpoint import load_meta, load_policy

    assert (FAMILY_V8 / "model.safetensors").read_bytes() == (FAMILY_V7 / "model.safetensors").read_bytes()
    meta, meta7 = load_meta(FAMILY_V8), load_meta(FAMILY_V7)
    assert meta["policy"] == {**meta7["policy"], "search_defence_cover": ["nil", "blind_nil"]}
    assert {k: v for k, v in meta.items() if k not in ("policy", "derived_from")} == {
        k: v for k, v in meta7.items() if k not in ("policy", "derived_from")
    }
    pol, pol7 = load_policy(FAMILY_V8, seed=0, rules="house"), load_policy(FAMILY_V7, seed=0, rules="house")
    assert pol.against == pol7.against == ("blind_nil", "nil")
    assert pol.cover == ("nil", "blind_nil") and pol7.cover == ()
    assert (FAMILY_V8 / "MODEL_CARD.md").is_file()


def test_v9_is_v8_with_l3_reading_the_bids():
    from spades_env.policies.checkpoint import load_meta, load_policy

    assert (FAMILY_V9 / "model.safetensors").read_bytes() == (FAMILY_V8 / "model.safetensors").read_bytes()
    meta, meta8 = load_meta(FAMILY_V9), load_meta(FAMILY_V8)
    assert meta["policy"] == {**meta8["policy"], "search_defence": "search:samples=200,bid_infer=1"}
    assert {k: v for k, v in meta.items() if k not in ("policy", "derived_from")} == {
        k: v for k, v in meta8.items() if k not in ("policy", "derived_from")
    }
    pol, pol8 = load_policy(FAMILY_V9, seed=0, rules="house"), load_policy(FAMILY_V8, seed=0, rules="house")
    assert (pol.against, pol.cover) == (pol8.against, pol8.cover) == (("blind_nil", "nil"), ("nil", "blind_nil"))
    assert pol.search.bid_infer is True and pol8.search.bid_infer is False
    assert pol.search.samples == pol8.search.samples == 200
    assert (FAMILY_V9 / "MODEL_CARD.md").is_file()


def test_v10_is_v9_searching_400_deals():
    from spades_env.policies.checkpoint import load_meta, load_policy

    assert (FAMILY_V10 / "model.safetensors").read_bytes() == (FAMILY_V9 / "model.safetensors").read_bytes()
    meta, meta9 = load_meta(FAMILY_V10), load_meta(FAMILY_V9)
    assert meta["policy"] == {**meta9["policy"], "search_defence": "search:samples=400,bid_infer=1"}
    assert {k: v for k, v in meta.items() if k not in ("policy", "derived_from")} == {
        k: v for k, v in meta9.items() if k not in ("policy", "derived_from")
    }
    pol, pol9 = load_policy(FAMILY_V10, seed=0, rules="house"), load_policy(FAMILY_V9, seed=0, rules="house")
    assert (pol.against, pol.cover) == (pol9.against, pol9.cover) == (("blind_nil", "nil"), ("nil", "blind_nil"))
    assert pol.search.bid_infer is pol9.search.bid_infer is True
    assert (pol.search.samples, pol9.search.samples) == (400, 200)
    assert (FAMILY_V10 / "MODEL_CARD.md").is_file()


def test_v11_is_v10_bidding_a_trick_lower_after_both_teams_nils():
    from spades_env.policies.checkpoint import load_meta, load_policy

    assert (FAMILY_V11 / "model.safetensors").read_bytes() == (FAMILY_V10 / "model.safetensors").read_bytes()
    meta, meta10 = load_meta(FAMILY_V11), load_meta(FAMILY_V10)
    assert meta["policy"] == {**meta10["policy"], "both_nil_bid_shade": 1}
    assert {k: v for k, v in meta.items() if k not in ("policy", "derived_from")} == {
        k: v for k, v in meta10.items() if k not in ("policy", "derived_from")
    }
    pol, pol10 = load_policy(FAMILY_V11, seed=0, rules="house"), load_policy(FAMILY_V10, seed=0, rules="house")
    assert (pol.against, pol.cover, pol.search.samples) == (pol10.against, pol10.cover, pol10.search.samples)
    assert (pol.bid_shade, pol10.bid_shade) == (1, 0)
    assert (FAMILY_V11 / "MODEL_CARD.md").is_file()


def test_v11_acts_as_v10_but_for_the_bids_after_both_teams_nils():
    from spades_env.policies.checkpoint import load_policy
    from spades_env.policies.composite import both_nil_bid_rows

    rules = RULES["house"].replace(blind_nil_min_deficit=0)  # L2 declares Blind Nil when open, bids Nil now and then
    v11, v10 = load_policy(FAMILY_V11, seed=0, rules=rules), load_policy(FAMILY_V10, seed=0, rules=rules)
    l2 = resolve_policy("heuristic", 0, rules)
    game = SpadesGame(rules, seed=2)
    shaded = same = 0
    for _ in range(300):
        if game.is_hand_over:
            if game.is_game_over:
                break
            game.next_hand()
        obs, mask = game.observe()
        a, b = v11.act(obs, mask), v10.act(obs, mask)
        if both_nil_bid_rows(obs[None], mask[None])[0] and b > 53:  # a bid of 2 or more: one lower
            assert a == b - 1
            shaded += 1
        else:
            assert a == b
            same += 1
        game.step(l2.act(obs, mask))
    assert shaded > 0 and same > 0


@pytest.mark.parametrize(
    "path",
    [FAMILY_V5, FAMILY_V6, FAMILY_V7, FAMILY_V8, FAMILY_V9, FAMILY_V10, FAMILY_V11],
    ids=["v5", "v6", "v7", "v8", "v9", "v10", "v11"],
)
@pytest.mark.parametrize("name", ["house", "short_bags7"])
def test_v5_to_v11_play_legal_moves_and_beat_random(name, path):
    assert {"bid", "play"} <= _phases_played(path, RULES[name], 7, 400)
    boards = run_duplicate(
        (str(path), str(path)), ("random", "random"), 6, seed=3, rules=RULES[name], fmt="hand", batched=True
    )
    assert summarize(boards, "hand")["margin_per_hand"]["mean"] > 50


def test_two_player_policy_metadata_records_its_lineage():
    _, meta = load_checkpoint(TWO_PLAYER)
    cfg = meta["config"]
    assert meta["rules"]["num_players"] == 2 and meta["policy"]["deterministic"] is True
    assert meta["obs_version"] == OBS_VERSION and meta["update"] == 1000
    assert cfg["rules"] == "two_player" and cfg["init_from"].endswith("bc/final")
    assert (TWO_PLAYER / "MODEL_CARD.md").is_file()
    assert not (TWO_PLAYER / "train_state.safetensors").exists()


def test_two_player_policy_plays_every_phase_and_beats_random_and_greedy():
    rules = load_rules("two_player")
    assert {"bid", "draw", "play"} <= _phases_played(TWO_PLAYER, rules, 5, 600)
    for opp, floor in (("random", 50), ("greedy", 0)):
        boards = run_duplicate((str(TWO_PLAYER),) * 2, (opp, opp), 20, seed=4, rules=rules, fmt="hand", batched=True)
        assert summarize(boards, "hand")["margin_per_hand"]["mean"] > floor


@pytest.mark.parametrize(("path", "rules", "message"), [
    (FAMILY_V5, "two_player", "trained for 4 players, asked to play 2"),
    (FAMILY_V6, "two_player", "trained for 4 players, asked to play 2"),
    (TWO_PLAYER, "tournament", "trained for 2 players, asked to play 4"),
])
def test_a_policy_refuses_the_other_number_of_players(path, rules, message):
    from spades_env.policies.checkpoint import CheckpointError

    with pytest.raises(CheckpointError, match=message):
        resolve_policy(str(path), 0, load_rules(rules))
