"""A bot from another revision of spades_env, played in this one's arena: "today's L2".

``git worktree add /tmp/l2_old <commit>`` checks the old revision out; :class:`LegacyFactory`
(picklable, so arena workers can use it) gives policies that forward each observation to a
server process running the old code (``PYTHONPATH`` = the worktree, the same interpreter),
one old bot instance per policy, so stateful old bots keep their own memory. Observations of
this revision are converted to the old revision's version first
(:func:`spades_env.core.observation.convert_observation`).
"""

from __future__ import annotations

import json
import os
import struct
import subprocess
import sys
from pathlib import Path

import numpy as np

from spades_env.core.actions import NUM_ACTIONS
from spades_env.core.observation import convert_observation

_SERVER = r"""
import json, struct, sys
import numpy as np
from spades_env.policies.bots import make_policy
from spades_env.core.observation import OBS_SIZE
inp, out = sys.stdin.buffer, sys.stdout.buffer
bots = {}
while True:
    head = inp.read(9)
    if len(head) < 9:
        break
    op, pid, n = struct.unpack("<bii", head)
    body = inp.read(n)
    if op == 0:
        spec = json.loads(body)
        bots[pid] = make_policy(spec["name"], seed=spec["seed"], rules=spec["rules"])
        out.write(struct.pack("<i", OBS_SIZE))
    elif op == 1:
        obs = np.frombuffer(body[: 4 * OBS_SIZE], dtype=np.float32)
        mask = np.frombuffer(body[4 * OBS_SIZE :], dtype=np.int8)
        out.write(struct.pack("<i", int(bots[pid].act(obs, mask))))
    else:
        bots.pop(pid, None)
        out.write(struct.pack("<i", 0))
    out.flush()
"""


class _Server:
    """One old-code process per (worktree, this process)."""

    def __init__(self, worktree: str) -> None:
        env = dict(os.environ, PYTHONPATH=worktree, NUMBA_NUM_THREADS="1")
        self.proc = subprocess.Popen(
            [sys.executable, "-c", _SERVER],
            cwd=worktree,
            env=env,
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
        )
        self.next_id = 0

    def call(self, op: int, pid: int, body: bytes) -> int:
        assert self.proc.stdin is not None and self.proc.stdout is not None
        self.proc.stdin.write(struct.pack("<bii", op, pid, len(body)) + body)
        self.proc.stdin.flush()
        raw = self.proc.stdout.read(4)
        if len(raw) < 4:
            raise RuntimeError(f"legacy bot server (worktree {self.proc.args}) stopped")
        return struct.unpack("<i", raw)[0]


_SERVERS: dict[tuple[str, int], _Server] = {}


def _server(worktree: str) -> _Server:
    key = (worktree, os.getpid())
    if key not in _SERVERS:
        _SERVERS[key] = _Server(worktree)
    return _SERVERS[key]


class LegacyPolicy:
    """A Policy played by the old revision's bot ``name``."""

    def __init__(self, worktree: str, name: str, seed: int | None, rules) -> None:
        self.server = _server(worktree)
        self.pid = self.server.next_id
        self.server.next_id += 1
        spec = {"name": name, "seed": seed, "rules": rules.to_dict()}
        self.obs_size = self.server.call(0, self.pid, json.dumps(spec).encode())
        self.version = 1 if self.obs_size == 771 else None
        self.name = f"{name}@old"

    def act(self, observation: np.ndarray, action_mask: np.ndarray) -> int:
        obs = np.asarray(observation, dtype=np.float32)
        if obs.shape[-1] != self.obs_size:
            obs = convert_observation(obs, self.version)
        mask = np.asarray(action_mask, dtype=np.int8)[:NUM_ACTIONS]
        return self.server.call(1, self.pid, np.ascontiguousarray(obs).tobytes() + mask.tobytes())

    def __del__(self) -> None:
        try:
            self.server.call(2, self.pid, b"")
        except Exception:
            pass


class LegacyFactory:
    """``f(seed, rules) -> Policy`` for the arena: the old revision's bot ``name``."""

    def __init__(self, worktree: str | Path, name: str = "heuristic") -> None:
        self.worktree = str(Path(worktree).resolve())
        self.name = name
        self.__name__ = f"{name}@old"

    def __call__(self, seed: int | None, rules) -> LegacyPolicy:
        return LegacyPolicy(self.worktree, self.name, seed, rules)

    def __repr__(self) -> str:
        return f"{self.name}@old"
