"""``spades play``: play Spades in the terminal against bots or a trained checkpoint.

You take one seat (``--seat``: N, E, S or W, or 0-3; P0 or P1 in the two-player game; default
South, or P0); your partner and the two opponents are chosen by name: bots registry names
(``random``, ``greedy``, ``heuristic``, ``search:budget=0.2``), a shipped agent id or a
checkpoint path (loaded with NumPy, no PyTorch needed). On your turn the table shows the score,
bags, bids, tricks, the cards on the table, your hand and your legal moves. While you bid, a
number is your bid (``4`` or ``bid 4``; ``nil``); otherwise type a move by its name (``AS``,
``10h``, ``blind``, ``see``, ``keep``, ``discard``) or its number in the list (``2`` or
``#2``). In the Blind Nil exchange you pass cards to your partner by name. A move that is
refused says why; ``?`` shows the table again, ``q`` quits.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Callable

import numpy as np

from spades_env.cli.common import doc_paragraph, seat_help
from spades_env.core import layout as L
from spades_env.core.actions import BID_BASE, MAX_BID, action_to_str
from spades_env.core.cards import card_from_str, card_to_str, format_cards
from spades_env.core.game import SpadesGame, StepResult, seat_names
from spades_env.core.rules import RulesConfig, RulesError, load_rules
from spades_env.core.validate import check_int, parse_seat
from spades_env.policies.base import Policy
from spades_env.policies.driver import drive
from spades_env.policies.registry import resolve_policy
from spades_env.web.tables import illegal_reason


class Quit(Exception):
    """The player asked to stop."""


def parse_move(text: str, legal: list[int]) -> int | None:
    """The legal action a typed move names, or None (:func:`read_move` says why)."""
    return read_move(text, legal)[0]


def read_move(text: str, legal: list[int], phase: str | None = None) -> tuple[int | None, str]:
    """``(action, "")`` for a typed move that names a legal action, else ``(None, why)``.

    One meaning per text: while bidding a number is the bid (``4``, ``bid 4``, ``nil``; a
    number over 13 is refused, never read as a list position); otherwise a number is the
    position in the listed moves (``2`` or ``#2``), and ``bid N`` is refused. Card names
    (``AS``, ``10h``), ``blind``, ``see``, ``keep`` and ``discard`` name themselves."""
    t = " ".join(text.strip().lower().split())
    bidding = any(BID_BASE <= a <= BID_BASE + MAX_BID for a in legal)
    if phase is None:
        phase = "bid" if bidding else ""
    if not t:
        return None, "type a move"
    if t.startswith("#"):
        k = t[1:]
        if not k.isdigit():
            return None, f"'{text.strip()}': after # comes the number of a listed move"
        if bidding:
            return None, "while bidding, type the bid itself (0-13 or nil), not a list number"
        n = int(k)
        if not 1 <= n <= len(legal):
            return None, f"there are {len(legal)} listed moves: {n} is not one of them"
        return legal[n - 1], ""
    words = {
        "nil": BID_BASE,
        "bid nil": BID_BASE,
        "blind": 66,
        "blind nil": 66,
        "bn": 66,
        "see": 67,
        "see cards": 67,
        "keep": 68,
        "discard": 69,
    }
    if t in words:
        a = words[t]
        if a in legal:
            return a, ""
        if a == BID_BASE and not bidding:
            return None, f"you are not bidding now ({_phase_words(phase)})"
        return None, f"'{text.strip()}' is not a legal move here ({_phase_words(phase)})"
    is_bid = t.startswith("bid ")
    if is_bid:
        t = t[4:].strip()
        if not bidding:
            if phase == "blind":
                return None, "you are not bidding yet: choose Blind Nil or See cards first"
            return None, f"you are not bidding now ({_phase_words(phase)}): your bid is already made"
        if not t.isdigit():
            return None, f"'{text.strip()}': a bid is a number 0 to {MAX_BID} (or nil)"
    if t.isdigit():
        n = int(t)
        if bidding:
            if n > MAX_BID:
                return None, f"a bid is 0 to {MAX_BID} tricks (nil is 0): {n} is too many"
            if BID_BASE + n not in legal:
                return None, f"bid {n} is not allowed here"
            return BID_BASE + n, ""
        if not 1 <= n <= len(legal):
            return None, f"there are {len(legal)} listed moves: {n} is not one of them"
        return legal[n - 1], ""
    try:
        c = card_from_str(t)
    except ValueError:
        return None, f"'{text.strip()}' is not a legal move here"
    if c in legal:
        return c, ""
    if bidding or phase in ("blind", "draw"):
        return None, f"you cannot play a card now ({_phase_words(phase)})"
    return None, ""  # the caller explains an illegal card with the table in hand


def _phase_words(phase: str) -> str:
    return {
        "blind": "choose Blind Nil or See cards first",
        "bid": "it is time to bid",
        "exchange": "Blind Nil exchange: pass a card to your partner",
        "play": "play a card",
        "draw": "keep or discard the shown card",
    }.get(phase, phase)


def _bid_text(b: int) -> str:
    if b == L.BID_NONE:
        return "-"
    if b == L.BID_BLIND_NIL:
        return "Blind Nil"
    return "Nil" if b == 0 else str(b)


def table_text(game: SpadesGame, me: int, labels: list[str]) -> str:
    """What the human may see at their turn: scores, bids, tricks, the trick, own hand."""
    s, n = game.state, game.num_seats
    names = seat_names(n)
    teams = ("NS", "EW") if n == 4 else (names[0], names[1])
    lines = [
        f"Hand {int(s[L.HAND_NUM]) + 1}, game {int(s[L.GAME_NUM]) + 1} | "
        + "  ".join(f"{teams[t]} {int(s[L.SCORES + t])} (bags {int(s[L.BAGS + t])})" for t in range(2))
        + f" | dealer {names[int(s[L.DEALER])]}",
        "Bids:   " + "  ".join(f"{names[i]} {_bid_text(int(s[L.BIDS + i]))}" for i in range(n)),
        "Tricks: "
        + "  ".join(f"{names[i]} {int(s[L.TRICKS_WON + i])}" for i in range(n))
        + ("   spades broken" if s[L.SPADES_BROKEN] else ""),
    ]
    trick = []
    if s[L.TRICK_SIZE] > 0:
        lead = int(s[L.TRICK_LEADER])
        for k in range(int(s[L.TRICK_SIZE])):
            seat = (lead + k) % n
            trick.append(f"{names[seat]} {card_to_str(int(s[L.TRICK_CARDS + seat]))}")
    lines.append("Trick:  " + (", ".join(trick) if trick else "(you lead)" if game.phase == "play" else "-"))
    hand_hidden = game.phase == "blind"
    lines.append(
        f"You ({names[me]}, partner {labels[(me + 2) % n] if n == 4 else '-'}): "
        + ("(hidden until you decide on Blind Nil)" if hand_hidden else format_cards(int(s[L.HANDS + me])))
    )
    return "\n".join(lines)


def _legal_text(legal: list[int], phase: str = "") -> str:
    if any(BID_BASE <= a <= BID_BASE + MAX_BID for a in legal):  # bids are typed as numbers
        bids = [a - BID_BASE for a in legal if BID_BASE <= a <= BID_BASE + MAX_BID]
        return "Your bid: type " + ", ".join("nil" if b == 0 else str(b) for b in bids)
    head = {
        "exchange": "Blind Nil exchange: pass a card to your partner. Legal:  ",
        "blind": "Blind Nil? Legal:  ",
    }.get(phase, "Legal:  ")
    return head + "  ".join(f"{k + 1}) {action_to_str(a)}" for k, a in enumerate(legal))


class _Human:
    """The human at the table as a seated policy: shows the table and reads a legal move."""

    def __init__(
        self,
        game: SpadesGame,
        me: int,
        labels: list[str],
        read: Callable[[str], str],
        write: Callable[[str], None],
    ) -> None:
        self.game, self.me, self.labels, self.read, self.write = game, me, labels, read, write

    def act(self, observation: np.ndarray, action_mask: np.ndarray) -> int:
        legal = [int(a) for a in np.flatnonzero(action_mask)]
        write = self.write
        write("")
        phase = self.game.phase
        write(table_text(self.game, self.me, self.labels))
        s = self.game.state
        if phase == "exchange":
            write(
                f"You passed: {format_cards(int(s[L.PASSED + self.me])) or '-'}   "
                f"received: {format_cards(int(s[L.RECEIVED + self.me])) or '-'}"
            )
        write(_legal_text(legal, phase))
        while True:
            try:
                text = self.read("Your move> ")
            except EOFError:
                raise Quit from None
            if text.strip().lower() in ("q", "quit", "exit"):
                raise Quit
            if text.strip() in ("?", "h", "help"):
                write(table_text(self.game, self.me, self.labels))
                write(_legal_text(legal, phase))
                continue
            action, why = read_move(text, legal, phase)
            if action is not None:
                return action
            if not why:  # a card that is not legal: the rules' reason
                why = illegal_reason(self.game, card_from_str(text.strip()))
            write(f"Refused: {why}. {_legal_text(legal, phase)}")


def play_game(
    game: SpadesGame,
    me: int,
    others: dict[int, Policy],
    labels: list[str],
    read: Callable[[str], str] | None = None,
    write: Callable[[str], None] = print,
) -> dict:
    """Play ``game`` to the end of its match with a human at seat ``me`` (``read`` gives their
    moves), every seat through the one driver (:func:`spades_env.policies.driver.drive`); returns the
    final hand's result. Raises :class:`Quit` when the human quits."""
    if read is None:
        read = input  # looked up at call time, so a patched builtins.input is used
    n = game.num_seats
    names = seat_names(n)
    game.set_episode(episode="match")
    write(f"You are {names[me]}. " + ", ".join(f"{names[i]}: {labels[i]}" for i in range(n) if i != me))
    seated: dict[int, Policy] = {**others, me: _Human(game, me, labels, read, write)}
    tricks_before = [int(game.state[L.TRICKS_PLAYED])]
    final: dict = {}

    def on_step(r: StepResult) -> None:
        s = r.hand_end_state if r.hand is not None else game.state  # the table as the action left it
        if r.seat == me:
            ex = r.phase == "exchange"
            write(
                f"You: {'pass ' + action_to_str(r.action) + ' to your partner' if ex else action_to_str(r.action)}"
            )
        else:
            if r.phase == "exchange":
                shown = (
                    f"passes {action_to_str(r.action)} to you (Blind Nil exchange)"
                    if n == 4 and r.seat == (me + 2) % 4
                    else "passes a card to its partner (Blind Nil exchange)"
                )
            else:
                shown = action_to_str(r.action)
            write(f"{names[r.seat]} ({labels[r.seat]}): {shown}")
        if int(s[L.TRICKS_PLAYED]) > tricks_before[0] and s[L.PHASE] in (
            L.PH_PLAY,
            L.PH_HAND_END,
            L.PH_GAME_END,
            L.PH_MATCH_END,
        ):
            w = int(s[L.LAST_TRICK_WINNER])
            cards = ", ".join(
                f"{names[i]} {card_to_str(int(s[L.LAST_TRICK + i]))}"
                for i in range(n)
                if s[L.LAST_TRICK + i] >= 0
            )
            write(f"  trick to {names[w]} ({cards})")
        tricks_before[0] = int(game.state[L.TRICKS_PLAYED])
        if r.hand is None:
            return
        res = r.hand.result
        teams = ("NS", "EW") if n == 4 else names

        def bid(b: object) -> str:
            return "Blind Nil" if b == "blind" else "Nil" if b == 0 else str(b)

        write(
            "Hand over: bids "
            + ", ".join(f"{names[i]} {bid(res['bids'][i])}" for i in range(n))
            + "; tricks "
            + ", ".join(f"{names[i]} {res['tricks'][i]}" for i in range(n))
            + "; points "
            + ", ".join(f"{teams[t]} {res['points'][t]:+d}" for t in range(2))
            + "; score "
            + ", ".join(f"{teams[t]} {res['scores'][t]}" for t in range(2))
            + "; bags "
            + ", ".join(f"{teams[t]} {res['bags'][t]}" for t in range(2))
        )
        if r.done:
            final.update(res)
        elif res["phase"] == "game_end":
            w = res["game_winner"]
            write(
                f"Game over: {('NS', 'EW')[w] if w >= 0 and n == 4 else names[w] if w >= 0 else 'no winner'} won"
            )

    drive(game, seated, on_step=on_step)  # IllegalActionError for a bot's illegal move, naming it
    return final


def run(args: argparse.Namespace, read: Callable[[str], str] | None = None) -> int:
    try:
        rules: RulesConfig = load_rules(args.rules)
        if args.max_hands is not None:
            rules = rules.replace(max_hands=args.max_hands)
        if not args.match:
            rules = rules.replace(match_games=1)
    except RulesError as exc:
        print(f"spades play: {exc}", file=sys.stderr)
        return 2
    check_int(args.seed, "--seed", 0)
    n = rules.num_players
    seat = parse_seat(args.seat, n, "--seat") if args.seat is not None else (2 if n == 4 else 0)
    opp = [p.strip() for p in args.opponents.split("+")]
    if len(opp) == 1:
        opp = opp * 2
    if len(opp) != 2 or not all(opp):
        print(
            f"spades play: --opponents is one name or two joined by '+', got {args.opponents!r}",
            file=sys.stderr,
        )
        return 2
    labels = [""] * n
    labels[seat] = "you"
    if n == 4:
        labels[(seat + 2) % 4] = args.partner
        labels[(seat + 1) % 4], labels[(seat + 3) % 4] = opp
    else:
        labels[1 - seat] = opp[0]
    seeds = np.random.SeedSequence(args.seed).generate_state(4)
    others: dict[int, Policy] = {}
    try:
        for i in range(n):
            if i != seat:
                others[i] = resolve_policy(labels[i], int(seeds[i]), rules)
    except Exception as exc:  # bad names and bad checkpoints: say which
        print(f"spades play: {exc}", file=sys.stderr)
        return 2
    game = SpadesGame(rules, seed=args.seed, episode="match")
    try:
        r = play_game(game, seat, others, labels, read=read)
    except Quit:
        print("Bye.")
        return 0
    w = r["game_winner"]
    mine = seat % 2
    print("You won!" if w == mine else "No winner (hand cap reached)." if w < 0 else "You lost.")
    return 0


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser(
        "play",
        help="play in the terminal against bots or a checkpoint",
        description=doc_paragraph(__doc__),
    )
    p.add_argument("--seat", default=None, help=seat_help("your seat (default S; P0 in the two-player game)"))
    p.add_argument(
        "--partner", default="heuristic", help="your partner: bot name or checkpoint path (default heuristic)"
    )
    p.add_argument(
        "--opponents", default="heuristic", help="opponents: a name, or two joined by '+' (default heuristic)"
    )
    p.add_argument("--rules", default="tournament", help="rules preset or YAML file (default tournament)")
    p.add_argument("--max-hands", type=int, default=None, help="cap the game at this many hands")
    p.add_argument("--match", action="store_true", help="play the rules' whole match (default: one game)")
    p.add_argument("--seed", type=int, default=0, help="seed of the deals and the bots (default 0)")
    p.set_defaults(func=run)
