"""spades eval: team A against team B on duplicate deals.

spades eval heuristic greedy --games 200 --format game --seed 1 --workers 2 --out runs/eval
spades eval heuristic+search:budget=0.1 heuristic --format hand --games 400
"""

from __future__ import annotations

import argparse
from typing import Any

from spades_env.cli.common import (
    add_arena_arguments,
    add_one_at_a_time,
    check_arena_arguments,
    check_team,
    rules_of,
    wrote,
)
from spades_env.core.validate import check_count
from spades_env.eval import report
from spades_env.eval.matchup import run_matchup


def register(subparsers: Any) -> None:
    """Add ``eval`` to the ``spades`` command."""
    p = subparsers.add_parser(
        "eval",
        help="duplicate match of team A against team B",
        description="Team A against team B on duplicate deals (partnerships swapped; four runs per "
        "deal when a team is a mixed pair). A team is a policy name ('heuristic', 'search:budget=0.1', "
        "a shipped agent id such as 'spades4_v1', a checkpoint path) or two joined by '+'. Under "
        "two-player rules (--rules two_player) a team is one policy and the players swap seats.",
    )
    p.add_argument("team_a", help="team A: a policy name, or two joined by '+'")
    p.add_argument("team_b", help="team B: a policy name, or two joined by '+'")
    p.add_argument(
        "--games",
        type=int,
        default=100,
        help="units (hands, games or matches) to play, rounded up to whole duplicate boards (default 100)",
    )
    add_arena_arguments(p)
    add_one_at_a_time(
        p,
        "batched play where every policy has a batched form (checkpoints, heuristic, blind, random: "
        "many games stepped at once in one process, one policy call per step)",
    )
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    """Run ``spades eval``."""
    rules = rules_of(args)
    check_arena_arguments(args)
    check_count(args.games, "--games")
    team_a, team_b = check_team(args.team_a), check_team(args.team_b)
    s = run_matchup(
        team_a,
        team_b,
        args.games,
        rules=rules,
        fmt=args.fmt,
        seed=args.seed,
        workers=args.workers,
        progress=not args.no_progress and "eval",
        batched=False if args.one_at_a_time else None,
    )
    seconds = s.pop("seconds")
    s.update(seed=args.seed, rules=rules.to_dict(), seconds=seconds)
    print(report.eval_table(s))
    if args.out is not None:
        j = report.write_json(args.out / "eval.json", s)
        png = report.plot_matchups([s], args.out / "eval.png", title=f"{s['team_a']} vs {s['team_b']}")
        print(wrote(j, png))
    return 0
