"""Compiled L2 against the Python L2 of an earlier revision, and behaviour-cloning teacher data.

    .venv/bin/python benchmarks/l2_speed.py [--worktree /tmp/l2_old] [--commit bbf3458]
        [--decisions 20000] [--rounds 3]

Measured in one run, interleaved rounds, medians:

* **decisions/s of L2** on the same recorded decisions (L2 playing every seat of
  ``VectorSpades`` games, tournament rules): the compiled ``heuristic_actions`` on the whole
  batch (all threads numba has, and 1 thread), the compiled ``HeuristicPolicy.act`` one
  observation at a time, and the Python ``HeuristicPolicy`` of ``--commit`` one at a time,
  timed inside its own process (a ``git worktree`` of that revision, its observations
  converted to its version before its timed loop: nothing of ours inside the peer's loop).
* **behaviour-cloning teacher data** (``training.bc.teacher_chunk``, L2 teacher, 64 games):
  decisions/s of this revision (batched compiled teacher) and of ``--commit`` (one Python bot
  per seat), each timed in its own process.
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
OBS_V1_SIZE = 771
"""The older revision's observation (version 1): the first 771 entries of version 2."""
sys.path.insert(0, str(ROOT))

import numpy as np  # noqa: E402

PEER_L2 = r"""
import sys, time, numpy as np
from spades_env.policies.bots import make_policy
obs = np.load(sys.argv[1]); mask = np.load(sys.argv[2])
bot = make_policy("heuristic", seed=0)
for i in range(min(200, len(obs))):
    bot.act(obs[i], mask[i])  # warm-up: compilation of the core's helpers
t = time.perf_counter()
for i in range(len(obs)):
    bot.act(obs[i], mask[i])
print(len(obs) / (time.perf_counter() - t))
"""

TEACHER = r"""
import sys, time
sys.path.insert(0, sys.argv[1])
from training.bc import teacher_chunk
teacher_chunk("tournament", "heuristic", 2000, 64, seed=1)  # warm-up
n = int(sys.argv[2])
t = time.perf_counter()
teacher_chunk("tournament", "heuristic", n, 64, seed=2)
print(n / (time.perf_counter() - t))
"""


def record(decisions: int, seed: int = 0) -> tuple[np.ndarray, np.ndarray]:
    """Observations and masks of L2 playing every seat of 256 games (untimed)."""
    from spades_env.envs.vector import VectorSpades
    from spades_env.policies.bots.heuristic import heuristic_actions

    eng = VectorSpades(256, "tournament", seed=seed)
    res = eng.reset(seed=seed)
    obs, mask = [], []
    while sum(len(o) for o in obs) < decisions:
        obs.append(res.obs.copy())
        mask.append(res.mask.copy())
        res = eng.step(heuristic_actions(res.obs, res.mask))
    return np.concatenate(obs)[:decisions], np.concatenate(mask)[:decisions]


def run_peer(code: str, cwd: str, args: list[str], pythonpath: str) -> float:
    env = dict(os.environ, PYTHONPATH=pythonpath, NUMBA_NUM_THREADS="1", OMP_NUM_THREADS="1")
    out = subprocess.run(
        [sys.executable, "-c", code, *args], cwd=cwd, env=env, capture_output=True, text=True, check=True
    )
    return float(out.stdout.strip().splitlines()[-1])


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--worktree", default="/tmp/l2_old", help="git worktree of the older revision")
    ap.add_argument("--commit", default="bbf3458", help="the older revision (today's L2 before the rewrite)")
    ap.add_argument("--decisions", type=int, default=20000)
    ap.add_argument("--teacher-decisions", type=int, default=20000)
    ap.add_argument("--rounds", type=int, default=3)
    a = ap.parse_args()
    import numba

    from spades_env.policies.bots.heuristic import HeuristicPolicy, heuristic_actions

    wt = Path(a.worktree)
    if not wt.exists():
        subprocess.run(["git", "-C", str(ROOT), "worktree", "add", "-f", str(wt), a.commit], check=True)
    obs, mask = record(a.decisions)
    tmp = Path(tempfile.mkdtemp())
    np.save(tmp / "obs_v1.npy", np.ascontiguousarray(obs[:, :OBS_V1_SIZE]))
    np.save(tmp / "mask.npy", mask)
    assert np.load(tmp / "obs_v1.npy").shape[1] == OBS_V1_SIZE
    threads = numba.get_num_threads()
    heuristic_actions(obs[:512], mask[:512])  # compile
    heuristic_actions(obs[:512], mask[:512], parallel=True)
    bot = HeuristicPolicy()
    res: dict[str, list[float]] = {k: [] for k in ("batch", "batch1", "one", "peer", "teacher", "teacher_peer")}
    for r in range(a.rounds):
        numba.set_num_threads(threads)
        t = time.perf_counter()
        heuristic_actions(obs, mask, parallel=True)
        res["batch"].append(len(obs) / (time.perf_counter() - t))
        t = time.perf_counter()
        heuristic_actions(obs, mask)
        res["batch1"].append(len(obs) / (time.perf_counter() - t))
        n1 = min(len(obs), 5000)
        t = time.perf_counter()
        for i in range(n1):
            bot.act(obs[i], mask[i])
        res["one"].append(n1 / (time.perf_counter() - t))
        res["peer"].append(
            run_peer(PEER_L2, str(wt), [str(tmp / "obs_v1.npy"), str(tmp / "mask.npy")], str(wt))
        )
        res["teacher"].append(run_peer(TEACHER, str(ROOT), [str(ROOT), str(a.teacher_decisions)], str(ROOT)))
        res["teacher_peer"].append(run_peer(TEACHER, str(wt), [str(wt), str(a.teacher_decisions // 4)], str(wt)))
        print(f"round {r + 1}/{a.rounds} done", flush=True)
    med = {k: statistics.median(v) for k, v in res.items()}
    load = os.getloadavg()[0]
    print(f"\nL2 decisions/s, {len(obs):,} recorded decisions, medians of {a.rounds} rounds, load {load:.1f}")
    print(f"  compiled heuristic_actions, batch, {threads} threads: {med['batch']:>12,.0f}  ({med['batch'] / med['peer']:.0f}x)")
    print(f"  compiled heuristic_actions, batch, serial:     {med['batch1']:>12,.0f}  ({med['batch1'] / med['peer']:.0f}x)")
    print(f"  compiled HeuristicPolicy.act, one at a time:   {med['one']:>12,.0f}  ({med['one'] / med['peer']:.0f}x)")
    print(f"  Python L2 of {a.commit}, one at a time:        {med['peer']:>12,.0f}  (1x; its own process)")
    print("\nbehaviour-cloning teacher data (L2 teacher, 64 games, each in its own process, 1 thread):")
    print(f"  this revision (batched compiled L2): {med['teacher']:>10,.0f} decisions/s ({med['teacher'] / med['teacher_peer']:.0f}x)")
    print(f"  {a.commit} (Python bots per seat):   {med['teacher_peer']:>10,.0f} decisions/s")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
