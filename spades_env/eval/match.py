"""Playing one hand, game or match with seated policies (four, or two in the two-player game),
and what each hand produced.

Each seat's policy acts only on its own observation and legal mask
(:meth:`~spades_env.core.game.SpadesGame.observe`); the play goes through the one driver,
:func:`spades_env.policies.driver.drive`. Policies are named by strings resolved through the bots registry
(``"random"``, ``"greedy"``, ``"heuristic"``, ``"search:budget=0.1"``), or given as a picklable
factory ``f(seed, rules) -> Policy``; a path to a checkpoint is handed to a loader hook.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import numpy as np

from spades_env.core import layout as L
from spades_env.core.game import SpadesGame
from spades_env.core.rules import RulesConfig
from spades_env.core.scoring import contract_tricks as counted_tricks
from spades_env.core.scoring import score_team, team_contract
from spades_env.core.validate import InputError, InputTypeError, brief
from spades_env.policies.base import Policy
from spades_env.policies.driver import bind_true_state, drive
from spades_env.policies.registry import PolicySpec

FORMATS = ("hand", "game", "match")



def spec_name(spec: PolicySpec) -> str:
    """Display name of a policy spec."""
    if isinstance(spec, str):
        return spec
    return getattr(spec, "name", None) or getattr(spec, "__name__", None) or type(spec).__name__


def parse_team(text: str) -> tuple[str, str]:
    """A team from ``"heuristic"`` (both seats) or ``"heuristic+search:budget=0.1"``."""
    if not isinstance(text, str):
        raise InputTypeError(f"a team is a policy name or two joined by '+', got {brief(text)} ({type(text).__name__})")
    parts = [p.strip() for p in text.split("+")]
    if len(parts) == 1 and parts[0]:
        return parts[0], parts[0]
    if len(parts) == 2 and all(parts):
        return parts[0], parts[1]
    raise InputError(f"a team is one policy name or two joined by '+', got {text!r}")


def team_label(team: tuple[PolicySpec, PolicySpec]) -> str:
    """``"heuristic"`` for a pair of the same policy, else ``"heuristic+search"``."""
    a, b = spec_name(team[0]), spec_name(team[1])
    return a if a == b else f"{a}+{b}"


@dataclass
class TeamHand:
    """One team's side of one hand."""

    points: int  # score change this hand
    contract: int  # sum of the non-nil bids
    contract_tricks: int  # tricks that count toward the contract
    nil_bids: int
    nil_made: int
    blind_bids: int
    blind_made: int
    bags: int  # bags taken this hand (overtricks and failed-nil tricks)

    @property
    def set(self) -> bool:
        """A positive contract that was not made."""
        return self.contract > 0 and self.contract_tricks < self.contract

    @property
    def bid_error(self) -> int:
        """|tricks toward the contract - contract|."""
        return abs(self.contract_tricks - self.contract)


@dataclass
class HandRecord:
    """One hand as seen by the arena: the deal, and each absolute team's side."""

    game: int  # index of the game in the match
    dealer: int
    hands: tuple[int, ...]  # dealt hand masks per seat (four-player game; zeros in the two-player draw game)
    bids: tuple[int, ...]  # per seat, layout encoding (BID_BLIND_NIL for Blind Nil)
    tricks: tuple[int, ...]  # per seat
    teams: tuple[TeamHand, TeamHand]  # absolute teams NS, EW (two-player game: seat 0, seat 1)


@dataclass
class PlayResult:
    """Everything one run (one seating of one deal sequence) produced."""

    hands: list[HandRecord] = field(default_factory=list)
    game_winners: list[int] = field(default_factory=list)  # absolute team, -1 truncated / none
    match_winner: int = -1
    truncated: bool = False


def _team_hand(state: np.ndarray, params: np.ndarray, team: int, bags_before: int) -> TeamHand:
    """Absolute team ``team``'s side of the hand just scored in ``state`` (its seats are
    ``team, team + 2`` in the four-player game, seat ``team`` alone in the two-player game)."""
    n = int(state[L.NUM_SEATS])
    bids = state[L.BIDS : L.BIDS + 4]
    tricks = state[L.TRICKS_WON : L.TRICKS_WON + 4]
    _, _, won = score_team(bids, tricks, team, n, bags_before, params)
    nil_bids = nil_made = blind_bids = blind_made = 0
    for s in range(team, n, 2):
        b, t = int(bids[s]), int(tricks[s])
        if b == 0:
            nil_bids += 1
            nil_made += t == 0
        elif b == L.BID_BLIND_NIL:
            blind_bids += 1
            blind_made += t == 0
    contract = int(team_contract(bids, team, n))
    contract_tricks = int(counted_tricks(bids, tricks, team, n, params))
    return TeamHand(
        points=int(state[L.HAND_DELTA + team]),
        contract=contract,
        contract_tricks=contract_tricks,
        nil_bids=nil_bids,
        nil_made=int(nil_made),
        blind_bids=blind_bids,
        blind_made=int(blind_made),
        bags=int(won),
    )


MAX_HANDS_PER_RUN = 10_000


def hand_record(
    state: np.ndarray, params: np.ndarray, hands: tuple[int, ...], dealer: int, bags_before: tuple[int, int]
) -> HandRecord:
    """The arena's record of a hand from the state row as it was scored (``hands``: the dealt
    hands, ``dealer`` and ``bags_before`` as the hand started). The one-at-a-time and the
    batched arena both record hands with it."""
    n = int(state[L.NUM_SEATS])
    return HandRecord(
        game=int(state[L.GAME_NUM]) - (1 if state[L.PHASE] >= L.PH_GAME_END else 0),
        dealer=dealer,
        hands=tuple(hands[:n]),
        bids=tuple(int(state[L.BIDS + s]) for s in range(n)),
        tricks=tuple(int(state[L.TRICKS_WON + s]) for s in range(n)),
        teams=(
            _team_hand(state, params, 0, bags_before[0]),
            _team_hand(state, params, 1, bags_before[1]),
        ),
    )


def record_hand_end(out: PlayResult, record: HandRecord, state: np.ndarray, done: bool) -> None:
    """Append ``record`` to ``out`` and note a game's or the match's end from the scored
    ``state``; RuntimeError after ``MAX_HANDS_PER_RUN`` hands of a run that is not ``done``."""
    out.hands.append(record)
    if state[L.PHASE] >= L.PH_GAME_END:
        out.game_winners.append(int(state[L.GAME_WINNER]))
    if state[L.PHASE] == L.PH_MATCH_END:
        out.match_winner = int(state[L.MATCH_WINNER])
        out.truncated = bool(state[L.TRUNCATED])
    elif not done and len(out.hands) >= MAX_HANDS_PER_RUN:
        raise RuntimeError(
            f"no end after {len(out.hands)} hands (scores {tuple(int(x) for x in state[L.SCORES : L.SCORES + 2])}); "
            "set the rules' max_hands or mercy_rule so that games end"
        )


def play(game: SpadesGame, policies: list[Policy], fmt: str = "game") -> PlayResult:
    """Play ``game`` (four players, or two) from its current hand with ``policies[seat]``
    until the end of the hand, game or match (``fmt``, the game's episode knob for the run);
    return the hands played and the winners. The play goes through the one driver (:func:`spades_env.policies.driver.drive`, so
    :meth:`SpadesGame.step`). Raises RuntimeError after ``MAX_HANDS_PER_RUN`` hands (rules
    without a hand cap whose game never ends)."""
    if fmt not in FORMATS:
        raise InputError(f"format must be one of {FORMATS}, got {fmt!r}")
    if len(policies) != game.num_seats:
        raise InputError(f"need {game.num_seats} policies (one per seat), got {len(policies)}")
    params = game.params
    game.set_episode(episode=fmt)
    bind_true_state(game, policies)  # evaluation-only cheating bots read the true state
    out = PlayResult()

    def on_step(r: Any) -> None:
        if r.hand is None:
            return
        log, st = r.hand, r.hand_end_state
        record_hand_end(out, hand_record(st, params, log.hands, log.dealer, log.bags_before), st, r.done)

    drive(game, policies, on_step=on_step)  # raises IllegalActionError naming the seat and phase
    return out


def describe_rules(rules: RulesConfig) -> dict[str, Any]:
    """The rules as a plain dict for reports."""
    return rules.to_dict()
