"""The web app's tables: a game being played or watched, and a record being replayed.

Framework-free (no web imports): the server in :mod:`spades_env.web.app` holds these objects
and turns their views into JSON for the page. Every rule, legal move and score comes from the
core (:class:`~spades_env.core.game.SpadesGame`); bots move through the one driver
(:func:`~spades_env.policies.driver.drive`, one step at a time); a view shows only what its
viewer may see (the human's own hand; every hand only in watch mode when asked, and in a
replay).
"""

from __future__ import annotations

import os
import re
import secrets
import tempfile
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from spades_env.core import layout as L
from spades_env.core.actions import NUM_ACTIONS, action_to_str
from spades_env.core.cards import cards_from_mask
from spades_env.core.files import read_json_file
from spades_env.core.game import IllegalActionError, SpadesGame, StepResult, seat_names
from spades_env.core.rules import RulesConfig, RulesError, load_rules, preset_names
from spades_env.core.scoring import bag_penalty, hand_points, team_contract
from spades_env.core.validate import SpadesError, parse_seat
from spades_env.io.records import (
    RecordError,
    dumps_record,
    load_record,
    record_from_game,
    replay_record,
)
from spades_env.policies.agents import agent_ids
from spades_env.policies.base import Policy
from spades_env.policies.driver import drive
from spades_env.policies.registry import load as load_policy

EPISODES = ("hand", "game", "match")
SPEEDS = {"instant": 0.0, "fast": 0.25, "normal": 0.8, "slow": 1.8}
"""Seconds between two bots' moves, by the name the page offers."""
MAX_RECORD_BYTES = 4 * 1024 * 1024
"""The largest record file the app reads (a long match is well under 1 MB)."""
MAX_SEED = 2**63 - 1
_NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]{0,120}$")


class WebError(SpadesError):
    """Input the app refuses (a bad URL parameter, a stale or forged action, a bad record or
    file name): the message is shown on the page and nothing changes."""


def policy_choices(num_players: int | None = None) -> list[str]:
    """The bots and shipped agents a person can seat (the evaluation-only cheat excluded);
    with ``num_players``, only the agents made for that game."""
    bots = ["random", "greedy", "heuristic", "blind", "search:budget=0.2"]
    agents = []
    for a in agent_ids():
        two = a.startswith("spades2")
        if num_players is None or (num_players == 2) == two:
            agents.append(a)
    return agents + bots


# ---- files inside --records DIR ---------------------------------------------------------------
def safe_file(folder: Path, name: str, suffixes: tuple[str, ...]) -> Path:
    """``folder / name`` for a plain file name of ``folder`` (no path separators, no ``..``,
    not absolute, one of ``suffixes``), a regular file no larger than
    :data:`MAX_RECORD_BYTES`; anything else is a :class:`WebError`."""
    if not isinstance(name, str) or not _NAME.match(name) or ".." in name or not name.endswith(suffixes):
        raise WebError(
            f"{name!r} is not a file name of the records folder (letters, digits, '.', '_', '-'; "
            f"ending in {' or '.join(suffixes)}; no folders)"
        )
    base = folder.resolve()
    path = (base / name).resolve()
    if path.parent != base:
        raise WebError(f"{name!r} is not inside the records folder")
    if not path.is_file():
        raise WebError(f"no file {name!r} in the records folder")
    if path.stat().st_size > MAX_RECORD_BYTES:
        raise WebError(f"{name!r} is larger than {MAX_RECORD_BYTES // 1024} KiB")
    return path


def list_records(folder: Path) -> list[dict[str, Any]]:
    """The records of ``folder``, newest first: name, whether unfinished, human seats."""
    out = []
    for p in sorted(folder.glob("*.json"), key=lambda q: q.stat().st_mtime, reverse=True):
        if not _NAME.match(p.name) or p.stat().st_size > MAX_RECORD_BYTES:
            continue
        try:
            data = read_json_file(p, "record file", WebError, limit=MAX_RECORD_BYTES)
            meta = data.get("meta") or {}
            unfinished = "final" not in data or data["final"].get("phase") != "match_end"
            out.append(
                {
                    "name": p.name,
                    "unfinished": bool(unfinished and meta.get("mode") == "play"),
                    "players": meta.get("players"),
                    "hands": len(data.get("hands") or []),
                }
            )
        except (OSError, ValueError, AttributeError, TypeError):
            out.append({"name": p.name, "unfinished": False, "players": None, "hands": None})
    return out


def write_atomic(path: Path, text: str) -> None:
    """Write ``text`` to ``path`` through a temporary file renamed over it."""
    fd, tmp = tempfile.mkstemp(prefix=".tmp-", suffix=".json", dir=path.parent)
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as f:
            f.write(text)
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


# ---- set-up from URL parameters -----------------------------------------------------------------
def parse_rules(value: str | None, records: Path | None) -> RulesConfig:
    """A rules preset name, or a ``.yaml`` rules file inside the records folder."""
    value = (value or "tournament").strip()
    if value in preset_names():
        return load_rules(value)
    if value.endswith((".yaml", ".yml")) and records is not None:
        try:
            return load_rules(safe_file(records, value, (".yaml", ".yml")))
        except RulesError as exc:
            raise WebError(str(exc)) from None
    raise WebError(
        f"rules {value!r}: give a preset ({', '.join(preset_names())}) or a .yaml file of the records folder"
    )


def parse_seed(value: str | None) -> int:
    if value is None or value == "":
        return secrets.randbelow(10**6)
    v = value.strip()
    if not v.isascii() or not v.isdigit() or int(v) > MAX_SEED:
        raise WebError(f"seed {value!r} must be a whole number 0..{MAX_SEED}")
    return int(v)


def _load(name: str, seed: int, rules: RulesConfig, what: str) -> Policy:
    name = name.strip()
    base = name.split(":", 1)[0].strip().lower()
    if name not in agent_ids() and base not in ("random", "greedy", "heuristic", "blind", "search"):
        raise WebError(f"{what} {name!r}: choose one of {', '.join(policy_choices(rules.num_players))}")
    try:
        return load_policy(name, rules=rules, seed=seed)
    except (SpadesError, ValueError) as exc:
        raise WebError(f"{what} {name!r}: {exc}") from None


@dataclass
class Setup:
    """Who sits where, under which rules, for how long."""

    mode: str  # "play" or "watch"
    rules: RulesConfig
    rules_name: str
    players: list[str]  # per seat: a policy name, or "you"
    human: int | None
    episode: str
    seed: int


def play_setup(params: dict[str, str], records: Path | None) -> Setup:
    """The set-up of ``/play?seat=S&partner=P&opponents=O&rules=R&episode=E&seed=N``."""
    rules = parse_rules(params.get("rules"), records)
    n = rules.num_players
    seed = parse_seed(params.get("seed"))
    try:
        seat = parse_seat(params.get("seat", "S" if n == 4 else "P0"), n, "seat")
    except SpadesError as exc:
        raise WebError(str(exc)) from None
    episode = params.get("episode", "game")
    if episode not in EPISODES:
        raise WebError(f"episode {episode!r}: give hand, game or match")
    opp = [o.strip() for o in params.get("opponents", "heuristic").split(",")]
    if len(opp) == 1:
        opp = opp * 2
    if len(opp) != 2 or not all(opp):
        raise WebError(f"opponents {params.get('opponents')!r}: one name, or two separated by a comma")
    players = [""] * n
    players[seat] = "you"
    if n == 4:
        players[(seat + 2) % 4] = params.get("partner", "heuristic").strip()
        players[(seat + 1) % 4], players[(seat + 3) % 4] = opp
    else:
        players[1 - seat] = opp[0]
    return Setup("play", rules, params.get("rules") or "tournament", players, seat, episode, seed)


def watch_setup(params: dict[str, str], records: Path | None) -> Setup:
    """The set-up of ``/watch?players=A,B,C,D&rules=R&seed=N`` (one name: every seat)."""
    rules = parse_rules(params.get("rules"), records)
    n = rules.num_players
    seed = parse_seed(params.get("seed"))
    default = "spades2_v1" if n == 2 else "spades4_v1"
    players = [p.strip() for p in params.get("players", default).split(",")]
    if len(players) == 1:
        players = players * n
    if len(players) != n or not all(players):
        raise WebError(f"players {params.get('players')!r}: one name, or {n} separated by commas")
    episode = params.get("episode", "game")
    if episode not in EPISODES:
        raise WebError(f"episode {episode!r}: give hand, game or match")
    return Setup("watch", rules, params.get("rules") or "tournament", players, None, episode, seed)


# ---- what a page is shown -----------------------------------------------------------------------
def _bid_text(b: int) -> str | None:
    if b == L.BID_NONE:
        return None
    if b == L.BID_BLIND_NIL:
        return "Blind Nil"
    return "Nil" if b == 0 else str(b)


def _team_names(n: int) -> tuple[str, str]:
    return ("NS", "EW") if n == 4 else ("P0", "P1")


def hand_summary(end: np.ndarray, params: np.ndarray, before_bags: tuple[int, int], n: int) -> dict[str, Any]:
    """What a hand did, from the state row as it ended: each team's contract (bid, won, made or
    set), each Nil bidder's result, bags and bag penalty, and the score change with its parts
    (from the core's scoring functions; the parts add up to the core's score change)."""
    names = seat_names(n)
    bids = np.array([int(end[L.BIDS + i]) if i < n else L.BID_NONE for i in range(4)], dtype=np.int64)
    tricks = np.array([int(end[L.TRICKS_WON + i]) if i < n else 0 for i in range(4)], dtype=np.int64)
    teams = []
    for t in range(2):
        seats = list(range(t, n, 2))
        points, won = hand_points(bids, tricks, t, n, params)
        penalty, bags_after = bag_penalty(before_bags[t], won, params)
        nils = []
        nil_total = 0
        for s in seats:
            b = int(bids[s])
            if b == 0 or b == L.BID_BLIND_NIL:
                value = int(params[L.P_BLIND_NIL_VALUE] if b == L.BID_BLIND_NIL else params[L.P_NIL_VALUE])
                ok = int(tricks[s]) == 0
                nil_total += value if ok else -value
                nils.append(
                    {
                        "seat": names[s],
                        "bid": _bid_text(b),
                        "tricks": int(tricks[s]),
                        "made": ok,
                        "points": value if ok else -value,
                    }
                )
        contract = int(team_contract(bids, t, n))
        contract_points = int(points) - nil_total - int(won)
        delta = int(end[L.HAND_DELTA + t])
        teams.append(
            {
                "team": _team_names(n)[t],
                "contract": contract,
                "won": sum(int(tricks[s]) for s in seats),
                "made": contract_points >= 0 if contract > 0 else None,
                "contract_points": contract_points,
                "nils": nils,
                "bags_won": int(won),
                "bag_penalty": -int(penalty),
                "bags_after": int(bags_after),
                "change": delta,
                "score": int(end[L.SCORES + t]),
            }
        )
    phase = L.PHASE_NAMES[int(end[L.PHASE])]
    winner = int(end[L.GAME_WINNER])
    text = None
    if phase in ("game_end", "match_end"):
        if winner >= 0:
            text = f"{_team_names(n)[winner]} win the game"
        elif end[L.TRUNCATED]:
            text = "the game was cut short by the hand cap"
        if phase == "match_end" and int(end[L.MATCH_WINNER]) >= 0:
            text = f"{_team_names(n)[int(end[L.MATCH_WINNER])]} win the match"
    return {"phase": phase, "teams": teams, "outcome": text}


def state_view(
    s: np.ndarray,
    params: np.ndarray,
    n: int,
    labels: list[str],
    visible: set[int],
    viewer: int | None,
) -> dict[str, Any]:
    """The table as JSON-ready data: scores, bids, tricks, the trick, the hands of the seats in
    ``visible`` (the others as a count), exchanged cards of visible seats."""
    from spades_env.core.observation import hand_hidden

    names = seat_names(n)
    phase = L.PHASE_NAMES[int(s[L.PHASE])]
    seats = []
    for i in range(n):
        mask = int(s[L.HANDS + i])
        shown = i in visible and not (i == viewer and bool(hand_hidden(s, params, i)))
        seats.append(
            {
                "seat": i,
                "name": names[i],
                "player": labels[i],
                "bid": _bid_text(int(s[L.BIDS + i])),
                "tricks": int(s[L.TRICKS_WON + i]),
                "count": len(cards_from_mask(mask)),
                "hand": cards_from_mask(mask) if shown else None,
                "hidden_blind": i == viewer and bool(hand_hidden(s, params, i)),
                "passed": cards_from_mask(int(s[L.PASSED + i])) if i in visible else None,
                "received": cards_from_mask(int(s[L.RECEIVED + i])) if i in visible else None,
            }
        )
    trick = []
    if s[L.TRICK_SIZE] > 0:
        lead = int(s[L.TRICK_LEADER])
        for k in range(int(s[L.TRICK_SIZE])):
            seat = (lead + k) % n
            trick.append({"seat": seat, "card": int(s[L.TRICK_CARDS + seat])})
    last = None
    if s[L.TRICKS_PLAYED] > 0 and s[L.TRICK_SIZE] == 0:
        last = {
            "winner": int(s[L.LAST_TRICK_WINNER]),
            "cards": [
                {"seat": i, "card": int(s[L.LAST_TRICK + i])} for i in range(n) if s[L.LAST_TRICK + i] >= 0
            ],
        }
    turn = int(s[L.TURN])
    shown_card = None
    if phase == "draw" and turn in visible:
        shown_card = int(s[L.DECK + int(s[L.STOCK_POS])])
    teams = _team_names(n)
    return {
        "phase": phase,
        "to_act": turn,
        "num_seats": n,
        "dealer": int(s[L.DEALER]),
        # at a hand's (game's) end the core has counted it already
        "hand_no": int(s[L.HAND_NUM]) + (0 if phase in ("hand_end", "game_end", "match_end") else 1),
        "game_no": int(s[L.GAME_NUM]) + (0 if phase in ("game_end", "match_end") else 1),
        "trick_no": int(s[L.TRICKS_PLAYED]) + (1 if phase == "play" else 0),
        "spades_broken": bool(s[L.SPADES_BROKEN]),
        "teams": [
            {
                "name": teams[t],
                "score": int(s[L.SCORES + t]),
                "bags": int(s[L.BAGS + t]),
                "games": int(s[L.GAME_WINS + t]),
                "contract": int(team_contract(s[L.BIDS : L.BIDS + 4].copy(), t, n)),
                "won": sum(int(s[L.TRICKS_WON + i]) for i in range(t, n, 2)),
            }
            for t in range(2)
        ],
        "target": int(params[L.P_TARGET_SCORE]),
        "seats": seats,
        "trick": trick,
        "last_trick": last,
        "shown_card": shown_card,
        "exchange_cards": int(params[L.P_EXCHANGE_CARDS]),
    }


def event_text(
    r: StepResult, names: tuple[str, ...], labels: list[str], me: int | None, state: np.ndarray
) -> str:
    """One line for the table's log: who did what (a passed card shown to its two seats only)."""
    you = r.seat == me
    who = "You" if you else f"{names[r.seat]} ({labels[r.seat]})"
    if r.phase == "exchange" and me is not None and not you and r.seat != (me + 2) % 4:
        return f"{who} passes a card to its partner"
    what = action_to_str(r.action)
    if r.phase == "exchange":
        return f"{who} {'pass' if you else 'passes'} {what} to {'your' if you else 'its'} partner"
    if r.phase in ("bid", "blind"):
        return f"{who}: {what}"
    if r.phase == "draw":
        return (
            f"{who} {'draw' if you else 'draws'}: {what} the shown card"
            if you or me is None
            else f"{who} draws"
        )
    return f"{who} {'play' if you else 'plays'} {what}"


# ---- a game being played or watched -------------------------------------------------------------
@dataclass
class Table:
    """One game of the app: its set-up, the core game, the seated bots and the page's state.

    ``seq`` counts the changes: an action message must carry the ``seq`` of the view it was
    sent from, so a stale or replayed message is refused."""

    id: str
    setup: Setup
    game: SpadesGame
    bots: dict[int, Policy]
    records: Path | None
    record_name: str | None = None
    seq: int = 0
    speed: str = "normal"
    paused: bool = False
    show_hands: bool = False
    hint: bool = False
    summary: dict[str, Any] | None = None  # the last hand's summary, while it waits
    summary_state: np.ndarray | None = None
    summary_seen: bool = True
    events: list[str] = field(default_factory=list)
    think: dict[str, float] = field(default_factory=dict)  # last thinking time per seat name
    think_log: list[tuple[str, float]] = field(default_factory=list)  # (seat, seconds) per bot move
    lock: threading.Lock = field(default_factory=threading.Lock)
    created: float = field(default_factory=time.time)
    last_move: float = field(default_factory=time.monotonic)
    _hinter: Any = None

    @property
    def n(self) -> int:
        return self.game.num_seats

    @property
    def labels(self) -> list[str]:
        return self.setup.players

    @property
    def human(self) -> int | None:
        return self.setup.human

    @property
    def over(self) -> bool:
        return self.game.episode_over

    @property
    def waiting_summary(self) -> bool:
        return self.summary is not None and not self.summary_seen

    def bot_to_act(self) -> bool:
        """A bot is to act now (not paused, no summary waiting, the episode running)."""
        return (
            not self.over
            and not self.waiting_summary
            and self.game.current_player in self.bots
            and self.game.current_player >= 0
        )

    def delay(self) -> float | None:
        """Seconds until the server moves on by itself (a bot, or a watched summary), or None."""
        if self.paused or self.over:
            return None
        if self.waiting_summary:
            return 4 * SPEEDS[self.speed] + 0.6 if self.setup.mode == "watch" else None
        if self.bot_to_act():
            return max(0.0, SPEEDS[self.speed] - (time.monotonic() - self.last_move))
        return None

    # -- moving
    def _on_step(self, r: StepResult) -> None:
        names = seat_names(self.n)
        self.events.append(event_text(r, names, self.labels, self.human, self.game.state))
        s = r.hand_end_state if r.hand is not None else self.game.state
        if r.phase == "play" and s[L.TRICK_SIZE] == 0 and s[L.TRICKS_PLAYED] > 0:
            self.events.append(f"   trick {int(s[L.TRICKS_PLAYED])} to {names[int(s[L.LAST_TRICK_WINNER])]}")
        if r.hand is not None:
            self.summary_state = r.hand_end_state
            self.summary = hand_summary(r.hand_end_state, self.game.params, r.hand.bags_before, self.n)
            self.summary_seen = False
            self.events.append(
                "Hand over: "
                + ", ".join(
                    f"{t['team']} {t['change']:+d} (score {t['score']})" for t in self.summary["teams"]
                )
            )
        del self.events[:-60]
        self.seq += 1
        self.last_move = time.monotonic()

    def act(self, action: Any, seq: Any) -> None:
        """The human's action; a stale ``seq``, a move out of turn or an illegal id is a
        :class:`WebError` and changes nothing."""
        with self.lock:
            if self.setup.mode != "play":
                raise WebError("this table is watched: nobody here can act")
            if not isinstance(seq, int) or isinstance(seq, bool) or seq != self.seq:
                raise WebError(
                    f"this move was sent from an old view (view {seq!r}, table now at {self.seq}): refused"
                )
            if self.over:
                raise WebError("the game is over: start a new one")
            if self.waiting_summary:
                raise WebError("the hand is over: press Continue first")
            if not isinstance(action, int) or isinstance(action, bool) or not 0 <= action < NUM_ACTIONS:
                raise WebError(f"action {action!r} is not an action id 0..{NUM_ACTIONS - 1}")
            if self.game.current_player != self.human:
                who = self.game.current_player
                raise WebError(
                    f"it is not your turn: {seat_names(self.n)[who] if who >= 0 else 'nobody'} is to act"
                )
            legal = self.game.legal_actions()
            if action not in legal:
                raise WebError(illegal_reason(self.game, action))
            try:
                self._on_step(self.game.step(action))
            except IllegalActionError as exc:  # the core's word is final
                raise WebError(str(exc)) from None
            self.save()

    def continue_(self, seq: Any) -> None:
        """Close the hand summary (the next hand is already dealt by the core)."""
        with self.lock:
            if not isinstance(seq, int) or seq != self.seq:
                raise WebError("this Continue was sent from an old view: refused")
            if not self.waiting_summary:
                raise WebError("there is no hand summary to close")
            self.summary_seen = True
            self.seq += 1
            self.last_move = time.monotonic()

    def advance(self) -> bool:
        """One move made by the server itself: a bot's action (timed), or a watched table
        closing its summary. Returns whether anything changed. Call from a worker thread:
        a search bot may think for seconds."""
        with self.lock:
            if self.waiting_summary and self.setup.mode == "watch":
                self.summary_seen = True
                self.seq += 1
                self.last_move = time.monotonic()
                return True
            if not self.bot_to_act():
                return False
            seat = self.game.current_player
            t0 = time.perf_counter()
            drive(self.game, self.bots, max_steps=1, on_step=self._on_step)
            name, spent = seat_names(self.n)[seat], time.perf_counter() - t0
            self.think[name] = spent
            self.think_log.append((name, spent))
            if self.over or self.summary is not None and not self.summary_seen:
                self.save()
            return True

    # -- the page's view
    def view(self) -> dict[str, Any]:
        with self.lock:
            return self._view()

    def _view(self) -> dict[str, Any]:
        g = self.game
        n = self.n
        if self.waiting_summary and self.summary_state is not None:
            s = self.summary_state
        else:
            s = g.state
        if self.setup.mode == "watch":
            visible = set(range(n)) if self.show_hands else set()
        else:
            visible = {self.human} if self.human is not None else set()
        v = state_view(s, g.params, n, self.labels, visible, self.human)
        legal: list[dict[str, Any]] = []
        if (
            self.setup.mode == "play"
            and not self.over
            and not self.waiting_summary
            and g.current_player == self.human
        ):
            legal = [{"id": a, "label": action_to_str(a)} for a in g.legal_actions()]
        v.update(
            {
                "kind": "table",
                "mode": self.setup.mode,
                "id": self.id,
                "seq": self.seq,
                "viewer": self.human,
                "rules": self.setup.rules_name,
                "episode": self.setup.episode,
                "legal": legal,
                "summary": self.summary if self.waiting_summary else None,
                "last_summary": self.summary,
                "over": self.over,
                "result": self._result_text() if self.over else None,
                "events": self.events[-14:],
                "speed": self.speed,
                "paused": self.paused,
                "show_hands": self.show_hands,
                "record": self.record_name,
                "think": {k: round(v, 3) for k, v in self.think.items()},
                "hint": self._hint() if self.hint and legal else None,
            }
        )
        return v

    def _result_text(self) -> str:
        s = self.game.state
        n = self.n
        teams = _team_names(n)
        phase = self.game.phase
        w = int(s[L.MATCH_WINNER]) if phase == "match_end" else int(s[L.GAME_WINNER])
        score = ", ".join(f"{teams[t]} {int(s[L.SCORES + t])}" for t in range(2))
        if self.setup.episode == "hand":
            return f"Hand over: {score}"
        if w < 0:
            return f"Cut short by the hand cap: {score}"
        if self.human is not None:
            mine = self.human % 2 if n == 4 else self.human
            return ("You win! " if w == mine else "You lose. ") + score
        return f"{teams[w]} win: {score}"

    def _hint(self) -> dict[str, Any] | None:
        """What the reference agent's network would play here, with its probabilities."""
        ref = "spades2_v1" if self.n == 2 else "spades4_v1"
        try:
            if self._hinter is None:
                pol = load_policy(ref, rules=self.setup.rules, seed=0)
                self._hinter = getattr(pol, "net", pol)
            net = self._hinter
            obs, mask = self.game.observe(self.human)
            logits = np.asarray(
                net.actor.logits(obs.reshape(1, -1), mask.reshape(1, -1))[0], dtype=np.float64
            )
        except Exception as exc:  # a hint is optional: say why there is none
            return {"agent": ref, "error": f"no hint: {exc}"}
        legal = np.flatnonzero(mask)
        z = logits[legal]
        p = np.exp(z - z.max())
        p /= p.sum()
        order = np.argsort(-p)[:5]
        return {
            "agent": ref,
            "note": "its network's choice"
            + (" (it searches instead after a Nil bid)" if self.n == 4 else ""),
            "best": int(legal[order[0]]),
            "top": [
                {"id": int(legal[k]), "label": action_to_str(int(legal[k])), "p": round(float(p[k]), 3)}
                for k in order
            ],
        }

    # -- records
    def record(self) -> dict[str, Any]:
        meta = {
            "app": "spades serve",
            "mode": self.setup.mode,
            "players": self.labels,
            "human_seats": [self.human] if self.human is not None else [],
            "episode": self.setup.episode,
            "seed": self.setup.seed,
            "rules_name": self.setup.rules_name,
        }
        return record_from_game(self.game, meta=meta)

    def save(self) -> None:
        """Write the game's record into the records folder (atomically)."""
        if self.records is None or self.record_name is None:
            return
        rec = self.record()
        if not any(h["actions"] for h in rec["hands"]):
            return
        write_atomic(self.records / self.record_name, dumps_record(load_record(rec)))


def illegal_reason(game: SpadesGame, action: int) -> str:
    """Why ``action`` is not legal now, in a player's words (the legal set from the core)."""
    from spades_env.core.cards import SUIT_NAMES, card_suit

    legal = game.legal_actions()
    phase = game.phase
    what = action_to_str(action)
    s = game.state
    if phase == "play" and action < 52:
        if not s[L.HANDS + game.current_player] >> action & 1:
            return f"{what} is not in your hand"
        if s[L.TRICK_SIZE] > 0:
            led = card_suit(int(s[L.TRICK_CARDS + int(s[L.TRICK_LEADER])]))
            if any(card_suit(a) == led for a in legal):
                return f"you must follow {SUIT_NAMES[led]}"
        elif card_suit(action) == 3 and not s[L.SPADES_BROKEN]:
            return "spades are not broken yet: lead another suit"
    if phase == "exchange" and action < 52:
        return f"{what} is not in your hand: pass one of your own cards"
    return (
        f"{what} is not a legal move now (phase {phase}); legal: {', '.join(action_to_str(a) for a in legal)}"
    )


def new_table(setup: Setup, records: Path | None) -> Table:
    """A table for ``setup``: the game, the bots (each with its own seed) and a record name."""
    rules = setup.rules
    if setup.episode != "match":
        rules = rules.replace(match_games=1)
    seeds = np.random.SeedSequence(setup.seed).generate_state(4)
    bots: dict[int, Policy] = {}
    for i, name in enumerate(setup.players):
        if i != setup.human:
            what = "partner" if setup.human is not None and i == (setup.human + 2) % 4 else "player"
            bots[i] = _load(name, int(seeds[i]), rules, f"{what} {seat_names(len(setup.players))[i]}")
    game = SpadesGame(rules, seed=setup.seed, episode="hand" if setup.episode == "hand" else "match")
    tid = secrets.token_hex(6)
    name = f"{time.strftime('%Y%m%d-%H%M%S')}-{setup.mode}-{tid}.json" if records is not None else None
    return Table(tid, setup, game, bots, records, name, speed="normal")


def resume_table(path: Path, records: Path) -> Table:
    """A played game continued from its record: the actions replayed through the core, the
    same seats and players (the deals after it are new)."""
    try:
        rp = replay_record(path)
        data = load_record(path)
    except RecordError as exc:
        raise WebError(f"{path.name}: {exc}") from None
    meta = data.get("meta") or {}
    players = meta.get("players")
    humans = meta.get("human_seats") or []
    if meta.get("mode") != "play" or not isinstance(players, list) or len(humans) != 1:
        raise WebError(
            f"{path.name} is not a game played in this app (no players and human seat in its meta)"
        )
    game = rp.game
    if game.phase == "match_end" or (meta.get("episode") == "hand" and game.is_hand_over):
        raise WebError(f"{path.name}: that game is over; open it as a replay")
    if game.phase in ("hand_end", "game_end"):
        game.next_hand()
    episode = meta.get("episode") if meta.get("episode") in EPISODES else "game"
    game.set_episode(episode="hand" if episode == "hand" else "match")
    seed = int(meta["seed"]) if isinstance(meta.get("seed"), int) else 0
    setup = Setup(
        "play",
        rp.rules,
        str(meta.get("rules_name") or rp.rules.name),
        [str(p) for p in players],
        int(humans[0]),
        episode,
        seed,
    )
    seeds = np.random.SeedSequence(seed + 1).generate_state(4)
    bots = {
        i: _load(p, int(seeds[i]), rp.rules, f"player {seat_names(game.num_seats)[i]}")
        for i, p in enumerate(setup.players)
        if i != setup.human
    }
    return Table(secrets.token_hex(6), setup, game, bots, records, path.name)


# ---- a record being replayed ----------------------------------------------------------------------
@dataclass
class Replay:
    """A record stepped through action by action: every state after every action, made by
    the core (the record is first checked by :func:`~spades_env.io.records.replay_record`)."""

    id: str
    name: str
    labels: list[str]
    humans: list[int]
    params: np.ndarray
    n: int
    frames: list[np.ndarray]  # the state after 0, 1, 2, ... actions
    texts: list[str]  # frames[k] came from texts[k]
    hand_of: list[int]
    summaries: dict[int, dict[str, Any]]  # frame index -> the summary of the hand it ends
    pos: int = 0
    seq: int = 0
    lock: threading.Lock = field(default_factory=threading.Lock)

    def seek(self, to: Any) -> None:
        with self.lock:
            k = self._target(to)
            self.pos = max(0, min(len(self.frames) - 1, k))
            self.seq += 1

    def _target(self, to: Any) -> int:
        last = len(self.frames) - 1
        if isinstance(to, int) and not isinstance(to, bool):
            return to
        if to == "start":
            return 0
        if to == "end":
            return last
        if to == "next":
            return self.pos + 1
        if to == "prev":
            return self.pos - 1
        if to == "next_trick":
            return next((k for k in range(self.pos + 1, last + 1) if self._boundary(k)), last)
        if to == "prev_trick":
            return next((k for k in range(self.pos - 1, 0, -1) if self._boundary(k)), 0)
        if to in ("next_hand", "prev_hand"):
            h = self.hand_of[self.pos] + (1 if to == "next_hand" else -1)
            for k, hk in enumerate(self.hand_of):
                if hk == h:
                    return k
            return self.pos
        raise WebError(
            f"unknown replay step {to!r}: give start, end, next, prev, next_trick, prev_trick, next_hand, prev_hand or a number"
        )

    def _boundary(self, k: int) -> bool:
        """Frame ``k`` starts a hand, ends the bidding, or completes a trick."""
        if k == 0 or self.hand_of[k] != self.hand_of[k - 1]:
            return True
        f, p = self.frames[k], self.frames[k - 1]
        if f[L.TRICKS_PLAYED] != p[L.TRICKS_PLAYED]:
            return True
        return bool(f[L.PHASE] == L.PH_PLAY and p[L.PHASE] != L.PH_PLAY)

    def view(self) -> dict[str, Any]:
        with self.lock:
            s = self.frames[self.pos]
            v = state_view(s, self.params, self.n, self.labels, set(range(self.n)), None)
            v.update(
                {
                    "kind": "replay",
                    "mode": "replay",
                    "id": self.id,
                    "seq": self.seq,
                    "viewer": None,
                    "legal": [],
                    "record": self.name,
                    "pos": self.pos,
                    "total": len(self.frames) - 1,
                    "hand_index": self.hand_of[self.pos] + 1,
                    "hands": self.hand_of[-1] + 1,
                    "events": self.texts[max(1, self.pos - 13) : self.pos + 1],
                    "summary": self.summaries.get(self.pos),
                    "humans": self.humans,
                    "over": False,
                    "result": None,
                }
            )
            return v


def open_replay(source: Path | dict[str, Any], name: str) -> Replay:
    """A :class:`Replay` of a record file (or an uploaded record's dict)."""
    try:
        replay_record(source)  # every action and result checked by the core first
        data = load_record(source)
    except RecordError as exc:
        raise WebError(f"{name}: {exc}") from None
    rules = load_rules(data["rules"]) if isinstance(data["rules"], str) else None
    if rules is None:
        from spades_env.core.rules import rules_from_dict

        rules = rules_from_dict(data["rules"])
    n = rules.num_players
    names = seat_names(n)
    meta = data.get("meta") or {}
    players = meta.get("players")
    labels = [str(p) for p in players] if isinstance(players, list) and len(players) == n else ["?"] * n
    humans = [h for h in meta.get("human_seats") or [] if isinstance(h, int) and 0 <= h < n]
    game = SpadesGame(rules, seed=0, dealer=data["first_dealer"])
    frames: list[np.ndarray] = []
    texts: list[str] = []
    hand_of: list[int] = []
    summaries: dict[int, dict[str, Any]] = {}
    for i, h in enumerate(data["hands"]):
        if i == 0:
            kw = {"dealer": h["dealer"], "scores": h["scores_before"], "bags": h["bags_before"]}
        else:
            game.next_hand()
            kw = {}
        if n == 4:
            game.set_hand(hands=h["deal"], **kw)
        else:
            game.set_hand(stock=h["stock"], **kw)
        frames.append(game.state.copy())
        texts.append(f"Hand {i + 1}: {names[game.dealer]} deals")
        hand_of.append(i)
        for a in h["actions"]:
            seat, phase = game.current_player, game.phase
            game.apply(a)
            r = StepResult(seat, a, phase, (), False, False)
            texts.append(event_text(r, names, labels, None, game.state))
            frames.append(game.state.copy())
            hand_of.append(i)
            if game.is_hand_over:
                summaries[len(frames) - 1] = hand_summary(game.state, game.params, tuple(h["bags_before"]), n)
    return Replay(
        secrets.token_hex(6), name, labels, humans, game.params, n, frames, texts, hand_of, summaries
    )


__all__ = [
    "EPISODES",
    "SPEEDS",
    "Replay",
    "Setup",
    "Table",
    "WebError",
    "hand_summary",
    "illegal_reason",
    "list_records",
    "new_table",
    "open_replay",
    "play_setup",
    "policy_choices",
    "resume_table",
    "safe_file",
    "state_view",
    "watch_setup",
]
