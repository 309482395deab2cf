"""Scripted baselines, from random to search: every one is a Policy.

=========================  ================================================================
name                       bot
=========================  ================================================================
``random``                 L0: uniformly random legal action
``greedy``                 L1: high cards win while the contract is short, low once made
``heuristic``              L2: expert rules, compiled (counting bids, Blind Nil by expected
                           value from a simulated table, Nil, cover / attack Nil, bags)
``blind``                  the exploit test: L2's play and a Blind Nil whenever the rules
                           offer one and the partner has not bid a Nil
``search``                 L3: determinized (PIMC) search over the card play; options
                           ``budget`` (seconds per decision), ``samples`` (deals per
                           decision), ``max_samples``, ``noise`` (per mille of random
                           playout cards, default 100), ``blind_samples`` (deals for the
                           Blind Nil choice, default 48), ``exchange_samples`` (deals per
                           card to pass, default 12), ``bid_samples`` (deals per
                           candidate bid, default 24), ``playout_l2`` (1: play the hand
                           out with compiled L2 seats instead of the fast playout policy),
                           ``card_search`` (0: L2's cards), ``bid_infer`` (1: a seat that
                           bid Nil is dealt high cards at reduced odds; default 0),
                           e.g. ``search:budget=0.1``,
                           ``search:samples=20``
``cheat``                  L4: the same search on the true deal; evaluation only, NOT a
                           legal policy: it must be bound to the game (see CheatingPolicy)
``netsearch``              PIMC over deals weighted by the network's inference, played out
                           by the network, valued by the game score (options in
                           :mod:`~spades_env.policies.bots.netsearch`), e.g.
                           ``netsearch:samples=16,net=spades4_net_v1``
=========================  ================================================================

Options follow the name after a colon, comma separated: ``"search:budget=0.5,samples=64"``.
Each option is given once, with a value of its type in its range: ``budget`` a finite number
of seconds, more than 0 and at most 3600; ``samples`` and ``max_samples`` integers 1..1000000;
``noise`` an integer 0..1000; ``playout_l2``, ``card_search`` and ``bid_infer`` 0 or 1; any other count 1..1000000 (``inf``, ``nan``, ``2.5`` samples are refused with
:class:`PolicyNameError`).
"""

from __future__ import annotations

from typing import Any

from spades_env.core.rules import RulesConfig
from spades_env.core.validate import check_float, check_int
from spades_env.policies.base import Policy, PolicyNameError, RandomPolicy

POLICY_NAMES = ("random", "greedy", "heuristic", "blind", "search", "cheat", "netsearch")
_SEARCH_OPTIONS: dict[str, type] = {
    "budget": float,
    "samples": int,
    "max_samples": int,
    "noise": int,
    "blind_samples": int,
    "exchange_samples": int,
    "playout_l2": int,
    "bid_samples": int,
    "card_search": int,
    "bid_infer": int,
}
_OPTIONS: dict[str, dict[str, type]] = {
    "random": {},
    "greedy": {},
    "heuristic": {},
    "blind": {},
    "search": dict(_SEARCH_OPTIONS),
    "cheat": dict(_SEARCH_OPTIONS),
    "netsearch": {},  # its own options: spades_env.policies.bots.netsearch.OPTIONS
}


# (low, high) of each option; a float option's low bound is excluded (budget > 0).
_RANGES: dict[str, tuple[float, float]] = {
    "budget": (0.0, 3600.0),
    "samples": (1, 1_000_000),
    "max_samples": (1, 1_000_000),
    "noise": (0, 1000),
    "playout_l2": (0, 1),
    "card_search": (0, 1),
    "bid_infer": (0, 1),
}
_INT_RANGE = (1, 1_000_000)  # any other integer option (a count of samples)


def parse_policy_name(name: str) -> tuple[str, dict[str, Any]]:
    """Split ``"search:budget=0.1,samples=20"`` into ``("search", {"budget": 0.1, ...})``."""
    if not isinstance(name, str) or not name.strip():
        raise PolicyNameError(f"policy name must be a non-empty string, got {name!r}")
    base, _, opts = name.strip().partition(":")
    base = base.strip().lower()
    if base not in _OPTIONS:
        raise PolicyNameError(f"unknown policy {base!r} in {name!r}; known: {list(POLICY_NAMES)}")
    if base == "netsearch":
        from spades_env.policies.bots.netsearch import parse_options

        return base, parse_options(name, opts)
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
            if key in out:
                raise PolicyNameError(f"policy {name!r}: option {key!r} is given twice")
            try:
                value = kinds[key](val.strip())
            except ValueError:
                raise PolicyNameError(
                    f"policy {name!r}: option {key}={val.strip()!r} is not a valid {kinds[key].__name__}"
                ) from None
            if value <= 0 and key not in ("noise", "playout_l2", "card_search", "bid_infer"):
                raise PolicyNameError(f"policy {name!r}: option {key} must be positive, got {value}")
            lo, hi = _RANGES.get(key, _INT_RANGE)
            try:
                if kinds[key] is float:
                    value = check_float(value, f"policy {name!r}: option {key}", lo, hi, lo_open=True)
                else:
                    value = check_int(value, f"policy {name!r}: option {key}", int(lo), int(hi))
            except ValueError as exc:
                raise PolicyNameError(str(exc)) from None
            out[key] = value
    return base, out


def make_policy(name: str, seed: int | None = None, rules: RulesConfig | str | dict | None = None) -> Policy:
    """A policy from its registry name (see the module docstring), with its own seed."""
    base, opts = parse_policy_name(name)
    if base == "random":
        return RandomPolicy(seed)
    if base == "greedy":
        from spades_env.policies.bots.greedy import GreedyPolicy

        return GreedyPolicy(rules, seed=seed)
    if base == "heuristic":
        from spades_env.policies.bots.heuristic import HeuristicPolicy

        return HeuristicPolicy(rules, seed=seed)
    if base == "blind":
        from spades_env.policies.bots.heuristic import BlindNilPolicy

        return BlindNilPolicy(rules, seed=seed)
    if base == "netsearch":
        from spades_env.policies.bots.netsearch import NetSearchPolicy

        return NetSearchPolicy(rules, seed=seed, **opts)
    from spades_env.policies.bots.search import CheatingPolicy, SearchPolicy

    cls = SearchPolicy if base == "search" else CheatingPolicy
    return cls(rules, seed=seed, **opts)


def needs_true_state(policy: object) -> bool:
    """Whether ``policy`` is a cheating evaluation bot that must be bound to the true state
    (``policy.bind(lambda: state_row)``) before it acts. Such a policy is not a legal Policy."""
    from spades_env.policies.bots.search import CheatingPolicy

    return isinstance(policy, CheatingPolicy)


__all__ = ["POLICY_NAMES", "PolicyNameError", "make_policy", "needs_true_state", "parse_policy_name"]
