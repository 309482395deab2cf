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

from collections.abc import Callable, Iterable, Sequence

from spades_env.core.rules import RulesConfig, load_rules
from spades_env.core.validate import check_count
from spades_env.eval.boards import (
    BoardJob,
    BoardResult,
    Team,
    make_jobs,
    new_pool,
    play_board,
)


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
            pool = new_pool(min(workers, len(jobs)))
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
