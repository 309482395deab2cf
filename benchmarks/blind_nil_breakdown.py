"""Where a policy's margin goes, hand by hand, by the score before the hand and who declared Blind Nil.

    .venv/bin/python benchmarks/blind_nil_breakdown.py checkpoints/spades_family_v5
        [--opponent heuristic] [--rules house] [--boards 200] [--seed 0]

Plays duplicate games to the rules' target (the policy partnered with itself against two
``--opponent`` players, both seatings of every board, on the batched arena) and sorts every hand
by the score before it: the policy's team behind by at least the rules' Blind Nil deficit
(``blind_nil_min_deficit``; 100 where the rules set none), the opponents that far behind, or
closer; then by whether each team declared Blind Nil. Per group: hands, their share, the
policy's margin per hand there, and the group's contribution to the margin over all hands (the
contributions add up to the overall margin). Under the house rule (Blind Nil only for a team
100 or more behind) this shows what the trailing team's Blind Nils cost the leader.
"""

from __future__ import annotations

import argparse
import sys
from collections import defaultdict
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from spades_env.core import layout as L  # noqa: E402
from spades_env.core.rules import load_rules  # noqa: E402
from spades_env.eval.duplicate import run_duplicate  # noqa: E402
from spades_env.eval.match import HandRecord  # noqa: E402


def situation(gap: int, deficit: int = 100) -> str:
    """The score situation before a hand from the policy's side (``gap`` = policy - opponents):
    either team at least ``deficit`` behind, or closer."""
    if gap <= -deficit:
        return f"policy {deficit}+ behind"
    if gap >= deficit:
        return f"opponents {deficit}+ behind"
    return f"within {deficit}"


def declared_blind_nil(hand: HandRecord, team: int) -> bool:
    """Whether absolute team ``team`` (0 N-S, 1 E-W; in the two-player game seat 0 or 1)
    declared Blind Nil in ``hand``."""
    return any(hand.bids[s] == L.BID_BLIND_NIL for s in range(team, len(hand.bids), 2))


def breakdown(results, deficit: int = 100) -> dict[tuple[str, str, str], list[float]]:
    """``(situation, policy BN, opponents BN) -> [hands, margin sum]`` over every run's hands
    (the situation by :func:`situation` with ``deficit``)."""
    out: dict[tuple[str, str, str], list[float]] = defaultdict(lambda: [0, 0.0])
    for board in results:
        for seating, run in board.runs:
            a = seating.a_team
            scores: dict[int, list[int]] = {}
            for h in run.hands:
                sc = scores.setdefault(h.game, [0, 0])
                key = (
                    situation(sc[a] - sc[1 - a], deficit),
                    "policy BN" if declared_blind_nil(h, a) else "-",
                    "opponents BN" if declared_blind_nil(h, 1 - a) else "-",
                )
                out[key][0] += 1
                out[key][1] += h.teams[a].points - h.teams[1 - a].points
                sc[0] += h.teams[0].points
                sc[1] += h.teams[1].points
    return dict(out)


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("policy", help="a checkpoint folder or any policy name")
    p.add_argument("--opponent", default="heuristic")
    p.add_argument("--rules", default="house")
    p.add_argument("--boards", type=int, default=200)
    p.add_argument("--seed", type=int, default=0)
    args = p.parse_args()
    res = run_duplicate(
        (args.policy, args.policy),
        (args.opponent, args.opponent),
        args.boards,
        seed=args.seed,
        rules=args.rules,
        batched=True,
        progress="boards",
    )
    groups = breakdown(res, load_rules(args.rules).blind_nil_min_deficit or 100)
    n = sum(c for c, _ in groups.values())
    total = sum(m for _, m in groups.values())
    print(f"\n{args.policy} + itself vs {args.opponent} x2, {args.rules} rules, {args.boards} boards, seed {args.seed}")
    print(f"{n} hands, margin {total / n:+.1f} a hand\n")
    print("| score before the hand | policy | opponents | hands | share | margin/hand | contribution/hand |")
    print("|---|---|---|---:|---:|---:|---:|")
    for key in sorted(groups):
        c, m = groups[key]
        print(f"| {key[0]} | {key[1]} | {key[2]} | {c} | {c / n:.1%} | {m / c:+.1f} | {m / n:+.2f} |")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
