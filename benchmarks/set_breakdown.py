"""Where a policy's sets come from: its team's contracts grouped by who bid Nil in the hand.

    .venv/bin/python benchmarks/set_breakdown.py checkpoints/spades_family_v10
        [--opponent heuristic] [--rules house] [--boards 200] [--seed 0]

``--rules`` takes what ``spades matrix --rules`` takes: a preset, a YAML file, ``no_blind``
(the tournament rules with Blind Nil off) or a JSON object of changes to the tournament rules.

Plays duplicate games to the rules' target (the policy partnered with itself against two
``--opponent`` players, both seatings of every board, on the batched arena) and sorts every
hand in which a team has a contract (a positive non-Nil bid) by the Nils in it, from that
team's side: no Nil, its own team bid Nil (or Blind Nil), the other team did, or both did.
Per group and per team: contracts, the share of them set, the team's margin per hand there,
the mean contract and the tricks counted toward it, and the group's part of the team's overall
set rate (the parts add up to it). The opponents' rows are the same boards from their side, so
"own Nil" for them is "opponents' Nil" for the policy.
"""

from __future__ import annotations

import argparse
import sys
from collections import defaultdict
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from spades_env.core.validate import InputError  # noqa: E402
from spades_env.eval.duplicate import run_duplicate  # noqa: E402
from spades_env.eval.match import TeamHand  # noqa: E402
from spades_env.eval.matrix import matrix_rules  # noqa: E402

GROUPS = ("no Nil", "own Nil", "opponents' Nil", "both Nil")
"""The Nil situations of a contract, from the contracting team's side, in table order."""

FIELDS = ("contracts", "sets", "margin", "contract", "tricks")
"""What :func:`breakdown` sums per group: contracts, sets, the team's margin (its points minus
the other team's), its contracts and the tricks counted toward them."""


def nil_group(team: TeamHand, other: TeamHand) -> str:
    """The Nil situation of ``team``'s contract: one of :data:`GROUPS`."""
    own = team.nil_bids + team.blind_bids > 0
    opp = other.nil_bids + other.blind_bids > 0
    return GROUPS[own + 2 * opp]


def breakdown(results) -> dict[str, dict[str, dict[str, int]]]:
    """``side ("policy" / "opponents") -> group -> field -> sum`` (:data:`FIELDS`) over every
    run's hands in which that side's team has a contract; team A of the duplicate runs is the
    policy's."""
    out: dict[str, dict[str, dict[str, int]]] = {
        side: defaultdict(lambda: dict.fromkeys(FIELDS, 0)) for side in ("policy", "opponents")
    }
    for board in results:
        for seating, run in board.runs:
            a = seating.a_team
            for h in run.hands:
                for side, team in (("policy", a), ("opponents", 1 - a)):
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


def table(groups: dict[str, dict[str, dict[str, int]]]) -> str:
    """A markdown table of :func:`breakdown`: one row per side and group, then each side's total."""
    lines = [
        "| team | Nil in the hand | contracts | set | margin/hand | contract | tricks toward it | part of the set rate |",
        "|---|---|---:|---:|---:|---:|---:|---:|",
    ]
    for side, by_group in groups.items():
        n = sum(g["contracts"] for g in by_group.values())
        for name in (*GROUPS, "all"):
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


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("policy", help="a checkpoint folder or any policy name")
    p.add_argument("--opponent", default="heuristic")
    p.add_argument("--rules", default="house")
    p.add_argument("--boards", type=int, default=200)
    p.add_argument("--seed", type=int, default=0)
    args = p.parse_args()
    if args.boards < 1:
        p.error(f"--boards must be at least 1, got {args.boards}")
    try:
        label, rules = matrix_rules(args.rules)
    except InputError as exc:
        p.error(str(exc))
    res = run_duplicate(
        (args.policy, args.policy),
        (args.opponent, args.opponent),
        args.boards,
        seed=args.seed,
        rules=rules,
        batched=True,
        progress="boards",
    )
    print(f"\n{args.policy} + itself vs {args.opponent} x2, {label} rules, {args.boards} boards, seed {args.seed}\n")
    print(table(breakdown(res)))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
