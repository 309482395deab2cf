"""spades crossplay: the partner matrix, every agent partnered with every agent against the
same opponents on duplicate deals (what is played: spades_env.eval.crossplay).

spades crossplay spades4_net_v1 heuristic blind --hands 400 --out runs/crossplay
spades crossplay s0=runs/seeds/s0/final s1=runs/seeds/s1/final --opponents heuristic --games 50
"""

from __future__ import annotations

import argparse
import math
import time
from pathlib import Path
from typing import Any

from spades_env.cli.common import check_policies, wrote
from spades_env.core.rules import RULE_VARIANTS, rules_item
from spades_env.core.validate import InputError, check_count, check_int
from spades_env.eval import report
from spades_env.eval.crossplay import crossplay, crossplay_table, plot_crossplay
from spades_env.eval.match import parse_team
from spades_env.io.paths import check_output_dir


def register(subparsers: Any) -> None:
    """Add ``crossplay`` to the ``spades`` command."""
    p = subparsers.add_parser(
        "crossplay",
        help="partner matrix: every agent partnered with every agent vs the same opponents",
        description="Each pair of AGENTs (itself included) as one team against the --opponents team on the "
        "same duplicate deals; prints the matrix of margins per hand with 95%% CIs and each agent's partner "
        "robustness (its self-play diagonal minus its mean with the other partners); crossplay.json and a "
        "heat map crossplay.png with --out. An AGENT is a shipped agent id, a checkpoint path or a bots "
        "name, optionally LABEL=AGENT.",
    )
    p.add_argument("agents", nargs="+", metavar="AGENT", help="agents (LABEL=AGENT to name one)")
    p.add_argument(
        "--opponents",
        default="heuristic",
        help="the opponent team: a policy or two joined by '+' (default heuristic)",
    )
    p.add_argument(
        "--rules",
        default="tournament",
        help="a preset, a YAML file, a variant ("
        + ", ".join(RULE_VARIANTS)
        + ") or a JSON object on the tournament "
        "rules (default tournament)",
    )
    size = p.add_mutually_exclusive_group()
    size.add_argument("--hands", type=int, default=None, help="single hands per self-play cell (default 400)")
    size.add_argument(
        "--games", type=int, default=None, help="games to 500 per self-play cell instead of hands"
    )
    p.add_argument("--seed", type=int, default=0, help="seed of the deals and policies (default 0)")
    p.add_argument("--workers", type=int, default=None, help="processes (default: 1 batched, else up to 2)")
    p.add_argument("--out", type=Path, default=None, help="folder for crossplay.json and crossplay.png")
    p.add_argument("--no-progress", action="store_true", help="no progress bars")
    p.set_defaults(func=run)


def agent_item(item: str) -> tuple[str, str]:
    """(label, spec) of one AGENT argument: ``LABEL=SPEC`` when the part before ``=`` is a
    plain identifier (``search:samples=50`` is a spec, not a label), else (spec, spec)."""
    label, eq, spec = item.partition("=")
    if eq and label.isidentifier() and spec:
        return label, spec
    return item, item


def run(args: argparse.Namespace) -> int:
    """Run ``spades crossplay``."""
    check_int(args.seed, "--seed", 0)
    if args.workers is not None:
        check_count(args.workers, "--workers")
    if args.out is not None:
        check_output_dir(args.out, "--out")
    if args.games is not None:
        fmt, units = "game", check_count(args.games, "--games")
    else:
        fmt, units = "hand", check_count(400 if args.hands is None else args.hands, "--hands")
    items = [agent_item(a) for a in args.agents]
    labels = [x[0] for x in items]
    if len(set(labels)) != len(labels):
        raise InputError(f"two agents have the same label ({', '.join(labels)}); name them LABEL=AGENT")
    specs = [x[1] for x in items]
    check_policies(*specs, *parse_team(args.opponents))
    label, rules = rules_item(args.rules)
    boards = max(1, math.ceil(units / 2))  # a self-play cell plays each board twice
    t0 = time.perf_counter()
    result = crossplay(
        specs,
        rules=rules,
        opponents=args.opponents,
        boards=boards,
        seed=args.seed,
        fmt=fmt,
        labels=labels,
        workers=args.workers,
        progress=not args.no_progress,
    )
    result["rules_label"] = label
    print(f"rules: {label}")
    print(crossplay_table(result))
    result["seconds"] = round(time.perf_counter() - t0, 1)
    if args.out is not None:
        data = {k: v for k, v in result.items() if k != "cells"}
        data["cells"] = result["cells"]
        j = report.write_json(args.out / "crossplay.json", data)
        png = plot_crossplay(
            result, args.out / "crossplay.png", title=f"partner matrix vs {result['opponents']}, {label}"
        )
        print(wrote(j, png))
    return 0
