"""Rules of a Spades variant: a frozen, validated config, and its named presets.

Presets live in ``configs/rules/*.yaml`` (``tournament`` is the default, ``openspiel`` matches
OpenSpiel's spades scoring, ``two_player`` is the two-player game), shipped inside the package
as ``spades_env/presets/*.yaml`` (read with ``importlib.resources``). An unknown key or a bad
value raises :class:`RulesError` naming the key (and the file, when loaded from one).
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass, fields
from importlib import resources
from pathlib import Path
from typing import Any

import numpy as np

from spades_env.core import layout as L
from spades_env.core.validate import SpadesError, is_int, read_text_file


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
        """A copy with some fields changed (validated)."""
        return rules_from_dict({**self.to_dict(), **changes})


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


def _validate(cfg: RulesConfig, where: str) -> None:
    for f in fields(cfg):
        value = getattr(cfg, f.name)
        if f.type in ("bool", bool):
            if not isinstance(value, bool):
                raise RulesError(f"{where}: rule '{f.name}' must be true or false, got {value!r}")
        elif f.type in ("int", int):
            if not is_int(value):
                raise RulesError(f"{where}: rule '{f.name}' must be an integer, got {value!r}")
            lo, hi = _BOUNDS[f.name]
            if not lo <= value <= hi:
                raise RulesError(f"{where}: rule '{f.name}' = {value} is out of range {lo}..{hi}")
        elif not isinstance(value, str):
            raise RulesError(f"{where}: rule '{f.name}' must be a string, got {value!r}")
    if cfg.num_players not in (2, 4):
        raise RulesError(f"{where}: rule 'num_players' must be 2 or 4, got {cfg.num_players}")
    if cfg.match_games % 2 == 0:
        raise RulesError(f"{where}: rule 'match_games' must be odd (best of N), got {cfg.match_games}")
    if cfg.num_players == 2 and cfg.blind_nil_exchange != 0:
        raise RulesError(
            f"{where}: rule 'blind_nil_exchange' must be 0 in the two-player game "
            f"(a player has no partner to exchange with), got {cfg.blind_nil_exchange}"
        )
    if cfg.first_dealer >= cfg.num_players:
        raise RulesError(
            f"{where}: rule 'first_dealer' = {cfg.first_dealer} is not a seat of a {cfg.num_players}-player game"
        )


def rules_from_dict(data: dict[str, Any], where: str = "rules") -> RulesConfig:
    """Build a validated config from a dict; unknown keys are an error naming them."""
    if not isinstance(data, dict):
        raise RulesError(
            f"{where}: rules must be a mapping of rule names to values, got {type(data).__name__}"
        )
    known = {f.name for f in fields(RulesConfig)}
    unknown = sorted(set(data) - known, key=repr)
    if unknown:
        raise RulesError(f"{where}: unknown rule key(s) {unknown}; known keys: {sorted(known)}")
    cfg = RulesConfig.__new__(RulesConfig)
    defaults = RulesConfig()
    for f in fields(RulesConfig):
        object.__setattr__(cfg, f.name, data.get(f.name, getattr(defaults, f.name)))
    _normalize(cfg)
    _validate(cfg, where)
    return cfg


def _yaml_loader():
    """A safe YAML loader that refuses a key given twice in one mapping."""
    import yaml

    class UniqueKeyLoader(yaml.SafeLoader):
        def construct_mapping(self, node, deep=False):  # type: ignore[no-untyped-def]
            if isinstance(node, yaml.MappingNode):
                seen: set[Any] = set()
                for key_node, _ in node.value:
                    key = self.construct_object(key_node, deep=deep)
                    try:
                        dup = key in seen
                        seen.add(key)
                    except TypeError:  # an unhashable key: the base class says so
                        break
                    if dup:
                        raise yaml.constructor.ConstructorError(
                            "while constructing a mapping",
                            node.start_mark,
                            f"found duplicate key {key!r}",
                            key_node.start_mark,
                        )
            return super().construct_mapping(node, deep=deep)

    return UniqueKeyLoader


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
            f"got {spec!r} ({type(spec).__name__})"
        )
    if isinstance(spec, str) and not spec.strip():
        raise RulesError(f"rules must be a preset name or a YAML file path, got {spec!r}")
    path = Path(spec)
    if not path.suffix:
        path = presets_dir() / f"{spec}.yaml"
        if not path.exists():
            raise RulesError(f"unknown rules preset {str(spec)!r}; presets: {preset_names()}")
    if not path.exists():
        raise RulesError(f"rules file {str(path)!r} does not exist")
    import yaml

    text = read_text_file(path, "rules file", RulesError)
    try:
        data = yaml.load(text, Loader=_yaml_loader())  # noqa: S506 (a SafeLoader subclass)
    except yaml.YAMLError as exc:
        raise RulesError(f"{path}: not valid YAML: {' '.join(str(exc).split())}") from None
    except RecursionError:
        raise RulesError(f"{path}: not valid rules YAML: nested too deeply") from None
    if data is None:
        raise RulesError(
            f"{path}: the rules file is empty; give at least one rule (e.g. 'target_score: 500'), "
            "or use the preset 'tournament' for the defaults"
        )
    if isinstance(data, dict):
        data.setdefault("name", path.stem)
    return rules_from_dict(data, where=str(path))


def rules_with(changes: dict[str, Any], base: str | Path | dict[str, Any] | RulesConfig | None = None) -> RulesConfig:
    """A variant: ``base`` (a preset name, YAML path, dict or config; default tournament) with
    the rule keys of ``changes`` replaced, e.g. ``rules_with({"blind_nil": False,
    "blind_nil_exchange": 0})``. The one reader of rule variants (training's ``rules_family``,
    ``spades matrix --rules``); an unknown key is a :class:`RulesError` listing the known keys."""
    if not isinstance(changes, dict):
        raise RulesError(f"rule changes must be a mapping of rule keys to values, got {changes!r}")
    return rules_from_dict({**load_rules(base).to_dict(), **changes})
