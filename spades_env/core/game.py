"""A readable facade over one game's state row: hands as card strings, legal moves, clear
errors, a log of every hand for records, ``__str__``, and the one way to step a game.

Stepping (``observe`` / ``step``) is the facade's job, for every front-end and tool::

    g = SpadesGame("tournament", seed=7, episode="game", reward="score")
    while not g.episode_over:
        seat = g.current_player
        obs, mask = g.observe(seat)              # float32[OBS_SIZE], int8[70]
        r = g.step(policies[seat].act(obs, mask))
        # r.rewards[s]: seat s's reward this step; r.terminated / r.truncated end the episode

``step`` applies the action, settles the episode and reward knobs
(:mod:`spades_env.core.episode`), deals the next hand when the episode goes on, and keeps the
hand log. ``apply`` / ``next_hand`` stay the low-level moves (no rewards, no dealing on).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from typing import Any, NamedTuple

import numpy as np

from spades_env.core import engine as E
from spades_env.core import layout as L
from spades_env.core.actions import NUM_ACTIONS, action_to_str
from spades_env.core.cards import (
    NUM_CARDS,
    card_to_str,
    cards_from_mask,
    check_card,
    format_cards,
)
from spades_env.core.episode import RUNNING, TERMINATED, TRUNCATED, EpisodeKnobs, settle
from spades_env.core.files import brief
from spades_env.core.rng import seed_to_rng
from spades_env.core.rules import RulesConfig, load_rules
from spades_env.core.validate import (
    InputError,
    InputTypeError,
    SpadesError,
    check_bags,
    check_scores,
    check_seat,
    check_seed,
    is_int,
    seat_names,
)


class IllegalActionError(SpadesError):
    """An action that is out of range, not legal now, or given when nobody is to act."""


class NotAnActionError(IllegalActionError, InputError):
    """A value that is not an action id (not an integer in 0..69: ``70``, ``"67"``, ``None``,
    ``1.0``, ``True``). Every front-end refuses it whatever its ``illegal`` setting: it is a
    bad argument, never a move (so never an ``illegal="penalty"`` loss); nothing changes."""


class NotAnActionTypeError(NotAnActionError, InputTypeError):
    """A :class:`NotAnActionError` whose value is not an integer at all (also a ``TypeError``)."""


class OrderError(IllegalActionError, RuntimeError):
    """A call out of order: ``step`` or ``observe`` before ``reset()``, ``step`` after the
    episode ended, any use after ``close()``. Nothing changes. Also a ``RuntimeError``, what
    Gymnasium's own order checks raise."""


def check_action(value: Any, name: str = "action") -> int:
    """``value`` as an action id ``0..69``: a Python or NumPy integer (not a bool), or an
    integer array of one element (as SB3 and vector wrappers pass). Anything else raises
    :class:`NotAnActionError` (:class:`NotAnActionTypeError` for a non-integer), naming it."""
    if isinstance(value, np.ndarray) and value.dtype.kind in "iu" and value.size == 1 and value.ndim <= 1:
        value = value.reshape(()).item()
    if not is_int(value):
        raise NotAnActionTypeError(
            f"{name} {brief(value)} ({type(value).__name__}) is not an action id: give an integer "
            "0..69 (strings, floats, bools and None are not actions)"
        )
    a = int(value)
    if not 0 <= a < NUM_ACTIONS:
        raise NotAnActionError(f"{name} {brief(a)} is not an action id: out of range 0..69")
    return a


class DealError(SpadesError):
    """A preset deal that is not a valid deal (wrong count, duplicate or bad card)."""


@dataclass
class HandLog:
    """What happened in one hand: how it started, every action, and the result."""

    dealer: int
    scores_before: tuple[int, int]
    bags_before: tuple[int, int]
    hands: tuple[int, ...]  # bit masks of the dealt hands (four-player game)
    stock: tuple[int, ...]  # the deck order (two-player game: the stock)
    actions: list[int] = field(default_factory=list)
    result: dict | None = None


class Observation(NamedTuple):
    """One seat's view: the observation vector and its legal-action mask."""

    observation: np.ndarray  # float32[OBS_SIZE], relative to the seat (spades_env.core.observation)
    action_mask: np.ndarray  # int8[70]: the seat's legal actions; all zeros unless it is to act


class StepResult(NamedTuple):
    """What one :meth:`SpadesGame.step` did."""

    seat: int  # the seat that acted (or tried to)
    action: Any  # the action as given
    phase: str  # the phase the action was taken in
    rewards: tuple[float, ...]  # per seat, this step (settled at the end of a hand, or the penalty)
    terminated: bool  # the episode ended (decided, or by an illegal action under "penalty")
    truncated: bool  # the episode was cut short by the rules' max_hands
    illegal: bool = False  # "penalty": the action was illegal; nothing else changed
    hand: HandLog | None = None  # the log of the hand this step finished (with its result)
    hand_end_state: np.ndarray | None = None  # copy of the state row as that hand ended

    @property
    def done(self) -> bool:
        """The episode is over."""
        return self.terminated or self.truncated


_OBS_SIZE = 0
_ENCODE = None


def _encoder() -> Any:
    """The observation encoder, :func:`spades_env.core.observation.encode_observation`.

    The encoder is built on the core (it imports only ``spades_env.core``), so the core's
    modules do not import it at import time: it is imported here, once, on the first
    ``observe`` (the one import from the core to the module right above it)."""
    global _ENCODE, _OBS_SIZE
    if _ENCODE is None:
        from spades_env.core.observation import OBS_SIZE, encode_observation

        _OBS_SIZE, _ENCODE = OBS_SIZE, encode_observation
    return _ENCODE



def _parse_cards(cards: Sequence[int | str], where: str) -> list[int]:
    if isinstance(cards, (str, bytes, dict)) or not isinstance(cards, (Sequence, np.ndarray)):
        raise DealError(f"{where} must be a list of cards (ids 0..51 or strings like 'AS'), got {cards!r}")
    out = []
    for i, c in enumerate(cards):
        try:
            out.append(check_card(c, f"{where}, card {i}"))
        except ValueError as exc:
            raise DealError(str(exc)) from None
    return out


def deck_from_hands(hands: Sequence[Sequence[int | str]], dealer: int) -> np.ndarray:
    """The deck order that deals ``hands`` (four lists of 13 cards) from seat ``dealer + 1``."""
    if isinstance(hands, (str, bytes, dict)) or not isinstance(hands, (Sequence, np.ndarray)):
        raise DealError(f"a four-player deal is 4 lists of 13 cards, got {hands!r}")
    if len(hands) != 4:
        raise DealError(f"a four-player deal needs 4 hands, got {len(hands)}")
    parsed = [_parse_cards(h, f"hand of seat {s}") for s, h in enumerate(hands)]
    seen: dict[int, int] = {}
    for s, h in enumerate(parsed):
        if len(h) != 13:
            raise DealError(f"hand of seat {s} has {len(h)} cards, needs 13")
        for c in h:
            if c in seen:
                raise DealError(f"card {card_to_str(c)} is dealt twice (seats {seen[c]} and {s})")
            seen[c] = s
    first = (dealer + 1) % 4
    deck = np.empty(NUM_CARDS, dtype=np.int64)
    for i in range(NUM_CARDS):
        deck[i] = parsed[(first + i) % 4][i // 4]
    return deck


def deck_from_stock(stock: Sequence[int | str]) -> np.ndarray:
    """A two-player stock (52 distinct cards, top first) as a deck array."""
    parsed = _parse_cards(stock, "stock")
    if len(parsed) != NUM_CARDS:
        raise DealError(f"the stock has {len(parsed)} cards, needs 52")
    if len(set(parsed)) != NUM_CARDS:
        dup = next(c for c in parsed if parsed.count(c) > 1)
        raise DealError(f"card {card_to_str(dup)} appears twice in the stock")
    return np.asarray(parsed, dtype=np.int64)


class SpadesGame:
    """One match of Spades (hands, games to ``target_score``, best-of-``match_games``), and
    the one way to step it as an episode.

    ``episode``, ``reward``, ``reward_scale``, ``illegal`` and ``illegal_reward`` are the
    episode knobs of :meth:`step` (:class:`~spades_env.core.episode.EpisodeKnobs`; change
    them with :meth:`set_episode`):

    * :meth:`observe` ``(seat)`` -> :class:`Observation` ``(observation, action_mask)``: the
      seat's ``float32[OBS_SIZE]`` vector (relative to it, :mod:`spades_env.core.observation`) and its
      ``int8[70]`` legal mask (all zeros unless it is to act in a running episode).
    * :meth:`step` ``(action)`` -> :class:`StepResult`: applies the action of the seat to act;
      when that ends a hand, settles the rewards by the knobs (``"score"``: each seat its
      team's score change times ``reward_scale``; ``"win"``: +1 / -1 at the episode's end),
      then either ends the episode (``terminated``, or ``truncated`` by ``max_hands``) or
      deals the next hand and starts its log. An illegal action raises
      :class:`IllegalActionError` with nothing changed (``illegal="raise"``, the default), or
      ends the episode with ``illegal_reward`` for that seat (``illegal="penalty"``).
      ``step`` after the episode ended raises :class:`IllegalActionError`.

    ``apply`` / ``next_hand`` are the low-level moves under ``step`` (no rewards, no dealing
    on); mixing them with ``step`` is allowed (``next_hand`` starts a new episode)."""

    def __init__(
        self,
        rules: RulesConfig | str | dict | None = None,
        seed: int | None = None,
        *,
        dealer: int | None = None,
        episode: str = "game",
        reward: str = "score",
        reward_scale: float = 0.01,
        illegal: str = "raise",
        illegal_reward: float = -1.0,
    ) -> None:
        self.rules = load_rules(rules)
        self.params = self.rules.to_params()
        self.num_seats = self.rules.num_players
        if dealer is not None:
            dealer = check_seat(dealer, self.num_seats, "dealer")
        seed = check_seed(seed)
        self._set_knobs(EpisodeKnobs(episode, reward, reward_scale, illegal, illegal_reward))
        self.state = np.zeros(L.STATE_SIZE, dtype=np.int64)
        E.init_state(self.state, self.params, seed_to_rng(seed), -1 if dealer is None else dealer)
        self.hand_logs: list[HandLog] = []
        self._mask = np.zeros(NUM_ACTIONS, dtype=np.int8)
        self._rew = np.zeros(4, dtype=np.float64)
        self.episode_status = RUNNING
        """``RUNNING``, ``TERMINATED`` or ``TRUNCATED`` (:mod:`spades_env.core.episode`)."""
        self.begin_hand_log()

    # ---- episode knobs ----------------------------------------------------------------
    def _set_knobs(self, knobs: EpisodeKnobs) -> None:
        self.knobs = knobs
        self._knob_codes = (knobs.episode_code, knobs.reward_code, knobs.reward_scale)
        self._zero = (0.0,) * self.num_seats

    def set_episode(self, **knobs: Any) -> None:
        """Change episode knobs (``episode``, ``reward``, ``reward_scale``, ``illegal``,
        ``illegal_reward``); checked before anything changes."""
        unknown = set(knobs) - {"episode", "reward", "reward_scale", "illegal", "illegal_reward"}
        if unknown:
            raise InputError(f"set_episode: unknown knob(s) {sorted(unknown)}")
        self._set_knobs(replace(self.knobs, **knobs))

    @property
    def episode_over(self) -> bool:
        """The episode of :meth:`step` has ended (terminated or truncated)."""
        return self.episode_status != RUNNING

    # ---- set-up ---------------------------------------------------------------------
    def set_hand(
        self,
        *,
        hands: Sequence[Sequence[int | str]] | None = None,
        stock: Sequence[int | str] | None = None,
        dealer: int | None = None,
        scores: Sequence[int] | None = None,
        bags: Sequence[int] | None = None,
    ) -> None:
        """Restart the current hand with a given deal, dealer, scores and bags (each
        optional). Everything is validated before anything changes.

        Scores and bags must be ones a real game of these rules can reach (see
        :mod:`spades_env.core.validate`): bags ``0..bag_limit - 1``; scores below
        ``target_score`` unless tied, above ``mercy_threshold`` with the mercy rule. To study
        a position past the target, raise ``target_score``. A bad value raises
        :class:`~spades_env.core.validate.InputError` (a ``ValueError``); a bad deal
        :class:`DealError`."""
        st = self.state.copy()
        if dealer is not None:
            st[L.DEALER] = check_seat(dealer, self.num_seats, "dealer")
        if scores is not None:
            st[L.SCORES : L.SCORES + 2] = check_scores(scores, self.rules)
        if bags is not None:
            st[L.BAGS : L.BAGS + 2] = check_bags(bags, self.rules)
        if hands is not None and stock is not None:
            raise DealError("give either hands (four-player game) or stock (two-player game)")
        if hands is not None:
            if self.num_seats != 4:
                raise DealError("the two-player game has no dealt hands: give the stock")
            st[L.DECK : L.DECK + NUM_CARDS] = deck_from_hands(hands, int(st[L.DEALER]))
        elif stock is not None:
            if self.num_seats != 2:
                raise DealError("the four-player game is dealt: give the hands")
            st[L.DECK : L.DECK + NUM_CARDS] = deck_from_stock(stock)
        st[L.PHASE] = L.PH_BID
        E.start_hand(st, self.params)
        self.state[:] = st
        self.episode_status = RUNNING
        self.begin_hand_log()

    def begin_hand_log(self) -> None:
        """Start the log of the hand now in the state (call after the core dealt it)."""
        s = self.state
        self.hand_logs.append(
            HandLog(
                dealer=int(s[L.DEALER]),
                scores_before=(int(s[L.SCORES]), int(s[L.SCORES + 1])),
                bags_before=(int(s[L.BAGS]), int(s[L.BAGS + 1])),
                hands=tuple(int(s[L.HANDS + i]) for i in range(self.num_seats)),
                stock=tuple(int(c) for c in s[L.DECK : L.DECK + NUM_CARDS]),
            )
        )
        if len(self.hand_logs) > 1 and self.hand_logs[-2].result is None:
            self.hand_logs.pop(-2)  # a restarted hand replaces the unfinished one

    # ---- reading --------------------------------------------------------------------
    @property
    def phase(self) -> str:
        """Phase name: blind, bid, exchange, play, draw, hand_end, game_end, match_end."""
        return L.PHASE_NAMES[int(self.state[L.PHASE])]

    @property
    def current_player(self) -> int:
        """Seat to act, or -1 when nobody acts (between hands, or over)."""
        return int(self.state[L.TURN])

    @property
    def dealer(self) -> int:
        return int(self.state[L.DEALER])

    @property
    def scores(self) -> tuple[int, int]:
        return int(self.state[L.SCORES]), int(self.state[L.SCORES + 1])

    @property
    def bags(self) -> tuple[int, int]:
        return int(self.state[L.BAGS]), int(self.state[L.BAGS + 1])

    @property
    def bids(self) -> list[int | str | None]:
        """Bids per seat: None (not yet), 0..13, or ``"blind"``."""
        out: list[int | str | None] = []
        for i in range(self.num_seats):
            b = int(self.state[L.BIDS + i])
            out.append(None if b == L.BID_NONE else "blind" if b == L.BID_BLIND_NIL else b)
        return out

    @property
    def tricks_won(self) -> list[int]:
        return [int(self.state[L.TRICKS_WON + i]) for i in range(self.num_seats)]

    @property
    def game_wins(self) -> tuple[int, int]:
        return int(self.state[L.GAME_WINS]), int(self.state[L.GAME_WINS + 1])

    @property
    def is_hand_over(self) -> bool:
        return int(self.state[L.PHASE]) >= L.PH_HAND_END

    @property
    def is_game_over(self) -> bool:
        return int(self.state[L.PHASE]) >= L.PH_GAME_END

    @property
    def is_over(self) -> bool:
        """The match is over (decided, or truncated by the hand cap)."""
        return int(self.state[L.PHASE]) == L.PH_MATCH_END

    @property
    def truncated(self) -> bool:
        """The last game was cut short by ``max_hands``."""
        return bool(self.state[L.TRUNCATED])

    def hand(self, seat: int) -> list[str]:
        """Cards held by ``seat``, as strings, ascending by id."""
        seat = check_seat(seat, self.num_seats)
        return [card_to_str(c) for c in cards_from_mask(self.state[L.HANDS + seat])]

    def legal_mask(self) -> np.ndarray:
        """``int8[70]``: 1 for each legal action of the seat to act."""
        E.legal_mask(self.state, self.params, self._mask)
        return self._mask.copy()

    def legal_actions(self) -> list[int]:
        """Legal action ids of the seat to act (empty when nobody acts)."""
        E.legal_mask(self.state, self.params, self._mask)
        return [int(a) for a in np.flatnonzero(self._mask)]

    def observe(self, seat: int | None = None) -> Observation:
        """``seat``'s view (default: the seat to act): its observation vector (relative to
        it) and its legal-action mask, all zeros unless it is to act in a running episode."""
        encode = _encoder()
        if seat is None:
            seat = self.current_player
            if seat < 0:
                raise InputError(f"observe(): no seat is to act in phase '{self.phase}'; name the seat")
        elif not (type(seat) is int and 0 <= seat < self.num_seats):
            seat = check_seat(seat, self.num_seats)
        obs = np.empty(_OBS_SIZE, dtype=np.float32)
        encode(self.state, self.params, seat, obs)
        mask = np.zeros(NUM_ACTIONS, dtype=np.int8)
        if seat == self.state[L.TURN] and self.episode_status == RUNNING:
            E.legal_mask(self.state, self.params, mask)
        return Observation(obs, mask)

    # ---- acting ---------------------------------------------------------------------
    def step(self, action: int) -> StepResult:
        """Apply the action of the seat to act, settle the episode knobs, deal on (see the
        class docstring). Raises :class:`IllegalActionError` after the episode ended, when
        nobody is to act, and for an illegal action under ``illegal="raise"`` (nothing
        changed); under ``"penalty"`` an illegal action ends the episode instead."""
        action = check_action(action)  # not an action id: an error whatever the illegal setting
        if self.episode_status != RUNNING:
            raise OrderError(
                f"step() after the episode ended ({'terminated' if self.episode_status == TERMINATED else 'truncated'}"
                f", episode='{self.knobs.episode}'); start a new game"
            )
        state = self.state
        seat = int(state[L.TURN])
        phase = L.PHASE_NAMES[int(state[L.PHASE])]
        try:
            self.apply(action)
        except IllegalActionError:
            if self.knobs.illegal == "raise" or seat < 0:
                raise
            self.episode_status = TERMINATED
            rewards = list(self._zero)
            rewards[seat] = self.knobs.illegal_reward
            return StepResult(seat, action, phase, tuple(rewards), True, False, True)
        if state[L.PHASE] < L.PH_HAND_END:
            return StepResult(seat, action, phase, self._zero, False, False)
        log = self.hand_logs[-1]
        end_state = state.copy()
        ep, rw, scale = self._knob_codes
        status = settle(state, self.params, ep, rw, scale, self._rew)
        rew = self._rew
        rewards = tuple(float(rew[i]) for i in range(self.num_seats))
        if status == RUNNING:
            self.begin_hand_log()  # settle dealt the next hand
        else:
            self.episode_status = status
        return StepResult(
            seat, action, phase, rewards, status == TERMINATED, status == TRUNCATED, False, log, end_state
        )

    def apply(self, action: int) -> None:
        """Apply an action of the seat to act; raises IllegalActionError (state unchanged)."""
        if is_int(action) and not 0 <= int(action) < NUM_ACTIONS:
            legal = self.legal_actions()
            raise NotAnActionError(
                f"action {brief(action)} (out of range 0..69) is not an action id; legal: {legal} "
                f"({', '.join(action_to_str(x) for x in legal)})"
            )
        a = check_action(action)  # the compiled core takes int64 0..69 only: 10**20 never reaches it
        code = E.apply_action(self.state, self.params, a)
        if code == E.OK:
            log = self.hand_logs[-1]
            log.actions.append(a)
            if int(self.state[L.PHASE]) >= L.PH_HAND_END:
                log.result = self.hand_result()
            return
        if code == E.ERR_NOBODY_TO_ACT:
            raise IllegalActionError(
                f"no seat is to act in phase '{self.phase}'"
                + (
                    "; call next_hand() to deal the next hand"
                    if self.phase in ("hand_end", "game_end")
                    else ""
                )
            )
        legal = self.legal_actions()
        name = action_to_str(a) if 0 <= a < NUM_ACTIONS else "out of range 0..69"
        raise IllegalActionError(
            f"action {a} ({name}) is illegal for seat {self.current_player} in phase "
            f"'{self.phase}'; legal: {legal} ({', '.join(action_to_str(x) for x in legal)})"
        )

    def next_hand(self) -> None:
        """Deal the next hand after a hand (or game) has ended."""
        if E.next_hand(self.state, self.params) != E.OK:
            raise IllegalActionError(f"next_hand() needs a finished hand; phase is '{self.phase}'")
        self.episode_status = RUNNING
        self.begin_hand_log()

    def hand_result(self) -> dict:
        """Bids, tricks, points and totals of the hand just scored."""
        s = self.state
        return {
            "bids": self.bids,
            "tricks": self.tricks_won,
            "points": [int(s[L.HAND_DELTA]), int(s[L.HAND_DELTA + 1])],
            "scores": list(self.scores),
            "bags": list(self.bags),
            "phase": self.phase,
            "game_winner": int(s[L.GAME_WINNER]),
            "truncated": bool(s[L.TRUNCATED]),
        }

    def copy(self) -> SpadesGame:
        """An independent copy (state and logs)."""
        g = SpadesGame.__new__(SpadesGame)
        g.rules, g.params, g.num_seats = self.rules, self.params, self.num_seats
        g._set_knobs(self.knobs)
        g._rew = np.zeros(4, dtype=np.float64)
        g.episode_status = self.episode_status
        g.state = self.state.copy()
        g.hand_logs = [
            HandLog(h.dealer, h.scores_before, h.bags_before, h.hands, h.stock, list(h.actions), h.result)
            for h in self.hand_logs
        ]
        g._mask = np.zeros(NUM_ACTIONS, dtype=np.int8)
        return g

    # ---- text -----------------------------------------------------------------------
    def to_text(self, viewer: int | None = None) -> str:
        """A readable table; ``viewer`` shows only that seat's hand (None: all hands)."""
        if viewer is not None:
            viewer = check_seat(viewer, self.num_seats, "viewer")
        s = self.state
        names = seat_names(self.num_seats)
        teams = ("NS", "EW") if self.num_seats == 4 else names
        lines = [
            f"Spades ({self.rules.name})  game {int(s[L.GAME_NUM]) + 1}, hand {int(s[L.HAND_NUM]) + 1}"
            f"  dealer {names[self.dealer]}  phase {self.phase}"
            + (f"  to act {names[self.current_player]}" if self.current_player >= 0 else ""),
            "  ".join(
                f"{teams[t]}: {self.scores[t]} pts, {self.bags[t]} bags, {self.game_wins[t]} games"
                for t in range(2)
            ),
        ]
        bids = self.bids
        for seat in range(self.num_seats):
            b = bids[seat]
            btxt = "-" if b is None else "Blind Nil" if b == "blind" else "Nil" if b == 0 else str(b)
            row = f"  {names[seat]:>2}  bid {btxt:<9} won {self.tricks_won[seat]:>2}"
            if viewer is None or viewer == seat:
                row += f"  {format_cards(int(s[L.HANDS + seat]))}"
            lines.append(row)
        trick = [
            f"{names[(int(s[L.TRICK_LEADER]) + k) % self.num_seats]} "
            f"{card_to_str(int(s[L.TRICK_CARDS + (int(s[L.TRICK_LEADER]) + k) % self.num_seats]))}"
            for k in range(int(s[L.TRICK_SIZE]))
        ]
        lines.append(
            f"  trick {int(s[L.TRICKS_PLAYED]) + (1 if self.phase == 'play' else 0)}: "
            + (", ".join(trick) if trick else "-")
            + ("   spades broken" if s[L.SPADES_BROKEN] else "")
        )
        if self.phase == "draw" and (viewer is None or viewer == self.current_player):
            lines.append(f"  shown card: {card_to_str(int(s[L.DECK + int(s[L.STOCK_POS])]))}")
        return "\n".join(lines)

    def __str__(self) -> str:
        return self.to_text()
