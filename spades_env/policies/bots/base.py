"""Shared plumbing of the Python scripted bots: decode the observation (the public view of
:mod:`spades_env.core.observation`), dispatch on the phase."""

from __future__ import annotations

import numpy as np

from spades_env.core import layout as L
from spades_env.core.actions import (
    ACTION_DISCARD,
    ACTION_KEEP,
    ACTION_SEE_CARDS,
    BID_BASE,
)
from spades_env.core.observation import SeatView, decode
from spades_env.core.rules import RulesConfig, load_rules


class ScriptedBot:
    """Base class: ``act`` decodes the seat's observation and calls the phase method.

    Subclasses implement ``blind``, ``bid``, ``exchange``, ``play`` and ``draw``; each gets the
    :class:`SeatView` and the legal cards / actions and returns an action id. What a method
    returns is checked against the mask: a bot bug raises ``RuntimeError`` rather than playing
    an illegal action. ``rules`` tells the bot the variant (default: tournament)."""

    name = "scripted"

    def __init__(self, rules: RulesConfig | str | dict | None = None, seed: int | None = None) -> None:
        self.rules = load_rules(rules)
        self.params = self.rules.to_params()
        self.num_seats = self.rules.num_players
        self.rng = np.random.default_rng(seed)

    # ---- Policy -------------------------------------------------------------------------
    def act(self, observation: np.ndarray, action_mask: np.ndarray) -> int:
        """Pick a legal action from the seat's observation and ``int8[70]`` mask."""
        mask = np.asarray(action_mask)
        legal = np.flatnonzero(mask)
        if legal.size == 0:
            raise ValueError(f"{type(self).__name__}.act: the action mask has no legal action")
        v = decode(observation)
        phase = v.phase
        if phase == L.PH_BLIND:
            a = self.blind(v)
        elif phase == L.PH_BID:
            a = BID_BASE + int(self.bid(v))
        elif phase == L.PH_EXCHANGE:
            a = self.exchange(v, [int(c) for c in legal])
        elif phase == L.PH_PLAY:
            a = self.play(v, [int(c) for c in legal])
        elif phase == L.PH_DRAW:
            a = self.draw(v)
        else:
            a = int(legal[0])
        a = int(a)
        if not (0 <= a < mask.shape[0]) or not mask[a]:
            raise RuntimeError(
                f"{type(self).__name__} chose illegal action {a} in phase "
                f"{L.PHASE_NAMES[phase] if 0 <= phase < L.NUM_PHASES else phase}; legal: {list(legal)}"
            )
        return a

    # ---- defaults -----------------------------------------------------------------------
    def blind(self, v: SeatView) -> int:
        return ACTION_SEE_CARDS

    def bid(self, v: SeatView) -> int:
        return 1

    def exchange(self, v: SeatView, legal: list[int]) -> int:
        return min(legal, key=lambda c: (c % 13, c // 13))

    def play(self, v: SeatView, legal: list[int]) -> int:
        return legal[0]

    def draw(self, v: SeatView) -> int:
        c = v.draw_shown
        return ACTION_KEEP if c >= 0 and (c // 13 == 3 or c % 13 >= 10) else ACTION_DISCARD
