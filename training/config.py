"""Training configs: YAML files in ``configs/train/`` loaded into frozen dataclasses.

Every field of the dataclass is a key of the file; a missing key keeps its default. An unknown
key, a value of the wrong type or one out of range raises :class:`ConfigError` naming the key
and the file. ``key=value`` overrides (from the command line) are parsed as YAML scalars and
checked the same way.
"""

from __future__ import annotations

import dataclasses
import math
import reprlib
import types
import typing
from pathlib import Path
from typing import Any, TypeVar

from spades_env.core.files import parse_yaml, read_yaml_file
from spades_env.core.validate import SpadesError

T = TypeVar("T")
MAX_INT = 2**63 - 1
"""Largest integer a config key takes (a longer one is refused, not formatted)."""


def _digits(value: int) -> str:
    try:
        return str(len(str(abs(value))))
    except ValueError:  # past Python's 4300-digit limit
        return f"about {int(abs(value).bit_length() * 0.30103) + 1}"


def _brief(value: Any, width: int = 80) -> str:
    """``repr(value)``, cut to ``width`` characters: an error message never formats an
    unbounded value."""
    text = reprlib.repr(value) if not isinstance(value, int) or abs(value) < 10**60 else "a huge integer"
    return text if len(text) <= width else text[: width - 3] + "..."


class ConfigError(ValueError):
    """A training config with an unknown key or a bad value (the message names both)."""


def read_config_yaml(path: Path, what: str = "training config") -> Any:
    """The YAML value of a config file, read as every file of the package is: regular files
    only, bounded in size, aliases and integers bounded (``spades_env.core.files``); a
    ConfigError naming the file otherwise."""
    try:
        return read_yaml_file(path, what)
    except SpadesError as exc:
        raise ConfigError(str(exc)) from None


def _check(name: str, tp: Any, value: Any, where: str) -> Any:
    """``value`` converted to the field type ``tp``, or a ConfigError."""
    origin = typing.get_origin(tp)
    if origin in (typing.Union, types.UnionType):
        args = typing.get_args(tp)
        if value is None and type(None) in args:
            return None
        errors = []
        for a in args:
            if a is type(None):
                continue
            try:
                return _check(name, a, value, where)
            except ConfigError as exc:
                errors.append(str(exc))
        raise ConfigError(errors[0] if errors else f"{where}: bad value {_brief(value)} for key {name!r}")
    if origin is tuple:
        args = typing.get_args(tp)
        if isinstance(value, str) or not isinstance(value, (list, tuple)):
            raise ConfigError(f"{where}: key {name!r} must be a list, got {_brief(value)}")
        inner = args[0] if args else Any
        return tuple(_check(name, inner, v, where) for v in value)
    if tp is Any:
        return value
    if tp is bool:
        if not isinstance(value, bool):
            raise ConfigError(f"{where}: key {name!r} must be true or false, got {_brief(value)}")
        return value
    if tp is int:
        if isinstance(value, bool) or not isinstance(value, int):
            raise ConfigError(f"{where}: key {name!r} must be an integer, got {_brief(value)}")
        if abs(value) > MAX_INT:
            raise ConfigError(f"{where}: key {name!r} is out of range (an integer of {_digits(value)} digits)")
        return value
    if tp is float:
        if isinstance(value, str):  # YAML 1.1 reads "1e-4" (no dot) as a string
            try:
                value = float(value)
            except ValueError:
                pass
        if isinstance(value, bool) or not isinstance(value, (int, float)):
            raise ConfigError(f"{where}: key {name!r} must be a number, got {_brief(value)}")
        if isinstance(value, int) and abs(value) > MAX_INT:
            raise ConfigError(f"{where}: key {name!r} is out of range (an integer of {_digits(value)} digits)")
        if not math.isfinite(value):
            raise ConfigError(f"{where}: key {name!r} must be a finite number, got {value!r}")
        return float(value)
    if tp is str:
        if not isinstance(value, str):
            raise ConfigError(f"{where}: key {name!r} must be a string, got {_brief(value)}")
        return value
    raise ConfigError(f"{where}: key {name!r} has an unsupported type {tp!r}")


def parse_overrides(overrides: list[str] | None) -> dict[str, Any]:
    """``["lr=1e-4", "hidden=[128,128]"]`` -> ``{"lr": 1e-4, "hidden": [128, 128]}`` (YAML values)."""
    out: dict[str, Any] = {}
    for item in overrides or []:
        key, eq, text = item.partition("=")
        if not eq or not key.strip():
            raise ConfigError(f"override {_brief(item)} is not key=value")
        try:
            out[key.strip()] = parse_yaml(text, f"override {_brief(item)}") if text.strip() else ""
        except SpadesError as exc:
            raise ConfigError(str(exc)) from None
    return out


def build_config(cls: type[T], data: dict[str, Any], where: str) -> T:
    """A ``cls`` instance from a dict, checking keys, types and the class's ``validate()``."""
    if not isinstance(data, dict):
        raise ConfigError(f"{where}: a training config must be a mapping of keys to values")
    hints = typing.get_type_hints(cls)
    names = [f.name for f in dataclasses.fields(cls)]  # type: ignore[arg-type]
    values = {}
    for key, value in data.items():
        if key not in names:
            raise ConfigError(f"{where}: unknown key {key!r}; known keys: {', '.join(names)}")
        values[key] = _check(key, hints[key], value, where)
    obj = cls(**values)
    problem = getattr(obj, "validate", lambda: None)()
    if problem:
        key, msg = problem
        raise ConfigError(f"{where}: key {key!r}: {msg} (got {_brief(getattr(obj, key))})")
    return obj


def load_config(cls: type[T], path: str | Path | None = None, overrides: list[str] | None = None) -> T:
    """Load ``cls`` from a YAML file (``None``: defaults) and apply ``key=value`` overrides."""
    data: dict[str, Any] = {}
    where = "defaults"
    if path is not None:
        p = Path(path)
        where = str(p)
        if not p.is_file():
            raise ConfigError(f"{where}: no such config file")
        loaded = read_config_yaml(p)
        if loaded is None:
            loaded = {}
        if not isinstance(loaded, dict):
            raise ConfigError(f"{where}: a training config must be a mapping of keys to values")
        data.update(loaded)
    ov = parse_overrides(overrides)
    if ov:
        build_config(cls, {**data}, where)  # errors in the file itself name the file
        data.update(ov)
        shown = " ".join(o if len(o) <= 80 else o[:77] + "..." for o in overrides or [])
        where = f"{where} with overrides {shown}"
    return build_config(cls, data, where)


def config_to_dict(cfg: Any) -> dict[str, Any]:
    """A plain JSON/YAML-ready dict of a config dataclass (tuples as lists)."""
    out = {}
    for f in dataclasses.fields(cfg):
        v = getattr(cfg, f.name)
        out[f.name] = list(v) if isinstance(v, tuple) else v
    return out
