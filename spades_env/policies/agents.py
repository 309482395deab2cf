"""The shipped agents: versioned ids (``spades4_v1``, ``spades4_net_v1``, ``spades2_v1``), one
folder each, loaded by one code path.

An agent folder holds one card (``CARD.md``) and either

* a network: a checkpoint (``meta.json`` and ``model.safetensors``, read with NumPy by
  :mod:`spades_env.policies.checkpoint`), or
* a spec, ``agent.json``, declaring an agent around a network (another agent's id, or a folder
  relative to the spec's own), of one of two kinds: ``composite``, the network with a search bot
  that plays the cards in named situations and an adjustment of the network's bids
  (:class:`~spades_env.policies.composite.SearchDefencePolicy`); or ``search``, a search over the
  network (a bot that takes the network as its ``net``, such as ``netsearch``) that makes every
  decision.

The folders live in the top-level ``checkpoints/`` of the source tree and install with the
wheel as the data package ``spades_env.agents``. :func:`load_agent` takes an id or the path of
such a folder (also any training run's checkpoint folder). A bad spec raises
:class:`AgentError` naming the file and the key.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from spades_env.core.files import read_json_file
from spades_env.core.rules import RulesConfig
from spades_env.policies.base import Policy
from spades_env.policies.checkpoint import (
    META_FILE,
    MODEL_FILE,
    CheckpointError,
    load_meta,
    load_policy,
    play_settings,
)
from spades_env.policies.shipped import agents_dir

SPEC_FORMAT = "spades_env.agent/1"
SPEC_FILE, CARD_FILE = "agent.json", "CARD.md"
SPEC_KEYS = {
    "format": "the spec format, " + repr(SPEC_FORMAT),
    "kind": "'composite' (the network, with the bot in named situations) or 'search' (the bot, a "
    "search over the network, makes every decision)",
    "summary": "one line saying what the agent is",
    "network": "an agent id or a folder (relative to the spec) holding the network checkpoint",
    "bot": "a bots registry name, e.g. 'search:samples=400,bid_infer=1' (composite) or "
    "'netsearch:samples=16,bids=4' (search: a bot that takes a net option, given by 'network')",
    "search_after_opponent_bid": "the opponents' bids after which the bot plays the cards",
    "search_after_partner_bid": "the partner's bids after which the bot plays the cards",
    "both_nil_bid_shade": "tricks off the network's bid after the partner's and an opponent's Nil",
}
"""Every key an ``agent.json`` may hold, and what it means (any other key is an error)."""
_REQUIRED = {
    "composite": ("format", "kind", "network", "bot", "search_after_opponent_bid"),
    "search": ("format", "kind", "network", "bot"),
}
"""The keys each kind of spec must hold."""
_COMPOSITE_ONLY = ("search_after_opponent_bid", "search_after_partner_bid", "both_nil_bid_shade")
NETWORK_SEARCHES = ("netsearch",)
"""The bots a ``search`` spec may name: searches that take their network as ``net``."""


class AgentError(CheckpointError):
    """An agent that is unknown, or whose spec is malformed (names the file and the key)."""



def agent_ids() -> list[str]:
    """The ids of the shipped agents, sorted."""
    root = agents_dir()
    if not root.is_dir():
        return []
    return sorted(
        p.name for p in root.iterdir() if p.is_dir() and ((p / SPEC_FILE).is_file() or (p / META_FILE).is_file())
    )


def is_agent_id(name: Any) -> bool:
    """Whether ``name`` is the id of a shipped agent."""
    return isinstance(name, str) and "/" not in name and name in agent_ids()


def agent_dir(agent_id: str) -> Path:
    """The folder of a shipped agent; :class:`AgentError` listing the ids for an unknown one."""
    if not is_agent_id(agent_id):
        raise AgentError(f"unknown agent {agent_id!r}; shipped agents: {', '.join(agent_ids()) or 'none'}")
    return agents_dir() / agent_id


def network_folder(name: str, what: str = "network") -> Path:
    """The checkpoint folder of a shipped network agent id or a checkpoint folder path;
    :class:`AgentError` (naming ``what``) when it holds no network weights (a search agent, a
    missing folder)."""
    folder = agents_dir() / name if is_agent_id(name) else Path(name)
    if not (folder / MODEL_FILE).is_file():
        raise AgentError(
            f"{what} {name!r} is not a network (a shipped network agent id or a checkpoint folder "
            f"holding {MODEL_FILE})"
        )
    return folder


def read_spec(folder: Path) -> dict[str, Any]:
    """The checked ``agent.json`` of ``folder`` (every key known, every value usable)."""
    from spades_env.policies.composite import against_problem, bid_shade_problem, search_bot_problem

    path = folder / SPEC_FILE
    spec = read_json_file(path, "agent spec", AgentError, limit=1024 * 1024)
    if not isinstance(spec, dict):
        raise AgentError(f"{path}: an agent spec is a JSON object with keys {', '.join(SPEC_KEYS)}")
    unknown = sorted(set(spec) - set(SPEC_KEYS))
    if unknown:
        raise AgentError(f"{path}: unknown key {unknown[0]!r}; known keys: {', '.join(SPEC_KEYS)}")
    kind = spec.get("kind", "composite")
    if not isinstance(kind, str) or kind not in _REQUIRED:
        raise AgentError(f"{path}: key 'kind': expected one of {', '.join(map(repr, _REQUIRED))}, got {kind!r}")
    missing = [k for k in _REQUIRED[kind] if k not in spec]
    if missing:
        raise AgentError(f"{path}: missing key {missing[0]!r} ({SPEC_KEYS[missing[0]]})")
    if kind == "search":
        extra = [k for k in _COMPOSITE_ONLY if k in spec]
        if extra:
            raise AgentError(f"{path}: key {extra[0]!r} is for kind 'composite'; a 'search' agent's bot makes every decision")
    checks = {
        "format": lambda v: None if v == SPEC_FORMAT else f"expected {SPEC_FORMAT!r}, got {v!r}",
        "kind": lambda v: None,  # checked above
        "summary": lambda v: None if isinstance(v, str) else f"expected a string, got {v!r}",
        "network": lambda v: None if isinstance(v, str) and v else f"expected an agent id or a folder, got {v!r}",
        "bot": search_bot_problem if kind == "composite" else network_search_problem,
        "search_after_opponent_bid": against_problem,
        "search_after_partner_bid": lambda v: against_problem(v, allow_empty=True),
        "both_nil_bid_shade": bid_shade_problem,
    }
    for key, value in spec.items():
        problem = checks[key](value)
        if problem:
            raise AgentError(f"{path}: key {key!r}: {problem}")
    return spec


def network_search_problem(name: Any) -> str | None:
    """Why ``name`` cannot be a ``search`` spec's bot: not a bots name, not one of
    :data:`NETWORK_SEARCHES`, or naming its own ``net`` (the spec's ``network`` gives it);
    None if it can."""
    from spades_env.policies.bots import parse_policy_name
    from spades_env.policies.composite import search_bot_problem

    problem = search_bot_problem(name)  # a bots registry name at all
    if problem:
        return problem
    base, opts = parse_policy_name(name)
    if base not in NETWORK_SEARCHES:
        return f"{name!r} is not a search over a network (one of {', '.join(NETWORK_SEARCHES)})"
    if "net" in opts:
        return f"{name!r} names its own net; the spec's 'network' key gives it"
    return None


def _network_dir(spec: dict[str, Any], folder: Path) -> Path:
    name = spec["network"]
    if is_agent_id(name):
        return agent_dir(name)
    path = (folder / name).resolve()
    if not (path / META_FILE).is_file():
        raise AgentError(
            f"{folder / SPEC_FILE}: key 'network': {name!r} is neither a shipped agent "
            f"({', '.join(agent_ids())}) nor a folder holding {META_FILE} and {MODEL_FILE}"
        )
    return path


def load_agent(
    name: str | Path,
    seed: int | None = None,
    rules: RulesConfig | str | dict | None = None,
    deterministic: bool | None = None,
) -> Policy:
    """A Policy from a shipped agent id or an agent / checkpoint folder: the agent its
    ``agent.json`` declares (a composite, or a search over the network), else its network
    (:func:`~spades_env.policies.checkpoint.load_policy`).
    ``rules`` (when given) must have the agent's number of players; ``deterministic`` None: as
    the network's metadata says."""
    folder = agent_dir(str(name)) if is_agent_id(name) else Path(name)
    if not (folder / SPEC_FILE).is_file():
        return load_policy(folder, seed=seed, rules=rules, deterministic=deterministic)
    spec = read_spec(folder)
    from spades_env.policies.bots import make_policy, parse_policy_name
    from spades_env.policies.composite import SearchDefencePolicy, search_seed

    if spec["kind"] == "search":
        from spades_env.policies.bots.netsearch import NetSearchPolicy

        net_dir = _network_dir(spec, folder)
        play_settings(net_dir, load_meta(net_dir), rules, None)  # the players, as any agent's
        _, opts = parse_policy_name(spec["bot"])
        return NetSearchPolicy(rules, seed=seed, net=str(net_dir), **opts)
    net = load_policy(_network_dir(spec, folder), seed=seed, rules=rules, deterministic=deterministic)
    return SearchDefencePolicy(
        net,
        make_policy(spec["bot"], seed=search_seed(seed), rules=rules),
        name=str(name),
        against=tuple(spec["search_after_opponent_bid"]),
        cover=tuple(spec.get("search_after_partner_bid", ())),
        bid_shade=int(spec.get("both_nil_bid_shade", 0)),
    )


__all__ = [
    "CARD_FILE",
    "SPEC_FILE",
    "SPEC_FORMAT",
    "SPEC_KEYS",
    "AgentError",
    "agent_dir",
    "agent_ids",
    "agents_dir",
    "NETWORK_SEARCHES",
    "is_agent_id",
    "load_agent",
    "network_search_problem",
    "read_spec",
]
