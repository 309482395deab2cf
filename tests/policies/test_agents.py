"""The shipped agents: one folder each, one code path to load them, the same behaviour as the
checkpoints they replace, cards that match their files."""

from __future__ import annotations

import hashlib
import json
import re
from pathlib import Path

import numpy as np
import pytest

import spades_env
from spades_env.core.game import SpadesGame
from spades_env.core.rules import load_rules
from spades_env.eval import run_duplicate, summarize
from spades_env.policies import load
from spades_env.policies.agents import (
    CARD_FILE,
    SPEC_FILE,
    AgentError,
    agent_dir,
    agent_ids,
    agents_dir,
    load_agent,
)
from spades_env.policies.bots.netsearch import NetSearchPolicy
from spades_env.policies.checkpoint import META_FILE, MODEL_FILE, CheckpointPolicy, load_meta
from spades_env.policies.composite import SearchDefencePolicy
from spades_env.policies.driver import drive

DATA = Path(__file__).parent / "data"
PLAYERS = {  # every shipped agent id and the number of players it was trained for
    "spades2_v1": 2, "spades4_net_v1": 4, "spades4_net_v2": 4, "spades4_net_v3": 4, "spades4_net_v4": 4, "spades4_v1": 4,
    "spades4_net_v5": 4, "spades4_v2": 4, "spades4_v3": 4,
}
SHIPPED = tuple(PLAYERS)


def test_the_shipped_ids():
    assert agent_ids() == sorted(SHIPPED)


def test_no_two_weights_files_are_identical():
    digests = {}
    for path in sorted(agents_dir().glob(f"*/{MODEL_FILE}")):
        digest = hashlib.sha256(path.read_bytes()).hexdigest()
        assert digest not in digests, f"{path} is a copy of {digests[digest]}"
        digests[digest] = path
    assert len(digests) == 6  # the five four-player networks and the two-player one


def test_each_folder_holds_a_card_and_a_network_or_a_spec():
    for agent in agent_ids():
        folder = agent_dir(agent)
        names = {p.name for p in folder.iterdir()}
        assert CARD_FILE in names, agent
        assert names in ({CARD_FILE, SPEC_FILE}, {CARD_FILE, META_FILE, MODEL_FILE}), (agent, names)


@pytest.mark.parametrize("agent", SHIPPED)
def test_agent_plays_legal_moves_and_beats_random(agent):
    rules = load_rules("two_player" if PLAYERS[agent] == 2 else "tournament")
    pol = load(agent, rules=rules, seed=0)
    assert hasattr(pol, "act")
    # a network decides a batch in one pass; a search batches within each decision
    assert hasattr(pol, "act_batch") != isinstance(pol, NetSearchPolicy)
    boards = run_duplicate(
        (agent, agent), ("random", "random"), 6, seed=1, rules=rules, fmt="hand", batched=True
    )
    summary = summarize(boards, "hand", (agent, "random"))
    assert summary["margin_per_hand"]["mean"] > 20, summary["margin_per_hand"]


class _Logged:
    """A seated policy that logs ``[seat, action]`` of every decision."""

    def __init__(self, policy, seat: int, log: list[list[int]]) -> None:
        self.policy, self.seat, self.log = policy, seat, log

    def act(self, obs: np.ndarray, mask: np.ndarray) -> int:
        a = int(self.policy.act(obs, mask))
        self.log.append([self.seat, a])
        return a


def _replay(agent: str, fixture: Path) -> None:
    cases = json.loads(fixture.read_text())
    assert len(cases) == 16
    for case in cases:
        rules = load_rules(case["rules"])
        seed = case["seed"]
        game = SpadesGame(rules, seed=seed, episode="hand")
        pols = {
            0: load(agent, seed=seed * 10, rules=rules),
            2: load(agent, seed=seed * 10 + 2, rules=rules),
            1: load(case["opponents"], seed=seed * 10 + 1, rules=rules),
            3: load(case["opponents"], seed=seed * 10 + 3, rules=rules),
        }
        acts: list[list[int]] = []

        drive(game, {s: _Logged(p, s, acts) for s, p in pols.items()})
        assert acts == case["actions"], (case["rules"], case["opponents"], seed)


def test_spades4_v1_acts_as_spades_family_v11():
    """The fixture holds every action of ``checkpoints/spades_family_v11`` (commit f40e58d) on
    16 hands under tournament and house rules against L2, L1 and the always-Blind-Nil bot; the
    two agents differ from each other on 510 of those decisions."""
    _replay("spades4_v1", DATA / "spades4_v1_actions.json")


def test_spades4_net_v1_acts_as_spades_family_v5():
    _replay("spades4_net_v1", DATA / "spades4_net_v1_actions.json")


@pytest.mark.parametrize(
    "agent", ["spades4_net_v2", "spades4_net_v3", "spades4_net_v4", "spades4_net_v5", "spades4_v2", "spades4_v3"]
)
def test_agent_acts_as_when_shipped(agent):
    """The fixture holds every action the agent took when it shipped (a search agent seeded per
    seat), on the 16 hands of ``spades4_net_v1``'s fixture: an id never changes behaviour."""
    _replay(agent, DATA / f"{agent}_actions.json")


@pytest.mark.parametrize(("agent", "network"), [("spades4_v2", "spades4_net_v2"), ("spades4_v3", "spades4_net_v4")])
def test_a_search_agent_is_its_networks_search(agent, network):
    pol = load(agent, seed=0)
    assert isinstance(pol, NetSearchPolicy)
    assert Path(pol.net) == agent_dir(network)
    assert (pol.samples, pol.n_bids, pol.n_cards) == (16, 4, 0)


def test_the_composite_is_declared_by_its_spec():
    pol = load("spades4_v1", seed=0)
    assert isinstance(pol, SearchDefencePolicy) and isinstance(pol.net, CheckpointPolicy)
    spec = json.loads((agent_dir("spades4_v1") / SPEC_FILE).read_text())
    assert pol.against == tuple(spec["search_after_opponent_bid"])
    assert pol.cover == tuple(spec["search_after_partner_bid"])
    assert pol.bid_shade == spec["both_nil_bid_shade"] == 1
    assert Path(pol.net.name) == agent_dir("spades4_net_v1")
    assert isinstance(load("spades4_net_v1"), CheckpointPolicy)


def _spec_folder(tmp_path: Path, **changes) -> Path:
    spec = json.loads((agent_dir("spades4_v1") / SPEC_FILE).read_text())
    spec.update(changes)
    spec = {k: v for k, v in spec.items() if v is not None}
    folder = tmp_path / "agent"
    folder.mkdir()
    (folder / SPEC_FILE).write_text(json.dumps(spec))
    return folder


@pytest.mark.parametrize(
    ("changes", "message"),
    [
        ({"bott": "search"}, "unknown key 'bott'"),
        ({"bot": None}, "missing key 'bot'"),
        ({"bot": "nosuchbot"}, "key 'bot'"),
        ({"network": "nosuchagent"}, "key 'network'"),
        ({"search_after_opponent_bid": ["bid_4"]}, "key 'search_after_opponent_bid'"),
        ({"search_after_partner_bid": "nil"}, "key 'search_after_partner_bid'"),
        ({"both_nil_bid_shade": 13}, "key 'both_nil_bid_shade'"),
        ({"both_nil_bid_shade": True}, "key 'both_nil_bid_shade'"),
        ({"kind": "network"}, "key 'kind'"),
        ({"format": "spades_env.agent/9"}, "key 'format'"),
    ],
)
def test_a_bad_spec_names_the_file_and_the_key(tmp_path, changes, message):
    folder = _spec_folder(tmp_path, **changes)
    with pytest.raises(AgentError, match=re.escape(message)) as err:
        load_agent(folder)
    assert str(folder / SPEC_FILE) in str(err.value)


def test_a_spec_may_name_a_network_folder_relative_to_itself(tmp_path):
    net = tmp_path / "net"
    net.mkdir()
    for name in (META_FILE, MODEL_FILE):
        (net / name).write_bytes((agent_dir("spades4_net_v1") / name).read_bytes())
    folder = _spec_folder(tmp_path, network="../net")
    pol = load(str(folder), seed=0)
    assert isinstance(pol, SearchDefencePolicy) and Path(pol.net.name) == net.resolve()


def _search_spec_folder(tmp_path: Path, **changes) -> Path:
    spec = {"format": "spades_env.agent/1", "kind": "search", "network": "spades4_net_v2",
            "bot": "netsearch:samples=4,bids=2,draws=2"}
    spec.update(changes)
    folder = tmp_path / "search_agent"
    folder.mkdir()
    (folder / SPEC_FILE).write_text(json.dumps({k: v for k, v in spec.items() if v is not None}))
    return folder


def test_a_search_spec_is_its_bot_over_the_named_network(tmp_path):
    """kind 'search': the bot (a search that takes a net) makes every decision over the spec's
    network, exactly as the bots name with that net= would."""
    rules = load_rules("house")
    pol = load(str(_search_spec_folder(tmp_path)), seed=3, rules=rules)
    assert isinstance(pol, NetSearchPolicy)
    net = agent_dir("spades4_net_v2")
    same = load(f"netsearch:samples=4,bids=2,draws=2,net={net}", seed=3, rules=rules)
    game = SpadesGame(rules, seed=21, episode="hand")
    obs = np.zeros(803, dtype=np.float32)
    from spades_env.core.observation import encode_observation

    for _ in range(20):  # bids and the first tricks
        encode_observation(game.state, game.params, game.current_player, obs)
        mask = game.legal_mask()
        a = pol.act(obs, mask)
        assert a == same.act(obs, mask)
        game.apply(a)


@pytest.mark.parametrize(
    ("changes", "message"),
    [
        ({"bot": "search:samples=50"}, "is not a search over a network"),
        ({"bot": "netsearch:samples=4,net=spades4_net_v1"}, "names its own net"),
        ({"bot": "nosuchbot"}, "key 'bot'"),
        ({"bot": None}, "missing key 'bot'"),
        ({"search_after_opponent_bid": ["nil"]}, "key 'search_after_opponent_bid' is for kind 'composite'"),
        ({"kind": "searches"}, "key 'kind'"),
        ({"kind": ["search"]}, "key 'kind'"),
        ({"network": "nosuchagent"}, "key 'network'"),
    ],
)
def test_a_bad_search_spec_names_the_file_and_the_key(tmp_path, changes, message):
    folder = _search_spec_folder(tmp_path, **changes)
    with pytest.raises(AgentError, match=re.escape(message)) as err:
        load_agent(folder, rules="house")
    assert str(folder / SPEC_FILE) in str(err.value)


def test_unknown_names_list_the_bots_and_agents():
    with pytest.raises(ValueError, match="spades4_v1") as err:
        load("spades_family_v11")
    assert "heuristic" in str(err.value)


def test_a_checkpoint_meta_refuses_the_old_search_keys(tmp_path):
    folder = tmp_path / "ckpt"
    folder.mkdir()
    meta = json.loads((agent_dir("spades4_net_v1") / META_FILE).read_text())
    meta["policy"] = {"deterministic": True, "search_defence": "search:samples=200"}
    (folder / META_FILE).write_text(json.dumps(meta))
    (folder / MODEL_FILE).write_bytes((agent_dir("spades4_net_v1") / MODEL_FILE).read_bytes())
    with pytest.raises(ValueError, match="policy.search_defence"):
        load_meta(folder)


def test_two_player_rules_refuse_a_four_player_agent():
    with pytest.raises(ValueError, match="spades2_v1"):
        load("spades4_net_v1", rules="two_player")


@pytest.mark.parametrize("agent", SHIPPED)
def test_the_card_matches_the_agent_files(agent):
    """Each card opens with a facts table (kind, network, players, weights sha256, decisions
    trained) that must agree with the agent's files."""
    folder = agent_dir(agent)
    card = (folder / CARD_FILE).read_text()
    facts = dict(re.findall(r"^\| (\w[\w ]*?) \| `?([^|`]+?)`? \|$", card, re.M))
    net_dir = (
        agent_dir(json.loads((folder / SPEC_FILE).read_text())["network"])
        if (folder / SPEC_FILE).is_file()
        else folder
    )
    meta = load_meta(net_dir)
    assert facts["id"] == agent
    assert facts["network"] == net_dir.name
    assert int(facts["players"]) == meta["rules"]["num_players"] == PLAYERS[agent]
    assert facts["weights sha256"] == hashlib.sha256((net_dir / MODEL_FILE).read_bytes()).hexdigest()[:16]
    assert int(facts["decisions trained"].replace(",", "")) == meta["decisions"]


def test_the_agents_ship_in_the_package_list():
    """pyproject's explicit package list has every code package and every agent folder."""
    import tomllib

    root = Path(spades_env.__file__).parents[1]
    conf = tomllib.loads((root / "pyproject.toml").read_text())["tool"]["setuptools"]
    code = sorted(
        ".".join(p.parent.relative_to(root).parts) for p in (root / "spades_env").rglob("__init__.py")
    )
    agents = [f"spades_env.agents.{a}" for a in agent_ids()]
    data = ["spades_env.presets", "spades_env.policies.bots.data"]  # folders of package data
    assert sorted(conf["packages"]) == sorted(code + data + ["spades_env.agents"] + agents)
    assert conf["package-dir"]["spades_env.agents"] == "checkpoints"


def test_network_folder_takes_a_network_id_or_folder_and_names_what_else_it_got(tmp_path):
    from spades_env.policies.agents import AgentError, network_folder

    assert network_folder("spades4_net_v1") == agents_dir() / "spades4_net_v1"
    assert network_folder(str(agents_dir() / "spades2_v1")) == agents_dir() / "spades2_v1"
    for name in ("spades4_v3", str(tmp_path), "no_such_thing"):  # a search agent, an empty folder, nothing
        with pytest.raises(AgentError, match=f"--init {name!r} is not a network"):
            network_folder(name, "--init")
