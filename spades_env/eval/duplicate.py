"""Duplicate play: every deal sequence (a *board*) is played with the partnerships swapped, so
the luck of the cards cancels. In the two-player game a "team" is one player (a team given as
two different policies is refused) and the two players swap seats.

A board is a deal seed: ``SpadesGame(rules, seed=deal_seed)`` deals the same sequence of hands
(and dealers) every time, because the deals are the only draws of the game's generator. Team A
sits North-South in one run and East-West in the other; when either team is a mixed pair
(two different policies) the board is played four times, so that each policy of a mixed team
sits in each seat of its partnership. Each seat's policy gets a seed that depends only on
(seed, board, seat), so a policy that plays itself on a board plays the same game from both
sides.

Boards run in a process pool; each board is a job whose result depends only on its seeds, and
results come back in board order, so the same seed gives the same numbers whatever the number
of workers. ``run_duplicate(..., batched=True)`` plays the same jobs with many runs stepped at
once on the batched engine instead (:mod:`spades_env.eval.batched`): the same results.
"""

from __future__ import annotations

import multiprocessing as mp
import os
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass

import numpy as np

from spades_env.core.game import SpadesGame
from spades_env.core.rules import RulesConfig, load_rules
from spades_env.core.validate import InputError, check_choice, check_count, check_int
from spades_env.eval.match import FORMATS, PlayResult, play, spec_name
from spades_env.policies.registry import PolicySpec, resolve_policy

Team = tuple[PolicySpec, PolicySpec]


@dataclass(frozen=True)
class Seating:
    """One run of a board: who sits where, and which absolute team (0 NS, 1 EW; in the
    two-player game seat 0 or 1) is team A."""

    seats: tuple[PolicySpec, ...]
    a_team: int


def seatings(team_a: Team, team_b: Team, mixed: bool | None = None, num_players: int = 4) -> list[Seating]:
    """The runs of a board: partnerships swapped (2 runs); with ``mixed`` (default: either team
    holds two different policies) also each team's two policies swapped between its seats
    (4 runs). ``num_players=2``: the two players swap seats (2 runs); each team must be one
    policy (``InputError`` otherwise)."""
    if num_players == 2:
        for label, team in (("A", team_a), ("B", team_b)):
            if spec_name(team[0]) != spec_name(team[1]):
                raise InputError(
                    f"the two-player game has no partners: team {label} must be one policy, "
                    f"got {spec_name(team[0])!r} and {spec_name(team[1])!r}"
                )
        return [Seating(seats=(team_a[0], team_b[0]), a_team=0), Seating(seats=(team_b[0], team_a[0]), a_team=1)]
    if num_players != 4:
        raise InputError(f"num_players must be 4 or 2, got {num_players!r}")
    if mixed is None:
        mixed = spec_name(team_a[0]) != spec_name(team_a[1]) or spec_name(team_b[0]) != spec_name(team_b[1])
    out = []
    for flip in (0, 1) if mixed else (0,):
        a = (team_a[flip], team_a[1 - flip])
        b = (team_b[flip], team_b[1 - flip])
        out.append(Seating(seats=(a[0], b[0], a[1], b[1]), a_team=0))  # A at N-S
        out.append(Seating(seats=(b[0], a[0], b[1], a[1]), a_team=1))  # A at E-W
    return out


def _seed_int(*words: int) -> int:
    return int(np.random.SeedSequence([int(w) for w in words]).generate_state(1, dtype=np.uint64)[0] >> 1)


@dataclass(frozen=True)
class BoardJob:
    """Everything a worker needs to play one board (picklable)."""

    key: tuple  # (matchup index, board index) or any label used to sort results
    deal_seed: int
    seat_seeds: tuple[int, int, int, int]
    seatings: tuple[Seating, ...]
    rules: RulesConfig
    fmt: str


@dataclass
class BoardResult:
    """The runs of one board, in the order of its seatings."""

    key: tuple
    runs: list[tuple[Seating, PlayResult]]


def make_jobs(
    team_a: Team,
    team_b: Team,
    boards: int,
    *,
    seed: int,
    rules: RulesConfig,
    fmt: str = "game",
    matchup: int = 0,
    mixed: bool | None = None,
) -> list[BoardJob]:
    """Jobs for ``boards`` duplicate boards of team A against team B, seeded from
    ``(seed, matchup, board)``. ``boards`` is an integer of at least 1, ``seed`` and
    ``matchup`` non-negative integers (``InputError`` otherwise)."""
    check_choice(fmt, "format", FORMATS)
    boards = check_count(boards, "boards")
    seed = check_int(seed, "seed", 0)
    matchup = check_int(matchup, "matchup", 0)
    runs = tuple(seatings(team_a, team_b, mixed, rules.num_players))
    return [
        BoardJob(
            key=(matchup, i),
            deal_seed=_seed_int(seed, matchup, i, 0),
            seat_seeds=tuple(_seed_int(seed, matchup, i, 1 + s) for s in range(4)),  # type: ignore[arg-type]
            seatings=runs,
            rules=rules,
            fmt=fmt,
        )
        for i in range(boards)
    ]


def play_board(job: BoardJob) -> BoardResult:
    """Play every seating of one board on the same deals."""
    runs = []
    for seating in job.seatings:
        policies = [
            resolve_policy(spec, job.seat_seeds[s], job.rules) for s, spec in enumerate(seating.seats)
        ]
        game = SpadesGame(job.rules, seed=job.deal_seed)
        runs.append((seating, play(game, policies, job.fmt)))
    return BoardResult(key=job.key, runs=runs)


def available_cpus() -> int:
    """The CPUs this process may run on (its affinity where the system reports one): the
    default number of workers of the commands that use every core (``spades matrix``)."""
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except (AttributeError, OSError):  # no affinity on this system (macOS, Windows)
        return max(1, os.cpu_count() or 1)


def _pool_context() -> mp.context.BaseContext:
    # fork is fast and safe here (workers only run numba code and policies); spawn elsewhere.
    method = "fork" if "fork" in mp.get_all_start_methods() and os.name == "posix" else "spawn"
    return mp.get_context(os.environ.get("SPADES_ARENA_START_METHOD", method))


def play_boards(
    jobs: Sequence[BoardJob],
    workers: int = 1,
    progress: bool | str = False,
    on_result: Callable[[BoardResult], None] | None = None,
) -> list[BoardResult]:
    """Play ``jobs`` on ``workers`` processes; results in job order. ``progress``: show a bar
    (a string is its label). ``workers`` is an integer of at least 1."""
    workers = check_count(workers, "workers")
    results: list[BoardResult] = []
    bar = None
    if progress:
        from tqdm.auto import tqdm

        bar = tqdm(total=len(jobs), desc=progress if isinstance(progress, str) else "boards", unit="board")
    it: Iterable[BoardResult]
    pool = None
    try:
        if workers > 1 and len(jobs) > 1:
            pool = _pool_context().Pool(min(workers, len(jobs)))
            it = pool.imap(play_board, jobs, chunksize=1)
        else:
            it = map(play_board, jobs)
        for r in it:
            results.append(r)
            if on_result is not None:
                on_result(r)
            if bar is not None:
                bar.update(1)
    finally:
        if pool is not None:
            pool.terminate()
            pool.join()
        if bar is not None:
            bar.close()
    return results


def run_duplicate(
    team_a: Team,
    team_b: Team,
    boards: int,
    *,
    seed: int = 0,
    rules: RulesConfig | str | dict | None = None,
    fmt: str = "game",
    workers: int = 1,
    progress: bool | str = False,
    mixed: bool | None = None,
    batched: bool = False,
) -> list[BoardResult]:
    """Play ``boards`` duplicate boards of team A against team B (the four-player game, or the
    two-player game where each team is one policy); results in board order.
    ``batched``: step the runs together on the batched engine, one engine per worker process
    (:func:`spades_env.eval.batched.play_boards_batched_pool`, the same results)."""
    cfg = load_rules(rules)
    jobs = make_jobs(team_a, team_b, boards, seed=seed, rules=cfg, fmt=fmt, mixed=mixed)
    if batched:
        from spades_env.eval.batched import play_boards_batched_pool

        return play_boards_batched_pool(jobs, workers=workers, progress=progress)
    return play_boards(jobs, workers=workers, progress=progress)
