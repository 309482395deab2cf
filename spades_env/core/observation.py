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
shown_out      16      per relative seat, 4 suits (C, D, H, S): 1 once the seat failed to
                       follow that suit this hand (public: everyone saw it)
rules          14      the rules played: two_player, blind_nil, blind_nil_min_deficit / 500,
                       blind_nil_exchange / 13, nil_value / 100, blind_nil_value / 100,
                       bag_limit / 10, bag_penalty / 100, failed_nil_counts_toward_contract,
                       must_break_spades, trick_value / 10, target_score / 500, mercy_rule,
                       mercy_threshold / 500
blind_open     2       own team, other team: 1 while the score lets the team choose Blind Nil
=============  ======  ====================================================================

Version 2 (``OBS_VERSION``) appended ``shown_out``, ``rules`` and ``blind_open`` to version 1
(whose 771 entries are the first ones of version 2).
:func:`decode` turns a vector back into a :class:`PublicView` (what the seat knows, readable),
the one decoder the scripted bots use; :func:`obs_bounds` gives the bounds of every entry.

``encode_state`` is the full state for centralized critics: the observation of seat 0
followed by every seat's hand and discards (absolute seats), which no acting policy may read.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from spades_env.core import layout as L
from spades_env.core.cards import FULL_DECK, NUM_RANKS, SUIT_MASKS
from spades_env.core.engine import (
    blind_eligible,
    blind_open_for_team,
    relative_seat,
    seat_after,
    trick_winner,
)
from spades_env.core.jit import SPREAD8, card_bytes, ctz, inline_jit, jit, store_bytes, zero_fill
from spades_env.core.scoring import contract_tricks, is_nil_bid, team_contract

OBS_VERSION = 2

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
    ("shown_out", 16),
    ("rules", 14),
    ("blind_open", 2),
)
RULES_FIELDS: tuple[tuple[str, float], ...] = (
    ("two_player", 1.0),
    ("blind_nil", 1.0),
    ("blind_nil_min_deficit", 500.0),
    ("blind_nil_exchange", 13.0),
    ("nil_value", 100.0),
    ("blind_nil_value", 100.0),
    ("bag_limit", 10.0),
    ("bag_penalty", 100.0),
    ("failed_nil_counts_toward_contract", 1.0),
    ("must_break_spades", 1.0),
    ("trick_value", 10.0),
    ("target_score", 500.0),
    ("mercy_rule", 1.0),
    ("mercy_threshold", 500.0),
)
"""The ``rules`` slice: each knob divided by its scale."""


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
SCORE_OBS_LIMIT = float(2**31)
"""Largest score magnitude an observation shows: a score entry (score / target) saturates at
``SCORE_OBS_LIMIT / target`` (past ``validate.SCORE_LIMIT``, the largest start score accepted)."""
O_BAGS = SLICES["bags"].start
O_GAME_WINS = SLICES["game_wins"].start
O_BROKEN = SLICES["spades_broken"].start
O_PASSED = SLICES["passed"].start
O_RECEIVED = SLICES["received"].start
O_DRAW_SHOWN = SLICES["draw_shown"].start
O_DISCARDED = SLICES["discarded"].start
O_SHOWN_OUT = SLICES["shown_out"].start
O_RULES = SLICES["rules"].start
O_BLIND_OPEN = SLICES["blind_open"].start


@inline_jit
def _bits(out, offset, mask):
    """Set ``out[offset + c]`` to 1 for each card ``c`` of a card mask (others untouched)."""
    while mask != 0:
        out[offset + ctz(mask)] = 1.0
        mask &= mask - 1


@inline_jit
def _suit_bits(out, offset, suits):
    """Set ``out[offset + s]`` to 1 for each suit ``s`` of a suit bit set."""
    for suit in range(4):
        if (suits >> suit) & 1:
            out[offset + suit] = 1.0


@inline_jit
def _suit_bytes(out, offset, suits):
    """``_suit_bits`` into a uint8 row: the 4 entries in one store."""
    store_bytes(out, offset, SPREAD8[suits & 0xF], 4)


@inline_jit
def hand_hidden(state, params, seat):
    """Whether ``seat``'s own hand is hidden from it (it may still choose Blind Nil)."""
    phase = state[L.PHASE]
    if phase != L.PH_BLIND and phase != L.PH_BID:
        return False
    return state[L.BIDS + seat] == L.BID_NONE and blind_eligible(state, params, seat)


SCALAR_SLICES = ("tricks_won", "scores", "bags", "game_wins", "rules")
"""The slices whose entries are not all 0 or 1 (fractions, scores, counts)."""
SCALAR_INDEX = np.concatenate([np.arange(SLICES[n].start, SLICES[n].stop) for n in SCALAR_SLICES])
"""Positions in the observation of the ``SCALAR_SIZE`` entries of :data:`SCALAR_SLICES`, in
the order of the compact observation's ``scalars``."""
SCALAR_SIZE = len(SCALAR_INDEX)
_S_TW, _S_SC, _S_BAGS, _S_WINS, _S_RULES = 0, 4, 6, 8, 10  # their offsets in ``scalars``


@inline_jit
def _encode_rules(params, out, o_rules):
    out[o_rules + 0] = 1.0 if params[L.P_NUM_SEATS] == 2 else 0.0
    out[o_rules + 1] = params[L.P_BLIND_NIL]
    out[o_rules + 2] = params[L.P_BLIND_NIL_MIN_DEFICIT] / 500.0
    out[o_rules + 3] = params[L.P_EXCHANGE_CARDS] / 13.0
    out[o_rules + 4] = params[L.P_NIL_VALUE] / 100.0
    out[o_rules + 5] = params[L.P_BLIND_NIL_VALUE] / 100.0
    out[o_rules + 6] = params[L.P_BAG_LIMIT] / 10.0
    out[o_rules + 7] = params[L.P_BAG_PENALTY] / 100.0
    out[o_rules + 8] = params[L.P_FAILED_NIL_COUNTS]
    out[o_rules + 9] = params[L.P_MUST_BREAK_SPADES]
    out[o_rules + 10] = params[L.P_TRICK_VALUE] / 10.0
    out[o_rules + 11] = params[L.P_TARGET_SCORE] / 500.0
    out[o_rules + 12] = params[L.P_MERCY]
    out[o_rules + 13] = params[L.P_MERCY_THRESHOLD] / 500.0


def rules_features(params: np.ndarray) -> np.ndarray:
    """The observation's ``rules`` slice (14 floats) for a rules parameter array
    (``RulesConfig.to_params()``): what every observation of a game under those rules holds
    there, so recorded observations can be told apart by their rules."""
    out = np.zeros(SLICES["rules"].stop - SLICES["rules"].start, dtype=np.float64)
    _encode_rules(params, out, 0)
    return out


_THIRTEENTHS = np.arange(14) / 13.0
"""``k / 13.0`` for ``k`` tricks: the very float64 values the division gives, looked up."""
_TENTHS = np.arange(64) / 10.0
"""``b / 10.0`` for the bag counts a game meets (larger ones are divided)."""


@inline_jit
def _encode_scalars(state, params, seat, out, o_tw, o_sc, o_bags, o_wins, o_rules, with_rules=True):
    """The entries of ``SCALAR_SLICES``, at the given offsets of ``out`` (float32); the
    ``rules`` slice only ``with_rules``."""
    n = state[L.NUM_SEATS]
    for k in range(n):
        out[o_tw + k] = _THIRTEENTHS[state[L.TRICKS_WON + seat_after(seat, k, n)]]  # 0..13 tricks
    team = seat % 2
    target = max(params[L.P_TARGET_SCORE], 1)
    lim = SCORE_OBS_LIMIT / target
    for k in range(2):
        t = (team + k) % 2
        v = state[L.SCORES + t] / target
        out[o_sc + k] = lim if v > lim else (-lim if v < -lim else v)  # saturates: inside the Box
        bags = state[L.BAGS + t]
        out[o_bags + k] = (
            _TENTHS[bags] if 0 <= bags < _TENTHS.shape[0] else min(bags, SCORE_OBS_LIMIT) / 10.0
        )
        out[o_wins + k] = state[L.GAME_WINS + t]
    if with_rules:
        _encode_rules(params, out, o_rules)


@inline_jit
def _check_encode(state, seat, out):
    n = state[L.NUM_SEATS]
    if seat < 0 or seat >= n or (n != 2 and n != 4):
        raise ValueError("encode_observation: seat out of range for this game (0..num_seats-1)")
    if out.shape[0] != OBS_SIZE or state.shape[0] != L.STATE_SIZE:
        raise ValueError("encode_observation: out must hold OBS_SIZE floats, state STATE_SIZE ints")


@inline_jit
def encode_observation(state, params, seat, out):
    """Write ``seat``'s observation (``OBS_SIZE`` float32) into ``out``.

    Raises ``ValueError`` for a seat outside the game or an ``out`` of the wrong size (the
    compiled code checks itself: it is also reached directly)."""
    _check_encode(state, seat, out)
    out[:] = 0.0
    _encode_binary(state, params, seat, out, _bits, _suit_bits)
    _encode_scalars(state, params, seat, out, O_TRICKS_WON, O_SCORES, O_BAGS, O_GAME_WINS, O_RULES)


@inline_jit
def encode_observation_compact(state, params, seat, out, scalars):
    """The compact observation: ``out`` (``OBS_SIZE`` uint8) holds every 0/1 entry of
    ``encode_observation``'s vector, 0 at the ``SCALAR_INDEX`` positions, and ``scalars``
    (``SCALAR_SIZE`` float32) the entries at those positions; :func:`widen_observations` puts
    them together into exactly the float32 observation."""
    encode_compact_into(state, params, seat, out, scalars, True)


@inline_jit
def encode_compact_into(state, params, seat, out, scalars, with_rules):
    """:func:`encode_observation_compact`, leaving the ``rules`` entries of ``scalars`` as they
    are unless ``with_rules`` (a batched engine's row of scalars keeps its game's rules until
    a new game starts in it: they are constant for a game)."""
    _check_encode(state, seat, out)
    zero_fill(out)
    _encode_binary(state, params, seat, out, card_bytes, _suit_bytes)
    _encode_scalars(state, params, seat, scalars, _S_TW, _S_SC, _S_BAGS, _S_WINS, _S_RULES, with_rules)


def widen_observations(obs: np.ndarray, scalars: np.ndarray, out: np.ndarray | None = None) -> np.ndarray:
    """Float32 observations ``[..., OBS_SIZE]`` from compact ones (``obs`` uint8 and
    ``scalars`` float32 ``[..., SCALAR_SIZE]``, as ``VectorSpades(obs_dtype="uint8")`` writes
    them): bit-identical to ``encode_observation``'s (the learner side of the compact layout)."""
    obs, scalars = np.asarray(obs), np.asarray(scalars)
    if obs.shape[-1:] != (OBS_SIZE,) or scalars.shape != obs.shape[:-1] + (SCALAR_SIZE,):
        raise ValueError(
            f"widen_observations: need [..., {OBS_SIZE}] and [..., {SCALAR_SIZE}], got {obs.shape} and {scalars.shape}"
        )
    if out is None:
        out = np.empty(obs.shape, dtype=np.float32)
    np.copyto(out, obs, casting="unsafe")
    out[..., SCALAR_INDEX] = scalars
    return out


@inline_jit
def _encode_binary(state, params, seat, out, card_bits, suit_bits):
    """Every entry but those of ``SCALAR_SLICES`` (all 0 or 1) into a zeroed ``out``; a card
    mask is written by ``card_bits`` and a suit set by ``suit_bits`` (``_bits`` and
    ``_suit_bits``, or for the uint8 observation ``card_bytes`` and ``_suit_bytes``)."""
    n = state[L.NUM_SEATS]
    phase = state[L.PHASE]
    if not hand_hidden(state, params, seat):
        card_bits(out, O_HAND, state[L.HANDS + seat])
    out[O_PHASE + phase] = 1
    turn = state[L.TURN]
    if turn >= 0:
        out[O_TO_ACT + relative_seat(seat, turn, n)] = 1
    out[O_DEALER + relative_seat(seat, state[L.DEALER], n)] = 1
    for k in range(n):
        abs_seat = seat_after(seat, k, n)
        b = state[L.BIDS + abs_seat]
        out[O_BIDS + 16 * k + b + 1] = 1  # -1 -> 0, 0..13 -> 1..14, blind 14 -> 15
        card_bits(out, O_PLAYED + 52 * k, state[L.PLAYED + abs_seat])
        c = state[L.TRICK_CARDS + abs_seat]  # -1: none (then entry 0 is written 0: no branch)
        out[O_TRICK + 52 * k + max(c, 0)] = c >= 0
        suit_bits(out, O_SHOWN_OUT + 4 * k, state[L.SHOWN_OUT + abs_seat])
    if state[L.TRICK_SIZE] > 0:
        out[O_LEADER + relative_seat(seat, state[L.TRICK_LEADER], n)] = 1
    team = seat % 2
    out[O_BROKEN] = state[L.SPADES_BROKEN]
    card_bits(out, O_PASSED, state[L.PASSED + seat])
    card_bits(out, O_RECEIVED, state[L.RECEIVED + seat])
    if phase == L.PH_DRAW and turn == seat:
        out[O_DRAW_SHOWN + state[L.DECK + state[L.STOCK_POS]]] = 1
    card_bits(out, O_DISCARDED, state[L.DISCARDED + seat])
    for k in range(2):
        out[O_BLIND_OPEN + k] = blind_open_for_team(state, params, (team + k) % 2)


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



def obs_bounds(rules=None) -> tuple[np.ndarray, np.ndarray]:
    """``(low, high)`` float32 arrays of ``OBS_SIZE``: the range of every entry under ``rules``
    (a preset name, dict or ``RulesConfig``; default tournament). A score entry (score /
    ``target_score``) saturates at ``SCORE_OBS_LIMIT / target_score`` (far past any score a game
    reaches, and past every start score ``reset`` accepts), so every observation lies in the
    Box whatever the scores; bags are bounded by the bag limit (``SCORE_OBS_LIMIT / 10`` with
    none), the ``rules`` slice by the range each knob may take."""
    from spades_env.core.rules import _BOUNDS, load_rules

    cfg = load_rules(rules)
    low = np.zeros(OBS_SIZE, dtype=np.float32)
    high = np.ones(OBS_SIZE, dtype=np.float32)
    score = SCORE_OBS_LIMIT / max(cfg.target_score, 1)
    sc = SLICES["scores"]
    low[sc], high[sc] = -score, score
    high[SLICES["bags"]] = (cfg.bag_limit - 1) / 10.0 if cfg.bag_limit > 0 else SCORE_OBS_LIMIT / 10.0
    high[SLICES["game_wins"]] = (cfg.match_games + 1) // 2
    r0 = SLICES["rules"].start
    for i, (name, scale) in enumerate(RULES_FIELDS):
        if name in _BOUNDS:
            lo, hi = _BOUNDS[name]
            low[r0 + i], high[r0 + i] = lo / scale, hi / scale
    return low, high


# ---- the public view: an observation decoded ------------------------------------------------
BLIND = L.BID_BLIND_NIL  # bid value 14: Blind Nil


def score_clip_ok(value: object) -> bool:
    """Whether ``value`` is a valid ``score_clip``: None (no clip) or a positive finite number."""
    if value is None:
        return True
    return isinstance(value, (int, float)) and not isinstance(value, bool) and 0 < value < float("inf")


def score_clip_bounds(size: int, limit: float) -> tuple[np.ndarray, np.ndarray]:
    """Lower and upper bounds ``float32 [size]`` that clip a network input's two ``scores``
    entries (score / target score) to ``[-limit, limit]`` and leave every other entry as it is.

    ``size`` is the input's width: an observation (either version: version 1 is version 2's
    first entries) or the critic's state vector, which starts with the acting seat's
    observation. A team far behind (a random bot's -20,000 is -40 at target 500) then reads
    as ``-limit`` instead of a value no training game reached."""
    if limit is None or not score_clip_ok(limit):
        raise ValueError(f"score_clip must be a positive finite number, got {limit!r}")
    sc = SLICES["scores"]
    if size < sc.stop:
        raise ValueError(f"an input of {size} entries has no scores slice (it ends at {sc.stop})")
    lo = np.full(size, -np.inf, dtype=np.float32)
    hi = np.full(size, np.inf, dtype=np.float32)
    lo[sc], hi[sc] = -limit, limit
    return lo, hi


def _mask(vec: np.ndarray) -> int:
    m = 0
    for c in np.flatnonzero(vec > 0.5):
        m |= 1 << int(c)
    return m


def _onehot(vec: np.ndarray) -> int:
    nz = np.flatnonzero(vec > 0.5)
    return int(nz[0]) if nz.size else -1


def popcount(mask: int) -> int:
    """Number of cards in a mask."""
    return bin(mask).count("1")


def cards_of(mask: int) -> list[int]:
    """Card ids in a mask, ascending."""
    out = []
    while mask:
        low = mask & -mask
        out.append(low.bit_length() - 1)
        mask ^= low
    return out


def suit_cards(mask: int, suit: int) -> int:
    """The cards of ``suit`` in ``mask``."""
    return mask & SUIT_MASKS[suit]


def public_bids(observations: np.ndarray) -> np.ndarray:
    """``int64 [N, 4]``: the bids in a batch of observations ``[N, OBS_SIZE]``, per relative
    seat (own, left, partner, right): -1 none yet, 0..13, ``L.BID_BLIND_NIL`` for Blind Nil
    (the ``bids`` slice's one-hot read back; what :func:`decode` gives one row at a time)."""
    obs = np.asarray(observations)
    if obs.ndim != 2 or obs.shape[1] != OBS_SIZE:
        raise ValueError(f"public_bids: expected observations of shape (N, {OBS_SIZE}), got {obs.shape}")
    onehot = obs[:, O_BIDS : O_BIDS + 64].reshape(-1, 4, 16)
    return np.argmax(onehot, axis=2).astype(np.int64) - 1  # index 0 = none yet -> -1


def is_nil(bid: int) -> bool:
    """Whether a bid value (0..13, 14 = Blind Nil, -1 = none) is a Nil or Blind Nil."""
    return bool(is_nil_bid(bid))


@dataclass
class PublicView:
    """What one seat knows, decoded from its observation (seats relative to the observer:
    0 self, 1 left-hand opponent, 2 partner, 3 right-hand opponent; two-player: 0 and 1)."""

    num_seats: int
    hand: int
    phase: int
    to_act: int
    dealer: int
    bids: list[int]  # -1 none, 0..13, 14 Blind Nil
    played: list[int]  # masks
    trick: list[int]  # card each seat put on the current trick, -1
    leader: int  # seat that led the current trick, -1 when it is empty
    tricks_won: list[int]
    scores: tuple[int, int]  # own team, other team
    bags: tuple[int, int]
    game_wins: tuple[int, int]
    spades_broken: bool
    passed: int
    received: int
    draw_shown: int  # card, -1
    discarded: int
    target_score: int = 500
    shown_out: list[int] = field(default_factory=lambda: [0, 0, 0, 0])  # suit bit sets, by seat
    voids: list[int] = field(default_factory=lambda: [0, 0, 0, 0])  # shown out, or suit exhausted
    rules: dict[str, int] = field(default_factory=dict)  # the ``rules`` slice, unscaled
    blind_open: tuple[bool, bool] = (False, False)
    params: np.ndarray | None = None  # the rules parameter row rebuilt from ``rules``

    # ---- derived facts ------------------------------------------------------------------
    @property
    def partner(self) -> int:
        """Relative seat of the partner (-1 in the two-player game)."""
        return 2 if self.num_seats == 4 else -1

    @property
    def opponents(self) -> tuple[int, ...]:
        return (1, 3) if self.num_seats == 4 else (1,)

    @property
    def trick_size(self) -> int:
        return sum(1 for c in self.trick[: self.num_seats] if c >= 0)

    @property
    def tricks_played(self) -> int:
        return sum(self.tricks_won[: self.num_seats])

    @property
    def all_played(self) -> int:
        m = 0
        for p in self.played:
            m |= p
        return m

    @property
    def unseen(self) -> int:
        """Cards not in the observer's hand, not played: held by others (or out of play)."""
        return FULL_DECK & ~self.hand & ~self.all_played & ~self.discarded

    def led_suit(self) -> int:
        """Suit led to the current trick, -1 when the trick is empty."""
        if self.leader < 0 or self.trick[self.leader] < 0:
            return -1
        return self.trick[self.leader] // NUM_RANKS

    def team_seats(self, team: int) -> tuple[int, ...]:
        """Relative seats of a team: 0 = own team, 1 = the other."""
        if self.num_seats == 2:
            return (team,)
        return (0, 2) if team == 0 else (1, 3)

    def _arrays(self) -> tuple[np.ndarray, np.ndarray]:
        return np.asarray(self.bids, dtype=np.int64), np.asarray(self.tricks_won, dtype=np.int64)

    def contract(self, team: int) -> int:
        """Tricks the team bid, Nil bids excluded (0 if nobody bid yet); the core's rule."""
        return int(team_contract(self._arrays()[0], team, self.num_seats))

    def contract_tricks(self, team: int) -> int:
        """Tricks counting toward the team's contract (the core's rule, with the rules'
        ``failed_nil_counts_toward_contract``)."""
        b, t = self._arrays()
        return int(contract_tricks(b, t, team, self.num_seats, self.params))

    def need(self, team: int) -> int:
        """Tricks the team still needs to make its contract (<= 0: made)."""
        return self.contract(team) - self.contract_tricks(team)

    def nil_alive(self, seat: int) -> bool:
        """Whether ``seat`` bid (Blind) Nil and has not taken a trick yet."""
        return is_nil(self.bids[seat]) and self.tricks_won[seat] == 0

    # ---- rules questions, answered by the core ---------------------------------------------
    def state_row(self) -> np.ndarray:
        """A core state row with the observer as seat 0 and other seats' hands empty."""
        row = np.zeros(L.STATE_SIZE, dtype=np.int64)
        n = self.num_seats
        row[L.NUM_SEATS] = n
        row[L.PHASE] = self.phase if self.phase >= 0 else L.PH_PLAY
        row[L.DEALER] = max(self.dealer, 0)
        row[L.TURN] = self.to_act
        row[L.TRICK_LEADER] = self.leader if self.leader >= 0 else 0
        row[L.TRICK_SIZE] = self.trick_size
        row[L.TRICKS_PLAYED] = self.tricks_played
        row[L.SPADES_BROKEN] = int(self.spades_broken)
        row[L.GAME_WINNER] = -1
        row[L.MATCH_WINNER] = -1
        row[L.LAST_TRICK_WINNER] = -1
        row[L.HANDS] = self.hand
        for s in range(4):
            row[L.BIDS + s] = self.bids[s] if s < n else L.BID_NONE
            row[L.TRICKS_WON + s] = self.tricks_won[s] if s < n else 0
            row[L.TRICK_CARDS + s] = self.trick[s] if s < n else L.NO_CARD
            row[L.PLAYED + s] = self.played[s] if s < n else 0
            row[L.LAST_TRICK + s] = L.NO_CARD
            row[L.EXCH_SEQ + s] = -1
            row[L.SHOWN_OUT + s] = self.shown_out[s] if s < n else 0
        row[L.PASSED] = self.passed
        row[L.RECEIVED] = self.received
        row[L.DISCARDED] = self.discarded
        for k in range(2):
            row[L.SCORES + k] = self.scores[k]
            row[L.BAGS + k] = self.bags[k]
            row[L.GAME_WINS + k] = self.game_wins[k]
        return row

    def winner_with(self, card: int, row: np.ndarray | None = None) -> int:
        """Relative seat that would be winning the current trick if the observer played ``card``
        now (the core's ``trick_winner``)."""
        row = self.state_row() if row is None else row
        size, leader = row[L.TRICK_SIZE], row[L.TRICK_LEADER]
        if size == 0:
            return 0
        row[L.TRICK_CARDS] = card
        row[L.TRICK_SIZE] = size + 1
        w = int(trick_winner(row))
        row[L.TRICK_CARDS] = L.NO_CARD
        row[L.TRICK_SIZE] = size
        row[L.TRICK_LEADER] = leader
        return w

    def current_winner(self, row: np.ndarray | None = None) -> int:
        """Relative seat winning the current trick so far, -1 when it is empty."""
        if self.trick_size == 0:
            return -1
        row = self.state_row() if row is None else row
        return int(trick_winner(row))


SeatView = PublicView


def rules_params_of(obs: np.ndarray) -> np.ndarray:
    """The rules parameter row (``RulesConfig.to_params``) read back from an observation's
    ``rules`` slice (``max_hands``, ``match_games`` and ``first_dealer``, which are not in it,
    get the tournament defaults)."""
    r = np.asarray(obs)[SLICES["rules"]]
    v = {name: int(round(float(x) * scale)) for (name, scale), x in zip(RULES_FIELDS, r, strict=True)}
    p = np.zeros(L.PARAMS_SIZE, dtype=np.int64)
    p[L.P_NUM_SEATS] = 2 if v["two_player"] else 4
    p[L.P_BLIND_NIL] = v["blind_nil"]
    p[L.P_BLIND_NIL_MIN_DEFICIT] = v["blind_nil_min_deficit"]
    p[L.P_EXCHANGE_CARDS] = v["blind_nil_exchange"]
    p[L.P_NIL_VALUE] = v["nil_value"]
    p[L.P_BLIND_NIL_VALUE] = v["blind_nil_value"]
    p[L.P_BAG_LIMIT] = v["bag_limit"]
    p[L.P_BAG_PENALTY] = v["bag_penalty"]
    p[L.P_FAILED_NIL_COUNTS] = v["failed_nil_counts_toward_contract"]
    p[L.P_MUST_BREAK_SPADES] = v["must_break_spades"]
    p[L.P_TARGET_SCORE] = max(v["target_score"], 1)
    p[L.P_MERCY] = v["mercy_rule"]
    p[L.P_MERCY_THRESHOLD] = v["mercy_threshold"]
    p[L.P_MAX_HANDS] = 100
    p[L.P_GAMES_TO_WIN] = 2
    p[L.P_TRICK_VALUE] = max(v["trick_value"], 1)
    p[L.P_FIRST_DEALER] = -1
    return p


def decode(
    observation: np.ndarray, num_seats: int | None = None, target_score: int | None = None
) -> PublicView:
    """Decode an observation vector (``OBS_SIZE`` floats) into a :class:`PublicView`.

    The variant and the target score are read from the ``rules`` slice; ``num_seats`` and
    ``target_score``, if given, must agree with it."""
    obs = np.asarray(observation)
    if obs.shape != (OBS_SIZE,):
        raise ValueError(f"decode: expected an observation of shape ({OBS_SIZE},), got {obs.shape}")
    params = rules_params_of(obs)
    n = int(params[L.P_NUM_SEATS])
    target = int(params[L.P_TARGET_SCORE])
    if num_seats is not None and num_seats != n:
        raise ValueError(f"decode: the observation is of a {n}-player game, not {num_seats}")
    if target_score is not None and target_score != target:
        raise ValueError(f"decode: the observation's target score is {target}, not {target_score}")
    S = SLICES
    bids_v = obs[S["bids"]].reshape(4, 16)
    played_v = obs[S["played"]].reshape(4, 52)
    trick_v = obs[S["trick"]].reshape(4, 52)
    so_v = obs[S["shown_out"]].reshape(4, 4)
    bids, played, trick, shown = [], [], [], []
    for k in range(4):
        b = _onehot(bids_v[k])
        bids.append(b - 1 if b >= 0 else -1)
        played.append(_mask(played_v[k]) if k < n else 0)
        trick.append(_onehot(trick_v[k]) if k < n else -1)
        shown.append(sum(1 << s for s in range(4) if so_v[k, s] > 0.5) if k < n else 0)
    tw = obs[S["tricks_won"]]
    sc = obs[S["scores"]]
    bg = obs[S["bags"]]
    gw = obs[S["game_wins"]]
    bo = obs[S["blind_open"]]
    rules = {
        name: int(round(float(x) * scale))
        for (name, scale), x in zip(RULES_FIELDS, obs[S["rules"]], strict=True)
    }
    v = PublicView(
        num_seats=n,
        hand=_mask(obs[S["hand"]]),
        phase=_onehot(obs[S["phase"]]),
        to_act=_onehot(obs[S["to_act"]]),
        dealer=_onehot(obs[S["dealer"]]),
        bids=bids,
        played=played,
        trick=trick,
        leader=_onehot(obs[S["leader"]]),
        tricks_won=[int(round(float(x) * 13)) for x in tw],
        scores=(int(round(float(sc[0]) * target)), int(round(float(sc[1]) * target))),
        bags=(int(round(float(bg[0]) * 10)), int(round(float(bg[1]) * 10))),
        game_wins=(int(round(float(gw[0]))), int(round(float(gw[1])))),
        spades_broken=bool(obs[S["spades_broken"]][0] > 0.5),
        passed=_mask(obs[S["passed"]]),
        received=_mask(obs[S["received"]]),
        draw_shown=_onehot(obs[S["draw_shown"]]),
        discarded=_mask(obs[S["discarded"]]),
        target_score=target,
        shown_out=shown,
        rules=rules,
        blind_open=(bool(bo[0] > 0.5), bool(bo[1] > 0.5)),
        params=params,
    )
    unseen = v.unseen
    gone = sum(1 << s for s in range(4) if suit_cards(unseen, s) == 0)
    v.voids = [shown[k] | gone if 0 < k < n else 0 for k in range(4)]
    return v


# ---- the compiled decoder: an observation back into a core state row ------------------------
@jit
def _read_bits(obs, offset):
    m = 0
    for i in range(52):
        if obs[offset + i] > 0.5:
            m |= 1 << i
    return m


@jit
def _read_onehot(obs, offset, size):
    for i in range(size):
        if obs[offset + i] > 0.5:
            return i
    return -1


@jit
def decode_params_into(obs, params):
    """Rebuild the rules parameter row from an observation's ``rules`` slice (compiled
    :func:`rules_params_of`)."""
    r = O_RULES
    params[:] = 0
    params[L.P_NUM_SEATS] = 2 if obs[r] > 0.5 else 4
    params[L.P_BLIND_NIL] = 1 if obs[r + 1] > 0.5 else 0
    params[L.P_BLIND_NIL_MIN_DEFICIT] = int(round(obs[r + 2] * 500.0))
    params[L.P_EXCHANGE_CARDS] = int(round(obs[r + 3] * 13.0))
    params[L.P_NIL_VALUE] = int(round(obs[r + 4] * 100.0))
    params[L.P_BLIND_NIL_VALUE] = int(round(obs[r + 5] * 100.0))
    params[L.P_BAG_LIMIT] = int(round(obs[r + 6] * 10.0))
    params[L.P_BAG_PENALTY] = int(round(obs[r + 7] * 100.0))
    params[L.P_FAILED_NIL_COUNTS] = 1 if obs[r + 8] > 0.5 else 0
    params[L.P_MUST_BREAK_SPADES] = 1 if obs[r + 9] > 0.5 else 0
    params[L.P_TRICK_VALUE] = max(int(round(obs[r + 10] * 10.0)), 1)
    params[L.P_TARGET_SCORE] = max(int(round(obs[r + 11] * 500.0)), 1)
    params[L.P_MERCY] = 1 if obs[r + 12] > 0.5 else 0
    params[L.P_MERCY_THRESHOLD] = int(round(obs[r + 13] * 500.0))
    params[L.P_MAX_HANDS] = 100
    params[L.P_GAMES_TO_WIN] = 2
    params[L.P_FIRST_DEALER] = -1


@jit
def decode_into(obs, row, params):
    """Write what an observation tells into a core state row with the observer as seat 0
    (relative seats as absolute ones, own team 0; other seats' hands empty: unknown) and
    the rules into ``params``. The compiled :meth:`PublicView.state_row`, for compiled bots."""
    decode_params_into(obs, params)
    n = params[L.P_NUM_SEATS]
    row[:] = 0
    row[L.NUM_SEATS] = n
    phase = _read_onehot(obs, O_PHASE, L.NUM_PHASES)
    row[L.PHASE] = phase if phase >= 0 else L.PH_PLAY
    row[L.DEALER] = max(_read_onehot(obs, O_DEALER, 4), 0)
    row[L.TURN] = _read_onehot(obs, O_TO_ACT, 4)
    leader = _read_onehot(obs, O_LEADER, 4)
    row[L.TRICK_LEADER] = leader if leader >= 0 else 0
    row[L.GAME_WINNER] = -1
    row[L.MATCH_WINNER] = -1
    row[L.LAST_TRICK_WINNER] = -1
    row[L.HANDS] = _read_bits(obs, O_HAND)
    size = 0
    played = 0
    for k in range(4):
        row[L.LAST_TRICK + k] = L.NO_CARD
        row[L.EXCH_SEQ + k] = -1
        row[L.TRICK_CARDS + k] = L.NO_CARD
        row[L.BIDS + k] = L.BID_NONE
        if k >= n:
            continue
        b = _read_onehot(obs, O_BIDS + 16 * k, 16)
        row[L.BIDS + k] = b - 1 if b >= 0 else L.BID_NONE
        row[L.PLAYED + k] = _read_bits(obs, O_PLAYED + 52 * k)
        c = _read_onehot(obs, O_TRICK + 52 * k, 52)
        row[L.TRICK_CARDS + k] = c
        if c >= 0:
            size += 1
        w = int(round(obs[O_TRICKS_WON + k] * 13.0))
        row[L.TRICKS_WON + k] = w
        played += w
        so = 0
        for suit in range(4):
            if obs[O_SHOWN_OUT + 4 * k + suit] > 0.5:
                so |= 1 << suit
        row[L.SHOWN_OUT + k] = so
    row[L.TRICK_SIZE] = size
    row[L.TRICKS_PLAYED] = played
    row[L.SPADES_BROKEN] = 1 if obs[O_BROKEN] > 0.5 else 0
    row[L.PASSED] = _read_bits(obs, O_PASSED)
    row[L.RECEIVED] = _read_bits(obs, O_RECEIVED)
    row[L.DISCARDED] = _read_bits(obs, O_DISCARDED)
    target = params[L.P_TARGET_SCORE]
    for k in range(2):
        row[L.SCORES + k] = int(round(obs[O_SCORES + k] * target))
        row[L.BAGS + k] = int(round(obs[O_BAGS + k] * 10.0))
        row[L.GAME_WINS + k] = int(round(obs[O_GAME_WINS + k]))
    shown = _read_onehot(obs, O_DRAW_SHOWN, 52)
    if shown >= 0:
        row[L.DECK] = shown
    return n
