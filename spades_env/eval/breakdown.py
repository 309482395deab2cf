"""Where an agent's points go: its hands against an opponent, grouped by what happened in them.

:func:`play_breakdown` plays duplicate games to the rules' target (the agent partnered with
itself against two ``opponent`` players, both seatings of every board, on the batched arena;
in the two-player game the agent heads-up against the opponent, seats swapped) and
:func:`breakdown` groups the hands one of two ways (``by``, :data:`GROUPINGS`):

* ``sets``: every hand in which a team has a contract (a positive non-Nil bid), by the Nils in
  it from that team's side: no Nil, its own team bid Nil (or Blind Nil), the other team did, or
  both did. Per group and per team: contracts, the share of them set, the team's margin per
  hand there, the mean contract and the tricks counted toward it, and the group's part of the
  team's overall set rate (the parts add up to it). The opponents' rows are the same boards
  from their side, so "own Nil" for them is "opponents' Nil" for the agent.
* ``blind-nil``: every hand by the score before it (the agent's team behind by at least the
  rules' Blind Nil deficit, ``blind_nil_min_deficit``, 100 where the rules set none; the
  opponents that far behind; or closer), then by whether each team declared Blind Nil. Per
  group: hands, their share, the agent's margin per hand there, and the group's contribution
  to the margin over all hands (the contributions add up to the overall margin). Under the
  house rule (Blind Nil only for a team 100 or more behind) this shows what the trailing
  team's Blind Nils cost the leader.

:func:`breakdown_table` prints either as a markdown table. ``spades breakdown``
(:mod:`spades_env.cli.breakdown`) is the command.
"""

from __future__ import annotations

import math
from collections import defaultdict
from collections.abc import Sequence
from typing import Any

from spades_env.core import layout as L
from spades_env.core.rules import RulesConfig
from spades_env.core.validate import InputError, check_count
from spades_env.eval.boards import BoardResult
from spades_env.eval.duplicate import run_duplicate
from spades_env.eval.match import HandRecord, TeamHand

GROUPINGS = ("sets", "blind-nil")
"""The ways :func:`breakdown` groups hands (module docstring)."""

NIL_GROUPS = ("no Nil", "own Nil", "opponents' Nil", "both Nil")
"""The Nil situations of a contract, from the contracting team's side, in table order."""

FIELDS = ("contracts", "sets", "margin", "contract", "tricks")
"""What :func:`set_breakdown` sums per group: contracts, sets, the team's margin (its points
minus the other team's), its contracts and the tricks counted toward them."""

SIDES = ("agent", "opponents")


def play_breakdown(
    agent: Any,
    opponent: Any,
    games: int,
    *,
    rules: RulesConfig,
    seed: int = 0,
    workers: int = 1,
    progress: bool | str = False,
) -> list[BoardResult]:
    """About ``games`` duplicate games (``ceil(games / 2)`` boards, both seatings of each) of
    ``agent`` partnered with itself against two ``opponent`` players (heads-up in the
    two-player game), played batched; the results in board order."""
    check_count(games, "games")
    return run_duplicate(
        (agent, agent),
        (opponent, opponent),
        max(1, math.ceil(games / 2)),
        seed=seed,
        rules=rules,
        workers=workers,
        progress=progress,
        batched=True,
    )


# ---- sets: contracts by who bid Nil ----------------------------------------------------------
def nil_group(team: TeamHand, other: TeamHand) -> str:
    """The Nil situation of ``team``'s contract: one of :data:`NIL_GROUPS`."""
    own = team.nil_bids + team.blind_bids > 0
    opp = other.nil_bids + other.blind_bids > 0
    return NIL_GROUPS[own + 2 * opp]


def set_breakdown(results: Sequence[BoardResult]) -> dict[str, dict[str, dict[str, int]]]:
    """``side ("agent" / "opponents") -> group -> field -> sum`` (:data:`FIELDS`) over every
    run's hands in which that side's team has a contract; team A of the duplicate runs is the
    agent's."""
    out: dict[str, dict[str, dict[str, int]]] = {
        side: defaultdict(lambda: dict.fromkeys(FIELDS, 0)) for side in SIDES
    }
    for board in results:
        for seating, run in board.runs:
            a = seating.a_team
            for h in run.hands:
                for side, team in zip(SIDES, (a, 1 - a), strict=True):
                    t, o = h.teams[team], h.teams[1 - team]
                    if t.contract <= 0:
                        continue
                    g = out[side][nil_group(t, o)]
                    g["contracts"] += 1
                    g["sets"] += int(t.set)
                    g["margin"] += t.points - o.points
                    g["contract"] += t.contract
                    g["tricks"] += t.contract_tricks
    return {side: dict(groups) for side, groups in out.items()}


def set_table(groups: dict[str, dict[str, dict[str, int]]]) -> str:
    """A markdown table of :func:`set_breakdown`: one row per side and group, then each side's
    total (a side without a contract has no rows)."""
    lines = [
        "| team | Nil in the hand | contracts | set | margin/hand | contract | tricks toward it | part of the set rate |",
        "|---|---|---:|---:|---:|---:|---:|---:|",
    ]
    for side, by_group in groups.items():
        n = sum(g["contracts"] for g in by_group.values())
        if n == 0:
            continue
        for name in (*NIL_GROUPS, "all"):
            if name == "all":
                g = {f: sum(x[f] for x in by_group.values()) for f in FIELDS}
            elif name in by_group:
                g = by_group[name]
            else:
                continue
            c = g["contracts"]
            lines.append(
                f"| {side} | {name} | {c} | {g['sets'] / c:.1%} | {g['margin'] / c:+.1f} | "
                f"{g['contract'] / c:.2f} | {g['tricks'] / c:.2f} | {g['sets'] / n:.2%} |"
            )
    return "\n".join(lines)


# ---- blind-nil: hands by the score before them and who declared Blind Nil ---------------------
def score_situation(gap: int, deficit: int = 100) -> str:
    """The score situation before a hand from the agent's side (``gap`` = agent - opponents):
    either team at least ``deficit`` behind, or closer."""
    if gap <= -deficit:
        return f"agent {deficit}+ behind"
    if gap >= deficit:
        return f"opponents {deficit}+ behind"
    return f"within {deficit}"


def declared_blind_nil(hand: HandRecord, team: int) -> bool:
    """Whether absolute team ``team`` (0 N-S, 1 E-W; in the two-player game seat 0 or 1)
    declared Blind Nil in ``hand``."""
    return any(hand.bids[s] == L.BID_BLIND_NIL for s in range(team, len(hand.bids), 2))


def blind_nil_breakdown(results: Sequence[BoardResult], deficit: int = 100) -> dict[tuple[str, str, str], list[float]]:
    """``(situation, agent BN, opponents BN) -> [hands, margin sum]`` over every run's hands
    (the situation by :func:`score_situation` with ``deficit``, the score rebuilt game by game
    from the hands' points)."""
    out: dict[tuple[str, str, str], list[float]] = defaultdict(lambda: [0, 0.0])
    for board in results:
        for seating, run in board.runs:
            a = seating.a_team
            scores: dict[int, list[int]] = {}
            for h in run.hands:
                sc = scores.setdefault(h.game, [0, 0])
                key = (
                    score_situation(sc[a] - sc[1 - a], deficit),
                    "agent BN" if declared_blind_nil(h, a) else "-",
                    "opponents BN" if declared_blind_nil(h, 1 - a) else "-",
                )
                out[key][0] += 1
                out[key][1] += h.teams[a].points - h.teams[1 - a].points
                sc[0] += h.teams[0].points
                sc[1] += h.teams[1].points
    return dict(out)


def blind_nil_table(groups: dict[tuple[str, str, str], list[float]]) -> str:
    """The hands and overall margin, then a markdown table of :func:`blind_nil_breakdown`."""
    n = sum(c for c, _ in groups.values())
    total = sum(m for _, m in groups.values())
    lines = [
        f"{n} hands, margin {total / max(n, 1):+.1f} a hand",
        "",
        "| score before the hand | agent | opponents | hands | share | margin/hand | contribution/hand |",
        "|---|---|---|---:|---:|---:|---:|",
    ]
    for key in sorted(groups):
        c, m = groups[key]
        lines.append(f"| {key[0]} | {key[1]} | {key[2]} | {c} | {c / n:.1%} | {m / c:+.1f} | {m / n:+.2f} |")
    return "\n".join(lines)


# ---- either ----------------------------------------------------------------------------------
def _check_by(by: str) -> None:
    if by not in GROUPINGS:
        raise InputError(f"by must be one of {', '.join(GROUPINGS)}, got {by!r}")


def breakdown(results: Sequence[BoardResult], by: str = "sets", rules: RulesConfig | None = None) -> dict[Any, Any]:
    """The hands of ``results`` grouped ``by`` ``"sets"`` (:func:`set_breakdown`) or
    ``"blind-nil"`` (:func:`blind_nil_breakdown`, with the deficit of ``rules``)."""
    _check_by(by)
    if by == "sets":
        return set_breakdown(results)
    deficit = (rules.blind_nil_min_deficit if rules is not None else 0) or 100
    return blind_nil_breakdown(results, deficit)


def breakdown_table(groups: dict[Any, Any], by: str = "sets") -> str:
    """The markdown table of :func:`breakdown`'s groups."""
    _check_by(by)
    return set_table(groups) if by == "sets" else blind_nil_table(groups)


__all__ = [
    "FIELDS",
    "GROUPINGS",
    "NIL_GROUPS",
    "blind_nil_breakdown",
    "blind_nil_table",
    "breakdown",
    "breakdown_table",
    "declared_blind_nil",
    "nil_group",
    "play_breakdown",
    "score_situation",
    "set_breakdown",
    "set_table",
]
