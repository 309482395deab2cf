"""``spades eval``, ``spades tournament`` and ``spades gauntlet``.

spades eval heuristic greedy --games 200 --format game --seed 1 --workers 2 --out runs/eval
spades eval heuristic+search:budget=0.1 heuristic --format hand --games 400
spades tournament --teams random greedy heuristic --boards 4 --seed 1 --out runs/tour
spades tournament --partners greedy heuristic --against heuristic --boards 4
spades tournament --quick          # the short baseline tournament
spades gauntlet checkpoints/spades_ppo_v1 --games 200 --out runs/gauntlet   # the README's main job
"""

from __future__ import annotations

import argparse
import math
import os
import time
from pathlib import Path
from typing import Any

from spades_env.core.rules import load_rules
from spades_env.core.validate import InputError, check_count, check_int
from spades_env.eval import report
from spades_env.eval.batched import specs_have_batched_forms
from spades_env.eval.duplicate import run_duplicate, seatings
from spades_env.eval.gauntlet import add_matchup_arguments, gauntlet_table, run_gauntlet
from spades_env.eval.match import FORMATS, check_policy_name, parse_team, team_label
from spades_env.eval.stats import summarize
from spades_env.eval.tournament import run_bracket, run_mixed_table, run_round_robin
from spades_env.io.paths import check_output_dir

# The README's short tournament of the baselines: single hands, duplicate, both cores; five
# teams (one a mixed pair), so the bracket has byes.
QUICK_TEAMS = ("random", "greedy", "heuristic", "greedy+heuristic", "search:samples=100")
QUICK = {"boards": 48, "fmt": "hand", "bracket_boards": 24}


def _default_workers() -> int:
    return max(1, min(2, os.cpu_count() or 1))


def _workers(args: argparse.Namespace, batched: bool) -> int:
    """``--workers``, or its default: one process for batched play (the batch is the
    parallelism; on this 2-core machine a second batched process was slower), up to 2 else."""
    if args.workers is not None:
        return args.workers
    return 1 if batched else _default_workers()


def _rules(args: argparse.Namespace):
    rules = load_rules(args.rules)
    if args.max_hands is not None:
        rules = rules.replace(max_hands=args.max_hands)
    if args.target is not None:
        rules = rules.replace(target_score=args.target)
    return rules


def _check_common(args: argparse.Namespace) -> None:
    """Check the options every arena command has, before any play (a bad one: InputError)."""
    check_int(args.seed, "--seed", 0)
    if args.workers is not None:
        check_count(args.workers, "--workers")
    if args.out is not None:
        check_output_dir(args.out, "--out")


def _check_team(text: str) -> tuple[str, str]:
    """A team parsed, with both its policy names checked (nothing is loaded or played)."""
    team = parse_team(text)
    for spec in team:
        check_policy_name(spec)
    return team


def _common(p: argparse.ArgumentParser) -> None:
    p.add_argument(
        "--format", dest="fmt", choices=FORMATS, default="game", help="unit of play (default game)"
    )
    p.add_argument("--seed", type=int, default=0, help="seed of the deals and policies (default 0)")
    p.add_argument(
        "--workers",
        type=int,
        default=None,
        help="processes (default: 1 for batched play, up to 2 for one game at a time)",
    )
    p.add_argument("--out", type=Path, default=None, help="folder for the JSON report and PNG plot")
    p.add_argument(
        "--rules", default="tournament", help="rules preset name or YAML file (default tournament)"
    )
    p.add_argument("--max-hands", type=int, default=None, help="override the rules' hand cap per game")
    p.add_argument("--target", type=int, default=None, help="override the rules' target score")
    p.add_argument("--no-progress", action="store_true", help="no progress bar")


def _one_at_a_time(p: argparse.ArgumentParser, default_note: str) -> None:
    p.add_argument(
        "--one-at-a-time",
        action="store_true",
        help="play one game at a time on --workers processes (the same results) instead of the default "
        f"{default_note}",
    )


def register(subparsers: Any) -> None:
    """Add ``eval`` and ``tournament`` to the ``spades`` command."""
    p = subparsers.add_parser(
        "eval",
        help="duplicate match of team A against team B",
        description="Team A against team B on duplicate deals (partnerships swapped; four runs per "
        "deal when a team is a mixed pair). A team is a policy name ('heuristic', "
        "'search:budget=0.1', a checkpoint path) or two joined by '+'. Under two-player rules "
        "(--rules two_player) a team is one policy and the players swap seats.",
    )
    p.add_argument("team_a")
    p.add_argument("team_b")
    p.add_argument(
        "--games",
        type=int,
        default=100,
        help="units (hands, games or matches) to play, rounded up to whole duplicate boards (default 100)",
    )
    _common(p)
    _one_at_a_time(
        p,
        "batched play where every policy has a batched form (checkpoints, heuristic, blind, random: "
        "many games stepped at once in one process, one policy call per step)",
    )
    p.set_defaults(func=cmd_eval)

    t = subparsers.add_parser(
        "tournament",
        help="bracket with byes, round-robin ratings, mixed-partner table",
        description="A knockout bracket (byes drawn from the seed) and round-robin OpenSkill ratings of "
        "--teams, and/or a mixed-partner table of --partners against --against.",
    )
    t.add_argument("--teams", nargs="+", default=None, help="teams (a name, or two names joined by '+')")
    t.add_argument("--boards", type=int, default=4, help="duplicate boards per pairing (default 4)")
    t.add_argument("--no-bracket", action="store_true", help="skip the knockout bracket")
    t.add_argument("--no-round-robin", action="store_true", help="skip the round robin")
    t.add_argument("--partners", nargs="+", default=None, help="policies for the mixed-partner table")
    t.add_argument("--against", default="heuristic", help="opponent team of the mixed-partner table")
    t.add_argument(
        "--quick",
        action="store_true",
        help=f"the short baseline tournament: teams {' '.join(QUICK_TEAMS)}, single hands, "
        f"{QUICK['boards']} boards per pair",
    )
    _common(t)
    t.set_defaults(func=cmd_tournament)

    g = subparsers.add_parser(
        "gauntlet",
        help="one policy against the baselines (table + plot)",
        description="POLICY (a checkpoint path or a bots name) partnered with itself against each "
        "--opponents team, and partnered with --partner against two --partner players; duplicate deals, "
        "95% CIs, one table row per matchup, gauntlet.json and gauntlet.png with --out.",
    )
    add_matchup_arguments(g, 200, "units per matchup, rounded up to whole boards")
    _common(g)
    _one_at_a_time(
        g,
        "batched play (many games stepped at once in one process, one call per step for each policy with a "
        "batched form, per-game calls for the others)",
    )
    g.set_defaults(func=cmd_gauntlet)


def cmd_eval(args: argparse.Namespace) -> int:
    """Run ``spades eval``."""
    rules = _rules(args)
    _check_common(args)
    check_count(args.games, "--games")
    team_a, team_b = _check_team(args.team_a), _check_team(args.team_b)
    runs = len(seatings(team_a, team_b, num_players=rules.num_players))
    boards = max(1, math.ceil(args.games / runs))
    batched = not args.one_at_a_time and specs_have_batched_forms([*team_a, *team_b], rules)
    t0 = time.perf_counter()
    results = run_duplicate(
        team_a,
        team_b,
        boards,
        seed=args.seed,
        rules=rules,
        fmt=args.fmt,
        workers=_workers(args, batched),
        progress=not args.no_progress and "eval",
        batched=batched,
    )
    s = summarize(results, args.fmt, (team_label(team_a), team_label(team_b)), seed=args.seed)
    s.update(seed=args.seed, rules=rules.to_dict(), seconds=round(time.perf_counter() - t0, 2))
    print(report.eval_table(s))
    if args.out is not None:
        j = report.write_json(args.out / "eval.json", s)
        png = report.plot_matchups([s], args.out / "eval.png", title=f"{s['team_a']} vs {s['team_b']}")
        print(f"wrote {j}" + (f" and {png}" if png else " (no matplotlib: no plot)"))
    return 0


def cmd_tournament(args: argparse.Namespace) -> int:
    """Run ``spades tournament``."""
    rules = _rules(args)
    teams = args.teams
    boards = args.boards
    fmt = args.fmt
    bracket_boards = boards
    if args.quick:
        teams = teams or list(QUICK_TEAMS)
        boards, fmt, bracket_boards = QUICK["boards"], QUICK["fmt"], QUICK["bracket_boards"]
    if not teams and not args.partners:
        raise InputError("give --teams, --partners or --quick")
    _check_common(args)
    check_count(boards, "--boards")
    if teams is not None and len(teams) < 2:
        raise InputError(f"--teams needs at least 2 teams for a bracket and a round robin, got {teams}")
    for t in teams or []:
        _check_team(t)
    for p in args.partners or []:
        check_policy_name(p)
    if args.partners:
        _check_team(args.against)
    progress = not args.no_progress
    t0 = time.perf_counter()
    out: dict[str, Any] = {"seed": args.seed, "rules": rules.to_dict()}
    rr = None
    if teams and len(teams) >= 2:
        common = dict(seed=args.seed, rules=rules, fmt=fmt, workers=_workers(args, False), progress=progress)
        if not args.no_round_robin:
            rr = run_round_robin(teams, boards, **common)
            out["round_robin"] = rr
            print(report.round_robin_table(rr))
        if not args.no_bracket:
            br = run_bracket(teams, bracket_boards, **common)
            out["bracket"] = br
            print(report.bracket_table(br))
    mx = None
    if args.partners:
        mx = run_mixed_table(
            args.partners,
            args.against,
            boards,
            seed=args.seed,
            rules=rules,
            fmt=fmt,
            workers=_workers(args, False),
            progress=progress,
        )
        out["mixed_partners"] = mx
        print(report.mixed_table(mx))
    out["seconds"] = round(time.perf_counter() - t0, 2)
    print(f"({out['seconds']} s)")
    if args.out is not None:
        j = report.write_json(args.out / "tournament.json", out)
        png = report.plot_tournament(rr, args.out / "tournament.png", mixed=mx, bracket=out.get("bracket"))
        print(f"wrote {j}" + (f" and {png}" if png else ""))
    return 0


def cmd_gauntlet(args: argparse.Namespace) -> int:
    """Run ``spades gauntlet``."""
    rules = _rules(args)
    _check_common(args)
    if args.games < 1:
        raise InputError(f"--games must be at least 1 (got {args.games})")
    if not args.opponents and not args.partner:
        raise InputError("nothing to play (no --opponents and no --partner)")
    for spec in [args.policy, *args.opponents, *([args.partner] if args.partner else [])]:
        check_policy_name(spec)
    t0 = time.perf_counter()
    summaries = run_gauntlet(
        args.policy,
        args.games,
        rules=rules,
        opponents=args.opponents,
        partner=args.partner or None,
        fmt=args.fmt,
        seed=args.seed,
        workers=_workers(args, not args.one_at_a_time),
        progress=not args.no_progress,
        batched=not args.one_at_a_time,
    )
    seconds = round(time.perf_counter() - t0, 1)
    print(gauntlet_table(args.policy, summaries))
    print(f"({seconds} s)")
    if args.out is not None:
        data = {"policy": args.policy, "seed": args.seed, "rules": rules.to_dict(), "seconds": seconds}
        data["matchups"] = summaries
        j = report.write_json(args.out / "gauntlet.json", data)
        png = report.plot_matchups(summaries, args.out / "gauntlet.png", title=f"gauntlet of {args.policy}")
        print(f"wrote {j}" + (f" and {png}" if png else " (no matplotlib: no plot)"))
    return 0
