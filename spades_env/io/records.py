"""Game records: a JSON format for a hand, a game or a match; export, load, validate, replay.

A record holds the rules, how the match started (first dealer, scores, bags) and, per hand,
how it started, the deal, every action id in order and the result. ``replay_record`` plays
every action through the rules core (:class:`~spades_env.core.game.SpadesGame`), so a record
that replays cleanly is a legal game whose every score is reproduced. The format is
documented in ``docs/records.md``::

    {
      "format": "spades_env/record-v1",
      "rules": "tournament",                # a preset name, or the full rules dict
      "first_dealer": 3,
      "start_scores": [0, 0],
      "start_bags": [0, 0],
      "meta": {"seed": 7},                  # optional, free-form
      "hands": [
        {"dealer": 3, "scores_before": [0, 0], "bags_before": [0, 0],
         "deal": [["2C", ...13 cards], [...], [...], [...]],   # by seat N, E, S, W
         "actions": [67, 55, ...],
         "result": {"bids": [...], "tricks": [...], "points": [...], "scores": [...],
                    "bags": [...], "phase": "hand_end", "game_winner": -1,
                    "truncated": false}},
        ...
      ],
      "final": {"phase": "match_end", "scores": [...], "bags": [...], "game_wins": [0, 0],
                "match_winner": -1, "truncated": true, "hands": 3}
    }

The two-player game has ``"stock"`` (52 cards, top first) instead of ``"deal"``. Only the
last hand may be unfinished (``"result": null``: its actions so far).

Malformed input raises :class:`RecordError` naming the field as a JSON path
(``hands[2].actions[17]``) and the problem; an illegal action names the hand, the position,
the action and the legal set. A record is strict JSON: UTF-8 text, no key given twice in an
object, no ``NaN`` or ``Infinity``, nested at most ``MAX_DEPTH`` levels; every integer within
``-SCORE_LIMIT..SCORE_LIMIT`` (``spades_env.core.validate``), and a record must start from
scores and bags a real game can reach (see ``SpadesGame.set_hand``). A record given as a dict
may hold NumPy integers and bools (they are read as Python ones).
"""

from __future__ import annotations

import copy
import json
import math
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from spades_env.core import layout as L
from spades_env.core.actions import NUM_ACTIONS, action_to_str
from spades_env.core.cards import (
    NUM_CARDS,
    card_from_str,
    card_to_str,
    cards_from_mask,
    format_cards,
)
from spades_env.core.files import brief, read_json_file
from spades_env.core.game import IllegalActionError, SpadesGame, seat_names
from spades_env.core.rules import RulesConfig, RulesError, load_rules, preset_names, rules_from_dict
from spades_env.core.validate import SCORE_LIMIT, SpadesError

FORMAT = "spades_env/record-v1"
"""Value of the ``format`` field of every record this version writes and reads."""

_TOP_KEYS = ("format", "rules", "first_dealer", "start_scores", "start_bags", "meta", "hands", "final")
_REQUIRED_TOP = ("format", "rules", "first_dealer", "hands")
_HAND_KEYS = ("dealer", "scores_before", "bags_before", "deal", "stock", "actions", "result")
_RESULT_KEYS = ("bids", "tricks", "points", "scores", "bags", "phase", "game_winner", "truncated")
_REQUIRED_RESULT = ("bids", "tricks", "points", "scores", "bags")
_FINAL_KEYS = ("phase", "scores", "bags", "game_wins", "match_winner", "truncated", "hands")
MAX_DEPTH = 100
MAX_RECORD_BYTES = 64 * 1024 * 1024
"""Largest record file read (a match of 100 hands is about 100 KiB)."""
"""Deepest nesting of JSON arrays and objects a record may have (the format needs 4)."""


class RecordError(SpadesError):
    """A malformed record, or one whose actions or results the rules do not reproduce.

    ``where`` is the JSON path of the offending field (``hands[2].actions[17]``); for an
    illegal action ``hand``, ``position``, ``action`` and ``legal`` say which and what was
    legal instead.
    """

    def __init__(
        self,
        message: str,
        *,
        where: str = "",
        hand: int | None = None,
        position: int | None = None,
        action: int | None = None,
        legal: list[int] | None = None,
    ) -> None:
        super().__init__(f"{where}: {message}" if where else message)
        self.where = where
        self.hand = hand
        self.position = position
        self.action = action
        self.legal = legal


@dataclass
class ReplayResult:
    """What a replay reproduced: the rules, each hand's result, the final state, the game."""

    rules: RulesConfig
    hands: list[dict | None]
    final: dict
    game: SpadesGame = field(repr=False)


# ---- export ---------------------------------------------------------------------------------
def rules_to_record(rules: RulesConfig) -> str | dict[str, Any]:
    """The preset name when ``rules`` equal that preset, else the full rules dict."""
    if rules.name in preset_names():
        try:
            if load_rules(rules.name) == rules:
                return rules.name
        except RulesError:
            pass
    return rules.to_dict()


def _final_of(game: SpadesGame) -> dict[str, Any]:
    s = game.state
    return {
        "phase": game.phase,
        "scores": list(game.scores),
        "bags": list(game.bags),
        "game_wins": list(game.game_wins),
        "match_winner": int(s[L.MATCH_WINNER]),
        "truncated": game.truncated,
        "hands": sum(1 for h in game.hand_logs if h.result is not None),
    }


def record_from_game(game: SpadesGame, meta: dict[str, Any] | None = None) -> dict[str, Any]:
    """A record of every hand of ``game`` so far (from ``game.hand_logs``).

    An unfinished last hand is kept with ``"result": null`` when it has actions.
    """
    logs = [h for h in game.hand_logs if h.result is not None or h.actions]
    if not logs:
        logs = game.hand_logs[:1]
    hands = []
    for h in logs:
        entry: dict[str, Any] = {
            "dealer": h.dealer,
            "scores_before": list(h.scores_before),
            "bags_before": list(h.bags_before),
        }
        if game.num_seats == 4:
            entry["deal"] = [[card_to_str(c) for c in cards_from_mask(m)] for m in h.hands[:4]]
        else:
            entry["stock"] = [card_to_str(c) for c in h.stock]
        entry["actions"] = list(h.actions)
        entry["result"] = None if h.result is None else copy.deepcopy(h.result)
        hands.append(entry)
    record: dict[str, Any] = {
        "format": FORMAT,
        "rules": rules_to_record(game.rules),
        "first_dealer": logs[0].dealer,
        "start_scores": list(logs[0].scores_before),
        "start_bags": list(logs[0].bags_before),
    }
    if meta:
        record["meta"] = copy.deepcopy(meta)
    record["hands"] = hands
    if logs[-1].result is not None:
        record["final"] = _final_of(game)
    return record


def save_record(record: dict[str, Any], path: str | Path) -> None:
    """Validate ``record`` and write it as JSON (one hand per block, readable). Nothing is
    written when the record is malformed (:class:`RecordError`)."""
    data = load_record(record)
    Path(path).write_text(dumps_record(data))


def dumps_record(record: dict[str, Any]) -> str:
    """JSON text of a record: indented, with each list of cards or actions on one line."""
    return _dumps(record, 0) + "\n"


def _dumps(value: Any, indent: int) -> str:
    pad, inner = "  " * indent, "  " * (indent + 1)
    if isinstance(value, dict) and value:
        items = [f"{inner}{json.dumps(k)}: {_dumps(v, indent + 1)}" for k, v in value.items()]
        return "{\n" + ",\n".join(items) + "\n" + pad + "}"
    if isinstance(value, list) and any(isinstance(v, (list, dict)) for v in value):
        items = [inner + _dumps(v, indent + 1) for v in value]
        return "[\n" + ",\n".join(items) + "\n" + pad + "]"
    return json.dumps(value)


# ---- load and validate ----------------------------------------------------------------------
def _is_int(x: Any) -> bool:
    return isinstance(x, int) and not isinstance(x, bool)


def _int(x: Any, where: str, lo: int | None = None, hi: int | None = None) -> int:
    if not _is_int(x):
        raise RecordError(f"must be an integer, got {brief(x)}", where=where)
    lo = -SCORE_LIMIT if lo is None else lo
    hi = SCORE_LIMIT if hi is None else hi
    if not lo <= x <= hi:
        raise RecordError(f"{x} is out of range {lo}..{hi}", where=where)
    return x


def _int_list(x: Any, n: int, where: str, lo: int | None = None, hi: int | None = None) -> list[int]:
    if not isinstance(x, list):
        raise RecordError(f"must be a list of {n} integers, got {brief(x)}", where=where)
    if len(x) != n:
        raise RecordError(f"has {len(x)} values, needs {n}: {brief(x)}", where=where)
    return [_int(v, f"{where}[{i}]", lo, hi) for i, v in enumerate(x)]


def _check_keys(obj: Any, allowed: tuple[str, ...], required: tuple[str, ...], where: str) -> None:
    if not isinstance(obj, dict):
        raise RecordError(f"must be a JSON object, got {type(obj).__name__}", where=where)
    unknown = sorted(set(obj) - set(allowed))
    if unknown:
        shown = ", ".join(brief(k, 40) for k in list(unknown)[:5]) + (", ..." if len(unknown) > 5 else "")
        raise RecordError(f"unknown key(s) [{shown}]; known keys: {list(allowed)}", where=where)
    missing = [k for k in required if k not in obj]
    if missing:
        raise RecordError(f"missing key(s) {missing}", where=where)


def _card(x: Any, where: str) -> int:
    if not isinstance(x, str):
        raise RecordError(f"a card must be a string like 'AS', got {brief(x)}", where=where)
    try:
        return card_from_str(x)
    except ValueError as exc:
        raise RecordError(str(exc), where=where) from None


def _rules_of(spec: Any) -> RulesConfig:
    if isinstance(spec, str):
        if spec not in preset_names():
            raise RecordError(f"unknown rules preset {spec!r}; presets: {preset_names()}", where="rules")
        return load_rules(spec)
    if isinstance(spec, dict):
        try:
            return rules_from_dict(spec, where="rules")
        except RulesError as exc:
            raise RecordError(str(exc)) from None
    raise RecordError(f"must be a preset name or a dict of rules, got {spec!r}", where="rules")


def _check_deal(deal: Any, where: str) -> None:
    if not isinstance(deal, list) or len(deal) != 4:
        n = len(deal) if isinstance(deal, list) else type(deal).__name__
        raise RecordError(f"a four-player deal needs 4 hands (N, E, S, W), got {n}", where=where)
    seen: dict[int, int] = {}
    for s, hand in enumerate(deal):
        if not isinstance(hand, list):
            raise RecordError(
                f"a hand must be a list of 13 card strings, got {hand!r}", where=f"{where}[{s}]"
            )
        if len(hand) != 13:
            raise RecordError(f"hand of seat {s} has {len(hand)} cards, needs 13", where=f"{where}[{s}]")
        for i, x in enumerate(hand):
            c = _card(x, f"{where}[{s}][{i}]")
            if c in seen:
                raise RecordError(
                    f"card {card_to_str(c)} is dealt twice (seats {seen[c]} and {s})",
                    where=f"{where}[{s}][{i}]",
                )
            seen[c] = s


def _check_stock(stock: Any, where: str) -> None:
    if not isinstance(stock, list):
        raise RecordError(f"the stock must be a list of 52 card strings, got {stock!r}", where=where)
    if len(stock) != NUM_CARDS:
        raise RecordError(f"the stock has {len(stock)} cards, needs 52", where=where)
    seen: dict[int, int] = {}
    for i, x in enumerate(stock):
        c = _card(x, f"{where}[{i}]")
        if c in seen:
            raise RecordError(
                f"card {card_to_str(c)} appears twice in the stock (positions {seen[c]} and {i})",
                where=f"{where}[{i}]",
            )
        seen[c] = i


def _check_result(res: Any, n: int, where: str) -> None:
    _check_keys(res, _RESULT_KEYS, _REQUIRED_RESULT, where)
    bids = res["bids"]
    if not isinstance(bids, list) or len(bids) != n:
        raise RecordError(f"needs {n} bids, got {bids!r}", where=f"{where}.bids")
    for i, b in enumerate(bids):
        if b != "blind" and not (_is_int(b) and 0 <= b <= 13):
            raise RecordError(f"a bid is 0..13 or 'blind', got {brief(b)}", where=f"{where}.bids[{i}]")
    tricks = _int_list(res["tricks"], n, f"{where}.tricks", 0, 13)
    if sum(tricks) != 13:
        raise RecordError(f"tricks {tricks} do not add up to 13", where=f"{where}.tricks")
    _int_list(res["points"], 2, f"{where}.points")
    _int_list(res["scores"], 2, f"{where}.scores")
    _int_list(res["bags"], 2, f"{where}.bags", 0)
    if "phase" in res and res["phase"] not in L.PHASE_NAMES[L.PH_HAND_END :]:
        raise RecordError(
            f"must be one of {list(L.PHASE_NAMES[L.PH_HAND_END :])}, got {brief(res['phase'])}",
            where=f"{where}.phase",
        )
    if "game_winner" in res:
        _int(res["game_winner"], f"{where}.game_winner", -1, 1)
    if "truncated" in res and not isinstance(res["truncated"], bool):
        raise RecordError(f"must be true or false, got {brief(res['truncated'])}", where=f"{where}.truncated")


def load_record(source: str | Path | dict[str, Any]) -> dict[str, Any]:
    """Read (from a path or a JSON string's parsed dict) and validate a record's structure.

    Returns a deep copy of the record. Raises :class:`RecordError` naming the field: unknown
    format or key, unknown rules key, bad card string, duplicate card, wrong count, a
    value out of range. Legality of the actions is checked by :func:`replay_record`.
    """
    if isinstance(source, (str, Path)):
        data = _read_json(Path(source))
    else:
        data = _plain_copy(source)
    _check_depth(data)
    _check_keys(data, _TOP_KEYS, _REQUIRED_TOP, "record")
    if data["format"] != FORMAT:
        raise RecordError(
            f"unknown record format {data['format']!r}; this version reads {FORMAT!r}", where="format"
        )
    rules = _rules_of(data["rules"])
    n = rules.num_players
    first = _int(data["first_dealer"], "first_dealer", 0, n - 1)
    hands = data["hands"]
    if not isinstance(hands, list) or not hands:
        raise RecordError("must be a non-empty list of hands", where="hands")
    if "meta" in data and not isinstance(data["meta"], dict):
        raise RecordError("must be a JSON object", where="meta")
    for i, h in enumerate(hands):
        w = f"hands[{i}]"
        deal_key = "deal" if n == 4 else "stock"
        _check_keys(
            h, _HAND_KEYS, ("dealer", "scores_before", "bags_before", deal_key, "actions", "result"), w
        )
        other = "stock" if n == 4 else "deal"
        if other in h:
            kind = "four" if n == 4 else "two"
            raise RecordError(f"a {kind}-player record has {deal_key!r}, not {other!r}", where=w)
        _int(h["dealer"], f"{w}.dealer", 0, n - 1)
        _int_list(h["scores_before"], 2, f"{w}.scores_before")
        _int_list(h["bags_before"], 2, f"{w}.bags_before", 0)
        if n == 4:
            _check_deal(h["deal"], f"{w}.deal")
        else:
            _check_stock(h["stock"], f"{w}.stock")
        acts = h["actions"]
        if not isinstance(acts, list):
            raise RecordError(f"must be a list of action ids, got {acts!r}", where=f"{w}.actions")
        for j, a in enumerate(acts):
            _int(a, f"{w}.actions[{j}]", 0, NUM_ACTIONS - 1)
        if h["result"] is None:
            if i != len(hands) - 1:
                raise RecordError("only the last hand may be unfinished (result null)", where=f"{w}.result")
        else:
            _check_result(h["result"], n, f"{w}.result")
    h0 = hands[0]
    if h0["dealer"] != first:
        raise RecordError(
            f"first_dealer is {first} but hands[0].dealer is {h0['dealer']}", where="first_dealer"
        )
    for key, hkey, lo in (("start_scores", "scores_before", None), ("start_bags", "bags_before", 0)):
        if key in data:
            v = _int_list(data[key], 2, key, lo)
            if v != h0[hkey]:
                raise RecordError(f"{v} differ from hands[0].{hkey} {h0[hkey]}", where=key)
    if "final" in data:
        fin = data["final"]
        _check_keys(fin, _FINAL_KEYS, (), "final")
        if hands[-1]["result"] is None:
            raise RecordError("a record whose last hand is unfinished has no final result", where="final")
    return data


def _unique_keys(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for k, v in pairs:
        if k in out:
            raise RecordError(f"key {brief(k)} appears twice in one JSON object")
        out[k] = v
    return out


def _read_json(path: Path) -> Any:
    """The JSON value in the record file ``path``: a regular file of at most
    ``MAX_RECORD_BYTES``, strictly and boundedly parsed (:mod:`spades_env.core.files`)."""
    return read_json_file(path, "record file", RecordError, limit=MAX_RECORD_BYTES)


def _json_default(x: Any) -> Any:
    import numpy as np

    if isinstance(x, np.bool_):
        return bool(x)
    if isinstance(x, np.integer):
        return int(x)
    raise TypeError(f"{type(x).__name__} {brief(x)} is not JSON data")


def _plain_copy(source: Any) -> Any:
    """A deep copy of a record given as Python data, as plain JSON values (NumPy integers and
    bools become Python ones; tuples become lists); anything JSON cannot hold is an error."""
    try:
        text = json.dumps(source, default=_json_default, allow_nan=False)
        return json.loads(text, object_pairs_hook=_unique_keys)
    except RecursionError:
        raise RecordError(f"nested too deeply (a record has at most {MAX_DEPTH} levels)", where="record") from None
    except (TypeError, ValueError) as exc:
        if isinstance(exc, RecordError):
            raise RecordError(f"{exc} (non-string keys are read as strings)", where="record") from None
        msg = str(exc)
        if "Out of range float" in msg:
            msg = "NaN and infinite numbers are not JSON numbers"
        raise RecordError(f"not JSON data: {msg}", where="record") from None


def _check_depth(data: Any) -> None:
    stack = [(data, 1, "record")]
    while stack:
        value, depth, where = stack.pop()
        if isinstance(value, (dict, list)):
            if depth > MAX_DEPTH:
                raise RecordError(f"nested more than {MAX_DEPTH} levels deep", where=where)
            items = value.items() if isinstance(value, dict) else enumerate(value)
            for k, v in items:
                if isinstance(v, (dict, list)):
                    stack.append((v, depth + 1, f"{where}.{k}" if isinstance(k, str) else f"{where}[{k}]"))
        elif isinstance(value, float) and not math.isfinite(value):
            raise RecordError(f"{value} is not a JSON number", where=where)


# ---- replay ---------------------------------------------------------------------------------
def _fmt_legal(legal: list[int]) -> str:
    return ", ".join(f"{a} ({action_to_str(a)})" for a in legal) if legal else "none"


def _start_hand(game: SpadesGame, h: dict[str, Any], i: int, first: bool) -> None:
    w = f"hands[{i}]"
    if not first:
        if game.phase not in ("hand_end", "game_end"):
            raise RecordError(
                f"the match is over after hands[{i - 1}] (phase '{game.phase}'), yet the record goes on",
                where=w,
            )
        game.next_hand()
        for key, got in (
            ("dealer", game.dealer),
            ("scores_before", list(game.scores)),
            ("bags_before", list(game.bags)),
        ):
            if h[key] != got:
                raise RecordError(
                    f"record says {h[key]}, but the previous hand leads to {got}", where=f"{w}.{key}"
                )
    try:
        if "deal" in h:
            deal = [[card_from_str(c) for c in hand] for hand in h["deal"]]
            if first:
                game.set_hand(
                    hands=deal, dealer=h["dealer"], scores=h["scores_before"], bags=h["bags_before"]
                )
            else:
                game.set_hand(hands=deal)
        else:
            stock = [card_from_str(c) for c in h["stock"]]
            if first:
                game.set_hand(
                    stock=stock, dealer=h["dealer"], scores=h["scores_before"], bags=h["bags_before"]
                )
            else:
                game.set_hand(stock=stock)
    except ValueError as exc:
        raise RecordError(str(exc), where=w) from None


def _compare(expected: dict[str, Any], got: dict[str, Any], where: str) -> None:
    for key, value in expected.items():
        if got.get(key) != value:
            raise RecordError(f"record says {brief(value)}, replay gives {got.get(key)!r}", where=f"{where}.{key}")


def replay_record(record: str | Path | dict[str, Any]) -> ReplayResult:
    """Replay a record through the rules core, checking every action and every result.

    Builds its own game (nothing outside is changed). Raises :class:`RecordError` at the
    first problem: an illegal action (naming hand, position, action and the legal set),
    actions that stop before the hand is over, or a result the rules do not reproduce.
    """
    data = load_record(record)
    rules = _rules_of(data["rules"])
    names = seat_names(rules.num_players)
    game = SpadesGame(rules, seed=0, dealer=data["first_dealer"])
    results: list[dict | None] = []
    for i, h in enumerate(data["hands"]):
        _start_hand(game, h, i, first=(i == 0))
        for j, a in enumerate(h["actions"]):
            w = f"hands[{i}].actions[{j}]"
            if game.current_player < 0:
                raise RecordError(
                    f"action {a} ({action_to_str(a)}) comes after the hand is over (phase '{game.phase}')",
                    where=w,
                    hand=i,
                    position=j,
                    action=a,
                    legal=[],
                )
            try:
                game.apply(a)
            except IllegalActionError:
                legal = game.legal_actions()
                raise RecordError(
                    f"illegal action {a} ({action_to_str(a)}) by seat {names[game.current_player]} "
                    f"in phase '{game.phase}'; legal: {_fmt_legal(legal)}",
                    where=w,
                    hand=i,
                    position=j,
                    action=a,
                    legal=legal,
                ) from None
        res = h["result"]
        if res is None:
            if game.is_hand_over:
                raise RecordError(
                    f"the hand is over after its {len(h['actions'])} actions, but the result is null; "
                    f"replay gives {game.hand_result()}",
                    where=f"hands[{i}].result",
                )
            results.append(None)
            continue
        if not game.is_hand_over:
            legal = game.legal_actions()
            raise RecordError(
                f"the actions stop after {len(h['actions'])} before the hand is over: seat "
                f"{names[game.current_player]} is to act in phase '{game.phase}'; legal: {_fmt_legal(legal)}",
                where=f"hands[{i}].actions",
                hand=i,
                position=len(h["actions"]),
                legal=legal,
            )
        got = game.hand_result()
        _compare(res, got, f"hands[{i}].result")
        results.append(got)
    final = _final_of(game)
    if "final" in data:
        _compare(data["final"], final, "final")
    return ReplayResult(rules=rules, hands=results, final=final, game=game)


# ---- text -----------------------------------------------------------------------------------
def _bid_text(b: Any) -> str:
    return "-" if b is None else "Blind Nil" if b == "blind" else "Nil" if b == 0 else str(b)


def _team_names(n: int) -> tuple[str, str]:
    return ("NS", "EW") if n == 4 else ("P0", "P1")


def format_hand(
    record: dict[str, Any], i: int, *, deal: bool = True, game_num: int = 1, hand_num: int = 1
) -> str:
    """A readable block for hand ``i`` of a (validated) record: deal, bids, tricks, points, scores."""
    rules = _rules_of(record["rules"])
    n = rules.num_players
    names = seat_names(n)
    teams = _team_names(n)
    h = record["hands"][i]
    res = h["result"]
    first = (h["dealer"] + 1) % n
    lines = [f"Game {game_num}, hand {hand_num}: dealer {names[h['dealer']]}, {names[first]} bids and leads"]
    for s in range(n):
        row = f"  {names[s]:>2}"
        if res is not None:
            row += f"  bid {_bid_text(res['bids'][s]):<9}  won {res['tricks'][s]:>2}"
        if deal and n == 4:
            mask = sum(1 << card_from_str(c) for c in h["deal"][s])
            row += f"   {format_cards(mask)}"
        lines.append(row)
    if deal and n == 2:
        lines.append(f"  stock: {' '.join(h['stock'][:26])}")
        lines.append(f"         {' '.join(h['stock'][26:])}")
    if res is None:
        lines.append(f"  unfinished: {len(h['actions'])} actions so far")
        return "\n".join(lines)
    for t in range(2):
        seats = list(range(t, n, 2))
        bids = [res["bids"][s] for s in seats]
        parts = (
            [str(sum(b for b in bids if b not in (0, "blind")))]
            if any(b not in (0, "blind") for b in bids)
            else []
        )
        parts += [_bid_text(b) for b in bids if b in (0, "blind")]
        won = sum(res["tricks"][s] for s in seats)
        lines.append(
            f"  {teams[t]}: bid {' + '.join(parts)}, won {won:>2}  ->  {res['points'][t]:+5d} points,"
            f"  score {res['scores'][t]:>5}, bags {res['bags'][t]}"
        )
    return "\n".join(lines)


def format_final(record: dict[str, Any], final: dict[str, Any]) -> str:
    """One or two lines saying how the match ended (won, or cut short by the hand cap)."""
    rules = _rules_of(record["rules"])
    teams = _team_names(rules.num_players)
    sc = final["scores"]
    score_txt = f"{teams[0]} {sc[0]}, {teams[1]} {sc[1]}"
    wins = final["game_wins"]
    hands = final["hands"]
    if final["phase"] != "match_end":
        return f"Stopped after {hands} hands ({final['phase']}): {score_txt}; games won {wins[0]}-{wins[1]}"
    if final["truncated"]:
        return (
            f"Result: no winner. The game was cut short by the {rules.max_hands}-hand cap "
            f"(max_hands) after {hands} hand(s) in all, before either side reached {rules.target_score}: "
            f"{score_txt}; games won {teams[0]} {wins[0]}, {teams[1]} {wins[1]}."
        )
    w = final["match_winner"]
    return (
        f"Result: {teams[w]} wins the match {wins[w]}-{wins[1 - w]} after {hands} hands "
        f"(last game: {score_txt})."
    )


def format_record(record: dict[str, Any], final: dict[str, Any] | None = None, *, deal: bool = True) -> str:
    """Every hand of a record as readable text, then the result (``final``, or the record's)."""
    blocks = []
    game_num, hand_num = 1, 1
    for i, h in enumerate(record["hands"]):
        blocks.append(format_hand(record, i, deal=deal, game_num=game_num, hand_num=hand_num))
        res = h["result"]
        if res is not None and res.get("phase") == "game_end":
            w = res.get("game_winner", -1)
            teams = _team_names(_rules_of(record["rules"]).num_players)
            blocks.append(
                f"  == {teams[w]} wins game {game_num} ==" if w >= 0 else f"  == game {game_num} ends =="
            )
            game_num, hand_num = game_num + 1, 1
        else:
            hand_num += 1
    fin = final if final is not None else record.get("final")
    if fin is not None:
        blocks.append(format_final(record, fin))
    return "\n".join(blocks)
