"""VectorSpades(obs_dtype="uint8"): the compact observation widens to exactly the float32 one."""

from __future__ import annotations

import numpy as np
import pytest

from spades_env.core.observation import OBS_SIZE, SCALAR_INDEX, SCALAR_SIZE, widen_observations
from spades_env.core.validate import InputError
from spades_env.envs.vector import RandomLegal, VectorSpades


@pytest.mark.parametrize(
    "rules, parallel",
    [("tournament", False), (["tournament", "house", "openspiel"], True), ("two_player", False)],
)
def test_compact_observations_widen_bit_identical(rules, parallel):
    B = 48
    full = VectorSpades(B, rules, episode="hand", seed=4, parallel=parallel)
    compact = VectorSpades(B, rules, episode="hand", seed=4, parallel=parallel, obs_dtype="uint8")
    pick = RandomLegal(B, seed=2)
    a, b = full.reset(4), compact.reset(4)
    widened = np.empty((B, OBS_SIZE), dtype=np.float32)
    ends = 0
    for step in range(600):
        assert b.obs.dtype == np.uint8 and compact.obs_scalars.shape == (B, SCALAR_SIZE)
        widen_observations(b.obs, compact.obs_scalars, out=widened)
        np.testing.assert_array_equal(widened.view(np.uint32), a.obs.view(np.uint32))  # bit for bit
        assert (b.obs[:, SCALAR_INDEX] == 0).all() and b.obs.max() <= 1
        np.testing.assert_array_equal(a.mask, b.mask)
        np.testing.assert_array_equal(a.seat, b.seat)
        act = pick(a.mask)
        a, b = full.step(act), compact.step(act)
        np.testing.assert_array_equal(a.reward, b.reward)
        ends += int(a.terminated.sum() + a.truncated.sum())
        if step == 300:
            full.play_random(7)
            compact.play_random(7)
            a, b = full._result(), compact._result()
    assert ends > 0
    np.testing.assert_array_equal(full.states, compact.states)
    # fractions (tricks won / 13) appeared in the scalars
    assert ((compact.obs_scalars[:, :4] > 0) & (compact.obs_scalars[:, :4] < 1)).any()


def test_obs_dtype_checked():
    with pytest.raises(InputError, match="obs_dtype"):
        VectorSpades(2, obs_dtype="float16")
    with pytest.raises(ValueError, match="widen_observations"):
        widen_observations(np.zeros((2, OBS_SIZE), np.uint8), np.zeros((2, 3), np.float32))
