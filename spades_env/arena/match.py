"""Playing one hand, game or match with four seated policies, and what each hand produced.

Each seat's policy acts only on its own observation (``encode_observation``) and the legal
mask of the seat to act. Policies are named by strings resolved through the bots registry
(``"random"``, ``"greedy"``, ``"heuristic"``, ``"search:budget=0.1"``), or given as a picklable
factory ``f(seed, rules) -> Policy``; a path to a checkpoint is handed to a loader hook.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from spades_env.core import layout as L
from spades_env.core.game import SpadesGame
from spades_env.core.rules import RulesConfig
from spades_env.core.scoring import contract_tricks as counted_tricks
from spades_env.core.scoring import score_team, team_contract
from spades_env.core.validate import InputError
from spades_env.observation import OBS_SIZE, encode_observation
from spades_env.policy import Policy, RandomPolicy

FORMATS = ("hand", "game", "match")

PolicyFactory = Callable[[int, RulesConfig], Policy]
PolicySpec = str | PolicyFactory

# Loaders for policy names that are not bots, tried in order: (predicate(name), loader(name,
# seed, rules)). Checkpoint loading registers itself here (see ``register_policy_loader``).
_LOADERS: list[tuple[Callable[[str], bool], Callable[[str, int | None, RulesConfig], Policy]]] = []


def register_policy_loader(
    predicate: Callable[[str], bool], loader: Callable[[str, int | None, RulesConfig], Policy]
) -> None:
    """Let names for which ``predicate(name)`` holds (e.g. checkpoint paths) be loaded by
    ``loader(name, seed, rules)``. Must be registered in every worker process too (do it at
    import time of the module that defines the loader)."""
    _LOADERS.append((predicate, loader))


def _looks_like_path(name: str) -> bool:
    return "/" in name or name.endswith((".safetensors", ".json", ".pt")) or Path(name).exists()


def resolve_policy(spec: PolicySpec, seed: int | None, rules: RulesConfig) -> Policy:
    """A Policy from a name (bots registry, checkpoint path) or a factory ``f(seed, rules)``."""
    if callable(spec):
        return spec(seed, rules)
    if not isinstance(spec, str) or not spec:
        raise InputError(f"a policy must be a name or a factory f(seed, rules), got {spec!r}")
    for predicate, loader in _LOADERS:
        if predicate(spec):
            return loader(spec, seed, rules)
    try:
        from spades_env.bots import POLICY_NAMES, make_policy
    except ImportError:  # no bots registry: only "random"
        POLICY_NAMES, make_policy = ("random",), None
    base = spec.split(":", 1)[0].strip().lower()
    if base not in POLICY_NAMES and _looks_like_path(spec):
        try:
            from spades_env.checkpoint import load_policy  # type: ignore[import-not-found]
        except ImportError:
            raise InputError(
                f"policy {spec!r} looks like a checkpoint path, but no checkpoint loader is "
                "installed (spades_env.checkpoint.load_policy, or register_policy_loader)"
            ) from None
        return load_policy(spec, seed=seed, rules=rules)
    if make_policy is not None:
        return make_policy(spec, seed=seed, rules=rules)
    if spec == "random":
        return RandomPolicy(seed)
    raise InputError(f"unknown policy {spec!r} (the bots registry spades_env.bots is not available)")


def check_policy_name(spec: PolicySpec) -> None:
    """Refuse, before any play, a policy spec that :func:`resolve_policy` could never load: a
    non-string, an unknown bot, bad bot options (``PolicyNameError``), a checkpoint path that
    does not exist. Nothing is loaded (a checkpoint's contents are checked when it loads)."""
    if callable(spec):
        return
    if not isinstance(spec, str) or not spec.strip():
        raise InputError(f"a policy must be a non-empty name or a factory f(seed, rules), got {spec!r}")
    if any(predicate(spec) for predicate, _ in _LOADERS):
        return
    try:
        from spades_env.bots import POLICY_NAMES, parse_policy_name
    except ImportError:  # no bots registry: only "random"
        if spec != "random" and not _looks_like_path(spec):
            raise InputError(f"unknown policy {spec!r} (the bots registry spades_env.bots is not available)") from None
        return
    base = spec.split(":", 1)[0].strip().lower()
    if base not in POLICY_NAMES and _looks_like_path(spec):
        if not Path(spec).exists():
            raise InputError(f"{spec}: no such checkpoint (the path does not exist)")
        return
    parse_policy_name(spec)


def spec_name(spec: PolicySpec) -> str:
    """Display name of a policy spec."""
    if isinstance(spec, str):
        return spec
    return getattr(spec, "name", None) or getattr(spec, "__name__", None) or type(spec).__name__


def parse_team(text: str) -> tuple[str, str]:
    """A team from ``"heuristic"`` (both seats) or ``"heuristic+search:budget=0.1"``."""
    parts = [p.strip() for p in str(text).split("+")]
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
    hands: tuple[int, ...]  # dealt hand masks per seat
    bids: tuple[int, ...]  # per seat, layout encoding (BID_BLIND_NIL for Blind Nil)
    tricks: tuple[int, ...]
    teams: tuple[TeamHand, TeamHand]  # absolute teams NS, EW


@dataclass
class PlayResult:
    """Everything one run (one seating of one deal sequence) produced."""

    hands: list[HandRecord] = field(default_factory=list)
    game_winners: list[int] = field(default_factory=list)  # absolute team, -1 truncated / none
    match_winner: int = -1
    truncated: bool = False


def _team_hand(state: np.ndarray, params: np.ndarray, team: int, bags_before: int) -> TeamHand:
    bids = state[L.BIDS : L.BIDS + 4]
    tricks = state[L.TRICKS_WON : L.TRICKS_WON + 4]
    _, _, won = score_team(bids, tricks, team, 4, bags_before, params)
    nil_bids = nil_made = blind_bids = blind_made = 0
    for s in (team, team + 2):
        b, t = int(bids[s]), int(tricks[s])
        if b == 0:
            nil_bids += 1
            nil_made += t == 0
        elif b == L.BID_BLIND_NIL:
            blind_bids += 1
            blind_made += t == 0
    contract = int(team_contract(bids, team, 4))
    contract_tricks = int(counted_tricks(bids, tricks, team, 4, params))
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


def play(game: SpadesGame, policies: list[Policy], fmt: str = "game") -> PlayResult:
    """Play ``game`` from its current hand with ``policies[seat]`` until the end of the hand,
    game or match (``fmt``); return the hands played and the winners. Raises RuntimeError
    after ``MAX_HANDS_PER_RUN`` hands (rules without a hand cap whose game never ends)."""
    if fmt not in FORMATS:
        raise InputError(f"format must be one of {FORMATS}, got {fmt!r}")
    if game.num_seats != 4:
        raise InputError("the arena plays the four-player game (two partnerships)")
    if len(policies) != 4:
        raise InputError(f"need 4 policies (one per seat), got {len(policies)}")
    state, params = game.state, game.params
    for p in policies:
        bind = getattr(p, "bind", None)
        if callable(bind):  # evaluation-only cheating bots read the true state (labelled "cheat")
            bind(lambda: game.state)
    obs = np.zeros(OBS_SIZE, dtype=np.float32)
    out = PlayResult()
    while True:
        dealt = tuple(int(state[L.HANDS + s]) for s in range(4))
        dealer = int(state[L.DEALER])
        bags_before = (int(state[L.BAGS]), int(state[L.BAGS + 1]))
        while not game.is_hand_over:
            seat = game.current_player
            encode_observation(state, params, seat, obs)
            mask = game.legal_mask()
            action = policies[seat].act(obs.copy(), mask)
            game.apply(int(action))  # raises IllegalActionError naming the seat and phase
        out.hands.append(
            HandRecord(
                game=int(state[L.GAME_NUM]) - (1 if game.is_game_over else 0),
                dealer=dealer,
                hands=dealt,
                bids=tuple(int(state[L.BIDS + s]) for s in range(4)),
                tricks=tuple(int(state[L.TRICKS_WON + s]) for s in range(4)),
                teams=(
                    _team_hand(state, params, 0, bags_before[0]),
                    _team_hand(state, params, 1, bags_before[1]),
                ),
            )
        )
        if game.is_game_over:
            out.game_winners.append(int(state[L.GAME_WINNER]))
        if game.is_over:
            out.match_winner = int(state[L.MATCH_WINNER])
            out.truncated = bool(state[L.TRUNCATED])
            return out
        if fmt == "hand" or (fmt == "game" and game.is_game_over):
            return out
        if len(out.hands) >= MAX_HANDS_PER_RUN:
            raise RuntimeError(
                f"no end after {len(out.hands)} hands (scores {game.scores}); set the rules' "
                "max_hands or mercy_rule so that games end"
            )
        game.next_hand()


def describe_rules(rules: RulesConfig) -> dict[str, Any]:
    """The rules as a plain dict for reports."""
    return rules.to_dict()
