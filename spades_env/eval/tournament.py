"""Tournaments: a knockout bracket with byes, round-robin ratings, and the mixed-partner table.

Bracket (as in the tournament rules): when the number of teams is not a power of two, the
byes of round 1 go to teams drawn by a seeded generator; the other teams are paired at random;
from round 2 on, winners meet in bracket order. Each pairing is a duplicate match of a few
boards, won by more games won (hands won in the ``hand`` format), then by total points margin,
then by a seeded coin.

Round robin: every pair of teams plays duplicate boards; each game (or hand) updates OpenSkill
ratings (Plackett-Luce) in a fixed order, falling back to Elo when openskill is missing.

:func:`run_tournament` plays what ``spades tournament`` asks for: the round robin and the
bracket of a list of teams, and/or the mixed-partner table.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from spades_env.core.rules import RulesConfig, load_rules
from spades_env.core.validate import InputError
from spades_env.eval.boards import BoardResult, make_jobs
from spades_env.eval.duplicate import play_boards
from spades_env.eval.match import parse_team, spec_name, team_label
from spades_env.eval.stats import summarize
from spades_env.policies.registry import PolicySpec

Team = tuple[PolicySpec, PolicySpec]

QUICK_TEAMS = ("random", "greedy", "heuristic", "greedy+heuristic", "search:samples=100")
"""The teams of the short baseline tournament (``spades tournament --quick``): five teams, one
a mixed pair, so the bracket has byes."""
QUICK = {"boards": 48, "fmt": "hand", "bracket_boards": 24}
"""The short baseline tournament's boards per pair (round robin, bracket) and unit of play."""


def _as_team(t: str | Team) -> Team:
    return parse_team(t) if isinstance(t, str) else (t[0], t[1])


# ---- bracket ---------------------------------------------------------------------------
def draw_bracket(n_teams: int, rng: np.random.Generator) -> list[tuple[int, int | None]]:
    """Round 1 of a knockout bracket over teams ``0..n-1``: ``P / 2`` slots (``P`` the next
    power of two), each ``(team, other)`` or ``(team, None)`` for a bye; byes go to randomly
    drawn teams, the rest are paired at random, and the slots are shuffled."""
    if n_teams < 2:
        raise InputError(f"a bracket needs at least 2 teams, got {n_teams}")
    size = 1
    while size < n_teams:
        size *= 2
    n_byes = size - n_teams
    order = [int(x) for x in rng.permutation(n_teams)]
    byes, rest = order[:n_byes], order[n_byes:]
    slots: list[tuple[int, int | None]] = [(t, None) for t in byes]
    slots += [(rest[i], rest[i + 1]) for i in range(0, len(rest), 2)]
    perm = rng.permutation(len(slots))
    return [slots[int(i)] for i in perm]


@dataclass
class BracketMatch:
    """One pairing of the bracket and its outcome."""

    round: int
    a: int
    b: int | None  # None: a bye
    winner: int
    summary: dict[str, Any] | None = None
    decided_by: str = "bye"


def _score_pair(summary: dict[str, Any], fmt: str) -> tuple[float, float]:
    key = "hand_win" if fmt == "hand" else "game_win"
    rate = summary[key]
    return rate["k"], rate["n"] - rate["k"]


def run_bracket(
    teams: Sequence[str | Team],
    boards: int = 2,
    *,
    seed: int = 0,
    rules: RulesConfig | str | dict | None = None,
    fmt: str = "game",
    workers: int = 1,
    progress: bool = False,
) -> dict[str, Any]:
    """Play a knockout bracket (byes drawn from ``seed``); return rounds and champion."""
    cfg = load_rules(rules)
    tt = [_as_team(t) for t in teams]
    names = [team_label(t) for t in tt]
    rng = np.random.default_rng(np.random.SeedSequence([seed, 0xB7AC]))
    slots = draw_bracket(len(tt), rng)
    rounds: list[list[BracketMatch]] = []
    current: list[tuple[int, int | None]] = slots
    rnd = 1
    while True:
        pairs = [(a, b) for a, b in current if b is not None]
        jobs = []
        for k, (a, b) in enumerate(pairs):
            jobs += make_jobs(tt[a], tt[b], boards, seed=seed, rules=cfg, fmt=fmt, matchup=1000 * rnd + k)
        results = play_boards(jobs, workers=workers, progress=f"round {rnd}" if progress else False)
        by_match: dict[int, list[BoardResult]] = {}
        for r in results:
            by_match.setdefault(r.key[0] - 1000 * rnd, []).append(r)
        matches = []
        k = 0
        for a, b in current:
            if b is None:
                matches.append(BracketMatch(round=rnd, a=a, b=None, winner=a))
                continue
            s = summarize(by_match[k], fmt, (names[a], names[b]), seed=seed)
            wa, wb = _score_pair(s, fmt)
            margin = s["margin_per_hand"]["mean"]
            if wa != wb:
                winner, how = (a if wa > wb else b), "wins"
            elif margin != 0:
                winner, how = (a if margin > 0 else b), "points margin"
            else:
                winner, how = (a if rng.random() < 0.5 else b), "coin"
            matches.append(BracketMatch(round=rnd, a=a, b=b, winner=winner, summary=s, decided_by=how))
            k += 1
        rounds.append(matches)
        winners = [m.winner for m in matches]
        if len(winners) == 1:
            break
        current = [(winners[i], winners[i + 1]) for i in range(0, len(winners), 2)]
        rnd += 1
    return {
        "teams": names,
        "format": fmt,
        "boards_per_match": boards,
        "seed": seed,
        "rounds": [
            [
                {
                    "a": names[m.a],
                    "b": None if m.b is None else names[m.b],
                    "bye": m.b is None,
                    "winner": names[m.winner],
                    "decided_by": m.decided_by,
                    "summary": m.summary,
                }
                for m in matches
            ]
            for matches in rounds
        ],
        "champion": names[rounds[-1][0].winner],
    }


# ---- ratings ---------------------------------------------------------------------------
class _Elo:
    def __init__(self, n: int, k: float = 16.0) -> None:
        self.r = [1500.0] * n
        self.k = k

    def update(self, a: int, b: int, score_a: float) -> None:
        ea = 1.0 / (1.0 + 10 ** ((self.r[b] - self.r[a]) / 400))
        self.r[a] += self.k * (score_a - ea)
        self.r[b] -= self.k * (score_a - ea)

    def table(self, names: list[str]) -> list[dict[str, Any]]:
        return [{"team": names[i], "rating": self.r[i], "system": "elo"} for i in range(len(names))]


class _OpenSkill:
    def __init__(self, n: int) -> None:
        from openskill.models import PlackettLuce

        self.model = PlackettLuce()
        self.r = [self.model.rating() for _ in range(n)]

    def update(self, a: int, b: int, score_a: float) -> None:
        ranks = [1, 2] if score_a > 0.5 else [2, 1] if score_a < 0.5 else [1, 1]
        (ra,), (rb,) = self.model.rate([[self.r[a]], [self.r[b]]], ranks=ranks)
        self.r[a], self.r[b] = ra, rb

    def table(self, names: list[str]) -> list[dict[str, Any]]:
        return [
            {
                "team": names[i],
                "rating": float(self.r[i].ordinal()),
                "mu": float(self.r[i].mu),
                "sigma": float(self.r[i].sigma),
                "system": "openskill",
            }
            for i in range(len(names))
        ]


def _rater(n: int, system: str):
    if system == "openskill":
        try:
            return _OpenSkill(n)
        except ImportError:
            system = "elo"
    if system == "elo":
        return _Elo(n)
    raise InputError(f"rating system must be 'openskill' or 'elo', got {system!r}")


def _outcomes(boards: Sequence[BoardResult], fmt: str) -> list[float]:
    """Team A's score (1, 0.5, 0) for every game (hand, in the hand format), in order."""
    out = []
    for board in boards:
        for seating, res in board.runs:
            a = seating.a_team
            if fmt == "hand":
                for h in res.hands:
                    d = h.teams[a].points - h.teams[1 - a].points
                    out.append(1.0 if d > 0 else 0.0 if d < 0 else 0.5)
            else:
                out += [0.5 if w < 0 else 1.0 if w == a else 0.0 for w in res.game_winners]
    return out


def run_round_robin(
    teams: Sequence[str | Team],
    boards: int = 2,
    *,
    seed: int = 0,
    rules: RulesConfig | str | dict | None = None,
    fmt: str = "game",
    workers: int = 1,
    progress: bool = False,
    system: str = "openskill",
) -> dict[str, Any]:
    """Every pair of teams plays ``boards`` duplicate boards; ratings, standings and the
    matrix of margins per hand (row team against column team)."""
    cfg = load_rules(rules)
    tt = [_as_team(t) for t in teams]
    names = [team_label(t) for t in tt]
    if len(tt) < 2:
        raise InputError(f"a round robin needs at least 2 teams, got {names}")
    if len(set(names)) != len(names):
        raise InputError(f"team names must be distinct, got {names}")
    pairs = [(i, j) for i in range(len(tt)) for j in range(i + 1, len(tt))]
    jobs = []
    for k, (i, j) in enumerate(pairs):
        jobs += make_jobs(tt[i], tt[j], boards, seed=seed, rules=cfg, fmt=fmt, matchup=k)
    results = play_boards(jobs, workers=workers, progress="round robin" if progress else False)
    by_pair: dict[int, list[BoardResult]] = {}
    for r in results:
        by_pair.setdefault(r.key[0], []).append(r)
    rater = _rater(len(tt), system)
    matrix: list[list[float | None]] = [[None] * len(tt) for _ in tt]
    ci: list[list[list[float] | None]] = [[None] * len(tt) for _ in tt]
    summaries = []
    for k, (i, j) in enumerate(pairs):
        s = summarize(by_pair[k], fmt, (names[i], names[j]), seed=seed)
        summaries.append(s)
        m = s["margin_per_hand"]["mean"]
        matrix[i][j], matrix[j][i] = m, -m
        lo, hi = s["margin_per_hand"]["ci95"]
        ci[i][j], ci[j][i] = [lo, hi], [-hi, -lo]
        for score in _outcomes(by_pair[k], fmt):
            rater.update(i, j, score)
    table = rater.table(names)
    standings = sorted(table, key=lambda r: -r["rating"])
    return {
        "teams": names,
        "format": fmt,
        "boards_per_pair": boards,
        "seed": seed,
        "standings": standings,
        "margin_matrix": matrix,
        "ci95_matrix": ci,
        "matches": summaries,
    }


def run_mixed_table(
    policies: Sequence[PolicySpec],
    against: str | Team,
    boards: int = 2,
    *,
    seed: int = 0,
    rules: RulesConfig | str | dict | None = None,
    fmt: str = "game",
    workers: int = 1,
    progress: bool = False,
) -> dict[str, Any]:
    """Each policy partnered with each (``X+Y``) against the team ``against``: the margin per
    hand of every pairing (rows X, columns Y; mixed teams play four runs per board)."""
    cfg = load_rules(rules)
    if cfg.num_players != 4:
        raise InputError("the mixed-partner table needs partners: the four-player game (rules num_players 4)")
    opp = _as_team(against)
    cells = [(i, j) for i in range(len(policies)) for j in range(i, len(policies))]
    jobs = []
    for k, (i, j) in enumerate(cells):
        jobs += make_jobs((policies[i], policies[j]), opp, boards, seed=seed, rules=cfg, fmt=fmt, matchup=k)
    results = play_boards(jobs, workers=workers, progress="mixed partners" if progress else False)
    by_cell: dict[int, list[BoardResult]] = {}
    for r in results:
        by_cell.setdefault(r.key[0], []).append(r)
    n = len(policies)
    margin: list[list[float | None]] = [[None] * n for _ in range(n)]
    ci: list[list[list[float] | None]] = [[None] * n for _ in range(n)]
    summaries = []
    for k, (i, j) in enumerate(cells):
        label = team_label((policies[i], policies[j]))
        s = summarize(by_cell[k], fmt, (label, team_label(opp)), seed=seed)
        summaries.append(s)
        mm = s["margin_per_hand"]
        margin[i][j] = margin[j][i] = mm["mean"]
        ci[i][j] = ci[j][i] = mm["ci95"]
    return {
        "policies": [spec_name(p) for p in policies],
        "against": team_label(opp),
        "format": fmt,
        "boards_per_cell": boards,
        "seed": seed,
        "margin_matrix": margin,
        "ci95_matrix": ci,
        "matches": summaries,
    }


def run_tournament(
    teams: Sequence[str | Team] | None,
    boards: int = 4,
    *,
    partners: Sequence[PolicySpec] | None = None,
    against: str | Team = "heuristic",
    round_robin: bool = True,
    bracket: bool = True,
    bracket_boards: int | None = None,
    seed: int = 0,
    rules: RulesConfig | str | dict | None = None,
    fmt: str = "game",
    workers: int = 1,
    progress: bool = False,
    on_part: Callable[[str, dict[str, Any]], None] | None = None,
) -> dict[str, Any]:
    """A tournament: the round robin (:func:`run_round_robin`) and the knockout bracket
    (:func:`run_bracket`, ``bracket_boards`` per pairing, default ``boards``) of ``teams``
    (two or more), and the mixed-partner table (:func:`run_mixed_table`) of ``partners``
    against ``against``. Returns ``{"seed", "rules", "round_robin", "bracket",
    "mixed_partners", "seconds"}`` (the parts played); ``on_part(name, result)`` is called as
    each part ends."""
    cfg = load_rules(rules)
    if not teams and not partners:
        raise InputError("a tournament needs teams or partners")
    t0 = time.perf_counter()
    out: dict[str, Any] = {"seed": seed, "rules": cfg.to_dict()}
    common = dict(seed=seed, rules=cfg, fmt=fmt, workers=workers, progress=progress)
    parts: list[tuple[str, Callable[[], dict[str, Any]]]] = []
    if teams and len(teams) >= 2:
        if round_robin:
            parts.append(("round_robin", lambda: run_round_robin(teams, boards, **common)))
        if bracket:
            bb = boards if bracket_boards is None else bracket_boards
            parts.append(("bracket", lambda: run_bracket(teams, bb, **common)))
    if partners:
        parts.append(("mixed_partners", lambda: run_mixed_table(partners, against, boards, **common)))
    for name, play_part in parts:
        out[name] = play_part()
        if on_part is not None:
            on_part(name, out[name])
    out["seconds"] = round(time.perf_counter() - t0, 2)
    return out
