"""``spades breakdown``: where an agent's points go against an opponent, hand by hand.

spades breakdown spades4_v1                                   # contracts by who bid Nil, house rules
spades breakdown checkpoints/x --opponents heuristic blind --rules house no_blind --games 400
spades breakdown spades4_v1 --by blind-nil                    # hands by score and who declared Blind Nil

The agent (a shipped agent id, a checkpoint path or a bots name) partnered with itself plays
duplicate games against two players of each --opponents name under each --rules (what spades
matrix --rules takes), and one table per rules and opponent groups the hands (--by sets, the
default: each team's contracts by who bid Nil in the hand, with the set rate, margin, contract
and tricks per group and each group's part of the set rate; --by blind-nil: every hand by the
score before it and by who declared Blind Nil, with each group's contribution to the margin).
The logic is spades_env.eval.breakdown's.
"""

from __future__ import annotations

import argparse
from typing import Any

from spades_env.cli.common import ListOption
from spades_env.core.rules import RULE_VARIANTS, rules_item
from spades_env.core.validate import InputError, check_count, check_int
from spades_env.eval.breakdown import GROUPINGS, breakdown, breakdown_table, play_breakdown
from spades_env.policies.registry import check_policy_name

DEFAULT_OPPONENTS = ("heuristic",)
DEFAULT_RULES = ("house",)
DEFAULT_GAMES = 400


def run(args: argparse.Namespace) -> int:
    """Run ``spades breakdown``."""
    check_count(args.games, "--games")
    check_int(args.seed, "--seed", 0)
    workers = check_count(args.workers, "--workers")
    if not args.opponents:
        raise InputError("--opponents: name at least one opponent")
    rules = [rules_item(r) for r in args.rules]  # every item checked before any play
    for spec in (args.agent, *args.opponents):
        check_policy_name(spec)
    boards = max(1, -(-args.games // 2))
    for label, r in rules:
        for opponent in args.opponents:
            res = play_breakdown(
                args.agent,
                opponent,
                args.games,
                rules=r,
                seed=args.seed,
                workers=workers,
                progress=f"vs {opponent}, {label}" if not args.no_progress else False,
            )
            who = f"{args.agent} + itself vs {opponent} x2" if r.num_players == 4 else f"{args.agent} vs {opponent}"
            print(f"\n{who}, {label} rules, {boards} boards ({2 * boards} games), seed {args.seed}\n")
            print(breakdown_table(breakdown(res, args.by, r), args.by), flush=True)
    return 0


def register(sub: Any) -> None:
    """Add ``breakdown`` to the ``spades`` command."""
    p = sub.add_parser(
        "breakdown",
        help="where an agent's points go against an opponent: hands grouped by Nils or by Blind Nil",
        description=__doc__.split("\n\n")[2].replace("\n", " ") if __doc__ else None,
    )
    p.add_argument("agent", help="a shipped agent id, a checkpoint path or a bots name")
    p.add_argument(
        "--opponents",
        nargs="+",
        action=ListOption,
        default=list(DEFAULT_OPPONENTS),
        help=f"opponent policies, each as a team of two; one table each (default {' '.join(DEFAULT_OPPONENTS)})",
    )
    p.add_argument(
        "--rules",
        nargs="+",
        action=ListOption,
        default=list(DEFAULT_RULES),
        help="presets, YAML files, variants (" + ", ".join(RULE_VARIANTS) + ") or JSON objects on the tournament "
        f"rules, as spades matrix takes them; one table each (default {' '.join(DEFAULT_RULES)})",
    )
    p.add_argument(
        "--games",
        type=int,
        default=DEFAULT_GAMES,
        help=f"games per rules and opponent, half of them with the seats swapped (default {DEFAULT_GAMES})",
    )
    p.add_argument("--seed", type=int, default=0, help="seed of the deals and policies (default 0)")
    p.add_argument(
        "--by",
        choices=GROUPINGS,
        default=GROUPINGS[0],
        help="sets: contracts by who bid Nil (default); blind-nil: hands by score and who declared Blind Nil",
    )
    p.add_argument(
        "--workers",
        type=int,
        default=1,
        help="processes, each stepping its share of the boards batched (default 1; the same results)",
    )
    p.add_argument("--no-progress", action="store_true", help="no progress bar")
    p.set_defaults(func=run)
