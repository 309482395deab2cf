"""The batched engine quiet and beside a busy process: serial, parallel and parallel with its
automatic threading, with OpenSpiel's C++ timed in the same run.

    .venv/bin/python benchmarks/engine_under_load.py                 # about 2 minutes
    .venv/bin/python benchmarks/engine_under_load.py --seconds 1 --rounds 1

A decision is one action of one seat. Two methods of ours, each in three kernels:

* ``step``: ``VectorSpades.step`` in a loop, compact ``uint8`` observations and masks for every
  game, the actions drawn by the compiled ``RandomLegal`` sampler from the masks (``--envs``
  games); decisions = steps x B.
* ``inside``: ``VectorSpades.play_random(8)``: random legal decisions inside the compiled core.
* kernels: ``serial`` (``parallel=False``), ``parallel`` (``parallel=True,
  auto_threads=False``: numba's ``prange`` over ``--threads`` threads on every call) and
  ``auto`` (``parallel=True``, the default ``auto_threads=True``: the engine measures both
  kernels and runs the faster, :class:`spades_env.envs.vector.PathChooser`).

OpenSpiel C++: ``pyspiel.evaluate_bots`` with uniform random bots, one fresh initial state per
game, one hand = 56 decisions, in this process (OpenSpiel is single-threaded).

``busy``: one other process spinning on the CPU (a ``while True`` loop in a second
interpreter) for the whole measurement, as a browser tab or a learner would. Each round runs
every measurement quiet, then busy, each in ``--slices`` short slices interleaved with the
others' (a shared machine's speed drifts; interleaving gives every figure the same drift); a
figure is the median of ``--rounds`` rounds. The
lines at the end print the ratios: each kernel against ``serial`` in the same condition, and
against OpenSpiel's C++ in the same condition.
"""

from __future__ import annotations

import argparse
import contextlib
import os
import statistics
import subprocess
import sys
import time
from collections.abc import Callable

import numba

from spades_env.envs.vector import RandomLegal, VectorSpades

KERNELS = ("serial", "parallel", "auto")


def engine(kernel: str, envs: int, method: str) -> Callable[[float], tuple[int, float]]:
    """A measurement: decisions of ``kernel`` by ``method`` over about ``seconds``, and the
    seconds they took."""
    v = VectorSpades(
        envs,
        seed=1,
        parallel=kernel != "serial",
        auto_threads=kernel == "auto",
        obs_dtype="uint8",
    )
    pick = RandomLegal(envs, seed=2)
    res = v.reset(seed=1)
    for _ in range(4):  # compile and warm both kernels
        res = v.step(pick(res.mask))
        v.play_random(2)

    def run(seconds: float) -> tuple[int, float]:
        nonlocal res
        n = 0
        t0 = time.perf_counter()
        end = t0 + seconds
        if method == "step":
            while time.perf_counter() < end:
                for _ in range(16):
                    res = v.step(pick(res.mask))
                n += 16 * envs
        else:
            while time.perf_counter() < end:
                v.play_random(8)
                n += 8 * envs
            res = v.refresh()
        return n, time.perf_counter() - t0

    run.engine = v  # type: ignore[attr-defined]  # for the chooser's counts
    return run


def openspiel() -> Callable[[float], tuple[int, float]] | None:
    """Decisions per second of OpenSpiel's C++ random simulation, or None without pyspiel."""
    try:
        import pyspiel
    except ImportError:
        return None
    game = pyspiel.load_game("spades")
    bots = [pyspiel.make_uniform_random_bot(p, 1000 + p) for p in range(4)]
    state = game.new_initial_state()
    pyspiel.evaluate_bots(state, bots, 0)
    assert len([a for a in state.history()]) >= 56

    def run(seconds: float) -> tuple[int, float]:
        n = 0
        t0 = time.perf_counter()
        end = t0 + seconds
        i = 1
        while time.perf_counter() < end:
            for _ in range(20):
                pyspiel.evaluate_bots(game.new_initial_state(), bots, i)
                i += 1
            n += 20 * 56
        return n, time.perf_counter() - t0

    return run


class Busy:
    """Another process spinning on one core while it lives."""

    def __enter__(self) -> Busy:
        self.p = subprocess.Popen([sys.executable, "-c", "while True: pass"])
        time.sleep(0.3)
        return self

    def __exit__(self, *exc: object) -> None:
        self.p.kill()
        self.p.wait()


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--seconds", type=float, default=2.0, help="seconds per measurement")
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--slices", type=int, default=8, help="interleaved slices of each measurement")
    ap.add_argument("--envs", type=int, default=1024, help="games of the batch")
    ap.add_argument("--threads", type=int, default=2, help="numba threads of the parallel kernels")
    args = ap.parse_args(argv)
    numba.set_num_threads(min(args.threads, numba.config.NUMBA_NUM_THREADS))
    cores = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count()
    print(
        f"cores {cores}, numba threads {numba.get_num_threads()} ({numba.config.THREADING_LAYER} layer asked, "
        f"B = {args.envs}, {args.seconds} s a measurement, median of {args.rounds} rounds"
    )
    runs: dict[str, Callable[[float], float]] = {}
    for method in ("step", "inside"):
        for k in KERNELS:
            runs[f"{method} {k}"] = engine(k, args.envs, method)
    peer = openspiel()
    if peer is not None:
        runs["OpenSpiel C++"] = peer
    figures: dict[tuple[str, str], list[float]] = {}
    for _ in range(args.rounds):
        for cond in ("quiet", "busy"):
            with Busy() if cond == "busy" else contextlib.nullcontext():
                done = {name: [0, 0.0] for name in runs}
                for _ in range(args.slices):  # interleaved slices: every figure sees the same load
                    for name, run in runs.items():
                        n, sec = run(args.seconds / args.slices)
                        done[name][0] += n
                        done[name][1] += sec
                for name, (n, sec) in done.items():
                    figures.setdefault((cond, name), []).append(n / sec)
    med = {key: statistics.median(v) for key, v in figures.items()}
    try:
        layer = numba.threading_layer()
    except ValueError:
        layer = "none"
    print(f"threading layer in use: {layer}\n")
    print(f"{'measurement':<22}{'quiet M dec/s':>15}{'busy M dec/s':>15}")
    for name in runs:
        print(f"{name:<22}{med[('quiet', name)] / 1e6:>15.2f}{med[('busy', name)] / 1e6:>15.2f}")
    for name, run in runs.items():
        v = getattr(run, "engine", None)
        chooser = None if v is None else (v.step_paths if name.startswith("step") else v.play_paths)
        if chooser is not None:
            share = chooser.parallel_calls / max(chooser.parallel_calls + chooser.serial_calls, 1)
            print(f"  {name}: parallel kernel on {share:.1%} of calls, {chooser.switches} switches")
    print("\nratios (same condition)")
    for method in ("step", "inside"):
        for k in ("parallel", "auto"):
            q = med[("quiet", f"{method} {k}")] / med[("quiet", f"{method} serial")]
            b = med[("busy", f"{method} {k}")] / med[("busy", f"{method} serial")]
            worst = min(
                figures[(c, f"{method} {k}")][r] / figures[(c, f"{method} serial")][r]
                for c in ("quiet", "busy")
                for r in range(args.rounds)
            )
            print(f"  {method} {k} / serial: quiet {q:.2f}, busy {b:.2f} (lowest round {worst:.2f})")
        if peer is not None:
            for k in KERNELS:
                q = med[("quiet", f"{method} {k}")] / med[("quiet", "OpenSpiel C++")]
                b = med[("busy", f"{method} {k}")] / med[("busy", "OpenSpiel C++")]
                print(f"  {method} {k} / OpenSpiel C++: quiet {q:.2f}, busy {b:.2f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
