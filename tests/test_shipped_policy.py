"""The shipped policy in checkpoints/: loads without training code paths of its own, plays only
legal actions, and beats the random baseline (the full evaluation is in its model card)."""

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

from spades_env.arena import resolve_policy, run_duplicate, summarize  # noqa: E402
from spades_env.core.game import SpadesGame  # noqa: E402
from spades_env.core.rules import load_rules  # noqa: E402
from spades_env.observation import OBS_SIZE, encode_observation  # noqa: E402
from training.checkpoint import load_checkpoint  # noqa: E402

SHIPPED = ROOT / "checkpoints" / "spades_ppo_v1"


def test_shipped_checkpoint_metadata():
    model, meta = load_checkpoint(SHIPPED)
    assert meta["obs_version"] == 1 and meta["arch"]["hidden"] == [512, 512]
    assert meta["policy"]["deterministic"] is True
    assert meta["rules"]["name"] == "tournament"
    assert meta["config"]["init_from"]  # PPO fine-tuning of a warm start
    assert (SHIPPED / "MODEL_CARD.md").is_file()
    assert not (SHIPPED / "train_state.safetensors").exists()  # weights and metadata only


def test_shipped_policy_plays_legal_moves_in_every_phase():
    rules = load_rules("tournament")
    pol = resolve_policy(str(SHIPPED), 0, rules)
    game = SpadesGame(rules, seed=11)
    obs = np.zeros(OBS_SIZE, dtype=np.float32)
    phases = set()
    for _ in range(300):  # several hands: blind decision, bids, exchanges, play
        if game.is_hand_over:
            if game.is_game_over:
                break
            game.next_hand()
        phases.add(game.phase)
        encode_observation(game.state, game.params, game.current_player, obs)
        game.apply(pol.act(obs, game.legal_mask()))  # raises on an illegal action
    assert {"blind", "bid", "play"} <= phases


def test_shipped_policy_beats_random_on_duplicate_hands():
    rules = load_rules("tournament")
    boards = run_duplicate(
        (str(SHIPPED), str(SHIPPED)), ("random", "random"), 6, seed=3, rules=rules, fmt="hand"
    )
    s = summarize(boards, "hand")
    assert s["margin_per_hand"]["mean"] > 50
