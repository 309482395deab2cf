"""The compiled rules: deal, legal moves, apply an action, score, next hand.

Every function works on one game's ``int64`` state row (``layout``) and the rules parameter
row (``RulesConfig.to_params``). They allocate nothing on the hot path, so the AEC env calls
them on one row and the batched engine calls them on each row of a ``[B, STATE_SIZE]`` array.

``apply_action`` returns ``OK`` or a negative error code and never changes the state when it
refuses an action. When the last trick of a hand is played the hand is scored and the phase
becomes ``PH_HAND_END``, ``PH_GAME_END`` or ``PH_MATCH_END``; ``next_hand`` deals the next one.
"""

from __future__ import annotations

from spades_env.core import layout as L
from spades_env.core.actions import (
    ACTION_BLIND_NIL,
    ACTION_DISCARD,
    ACTION_KEEP,
    ACTION_SEE_CARDS,
    BID_BASE,
    NUM_ACTIONS,
)
from spades_env.core.jit import card_bytes, inline_jit, jit
from spades_env.core.rng import below, shuffle_into
from spades_env.core.scoring import score_team

OK = 0
ERR_ILLEGAL = -1
ERR_NOBODY_TO_ACT = -2
ERR_NOT_BETWEEN_HANDS = -3

_SUIT_BITS = (1 << 13) - 1
_SPADE_MASK = _SUIT_BITS << 39
_NUM_CARDS = 52


@jit
def team_of(seat):
    """Team of a seat: NS = 0, EW = 1 (in the two-player game, the seat itself)."""
    return seat % 2


@jit
def partner_of(seat, num_seats):
    """Partner's seat, or -1 in the two-player game."""
    if num_seats == 4:
        return (seat + 2) % 4
    return -1


@jit
def seat_after(seat, k, n):
    """``(seat + k) % n`` for ``0 <= seat, k < n``, without a division (hot path)."""
    s = seat + k
    return s - n if s >= n else s


@jit
def relative_seat(observer, seat, n):
    """Where ``seat`` sits seen from ``observer``: ``(seat - observer) % n``, no division."""
    d = seat - observer
    return d + n if d < 0 else d


@inline_jit
def first_seat(state):
    """The seat left of the dealer: bids first and leads the first trick."""
    return seat_after(state[L.DEALER], 1, state[L.NUM_SEATS])


@inline_jit
def card_beats(card, best):
    """Whether ``card``, played after ``best`` (the card winning the trick so far; -1 when
    nothing is played yet), wins the trick from it: a higher card of its suit, or a spade on
    another suit."""
    if best < 0:
        return True
    cs = card // 13
    bs = best // 13
    return (cs == bs and card > best) or (cs == 3 and bs != 3)


@inline_jit
def trick_winner(state):
    """Seat winning the current trick so far (highest spade, else highest of the led suit)."""
    leader = state[L.TRICK_LEADER]
    n = state[L.NUM_SEATS]
    best_seat = leader
    best = state[L.TRICK_CARDS + leader]
    for k in range(1, state[L.TRICK_SIZE]):
        seat = seat_after(leader, k, n)
        c = state[L.TRICK_CARDS + seat]
        if card_beats(c, best):
            best = c
            best_seat = seat
    return best_seat


@inline_jit
def legal_cards(state, params):
    """Bit mask of the cards the seat to act may play (or pass, in the exchange)."""
    phase = state[L.PHASE]
    seat = state[L.TURN]
    if seat < 0:
        return 0
    hand = state[L.HANDS + seat]
    if phase == L.PH_EXCHANGE:
        return hand
    if phase != L.PH_PLAY:
        return 0
    if state[L.TRICK_SIZE] > 0:
        led = state[L.TRICK_CARDS + state[L.TRICK_LEADER]] // 13
        follow = hand & (_SUIT_BITS << (13 * led))
        if follow != 0:
            return follow
        return hand
    if params[L.P_MUST_BREAK_SPADES] != 0 and state[L.SPADES_BROKEN] == 0:
        other = hand & ~_SPADE_MASK
        if other != 0:
            return other
    return hand


@inline_jit
def is_legal(state, params, action):
    """Whether ``action`` is legal for the seat to act."""
    if action < 0 or action >= NUM_ACTIONS or state[L.TURN] < 0:
        return False
    phase = state[L.PHASE]
    if phase == L.PH_PLAY or phase == L.PH_EXCHANGE:
        return action < _NUM_CARDS and ((legal_cards(state, params) >> action) & 1) == 1
    if phase == L.PH_BID:
        return BID_BASE <= action <= BID_BASE + 13
    if phase == L.PH_BLIND:
        return action == ACTION_BLIND_NIL or action == ACTION_SEE_CARDS
    if phase == L.PH_DRAW:
        return action == ACTION_KEEP or action == ACTION_DISCARD
    return False


@inline_jit
def legal_mask(state, params, out):
    """Fill ``out[70]`` (a contiguous int8 or uint8 array) with 1 for each legal action of the
    seat to act, else 0."""
    for a in range(NUM_ACTIONS):
        out[a] = 0
    if state[L.TURN] < 0:
        return
    phase = state[L.PHASE]
    if phase == L.PH_PLAY or phase == L.PH_EXCHANGE:
        card_bytes(out, 0, legal_cards(state, params))
    elif phase == L.PH_BID:
        for a in range(BID_BASE, BID_BASE + 14):
            out[a] = 1
    elif phase == L.PH_BLIND:
        out[ACTION_BLIND_NIL] = 1
        out[ACTION_SEE_CARDS] = 1
    elif phase == L.PH_DRAW:
        out[ACTION_KEEP] = 1
        out[ACTION_DISCARD] = 1


@inline_jit
def blind_open_at(behind, params):
    """Whether the rules let a team that trails by ``behind`` points choose Blind Nil (it is
    allowed, and ``behind`` is at least ``blind_nil_min_deficit``)."""
    if params[L.P_BLIND_NIL] == 0:
        return False
    need = params[L.P_BLIND_NIL_MIN_DEFICIT]
    if need > 0:
        return behind >= need
    return True


@inline_jit
def blind_open_for_team(state, params, team):
    """Whether the rules and the score let ``team`` choose Blind Nil (:func:`blind_open_at`)."""
    return blind_open_at(state[L.SCORES + 1 - team] - state[L.SCORES + team], params)


@inline_jit
def blind_eligible(state, params, seat):
    """Whether ``seat`` is offered the Blind Nil decision now."""
    if state[L.BLIND_STATUS + seat] != L.BLIND_UNDECIDED:
        return False
    return blind_open_for_team(state, params, team_of(seat))


@jit
def _start_play(state):
    first = first_seat(state)
    state[L.PHASE] = L.PH_PLAY
    state[L.TRICK_LEADER] = first
    state[L.TURN] = first


@jit
def _after_bidding(state, params):
    n = state[L.NUM_SEATS]
    k = params[L.P_EXCHANGE_CARDS]
    steps = 0
    if n == 4 and k > 0:
        first = first_seat(state)
        for i in range(4):
            seat = (first + i) % 4
            p = (seat + 2) % 4
            if state[L.BIDS + seat] == L.BID_BLIND_NIL and state[L.BIDS + p] != L.BID_BLIND_NIL:
                state[L.EXCH_SEQ + steps] = p
                state[L.EXCH_SEQ + steps + 1] = seat
                steps += 2
    if steps > 0:
        state[L.PHASE] = L.PH_EXCHANGE
        state[L.EXCH_STEP] = 0
        state[L.EXCH_LEFT] = k
        state[L.TURN] = state[L.EXCH_SEQ]
    else:
        _start_play(state)


@jit
def _advance_bidding(state, params):
    """Give the turn to the next seat without a bid (Blind Nil first where offered)."""
    n = state[L.NUM_SEATS]
    first = first_seat(state)
    for i in range(n):
        seat = seat_after(first, i, n)
        if state[L.BIDS + seat] == L.BID_NONE:
            state[L.TURN] = seat
            if n == 4 and blind_eligible(state, params, seat):
                state[L.PHASE] = L.PH_BLIND
            else:
                state[L.PHASE] = L.PH_BID
            return
    _after_bidding(state, params)


@jit
def _advance_pre_draw(state, params):
    """Two-player game: Blind Nil decisions (non-dealer first), then the draw."""
    first = first_seat(state)
    for i in range(2):
        seat = (first + i) % 2
        if blind_eligible(state, params, seat):
            state[L.PHASE] = L.PH_BLIND
            state[L.TURN] = seat
            return
    state[L.PHASE] = L.PH_DRAW
    state[L.TURN] = first


@jit
def start_hand(state, params):
    """Start a hand from the deck already in ``state[DECK]`` (dealt round-robin from the
    seat left of the dealer in the four-player game; the stock in the two-player game)."""
    for i in range(4):
        state[L.HANDS + i] = 0
        state[L.BIDS + i] = L.BID_NONE
        state[L.TRICKS_WON + i] = 0
        state[L.TRICK_CARDS + i] = L.NO_CARD
        state[L.PLAYED + i] = 0
        state[L.PASSED + i] = 0
        state[L.RECEIVED + i] = 0
        state[L.DISCARDED + i] = 0
        state[L.EXCH_SEQ + i] = -1
        state[L.BLIND_STATUS + i] = L.BLIND_UNDECIDED
        state[L.LAST_TRICK + i] = L.NO_CARD
        state[L.SHOWN_OUT + i] = 0
    state[L.HAND_DELTA] = 0
    state[L.HAND_DELTA + 1] = 0
    state[L.TRICK_SIZE] = 0
    state[L.TRICKS_PLAYED] = 0
    state[L.SPADES_BROKEN] = 0
    state[L.EXCH_STEP] = 0
    state[L.EXCH_LEFT] = 0
    state[L.STOCK_POS] = 0
    state[L.LAST_TRICK_WINNER] = -1
    state[L.DECISIONS] = 0
    n = state[L.NUM_SEATS]
    first = first_seat(state)
    state[L.TRICK_LEADER] = first
    if n == 4:
        for i in range(_NUM_CARDS):
            seat = (first + i) % 4
            state[L.HANDS + seat] |= 1 << state[L.DECK + i]
        _advance_bidding(state, params)
    else:
        _advance_pre_draw(state, params)


@jit
def shuffle_and_start_hand(state, params):
    """Shuffle a new deck with the state's generator and start the hand."""
    shuffle_into(state, L.RNG, state[L.DECK : L.DECK + _NUM_CARDS])
    start_hand(state, params)


@jit
def init_state(state, params, rng_state, dealer):
    """A new match in ``state``: scores 0, dealer given (or from the rules, or drawn if -1),
    first hand shuffled from ``rng_state`` and started."""
    for i in range(L.STATE_SIZE):
        state[i] = 0
    n = params[L.P_NUM_SEATS]
    state[L.NUM_SEATS] = n
    state[L.RNG] = rng_state
    if dealer < 0:
        dealer = params[L.P_FIRST_DEALER]
    if dealer < 0:
        dealer = below(state, L.RNG, n)
    state[L.DEALER] = dealer
    state[L.GAME_WINNER] = -1
    state[L.MATCH_WINNER] = -1
    state[L.TURN] = -1
    shuffle_and_start_hand(state, params)


@jit
def game_winner_of(s0, s1, params):
    """Team that has won the game at scores ``s0``, ``s1`` (a team at the target, or at the
    mercy threshold with the mercy rule, decides it; the higher score wins, a tie plays on),
    or -1."""
    target = params[L.P_TARGET_SCORE]
    decided = s0 >= target or s1 >= target
    if params[L.P_MERCY] != 0:
        thr = params[L.P_MERCY_THRESHOLD]
        if s0 <= thr or s1 <= thr:
            decided = True
    if not decided or s0 == s1:
        return -1
    return 0 if s0 > s1 else 1


@jit
def _game_winner(state, params):
    return game_winner_of(state[L.SCORES], state[L.SCORES + 1], params)


@jit
def _finish_hand(state, params):
    n = state[L.NUM_SEATS]
    for team in range(2):
        pts, bags, _ = score_team(
            state[L.BIDS : L.BIDS + 4],
            state[L.TRICKS_WON : L.TRICKS_WON + 4],
            team,
            n,
            state[L.BAGS + team],
            params,
        )
        state[L.SCORES + team] += pts
        state[L.BAGS + team] = bags
        state[L.HAND_DELTA + team] = pts
    state[L.HAND_NUM] += 1
    state[L.TOTAL_HANDS] += 1
    state[L.TURN] = -1
    w = _game_winner(state, params)
    if w >= 0:
        state[L.GAME_WINNER] = w
        state[L.GAME_WINS + w] += 1
        state[L.GAME_NUM] += 1
        if state[L.GAME_WINS + w] >= params[L.P_GAMES_TO_WIN]:
            state[L.MATCH_WINNER] = w
            state[L.PHASE] = L.PH_MATCH_END
        else:
            state[L.PHASE] = L.PH_GAME_END
    elif params[L.P_MAX_HANDS] > 0 and state[L.HAND_NUM] >= params[L.P_MAX_HANDS]:
        # a game cut short by the hand cap cuts the match short too
        state[L.TRUNCATED] = 1
        state[L.GAME_WINNER] = -1
        state[L.GAME_NUM] += 1
        state[L.PHASE] = L.PH_MATCH_END
    else:
        state[L.PHASE] = L.PH_HAND_END


@inline_jit
def play_card(state, params, seat, card):
    """Play ``card`` from ``seat``'s hand in ``PH_PLAY``; after the last trick, score the hand.
    Nothing is checked: ``apply_action`` checks the turn and the legality first (the search's
    playouts call this directly with a card from ``legal_cards``, where the checks would cost
    as much as the play)."""
    bit = 1 << card
    n = state[L.NUM_SEATS]
    state[L.HANDS + seat] &= ~bit
    state[L.PLAYED + seat] |= bit
    state[L.TRICK_CARDS + seat] = card
    if state[L.TRICK_SIZE] > 0:
        led = state[L.TRICK_CARDS + state[L.TRICK_LEADER]] // 13
        if card // 13 != led:  # failed to follow: the seat has shown out of the led suit
            state[L.SHOWN_OUT + seat] |= 1 << led
    # a spade led (allowed only once broken or from a hand of spades) or played on another
    # suit's lead breaks spades
    if card // 13 == 3:
        if state[L.TRICK_SIZE] == 0 or state[L.TRICK_CARDS + state[L.TRICK_LEADER]] // 13 != 3:
            state[L.SPADES_BROKEN] = 1
    state[L.TRICK_SIZE] += 1
    if state[L.TRICK_SIZE] < n:
        state[L.TURN] = seat_after(seat, 1, n)
        return
    w = trick_winner(state)
    for i in range(4):
        state[L.LAST_TRICK + i] = state[L.TRICK_CARDS + i]
        state[L.TRICK_CARDS + i] = L.NO_CARD
    state[L.LAST_TRICK_WINNER] = w
    state[L.TRICKS_WON + w] += 1
    state[L.TRICK_SIZE] = 0
    state[L.TRICKS_PLAYED] += 1
    state[L.TRICK_LEADER] = w
    state[L.TURN] = w
    if state[L.TRICKS_PLAYED] == 13:
        _finish_hand(state, params)


@jit
def apply_action(state, params, action):
    """Apply ``action`` for the seat to act. Returns ``OK``, or ``ERR_NOBODY_TO_ACT`` /
    ``ERR_ILLEGAL`` with the state unchanged."""
    seat = state[L.TURN]
    if seat < 0:
        return ERR_NOBODY_TO_ACT
    if not is_legal(state, params, action):
        return ERR_ILLEGAL
    state[L.DECISIONS] += 1
    phase = state[L.PHASE]
    n = state[L.NUM_SEATS]
    if phase == L.PH_PLAY:
        play_card(state, params, seat, action)
    elif phase == L.PH_BID:
        state[L.BIDS + seat] = action - BID_BASE
        _advance_bidding(state, params)
    elif phase == L.PH_BLIND:
        if action == ACTION_BLIND_NIL:
            state[L.BLIND_STATUS + seat] = L.BLIND_NIL
            state[L.BIDS + seat] = L.BID_BLIND_NIL
            if n == 4:
                _advance_bidding(state, params)
        else:
            state[L.BLIND_STATUS + seat] = L.BLIND_SAW
            if n == 4:
                state[L.PHASE] = L.PH_BID
        if n == 2:
            _advance_pre_draw(state, params)
    elif phase == L.PH_EXCHANGE:
        bit = 1 << action
        to = (seat + 2) % 4
        state[L.HANDS + seat] &= ~bit
        state[L.HANDS + to] |= bit
        state[L.PASSED + seat] |= bit
        state[L.RECEIVED + to] |= bit
        state[L.EXCH_LEFT] -= 1
        if state[L.EXCH_LEFT] == 0:
            step = state[L.EXCH_STEP] + 1
            if step < 4 and state[L.EXCH_SEQ + step] >= 0:
                state[L.EXCH_STEP] = step
                state[L.EXCH_LEFT] = params[L.P_EXCHANGE_CARDS]
                state[L.TURN] = state[L.EXCH_SEQ + step]
            else:
                state[L.EXCH_STEP] = step
                _start_play(state)
    elif phase == L.PH_DRAW:
        pos = state[L.STOCK_POS]
        top = state[L.DECK + pos]
        nxt = state[L.DECK + pos + 1]
        if action == ACTION_KEEP:
            state[L.HANDS + seat] |= 1 << top
            state[L.DISCARDED + seat] |= 1 << nxt
        else:
            state[L.DISCARDED + seat] |= 1 << top
            state[L.HANDS + seat] |= 1 << nxt
        state[L.STOCK_POS] = pos + 2
        if pos + 2 >= _NUM_CARDS:
            _advance_bidding(state, params)
        else:
            state[L.TURN] = 1 - seat
    return OK


@jit
def next_hand(state, params):
    """After ``PH_HAND_END`` or ``PH_GAME_END``: rotate the dealer and deal the next hand
    (a new game, scores and bags 0, after a game end). Returns ``OK`` or
    ``ERR_NOT_BETWEEN_HANDS`` with the state unchanged."""
    phase = state[L.PHASE]
    if phase != L.PH_HAND_END and phase != L.PH_GAME_END:
        return ERR_NOT_BETWEEN_HANDS
    if phase == L.PH_GAME_END:
        for t in range(2):
            state[L.SCORES + t] = 0
            state[L.BAGS + t] = 0
        state[L.HAND_NUM] = 0
        state[L.TRUNCATED] = 0
        state[L.GAME_WINNER] = -1
    state[L.DEALER] = seat_after(state[L.DEALER], 1, state[L.NUM_SEATS])
    shuffle_and_start_hand(state, params)
    return OK
