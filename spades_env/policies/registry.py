"""The one resolver of policy and opponent specs, for every front-end and tool.

A *policy spec* is a bots registry name (``"random"``, ``"heuristic"``,
``"search:budget=0.1"``), a shipped agent id (``"spades4_v1"``), the path of an agent or
checkpoint folder (:func:`spades_env.policies.agents.load_agent`), a name a registered loader
takes (:func:`register_policy_loader`), or a picklable factory ``f(seed, rules) -> Policy``.
:func:`load` is the public entry point.
An *opponent spec* (``Spades-v0``, the vector adapters) is a Policy or a policy spec for every
other seat, a ``{seat: ...}`` dict of them, or ``None`` (seeded
:class:`~spades_env.policies.base.RandomPolicy` players).

* :func:`load` / :func:`resolve_policy` / :func:`check_policy_name`: one spec to a Policy / refuse a bad one
  before any play (the arena, ``spades play``, ``spades eval`` ...).
* :func:`opponent_specs` / :func:`resolve_opponents`: an opponent spec to ``{seat: spec}``
  (checked at construction) and then to ``{seat: Policy}`` with per-seat seeds.

The bots registry and the agents are imported on first use only (``import spades_env`` stays
light); nothing here imports torch.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any

import numpy as np

from spades_env.core.rules import RulesConfig
from spades_env.core.validate import InputError, InputTypeError, check_seed
from spades_env.policies.base import Policy, RandomPolicy

PolicyFactory = Callable[[int, RulesConfig], Policy]
PolicySpec = str | PolicyFactory
OpponentSpec = Policy | str | PolicyFactory | Mapping[int, Any] | None

# Loaders for policy names that are not bots, tried in order: (predicate(name), loader(name,
# seed, rules)). Checkpoint loading registers itself here (see ``register_policy_loader``).
_LOADERS: list[tuple[Callable[[str], bool], Callable[[str, int | None, RulesConfig], Policy]]] = []


def register_policy_loader(
    predicate: Callable[[str], bool], loader: Callable[[str, int | None, RulesConfig], Policy]
) -> None:
    """Let names for which ``predicate(name)`` holds (e.g. checkpoint paths) be loaded by
    ``loader(name, seed, rules)``. Must be registered in every worker process too (do it at
    import time of the module that defines the loader)."""
    _LOADERS.append((predicate, loader))


def _bot_names() -> tuple[str, ...]:
    from spades_env.policies.bots import POLICY_NAMES

    return POLICY_NAMES


def _unknown(spec: str) -> ValueError:
    from spades_env.policies.agents import agent_ids
    from spades_env.policies.bots import PolicyNameError

    if "/" in spec or spec.endswith((".json", ".safetensors")):
        return InputError(f"{spec}: no such checkpoint or agent folder (the path does not exist)")
    return PolicyNameError(
        f"unknown policy {spec!r}: not a bot ({', '.join(_bot_names())}), a shipped agent "
        f"({', '.join(agent_ids()) or 'none'}) or an existing agent or checkpoint folder"
    )


def _kind(spec: str) -> str:
    """What a policy name names: 'loader' (a registered loader), 'bot', 'agent' (a shipped id),
    'path' (an existing folder or file) or 'unknown'."""
    from spades_env.policies.agents import is_agent_id

    if any(predicate(spec) for predicate, _ in _LOADERS):
        return "loader"
    if spec.split(":", 1)[0].strip().lower() in _bot_names():
        return "bot"
    if is_agent_id(spec):
        return "agent"
    if Path(spec).exists():
        return "path"
    return "unknown"


def resolve_policy(spec: PolicySpec, seed: int | None, rules: RulesConfig) -> Policy:
    """A Policy from a name (a bot, a shipped agent id, an agent or checkpoint folder) or a
    factory ``f(seed, rules)``; ``seed`` is ``None`` or a non-negative integer."""
    seed = check_seed(seed)
    if callable(spec):
        return spec(seed, rules)
    if not isinstance(spec, str) or not spec:
        raise InputError(f"a policy must be a name or a factory f(seed, rules), got {spec!r}")
    kind = _kind(spec)
    if kind == "loader":
        loader = next(load for predicate, load in _LOADERS if predicate(spec))
        return loader(spec, seed, rules)
    if kind == "bot":
        from spades_env.policies.bots import make_policy

        return make_policy(spec, seed=seed, rules=rules)
    if kind in ("agent", "path"):
        from spades_env.policies.agents import load_agent

        return load_agent(spec, seed=seed, rules=rules)
    raise _unknown(spec)


def check_policy_name(spec: PolicySpec) -> None:
    """Refuse, before any play, a policy spec that :func:`resolve_policy` could never load: a
    non-string, an unknown name, bad bot options (``PolicyNameError``). Nothing is loaded (an
    agent's files are checked when it loads)."""
    if callable(spec):
        return
    if not isinstance(spec, str) or not spec.strip():
        raise InputError(f"a policy must be a non-empty name or a factory f(seed, rules), got {spec!r}")
    kind = _kind(spec)
    if kind == "bot":
        from spades_env.policies.bots import parse_policy_name

        parse_policy_name(spec)
    elif kind == "unknown":
        raise _unknown(spec)


def opponent_specs(opponents: OpponentSpec, seats: Sequence[int]) -> dict[int, Any]:
    """``{seat: spec}`` for each of ``seats`` from an opponent spec, checked now (a missing
    seat, a wrong type or a bad name fails at construction, not at the first reset): each spec
    is a Policy, a policy spec (name or factory) or ``None`` (a random player)."""
    if isinstance(opponents, Mapping):
        missing = [s for s in seats if s not in opponents]
        if missing:
            raise InputError(
                f"opponents has no Policy for seat(s) {missing}: its keys are {sorted(opponents, key=repr)!r}, "
                f"the opponents' seats {list(seats)}"
            )
        specs = {s: opponents[s] for s in seats}
    else:
        specs = {s: opponents for s in seats}
    for s, spec in specs.items():
        if spec is None or isinstance(spec, Policy):
            continue
        if isinstance(spec, str) or callable(spec):
            check_policy_name(spec)
            continue
        raise InputTypeError(
            f"opponent for seat {s} must be a Policy, a bot name or None, got {type(spec).__name__}"
        )
    return specs


def _int_seed(seed: Any) -> int | None:
    if seed is None or isinstance(seed, (int, np.integer)):
        return None if seed is None else int(seed)
    if isinstance(seed, np.random.SeedSequence):
        return int(seed.generate_state(1, np.uint64)[0] >> np.uint64(2))
    if isinstance(seed, np.random.Generator):
        return int(seed.integers(2**62))
    raise InputError(f"a seat seed must be an int, a SeedSequence or a Generator, got {seed!r}")


def resolve_opponents(
    specs: Mapping[int, Any], rules: RulesConfig, seeds: Mapping[int, Any]
) -> dict[int, Policy]:
    """``{seat: Policy}`` from :func:`opponent_specs`' result: a Policy as given, ``None`` a
    :class:`~spades_env.policies.base.RandomPolicy` from ``seeds[seat]`` (an int, a ``SeedSequence``
    or a ``Generator``), a name or factory :func:`resolve_policy` with that seed."""
    out: dict[int, Policy] = {}
    for s, spec in specs.items():
        if spec is None:
            seed = seeds[s]
            out[s] = RandomPolicy(
                np.random.default_rng(seed) if isinstance(seed, np.random.SeedSequence) else seed
            )
        elif isinstance(spec, Policy) and not isinstance(spec, str):
            out[s] = spec
        else:
            out[s] = resolve_policy(spec, _int_seed(seeds[s]), rules)
    return out


__all__ = [
    "OpponentSpec",
    "PolicyFactory",
    "PolicySpec",
    "check_policy_name",
    "load",
    "opponent_specs",
    "register_policy_loader",
    "resolve_opponents",
    "resolve_policy",
]


def load(spec: PolicySpec, *, rules: RulesConfig | str | None = None, seed: int | None = None) -> Policy:
    """A Policy from a bot name (``"random"``, ``"heuristic"``, ``"search:samples=100"``), a
    shipped agent id, a checkpoint path, or a factory ``f(seed, rules)``; ``rules`` (a preset
    name, a RulesConfig; default the tournament rules) are the rules it will play under;
    ``seed`` is ``None`` (fresh entropy) or a non-negative integer (``InputError`` otherwise)."""
    from spades_env.core.rules import load_rules

    return resolve_policy(spec, seed, load_rules(rules))
