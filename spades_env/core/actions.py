"""The fixed action table: one ``Discrete(70)`` space for every variant.

=========  ==========================================================
id         meaning
=========  ==========================================================
0-51       a card (``13 * suit + rank``): play it, or pass it in the exchange
52-65      bid 0..13 (52 = Nil)
66         Blind Nil (chosen before seeing the hand)
67         See cards (decline Blind Nil)
68         two-player draw: keep the shown card
69         two-player draw: discard the shown card
=========  ==========================================================

Ids 0-65 are OpenSpiel's spades ids.
"""

from __future__ import annotations

from spades_env.core.cards import NUM_CARDS, card_to_str
from spades_env.core.validate import InputError, brief, is_int

NUM_ACTIONS = 70
BID_BASE = 52
MAX_BID = 13
ACTION_BLIND_NIL = 66
ACTION_SEE_CARDS = 67
ACTION_KEEP = 68
ACTION_DISCARD = 69


def bid_action(bid: int) -> int:
    """Action id of a bid of 0 (Nil) .. 13 tricks (an integer: ``2.5`` is refused)."""
    if not is_int(bid) or not 0 <= bid <= MAX_BID:
        raise InputError(f"bid {brief(bid)} must be an integer in 0..13")
    return BID_BASE + int(bid)


def action_to_str(action: int) -> str:
    """Readable name of an action id: ``"AS"``, ``"bid 4"``, ``"Nil"``, ``"Blind Nil"``..."""
    if not is_int(action):
        raise InputError(f"action id {brief(action)} must be an integer 0..{NUM_ACTIONS - 1}")
    a = int(action)
    if 0 <= a < NUM_CARDS:
        return card_to_str(a)
    if a == BID_BASE:
        return "Nil"
    if BID_BASE < a <= BID_BASE + MAX_BID:
        return f"bid {a - BID_BASE}"
    names = {
        ACTION_BLIND_NIL: "Blind Nil",
        ACTION_SEE_CARDS: "See cards",
        ACTION_KEEP: "keep",
        ACTION_DISCARD: "discard",
    }
    if a in names:
        return names[a]
    raise InputError(f"action id {brief(action)} is out of range 0..{NUM_ACTIONS - 1}")
