"""The observation vector: named slices, encoded for one seat from the state row.

Observations are relative to the observer: relative seat 0 is the observer, then its left-hand
opponent (1), partner (2) and right-hand opponent (3); in the two-player game relative seats 0
and 1 are used and 2, 3 stay zero. A seat sees only what it may know: its own hand (hidden while
it may still choose Blind Nil), the public history, and its own exchange and discards.

=============  ======  ====================================================================
slice          size    meaning
=============  ======  ====================================================================
hand           52      own cards (zero while the seat may still choose Blind Nil)
phase          8       one-hot: blind, bid, exchange, play, draw, hand_end, game_end, match_end
to_act         4       one-hot relative seat to act
dealer         4       one-hot relative seat of the dealer
bids           64      per relative seat, one-hot of 16: no bid yet, 0..13, Blind Nil
played         208     per relative seat, the cards it played this hand
trick          208     per relative seat, the card it played to the current trick
leader         4       one-hot relative seat that led the current trick
tricks_won     4       per relative seat, tricks won this hand / 13
scores         2       own team, other team: score / target score
bags           2       own team, other team: bags / 10
game_wins      2       own team, other team: games won in the match
spades_broken  1       1 once spades are broken
passed         52      cards this seat passed in the Blind Nil exchange
received       52      cards this seat received in the exchange
draw_shown     52      two-player draw: the card shown to this seat, when it is to draw
discarded      52      two-player draw: this seat's own discards
=============  ======  ====================================================================

``encode_state`` is the full state for centralized critics: the observation of seat 0
followed by every seat's hand and discards (absolute seats), which no acting policy may read.
"""

from __future__ import annotations

import numpy as np

from spades_env.core import layout as L
from spades_env.core.engine import blind_eligible, relative_seat, seat_after
from spades_env.core.jit import ctz, jit

OBS_VERSION = 1

OBS_SLICES: tuple[tuple[str, int], ...] = (
    ("hand", 52),
    ("phase", 8),
    ("to_act", 4),
    ("dealer", 4),
    ("bids", 64),
    ("played", 208),
    ("trick", 208),
    ("leader", 4),
    ("tricks_won", 4),
    ("scores", 2),
    ("bags", 2),
    ("game_wins", 2),
    ("spades_broken", 1),
    ("passed", 52),
    ("received", 52),
    ("draw_shown", 52),
    ("discarded", 52),
)


def _offsets() -> dict[str, slice]:
    out, pos = {}, 0
    for name, size in OBS_SLICES:
        out[name] = slice(pos, pos + size)
        pos += size
    return out


SLICES: dict[str, slice] = _offsets()
OBS_SIZE = sum(size for _, size in OBS_SLICES)
STATE_VEC_SIZE = OBS_SIZE + 2 * 4 * 52

O_HAND = SLICES["hand"].start
O_PHASE = SLICES["phase"].start
O_TO_ACT = SLICES["to_act"].start
O_DEALER = SLICES["dealer"].start
O_BIDS = SLICES["bids"].start
O_PLAYED = SLICES["played"].start
O_TRICK = SLICES["trick"].start
O_LEADER = SLICES["leader"].start
O_TRICKS_WON = SLICES["tricks_won"].start
O_SCORES = SLICES["scores"].start
O_BAGS = SLICES["bags"].start
O_GAME_WINS = SLICES["game_wins"].start
O_BROKEN = SLICES["spades_broken"].start
O_PASSED = SLICES["passed"].start
O_RECEIVED = SLICES["received"].start
O_DRAW_SHOWN = SLICES["draw_shown"].start
O_DISCARDED = SLICES["discarded"].start


@jit
def _bits(out, offset, mask):
    while mask != 0:
        out[offset + ctz(mask)] = 1.0
        mask &= mask - 1


@jit
def hand_hidden(state, params, seat):
    """Whether ``seat``'s own hand is hidden from it (it may still choose Blind Nil)."""
    phase = state[L.PHASE]
    if phase != L.PH_BLIND and phase != L.PH_BID:
        return False
    return state[L.BIDS + seat] == L.BID_NONE and blind_eligible(state, params, seat)


@jit
def encode_observation(state, params, seat, out):
    """Write ``seat``'s observation (``OBS_SIZE`` float32) into ``out``."""
    out[:] = 0.0
    n = state[L.NUM_SEATS]
    if not hand_hidden(state, params, seat):
        _bits(out, O_HAND, state[L.HANDS + seat])
    out[O_PHASE + state[L.PHASE]] = 1.0
    turn = state[L.TURN]
    if turn >= 0:
        out[O_TO_ACT + relative_seat(seat, turn, n)] = 1.0
    out[O_DEALER + relative_seat(seat, state[L.DEALER], n)] = 1.0
    for k in range(n):
        abs_seat = seat_after(seat, k, n)
        b = state[L.BIDS + abs_seat]
        out[O_BIDS + 16 * k + b + 1] = 1.0  # -1 -> 0, 0..13 -> 1..14, blind 14 -> 15
        _bits(out, O_PLAYED + 52 * k, state[L.PLAYED + abs_seat])
        c = state[L.TRICK_CARDS + abs_seat]
        if c >= 0:
            out[O_TRICK + 52 * k + c] = 1.0
        out[O_TRICKS_WON + k] = state[L.TRICKS_WON + abs_seat] / 13.0
    if state[L.TRICK_SIZE] > 0:
        out[O_LEADER + relative_seat(seat, state[L.TRICK_LEADER], n)] = 1.0
    team = seat % 2
    target = max(params[L.P_TARGET_SCORE], 1)
    for k in range(2):
        t = (team + k) % 2
        out[O_SCORES + k] = state[L.SCORES + t] / target
        out[O_BAGS + k] = state[L.BAGS + t] / 10.0
        out[O_GAME_WINS + k] = state[L.GAME_WINS + t]
    out[O_BROKEN] = state[L.SPADES_BROKEN]
    _bits(out, O_PASSED, state[L.PASSED + seat])
    _bits(out, O_RECEIVED, state[L.RECEIVED + seat])
    if state[L.PHASE] == L.PH_DRAW and turn == seat:
        out[O_DRAW_SHOWN + state[L.DECK + state[L.STOCK_POS]]] = 1.0
    _bits(out, O_DISCARDED, state[L.DISCARDED + seat])


@jit
def encode_state(state, params, out):
    """Write the full state (``STATE_VEC_SIZE`` float32) for centralized critics into ``out``."""
    encode_observation(state, params, 0, out[:OBS_SIZE])
    out[OBS_SIZE:] = 0.0
    _bits(out, O_HAND, state[L.HANDS])  # seat 0's hand even while hidden from it
    for s in range(4):
        _bits(out, OBS_SIZE + 52 * s, state[L.HANDS + s])
        _bits(out, OBS_SIZE + 208 + 52 * s, state[L.DISCARDED + s])


def obs_slice(obs: np.ndarray, name: str) -> np.ndarray:
    """The named slice of an observation (or a batch of them, on the last axis)."""
    if name not in SLICES:
        raise KeyError(f"unknown observation slice {name!r}; slices: {list(SLICES)}")
    return obs[..., SLICES[name]]
