"""Checks of input at the public boundaries: one small typed checker per kind of input.

Every front-end (the facade, the AEC, Gymnasium and batched envs, records, the CLI) checks
what a user gives it with these functions before it changes anything, so a bad value is
refused the same way everywhere and nothing reaches the compiled core unchecked. A refusal
raises :class:`InputError` (a :class:`SpadesError`, so a ``ValueError``) naming the input,
the value and what is allowed.

Choices (documented here and in the README's "Bad input" section):

* Integers are exact: ``bool`` and ``float`` are not integers (``1.7``, ``True`` and ``"1"``
  are refused, not coerced); NumPy integers are integers.
* A seat is ``0..num_seats - 1``; as text (a command's option) also its name, any case:
  ``N``, ``E``, ``S``, ``W`` or ``north``, ``east``, ``south``, ``west`` in the four-player
  game, ``P0``, ``P1`` in the two-player game (:func:`parse_seat`). A card is an id
  ``0..51`` or a card string (``"AS"``); a bid is ``0..13`` (``0`` = Nil) or ``"blind"``.
* Scores and bags that start a hand must be ones a real game can reach under the rules:
  bags ``0..bag_limit - 1`` (any ``0..SCORE_LIMIT`` when ``bag_limit`` is 0); scores within
  ``-SCORE_LIMIT..SCORE_LIMIT``, below ``target_score`` unless the two are tied (a tie at or
  past the target plays on), and above ``mercy_threshold`` when the mercy rule is on. So a
  game cannot be started at 600 points: to analyse such a position, raise ``target_score``
  in the rules (``rules.replace(target_score=1000)``).
* Counts (games, boards, workers, decisions) are integers with a stated minimum, at most
  ``MAX_COUNT``; option numbers are finite (``inf`` and ``nan`` are refused).
"""

from __future__ import annotations

import math
import reprlib
from collections.abc import Sequence
from typing import Any

import numpy as np

from spades_env.core import layout as L

SCORE_LIMIT = 10**9
"""Largest absolute score (and largest bag count when there is no bag limit) accepted."""
MAX_COUNT = 2**62
"""Largest count accepted (games, boards, decisions...), so that it fits the compiled core."""


class SpadesError(ValueError):
    """Base of every error this package raises for bad input: rules, actions, deals, records,
    policy names, arguments. The ``spades`` command turns one into a one-line message and exit
    status 2; anything else is a bug and keeps its traceback."""


class InputError(SpadesError):
    """A bad argument: a seat, card, bid, score, count, option or path that is not allowed.
    The message names the input, the value and what is allowed."""


class InputTypeError(InputError, TypeError):
    """An argument of the wrong type (a float or bool for an integer, a list for a name...);
    also a ``TypeError``, for code that catches that."""


_REPR = reprlib.Repr()
_REPR.maxstring = 60
_REPR.maxother = 60
_REPR.maxlist = _REPR.maxtuple = _REPR.maxdict = _REPR.maxset = 6
_REPR.maxlevel = 3


def brief(value: Any, width: int = 80) -> str:
    """A short ``repr`` of ``value`` for an error message: at most about ``width`` characters,
    never the whole of a huge string, list or integer (an integer of more than 30 digits is
    described by its size, since Python refuses to print one of 4300+ digits). Every message
    of the package that shows a value a user gave shows it through this function."""
    if isinstance(value, (int, np.integer)) and not isinstance(value, (bool, np.bool_)):
        v = int(value)
        if v.bit_length() > 100:
            return f"<an integer of about {int(v.bit_length() * 0.30103) + 1} digits>"
        return repr(v)
    try:
        text = _REPR.repr(value)
    except Exception:  # a broken __repr__ must not hide the real error
        text = f"<{type(value).__name__}>"
    return text if len(text) <= width else text[: width - 3] + "..."


def is_int(value: Any) -> bool:
    """Whether ``value`` is an integer: a Python or NumPy integer, not a bool."""
    return isinstance(value, (int, np.integer)) and not isinstance(value, (bool, np.bool_))


def _range_text(lo: int | float | None, hi: int | float | None) -> str:
    if lo is None and hi is None:
        return "any integer"
    if hi is None:
        return f"an integer of at least {lo}"
    if lo is None:
        return f"an integer of at most {hi}"
    return f"an integer in {lo}..{hi}"


def check_int(value: Any, name: str, lo: int | None = None, hi: int | None = None) -> int:
    """``value`` as a Python int, if it is an integer in ``lo..hi`` (either bound optional)."""
    if not is_int(value):
        raise InputTypeError(f"{name} must be {_range_text(lo, hi)}, got {brief(value)} ({type(value).__name__})")
    v = int(value)
    if (lo is not None and v < lo) or (hi is not None and v > hi):
        raise InputError(f"{name} must be {_range_text(lo, hi)}, got {brief(v)}")
    return v


def check_count(value: Any, name: str, lo: int = 1, hi: int = MAX_COUNT) -> int:
    """A count (games, boards, workers, decisions): an integer in ``lo..hi``."""
    if hi == MAX_COUNT:
        v = check_int(value, name, lo)
        if v > hi:
            raise InputError(f"{name} must be an integer of at least {lo} and at most 2**62, got {brief(v)}")
        return v
    return check_int(value, name, lo, hi)


def check_seed(value: Any, name: str = "seed") -> int | None:
    """A seed: ``None`` (fresh entropy) or a non-negative integer."""
    if value is None:
        return None
    return check_int(value, name, 0)


def check_float(
    value: Any, name: str, lo: float | None = None, hi: float | None = None, *, lo_open: bool = False
) -> float:
    """A finite real number (an int or float, not a bool) in ``lo..hi`` (``lo`` excluded when
    ``lo_open``), as a float."""
    if isinstance(value, (bool, np.bool_)) or not isinstance(value, (int, float, np.integer, np.floating)):
        raise InputTypeError(f"{name} must be a number, got {brief(value)} ({type(value).__name__})")
    try:
        v = float(value)
    except OverflowError:
        v = math.inf
    if not math.isfinite(v):
        raise InputError(f"{name} must be a finite number, got {brief(value)}")
    if (lo is not None and (v <= lo if lo_open else v < lo)) or (hi is not None and v > hi):
        low = "" if lo is None else (f"more than {lo}" if lo_open else f"at least {lo}")
        high = "" if hi is None else f"at most {hi}"
        raise InputError(f"{name} must be {' and '.join(x for x in (low, high) if x)}, got {brief(value)}")
    return v


def check_bool(value: Any, name: str) -> bool:
    """A bool (Python or NumPy); ``0``, ``1`` and strings are refused."""
    if not isinstance(value, (bool, np.bool_)):
        raise InputTypeError(f"{name} must be true or false, got {brief(value)} ({type(value).__name__})")
    return bool(value)


def check_choice(value: Any, name: str, choices: Sequence[str]) -> str:
    """One of the strings ``choices``."""
    if not isinstance(value, str) or value not in choices:
        raise InputError(f"{name} must be one of {list(choices)}, got {brief(value)}")
    return value


def check_seat(value: Any, num_seats: int, name: str = "seat") -> int:
    """A seat number ``0..num_seats - 1`` (N, E, S, W = 0..3; P0, P1 = 0, 1)."""
    if not is_int(value):
        raise InputTypeError(
            f"{name} must be a seat number 0..{num_seats - 1} (an integer), got {brief(value)} "
            f"({type(value).__name__})"
        )
    v = int(value)
    if not 0 <= v < num_seats:
        raise InputError(f"{name} {brief(v)} is not a seat of the {num_seats}-player game (0..{num_seats - 1})")
    return v


SEAT_NAMES_4 = ("N", "E", "S", "W")
"""Names of the four-player seats, in seat order."""
SEAT_NAMES_2 = ("P0", "P1")
"""Names of the two-player seats."""


def seat_names(num_seats: int) -> tuple[str, ...]:
    """Names of the seats: N, E, S, W (or P0, P1)."""
    return SEAT_NAMES_4 if num_seats == 4 else SEAT_NAMES_2


SEAT_WORDS = {"north": "N", "east": "E", "south": "S", "west": "W"}
"""Long names of the four-player seats, by their one-letter names."""


def parse_seat(value: Any, num_seats: int, name: str = "seat") -> int:
    """A seat given as a number or as its name, as a seat number ``0..num_seats - 1``.

    A string may be a number (``"2"``) or, in any case, the seat's name in the game being
    played: ``N``, ``E``, ``S``, ``W`` (or ``north``, ``east``, ``south``, ``west``) in the
    four-player game, ``P0``, ``P1`` in the two-player game (the names of
    :func:`seat_names`). Every command's seat option reads its value
    with this function, so they all accept the same spellings."""
    if not isinstance(value, str):
        return check_seat(value, num_seats, name)
    names = seat_names(num_seats)
    text = value.strip()
    if text.isascii() and text.isdigit():
        return check_seat(int(text), num_seats, name)
    key = SEAT_WORDS.get(text.lower(), text.upper()) if num_seats == 4 else text.upper()
    if key in names:
        return names.index(key)
    words = ", ".join(names)
    if num_seats == 4:
        words += " (north, east, south, west; any case)"
    raise InputError(
        f"{name} {brief(value)} is not a seat of the {num_seats}-player game: give {words} or a number "
        f"0..{num_seats - 1}"
    )


def check_bid(value: Any, name: str = "bid") -> int | str:
    """A bid: ``0..13`` (``0`` is Nil) or ``"blind"`` (also ``"blind nil"``, ``"bn"``) for
    Blind Nil, returned as an int or ``"blind"``."""
    if isinstance(value, str):
        if value.strip().lower() in ("blind", "blind nil", "bn"):
            return "blind"
        raise InputError(f"{name} must be 0..13 or 'blind', got {brief(value)}")
    if not is_int(value) or not 0 <= int(value) <= 13:
        raise InputError(f"{name} must be 0..13 or 'blind', got {brief(value)}")
    return int(value)


def check_pair(value: Any, name: str, lo: int | None = None, hi: int | None = None) -> tuple[int, int]:
    """Two integers (one per team) in ``lo..hi``."""
    if isinstance(value, (str, bytes, dict)) or not isinstance(value, (Sequence, np.ndarray)):
        raise InputError(f"{name} must be 2 integers (one per team), got {brief(value)}")
    if len(value) != 2:
        raise InputError(f"{name} needs 2 values (one per team), got {len(value)}: {brief(value)}")
    a, b = (check_int(v, f"{name}[{i}]", lo, hi) for i, v in enumerate(value))
    return a, b


def check_bags(value: Any, rules: Any, name: str = "bags") -> tuple[int, int]:
    """Bags of both teams before a hand: ``0..bag_limit - 1`` (a team that reaches the limit
    is penalised and loses that many bags), or ``0..SCORE_LIMIT`` with no bag limit."""
    b = check_pair(value, name, 0, SCORE_LIMIT)
    limit = rules.bag_limit
    for i, v in enumerate(b):
        if limit > 0 and v >= limit:
            raise InputError(
                f"{name}[{i}] must be an integer in 0..{limit - 1}, got {v}: a team that reaches "
                f"bag_limit {limit} loses {limit} bags, so a game never holds that many"
            )
    return b


def check_scores(value: Any, rules: Any, name: str = "scores") -> tuple[int, int]:
    """Scores of both teams before a hand, as a real game can reach them: within
    ``-SCORE_LIMIT..SCORE_LIMIT``, below ``target_score`` unless tied (a tie plays on), above
    ``mercy_threshold`` with the mercy rule."""
    s = check_pair(value, name, -SCORE_LIMIT, SCORE_LIMIT)
    target = rules.target_score
    if max(s) >= target and s[0] != s[1]:
        raise InputError(
            f"{name} {list(s)}: a game is over once a team reaches target_score {target} with the "
            f"higher total (only a tie plays on); to study such a position raise target_score"
        )
    if rules.mercy_rule and min(s) <= rules.mercy_threshold:
        raise InputError(
            f"{name} {list(s)}: with the mercy rule a game is over at mercy_threshold "
            f"{rules.mercy_threshold} or below"
        )
    return s


def check_state_row(state: Any, size: int, num_seats: int, name: str = "state") -> np.ndarray:
    """A game's state row: a 1-D ``int64`` array of ``size`` values for ``num_seats`` seats."""
    if not isinstance(state, np.ndarray):
        raise InputError(f"{name} must be a numpy int64 array of shape ({size},), got {type(state).__name__}")
    if state.dtype != np.int64 or state.shape != (size,):
        raise InputError(f"{name} must be an int64 array of shape ({size},), got {state.dtype} {state.shape}")
    if int(state[L.NUM_SEATS]) != num_seats:
        raise InputError(
            f"{name} is not a state row of a {num_seats}-player game (its seat count is {int(state[L.NUM_SEATS])})"
        )
    n = num_seats
    fields = (  # the entries the compiled code uses as indices: (name, offset, count, lo, hi)
        ("phase", L.PHASE, 1, 0, len(L.PHASE_NAMES) - 1),
        ("dealer", L.DEALER, 1, 0, n - 1),
        ("turn", L.TURN, 1, -1, n - 1),
        ("trick leader", L.TRICK_LEADER, 1, 0, n - 1),
        ("trick size", L.TRICK_SIZE, 1, 0, n),
        ("stock position", L.STOCK_POS, 1, 0, 52),
        ("bids", L.BIDS, 4, L.BID_NONE, L.BID_BLIND_NIL),
        ("trick cards", L.TRICK_CARDS, 4, L.NO_CARD, 51),
        ("last trick", L.LAST_TRICK, 4, L.NO_CARD, 51),
        ("exchange order", L.EXCH_SEQ, 4, -1, n - 1),
        ("deck", L.DECK, 52, 0, 51),
    )
    for label, off, count, lo, hi in fields:
        part = state[off : off + count]
        if part.min() < lo or part.max() > hi:
            raise InputError(
                f"{name} is not a state row the engine wrote: its {label} entries {part.tolist()} "
                f"are outside {lo}..{hi}"
            )
    return state


__all__ = [
    "MAX_COUNT",
    "SCORE_LIMIT",
    "SEAT_NAMES_2",
    "SEAT_NAMES_4",
    "InputError",
    "InputTypeError",
    "SpadesError",
    "brief",
    "check_bags",
    "check_bid",
    "check_bool",
    "check_choice",
    "check_count",
    "check_float",
    "check_int",
    "check_pair",
    "check_scores",
    "check_seat",
    "check_seed",
    "check_state_row",
    "is_int",
    "parse_seat",
    "seat_names",
]
