#!/usr/bin/env bash
# Wheel smoke: build the wheel, install it (runtime deps only, no torch) into a fresh venv, and
# use it from a folder outside the checkout: the rules presets, Gymnasium's registry, the CLI
# playing the shipped checkpoint (copied outside the checkout first), pictures.
#   .ci/wheel_smoke.sh            (called by .ci/run; PY picks the interpreter, default python3)
set -euo pipefail
ROOT="$(cd "$(dirname "$0")/.." && pwd)"
PY="${PY:-python3}"
WORK="$(mktemp -d)"
trap 'rm -rf "$WORK"' EXIT

echo "== build the wheel"
if [ -x "$ROOT/.venv/bin/python" ]; then BUILD_PY="$ROOT/.venv/bin/python"; else BUILD_PY="$PY"; fi
"$BUILD_PY" -m pip wheel --no-deps --no-build-isolation -q -w "$WORK/dist" "$ROOT"
WHEEL="$(ls "$WORK"/dist/spades_env-*.whl)"
echo "   $(basename "$WHEEL")"

echo "== install it into a fresh venv"
"$PY" -m venv "$WORK/venv"
"$WORK/venv/bin/pip" install -q -c "$ROOT/constraints.txt" "$WHEEL"
if "$WORK/venv/bin/pip" show -q torch 2>/dev/null; then
    echo "FAIL: the runtime dependencies pulled torch" >&2; exit 1
fi

echo "== use it from outside the checkout"
mkdir -p "$WORK/outside"
cd "$WORK/outside"
"$WORK/venv/bin/python" - "$WORK/venv" "$ROOT" <<'PYEOF'
import sys

import gymnasium
import numpy as np

import spades_env

venv = sys.argv[1]
assert spades_env.__file__.startswith(venv), f"imported from {spades_env.__file__}, not the venv"
print("   spades_env", spades_env.__version__, "from", spades_env.__file__)

e = spades_env.env(rules="openspiel")
e.reset(seed=0)
assert e.unwrapped.rules.name == "openspiel"
for agent in e.agent_iter(max_iter=200):
    obs, r, term, trunc, info = e.last()
    e.step(None if term or trunc else int(np.flatnonzero(obs["action_mask"])[0]))
print("   spades_env.env(rules='openspiel'): 200 steps")

g = gymnasium.make("Spades-v0", render_mode="rgb_array")
obs, info = g.reset(seed=0)
frame = g.render()
assert frame.dtype == np.uint8 and frame.ndim == 3 and frame.shape[2] == 3, frame.shape
print("   gymnasium.make('Spades-v0'): obs", obs.shape, "frame", frame.shape)

from pathlib import Path

import spades_env.policies
from spades_env.policies.agents import agent_ids, agents_dir

# the agents come from the wheel, the same files as the checkout's checkpoints/
assert str(agents_dir()).startswith(venv), agents_dir()
root = Path(sys.argv[2]) / "checkpoints"
checkout = sorted(p.name for p in root.iterdir() if (p / "CARD.md").is_file())  # every agent folder
assert len(checkout) >= 9 and agent_ids() == checkout, (agent_ids(), checkout)
for agent in agent_ids():
    for f in (agents_dir() / agent).iterdir():
        assert f.read_bytes() == (root / agent / f.name).read_bytes(), f
for net in ("spades4_net_v1", "spades4_net_v5"):
    pol = spades_env.policies.load(net)
    print(f"   spades_env.policies.load('{net}'):", type(pol).__name__)
pol = spades_env.policies.load("spades4_v2")  # a search over the wheel's spades4_net_v2
assert Path(pol.net) == agents_dir() / "spades4_net_v2", pol.net
print("   spades_env.policies.load('spades4_v2'):", type(pol).__name__)
pol = spades_env.policies.load("spades4_v3")  # a search over the wheel's spades4_net_v4
assert Path(pol.net) == agents_dir() / "spades4_net_v4", pol.net

bad = [m for m in ("torch", "stable_baselines3") if m in sys.modules]
assert not bad, bad
PYEOF
"$WORK/venv/bin/spades" eval spades4_v1 heuristic --games 4 --no-progress
"$WORK/venv/bin/spades" demo --hands 1 --record game.json > /dev/null
"$WORK/venv/bin/spades" replay game.json --video game.gif --fps 8 | tail -1
echo "wheel smoke: OK"
