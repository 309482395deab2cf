"""Observations of real games, for the network and checkpoint tests."""

from __future__ import annotations

import numpy as np

from spades_env.core.game import SpadesGame
from spades_env.core.observation import OBS_SIZE, STATE_VEC_SIZE, encode_observation
from spades_env.core.rules import load_rules
from spades_env.envs.vector import RandomLegal, VectorSpades


def game_observations(n: int = 200, seed: int = 5) -> tuple[np.ndarray, np.ndarray]:
    """Observations and masks of the seat to act along a random game."""
    game = SpadesGame(load_rules("tournament"), seed=seed)
    rng = np.random.default_rng(seed)
    obs, masks = [], []
    buf = np.zeros(OBS_SIZE, dtype=np.float32)
    while len(obs) < n and not game.is_over:
        if game.is_hand_over:
            game.next_hand()
            continue
        encode_observation(game.state, game.params, game.current_player, buf)
        obs.append(buf.copy())
        masks.append(game.legal_mask())
        game.apply(int(rng.choice(game.legal_actions())))
    return np.array(obs), np.array(masks)


def real_observations(n_steps: int = 12, B: int = 32) -> tuple[np.ndarray, np.ndarray]:
    """Observations and critic inputs (obs + every hand) of random legal games."""
    env = VectorSpades(B, "tournament", episode="game", seed=3)
    env.reset(seed=3)
    sample = RandomLegal(B, 3)
    obs, full = [], []
    sv = np.zeros((B, STATE_VEC_SIZE), dtype=np.float32)
    for _ in range(n_steps):
        obs.append(env._obs.copy())
        env.state_vectors(sv)
        full.append(sv.copy())
        env.step(sample(env._mask))
    return np.concatenate(obs), np.concatenate(full)
