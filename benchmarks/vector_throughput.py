"""Decisions per second of the batched engine, against OpenSpiel's spades, in one run.

    .venv/bin/python benchmarks/vector_throughput.py            # about a minute
    .venv/bin/python benchmarks/vector_throughput.py --seconds 1 --no-compile

Figures (a decision is one action of one seat: blind nil choice, bid, exchange card, card):

* ``outside``: ``VectorSpades.step`` with observations (771 float32 of the seat to act) and
  masks for every game, the actions chosen each step by numpy outside the core, as a training
  loop would (``RandomLegal``: a uniformly random legal action, the highest of random 16-bit
  keys over the legal actions, drawn with ``random_raw`` into one array per step). ``loop``
  counts the whole loop; ``engine`` only the time inside ``step``. B = 1024 and 4096; one
  thread (serial kernels, one sampler thread) and two threads (``parallel=True``,
  ``numba.set_num_threads(2)``, the numpy sampling split over two Python threads: numpy
  releases the GIL).
* ``inside``: ``VectorSpades.play_random``: random legal decisions chosen inside the compiled
  core, no observations (one refresh at the end of each call).
* OpenSpiel (optional, ``pip install open_spiel``): its C++ random simulation
  (``pyspiel.evaluate_bots`` with ``make_uniform_random_bot`` players, one spades hand per
  game, decisions counted from each game's history) and the game driven from Python with
  ``observation_tensor`` and ``legal_actions`` every decision.
* Compile cost: a fresh interpreter importing the engine and running every kernel once with
  an empty ``NUMBA_CACHE_DIR`` (compiles) and again with that cache warm.
* Peak RSS of this process (``resource.getrusage``) and the size of the state arrays.

The machine's other load counts: run it on an idle machine for figures you quote.
"""

from __future__ import annotations

import argparse
import os
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
try:
    import spades_env  # noqa: F401
except ModuleNotFoundError:  # run from a checkout without installing
    sys.path.insert(0, str(ROOT))

import numba  # noqa: E402

from spades_env.core import layout as L  # noqa: E402
from spades_env.vector import RandomLegal, VectorSpades  # noqa: E402

_COMPILE_SNIPPET = """
import time
t = time.perf_counter()
import numpy as np
from spades_env.vector import VectorSpades
for parallel in (False, True):
    v = VectorSpades(8, "tournament", seed=0, parallel=parallel)
    r = v.step(np.argmax(v.reset(0).mask, axis=1))
    v.play_random(2)
    v.state_vectors()
print(time.perf_counter() - t)
"""


def compile_times() -> tuple[float, float]:
    """(first run with an empty numba cache, second run with that cache) in seconds."""
    out = []
    with tempfile.TemporaryDirectory() as cache:
        env = dict(os.environ, NUMBA_CACHE_DIR=cache, PYTHONPATH=str(ROOT))
        for _ in range(2):
            t = time.perf_counter()
            subprocess.run([sys.executable, "-c", _COMPILE_SNIPPET], env=env, check=True, capture_output=True)
            out.append(time.perf_counter() - t)
    return out[0], out[1]


class Clock:
    """Wall time and this process's CPU time (all threads) since ``start``."""

    def __init__(self) -> None:
        self.wall0, self.cpu0 = time.perf_counter(), time.process_time()

    def read(self) -> tuple[float, float]:
        return time.perf_counter() - self.wall0, time.process_time() - self.cpu0


def bench_outside(num_envs: int, threads: int, seconds: float) -> tuple[float, float, float]:
    """(loop decisions/s, engine-only decisions/s, loop decisions per CPU second) with
    observations and masks; ``threads`` numba threads for the engine and Python threads for
    the numpy sampler (one thread: serial kernels)."""
    parallel = threads > 1
    v = VectorSpades(num_envs, "tournament", episode="game", seed=1, parallel=parallel)
    sample = RandomLegal(num_envs, seed=0, threads=threads)
    res = v.reset(1)
    for _ in range(20):  # warm up (kernels, caches)
        res = v.step(sample(res.mask))
    steps = 0
    in_step = 0.0
    perf = time.perf_counter
    clock = Clock()
    deadline = perf() + seconds
    while True:
        a = sample(res.mask)
        t0 = perf()
        res = v.step(a)
        in_step += perf() - t0
        steps += 1
        if steps % 16 == 0 and perf() >= deadline:
            break
    wall, cpu = clock.read()
    n = steps * num_envs
    return n / wall, n / in_step, n / cpu


def bench_inside(num_envs: int, parallel: bool, seconds: float) -> tuple[float, float]:
    """(decisions/s, decisions per CPU second) of random play chosen inside the core."""
    v = VectorSpades(num_envs, "tournament", episode="game", seed=2, parallel=parallel)
    per_call = max(1, 2_000_000 // num_envs)
    v.play_random(per_call)  # warm up
    calls = 0
    clock = Clock()
    while True:
        v.play_random(per_call)
        calls += 1
        if clock.read()[0] >= seconds:
            break
    wall, cpu = clock.read()
    n = calls * per_call * num_envs
    return n / wall, n / cpu


def bench_openspiel_cpp(seconds: float) -> tuple[float, float] | None:
    """(decisions/s, decisions per CPU second) of OpenSpiel's C++ random games."""
    try:
        import pyspiel
    except ImportError as exc:
        print(f"OpenSpiel skipped: {exc}")
        return None
    game = pyspiel.load_game("spades")
    bots = [pyspiel.make_uniform_random_bot(p, 1000 + p) for p in range(4)]
    pyspiel.evaluate_bots(game.new_initial_state(), bots, 0)
    decisions = 0
    games = 0
    clock = Clock()
    while True:
        state = game.new_initial_state()
        pyspiel.evaluate_bots(state, bots, games)
        # counting a game's decisions costs ~1 us against ~0.1 ms of simulation
        decisions += sum(1 for pa in state.full_history() if pa.player >= 0)
        games += 1
        if games % 20 == 0 and clock.read()[0] >= seconds:
            break
    wall, cpu = clock.read()
    return decisions / wall, decisions / cpu


def bench_openspiel_python(seconds: float) -> float | None:
    try:
        import pyspiel
    except ImportError:
        return None
    game = pyspiel.load_game("spades")
    rng = np.random.default_rng(0)
    decisions = 0
    start = time.perf_counter()
    while time.perf_counter() - start < seconds:
        state = game.new_initial_state()
        while not state.is_terminal():
            if state.is_chance_node():
                outcomes = state.chance_outcomes()
                state.apply_action(outcomes[rng.integers(len(outcomes))][0])
                continue
            p = state.current_player()
            obs = np.asarray(state.observation_tensor(p), dtype=np.float32)  # noqa: F841
            legal = state.legal_actions(p)
            state.apply_action(legal[rng.integers(len(legal))])
            decisions += 1
    return decisions / (time.perf_counter() - start)


def main(argv: list[str] | None = None) -> int:
    """Measure and print every figure."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seconds", type=float, default=3.0, help="time per measurement (default 3)")
    parser.add_argument("--sizes", type=int, nargs="+", default=[1024, 4096])
    parser.add_argument("--threads", type=int, nargs="+", default=[1, 2])
    parser.add_argument("--no-compile", action="store_true", help="skip the compile-time subprocesses")
    parser.add_argument(
        "--threading-layer",
        default="workqueue",
        help="numba threading layer for the parallel kernels (default workqueue: OpenMP's spinning "
        "waits collapse when the cores are busy)",
    )
    args = parser.parse_args(argv)
    numba.config.THREADING_LAYER = args.threading_layer

    print(
        f"cpus: {os.cpu_count()}, numba {numba.__version__}, numpy {np.__version__}, "
        f"load average {os.getloadavg()[0]:.1f}",
        flush=True,
    )
    if not args.no_compile:
        first, cached = compile_times()
        print(
            f"compile: first import + every kernel, empty NUMBA_CACHE_DIR: {first:.1f} s; cached: {cached:.2f} s"
        )
    s = args.seconds
    rows = []
    print("decisions/s (M); cpu: per CPU-second of this process, which the machine's other load")
    print("affects less than wall time")
    for threads in args.threads:
        parallel = threads > 1
        if parallel:
            numba.set_num_threads(min(threads, numba.config.NUMBA_NUM_THREADS))
        for B in args.sizes:
            loop, engine, loop_cpu = bench_outside(B, threads, s)
            inside, inside_cpu = bench_inside(B, parallel, s)
            rows.append((threads, B, loop, engine, inside, loop_cpu, inside_cpu))
            print(
                f"threads {threads}  B {B:>5}  outside: loop {loop / 1e6:5.2f}  engine {engine / 1e6:5.2f}"
                f"  loop cpu {loop_cpu / 1e6:5.2f}   inside: {inside / 1e6:5.2f}  cpu {inside_cpu / 1e6:5.2f}",
                flush=True,
            )
    if any(t > 1 for t in args.threads):
        print(f"numba threading layer: {numba.threading_layer()}")
    cpp = bench_openspiel_cpp(s)
    py = bench_openspiel_python(s)
    if cpp is not None:
        print(
            f"OpenSpiel C++ random simulation (evaluate_bots): {cpp[0] / 1e6:5.2f} M/s  cpu {cpp[1] / 1e6:5.2f}"
        )
        print(f"OpenSpiel from Python with observation tensors: {py / 1e3:8.1f} k/s")
    best_loop = max(r[2] for r in rows)
    best_inside = max(r[4] for r in rows)
    one = [r for r in rows if r[0] == 1]
    print()
    print(
        f"best outside-core loop (obs + masks, numpy actions): {best_loop / 1e6:.2f} M decisions/s (target >= 3)"
    )
    print(f"best inside-core: {best_inside / 1e6:.2f} M decisions/s (target >= 10)")
    if cpp is not None:
        print(f"ratio outside-core loop / OpenSpiel C++: {best_loop / cpp[0]:.2f} (target >= 1.3)")
        print(f"ratio inside-core / OpenSpiel C++: {best_inside / cpp[0]:.2f}")
        if one:
            print(
                "per CPU-second, one thread: outside-core loop / OpenSpiel C++: "
                f"{max(r[5] for r in one) / cpp[1]:.2f}; inside-core / OpenSpiel C++: "
                f"{max(r[6] for r in one) / cpp[1]:.2f}"
            )
        print(f"ratio outside-core loop / OpenSpiel Python+obs: {best_loop / py:.0f}")
    B = max(args.sizes)
    state_mb = B * L.STATE_SIZE * 8 / 2**20
    print(f"engine state for {B} games: {state_mb:.1f} MiB ({L.STATE_SIZE} int64 per game)")
    print(f"peak RSS: {resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024:.0f} MiB")
    return 0


if __name__ == "__main__":
    sys.exit(main())
