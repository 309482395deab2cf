"""Scripted baselines, from random to search: every one is a Policy.

=========================  ================================================================
name                       bot
=========================  ================================================================
``random``                 L0: uniformly random legal action
``greedy``                 L1: high cards win while the contract is short, low once made
``heuristic``              L2: expert rules (counting bids, Nil, cover / attack Nil, bags)
``search``                 L3: determinized (PIMC) search over the card play; options
                           ``budget`` (seconds per decision), ``samples`` (deals per
                           decision), ``max_samples``, ``noise`` (per mille of random
                           playout cards, default 100), e.g. ``search:budget=0.1``,
                           ``search:samples=20``
``cheat``                  L4: the same search on the true deal; evaluation only, NOT a
                           legal policy: it must be bound to the game (see CheatingPolicy)
=========================  ================================================================

Options follow the name after a colon, comma separated: ``"search:budget=0.5,samples=64"``.
"""

from __future__ import annotations

from typing import Any

from spades_env.core.rules import RulesConfig
from spades_env.policy import Policy, RandomPolicy

POLICY_NAMES = ("random", "greedy", "heuristic", "search", "cheat")
_OPTIONS: dict[str, dict[str, type]] = {
    "random": {},
    "greedy": {},
    "heuristic": {},
    "search": {"budget": float, "samples": int, "max_samples": int, "noise": int},
    "cheat": {"budget": float, "samples": int, "max_samples": int, "noise": int},
}


class PolicyNameError(ValueError):
    """A policy name the registry cannot parse."""


def parse_policy_name(name: str) -> tuple[str, dict[str, Any]]:
    """Split ``"search:budget=0.1,samples=20"`` into ``("search", {"budget": 0.1, ...})``."""
    if not isinstance(name, str) or not name.strip():
        raise PolicyNameError(f"policy name must be a non-empty string, got {name!r}")
    base, _, opts = name.strip().partition(":")
    base = base.strip().lower()
    if base not in _OPTIONS:
        raise PolicyNameError(f"unknown policy {base!r} in {name!r}; known: {list(POLICY_NAMES)}")
    kinds = _OPTIONS[base]
    out: dict[str, Any] = {}
    if opts.strip():
        for part in opts.split(","):
            key, eq, val = part.partition("=")
            key = key.strip()
            if not eq:
                raise PolicyNameError(f"policy {name!r}: option {part!r} is not key=value")
            if key not in kinds:
                known = sorted(kinds) or "none"
                raise PolicyNameError(
                    f"policy {name!r}: unknown option {key!r} for {base!r}; options: {known}"
                )
            try:
                value = kinds[key](val.strip())
            except ValueError:
                raise PolicyNameError(
                    f"policy {name!r}: option {key}={val.strip()!r} is not a valid {kinds[key].__name__}"
                ) from None
            if value < 0 or (value == 0 and key != "noise"):
                raise PolicyNameError(f"policy {name!r}: option {key} must be positive, got {value}")
            out[key] = value
    return base, out


def make_policy(name: str, seed: int | None = None, rules: RulesConfig | str | dict | None = None) -> Policy:
    """A policy from its registry name (see the module docstring), with its own seed."""
    base, opts = parse_policy_name(name)
    if base == "random":
        return RandomPolicy(seed)
    if base == "greedy":
        from spades_env.bots.greedy import GreedyPolicy

        return GreedyPolicy(rules, seed=seed)
    if base == "heuristic":
        from spades_env.bots.heuristic import HeuristicPolicy

        return HeuristicPolicy(rules, seed=seed)
    from spades_env.bots.search import CheatingPolicy, SearchPolicy

    cls = SearchPolicy if base == "search" else CheatingPolicy
    return cls(rules, seed=seed, **opts)


def needs_true_state(policy: object) -> bool:
    """Whether ``policy`` is a cheating evaluation bot that must be bound to the true state
    (``policy.bind(lambda: state_row)``) before it acts. Such a policy is not a legal Policy."""
    from spades_env.bots.search import CheatingPolicy

    return isinstance(policy, CheatingPolicy)


__all__ = ["POLICY_NAMES", "PolicyNameError", "make_policy", "needs_true_state", "parse_policy_name"]
