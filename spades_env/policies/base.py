"""The Policy protocol: anything that picks an action from one seat's observation.

Bots and trained networks implement it, and the arena, the Gymnasium adapter and the CLI take
any of them. A policy sees only what its seat may know: the observation vector and the
legal-action mask (see :mod:`spades_env.core.observation`).
"""

from __future__ import annotations

from collections.abc import Hashable, Sequence
from typing import Any, Protocol, runtime_checkable

import numpy as np

from spades_env.core.actions import NUM_ACTIONS, action_to_str
from spades_env.core.files import brief
from spades_env.core.validate import InputError, SpadesError, is_int


class PolicyError(SpadesError):
    """A policy that chose something other than a legal action (an action not in its mask, a
    value that is not an action id). Every path that asks a policy for an action (the driver,
    :func:`act_rows`, the arena) checks the answer against the mask and raises this, naming the
    policy, instead of playing the move."""


def policy_name(policy: Any) -> str:
    """A policy's name for messages: its ``name`` attribute, else its class name."""
    name = getattr(policy, "name", None)
    return brief(name, 60) if isinstance(name, str) else type(policy).__name__


def checked_action(policy: Any, action: Any, action_mask: np.ndarray, where: str = "") -> int:
    """``action`` as an int if it is an action id that ``action_mask`` allows; otherwise a
    :class:`PolicyError` naming the policy (and ``where``, e.g. "game 3")."""
    at = f" ({where})" if where else ""
    if isinstance(action, np.ndarray) and action.shape in ((), (1,)):
        action = action.reshape(()).item() if action.dtype.kind in "iu" else action
    if not is_int(action) or not 0 <= int(action) < NUM_ACTIONS:
        raise PolicyError(
            f"policy {policy_name(policy)}{at} returned {brief(action)}, which is not an action id 0..69"
        )
    a = int(action)
    if not action_mask[a]:
        legal = np.flatnonzero(action_mask).tolist()
        raise PolicyError(
            f"policy {policy_name(policy)}{at} chose action {a} ({action_to_str(a)}), which is not "
            f"legal now (legal: {brief(legal, 120)}); the move was not played"
        )
    return a


class PolicyNameError(SpadesError):
    """A policy name the registry cannot parse (a ``ValueError``)."""


@runtime_checkable
class Policy(Protocol):
    """Chooses an action id (0..69) for one seat."""

    def act(self, observation: np.ndarray, action_mask: np.ndarray) -> int:
        """Pick a legal action given the seat's observation vector and ``int8[70]`` mask."""
        ...


@runtime_checkable
class BatchPolicy(Policy, Protocol):
    """A Policy that can also decide many games in one call (a network's one forward pass, a
    compiled bot's one kernel call). The arena, the driver and training ask for this form
    through :func:`act_rows`, never by a policy's class.

    Policies whose :meth:`batch_key` values are equal (and not ``None``) decide together:
    ``policies[0].act_batch(obs, masks, peers=policies)`` returns row ``i``'s action exactly as
    ``policies[i].act(obs[i], masks[i])`` called for ``i = 0, 1, ...`` would (each peer's own
    generator drawing for its own rows, in row order)."""

    def batch_key(self) -> Hashable | None:
        """What this policy can decide together with (``None``: only alone, with ``act``)."""
        ...

    def act_batch(
        self, observations: np.ndarray, action_masks: np.ndarray, peers: Sequence[Any] | None = None
    ) -> np.ndarray:
        """``int64 [B]``: row ``i`` decided by ``peers[i]`` (default: this policy for every row)."""
        ...


def acts_as(policy: Any, cls: type) -> bool:
    """Whether ``policy`` acts with ``cls.act`` itself (a subclass that overrides ``act`` does
    not, so it must not take ``cls``'s batched form)."""
    return getattr(type(policy), "act", None) is cls.act


def batch_key_of(policy: Any) -> Hashable | None:
    """``policy.batch_key()`` for a :class:`BatchPolicy`, ``None`` for any other Policy."""
    key = getattr(policy, "batch_key", None)
    return key() if key is not None else None


def act_rows(policies: Sequence[Policy], observations: np.ndarray, action_masks: np.ndarray) -> np.ndarray:
    """``int64 [B]``: row ``i``'s action by ``policies[i]`` from ``observations[i]`` and
    ``action_masks[i]``, identical to calling ``policies[i].act`` for every row in order; the
    rows of policies with one :meth:`BatchPolicy.batch_key` are decided in one ``act_batch``
    call, any other policy's rows one ``act`` call each (on copies of its rows)."""
    b = len(policies)
    out = np.empty(b, dtype=np.int64)
    groups: dict[Hashable | None, list[int]] = {}
    for i, p in enumerate(policies):
        groups.setdefault(batch_key_of(p), []).append(i)
    for key, rows in groups.items():
        if key is None:
            for i in rows:
                act = policies[i].act(observations[i].copy(), action_masks[i].copy())
                out[i] = checked_action(policies[i], act, action_masks[i], where=f"row {i}")
            continue
        idx = np.asarray(rows, dtype=np.int64)
        peers = [policies[i] for i in rows]
        got = np.asarray(peers[0].act_batch(observations[idx], action_masks[idx], peers=peers))  # type: ignore[attr-defined]
        if got.shape != (idx.size,) or got.dtype.kind not in "iu":
            raise PolicyError(
                f"policy {policy_name(peers[0])}: act_batch returned {got.dtype} {got.shape}, not "
                f"{idx.size} integer action ids"
            )
        out[idx] = got
    check_rows(policies, out, action_masks)
    return out


def check_rows(policies: Sequence[Any], actions: np.ndarray, action_masks: np.ndarray) -> None:
    """Every ``actions[i]`` is an action id ``action_masks[i]`` allows; else a
    :class:`PolicyError` naming ``policies[i]`` of the first bad row."""
    a = np.asarray(actions)
    ok = (a >= 0) & (a < NUM_ACTIONS)
    if ok.all():
        ok = np.asarray(action_masks)[np.arange(a.size), a] != 0
    if not ok.all():
        i = int(np.flatnonzero(~ok)[0])
        checked_action(policies[i], int(a[i]), np.asarray(action_masks)[i], where=f"row {i}")


def learner_seats_of(learner_seats: tuple[int, ...] | list[int] | None, num_seats: int) -> tuple[int, ...]:
    """The seats a learner plays: one team's seats (default N/S, or seat 0 in the two-player
    game), validated with a clear error."""
    given = learner_seats if learner_seats is not None else ((0, 2) if num_seats == 4 else (0,))
    if isinstance(given, (str, bytes)) or not hasattr(given, "__iter__"):
        raise InputError(f"learner_seats must be a list of seats of 0..{num_seats - 1}, got {learner_seats!r}")
    seats = tuple(int(s) if is_int(s) else -1 for s in given)  # 1.7 and True are not seats
    if not seats or len(set(seats)) != len(seats) or any(not 0 <= s < num_seats for s in seats):
        raise InputError(f"learner_seats must be distinct seats of 0..{num_seats - 1}, got {learner_seats!r}")
    if len({s % 2 for s in seats}) != 1:
        raise InputError(f"learner_seats must be one team (N/S or E/W), got {seats}")
    return seats


class RandomPolicy:
    """L0: a uniformly random legal action, from its own seeded generator."""

    name = "random"

    def __init__(self, seed: int | np.random.Generator | None = None) -> None:
        self.rng = seed if isinstance(seed, np.random.Generator) else np.random.default_rng(seed)

    def act(self, observation: np.ndarray, action_mask: np.ndarray) -> int:
        legal = np.flatnonzero(action_mask)
        if legal.size == 0:
            raise ValueError("RandomPolicy.act: the action mask has no legal action")
        return int(legal[self.rng.integers(legal.size)])

    def batch_key(self) -> Hashable | None:
        """Random policies decide together (each row with its own policy's generator)."""
        return ("random",) if acts_as(self, RandomPolicy) else None

    def act_batch(
        self, observations: np.ndarray, action_masks: np.ndarray, peers: Sequence[Any] | None = None
    ) -> np.ndarray:
        """``int64 [B]``: row ``i``'s action as ``peers[i].act`` would draw it, in row order."""
        legal = np.asarray(action_masks) != 0
        policies = peers if peers is not None else [self] * len(legal)
        counts = legal.sum(axis=1)
        if (counts == 0).any():
            raise ValueError("RandomPolicy.act: the action mask has no legal action")
        k = np.array([p.rng.integers(int(c)) for p, c in zip(policies, counts, strict=True)], dtype=np.int64)
        rank = np.cumsum(legal, axis=1) - 1  # the k-th legal action of each row: flatnonzero(mask)[k]
        return np.argmax(legal & (rank == k[:, None]), axis=1).astype(np.int64)

    def with_seed(self, seed: int | None) -> RandomPolicy:
        """A fresh random policy with its own generator seeded ``seed``."""
        return RandomPolicy(seed)
