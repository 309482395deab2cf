"""Rules a network never trained under: a warning when it is asked to play them.

A checkpoint's ``meta.json`` records the rules it was trained on (``rules_family``, or the one
``rules``). A network reads the rules from its observation, but a setting it never met in
training is a guess: every four-player network before ``spades4_net_v5`` met Blind Nil only with
the 3-card exchange and, without one, still declares it every hand (docs page "Agents"). So
loading a network for rules with a setting that no training rule set had (compared where the
setting means something: :func:`~spades_env.core.rules.settings_in_effect`) warns with
:class:`UntrainedRulesWarning`, naming each such setting and the values training used. It
is a note, not an error: many such settings change little (its card's rows say which were
measured). Silence it with ``warnings.filterwarnings("ignore", category=UntrainedRulesWarning)``.
"""

from __future__ import annotations

import functools
import json
import warnings
from typing import Any

from spades_env.core.rules import RulesConfig, RulesError, load_rules, rules_from_dict, settings_in_effect


class UntrainedRulesWarning(UserWarning):
    """A network asked to play under a rules setting that none of its training rules had."""


def _recorded_family(meta: dict[str, Any]) -> list[Any]:
    return meta.get("rules_family") or ([meta["rules"]] if isinstance(meta.get("rules"), dict) else [])


def trained_rules(meta: dict[str, Any]) -> list[RulesConfig]:
    """The rule sets a checkpoint was trained on, from its ``meta.json`` (``rules_family``,
    else ``rules``); empty when it records none or they no longer load."""
    out = []
    for member in _recorded_family(meta):
        try:
            out.append(rules_from_dict(member, where="meta.json rules"))
        except RulesError:
            return []
    return out


@functools.lru_cache(maxsize=64)
def _trained_values(family_json: str) -> dict[str, tuple[Any, ...]]:
    """Each setting's values over the training rules (JSON of ``_recorded_family``), where it
    means something; cached: every seat of every game the arena plays loads its network."""
    seen: dict[str, list[Any]] = {}
    for member in trained_rules({"rules_family": json.loads(family_json)}):
        for key, value in settings_in_effect(member).items():
            if value not in seen.setdefault(key, []):
                seen[key].append(value)
    return {key: tuple(values) for key, values in seen.items()}


def untrained_settings(meta: dict[str, Any], rules: RulesConfig | str | dict) -> dict[str, tuple[Any, list[Any]]]:
    """Each setting of ``rules`` that none of the checkpoint's training rules had, where it
    means something: ``{key: (value, [the values training used])}`` (an empty list: the setting
    never meant anything in training, e.g. a Blind Nil setting when training had no Blind Nil).
    Empty when the rules are covered or the checkpoint records no training rules."""
    family = _recorded_family(meta)
    if not family:
        return {}
    seen = _trained_values(json.dumps(family, sort_keys=True))
    if not seen:  # the recorded rules no longer load: no claim
        return {}
    out = {}
    for key, value in settings_in_effect(load_rules(rules)).items():
        if value not in seen.get(key, ()):
            out[key] = (value, sorted(seen.get(key, ())))
    return out


def warn_untrained(name: str, meta: dict[str, Any], rules: RulesConfig | str | dict) -> None:
    """Warn (:class:`UntrainedRulesWarning`) if ``rules`` have a setting that the network
    ``name`` never trained under (:func:`untrained_settings`)."""
    missing = untrained_settings(meta, rules)
    if not missing:
        return
    parts = []
    for key, (value, used) in missing.items():
        was = ", ".join(json.dumps(v) for v in used) if used else "never in effect"
        parts.append(f"{key}={json.dumps(value)} (trained: {was})")
    warnings.warn(
        f"{name} never trained with {'; '.join(parts)}: its play under these rules is measured "
        "only where its card says",
        UntrainedRulesWarning,
        stacklevel=2,
    )


__all__ = ["UntrainedRulesWarning", "trained_rules", "untrained_settings", "warn_untrained"]
