"""``spades replay FILE``: check a game record and print its result.

Every action is replayed through the rules core and every recorded result is checked. On
success it prints each hand (bids, tricks, points, scores) and the final result; on the first
problem it prints what and where (an illegal action with its position and the legal set) and
exits with status 1.
"""

from __future__ import annotations

import argparse
import sys

from spades_env.records import RecordError, format_record, load_record, replay_record


def run(args: argparse.Namespace) -> int:
    try:
        record = load_record(args.file)
        result = replay_record(record)
    except RecordError as exc:
        print(f"spades replay: {args.file}: {exc}", file=sys.stderr)
        return 1
    print(format_record(record, result.final, deal=args.deal))
    finished = sum(1 for h in result.hands if h is not None)
    actions = sum(len(h["actions"]) for h in record["hands"])
    print(f"\nOK: {finished} hands, {actions} actions replayed; every action legal, every score reproduced.")
    return 0


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("replay", help="replay a game record, check it, print the result")
    p.add_argument("file", help="record file (JSON, see docs/records.md)")
    p.add_argument("--deal", action="store_true", help="also print the dealt hands")
    p.set_defaults(func=run)
