"""Batched evaluation: many duplicate runs stepped at once on the batched engine.

:func:`play_boards_batched` plays the same :class:`~spades_env.eval.duplicate.BoardJob` s as
:func:`~spades_env.eval.duplicate.play_boards` and returns the same
:class:`~spades_env.eval.duplicate.BoardResult` s (the same hands, numbers and JSON for the same
seeds; ``tests/eval/test_arena_batched.py`` checks it), but steps up to ``slots`` runs (one seating
of one board each) together on :class:`~spades_env.envs.vector.VectorSpades`, and lets every policy
decide for all the games where it is to act in one call:

* every run of a board starts from that board's game, ``VectorSpades.start_games([deal_seed])``
  (= ``SpadesGame(rules, seed=deal_seed)``), with the episode knob ``episode=fmt``; a slot whose
  run ended takes the next run;
* each seat of each run gets its own Policy, resolved as the one-at-a-time path does
  (``resolve_policy(spec, job.seat_seeds[seat], rules)`` per seating; a name whose policy has
  ``with_seed`` is resolved once and then copied with each seed), so each sampling policy
  has its own generator, seeded as there, and draws from it only for its own decisions, in
  the same order;
* at each step the games' seats to act are grouped by batched form
  (:class:`~spades_env.policies.base.BatchPolicy`: policies with one ``batch_key`` decide in one
  ``act_batch`` call, identical to ``act`` row by row: a checkpoint's one forward pass, L2's one
  compiled call, random policies each with their own generator); any other policy (greedy,
  search, a factory's) is called per game with ``act``;
* hands are recorded from the engine's ``hand_end_states`` (the state as each hand was scored)
  the way :func:`spades_env.eval.match.play` records them from ``SpadesGame.step``.

Results depend only on the jobs' seeds: not on ``slots``, nor on which runs share a step.
"""

from __future__ import annotations

import contextlib
import ctypes
import glob
import os
from collections.abc import Callable, Iterator, Sequence
from typing import Any

import numpy as np

from spades_env.core import layout as L
from spades_env.core.validate import InputError, check_count
from spades_env.eval.boards import BoardResult, new_pool
from spades_env.eval.match import PlayResult, hand_record, record_hand_end
from spades_env.policies.base import Policy, act_rows, batch_key_of
from spades_env.policies.registry import resolve_policy

DEFAULT_SLOTS = 1024


@contextlib.contextmanager
def blas_threads(n: int = 1) -> Iterator[None]:
    """Run the block with NumPy's OpenBLAS on ``n`` threads (then restore its setting); a
    no-op where NumPy has no bundled OpenBLAS. The batched forward passes run on one thread:
    OpenBLAS's threads wait for each other by spinning, and on cores busy with other work a
    two-thread product of a few hundred rows ran up to 100 times slower than on one thread."""
    lib = None
    try:
        libs = glob.glob(os.path.join(os.path.dirname(np.__file__), os.pardir, "numpy.libs", "*openblas*"))
        for path in libs:
            cand = ctypes.CDLL(path)
            for prefix in ("scipy_openblas", "openblas"):
                for suffix in ("64_", ""):
                    get = getattr(cand, f"{prefix}_get_num_threads{suffix}", None)
                    put = getattr(cand, f"{prefix}_set_num_threads{suffix}", None)
                    if get is not None and put is not None:
                        lib = (get, put)
                        break
                if lib:
                    break
            if lib:
                break
    except OSError:
        lib = None
    if lib is None:
        yield
        return
    get, put = lib
    before = int(get())
    put(int(n))
    try:
        yield
    finally:
        put(before)


def has_batched_form(policy: Policy) -> bool:
    """Whether ``policy`` decides for many games in one call (a
    :class:`~spades_env.policies.base.BatchPolicy` with a batch key)."""
    return batch_key_of(policy) is not None


def specs_have_batched_forms(specs: Sequence[Any], rules: Any) -> bool:
    """Whether every policy spec resolves (with seed 0) to a policy with a batched form."""
    return all(has_batched_form(resolve_policy(spec, 0, rules)) for spec in specs)


def _resolver(rules: Any) -> Callable[[Any, int], Policy]:
    """``resolve_policy(spec, seed, rules)``, with a name whose policy can be reseeded
    (``with_seed``: a checkpoint, L2, ``blind``, random) resolved once and then copied with
    each next seed (the same policy ``resolve_policy`` gives, without finding and checking
    the checkpoint again)."""
    protos: dict[str, Any] = {}

    def resolve(spec: Any, seed: int) -> Policy:
        proto = protos.get(spec) if isinstance(spec, str) else None
        if proto is not None:
            return proto.with_seed(seed)
        p = resolve_policy(spec, seed, rules)
        if isinstance(spec, str) and callable(getattr(p, "with_seed", None)):
            protos[spec] = p
        return p

    return resolve


class _Run:
    """One seating of one board being played in a slot."""

    __slots__ = ("j", "k", "policies", "result", "dealt", "dealer", "bags_before")

    def __init__(self, j: int, k: int, policies: list[Policy]) -> None:
        self.j, self.k, self.policies = j, k, policies
        self.result = PlayResult()

    def begin_hand(self, row: np.ndarray) -> None:
        self.dealt = tuple(int(row[L.HANDS + s]) for s in range(4))
        self.dealer = int(row[L.DEALER])
        self.bags_before = (int(row[L.BAGS]), int(row[L.BAGS + 1]))

    def end_hand(self, st: np.ndarray, params: np.ndarray, done: bool) -> None:
        rec = hand_record(st, params, self.dealt, self.dealer, self.bags_before)
        record_hand_end(self.result, rec, st, done)


def play_boards_batched(
    jobs: Sequence[Any],
    slots: int = DEFAULT_SLOTS,
    progress: bool | str = False,
    on_result: Callable[[Any], None] | None = None,
) -> list[Any]:
    """Play ``jobs`` (``BoardJob`` s of one rules and format, four players or two) with up to
    ``slots`` runs at once; the ``BoardResult`` s in job order, identical to ``play_boards``'.
    ``on_result`` is called with each board's result once all its runs are done (in the
    order boards finish)."""
    from spades_env.envs.vector import VectorSpades

    slots = check_count(slots, "slots")
    if not jobs:
        return []
    rules, fmt = jobs[0].rules, jobs[0].fmt
    if any(j.rules != rules or j.fmt != fmt for j in jobs):
        raise InputError("play_boards_batched: every job must have the same rules and format")
    pending = [(j, k) for j in range(len(jobs)) for k in range(len(jobs[j].seatings))]
    pending.reverse()  # pop() from the end takes them in order
    n_slots = min(slots, len(pending))
    # the serial kernels: no numba threads in this process, so it may fork workers later (numba's
    # workqueue threads do not survive a fork: a child's parallel kernel would wait forever)
    engine = VectorSpades(n_slots, rules, episode=fmt, reward="score", illegal="raise", seed=0)
    params = engine.params
    done_runs: list[list[Any]] = [[None] * len(j.seatings) for j in jobs]
    left = [len(j.seatings) for j in jobs]
    results: list[Any] = [None] * len(jobs)
    in_slot: list[_Run | None] = [None] * n_slots
    active = np.zeros(n_slots, dtype=np.bool_)
    gid = np.zeros((n_slots, 4), dtype=np.int64)  # group of each slot's seat (one batched form)
    group_ids: dict[tuple, int] = {}
    group_keys: dict[int, tuple | None] = {}
    actions = np.zeros(n_slots, dtype=np.int64)
    bar = None
    if progress:
        from tqdm.auto import tqdm

        bar = tqdm(total=len(jobs), desc=progress if isinstance(progress, str) else "boards", unit="board")

    resolve = _resolver(rules)

    def fill(free: list[int]) -> None:
        starts, seeds = [], []
        for i in free:
            if not pending:
                active[i] = False
                in_slot[i] = None
                continue
            j, k = pending.pop()
            job = jobs[j]
            seating = job.seatings[k]
            pols = [resolve(spec, job.seat_seeds[s]) for s, spec in enumerate(seating.seats)]
            for p in pols:
                bind = getattr(p, "bind", None)
                if callable(bind):  # evaluation-only cheating bots read the true state
                    bind(lambda i=i: engine.states[i])
            in_slot[i] = _Run(j, k, pols)
            for s, p in enumerate(pols):
                key = batch_key_of(p) or ("act",)  # ("act",): called per game, each with its own act
                gid[i, s] = group_ids.setdefault(key, len(group_ids))
                group_keys.setdefault(int(gid[i, s]), None if key == ("act",) else key)
            active[i] = True
            starts.append(i)
            seeds.append(job.deal_seed)
        if starts:
            engine.start_games(np.asarray(seeds, dtype=np.int64), np.asarray(starts, dtype=np.int64))
            for i in starts:
                in_slot[i].begin_hand(engine.states[i])  # type: ignore[union-attr]

    stack = contextlib.ExitStack()
    try:
        stack.enter_context(blas_threads(1))
        fill(list(range(n_slots)))
        res = engine._result()
        while active.any():
            rows = np.flatnonzero(active)
            seats = res.seat[rows]
            g = gid[rows, seats]
            order = np.argsort(g, kind="stable")
            cuts = np.flatnonzero(np.diff(g[order])) + 1
            for part in np.split(order, cuts):
                r, st = rows[part], seats[part]
                pols = [in_slot[i].policies[s] for i, s in zip(r.tolist(), st.tolist(), strict=True)]  # type: ignore[union-attr]
                # one act_batch call for a group with a batched form, one act per game otherwise;
                # every action checked against its mask (a PolicyError names the policy)
                actions[r] = act_rows(pols, res.obs[r], res.mask[r])
            res = engine.step(actions, active=active)
            ended = res.terminated | res.truncated
            for i in np.flatnonzero(engine.hand_done).tolist():
                run = in_slot[i]
                assert run is not None
                run.end_hand(engine.hand_end_states[i], params, bool(ended[i]))
                if not ended[i]:
                    run.begin_hand(engine.states[i])
            free = np.flatnonzero(ended & active).tolist()
            for i in free:
                run = in_slot[i]
                assert run is not None
                j = run.j
                done_runs[j][run.k] = (jobs[j].seatings[run.k], run.result)
                left[j] -= 1
                if left[j] == 0:
                    results[j] = BoardResult(key=jobs[j].key, runs=done_runs[j])
                    if on_result is not None:
                        on_result(results[j])
                    if bar is not None:
                        bar.update(1)
            if free:
                fill(free)
                res = engine._result()
    finally:
        stack.close()
        if bar is not None:
            bar.close()
    return results


def _play_chunk(jobs: Sequence[Any]) -> list[Any]:
    return play_boards_batched(jobs)


def play_boards_batched_pool(
    jobs: Sequence[Any], workers: int = 1, progress: bool | str = False
) -> list[Any]:
    """:func:`play_boards_batched` on ``workers`` processes: the jobs cut into ``workers``
    contiguous chunks, one batched engine each; results in job order, the same whatever
    ``workers`` (each board's result depends only on its seeds). Progress per chunk."""

    workers = check_count(workers, "workers")
    jobs = list(jobs)
    k = min(workers, len(jobs))
    if k <= 1:
        return play_boards_batched(jobs, progress=progress)
    cuts = [len(jobs) * i // k for i in range(k + 1)]
    chunks = [jobs[a:b] for a, b in zip(cuts[:-1], cuts[1:], strict=True)]
    bar = None
    if progress:
        from tqdm.auto import tqdm

        bar = tqdm(total=len(jobs), desc=progress if isinstance(progress, str) else "boards", unit="board")
    out: list[Any] = []
    pool = new_pool(k)
    try:
        for part in pool.imap(_play_chunk, chunks, chunksize=1):
            out.extend(part)
            if bar is not None:
                bar.update(len(part))
    finally:
        pool.terminate()
        pool.join()
        if bar is not None:
            bar.close()
    return out


__all__ = [
    "DEFAULT_SLOTS",
    "has_batched_form",
    "play_boards_batched",
    "play_boards_batched_pool",
    "specs_have_batched_forms",
]
