"""Rules of a Spades variant: a frozen, validated config, and its named presets.

Presets live in ``configs/rules/*.yaml`` (``tournament`` is the default, ``openspiel`` matches
OpenSpiel's spades scoring, ``two_player`` is the two-player game), shipped inside the package
as ``spades_env/presets/*.yaml`` (read with ``importlib.resources``). An unknown key or a bad
value raises :class:`RulesError` naming the key (and the file, when loaded from one).
"""

from __future__ import annotations

import dataclasses
import re
from dataclasses import dataclass, fields
from importlib import resources
from pathlib import Path
from typing import Any

import numpy as np

from spades_env.core import layout as L
from spades_env.core.files import brief, parse_json, parse_yaml, read_text_bounded
from spades_env.core.validate import InputError, SpadesError, is_int


class RulesError(SpadesError):
    """A rules config with an unknown key or a value out of range (a ``ValueError``)."""


@dataclass(frozen=True)
class RulesConfig:
    """Every rule knob of the engine, with the 2v2 tournament rules as defaults."""

    name: str = "tournament"
    """Name of the preset (informational; records store it)."""
    num_players: int = 4
    """4 (two partnerships) or 2 (each player its own side, with the draw)."""
    blind_nil: bool = True
    """Whether Blind Nil may be bid."""
    blind_nil_min_deficit: int = 0
    """Blind Nil only for a team trailing by at least this many points (0: always)."""
    blind_nil_exchange: int = 3
    """Cards the Blind Nil bidder and partner exchange (0: no exchange)."""
    nil_value: int = 100
    """Points won (lost) by a made (failed) Nil."""
    blind_nil_value: int = 200
    """Points won (lost) by a made (failed) Blind Nil."""
    bag_limit: int = 10
    """Each time a team's bags reach this many it loses ``bag_penalty`` (0: no bag penalty)."""
    bag_penalty: int = 100
    """Points lost each time the bag limit is reached."""
    failed_nil_counts_toward_contract: bool = False
    """A failed Nil bidder's tricks count toward the partner's contract (OpenSpiel) rather
    than only as bags."""
    must_break_spades: bool = True
    """Spades may not be led until broken (unless the leader holds only spades)."""
    target_score: int = 500
    """A game ends when a team reaches this score (the higher total wins; a tie plays on)."""
    mercy_rule: bool = False
    """End the game when a team falls to ``mercy_threshold`` or below (that team loses)."""
    mercy_threshold: int = -200
    """Score at or below which the mercy rule ends the game."""
    max_hands: int = 100
    """Hands per game before the game is cut short (truncated); 0 means no cap."""
    match_games: int = 3
    """Games in a match (best of N, N odd)."""
    trick_value: int = 10
    """Points per contracted trick."""
    first_dealer: int = -1
    """Seat that deals the first hand; -1 draws it from the seed."""

    def __post_init__(self) -> None:
        _normalize(self)
        defaults = {f.name: f.default for f in fields(self)}
        _imply(self, {k for k, v in defaults.items() if getattr(self, k) != v})
        _validate(self, where="RulesConfig")

    def to_params(self) -> np.ndarray:
        """The ``int64`` parameter row the compiled core reads (see ``layout.P_*``)."""
        p = np.zeros(L.PARAMS_SIZE, dtype=np.int64)
        p[L.P_NUM_SEATS] = self.num_players
        p[L.P_BLIND_NIL] = int(self.blind_nil)
        p[L.P_BLIND_NIL_MIN_DEFICIT] = self.blind_nil_min_deficit
        p[L.P_EXCHANGE_CARDS] = self.blind_nil_exchange
        p[L.P_NIL_VALUE] = self.nil_value
        p[L.P_BLIND_NIL_VALUE] = self.blind_nil_value
        p[L.P_BAG_LIMIT] = self.bag_limit
        p[L.P_BAG_PENALTY] = self.bag_penalty
        p[L.P_FAILED_NIL_COUNTS] = int(self.failed_nil_counts_toward_contract)
        p[L.P_MUST_BREAK_SPADES] = int(self.must_break_spades)
        p[L.P_TARGET_SCORE] = self.target_score
        p[L.P_MERCY] = int(self.mercy_rule)
        p[L.P_MERCY_THRESHOLD] = self.mercy_threshold
        p[L.P_MAX_HANDS] = self.max_hands
        p[L.P_GAMES_TO_WIN] = self.match_games // 2 + 1
        p[L.P_TRICK_VALUE] = self.trick_value
        p[L.P_FIRST_DEALER] = self.first_dealer
        return p

    def to_dict(self) -> dict[str, Any]:
        """Plain dict of every field (for records and checkpoints)."""
        return dataclasses.asdict(self)

    def replace(self, **changes: Any) -> RulesConfig:
        """A copy with some fields changed (validated). Turning ``blind_nil`` off without
        naming ``blind_nil_exchange`` or ``blind_nil_min_deficit`` turns those off too."""
        return rules_from_dict({**self.to_dict(), **changes}, stated=set(changes))


_BOUNDS: dict[str, tuple[int, int]] = {
    "num_players": (2, 4),
    "blind_nil_min_deficit": (0, 100_000),
    "blind_nil_exchange": (0, 13),
    "nil_value": (0, 10_000),
    "blind_nil_value": (0, 10_000),
    "bag_limit": (0, 1_000),
    "bag_penalty": (0, 10_000),
    "target_score": (1, 100_000),
    "mercy_threshold": (-100_000, 0),
    "max_hands": (0, 100_000),
    "match_games": (1, 99),
    "trick_value": (1, 1_000),
    "first_dealer": (-1, 3),
}


def _normalize(cfg: RulesConfig) -> None:
    """NumPy integers and bools become Python ones (so a config is plain JSON data); any other
    type is left for ``_validate`` to refuse."""
    for f in fields(cfg):
        value = getattr(cfg, f.name)
        if isinstance(value, np.bool_):
            object.__setattr__(cfg, f.name, bool(value))
        elif isinstance(value, np.integer):
            object.__setattr__(cfg, f.name, int(value))


_BLIND_NIL_ONLY = ("blind_nil_exchange", "blind_nil_min_deficit")
"""Rules that only mean something with Blind Nil: off (0) when Blind Nil is off and they are
not stated; stated non-zero beside ``blind_nil: false``, a contradiction."""


def _imply(cfg: RulesConfig, stated: set[str]) -> None:
    """Rules that follow from others when not stated: no Blind Nil, no exchange or deficit."""
    if cfg.blind_nil is False:
        for key in _BLIND_NIL_ONLY:
            if key not in stated:
                object.__setattr__(cfg, key, 0)


MATCH_SETTINGS = ("name", "first_dealer", "match_games", "max_hands")
"""Rules that set up a match (its name, the first dealer, games in a match, the cap on hands),
not how a hand is bid, played or scored: left out of :func:`settings_in_effect`."""


def settings_in_effect(cfg: RulesConfig) -> dict[str, Any]:
    """The rules that decide how ``cfg``'s hands are bid, played and scored, each only where it
    means something: the Blind Nil settings only with Blind Nil, the mercy threshold only with
    the mercy rule. Two configs that agree here play the same hands the same way."""
    out: dict[str, Any] = {}
    for f in fields(cfg):
        name = f.name
        if name in MATCH_SETTINGS:
            continue
        if name in (*_BLIND_NIL_ONLY, "blind_nil_value") and not cfg.blind_nil:
            continue
        if name == "mercy_threshold" and not cfg.mercy_rule:
            continue
        out[name] = getattr(cfg, name)
    return out


def _validate(cfg: RulesConfig, where: str) -> None:
    for f in fields(cfg):
        value = getattr(cfg, f.name)
        if f.type in ("bool", bool):
            if not isinstance(value, bool):
                raise RulesError(f"{where}: rule '{f.name}' must be true or false, got {brief(value)}")
        elif f.type in ("int", int):
            if not is_int(value):
                raise RulesError(f"{where}: rule '{f.name}' must be an integer, got {brief(value)}")
            lo, hi = _BOUNDS[f.name]
            if not lo <= value <= hi:
                raise RulesError(f"{where}: rule '{f.name}' = {brief(value)} is out of range {lo}..{hi}")
        elif not isinstance(value, str):
            raise RulesError(f"{where}: rule '{f.name}' must be a string, got {brief(value)}")
    if len(cfg.name) > 200:
        raise RulesError(f"{where}: rule 'name' must be at most 200 characters, got {len(cfg.name)}")
    if cfg.num_players not in (2, 4):
        raise RulesError(f"{where}: rule 'num_players' must be 2 or 4, got {cfg.num_players}")
    if cfg.match_games % 2 == 0:
        raise RulesError(f"{where}: rule 'match_games' must be odd (best of N), got {cfg.match_games}")
    if cfg.num_players == 2 and cfg.blind_nil_exchange != 0:
        raise RulesError(
            f"{where}: rule 'blind_nil_exchange' must be 0 in the two-player game "
            f"(a player has no partner to exchange with), got {cfg.blind_nil_exchange}"
        )
    if not cfg.blind_nil and cfg.blind_nil_exchange != 0:
        raise RulesError(
            f"{where}: rules contradict: 'blind_nil' is false but 'blind_nil_exchange' is "
            f"{cfg.blind_nil_exchange} (an exchange follows a Blind Nil bid; set it to 0)"
        )
    if not cfg.blind_nil and cfg.blind_nil_min_deficit != 0:
        raise RulesError(
            f"{where}: rules contradict: 'blind_nil' is false but 'blind_nil_min_deficit' is "
            f"{cfg.blind_nil_min_deficit} (set it to 0)"
        )
    if cfg.mercy_rule and cfg.mercy_threshold >= 0:
        raise RulesError(
            f"{where}: rules contradict: 'mercy_rule' is on with 'mercy_threshold' "
            f"{cfg.mercy_threshold}: every game would end at its first hand (give a negative threshold)"
        )
    if cfg.first_dealer >= cfg.num_players:
        raise RulesError(
            f"{where}: rule 'first_dealer' = {cfg.first_dealer} is not a seat of a {cfg.num_players}-player game"
        )


def rules_from_dict(data: dict[str, Any], where: str = "rules", stated: set[str] | None = None) -> RulesConfig:
    """Build a validated config from a dict; unknown keys are an error naming them, and so
    are rules that contradict each other. ``stated``: the keys the user gave (default: the
    keys of ``data``); Blind Nil's exchange and deficit not stated follow ``blind_nil``."""
    if not isinstance(data, dict):
        raise RulesError(
            f"{where}: rules must be a mapping of rule names to values, got {type(data).__name__}"
        )
    if len(data) > 100:
        raise RulesError(f"{where}: rules hold {len(data)} keys; there are only {len(fields(RulesConfig))} rules")
    known = {f.name for f in fields(RulesConfig)}
    unknown = sorted(set(data) - known, key=repr)
    if unknown:
        shown = ", ".join(brief(k, 40) for k in unknown[:5]) + (", ..." if len(unknown) > 5 else "")
        raise RulesError(f"{where}: unknown rule key(s) [{shown}]; known keys: {sorted(known)}")
    cfg = RulesConfig.__new__(RulesConfig)
    defaults = RulesConfig()
    for f in fields(RulesConfig):
        object.__setattr__(cfg, f.name, data.get(f.name, getattr(defaults, f.name)))
    _normalize(cfg)
    _imply(cfg, set(data) if stated is None else stated)
    _validate(cfg, where)
    return cfg


_PRESET_NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9_-]{0,63}")
_MAX_RULES_BYTES = 64 * 1024  # a rules file is a few hundred bytes


def presets_dir() -> Path:
    """Folder of the rules presets: the package data ``spades_env/presets`` (read through
    ``importlib.resources``, so it works from an installed wheel). ``configs/rules/*.yaml`` are
    the same files for readers of the repository; ``tests/test_packaging.py`` checks that the
    two agree file by file (``make presets`` copies configs/rules into the package)."""
    return resources.files("spades_env") / "presets"  # a Path for any file-system install


def preset_names() -> list[str]:
    """Names of the shipped presets."""
    return sorted(p.name[: -len(".yaml")] for p in presets_dir().iterdir() if p.name.endswith(".yaml"))


def load_rules(spec: str | Path | dict[str, Any] | RulesConfig | None = None) -> RulesConfig:
    """Rules from a preset name, a YAML file path, a dict, or a config (``None``: tournament).

    A rules file must hold a mapping of rule names to values: an empty file, a key given
    twice, bytes that are not UTF-8 or anything that is not YAML is a :class:`RulesError`
    naming the file."""
    if spec is None:
        return RulesConfig()
    if isinstance(spec, RulesConfig):
        return spec
    if isinstance(spec, dict):
        return rules_from_dict(spec)
    if not isinstance(spec, (str, Path)):
        raise RulesError(
            "rules must be a preset name, a YAML file path, a dict of rules or a RulesConfig, "
            f"got {brief(spec)} ({type(spec).__name__})"
        )
    if isinstance(spec, str) and not spec.strip():
        raise RulesError(f"rules must be a preset name or a YAML file path, got {spec!r}")
    path = Path(spec)
    if not path.suffix:
        # a preset name is a bare name: '../x', 'a/b' or '~x' never reach outside the presets
        spec = str(spec)
        if not _PRESET_NAME.fullmatch(spec) or spec not in preset_names():
            raise RulesError(
                f"unknown rules preset {brief(spec)}; presets: {preset_names()} (a rules file "
                "is a path ending in .yaml)"
            )
        path = presets_dir() / f"{spec}.yaml"
    where = str(path)
    text = read_text_bounded(path, "rules file", RulesError, limit=_MAX_RULES_BYTES)
    data = parse_yaml(text, where, RulesError)
    if data is None:
        raise RulesError(
            f"{where}: the rules file is empty; give at least one rule (e.g. 'target_score: 500'), "
            "or use the preset 'tournament' for the defaults"
        )
    if isinstance(data, dict):
        data.setdefault("name", path.stem)
    return rules_from_dict(data, where=where)


def rules_with(changes: dict[str, Any], base: str | Path | dict[str, Any] | RulesConfig | None = None) -> RulesConfig:
    """A variant: ``base`` (a preset name, YAML path, dict or config; default tournament) with
    the rule keys of ``changes`` replaced, e.g. ``rules_with({"blind_nil": False,
    "blind_nil_exchange": 0})``. The one reader of rule variants (training's ``rules_family``,
    ``spades matrix --rules``); an unknown key is a :class:`RulesError` listing the known keys."""
    if not isinstance(changes, dict):
        raise RulesError(f"rule changes must be a mapping of rule keys to values, got {brief(changes)}")
    return rules_from_dict({**load_rules(base).to_dict(), **changes}, stated=set(changes))


RULE_VARIANTS: dict[str, dict[str, Any]] = {
    "no_blind": {"blind_nil": False, "blind_nil_exchange": 0},
}
"""Named rule variants on the tournament rules (a ``--rules`` item, :func:`rules_item`)."""


def rules_item(item: str) -> tuple[str, RulesConfig]:
    """(label, rules) of one command-line ``--rules`` item: a preset name, a rules YAML path, a
    name of :data:`RULE_VARIANTS`, or a JSON object of rule keys on the tournament rules
    (``'{"target_score": 300}'``), optionally labelled ``label=...``
    (``'short={"target_score": 300}'``). :class:`InputError` naming the item if it is bad."""
    label, eq, text = item.partition("=")
    if not eq or not label.isidentifier():
        label, text = "", item
    text = text.strip()
    if text.startswith("{"):
        changes = parse_json(text, f"--rules {brief(item, 200)}", InputError)
        if not isinstance(changes, dict):
            raise InputError(f"--rules {item!r}: not a JSON object")
        try:
            rules = rules_with(changes)
        except ValueError as exc:
            raise InputError(f"--rules {item!r}: {exc}") from None
        return label or ",".join(f"{k}={v}" for k, v in changes.items()), rules
    try:
        rules = rules_with(RULE_VARIANTS[text]) if text in RULE_VARIANTS else load_rules(text)
    except ValueError as exc:
        raise InputError(f"--rules {item!r}: {exc}") from None
    return label or (Path(text).stem if Path(text).suffix else text), rules
