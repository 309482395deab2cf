"""spades matrix: one policy's gauntlet under several rule settings, a table per rules and one
plot (what is played: spades_env.eval.matrix).

spades matrix spades4_v1 --games 100 --out runs/matrix
spades matrix heuristic --rules tournament 'short={"target_score": 300}'
"""

from __future__ import annotations

import argparse
import time
from pathlib import Path
from typing import Any

from spades_env.cli.common import (
    ListOption,
    add_format_and_seed,
    add_matchup_arguments,
    check_policies,
    wrote,
)
from spades_env.core.rules import RULE_VARIANTS, rules_item
from spades_env.core.validate import InputError, check_count, check_int
from spades_env.eval import report
from spades_env.eval.boards import available_cpus
from spades_env.eval.matrix import (
    DEFAULT_RULES,
    matrix_table,
    plot_matrix,
    run_matrix,
)
from spades_env.io.paths import check_output_dir


def register(subparsers: Any) -> None:
    """Add ``matrix`` to the ``spades`` command."""
    p = subparsers.add_parser(
        "matrix",
        help="one policy's gauntlet under several rule settings (a table per rules + one plot)",
        description="POLICY (a shipped agent id, a checkpoint path or a bots name) partnered with itself against each "
        "--opponents team and partnered with --partner against two --partner players, under each "
        "--rules; duplicate deals, 95% CIs; matrix.json and matrix.png with --out.",
    )
    add_matchup_arguments(p, 100, "units per matchup and rules (default 100)")
    p.add_argument(
        "--rules",
        nargs="+",
        action=ListOption,
        default=list(DEFAULT_RULES),
        help="presets, YAML files, variants (" + ", ".join(RULE_VARIANTS) + ") or JSON objects on the tournament "
        f"rules, each optionally LABEL=...; default {' '.join(DEFAULT_RULES)}",
    )
    add_format_and_seed(p)
    p.add_argument(
        "--workers",
        type=int,
        default=None,
        help=f"processes (default: the CPUs this process may use, here {available_cpus()}; the same results)",
    )
    p.add_argument("--max-hands", type=int, default=None, help="override every rules' hand cap per game (0: no cap)")
    p.add_argument("--out", type=Path, default=None, help="folder for matrix.json and matrix.png")
    p.add_argument("--no-progress", action="store_true", help="no progress bar")
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    """Run ``spades matrix``."""
    check_int(args.seed, "--seed", 0)
    workers = available_cpus() if args.workers is None else check_count(args.workers, "--workers")
    check_count(args.games, "--games")
    if args.out is not None:
        check_output_dir(args.out, "--out")
    if not args.opponents and not args.partner:
        raise InputError("nothing to play (no --opponents and no --partner)")
    rules = [rules_item(r) for r in args.rules]
    if args.max_hands is not None:
        check_count(args.max_hands, "--max-hands")
        rules = [(label, r.replace(max_hands=args.max_hands)) for label, r in rules]
    labels = [label for label, _ in rules]
    if len(set(labels)) != len(labels):
        raise InputError(f"--rules: two rules have the same label ({', '.join(labels)})")
    check_policies(args.policy, *args.opponents, *([args.partner] if args.partner else []))
    t0 = time.perf_counter()
    entries = run_matrix(
        args.policy,
        args.games,
        rules,
        opponents=args.opponents,
        partner=args.partner or None,
        fmt=args.fmt,
        seed=args.seed,
        workers=workers,
        progress=not args.no_progress,
    )
    for e in entries:
        print(matrix_table(args.policy, e))
        print()
    seconds = round(time.perf_counter() - t0, 1)
    print(f"({seconds} s)")
    if args.out is not None:
        data = {"policy": args.policy, "seed": args.seed, "games": args.games, "seconds": seconds}
        data["rules"] = entries
        j = report.write_json(args.out / "matrix.json", data)
        png = plot_matrix(entries, args.out / "matrix.png", title=f"rule matrix of {args.policy}")
        print(wrote(j, png))
    return 0
