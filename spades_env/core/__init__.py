"""The rules of Spades, written once.

Everything else in the package (the PettingZoo env, the batched engine, records, bots) calls
these functions; no rule is implemented anywhere else. The state of one game is a row of
``int64`` (see :mod:`spades_env.core.layout`), the rules are a frozen
:class:`~spades_env.core.rules.RulesConfig` turned into an ``int64`` parameter row, and the hot
functions are compiled with numba so the same code runs one game or a batch.
"""

from spades_env.core.actions import (
    ACTION_BLIND_NIL,
    ACTION_DISCARD,
    ACTION_KEEP,
    ACTION_SEE_CARDS,
    BID_BASE,
    NUM_ACTIONS,
    action_to_str,
)
from spades_env.core.cards import card_from_str, card_to_str, cards_from_mask, mask_from_cards
from spades_env.core.game import IllegalActionError, SpadesGame
from spades_env.core.rules import RulesConfig, RulesError, load_rules, preset_names
from spades_env.core.scoring import HandScore, score_hand

__all__ = [
    "ACTION_BLIND_NIL",
    "ACTION_DISCARD",
    "ACTION_KEEP",
    "ACTION_SEE_CARDS",
    "BID_BASE",
    "NUM_ACTIONS",
    "HandScore",
    "IllegalActionError",
    "RulesConfig",
    "RulesError",
    "SpadesGame",
    "action_to_str",
    "card_from_str",
    "card_to_str",
    "cards_from_mask",
    "load_rules",
    "mask_from_cards",
    "preset_names",
    "score_hand",
]
