"""A family of rules for training: one policy for many rule settings.

A training config (``training.ppo`` and ``training.bc``) may name ``rules_family``: a list of
rules, each game of the batched engine plays one of them, drawn by its seed with
``rules_weights`` (default equal). Each entry is one of

* a preset name (``tournament``, ``house``, ``openspiel``, ...) or a rules YAML path;
* a mapping of rule keys (``{blind_nil: false, blind_nil_exchange: 0}``) applied on top of
  ``base`` (a preset name or path, default ``tournament``); its ``name`` (a rules key) also
  names it in logs and evaluation keys, e.g. ``{base: house, target_score: 300, name: house300}``.

``max_hands`` (the config's hand cap override) applies to every member. Every member must have
the same number of players. Problems are :class:`FamilyError` messages that say which entry.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

from spades_env.core.rules import RulesConfig, load_rules, rules_with

RESERVED = ("base",)


class FamilyError(ValueError):
    """A bad rules family entry or weights (the message says which entry)."""


def entry_label(entry: Any) -> str:
    """A short name of a family entry for logs: the preset, the file's stem, or ``name``, or
    ``base`` + the changed keys (``tournament:blind_nil=False,blind_nil_exchange=0``)."""
    if isinstance(entry, RulesConfig):
        return "rules"
    if isinstance(entry, (str, Path)):
        p = Path(entry)
        return p.stem if p.suffix else str(entry)
    if isinstance(entry, dict):
        if entry.get("name"):
            return str(entry["name"])
        base = entry_label(entry.get("base", "tournament"))
        changes = ",".join(f"{k}={v}" for k, v in entry.items() if k not in RESERVED and k != "name")
        return f"{base}:{changes}" if changes else base
    return repr(entry)


def load_entry(entry: Any, max_hands: int = -1) -> RulesConfig:
    """The rules of one family entry (``max_hands >= 0`` overrides the hand cap)."""
    if isinstance(entry, dict):
        changes = {k: v for k, v in entry.items() if k not in RESERVED}
        rules = rules_with(changes, entry.get("base", "tournament"))
    elif isinstance(entry, (str, Path, RulesConfig)):
        rules = load_rules(entry)
    else:
        raise FamilyError(f"an entry must be a preset name, a YAML path or a mapping, got {entry!r}")
    return rules.replace(max_hands=max_hands) if max_hands >= 0 else rules


def load_family(entries: Sequence[Any], max_hands: int = -1) -> list[RulesConfig]:
    """Every entry's rules; a FamilyError names the entry (index and label) that is bad."""
    if isinstance(entries, (str, dict)) or not entries:
        raise FamilyError("must be a non-empty list of rules (preset names, YAML paths or mappings)")
    out = []
    for k, e in enumerate(entries):
        try:
            out.append(load_entry(e, max_hands))
        except (ValueError, OSError, TypeError) as exc:
            raise FamilyError(f"entry {k} ({entry_label(e)}): {exc}") from None
    players = sorted({r.num_players for r in out})
    if len(players) > 1:
        counts = ", ".join(f"{entry_label(e)}: {r.num_players}" for e, r in zip(entries, out, strict=True))
        raise FamilyError(f"every member must have the same number of players ({counts})")
    return out


def check_weights(weights: Sequence[float], n: int) -> list[float] | None:
    """``weights`` as floats (``[]``: equal weights, None returned), or a FamilyError."""
    if not weights:
        return None
    if len(weights) != n:
        raise FamilyError(f"needs one weight per rules_family entry ({n}), got {len(weights)}")
    w = [float(x) for x in weights]
    if any(not (x >= 0.0) or x == float("inf") for x in w) or sum(w) <= 0:
        raise FamilyError(f"weights must be non-negative finite numbers, not all 0, got {list(weights)}")
    return w


def validate_family(
    entries: Sequence[Any], weights: Sequence[float], max_hands: int = -1
) -> tuple[str, str] | None:
    """The first (config key, problem) of a ``rules_family`` / ``rules_weights`` pair, or None."""
    if not entries:
        if weights:
            return "rules_weights", "given without rules_family"
        return None
    try:
        load_family(entries, max_hands)
    except FamilyError as exc:
        return "rules_family", str(exc)
    try:
        check_weights(weights, len(entries))
    except FamilyError as exc:
        return "rules_weights", str(exc)
    return None


__all__ = ["FamilyError", "check_weights", "entry_label", "load_entry", "load_family", "validate_family"]
