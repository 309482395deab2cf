"""A composite agent: a network everywhere, a search bot at the card plays of hands where an
opponent (or, where asked, the partner) bid Nil or Blind Nil, and the network's bids adjusted
after both teams' Nils.

Setting an opponent's Nil takes a line of play across the hand (force the Nil bidder to win a
trick its partner cannot cover), and covering the partner's takes another; a network trained
by self-play defends about as well as L2 does, while L3 (``search:...``, deals sampled
consistently with what the seat knows, each candidate card played out) sets and covers many
more. :class:`SearchDefencePolicy` hands those card plays (:func:`searched_rows`) to the bot
and lowers the network's bid by ``bid_shade`` tricks (:func:`shade_bids`) when the seat bids
after its partner's and an opponent's Nil (the network learned its bids with its own card
play; in those hands the bot plays the cards). Both parts act on the seat's own observation
only. An agent declares all of this in its ``agent.json`` (:mod:`spades_env.policies.agents`);
the shipped ``spades4_v1`` is one.
"""

from __future__ import annotations

from collections.abc import Hashable, Sequence
from typing import Any

import numpy as np

from spades_env.core import layout as L
from spades_env.core.actions import MAX_BID, bid_action
from spades_env.core.observation import O_PHASE, OBS_SIZE, public_bids
from spades_env.policies.base import act_rows, acts_as

DEFENDED_BIDS = {"blind_nil": L.BID_BLIND_NIL, "nil": 0}
"""The names ``policy.search_defence_against`` may list, and the bid (as ``public_bids``
reads it) each stands for."""



MAX_BID_SHADE = MAX_BID - 1
"""The most tricks ``both_nil_bid_shade`` may take off a bid (a bid stays at least 1)."""

_NIL_BIDS = np.array(sorted(DEFENDED_BIDS.values()), dtype=np.int64)  # Nil and Blind Nil
_BID_ONE, _BID_TOP = bid_action(1), bid_action(MAX_BID)


def against_problem(value: Any, allow_empty: bool = False) -> str | None:
    """Why ``value`` cannot be a ``search_defence_against`` list (a non-empty list of distinct
    names of :data:`DEFENDED_BIDS`) or, with ``allow_empty``, a ``search_defence_cover`` list
    (the same, possibly empty: nothing covered); None if it can."""
    known = ", ".join(repr(k) for k in DEFENDED_BIDS)
    if not isinstance(value, (list, tuple)) or not (value or allow_empty):
        what = "a list" if allow_empty else "a non-empty list"
        return f"expected {what} of bids out of {known}, got {value!r}"
    for name in value:
        if not isinstance(name, str) or name not in DEFENDED_BIDS:
            return f"unknown bid {name!r}; known: {known}"
    if len(set(value)) != len(value):
        return f"a bid is listed twice in {list(value)!r}"
    return None


def _checked_against(against: Any) -> tuple[str, ...]:
    problem = against_problem(against)
    if problem:
        raise ValueError(f"search defence against: {problem}")
    return tuple(against)


def _checked_cover(cover: Any) -> tuple[str, ...]:
    """A checked ``cover`` list; the empty list (the default) covers nothing."""
    problem = against_problem(cover, allow_empty=True)
    if problem:
        raise ValueError(f"search defence cover: {problem}")
    return tuple(cover)


def searched_rows(
    observations: np.ndarray,
    action_masks: np.ndarray,
    against: tuple[str, ...] | list[str],
    cover: tuple[str, ...] | list[str] = (),
) -> np.ndarray:
    """``bool [N]``: the rows that are card plays (trick play, a card in the mask) in a hand
    where an opponent (relative seat 1 or 3) bid one of ``against`` (names of
    :data:`DEFENDED_BIDS`; by default Blind Nil only) or the partner (relative seat 2) one of
    ``cover`` (by default none): the decisions a :class:`SearchDefencePolicy` hands to its bot."""
    wanted = _bids_of(_checked_against(against))
    return _rows_after(observations, action_masks, wanted, _bids_of(_checked_cover(cover)))


def _bids_of(against: tuple[str, ...]) -> np.ndarray:
    """The bids (as ``public_bids`` reads them) of a checked ``against``."""
    return np.array([DEFENDED_BIDS[name] for name in against], dtype=np.int64)


def _rows_after(
    observations: np.ndarray, action_masks: np.ndarray, wanted: np.ndarray, covered: np.ndarray
) -> np.ndarray:
    """:func:`searched_rows` for the opponents' bids ``wanted`` and the partner's bids
    ``covered`` (already checked)."""
    obs = np.asarray(observations).reshape(-1, OBS_SIZE)
    mask = np.asarray(action_masks).reshape(len(obs), -1)
    bids = public_bids(obs)
    hit = np.isin(bids[:, 1], wanted) | np.isin(bids[:, 3], wanted) | np.isin(bids[:, 2], covered)
    return hit & (obs[:, O_PHASE + L.PH_PLAY] > 0) & mask[:, :52].any(axis=1)


class SearchDefencePolicy:
    """``net`` (a Policy: the agent's network) everywhere, ``search`` (a
    bot) at the card plays :func:`searched_rows` selects for ``against`` and ``cover``, and the
    network's bids after both the partner's and an opponent's Nil lowered by ``bid_shade``
    tricks (:func:`shade_bids`; 0, the default, leaves them) (Policy protocol)."""

    def __init__(
        self,
        net: Any,
        search: Any,
        name: str = "",
        against: tuple[str, ...] | list[str] = ("blind_nil", "nil"),
        cover: tuple[str, ...] | list[str] = (),
        bid_shade: int = 0,
    ) -> None:
        self.net, self.search = net, search
        self.against = _checked_against(against)
        self.cover = _checked_cover(cover)
        problem = bid_shade_problem(bid_shade)
        if problem:
            raise ValueError(f"search defence bid shade: {problem}")
        self.bid_shade = int(bid_shade)
        self._wanted, self._covered = _bids_of(self.against), _bids_of(self.cover)
        self.name = name or f"{getattr(net, 'name', 'network')}+search defence"
        self.meta = getattr(net, "meta", {})

    def act(self, observation: np.ndarray, action_mask: np.ndarray) -> int:
        """The bot's card after an opponent's bid in ``against`` or the partner's in ``cover``,
        else the network's action."""
        if _rows_after(observation, action_mask, self._wanted, self._covered)[0]:
            return int(self.search.act(observation, action_mask))
        action = int(self.net.act(observation, action_mask))
        bidding = observation[O_PHASE + L.PH_BID] > 0
        if self.bid_shade and bidding and both_nil_bid_rows(observation, action_mask)[0]:
            action = int(shade_bids(np.array([action]), np.array([True]), action_mask, self.bid_shade)[0])
        return action

    def batch_key(self) -> Hashable | None:
        """Composites decide together (:func:`act_search_defence`)."""
        return ("search_defence",) if acts_as(self, SearchDefencePolicy) else None

    def act_batch(
        self, observations: np.ndarray, action_masks: np.ndarray, peers: Sequence[Any] | None = None
    ) -> np.ndarray:
        """``int64 [B]``: the actions ``act`` would return for the rows in order (row ``i`` by
        ``peers[i]``, default this policy)."""
        policies = list(peers) if peers is not None else [self] * len(observations)
        return act_search_defence(policies, observations, action_masks)


def act_search_defence(policies: list[SearchDefencePolicy], obs: np.ndarray, mask: np.ndarray) -> np.ndarray:
    """Row ``i``'s action by ``policies[i]``, as its ``act`` would give: the networks decide
    the other rows together (:func:`~spades_env.policies.base.act_rows`: one forward pass for
    networks with a batched form), their bids shaded as each policy's ``bid_shade`` says, each
    bot its own rows in order."""
    out = np.empty(len(policies), dtype=np.int64)
    searched = np.zeros(len(policies), dtype=bool)
    kinds = [(p.against, p.cover) for p in policies]
    for kind in set(kinds):
        rows = np.array([k == kind for k in kinds])
        first = policies[kinds.index(kind)]
        searched[rows] = _rows_after(obs[rows], mask[rows], first._wanted, first._covered)
    rows = np.flatnonzero(~searched)
    if rows.size:
        out[rows] = act_rows([policies[i].net for i in rows.tolist()], obs[rows], mask[rows])
        shades = np.array([policies[i].bid_shade for i in rows.tolist()], dtype=np.int64)
        for shade in set(shades[shades > 0].tolist()):
            sub = rows[shades == shade]
            hit = both_nil_bid_rows(obs[sub], mask[sub])
            out[sub] = shade_bids(out[sub], hit, mask[sub], shade)
    for i in np.flatnonzero(searched).tolist():
        out[i] = int(policies[i].search.act(obs[i].copy(), mask[i].copy()))
    return out


def bid_shade_problem(value: Any) -> str | None:
    """Why ``value`` cannot be a ``both_nil_bid_shade`` (an integer 0..:data:`MAX_BID_SHADE`,
    tricks off the bid); None if it can."""
    if isinstance(value, bool) or not isinstance(value, int) or not 0 <= value <= MAX_BID_SHADE:
        return f"expected a whole number of tricks 0..{MAX_BID_SHADE}, got {value!r}"
    return None


def both_nil_bid_rows(observations: np.ndarray, action_masks: np.ndarray) -> np.ndarray:
    """``bool [N]``: the rows that are bids (a bid of 1 in the mask) made after the partner
    (relative seat 2) bid Nil or Blind Nil and an opponent (relative seat 1 or 3) did: the bids
    ``both_nil_bid_shade`` lowers."""
    obs = np.asarray(observations).reshape(-1, OBS_SIZE)
    mask = np.asarray(action_masks).reshape(len(obs), -1)
    bids = public_bids(obs)
    both = np.isin(bids[:, 2], _NIL_BIDS) & (np.isin(bids[:, 1], _NIL_BIDS) | np.isin(bids[:, 3], _NIL_BIDS))
    return both & (obs[:, O_PHASE + L.PH_BID] > 0) & (mask[:, _BID_ONE] > 0)


def shade_bids(actions: np.ndarray, rows: np.ndarray, action_masks: np.ndarray, shade: int) -> np.ndarray:
    """``actions`` with each positive bid in ``rows`` (bool) lowered by ``shade`` tricks, never
    below a bid of 1 and only to a legal bid (else unchanged); Nil and the rest as they are."""
    out = np.array(actions, dtype=np.int64, copy=True)
    if shade <= 0:
        return out
    mask = np.asarray(action_masks).reshape(len(out), -1)
    hit = rows & (out > _BID_ONE) & (out <= _BID_TOP)
    for i in np.flatnonzero(hit).tolist():
        lowered = max(_BID_ONE, int(out[i]) - shade)
        if mask[i, lowered] > 0:
            out[i] = lowered
    return out


def search_bot_problem(name: Any) -> str | None:
    """Why ``name`` cannot be a search-defence (or teacher) bot: not a bots registry name such
    as ``search:samples=200``; None if it can."""
    from spades_env.policies.bots import PolicyNameError, parse_policy_name

    if not isinstance(name, str):
        return f"expected a bot name such as 'search:samples=200', got {name!r}"
    try:
        parse_policy_name(name)
    except PolicyNameError as exc:
        return str(exc)
    return None


def search_defence_problem(
    bot: Any, against: Any = None, prefix: str = "", cover: Any = None, bid_shade: Any = None
) -> str | None:
    """Why a search defence setting cannot be used: ``bot`` (None: not given) must be a bots
    registry name, ``against`` and ``cover`` (None: not given) lists for
    :func:`against_problem` that need a bot (an empty ``cover`` covers nothing and needs none),
    ``bid_shade`` (None: not given) a :func:`bid_shade_problem` number that needs a bot when
    not 0. The message names the key at fault (``prefix``
    before the key names, as ``policy.`` in a checkpoint's ``meta.json``); None if the setting
    can be used."""
    if bot is not None:
        problem = search_bot_problem(bot)
        if problem:
            return f"key '{prefix}search_defence': {problem}"
    for key, value in (("search_defence_against", against), ("search_defence_cover", cover)):
        if value is None:
            continue
        problem = against_problem(value, allow_empty=key == "search_defence_cover")
        if problem:
            return f"key '{prefix}{key}': {problem}"
        if value and not bot:
            return f"key '{prefix}{key}' needs a bot in '{prefix}search_defence'"
    if bid_shade is not None:
        problem = bid_shade_problem(bid_shade)
        if problem:
            return f"key '{prefix}both_nil_bid_shade': {problem}"
        if bid_shade and not bot:
            return f"key '{prefix}both_nil_bid_shade' needs a bot in '{prefix}search_defence'"
    return None


def search_seed(seed: int | None) -> int | None:
    """The bot's seed from the policy's (its own stream, not the network's)."""
    return None if seed is None else int(np.random.SeedSequence([int(seed), 0x5EA2C4]).generate_state(1)[0])


__all__ = [
    "DEFENDED_BIDS",
    "MAX_BID_SHADE",
    "SearchDefencePolicy",
    "act_search_defence",
    "against_problem",
    "bid_shade_problem",
    "both_nil_bid_rows",
    "shade_bids",
    "search_bot_problem",
    "search_defence_problem",
    "search_seed",
    "searched_rows",
]
