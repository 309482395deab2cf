"""L2, the expert heuristic, and ``blind``, the always-Blind-Nil exploit test, as Policies.

Both run the compiled decision logic of :mod:`spades_env.policies.bots.l2` on the seat's observation
alone (there is no second, Python copy of it): :class:`HeuristicPolicy` declares Blind Nil by
value (:mod:`spades_env.policies.bots.blind_value`), :class:`BlindNilPolicy` whenever the rules offer it
and its partner has not bid a Nil, and plays the rest of the hand exactly as L2 does.
:func:`heuristic_actions` decides for a batch of observations at once (``VectorSpades``-driven
training, behaviour cloning and the arena), with numba's threads.
"""

from __future__ import annotations

from collections.abc import Hashable, Sequence
from typing import Any

import numpy as np

from spades_env.core.actions import NUM_ACTIONS
from spades_env.core.observation import OBS_SIZE
from spades_env.core.rules import RulesConfig, load_rules
from spades_env.policies.base import acts_as
from spades_env.policies.bots.blind_value import MODE_ALWAYS_BLIND, MODE_EV, MODE_NEVER_BLIND, blind_model
from spades_env.policies.bots.l2 import (
    estimate_tricks,
    l2_act_batch,
    l2_act_batch_serial,
    l2_act_one,
    nil_danger,
)

MODES = {"ev": MODE_EV, "always": MODE_ALWAYS_BLIND, "never": MODE_NEVER_BLIND}


def _check(observation: np.ndarray, action_mask: np.ndarray, who: str) -> tuple[np.ndarray, np.ndarray]:
    obs = np.ascontiguousarray(observation, dtype=np.float32)
    mask = np.ascontiguousarray(action_mask, dtype=np.int8)
    if obs.shape[-1:] != (OBS_SIZE,) or mask.shape[-1:] != (NUM_ACTIONS,) or obs.shape[:-1] != mask.shape[:-1]:
        raise ValueError(
            f"{who}: expected observations [..., {OBS_SIZE}] and masks [..., {NUM_ACTIONS}] of one batch shape, "
            f"got {obs.shape} and {mask.shape}"
        )
    return obs, mask


def heuristic_actions(
    observations: np.ndarray,
    action_masks: np.ndarray,
    blind: str | np.ndarray = "ev",
    parallel: bool = False,
) -> np.ndarray:
    """L2's actions for a batch: ``observations [B, OBS_SIZE]``, ``action_masks [B, 70]`` ->
    ``int64 [B]``. ``blind``: ``"ev"`` (L2), ``"always"`` (the ``blind`` bot), ``"never"``, or
    an ``int`` array of modes per row. ``parallel``: over numba's threads (the default runs in
    the calling thread, which is best beside a learner). Rows with no legal action raise
    ``ValueError``."""
    obs, mask = _check(observations, action_masks, "heuristic_actions")
    if obs.ndim != 2:
        raise ValueError(f"heuristic_actions: expected a batch [B, {OBS_SIZE}], got {obs.shape}")
    b = obs.shape[0]
    if isinstance(blind, str):
        if blind not in MODES:
            raise ValueError(f"heuristic_actions: blind must be one of {sorted(MODES)}, got {blind!r}")
        modes = np.full(b, MODES[blind], dtype=np.int64)
    else:
        modes = np.ascontiguousarray(blind, dtype=np.int64)
        if modes.shape != (b,):
            raise ValueError(f"heuristic_actions: blind modes must have shape ({b},), got {modes.shape}")
    out = np.empty(b, dtype=np.int64)
    (l2_act_batch if parallel else l2_act_batch_serial)(obs, mask, modes, blind_model(), out)
    bad = np.flatnonzero(out < 0)
    if bad.size:
        i = int(bad[0])
        what = "has no legal action" if out[i] == -1 else "made L2 choose an illegal action (a bot bug)"
        raise ValueError(f"heuristic_actions: row {i} {what}; legal: {list(np.flatnonzero(mask[i]))}")
    return out


class HeuristicPolicy:
    """L2: the compiled expert heuristic (a Policy; acts on its own observation only)."""

    name = "heuristic"
    mode = MODE_EV

    def __init__(self, rules: RulesConfig | str | dict | None = None, seed: int | None = None) -> None:
        self.rules = load_rules(rules)  # the observation carries the rules; kept for callers
        self.seed = seed  # L2 is deterministic

    def act(self, observation: np.ndarray, action_mask: np.ndarray) -> int:
        """L2's action for one seat's observation and ``int8[70]`` mask."""
        obs, mask = _check(observation, action_mask, type(self).__name__)
        if obs.ndim != 1:
            raise ValueError(f"{type(self).__name__}.act: expected one observation, got shape {obs.shape}")
        a = int(l2_act_one(obs, mask, self.mode, blind_model()))
        if a == -1:
            raise ValueError(f"{type(self).__name__}.act: the action mask has no legal action")
        if a < 0:
            raise RuntimeError(f"{type(self).__name__} chose an illegal action; legal: {list(np.flatnonzero(mask))}")
        return a

    def batch_key(self) -> Hashable | None:
        """L2 and ``blind`` decide together in one compiled call (each row with its policy's
        Blind Nil mode)."""
        return ("heuristic",) if acts_as(self, HeuristicPolicy) else None

    def act_batch(
        self, observations: np.ndarray, action_masks: np.ndarray, peers: Sequence[Any] | None = None
    ) -> np.ndarray:
        """``int64 [B]``: row ``i``'s action by ``peers[i]`` (default this policy); L2 is
        deterministic, and a row with one legal action takes it without a call."""
        legal = np.asarray(action_masks) != 0
        policies = peers if peers is not None else [self] * len(legal)
        out = np.argmax(legal, axis=1).astype(np.int64)
        rows = np.flatnonzero(legal.sum(axis=1) != 1)
        if rows.size:
            modes = np.array([policies[i].mode for i in rows.tolist()], dtype=np.int64)
            out[rows] = heuristic_actions(observations[rows], action_masks[rows], modes)
        return out

    def with_seed(self, seed: int | None) -> HeuristicPolicy:
        """A fresh policy of this kind for the same rules (L2 draws no random numbers)."""
        return type(self)(self.rules, seed=seed)


class BlindNilPolicy(HeuristicPolicy):
    """``blind``: L2's play with a Blind Nil whenever the rules offer it and the partner has
    not bid a Nil: the standard exploit test (no baseline from L2 up may lose to it)."""

    name = "blind"
    mode = MODE_ALWAYS_BLIND


__all__ = ["BlindNilPolicy", "HeuristicPolicy", "estimate_tricks", "heuristic_actions", "nil_danger"]
