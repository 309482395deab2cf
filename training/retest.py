"""How reproducible a search's labels are: the same observations searched again, another seed.

A search that picks an action other than its network's (an *override*) on the values of a few
sampled deals may not pick it again on other deals; a network fitted to such labels learns
noise. :func:`retest_labels` searches a sample of a round's override rows, and of its other
searched rows, once more with an independent seed and reports the share it reproduces: how
much signal the labels carry before any fit (``round.json``'s ``retest`` in
``training.expert_iteration``).

Measured (``netsearch:samples=16,bids=4`` over ``spades4_net_v1``, the card plays of Nil hands,
300 rows each): a second search at 16 deals picks the same override on 21% of the override
rows, and at 128 deals it picks the same card on 30% and overrides the network at all on 49%;
on the rows where the first search kept the network's card, the second keeps it on 93%.
"""

from __future__ import annotations

import time
from typing import Any, Protocol

import numpy as np


class ActingPolicy(Protocol):
    """What :func:`retest_labels` needs of the search: an action from an observation and mask."""

    def act(self, observation: np.ndarray, action_mask: np.ndarray) -> int: ...


def network_choices(actor: Any, obs: np.ndarray, mask: np.ndarray, batch: int = 4096) -> np.ndarray:
    """The network's own action on each row, as its deterministic policy plays it (``actor``: a
    NumPy actor; :meth:`CheckpointPolicy.act_batch`, in batches of ``batch`` rows)."""
    from spades_env.policies.checkpoint import CheckpointPolicy

    policy = CheckpointPolicy(actor, deterministic=True)
    out = np.empty(len(obs), dtype=np.int64)
    for s in range(0, len(obs), batch):
        x = np.asarray(obs[s : s + batch], dtype=np.float32)
        out[s : s + batch] = policy.act_batch(x, np.asarray(mask[s : s + batch]).astype(np.int8))
    return out


def retest_labels(
    data: dict[str, np.ndarray], net_choice: np.ndarray, policy: ActingPolicy, rows: int, seed: int = 0
) -> dict[str, Any]:
    """Search up to ``rows`` override rows and ``rows`` kept rows of ``data`` again with
    ``policy`` (the same search, another seed).

    ``data`` holds a round's ``obs``, ``mask``, ``action`` (the search's labels) and ``values``
    (NaN where the row was not searched); ``net_choice`` is the network's action on each row.
    Only searched rows with two or more legal actions count. Returns the counts, the share of
    overrides, ``reproduced`` (retested overrides where the new search picks the labelled
    action again), ``overrides_again`` (where it overrides the network with any action) and
    ``kept`` (retested kept rows where it keeps the network's action too); a share is None
    where there was no row to retest."""
    if isinstance(rows, bool) or not isinstance(rows, (int, np.integer)) or rows < 1:
        raise ValueError(f"retest_labels: rows must be an int >= 1, got {rows!r}")
    action = np.asarray(data["action"]).astype(np.int64)
    n = len(action)
    if len(net_choice) != n:
        raise ValueError(f"retest_labels: net_choice has {len(net_choice)} rows, the data {n}")
    mask = np.asarray(data["mask"]).astype(bool)
    searched = np.isfinite(np.asarray(data["values"], dtype=np.float32)).any(axis=1) & (mask.sum(axis=1) >= 2)
    over = np.flatnonzero(searched & (action != net_choice))
    kept = np.flatnonzero(searched & (action == net_choice))
    rng = np.random.default_rng(seed)
    t0 = time.monotonic()

    def again(idx: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        pick = np.sort(rng.choice(idx, size=min(rows, len(idx)), replace=False)) if len(idx) else idx
        acts = np.array([policy.act(np.asarray(data["obs"][i], dtype=np.float32), mask[i].astype(np.int8))
                         for i in pick], dtype=np.int64)
        return pick, acts

    o_pick, o_act = again(over)
    k_pick, k_act = again(kept)

    def share(hits: np.ndarray) -> float | None:
        return round(float(hits.mean()), 4) if len(hits) else None

    return {
        "searched": int(searched.sum()),
        "overrides": int(len(over)),
        "override_share": round(len(over) / max(int(searched.sum()), 1), 4),
        "retested_overrides": int(len(o_pick)),
        "retested_kept": int(len(k_pick)),
        "reproduced": share(o_act == action[o_pick]),
        "overrides_again": share(o_act != net_choice[o_pick]),
        "kept": share(k_act == net_choice[k_pick]),
        "seconds": round(time.monotonic() - t0, 1),
    }


__all__ = ["ActingPolicy", "network_choices", "retest_labels"]
