"""Wall time of ``spades gauntlet``: batched (the default) against one game at a time, in one run.

    .venv/bin/python benchmarks/gauntlet_speed.py                          # 1,000 games per matchup
    .venv/bin/python benchmarks/gauntlet_speed.py --games 200 --rounds 1 --opponents heuristic blind
    .venv/bin/python benchmarks/gauntlet_speed.py --opponents heuristic blind --make-run /tmp/l2_old

Each round runs the same command line twice as a user would (a fresh ``spades`` process each:
imports, numba's cached kernels and the checkpoint load are in the time), once with the default
batched path and once with ``--one-at-a-time`` (the path of the earlier ``make run``: one game
at a time on ``--workers`` processes, default 2); the order alternates between rounds and the
medians are reported with the load average. Both write ``gauntlet.json``; the script checks the
two are identical apart from their timing fields, and fails otherwise. ``--make-run WORKTREE``
also times the ``make run`` of an earlier revision, the reference of issue 14's 5x target:
``spades gauntlet checkpoints/spades_ppo_v1 --games 500`` (one game at a time, the default
opponents) run from a ``git worktree`` of it (``git worktree add -f /tmp/l2_old bbf3458``, as
``l2_speed.py`` uses) with its own code on ``PYTHONPATH``, once untimed first for its numba cache.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any


def _strip(d: Any) -> Any:
    if isinstance(d, dict):
        return {k: _strip(v) for k, v in d.items() if k != "seconds"}
    if isinstance(d, list):
        return [_strip(x) for x in d]
    return d


def main(argv: list[str] | None = None) -> int:
    """Time both paths and print the figures."""
    from spades_env.cli.common import ListOption

    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--policy", default="spades4_net_v1", help="agent id or checkpoint path (default spades4_net_v1)")
    p.add_argument("--games", type=int, default=1000, help="games per matchup (default 1000)")
    p.add_argument(
        "--opponents", nargs="*", action=ListOption, default=None, help="default: the gauntlet's (random greedy heuristic)"
    )
    p.add_argument("--rounds", type=int, default=1)
    p.add_argument("--workers", type=int, default=2, help="processes of the one-at-a-time path (default 2)")
    p.add_argument(
        "--make-run", default=None, metavar="WORKTREE", help="also time the make run of the revision checked out there"
    )
    args = p.parse_args(argv)
    spades = str(Path(sys.executable).with_name("spades"))
    base = [spades, "gauntlet", args.policy, "--games", str(args.games), "--no-progress"]
    if args.opponents is not None:
        base += ["--opponents", *args.opponents]
    modes = {"batched": [], "one at a time": ["--one-at-a-time", "--workers", str(args.workers)]}
    ref_cmd = [sys.executable, "-m", "spades_env.cli", "gauntlet", "checkpoints/spades_ppo_v1", "--games", "500", "--no-progress"]
    ref_env = None
    if args.make_run:
        wt = Path(args.make_run).resolve()
        ref_env = {**os.environ, "PYTHONPATH": str(wt)}
        modes["earlier make run"] = []
        subprocess.run([*ref_cmd, "--games", "4"], check=True, capture_output=True, cwd=wt, env=ref_env)  # its cache
    times: dict[str, list[float]] = {m: [] for m in modes}
    loads = []
    print(f"cpus {os.cpu_count()}; load average at start {os.getloadavg()[0]:.2f}", flush=True)
    with tempfile.TemporaryDirectory() as tmp:
        for r in range(max(1, args.rounds)):
            order = list(modes) if r % 2 == 0 else list(reversed(modes))
            outs = {}
            for m in order:
                out = Path(tmp) / f"{r}-{m.replace(' ', '_')}"
                t = time.perf_counter()
                if m == "earlier make run":
                    subprocess.run([*ref_cmd, "--out", str(out)], check=True, capture_output=True, cwd=wt, env=ref_env)
                else:
                    subprocess.run([*base, *modes[m], "--out", str(out)], check=True, capture_output=True)
                times[m].append(time.perf_counter() - t)
                outs[m] = json.loads((out / "gauntlet.json").read_text())
                print(f"round {r + 1}: {m} {times[m][-1]:.1f} s (load {os.getloadavg()[0]:.2f})", flush=True)
            want = _strip(outs["one at a time"])
            if any(_strip(v) != want for k, v in outs.items() if k != "earlier make run"):
                print("the paths' gauntlet.json differ", file=sys.stderr)
                return 1
            loads.append(os.getloadavg()[0])
    med = {m: statistics.median(v) for m, v in times.items()}
    o = med["one at a time"]
    print(
        f"\n`{' '.join(base[1:])}`: medians of {args.rounds} rounds, load average {min(loads):.2f}-{max(loads):.2f}"
    )
    print("| path | method | wall s | one at a time / this |" + (" earlier make run / this |" if args.make_run else ""))
    print("|---|---|---:|---:|" + ("---:|" if args.make_run else ""))
    for m, t in med.items():
        method = {
            "one at a time": f"`--one-at-a-time --workers {args.workers}`",
            "earlier make run": f"`spades gauntlet checkpoints/spades_ppo_v1 --games 500` from {args.make_run}",
        }.get(m, "one process, runs stepped together on VectorSpades")
        ref = f" {med['earlier make run'] / t:.1f}x |" if args.make_run else ""
        print(f"| {m} | {method} | {t:.1f} | {o / t:.1f}x |{ref}")
    print("gauntlet.json identical on every path (timing fields aside)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
