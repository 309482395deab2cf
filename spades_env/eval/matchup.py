"""One matchup: team A against team B on duplicate deals, summarized with 95% CIs.

What ``spades eval`` plays, and each row of a gauntlet (:mod:`spades_env.eval.gauntlet`).
A team is two policy specs (a bots name, ``search:budget=0.1``, a checkpoint path) or, under
two-player rules, one policy for its one seat. The match is played on whole duplicate boards
(:func:`spades_env.eval.duplicate.seatings`: partnerships swapped; four runs per deal when a
team is a mixed pair; the two seats swapped in the two-player game), enough boards for about
``games`` units.
"""

from __future__ import annotations

import math
import os
import time
from typing import Any

from spades_env.core.rules import RulesConfig, load_rules
from spades_env.core.validate import check_count
from spades_env.eval.boards import seatings
from spades_env.eval.duplicate import run_duplicate
from spades_env.eval.match import team_label
from spades_env.eval.stats import summarize
from spades_env.policies.registry import PolicySpec

Team = tuple[PolicySpec, PolicySpec]


def default_workers(batched: bool) -> int:
    """Processes when none are asked for: one for batched play (the batch is the parallelism;
    on a 2-core machine a second batched process was slower), up to 2 for one game at a time."""
    return 1 if batched else max(1, min(2, os.cpu_count() or 1))


def boards_for(
    games: int, team_a: Team, team_b: Team, *, mixed: bool | None = None, num_players: int = 4
) -> int:
    """Duplicate boards that give about ``games`` units (rounded up to whole boards)."""
    runs = len(seatings(team_a, team_b, mixed=mixed, num_players=num_players))
    return max(1, math.ceil(check_count(games, "games") / runs))


def run_matchup(
    team_a: Team,
    team_b: Team,
    games: int,
    *,
    rules: RulesConfig | str | dict | None = None,
    fmt: str = "game",
    seed: int = 0,
    workers: int | None = None,
    progress: bool | str = False,
    batched: bool | None = None,
    mixed: bool | None = None,
    labels: tuple[str, str] | None = None,
) -> dict[str, Any]:
    """The summary (:func:`spades_env.eval.stats.summarize`) of team A against team B over
    about ``games`` units, with ``seconds`` added.

    ``batched``: many games stepped at once on the batched engine (the same results as one
    game at a time); ``None`` (default): batched where every policy has a batched form.
    ``workers``: processes (default :func:`default_workers`). ``labels``: the teams' names in
    the summary (default their policy names)."""
    cfg = load_rules(rules)
    boards = boards_for(games, team_a, team_b, mixed=mixed, num_players=cfg.num_players)
    if batched is None:
        from spades_env.eval.batched import specs_have_batched_forms

        batched = specs_have_batched_forms([*team_a, *team_b], cfg)
    if workers is None:
        workers = default_workers(batched)
    t0 = time.perf_counter()
    results = run_duplicate(
        team_a,
        team_b,
        boards,
        seed=seed,
        rules=cfg,
        fmt=fmt,
        workers=workers,
        progress=progress,
        mixed=mixed,
        batched=batched,
    )
    s = summarize(results, fmt, labels or (team_label(team_a), team_label(team_b)), seed=seed)
    s["seconds"] = round(time.perf_counter() - t0, 2)
    return s


__all__ = ["boards_for", "default_workers", "run_matchup"]
