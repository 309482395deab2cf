"""Decisions per second of the batched engine, against OpenSpiel's spades, in one run.

    .venv/bin/python benchmarks/vector_throughput.py            # about 80 s
    .venv/bin/python benchmarks/vector_throughput.py --seconds 0.5 --rounds 1 --no-compile

A decision is one action of one seat (blind nil choice, bid, exchange card, card). Every figure
is the median of ``--rounds`` rounds; in each round every measurement runs once, ours and the
peers alternating, so that the machine's other load falls on all of them alike. Each figure is
printed with its method:

* ``outside``: ``VectorSpades.step`` with observations (``OBS_SIZE`` float32 of the seat to
  act, or with ``obs`` ``uint8`` the compact observation: ``OBS_SIZE`` bytes plus 24 float32,
  ``VectorSpades(obs_dtype="uint8")``) and masks for every game, the actions chosen each step
  outside the core from the masks ``step`` returned (column ``actions``: ``compiled``,
  ``RandomLegal``: a uniformly random legal action in one compiled call over the masks, as a
  compiled policy would; each game its own generator). ``loop`` counts the whole loop (decisions =
  steps x B); ``engine`` only the time inside ``step``.
* ``inside``: ``VectorSpades.play_random(n)``: ``n`` random legal decisions per game chosen
  inside the compiled core, no observations (one refresh at the end of each call); decisions =
  calls x n x B, the same work per call in every kernel.
* Kernels: ``serial`` (``parallel=False``: a plain loop over games), ``prange/1`` and
  ``prange/2`` (``parallel=True``: numba's ``prange`` loop, ``numba.set_num_threads(1 or 2)``;
  with 2 threads the sampler also runs over numba's threads). A ``prange`` kernel cuts the games into 64 contiguous chunks and
  steps each with the serial loop, so ``prange/1`` differs from ``serial`` only by numba's
  parallel launch (about 40 us a call with the workqueue layer here, 2-4 us with OpenMP).
* OpenSpiel C++ (optional, ``pip install open_spiel``): its own C++ random simulation as its
  users run it at its best: ``pyspiel.evaluate_bots`` with ``make_uniform_random_bot`` players
  (the whole hand, chance deals included, in one C++ call), one fresh
  ``new_initial_state()`` per game; nothing else in the timed loop. An OpenSpiel spades game
  is one hand of exactly 56 decisions (4 bids, 52 cards), so decisions = games x 56, checked
  untimed on 200 games from each game's history before timing. ``1 proc`` is one worker
  process; ``2 procs`` two worker processes started together (OpenSpiel is single-threaded:
  that is how its users fill two cores), their rates summed.
* ``T procs`` of ours: the serial engine's outside-core loop (uint8 observations, compiled
  sampler, the smallest ``--sizes`` B) in ``--threads`` worker processes at once, their rates
  summed: the same method as OpenSpiel's ``T procs``.
* OpenSpiel from Python: the game driven one decision at a time from Python with
  ``observation_tensor`` and ``legal_actions`` (as an RL loop on OpenSpiel would).
* Compile cost: a fresh interpreter importing the engine and running every kernel once with
  an empty ``NUMBA_CACHE_DIR`` (compiles) and again with that cache warm.
* Peak RSS of this process (``resource.getrusage``) and the size of the state arrays.

Ratios are taken between figures of the same run at the same number of cores.
"""

from __future__ import annotations

import argparse
import os
import random
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
try:
    import spades_env  # noqa: F401
except ModuleNotFoundError:  # run from a checkout without installing
    sys.path.insert(0, str(ROOT))

import numba  # noqa: E402

from spades_env.cli.common import ListOption  # noqa: E402
from spades_env.core import layout as L  # noqa: E402
from spades_env.core.observation import OBS_SIZE  # noqa: E402
from spades_env.envs.vector import RandomLegal, VectorSpades  # noqa: E402

OPENSPIEL_DECISIONS_PER_GAME = 56  # 4 bids + 52 cards; checked before timing

_COMPILE_SNIPPET = """
import time
t = time.perf_counter()
import numpy as np
from spades_env.envs.vector import VectorSpades
for parallel in (False, True):
    v = VectorSpades(8, "tournament", seed=0, parallel=parallel)
    r = v.step(np.argmax(v.reset(0).mask, axis=1))
    v.play_random(2)
    v.state_vectors()
print(time.perf_counter() - t)
"""

# One OpenSpiel worker: checks the decisions per game untimed, then answers "run SECONDS SEED"
# lines on stdin with "games wall cpu" (evaluate_bots games, nothing else timed).
_OPENSPIEL_WORKER = """
import sys, time
import pyspiel
game = pyspiel.load_game("spades")
bots = [pyspiel.make_uniform_random_bot(p, 1000 + p) for p in range(4)]
counts = set()
for i in range(200):
    state = game.new_initial_state()
    pyspiel.evaluate_bots(state, bots, i)
    counts.add(sum(1 for pa in state.full_history() if pa.player >= 0))
print("decisions", *sorted(counts), game.max_game_length(), flush=True)
evaluate, new_state = pyspiel.evaluate_bots, game.new_initial_state
for line in sys.stdin:
    seconds, seed = float(line.split()[1]), int(line.split()[2])
    games = 0
    c0, t0 = time.process_time(), time.perf_counter()
    deadline = t0 + seconds
    while True:
        for _ in range(50):
            evaluate(new_state(), bots, seed + games)
            games += 1
        if time.perf_counter() >= deadline:
            break
    print(games, time.perf_counter() - t0, time.process_time() - c0, flush=True)
"""


# One worker of our serial engine (the fastest one-core loop: compact observations, compiled
# sampler), as OpenSpiel's users fill cores with processes: "ready" once warm, then answers
# "run SECONDS SEED" lines with "decisions wall cpu".
_ENGINE_WORKER = """
import sys, time
sys.path.insert(0, sys.argv[1])
from spades_env.envs.vector import RandomLegal, VectorSpades
B = int(sys.argv[2])
v = VectorSpades(B, "tournament", episode="game", seed=1, obs_dtype="uint8")
sample = RandomLegal(B, seed=0)
res = v.reset(1)
for _ in range(20):
    res = v.step(sample(res.mask))
print("ready", flush=True)
for line in sys.stdin:
    seconds = float(line.split()[1])
    steps = 0
    c0, t0 = time.process_time(), time.perf_counter()
    while True:
        res = v.step(sample(res.mask))
        steps += 1
        if steps % 16 == 0 and time.perf_counter() - t0 >= seconds:
            break
    print(steps * B, time.perf_counter() - t0, time.process_time() - c0, flush=True)
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


class Result:
    """Decisions, wall seconds and CPU seconds of one timed run (``engine``: seconds inside
    ``step``, for the outside-core loop)."""

    def __init__(self, decisions: int, wall: float, cpu: float, engine: float = 0.0) -> None:
        self.decisions, self.wall, self.cpu, self.engine = decisions, wall, cpu, engine


class Outside:
    """``VectorSpades.step`` with observations and masks, actions from ``RandomLegal``."""

    def __init__(
        self, num_envs: int, parallel: bool, threads: int, obs_dtype: str = "float32", sampler: str = "compiled"
    ) -> None:
        self.B, self.threads = num_envs, threads
        self.v = VectorSpades(
            num_envs, "tournament", episode="game", seed=1, parallel=parallel, obs_dtype=obs_dtype
        )
        self.sample = RandomLegal(num_envs, seed=0, parallel=parallel)
        self.res = self.v.reset(1)
        for _ in range(20):  # warm up (kernels, caches)
            self.res = self.v.step(self.sample(self.res.mask))

    def __call__(self, seconds: float) -> Result:
        v, sample, res = self.v, self.sample, self.res
        perf = time.perf_counter
        steps = 0
        in_step = 0.0
        c0, w0 = time.process_time(), perf()
        deadline = w0 + seconds
        while True:
            a = sample(res.mask)
            t0 = perf()
            res = v.step(a)
            in_step += perf() - t0
            steps += 1
            if steps % 16 == 0 and perf() >= deadline:
                break
        wall, cpu = perf() - w0, time.process_time() - c0
        self.res = res
        return Result(steps * self.B, wall, cpu, in_step)


class Inside:
    """``VectorSpades.play_random``: decisions chosen inside the compiled core; every call does
    the same work (``per_call`` decisions per game)."""

    def __init__(self, num_envs: int, parallel: bool) -> None:
        self.B = num_envs
        self.v = VectorSpades(num_envs, "tournament", episode="game", seed=2, parallel=parallel)
        self.per_call = max(1, 1_000_000 // num_envs)
        self.v.play_random(self.per_call)  # warm up

    def __call__(self, seconds: float) -> Result:
        calls = 0
        c0, w0 = time.process_time(), time.perf_counter()
        while True:
            self.v.play_random(self.per_call)
            calls += 1
            if time.perf_counter() - w0 >= seconds:
                break
        wall, cpu = time.perf_counter() - w0, time.process_time() - c0
        return Result(calls * self.per_call * self.B, wall, cpu)


class Workers:
    """Worker processes each running one timed loop on request (``script``: answers "run
    SECONDS SEED" lines with "units wall cpu"; a unit is ``per_unit`` decisions)."""

    def __init__(
        self, count: int, script: list[str], per_unit: int, check_header: Callable[[list[str]], None]
    ):
        self.per_unit = per_unit
        self.procs = [
            subprocess.Popen(
                [sys.executable, "-c", *script], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True
            )
            for _ in range(count)
        ]
        self.seed = 0
        for p in self.procs:
            assert p.stdout is not None
            check_header(p.stdout.readline().split())

    def run(self, count: int, seconds: float) -> Result:
        """``count`` workers at once; decisions summed, wall and CPU seconds the workers' mean
        (so decisions / wall is the sum of their rates)."""
        procs = self.procs[:count]
        for p in procs:
            assert p.stdin is not None
            p.stdin.write(f"run {seconds} {self.seed}\n")
            p.stdin.flush()
            self.seed += 1_000_000
        units = 0
        rate = cpu_rate = 0.0
        for p in procs:
            assert p.stdout is not None
            g, w, c = p.stdout.readline().split()
            units += int(g)
            rate += int(g) / float(w)
            cpu_rate += int(g) / float(c)
        d = units * self.per_unit
        # report as one result whose decisions / wall = the summed rate
        return Result(d, d / (rate * self.per_unit), d / (cpu_rate * self.per_unit))

    def close(self) -> None:
        for p in self.procs:
            assert p.stdin is not None
            p.stdin.close()
        for p in self.procs:
            p.wait(timeout=10)


def _check_openspiel(words: list[str]) -> None:
    if not words or words[0] != "decisions":
        raise RuntimeError("OpenSpiel worker failed to start")
    counts = [int(w) for w in words[1:]]
    if counts != [OPENSPIEL_DECISIONS_PER_GAME, OPENSPIEL_DECISIONS_PER_GAME]:
        raise RuntimeError(f"OpenSpiel spades games are not all 56 decisions long: {counts}")


def _check_engine(words: list[str]) -> None:
    if words != ["ready"]:
        raise RuntimeError(f"engine worker failed to start: {words}")


def openspiel_workers(count: int) -> Workers:
    """Processes running OpenSpiel's C++ random simulation (``evaluate_bots``)."""
    return Workers(count, [_OPENSPIEL_WORKER], OPENSPIEL_DECISIONS_PER_GAME, _check_openspiel)


def engine_workers(count: int, num_envs: int) -> Workers:
    """Processes each running our serial engine's outside-core loop (uint8, compiled actions)."""
    return Workers(count, [_ENGINE_WORKER, str(ROOT), str(num_envs)], 1, _check_engine)


def openspiel_python(seconds: float) -> Result:
    """OpenSpiel's spades driven from Python, with an observation tensor every decision."""
    import pyspiel

    game = pyspiel.load_game("spades")
    rnd = random.Random(0)
    decisions = 0
    c0, w0 = time.process_time(), time.perf_counter()
    while time.perf_counter() - w0 < seconds:
        state = game.new_initial_state()
        while not state.is_terminal():
            if state.is_chance_node():
                outcomes = state.chance_outcomes()
                state.apply_action(outcomes[rnd.randrange(len(outcomes))][0])
                continue
            p = state.current_player()
            obs = np.asarray(state.observation_tensor(p), dtype=np.float32)  # noqa: F841
            legal = state.legal_actions(p)
            state.apply_action(legal[rnd.randrange(len(legal))])
            decisions += 1
    return Result(decisions, time.perf_counter() - w0, time.process_time() - c0)


def main(argv: list[str] | None = None) -> int:
    """Measure and print every figure."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seconds", type=float, default=1.0, help="time per measurement (default 1)")
    parser.add_argument(
        "--rounds", type=int, default=3, help="interleaved rounds; medians are reported (default 3)"
    )
    parser.add_argument("--sizes", type=int, nargs="+", action=ListOption, default=[1024, 4096])
    parser.add_argument(
        "--threads", type=int, default=2, help="threads (and OpenSpiel processes) of the multi-core rows"
    )
    parser.add_argument("--no-compile", action="store_true", help="skip the compile-time subprocesses")
    for flag, choices, what in (
        ("--obs-dtypes", ["float32", "uint8"], "observation dtypes of the outside-core rows"),
        ("--samplers", ["compiled"], "how the outside-core rows choose their actions"),
    ):
        parser.add_argument(flag, nargs="+", action=ListOption, default=choices, choices=choices, help=f"{what} (default all)")
    parser.add_argument(
        "--threading-layer",
        default="default",
        help="numba threading layer for the parallel kernels (default: numba's choice, OpenMP here; "
        "its launch is 2-4 us against workqueue's 40 us; with other load on the cores OpenMP's "
        "spinning waits can collapse, then try workqueue)",
    )
    args = parser.parse_args(argv)
    numba.config.THREADING_LAYER = args.threading_layer
    T = max(2, args.threads)

    print(
        f"cpus: {os.cpu_count()}, numba {numba.__version__}, numpy {np.__version__}, "
        f"OBS_SIZE {OBS_SIZE}; load average at start {os.getloadavg()[0]:.2f}",
        flush=True,
    )
    if not args.no_compile:
        first, cached = compile_times()
        print(
            f"compile: first import + every kernel, empty NUMBA_CACHE_DIR: {first:.1f} s; cached: {cached:.2f} s"
        )

    kernels = [("serial", False, 1), ("prange/1", True, 1), (f"prange/{T}", True, T)]
    runs: dict[tuple, Callable[[float], Result]] = {}
    threads_of: dict[tuple, int] = {}
    for name, parallel, t in kernels:
        numba.set_num_threads(min(t, numba.config.NUMBA_NUM_THREADS))
        for B in args.sizes:
            for dt in args.obs_dtypes:
                for sm in args.samplers:
                    runs[("outside", name, B, dt, sm)] = Outside(B, parallel, t, dt, sm)
                    threads_of[("outside", name, B, dt, sm)] = t
            runs[("inside", name, B)] = Inside(B, parallel)
            threads_of[("inside", name, B)] = t
    ours = engine_workers(T, min(args.sizes))
    runs[("procs", T)] = lambda s: ours.run(T, s)
    workers = None
    try:
        workers = openspiel_workers(T)
        runs[("openspiel", "1 proc")] = lambda s: workers.run(1, s)
        runs[("openspiel", f"{T} procs")] = lambda s: workers.run(T, s)
        runs[("openspiel-python",)] = openspiel_python
    except (ImportError, OSError, RuntimeError) as exc:
        print(f"OpenSpiel skipped: {exc}")
    results: dict[tuple, list[Result]] = {k: [] for k in runs}
    loads = []
    for r in range(max(1, args.rounds)):
        keys = list(runs)
        if r % 2:
            keys.reverse()  # alternate the order: neither side always runs first
        for k in keys:
            numba.set_num_threads(min(threads_of.get(k, 1), numba.config.NUMBA_NUM_THREADS))
            results[k].append(runs[k](args.seconds))
        loads.append(os.getloadavg()[0])
        print(f"round {r + 1}/{args.rounds} done, load average {loads[-1]:.2f}", flush=True)
    ours.close()
    if workers is not None:
        workers.close()

    def med(k: tuple, what: str = "wall") -> float:
        return statistics.median(x.decisions / getattr(x, what) for x in results[k])

    print(
        f"\nmedians of {args.rounds} interleaved rounds x {args.seconds:g} s; load average "
        f"{min(loads):.2f}-{max(loads):.2f} during the rounds; decisions/s in millions; "
        "cpu: per CPU-second of the process(es)"
    )
    print(
        "| kernel | threads | B | obs | actions | outside: loop | outside: engine only | loop cpu | inside | inside cpu |"
    )
    print("|---|---:|---:|---|---|---:|---:|---:|---:|---:|")
    for name, _parallel, t in kernels:
        for B in args.sizes:
            i = ("inside", name, B)
            for dt in args.obs_dtypes:
                for sm in args.samplers:
                    o = ("outside", name, B, dt, sm)
                    print(
                        f"| {name} | {t} | {B} | {dt} | {sm} | {med(o) / 1e6:.2f} | {med(o, 'engine') / 1e6:.2f} | "
                        f"{med(o, 'cpu') / 1e6:.2f} | {med(i) / 1e6:.2f} | {med(i, 'cpu') / 1e6:.2f} |"
                    )
    print(f"numba threading layer: {numba.threading_layer()}")
    have_os = ("openspiel", "1 proc") in results
    if have_os:
        c1, cT, py = ("openspiel", "1 proc"), ("openspiel", f"{T} procs"), ("openspiel-python",)
        print(
            f"OpenSpiel C++ random simulation (evaluate_bots, uniform random bots, 56 decisions a game "
            f"counted outside the loop): 1 proc {med(c1) / 1e6:.2f} M/s (cpu {med(c1, 'cpu') / 1e6:.2f}); "
            f"{T} procs {med(cT) / 1e6:.2f} M/s (cpu {med(cT, 'cpu') / 1e6:.2f})"
        )
        print(f"OpenSpiel from Python with observation tensors: {med(py) / 1e3:.1f} k/s")

    def best(
        kind: str, names: list[str], dts: list[str] | None = None, sms: list[str] | None = None
    ) -> tuple[float, str]:
        if kind == "inside":
            return max((med((kind, n, B)), f"{n}, B {B}") for n in names for B in args.sizes)
        return max(
            (med((kind, n, B, dt, sm)), f"{n}, B {B}, {dt}, {sm} actions")
            for n in names
            for B in args.sizes
            for dt in (dts or args.obs_dtypes)
            for sm in (sms or args.samplers)
        )

    one = ["serial", "prange/1"]
    multi = [f"prange/{T}"]
    print()
    for label, names, peer in (("1 core", one, "1 proc"), (f"{T} cores", multi, f"{T} procs")):
        ins, ins_at = best("inside", names)
        for dts, sms in [([dt], [sm]) for dt in args.obs_dtypes for sm in args.samplers]:
            lo, lo_at = best("outside", names, dts, sms)
            line = f"{label}: best outside-core loop {lo / 1e6:.2f} M/s ({lo_at}); inside-core {ins / 1e6:.2f} M/s ({ins_at})"
            if have_os:
                ref = med(("openspiel", peer))
                line += f"; / OpenSpiel C++ {peer}: outside {lo / ref:.2f}x, inside {ins / ref:.2f}x"
            print(line)
    mine = med(("procs", T))
    line = (
        f"{T} cores: our serial engine in {T} processes (B {min(args.sizes)} each, uint8, compiled actions, "
        f"rates summed) {mine / 1e6:.2f} M/s"
    )
    if have_os:
        line += f"; / OpenSpiel C++ {T} procs: {mine / med(('openspiel', f'{T} procs')):.2f}x"
    print(line)
    for B in args.sizes:
        s, p1, pT = (med(("inside", n, B)) for n in ("serial", "prange/1", f"prange/{T}"))
        print(
            f"inside-core, B {B}: prange/1 / serial {p1 / s:.2f}x (same work, different compiled loop); "
            f"prange/{T} / prange/1 {pT / p1:.2f}x (threads)"
        )
    if have_os:
        ref = med(("openspiel", "1 proc"), "cpu")
        lo = max(
            med(("outside", n, B, dt, sm), "cpu")
            for n in one
            for B in args.sizes
            for dt in args.obs_dtypes
            for sm in args.samplers
        )
        ins = max(med(("inside", n, B), "cpu") for n in one for B in args.sizes)
        print(
            f"per CPU-second (1 core; less affected by other load): outside-core loop / OpenSpiel C++ "
            f"{lo / ref:.2f}x, inside-core / OpenSpiel C++ {ins / ref:.2f}x"
        )
        print(f"outside-core loop / OpenSpiel Python+obs (1 core): {best('outside', one)[0] / med(py):.0f}x")
    B = max(args.sizes)
    state_mb = B * L.STATE_SIZE * 8 / 2**20
    print(f"engine state for {B} games: {state_mb:.1f} MiB ({L.STATE_SIZE} int64 per game)")
    print(f"peak RSS: {resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024:.0f} MiB")
    return 0


if __name__ == "__main__":
    sys.exit(main())
