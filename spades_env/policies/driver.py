"""The one driver of seated policies: every loop that lets Policies play seats goes through here.

* :func:`drive` steps one :class:`~spades_env.core.game.SpadesGame` with
  :meth:`~spades_env.core.game.SpadesGame.step` (so the episode knobs, dealing on and the hand
  log are the facade's) while the seat to act has a Policy, and stops when the episode ends or
  a seat without one (a learner) is to act. Used by ``Spades-v0``, the arena, ``spades demo``,
  ``spades play`` (the human is a seated policy too) and the bots benchmark.
* :func:`seated_actions` / :func:`step_seated` do the same for a batch of games of
  :class:`~spades_env.envs.vector.VectorSpades`: each game's seat to act picks from that game's own
  observation and mask. Used by the vector adapters and behaviour cloning's teacher data.

A policy sees only its seat's observation vector and legal mask (fresh arrays it may keep).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from spades_env.core.episode import RUNNING
from spades_env.core.game import SpadesGame, StepResult
from spades_env.policies.base import Policy, act_rows, checked_action

Seated = Mapping[int, Policy] | Sequence[Policy]
"""Policies by seat: a ``{seat: Policy}`` dict (seats not in it are not driven) or one per seat."""


@dataclass
class Drive:
    """What one :func:`drive` call did."""

    rewards: list[float]  # per seat, summed over the steps (in step order)
    status: int  # RUNNING (a seat without a policy is to act), TERMINATED or TRUNCATED
    steps: int = 0
    last: StepResult | None = None
    hands: list[StepResult] = field(default_factory=list)  # the steps that finished a hand

    @property
    def done(self) -> bool:
        return self.status != RUNNING


def _seat_map(policies: Seated) -> Mapping[int, Policy]:
    return policies if isinstance(policies, Mapping) else dict(enumerate(policies))


def bind_true_state(game: SpadesGame, policies: Seated) -> None:
    """Give evaluation-only cheating bots (a ``bind`` method, labelled "cheat") the true state
    of ``game``. The arena and the bots benchmark do this; training front-ends never do."""
    for p in _seat_map(policies).values():
        bind = getattr(p, "bind", None)
        if callable(bind):
            bind(lambda: game.state)


def drive(
    game: SpadesGame,
    policies: Seated,
    *,
    on_step: Callable[[StepResult], None] | None = None,
    max_steps: int | None = None,
) -> Drive:
    """Step ``game`` with ``policies[seat]`` for the seat to act until the episode ends or a
    seat without a policy is to act (or ``max_steps`` steps). ``on_step(result)`` is called
    after every step (for a step that finished a hand, ``result.hand`` and
    ``result.hand_end_state`` hold that hand, already followed by the next deal in
    ``game``). An illegal action raises or ends the episode by the game's ``illegal`` knob."""
    seated = _seat_map(policies)
    n = game.num_seats
    totals = [0.0] * n
    out = Drive(totals, game.episode_status)
    if game.episode_over:
        return out
    steps = 0
    while max_steps is None or steps < max_steps:
        seat = game.current_player
        policy = seated.get(seat)
        if policy is None:
            break
        obs, mask = game.observe(seat)
        r = game.step(checked_action(policy, policy.act(obs, mask), mask, where=f"seat {seat}"))
        steps += 1
        out.last = r
        if r.hand is not None or r.illegal:
            rw = r.rewards
            for s in range(n):
                totals[s] += rw[s]
            if r.hand is not None:
                out.hands.append(r)
        if on_step is not None:
            on_step(r)
        if r.terminated or r.truncated:
            break
    out.steps, out.status = steps, game.episode_status
    return out


PolicyOf = Mapping[int, Policy] | Callable[[int, int], Policy]
"""Policies of a batch: ``{seat: Policy}`` (the same for every game) or ``f(game, seat)``."""


def seated_actions(
    obs: np.ndarray,
    mask: np.ndarray,
    seat: np.ndarray,
    policy_of: PolicyOf,
    out: np.ndarray,
    active: np.ndarray | None = None,
) -> np.ndarray:
    """``out[i]`` = the action of game ``i``'s seat to act (``seat[i]``) from its own
    ``obs[i]`` and ``mask[i]``, for every game (or where ``active[i]``); returns ``out``.
    Policies with a batched form decide their games in one call
    (:func:`~spades_env.policies.base.act_rows`), the same actions as one ``act`` per game."""
    games = np.arange(len(seat)) if active is None else np.flatnonzero(active)
    if callable(policy_of) and not isinstance(policy_of, Mapping):
        policies = [policy_of(int(i), int(seat[i])) for i in games]
    else:
        policies = [policy_of[int(seat[i])] for i in games]
    if len(games):
        out[games] = act_rows(policies, obs[games], mask[games])
    return out


def step_seated(engine: Any, policy_of: PolicyOf, active: np.ndarray, out: np.ndarray) -> Any:
    """One lockstep move of a :class:`~spades_env.envs.vector.VectorSpades` batch: the seated
    policies act in the ``active`` games (:func:`seated_actions`, into ``out``) and the engine
    steps those games only. Returns the engine's step result."""
    res = engine._result()
    seated_actions(res.obs, res.mask, res.seat, policy_of, out, active)
    return engine.step(out, active=active)


__all__ = ["Drive", "Seated", "bind_true_state", "drive", "seated_actions", "step_seated"]
