"""Scoring of one hand: a pure function of (bids, tricks, bags, rules).

Per team and hand: contract made gives ``trick_value x contract`` plus 1 per trick over it
(bags); a set contract loses ``trick_value x contract``. Each Nil bidder is scored on its own:
``+nil_value`` with no trick, ``-nil_value`` otherwise (Blind Nil: ``blind_nil_value``). A
failed Nil bidder's tricks count as bags, not toward the partner's contract (unless
``failed_nil_counts_toward_contract``, as in OpenSpiel). Bags carry over; each time a team's
total reaches ``bag_limit`` it loses ``bag_penalty`` and ``bag_limit`` bags are removed.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from spades_env.core import layout as L
from spades_env.core.jit import inline_jit, jit


@inline_jit
def is_nil_bid(bid):
    """Whether a bid value (0..13, ``BID_BLIND_NIL``, ``BID_NONE``) is a Nil or Blind Nil."""
    return bid == 0 or bid == L.BID_BLIND_NIL


@inline_jit
def team_contract(bids, team, num_seats):
    """Tricks a team contracted: the sum of its non-Nil bids (bids not made yet count 0)."""
    contract = 0
    for s in range(team, num_seats, 2):
        b = bids[s]
        if b > 0 and b != L.BID_BLIND_NIL:
            contract += b
    return contract


@inline_jit
def contract_tricks(bids, tricks, team, num_seats, params):
    """Tricks counting toward a team's contract: its non-Nil bidders' tricks, plus a failed
    Nil bidder's tricks where ``failed_nil_counts_toward_contract`` is set."""
    got = 0
    counts_nil = params[L.P_FAILED_NIL_COUNTS] != 0
    for s in range(team, num_seats, 2):
        if not is_nil_bid(bids[s]) or counts_nil:
            got += tricks[s]
    return got


@inline_jit
def tricks_needed(bids, tricks, team, num_seats, params):
    """Tricks a team still needs to make its contract (<= 0: made)."""
    return team_contract(bids, team, num_seats) - contract_tricks(bids, tricks, team, num_seats, params)


@jit
def hand_points(bids, tricks, team, num_seats, params):
    """(points before any bag penalty, bags won) of one team this hand: contract made or set,
    each Nil bidder's value, one point per bag."""
    contract = team_contract(bids, team, num_seats)
    got = contract_tricks(bids, tricks, team, num_seats, params)
    nil_bags = 0
    points = 0
    for s in range(team, num_seats, 2):
        b = bids[s]
        t = tricks[s]
        if is_nil_bid(b):
            value = params[L.P_BLIND_NIL_VALUE] if b == L.BID_BLIND_NIL else params[L.P_NIL_VALUE]
            if t == 0:
                points += value
            else:
                points -= value
                if params[L.P_FAILED_NIL_COUNTS] == 0:
                    nil_bags += t
    over = 0
    if got >= contract:
        points += params[L.P_TRICK_VALUE] * contract
        over = got - contract
    else:
        points -= params[L.P_TRICK_VALUE] * contract
    won = over + nil_bags
    points += won
    return points, won


@jit
def bag_penalty(bags_before, won, params):
    """(penalty points, bags after) of a team holding ``bags_before`` that wins ``won`` bags:
    ``bag_penalty`` each time the total reaches ``bag_limit``, which removes that many bags."""
    bags = bags_before + won
    penalty = 0
    limit = params[L.P_BAG_LIMIT]
    if limit > 0:
        while bags >= limit:
            penalty += params[L.P_BAG_PENALTY]
            bags -= limit
    return penalty, bags


@jit
def score_team(bids, tricks, team, num_seats, bags_before, params):
    """(points, bags after, bags won) of one team (its seats are ``team, team + 2, ...``)."""
    points, won = hand_points(bids, tricks, team, num_seats, params)
    penalty, bags = bag_penalty(bags_before, won, params)
    return points - penalty, bags, won


@jit
def score_hand_arrays(bids, tricks, bags, num_seats, params, out_points, out_bags):
    """Score both teams into ``out_points[2]`` and ``out_bags[2]`` (compiled core entry)."""
    for team in range(2):
        p, b, _ = score_team(bids, tricks, team, num_seats, bags[team], params)
        out_points[team] = p
        out_bags[team] = b


@dataclass(frozen=True)
class HandScore:
    """Result of scoring a hand: points won this hand and bags after it, per team."""

    points: tuple[int, int]
    bags: tuple[int, int]


def score_hand(
    bids: list[int | str],
    tricks: list[int],
    bags: tuple[int, int] = (0, 0),
    rules=None,
) -> HandScore:
    """Score one hand. ``bids`` per seat: 0..13 (0 = Nil) or ``"blind"`` for Blind Nil;
    ``tricks`` per seat, 0..13 summing to 13; ``bags`` per team before the hand, as a game can
    hold them (``0..bag_limit - 1``). Anything else raises
    :class:`~spades_env.core.validate.InputError` (a ``ValueError``): nothing is coerced.

    >>> score_hand([5, 2, 3, 2], [7, 2, 3, 1]).points   # NS bid 8 won 10; EW bid 4 won 3
    (82, -40)
    """
    from spades_env.core.rules import load_rules
    from spades_env.core.validate import InputError, check_bags, check_bid, check_int

    cfg = load_rules(rules)
    n = cfg.num_players
    for name, values in (("bids", bids), ("tricks", tricks)):
        if isinstance(values, (str, bytes, dict)) or not isinstance(values, (Sequence, np.ndarray)):
            raise InputError(f"{name} must be a list of {n} values (one per seat), got {values!r}")
    if len(bids) != n or len(tricks) != n:
        raise InputError(f"need {n} bids and {n} trick counts, got {len(bids)} and {len(tricks)}")
    b = np.full(4, L.BID_NONE, dtype=np.int64)
    for i, x in enumerate(bids):
        bid = check_bid(x, f"bid of seat {i}")
        b[i] = L.BID_BLIND_NIL if bid == "blind" else bid
    t = np.zeros(4, dtype=np.int64)
    t[:n] = [check_int(x, f"tricks of seat {i}") for i, x in enumerate(tricks)]
    if (t < 0).any() or t.sum() != 13:
        raise InputError(f"tricks {list(tricks)} must be non-negative and sum to 13")
    bags_in = np.asarray(check_bags(bags, cfg), dtype=np.int64)
    pts = np.zeros(2, dtype=np.int64)
    out_bags = np.zeros(2, dtype=np.int64)
    score_hand_arrays(b, t, bags_in, n, cfg.to_params(), pts, out_bags)
    return HandScore(points=(int(pts[0]), int(pts[1])), bags=(int(out_bags[0]), int(out_bags[1])))
