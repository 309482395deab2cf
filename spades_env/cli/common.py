"""What the ``spades`` commands share: plain help text, the arena options, their checks.

Parsing and checking only: what a command plays lives in ``spades_env.eval`` (and the other
layers below the CLI).
"""

from __future__ import annotations

import argparse
import re
from pathlib import Path
from typing import Any

from spades_env.core.rules import RulesConfig, rules_item
from spades_env.core.validate import check_count, check_int
from spades_env.eval.gauntlet import DEFAULT_OPPONENTS, DEFAULT_PARTNER
from spades_env.eval.match import FORMATS, parse_team
from spades_env.io.paths import check_output_dir
from spades_env.policies.registry import check_policy_name

_ROLE = re.compile(r":[a-z]+(?::[a-z]+)?:`(~?)([^`<]*?)(?:\s*<([^`>]*)>)?`")


def _role_text(m: re.Match[str]) -> str:
    tilde, text, target = m.group(1), m.group(2).strip(), m.group(3)
    if target is not None:  # :role:`shown text <target>`
        return text
    if tilde:  # :role:`~a.b.C` shows C
        return text.rsplit(".", 1)[-1]
    return text


def plain(text: str) -> str:
    """reStructuredText as plain text for a terminal: a Sphinx role (class, func, mod...)
    becomes its target (only the last dotted part when the target starts with a tilde, only
    the shown text when it has one), double backticks are dropped, and the line breaks inside
    a paragraph are folded to spaces (argparse wraps the description itself)."""
    text = _ROLE.sub(_role_text, text)
    text = text.replace("``", "")
    return "\n\n".join(" ".join(p.split()) for p in text.split("\n\n") if p.strip())


def doc_paragraph(doc: str | None, k: int = 1) -> str | None:
    """Paragraph ``k`` of a module docstring, as plain text for a command's description."""
    if not doc:
        return None
    paragraphs = [p for p in doc.split("\n\n") if p.strip()]
    return plain(paragraphs[k]) if k < len(paragraphs) else None


def seat_help(what: str) -> str:
    """The help of a seat option: the spellings :func:`spades_env.core.validate.parse_seat`
    accepts."""
    return (
        f"{what}: N, E, S or W (north, east, south, west; any case) or 0-3; "
        "in the two-player game P0 or P1 (or 0, 1)"
    )


# ---- the arena commands: eval, tournament, gauntlet, matrix --------------------------------------
class ListOption(argparse.Action):
    """A list option whose repeats add up: ``--rules a --rules b`` is ``--rules a b`` (argparse's
    ``store`` kept only the last; the first occurrence replaces the default, later ones extend)."""

    def __call__(self, parser: argparse.ArgumentParser, namespace: argparse.Namespace, values: Any,
                 option_string: str | None = None) -> None:
        current = getattr(namespace, self.dest, None)
        if current is None or current is self.default:
            current = []
        setattr(namespace, self.dest, [*current, *values])


def add_matchup_arguments(p: argparse.ArgumentParser, games: int, games_help: str) -> None:
    """The arguments ``spades gauntlet`` and ``spades matrix`` share: POLICY, ``--games``,
    ``--opponents`` and ``--partner``."""
    p.add_argument(
        "policy",
        help="the policy: a bots name (heuristic, search:budget=0.1), a shipped agent id or a checkpoint path",
    )
    p.add_argument("--games", type=int, default=games, help=games_help)
    p.add_argument(
        "--opponents",
        nargs="*",
        action=ListOption,
        default=list(DEFAULT_OPPONENTS),
        help="opponent policies, each as a team of two (none: only the mixed pair; default "
        f"{' '.join(DEFAULT_OPPONENTS)})",
    )
    p.add_argument(
        "--partner",
        default=DEFAULT_PARTNER,
        help=f"the mixed-pair matchup's partner and opponents ('' to skip; default {DEFAULT_PARTNER})",
    )


def add_format_and_seed(p: argparse.ArgumentParser) -> None:
    """``--format`` and ``--seed``."""
    p.add_argument(
        "--format", dest="fmt", choices=FORMATS, default="game", help="unit of play (default game)"
    )
    p.add_argument("--seed", type=int, default=0, help="seed of the deals and policies (default 0)")


def add_arena_arguments(p: argparse.ArgumentParser) -> None:
    """The options ``spades eval``, ``tournament`` and ``gauntlet`` share."""
    add_format_and_seed(p)
    p.add_argument(
        "--workers",
        type=int,
        default=None,
        help="processes (default: 1 for batched play, up to 2 for one game at a time)",
    )
    p.add_argument("--out", type=Path, default=None, help="folder for the JSON report and PNG plot")
    p.add_argument(
        "--rules",
        default="tournament",
        help="a rules preset, a YAML file, a variant (no_blind) or a JSON object on the tournament rules, "
        "as spades matrix takes them (default tournament)",
    )
    p.add_argument("--max-hands", type=int, default=None, help="override the rules' hand cap per game (0: no cap)")
    p.add_argument("--target", type=int, default=None, help="override the rules' target score")
    p.add_argument("--no-progress", action="store_true", help="no progress bar")


def add_one_at_a_time(p: argparse.ArgumentParser, default_note: str) -> None:
    """``--one-at-a-time`` (instead of the default ``default_note``)."""
    p.add_argument(
        "--one-at-a-time",
        action="store_true",
        help="play one game at a time on --workers processes (the same results) instead of the default "
        f"{default_note}",
    )


def rules_of(args: argparse.Namespace) -> RulesConfig:
    """``--rules`` (read as ``spades matrix`` reads one item) with ``--max-hands`` and
    ``--target`` applied."""
    rules = rules_item(args.rules)[1]
    if args.max_hands is not None:
        rules = rules.replace(max_hands=args.max_hands)
    if args.target is not None:
        rules = rules.replace(target_score=args.target)
    return rules


def check_arena_arguments(args: argparse.Namespace) -> None:
    """Check the options every arena command has, before any play (a bad one: InputError)."""
    check_int(args.seed, "--seed", 0)
    if args.workers is not None:
        check_count(args.workers, "--workers")
    if args.out is not None:
        check_output_dir(args.out, "--out")


def check_team(text: str) -> tuple[str, str]:
    """A team parsed, with both its policy names checked (nothing is loaded or played)."""
    team = parse_team(text)
    for spec in team:
        check_policy_name(spec)
    return team


def check_policies(*specs: str) -> None:
    """Check policy names (nothing is loaded or played)."""
    for spec in specs:
        check_policy_name(spec)


def wrote(json_path: Path, png: Path | None) -> str:
    """The line that names the files an arena command wrote."""
    return f"wrote {json_path}" + (f" and {png}" if png else " (no matplotlib: no plot)")
