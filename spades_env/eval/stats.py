"""Confidence intervals and the summary of a duplicate match.

``wilson_ci`` for win rates; ``bootstrap_ci`` (percentile bootstrap, resampling whole boards,
so hands of the same board stay together) for points per hand. ``summarize`` turns the boards
of one matchup into the numbers the reports show, from team A's side.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

import numpy as np

from spades_env.core.validate import InputError, brief, check_choice, check_float, check_int
from spades_env.eval.boards import BoardResult
from spades_env.eval.match import FORMATS

Z95 = 1.959963984540054


def wilson_ci(successes: float, n: int, z: float = Z95) -> tuple[float, float]:
    """Wilson score interval of a proportion ``successes / n`` (``(0, 1)`` when ``n`` is 0).
    ``successes`` may be fractional (a draw counted as half a win)."""
    successes, n = check_float(successes, "wilson_ci successes"), check_int(n, "wilson_ci n", 0)
    if successes < 0 or successes > n:
        raise InputError(f"wilson_ci needs 0 <= successes <= n, got {successes:g} of {n}")
    if n == 0:
        return 0.0, 1.0
    p = successes / n
    z2 = z * z
    denom = 1.0 + z2 / n
    centre = (p + z2 / (2 * n)) / denom
    half = z * math.sqrt(p * (1 - p) / n + z2 / (4 * n * n)) / denom
    return max(0.0, centre - half), min(1.0, centre + half)


def bootstrap_ci(
    values: Sequence[float] | np.ndarray,
    weights: Sequence[float] | np.ndarray | None = None,
    *,
    n_resamples: int = 2000,
    confidence: float = 0.95,
    seed: int = 0,
) -> tuple[float, float, float]:
    """(estimate, low, high): percentile bootstrap of ``sum(values) / sum(weights)`` over
    clusters (``weights`` None: the mean of ``values``). Resamples clusters with replacement
    from a generator seeded by ``seed``."""
    v = np.asarray(values, dtype=np.float64)
    w = np.ones_like(v) if weights is None else np.asarray(weights, dtype=np.float64)
    if v.ndim != 1 or v.shape != w.shape:
        raise ValueError(f"values and weights must be 1-D of the same length, got {v.shape} and {w.shape}")
    if v.size == 0:
        return math.nan, math.nan, math.nan
    if w.sum() <= 0:
        raise ValueError("bootstrap_ci: the weights sum to zero")
    est = float(v.sum() / w.sum())
    rng = np.random.default_rng(seed)
    idx = rng.integers(0, v.size, size=(n_resamples, v.size))
    ws = w[idx].sum(axis=1)
    ok = ws > 0
    stats = v[idx].sum(axis=1)[ok] / ws[ok]
    alpha = (1.0 - confidence) / 2
    lo, hi = np.quantile(stats, [alpha, 1 - alpha], method="inverted_cdf")
    return est, float(lo), float(hi)


def _rate(k: float, n: int) -> dict[str, Any]:
    lo, hi = wilson_ci(k, n)
    return {"k": k, "n": n, "rate": (k / n) if n else None, "ci95": [lo, hi]}


def summarize(
    boards: Sequence[BoardResult],
    fmt: str,
    names: tuple[str, str] = ("A", "B"),
    seed: int = 0,
) -> dict[str, Any]:
    """Numbers of one matchup from team A's side: margin per hand (bootstrap 95% CI over
    boards), hand / game / match win rates (Wilson 95% CI; a tie or truncated game counts as
    half), and per team set rate, nil and blind nil success, bags per hand, bid error.
    ``boards`` is :func:`~spades_env.eval.run_duplicate`'s list, ``fmt`` its format and ``names``
    the two teams' labels (``InputError`` otherwise)."""
    check_choice(fmt, "format", FORMATS)
    if isinstance(boards, (str, bytes)) or not isinstance(boards, Sequence):
        raise InputError(f"boards must be a list of BoardResult (run_duplicate's), got {brief(boards)}")
    bad = next((i for i, b in enumerate(boards) if not isinstance(b, BoardResult)), None)
    if bad is not None:
        raise InputError(f"boards[{bad}] must be a BoardResult (run_duplicate's), got {brief(boards[bad])}")
    if not (isinstance(names, (tuple, list)) and len(names) == 2 and all(isinstance(n, str) for n in names)):
        raise InputError(f"names must be two team labels (strings), got {brief(names)}")
    board_margin, board_hands = [], []
    hands = 0
    hand_wins = 0.0
    games = 0
    game_wins = 0.0
    truncated = 0
    matches = 0
    match_wins = 0.0
    per = [
        dict.fromkeys(
            ("points", "contracts", "sets", "nil", "nil_made", "blind", "blind_made", "bags", "bid_error"), 0
        )
        for _ in range(2)
    ]
    runs = 0
    for board in boards:
        m = 0.0
        n = 0
        for seating, res in board.runs:
            runs += 1
            a = seating.a_team
            for h in res.hands:
                ta, tb = h.teams[a], h.teams[1 - a]
                m += ta.points - tb.points
                n += 1
                hand_wins += 1.0 if ta.points > tb.points else 0.5 if ta.points == tb.points else 0.0
                for k, t in ((0, ta), (1, tb)):
                    p = per[k]
                    p["points"] += t.points
                    p["contracts"] += t.contract > 0
                    p["sets"] += t.set
                    p["nil"] += t.nil_bids
                    p["nil_made"] += t.nil_made
                    p["blind"] += t.blind_bids
                    p["blind_made"] += t.blind_made
                    p["bags"] += t.bags
                    p["bid_error"] += t.bid_error
            for w in res.game_winners:
                games += 1
                if w < 0:
                    truncated += 1
                    game_wins += 0.5
                else:
                    game_wins += 1.0 if w == a else 0.0
            if fmt == "match":
                matches += 1
                w = res.match_winner
                match_wins += 0.5 if w < 0 else 1.0 if w == a else 0.0
        board_margin.append(m)
        board_hands.append(n)
        hands += n
    est, lo, hi = bootstrap_ci(board_margin, board_hands, seed=seed) if hands else (math.nan,) * 3
    teams = []
    for k in range(2):
        p = per[k]
        teams.append(
            {
                "side": "AB"[k],
                "name": names[k],
                "points_per_hand": p["points"] / hands if hands else None,
                "set_rate": _rate(p["sets"], p["contracts"]),
                "nil_success": _rate(p["nil_made"], p["nil"]),
                "blind_nil_success": _rate(p["blind_made"], p["blind"]),
                "bags_per_hand": p["bags"] / hands if hands else None,
                "nil_bids_per_hand": p["nil"] / hands if hands else None,
                "blind_nil_bids_per_hand": p["blind"] / hands if hands else None,
                "bid_error": p["bid_error"] / hands if hands else None,
            }
        )
    out: dict[str, Any] = {
        "team_a": names[0],
        "team_b": names[1],
        "format": fmt,
        "boards": len(boards),
        "runs": runs,
        "hands": hands,
        "margin_per_hand": {"mean": est, "ci95": [lo, hi]},
        "hand_win": _rate(hand_wins, hands),
        "teams": teams,
    }
    cheats = [n for n in names if "cheat" in n]
    if cheats:
        out["note"] = (
            f"CHEATING (sees the true deal; an upper bound, not a legal policy): {', '.join(cheats)}"
        )
    if fmt in ("game", "match"):
        out["game_win"] = _rate(game_wins, games)
        out["truncated_games"] = truncated
    if fmt == "match":
        out["match_win"] = _rate(match_wins, matches)
    return out
