"""``spades demo``: a seeded game between random players, printed hand by hand.

Four :class:`~spades_env.policies.base.RandomPolicy` players (two in the two-player rules), each with
its own generator drawn from the seed, play through the rules core. Every hand is printed (the
deal, bids, tricks, points, running score), then the result. Random players bid wildly and
rarely reach 500, so the demo caps the game at ``--hands`` hands (default 10) and says so.
"""

from __future__ import annotations

import argparse
import sys

import numpy as np

from spades_env.cli.common import doc_paragraph
from spades_env.core.game import SpadesGame
from spades_env.core.rules import RulesConfig, RulesError, load_rules
from spades_env.core.validate import check_int
from spades_env.io.paths import check_output_file
from spades_env.io.records import FORMAT, format_record, record_from_game, save_record
from spades_env.policies.base import RandomPolicy
from spades_env.policies.driver import drive

DEFAULT_HANDS = 10


def play_random_game(rules: RulesConfig, seed: int) -> SpadesGame:
    """Play a match of ``rules`` between seeded random policies (through the one driver,
    :func:`spades_env.policies.driver.drive`); returns the finished game."""
    game = SpadesGame(rules, seed=seed, episode="match")
    seeds = np.random.SeedSequence(seed).spawn(game.num_seats)
    drive(game, [RandomPolicy(np.random.default_rng(s)) for s in seeds])
    return game


def run(args: argparse.Namespace) -> int:
    try:
        rules = load_rules(args.rules)
        if args.hands < 0:
            raise RulesError(f"--hands must be 0 (the rules' own cap) or more, got {args.hands}")
        if args.hands > 0:
            rules = rules.replace(max_hands=args.hands)
    except RulesError as exc:
        print(f"spades demo: {exc}", file=sys.stderr)
        return 2
    check_int(args.seed, "--seed", 0)
    if args.record:  # before playing: a missing folder or a folder given as the file
        check_output_file(args.record, "--record")
    game = play_random_game(rules, args.seed)
    record = record_from_game(game, meta={"command": "spades demo", "seed": args.seed})
    players = "four" if game.num_seats == 4 else "two"
    cap = f"at most {rules.max_hands} hand(s)" if rules.max_hands else "no hand cap"
    print(
        f"Spades demo: {players} random players, rules '{rules.name}', seed {args.seed}, "
        f"{cap}, games to {rules.target_score}, best of {rules.match_games}"
    )
    if args.no_deal:
        print()
    elif game.num_seats == 4:
        print("(hands as dealt, before any Blind Nil exchange)\n")
    else:
        print("(each hand's stock, top first, from which the players draw their 13 cards)\n")
    print(format_record(record, deal=not args.no_deal))
    if args.record:
        save_record(record, args.record)
        print(f"\nRecord ({FORMAT}) saved to {args.record}; replay it with: spades replay {args.record}")
    return 0


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser(
        "demo",
        help="a seeded game between random players, printed hand by hand",
        description=doc_paragraph(__doc__),
    )
    p.add_argument("--seed", type=int, default=0, help="seed of the deals and the players (default 0)")
    p.add_argument("--rules", default="tournament", help="rules preset or YAML file (default tournament)")
    p.add_argument(
        "--hands",
        type=int,
        default=DEFAULT_HANDS,
        help=f"cap the game at this many hands (default {DEFAULT_HANDS}; 0: the rules' own max_hands)",
    )
    p.add_argument(
        "--record", metavar="FILE", help="save the game record (JSON) to FILE (its folder must exist; replaced if there)"
    )
    p.add_argument("--no-deal", action="store_true", help="do not print the dealt hands")
    p.set_defaults(func=run)
