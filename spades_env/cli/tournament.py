"""spades tournament: a knockout bracket, round-robin ratings and a mixed-partner table.

spades tournament --teams random greedy heuristic --boards 4 --seed 1 --out runs/tour
spades tournament --partners greedy heuristic --against heuristic --boards 4
spades tournament --quick          # the short baseline tournament
"""

from __future__ import annotations

import argparse
from typing import Any

from spades_env.cli.common import (
    ListOption,
    add_arena_arguments,
    check_arena_arguments,
    check_policies,
    check_team,
    rules_of,
)
from spades_env.core.validate import InputError, check_count
from spades_env.eval import report
from spades_env.eval.matchup import default_workers
from spades_env.eval.tournament import QUICK, QUICK_TEAMS, run_tournament

TABLES = {
    "round_robin": report.round_robin_table,
    "bracket": report.bracket_table,
    "mixed_partners": report.mixed_table,
}


def register(subparsers: Any) -> None:
    """Add ``tournament`` to the ``spades`` command."""
    t = subparsers.add_parser(
        "tournament",
        help="bracket with byes, round-robin ratings, mixed-partner table",
        description="A knockout bracket (byes drawn from the seed) and round-robin OpenSkill ratings of "
        "--teams, and/or a mixed-partner table of --partners against --against.",
    )
    t.add_argument("--teams", nargs="+", action=ListOption, default=None, help="teams (a name, or two names joined by '+')")
    t.add_argument("--boards", type=int, default=4, help="duplicate boards per pairing (default 4)")
    t.add_argument("--no-bracket", action="store_true", help="skip the knockout bracket")
    t.add_argument("--no-round-robin", action="store_true", help="skip the round robin")
    t.add_argument("--partners", nargs="+", action=ListOption, default=None, help="policies for the mixed-partner table")
    t.add_argument("--against", default="heuristic", help="opponent team of the mixed-partner table")
    t.add_argument(
        "--quick",
        action="store_true",
        help=f"the short baseline tournament: teams {' '.join(QUICK_TEAMS)}, single hands, "
        f"{QUICK['boards']} boards per pair",
    )
    add_arena_arguments(t)
    t.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    """Run ``spades tournament``."""
    rules = rules_of(args)
    teams = args.teams
    boards, fmt, bracket_boards = args.boards, args.fmt, args.boards
    if args.quick:
        teams = teams or list(QUICK_TEAMS)
        boards, fmt, bracket_boards = QUICK["boards"], QUICK["fmt"], QUICK["bracket_boards"]
    if not teams and not args.partners:
        raise InputError("give --teams, --partners or --quick")
    check_arena_arguments(args)
    check_count(boards, "--boards")
    if teams is not None and len(teams) < 2:
        raise InputError(f"--teams needs at least 2 teams for a bracket and a round robin, got {teams}")
    for team in teams or []:
        check_team(team)
    check_policies(*(args.partners or []))
    if args.partners:
        check_team(args.against)
    out = run_tournament(
        teams,
        boards,
        partners=args.partners,
        against=args.against,
        round_robin=not args.no_round_robin,
        bracket=not args.no_bracket,
        bracket_boards=bracket_boards,
        seed=args.seed,
        rules=rules,
        fmt=fmt,
        workers=default_workers(False) if args.workers is None else args.workers,
        progress=not args.no_progress,
        on_part=lambda name, result: print(TABLES[name](result)),
    )
    print(f"({out['seconds']} s)")
    if args.out is not None:
        j = report.write_json(args.out / "tournament.json", out)
        png = report.plot_tournament(
            out.get("round_robin"),
            args.out / "tournament.png",
            mixed=out.get("mixed_partners"),
            bracket=out.get("bracket"),
        )
        print(f"wrote {j}" + (f" and {png}" if png else ""))
    return 0
