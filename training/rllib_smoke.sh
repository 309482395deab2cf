#!/usr/bin/env bash
# make rllib-smoke: a two-node Ray cluster on the loopback address (a head and one worker node,
# one CPU each), 2 PPO iterations with 2 env runners connected to it (configs/train/rllib.yaml),
# RLlib's env steps/s per iteration, and `ray stop` however it ends.
# On real machines the same commands run one per machine: `ray start --head` on one,
# `ray start --address=HEAD_IP:PORT` on the others, then the training script with address=HEAD_IP:PORT.
set -euo pipefail
BIN=${RLLIB_BIN:-.venv-rllib/bin}
PORT=${RAY_PORT:-6390}
OUT=${RLLIB_OUT:-runs/rllib-smoke}
export RAY_USAGE_STATS_ENABLED=0 PYTHONPATH=.${PYTHONPATH:+:$PYTHONPATH}
# Token authentication (Ray's default for a new cluster): every node and the driver present the
# same token. A fresh one per run here; across machines, export the same RAY_AUTH_TOKEN on each.
export RAY_AUTH_MODE=token
RAY_AUTH_TOKEN=${RAY_AUTH_TOKEN:-$("$BIN/python" -c 'import secrets; print(secrets.token_hex(32))')}
export RAY_AUTH_TOKEN

stop() { "$BIN/ray" stop --force >/dev/null 2>&1 || true; }
trap stop EXIT
trap 'exit 130' INT
trap 'exit 143' TERM
stop  # a cluster left over from an interrupted run would hold the port

# Ray advertises the machine's own IP for 127.0.0.1 (so that other machines could join); the
# worker node and the driver reach the head on the loopback address.
"$BIN/ray" start --head --node-ip-address=127.0.0.1 --port="$PORT" --num-cpus=1 \
    --include-dashboard=false --disable-usage-stats
"$BIN/ray" start --address="127.0.0.1:$PORT" --node-ip-address=127.0.0.1 --num-cpus=1 --disable-usage-stats
"$BIN/python" -m training.rllib_train --config configs/train/rllib.yaml \
    address="127.0.0.1:$PORT" out="$OUT" "$@"
