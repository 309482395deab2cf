"""Bad inputs shared by the input-validation tests of every layer (see docs/validation.md)."""

from __future__ import annotations

import numpy as np

BILLION_LAUGHS = "a: &a [x, x, x, x, x, x, x, x, x]\n" + "".join(
    f"{chr(98 + i)}: &{chr(98 + i)} [" + ", ".join([f"*{chr(97 + i)}"] * 9) + "]\n" for i in range(8)
)
"""A YAML file of under 400 bytes whose aliases expand to 9**9 values."""

HUGE_INT = "9" * 5000
"""An integer of 5,000 digits (Python refuses to convert one past 4,300 with a bare ValueError)."""

NOT_ACTIONS = ["67", None, 1.0, True, 70, -1, 10**20, np.float64(3.0), [3], {"a": 1}]
"""Values that are not action ids: every front-end refuses them whatever its illegal setting."""

BAD_NUMBERS = [float("nan"), float("inf"), -float("inf"), "0.5", "no", None, True, [0.5], 10**400]
"""Values refused for a real-number knob (reward_scale, illegal_reward)."""


class AlwaysZero:
    """A policy that plays action 0 whatever its mask (a broken network's argmax)."""

    name = "always-zero"

    def act(self, observation, action_mask) -> int:
        return 0


class BatchedZero(AlwaysZero):
    """The same with a batched form: the arena's and the driver's act_rows path."""

    name = "batched-zero"

    def batch_key(self):
        return ("batched-zero",)

    def act_batch(self, observations, action_masks, peers=None):
        return np.zeros(len(observations), dtype=np.int64)
