"""Hands played out by four compiled L2 seats, and the Blind Nil table made from them.

:func:`play_hand_l2` continues a game state row to the end of the hand with L2 choosing for
every seat through its own observation (``encode_observation``, ``legal_mask``, ``l2_decide``
and ``apply_action``: the core's rules, nothing re-implemented), optionally forcing one seat's
Blind Nil choice. The search (L3) uses it for its Blind Nil and exchange decisions, and
``python -m spades_env.policies.bots.blind_sim`` uses it to make the table that L2's Blind Nil decision
reads (:mod:`spades_env.policies.bots.blind_value`)::

    python -m spades_env.policies.bots.blind_sim --deals 2000 --seed 0   # writes bots/data/blind_nil_outcomes.npz

For every table entry (exchange size 0..4 and whether the partner bids before the decider;
one entry for the two-player game) it deals ``--deals`` random hands under the tournament
rules with that exchange size, and plays each twice: the decider declaring Blind Nil, and
seeing its cards (every other seat sees its cards), keeping the bids and tricks of both.
"""

from __future__ import annotations

import argparse
import time
from pathlib import Path

import numpy as np

from spades_env.core import layout as L
from spades_env.core.actions import ACTION_BLIND_NIL, ACTION_SEE_CARDS, NUM_ACTIONS
from spades_env.core.engine import apply_action, init_state, legal_mask
from spades_env.core.jit import jit
from spades_env.core.observation import OBS_SIZE, encode_observation
from spades_env.core.rules import load_rules
from spades_env.policies.bots.blind_value import (
    MAX_EXCHANGE,
    MODE_EV,
    NUM_CONFIGS,
    OPT_BLIND,
    OPT_SEE,
    TABLE_FILE,
    TWO_PLAYER_CONFIG,
    empty_table,
    model_of,
)
from spades_env.policies.bots.l2 import l2_decide

OTHERS_L2 = 0
OTHERS_SEE = 1


@jit
def play_hand_l2(state, params, model, forced_seat, forced_action, others):
    """Play ``state`` to the end of its hand with L2 at every seat (``forced_seat`` takes
    ``forced_action`` at its Blind Nil choice; with ``others == OTHERS_SEE`` every other
    seat sees its cards; ``model``: the Blind Nil ``BlindModel`` of the L2 seats). Returns False if a decision failed (an inconsistent state)."""
    obs = np.zeros(OBS_SIZE, dtype=np.float32)
    mask = np.zeros(NUM_ACTIONS, dtype=np.int8)
    row = np.zeros(L.STATE_SIZE, dtype=np.int64)
    prow = np.zeros(L.PARAMS_SIZE, dtype=np.int64)
    steps = 0
    while state[L.PHASE] < L.PH_HAND_END and steps < 400:
        steps += 1
        seat = state[L.TURN]
        if seat < 0:
            return False
        if state[L.PHASE] == L.PH_BLIND and seat == forced_seat and forced_action >= 0:
            a = forced_action
        elif state[L.PHASE] == L.PH_BLIND and others == OTHERS_SEE:
            a = ACTION_SEE_CARDS
        else:
            encode_observation(state, params, seat, obs)
            legal_mask(state, params, mask)
            a = l2_decide(obs, mask, MODE_EV, model, row, prow)
        if a < 0 or apply_action(state, params, a) != 0:
            return False
    return state[L.PHASE] >= L.PH_HAND_END


@jit
def _record(state, decider, n, out):
    for k in range(4):
        if k < n:
            s = (decider + k) % n
            out[k] = state[L.BIDS + s]
            out[4 + k] = state[L.TRICKS_WON + s]
        else:
            out[k] = L.BID_NONE
            out[4 + k] = 0


@jit
def simulate_config(params, n_deals, partner_first, seed, model, out):
    """Fill ``out [n_deals, 2, 8]`` with the outcome pairs of one table entry."""
    n = params[L.P_NUM_SEATS]
    state = np.zeros(L.STATE_SIZE, dtype=np.int64)
    start = np.zeros(L.STATE_SIZE, dtype=np.int64)
    i = 0
    g = 0
    while i < n_deals:
        g += 1
        # bidding starts left of the dealer: the decider sits at bidding position 0 or 1
        # (partner after it) or 2 or 3 (partner before it)
        pos = (g % 2) + (2 if partner_first else 0)
        if n == 2:
            pos = g % 2
        decider = 0
        dealer = (decider - pos - 1) % n
        init_state(start, params, (seed * 1_000_003 + g) & ((1 << 48) - 1), dealer)
        ok = True
        for opt in range(2):
            state[:] = start
            a = ACTION_BLIND_NIL if opt == OPT_BLIND else ACTION_SEE_CARDS
            if not play_hand_l2(state, params, model, decider, a, OTHERS_SEE):
                ok = False
                break
            if opt == OPT_BLIND and n == 4 and (state[L.BIDS + (decider + 2) % 4] == 0):
                ok = False  # the partner bid a Nil first: L2 declares no Blind Nil then
                break
            _record(state, decider, n, out[i, opt])
        if ok:
            i += 1


def build_table(deals: int = 2000, seed: int = 0, progress: bool = True) -> np.ndarray:
    """The outcome table, ``int64 [NUM_CONFIGS, deals, 2, 8]`` (see the module docstring)."""
    out = np.zeros((NUM_CONFIGS, deals, 2, 8), dtype=np.int64)
    base = model_of(empty_table())  # the simulated seats see their cards: no table needed
    four = load_rules("tournament").replace(blind_nil_min_deficit=0, max_hands=0)
    for cfg in range(NUM_CONFIGS):
        t0 = time.perf_counter()
        if cfg == TWO_PLAYER_CONFIG:
            params = load_rules("two_player").replace(blind_nil=True, max_hands=0).to_params()
            partner_first = False
        else:
            params = four.replace(blind_nil_exchange=cfg // 2).to_params()
            partner_first = bool(cfg % 2)
        simulate_config(params, deals, partner_first, seed + 7919 * cfg, base, out[cfg])
        if progress:
            ok = float(np.mean(out[cfg, :, OPT_BLIND, 4] == 0))
            print(
                f"entry {cfg + 1}/{NUM_CONFIGS}: "
                + ("two-player" if cfg == TWO_PLAYER_CONFIG else f"exchange {cfg // 2}, partner bids first {bool(cfg % 2)}")
                + f": Blind Nil made {ok:.1%} ({time.perf_counter() - t0:.1f} s)",
                flush=True,
            )
    return out


def main(argv: list[str] | None = None) -> int:
    """Make the Blind Nil outcome table (``--out``, default the package's data file)."""
    ap = argparse.ArgumentParser(prog="python -m spades_env.policies.bots.blind_sim", description=__doc__.split("\n\n")[0])
    ap.add_argument("--deals", type=int, default=2000, help="deals per table entry (default 2000)")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--out", type=Path, default=Path(__file__).parent / "data" / TABLE_FILE)
    a = ap.parse_args(argv)
    if a.deals <= 0:
        ap.error(f"--deals must be positive, got {a.deals}")
    table = build_table(a.deals, a.seed)
    a.out.parent.mkdir(parents=True, exist_ok=True)
    np.savez_compressed(a.out, outcomes=table.astype(np.int8), max_exchange=MAX_EXCHANGE, see=OPT_SEE)
    print(f"wrote {a.out} ({a.out.stat().st_size / 1024:.0f} KiB)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
