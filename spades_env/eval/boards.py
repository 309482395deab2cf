"""Boards: the jobs of duplicate play (a deal seed, the seats' seeds and the seatings), one
board played on the one-at-a-time path, and the worker pools' settings. Both the process pool
(:mod:`spades_env.eval.duplicate`) and the batched engine (:mod:`spades_env.eval.batched`) play
these jobs and return these results."""

from __future__ import annotations

import multiprocessing as mp
import os
import signal
from dataclasses import dataclass
from typing import Any

import numpy as np

from spades_env.core.game import SpadesGame
from spades_env.core.rules import RulesConfig
from spades_env.core.validate import InputError, brief, check_choice, check_count, check_int
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
    policy (``InputError`` otherwise, and for a team that is not a pair)."""
    team_a, team_b = _check_team(team_a, "A"), _check_team(team_b, "B")
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


def _check_team(team: Any, label: str) -> Team:
    """``team`` as a pair of policy specs; ``InputError`` for anything else (a bare name included)."""
    if isinstance(team, (str, bytes)) or not isinstance(team, (tuple, list)) or len(team) != 2:
        raise InputError(
            f"team {label} must be a pair of policies, one per seat of the partnership, got "
            f"{brief(team)}; one policy in both seats (and the two-player game's one player) is (name, name)"
        )
    return (team[0], team[1])


def seed_int(*words: int) -> int:
    """A non-negative 63-bit seed drawn from the words (``SeedSequence``): boards' and seats' seeds."""
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
            deal_seed=seed_int(seed, matchup, i, 0),
            seat_seeds=tuple(seed_int(seed, matchup, i, 1 + s) for s in range(4)),  # type: ignore[arg-type]
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


def worker_init() -> None:
    """Initializer of every arena worker process: Ctrl-C (SIGINT, sent to the whole process
    group) is left to the parent, which stops the pool and reports one line; a worker never
    prints a ``KeyboardInterrupt`` traceback."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)


def new_pool(workers: int) -> Any:
    """A pool of ``workers`` arena worker processes (:func:`pool_context`, :func:`worker_init`)."""
    return pool_context().Pool(workers, initializer=worker_init)


def pool_context() -> mp.context.BaseContext:
    """The multiprocessing context of the arena's worker pools: fork where the system has it
    (fast and safe here: workers only run numba code and policies), spawn elsewhere;
    ``SPADES_ARENA_START_METHOD`` overrides it."""
    method = "fork" if "fork" in mp.get_all_start_methods() and os.name == "posix" else "spawn"
    return mp.get_context(os.environ.get("SPADES_ARENA_START_METHOD", method))


__all__ = [
    "new_pool",
    "worker_init",
    "BoardJob",
    "BoardResult",
    "Seating",
    "Team",
    "available_cpus",
    "make_jobs",
    "play_board",
    "pool_context",
    "seatings",
    "seed_int",
]
