"""``spades replay FILE``: check a game record and print its result.

Every action is replayed through the rules core and every recorded result is checked. On
success it prints each hand (bids, tricks, points, scores) and the final result; on the first
problem (a malformed file, or an action or result that does not replay) it prints one line
saying what and where (an illegal action with its position and the legal set) and exits with
status 2, as every ``spades`` command does on bad input.

``--video OUT`` (``.mp4`` or ``.gif``) also renders the game, one frame per action
(:mod:`spades_env.io.video`); ``--fps`` sets the speed, ``--viewer SEAT`` shows one seat's hand
only (N, E, S, W or 0-3; P0, P1 or 0, 1 in the two-player game). A bad output path exits with
status 2 before anything is replayed, a bad seat before anything is printed.
"""

from __future__ import annotations

import argparse
import sys

from spades_env.cli.common import seat_help
from spades_env.core.validate import parse_seat
from spades_env.io.records import RecordError, format_record, load_record, replay_record


def run(args: argparse.Namespace) -> int:
    video = getattr(args, "video", None)
    if video is not None:
        from spades_env.io.video import VideoError, check_video_path

        try:
            check_video_path(video)
            if not args.fps > 0 or args.fps > 120:
                raise VideoError(f"--fps must be a number in (0, 120], got {args.fps}")
        except VideoError as exc:
            print(f"spades replay: {exc}", file=sys.stderr)
            return 2
    try:
        record = load_record(args.file)
        result = replay_record(record)
    except RecordError as exc:
        text = str(exc)  # named once: a message about the file itself already names it
        print(f"spades replay: {text if str(args.file) in text else f'{args.file}: {text}'}", file=sys.stderr)
        return 2
    viewer = None
    if args.viewer is not None:
        viewer = parse_seat(args.viewer, result.rules.num_players, "--viewer")  # InputError: one line, status 2
    print(format_record(record, result.final, deal=args.deal))
    finished = sum(1 for h in result.hands if h is not None)
    actions = sum(len(h["actions"]) for h in record["hands"])
    print(f"\nOK: {finished} hands, {actions} actions replayed; every action legal, every score reproduced.")
    if video is not None:
        from spades_env.io.video import record_frames, write_video

        count = write_video(record_frames(record, viewer=viewer), video, fps=args.fps)
        print(f"Video: {video}, {count} frames at {args.fps:g} frames/s")
    return 0


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("replay", help="replay a game record, check it, print the result")
    p.add_argument("file", help="record file (JSON, see docs/records.md)")
    p.add_argument("--deal", action="store_true", help="also print the dealt hands")
    p.add_argument("--video", metavar="OUT", default=None, help="also render the game to OUT (.mp4 or .gif)")
    p.add_argument("--fps", type=float, default=2.0, help="video frames per second (default 2)")
    p.add_argument("--viewer", metavar="SEAT", default=None, help=seat_help("video: show only this seat's hand"))
    p.set_defaults(func=run)
