"""spades gauntlet: one policy against the baselines (a table and a plot).

spades gauntlet spades4_v1 --games 200 --out runs/gauntlet
"""

from __future__ import annotations

import argparse
import time
from typing import Any

from spades_env.cli.common import (
    add_arena_arguments,
    add_matchup_arguments,
    add_one_at_a_time,
    check_arena_arguments,
    check_policies,
    rules_of,
    wrote,
)
from spades_env.core.validate import InputError
from spades_env.eval import report
from spades_env.eval.gauntlet import gauntlet_table, run_gauntlet
from spades_env.eval.matchup import default_workers


def register(subparsers: Any) -> None:
    """Add ``gauntlet`` to the ``spades`` command."""
    g = subparsers.add_parser(
        "gauntlet",
        help="one policy against the baselines (table + plot)",
        description="POLICY (a shipped agent id, a checkpoint path or a bots name) partnered with itself against each "
        "--opponents team, and partnered with --partner against two --partner players; duplicate deals, "
        "95% CIs, one table row per matchup, gauntlet.json and gauntlet.png with --out.",
    )
    add_matchup_arguments(g, 200, "units per matchup, rounded up to whole boards (default 200)")
    add_arena_arguments(g)
    add_one_at_a_time(
        g,
        "batched play (many games stepped at once in one process, one call per step for each policy with a "
        "batched form, per-game calls for the others)",
    )
    g.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    """Run ``spades gauntlet``."""
    rules = rules_of(args)
    check_arena_arguments(args)
    if args.games < 1:
        raise InputError(f"--games must be at least 1 (got {args.games})")
    if not args.opponents and not args.partner:
        raise InputError("nothing to play (no --opponents and no --partner)")
    check_policies(args.policy, *args.opponents, *([args.partner] if args.partner else []))
    batched = not args.one_at_a_time
    t0 = time.perf_counter()
    summaries = run_gauntlet(
        args.policy,
        args.games,
        rules=rules,
        opponents=args.opponents,
        partner=args.partner or None,
        fmt=args.fmt,
        seed=args.seed,
        workers=default_workers(batched) if args.workers is None else args.workers,
        progress=not args.no_progress,
        batched=batched,
    )
    seconds = round(time.perf_counter() - t0, 1)
    print(gauntlet_table(args.policy, summaries))
    print(f"({seconds} s)")
    if args.out is not None:
        data = {"policy": args.policy, "seed": args.seed, "rules": rules.to_dict(), "seconds": seconds}
        data["matchups"] = summaries
        j = report.write_json(args.out / "gauntlet.json", data)
        png = report.plot_matchups(summaries, args.out / "gauntlet.png", title=f"gauntlet of {args.policy}")
        print(wrote(j, png))
    return 0
