"""The chance of winning the game from a score, under the rules at hand (``netsearch``'s
``value=3``): value iteration over whole hands drawn from the Blind Nil outcome table.

A hand moves the two teams' scores by the points of one of the table's deals (four L2 players,
the deciding seat declaring Blind Nil or seeing its cards; :mod:`.blind_value`). Where the rules
offer a team a Blind Nil (it trails by the deficit they name) that team takes whichever answer
leaves it the better chance. A bag costs its share of the penalty (``bag_penalty / bag_limit``
points) when won, so a state is the two scores. The chance at a score is the mean, over the
deals, of the chance after the hand (1 or 0 once the core's rule ends the game: the target, the
mercy rule), iterated to a fixed point on a grid of scores ``GRID_STEP`` points apart, bilinear
in between. Unlike the normal model of the margin (:func:`.blind_value.win_chance`) it knows what
the rules make of a score: that a team 100 behind under house rules gets a Blind Nil, that a
team near the target needs only its contract.
"""

from __future__ import annotations

import math
from functools import lru_cache

import numpy as np

from spades_env.core import layout as L
from spades_env.core.engine import blind_open_at, game_winner_of
from spades_env.core.jit import jit
from spades_env.policies.bots.blind_value import (
    OPT_BLIND,
    OPT_SEE,
    TWO_PLAYER_CONFIG,
    blind_model,
    model_entry,
    win_chance,
)

GRID_STEP = 10
"""Points between grid scores."""
GRID_BELOW = 600
"""The grid reaches this many points below zero (lower scores read its edge)."""
DEALS = 64
"""Deals of the table a hand is drawn from."""
SWEEPS, TOLERANCE = 200, 1e-5
"""Value iteration stops after this many sweeps or once no chance moves by more."""


@jit
def chance_at(table, low, own, opp, params):
    """The chance that the team at ``own`` points beats the one at ``opp`` from the start of a
    hand: 1 or 0 where the game is over, else the ``table`` (grid from ``low``, bilinear)."""
    w = game_winner_of(int(round(own)), int(round(opp)), params)
    if w >= 0:
        return 1.0 if w == 0 else 0.0
    n = table.shape[0]
    x = min(max((own - low) / GRID_STEP, 0.0), n - 1.0)
    y = min(max((opp - low) / GRID_STEP, 0.0), n - 1.0)
    i = min(int(x), n - 2)
    j = min(int(y), n - 2)
    fx = x - i
    fy = y - j
    top = table[i, j] * (1.0 - fy) + table[i, j + 1] * fy
    bottom = table[i + 1, j] * (1.0 - fy) + table[i + 1, j + 1] * fy
    return top * (1.0 - fx) + bottom * fx


@jit
def _mean_after(table, low, own, opp, pts, ours, theirs, params):
    """Mean chance after a hand drawn from the deals' points ``pts[answer, deal, team]`` (team 0
    the deciding seat's): ``ours`` / ``theirs`` is each team's answer (``OPT_SEE`` for a team
    not offered one). A hand without a Blind Nil is read from both sides (the table's deciding
    seat bids first); both teams declaring take their declaring sides from two different deals."""
    m = pts.shape[1]
    total = 0.0
    for d in range(m):
        if ours == OPT_BLIND and theirs == OPT_BLIND:
            e = (d + m // 2) % m
            total += chance_at(table, low, own + pts[OPT_BLIND, d, 0], opp + pts[OPT_BLIND, e, 0], params)
        elif ours == OPT_BLIND:
            total += chance_at(table, low, own + pts[OPT_BLIND, d, 0], opp + pts[OPT_BLIND, d, 1], params)
        elif theirs == OPT_BLIND:
            total += chance_at(table, low, own + pts[OPT_BLIND, d, 1], opp + pts[OPT_BLIND, d, 0], params)
        else:
            total += 0.5 * (
                chance_at(table, low, own + pts[OPT_SEE, d, 0], opp + pts[OPT_SEE, d, 1], params)
                + chance_at(table, low, own + pts[OPT_SEE, d, 1], opp + pts[OPT_SEE, d, 0], params)
            )
    return total / m


@jit
def iterate(table, low, pts, params, sweeps, tolerance):
    """Value iteration in place (Gauss-Seidel) on ``table[i, j]``: the chance of the team at
    ``low + i * GRID_STEP`` against the one at ``low + j * GRID_STEP``; returns the sweeps made.
    A team offered a Blind Nil takes the answer better for it (both offered: ours the best
    against their best reply)."""
    n = table.shape[0]
    for sweep in range(sweeps):
        moved = 0.0
        for i in range(n):
            own = low + i * GRID_STEP
            for j in range(n):
                opp = low + j * GRID_STEP
                us = blind_open_at(opp - own, params)
                them = blind_open_at(own - opp, params)
                v = -1.0
                for ours in (OPT_SEE, OPT_BLIND):
                    if ours == OPT_BLIND and not us:
                        continue
                    worst = 2.0
                    for theirs in (OPT_SEE, OPT_BLIND):
                        if theirs == OPT_BLIND and not them:
                            continue
                        worst = min(worst, _mean_after(table, low, own, opp, pts, ours, theirs, params))
                    v = max(v, worst)
                moved = max(moved, abs(v - table[i, j]))
                table[i, j] = v
        if moved < tolerance:
            return sweep + 1
    return sweeps


def hand_points_table(params: np.ndarray) -> np.ndarray:
    """``float64 [2, DEALS, 2]``: per answer (Blind Nil, see) and deal of the outcome table, each
    team's (seat's, two players) points less its bags' share of the penalty (the table's entry
    for the rules' exchange size with no partner bid yet, or the two-player entry)."""
    model = blind_model()
    exchange = min(max(int(params[L.P_EXCHANGE_CARDS]), 0), 4)
    cfg = TWO_PLAYER_CONFIG if params[L.P_NUM_SEATS] == 2 else 2 * exchange
    k = model_entry(model, params, cfg)
    if k < 0:
        raise RuntimeError("game_value: the Blind Nil model's cache is full")
    per_bag = params[L.P_BAG_PENALTY] / max(int(params[L.P_BAG_LIMIT]), 1)
    m = min(DEALS, model.points.shape[2])
    raw = model.points[k, :, :m].astype(np.float64)  # [opt, deal, team, (points, bags won)]
    return raw[..., 0] - per_bag * raw[..., 1]


@lru_cache(maxsize=16)
def _table_for(key: bytes) -> tuple[np.ndarray, float]:
    params = np.frombuffer(key, dtype=np.int64).copy()
    low = -float(GRID_BELOW)
    n = int(math.ceil((params[L.P_TARGET_SCORE] - low) / GRID_STEP)) + 1
    grid = low + GRID_STEP * np.arange(n)
    table = np.array([[win_chance(int(a), int(b), params) for b in grid] for a in grid])
    iterate(table, low, hand_points_table(params), params, SWEEPS, TOLERANCE)
    table.setflags(write=False)
    return table, low


def game_value_table(params: np.ndarray) -> tuple[np.ndarray, float]:
    """The chance table for these rules (``params``, the core's row) and its lowest score:
    read it with :func:`chance_at`. Made once per rules in a process (a few seconds)."""
    return _table_for(np.ascontiguousarray(params, dtype=np.int64).tobytes())
