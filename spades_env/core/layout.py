"""Where everything lives in a game's state row and a rules parameter row.

One game is a row of ``STATE_SIZE`` ``int64``; sets of cards are 52-bit masks. Per-seat fields
hold 4 entries (the two-player game uses seats 0 and 1 only); per-team fields hold 2 (in the
two-player game each seat is its own team, ``team = seat % 2`` in both variants).
"""

from __future__ import annotations

# ---- phases ----------------------------------------------------------------------------
PH_BLIND = 0  # the seat to act chooses Blind Nil (66) or See cards (67)
PH_BID = 1  # the seat to act bids 0..13
PH_EXCHANGE = 2  # blind-nil exchange: the seat to act passes a card to its partner
PH_PLAY = 3  # trick play
PH_DRAW = 4  # two-player draw: keep (68) or discard (69) the shown card
PH_HAND_END = 5  # hand scored, game goes on: call next_hand
PH_GAME_END = 6  # game decided, match goes on: call next_hand
PH_MATCH_END = 7  # match decided, or cut short by the hand cap (TRUNCATED = 1)
NUM_PHASES = 8
PHASE_NAMES = ("blind", "bid", "exchange", "play", "draw", "hand_end", "game_end", "match_end")

BLIND_UNDECIDED, BLIND_SAW, BLIND_NIL = 0, 1, 2
BID_NONE = -1
BID_BLIND_NIL = 14  # stored in BIDS for a Blind Nil bidder
NO_CARD = -1

# ---- state row -------------------------------------------------------------------------
NUM_SEATS = 0
PHASE = 1
DEALER = 2
TURN = 3  # seat to act, -1 when nobody acts
RNG = 4  # 48-bit generator state for the deals
TRICK_LEADER = 5
TRICK_SIZE = 6  # cards in the current trick
TRICKS_PLAYED = 7  # completed tricks this hand
SPADES_BROKEN = 8
HAND_NUM = 9  # hands completed in this game
GAME_NUM = 10  # games completed in this match
GAME_WINNER = 11  # team that won the last finished game, -1 if none/truncated
MATCH_WINNER = 12
TRUNCATED = 13  # game (and match) cut short by the hand cap
EXCH_STEP = 14  # index into EXCH_SEQ
EXCH_LEFT = 15  # cards the current giver still has to pass
STOCK_POS = 16  # two-player draw: index in DECK of the shown card
LAST_TRICK_WINNER = 17
TOTAL_HANDS = 18  # hands completed in the match
DECISIONS = 19  # actions applied this hand
HANDS = 20  # [4] bit masks
BIDS = 24  # [4] -1 none, 0..13, BID_BLIND_NIL
TRICKS_WON = 28  # [4]
TRICK_CARDS = 32  # [4] card each seat played to the current trick, -1
PLAYED = 36  # [4] bit masks of cards each seat played this hand
PASSED = 40  # [4] bit masks of cards each seat passed in the exchange
RECEIVED = 44  # [4] bit masks of cards each seat received in the exchange
DISCARDED = 48  # [4] two-player draw: bit masks of each seat's discards
SCORES = 52  # [2] per team
BAGS = 54  # [2]
GAME_WINS = 56  # [2]
EXCH_SEQ = 58  # [4] seats that pass, in order, -1 unused
BLIND_STATUS = 62  # [4] BLIND_UNDECIDED / BLIND_SAW / BLIND_NIL
HAND_DELTA = 66  # [2] score change of each team in the last scored hand
LAST_TRICK = 68  # [4] cards of the last completed trick, by seat
DECK = 72  # [52] the shuffled deck of this hand (the deal, or the two-player stock)
SHOWN_OUT = 124  # [4] suit bit sets each seat has shown out of this hand (failed to follow: public)
STATE_SIZE = 128

# ---- rules parameter row (see RulesConfig.to_params) -----------------------------------
P_NUM_SEATS = 0
P_BLIND_NIL = 1
P_BLIND_NIL_MIN_DEFICIT = 2
P_EXCHANGE_CARDS = 3
P_NIL_VALUE = 4
P_BLIND_NIL_VALUE = 5
P_BAG_LIMIT = 6
P_BAG_PENALTY = 7
P_FAILED_NIL_COUNTS = 8
P_MUST_BREAK_SPADES = 9
P_TARGET_SCORE = 10
P_MERCY = 11
P_MERCY_THRESHOLD = 12
P_MAX_HANDS = 13
P_GAMES_TO_WIN = 14
P_TRICK_VALUE = 15
P_FIRST_DEALER = 16
PARAMS_SIZE = 17
