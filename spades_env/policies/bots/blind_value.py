"""What a Blind Nil is worth: the table of simulated hands and the decision made from it.

A Blind Nil is chosen before the cards are seen, so its value depends only on the rules, the
score and the bids already made. The table (``data/blind_nil_outcomes.npz``, made by
``python -m spades_env.policies.bots.blind_sim``) holds, for each exchange size 0..``MAX_EXCHANGE`` and
for whether the partner has bid already, ``N`` random deals played out twice by four L2
players: once with the deciding seat declaring Blind Nil and once seeing its cards. Each
outcome is the bids and tricks of the four seats, relative to the decider, so it can be scored
under any rules (values, bags, a failed Nil's tricks) by the core's ``score_team``.

:func:`blind_choice` scores every outcome pair under the rules at hand, from the current score
and bags, and compares the mean chance of winning the game afterwards (:func:`win_chance`: the
game is over, or a normal model of the remaining hands whose mean and spread per hand are
measured on the same table under the same rules, :func:`hand_model`), so that it declares Blind Nil exactly
when that is better: often when it pays (tournament rules), never when it does not, and more
readily when the score calls for a gamble; where the two win chances are within 2 points of
each other (the model's error), the expected margin of the hand decides. Where the partner has bid, deals with a partner
bid close to the real one weigh more; where an opponent has declared Blind Nil already, its
team's hand is scored as the declaring side of another deal of the table. The two-player game
has its own table entry.

Decisions read a :class:`BlindModel`: the table plus, for every (rules, table entry) met so
far, its outcomes scored once by the core (points before the bag penalty and bags won, then the
core's ``bag_penalty`` at the current bags) and its hand model, so that a decision costs a pass
over the table instead of a thousand scorings (:func:`blind_values_direct` is the uncached
reference; a test checks the two agree).
"""

from __future__ import annotations

import math
from functools import lru_cache
from importlib import resources
from typing import NamedTuple

import numpy as np

from spades_env.core import layout as L
from spades_env.core.actions import ACTION_BLIND_NIL, ACTION_SEE_CARDS
from spades_env.core.engine import game_winner_of
from spades_env.core.jit import jit
from spades_env.core.scoring import bag_penalty, hand_points, is_nil_bid, score_team

MAX_EXCHANGE = 4
"""Exchange sizes above this use the table of this size."""
NUM_CONFIGS = 2 * (MAX_EXCHANGE + 1) + 1  # four-player (size, partner bid) pairs, then two-player
TWO_PLAYER_CONFIG = NUM_CONFIGS - 1
OPT_BLIND, OPT_SEE = 0, 1
TABLE_FILE = "blind_nil_outcomes.npz"
WIN_CHANCE_TIE = 0.02
"""Win chances closer than this are within the model's error: the expected points decide."""
MAX_DEALS_USED = 256
"""Deals of a table entry a decision averages over (the first ones): enough for the estimate,
cheap enough for a decision at engine speed."""

CACHE_ENTRIES = 64
"""(rules, table entry) pairs a :class:`BlindModel` keeps scored; past that, decisions score
the outcomes afresh (the same values, slower)."""

MODE_EV = 0
MODE_ALWAYS_BLIND = 1
MODE_NEVER_BLIND = 2


def config_index(num_seats: int, exchange: int, partner_has_bid: bool) -> int:
    """Row of the table for a game variant, exchange size and partner state."""
    return int(_config(int(num_seats), int(exchange), bool(partner_has_bid)))


@jit
def _config(num_seats, exchange, partner_has_bid):
    if num_seats == 2:
        return TWO_PLAYER_CONFIG
    k = min(max(exchange, 0), MAX_EXCHANGE)
    return 2 * k + (1 if partner_has_bid else 0)


@jit
def row_config(row, params):
    """Table entry of seat 0 of a decoded ``row``: its game, exchange size, and whether its
    partner has bid."""
    n = row[L.NUM_SEATS]
    return _config(n, params[L.P_EXCHANGE_CARDS], n == 4 and row[L.BIDS + 2] >= 0)


@jit
def win_chance(own, opp, params, gain=-1.0, spread=-1.0):
    """Chance that the team with ``own`` points beats the one with ``opp`` in this game: 1 or 0
    once the game is decided, else a normal model of the hands left, in which a team gains
    ``gain`` points a hand and the margin of a hand varies by ``spread`` (standard deviation).
    Without them (negative): 6.5 tricks' worth a hand, and 11 tricks plus a quarter of the Nil
    value; :func:`hand_model` measures them on the table for the rules at hand."""
    w = game_winner_of(own, opp, params)  # the core's game-end rule
    if w >= 0:
        return 1.0 if w == 0 else 0.0
    target = params[L.P_TARGET_SCORE]
    tv = params[L.P_TRICK_VALUE]
    if gain <= 0:
        gain = 6.5 * tv
    if spread <= 0:
        spread = 11.0 * tv + 0.25 * params[L.P_NIL_VALUE]
    hands_left = max(target - max(own, opp), 0) / max(gain, 1.0) + 1.0
    sd = spread * math.sqrt(hands_left)
    return 0.5 * (1.0 + math.erf((own - opp) / (sd * math.sqrt(2.0))))


@jit
def hand_model(params, table, cfg, m):
    """(gain, spread) of :func:`win_chance` under these rules, from the first ``m`` deals of
    table entry ``cfg``: the mean points of a team a hand, and the standard deviation of the
    margin of a hand, with each team playing the better of declaring and seeing (from 0 bags)."""
    n = 2 if cfg == TWO_PLAYER_CONFIG else 4
    bids = np.empty(4, dtype=np.int64)
    tricks = np.empty(4, dtype=np.int64)
    best_mean = -1e18
    best_sd = 0.0
    for opt in range(2):
        s1 = 0.0
        sm = 0.0
        sm2 = 0.0
        for i in range(m):
            for s in range(4):
                bids[s] = table[cfg, i, opt, s]
                tricks[s] = table[cfg, i, opt, 4 + s]
            p0, _, _ = score_team(bids, tricks, 0, n, 0, params)
            p1, _, _ = score_team(bids, tricks, 1, n, 0, params)
            s1 += p0
            sm += p0 - p1
            sm2 += (p0 - p1) * (p0 - p1)
        mean = s1 / max(m, 1)
        var = sm2 / max(m, 1) - (sm / max(m, 1)) ** 2
        if mean > best_mean:
            best_mean = mean
            best_sd = math.sqrt(max(var, 0.0))
    return max(best_mean, 1.0), max(best_sd, 1.0)


@jit
def blind_values_direct(row, params, table, out):
    """:func:`blind_values` scored from the outcome ``table`` itself, without a cache (the
    reference the cached path is tested against, and its fallback when the cache is full)."""
    n = row[L.NUM_SEATS]
    partner_bid = row[L.BIDS + 2] if n == 4 else L.BID_NONE
    cfg = row_config(row, params)
    bids = np.empty(4, dtype=np.int64)
    tricks = np.empty(4, dtype=np.int64)
    out[:4] = 0.0
    total = 0.0
    m = min(table.shape[1], MAX_DEALS_USED)
    # an opponent who has declared Blind Nil: their hand is scored as the declaring side of
    # another deal of the table (the table's opponents never declare)
    opp_blind = n == 4 and (row[L.BIDS + 1] == L.BID_BLIND_NIL or row[L.BIDS + 3] == L.BID_BLIND_NIL)
    gain, spread = hand_model(params, table, cfg, m)
    for i in range(m):
        w = 1.0
        if n == 4 and partner_bid >= 0:
            pb = table[cfg, i, OPT_BLIND, 2]
            d = abs(pb - partner_bid)
            w = 1.0 if d == 0 else (0.5 if d == 1 else 0.1)
        p_opp_blind = 0
        if opp_blind:
            j = (i + m // 2) % m
            for s in range(4):
                bids[s] = table[cfg, j, OPT_BLIND, s]
                tricks[s] = table[cfg, j, OPT_BLIND, 4 + s]
            p_opp_blind, _, _ = score_team(bids, tricks, 0, n, row[L.BAGS + 1], params)
        for opt in range(2):
            for s in range(4):
                bids[s] = table[cfg, i, opt, s]
                tricks[s] = table[cfg, i, opt, 4 + s]
            p0, _, _ = score_team(bids, tricks, 0, n, row[L.BAGS], params)
            p1, _, _ = score_team(bids, tricks, 1, n, row[L.BAGS + 1], params)
            if opp_blind:
                p1 = p_opp_blind
            out[opt] += w * win_chance(row[L.SCORES] + p0, row[L.SCORES + 1] + p1, params, gain, spread)
            out[2 + opt] += w * (p0 - p1)
        total += w
    if total > 0:
        out[:4] /= total


class BlindModel(NamedTuple):
    """The outcome table and, for each (rules, table entry) met so far, what a decision needs
    of it under those rules, scored once by the core: every outcome's points before the bag
    penalty and bags won per team (``hand_points``; the bag penalty at the current bags is the
    core's ``bag_penalty``) and the hand model. One per process (:func:`blind_model`); compiled
    code fills it on first use, from one thread (``l2_act_batch`` fills it before its threads)."""

    outcomes: np.ndarray  # int64 [NUM_CONFIGS, N, 2, 8]: the table
    keys: np.ndarray  # int64 [CACHE_ENTRIES, PARAMS_SIZE + 1]: each entry's rules params and config
    used: np.ndarray  # int64 [1]: entries filled
    hands: np.ndarray  # float64 [CACHE_ENTRIES, 2]: hand_model's (gain, spread)
    points: np.ndarray  # int64 [CACHE_ENTRIES, 2, M, 2, 2]: per option, deal, team: points, bags won


def model_of(table: np.ndarray) -> BlindModel:
    """A :class:`BlindModel` with an empty cache over the outcome ``table``."""
    table = np.ascontiguousarray(table, dtype=np.int64)
    m = min(table.shape[1], MAX_DEALS_USED)
    return BlindModel(
        table,
        np.zeros((CACHE_ENTRIES, L.PARAMS_SIZE + 1), dtype=np.int64),
        np.zeros(1, dtype=np.int64),
        np.zeros((CACHE_ENTRIES, 2), dtype=np.float64),
        np.zeros((CACHE_ENTRIES, 2, m, 2, 2), dtype=np.int64),
    )


@jit
def model_entry(model, params, cfg):
    """Cache slot of these rules and table entry ``cfg`` in ``model``, scored on first use;
    -1 once the cache is full."""
    p = params.shape[0]
    n = model.used[0]
    for k in range(n):
        if model.keys[k, p] != cfg:
            continue
        same = True
        for j in range(p):
            if model.keys[k, j] != params[j]:
                same = False
                break
        if same:
            return k
    if n >= model.keys.shape[0]:
        return -1
    table = model.outcomes
    m = model.points.shape[2]
    seats = 2 if cfg == TWO_PLAYER_CONFIG else 4
    bids = np.empty(4, dtype=np.int64)
    tricks = np.empty(4, dtype=np.int64)
    for opt in range(2):
        for i in range(m):
            for s in range(4):
                bids[s] = table[cfg, i, opt, s]
                tricks[s] = table[cfg, i, opt, 4 + s]
            for team in range(2):
                pts, won = hand_points(bids, tricks, team, seats, params)
                model.points[n, opt, i, team, 0] = pts
                model.points[n, opt, i, team, 1] = won
    gain, spread = hand_model(params, table, cfg, m)
    model.hands[n, 0] = gain
    model.hands[n, 1] = spread
    for j in range(p):
        model.keys[n, j] = params[j]
    model.keys[n, p] = cfg
    model.used[0] = n + 1
    return n


@jit
def model_hand(model, params, cfg):
    """:func:`hand_model`'s (gain, spread) for these rules and table entry, from the cache."""
    k = model_entry(model, params, cfg)
    if k < 0:
        return hand_model(params, model.outcomes, cfg, model.points.shape[2])
    return model.hands[k, 0], model.hands[k, 1]


@jit
def _points(model, k, opt, i, team, bags, params):
    return model.points[k, opt, i, team, 0] - bag_penalty(bags, model.points[k, opt, i, team, 1], params)[0]


@jit
def blind_values(row, params, model, out):
    """Mean chance of winning the game after this hand, ``out[0]`` with a Blind Nil by seat 0
    of the decoded ``row`` and ``out[1]`` seeing the cards, and the mean margin of the hand
    (own team's points minus the other's) in ``out[2]`` and ``out[3]``, from the outcome table
    of the :class:`BlindModel` ``model``."""
    table = model.outcomes
    n = row[L.NUM_SEATS]
    partner_bid = row[L.BIDS + 2] if n == 4 else L.BID_NONE
    cfg = row_config(row, params)
    k = model_entry(model, params, cfg)
    if k < 0:
        blind_values_direct(row, params, table, out)
        return
    out[:4] = 0.0
    total = 0.0
    m = model.points.shape[2]
    # an opponent who has declared Blind Nil: their hand is scored as the declaring side of
    # another deal of the table (the table's opponents never declare)
    opp_blind = n == 4 and (row[L.BIDS + 1] == L.BID_BLIND_NIL or row[L.BIDS + 3] == L.BID_BLIND_NIL)
    gain = model.hands[k, 0]
    spread = model.hands[k, 1]
    own_bags = row[L.BAGS]
    opp_bags = row[L.BAGS + 1]
    for i in range(m):
        w = 1.0
        if n == 4 and partner_bid >= 0:
            d = abs(table[cfg, i, OPT_BLIND, 2] - partner_bid)
            w = 1.0 if d == 0 else (0.5 if d == 1 else 0.1)
        p_opp_blind = 0
        if opp_blind:
            p_opp_blind = _points(model, k, OPT_BLIND, (i + m // 2) % m, 0, opp_bags, params)
        for opt in range(2):
            p0 = _points(model, k, opt, i, 0, own_bags, params)
            p1 = p_opp_blind if opp_blind else _points(model, k, opt, i, 1, opp_bags, params)
            out[opt] += w * win_chance(row[L.SCORES] + p0, row[L.SCORES + 1] + p1, params, gain, spread)
            out[2 + opt] += w * (p0 - p1)
        total += w
    if total > 0:
        out[:4] /= total


@jit
def blind_choice(row, params, mode, model):
    """Blind Nil (66) or See cards (67) for seat 0 of a decoded row (``mode``: ``MODE_EV``
    compares the values, ``MODE_ALWAYS_BLIND`` declares whenever the partner has not bid a
    Nil, ``MODE_NEVER_BLIND`` never does; ``model``: a :class:`BlindModel`)."""
    n = row[L.NUM_SEATS]
    if n == 4 and is_nil_bid(row[L.BIDS + 2]):
        return ACTION_SEE_CARDS
    if mode == MODE_ALWAYS_BLIND:
        return ACTION_BLIND_NIL
    if mode == MODE_NEVER_BLIND or model.outcomes.shape[1] == 0:
        return ACTION_SEE_CARDS
    v = np.zeros(4, dtype=np.float64)
    blind_values(row, params, model, v)
    if abs(v[OPT_BLIND] - v[OPT_SEE]) < WIN_CHANCE_TIE:  # within the model's error: points decide
        return ACTION_BLIND_NIL if v[2 + OPT_BLIND] > v[2 + OPT_SEE] else ACTION_SEE_CARDS
    return ACTION_BLIND_NIL if v[OPT_BLIND] > v[OPT_SEE] else ACTION_SEE_CARDS


def empty_table() -> np.ndarray:
    """A table with no outcomes (L2 then never declares Blind Nil): what the simulation that
    builds the table starts from."""
    return np.zeros((NUM_CONFIGS, 0, 2, 8), dtype=np.int64)


@lru_cache(maxsize=1)
def load_table() -> np.ndarray:
    """The shipped outcome table, ``int64 [NUM_CONFIGS, N, 2, 8]`` (read once)."""
    ref = resources.files("spades_env.policies.bots").joinpath("data", TABLE_FILE)
    with ref.open("rb") as f, np.load(f, allow_pickle=False) as z:
        table = np.ascontiguousarray(z["outcomes"], dtype=np.int64)
    if table.ndim != 4 or table.shape[0] != NUM_CONFIGS or table.shape[2:] != (2, 8):
        raise RuntimeError(f"{TABLE_FILE}: outcome table of shape {table.shape}, expected ({NUM_CONFIGS}, N, 2, 8)")
    table.setflags(write=False)
    return table


@lru_cache(maxsize=1)
def blind_model() -> BlindModel:
    """The process's :class:`BlindModel` over the shipped table (what L2 and L3 decide from)."""
    return model_of(load_table())


def table_summary(table: np.ndarray | None = None, rules=None) -> list[dict]:
    """Per table entry: the Blind Nil success rate and the mean team margin per hand of
    declaring and of seeing the cards at 0-0 under ``rules`` (default tournament)."""
    from spades_env.core.rules import load_rules

    table = load_table() if table is None else table
    params = load_rules(rules).to_params()
    rows = []
    for cfg in range(table.shape[0]):
        n = 2 if cfg == TWO_PLAYER_CONFIG else 4
        margins = np.zeros(2)
        succ = 0
        for i in range(table.shape[1]):
            for opt in range(2):
                b = table[cfg, i, opt, :4].astype(np.int64)
                t = table[cfg, i, opt, 4:].astype(np.int64)
                p0 = score_team(b, t, 0, n, 0, params)[0]
                p1 = score_team(b, t, 1, n, 0, params)[0]
                margins[opt] += p0 - p1
            succ += int(table[cfg, i, OPT_BLIND, 4] == 0)
        m = max(table.shape[1], 1)
        rows.append(
            {
                "players": n,
                "exchange": None if n == 2 else cfg // 2,
                "partner_has_bid": None if n == 2 else bool(cfg % 2),
                "deals": int(table.shape[1]),
                "blind_success": succ / m,
                "margin_blind": margins[0] / m,
                "margin_see": margins[1] / m,
            }
        )
    return rows


__all__ = [
    "MAX_EXCHANGE",
    "MODE_ALWAYS_BLIND",
    "MODE_EV",
    "MODE_NEVER_BLIND",
    "BlindModel",
    "blind_choice",
    "blind_model",
    "blind_values",
    "blind_values_direct",
    "config_index",
    "empty_table",
    "load_table",
    "model_entry",
    "model_hand",
    "model_of",
    "row_config",
    "table_summary",
    "hand_model",
    "win_chance",
]
