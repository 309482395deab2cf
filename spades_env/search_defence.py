"""A checkpoint policy that searches its Blind Nil defence: a network everywhere, a search bot
at its card plays after an opponent declared Blind Nil.

Setting an opponent's Blind Nil takes a line of play across the hand (force the Blind Nil
bidder to win a trick its partner cannot cover); the trained networks defend about as well as
L2 does, while L3 (``search:samples=200``, which samples deals consistent with what the seat
knows and plays each candidate card out) sets many more of them. A checkpoint whose
``meta.json`` names a bot in ``policy.search_defence`` is loaded as a
:class:`SearchDefencePolicy`: the network bids and plays every other card, the bot plays those
cards. Both act on the seat's own observation only. ``benchmarks/search_defence.py`` measures
what it is worth against the network alone on the same deals.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from spades_env.core import layout as L
from spades_env.observation import O_PHASE, OBS_SIZE, public_bids


def searched_rows(observations: np.ndarray, action_masks: np.ndarray) -> np.ndarray:
    """``bool [N]``: the rows that are card plays (trick play, a card in the mask) in a hand
    where an opponent (relative seat 1 or 3) declared Blind Nil: the decisions a
    :class:`SearchDefencePolicy` hands to its bot."""
    obs = np.asarray(observations).reshape(-1, OBS_SIZE)
    mask = np.asarray(action_masks).reshape(len(obs), -1)
    bids = public_bids(obs)
    opp_blind = (bids[:, 1] == L.BID_BLIND_NIL) | (bids[:, 3] == L.BID_BLIND_NIL)
    return opp_blind & (obs[:, O_PHASE + L.PH_PLAY] > 0) & mask[:, :52].any(axis=1)


class SearchDefencePolicy:
    """``net`` (a :class:`~spades_env.checkpoint.CheckpointPolicy`) everywhere, ``search`` (a
    bot) at the card plays :func:`searched_rows` selects (Policy protocol)."""

    def __init__(self, net: Any, search: Any, name: str = "") -> None:
        self.net, self.search = net, search
        self.name = name or f"{getattr(net, 'name', 'network')}+search defence"
        self.meta = getattr(net, "meta", {})

    def act(self, observation: np.ndarray, action_mask: np.ndarray) -> int:
        """The bot's card after an opponent's Blind Nil, else the network's action."""
        if searched_rows(observation, action_mask)[0]:
            return int(self.search.act(observation, action_mask))
        return int(self.net.act(observation, action_mask))

    def act_batch(self, observations: np.ndarray, action_masks: np.ndarray) -> np.ndarray:
        """``int64 [B]``: the actions ``act`` would return for the rows in order."""
        return act_search_defence([self] * len(observations), observations, action_masks)


def act_search_defence(policies: list[SearchDefencePolicy], obs: np.ndarray, mask: np.ndarray) -> np.ndarray:
    """Row ``i``'s action by ``policies[i]``, as its ``act`` would give: the networks decide
    the other rows together (one forward pass, :func:`~spades_env.checkpoint.act_policies`),
    each bot its own rows in order."""
    from spades_env.checkpoint import act_policies

    out = np.empty(len(policies), dtype=np.int64)
    searched = searched_rows(obs, mask)
    rows = np.flatnonzero(~searched)
    if rows.size:
        out[rows] = act_policies([policies[i].net for i in rows.tolist()], obs[rows], mask[rows])
    for i in np.flatnonzero(searched).tolist():
        out[i] = int(policies[i].search.act(obs[i].copy(), mask[i].copy()))
    return out


def search_bot_problem(name: Any) -> str | None:
    """Why ``name`` cannot be a search-defence (or teacher) bot: not a bots registry name such
    as ``search:samples=200``; None if it can."""
    from spades_env.bots import PolicyNameError, parse_policy_name

    if not isinstance(name, str):
        return f"expected a bot name such as 'search:samples=200', got {name!r}"
    try:
        parse_policy_name(name)
    except PolicyNameError as exc:
        return str(exc)
    return None


def search_seed(seed: int | None) -> int | None:
    """The bot's seed from the policy's (its own stream, not the network's)."""
    return None if seed is None else int(np.random.SeedSequence([int(seed), 0x5EA2C4]).generate_state(1)[0])


__all__ = ["SearchDefencePolicy", "act_search_defence", "search_bot_problem", "search_seed", "searched_rows"]
